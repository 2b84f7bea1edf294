#!/usr/bin/env bash
# `ergon profile --power` in external mode on a real board with a live
# instrument (src/pipelines/profile_live.c), end to end: the jlink
# lifecycle against a fake JLinkExe on PATH (as test_profile_probes.sh),
# whose RTT server replays the virtual bench's fixed 1500-inference power
# boot (1 ms per inference), and power.driver: joulescope through ergon's
# own bridge (bridges/joulescope_bridge.py) on the stub pyjoulescope_driver
# (tests/support/pyjoulescope_stub), configured as a lock-step target:
# READY (INPUT1) from 0.1 s, the gate (INPUT0) high from 0.5 s for 1.5 s
# at 30 mA, 5 mA otherwise, 3.3 V.
# By hand: the window holds 0.030 A x 3.3 V x 1.5 s = 0.1485 J over the
# 1500 inferences of the terminal record: 9.9e-5 J per inference; each
# edge is known to one 1 ms statistics packet at 30 mA: the stated
# uncertainty is 2 x 0.001 x 0.030 x 3.3 / 1500 = 1.32e-7 J.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
src=${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 is needed for the fake RTT server and the Joulescope bridge"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
port=$((20000 + RANDOM % 20000))

mkdir -p "$tmp/fw" "$tmp/bin"
printf 'ELF' >"$tmp/fw/app_profile.elf"
printf 'ELF' >"$tmp/fw/app_power.elf"
# The streams the fake target sends: the virtual bench's boots with a
# fixed window of 1500 inferences.
fixed=(--set profiling.window_mode=fixed --set profiling.iterations=1500)
"$bin" profile --board sim --power "${fixed[@]}" --out "$tmp/simref" >/dev/null 2>&1 ||
	bad "virtual bench reference run"
stream="$tmp/simref/pmu/capture.log"
power_stream="$tmp/simref/power/capture.log"
grep -q '^HPX_POWER_COMPLETED_COUNT=1500$' "$power_stream" ||
	bad "the replayed power boot does not complete 1500 inferences"

cat >"$tmp/bin/JLinkExe" <<EOF2
#!/usr/bin/env bash
echo "ARGV \$*" >>"$tmp/jlink.calls"
cf=""; while [ \$# -gt 0 ]; do [ "\$1" = -CommandFile ] && cf=\$2; shift; done
sed 's/^/CMD /' "\$cf" >>"$tmp/jlink.calls"
img=\$(sed -n 's/^loadfile //p' "\$cf"); [ -n "\$img" ] && echo "\$img" >"$tmp/last_image"
file=$stream
case "\$(cat "$tmp/last_image" 2>/dev/null)" in *power*) file=$power_stream;; esac
if grep -qx g "\$cf"; then exec python3 "$src/tests/support/fake_probe/rtt_server.py" $port replay "\$file"; fi
exit 0
EOF2
chmod +x "$tmp/bin/JLinkExe"
export PATH="$tmp/bin:$PATH"
export PYTHONPATH=$src/tests/support/pyjoulescope_stub
export ERGON_JS_STUB_LOG=$tmp/js.log
stub='{"devices":["u/js220/000415"],"first_gate_s":0.5,"gate_s":1.5,"period_s":1000,"ready_s":0.1,"active_a":0.030,"idle_a":0.005,"voltage_v":3.3}'
board=(--board apollo510_evb --rtt-port "$port" --set target.jlink_serial=123456
	--set power.sync_gpio_pin=5 --set power.state_gpio_pin=6 --set power.go_gpio_pin=7
	--set power.mode=external --set power.firmware=dedicated "${fixed[@]}")

# --- joulescope, lock-step, end to end -------------------------------------
ERGON_JS_STUB=$stub "$bin" profile "$tmp/fw" "${board[@]}" --power \
	--set power.driver=joulescope --set power.serial=000415 --out "$tmp/js" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ]; then ok "joulescope live profile run (exit 0)"; else
	bad "joulescope live profile run: exit $rc"
	cat "$tmp/err"
fi
if python3 - "$tmp/js/summary.json" <<'PY'; then ok "energy per inference within its uncertainty of the truth"; else bad "power section"; fi
import json, sys
p = json.load(open(sys.argv[1]))["power"]
want = 0.030 * 3.3 * 1.5 / 1500
u_hand = 2 * 0.001 * 0.030 * 3.3 / 1500
e, u = p.get("energy_per_inference_j"), p.get("energy_per_inference_uncertainty_j")
errs = []
if p.get("inference_count") != 1500: errs.append("inference_count %r" % p.get("inference_count"))
if not isinstance(e, float): errs.append("no energy_per_inference_j: %r" % p)
elif abs(e - want) > u: errs.append("epi %.9g, truth %.9g +- %r" % (e, want, u))
if u is None or abs(u - u_hand) > 0.05 * u_hand: errs.append("uncertainty %r, by hand %g" % (u, u_hand))
if p.get("integrity") != "valid": errs.append("integrity %r" % p.get("integrity"))
if p.get("per_inference_metrics_omitted") is not False: errs.append("per-inference withheld")
lc, s = p.get("live_capture", {}), p.get("sync", {})
if lc.get("source") != "measured" or lc.get("instrument") != "joulescope:000415": errs.append("live %r" % lc)
if lc.get("packets_discarded", 0) < 50: errs.append("grace period dropped %r packets" % lc.get("packets_discarded"))
if not (s.get("lockstep") is True and s.get("ready_observed") is True and s.get("go_set") is True and s.get("gate_only") is False):
    errs.append("sync %r" % s)
ra = lc.get("ready_after_reset_s", -1)
if not (0.05 < ra < 1.0): errs.append("ready_after_reset_s %r" % ra)
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
if grep -q 's/gpo/0/value' "$tmp/js.log" 2>/dev/null || grep -qi 'gpo' "$tmp/js.log" 2>/dev/null; then
	ok "GO was set on the instrument (OUTPUT0)"
else
	bad "GO not in the stub's log"
	head -20 "$tmp/js.log" 2>/dev/null
fi
grep -q "CMD loadfile $tmp/fw/app_power.elf" "$tmp/jlink.calls" && ok "the power build was flashed" ||
	bad "power build not flashed"

# --- joulescope: the gate never rises -> a clear failure, no figure ---------
nogate='{"devices":["u/js220/000415"],"first_gate_s":100,"ready_s":0.1}'
ERGON_JS_STUB=$nogate "$bin" profile "$tmp/fw" "${board[@]}" --power \
	--set power.driver=joulescope --set power.duration_s=2 --out "$tmp/ng" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no gate window" "$tmp/err" "$tmp/ng/summary.json" 2>/dev/null; then
	ok "no gate: exit $rc, named"
else
	bad "no gate: exit $rc"
	cat "$tmp/err"
fi
if python3 -c "import json,sys; p=json.load(open('$tmp/ng/summary.json')).get('power') or {}; sys.exit(0 if p.get('energy_per_inference_j') is None else 1)" 2>/dev/null; then
	ok "no gate: no energy per inference"
else bad "no gate: a figure was reported"; fi

# --- ppk2: refused with the reason (not driven by profile yet) -------------
"$bin" profile "$tmp/fw" "${board[@]}" --power --set power.driver=ppk2 --out "$tmp/pp" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "a PPK2 is not driven by .ergon profile. yet" "$tmp/err"; then
	ok "ppk2: refused, exit $rc"
else
	bad "ppk2: exit $rc"
	cat "$tmp/err"
fi
"$bin" config show --board apollo510_evb --set power.driver=ppk2 --set power.sync_gpio_pin=5 \
	--set power.state_gpio_pin=6 --set power.go_gpio_pin=7 --power >"$tmp/cfg" 2>&1
grep -q "gate-only" "$tmp/cfg" && ok "ppk2: lock-step auto is gate-only" || {
	bad "ppk2: lock-step auto rule"
	grep -i lockstep "$tmp/cfg"
}

[ $fails -eq 0 ] || exit 1

#!/usr/bin/env bash
# `ergon profile --power` in external mode on a real board with a live
# instrument (src/pipelines/profile/profile_live.c), end to end: the jlink
# lifecycle against a fake JLinkExe on PATH (as test_profile_probes.sh),
# whose RTT server replays the virtual bench's fixed-window power boot
# (1 ms per inference), and power.driver: joulescope.
#
# No part depends on the host's clock or load (issue 20): both simulated
# instruments stream on their own clock, as fast as ergon reads (the
# simulated target's time is the packets'), and the live capture takes the
# reset, the grace period and READY's deadline on the packets' clock for a
# synthetic instrument (profile_live.c, packet_clock). Both bridges state a
# 30 s heartbeat, so that a starved host cannot miss an acknowledgement
# bound that this test does not test (test_bridge does).
#
# 1. The joulescope driver with ERGON_JOULESCOPE_BRIDGE pointing at the
#    fake bridge's lock-step target (tests/support/bridge_fake.py
#    --lockstep, on its own clock): glitches on input 0 for 50 ms after the
#    reset (the start), READY (input 1) from 100 ms, the stream holds
#    after the first READY packet until GO (output 0), so GO is at the end
#    of packet 100 and the gate is high for exactly packets 121..1320
#    (1.2 s) at 30 mA, 5 mA otherwise, 3.3 V; the gate travels inside each
#    packet. The replayed firmware ran 1200 inferences. By hand: 0.030 A x
#    3.3 V x 1.2 s / 1200 = 9.9e-5 J per inference (exact to rounding);
#    each edge is known to one 1 ms packet at 30 mA, so the stated
#    uncertainty is 2 x 0.001 x 0.030 x 3.3 / 1200 = 1.65e-7 J.
# 2. READY never comes (--no-ready): the stage fails naming the state
#    wire, GO is never set, no figure is reported.
# 3. The lock-step auto rule makes a PPK2 run gate-only (the PPK2 profile
#    itself: test_profile_live_ppk2.sh).
# 4. The Joulescope bridge that ships with ergon (bridges/joulescope_bridge.py)
#    on the stub pyjoulescope_driver (tests/support/pyjoulescope_stub): its
#    passthrough is on when the power build is flashed (the stub's log at
#    the fake JLinkExe's loadfile) and never switched off. The stub
#    simulates a JS220 by sample id, unpaced ("pace": false): READY (INPUT1)
#    from 0.1 s, and the gate
#    (INPUT0) high for exactly 1.2 s (1200 packets of 1 ms) from the first
#    packet boundary 20 ms after GO, at 30 mA; 5 mA otherwise; 3.3 V. The
#    bridge gives each packet the inputs' level at its middle sample id from
#    the streamed inputs (s/gpi/N/!data), so the window is 1200 packets
#    whatever the host's load. By hand: 0.030 x 3.3 x 1.2 / 1200 = 9.9e-5 J
#    per inference (exact to rounding), stated uncertainty 1.65e-7 J as in 1.
. "${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}/tests/support/live_bench/live_test_head.sh"

cat >"$tmp/lockstep_bridge.py" <<EOF2
import os, sys
extra = os.environ.get("FAKE_BRIDGE_ARGS", "").split()
os.execvp(sys.executable, [sys.executable, "$src/tests/support/bridge_fake.py",
                           "--lockstep", "--heartbeat", "30"] + extra + sys.argv[1:])
EOF2
cat >"$tmp/js_bridge.py" <<EOF2
import os, sys
os.execvp(sys.executable, [sys.executable, "$src/bridges/joulescope_bridge.py"] + sys.argv[1:]
          + ["--heartbeat-s", "30"])
EOF2

# check_power SUMMARY INSTRUMENT: the power section against the truth,
# exactly (1e-9 relative): every figure follows from the packets alone.
check_power() {
	python3 - "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])).get("power") or {}
want = 0.030 * 3.3 * 1.2 / 1200
u_hand = 2 * 0.001 * 0.030 * 3.3 / 1200
e, u = p.get("energy_per_inference_j"), p.get("energy_per_inference_uncertainty_j")
errs = []
lc, s = p.get("live_capture", {}), p.get("sync", {})
if p.get("inference_count") != 1200: errs.append("inference_count %r" % p.get("inference_count"))
# The fake bridge's hello says synthetic: the figures are not measured.
if lc.get("source") != "synthetic" or lc.get("instrument") != sys.argv[2]: errs.append("live %r" % lc)
prov = json.load(open(sys.argv[1])).get("provenance", {}).get("kind")
if prov != "synthetic": errs.append("artifact provenance %r with a synthetic instrument" % prov)
# On the packets' clock the reset is the first packet's start and the
# 60 ms grace period drops the 1 ms packets that end before it: 59
# (packets 0..58; packet 59 ends on the edge itself, where the host-time
# offset's rounding decides: 60). The fake's 50 ms glitch is among them.
if lc.get("packets_discarded") not in (59, 60): errs.append("grace period dropped %r packets, by hand 59 or 60" % lc.get("packets_discarded"))
if not (s.get("lockstep") is True and s.get("ready_observed") is True and s.get("go_set") is True and s.get("gate_only") is False):
    errs.append("sync %r" % s)
# READY from 100 ms: packet 100 ([0.100, 0.101) s, by its middle) is the
# first with it, observed at its end.
ra = lc.get("ready_after_reset_s", -1)
if not abs(ra - 0.101) <= 1e-9: errs.append("ready_after_reset_s %r, by hand 0.101" % ra)
if not isinstance(e, float): errs.append("no energy_per_inference_j: %r" % p)
elif abs(e - want) > 1e-9 * want: errs.append("epi %.12g, by hand %.12g" % (e, want))
if u is None or abs(u - u_hand) > 0.05 * u_hand: errs.append("uncertainty %r, by hand %g" % (u, u_hand))
if p.get("integrity") != "valid": errs.append("integrity %r" % p.get("integrity"))
if p.get("per_inference_metrics_omitted") is not False: errs.append("per-inference withheld")
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
}

# --- 1. joulescope driver on the fake bridge's lock-step target -------------
ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile "$tmp/fw" "${board[@]}" --power \
	--set power.driver=joulescope --power-serial FAKE0001 --out "$tmp/ls" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
cp "$tmp/err" "$tmp/err.ls"
if [ $rc -eq 0 ]; then ok "lock-step live profile run (exit 0)"; else
	bad "lock-step live profile run: exit $rc"
	cat "$tmp/err"
fi
if check_power "$tmp/ls/summary.json" joulescope:FAKE0001; then
	ok "lock-step: energy per inference equal to the hand figure"
else bad "lock-step: power section"; fi
grep -q "CMD loadfile $tmp/fw/app_power.elf" "$tmp/jlink.calls" && ok "the power build was flashed" ||
	bad "power build not flashed"

# --- 2. READY never comes -----------------------------------------------------
FAKE_BRIDGE_ARGS=--no-ready ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile \
	"$tmp/fw" "${board[@]}" --power --set power.driver=joulescope --out "$tmp/nr" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
cp "$tmp/err" "$tmp/err.nr"
if [ $rc -ne 0 ] && grep -q "READY (input 1) not observed" "$tmp/err"; then
	ok "no READY: exit $rc, names the state wire"
else
	bad "no READY: exit $rc"
	cat "$tmp/err"
fi
if python3 -c "import json,sys; p=json.load(open('$tmp/nr/summary.json')).get('power') or {}; sys.exit(0 if p.get('energy_per_inference_j') is None else 1)"; then
	ok "no READY: no energy per inference"
else bad "no READY: a figure was reported"; fi

# --- 4. the shipped Joulescope bridge on the stub pyjoulescope_driver --------
# The passthrough is on before the power build is flashed: the bridge's own
# setup sets the range to auto, then ergon's passthrough command does again
# (two "auto" publishes in the stub's log when JLinkExe loads the image),
# and nothing switches it off through flash, reset and capture.
PYTHONPATH=$src/tests/support/pyjoulescope_stub ERGON_JS_STUB_LOG=$tmp/js_stub.log \
	ERGON_JS_STUB='{"pace":false,"ready_s":0.1,"go_gate_delay_s":0.02,"gate_s":1.2}' \
	ERGON_JOULESCOPE_BRIDGE=$tmp/js_bridge.py "$bin" profile "$tmp/fw" \
	"${board[@]}" --power --set power.driver=joulescope --out "$tmp/js" \
	>"$tmp/out" 2>"$tmp/err.js"
rc=$?
if [ $rc -eq 0 ]; then ok "stub-backed Joulescope bridge: live profile run (exit 0)"; else
	bad "stub-backed Joulescope bridge: exit $rc"
	cat "$tmp/err.js"
fi
if check_power "$tmp/js/summary.json" joulescope; then
	ok "stub-backed Joulescope bridge: energy per inference equal to the hand figure"
else bad "stub-backed Joulescope bridge: power section"; fi
if grep -q "^FLASH $tmp/fw/app_power.elf PASSTHROUGH_AUTO 2$" "$tmp/jlink.calls"; then
	ok "stub-backed Joulescope bridge: passthrough on (setup + command) before the flash"
else
	bad "stub-backed Joulescope bridge: passthrough not on when the power build was flashed"
	grep "^FLASH" "$tmp/jlink.calls"
fi
if ! grep -q 'range/mode", "value": "off"' "$tmp/js_stub.log"; then
	ok "stub-backed Joulescope bridge: the passthrough was never switched off"
else bad "stub-backed Joulescope bridge: the passthrough was switched off"; fi

# --- 5. power.stats_rate_hz reaches the Joulescope ---------------------------
# 500 statistics a second: the bridge sets s/stats/scnt = 1,000,000 / 500 =
# 2000 on the stub, whose packets are then 2 ms; the gate window (1.2 s from
# a packet boundary) is 600 whole packets, so the energy per inference is
# still exactly 0.030 x 3.3 x 1.2 / 1200, and the engine states 2 ms packets.
PYTHONPATH=$src/tests/support/pyjoulescope_stub ERGON_JS_STUB_LOG=$tmp/js500.log \
	ERGON_JS_STUB='{"pace":false,"ready_s":0.1,"go_gate_delay_s":0.02,"gate_s":1.2}' \
	ERGON_JOULESCOPE_BRIDGE=$tmp/js_bridge.py "$bin" profile "$tmp/fw" \
	"${board[@]}" --power --set power.driver=joulescope --set power.stats_rate_hz=500 \
	--out "$tmp/js500" >"$tmp/out" 2>"$tmp/err.js500"
rc=$?
if [ $rc -eq 0 ] && grep -q 's/stats/scnt", "value": 2000}' "$tmp/js500.log" &&
	python3 - "$tmp/js500/summary.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])).get("power") or {}
e, sp = p.get("energy_per_inference_j"), (p.get("gate") or {}).get("stats_period_s")
want = 0.030 * 3.3 * 1.2 / 1200
ok = isinstance(e, float) and abs(e - want) <= 1e-9 * want and sp is not None and abs(sp - 0.002) < 1e-12
if not ok: print("epi %r (by hand %r), stats_period_s %r (by hand 0.002)" % (e, want, sp))
sys.exit(0 if ok else 1)
PY
then ok "stats rate 500: s/stats/scnt 2000, 2 ms packets, energy per inference by hand"
else
	bad "stats rate 500 (exit $rc)"
	grep scnt "$tmp/js500.log"
	tail -5 "$tmp/err.js500"
fi
# 128 a second: a JS110 could (2,000,000 / 15625) but the stub's JS220
# cannot (1,000,000 / 7812.5): the bridge refuses it at open, naming the
# rates a JS220 gives, before anything is flashed.
: >"$tmp/jlink.calls"
PYTHONPATH=$src/tests/support/pyjoulescope_stub ERGON_JS_STUB='{"pace":false}' \
	ERGON_JOULESCOPE_BRIDGE=$tmp/js_bridge.py "$bin" profile "$tmp/fw" \
	"${board[@]}" --power --set power.driver=joulescope --set power.stats_rate_hz=128 \
	--out "$tmp/js128" >"$tmp/out" 2>"$tmp/err.js128"
rc=$?
if [ $rc -ne 0 ] && grep -q "stats_rate_hz=128 is not a rate it can give: a JS220" "$tmp/err.js128" &&
	grep -q "100, 125, 160" "$tmp/err.js128" &&
	! grep -q "loadfile $tmp/fw/app_power.elf" "$tmp/jlink.calls"; then
	ok "stats rate 128 on a JS220: refused with the rates it gives, power build not flashed (exit $rc)"
else
	bad "stats rate 128 on a JS220 (exit $rc)"
	tail -5 "$tmp/err.js128"
fi

# --- ppk2: the lock-step auto rule makes a PPK2 run gate-only -------------
"$bin" config show --board apollo510_evb --set power.driver=ppk2 --set power.sync_gpio_pin=5 \
	--set power.state_gpio_pin=6 --set power.go_gpio_pin=7 --power >"$tmp/cfg" 2>&1
grep -q "gate-only" "$tmp/cfg" && ok "ppk2: lock-step auto is gate-only" || {
	bad "ppk2: lock-step auto rule"
	grep -i lockstep "$tmp/cfg"
}

# No sanitizer report in any run (the failure paths included).
if grep -l "Sanitizer" "$tmp"/err* >/dev/null 2>&1; then bad "sanitizer report"; fi
[ $fails -eq 0 ] || exit 1

#!/usr/bin/env bash
# `ergon profile MODEL.tflite --board B --power` on a real board with a port
# (docs/internals/ports.md) builds both images from the port, the profile
# build and the dedicated power build, and hands them to the power stage,
# which flashes the power build. The board is apollo510_evb with a port
# made for this test in a copy of ergon-target (ERGON_TARGET_DIR): the
# an547's sources under a probe lifecycle, validation 'unvalidated', which
# every artifact must say. The bench is the fake J-Link and the fake
# Joulescope bridge of test_profile_live_probe.sh (tests/support/
# live_bench/); the fake target replays the virtual bench's streams, so
# what is checked is the build and the flash, not the model's output.
# power.firmware: shared builds the profile image alone; QEMU boards keep
# refusing --power (profile.power_unobservable).
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
src=${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}
: "${ERGON_SHARED_DIR:?}"
command -v arm-none-eabi-gcc >/dev/null || { echo "FAIL: arm-none-eabi-gcc is required"; exit 1; }
. "$src/tests/support/probe_test_lib.sh"
. "$src/tests/support/live_bench/fake_jlink_bench.sh"
live_bench_setup || bad "virtual bench reference run (1200 inferences)"
M=$ERGON_SHARED_DIR/fixtures/models/kws_ref_model.tflite

# A port for apollo510_evb (fake_jlink_bench.sh: live_bench_test_port).
live_bench_test_port test_profile_port_power.sh || bad "the test port"
cat >"$tmp/lockstep_bridge.py" <<EOF2
import os, sys
os.execvp(sys.executable, [sys.executable, "$src/tests/support/bridge_fake.py",
                           "--realtime", "--lockstep"] + sys.argv[1:])
EOF2
"$bin" config boards >"$tmp/boards" 2>&1
has "$tmp/boards" '^apollo510_evb .* testboard \(unvalidated\)$' "config boards: the port and 'unvalidated'"

ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile "$M" "${board[@]}" --power \
	--set power.driver=joulescope --power-serial FAKE0001 --out "$tmp/lp" >"$tmp/out" 2>"$tmp/err"
echo "exit $?" >>"$tmp/out"
fw=$tmp/lp/firmware
[ -f "$fw/ergon_testboard_profile.elf" ] && [ -f "$fw/ergon_testboard_power.elf" ] &&
	ok "both images built from the port" || { bad "images: $(ls "$fw" 2>&1)"; cat "$tmp/err"; }
grep -q "CMD loadfile $fw/ergon_testboard_power.elf" "$tmp/jlink.calls" &&
	ok "the power build was flashed for the power stage" ||
	bad "power build not flashed: $(grep loadfile "$tmp/jlink.calls")"
grep -q "CMD loadfile $fw/ergon_testboard_profile.elf" "$tmp/jlink.calls" &&
	ok "the profile build was flashed for the PMU stage" || bad "profile build not flashed"
python3 - "$fw" "$tmp/lp/summary.json" <<'PY' && ok "build records and summary say the port is unvalidated" || bad "records"
import json, sys
fw, summ = sys.argv[1], sys.argv[2]
for kind in ("profile", "power"):
    b = json.load(open("%s/build-%s.json" % (fw, kind)))
    assert b["board"] == "apollo510_evb" and b["port"]["port"] == "testboard", b["port"]
    assert b["port"]["validation"]["status"] == "unvalidated", b["port"]
    assert b["port"]["run"] == "probe"
    cmd = b["compile"]["command"]
    assert "-DERT_AN547_RTT=1" in cmd, cmd
    assert ("-DERT_POWER_BUILD=1" in cmd) == (kind == "power"), cmd
s = json.load(open(summ))
st = [b["port"]["validation"]["status"] for b in s["model"]["builds"]]
assert st == ["unvalidated", "unvalidated"], st
PY
grep -q "testboard.*unvalidated" "$tmp/err" && ok "the terminal says the port is unvalidated" ||
	bad "no unvalidated note: $(head -5 "$tmp/err")"

# power.firmware: shared builds one image.
rm -f "$tmp/jlink.calls"
ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile "$M" "${board[@]}" --power \
	--set power.firmware=shared --set power.driver=joulescope --power-serial FAKE0001 \
	--out "$tmp/sh" >"$tmp/sh.out" 2>"$tmp/sh.err"
[ -f "$tmp/sh/firmware/ergon_testboard_profile.elf" ] && [ ! -e "$tmp/sh/firmware/ergon_testboard_power.elf" ] &&
	ok "power.firmware: shared builds the profile image only" || bad "shared: $(ls "$tmp/sh/firmware" 2>&1)"

# QEMU boards keep refusing --power.
unset ERGON_TARGET_DIR
"$bin" profile "$M" --board qemu-an505 --power --out "$tmp/q" >"$tmp/q.out" 2>&1
grep -q "power_unobservable" "$tmp/q.out" "$tmp/q/summary.json" 2>/dev/null &&
	ok "qemu-an505 --power: profile.power_unobservable" || bad "qemu --power: $(tail -5 "$tmp/q.out")"
if grep -l "Sanitizer" "$tmp"/err "$tmp"/*.out >/dev/null 2>&1; then bad "sanitizer report"; fi
[ $fails = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))

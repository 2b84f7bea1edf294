#!/usr/bin/env bash
# power.reset_strategy reaches the J-Link lifecycle of the live power stage
# (issue 17 item 6): on an Apollo5 board (apollo510_evb, the bench of
# tests/support/live_bench/fake_jlink_bench.sh: a fake JLinkExe that
# records every command file it is given as "CMD ..." lines) with
# power.reset_strategy=debug_reset+swpoi_reset, the command file that
# resets and starts the dedicated power build must hold the SWPOI write
# `w4 0x40000004 0x1B` (RSTGEN's SWPOI register on every Ambiq Apollo, key
# 0x1B: Apollo5 SoC datasheet), after the power build was flashed. With
# power.reset_strategy=debug_reset the same run must hold no SWPOI write,
# so the check cannot pass on a lifecycle that always writes it.
. "${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}/tests/support/live_bench/live_test_head.sh"
cat >"$tmp/lockstep_bridge.py" <<EOF2
import os, sys
os.execvp(sys.executable, [sys.executable, "$src/tests/support/bridge_fake.py",
                           "--realtime", "--lockstep"] + sys.argv[1:])
EOF2

# The J-Link invocations (an "ARGV" line, then its command file's "CMD"
# lines) after the one that flashed the power build: print "swpoi" when one
# of them writes SWPOI, "none" when none does, "unflashed" without a flash.
power_swpoi() {
	python3 - "$1" "$tmp/fw/app_power.elf" <<'PY'
import sys
calls, image = open(sys.argv[1]).read().splitlines(), sys.argv[2]
runs, cur = [], None
for line in calls:
    if line.startswith("ARGV "):
        cur = []
        runs.append(cur)
    elif line.startswith("CMD ") and cur is not None:
        cur.append(line[4:].strip())
flashed = [i for i, r in enumerate(runs) if "loadfile " + image in r]
if not flashed:
    print("unflashed")
else:
    after = runs[flashed[-1]:]
    print("swpoi" if any("w4 0x40000004 0x1B" in r for r in after) else "none")
PY
}

for strategy in debug_reset+swpoi_reset debug_reset; do
	rm -f "$tmp/jlink.calls" "$tmp/last_image" "$tmp/reset_seen"
	out="$tmp/run_${strategy//+/_}"
	ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile "$tmp/fw" "${board[@]}" \
		--power --set power.driver=joulescope --power-serial FAKE0001 \
		--set "power.reset_strategy=$strategy" --out "$out" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ]; then ok "$strategy: live profile run (exit 0)"; else
		bad "$strategy: live profile run: exit $rc"
		cat "$tmp/err"
	fi
	got=$(power_swpoi "$tmp/jlink.calls")
	want=none
	[ "$strategy" = debug_reset+swpoi_reset ] && want=swpoi
	if [ "$got" = "$want" ]; then
		ok "$strategy: the power stage's J-Link command files: $got"
	else
		bad "$strategy: the power stage's J-Link command files: $got, expected $want"
		cat "$tmp/jlink.calls"
	fi
	if grep -l "Sanitizer" "$tmp/err" >/dev/null 2>&1; then bad "$strategy: sanitizer report"; fi
done
[ $fails -eq 0 ] || exit 1

#!/usr/bin/env bash
# The live power path (src/pipelines/profile/profile_live.c) passes target.probe to
# its lifecycle (issue 18): the lock-step bench of test_profile_live.sh (a
# fake JLinkExe, the fake bridge's lock-step target; by hand 0.030 A x
# 3.3 V x 1.2 s / 1200 = 9.9e-5 J per inference) with target.probe
# gdb://127.0.0.1:PORT, where a fake GDB server
# (tests/support/fake_probe/fake_gdb_rtt.py) replays through an RTT block
# the stream of the image the fake probe flashed last. Both stages must
# read their stream through that server (rtt:gdb=), the power stage's
# terminal record included, and the power figure must be the hand figure's.
# Before the fix the power stage read the J-Link telnet port instead.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
src=${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 is needed for the fake servers and the bridge"
	exit 1
fi
. "$src/tests/support/probe_test_lib.sh"
. "$src/tests/support/live_bench/fake_jlink_bench.sh"
live_bench_setup || bad "virtual bench reference run (1200 inferences)"
cat >"$tmp/lockstep_bridge.py" <<EOF2
import os, sys
os.execvp(sys.executable, [sys.executable, "$src/tests/support/bridge_fake.py",
                           "--realtime", "--lockstep"] + sys.argv[1:])
EOF2
gport=$((port + 1))
python3 "$src/tests/support/fake_probe/fake_gdb_rtt.py" --port $gport --stream "$stream" \
	--power-stream "$power_stream" --image-file "$tmp/last_image" 2>"$tmp/gdb.err" &
pids+=($!)
for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$gport) 2>/dev/null && break; sleep 0.05; done
ERGON_JOULESCOPE_BRIDGE=$tmp/lockstep_bridge.py "$bin" profile "$tmp/fw" "${board[@]}" --power \
	--set power.driver=joulescope --power-serial FAKE0001 \
	--set target.probe=gdb://127.0.0.1:$gport --out "$tmp/lp" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ]; then ok "live profile with target.probe gdb:// (exit 0)"; else
	bad "live profile with target.probe: exit $rc"
	cat "$tmp/err" "$tmp/gdb.err"
fi
python3 - "$tmp/lp/summary.json" "127.0.0.1:$gport" <<'PY' && ok "both stages read RTT through target.probe; power figure is the hand figure" || bad "summary"
import json, sys
s = json.load(open(sys.argv[1]))
errs = []
for name in ("pmu", "power"):
    t = (s["stages"].get(name) or {}).get("capture", {}).get("transport")
    if t != "rtt:gdb=" + sys.argv[2]:
        errs.append("%s stage transport %r" % (name, t))
p = s.get("power") or {}
want = 0.030 * 3.3 * 1.2 / 1200
e, u = p.get("energy_per_inference_j"), p.get("energy_per_inference_uncertainty_j")
if p.get("inference_count") != 1200:
    errs.append("inference_count %r" % p.get("inference_count"))
if not isinstance(e, float) or u is None or abs(e - want) > u:
    errs.append("epi %r +- %r, truth %g" % (e, u, want))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
grep -q "CMD loadfile $tmp/fw/app_power.elf" "$tmp/jlink.calls" && ok "the power build was flashed" ||
	bad "power build not flashed"
if grep -l "Sanitizer" "$tmp"/err* >/dev/null 2>&1; then bad "sanitizer report"; fi
[ $fails -eq 0 ] || exit 1

#!/usr/bin/env bash
# profiling.clean_window_trace (issue 37): the firmware prints the method's
# HPX_CLEAN_ITER=<n> after each clean inference (it printed a heartbeat
# before, and the key never reached the firmware), and the host counts the
# lines against CLEAN_INFER_COUNT. On the virtual bench:
#  - trace on: n = 1 .. N in order, N = HPX_CLEAN_INFER_COUNT, HPX_CLEAN_TRACE=1,
#    no pmu.clean_trace_mismatch;
#  - trace off (the default): no HPX_CLEAN_ITER line;
#  - the trace-on log with line n = 100 removed, parsed again: the issue,
#    with N - 1 lines and N - 100 out of sequence (every later line's n is
#    one past its position), and the first out-of-sequence line named;
#  - qemu-an547 refuses the key (its firmware has no trace build).
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
expect 0 "profile --board sim with the trace" -- "$E" profile --board sim \
  --set profiling.clean_window_trace=true --out "$TMP/on"
LOG=$TMP/on/pmu/capture.log
N=$(sed -n 's/^HPX_CLEAN_INFER_COUNT=\([0-9]*\)\r\?$/\1/p' "$LOG")
[ -n "$N" ] && [ "$N" -gt 100 ] && ok "CLEAN_INFER_COUNT $N" || bad "no CLEAN_INFER_COUNT in $LOG"
grep -q '^HPX_CLEAN_TRACE=1' "$LOG" && ok "HPX_CLEAN_TRACE=1" || bad "no HPX_CLEAN_TRACE=1"
seq_ok=$(awk -F= -v n="$N" '/^HPX_CLEAN_ITER=/{c++; if ($2+0 != c) bad=1} END{print (c==n && !bad) ? "yes" : "no c=" c}' "$LOG")
[ "$seq_ok" = yes ] && ok "$N HPX_CLEAN_ITER lines, n = 1 .. $N in order" || bad "trace lines: $seq_ok (want $N)"
python3 - "$TMP/on/summary.json" <<'PY' && ok "no pmu.clean_trace_mismatch" || bad "trace on: issues"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(1 if any(i["code"] == "pmu.clean_trace_mismatch" for i in d["issues"]) else 0)
PY

expect 0 "profile --board sim without the trace" -- "$E" profile --board sim --out "$TMP/off"
[ "$(grep -c '^HPX_CLEAN_ITER=' "$TMP/off/pmu/capture.log")" = 0 ] && ok "no trace line by default" ||
  bad "trace lines without the key"

grep -v '^HPX_CLEAN_ITER=100$' "$LOG" >"$TMP/lost.log"
"$E" parse "$TMP/lost.log" --out "$TMP/lost" >"$TMP/out" 2>"$TMP/err"
python3 - "$TMP/lost/summary.json" "$N" "$TMP/lost.log" <<'PY' && ok "a lost line: pmu.clean_trace_mismatch, N-1 lines, N-100 out of sequence" || bad "lost line: issue"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
lines = open(sys.argv[3], "rb").read().split(b"\n")
first = next(k + 1 for k, l in enumerate(lines) if l.rstrip(b"\r") == b"HPX_CLEAN_ITER=101")
iss = [i for i in d["issues"] if i["code"] == "pmu.clean_trace_mismatch"]
if len(iss) != 1:
    print("issues", [i["code"] for i in d["issues"]]); sys.exit(1)
c = iss[0]["context"]
want = {"trace_lines": n - 1, "clean_infer_count": n, "out_of_sequence": n - 100,
        "first_out_of_sequence_line": first}
if any(c.get(k) != v for k, v in want.items()) or iss[0]["severity"] != "warning":
    print(c, want); sys.exit(1)
PY

expect 2 "qemu-an547 refuses the trace" -- "$E" profile --board qemu-an547 \
  --set profiling.clean_window_trace=true --dry-run
contains "$ERR" "profiling.clean_window_trace" "the refusal names the key"
finish

#!/usr/bin/env bash
# ergon kernels report as a user runs it: the table, kernels.csv and the
# digested ergon.kernels artifact from a hand-made samples file, and the
# refusals (missing correctness column, zeros, a bad cell, an existing out).
source "$(dirname "$0")/run_lib.sh"

cat >"$TMP/s.csv" <<'CSV'
case,impl,correct,count
fc_a,ref,pass,100
fc_a,ref,pass,110
fc_a,ref,pass,130
fc_a,mve,pass,40
fc_a,mve,pass,50
dw_c,ref,pass,500
dw_c,mve,fail,
CSV
expect 0 "report writes the table" -- "$ERGON_BIN" kernels report "$TMP/s.csv" --out "$TMP/o"
# (100+110+130)/3 / 45 = 2.519; one case, so the geometric mean is the same.
contains "$OUT" "2.519x" "speedup of fc_a by hand"
contains "$OUT" "geometric mean of mve speedups over 1 cases: 2.519x" "geomean over the timed cases"
contains "$OUT" "not a model latency" "geomean stated as not a model latency"
contains "$OUT" "output differs from the reference: not timed" "failed case never timed"
contains "$OUT" "include the timing read" "overhead stated"
CSV=$(cat "$TMP/o/kernels.csv")
contains "$CSV" "fc_a,ref,pass,yes,3,100,110,113.33333333333333,," "kernels.csv ref row"
contains "$CSV" "dw_c,mve,fail,no,,,,,," "kernels.csv failed row"
ID=$(grep -o '"report_id": "[^"]*"' "$TMP/o/kernels.json" | cut -d'"' -f4)
expect 0 "digest recomputes" -- "$ERGON_BIN" digest "$TMP/o/kernels.json"
[ "$OUT" = "$ID" ] && ok "report_id is the digest" || bad "report_id $ID, digest $OUT"
contains "$(cat "$TMP/o/kernels.json")" '"schema": "ergon.kernels"' "schema named"
contains "$(cat "$TMP/o/kernels.json")" '"kind": "replayed"' "provenance replayed"

expect 3 "existing out refused" -- "$ERGON_BIN" kernels report "$TMP/s.csv" --out "$TMP/o"
contains "$ERR" "--force" "names the fix"

printf 'case,impl,count\nk,ref,5\n' >"$TMP/nc.csv"
expect 3 "no correctness column" -- "$ERGON_BIN" kernels report "$TMP/nc.csv"
contains "$ERR" "nc.csv:1: missing column 'correct'" "names the column"
printf 'case,impl,correct,count\nk,ref,pass,0\n' >"$TMP/z.csv"
expect 3 "a zero count" -- "$ERGON_BIN" kernels report "$TMP/z.csv"
contains "$ERR" "z.csv:2:12: count: 0 is not > 0" "zero refused at line:column"
printf 'case,impl,correct,count\nk,ref,pass,1O\n' >"$TMP/n.csv"
expect 3 "a non-numeric cell" -- "$ERGON_BIN" kernels report "$TMP/n.csv"
contains "$ERR" "n.csv:2:12: count: '1O' is not a finite number" "line:column of the cell"
expect 2 "unknown option" -- "$ERGON_BIN" kernels report "$TMP/s.csv" --iterations 3
expect 2 "no file" -- "$ERGON_BIN" kernels report
finish

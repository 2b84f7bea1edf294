#!/usr/bin/env bash
# ergon kernels run --board host as a user runs it: a model's own layers
# (kws: 5 conv, 4 dwconv, 1 fc, channel counts not multiples of 4 among
# them), a shapes file with refused lines, the files written, and the
# refusals (mve on host, an unknown board, wrong flags).
source "$(dirname "$0")/run_lib.sh"
: "${ERGON_SHARED_DIR:?}"
KWS="$ERGON_SHARED_DIR/fixtures/models/kws_ref_model.tflite"
[ -f "$KWS" ] || { echo "FAIL - missing fixture $KWS"; exit 1; }

expect 0 "from-model runs" -- "$ERGON_BIN" kernels run --board host --from-model "$KWS" \
  --iterations 3 --warmup 1 --out "$TMP/k"
# kws_ref_model: operators 0-8 alternate conv/dwconv, operator 11 is the fc
# (ergon model info lists them).
for op in 0_conv 1_dwconv 2_conv 3_dwconv 4_conv 5_dwconv 6_conv 7_dwconv 8_conv 11_fc; do
  contains "$OUT" "kws_ref_model.tflite#$op " "layer $op in the table"
done
[ "$(grep -c ',pass,' "$TMP/k/samples.csv")" = 30 ] && ok "10 cases x 3 samples kept" ||
  bad "samples.csv has $(grep -c ',pass,' "$TMP/k/samples.csv") pass rows, wanted 30"
J=$(cat "$TMP/k/kernels.json")
contains "$J" '"kind": "measured"' "provenance measured"
contains "$J" '"clock": "CLOCK_MONOTONIC_RAW"' "clock source recorded"
contains "$J" '"compiler":' "compiler recorded"
contains "$J" '"symbol": "tfl_dwconv_s8"' "workload record names the symbol"
contains "$J" '"layout": "NHWC"' "layout recorded"
contains "$J" '"scratch_bytes": 0' "scratch size recorded"
ID=$(grep -o '"report_id": "[^"]*"' "$TMP/k/kernels.json" | cut -d'"' -f4)
[ "$("$ERGON_BIN" digest "$TMP/k/kernels.json")" = "$ID" ] && ok "digested" || bad "digest"
# The kept samples re-read by `kernels report` (count and overhead columns).
expect 0 "report re-reads samples.csv" -- "$ERGON_BIN" kernels report "$TMP/k/samples.csv"
contains "$OUT" "subtracted on 30 rows" "overhead subtracted per row"

printf 'fc f accum=33 units=5\nconv p in=6x6x3 out_c=4 filter=3x3 pad=reflect\nconv z in=6x0x3 out_c=4 filter=3x3 pad=same\ndwconv d in=9x9x5 filter=3x3 stride=2x2 pad=same\n' >"$TMP/s.txt"
expect 0 "shapes run goes on past refused lines" -- "$ERGON_BIN" kernels run --board host \
  --shapes "$TMP/s.txt" --iterations 2 --out "$TMP/s"
contains "$ERR" "s.txt:2: p refused: padding 'reflect' is not supported" "padding refused per case"
contains "$ERR" "s.txt:3: z refused: in=6x0x3" "invalid shape refused per case"
contains "$OUT" "d  " "the valid dwconv ran"
expect 0 "suite filter" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" \
  --suite fc --iterations 2 --out "$TMP/f"
[ "$(grep -c ',pass,' "$TMP/f/samples.csv")" = 2 ] && ok "only fc timed" || bad "suite fc"

expect 1 "mve on host refused" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" \
  --impl ref,mve --out "$TMP/m"
contains "$ERR" "no Helium (MVE)" "says why"
expect 2 "unknown board" -- "$ERGON_BIN" kernels run --board qemu-an574 \
  --shapes "$TMP/s.txt" --out "$TMP/q"
contains "$ERR" "unknown board (host, qemu-an547)" "names the boards"
expect 2 "unknown implementation" -- "$ERGON_BIN" kernels run --board host \
  --shapes "$TMP/s.txt" --impl ref,neon --out "$TMP/q2"
contains "$ERR" "--impl neon: unknown implementation (ref, mve)" "names the implementations"
expect 2 "bad suite" -- "$ERGON_BIN" kernels run --board host --suite gemm --shapes "$TMP/s.txt" --out "$TMP/x"
expect 2 "iterations 0" -- "$ERGON_BIN" kernels run --board host --iterations 0 --shapes "$TMP/s.txt" --out "$TMP/x"
expect 2 "both sources" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --from-model "$KWS" --out "$TMP/x"
expect 3 "existing out" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --out "$TMP/s"
finish

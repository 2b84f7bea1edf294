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
# A known board is refused for what it lacks, not as unknown: qemu-an505
# has a port whose descriptor has no kernels_main (no kernel firmware);
# apollo510_evb has no port at all.
expect 2 "qemu-an505: no kernel firmware" -- "$ERGON_BIN" kernels run --board qemu-an505 \
  --shapes "$TMP/s.txt" --out "$TMP/q"
contains "$ERR" "--board qemu-an505: its port (" "names the port"
contains "$ERR" "target/port/an505/port.json) has no kernel firmware: the descriptor has no kernels_main; run --board qemu-an547 (Cortex-M55 under QEMU) or --board host, or give the port a kernels_main (docs/internals/ports.md)" "says why and the fix"
case "$ERR" in *"unknown board"*) bad "an505 called unknown: $ERR" ;; *) ok "an505 not called unknown" ;; esac
[ ! -e "$TMP/q" ] && ok "an505: no kernels.json written, no empty --out folder left" ||
  bad "an505: $TMP/q was left behind ($(ls -A "$TMP/q"))"
expect 2 "a board without a port" -- "$ERGON_BIN" kernels run --board apollo510_evb \
  --shapes "$TMP/s.txt" --out "$TMP/q"
contains "$ERR" "--board apollo510_evb: no port in ergon-target" "no port: says so"
case "$ERR" in *"unknown board"*) bad "apollo510_evb called unknown: $ERR" ;; *) ok "apollo510_evb not called unknown" ;; esac
# A port that names a kernels_main on another board still cannot load the
# cases (only the AN547's DDR has the loader): a copy of target/ whose an505
# descriptor names the an547's kernels_main.
cp -r "$(dirname "$0")/../../target" "$TMP/tgt"
sed -i 's|"model_main": "port/common/model_main.c",|&\n  "kernels_main": "port/an547/kernels/kernels_main.c",|' "$TMP/tgt/port/an505/port.json"
grep -q kernels_main "$TMP/tgt/port/an505/port.json" && ok "an505 copy names a kernels_main" || bad "sed did not add kernels_main"
expect 2 "an505 with a kernels_main" -- env ERGON_TARGET_DIR="$TMP/tgt" "$ERGON_BIN" kernels run \
  --board qemu-an505 --shapes "$TMP/s.txt" --out "$TMP/q"
contains "$ERR" "names a kernels_main, but ergon kernels run loads the cases only into the AN547's DDR under QEMU" "says where the cases load"
expect 2 "unknown implementation" -- "$ERGON_BIN" kernels run --board host \
  --shapes "$TMP/s.txt" --impl ref,neon --out "$TMP/q2"
contains "$ERR" "--impl neon: unknown implementation (ref, mve)" "names the implementations"
expect 2 "bad suite" -- "$ERGON_BIN" kernels run --board host --suite gemm --shapes "$TMP/s.txt" --out "$TMP/x"
expect 2 "iterations 0" -- "$ERGON_BIN" kernels run --board host --iterations 0 --shapes "$TMP/s.txt" --out "$TMP/x"
expect 2 "both sources" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --from-model "$KWS" --out "$TMP/x"
expect 3 "existing out" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --out "$TMP/s"

# --repeat: every case measured three times; the samples say which
# repetition, each implementation states every repetition's median, and
# compare of two such runs gives verdicts (no "spread unknown").
for k in 1 2; do
  expect 0 "run --repeat 3 ($k)" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" \
    --suite fc --iterations 5 --repeat 3 --out "$TMP/rep$k"
done
head -1 "$TMP/rep1/samples.csv" | grep -q ',repetition$' && ok "samples.csv has a repetition column" ||
  bad "no repetition column: $(head -1 "$TMP/rep1/samples.csv")"
[ "$(grep -c ',pass,.*,3$' "$TMP/rep1/samples.csv")" = 5 ] && ok "5 samples of repetition 3" || bad "repetition 3 samples"
python3 - "$TMP/rep1/kernels.json" <<'PY' && ok "the repetitions' medians and their statistics" || bad "kernels repeat"
import json, sys, statistics
d = json.load(open(sys.argv[1]))
m = d["kernels"]["cases"][0]["impls"][0]
r = m["repeat"]
assert r["n"] == 3 and len(r["medians"]) == 3 and d["timing"]["repeat"] == 3 and m["n"] == 15
assert abs(r["mean"] - statistics.mean(r["medians"])) <= 1e-9 * r["mean"]
assert "outliers" in m and m["mean_vs_median"].split(":")[0] in ("agree", "disagree")
PY
"$ERGON_BIN" kernels report "$TMP/rep1/samples.csv" --unit ns --out "$TMP/rep1r" >/dev/null &&
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["kernels"]["cases"][0]["impls"][0]["repeat"]["n"] == 3' \
    "$TMP/rep1r/kernels.json" && ok "kernels report re-reads the repetitions" || bad "report of samples.csv with repetitions"
"$ERGON_BIN" compare "$TMP/rep1/kernels.json" "$TMP/rep2/kernels.json" --json >"$TMP/cmp.json"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] && ok "compare of repeated kernels runs has a verdict (exit $rc)" || bad "compare exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["spread_unknown"] == 0' "$TMP/cmp.json" &&
  ok "no figure without a verdict" || bad "spread unknown in a repeated comparison"
expect 2 "--repeat 0" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --repeat 0 --out "$TMP/x"
expect 2 "--repeat 101" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" --repeat 101 --out "$TMP/x"
# --pmu-counters on the host: every requested event of every case is
# "unsupported" with the reason (the host reads no PMU), never 0; a column
# per event in case_summary.csv; a typo refused with the nearest name.
expect 0 "--pmu-counters on host" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" \
  --suite fc --iterations 2 --pmu-counters INST_RETIRED,MVE_PRED,cpu_cycles --out "$TMP/pmu"
contains "$OUT" "PMU counters ARM_PMU_CPU_CYCLES, ARM_PMU_INST_RETIRED, ARM_PMU_MVE_PRED: unsupported (the host build" "table says unsupported and why"
head -1 "$TMP/pmu/case_summary.csv" | grep -q ',reason,ARM_PMU_CPU_CYCLES,ARM_PMU_INST_RETIRED,ARM_PMU_MVE_PRED$' &&
  ok "a case_summary.csv column per event" || bad "case_summary header: $(head -1 "$TMP/pmu/case_summary.csv")"
[ "$(grep -c ',unsupported,unsupported,unsupported$' "$TMP/pmu/case_summary.csv")" = 1 ] &&
  ok "the fc case's three events unsupported" || bad "case_summary rows: $(cat "$TMP/pmu/case_summary.csv")"
python3 - "$TMP/pmu/kernels.json" <<'PY' && ok "artifact: unsupported per case, no count" || bad "kernels.json pmu"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["pmu"]
assert p["status"] == "unsupported" and "host" in p["why"], p
assert p["events"] == ["ARM_PMU_CPU_CYCLES", "ARM_PMU_INST_RETIRED", "ARM_PMU_MVE_PRED"], p
assert [x["name"] for x in p["passes"]] == ["cpu_0", "mve_0"], p["passes"]
for c in d["kernels"]["cases"]:
    for m in c["impls"]:
        assert set(m["pmu"].values()) == {"unsupported"}, m["pmu"]
PY
expect 2 "unknown PMU event" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/s.txt" \
  --pmu-counters INST_RETIRD --out "$TMP/pmu2"
contains "$ERR" "--pmu-counters: unknown PMU counter 'INST_RETIRD'; nearest: ARM_PMU_INST_RETIRED" "nearest name"
[ ! -e "$TMP/pmu2" ] && ok "nothing measured or written, no empty --out folder" || bad "$TMP/pmu2 left behind"
expect 0 "no --pmu-counters on host: no PMU columns" -- "$ERGON_BIN" kernels run --board host \
  --shapes "$TMP/s.txt" --suite fc --iterations 2 --out "$TMP/nopmu"
head -1 "$TMP/nopmu/case_summary.csv" | grep -q ',reason$' && ok "header ends at reason" || bad "header"
finish

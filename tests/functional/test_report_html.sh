#!/usr/bin/env bash
# ergon report in a real browser: headless Chromium (Debian `chromium`,
# scripts/bootstrap.sh) loads each page with the network disabled; the
# page's self-check must say ok, no console error may appear, the plots
# must hold the series and points the artifacts imply and every figure
# cell must equal the artifact's value (report_dom_check.py reads the
# artifacts itself). Screenshots are kept under
# $ERGON_BUILD_DIR/test-artifacts/report_html/. Then the bad inputs: a
# truncated and a tampered artifact still render, marked; an unknown schema
# and an existing output are refused.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
HERE=$(cd "$(dirname "$0")" && pwd)
SHOTS=${ERGON_BUILD_DIR:?}/test-artifacts/report_html
mkdir -p "$SHOTS"
JLS=$ERGON_SHARED_DIR/fixtures/jls/shared_two_windows.jls
if ! command -v chromium >/dev/null; then
  bad "chromium is not installed: run scripts/bootstrap.sh (this test needs a real browser)"
  finish
fi
. "$HERE/browse_lib.sh"

# A run report with a throttle (synthetic scenario) and temperature.
expect 0 "run" -- "$E" run --device d --workload builtin:spin --idle-s 0.3 --windows 4 --window-s 0.3 \
  --instrument-opt throttle_s=0.6 --out "$TMP/run.json"
expect 0 "analyze" -- "$E" analyze --jls "$JLS" --out "$TMP/an"
expect 0 "profile" -- "$E" profile --board sim --sim-scenario pmu_presets --out "$TMP/prof"
expect 0 "profile with power and layer energy" -- "$E" profile --board sim --power --layer-energy --out "$TMP/profpow"
# A run report decimated in the report itself (envelope in the plot).
expect 0 "decimated run" -- "$E" run --device d --workload builtin:spin --idle-s 0.5 --windows 2 --window-s 1 \
  --sample-hz 5000 --max-embedded-samples 3000 --out "$TMP/dec.json"

expect 0 "report run" -- "$E" report "$TMP/run.json" --out "$TMP/run.html"
browse "$TMP/run.html" run
python3 "$HERE/report_dom_check.py" "$TMP/run.dom" "$TMP/run.json" && ok "run: DOM equals the artifact" || bad "run: DOM check"

# A repeated run: the repeat statistics and every repetition's figures
# and plots, every cell equal to the artifact.
expect 0 "repeated run" -- "$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 2 --window-s 0.2 \
  --repeat 3 --out "$TMP/rep.json"
expect 0 "report repeated run" -- "$E" report "$TMP/rep.json" --out "$TMP/rep.html"
browse "$TMP/rep.html" rep
python3 "$HERE/report_dom_check.py" "$TMP/rep.dom" "$TMP/rep.json" && ok "repeated run: DOM equals the artifact" ||
  bad "repeated run: DOM check"
grep -q 'Repetition 3' "$TMP/rep.dom" && ok "repeated run: every repetition shown" || bad "repeated run: repetitions"
grep -q 'repeat statistics' "$TMP/rep.dom" && ok "repeated run: the statistics table" || bad "repeated run: statistics"

JLS_N=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['power']['gate']['samples'])" "$TMP/an/summary.json")
expect 0 "report analyze + profiles" -- "$E" report "$TMP/an/summary.json" --jls "$JLS" "$TMP/prof/summary.json" \
  "$TMP/profpow/summary.json" "$TMP/dec.json" --out "$TMP/multi.html"
browse "$TMP/multi.html" multi
python3 "$HERE/report_dom_check.py" "$TMP/multi.dom" "$TMP/an/summary.json:$JLS_N" "$TMP/prof/summary.json" \
  "$TMP/profpow/summary.json" "$TMP/dec.json" && ok "multi: DOM equals the artifacts" || bad "multi: DOM check"
grep -q 'data-points' "$TMP/multi.dom" && ok "multi: plots present" || bad "multi: no plots"
# Energy per layer without markers (the on-board INA228): the cycle-split
# estimate alone, one series, captioned as not measured (the DOM check
# computes its bars and their order from power.layers_estimated).
expect 0 "profile, estimate-only layers" -- "$E" profile --board sim --sim-scenario baseline_ina228 \
  --layer-energy --out "$TMP/est" --quiet
expect 0 "report estimate-only layers" -- "$E" report "$TMP/est/summary.json" --out "$TMP/est.html"
browse "$TMP/est.html" est
python3 "$HERE/report_dom_check.py" "$TMP/est.dom" "$TMP/est/summary.json" && ok "estimate-only: DOM equals the artifact" ||
  bad "estimate-only: DOM check"
grep -q 'id="a0-layer-energy"' "$TMP/est.dom" && grep -q 'data-layer-energy="estimated"' "$TMP/est.dom" &&
  ! grep -q 'measured (mean over inferences)' "$TMP/est.dom" && ok "estimate-only: labelled estimated, nothing measured" ||
  bad "estimate-only: labels"
grep -q 'data-layer-energy="measured"' "$TMP/multi.dom" && ok "multi: measured layers drawn" || bad "multi: no measured layers"

# A comparison (ergon.compare) and an energy model.
# One profile a side: no verdict on the figures (exit 4), the artifact is
# written all the same.
"$E" compare "$TMP/prof/summary.json" "$TMP/prof/summary.json" --out "$TMP/cmp" >/dev/null
[ $? -eq 4 ] && [ -f "$TMP/cmp/compare.json" ] || bad "compare for the report"
expect 0 "energy model" -- "$E" energy-model "$TMP/run.json" --action inference --allow-synthetic --out "$TMP/model.json"
expect 0 "report compare + model" -- "$E" report "$TMP/cmp/compare.json" "$TMP/model.json" --out "$TMP/cmp.html"
browse "$TMP/cmp.html" compare
python3 "$HERE/report_dom_check.py" "$TMP/compare.dom" "$TMP/cmp/compare.json" "$TMP/model.json" &&
  ok "compare: DOM equals the artifacts" || bad "compare: DOM check"
contains "$(cat "$TMP/cmp.html")" "not a digest of itself" "the model's report_id is explained, not called a mismatch"
# A model ergon wrote before under the old schema name still reads.
sed 's#"measurement-harness/energy-model/v1"#"energy-model/v1"#' "$TMP/model.json" >"$TMP/model_old.json"
grep -q '"schema": "energy-model/v1"' "$TMP/model_old.json" || bad "old-name model not made"
expect 0 "report of an energy model under its old name" -- "$E" report "$TMP/model_old.json" --out "$TMP/old.html"
contains "$(cat "$TMP/old.html")" "not a digest of itself" "the old-name model is read as a model"

# Kernels (ergon.kernels): timed here, and samples from elsewhere with a
# candidate that is faster on one case and fails correctness on another;
# then their comparison.
expect 0 "kernels run" -- "$E" kernels run --board host --shapes /dev/stdin --iterations 7 --out "$TMP/kr" \
  <<<$'fc f accum=33 units=5\ndwconv d in=9x9x5 filter=3x3 stride=2x2 pad=same'
printf 'case,impl,correct,count\nx,ref,pass,100\nx,ref,pass,110\nx,mve,pass,50\nx,mve,pass,55\ny,ref,pass,200\ny,mve,fail,\n' >"$TMP/ks.csv"
expect 0 "kernels report" -- "$E" kernels report "$TMP/ks.csv" --unit cycles --out "$TMP/ks"
"$E" compare "$TMP/ks/kernels.json" "$TMP/ks/kernels.json" --out "$TMP/kc" >/dev/null
[ $? -eq 4 ] && [ -f "$TMP/kc/compare.json" ] || bad "kernels compare for the report"
expect 0 "report kernels" -- "$E" report "$TMP/kr/kernels.json" "$TMP/ks/kernels.json" "$TMP/kc/compare.json" --out "$TMP/k.html"
browse "$TMP/k.html" kernels
python3 "$HERE/report_dom_check.py" "$TMP/kernels.dom" "$TMP/kr/kernels.json" "$TMP/ks/kernels.json" "$TMP/kc/compare.json" &&
  ok "kernels: DOM equals the artifacts (cells, median and speedup bars)" || bad "kernels: DOM check"
grep -q 'id="a1-kernels-speedup"' "$TMP/kernels.dom" && ok "kernels: a speedup chart where there is a candidate" || bad "kernels: no speedup chart"
grep -q 'id="a0-kernels-speedup"' "$TMP/kernels.dom" && bad "kernels: a speedup chart without a candidate" || ok "kernels: no speedup chart for ref alone"
contains "$(cat "$TMP/kernels.dom")" "1 of 4 case/implementation pairs differ from the reference and were NOT timed: y [mve]" \
  "kernels: the correctness failure leads the section"
contains "$(cat "$TMP/kernels.dom")" 'data-kind="kernels"' "kernels: the section says its kind"
# regr beside every implementation: the verdict and its reason, each cell
# equal to the artifact (the DOM check above); one pair per case/impl of the
# three artifacts' kernels sections (2 + 4), counted here from the JSON.
want=$(python3 -c 'import json,sys; print(sum(len(c["impls"]) for f in sys.argv[1:] for c in json.load(open(f))["kernels"]["cases"]))' \
  "$TMP/kr/kernels.json" "$TMP/ks/kernels.json")
got=$(grep -o 'data-text-path="kernels.cases\[[0-9]*\].impls\[[0-9]*\].valid_for_regression"' "$TMP/kernels.dom" | wc -l)
[ "$got" = "$want" ] && [ "$want" = 6 ] && ok "kernels: a regr cell per case and implementation ($got)" ||
  bad "kernels: $got regr cells, $want pairs"
grep -q 'data-text-path="kernels.cases\[0\].impls\[0\].regression_reason"' "$TMP/kernels.dom" &&
  ok "kernels: the regression reason beside it" || bad "kernels: no regression reason cell"

# Truncated: the first 60 % of the file. Tampered: one figure changed.
head -c $(( $(stat -c %s "$TMP/run.json") * 6 / 10 )) "$TMP/run.json" >"$TMP/trunc.json"
sed 's/"mean_power_w": \([0-9]\)/"mean_power_w": 9\1/' "$TMP/run.json" >"$TMP/tampered.json"
expect 0 "report of a truncated and a tampered artifact" -- "$E" report "$TMP/trunc.json" "$TMP/tampered.json" --out "$TMP/bad.html"
contains "$(cat "$TMP/bad.html")" "TRUNCATED OR DAMAGED" "the truncated one is marked"
contains "$(cat "$TMP/bad.html")" "CHANGED OR DAMAGED: field report_id: digest mismatch" "the tampered one is marked"
browse "$TMP/bad.html" bad
grep -q 'data-status="ok"' "$TMP/bad.dom" && ok "bad: still renders (self-check ok)" || bad "bad: self-check"

echo '{"schema": "somebody.else", "x": 1}' >"$TMP/unknown.json"
expect 2 "unknown schema refused" -- "$E" report "$TMP/unknown.json" --out "$TMP/u.html"
contains "$ERR" "schema somebody.else is not one ergon writes" "the schema is named"
[ ! -e "$TMP/u.html" ] && ok "nothing written" || bad "wrote a page for an unknown schema"
expect 3 "existing output refused" -- "$E" report "$TMP/run.json" --out "$TMP/run.html"
contains "$ERR" "--force" "the refusal names --force"
expect 0 "--force replaces" -- "$E" report "$TMP/run.json" --out "$TMP/run.html" --force
expect 2 "--jls before any artifact" -- "$E" report --jls "$JLS" "$TMP/run.json" --out "$TMP/x.html"
expect 2 "--jls with a run report" -- "$E" report "$TMP/run.json" --jls "$JLS" --out "$TMP/x.html"
echo '{"schema": "ergon.repo' >"$TMP/garbage.json"
expect 3 "nothing recoverable" -- "$E" report "$TMP/garbage.json" --out "$TMP/x.html"
finish

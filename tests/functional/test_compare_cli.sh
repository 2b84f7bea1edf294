#!/usr/bin/env bash
# ergon compare: a comparable pair of --repeat 3 runs whose load power
# differs by 3 % (synthetic load_w 3.00 vs 3.09 W, no noise: 3.09 / 3.00 - 1
# = 3 % by construction, the same in every repetition, so beyond the spread
# and the ±) gets the regression verdict at a 2 % threshold and not at 5 %;
# single runs get no verdict (run-to-run spread unknown, exit 4); an
# incomparable pair (sample rate 1000 vs 500 Hz) is refused with exit 4 and
# the difference named; different kinds are refused; N = 3; profiles give
# layer_diff.csv (the uniform_slowdown bench scenario runs every layer 4x as
# long).
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
W=builtin:periodic,burst_ms=0,sleep_ms=1
mk() { # mk NAME LOAD_W [extra run flags...]
  local name=$1 w=$2
  shift 2
  "$E" run --device d --workload "$W" --idle-s 0.3 --windows 2 --window-s 0.3 \
    --instrument-opt load_w="$w" --instrument-opt noise_w=0 --out "$TMP/$name.json" "$@" >/dev/null 2>&1 ||
    bad "run $name"
}
mk a 3.00 --repeat 3
mk b 3.09 --repeat 3
mk c 3.00 --repeat 3
mk slow 3.00 --sample-hz 500 --repeat 3
mk one 3.00
mk two 3.09
py() { python3 -c "$1" "$TMP/out"; }

expect 1 "3 % regression at --threshold 2" -- "$E" compare "$TMP/a.json" "$TMP/b.json" --threshold 2 --json
py '
import json, sys
r = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in r["figures"]}
v = f["load mean power"]["versus"][0]
# 3 % by construction within the load phase; a sample at a phase edge can
# fall on the idle side of the model (seen: 3.022 % on a loaded host), so
# the figure is checked to a tenth of a percent, the verdict exactly.
assert abs(v["pct"] - 3.0) < 0.1, v
assert abs(v["ratio"] - 1.03) < 1e-3, v
assert v["verdict"] == "higher", v
assert v["n"] == [3, 3], v
assert v["welch"]["significant"] is True, v
# the combined ± is the sum of both stated ±
u = [x["u"] for x in f["load mean power"]["values"]]
assert abs(v["combined_u"] - (u[0] + u[1])) < 1e-15
assert r["regression"]["verdict"] == "regression"
assert "load mean power" in [x["figure"] for x in r["regression"]["figures"]]
assert r["comparability"]["comparable"] is True
' && ok "the 3 % difference, its ratio, verdict and regression" || bad "3 % regression figures"

# The exit code also depends on latency and throughput, which a busy host
# moves by more than 5 %: only the power figure is asserted here.
"$E" compare "$TMP/a.json" "$TMP/b.json" --threshold 5 --json >"$TMP/out" 2>"$TMP/err"
py '
import json, sys
r = json.load(open(sys.argv[1]))
assert "load mean power" not in [x["figure"] for x in r["regression"]["figures"]]
' && ok "load mean power not a regression at 5 %" || bad "5 % threshold"

expect 0 "same power: not a power regression" -- "$E" compare "$TMP/a.json" "$TMP/c.json" --json
py '
import json, sys
r = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in r["figures"]}
v = f["load mean power"]["versus"][0]["verdict"]; assert v == "equal" or v.startswith("not distinguishable"), v
assert r["regression"]["verdict"].startswith("not assessed")
' && ok "equal power is equal or not distinguishable" || bad "equal pair"

expect 4 "single runs: no verdict" -- "$E" compare "$TMP/one.json" "$TMP/two.json" --threshold 2
contains "$OUT" "no verdict: run-to-run spread unknown (1 and 1 repetitions" "the figure says why"
contains "$OUT" "measure each side with --repeat 3 or more" "and what to do"
contains "$OUT" "regression verdict: not assessed (run-to-run spread unknown" "no regression verdict"
contains "$OUT" "+3.00 %" "the difference is still shown"
contains "$OUT" "mW" "powers print in the summary's units"

expect 4 "incomparable pair refused" -- "$E" compare "$TMP/a.json" "$TMP/slow.json"
contains "$OUT" "breaks   sampler.target_hz: A=1000 B=500" "the breaking difference is listed"
contains "$ERR" "--force-incomparable" "the refusal names the override"
expect 0 "forced" -- "$E" compare "$TMP/a.json" "$TMP/slow.json" --force-incomparable
contains "$OUT" "NOT comparable (forced" "a forced comparison says so"

expect 0 "three reports" -- "$E" compare "$TMP/a.json" "$TMP/b.json" "$TMP/c.json"
contains "$OUT" "C-A" "the third is compared with A"

expect 0 "profile A" -- "$E" profile --board sim --out "$TMP/pa"
expect 0 "profile B" -- "$E" profile --board sim --sim-scenario uniform_slowdown --out "$TMP/pb"
expect 4 "different kinds refused" -- "$E" compare "$TMP/a.json" "$TMP/pa/summary.json"
contains "$ERR" "different kinds" "the refusal says why"
# One profile each: the spread is unknown, no verdict (exit 4); the
# outputs are still written.
expect 4 "profile comparison without repetitions" -- "$E" compare "$TMP/pa/summary.json" "$TMP/pb/summary.json" --threshold 5 --out "$TMP/cmp"
contains "$OUT" "run-to-run spread unknown" "the profile figures get no verdict"
contains "$OUT" "subject  stages.pmu.image" "the firmware image is listed as the subject"
grep -q '^0,CONV_2D,window_us,500,2000,1500,4$' "$TMP/cmp/layer_diff.csv" && ok "layer_diff.csv row (500 us x 4)" || { bad "layer_diff.csv"; cat "$TMP/cmp/layer_diff.csv"; }
expect 0 "compare.json is a sealed artifact" -- "$E" digest "$TMP/cmp/compare.json"
grep -q "\"report_id\": \"$OUT\"" "$TMP/cmp/compare.json" && ok "its report_id matches" || bad "compare.json digest"
expect 3 "--out refuses to replace" -- "$E" compare "$TMP/pa/summary.json" "$TMP/pb/summary.json" --out "$TMP/cmp"

sed 's/"name": "d"/"name": "e"/' "$TMP/a.json" >"$TMP/tampered.json"
expect 4 "a changed artifact is not compared" -- "$E" compare "$TMP/tampered.json" "$TMP/b.json"
contains "$ERR" "digest mismatch" "the digest mismatch is named"
expect 2 "one artifact" -- "$E" compare "$TMP/a.json"
expect 2 "bad threshold" -- "$E" compare "$TMP/a.json" "$TMP/b.json" --threshold x
expect 2 "unknown option" -- "$E" compare "$TMP/a.json" "$TMP/b.json" --frobnicate
echo '{"schema": "nope"}' >"$TMP/nope.json"
id=$("$E" digest "$TMP/nope.json")
echo "{\"schema\": \"nope\", \"report_id\": \"$id\"}" >"$TMP/nope.json"
expect 2 "an unknown schema is refused" -- "$E" compare "$TMP/nope.json" "$TMP/a.json"
contains "$ERR" "schema nope is not a kind" "the unknown schema is named"
finish

#!/usr/bin/env bash
# --repeat N on `ergon profile` and `ergon validate` (issue 31): each
# repetition kept whole in one summary.json, each figure's statistics over
# the repetitions recomputed here (Python's statistics module and the NIST
# t table, not the program's output), the virtual bench's energy per
# inference against its model (5 mA x 1.8 V x 1 ms = 9 uJ, sim.h), and
# ergon compare's rule on repeated profiles: a verdict on every repeated
# figure, "spread unknown" on what ran once; validate's regression check
# with repetitions on both sides passes the same model and fails a costlier
# one.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
MODELS=${ERGON_SHARED_DIR:?}/fixtures/models

# 1. profile --repeat 3: the power stage three times, the PMU stage once.
expect 0 "profile --board sim --power --repeat 3" -- "$E" profile --board sim --power --repeat 3 --out "$TMP/a"
contains "$OUT" "repeat     : 3 of 3 repetitions" "the terminal shows the repetitions"
python3 - "$TMP/a" <<'PY' && ok "repetitions kept whole; mean, sd, 95 % interval and u recomputed" || bad "profile repeat statistics"
import json, math, os, statistics, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
reps = d["repetitions"]
assert [r["index"] for r in reps] == [1, 2, 3] and all(r["status"] == "ok" for r in reps)
assert "pmu" not in reps[0], "the PMU stage ran once"
for k in range(3):
    assert os.path.exists("%s/power/rep-%d/capture.log" % (sys.argv[1], k + 1)), k
for a, b in zip(reps, reps[1:]):
    assert a["measurement_time"]["end_monotonic_s"] <= b["measurement_time"]["start_monotonic_s"]
assert reps[0]["power"] == d["power"], "the first repetition is the summary's power section"
rep = d["repeat"]
assert rep["planned"] == 3 and rep["completed"] == 3 and rep["n"] == 3 and "withheld" not in rep
T975_DF2 = 4.303  # NIST/SEMATECH e-Handbook, table 1.3.6.7.2, 0.975, 2 df
for key, budget in [("energy_per_inference_j", "energy_per_inference_j"), ("avg_power_w", "avg_power_w"),
                    ("energy_j", "energy_j"), ("avg_current_a", None)]:
    f = rep["figures"]["power"][key]
    v = [r["power"][key] for r in reps]
    assert f["values"] == v, (key, f["values"], v)
    m, sd = statistics.mean(v), statistics.stdev(v)
    assert abs(f["mean"] - m) <= 1e-12 * abs(m) and abs(f["sd"] - sd) <= 1e-12 * abs(m), key
    half = T975_DF2 * sd / math.sqrt(3)
    assert abs((f["ci_hi"] - f["ci_lo"]) / 2 - half) <= 1e-3 * half + 1e-15 * abs(m), key
    assert abs(f["median"] - statistics.median(v)) <= 1e-12 * abs(m)
    u = [r["power"]["uncertainty"][budget]["U"] if budget else None for r in reps]
    assert f["u"] == u, (key, f["u"], u)
# The bench: 5 mA on 1.8 V, 1 ms an inference (sim.h): 9 uJ; the gate holds
# one more 100 us packet's worth at most (9 mW x 100 us / 5000 inferences).
for r in reps:
    e = r["power"]["energy_per_inference_j"]
    assert abs(e - 9e-6) <= 9e-3 * 1e-4 / 5000 + 1e-15, e
PY
expect 2 "--repeat without --power is refused" -- "$E" profile --board sim --repeat 3 --out "$TMP/x"
contains "$ERR" "add --power" "the error says what to add"
expect 2 "--repeat 0 is refused" -- "$E" profile --board sim --power --repeat 0 --out "$TMP/x"

# 2. compare on two repeated profiles of the same configuration: the
#    power figures get a verdict (no difference), the PMU figures, which
#    ran once, none: exit 4 ("spread unknown"), as docs/COMPARE.md says.
expect 0 "a second --repeat 3" -- "$E" profile --board sim --power --repeat 3 --out "$TMP/b"
expect 4 "compare: the PMU figures have no spread" -- "$E" compare "$TMP/a/summary.json" "$TMP/b/summary.json" --json
python3 - "$TMP/out" <<'PY' && ok "energy per inference: a verdict (equal); total cycles: spread unknown" || bad "compare of repeated profiles"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in d["figures"]}
e = f["energy per inference"]
assert [v["n"] for v in e["values"]] == [3, 3]
assert not e["versus"][0].get("spread_unknown"), e["versus"][0]
assert "equal" in e["versus"][0]["verdict"] or "not distinguishable" in e["versus"][0]["verdict"], e["versus"][0]["verdict"]
assert f["total cycles (per-layer sum)"]["versus"][0].get("spread_unknown") is True
assert d["spread_unknown"] == 3
PY

# 3. validate --repeat 3: each repetition the whole profile (both stages).
mkdir -p "$TMP/m" "$TMP/m2"
cp "$MODELS/ad01_int8.tflite" "$TMP/m/"
expect 0 "validate --repeat 3 (the baseline)" -- "$E" validate --board sim --power --models "$TMP/m" \
  --junit-xml "$TMP/va.xml" --out "$TMP/va" --repeat 3
python3 - "$TMP/va/ad01_int8/summary.json" <<'PY' && ok "validate: both stages in every repetition, the PMU figures' statistics too" || bad "validate repeat"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
reps = d["repetitions"]
assert len(reps) == 3 and all(r["pmu"]["status"] == "ok" and r["status"] == "ok" for r in reps)
assert d["repeat"]["completed"] == 3 and d["repeat"]["what"].startswith("each repetition is the whole profile")
c = d["repeat"]["figures"]["profile"]["total_cycles"]
v = [r["pmu"]["total_cycles"] for r in reps]
assert c["values"] == v and c["mean"] == statistics.mean(v) and v[0] == d["profile"]["total_cycles"]
t = d["repeat"]["figures"]["profile"]["meta"]["clean_infer_avg_us"]
assert t["values"] == [r["pmu"]["clean_infer_avg_us"] for r in reps]
PY
expect 0 "validate --repeat 3 against it: the regression check gives a verdict" -- "$E" validate --board sim \
  --power --models "$TMP/m" --junit-xml "$TMP/vb.xml" --out "$TMP/vb" --repeat 3 --baseline "$TMP/va"
grep -q 'name="regression"' "$TMP/vb.xml" && ! grep -q '<failure' "$TMP/vb.xml" &&
  ok "regression: passed (no headline figure worse)" || bad "regression with repetitions: $(grep -o '<failure message="[^"]*"' "$TMP/vb.xml")"
# A costlier model under the same file name: its energy per inference is
# worse by far more than the threshold and the spread: a regression.
cp "$MODELS/kws_ref_model.tflite" "$TMP/m2/ad01_int8.tflite"
expect 1 "validate --repeat 3, a costlier model: regression" -- "$E" validate --board sim --power \
  --models "$TMP/m2" --junit-xml "$TMP/vc.xml" --out "$TMP/vc" --repeat 3 --baseline "$TMP/va"
grep -q '<failure message="regression: a headline figure is worse' "$TMP/vc.xml" &&
  ok "the regression check fails it" || bad "no regression failure: $(grep -o '<failure message="[^"]*"' "$TMP/vc.xml")"
# Without repetitions on this side: no verdict (compare's rule), a failure.
expect 1 "validate once against the repeated baseline: no verdict" -- "$E" validate --board sim --power \
  --models "$TMP/m" --junit-xml "$TMP/vd.xml" --out "$TMP/vd" --baseline "$TMP/va"
grep -q 'no verdict: the run-to-run spread is unknown' "$TMP/vd.xml" && ok "it says the spread is unknown" ||
  bad "no 'spread unknown' failure"
finish

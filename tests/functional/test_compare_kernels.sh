#!/usr/bin/env bash
# ergon compare of two ergon.kernels artifacts (issue 14): cases matched by
# name and implementation; the change in median with the ± of each median
# (the wider side of its distribution-free interval) deciding "not
# distinguishable" as for run reports; cases in one side only listed; the
# regression verdict and exit code; a unit mismatch and a kind mismatch
# refused (exit 4). The expected figures are worked out here by hand from
# the samples written below, never read back from ergon.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
# Three repetitions of the same samples on each side (the samples CSV's
# repetition column): A: a = b = 100..109, c = 50..59. B: a = 120..129 (+20
# counts), b = 101..110 (+1), d = 70..79; e fails correctness in B. The
# repetitions' medians do not spread, so the instrument side (the medians'
# intervals) decides. Then the same samples without repetitions: no verdict.
python3 - "$TMP" <<'PY'
import sys
t = sys.argv[1]
def w(name, rows, reps):
    with open("%s/%s.csv" % (t, name), "w") as f:
        f.write("case,impl,correct,count%s\n" % (",repetition" if reps else ""))
        for r in (range(1, reps + 1) if reps else [0]):
            for case, lo in rows:
                for i in range(10):
                    f.write("%s,ref,pass,%d%s\n" % (case, lo + i, ",%d" % r if reps else ""))
for reps, sfx in ((3, ""), (0, "1")):
    w("a" + sfx, [("a", 100), ("b", 100), ("c", 50), ("e", 10)], reps)
    w("b" + sfx, [("a", 120), ("b", 101), ("d", 70)], reps)
    with open("%s/b%s.csv" % (t, sfx), "a") as f:
        f.write("e,ref,fail,%s\n" % (",1" if reps else ""))
PY
"$E" kernels report "$TMP/a1.csv" --unit cycles --out "$TMP/A1" >/dev/null || bad "kernels report A1"
"$E" kernels report "$TMP/b1.csv" --unit cycles --out "$TMP/B1" >/dev/null || bad "kernels report B1"
expect 4 "one repetition a side: no verdict" -- "$E" compare "$TMP/A1/kernels.json" "$TMP/B1/kernels.json" --threshold 3
contains "$OUT" "no verdict: run-to-run spread unknown (1 and 1 repetitions" "the spread is unknown"
contains "$OUT" "regression verdict: not assessed (run-to-run spread unknown" "no regression verdict"
"$E" kernels report "$TMP/a.csv" --unit cycles --out "$TMP/A" >/dev/null || bad "kernels report A"
"$E" kernels report "$TMP/b.csv" --unit cycles --out "$TMP/B" >/dev/null || bad "kernels report B"
"$E" kernels report "$TMP/b.csv" --unit ns --out "$TMP/Bns" >/dev/null || bad "kernels report B in ns"

expect 1 "a +19 % median at --threshold 3 is a regression" -- "$E" compare "$TMP/A/kernels.json" \
  "$TMP/B/kernels.json" --threshold 3 --json
# By hand: n = 10, the median interval is [x_(2), x_(9)] (P(B <= 1) = 11/1024
# <= 0.025 < P(B <= 2) = 56/1024), coverage 1 - 22/1024. a: A median 104.5 in
# [101, 108] -> ± 3.5; B 124.5 in [121, 128] -> ± 3.5; diff 20 > 7: higher,
# +19.1388 %. b: 104.5 vs 105.5, diff 1 <= 7: not distinguishable.
printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["kind"] == "kernels", r["kind"]
f = {x["name"]: x for x in r["figures"]}
assert sorted(f) == ["a [ref] median", "b [ref] median", "e [ref] median"], sorted(f)
a = f["a [ref] median"]
assert [v["value"] for v in a["values"]] == [104.5, 124.5] and [v["u"] for v in a["values"]] == [3.5, 3.5], a
assert [v["repetitions"] for v in a["values"]] == [3, 3], a
assert abs(a["values"][0]["coverage"] - (1 - 22 / 1024)) < 1e-15
v = a["versus"][0]
assert v["diff"] == 20 and abs(v["pct"] - 2000 / 104.5) < 1e-9 and v["combined_u"] == 7 and v["verdict"] == "higher", v
assert v["welch"]["significant"] is True and v["welch"]["p"] == 0, v
b = f["b [ref] median"]["versus"][0]
assert b["diff"] == 1 and b["verdict"] == "not distinguishable (within the instruments\x27 ±)", b
e = f["e [ref] median"]
assert e["values"][1]["value"] is None and "differs from the reference" in e["values"][1]["why"], e
assert e["versus"][0]["verdict"].startswith("not available"), e
only = {(x["case"], x["impl"]): x["in"] for x in r["only_in"]}
assert only == {("c", "ref"): [sys.argv[1]], ("d", "ref"): [sys.argv[2]]}, only
reg = r["regression"]
assert reg["verdict"] == "regression" and [x["figure"] for x in reg["figures"]] == ["a [ref] median"], reg
' "$TMP/A/kernels.json" "$TMP/B/kernels.json" && ok "figures, ±, verdicts and only_in as worked out by hand" ||
  bad "kernels compare JSON: ${OUT:0:600}"

expect 1 "the terminal text" -- "$E" compare "$TMP/A/kernels.json" "$TMP/B/kernels.json" --threshold 3
contains "$OUT" "B-A +20 cycles (+19.14 %, ratio 1.1914); no spread on either side: higher" "a: the change and its verdict"
contains "$OUT" "B-A +1 cycles (+0.96 %, ratio 1.0096); no spread on either side: not distinguishable (within the instruments' ±)" "b: within the combined ±"
contains "$OUT" "c [ref]: only in $TMP/A/kernels.json" "a case only in A is listed"
contains "$OUT" "d [ref]: only in $TMP/B/kernels.json" "a case only in B is listed"
contains "$OUT" "a [ref] median: B is 19.14 % worse than A" "the regression names the case"
expect 0 "--threshold 25: no regression" -- "$E" compare "$TMP/A/kernels.json" "$TMP/B/kernels.json" --threshold 25
contains "$OUT" "regression verdict: no regression (threshold 25 %)" "verdict at 25 %"

expect 0 "three artifacts" -- "$E" compare "$TMP/A/kernels.json" "$TMP/B/kernels.json" "$TMP/A/kernels.json" \
  --out "$TMP/cmp3"
contains "$OUT" "C-A +0 cycles (+0.00 %, ratio 1.0000); no spread on either side: equal" "C is A again"
[ -f "$TMP/cmp3/compare.json" ] && [ ! -e "$TMP/cmp3/layer_diff.csv" ] && ok "compare.json, no layer diff for kernels" ||
  bad "outputs of a kernels comparison: $(ls "$TMP/cmp3")"
"$E" verify "$TMP/cmp3/compare.json" >/dev/null 2>&1 && ok "the comparison artifact verifies" || bad "compare.json does not verify"

expect 4 "cycles vs ns is refused" -- "$E" compare "$TMP/A/kernels.json" "$TMP/Bns/kernels.json"
contains "$OUT" "breaks   kernels.unit: A=cycles B=ns" "the unit difference is named"
contains "$ERR" "--force-incomparable" "the refusal names the override"
"$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/run.json" >/dev/null 2>&1 ||
  bad "run for the kind mismatch"
expect 4 "a kernels artifact and a run report are refused" -- "$E" compare "$TMP/A/kernels.json" "$TMP/run.json"
contains "$ERR" "is an ergon kernels artifact, $TMP/run.json is an ergon run report: artifacts of different kinds are never compared" \
  "the kinds are named"
finish

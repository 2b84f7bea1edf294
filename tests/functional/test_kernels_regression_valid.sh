#!/usr/bin/env bash
# valid_for_regression per case and implementation (issue 37, docs/METHOD.md
# "Kernels"): correct, timed with n >= 6, median > 0, and the wider side of
# the median's distribution-free interval at most 5 % of the median. The
# verdicts, intervals and speedups below are worked out by hand from the
# samples written here; case_summary.csv, the artifact and the terminal
# table must agree with them; ergon compare calls no regression on a case
# that is not valid on both sides.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN

# By hand (n = 10: the interval is [x_(2), x_(9)], coverage 1 - 22/1024):
#   ok   ref 100..109      median 104.5 in [101, 108]: +/-3.5 = 3.35 % -> valid
#   ok   mve 50..59        median 54.5 in [51, 58]: +/-3.5 = 6.42 %   -> not valid
#                          speedup = mean 104.5 / mean 54.5 = 1.9174311926605505
#   wide ref 80,90,100 x6,110,120  median 100 in [90, 110]: 10 %    -> not valid
#   few  ref 100 x5        n = 5 < 6                                   -> not valid
#   bad  ref fail          not correct, not timed                      -> not valid
python3 - "$TMP" <<'PY'
import sys
t = sys.argv[1]
rows = [("ok", "ref", v) for v in range(100, 110)]
rows += [("ok", "mve", v) for v in range(50, 60)]
rows += [("wide", "ref", v) for v in [80, 90] + [100] * 6 + [110, 120]]
rows += [("few", "ref", 100)] * 5
with open(t + "/s.csv", "w") as f:
    f.write("case,impl,correct,count\n")
    for c, i, v in rows:
        f.write("%s,%s,pass,%d\n" % (c, i, v))
    f.write("bad,ref,fail,\n")
PY
expect 0 "kernels report" -- "$E" kernels report "$TMP/s.csv" --unit cycles --out "$TMP/o"
contains "$OUT" "regr" "the table has the regr column"
contains "$OUT" "few [ref]: not valid for regression: n = 5 < 6" "why few is not valid"
contains "$OUT" "wide [ref]: not valid for regression: the median's interval is +/-10 % of the median" "why wide is not valid"
python3 - "$TMP/o" <<'PY' && ok "case_summary.csv and the artifact as worked out by hand" || bad "case_summary.csv / kernels.json differ from the hand values"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/case_summary.csv")))
assert list(rows[0].keys()) == ["case", "impl", "correct", "timed", "n", "median", "median_ci_lo",
    "median_ci_hi", "speedup_vs_baseline", "valid_for_regression", "reason"], rows[0].keys()
r = {(x["case"], x["impl"]): x for x in rows}
assert sorted(r) == [("bad", "ref"), ("few", "ref"), ("ok", "mve"), ("ok", "ref"), ("wide", "ref")], sorted(r)
def row(k, n, med, lo, hi, sp, valid):
    x = r[k]
    assert x["correct"] == "pass" and x["timed"] == "yes", x
    assert int(x["n"]) == n and float(x["median"]) == med, x
    assert float(x["median_ci_lo"]) == lo and float(x["median_ci_hi"]) == hi, x
    assert (x["speedup_vs_baseline"] == "") if sp is None else abs(float(x["speedup_vs_baseline"]) - sp) < 1e-12, x
    assert x["valid_for_regression"] == valid, x
    return x["reason"]
assert row(("ok", "ref"), 10, 104.5, 101, 108, None, "yes").startswith("valid: correct, n = 10, the median's interval +/-3.35 %")
assert "+/-6.42 % of the median" in row(("ok", "mve"), 10, 54.5, 51, 58, 104.5 / 54.5, "no")
assert "+/-10 % of the median" in row(("wide", "ref"), 10, 100, 90, 110, None, "no")
# n = 5: no rank reaches 95 %, the interval is [min, max].
assert row(("few", "ref"), 5, 100, 100, 100, None, "no").startswith("n = 5 < 6")
b = r[("bad", "ref")]
assert (b["correct"], b["timed"], b["n"], b["median"], b["valid_for_regression"]) == ("fail", "no", "", "", "no"), b
assert b["reason"].startswith("not correct"), b
k = json.load(open(d + "/kernels.json"))["kernels"]
assert "at most 5 %" in k["regression_rule"], k["regression_rule"]
v = {(c["case"], m["impl"]): m["valid_for_regression"] for c in k["cases"] for m in c["impls"]}
assert v == {("ok", "ref"): True, ("ok", "mve"): False, ("wide", "ref"): False,
             ("few", "ref"): False, ("bad", "ref"): False}, v
PY

# ergon compare: three repetitions of one sample a side. A: 100 each, B:
# 120 each: +20 %, no spread, so without the rule it is a regression at
# --threshold 3; but n = 3 < 6 on both sides, so it is not valid for
# regression and the verdict is no regression. Case g has 10 samples per
# repetition (100..109 in A, 101..110 in B): valid, +0.96 %, not a regression.
python3 - "$TMP" <<'PY'
import sys
t = sys.argv[1]
for name, x, base in (("a", 100, 100), ("b", 120, 101)):
    with open("%s/%s.csv" % (t, name), "w") as f:
        f.write("case,impl,correct,count,repetition\n")
        for r in (1, 2, 3):
            f.write("t,ref,pass,%d,%d\n" % (x, r))
            for v in range(base, base + 10):
                f.write("g,ref,pass,%d,%d\n" % (v, r))
PY
"$E" kernels report "$TMP/a.csv" --unit cycles --out "$TMP/A" >/dev/null || bad "kernels report A"
"$E" kernels report "$TMP/b.csv" --unit cycles --out "$TMP/B" >/dev/null || bad "kernels report B"
expect 0 "a +20 % change on a case not valid for regression is not one" -- \
  "$E" compare "$TMP/A/kernels.json" "$TMP/B/kernels.json" --threshold 3 --json
printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
f = {x["name"]: x for x in r["figures"]}
t = f["t [ref] median"]["versus"][0]
assert t["diff"] == 20 and t["verdict"] == "higher", t
assert t["valid_for_regression"] is False and "not valid for regression" in t["regression_note"], t
g = f["g [ref] median"]["versus"][0]
assert g["valid_for_regression"] is True and "regression_note" not in g, g
assert r["regression"]["figures"] == [], r["regression"]
' && ok "the change is shown, the regression not called" || bad "compare JSON: ${OUT:0:800}"
finish

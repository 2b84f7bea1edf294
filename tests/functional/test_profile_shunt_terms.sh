#!/usr/bin/env bash
# The shunt's budget terms in profile (issue 32; docs/UNCERTAINTY.md "The
# shunt"): power.ina228.shunt_tolerance_pct, shunt_tempco_ppm_per_c and
# shunt_temp_span_c, documented there but missing as keys until now. On the
# virtual bench in internal mode (the INA228 on a 15 mOhm Adafruit board):
#  - unset: the three terms are unknown (never zero) and name the key to set;
#  - 1 %, 50 ppm/C, 20 C: the tolerance term's limit is 1 % of the energy
#    per inference, the tempco term's 50e-6 x 20 = 0.1 % of it, both
#    rectangular (divisor sqrt 3), their source the keys;
#  - a negative tolerance is refused (exit 2) naming the key.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
int=(--board sim --power --set power.mode=internal --set power.ina228.board=adafruit-ina228)
expect 0 "internal mode, shunt terms unset" -- "$E" profile "${int[@]}" --out "$TMP/unset"
python3 - "$TMP/unset/summary.json" <<'PY' && ok "unset: the three terms unknown, each naming its key" || bad "unset terms"
import json, sys
e = json.load(open(sys.argv[1]))["power"]["uncertainty"]["energy_per_inference_j"]
t = {x["name"]: x for x in e["terms"]}
want = {"shunt tolerance": "shunt_tolerance_pct", "shunt tempco": "shunt_tempco_ppm_per_c"}
bad = [n for n, k in want.items() if n not in t or t[n]["known"] or k not in t[n]["source"]]
if bad or e["complete"]:
    print(bad, e["complete"], {n: t.get(n) for n in want}); sys.exit(1)
PY
expect 0 "internal mode, shunt terms stated" -- "$E" profile "${int[@]}" \
  --set power.ina228.shunt_tolerance_pct=1 --set power.ina228.shunt_tempco_ppm_per_c=50 \
  --set power.ina228.shunt_temp_span_c=20 --out "$TMP/set"
python3 - "$TMP/set/summary.json" <<'PY' && ok "stated: 1 % and 50 ppm/C x 20 C of the figure, rectangular, sourced" || bad "stated terms"
import json, math, sys
e = json.load(open(sys.argv[1]))["power"]["uncertainty"]["energy_per_inference_j"]
t = {x["name"]: x for x in e["terms"]}
f = e["figure"]
errs = []
for name, rel, key in (("shunt tolerance", 0.01, "power.ina228.shunt_tolerance_pct"),
                       ("shunt tempco", 50e-6 * 20, "power.ina228.shunt_tempco_ppm_per_c")):
    x = t.get(name)
    if (x is None or not x["known"] or abs(x["limit"] - rel * f) > 1e-12 * f
            or abs(x["divisor"] - math.sqrt(3)) > 1e-12 or abs(x["value"] - rel * f / math.sqrt(3)) > 1e-12 * f
            or key not in x["source"]):
        errs.append((name, x))
if errs:
    print(errs); sys.exit(1)
PY
expect 2 "a negative shunt tolerance is refused" -- "$E" profile "${int[@]}" \
  --set power.ina228.shunt_tolerance_pct=-1 --dry-run
contains "$ERR" "power.ina228.shunt_tolerance_pct" "the refusal names the key"
finish

#!/usr/bin/env bash
# The uncertainty budgets of `ergon analyze` and `ergon record` -> `ergon
# analyze` (docs/UNCERTAINTY.md): where the rating comes from (a JLS's model,
# --meter, ergon record's note), the gate on both sides, and verify
# recomputing a summary's budgets.
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/reseal_lib.sh"
JLS=${ERGON_SHARED_DIR:?}/fixtures/jls/shared_basic.jls

# 1. A Joulescope UI recording (model JS220): the rating comes from the
#    model; ergon holds none of the JS220's figures, so the budget is
#    incomplete and names the unknown term; without a gate that is no error.
expect 0 "analyze a JS220 recording" -- "$ERGON_BIN" analyze --jls "$JLS" --out "$TMP/a"
contains "$OUT" "incomplete: current gain unknown" "the table says the budget is incomplete"
python3 - "$TMP/a/summary.json" <<'PY' && ok "power.uncertainty: JS220 rating, incomplete, U not stated" || bad "JS220 budget"
import json, sys
u = json.load(open(sys.argv[1]))["power"]["uncertainty"]
assert u["rating_from"] == "the recording's source model (JS220)", u["rating_from"]
e = u["energy_j"]
assert e["complete"] is False and e["U"] is None and e["U_known"] > 0
assert e["dominant"] == "current gain"
t = {x["name"]: x for x in e["terms"]}
assert not t["current gain"]["known"] and "range 18 mA" in t["current gain"]["source"]
assert t["gate edges"]["known"]
PY
# The same with a gate: an incomplete budget fails it; the figures stay.
expect 1 "the gate fails an incomplete budget" -- "$ERGON_BIN" analyze --jls "$JLS" --out "$TMP/b" --max-uncertainty-pct 50
python3 - "$TMP/b/summary.json" <<'PY' && ok "power.uncertainty_above_limit, figures kept" || bad "gate on incomplete"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
codes = [i["code"] for i in p["issues"]]
assert "power.uncertainty_above_limit" in codes
assert p["energy_j"] > 0 and p["integrity"] == "invalid"
PY
expect 0 "the gated summary verifies" -- "$ERGON_BIN" verify "$TMP/b/summary.json"
contains "$OUT" "uncertainty budget(s) recomputed" "verify says it recomputed the budgets"

# 2. A statistics CSV on a JS110's 2 A range (0.5 A at 5 V, 1 ms packets,
#    the gate on INPUT0 for 2 s: 5 J), its missing figures stated by the
#    user. By hand: current gain 0.3 % x 5 J = 0.015 J, offset 1.5 mA x 5 V x
#    2 s = 0.015 J, voltage gain 0.1 % x 5 J = 0.005 J, voltage offset 1 mV x
#    1 C = 0.001 J, timebase 20 ppm x 5 J = 1e-4 J, gate edges sqrt(2) x
#    2.5 mJ; quantization: one sample per packet (no sample ids), 1 uA x 5 V x
#    1 ms per packet: sqrt(2000) x 5e-9 J; the file prints 10 digits: the
#    power within half of 1e-9 W over the 2 s, 1e-9 J.
#    U = 2 sqrt(sum limit^2 / 3 + q^2/12).
awk 'BEGIN { print "t_start_s,t_end_s,i_avg_a,v_avg_v,p_avg_w,digital";
  for (k = 0; k < 3000; k++) printf "%.3f,%.3f,0.500000000,5.000000000,2.500000000,%d\n", k / 1000, (k + 1) / 1000, (k >= 500 && k < 2500) }' > "$TMP/js110.csv"
RATE=(--meter js110 --rating v_gain_pct=0.1 --rating v_offset_v=0.001 --rating timebase_ppm=20 --rating i_step_a=1e-6)
expect 0 "a JS110 CSV with every figure stated, under a wide gate" -- "$ERGON_BIN" analyze --stats "$TMP/js110.csv" "${RATE[@]}" --out "$TMP/c" --max-uncertainty-pct 5
python3 - "$TMP/c/summary.json" <<'PY' && ok "the JS110 budget by hand" || bad "JS110 budget"
import json, math, sys
p = json.load(open(sys.argv[1]))["power"]
e = p["uncertainty"]["energy_j"]
assert abs(e["figure"] - 5.0) < 1e-9
t = {x["name"]: x for x in e["terms"]}
want = {"current gain": 0.015, "current offset": 0.015, "voltage gain": 0.005,
        "voltage offset": 0.001, "timebase": 1e-4, "gate edges": math.sqrt(2) * 2.5e-3,
        "recording resolution": 1e-9}
for k, v in want.items():
    assert abs(t[k]["limit"] - v) <= 1e-12 + 1e-9 * v, (k, t[k]["limit"], v)
q = math.sqrt(2000) * 5e-9
assert abs(t["quantization"]["limit"] - q) <= 1e-15, t["quantization"]
U = 2 * math.sqrt(sum(v * v for v in want.values()) / 3 + q * q / 12)
assert abs(e["U"] - U) <= 1e-12 + 1e-9 * U and e["complete"], (e["U"], U)
assert abs(e["U_pct"] - 100 * U / 5.0) < 1e-6
assert not any(i["code"] == "power.uncertainty_above_limit" for i in p["issues"])
PY
expect 1 "the same under a narrow gate (0.5 %)" -- "$ERGON_BIN" analyze --stats "$TMP/js110.csv" "${RATE[@]}" --out "$TMP/d" --max-uncertainty-pct 0.5
contains "$OUT" "k = 2; largest term:" "the table names the largest term"
expect 0 "verify" -- "$ERGON_BIN" verify "$TMP/d/summary.json"
# An edited budget, or a gate issue taken away, does not verify.
reseal "$TMP/c/summary.json" "$TMP/e1.json" 'd["power"]["uncertainty"]["energy_j"]["U"] /= 2'
expect 1 "a halved U does not verify" -- "$ERGON_BIN" verify "$TMP/e1.json"
contains "$ERR" "power.uncertainty.energy_j.U" "it names the field"
reseal "$TMP/d/summary.json" "$TMP/e2.json" 'p = d["power"]; p["issues"] = [i for i in p["issues"] if i["code"] != "power.uncertainty_above_limit"]'
expect 1 "a gate issue taken away does not verify" -- "$ERGON_BIN" verify "$TMP/e2.json"
contains "$ERR" "power.uncertainty_above_limit is not listed" "it says so"
reseal "$TMP/c/summary.json" "$TMP/e3.json" 'd["power"]["uncertainty"]["energy_j"]["terms"][0]["limit"] = 0.0'
expect 1 "a zeroed term does not verify" -- "$ERGON_BIN" verify "$TMP/e3.json"
# Usage errors.
expect 2 "an unknown meter" -- "$ERGON_BIN" analyze --stats "$TMP/js110.csv" --meter js999 --out "$TMP/f"
contains "$ERR" "--meter js999" "names the meter"
expect 2 "a bad rating" -- "$ERGON_BIN" analyze --stats "$TMP/js110.csv" --rating gain=1 --out "$TMP/f"
contains "$ERR" "rating.gain: unknown rating" "names the key"

# 3. record -> analyze: the rating travels in the recording's note. The
#    PPK2 simulator at 4 mA, 3 V; the user states the PPK2's figures when
#    recording (Nordic's are not known to ergon).
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
coproc SIMP { exec "$SIM" --current-a 0.004 --burst-a 0.004 --period-s 0; }
read -r PORT <&"${SIMP[0]}"
expect 0 "record with stated figures" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --instrument-opt rating.i_gain_pct=1 \
  --instrument-opt rating.i_offset_a=2e-6 --instrument-opt rating.v_gain_pct=0.5 \
  --instrument-opt rating.v_offset_v=0.001 --instrument-opt rating.timebase_ppm=50 \
  --duration-s 1.2 --out "$TMP/p.jls"
kill "$SIMP_PID" 2>/dev/null; wait "$SIMP_PID" 2>/dev/null
printf '0.2,1.0\n' > "$TMP/m.csv"
expect 0 "analyze the recording" -- "$ERGON_BIN" analyze --jls "$TMP/p.jls" --markers "$TMP/m.csv" --min-window-s 0.5 --out "$TMP/g"
python3 - "$TMP/g/summary.json" <<'PY' && ok "the note's rating, complete; current gain 1 % by hand" || bad "record -> analyze"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
u = p["uncertainty"]
assert u["rating_from"].startswith("the recording's note"), u["rating_from"]
e = u["energy_j"]
t = {x["name"]: x for x in e["terms"]}
assert abs(t["current gain"]["limit"] - 0.01 * p["energy_j"]) <= 1e-15, (t["current gain"], p["energy_j"])
assert "stated by the user (--instrument-opt rating.i_gain_pct=1)" in t["current gain"]["source"]
assert abs(t["voltage gain"]["limit"] - 0.005 * p["energy_j"]) <= 1e-15
assert e["complete"], [x["name"] for x in e["terms"] if not x["known"]]
PY
finish

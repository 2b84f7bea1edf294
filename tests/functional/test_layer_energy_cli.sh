#!/usr/bin/env bash
# ergon profile MODEL.tflite --board sim --power --layer-energy (issue 33;
# docs/METHOD.md, "Energy per layer"). Expected values by hand from the
# virtual bench's documented model (sim.h): an operator runs 2 cycles per
# MAC + 1 per output byte + 500 at 96 MHz and draws CONV_2D 6 mA,
# DEPTHWISE_CONV_2D 4 mA, others 3 mA, FULLY_CONNECTED 5 mA, at 1.8 V; a
# marker toggle costs 250 ns at 5 mA (2.25 nJ) inside the layer it starts.
# kws_ref_model's layer 2 (CONV_2D) is 1032500 cycles = 10.7552 ms:
# 10.7552 ms x 10.8 mW + 2.25 nJ = 116.1585 uJ. Its last four operators
# (AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX: 564 + 564 + 2048 +
# 512 cycles) are each under 10 samples of the 100 kSPS meter (9600
# cycles): not resolved alone, measured with layer 8.
. "$(dirname "$0")/run_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models

expect 0 "kws: profile --power --layer-energy" -- "$ERGON_BIN" profile "$M/kws_ref_model.tflite" \
  --board sim --power --layer-energy --out "$TMP/kws" --quiet
contains "$OUT" "energy per layer (measured between marker edges" "the terminal's table"
contains "$OUT" "estimated: the energy per inference split by the PMU stage's cycles, not measured" "estimate labelled"
contains "$OUT" "4 layer(s) not resolved alone" "the unresolved layers counted"
[ -f "$TMP/kws/detailed/layer_energy.csv" ] && ok "detailed/layer_energy.csv" || bad "no layer_energy.csv"
python3 - "$TMP/kws/summary.json" "$TMP/kws/detailed/layer_energy.csv" <<'PY' && ok "summary: layers against the bench's truth" || bad "summary content"
import json, sys, csv
d = json.load(open(sys.argv[1]))
p = d["power"]
L, meta = p["layers"], p["layer_energy"]
assert len(L) == 9, len(L)
assert [l["index"] for l in L] == list(range(9))
assert L[8]["last_index"] == 12 and L[8]["op"] == "CONV_2D + AVERAGE_POOL_2D + RESHAPE + FULLY_CONNECTED + SOFTMAX"
assert [u["op"] for u in meta["unresolved"]] == ["AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"]
assert all(u["measured_with"] == 8 for u in meta["unresolved"])
truth = 1032500 / 96e6 * 0.006 * 1.8 + 2.25e-9
l2 = L[2]
assert l2["op"] == "CONV_2D" and l2["kind"] == "measured"
assert abs(l2["energy_j"] - truth) <= l2["energy_U_j"], (l2["energy_j"], truth, l2["energy_U_j"])
assert l2["energy_U_j"] < 1e-3 * truth
# A depthwise layer: 152500 cycles at 4 mA.
t1 = 152500 / 96e6 * 0.004 * 1.8 + 2.25e-9
assert abs(L[1]["energy_j"] - t1) <= L[1]["energy_U_j"], (L[1]["energy_j"], t1)
# The estimate is labelled and is the cycle split of the energy per inference.
est = L[2]["estimated_energy"]
assert est["kind"] == "estimated"
cyc = [1032500 if i in (2, 4, 6, 8) else 648500 if i == 0 else 152500 if i in (1, 3, 5, 7) else 0 for i in range(13)]
cyc[9:13] = [564, 564, 2048, 512]
assert abs(est["energy_j"] - p["energy_per_inference_j"] * 1032500 / sum(cyc)) < 1e-12
# The sum against the gate's energy per inference, within both uncertainties.
assert abs(meta["sum_j"] - p["energy_per_inference_j"]) <= (meta["sum_budget"]["U"] ** 2 + (2 * p["energy_per_inference_uncertainty_j"] / 3 ** 0.5) ** 2) ** 0.5
assert meta["inferences"]["used"] == meta["inferences"]["expected"] == p["inference_count"]
assert abs(sum(l["share"] for l in L) - 1) < 1e-9
codes = [i["code"] for i in d["issues"]]
assert "power.layers_sum_mismatch" not in codes and "power.layers_inferences_dropped" not in codes
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 9 and rows[2]["op"] == "CONV_2D" and abs(float(rows[2]["energy_j"]) - l2["energy_j"]) < 1e-12
PY
expect 0 "verify recomputes the layers' budgets" -- "$ERGON_BIN" verify "$TMP/kws/summary.json"
contains "$OUT" "uncertainty budget(s) recomputed" "budgets recomputed"

# No markers (the on-board INA228): the cycle split only, never measured.
# The three simulated layers are 48000, 24000, 24000 cycles.
expect 0 "internal mode: estimate only" -- "$ERGON_BIN" profile --board sim --sim-scenario baseline_ina228 \
  --layer-energy --out "$TMP/ina" --quiet
python3 - "$TMP/ina/summary.json" <<'PY' && ok "internal: layers_estimated, labelled, no layers[]" || bad "internal estimate"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
assert "layers" not in p and p["layer_energy"]["measured"] == "no"
E = p["layers_estimated"]
epi = p["energy_per_inference_j"]
assert [e["kind"] for e in E] == ["estimated"] * 3
for e, c in zip(E, (48000, 24000, 24000)):
    assert abs(e["energy_j"] - epi * c / 96000) < 1e-15
PY

# A wrong use: --layer-energy without the power stage.
expect 2 "--layer-energy without --power" -- "$ERGON_BIN" profile --board sim --layer-energy --out "$TMP/x"
contains "$ERR" "add --power" "says what to add"
finish

#!/usr/bin/env bash
# Energy per layer from a recording (issue 33): `ergon record` from the PPK2
# simulator with the gate on D0 and layer markers on D1, then `ergon
# analyze --jls --marker-input-index 1 --layers SUMMARY.json`. The expected
# per-layer energies are computed here from the simulator's configured
# currents and marker timing, not taken from ergon.
. "$(dirname "$0")/run_lib.sh"
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim

# The simulated target: 20 inferences of three layers (6 mA for 300
# samples, 4 mA for 200, 5 mA for 150) inside a gate that rises 0.2 s into
# the stream, 100 samples at 2 mA before and after them; D1 toggles at
# every layer's first sample and once after the last: 61 edges.
coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a 0.002 --gate-at-start --gate-delay-s 0.2 \
  --fast --layers-a 0.006,0.004,0.005 --layer-samples 300,200,150 --inferences 20; }
read -r PORT <&"${SIMP[0]}"
expect 0 "record the marked run" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.5 --out "$TMP/r.jls"
kill "$SIMP_PID" 2>/dev/null; wait "$SIMP_PID" 2>/dev/null

# The profile whose layers were marked: cycles at 100 MHz (3 ms, 2 ms,
# 1.5 ms, and a 10 ns RESHAPE before the last: one marker edge for both).
cat >"$TMP/prof.json" <<'J'
{"profile": {"meta": {"system_clock_hz": 100000000},
 "layers": [{"op": "CONV_2D", "cycles": 300000}, {"op": "DEPTHWISE_CONV_2D", "cycles": 200000},
            {"op": "RESHAPE", "cycles": 1}, {"op": "FULLY_CONNECTED", "cycles": 150000}]}}
J
# The firmware's facts: 20 inferences in the 132 ms gate.
cat >"$TMP/facts.json" <<'J'
{"clean_infer_count": 20, "clean_infer_avg_us": 6500, "probe_kind": "infer",
 "terminal": {"version": 1, "status": "ok", "requested_count": 20,
   "completed_count": 20, "elapsed_us": 132000, "gate_asserted": true,
   "gate_lowered": true, "final_phase": "complete", "error_code": 0}}
J
RATE=(--rating i_gain_pct=1 --rating i_offset_a=2e-6 --rating v_gain_pct=0.5
  --rating v_offset_v=0.001 --rating timebase_ppm=50)
expect 0 "analyze with the marker line" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 1 --layers "$TMP/prof.json" --facts "$TMP/facts.json" \
  --min-window-s 0.05 "${RATE[@]}" --out "$TMP/a"
python3 - "$TMP/a/summary.json" "$TMP/a/detailed/layer_energy.csv" <<'PY' && ok "layers by hand" || bad "layers by hand"
import csv, json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import decoded as q, layers, unmarked as unmarked_j
p = json.load(open(sys.argv[1]))["power"]
L, m = p["layers"], p["layer_energy"]
# The PPK2's current as the driver decodes it (range 1, 101.65 ohm, for
# 2..6 mA) and the layer model of tests/support/live_bench/ppk2_hand.py:
# each edge mid-way through the sample before the first one showing the
# new level; layer 0's first inference follows the 2 mA lead-in.
V, rate, n = 3.0, 1e5, 20
I, S = [q(0.006), q(0.004), q(0.005)], [300, 200, 150]
hand, truth = layers(V, rate, n, I, S, q(0.002))
# The plan marks layer 0, then the first layer that starts once the marked
# span has lasted 10 samples: RESHAPE (at FULLY_CONNECTED's start), not
# FULLY_CONNECTED, which is measured with it.
assert [e["op"] for e in L] == ["CONV_2D", "DEPTHWISE_CONV_2D", "RESHAPE + FULLY_CONNECTED"], [e["op"] for e in L]
assert [(e["index"], e["last_index"]) for e in L] == [(0, 0), (1, 1), (2, 3)]
for j, e in enumerate(L):
    assert abs(e["energy_j"] - hand[j]) <= 1e-6 * hand[j], (j, e["energy_j"], hand[j])
    # truth: the layer's own energy
    assert e["budget"]["complete"] and abs(e["energy_j"] - truth[j]) <= e["energy_U_j"], (j, truth[j], e["energy_U_j"])
    assert abs(e["duration_s"] - S[j] / rate) <= 1e-9, e["duration_s"]
    assert e["inferences_used"] == n and e["kind"] == "measured"
# The estimate: the energy per inference split by the cycles.
epi = p["energy_per_inference_j"]
cyc = [300000, 200000, 150001]
for j, e in enumerate(L):
    est = e["estimated_energy"]
    assert est["kind"] == "estimated" and abs(est["energy_j"] - epi * cyc[j] / 650001) <= 1e-12 * epi, est
assert m["inferences"] == {"expected": 20, "used": 20, "dropped": 0, "lost": 0}, m["inferences"]
assert m["edges"] == 61 and m["marked_segments"] == 3, m
assert [(u["index"], u["op"], u["measured_with"]) for u in m["unresolved"]] == [(3, "FULLY_CONNECTED", 2)]
assert m["sum_checked"] == "against the energy per inference"
# The gate's energy per inference = the layers + the 200 lead/tail samples
# at 2 mA shared over the 20 inferences (less the lead-in's last half
# sample, inside the first edge, plus the last layer's last half sample,
# after the final edge).
assert abs(m["sum_j"] + m["unmarked_j"] - epi) <= 1e-7 * epi, (m["sum_j"], m["unmarked_j"], epi)
unmarked = unmarked_j(V, rate, n, q(0.002), I[2])
assert abs(m["unmarked_j"] - unmarked) <= 1e-6 * unmarked, (m["unmarked_j"], unmarked)
codes = [i["code"] for i in p["issues"]]
assert "power.layers_sum_mismatch" not in codes and "power.layers_inferences_dropped" not in codes, codes
assert m["costliest"] == [0, 1, 2], m["costliest"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert [r["op"] for r in rows] == [e["op"] for e in L] and float(rows[0]["energy_j"]) == float("%.9g" % L[0]["energy_j"])
PY

# Without --facts: the layers, no estimate, and the sum unchecked, said.
expect 0 "analyze without facts" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 1 --layers "$TMP/prof.json" --min-window-s 0.05 --out "$TMP/b"
python3 - "$TMP/b/summary.json" <<'PY' && ok "no facts: unchecked sum, no estimate" || bad "no facts"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
assert len(p["layers"]) == 3 and all(e["estimated_energy"] is None for e in p["layers"])
assert p["layer_energy"]["sum_checked"].startswith("not checked"), p["layer_energy"]["sum_checked"]
PY

# A missed marker toggle (the 17th: inference 5's second layer, counting
# from 0): that inference shows 2 edges, is dropped and counted; the layers
# fold the other 19, by hand as above.
coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a 0.002 --gate-at-start --gate-delay-s 0.2 \
  --fast --layers-a 0.006,0.004,0.005 --layer-samples 300,200,150 --inferences 20 --marker-skip 17; }
read -r PORT <&"${SIMP[0]}"
expect 0 "record a run with a missed marker" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.5 --out "$TMP/skip.jls"
kill "$SIMP_PID" 2>/dev/null; wait "$SIMP_PID" 2>/dev/null
expect 0 "analyze the run with a missed marker" -- "$ERGON_BIN" analyze --jls "$TMP/skip.jls" \
  --marker-input-index 1 --layers "$TMP/prof.json" --facts "$TMP/facts.json" \
  --min-window-s 0.05 "${RATE[@]}" --out "$TMP/skip"
python3 - "$TMP/skip/summary.json" <<'PY' && ok "a missed edge: one inference dropped, 19 by hand" || bad "missed edge"
import json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import decoded as q, layers
p = json.load(open(sys.argv[1]))["power"]
L, m = p["layers"], p["layer_energy"]
assert m["inferences"] == {"expected": 20, "used": 19, "dropped": 1, "lost": 0}, m["inferences"]
assert m["edges"] == 60, m["edges"]
drop = [i for i in p["issues"] if i["code"] == "power.layers_inferences_dropped"]
assert len(drop) == 1 and drop[0]["context"]["first_dropped"] == 5 and \
    drop[0]["context"]["first_dropped_edges"] == 2, drop
V, rate, n = 3.0, 1e5, 19
I, S = [q(0.006), q(0.004), q(0.005)], [300, 200, 150]
hand, _ = layers(V, rate, n, I, S, q(0.002))
for j, e in enumerate(L):
    assert abs(e["energy_j"] - hand[j]) <= 1e-6 * hand[j] and e["inferences_used"] == 19, (j, e["energy_j"], hand[j])
PY

# The marker line on the gate's line, or on a line that is only low: the
# first refused; the second folds no inference and says so.
expect 2 "marker on the gate's line" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 0 --layers "$TMP/prof.json" --out "$TMP/c"
contains "$ERR" "is the gate's line" "names the clash"
expect 0 "an idle marker line" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 5 --layers "$TMP/prof.json" --min-window-s 0.05 --out "$TMP/d"
python3 - "$TMP/d/summary.json" <<'PY' && ok "no edges: power.layers_none" || bad "idle marker line"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
assert "power.layers_none" in [i["code"] for i in p["issues"]], p["issues"]
assert p["layers"] == [] and p["layer_energy"]["inferences"]["used"] == 0
PY
# Usage: both flags, a JLS, a profile summary.
expect 2 "--marker-input-index without --layers" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 1 --out "$TMP/e"
contains "$ERR" "needs both --marker-input-index N" "asks for --layers"
printf 't_s,current_a,voltage_v,digital\n0,0.001,3,0\n1e-5,0.001,3,0\n' >"$TMP/raw.csv"
expect 2 "markers from a raw CSV" -- "$ERGON_BIN" analyze --raw "$TMP/raw.csv" \
  --marker-input-index 1 --layers "$TMP/prof.json" --out "$TMP/e"
contains "$ERR" "needs a JLS recording" "says a JLS is needed"
expect 3 "--layers not a profile summary" -- "$ERGON_BIN" analyze --jls "$TMP/r.jls" \
  --marker-input-index 1 --layers "$TMP/facts.json" --out "$TMP/e"
contains "$ERR" "no profile.layers[]" "names what is missing"
finish

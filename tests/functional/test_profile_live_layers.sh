#!/usr/bin/env bash
# `ergon profile --power --layer-energy` on a real board with a live PPK2
# (issue 33): the marker line on D1 beside the gate on D0, fed to the layer
# engine sample by sample as the gated engine gets them
# (src/pipelines/profile/profile_live.c). The board is the fake J-Link bench
# of tests/support/live_bench/fake_jlink_bench.sh (1200 inferences of 1 ms;
# its PMU stage's three layers, CONV_2D 48,000 + DEPTHWISE_CONV_2D 24,000 +
# FULLY_CONNECTED 24,000 cycles at 96 MHz, i.e. 50 + 25 + 25 samples at
# 100 kSPS, so the marker plan marks all three); the meter is the PPK2
# protocol simulator, unpaced, drawing 1200 marked inferences of those
# three layers at 6, 4 and 5 mA inside a gate that rises 1 s after the
# stream's first sample (100 samples at 2 mA before and after them; 1 mA
# outside the gate). Every expected figure is computed here from the
# simulator's configured currents and timing (the hand model of
# test_analyze_layers.sh), not taken from ergon; then the same signal is
# recorded with `ergon record` and analysed with `ergon analyze
# --marker-input-index 1 --layers`, and the two paths must give the same
# layers. Then a live Joulescope with lock-step off (the shipped bridge on
# the stub pyjoulescope_driver): its statistics packets are the layer
# engine's samples, at 100000/s the same hand model per packet, at 1000/s
# the layers unresolved with the rate named. The refusals: a Joulescope
# with lock-step (INPUT1 is READY) or with the markers off INPUT1, and a
# PPK2 with the markers on the gate's input, each before anything is
# flashed.
. "${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}/tests/support/live_bench/live_test_head.sh"

sim_args=(--current-a 0.001 --burst-a 0.002 --fast --gate-at-start --gate-delay-s 1.0
	--layers-a 0.006,0.004,0.005 --layer-samples 50,25,25 --inferences 1200)
ppk2=(--power --layer-energy --set power.driver=ppk2 --set power.io_voltage=3.0)

# --- 1. the live path --------------------------------------------------------
start_sim "${sim_args[@]}"
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/pp" \
	>"$tmp/out.pp" 2>"$tmp/err.pp"
rc=$?
stop_sim
if [ $rc -eq 0 ]; then ok "live PPK2 profile with --layer-energy (exit 0)"; else
	bad "live PPK2 profile with --layer-energy: exit $rc"
	cat "$tmp/err.pp"
fi
# The hand model, shared by both paths' checks (tests/support/live_bench/
# ppk2_hand.py): the PPK2's decoded currents, 1200 inferences of 50, 25 and
# 25 samples at 100 kSPS on 3.0 V after the 2 mA lead-in.
cat >"$tmp/hand.py" <<'PY'
import os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import decoded as q, layers, unmarked as unmarked_j
V, rate, n = 3.0, 1e5, 1200
I, S = [q(0.006), q(0.004), q(0.005)], [50, 25, 25]
hand, truth = layers(V, rate, n, I, S, q(0.002))
unmarked = unmarked_j(V, rate, n, q(0.002), I[2])
PY
if python3 - "$tmp/pp/summary.json" "$tmp/pp/detailed/layer_energy.csv" "$tmp/hand.py" <<'PY'; then
import csv, json, sys
exec(open(sys.argv[3]).read())
d = json.load(open(sys.argv[1]))
p = d["power"]
L, m = p.get("layers"), p.get("layer_energy", {})
errs = []
if not L or [e["op"] for e in L] != ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"]:
    print("layers %r, layer_energy %r" % (L, m)); sys.exit(1)
for j, e in enumerate(L):
    if abs(e["energy_j"] - hand[j]) > 1e-6 * hand[j]: errs.append("layer %d: %r, by hand %r" % (j, e["energy_j"], hand[j]))
    # The layer's own energy inside its stated U: the known part, since a
    # PPK2 states no rated gain (the budget is incomplete, and says so).
    if e["energy_U_j"] is not None or e["budget"]["complete"]: errs.append("layer %d: a complete budget from an unrated PPK2: %r" % (j, e["budget"]))
    if not abs(e["energy_j"] - truth[j]) <= e["energy_U_known_j"]: errs.append("layer %d: truth %r outside %r +- %r" % (j, truth[j], e["energy_j"], e["energy_U_known_j"]))
    if abs(e["duration_s"] - S[j] / rate) > 1e-9: errs.append("layer %d duration %r" % (j, e["duration_s"]))
    if e["inferences_used"] != n or e["kind"] != "measured": errs.append("layer %d: %r" % (j, e))
    if not (e.get("estimated_energy") or {}).get("kind") == "estimated": errs.append("layer %d: no estimate beside it" % j)
if m.get("inferences") != {"expected": 1200, "used": 1200, "dropped": 0, "lost": 0}: errs.append("inferences %r" % m.get("inferences"))
if m.get("edges") != 3 * n + 1 or m.get("marked_segments") != 3: errs.append("edges %r segments %r" % (m.get("edges"), m.get("marked_segments")))
if m.get("marker_input_index") != 1 or "markers D1" not in m.get("meter", "") or "gate D0" not in m.get("meter", ""): errs.append("meter %r" % m.get("meter"))
if (m.get("marker_cost") or {}).get("measured") != "no" or "unmarked run" not in m["marker_cost"].get("why", ""): errs.append("marker cost %r" % m.get("marker_cost"))
epi = p.get("energy_per_inference_j")
if not isinstance(epi, float) or abs(m["sum_j"] + m["unmarked_j"] - epi) > 1e-7 * epi: errs.append("sum %r + unmarked %r vs epi %r" % (m.get("sum_j"), m.get("unmarked_j"), epi))
if abs(m.get("unmarked_j", 0) - unmarked) > 1e-6 * unmarked: errs.append("unmarked %r, by hand %r" % (m.get("unmarked_j"), unmarked))
codes = [i["code"] for i in d.get("issues", [])]
for c in ("power.layers_sum_mismatch", "power.layers_inferences_dropped", "power.layers_none"):
    if c in codes: errs.append("issue %s" % c)
if m.get("costliest") != [0, 2, 1]: errs.append("costliest %r" % m.get("costliest"))
plan = d.get("plan", {}).get("power", {}).get("layer_markers")
if plan != {"meter": "ppk2", "gate_input_index": 0, "marker_input_index": 1}: errs.append("plan %r" % plan)
if d.get("provenance", {}).get("kind") != "synthetic": errs.append("provenance %r" % d.get("provenance"))
rows = list(csv.DictReader(open(sys.argv[2])))
if [r["op"] for r in rows] != [e["op"] for e in L]: errs.append("csv %r" % rows)
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "live: each layer within 1e-6 of the hand model, its own energy inside U, 3601 edges, the sum checked"
else bad "live: layers"; fi
grep -q "CONV_2D" "$tmp/out.pp" && ok "the terminal table names the layers" ||
	bad "no layer table on the terminal"

# --- 2. the same signal recorded, then analysed -------------------------------
start_sim "${sim_args[@]}"
"$bin" record --instrument "ppk2:$PORT" --instrument-opt vdd_mv=3000 --duration-s 2.4 \
	--out "$tmp/r.jls" >"$tmp/out.rec" 2>"$tmp/err.rec" || {
	bad "record the marked signal"
	cat "$tmp/err.rec"
}
stop_sim
cat >"$tmp/facts.json" <<'J'
{"clean_infer_count": 1200, "clean_infer_avg_us": 1000, "probe_kind": "infer",
 "terminal": {"version": 1, "status": "ok", "requested_count": 1200,
   "completed_count": 1200, "elapsed_us": 1202000, "gate_asserted": true,
   "gate_lowered": true, "final_phase": "complete", "error_code": 0}}
J
"$bin" analyze --jls "$tmp/r.jls" --marker-input-index 1 --layers "$tmp/pp/summary.json" \
	--facts "$tmp/facts.json" --out "$tmp/a" >"$tmp/out.a" 2>"$tmp/err.a"
rc=$?
if [ $rc -eq 0 ]; then ok "analyze the recording (exit 0)"; else
	bad "analyze the recording: exit $rc"
	cat "$tmp/err.a"
fi
if python3 - "$tmp/pp/summary.json" "$tmp/a/summary.json" "$tmp/hand.py" <<'PY'; then
import json, sys
exec(open(sys.argv[3]).read())
live = json.load(open(sys.argv[1]))["power"]
rec = json.load(open(sys.argv[2]))["power"]
errs = []
a, b = live.get("layers") or [], rec.get("layers") or []
if [(e["index"], e["last_index"], e["op"]) for e in a] != [(e["index"], e["last_index"], e["op"]) for e in b] or len(a) != 3:
    errs.append("layers differ: %r vs %r" % (a, b))
for j, (x, y) in enumerate(zip(a, b)):
    # The same samples in both: the sums differ only in float rounding.
    for k in ("energy_j", "median_energy_j", "duration_s", "power_w"):
        if abs(x[k] - y[k]) > 1e-9 * abs(y[k]): errs.append("layer %d %s: live %r, recording %r" % (j, k, x[k], y[k]))
    if abs(y["energy_j"] - hand[j]) > 1e-6 * hand[j]: errs.append("recording layer %d: %r, by hand %r" % (j, y["energy_j"], hand[j]))
    if x["inferences_used"] != y["inferences_used"]: errs.append("layer %d inferences" % j)
for k in ("inferences", "edges", "marked_segments"):
    if live["layer_energy"].get(k) != rec["layer_energy"].get(k): errs.append("%s: %r vs %r" % (k, live["layer_energy"].get(k), rec["layer_energy"].get(k)))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "record + analyze of the same signal gives the live path's layers"
else bad "live against record + analyze"; fi

# --- 3. a live Joulescope, lock-step off: the marker line on INPUT1 ---------
# The Joulescope bridge that ships with ergon on the stub pyjoulescope_driver
# (tests/support/pyjoulescope_stub), unpaced, at 100,000 statistics packets
# a second (the JS220's fastest: 10 samples of 1 MHz a packet). Inside a
# gate of 1.202 s rising 0.2 s after the stream's first sample: 1 ms at
# 2 mA, then 1200 inferences of 0.5 + 0.25 + 0.25 ms (50, 25, 25 packets)
# at 6, 4 and 5 mA, INPUT1 toggling at every layer's start and once after
# the last, then 1 ms at 2 mA; 1 mA outside the gate; 3.0 V. The bridge
# gives each packet the inputs' levels at its middle sample and every edge
# falls on a packet boundary, so each packet is one sample of the same
# hand model as the PPK2's at 1e5/s, with the stub's exact currents.
cat >"$tmp/js_bridge.py" <<EOF2
import os, sys
os.execvp(sys.executable, [sys.executable, "$src/bridges/joulescope_bridge.py"] + sys.argv[1:]
          + ["--heartbeat-s", "30"])
EOF2
js_stub='{"pace":false,"voltage_v":3.0,"idle_a":0.001,"active_a":0.002,"first_gate_s":0.2,"gate_s":1.202,"period_s":100,
 "layers":{"lead_s":0.001,"layer_s":[0.0005,0.00025,0.00025],"layer_a":[0.006,0.004,0.005],"inferences":1200}}'
js=(--power --layer-energy --set power.driver=joulescope --set power.lockstep=false)
: >"$tmp/jlink.calls"
PYTHONPATH=$src/tests/support/pyjoulescope_stub ERGON_JS_STUB=$js_stub \
	ERGON_JOULESCOPE_BRIDGE=$tmp/js_bridge.py "$bin" profile "$tmp/fw" "${board[@]}" "${js[@]}" \
	--set power.stats_rate_hz=100000 --out "$tmp/jsl" >"$tmp/out.jsl" 2>"$tmp/err.jsl"
rc=$?
if [ $rc -eq 0 ]; then ok "live Joulescope (lock-step off) with --layer-energy (exit 0)"; else
	bad "live Joulescope with --layer-energy: exit $rc"
	cat "$tmp/err.jsl"
fi
if python3 - "$tmp/jsl/summary.json" <<'PY'; then
import json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import layers, unmarked as unmarked_j
d = json.load(open(sys.argv[1]))
p = d["power"]
L, m = p.get("layers"), p.get("layer_energy", {})
# The same layer model with packets as samples (each edge placed mid-way
# through the packet before the first one showing the new level) and the
# stub's exact currents: no ADC steps between them and the packets.
V, rate, n = 3.0, 1e5, 1200
I, S = [0.006, 0.004, 0.005], [50, 25, 25]
hand, truth = layers(V, rate, n, I, S, 0.002)
unmarked = unmarked_j(V, rate, n, 0.002, I[2])
errs = []
if not L or [e["op"] for e in L] != ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"]:
    print("layers %r, layer_energy %r" % (L, m)); sys.exit(1)
for j, e in enumerate(L):
    if abs(e["energy_j"] - hand[j]) > 1e-6 * hand[j]: errs.append("layer %d: %r, by hand %r" % (j, e["energy_j"], hand[j]))
    U = e["energy_U_j"] if e["energy_U_j"] is not None else e["energy_U_known_j"]
    if not abs(e["energy_j"] - truth[j]) <= U: errs.append("layer %d: truth %r outside %r +- %r" % (j, truth[j], e["energy_j"], U))
    # The edge-placement term: half a packet's energy at each edge, x n.
    t = [x for x in e["budget"]["terms"] if x["name"] == "marker edges"]
    if not t or "1e-05 s" not in t[0]["source"] or "half a statistics packet" not in t[0]["source"]: errs.append("layer %d: edge term %r" % (j, t))
    if abs(e["duration_s"] - S[j] / rate) > 1e-9: errs.append("layer %d duration %r" % (j, e["duration_s"]))
    if e["inferences_used"] != n or e["kind"] != "measured": errs.append("layer %d: %r" % (j, e))
if m.get("inferences") != {"expected": 1200, "used": 1200, "dropped": 0, "lost": 0}: errs.append("inferences %r" % m.get("inferences"))
if m.get("edges") != 3 * n + 1 or m.get("marked_segments") != 3: errs.append("edges %r segments %r" % (m.get("edges"), m.get("marked_segments")))
if m.get("marker_input_index") != 1 or "markers INPUT1" not in m.get("meter", "") or "to one packet" not in m.get("meter", ""): errs.append("meter %r" % m.get("meter"))
r = m.get("resolution", "")
if "power.stats_rate_hz" not in r or "100000/s" not in r or "1e-05 s" not in r: errs.append("resolution %r" % r)
epi = p.get("energy_per_inference_j")
if not isinstance(epi, float) or abs(m["sum_j"] + m["unmarked_j"] - epi) > 1e-7 * epi: errs.append("sum %r + unmarked %r vs epi %r" % (m.get("sum_j"), m.get("unmarked_j"), epi))
if abs(m.get("unmarked_j", 0) - unmarked) > 1e-6 * unmarked: errs.append("unmarked %r, by hand %r" % (m.get("unmarked_j"), unmarked))
codes = [i["code"] for i in d.get("issues", [])]
for c in ("power.layers_sum_mismatch", "power.layers_inferences_dropped", "power.layers_none", "power.layers_unresolved"):
    if c in codes: errs.append("issue %s" % c)
plan = d.get("plan", {}).get("power", {}).get("layer_markers")
if plan != {"meter": "joulescope", "gate_input_index": 0, "marker_input_index": 1}: errs.append("plan %r" % plan)
if p.get("live_capture", {}).get("lockstep") is not False: errs.append("live %r" % p.get("live_capture"))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "live Joulescope: each layer within 1e-6 of the hand model (packets as samples), edges to one packet, 3601 edges"
else bad "live Joulescope: layers"; fi

# At the default 1000 packets a second an inference (1 ms) is one packet:
# the plan marks CONV_2D only (the stub toggles INPUT1 once an inference),
# and the two layers after it are unresolved, the reason naming
# power.stats_rate_hz and the JS220's 100000/s.
js_stub1='{"pace":false,"voltage_v":3.0,"idle_a":0.001,"active_a":0.002,"first_gate_s":0.2,"gate_s":1.202,"period_s":100,
 "layers":{"lead_s":0.001,"layer_s":[0.001],"layer_a":[0.005],"inferences":1200}}'
PYTHONPATH=$src/tests/support/pyjoulescope_stub ERGON_JS_STUB=$js_stub1 \
	ERGON_JOULESCOPE_BRIDGE=$tmp/js_bridge.py "$bin" profile "$tmp/fw" "${board[@]}" "${js[@]}" \
	--out "$tmp/jsl1" >"$tmp/out.jsl1" 2>"$tmp/err.jsl1"
rc=$?
if [ $rc -eq 0 ] && python3 - "$tmp/jsl1/summary.json" <<'PY'; then
import json, sys
m = json.load(open(sys.argv[1]))["power"].get("layer_energy", {})
u = m.get("unresolved") or []
errs = []
if m.get("sample_rate_hz") != 1000 or m.get("marked_segments") != 1: errs.append("rate/segments %r %r" % (m.get("sample_rate_hz"), m.get("marked_segments")))
if [x.get("index") for x in u] != [1, 2]: errs.append("unresolved %r" % u)
for x in u:
    r = x.get("reason", "")
    if "power.stats_rate_hz 1000/s" not in r or "100000/s" not in r: errs.append("reason %r" % r)
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "Joulescope at 1000/s: the layers after CONV_2D unresolved, the reason naming power.stats_rate_hz and 100000/s"
else
	bad "Joulescope at 1000/s: exit $rc"
	cat "$tmp/err.jsl1"
fi

# --- 4. refusals, before anything is flashed ----------------------------------
: >"$tmp/jlink.calls"
"$bin" profile "$tmp/fw" "${board[@]}" --power --layer-energy --set power.driver=joulescope \
	--out "$tmp/js" >"$tmp/out.js" 2>"$tmp/err.js"
rc=$?
if [ $rc -eq 2 ] && grep -q "lock-step reads READY on INPUT1" "$tmp/err.js" &&
	grep -q "power.lockstep: false" "$tmp/err.js" && grep -q -- "--marker-input-index 1" "$tmp/err.js" &&
	! grep -q loadfile "$tmp/jlink.calls"; then
	ok "Joulescope with lock-step: refused (exit 2), INPUT1 and the fix named, nothing flashed"
else
	bad "Joulescope with lock-step: exit $rc"
	cat "$tmp/err.js"
fi
"$bin" profile "$tmp/fw" "${board[@]}" "${js[@]}" --set power.marker_input_index=2 \
	--out "$tmp/js2" >"$tmp/out.js2" 2>"$tmp/err.js2"
rc=$?
if [ $rc -eq 2 ] && grep -q "power.marker_input_index 2 with power.driver joulescope" "$tmp/err.js2" &&
	grep -q "set power.marker_input_index: 1" "$tmp/err.js2" && ! grep -q loadfile "$tmp/jlink.calls"; then
	ok "Joulescope markers off INPUT1: refused (exit 2)"
else
	bad "Joulescope markers on INPUT2: exit $rc"
	cat "$tmp/err.js2"
fi
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --set power.marker_input_index=0 \
	--power-serial /dev/null --out "$tmp/same" >"$tmp/out.same" 2>"$tmp/err.same"
rc=$?
if [ $rc -eq 2 ] && grep -q "power.marker_input_index 0 is the gate's input" "$tmp/err.same" &&
	! grep -q loadfile "$tmp/jlink.calls"; then
	ok "PPK2 markers on the gate's input: refused (exit 2)"
else
	bad "markers on the gate's input: exit $rc"
	cat "$tmp/err.same"
fi

if grep -l "Sanitizer" "$tmp"/err.* >/dev/null 2>&1; then bad "sanitizer report"; fi
[ $fails -eq 0 ] || exit 1

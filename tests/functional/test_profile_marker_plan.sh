#!/usr/bin/env bash
# The host's marker plan reaches the power image ergon builds from a model
# (issue 33): `ergon profile MODEL.tflite --board B --power --layer-energy`
# with a live PPK2 plans which layer starts get a marker edge from the PMU
# stage's per-layer cycles at the PPK2's 100 kSPS, then builds the power
# image again with that mask (-DERT_MODEL_MARKER_MASK on the model main)
# and flashes it; the layer engine folds by the plan's segments.
#
# The bench is test_profile_port_power.sh's (a port for apollo510_evb in a
# copy of ergon-target: the an547's files under a probe lifecycle, the fake
# J-Link of tests/support/live_bench/fake_jlink_bench.sh) with the PPK2
# protocol simulator of test_profile_live_layers.sh as the meter. The fake
# target does not run the ELF: it replays the virtual bench's streams. Its
# PMU stream is edited here so that the plan has a short layer to merge:
# the DEPTHWISE_CONV_2D row becomes 4,800 cycles (50 us at 96 MHz, 5
# samples at 100 kSPS; it was 24,000) and FULLY_CONNECTED 43,200 (450 us,
# 45 samples; it was 24,000), so that the inference keeps its 1 ms (the
# stream's CLEAN_INFER_AVG_US, and a gate of 200 + 1200 x 100 samples, over
# the live path's 1 s minimum window); CONV_2D stays 48,000 (50 samples).
# The plan by hand (the rule of
# ergon_layers_plan, docs/METHOD.md: a marked segment spans at least 10
# samples, a layer left out joins the marked one before it): layer 0 is
# marked; its segment (50) is long enough, so layer 1 is marked; layer 1's
# segment (5) is not, so layer 2 is left out and joins it (5 + 45 = 50 >=
# 10): mask word 0 = 0b011 = 0x00000003, segments [0], [1, 2].
#
# Checked, each against that hand plan: the build record's compile command
# and its "marker" carry -DERT_MODEL_MARKER_MASK=0x00000003,0x00000000 x 7;
# the power ELF that was flashed holds that mask in the bytes of its
# ert_model_power_cfg (arm-none-eabi-nm for the symbol's address and size,
# objdump for the bytes: marker.mask is the 32 bytes before the struct's
# last member, the 4-byte calibration_id pointer, ert_power.h); then the
# PPK2 simulator draws firmware that follows that mask (--marker-mask 3:
# edges at layers 0 and 1 only) and the layer figures come out (not
# withheld): two measured rows, CONV_2D and DEPTHWISE_CONV_2D +
# FULLY_CONNECTED, each equal to the simulator's hand model within 1e-6,
# 1200 of 1200 inferences, 2 x 1200 + 1 edges, layer 2 unresolved with the
# plan's reason. The marker's own cost (the power stage's second, unmarked
# run: the same image built with marker pin 0, flashed, a second gated
# capture into power/unmarked/; the simulator re-arms its window at that
# AverageStart, --rearm, and draws it without edges, --unmarked-from 2):
# 0 within its stated U when a toggle costs nothing; with --toggle-a 4 mA
# (each toggle's sample draws 4 mA more, marked run only) equal to the hand
# value from the simulator's currents within its stated U; a second run
# that fails (the simulated PPK2 unplugs at the second AverageStart,
# --fail-start 2) leaves measured "no" with its reason and the marked
# figures as they were. Then a FIRMWARE_DIR user whose power build marks every
# layer (the simulator without --marker-mask): every inference is dropped,
# and power.layers_mask_mismatch names the plan's 2 edges against the 3
# seen (one per layer) with the initializer {0x00000003, 0x00000000, ...};
# the terminal and stages.power.marker_plan give the initializer and the
# define to build with. Last, the port's descriptor without
# hal.gpio.marker: the power stage fails, naming the field, instead of
# flashing an image that marks nothing. Needs arm-none-eabi-gcc (fails
# without it).
for t in arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-objdump; do
	command -v $t >/dev/null || { echo "FAIL: $t is required (scripts/bootstrap.sh)"; exit 1; }
done
: "${ERGON_SHARED_DIR:?}"
. "${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}/tests/support/live_bench/live_test_head.sh"
M=$ERGON_SHARED_DIR/fixtures/models/kws_ref_model.tflite

# The short layer (see the header): the replayed PMU stream's DEPTHWISE row.
n_dw=$(grep -c '^1,DEPTHWISE_CONV_2D,250,24000,0$' "$stream")
sed -i -e 's/^1,DEPTHWISE_CONV_2D,250,24000,0$/1,DEPTHWISE_CONV_2D,50,4800,0/' \
	-e 's/^2,FULLY_CONNECTED,250,24000,0$/2,FULLY_CONNECTED,450,43200,0/' "$stream"
[ "$n_dw" -gt 0 ] && ! grep -qE '^(1,DEPTHWISE_CONV_2D|2,FULLY_CONNECTED),250,' "$stream" &&
	ok "the replayed PMU stream's $n_dw inferences now say 48000 + 4800 + 43200 cycles" ||
	bad "could not edit the PMU stream's rows ($n_dw)"

# The port for apollo510_evb (fake_jlink_bench.sh: live_bench_test_port).
live_bench_test_port test_profile_marker_plan.sh || bad "the test port"

sim_args=(--current-a 0.001 --burst-a 0.002 --fast --gate-at-start --gate-delay-s 1.0
	--layers-a 0.006,0.004,0.005 --layer-samples 50,5,45 --inferences 1200)
ppk2=(--power --layer-energy --set power.driver=ppk2 --set power.io_voltage=3.0)
MASK_DEF="-DERT_MODEL_MARKER_MASK=0x00000003$(printf ',0x00000000%.0s' 1 2 3 4 5 6 7)"
MASK_INIT="{0x00000003$(printf ', 0x00000000%.0s' 1 2 3 4 5 6 7)}"

# --- 1. ergon's own images: the power image carries the plan's mask --------
# The power stage then runs the unmarked image too (the marker's cost): the
# simulator re-arms its window at that second AverageStart and draws it
# without marker edges; toggles cost nothing here (no --toggle-a), so the
# cost is 0 within its uncertainty.
start_sim "${sim_args[@]}" --marker-mask 3 --rearm --unmarked-from 2
"$bin" profile "$M" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/mp" \
	>"$tmp/out.mp" 2>"$tmp/err.mp"
rc=$?
stop_sim
# Exit 1 for one reason only: the replayed PMU stream (the virtual bench's)
# has no HPX_MODEL_OUTPUT, so the model's correctness check cannot pass
# (profile.model_output_missing); the power stage itself must be ok.
if [ $rc -eq 1 ] && python3 - "$tmp/mp/summary.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
errs = [i["code"] for i in d["issues"] if i["severity"] == "error"]
assert errs == ["profile.model_output_missing"], errs
assert d["stages"]["power"]["status"] == "ok", d["stages"]["power"]
PY
	ok "profile MODEL --layer-energy ran; the power stage ok (exit 1: only the replayed stream's missing model output)"
else
	bad "profile MODEL --layer-energy: exit $rc"
	cat "$tmp/err.mp"
fi
fw=$tmp/mp/firmware
elf=$fw/ergon_testboard_power.elf
grep -q "CMD loadfile $elf" "$tmp/jlink.calls" && ok "the power build was flashed" ||
	bad "power build not flashed: $(grep loadfile "$tmp/jlink.calls")"
python3 - "$fw/build-power.json" "$tmp/mp/summary.json" "$MASK_DEF" "$MASK_INIT" <<'PY' &&
import json, sys
b = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
define, init = sys.argv[3], sys.argv[4]
units = [u for u in b["compile"]["units"] if u.get("defines")]
assert len(units) == 1 and define in units[0]["defines"], units
assert "-DERT_PORT_MARKER_PIN=2u" in units[0]["defines"], units
mk = b["marker"]
assert mk["mask"] == ["0x00000003"] + ["0x00000000"] * 7, mk
assert mk["define"] == define and mk["initializer"] == init and mk["pin"] == 2, mk
assert "marker plan" in mk["from"] and "100000" in mk["from"], mk["from"]
mp = s["stages"]["power"]["marker_plan"]
assert mp["mask"] == mk["mask"] and mp["segments"] == 2 and mp["first_layers"] == [0, 1], mp
assert mp["left_out"] == [2] and mp["rate_hz"] == 100000, mp
assert mp["power_image"]["carries"] == "this plan's mask", mp
assert mp["power_image"]["elf_sha256"] == b["elf_sha256"], mp
pb = [x for x in s["model"]["builds"] if x["kind"] == "power"]
assert len(pb) == 1 and pb[0]["marker"]["mask"] == mk["mask"], pb
assert s["stages"]["power"]["image"] == b["elf"], s["stages"]["power"]["image"]
PY
	ok "build record, compile command, summary: the plan's mask 0x00000003, from the plan at 100 kSPS" ||
	bad "the mask in the records"
# The ELF's own bytes: marker.mask of ert_model_power_cfg.
read -r addr size < <(arm-none-eabi-nm -S "$elf" | awk '$4 == "ert_model_power_cfg" {print $1, $2}')
if [ -n "${addr:-}" ]; then
	a=$((16#$addr + 16#$size - 36))
	words=$(arm-none-eabi-objdump -s --start-address=$a --stop-address=$((a + 32)) "$elf" |
		awk '/^Contents of section/ {sec++} sec == 1 && /^ [0-9a-f]+ / {
			for (i = 2; i <= 5; i++) if (length($i) == 8) print $i}' |
		head -8 | tr '\n' ' ')
	[ "$words" = "03000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 " ] &&
		ok "the flashed ELF's ert_model_power_cfg.marker.mask is 3, 0 x 7 (little-endian words)" ||
		bad "the ELF's mask words: '$words'"
else bad "no ert_model_power_cfg in $elf"; fi

cat >"$tmp/hand.py" <<'PY'
# The PPK2's current as the driver decodes it (tests/support/live_bench/
# ppk2_hand.py).
import os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import decoded as q
V, rate, n = 3.0, 1e5, 1200
I = [q(0.006), q(0.004), q(0.005)]
# Each edge sits mid-way through the sample before the first one showing the
# new level: a segment gains half of the last sample before it and loses
# half of its own last sample. Segment 0 (layer 0, 50 samples) follows the
# 2 mA lead-in in the first inference, FULLY_CONNECTED after; segment 1 is
# DEPTHWISE (5 samples) then FULLY_CONNECTED (45), no edge between them, so
# it loses half a FULLY_CONNECTED sample, not a DEPTHWISE one.
prev0 = (q(0.002) + (n - 1) * I[2]) / n
hand = [V / rate * (49.5 * I[0] + 0.5 * prev0),
        V / rate * (0.5 * I[0] + 5 * I[1] + 44.5 * I[2])]
PY
python3 - "$tmp/mp/summary.json" "$tmp/hand.py" <<'PY' &&
import json, sys
exec(open(sys.argv[2]).read())
d = json.load(open(sys.argv[1]))
p = d["power"]
L, m = p.get("layers"), p.get("layer_energy", {})
assert L and [(e["index"], e["last_index"], e["op"]) for e in L] == [
    (0, 0, "CONV_2D"), (1, 2, "DEPTHWISE_CONV_2D + FULLY_CONNECTED")], L
for j, e in enumerate(L):
    assert abs(e["energy_j"] - hand[j]) <= 1e-6 * hand[j], (j, e["energy_j"], hand[j])
    assert e["kind"] == "measured" and e["inferences_used"] == n, e
assert m["inferences"] == {"expected": 1200, "used": 1200, "dropped": 0, "lost": 0}, m["inferences"]
assert m["edges"] == 2 * n + 1 and m["marked_segments"] == 2, (m["edges"], m["marked_segments"])
un = m["unresolved"]
assert [u["index"] for u in un] == [2] and un[0]["measured_with"] == 1, un
assert "not marked" in un[0]["reason"] and "100000 Hz" in un[0]["reason"], un
assert m["marker_plan"]["power_image"].startswith("carries this mask"), m["marker_plan"]
assert "rate_note" not in m, m.get("rate_note")
codes = [i["code"] for i in d.get("issues", [])]
for c in ("power.layers_inferences_dropped", "power.layers_none", "power.layers_mask_mismatch"):
    assert c not in codes, codes
PY
	ok "layer figures out (1200/1200, 2401 edges): CONV_2D and DEPTHWISE+FC within 1e-6 of the hand model, layer 2 unresolved with the plan's reason" ||
	bad "layer figures against the hand model"

python3 - "$tmp/mp/summary.json" "$fw" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
mc = d["power"]["layer_energy"]["marker_cost"]
assert mc["measured"] == "yes", mc
assert abs(mc["cost_j"]) <= mc["cost_U_j"] and mc["cost_U_j"] > 0, mc
assert [r["run"] for r in mc["runs"]] == ["marked", "unmarked"], mc["runs"]
u = mc["runs"][1]
assert u["image"] == sys.argv[2] + "/unmarked/ergon_testboard_power.elf", u["image"]
b = json.load(open(sys.argv[2] + "/unmarked/build-power.json"))
assert b["marker"]["pin"] == 0 and b["marker"]["mask"] == ["0x00000003"] + ["0x00000000"] * 7, b["marker"]
units = [x for x in b["compile"]["units"] if x.get("defines")]
assert len(units) == 1 and "-DERT_PORT_MARKER_PIN=0u" in units[0]["defines"], units
assert u["elf_sha256"] == b["elf_sha256"], u
PY
	ok "marker cost, toggles free: measured, 0 within its uncertainty; the unmarked image has pin 0 and the same mask" ||
	bad "marker cost (toggles free)"
grep -q "CMD loadfile $fw/unmarked/ergon_testboard_power.elf" "$tmp/jlink.calls" &&
	[ -s "$tmp/mp/power/unmarked/capture.log" ] &&
	ok "the unmarked image was flashed after the marked one; power/unmarked/capture.log written" ||
	bad "unmarked image not flashed: $(grep loadfile "$tmp/jlink.calls")"
grep -q "marker cost: .* a toggle" "$tmp/out.mp" && ok "the terminal gives the marker's cost" ||
	bad "no marker cost line on the terminal"

# --- 1b. the marker's cost: each toggle draws 4 mA more for its sample -----
# Layers of 2, 1 and 1.5 mA here, so that every sample, a toggle's
# included (at most 6 mA), stays on the PPK2's range 1 (up to ~7 mA): no
# range switch, whose spike filter would smear the toggle samples. Hand
# value: the marked window has N x 2 + 1 toggles (layers 0 and 1 of each
# inference, one after the last), each one sample (10 us) at I + 4 mA
# instead of I (2 mA at layer 0's start, 1 mA at layer 1's, the 2 mA tail
# after the last inference), as the PPK2 decodes each (ppk2_hand.py); the
# unmarked window is the same without them. Cost per inference =
# V / rate x (N (q(2+4) - q(2) + q(1+4) - q(1)) + q(2+4) - q(2)) / N.
start_sim --current-a 0.001 --burst-a 0.002 --fast --gate-at-start --gate-delay-s 1.0 \
	--layers-a 0.002,0.001,0.0015 --layer-samples 50,5,45 --inferences 1200 \
	--marker-mask 3 --rearm --unmarked-from 2 --toggle-a 0.004
"$bin" profile "$M" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/mc" \
	>"$tmp/out.mc" 2>"$tmp/err.mc"
stop_sim
python3 - "$tmp/mc/summary.json" "$tmp/hand.py" <<'PY' &&
import json, sys
exec(open(sys.argv[2]).read())
x = 0.004
cost = V / rate * (n * (q(0.002 + x) - q(0.002) + q(0.001 + x) - q(0.001))
                   + q(0.002 + x) - q(0.002)) / n
d = json.load(open(sys.argv[1]))
mc = d["power"]["layer_energy"]["marker_cost"]
assert mc["measured"] == "yes", mc
assert abs(mc["cost_j"] - cost) <= mc["cost_U_j"], (mc["cost_j"], cost, mc["cost_U_j"])
assert mc["cost_U_j"] < cost / 2, (mc["cost_U_j"], cost)
assert abs(mc["cost_j"] - (mc["marked_epi_j"] - mc["unmarked_epi_j"])) <= 1e-12, mc
tpi = (2 * n + 1) / n
assert abs(mc["per_toggle_j"] - mc["cost_j"] / tpi) <= 1e-9 * abs(mc["cost_j"]), mc
assert mc["runs"][1]["issues"] == [] or all(i["severity"] != "error" for i in mc["runs"][1]["issues"]), mc["runs"][1]
import sys as _s; _s.stderr.write("cost %.6g J (hand %.6g J) +- %.3g J, %.6g J a toggle" % (mc["cost_j"], cost, mc["cost_U_j"], mc["per_toggle_j"]) + "\n")
PY
	ok "marker cost with 4 mA a toggle: within its stated uncertainty of the hand value" ||
	{ bad "marker cost against the hand value"; tail -5 "$tmp/err.mc"; }

# --- 1c. the unmarked run fails: measured "no" with the reason -------------
start_sim "${sim_args[@]}" --marker-mask 3 --rearm --unmarked-from 2 --fail-start 2
"$bin" profile "$M" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/mf" \
	>"$tmp/out.mf" 2>"$tmp/err.mf"
stop_sim
python3 - "$tmp/mf/summary.json" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
mc = d["power"]["layer_energy"]["marker_cost"]
assert mc["measured"] == "no" and "unmarked run failed" in mc["why"], mc
for k in ("cost_j", "cost_U_j", "per_toggle_j", "unmarked_epi_j"):
    assert k not in mc, (k, mc)
assert d["stages"]["power"]["status"] == "ok", d["stages"]["power"]
assert len(d["power"]["layers"]) == 2, d["power"]["layers"]
PY
	ok "the unmarked run unplugged: marker_cost measured no with its reason, the marked figures kept" ||
	{ bad "a failing unmarked run"; tail -5 "$tmp/err.mf"; }

# --- 2. a FIRMWARE_DIR user whose power build marks every layer -----------
: >"$tmp/jlink.calls"
start_sim "${sim_args[@]}"
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/ud" \
	>"$tmp/out.ud" 2>"$tmp/err.ud"
rc=$?
stop_sim
echo "exit $rc" >>"$tmp/out.ud"
python3 - "$tmp/ud/summary.json" "$MASK_DEF" "$MASK_INIT" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
define, init = sys.argv[2], sys.argv[3]
mp = d["stages"]["power"]["marker_plan"]
assert mp["define"] == define and mp["initializer"] == init, mp
assert mp["power_image"]["built_by"] == "the user (FIRMWARE_DIR)", mp
m = d["power"]["layer_energy"]
assert m["inferences"]["used"] == 0 and m["inferences"]["dropped"] >= 1199, m["inferences"]
iss = [i for i in d["issues"] if i["code"] == "power.layers_mask_mismatch"]
assert len(iss) == 1, [i["code"] for i in d["issues"]]
msg, ctx = iss[0]["message"], iss[0]["context"]
assert ctx["segments_expected"] == 2 and ctx["first_dropped_edges"] == 3, ctx
assert ctx["expected_initializer"] == init and ctx["expected_define"] == define, ctx
assert "marks every layer" in msg and init in msg, msg
mc = m["marker_cost"]
assert mc["measured"] == "no" and "FIRMWARE_DIR" in mc["why"] and "-DERT_PORT_MARKER_PIN=0u" in mc["why"], mc
PY
	ok "FIRMWARE_DIR marking every layer: all inferences dropped, power.layers_mask_mismatch names 2 expected vs 3 seen and the initializer" ||
	{ bad "FIRMWARE_DIR mismatch"; tail -5 "$tmp/err.ud"; }
grep -qF "ert_power_config.marker.mask = $MASK_INIT" "$tmp/err.ud" && grep -qF -- "$MASK_DEF" "$tmp/err.ud" &&
	ok "the terminal gives a FIRMWARE_DIR user the initializer and the define" ||
	bad "no marker plan note on the terminal: $(grep -i marker "$tmp/err.ud" | head -3)"

# --- 3. a port without a marker line: refused, not a run of dropped edges ---
python3 - "$tmp/target/port/testboard/port.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["hal"]["gpio"]["marker"]
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
start_sim "${sim_args[@]}" --marker-mask 3
"$bin" profile "$M" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/nm" \
	>"$tmp/out.nm" 2>"$tmp/err.nm"
rc=$?
stop_sim
python3 - "$tmp/nm/summary.json" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
st = d["stages"]["power"]
assert st["status"] == "failed", st["status"]
assert "no layer-marker line" in st["error"] and "hal.gpio.marker" in st["error"], st["error"]
PY
	ok "a port without hal.gpio.marker: the power stage fails naming the descriptor's field (exit $rc)" ||
	bad "no-marker port: $(grep -i marker "$tmp/err.nm" | head -2)"

echo "$fails failure(s)"
[ $fails -eq 0 ]

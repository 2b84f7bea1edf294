#!/usr/bin/env bash
# Scripts written against heliaPROFILER's summary.json power section read
# ergon's without renaming (issue 17, "done when"). The key paths below are
# the method's documented ones, not ergon's: heliaPROFILER's power
# documentation ("Verifying a capture": the example `power` section,
# gated_window_duration_ratio, gated_vs_whole_current_ok,
# power.sync.ready_observed, gated_window_duration_suspect,
# power.terminal.elapsed_us, power.window_clock_ceiling and its five
# fields, device_clean_*) and its hardware-validation checklist
# (measurement_scope gpio_gated_clean_window, power_firmware dedicated,
# power.terminal status/error_code/final_phase/gate_asserted/gate_lowered,
# power.power_plan.inference_count == terminal requested_count ==
# completed_count, power.gate_duration_integrity.valid). A script of the
# method's shape reads them with plain dict indexing: a missing or renamed
# key is a KeyError, which fails this test.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is needed to read summary.json as the method's scripts do"
	exit 77 # ctest SKIP_RETURN_CODE (cmake/ErgonTests.cmake): reported as skipped
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# External mode, fixed window of 2000 inferences (the host chooses N, as
# the method's power plan does), lock-step on the bench's pins.
"$bin" profile --board sim --sim-scenario baseline_power --set profiling.window_mode=fixed \
	--set profiling.iterations=2000 --out "$tmp/ext" >"$tmp/ext.out" 2>&1 ||
	{ echo "FAIL - external run: exit $?"; cat "$tmp/ext.out"; exit 1; }
# Internal mode (the on-board INA228): window_clock_ceiling on every run.
"$bin" profile --board sim --sim-scenario baseline_ina228 --out "$tmp/int" >"$tmp/int.out" 2>&1 ||
	{ echo "FAIL - internal run: exit $?"; cat "$tmp/int.out"; exit 1; }
python3 - "$tmp/ext/summary.json" "$tmp/int/summary.json" <<'PY' || fails=$((fails + 1))
import json, math, sys

ext = json.load(open(sys.argv[1]))["power"]
internal = json.load(open(sys.argv[2]))["power"]
bad = []

def check(what, cond):
    print(("ok   - " if cond else "FAIL - ") + what)
    if not cond:
        bad.append(what)

def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

try:
    # The documented example section, key by key.
    check("measurement_scope is gpio_gated_clean_window",
          ext["measurement_scope"] == "gpio_gated_clean_window")
    for k in ("avg_current_a", "avg_power_w", "median_current_a", "p95_current_a",
              "p99_current_a", "energy_per_inference_j", "inferences_per_joule",
              "gated_window_duration_ratio", "peak_current_a", "energy_j", "charge_c",
              "gated_window_expected_duration_s"):
        check("%s is a finite number" % k, finite(ext[k]))
    check("gated_window_count is 1", ext["gated_window_count"] == 1)
    check("gated_vs_whole_current_ok is true", ext["gated_vs_whole_current_ok"] is True)
    check("power_firmware is dedicated", ext["power_firmware"] == "dedicated")
    check("gated_window_duration_suspect is false", ext["gated_window_duration_suspect"] is False)
    check("gated_window_reference_drift is present", "gated_window_reference_drift" in ext)
    check("power.sync.ready_observed is true (lock-step)", ext["sync"]["ready_observed"] is True)
    # The bench's truth (sim/src/board.c): 5 mA x 1.8 V x 1 ms = 9 uJ.
    check("energy_per_inference_j within 1 % of 9 uJ",
          abs(ext["energy_per_inference_j"] - 9e-6) < 0.01 * 9e-6)
    t = ext["terminal"]
    check("terminal.status ok", t["status"] == "ok")
    check("terminal.error_code 0", t["error_code"] == 0)
    check("terminal.final_phase complete", t["final_phase"] == "complete")
    check("terminal.gate_asserted and gate_lowered",
          t["gate_asserted"] is True and t["gate_lowered"] is True)
    check("terminal.elapsed_us is an integer", isinstance(t["elapsed_us"], int))
    n = ext["power_plan"]["inference_count"]
    check("power_plan.inference_count 2000 == terminal requested == completed",
          n == 2000 and t["requested_count"] == n and t["completed_count"] == n)
    check("gate_duration_integrity.valid", ext["gate_duration_integrity"]["valid"] is True)
    for k in ("device_clean_ref_cycles", "device_clean_dwt_rate_cyc", "device_clean_dwt_rate_us"):
        check("%s present" % k, k in ext)
    # The bench's profile boot: reference 96000 cycles, probe 1000 us at 96 MHz.
    check("device_clean_ref_cycles 96000", ext["device_clean_ref_cycles"] == 96000)
    check("device_clean_dwt_rate_us 1000", ext["device_clean_dwt_rate_us"] == 1000)
    # window_clock_ceiling's five fields, on the internal run.
    c = internal["window_clock_ceiling"]
    for k in ("elapsed_us", "elapsed_s", "host_envelope_s", "slack_s", "ratio"):
        check("window_clock_ceiling.%s is a number" % k, finite(c[k]))
    check("window_clock_ceiling.ratio = elapsed_s / host_envelope_s",
          abs(c["ratio"] - c["elapsed_s"] / c["host_envelope_s"]) < 1e-6 * max(1.0, c["ratio"]))
except KeyError as e:
    check("key %s exists under the method's name" % e, False)
sys.exit(1 if bad else 0)
PY
[ "$fails" -eq 0 ] || { echo "a key path of the method's power section is missing or differs"; exit 1; }
echo "all passed"

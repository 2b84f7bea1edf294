#!/usr/bin/env bash
# power.duration_s acts on the virtual bench (issue 37: it had no effect,
# because the bench's board runs faster than real time and the host's
# timeouts never fire). The capture keeps what a real one of duration_s
# would, on the bench's clock. By hand, for the bench's 5 s auto window
# (window_target_ms 5000) after a 5 ms warm-up, and its simulated
# Joulescope's 10,000 statistics packets a second:
#  - duration 1 s: 10,000 packets kept, the window still open when the
#    capture ends: gate_failure no_gate_fall, per-inference withheld (exit 4);
#  - duration 30 s: every packet kept, the figures published (exit 0);
#  - internal mode (the INA228's record at about 5 s) with duration 1 s: the
#    record arrives after the capture: the power stage fails (exit 1) and
#    says to raise power.duration_s.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
summary() { python3 -c "import json,sys; d=json.load(open('$1/summary.json')); print(eval(sys.argv[1]))" "$2"; }

expect 4 "duration 1 s: the window outlives the capture" -- "$E" profile --board sim --power \
  --set power.duration_s=1 --out "$TMP/d1"
[ "$(summary "$TMP/d1" "d['stages']['power']['bench_capture']['packets_kept']")" = 10000 ] &&
  ok "10,000 packets (1 s at 10 kHz) kept" || bad "packets kept: $(summary "$TMP/d1" "d['stages']['power'].get('bench_capture')")"
[ "$(summary "$TMP/d1" "d['power']['gate_failure']")" = no_gate_fall ] && ok "gate_failure no_gate_fall" ||
  bad "gate_failure: $(summary "$TMP/d1" "d['power'].get('gate_failure')")"
[ "$(summary "$TMP/d1" "d['power']['energy_per_inference_j']")" = None ] && ok "no energy per inference" ||
  bad "a per-inference figure from a cut capture"

expect 0 "duration 30 s: the whole window" -- "$E" profile --board sim --power \
  --set power.duration_s=30 --out "$TMP/d30"
[ "$(summary "$TMP/d30" "d['stages']['power']['bench_capture']['packets_after_duration']")" = 0 ] &&
  ok "nothing cut" || bad "packets cut at 30 s"
python3 - "$TMP/d30/summary.json" <<'PY' && ok "9 uJ per inference (5 mA x 1.8 V x 1 ms)" || bad "energy per inference"
import json, sys
p = json.load(open(sys.argv[1]))["power"]
e = p["energy_per_inference_j"]
sys.exit(0 if e is not None and abs(e - 0.005 * 1.8 * 1e-3) <= p["energy_per_inference_uncertainty_j"] else 1)
PY

expect 1 "internal mode, duration 1 s: the record comes too late" -- "$E" profile --board sim --power \
  --set power.mode=internal --set power.ina228.board=adafruit-ina228 --set power.duration_s=1 --out "$TMP/i1"
contains "$OUT$ERR" "after power.duration_s 1.000 s" "the failure names power.duration_s"
contains "$OUT$ERR" "raise power.duration_s" "and the fix"
finish

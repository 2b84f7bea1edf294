#!/usr/bin/env bash
# `ergon run` through instrument bridges (docs/BRIDGE.md): the fake bridge
# (tests/support/bridge_fake.py) and the Joulescope bridge on the stub
# pyjoulescope_driver. Expected powers are computed by hand from the
# simulated waveforms; faults are the issue's bridge faults through the CLI.
# Needs python3 (scripts/bootstrap.sh installs it): without it every case
# fails, none is skipped.
. "$(dirname "$0")/run_lib.sh"
SRC=${ERGON_SOURCE_DIR:?}
FAKE="python3 $SRC/tests/support/bridge_fake.py --realtime"
export PYTHONPATH=$SRC/tests/support/pyjoulescope_stub
export ERGON_JS_STUB_LOG=$TMP/stub.log
RUN=(--idle-s 0.4 --windows 2 --window-s 0.4 --sample-hz 200 --workload builtin:spin)

# check FILE PYTHON-EXPRESSION WHAT: r is the report.
check() {
  if python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then
    ok "$3"
  else
    bad "$3"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r.get('figures',{}).get(k) for k in ('idle','load')}), r.get('status'), [i['code'] for i in r['issues']])" "$1"
  fi
}

# 1. The Joulescope stub at a constant 5 mA x 3.3 V = 16.5 mW (no gate).
export ERGON_JS_STUB='{"first_gate_s": 1000}'
expect 0 "run --instrument joulescope (stub)" -- "$ERGON_BIN" run --device stub --instrument joulescope \
  --instrument-opt accuracy_pct=0.3 "${RUN[@]}" --out "$TMP/js.json"
check "$TMP/js.json" 'r["provenance"]["kind"] == "synthetic"' "the stub's run is synthetic, never measured"
check "$TMP/js.json" 'r["instrument"]["model"] == "JS220" and "never run on a real JS220" in r["instrument"]["notes"]' \
  "identity names what the driver was validated against"
for ph in idle load; do
  check "$TMP/js.json" "abs(r['figures']['$ph']['mean_power_w'] - 0.0165) <= r['figures']['$ph']['mean_power_u_w']" \
    "$ph power within its uncertainty of 16.5 mW"
  check "$TMP/js.json" "r['figures']['$ph']['energy_method'] == 'accumulator_delta'" "$ph energy from the on-instrument accumulator"
done
# Saturated: energy per op = mean power x mean latency; the power is the hand figure.
check "$TMP/js.json" 'abs(r["figures"]["energy_per_op"]["total_j"] - 0.0165 * r["figures"]["latency"]["mean_s"]) <= r["figures"]["energy_per_op"]["total_u_j"]' \
  "energy per op within its uncertainty of 16.5 mW x latency"
grep -q '"u/js220/000415/s/stats/ctrl", "value": 1' "$ERGON_JS_STUB_LOG" && ok "statistics switched on through the vendor topic" \
  || bad "no s/stats/ctrl 1 in the stub log"

# 2. The fake bridge: 10 mA / 20 mA square wave of period T = 0.2 s at
# 3.3 V, i.e. 49.5 mW +- 16.5 mW. A span of d = nT + e averages 49.5 mW to
# within 16.5 mW x min(e, T - e) / d (the part of a period it holds beyond
# whole periods), plus one 1 ms packet at each end; phases end on an
# invocation boundary, so d is not a whole number of periods.
expect 0 "run --instrument bridge:ARGV (fake)" -- "$ERGON_BIN" run --device fake --instrument "bridge:$FAKE" \
  "${RUN[@]}" --out "$TMP/fake.json"
for ph in idle load; do
  check "$TMP/fake.json" "(lambda f: abs(f['mean_power_w'] - 0.0495) <= f['mean_power_u_w'] + 0.0165 * (min(f['duration_s'] % 0.2, 0.2 - f['duration_s'] % 0.2) + 0.002) / f['duration_s'])(r['figures']['$ph'])" \
    "fake $ph power within its uncertainty of 49.5 mW"
done
check "$TMP/fake.json" 'r["instrument"]["accuracy_pct"] == 0.5' "accuracy from the bridge's hello"

# 3. Faults: each stops the run with the cause; what was measured is kept.
fault() { # fault NAME WANT-IN-MESSAGE bridge-args...
  local name=$1 want=$2
  shift 2
  expect 1 "fault $name: exit 1, report written" -- "$ERGON_BIN" run --device fake \
    --instrument "bridge:$FAKE $*" "${RUN[@]}" --out "$TMP/$name.json"
  check "$TMP/$name.json" 'r["status"] == "instrument_failed"' "fault $name: status instrument_failed"
  check "$TMP/$name.json" "any(i['code'] == 'run.instrument_read_failed' and '''$want''' in i['message'] for i in r['issues'])" \
    "fault $name: the issue says '$want'"
  check "$TMP/$name.json" 'any(i["code"] == "run.incomplete" for i in r["issues"])' "fault $name: marked incomplete"
  check "$TMP/$name.json" 'len(r["series"]["samples"]["t_s"]) >= 200' "fault $name: the samples before it are kept"
}
fault garbage "not a JSON object" --garbage-after 300
fault nan "NaN or Infinity is refused" --nan-after 300
fault stall "stalled: no line for" --stall-after 300 --heartbeat 0.3
fault exit "mid-run (exited with status 3)" --exit-after 300 --status 3
check "$TMP/garbage.json" "any('stdout byte' in i['message'] for i in r['issues'])" "garbage: the byte offset is named"

# Unplugged mid-run (Joulescope stub): kept, marked, the cause named.
export ERGON_JS_STUB='{"first_gate_s": 1000, "unplug_after_s": 0.6}'
expect 1 "joulescope unplugged mid-run" -- "$ERGON_BIN" run --device stub --instrument joulescope \
  "${RUN[@]}" --out "$TMP/unplug.json"
check "$TMP/unplug.json" "any('was unplugged' in i['message'] for i in r['issues'])" "unplug: named in the issues"
check "$TMP/unplug.json" 'len(r["series"]["samples"]["t_s"]) >= 300' "unplug: the samples before it are kept"

# A non-zero exit at the end: a warning with the status, figures kept.
expect 0 "bridge exiting 4 at quit" -- "$ERGON_BIN" run --device fake --instrument "bridge:$FAKE --quit-status 4" \
  "${RUN[@]}" --out "$TMP/quit.json"
check "$TMP/quit.json" "any(i['code'] == 'instrument.bridge_exit_status' and 'exited with status 4' in i['message'] for i in r['issues'])" \
  "exit status 4 at quit reported"

# 4. Refusals before measuring.
expect 2 "bridge: without a command" -- "$ERGON_BIN" run --device d --instrument bridge: "${RUN[@]}" --out "$TMP/u1.json"
contains "$ERR" "docs/BRIDGE.md" "names the protocol document"
export ERGON_JS_STUB='{"devices": ["u/js220/000415", "u/js220/002557"]}'
expect 3 "two Joulescopes, no serial" -- "$ERGON_BIN" run --device d --instrument joulescope "${RUN[@]}" --out "$TMP/u2.json"
contains "$ERR" "u/js220/000415 (serial 000415), u/js220/002557 (serial 002557)" "the error lists both"
expect 3 "pyjoulescope_driver missing" -- env PYTHONPATH=/nonexistent "$ERGON_BIN" run --device d --instrument joulescope \
  "${RUN[@]}" --out "$TMP/u3.json"
contains "$ERR" "pip install pyjoulescope_driver" "says how to install it"
expect 2 "unknown bridge option" -- "$ERGON_BIN" run --device d --instrument "bridge:$FAKE" --instrument-opt colour=red \
  "${RUN[@]}" --out "$TMP/u4.json"
contains "$ERR" "knows only hello_timeout_s" "lists the bridge's options"
finish

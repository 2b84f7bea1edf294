#!/usr/bin/env bash
# One consistent CLI (issue 13): each rule checked on every subcommand where
# it applies. The expected messages are the documented forms
# (docs/internals/cli.md), not copies of the program's output.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SYN=(--instrument synthetic --instrument-opt noise_w=0 --workload builtin:periodic,burst_ms=0,sleep_ms=2)

# 1. Unknown options: "unknown option '--x'" (exit 2) in every subcommand,
#    and a one-letter typo of one of its own options names that option.
for c in $("$E" __complete commands); do
  pre=()
  case $c in config) pre=(show);; counters) pre=(list);; kernels) pre=(run);; ina228) pre=(plan);; model) pre=(infer);; esac
  expect 2 "$c: --bogus-opt is a usage error" -- "$E" "$c" "${pre[@]}" --bogus-opt
  contains "$ERR" "unknown option '--bogus-opt'" "$c: says 'unknown option'"
  # A real option of the command (from its --help) with its last letter dropped.
  opt=$("$E" __complete options "$c" | grep -v -e '^--help$' -e '^--json$' | awk 'length($0) > 6' | head -1)
  if [ -n "$opt" ]; then
    typo=${opt%?}
    "$E" "$c" "${pre[@]}" "$typo" >/dev/null 2>"$TMP/err"
    e=$(head -1 "$TMP/err")
    case "$e" in *"did you mean '--"*) ok "$c: $typo -> a suggestion (${e#*did you mean })";;
      *) bad "$c: no suggestion for $typo: $e";; esac
  fi
done
expect 2 "verify --bogus is an unknown option, not a file (was exit 3)" -- "$E" verify --bogus
expect 2 "analyze --bogus is an unknown option, not 'needs a value'" -- "$E" analyze --bogus
contains "$ERR" "unknown option '--bogus'" "analyze names the option"
expect 2 "run --idel-s suggests --idle-s" -- "$E" run --idel-s 1
contains "$ERR" "did you mean '--idle-s'?" "run suggestion"
expect 2 "a flag given a value" -- "$E" analyze --force=yes --out x
contains "$ERR" "option '--force' takes no value" "flag with =value"
expect 2 "an option at the end without its value" -- "$E" run --device
contains "$ERR" "option '--device' needs a value" "names the option that needs a value"

# 2. Mistyped names suggest the nearest.
expect 2 "mistyped board" -- "$E" config show --board apolo510_evb
contains "$ERR" "did you mean 'apollo510_evb'?" "board suggestion"
expect 2 "mistyped scenario" -- "$E" profile --board sim --sim-scenario gate_nevr_falls --out "$TMP/p0"
contains "$ERR" "did you mean 'gate_never_falls'?" "scenario suggestion"
expect 2 "mistyped instrument" -- "$E" run --device d --instrument synthtic --workload builtin:spin --out "$TMP/r0.json"
contains "$ERR" "did you mean 'synthetic'?" "instrument suggestion"
expect 2 "mistyped builtin workload" -- "$E" run --device d --workload builtin:spn --out "$TMP/r0.json"
contains "$ERR" "did you mean 'builtin:spin'?" "workload suggestion"
expect 2 "mistyped workload kind" -- "$E" run --device d --workload comand:true --out "$TMP/r0.json"
contains "$ERR" "did you mean 'command:'?" "workload kind suggestion"
expect 2 "mistyped choice value" -- "$E" run --device d --workload builtin:spin --out "$TMP/r0.json" --sampler inlin
contains "$ERR" "did you mean 'inline'?" "choice suggestion"
expect 2 "mistyped command" -- "$E" prfile --board sim
contains "$ERR" "did you mean 'profile'?" "command suggestion"
expect 2 "mistyped action" -- "$E" counters plna
contains "$ERR" "unknown action 'plna'; did you mean 'plan'?" "action suggestion"

# 3. A missing required option is named.
expect 2 "run without --out" -- "$E" run --device d --workload builtin:spin
contains "$ERR" "missing required option --out" "names --out"
expect 2 "run without --device" -- "$E" run --workload builtin:spin --out "$TMP/x.json"
contains "$ERR" "missing required option --device" "names --device"
expect 2 "analyze without --out" -- "$E" analyze --jls x.jls
contains "$ERR" "missing required option --out" "analyze names --out"
expect 2 "capture without --transport" -- "$E" capture
contains "$ERR" "missing required option --transport" "capture names --transport"
expect 2 "verify without a file" -- "$E" verify
contains "$ERR" "missing required argument REPORT.json" "verify names its argument"

# 4. One numeric rule per option, one message form.
expect 2 "--idle-s 0" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --idle-s 0
contains "$ERR" "--idle-s '0': must be a number in (0, 1e+06]" "idle-s rule"
expect 2 "--window-s -5" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --window-s -5
contains "$ERR" "--window-s '-5': must be a number in (0, 1e+06]" "window-s: the same rule and form"
# An underflow (1e-400: strtod gives 0; 1e-310: a denormal; both under
# DBL_MIN = 2.2250738585072014e-308) is refused with the range, even where
# 0 is in it (--trim-s), not read as 0; an exact 0e-500 is 0.
expect 2 "--trim-s 1e-400" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --trim-s 1e-400
contains "$ERR" "--trim-s '1e-400': must be a number in [0, 1e+06]; it underflows (a magnitude under 2.2250738585072014e-308" "trim-s underflow refused with the range"
expect 2 "--sample-hz 1e-310" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --sample-hz 1e-310
contains "$ERR" "--sample-hz '1e-310': must be a number in (0, 1e+06]; it underflows" "sample-hz denormal refused"
expect 2 "--window-s -1e-400" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --window-s -1e-400
contains "$ERR" "--window-s '-1e-400': must be a number in (0, 1e+06]; it underflows" "window-s underflow refused"
expect 2 "--instrument-opt noise_w=1e-400" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --instrument synthetic --instrument-opt noise_w=1e-400
contains "$ERR" "--instrument-opt noise_w: '1e-400' underflows: its magnitude is under 2.2250738585072014e-308" "instrument-opt: the shared parser refuses the underflow"
expect 0 "--trim-s 0e-500 --dry-run" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --trim-s 0e-500 --dry-run
expect 2 "--windows 1.5" -- "$E" run --device d --workload builtin:spin --out "$TMP/x.json" --windows 1.5
contains "$ERR" "--windows '1.5': must be an integer in [1, 100000]" "integer rule"
expect 2 "--min-window-s abc" -- "$E" analyze --out "$TMP/a" --jls x --min-window-s abc
contains "$ERR" "--min-window-s 'abc': must be a number" "analyze uses the same form"
expect 2 "ina228 --shunt-ohms 0" -- "$E" ina228 plan --shunt-ohms 0 --max-current-a 1
contains "$ERR" "--shunt-ohms '0': must be a number > 0" "ina228 uses the same form"

# 5. --json: the machine-readable summary is all of stdout; human text is not.
expect 0 "run --json" -- "$E" run --device d "${SYN[@]}" --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/r.json" --json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["integrity"] and d["report_id"].startswith("sha256:") and d["provenance"]["kind"] == "synthetic"' &&
  ok "run --json: stdout is one JSON object" || bad "run --json stdout: $OUT"
expect 0 "run (human)" -- "$E" run --device d "${SYN[@]}" --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/r2.json"
case "$OUT" in "{"*) bad "human run output is JSON";; *) ok "without --json the summary is text";; esac
expect 0 "verify --json" -- "$E" verify --json "$TMP/r.json"
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] is True and d["report_id"].startswith("sha256:")' &&
  ok "verify --json: ok true" || bad "verify --json: $OUT"
sed 's/"operations_total": [0-9]*/"operations_total": 1/' "$TMP/r.json" >"$TMP/bad.json"
cp "$TMP/r.json" "$TMP/bad2.json"; python3 - "$TMP/bad2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["device"]["name"] = "tampered"; json.dump(d, open(sys.argv[1], "w"))
PY
expect 1 "verify --json on a tampered report" -- "$E" verify --json "$TMP/bad2.json"
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] is False and d["error"]' &&
  ok "verify --json: ok false with the error" || bad "verify --json tampered: $OUT"
expect 0 "profile --json" -- "$E" profile --board sim --power --out "$TMP/p" --json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["valid"] is True and d["power"]["energy_per_inference_j"] > 0' &&
  ok "profile --json: the summary" || bad "profile --json: ${OUT:0:300}"
expect 0 "parse --json" -- "$E" parse "$TMP/p/pmu/capture.log" --out "$TMP/parsed" --json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["profile"]["layers"]' &&
  ok "parse --json: the summary" || bad "parse --json: ${OUT:0:300}"
# The corpus' first file (markers.csv) is not a statistics CSV: the summary
# says power.recording_unusable (an error) and is still printed; exit 1
# (invalid) since exit codes say one thing (issue 17 item 9; it was 0).
expect 1 "analyze --json" -- "$E" analyze --stats "$ERGON_SOURCE_DIR/tests/fuzz/corpus/fuzz_power_csv/$(ls "$ERGON_SOURCE_DIR/tests/fuzz/corpus/fuzz_power_csv" | head -1)" --out "$TMP/an" --json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "power" in d' &&
  ok "analyze --json: the summary" || bad "analyze --json: ${OUT:0:300}"
# Every other subcommand with --json (compare, config show, doctor,
# instruments, model info, db export): stdout is exactly one JSON value.
json_only() { # json_only WHAT CHECK -- command...: exit 0 or 1, stdout one JSON value passing CHECK
  local what=$1 check=$2
  shift 3
  "$@" >"$TMP/jo.out" 2>"$TMP/jo.err"
  local rc=$?
  if [ "$rc" -gt 1 ]; then bad "$what: exit $rc: $(head -3 "$TMP/jo.err")"; return; fi
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $check" "$TMP/jo.out" &&
    ok "$what: stdout is one JSON value" || bad "$what: stdout: $(head -c 300 "$TMP/jo.out")"
}
# Repeated runs: with fewer than 3 repetitions a side compare gives no
# verdict and exits 4 (docs/COMPARE.md).
for k in 1 2; do
  "$E" run --device d "${SYN[@]}" --idle-s 0.1 --windows 2 --window-s 0.1 --repeat 3 --quiet \
    --out "$TMP/rr$k.json" >/dev/null 2>&1 || bad "run --repeat 3 ($k)"
done
json_only "compare --json" 'assert d["schema"] == "ergon.compare" and d["kind"] == "run" and len(d["inputs"]) == 2' \
  -- "$E" compare "$TMP/rr1.json" "$TMP/rr2.json" --json
expect 4 "compare --json of single runs: no verdict" -- "$E" compare "$TMP/r.json" "$TMP/r2.json" --json
python3 -c "import json,sys; d=json.load(sys.stdin); assert d['spread_unknown'] > 0" <<<"$OUT" &&
  ok "single runs: stdout is the JSON, spread unknown" || bad "single-run compare --json: ${OUT:0:200}"
expect 4 "compare --json, different kinds" -- "$E" compare "$TMP/r.json" "$TMP/p/summary.json" --json
[ -z "$OUT" ] && ok "a refused compare --json prints no human text on stdout" || bad "refused compare stdout: ${OUT:0:200}"
json_only "config show --json" 'assert d["config"]["target.board"]["value"] == "sim"' -- "$E" config show --board sim --json
json_only "doctor --json" 'assert d["schema"] == "ergon.doctor" and d["capabilities"]' -- "$E" doctor --json
json_only "instruments --json" 'assert any(x["driver"] == "synthetic" for x in d)' -- "$E" instruments --json
json_only "model info --json" 'assert d["model_bytes"] > 0' -- "$E" model info "$ERGON_SHARED_DIR/fixtures/models/kws_ref_model.tflite" --json
"$E" db --db "$TMP/c.db" ingest "$TMP/r.json" >/dev/null || bad "db ingest for export --json"
json_only "db export --json" 'assert d[0]["report_id"].startswith("sha256:")' -- "$E" db --db "$TMP/c.db" export --json runs
# Every subcommand but power-on (it reports no result: it holds the power
# until a signal) takes --json; tests/functional/test_cli_json.sh runs each
# command and action with it.
for c in $("$E" __complete commands); do
  if "$E" __complete options "$c" | grep -qx -- --json; then
    [ "$c" != power-on ] && ok "$c takes --json" || bad "power-on takes --json: add its case"
  else
    case $c in power-on) ok "power-on: no --json (no result to report)";;
      *) bad "$c has no --json";; esac
  fi
done

# 6. One unit per value: energy/inference and its uncertainty in one unit,
#    no exponent notation in the summaries.
expect 0 "profile (human)" -- "$E" profile --board sim --power --out "$TMP/p2"
e_line=$(printf '%s\n' "$OUT" | grep 'Energy/inference')
u_line=$(printf '%s\n' "$OUT" | grep 'energy per inference uncertainty')
case "$e_line" in *" uJ |"*) ok "table: energy/inference in uJ";; *) bad "table line: $e_line";; esac
case "$u_line" in *" uJ ("*) ok "uncertainty in uJ too: $u_line";; *) bad "uncertainty unit: $u_line";; esac
printf '%s\n' "$OUT" | grep -Eq '[0-9]e[-+][0-9]' && bad "exponent notation in the profile summary" || ok "no exponent notation"

# 7. ASCII when the locale is not UTF-8.
LC_ALL=C "$E" run --device d "${SYN[@]}" --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/r3.json" >"$TMP/c.out" 2>&1
LC_ALL=C grep -q '[^ -~]' "$TMP/c.out" && bad "non-ASCII in the C locale: $(cat "$TMP/c.out")" || ok "run summary is ASCII in the C locale"
grep -q '+/- ' "$TMP/c.out" && ok "± falls back to +/-" || bad "no +/- in the C locale output"
LC_ALL=C.UTF-8 "$E" run --device d "${SYN[@]}" --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/r4.json" >"$TMP/u.out" 2>&1
grep -q '±' "$TMP/u.out" && ok "UTF-8 locale keeps ±" || bad "no ± in a UTF-8 locale"

# 8. Synthetic / replayed / emulated said in the terminal summary.
contains "$(cat "$TMP/u.out")" "result      : SYNTHETIC" "run says SYNTHETIC"
contains "$OUT" "result     : SYNTHETIC - the virtual bench" "profile on the sim says SYNTHETIC"
python3 - "$TMP/r.json" "$TMP/rec.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write("t_s,voltage_v,current_a\n")
    for i in range(4000):
        f.write("%.4f,5.0,%.4f\n" % (i * 0.001, 0.2 if i < 1500 else 0.5))
PY
expect 0 "replay run" -- "$E" run --device d --instrument replay:"$TMP/rec.csv" --provenance measured \
  --workload builtin:periodic,burst_ms=0,sleep_ms=2 --idle-s 0.5 --windows 2 --window-s 0.5 --out "$TMP/rp.json"
contains "$OUT" "result      : REPLAYED" "replay says REPLAYED"

# 9. run prints its integrity and the issues that decided it. THROTTLED is a
# finding (an info issue, in the report), not a fault: the run stays valid.
expect 0 "throttled run" -- "$E" run --device d "${SYN[@]}" --instrument-opt throttle_s=0.3 \
  --instrument-opt drop=0.5 --idle-s 0.2 --windows 4 --window-s 0.25 --out "$TMP/t.json"
contains "$OUT" "sustained   : THROTTLED" "the finding is shown"
contains "$OUT" "integrity   : " "integrity line"
case "$OUT" in *"run.throttled:"*) bad "run.throttled listed among the issues that decide the integrity";;
  *) ok "run.throttled does not decide the integrity";; esac
expect 1 "a run with no successful invocation" -- "$E" run --device d --instrument synthetic \
  --workload command:false --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/f.json"
contains "$OUT" "integrity   : invalid" "integrity line of an invalid run"
contains "$OUT" "error    run.no_operations:" "the deciding issue"

# 10. Before a long run: how long it takes; progress only on a terminal.
timeout 60 "$E" run --device d "${SYN[@]}" --settle-s 9.7 --idle-s 0.2 --windows 1 --window-s 0.2 \
  --out "$TMP/long.json" >/dev/null 2>"$TMP/long.err"
contains "$(cat "$TMP/long.err")" "ergon run: about 10 s (settle 9.7 s + idle 0.2 s + 1 windows x 0.2 s)" "duration announced"
grep -q $'\r' "$TMP/long.err" && bad "progress drawn although stderr is a file" || ok "no progress when stderr is not a terminal"
script -qec "$E run --device d --instrument synthetic --workload builtin:periodic,burst_ms=0,sleep_ms=2 --idle-s 0.3 --windows 2 --window-s 0.3 --out $TMP/tty.json" /dev/null >"$TMP/tty.out" 2>&1
grep -q $'\r  load' "$TMP/tty.out" && ok "progress drawn on a terminal" || bad "no progress on a terminal: $(head -c 300 "$TMP/tty.out")"
grep -q "ergon run: about 1 s" "$TMP/tty.out" && ok "duration announced on a terminal" || bad "no duration on a terminal"

# 11. Warnings once, on stderr.
expect 0 "profile with a glitchy gate" -- "$E" profile --board sim --sim-scenario gate_glitches --out "$TMP/gg"
contains "$ERR" "power.short_gate_pulses_ignored" "the issue is on stderr"
case "$OUT" in *"power.short_gate_pulses_ignored"*) bad "issue also on stdout";; *) ok "not on stdout";; esac
dups=$(printf '%s\n' "$ERR" | sort | uniq -d)
[ -z "$dups" ] && ok "no stderr line twice" || bad "repeated on stderr: $dups"
# A configuration warning is reported before the run and copied into the
# summary: printed once.
"$E" profile --board sim --sim-scenario baseline_ina228 --set power.ina228.board=mikroe-power-monitor-click \
  --set power.ina228.shunt_ohms=0.015 --set power.ina228.i2c_address=0x40 --out "$TMP/w2" >/dev/null 2>"$TMP/w2.err"
n=$(grep -c "config.ina228_address_mismatch" "$TMP/w2.err")
[ "$n" = 1 ] && ok "a configuration warning is printed once" || bad "config warning printed $n times"
dups=$(sort "$TMP/w2.err" | uniq -d)
[ -z "$dups" ] && ok "no stderr line twice (config warning case)" || bad "repeated on stderr: $dups"
finish

#!/usr/bin/env bash
# --json on every command that reports a result (issue 35): walks every
# command and action the CLI registers (`ergon __complete commands`,
# `__complete actions CMD`) and runs each with --json on inputs made here.
# What is checked is the contract a script relies on, not ergon's own
# formatting: stdout is exactly one JSON document (Python's json.loads of
# the whole of it) and nothing else; stderr holds only JSON lines, each an
# object with one key of error, verdict, warning, note; a non-zero exit
# comes with an error or verdict line whose "exit" is the exit status; no
# escape sequence anywhere. A wrong flag with --json is a JSON usage error
# (exit 2) naming the flag. A command or action without a case here fails
# the test (a new command must say what its --json prints).
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SHARED_DIR:?}" "${ERGON_BUILD_DIR:?}"
E=$ERGON_BIN
M=$ERGON_SHARED_DIR/fixtures/models
HPX=$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt
JLS=$ERGON_SHARED_DIR/fixtures/jls/shared_basic.jls
SIM=$ERGON_BUILD_DIR/ergon_ppk2_sim
# Never the user's database: $XDG_DATA_HOME/ergon/results.db is ergon db's default.
export XDG_DATA_HOME=$TMP/xdg
covered=" "

. "$(dirname "$0")/cli_json_lib.sh"

R=$TMP/r.json
RUN=(--device dut --instrument synthetic --workload builtin:periodic,burst_ms=0,sleep_ms=2
  --idle-s 0.2 --windows 2 --window-s 0.25)
check 0 run -- "$E" run "${RUN[@]}" --out "$R" --json
doc 'd["report"] == "'"$R"'" and d["report_id"].startswith("sha256:")' "run: the document is the report summary"
"$E" run "${RUN[@]}" --out "$TMP/r2.json" >/dev/null 2>&1
check 0 verify -- "$E" verify "$R" --json
# A one-field edit: verify fails; its error is a JSON line, not text.
python3 -c "import json,sys; d=json.load(open('$R')); d['device']['name']='tampered'; json.dump(d, open('$TMP/tampered.json','w'))"
check 1 "verify, tampered" -- "$E" verify "$TMP/tampered.json" --json
grep -q 'FAILED: field report_id' "$TMP/err" && grep -q '"exit":1' "$TMP/err" && ok "verify: the failure as a JSON error line" || bad "verify failure: $(cat "$TMP/err")"
check 0 digest -- "$E" digest "$R" --json
doc "d['report_id'] == '$(sed -n 's/.*"report_id": "\(sha256:[0-9a-f]*\)".*/\1/p' "$R" | head -1)'" \
  "digest: report_id = the report's own"
check 0 keygen -- "$E" keygen --out "$TMP/k" --json
doc "d['public_key'] == '$TMP/k.pub' and d['key_id']" "keygen: names both files and the key id"
cp "$R" "$TMP/signed.json"
check 0 sign -- "$E" sign "$TMP/signed.json" --key "$TMP/k" --json
check 0 energy-model -- "$E" energy-model "$R" --action inference --allow-synthetic --out "$TMP/em.json" --json
doc 'd["schema"] == "measurement-harness/energy-model/v1"' "energy-model: the document is the model"
check 1 "energy-model refused" -- "$E" energy-model "$R" --action inference --json
check 0 report -- "$E" report "$R" --out "$TMP/r.html" --json
doc "d['wrote'] == '$TMP/r.html'" "report: names the page"
# compare judges a difference only with 3 or more repetitions a side
# (issue 31): single runs get exit 4 and a JSON error line saying why.
check 4 "compare, spread unknown" -- "$E" compare "$R" "$TMP/r2.json" --json
grep -q '"ESPREAD"' "$TMP/err" && ok "compare: the error line says the spread is unknown" || bad "compare exit 4: $(cat "$TMP/err")"
"$E" run "${RUN[@]}" --repeat 3 --out "$TMP/r3a.json" >/dev/null 2>&1
"$E" run "${RUN[@]}" --repeat 3 --out "$TMP/r3b.json" >/dev/null 2>&1
check 0 compare -- "$E" compare "$TMP/r3a.json" "$TMP/r3b.json" --json

# db: every action.
check 0 "db ingest" -- "$E" db --db "$TMP/results.db" ingest "$R" --json
doc 'd["ingested"] == 1 and d["artifacts"][0]["result"] == "ingested"' "db ingest: counts and lists"
check 3 "db ingest of a missing path" -- "$E" db --db "$TMP/results.db" ingest "$TMP/nope/" --json
grep -q "$TMP/nope/" "$TMP/err" && ok "db ingest names the missing path" || bad "db ingest: path not named"
expect 3 "db ingest of a missing path, human" -- "$E" db --db "$TMP/results.db" ingest "$TMP/nope/"
[ "$(grep -o "$TMP/nope/" <<<"$ERR" | wc -l)" = 1 ] && ok "named once: $ERR" || bad "db ingest missing path: $ERR"
check 0 "db list" -- "$E" db --db "$TMP/results.db" list --json
doc 'len(d["runs"]) == 1 and d["runs"][0]["device"] == "dut"' "db list: the one run, as JSON"
id=$(sed -n 's/.*"report_id": "\(sha256:[0-9a-f]*\)".*/\1/p' "$R" | head -1)
check 0 "db show" -- "$E" db --db "$TMP/results.db" show "$id" --json
check 0 "db trend" -- "$E" db --db "$TMP/results.db" trend load.mean_power_w --device dut --json
doc 'len(d["points"]) == 1 and d["counted"] == 0' "db trend: one point, synthetic so not counted"
# db changes: the one run is synthetic, so no counted point; --all takes it
# (one point: too few for a shift, PELT needs segments of 2).
check 0 "db changes" -- "$E" db --db "$TMP/results.db" changes load.mean_power_w --device dut --json
doc 'd["points"] == 0 and d["shifts"] == []' "db changes: no counted point"
check 0 "db changes --all" -- "$E" db --db "$TMP/results.db" changes load.mean_power_w --device dut --all --json
doc 'd["points"] == 1 and d["shifts"] == [] and d["all"] is True' "db changes --all: the one point, no shift"
check 0 "db export" -- "$E" db --db "$TMP/results.db" export --json runs

check 0 "config show" -- "$E" config show --board sim --json
check 0 "config boards" -- "$E" config boards --json
doc 'any(b["board"] == "apollo510_evb" for b in d["boards"])' "config boards: the registry"
check 0 "counters list" -- "$E" counters list --group mve --json
doc 'all(e["group"] == "mve" for e in d["events"]) and len(d["events"]) > 0' "counters list --group mve"
check 0 "counters plan" -- "$E" counters plan cpu --json
# The cpu set (three events and the cycle counter, which takes no slot) fits
# one pass of 4 chained counters (counters --help).
doc 'len(d["passes"]) == 1 and d["counters_per_pass"] == 4' "counters plan cpu: one pass of four"
check 0 doctor -- "$E" doctor --json
check 0 instruments -- "$E" instruments --json
check 0 "ina228 plan" -- "$E" ina228 plan --shunt-ohms 0.5 --max-current-a 0.02 --rail-v 1.8 --json
# TI SBOSA20 8.1.2: CURRENT_LSB = 0.02 / 2^19; 0.5 ohm x 0.02 A = 10 mV < 40.96 mV: the fine range.
doc 'abs(d["current_lsb_a"] - 0.02 / 2**19) < 1e-18 and d["adcrange"] == 1' "ina228: LSB and range from the datasheet"

head -c 490 /dev/zero >"$TMP/zero.bin"
check 0 "model infer" -- "$E" model infer "$M/kws_ref_model.tflite" --input "$TMP/zero.bin" --out "$TMP/o.bin" --top 3 --json
check 0 "model info" -- "$E" model info "$M/kws_ref_model.tflite" --json
check 3 "model infer, missing input" -- "$E" model infer "$M/kws_ref_model.tflite" --input "$TMP/absent.bin" --out "$TMP/o2.bin" --json

printf 'fc f accum=8 units=4\n' >"$TMP/shapes.txt"
check 0 "kernels run" -- "$E" kernels run --board host --shapes "$TMP/shapes.txt" --iterations 2 --out "$TMP/k1" --json
doc 'd["schema"] == "ergon.kernels"' "kernels run: the document is the artifact"
check 0 "kernels report" -- "$E" kernels report "$TMP/k1/samples.csv" --json

check 0 parse -- "$E" parse "$HPX" --out "$TMP/p1" --json
check 0 capture -- "$E" capture --transport "file:$HPX" --out "$TMP/c1" --json
grep -v -- '--- HPX_END ---' "$HPX" >"$TMP/cut.hpx"
check 4 "capture, cut (degraded)" -- "$E" capture --transport "file:$TMP/cut.hpx" --out "$TMP/c2" --json
check 0 analyze -- "$E" analyze --jls "$JLS" --out "$TMP/a1" --json
check 0 profile -- "$E" profile --board sim --out "$TMP/pr" --json
mkdir -p "$TMP/models" && cp "$M/kws_ref_model.tflite" "$TMP/models/"
check 0 validate -- "$E" validate --board sim --models "$TMP/models" --junit-xml "$TMP/v.xml" --out "$TMP/v" --json
doc 'd["models"] == 1 and d["failed"] == 0' "validate: one model, none failed"
if [ -x "$SIM" ]; then
  coproc SIMP { exec "$SIM"; }
  read -r PORT <&"${SIMP[0]}"
  check 0 record -- "$E" record --instrument "ppk2:$PORT" --instrument-opt vdd_mv=3000 --duration-s 0.3 --out "$TMP/x.jls" --json
  doc 'd["samples"] > 0 and d["out"].endswith("x.jls")' "record: samples and the file"
  kill "$SIMP_PID" 2>/dev/null; wait "$SIMP_PID" 2>/dev/null
else
  check 3 record -- "$E" record --instrument synthetic --duration-s 0.1 --out "$TMP/x.jls" --json
fi
# power-on reports no result: it holds the power until a signal and says so
# in two lines (docs/internals/cli.md "Output rules"); --json is refused as
# an unknown option, as a JSON usage error.
check 2 power-on -- "$E" power-on --instrument synthetic --json
grep -q '"--json"\|--json' "$TMP/err" && ok "power-on names --json" || bad "power-on: --json not named"

# view: the page and its recordings; a summary of another recording is
# refused (exit 1) as a JSON error line.
check 0 view -- "$E" view "$JLS" --summary "$TMP/a1/summary.json" --out "$TMP/v.html" --json
doc "d['wrote'] == '$TMP/v.html' and d['recordings'] == [{'jls': '$JLS', 'summary': '$TMP/a1/summary.json'}]" \
  "view: names the page and the recording with its summary"
cp "$JLS" "$TMP/other.jls" && printf 'x' >>"$TMP/other.jls"
check 1 "view, another recording" -- "$E" view "$TMP/other.jls" --summary "$TMP/a1/summary.json" --out "$TMP/v2.html" --json
[ ! -e "$TMP/v2.html" ] && ok "view refused: no page written" || bad "view refused but wrote the page"

for c in $("$E" __complete commands); do
  acts=$("$E" __complete actions "$c")
  if [ -z "$acts" ]; then
    case "$covered" in *" $c "*) ;; *) bad "no --json case for '$c'";; esac
  else
    for a in $acts; do
      case "$covered" in *" $c $a "*|*" $c $a,"*) ;; *) bad "no --json case for '$c $a'";; esac
    done
  fi
done
echo "cases: $covered"

# A wrong flag with --json: a JSON usage error naming the flag and --help.
for c in $("$E" __complete commands); do
  a=$("$E" __complete actions "$c" | head -1)
  check 2 "$c${a:+ $a} --bogus" -- "$E" $c $a --bogus-flag --json
  python3 -c "import json,sys; e=json.loads(open('$TMP/err').read().splitlines()[-1])['error']; sys.exit(0 if '--bogus-flag' in e['message'] and e['exit_name'] == 'usage' and e['help'].startswith('ergon $c') else 1)" &&
    ok "$c: the error names --bogus-flag and --help" || { bad "$c: usage error"; cat "$TMP/err"; }
done
finish

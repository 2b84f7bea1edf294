#!/usr/bin/env bash
# ergon validate as CI runs it (docs/VALIDATE.md): the four fixture models on
# qemu-an547 give valid JUnit XML with one passing testcase per model and
# check; then a folder with a truncated model and a baseline 10 % faster than
# the real run gives an <error> for the model and a regression <failure>,
# exit 1, and the db ingest check; usage errors refuse before building.
# Outcomes are known by hand (the model files, the edited baseline); the XML
# is parsed by python3 and checked against tests/functional/junit.xsd.
# Needs arm-none-eabi-gcc, qemu-system-arm and xmllint (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/reseal_lib.sh"
E=$ERGON_BIN
XSD=$(dirname "$0")/junit.xsd
M=${ERGON_SHARED_DIR:?}/fixtures/models
for t in arm-none-eabi-gcc qemu-system-arm xmllint; do
  command -v $t >/dev/null || { bad "$t missing (scripts/bootstrap.sh)"; finish; }
done

# junit FILE EXPECTED-JSON: every <testcase> as {suite/case: outcome} equals
# the expected map, and the counts in the attributes agree with the cases.
junit() {
  python3 - "$1" "$2" <<'PY'
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
want = json.loads(sys.argv[2])
assert root.tag == "testsuites", root.tag
got, tot = {}, {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for s in root.findall("testsuite"):
    n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for c in s.findall("testcase"):
        kids = [k.tag for k in c if k.tag in ("failure", "error", "skipped")]
        assert len(kids) <= 1, kids
        o = kids[0] if kids else "pass"
        assert c.get("classname") == s.get("name")
        got[s.get("name").split(".")[-1] + "/" + c.get("name")] = o
        n["tests"] += 1
        if o != "pass":
            n[{"failure": "failures", "error": "errors", "skipped": "skipped"}[o]] += 1
    for k in n:
        assert int(s.get(k)) == n[k], (s.get("name"), k, s.get(k), n[k])
        tot[k] += n[k]
for k in tot:
    assert int(root.get(k)) == tot[k], (k, root.get(k), tot[k])
assert got == want, "\n got  %s\n want %s" % (sorted(got.items()), sorted(want.items()))
PY
}
# message FILE SUITE CASE: the message of the case's failure/error/skipped.
message() {
  python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
for s in ET.parse(sys.argv[1]).getroot().findall("testsuite"):
    if s.get("name").endswith("." + sys.argv[2]):
        for c in s.findall("testcase"):
            if c.get("name") == sys.argv[3]:
                for k in c:
                    print(k.get("message") or "")
                    print(k.text or "")
PY
}

# 1. The issue's command on the fixture models: all pass.
expect 0 "validate the four fixture models on qemu-an547" -- "$E" validate --board qemu-an547 \
  --models "$M" --junit-xml "$TMP/out.xml" --out "$TMP/v1"
contains "$OUT" "validate: 4 model(s), 12 test(s): 12 passed, 0 failed, 0 error(s), 0 skipped" "the summary line"
xmllint --noout --schema "$XSD" "$TMP/out.xml" 2>"$TMP/xsd" && ok "out.xml is valid against junit.xsd" ||
  { bad "out.xml fails junit.xsd"; cat "$TMP/xsd"; }
W='{}'
W=$(python3 -c 'import json; print(json.dumps({f"{m}/{c}": "pass" for m in ["ad01_int8", "kws_ref_model", "pretrainedResnet_quant", "vww_96_int8"] for c in ["profile", "correctness", "integrity"]}))')
junit "$TMP/out.xml" "$W" && ok "one passing testcase per model and check (4 x 3)" || bad "out.xml cases"
for m in ad01_int8 kws_ref_model pretrainedResnet_quant vww_96_int8; do
  [ -f "$TMP/v1/$m/summary.json" ] || bad "no $TMP/v1/$m/summary.json"
done
ok "a summary.json per model under --out"
# The schema check can fail: a testsuite without its tests count is refused.
sed '0,/<testsuite name/s/<testsuite name=\("[^"]*"\) tests="[0-9]*"/<testsuite name=\1/' "$TMP/out.xml" >"$TMP/bad.xml"
xmllint --noout --schema "$XSD" "$TMP/bad.xml" 2>/dev/null && bad "junit.xsd accepts a testsuite without tests" ||
  ok "junit.xsd refuses a testsuite without tests"

# 2. A failing run: a model cut to its first 3000 bytes (the file is 276976
# bytes: its tables point past the end) and a baseline whose clean inference
# time is 10 % below the real one, so this run is 1/0.9 - 1 = 11.1 % slower,
# over the 3 % default threshold. Stored in a db as it goes.
mkdir -p "$TMP/m2" "$TMP/base/kws_ref_model"
cp "$M/kws_ref_model.tflite" "$TMP/m2/"
head -c 3000 "$M/ad01_int8.tflite" >"$TMP/m2/cut.tflite"
reseal "$TMP/v1/kws_ref_model/summary.json" "$TMP/base/kws_ref_model/summary.json" \
  'd["profile"]["meta"]["clean_infer_avg_us"] *= 0.9'
T0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["profile"]["meta"]["clean_infer_avg_us"])' "$TMP/v1/kws_ref_model/summary.json")
expect 1 "validate with a cut model and a faster baseline" -- "$E" validate --board qemu-an547 \
  --models "$TMP/m2" --baseline "$TMP/base" --db "$TMP/r.db" --junit-xml "$TMP/j2.xml" --out "$TMP/v2"
contains "$OUT" "validate: 2 model(s), 10 test(s): 4 passed, 1 failed, 1 error(s), 4 skipped" "the summary line"
xmllint --noout --schema "$XSD" "$TMP/j2.xml" 2>"$TMP/xsd" && ok "j2.xml is valid against junit.xsd" ||
  { bad "j2.xml fails junit.xsd"; cat "$TMP/xsd"; }
junit "$TMP/j2.xml" '{"cut/profile": "error", "cut/correctness": "skipped", "cut/integrity": "skipped",
  "cut/regression": "skipped", "cut/db ingest": "skipped",
  "kws_ref_model/profile": "pass", "kws_ref_model/correctness": "pass", "kws_ref_model/integrity": "pass",
  "kws_ref_model/regression": "failure", "kws_ref_model/db ingest": "pass"}' &&
  ok "cut model: error, its checks skipped; kws: regression failure, the rest pass" || bad "j2.xml cases"
msg=$(message "$TMP/j2.xml" cut profile)
contains "$msg" "$TMP/m2/cut.tflite" "the error names the model file"
contains "$(message "$TMP/j2.xml" cut correctness)" "the profile did not complete" "skips say why"
# One profile a side: compare's rule gives no verdict without the
# run-to-run spread, so the regression check fails saying why; the
# compare text still shows the difference.
msg=$(message "$TMP/j2.xml" kws_ref_model regression)
contains "$msg" "no verdict: the run-to-run spread is unknown" "the regression check says why it has no verdict"
contains "$msg" "clean inference time" "names the figure"
python3 - "$msg" "$T0" <<'PY' && ok "the compare text shows +11.11 % for clean inference time" || bad "regression percentage"
import re, sys
m = re.search(r"clean inference time\n\s+A = (\S+) us.*\n\s+B = (\S+) us.*\n\s+B-A \S+ us \(\+([0-9.]+) %", sys.argv[1])
assert m, sys.argv[1]
t0 = float(sys.argv[2])
assert abs(float(m.group(2)) - t0) < 1e-5 * t0
assert abs(float(m.group(3)) - 100 * (1 / 0.9 - 1)) < 0.01, m.group(3)
PY
KR=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["report_id"])' "$TMP/v2/kws_ref_model/summary.json")
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM runs WHERE report_id = ?", (sys.argv[2],)).fetchone()[0])' "$TMP/r.db" "$KR")
[ "$n" = 1 ] && ok "the kws summary is in the db under its report_id" || bad "db runs for $KR: $n"

# 3. The db as the baseline: the newest profile of kws on qemu-an547 is the
# run just stored; one profile a side, so no verdict (compare's rule).
mkdir -p "$TMP/m3" && cp "$M/kws_ref_model.tflite" "$TMP/m3/"
expect 1 "validate against the db baseline" -- "$E" validate --board qemu-an547 --models "$TMP/m3" \
  --baseline "$TMP/r.db" --junit-xml "$TMP/j3.xml" --out "$TMP/v3"
junit "$TMP/j3.xml" '{"kws_ref_model/profile": "pass", "kws_ref_model/correctness": "pass",
  "kws_ref_model/integrity": "pass", "kws_ref_model/regression": "failure"}' &&
  ok "db baseline: found, compared, no verdict without repetitions" || bad "j3.xml cases"
contains "$(message "$TMP/j3.xml" kws_ref_model regression)" "run-to-run spread is unknown" "db baseline: says why"

# 4. --power on QEMU: no instrument observes an emulated rail, so the
# summary is invalid and integrity fails (correctness still passes).
mkdir -p "$TMP/m4" && cp "$M/kws_ref_model.tflite" "$TMP/m4/"
expect 1 "validate --power on qemu-an547" -- "$E" validate --board qemu-an547 --models "$TMP/m4" --power \
  --junit-xml "$TMP/j4.xml" --out "$TMP/v4"
junit "$TMP/j4.xml" '{"kws_ref_model/profile": "pass", "kws_ref_model/correctness": "pass",
  "kws_ref_model/integrity": "failure"}' && ok "--power: integrity failure" || bad "j4.xml cases"
contains "$(message "$TMP/j4.xml" kws_ref_model integrity)" "profile.power_unobservable" "names the issue"

# 5. Refused before anything is built.
# (--board sim now runs the models: tests/functional/test_validate_boards.sh.)
expect 2 "--firmware-dir on qemu-an547 is refused" -- "$E" validate --board qemu-an547 --firmware-dir "$TMP" --models "$M" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "it builds the board's firmware from its port" "says ergon builds it"
expect 2 "a folder without models" -- "$E" validate --board qemu-an547 --models "$TMP/base" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "no .tflite files" "says so"
expect 3 "a missing baseline" -- "$E" validate --board qemu-an547 --models "$M" --baseline "$TMP/nope" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "--baseline $TMP/nope" "names it"
expect 2 "no --junit-xml" -- "$E" validate --board qemu-an547 --models "$M" --out "$TMP/x"
contains "$ERR" "--junit-xml" "names the option"
expect 2 "a mistyped option" -- "$E" validate --board qemu-an547 --model "$M" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "--models" "suggests --models"
expect 3 "an existing --junit-xml without --force" -- "$E" validate --board qemu-an547 --models "$M" --junit-xml "$TMP/out.xml" --out "$TMP/x"
[ ! -e "$TMP/x" ] && ok "nothing built for the refusals" || bad "$TMP/x was created"
finish

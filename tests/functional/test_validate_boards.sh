#!/usr/bin/env bash
# ergon validate on the virtual bench and on a real board's probe lifecycle
# (docs/VALIDATE.md). --board sim: the four fixture models pass every check
# (XML checked against junit.xsd), the simulated cycles equal the cost model
# computed here from `ergon model info` (2 per MAC + 1 per output byte + 500
# per operator, sim/include/ergon/sim.h), --power gives the energy the
# simulated board's 5 mA x 1.8 V over that time makes, and everything says
# synthetic; a cut model and a baseline 10 % faster fail. A real board
# (apollo510_evb, J-Link): fake JLinkExe and RTT server (no hardware here;
# tests/support/fake_probe/rtt_server.py) replay the virtual bench's stream
# of the same model as "your firmware", so correctness passes; another
# model's stream fails it; a model without firmware is an <error>.
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/reseal_lib.sh"
E=$ERGON_BIN
src=${ERGON_SOURCE_DIR:?}
XSD=$(dirname "$0")/junit.xsd
M=${ERGON_SHARED_DIR:?}/fixtures/models
for t in xmllint python3; do
  command -v $t >/dev/null || { bad "$t missing (scripts/bootstrap.sh)"; finish; }
done
MODELS="ad01_int8 kws_ref_model pretrainedResnet_quant vww_96_int8"
# cases FILE: every <testcase> as "model/check=outcome", sorted, one line;
# and the counts in the attributes must agree with the cases.
cases() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
out, tot = [], {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for s in root.findall("testsuite"):
    n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for c in s.findall("testcase"):
        kids = [k.tag for k in c if k.tag in ("failure", "error", "skipped")]
        o = kids[0] if kids else "pass"
        out.append("%s/%s=%s" % (s.get("name").split(".")[-1], c.get("name"), o))
        n["tests"] += 1
        if o != "pass":
            n[{"failure": "failures", "error": "errors", "skipped": "skipped"}[o]] += 1
    for k in n:
        assert int(s.get(k)) == n[k], (s.get("name"), k)
        tot[k] += n[k]
for k in tot:
    assert int(root.get(k)) == tot[k], k
print(" ".join(sorted(out)))
PY
}
all_pass() { # all_pass CHECKS...: the expected cases line for $MODELS
  local w=() m c
  for m in $MODELS; do for c in "$@"; do w+=("$m/$c=pass"); done; done
  printf '%s\n' "${w[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
xsd() { xmllint --noout --schema "$XSD" "$1" 2>"$TMP/xsd" && ok "$1 is valid against junit.xsd" || { bad "$1 fails junit.xsd"; cat "$TMP/xsd"; }; }

# 1. The virtual bench: every model, every check passes.
expect 0 "validate --board sim, the four fixture models" -- "$E" validate --board sim --models "$M" \
  --junit-xml "$TMP/s.xml" --out "$TMP/s1"
contains "$OUT" "validate: 4 model(s), 12 test(s): 12 passed, 0 failed, 0 error(s), 0 skipped" "summary line"
xsd "$TMP/s.xml"
[ "$(cases "$TMP/s.xml")" = "$(all_pass profile correctness integrity)" ] && ok "one passing case per model and check (4 x 3)" ||
  bad "cases: $(cases "$TMP/s.xml")"
[ "$(grep -c '<property name="provenance" value="synthetic"/>' "$TMP/s.xml")" = 4 ] && ok "each suite says provenance synthetic" || bad "provenance properties"
contains "$(cat "$TMP/s.xml")" 'name="provenance_note" value="virtual bench: a simulated board' "and why"
# Independent: the cost model from the model's own operator table.
for m in $MODELS; do
  "$E" model info "$M/$m.tflite" --json >"$TMP/$m.info.json" || bad "model info $m"
  python3 - "$TMP/$m.info.json" "$TMP/s1/$m/summary.json" <<'PY' && ok "$m: simulated cycles = 2 x MACs + output bytes + 500 per operator" || bad "$m cycles"
import json, sys
info, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def nbytes(t):
    n = 1
    for d in t["shape"]:
        n *= d
    return n * {"INT8": 1, "UINT8": 1, "INT16": 2, "INT32": 4, "FLOAT32": 4}[t["type"]]
want = sum(2 * op["macs"] + nbytes(op["outputs"][0]) + 500 for op in info["operators"])
got = s["profile"]["meta"]["clean_infer_avg_cycles"]
assert got == want, (got, want)
assert s["provenance"]["kind"] == "synthetic", s["provenance"]
assert s["correctness"]["bit_exact"] is True
assert s["provenance"]["target"]["lifecycle"] == "sim"
PY
done

# 2. --power: the simulated meter on the simulated rail. While an operator
# of a model runs, the board draws its kind's current at 1.8 V (issue 33,
# sim/include/ergon/sim.h: CONV_2D 6 mA, DEPTHWISE_CONV_2D 4 mA,
# FULLY_CONNECTED 5 mA, any other 3 mA), so an inference costs the sum over
# its layers of I(op) x 1.8 V x cycles / 96 MHz.
expect 0 "validate --board sim --power" -- "$E" validate --board sim --power --models "$M" \
  --junit-xml "$TMP/p.xml" --out "$TMP/p1"
xsd "$TMP/p.xml"
[ "$(cases "$TMP/p.xml")" = "$(all_pass profile correctness integrity)" ] && ok "--power: all 12 cases pass" || bad "cases: $(cases "$TMP/p.xml")"
grep -q '<property name="power" value="true"/>' "$TMP/p.xml" && ok "power property true" || bad "power property"
for m in $MODELS; do
  python3 - "$TMP/p1/$m/summary.json" <<'PY' && ok "$m: energy per inference = sum of I(op) x 1.8 V x cycles / 96 MHz (0.5 %), synthetic" || bad "$m energy"
import json, sys
s = json.load(open(sys.argv[1]))
amps = {"CONV_2D": 0.006, "DEPTHWISE_CONV_2D": 0.004, "FULLY_CONNECTED": 0.005}
layers = s["profile"]["layers"]
assert sum(l["cycles"] for l in layers) == s["profile"]["meta"]["clean_infer_avg_cycles"]
want = sum(amps.get(l["op"], 0.003) * 1.8 * l["cycles"] / 96e6 for l in layers)
got = s["power"]["energy_per_inference_j"]
assert abs(got - want) <= 0.005 * want, (got, want)
assert s["provenance"]["kind"] == "synthetic" and s["valid"] is True
PY
done

# 3. Failing on the sim: a cut model (3000 bytes of a 276976-byte file) and
# a baseline 10 % faster than the run (this run 1/0.9 - 1 = 11.1 % slower).
mkdir -p "$TMP/m2" "$TMP/base/kws_ref_model"
cp "$M/kws_ref_model.tflite" "$TMP/m2/"
head -c 3000 "$M/ad01_int8.tflite" >"$TMP/m2/cut.tflite"
reseal "$TMP/s1/kws_ref_model/summary.json" "$TMP/base/kws_ref_model/summary.json" \
  'd["profile"]["meta"]["clean_infer_avg_us"] *= 0.9'
expect 1 "sim: a cut model and a faster baseline" -- "$E" validate --board sim --models "$TMP/m2" \
  --baseline "$TMP/base" --junit-xml "$TMP/f.xml" --out "$TMP/f1"
xsd "$TMP/f.xml"
want="cut/correctness=skipped cut/integrity=skipped cut/profile=error cut/regression=skipped kws_ref_model/correctness=pass kws_ref_model/integrity=pass kws_ref_model/profile=pass kws_ref_model/regression=failure"
[ "$(cases "$TMP/f.xml")" = "$want" ] && ok "cut: error, checks skipped; kws: regression failure" || bad "cases: $(cases "$TMP/f.xml")"
grep -q "no verdict: the run-to-run spread is unknown" "$TMP/f.xml" && ok "regression check: no verdict without repetitions" ||
  bad "regression message"
grep -q "$TMP/m2/cut.tflite" "$TMP/f.xml" && ok "the error names the cut model" || bad "cut model not named"

# 4. Refusals before anything runs.
expect 2 "--firmware-dir on the sim" -- "$E" validate --board sim --firmware-dir "$TMP" --models "$M" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "drop --firmware-dir" "says so"
expect 2 "a real board without --firmware-dir" -- "$E" validate --board apollo510_evb --models "$M" --junit-xml "$TMP/x.xml" --out "$TMP/x"
contains "$ERR" "give --firmware-dir DIR" "names the option"
[ ! -e "$TMP/x" ] && ok "nothing written for the refusals" || bad "$TMP/x was created"

# 5. A real board through the J-Link lifecycle, against fakes. "Your
# firmware" for kws is the virtual bench's kws stream (what ergon-target's
# interpreter emits for that model); ad01 has no firmware folder.
port=$((20000 + RANDOM % 20000))
mkdir -p "$TMP/bin" "$TMP/fw/kws_ref_model" "$TMP/m5"
printf 'ELF' >"$TMP/fw/kws_ref_model/kws_profile.elf"
cp "$M/kws_ref_model.tflite" "$M/ad01_int8.tflite" "$TMP/m5/"
cat >"$TMP/bin/JLinkExe" <<EOF2
#!/usr/bin/env bash
cf=""; while [ \$# -gt 0 ]; do [ "\$1" = -CommandFile ] && cf=\$2; shift; done
sed -n 's/^loadfile //p' "\$cf" >>"$TMP/jlink.images"
# The target runs on `g`, or on the Apollo5 rule's SWPOI write (its reset).
if grep -qxE 'g|w4 0x40000004 0x1B' "\$cf"; then exec python3 "$src/tests/support/fake_probe/rtt_server.py" $port replay "\$FAKE_RTT_FILE"; fi
exit 0
EOF2
chmod +x "$TMP/bin/JLinkExe"
PATH="$TMP/bin:$PATH" FAKE_RTT_FILE="$TMP/s1/kws_ref_model/pmu/capture.log" expect 1 \
  "apollo510_evb: kws with firmware, ad01 without" -- "$E" validate --board apollo510_evb \
  --firmware-dir "$TMP/fw" --rtt-port $port --models "$TMP/m5" --junit-xml "$TMP/b.xml" --out "$TMP/b1"
xsd "$TMP/b.xml"
want="ad01_int8/correctness=skipped ad01_int8/integrity=skipped ad01_int8/profile=error kws_ref_model/correctness=pass kws_ref_model/integrity=pass kws_ref_model/profile=pass"
[ "$(cases "$TMP/b.xml")" = "$want" ] && ok "kws passes on the board; ad01 without firmware is an error" || bad "cases: $(cases "$TMP/b.xml")"
grep -qx "$TMP/fw/kws_ref_model/kws_profile.elf" "$TMP/jlink.images" && ok "J-Link flashed FIRMWARE_DIR/kws_ref_model's profile build" ||
  bad "flashed: $(cat "$TMP/jlink.images" 2>/dev/null)"
grep -q "$TMP/fw/ad01_int8" "$TMP/b.xml" && ok "the error names the missing firmware folder" || bad "missing folder not named"
grep -q '<property name="firmware_dir"' "$TMP/b.xml" && ok "firmware_dir property" || bad "no firmware_dir property"
python3 - "$TMP/b1/kws_ref_model/summary.json" <<'PY' && ok "the board's summary: jlink lifecycle, hardware, untested-on-hardware note" || bad "board summary"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["provenance"]["target"]
assert t["lifecycle"] == "jlink" and t["hardware"] is True, t
assert "not yet been run on hardware" in s["provenance"]["note"]
assert s["correctness"]["bit_exact"] is True
# ergon did not build FIRMWARE_DIR's images: the memory placement is the
# firmware's own, not one ergon applied (nor a "default" it cannot know).
m = s["plan"]["memory"]
assert m["mode"] == "not_known" and m["applied"] is False, m
assert "ergon did not build this firmware" in m["how"], m
PY
# The firmware answers with another model's output: correctness fails.
rm -f "$TMP/m5/ad01_int8.tflite"
PATH="$TMP/bin:$PATH" FAKE_RTT_FILE="$TMP/s1/ad01_int8/pmu/capture.log" expect 1 \
  "apollo510_evb: the firmware's output is not kws's" -- "$E" validate --board apollo510_evb \
  --firmware-dir "$TMP/fw" --rtt-port $port --models "$TMP/m5" --junit-xml "$TMP/c.xml" --out "$TMP/c1"
xsd "$TMP/c.xml"
case "$(cases "$TMP/c.xml")" in *kws_ref_model/correctness=failure*) ok "correctness failure";; *) bad "cases: $(cases "$TMP/c.xml")";; esac
grep -q "differs from the host interpreter" "$TMP/c.xml" && ok "says the outputs differ" || bad "mismatch message"
finish

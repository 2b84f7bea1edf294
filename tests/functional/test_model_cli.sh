#!/usr/bin/env bash
# ergon model info / infer and the tflite: workload of ergon run, on the
# MLPerf Tiny models. Expected values come from outside ergon: shapes and
# operator counts of the published models, and LiteRT.js outputs
# (tests/oracle/litert_refs.txt, made by the real TFLite runtime).
. "$(dirname "$0")/run_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
REFS=${ERGON_SOURCE_DIR:?}/tests/oracle/litert_refs.txt

expect 0 "model info vww" -- "$ERGON_BIN" model info "$M/vww_96_int8.tflite"
contains "$OUT" "input  0: INT8 [1,96,96,3]" "vww input is a 96x96 RGB image"
contains "$OUT" "27648 bytes" "vww input is 96*96*3 bytes"
contains "$OUT" "total  31 operators" "vww has 31 operators"
ops=$(echo "$OUT" | grep -cE '^ +[0-9]+  [A-Z_0-9]+ ')
[ "$ops" = 31 ] && ok "31 operator rows" || bad "operator rows: $ops"
contains "$OUT" "arena  " "arena size reported"

expect 0 "model info --json kws" -- "$ERGON_BIN" model info --json "$M/kws_ref_model.tflite"
echo "$OUT" > "$TMP/kws.json"
python3 - "$TMP/kws.json" <<'PY' && ok "json: 13 operators, SOFTMAX last, 12 classes" || bad "json content"
import json, sys
d = json.load(open(sys.argv[1]))
ops = d["operators"]
assert len(ops) == 13 and d["totals"]["operators"] == 13
assert ops[-1]["type"] == "SOFTMAX" and ops[-1]["outputs"][0]["shape"] == [1, 12]
assert ops[0]["type"] == "CONV_2D" and ops[0]["inputs"][0]["shape"] == [1, 49, 10, 1]
assert sum(o["macs"] for o in ops) == d["totals"]["macs"]
assert d["totals"]["arena_bytes"] >= d["totals"]["arena_activation_bytes"] > 0
PY

# infer: all-zero input through kws; LiteRT answers the same bytes.
head -c 490 /dev/zero > "$TMP/zero490.bin"
expect 0 "model infer kws on zeros" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero490.bin" --out "$TMP/out.bin"
want=$(awk '$1 == "kws_ref_model.tflite" && $2 == "zero" {print $4}' "$REFS")
got=$(od -An -v -tx1 "$TMP/out.bin" | tr -d ' \n')
[ -n "$want" ] && [ "$got" = "$want" ] && ok "output equals LiteRT's ($got)" || bad "output $got, LiteRT $want"
# The top classes: LiteRT's bytes ranked here (ties by the lower class),
# dequantized with the softmax output quantization every int8 TFLite
# classifier has (scale 1/256, zero point -128: TFLite's quantization spec).
python3 - "$want" "$OUT" <<'PY' && ok "top 5 = LiteRT's bytes ranked and dequantized" || bad "top classes differ from LiteRT's"
import sys
raw = [b - 256 if b > 127 else b for b in bytes.fromhex(sys.argv[1])]
order = sorted(range(len(raw)), key=lambda i: (-raw[i], i))[:5]
want = ["%d %d %.6f" % (i, raw[i], (raw[i] + 128) / 256) for i in order]
got = [" ".join(l.split()) for l in sys.argv[2].splitlines() if l.strip()[:1].isdigit()]
print("    want", want, "\n    got ", got)
sys.exit(0 if got == want else 1)
PY
contains "$OUT" "score = scale x (raw - zero point)" "says how the score is made"
expect 0 "model infer --top 1 --json" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero490.bin" --out "$TMP/out1.bin" --top 1 --json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["top"]; assert len(t) == 1 and t[0]["class"] == 0 and t[0]["raw"] == -1 and t[0]["score"] == 127/256 and d["dequantized"], d' &&
  ok "--top 1 --json: class 0, raw -1, score 127/256" || bad "--top 1 --json: ${OUT:0:300}"
expect 3 "a missing --input is I/O" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/absent.bin" --out "$TMP/o4.bin"
[ "$(grep -c "absent.bin" <<<"$ERR")" = 1 ] && ok "the missing input is named once" || bad "missing input: $ERR"
expect 3 "--out into a missing folder" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero490.bin" --out "$TMP/no/such/dir/o.bin"
contains "$ERR" "mkdir -p $TMP/no/such/dir" "gives the fix"
[ ! -e "$TMP/no" ] && ok "creates no folder" || bad "a folder was created"
expect 3 "existing --out refused" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero490.bin" --out "$TMP/out.bin"
contains "$ERR" "--force" "names --force"
head -c 491 /dev/zero > "$TMP/zero491.bin"
expect 2 "wrong input size" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero491.bin" --out "$TMP/out2.bin"
contains "$ERR" "is 491 bytes" "says the given size"
contains "$ERR" "takes exactly 490 bytes" "says the expected size (49*10)"
[ ! -e "$TMP/out2.bin" ] && ok "no output written" || bad "output written on error"
expect 2 "unknown option" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" --inptu x
expect 2 "unknown board" -- "$ERGON_BIN" model infer "$M/kws_ref_model.tflite" \
  --input "$TMP/zero490.bin" --out "$TMP/o3.bin" --board nrf52
expect 3 "not a model" -- "$ERGON_BIN" model info "$REFS"
contains "$ERR" "not a TFLite model" "says why"

# The workload: a short run measures the model; a bad input is refused
# before any measuring.
expect 0 "run tflite workload" -- "$ERGON_BIN" run --device host \
  --workload "tflite:$M/ad01_int8.tflite" --out "$TMP/run.json" "${SHORT[@]}"
grep -q '10 operators' "$TMP/run.json" && ok "report names the model's 10 operators" || bad "description"
expect 2 "run tflite workload, wrong input size" -- "$ERGON_BIN" run --device host \
  --workload "tflite:$M/ad01_int8.tflite,input=$TMP/zero491.bin" --out "$TMP/run2.json" "${SHORT[@]}"
contains "$ERR" "takes exactly 640 bytes" "names ad01's 640-byte input"
[ ! -e "$TMP/run2.json" ] && ok "no report on a refused workload" || bad "report written"
finish

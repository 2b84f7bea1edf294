# Sourced by test_kernels_qemu_models*.sh (not a test itself): check every
# conv, dwconv and fc layer of the models given as MODEL:LAYERS (the layer
# count from `ergon model info`) bit-exact on the emulated M55 for ref and
# mve, one timed iteration each.
kernels_qemu_models() {
  local spec model want S pass_ref pass_mve
  for spec in "$@"; do
    model=${spec%%:*}; want=${spec#*:}
    expect 0 "$model on qemu-an547, ref and mve" -- "$ERGON_BIN" kernels run --board qemu-an547 \
      --from-model "$M/$model.tflite" --impl ref,mve --iterations 1 --warmup 0 --out "$TMP/$model"
    S=$TMP/$model/samples.csv
    pass_ref=$(grep -c ',ref,pass,' "$S"); pass_mve=$(grep -c ',mve,pass,' "$S")
    [ "$pass_ref" = "$want" ] && [ "$pass_mve" = "$want" ] &&
      ok "$model: all $want layers bit-exact for ref and mve" ||
      bad "$model: ref pass $pass_ref, mve pass $pass_mve, wanted $want each"
    grep -q ',fail,' "$S" && bad "$model: a correctness failure: $(grep ',fail,' "$S" | head -3)" ||
      ok "$model: no correctness failure"
    python3 - "$TMP/$model/kernels.json" "$want" <<'PY' && ok "$model: refused none, every case in the artifact" || bad "$model: artifact"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["refused"] == [], a["refused"]
assert len(a["workloads"]) == int(sys.argv[2])
for c in a["kernels"]["cases"]:
    assert all(i["correct"] for i in c["impls"]), c["case"]
PY
  done
}

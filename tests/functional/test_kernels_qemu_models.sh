#!/usr/bin/env bash
# The MVE kernels bit-exact with REF and with the oracle on every conv,
# dwconv and fc layer of the other three MLPerf Tiny models (kws is in
# test_kernels_qemu_cli), checked on the emulated Cortex-M55: ad01 (10
# fully connected layers), vww (14 conv, 13 dwconv, 1 fc; 8-channel and
# stride-2 layers), resnet (9 conv incl. 1x1 stride-2 shortcuts, 1 fc).
# One timed iteration each: this test is about correctness, not counts.
# Needs arm-none-eabi-gcc and qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

# Layer counts from `ergon model info` of each fixture.
for spec in ad01_int8:10 vww_96_int8:28 pretrainedResnet_quant:10; do
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
finish

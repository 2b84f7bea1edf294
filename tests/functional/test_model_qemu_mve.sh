#!/usr/bin/env bash
# The interpreter built with the Helium (MVE) kernels for the M55
# (ERGON_TFL_KERNELS=mve: -DERT_TFL_MVE=1, recorded in the build) gives the
# host build's outputs bit for bit on ad01 and kws (resnet and vww:
# test_model_qemu_mve_big, which runs this script with MVE_MODELS set), and
# an unknown kernel set is refused. Needs arm-none-eabi-gcc and
# qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

# The interpreter with the MVE kernels: MLPerf Tiny outputs unchanged.
python3 - "$TMP" <<'PY'
import random, sys
random.seed(12)
for name, n in (("ad01", 640), ("kws", 490), ("resnet", 3072), ("vww", 27648)):
    open(f"{sys.argv[1]}/{name}.in", "wb").write(bytes(random.randrange(256) for _ in range(n)))
PY
for pair in ${MVE_MODELS:-ad01:ad01_int8 kws:kws_ref_model}; do
  short=${pair%%:*}; model=$M/${pair#*:}.tflite
  expect 0 "$short on the host" -- "$ERGON_BIN" model infer "$model" --input "$TMP/$short.in" --out "$TMP/$short.host"
  ERGON_TFL_KERNELS=mve expect 0 "$short on qemu-an547 with the MVE kernels" -- "$ERGON_BIN" model infer \
    "$model" --input "$TMP/$short.in" --out "$TMP/$short.m55" --board qemu-an547
  cmp -s "$TMP/$short.host" "$TMP/$short.m55" && ok "$short: host and M55 (MVE) outputs identical" || bad "$short differs"
  grep -q '"kernels": "mve"' "$TMP/$short.m55.an547/build-infer.json" && ok "$short: build records the MVE kernels" ||
    bad "$short: build-infer.json does not say mve"
  grep -q -- '-DERT_TFL_MVE=1' "$TMP/$short.m55.an547/build-infer.json" && ok "$short: built with -DERT_TFL_MVE=1" ||
    bad "$short: no -DERT_TFL_MVE=1 in the command"
done
[ -n "${MVE_MODELS:-}" ] && finish
ERGON_TFL_KERNELS=neon expect 2 "an unknown kernel set refused" -- "$ERGON_BIN" model infer \
  "$M/ad01_int8.tflite" --input "$TMP/ad01.in" --out "$TMP/x.m55" --board qemu-an547
contains "$ERR" "ERGON_TFL_KERNELS=neon: unknown kernel set (ref or mve)" "names the choices"
finish

#!/usr/bin/env bash
# The MVE kernels bit-exact with REF and with the oracle on every conv,
# dwconv and fc layer of vww_96_int8 (14 conv, 13 dwconv, 1 fc; 8-channel
# and stride-2 layers), checked on the emulated Cortex-M55.
# One timed iteration each: this test is about correctness, not counts.
# Needs arm-none-eabi-gcc and qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/kernels_qemu_models_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

# Layer counts from `ergon model info`.
kernels_qemu_models vww_96_int8:28
finish

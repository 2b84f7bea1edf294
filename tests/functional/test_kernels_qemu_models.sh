#!/usr/bin/env bash
# The MVE kernels bit-exact with REF and with the oracle on every conv,
# dwconv and fc layer of ad01 (10 fully connected layers) and resnet (9
# conv incl. 1x1 stride-2 shortcuts, 1 fc), checked on the emulated
# Cortex-M55 (kws: test_kernels_qemu_cli; vww: test_kernels_qemu_models_vww).
# One timed iteration each: this test is about correctness, not counts.
# Needs arm-none-eabi-gcc and qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/kernels_qemu_models_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

# Layer counts from `ergon model info` of each fixture.
kernels_qemu_models ad01_int8:10 pretrainedResnet_quant:10
finish

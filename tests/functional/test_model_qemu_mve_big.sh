#!/usr/bin/env bash
# The interpreter built with the Helium (MVE) kernels for the M55 gives the
# host build's outputs bit for bit on resnet and vww (ad01 and kws, and the
# refusal of an unknown kernel set: test_model_qemu_mve, whose steps this
# runs on the two larger models).
MVE_MODELS="resnet:pretrainedResnet_quant vww:vww_96_int8" \
  exec bash "$(dirname "$0")/test_model_qemu_mve.sh"

#!/usr/bin/env bash
# Emulated instructions per inference of each MLPerf Tiny model on the
# Cortex-M55 build (QEMU mps3-an547, -icount): ergon profile MODEL.tflite
# --board qemu-an547, summed over the layers. Emulated instructions, not
# cycles. Needs arm-none-eabi-gcc and qemu-system-arm.
#   bench/bench_tfl_m55.sh [BUILD] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
out=${2:-$(mktemp -d /tmp/ergon-m55-XXXXXX)}
M=${ERGON_SHARED_DIR:-../shared}/fixtures/models
for m in ad01_int8 kws_ref_model pretrainedResnet_quant vww_96_int8; do
  "$build/ergon" profile "$M/$m.tflite" --board qemu-an547 --out "$out/$m" --force >/dev/null 2>&1 || true
  python3 - "$out/$m/summary.json" "$m" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["profile"]["emulated_instruction_count"]
macs = d["model"]["macs"]
tot = e["total_per_inference"]
print(f"m55 {sys.argv[2]:24s} layers={len(d['profile']['layers'])} emulated_instructions={tot} "
      f"macs={macs} per_mac={tot / macs:.2f} bit_exact={d['correctness']['bit_exact']} "
      f"text_sha256={d['model']['builds'][0]['elf_sha256'][:12]}")
PY
done

#!/usr/bin/env bash
# The Helium (MVE) kernels against the portable ones (REF) on every conv,
# dwconv and fc layer of the four MLPerf Tiny models, on the emulated
# Cortex-M55 (QEMU mps3-an547, -icount): ergon kernels run --board
# qemu-an547 --impl ref,mve. Per model: cases, correctness failures, the
# geometric mean of the per-layer speedups (not a model latency), the
# smallest and largest speedup, and the layers' summed mean counts for REF
# and MVE with their ratio. Emulated instructions, not cycles; the counts
# are deterministic, so the machine only changes the wall time. Needs
# arm-none-eabi-gcc and qemu-system-arm.
#   bench/bench_kernels_qemu.sh [BUILD] [OUTDIR] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
out=${2:-$(mktemp -d /tmp/ergon-kq-XXXXXX)}
it=${3:-3}
M=${ERGON_SHARED_DIR:-../shared}/fixtures/models
for m in ad01_int8 kws_ref_model pretrainedResnet_quant vww_96_int8; do
  t0=$(date +%s.%N)
  "$build/ergon" kernels run --board qemu-an547 --from-model "$M/$m.tflite" --impl ref,mve \
    --iterations "$it" --warmup 1 --out "$out/$m" --force >/dev/null
  t1=$(date +%s.%N)
  python3 - "$out/$m/kernels.json" "$m" "$t0" "$t1" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
ref = mve = 0.0
sp, fails = [], 0
for c in k["cases"]:
    im = {x["impl"]: x for x in c["impls"]}
    fails += sum(1 for x in c["impls"] if not x["correct"])
    ref += im["ref"]["mean"]
    mve += im["mve"]["mean"]
    sp += [s["speedup"] for s in c["speedups"]]
g = {x["impl"]: x for x in k["geomean"]}["mve"]["speedup"]
print(f"kernels {sys.argv[2]:24s} cases={len(k['cases'])} fail={fails} geomean={g:.3f}x "
      f"min={min(sp):.3f}x max={max(sp):.3f}x sum_ref={ref:.0f} sum_mve={mve:.0f} "
      f"sum_ratio={ref / mve:.3f}x unit={k['unit']} wall_s={float(sys.argv[4]) - float(sys.argv[3]):.1f}")
PY
done

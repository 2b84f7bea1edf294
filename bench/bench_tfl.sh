#!/usr/bin/env bash
# Host interpreter latency vs LiteRT.js in the same session, per MLPerf Tiny
# model, and the ratio of medians. Needs a Release build (BUILD, default
# build-rel) and `npm install @litertjs/core` in the repository root.
#   bench/bench_tfl.sh [BUILD] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
n=${2:-30}
M=${ERGON_SHARED_DIR:-../shared}/fixtures/models
models=("$M/ad01_int8.tflite" "$M/kws_ref_model.tflite" "$M/pretrainedResnet_quant.tflite" "$M/vww_96_int8.tflite")
ours=$("$build/bench/bench_tfl_models" -n "$n" "${models[@]}")
theirs=$(node bench/bench_litert.mjs "$n" "${models[@]}")
echo "$ours"
echo "$theirs"
join <(echo "$ours" | awk '{split($4,a,"="); print $2, a[2]}' | sort) \
     <(echo "$theirs" | awk '{split($4,a,"="); print $2, a[2]}' | sort) |
  awk '{printf "ratio %-32s ergon/litert median = %.2f\n", $1, $2 / $3}'

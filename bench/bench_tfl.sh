#!/usr/bin/env bash
# Host interpreter latency against LiteRT.js (XNNPack, WebAssembly SIMD, one
# thread) on the four MLPerf Tiny models, in interleaved rounds so that the
# load of a shared machine falls on every variant alike:
#   each round, each model: ergon (default path: the best SIMD the CPU has),
#   ergon with ERGON_TFL_SIMD=portable, a baseline build's ergon (BASE, if
#   given), LiteRT.js; each N runs on input xs1, median and minimum ms.
# The figure per variant is the faster of the rounds' medians; ratios are
# against LiteRT.js's. Then end to end, as a user runs it: `ergon run
# --workload tflite:MODEL` (one 3 s window, saturated) for the same ergon
# variants, interleaved, p50 latency per invocation from the report.
# Needs Release builds and `npm install --no-save @litertjs/core@2.5.3` in
# the repository root (node_modules/ is git-ignored; nothing is fetched at
# run time).
#   bench/bench_tfl.sh [BUILD] [N] [ROUNDS] [BASE_BUILD]
# BASE_TFL_SIMD=portable (say) runs the baseline build on that kernel path
# (ERGON_TFL_SIMD), to compare a portable path with the one before it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
n=${2:-300}
rounds=${3:-3}
base=${4:-}
M=${ERGON_SHARED_DIR:-../shared}/fixtures/models
models=(ad01_int8 kws_ref_model pretrainedResnet_quant vww_96_int8)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  for m in "${models[@]}"; do
    f="$M/$m.tflite"
    "$build/bench/bench_tfl_models" -n "$n" "$f" | sed "s/^ergon/$r ergon/" >>"$out/inner"
    ERGON_TFL_SIMD=portable "$build/bench/bench_tfl_models" -n "$n" "$f" |
      sed "s/^ergon/$r portable/" >>"$out/inner"
    if [ -n "$base" ]; then
      ERGON_TFL_SIMD=${BASE_TFL_SIMD:-} "$base/bench/bench_tfl_models" -n "$n" "$f" |
        sed "s/^ergon/$r base/" >>"$out/inner"
    fi
    node bench/bench_litert.mjs "$n" "$f" | sed "s/^litert/$r litert/" >>"$out/inner"
  done
done
variants=(ergon portable)
[ -n "$base" ] && variants+=(base)
for r in $(seq 1 "$rounds"); do
  for m in "${models[@]}"; do
    for v in "${variants[@]}"; do
      bin="$build/ergon"
      env=()
      [ "$v" = portable ] && env=(ERGON_TFL_SIMD=portable)
      [ "$v" = base ] && bin="$base/ergon" && env=(ERGON_TFL_SIMD=${BASE_TFL_SIMD:-})
      rm -f "$out/run.json"
      # Under load a run may be judged NOT VALID (exit 1); its report still
      # holds every invocation's latency.
      env "${env[@]}" "$bin" run --device host --workload "tflite:$M/$m.tflite" --idle-s 0.5 \
        --windows 1 --window-s 3 --out "$out/run.json" >/dev/null 2>&1 || [ -s "$out/run.json" ]
      python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["figures"]["latency"];
print(sys.argv[2], sys.argv[3], sys.argv[4], "%.4f" % (l["p50_s"] * 1e3), l["count"])' \
        "$out/run.json" "$r" "$v" "$m.tflite" >>"$out/e2e"
    done
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg); default path: $(grep -o 'path=[a-z0-9.]*' "$out/inner" | sort -u | tr '\n' ' ')"
python3 - "$out/inner" "$out/e2e" <<'EOF'
import sys, collections
inner = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split('=') for x in f[3:] if '=' in x)
    inner[(f[2], f[1])].append((float(kv['median_ms']), float(kv['min_ms'])))
models = sorted({m for m, _ in inner}, key=lambda m: ['ad01', 'kws_', 'pret', 'vww_'].index(m[:4]))
vs = [v for v in ('ergon', 'portable', 'base') if (models[0], v) in inner]
print('inner loop (bench_tfl_models / bench_litert.mjs): median ms per round, best median, ratio to LiteRT.js')
for m in models:
    lit = min(x[0] for x in inner[(m, 'litert')])
    for v in vs + ['litert']:
        meds = [x[0] for x in inner[(m, v)]]
        print('%-32s %-8s rounds %-26s best %.3f  min %.3f  x LiteRT %.2f' % (
            m, v, ' '.join('%.3f' % x for x in meds), min(meds),
            min(x[1] for x in inner[(m, v)]), min(meds) / lit))
e2e = collections.defaultdict(list)
for line in open(sys.argv[2]):
    r, v, m, p50, cnt = line.split()
    e2e[(m, v)].append(float(p50))
print('end to end (ergon run --workload tflite:MODEL, 3 s saturated): p50 ms per round, best')
for m in models:
    for v in vs:
        x = e2e[(m, v)]
        extra = ''
        if v != 'ergon':
            extra = '  x ergon %.2f' % (min(x) / min(e2e[(m, 'ergon')]))
        print('%-32s %-8s rounds %-26s best %.4f%s' % (m, v, ' '.join('%.4f' % y for y in x), min(x), extra))
EOF

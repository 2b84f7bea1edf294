#!/usr/bin/env bash
# The main job on the built-in default: build ergon, run a one-minute
# sustained-load measurement on the synthetic instrument with a built-in
# workload, print the terminal summary, write the report and verify it;
# then `ergon profile --board sim --power` (PMU stage + gated power stage on
# the virtual bench) and its Power table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DERGON_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
out=${ERGON_DEMO_OUT:-demo-run}
mkdir -p "$out"
# Deterministic: the synthetic instrument's scenario sets each invocation's
# duration (work_s = 10 ms, 1/(1-drop) longer once the emulated throttle
# starts 30 s into the load), so the throughput follows the synthetic
# thermal model and not this machine's load: THROTTLED every time
# (100 ops/s in window 0, 73 in window 3, 60 after: 25 points below the
# 85 % threshold, so even a host stall of a second cannot flip it). The summary says
# SYNTHETIC; tests/functional/test_run_synthetic_clock.c checks the
# mechanism exactly in simulated time, test_demo_deterministic.sh runs
# this scenario time-scaled through the CLI.
build/ergon run --device demo-board --instrument synthetic \
  --instrument-opt work_s=0.01 --instrument-opt throttle_s=30 --instrument-opt drop=0.4 \
  --workload builtin:spin,iters=1000 \
  --idle-s 5 --windows 6 --window-s 9 --out "$out/report.json" --force | tee "$out/summary.txt"
grep -q "sustained   : THROTTLED" "$out/summary.txt" ||
  { echo "demo.sh: expected a THROTTLED verdict (see $out/summary.txt)" >&2; exit 1; }
build/ergon verify "$out/report.json"
# The export: energy per operation above idle (energy-model/v1); synthetic
# figures are exported only when asked, and the model says synthetic.
build/ergon energy-model "$out/report.json" --action inference --allow-synthetic \
  --out "$out/model.json" --force
# The other half: the two-stage profile (per-layer PMU counters, then the
# gated power measurement) on the virtual bench, with its Power table.
build/ergon profile --board sim --power --out "$out/profile" --force

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
build/ergon run --device demo-board --instrument synthetic --workload builtin:spin \
  --idle-s 5 --windows 6 --window-s 9 --out "$out/report.json" --force
build/ergon verify "$out/report.json"
# The other half: the two-stage profile (per-layer PMU counters, then the
# gated power measurement) on the virtual bench, with its Power table.
build/ergon profile --board sim --power --out "$out/profile" --force

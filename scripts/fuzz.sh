#!/usr/bin/env bash
# Build every libFuzzer target under tests/fuzz/ with clang and run each for
# SECONDS (default 60) from its seed corpus. Findings land in
# build-fuzz/findings/<target>/ and fail the script.
#   scripts/fuzz.sh 600          ten minutes each (before resolving an issue)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERGON_FUZZ=ON \
      -DERGON_TESTS=OFF -DERGON_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
status=0
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  corpus=build-fuzz/corpus/$name
  mkdir -p "$corpus" "build-fuzz/findings/$name"
  seeds=tests/fuzz/corpus/$name
  [ -d "$seeds" ] || seeds=""
  echo "fuzz: $name for ${secs}s"
  if ! build-fuzz/"$name" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="build-fuzz/findings/$name/" -print_final_stats=1 \
       "$corpus" $seeds > "build-fuzz/$name.log" 2>&1; then
    echo "fuzz: $name FOUND A CRASH; see build-fuzz/$name.log and build-fuzz/findings/$name/"
    tail -40 "build-fuzz/$name.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build-fuzz/$name.log" | tr '\n' ' '
    echo
  fi
done
exit $status

#!/usr/bin/env bash
# Build the whole tree (library, CLI, target, sim, tests, benchmarks) in every
# CMake build type with GCC and with clang, warnings as errors. Each build
# goes to build-matrix/<compiler>-<type>; failures are collected (ninja -k 0)
# and listed at the end. Slow (eight full builds): run it before changing
# compiler flags or after a toolchain upgrade; CI builds Debug+sanitizers and
# Release with GCC (scripts/test.sh).
#   scripts/build_matrix.sh                       everything
#   COMPILERS="clang" TYPES="Release" scripts/build_matrix.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
failed=()
for cc in ${COMPILERS:-gcc clang}; do
  for type in ${TYPES:-Debug Release RelWithDebInfo MinSizeRel}; do
    dir=build-matrix/$cc-$type
    log=$dir.log
    mkdir -p build-matrix
    echo "== $cc $type -> $dir"
    if ! { cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DCMAKE_C_COMPILER="$cc" \
             -DERGON_SHARED_DIR="${ERGON_SHARED_DIR:-$root/../shared}" "${launcher[@]}" &&
           cmake --build "$dir" -j "$jobs" -- -k 0; } >"$log" 2>&1; then
      failed+=("$cc-$type")
      grep -E "error:|FAILED:" "$log" | head -20
    fi
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "build_matrix.sh: failed: ${failed[*]} (logs in build-matrix/*.log)"
  exit 1
fi
echo "build_matrix.sh: every build type built with every compiler"

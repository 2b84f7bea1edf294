#!/usr/bin/env bash
# The test command (README, .ci/run): install what is needed, build with
# AddressSanitizer + UndefinedBehaviorSanitizer, run every test with ctest,
# then a short smoke pass of every libFuzzer target.
#   scripts/test.sh             everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the fuzz smoke pass
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/bootstrap.sh

# A throw-away PostgreSQL server on loopback (scripts/pg_start.sh) for the
# `ergon db` PostgreSQL tests, unless ERGON_PG_URL already names one.
if [ -z "${ERGON_PG_URL:-}" ]; then
  eval "$(scripts/pg_start.sh)"
  trap 'scripts/pg_stop.sh "$ERGON_PG_DIR"' EXIT
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DERGON_SANITIZE=ON \
      -DERGON_SHARED_DIR="${ERGON_SHARED_DIR:-$root/../shared}" >/dev/null
cmake --build build-asan -j "$jobs"
# No blanket retry: a test passes on its first run or the run fails. The
# tiers (ctest labels, cmake/ErgonTests.cmake):
#   main      everything not labelled walltime, run once;
#   walltime  tests that still depend on wall-clock time, each with its
#             reason (ERGON_WALLTIME_TESTS; empty today, and then skipped),
#             run once and reported on their own.
# There is no flaky tier: no test is retried, ever.
# A test that reports itself skipped (exit 77, SKIP_RETURN_CODE) fails the
# run unless its name is in ERGON_ALLOWED_SKIPS (space-separated): the
# bootstrap installs python3, qemu-system-arm and script(1), so on CI
# nothing is expected to skip.
tier() { # tier LABEL-ARGS...: runs ctest, keeps its output in $tier_log
  tier_log=$(mktemp)
  set +e
  (cd build-asan && ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$tier_log"
  tier_rc=${PIPESTATUS[0]}
  set -e
}
# Names ctest lists under "did not run" / "FAILED" with the given status.
listed() { sed -nE "s/^[[:space:]]+[0-9]+ - (.+) \(($1)\)\$/\1/p" "$tier_log"; }
unexpected_skips=""
check_skips() {
  for t in $(listed 'Skipped|Not Run'); do
    case " ${ERGON_ALLOWED_SKIPS:-} " in
      *" $t "*) echo "test.sh: $t skipped (allowed by ERGON_ALLOWED_SKIPS)" ;;
      *) echo "test.sh: UNEXPECTED SKIP: $t (install what it names: scripts/bootstrap.sh)"
         unexpected_skips="$unexpected_skips $t" ;;
    esac
  done
}

tier -LE '^walltime$'
main_rc=$tier_rc
check_skips

walltime_rc=0
# The count from ctest's own total (no `grep -q`: under pipefail its early
# exit could SIGPIPE ctest and read as an empty tier).
walltime_n=$(cd build-asan && ctest -N -L '^walltime$' | sed -n 's/^Total Tests: *//p')
if [ "${walltime_n:-0}" -gt 0 ]; then
  echo "test.sh: walltime tier (tests that need real wall-clock time, run once)"
  tier -L '^walltime$'
  walltime_rc=$tier_rc
  check_skips
else
  echo "test.sh: walltime tier empty (no test needs real wall-clock time)"
fi
echo "test.sh: main tier rc=$main_rc, walltime tier rc=$walltime_rc"
if [ "$main_rc" -ne 0 ] || [ "$walltime_rc" -ne 0 ]; then
  echo "test.sh: tests failed"
  exit 1
fi
if [ -n "$unexpected_skips" ]; then
  echo "test.sh: tests that should have run were skipped:$unexpected_skips"
  exit 1
fi

# Release (-O3): GCC's warnings differ there (format truncation,
# maybe-uninitialized) and -Werror makes them build breaks, so the whole tree
# -- tests and benchmarks included -- is built optimised too, and the tests
# of what a user installs (the install into a temporary prefix with its
# consumers, the man pages) run on the optimised build. The other build types
# and clang: scripts/build_matrix.sh.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DERGON_SHARED_DIR="${ERGON_SHARED_DIR:-$root/../shared}" >/dev/null
cmake --build build-release -j "$jobs"
(cd build-release && ctest --output-on-failure -R 'functional/test_(install|man_pages)$')

# The portable paths: hosts without SSE2/SSE4.2 (a Jetson's arm64, say)
# run the scalar code behind the HPX line splitter and row fast path, the
# JCS value skipper and the JLS CRC32C. ERGON_NO_SIMD compiles the x86
# paths out, and the tests of those parsers run again on what is left.
portable_tests="hpx_fast_rows hpx_early hpx_median hpx_fixtures hpx_semantics jcs jcs_stream jls_crc32c power_jls_fixtures verify_stream"
cmake -S . -B build-portable -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-DERGON_NO_SIMD \
      -DERGON_SHARED_DIR="${ERGON_SHARED_DIR:-$root/../shared}" >/dev/null
# shellcheck disable=SC2046
cmake --build build-portable -j "$jobs" --target $(printf 'unit_test_%s ' $portable_tests)
(cd build-portable && ctest --output-on-failure \
  -R "^unit/test_($(echo "$portable_tests" | tr ' ' '|'))\$")

if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
  scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
fi
echo "test.sh: all tests passed"

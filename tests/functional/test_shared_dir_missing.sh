#!/usr/bin/env bash
# Without the shared fixtures a fixture test fails with a message that names
# the missing path and ERGON_SHARED_DIR (instead of an assertion about a
# NULL buffer), and configuring without them warns once.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_BUILD_DIR:?}" "${ERGON_SOURCE_DIR:?}"
exe=$ERGON_BUILD_DIR/unit_test_hpx_fixtures
[ -x "$exe" ] || bad "no $exe (the fixture test this checks)"
ERGON_SHARED_DIR=$TMP/nowhere "$exe" >"$TMP/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && ok "fixture test fails without the fixtures (exit $rc)" || bad "it passed without fixtures"
contains "$(cat "$TMP/out")" "$TMP/nowhere/fixtures does not exist" "names the missing path"
contains "$(cat "$TMP/out")" "ERGON_SHARED_DIR" "names ERGON_SHARED_DIR"
ERGON_SHARED_DIR=$TMP/nowhere bash "$ERGON_SOURCE_DIR/tests/functional/test_hpx_capture_stdin.sh" >"$TMP/sh" 2>&1 &&
  bad "shell fixture test passed without fixtures" || ok "shell fixture test fails too"
contains "$(cat "$TMP/sh")" "$TMP/nowhere/fixtures/hpx/legacy.hpx.txt" "shell test names the path"
# Configure (only the configure step, in a scratch build dir) warns once.
cmake -S "$ERGON_SOURCE_DIR" -B "$TMP/cfg" -DERGON_SHARED_DIR="$TMP/nowhere" -DERGON_BENCH=OFF >"$TMP/cfg.log" 2>&1
n=$(grep -c "ERGON_SHARED_DIR=$TMP/nowhere: no fixtures/ folder there" "$TMP/cfg.log")
[ "$n" = 1 ] && ok "configure warns once" || { bad "configure warned $n times"; tail -20 "$TMP/cfg.log"; }
finish

# Helpers for the run functional tests (sourced, not a test itself).
set -u
: "${ERGON_BIN:?ERGON_BIN must point at the ergon CLI}"
TMP=$(mktemp -d /tmp/ergon-test-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
# expect CODE DESCRIPTION -- command...: run, keep stdout/stderr in $OUT/$ERR.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  OUT=$(cat "$TMP/out")
  ERR=$(cat "$TMP/err")
  if [ "$got" = "$want" ]; then ok "$what (exit $got)"; else
    bad "$what: exit $got, wanted $want"; echo "$OUT" | head -20; echo "$ERR" | head -20; fi
}
contains() { # contains HAYSTACK NEEDLE WHAT
  case "$1" in *"$2"*) ok "$3";; *) bad "$3: '$2' not found"; echo "$1" | head -20;; esac
}
# skip_section WHAT: a section that cannot run here. finish then exits 77
# (ctest's SKIP_RETURN_CODE, cmake/ErgonTests.cmake): a skip is reported as
# a skip, never as a pass; a failure elsewhere still fails the test.
skipped=""
skip_section() { echo "SKIP: $1"; skipped="${skipped:+$skipped; }$1"; }
finish() {
  if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
  if [ -n "$skipped" ]; then echo "SKIPPED: $skipped (everything else passed)"; exit 77; fi
  echo "all passed"
}
# A short run: 0.2 s idle, 3 windows of 0.25 s.
SHORT=(--idle-s 0.2 --windows 3 --window-s 0.25 --sample-hz 500)

#!/usr/bin/env bash
# run, verify and energy-model start, answer --help, and are listed.
set -u
: "${ERGON_BIN:?}"
fails=0
for c in run verify energy-model; do
  "$ERGON_BIN" "$c" --help | grep -q "Usage: ergon $c" || { echo "FAIL: $c --help"; fails=1; }
  "$ERGON_BIN" --help | grep -q "^  $c " || { echo "FAIL: $c not listed"; fails=1; }
done
"$ERGON_BIN" verify >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: verify without a file is not a usage error"; fails=1; }
exit $fails

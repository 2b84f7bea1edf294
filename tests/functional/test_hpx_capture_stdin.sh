#!/usr/bin/env bash
# `ergon capture --transport -` reads stdin, keeps the raw log byte for byte
# and writes the profile; a truncated stream is kept and marked incomplete.
set -euo pipefail
: "${ERGON_BIN:?}" "${ERGON_SHARED_DIR:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fx="$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt"
[ -e "$fx" ] || { echo "FAIL - shared fixture not found: $fx; clone the shared fixtures beside" \
  "the checkout (../shared) or configure with -DERGON_SHARED_DIR=/path/to/shared" >&2; exit 1; }
"$ERGON_BIN" capture --transport - --out "$tmp/a" < "$fx" > "$tmp/a.out"
cmp "$tmp/a/capture.log" <(head -c "$(stat -c %s "$tmp/a/capture.log")" "$fx")
grep -q '"end": "sentinel"' "$tmp/a/summary.json"
# legacy (reference): 6 layers, layer 1 median cycles 349068.5
q() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
[ "$(q "$tmp/a/summary.json" "len(d['profile']['layers'])")" = 6 ]
[ "$(q "$tmp/a/summary.json" "d['profile']['layers'][1]['cycles']")" = 349068.5 ]
# Truncated: everything before the END line only.
grep -v -- '--- HPX_END ---' "$fx" > "$tmp/trunc.log"
rc=0
"$ERGON_BIN" capture --transport - --out "$tmp/b" < "$tmp/trunc.log" > "$tmp/b.out" || rc=$?
[ "$rc" = 4 ]  # complete iterations are kept: degraded (exit 4), not invalid
cmp "$tmp/b/capture.log" "$tmp/trunc.log"
codes="$(q "$tmp/b/summary.json" "' '.join(i['code'] for i in d['issues'])")"
grep -qw capture.incomplete <<<"$codes"
grep -qw pmu.incomplete <<<"$codes"
[ "$(q "$tmp/b/summary.json" "d['profile']['capture']['end']")" = end_of_source ]
echo ok

#!/usr/bin/env bash
# `ergon capture --transport -` reads stdin, keeps the raw log byte for byte
# and writes the profile; a truncated stream is kept and marked incomplete.
set -euo pipefail
: "${ERGON_BIN:?}" "${ERGON_SHARED_DIR:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fx="$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt"
"$ERGON_BIN" capture --transport - --out "$tmp/a" < "$fx" > "$tmp/a.out"
cmp "$tmp/a/capture.log" <(head -c "$(stat -c %s "$tmp/a/capture.log")" "$fx")
grep -q '"end": "sentinel"' "$tmp/a/summary.json"
# legacy (reference): 6 layers, layer 1 median cycles 349068.5
[ "$(jq '.profile.layers | length' "$tmp/a/summary.json")" = 6 ]
[ "$(jq '.profile.layers[1].cycles' "$tmp/a/summary.json")" = 349068.5 ]
# Truncated: everything before the END line only.
grep -v -- '--- HPX_END ---' "$fx" > "$tmp/trunc.log"
rc=0
"$ERGON_BIN" capture --transport - --out "$tmp/b" < "$tmp/trunc.log" > "$tmp/b.out" || rc=$?
[ "$rc" = 0 ]  # complete iterations are kept: degraded, not invalid
cmp "$tmp/b/capture.log" "$tmp/trunc.log"
jq -e '.issues | map(.code) | index("capture.incomplete") != null' "$tmp/b/summary.json" >/dev/null
jq -e '.issues | map(.code) | index("pmu.incomplete") != null' "$tmp/b/summary.json" >/dev/null
[ "$(jq -r '.profile.capture.end' "$tmp/b/summary.json")" = end_of_source ]
echo ok

#!/usr/bin/env bash
# Fault injection on `ergon verify` (docs/RELIABILITY.md, issue 19: "out of
# memory is reported as such"): every allocation from main() on is made to
# fail in turn (tests/support/faultinj/) while verifying an intact report.
# Each time verify must either verify it (exit 0) or fail with exit 3
# saying out of memory; never call the intact report edited or invalid
# (exit 1, "FAILED"), never crash or trip a sanitizer.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
"$ERGON_BIN" run --device d --workload builtin:periodic,burst_ms=1,sleep_ms=0 --release-hz 50 \
  --sampler inline --sample-hz 40 --idle-s 0.0625 --windows 1 --window-s 0.05 --quiet \
  --out "$TMP/r.json" >/dev/null || bad "the report to verify"

check_verify() { # RC DIR N
  local rc=$1 dir=$2
  if [ "$rc" -ge 128 ]; then echo "  killed by signal $((rc - 128))"; return 1; fi
  if grep -q "AddressSanitizer\|runtime error:\|LeakSanitizer" "$dir/stderr"; then
    echo "  sanitizer report"; return 1
  fi
  [ "$rc" = 0 ] && return 0
  if [ "$rc" = 3 ] && grep -q "out of memory" "$dir/stderr"; then return 0; fi
  echo "  exit $rc: $(head -1 "$dir/stderr")"; return 1
}

FAULTINJ_KINDS=alloc fi_walk "ergon verify" main check_verify -- "$ERGON_BIN" verify "$TMP/r.json"
[ "$FI_RUNS" -gt 500 ] || bad "the walk ran $FI_RUNS faults, not the ~670 allocations of a verify"
finish

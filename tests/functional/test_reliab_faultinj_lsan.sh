#!/usr/bin/env bash
# LeakSanitizer in the fault-injection walks (tests/support/faultinj/,
# docs/RELIABILITY.md "Fault injection", issue 38).
#
# 1. A real leak in ergon's own code is caught. ergon_leak_probe leaks one
#    allocation made by libergon (ergon_dynbuf, tests/support/faultinj/
#    leak_probe.c); run exactly as the walks run a command (fi_run: the
#    shim preloaded, the walks' ASAN_OPTIONS and LSAN_OPTIONS with
#    lsan.supp), it must exit non-zero with "LeakSanitizer: detected memory
#    leaks" and one leaked allocation, also with symbolize=0 (a machine
#    without any symbols: what a fresh Debian 12 has for libc, no
#    libc6-dbg), and the same program that frees it must pass. This is the
#    check that fails when a suppression hides ergon's leaks: a module
#    suppression such as leak:libc.so.6 (every stack that reaches main has
#    __libc_start_call_main) or leak:libergon_faultinj.so (every allocation
#    passes the shim's malloc) in lsan.supp makes section 1 fail, symbols
#    or not; so does LeakSanitizer switched off (detect_leaks=0).
#
# 2. glibc's setlocale under the walk leaks nothing. glibc's setlocale
#    (LC_CTYPE, "") leaks 5 bytes (_nl_normalize_codeset) when one of its
#    own allocations after the codeset's normalisation fails; the shim now
#    counts setlocale as one call and counts nothing inside it (faultinj.c),
#    so it is never failed from within. This section walks every counted
#    call of `ergon --version` (main's setlocale first) under a locale with
#    a codeset (C.UTF-8, which makes glibc normalise "UTF-8") with NO
#    suppressions at all, so it does not depend on symbols: remove the
#    setlocale interception from faultinj.c and the walk counts glibc's ~22
#    allocations inside setlocale, and the runs that fail the 9th and 10th
#    report the 5-byte leak: the walk fails ("LeakSanitizer"), on any
#    machine, and the trace check below fails too (call 1 is then malloc).
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
PROBE="$ERGON_BUILD_DIR/faultinj/ergon_leak_probe"
[ -x "$PROBE" ] || { bad "no leak probe at $PROBE (target ergon_leak_probe)"; finish; }
export LC_ALL=C.UTF-8

# --- 1. the planted leak, with the walks' own settings --------------------
# LeakSanitizer exists only in a sanitized build (scripts/test.sh builds
# one); a plain build reports this test skipped, as build/sanitizers does.
if ! grep -q "__asan_init" "$PROBE" 2>/dev/null; then
  skip_section "LeakSanitizer checks: this build is not sanitized (-DERGON_SANITIZE=ON)"
  finish
fi
fi_run "$TMP/free" 0 main -- "$PROBE" free
rc=$?
if [ "$rc" = 0 ] && ! grep -q "Sanitizer" "$TMP/free/stderr"; then
  ok "the probe that frees its text passes under the walks' settings (exit 0, no report)"
else
  bad "the probe that frees its text: exit $rc"; head -20 "$TMP/free/stderr"
fi
[ "$(fi_field "$TMP/free" calls)" -ge 1 ] 2>/dev/null &&
  ok "the shim was in the probe ($(fi_field "$TMP/free" calls) counted calls)" ||
  bad "the shim counted nothing in the probe (was it preloaded?)"

planted() { # planted WHAT EXTRA-ASAN-OPTIONS
  local what=$1 dir="$TMP/leak-$2" rc
  FI_ASAN="$FI_ASAN$2" fi_run "$dir" 0 main -- "$PROBE" leak
  rc=$?
  if [ "$rc" != 0 ] && grep -q "ERROR: LeakSanitizer: detected memory leaks" "$dir/stderr" &&
    grep -q "SUMMARY: AddressSanitizer: [0-9]* byte(s) leaked in 1 allocation(s)" "$dir/stderr"; then
    ok "$what: the planted leak is reported (exit $rc, one leaked allocation)"
  else
    bad "$what: the planted leak in libergon was not reported (exit $rc): does lsan.supp hide ergon's own leaks, or is LeakSanitizer off?"
    head -20 "$dir/stderr"
  fi
}
planted "with symbols" ""
# Where symbols are there, the report names the allocation ergon made.
grep -q "in ergon_dynbuf_add" "$TMP/leak-/stderr" &&
  ok "with symbols: the report's stack names ergon_dynbuf_add" ||
  bad "with symbols: ergon_dynbuf_add not in the report's stack"
planted "without symbols (symbolize=0)" ":symbolize=0"

# --- 2. setlocale under the walk: no leak, no suppression -----------------
: >"$TMP/none.supp"
FI_LSAN="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TMP/none.supp"

# The trace of a run without a fault: main's setlocale is call 1, one call.
FAULTINJ_TRACE="$TMP/trace.txt" fi_run "$TMP/count" 0 main -- "$ERGON_BIN" --version
first=$(head -1 "$TMP/trace.txt" 2>/dev/null)
[ "$first" = "1 setlocale main" ] &&
  ok "main's setlocale is counted as one call (call 1)" ||
  bad "call 1 is '$first', not setlocale: the shim does not intercept setlocale"
[ "$(grep -c setlocale "$TMP/trace.txt")" = 1 ] &&
  ok "setlocale is counted once" || bad "setlocale counted $(grep -c setlocale "$TMP/trace.txt") times"

# Failing it: ergon sees setlocale fail (NULL) and carries on in the C locale.
fi_run "$TMP/fail1" 1 main -- "$ERGON_BIN" --version
rc=$?
[ "$(fi_field "$TMP/fail1" failed)" = setlocale ] && [ "$rc" = 0 ] &&
  grep -q "^ergon " "$TMP/fail1/stdout" && ! grep -q "Sanitizer" "$TMP/fail1/stderr" &&
  ok "with setlocale failed, ergon --version still prints its version (exit 0, no report)" ||
  { bad "setlocale failed: exit $rc, failed $(fi_field "$TMP/fail1" failed)"; head -10 "$TMP/fail1/stderr"; }

check_version() { # RC DIR N
  local rc=$1 dir=$2
  if grep -q "LeakSanitizer\|AddressSanitizer\|runtime error:" "$dir/stderr"; then
    echo "  sanitizer report:"; grep -m3 "LeakSanitizer\|leak of\|#2 " "$dir/stderr"; return 1
  fi
  [ "$rc" = 0 ] && grep -q "^ergon " "$dir/stdout" && return 0
  echo "  exit $rc: $(head -1 "$dir/stderr")"; return 1
}
fi_walk "ergon --version (C.UTF-8, no suppressions)" main check_version -- "$ERGON_BIN" --version
finish

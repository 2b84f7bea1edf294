#!/usr/bin/env bash
# One wire registry: every token the target runtime prints comes from
# target/include/ergon/wire.h. The check fails when a runtime source defines
# its own key macros (the old ERT_KEY_* block) or passes a string literal as
# a key, a heartbeat phase, a status/phase name or a CSV column to the
# emitter. It is run on the real tree (must pass) and on a copy with one
# literal injected (must fail), so it cannot pass vacuously.
set -euo pipefail
root="${ERGON_SOURCE_DIR:?}"

check() { # $1: a target/ tree
  local t="$1" bad=0
  if grep -rnE '#define[[:space:]]+ERT_(KEY|HB|CSV_COL)_' "$t/include" "$t/src"; then
    echo "token macros outside wire.h (move them to wire.h as HPX_*)" >&2; bad=1
  fi
  # Emitter calls whose key/phase argument is a literal.
  if grep -nE '(ert_hpx_meta_[us]|ert_hpx_heartbeat|kv_[us]|ert_hpx_marker(_u)?)\([^,]+,[[:space:]]*"' "$t"/src/*.c; then
    echo "a literal key in an emitter call: use the wire.h macro" >&2; bad=1
  fi
  # Names that travel on the wire (status, phase, capability values).
  if grep -nE 'return[[:space:]]+"[a-z_0-9]+";' "$t"/src/status.c "$t"/src/power.c; then
    echo "a literal wire name: use HPX_ERR_* / HPX_PT_PHASE_*" >&2; bad=1
  fi
  if grep -nE '"(present|missing|auto|fixed|busy_loop|ina228)"' "$t"/src/*.c; then
    echo "a literal wire value: use HPX_VAL_* / HPX_WINDOW_MODE_* / HPX_PT_SOURCE_*" >&2; bad=1
  fi
  return $bad
}

check "$root/target" || { echo "FAIL: the runtime prints tokens outside wire.h" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for inject in 's/HPX_KEY_CLEAN_STALLED_ITERS, w->stalled_iters/"CLEAN_STALLED_ITERS", w->stalled_iters/' \
              's/HPX_VAL_PRESENT : HPX_VAL_MISSING);/"present" : HPX_VAL_MISSING);/'; do
  rm -rf "$tmp/target"; cp -r "$root/target" "$tmp/target"
  sed -i "$inject" "$tmp/target/src/profile.c"
  cmp -s "$root/target/src/profile.c" "$tmp/target/src/profile.c" && { echo "FAIL: injection '$inject' did not apply" >&2; exit 1; }
  if check "$tmp/target" 2>/dev/null >/dev/null; then
    echo "FAIL: the check missed an injected literal ($inject)" >&2; exit 1
  fi
done
# The block of proposals that used to live in ert_hpx.h is gone.
rm -rf "$tmp/target"; cp -r "$root/target" "$tmp/target"
echo '#define ERT_KEY_PMU "PMU"' >> "$tmp/target/include/ergon/ert_hpx.h"
if check "$tmp/target" >/dev/null 2>&1; then echo "FAIL: missed an ERT_KEY_ define" >&2; exit 1; fi
echo ok

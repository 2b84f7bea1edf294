#!/usr/bin/env bash
# Fault injection on the report path of `ergon run` (docs/RELIABILITY.md):
# every allocation and every write-side call after the measurement ends is
# made to fail in turn (tests/support/faultinj/), and each time the
# measurement must be kept: the report at --out verifies, or the error says
# where it went (OUT.partial or the temporary folder) and that file holds
# the report or the raw rescue.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"

check_run() { # RC DIR N
  local rc=$1 dir=$2
  if [ "$rc" -ge 128 ]; then echo "  killed by signal $((rc - 128))"; return 1; fi
  if grep -q "AddressSanitizer\|runtime error:\|LeakSanitizer" "$dir/stderr"; then
    echo "  sanitizer report"; return 1
  fi
  # The report itself (exit 0, or 1 for a measurement it calls invalid).
  if [ -e "$dir/r.json" ]; then
    "$ERGON_BIN" verify "$dir/r.json" >/dev/null 2>&1 && return 0
    echo "  exit $rc and the report does not verify"; return 1
  fi
  local kept
  kept=$(sed -n 's/.* kept in \([^ ]*\)$/\1/p' "$dir/stderr" | head -1)
  if [ -z "$kept" ] || [ ! -s "$kept" ]; then echo "  exit $rc and nothing kept"; return 1; fi
  if head -c1 "$kept" | grep -q '{'; then
    "$ERGON_BIN" verify "$kept" >/dev/null 2>&1 && return 0
    echo "  kept report $kept does not verify"; return 1
  fi
  # The raw rescue: its header, every sample and invocation its counts
  # line announces, and its last line.
  local ns ni
  ns=$(sed -n 's/^# counts: samples \([0-9]*\) invocations \([0-9]*\).*/\1/p' "$kept")
  ni=$(sed -n 's/^# counts: samples \([0-9]*\) invocations \([0-9]*\).*/\2/p' "$kept")
  head -1 "$kept" | grep -q '^# ergon rescue v1' && [ -n "$ns" ] &&
    [ "$(grep -c '^sample,' "$kept")" = "$ns" ] && [ "$(grep -c '^invocation,' "$kept")" = "$ni" ] &&
    [ "$(tail -1 "$kept")" = "# end" ] && return 0
  echo "  kept file $kept is not a complete rescue:"; head -3 "$kept"; tail -2 "$kept"; return 1
}

fi_walk "ergon run" ergon-report check_run -- "$ERGON_BIN" run --device d --workload builtin:spin \
  --idle-s 0.05 --windows 1 --window-s 0.05 --sample-hz 100 --out @DIR@/r.json
finish

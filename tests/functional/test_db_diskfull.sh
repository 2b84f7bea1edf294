#!/usr/bin/env bash
# `ergon db ingest` when the disk fills (docs/DB.md): every write-side call
# of the ingest phase (write, pwrite, fsync, ... after the thread is named
# ergon-ingest) fails in turn with ENOSPC or EIO through the fault-injection
# shim (tests/support/faultinj/), on an SQLite database that already holds
# one artifact. Each time: no crash or sanitizer report; the database passes
# PRAGMA integrity_check; the earlier artifact is intact; the new artifact
# is stored completely (the same row counts as a fault-free ingest) or not
# at all; and a failed ingest exits 3 naming the database and the fix.
# Read back with python3's sqlite3, not through ergon.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
E=$ERGON_BIN
A=$TMP/art
mkdir -p "$A"
# A small report (8 kB: few invocations, 20 Hz) keeps the walk at about 70
# calls; the calls are SQLite's page writes and syncs, as for any size.
TINY=(--workload builtin:spin,iters=2000000 --idle-s 0.1 --windows 2 --window-s 0.2 --sample-hz 20)
"$E" run --device one "${TINY[@]}" --out "$A/one.json" >/dev/null || bad "run one"
"$E" run --device two "${TINY[@]}" --out "$A/two.json" >/dev/null || bad "run two"
"$E" db --db "$TMP/seed.db" ingest "$A/one.json" >/dev/null || bad "seed ingest"
"$E" db --db "$TMP/ref.db" ingest "$A/one.json" "$A/two.json" >/dev/null || bad "reference ingest"
TWO=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["report_id"])' "$A/two.json")
ONE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["report_id"])' "$A/one.json")
# rows DB ID: the row count of every table for one report_id.
rows() {
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(" ".join("%s=%d" % (t, c.execute("SELECT COUNT(*) FROM %s WHERE report_id = ?" % t, (sys.argv[2],)).fetchone()[0])
               for t in ("runs", "figures", "issues", "windows", "layers", "kernel_cases", "artifacts")))
PY
}
WANT_TWO=$(rows "$TMP/ref.db" "$TWO")
WANT_ONE=$(rows "$TMP/ref.db" "$ONE")
EMPTY="runs=0 figures=0 issues=0 windows=0 layers=0 kernel_cases=0 artifacts=0"
case "$WANT_TWO" in *"figures=0"*) bad "the reference ingest stored no figures: $WANT_TWO" ;; esac

check_db() { # RC DIR N
  local rc=$1 dir=$2
  if [ "$rc" -ge 128 ]; then echo "  killed by signal $((rc - 128))"; return 1; fi
  if grep -q "AddressSanitizer\|runtime error:\|LeakSanitizer" "$dir/stderr"; then
    echo "  sanitizer report"; return 1
  fi
  local ic
  ic=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$dir/r.db" 2>&1)
  [ "$ic" = ok ] || { echo "  integrity_check: $ic"; return 1; }
  [ "$(rows "$dir/r.db" "$ONE")" = "$WANT_ONE" ] || { echo "  the earlier artifact changed"; return 1; }
  local got
  got=$(rows "$dir/r.db" "$TWO")
  if [ "$rc" = 0 ]; then
    [ "$got" = "$WANT_TWO" ] && return 0
    echo "  exit 0 but stored $got (want $WANT_TWO)"; return 1
  fi
  [ "$rc" = 3 ] || { echo "  exit $rc (want 0 or 3)"; return 1; }
  grep -q "$dir/r.db" "$dir/stderr" || { echo "  the error does not name the database"; return 1; }
  grep -qE "disk is full; free space and ingest again|I/O error" "$dir/stderr" ||
    { echo "  the error does not say disk full or I/O error"; return 1; }
  [ "$got" = "$EMPTY" ] || [ "$got" = "$WANT_TWO" ] && return 0
  echo "  half-written: $got"; return 1
}

export FAULTINJ_KINDS=write
fi_walk "db ingest, disk full" ergon-ingest check_db -- sh -c \
  "cp '$TMP/seed.db' @DIR@/r.db && exec '$E' db --db @DIR@/r.db ingest '$A/two.json'"
[ "${FI_CALLS:-0}" -ge 3 ] && ok "the ingest made $FI_CALLS write-side calls to fail" || bad "only ${FI_CALLS:-0} calls"
# At least one of the injected faults must have made the ingest fail (else
# the walk proved nothing): the disk-full message as a user sees it.
fi_run "$TMP/fi-first" 1 ergon-ingest -- sh -c "cp '$TMP/seed.db' $TMP/fi-first/r.db && exec '$E' db --db $TMP/fi-first/r.db ingest '$A/two.json'"
rc=$?
[ "$rc" = 3 ] && ok "the first write failing: exit 3" || bad "the first write failing: exit $rc"
contains "$(cat "$TMP/fi-first/stderr")" "$TMP/fi-first/r.db" "names the database"
contains "$(cat "$TMP/fi-first/stderr")" "nothing of this artifact was stored" "says nothing was stored"
[ "$(rows "$TMP/fi-first/r.db" "$TWO")" = "$EMPTY" ] && ok "and nothing was" || bad "stored after a failed first write"
finish

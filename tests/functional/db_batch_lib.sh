# The two fault walks over one batch. `ergon db ingest` stores a batch in
# one transaction (docs/DB.md, "Batches"): two artifacts named in one
# command are one batch. On an
# SQLite database that already holds one artifact, every write-side call
# of the ingest phase (after the thread is named ergon-ingest) in turn
# 1. fails (ENOSPC/EIO through the fault-injection shim): the ingest
#    exits 0 with both stored whole, or 3 with neither;
# 2. is where the process is killed (SIGKILL just before the call,
#    FAULTINJ_KILL): afterwards the database passes PRAGMA
#    integrity_check, the earlier artifact is intact, and the two are
#    both stored whole or both absent; an ingest run again then stores
#    them, once.
# No half-written artifact and no half-stored batch, at any call. Read
# back with python3's sqlite3, not through ergon.
# Sourced by test_db_batch_fail.sh and test_db_batch_kill.sh (after
# run_lib.sh and faultinj_lib.sh), never a test itself.
E=$ERGON_BIN
A=$TMP/art
mkdir -p "$A"
TINY=(--workload builtin:spin,iters=2000000 --idle-s 0.2 --windows 2 --window-s 0.2 --sample-hz 50)
for d in one b1 b2; do
  "$E" run --device "$d" "${TINY[@]}" --out "$A/$d.json" >/dev/null || bad "run $d"
done
"$E" db --db "$TMP/seed.db" ingest "$A/one.json" >/dev/null || bad "seed ingest"
"$E" db --db "$TMP/ref.db" ingest "$A/one.json" "$A/b1.json" "$A/b2.json" >/dev/null ||
  bad "reference ingest"
rid() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["report_id"])' "$1"; }
ONE=$(rid "$A/one.json")
B1=$(rid "$A/b1.json")
B2=$(rid "$A/b2.json")
# state DB: one python3 run: "ic=ok one=<rows> b1=<rows> b2=<rows> runs=N",
# <rows> the row counts of every table for that report_id.
state() {
  python3 - "$1" "$ONE" "$B1" "$B2" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
def rows(k):
    return ",".join("%s=%d" % (t, c.execute("SELECT COUNT(*) FROM %s WHERE report_id = ?" % t, (k,)).fetchone()[0])
                    for t in ("runs", "figures", "issues", "windows", "trend_points", "artifacts"))
print("ic=%s one=%s b1=%s b2=%s runs=%d" % (c.execute("PRAGMA integrity_check").fetchone()[0], rows(sys.argv[2]),
      rows(sys.argv[3]), rows(sys.argv[4]), c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]))
PY
}
REF=$(state "$TMP/ref.db")
WANT_ONE=$(echo "$REF" | sed 's/.* one=\([^ ]*\).*/\1/')
WANT_B1=$(echo "$REF" | sed 's/.* b1=\([^ ]*\).*/\1/')
WANT_B2=$(echo "$REF" | sed 's/.* b2=\([^ ]*\).*/\1/')
EMPTY="runs=0,figures=0,issues=0,windows=0,trend_points=0,artifacts=0"
case "$WANT_B1" in *"figures=0"*) bad "the reference ingest stored no figures: $WANT_B1" ;; esac
ALL="ic=ok one=$WANT_ONE b1=$WANT_B1 b2=$WANT_B2 runs=3"
NONE="ic=ok one=$WANT_ONE b1=$EMPTY b2=$EMPTY runs=1"

sanitizer() { # DIR
  if grep -q "AddressSanitizer\|runtime error:\|LeakSanitizer" "$1/stderr"; then
    echo "  sanitizer report"; return 0
  fi
  return 1
}

check_fail() { # RC DIR N
  local rc=$1 dir=$2 st
  [ "$rc" -lt 128 ] || { echo "  killed by signal $((rc - 128))"; return 1; }
  sanitizer "$dir" && return 1
  st=$(state "$dir/r.db" 2>&1)
  if [ "$rc" = 0 ]; then
    [ "$st" = "$ALL" ] && return 0
    echo "  exit 0 but: $st"; return 1
  fi
  [ "$rc" = 3 ] || { echo "  exit $rc (want 0 or 3)"; return 1; }
  grep -qE "disk is full|I/O error" "$dir/stderr" || { echo "  the error does not say disk full or I/O error"; return 1; }
  [ "$st" = "$NONE" ] && return 0
  echo "  exit 3 but: $st"; return 1
}

check_kill() { # RC DIR N
  local rc=$1 dir=$2 st
  [ "$rc" = 0 ] || [ "$rc" = 137 ] || { echo "  exit $rc (want 0, or 137: killed)"; return 1; }
  sanitizer "$dir" && return 1
  st=$(state "$dir/r.db" 2>&1)
  [ "$st" = "$ALL" ] || [ "$st" = "$NONE" ] || { echo "  after the kill: $st"; return 1; }
  [ "$rc" = 0 ] && return 0
  # Run again: the rest goes in, nothing twice.
  "$E" db --db "$dir/r.db" ingest "$A/b1.json" "$A/b2.json" >"$dir/again.out" 2>&1 ||
    { echo "  the ingest run again failed: $(tail -1 "$dir/again.out")"; return 1; }
  st=$(state "$dir/r.db" 2>&1)
  [ "$st" = "$ALL" ] || { echo "  after the second ingest: $st"; return 1; }
}

CMD=(sh -c "cp '$TMP/seed.db' @DIR@/r.db && exec '$E' db --db @DIR@/r.db ingest '$A/b1.json' '$A/b2.json'")
export FAULTINJ_KINDS=write

#!/usr/bin/env bash
# Issue 30, case 8: every write to stdout is checked, once, at the end of
# every command (src/cli/main.c, stdout_checked): a failed write (here
# /dev/full, ENOSPC) is exit 3 with "cannot write to stdout" on stderr,
# unless the command already failed with a more specific code; a reader
# that has gone (EPIPE) is not an error. Before: `db export --csv runs >
# /dev/full` and `verify --json ... > /dev/full` exited 0 silently, and
# `model info --json` and `analyze --json` printed an error and exited 0.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
S=${ERGON_SHARED_DIR:-$ERGON_SOURCE_DIR/../shared}
[ -w /dev/full ] || { echo "SKIP: no /dev/full"; exit 77; }
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r.json" >/dev/null 2>&1 || bad "fixture run"
"$E" db --db "$TMP/x.db" ingest "$TMP/r.json" >/dev/null 2>&1 || bad "fixture ingest"
python3 - "$TMP/s.csv" <<'PY'
import sys
rows = ["t_start_s,t_end_s,i_avg_a,v_avg_v,digital"]
for k in range(300):
    d = 1 if 50 <= k < 250 else 0
    rows.append(f"{k/100:.2f},{(k+1)/100:.2f},{0.012 if d else 0.002},1.8,{d}")
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
PY
M=$S/fixtures/models/kws_ref_model.tflite
n=0
full() { # DESCRIPTION -- command...: stdout to /dev/full must exit 3
  local what=$1
  shift 2
  n=$((n + 1))
  "$@" >/dev/full 2>"$TMP/err"
  local rc=$?
  [ $rc = 3 ] && ok "$what > /dev/full: exit 3" || { bad "$what > /dev/full: exit $rc"; head -3 "$TMP/err"; }
  grep -q "cannot write to stdout" "$TMP/err" && ok "$what: says so" || bad "$what: silent"
}
full "db export --csv" -- "$E" db --db "$TMP/x.db" export --csv runs
full "db export --json" -- "$E" db --db "$TMP/x.db" export --json runs
full "db list" -- "$E" db --db "$TMP/x.db" list
full "verify --json" -- "$E" verify --json "$TMP/r.json"
full "verify" -- "$E" verify "$TMP/r.json"
full "digest" -- "$E" digest "$TMP/r.json"
full "model info --json" -- "$E" model info --json "$M"
full "model info" -- "$E" model info "$M"
full "analyze --json" -- "$E" analyze --stats "$TMP/s.csv" --out "$TMP/a1" --json
full "analyze (table)" -- "$E" analyze --stats "$TMP/s.csv" --out "$TMP/a2"
full "compare" -- "$E" compare "$TMP/r.json" "$TMP/r.json"
full "compare --json" -- "$E" compare "$TMP/r.json" "$TMP/r.json" --json
full "run (summary)" -- "$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r2.json"
"$E" verify "$TMP/r2.json" >/dev/null 2>&1 && ok "run: the report was written all the same" || bad "run: no report"
full "parse --json" -- "$E" parse "$S/fixtures/hpx/basic.hpx.txt" --out "$TMP/p" --json
full "instruments" -- "$E" instruments
full "--version" -- "$E" --version
full "help" -- "$E" --help
full "run --help" -- "$E" run --help
# A command that failed keeps its own, more specific code.
"$E" verify "$TMP/nonexistent.json" >/dev/full 2>/dev/null
rc=$?
[ $rc = 3 ] && ok "a missing file stays exit 3" || bad "missing file: exit $rc"
# A reader that has gone is not an error (EPIPE): the run's code stays 0.
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r3.json" 2>"$TMP/err" | (exec 0<&-; :)
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && ok "a closed summary pipe: exit 0" || bad "closed pipe: exit $rc"
grep -q "cannot write to stdout" "$TMP/err" && bad "closed pipe reported as a failure" || ok "and nothing said"
finish

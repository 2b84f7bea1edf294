#!/usr/bin/env bash
# `ergon db` on PostgreSQL: the same suite as SQLite (db_suite.sh), then
# concurrent ingests (every artifact stored exactly once), agreement with
# SQLite on the same artifacts, and a connection killed mid-ingest (nothing
# half-written). Needs a server: ERGON_PG_URL=postgresql://USER@HOST:PORT/DB
# of a role that may CREATE DATABASE (.ci/run starts one with
# scripts/pg_start.sh). Without it the test is skipped (exit 77, ctest
# SKIP_RETURN_CODE), never passed.
. "$(dirname "$0")/run_lib.sh"
if [ -z "${ERGON_PG_URL:-}" ]; then
  echo "SKIP: ERGON_PG_URL is not set (start a server: eval \"\$(scripts/pg_start.sh)\")"
  exit 77
fi
if ! psql -Atq "$ERGON_PG_URL" -c "SELECT 1" >/dev/null 2>&1; then
  echo "SKIP: no PostgreSQL answers at ERGON_PG_URL"
  exit 77
fi
base=${ERGON_PG_URL%/*}
dbs=()
newdb() { # newdb NAME: a fresh database, dropped at exit
  local n="ergon_t_$$_$1"
  psql -Atq "$ERGON_PG_URL" -c "DROP DATABASE IF EXISTS $n" -c "CREATE DATABASE $n" >/dev/null || bad "create $n"
  dbs+=("$n")
  echo "$base/$n"
}
cleanup() {
  for n in "${dbs[@]}"; do psql -Atq "$ERGON_PG_URL" -c "DROP DATABASE IF EXISTS $n WITH (FORCE)" >/dev/null 2>&1; done
  rm -rf "$TMP"
}
trap cleanup EXIT
DB=$(newdb suite)
sql() { psql -Atq -v ON_ERROR_STOP=1 "$DB" -c "$1"; }
. "$(dirname "$0")/db_suite.sh"
HEX_JSON="upper(encode(convert_to(json, 'UTF8'), 'hex'))"
. "$(dirname "$0")/db_batch_suite.sh"

# Many artifacts: the run report re-sealed under 40 device names, and 40
# more padded to 2 MB each (slow enough to be killed mid-ingest).
mkdir -p "$TMP/many" "$TMP/big"
python3 - "$A/r1.json" "$TMP" <<'PY'
import json, subprocess, sys, os
src = json.load(open(sys.argv[1]))
def seal(d, p):
    json.dump(d, open(p, "w"))
    d["report_id"] = subprocess.check_output([os.environ["ERGON_BIN"], "digest", p]).decode().strip()
    json.dump(d, open(p, "w"))
for i in range(40):
    d = json.loads(json.dumps(src)); d.pop("report_id")
    d["device"]["name"] = "board%02d" % i
    seal(d, os.path.join(sys.argv[2], "many", "r%02d.json" % i))
    d.pop("report_id"); d["device"]["name"] = "big%02d" % i
    d["conditions"]["padding"] = "x" * 2000000
    seal(d, os.path.join(sys.argv[2], "big", "b%02d.json" % i))
PY
per=$(sql "SELECT COUNT(*) FROM figures WHERE report_id = '$R1'")

# Six processes ingest the same 40 artifacts at once into an empty database
# (they also race to create the schema).
C=$(newdb conc)
pids=()
for k in 1 2 3 4 5 6; do
  "$E" db --db "$C" ingest "$TMP/many" >"$TMP/conc$k.out" 2>"$TMP/conc$k.err" &
  pids+=($!)
done
st=0
for p in "${pids[@]}"; do wait "$p" || st=1; done
[ $st = 0 ] && ok "6 concurrent ingests all exit 0" || { bad "a concurrent ingest failed"; cat "$TMP"/conc*.err | head; }
total=$(cat "$TMP"/conc*.out | grep -c '^ingested')
dups=$(cat "$TMP"/conc*.out | grep -c '^duplicate')
[ "$total" = 40 ] && ok "40 'ingested' lines in all" || bad "ingested lines: $total"
[ "$dups" = 200 ] && ok "200 'duplicate' lines in all" || bad "duplicate lines: $dups"
n=$(psql -Atq "$C" -c "SELECT COUNT(*), COUNT(DISTINCT report_id) FROM runs")
[ "$n" = "40|40" ] && ok "40 runs, each once" || bad "runs: $n"
n=$(psql -Atq "$C" -c "SELECT COUNT(*) FROM figures")
[ "$n" = $((40 * per)) ] && ok "40 x $per figures" || bad "figures: $n, want $((40 * per))"
n=$(psql -Atq "$C" -c "SELECT MAX(version), COUNT(*) FROM schema_version")
[ "$n" = "6|1" ] && ok "one schema_version row, version 6" || bad "schema_version: $n"

# Queries agree with SQLite on the same artifacts.
S=$TMP/same.db
"$E" db --db "$S" ingest "$TMP/many" "$A" >/dev/null
"$E" db --db "$C" ingest "$A" >/dev/null
for q in "SELECT report_id, name, value, unit, u FROM figures ORDER BY report_id, name" \
  "SELECT report_id, schema, kind, device, board, provenance, integrity, tool_version FROM runs ORDER BY report_id" \
  "SELECT report_id, seq, code, severity FROM issues ORDER BY report_id, seq" \
  "SELECT report_id, idx, layer_id, op, counter, value FROM layers ORDER BY report_id, idx, counter" \
  "SELECT * FROM windows ORDER BY report_id, idx"; do
  "$E" db --db "$S" export --csv "$q" >"$TMP/q.sqlite"
  "$E" db --db "$C" export --csv "$q" >"$TMP/q.pg"
  if cmp -s "$TMP/q.sqlite" "$TMP/q.pg" && [ -s "$TMP/q.pg" ]; then ok "agree: ${q:0:40}... ($(wc -l <"$TMP/q.pg") lines)"
  else bad "differ: $q"; diff "$TMP/q.sqlite" "$TMP/q.pg" | head -5; fi
done
"$E" db --db "$S" trend load.mean_power_w --device board07 | cut -c29- >"$TMP/t.sqlite"
"$E" db --db "$C" trend load.mean_power_w --device board07 | cut -c29- >"$TMP/t.pg"
cmp -s "$TMP/t.sqlite" "$TMP/t.pg" && ok "trend agrees (times aside)" || bad "trend differs"

# The connection killed while ingesting: whatever was committed is whole.
K=$(newdb kill)
"$E" db --db "$K" list >/dev/null
kname=${K##*/}
"$E" db --db "$K" ingest "$TMP/big" >"$TMP/kill.out" 2>"$TMP/kill.err" &
ip=$!
killed=0
for _ in $(seq 1 400); do
  c=$(psql -Atq "$K" -c "SELECT COUNT(*) FROM runs" 2>/dev/null || echo 0)
  if [ "${c:-0}" -ge 3 ] 2>/dev/null; then
    psql -Atq "$ERGON_PG_URL" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$kname' AND pid <> pg_backend_pid()" >/dev/null
    killed=1
    break
  fi
  sleep 0.02
done
wait $ip
krc=$?
if [ $killed = 1 ] && [ $krc = 3 ]; then
  ok "ingest killed mid-way exits 3"
  contains "$(cat "$TMP/kill.err")" "connection lost" "says the connection was lost"
elif [ $krc = 0 ]; then
  bad "the ingest finished before it could be killed (make the folder bigger)"
else
  bad "killed=$killed exit=$krc"; head -5 "$TMP/kill.err"
fi
half=$(psql -Atq "$K" -c "SELECT COUNT(*) FROM runs r WHERE (SELECT COUNT(*) FROM figures f WHERE f.report_id = r.report_id) <> $per OR NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.report_id = r.report_id)")
stored=$(psql -Atq "$K" -c "SELECT COUNT(*) FROM runs")
[ "$half" = 0 ] && ok "no half-written artifact ($stored whole ones stored)" || bad "$half half-written runs"
orph=$(psql -Atq "$K" -c "SELECT COUNT(*) FROM figures f WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.report_id = f.report_id)")
[ "$orph" = 0 ] && ok "no orphan figures" || bad "$orph orphan figures"
expect 0 "ingest again after the loss" -- "$E" db --db "$K" ingest "$TMP/big"
[ "$(psql -Atq "$K" -c "SELECT COUNT(*) FROM runs")" = 40 ] && ok "all 40 stored after the retry" || bad "not all stored"
finish

#!/usr/bin/env bash
# `ergon db ingest` of N run reports against its same-run baseline, in
# interleaved rounds on SQLite and (with a URL) PostgreSQL (issue 36).
#
#   bench/bench_db_ingest.sh BUILD N ROUNDS WORKDIR [POSTGRES_URL]
#
# BUILD: a Release build folder (its ergon and bench/bench_db). One run
# report is made with `ergon run` (a 1 ms periodic workload, 3 windows of
# 0.75 s, 50 Hz samples: about 40 kB, like the 39.5 kB reports of issue
# 36; REPORT=FILE uses another), N copies differing in one conditions
# field are sealed into WORKDIR once (not timed). Each round then runs bench_db
# on SQLite (a new file) and on PostgreSQL (a new database: POSTGRES_URL
# names the server, e.g. scripts/pg_start.sh's ERGON_PG_URL; its role must
# be allowed to CREATE DATABASE), in turn. Within each bench_db run the
# baseline comes first: loading and verifying every file (what ingest must
# do anyway, nothing stored), then the ingest itself (ergon_db_ingest_files,
# what the command runs: batches of 100). The ratio is ingest over
# baseline, of this process's CPU time (user + system; a PostgreSQL
# server's own CPU is not in it) and of wall time. Prints every round and
# the median ratio of each backend; the load average before and after.
set -euo pipefail
build=${1:?usage: bench_db_ingest.sh BUILD N ROUNDS WORKDIR [POSTGRES_URL]}
n=${2:?usage}
rounds=${3:?usage}
work=${4:?usage}
pg=${5:-}
ergon=$build/ergon
bench=$build/bench/bench_db
[ -x "$ergon" ] && [ -x "$bench" ] || { echo "bench_db_ingest: no $ergon or $bench" >&2; exit 1; }
mkdir -p "$work/reports"
if [ -n "${REPORT:-}" ]; then
  cp "$REPORT" "$work/base.json"
elif [ ! -f "$work/base.json" ]; then
  "$ergon" run --device dut --workload builtin:periodic,burst_ms=1,sleep_ms=0 --idle-s 0.2 \
    --windows 3 --window-s 0.75 --sample-hz 50 --out "$work/base.json" >/dev/null
fi
reuse=""
[ -f "$work/reports/r$(printf %06d $((n - 1))).json" ] && reuse=--reuse
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$work/results.txt
: >"$results"
one() { # BACKEND DB
  local out
  out=$("$bench" "$work/base.json" "$n" "$2" "$work/reports" $reuse)
  reuse=--reuse
  echo "$out" | sed "s/^/  [$1] /"
  local cpu wall
  cpu=$(echo "$out" | sed -n 's/^cpu (this process): baseline \([0-9.]*\) s, ingest \([0-9.]*\) s.*/\1 \2/p')
  wall=$(echo "$out" | sed -n 's/^baseline load+verify : \([0-9.]*\) s.*/\1/p')
  wall="$wall $(echo "$out" | sed -n 's/^ingest *: \([0-9.]*\) s.*/\1/p')"
  echo "$1 $cpu $wall" >>"$results"
}
pgdb() { # a fresh database on the server of $pg
  local name=ergon_bench_ingest
  psql -Atq "$pg" -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null
  echo "${pg%/*}/$name"
}
for ((r = 1; r <= rounds; r++)); do
  echo "round $r"
  rm -f "$work/ingest.db" "$work/ingest.db-wal" "$work/ingest.db-shm"
  one sqlite "$work/ingest.db"
  [ -n "$pg" ] && one postgresql "$(pgdb)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for b in ("sqlite", "postgresql"):
    r = [[float(x) for x in row[1:]] for row in rows if row[0] == b]
    if not r:
        continue
    cpu = [i / c for c, i, _, _ in r]
    wall = [i / c for _, _, c, i in r]
    print("%-10s %d rounds: CPU ratio %s, median %.2f; wall ratio %s, median %.2f" % (
        b, len(r), " ".join("%.2f" % x for x in cpu), statistics.median(cpu),
        " ".join("%.2f" % x for x in wall), statistics.median(wall)))
PY

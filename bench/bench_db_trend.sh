#!/usr/bin/env bash
# `ergon db trend FIGURE --device D` as a whole command (process start to
# exit: open, version check, query, 10,000 printed rows) on an SQLite
# database, against baselines measured in the same run, interleaved:
#   sqlite3-v3   the sqlite3 CLI running schema 3's trend query (the join of
#                figures and runs that `ergon db trend` ran before schema 4)
#   sqlite3-v4   the sqlite3 CLI running schema 4's query (one range of
#                trend_points): what SQLite itself needs for these rows
#   ergon        `ergon db trend`, output to /dev/null
# Each REPEATS times; prints every run's wall and CPU (user + system) time,
# then min/median/max of each. The load average is printed before and
# after: on a shared machine the wall time measures the neighbours too.
#   bench/bench_db_trend.sh ERGON DB [FIGURE] [DEVICE] [REPEATS]
# DB: a schema-4 database, e.g. 10,000 run reports stored by
#   build/bench/bench_db REPORT.json 10000 /tmp/v4.db /tmp/work
# (a database of schema 3 is migrated by its first `ergon db` command; run
# one before this script so the migration is not timed).
set -euo pipefail
ergon=${1:?usage: bench_db_trend.sh ERGON DB [FIGURE] [DEVICE] [REPEATS]}
db=${2:?usage: bench_db_trend.sh ERGON DB [FIGURE] [DEVICE] [REPEATS]}
fig=${3:-load.mean_power_w}
dev=${4:-dut}
reps=${5:-5}
command -v sqlite3 >/dev/null || { echo "bench_db_trend: sqlite3 (Debian's sqlite3) is missing" >&2; exit 1; }
[ "$(sqlite3 "$db" "SELECT MAX(version) FROM schema_version")" -ge 4 ] ||
  { echo "bench_db_trend: $db is not schema 4: run '$ergon db --db $db list' once first" >&2; exit 1; }
counted="CASE WHEN provenance = 'measured' AND COALESCE(integrity, '') <> 'invalid' THEN 'yes' ELSE 'no' END"
q3="SELECT r.time, r.report_id, r.provenance, ${counted//provenance/r.provenance} AS counted, f.value, f.u, f.unit, r.board, r.integrity FROM figures f JOIN runs r ON r.report_id = f.report_id WHERE f.name = '$fig' AND r.device = '$dev' ORDER BY r.time, r.report_id"
q3=${q3//COALESCE(integrity/COALESCE(r.integrity}
q4="SELECT time, report_id, provenance, $counted AS counted, value, u, unit, board, integrity FROM trend_points WHERE name = '$fig' AND device = '$dev' ORDER BY time, report_id"
rows3=$(sqlite3 "$db" "$q3" | wc -l)
rows4=$(sqlite3 "$db" "$q4" | wc -l)
[ "$rows3" = "$rows4" ] || { echo "bench_db_trend: the two queries disagree ($rows3 vs $rows4 rows)" >&2; exit 1; }
printf 'database %s (%s bytes), %s rows of %s on %s; load average before: %s\n' "$db" \
  "$(stat -c %s "$db")" "$rows4" "$fig" "$dev" "$(cut -d' ' -f1-3 /proc/loadavg)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-trend-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
timed() { # NAME CMD...: one run, "NAME wall cpu" appended to $tmp/t
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/one" "$@" >/dev/null
  read -r w u s <"$tmp/one"
  echo "$name $w $(python3 -c "print(round($u + $s, 2))")" | tee -a "$tmp/t"
}
for _ in $(seq "$reps"); do
  timed sqlite3-v3 sqlite3 "$db" "$q3"
  timed sqlite3-v4 sqlite3 "$db" "$q4"
  timed ergon "$ergon" db --db "$db" trend "$fig" --device "$dev"
done
printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/t" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    n, w, c = line.split()
    runs.setdefault(n, []).append((float(w), float(c)))
print("%-11s %-22s %s" % ("what", "wall s (min/med/max)", "cpu s (min/med/max)"))
for n, v in runs.items():
    ws, cs = [x[0] for x in v], [x[1] for x in v]
    print("%-11s %.2f/%.2f/%.2f       %.2f/%.2f/%.2f" % (n, min(ws), statistics.median(ws), max(ws),
                                                      min(cs), statistics.median(cs), max(cs)))
PY

#!/usr/bin/env bash
# Every artifact says when it was measured (issue 31): measurement_time with
# its UTC start and end (CLOCK_REALTIME, ISO 8601 with microseconds), its
# monotonic start and end, where the times came from and whether the clock
# is synchronised. For what ergon measures itself the UTC times must lie
# between the wall-clock times this test reads just before and just after
# the command (`date -u`, an independent clock reading), the end at or
# after the start on both clocks. For what ergon did not see (a log, a
# samples CSV measured elsewhere, a recording without UTC) the times are
# null and the note says why; a JLS recording's own UTC track gives its
# start and end. Derived artifacts carry their inputs' times.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
# check FILE JSONPATH BEFORE AFTER: the measurement_time at the path was
# measured by ergon between BEFORE and AFTER.
check() {
  python3 - "$@" <<'PY'
import json, sys, re
f, path, before, after = sys.argv[1:5]
d = json.load(open(f))
for k in [p for p in path.split(".") if p]:
    d = d[int(k)] if k.isdigit() else d[k]
iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
assert iso.match(d["start_utc"]) and iso.match(d["end_utc"]), d
assert before <= d["start_utc"] <= d["end_utc"] <= after, (before, d["start_utc"], d["end_utc"], after)
assert d["end_monotonic_s"] >= d["start_monotonic_s"] > 0, d
assert d["utc_source"] == "CLOCK_REALTIME" and d["monotonic_source"] == "CLOCK_MONOTONIC", d
assert d["utc_synchronized"] in (True, False, None), d
if d["utc_synchronized"] is not True:
    assert "note" in d, d
PY
}
unknown() { # unknown FILE WHY: not seen by ergon, and says why
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["measurement_time"]
assert d["start_utc"] is None and d["end_utc"] is None and d["start_monotonic_s"] is None, d
assert sys.argv[2] in d["note"], d
PY
}

b=$(now)
expect 0 "run" -- "$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 2 --window-s 0.2 --out "$TMP/run.json"
a=$(now)
check "$TMP/run.json" measurement_time "$b" "$a" && ok "run: measured between the test's clock readings" || bad "run measurement_time"

b=$(now)
expect 0 "run --repeat 2" -- "$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 2 --window-s 0.2 \
  --repeat 2 --out "$TMP/rep.json"
a=$(now)
check "$TMP/rep.json" measurement_time "$b" "$a" && ok "repeated run: the whole" || bad "repeated measurement_time"
check "$TMP/rep.json" repetitions.0.measurement_time "$b" "$a" && check "$TMP/rep.json" repetitions.1.measurement_time "$b" "$a" &&
  ok "repeated run: each repetition" || bad "repetitions' measurement_time"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["repetitions"]; assert r[0]["measurement_time"]["end_utc"] <= r[1]["measurement_time"]["start_utc"]' \
  "$TMP/rep.json" && ok "repetitions in order" || bad "repetition order"

printf 'fc f accum=16 units=4\n' >"$TMP/s.txt"
b=$(now)
expect 0 "kernels run" -- "$E" kernels run --board host --shapes "$TMP/s.txt" --iterations 3 --out "$TMP/k"
a=$(now)
check "$TMP/k/kernels.json" measurement_time "$b" "$a" && ok "kernels run" || bad "kernels run measurement_time"
expect 0 "kernels report" -- "$E" kernels report "$TMP/k/samples.csv" --unit ns --out "$TMP/kr"
unknown "$TMP/kr/kernels.json" "measured elsewhere" && ok "kernels report: not known, said why" || bad "kernels report measurement_time"

b=$(now)
expect 0 "profile (sim)" -- "$E" profile --board sim --out "$TMP/prof"
a=$(now)
check "$TMP/prof/summary.json" measurement_time "$b" "$a" && ok "profile: the whole" || bad "profile measurement_time"
# The sim board's default configuration has no power stage ("disabled"):
# only the PMU stage ran, and only it has a time.
check "$TMP/prof/summary.json" stages.pmu.measurement_time "$b" "$a" &&
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["stages"]["power"]; assert p["status"] == "disabled" and "measurement_time" not in p, p' "$TMP/prof/summary.json" &&
  ok "profile: the stage that ran" || bad "profile stages' measurement_time"

# ergon capture: a stream read as the board sends it (a FIFO written while
# the capture reads, a pipe on stdin) was measured while ergon read it; a
# regular file (file:PATH, or one on stdin) is a log written before, whose
# time is not known.
HPX=$ERGON_SHARED_DIR/fixtures/hpx/basic.hpx.txt
mkfifo "$TMP/board.fifo"
b=$(now)
cat "$HPX" >"$TMP/board.fifo" &
writer=$!
expect 0 "capture from a FIFO (a live stream)" -- "$E" capture --transport "file:$TMP/board.fifo" --out "$TMP/capf"
wait "$writer"
a=$(now)
check "$TMP/capf/summary.json" measurement_time "$b" "$a" && ok "capture (FIFO): measured between the test's clock readings" ||
  bad "capture FIFO measurement_time"
b=$(now)
cat "$HPX" | "$E" capture --transport - --out "$TMP/capp" >"$TMP/o" 2>"$TMP/e"
rc=$?
a=$(now)
[ "$rc" = 0 ] && check "$TMP/capp/summary.json" measurement_time "$b" "$a" && ok "capture (a pipe on stdin): measured" ||
  bad "capture pipe measurement_time (exit $rc)"
expect 0 "capture from a regular file" -- "$E" capture --transport "file:$HPX" --out "$TMP/capr"
unknown "$TMP/capr/summary.json" "the log was written before ergon read it" && ok "capture (file:PATH): not known, said why" ||
  bad "capture file measurement_time"
"$E" capture --transport - --out "$TMP/caps" <"$HPX" >"$TMP/o" 2>"$TMP/e"
rc=$?
[ "$rc" = 0 ] && unknown "$TMP/caps/summary.json" "the log was written before ergon read it" &&
  ok "capture (a file on stdin): not known, said why" || bad "capture stdin file measurement_time (exit $rc)"

expect 0 "parse a log" -- "$E" parse "$ERGON_SHARED_DIR/fixtures/hpx/basic.hpx.txt" --out "$TMP/parse"
unknown "$TMP/parse/summary.json" "the log was written before ergon read it" && ok "parse: not known, said why" ||
  bad "parse measurement_time"

expect 0 "analyze a JLS" -- "$E" analyze --jls "$ERGON_SHARED_DIR/fixtures/jls/shared_two_windows.jls" --out "$TMP/an"
python3 - "$TMP/an/summary.json" <<'PY' && ok "analyze: the recording's own times, or not known" || bad "analyze measurement_time"
import json, sys
s = json.load(open(sys.argv[1]))
d = s["measurement_time"]
start = s["provenance"]["recording"]["capture_start_utc"]
assert d["start_monotonic_s"] is None and d["note"]
if start is None:
    assert d["start_utc"] is None and "states no wall-clock time" in d["note"], d
else:
    assert d["start_utc"] == start and d["end_utc"] >= d["start_utc"], d
    assert d["utc_source"] == "the recording's UTC track (JLS)", d
PY

expect 0 "energy model" -- "$E" energy-model "$TMP/run.json" --action inference --allow-synthetic --out "$TMP/m.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); assert a["measurement_time"] == b["measurement_time"]' \
  "$TMP/m.json" "$TMP/run.json" && ok "energy model: its report's time" || bad "energy model measurement_time"

"$E" compare "$TMP/run.json" "$TMP/rep.json" --force-incomparable --out "$TMP/cmp" >/dev/null 2>&1
python3 - "$TMP/cmp/compare.json" "$TMP/run.json" "$TMP/rep.json" <<'PY' && ok "compare: each input's time" || bad "compare measurement_time"
import json, sys
c = json.load(open(sys.argv[1]))
for i, p in enumerate(sys.argv[2:]):
    assert c["inputs"][i]["measurement_time"] == json.load(open(p))["measurement_time"]
PY
# The database orders by measurement time: ingest keeps each run's UTC
# start and end with where they came from, and a repeated run's figure is
# its mean over the repetitions with the standard error (checked against
# the repetitions' own values, averaged here).
expect 0 "db ingest" -- "$E" db --db "$TMP/r.db" ingest "$TMP/run.json" "$TMP/rep.json"
python3 - "$TMP/r.db" "$TMP/run.json" "$TMP/rep.json" <<'PY' && ok "db: measurement times, a repeated run's mean and sem" || bad "db measurement time"
import json, math, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
for path in sys.argv[2:]:
    a = json.load(open(path))
    mt = a["measurement_time"]
    row = db.execute("SELECT time, time_end, time_source FROM runs WHERE report_id = ?",
                     (a["report_id"],)).fetchone()
    assert row == (mt["start_utc"], mt["end_utc"], "measured"), (row, mt)
rep = json.load(open(sys.argv[3]))
vals = [r["energy_per_op"]["above_idle_j"] for r in rep["figures"]["repetitions"]]
mean = sum(vals) / len(vals)
sem = statistics.stdev(vals) / math.sqrt(len(vals))
v, sem_db, n, ts = db.execute(
    "SELECT value, sem, repetitions, time_source FROM trend_points WHERE report_id = ?"
    " AND name = 'energy_per_op.above_idle_j'", (rep["report_id"],)).fetchone()
assert n == 2 and ts == "measured", (n, ts)
assert abs(v - mean) <= 1e-12 * abs(mean) and abs(sem_db - sem) <= 1e-9 * sem, (v, mean, sem_db, sem)
PY
finish

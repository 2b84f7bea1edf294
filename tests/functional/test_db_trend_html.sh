#!/usr/bin/env bash
# `ergon db trend --html` in a real browser, like ergon report's pages
# (browse_lib.sh: headless Chromium, network off, self-check, no console
# errors): three synthetic runs and two of them relabelled measured. The
# page must draw the two measured points and the three others as separate
# series, every value cell must equal the artifact (report_dom_check.py),
# and the artifact's points must be what the database holds, read here with
# python's sqlite3, not through ergon. Then `ergon report` renders the same
# sealed ergon.trend artifact, and the refusals.
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/reseal_lib.sh"
E=$ERGON_BIN
HERE=$(cd "$(dirname "$0")" && pwd)
SHOTS=${ERGON_BUILD_DIR:?}/test-artifacts/report_html
mkdir -p "$SHOTS"
command -v chromium >/dev/null || { bad "chromium is not installed: run scripts/bootstrap.sh"; finish; }
. "$HERE/browse_lib.sh"
DB=$TMP/t.db
A=$TMP/art
mkdir -p "$A"
for n in 1 2 3; do
  "$E" run --device dut --workload builtin:spin,iters=20000 "${SHORT[@]}" --instrument-opt seed=$n \
    --out "$A/r$n.json" >/dev/null || bad "ergon run $n"
done
# Relabelled measured (a test fixture: nothing was measured), as db_suite.sh.
for n in 1 2; do
  reseal "$A/r$n.json" "$A/m$n.json" 'd["provenance"]["kind"] = d["instrument"]["provenance"] = "measured"
d["instrument"]["driver"] = d["provenance"]["source"] = "test-fixture"
d.pop("emulation", None)'
done
expect 0 "ingest" -- "$E" db --db "$DB" ingest "$A"
expect 0 "trend --html --out" -- "$E" db --db "$DB" trend load.mean_power_w --device dut \
  --html "$TMP/trend.html" --out "$TMP/trend.json"
contains "$OUT" "5 point(s) for load.mean_power_w on dut: 2 measured (counted), 3 synthetic" "the counts"
python3 - "$DB" "$TMP/trend.json" <<'PY' && ok "the artifact's points are the database's rows" || bad "artifact vs database"
import json, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT r.report_id, r.provenance, f.value FROM runs r JOIN figures f ON f.report_id = r.report_id"
    " WHERE f.name = 'load.mean_power_w' AND r.device = 'dut'").fetchall()
t = json.load(open(sys.argv[2]))
assert t["schema"] == "ergon.trend"
# Mixed points: the artifact must not call itself measured.
assert t["provenance"]["kind"] == "synthetic", t["provenance"]
pts = {p["report_id"]: p for p in t["trend"]["points"]}
assert len(pts) == len(rows) == 5
for rid, prov, v in rows:
    p = pts[rid]
    assert p["value"] == v and p["provenance"] == prov, (p, prov, v)
    assert p["counted"] == (prov == "measured"), p
assert t["trend"]["counted"] == 2 and t["trend"]["not_counted"] == 3
assert t["trend"]["unit"] == "W"
PY
expect 0 "the trend artifact verifies" -- "$E" verify "$TMP/trend.json"
browse "$TMP/trend.html" trend
python3 "$HERE/report_dom_check.py" "$TMP/trend.dom" "$TMP/trend.json" && ok "trend: DOM equals the artifact" ||
  bad "trend: DOM check"
python3 - "$TMP/trend.dom" <<'PY' && ok "two series: 2 counted points (s0), 3 others (s3)" || bad "series split"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
s = re.findall(r'<polyline[^>]*class="series (s[0-9])"[^>]*data-n="([0-9]+)"', dom)
if not s:
    s = [(a, b) for b, a in re.findall(r'<polyline[^>]*data-n="([0-9]+)"[^>]*class="series (s[0-9])"', dom)]
assert sorted(s) == [("s0", "2"), ("s3", "3")], s
assert dom.count('data-counted="yes"') == 2 and dom.count('data-counted="no"') == 3
# Each point with a stated ± has its interval bar (one M each), in its
# series' colour.
bars = dict((c, d.count("M")) for c, d in re.findall(r'<path class="errbar (s[0-9])"[^>]*d="([^"]*)"', dom))
assert bars == {"s0": 2, "s3": 3}, bars
PY
python3 - "$TMP/trend.dom" <<'PY' && ok "the x axis is the measurement time" || bad "x axis"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
assert re.search(r"measurement time \((s|minutes|hours|days) since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)", dom), "no time axis label"
assert "run (oldest first)" not in dom
PY
expect 0 "ergon report renders the trend artifact" -- "$E" report "$TMP/trend.json" --out "$TMP/r.html"
contains "$(cat "$TMP/r.html")" 'data-path="trend.points[4].value"' "the same table"

# Only measured points: the artifact may say measured.
"$E" db --db "$TMP/m.db" ingest "$A/m1.json" "$A/m2.json" >/dev/null || bad "ingest measured"
expect 0 "trend of measured points only" -- "$E" db --db "$TMP/m.db" trend load.mean_power_w --device dut --out "$TMP/m.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if t["provenance"]["kind"]=="measured" else 1)' "$TMP/m.json" &&
  ok "all counted: provenance measured" || bad "measured-only provenance"

expect 3 "an existing --html without --force" -- "$E" db --db "$DB" trend load.mean_power_w --device dut --html "$TMP/trend.html"
expect 0 "--force replaces it" -- "$E" db --db "$DB" trend load.mean_power_w --device dut --html "$TMP/trend.html" --force
expect 2 "an unknown figure" -- "$E" db --db "$DB" trend load.mean_powr_w --device dut --html "$TMP/x.html"
contains "$ERR" "nearest: 'load.mean_power_w'" "suggests the nearest"
[ ! -e "$TMP/x.html" ] && ok "no page for an unknown figure" || bad "x.html written"
expect 2 "--html on another action" -- "$E" db --db "$DB" list --html "$TMP/x.html"
finish

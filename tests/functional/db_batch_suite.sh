# Batched ingest (docs/DB.md, "Batches"), against one backend: sourced by
# test_db_sqlite.sh and test_db_postgresql.sh after db_suite.sh (it uses
# $E, $A, $DB, sql() and reseal from there), never a test itself. The
# caller sets HEX_JSON: the SQL expression that gives artifacts.json as
# upper-case hex of its UTF-8 bytes on that backend. Expected values come
# from the files, read by python3, never from ergon.

B=$TMP/batch
mkdir -p "$B"
for n in 1 2 3; do reseal "$A/r1.json" "$B/b$n.json" "d['device']['name'] = 'batch$n'"; done
# Fails verification (phase 1): a figure changed after sealing.
sed 's/"achieved_hz": \([0-9]\)/"achieved_hz": 9\1/' "$B/b2.json" >"$B/forged.json"
cmp -s "$B/b2.json" "$B/forged.json" && bad "batch: the forgery did not change the file"
# Verifies (its digest is right) but its rows break the schema: power
# holds "x.y_j" and x: {y_j}, both the figure power.x.y_j (figures' key is
# report_id, name). Only the database can tell, in the middle of the batch.
python3 - "$B/dup.json" <<'PY'
import json, subprocess, sys, os
d = {"schema": "ergon.profile", "schema_version": 1, "kind": "profile",
     "provenance": {"kind": "synthetic", "source": "test-fixture"},
     "device": {"name": "batchdup"}, "integrity": "valid",
     "power": {"x.y_j": 1.0, "x": {"y_j": 2.0}, "energy_j": 0.5}}
json.dump(d, open(sys.argv[1], "w"), indent=1)
d["report_id"] = subprocess.check_output([os.environ["ERGON_BIN"], "digest", sys.argv[1]]).decode().strip()
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
rid() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['report_id'])" "$1"; }
B1=$(rid "$B/b1.json")
B3=$(rid "$B/b3.json")
BD=$(rid "$B/dup.json")
per=$(sql "SELECT COUNT(*) FROM figures WHERE report_id = '$R1'")

# One command, one batch (fewer than 100 artifacts): the good ones on
# either side of the two bad ones are stored, the bad ones alone refused.
expect 1 "batch: a bad artifact in the middle refuses only itself" -- \
  "$E" db --db "$DB" ingest "$B/b1.json" "$B/dup.json" "$B/forged.json" "$B/b3.json"
contains "$OUT" "ingest: 2 ingested, 0 duplicate, 2 refused" "two stored, two refused"
contains "$OUT" "REFUSED   $B/dup.json: $B/dup.json: " "the constraint breaker is refused, named"
contains "$OUT" "break a constraint of the schema" "and says why"
contains "$OUT" "REFUSED   $B/forged.json: $B/forged.json: fails verification" "the forgery is refused"
order=$(echo "$OUT" | awk '/^ingested/ {print $3} /^REFUSED/ {sub(":$", "", $2); print $2}' | tr '\n' ' ')
[ "$order" = "$B/b1.json $B/dup.json $B/forged.json $B/b3.json " ] &&
  ok "outcomes printed in the order of the files" || bad "order: $order"
for t in runs figures issues windows layers trend_points artifacts; do
  n=$(sql "SELECT COUNT(*) FROM $t WHERE report_id = '$BD'")
  [ "$n" = 0 ] || bad "batch: the refused artifact left $n row(s) in $t"
done
ok "nothing of the refused artifact in any table"
for k in "$B1" "$B3"; do
  [ "$(sql "SELECT COUNT(*) FROM figures WHERE report_id = '$k'")" = "$per" ] &&
    [ "$(sql "SELECT COUNT(*) FROM trend_points WHERE report_id = '$k'")" = "$per" ] &&
    [ "$(sql "SELECT COUNT(*) FROM artifacts WHERE report_id = '$k'")" = 1 ] &&
    ok "${k:0:19}: $per figures, $per trend points, its artifact" || bad "${k:0:19} incomplete"
done

# The stored text is the file's bytes, as verified (not re-serialised).
want=$(python3 -c "import sys; print(open(sys.argv[1], 'rb').read().hex().upper())" "$B/b1.json")
got=$(sql "SELECT $HEX_JSON FROM artifacts WHERE report_id = '$B1'")
[ -n "$want" ] && [ "$got" = "$want" ] && ok "artifacts.json holds the file's bytes" ||
  bad "artifacts.json differs from the file (${#got} vs ${#want} hex digits)"
expect 0 "db show prints the stored bytes" -- "$E" db --db "$DB" show "$B1"
"$E" db --db "$DB" show "$B1" >"$B/shown.json"
python3 -c "import sys; a=open(sys.argv[1],'rb').read(); b=open(sys.argv[2],'rb').read(); sys.exit(0 if a.rstrip(b'\n') == b.rstrip(b'\n') else 1)" \
  "$B/b1.json" "$B/shown.json" && ok "show: the file's bytes (and a final newline)" || bad "show differs from the file"
expect 0 "the stored bytes still verify (digest and figures recomputed)" -- "$E" verify "$B/shown.json"

# A duplicate in the same batch as its first copy: stored once.
cp "$B/b2.json" "$B/b2copy.json"
expect 0 "batch: the same artifact twice in one batch" -- "$E" db --db "$DB" ingest "$B/b2.json" "$B/b2copy.json"
contains "$OUT" "ingest: 1 ingested, 1 duplicate, 0 refused" "once ingested, once duplicate"

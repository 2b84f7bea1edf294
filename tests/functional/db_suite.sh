# The `ergon db` test suite, run against one backend (sourced by
# test_db_sqlite.sh and test_db_postgresql.sh, not a test itself).
# Needs: ERGON_BIN, $TMP, $DB (the --db target) and sql() printing the rows
# of a query through the backend's own client (python3's sqlite3 or psql),
# so that what ergon stored is checked without going through ergon.
# Expected values come from the artifact files themselves, read by python3.

E=$ERGON_BIN
A=$TMP/art
mkdir -p "$A"
# Artifacts of every kind ergon writes today.
"$E" run --device dut --workload builtin:spin,iters=20000 "${SHORT[@]}" --out "$A/r1.json" >/dev/null ||
  bad "ergon run"
"$E" energy-model "$A/r1.json" --action inference --allow-synthetic --out "$A/em.json" >/dev/null ||
  bad "energy-model"
"$E" profile --board sim --power --out "$A/prof" >/dev/null 2>&1 || bad "profile --board sim"
"$E" analyze --jls "$ERGON_SHARED_DIR/fixtures/jls/shared_basic.jls" --out "$A/an" >/dev/null 2>&1 ||
  bad "analyze"
# The same run relabelled measured and re-sealed (reseal_lib.sh; verify
# recomputes the figures and passes): a measured point for the trend. A test
# fixture only; nothing was measured.
. "$(dirname "$0")/reseal_lib.sh"
# verify refuses a synthetic driver or an emulation block labelled measured,
# so the fixture names a made-up driver ("test-fixture") and drops the block.
reseal "$A/r1.json" "$A/m1.json" 'd["provenance"]["kind"] = d["instrument"]["provenance"] = "measured"
d["instrument"]["driver"] = d["provenance"]["source"] = "test-fixture"
d.pop("emulation", None)'
"$E" verify "$A/m1.json" >/dev/null && ok "relabelled fixture verifies" || bad "fixture m1 does not verify"

py() { python3 -c "$@"; }
rid() { py "import json,sys; print(json.load(open(sys.argv[1]))['report_id'])" "$1"; }
R1=$(rid "$A/r1.json")
M1=$(rid "$A/m1.json")
PR=$(rid "$A/prof/summary.json")

expect 0 "ingest a folder of every kind" -- "$E" db --db "$DB" ingest "$A"
contains "$OUT" "ingest: 5 ingested, 0 duplicate, 0 refused" "5 artifacts stored"
[ "$(sql "SELECT COUNT(*) FROM runs")" = 5 ] && ok "5 runs rows" || bad "runs rows: $(sql "SELECT COUNT(*) FROM runs")"
[ "$(sql "SELECT COUNT(*) FROM artifacts")" = 5 ] && ok "5 artifacts rows" || bad "artifacts rows"

# Figures hold the report's own numbers and their ±.
want=$(py "import json; f=json.load(open('$A/r1.json'))['figures']['load']; print(repr(f['mean_power_w']), repr(f['mean_power_u_w']))")
got=$(sql "SELECT value, u FROM figures WHERE report_id = '$R1' AND name = 'load.mean_power_w'")
py "import sys; w=[float(x) for x in '$want'.split()]; g=[float(x) for x in '$got'.replace('|',' ').split()]; sys.exit(0 if w==g else 1)" &&
  ok "load.mean_power_w and its ± stored exactly" || bad "load.mean_power_w: want $want got $got"
unit=$(sql "SELECT unit FROM figures WHERE report_id = '$R1' AND name = 'load.energy_j'")
[ "$unit" = J ] && ok "unit from the field name" || bad "unit of load.energy_j: $unit"
want=$(py "import json; print(len(json.load(open('$A/r1.json'))['issues']))")
[ "$(sql "SELECT COUNT(*) FROM issues WHERE report_id = '$R1'")" = "$want" ] && ok "issues: $want rows" ||
  bad "issues rows"
want=$(py "import json; print(len(json.load(open('$A/r1.json'))['figures']['throughput']['windows']))")
[ "$(sql "SELECT COUNT(*) FROM windows WHERE report_id = '$R1'")" = "$want" ] && ok "windows: $want rows" ||
  bad "windows rows"
want=$(py "import json; p=json.load(open('$A/prof/summary.json'))['profile']; print(sum(1+len([k for k in l['counters'] if k!='cycles']) for l in p['layers']))")
[ "$(sql "SELECT COUNT(*) FROM layers WHERE report_id = '$PR'")" = "$want" ] && ok "layers: $want counter rows" ||
  bad "layers rows: want $want"
want=$(py "import json; print(repr(json.load(open('$A/prof/summary.json'))['power']['energy_per_inference_j']))")
got=$(sql "SELECT value FROM figures WHERE report_id = '$PR' AND name = 'power.energy_per_inference_j'")
py "import sys; sys.exit(0 if float('$want')==float('$got') else 1)" && ok "profile energy per inference stored" ||
  bad "power.energy_per_inference_j: want $want got $got"
want=$(py "import json; print(repr(json.load(open('$A/em.json'))['values']['inference']))")
got=$(sql "SELECT value FROM figures WHERE name = 'values.inference'")
py "import sys; sys.exit(0 if float('$want')==float('$got') else 1)" && ok "energy model value stored" ||
  bad "values.inference: want $want got $got"
[ "$(sql "SELECT device FROM runs WHERE schema = 'measurement-harness/energy-model/v1'")" = dut ] &&
  ok "energy model takes its source report's device" || bad "energy model device"
[ "$(sql "SELECT provenance FROM runs WHERE report_id = '$R1'")" = synthetic ] && ok "provenance kept" ||
  bad "provenance"

# Twice changes nothing.
before=$(sql "SELECT COUNT(*) FROM figures")
expect 0 "ingest the same folder again" -- "$E" db --db "$DB" ingest "$A"
contains "$OUT" "0 ingested, 5 duplicate" "all duplicates"
[ "$(sql "SELECT COUNT(*) FROM figures")" = "$before" ] && ok "figures unchanged ($before)" || bad "figures changed"

# An artifact that fails verification is refused and listed; the others go in.
sed 's/"achieved_hz": \([0-9]\)/"achieved_hz": 9\1/' "$A/r1.json" >"$TMP/forged.json"
cmp -s "$A/r1.json" "$TMP/forged.json" && bad "forgery did not change the file"
reseal "$A/r1.json" "$TMP/r2.json" 'd["device"]["name"] = "dut2"'
expect 1 "a forged artifact is refused" -- "$E" db --db "$DB" ingest "$TMP/forged.json" "$TMP/r2.json"
contains "$OUT" "REFUSED   $TMP/forged.json" "refusal lists the file"
contains "$OUT" "fails verification" "refusal says why"
contains "$OUT" "1 ingested, 0 duplicate, 1 refused" "the good one still ingested"
[ "$(sql "SELECT COUNT(*) FROM runs")" = 6 ] && ok "6 runs now" || bad "runs after refusal"
expect 1 "a non-artifact file named directly is refused" -- "$E" db --db "$DB" ingest "$ERGON_SHARED_DIR/fixtures/jls/shared_basic.expected.json"
contains "$OUT" "REFUSED" "listed"

# list / show / trend / export.
expect 0 "list --device dut" -- "$E" db --db "$DB" list --device dut
contains "$OUT" "3 run(s)" "dut: run, relabelled run, energy model"
expect 0 "list --since the future" -- "$E" db --db "$DB" list --since 2999-01-01
contains "$OUT" "0 run(s)" "nothing after 2999"
expect 0 "show by prefix" -- "$E" db --db "$DB" show "${PR:0:20}"
echo "$OUT" >"$TMP/shown.json"
[ "$("$E" digest "$TMP/shown.json")" = "$PR" ] && ok "the stored artifact still digests to its report_id" ||
  bad "stored artifact digest differs"
expect 0 "trend load.mean_power_w" -- "$E" db --db "$DB" trend load.mean_power_w --device dut
contains "$OUT" "2 point(s) for load.mean_power_w on dut: 1 measured (counted), 1 synthetic" "trend counts only the measured point"
contains "$OUT" "[synthetic: not a measurement]" "the synthetic point is marked"
line=$(echo "$OUT" | grep "${M1:0:19}")
contains "$line" "measured   yes" "the measured point is counted"
# Schema 4: trend reads trend_points, which must hold exactly the figures of
# runs with a device (the join it replaces), the energy model's too: em.json
# was ingested before r1.json (name order), so its device came later.
want=$(sql "SELECT COUNT(*) FROM figures f JOIN runs r ON r.report_id = f.report_id WHERE r.device IS NOT NULL")
[ "$(sql "SELECT COUNT(*) FROM trend_points")" = "$want" ] && ok "trend_points: one row per figure of a run with a device ($want)" ||
  bad "trend_points rows: $(sql "SELECT COUNT(*) FROM trend_points"), want $want"
expect 0 "trend values.inference (energy model stored before its report)" -- "$E" db --db "$DB" trend values.inference --device dut
contains "$OUT" "1 point(s) for values.inference on dut" "the model's point is there"
expect 2 "trend of an unknown figure" -- "$E" db --db "$DB" trend load.mean_powr_w --device dut
contains "$ERR" "nearest: 'load.mean_power_w'" "suggests the nearest name"
expect 2 "trend without --device" -- "$E" db --db "$DB" trend load.mean_power_w
expect 0 "export --csv" -- "$E" db --db "$DB" export --csv "SELECT report_id, name, unit FROM figures WHERE name = 'load.energy_j' ORDER BY report_id"
contains "$OUT" "report_id,name,unit" "csv header"
[ "$(echo "$OUT" | wc -l)" = 4 ] && ok "csv: header + 3 rows" || bad "csv rows: $OUT"
expect 0 "export --json a view" -- "$E" db --db "$DB" export --json run_overview
py "import json,sys; a=json.loads(sys.stdin.read()); sys.exit(0 if len(a)==6 and all('issues' in r for r in a) else 1)" <<<"$OUT" &&
  ok "json: 6 rows of run_overview" || bad "json export"
expect 2 "export refuses a write" -- "$E" db --db "$DB" export --csv "DELETE FROM runs"
expect 2 "export refuses two statements" -- "$E" db --db "$DB" export --csv "SELECT 1; DELETE FROM runs"
[ "$(sql "SELECT COUNT(*) FROM runs")" = 6 ] && ok "nothing deleted" || bad "export changed the database"
expect 2 "unknown subcommand" -- "$E" db --db "$DB" frobnicate
expect 2 "unknown option" -- "$E" db --db "$DB" list --frobnicate

# Signatures on ingest (schema 3: runs.signer_key_id, runs.signature). Two
# signers; the key ids are read from the .pub files (field 3), not from ergon.
"$E" keygen --out "$TMP/k1" >/dev/null && "$E" keygen --out "$TMP/k2" >/dev/null || bad "keygen"
K1=$(cut -d' ' -f3 "$TMP/k1.pub")
K2=$(cut -d' ' -f3 "$TMP/k2.pub")
S=$TMP/sig
mkdir -p "$S"
for n in 1 2 3 4; do reseal "$A/r1.json" "$S/s$n.json" "d['device']['name'] = 'signed$n'"; done
"$E" sign --key "$TMP/k1" "$S/s1.json" >/dev/null && "$E" sign --key "$TMP/k2" "$S/s2.json" >/dev/null &&
  "$E" sign --key "$TMP/k1" "$S/s4.json" >/dev/null || bad "ergon sign"
# s4: signed by k1, then one byte of the signature value changed.
python3 - "$S/s4.json" <<'PY'
import json, sys, base64
d = json.load(open(sys.argv[1]))
v = bytearray(base64.b64decode(d["signature"]["value"]))
v[0] ^= 1
d["signature"]["value"] = base64.b64encode(bytes(v)).decode()
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
expect 1 "ingest --pubkey: only k1's valid signature goes in" -- "$E" db --db "$DB" ingest --pubkey "$TMP/k1.pub" "$S"
contains "$OUT" "ingest: 1 ingested, 0 duplicate, 3 refused" "one stored, three refused"
contains "$OUT" "REFUSED   $S/s2.json: $S/s2.json: signed by $K2, which is none of the --pubkey keys ($K1)" "another signer refused, both key ids named"
contains "$OUT" "REFUSED   $S/s3.json: $S/s3.json: unsigned" "an unsigned artifact refused"
contains "$OUT" "REFUSED   $S/s4.json: $S/s4.json: bad signature" "a bad signature refused"
[ "$(sql "SELECT signer_key_id, signature FROM runs WHERE device = 'signed1'")" = "$K1|verified" ] &&
  ok "k1's run stored with its key id, verified" || bad "signed1 row: $(sql "SELECT signer_key_id, signature FROM runs WHERE device = 'signed1'")"
[ "$(sql "SELECT COUNT(*) FROM runs WHERE device IN ('signed2', 'signed3', 'signed4')")" = 0 ] &&
  ok "nothing of the refused ones stored" || bad "a refused artifact was stored"
expect 0 "ingest with both keys" -- "$E" db --db "$DB" ingest --pubkey "$TMP/k1.pub" --pubkey "$TMP/k2.pub" "$S/s2.json"
[ "$(sql "SELECT signer_key_id, signature FROM runs WHERE device = 'signed2'")" = "$K2|verified" ] &&
  ok "k2's run verified with the second key" || bad "signed2 row"
expect 0 "without --pubkey the signer is kept, not checked" -- "$E" db --db "$DB" ingest "$S/s3.json"
[ "$(sql "SELECT signature FROM runs WHERE device = 'signed3'")" = "unsigned" ] && ok "unsigned stored as unsigned" || bad "signed3 row"
# The signature is outside the digest: without a key nothing checks it.
expect 0 "a bad signature without --pubkey" -- "$E" db --db "$DB" ingest "$S/s4.json"
[ "$(sql "SELECT signer_key_id, signature FROM runs WHERE device = 'signed4'")" = "$K1|not checked" ] &&
  ok "stored as claimed by k1, marked not checked" || bad "signed4 row"
expect 2 "--pubkey on another action" -- "$E" db --db "$DB" list --pubkey "$TMP/k1.pub"
expect 2 "a secret key as --pubkey" -- "$E" db --db "$DB" ingest --pubkey "$TMP/k1" "$S/s1.json"
expect 1 "an energy model with --pubkey" -- "$E" db --db "$DB" ingest --pubkey "$TMP/k1.pub" "$A/em.json"
contains "$OUT" "no signature can bind it" "says why"
# A model ergon wrote before under the old schema name is stored as it is.
sed 's#"measurement-harness/energy-model/v1"#"energy-model/v1"#' "$A/em.json" >"$TMP/em_old.json"
expect 0 "ingest an energy model under its old name" -- "$E" db --db "$DB" ingest "$TMP/em_old.json"
contains "$OUT" "1 ingested, 0 duplicate, 0 refused" "the old-name model stored"
[ "$(sql "SELECT COUNT(*) FROM runs WHERE schema = 'energy-model/v1'")" = 1 ] && ok "stored under its own name" ||
  bad "old-name model row"

# ergon.kernels: one row per case and implementation (schema 3).
cat >"$TMP/ks.csv" <<'CSV'
case,impl,correct,count
fc_a,ref,pass,100
fc_a,ref,pass,110
fc_a,mve,pass,40
dw_c,ref,pass,500
dw_c,mve,fail,
CSV
"$E" kernels report "$TMP/ks.csv" --out "$TMP/ko" >/dev/null || bad "kernels report"
expect 0 "ingest a kernels artifact" -- "$E" db --db "$DB" ingest "$TMP/ko/kernels.json"
KR=$(rid "$TMP/ko/kernels.json")
[ "$(sql "SELECT case_name, impl, correct, timed, n, CAST(min AS INTEGER), CAST(mean AS INTEGER) FROM kernel_cases WHERE report_id = '$KR' ORDER BY case_name, impl" | tr '\n' ' ')" = \
  "dw_c|mve|0|0||| dw_c|ref|1|1|1|500|500 fc_a|mve|1|1|1|40|40 fc_a|ref|1|1|2|100|105 " ] &&
  ok "kernel_cases: 4 rows, the failed one untimed, mean (100+110)/2" ||
  bad "kernel_cases: $(sql "SELECT case_name, impl, correct, timed, n, CAST(min AS INTEGER), CAST(mean AS INTEGER) FROM kernel_cases WHERE report_id = '$KR' ORDER BY case_name, impl" | tr '\n' ' ')"

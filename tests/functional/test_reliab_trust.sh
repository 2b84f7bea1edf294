#!/usr/bin/env bash
# Issue 30, case 7: trust edges. A signature names the report_id it was
# made for, so a signature moved to another report (or left on a resealed
# edit) is refused without the key: by verify, by db ingest. compare
# refuses what verify refuses (a resealed forged figure), with the exit
# code its help and docs/COMPARE.md state (4). Before: verify printed
# "signed by ... (not checked)" and exited 0, ingest stored the signer,
# compare compared the forged figure, and its help said 3 where it exited 4.
. "$(dirname "$0")/run_lib.sh"
. "$(dirname "$0")/reseal_lib.sh"
E=$ERGON_BIN
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/a.json" >/dev/null 2>&1 || bad "run a"
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/b.json" >/dev/null 2>&1 || bad "run b"
"$E" keygen --out "$TMP/k" >/dev/null 2>&1 || bad "keygen"
"$E" sign "$TMP/a.json" --key "$TMP/k" >/dev/null 2>&1 || bad "sign a"

# b.json with a.json's signature: b's report_id still matches its content
# (report_id does not cover the signature).
python3 - "$TMP/a.json" "$TMP/b.json" "$TMP/moved.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
b["signature"] = a["signature"]
json.dump(b, open(sys.argv[3], "w"), indent=1)
PY
expect 0 "the signed report verifies without the key" -- "$E" verify "$TMP/a.json"
contains "$OUT" "(not checked: give --pubkey PUB)" "and says the signature is not checked"
expect 1 "a moved signature is refused without the key" -- "$E" verify "$TMP/moved.json"
contains "$ERR" "field signature.report_id: the signature was made for" "verify names the field"
expect 1 "verify --json says it too" -- "$E" verify --json "$TMP/moved.json"
contains "$OUT" '"ok": false' "--json: ok false"
expect 1 "with the key, as before" -- "$E" verify "$TMP/moved.json" --pubkey "$TMP/k.pub"
expect 1 "db ingest refuses a moved signature" -- "$E" db --db "$TMP/x.db" ingest "$TMP/moved.json"
contains "$OUT" "fails verification: field signature.report_id" "ingest names the field"
"$E" db --db "$TMP/x.db" export --csv runs >"$TMP/runs.csv" 2>/dev/null
[ "$(grep -c sha256 "$TMP/runs.csv")" = 0 ] && ok "nothing was stored" || bad "the moved signer was stored"
expect 0 "the signed report is stored" -- "$E" db --db "$TMP/x.db" ingest "$TMP/a.json"

# A resealed forged figure: verify and ingest refuse it, and so does compare.
reseal "$TMP/b.json" "$TMP/forged.json" 'd["figures"]["load"]["mean_power_w"] *= 0.5'
expect 1 "verify refuses the resealed forged figure" -- "$E" verify "$TMP/forged.json"
expect 4 "compare refuses it (exit 4)" -- "$E" compare "$TMP/a.json" "$TMP/forged.json"
contains "$ERR" "forged.json: fails verification: field figures.load" "compare says why"
expect 4 "compare refuses a moved signature" -- "$E" compare "$TMP/a.json" "$TMP/moved.json"
# A changed digest: the exit code the help states.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['device']['name']='x'; json.dump(d, open(sys.argv[2],'w'))" \
  "$TMP/b.json" "$TMP/changed.json"
expect 4 "compare refuses a changed artifact (exit 4)" -- "$E" compare "$TMP/a.json" "$TMP/changed.json"
"$E" compare --help >"$TMP/help" 2>&1
# The exit-code table's entry for 4 (wrapped lines joined).
sed -n '/^Exit codes/,$p' "$TMP/help" | tr -s ' \n' ' ' | grep -q "4 degraded refused: not comparable, artifacts of different kinds, an artifact that fails verification" &&
  ok "compare's help states exit 4 for an artifact that fails verification" || bad "help"
grep -q "| 4 | refused: .*fails verification" "$ERGON_SOURCE_DIR/docs/COMPARE.md" &&
  ok "docs/COMPARE.md says the same" || bad "docs/COMPARE.md"
# Two honest single runs are compared, not refused: exit 4 here is
# compare's "no verdict without the run-to-run spread" (issue 31: one
# repetition a side), never a verification failure.
out=$("$E" compare "$TMP/a.json" "$TMP/b.json" 2>&1)
rc=$?
[ "$rc" = 4 ] || bad "two honest reports: exit $rc, wanted 4 (no verdict)"
contains "$out" "run-to-run spread unknown" "two honest reports compare (no verdict: one repetition a side)"
case "$out" in *verif*|*refus*|*digest*) bad "two honest reports: compare speaks of verification: $out" ;; *) ok "and nothing about verification" ;; esac
finish

#!/usr/bin/env bash
# --sign KEY on `ergon kernels run` and `ergon kernels report` (issues 12
# and 14): the key is loaded before anything is measured or read, the
# written kernels.json is signed, `ergon verify --pubkey` names the signer,
# another key, a changed median and a signature moved to another kernels
# artifact all fail.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
"$E" keygen --out "$TMP/k" >/dev/null || bad "keygen"
"$E" keygen --out "$TMP/other" >/dev/null || bad "keygen other"
KID=$(cut -d' ' -f3 "$TMP/k.pub")
printf 'fc f accum=33 units=5\n' >"$TMP/shapes.txt"
printf 'case,impl,correct,count\nx,ref,pass,100\nx,ref,pass,110\n' >"$TMP/s.csv"

expect 0 "kernels run --sign" -- "$E" kernels run --board host --shapes "$TMP/shapes.txt" --iterations 3 \
  --out "$TMP/run" --sign "$TMP/k"
contains "$ERR" "signed $TMP/run/kernels.json with $KID" "run says it signed"
expect 0 "verify --pubkey (run)" -- "$E" verify "$TMP/run/kernels.json" --pubkey "$TMP/k.pub"
contains "$OUT" "signature OK: signed by $KID" "verify names the signer"
expect 0 "kernels report --sign" -- "$E" kernels report "$TMP/s.csv" --out "$TMP/rep" --sign "$TMP/k"
expect 0 "verify --pubkey (report)" -- "$E" verify "$TMP/rep/kernels.json" --pubkey "$TMP/k.pub"
contains "$OUT" "signature OK: signed by $KID" "report artifact: signer named"
expect 1 "another signer's key" -- "$E" verify "$TMP/rep/kernels.json" --pubkey "$TMP/other.pub"
contains "$ERR" "another signer" "another signer is named"

# A changed median: the digest no longer matches, so the signature fails too.
sed 's/"median": 105.0/"median": 95.0/' "$TMP/rep/kernels.json" >"$TMP/tampered.json"
cmp -s "$TMP/rep/kernels.json" "$TMP/tampered.json" && bad "the edit did not apply"
expect 1 "a changed median fails" -- "$E" verify "$TMP/tampered.json" --pubkey "$TMP/k.pub"
# The run artifact's signature moved onto the report artifact.
python3 - "$TMP/run/kernels.json" "$TMP/rep/kernels.json" "$TMP/moved.json" <<'PY'
import json, sys
src, dst = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
dst["signature"] = src["signature"]
json.dump(dst, open(sys.argv[3], "w"), indent=2)
PY
expect 1 "a signature moved to another kernels artifact fails" -- "$E" verify "$TMP/moved.json" --pubkey "$TMP/k.pub"

# A bad key fails before anything is measured or written.
cp "$TMP/k" "$TMP/open.key" && chmod 644 "$TMP/open.key"
expect 3 "a world-readable key on kernels run" -- "$E" kernels run --board host --shapes "$TMP/shapes.txt" \
  --out "$TMP/bad" --sign "$TMP/open.key"
contains "$ERR" "ergon kernels: --sign:" "the option is named"
[ ! -e "$TMP/bad" ] && ok "nothing measured or written with a bad key" || bad "wrote $TMP/bad with a bad key"
expect 3 "a missing key on kernels report" -- "$E" kernels report "$TMP/s.csv" --out "$TMP/bad2" --sign "$TMP/nokey"
[ ! -e "$TMP/bad2" ] && ok "report: nothing written with a missing key" || bad "wrote $TMP/bad2"
expect 2 "a public key as --sign" -- "$E" kernels report "$TMP/s.csv" --out "$TMP/bad3" --sign "$TMP/k.pub"
expect 2 "--sign without --out" -- "$E" kernels report "$TMP/s.csv" --sign "$TMP/k"
contains "$ERR" "--sign needs --out DIR" "says what is missing"
finish

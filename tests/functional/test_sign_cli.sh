#!/usr/bin/env bash
# ergon keygen / sign / verify --pubkey through the CLI, and --sign on run,
# profile and analyze: round trip, report_id unchanged by signing, another
# signer, the wrong kind of key, a corrupt key, a readable secret key.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN

expect 0 "keygen" -- "$E" keygen --out "$TMP/k"
contains "$OUT" "key id ed25519:" "keygen names the key id"
[ "$(stat -c %a "$TMP/k")" = 600 ] && ok "secret key mode 0600" || bad "secret key mode $(stat -c %a "$TMP/k")"
expect 3 "keygen refuses to replace a key" -- "$E" keygen --out "$TMP/k"
expect 0 "second signer" -- "$E" keygen --out "$TMP/other"
KID=$(cut -d' ' -f3 "$TMP/k.pub")

expect 0 "run --sign" -- "$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r.json" --sign "$TMP/k"
contains "$ERR" "signed $TMP/r.json with $KID" "run says it signed"
expect 0 "verify --pubkey" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/k.pub"
contains "$OUT" "signature OK: signed by $KID" "verify names the signer"
expect 0 "verify without --pubkey" -- "$E" verify "$TMP/r.json"
contains "$OUT" "not checked" "an unchecked signature is called unchecked"
RID=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['report_id'])" "$TMP/r.json")
expect 0 "digest" -- "$E" digest "$TMP/r.json"
[ "$OUT" = "$RID" ] && ok "signing left report_id as the digest" || bad "digest $OUT != $RID"

expect 1 "another signer's public key" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/other.pub"
contains "$ERR" "another signer" "another signer is named"
expect 2 "a secret key given as --pubkey" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/k"
expect 2 "a public key given as --key" -- "$E" sign "$TMP/r.json" --key "$TMP/k.pub"
sed 's/ [A-Za-z0-9+\/=]*$/ AAAA/' "$TMP/k.pub" >"$TMP/corrupt.pub"
expect 3 "a corrupt public key" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/corrupt.pub"
contains "$ERR" "corrupt" "the corrupt key is called corrupt"
cp "$TMP/k" "$TMP/open.key" && chmod 644 "$TMP/open.key"
expect 3 "a world-readable secret key" -- "$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r2.json" --sign "$TMP/open.key"
[ ! -e "$TMP/r2.json" ] && ok "a bad key fails before measuring" || bad "measured with a bad key"

# Re-signing with another key replaces the signature.
expect 0 "re-sign" -- "$E" sign "$TMP/r.json" --key "$TMP/other"
expect 0 "verify the new signer" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/other.pub"
expect 1 "the old signer no longer verifies" -- "$E" verify "$TMP/r.json" --pubkey "$TMP/k.pub"

# An edited report is never signed.
sed 's/"device": {/"device": {"x": 1,/' "$TMP/r.json" >"$TMP/edited.json"
expect 1 "sign refuses a tampered report" -- "$E" sign "$TMP/edited.json" --key "$TMP/k"
contains "$ERR" "not signed" "sign says it did not sign"

expect 0 "profile --sign" -- "$E" profile --board sim --power --out "$TMP/prof" --sign "$TMP/k"
expect 0 "verify a profile summary" -- "$E" verify "$TMP/prof/summary.json" --pubkey "$TMP/k.pub"
contains "$OUT" "figures NOT recomputed" "a summary's figures are not claimed as recomputed"
expect 0 "analyze --sign" -- "$E" analyze --jls "$ERGON_SHARED_DIR/fixtures/jls/shared_two_windows.jls" --out "$TMP/an" --sign "$TMP/k"
expect 0 "verify an analyze summary" -- "$E" verify "$TMP/an/summary.json" --pubkey "$TMP/k.pub"
finish

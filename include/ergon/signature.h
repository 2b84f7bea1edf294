/* Ed25519 signatures of artifacts (libsodium).
 *
 * A signature binds a key holder to one report_id. It is stored in the
 * artifact as the top-level member
 *
 *   "signature": {"algorithm": "ed25519", "key_id": "ed25519:<32 hex>",
 *                 "report_id": "sha256:<hex>", "value": "<base64, 64 bytes>"}
 *
 * and report_id does not cover it (ergon_artifact_digest leaves out
 * report_id and signature), so signing never changes the digest of the
 * body. The signed message is the fixed text
 *
 *   "ergon-signature-v1\nreport_id=<report_id>\nkey_id=<key_id>\n"
 *
 * so a signature is worthless for any other report_id or key. Key files are
 * one line of text each (docs/internals/signature.md):
 *
 *   secret (mode 0600): "ergon-secret-key ed25519 <key_id> <base64 of 64 bytes>"
 *   public:             "ergon-public-key ed25519 <key_id> <base64 of 32 bytes>"
 *
 * key_id = "ed25519:" + the first 16 bytes of SHA-256(public key), in hex.
 * docs/THREAT_MODEL.md says what a signature proves and what it does not.
 */
#ifndef ERGON_SIGNATURE_H
#define ERGON_SIGNATURE_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_SIG_ALGORITHM "ed25519"
/* "ed25519:" + 32 hex digits + NUL. */
#define ERGON_KEY_ID_MAX 48
/* A key file is one short line; anything longer is not one. */
#define ERGON_KEY_FILE_MAX 512

struct ergon_secret_key {
	unsigned char sk[64]; /* libsodium's secret key: seed || public key */
	unsigned char pk[32];
	char key_id[ERGON_KEY_ID_MAX];
};

struct ergon_public_key {
	unsigned char pk[32];
	char key_id[ERGON_KEY_ID_MAX];
};

/* Make a key pair and write it: the secret key to path (mode 0600) and the
 * public key to path + ".pub". Refuses to replace either file unless flags
 * has ERGON_WRITE_FORCE. key_id (may be NULL) gets the new key's id. */
ERGON_API int ergon_keygen(const char *path, unsigned flags, char key_id[ERGON_KEY_ID_MAX],
			   struct ergon_err *err);

/* Load a secret key file. Errors name the file and what is wrong with it
 * (a public key given instead, bad encoding, a key id that does not match
 * the key, a group- or world-readable file). Wipe the key with
 * ergon_secret_key_wipe when done. */
ERGON_API int ergon_secret_key_load(const char *path, struct ergon_secret_key *key,
				    struct ergon_err *err);
ERGON_API void ergon_secret_key_wipe(struct ergon_secret_key *key);

/* Parse a public key from text (len bytes, at most ERGON_KEY_FILE_MAX; name
 * is used in messages): the parser behind ergon_public_key_load. */
ERGON_API int ergon_public_key_parse(const char *text, size_t len, const char *name,
				     struct ergon_public_key *key, struct ergon_err *err);

/* Load a public key file; errors as for the secret key. */
ERGON_API int ergon_public_key_load(const char *path, struct ergon_public_key *key,
				    struct ergon_err *err);

/* Sign a sealed artifact: its report_id must match its content (checked
 * here: a tampered artifact is never signed). Sets or replaces the
 * artifact's "signature" member; report_id stays as it is. */
ERGON_API int ergon_artifact_sign(json_t *artifact, const struct ergon_secret_key *key,
				  struct ergon_err *err);

/* Load the artifact at path, sign it and write it back atomically. */
ERGON_API int ergon_artifact_sign_file(const char *path, const struct ergon_secret_key *key,
				       struct ergon_err *err);

/* Check the artifact's signature with pub: the signature must exist, be
 * well formed, name pub's key id, be made for the artifact's report_id,
 * and verify. It does not recompute report_id: call
 * ergon_artifact_check_digest (or the artifact's own verify) first.
 * ERGON_EVERIFY names what failed (another signer: both key ids). */
ERGON_API int ergon_artifact_check_signature(const json_t *artifact,
					     const struct ergon_public_key *pub,
					     struct ergon_err *err);

/* What can be checked of a signature without a key: when the artifact has
 * a signature member, it has the right shape and algorithm and was made
 * for this artifact's report_id (a signature moved from another report, or
 * left on a resealed edit, is not). 0 when unsigned or bound, else
 * ERGON_EVERIFY naming the field. */
ERGON_API int ergon_artifact_signature_bound(const json_t *artifact, struct ergon_err *err);

/* The signature status of an artifact without a public key, for display:
 * "unsigned" or "signed by KEY_ID (not checked)"; key_id (may be NULL)
 * gets the claimed signer. Returns 1 when a signature member exists. */
ERGON_API int ergon_artifact_signer(const json_t *artifact, char key_id[ERGON_KEY_ID_MAX]);

#ifdef __cplusplus
}
#endif
#endif

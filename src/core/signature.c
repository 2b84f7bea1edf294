/* Ed25519 key files and artifact signatures (libsodium). signature.h. */
#include "ergon/signature.h"

#include "ergon/artifact.h"
#include "ergon/fileio.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SECRET_TAG "ergon-secret-key"
#define PUBLIC_TAG "ergon-public-key"
#define MESSAGE_MAX 256
/* report_id is "sha256:" + 64 hex digits. */
#define REPORT_ID_LEN 71

static int sodium_ready(struct ergon_err *err)
{
	if (sodium_init() < 0)
		return ergon_err_set(err, ERGON_EIO, "libsodium failed to initialise");
	return 0;
}

static void key_id_of(const unsigned char pk[32], char id[ERGON_KEY_ID_MAX])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, pk, 32);
	memcpy(id, "ed25519:", 8);
	sodium_bin2hex(id + 8, ERGON_KEY_ID_MAX - 8, h, 16);
}

/* The id of pk into id; the claimed id from the file must equal it. */
static int check_key_id(const unsigned char pk[32], const char *claimed, const char *path,
			char id[ERGON_KEY_ID_MAX], struct ergon_err *err)
{
	key_id_of(pk, id);
	if (strcmp(id, claimed) == 0)
		return 0;
	return ergon_err_set(err, ERGON_EPARSE,
			     "%s: field 3: key id %.48s does not match the key (%s): the file "
			     "was edited or is corrupt",
			     path, claimed, id);
}

/* "TAG ed25519 KEY_ID BASE64\n" */
static int key_line(char *out, size_t cap, const char *tag, const char *key_id,
		    const unsigned char *bin, size_t n)
{
	char b64[sodium_base64_ENCODED_LEN(64, sodium_base64_VARIANT_ORIGINAL)];
	sodium_bin2base64(b64, sizeof b64, bin, n, sodium_base64_VARIANT_ORIGINAL);
	int w = snprintf(out, cap, "%s %s %s %s\n", tag, ERGON_SIG_ALGORITHM, key_id, b64);
	sodium_memzero(b64, sizeof b64);
	return w > 0 && (size_t)w < cap ? w : -1;
}

int ergon_keygen(const char *path, unsigned flags, char key_id[ERGON_KEY_ID_MAX],
		 struct ergon_err *err)
{
	struct ergon_secret_key k;
	char pubpath[4096], line[ERGON_KEY_FILE_MAX];
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	if (path == NULL || path[0] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE,
				     "keygen: give --out KEY (the secret key file)");
	if ((size_t)snprintf(pubpath, sizeof pubpath, "%s.pub", path) >= sizeof pubpath)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: path too long", path);
	/* Check both before writing either, so a refusal leaves nothing half made. */
	if ((rc = ergon_file_check_writable(path, flags, err)) ||
	    (rc = ergon_file_check_writable(pubpath, flags, err)))
		return rc;
	crypto_sign_keypair(k.pk, k.sk);
	key_id_of(k.pk, k.key_id);
	int n = key_line(line, sizeof line, SECRET_TAG, k.key_id, k.sk, sizeof k.sk);
	if (n < 0) {
		rc = ergon_err_set(err, ERGON_ETOOBIG, "%s: key line too long", path);
		goto out;
	}
	rc = ergon_file_write_atomic(path, line, (size_t)n, flags | ERGON_WRITE_PRIVATE, err);
	if (rc)
		goto out;
	n = key_line(line, sizeof line, PUBLIC_TAG, k.key_id, k.pk, sizeof k.pk);
	if (n < 0) {
		rc = ergon_err_set(err, ERGON_ETOOBIG, "%s: key line too long", pubpath);
		goto out;
	}
	rc = ergon_file_write_atomic(pubpath, line, (size_t)n, flags, err);
	if (rc == 0 && key_id)
		snprintf(key_id, ERGON_KEY_ID_MAX, "%s", k.key_id);
out:
	sodium_memzero(line, sizeof line);
	ergon_secret_key_wipe(&k);
	return rc;
}

void ergon_secret_key_wipe(struct ergon_secret_key *key)
{
	if (key)
		sodium_memzero(key, sizeof *key);
}

/* Split a key file's one line into tag, algorithm, key id and decoded key
 * bytes (exactly want bytes). text is the file's content (len bytes,
 * modified in place: it must be writable and NUL-terminated at len). */
static int key_text_parse(char *data, size_t len, const char *path, const char *tag,
			  const char *other_tag, const char *what, unsigned char *bin, size_t want,
			  char key_id[ERGON_KEY_ID_MAX], struct ergon_err *err)
{
	/* Fields are separated by single spaces; the line ends in one newline. */
	char *f[4] = {NULL, NULL, NULL, NULL};
	size_t nf = 0;
	char *p = data;
	if (len > ERGON_KEY_FILE_MAX)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: over %d bytes, not an ergon key file (make one with "
				     "ergon keygen --out KEY)",
				     path, ERGON_KEY_FILE_MAX);
	if (len > 0 && data[len - 1] == '\n')
		data[--len] = '\0';
	if (memchr(data, '\0', len) != NULL || strchr(data, '\n') != NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: more than one line or a NUL byte; not an ergon key file",
				     path);
	while (nf < 4 && p != NULL) {
		f[nf++] = p;
		p = strchr(p, ' ');
		if (p)
			*p++ = '\0';
	}
	if (nf > 0 && other_tag && strcmp(f[0], other_tag) == 0)
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "%s: this is %s key, expected the %s key (keygen writes the "
		    "secret key to KEY and the public key to KEY.pub)",
		    path, strcmp(other_tag, SECRET_TAG) == 0 ? "a secret" : "a public", what);
	if (nf != 4 || p != NULL || strcmp(f[0], tag) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: not an ergon %s key file: expected one line \"%s %s "
				     "KEY_ID BASE64\" (made by ergon keygen)",
				     path, what, tag, ERGON_SIG_ALGORITHM);
	if (strcmp(f[1], ERGON_SIG_ALGORITHM) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: field 2: algorithm \"%.40s\" is not supported; ergon "
				     "signs with %s only",
				     path, f[1], ERGON_SIG_ALGORITHM);
	size_t got = 0;
	const char *end = NULL;
	if (sodium_base642bin(bin, want, f[3], strlen(f[3]), NULL, &got, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    got != want || end == NULL || *end != '\0')
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: field 4: not the base64 of a %zu-byte ed25519 %s key (the "
		    "file is corrupt; make a new pair with ergon keygen)",
		    path, want, what);
	if (strlen(f[2]) >= ERGON_KEY_ID_MAX)
		return ergon_err_set(err, ERGON_EPARSE, "%s: field 3: key id too long", path);
	snprintf(key_id, ERGON_KEY_ID_MAX, "%s", f[2]);
	return 0;
}

/* key_text_parse over a file's content. */
static int key_file_parse(const char *path, const char *tag, const char *other_tag,
			  const char *what, unsigned char *bin, size_t want,
			  char key_id[ERGON_KEY_ID_MAX], struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, ERGON_KEY_FILE_MAX, &data, &len, err);
	if (rc == ERGON_ETOOBIG) {
		ergon_err_clear(err);
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: over %d bytes, not an ergon key file (make one with "
				     "ergon keygen --out KEY)",
				     path, ERGON_KEY_FILE_MAX);
	}
	if (rc)
		return rc;
	rc = key_text_parse(data, len, path, tag, other_tag, what, bin, want, key_id, err);
	sodium_memzero(data, len);
	free(data);
	return rc;
}

int ergon_public_key_parse(const char *text, size_t len, const char *name,
			   struct ergon_public_key *key, struct ergon_err *err)
{
	memset(key, 0, sizeof *key);
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	if (len > ERGON_KEY_FILE_MAX)
		return ergon_err_set(err, ERGON_EPARSE, "%s: over %d bytes, not an ergon key", name,
				     ERGON_KEY_FILE_MAX);
	char buf[ERGON_KEY_FILE_MAX + 1], claimed[ERGON_KEY_ID_MAX];
	memcpy(buf, text, len);
	buf[len] = '\0';
	rc = key_text_parse(buf, len, name, PUBLIC_TAG, SECRET_TAG, "public", key->pk,
			    sizeof key->pk, claimed, err);
	if (rc == 0)
		rc = check_key_id(key->pk, claimed, name, key->key_id, err);
	if (rc)
		memset(key, 0, sizeof *key);
	return rc;
}

int ergon_secret_key_load(const char *path, struct ergon_secret_key *key, struct ergon_err *err)
{
	char claimed[ERGON_KEY_ID_MAX];
	struct stat st;
	memset(key, 0, sizeof *key);
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	rc = key_file_parse(path, SECRET_TAG, PUBLIC_TAG, "secret", key->sk, sizeof key->sk,
			    claimed, err);
	if (rc)
		goto fail;
	/* After the parse, so that a public key given by mistake is named as
	 * such rather than as a readable secret. */
	if (stat(path, &st) != 0) {
		rc = ergon_err_errno(err, errno, "%s: cannot read the secret key", path);
		goto fail;
	}
	if (st.st_mode & 077) {
		rc = ergon_err_set(err, ERGON_EACCES,
				   "%s: mode %03o lets others read the secret key; run chmod 600 "
				   "%s (and consider the key leaked if others could read it)",
				   path, (unsigned)(st.st_mode & 0777), path);
		goto fail;
	}
	/* libsodium's secret key is seed || public key: derive the public key
	 * from the seed and check the stored half and the id against it. */
	unsigned char seed[32], pk[32], sk2[64];
	crypto_sign_ed25519_sk_to_seed(seed, key->sk);
	crypto_sign_seed_keypair(pk, sk2, seed);
	int same = sodium_memcmp(sk2, key->sk, sizeof sk2) == 0;
	sodium_memzero(seed, sizeof seed);
	sodium_memzero(sk2, sizeof sk2);
	if (!same) {
		rc = ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: the secret key's public half does not belong to its seed (the "
		    "file is corrupt; make a new pair with ergon keygen)",
		    path);
		goto fail;
	}
	memcpy(key->pk, pk, sizeof pk);
	rc = check_key_id(key->pk, claimed, path, key->key_id, err);
	if (rc)
		goto fail;
	return 0;
fail:
	ergon_secret_key_wipe(key);
	return rc;
}

int ergon_public_key_load(const char *path, struct ergon_public_key *key, struct ergon_err *err)
{
	char claimed[ERGON_KEY_ID_MAX];
	memset(key, 0, sizeof *key);
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	rc = key_file_parse(path, PUBLIC_TAG, SECRET_TAG, "public", key->pk, sizeof key->pk,
			    claimed, err);
	if (rc == 0)
		rc = check_key_id(key->pk, claimed, path, key->key_id, err);
	if (rc)
		memset(key, 0, sizeof *key);
	return rc;
}

static int message_of(const char *report_id, const char *key_id, char msg[MESSAGE_MAX], size_t *len)
{
	int w = snprintf(msg, MESSAGE_MAX, "ergon-signature-v1\nreport_id=%s\nkey_id=%s\n",
			 report_id, key_id);
	if (w < 0 || w >= MESSAGE_MAX)
		return -1;
	*len = (size_t)w;
	return 0;
}

int ergon_artifact_sign(json_t *artifact, const struct ergon_secret_key *key, struct ergon_err *err)
{
	char msg[MESSAGE_MAX];
	size_t mlen = 0;
	unsigned char sig[crypto_sign_BYTES];
	char b64[sodium_base64_ENCODED_LEN(crypto_sign_BYTES, sodium_base64_VARIANT_ORIGINAL)];
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	rc = ergon_artifact_check_digest(artifact, err);
	if (rc)
		return rc;
	const char *rid = json_string_value(json_object_get(artifact, "report_id"));
	if (message_of(rid, key->key_id, msg, &mlen) != 0)
		return ergon_err_set(err, ERGON_EPARSE, "field report_id: too long to sign");
	crypto_sign_detached(sig, NULL, (const unsigned char *)msg, mlen, key->sk);
	sodium_bin2base64(b64, sizeof b64, sig, sizeof sig, sodium_base64_VARIANT_ORIGINAL);
	json_t *s = json_pack("{s:s, s:s, s:s, s:s}", "algorithm", ERGON_SIG_ALGORITHM, "key_id",
			      key->key_id, "report_id", rid, "value", b64);
	if (s == NULL || json_object_set_new(artifact, "signature", s) != 0)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	return 0;
}

int ergon_artifact_sign_file(const char *path, const struct ergon_secret_key *key,
			     struct ergon_err *err)
{
	json_t *a = NULL;
	int rc = ergon_artifact_load(path, (size_t)4 << 30, &a, err);
	if (rc)
		return rc;
	rc = ergon_artifact_sign(a, key, err);
	if (rc) {
		/* Name the file: the digest message alone does not. */
		struct ergon_err inner = *err;
		ergon_err_clear(err);
		rc = ergon_err_set(err, rc, "%s: %s; not signed", path, inner.msg);
		goto out;
	}
	/* ergon_artifact_write reseals: the digest leaves out the signature,
	 * so report_id comes out unchanged. */
	rc = ergon_artifact_write(a, path, ERGON_WRITE_FORCE, err);
out:
	json_decref(a);
	return rc;
}

int ergon_artifact_signer(const json_t *artifact, char key_id[ERGON_KEY_ID_MAX])
{
	const json_t *s = json_object_get(artifact, "signature");
	const char *id = json_string_value(json_object_get(s, "key_id"));
	if (key_id)
		snprintf(key_id, ERGON_KEY_ID_MAX, "%s", id ? id : "");
	return s != NULL;
}

int ergon_artifact_signature_bound(const json_t *artifact, struct ergon_err *err)
{
	const json_t *s = json_object_get(artifact, "signature");
	if (s == NULL)
		return 0;
	if (!json_is_object(s) || json_object_size(s) != 4)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature: expected an object with exactly algorithm, "
				     "key_id, report_id and value");
	const char *alg = json_string_value(json_object_get(s, "algorithm"));
	const char *kid = json_string_value(json_object_get(s, "key_id"));
	const char *srid = json_string_value(json_object_get(s, "report_id"));
	const char *val = json_string_value(json_object_get(s, "value"));
	const char *rid = json_string_value(json_object_get(artifact, "report_id"));
	if (alg == NULL || kid == NULL || srid == NULL || val == NULL)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature: algorithm, key_id, report_id and value must "
				     "be strings");
	if (strcmp(alg, ERGON_SIG_ALGORITHM) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature.algorithm: \"%.40s\" is not %s", alg,
				     ERGON_SIG_ALGORITHM);
	if (rid == NULL)
		return ergon_err_set(err, ERGON_EVERIFY, "field report_id: missing");
	if (strcmp(srid, rid) != 0)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field signature.report_id: the signature was made for %.80s, "
		    "this artifact is %.80s: a signature taken from another report",
		    srid, rid);
	return 0;
}

int ergon_artifact_check_signature(const json_t *artifact, const struct ergon_public_key *pub,
				   struct ergon_err *err)
{
	char msg[MESSAGE_MAX];
	size_t mlen = 0, got = 0;
	unsigned char sig[crypto_sign_BYTES];
	int rc = sodium_ready(err);
	if (rc)
		return rc;
	const json_t *s = json_object_get(artifact, "signature");
	if (s == NULL)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field signature: missing; the artifact is not signed (sign it "
		    "with ergon sign ARTIFACT --key KEY)");
	/* Shape, algorithm and the report it was made for: the part that
	 * needs no key. */
	rc = ergon_artifact_signature_bound(artifact, err);
	if (rc)
		return rc;
	const char *kid = json_string_value(json_object_get(s, "key_id"));
	const char *val = json_string_value(json_object_get(s, "value"));
	const char *rid = json_string_value(json_object_get(artifact, "report_id"));
	if (strcmp(kid, pub->key_id) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature.key_id: signed by %.48s, not by the given "
				     "public key %s: another signer (or the wrong --pubkey)",
				     kid, pub->key_id);
	if (strlen(rid) != REPORT_ID_LEN || message_of(rid, kid, msg, &mlen) != 0)
		return ergon_err_set(err, ERGON_EVERIFY, "field report_id: not a sha256 id");
	const char *end = NULL;
	if (sodium_base642bin(sig, sizeof sig, val, strlen(val), NULL, &got, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    got != sizeof sig || end == NULL || *end != '\0')
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature.value: not the base64 of a %d-byte ed25519 "
				     "signature",
				     (int)sizeof sig);
	if (crypto_sign_verify_detached(sig, (const unsigned char *)msg, mlen, pub->pk) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field signature.value: does not verify with %s for report_id "
				     "%s: the signature or the report was altered",
				     pub->key_id, rid);
	return 0;
}

/* Ed25519 key files and artifact signatures (src/core/signature.c): the
 * round trip, the digest left unchanged, and every bad key file. The
 * signature is also checked with libsodium directly over the message built
 * here from the documented format, not through ergon's own verifier. */
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/signature.h"
#include "test_support.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = ts_tmpdir();
	return dir && sodium_init() >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ts_tmpdir_remove(dir);
	free(dir);
	return 0;
}

static json_t *sealed_artifact(double value)
{
	json_t *a = ergon_artifact_new("ergon.test", 1, ERGON_PROV_SYNTHETIC);
	assert_non_null(a);
	json_object_set_new(a, "value_w", json_real(value));
	struct ergon_err e = {0};
	assert_int_equal(ergon_artifact_seal(a, &e), 0);
	return a;
}

static char *keypair(const char *name, char key_id[ERGON_KEY_ID_MAX])
{
	char *p = ts_strf("%s/%s", dir, name);
	struct ergon_err e = {0};
	if (ergon_keygen(p, 0, key_id, &e) != 0)
		fail_msg("keygen: %s", e.msg);
	return p;
}

/* A new pair named name, loaded into sk and pk. */
static void loaded_pair(const char *name, char key_id[ERGON_KEY_ID_MAX],
			struct ergon_secret_key *sk, struct ergon_public_key *pk)
{
	char *skp = keypair(name, key_id);
	char *pkp = ts_strf("%s.pub", skp);
	struct ergon_err e = {0};
	assert_int_equal(ergon_secret_key_load(skp, sk, &e), 0);
	assert_int_equal(ergon_public_key_load(pkp, pk, &e), 0);
	free(pkp);
	free(skp);
}

static void keygen_writes_private_secret_and_public(void **state)
{
	(void)state;
	char id[ERGON_KEY_ID_MAX];
	char *sk = keypair("k1", id);
	char *pk = ts_strf("%s.pub", sk);
	struct stat st;
	assert_int_equal(stat(sk, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(pk, &st), 0);
	assert_int_equal(st.st_mode & 0077, 0044);
	/* The key id is sha256 of the 32-byte public key, computed here from
	 * the base64 in the public key file. */
	size_t len = 0;
	char *text = ts_read_file(pk, &len);
	char *b64 = strrchr(text, ' ') + 1;
	b64[strcspn(b64, "\n")] = '\0';
	unsigned char pub[32], h[32];
	size_t got = 0;
	assert_int_equal(sodium_base642bin(pub, sizeof pub, b64, strlen(b64), NULL, &got, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	assert_int_equal(got, 32);
	crypto_hash_sha256(h, pub, 32);
	char want[ERGON_KEY_ID_MAX] = "ed25519:";
	sodium_bin2hex(want + 8, sizeof want - 8, h, 16);
	assert_string_equal(id, want);
	/* A second keygen on the same path is refused without force. */
	struct ergon_err e = {0};
	assert_int_equal(ergon_keygen(sk, 0, NULL, &e), ERGON_EEXIST);
	free(text);
	free(pk);
	free(sk);
}

static void sign_keeps_digest_and_verifies_independently(void **state)
{
	(void)state;
	char id[ERGON_KEY_ID_MAX];
	struct ergon_secret_key sk;
	struct ergon_public_key pk;
	struct ergon_err e = {0};
	loaded_pair("k2", id, &sk, &pk);
	json_t *a = sealed_artifact(1.25);
	char before[80];
	snprintf(before, sizeof before, "%s", json_string_value(json_object_get(a, "report_id")));
	assert_int_equal(ergon_artifact_sign(a, &sk, &e), 0);
	/* report_id unchanged, and still the JCS digest of the body without
	 * report_id and signature (computed with the bare JCS digest). */
	assert_string_equal(json_string_value(json_object_get(a, "report_id")), before);
	json_t *copy = json_copy(a);
	json_object_del(copy, "signature");
	char id2[72];
	assert_int_equal(ergon_report_digest(copy, id2, &e), 0);
	assert_string_equal(id2, before);
	json_decref(copy);
	assert_int_equal(ergon_artifact_check_digest(a, &e), 0);
	/* libsodium directly, over the documented message. */
	const json_t *s = json_object_get(a, "signature");
	assert_string_equal(json_string_value(json_object_get(s, "key_id")), id);
	char msg[256];
	int n =
	    snprintf(msg, sizeof msg, "ergon-signature-v1\nreport_id=%s\nkey_id=%s\n", before, id);
	unsigned char sig[64];
	size_t got = 0;
	const char *v = json_string_value(json_object_get(s, "value"));
	assert_int_equal(sodium_base642bin(sig, sizeof sig, v, strlen(v), NULL, &got, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	assert_int_equal(got, 64);
	assert_int_equal(crypto_sign_verify_detached(sig, (const unsigned char *)msg,
						     (unsigned long long)n, pk.pk),
			 0);
	assert_int_equal(ergon_artifact_check_signature(a, &pk, &e), 0);
	/* One bit of the signature flipped: refused. */
	sig[10] ^= 1;
	char b64[100];
	sodium_bin2base64(b64, sizeof b64, sig, 64, sodium_base64_VARIANT_ORIGINAL);
	json_object_set_new(json_object_get(a, "signature"), "value", json_string(b64));
	ergon_err_clear(&e);
	assert_int_equal(ergon_artifact_check_signature(a, &pk, &e), ERGON_EVERIFY);
	assert_non_null(strstr(e.msg, "does not verify"));
	ergon_secret_key_wipe(&sk);
	json_decref(a);
}

static void tampered_artifact_is_never_signed(void **state)
{
	(void)state;
	char id[ERGON_KEY_ID_MAX];
	char *skp = keypair("k3", id);
	struct ergon_secret_key sk;
	struct ergon_err e = {0};
	assert_int_equal(ergon_secret_key_load(skp, &sk, &e), 0);
	json_t *a = sealed_artifact(2.0);
	json_object_set_new(a, "value_w", json_real(1.0));
	assert_int_equal(ergon_artifact_sign(a, &sk, &e), ERGON_EVERIFY);
	assert_null(json_object_get(a, "signature"));
	ergon_secret_key_wipe(&sk);
	json_decref(a);
	free(skp);
}

static void another_signer_is_named(void **state)
{
	(void)state;
	char id_a[ERGON_KEY_ID_MAX], id_b[ERGON_KEY_ID_MAX];
	char *ka = keypair("ka", id_a);
	char *kb = keypair("kb", id_b);
	char *kbp = ts_strf("%s.pub", kb);
	struct ergon_secret_key sk;
	struct ergon_public_key pk;
	struct ergon_err e = {0};
	assert_int_equal(ergon_secret_key_load(ka, &sk, &e), 0);
	assert_int_equal(ergon_public_key_load(kbp, &pk, &e), 0);
	json_t *a = sealed_artifact(3.0);
	assert_int_equal(ergon_artifact_sign(a, &sk, &e), 0);
	assert_int_equal(ergon_artifact_check_signature(a, &pk, &e), ERGON_EVERIFY);
	assert_non_null(strstr(e.msg, id_a));
	assert_non_null(strstr(e.msg, id_b));
	/* Relabelling the signature with B's key id does not help. */
	json_object_set_new(json_object_get(a, "signature"), "key_id", json_string(id_b));
	ergon_err_clear(&e);
	assert_int_equal(ergon_artifact_check_signature(a, &pk, &e), ERGON_EVERIFY);
	assert_non_null(strstr(e.msg, "does not verify"));
	ergon_secret_key_wipe(&sk);
	json_decref(a);
	free(kbp);
	free(kb);
	free(ka);
}

/* Write text to dir/name with mode, return the path. */
static char *key_file(const char *name, const char *text, mode_t mode)
{
	char *p = ts_strf("%s/%s", dir, name);
	assert_int_equal(ts_write_file(p, text, strlen(text)), 0);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static void bad_key_files_are_refused(void **state)
{
	(void)state;
	char id[ERGON_KEY_ID_MAX];
	char *skp = keypair("good", id);
	char *pkp = ts_strf("%s.pub", skp);
	size_t slen = 0, plen = 0;
	char *stext = ts_read_file(skp, &slen);
	char *ptext = ts_read_file(pkp, &plen);
	struct ergon_secret_key sk;
	struct ergon_public_key pk;
	struct ergon_err e = {0};

	/* The public key where the secret one belongs, and the reverse. */
	assert_int_equal(ergon_secret_key_load(pkp, &sk, &e), ERGON_EUSAGE);
	assert_non_null(strstr(e.msg, "this is a public key"));
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(skp, &pk, &e), ERGON_EUSAGE);
	assert_non_null(strstr(e.msg, "this is a secret key"));

	/* A secret key others can read. */
	char *p = key_file("readable", stext, 0644);
	ergon_err_clear(&e);
	assert_int_equal(ergon_secret_key_load(p, &sk, &e), ERGON_EACCES);
	assert_non_null(strstr(e.msg, "chmod 600"));
	free(p);

	/* Corrupt base64: one character replaced by '!'. */
	char *bad = strdup(stext);
	bad[strlen(bad) - 5] = '!';
	p = key_file("corrupt", bad, 0600);
	ergon_err_clear(&e);
	assert_int_equal(ergon_secret_key_load(p, &sk, &e), ERGON_EPARSE);
	assert_non_null(strstr(e.msg, "field 4"));
	free(p);
	free(bad);

	/* Truncated: the last 20 characters of the key cut off. */
	bad = strdup(ptext);
	bad[strlen(bad) - 20] = '\0';
	p = key_file("short.pub", bad, 0644);
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(p, &pk, &e), ERGON_EPARSE);
	free(p);
	free(bad);

	/* A valid key whose key id was edited. */
	bad = strdup(ptext);
	char *hex = strstr(bad, "ed25519:") + 8;
	hex[0] = hex[0] == 'a' ? 'b' : 'a';
	p = key_file("edited.pub", bad, 0644);
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(p, &pk, &e), ERGON_EPARSE);
	assert_non_null(strstr(e.msg, "does not match the key"));
	free(p);
	free(bad);

	/* Secret key whose public half was swapped for another key's: the
	 * stored half no longer follows from the seed. */
	char id2[ERGON_KEY_ID_MAX];
	char *other = keypair("other", id2);
	struct ergon_secret_key a, b;
	ergon_err_clear(&e);
	assert_int_equal(ergon_secret_key_load(skp, &a, &e), 0);
	assert_int_equal(ergon_secret_key_load(other, &b, &e), 0);
	memcpy(a.sk + 32, b.pk, 32);
	char b64[100];
	sodium_bin2base64(b64, sizeof b64, a.sk, 64, sodium_base64_VARIANT_ORIGINAL);
	char *line = ts_strf("ergon-secret-key ed25519 %s %s\n", id, b64);
	p = key_file("mixed", line, 0600);
	assert_int_equal(ergon_secret_key_load(p, &sk, &e), ERGON_EPARSE);
	assert_non_null(strstr(e.msg, "does not belong"));
	ergon_secret_key_wipe(&a);
	ergon_secret_key_wipe(&b);
	free(p);
	free(line);
	free(other);

	/* Not a key file at all, an unknown algorithm, an empty file. */
	p = key_file("junk", "hello world\n", 0600);
	ergon_err_clear(&e);
	assert_int_equal(ergon_secret_key_load(p, &sk, &e), ERGON_EPARSE);
	free(p);
	p = key_file("rsa.pub", "ergon-public-key rsa ed25519:00 AAAA\n", 0644);
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(p, &pk, &e), ERGON_EPARSE);
	assert_non_null(strstr(e.msg, "not supported"));
	free(p);
	p = key_file("empty.pub", "", 0644);
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(p, &pk, &e), ERGON_EPARSE);
	free(p);
	/* Missing file. */
	p = ts_strf("%s/nope.pub", dir);
	ergon_err_clear(&e);
	assert_int_equal(ergon_public_key_load(p, &pk, &e), ERGON_ENOENT);
	free(p);

	free(stext);
	free(ptext);
	free(pkp);
	free(skp);
}

static void malformed_signature_members_are_refused(void **state)
{
	(void)state;
	char id[ERGON_KEY_ID_MAX];
	struct ergon_secret_key sk;
	struct ergon_public_key pk;
	struct ergon_err e = {0};
	loaded_pair("k5", id, &sk, &pk);
	json_t *a = sealed_artifact(4.0);
	assert_int_equal(ergon_artifact_check_signature(a, &pk, &e), ERGON_EVERIFY);
	assert_non_null(strstr(e.msg, "not signed"));
	assert_int_equal(ergon_artifact_sign(a, &sk, &e), 0);
	const char *bad[] = {"{}", "[]", "{\"algorithm\": \"ed25519\"}",
			     "{\"algorithm\": \"rsa\", \"key_id\": \"x\", \"report_id\": \"y\", "
			     "\"value\": \"z\"}",
			     "{\"algorithm\": 1, \"key_id\": \"x\", \"report_id\": \"y\", "
			     "\"value\": \"z\"}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *c = json_deep_copy(a);
		json_object_set_new(c, "signature", json_loads(bad[i], 0, NULL));
		ergon_err_clear(&e);
		assert_int_equal(ergon_artifact_check_signature(c, &pk, &e), ERGON_EVERIFY);
		json_decref(c);
	}
	ergon_secret_key_wipe(&sk);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(keygen_writes_private_secret_and_public),
	    cmocka_unit_test(sign_keeps_digest_and_verifies_independently),
	    cmocka_unit_test(tampered_artifact_is_never_signed),
	    cmocka_unit_test(another_signer_is_named),
	    cmocka_unit_test(bad_key_files_are_refused),
	    cmocka_unit_test(malformed_signature_members_are_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* Streamed SHA-256 (ergon/sha256.h): the FIPS 180-2 example digests, any
 * split of the input giving the same digest, and a file digested in
 * windows equal to the one-shot digest of its bytes. */
#include "ergon/sha256.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static void digest(const char *data, size_t len, size_t split, char hex[65])
{
	struct ergon_err err = {0};
	struct ergon_sha256 s = {0};
	assert_int_equal(ergon_sha256_init(&s, &err), 0);
	assert_int_equal(ergon_sha256_update(&s, data, split, &err), 0);
	assert_int_equal(ergon_sha256_update(&s, data + split, len - split, &err), 0);
	assert_int_equal(ergon_sha256_final_hex(&s, hex, &err), 0);
	ergon_sha256_cleanup(&s);
}

static void fips_examples(void **state)
{
	(void)state;
	char hex[65];
	/* FIPS 180-2 appendix B.1 and B.2; the empty string from NIST's
	 * SHA examples. */
	digest("abc", 3, 1, hex);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	digest(two, strlen(two), 17, hex);
	assert_string_equal(hex,
			    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	digest("", 0, 0, hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void million_a_file(void **state)
{
	(void)state;
	/* FIPS 180-2 appendix B.3: one million 'a', through a file (read in
	 * 1 MiB chunks: the last one partial). */
	size_t n = 1000000;
	char *a = malloc(n);
	assert_non_null(a);
	memset(a, 'a', n);
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/a.bin", dir);
	assert_int_equal(ts_write_file(path, a, n), 0);
	char hex[65];
	uint64_t bytes = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sha256_file_hex(path, hex, &bytes, &err), 0);
	assert_int_equal(bytes, n);
	assert_string_equal(hex,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* A missing file names itself. */
	char *missing = ts_strf("%s/none.bin", dir);
	assert_int_equal(ergon_sha256_file_hex(missing, hex, &bytes, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "none.bin"));
	free(missing);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fips_examples),
	    cmocka_unit_test(million_a_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* A program outside the ergon tree, built against an installed libergon
 * (pkg-config or find_package). It prints values the install test compares
 * with ones computed independently: the FIPS 180-2 SHA-256 example "abc",
 * the RFC 8785 canonical form of a small object, and an error message from
 * the public registry. */
#include <ergon/error.h>
#include <ergon/jcs.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char hex[65];
	ergon_sha256_hex("abc", 3, hex);
	printf("sha256(abc)=%s\n", hex);
	json_t *v = json_pack("{s:i, s:[b, n]}", "b", 1, "a", 1);
	char *out = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	if (v == NULL || ergon_jcs_canonicalize(v, &out, &len, &err) != 0) {
		fprintf(stderr, "consumer: canonicalize failed: %s\n", err.msg);
		return 1;
	}
	printf("jcs=%.*s\n", (int)len, out);
	printf("ENOENT=%s\n", ergon_strerror_name(ERGON_ENOENT));
	free(out);
	json_decref(v);
	return 0;
}

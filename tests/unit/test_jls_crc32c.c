/* CRC32C of the JLS reader (ergon_jls_crc32c): the RFC 3720 (iSCSI) test
 * vectors and, over every length up to three long blocks and beyond, at
 * every alignment, an independent bit-at-a-time CRC of the same bytes. The
 * hardware path splits long buffers into three interleaved streams and
 * joins them (8192- and 256-byte blocks): the lengths around those edges
 * are all covered. */
#include "ergon/jls.h"
#include "test_support.h"
#include "ts_jls_writer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The bit-at-a-time reference (the definition) is tests/support's
 * ts_crc32c. */
static uint32_t crc_bitwise(const uint8_t *p, size_t len)
{
	return ts_crc32c(p, len);
}

static void rfc3720_vectors(void **state)
{
	(void)state;
	uint8_t b[48];
	memset(b, 0, 32);
	assert_int_equal(ergon_jls_crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xFF, 32);
	assert_int_equal(ergon_jls_crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(ergon_jls_crc32c(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(ergon_jls_crc32c(0, b, 32), 0x113FDB5Cu);
	assert_int_equal(ergon_jls_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(ergon_jls_crc32c(0, b, 0), 0u);
}

static void matches_bitwise_every_length(void **state)
{
	(void)state;
	/* Long enough for two rounds of three 8192-byte blocks plus the
	 * 256-byte rounds and a tail. */
	const size_t max = 2 * 3 * 8192 + 3 * 256 * 3 + 77;
	uint8_t *buf = malloc(max + 8);
	assert_non_null(buf);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < max + 8; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)(x >> 56);
	}
	size_t checked = 0;
	for (size_t len = 0; len <= max; len += (len < 1024 ? 1 : len % 5 == 0 ? 251 : 3)) {
		size_t off = len % 8; /* every alignment in turn */
		assert_int_equal(ergon_jls_crc32c(0, buf + off, len), crc_bitwise(buf + off, len));
		checked++;
	}
	/* The block edges exactly, and one byte either side. */
	const size_t edges[] = {3 * 256, 3 * 8192, 3 * 8192 + 3 * 256, 2 * 3 * 8192, 32788};
	for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
		for (size_t d = 0; d < 3; d++) {
			size_t len = edges[e] + d - 1;
			for (size_t off = 0; off < 8; off++)
				assert_int_equal(ergon_jls_crc32c(0, buf + off, len),
						 crc_bitwise(buf + off, len));
		}
	/* Chained: the CRC of a whole equals the CRC continued over its parts. */
	uint32_t whole = ergon_jls_crc32c(0, buf, max);
	uint32_t part = ergon_jls_crc32c(0, buf, 30000);
	part = ergon_jls_crc32c(part, buf + 30000, max - 30000);
	assert_int_equal(part, whole);
	assert_true(checked > 1000);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rfc3720_vectors),
	    cmocka_unit_test(matches_bitwise_every_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

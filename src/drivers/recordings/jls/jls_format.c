/* JLS wire format: CRC32C and the decoders of headers and payloads. They
 * work on byte buffers only, so tests and the fuzzer drive them directly. */
#include "ergon/jls.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const uint8_t jls_ident[16] = {0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a,
				      0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c};

static uint16_t rd_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

static uint32_t rd_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd_u64(const uint8_t *p)
{
	return (uint64_t)rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32;
}

/* Slicing-by-8 tables for the reflected Castagnoli polynomial 0x82F63B78. */
static uint32_t crc_table[8][256];
static int crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xffu];
	crc_table_ready = 1;
}

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t len)
{
	if (!crc_table_ready)
		crc_table_init();
	while (len >= 8) {
		uint32_t lo = rd_u32(p) ^ c;
		uint32_t hi = rd_u32(p + 4);
		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		    crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		    crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xffu];
	return c;
}

#if defined(__x86_64__) && !defined(ERGON_NO_SIMD)
/* The SSE4.2 crc32 instruction computes exactly CRC32C. One stream of it
 * waits on its own result (3 cycles for 8 bytes); three independent
 * streams over consecutive blocks keep the unit busy, and their CRCs are
 * joined by shifting the earlier ones over the later blocks' length (a
 * linear operator on the 32-bit state: "apply n zero bytes", tabulated
 * once per block length). After M. Adler's crc32c.c (zlib licence),
 * https://stackoverflow.com/a/17646775. */
#define CRC_LONG 8192u
#define CRC_SHORT 256u
static uint32_t crc_long_op[4][256], crc_short_op[4][256];
static pthread_once_t crc_ops_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;
	while (vec) {
		if (vec & 1u)
			sum ^= *mat;
		vec >>= 1;
		mat++;
	}
	return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		square[n] = gf2_times(mat, mat[n]);
}

/* The operator that applies len zero bytes (len a power of two). */
static void zeros_op(uint32_t even[32], size_t len)
{
	uint32_t odd[32];
	odd[0] = 0x82F63B78u; /* one zero bit */
	uint32_t row = 1;
	for (int n = 1; n < 32; n++) {
		odd[n] = row;
		row <<= 1;
	}
	gf2_square(even, odd); /* two zero bits */
	gf2_square(odd, even); /* four */
	do {
		gf2_square(even, odd);
		len >>= 1;
		if (len == 0)
			return;
		gf2_square(odd, even);
		len >>= 1;
	} while (len);
	memcpy(even, odd, sizeof(odd));
}

static void zeros_table(uint32_t tab[4][256], size_t len)
{
	uint32_t op[32];
	zeros_op(op, len);
	for (uint32_t n = 0; n < 256; n++) {
		tab[0][n] = gf2_times(op, n);
		tab[1][n] = gf2_times(op, n << 8);
		tab[2][n] = gf2_times(op, n << 16);
		tab[3][n] = gf2_times(op, n << 24);
	}
}

static void crc_ops_init(void)
{
	zeros_table(crc_long_op, CRC_LONG);
	zeros_table(crc_short_op, CRC_SHORT);
}

static inline uint32_t crc_shift(uint32_t tab[4][256], uint32_t c)
{
	return tab[0][c & 0xffu] ^ tab[1][(c >> 8) & 0xffu] ^ tab[2][(c >> 16) & 0xffu] ^
	       tab[3][c >> 24];
}

/* Three streams of `block` bytes each while at least 3 x block are left. */
__attribute__((target("sse4.2"))) static uint64_t
crc_hw3(uint64_t c0, const uint8_t **pp, size_t *lenp, size_t block, uint32_t tab[4][256])
{
	const uint8_t *p = *pp;
	size_t len = *lenp;
	while (len >= 3 * block) {
		uint64_t c1 = 0, c2 = 0;
		const uint8_t *end = p + block;
		do {
			uint64_t a, b, d;
			memcpy(&a, p, 8);
			memcpy(&b, p + block, 8);
			memcpy(&d, p + 2 * block, 8);
			c0 = __builtin_ia32_crc32di(c0, a);
			c1 = __builtin_ia32_crc32di(c1, b);
			c2 = __builtin_ia32_crc32di(c2, d);
			p += 8;
		} while (p < end);
		c0 = crc_shift(tab, (uint32_t)c0) ^ c1;
		c0 = crc_shift(tab, (uint32_t)c0) ^ c2;
		p += 2 * block;
		len -= 3 * block;
	}
	*pp = p;
	*lenp = len;
	return c0;
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t len)
{
	uint64_t c64 = c;
	if (len >= 3 * CRC_SHORT) {
		pthread_once(&crc_ops_once, crc_ops_init);
		c64 = crc_hw3(c64, &p, &len, CRC_LONG, crc_long_op);
		c64 = crc_hw3(c64, &p, &len, CRC_SHORT, crc_short_op);
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t ergon_jls_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;
#if defined(__x86_64__) && !defined(ERGON_NO_SIMD)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc_hw(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}

uint64_t ergon_jls_payload_span(uint32_t payload_length)
{
	/* An empty payload has no CRC; otherwise payload + u32 CRC padded to 8. */
	if (payload_length == 0)
		return 0;
	return ((uint64_t)payload_length + 4u + 7u) & ~(uint64_t)7u;
}

int ergon_jls_file_header_decode(const uint8_t *b, size_t len, struct ergon_jls_file_header *h,
				 const char *where, struct ergon_err *err)
{
	if (len < ERGON_JLS_HEADER_SIZE)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: %zu bytes is shorter than the 32-byte JLS file header; "
				     "pass a Joulescope .jls recording",
				     where, len);
	if (memcmp(b, jls_ident, sizeof(jls_ident)) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: not a JLS file (the first 16 bytes are not the JLS "
				     "identification); pass a Joulescope .jls recording",
				     where);
	uint32_t crc = rd_u32(b + 28);
	uint32_t got = ergon_jls_crc32c(0, b, 28);
	if (crc != got)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: file header CRC32C is 0x%08x, expected 0x%08x; the file "
				     "is damaged",
				     where, crc, got);
	h->file_length = rd_u64(b + 16);
	h->version = rd_u32(b + 24);
	return 0;
}

int ergon_jls_chunk_header_decode(const uint8_t *b, size_t len, struct ergon_jls_chunk_header *h,
				  const char *where, struct ergon_err *err)
{
	if (len < ERGON_JLS_CHUNK_HEADER_SIZE)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: chunk header cut short (%zu of 32 bytes)", where, len);
	uint32_t crc = rd_u32(b + 28);
	uint32_t got = ergon_jls_crc32c(0, b, 28);
	if (crc != got)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: chunk header CRC32C is 0x%08x, expected 0x%08x", where,
				     crc, got);
	h->item_next = rd_u64(b);
	h->item_prev = rd_u64(b + 8);
	h->tag = b[16];
	h->chunk_meta = rd_u16(b + 18);
	h->payload_length = rd_u32(b + 20);
	h->payload_prev_length = rd_u32(b + 24);
	if (h->payload_length > ERGON_JLS_PAYLOAD_MAX)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: chunk payload length %u exceeds the %u-byte limit", where,
				     h->payload_length, ERGON_JLS_PAYLOAD_MAX);
	return 0;
}

int ergon_jls_payload_check(const uint8_t *b, size_t span, uint32_t payload_length,
			    const char *where, struct ergon_err *err)
{
	if (payload_length == 0)
		return 0;
	if (span != ergon_jls_payload_span(payload_length))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: payload span %zu does not fit length %u", where, span,
				     payload_length);
	/* Padding comes first: the CRC (of the payload bytes only) is the last
	 * four bytes of the span, on the 8-byte boundary. */
	uint32_t crc = rd_u32(b + span - 4);
	uint32_t got = ergon_jls_crc32c(0, b, payload_length);
	if (crc != got)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: payload CRC32C is 0x%08x, expected 0x%08x", where, crc,
				     got);
	return 0;
}

/* Copy one 0x00 0x1f terminated string field; returns bytes consumed or 0. */
static size_t take_str(const uint8_t *p, size_t len, char *dst, size_t dst_len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (p[i] == 0 && p[i + 1] == 0x1f) {
			size_t n = i < dst_len - 1 ? i : dst_len - 1;
			memcpy(dst, p, n);
			dst[n] = 0;
			return i + 2;
		}
	}
	return 0;
}

/* SIGNAL_DEF payload: u16 source_id, u8 signal_type, u8 rsv, u32 data_type,
 * u32 sample_rate, u32 samples_per_data, five u32 decimation factors,
 * reserved bytes up to offset 128, then name and units as NUL+0x1f
 * terminated strings; the signal id is the chunk's chunk_meta (offsets read
 * from the reference writer's output in ../shared/fixtures/jls). */
int ergon_jls_signal_def_decode(const uint8_t *p, size_t len, uint16_t signal_id,
				struct ergon_jls_signal *s, const char *where,
				struct ergon_err *err)
{
	memset(s, 0, sizeof(*s));
	if (len < 128)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: SIGNAL_DEF payload of %zu bytes is shorter than 128",
				     where, len);
	s->signal_id = signal_id;
	s->source_id = rd_u16(p);
	s->signal_type = p[2];
	s->data_type = rd_u32(p + 4);
	s->sample_rate_hz = rd_u32(p + 8);
	s->samples_per_data = rd_u32(p + 12);
	s->sample_decimate_factor = rd_u32(p + 16);
	s->entries_per_summary = rd_u32(p + 20);
	s->summary_decimate_factor = rd_u32(p + 24);
	size_t used = take_str(p + 128, len - 128, s->name, sizeof(s->name));
	if (used == 0)
		return ergon_err_set(err, ERGON_EPARSE, "%s: SIGNAL_DEF %u has no terminated name",
				     where, s->signal_id);
	size_t u2 = take_str(p + 128 + used, len - 128 - used, s->units, sizeof(s->units));
	(void)u2; /* units are informative; a missing one is not fatal */
	if (s->signal_id >= ERGON_JLS_SIGNAL_MAX)
		return ergon_err_set(err, ERGON_EPARSE, "%s: signal id %u out of range 0..255",
				     where, s->signal_id);
	s->defined = 1;
	return 0;
}

int ergon_jls_data_decode(const uint8_t *p, size_t len, struct ergon_jls_data *d, const char *where,
			  struct ergon_err *err)
{
	if (len < 16)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: DATA payload of %zu bytes is shorter than its 16-byte header", where, len);
	d->first_sample_id = (int64_t)rd_u64(p);
	d->entry_count = rd_u32(p + 8);
	d->entry_size_bits = rd_u16(p + 12);
	if (d->entry_size_bits == 0 || d->entry_size_bits > 64)
		return ergon_err_set(err, ERGON_EPARSE, "%s: DATA entry size %u bits is not 1..64",
				     where, d->entry_size_bits);
	uint64_t bits = (uint64_t)d->entry_count * d->entry_size_bits;
	uint64_t need = (bits + 7u) / 8u;
	if (need > len - 16)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: DATA claims %u entries of %u bits (%llu bytes) but holds %zu", where,
		    d->entry_count, d->entry_size_bits, (unsigned long long)need, len - 16);
	d->entries = p + 16;
	d->entries_len = (size_t)need;
	return 0;
}

/* The JLS reader on input it did not produce: corrupt CRCs, chunk links
 * that loop or point outside the file, huge lengths, a signal id with no
 * definition, unknown data types, NaN samples, time going backwards, an
 * empty file, truncation, and a gate high from the first sample. Never a
 * crash; the samples up to the damage and a warning that says where. */
#include "ergon/gated.h"
#include "ergon/issues.h"
#include "ergon/jls.h"
#include "test_support.h"
#include "ts_jls_writer.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPD 100u      /* f32 entries per DATA chunk */
#define SAMPLES 4000u /* 1 kHz, 4 s: 40 f32 chunks per signal, 5 u1 chunks */

static double cur_const(uint64_t k, void *c)
{
	(void)k;
	(void)c;
	return 0.01;
}

static double cur_nan(uint64_t k, void *c)
{
	(void)c;
	return k == 1234 ? NAN : 0.01;
}

static double volt(uint64_t k, void *c)
{
	(void)k;
	(void)c;
	return 2.0;
}

static int gate_window(uint64_t k, void *c)
{
	(void)c;
	return k >= 1000 && k < 2500;
}

static int gate_from_start(uint64_t k, void *c)
{
	(void)c;
	return k < 500 || (k >= 1000 && k < 2500);
}

static struct ts_jls_spec spec(void)
{
	struct ts_jls_spec s = {.rate_hz = 1000,
				.samples = SAMPLES,
				.samples_per_data = SPD,
				.sample_id_offset = 5000,
				.with_power = 1,
				.with_gate = 1,
				.current_a = cur_const,
				.voltage_v = volt,
				.gate = gate_window};
	return s;
}

struct membuf {
	const uint8_t *p;
	size_t len;
};

static int mem_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct membuf *m = ctx;
	if (off > m->len || len > m->len - off)
		return ERGON_EIO;
	memcpy(buf, m->p + off, len);
	return 0;
}

static int feed(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	return ergon_gated_push_raw(ctx, b->current_a, b->voltage_v, b->power_w, b->gate_bits,
				    b->gate_bit0, b->n, err);
}

struct outcome {
	int open_rc, stream_rc;
	uint64_t samples, nan;
	size_t windows;
	int high_at_start;
	char warn_codes[512];
	char warn_text[2048];
	char err[1024];
};

static struct outcome analyse(const uint8_t *p, size_t len)
{
	struct outcome o;
	memset(&o, 0, sizeof(o));
	struct membuf m = {p, len};
	struct ergon_jls_source src = {
	    .read_at = mem_read_at, .ctx = &m, .size = len, .name = "x.jls"};
	struct ergon_jls_reader *r = NULL;
	struct ergon_err err = {0};
	o.open_rc = ergon_jls_reader_open(&src, &r, &err);
	if (o.open_rc) {
		snprintf(o.err, sizeof(o.err), "%s", err.msg);
		return o;
	}
	struct ergon_gated_config cfg = {.stats_rate_hz = 100, .min_window_s = 1.0};
	struct ergon_gated *g = NULL;
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	assert_int_equal(ergon_gated_raw_begin(g, 1000.0, &err), 0);
	o.stream_rc = ergon_jls_reader_stream(r, "gpi[0]", feed, g, &err);
	snprintf(o.err, sizeof(o.err), "%s", err.msg);
	const struct ergon_gated_result *res;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	o.samples = res->samples;
	o.nan = res->nan_samples;
	o.windows = res->window_count;
	o.high_at_start = res->gate_high_at_start;
	const struct ergon_issue_list *wl = ergon_jls_reader_warnings(r);
	assert_int_equal(wl->oom, 0);
	for (size_t i = 0; i < wl->n; i++) {
		strncat(o.warn_codes, wl->items[i].code,
			sizeof(o.warn_codes) - strlen(o.warn_codes) - 2);
		strcat(o.warn_codes, " ");
		strncat(o.warn_text, wl->items[i].message,
			sizeof(o.warn_text) - strlen(o.warn_text) - 2);
		strcat(o.warn_text, "\n");
	}
	ergon_gated_free(g);
	ergon_jls_reader_free(r);
	return o;
}

/* Offset of the n-th (0-based) chunk with this tag and signal id. */
static size_t find_chunk(const uint8_t *p, size_t len, uint8_t tag, unsigned sig, unsigned nth)
{
	size_t off = 32;
	while (off + 32 <= len) {
		uint32_t plen = (uint32_t)p[off + 20] | (uint32_t)p[off + 21] << 8 |
				(uint32_t)p[off + 22] << 16 | (uint32_t)p[off + 23] << 24;
		if (p[off + 16] == tag && p[off + 18] == sig && nth-- == 0)
			return off;
		off += 32 + (plen ? ((plen + 4u + 7u) & ~7u) : 0);
	}
	fail_msg("chunk not found");
	return 0;
}

static void clean_file_reads_fully(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, SAMPLES);
	assert_int_equal(o.windows, 1);
	assert_string_equal(o.warn_codes, "");
	free(p);
}

static void empty_and_foreign_files(void **state)
{
	(void)state;
	struct outcome o = analyse((const uint8_t *)"", 0);
	assert_int_equal(o.open_rc, ERGON_EPARSE);
	assert_non_null(strstr(o.err, "x.jls: 0 bytes is shorter than the 32-byte JLS header"));
	const char *text = "t_s,current_a,voltage_v\n0,1,1\n0.1,1,1\n0.2,1,1\n";
	o = analyse((const uint8_t *)text, strlen(text));
	assert_int_equal(o.open_rc, ERGON_EPARSE);
	assert_non_null(strstr(o.err, "not a JLS file"));
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	p[20] ^= 1; /* file length field, header CRC no longer matches */
	o = analyse(p, len);
	assert_int_equal(o.open_rc, ERGON_EVERIFY);
	assert_non_null(strstr(o.err, "file header CRC32C"));
	free(p);
}

/* A flipped bit in the 11th current DATA payload: current stops at 1000. */
static void corrupt_payload_crc(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	size_t off = find_chunk(p, len, 0x22, 1, 10);
	p[off + 32 + 40] ^= 0x10;
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, 10 * SPD);
	assert_non_null(strstr(o.warn_codes, "power.recording_damaged"));
	assert_non_null(strstr(o.warn_text, "payload CRC32C"));
	assert_non_null(strstr(o.warn_text, "signal 'current' stops at sample 1000"));
	free(p);
}

/* A damaged chunk header: everything after it is ignored. The u1 gate
 * chunks hold 800 samples and follow every eighth f32 chunk, so with
 * voltage chunk 16 damaged all four signals have exactly 1600 samples. */
static void corrupt_header_crc(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	size_t off = find_chunk(p, len, 0x22, 2, 16);
	p[off + 3] ^= 0xff;
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, 16 * SPD);
	assert_non_null(strstr(o.warn_text, "chunk header CRC32C"));
	free(p);
}

/* Links that point outside the file or at the chunk itself: reported,
 * never followed, so every sample is still read. */
static void chunk_links_outside_and_looping(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	size_t a = find_chunk(p, len, 0x22, 1, 3);
	memset(p + a, 0xee, 8); /* item_next far outside */
	ts_jls_reseal_header(p, a);
	size_t b = find_chunk(p, len, 0x22, 2, 3);
	for (unsigned i = 0; i < 8; i++) /* item_next = itself: a loop */
		p[b + i] = (uint8_t)((uint64_t)b >> (8 * i));
	ts_jls_reseal_header(p, b);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, SAMPLES);
	assert_non_null(strstr(o.warn_text, "chunk links point outside the file"));
	free(p);
}

static void huge_payload_length(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	size_t off = find_chunk(p, len, 0x22, 3, 16); /* power chunk 16: 1600 samples */
	p[off + 20] = 0xf0;
	p[off + 21] = 0xff;
	p[off + 22] = 0xff;
	p[off + 23] = 0xff;
	ts_jls_reseal_header(p, off);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, 16 * SPD);
	assert_non_null(strstr(o.warn_text, "exceeds the"));
	/* A length under the limit but past the end of the file: truncated. */
	free(p);
	p = ts_jls_build(&s, &len);
	off = find_chunk(p, len, 0x22, 3, 16);
	p[off + 20] = 0x00;
	p[off + 21] = 0x00;
	p[off + 22] = 0x00;
	p[off + 23] = 0x01; /* 16 MiB */
	ts_jls_reseal_header(p, off);
	o = analyse(p, len);
	assert_int_equal(o.samples, 16 * SPD);
	assert_non_null(strstr(o.warn_codes, "power.recording_truncated"));
	free(p);
}

/* The first current chunk relabelled as signal 9 (never defined). */
static void signal_without_definition(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	size_t off = find_chunk(p, len, 0x22, 1, 0);
	p[off + 18] = 9;
	ts_jls_reseal_header(p, off);
	struct outcome o = analyse(p, len);
	assert_non_null(strstr(o.warn_text, "signal id 9, which has no definition"));
	/* current now starts 100 samples later than voltage: refused, not
	 * silently shifted. */
	assert_int_equal(o.stream_rc, ERGON_EPARSE);
	assert_non_null(strstr(o.err, "not aligned"));
	free(p);
}

static void unknown_gate_data_type(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	s.gate_data_type = 0x0403; /* u4 */
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, ERGON_ENOTSUP);
	assert_non_null(strstr(o.err, "'gpi[0]' has data type 0x0403"));
	free(p);
}

static void nan_samples(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	s.current_a = cur_nan;
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	/* current and the stored power (i x v) are NaN at sample 1234: one
	 * sample, counted once. */
	assert_int_equal(o.nan, 1);
	assert_int_equal(o.windows, 1);
	free(p);
}

static void time_going_backwards(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	s.backwards_at_chunk = 7;
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.stream_rc, 0);
	assert_int_equal(o.samples, 7 * SPD);
	assert_non_null(strstr(o.warn_codes, "power.recording_sample_gap"));
	assert_non_null(strstr(o.warn_text, "time goes backwards"));
	free(p);
}

/* Cut at every length from the last third of the file: no crash, samples
 * only from intact chunks (a multiple of the chunk size), a warning. */
static void truncated_anywhere(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	for (size_t cut = len * 2 / 3; cut < len; cut += 97) {
		struct outcome o = analyse(p, cut);
		assert_int_equal(o.open_rc, 0);
		assert_int_equal(o.stream_rc, 0);
		assert_true(o.samples < SAMPLES);
		assert_true(o.samples % SPD == 0);
		assert_non_null(strstr(o.warn_codes, "power.recording_truncated"));
	}
	/* Unclosed (length 0, no END) but complete: all samples, a warning. */
	s.no_end = 1;
	free(p);
	p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_int_equal(o.samples, SAMPLES);
	assert_non_null(strstr(o.warn_text, "did not close the file"));
	free(p);
}

static void gate_high_from_first_sample(void **state)
{
	(void)state;
	struct ts_jls_spec s = spec();
	s.gate = gate_from_start;
	size_t len;
	uint8_t *p = ts_jls_build(&s, &len);
	struct outcome o = analyse(p, len);
	assert_true(o.high_at_start);
	assert_int_equal(o.windows, 1);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(clean_file_reads_fully),
	    cmocka_unit_test(empty_and_foreign_files),
	    cmocka_unit_test(corrupt_payload_crc),
	    cmocka_unit_test(corrupt_header_crc),
	    cmocka_unit_test(chunk_links_outside_and_looping),
	    cmocka_unit_test(huge_payload_length),
	    cmocka_unit_test(signal_without_definition),
	    cmocka_unit_test(unknown_gate_data_type),
	    cmocka_unit_test(nan_samples),
	    cmocka_unit_test(time_going_backwards),
	    cmocka_unit_test(truncated_anywhere),
	    cmocka_unit_test(gate_high_from_first_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

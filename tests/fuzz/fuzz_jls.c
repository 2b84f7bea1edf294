/* Fuzz the JLS reader on bytes it did not write: decoders, the chunk walk,
 * the streaming merge, and the gated engine and power section behind it.
 * Properties: streamed blocks are contiguous and in order (each starts where
 * the last ended), the engine counted exactly the samples streamed, and the
 * result's invariants hold (fuzz_props.h). The level index of `ergon view
 * --serve` (ergon/jls_levels.h) on the same bytes: every level it offers
 * can be read at its first and last entries (the bytes do not change, so
 * a read fails only on a CRC the index did not check), entry sizes grow
 * with the level, and a read past a level's end is refused. */
#include "ergon/analyze.h"
#include "ergon/jls.h"
#include "ergon/jls_levels.h"
#include "fuzz_props.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

struct feed_ctx {
	struct ergon_gated *g;
	uint64_t next_index; /* where the next block must start */
	uint64_t streamed;   /* samples handed to the engine */
};

static int feed(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	struct feed_ctx *c = ctx;
	FUZZ_REQUIRE(b->first_index == c->next_index);
	FUZZ_REQUIRE(b->n == 0 || (b->current_a != NULL && b->voltage_v != NULL));
	c->next_index = b->first_index + b->n;
	int rc = ergon_gated_push_raw(c->g, b->current_a, b->voltage_v, b->power_w, b->gate_bits,
				      b->gate_bit0, b->n, err);
	if (rc == 0)
		c->streamed += b->n;
	return rc;
}

static void check_levels(struct ergon_jls_reader *r)
{
	static const char *const names[] = {"current", "voltage", "power", "gpi[0]"};
	struct ergon_jls_levels *l = NULL;
	struct ergon_err err = {0};
	if (ergon_jls_levels_open(r, names, 4, &l, &err) != 0)
		return;
	for (size_t k = 0; k < 4; k++) {
		unsigned depth = ergon_jls_levels_depth(l, k);
		FUZZ_REQUIRE(depth <= ERGON_JLS_LEVELS_MAX);
		uint64_t prev = 0;
		for (unsigned v = 0; v < depth; v++) {
			uint64_t es = ergon_jls_levels_entry_samples(l, k, v);
			uint64_t n = ergon_jls_levels_entries(l, k, v);
			FUZZ_REQUIRE(es > prev && n > 0);
			prev = es;
			struct ergon_jls_entry e[8];
			size_t m = n < 8 ? (size_t)n : 8;
			int rc = ergon_jls_levels_read(l, k, v, 0, m, e, &err);
			FUZZ_REQUIRE(rc == 0 || rc == ERGON_EVERIFY || rc == ERGON_EIO);
			rc = ergon_jls_levels_read(l, k, v, n - m, m, e, &err);
			FUZZ_REQUIRE(rc == 0 || rc == ERGON_EVERIFY || rc == ERGON_EIO);
			/* Past the end is refused, never read. */
			FUZZ_REQUIRE(ergon_jls_levels_read(l, k, v, n, 1, e, &err) == ERGON_ERANGE);
		}
		FUZZ_REQUIRE(ergon_jls_levels_entries(l, k, depth) == 0);
	}
	ergon_jls_levels_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ergon_err err = {0};
	/* The buffer decoders on their own. */
	struct ergon_jls_chunk_header h;
	struct ergon_jls_signal s;
	struct ergon_jls_data d;
	(void)ergon_jls_chunk_header_decode(data, size, &h, "fuzz", &err);
	(void)ergon_jls_signal_def_decode(data, size, 1, &s, "fuzz", &err);
	(void)ergon_jls_data_decode(data, size, &d, "fuzz", &err);
	if (size >= 8)
		(void)ergon_jls_payload_check(data, size & ~(size_t)7,
					      (uint32_t)(size & ~(size_t)7) - 4, "fuzz", &err);

	struct membuf m = {data, size};
	struct ergon_jls_source src = {
	    .read_at = mem_read_at, .ctx = &m, .size = size, .name = "fuzz"};
	struct ergon_jls_reader *r = NULL;
	ergon_err_clear(&err);
	if (ergon_jls_reader_open(&src, &r, &err) != 0)
		return 0;
	struct ergon_gated_config cfg = {.stats_rate_hz = 1000, .min_window_s = 0.001};
	struct ergon_gated *g = NULL;
	if (ergon_gated_new(&cfg, &g, &err) == 0) {
		uint32_t rate = ergon_jls_reader_sample_rate(r);
		struct feed_ctx fc = {.g = g};
		if (rate > 0 && ergon_gated_raw_begin(g, (double)rate, &err) == 0 &&
		    ergon_jls_reader_stream(r, "gpi[0]", feed, &fc, &err) == 0) {
			const struct ergon_gated_result *res = NULL;
			json_t *sec = NULL;
			int fin = ergon_gated_finish(g, &res, &err);
			if (fin == 0) {
				FUZZ_REQUIRE(res->raw == 1);
				FUZZ_REQUIRE(res->samples == fc.streamed);
				fuzz_check_gated_result(res);
			}
			if (fin == 0 &&
			    ergon_power_section(res, 0.001, NULL, ergon_jls_reader_warnings(r),
						&sec, &err) == 0) {
				char *csv = NULL;
				size_t len = 0;
				if (ergon_power_csv_render(sec, &csv, &len, &err) == 0)
					free(csv);
				json_decref(sec);
			}
		}
		ergon_gated_free(g);
	}
	check_levels(r);
	ergon_jls_reader_free(r);
	return 0;
}

/* Fuzz the HPX parser (PMU stream + power terminal record) with the bytes
 * fed in pseudo-random chunk splits. Oracles: whatever the chunking, the
 * result equals the one from a single feed; early aggregation (each preset
 * aggregated when it ends, inline or in the parser's worker thread) gives
 * the result of aggregating at the end, also when the samples go through
 * a spill (ergon_hpx_parser_spill, here a locked growable buffer); nothing
 * crashes, leaks or grows without bound (small caps keep the limits
 * reachable). */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The spill store: a buffer under a lock (the worker reads and writes). */
struct store {
	pthread_mutex_t mu;
	unsigned char *buf;
	size_t cap;
};

static int st_write(void *ctx, uint64_t off, const void *buf, size_t len, struct ergon_err *err)
{
	struct store *s = ctx;
	pthread_mutex_lock(&s->mu);
	if (off + len > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < off + len)
			cap *= 2;
		unsigned char *b = realloc(s->buf, cap);
		if (!b)
			abort();
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + off, buf, len);
	pthread_mutex_unlock(&s->mu);
	(void)err;
	return 0;
}

static int st_read(void *ctx, uint64_t off, void *buf, size_t len, struct ergon_err *err)
{
	struct store *s = ctx;
	pthread_mutex_lock(&s->mu);
	/* The parser reads only what it wrote. */
	if (off + len > s->cap)
		abort();
	memcpy(buf, s->buf + off, len);
	pthread_mutex_unlock(&s->mu);
	(void)err;
	return 0;
}

/* early: 0 = aggregate at the end, every iteration kept in the result;
 * -1 = at the end without iterations; 1 = early inline; 2 = early in the
 * background (both without iterations); 3, 4 = 1, 2 with a spill. */
static json_t *run(const uint8_t *data, size_t size, uint64_t seed, int agg, int early)
{
	struct store store = {.buf = NULL, .cap = 0};
	pthread_mutex_init(&store.mu, NULL);
	struct ergon_hpx_limits lim = {.line_max_bytes = 512,
				       .max_presets = 8,
				       .max_iterations = 64,
				       .max_layers = 256,
				       .max_columns = 32,
				       .max_cells = 1 << 16,
				       .max_meta_keys = 32};
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	if (ergon_hpx_parser_new(&lim, &p, &err))
		abort();
	if (early > 0 && ergon_hpx_parser_aggregate_early(p, agg, early % 2 == 0, &err))
		abort();
	struct ergon_hpx_spill sp = {.ctx = &store, .write = st_write, .read = st_read};
	if (early > 2 && ergon_hpx_parser_spill(p, &sp, &err))
		abort();
	size_t off = 0;
	int rc = 0;
	while (off < size && rc >= 0) {
		size_t n = size - off;
		if (seed) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t want = (size_t)(seed >> 33) % 97 + 1;
			if (want < n)
				n = want;
		}
		rc = ergon_hpx_parser_feed(p, data + off, n, &err);
		off += n;
	}
	json_t *res = NULL;
	if (rc >= 0 && ergon_hpx_parser_finish(p, &err) >= 0)
		ergon_hpx_parser_to_json(p, agg, early == 0 ? ERGON_HPX_JSON_ITERATIONS : 0, &res,
					 &err);
	struct ergon_hpx_terminal t;
	if (ergon_hpx_parser_terminal(p, &t, &err) == 0) {
		json_t *tj = ergon_hpx_terminal_to_json(&t);
		if (!tj)
			abort();
		if (res)
			json_object_set_new(res, "terminal", tj);
		else
			json_decref(tj);
	}
	ergon_hpx_parser_free(p);
	free(store.buf);
	pthread_mutex_destroy(&store.mu);
	if (!res)
		res = json_string(rc < 0 ? "failed" : "none");
	return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ size;
	for (size_t i = 0; i < size && i < 16; i++)
		seed = seed * 31u + data[i];
	int agg = (int)(seed % 3) + 1;
	json_t *whole = run(data, size, 0, agg, 0);
	json_t *split = run(data, size, seed | 1u, agg, 0);
	if (!whole || !split || !json_equal(whole, split))
		abort();
	json_decref(whole);
	json_decref(split);
	/* Without iterations (what early aggregation can give): at the end
	 * against early, inline or in the worker, in other chunk splits. */
	json_t *late = run(data, size, 0, agg, -1);
	json_t *early = run(data, size, seed * 3u | 1u, agg, (int)(seed >> 40) % 4 + 1);
	if (!late || !early || !json_equal(late, early))
		abort();
	json_decref(late);
	json_decref(early);
	return 0;
}

/* Early aggregation (ergon_hpx_parser_aggregate_early): each preset is
 * aggregated when it ends and its samples are released. The result must be
 * the one the parser makes at the end, for every shared reference stream and
 * aggregation, and for the streams where a preset's end is not a plain next
 * marker: a preset seen again (it replaces the first), a legacy stream
 * without markers, a stream cut before END (the open iteration is dropped),
 * a preset with no iteration, differing layer counts and an overflow flag.
 * The oracle is the same parser without early aggregation, whose values the
 * fixture tests check against heliaPROFILER's; this test checks that the
 * early path changes nothing, inline and in the worker thread. It also checks
 * the misuse answers (ERGON_EUSAGE, never a wrong result).
 *
 * With a spill (ergon_hpx_parser_spill; here a locked in-memory store that
 * poisons what is released) every case must give the same result again,
 * inline and in the worker, including a stream of more than one tile per
 * preset with header and layer-count changes, refused cells, frozen rows,
 * wraps and overflow flags. The store must get exactly the bytes the layout
 * in hpx_parser.h says (computed by hand below), all of them handed back
 * once the presets are aggregated, and a failing write or read must be the
 * result's error with the store's message. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "test_support.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spill store: bytes in memory, under a lock (the worker writes and
 * reads while the parser's thread writes). */
struct mem_spill {
	pthread_mutex_t mu;
	unsigned char *buf;
	size_t cap;
	uint64_t written, released, writes;
	uint64_t end;		/* the highest byte written, + 1 */
	uint64_t fail_write_at; /* a write reaching this byte fails; 0: never */
	int fail_read;		/* every read fails */
};

static int ms_write(void *ctx, uint64_t off, const void *buf, size_t len, struct ergon_err *err)
{
	struct mem_spill *m = ctx;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	if (m->fail_write_at && off + len >= m->fail_write_at) {
		rc = ergon_err_set(err, ERGON_EIO, "test store: no space left at byte %llu",
				   (unsigned long long)off);
	} else {
		if (off + len > m->cap) {
			size_t cap = m->cap ? m->cap : 4096;
			while (cap < off + len)
				cap *= 2;
			unsigned char *b = realloc(m->buf, cap);
			assert_non_null(b);
			memset(b + m->cap, 0xa5, cap - m->cap);
			m->buf = b;
			m->cap = cap;
		}
		memcpy(m->buf + off, buf, len);
		m->written += len;
		if (off + len > m->end)
			m->end = off + len;
		m->writes++;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

static int ms_read(void *ctx, uint64_t off, void *buf, size_t len, struct ergon_err *err)
{
	struct mem_spill *m = ctx;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	if (m->fail_read || off + len > m->cap)
		rc = ergon_err_set(err, ERGON_EIO, "test store: read failed at byte %llu",
				   (unsigned long long)off);
	else
		memcpy(buf, m->buf + off, len);
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* A released range is poisoned: reading it again would change results. */
static void ms_release(void *ctx, uint64_t off, uint64_t len)
{
	struct mem_spill *m = ctx;
	pthread_mutex_lock(&m->mu);
	assert_true(off + len <= m->cap);
	memset(m->buf + off, 0xa5, (size_t)len);
	m->released += len;
	pthread_mutex_unlock(&m->mu);
}

static void ms_init(struct mem_spill *m)
{
	memset(m, 0, sizeof(*m));
	assert_int_equal(pthread_mutex_init(&m->mu, NULL), 0);
}

static void ms_cleanup(struct mem_spill *m)
{
	free(m->buf);
	pthread_mutex_destroy(&m->mu);
}

static void use_spill(struct ergon_hpx_parser *p, struct mem_spill *m)
{
	struct ergon_err err = {0};
	struct ergon_hpx_spill sp = {
	    .ctx = m, .write = ms_write, .read = ms_read, .release = ms_release};
	assert_int_equal(ergon_hpx_parser_spill(p, &sp, &err), 0);
}

/* mode 0: at the end; 1: early inline; 2: early in the worker; 3 and 4: 1
 * and 2 with a spill. Chunks of `chunk` bytes (0: one feed). */
static json_t *parse_mode(const char *data, size_t len, int agg, int mode, size_t chunk)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	struct mem_spill ms;
	ms_init(&ms);
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	if (mode)
		assert_int_equal(ergon_hpx_parser_aggregate_early(p, agg, mode % 2 == 0, &err), 0);
	if (mode >= 3)
		use_spill(p, &ms);
	for (size_t off = 0; off < len;) {
		size_t n = chunk && len - off > chunk ? chunk : len - off;
		assert_true(ergon_hpx_parser_feed(p, data + off, n, &err) >= 0);
		off += n;
	}
	assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
	json_t *res = NULL;
	assert_int_equal(ergon_hpx_parser_to_json(p, agg, 0, &res, &err), 0);
	ergon_hpx_parser_free(p);
	/* Every byte of the store was handed back (at the latest by the free). */
	assert_true(ms.released == ms.end);
	ms_cleanup(&ms);
	return res;
}

static void check_same(const char *name, const char *data, size_t len)
{
	const int aggs[] = {ERGON_HPX_AGG_MEDIAN, ERGON_HPX_AGG_MEAN, ERGON_HPX_AGG_TRIMMED};
	for (size_t a = 0; a < 3; a++) {
		json_t *late = parse_mode(data, len, aggs[a], 0, 0);
		for (int mode = 1; mode <= 4; mode++) {
			json_t *early = parse_mode(data, len, aggs[a], mode, 7);
			if (!json_equal(late, early)) {
				char *l = json_dumps(late, JSON_SORT_KEYS);
				char *e = json_dumps(early, JSON_SORT_KEYS);
				print_error(
				    "%s agg %d mode %d:\nat the end: %.2000s\nearly: %.2000s\n",
				    name, aggs[a], mode, l, e);
				free(l);
				free(e);
				fail();
			}
			json_decref(early);
		}
		json_decref(late);
	}
}

static void test_fixtures(void **state)
{
	(void)state;
	const char *const cases[] = {"basic", "legacy", "multi_preset", "wrap", "power_ok"};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *rel = ts_strf("hpx/%s.hpx.txt", cases[i]);
		char *path = ts_fixture(rel);
		size_t len = 0;
		char *data = ts_read_file(path, &len);
		if (!data)
			print_error("cannot read %s\n", path);
		assert_non_null(data);
		check_same(cases[i], data, len);
		free(data);
		free(path);
		free(rel);
	}
}

#define HDR "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"

static void test_edge_streams(void **state)
{
	(void)state;
	struct {
		const char *name, *text;
	} cases[] = {
	    {"preset seen again",
	     "--- HPX_START ---\nHPX_PRESETS=cpu_0,mem_0\n--- HPX_PRESET cpu_0 ---\n"
	     "--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n1,ADD,30,40,0\n"
	     "--- HPX_PRESET mem_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,5,6,0\n1,ADD,7,8,0\n"
	     "--- HPX_PRESET cpu_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,11,21,0\n1,ADD,31,41,0\n"
	     "--- HPX_ITER 1 ---\n" HDR "0,CONV,13,23,0\n1,ADD,33,43,1\n--- HPX_END ---\n"},
	    {"legacy", "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n"
		       "--- HPX_ITER 1 ---\n" HDR "0,CONV,12,22,0\n--- HPX_ITER 2 ---\n" HDR
		       "0,CONV,14,4294967290,0\n--- HPX_END ---\n"},
	    {"cut before END",
	     "--- HPX_START ---\n--- HPX_PRESET cpu_0 ---\n--- HPX_ITER 0 ---\n" HDR
	     "0,CONV,10,20,0\n--- HPX_PRESET cpu_1 ---\n--- HPX_ITER 0 ---\n" HDR
	     "0,CONV,1,2,0\n--- HPX_ITER 1 ---\n" HDR "0,CONV,3,4"},
	    {"empty preset and layer counts",
	     "--- HPX_START ---\n--- HPX_PRESET a_0 ---\n--- HPX_PRESET b_0 ---\n"
	     "--- HPX_ITER 0 ---\n" HDR "0,CONV,1,2,0\n1,ADD,3,4,0\n--- HPX_ITER 1 ---\n" HDR
	     "0,CONV,5,6,0\n--- HPX_ITER 2 ---\n" HDR "0,CONV,0,0,0\n1,ADD,0,0,0\n"
	     "--- HPX_PRESET b_1 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,9,x,0\n--- HPX_END ---\n"
	     "--- HPX_PRESET c_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,1,1,0\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_same(cases[i].name, cases[i].text, strlen(cases[i].text));
}

/* Two presets of 200 layers and `iters` iterations: their aggregation is
 * four blocks (64, 64, 64 and 8 layers). Counter INST_RETIRED of the last
 * preset wraps in every iteration of layers 10, 84 and 148 (one per block
 * but the last), so each of those falls back to the raw samples; layer 70
 * is frozen in every other iteration; layer 120 overflows once. */
static char *wide_stream(int iters, size_t *len)
{
	size_t cap = (size_t)iters * 200 * 32 + 4096, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_START ---\n");
	for (int pr = 0; pr < 2; pr++) {
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_PRESET w%d ---\n", pr);
		for (int it = 0; it < iters; it++) {
			n += (size_t)snprintf(s + n, cap - n, "--- HPX_ITER %d ---\n" HDR, it);
			for (int l = 0; l < 200; l++) {
				bool fb = pr == 1 && (l == 10 || l == 84 || l == 148);
				long a = 100 + (l * 7 + it * 13) % 50;
				long b = fb ? 2147483648L + it : 5 + it % 3;
				if (l == 70 && it % 2 == 0)
					a = b = 0;
				n += (size_t)snprintf(s + n, cap - n, "%d,OP,%ld,%ld,%d\n", l, a, b,
						      l == 120 && it == 3);
			}
		}
		assert_true(n < cap);
	}
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	assert_true(n < cap);
	*len = n;
	return s;
}

/* The worker and a thread waiting for it (the parser's, when the result
 * is made) may share a preset's blocks. The result must be the end's
 * whoever did which block: the fallback named is layer 10's (the lowest,
 * as one pass in layer order names it), wraps and frozen rows are counted
 * once, the overflow is kept. Who takes which block depends on timing, so
 * the second stream (a longer last seal, which the parser thread joins)
 * is parsed several times. */
static void test_shared_blocks(void **state)
{
	(void)state;
	size_t n = 0;
	char *s = wide_stream(80, &n);
	check_same("shared blocks", s, n);
	free(s);
	s = wide_stream(400, &n);
	for (int run = 0; run < 9; run++) {
		int mode = run == 0 ? 0 : 2 + 2 * (run % 2);
		json_t *r = parse_mode(s, n, ERGON_HPX_AGG_MEDIAN, mode, 0);
		char *t = json_dumps(r, 0);
		assert_non_null(t);
		assert_non_null(strstr(t, "preset w1 layer 10 counter ARM_PMU_INST_RETIRED"));
		assert_null(strstr(t, "layer 84 counter"));
		assert_null(strstr(t, "layer 148 counter"));
		free(t);
		json_decref(r);
	}
	free(s);
}

/* Many presets (more than the parser's first array of presets holds, so the
 * array moves while the worker aggregates) of many iterations. */
static void test_many_presets(void **state)
{
	(void)state;
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_START ---\n");
	for (int pr = 0; pr < 40; pr++) {
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_PRESET g%d_%d ---\n", pr % 3, pr);
		for (int it = 0; it < 9; it++) {
			n += (size_t)snprintf(s + n, cap - n, "--- HPX_ITER %d ---\n" HDR, it);
			for (int l = 0; l < 12; l++)
				n += (size_t)snprintf(s + n, cap - n, "%d,OP%d,%d,%d,0\n", l, l % 4,
						      1000 + (l * 37 + it * 11 + pr) % 97,
						      50 + (l * it + pr) % 13);
		}
	}
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	assert_true(n < cap);
	check_same("40 presets", s, n);
	free(s);
}

static void test_misuse(void **state)
{
	(void)state;
	const char *text = "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n"
			   "--- HPX_END ---\n";
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	/* an unknown method */
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, 9, false, &err), ERGON_EUSAGE);
	ergon_hpx_parser_free(p);
	/* after the first feed (an ergon_err keeps its first message: a fresh one) */
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, text, 5, &err) >= 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, false, &err),
			 ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "before the first feed"));
	ergon_hpx_parser_free(p);
	/* another method, iterations, a second result */
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, true, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, text, strlen(text), &err) >= 0);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_pmu_result *r = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEAN, 0, &r, &err), ERGON_EUSAGE);
	assert_null(r);
	assert_non_null(strstr(err.msg, "median"));
	assert_int_equal(
	    ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, ERGON_HPX_JSON_ITERATIONS, &r, &err),
	    ERGON_EUSAGE);
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r, &err), 0);
	assert_non_null(r);
	assert_int_equal(r->layers.n, 1);
	assert_int_equal(r->layers.layers[0].ncounters, 2);
	/* one iteration: the median of {10} is 10 */
	assert_true(r->layers.layers[0].counters[0].value == 10.0);
	struct ergon_pmu_result *r2 = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r2, &err),
			 ERGON_EUSAGE);
	assert_null(r2);
	assert_non_null(strstr(err.msg, "already taken"));
	/* the result outlives the parser */
	ergon_hpx_parser_free(p);
	assert_true(r->layers.layers[0].counters[1].value == 20.0);
	ergon_pmu_result_free(r);
}

/* A deterministic generator (an LCG) for the odd stream. */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* Presets of 100-250 iterations (several tiles each), a header that
 * changes now and then (order, columns), layer counts that change, refused
 * cells, negative (and -0) and fractional cells, wraps, frozen rows,
 * overflow flags, a preset seen again, and (by seed) no END. Preset 1's
 * cells are plain counters below 2^31 but for the iterations 100 to 109:
 * its first tiles are narrow in the spill (hpx_parser.h), with the other
 * changes, and a later one is not. */
static char *odd_stream(uint32_t seed, size_t *len)
{
	static const char *const cols[] = {"ARM_PMU_CPU_CYCLES", "ARM_PMU_INST_RETIRED",
					   "ARM_PMU_STALL_FRONTEND", "ARM_PMU_X"};
	size_t cap = 8u << 20, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_START ---\n");
	int npresets = 3;
	for (int pr = 0; pr <= npresets; pr++) {
		/* the last one is the first seen again */
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_PRESET p%d ---\n",
				      pr == npresets ? 0 : pr);
		int nl = 1 + (int)(lcg(&seed) % 30), ni = 100 + (int)(lcg(&seed) % 150);
		int hc[4] = {0, 1, 2, 3}, nh = 3;
		for (int it = 0; it < ni; it++) {
			if (lcg(&seed) % 40 == 0) {
				nh = 1 + (int)(lcg(&seed) % 4);
				for (int k = 0; k < nh; k++)
					hc[k] = (int)(lcg(&seed) % 4);
			}
			n += (size_t)snprintf(s + n, cap - n,
					      "--- HPX_ITER %d ---\n\"Layer\",\"Op\"", it);
			for (int k = 0; k < nh; k++)
				n += (size_t)snprintf(s + n, cap - n, ",\"%s\"", cols[hc[k]]);
			n += (size_t)snprintf(s + n, cap - n, ",\"overflow\"\n");
			int rows = lcg(&seed) % 10 ? nl : (int)(lcg(&seed) % (unsigned)(nl + 4));
			for (int r = 0; r < rows; r++) {
				bool zero = lcg(&seed) % 20 == 0;
				n += (size_t)snprintf(s + n, cap - n, "%d,OP%d", r, r % 3);
				for (int k = 0; k < nh; k++) {
					uint32_t x = lcg(&seed) % 100;
					if (pr == 1 && (it < 100 || it >= 110))
						x = 5 + x % 95;
					if (zero)
						n += (size_t)snprintf(s + n, cap - n, ",0");
					else if (x == 0)
						n += (size_t)snprintf(s + n, cap - n, ",bad");
					else if (x == 1)
						n += (size_t)snprintf(s + n, cap - n, ",%u",
								      2147483648u + x);
					else if (x == 2)
						n += (size_t)snprintf(s + n, cap - n, ",-%u", x);
					else if (x == 3)
						n += (size_t)snprintf(s + n, cap - n, ",%u.5", x);
					else if (x == 4)
						n += (size_t)snprintf(s + n, cap - n, ",-0");
					else
						n += (size_t)snprintf(s + n, cap - n, ",%u",
								      lcg(&seed) % 1000u);
				}
				n += (size_t)snprintf(s + n, cap - n, ",%d\n",
						      lcg(&seed) % 100 == 0);
			}
		}
	}
	if (seed % 3)
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	assert_true(n < cap);
	*len = n;
	return s;
}

static void test_spill_odd_streams(void **state)
{
	(void)state;
	for (uint32_t seed = 1; seed <= 6; seed++) {
		size_t len = 0;
		char *s = odd_stream(seed, &len);
		char name[32];
		snprintf(name, sizeof(name), "odd stream %u", seed);
		check_same(name, s, len);
		free(s);
	}
}

/* The store's layout (hpx_parser.h): 2 presets x 100 iterations x 5 layers
 * x 2 counters are tiles of 64 and 36 iterations per preset, each row 3
 * slots (2 counters and the overflow flag). Every counter here is an
 * integer below 2^31, so a tile is narrow (4 bytes a value) unless it has
 * preset 1's iteration 70, whose layer 0 reads 5.5 instructions: that tile
 * (36 iterations) is doubles (8 bytes). So 5 x 3 x 64 x 4 = 3,840 bytes,
 * then 5 x 3 x 36 x 4 = 2,160, for preset 0; 3,840, then 5 x 3 x 36 x 8 =
 * 4,320, for preset 1: 14,160 bytes in 4 writes. Sealed inline, preset 0 is
 * aggregated before preset 1's first tile is written, so that tile reuses
 * its range at byte 0 (best fit) while the doubles fit in neither freed
 * range and go to the end: the store is 6,000 + 4,320 = 10,320 bytes. In
 * the worker, reuse depends on timing (10,320 to 14,160 bytes). Preset 1's
 * iteration 20 lacks layer 4: UINT32_MAX in each of its 3 slots. */
static void test_spill_layout(void **state)
{
	(void)state;
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_START ---\n");
	for (int pr = 0; pr < 2; pr++) {
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_PRESET q%d ---\n", pr);
		for (int it = 0; it < 100; it++) {
			n += (size_t)snprintf(s + n, cap - n, "--- HPX_ITER %d ---\n" HDR, it);
			for (int l = 0; l < 5; l++) {
				if (pr == 1 && it == 20 && l == 4)
					continue;
				if (pr == 1 && it == 70 && l == 0)
					n += (size_t)snprintf(s + n, cap - n, "0,OP,%d,5.5,0\n",
							      1000 + it);
				else
					n += (size_t)snprintf(s + n, cap - n, "%d,OP,%d,%d,%d\n", l,
							      1000 * pr + 100 * l + it, 7 * it + l,
							      it == 3 && l == 1);
			}
		}
	}
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	for (int bg = 0; bg <= 1; bg++) {
		struct mem_spill ms;
		ms_init(&ms);
		struct ergon_hpx_parser *p = NULL;
		struct ergon_err err = {0};
		assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
		assert_int_equal(
		    ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, bg, &err), 0);
		/* No release: the bytes stay for the checks below. */
		struct ergon_hpx_spill sp = {.ctx = &ms, .write = ms_write, .read = ms_read};
		assert_int_equal(ergon_hpx_parser_spill(p, &sp, &err), 0);
		assert_int_equal(ergon_hpx_parser_feed(p, s, n, &err), ERGON_HPX_DONE);
		assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
		struct ergon_pmu_result *r = NULL;
		assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r, &err), 0);
		assert_true(ms.written == 14160);
		assert_true(ms.writes == 4);
		assert_true(ms.end >= 10320 && ms.end <= 14160);
		if (!bg) {
			assert_true(ms.end == 10320);
			uint32_t u;
			/* Preset 1's first tile at byte 0: row 2, slot 1
			 * (ARM_PMU_INST_RETIRED) of iteration 5 is 7 x 5 + 2. */
			memcpy(&u, ms.buf + ((2 * 3 + 1) * 64 + 5) * 4, sizeof u);
			assert_true(u == 37);
			/* The overflow slot of row 1, iteration 3 is 1. */
			memcpy(&u, ms.buf + ((1 * 3 + 2) * 64 + 3) * 4, sizeof u);
			assert_true(u == 1);
			/* Row 4, slot 0 of iteration 63 is 1000 + 400 + 63. */
			memcpy(&u, ms.buf + ((4 * 3 + 0) * 64 + 63) * 4, sizeof u);
			assert_true(u == 1463);
			/* Iteration 20 has no row 4. */
			for (int sl = 0; sl < 3; sl++) {
				memcpy(&u, ms.buf + ((4 * 3 + sl) * 64 + 20) * 4, sizeof u);
				assert_true(u == UINT32_MAX);
			}
			/* Its second tile (36 iterations, doubles) at 6,000: row
			 * 4, slot 0 of iteration 99 (the tile's 35th) is 1000 +
			 * 400 + 99; row 0, slot 1 of iteration 70 (its 6th) 5.5. */
			double v;
			memcpy(&v, ms.buf + 6000 + ((4 * 3 + 0) * 36 + 35) * 8, sizeof v);
			assert_true(v == 1499.0);
			memcpy(&v, ms.buf + 6000 + ((0 * 3 + 1) * 36 + 6) * 8, sizeof v);
			assert_true(v == 5.5);
		}
		/* Medians by hand: layer 4 of preset 0 reads 400 + it, it = 0..99:
		 * (449 + 450) / 2; the result holds the merged layers (preset 0's
		 * counters first). */
		assert_true(r->presets[0].layers.layers[4].counters[0].value == 449.5);
		/* 7 x it + 1 over it = 0..99: (7 x 49 + 1 + 7 x 50 + 1) / 2 */
		assert_true(r->presets[1].layers.layers[1].counters[1].value == 347.5);
		/* 7 x it over it = 0..99 but 5.5 for 490 (it = 70): 5.5 is the
		 * second smallest, so the middle ranks 49 and 50 are it = 48 and
		 * 49: (336 + 343) / 2. */
		assert_true(r->presets[1].layers.layers[0].counters[1].value == 339.5);
		/* Layer 4 of preset 1 without iteration 20: 99 values of 1400 +
		 * it, the middle one it = 50. */
		assert_true(r->presets[1].layers.layers[4].counters[0].value == 1450.0);
		assert_true(r->presets[0].layers.layers[1].overflow);
		assert_false(r->presets[0].layers.layers[2].overflow);
		ergon_pmu_result_free(r);
		ergon_hpx_parser_free(p);
		ms_cleanup(&ms);
	}
	free(s);
}

/* A store that fails: the result is the store's error, never a result
 * made from missing samples. */
static void test_spill_errors(void **state)
{
	(void)state;
	size_t len = 0;
	char *s = odd_stream(2, &len);
	for (int which = 0; which < 2; which++) {
		for (int bg = 0; bg <= 1; bg++) {
			struct mem_spill ms;
			ms_init(&ms);
			if (which == 0)
				ms.fail_write_at = 20000;
			else
				ms.fail_read = 1;
			struct ergon_hpx_parser *p = NULL;
			struct ergon_err err = {0};
			assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
			assert_int_equal(
			    ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, bg, &err), 0);
			use_spill(p, &ms);
			assert_true(ergon_hpx_parser_feed(p, s, len, &err) >= 0);
			assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
			struct ergon_pmu_result *r = NULL;
			assert_int_equal(
			    ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r, &err),
			    ERGON_EIO);
			assert_null(r);
			assert_non_null(
			    strstr(err.msg, which == 0 ? "no space left at byte" : "read failed"));
			ergon_hpx_parser_free(p);
			ms_cleanup(&ms);
		}
	}
	free(s);
	/* misuse: no early aggregation, after a feed, no read */
	struct mem_spill ms;
	ms_init(&ms);
	struct ergon_hpx_spill sp = {.ctx = &ms, .write = ms_write, .read = ms_read};
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_spill(p, &sp, &err), ERGON_EUSAGE);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEAN, false, &err), 0);
	struct ergon_hpx_spill no_read = {.ctx = &ms, .write = ms_write};
	assert_int_equal(ergon_hpx_parser_spill(p, &no_read, &err), ERGON_EUSAGE);
	assert_true(ergon_hpx_parser_feed(p, "--- HPX_START ---\n", 18, &err) >= 0);
	assert_int_equal(ergon_hpx_parser_spill(p, &sp, &err), ERGON_EUSAGE);
	ergon_hpx_parser_free(p);
	ms_cleanup(&ms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures),	      cmocka_unit_test(test_edge_streams),
	    cmocka_unit_test(test_many_presets),      cmocka_unit_test(test_misuse),
	    cmocka_unit_test(test_spill_odd_streams), cmocka_unit_test(test_spill_layout),
	    cmocka_unit_test(test_spill_errors),      cmocka_unit_test(test_shared_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

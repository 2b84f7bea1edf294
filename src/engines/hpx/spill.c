/* Early aggregation's samples outside memory (ergon_hpx_parser_spill).
 *
 * The parser stores an iteration row by row (all counters of layer 0, then
 * of layer 1, ...), while the exact median of one layer's counter needs
 * that counter of every iteration: a transpose of a matrix that grows with
 * the iterations. Here it is done in two steps through the caller's store:
 * runs of up to HPX_TILE_ITERS ended iterations with one header (tiles)
 * are transposed (layer, slot, iteration) and written as they end, and the
 * aggregation reads, for one block of layers at a time, the block's part of
 * each tile (one contiguous range per tile). So memory holds a few tiles and
 * one block of layers, whatever the number of iterations; the values, and
 * so the result, are the ones the in-memory path reads.
 */
#include "ergon/hpx.h"
#include "hpx_parser.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
#include <emmintrin.h>
#endif

/* A buffer the kernel copies to or from (the spill's reads and writes):
 * page-aligned, since its copy into a buffer 16 bytes off a page (where
 * malloc puts a large block) runs at a third of the speed here. */
static void *io_alloc(size_t n)
{
	size_t a = 4096;
	return aligned_alloc(a, n ? (n + a - 1) / a * a : a);
}

size_t hpx_slot_of(const struct hpx_header *h, const char *name, size_t nlen)
{
	for (size_t i = h->ncols; i-- > 0;) {
		if (h->names[i].len == nlen && memcmp(h->text + h->names[i].off, name, nlen) == 0)
			return h->slot[i];
	}
	return SIZE_MAX;
}

/* len bytes of the store: the smallest released range that holds them
 * (its rest stays free), else new bytes at the end. */
static uint64_t range_take(struct hpx_spill *sp, uint64_t len)
{
	pthread_mutex_lock(&sp->mu);
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < sp->nfree; i++)
		if (sp->free[i].len >= len &&
		    (best == SIZE_MAX || sp->free[i].len < sp->free[best].len))
			best = i;
	uint64_t off;
	if (best == SIZE_MAX) {
		off = sp->end;
		sp->end += len;
	} else {
		off = sp->free[best].off;
		sp->free[best].off += len;
		sp->free[best].len -= len;
		if (sp->free[best].len == 0)
			sp->free[best] = sp->free[--sp->nfree];
	}
	pthread_mutex_unlock(&sp->mu);
	return off;
}

/* A range the parser is done with: kept for reuse, or (the list full)
 * handed back to the store. */
static void range_put(struct hpx_spill *sp, uint64_t off, uint64_t len)
{
	pthread_mutex_lock(&sp->mu);
	bool kept = sp->nfree < HPX_SPILL_FREE_MAX;
	if (kept)
		sp->free[sp->nfree++] = (struct hpx_range){off, len};
	pthread_mutex_unlock(&sp->mu);
	if (!kept && sp->io.release)
		sp->io.release(sp->io.ctx, off, len);
}

/* Iterations [a, b) of ps into one tile (b - a <= HPX_TILE_ITERS, one
 * header); NULL when out of memory (the iterations stay in memory). */
static struct hpx_tile *tile_make(struct ergon_hpx_parser *p, struct hpx_preset *ps, size_t a,
				  size_t b)
{
	struct hpx_tile *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->it0 = a;
	t->nt = b - a;
	t->hdr = ps->iters[a].hdr;
	t->nnum = t->hdr >= 0 ? ps->hdrs[t->hdr].nnum : 0;
	for (size_t i = a; i < b; i++) {
		struct hpx_iter *iv = &ps->iters[i];
		t->vals[i - a] = iv->vals;
		t->ovf[i - a] = iv->ovf;
		t->nrows[i - a] = iv->nrows;
		t->cap[i - a] = iv->cap;
		if (iv->nrows > t->rows)
			t->rows = iv->nrows;
		iv->vals = NULL;
		iv->ovf = NULL;
	}
	t->pool = &p->pool_vals;
	/* As doubles; the writer halves it for a narrow tile and takes its
	 * range of the store then. */
	t->bytes = (uint64_t)t->rows * (t->nnum + 1) * t->nt * sizeof(double);
	return t;
}

void hpx_tiles_take(struct ergon_hpx_parser *p, struct hpx_preset *ps, bool all)
{
	/* The open iteration (the last, while cur_open) is still growing. */
	size_t ended = ps->niters - (ps->cur_open && ps->niters ? 1 : 0);
	while (ps->tiled < ended) {
		size_t a = ps->tiled, b = a + 1;
		while (b < ended && b - a < HPX_TILE_ITERS && ps->iters[b].hdr == ps->iters[a].hdr)
			b++;
		/* A short run is kept for more unless its header ended it or
		 * the preset has ended. */
		if (!all && b - a < HPX_TILE_ITERS && b == ended)
			break;
		struct hpx_tile *t = tile_make(p, ps, a, b);
		if (t == NULL)
			break;
		if (ps->tiles_tail)
			ps->tiles_tail->next = t;
		else
			ps->tiles = t;
		ps->tiles_tail = t;
		ps->tiled = b;
		p->early->tile(p, t);
	}
	/* Layer/Op offsets: the first iteration's name the layers, the last
	 * ended one's are shared by the next; the others are not read again. */
	size_t keep = ended >= 1 ? ended - 1 : 0;
	if (ps->ids_freed < 1)
		ps->ids_freed = 1;
	for (; ps->ids_freed < keep && ps->ids_freed < ps->tiled; ps->ids_freed++) {
		struct hpx_iter *iv = &ps->iters[ps->ids_freed];
		if (!hpx_pool_put(&p->pool_ids, iv->id_off, iv->cap * sizeof(uint32_t), iv->op_off,
				  iv->cap * sizeof(uint32_t))) {
			free(iv->id_off);
			free(iv->op_off);
		}
		iv->id_off = NULL;
		iv->op_off = NULL;
	}
}

/* Group of iterations transposed together: each (row, slot) gets
 * TRANSPOSE_GROUP consecutive values, at most one cache line. */
#define TRANSPOSE_GROUP 8

/* A row an iteration lacks, in a narrow tile. */
#define NARROW_NONE UINT32_MAX

/* True when every one of v[0..n) is an integer in [0, 2^31) and not -0.0:
 * then (int32_t) is exact and (double) of it gives the same bits back. A
 * NaN fails, so a tile with a refused cell stays doubles. */
static bool narrow_values(const double *v, size_t n)
{
	size_t i = 0;
#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
	/* Two at a time: the round trip through int32 (out of range gives
	 * INT32_MIN, which is not the value back) must give the value, and no
	 * sign bit may be set (a negative integer, or -0.0). */
	__m128d same = _mm_castsi128_pd(_mm_set1_epi32(-1)), signs = _mm_setzero_pd();
	for (; i + 2 <= n; i += 2) {
		__m128d x = _mm_loadu_pd(v + i);
		same = _mm_and_pd(same, _mm_cmpeq_pd(_mm_cvtepi32_pd(_mm_cvttpd_epi32(x)), x));
		signs = _mm_or_pd(signs, x);
	}
	if (_mm_movemask_pd(same) != 3 || _mm_movemask_pd(signs) != 0)
		return false;
#endif
	for (; i < n; i++) {
		double x = v[i];
		if (!(x >= 0.0 && x < 2147483648.0) || signbit(x) || (double)(int32_t)x != x)
			return false;
	}
	return true;
}

/* dst[0..n) from a narrow tile's u[0..n): the values, NaN for NARROW_NONE
 * (which reads -1 as an int32_t; every value is below 2^31). */
static void narrow_decode(double *dst, const uint32_t *u, size_t n)
{
	size_t i = 0;
#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
	const __m128d nan = _mm_set1_pd(NAN);
	for (; i + 2 <= n; i += 2) {
		__m128i w = _mm_loadl_epi64((const __m128i *)(const void *)(u + i));
		__m128d d = _mm_cvtepi32_pd(w);
		__m128d none = _mm_cmplt_pd(d, _mm_setzero_pd());
		_mm_storeu_pd(dst + i, _mm_or_pd(_mm_and_pd(none, nan), _mm_andnot_pd(none, d)));
	}
#endif
	for (; i < n; i++)
		dst[i] = u[i] == NARROW_NONE ? NAN : (double)u[i];
}

/* Value v at index x of the transposition buffer: a uint32_t in a narrow
 * tile (exact: narrow_values said so), else the double. */
static inline void store_value(void *restrict buf, size_t x, double v, bool narrow)
{
	if (narrow)
		((uint32_t *)buf)[x] = (uint32_t)(int32_t)v;
	else
		((double *)buf)[x] = v;
}

/* A row the iteration lacks, at index x. */
static inline void store_none(void *restrict buf, size_t x, bool narrow)
{
	if (narrow)
		((uint32_t *)buf)[x] = NARROW_NONE;
	else
		((double *)buf)[x] = NAN;
}

/* Transpose t into buf (the layout in hpx_parser.h, narrow or not);
 * returns whether a row has its overflow flag. Inlined into transpose
 * once per value of narrow, so that each copy has no test of it. */
static inline __attribute__((always_inline)) unsigned
transpose_as(void *restrict buf, const struct hpx_tile *t, const bool narrow)
{
	/* The tile's fields in locals: a store through buf (or to a flag)
	 * would otherwise make the compiler read them again for every value. */
	const size_t nnum = t->nnum, rows = t->rows, ns = nnum + 1, nt = t->nt;
	double *const *vals = t->vals;
	uint8_t *const *ovf = t->ovf;
	const size_t *nrows = t->nrows;
	unsigned any = 0;
	for (size_t g0 = 0; g0 < nt; g0 += TRANSPOSE_GROUP) {
		size_t gn = nt - g0 < TRANSPOSE_GROUP ? nt - g0 : TRANSPOSE_GROUP;
		for (size_t r = 0; r < rows; r++) {
			size_t base = r * ns * nt + g0;
			for (size_t k = 0; k < gn; k++) {
				size_t i = g0 + k;
				if (r >= nrows[i]) {
					for (size_t s = 0; s < ns; s++)
						store_none(buf, base + s * nt + k, narrow);
					continue;
				}
				const double *row = vals[i] + r * nnum;
				/* The parser wrote these rows on another core:
				 * ask for them a few rows ahead (the eight
				 * iterations' streams are too many for the
				 * hardware to follow well). */
				if (r + 8 < nrows[i])
					__builtin_prefetch(row + 8 * nnum);
				for (size_t s = 0; s < nnum; s++)
					store_value(buf, base + s * nt + k, row[s], narrow);
				unsigned o = ovf[i][r] != 0;
				store_value(buf, base + nnum * nt + k, o ? 1.0 : 0.0, narrow);
				any |= o;
			}
		}
	}
	return any;
}

static unsigned transpose(void *restrict buf, const struct hpx_tile *t, bool narrow)
{
	return narrow ? transpose_as(buf, t, true) : transpose_as(buf, t, false);
}

void hpx_tile_write(struct hpx_spill *sp, struct hpx_tbuf *tb, struct hpx_tile *t)
{
	size_t nt = t->nt;
	if (t->bytes > tb->cap) {
		/* One buffer for every tile, not a fresh ~0.8 MiB block (and
		 * its page faults) each time. */
		free(tb->p);
		tb->p = io_alloc((size_t)t->bytes);
		tb->cap = tb->p ? (size_t)t->bytes : 0;
		if (tb->p == NULL) {
			t->rc = ergon_err_set(&t->err, ERGON_ENOMEM,
					      "hpx: out of memory for a spill tile");
			goto release;
		}
	}
	/* Half the bytes through the store (and the kernel's copies, and
	 * the page cache) when every value fits in 32 bits. */
	bool narrow = true;
	for (size_t i = 0; i < nt && narrow; i++)
		narrow = narrow_values(t->vals[i], t->nrows[i] * t->nnum);
	t->any_ovf |= transpose(tb->p, t, narrow) != 0;
	t->narrow = narrow;
	if (narrow)
		t->bytes /= 2;
	t->off = range_take(sp, t->bytes);
	if (t->bytes)
		t->rc = sp->io.write(sp->io.ctx, t->off, tb->p, (size_t)t->bytes, &t->err);
release:
	for (size_t i = 0; i < nt; i++) {
		size_t per = (t->nnum ? t->nnum : 1) * sizeof(double);
		if (!hpx_pool_put(t->pool, t->vals[i], t->cap[i] * per, t->ovf[i], t->cap[i])) {
			free(t->vals[i]);
			free(t->ovf[i]);
		}
		t->vals[i] = NULL;
		t->ovf[i] = NULL;
	}
}

int hpx_tiles_gather(const struct hpx_preset *ps, struct hpx_spill *sp, const char *const *names,
		     const size_t *lens, size_t ncols, size_t l0, size_t nb, size_t per_layer,
		     double *gather, bool *frozen, size_t *nrows_of, size_t *nfrozen_of,
		     struct ergon_pmu_layer *layers, struct ergon_err *err)
{
	size_t ni = ps->niters;
	size_t *map = malloc((ncols + 1) * sizeof(size_t));
	double *stage = NULL;
	size_t stage_cap = 0;
	int rc = 0;
	if (map == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "hpx: out of memory reading the spill");
	for (const struct hpx_tile *t = ps->tiles; t && rc == 0; t = t->next) {
		if (t->rc) {
			*err = t->err;
			rc = t->rc;
			break;
		}
		size_t ns = t->nnum + 1, nt = t->nt;
		size_t esize = t->narrow ? sizeof(uint32_t) : sizeof(double);
		const struct hpx_header *h = t->hdr >= 0 ? &ps->hdrs[t->hdr] : NULL;
		for (size_t c = 0; c < ncols; c++)
			map[c] = h ? hpx_slot_of(h, names[c], lens[c]) : SIZE_MAX;
		/* Rows [l0, l0 + have) of the block are in this tile. */
		size_t have = t->rows > l0 ? t->rows - l0 : 0;
		have = have < nb ? have : nb;
		size_t n = have * ns * nt; /* values */
		if (n > stage_cap) {
			free(stage);
			stage = io_alloc(n * sizeof(double));
			stage_cap = stage ? n : 0;
			if (stage == NULL) {
				rc = ergon_err_set(err, ERGON_ENOMEM,
						   "hpx: out of memory reading the spill");
				break;
			}
		}
		if (n) {
			rc = sp->io.read(sp->io.ctx, t->off + (uint64_t)l0 * ns * nt * esize, stage,
					 n * esize, err);
			if (rc)
				break;
		}
		const uint32_t *stage32 = (const uint32_t *)(const void *)stage;
		for (size_t b = 0; b < nb; b++) {
			size_t li = l0 + b;
			double *g = gather + b * per_layer + t->it0;
			const double *src = stage + b * ns * nt;
			const uint32_t *src32 = stage32 + b * ns * nt;
			for (size_t c = 0; c < ncols; c++) {
				double *gc = g + c * ni;
				if (b >= have || map[c] == SIZE_MAX) {
					for (size_t k = 0; k < nt; k++)
						gc[k] = NAN;
				} else if (t->narrow) {
					narrow_decode(gc, src32 + map[c] * nt, nt);
				} else {
					memcpy(gc, src + map[c] * nt, nt * sizeof(double));
				}
			}
			/* As gather_block: a row the iteration has counts; it is
			 * frozen when every counter it has reads 0. */
			for (size_t k = 0; k < nt; k++) {
				size_t it = t->it0 + k;
				frozen[b * ni + it] = false;
				if (li >= t->nrows[k])
					continue;
				nrows_of[b]++;
				frozen[b * ni + it] = hpx_row_frozen(g + k, ni, ncols);
				nfrozen_of[b] += frozen[b * ni + it];
				if (t->narrow ? src32[t->nnum * nt + k] != 0
					      : src[t->nnum * nt + k] != 0.0)
					layers[li].overflow = true;
			}
		}
	}
	free(stage);
	free(map);
	return rc;
}

void hpx_tiles_free(struct hpx_spill *sp, struct hpx_preset *ps, bool structs)
{
	struct hpx_tile *t = ps->tiles;
	while (t) {
		struct hpx_tile *n = t->next;
		/* Only what was written (a failed write keeps its error). */
		if (sp && t->bytes && t->rc == 0)
			range_put(sp, t->off, t->bytes);
		t->bytes = 0;
		if (structs) {
			for (size_t i = 0; i < t->nt; i++) {
				free(t->vals[i]);
				free(t->ovf[i]);
			}
			free(t);
		}
		t = n;
	}
	if (structs)
		ps->tiles = ps->tiles_tail = NULL;
}

void hpx_spill_cleanup(struct hpx_spill *sp)
{
	for (size_t i = 0; i < sp->nfree; i++)
		if (sp->io.release)
			sp->io.release(sp->io.ctx, sp->free[i].off, sp->free[i].len);
	sp->nfree = 0;
	free(sp->tbuf_worker.p);
	free(sp->tbuf_parser.p);
	sp->tbuf_worker = sp->tbuf_parser = (struct hpx_tbuf){0};
	pthread_mutex_destroy(&sp->mu);
}

/* HPX aggregation: structurally invalid samples out (uint32 wraps, frozen
 * rows), one value per layer and counter (median / mean / trimmed), presets
 * merged by layer position, per-group tables: the typed PMU result
 * (struct ergon_pmu_result, ergon/hpx.h). The JSON is made from it in the
 * pipelines (src/pipelines/hpx/hpx_json.c).
 *
 * Arithmetic follows the reference exactly so that results agree to the last
 * bit: mean is a left-to-right sum divided by n, median averages the two
 * middle values of the sorted samples, trimmed drops one minimum and one
 * maximum when there are at least three samples.
 */
#include "ergon/issue_list.h"
#include "hpx_parser.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample at or above 2^31 is a uint32 subtraction that wrapped on the
 * target (finish < start), not a count. */
#define WRAP_THRESHOLD HPX_U32_WRAP_MIN

int ergon_hpx_aggregation_parse(const char *name)
{
	if (!name)
		return 0;
	if (strcmp(name, "median") == 0)
		return ERGON_HPX_AGG_MEDIAN;
	if (strcmp(name, "mean") == 0)
		return ERGON_HPX_AGG_MEAN;
	if (strcmp(name, "trimmed") == 0)
		return ERGON_HPX_AGG_TRIMMED;
	return 0;
}

const char *ergon_hpx_aggregation_name(int aggregation)
{
	switch (aggregation) {
	case ERGON_HPX_AGG_MEAN:
		return "mean";
	case ERGON_HPX_AGG_TRIMMED:
		return "trimmed";
	default:
		return "median";
	}
}

/* Sorting without allocation (glibc's qsort may malloc): quicksort with
 * insertion sort below 16 elements. */
static void sort_doubles(double *v, size_t n)
{
	if (n <= 16) {
		for (size_t i = 1; i < n; i++) {
			double x = v[i];
			size_t j = i;
			while (j > 0 && v[j - 1] > x) {
				v[j] = v[j - 1];
				j--;
			}
			v[j] = x;
		}
		return;
	}
	/* Quicksort, median-of-three pivot, recursion on the smaller side. */
	while (n > 16) {
		double a = v[0], b = v[n / 2], c = v[n - 1];
		double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = 0, j = n - 1;
		for (;;) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i >= j)
				break;
			double t = v[i];
			v[i] = v[j];
			v[j] = t;
			i++;
			j--;
		}
		size_t left = j + 1;
		if (left < n - left) {
			sort_doubles(v, left);
			v += left;
			n -= left;
		} else {
			sort_doubles(v + left, n - left);
			n = left;
		}
	}
	sort_doubles(v, n);
}

/* The k-th smallest of v[0..n) (0-based), reordering v so that v[0..k)
 * holds the k smallest: quickselect. For the median this is O(n) where a
 * sort is O(n log n); the value is the same. The partitions are
 * branch-free (counter samples are noise around a mean, so a branch on
 * "below the pivot" is a coin toss the CPU mispredicts half the time):
 * first the values below the pivot to the front, then, of the rest, those
 * equal to it (so that runs of equal values end the search). */
static double select_kth(double *v, size_t n, size_t k)
{
	while (n > 16) {
		double a = v[0], b = v[n / 2], c = v[n - 1];
		double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t lt = 0;
		for (size_t i = 0; i < n; i++) {
			double x = v[i];
			v[i] = v[lt];
			v[lt] = x;
			lt += x < piv;
		}
		if (k < lt) {
			n = lt;
			continue;
		}
		size_t eq = lt;
		for (size_t i = lt; i < n; i++) {
			double x = v[i];
			v[i] = v[eq];
			v[eq] = x;
			eq += x == piv;
		}
		if (k < eq)
			return piv;
		v += eq;
		n -= eq;
		k -= eq;
	}
	sort_doubles(v, n);
	return v[k];
}

/* Below this many values the median is selected in place. */
#define BAND_MIN_N 384
/* Sample size and half-width (in sample ranks) of the band around the
 * sample's middle: the median's rank in a sample of 128 has a standard
 * deviation of ~5.7, so a band of +-20 misses it about once in 2000. */
#define BAND_SAMPLE 128
#define BAND_HALF 20

/* The median of v[0..n) (no NaN) through a band (Floyd and Rivest's idea):
 * two values from a sample of v bracket the median, one branch-free pass
 * counts the values below the band and copies those in it to m (n
 * doubles), and the selection runs on the band only (about a third of v).
 * false when the band does not hold the middle value(s), or when it holds
 * a zero (0.0 and -0.0 compare equal, and which of them a selection
 * returns depends on its order; the in-place selection decides those);
 * else *med is the median, the very value (bits) select_kth's reading
 * gives: a value other than +-0 has one representation. */
static bool median_band(const double *v, size_t n, double *m, double *med)
{
	double smp[BAND_SAMPLE];
	size_t step = n / BAND_SAMPLE;
	for (size_t i = 0; i < BAND_SAMPLE; i++)
		smp[i] = v[i * step];
	size_t k = n / 2;
	size_t ks = k * BAND_SAMPLE / n;
	size_t a = ks > BAND_HALF ? ks - BAND_HALF : 0;
	size_t b = ks + BAND_HALF < BAND_SAMPLE ? ks + BAND_HALF : BAND_SAMPLE - 1;
	double lo = select_kth(smp, BAND_SAMPLE, a);
	/* select_kth left smp[a + 1..) at or above lo: hi is among them. */
	double hi = select_kth(smp + a + 1, BAND_SAMPLE - a - 1, b - a - 1);
	if (lo <= 0.0 && hi >= 0.0)
		return false;
	size_t below = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		double x = v[i];
		m[nm] = x;
		nm += (size_t)((x >= lo) & (x <= hi));
		below += (size_t)(x < lo);
	}
	/* The middle value(s): ranks k, and k - 1 when n is even. */
	size_t first = n % 2 ? k : k - 1;
	if (first < below || k >= below + nm)
		return false;
	double upper = select_kth(m, nm, k - below);
	if (n % 2) {
		*med = upper;
		return true;
	}
	/* m[0..k - below) are the band's values below rank k (at least one):
	 * the lower middle is their maximum. */
	double lower = m[0];
	for (size_t i = 1; i < k - below; i++)
		if (m[i] > lower)
			lower = m[i];
	*med = (lower + upper) / 2.0;
	return true;
}

/* scratch: n doubles the median may use (NULL: none). */
static double aggregate(double *v, size_t n, int method, double *scratch)
{
	if (n == 0)
		return 0.0;
	if (method == ERGON_HPX_AGG_MEAN) {
		double s = 0.0;
		for (size_t i = 0; i < n; i++)
			s += v[i];
		return s / (double)n;
	}
	if (method == ERGON_HPX_AGG_TRIMMED) {
		if (n >= 3) {
			sort_doubles(v, n);
			double s = 0.0;
			for (size_t i = 1; i + 1 < n; i++)
				s += v[i];
			return s / (double)(n - 2);
		}
		double s = 0.0;
		for (size_t i = 0; i < n; i++)
			s += v[i];
		return s / (double)n;
	}
	/* median: the middle value, or the mean of the two middle values */
	double med;
	if (scratch && n >= BAND_MIN_N && median_band(v, n, scratch, &med))
		return med;
	double hi = select_kth(v, n, n / 2);
	if (n % 2)
		return hi;
	/* After selection every element left of n/2 is <= hi: the lower middle
	 * is their maximum. */
	double lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2.0;
}

/* For messages: printable ASCII only, at most 100 bytes. */
static const char *plain_n(const char *s, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap && o < 100; i++)
		buf[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[o] = '\0';
	return buf;
}

static const char *plain(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap && o < 100; s++)
		buf[o++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	buf[o] = '\0';
	return buf;
}

/* Unique numeric column names of the final header, first-seen order. */
struct colset {
	const char **names;
	size_t *lens;
	size_t n;
};

static int colset_build(const struct hpx_header *h, struct colset *cs)
{
	memset(cs, 0, sizeof(*cs));
	if (!h || !h->ncols)
		return 0;
	cs->names = calloc(h->ncols, sizeof(*cs->names));
	cs->lens = calloc(h->ncols, sizeof(*cs->lens));
	if (!cs->names || !cs->lens)
		return ERGON_ENOMEM;
	for (size_t i = 0; i < h->ncols; i++) {
		if (h->kind[i] != HPX_COL_NUM)
			continue;
		const char *nm = h->text + h->names[i].off;
		size_t nl = h->names[i].len;
		bool dup = false;
		for (size_t k = 0; k < cs->n; k++)
			if (cs->lens[k] == nl && memcmp(cs->names[k], nm, nl) == 0)
				dup = true;
		if (dup)
			continue;
		cs->names[cs->n] = nm;
		cs->lens[cs->n] = nl;
		cs->n++;
	}
	return 0;
}

static void colset_free(struct colset *cs)
{
	free(cs->names);
	free(cs->lens);
}

struct agg_totals {
	uint64_t wrap, frozen, fallback;
	char fallback_where[320];
};

static const struct hpx_header *final_header(const struct hpx_preset *ps)
{
	return ps->cur_hdr >= 0 ? &ps->hdrs[ps->cur_hdr] : NULL;
}

/* map[it * cs->n + c] = slot of column c in iteration it's header. */
static size_t *build_map(const struct hpx_preset *ps, const struct colset *cs)
{
	size_t *map = malloc((ps->niters * cs->n + 1) * sizeof(size_t));
	if (!map)
		return NULL;
	for (size_t it = 0; it < ps->niters; it++) {
		const struct hpx_iter *iv = &ps->iters[it];
		const struct hpx_header *h = iv->hdr >= 0 ? &ps->hdrs[iv->hdr] : NULL;
		for (size_t c = 0; c < cs->n; c++)
			map[it * cs->n + c] =
			    h ? hpx_slot_of(h, cs->names[c], cs->lens[c]) : SIZE_MAX;
	}
	return map;
}

static double cell(const struct hpx_preset *ps, size_t it, size_t row, size_t slot)
{
	const struct hpx_iter *iv = &ps->iters[it];
	const struct hpx_header *h = &ps->hdrs[iv->hdr];
	return iv->vals[row * h->nnum + slot];
}

/* Iterations gather_block reads together, and the rows it reads ahead. */
#define GATHER_TILE 8
#define GATHER_AHEAD 8

/* Gather layers [l0, l0 + nb) of every iteration (see aggregate_preset):
 * values, frozen rows (every counter the row has reads 0), rows present
 * and frozen per layer, and the layers' overflow flags. Iterations are read
 * in tiles of GATHER_TILE: for each layer of the block, the tile's rows are
 * read (GATHER_TILE sequential streams the prefetcher follows) and each
 * counter's GATHER_TILE values land in one cache line of `gather`. One
 * iteration at a time wrote every counter of every layer of the block to a
 * different line and page, and those stores were the aggregation's largest
 * cost. */
static void gather_block(const struct hpx_preset *ps, const struct colset *cs, const size_t *map,
			 size_t l0, size_t nb, size_t per_layer, double *gather, bool *frozen,
			 size_t *nrows_of, size_t *nfrozen_of, struct ergon_pmu_layer *layers)
{
	size_t ni = ps->niters;
	/* Iterations [0, tiled) are in the spill (hpx_tiles_gather). */
	for (size_t it0 = ps->tiled; it0 < ni; it0 += GATHER_TILE) {
		size_t nt = ni - it0 < GATHER_TILE ? ni - it0 : GATHER_TILE;
		size_t nnum[GATHER_TILE];
		for (size_t t = 0; t < nt; t++) {
			const struct hpx_iter *iv = &ps->iters[it0 + t];
			nnum[t] = iv->hdr >= 0 ? ps->hdrs[iv->hdr].nnum : 0;
		}
		for (size_t b = 0; b < nb; b++) {
			size_t li = l0 + b;
			for (size_t t = 0; t < nt; t++) {
				size_t it = it0 + t;
				const struct hpx_iter *iv = &ps->iters[it];
				const size_t *m = map + it * cs->n;
				double *g = gather + b * per_layer + it;
				frozen[b * ni + it] = false;
				if (li >= iv->nrows) {
					for (size_t c = 0; c < cs->n; c++)
						g[c * ni] = NAN;
					continue;
				}
				nrows_of[b]++;
				const double *row = iv->vals + li * nnum[t];
				/* A tile's streams are short (one block of rows): ask
				 * for this stream's rows a few layers ahead. */
				if (li + GATHER_AHEAD < iv->nrows && b + GATHER_AHEAD < nb)
					__builtin_prefetch(row + GATHER_AHEAD * nnum[t]);
				for (size_t c = 0; c < cs->n; c++)
					g[c * ni] = m[c] == SIZE_MAX ? NAN : row[m[c]];
				frozen[b * ni + it] = hpx_row_frozen(g, ni, cs->n);
				nfrozen_of[b] += frozen[b * ni + it];
				if (iv->ovf[li])
					layers[li].overflow = true;
			}
		}
	}
}

/* --- the result's storage ---------------------------------------------------
 * Everything a result points to lives in blocks freed together. */

struct store_block {
	struct store_block *next;
	size_t used, cap;
	max_align_t data[];
};

struct store {
	struct store_block *head;
};

#define STORE_BLOCK ((size_t)1 << 20)

static void *st_alloc(struct store *st, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (n == 0)
		n = sizeof(max_align_t);
	struct store_block *b = st->head;
	if (b == NULL || b->cap - b->used < n) {
		size_t cap = n > STORE_BLOCK ? n : STORE_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (b == NULL)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = st->head;
		st->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static void *st_calloc(struct store *st, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = st_alloc(st, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static void st_free(struct store *st)
{
	struct store_block *b = st->head;
	while (b) {
		struct store_block *n = b->next;
		free(b);
		b = n;
	}
	st->head = NULL;
}

/* Bytes that may not be UTF-8 as text (invalid sequences become U+FFFD, as
 * the reference's decode(errors='replace') does). */
static int st_text(struct store *st, const char *s, size_t n, struct ergon_pmu_value *v)
{
	char *buf = st_alloc(st, n * 3 + 1);
	if (buf == NULL)
		return ERGON_ENOMEM;
	size_t o = ergon_utf8_repair(s, n, buf, n * 3);
	buf[o] = '\0';
	v->kind = ERGON_PMU_TEXT;
	v->text = buf;
	v->len = o;
	return 0;
}

/* The reference turns Layer/Op cells into int when int() accepts them. */
static int cell_value(struct store *st, const char *s, struct ergon_pmu_value *v)
{
	double d;
	int64_t iv;
	bool fits = false;
	size_t n = strlen(s);
	memset(v, 0, sizeof(*v));
	if (hpx_py_int(s, n, &d, &iv, &fits)) {
		if (fits) {
			v->kind = ERGON_PMU_INT;
			v->i = iv;
		} else {
			v->kind = ERGON_PMU_REAL;
			v->d = d;
		}
		return 0;
	}
	return st_text(st, s, n, v);
}

static void int_value(struct ergon_pmu_value *v, int64_t i)
{
	memset(v, 0, sizeof(*v));
	v->kind = ERGON_PMU_INT;
	v->i = i;
}

static void unknown_op(struct ergon_pmu_value *v)
{
	memset(v, 0, sizeof(*v));
	v->kind = ERGON_PMU_TEXT;
	v->text = "unknown";
	v->len = strlen("unknown");
}

static bool is_cycles(const struct ergon_pmu_counter *c)
{
	size_t n = strlen(HPX_COUNTER_CYCLES);
	return c->name_len == n && memcmp(c->name, HPX_COUNTER_CYCLES, n) == 0;
}

/* cycles: the ARM_PMU_CPU_CYCLES counter, if the layer has one. */
static void layer_cycles(struct ergon_pmu_layer *L)
{
	L->has_cycles = false;
	for (size_t k = 0; k < L->ncounters; k++) {
		if (is_cycles(&L->counters[k])) {
			L->has_cycles = true;
			L->cycles = L->counters[k].value;
			return;
		}
	}
}

/* The counter names of a column set, copied (at most 511 bytes each). */
static const char **colset_names(struct store *st, const struct colset *cs, size_t **lens)
{
	const char **names = st_calloc(st, cs->n + 1, sizeof(*names));
	*lens = st_calloc(st, cs->n + 1, sizeof(size_t));
	if (names == NULL || *lens == NULL)
		return NULL;
	for (size_t c = 0; c < cs->n; c++) {
		size_t kl = cs->lens[c] < 511 ? cs->lens[c] : 511;
		char *k = st_alloc(st, kl + 1);
		if (k == NULL)
			return NULL;
		memcpy(k, cs->names[c], kl);
		k[kl] = '\0';
		names[c] = k;
		(*lens)[c] = kl;
	}
	return names;
}

static void st_splice(struct store *st, struct store *from);

/* --- one preset's aggregation, by blocks of layers ------------------------
 * Layers are gathered in blocks: one pass over the iterations reads the
 * block's consecutive rows of each (contiguous memory the prefetcher
 * follows) instead of one row per pass (a cache miss per iteration and
 * layer). gather[(b * cs.n + c) * ni + it]: counter c of layer
 * block_start + b in iteration it (NaN when absent). A block holds at most
 * 2^19 values (4 MiB; two threads may hold one each) unless one layer
 * alone needs more, and at most
 * AGG_BLOCK_MAX layers, so that a second thread can take a share of them
 * (hpx_seal_help). Blocks are claimed in order; every layer's figures
 * depend on that layer alone, so who computes a block changes nothing. */
#define AGG_BLOCK_MAX 64

struct hpx_agg_shared {
	const struct hpx_preset *ps;
	int method;
	struct hpx_spill *sp;
	struct colset cs;
	size_t *map;
	const char **names;
	size_t *name_lens;
	size_t ni, nl, per_layer, blk, nblocks;
	struct ergon_pmu_layer *layers;
	pthread_mutex_t mu;
	size_t next; /* the next block to claim (under mu) */
	bool failed; /* a part failed: the others stop (under mu) */
	bool helped; /* the helper's part below was used */
	struct agg_part {
		struct store st; /* the helper's own (the owner uses the record's) */
		double *clean, *raw, *gather;
		bool *frozen;
		size_t *nrows_of, *nfrozen_of;
		struct agg_totals tot;
		size_t fallback_li; /* tot.fallback_where's layer, SIZE_MAX: none */
		int rc;		    /* 0, ERGON_ENOMEM (no message) or the spill's error */
		struct ergon_err err;
	} help;
};

static int part_init(const struct hpx_agg_shared *sh, struct agg_part *pt)
{
	memset(pt, 0, sizeof(*pt));
	pt->fallback_li = SIZE_MAX;
	pt->clean = malloc((sh->ni + 1) * sizeof(double));
	pt->raw = malloc((sh->ni + 1) * sizeof(double));
	pt->gather = malloc(sh->blk * sh->per_layer * sizeof(double));
	pt->frozen = calloc(sh->blk * sh->ni + 1, sizeof(bool));
	pt->nrows_of = calloc(sh->blk, sizeof(size_t));
	pt->nfrozen_of = calloc(sh->blk, sizeof(size_t));
	if (!pt->clean || !pt->raw || !pt->gather || !pt->frozen || !pt->nrows_of ||
	    !pt->nfrozen_of)
		return ERGON_ENOMEM;
	return 0;
}

static void part_free(struct agg_part *pt)
{
	free(pt->clean);
	free(pt->raw);
	free(pt->gather);
	free(pt->frozen);
	free(pt->nrows_of);
	free(pt->nfrozen_of);
	pt->clean = pt->raw = pt->gather = NULL;
	pt->frozen = NULL;
	pt->nrows_of = pt->nfrozen_of = NULL;
}

/* Layers [l0, l0 + nb) of sh into sh->layers; allocations from st. */
static int aggregate_block(struct hpx_agg_shared *sh, struct agg_part *pt, struct store *st,
			   size_t l0, size_t nb)
{
	const struct hpx_preset *ps = sh->ps;
	size_t ni = sh->ni;
	const struct colset *cs = &sh->cs;
	struct agg_totals *tot = &pt->tot;
	memset(pt->nrows_of, 0, nb * sizeof(size_t));
	memset(pt->nfrozen_of, 0, nb * sizeof(size_t));
	if (ps->tiles) {
		int rc = hpx_tiles_gather(ps, sh->sp, cs->names, cs->lens, cs->n, l0, nb,
					  sh->per_layer, pt->gather, pt->frozen, pt->nrows_of,
					  pt->nfrozen_of, sh->layers, &pt->err);
		if (rc)
			return rc;
	}
	gather_block(ps, cs, sh->map, l0, nb, sh->per_layer, pt->gather, pt->frozen, pt->nrows_of,
		     pt->nfrozen_of, sh->layers);
	const struct hpx_iter *first = &ps->iters[0];
	for (size_t b = 0; b < nb; b++) {
		size_t li = l0 + b;
		struct ergon_pmu_layer *L = &sh->layers[li];
		if (first->id_off[li] != UINT32_MAX) {
			if (cell_value(st, ps->strs + first->id_off[li], &L->id))
				return ERGON_ENOMEM;
		} else {
			int_value(&L->id, (int64_t)li);
		}
		if (first->op_off[li] != UINT32_MAX) {
			if (cell_value(st, ps->strs + first->op_off[li], &L->op))
				return ERGON_ENOMEM;
		} else {
			unknown_op(&L->op);
		}
		L->counters = st_calloc(st, cs->n + 1, sizeof(*L->counters));
		if (!L->counters)
			return ERGON_ENOMEM;
		/* A frozen row reads 0 on every counter it has; drop it unless
		 * every row of the layer is frozen. */
		bool *fz = pt->frozen + b * ni;
		size_t nfrozen = pt->nfrozen_of[b];
		if (nfrozen >= pt->nrows_of[b]) {
			memset(fz, 0, ni * sizeof(bool));
			nfrozen = 0;
		}
		tot->frozen += nfrozen;
		for (size_t c = 0; c < cs->n; c++) {
			size_t nc = 0, nr = 0;
			const double *g = pt->gather + b * sh->per_layer + c * ni;
			double *clean = pt->clean, *raw = pt->raw;
			for (size_t it = 0; it < ni; it++) {
				double v = g[it];
				if (isnan(v))
					continue;
				raw[nr++] = v;
				if (v >= WRAP_THRESHOLD) {
					tot->wrap++;
					continue;
				}
				if (fz[it])
					continue;
				clean[nc++] = v;
			}
			double *use = clean;
			if (nc == 0) {
				/* Nothing valid: the reference falls back to the raw
				 * samples; ergon keeps the value but flags it. */
				use = raw;
				nc = nr;
				if (nr) {
					tot->fallback++;
					char cbuf[128];
					if (!tot->fallback_where[0]) {
						snprintf(tot->fallback_where,
							 sizeof(tot->fallback_where),
							 "preset %.100s layer %zu counter %s",
							 ps->name, li,
							 plain_n(cs->names[c], cs->lens[c], cbuf,
								 sizeof(cbuf)));
						pt->fallback_li = li;
					}
				}
			}
			if (nc == 0)
				continue;
			struct ergon_pmu_counter *k = &L->counters[L->ncounters++];
			k->name = sh->names[c];
			k->name_len = sh->name_lens[c];
			/* The buffer not chosen is free: its values are not
			 * read again. */
			k->value = aggregate(use, nc, sh->method, use == clean ? raw : clean);
		}
		layer_cycles(L);
	}
	return 0;
}

/* Claim and aggregate blocks until none is left or a part failed. */
static void aggregate_blocks(struct hpx_agg_shared *sh, struct agg_part *pt, struct store *st)
{
	for (;;) {
		pthread_mutex_lock(&sh->mu);
		size_t i = sh->failed ? sh->nblocks : sh->next;
		if (i < sh->nblocks)
			sh->next++;
		pthread_mutex_unlock(&sh->mu);
		if (i >= sh->nblocks)
			return;
		size_t l0 = i * sh->blk;
		size_t nb = sh->nl - l0 < sh->blk ? sh->nl - l0 : sh->blk;
		pt->rc = aggregate_block(sh, pt, st, l0, nb);
		if (pt->rc) {
			pthread_mutex_lock(&sh->mu);
			sh->failed = true;
			pthread_mutex_unlock(&sh->mu);
			return;
		}
	}
}

void hpx_seal_help(struct hpx_agg_shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	bool go = !sh->helped && !sh->failed && sh->next < sh->nblocks;
	sh->helped |= go;
	pthread_mutex_unlock(&sh->mu);
	if (!go)
		return;
	struct agg_part *pt = &sh->help;
	pt->rc = part_init(sh, pt);
	if (pt->rc == 0)
		aggregate_blocks(sh, pt, &pt->st);
	else {
		pthread_mutex_lock(&sh->mu);
		sh->failed = true;
		pthread_mutex_unlock(&sh->mu);
	}
	part_free(pt);
}

/* sp: the spill of a parser that has one (else NULL); err gets a failed
 * read of it (ERGON_ENOMEM is returned without a message). hook (NULL:
 * none) is told when another thread may help (hpx_seal_help) and when that
 * ends. */
static int aggregate_preset(struct store *st, const struct hpx_preset *ps, int method,
			    struct hpx_spill *sp, struct ergon_pmu_table *out,
			    struct agg_totals *tot, struct ergon_err *err,
			    const struct hpx_help_hook *hook)
{
	memset(out, 0, sizeof(*out));
	if (ps->niters == 0)
		return 0;
	int rc = ERGON_ENOMEM;
	struct hpx_agg_shared sh;
	memset(&sh, 0, sizeof(sh));
	struct agg_part own;
	memset(&own, 0, sizeof(own));
	bool mu = false;
	if (colset_build(final_header(ps), &sh.cs))
		goto done;
	sh.ps = ps;
	sh.method = method;
	sh.sp = sp;
	sh.ni = ps->niters;
	sh.names = colset_names(st, &sh.cs, &sh.name_lens);
	sh.map = build_map(ps, &sh.cs);
	sh.per_layer = sh.cs.n * sh.ni + 1;
	sh.blk = ((size_t)1 << 19) / sh.per_layer;
	sh.blk = sh.blk < 1 ? 1 : (sh.blk > AGG_BLOCK_MAX ? AGG_BLOCK_MAX : sh.blk);
	sh.nl = ps->iters[0].nrows;
	sh.nblocks = (sh.nl + sh.blk - 1) / sh.blk;
	out->layers = st_calloc(st, sh.nl ? sh.nl : 1, sizeof(*out->layers));
	sh.layers = out->layers;
	if (!sh.names || !sh.map || !out->layers || part_init(&sh, &own))
		goto done;
	if (pthread_mutex_init(&sh.mu, NULL) != 0)
		goto done;
	mu = true;
	out->n = sh.nl;
	if (hook)
		hook->publish(hook->ctx, &sh);
	aggregate_blocks(&sh, &own, st);
	if (hook)
		hook->retract(hook->ctx, &sh);
	/* Totals as one pass in layer order would count them: the sums, and
	 * the lowest layer's fallback. */
	rc = own.rc;
	if (rc && rc != ERGON_ENOMEM)
		*err = own.err;
	if (sh.helped) {
		st_splice(st, &sh.help.st);
		if (!rc && sh.help.rc) {
			rc = sh.help.rc;
			if (rc != ERGON_ENOMEM)
				*err = sh.help.err;
		}
		if (sh.help.fallback_li < own.fallback_li)
			memcpy(own.tot.fallback_where, sh.help.tot.fallback_where,
			       sizeof(own.tot.fallback_where));
		own.tot.wrap += sh.help.tot.wrap;
		own.tot.frozen += sh.help.tot.frozen;
		own.tot.fallback += sh.help.tot.fallback;
	}
	if (!rc)
		*tot = own.tot;
done:
	if (mu)
		pthread_mutex_destroy(&sh.mu);
	part_free(&own);
	if (sh.cs.names || sh.cs.lens)
		colset_free(&sh.cs);
	free(sh.map);
	return rc;
}

/* What the result needs of a preset beyond its table: read from its
 * iterations while the samples are there. */
#define FACTS_COUNTS 64
struct preset_facts {
	bool overflow; /* any row of any kept iteration */
	bool mismatch; /* layer counts differ between iterations */
	int64_t counts[FACTS_COUNTS];
	size_t ncounts;
	size_t first_nrows;
};

static void facts_of(const struct hpx_preset *ps, struct preset_facts *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t it = 0; it < ps->niters; it++) {
		const struct hpx_iter *iv = &ps->iters[it];
		for (size_t row = 0; iv->ovf && row < iv->nrows && !f->overflow; row++)
			if (iv->ovf[row])
				f->overflow = true;
		if (iv->nrows != ps->iters[0].nrows)
			f->mismatch = true;
		if (f->ncounts < FACTS_COUNTS)
			f->counts[f->ncounts++] = (int64_t)iv->nrows;
	}
	f->first_nrows = ps->niters ? ps->iters[0].nrows : 0;
	for (const struct hpx_tile *t = ps->tiles; t; t = t->next)
		if (t->any_ovf)
			f->overflow = true;
}

/* A preset aggregated when it ended (early aggregation, seal.c). */
struct hpx_sealed {
	int rc; /* 0; ERGON_ENOMEM: the preset kept its samples; else the spill's error */
	struct ergon_err err; /* the spill's error */
	int method;
	bool taken; /* the storage moved into a result */
	struct store st;
	struct ergon_pmu_table table;
	struct agg_totals tot;
	struct preset_facts facts;
};

struct hpx_sealed *hpx_sealed_new(void)
{
	return calloc(1, sizeof(struct hpx_sealed));
}

void hpx_sealed_free(struct hpx_sealed *s)
{
	if (!s)
		return;
	st_free(&s->st);
	free(s);
}

void hpx_seal_compute(struct hpx_preset *ps, int method, struct hpx_spill *sp, struct hpx_sealed *s,
		      const struct hpx_help_hook *hook)
{
	s->method = method;
	s->rc = aggregate_preset(&s->st, ps, method, sp, &s->table, &s->tot, &s->err, hook);
	if (s->rc) {
		st_free(&s->st);
		memset(&s->table, 0, sizeof(s->table));
		memset(&s->tot, 0, sizeof(s->tot));
		return;
	}
	facts_of(ps, &s->facts);
	/* The samples are no longer needed: the parser never reads a sealed
	 * preset's rows again (iteration counts and row counts stay). */
	for (size_t it = 0; it < ps->niters; it++) {
		struct hpx_iter *iv = &ps->iters[it];
		free(iv->vals);
		free(iv->ovf);
		free(iv->id_off);
		free(iv->op_off);
		iv->vals = NULL;
		iv->ovf = NULL;
		iv->id_off = NULL;
		iv->op_off = NULL;
		iv->cap = 0;
	}
	hpx_tiles_free(sp, ps, false);
}

/* Move a sealed preset's storage into the result's (the blocks are freed
 * with it). */
static void st_splice(struct store *st, struct store *from)
{
	struct store_block *b = from->head;
	if (!b)
		return;
	while (b->next)
		b = b->next;
	b->next = st->head;
	st->head = from->head;
	from->head = NULL;
}

static void totals_add(struct agg_totals *t, const struct agg_totals *a)
{
	t->wrap += a->wrap;
	t->frozen += a->frozen;
	t->fallback += a->fallback;
	if (!t->fallback_where[0])
		memcpy(t->fallback_where, a->fallback_where, sizeof(t->fallback_where));
}

static bool has_counter(const struct ergon_pmu_layer *L, const struct ergon_pmu_counter *c)
{
	for (size_t k = 0; k < L->ncounters; k++)
		if (L->counters[k].name_len == c->name_len &&
		    memcmp(L->counters[k].name, c->name, c->name_len) == 0)
			return true;
	return false;
}

/* Merge presets (indices idx[0..n)) by layer position: the first preset's
 * layer count, ids and ops; later presets only add counter names that are
 * not there yet; overflow is OR-ed. */
static int merge(struct store *st, const struct ergon_pmu_table *ag, const size_t *idx, size_t n,
		 struct ergon_pmu_table *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	const struct ergon_pmu_table *base = &ag[idx[0]];
	out->layers = st_calloc(st, base->n + 1, sizeof(*out->layers));
	if (!out->layers)
		return ERGON_ENOMEM;
	out->n = base->n;
	for (size_t li = 0; li < base->n; li++) {
		const struct ergon_pmu_layer *B = &base->layers[li];
		struct ergon_pmu_layer *L = &out->layers[li];
		size_t cap = 0;
		for (size_t k = 0; k < n; k++)
			if (li < ag[idx[k]].n)
				cap += ag[idx[k]].layers[li].ncounters;
		L->id = B->id;
		L->op = B->op;
		L->overflow = B->overflow;
		L->counters = st_calloc(st, cap + 1, sizeof(*L->counters));
		if (!L->counters)
			return ERGON_ENOMEM;
		for (size_t c = 0; c < B->ncounters; c++)
			L->counters[L->ncounters++] = B->counters[c];
		for (size_t k = 0; k < n; k++) {
			const struct ergon_pmu_table *a = &ag[idx[k]];
			if (li >= a->n)
				continue;
			const struct ergon_pmu_layer *A = &a->layers[li];
			for (size_t c = 0; c < A->ncounters; c++)
				if (!has_counter(L, &A->counters[c]))
					L->counters[L->ncounters++] = A->counters[c];
			if (A->overflow)
				L->overflow = true;
		}
		layer_cycles(L);
	}
	return 0;
}

/* `<group>_<n>` with a lower-case group gives the group; any other name is
 * its own group. */
static size_t group_len(const char *name)
{
	size_t i = 0;
	while (name[i] >= 'a' && name[i] <= 'z')
		i++;
	if (i == 0 || name[i] != '_' || !(name[i + 1] >= '0' && name[i + 1] <= '9'))
		return strlen(name);
	size_t j = i + 1;
	while (name[j] >= '0' && name[j] <= '9')
		j++;
	return name[j] == '\0' ? i : strlen(name);
}

static int meta_value(struct store *st, const struct hpx_meta *m, struct ergon_pmu_value *v)
{
	memset(v, 0, sizeof(*v));
	if (!m)
		return 0;
	return cell_value(st, m->value, v);
}

/* Metadata by its wire.h name (upper case on the wire, lower case here). */
static const struct hpx_meta *meta_wire(const struct ergon_hpx_parser *p, const char *wire_key)
{
	char key[64];
	size_t n = strlen(wire_key);
	if (n >= sizeof(key))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		key[i] = (char)(wire_key[i] >= 'A' && wire_key[i] <= 'Z' ? wire_key[i] + 32
									 : wire_key[i]);
	return hpx_meta_get(p, key);
}

/* True when the port declared a capability missing (HPX_<KEY>=missing). */
static bool declared_missing(const struct hpx_meta *m)
{
	return m != NULL && m->vlen == strlen(HPX_VAL_MISSING) &&
	       memcmp(m->value, HPX_VAL_MISSING, m->vlen) == 0;
}

/* A port that declared its cycle counter or PMU missing has no such counts:
 * any column of that kind in its rows (a port printing placeholders) is
 * removed rather than shown as measured zeros. Returns the cells removed. */
static uint64_t strip_layer(struct ergon_pmu_layer *L, bool no_cycles, bool no_events)
{
	uint64_t n = 0;
	const size_t plen = strlen(HPX_COUNTER_PMU_PREFIX);
	size_t w = 0;
	for (size_t k = 0; k < L->ncounters; k++) {
		const struct ergon_pmu_counter *c = &L->counters[k];
		bool cyc = is_cycles(c);
		bool drop =
		    (no_cycles && cyc) || (no_events && !cyc && c->name_len >= plen &&
					   memcmp(c->name, HPX_COUNTER_PMU_PREFIX, plen) == 0);
		if (drop) {
			n++;
			continue;
		}
		L->counters[w++] = *c;
	}
	L->ncounters = w;
	if (no_cycles)
		L->has_cycles = false;
	return n;
}

static uint64_t strip_table(struct ergon_pmu_table *t, bool no_cycles, bool no_events)
{
	uint64_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += strip_layer(&t->layers[i], no_cycles, no_events);
	return n;
}

static int meta_build(struct store *st, const struct ergon_hpx_parser *p,
		      struct ergon_pmu_result *r)
{
	/* Wire names (wire.h); the keys are their lower-case forms. */
	static const char *const keys[] = {
	    HPX_KEY_MODEL_SIZE,
	    HPX_KEY_ARENA_SIZE,
	    HPX_KEY_ALLOCATED_ARENA,
	    "INPUT_SIZE",
	    "OUTPUT_SIZE",
	    "NUM_TENSORS",
	    "NUM_INPUTS",
	    "NUM_OUTPUTS",
	    HPX_KEY_NUM_PRESETS,
	    HPX_KEY_SYSTEM_CLOCK_HZ,
	    HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_COUNT_SUFFIX,
	    HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_TOTAL_US_SUFFIX,
	    HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_AVG_US_SUFFIX,
	    HPX_KEY_CLEAN_INFER_COUNT,
	    HPX_KEY_CLEAN_TOTAL_CYCLES,
	    HPX_KEY_CLEAN_AVG_CYCLES,
	    HPX_KEY_CLEAN_INFER_AVG_US,
	    HPX_KEY_CLEAN_STALLED_ITERS,
	    HPX_KEY_CLEAN_PARTIAL_ITERS,
	    HPX_KEY_CLEAN_REF_CYCLES,
	    HPX_KEY_CLEAN_RATE_PROBE_CYCLES,
	    HPX_KEY_CLEAN_RATE_PROBE_US,
	    HPX_KEY_CLEAN_DRAIN_WAIT_US,
	};
	size_t nk = sizeof(keys) / sizeof(keys[0]);
	r->meta = st_calloc(st, nk, sizeof(*r->meta));
	if (!r->meta)
		return ERGON_ENOMEM;
	r->nmeta = nk;
	for (size_t i = 0; i < nk; i++) {
		char lk[64];
		size_t n = strlen(keys[i]);
		for (size_t c = 0; c <= n && c < sizeof(lk); c++)
			lk[c] = (char)(keys[i][c] >= 'A' && keys[i][c] <= 'Z' ? keys[i][c] + 32
									      : keys[i][c]);
		lk[sizeof(lk) - 1] = '\0';
		char *k = st_alloc(st, strlen(lk) + 1);
		if (!k)
			return ERGON_ENOMEM;
		memcpy(k, lk, strlen(lk) + 1);
		r->meta[i].key = k;
		const struct hpx_meta *e = meta_wire(p, keys[i]);
		if (!e && strcmp(keys[i], HPX_KEY_CLEAN_INFER_COUNT) == 0 && p->has_hb_clean_iters)
			int_value(&r->meta[i].value, p->hb_clean_iters);
		else if (meta_value(st, e, &r->meta[i].value))
			return ERGON_ENOMEM;
	}
	/* psram: present only with HPX_PSRAM_CLOCK_HZ, in the reference's
	 * PsramInfo field order; a missing field is 0 (xip_enabled false). */
	if (hpx_meta_get(p, "psram_clock_hz")) {
		static const char *const pk[ERGON_PMU_PSRAM_FIELDS] = {
		    "size_bytes",	"clock_hz",    "capabilities",	"state",
		    "last_init_status", "xip_enabled", "timing_status", "rxdqs_delay"};
		r->has_psram = true;
		for (size_t i = 0; i < ERGON_PMU_PSRAM_FIELDS; i++) {
			char key[64];
			snprintf(key, sizeof(key), "psram_%s", pk[i]);
			const struct hpx_meta *e = hpx_meta_get(p, key);
			struct ergon_pmu_value *v = &r->psram[i].value;
			r->psram[i].key = pk[i];
			if (e) {
				if (meta_value(st, e, v))
					return ERGON_ENOMEM;
			} else {
				int_value(v, 0);
			}
			if (strcmp(pk[i], "xip_enabled") == 0) {
				bool on = v->kind == ERGON_PMU_INT    ? v->i != 0
					  : v->kind == ERGON_PMU_TEXT ? v->len > 0
								      : false;
				memset(v, 0, sizeof(*v));
				v->kind = ERGON_PMU_BOOL;
				v->i = on;
			}
		}
	}
	const struct hpx_meta *pm = hpx_meta_get(p, "presets");
	double d;
	if (pm && !hpx_py_int(pm->value, pm->vlen, &d, NULL, NULL)) {
		size_t cap = 1;
		for (const char *q = pm->value; *q; q++)
			cap += *q == ',';
		r->preset_list = st_calloc(st, cap, sizeof(*r->preset_list));
		if (!r->preset_list)
			return ERGON_ENOMEM;
		const char *s = pm->value;
		for (;;) {
			const char *c = strchr(s, ',');
			size_t n = c ? (size_t)(c - s) : strlen(s);
			if (st_text(st, s, n, &r->preset_list[r->npreset_list++]))
				return ERGON_ENOMEM;
			if (!c)
				break;
			s = c + 1;
		}
	}
	return 0;
}

static int iterations_build(struct store *st, const struct hpx_preset *ps,
			    struct ergon_pmu_preset *out)
{
	struct colset cs;
	if (colset_build(final_header(ps), &cs))
		return ERGON_ENOMEM;
	int rc = ERGON_ENOMEM;
	size_t *name_lens = NULL;
	const char **names = colset_names(st, &cs, &name_lens);
	size_t *map = build_map(ps, &cs);
	out->iterations = st_calloc(st, ps->niters + 1, sizeof(*out->iterations));
	if (!names || !map || !out->iterations)
		goto done;
	out->niterations = ps->niters;
	for (size_t it = 0; it < ps->niters; it++) {
		const struct hpx_iter *iv = &ps->iters[it];
		struct ergon_pmu_table *t = &out->iterations[it];
		t->layers = st_calloc(st, iv->nrows + 1, sizeof(*t->layers));
		if (!t->layers)
			goto done;
		t->n = iv->nrows;
		for (size_t r = 0; r < iv->nrows; r++) {
			struct ergon_pmu_layer *L = &t->layers[r];
			L->counters = st_calloc(st, cs.n + 1, sizeof(*L->counters));
			if (!L->counters)
				goto done;
			for (size_t k = 0; k < cs.n; k++) {
				size_t s = map[it * cs.n + k];
				if (s == SIZE_MAX)
					continue;
				double v = cell(ps, it, r, s);
				if (isnan(v))
					continue;
				struct ergon_pmu_counter *c = &L->counters[L->ncounters++];
				c->name = names[k];
				c->name_len = name_lens[k];
				c->value = v;
			}
			if (iv->id_off[r] != UINT32_MAX) {
				if (cell_value(st, ps->strs + iv->id_off[r], &L->id))
					goto done;
			} else {
				int_value(&L->id, 0);
			}
			if (iv->op_off[r] != UINT32_MAX) {
				if (cell_value(st, ps->strs + iv->op_off[r], &L->op))
					goto done;
			} else {
				unknown_op(&L->op);
			}
			L->overflow = iv->ovf[r];
			layer_cycles(L);
		}
	}
	rc = 0;
done:
	free(map);
	colset_free(&cs);
	return rc;
}

/* The first noted line numbers of a count. */
static size_t noted(const struct hpx_noted *n, int64_t out[HPX_MAX_NOTED])
{
	size_t k = 0;
	for (uint64_t i = 0; i < n->count && i < HPX_MAX_NOTED; i++)
		out[k++] = (int64_t)n->lines[i];
	return k;
}

void ergon_pmu_result_free(struct ergon_pmu_result *r)
{
	if (r == NULL)
		return;
	ergon_issue_list_cleanup(&r->issues);
	struct store *st = r->priv;
	if (st) {
		st_free(st);
		free(st);
	}
	free(r);
}

/* The issues of what was seen, with line numbers (after the per-preset
 * and capability ones). */
static void stream_issues(const struct ergon_hpx_parser *p, const struct agg_totals *tot,
			  int aggregation, bool overflow_detected, size_t nlayers,
			  struct ergon_issue_list *issues)
{
	int64_t lines[HPX_MAX_NOTED];
	size_t nl;
	if (!p->in_session)
		ergon_issue_list_add(
		    issues, "pmu.missing", NULL, 0,
		    "no '%s' line in %llu lines: not an HPX profile stream, or the "
		    "capture started too late",
		    HPX_TOK_START, (unsigned long long)(p->lines.lineno - 1));
	else if (nlayers == 0)
		ergon_issue_list_add(
		    issues, "pmu.missing", NULL, 0,
		    "the stream has a START but no complete iteration with layer rows");
	/* A parser that stopped at a limit did not see the rest: the caller
	 * reports that (pmu.parser_limit), not a truncated stream. */
	if (p->in_session && !p->ended && !p->failed) {
		struct ergon_issue_field f[] = {
		    ERGON_ISSUE_BOOL("open_iteration_dropped", p->dropped_open_iter),
		    ERGON_ISSUE_INT("bytes", p->bytes),
		    ERGON_ISSUE_BOOL("cut_mid_line", p->cut_mid_line)};
		ergon_issue_list_add(issues, "pmu.incomplete", f, 3,
				     "no '%s' after %llu lines: the stream is truncated at byte "
				     "%llu%s; complete iterations are kept%s",
				     HPX_TOK_END, (unsigned long long)(p->lines.lineno - 1),
				     (unsigned long long)p->bytes,
				     p->cut_mid_line ? " (inside a line)" : "",
				     p->dropped_open_iter ? ", the open one was dropped" : "");
	}
	if (p->bad_rows.count) {
		nl = noted(&p->bad_rows, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_TEXT("kind", "field_count"),
						ERGON_ISSUE_INT("count", p->bad_rows.count),
						ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(
		    issues, "pmu.parse_error", f, 3,
		    "%llu row(s) dropped (first at line %llu: %s); check the link for "
		    "lost bytes",
		    (unsigned long long)p->bad_rows.count, (unsigned long long)p->bad_rows.lines[0],
		    p->bad_rows_detail[0] ? p->bad_rows_detail : "NUL or CR inside a row");
	}
	if (p->bad_cells.count) {
		nl = noted(&p->bad_cells, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_TEXT("kind", "non_numeric"),
						ERGON_ISSUE_INT("count", p->bad_cells.count),
						ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(
		    issues, "pmu.parse_error", f, 3,
		    "%llu counter cell(s) are not numbers (first at line %llu) and "
		    "were left out of aggregation",
		    (unsigned long long)p->bad_cells.count,
		    (unsigned long long)p->bad_cells.lines[0]);
	}
	if (p->neg_cells.count) {
		nl = noted(&p->neg_cells, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("count", p->neg_cells.count),
						ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(
		    issues, "pmu.negative_counter", f, 2,
		    "%llu counter cell(s) are negative (first at line %llu); a u32 PMU counter "
		    "cannot be, so the row was printed with a signed format or the link "
		    "corrupted it; the values were kept as the reference parser keeps them",
		    (unsigned long long)p->neg_cells.count,
		    (unsigned long long)p->neg_cells.lines[0]);
	}
	if (p->lines.dropped) {
		struct ergon_issue_field f[] = {
		    ERGON_ISSUE_INT("count", p->lines.dropped),
		    ERGON_ISSUE_INT("first_line", p->lines.first_dropped_lineno),
		    ERGON_ISSUE_INT("line_max_bytes", p->lim.line_max_bytes)};
		ergon_issue_list_add(
		    issues, "pmu.line_too_long", f, 3,
		    "%llu line(s) longer than %zu bytes dropped (first: line %llu)",
		    (unsigned long long)p->lines.dropped, p->lim.line_max_bytes,
		    (unsigned long long)p->lines.first_dropped_lineno);
	}
	if (tot->wrap) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("count", tot->wrap)};
		ergon_issue_list_add(
		    issues, "pmu.counter_wrap", f, 1,
		    "%llu counter sample(s) >= 2^31 rejected as uint32 wraps before "
		    "%s aggregation",
		    (unsigned long long)tot->wrap, ergon_hpx_aggregation_name(aggregation));
	}
	if (tot->frozen) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("count", tot->frozen)};
		ergon_issue_list_add(issues, "pmu.frozen_rows", f, 1,
				     "%llu all-zero (frozen) sample row(s) rejected before "
				     "aggregation",
				     (unsigned long long)tot->frozen);
	}
	if (tot->fallback) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("count", tot->fallback),
						ERGON_ISSUE_TEXT("first", tot->fallback_where)};
		ergon_issue_list_add(
		    issues, "pmu.wrap_fallback", f, 2,
		    "%llu counter(s) had no valid sample and report the aggregate "
		    "of their rejected raw samples (first: %s); do not trust those "
		    "values",
		    (unsigned long long)tot->fallback, tot->fallback_where);
	}
	if (overflow_detected)
		ergon_issue_list_add(issues, "pmu.counter_overflow", NULL, 0,
				     "at least one layer reported a PMU counter overflow; its "
				     "counters are lower bounds");
	const struct hpx_meta *ver = hpx_meta_get(p, "version");
	double ver_d = 0;
	char vbuf[128];
	if (ver && !(hpx_py_int(ver->value, ver->vlen, &ver_d, NULL, NULL) &&
		     ver_d == (double)HPX_WIRE_VERSION)) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("line", ver->lineno)};
		ergon_issue_list_add(issues, "pmu.version_mismatch", f, 1,
				     "HPX_VERSION=%s at line %llu, this host speaks version %d; "
				     "results may be misparsed",
				     plain(ver->value, vbuf, sizeof(vbuf)),
				     (unsigned long long)ver->lineno, HPX_WIRE_VERSION);
	}
	if (p->dup_preset.count) {
		nl = noted(&p->dup_preset, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_TEXT("preset", p->dup_preset_name),
						ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(issues, "pmu.duplicate_preset", f, 2,
				     "preset %s appeared again at line %llu; its earlier data was "
				     "replaced",
				     p->dup_preset_name,
				     (unsigned long long)p->dup_preset.lines[0]);
	}
	if (p->iter_order.count) {
		nl = noted(&p->iter_order, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(
		    issues, "pmu.iter_order", f, 1,
		    "%llu HPX_ITER marker(s) repeat or go back (first at line %llu); "
		    "every iteration is still aggregated",
		    (unsigned long long)p->iter_order.count,
		    (unsigned long long)p->iter_order.lines[0]);
	}
	if (p->restarts.count) {
		nl = noted(&p->restarts, lines);
		struct ergon_issue_field f[] = {ERGON_ISSUE_INTS("lines", lines, nl)};
		ergon_issue_list_add(issues, "pmu.restart", f, 1,
				     "a second '%s' at line %llu: the target restarted; data from "
				     "before the restart is kept",
				     HPX_TOK_START, (unsigned long long)p->restarts.lines[0]);
	}
	/* The clean-window trace (HPX_CLEAN_TRACE=1): one HPX_CLEAN_ITER=<n>
	 * line per clean inference, n counting from 1; the host counts them
	 * against CLEAN_INFER_COUNT (the firmware's own count). */
	const struct hpx_meta *tr = meta_wire(p, HPX_KEY_CLEAN_TRACE);
	const struct hpx_meta *cc = meta_wire(p, HPX_KEY_CLEAN_INFER_COUNT);
	int traced = tr != NULL && tr->vlen == 1 && tr->value[0] == '1';
	if (traced || p->clean_iter_lines > 0) {
		char *endp = NULL;
		unsigned long long want = cc ? strtoull(cc->value, &endp, 10) : 0;
		int have_count = cc != NULL && endp != cc->value && *endp == '\0';
		if (!have_count || want != p->clean_iter_lines || p->clean_iter_out_of_seq > 0) {
			struct ergon_issue_field f[] = {
			    ERGON_ISSUE_INT("trace_lines", (int64_t)p->clean_iter_lines),
			    ERGON_ISSUE_INT("clean_infer_count",
					    have_count ? (int64_t)want : (int64_t)-1),
			    ERGON_ISSUE_INT("out_of_sequence", (int64_t)p->clean_iter_out_of_seq),
			    ERGON_ISSUE_INT("first_out_of_sequence_line",
					    (int64_t)p->clean_iter_first_bad_line)};
			ergon_issue_list_add(
			    issues, "pmu.clean_trace_mismatch", f, 4,
			    "the clean-window trace printed %llu HPX_%s lines (%llu out of "
			    "sequence) where HPX_%s says %s%s: trace lines were lost or the "
			    "count is wrong, so the window's count is not confirmed",
			    (unsigned long long)p->clean_iter_lines, HPX_KEY_CLEAN_ITER,
			    (unsigned long long)p->clean_iter_out_of_seq, HPX_KEY_CLEAN_INFER_COUNT,
			    have_count ? cc->value : "nothing",
			    traced ? "" : " (and HPX_CLEAN_TRACE is not 1)");
		}
	}
	if (p->target_drops.count) {
		nl = noted(&p->target_drops, lines);
		struct ergon_issue_field f[] = {
		    ERGON_ISSUE_INTS("lines", lines, nl),
		    ERGON_ISSUE_INT("dropped_bytes", (int64_t)p->target_dropped_bytes)};
		ergon_issue_list_add(issues, "pmu.target_dropped", f, 2,
				     "the target dropped %llu bytes of its stream (%llu '%s %s' "
				     "report(s), first at line %llu): its RTT buffer was full in "
				     "drop mode, so rows are missing; drain faster, enlarge the up "
				     "buffer or build with ERT_RTT_BLOCK",
				     (unsigned long long)p->target_dropped_bytes,
				     (unsigned long long)p->target_drops.count, HPX_TOK_HEARTBEAT,
				     HPX_HB_RTT_DROPPED,
				     (unsigned long long)p->target_drops.lines[0]);
	}
}

static int capability(struct store *st, const struct hpx_meta *m, struct ergon_pmu_value *v)
{
	memset(v, 0, sizeof(*v));
	return m ? st_text(st, m->value, m->vlen, v) : 0;
}

int ergon_hpx_parser_result(struct ergon_hpx_parser *p, int aggregation, unsigned flags,
			    struct ergon_pmu_result **out, struct ergon_err *err)
{
	*out = NULL;
	if (aggregation != ERGON_HPX_AGG_MEDIAN && aggregation != ERGON_HPX_AGG_MEAN &&
	    aggregation != ERGON_HPX_AGG_TRIMMED)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "hpx: unknown aggregation %d; use median, mean or trimmed",
				     aggregation);
	if (p->early)
		p->early->wait(p);
	if (p->early_method &&
	    (aggregation != p->early_method || (flags & ERGON_HPX_JSON_ITERATIONS))) {
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "hpx: the parser aggregated each preset early (%s) and released "
		    "its samples; ask for that aggregation, without iterations, or "
		    "parse without early aggregation",
		    ergon_hpx_aggregation_name(p->early_method));
	}
	for (size_t i = 0; i < p->npresets; i++) {
		const struct hpx_sealed *s = p->presets[i].sealed;
		if (s && s->taken)
			return ergon_err_set(err, ERGON_EUSAGE,
					     "hpx: the result of this early-aggregating parser was "
					     "already taken; it is made once");
	}
	int rc = ERGON_ENOMEM;
	struct agg_totals tot = {0};
	struct ergon_pmu_result *r = calloc(1, sizeof(*r));
	struct store *st = calloc(1, sizeof(*st));
	struct ergon_pmu_table *ag = calloc(p->npresets + 1, sizeof(*ag));
	size_t *idx = calloc(p->npresets + 1, sizeof(*idx));
	bool *used = calloc(p->npresets + 1, sizeof(bool));
	if (!r || !st || !ag || !idx || !used)
		goto done;
	r->priv = st;
	r->aggregation = aggregation;
	r->presets = st_calloc(st, p->npresets + 1, sizeof(*r->presets));
	r->groups = st_calloc(st, p->npresets + 1, sizeof(*r->groups));
	if (!r->presets || !r->groups)
		goto done;
	struct ergon_issue_list *issues = &r->issues;
	bool overflow_detected = false;
	for (size_t i = 0; i < p->npresets; i++) {
		const struct hpx_preset *ps = &p->presets[i];
		struct ergon_pmu_preset *rp = &r->presets[r->npresets++];
		struct hpx_sealed *sealed = ps->sealed && ps->sealed->rc == 0 ? ps->sealed : NULL;
		struct preset_facts facts;
		if (ps->sealed && ps->sealed->rc && ps->sealed->rc != ERGON_ENOMEM) {
			/* The spill failed: its samples are not all there. */
			*err = ps->sealed->err;
			rc = ps->sealed->rc;
			goto failed;
		}
		if (sealed) {
			st_splice(st, &sealed->st);
			sealed->taken = true;
			ag[i] = sealed->table;
			totals_add(&tot, &sealed->tot);
			facts = sealed->facts;
		} else {
			struct agg_totals ptot = {0};
			struct ergon_err pe = {0};
			rc = aggregate_preset(st, ps, aggregation, p->spilling ? &p->spill : NULL,
					      &ag[i], &ptot, &pe, NULL);
			if (rc && rc != ERGON_ENOMEM) {
				*err = pe;
				goto failed;
			}
			if (rc)
				goto done;
			totals_add(&tot, &ptot);
			facts_of(ps, &facts);
		}
		rp->layers = ag[i];
		struct ergon_pmu_value nv;
		if (st_text(st, ps->name, strlen(ps->name), &nv))
			goto done;
		rp->name = nv.text;
		const struct hpx_header *h = final_header(ps);
		rp->columns = st_calloc(st, (h ? h->ncols : 0) + 1, sizeof(*rp->columns));
		if (!rp->columns)
			goto done;
		for (size_t c = 0; h && c < h->ncols; c++) {
			struct ergon_pmu_value cv;
			if (st_text(st, h->text + h->names[c].off, h->names[c].len, &cv))
				goto done;
			rp->columns[rp->ncolumns++] = cv.text;
		}
		if ((flags & ERGON_HPX_JSON_ITERATIONS) && iterations_build(st, ps, rp))
			goto done;
		if (facts.overflow)
			overflow_detected = true;
		if (facts.mismatch) {
			struct ergon_issue_field f[] = {
			    ERGON_ISSUE_TEXT("preset", ps->name),
			    ERGON_ISSUE_INTS("layer_counts", facts.counts, facts.ncounts)};
			ergon_issue_list_add(
			    issues, "pmu.layer_count_mismatch", f, 2,
			    "preset %s: layer counts differ between iterations; "
			    "the first iteration's %zu layers are aggregated, extra "
			    "rows ignored",
			    ps->name, facts.first_nrows);
		}
	}
	for (size_t i = 0; i < p->npresets; i++)
		idx[i] = i;
	if (merge(st, ag, idx, p->npresets, &r->layers) || meta_build(st, p, r))
		goto done;
	r->overflow_detected = overflow_detected;
	/* Groups in order of first appearance. */
	for (size_t i = 0; i < p->npresets; i++) {
		const char *ni = p->presets[i].name;
		if (used[i] || ni[0] == '_')
			continue;
		size_t gl = group_len(ni);
		size_t n = 0;
		for (size_t k = i; k < p->npresets; k++) {
			const char *nk = p->presets[k].name;
			if (used[k] || nk[0] == '_')
				continue;
			if (group_len(nk) == gl && memcmp(nk, ni, gl) == 0) {
				used[k] = true;
				idx[n++] = k;
			}
		}
		struct ergon_pmu_group *g = &r->groups[r->ngroups++];
		struct ergon_pmu_value gv;
		if (st_text(st, ni, gl, &gv) || merge(st, ag, idx, n, &g->layers))
			goto done;
		g->name = gv.text;
	}
	/* Per-layer differences between presets (merge uses the first's count). */
	for (size_t i = 1; i < p->npresets; i++) {
		if (ag[i].n != ag[0].n && p->presets[i].niters) {
			struct ergon_issue_field f[] = {
			    ERGON_ISSUE_TEXT("base_preset", p->presets[0].name),
			    ERGON_ISSUE_INT("base_layers", ag[0].n),
			    ERGON_ISSUE_TEXT("preset", p->presets[i].name),
			    ERGON_ISSUE_INT("layers", ag[i].n)};
			ergon_issue_list_add(
			    issues, "pmu.layer_count_mismatch", f, 4,
			    "preset %s has %zu layers but %s has %zu; the merge uses "
			    "%s's layers",
			    p->presets[i].name, ag[i].n, p->presets[0].name, ag[0].n,
			    p->presets[0].name);
		}
	}
	/* Capabilities the port declared missing: never shown as zeros. */
	const struct hpx_meta *pmu_m = meta_wire(p, HPX_KEY_PMU);
	const struct hpx_meta *cyc_m = meta_wire(p, HPX_KEY_CYCLE_COUNTER);
	bool no_events = declared_missing(pmu_m), no_cycles = declared_missing(cyc_m);
	if (no_events || no_cycles) {
		/* Cells are counted on the merged table (one per layer and
		 * column); the per-preset, per-iteration and group copies are
		 * cleaned the same way. */
		uint64_t cy = strip_table(&r->layers, no_cycles, false);
		uint64_t ev = strip_table(&r->layers, false, no_events);
		for (size_t i = 0; i < r->npresets; i++) {
			strip_table(&r->presets[i].layers, no_cycles, no_events);
			for (size_t it = 0; it < r->presets[i].niterations; it++)
				strip_table(&r->presets[i].iterations[it], no_cycles, no_events);
		}
		for (size_t i = 0; i < r->ngroups; i++)
			strip_table(&r->groups[i].layers, no_cycles, no_events);
		if (no_cycles) {
			struct ergon_issue_field f[] = {ERGON_ISSUE_INT("line", cyc_m->lineno),
							ERGON_ISSUE_INT("cycle_cells_dropped", cy)};
			ergon_issue_list_add(
			    issues, "pmu.cycle_counter_missing", f, 2,
			    "HPX_%s=%s at line %llu: the port has no CPU cycle counter (QEMU "
			    "implements no DWT CYCCNT); per-layer cycles, total_cycles and "
			    "top_layers are absent, not zero%s",
			    HPX_KEY_CYCLE_COUNTER, HPX_VAL_MISSING,
			    (unsigned long long)cyc_m->lineno,
			    cy ? "; cycle cells the stream printed anyway were dropped" : "");
		}
		/* A port without a PMU that was asked for no event counters lost
		 * nothing (the runtime refuses event presets it cannot count):
		 * the declaration stays in ergon.capabilities. The code is for a
		 * stream that carries counter passes or event cells anyway. */
		bool passes = false;
		for (size_t i = 0; i < p->npresets; i++)
			if (strcmp(p->presets[i].name, HPX_PRESET_LEGACY) != 0)
				passes = true;
		if (no_events && (ev > 0 || passes)) {
			struct ergon_issue_field f[] = {ERGON_ISSUE_INT("line", pmu_m->lineno),
							ERGON_ISSUE_INT("event_cells_dropped", ev)};
			ergon_issue_list_add(
			    issues, "pmu.unit_missing", f, 2,
			    "HPX_%s=%s at line %llu: the port has no PMU, so no per-layer event "
			    "counts exist (absent, not zero)%s",
			    HPX_KEY_PMU, HPX_VAL_MISSING, (unsigned long long)pmu_m->lineno,
			    ev ? "; event cells the stream printed anyway were dropped" : "");
		}
	}
	stream_issues(p, &tot, aggregation, overflow_detected, r->layers.n, issues);
	if (issues->oom || capability(st, pmu_m, &r->cap_pmu) ||
	    capability(st, cyc_m, &r->cap_cycle_counter))
		goto done;
	r->complete = p->ended;
	r->parse_errors = p->parse_errors;
	r->lines = p->lines.lineno - 1;
	r->lines_too_long = p->lines.dropped;
	r->heartbeats = p->heartbeats;
	*out = r;
	r = NULL;
	rc = 0;
done:
	if (r) {
		r->priv = st;
		ergon_pmu_result_free(r);
	} else if (rc) {
		if (st) {
			st_free(st);
			free(st);
		}
	}
	free(ag);
	free(idx);
	free(used);
	if (rc)
		return ergon_err_set(err, rc, "hpx: out of memory building the result");
	return 0;
failed: /* rc and err say what failed */
	r->priv = st;
	ergon_pmu_result_free(r);
	free(ag);
	free(idx);
	free(used);
	return rc;
}

/* HPX aggregation: structurally invalid samples out (uint32 wraps, frozen
 * rows), one value per layer and counter (median / mean / trimmed), presets
 * merged by layer position, per-group tables, and the JSON result.
 *
 * Arithmetic follows the reference exactly so that results agree to the last
 * bit: mean is a left-to-right sum divided by n, median averages the two
 * middle values of the sorted samples, trimmed drops one minimum and one
 * maximum when there are at least three samples.
 */
#include "ergon/issues.h"
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

/* Layer of a preset after aggregation: counters in first-seen column order. */
struct agg_layer {
	json_t *id;	  /* owned */
	json_t *op;	  /* owned */
	json_t *counters; /* object, owned */
	bool overflow;
};

struct agg_preset {
	struct agg_layer *layers;
	size_t nlayers;
};

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

static double aggregate(double *v, size_t n, int method)
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

/* The reference turns Layer/Op cells into int when int() accepts them. */
static json_t *cell_value(const char *s)
{
	double d;
	int64_t iv;
	bool fits = false;
	size_t n = strlen(s);
	if (hpx_py_int(s, n, &d, &iv, &fits)) {
		if (fits)
			return json_integer((json_int_t)iv);
		return json_real(d);
	}
	return hpx_json_text(s, n);
}

static json_t *num_value(double v)
{
	return json_real(v);
}

/* Slot of the column called name (last of that name) in header h, or
 * SIZE_MAX. */
static size_t slot_of(const struct hpx_header *h, const char *name, size_t nlen)
{
	for (size_t i = h->ncols; i-- > 0;) {
		if (h->names[i].len == nlen && memcmp(h->text + h->names[i].off, name, nlen) == 0)
			return h->slot[i];
	}
	return SIZE_MAX;
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

static void agg_preset_free(struct agg_preset *a)
{
	for (size_t i = 0; i < a->nlayers; i++) {
		json_decref(a->layers[i].id);
		json_decref(a->layers[i].op);
		json_decref(a->layers[i].counters);
	}
	free(a->layers);
	memset(a, 0, sizeof(*a));
}

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
			map[it * cs->n + c] = h ? slot_of(h, cs->names[c], cs->lens[c]) : SIZE_MAX;
	}
	return map;
}

static double cell(const struct hpx_preset *ps, size_t it, size_t row, size_t slot)
{
	const struct hpx_iter *iv = &ps->iters[it];
	const struct hpx_header *h = &ps->hdrs[iv->hdr];
	return iv->vals[row * h->nnum + slot];
}

/* Gather layers [l0, l0 + nb) of every iteration (see aggregate_preset):
 * values, frozen rows (every counter the row has reads 0), rows present
 * and frozen per layer, and the layers' overflow flags. */
static void gather_block(const struct hpx_preset *ps, const struct colset *cs, const size_t *map,
			 size_t l0, size_t nb, size_t per_layer, double *gather, bool *frozen,
			 size_t *nrows_of, size_t *nfrozen_of, struct agg_layer *layers)
{
	size_t ni = ps->niters;
	memset(nrows_of, 0, nb * sizeof(size_t));
	memset(nfrozen_of, 0, nb * sizeof(size_t));
	for (size_t it = 0; it < ni; it++) {
		const struct hpx_iter *iv = &ps->iters[it];
		size_t nnum = iv->hdr >= 0 ? ps->hdrs[iv->hdr].nnum : 0;
		const size_t *m = map + it * cs->n;
		for (size_t b = 0; b < nb; b++) {
			size_t li = l0 + b;
			double *g = gather + b * per_layer + it;
			frozen[b * ni + it] = false;
			if (li >= iv->nrows) {
				for (size_t c = 0; c < cs->n; c++)
					g[c * ni] = NAN;
				continue;
			}
			nrows_of[b]++;
			const double *row = iv->vals + li * nnum;
			bool seen = false, zero = true;
			for (size_t c = 0; c < cs->n; c++) {
				double v = m[c] == SIZE_MAX ? NAN : row[m[c]];
				g[c * ni] = v;
				if (isnan(v))
					continue;
				seen = true;
				if (v != 0.0)
					zero = false;
			}
			frozen[b * ni + it] = seen && zero;
			nfrozen_of[b] += frozen[b * ni + it];
			if (iv->ovf[li])
				layers[li].overflow = true;
		}
	}
}

static int aggregate_preset(const struct hpx_preset *ps, int method, struct agg_preset *out,
			    struct agg_totals *tot)
{
	memset(out, 0, sizeof(*out));
	if (ps->niters == 0)
		return 0;
	int rc = ERGON_ENOMEM;
	struct colset cs;
	size_t *map = NULL;
	double *clean = NULL, *raw = NULL, *gather = NULL;
	bool *frozen = NULL;
	size_t *nrows_of = NULL, *nfrozen_of = NULL;
	if (colset_build(final_header(ps), &cs))
		goto done;
	size_t ni = ps->niters;
	map = build_map(ps, &cs);
	clean = malloc((ni + 1) * sizeof(double));
	raw = malloc((ni + 1) * sizeof(double));
	/* Layers are gathered in blocks of `blk`: one pass over the iterations
	 * reads blk consecutive rows of each (contiguous memory the prefetcher
	 * follows) instead of one row per pass (a cache miss per iteration and
	 * layer). gather[(b * cs.n + c) * ni + it]: counter c of layer
	 * block_start + b in iteration it (NaN when absent). The block holds at
	 * most 2^20 values (8 MiB) unless one layer alone needs more. */
	size_t per_layer = cs.n * ni + 1;
	size_t blk = ((size_t)1 << 20) / per_layer;
	blk = blk < 1 ? 1 : (blk > 32 ? 32 : blk);
	gather = malloc(blk * per_layer * sizeof(double));
	frozen = calloc(blk * ni + 1, sizeof(bool));
	nrows_of = calloc(blk, sizeof(size_t));
	nfrozen_of = calloc(blk, sizeof(size_t));
	size_t nl = ps->iters[0].nrows;
	out->layers = calloc(nl ? nl : 1, sizeof(*out->layers));
	if (!map || !clean || !raw || !gather || !frozen || !nrows_of || !nfrozen_of ||
	    !out->layers)
		goto done;
	out->nlayers = nl;
	const struct hpx_iter *first = &ps->iters[0];
	for (size_t li = 0; li < nl; li++) {
		struct agg_layer *L = &out->layers[li];
		size_t b = li % blk;
		if (b == 0) {
			size_t nb = nl - li < blk ? nl - li : blk;
			gather_block(ps, &cs, map, li, nb, per_layer, gather, frozen, nrows_of,
				     nfrozen_of, out->layers);
		}
		L->id = first->id_off[li] != UINT32_MAX ? cell_value(ps->strs + first->id_off[li])
							: json_integer((json_int_t)li);
		L->op = first->op_off[li] != UINT32_MAX ? cell_value(ps->strs + first->op_off[li])
							: json_string("unknown");
		L->counters = json_object();
		if (!L->id || !L->op || !L->counters)
			goto done;
		/* A frozen row reads 0 on every counter it has; drop it unless
		 * every row of the layer is frozen. */
		bool *fz = frozen + b * ni;
		size_t nfrozen = nfrozen_of[b];
		if (nfrozen >= nrows_of[b]) {
			memset(fz, 0, ni * sizeof(bool));
			nfrozen = 0;
		}
		tot->frozen += nfrozen;
		for (size_t c = 0; c < cs.n; c++) {
			size_t nc = 0, nr = 0;
			const double *g = gather + b * per_layer + c * ni;
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
					if (!tot->fallback_where[0])
						snprintf(tot->fallback_where,
							 sizeof(tot->fallback_where),
							 "preset %.100s layer %zu counter %s",
							 ps->name, li,
							 plain_n(cs.names[c], cs.lens[c], cbuf,
								 sizeof(cbuf)));
				}
			}
			if (nc == 0)
				continue;
			json_t *key_val = num_value(aggregate(use, nc, method));
			char key[512];
			size_t kl = cs.lens[c] < sizeof(key) - 1 ? cs.lens[c] : sizeof(key) - 1;
			memcpy(key, cs.names[c], kl);
			key[kl] = '\0';
			if (!key_val || json_object_setn_new_nocheck(L->counters, key, kl, key_val))
				goto done;
		}
	}
	rc = 0;
done:
	if (rc)
		agg_preset_free(out);
	if (cs.names || cs.lens)
		colset_free(&cs);
	free(map);
	free(clean);
	free(raw);
	free(gather);
	free(frozen);
	free(nrows_of);
	free(nfrozen_of);
	return rc;
}

static json_t *layer_json(json_t *id, json_t *op, json_t *counters, bool overflow)
{
	json_t *cyc = json_object_get(counters, HPX_COUNTER_CYCLES);
	return json_pack("{s:O, s:O, s:O, s:O, s:b}", "id", id, "op", op, "counters", counters,
			 "cycles", cyc ? cyc : json_null(), "overflow", (int)overflow);
}

/* Merge presets (indices idx[0..n)) by layer position: the first preset's
 * layer count, ids and ops; later presets only add counter names that are
 * not there yet; overflow is OR-ed. */
static json_t *merge(const struct agg_preset *ag, const size_t *idx, size_t n)
{
	json_t *arr = json_array();
	if (!arr || n == 0)
		return arr;
	const struct agg_preset *base = &ag[idx[0]];
	for (size_t li = 0; li < base->nlayers; li++) {
		json_t *counters = json_deep_copy(base->layers[li].counters);
		bool ovf = base->layers[li].overflow;
		if (!counters)
			goto fail;
		for (size_t k = 0; k < n; k++) {
			const struct agg_preset *a = &ag[idx[k]];
			if (li >= a->nlayers)
				continue;
			const char *key;
			json_t *v;
			json_object_foreach(a->layers[li].counters, key, v)
			{
				if (!json_object_get(counters, key))
					json_object_set(counters, key, v);
			}
			if (a->layers[li].overflow)
				ovf = true;
		}
		json_t *L = layer_json(base->layers[li].id, base->layers[li].op, counters, ovf);
		json_decref(counters);
		if (!L || json_array_append_new(arr, L))
			goto fail;
	}
	return arr;
fail:
	json_decref(arr);
	return NULL;
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

static json_t *meta_value(const struct hpx_meta *m)
{
	if (!m)
		return json_null();
	return cell_value(m->value);
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
static uint64_t strip_layer(json_t *L, bool no_cycles, bool no_events)
{
	json_t *c = json_object_get(L, "counters");
	uint64_t n = 0;
	if (no_cycles) {
		if (json_object_get(c, HPX_COUNTER_CYCLES) &&
		    !json_object_del(c, HPX_COUNTER_CYCLES))
			n++;
		json_object_set_new(L, "cycles", json_null());
	}
	if (no_events) {
		const size_t plen = strlen(HPX_COUNTER_PMU_PREFIX);
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(c, tmp, k, v)
		{
			if (strncmp(k, HPX_COUNTER_PMU_PREFIX, plen) == 0 &&
			    strcmp(k, HPX_COUNTER_CYCLES) != 0 && !json_object_del(c, k))
				n++;
		}
	}
	return n;
}

static uint64_t strip_layers(json_t *arr, bool no_cycles, bool no_events)
{
	uint64_t n = 0;
	size_t i;
	json_t *L;
	json_array_foreach(arr, i, L)
	{
		if (json_is_array(L)) /* an iteration's rows */
			n += strip_layers(L, no_cycles, no_events);
		else
			n += strip_layer(L, no_cycles, no_events);
	}
	return n;
}

static json_t *meta_json(const struct ergon_hpx_parser *p)
{
	/* Wire names (wire.h); the JSON keys are their lower-case forms. */
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
	json_t *m = json_object();
	if (!m)
		return NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char lk[64];
		size_t n = strlen(keys[i]);
		for (size_t c = 0; c <= n && c < sizeof(lk); c++)
			lk[c] = (char)(keys[i][c] >= 'A' && keys[i][c] <= 'Z' ? keys[i][c] + 32
									      : keys[i][c]);
		lk[sizeof(lk) - 1] = '\0';
		const struct hpx_meta *e = meta_wire(p, keys[i]);
		json_t *v;
		if (!e && strcmp(keys[i], HPX_KEY_CLEAN_INFER_COUNT) == 0 && p->has_hb_clean_iters)
			v = json_integer((json_int_t)p->hb_clean_iters);
		else
			v = meta_value(e);
		json_object_set_new(m, lk, v);
	}
	/* psram: present only with HPX_PSRAM_CLOCK_HZ, in the reference's
	 * PsramInfo field order; a missing field is 0 (xip_enabled false). */
	if (hpx_meta_get(p, "psram_clock_hz")) {
		static const char *const pk[] = {
		    "size_bytes",	"clock_hz",    "capabilities",	"state",
		    "last_init_status", "xip_enabled", "timing_status", "rxdqs_delay"};
		json_t *ps = json_object();
		for (size_t i = 0; ps && i < sizeof(pk) / sizeof(pk[0]); i++) {
			char key[64];
			snprintf(key, sizeof(key), "psram_%s", pk[i]);
			const struct hpx_meta *e = hpx_meta_get(p, key);
			json_t *v = e ? meta_value(e) : json_integer(0);
			if (strcmp(pk[i], "xip_enabled") == 0) {
				bool on = json_is_integer(v)
					      ? json_integer_value(v) != 0
					      : (json_is_string(v) && json_string_length(v) > 0);
				json_decref(v);
				v = json_boolean(on);
			}
			json_object_set_new(ps, pk[i], v);
		}
		json_object_set_new(m, "psram", ps ? ps : json_null());
	} else {
		json_object_set_new(m, "psram", json_null());
	}
	json_t *presets = json_array();
	const struct hpx_meta *pm = hpx_meta_get(p, "presets");
	double d;
	if (presets && pm && !hpx_py_int(pm->value, pm->vlen, &d, NULL, NULL)) {
		const char *s = pm->value;
		for (;;) {
			const char *c = strchr(s, ',');
			size_t n = c ? (size_t)(c - s) : strlen(s);
			json_array_append_new(presets, hpx_json_text(s, n));
			if (!c)
				break;
			s = c + 1;
		}
	}
	json_object_set_new(m, "presets", presets ? presets : json_null());
	return m;
}

static json_t *noted_lines(const struct hpx_noted *n)
{
	json_t *a = json_array();
	for (uint64_t i = 0; a && i < n->count && i < HPX_MAX_NOTED; i++)
		json_array_append_new(a, json_integer((json_int_t)n->lines[i]));
	return a;
}

static json_t *iterations_json(const struct hpx_preset *ps)
{
	json_t *its = json_array();
	struct colset cs;
	if (!its || colset_build(final_header(ps), &cs)) {
		json_decref(its);
		return NULL;
	}
	size_t *map = build_map(ps, &cs);
	for (size_t it = 0; map && it < ps->niters; it++) {
		const struct hpx_iter *iv = &ps->iters[it];
		json_t *rows = json_array();
		for (size_t r = 0; rows && r < iv->nrows; r++) {
			json_t *c = json_object();
			for (size_t k = 0; c && k < cs.n; k++) {
				size_t s = map[it * cs.n + k];
				if (s == SIZE_MAX)
					continue;
				double v = cell(ps, it, r, s);
				if (isnan(v))
					continue;
				char key[512];
				size_t kl =
				    cs.lens[k] < sizeof(key) - 1 ? cs.lens[k] : sizeof(key) - 1;
				memcpy(key, cs.names[k], kl);
				key[kl] = '\0';
				json_object_setn_new_nocheck(c, key, kl, json_real(v));
			}
			json_t *id = iv->id_off[r] != UINT32_MAX
					 ? cell_value(ps->strs + iv->id_off[r])
					 : json_integer(0);
			json_t *op = iv->op_off[r] != UINT32_MAX
					 ? cell_value(ps->strs + iv->op_off[r])
					 : json_string("unknown");
			json_t *L = c ? layer_json(id, op, c, iv->ovf[r]) : NULL;
			json_decref(id);
			json_decref(op);
			json_decref(c);
			json_array_append_new(rows, L);
		}
		json_array_append_new(its, rows);
	}
	free(map);
	colset_free(&cs);
	return its;
}

int ergon_hpx_parser_to_json(struct ergon_hpx_parser *p, int aggregation, unsigned flags,
			     json_t **out, struct ergon_err *err)
{
	*out = NULL;
	if (!ergon_hpx_aggregation_parse(ergon_hpx_aggregation_name(aggregation)) ||
	    (aggregation != ERGON_HPX_AGG_MEDIAN && aggregation != ERGON_HPX_AGG_MEAN &&
	     aggregation != ERGON_HPX_AGG_TRIMMED))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "hpx: unknown aggregation %d; use median, mean or trimmed",
				     aggregation);
	int rc = ERGON_ENOMEM;
	struct agg_totals tot = {0};
	struct agg_preset *ag = calloc(p->npresets + 1, sizeof(*ag));
	size_t *idx = calloc(p->npresets + 1, sizeof(*idx));
	json_t *res = json_object();
	json_t *issues = json_array();
	json_t *presets = json_object();
	json_t *groups = json_object();
	if (!ag || !idx || !res || !issues || !presets || !groups)
		goto done;
	bool overflow_detected = false;
	for (size_t i = 0; i < p->npresets; i++) {
		const struct hpx_preset *ps = &p->presets[i];
		if (aggregate_preset(ps, aggregation, &ag[i], &tot))
			goto done;
		const struct hpx_header *h = final_header(ps);
		json_t *hdr = json_array();
		for (size_t c = 0; hdr && h && c < h->ncols; c++)
			json_array_append_new(
			    hdr, hpx_json_text(h->text + h->names[c].off, h->names[c].len));
		json_t *layers = json_array();
		for (size_t li = 0; layers && li < ag[i].nlayers; li++)
			json_array_append_new(layers,
					      layer_json(ag[i].layers[li].id, ag[i].layers[li].op,
							 ag[i].layers[li].counters,
							 ag[i].layers[li].overflow));
		json_t *pj =
		    json_pack("{s:o, s:o}", "name", hpx_json_text(ps->name, strlen(ps->name)),
			      "header", hdr ? hdr : json_array());
		if (!pj) {
			json_decref(layers);
			goto done;
		}
		if (flags & ERGON_HPX_JSON_ITERATIONS) {
			json_t *its = iterations_json(ps);
			if (!its) {
				json_decref(pj);
				json_decref(layers);
				goto done;
			}
			json_object_set_new(pj, "iterations", its);
		}
		json_object_set_new(pj, "layers", layers ? layers : json_array());
		json_t *pname = json_object_get(pj, "name");
		json_object_set_new(presets, json_string_value(pname), pj);
		/* overflow_detected: any row of any kept iteration */
		for (size_t it = 0; it < ps->niters; it++)
			for (size_t r = 0; r < ps->iters[it].nrows; r++)
				if (ps->iters[it].ovf[r])
					overflow_detected = true;
		/* inconsistent layer counts within a preset */
		bool mismatch = false;
		for (size_t it = 1; it < ps->niters; it++)
			if (ps->iters[it].nrows != ps->iters[0].nrows)
				mismatch = true;
		if (mismatch) {
			json_t *counts = json_array();
			for (size_t it = 0; counts && it < ps->niters && it < 64; it++)
				json_array_append_new(
				    counts, json_integer((json_int_t)ps->iters[it].nrows));
			ergon_issue_add(issues, "pmu.layer_count_mismatch",
					json_pack("{s:s, s:o}", "preset", ps->name, "layer_counts",
						  counts ? counts : json_array()),
					"preset %s: layer counts differ between iterations; the "
					"first iteration's %zu layers are aggregated, extra rows "
					"ignored",
					ps->name, ps->iters[0].nrows);
		}
	}
	for (size_t i = 0; i < p->npresets; i++)
		idx[i] = i;
	json_t *merged = merge(ag, idx, p->npresets);
	if (!merged)
		goto done;
	json_object_set_new(res, "meta", meta_json(p));
	json_object_set_new(res, "presets", presets);
	presets = NULL;
	json_object_set_new(res, "layers", merged);
	json_object_set_new(res, "overflow_detected", json_boolean(overflow_detected));
	/* Groups in order of first appearance. */
	bool *used = calloc(p->npresets + 1, sizeof(bool));
	if (!used)
		goto done;
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
		json_t *g = merge(ag, idx, n);
		json_t *gname = hpx_json_text(ni, gl);
		if (gname)
			json_object_set_new(groups, json_string_value(gname), g ? g : json_array());
		else
			json_decref(g);
		json_decref(gname);
	}
	free(used);
	json_object_set_new(res, "groups", groups);
	groups = NULL;

	/* Per-layer differences between presets (merge uses the first's count). */
	for (size_t i = 1; i < p->npresets; i++) {
		if (ag[i].nlayers != ag[0].nlayers && p->presets[i].niters) {
			ergon_issue_add(
			    issues, "pmu.layer_count_mismatch",
			    json_pack("{s:s, s:I, s:s, s:I}", "base_preset", p->presets[0].name,
				      "base_layers", (json_int_t)ag[0].nlayers, "preset",
				      p->presets[i].name, "layers", (json_int_t)ag[i].nlayers),
			    "preset %s has %zu layers but %s has %zu; the merge uses "
			    "%s's layers",
			    p->presets[i].name, ag[i].nlayers, p->presets[0].name, ag[0].nlayers,
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
		json_t *merged_layers = json_object_get(res, "layers");
		uint64_t cy = strip_layers(merged_layers, no_cycles, false);
		uint64_t ev = strip_layers(merged_layers, false, no_events);
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(res, "presets"), k, v)
		{
			strip_layers(json_object_get(v, "layers"), no_cycles, no_events);
			strip_layers(json_object_get(v, "iterations"), no_cycles, no_events);
		}
		json_object_foreach(json_object_get(res, "groups"), k, v)
		    strip_layers(v, no_cycles, no_events);
		if (no_cycles)
			ergon_issue_add(
			    issues, "pmu.cycle_counter_missing",
			    json_pack("{s:I, s:I}", "line", (json_int_t)cyc_m->lineno,
				      "cycle_cells_dropped", (json_int_t)cy),
			    "HPX_%s=%s at line %llu: the port has no CPU cycle counter (QEMU "
			    "implements no DWT CYCCNT); per-layer cycles, total_cycles and "
			    "top_layers are absent, not zero%s",
			    HPX_KEY_CYCLE_COUNTER, HPX_VAL_MISSING,
			    (unsigned long long)cyc_m->lineno,
			    cy ? "; cycle cells the stream printed anyway were dropped" : "");
		/* A port without a PMU that was asked for no event counters lost
		 * nothing (the runtime refuses event presets it cannot count):
		 * the declaration stays in ergon.capabilities. The code is for a
		 * stream that carries counter passes or event cells anyway. */
		bool passes = false;
		for (size_t i = 0; i < p->npresets; i++)
			if (strcmp(p->presets[i].name, HPX_PRESET_LEGACY) != 0)
				passes = true;
		if (no_events && (ev > 0 || passes))
			ergon_issue_add(
			    issues, "pmu.unit_missing",
			    json_pack("{s:I, s:I}", "line", (json_int_t)pmu_m->lineno,
				      "event_cells_dropped", (json_int_t)ev),
			    "HPX_%s=%s at line %llu: the port has no PMU, so no per-layer event "
			    "counts exist (absent, not zero)%s",
			    HPX_KEY_PMU, HPX_VAL_MISSING, (unsigned long long)pmu_m->lineno,
			    ev ? "; event cells the stream printed anyway were dropped" : "");
	}
	/* Issues: what was seen, with line numbers. */
	size_t nlayers = json_array_size(json_object_get(res, "layers"));
	if (!p->in_session)
		ergon_issue_add(issues, "pmu.missing", NULL,
				"no '%s' line in %llu lines: not an HPX profile stream, or the "
				"capture started too late",
				HPX_TOK_START, (unsigned long long)(p->lines.lineno - 1));
	else if (nlayers == 0)
		ergon_issue_add(issues, "pmu.missing", NULL,
				"the stream has a START but no complete iteration with layer rows");
	/* A parser that stopped at a limit did not see the rest: the caller
	 * reports that (pmu.parser_limit), not a truncated stream. */
	if (p->in_session && !p->ended && !p->failed)
		ergon_issue_add(
		    issues, "pmu.incomplete",
		    json_pack("{s:b}", "open_iteration_dropped", (int)p->dropped_open_iter),
		    "no '%s' after %llu lines: the stream is truncated; complete "
		    "iterations are kept%s",
		    HPX_TOK_END, (unsigned long long)(p->lines.lineno - 1),
		    p->dropped_open_iter ? ", the open one was dropped" : "");
	if (p->bad_rows.count)
		ergon_issue_add(
		    issues, "pmu.parse_error",
		    json_pack("{s:s, s:I, s:o}", "kind", "field_count", "count",
			      (json_int_t)p->bad_rows.count, "lines", noted_lines(&p->bad_rows)),
		    "%llu row(s) dropped (first at line %llu: %s); check the link for "
		    "lost bytes",
		    (unsigned long long)p->bad_rows.count, (unsigned long long)p->bad_rows.lines[0],
		    p->bad_rows_detail[0] ? p->bad_rows_detail : "NUL or CR inside a row");
	if (p->bad_cells.count)
		ergon_issue_add(
		    issues, "pmu.parse_error",
		    json_pack("{s:s, s:I, s:o}", "kind", "non_numeric", "count",
			      (json_int_t)p->bad_cells.count, "lines", noted_lines(&p->bad_cells)),
		    "%llu counter cell(s) are not numbers (first at line %llu) and were "
		    "left out of aggregation",
		    (unsigned long long)p->bad_cells.count,
		    (unsigned long long)p->bad_cells.lines[0]);
	if (p->neg_cells.count)
		ergon_issue_add(
		    issues, "pmu.negative_counter",
		    json_pack("{s:I, s:o}", "count", (json_int_t)p->neg_cells.count, "lines",
			      noted_lines(&p->neg_cells)),
		    "%llu counter cell(s) are negative (first at line %llu); a u32 PMU counter "
		    "cannot be, so the row was printed with a signed format or the link "
		    "corrupted it; the values were kept as the reference parser keeps them",
		    (unsigned long long)p->neg_cells.count,
		    (unsigned long long)p->neg_cells.lines[0]);
	if (p->lines.dropped)
		ergon_issue_add(issues, "pmu.line_too_long",
				json_pack("{s:I, s:I, s:I}", "count", (json_int_t)p->lines.dropped,
					  "first_line", (json_int_t)p->lines.first_dropped_lineno,
					  "line_max_bytes", (json_int_t)p->lim.line_max_bytes),
				"%llu line(s) longer than %zu bytes dropped (first: line %llu)",
				(unsigned long long)p->lines.dropped, p->lim.line_max_bytes,
				(unsigned long long)p->lines.first_dropped_lineno);
	if (tot.wrap)
		ergon_issue_add(
		    issues, "pmu.counter_wrap", json_pack("{s:I}", "count", (json_int_t)tot.wrap),
		    "%llu counter sample(s) >= 2^31 rejected as uint32 wraps before %s "
		    "aggregation",
		    (unsigned long long)tot.wrap, ergon_hpx_aggregation_name(aggregation));
	if (tot.frozen)
		ergon_issue_add(issues, "pmu.frozen_rows",
				json_pack("{s:I}", "count", (json_int_t)tot.frozen),
				"%llu all-zero (frozen) sample row(s) rejected before aggregation",
				(unsigned long long)tot.frozen);
	if (tot.fallback)
		ergon_issue_add(issues, "pmu.wrap_fallback",
				json_pack("{s:I, s:s}", "count", (json_int_t)tot.fallback, "first",
					  tot.fallback_where),
				"%llu counter(s) had no valid sample and report the aggregate of "
				"their rejected raw samples (first: %s); do not trust those values",
				(unsigned long long)tot.fallback, tot.fallback_where);
	if (overflow_detected)
		ergon_issue_add(issues, "pmu.counter_overflow", NULL,
				"at least one layer reported a PMU counter overflow; its counters "
				"are lower bounds");
	const struct hpx_meta *ver = hpx_meta_get(p, "version");
	double ver_d = 0;
	char vbuf[128];
	if (ver && !(hpx_py_int(ver->value, ver->vlen, &ver_d, NULL, NULL) &&
		     ver_d == (double)HPX_WIRE_VERSION))
		ergon_issue_add(issues, "pmu.version_mismatch",
				json_pack("{s:I}", "line", (json_int_t)ver->lineno),
				"HPX_VERSION=%s at line %llu, this host speaks version %d; results "
				"may be misparsed",
				plain(ver->value, vbuf, sizeof(vbuf)),
				(unsigned long long)ver->lineno, HPX_WIRE_VERSION);
	if (p->dup_preset.count)
		ergon_issue_add(issues, "pmu.duplicate_preset",
				json_pack("{s:s, s:o}", "preset", p->dup_preset_name, "lines",
					  noted_lines(&p->dup_preset)),
				"preset %s appeared again at line %llu; its earlier data was "
				"replaced",
				p->dup_preset_name, (unsigned long long)p->dup_preset.lines[0]);
	if (p->iter_order.count)
		ergon_issue_add(issues, "pmu.iter_order",
				json_pack("{s:o}", "lines", noted_lines(&p->iter_order)),
				"%llu HPX_ITER marker(s) repeat or go back (first at line %llu); "
				"every iteration is still aggregated",
				(unsigned long long)p->iter_order.count,
				(unsigned long long)p->iter_order.lines[0]);
	if (p->restarts.count)
		ergon_issue_add(issues, "pmu.restart",
				json_pack("{s:o}", "lines", noted_lines(&p->restarts)),
				"a second '%s' at line %llu: the target restarted; data from "
				"before the restart is kept",
				HPX_TOK_START, (unsigned long long)p->restarts.lines[0]);
	json_t *caps = json_pack(
	    "{s:o, s:o}", "pmu", pmu_m ? hpx_json_text(pmu_m->value, pmu_m->vlen) : json_null(),
	    "cycle_counter", cyc_m ? hpx_json_text(cyc_m->value, cyc_m->vlen) : json_null());
	json_t *eg = json_pack(
	    "{s:b, s:I, s:I, s:I, s:I, s:I, s:O}", "complete", (int)p->ended, "parse_errors",
	    (json_int_t)p->parse_errors, "lines", (json_int_t)(p->lines.lineno - 1),
	    "lines_too_long", (json_int_t)p->lines.dropped, "heartbeats", (json_int_t)p->heartbeats,
	    "layer_count", (json_int_t)nlayers, "issues", issues);
	if (!eg || !caps) {
		json_decref(eg);
		json_decref(caps);
		goto done;
	}
	json_object_set_new(eg, "capabilities", caps);
	json_object_set_new(res, "ergon", eg);
	*out = res;
	res = NULL;
	rc = 0;
done:
	for (size_t i = 0; ag && i < p->npresets; i++)
		agg_preset_free(&ag[i]);
	free(ag);
	free(idx);
	json_decref(res);
	json_decref(issues);
	json_decref(presets);
	json_decref(groups);
	if (rc)
		return ergon_err_set(err, rc, "hpx: out of memory building the result");
	return 0;
}

/* What `ergon view --serve` answers (docs/internals/view.md).
 *
 * The page (the same as `ergon view --out`, with the run's token in its
 * data), GET /api/info (each recording's levels), GET /api/tile (entries
 * of one level, read from the recording's own DATA and SUMMARY chunks on
 * demand) and GET /api/stats (a range's exact figures from whole entries
 * of the coarsest levels that fit and the samples at its edges). Paths
 * are matched exactly and never name a file; every number a request
 * gives is checked against what the recording holds before anything is
 * read, and every answer is bounded (ERGON_VIEW_TILE_MAX entries, a fixed
 * amount of work for a range's figures). The HTTP daemon is view_http.c. */
#include "../common/common.h"
#include "ergon/bins.h"
#include "ergon/jls_levels.h"
#include "ergon/utf8.h"
#include "view_internal.h"

#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Signals indexed per recording: current, voltage, power, gpi[0..7]. */
enum { SIG_LINES0 = VIEW_F32, SIGS = VIEW_F32 + ERGON_JLS_LINES_MAX };
/* Entries a range's figures may read, all levels together: a recording
 * whose levels are whole needs about 2 x 10 x levels entries plus the
 * edge samples (< 2 level-1 entries); more means a level is cut short. */
#define STATS_WORK_MAX ((uint64_t)1 << 22)
/* Entries read at once while summing a range (the tile buffers). */
#define STATS_STEP ERGON_VIEW_TILE_MAX

struct srec {
	struct ergon_jls_reader *r;
	struct ergon_jls_levels *lv;
	char lines[ERGON_JLS_LINES_MAX][16];
	size_t n_lines;
	int has_power;
	double fs;
	uint64_t samples; /* level 0 of current, voltage (and power) */
	unsigned depth;	  /* levels every f32 signal holds alike */
};

struct view_served {
	struct srec rec[ERGON_VIEW_RECORDINGS_MAX];
	size_t n;
	char token[33];
	char *page, *info;
	size_t page_len, info_len;
	struct ergon_jls_entry *buf[SIGS]; /* ERGON_VIEW_TILE_MAX each */
};

static const char *const F32_NAMES[VIEW_F32] = {"current", "voltage", "power"};

/* Entries of f32 signal k at level v, or 0 when k is power and absent. */
static uint64_t entries(const struct srec *R, size_t k, unsigned v)
{
	return ergon_jls_levels_entries(R->lv, k, v);
}

/* Levels every f32 signal holds with the same entry size, and the
 * entries all of them have at level v. */
static uint64_t common_entries(const struct srec *R, unsigned v)
{
	uint64_t m = UINT64_MAX;
	for (size_t k = 0; k < VIEW_F32; k++) {
		if (k == VIEW_POWER && !R->has_power)
			continue;
		uint64_t e = entries(R, k, v);
		if (e < m)
			m = e;
	}
	return m == UINT64_MAX ? 0 : m;
}

static int srec_open(struct srec *R, const char *path, struct ergon_err *err)
{
	int rc = ergon_jls_file_open(path, &R->r, err);
	if (rc)
		return rc;
	const char *names[SIGS];
	for (size_t k = 0; k < VIEW_F32; k++)
		names[k] = F32_NAMES[k];
	for (unsigned k = 0; k < ERGON_JLS_LINES_MAX; k++) {
		snprintf(R->lines[R->n_lines], sizeof R->lines[0], "gpi[%u]", k);
		if (ergon_jls_reader_signal(R->r, R->lines[R->n_lines]) != NULL)
			R->n_lines++;
	}
	for (size_t k = 0; k < R->n_lines; k++)
		names[SIG_LINES0 + k] = R->lines[k];
	if ((rc = ergon_jls_levels_open(R->r, names, SIG_LINES0 + R->n_lines, &R->lv, err)) != 0)
		return rc;
	R->has_power = ergon_jls_levels_depth(R->lv, VIEW_POWER) > 0;
	R->fs = (double)ergon_jls_reader_sample_rate(R->r);
	R->samples = common_entries(R, 0);
	if (R->samples == 0 || !(R->fs > 0))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: no sample of current and voltage to serve", path);
	unsigned d = 1;
	while (d < ERGON_JLS_LEVELS_MAX && common_entries(R, d) > 0) {
		uint64_t e = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, d);
		if (ergon_jls_levels_entry_samples(R->lv, VIEW_VOLTAGE, d) != e ||
		    (R->has_power && ergon_jls_levels_entry_samples(R->lv, VIEW_POWER, d) != e))
			break;
		d++;
	}
	R->depth = d;
	return 0;
}

/* --- the page's bins from the recording's summary levels ----------------- */

/* Candidate bins scanned sample by sample for a line's first rising edge;
 * past that the page is told there is none (no alignment on it). */
#define RISE_SCANS_MAX 8u

struct lfill {
	const struct srec *R;
	struct ergon_jls_entry *e; /* ERGON_VIEW_TILE_MAX */
	int used;		   /* the bins came from a summary level */
	unsigned level;
	uint64_t entry_samples;
};

/* Samples [a, b) of signal k folded into one bin's min, max, sum and
 * finite count (level 0, read in pieces). */
static int fold(struct lfill *f, size_t k, uint64_t a, uint64_t b, double *sum, uint64_t *n,
		float *mn, float *mx, uint8_t *code, struct ergon_err *err)
{
	while (a < b) {
		size_t m = (size_t)(b - a < ERGON_VIEW_TILE_MAX ? b - a : ERGON_VIEW_TILE_MAX);
		int rc = ergon_jls_levels_read(f->R->lv, k, 0, a, m, f->e, err);
		if (rc)
			return rc;
		for (size_t i = 0; i < m; i++) {
			float x = f->e[i].mean;
			if (code != NULL) {
				*code |= (uint8_t)(x > 0.5f ? ERGON_BINS_HIGH : ERGON_BINS_LOW);
				continue;
			}
			if (!isfinite(x))
				continue;
			*sum += x;
			(*n)++;
			if (x < *mn)
				*mn = x;
			if (x > *mx)
				*mx = x;
		}
		a += m;
	}
	return 0;
}

/* The first rising edge of line k (a high sample after a low one) from its
 * bins' codes: the first bins that can hold one are scanned sample by
 * sample. -1 when none is found within RISE_SCANS_MAX bins. */
static int first_rise(struct lfill *f, size_t k, const uint8_t *codes, size_t nb, uint64_t es,
		      uint64_t N, int64_t *out, struct ergon_err *err)
{
	*out = -1;
	unsigned scans = 0;
	for (size_t c = 0; c < nb && scans < RISE_SCANS_MAX; c++) {
		if (!(codes[c] & ERGON_BINS_HIGH) ||
		    !((codes[c] & ERGON_BINS_LOW) || (c > 0 && (codes[c - 1] & ERGON_BINS_LOW))))
			continue;
		scans++;
		uint64_t a = c > 0 ? c * es - 1 : 0, b = (c + 1) * es < N ? (c + 1) * es : N;
		int prev = -1;
		while (a < b) {
			size_t m =
			    (size_t)(b - a < ERGON_VIEW_TILE_MAX ? b - a : ERGON_VIEW_TILE_MAX);
			int rc = ergon_jls_levels_read(f->R->lv, k, 0, a, m, f->e, err);
			if (rc)
				return rc;
			for (size_t i = 0; i < m; i++) {
				int hi = f->e[i].mean > 0.5f;
				if (prev == 0 && hi) {
					*out = (int64_t)(a + i);
					return 0;
				}
				prev = hi;
			}
			a += m;
		}
	}
	return 0;
}

/* view_fill_fn: the bins are the entries of the finest summary level that
 * gives at most max_bins of them (the last bin, past the level's last
 * whole entry, from the samples), read from the levels index instead of
 * streaming every sample, when that level is as fine as the bins
 * streaming would make; else (a short recording, no such level, no power
 * signal, lines read in other entries) every sample is streamed as for
 * --out. An entry's finite count is not stored: a bin counts all of
 * its samples, none when its mean is NaN, and the lost samples are not
 * known (the page's data says null). */
static int levels_fill(void *ctx, struct ergon_jls_reader *r, const char *const *lines,
		       size_t n_lines, uint64_t max_bins, struct ergon_bins *b,
		       struct ergon_err *err)
{
	struct lfill *f = ctx;
	const struct srec *R = f->R;
	uint64_t N = R->samples;
	/* The bin size streaming would end with (bins engine, x10 steps):
	 * a level is used only when it is as fine, so serving never shows
	 * coarser bins than the written page would. */
	uint64_t sb = 1;
	while ((N + sb - 1) / sb > max_bins && sb <= UINT64_MAX / 10)
		sb *= 10;
	unsigned v = 0;
	for (unsigned w = 1; w < R->depth && v == 0; w++) {
		uint64_t es = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, w);
		int ok = es <= sb && es <= UINT32_MAX && (N + es - 1) / es <= max_bins &&
			 common_entries(R, w) >= N / es && R->has_power && n_lines == R->n_lines;
		for (size_t k = 0; ok && k < n_lines; k++)
			ok = strcmp(lines[k], R->lines[k]) == 0 &&
			     ergon_jls_levels_entry_samples(R->lv, SIG_LINES0 + k, w) == es &&
			     ergon_jls_levels_entries(R->lv, SIG_LINES0 + k, w) >= N / es &&
			     ergon_jls_levels_entries(R->lv, SIG_LINES0 + k, 0) >= N;
		if (ok)
			v = w;
	}
	if (v == 0)
		return view_stream_fill(NULL, r, lines, n_lines, max_bins, b, err);
	uint64_t es = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v);
	size_t full = (size_t)(N / es), nb = (size_t)((N + es - 1) / es);
	memset(b, 0, sizeof(*b));
	b->cfg = (struct ergon_bins_config){
	    .bin_samples = es, .max_bins = max_bins, .n_f32 = VIEW_F32, .n_lines = n_lines};
	b->n_bins = nb;
	b->samples = N;
	b->bin_samples = es;
	int rc = 0;
	for (size_t k = 0; k < VIEW_F32 && rc == 0; k++) {
		b->min[k] = malloc(nb * sizeof(float));
		b->max[k] = malloc(nb * sizeof(float));
		b->mean[k] = malloc(nb * sizeof(float));
		b->finite[k] = malloc(nb * sizeof(uint32_t));
		if (!b->min[k] || !b->max[k] || !b->mean[k] || !b->finite[k])
			rc = ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
		for (size_t i = 0; i < full && rc == 0; i += ERGON_VIEW_TILE_MAX) {
			size_t m = full - i < ERGON_VIEW_TILE_MAX ? full - i : ERGON_VIEW_TILE_MAX;
			rc = ergon_jls_levels_read(R->lv, k, v, i, m, f->e, err);
			for (size_t j = 0; j < m && rc == 0; j++) {
				b->min[k][i + j] = f->e[j].min;
				b->max[k][i + j] = f->e[j].max;
				b->mean[k][i + j] = f->e[j].mean;
				b->finite[k][i + j] = isfinite(f->e[j].mean) ? (uint32_t)es : 0;
			}
		}
		if (rc == 0 && nb > full) {
			double sum = 0;
			uint64_t n = 0;
			float mn = INFINITY, mx = -INFINITY;
			rc = fold(f, k, (uint64_t)full * es, N, &sum, &n, &mn, &mx, NULL, err);
			b->min[k][full] = n ? mn : NAN;
			b->max[k][full] = n ? mx : NAN;
			b->mean[k][full] = n ? (float)(sum / (double)n) : NAN;
			b->finite[k][full] = (uint32_t)n;
		}
	}
	for (size_t k = 0; k < n_lines && rc == 0; k++) {
		size_t sk = SIG_LINES0 + k;
		b->lines[k] = calloc(nb, 1);
		if (b->lines[k] == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
			break;
		}
		for (size_t i = 0; i < full && rc == 0; i += ERGON_VIEW_TILE_MAX) {
			size_t m = full - i < ERGON_VIEW_TILE_MAX ? full - i : ERGON_VIEW_TILE_MAX;
			rc = ergon_jls_levels_read(R->lv, sk, v, i, m, f->e, err);
			for (size_t j = 0; j < m && rc == 0; j++)
				b->lines[k][i + j] =
				    (uint8_t)((f->e[j].min < 0.5f ? ERGON_BINS_LOW : 0) |
					      (f->e[j].max > 0.5f ? ERGON_BINS_HIGH : 0));
		}
		if (rc == 0 && nb > full)
			rc = fold(f, sk, (uint64_t)full * es, N, NULL, NULL, NULL, NULL,
				  &b->lines[k][full], err);
		if (rc == 0)
			rc = first_rise(f, sk, b->lines[k], nb, es, N, &b->first_rise[k], err);
	}
	if (rc) {
		ergon_bins_cleanup(b);
		return rc;
	}
	f->used = 1;
	f->level = v;
	f->entry_samples = es;
	return 0;
}

static json_t *levels_json(const struct srec *R)
{
	json_t *a = json_array();
	for (unsigned v = 0; v < R->depth; v++)
		json_array_append_new(
		    a, json_pack("{s:i,s:I,s:I}", "level", (int)v, "entry_samples",
				 (json_int_t)ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v),
				 "entries", (json_int_t)common_entries(R, v)));
	return a;
}

int view_served_open(const struct ergon_view_input *in, size_t n,
		     const struct ergon_view_options *o, const char *token,
		     struct view_served **out, struct ergon_err *err)
{
	*out = NULL;
	if (n == 0 || n > ERGON_VIEW_RECORDINGS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "view: %zu recordings; give 1 or %u", n,
				     ERGON_VIEW_RECORDINGS_MAX);
	if (strlen(token) != 32)
		return ergon_err_set(err, ERGON_EUSAGE, "view: the token must be 32 hex digits");
	if (sodium_init() < 0)
		return ergon_err_set(err, ERGON_EIO, "view: libsodium failed to initialise");
	struct view_served *s = calloc(1, sizeof(*s));
	json_t *data = NULL, *info = NULL;
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
	memcpy(s->token, token, 33);
	int rc = 0;
	for (size_t k = 0; k < SIGS; k++)
		if ((s->buf[k] = calloc(ERGON_VIEW_TILE_MAX, sizeof(struct ergon_jls_entry))) ==
		    NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
			goto fail;
		}
	data = json_pack("{s:s,s:i,s:s,s:[]}", "schema", "ergon.view", "schema_version", 1,
			 "tool_version", ERGON_VERSION, "recordings");
	info = json_pack("{s:s,s:i,s:i,s:[]}", "schema", "ergon.view.serve", "schema_version", 1,
			 "tile_max", (int)ERGON_VIEW_TILE_MAX, "recordings");
	for (size_t i = 0; i < n; i++) {
		struct srec *R = &s->rec[i];
		s->n = i + 1;
		json_t *rec = NULL;
		struct lfill lf = {.R = R, .e = s->buf[0]};
		if ((rc = srec_open(R, in[i].jls_path, err)) != 0 ||
		    (rc = view_recording_with(&in[i], o, levels_fill, &lf, &rec, err)) != 0)
			goto fail;
		json_object_set_new(rec, "levels", levels_json(R));
		if (lf.used) {
			/* Made from a summary level: lost samples are not counted. */
			json_object_set_new(rec, "bins_from",
					    json_pack("{s:s,s:i,s:I}", "source", "summary level",
						      "level", (int)lf.level, "entry_samples",
						      (json_int_t)lf.entry_samples));
			size_t k;
			json_t *sg;
			json_array_foreach(json_object_get(rec, "signals"), k, sg)
			    json_object_set_new(sg, "lost_samples", json_null());
		} else {
			json_object_set_new(rec, "bins_from",
					    json_pack("{s:s}", "source", "samples"));
		}
		json_array_append_new(json_object_get(data, "recordings"), rec);
		json_t *ri = json_pack("{s:s,s:I,s:f,s:b,s:o}", "path", in[i].jls_path, "samples",
				       (json_int_t)R->samples, "sample_rate_hz", R->fs,
				       "power_recorded", R->has_power, "levels", levels_json(R));
		json_t *ln = json_array();
		for (size_t k = 0; k < R->n_lines; k++)
			json_array_append_new(ln, json_string(R->lines[k]));
		json_object_set_new(ri, "lines", ln);
		json_array_append_new(json_object_get(info, "recordings"), ri);
	}
	struct ergon_view_options po = *o;
	po.serve_token = s->token;
	if ((rc = view_page(data, &po, &s->page, &s->page_len, err)) != 0)
		goto fail;
	s->info = json_dumps(info, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (s->info == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
		goto fail;
	}
	s->info_len = strlen(s->info);
	json_decref(data);
	json_decref(info);
	*out = s;
	return 0;
fail:
	json_decref(data);
	json_decref(info);
	view_served_free(s);
	return rc;
}

void view_served_free(struct view_served *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		ergon_jls_levels_free(s->rec[i].lv);
		ergon_jls_reader_free(s->rec[i].r);
	}
	for (size_t k = 0; k < SIGS; k++)
		free(s->buf[k]);
	free(s->page);
	free(s->info);
	free(s);
}

void view_reply_free(struct view_reply *r)
{
	if (r->owned)
		free(r->body);
	memset(r, 0, sizeof(*r));
}

/* --- replies ------------------------------------------------------------- */

static void reply_json(struct view_reply *r, unsigned status, json_t *j)
{
	char *t = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(j);
	if (t == NULL) {
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
		r->body = (char *)"out of memory\n";
		r->len = strlen(r->body);
		r->owned = 0;
		return;
	}
	r->status = status;
	r->type = "application/json";
	r->body = t;
	r->len = strlen(t);
	r->owned = 1;
}

/* {"status": N, "error": "..."}: what was wrong and what to send. */
__attribute__((format(printf, 3, 4))) static void reply_error(struct view_reply *r, unsigned status,
							      const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* Messages quote the request (method, path, values): bytes that are
	 * not UTF-8 are written as \xNN, or the JSON could not be made. */
	char text[4 * sizeof msg];
	ergon_utf8_escape(msg, text, sizeof text);
	reply_json(r, status, json_pack("{s:i,s:s}", "status", (int)status, "error", text));
}

/* --- parameters ---------------------------------------------------------- */

struct params {
	const struct view_arg *a;
	size_t n;
	const char *path;
	const char *takes; /* "rec, level, start, count" */
};

/* The value of key, NULL when absent. */
static const char *param(const struct params *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->a[i].key, key) == 0)
			return p->a[i].value ? p->a[i].value : "";
	return NULL;
}

/* Every key known and given once; 0, or the reply is made. */
static int params_check(const struct params *p, const char *const *known, struct view_reply *r)
{
	for (size_t i = 0; i < p->n; i++) {
		int ok = strcmp(p->a[i].key, "token") == 0;
		for (size_t k = 0; known[k] && !ok; k++)
			ok = strcmp(p->a[i].key, known[k]) == 0;
		if (!ok) {
			reply_error(r, 400, "%s: unknown parameter '%.64s'; it takes %s and token",
				    p->path, p->a[i].key, p->takes);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->a[i].key, p->a[j].key) == 0) {
				reply_error(r, 400,
					    "%s: parameter '%.64s' given twice; give it once",
					    p->path, p->a[i].key);
				return -1;
			}
	}
	return 0;
}

/* A whole number in [lo, hi]: decimal digits only (no sign, no space, at
 * most 19 of them). 0, or the reply is made naming the parameter. */
static int param_u64(const struct params *p, const char *key, uint64_t lo, uint64_t hi,
		     uint64_t *out, struct view_reply *r)
{
	const char *v = param(p, key);
	if (v == NULL) {
		reply_error(r, 400,
			    "%s: missing parameter '%s' (a whole number %" PRIu64 "..%" PRIu64 ")",
			    p->path, key, lo, hi);
		return -1;
	}
	uint64_t x = 0;
	size_t i = 0;
	for (; v[i] >= '0' && v[i] <= '9' && i < 19; i++)
		x = x * 10u + (uint64_t)(v[i] - '0');
	if (i == 0 || v[i] != '\0' || x < lo || x > hi) {
		reply_error(r, 400, "%s: %s=%.40s%s: give a whole number %" PRIu64 "..%" PRIu64,
			    p->path, key, v, strlen(v) > 40 ? "..." : "", lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

/* rec=: which recording; 0, or the reply is made. */
static int param_rec(const struct view_served *s, const struct params *p, const struct srec **R,
		     struct view_reply *r)
{
	uint64_t i = 0;
	if (param_u64(p, "rec", 0, s->n - 1, &i, r) != 0)
		return -1;
	*R = &s->rec[i];
	return 0;
}

/* --- GET /api/tile -------------------------------------------------------- */

static int b64_arrays(json_t *o, const struct ergon_jls_entry *e, size_t n, float *tmp,
		      struct ergon_err *err)
{
	const char *names[3] = {"min", "max", "mean"};
	for (int w = 0; w < 3; w++) {
		for (size_t i = 0; i < n; i++)
			tmp[i] = w == 0 ? e[i].min : w == 1 ? e[i].max : e[i].mean;
		int rc = view_b64_set(o, names[w], tmp, n * sizeof(float), err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Entries [start, start + count) of one level: per signal base64 f32
 * min/max/mean, per line a byte per entry (1: a low sample, 2: a high
 * one, 3: both), as the page's embedded bins. The count is cut at the
 * level's end. */
static void tile(struct view_served *s, const struct params *p, struct view_reply *r)
{
	static const char *const known[] = {"rec", "level", "start", "count", NULL};
	const struct srec *R;
	uint64_t level, start, count;
	if (params_check(p, known, r) || param_rec(s, p, &R, r) ||
	    param_u64(p, "level", 0, R->depth - 1, &level, r) ||
	    param_u64(p, "count", 1, ERGON_VIEW_TILE_MAX, &count, r))
		return;
	uint64_t have = common_entries(R, (unsigned)level);
	if (param_u64(p, "start", 0, have - 1, &start, r))
		return;
	size_t n = (size_t)(count < have - start ? count : have - start);
	unsigned v = (unsigned)level;
	uint64_t es = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v);
	struct ergon_err err = {0};
	json_t *o =
	    json_pack("{s:i,s:i,s:I,s:I,s:I,s:f,s:[],s:[]}", "rec", (int)(R - s->rec), "level",
		      (int)v, "entry_samples", (json_int_t)es, "start", (json_int_t)start, "count",
		      (json_int_t)n, "sample_rate_hz", R->fs, "signals", "lines");
	float *tmp = malloc(ERGON_VIEW_TILE_MAX * sizeof(float));
	uint8_t *codes = malloc(ERGON_VIEW_TILE_MAX);
	int rc = (tmp == NULL || codes == NULL) ? ERGON_ENOMEM : 0;
	for (size_t k = 0; k < VIEW_F32 && rc == 0; k++) {
		struct ergon_jls_entry *e = s->buf[k];
		if (k == VIEW_POWER && !R->has_power) {
			/* Power = current x voltage per sample; a summary entry's
			 * mean power is not the product of its means. */
			for (size_t i = 0; i < n; i++) {
				float x = v == 0 ? s->buf[VIEW_CURRENT][i].mean *
						       s->buf[VIEW_VOLTAGE][i].mean
						 : NAN;
				e[i] = (struct ergon_jls_entry){x, x, x};
			}
		} else {
			rc = ergon_jls_levels_read(R->lv, k, v, start, n, e, &err);
		}
		json_t *sg = json_pack("{s:s}", "name", F32_NAMES[k]);
		json_array_append_new(json_object_get(o, "signals"), sg);
		if (rc == 0)
			rc = b64_arrays(sg, e, n, tmp, &err);
	}
	for (size_t k = 0; k < R->n_lines && rc == 0; k++) {
		size_t sk = SIG_LINES0 + k;
		uint64_t lh = ergon_jls_levels_entries(R->lv, sk, v);
		memset(codes, 0, n);
		/* A line read in entries of another size is left unknown (0). */
		if (ergon_jls_levels_entry_samples(R->lv, sk, v) == es && lh > start) {
			size_t m = (size_t)(lh - start < n ? lh - start : n);
			rc = ergon_jls_levels_read(R->lv, sk, v, start, m, s->buf[sk], &err);
			for (size_t i = 0; i < m && rc == 0; i++) {
				const struct ergon_jls_entry *e = &s->buf[sk][i];
				codes[i] =
				    (uint8_t)((e->min < 0.5f ? 1 : 0) | (e->max > 0.5f ? 2 : 0));
			}
		}
		json_t *l = json_pack("{s:s}", "name", R->lines[k]);
		json_array_append_new(json_object_get(o, "lines"), l);
		if (rc == 0)
			rc = view_b64_set(l, "bins", codes, n, &err);
	}
	free(tmp);
	free(codes);
	if (rc) {
		json_decref(o);
		reply_error(r, 500, "%s: %s", p->path, err.code ? err.msg : "out of memory");
		return;
	}
	reply_json(r, 200, o);
}

/* --- GET /api/stats -------------------------------------------------------- */

struct acc {
	double sum, min, max;
	uint64_t n; /* samples of the finite entries */
};

/* The figures of samples [start, end): whole entries of the coarsest
 * level that fits at each step (an entry's edges are on its size), the
 * samples at the edges. Exact when no sample is lost: an entry with a
 * lost sample holds the mean of its finite ones, counted here for all of
 * its samples. */
static void stats(struct view_served *s, const struct params *p, struct view_reply *r)
{
	static const char *const known[] = {"rec", "start", "end", NULL};
	const struct srec *R;
	uint64_t start, end;
	if (params_check(p, known, r) || param_rec(s, p, &R, r) ||
	    param_u64(p, "start", 0, R->samples - 1, &start, r) ||
	    param_u64(p, "end", start + 1, R->samples, &end, r))
		return;
	struct acc a[VIEW_F32];
	for (size_t k = 0; k < VIEW_F32; k++)
		a[k] = (struct acc){0, INFINITY, -INFINITY, 0};
	uint64_t used[ERGON_JLS_LEVELS_MAX] = {0}, work = 0, pos = start;
	struct ergon_err err = {0};
	int rc = 0;
	while (pos < end && rc == 0) {
		unsigned v = 0;
		for (unsigned w = R->depth; w-- > 1;) {
			uint64_t es = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, w);
			if (pos % es == 0 && end - pos >= es && pos / es < common_entries(R, w)) {
				v = w;
				break;
			}
		}
		uint64_t es = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v);
		uint64_t m = (end - pos) / es, left = common_entries(R, v) - pos / es;
		if (left < m)
			m = left;
		if (v + 1 < R->depth) {
			/* Up to the next edge of the level above. */
			uint64_t up = ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v + 1);
			uint64_t to = (pos / up + 1) * up;
			if (pos % up != 0 && (to - pos) / es < m)
				m = (to - pos) / es;
		}
		if (m > STATS_STEP)
			m = STATS_STEP;
		if (m == 0)
			m = 1; /* level 0 always fits */
		if ((work += m) > STATS_WORK_MAX) {
			reply_error(r, 400,
				    "%s: [%" PRIu64 ", %" PRIu64 ") needs more than %" PRIu64
				    " entries: this recording's summary levels are cut short; "
				    "ask for a shorter range",
				    p->path, start, end, STATS_WORK_MAX);
			return;
		}
		for (size_t k = 0; k < VIEW_F32 && rc == 0; k++) {
			struct ergon_jls_entry *e = s->buf[k];
			if (k == VIEW_POWER && !R->has_power) {
				if (v != 0)
					continue; /* filled below from level 0 only */
				for (size_t i = 0; i < m; i++) {
					float x = s->buf[VIEW_CURRENT][i].mean *
						  s->buf[VIEW_VOLTAGE][i].mean;
					e[i] = (struct ergon_jls_entry){x, x, x};
				}
			} else {
				rc = ergon_jls_levels_read(R->lv, k, v, pos / es, (size_t)m, e,
							   &err);
			}
			for (size_t i = 0; i < m && rc == 0; i++) {
				if (!isfinite(e[i].mean))
					continue;
				a[k].sum += (double)e[i].mean * (double)es;
				a[k].n += es;
				if (e[i].min < a[k].min)
					a[k].min = e[i].min;
				if (e[i].max > a[k].max)
					a[k].max = e[i].max;
			}
		}
		used[v] += m;
		pos += m * es;
	}
	if (rc) {
		reply_error(r, 500, "%s: %s", p->path, err.msg);
		return;
	}
	int power_known = R->has_power || R->depth == 1 || used[0] == end - start;
	json_t *o = json_pack("{s:i,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:{},s:[]}", "rec",
			      (int)(R - s->rec), "start", (json_int_t)start, "end", (json_int_t)end,
			      "samples", (json_int_t)(end - start), "sample_rate_hz", R->fs, "t0_s",
			      (double)start / R->fs, "t1_s", (double)end / R->fs, "dt_s",
			      (double)(end - start) / R->fs, "signals", "levels_used");
	for (size_t k = 0; k < VIEW_F32; k++) {
		int known_k = k != VIEW_POWER || power_known;
		json_object_set_new(
		    json_object_get(o, "signals"), F32_NAMES[k],
		    json_pack("{s:o,s:o,s:o,s:I}", "mean",
			      ergon_jnum(known_k && a[k].n ? a[k].sum / (double)a[k].n : NAN),
			      "min", ergon_jnum(known_k && a[k].n ? a[k].min : NAN), "max",
			      ergon_jnum(known_k && a[k].n ? a[k].max : NAN), "finite_samples",
			      (json_int_t)(known_k ? a[k].n : 0)));
	}
	json_object_set_new(o, "charge_c", ergon_jnum(a[VIEW_CURRENT].sum / R->fs));
	json_object_set_new(o, "energy_j",
			    ergon_jnum(power_known ? a[VIEW_POWER].sum / R->fs : NAN));
	for (unsigned v = 0; v < R->depth; v++)
		if (used[v])
			json_array_append_new(
			    json_object_get(o, "levels_used"),
			    json_pack(
				"{s:i,s:I,s:I}", "level", (int)v, "entry_samples",
				(json_int_t)ergon_jls_levels_entry_samples(R->lv, VIEW_CURRENT, v),
				"entries", (json_int_t)used[v]));
	reply_json(r, 200, o);
}

/* --- routing --------------------------------------------------------------- */

/* Whether the request carries the run's token (compared in constant time). */
static int authorised(const struct view_served *s, const struct view_arg *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].key, "token") == 0 && a[i].value != NULL &&
		    strlen(a[i].value) == 32 && sodium_memcmp(a[i].value, s->token, 32) == 0)
			return 1;
	return 0;
}

void view_served_handle(struct view_served *s, const char *method, const char *path,
			const struct view_arg *args, size_t n_args, struct view_reply *r)
{
	memset(r, 0, sizeof(*r));
	/* Nothing is said to a request without the token, not even whether
	 * the path exists. */
	if (!authorised(s, args, n_args)) {
		reply_error(r, 403,
			    "forbidden: every request needs the token= this run printed; open "
			    "the URL `ergon view --serve` printed");
		return;
	}
	static const char *const paths[] = {"/", "/api/info", "/api/tile", "/api/stats"};
	size_t route = 0;
	while (route < 4 && strcmp(path, paths[route]) != 0)
		route++;
	if (route == 4) {
		reply_error(r, 404,
			    "%.200s: no such page; the paths are /, /api/info, /api/tile, "
			    "/api/stats",
			    path);
		return;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		reply_error(r, 405, "%.200s: method %.32s not allowed; use GET", path, method);
		r->allow = "GET, HEAD";
		return;
	}
	if (n_args > VIEW_ARGS_MAX) {
		reply_error(r, 400, "%s: %zu parameters; at most %u", path, n_args, VIEW_ARGS_MAX);
		return;
	}
	struct params p = {.a = args, .n = n_args, .path = paths[route]};
	static const char *const none[] = {NULL};
	switch (route) {
	case 0:
	case 1:
		p.takes = "no other parameter";
		if (params_check(&p, none, r))
			return;
		r->status = 200;
		r->type = route == 0 ? "text/html; charset=utf-8" : "application/json";
		r->body = route == 0 ? s->page : s->info;
		r->len = route == 0 ? s->page_len : s->info_len;
		r->owned = 0;
		return;
	case 2:
		p.takes = "rec, level, start, count";
		tile(s, &p, r);
		return;
	default:
		p.takes = "rec, start, end";
		stats(s, &p, r);
		return;
	}
}

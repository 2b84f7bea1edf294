/* The HPX stream parser: line classes, CSV rows, per-preset storage.
 *
 * Lines are classified in the reference parser's order (heartbeat, metadata,
 * preset marker, iteration marker, CSV); every stored sample lives in
 * per-iteration arrays that grow geometrically up to explicit caps, so no
 * allocation happens per line and memory is bounded by layers x iterations x
 * counters. Aggregation and JSON output live in aggregate.c.
 */
#include "ergon/issues.h"
#include "hpx_parser.h"
#include "lines_feed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEF_LINE_MAX 65536
#define DEF_PRESETS 64
#define DEF_ITERATIONS 100000
#define DEF_LAYERS 65536
#define DEF_COLUMNS 256
#define DEF_CELLS ((size_t)1 << 26)
#define DEF_META 1024
#define DEF_TEXT ((size_t)256 << 20)
#define META_VALUE_MAX 4096

/* Grow *buf (holding *cap elements of size elem) to at least need elements,
 * doubling; refuses beyond max elements. */
static int grow(void **buf, size_t *cap, size_t need, size_t elem, size_t max)
{
	if (need <= *cap)
		return 0;
	if (need > max)
		return ERGON_ETOOBIG;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n = n > max / 2 ? max : n * 2;
	void *p = realloc(*buf, n * elem);
	if (!p)
		return ERGON_ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

int hpx_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t max)
{
	return grow(buf, cap, need, elem, max);
}

/* The stream has ended: no iteration starts again, so the recycled
 * buffers go back to the heap for the result and the output. */
static void pools_close(struct ergon_hpx_parser *p)
{
	hpx_pool_close(&p->pool_vals);
	hpx_pool_close(&p->pool_ids);
}

/* A new iteration's first storage from the pools (with a spill): rows
 * for at least `want` rows of nnum counters. False when the pools have
 * nothing that fits (a pair too small for this header is freed). */
static bool iter_recycle(struct ergon_hpx_parser *p, struct hpx_iter *it, size_t nnum, size_t want)
{
	struct hpx_pool_pair v, d;
	if (!hpx_pool_take(&p->pool_vals, &v))
		return false;
	if (!hpx_pool_take(&p->pool_ids, &d)) {
		if (!hpx_pool_put(&p->pool_vals, v.a, v.a_bytes, v.b, v.b_bytes)) {
			free(v.a);
			free(v.b);
		}
		return false;
	}
	size_t cap = v.a_bytes / ((nnum ? nnum : 1) * sizeof(double));
	if (v.b_bytes < cap)
		cap = v.b_bytes;
	if (d.a_bytes / sizeof(uint32_t) < cap)
		cap = d.a_bytes / sizeof(uint32_t);
	if (d.b_bytes / sizeof(uint32_t) < cap)
		cap = d.b_bytes / sizeof(uint32_t);
	if (cap < want || cap > p->lim.max_layers) {
		free(v.a);
		free(v.b);
		free(d.a);
		free(d.b);
		return false;
	}
	it->vals = v.a;
	it->ovf = v.b;
	it->id_off = d.a;
	it->op_off = d.b;
	it->cap = cap;
	return true;
}

int ergon_hpx_parser_new(const struct ergon_hpx_limits *limits, struct ergon_hpx_parser **out,
			 struct ergon_err *err)
{
	*out = NULL;
	struct ergon_hpx_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return ergon_err_set(err, ERGON_ENOMEM, "hpx: out of memory");
	struct ergon_hpx_limits l = {0};
	if (limits)
		l = *limits;
	if (!l.line_max_bytes)
		l.line_max_bytes = DEF_LINE_MAX;
	if (!l.max_presets)
		l.max_presets = DEF_PRESETS;
	if (!l.max_iterations)
		l.max_iterations = DEF_ITERATIONS;
	if (!l.max_layers)
		l.max_layers = DEF_LAYERS;
	if (!l.max_columns)
		l.max_columns = DEF_COLUMNS;
	if (!l.max_cells)
		l.max_cells = DEF_CELLS;
	if (!l.max_meta_keys)
		l.max_meta_keys = DEF_META;
	if (!l.max_text_bytes)
		l.max_text_bytes = DEF_TEXT;
	p->lim = l;
	p->cur = -1;
	hpx_pool_init(&p->pool_vals);
	hpx_pool_init(&p->pool_ids);
	int rc = hpx_lines_init(&p->lines, l.line_max_bytes, err);
	if (rc)
		goto fail;
	p->scratch = malloc(l.line_max_bytes + 1);
	p->fields = calloc(l.max_columns + 1, sizeof(*p->fields));
	p->fast_vals = calloc(l.max_columns + 1, sizeof(*p->fast_vals));
	p->fast_cap = l.max_columns;
	if (!p->scratch || !p->fields || !p->fast_vals) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "hpx: out of memory");
		goto fail;
	}
	*out = p;
	return 0;
fail:
	ergon_hpx_parser_free(p);
	return rc;
}

static void iter_free(struct hpx_iter *it)
{
	free(it->vals);
	free(it->ovf);
	free(it->id_off);
	free(it->op_off);
	memset(it, 0, sizeof(*it));
}

/* Callers wait for the worker first (early->wait). */
static void preset_clear(struct ergon_hpx_parser *p, struct hpx_preset *ps)
{
	if (ps->sealed && p->early)
		p->early->sealed_free(ps->sealed);
	ps->sealed = NULL;
	hpx_tiles_free(p->spilling ? &p->spill : NULL, ps, true);
	for (size_t i = 0; i < ps->niters; i++)
		iter_free(&ps->iters[i]);
	free(ps->iters);
	for (size_t i = 0; i < ps->nhdrs; i++) {
		free(ps->hdrs[i].text);
		free(ps->hdrs[i].names);
		free(ps->hdrs[i].kind);
		free(ps->hdrs[i].slot);
	}
	free(ps->hdrs);
	free(ps->strs);
	free(ps->pfx);
	char name[sizeof(ps->name)];
	memcpy(name, ps->name, sizeof(name));
	uint64_t line = ps->first_lineno;
	memset(ps, 0, sizeof(*ps));
	memcpy(ps->name, name, sizeof(name));
	ps->first_lineno = line;
	ps->cur_hdr = -1;
}

void ergon_hpx_parser_free(struct ergon_hpx_parser *p)
{
	if (!p)
		return;
	if (p->early) {
		p->early->wait(p);
		p->early->stop(p);
	}
	for (size_t i = 0; i < p->npresets; i++)
		preset_clear(p, &p->presets[i]);
	if (p->spilling)
		hpx_spill_cleanup(&p->spill);
	hpx_pool_free(&p->pool_vals);
	hpx_pool_free(&p->pool_ids);
	free(p->presets);
	for (size_t i = 0; i < p->nmeta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	hpx_lines_cleanup(&p->lines);
	free(p->scratch);
	free(p->fields);
	free(p->fast_vals);
	free(p);
}

void ergon_hpx_parser_stats(const struct ergon_hpx_parser *p, struct ergon_hpx_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->bytes = p->bytes;
	out->lines = p->lines.lineno - 1;
	out->lines_too_long = p->lines.dropped;
	out->heartbeats = p->heartbeats;
	out->parse_errors = p->parse_errors;
	out->started = p->in_session;
	out->ended = p->ended;
	out->terminal_started = p->term.seen_start;
	out->terminal_ended = p->term.complete;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && memcmp(s, prefix, k) == 0;
}

static bool equals(const char *s, size_t n, const char *tok)
{
	size_t k = strlen(tok);
	return n == k && memcmp(s, tok, k) == 0;
}

static bool is_word(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* Record a problem with its line; the first HPX_MAX_NOTED line numbers per
 * kind are kept for the issue context. */
static void note_line(struct hpx_noted *n, uint64_t lineno)
{
	if (n->count < HPX_MAX_NOTED)
		n->lines[n->count] = lineno;
	n->count++;
}

static int fail_cap(struct ergon_hpx_parser *p, int rc, uint64_t lineno, const char *what,
		    size_t cap, struct ergon_err *err)
{
	p->failed = rc;
	if (rc == ERGON_ENOMEM)
		return ergon_err_set(err, rc, "hpx: line %llu: out of memory storing %s",
				     (unsigned long long)lineno, what);
	return ergon_err_set(err, ERGON_ETOOBIG,
			     "hpx: line %llu: more than %zu %s; the stream exceeds the parser's "
			     "cap (raise it in struct ergon_hpx_limits, or check the stream is "
			     "not corrupt)",
			     (unsigned long long)lineno, cap, what);
}

/* --- metadata -------------------------------------------------------------- */

static int meta_set(struct ergon_hpx_parser *p, const char *key, size_t klen, const char *val,
		    size_t vlen, uint64_t lineno, struct ergon_err *err)
{
	if (vlen > META_VALUE_MAX)
		vlen = META_VALUE_MAX; /* a metadata value is short; keep memory bounded */
	char lower[256];
	if (klen >= sizeof(lower))
		klen = sizeof(lower) - 1;
	for (size_t i = 0; i < klen; i++) {
		char c = key[i];
		lower[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	lower[klen] = '\0';
	if (strcmp(lower, "clean_iter") == 0) {
		/* The clean-window trace: the n-th line says n. */
		p->clean_iter_lines++;
		uint64_t v = 0;
		size_t d = 0;
		while (d < vlen && d < 19 && val[d] >= '0' && val[d] <= '9')
			v = v * 10u + (uint64_t)(val[d++] - '0');
		if (d == 0 || d != vlen || v != p->clean_iter_lines) {
			if (p->clean_iter_out_of_seq++ == 0)
				p->clean_iter_first_bad_line = lineno;
		}
	}
	struct hpx_meta *m = NULL;
	for (size_t i = 0; i < p->nmeta; i++) {
		if (strcmp(p->meta[i].key, lower) == 0) {
			m = &p->meta[i];
			break;
		}
	}
	if (!m) {
		int rc = grow((void **)&p->meta, &p->meta_cap, p->nmeta + 1, sizeof(*p->meta),
			      p->lim.max_meta_keys);
		if (rc)
			return fail_cap(p, rc, lineno, "metadata keys", p->lim.max_meta_keys, err);
		m = &p->meta[p->nmeta];
		memset(m, 0, sizeof(*m));
		m->key = strdup(lower);
		if (!m->key)
			return fail_cap(p, ERGON_ENOMEM, lineno, "metadata", 0, err);
		p->nmeta++;
	}
	char *v = malloc(vlen + 1);
	if (!v)
		return fail_cap(p, ERGON_ENOMEM, lineno, "metadata", 0, err);
	memcpy(v, val, vlen);
	v[vlen] = '\0';
	free(m->value);
	m->value = v;
	m->vlen = vlen;
	m->lineno = lineno;
	return 0;
}

const struct hpx_meta *hpx_meta_get(const struct ergon_hpx_parser *p, const char *key)
{
	for (size_t i = 0; i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0)
			return &p->meta[i];
	return NULL;
}

/* --- presets and iterations ------------------------------------------------ */

/* The reference appends the open iteration when the next one starts or the
 * preset ends; here the open iteration is the last element, flagged. An
 * ended preset gets no more rows (a preset seen again is cleared first), so
 * with early aggregation it is aggregated now. */
static void preset_flush(struct ergon_hpx_parser *p, struct hpx_preset *ps)
{
	ps->cur_open = false;
	ps->in_iter = false;
	if (p->spilling)
		hpx_tiles_take(p, ps, true);
	if (p->early)
		p->early->seal(p, ps);
}

static int preset_find_or_add(struct ergon_hpx_parser *p, const char *name, size_t n,
			      uint64_t lineno, struct ergon_err *err)
{
	/* The reference decodes bytes with errors='replace' before comparing
	 * names: do the same, so two garbled names that decode alike are one
	 * preset and every name is valid UTF-8 downstream. */
	char key[sizeof(p->presets[0].name)];
	n = ergon_utf8_repair(name, n, key, sizeof(key) - 1);
	key[n] = '\0';
	for (size_t i = 0; i < p->npresets; i++) {
		if (strcmp(p->presets[i].name, key) == 0) {
			/* A preset seen again replaces the earlier data but keeps its
			 * position (reference behaviour); say so. */
			note_line(&p->dup_preset, lineno);
			if (!p->dup_preset_name[0])
				snprintf(p->dup_preset_name, sizeof(p->dup_preset_name), "%s", key);
			if (p->early)
				p->early->wait(p);
			preset_clear(p, &p->presets[i]);
			p->cur = (long)i;
			return 0;
		}
	}
	int rc = grow((void **)&p->presets, &p->presets_cap, p->npresets + 1, sizeof(*p->presets),
		      p->lim.max_presets);
	if (rc)
		return fail_cap(p, rc, lineno, "presets", p->lim.max_presets, err);
	struct hpx_preset *ps = &p->presets[p->npresets];
	memset(ps, 0, sizeof(*ps));
	memcpy(ps->name, key, n + 1);
	ps->cur_hdr = -1;
	ps->first_lineno = lineno;
	p->cur = (long)p->npresets;
	p->npresets++;
	return 0;
}

static int iter_start(struct ergon_hpx_parser *p, uint64_t iter_no, uint64_t lineno,
		      struct ergon_err *err)
{
	struct hpx_preset *ps = &p->presets[p->cur];
	int rc = grow((void **)&ps->iters, &ps->iters_cap, ps->niters + 1, sizeof(*ps->iters),
		      p->lim.max_iterations);
	if (rc)
		return fail_cap(p, rc, lineno, "iterations in one preset", p->lim.max_iterations,
				err);
	if (ps->niters && iter_no <= ps->last_iter_no) {
		note_line(&p->iter_order, lineno);
	}
	ps->last_iter_no = iter_no;
	/* The previous iteration's row count is the best guess for this one:
	 * allocate it once instead of doubling from 16. */
	size_t hint = ps->niters ? ps->iters[ps->niters - 1].nrows : 0;
	struct hpx_iter *it = &ps->iters[ps->niters++];
	memset(it, 0, sizeof(*it));
	it->cap_hint = hint;
	it->hdr = -1;
	it->lineno = lineno;
	ps->cur_open = true;
	ps->in_iter = true;
	ps->cur_hdr = -1; /* the first CSV line of every iteration is its header */
	if (p->spilling)
		hpx_tiles_take(p, ps, false);
	return 0;
}

/* --- CSV ------------------------------------------------------------------- */

/* Python csv (excel dialect, strict off) on one line: fields are unquoted
 * into p->scratch. Returns the field count (fields beyond max_columns are
 * counted, not stored), or -1 when the row holds a NUL or a bare CR outside
 * quotes (the reference's csv module raises on both; ergon counts the row as
 * a parse error instead, see docs/PROTOCOL.md). Only the first record is
 * read when first_only is set (the header). */
static long csv_split(struct ergon_hpx_parser *p, const char *s, size_t n, bool first_only)
{
	size_t maxf = p->lim.max_columns + 1;
	/* Fast path, the firmware's rows: no quote, CR or NUL, so the fields
	 * are the bytes between commas and stay in the line itself. One pass
	 * finds the commas and bails out to the full state machine on the
	 * first special byte. */
	{
		size_t nf = 0, start = 0, i = 0;
		for (; i < n; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c > ',')
				continue;
			if (c == ',') {
				if (nf < maxf) {
					p->fields[nf].off = start;
					p->fields[nf].len = i - start;
				}
				nf++;
				start = i + 1;
			} else if (c == '"' || c == '\r' || c == '\0') {
				break;
			}
		}
		if (i == n) {
			if (nf < maxf) {
				p->fields[nf].off = start;
				p->fields[nf].len = n - start;
			}
			p->field_base = s;
			return (long)(nf + 1);
		}
	}
	p->field_base = p->scratch;
	enum { START, FIELD, QUOTED, QUOTE_IN_QUOTED } st = START;
	char *out = p->scratch;
	size_t o = 0, fstart = 0;
	size_t nf = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\0')
			return -1;
		switch (st) {
		case START:
		case FIELD:
			if (c == ',') {
				if (nf < maxf) {
					p->fields[nf].off = fstart;
					p->fields[nf].len = o - fstart;
				}
				nf++;
				fstart = o;
				st = START;
			} else if (c == '\r') {
				if (first_only)
					goto done;
				return -1;
			} else if (st == START && c == '"') {
				st = QUOTED;
			} else {
				out[o++] = c;
				st = FIELD;
			}
			break;
		case QUOTED:
			if (c == '"')
				st = QUOTE_IN_QUOTED;
			else
				out[o++] = c;
			break;
		case QUOTE_IN_QUOTED:
			if (c == '"') {
				out[o++] = '"';
				st = QUOTED;
			} else if (c == ',') {
				if (nf < maxf) {
					p->fields[nf].off = fstart;
					p->fields[nf].len = o - fstart;
				}
				nf++;
				fstart = o;
				st = START;
			} else if (c == '\r') {
				if (first_only)
					goto done;
				return -1;
			} else {
				out[o++] = c;
				st = FIELD;
			}
			break;
		}
	}
done:
	if (nf < maxf) {
		p->fields[nf].off = fstart;
		p->fields[nf].len = o - fstart;
	}
	nf++;
	return (long)nf;
}

static int col_kind(const char *s, size_t n)
{
	if (equals(s, n, "Layer"))
		return HPX_COL_LAYER;
	if (equals(s, n, "Op"))
		return HPX_COL_OP;
	if (equals(s, n, "tag"))
		return HPX_COL_TAG;
	if (equals(s, n, "name"))
		return HPX_COL_NAME;
	if (equals(s, n, "overflow"))
		return HPX_COL_OVERFLOW;
	return HPX_COL_NUM;
}

static int header_set(struct ergon_hpx_parser *p, struct hpx_preset *ps, const char *line, size_t n,
		      uint64_t lineno, struct ergon_err *err)
{
	/* Iterations repeat the same header: reuse a known one (the last one
	 * first, the usual case). */
	for (size_t k = ps->nhdrs; k-- > 0;) {
		const struct hpx_header *known = &ps->hdrs[k];
		if (known->text_len == n && memcmp(known->text, line, n) == 0) {
			ps->cur_hdr = (long)k;
			ps->iters[ps->niters - 1].hdr = ps->cur_hdr;
			return 0;
		}
	}
	long nf = csv_split(p, line, n, true);
	if (nf < 0)
		nf = 0;
	if ((size_t)nf > p->lim.max_columns)
		return fail_cap(p, ERGON_ETOOBIG, lineno, "CSV columns", p->lim.max_columns, err);
	/* Distinct headers in one preset: a real stream has one; a garbled
	 * one a few. The cap keeps their memory bounded. */
	int rc = grow((void **)&ps->hdrs, &ps->hdrs_cap, ps->nhdrs + 1, sizeof(*ps->hdrs),
		      HPX_MAX_HEADERS);
	if (rc)
		return fail_cap(p, rc, lineno, "distinct CSV headers in one preset",
				HPX_MAX_HEADERS, err);
	struct hpx_header *h = &ps->hdrs[ps->nhdrs];
	memset(h, 0, sizeof(*h));
	size_t ncols = (size_t)nf;
	/* Names: each field stripped of whitespace, then of '"' at both ends. */
	size_t total = 0;
	for (size_t i = 0; i < ncols; i++)
		total += p->fields[i].len + 1;
	h->text = malloc(n + 1 + total);
	h->names = calloc(ncols ? ncols : 1, sizeof(*h->names));
	h->kind = calloc(ncols ? ncols : 1, sizeof(*h->kind));
	h->slot = calloc(ncols ? ncols : 1, sizeof(*h->slot));
	if (!h->text || !h->names || !h->kind || !h->slot) {
		free(h->text);
		free(h->names);
		free(h->kind);
		free(h->slot);
		return fail_cap(p, ERGON_ENOMEM, lineno, "a header", 0, err);
	}
	memcpy(h->text, line, n);
	h->text[n] = '\0';
	h->text_len = n;
	char *names = h->text + n + 1;
	size_t o = 0;
	h->col_layer = h->col_op = h->col_tag = h->col_ovf = -1;
	for (size_t i = 0; i < ncols; i++) {
		const char *f = p->field_base + p->fields[i].off;
		size_t fl = p->fields[i].len;
		hpx_strip(&f, &fl);
		while (fl && f[0] == '"') {
			f++;
			fl--;
		}
		while (fl && f[fl - 1] == '"')
			fl--;
		memcpy(names + o, f, fl);
		names[o + fl] = '\0';
		h->names[i].off = (size_t)(names + o - h->text);
		h->names[i].len = fl;
		o += fl + 1;
		int k = col_kind(f, fl);
		h->kind[i] = (uint8_t)k;
		if (k == HPX_COL_NUM)
			h->slot[i] = h->nnum++;
		else
			h->slot[i] = SIZE_MAX;
		/* The reference stores a row as a dict, so the last column of a
		 * name wins. */
		if (k == HPX_COL_LAYER)
			h->col_layer = (long)i;
		else if (k == HPX_COL_OP)
			h->col_op = (long)i;
		else if (k == HPX_COL_TAG)
			h->col_tag = (long)i;
		else if (k == HPX_COL_OVERFLOW)
			h->col_ovf = (long)i;
	}
	h->ncols = ncols;
	long col_text = h->col_op >= 0 ? h->col_op : h->col_tag;
	h->pfx_plan = ncols >= 3 && h->col_layer == 0 && col_text == 1 &&
		      ncols == 2 + h->nnum + (h->col_ovf >= 0) &&
		      (h->col_ovf < 0 || (size_t)h->col_ovf == ncols - 1);
	for (size_t i = 2; h->pfx_plan && i < 2 + h->nnum; i++)
		h->pfx_plan = h->kind[i] == HPX_COL_NUM;
	ps->nhdrs++;
	ps->cur_hdr = (long)(ps->nhdrs - 1);
	ps->iters[ps->niters - 1].hdr = ps->cur_hdr;
	return 0;
}

/* Word-at-a-time scanning for row_fast, on little-endian hosts (the byte
 * at the lowest address is the word's lowest byte). Each helper is exact up
 * to and including the first byte it flags: carries and borrows between
 * bytes only run upward, from a byte that is itself flagged. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HPX_SWAR 1
static inline uint64_t load8(const char *s)
{
	uint64_t x;
	memcpy(&x, s, sizeof(x));
	return x;
}

/* Nonzero bytes where x is not an ASCII digit: a digit's high nibble is 3,
 * and stays 3 after adding 6. */
static inline uint64_t nondigits(uint64_t x)
{
	uint64_t hi = (x & 0xF0F0F0F0F0F0F0F0u) ^ 0x3030303030303030u;
	uint64_t lo = ((x + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) ^ 0x3030303030303030u;
	return hi | lo;
}

/* The value of the first k (1..8) bytes of x, all ASCII digits (fast_float's
 * eight-digit reduction, after moving the k digits to the top so that the
 * bytes below read as leading zeros). */
static inline uint64_t digits_value(uint64_t x, unsigned k)
{
	x -= 0x3030303030303030u;
	x <<= 8u * (8u - k);
	x = x * 10u + (x >> 8);
	x = (((x & 0x000000FF000000FFu) * (100u + (1000000ull << 32))) +
	     (((x >> 16) & 0x000000FF000000FFu) * (1u + (10000ull << 32)))) >>
	    32;
	return (uint32_t)x;
}

/* The 0x80 bit set in bytes below ',' + 1 (0x2D): ',', '"', CR, NUL and the
 * other bytes a text cell rarely holds. */
static inline uint64_t below_comma(uint64_t x)
{
	return (x - 0x2D2D2D2D2D2D2D2Du) & ~x & 0x8080808080808080u;
}

static const uint64_t pow10_u64[9] = {1,      10,      100,	 1000,	   10000,
				      100000, 1000000, 10000000, 100000000};
#endif

/* Out of line: new text is rare once the first iteration is stored. */
static __attribute__((noinline)) int str_add(struct ergon_hpx_parser *p, struct hpx_preset *ps,
					     const char *s, size_t n, uint32_t *off,
					     uint64_t lineno, struct ergon_err *err)
{
	/* Layer and Op text shared across iterations is stored once; what is
	 * new counts against max_text_bytes over the whole stream. */
	if (p->text_bytes + n + 1 > p->lim.max_text_bytes)
		return fail_cap(p, ERGON_ETOOBIG, lineno, "bytes of Layer/Op text",
				p->lim.max_text_bytes, err);
	int rc = grow((void **)&ps->strs, &ps->strs_cap, ps->strs_len + n + 1, 1, UINT32_MAX);
	if (rc)
		return fail_cap(p, rc, lineno, "bytes of Layer/Op text", UINT32_MAX, err);
	p->text_bytes += n + 1;
	memcpy(ps->strs + ps->strs_len, s, n);
	ps->strs[ps->strs_len + n] = '\0';
	*off = (uint32_t)ps->strs_len;
	ps->strs_len += n + 1;
	return 0;
}

/* The n bytes at q and s are equal; s_avail and q_avail (>= n) bytes are
 * readable there. Short text (the usual Layer and Op cells) is compared a
 * word at a time, inline: words inside [0, n) (the last one overlapping
 * the one before), or for n < 8 one masked word where both have 8 bytes. */
static inline bool text_eq(const char *q, const char *s, size_t n, size_t s_avail, size_t q_avail)
{
#ifdef HPX_SWAR
	if (n < 8) {
		if (s_avail < 8 || q_avail < 8)
			return memcmp(q, s, n) == 0;
		uint64_t mask = n ? UINT64_MAX >> (64u - 8u * (unsigned)n) : 0;
		return ((load8(q) ^ load8(s)) & mask) == 0;
	}
	if (n <= 32) {
		uint64_t d = load8(q + n - 8) ^ load8(s + n - 8);
		for (size_t k = 0; k + 8 < n; k += 8)
			d |= load8(q + k) ^ load8(s + k);
		return d == 0;
	}
#else
	(void)s_avail;
	(void)q_avail;
#endif
	return memcmp(q, s, n) == 0;
}

/* nul_free: s is known to hold no NUL (row_fast refused rows with one);
 * s_avail (>= n) bytes are readable at s. */
static inline int str_intern(struct ergon_hpx_parser *p, struct hpx_preset *ps,
			     const uint32_t *prev_offs, size_t r, const char *s, size_t n,
			     size_t s_avail, bool nul_free, uint32_t *off, uint64_t lineno,
			     struct ergon_err *err)
{
	if (prev_offs && prev_offs[r] != UINT32_MAX) {
		const char *q = ps->strs + prev_offs[r];
		/* The same text as before: q holds s and ends there. Where the
		 * arena holds n bytes after q, memcmp may read past q's NUL into
		 * the next string (still inside the arena): a shorter q differs
		 * at its NUL, since s has none (checked first). */
		bool same;
		if (!nul_free && memchr(s, '\0', n) != NULL)
			same = false;
		else if ((size_t)prev_offs[r] + n < ps->strs_len)
			same =
			    text_eq(q, s, n, s_avail, ps->strs_len - prev_offs[r]) && q[n] == '\0';
		else
			same = strncmp(q, s, n) == 0 && q[n] == '\0';
		if (same) {
			*off = prev_offs[r];
			return 0;
		}
	}
	return str_add(p, ps, s, n, off, lineno, err);
}

/* The unsigned decimal counter (1 to 18 digits) at *cp, which ends at the
 * first byte that is not a digit, or at e; line (the row's start, from
 * which 8 bytes are readable when the row has them) is at or before *cp.
 * True with *out and *cp past the digits; false for no digit or more than
 * 18 (the general path reads long numbers). */
static inline bool num_cell(const char **cp, const char *e, const char *line, uint64_t *out)
{
	const char *c = *cp;
	uint64_t v = 0;
	size_t digits = 0;
	(void)line; /* read by the word-at-a-time path only */
#ifdef HPX_SWAR
	if (e - c >= 8) {
		/* The usual counter: under 8 digits, then a byte that is not
		 * one, all in the first word. */
		uint64_t x = load8(c);
		uint64_t nd = nondigits(x);
		if (nd) {
			unsigned k = (unsigned)__builtin_ctzll(nd) / 8u;
			if (k == 0)
				return false;
			*out = digits_value(x, k);
			*cp = c + k;
			return true;
		}
	}
	/* Eight bytes at a time while the line has them: no branch
	 * per digit, so the varying lengths cost no mispredictions.
	 * The byte loop below finishes a number the words did not. */
	bool bytewise = true;
	while (e - c >= 8) {
		uint64_t x = load8(c);
		uint64_t nd = nondigits(x);
		unsigned k = nd ? (unsigned)__builtin_ctzll(nd) / 8u : 8u;
		if (digits + k > 18)
			return false; /* the general path reads long numbers */
		if (k) {
			v = v * pow10_u64[k] + digits_value(x, k);
			digits += k;
			c += k;
		}
		if (k < 8) {
			bytewise = false; /* at the first non-digit */
			break;
		}
	}
	if (digits >= 18)
		bytewise = false;
	if (bytewise && c < e && e - line >= 8) {
		/* Under 8 bytes left (the last counter): the line's
		 * last word, shifted so that they are its low bytes;
		 * the zeros above them are non-digits. */
		unsigned rem = (unsigned)(e - c);
		uint64_t x = load8(e - 8) >> (8u * (8u - rem));
		unsigned k = (unsigned)__builtin_ctzll(nondigits(x)) / 8u;
		if (digits + k > 18)
			return false;
		if (k) {
			v = v * pow10_u64[k] + digits_value(x, k);
			digits += k;
			c += k;
		}
		bytewise = false;
	}
	if (bytewise)
#endif
		while (c < e && (unsigned char)(*c - '0') < 10 && digits < 18) {
			v = v * 10u + (uint64_t)(*c - '0');
			c++;
			digits++;
		}
	if (digits == 0)
		return false;
	*cp = c;
	*out = v;
	return true;
}

/* One pass over a row made only of unsigned decimal counters (up to 18
 * digits) and text cells without quotes, CR or NUL. Fills p->fields (with
 * p->field_base left NULL to say "fast") and dst[slot] (nnum doubles: the
 * row's place in the iteration, or p->fast_vals); returns false when the
 * row needs the general path (dst then holds some of its counters). */
static bool row_fast(struct ergon_hpx_parser *p, const struct hpx_header *h, const char *line,
		     size_t n, double *dst)
{
	const char *c = line, *e = line + n;
	if (h->ncols > p->lim.max_columns || h->nnum > p->fast_cap)
		return false;
	for (size_t i = 0; i < h->ncols; i++) {
		const char *fs = c;
		if (h->kind[i] == HPX_COL_NUM) {
			uint64_t v;
			if (!num_cell(&c, e, line, &v) || (c < e && *c != ','))
				return false;
			/* v < 10^18 < 2^63: the signed conversion is exact and
			 * one instruction. */
			dst[h->slot[i]] = (double)(int64_t)v;
		} else {
#ifdef HPX_SWAR
			while (e - c >= 8) {
				uint64_t t = below_comma(load8(c));
				if (t) {
					c += __builtin_ctzll(t) / 8;
					break;
				}
				c += 8;
			}
			if (c < e && e - c < 8 && e - line >= 8) {
				/* As above: the last word, shifted; a zero byte is
				 * below ',' too, so t flags at the latest at e. */
				unsigned rem = (unsigned)(e - c);
				uint64_t t = below_comma(load8(e - 8) >> (8u * (8u - rem)));
				c += __builtin_ctzll(t) / 8;
			}
#endif
			while (c < e && *c != ',') {
				unsigned char b = (unsigned char)*c;
				if (b == '"' || b == '\r' || b == '\0')
					return false;
				c++;
			}
		}
		if (h->kind[i] != HPX_COL_NUM) {
			/* row_add reads only the text cells' fields */
			p->fields[i].off = (size_t)(fs - line);
			p->fields[i].len = (size_t)(c - fs);
		}
		if (i + 1 < h->ncols) {
			if (c >= e)
				return false;
			c++; /* the comma */
		} else if (c != e) {
			return false;
		}
	}
	p->field_base = NULL;
	return true;
}

#if defined(HPX_SWAR) && defined(__SSE2__) && !defined(ERGON_NO_SIMD)
#include <emmintrin.h>

/* The digits of a counter cell of len (1..8) bytes at s, ending at or
 * before e, with line (>= 8 bytes) starting at or before e - 8: true and
 * *v when all are digits. A cell near the end is read from the line's last
 * word, shifted down. */
static inline bool cell_digits8(const char *s, size_t len, const char *e, uint64_t *v)
{
	uint64_t x;
	if (e - s >= 8)
		x = load8(s);
	else
		x = load8(e - 8) >> (8u * (8u - (unsigned)(e - s)));
	uint64_t nd = nondigits(x);
	if (len < 8)
		nd &= UINT64_MAX >> (64u - 8u * (unsigned)len);
	if (nd)
		return false;
	*v = digits_value(x, (unsigned)len);
	return true;
}

/* row_fast for lines of 16 to 64 bytes, from the positions of their commas
 * (16 bytes at a time with SSE2) instead of a scan per cell. It accepts a
 * subset of what row_fast accepts (counters of up to 16 digits) and stores
 * the same values and text fields; false: row_fast decides. */
static bool row_fast_commas(struct ergon_hpx_parser *p, const struct hpx_header *h,
			    const char *line, size_t n, double *dst)
{
	if (n < 16 || n > 64 || h->ncols > p->lim.max_columns || h->nnum > p->fast_cap)
		return false;
	const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"');
	const __m128i cr = _mm_set1_epi8('\r'), zero = _mm_setzero_si128();
	uint64_t m = 0;
	unsigned special = 0;
	for (size_t off = 0; off < n; off += 16) {
		/* the last block overlaps the one before (same bytes, same bits) */
		size_t b = off + 16 <= n ? off : n - 16;
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(line + b));
		m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, comma)) << b;
		special |= (unsigned)_mm_movemask_epi8(
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, cr)),
				 _mm_cmpeq_epi8(x, zero)));
	}
	if (special)
		return false;
	const char *e = line + n;
	size_t start = 0;
	for (size_t i = 0; i < h->ncols; i++) {
		/* one comma after every cell but the last, none after it */
		size_t end = n;
		if (i + 1 < h->ncols) {
			if (!m)
				return false;
			end = (size_t)__builtin_ctzll(m);
			m &= m - 1;
		} else if (m) {
			return false;
		}
		size_t len = end - start;
		const char *c = line + start;
		if (h->kind[i] == HPX_COL_NUM) {
			uint64_t v, lo;
			if (len == 0 || len > 16)
				return false;
			if (len <= 8) {
				if (!cell_digits8(c, len, e, &v))
					return false;
			} else {
				if (!cell_digits8(c, 8, e, &v) ||
				    !cell_digits8(c + 8, len - 8, e, &lo))
					return false;
				v = v * pow10_u64[len - 8] + lo;
			}
			dst[h->slot[i]] = (double)(int64_t)v;
		} else {
			p->fields[i].off = start;
			p->fields[i].len = len;
		}
		start = end + 1;
	}
	p->field_base = NULL;
	return true;
}
#endif

/* Stripped as str.strip() would: everything it strips is <= 0x20 or
 * starts a multi-byte character (>= 0x80), so a cell that begins and ends
 * with other bytes (cell_plain) has nothing to strip. */
static inline bool cell_plain(const char *f, size_t fl)
{
	return fl != 0 && (unsigned char)(f[0] - 0x21) < 0x5f &&
	       (unsigned char)(f[fl - 1] - 0x21) < 0x5f;
}

static inline void cell_strip(const char **f, size_t *fl)
{
	if (!cell_plain(*f, *fl))
		hpx_strip(f, fl);
}

/* The overflow flag of a cell: set unless the cell is the integer 0 (the
 * firmware's plain "0" needs no number parser). */
static inline uint8_t ovf_of(const char *f, size_t fl)
{
	double d;
	return !((fl == 1 && f[0] == '0') || (hpx_py_int(f, fl, &d, NULL, NULL) && d == 0.0));
}

#ifdef HPX_SWAR
/* A row of a pfx_plan header that starts with the bytes pf holds (row r
 * of the previous iteration, "Layer,Op,"): its cells after them, which are
 * counters and the overflow cell, into dst and *ovf, and true; its Layer
 * and Op cells are pf's, not split, stripped or compared again. The same
 * values as row_fast: every counter 1 to 18 digits, one comma between
 * cells, an overflow cell (stripped, then read as ovf_of reads it) without
 * a comma, quote, CR or NUL. False: the row goes the usual way (dst may
 * then hold some of its counters). */
static inline bool row_repeat(const struct hpx_header *h, const struct hpx_pfx *pf,
			      const char *line, size_t n, double *dst, uint8_t *ovf)
{
	size_t plen = pf->len; /* 4 to HPX_PFX_MAX */
	if (n < 8 || n <= plen)
		return false;
	uint64_t d;
	if (plen <= 8) {
		d = (load8(line) ^ load8(pf->bytes)) & (UINT64_MAX >> (64u - 8u * (unsigned)plen));
	} else {
		/* words from the start, and the one ending at plen */
		d = (load8(line) ^ load8(pf->bytes)) |
		    (load8(line + plen - 8) ^ load8(pf->bytes + plen - 8));
		if (plen > 16)
			d |= load8(line + 8) ^ load8(pf->bytes + 8);
		if (plen > 24)
			d |= load8(line + 16) ^ load8(pf->bytes + 16);
	}
	if (d)
		return false;
	const char *c = line + plen, *e = line + n;
	/* The counters are columns 2.. in order, so slot i is the i-th. */
	size_t nnum = h->nnum, last = h->col_ovf < 0 ? nnum - 1 : SIZE_MAX;
	for (size_t i = 0; i < nnum; i++) {
		uint64_t v;
		if (!num_cell(&c, e, line, &v))
			return false;
		if (i == last) {
			if (c != e)
				return false;
		} else {
			if (c >= e || *c != ',')
				return false;
			c++;
		}
		dst[i] = (double)(int64_t)v;
	}
	*ovf = 0;
	if (h->col_ovf >= 0) {
		if (e - c == 1 && *c == '0')
			return true; /* the firmware's own "0" */
		const char *f = c;
		size_t fl = (size_t)(e - c);
		for (const char *q = c; q < e; q++) {
			unsigned char b = (unsigned char)*q;
			if (b == ',' || b == '"' || b == '\r' || b == '\0')
				return false;
		}
		cell_strip(&f, &fl);
		*ovf = ovf_of(f, fl);
	}
	return true;
}
#endif

/* After row r of the current iteration (index iter) is stored: pf (its
 * entry) describes it when the row was split by row_fast* under a pfx_plan
 * header and its Layer and Op cells needed no stripping (so that its first
 * bytes are "Layer,Op," exactly as stored); else it describes nothing. */
static void pfx_note(struct ergon_hpx_parser *p, struct hpx_preset *ps, const struct hpx_header *h,
		     const struct hpx_iter *it, size_t r, uint64_t iter, const char *line,
		     bool fast)
{
	if (r >= ps->pfx_cap) {
		if (!h->pfx_plan || !fast)
			return; /* nothing there to forget */
		size_t old = ps->pfx_cap;
		if (grow((void **)&ps->pfx, &ps->pfx_cap, r + 1, sizeof(*ps->pfx),
			 p->lim.max_layers ? p->lim.max_layers : 1))
			return; /* no room: rows go the usual way */
		memset(ps->pfx + old, 0, (ps->pfx_cap - old) * sizeof(*ps->pfx));
	}
	struct hpx_pfx *pf = &ps->pfx[r];
	pf->len = 0;
	if (!h->pfx_plan || !fast || it->id_off[r] == UINT32_MAX || it->op_off[r] == UINT32_MAX)
		return;
	const struct hpx_span *a = &p->fields[0], *b = &p->fields[1];
	size_t plen = b->off + b->len + 1;
	if (a->off != 0 || b->off != a->len + 1 || plen > HPX_PFX_MAX || plen < 4)
		return;
	if (!cell_plain(line + a->off, a->len) || !cell_plain(line + b->off, b->len))
		return; /* cell_strip would change them */
	memset(pf->bytes, 0, sizeof(pf->bytes));
	memcpy(pf->bytes, line, plen);
	pf->id_off = it->id_off[r];
	pf->op_off = it->op_off[r];
	pf->iter = iter;
	pf->len = (uint32_t)plen;
}

static int row_add(struct ergon_hpx_parser *p, struct hpx_preset *ps, const char *line, size_t n,
		   uint64_t lineno, struct ergon_err *err)
{
	struct hpx_header *h = &ps->hdrs[ps->cur_hdr];
	struct hpx_iter *it = &ps->iters[ps->niters - 1];
	size_t r = it->nrows;
	/* Fast path for the firmware's own rows: unsigned decimal counters and
	 * plain text cells, split and converted in one pass, the counters
	 * straight into the row's place when the iteration has room for it
	 * (else into fast_vals, copied once the row is stored). Anything else
	 * goes through the general CSV and number parsing below. */
	double *dst = r < it->cap ? it->vals + r * h->nnum : p->fast_vals;
	uint64_t iter = ps->niters - 1;
	/* The same Layer and Op as row r of the previous iteration (the rule:
	 * a model's layers repeat every iteration): only the counters are
	 * read (row_repeat). */
	struct hpx_pfx *pf = NULL;
	uint8_t rep_ovf = 0;
	bool repeat = false;
#ifdef HPX_SWAR
	if (r < ps->pfx_cap && ps->pfx[r].len && ps->pfx[r].iter + 1 == iter && h->pfx_plan &&
	    h->nnum <= p->fast_cap) {
		pf = &ps->pfx[r];
		repeat = row_repeat(h, pf, line, n, dst, &rep_ovf);
		if (repeat)
			p->field_base = NULL;
	}
#endif
#if defined(HPX_SWAR) && defined(__SSE2__) && !defined(ERGON_NO_SIMD)
	bool fast_row = repeat || row_fast_commas(p, h, line, n, dst) ||
			row_fast(p, h, line, n, dst);
#else
	bool fast_row = repeat || row_fast(p, h, line, n, dst);
#endif
	long nf = fast_row ? (long)h->ncols : csv_split(p, line, n, false);
	bool fast = p->field_base == NULL;
	if (fast)
		p->field_base = line;
	if (nf < 0 || (size_t)nf != h->ncols) {
		p->parse_errors++;
		ps->parse_errors++;
		note_line(&p->bad_rows, lineno);
		if (nf >= 0 && !p->bad_rows_detail[0])
			snprintf(p->bad_rows_detail, sizeof(p->bad_rows_detail),
				 "expected %zu fields, got %ld", h->ncols, nf);
		return 0;
	}
	if (it->nrows + 1 > p->lim.max_layers)
		return fail_cap(p, ERGON_ETOOBIG, lineno, "layers in one iteration",
				p->lim.max_layers, err);
	if (p->cells + h->nnum + 1 > p->lim.max_cells)
		return fail_cap(p, ERGON_ETOOBIG, lineno, "stored counter cells", p->lim.max_cells,
				err);
	size_t need = it->nrows + 1;
	if (need > it->cap) {
		size_t ncap = it->cap ? it->cap * 2 : (it->cap_hint > 16 ? it->cap_hint : 16);
		if (ncap > p->lim.max_layers)
			ncap = p->lim.max_layers;
		/* With a spill, a fresh iteration takes the buffers of one the
		 * worker has written (warm memory, no allocation). */
		if (it->cap == 0 && p->spilling && iter_recycle(p, it, h->nnum, ncap))
			goto stored;
		double *v = realloc(it->vals, ncap * (h->nnum ? h->nnum : 1) * sizeof(double));
		if (v)
			it->vals = v;
		uint8_t *o = realloc(it->ovf, ncap);
		if (o)
			it->ovf = o;
		uint32_t *a = realloc(it->id_off, ncap * sizeof(uint32_t));
		if (a)
			it->id_off = a;
		uint32_t *b = realloc(it->op_off, ncap * sizeof(uint32_t));
		if (b)
			it->op_off = b;
		if (!v || !o || !a || !b)
			return fail_cap(p, ERGON_ENOMEM, lineno, "samples", 0, err);
		it->cap = ncap;
	}
stored:;
	double *vals = it->vals + r * h->nnum;
	if (repeat) {
		/* what str_intern gives for the previous row's text */
		if (dst != vals && h->nnum)
			memcpy(vals, dst, h->nnum * sizeof(double));
		it->ovf[r] = rep_ovf;
		it->id_off[r] = pf->id_off;
		it->op_off[r] = pf->op_off;
		pf->iter = iter;
		p->cells += h->nnum + 1;
		it->nrows++;
		return 0;
	}
	/* The same row of the previous iteration, whose Layer/Op text is almost
	 * always identical: shared instead of stored again. */
	const struct hpx_iter *prev = ps->niters >= 2 && ps->iters[ps->niters - 2].nrows > r
					  ? &ps->iters[ps->niters - 2]
					  : NULL;
	it->ovf[r] = 0;
	it->id_off[r] = UINT32_MAX;
	it->op_off[r] = UINT32_MAX;
	long col_text = h->col_op >= 0 ? h->col_op : h->col_tag;
	if (fast) {
		/* Every counter is in dst; of the text cells only the overflow,
		 * Layer and Op (else tag) columns are read (distinct kinds, so
		 * distinct columns). */
		if (dst != vals && h->nnum)
			memcpy(vals, dst, h->nnum * sizeof(double));
		const char *end = line + n;
		if (h->col_ovf >= 0) {
			const char *f = line + p->fields[h->col_ovf].off;
			size_t fl = p->fields[h->col_ovf].len;
			cell_strip(&f, &fl);
			it->ovf[r] = ovf_of(f, fl);
		}
		long cols[2] = {h->col_layer, col_text};
		if (col_text >= 0 && col_text < h->col_layer) {
			cols[0] = col_text; /* column order, as the general path */
			cols[1] = h->col_layer;
		}
		for (int k = 0; k < 2; k++) {
			if (cols[k] < 0)
				continue;
			const char *f = line + p->fields[cols[k]].off;
			size_t fl = p->fields[cols[k]].len;
			cell_strip(&f, &fl);
			bool is_id = cols[k] == h->col_layer;
			const uint32_t *po = prev ? (is_id ? prev->id_off : prev->op_off) : NULL;
			int rc = str_intern(p, ps, po, r, f, fl, (size_t)(end - f), true,
					    is_id ? &it->id_off[r] : &it->op_off[r], lineno, err);
			if (rc)
				return rc;
		}
		pfx_note(p, ps, h, it, r, iter, line, true);
		p->cells += h->nnum + 1;
		it->nrows++;
		return 0;
	}
	pfx_note(p, ps, h, it, r, iter, line, false);
	for (size_t i = 0; i < h->ncols; i++) {
		const char *f = p->field_base + p->fields[i].off;
		size_t fl = p->fields[i].len;
		cell_strip(&f, &fl);
		if (h->kind[i] == HPX_COL_NUM) {
			double d;
			if (!hpx_py_int(f, fl, &d, NULL, NULL) && !hpx_py_float(f, fl, &d)) {
				d = NAN; /* None: left out of aggregation */
				p->parse_errors++;
				ps->parse_errors++;
				note_line(&p->bad_cells, lineno);
			} else if (d < 0.0) {
				/* A u32 counter cannot be negative: the value is kept
				 * (the reference aggregates it) but flagged. */
				note_line(&p->neg_cells, lineno);
			}
			vals[h->slot[i]] = d;
			continue;
		}
		if ((long)i == h->col_ovf) {
			it->ovf[r] = ovf_of(f, fl);
		} else if ((long)i == h->col_layer) {
			int rc = str_intern(p, ps, prev ? prev->id_off : NULL, r, f, fl, fl, false,
					    &it->id_off[r], lineno, err);
			if (rc)
				return rc;
		} else if ((long)i == col_text) {
			int rc = str_intern(p, ps, prev ? prev->op_off : NULL, r, f, fl, fl, false,
					    &it->op_off[r], lineno, err);
			if (rc)
				return rc;
		}
	}
	p->cells += h->nnum + 1;
	it->nrows++;
	return 0;
}

/* --- the line machine ------------------------------------------------------ */

/* `HPX_HEARTBEAT rtt_dropped bytes=N`: true when s is one (noted, N
 * summed; a malformed N is noted with 0 bytes: a drop is never silent). */
static bool drop_report(struct ergon_hpx_parser *p, const char *s, size_t n, uint64_t lineno)
{
	static const char head[] = HPX_TOK_HEARTBEAT " " HPX_HB_RTT_DROPPED;
	static const char key[] = " " HPX_HB_KEY_BYTES "=";
	size_t hl = sizeof head - 1, kl = sizeof key - 1;
	if (n < hl || memcmp(s, head, hl) != 0 || (n > hl && !is_space((unsigned char)s[hl])))
		return false;
	note_line(&p->target_drops, lineno);
	if (n > hl + kl && memcmp(s + hl, key, kl) == 0) {
		const char *v = s + hl + kl;
		size_t vl = 0;
		while (hl + kl + vl < n && !is_space((unsigned char)v[vl]))
			vl++;
		double d;
		int64_t iv;
		bool fits = false;
		if (hpx_py_int(v, vl, &d, &iv, &fits) && fits && iv > 0 &&
		    p->target_dropped_bytes + (uint64_t)iv >= p->target_dropped_bytes)
			p->target_dropped_bytes += (uint64_t)iv;
	}
	return true;
}

static void heartbeat(struct ergon_hpx_parser *p, const char *s, size_t n, uint64_t lineno)
{
	p->heartbeats++;
	if (drop_report(p, s, n, lineno))
		return;
	/* `HPX_HEARTBEAT phase=clean_window_begin iters=N`: N is the fallback
	 * clean-inference count. The bare `HPX_HEARTBEAT clean_window_begin`
	 * form of the wire registry is accepted too. */
	const char *ph = NULL;
	size_t k = strlen(HPX_HB_CLEAN_WINDOW_BEGIN);
	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp(s + i, HPX_HB_CLEAN_WINDOW_BEGIN, k) == 0 &&
		    (i + k == n || is_space((unsigned char)s[i + k]))) {
			ph = s + i + k;
			break;
		}
	}
	if (!ph)
		return;
	const char *end = s + n;
	const char *key = HPX_HB_KEY_ITERS "=";
	size_t kl = strlen(key);
	for (const char *q = ph; q + kl <= end; q++) {
		if ((q == s || is_space((unsigned char)q[-1])) && memcmp(q, key, kl) == 0) {
			const char *v = q + kl;
			const char *ve = v;
			while (ve < end && !is_space((unsigned char)*ve))
				ve++;
			double d;
			int64_t iv;
			bool fits = false;
			if (hpx_py_int(v, (size_t)(ve - v), &d, &iv, &fits) && fits) {
				p->hb_clean_iters = iv;
				p->has_hb_clean_iters = true;
			}
			return;
		}
	}
}

static int on_marker(struct ergon_hpx_parser *p, const char *line, size_t n, uint64_t lineno);

/* One line (the splitter's callback): data rows here, inline in the
 * splitter's loop (lines_feed.h); sentinels, metadata and heartbeats in
 * on_marker. */
static inline __attribute__((always_inline)) int on_line(void *ctx, const char *line, size_t n,
							 uint64_t lineno)
{
	struct ergon_hpx_parser *p = ctx;
	struct ergon_err *err = p->feed_err;
	cell_strip(&line, &n);
	if (n == 0)
		return 0;
	/* Fast path for data rows: every sentinel starts with '-' and every
	 * metadata/heartbeat line with 'H'; anything else inside an iteration
	 * is CSV (unless a terminal record is open). */
	if (line[0] != '-' && line[0] != 'H') {
		/* The terminal record and the PMU stream are read independently
		 * (as the reference's two parsers are): the terminal sees every
		 * line of an open record, the PMU machine sees every line. */
		if (p->term.in_record)
			hpx_terminal_line(&p->term, line, n, lineno);
		if (p->ended || !p->in_session || p->cur < 0)
			return 0;
		struct hpx_preset *ps = &p->presets[p->cur];
		if (!ps->in_iter)
			return 0;
		if (ps->cur_hdr < 0)
			return header_set(p, ps, line, n, lineno, err) ? -1 : 0;
		return row_add(p, ps, line, n, lineno, err) ? -1 : 0;
	}
	return on_marker(p, line, n, lineno);
}

/* A stripped line that starts with '-' or 'H': a sentinel, metadata or a
 * heartbeat (or what only looks like one and is then read as on_line
 * would). */
static __attribute__((noinline)) int on_marker(struct ergon_hpx_parser *p, const char *line,
					       size_t n, uint64_t lineno)
{
	struct ergon_err *err = p->feed_err;
	hpx_terminal_line(&p->term, line, n, lineno);
	if (p->ended)
		return 0;
	if (equals(line, n, HPX_TOK_START)) {
		if (p->in_session)
			note_line(&p->restarts, lineno);
		p->in_session = true;
		if (!p->start_lineno)
			p->start_lineno = lineno;
		return 0;
	}
	if (equals(line, n, HPX_TOK_END)) {
		if (p->cur >= 0)
			preset_flush(p, &p->presets[p->cur]);
		pools_close(p);
		p->ended = true;
		p->end_lineno = lineno;
		return 0;
	}
	if (!p->in_session)
		return 0;
	if (starts(line, n, HPX_TOK_HEARTBEAT)) {
		heartbeat(p, line, n, lineno);
		return 0;
	}
	size_t mp = strlen(HPX_TOK_META_PREFIX);
	if (starts(line, n, HPX_TOK_META_PREFIX)) {
		size_t i = mp;
		while (i < n && is_word((unsigned char)line[i]))
			i++;
		if (i > mp && i + 1 < n && line[i] == HPX_TOK_META_SEP)
			return meta_set(p, line + mp, i - mp, line + i + 1, n - i - 1, lineno, err)
				   ? -1
				   : 0;
	}
	size_t pp = strlen(HPX_TOK_PRESET_PREFIX);
	size_t sp = strlen(HPX_TOK_MARKER_SUFFIX);
	if (starts(line, n, HPX_TOK_PRESET_PREFIX) && n > pp + sp &&
	    memcmp(line + n - sp, HPX_TOK_MARKER_SUFFIX, sp) == 0) {
		const char *name = line + pp;
		size_t nl = n - pp - sp;
		bool ok = true;
		for (size_t i = 0; i < nl; i++)
			if (is_space((unsigned char)name[i]))
				ok = false;
		if (ok) {
			if (p->cur >= 0)
				preset_flush(p, &p->presets[p->cur]);
			return preset_find_or_add(p, name, nl, lineno, err) ? -1 : 0;
		}
	}
	size_t ip = strlen(HPX_TOK_ITER_PREFIX);
	if (starts(line, n, HPX_TOK_ITER_PREFIX) && n > ip + sp &&
	    memcmp(line + n - sp, HPX_TOK_MARKER_SUFFIX, sp) == 0) {
		const char *num = line + ip;
		size_t nl = n - ip - sp;
		bool ok = true;
		uint64_t v = 0;
		for (size_t i = 0; i < nl; i++) {
			if (num[i] < '0' || num[i] > '9')
				ok = false;
			else if (v < UINT64_MAX / 20)
				v = v * 10u + (uint64_t)(num[i] - '0');
		}
		if (ok) {
			if (p->cur < 0) {
				/* Legacy streams have no preset markers. */
				if (preset_find_or_add(p, HPX_PRESET_LEGACY,
						       strlen(HPX_PRESET_LEGACY), lineno, err))
					return -1;
			}
			return iter_start(p, v, lineno, err) ? -1 : 0;
		}
	}
	if (p->cur < 0)
		return 0;
	struct hpx_preset *ps = &p->presets[p->cur];
	if (!ps->in_iter)
		return 0;
	if (ps->cur_hdr < 0)
		return header_set(p, ps, line, n, lineno, err) ? -1 : 0;
	return row_add(p, ps, line, n, lineno, err) ? -1 : 0;
}

int ergon_hpx_parser_feed(struct ergon_hpx_parser *p, const void *data, size_t len,
			  struct ergon_err *err)
{
	if (p->failed)
		return ergon_err_set(err, p->failed, "hpx: the parser stopped at an earlier error");
	p->bytes += len;
	p->feed_err = err;
	int rc = hpx_lines_feed(&p->lines, data, len, on_line, p);
	p->feed_err = NULL;
	if (rc)
		return p->failed ? p->failed : ERGON_EPARSE;
	return p->ended ? ERGON_HPX_DONE : ERGON_HPX_NEED_MORE;
}

int ergon_hpx_parser_finish(struct ergon_hpx_parser *p, struct ergon_err *err)
{
	if (p->failed)
		return ergon_err_set(err, p->failed, "hpx: the parser stopped at an earlier error");
	if (!p->finished) {
		p->feed_err = err;
		p->cut_mid_line = p->lines.len > 0 || p->lines.dropping;
		int rc = hpx_lines_finish(&p->lines, on_line, p);
		p->feed_err = NULL;
		if (rc)
			return p->failed ? p->failed : ERGON_EPARSE;
		p->finished = true;
		/* Without END the iteration still open in the last preset is
		 * dropped whole, as the reference does; earlier ones stay. */
		if (!p->ended && p->cur >= 0) {
			struct hpx_preset *ps = &p->presets[p->cur];
			if (ps->cur_open && ps->niters) {
				iter_free(&ps->iters[ps->niters - 1]);
				ps->niters--;
				p->dropped_open_iter = true;
			}
			preset_flush(p, ps);
		}
		pools_close(p);
	}
	return p->ended ? ERGON_HPX_DONE : ERGON_HPX_NEED_MORE;
}

int ergon_hpx_parser_terminal(const struct ergon_hpx_parser *p, struct ergon_hpx_terminal *out,
			      struct ergon_err *err)
{
	return hpx_terminal_result(&p->term, out, err);
}

int ergon_hpx_terminal_parse(const char *data, size_t len, struct ergon_hpx_terminal *out,
			     struct ergon_err *err)
{
	struct ergon_hpx_parser *p = NULL;
	memset(out, 0, sizeof(*out));
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (rc)
		return rc;
	rc = ergon_hpx_parser_feed(p, data, len, err);
	if (rc >= 0)
		rc = ergon_hpx_parser_finish(p, err);
	if (rc >= 0)
		rc = ergon_hpx_parser_terminal(p, out, err);
	ergon_hpx_parser_free(p);
	return rc < 0 ? rc : 0;
}

/* Random access to a JLS recording's samples and summary levels
 * (include/ergon/jls_levels.h): an index of the DATA and SUMMARY chunks of
 * the signals asked for, built in one walk over the chunk headers, and
 * reads that decode only the chunks holding the entries asked for. */
#include "ergon/jls_levels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries one chunk may hold (the reader's bound for DATA chunks). */
#define CHUNK_ENTRIES_MAX (1u << 22)
/* A summary entry: f32 mean, std, min, max (the reference format). */
#define SUMMARY_ENTRY_BITS 128u

struct cref {
	uint64_t off;	      /* the chunk header's offset */
	uint64_t first_entry; /* entry index of the chunk's first entry */
	uint32_t count;	      /* entries it holds */
	uint32_t payload_len;
};

struct level {
	struct cref *c;
	size_t n, cap;
	uint64_t entries; /* contiguous from entry 0 */
	uint64_t entry_samples;
	int broken; /* a gap or a bad chunk: nothing after it is used */
};

struct sig {
	const struct ergon_jls_signal *def; /* NULL: not in the recording */
	unsigned bits;			    /* 32 (f32) or 1 (u1) */
	int64_t first_sid;
	int first_known;
	struct level lv[ERGON_JLS_LEVELS_MAX];
};

struct ergon_jls_levels {
	struct ergon_jls_reader *r;
	size_t n;
	struct sig s[ERGON_JLS_LEVELS_SIGNALS_MAX];
	uint8_t *buf; /* one chunk's payload span, reused */
	size_t buf_cap;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static float rdf(const uint8_t *p)
{
	uint32_t u = rd32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static int push(struct level *L, const struct cref *c)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 64;
		struct cref *nc = realloc(L->c, cap * sizeof(*nc));
		if (nc == NULL)
			return ERGON_ENOMEM;
		L->c = nc;
		L->cap = cap;
	}
	L->c[L->n++] = *c;
	L->entries += c->count;
	return 0;
}

/* One DATA (level 0) or SUMMARY chunk of signal s: appended to its level
 * when it continues it, else the level stops here. b holds the chunk
 * header and the payload's 16-byte header. */
static int take(struct sig *s, unsigned level, uint64_t off, const struct ergon_jls_chunk_header *h,
		const uint8_t *b)
{
	struct level *L = &s->lv[level];
	if (L->broken)
		return 0;
	int64_t first_id = (int64_t)rd64(b + 32);
	uint32_t count = rd32(b + 40);
	unsigned bits = rd16(b + 44);
	if (level == 0 && !s->first_known) {
		s->first_sid = first_id;
		s->first_known = 1;
	}
	uint64_t need = ((uint64_t)count * (level ? SUMMARY_ENTRY_BITS : s->bits) + 7u) / 8u;
	if (!s->first_known || bits != (level ? SUMMARY_ENTRY_BITS : s->bits) ||
	    count > CHUNK_ENTRIES_MAX || need > h->payload_length - 16u || L->entry_samples == 0) {
		L->broken = 1;
		return 0;
	}
	if (count == 0)
		return 0;
	/* Relative to the first sample, in whole entries, continuing the level. */
	uint64_t rel = (uint64_t)first_id - (uint64_t)s->first_sid;
	if ((int64_t)rel < 0 || rel % L->entry_samples != 0 ||
	    rel / L->entry_samples != L->entries) {
		L->broken = 1;
		return 0;
	}
	struct cref c = {.off = off,
			 .first_entry = L->entries,
			 .count = count,
			 .payload_len = h->payload_length};
	return push(L, &c);
}

int ergon_jls_levels_open(struct ergon_jls_reader *r, const char *const *names, size_t n,
			  struct ergon_jls_levels **out, struct ergon_err *err)
{
	*out = NULL;
	const struct ergon_jls_source *src = ergon_jls_reader_source(r);
	if (n > ERGON_JLS_LEVELS_SIGNALS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: %zu signals to index; at most %u",
				     src->name, n, ERGON_JLS_LEVELS_SIGNALS_MAX);
	struct ergon_jls_levels *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", src->name);
	l->r = r;
	l->n = n;
	/* Signal id -> index + 1 (0: not asked for). */
	uint8_t by_id[ERGON_JLS_SIGNAL_MAX] = {0};
	for (size_t k = 0; k < n; k++) {
		struct sig *s = &l->s[k];
		s->def = ergon_jls_reader_signal(r, names[k]);
		if (s->def == NULL || s->def->signal_type != 0 ||
		    (s->def->data_type != ERGON_JLS_DT_F32 &&
		     s->def->data_type != ERGON_JLS_DT_U1)) {
			s->def = NULL;
			continue;
		}
		s->bits = s->def->data_type == ERGON_JLS_DT_F32 ? 32u : 1u;
		by_id[s->def->signal_id] = (uint8_t)(k + 1);
		/* Entry sizes: 1, D, D x S, D x S^2, ... while they fit. */
		uint64_t e = 1;
		s->lv[0].entry_samples = 1;
		uint64_t d = s->def->sample_decimate_factor, f = s->def->summary_decimate_factor;
		for (unsigned v = 1; v < ERGON_JLS_LEVELS_MAX && d >= 2; v++) {
			uint64_t m = v == 1 ? d : f;
			if (m < 2 || e > (UINT64_C(1) << 62) / m)
				break;
			e *= m;
			s->lv[v].entry_samples = e;
		}
	}
	int rc = 0;
	uint64_t end = ergon_jls_reader_chunks_end(r);
	uint64_t off = ERGON_JLS_HEADER_SIZE;
	while (off + ERGON_JLS_CHUNK_HEADER_SIZE <= end) {
		uint8_t b[ERGON_JLS_CHUNK_HEADER_SIZE + 16];
		size_t want = off + sizeof b <= end ? sizeof b : ERGON_JLS_CHUNK_HEADER_SIZE;
		struct ergon_jls_chunk_header h;
		struct ergon_err cerr = {0};
		if ((rc = src->read_at(src->ctx, off, b, want)) != 0) {
			rc = ergon_err_set(err, rc, "%s@%" PRIu64 ": read failed", src->name, off);
			goto fail;
		}
		/* The reader's open walked these headers; one that no longer
		 * decodes means the file changed: stop the index there. */
		if (ergon_jls_chunk_header_decode(b, ERGON_JLS_CHUNK_HEADER_SIZE, &h, "", &cerr) !=
		    0)
			break;
		unsigned id = h.chunk_meta & 0xffu, level = (h.chunk_meta >> 12) & 0xfu;
		if ((h.tag == ERGON_JLS_TAG_FSR_DATA || h.tag == ERGON_JLS_TAG_FSR_SUMMARY) &&
		    by_id[id] != 0 && want == sizeof b && h.payload_length >= 16 &&
		    (h.tag == ERGON_JLS_TAG_FSR_DATA) == (level == 0)) {
			if (take(&l->s[by_id[id] - 1], level, off, &h, b) != 0) {
				rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
						   src->name);
				goto fail;
			}
		}
		off += ERGON_JLS_CHUNK_HEADER_SIZE + ergon_jls_payload_span(h.payload_length);
		if (h.tag == ERGON_JLS_TAG_END)
			break;
	}
	*out = l;
	return 0;
fail:
	ergon_jls_levels_free(l);
	return rc;
}

void ergon_jls_levels_free(struct ergon_jls_levels *l)
{
	if (l == NULL)
		return;
	for (size_t k = 0; k < l->n; k++)
		for (unsigned v = 0; v < ERGON_JLS_LEVELS_MAX; v++)
			free(l->s[k].lv[v].c);
	free(l->buf);
	free(l);
}

unsigned ergon_jls_levels_depth(const struct ergon_jls_levels *l, size_t k)
{
	if (k >= l->n)
		return 0;
	unsigned d = 0;
	while (d < ERGON_JLS_LEVELS_MAX && l->s[k].lv[d].entries > 0)
		d++;
	return d;
}

uint64_t ergon_jls_levels_entry_samples(const struct ergon_jls_levels *l, size_t k, unsigned level)
{
	return level < ergon_jls_levels_depth(l, k) ? l->s[k].lv[level].entry_samples : 0;
}

uint64_t ergon_jls_levels_entries(const struct ergon_jls_levels *l, size_t k, unsigned level)
{
	return level < ergon_jls_levels_depth(l, k) ? l->s[k].lv[level].entries : 0;
}

/* The chunk of L holding entry e (it exists). */
static const struct cref *find(const struct level *L, uint64_t e)
{
	size_t lo = 0, hi = L->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->c[mid].first_entry <= e)
			lo = mid;
		else
			hi = mid;
	}
	return &L->c[lo];
}

int ergon_jls_levels_read(struct ergon_jls_levels *l, size_t k, unsigned level, uint64_t first,
			  size_t n, struct ergon_jls_entry *out, struct ergon_err *err)
{
	const struct ergon_jls_source *src = ergon_jls_reader_source(l->r);
	uint64_t have = ergon_jls_levels_entries(l, k, level);
	if (n > ERGON_JLS_LEVELS_READ_MAX || first > have || n > have - first)
		return ergon_err_set(err, ERGON_ERANGE,
				     "%s: entries [%" PRIu64
				     ", +%zu) of level %u: it holds %" PRIu64
				     " (at most %u a read)",
				     src->name, first, n, level, have, ERGON_JLS_LEVELS_READ_MAX);
	const struct sig *s = &l->s[k];
	const struct level *L = &s->lv[level];
	size_t done = 0;
	while (done < n) {
		uint64_t e = first + done;
		const struct cref *c = find(L, e);
		uint64_t span = ergon_jls_payload_span(c->payload_len);
		if (span > l->buf_cap) {
			uint8_t *nb = realloc(l->buf, (size_t)span);
			if (nb == NULL)
				return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
						     src->name);
			l->buf = nb;
			l->buf_cap = (size_t)span;
		}
		char where[600];
		snprintf(where, sizeof where, "%s@%" PRIu64, src->name, c->off);
		int rc = src->read_at(src->ctx, c->off + ERGON_JLS_CHUNK_HEADER_SIZE, l->buf,
				      (size_t)span);
		if (rc)
			return ergon_err_set(err, rc, "%s: read failed", where);
		if ((rc = ergon_jls_payload_check(l->buf, (size_t)span, c->payload_len, where,
						  err)) != 0)
			return rc;
		if (rd32(l->buf + 8) != c->count)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the chunk changed since the recording was opened",
					     where);
		const uint8_t *p = l->buf + 16;
		uint64_t i = e - c->first_entry;
		for (; i < c->count && done < n; i++, done++) {
			struct ergon_jls_entry *o = &out[done];
			if (level > 0) {
				const uint8_t *q = p + 16 * i;
				o->mean = rdf(q);
				o->min = rdf(q + 8);
				o->max = rdf(q + 12);
			} else if (s->bits == 32) {
				o->mean = o->min = o->max = rdf(p + 4 * i);
			} else {
				o->mean = o->min = o->max =
				    (float)(((unsigned)p[i / 8] >> (i % 8)) & 1u);
			}
		}
	}
	return 0;
}

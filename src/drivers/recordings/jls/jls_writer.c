/* The JLS v2 writer (include/ergon/jls_writer.h, docs/internals/jls_writer.md).
 *
 * Chunk layouts and the summary tree follow the reference library
 * (jetperch/jls 0.17, Apache-2.0, read for the facts only: its format
 * header, its writer's summary code and its reader's seek and statistics
 * code; docs/internals/jls_writer.md names each fact and its source) and
 * the reference writer's output in ../shared/fixtures/jls.
 *
 * Summaries: a level-1 entry per DECIMATE samples (1000 unless the caller
 * asks for another), a level-k+1 entry per SUMMARY_DECIMATE (10) entries of
 * level k, ENTRIES_PER_SUMMARY (100) entries per SUMMARY chunk. Decimal
 * factors put entry edges on decimal sample counts, so that the reference
 * reader's statistics over spans of 1000, 10000, ... samples are sums of
 * whole entries (it spreads an entry that straddles a span edge over both
 * spans in proportion to the overlap). Entries hold the statistics of the
 * finite samples they cover, computed in double from the samples (not
 * from rounded lower entries): mean, population std, min, max as f32.
 *
 * Every byte goes out through one function (emit) that appends at the
 * end; the only in-place rewrites are whole chunk headers (item_next of
 * the previous chunk of a list) and TRACK_HEAD payloads (the first chunk
 * of each level), each one pwrite of a CRC-sealed unit.
 */
#include "ergon/jls_writer.h"

#include "ergon/jls.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPD_DEFAULT 10000u	 /* samples per DATA chunk */
#define DECIMATE_DEFAULT 1000u	 /* samples per level-1 summary entry */
#define ENTRIES_PER_SUMMARY 100u /* entries per SUMMARY chunk, every level */
#define SUMMARY_DECIMATE 10u	 /* level-k entries per level-k+1 entry */
#define DECIMATE_ANNOTATION 100u
#define DECIMATE_UTC 100u
/* Summary levels 1..LEVELS: a TRACK_HEAD holds 16 offsets, 0 for the data.
 * Level 15 would cover 10^14 level-1 entries per chunk: never reached. */
#define LEVELS 15
#define SIGNALS_MAX (3u + ERGON_JLS_WRITER_DIGITAL_MAX)
/* Index entries per INDEX chunk: DATA chunks per level-1 SUMMARY chunk
 * (ENTRIES_PER_SUMMARY / entries per DATA chunk, at most
 * ENTRIES_PER_SUMMARY), SUMMARY_DECIMATE above. */
#define INDEX_MAX ENTRIES_PER_SUMMARY
/* The largest INDEX or SUMMARY payload: allocated once at open, so that the
 * write path allocates nothing (an allocation failure mid-recording would
 * otherwise end it; only a note larger than the staging buffer grows it). */
#define LVBUF_BYTES (16u + 16u * ENTRIES_PER_SUMMARY)

enum { TRACK_FSR = 0, TRACK_VSR = 1, TRACK_ANNOTATION = 2, TRACK_UTC = 3 };
enum { CH_DEF = 0, CH_HEAD = 1, CH_DATA = 2, CH_INDEX = 3, CH_SUMMARY = 4 };
#define TAG(track, ch) ((uint8_t)(0x20u | ((unsigned)(track) << 3) | (unsigned)(ch)))

/* A doubly linked list of chunks: the last one's header is rewritten to
 * point at the next. */
struct list {
	uint64_t last_off;
	uint8_t last_hdr[ERGON_JLS_CHUNK_HEADER_SIZE];
	int have;
};

/* Statistics of the finite samples of a span: count, mean, sum of squared
 * deviations (combined by Chan et al.'s pairwise update), min, max. */
struct jstat {
	uint64_t n;
	double mean, m2, min, max;
};

/* One summary level: the entries and index offsets of its next chunk. */
struct level {
	struct jstat *e; /* ENTRIES_PER_SUMMARY */
	uint32_t n;
	uint64_t index[INDEX_MAX];
	uint32_t n_index;
	int64_t first_id; /* sample id of the chunk's first sample (set with its first index) */
	uint64_t chunks;  /* chunks written at this level */
	struct list index_list, summary_list;
};

struct sig {
	uint16_t id;
	int u1;
	const char *name, *units;
	uint8_t *buf; /* 16-byte payload header + entries */
	uint32_t count;
	int64_t chunk_first_id;
	uint64_t kept; /* samples in complete chunks on disk */
	uint64_t head_off[4];
	uint64_t head[4][16]; /* per track: offsets of the first chunk per level */
	struct list data_list, utc_list;
	struct jstat acc;	 /* the level-1 entry being built */
	uint32_t acc_len;	 /* samples in it, NaN included */
	struct level lv[LEVELS]; /* lv[k] is level k + 1 */
	/* UTC level 1: (sample id, UTC DATA offset) and (sample id, time)
	 * pairs, written as INDEX + SUMMARY every DECIMATE_UTC entries. */
	int64_t utc_id[DECIMATE_UTC], utc_t[DECIMATE_UTC];
	uint64_t utc_off[DECIMATE_UTC];
	uint32_t n_utc;
	struct list utc_index_list, utc_summary_list;
};

struct ergon_jls_writer {
	int fd;
	char path[512];
	ergon_jls_pwrite_fn pw;
	int (*on_write_error)(void *ctx, int errno_value);
	void *on_write_error_ctx;
	uint64_t end;	   /* bytes written: the next chunk goes here */
	uint64_t good_end; /* end of the last complete chunk */
	uint32_t prev_len; /* payload length of the chunk before */
	int failed;
	struct ergon_err first_err;
	uint32_t rate_hz;
	uint32_t spd;	   /* samples per DATA chunk, every signal */
	uint32_t decimate; /* samples per level-1 entry */
	int64_t id0;
	uint64_t pushed;
	unsigned nsig;
	struct sig sig[SIGNALS_MAX];
	struct list defs, sources, user;
	uint8_t *scratch; /* payload staging */
	size_t scratch_cap;
	uint8_t *lvbuf; /* INDEX / SUMMARY payloads (LVBUF_BYTES) */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int fail(struct ergon_jls_writer *w, int code, int errnum, const char *what)
{
	if (!w->failed) {
		w->failed = 1;
		if (errnum)
			ergon_err_errno(&w->first_err, errnum, "%s: %s", w->path, what);
		else
			ergon_err_set(&w->first_err, code, "%s: %s", w->path, what);
	}
	return w->first_err.code ? w->first_err.code : code;
}

static int write_at(struct ergon_jls_writer *w, const void *b, size_t n, uint64_t off)
{
	const uint8_t *p = b;
	while (n > 0) {
		ssize_t r = w->pw(w->fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		/* The owner may make room (release reserved space) and ask
		 * for the same write again. */
		if (r <= 0 && w->on_write_error &&
		    w->on_write_error(w->on_write_error_ctx, r < 0 ? errno : ENOSPC))
			continue;
		if (r <= 0)
			return fail(w, ERGON_EIO, r < 0 ? errno : ENOSPC,
				    "cannot write the recording");
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static void seal_header(uint8_t *h)
{
	put32(h + 28, ergon_jls_crc32c(0, h, 28));
}

/* Append a chunk; link it into list (may be NULL). Returns 0 and its
 * offset in *at, or the first error (the file keeps what was complete). */
static int chunk(struct ergon_jls_writer *w, struct list *list, uint8_t tag, uint16_t meta,
		 const uint8_t *payload, uint32_t len, uint64_t *at)
{
	if (w->failed)
		return w->first_err.code;
	uint8_t h[ERGON_JLS_CHUNK_HEADER_SIZE];
	memset(h, 0, sizeof(h));
	uint64_t off = w->end;
	put64(h, 0);
	put64(h + 8, list && list->have ? list->last_off : 0);
	h[16] = tag;
	put16(h + 18, meta);
	put32(h + 20, len);
	put32(h + 24, w->prev_len);
	seal_header(h);
	uint64_t span = ergon_jls_payload_span(len);
	size_t total = ERGON_JLS_CHUNK_HEADER_SIZE + (size_t)span;
	if (total > w->scratch_cap) {
		uint8_t *s = realloc(w->scratch, total);
		if (s == NULL)
			return fail(w, ERGON_ENOMEM, 0, "out of memory");
		w->scratch = s;
		w->scratch_cap = total;
	}
	uint8_t *b = w->scratch;
	memcpy(b, h, sizeof(h));
	if (len > 0) {
		memcpy(b + ERGON_JLS_CHUNK_HEADER_SIZE, payload, len);
		memset(b + ERGON_JLS_CHUNK_HEADER_SIZE + len, 0, (size_t)span - len - 4);
		put32(b + total - 4, ergon_jls_crc32c(0, payload, len));
	}
	int rc = write_at(w, b, total, off);
	if (rc)
		return rc;
	w->end = off + total;
	w->good_end = w->end;
	w->prev_len = len;
	if (list) {
		if (list->have) {
			put64(list->last_hdr, off);
			seal_header(list->last_hdr);
			rc = write_at(w, list->last_hdr, sizeof(list->last_hdr), list->last_off);
			if (rc)
				return rc;
		}
		memcpy(list->last_hdr, h, sizeof(h));
		list->last_off = off;
		list->have = 1;
	}
	if (at)
		*at = off;
	return 0;
}

/* Rewrite a TRACK_HEAD payload (16 u64 offsets) and its CRC in place. */
static int patch_head(struct ergon_jls_writer *w, struct sig *s, int track)
{
	uint8_t p[128 + 8];
	memset(p, 0, sizeof(p));
	for (int i = 0; i < 16; i++)
		put64(p + 8 * i, s->head[track][i]);
	/* payload 128 bytes: span 136 = 128 + 4 padding + CRC. */
	put32(p + 132, ergon_jls_crc32c(0, p, 128));
	return write_at(w, p, sizeof(p), s->head_off[track] + ERGON_JLS_CHUNK_HEADER_SIZE);
}

static uint32_t str_field(uint8_t *p, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 200)
		n = 200;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	p[n + 1] = 0x1f;
	return (uint32_t)n + 2;
}

static int source_def(struct ergon_jls_writer *w, uint16_t id, const char *name, const char *vendor,
		      const char *model, const char *version, const char *serial)
{
	uint8_t p[64 + 5 * 202];
	memset(p, 0, sizeof(p));
	uint32_t n = 64;
	n += str_field(p + n, name);
	n += str_field(p + n, vendor);
	n += str_field(p + n, model);
	n += str_field(p + n, version);
	n += str_field(p + n, serial);
	return chunk(w, &w->sources, ERGON_JLS_TAG_SOURCE_DEF, id, p, n, NULL);
}

/* The global annotation signal 0 as the reference writer (jetperch/jls
 * 0.17) defines it, byte for byte (../shared/fixtures/jls): it holds no
 * samples, its factors only size its annotation summaries. */
static const uint32_t signal0_factors[5] = {16, 10, 10, 100, 100};
#define SIGNAL0_SAMPLES_PER_DATA 16u

static int signal_def(struct ergon_jls_writer *w, uint16_t id, uint16_t source, uint8_t type,
		      uint32_t dtype, uint32_t rate, uint32_t spd, const uint32_t *factors,
		      const char *name, const char *units)
{
	uint8_t p[128 + 2 * 202];
	memset(p, 0, sizeof(p));
	put16(p, source);
	p[2] = type;
	put32(p + 4, dtype);
	put32(p + 8, rate);
	put32(p + 12, spd);
	for (unsigned k = 0; k < 5; k++)
		put32(p + 16 + 4 * k, factors[k]);
	uint32_t n = 128;
	n += str_field(p + n, name);
	n += str_field(p + n, units);
	return chunk(w, &w->defs, ERGON_JLS_TAG_SIGNAL_DEF, id, p, n, NULL);
}

/* TRACK DEF (empty) + HEAD (16 offsets, patched later) for one track. */
static int track_defs(struct ergon_jls_writer *w, struct sig *s, uint16_t id, int track)
{
	uint8_t head[128];
	memset(head, 0, sizeof(head));
	int rc = chunk(w, &w->defs, TAG(track, CH_DEF), id, NULL, 0, NULL);
	if (rc == 0)
		rc = chunk(w, &w->defs, TAG(track, CH_HEAD), id, head, sizeof(head),
			   s ? &s->head_off[track] : NULL);
	return rc;
}

static int user_data(struct ergon_jls_writer *w, const char *json)
{
	if (json == NULL)
		return 0;
	size_t n = strlen(json) + 1;
	if (n > 65536)
		return ergon_err_set(&w->first_err, ERGON_ETOOBIG, "%s: note too long", w->path);
	/* chunk_meta[15:12] = storage type 3 (JSON, NUL-terminated). */
	return chunk(w, &w->user, ERGON_JLS_TAG_USER_DATA, (uint16_t)(3u << 12),
		     (const uint8_t *)json, (uint32_t)n, NULL);
}

/* a += b (Chan, Golub and LeVeque's pairwise update of the mean and the
 * sum of squared deviations). */
static void stat_merge(struct jstat *a, const struct jstat *b)
{
	if (b->n == 0)
		return;
	if (a->n == 0) {
		*a = *b;
		return;
	}
	double na = (double)a->n, nb = (double)b->n, n = na + nb;
	double d = b->mean - a->mean;
	a->mean += d * nb / n;
	a->m2 += b->m2 + d * d * na * nb / n;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
	a->n += b->n;
}

/* An entry as the format stores it: f32 mean, std, min, max; the
 * population std (the reference writer's), NaN for a span with no finite
 * sample. */
static void stat_put(uint8_t *p, const struct jstat *s)
{
	float e[4];
	if (s->n == 0) {
		e[0] = e[1] = e[2] = e[3] = NAN;
	} else {
		double var = s->m2 / (double)s->n;
		e[0] = (float)s->mean;
		e[1] = (float)sqrt(var > 0 ? var : 0);
		e[2] = (float)s->min;
		e[3] = (float)s->max;
	}
	memcpy(p, e, sizeof(e));
}

static int level_flush(struct ergon_jls_writer *w, struct sig *s, int k);

/* Add an offset to level k's index; the first one sets the chunk's first
 * sample id. */
static void level_index(struct level *L, uint64_t off, int64_t first_id)
{
	if (L->n_index == 0)
		L->first_id = first_id;
	if (L->n_index < INDEX_MAX)
		L->index[L->n_index++] = off;
}

/* A complete entry at level k (lv[k]); a full level writes its chunk. */
static int level_push(struct ergon_jls_writer *w, struct sig *s, int k, const struct jstat *e)
{
	struct level *L = &s->lv[k];
	L->e[L->n++] = *e;
	if (L->n == ENTRIES_PER_SUMMARY)
		return level_flush(w, s, k);
	return 0;
}

/* Write level k's INDEX + SUMMARY (the INDEX first, the SUMMARY right
 * after it: the reference reader reads the chunk after an INDEX as its
 * SUMMARY). The level above gets the INDEX's offset and one entry per
 * complete group of SUMMARY_DECIMATE entries, as the reference writer
 * makes them (a group cut by the end of the recording is left out). */
static int level_flush(struct ergon_jls_writer *w, struct sig *s, int k)
{
	struct level *L = &s->lv[k];
	uint16_t meta = (uint16_t)(s->id | (uint16_t)((k + 1) << 12));
	size_t ilen = 16 + 8 * (size_t)L->n_index;
	size_t slen = 16 + 16 * (size_t)L->n;
	uint8_t *p = w->lvbuf; /* ilen, slen <= LVBUF_BYTES */
	put64(p, (uint64_t)L->first_id);
	put32(p + 8, L->n_index);
	put16(p + 12, 64);
	put16(p + 14, 0);
	for (uint32_t i = 0; i < L->n_index; i++)
		put64(p + 16 + 8 * i, L->index[i]);
	uint64_t ioff = 0;
	int rc = chunk(w, &L->index_list, TAG(TRACK_FSR, CH_INDEX), meta, p, (uint32_t)ilen, &ioff);
	if (rc == 0) {
		put64(p, (uint64_t)L->first_id);
		put32(p + 8, L->n);
		put16(p + 12, 128);
		put16(p + 14, 0);
		for (uint32_t i = 0; i < L->n; i++)
			stat_put(p + 16 + 16 * i, &L->e[i]);
		rc = chunk(w, &L->summary_list, TAG(TRACK_FSR, CH_SUMMARY), meta, p, (uint32_t)slen,
			   NULL);
	}
	if (rc)
		return rc;
	if (s->head[TRACK_FSR][k + 1] == 0) {
		s->head[TRACK_FSR][k + 1] = ioff;
		rc = patch_head(w, s, TRACK_FSR);
		if (rc)
			return rc;
	}
	L->chunks++;
	uint32_t n = L->n;
	int64_t first_id = L->first_id;
	L->n = 0;
	L->n_index = 0;
	if (k + 1 >= LEVELS)
		return 0;
	level_index(&s->lv[k + 1], ioff, first_id);
	for (uint32_t g = 0; g + SUMMARY_DECIMATE <= n && rc == 0; g += SUMMARY_DECIMATE) {
		struct jstat up = {0};
		for (uint32_t i = 0; i < SUMMARY_DECIMATE; i++)
			stat_merge(&up, &L->e[g + i]);
		rc = level_push(w, s, k + 1, &up);
	}
	return rc;
}

static int data_flush(struct ergon_jls_writer *w, struct sig *s)
{
	if (s->count == 0)
		return 0;
	put64(s->buf, (uint64_t)s->chunk_first_id);
	put32(s->buf + 8, s->count);
	put16(s->buf + 12, s->u1 ? 1 : 32);
	put16(s->buf + 14, 0);
	uint32_t len = 16 + (s->u1 ? (s->count + 7) / 8 : 4 * s->count);
	uint64_t off = 0;
	int rc = chunk(w, &s->data_list, TAG(TRACK_FSR, CH_DATA), s->id, s->buf, len, &off);
	if (rc)
		return rc;
	s->kept += s->count;
	level_index(&s->lv[0], off, s->chunk_first_id);
	if (s->head[TRACK_FSR][0] == 0) {
		s->head[TRACK_FSR][0] = off;
		rc = patch_head(w, s, TRACK_FSR);
		if (rc)
			return rc;
	}
	s->chunk_first_id += s->count;
	s->count = 0;
	if (s->u1)
		memset(s->buf + 16, 0, (w->spd + 7) / 8);
	return 0;
}

/* Statistics of m f32 samples (the finite ones), two passes. */
static void stat_f32(struct jstat *st, const float *x, size_t m)
{
	double sum = 0, mn = INFINITY, mx = -INFINITY;
	uint64_t n = 0;
	for (size_t i = 0; i < m; i++) {
		double v = x[i];
		if (!isfinite(v))
			continue;
		n++;
		sum += v;
		if (v < mn)
			mn = v;
		if (v > mx)
			mx = v;
	}
	*st = (struct jstat){0};
	if (n == 0)
		return;
	double mean = sum / (double)n, m2 = 0;
	for (size_t i = 0; i < m; i++) {
		double v = x[i];
		if (isfinite(v))
			m2 += (v - mean) * (v - mean);
	}
	*st = (struct jstat){.n = n, .mean = mean, .m2 = m2, .min = mn, .max = mx};
}

/* Append m samples to signal s: f32 values x, or (u1) bit `bit` of dig
 * (NULL: all 0). Runs up to the next DATA chunk or level-1 entry boundary
 * are copied and summarised in one piece. */
static int run(struct ergon_jls_writer *w, struct sig *s, const float *x, const uint32_t *dig,
	       unsigned bit, size_t m)
{
	while (m > 0) {
		size_t take = m;
		if (take > w->spd - s->count)
			take = w->spd - s->count;
		if (take > w->decimate - s->acc_len)
			take = w->decimate - s->acc_len;
		struct jstat piece;
		if (s->u1) {
			uint8_t *bits = s->buf + 16;
			uint64_t ones = 0;
			for (size_t i = 0; i < take; i++) {
				unsigned v = dig ? (dig[i] >> bit) & 1u : 0u;
				size_t at = s->count + i;
				bits[at / 8] |= (uint8_t)(v << (at % 8));
				ones += v;
			}
			/* 0/1 values: mean ones/n, squared deviations ones x zeros / n. */
			double n = (double)take;
			piece = (struct jstat){.n = take,
					       .mean = (double)ones / n,
					       .m2 = (double)ones * (n - (double)ones) / n,
					       .min = ones == take ? 1.0 : 0.0,
					       .max = ones > 0 ? 1.0 : 0.0};
		} else {
			memcpy(s->buf + 16 + 4 * (size_t)s->count, x, 4 * take);
			stat_f32(&piece, x, take);
		}
		stat_merge(&s->acc, &piece);
		s->acc_len += (uint32_t)take;
		s->count += (uint32_t)take;
		int rc = 0;
		/* The DATA chunk first: the level-1 INDEX written when this
		 * entry fills a SUMMARY chunk must list it. */
		if (s->count == w->spd)
			rc = data_flush(w, s);
		if (rc == 0 && s->acc_len == w->decimate) {
			struct jstat e = s->acc;
			s->acc = (struct jstat){0};
			s->acc_len = 0;
			rc = level_push(w, s, 0, &e);
		}
		if (rc)
			return rc;
		if (x)
			x += take;
		if (dig)
			dig += take;
		m -= take;
	}
	return 0;
}

int ergon_jls_writer_push(struct ergon_jls_writer *w, const float *current_a,
			  const float *voltage_v, const float *power_w, const uint32_t *digital,
			  size_t n, struct ergon_err *err)
{
	if (w->failed)
		return ergon_err_set(err, w->first_err.code, "%s", w->first_err.msg);
	int rc = 0;
	for (unsigned k = 0; k < w->nsig && rc == 0; k++) {
		struct sig *s = &w->sig[k];
		if (k == 0)
			rc = run(w, s, current_a, NULL, 0, n);
		else if (k == 1)
			rc = run(w, s, voltage_v, NULL, 0, n);
		else if (s->u1)
			rc = run(w, s, NULL, digital, s->id - 4u, n);
		else if (power_w)
			rc = run(w, s, power_w, NULL, 0, n);
		else {
			/* current x voltage, as f32, in pieces. */
			float p[1024];
			for (size_t j = 0; j < n && rc == 0; j += 1024) {
				size_t m = n - j < 1024 ? n - j : 1024;
				for (size_t i = 0; i < m; i++)
					p[i] = current_a[j + i] * voltage_v[j + i];
				rc = run(w, s, p, NULL, 0, m);
			}
		}
	}
	if (rc) {
		/* Disk full or a write error: cut back to the last complete
		 * chunk so the file stays valid. */
		if (w->good_end > 0)
			(void)ftruncate(w->fd, (off_t)w->good_end);
		return ergon_err_set(err, w->first_err.code,
				     "%s; the recording keeps the %llu samples in complete chunks "
				     "(valid JLS up to there)",
				     w->first_err.msg,
				     (unsigned long long)ergon_jls_writer_samples_kept(w));
	}
	w->pushed += n;
	return 0;
}

/* Write the pending UTC level-1 INDEX (sample id, offset) and SUMMARY
 * (sample id, time) pairs of one signal. */
static int utc_flush(struct ergon_jls_writer *w, struct sig *s)
{
	if (s->n_utc == 0)
		return 0;
	uint8_t p[16 + 16 * DECIMATE_UTC];
	uint16_t meta = (uint16_t)(s->id | (1u << 12));
	uint32_t len = 16 + 16 * s->n_utc;
	put64(p, (uint64_t)s->utc_id[0]);
	put32(p + 8, s->n_utc);
	put16(p + 12, 128);
	put16(p + 14, 0);
	for (uint32_t i = 0; i < s->n_utc; i++) {
		put64(p + 16 + 16 * i, (uint64_t)s->utc_id[i]);
		put64(p + 24 + 16 * i, s->utc_off[i]);
	}
	uint64_t ioff = 0;
	int rc = chunk(w, &s->utc_index_list, TAG(TRACK_UTC, CH_INDEX), meta, p, len, &ioff);
	for (uint32_t i = 0; rc == 0 && i < s->n_utc; i++)
		put64(p + 24 + 16 * i, (uint64_t)s->utc_t[i]);
	if (rc == 0)
		rc = chunk(w, &s->utc_summary_list, TAG(TRACK_UTC, CH_SUMMARY), meta, p, len, NULL);
	if (rc == 0 && s->head[TRACK_UTC][1] == 0) {
		s->head[TRACK_UTC][1] = ioff;
		rc = patch_head(w, s, TRACK_UTC);
	}
	s->n_utc = 0;
	return rc;
}

int ergon_jls_writer_utc(struct ergon_jls_writer *w, uint64_t index, int64_t utc_q30,
			 struct ergon_err *err)
{
	uint8_t p[24];
	put64(p, (uint64_t)(w->id0 + (int64_t)index));
	put32(p + 8, 1);
	put16(p + 12, 64);
	put16(p + 14, 0);
	put64(p + 16, (uint64_t)utc_q30);
	for (unsigned k = 0; k < w->nsig; k++) {
		struct sig *s = &w->sig[k];
		uint64_t off = 0;
		int rc = chunk(w, &s->utc_list, TAG(TRACK_UTC, CH_DATA), s->id, p, sizeof(p), &off);
		if (rc)
			return ergon_err_set(err, rc, "%s", w->first_err.msg);
		if (s->head[TRACK_UTC][0] == 0) {
			s->head[TRACK_UTC][0] = off;
			rc = patch_head(w, s, TRACK_UTC);
			if (rc)
				return ergon_err_set(err, rc, "%s", w->first_err.msg);
		}
		s->utc_id[s->n_utc] = w->id0 + (int64_t)index;
		s->utc_t[s->n_utc] = utc_q30;
		s->utc_off[s->n_utc] = off;
		if (++s->n_utc == DECIMATE_UTC) {
			rc = utc_flush(w, s);
			if (rc)
				return ergon_err_set(err, rc, "%s", w->first_err.msg);
		}
	}
	return 0;
}

static void writer_free(struct ergon_jls_writer *w)
{
	if (w == NULL)
		return;
	for (unsigned k = 0; k < SIGNALS_MAX; k++) {
		free(w->sig[k].buf);
		for (int l = 0; l < LEVELS; l++)
			free(w->sig[k].lv[l].e);
	}
	free(w->scratch);
	free(w->lvbuf);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

void ergon_jls_writer_abandon(struct ergon_jls_writer *w)
{
	writer_free(w);
}

static const char *digital_names[ERGON_JLS_WRITER_DIGITAL_MAX] = {
    "gpi[0]", "gpi[1]", "gpi[2]", "gpi[3]", "gpi[4]", "gpi[5]", "gpi[6]", "gpi[7]"};

/* The chunk sizes the reference reader can seek in: a DATA chunk holds a
 * whole number of level-1 entries and of bytes of 1-bit samples, and a
 * SUMMARY chunk's entries cover a whole number of DATA chunks. */
static int layout_check(const struct ergon_jls_writer_config *cfg, uint32_t spd, uint32_t dec,
			struct ergon_err *err)
{
	if (dec >= 10 && spd >= dec && spd <= (1u << 20) && spd % 8 == 0 && spd % dec == 0 &&
	    ENTRIES_PER_SUMMARY % (spd / dec) == 0)
		return 0;
	return ergon_err_set(err, ERGON_EUSAGE,
			     "%s: %u samples per DATA chunk and %u per summary entry do not make "
			     "a JLS layout: the entry needs 10 samples or more, the chunk a "
			     "multiple of 8 samples and of the entry, and %u entries a whole "
			     "number of chunks (the defaults, 0 and 0, are 10000 and 1000)",
			     cfg->path, spd, dec, ENTRIES_PER_SUMMARY);
}

int ergon_jls_writer_open(const struct ergon_jls_writer_config *cfg, struct ergon_jls_writer **out,
			  struct ergon_err *err)
{
	*out = NULL;
	if (cfg->sample_rate_hz == 0 || cfg->digital_lines > ERGON_JLS_WRITER_DIGITAL_MAX)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: a JLS recording needs a sample rate > 0 and at most 8 "
				     "digital lines",
				     cfg->path);
	uint32_t spd = cfg->samples_per_data ? cfg->samples_per_data : SPD_DEFAULT;
	uint32_t dec = cfg->sample_decimate ? cfg->sample_decimate : DECIMATE_DEFAULT;
	if (layout_check(cfg, spd, dec, err))
		return err->code;
	struct ergon_jls_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	w->fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", cfg->path);
	w->pw = cfg->pwrite_fn ? cfg->pwrite_fn : pwrite;
	w->on_write_error = cfg->on_write_error;
	w->on_write_error_ctx = cfg->on_write_error_ctx;
	w->rate_hz = cfg->sample_rate_hz;
	w->id0 = cfg->sample_id_offset;
	w->spd = spd;
	w->decimate = dec;
	/* Staging for the largest chunk the write path makes: a DATA chunk
	 * of spd f32 samples, or an INDEX / SUMMARY chunk. */
	size_t data_payload = 16 + 4 * (size_t)spd;
	size_t stage = data_payload > LVBUF_BYTES ? data_payload : LVBUF_BYTES;
	w->scratch_cap =
	    ERGON_JLS_CHUNK_HEADER_SIZE + (size_t)ergon_jls_payload_span((uint32_t)stage);
	w->scratch = malloc(w->scratch_cap);
	w->lvbuf = malloc(LVBUF_BYTES);
	if (w->scratch == NULL || w->lvbuf == NULL) {
		writer_free(w);
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", cfg->path);
	}
	int rc = 0;
	w->nsig = 2u + (cfg->with_power ? 1u : 0u) + cfg->digital_lines;
	for (unsigned k = 0; k < w->nsig; k++) {
		struct sig *s = &w->sig[k];
		if (k < 2 || (k == 2 && cfg->with_power)) {
			s->id = (uint16_t)(k + 1);
			s->name = k == 0 ? "current" : k == 1 ? "voltage" : "power";
			s->units = k == 0 ? "A" : k == 1 ? "V" : "W";
		} else {
			unsigned line = k - (cfg->with_power ? 3u : 2u);
			s->id = (uint16_t)(4u + line);
			s->u1 = 1;
			s->name = digital_names[line];
			s->units = "";
		}
		/* Every signal has the same samples per chunk and per entry,
		 * so that a killed recording loses the same span of each, and
		 * statistics line up across signals. */
		s->chunk_first_id = w->id0;
		s->buf = calloc(1, 16 + (s->u1 ? (spd + 7) / 8 : 4 * (size_t)spd));
		for (int l = 0; l < LEVELS && s->buf; l++) {
			s->lv[l].e = calloc(ENTRIES_PER_SUMMARY, sizeof(struct jstat));
			if (s->lv[l].e == NULL) {
				free(s->buf);
				s->buf = NULL;
			}
		}
		if (s->buf == NULL) {
			writer_free(w);
			return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", cfg->path);
		}
	}
	int flags = O_RDWR | O_CREAT | O_CLOEXEC | (cfg->force ? O_TRUNC : O_EXCL);
	w->fd = open(cfg->path, flags, 0644);
	if (w->fd < 0) {
		int e = errno;
		writer_free(w);
		if (e == EEXIST)
			return ergon_err_set(err, ERGON_EEXIST,
					     "%s: already exists; give another --out or --force to "
					     "replace it",
					     cfg->path);
		return ergon_err_errno(err, e, "%s: cannot create the recording", cfg->path);
	}
	uint8_t fh[32] = {0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a,
			  0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c};
	put64(fh + 16, 0);	  /* length: 0 until closed */
	put32(fh + 24, 1u << 24); /* format version 1.0.0 */
	put32(fh + 28, ergon_jls_crc32c(0, fh, 28));
	rc = write_at(w, fh, sizeof(fh), 0);
	w->end = w->good_end = sizeof(fh);
	/* The order of the reference writer: the reference reader looks for
	 * the first USER_DATA, SOURCE_DEF and SIGNAL_DEF among the first
	 * three chunks ("malformed JLS, continue searching" otherwise). The
	 * user-data list starts with an empty chunk (its reader skips the
	 * first); then source 0 and signal 0, the global annotations the
	 * format reserves, with their VSR and ANNOTATION tracks; then the
	 * note. */
	if (rc == 0)
		rc = chunk(w, &w->user, ERGON_JLS_TAG_USER_DATA, 0, NULL, 0, NULL);
	if (rc == 0)
		rc = source_def(w, 0, "global_annotation_source", "jls", "-", "1.0.0", "-");
	if (rc == 0)
		rc = signal_def(w, 0, 0, 1, 0x0004u | (32u << 8), 0, SIGNAL0_SAMPLES_PER_DATA,
				signal0_factors, "global_annotation_signal", "");
	if (rc == 0)
		rc = track_defs(w, NULL, 0, TRACK_VSR);
	if (rc == 0)
		rc = track_defs(w, NULL, 0, TRACK_ANNOTATION);
	if (rc == 0)
		rc = user_data(w, cfg->note_json);
	if (rc == 0)
		rc = source_def(w, 1, cfg->source_name, cfg->vendor, cfg->model, cfg->version,
				cfg->serial);
	/* sample_decimate_factor, entries_per_summary, summary_decimate_factor,
	 * annotation_decimate_factor, utc_decimate_factor. */
	const uint32_t factors[5] = {dec, ENTRIES_PER_SUMMARY, SUMMARY_DECIMATE,
				     DECIMATE_ANNOTATION, DECIMATE_UTC};
	for (unsigned k = 0; k < w->nsig && rc == 0; k++) {
		struct sig *s = &w->sig[k];
		rc = signal_def(w, s->id, 1, 0, s->u1 ? ERGON_JLS_DT_U1 : ERGON_JLS_DT_F32,
				w->rate_hz, spd, factors, s->name, s->units);
		if (rc == 0)
			rc = track_defs(w, s, s->id, TRACK_FSR);
		if (rc == 0)
			rc = track_defs(w, s, s->id, TRACK_ANNOTATION);
		if (rc == 0)
			rc = track_defs(w, s, s->id, TRACK_UTC);
	}
	if (rc == 0)
		rc = ergon_jls_writer_utc(w, 0, cfg->utc_q30_start, err);
	if (rc) {
		ergon_err_set(err, rc, "%s", w->first_err.msg[0] ? w->first_err.msg : err->msg);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* The summaries at close: the last DATA chunk, then bottom up each level's
 * pending chunk (it lists that DATA chunk or the chunk below, so that every
 * sample stays reachable from the top), up to the first level that wrote
 * a single chunk: that one covers the whole recording, and the reference
 * reader starts every seek from the first INDEX of the highest level. The
 * samples after the last whole level-1 entry are in DATA only, as the
 * reference writer leaves them; its reader reads them from there. */
static void summaries_close(struct ergon_jls_writer *w, struct sig *s)
{
	if (data_flush(w, s))
		return;
	for (int k = 0; k < LEVELS && !w->failed; k++) {
		struct level *L = &s->lv[k];
		if (L->n_index > 0 && level_flush(w, s, k))
			return;
		if (L->chunks <= 1)
			return;
	}
}

int ergon_jls_writer_close(struct ergon_jls_writer *w, const char *note_json, struct ergon_err *err)
{
	int rc = w->failed ? w->first_err.code : 0;
	for (unsigned k = 0; k < w->nsig && !w->failed; k++) {
		summaries_close(w, &w->sig[k]);
		if (!w->failed)
			utc_flush(w, &w->sig[k]);
	}
	if (!w->failed)
		user_data(w, note_json);
	if (!w->failed)
		chunk(w, NULL, ERGON_JLS_TAG_END, 0, NULL, 0, NULL);
	if (!w->failed) {
		uint8_t fh[32] = {0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a,
				  0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c};
		put64(fh + 16, w->end);
		put32(fh + 24, 1u << 24);
		put32(fh + 28, ergon_jls_crc32c(0, fh, 28));
		write_at(w, fh, sizeof(fh), 0);
	}
	if (w->failed && w->good_end > 0)
		(void)ftruncate(w->fd, (off_t)w->good_end);
	if (rc == 0 && w->failed)
		rc = w->first_err.code;
	if (rc == 0 && fsync(w->fd) != 0)
		rc = ergon_err_errno(err, errno, "%s: cannot flush the recording", w->path);
	else if (rc)
		ergon_err_set(err, rc, "%s", w->first_err.msg);
	if (w->fd >= 0 && close(w->fd) != 0 && rc == 0)
		rc = ergon_err_errno(err, errno, "%s: cannot close the recording", w->path);
	w->fd = -1;
	writer_free(w);
	return rc;
}

uint64_t ergon_jls_writer_samples(const struct ergon_jls_writer *w)
{
	return w->pushed;
}

uint64_t ergon_jls_writer_samples_kept(const struct ergon_jls_writer *w)
{
	uint64_t m = UINT64_MAX;
	for (unsigned k = 0; k < w->nsig; k++)
		if (w->sig[k].kept < m)
			m = w->sig[k].kept;
	return w->nsig ? m : 0;
}

uint64_t ergon_jls_writer_bytes(const struct ergon_jls_writer *w)
{
	return w->end;
}

int64_t ergon_jls_utc_from_unix(int64_t sec, long nsec)
{
	const int64_t epoch_2018 = 1514764800;
	int64_t s = sec - epoch_2018;
	return s * ((int64_t)1 << 30) + (int64_t)(((double)nsec * 1e-9) * (double)(1 << 30));
}

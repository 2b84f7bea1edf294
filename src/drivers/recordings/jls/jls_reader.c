/* The streaming JLS reader: walks chunk headers in file order over a
 * random-access source and keeps one decoded DATA chunk per streamed
 * signal, so memory does not depend on the file's length. */
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/jls.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the JLS reader decodes f32 samples by copying little-endian bytes"
#endif

/* Largest DATA chunk we decode (entries); the JS220 writer uses 8192 f32 or
 * 65536 u1 entries. Bounds memory per streamed signal. */
#define JLS_ENTRIES_MAX (1u << 22)
/* Warnings kept: a file of many damaged chunks must not grow the list forever. */
#define WARNINGS_MAX 64
/* Only definitions are read during open; they are small. */
#define JLS_DEF_PAYLOAD_MAX (1u << 16)

struct fd_ctx {
	int fd;
};

/* The file stays open for the reader's lifetime, owned by the reader. */
struct jls_file {
	struct fd_ctx fd;
	char name[512];
};

#define HDR_CACHE_BITS 8
#define HDR_CACHE_SLOTS (1u << HDR_CACHE_BITS)

struct ergon_jls_reader {
	struct ergon_jls_source src;
	struct ergon_jls_signal signals[ERGON_JLS_SIGNAL_MAX];
	char source_name[64], vendor[64], model[64], serial[64];
	char *note;	     /* the first USER_DATA note of JSON storage (malloc'd), or NULL */
	uint64_t chunks_end; /* offset after the last intact chunk */
	uint64_t chunk_count;
	struct ergon_issue_list warnings; /* at most WARNINGS_MAX */
	struct jls_file *file_owner;	  /* set by ergon_jls_file_open */
	uint8_t undefined_warned[ERGON_JLS_SIGNAL_MAX];
	/* Per signal: the first DATA chunk's file sample id (relative index 0)
	 * and the first and last UTC entries. */
	int64_t first_sid[ERGON_JLS_SIGNAL_MAX];
	uint8_t first_sid_known[ERGON_JLS_SIGNAL_MAX];
	struct ergon_jls_utc_entry utc[ERGON_JLS_SIGNAL_MAX][2];
	uint8_t utc_count[ERGON_JLS_SIGNAL_MAX];
	/* Chunk headers read by the streaming cursors, by offset: each cursor
	 * walks every header to find its own signal's chunks, and the cursors
	 * move together, so three of every four header reads were the same
	 * 32 bytes read again (a system call each). Fixed size. */
	struct hdr_slot {
		uint64_t off; /* 0: empty (no chunk starts at 0) */
		uint8_t b[ERGON_JLS_CHUNK_HEADER_SIZE];
	} hdr_cache[HDR_CACHE_SLOTS];
};

/* The chunk header at off, from the cache or the file. */
static int hdr_read(struct ergon_jls_reader *r, uint64_t off,
		    uint8_t b[ERGON_JLS_CHUNK_HEADER_SIZE])
{
	struct hdr_slot *s = &r->hdr_cache[(off * 0x9E3779B97F4A7C15ull) >> (64 - HDR_CACHE_BITS)];
	if (s->off == off) {
		memcpy(b, s->b, ERGON_JLS_CHUNK_HEADER_SIZE);
		return 0;
	}
	int rc = r->src.read_at(r->src.ctx, off, b, ERGON_JLS_CHUNK_HEADER_SIZE);
	if (rc == 0) {
		s->off = off;
		memcpy(s->b, b, ERGON_JLS_CHUNK_HEADER_SIZE);
	}
	return rc;
}

static void warn(struct ergon_jls_reader *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(struct ergon_jls_reader *r, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->warnings.n >= WARNINGS_MAX)
		return;
	/* Out of memory: the list is short and says so (warnings.oom); the
	 * pipeline refuses such a list rather than lose a warning silently. */
	(void)ergon_issue_list_add(&r->warnings, code, NULL, 0, "%s", msg);
}

static int64_t rd_i64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return (int64_t)v;
}

/* A UTC DATA chunk: the payload header's sample id and one 64-bit JLS time
 * per entry (the writer puts one entry per chunk; the first is used). */
static void utc_data(struct ergon_jls_reader *r, const struct ergon_jls_source *src, uint64_t off,
		     const struct ergon_jls_chunk_header *h, uint64_t span, uint8_t *payload,
		     const char *where)
{
	unsigned sig = h->chunk_meta & 0xffu;
	struct ergon_err cerr = {0};
	struct ergon_jls_data d;
	if (span > JLS_DEF_PAYLOAD_MAX + 8 ||
	    src->read_at(src->ctx, off + ERGON_JLS_CHUNK_HEADER_SIZE, payload, (size_t)span) != 0 ||
	    ergon_jls_payload_check(payload, (size_t)span, h->payload_length, where, &cerr) != 0 ||
	    ergon_jls_data_decode(payload, h->payload_length, &d, where, &cerr) != 0 ||
	    d.entry_count < 1 || d.entry_size_bits != 64) {
		warn(r, "power.recording_damaged", "%s; UTC entry ignored",
		     cerr.code ? cerr.msg : where);
		return;
	}
	struct ergon_jls_utc_entry e = {.file_sample_id = d.first_sample_id,
					.utc_q30 = rd_i64(d.entries)};
	if (r->utc_count[sig] == 0) {
		r->utc[sig][0] = e;
		r->utc_count[sig] = 1;
	} else {
		r->utc[sig][1] = e;
		r->utc_count[sig] = 2;
	}
}

struct ergon_jls_cursor {
	const struct ergon_jls_signal *sig;
	uint64_t off;	  /* next chunk header to examine */
	uint8_t *payload; /* raw payload of the current chunk */
	size_t payload_cap;
	float *f32; /* f32 entries copied when the payload's are not aligned */
	size_t f32_cap;
	const float *f32v;   /* the current chunk's f32 entries: in the payload, or f32 */
	const uint8_t *bits; /* u1 entries, packed (u1 signals) */
	size_t count;	     /* entries in the current chunk */
	size_t pos;	     /* entries already streamed */
	uint64_t next_index; /* relative index expected next */
	int64_t id_offset;   /* first file sample id = relative index 0 */
	int started;
	int done;
};

static int take_field(const uint8_t *p, size_t len, size_t *at, char *dst, size_t dst_len)
{
	for (size_t i = *at; i + 1 < len; i++) {
		if (p[i] == 0 && p[i + 1] == 0x1f) {
			size_t n = i - *at;
			if (n > dst_len - 1)
				n = dst_len - 1;
			memcpy(dst, p + *at, n);
			dst[n] = 0;
			*at = i + 2;
			return 0;
		}
	}
	return -1;
}

/* SOURCE_DEF: 64 reserved bytes, then name, vendor, model, version, serial. */
static void source_def(struct ergon_jls_reader *r, const uint8_t *p, size_t len)
{
	if (len < 64)
		return;
	size_t at = 64;
	char version[64];
	if (take_field(p, len, &at, r->source_name, sizeof(r->source_name)) ||
	    take_field(p, len, &at, r->vendor, sizeof(r->vendor)) ||
	    take_field(p, len, &at, r->model, sizeof(r->model)) ||
	    take_field(p, len, &at, version, sizeof(version)) ||
	    take_field(p, len, &at, r->serial, sizeof(r->serial)))
		return;
}

int ergon_jls_reader_open(const struct ergon_jls_source *src, struct ergon_jls_reader **out,
			  struct ergon_err *err)
{
	*out = NULL;
	struct ergon_jls_reader *r = calloc(1, sizeof(*r));
	uint8_t *payload = NULL;
	int rc = 0;
	if (r == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", src->name);
	r->src = *src;
	uint8_t hdr[ERGON_JLS_HEADER_SIZE];
	if (src->size < ERGON_JLS_HEADER_SIZE) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "%s: %" PRIu64 " bytes is shorter than the 32-byte JLS header; "
				   "pass a Joulescope .jls recording",
				   src->name, src->size);
		goto fail;
	}
	rc = src->read_at(src->ctx, 0, hdr, sizeof(hdr));
	if (rc) {
		rc = ergon_err_set(err, rc, "%s: cannot read the file header", src->name);
		goto fail;
	}
	struct ergon_jls_file_header fh;
	rc = ergon_jls_file_header_decode(hdr, sizeof(hdr), &fh, src->name, err);
	if (rc)
		goto fail;
	if (fh.file_length == 0)
		warn(r, "power.recording_truncated",
		     "%s: the writer did not close the file (header length 0); reading the "
		     "intact chunks",
		     src->name);
	else if (fh.file_length != src->size)
		warn(r, "power.recording_truncated",
		     "%s: the header says %" PRIu64 " bytes but the file has %" PRIu64
		     "; reading the intact chunks",
		     src->name, fh.file_length, src->size);

	payload = malloc(JLS_DEF_PAYLOAD_MAX + 8);
	if (payload == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", src->name);
		goto fail;
	}
	uint64_t off = ERGON_JLS_HEADER_SIZE;
	int ended = 0;
	while (off + ERGON_JLS_CHUNK_HEADER_SIZE <= src->size) {
		uint8_t ch[ERGON_JLS_CHUNK_HEADER_SIZE];
		char where[600]; /* "file@offset", formatted only for a message */
#define WHERE() (snprintf(where, sizeof(where), "%s@%" PRIu64, src->name, off), where)
		struct ergon_err cerr = {0};
		struct ergon_jls_chunk_header h;
		if (src->read_at(src->ctx, off, ch, sizeof(ch)) != 0 ||
		    ergon_jls_chunk_header_decode(ch, sizeof(ch), &h, "", &cerr) != 0) {
			if (cerr.code) {
				cerr = (struct ergon_err){0};
				ergon_jls_chunk_header_decode(ch, sizeof(ch), &h, WHERE(), &cerr);
			}
			warn(r, "power.recording_damaged",
			     "%s; samples stop at the last intact chunk",
			     cerr.code ? cerr.msg : WHERE());
			break;
		}
		uint64_t span = ergon_jls_payload_span(h.payload_length);
		if (off + ERGON_JLS_CHUNK_HEADER_SIZE + span > src->size) {
			warn(r, "power.recording_truncated",
			     "%s: chunk payload of %u bytes runs past the end of the file; samples "
			     "stop at the last intact chunk",
			     WHERE(), h.payload_length);
			break;
		}
		if ((h.item_next != 0 &&
		     (h.item_next < ERGON_JLS_HEADER_SIZE || h.item_next >= src->size)) ||
		    h.item_prev >= src->size)
			warn(r, "power.recording_damaged",
			     "%s: chunk links point outside the file (next %" PRIu64
			     ", prev %" PRIu64
			     "); the reader walks chunks in order and ignores them",
			     WHERE(), h.item_next, h.item_prev);
		if (h.tag == ERGON_JLS_TAG_FSR_DATA && !r->signals[h.chunk_meta & 0xffu].defined &&
		    !r->undefined_warned[h.chunk_meta & 0xffu]) {
			r->undefined_warned[h.chunk_meta & 0xffu] = 1;
			warn(r, "power.recording_damaged",
			     "%s: DATA for signal id %u, which has no definition; ignored", WHERE(),
			     h.chunk_meta & 0xffu);
		}
		if (h.tag == ERGON_JLS_TAG_FSR_DATA && !r->first_sid_known[h.chunk_meta & 0xffu] &&
		    h.payload_length >= 16) {
			/* Only the id (CRC-checked later, when streamed): it anchors
			 * UTC entries to the streamed index. */
			uint8_t b[8];
			if (src->read_at(src->ctx, off + ERGON_JLS_CHUNK_HEADER_SIZE, b, 8) == 0) {
				r->first_sid[h.chunk_meta & 0xffu] = rd_i64(b);
				r->first_sid_known[h.chunk_meta & 0xffu] = 1;
			}
		}
		if (h.tag == ERGON_JLS_TAG_UTC_DATA)
			utc_data(r, src, off, &h, span, payload, WHERE());
		/* The first note kept as JSON text (storage type 3 in
		 * chunk_meta[15:12]), what `ergon record` writes: the instrument
		 * and its rating. A damaged one is ignored. */
		if (h.tag == ERGON_JLS_TAG_USER_DATA && r->note == NULL &&
		    ((h.chunk_meta >> 12) & 0xfu) == 3u && h.payload_length > 0 &&
		    span <= JLS_DEF_PAYLOAD_MAX + 8 &&
		    src->read_at(src->ctx, off + ERGON_JLS_CHUNK_HEADER_SIZE, payload,
				 (size_t)span) == 0 &&
		    ergon_jls_payload_check(payload, (size_t)span, h.payload_length, WHERE(),
					    &cerr) == 0) {
			r->note = malloc(h.payload_length + 1u);
			if (r->note) {
				memcpy(r->note, payload, h.payload_length);
				r->note[h.payload_length] = '\0';
			}
		}
		cerr = (struct ergon_err){0};
		if (h.tag == ERGON_JLS_TAG_SIGNAL_DEF || h.tag == ERGON_JLS_TAG_SOURCE_DEF) {
			if (span > JLS_DEF_PAYLOAD_MAX + 8) {
				warn(r, "power.recording_damaged",
				     "%s: definition payload of %u bytes is implausibly long; "
				     "ignored",
				     WHERE(), h.payload_length);
			} else if (src->read_at(src->ctx, off + ERGON_JLS_CHUNK_HEADER_SIZE,
						payload, (size_t)span) != 0 ||
				   ergon_jls_payload_check(payload, (size_t)span, h.payload_length,
							   WHERE(), &cerr) != 0) {
				warn(r, "power.recording_damaged", "%s; samples stop here",
				     cerr.code ? cerr.msg : WHERE());
				break;
			} else if (h.tag == ERGON_JLS_TAG_SOURCE_DEF) {
				if ((h.chunk_meta & 0xff) != 0)
					source_def(r, payload, h.payload_length);
			} else {
				struct ergon_jls_signal s;
				if (ergon_jls_signal_def_decode(payload, h.payload_length,
								(uint16_t)(h.chunk_meta & 0xffu),
								&s, WHERE(), &cerr) != 0)
					warn(r, "power.recording_damaged", "%s; definition ignored",
					     cerr.msg);
				else
					r->signals[s.signal_id] = s;
			}
		}
		off += ERGON_JLS_CHUNK_HEADER_SIZE + span;
		r->chunk_count++;
		if (h.tag == ERGON_JLS_TAG_END) {
			ended = 1;
			break;
		}
	}
#undef WHERE
	r->chunks_end = off;
	if (!ended && r->warnings.n == 0)
		warn(r, "power.recording_truncated",
		     "%s: no END chunk; the recording was cut short after %" PRIu64 " bytes",
		     src->name, off);
	free(payload);
	*out = r;
	return 0;
fail:
	free(payload);
	ergon_jls_reader_free(r);
	return rc;
}

void ergon_jls_reader_free(struct ergon_jls_reader *r)
{
	if (r == NULL)
		return;
	ergon_issue_list_cleanup(&r->warnings);
	free(r->note);
	if (r->file_owner != NULL) {
		close(r->file_owner->fd.fd);
		free(r->file_owner);
	}
	free(r);
}

const char *ergon_jls_reader_note(const struct ergon_jls_reader *r)
{
	return r->note;
}

const struct ergon_jls_signal *ergon_jls_reader_signal(const struct ergon_jls_reader *r,
						       const char *name)
{
	for (size_t i = 1; i < ERGON_JLS_SIGNAL_MAX; i++)
		if (r->signals[i].defined && strcmp(r->signals[i].name, name) == 0)
			return &r->signals[i];
	return NULL;
}

const char *ergon_jls_reader_source_field(const struct ergon_jls_reader *r, const char *field)
{
	if (strcmp(field, "name") == 0)
		return r->source_name;
	if (strcmp(field, "vendor") == 0)
		return r->vendor;
	if (strcmp(field, "model") == 0)
		return r->model;
	if (strcmp(field, "serial") == 0)
		return r->serial;
	return "";
}

const struct ergon_issue_list *ergon_jls_reader_warnings(const struct ergon_jls_reader *r)
{
	return &r->warnings;
}

const struct ergon_jls_source *ergon_jls_reader_source(const struct ergon_jls_reader *r)
{
	return &r->src;
}

uint64_t ergon_jls_reader_chunks_end(const struct ergon_jls_reader *r)
{
	return r->chunks_end;
}

uint32_t ergon_jls_reader_sample_rate(const struct ergon_jls_reader *r)
{
	const struct ergon_jls_signal *s = ergon_jls_reader_signal(r, "current");
	return s ? s->sample_rate_hz : 0;
}

static void cursor_free(struct ergon_jls_cursor *c)
{
	free(c->payload);
	free(c->f32);
}

/* Load the cursor's next DATA chunk. Sets done at the end of the intact
 * chunks or at the first damaged, inconsistent or out-of-order chunk. */
static int cursor_advance(struct ergon_jls_reader *r, struct ergon_jls_cursor *c,
			  struct ergon_err *err)
{
	const struct ergon_jls_source *src = &r->src;
	while (c->off + ERGON_JLS_CHUNK_HEADER_SIZE <= r->chunks_end) {
		uint8_t ch[ERGON_JLS_CHUNK_HEADER_SIZE];
		/* "file@offset" for messages, formatted only when one is made
		 * (a recording has thousands of chunks; the decoders are run
		 * again with it to word their message). */
		char where[600];
		uint64_t at = c->off;
#define WHERE() (snprintf(where, sizeof(where), "%s@%" PRIu64, src->name, at), where)
		struct ergon_err cerr = {0};
		struct ergon_jls_chunk_header h;
		int rc = hdr_read(r, c->off, ch);
		if (rc)
			return ergon_err_set(err, rc, "%s: read failed", WHERE());
		if (ergon_jls_chunk_header_decode(ch, sizeof(ch), &h, "", &cerr) != 0) {
			cerr = (struct ergon_err){0};
			ergon_jls_chunk_header_decode(ch, sizeof(ch), &h, WHERE(), &cerr);
			/* The file changed under us since open; stop cleanly. */
			warn(r, "power.recording_damaged", "%s", cerr.msg);
			break;
		}
		uint64_t span = ergon_jls_payload_span(h.payload_length);
		uint64_t here = c->off;
		c->off += ERGON_JLS_CHUNK_HEADER_SIZE + span;
		if (h.tag != ERGON_JLS_TAG_FSR_DATA ||
		    (h.chunk_meta & 0xffu) != c->sig->signal_id || (h.chunk_meta >> 12) != 0)
			continue;
		if (span > c->payload_cap) {
			uint8_t *p = realloc(c->payload, (size_t)span);
			if (p == NULL)
				return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
						     WHERE());
			c->payload = p;
			c->payload_cap = (size_t)span;
		}
		rc = src->read_at(src->ctx, here + ERGON_JLS_CHUNK_HEADER_SIZE, c->payload,
				  (size_t)span);
		if (rc)
			return ergon_err_set(err, rc, "%s: read failed", WHERE());
		struct ergon_jls_data d;
		if (ergon_jls_payload_check(c->payload, (size_t)span, h.payload_length, "",
					    &cerr) != 0 ||
		    ergon_jls_data_decode(c->payload, h.payload_length, &d, "", &cerr) != 0) {
			cerr = (struct ergon_err){0};
			if (ergon_jls_payload_check(c->payload, (size_t)span, h.payload_length,
						    WHERE(), &cerr) == 0)
				ergon_jls_data_decode(c->payload, h.payload_length, &d, where,
						      &cerr);
			warn(r, "power.recording_damaged",
			     "%s; signal '%s' stops at sample %" PRIu64, cerr.msg, c->sig->name,
			     c->next_index);
			break;
		}
		unsigned want_bits = (c->sig->data_type >> 8) & 0xffu;
		if (d.entry_size_bits != want_bits || d.entry_count > JLS_ENTRIES_MAX) {
			warn(r, "power.recording_damaged",
			     "%s: DATA for '%s' has %u entries of %u bits, expected at most %u of "
			     "%u; signal stops at sample %" PRIu64,
			     WHERE(), c->sig->name, d.entry_count, d.entry_size_bits,
			     JLS_ENTRIES_MAX, want_bits, c->next_index);
			break;
		}
		if (!c->started) {
			/* The first sample id written is the signal's offset. */
			c->id_offset = d.first_sample_id;
			c->started = 1;
		}
		int64_t rel = (int64_t)((uint64_t)d.first_sample_id - (uint64_t)c->id_offset);
		if (rel != (int64_t)c->next_index) {
			warn(r, "power.recording_sample_gap",
			     "%s: '%s' jumps from sample %" PRIu64 " to %" PRId64
			     " (time %s); samples stop at the jump",
			     WHERE(), c->sig->name, c->next_index, rel,
			     rel < (int64_t)c->next_index ? "goes backwards" : "has a gap");
			break;
		}
		if (d.entry_count == 0)
			continue;
		if (c->sig->data_type == ERGON_JLS_DT_F32 &&
		    (uintptr_t)d.entries % _Alignof(float) == 0) {
			/* Little-endian f32 as the host's (x86-64, AArch64): used in
			 * place, without a copy per chunk. */
			c->f32v = (const float *)(const void *)d.entries;
		} else if (c->sig->data_type == ERGON_JLS_DT_F32) {
			if (d.entry_count > c->f32_cap) {
				float *f = realloc(c->f32, (size_t)d.entry_count * sizeof(float));
				if (f == NULL)
					return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
							     WHERE());
				c->f32 = f;
				c->f32_cap = d.entry_count;
			}
			memcpy(c->f32, d.entries, (size_t)d.entry_count * sizeof(float));
			c->f32v = c->f32;
		} else {
			c->bits = d.entries;
		}
		c->count = d.entry_count;
		c->pos = 0;
		return 0;
	}
#undef WHERE
	c->done = 1;
	c->count = 0;
	c->pos = 0;
	return 0;
}

/* Cursors: 0 current, 1 voltage, 2 power, 3 the gate, 4.. the lines. */
#define STREAM_CURSORS (4 + (int)ERGON_JLS_LINES_MAX)

static int stream(struct ergon_jls_reader *r, const char *gate_signal, const char *const *lines,
		  size_t n_lines, ergon_jls_block_fn fn, void *ctx, struct ergon_err *err)
{
	const char *names[STREAM_CURSORS] = {"current", "voltage", "power", gate_signal};
	struct ergon_jls_cursor cur[STREAM_CURSORS];
	int used[STREAM_CURSORS] = {0};
	int rc = 0;
	memset(cur, 0, sizeof(cur));
	if (n_lines > ERGON_JLS_LINES_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: %zu digital lines asked, at most %u",
				     r->src.name, n_lines, ERGON_JLS_LINES_MAX);
	for (size_t k = 0; k < n_lines; k++)
		names[4 + k] = lines[k];
	for (int i = 0; i < STREAM_CURSORS; i++) {
		if (names[i] == NULL)
			continue;
		const struct ergon_jls_signal *s = ergon_jls_reader_signal(r, names[i]);
		if (s == NULL) {
			if (i < 2) {
				rc = ergon_err_set(err, ERGON_EPARSE,
						   "%s: no '%s' signal is defined; a Joulescope "
						   "recording has current and voltage",
						   r->src.name, names[i]);
				goto out;
			}
			continue;
		}
		uint32_t want = i < 3 ? ERGON_JLS_DT_F32 : ERGON_JLS_DT_U1;
		if (s->data_type != want || s->signal_type != 0) {
			rc = ergon_err_set(
			    err, ERGON_ENOTSUP,
			    "%s: signal '%s' has data type 0x%04x (type %u); ergon reads "
			    "it as %s FSR (0x%04x)",
			    r->src.name, names[i], s->data_type, s->signal_type,
			    i < 3 ? "f32" : "u1", want);
			goto out;
		}
		if (i > 0 && s->sample_rate_hz != cur[0].sig->sample_rate_hz) {
			rc = ergon_err_set(err, ERGON_ENOTSUP,
					   "%s: signal '%s' runs at %u Hz but current at %u Hz; "
					   "mixed rates are not supported",
					   r->src.name, names[i], s->sample_rate_hz,
					   cur[0].sig->sample_rate_hz);
			goto out;
		}
		cur[i].sig = s;
		cur[i].off = ERGON_JLS_HEADER_SIZE;
		used[i] = 1;
	}
	if (cur[0].sig->sample_rate_hz == 0) {
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: signal 'current' has sample rate 0",
				   r->src.name);
		goto out;
	}
	/* Every streamed signal must start at the same sample id, or sample k
	 * of one is not sample k of another. */
	for (int i = 0; i < STREAM_CURSORS; i++) {
		if (!used[i])
			continue;
		rc = cursor_advance(r, &cur[i], err);
		if (rc)
			goto out;
		if (cur[i].started && cur[0].started && cur[i].id_offset != cur[0].id_offset) {
			rc = ergon_err_set(err, ERGON_EPARSE,
					   "%s: signal '%s' starts at sample id %lld but 'current' "
					   "at %lld; the recording's signals are not aligned",
					   r->src.name, names[i], (long long)cur[i].id_offset,
					   (long long)cur[0].id_offset);
			goto out;
		}
	}
	uint64_t index = 0;
	for (;;) {
		size_t n = SIZE_MAX;
		for (int i = 0; i < STREAM_CURSORS; i++) {
			if (!used[i])
				continue;
			if (cur[i].pos == cur[i].count && !cur[i].done) {
				rc = cursor_advance(r, &cur[i], err);
				if (rc)
					goto out;
			}
			if (cur[i].done) {
				n = 0;
				break;
			}
			if (cur[i].count - cur[i].pos < n)
				n = cur[i].count - cur[i].pos;
		}
		if (n == 0 || n == SIZE_MAX)
			break;
		struct ergon_jls_block b = {
		    .first_index = index,
		    .n = n,
		    .current_a = cur[0].f32v + cur[0].pos,
		    .voltage_v = cur[1].f32v + cur[1].pos,
		    .power_w = used[2] ? cur[2].f32v + cur[2].pos : NULL,
		    .gate_bits = used[3] ? cur[3].bits : NULL,
		    .gate_bit0 = used[3] ? cur[3].pos : 0,
		};
		for (size_t k = 0; k < n_lines; k++) {
			b.line_bits[k] = used[4 + k] ? cur[4 + k].bits : NULL;
			b.line_bit0[k] = used[4 + k] ? cur[4 + k].pos : 0;
		}
		rc = fn(ctx, &b, err);
		if (rc)
			goto out;
		for (int i = 0; i < STREAM_CURSORS; i++) {
			if (used[i]) {
				cur[i].pos += n;
				cur[i].next_index += n;
			}
		}
		index += n;
	}
out:
	for (int i = 0; i < STREAM_CURSORS; i++)
		cursor_free(&cur[i]);
	return rc;
}

int ergon_jls_reader_stream(struct ergon_jls_reader *r, const char *gate_signal,
			    ergon_jls_block_fn fn, void *ctx, struct ergon_err *err)
{
	return stream(r, gate_signal, NULL, 0, fn, ctx, err);
}

int ergon_jls_reader_stream_lines(struct ergon_jls_reader *r, const char *const *lines,
				  size_t n_lines, ergon_jls_block_fn fn, void *ctx,
				  struct ergon_err *err)
{
	return stream(r, NULL, lines, n_lines, fn, ctx, err);
}

static int fd_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct fd_ctx *f = ctx;
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t got = pread(f->fd, p, len, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return ergon_err_from_errno(errno);
		}
		if (got == 0)
			return ERGON_EIO;
		p += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

int ergon_jls_file_open(const char *path, struct ergon_jls_reader **out, struct ergon_err *err)
{
	*out = NULL;
	struct jls_file *jf = calloc(1, sizeof(*jf));
	if (jf == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	snprintf(jf->name, sizeof(jf->name), "%s", path);
	/* A recording is read by offset: a regular file only; a FIFO never
	 * blocks the open. */
	int orc = ergon_open_input(path, "the recording", 0, &jf->fd.fd, err);
	if (orc) {
		free(jf);
		return orc;
	}
	struct stat st;
	if (fstat(jf->fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(jf->fd.fd);
		free(jf);
		return ergon_err_set(err, ERGON_EIO, "%s: not a regular file", path);
	}
	struct ergon_jls_source src = {
	    .read_at = fd_read_at, .ctx = &jf->fd, .size = (uint64_t)st.st_size, .name = jf->name};
	int rc = ergon_jls_reader_open(&src, out, err);
	if (rc) {
		close(jf->fd.fd);
		free(jf);
		return rc;
	}
	(*out)->file_owner = jf;
	return 0;
}

size_t ergon_jls_reader_utc(const struct ergon_jls_reader *r, const char *signal,
			    struct ergon_jls_utc_entry out[2])
{
	const struct ergon_jls_signal *s = ergon_jls_reader_signal(r, signal);
	if (s == NULL)
		return 0;
	size_t n = r->utc_count[s->signal_id];
	for (size_t i = 0; i < n; i++) {
		out[i] = r->utc[s->signal_id][i];
		/* Without a DATA chunk the file id is the only id there is. */
		out[i].sample_id =
		    out[i].file_sample_id -
		    (r->first_sid_known[s->signal_id] ? r->first_sid[s->signal_id] : 0);
	}
	return n;
}

int ergon_jls_reader_start_utc(const struct ergon_jls_reader *r, int64_t *utc_q30)
{
	struct ergon_jls_utc_entry e[2];
	const struct ergon_jls_signal *s = ergon_jls_reader_signal(r, "current");
	if (ergon_jls_reader_utc(r, "current", e) == 0 || s == NULL || s->sample_rate_hz == 0)
		return ERGON_ENOENT;
	/* Back from the first entry to sample 0 at the nominal rate. */
	double back_q30 = (double)e[0].sample_id / (double)s->sample_rate_hz * 1073741824.0;
	*utc_q30 = e[0].utc_q30 - (int64_t)llround(back_q30);
	return 0;
}

int ergon_jls_utc_iso(int64_t utc_q30, char *buf, size_t n)
{
	/* 2018-01-01T00:00:00Z as a Unix time. */
	const int64_t epoch_2018 = 1514764800;
	const int64_t one = INT64_C(1) << 30;
	int64_t sec = utc_q30 / one, frac = utc_q30 % one;
	if (frac < 0) { /* floor, for times before 2018 */
		sec--;
		frac += one;
	}
	int64_t us = (frac * 1000000 + (INT64_C(1) << 29)) >> 30;
	if (us >= 1000000) {
		sec++;
		us -= 1000000;
	}
	time_t t = (time_t)(epoch_2018 + sec);
	struct tm tm;
	if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0)
		return ERGON_ERANGE;
	int w = snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)us);
	return w < 0 || (size_t)w >= n ? ERGON_ERANGE : 0;
}

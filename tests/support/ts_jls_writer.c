/* The test JLS writer (see ts_jls_writer.h). Layout and CRC rules follow
 * include/ergon/jls.h; the CRC here is an independent bitwise
 * implementation so a reader bug in the table version cannot hide. */
#include "ts_jls_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t ts_crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void ts_jls_reseal_header(uint8_t *file, size_t off)
{
	put_u32(file + off + 28, ts_crc32c(file + off, 28));
}

struct w {
	ts_jls_sink sink;
	void *ctx;
	uint64_t off, prev;
	int rc;
	uint32_t prev_len;
};

static void emit(struct w *w, const void *b, size_t n)
{
	if (w->rc == 0 && n > 0)
		w->rc = w->sink(w->ctx, b, n);
	w->off += n;
}

static void chunk(struct w *w, uint8_t tag, uint16_t meta, const uint8_t *payload, uint32_t len)
{
	uint8_t h[32];
	memset(h, 0, sizeof(h));
	uint64_t span = len ? ((uint64_t)len + 4u + 7u) & ~(uint64_t)7u : 0;
	put_u64(h, 0); /* item_next: the reader does not follow links */
	put_u64(h + 8, w->prev);
	h[16] = tag;
	put_u16(h + 18, meta);
	put_u32(h + 20, len);
	put_u32(h + 24, w->prev_len);
	put_u32(h + 28, ts_crc32c(h, 28));
	w->prev = w->off;
	w->prev_len = len;
	emit(w, h, 32);
	if (len) {
		emit(w, payload, len);
		uint8_t pad[8] = {0};
		emit(w, pad, (size_t)(span - len - 4));
		uint8_t crc[4];
		put_u32(crc, ts_crc32c(payload, len));
		emit(w, crc, 4);
	}
}

static uint32_t str_field(uint8_t *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	p[n] = 0;
	p[n + 1] = 0x1f;
	return (uint32_t)n + 2;
}

static void signal_def(struct w *w, uint16_t id, uint32_t dtype, uint32_t rate, uint32_t spd,
		       const char *name, const char *units)
{
	uint8_t p[200];
	memset(p, 0, sizeof(p));
	put_u16(p, 1); /* source 1 */
	p[2] = 0;      /* FSR */
	put_u32(p + 4, dtype);
	put_u32(p + 8, rate);
	put_u32(p + 12, spd);
	uint32_t n = 128;
	n += str_field(p + n, name);
	n += str_field(p + n, units);
	chunk(w, 0x02, id, p, n);
}

int ts_jls_write_sink(const struct ts_jls_spec *s, ts_jls_sink sink, void *sink_ctx,
		      uint64_t *total)
{
	struct w w = {.sink = sink, .ctx = sink_ctx};
	uint8_t fh[32] = {0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a,
			  0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c};
	/* Length is unknown until the end; a streaming writer that cannot seek
	 * leaves 0 (as an unclosed file), the caller may patch it. */
	put_u64(fh + 16, 0);
	put_u32(fh + 24, 1);
	put_u32(fh + 28, ts_crc32c(fh, 28));
	emit(&w, fh, 32);
	uint8_t src[160];
	memset(src, 0, sizeof(src));
	uint32_t n = 64;
	n += str_field(src + n, "JS220-000001");
	n += str_field(src + n, "Jetperch");
	n += str_field(src + n, "JS220");
	n += str_field(src + n, "");
	n += str_field(src + n, "000001");
	chunk(&w, 0x01, 1, src, n);
	uint32_t spd = s->samples_per_data ? s->samples_per_data : 1024;
	signal_def(&w, 1, 0x2004, s->rate_hz, spd, "current", "A");
	signal_def(&w, 2, 0x2004, s->rate_hz, spd, "voltage", "V");
	if (s->with_power)
		signal_def(&w, 3, 0x2004, s->rate_hz, spd, "power", "W");
	if (s->with_gate)
		signal_def(&w, 4, s->gate_data_type ? s->gate_data_type : 0x0103, s->rate_hz,
			   spd * 8, "gpi[0]", "");
	uint8_t *buf = malloc(16 + (size_t)spd * 8 * 4);
	if (buf == NULL)
		return -1;
	uint64_t chunk_no = 0;
	for (uint64_t k0 = 0; k0 < s->samples && w.rc == 0; k0 += spd, chunk_no++) {
		uint32_t cnt = (uint32_t)(s->samples - k0 < spd ? s->samples - k0 : spd);
		for (int sig = 1; sig <= 3; sig++) {
			if (sig == 3 && !s->with_power)
				continue;
			int64_t id = s->sample_id_offset + (int64_t)k0;
			if (sig == 1 && s->backwards_at_chunk > 0 &&
			    chunk_no == (uint64_t)s->backwards_at_chunk)
				id -= spd;
			put_u64(buf, (uint64_t)id);
			put_u32(buf + 8, cnt);
			put_u16(buf + 12, 32);
			put_u16(buf + 14, 0);
			for (uint32_t j = 0; j < cnt; j++) {
				double i = s->current_a(k0 + j, s->ctx);
				double v = s->voltage_v(k0 + j, s->ctx);
				float f = sig == 1   ? (float)i
					  : sig == 2 ? (float)v
						     : (float)i * (float)v;
				memcpy(buf + 16 + 4 * j, &f, 4);
			}
			chunk(&w, 0x22, (uint16_t)sig, buf, 16 + 4 * cnt);
		}
		/* u1 chunks cover 8 f32 chunks, written after the eighth. */
		uint64_t gspd = (uint64_t)spd * 8;
		uint64_t gstart = k0 - k0 % gspd;
		if (s->with_gate && (k0 + cnt == s->samples || (k0 + cnt) % gspd == 0)) {
			uint32_t gcnt = (uint32_t)(k0 + cnt - gstart);
			put_u64(buf, (uint64_t)(s->sample_id_offset + (int64_t)gstart));
			put_u32(buf + 8, gcnt);
			put_u16(buf + 12, 1);
			put_u16(buf + 14, 0);
			memset(buf + 16, 0, (gcnt + 7) / 8);
			for (uint32_t j = 0; j < gcnt; j++)
				if (s->gate(gstart + j, s->ctx))
					buf[16 + j / 8] |= (uint8_t)(1u << (j % 8));
			chunk(&w, 0x22, 4, buf, 16 + (gcnt + 7) / 8);
		}
	}
	free(buf);
	if (!s->no_end)
		chunk(&w, 0xff, 0, NULL, 0);
	if (total)
		*total = w.off;
	return w.rc;
}

static int file_sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

int ts_jls_write_file(const char *path, const struct ts_jls_spec *s)
{
	FILE *f = fopen(path, "w+b");
	if (f == NULL)
		return -1;
	uint64_t total = 0;
	int rc = ts_jls_write_sink(s, file_sink, f, &total);
	if (rc == 0 && !s->no_end) {
		/* Closed cleanly: patch the length into the header. */
		uint8_t fh[32];
		if (fseek(f, 0, SEEK_SET) != 0 || fread(fh, 1, 32, f) != 32)
			rc = -1;
		put_u64(fh + 16, total);
		put_u32(fh + 28, ts_crc32c(fh, 28));
		if (rc == 0 && (fseek(f, 0, SEEK_SET) != 0 || fwrite(fh, 1, 32, f) != 32))
			rc = -1;
	}
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

struct mem {
	uint8_t *p;
	size_t len, cap;
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
	struct mem *m = ctx;
	if (m->len + len > m->cap) {
		size_t cap = (m->cap ? m->cap * 2 : 4096) + len;
		uint8_t *p = realloc(m->p, cap);
		if (p == NULL)
			return -1;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

uint8_t *ts_jls_build(const struct ts_jls_spec *s, size_t *len)
{
	struct mem m = {0};
	uint64_t total = 0;
	if (ts_jls_write_sink(s, mem_sink, &m, &total) != 0) {
		free(m.p);
		return NULL;
	}
	if (!s->no_end) {
		put_u64(m.p + 16, total);
		put_u32(m.p + 28, ts_crc32c(m.p, 28));
	}
	*len = m.len;
	return m.p;
}

/* Bounded flatbuffer reader: every offset, vtable and length is checked
 * against the buffer before it is followed, in 64-bit arithmetic so no sum
 * can wrap. Offsets to tables, vectors and strings are unsigned and point
 * forward, so following them cannot loop; vector lengths are capped by the
 * caller's maximum and by the bytes left. */
#include "ergon/ert_fmt.h"
#include "tfl_internal.h"

uint16_t tfl_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

uint32_t tfl_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

uint64_t tfl_rd64(const uint8_t *p)
{
	return (uint64_t)tfl_rd32(p) | ((uint64_t)tfl_rd32(p + 4) << 32);
}

float tfl_rdf32(const uint8_t *p)
{
	union {
		uint32_t u;
		float f;
	} v;
	v.u = tfl_rd32(p);
	return v.f;
}

static void head(struct ert_buf *b, const struct tfl_tab *t, const char *field)
{
	if (t != NULL) {
		ert_buf_str(b, t->name);
		if (t->index >= 0) {
			ert_buf_char(b, '[');
			ert_buf_i64(b, t->index);
			ert_buf_char(b, ']');
		}
		if (field != NULL) {
			ert_buf_char(b, '.');
			ert_buf_str(b, field);
		}
		ert_buf_str(b, ": ");
	}
}

int tfl_failn(struct tfl_fb *fb, int code, const struct tfl_tab *t, const char *field,
	      const char *what, int64_t n, const char *tail, uint32_t at)
{
	struct ert_tfl_err *e = fb->err;
	if (e == NULL || e->code != 0)
		return code;
	struct ert_buf b;
	ert_buf_init(&b, e->msg, sizeof e->msg);
	head(&b, t, field);
	ert_buf_str(&b, what);
	ert_buf_i64(&b, n);
	ert_buf_str(&b, tail);
	if (at != UINT32_MAX) {
		ert_buf_str(&b, " (byte offset ");
		ert_buf_u64(&b, at);
		ert_buf_char(&b, ')');
	}
	e->code = code;
	return code;
}

int tfl_fail(struct tfl_fb *fb, int code, const struct tfl_tab *t, const char *field,
	     const char *what, uint32_t at)
{
	struct ert_tfl_err *e = fb->err;
	if (e == NULL || e->code != 0)
		return code;
	struct ert_buf b;
	ert_buf_init(&b, e->msg, sizeof e->msg);
	head(&b, t, field);
	ert_buf_str(&b, what);
	if (at != UINT32_MAX) {
		ert_buf_str(&b, " (byte offset ");
		ert_buf_u64(&b, at);
		ert_buf_char(&b, ')');
	}
	e->code = code;
	return code;
}

static int fits(const struct tfl_fb *fb, uint64_t pos, uint64_t n)
{
	return pos <= fb->len && n <= (uint64_t)fb->len - pos;
}

int tfl_table_at(struct tfl_fb *fb, uint32_t pos, const char *name, int32_t index,
		 struct tfl_tab *t)
{
	t->pos = pos;
	t->name = name;
	t->index = index;
	t->vt = 0;
	t->vt_len = 0;
	t->tab_len = 0;
	if ((pos & 3u) != 0 || !fits(fb, pos, 4))
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, NULL,
				"table offset is misaligned or past the end of the model", pos);
	int64_t vt = (int64_t)pos - (int64_t)(int32_t)tfl_rd32(fb->p + pos);
	if (vt < 0 || (vt & 1) != 0 || !fits(fb, (uint64_t)vt, 4))
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, NULL,
				"vtable offset points outside the model", pos);
	uint16_t vt_len = tfl_rd16(fb->p + vt);
	uint16_t tab_len = tfl_rd16(fb->p + vt + 2);
	if (vt_len < 4 || (vt_len & 1u) != 0 || !fits(fb, (uint64_t)vt, vt_len))
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, NULL,
				"vtable length is odd, below 4 or runs past the end", (uint32_t)vt);
	if (tab_len < 4 || !fits(fb, pos, tab_len))
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, NULL,
				"table length is below 4 or runs past the end of the model", pos);
	t->vt = (uint32_t)vt;
	t->vt_len = vt_len;
	t->tab_len = tab_len;
	return ERT_TFL_OK;
}

int tfl_root(struct tfl_fb *fb, struct tfl_tab *root)
{
	static const struct tfl_tab file = {0, 0, 0, 0, "Model", -1};
	if (fb->len < 8)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, &file, NULL, "file is ", fb->len,
				 " bytes: too short for a flatbuffer (at least 8)", UINT32_MAX);
	if (fb->p[4] != 'T' || fb->p[5] != 'F' || fb->p[6] != 'L' || fb->p[7] != '3')
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, &file, NULL,
				"file identifier is not \"TFL3\": not a TFLite model (schema v3)",
				4);
	return tfl_table_at(fb, tfl_rd32(fb->p), "Model", -1, root);
}

/* Position of a field of `size` bytes, 0 when absent. */
static int field_pos(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
		     uint32_t size, uint32_t *pos)
{
	*pos = 0;
	uint32_t e = 4u + 2u * slot;
	if (e + 2u > t->vt_len)
		return ERT_TFL_OK;
	uint16_t off = tfl_rd16(fb->p + t->vt + e);
	if (off == 0)
		return ERT_TFL_OK;
	if ((uint32_t)off + size > t->tab_len)
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, field, "field lies outside its table",
				t->pos + off);
	*pos = t->pos + off;
	return ERT_TFL_OK;
}

int tfl_u8(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	   uint8_t def, uint8_t *out)
{
	uint32_t p;
	int rc = field_pos(fb, t, slot, field, 1, &p);
	*out = p ? fb->p[p] : def;
	return rc;
}

int tfl_i32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    int32_t def, int32_t *out)
{
	uint32_t p;
	int rc = field_pos(fb, t, slot, field, 4, &p);
	*out = p ? (int32_t)tfl_rd32(fb->p + p) : def;
	return rc;
}

int tfl_u32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    uint32_t def, uint32_t *out)
{
	uint32_t p;
	int rc = field_pos(fb, t, slot, field, 4, &p);
	*out = p ? tfl_rd32(fb->p + p) : def;
	return rc;
}

int tfl_u64(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    uint64_t def, uint64_t *out)
{
	uint32_t p;
	int rc = field_pos(fb, t, slot, field, 8, &p);
	*out = p ? tfl_rd64(fb->p + p) : def;
	return rc;
}

int tfl_f32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field, float def,
	    float *out)
{
	uint32_t p;
	int rc = field_pos(fb, t, slot, field, 4, &p);
	*out = p ? tfl_rdf32(fb->p + p) : def;
	return rc;
}

/* Follow the uoffset stored at field position p. */
static int follow(struct tfl_fb *fb, const struct tfl_tab *t, const char *field, uint32_t p,
		  uint32_t *target)
{
	uint64_t to = (uint64_t)p + tfl_rd32(fb->p + p);
	if (!fits(fb, to, 4))
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, t, field,
				"offset points past the end of the model", p);
	*target = (uint32_t)to;
	return ERT_TFL_OK;
}

int tfl_vector(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	       uint32_t elem_size, uint32_t max_n, struct tfl_vec *v)
{
	v->pos = 0;
	v->n = 0;
	v->present = 0;
	uint32_t p = 0, to = 0;
	int rc = field_pos(fb, t, slot, field, 4, &p);
	if (rc != 0 || p == 0)
		return rc;
	rc = follow(fb, t, field, p, &to);
	if (rc != 0)
		return rc;
	uint32_t n = tfl_rd32(fb->p + to);
	if (n > max_n)
		return tfl_failn(fb, ERT_TFL_E_LIMIT, t, field, "vector of ", n,
				 " elements is longer than this field allows", to);
	if (!fits(fb, (uint64_t)to + 4, (uint64_t)n * elem_size))
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, t, field, "vector of ", n,
				 " elements runs past the end of the model", to);
	v->pos = to + 4;
	v->n = n;
	v->present = 1;
	return ERT_TFL_OK;
}

int tfl_vec_table(struct tfl_fb *fb, const struct tfl_vec *v, uint32_t i, const char *name,
		  struct tfl_tab *out)
{
	uint32_t p = v->pos + 4u * i; /* checked by tfl_vector: i < n */
	uint64_t to = (uint64_t)p + tfl_rd32(fb->p + p);
	if (to > UINT32_MAX) {
		struct tfl_tab t = {0, 0, 0, 0, name, (int32_t)i};
		*out = t;
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, &t, NULL,
				"offset points past the end of the model", p);
	}
	return tfl_table_at(fb, (uint32_t)to, name, (int32_t)i, out);
}

int tfl_subtable(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
		 const char *name, struct tfl_tab *out, int *present)
{
	*present = 0;
	uint32_t p = 0, to = 0;
	int rc = field_pos(fb, t, slot, field, 4, &p);
	if (rc != 0 || p == 0)
		return rc;
	rc = follow(fb, t, field, p, &to);
	if (rc != 0)
		return rc;
	*present = 1;
	return tfl_table_at(fb, to, name, t->index, out);
}

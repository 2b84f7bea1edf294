/* TFLite flatbuffer writer for tests (see tfl_builder.h). */
#include "tfl_builder.h"

#include <stdlib.h>
#include <string.h>

struct tw {
	uint8_t *b;
	size_t len, cap;
};

static void grow(struct tw *w, size_t n)
{
	if (w->len + n > w->cap) {
		while (w->len + n > w->cap)
			w->cap = w->cap ? w->cap * 2 : 4096;
		w->b = realloc(w->b, w->cap);
	}
}

static void align(struct tw *w, size_t a)
{
	while (w->len % a) {
		grow(w, 1);
		w->b[w->len++] = 0;
	}
}

static void put32(struct tw *w, size_t at, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		w->b[at + (size_t)k] = (uint8_t)(v >> (8 * k));
}

static void put16(struct tw *w, size_t at, uint16_t v)
{
	w->b[at] = (uint8_t)v;
	w->b[at + 1] = (uint8_t)(v >> 8);
}

/* A table of n slots; returns its position. */
static size_t table(struct tw *w, unsigned n)
{
	align(w, 4);
	size_t vt = w->len;
	size_t vt_len = 4 + 2 * n;
	size_t vt_pad = (vt_len + 3) & ~(size_t)3;
	grow(w, vt_pad + 4 + 8 * n);
	memset(w->b + vt, 0, vt_pad + 4 + 8 * n);
	put16(w, vt, (uint16_t)vt_len);
	put16(w, vt + 2, (uint16_t)(4 + 8 * n));
	size_t pos = vt + vt_pad;
	put32(w, pos, (uint32_t)(pos - vt));
	w->len = pos + 4 + 8 * n;
	return pos;
}

static size_t vt_of(struct tw *w, size_t tab)
{
	uint32_t so = (uint32_t)w->b[tab] | (uint32_t)w->b[tab + 1] << 8 |
		      (uint32_t)w->b[tab + 2] << 16 | (uint32_t)w->b[tab + 3] << 24;
	return tab - (size_t)so; /* the builder puts vtables before tables */
}

static size_t slot(struct tw *w, size_t tab, unsigned s)
{
	put16(w, vt_of(w, tab) + 4 + 2 * s, (uint16_t)(4 + 8 * s));
	return tab + 4 + 8 * s;
}

static void f_u8(struct tw *w, size_t tab, unsigned s, uint8_t v)
{
	w->b[slot(w, tab, s)] = v;
}

static void f_u32(struct tw *w, size_t tab, unsigned s, uint32_t v)
{
	put32(w, slot(w, tab, s), v);
}

static void f_ref(struct tw *w, size_t tab, unsigned s, size_t target)
{
	size_t at = slot(w, tab, s);
	put32(w, at, (uint32_t)(target - at));
}

static size_t vec(struct tw *w, size_t elem, size_t n, const void *data, size_t al)
{
	/* Data aligned to `al` after the 4-byte length. */
	align(w, 4);
	while ((w->len + 4) % al) {
		grow(w, 4);
		memset(w->b + w->len, 0, 4);
		w->len += 4;
	}
	size_t pos = w->len;
	grow(w, 4 + elem * n);
	put32(w, pos, (uint32_t)n);
	if (data != NULL)
		memcpy(w->b + pos + 4, data, elem * n);
	else
		memset(w->b + pos + 4, 0, elem * n);
	w->len = pos + 4 + elem * n;
	return pos;
}

static void vec_ref(struct tw *w, size_t v, size_t i, size_t target)
{
	size_t at = v + 4 + 4 * i;
	put32(w, at, (uint32_t)(target - at));
}

static size_t str(struct tw *w, const char *s)
{
	size_t n = strlen(s);
	size_t pos = vec(w, 1, n + 1, s, 4);
	put32(w, pos, (uint32_t)n);
	return pos;
}

uint8_t *tb_build(const struct tb_model *m, size_t *len)
{
	struct tw w = {0};
	grow(&w, 8);
	memset(w.b, 0, 8);
	memcpy(w.b + 4, "TFL3", 4);
	w.len = 8;
	size_t model = table(&w, 8);
	put32(&w, 0, (uint32_t)model);
	f_u32(&w, model, 0, m->version ? m->version : 3);
	/* operator_codes: one per op, in op order. */
	size_t codes = vec(&w, 4, (size_t)m->n_ops, NULL, 4);
	f_ref(&w, model, 1, codes);
	for (int i = 0; i < m->n_ops; i++) {
		size_t oc = table(&w, 4);
		vec_ref(&w, codes, (size_t)i, oc);
		int32_t b = m->op[i].builtin;
		f_u8(&w, oc, 0, (uint8_t)(b < 127 ? b : 127));
		f_u32(&w, oc, 2, 1);
		f_u32(&w, oc, 3, (uint32_t)b);
	}
	size_t sgs = vec(&w, 4, 1, NULL, 4);
	f_ref(&w, model, 2, sgs);
	size_t sg = table(&w, 5);
	vec_ref(&w, sgs, 0, sg);
	/* Buffers: 0 is the empty buffer, then one per constant tensor. */
	int n_buf = 1;
	int32_t bufidx[TB_MAX_TENSORS];
	for (int k = 0; k < m->n_tensors; k++)
		bufidx[k] = m->t[k].data ? n_buf++ : 0;
	size_t tens = vec(&w, 4, (size_t)m->n_tensors, NULL, 4);
	f_ref(&w, sg, 0, tens);
	for (int k = 0; k < m->n_tensors; k++) {
		const struct tb_tensor *t = &m->t[k];
		size_t tt = table(&w, 8);
		vec_ref(&w, tens, (size_t)k, tt);
		size_t shape = vec(&w, 4, (size_t)t->n_dims, t->dims, 4);
		f_ref(&w, tt, 0, shape);
		f_u8(&w, tt, 1, t->type);
		f_u32(&w, tt, 2, (uint32_t)(t->buffer > 0 ? t->buffer : bufidx[k]));
		f_ref(&w, tt, 3, str(&w, t->name ? t->name : "t"));
		if (t->n_scale > 0) {
			size_t q = table(&w, 7);
			f_ref(&w, tt, 4, q);
			f_ref(&w, q, 2, vec(&w, 4, (size_t)t->n_scale, t->scale, 4));
			f_ref(&w, q, 3, vec(&w, 8, (size_t)t->n_scale, t->zero_point, 8));
			f_u32(&w, q, 6, (uint32_t)t->quant_dim);
		}
	}
	int32_t io[4];
	for (int k = 0; k < m->n_inputs; k++)
		io[k] = m->inputs[k];
	f_ref(&w, sg, 1, vec(&w, 4, (size_t)m->n_inputs, io, 4));
	for (int k = 0; k < m->n_outputs; k++)
		io[k] = m->outputs[k];
	f_ref(&w, sg, 2, vec(&w, 4, (size_t)m->n_outputs, io, 4));
	size_t ops = vec(&w, 4, (size_t)m->n_ops, NULL, 4);
	f_ref(&w, sg, 3, ops);
	for (int i = 0; i < m->n_ops; i++) {
		const struct tb_op *o = &m->op[i];
		size_t ot = table(&w, 6);
		vec_ref(&w, ops, (size_t)i, ot);
		f_u32(&w, ot, 0, (uint32_t)i);
		f_ref(&w, ot, 1, vec(&w, 4, (size_t)o->n_in, o->in, 4));
		f_ref(&w, ot, 2, vec(&w, 4, 1, &o->out, 4));
		if (o->options_type != 0) {
			f_u8(&w, ot, 3, o->options_type);
			size_t opt = table(&w, (unsigned)(o->n_opt > 0 ? o->n_opt : 1));
			f_ref(&w, ot, 4, opt);
			for (int k = 0; k < o->n_opt; k++) {
				if (o->opt[k].kind == 'b')
					f_u8(&w, opt, (unsigned)k, (uint8_t)o->opt[k].i);
				else if (o->opt[k].kind == 'i')
					f_u32(&w, opt, (unsigned)k, (uint32_t)o->opt[k].i);
				else if (o->opt[k].kind == 'f') {
					uint32_t u;
					memcpy(&u, &o->opt[k].f, 4);
					f_u32(&w, opt, (unsigned)k, u);
				}
			}
		}
	}
	size_t bufs = vec(&w, 4, (size_t)n_buf, NULL, 4);
	f_ref(&w, model, 4, bufs);
	size_t b0 = table(&w, 1);
	vec_ref(&w, bufs, 0, b0);
	for (int k = 0; k < m->n_tensors; k++) {
		if (!m->t[k].data)
			continue;
		size_t bt = table(&w, 3);
		vec_ref(&w, bufs, (size_t)bufidx[k], bt);
		f_ref(&w, bt, 0, vec(&w, 1, m->t[k].data_len, m->t[k].data, 16));
	}
	*len = w.len;
	return w.b;
}

/* Running a loaded model: every operator between the layer hooks
 * (ert_layer_begin/end), the small kernels (pooling, ADD, RESHAPE, SOFTMAX,
 * QUANTIZE, DEQUANTIZE) here, conv/dwconv/fc behind tfl_internal.h. All
 * shapes were validated by ert_tfl_load. */
#include "ergon/ert_layer.h"
#include "tfl_internal.h"

static const uint8_t *cdata(const struct ert_tfl_model *m, int16_t idx)
{
	const struct ert_tfl_tensor *t = &m->tensors[idx];
	return t->is_const ? t->data : m->arena + t->arena_offset;
}

static uint8_t *wdata(const struct ert_tfl_model *m, int16_t idx)
{
	return m->arena + m->tensors[idx].arena_offset;
}

uint8_t *ert_tfl_input(const struct ert_tfl_model *m, unsigned i, uint32_t *bytes)
{
	if (!m->bound || i >= m->n_inputs)
		return NULL;
	if (bytes != NULL)
		*bytes = m->tensors[m->inputs[i]].bytes;
	return wdata(m, m->inputs[i]);
}

uint8_t *ert_tfl_output(const struct ert_tfl_model *m, unsigned i, uint32_t *bytes)
{
	if (!m->bound || i >= m->n_outputs)
		return NULL;
	if (bytes != NULL)
		*bytes = m->tensors[m->outputs[i]].bytes;
	return wdata(m, m->outputs[i]);
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

static void conv_args(const struct ert_tfl_model *m, const struct ert_tfl_op *op,
		      struct tfl_conv_args *a)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *f = &m->tensors[op->in[1]];
	const struct ert_tfl_tensor *out = &m->tensors[op->out];
	const int32_t *pers = (const int32_t *)(const void *)(m->arena + op->persist_off);
	a->in = (const int8_t *)cdata(m, op->in[0]);
	a->filter = (const int8_t *)f->data;
	a->mult = pers;
	a->shift = pers + op->n_channels;
	a->bias = pers + 2u * op->n_channels;
	a->fsum = pers + 3u * op->n_channels;
	a->out = (int8_t *)wdata(m, op->out);
	a->batches = in->dims[0];
	a->in_h = in->dims[1];
	a->in_w = in->dims[2];
	a->in_c = in->dims[3];
	a->out_h = out->dims[1];
	a->out_w = out->dims[2];
	a->out_c = out->dims[3];
	a->f_h = f->dims[1];
	a->f_w = f->dims[2];
	a->f_c = f->dims[3];
	a->stride_h = op->stride_h;
	a->stride_w = op->stride_w;
	a->dil_h = op->dil_h;
	a->dil_w = op->dil_w;
	a->pad_h = op->pad_h;
	a->pad_w = op->pad_w;
	a->depth_mult = out->dims[3] / in->dims[3];
	a->in_offset = -in->zero_point;
	a->out_offset = out->zero_point;
	a->act_min = op->act_min;
	a->act_max = op->act_max;
#if TFL_HOST_FAST
	a->kern = tfl_kern_get(m->simd);
	const uint32_t po = m->pack != NULL ? m->pack_off[op - m->ops] : UINT32_MAX;
	a->packed = po != UINT32_MAX ? (const int16_t *)(const void *)(m->pack + po) : NULL;
#endif
}

static void run_fc(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *f = &m->tensors[op->in[1]];
	const struct ert_tfl_tensor *out = &m->tensors[op->out];
	const int32_t *pers = (const int32_t *)(const void *)(m->arena + op->persist_off);
	struct tfl_fc_args a;
	a.in = (const int8_t *)cdata(m, op->in[0]);
	a.filter = (const int8_t *)f->data;
	a.mult = pers;
	a.shift = pers + op->n_channels;
	a.bias = pers + 2u * op->n_channels;
	a.fsum = pers + 3u * op->n_channels;
	a.out = (int8_t *)wdata(m, op->out);
	a.accum = f->dims[1];
	a.units = f->dims[0];
	a.batches = (int32_t)(in->elems / (uint32_t)a.accum);
	a.in_offset = -in->zero_point;
	a.filter_offset = -f->zero_point;
	a.out_offset = out->zero_point;
	a.act_min = op->act_min;
	a.act_max = op->act_max;
	a.per_channel = 1; /* bind filled one entry per unit */
#if TFL_HOST_FAST
	a.kern = tfl_kern_get(m->simd);
#endif
	TFL_FC(&a);
}

/* reference_integer_ops::AveragePool / MaxPool. */
static void run_pool(const struct ert_tfl_model *m, const struct ert_tfl_op *op, int is_max)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *out = &m->tensors[op->out];
	const int8_t *ip = (const int8_t *)cdata(m, op->in[0]);
	int8_t *o = (int8_t *)wdata(m, op->out);
	const int32_t ih = in->dims[1], iw = in->dims[2], c = in->dims[3];
	const int32_t oh = out->dims[1], ow = out->dims[2];
	for (int32_t b = 0; b < in->dims[0]; b++)
		for (int32_t oy = 0; oy < oh; oy++)
			for (int32_t ox = 0; ox < ow; ox++)
				for (int32_t ch = 0; ch < c; ch++) {
					const int32_t y0 = oy * op->stride_h - op->pad_h;
					const int32_t x0 = ox * op->stride_w - op->pad_w;
					const int32_t fy0 = y0 < 0 ? -y0 : 0;
					const int32_t fx0 = x0 < 0 ? -x0 : 0;
					const int32_t fy1 =
					    op->filter_h < ih - y0 ? op->filter_h : ih - y0;
					const int32_t fx1 =
					    op->filter_w < iw - x0 ? op->filter_w : iw - x0;
					int32_t acc = is_max ? -128 : 0, count = 0;
					for (int32_t fy = fy0; fy < fy1; fy++)
						for (int32_t fx = fx0; fx < fx1; fx++) {
							int32_t v =
							    ip[(((int64_t)b * ih + y0 + fy) * iw +
								x0 + fx) *
								   c +
							       ch];
							if (is_max)
								acc = v > acc ? v : acc;
							else
								acc += v;
							count++;
						}
					if (!is_max) {
						if (count == 0)
							count = 1; /* not reachable after load */
						/* Round to the closest integer value. */
						acc = acc > 0 ? (acc + count / 2) / count
							      : (acc - count / 2) / count;
					}
					o[(((int64_t)b * oh + oy) * ow + ox) * c + ch] =
					    (int8_t)clamp(acc, op->act_min, op->act_max);
				}
}

/* reference_integer_ops::Add with 4-D broadcasting. */
static void run_add(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const struct ert_tfl_tensor *ta = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *tb = &m->tensors[op->in[1]];
	const struct ert_tfl_tensor *to = &m->tensors[op->out];
	const int8_t *pa = (const int8_t *)cdata(m, op->in[0]);
	const int8_t *pb = (const int8_t *)cdata(m, op->in[1]);
	int8_t *po = (int8_t *)wdata(m, op->out);
	int32_t od[4], as[4], bs[4]; /* output dims, input strides (0: broadcast) */
	int32_t sa = 1, sb = 1;
	for (int d = 3; d >= 0; d--) {
		int r = 3 - d;
		od[d] = r < to->n_dims ? to->dims[to->n_dims - 1 - r] : 1;
		int32_t ad = r < ta->n_dims ? ta->dims[ta->n_dims - 1 - r] : 1;
		int32_t bd = r < tb->n_dims ? tb->dims[tb->n_dims - 1 - r] : 1;
		as[d] = ad == 1 ? 0 : sa;
		bs[d] = bd == 1 ? 0 : sb;
		sa *= ad;
		sb *= bd;
	}
	const int32_t in1_off = -ta->zero_point, in2_off = -tb->zero_point;
	const int32_t out_off = to->zero_point;
	const int ls = op->left_shift;
#if TFL_HOST_FAST
	/* Host builds: same shapes (no broadcast) through the kernel path. */
	struct tfl_add p;
	if (ta->elems == to->elems && tb->elems == to->elems && ls >= 0 && ls <= 30 &&
	    tfl_rq1_fill(&p.in1, op->mult[0], op->shift[0]) &&
	    tfl_rq1_fill(&p.in2, op->mult[1], op->shift[1]) &&
	    tfl_rq1_fill(&p.out, op->mult[2], op->shift[2])) {
		p.off1 = in1_off;
		p.off2 = in2_off;
		p.left_shift = ls;
		p.out_offset = out_off;
		p.act_min = op->act_min;
		p.act_max = op->act_max;
		tfl_kern_get(m->simd)->add(pa, pb, (int32_t)to->elems, &p, po);
		return;
	}
#endif
	int64_t k = 0;
	for (int32_t i0 = 0; i0 < od[0]; i0++)
		for (int32_t i1 = 0; i1 < od[1]; i1++)
			for (int32_t i2 = 0; i2 < od[2]; i2++)
				for (int32_t i3 = 0; i3 < od[3]; i3++) {
					int64_t ia = (int64_t)i0 * as[0] + (int64_t)i1 * as[1] +
						     (int64_t)i2 * as[2] + (int64_t)i3 * as[3];
					int64_t ib = (int64_t)i0 * bs[0] + (int64_t)i1 * bs[1] +
						     (int64_t)i2 * bs[2] + (int64_t)i3 * bs[3];
					int32_t x1 = (int32_t)((uint32_t)(pa[ia] + in1_off) << ls);
					int32_t x2 = (int32_t)((uint32_t)(pb[ib] + in2_off) << ls);
					int32_t s1 = tfl_mbqm(x1, op->mult[0], op->shift[0]);
					int32_t s2 = tfl_mbqm(x2, op->mult[1], op->shift[1]);
					int32_t raw =
					    tfl_mbqm(s1 + s2, op->mult[2], op->shift[2]) + out_off;
					po[k++] = (int8_t)clamp(raw, op->act_min, op->act_max);
				}
}

static void run_softmax(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const int32_t depth = in->dims[in->n_dims - 1];
	const int8_t *ip = (const int8_t *)cdata(m, op->in[0]);
	int8_t *o = (int8_t *)wdata(m, op->out);
	const uint32_t rows = in->elems / (uint32_t)depth;
	for (uint32_t r = 0; r < rows; r++)
		tfl_softmax_row_s8(ip + (int64_t)r * depth, o + (int64_t)r * depth, depth,
				   op->mult[0], op->left_shift, op->diff_min);
}

static void run_quantize(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *out = &m->tensors[op->out];
	int8_t *o = (int8_t *)wdata(m, op->out);
	const uint8_t *ip = cdata(m, op->in[0]);
	for (uint32_t k = 0; k < out->elems; k++) {
		int32_t v;
		if (in->type == ERT_TFL_FLOAT32) {
			/* AffineQuantize: round(val / scale) + zero_point, in float. */
			float q = tfl_rdf32(ip + 4u * k) / out->scale;
			v = tfl_round_f((double)q);
			v = v > 1000 ? 1000 : (v < -1000 ? -1000 : v);
			v += out->zero_point;
		} else {
			/* Requantize. */
			v = tfl_mbqm((int32_t)(int8_t)ip[k] - in->zero_point, op->mult[0],
				     op->shift[0]) +
			    out->zero_point;
		}
		o[k] = (int8_t)clamp(v, -128, 127);
	}
}

static void run_dequantize(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const int8_t *ip = (const int8_t *)cdata(m, op->in[0]);
	uint8_t *o = wdata(m, op->out);
	for (uint32_t k = 0; k < in->elems; k++) {
		union {
			float f;
			uint32_t u;
		} v;
		v.f = in->scale * (float)((int32_t)ip[k] - in->zero_point);
		o[4u * k] = (uint8_t)v.u;
		o[4u * k + 1] = (uint8_t)(v.u >> 8);
		o[4u * k + 2] = (uint8_t)(v.u >> 16);
		o[4u * k + 3] = (uint8_t)(v.u >> 24);
	}
}

static void run_reshape(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	const uint8_t *ip = cdata(m, op->in[0]);
	uint8_t *o = wdata(m, op->out);
	/* The planner never overlaps a live input with its output. */
	for (uint32_t k = 0; k < m->tensors[op->out].bytes; k++)
		o[k] = ip[k];
}

#if TFL_HOST_FAST
/* The arguments of op as the kernels get them, for packing: only the
 * shapes and the filter matter. */
static int pack_args(const struct ert_tfl_model *m, const struct ert_tfl_op *op,
		     struct tfl_conv_args *a)
{
	if (op->opcode != ERT_TFL_OP_CONV_2D && op->opcode != ERT_TFL_OP_DEPTHWISE_CONV_2D)
		return 0;
	const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
	const struct ert_tfl_tensor *f = &m->tensors[op->in[1]];
	const struct ert_tfl_tensor *out = &m->tensors[op->out];
	*a = (struct tfl_conv_args){0};
	a->filter = (const int8_t *)f->data;
	a->in_c = in->dims[3];
	a->out_c = out->dims[3];
	a->f_h = f->dims[1];
	a->f_w = f->dims[2];
	a->f_c = f->dims[3];
	a->depth_mult = out->dims[3] / in->dims[3];
	return 1;
}

/* Bytes of op's packed filters (a multiple of 32), 0 for none. */
static uint32_t pack_size(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	struct tfl_conv_args a;
	if (!pack_args(m, op, &a))
		return 0;
	const int64_t n = op->opcode == ERT_TFL_OP_CONV_2D
			      ? tfl_conv_pack(&a, 0, a.out_c, NULL)
			      : tfl_dwconv_pack(&a, 0, a.out_c, (a.out_c + 15) & ~15, NULL);
	return (uint32_t)((n * 2 + 31) & ~31);
}

uint32_t ert_tfl_pack_bytes(const struct ert_tfl_model *m)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < m->n_ops; i++)
		total += pack_size(m, &m->ops[i]);
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

int ert_tfl_pack(struct ert_tfl_model *m, void *buf, size_t len)
{
	if (len < ert_tfl_pack_bytes(m) || ((uintptr_t)buf & 31u) != 0)
		return ERT_TFL_E_ARENA;
	uint8_t *p = buf;
	uint32_t at = 0;
	for (unsigned i = 0; i < m->n_ops; i++) {
		const struct ert_tfl_op *op = &m->ops[i];
		const uint32_t size = pack_size(m, op);
		struct tfl_conv_args a;
		m->pack_off[i] = UINT32_MAX;
		if (size == 0 || !pack_args(m, op, &a))
			continue;
		int16_t *dst = (int16_t *)(void *)(p + at);
		if (op->opcode == ERT_TFL_OP_CONV_2D)
			tfl_conv_pack(&a, 0, a.out_c, dst);
		else
			tfl_dwconv_pack(&a, 0, a.out_c, (a.out_c + 15) & ~15, dst);
		m->pack_off[i] = at;
		at += size;
	}
	m->pack = p;
	return ERT_TFL_OK;
}

#endif

int ert_tfl_invoke(struct ert_tfl_model *m)
{
	if (!m->bound)
		return ERT_TFL_E_STATE;
	for (unsigned i = 0; i < m->n_ops; i++) {
		const struct ert_tfl_op *op = &m->ops[i];
		struct tfl_conv_args ca;
		ert_layer_begin((uint16_t)i, ert_tfl_op_name(op->opcode));
		switch (op->opcode) {
		case ERT_TFL_OP_CONV_2D:
			conv_args(m, op, &ca);
			TFL_CONV(&ca);
			break;
		case ERT_TFL_OP_DEPTHWISE_CONV_2D:
			conv_args(m, op, &ca);
			TFL_DWCONV(&ca);
			break;
		case ERT_TFL_OP_FULLY_CONNECTED:
			run_fc(m, op);
			break;
		case ERT_TFL_OP_AVERAGE_POOL_2D:
			run_pool(m, op, 0);
			break;
		case ERT_TFL_OP_MAX_POOL_2D:
			run_pool(m, op, 1);
			break;
		case ERT_TFL_OP_ADD:
			run_add(m, op);
			break;
		case ERT_TFL_OP_RESHAPE:
			run_reshape(m, op);
			break;
		case ERT_TFL_OP_SOFTMAX:
			run_softmax(m, op);
			break;
		case ERT_TFL_OP_QUANTIZE:
			run_quantize(m, op);
			break;
		case ERT_TFL_OP_DEQUANTIZE:
			run_dequantize(m, op);
			break;
		default:
			break; /* refused at load */
		}
		if (m->op_done != 0)
			m->op_done(m->op_done_ctx, op);
		ert_layer_end();
	}
	return ERT_TFL_OK;
}

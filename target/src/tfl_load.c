/* Loading a TFLite model: read the flatbuffer (tfl_fb.c) into the fixed
 * tables of struct ert_tfl_model, validate every operator against what its
 * kernel will touch (types, shapes, quantization, limits), and plan the
 * arena. After a successful load no kernel can read or write outside a
 * tensor: every size a kernel loops over was checked here. */
#include "ergon/ert_fmt.h"
#include "tfl_internal.h"

/* Schema field slots (tensorflow/lite/schema/schema.fbs, in order). */
enum { MODEL_VERSION = 0, MODEL_OPCODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4 };
enum { OPC_DEPRECATED = 0, OPC_CUSTOM = 1, OPC_BUILTIN = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3 };
enum {
	T_SHAPE = 0,
	T_TYPE = 1,
	T_BUFFER = 2,
	T_NAME = 3,
	T_QUANT = 4,
	T_VARIABLE = 5,
	T_SPARSITY = 6
};
enum { Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DETAILS_TYPE = 4, Q_DIM = 6 };
enum { OP_OPCODE = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4 };
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };
/* BuiltinOptions union members. */
enum {
	OPT_CONV = 1,
	OPT_DWCONV = 2,
	OPT_POOL = 5,
	OPT_FC = 8,
	OPT_SOFTMAX = 9,
	OPT_ADD = 11,
	OPT_RESHAPE = 17
};
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };
enum { PAD_SAME = 0, PAD_VALID = 1 };

#define MAX_QUANT_CHANNELS 8192u
#define MAX_TAPS 32768

struct loader {
	struct tfl_fb fb;
	struct ert_tfl_model *m;
	uint16_t opcodes[ERT_TFL_MAX_OPCODES];
	uint32_t n_opcodes;
	struct tfl_vec buffers;
};

/* "Operator[3] CONV_2D: <what><n><tail>" (n omitted when tail is NULL). */
static int op_fail(struct loader *L, int code, unsigned i, const char *what, int64_t n,
		   const char *tail)
{
	struct ert_tfl_err *e = L->fb.err;
	if (e == NULL || e->code != 0)
		return code;
	struct ert_buf b;
	ert_buf_init(&b, e->msg, sizeof e->msg);
	ert_buf_str(&b, "Operator[");
	ert_buf_u64(&b, i);
	ert_buf_str(&b, "] ");
	ert_buf_str(&b, ert_tfl_op_name(L->m->ops[i].opcode));
	ert_buf_str(&b, ": ");
	ert_buf_str(&b, what);
	if (tail != NULL) {
		ert_buf_i64(&b, n);
		ert_buf_str(&b, tail);
	}
	e->code = code;
	return code;
}

static uint32_t align_up(uint32_t v)
{
	return (v + ERT_TFL_ALIGN - 1u) & ~(ERT_TFL_ALIGN - 1u);
}

static int is_finite_pos(float f)
{
	return f > 0.0f && f <= 3.0e38f;
}

/* ---- tensors --------------------------------------------------------- */

static int read_buffer(struct loader *L, struct tfl_tab *tt, uint32_t bidx,
		       struct ert_tfl_tensor *t)
{
	struct tfl_fb *fb = &L->fb;
	if (bidx >= L->buffers.n)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "buffer", "buffer index ", bidx,
				 " is past the model's buffers vector", tt->pos);
	struct tfl_tab bt;
	int rc = tfl_vec_table(fb, &L->buffers, bidx, "Buffer", &bt);
	if (rc != 0)
		return rc;
	struct tfl_vec data;
	rc = tfl_vector(fb, &bt, BUF_DATA, "data", 1, ERT_TFL_MAX_TENSOR_BYTES, &data);
	if (rc != 0)
		return rc;
	uint64_t off = 0, size = 0;
	if ((rc = tfl_u64(fb, &bt, BUF_OFFSET, "offset", 0, &off)) != 0 ||
	    (rc = tfl_u64(fb, &bt, BUF_SIZE, "size", 0, &size)) != 0)
		return rc;
	const uint8_t *p = NULL;
	uint64_t n = 0;
	if (data.n > 0) {
		p = fb->p + data.pos;
		n = data.n;
	} else if (off > 1) {
		/* Data outside the flatbuffer, at an offset from the file start. */
		if (off > fb->len || size > (uint64_t)fb->len - off)
			return tfl_fail(fb, ERT_TFL_E_MALFORMED, &bt, "offset",
					"external data runs past the end of the model", bt.pos);
		p = fb->p + off;
		n = size;
	}
	if (p == NULL)
		return ERT_TFL_OK; /* an activation */
	if (n != t->bytes)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "buffer", "constant data of ",
				 (int64_t)n, " bytes does not match the tensor's shape and type",
				 bt.pos);
	t->data = p;
	t->is_const = 1;
	return ERT_TFL_OK;
}

static int read_quant(struct loader *L, struct tfl_tab *tt, struct ert_tfl_tensor *t)
{
	struct tfl_fb *fb = &L->fb;
	struct tfl_tab qt;
	int present = 0;
	int rc =
	    tfl_subtable(fb, tt, T_QUANT, "quantization", "QuantizationParameters", &qt, &present);
	if (rc != 0 || !present)
		return rc;
	uint8_t details = 0;
	if ((rc = tfl_u8(fb, &qt, Q_DETAILS_TYPE, "details_type", 0, &details)) != 0)
		return rc;
	if (details != 0)
		return tfl_fail(fb, ERT_TFL_E_UNSUPPORTED, tt, "quantization.details",
				"custom quantization is not supported", qt.pos);
	struct tfl_vec sc, zp;
	if ((rc = tfl_vector(fb, &qt, Q_SCALE, "scale", 4, MAX_QUANT_CHANNELS, &sc)) != 0 ||
	    (rc = tfl_vector(fb, &qt, Q_ZERO_POINT, "zero_point", 8, MAX_QUANT_CHANNELS, &zp)) !=
		0 ||
	    (rc = tfl_i32(fb, &qt, Q_DIM, "quantized_dimension", 0, &t->quant_dim)) != 0)
		return rc;
	if (sc.n > 0 && zp.n > 0 && zp.n != sc.n && zp.n != 1)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "quantization.zero_point", "has ",
				 zp.n, " entries for a different number of scales", qt.pos);
	for (uint32_t i = 0; i < sc.n; i++) {
		float s = tfl_rdf32(fb->p + sc.pos + 4u * i);
		if (!is_finite_pos(s))
			return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "quantization.scale",
					 "entry ", i, " is not a positive finite number",
					 sc.pos + 4u * i);
	}
	for (uint32_t i = 0; i < zp.n; i++) {
		int64_t z = (int64_t)tfl_rd64(fb->p + zp.pos + 8u * i);
		if (z < -32768 || z > 65535)
			return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "quantization.zero_point",
					 "entry ", i, " is out of range for any quantized type",
					 zp.pos + 8u * i);
	}
	t->n_scale = sc.n;
	t->scale_pos = sc.pos;
	t->n_zp = zp.n;
	t->zp_pos = zp.pos;
	t->scale = sc.n > 0 ? tfl_rdf32(fb->p + sc.pos) : 0.0f;
	t->zero_point = zp.n > 0 ? (int32_t)(int64_t)tfl_rd64(fb->p + zp.pos) : 0;
	return ERT_TFL_OK;
}

static int read_tensor(struct loader *L, struct tfl_tab *tt, struct ert_tfl_tensor *t)
{
	struct tfl_fb *fb = &L->fb;
	struct tfl_vec shape, name;
	int rc = tfl_vector(fb, tt, T_SHAPE, "shape", 4, ERT_TFL_MAX_DIMS, &shape);
	if (rc != 0)
		return rc;
	uint64_t elems = 1;
	t->n_dims = (uint8_t)shape.n;
	for (uint32_t d = 0; d < shape.n; d++) {
		int32_t v = (int32_t)tfl_rd32(fb->p + shape.pos + 4u * d);
		if (v <= 0)
			return tfl_failn(fb, ERT_TFL_E_MALFORMED, tt, "shape", "dimension ", v,
					 " is not positive (dynamic or empty shapes are not "
					 "supported)",
					 shape.pos + 4u * d);
		t->dims[d] = v;
		elems *= (uint64_t)v;
		if (elems > ERT_TFL_MAX_TENSOR_BYTES)
			return tfl_fail(fb, ERT_TFL_E_LIMIT, tt, "shape",
					"more than 64 MiB of elements", shape.pos);
	}
	uint8_t type = 0, variable = 0;
	uint32_t bidx = 0;
	if ((rc = tfl_u8(fb, tt, T_TYPE, "type", 0, &type)) != 0 ||
	    (rc = tfl_u32(fb, tt, T_BUFFER, "buffer", 0, &bidx)) != 0 ||
	    (rc = tfl_u8(fb, tt, T_VARIABLE, "is_variable", 0, &variable)) != 0 ||
	    (rc = tfl_vector(fb, tt, T_NAME, "name", 1, 4096, &name)) != 0)
		return rc;
	t->type = type;
	t->elems = (uint32_t)elems;
	uint32_t esz = ert_tfl_type_size(type);
	if (esz == 0)
		return tfl_failn(fb, ERT_TFL_E_UNSUPPORTED, tt, "type", "tensor type ", type,
				 " is not supported (int8, int32, float32 and the like are)",
				 tt->pos);
	if (elems * esz > ERT_TFL_MAX_TENSOR_BYTES)
		return tfl_fail(fb, ERT_TFL_E_LIMIT, tt, "shape", "tensor is larger than 64 MiB",
				tt->pos);
	t->bytes = (uint32_t)(elems * esz);
	t->name_pos = name.present ? name.pos : 0;
	t->name_len = name.n;
	if (variable)
		return tfl_fail(fb, ERT_TFL_E_UNSUPPORTED, tt, "is_variable",
				"variable tensors (stateful models) are not supported", tt->pos);
	struct tfl_tab sp;
	int has_sparsity = 0;
	if ((rc = tfl_subtable(fb, tt, T_SPARSITY, "sparsity", "SparsityParameters", &sp,
			       &has_sparsity)) != 0)
		return rc;
	if (has_sparsity)
		return tfl_fail(fb, ERT_TFL_E_UNSUPPORTED, tt, "sparsity",
				"sparse tensors are not supported", tt->pos);
	t->first_op = -1;
	t->last_op = -1;
	if ((rc = read_buffer(L, tt, bidx, t)) != 0)
		return rc;
	return read_quant(L, tt, t);
}

/* ---- operator options ------------------------------------------------ */

static int read_options(struct loader *L, struct tfl_tab *ot, unsigned i, struct ert_tfl_op *op)
{
	struct tfl_fb *fb = &L->fb;
	uint8_t otype = 0;
	int rc = tfl_u8(fb, ot, OP_OPTIONS_TYPE, "builtin_options_type", 0, &otype);
	if (rc != 0)
		return rc;
	unsigned want = 0;
	switch (op->opcode) {
	case ERT_TFL_OP_CONV_2D:
		want = OPT_CONV;
		break;
	case ERT_TFL_OP_DEPTHWISE_CONV_2D:
		want = OPT_DWCONV;
		break;
	case ERT_TFL_OP_AVERAGE_POOL_2D:
	case ERT_TFL_OP_MAX_POOL_2D:
		want = OPT_POOL;
		break;
	case ERT_TFL_OP_FULLY_CONNECTED:
		want = OPT_FC;
		break;
	case ERT_TFL_OP_SOFTMAX:
		want = OPT_SOFTMAX;
		break;
	case ERT_TFL_OP_ADD:
		want = OPT_ADD;
		break;
	case ERT_TFL_OP_RESHAPE:
		want = OPT_RESHAPE;
		break;
	default:
		want = 0;
	}
	/* Defaults as in the schema. */
	op->padding = PAD_SAME;
	op->act = ACT_NONE;
	op->stride_w = op->stride_h = op->dil_w = op->dil_h = 1;
	op->filter_w = op->filter_h = 1;
	op->beta = 0.0f;
	op->keep_num_dims = 0;
	struct tfl_tab o;
	int present = 0;
	if (want != 0 && otype == want) {
		rc = tfl_subtable(fb, ot, OP_OPTIONS, "builtin_options", "Options", &o, &present);
		if (rc != 0)
			return rc;
	} else if (want != 0 && otype != 0 && want != OPT_RESHAPE) {
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "builtin_options_type is ", otype,
			       ", not this operator's options table");
	}
	if (!present)
		return want == OPT_CONV || want == OPT_DWCONV || want == OPT_POOL
			   ? op_fail(L, ERT_TFL_E_MALFORMED, i,
				     "builtin_options (strides, padding) are missing", 0, NULL)
			   : ERT_TFL_OK;
	int32_t dm = 0;
	uint8_t wf = 0;
	switch (want) {
	case OPT_CONV:
		if ((rc = tfl_u8(fb, &o, 0, "padding", 0, &op->padding)) != 0 ||
		    (rc = tfl_i32(fb, &o, 1, "stride_w", 0, &op->stride_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 2, "stride_h", 0, &op->stride_h)) != 0 ||
		    (rc = tfl_u8(fb, &o, 3, "fused_activation_function", 0, &op->act)) != 0 ||
		    (rc = tfl_i32(fb, &o, 4, "dilation_w_factor", 1, &op->dil_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 5, "dilation_h_factor", 1, &op->dil_h)) != 0)
			return rc;
		break;
	case OPT_DWCONV:
		if ((rc = tfl_u8(fb, &o, 0, "padding", 0, &op->padding)) != 0 ||
		    (rc = tfl_i32(fb, &o, 1, "stride_w", 0, &op->stride_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 2, "stride_h", 0, &op->stride_h)) != 0 ||
		    (rc = tfl_i32(fb, &o, 3, "depth_multiplier", 0, &dm)) != 0 ||
		    (rc = tfl_u8(fb, &o, 4, "fused_activation_function", 0, &op->act)) != 0 ||
		    (rc = tfl_i32(fb, &o, 5, "dilation_w_factor", 1, &op->dil_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 6, "dilation_h_factor", 1, &op->dil_h)) != 0)
			return rc;
		break;
	case OPT_POOL:
		if ((rc = tfl_u8(fb, &o, 0, "padding", 0, &op->padding)) != 0 ||
		    (rc = tfl_i32(fb, &o, 1, "stride_w", 0, &op->stride_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 2, "stride_h", 0, &op->stride_h)) != 0 ||
		    (rc = tfl_i32(fb, &o, 3, "filter_width", 0, &op->filter_w)) != 0 ||
		    (rc = tfl_i32(fb, &o, 4, "filter_height", 0, &op->filter_h)) != 0 ||
		    (rc = tfl_u8(fb, &o, 5, "fused_activation_function", 0, &op->act)) != 0)
			return rc;
		break;
	case OPT_FC:
		if ((rc = tfl_u8(fb, &o, 0, "fused_activation_function", 0, &op->act)) != 0 ||
		    (rc = tfl_u8(fb, &o, 1, "weights_format", 0, &wf)) != 0 ||
		    (rc = tfl_u8(fb, &o, 2, "keep_num_dims", 0, &op->keep_num_dims)) != 0)
			return rc;
		if (wf != 0)
			return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
				       "shuffled weights (weights_format ", wf,
				       ") are not supported");
		break;
	case OPT_SOFTMAX:
		if ((rc = tfl_f32(fb, &o, 0, "beta", 0.0f, &op->beta)) != 0)
			return rc;
		break;
	case OPT_ADD:
		if ((rc = tfl_u8(fb, &o, 0, "fused_activation_function", 0, &op->act)) != 0)
			return rc;
		break;
	default:
		break;
	}
	if (op->padding > PAD_VALID)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "padding ", op->padding,
			       " is neither SAME (0) nor VALID (1)");
	if (op->act > ACT_RELU6)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "fused activation ", op->act,
			       " is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 are)");
	if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > 65535 || op->stride_h > 65535)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "stride ",
			       op->stride_w < 1 || op->stride_w > 65535 ? op->stride_w
									: op->stride_h,
			       " is outside 1..65535");
	if (op->dil_w < 1 || op->dil_h < 1 || op->dil_w > 65535 || op->dil_h > 65535)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "dilation ",
			       op->dil_w < 1 || op->dil_w > 65535 ? op->dil_w : op->dil_h,
			       " is outside 1..65535");
	if (op->filter_w < 1 || op->filter_h < 1 || op->filter_w > 65535 || op->filter_h > 65535)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "pool filter size ",
			       op->filter_w < 1 || op->filter_w > 65535 ? op->filter_w
									: op->filter_h,
			       " is outside 1..65535");
	return ERT_TFL_OK;
}

/* ---- operator validation --------------------------------------------- */

static struct ert_tfl_tensor *T(struct loader *L, int16_t idx)
{
	return idx >= 0 ? &L->m->tensors[idx] : NULL;
}

/* "Operator[3] CONV_2D: input is FLOAT32, expected INT8 ...": a float
 * tensor where int8 is needed means a float model. */
static int type_fail(struct loader *L, unsigned i, const char *role, uint8_t have, uint8_t want)
{
	int code = have == ERT_TFL_FLOAT32 ? ERT_TFL_E_FLOAT : ERT_TFL_E_UNSUPPORTED;
	struct ert_tfl_err *e = L->fb.err;
	if (e == NULL || e->code != 0)
		return code;
	struct ert_buf b;
	ert_buf_init(&b, e->msg, sizeof e->msg);
	ert_buf_str(&b, "Operator[");
	ert_buf_u64(&b, i);
	ert_buf_str(&b, "] ");
	ert_buf_str(&b, ert_tfl_op_name(L->m->ops[i].opcode));
	ert_buf_str(&b, ": ");
	ert_buf_str(&b, role);
	ert_buf_str(&b, " is ");
	ert_buf_str(&b, ert_tfl_type_name(have));
	ert_buf_str(&b, ", expected ");
	ert_buf_str(&b, ert_tfl_type_name(want));
	if (code == ERT_TFL_E_FLOAT)
		ert_buf_str(&b, ": a float model; ergon runs full-integer (int8) quantized "
				"models only (convert with int8 post-training quantization)");
	e->code = code;
	return code;
}

/* The input tensor of an operator, required and of `type`. */
static int need(struct loader *L, unsigned i, unsigned slot, uint8_t type, uint8_t n_dims,
		const char *role, struct ert_tfl_tensor **out)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *t = slot < op->n_in ? T(L, op->in[slot]) : NULL;
	*out = t;
	if (t == NULL)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, role, slot, " (input index) is missing");
	if (t->type != type)
		return type_fail(L, i, role, t->type, type);
	if (n_dims != 0 && t->n_dims != n_dims)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, role, t->n_dims,
			       " dimensions: this operator needs a different rank");
	return ERT_TFL_OK;
}

static int need_quant(struct loader *L, unsigned i, const struct ert_tfl_tensor *t,
		      const char *role)
{
	if (t->n_scale == 0)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, role, 0,
			       " has no quantization scale (an int8 tensor needs one)");
	if (t->zero_point < -128 || t->zero_point > 127)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, role, t->zero_point,
			       " is an int8 zero point outside -128..127");
	return ERT_TFL_OK;
}

static int act_range(struct loader *L, unsigned i, const struct ert_tfl_tensor *out)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	int32_t lo = -128, hi = 127;
	/* CalculateActivationRangeQuantized: zero_point + round(f / scale). */
	const float s = out->scale;
	const int32_t z = out->zero_point;
	if (op->act == ACT_RELU || op->act == ACT_RELU6) {
		int32_t q0 = z + tfl_round_f((double)(0.0f / s));
		lo = q0 > lo ? q0 : lo;
	}
	if (op->act == ACT_RELU6) {
		int32_t q6 = z + tfl_round_f((double)(6.0f / s));
		hi = q6 < hi ? q6 : hi;
	}
	if (op->act == ACT_RELU_N1_TO_1) {
		int32_t qm = z + tfl_round_f((double)(-1.0f / s));
		int32_t qp = z + tfl_round_f((double)(1.0f / s));
		lo = qm > lo ? qm : lo;
		hi = qp < hi ? qp : hi;
	}
	if (lo > hi)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "the fused activation's range is empty",
			       0, NULL);
	op->act_min = lo;
	op->act_max = hi;
	return ERT_TFL_OK;
}

/* TFLite's ComputeOutSize and ComputePaddingHeightWidth. */
static int32_t out_size(uint8_t padding, int32_t in, int32_t filter, int32_t stride, int32_t dil)
{
	int64_t eff = (int64_t)(filter - 1) * dil + 1;
	if (padding == PAD_SAME)
		return (int32_t)(((int64_t)in + stride - 1) / stride);
	int64_t o = ((int64_t)in - eff + stride) / stride;
	return o > 0 ? (int32_t)o : 0;
}

static int32_t pad_size(int32_t in, int32_t out, int32_t filter, int32_t stride, int32_t dil)
{
	int64_t eff = (int64_t)(filter - 1) * dil + 1;
	int64_t total = ((int64_t)out - 1) * stride + eff - in;
	return total > 0 ? (int32_t)(total / 2) : 0;
}

static int check_spatial(struct loader *L, unsigned i, const struct ert_tfl_tensor *in,
			 const struct ert_tfl_tensor *out, int32_t f_h, int32_t f_w)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	int32_t oh = out_size(op->padding, in->dims[1], f_h, op->stride_h, op->dil_h);
	int32_t ow = out_size(op->padding, in->dims[2], f_w, op->stride_w, op->dil_w);
	if (out->n_dims != 4 || out->dims[0] != in->dims[0] || out->dims[1] != oh ||
	    out->dims[2] != ow)
		return op_fail(L, ERT_TFL_E_MALFORMED, i,
			       "output shape does not match the input, filter, strides and "
			       "padding (expected height ",
			       oh, ")");
	op->pad_h = pad_size(in->dims[1], oh, f_h, op->stride_h, op->dil_h);
	op->pad_w = pad_size(in->dims[2], ow, f_w, op->stride_w, op->dil_w);
	return ERT_TFL_OK;
}

/* Per-channel filter quantization: one scale or one per output channel
 * along `dim`, every zero point 0. */
static int check_filter_quant(struct loader *L, unsigned i, const struct ert_tfl_tensor *f,
			      uint32_t channels, int32_t dim, int zp_must_be_zero)
{
	int rc = need_quant(L, i, f, "filter");
	if (rc != 0)
		return rc;
	if (f->n_scale != 1 && (f->n_scale != channels || f->quant_dim != dim))
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "filter has ", f->n_scale,
			       " scales: expected 1 or one per output channel");
	if (zp_must_be_zero || f->n_scale > 1)
		for (uint32_t k = 0; k < f->n_zp; k++)
			if (tfl_rd64(L->fb.p + f->zp_pos + 8u * k) != 0)
				return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
					       "filter zero point of channel ", k,
					       " is not 0 (per-channel weights are symmetric)");
	return ERT_TFL_OK;
}

static int check_bias(struct loader *L, unsigned i, unsigned slot, uint32_t channels)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	if (slot >= op->n_in || op->in[slot] < 0)
		return ERT_TFL_OK;
	struct ert_tfl_tensor *b = T(L, op->in[slot]);
	if (b->type != ERT_TFL_INT32)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "bias type ", b->type, " is not int32");
	if (!b->is_const || b->elems != channels)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "bias must be constant with ", channels,
			       " entries (one per output channel)");
	op->param_bytes += b->bytes;
	return ERT_TFL_OK;
}

static int same_quant(const struct ert_tfl_tensor *a, const struct ert_tfl_tensor *b)
{
	return a->scale == b->scale && a->zero_point == b->zero_point;
}

/* What CONV, DWCONV and FC share: int8 input of rank in_dims (0: any),
 * constant int8 weights of rank f_dims, int8 output, scales present. */
static int weighted_op(struct loader *L, unsigned i, uint8_t in_dims, uint8_t f_dims,
		       struct ert_tfl_tensor **in, struct ert_tfl_tensor **f,
		       struct ert_tfl_tensor **out)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	int rc;
	*out = T(L, op->out);
	if ((rc = need(L, i, 0, ERT_TFL_INT8, in_dims, "input", in)) != 0 ||
	    (rc = need(L, i, 1, ERT_TFL_INT8, f_dims, "filter", f)) != 0)
		return rc;
	if ((*out)->type != ERT_TFL_INT8)
		return type_fail(L, i, "output", (*out)->type, ERT_TFL_INT8);
	if (!(*f)->is_const)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "filter is not constant", 0, NULL);
	if ((rc = need_quant(L, i, *in, "input")) != 0)
		return rc;
	return need_quant(L, i, *out, "output");
}

static int validate_conv(struct loader *L, unsigned i, int depthwise)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *f, *out;
	int rc = weighted_op(L, i, 4, 4, &in, &f, &out);
	if (rc != 0)
		return rc;
	const int32_t c = in->dims[3];
	int32_t oc, fh = f->dims[1], fw = f->dims[2], taps;
	if (depthwise) {
		oc = f->dims[3];
		if (f->dims[0] != 1 || oc % c != 0)
			return op_fail(L, ERT_TFL_E_MALFORMED, i,
				       "filter must be [1, h, w, in_channels * multiplier]; "
				       "output channels ",
				       oc, " are not a multiple of the input channels");
		taps = fh * fw;
	} else {
		oc = f->dims[0];
		if (c % f->dims[3] != 0 || oc % (c / f->dims[3]) != 0)
			return op_fail(L, ERT_TFL_E_MALFORMED, i, "filter depth ", f->dims[3],
				       " does not divide the input channels into groups");
		if ((int64_t)fh * fw * f->dims[3] > MAX_TAPS)
			return op_fail(L, ERT_TFL_E_LIMIT, i, "filter has more than ", MAX_TAPS,
				       " taps per output");
		taps = fh * fw * f->dims[3];
	}
	if (taps > MAX_TAPS)
		return op_fail(L, ERT_TFL_E_LIMIT, i, "filter has more than ", MAX_TAPS,
			       " taps per output");
	if ((rc = check_spatial(L, i, in, out, fh, fw)) != 0)
		return rc;
	if (out->dims[3] != oc)
		return op_fail(L, ERT_TFL_E_MALFORMED, i,
			       "output has the wrong channel count; expected ", oc, "");
	if ((rc = check_filter_quant(L, i, f, (uint32_t)oc, depthwise ? 3 : 0, 1)) != 0)
		return rc;
	op->param_bytes = f->bytes;
	if ((rc = check_bias(L, i, 2, (uint32_t)oc)) != 0)
		return rc;
	op->n_channels = (uint32_t)oc;
	op->macs = (uint64_t)out->elems * (uint64_t)taps;
	return act_range(L, i, out);
}

static int validate_fc(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *f, *out;
	int rc = weighted_op(L, i, 0, 2, &in, &f, &out);
	if (rc != 0)
		return rc;
	const int32_t units = f->dims[0], accum = f->dims[1];
	if (accum > MAX_TAPS)
		return op_fail(L, ERT_TFL_E_LIMIT, i, "accumulation depth above ", MAX_TAPS, "");
	if (in->elems % (uint32_t)accum != 0)
		return op_fail(L, ERT_TFL_E_MALFORMED, i,
			       "input size is not a multiple of the weights' depth ", accum, "");
	uint32_t batches = in->elems / (uint32_t)accum;
	if (out->elems != batches * (uint32_t)units || out->n_dims == 0 ||
	    out->dims[out->n_dims - 1] != units)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "output shape does not hold ", units,
			       " units per batch");
	if ((rc = check_filter_quant(L, i, f, (uint32_t)units, 0, 0)) != 0)
		return rc;
	if (f->zero_point < -127 || f->zero_point > 127)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "weights zero point ", f->zero_point,
			       " is outside -127..127");
	op->param_bytes = f->bytes;
	if ((rc = check_bias(L, i, 2, (uint32_t)units)) != 0)
		return rc;
	op->n_channels = (uint32_t)units;
	op->macs = (uint64_t)batches * (uint64_t)units * (uint64_t)accum;
	return act_range(L, i, out);
}

static int validate_pool(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *out = T(L, op->out);
	int rc;
	if ((rc = need(L, i, 0, ERT_TFL_INT8, 4, "input", &in)) != 0)
		return rc;
	if (out->type != ERT_TFL_INT8)
		return type_fail(L, i, "output", out->type, ERT_TFL_INT8);
	if ((rc = need_quant(L, i, in, "input")) != 0)
		return rc;
	if (!same_quant(in, out))
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "input and output quantization differ",
			       0, NULL);
	if ((rc = check_spatial(L, i, in, out, op->filter_h, op->filter_w)) != 0)
		return rc;
	if (out->dims[3] != in->dims[3])
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "output channels differ from input's ",
			       in->dims[3], "");
	if ((int64_t)op->filter_h * op->filter_w > MAX_TAPS)
		return op_fail(L, ERT_TFL_E_LIMIT, i, "pool window above ", MAX_TAPS, " elements");
	return act_range(L, i, out);
}

static int validate_add(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *a, *b, *out = T(L, op->out);
	int rc;
	if ((rc = need(L, i, 0, ERT_TFL_INT8, 0, "input1", &a)) != 0 ||
	    (rc = need(L, i, 1, ERT_TFL_INT8, 0, "input2", &b)) != 0 ||
	    (rc = need_quant(L, i, a, "input1")) != 0 || (rc = need_quant(L, i, b, "input2")) != 0)
		return rc;
	if (out->type != ERT_TFL_INT8)
		return type_fail(L, i, "output", out->type, ERT_TFL_INT8);
	if ((rc = need_quant(L, i, out, "output")) != 0)
		return rc;
	if (a->n_dims > 4 || b->n_dims > 4 || out->n_dims > 4)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "more than 4 dimensions", 0, NULL);
	/* Broadcast, dimensions aligned at the right: each input dimension is
	 * the output's or 1. */
	for (int d = 0; d < 4; d++) {
		int32_t od = d < out->n_dims ? out->dims[out->n_dims - 1 - d] : 1;
		int32_t ad = d < a->n_dims ? a->dims[a->n_dims - 1 - d] : 1;
		int32_t bd = d < b->n_dims ? b->dims[b->n_dims - 1 - d] : 1;
		int32_t want = ad > bd ? ad : bd;
		if ((ad != od && ad != 1) || (bd != od && bd != 1) || od != want)
			return op_fail(L, ERT_TFL_E_MALFORMED, i,
				       "input shapes do not broadcast to the output shape "
				       "(dimension from the right ",
				       d, ")");
	}
	/* PrepareGeneralSubOp for int8: left shift 20, all in double. */
	double twice_max = 2.0 * (double)(a->scale > b->scale ? a->scale : b->scale);
	op->left_shift = 20;
	tfl_quantize_multiplier((double)a->scale / twice_max, &op->mult[0], &op->shift[0]);
	tfl_quantize_multiplier((double)b->scale / twice_max, &op->mult[1], &op->shift[1]);
	tfl_quantize_multiplier(twice_max / ((double)(1 << 20) * (double)out->scale), &op->mult[2],
				&op->shift[2]);
	if (op->shift[2] > 0)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "output scale is too small for the reference kernel (shift ",
			       op->shift[2], " > 0)");
	return act_range(L, i, out);
}

static int validate_reshape(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *out = T(L, op->out);
	int rc;
	if ((rc = need(L, i, 0, ERT_TFL_INT8, 0, "input", &in)) != 0)
		return rc;
	if (out->type != in->type || out->bytes != in->bytes || !same_quant(in, out))
		return op_fail(L, ERT_TFL_E_MALFORMED, i,
			       "output differs from the input in type, size or quantization", 0,
			       NULL);
	return ERT_TFL_OK;
}

static int validate_softmax(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *out = T(L, op->out);
	int rc;
	if ((rc = need(L, i, 0, ERT_TFL_INT8, 0, "input", &in)) != 0 ||
	    (rc = need_quant(L, i, in, "input")) != 0)
		return rc;
	if (out->type != ERT_TFL_INT8 || out->elems != in->elems || in->n_dims == 0)
		return op_fail(L, ERT_TFL_E_MALFORMED, i,
			       "output must be int8 of the input's shape", 0, NULL);
	/* The reference kernel writes probabilities in 1/256 from -128. */
	const float s = 1.0f / 256.0f;
	if (out->zero_point != -128 || out->scale < s * 0.999f || out->scale > s * 1.001f)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "output quantization must be scale 1/256, zero point -128", 0, NULL);
	if (!(op->beta > 0.0f && op->beta < 1.0e6f))
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "beta must be positive", 0, NULL);
	/* PreprocessSoftmaxScaling (5 integer bits) and CalculateInputRadius. */
	double real = (double)op->beta * (double)in->scale * (double)(1 << (31 - 5));
	if (real > 2147483647.0)
		real = 2147483647.0;
	tfl_quantize_multiplier(real, &op->mult[0], &op->shift[0]);
	if (op->shift[0] < 0 || op->shift[0] > 30 || op->mult[0] == 0)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "beta * input scale is too small for the reference kernel", 0, NULL);
	op->left_shift = op->shift[0];
	double radius = 31.0 * (double)(1u << 26) / (double)(1u << op->left_shift);
	op->diff_min = -(int32_t)radius; /* floor of a positive value */
	return ERT_TFL_OK;
}

static int validate_quantize(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in = op->n_in > 0 ? T(L, op->in[0]) : NULL;
	struct ert_tfl_tensor *out = T(L, op->out);
	if (in == NULL)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "input is missing", 0, NULL);
	if (out->type != ERT_TFL_INT8 || (in->type != ERT_TFL_INT8 && in->type != ERT_TFL_FLOAT32))
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "only float32 or int8 to int8 is supported; output type ", out->type,
			       "");
	int rc = need_quant(L, i, out, "output");
	if (rc == 0 && in->type == ERT_TFL_INT8)
		rc = need_quant(L, i, in, "input");
	if (rc != 0)
		return rc;
	if (in->elems != out->elems)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "output size differs from the input's ",
			       in->elems, " elements");
	if (in->type == ERT_TFL_INT8) {
		double eff = (double)in->scale / (double)out->scale;
		tfl_quantize_multiplier(eff, &op->mult[0], &op->shift[0]);
		if (op->shift[0] > 30)
			return op_fail(L, ERT_TFL_E_UNSUPPORTED, i, "rescale factor too large", 0,
				       NULL);
	}
	return ERT_TFL_OK;
}

static int validate_dequantize(struct loader *L, unsigned i)
{
	struct ert_tfl_op *op = &L->m->ops[i];
	struct ert_tfl_tensor *in, *out = T(L, op->out);
	int rc;
	if ((rc = need(L, i, 0, ERT_TFL_INT8, 0, "input", &in)) != 0 ||
	    (rc = need_quant(L, i, in, "input")) != 0)
		return rc;
	if (out->type != ERT_TFL_FLOAT32 || out->elems != in->elems)
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "output must be float32 of the input's size", 0, NULL);
	return ERT_TFL_OK;
}

static int validate_op(struct loader *L, unsigned i)
{
	switch (L->m->ops[i].opcode) {
	case ERT_TFL_OP_CONV_2D:
		return validate_conv(L, i, 0);
	case ERT_TFL_OP_DEPTHWISE_CONV_2D:
		return validate_conv(L, i, 1);
	case ERT_TFL_OP_FULLY_CONNECTED:
		return validate_fc(L, i);
	case ERT_TFL_OP_AVERAGE_POOL_2D:
	case ERT_TFL_OP_MAX_POOL_2D:
		return validate_pool(L, i);
	case ERT_TFL_OP_ADD:
		return validate_add(L, i);
	case ERT_TFL_OP_RESHAPE:
		return validate_reshape(L, i);
	case ERT_TFL_OP_SOFTMAX:
		return validate_softmax(L, i);
	case ERT_TFL_OP_QUANTIZE:
		return validate_quantize(L, i);
	case ERT_TFL_OP_DEQUANTIZE:
		return validate_dequantize(L, i);
	default:
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "operator is not supported by ergon's interpreter (builtin code ",
			       L->m->ops[i].opcode, ")");
	}
}

static int supported(uint32_t code)
{
	switch (code) {
	case ERT_TFL_OP_ADD:
	case ERT_TFL_OP_AVERAGE_POOL_2D:
	case ERT_TFL_OP_CONV_2D:
	case ERT_TFL_OP_DEPTHWISE_CONV_2D:
	case ERT_TFL_OP_DEQUANTIZE:
	case ERT_TFL_OP_FULLY_CONNECTED:
	case ERT_TFL_OP_MAX_POOL_2D:
	case ERT_TFL_OP_RESHAPE:
	case ERT_TFL_OP_SOFTMAX:
	case ERT_TFL_OP_QUANTIZE:
		return 1;
	default:
		return 0;
	}
}

static int read_operator(struct loader *L, struct tfl_tab *ot, unsigned i)
{
	struct tfl_fb *fb = &L->fb;
	struct ert_tfl_model *m = L->m;
	struct ert_tfl_op *op = &m->ops[i];
	uint32_t opc = 0;
	int rc = tfl_u32(fb, ot, OP_OPCODE, "opcode_index", 0, &opc);
	if (rc != 0)
		return rc;
	if (opc >= L->n_opcodes)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, ot, "opcode_index", "index ", opc,
				 " is past the model's operator_codes", ot->pos);
	op->opcode = L->opcodes[opc];
	if (!supported(op->opcode))
		return op_fail(L, ERT_TFL_E_UNSUPPORTED, i,
			       "operator is not supported by ergon's interpreter (builtin code ",
			       op->opcode,
			       "); supported: CONV_2D DEPTHWISE_CONV_2D FULLY_CONNECTED "
			       "AVERAGE_POOL_2D MAX_POOL_2D ADD RESHAPE SOFTMAX QUANTIZE "
			       "DEQUANTIZE");
	struct tfl_vec ins, outs;
	if ((rc = tfl_vector(fb, ot, OP_INPUTS, "inputs", 4, ERT_TFL_MAX_OP_INPUTS, &ins)) != 0 ||
	    (rc = tfl_vector(fb, ot, OP_OUTPUTS, "outputs", 4, 1, &outs)) != 0)
		return rc;
	if (outs.n != 1)
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, ot, "outputs",
				"operator must have exactly one output", ot->pos);
	op->n_in = (uint8_t)ins.n;
	for (uint32_t k = 0; k < ins.n; k++) {
		int32_t idx = (int32_t)tfl_rd32(fb->p + ins.pos + 4u * k);
		if (idx < -1 || idx >= (int32_t)m->n_tensors)
			return tfl_failn(fb, ERT_TFL_E_MALFORMED, ot, "inputs", "tensor index ",
					 idx, " is not a tensor of the subgraph", ins.pos + 4u * k);
		op->in[k] = (int16_t)idx;
	}
	int32_t oidx = (int32_t)tfl_rd32(fb->p + outs.pos);
	if (oidx < 0 || oidx >= (int32_t)m->n_tensors)
		return tfl_failn(fb, ERT_TFL_E_MALFORMED, ot, "outputs", "tensor index ", oidx,
				 " is not a tensor of the subgraph", outs.pos);
	op->out = (int16_t)oidx;
	if (m->tensors[oidx].is_const)
		return op_fail(L, ERT_TFL_E_MALFORMED, i, "output tensor ", oidx,
			       " has constant data");
	if ((rc = read_options(L, ot, i, op)) != 0)
		return rc;
	return validate_op(L, i);
}

/* ---- lifetimes and the arena plan ------------------------------------ */

static int data_inputs(const struct ert_tfl_op *op)
{
	/* RESHAPE's optional second input is a shape, not data. */
	return op->opcode == ERT_TFL_OP_RESHAPE ? (op->n_in > 0 ? 1 : 0) : op->n_in;
}

static int lifetimes(struct loader *L)
{
	struct ert_tfl_model *m = L->m;
	for (unsigned k = 0; k < m->n_inputs; k++) {
		struct ert_tfl_tensor *t = &m->tensors[m->inputs[k]];
		if (t->is_const) {
			struct tfl_tab sg = {0, 0, 0, 0, "SubGraph", 0};
			return tfl_failn(&L->fb, ERT_TFL_E_MALFORMED, &sg, "inputs",
					 "input tensor ", m->inputs[k], " has constant data",
					 UINT32_MAX);
		}
		t->first_op = 0;
		t->last_op = 0;
	}
	for (unsigned i = 0; i < m->n_ops; i++) {
		struct ert_tfl_op *op = &m->ops[i];
		for (int k = 0; k < data_inputs(op); k++) {
			if (op->in[k] < 0)
				continue;
			struct ert_tfl_tensor *t = &m->tensors[op->in[k]];
			if (t->is_const)
				continue;
			if (t->first_op < 0)
				return op_fail(L, ERT_TFL_E_MALFORMED, i, "input tensor ",
					       op->in[k], " is read before any operator writes it");
			t->last_op = (int16_t)i;
		}
		struct ert_tfl_tensor *o = &m->tensors[op->out];
		if (o->first_op >= 0)
			return op_fail(L, ERT_TFL_E_MALFORMED, i, "output tensor ", op->out,
				       " is written twice (or is a graph input)");
		o->first_op = (int16_t)i;
		o->last_op = (int16_t)i;
	}
	for (unsigned k = 0; k < m->n_outputs; k++) {
		struct ert_tfl_tensor *t = &m->tensors[m->outputs[k]];
		if (t->first_op < 0 || t->is_const) {
			struct tfl_tab sg = {0, 0, 0, 0, "SubGraph", 0};
			return tfl_failn(&L->fb, ERT_TFL_E_MALFORMED, &sg, "outputs",
					 "output tensor ", m->outputs[k],
					 " is never written by an operator", UINT32_MAX);
		}
		t->last_op = (int16_t)(m->n_ops > 0 ? m->n_ops - 1 : 0);
	}
	return ERT_TFL_OK;
}

/* Greedy by size: the largest tensor first, each at the lowest offset
 * that does not overlap a placed tensor alive at the same time (the plan
 * TFLite Micro's GreedyMemoryPlanner makes). */
static void plan(struct ert_tfl_model *m)
{
	int16_t order[ERT_TFL_MAX_TENSORS];
	int16_t placed[ERT_TFL_MAX_TENSORS];
	unsigned n = 0, n_placed = 0;
	for (unsigned k = 0; k < m->n_tensors; k++) {
		struct ert_tfl_tensor *t = &m->tensors[k];
		if (!t->is_const && t->first_op >= 0) {
			t->in_arena = 1;
			/* Insertion sort, bytes descending, index ascending. */
			unsigned j = n++;
			while (j > 0 && m->tensors[order[j - 1]].bytes < t->bytes) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = (int16_t)k;
		}
	}
	uint32_t peak = 0;
	for (unsigned q = 0; q < n; q++) {
		struct ert_tfl_tensor *t = &m->tensors[order[q]];
		uint32_t off = 0;
		/* Placed tensors are kept sorted by offset; walk the gaps. */
		for (unsigned p = 0; p < n_placed; p++) {
			const struct ert_tfl_tensor *u = &m->tensors[placed[p]];
			if (u->last_op < t->first_op || t->last_op < u->first_op)
				continue;
			if (off + t->bytes <= u->arena_offset)
				break;
			uint32_t end = align_up(u->arena_offset + u->bytes);
			if (end > off)
				off = end;
		}
		t->arena_offset = off;
		unsigned j = n_placed++;
		while (j > 0 && m->tensors[placed[j - 1]].arena_offset > off) {
			placed[j] = placed[j - 1];
			j--;
		}
		placed[j] = order[q];
		if (off + t->bytes > peak)
			peak = off + t->bytes;
	}
	m->activation_bytes = align_up(peak);
	uint32_t persist = 0;
	for (unsigned i = 0; i < m->n_ops; i++) {
		struct ert_tfl_op *op = &m->ops[i];
		op->persist_off = m->activation_bytes + persist;
		persist += align_up(op->n_channels * 16u);
	}
	m->persist_bytes = persist;
	m->arena_bytes = m->activation_bytes + persist;
}

/* ---- the model ------------------------------------------------------- */

static int read_io(struct loader *L, struct tfl_tab *sg, unsigned slot, const char *field,
		   int16_t *dst, uint16_t *n)
{
	struct tfl_vec v;
	int rc = tfl_vector(&L->fb, sg, slot, field, 4, ERT_TFL_MAX_IO, &v);
	if (rc != 0)
		return rc;
	if (v.n == 0)
		return tfl_fail(&L->fb, ERT_TFL_E_MALFORMED, sg, field, "is empty", sg->pos);
	for (uint32_t k = 0; k < v.n; k++) {
		int32_t idx = (int32_t)tfl_rd32(L->fb.p + v.pos + 4u * k);
		if (idx < 0 || idx >= (int32_t)L->m->n_tensors)
			return tfl_failn(&L->fb, ERT_TFL_E_MALFORMED, sg, field, "tensor index ",
					 idx, " is not a tensor of the subgraph", v.pos + 4u * k);
		dst[k] = (int16_t)idx;
	}
	*n = (uint16_t)v.n;
	return ERT_TFL_OK;
}

static void zero(void *p, size_t n)
{
	volatile uint8_t *b = p;
	while (n--)
		*b++ = 0;
}

int ert_tfl_load(struct ert_tfl_model *m, const void *buf, size_t len, struct ert_tfl_err *err)
{
	struct loader L;
	struct tfl_fb *fb = &L.fb;
	zero(&L, sizeof L);
	if (err != NULL) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	fb->p = buf;
	fb->len = len > 0xFFFFFFF0u ? 0xFFFFFFF0u : (uint32_t)len;
	fb->err = err;
	L.m = m;
	zero(m, sizeof *m);
	m->buf = buf;
	m->len = fb->len;
	struct tfl_tab root, sg;
	struct tfl_vec codes, sgs, tensors, ops;
	int rc = tfl_root(fb, &root);
	if (rc != 0)
		return rc;
	if ((rc = tfl_u32(fb, &root, MODEL_VERSION, "version", 0, &m->version)) != 0)
		return rc;
	if (m->version != 3)
		return tfl_failn(fb, ERT_TFL_E_UNSUPPORTED, &root, "version", "schema version ",
				 m->version, " is not 3", root.pos);
	if ((rc = tfl_vector(fb, &root, MODEL_OPCODES, "operator_codes", 4, ERT_TFL_MAX_OPCODES,
			     &codes)) != 0 ||
	    (rc = tfl_vector(fb, &root, MODEL_SUBGRAPHS, "subgraphs", 4, 64, &sgs)) != 0 ||
	    (rc = tfl_vector(fb, &root, MODEL_BUFFERS, "buffers", 4, ERT_TFL_MAX_BUFFERS,
			     &L.buffers)) != 0)
		return rc;
	for (uint32_t k = 0; k < codes.n; k++) {
		struct tfl_tab ct;
		int8_t dep = 0;
		uint8_t dep_u = 0;
		int32_t code = 0;
		if ((rc = tfl_vec_table(fb, &codes, k, "OperatorCode", &ct)) != 0 ||
		    (rc = tfl_u8(fb, &ct, OPC_DEPRECATED, "deprecated_builtin_code", 0, &dep_u)) !=
			0 ||
		    (rc = tfl_i32(fb, &ct, OPC_BUILTIN, "builtin_code", 0, &code)) != 0)
			return rc;
		dep = (int8_t)dep_u;
		/* The larger of the two fields is the code (schema 3a). */
		if (dep > code)
			code = dep;
		if (code < 0 || code > 0xFFFF)
			return tfl_failn(fb, ERT_TFL_E_MALFORMED, &ct, "builtin_code", "code ",
					 code, " is out of range", ct.pos);
		L.opcodes[k] = (uint16_t)code;
	}
	L.n_opcodes = codes.n;
	if (sgs.n == 0)
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, &root, "subgraphs",
				"model has no subgraph", root.pos);
	if ((rc = tfl_vec_table(fb, &sgs, 0, "SubGraph", &sg)) != 0)
		return rc;
	if ((rc = tfl_vector(fb, &sg, SG_TENSORS, "tensors", 4, ERT_TFL_MAX_TENSORS, &tensors)) !=
		0 ||
	    (rc = tfl_vector(fb, &sg, SG_OPERATORS, "operators", 4, ERT_TFL_MAX_OPS, &ops)) != 0)
		return rc;
	m->n_tensors = (uint16_t)tensors.n;
	for (uint32_t k = 0; k < tensors.n; k++) {
		struct tfl_tab tt;
		if ((rc = tfl_vec_table(fb, &tensors, k, "Tensor", &tt)) != 0 ||
		    (rc = read_tensor(&L, &tt, &m->tensors[k])) != 0)
			return rc;
	}
	if ((rc = read_io(&L, &sg, SG_INPUTS, "inputs", m->inputs, &m->n_inputs)) != 0 ||
	    (rc = read_io(&L, &sg, SG_OUTPUTS, "outputs", m->outputs, &m->n_outputs)) != 0)
		return rc;
	if (ops.n == 0)
		return tfl_fail(fb, ERT_TFL_E_MALFORMED, &sg, "operators",
				"subgraph has no operators", sg.pos);
	m->n_ops = (uint16_t)ops.n;
	for (uint32_t i = 0; i < ops.n; i++) {
		struct tfl_tab ot;
		if ((rc = tfl_vec_table(fb, &ops, i, "Operator", &ot)) != 0 ||
		    (rc = read_operator(&L, &ot, i)) != 0)
			return rc;
		m->total_macs += m->ops[i].macs;
		m->total_param_bytes += m->ops[i].param_bytes;
	}
	if ((rc = lifetimes(&L)) != 0)
		return rc;
	plan(m);
	return ERT_TFL_OK;
}

static int arena_fail(struct ert_tfl_err *err, const char *what, uint32_t need, uint32_t have)
{
	if (err != NULL && err->code == 0) {
		struct ert_buf b;
		ert_buf_init(&b, err->msg, sizeof err->msg);
		ert_buf_str(&b, what);
		ert_buf_u64(&b, need);
		ert_buf_str(&b, " bytes, the arena given has ");
		ert_buf_u64(&b, have);
		err->code = ERT_TFL_E_ARENA;
	}
	return ERT_TFL_E_ARENA;
}

int ert_tfl_bind(struct ert_tfl_model *m, void *arena, size_t len, struct ert_tfl_err *err)
{
	if (err != NULL) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	m->bound = 0;
	uint32_t have = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	if (arena == NULL || have < m->arena_bytes)
		return arena_fail(err, "arena too small: the model needs ", m->arena_bytes,
				  arena == NULL ? 0 : have);
	if (((uintptr_t)arena & 3u) != 0)
		return arena_fail(err, "arena must be 4-byte aligned; needs ", m->arena_bytes,
				  have);
	m->arena = arena;
	m->arena_len = have;
	for (unsigned i = 0; i < m->n_ops; i++) {
		struct ert_tfl_op *op = &m->ops[i];
		if (op->n_channels == 0)
			continue;
		const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
		const struct ert_tfl_tensor *f = &m->tensors[op->in[1]];
		const struct ert_tfl_tensor *out = &m->tensors[op->out];
		const struct ert_tfl_tensor *b =
		    op->n_in > 2 && op->in[2] >= 0 ? &m->tensors[op->in[2]] : NULL;
		int32_t *mult = (int32_t *)(void *)(m->arena + op->persist_off);
		int32_t *shift = mult + op->n_channels;
		int32_t *bias = shift + op->n_channels;
		int32_t *fsum = bias + op->n_channels;
		/* Taps per output channel: a depthwise filter [1,h,w,C] holds
		 * channel c at every C-th byte, the others are [C][taps]. */
		const int dw = op->opcode == ERT_TFL_OP_DEPTHWISE_CONV_2D;
		const uint32_t taps = f->elems / op->n_channels;
		const int8_t *fd = (const int8_t *)f->data;
		for (uint32_t c = 0; c < op->n_channels; c++) {
			int32_t sum = 0;
			for (uint32_t k = 0; k < taps; k++)
				sum += fd[dw ? k * op->n_channels + c : c * taps + k];
			fsum[c] = sum;
			float fs =
			    f->n_scale > 1 ? tfl_rdf32(m->buf + f->scale_pos + 4u * c) : f->scale;
			/* PopulateConvolutionQuantizationParams: in double. */
			double eff = (double)in->scale * (double)fs / (double)out->scale;
			tfl_quantize_multiplier(eff, &mult[c], &shift[c]);
			/* Only absurd scales (ratios near 2^30) get here: keep the
			 * shift defined rather than refuse at bind time. */
			if (shift[c] > 30)
				shift[c] = 30;
			bias[c] = b != NULL ? (int32_t)tfl_rd32(b->data + 4u * c) : 0;
		}
	}
	m->bound = 1;
	return ERT_TFL_OK;
}

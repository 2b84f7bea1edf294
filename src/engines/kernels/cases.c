/* The cases of `ergon kernels run`: from a shapes file (synthetic,
 * deterministic data and quantization) or from a model's own conv, dwconv
 * and fc layers (its real shapes, weights and requantization), each with
 * the workload record of the method. */
#include "ergon/kernels.h"
#include "ergon/model.h"
#include "ergon/parse.h"
#include "kernels_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM_MAX ERGON_KERNELS_DIM_MAX
#define ELEMS_MAX ERGON_KERNELS_ELEMS_MAX
#define LINE_MAX_BYTES 512
#define CASES_MAX 1024
/* Synthetic quantization of shapes-file cases (recorded in each record). */
#define SYN_IN_ZP (-3)
#define SYN_OUT_ZP 5

static void free_bufs(struct kcase *c)
{
	free(c->in);
	free(c->filter);
	free(c->out);
	free(c->expect);
	free(c->q);
	json_decref(c->record);
	memset(c, 0, sizeof *c);
}

void kcases_free(struct kcase *cases, size_t n)
{
	if (cases == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free_bufs(&cases[i]);
	free(cases);
}

static uint32_t xorshift(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static int8_t rnd8(uint32_t *s)
{
	return (int8_t)((int32_t)(xorshift(s) % 255u) - 127);
}

void kcase_prepare(struct kcase *c, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1u;
	for (size_t i = 0; i < c->in_len; i++)
		c->in[i] = rnd8(&s);
	if (c->kind == KC_CONV)
		koracle_conv(&c->conv, c->expect);
	else if (c->kind == KC_DWCONV)
		koracle_dwconv(&c->conv, c->expect);
	else
		koracle_fc(&c->fc, c->expect);
}

void kcase_run_ref(struct kcase *c)
{
	if (c->kind == KC_CONV)
		tfl_conv_s8(&c->conv);
	else if (c->kind == KC_DWCONV)
		tfl_dwconv_s8(&c->conv);
	else
		tfl_fc_s8(&c->fc);
}

static json_t *dims4(int32_t a, int32_t b, int32_t c, int32_t d)
{
	return json_pack("[i,i,i,i]", (int)a, (int)b, (int)c, (int)d);
}

/* The workload record of a conv/dwconv case. */
static json_t *conv_record(const struct kcase *c, const char *source, const char *quant,
			   const char *padding)
{
	const struct tfl_conv_args *a = &c->conv;
	int dw = c->kind == KC_DWCONV;
	uint64_t macs = (uint64_t)a->batches * (uint64_t)a->out_h * (uint64_t)a->out_w *
			(uint64_t)a->out_c * (uint64_t)a->f_h * (uint64_t)a->f_w *
			(uint64_t)(dw ? 1 : a->f_c);
	return json_pack(
	    "{s:s, s:s, s:s, s:s, s:{s:o, s:s, s:s, s:i}, s:{s:o, s:s, s:s, s:b},"
	    " s:{s:s, s:i}, s:{s:o, s:s, s:s, s:i}, s:[i,i], s:[i,i], s:s, s:[i,i], s:[i,i],"
	    " s:{s:i, s:s}, s:i, s:I, s:b}",
	    "case", c->name, "symbol", dw ? "tfl_dwconv_s8" : "tfl_conv_s8", "op",
	    dw ? "DEPTHWISE_CONV_2D" : "CONV_2D", "source", source, "input", "dims",
	    dims4(a->batches, a->in_h, a->in_w, a->in_c), "layout", "NHWC", "dtype", "int8",
	    "zero_point", (int)-a->in_offset, "filter", "dims",
	    dw ? dims4(1, a->f_h, a->f_w, a->out_c) : dims4(a->out_c, a->f_h, a->f_w, a->f_c),
	    "layout", dw ? "1HWO" : "OHWI", "dtype", "int8", "symmetric", 1, "bias", "dtype",
	    "int32", "n", (int)a->out_c, "output", "dims",
	    dims4(a->batches, a->out_h, a->out_w, a->out_c), "layout", "NHWC", "dtype", "int8",
	    "zero_point", (int)a->out_offset, "stride", (int)a->stride_h, (int)a->stride_w,
	    "dilation", (int)a->dil_h, (int)a->dil_w, "padding", padding, "pad", (int)a->pad_h,
	    (int)a->pad_w, "activation_range", (int)a->act_min, (int)a->act_max, "quantization",
	    "per_channel", (int)a->out_c, "source", quant, "scratch_bytes", 0, "macs",
	    (json_int_t)macs, "channels_multiple_of_4", (a->in_c % 4 == 0 && a->out_c % 4 == 0));
}

static json_t *fc_record(const struct kcase *c, const char *source, const char *quant)
{
	const struct tfl_fc_args *a = &c->fc;
	return json_pack(
	    "{s:s, s:s, s:s, s:s, s:{s:[i,i], s:s, s:s, s:i},"
	    " s:{s:[i,i], s:s, s:s, s:i}, s:{s:s, s:i}, s:{s:[i,i], s:s, s:s, s:i},"
	    " s:[i,i], s:{s:i, s:s}, s:i, s:I, s:b}",
	    "case", c->name, "symbol", "tfl_fc_s8", "op", "FULLY_CONNECTED", "source", source,
	    "input", "dims", (int)a->batches, (int)a->accum, "layout", "NC", "dtype", "int8",
	    "zero_point", (int)-a->in_offset, "filter", "dims", (int)a->units, (int)a->accum,
	    "layout", "OI", "dtype", "int8", "zero_point", (int)-a->filter_offset, "bias", "dtype",
	    "int32", "n", (int)a->units, "output", "dims", (int)a->batches, (int)a->units, "layout",
	    "NC", "dtype", "int8", "zero_point", (int)a->out_offset, "activation_range",
	    (int)a->act_min, (int)a->act_max, "quantization", "per_channel",
	    a->per_channel ? (int)a->units : 1, "source", quant, "scratch_bytes", 0, "macs",
	    (json_int_t)((uint64_t)a->batches * (uint64_t)a->units * (uint64_t)a->accum),
	    "accum_multiple_of_16", a->accum % 16 == 0);
}

/* ---- shapes file --------------------------------------------------- */

struct spec {
	int kind;
	char name[128];
	int32_t in[3], f[2], stride[2], dil[2];
	int32_t out_c, mult, accum, units, batches;
	int same, relu;
	int have_in, have_f, have_pad, have_outc, have_mult, have_accum, have_units;
};

/* "AxB" or "AxBxC" into v[0..n): 1..DIM_MAX each. */
static int parse_dims(const char *s, int32_t *v, int n)
{
	for (int k = 0; k < n; k++) {
		char *end = NULL;
		if (s[0] < '0' || s[0] > '9')
			return -1;
		long x = strtol(s, &end, 10);
		if (x < 1 || x > DIM_MAX)
			return -1;
		v[k] = (int32_t)x;
		if (k + 1 < n) {
			if (*end != 'x')
				return -1;
			s = end + 1;
		} else if (*end != '\0') {
			return -1;
		}
	}
	return 0;
}

static int parse_spec(char *line, struct spec *sp, char *why, size_t cap)
{
	memset(sp, 0, sizeof *sp);
	sp->stride[0] = sp->stride[1] = sp->dil[0] = sp->dil[1] = 1;
	sp->batches = 1;
	char *save = NULL;
	char *tok = strtok_r(line, " \t", &save);
	if (strcmp(tok, "conv") == 0)
		sp->kind = KC_CONV;
	else if (strcmp(tok, "dwconv") == 0)
		sp->kind = KC_DWCONV;
	else if (strcmp(tok, "fc") == 0)
		sp->kind = KC_FC;
	else {
		snprintf(why, cap, "unknown kernel '%.32s' (conv, dwconv or fc)", tok);
		return -1;
	}
	tok = strtok_r(NULL, " \t", &save);
	if (tok == NULL || strchr(tok, '=') != NULL || strlen(tok) >= sizeof sp->name ||
	    strchr(tok, ',') != NULL) {
		snprintf(why, cap, "the case name comes second (no '=' or ',', < 128 bytes)");
		return -1;
	}
	memcpy(sp->name, tok, strlen(tok) + 1);
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		char *eq = strchr(tok, '=');
		if (eq == NULL) {
			snprintf(why, cap, "'%.32s' is not key=value", tok);
			return -1;
		}
		*eq = '\0';
		const char *k = tok, *v = eq + 1;
		int bad = 0;
		if (strcmp(k, "in") == 0)
			bad = parse_dims(v, sp->in, 3), sp->have_in = 1;
		else if (strcmp(k, "filter") == 0)
			bad = parse_dims(v, sp->f, 2), sp->have_f = 1;
		else if (strcmp(k, "stride") == 0)
			bad = parse_dims(v, sp->stride, 2);
		else if (strcmp(k, "dil") == 0)
			bad = parse_dims(v, sp->dil, 2);
		else if (strcmp(k, "out_c") == 0)
			bad = parse_dims(v, &sp->out_c, 1), sp->have_outc = 1;
		else if (strcmp(k, "mult") == 0)
			bad = parse_dims(v, &sp->mult, 1), sp->have_mult = 1;
		else if (strcmp(k, "accum") == 0)
			bad = parse_dims(v, &sp->accum, 1), sp->have_accum = 1;
		else if (strcmp(k, "units") == 0)
			bad = parse_dims(v, &sp->units, 1), sp->have_units = 1;
		else if (strcmp(k, "batches") == 0)
			bad = parse_dims(v, &sp->batches, 1);
		else if (strcmp(k, "act") == 0) {
			if (strcmp(v, "relu") == 0)
				sp->relu = 1;
			else if (strcmp(v, "none") != 0)
				bad = 2;
		} else if (strcmp(k, "pad") == 0) {
			sp->have_pad = 1;
			if (strcmp(v, "same") == 0)
				sp->same = 1;
			else if (strcmp(v, "valid") != 0) {
				snprintf(why, cap,
					 "padding '%.32s' is not supported: the TFLite kernels "
					 "take same or valid",
					 v);
				return -1;
			}
		} else {
			snprintf(why, cap, "unknown key '%.32s'", k);
			return -1;
		}
		if (bad == 2) {
			snprintf(why, cap, "%s=%.32s: relu or none", k, v);
			return -1;
		}
		if (bad) {
			/* The form this key takes: in is HxWxC, filter, stride
			 * and dil HxW, the counts one integer. */
			const char *form = strcmp(k, "in") == 0 ? "HxWxC"
					   : (strcmp(k, "filter") == 0 || strcmp(k, "stride") == 0 ||
					      strcmp(k, "dil") == 0)
					       ? "HxW"
					       : "N";
			snprintf(why, cap,
				 "%s=%.32s: write %s=%s, each an integer in 1..4096", k, v, k,
				 form);
			return -1;
		}
	}
	const char *need = NULL;
	if (sp->kind == KC_FC) {
		if (!sp->have_accum)
			need = "accum=N";
		else if (!sp->have_units)
			need = "units=N";
	} else if (!sp->have_in)
		need = "in=HxWxC";
	else if (!sp->have_f)
		need = "filter=HxW";
	else if (!sp->have_pad)
		need = "pad=same|valid";
	else if (sp->kind == KC_CONV && !sp->have_outc)
		need = "out_c=N";
	else if (sp->kind == KC_DWCONV && !sp->have_mult)
		sp->mult = 1;
	if (need != NULL) {
		snprintf(why, cap, "missing %s", need);
		return -1;
	}
	return 0;
}

static int alloc_case(struct kcase *c, size_t in_len, size_t f_len, size_t out_len, size_t ch)
{
	c->in_len = in_len;
	c->out_len = out_len;
	c->in = malloc(in_len);
	c->filter = f_len ? malloc(f_len) : NULL;
	c->out = malloc(out_len);
	c->expect = malloc(out_len);
	c->q = ch ? calloc(4 * ch, sizeof *c->q) : NULL;
	return (c->in && (!f_len || c->filter) && c->out && c->expect && (!ch || c->q)) ? 0 : -1;
}

/* Synthetic symmetric weights, biases and per-channel multipliers. */
static void synth_quant(struct kcase *c, size_t f_len, int32_t ch, int32_t taps, int dw,
			uint32_t seed)
{
	uint32_t s = seed * 40503u + 7u;
	for (size_t i = 0; i < f_len; i++)
		c->filter[i] = rnd8(&s);
	int32_t *mult = c->q, *shift = c->q + ch, *bias = c->q + 2 * ch, *fsum = c->q + 3 * ch;
	for (int32_t k = 0; k < ch; k++) {
		/* An effective scale of a typical int8 layer, varied per channel. */
		double eff = 0.8 / (127.0 * sqrt((double)taps)) * (1.0 + (double)(k % 7) / 8.0);
		tfl_quantize_multiplier(eff, &mult[k], &shift[k]);
		bias[k] = (int32_t)(xorshift(&s) % 4001u) - 2000;
		int32_t sum = 0;
		for (int32_t t = 0; t < taps; t++)
			sum += c->filter[dw ? (size_t)t * (size_t)ch + (size_t)k
					    : (size_t)k * (size_t)taps + (size_t)t];
		fsum[k] = sum;
	}
}

static int32_t out_size(int32_t in, int32_t f, int32_t stride, int32_t dil, int same)
{
	int32_t eff = (f - 1) * dil + 1;
	if (same)
		return (in + stride - 1) / stride;
	return in >= eff ? (in - eff) / stride + 1 : 0;
}

static int32_t pad_of(int32_t in, int32_t out, int32_t f, int32_t stride, int32_t dil)
{
	int64_t total = ((int64_t)out - 1) * stride + ((int64_t)f - 1) * dil + 1 - in;
	return total > 0 ? (int32_t)(total / 2) : 0;
}

static int build_spec(const struct spec *sp, struct kcase *c, uint32_t seed, const char *source,
		      char *why, size_t cap)
{
	memset(c, 0, sizeof *c);
	memcpy(c->name, sp->name, sizeof c->name);
	c->kind = sp->kind;
	int32_t act_min = sp->relu ? SYN_OUT_ZP : -128, act_max = 127;
	const char *quant = "synthetic: input zp -3, output zp 5, symmetric weights, "
			    "per-channel multipliers, deterministic pseudo-random data";
	if (sp->kind == KC_FC) {
		uint64_t in_len = (uint64_t)sp->batches * (uint64_t)sp->accum;
		uint64_t f_len = (uint64_t)sp->units * (uint64_t)sp->accum;
		uint64_t out_len = (uint64_t)sp->batches * (uint64_t)sp->units;
		if (in_len > ELEMS_MAX || f_len > ELEMS_MAX || out_len > ELEMS_MAX) {
			snprintf(why, cap, "invalid shape: a tensor over %u elements", ELEMS_MAX);
			return -1;
		}
		if (alloc_case(c, in_len, f_len, out_len, (size_t)sp->units) != 0)
			return -2;
		synth_quant(c, f_len, sp->units, sp->accum, 0, seed);
		struct tfl_fc_args *a = &c->fc;
		*a = (struct tfl_fc_args){.in = c->in,
					  .filter = c->filter,
					  .mult = c->q,
					  .shift = c->q + sp->units,
					  .bias = c->q + 2 * sp->units,
					  .fsum = c->q + 3 * sp->units,
					  .out = c->out,
					  .batches = sp->batches,
					  .accum = sp->accum,
					  .units = sp->units,
					  .in_offset = -SYN_IN_ZP,
					  .filter_offset = 0,
					  .out_offset = SYN_OUT_ZP,
					  .act_min = act_min,
					  .act_max = act_max,
					  .per_channel = 1};
		c->record = fc_record(c, source, quant);
		return 0;
	}
	int dw = sp->kind == KC_DWCONV;
	int32_t oh = out_size(sp->in[0], sp->f[0], sp->stride[0], sp->dil[0], sp->same);
	int32_t ow = out_size(sp->in[1], sp->f[1], sp->stride[1], sp->dil[1], sp->same);
	if (oh < 1 || ow < 1) {
		snprintf(why, cap,
			 "invalid shape: the dilated filter is larger than the input with "
			 "pad=valid (no output)");
		return -1;
	}
	int32_t out_c = dw ? sp->in[2] * sp->mult : sp->out_c;
	uint64_t in_len =
	    (uint64_t)sp->batches * (uint64_t)sp->in[0] * (uint64_t)sp->in[1] * (uint64_t)sp->in[2];
	uint64_t taps = (uint64_t)sp->f[0] * (uint64_t)sp->f[1] * (dw ? 1u : (uint64_t)sp->in[2]);
	uint64_t f_len = taps * (uint64_t)out_c;
	uint64_t out_len = (uint64_t)sp->batches * (uint64_t)oh * (uint64_t)ow * (uint64_t)out_c;
	if (in_len > ELEMS_MAX || f_len > ELEMS_MAX || out_len > ELEMS_MAX ||
	    out_len * taps > 4000000000ull) {
		snprintf(why, cap, "invalid shape: over %u elements or 4e9 MACs", ELEMS_MAX);
		return -1;
	}
	if (alloc_case(c, in_len, f_len, out_len, (size_t)out_c) != 0)
		return -2;
	synth_quant(c, f_len, out_c, (int32_t)taps, dw, seed);
	struct tfl_conv_args *a = &c->conv;
	*a = (struct tfl_conv_args){
	    .in = c->in,
	    .filter = c->filter,
	    .mult = c->q,
	    .shift = c->q + out_c,
	    .bias = c->q + 2 * out_c,
	    .fsum = c->q + 3 * out_c,
	    .out = c->out,
	    .batches = sp->batches,
	    .in_h = sp->in[0],
	    .in_w = sp->in[1],
	    .in_c = sp->in[2],
	    .out_h = oh,
	    .out_w = ow,
	    .out_c = out_c,
	    .f_h = sp->f[0],
	    .f_w = sp->f[1],
	    .f_c = dw ? out_c : sp->in[2],
	    .stride_h = sp->stride[0],
	    .stride_w = sp->stride[1],
	    .dil_h = sp->dil[0],
	    .dil_w = sp->dil[1],
	    .pad_h = pad_of(sp->in[0], oh, sp->f[0], sp->stride[0], sp->dil[0]),
	    .pad_w = pad_of(sp->in[1], ow, sp->f[1], sp->stride[1], sp->dil[1]),
	    .depth_mult = dw ? sp->mult : 1,
	    .in_offset = -SYN_IN_ZP,
	    .out_offset = SYN_OUT_ZP,
	    .act_min = act_min,
	    .act_max = act_max};
	c->record = conv_record(c, source, quant, sp->same ? "same" : "valid");
	return 0;
}

static int push_refused(json_t *refused, size_t line, const char *name, const char *why)
{
	return json_array_append_new(refused, json_pack("{s:I, s:s, s:s}", "line", (json_int_t)line,
							"case", name, "why", why));
}

int kcases_from_shapes(const char *text, size_t len, const char *name, int suites,
		       struct kcase **cases, size_t *n, json_t **refused, struct ergon_err *err)
{
	struct kcase *cs = calloc(CASES_MAX, sizeof *cs);
	json_t *ref = json_array();
	size_t k = 0, pos = 0, line = 0;
	int rc = 0;
	if (cs == NULL || ref == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto cleanup;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
		char buf[LINE_MAX_BYTES + 1], why[256], src[160];
		const char *p = text + pos;
		pos = end + 1;
		line++;
		if (l > 0 && p[l - 1] == '\r')
			l--;
		if (l > LINE_MAX_BYTES) {
			push_refused(ref, line, "?", "line longer than 512 bytes");
			continue;
		}
		memcpy(buf, p, l);
		buf[l] = '\0';
		if (memchr(buf, '\0', l) != NULL) {
			push_refused(ref, line, "?", "a NUL byte in the line");
			continue;
		}
		char *s = buf;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			continue;
		struct spec sp;
		if (parse_spec(s, &sp, why, sizeof why) != 0) {
			push_refused(ref, line, sp.name[0] ? sp.name : "?", why);
			continue;
		}
		if (!(sp.kind & suites))
			continue;
		if (k == CASES_MAX) {
			rc = ergon_err_set(err, ERGON_ETOOBIG, "%s:%zu: more than %d cases", name,
					   line, CASES_MAX);
			goto cleanup;
		}
		for (size_t j = 0; j < k; j++)
			if (strcmp(cs[j].name, sp.name) == 0) {
				snprintf(why, sizeof why,
					 "the case name is used on an earlier line");
				sp.kind = 0;
			}
		if (sp.kind == 0) {
			push_refused(ref, line, sp.name, why);
			continue;
		}
		snprintf(src, sizeof src, "%.120s:%zu", name, line);
		int b = build_spec(&sp, &cs[k], (uint32_t)line, src, why, sizeof why);
		if (b == -2) {
			k++;
			rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
			goto cleanup;
		}
		if (b == 0 && cs[k].record == NULL) {
			b = -1;
			snprintf(why, sizeof why, "kernels: out of memory for the record");
		}
		if (b != 0) {
			free_bufs(&cs[k]);
			push_refused(ref, line, sp.name, why);
			continue;
		}
		k++;
	}
	*cases = cs;
	*n = k;
	*refused = ref;
	return 0;
cleanup:
	kcases_free(cs, k);
	json_decref(ref);
	return rc;
}

int kcases_from_model(const struct ert_tfl_model *m, const char *path, int suites,
		      struct kcase **cases, size_t *n, json_t **refused, struct ergon_err *err)
{
	struct kcase *cs = calloc(m->n_ops ? m->n_ops : 1, sizeof *cs);
	json_t *ref = json_array();
	size_t k = 0;
	int rc = 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (cs == NULL || ref == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto cleanup;
	}
	for (unsigned i = 0; i < m->n_ops; i++) {
		const struct ert_tfl_op *op = &m->ops[i];
		int kind = op->opcode == ERT_TFL_OP_CONV_2D		? KC_CONV
			   : op->opcode == ERT_TFL_OP_DEPTHWISE_CONV_2D ? KC_DWCONV
			   : op->opcode == ERT_TFL_OP_FULLY_CONNECTED	? KC_FC
									: 0;
		if (kind == 0 || !(kind & suites))
			continue;
		struct kcase *c = &cs[k];
		const struct ert_tfl_tensor *in = &m->tensors[op->in[0]];
		const struct ert_tfl_tensor *f = &m->tensors[op->in[1]];
		const struct ert_tfl_tensor *out = &m->tensors[op->out];
		char src[200];
		snprintf(c->name, sizeof c->name, "%.80s#%u_%s", base, i,
			 kind == KC_CONV     ? "conv"
			 : kind == KC_DWCONV ? "dwconv"
					     : "fc");
		snprintf(src, sizeof src, "%.150s operator %u", path, i);
		if (f->data == NULL || op->n_channels == 0) {
			push_refused(ref, i, c->name,
				     "the filter is not a constant tensor with per-channel "
				     "requantization: not a kernel case");
			memset(c, 0, sizeof *c);
			continue;
		}
		c->kind = kind;
		const int32_t *pers = (const int32_t *)(const void *)(m->arena + op->persist_off);
		if (alloc_case(c, in->bytes, 0, out->bytes, 0) != 0) {
			k++;
			rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
			goto cleanup;
		}
		const char *quant = "the model's own (weights, scales, zero points, biases); "
				    "input deterministic pseudo-random int8";
		if (kind == KC_FC) {
			struct tfl_fc_args *a = &c->fc;
			a->in = c->in;
			a->filter = (const int8_t *)f->data;
			a->mult = pers;
			a->shift = pers + op->n_channels;
			a->bias = pers + 2u * op->n_channels;
			a->fsum = pers + 3u * op->n_channels;
			a->out = c->out;
			a->accum = f->dims[1];
			a->units = f->dims[0];
			a->batches = (int32_t)(in->elems / (uint32_t)a->accum);
			a->in_offset = -in->zero_point;
			a->filter_offset = -f->zero_point;
			a->out_offset = out->zero_point;
			a->act_min = op->act_min;
			a->act_max = op->act_max;
			a->per_channel = 1;
			c->record = fc_record(c, src, quant);
		} else {
			struct tfl_conv_args *a = &c->conv;
			*a = (struct tfl_conv_args){.in = c->in,
						    .filter = (const int8_t *)f->data,
						    .mult = pers,
						    .shift = pers + op->n_channels,
						    .bias = pers + 2u * op->n_channels,
						    .fsum = pers + 3u * op->n_channels,
						    .out = c->out,
						    .batches = in->dims[0],
						    .in_h = in->dims[1],
						    .in_w = in->dims[2],
						    .in_c = in->dims[3],
						    .out_h = out->dims[1],
						    .out_w = out->dims[2],
						    .out_c = out->dims[3],
						    .f_h = f->dims[1],
						    .f_w = f->dims[2],
						    .f_c = f->dims[3],
						    .stride_h = op->stride_h,
						    .stride_w = op->stride_w,
						    .dil_h = op->dil_h,
						    .dil_w = op->dil_w,
						    .pad_h = op->pad_h,
						    .pad_w = op->pad_w,
						    .depth_mult = out->dims[3] / in->dims[3],
						    .in_offset = -in->zero_point,
						    .out_offset = out->zero_point,
						    .act_min = op->act_min,
						    .act_max = op->act_max};
			c->record = conv_record(c, src, quant, op->padding == 0 ? "same" : "valid");
		}
		if (c->record == NULL) {
			k++;
			rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
			goto cleanup;
		}
		k++;
	}
	*cases = cs;
	*n = k;
	*refused = ref;
	return 0;
cleanup:
	kcases_free(cs, k);
	json_decref(ref);
	return rc;
}

/* model/: `ergon model info | infer`.
 *
 * `ergon model info | infer` (include/ergon/model_run.h): the model
 * driver's host interpreter and the an547 firmware wired to what the
 * command prints (a typed model, its info JSON) and writes (output 0's
 * bytes). */
#include "ergon/model_run.h"

#include "ergon/fileio.h"
#include "ergon/model.h"
#include "ergon/model_fw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ergon_model_info_load(const char *path, struct ergon_model_info *info, struct ergon_err *err)
{
	memset(info, 0, sizeof *info);
	struct ergon_model *m = NULL;
	int rc = ergon_model_open(path, &m, err);
	if (rc != 0)
		return rc;
	info->model = m;
	info->tfl = ergon_model_tfl(m);
	(void)ergon_model_bytes(m, &info->model_bytes);
	return 0;
}

void ergon_model_info_release(struct ergon_model_info *info)
{
	ergon_model_free(info->model);
	memset(info, 0, sizeof *info);
}

static json_t *tensor_json(const struct ert_tfl_model *t, int16_t idx)
{
	const struct ert_tfl_tensor *x = &t->tensors[idx];
	json_t *o = json_object();
	json_t *shape = json_array();
	for (unsigned d = 0; d < x->n_dims; d++)
		json_array_append_new(shape, json_integer(x->dims[d]));
	json_object_set_new(o, "index", json_integer(idx));
	if (x->name_len > 0) {
		json_object_set_new(o, "name",
				    json_stringn((const char *)t->buf + x->name_pos, x->name_len));
	}
	json_object_set_new(o, "type", json_string(ert_tfl_type_name(x->type)));
	json_object_set_new(o, "shape", shape);
	json_object_set_new(o, "bytes", json_integer(x->bytes));
	json_object_set_new(o, "constant", json_boolean(x->is_const));
	if (x->n_scale > 0) {
		json_t *q = json_object();
		json_object_set_new(q, "scale", json_real(x->scale));
		json_object_set_new(q, "zero_point", json_integer(x->zero_point));
		if (x->n_scale > 1) {
			json_object_set_new(q, "per_channel", json_integer(x->n_scale));
			json_object_set_new(q, "quantized_dimension", json_integer(x->quant_dim));
		}
		json_object_set_new(o, "quantization", q);
	}
	return o;
}

json_t *ergon_model_info_json(const struct ergon_model *m)
{
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	size_t len = 0;
	(void)ergon_model_bytes(m, &len);
	json_t *root = json_object();
	if (root == NULL)
		return NULL;
	json_object_set_new(root, "model", json_string(ergon_model_path(m)));
	json_object_set_new(root, "model_bytes", json_integer((json_int_t)len));
	json_object_set_new(root, "schema_version", json_integer(t->version));
	json_t *ops = json_array();
	for (unsigned i = 0; i < t->n_ops; i++) {
		const struct ert_tfl_op *op = &t->ops[i];
		json_t *o = json_object();
		json_object_set_new(o, "index", json_integer(i));
		json_object_set_new(o, "type", json_string(ert_tfl_op_name(op->opcode)));
		json_t *ins = json_array();
		for (unsigned k = 0; k < op->n_in; k++)
			if (op->in[k] >= 0)
				json_array_append_new(ins, tensor_json(t, op->in[k]));
		json_object_set_new(o, "inputs", ins);
		json_t *outs = json_array();
		json_array_append_new(outs, tensor_json(t, op->out));
		json_object_set_new(o, "outputs", outs);
		json_object_set_new(o, "macs", json_integer((json_int_t)op->macs));
		json_object_set_new(o, "param_bytes", json_integer(op->param_bytes));
		json_array_append_new(ops, o);
	}
	json_object_set_new(root, "operators", ops);
	json_t *gi = json_array(), *go = json_array();
	for (unsigned k = 0; k < t->n_inputs; k++)
		json_array_append_new(gi, tensor_json(t, t->inputs[k]));
	for (unsigned k = 0; k < t->n_outputs; k++)
		json_array_append_new(go, tensor_json(t, t->outputs[k]));
	json_object_set_new(root, "inputs", gi);
	json_object_set_new(root, "outputs", go);
	json_t *tot = json_object();
	json_object_set_new(tot, "operators", json_integer(t->n_ops));
	json_object_set_new(tot, "tensors", json_integer(t->n_tensors));
	json_object_set_new(tot, "macs", json_integer((json_int_t)t->total_macs));
	json_object_set_new(tot, "param_bytes", json_integer(t->total_param_bytes));
	json_object_set_new(tot, "arena_bytes", json_integer(t->arena_bytes));
	json_object_set_new(tot, "arena_activation_bytes", json_integer(t->activation_bytes));
	json_object_set_new(tot, "arena_persistent_bytes", json_integer(t->persist_bytes));
	json_object_set_new(root, "totals", tot);
	return root;
}

/* Output 0's element i as a number; 0 when the type is not one a model
 * output has. */
static double out_elem(const uint8_t *b, int type, size_t i)
{
	switch (type) {
	case ERT_TFL_INT8:
		return (double)(int8_t)b[i];
	case ERT_TFL_UINT8:
		return (double)b[i];
	case ERT_TFL_INT16: {
		int16_t v;
		memcpy(&v, b + 2 * i, 2);
		return (double)v;
	}
	case ERT_TFL_INT32: {
		int32_t v;
		memcpy(&v, b + 4 * i, 4);
		return (double)v;
	}
	case ERT_TFL_FLOAT32: {
		float v;
		memcpy(&v, b + 4 * i, 4);
		return (double)v;
	}
	default:
		return 0;
	}
}

static size_t elem_size(int type)
{
	return type == ERT_TFL_INT8 || type == ERT_TFL_UINT8 ? 1
	       : type == ERT_TFL_INT16			     ? 2
	       : type == ERT_TFL_INT32 || type == ERT_TFL_FLOAT32 ? 4
								   : 0;
}

/* The k highest scores of output 0 (bytes out, len), highest first, ties
 * by lower index: a partial selection, k passes over the output. */
static void top_scores(const struct ergon_model *m, const uint8_t *out, size_t len,
		       const struct ergon_model_infer_opts *o)
{
	*o->n_top = 0;
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	if (t == NULL || t->n_outputs == 0)
		return;
	const struct ert_tfl_tensor *x = &t->tensors[t->outputs[0]];
	size_t es = elem_size(x->type);
	if (es == 0)
		return;
	size_t n = len / es;
	int quantized = x->n_scale == 1 && x->type != ERT_TFL_FLOAT32;
	for (size_t r = 0; r < o->top_k && r < n; r++) {
		size_t best = n;
		double bv = 0;
		for (size_t i = 0; i < n; i++) {
			int taken = 0;
			for (size_t j = 0; j < r; j++)
				taken |= o->top[j].index == i;
			double v = out_elem(out, x->type, i);
			if (!taken && (best == n || v > bv)) {
				best = i;
				bv = v;
			}
		}
		if (best == n)
			break;
		struct ergon_model_score *s = &o->top[r];
		s->index = (unsigned)best;
		s->raw = bv;
		s->quantized = quantized;
		s->score = quantized ? (double)x->scale * (bv - (double)x->zero_point) : bv;
		*o->n_top = r + 1;
	}
}

int ergon_model_infer_run(const struct ergon_model_infer_opts *o, size_t *out_len,
			  struct ergon_err *err)
{
	struct ergon_model *m = NULL;
	char *in = NULL;
	size_t in_len = 0;
	uint8_t *qemu_out = NULL;
	const uint8_t *out = NULL;
	unsigned wflags = o->force ? ERGON_WRITE_FORCE : 0;
	*out_len = 0;
	int rc = ergon_file_check_writable(o->out_path, wflags, err);
	if (!rc)
		rc = ergon_model_open(o->model_path, &m, err);
	if (!rc)
		rc = ergon_file_read_all(o->input_path, ERGON_MODEL_MAX_BYTES, &in, &in_len, err);
	if (!rc)
		rc = ergon_model_set_input(m, in, in_len, o->input_path, err);
	if (!rc && !o->on_qemu) {
		rc = ergon_model_invoke(m, err);
		out = ergon_model_output(m, out_len);
	} else if (!rc) {
		/* The firmware, its build record and QEMU's log stay beside
		 * the output (OUT.bin.an547/ for qemu-an547). */
		const char *board = o->board ? o->board : "qemu-an547";
		const char *sfx = strncmp(board, "qemu-", 5) == 0 ? board + 5 : board;
		char work[4096];
		int l = snprintf(work, sizeof work, "%s.%s", o->out_path, sfx);
		if (l < 0 || (size_t)l >= sizeof work)
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--out %s: the path is too long (at most %zu bytes)",
					   o->out_path, sizeof work - 2 - strlen(sfx));
		else
			rc = ergon_model_fw_infer_qemu(m, board, (const uint8_t *)in, in_len, work,
						       o->no_cache ? ERGON_MODEL_FW_NO_CACHE : 0u,
						       &qemu_out, out_len, err);
		out = qemu_out;
	}
	if (!rc)
		rc = ergon_file_write_atomic(o->out_path, out, *out_len, wflags, err);
	if (!rc && o->top_k && o->top && o->n_top)
		top_scores(m, out, *out_len, o);
	free(qemu_out);
	free(in);
	ergon_model_free(m);
	return rc;
}

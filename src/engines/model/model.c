/* Host wrapper of the target's TFLite interpreter: file in, arena out of
 * the heap, errors into struct ergon_err with the file name in front. */
#include "ergon/model.h"

#include "ergon/fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ergon_model {
	char *path;
	uint8_t *bytes; /* 16-byte aligned copy of the file */
	size_t len;
	uint8_t *arena;
	struct ert_tfl_model tfl; /* large (fixed tables): heap only */
};

static int map_code(int tfl_rc)
{
	switch (tfl_rc) {
	case ERT_TFL_E_MALFORMED:
		return ERGON_EPARSE;
	case ERT_TFL_E_UNSUPPORTED:
	case ERT_TFL_E_FLOAT:
		return ERGON_ENOTSUP;
	case ERT_TFL_E_LIMIT:
	case ERT_TFL_E_ARENA:
		return ERGON_ETOOBIG;
	default:
		return ERGON_EIO;
	}
}

int ergon_model_open(const char *path, struct ergon_model **out, struct ergon_err *err)
{
	*out = NULL;
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, ERGON_MODEL_MAX_BYTES, &data, &len, err);
	if (rc != 0)
		return rc;
	struct ergon_model *m = calloc(1, sizeof *m);
	if (m == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	m->path = strdup(path);
	/* Weights are read in place: keep them on a 16-byte boundary as in a
	 * firmware image. */
	m->bytes = aligned_alloc(16, (len + 16) & ~(size_t)15);
	if (m->path == NULL || m->bytes == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	memcpy(m->bytes, data, len);
	m->len = len;
	free(data);
	data = NULL;
	struct ert_tfl_err terr;
	int trc = ert_tfl_load(&m->tfl, m->bytes, m->len, &terr);
	if (trc != 0) {
		rc = ergon_err_set(err, map_code(trc), "%s: %s", path, terr.msg);
		goto fail;
	}
	size_t alen = ((size_t)m->tfl.arena_bytes + 16) & ~(size_t)15;
	m->arena = aligned_alloc(16, alen);
	if (m->arena == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory for a %u-byte arena", path,
				   m->tfl.arena_bytes);
		goto fail;
	}
	memset(m->arena, 0, alen);
	trc = ert_tfl_bind(&m->tfl, m->arena, m->tfl.arena_bytes, &terr);
	if (trc != 0) {
		rc = ergon_err_set(err, map_code(trc), "%s: %s", path, terr.msg);
		goto fail;
	}
	*out = m;
	return 0;
fail:
	free(data);
	ergon_model_free(m);
	return rc;
}

void ergon_model_free(struct ergon_model *m)
{
	if (m == NULL)
		return;
	free(m->arena);
	free(m->bytes);
	free(m->path);
	free(m);
}

const struct ert_tfl_model *ergon_model_tfl(const struct ergon_model *m)
{
	return &m->tfl;
}

const uint8_t *ergon_model_bytes(const struct ergon_model *m, size_t *len)
{
	*len = m->len;
	return m->bytes;
}

const char *ergon_model_path(const struct ergon_model *m)
{
	return m->path;
}

void ergon_model_shape_str(const struct ert_tfl_tensor *t, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0)
		return;
	buf[0] = '\0';
	n += (size_t)snprintf(buf + n, cap - n, "[");
	for (unsigned d = 0; d < t->n_dims && n < cap; d++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%d", d ? "," : "", (int)t->dims[d]);
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
}

int ergon_model_set_input(struct ergon_model *m, const void *data, size_t len, const char *what,
			  struct ergon_err *err)
{
	uint32_t want = 0;
	uint8_t *in = ert_tfl_input(&m->tfl, 0, &want);
	if (in == NULL)
		return ergon_err_set(err, ERGON_EIO, "%s: the model has no input", m->path);
	if (len != want) {
		const struct ert_tfl_tensor *t = &m->tfl.tensors[m->tfl.inputs[0]];
		char shape[96];
		ergon_model_shape_str(t, shape, sizeof shape);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s is %zu bytes, but %s's input 0 (%s %s) takes exactly %u "
				     "bytes; give the raw tensor bytes (row-major, no header)",
				     what, len, m->path, ert_tfl_type_name(t->type), shape, want);
	}
	memcpy(in, data, len);
	return 0;
}

int ergon_model_invoke(struct ergon_model *m, struct ergon_err *err)
{
	int rc = ert_tfl_invoke(&m->tfl);
	if (rc != 0)
		return ergon_err_set(err, ERGON_EIO, "%s: invoke failed (%d)", m->path, rc);
	return 0;
}

const uint8_t *ergon_model_output(const struct ergon_model *m, size_t *len)
{
	uint32_t n = 0;
	const uint8_t *p = ert_tfl_output(&m->tfl, 0, &n);
	*len = n;
	return p;
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
	const struct ert_tfl_model *t = &m->tfl;
	json_t *root = json_object();
	json_object_set_new(root, "model", json_string(m->path));
	json_object_set_new(root, "model_bytes", json_integer((json_int_t)m->len));
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

int ergon_model_pattern(const char *kind, uint8_t *buf, size_t len, struct ergon_err *err)
{
	if (strcmp(kind, "zero") == 0) {
		memset(buf, 0, len);
		return 0;
	}
	if (strcmp(kind, "ramp") == 0) {
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)i;
		return 0;
	}
	if (strncmp(kind, "xs", 2) == 0 && kind[2] >= '1' && kind[2] <= '9') {
		uint32_t s = 0;
		const char *p = kind + 2;
		while (*p >= '0' && *p <= '9' && s < 100000000u)
			s = s * 10u + (uint32_t)(*p++ - '0');
		if (*p == '\0') {
			for (size_t i = 0; i < len; i++) {
				s ^= s << 13;
				s ^= s >> 17;
				s ^= s << 5;
				buf[i] = (uint8_t)(s >> 24);
			}
			return 0;
		}
	}
	return ergon_err_set(err, ERGON_EUSAGE,
			     "input pattern '%s': expected zero, ramp or xsN (N a positive "
			     "seed below 10^8)",
			     kind);
}

/* Host wrapper of the target's TFLite interpreter (a driver: a model file
 * in, the interpreter bound to a heap arena, run on the host CPU), errors
 * into struct ergon_err with the file name in front. What a command makes
 * of a model (the info JSON, an inference written to a file) is
 * src/pipelines/model/model_run.c. */
#include "ergon/model.h"

#include "ergon/fileio.h"
#include "ergon/model_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ergon_model {
	char *path;
	uint8_t *bytes; /* 16-byte aligned copy of the file */
	size_t len;
	uint8_t *arena;
	uint8_t *pack;		  /* the filters in the host kernels' layout */
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

/* ERGON_TFL_SIMD's values: ert_tfl_simd_name's names and "auto", in any
 * case (NEON, AVX2 and SSE4.1 are how the instruction sets are written, so
 * an upper-case spelling is read as the path it names); -1 for anything
 * else. */
static int simd_path(const char *name)
{
	static const struct {
		const char *name;
		enum ert_tfl_simd path;
	} names[] = {{"auto", ERT_TFL_SIMD_AUTO},
		     {"portable", ERT_TFL_SIMD_PORTABLE},
		     {"sse4.1", ERT_TFL_SIMD_SSE41},
		     {"avx2", ERT_TFL_SIMD_AVX2},
		     {"neon", ERT_TFL_SIMD_NEON}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasecmp(name, names[i].name) == 0)
			return (int)names[i].path;
	return -1;
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
	/* The filters packed once for the host kernels, not per invoke. */
	size_t plen = ((size_t)ert_tfl_pack_bytes(&m->tfl) + 63) & ~(size_t)63;
	m->pack = aligned_alloc(64, plen > 0 ? plen : 64);
	if (m->pack == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM,
				   "%s: out of memory for %zu bytes of packed filters", path, plen);
		goto fail;
	}
	trc = ert_tfl_pack(&m->tfl, m->pack, plen);
	if (trc != 0) {
		rc = ergon_err_set(err, map_code(trc), "%s: packing the filters failed", path);
		goto fail;
	}
	/* ERGON_TFL_SIMD: the interpreter's kernel path (auto, portable,
	 * sse4.1, avx2, neon); every path gives the same bytes. */
	const char *simd = getenv("ERGON_TFL_SIMD");
	if (simd != NULL && simd[0] != '\0') {
		int path_id = simd_path(simd);
		if (path_id < 0 || ert_tfl_simd_set(&m->tfl, (enum ert_tfl_simd)path_id) != 0) {
			char have[64] = "auto, portable";
			if (ert_tfl_simd_available(ERT_TFL_SIMD_SSE41))
				strcat(have, ", sse4.1");
			if (ert_tfl_simd_available(ERT_TFL_SIMD_AVX2))
				strcat(have, ", avx2");
			if (ert_tfl_simd_available(ERT_TFL_SIMD_NEON))
				strcat(have, ", neon");
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "ERGON_TFL_SIMD=%s: %s; this build and CPU have: %s "
					   "(set one of them, or unset ERGON_TFL_SIMD for the "
					   "fastest; docs/USAGE.md section 4)",
					   simd,
					   path_id < 0 ? "unknown kernel path"
						       : "kernel path not in this build or CPU",
					   have);
			goto fail;
		}
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
	free(m->pack);
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

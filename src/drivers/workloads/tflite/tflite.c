/* tflite: an int8 TFLite model run by ergon-target's interpreter on the host
 * CPU, one inference per invoke.
 *
 *   tflite:MODEL.tflite[,input=IN.bin]
 *
 * IN.bin holds the raw bytes of input 0 (exactly its size). Without it the
 * input is the deterministic pattern "xs1" (xorshift32 seeded 1, as
 * tests/oracle/litert.mjs makes it), so runs are repeatable. The model path
 * cannot contain a comma. Loading and checking happen in open, so a bad
 * model fails before any measuring starts.
 */
#include "drivers/workloads/wl_opts.h"
#include "ergon/fileio.h"
#include "ergon/model.h"
#include "ergon/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tflite_wl {
	struct ergon_model *m;
	uint8_t *input;
	size_t input_len;
};

/* The last output byte of every invoke: an observable side effect. */
static volatile uint8_t tflite_sink;

static int tflite_open(struct ergon_workload *wl, const struct ergon_workload_options *opts,
		       struct ergon_err *err)
{
	const char *arg = opts->arg ? opts->arg : "";
	size_t plen = strcspn(arg, ",");
	const char *suffix = arg[plen] == ',' ? arg + plen : NULL;
	const char *spec = wl->description;
	static const char *const keys[] = {"input", NULL};
	if (plen == 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--workload %s: expected tflite:MODEL.tflite[,input=IN.bin]",
				     spec);
	int rc = ergon_wl_opt_check_keys(opts, suffix, spec, keys, err);
	if (rc)
		return rc;
	struct tflite_wl *t = calloc(1, sizeof *t);
	char *path = strndup(arg, plen);
	char *in_path = NULL;
	char *data = NULL;
	if (t == NULL || path == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory", spec);
		goto fail;
	}
	rc = ergon_model_open(path, &t->m, err);
	if (rc)
		goto fail;
	uint32_t need = 0;
	(void)ert_tfl_input(ergon_model_tfl(t->m), 0, &need);
	size_t vlen = 0;
	const char *v = ergon_wl_opt_find(opts, suffix, "input", &vlen);
	if (v != NULL) {
		in_path = strndup(v, vlen);
		if (in_path == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory", spec);
			goto fail;
		}
		size_t len = 0;
		rc = ergon_file_read_all(in_path, ERGON_MODEL_MAX_BYTES, &data, &len, err);
		if (rc)
			goto fail;
		rc = ergon_model_set_input(t->m, data, len, in_path, err);
		if (rc)
			goto fail;
		t->input = (uint8_t *)data;
		t->input_len = len;
		data = NULL;
	} else {
		t->input = malloc(need > 0 ? need : 1);
		t->input_len = need;
		if (t->input == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory", spec);
			goto fail;
		}
		rc = ergon_model_pattern("xs1", t->input, need, err);
		if (rc)
			goto fail;
	}
	const struct ert_tfl_model *tm = ergon_model_tfl(t->m);
	snprintf(wl->description, sizeof wl->description,
		 "tflite:%.120s (%u operators, %llu MACs, arena %u bytes; input %.60s; host "
		 "interpreter)",
		 path, (unsigned)tm->n_ops, (unsigned long long)tm->total_macs,
		 (unsigned)tm->arena_bytes, in_path ? in_path : "pattern xs1");
	wl->priv = t;
	free(path);
	free(in_path);
	return 0;
fail:
	free(data);
	free(in_path);
	free(path);
	if (t != NULL) {
		ergon_model_free(t->m);
		free(t->input);
		free(t);
	}
	return rc;
}

static int tflite_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	struct tflite_wl *t = wl->priv;
	return ergon_model_set_input(t->m, t->input, t->input_len, "the workload input", err);
}

static int tflite_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct tflite_wl *t = wl->priv;
	int rc = ergon_model_invoke(t->m, err);
	size_t n = 0;
	const uint8_t *out = ergon_model_output(t->m, &n);
	if (rc == 0 && n > 0)
		tflite_sink = out[n - 1];
	return rc;
}

static void tflite_teardown(struct ergon_workload *wl)
{
	(void)wl;
}

static void tflite_close(struct ergon_workload *wl)
{
	struct tflite_wl *t = wl->priv;
	if (t == NULL)
		return;
	ergon_model_free(t->m);
	free(t->input);
	free(t);
	wl->priv = NULL;
}

const struct ergon_workload_driver ergon_workload_tflite = {
    .name = "tflite",
    .longname = "int8 TFLite model on ergon-target's interpreter (host CPU)",
    .open = tflite_open,
    .prepare = tflite_prepare,
    .invoke = tflite_invoke,
    .teardown = tflite_teardown,
    .close = tflite_close,
};

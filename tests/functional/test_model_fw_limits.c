/* A model that does not fit the an547 firmware is refused before any
 * compiling, with the sizes: 600 000 bytes of constant data against the
 * 512 KiB ITCM, and a 1.2 MB arena against the 512 KiB DTCM. The sizes in
 * the messages follow from the models built here (tfl_builder), not from
 * ergon's output. */
#include "ergon/model.h"
#include "ergon/model_fw.h"
#include "test_support.h"
#include "tfl_builder.h"

#include <stdlib.h>
#include <string.h>

static struct ergon_model *open_built(const struct tb_model *d, const char *dir)
{
	size_t len = 0;
	uint8_t *b = tb_build(d, &len);
	char *path = ts_strf("%s/m.tflite", dir);
	assert_int_equal(ts_write_file(path, b, len), 0);
	struct ergon_model *m = NULL;
	struct ergon_err err = {0};
	if (ergon_model_open(path, &m, &err) != 0)
		fail_msg("%s", err.msg);
	free(path);
	free(b);
	return m;
}

/* RESHAPE [n] -> [n], int8, plus an optional unused constant tensor. */
static void reshape_model(struct tb_model *d, int32_t n, const void *extra, size_t extra_len)
{
	memset(d, 0, sizeof *d);
	for (int k = 0; k < 3; k++) {
		d->t[k].n_dims = 1;
		d->t[k].dims[0] = k < 2 ? n : (int32_t)extra_len;
		d->t[k].type = 9;
		d->t[k].n_scale = 1;
		d->t[k].scale[0] = 1.0f;
	}
	d->t[2].data = extra;
	d->t[2].data_len = extra_len;
	d->n_tensors = extra ? 3 : 2;
	d->op[0] = (struct tb_op){.builtin = 22, .n_in = 1, .in = {0}, .out = 1};
	d->n_ops = 1;
	d->n_inputs = d->n_outputs = 1;
	d->outputs[0] = 1;
}

static void too_big_for_flash(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	uint8_t *weights = calloc(1, 600000);
	struct tb_model d;
	reshape_model(&d, 16, weights, 600000);
	struct ergon_model *m = open_built(&d, dir);
	size_t mlen = 0;
	(void)ergon_model_bytes(m, &mlen);
	assert_true(mlen > 600000);
	uint8_t in[16] = {0};
	json_t *build = NULL;
	struct ergon_err err = {0};
	char *fw = ts_strf("%s/fw", dir);
	assert_int_equal(ergon_model_fw_build(m, "qemu-an547", fw, ERGON_MODEL_FW_PROFILE, in, 16, 0, &build, &err),
			 ERGON_ETOOBIG);
	assert_null(build);
	char *want = ts_strf("the model (%zu bytes)", mlen);
	if (strstr(err.msg, want) == NULL || strstr(err.msg, "512 KiB ITCM (524288 bytes)") == NULL)
		fail_msg("%s", err.msg);
	free(want);
	ergon_model_free(m);
	free(weights);
	free(fw);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void arena_too_big_for_ram(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* DEQUANTIZE int8 [150000] -> float32 [150000]: a 150 kB input (fits
	 * the ITCM with the firmware) but 150000 + 600000 bytes alive at once. */
	struct tb_model d;
	reshape_model(&d, 150000, NULL, 0);
	d.t[1].type = 0;
	d.t[1].n_scale = 0;
	d.op[0].builtin = 6;
	struct ergon_model *m = open_built(&d, dir);
	assert_int_equal(ergon_model_tfl(m)->arena_bytes, 150000 + 600000);
	uint8_t *in = calloc(1, 150000);
	json_t *build = NULL;
	struct ergon_err err = {0};
	char *fw = ts_strf("%s/fw", dir);
	assert_int_equal(
	    ergon_model_fw_build(m, "qemu-an547", fw, ERGON_MODEL_FW_PROFILE, in, 150000, 0, &build, &err),
	    ERGON_ETOOBIG);
	if (strstr(err.msg, "its 750000-byte arena") == NULL ||
	    strstr(err.msg, "512 KiB DTCM (524288 bytes)") == NULL)
		fail_msg("%s", err.msg);
	ergon_model_free(m);
	free(in);
	free(fw);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(too_big_for_flash),
	    cmocka_unit_test(arena_too_big_for_ram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

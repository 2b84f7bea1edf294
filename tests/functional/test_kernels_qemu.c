/* ergon kernels run --board qemu-an547 through the library: the Helium
 * (MVE) kernels and the portable ones checked on the emulated Cortex-M55
 * against the oracle on shapes chosen to hit every path (unaligned channel
 * counts and depths, stride, dilation, same padding at every border, a
 * window too large for the MVE conv's column buffer, a 1x1, a depthwise
 * multiplier of 2 handed to the reference, an fc with a filter zero point,
 * no filter sums and one per-tensor multiplier), an injected mismatch on
 * the target that is reported and never timed while the other
 * implementation of the same case still is, and the labels: provenance
 * synthetic, unit emulated_instructions, the PMU unsupported. Needs
 * arm-none-eabi-gcc and qemu-system-arm (scripts/bootstrap.sh). */
#include "engines/kernels/kernels_internal.h"
#include "ergon/kernels_run.h"
#include "pipelines/kernels/kernels_qemu.h"
#include "test_support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SHAPES[] = "fc f1 accum=33 units=7\n"
			     "conv c1 in=5x6x3 out_c=6 filter=3x3 pad=same stride=2x2\n"
			     "conv c2 in=9x7x5 out_c=3 filter=3x2 dil=2x2 pad=same act=relu\n"
			     "conv c3 in=4x4x300 out_c=5 filter=4x4 pad=valid\n"
			     "conv c4 in=6x5x17 out_c=9 filter=1x1 pad=valid\n"
			     "conv c5 in=10x10x20 out_c=16 filter=5x5 pad=same\n"
			     "dwconv d1 in=9x9x21 filter=3x3 stride=2x2 pad=same\n"
			     "dwconv d2 in=7x5x3 mult=2 filter=3x3 pad=valid\n"
			     "dwconv d3 in=8x8x16 filter=5x5 dil=2x2 pad=same\n"
			     "fc f2 accum=1 units=1 batches=3\n";
#define N_SHAPES 10

static char *shapes_file(const char *dir)
{
	char *p = ts_strf("%s/shapes.txt", dir);
	assert_int_equal(ts_write_file(p, SHAPES, strlen(SHAPES)), 0);
	return p;
}

static const json_t *impl_of(const json_t *art, size_t i, const char *name)
{
	const json_t *c =
	    json_array_get(json_object_get(json_object_get(art, "kernels"), "cases"), i);
	assert_non_null(c);
	const json_t *impls = json_object_get(c, "impls");
	for (size_t k = 0; k < json_array_size(impls); k++) {
		const json_t *x = json_array_get(impls, k);
		if (strcmp(json_string_value(json_object_get(x, "impl")), name) == 0)
			return x;
	}
	fail_msg("case %zu has no impl %s", i, name);
	return NULL;
}

static void every_path_bit_exact_on_target(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *p = shapes_file(dir);
	char *fw = ts_strf("%s/fw", dir);
	struct ergon_kernels_run_options o = {.board = "qemu-an547",
					      .shapes_path = p,
					      .impls = "ref,mve",
					      .iterations = 2,
					      .warmup = 1,
					      .work_dir = fw};
	json_t *art = NULL;
	char *samples = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	int rc = ergon_kernels_run(&o, &art, &samples, &len, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(json_array_size(json_object_get(art, "refused")), 0);
	for (size_t i = 0; i < N_SHAPES; i++) {
		for (int k = 0; k < 2; k++) {
			const json_t *x = impl_of(art, i, k ? "mve" : "ref");
			if (!json_is_true(json_object_get(x, "correct")))
				fail_msg("case %zu %s not bit-exact on the target", i,
					 k ? "mve" : "ref");
			assert_int_equal(json_integer_value(json_object_get(x, "n")), 2);
		}
	}
	/* header + 10 cases x 2 implementations x 2 samples */
	int lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += samples[i] == '\n';
	assert_int_equal(lines, 1 + N_SHAPES * 2 * 2);
	assert_null(strstr(samples, ",fail,"));
	const json_t *prov = json_object_get(art, "provenance");
	assert_string_equal(json_string_value(json_object_get(prov, "kind")), "synthetic");
	assert_string_equal(json_string_value(json_object_get(prov, "clock")), "emulated");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(art, "kernels"), "unit")),
	    "emulated_instructions");
	const json_t *pmu = json_object_get(art, "pmu");
	assert_string_equal(json_string_value(json_object_get(pmu, "status")), "unsupported");
	/* The method's five events by default, each "unsupported" per case
	 * and implementation (QEMU models no PMU), never a count. */
	assert_int_equal(json_array_size(json_object_get(pmu, "events")), 5);
	const json_t *kc = json_object_get(json_object_get(art, "kernels"), "cases");
	for (size_t i = 0; i < json_array_size(kc); i++) {
		const json_t *im = json_object_get(json_array_get(kc, i), "impls");
		for (size_t k = 0; k < json_array_size(im); k++) {
			const json_t *p = json_object_get(json_array_get(im, k), "pmu");
			assert_int_equal(json_object_size(p), 5);
			assert_string_equal(
			    json_string_value(json_object_get(p, "ARM_PMU_MVE_INT_MAC_RETIRED")),
			    "unsupported");
		}
	}
	/* No invented PMU count in any workload record. */
	const json_t *wl = json_object_get(art, "workloads");
	for (size_t i = 0; i < json_array_size(wl); i++)
		assert_null(json_object_get(json_array_get(wl, i), "pmu"));
	/* d2 (multiplier 2) says that its "mve" run is the reference code. */
	const char *d2 = json_string_value(
	    json_object_get(json_object_get(json_array_get(wl, 7), "implementations"), "mve"));
	assert_non_null(strstr(d2, "tfl_dwconv_s8"));
	const json_t *build = json_object_get(art, "build");
	assert_int_equal(strlen(json_string_value(json_object_get(build, "elf_sha256"))), 64);
	assert_non_null(json_object_get(build, "cases_blob"));
	json_decref(art);
	free(samples);
	free(p);
	free(fw);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void injected_mismatch_on_target_not_timed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *p = shapes_file(dir);
	char *fw = ts_strf("%s/fw", dir);
	struct ergon_kernels_run_options o = {.board = "qemu-an547",
					      .shapes_path = p,
					      .impls = "ref,mve",
					      .suites = ERGON_KERNELS_FC,
					      .iterations = 3,
					      .inject_mismatch = 1,
					      .work_dir = fw};
	json_t *art = NULL;
	char *samples = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	int rc = ergon_kernels_run(&o, &art, &samples, &len, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	const json_t *r = impl_of(art, 0, "ref"), *m = impl_of(art, 0, "mve");
	assert_true(json_is_false(json_object_get(r, "correct")));
	assert_true(json_is_false(json_object_get(r, "timed")));
	assert_true(json_is_true(json_object_get(m, "correct")));
	assert_int_equal(json_integer_value(json_object_get(m, "n")), 3);
	const json_t *w = json_array_get(json_object_get(art, "workloads"), 0);
	const json_t *mm = json_object_get(json_object_get(w, "first_mismatch"), "ref");
	assert_non_null(mm);
	/* f1 has 7 outputs: the firmware flips byte 7 / 2 = 3. */
	assert_int_equal(json_integer_value(json_object_get(mm, "byte")), 3);
	assert_non_null(strstr(samples, "f1,ref,fail,,\n"));
	json_decref(art);
	free(samples);
	free(p);
	free(fw);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* An fc the shapes file cannot express: filter zero point 5 (offset -5),
 * no filter sums, one multiplier for all units. */
static void fc_offsets_per_tensor(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *fw = ts_strf("%s/fw", dir);
	const int32_t units = 6, accum = 37;
	struct kcase *c = calloc(1, sizeof *c);
	assert_non_null(c);
	snprintf(c->name, sizeof c->name, "fc_fzp");
	c->kind = KC_FC;
	c->in_len = (size_t)accum * 2u;
	c->out_len = (size_t)units * 2u;
	c->in = malloc(c->in_len);
	c->filter = malloc((size_t)(units * accum));
	c->out = malloc(c->out_len);
	c->expect = malloc(c->out_len);
	c->q = calloc(4u * (size_t)units, sizeof *c->q);
	c->record = json_object();
	for (int32_t i = 0; i < units * accum; i++)
		c->filter[i] = (int8_t)((i * 37) % 251 - 125);
	for (int32_t u = 0; u < units; u++)
		c->q[2 * units + u] = 1000 * u - 2500; /* bias */
	c->q[0] = 1518500250;			       /* multiplier ~0.707 * 2^31 */
	c->q[units] = -9;			       /* shift */
	c->fc = (struct tfl_fc_args){.in = c->in,
				     .filter = c->filter,
				     .bias = c->q + 2 * units,
				     .mult = c->q,
				     .shift = c->q + units,
				     .fsum = NULL,
				     .out = c->out,
				     .batches = 2,
				     .accum = accum,
				     .units = units,
				     .in_offset = 7,
				     .filter_offset = -5,
				     .out_offset = 3,
				     .act_min = -128,
				     .act_max = 127,
				     .per_channel = 0};
	kcase_prepare(c, 42u);
	struct ergon_kernels_run_options o = {
	    .board = "qemu-an547", .impls = "ref,mve", .iterations = 1, .work_dir = fw};
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_data_new(&d, &err), 0);
	struct ergon_dynbuf samples;
	ergon_dynbuf_init(&samples, 1u << 20);
	json_t *info = NULL;
	const char *unit = NULL;
	struct ergon_pmu_plan plan = {0};
	int rc = ergon_kernels_qemu(c, 1, &o, KQ_IMPL_REF | KQ_IMPL_MVE, &plan, d, &samples, &info,
				    &unit, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_non_null(strstr(samples.p, "fc_fzp,ref,pass,"));
	assert_non_null(strstr(samples.p, "fc_fzp,mve,pass,"));
	assert_null(json_object_get(c->record, "first_mismatch"));
	assert_string_equal(unit, "emulated_instructions");
	json_decref(info);
	ergon_dynbuf_free(&samples);
	ergon_kernels_data_free(d);
	kcases_free(c, 1);
	free(fw);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_path_bit_exact_on_target),
	    cmocka_unit_test(injected_mismatch_on_target_not_timed),
	    cmocka_unit_test(fc_offsets_per_tensor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

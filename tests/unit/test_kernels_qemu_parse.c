/* The host's reader of the kernel firmware's UART lines, without QEMU:
 * SysTick ticks become emulated instructions (x 125/64, after the read
 * overhead), DWT counts stay cycles, PMU counts land in the case's record
 * (an overflowed pair and an unsupported event as words, never numbers), a
 * mismatch on the target is kept with its byte, and malformed or
 * incomplete output is refused with the line. */
#include "engines/kernels/kernels_internal.h"
#include "pipelines/kernels/kernels_qemu.h"
#include "test_support.h"

#include <string.h>

static int8_t expect[3][8] = {{1, 2, 3, 4, 5, 6, 7, 8}, {0}, {-1, -2, -3, -4, -5, -6, -7, -8}};
static struct kcase cases[3];
static struct ergon_kernels_data *d;
static struct ergon_dynbuf samples;

static int setup(void **state)
{
	(void)state;
	memset(cases, 0, sizeof cases);
	for (int i = 0; i < 3; i++) {
		snprintf(cases[i].name, sizeof cases[i].name, "c%d", i);
		cases[i].kind = i == 0 ? KC_CONV : i == 1 ? KC_DWCONV : KC_FC;
		cases[i].expect = expect[i];
		cases[i].out_len = 8;
		cases[i].record = json_object();
	}
	struct ergon_err err = {0};
	ergon_dynbuf_init(&samples, 1u << 20);
	return ergon_kernels_data_new(&d, &err);
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		json_decref(cases[i].record);
	ergon_dynbuf_free(&samples);
	ergon_kernels_data_free(d);
	return 0;
}

static int parse(const char *text, struct kq_firmware *fw, struct ergon_err *err)
{
	return ergon_kernels_qemu_parse("k.log", text, strlen(text), cases, 3,
					KQ_IMPL_REF | KQ_IMPL_MVE, d, &samples, fw, err);
}

static void systick_ticks_become_instructions(void **state)
{
	(void)state;
	struct kq_firmware fw;
	struct ergon_err err = {0};
	const char *t = "boot noise\n"
			"ERGON_KBEGIN counter=systick pmu=0 pairs=0 cases=3\n"
			"ERGON_KOVERHEAD 9\n"
			"ERGON_KCHECK 0 ref pass\nERGON_KS 0 ref 3409\n"
			"ERGON_KCHECK 0 mve pass\nERGON_KS 0 mve 1289\n"
			"ERGON_KCHECK 1 ref fail 3 5 0\nERGON_KCHECK 1 mve pass\n"
			"ERGON_KCHECK 2 ref pass\nERGON_KCHECK 2 mve pass\n"
			"ERGON_KEND\n";
	assert_int_equal(parse(t, &fw, &err), 0);
	assert_int_equal(fw.dwt, 0);
	assert_int_equal(fw.pmu, 0);
	assert_int_equal(fw.overhead, 9);
	/* 3409 ticks and 9 overhead: 3409 * 125 / 64 = 6658.203125 and
	 * 9 * 125 / 64 = 17.578125 in samples.csv; (3409 - 9) * 125 / 64 =
	 * 6640.625 is the sample. */
	assert_non_null(strstr(samples.p, "c0,ref,pass,6658.203125,17.578125\n"));
	assert_non_null(strstr(samples.p, "c1,ref,fail,,\n"));
	json_t *sec = NULL;
	assert_int_equal(ergon_kernels_summarize(d, "ref", "emulated_instructions", &sec, &err), 0);
	const json_t *c0 = json_array_get(json_object_get(sec, "cases"), 0);
	const json_t *r = json_array_get(json_object_get(c0, "impls"), 0);
	assert_float_equal(json_real_value(json_object_get(r, "mean")), 6640.625, 1e-9);
	/* mve: (1289 - 9) * 125 / 64 = 2500; speedup 6640.625 / 2500. */
	const json_t *sp = json_array_get(json_object_get(c0, "speedups"), 0);
	assert_float_equal(json_real_value(json_object_get(sp, "speedup")), 2.65625, 1e-12);
	json_decref(sec);
	const json_t *mm =
	    json_object_get(json_object_get(cases[1].record, "first_mismatch"), "ref");
	assert_int_equal(json_integer_value(json_object_get(mm, "byte")), 3);
	assert_int_equal(json_integer_value(json_object_get(mm, "expected")), 0);
}

static void dwt_cycles_and_pmu_counts(void **state)
{
	(void)state;
	struct kq_firmware fw;
	struct ergon_err err = {0};
	const char *t = "ERGON_KBEGIN counter=dwt_cyccnt pmu=1 pairs=4 cases=3\r\n"
			"ERGON_KOVERHEAD 2\r\n"
			"ERGON_KCHECK 0 ref pass\r\nERGON_KS 0 ref 500\r\n"
			"ERGON_KPMU 0 ref 512 4411\r\nERGON_KPMU 0 ref 718 overflow\r\n"
			"ERGON_KCHECK 0 mve pass\r\nERGON_KPMU 0 mve 8 unsupported\r\n"
			"ERGON_KCHECK 1 ref pass\r\nERGON_KCHECK 1 mve pass\r\n"
			"ERGON_KCHECK 2 ref pass\r\nERGON_KCHECK 2 mve fail 7 1 -2\r\n"
			"ERGON_KEND\r\n";
	assert_int_equal(parse(t, &fw, &err), 0);
	assert_int_equal(fw.dwt, 1);
	assert_int_equal(fw.pmu, 1);
	assert_non_null(strstr(samples.p, "c0,ref,pass,500.000000,2.000000\n"));
	const json_t *pmu = json_object_get(cases[0].record, "pmu");
	/* 512 = 0x0200 MVE_INST_RETIRED, 718 = 0x02CE MVE_STALL_RESOURCE_MEM,
	 * 8 = INST_RETIRED (pmu_armv8.h numbers). */
	const json_t *ref = json_object_get(pmu, "ref");
	assert_int_equal(json_integer_value(json_object_get(ref, "ARM_PMU_MVE_INST_RETIRED")),
			 4411);
	assert_non_null(strstr(
	    json_string_value(json_object_get(ref, "ARM_PMU_MVE_STALL_RESOURCE_MEM")), "overflow"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(pmu, "mve"), "ARM_PMU_INST_RETIRED")),
	    "unsupported");
	const json_t *mm =
	    json_object_get(json_object_get(cases[2].record, "first_mismatch"), "mve");
	assert_int_equal(json_integer_value(json_object_get(mm, "byte")), 7);
	assert_int_equal(json_integer_value(json_object_get(mm, "expected")), -8);
}

static void bad_output_refused_with_its_line(void **state)
{
	(void)state;
	struct kq_firmware fw;
	struct ergon_err err = {0};
	static const struct {
		const char *text;
		int rc;
		const char *msg;
	} bad[] = {
	    {"ERGON_KBEGIN counter=systick\nERGON_KCHECK 3 ref pass\n", ERGON_EPARSE, "k.log:2:"},
	    {"ERGON_KBEGIN\nERGON_KCHECK 0 neon pass\n", ERGON_EPARSE, "k.log:2:"},
	    {"ERGON_KBEGIN\nERGON_KOVERHEAD 9\nERGON_KS 0 ref 100\n", ERGON_EPARSE, "k.log:3:"},
	    {"ERGON_KBEGIN\nERGON_KCHECK 0 ref pass\nERGON_KCHECK 0 ref pass\n", ERGON_EPARSE,
	     "a second check"},
	    {"ERGON_KBEGIN\nERGON_KOVERHEAD 9\nERGON_KCHECK 0 ref pass\nERGON_KS 0 ref 9\n",
	     ERGON_EPARSE, "not above"},
	    {"ERGON_KBEGIN\nERGON_KCHECK 0 ref fail 8 1 1\n", ERGON_EPARSE, "mismatch byte"},
	    {"ERGON_KBEGIN\nERGON_KCHECK 0 ref pass\n", ERGON_EDEVICE, "did not finish"},
	    {"", ERGON_EDEVICE, "did not start"},
	    {"ERGON_KBEGIN\nERGON_KCHECK 0 ref pass\nERGON_KEND\n", ERGON_EDEVICE, "no check line"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		teardown(NULL);
		setup(NULL);
		memset(&err, 0, sizeof err);
		assert_int_equal(parse(bad[i].text, &fw, &err), bad[i].rc);
		if (strstr(err.msg, bad[i].msg) == NULL)
			fail_msg("case %zu: '%s' does not contain '%s'", i, err.msg, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(systick_ticks_become_instructions, setup, teardown),
	    cmocka_unit_test_setup_teardown(dwt_cycles_and_pmu_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(bad_output_refused_with_its_line, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

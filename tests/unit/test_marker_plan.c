/* The marker plan as the power build gets it (issue 33): ergon_layers_plan's
 * mask at the edges a hostile reviewer would try (one layer, more layers
 * than the mask has bits, no layer long enough to close a segment), the
 * define and initializer a power build takes (ergon_marker_mask_define /
 * _initializer), the plan's JSON (stages.power.marker_plan), and the reason
 * an unmarked layer gets when the meter's rate differs from the plan's
 * (ergon_layers_json with plan_rate_hz). Every expectation is worked out
 * here from the rule in docs/METHOD.md ("The marker plan": layer 0 marked,
 * then the first layer after at least 10 samples; a short last segment
 * joins the one before; layers from 256 on never marked). */
#include "ergon/layer_energy.h"
#include "pipelines/common/common.h"
#include "test_support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void one_layer_is_one_segment(void **state)
{
	(void)state;
	double s[1] = {1e-3};
	uint32_t mask[8];
	size_t first[1], n = 0;
	ergon_layers_plan(s, 1, 1e5, 0, mask, first, &n);
	assert_int_equal(n, 1);
	assert_int_equal(first[0], 0);
	assert_int_equal(mask[0], 1u);
	for (int w = 1; w < 8; w++)
		assert_int_equal(mask[w], 0u);
}

static void beyond_256_layers_the_last_segment_keeps_them(void **state)
{
	(void)state;
	/* 300 layers of 1 ms: 100 samples each at 100 kSPS, so every layer up
	 * to 255 opens a segment; 256..299 have no bit and join 255's. */
	double s[300];
	size_t first[300], n = 0;
	for (int i = 0; i < 300; i++)
		s[i] = 1e-3;
	struct ergon_layer_plan lp = {.n_layers = 300, .layer_s = s, .seg_first = first,
				      .rate_hz = 1e5};
	ergon_layers_plan(s, 300, 1e5, 0, lp.mask, first, &n);
	lp.n_segments = n;
	assert_int_equal(n, 256);
	for (int w = 0; w < 8; w++)
		assert_int_equal(lp.mask[w], 0xffffffffu);
	assert_int_equal(first[255], 255);
	json_t *j = ergon_layer_plan_json(&lp, "test");
	assert_non_null(j);
	const json_t *left = json_object_get(j, "left_out");
	assert_int_equal(json_array_size(left), 44);
	assert_int_equal(json_integer_value(json_array_get(left, 0)), 256);
	assert_int_equal(json_integer_value(json_array_get(left, 43)), 299);
	assert_int_equal(json_integer_value(json_object_get(j, "segments")), 256);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "mask"), 7)),
			    "0xffffffff");
	json_decref(j);
}

static void no_layer_long_enough_marks_layer_0_alone(void **state)
{
	(void)state;
	/* Five layers of 10 us: 1 sample each at 100 kSPS; the open segment
	 * never reaches 10 samples, so only layer 0 is marked. */
	double s[5] = {1e-5, 1e-5, 1e-5, 1e-5, 1e-5};
	uint32_t mask[8];
	size_t first[5], n = 0;
	ergon_layers_plan(s, 5, 1e5, 0, mask, first, &n);
	assert_int_equal(n, 1);
	assert_int_equal(mask[0], 1u);
}

static void a_short_layer_joins_the_segment_before(void **state)
{
	(void)state;
	/* test_profile_marker_plan.sh's plan: 50, 5, 45 samples -> layers 0
	 * and 1 marked, layer 2 joins layer 1's 5-sample segment. */
	double s[3] = {5e-4, 5e-5, 4.5e-4};
	uint32_t mask[8];
	size_t first[3], n = 0;
	ergon_layers_plan(s, 3, 1e5, 0, mask, first, &n);
	assert_int_equal(n, 2);
	assert_int_equal(mask[0], 3u);
	/* The last layer short: 50, 45, 5 -> its mark goes, it joins layer 1. */
	double t[3] = {5e-4, 4.5e-4, 5e-5};
	ergon_layers_plan(t, 3, 1e5, 0, mask, first, &n);
	assert_int_equal(n, 2);
	assert_int_equal(mask[0], 3u);
}

static void define_and_initializer(void **state)
{
	(void)state;
	const uint32_t m[8] = {0x1219u, 0, 0, 0, 0, 0, 0x100u, 0x80000000u};
	char def[ERGON_MARKER_DEFINE_MAX], init[ERGON_MARKER_INIT_MAX];
	ergon_marker_mask_define(m, def, sizeof def);
	ergon_marker_mask_initializer(m, init, sizeof init);
	assert_string_equal(def, "-DERT_MODEL_MARKER_MASK=0x00001219,0x00000000,0x00000000,"
				 "0x00000000,0x00000000,0x00000000,0x00000100,0x80000000");
	assert_string_equal(init, "{0x00001219, 0x00000000, 0x00000000, 0x00000000, "
				  "0x00000000, 0x00000000, 0x00000100, 0x80000000}");
}

static void unmarked_reason_names_the_plans_rate(void **state)
{
	(void)state;
	/* Two layers planned at 100 kSPS as one segment (layer 1 unmarked);
	 * the meter ran at 50 kSPS: the reason names the plan's rate. */
	struct ergon_layer_figures f = {.first = 0, .last = 0, .inferences = 10,
					.energy_mean_j = 1e-6, .energy_median_j = 1e-6,
					.duration_s = 1e-3, .samples = 50, .power_w = 1e-3,
					.share = 1};
	struct ergon_layers_result res = {.sample_rate_hz = 5e4, .min_samples = 10,
					  .segments = 1, .n_layers = 1, .layers = &f};
	const char *op[2] = {"CONV_2D", "RESHAPE"};
	size_t first[1] = {0};
	struct ergon_layer_model m = {.n_layers = 2, .op = op, .seg_first = first,
				      .n_segments = 1, .plan_rate_hz = 1e5};
	json_t *meta = NULL;
	json_t *arr = ergon_layers_json(&res, &m, 1e-6, &meta);
	assert_non_null(arr);
	assert_non_null(meta);
	const json_t *u = json_array_get(json_object_get(meta, "unresolved"), 0);
	const char *why = json_string_value(json_object_get(u, "reason"));
	assert_non_null(why);
	if (strstr(why, "not marked") == NULL || strstr(why, "at 100000 Hz") == NULL)
		fail_msg("reason '%s'", why);
	assert_int_equal(json_integer_value(json_object_get(u, "measured_with")), 0);
	json_decref(arr);
	json_decref(meta);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_layer_is_one_segment),
	    cmocka_unit_test(beyond_256_layers_the_last_segment_keeps_them),
	    cmocka_unit_test(no_layer_long_enough_marks_layer_0_alone),
	    cmocka_unit_test(a_short_layer_joins_the_segment_before),
	    cmocka_unit_test(define_and_initializer),
	    cmocka_unit_test(unmarked_reason_names_the_plans_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Verify in bounded memory: the figures recomputed from series re-read
 * from the file (every series spilled, percentiles by radix selection,
 * window counts in batches) are exactly the figures recomputed from the
 * whole tree, on a report with failed invocations, equal latencies, zero
 * latencies and ties at the percentile ranks; an edit fails the same way
 * in both; and a series that is not all numbers is named. */
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/report.h"
#include "ergon/session.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct ergon_instrument_driver drv = {.name = "unit", .longname = "unit"};
static const struct ergon_workload_driver wdrv = {.name = "unit", .longname = "unit"};

static char *dir;

/* A report of n invocations; every 7th failed; latencies drawn from a few
 * values (ties), some 0. */
static char *write_report(size_t n, const char *name)
{
	size_t ns = 2001;
	double edges[5];
	struct ergon_session_result res = {.status = ERGON_SESSION_COMPLETE,
					   .idle_end_s = 1,
					   .load_start_s = 1,
					   .load_end_s = 5,
					   .window_edges_s = edges,
					   .windows_completed = 4,
					   .n_samples = ns,
					   .n_inv = n,
					   .clock_res_s = 1e-9};
	for (int w = 0; w <= 4; w++)
		edges[w] = 1 + w;
	res.sample_t_s = malloc(ns * sizeof(double));
	res.sample_power_w = malloc(ns * sizeof(double));
	res.inv_start_s = malloc(n * sizeof(double));
	res.inv_latency_s = malloc(n * sizeof(double));
	res.failed_index = malloc(n * sizeof(size_t));
	for (size_t i = 0; i < ns; i++) {
		res.sample_t_s[i] = (double)i * 2.5e-3;
		res.sample_power_w[i] = i < 400 ? 0.5 : 2.0 + 0.01 * sin((double)i);
	}
	double dt = 4.0 / (double)n;
	for (size_t i = 0; i < n; i++) {
		res.inv_start_s[i] = 1 + (double)i * dt;
		size_t q = (i * 2654435761u) % 97;
		res.inv_latency_s[i] = q < 3 ? 0.0 : dt * (0.5 + 0.01 * (double)(q % 13));
		if (i % 7 == 3)
			res.failed_index[res.n_failed++] = i;
	}
	struct ergon_instrument inst = {.driver = &drv};
	inst.identity.accuracy_pct = 1.0;
	inst.identity.resolution_w = 0.001;
	inst.identity.provenance = ERGON_PROV_SYNTHETIC;
	inst.identity.n_rails = 1;
	struct ergon_workload wl = {.driver = &wdrv};
	struct ergon_run_config cfg = {.device = "unit",
				       .workload_spec = "unit:",
				       .session = {.idle_s = 1,
						   .windows = 4,
						   .window_s = 1,
						   .sampler = ERGON_SAMPLER_THREADED,
						   .sample_hz = 400},
				       .throttle_threshold = 0.15,
				       .throttle_windows = 2,
				       .ambient_c = NAN};
	json_t *rep = NULL;
	struct ergon_err err = {0};
	char *path = ts_strf("%s/%s", dir, name);
	if (ergon_report_build(&cfg, &inst, &wl, &res, &rep, &err) ||
	    ergon_artifact_write(rep, path, ERGON_WRITE_FORCE, &err))
		fail_msg("%s", err.msg);
	json_decref(rep);
	free(res.sample_t_s);
	free(res.sample_power_w);
	free(res.inv_start_s);
	free(res.inv_latency_s);
	free(res.failed_index);
	return path;
}

static json_t *figures_streamed(const char *path, unsigned flags, int *rc_out)
{
	struct ergon_jcs_stream_result res;
	struct ergon_err e = {0};
	int rc = ergon_jcs_stream_file(path, (size_t)1 << 30,
				       ERGON_JCS_OMIT_REPORT_ID | ERGON_JCS_BUILD_TREE |
					   ERGON_JCS_PACK_SERIES | flags,
				       &res, &e);
	assert_int_equal(rc, 0);
	json_t *fig = NULL, *iss = NULL;
	*rc_out = ergon_report_compute_figures_packed(res.tree, &res, &fig, &iss, &e);
	json_decref(iss);
	ergon_jcs_stream_result_free(&res);
	return fig;
}

static void spilled_figures_equal_the_tree_figures(void **state)
{
	(void)state;
	size_t sizes[] = {1, 2, 7, 100, 5000, 60000};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		char name[32];
		snprintf(name, sizeof(name), "r%zu.json", k);
		char *path = write_report(sizes[k], name);
		json_t *tree = NULL;
		struct ergon_err e = {0};
		assert_int_equal(ergon_artifact_load(path, (size_t)1 << 30, &tree, &e), 0);
		json_t *want = NULL, *iss = NULL;
		assert_int_equal(ergon_report_compute_figures(tree, &want, &iss, &e), 0);
		int rc;
		json_t *spilled = figures_streamed(path, ERGON_JCS_SPILL_ALL, &rc);
		assert_int_equal(rc, 0);
		json_t *held = figures_streamed(path, 0, &rc);
		assert_int_equal(rc, 0);
		if (!json_equal(want, spilled) || !json_equal(want, held)) {
			char *a = json_dumps(want, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
			char *b = json_dumps(spilled, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
			fail_msg("%zu invocations:\n tree    %.900s\n spilled %.900s", sizes[k], a,
				 b);
		}
		/* And the whole verify passes both ways. */
		assert_int_equal(ergon_report_verify_file(path, (size_t)1 << 30, 0, NULL, &e), 0);
		assert_int_equal(ergon_report_verify_file(path, (size_t)1 << 30,
							  ERGON_VERIFY_SPILL_ALL, NULL, &e),
				 0);
		json_decref(want);
		json_decref(iss);
		json_decref(spilled);
		json_decref(held);
		json_decref(tree);
		free(path);
	}
}

/* Edit one latency, or put a string into the spilled latencies, and
 * re-seal: both ways name the same field. */
static void edits_fail_the_same_way(void **state)
{
	(void)state;
	char *path = write_report(5000, "base.json");
	struct {
		const char *what;
		json_t *value;
		const char *want;
	} cases[] = {
	    {"latency", json_real(1.0), "field figures.latency"},
	    {"string", json_string("0.001"), "series.invocations.latency_s[10]"},
	};
	for (size_t c = 0; c < 2; c++) {
		json_t *r = NULL;
		struct ergon_err e = {0};
		assert_int_equal(ergon_artifact_load(path, (size_t)1 << 30, &r, &e), 0);
		json_t *lat = json_object_get(
		    json_object_get(json_object_get(r, "series"), "invocations"), "latency_s");
		/* Invocation 10 failed (every 7th from 3): its latency is in no
		 * figure, so the number goes to 11 and the string to 10. */
		json_array_set(lat, c == 0 ? 11 : 10, cases[c].value);
		json_decref(cases[c].value);
		assert_int_equal(ergon_artifact_seal(r, &e), 0);
		char *p = ts_strf("%s/edit%zu.json", dir, c);
		char *text = json_dumps(r, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
		assert_int_equal(ts_write_file(p, text, strlen(text)), 0);
		free(text);
		json_decref(r);
		for (unsigned f = 0; f < 2; f++) {
			e = (struct ergon_err){0};
			int rc = ergon_report_verify_file(p, (size_t)1 << 30,
							  f ? ERGON_VERIFY_SPILL_ALL : 0, NULL, &e);
			if (rc != ERGON_EVERIFY || strstr(e.msg, cases[c].want) == NULL)
				fail_msg("%s, flags %u: rc %d, wanted one naming %s: %s",
					 cases[c].what, f, rc, cases[c].want, e.msg);
		}
		free(p);
	}
	free(path);
}

static int setup(void **state)
{
	(void)state;
	dir = ts_tmpdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_tmpdir_remove(dir);
	free(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(spilled_figures_equal_the_tree_figures),
	    cmocka_unit_test(edits_fail_the_same_way),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

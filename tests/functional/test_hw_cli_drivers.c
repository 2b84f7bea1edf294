/* rapl and nvml through `ergon run`, against a fake powercap tree whose
 * energy_uj a writer thread advances, and against the stub NVML. */
#include "ergon/issues.h"
#include "fake_sysfs.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define assert_near(got, want, tol)                                                     \
	do {                                                                            \
		double g_ = (got), w_ = (want), t_ = (tol);                             \
		if (!(fabs(g_ - w_) <= t_))                                             \
			fail_msg("%s = %.9g, expected %.9g +- %.3g", #got, g_, w_, t_); \
	} while (0)

static json_t *run_report_prov(const char *dir, const char *instrument, const char *root,
			       const char *prov, int *rc);

static json_t *run_report(const char *dir, const char *instrument, const char *root, int *rc)
{
	return run_report_prov(dir, instrument, root, NULL, rc);
}

static json_t *run_report_prov(const char *dir, const char *instrument, const char *root,
			       const char *prov, int *rc)
{
	char *out = ts_strf("%s/report.json", dir);
	char *err = NULL;
	const char *argv[32];
	int a = 0;
	argv[a++] = "run";
	argv[a++] = "--device";
	argv[a++] = "fake";
	argv[a++] = "--instrument";
	argv[a++] = instrument;
	if (root) {
		argv[a++] = "--sysfs-root";
		argv[a++] = root;
	}
	if (prov) {
		argv[a++] = "--provenance";
		argv[a++] = prov;
	}
	const char *rest[] = {
	    "--workload", "builtin:spin", "--settle-s", "0",	 "--idle-s", "1",	"--windows",
	    "2",	  "--window-s",	  "1",		"--out", out,	     "--force", NULL};
	for (int i = 0; rest[i]; i++)
		argv[a++] = rest[i];
	argv[a] = NULL;
	*rc = ts_run_ergon_argv(NULL, &err, argv);
	json_error_t je;
	json_t *rep = json_load_file(out, 0, &je);
	if (rep == NULL)
		fail_msg("no report (exit %d): %s", *rc, err ? err : "");
	free(err);
	free(out);
	return rep;
}

static double fig(const json_t *rep, const char *phase, const char *key)
{
	const json_t *x =
	    json_object_get(json_object_get(json_object_get(rep, "figures"), phase), key);
	if (!json_is_number(x))
		fail_msg("figures.%s.%s missing", phase, key);
	return json_number_value(x);
}

/* The limit of a budget's term (NaN when unknown); fails when absent. */
static double blimit(const json_t *b, const char *name)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(b, "terms"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0) {
			const json_t *l = json_object_get(t, "limit");
			return json_is_number(l) ? json_number_value(l) : NAN;
		}
	}
	fail_msg("budget has no term %s", name);
	return NAN;
}

static const json_t *load_budget(const json_t *rep)
{
	return json_object_get(json_object_get(json_object_get(rep, "figures"), "load"),
			       "energy_budget");
}

static void rapl_through_run(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_rapl_package(root, 0, 1000000, 262143328850LL), 0);
	struct fs_writer *w = fs_writer_start(root, 0.001);
	/* 5000 uJ every 1 ms tick: 5 W, in idle and load alike. */
	fs_writer_set(w, "sys/class/powercap/intel-rapl:0/energy_uj", 1000000, 5000);
	int rc;
	json_t *rep = run_report(root, "rapl:package-0", root, &rc);
	fs_writer_stop(w);
	const json_t *inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "driver")), "rapl");
	assert_string_equal(json_string_value(json_object_get(inst, "integrates")), "energy");
	/* A tree under --sysfs-root is not the system's own: recorded, and
	 * synthetic unless --provenance measured says otherwise. */
	assert_string_equal(json_string_value(json_object_get(inst, "provenance")), "synthetic");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(rep, "provenance"), "kind")),
	    "synthetic");
	assert_string_equal(json_string_value(json_object_get(inst, "sysfs_root")), root);
	/* The unported rule: never run on a CPU, said in the identity and
	 * as an info issue. */
	assert_string_equal(json_string_value(json_object_get(inst, "validated_against")),
			    "fake powercap trees only (not yet on a CPU)");
	assert_true(
	    ergon_issue_has(json_object_get(rep, "issues"), "instrument.unvalidated_driver"));
	/* The writer catches up to its absolute schedule, so over a 1 s phase
	 * the counter advanced 5 J within a tick or two (10 mJ) plus the lag
	 * of one tick at each end. */
	assert_near(fig(rep, "idle", "mean_power_w"), 5.0, 0.25);
	assert_near(fig(rep, "load", "mean_power_w"), 5.0, 0.25);
	const json_t *r0 =
	    json_array_get(json_object_get(json_object_get(rep, "instrument_stats"), "rails"), 0);
	assert_string_equal(json_string_value(json_object_get(r0, "domain")), "package-0");
	/* Neither Intel nor AMD rates RAPL: the report says the ± is unrated. */
	assert_true(ergon_issue_has(json_object_get(rep, "issues"), "instrument.unrated_accuracy"));
	/* Its budget: the rated accuracy unknown (the budget incomplete and
	 * says so), the accumulator's step of 1 uJ by hand, the counter's
	 * clock unknown. */
	const json_t *lb = load_budget(rep);
	assert_false(json_is_true(json_object_get(lb, "complete")));
	assert_string_equal(json_string_value(json_object_get(lb, "dominant")), "rated accuracy");
	assert_true(isnan(blimit(lb, "rated accuracy")));
	assert_near(blimit(lb, "resolution"), 1e-6, 0.0);
	assert_true(isnan(blimit(lb, "timebase")));
	json_decref(rep);
	/* The energy model of such a run says where its tree was. */
	char *rpath = ts_strf("%s/report.json", root);
	char *so = NULL, *se = NULL;
	assert_int_equal(ts_run_ergon(&so, &se, "energy-model", rpath, "--action", "spin",
				      "--allow-synthetic", NULL),
			 0);
	char *want = ts_strf("read under sysfs root %s (not /)", root);
	if (strstr(so, want) == NULL)
		fail_msg("energy model does not name the sysfs root: %s", so);
	free(want);
	free(so);
	free(se);
	free(rpath);
	/* --provenance measured: the user states it is the device's live tree. */
	w = fs_writer_start(root, 0.001);
	fs_writer_set(w, "sys/class/powercap/intel-rapl:0/energy_uj", 1000000, 5000);
	rep = run_report_prov(root, "rapl:package-0", root, "measured", &rc);
	fs_writer_stop(w);
	inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "provenance")), "measured");
	assert_string_equal(json_string_value(json_object_get(inst, "sysfs_root")), root);
	json_decref(rep);
	ts_tmpdir_remove(root);
	free(root);
}

static void nvml_energy_through_run(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	setenv("ERGON_NVML_LIB", getenv("ERGON_NVML_STUB"), 1);
	unsetenv("STUB_NVML_ENERGY");
	int rc;
	json_t *rep = run_report(dir, "nvml:0", NULL, &rc);
	const json_t *inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "driver")), "nvml");
	assert_string_equal(json_string_value(json_object_get(inst, "model")), "NVIDIA H200");
	assert_string_equal(json_string_value(json_object_get(inst, "integrates")), "energy");
	assert_false(ergon_issue_has(json_object_get(rep, "issues"), "instrument.averaged_power"));
	/* nvidia-smi's documented +-5 W is the floor: rated, not flagged. */
	assert_near(json_number_value(json_object_get(inst, "floor_w")), 5.0, 0.0);
	assert_false(
	    ergon_issue_has(json_object_get(rep, "issues"), "instrument.unrated_accuracy"));
	assert_true(
	    ergon_issue_has(json_object_get(rep, "issues"), "instrument.unvalidated_driver"));
	assert_string_equal(json_string_value(json_object_get(inst, "validated_against")),
			    "a stub libnvidia-ml only (not yet on a GPU)");
	/* Not sysfs-backed: no root recorded. */
	assert_true(json_is_null(json_object_get(inst, "sysfs_root")));
	/* Its budget by hand: nvidia-smi's +-5 W over the load's span, one
	 * 1 mJ counter step; the counter's clock is stated by no one. */
	const json_t *lb = load_budget(rep);
	double span = fig(rep, "load", "duration_s");
	assert_near(blimit(lb, "rated accuracy (absolute)"), 5.0 * span, 1e-12);
	assert_near(blimit(lb, "resolution"), 1e-3, 0.0);
	assert_true(isnan(blimit(lb, "timebase")));
	assert_false(json_is_true(json_object_get(lb, "complete")));
	json_decref(rep);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void nvml_averaged_power_flagged(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	setenv("ERGON_NVML_LIB", getenv("ERGON_NVML_STUB"), 1);
	setenv("STUB_NVML_ENERGY", "unsupported", 1);
	int rc;
	json_t *rep = run_report(dir, "nvml", NULL, &rc);
	unsetenv("STUB_NVML_ENERGY");
	const json_t *inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "integrates")), "none");
	assert_near(json_number_value(json_object_get(inst, "averaging_period_s")), 1.0, 0.0);
	/* The stub answers 150000 mW on every call. */
	assert_near(fig(rep, "idle", "mean_power_w"), 150.0, 1e-9);
	assert_near(fig(rep, "load", "mean_power_w"), 150.0, 1e-9);
	/* 1 s windows against a 1 s average: flagged, and the report is not valid. */
	const json_t *issues = json_object_get(rep, "issues");
	assert_true(ergon_issue_has(issues, "instrument.averaged_power"));
	assert_string_not_equal(json_string_value(json_object_get(rep, "integrity")), "valid");
	json_decref(rep);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rapl_through_run),
	    cmocka_unit_test(nvml_energy_through_run),
	    cmocka_unit_test(nvml_averaged_power_flagged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

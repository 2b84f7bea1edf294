/* `ergon run --repeat 5` and `ergon compare` on the synthetic instrument
 * with its seeded noise, driven in-process (ergon_run, ergon_compare) on
 * the simulated clock (ergon/clock.h), so that every figure is a
 * deterministic function of the seed and nothing depends on this host's
 * load (issue 31, "Done when"):
 *
 *   - the same configuration twice (the noise of seed k and of seed
 *     k + 1000: two runs on a bench see two realisations of the noise) is
 *     "not distinguishable" (or equal) on every figure, for k = 1..20;
 *   - the workload made 5 % longer (work_s x 1.05) is "higher" on the
 *     energy per operation (above idle and total), for k = 1..20.
 *
 * Scenario: synthetic idle 0.6 W, load 3 W, noise_w 0.02 W (uniform,
 * seeded), drop 0, work_s = 1/128 s; builtin:spin,iters=1; inline sampler
 * at 128 Hz; idle 1 s, 2 windows of 1 s; 5 repetitions. What the test
 * checks by hand: every invocation lasts exactly work_s (the emulation's
 * grid), so the latency, throughput, operation and sampler figures are
 * the same in every repetition and run (equal); the power figures differ
 * by the noise only: a uniform +-0.02 W per reading averages over ~128
 * idle and ~256 load readings to a spread of about 0.02 / sqrt(3 x 256)
 * = 0.7 mW, far inside the instrument's rated ± (0.5 % of 3 W + 1 mW =
 * 16 mW), while 5 % of the energy per operation (2.4 W x 1/128 s x 0.05
 * = 0.94 mJ above idle) exceeds the combined ± of both sides (about 2 x
 * 0.17 mJ) and the spread. */
#include "ergon/artifact.h"
#include "ergon/compare.h"
#include "ergon/fileio.h"
#include "ergon/report.h"
#include "sim_clock.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ts_sim_clock sim;

static json_t *run_sim(long seed, double work_s, const char *out)
{
	char seed_kv[48], work_kv[48];
	snprintf(seed_kv, sizeof seed_kv, "seed=%ld", seed);
	snprintf(work_kv, sizeof work_kv, "work_s=%.17g", work_s);
	const char *ikv[] = {seed_kv,	     work_kv,  "idle_w=0.6", "load_w=3",
			     "noise_w=0.02", "drop=0", NULL};
	const char *wkv[] = {NULL};
	struct ergon_run_config cfg = {
	    .device = "dut",
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload_spec = "builtin:spin,iters=1",
	    .workload_opts = {.kv = wkv},
	    .session = {.idle_s = 1.0,
			.windows = 2,
			.window_s = 1.0,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = 128,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .out_path = out,
	    .write_flags = ERGON_WRITE_FORCE,
	    .repeat = 5,
	};
	sim = (struct ts_sim_clock){0};
	ts_sim_clock_install(&sim);
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_run(&cfg, NULL, &rep, &err);
	ts_sim_clock_remove();
	if (rc)
		fail_msg("ergon_run: %s", err.msg);
	/* What verify recomputes from the file equals what was written. */
	if (ergon_report_verify(rep, &err) != 0)
		fail_msg("verify: %s", err.msg);
	return rep;
}

static json_t *compare2(const json_t *a, const json_t *b)
{
	const json_t *arts[2] = {a, b};
	const char *labels[2] = {"A", "B"};
	struct ergon_compare_options o = {.threshold_pct = NAN};
	json_t *res = NULL;
	struct ergon_err err = {0};
	if (ergon_compare(arts, labels, 2, &o, &res, &err) != 0)
		fail_msg("compare: %s", err.msg);
	assert_int_equal(json_integer_value(json_object_get(res, "spread_unknown")), 0);
	return res;
}

static const char *verdict_of(const json_t *res, const char *name)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(res, "figures"), i, f)
	{
		if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0)
			return json_string_value(json_object_get(
			    json_array_get(json_object_get(f, "versus"), 0), "verdict"));
	}
	fail_msg("no figure %s", name);
	return NULL;
}

static void same_configuration_and_5pct_change(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *pa = ts_strf("%s/a.json", dir), *pb = ts_strf("%s/b.json", dir);
	char *pc = ts_strf("%s/c.json", dir);
	const double work = 1.0 / 128;
	int same_ok = 0, change_ok = 0;
	size_t by_spread = 0, by_instrument = 0, equal = 0;
	for (long k = 1; k <= 20; k++) {
		json_t *a = run_sim(k, work, pa);
		json_t *b = run_sim(k + 1000, work, pb);
		json_t *c = run_sim(k + 1000, work * 1.05, pc);
		/* Five repetitions, each with its own noise: the load power
		 * differs between them (the seeded stream continues). */
		const json_t *lp = json_object_get(
		    json_object_get(
			json_object_get(json_object_get(json_object_get(a, "figures"), "repeat"),
					"figures"),
			"load"),
		    "mean_power_w");
		assert_int_equal(json_integer_value(json_object_get(lp, "n")), 5);
		assert_true(json_number_value(json_object_get(lp, "sd")) > 0);
		json_t *res = compare2(a, b);
		int all = 1;
		size_t i;
		const json_t *f;
		json_array_foreach(json_object_get(res, "figures"), i, f)
		{
			const char *v = json_string_value(json_object_get(
			    json_array_get(json_object_get(f, "versus"), 0), "verdict"));
			if (strcmp(v, "equal") == 0) {
				equal++;
			} else if (strncmp(v, "not distinguishable", 19) == 0) {
				if (strstr(v, "instruments"))
					by_instrument++;
				else
					by_spread++;
			} else {
				all = 0;
				print_message("seed %ld: %s: %s\n", k,
					      json_string_value(json_object_get(f, "name")), v);
			}
		}
		same_ok += all;
		json_decref(res);
		res = compare2(a, c);
		const char *v1 = verdict_of(res, "energy per operation above idle");
		const char *v2 = verdict_of(res, "energy per operation total");
		int changed = strcmp(v1, "higher") == 0 && strcmp(v2, "higher") == 0;
		if (!changed)
			print_message("seed %ld, 5 %% longer work: %s / %s\n", k, v1, v2);
		change_ok += changed;
		json_decref(res);
		json_decref(a);
		json_decref(b);
		json_decref(c);
	}
	print_message("same configuration: not distinguishable on every figure in %d of 20 seeds "
		      "(%zu equal, %zu within the instruments' ±, %zu within the spread only); "
		      "5 %% longer work: energy/op higher in %d of 20\n",
		      same_ok, equal, by_instrument, by_spread, change_ok);
	assert_int_equal(same_ok, 20);
	assert_int_equal(change_ok, 20);
	free(pa);
	free(pb);
	free(pc);
	ts_tmpdir_remove(dir);
	free(dir);
}

static const json_t *get(const json_t *o, const char *a, const char *b, const char *c)
{
	o = json_object_get(o, a);
	if (b)
		o = json_object_get(o, b);
	if (c)
		o = json_object_get(o, c);
	return o;
}

/* The repeat statistics against the repetitions' own figures, worked out
 * here: the mean, the sample sd (n - 1), the t interval with t(0.975, 4)
 * from Shaw's closed form, the median of 5 with [min, max] as its interval
 * (coverage 1 - 2/32); every repetition has its own measurement time, in
 * order on both clocks. */
static void statistics_by_hand(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *pa = ts_strf("%s/a.json", dir);
	json_t *a = run_sim(7, 1.0 / 128, pa);
	assert_int_equal(json_integer_value(json_object_get(a, "schema_version")), 2);
	const json_t *reps = json_object_get(a, "repetitions");
	const json_t *frs = get(a, "figures", "repetitions", NULL);
	assert_int_equal(json_array_size(reps), 5);
	assert_int_equal(json_array_size(frs), 5);
	double v[5], sum = 0, prev_end = -1;
	for (size_t i = 0; i < 5; i++) {
		v[i] = json_number_value(
		    get(json_array_get(frs, i), "energy_per_op", "above_idle_j", NULL));
		sum += v[i];
		const json_t *mt = json_object_get(json_array_get(reps, i), "measurement_time");
		double s0 = json_number_value(json_object_get(mt, "start_monotonic_s"));
		double s1 = json_number_value(json_object_get(mt, "end_monotonic_s"));
		/* Simulated clock: each repetition is idle 1 s + 2 windows of 1 s. */
		assert_true(s1 - s0 >= 3.0 && s0 >= prev_end);
		prev_end = s1;
		assert_non_null(json_string_value(json_object_get(mt, "start_utc")));
		assert_non_null(json_string_value(json_object_get(mt, "end_utc")));
	}
	double mean = sum / 5, ss = 0, mn = v[0], mx = v[0];
	for (size_t i = 0; i < 5; i++) {
		ss += (v[i] - mean) * (v[i] - mean);
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	double sd = sqrt(ss / 4), q = 4 * 0.975 * 0.025;
	double t4 = 2 * sqrt(cos(acos(sqrt(q)) / 3) / sqrt(q) - 1);
	const json_t *e = get(a, "figures", "repeat", "figures");
	e = get(e, "energy_per_op", "above_idle_j", NULL);
	assert_int_equal(json_integer_value(json_object_get(e, "n")), 5);
	assert_true(fabs(json_number_value(json_object_get(e, "mean")) - mean) <= 1e-15 * mean);
	assert_true(fabs(json_number_value(json_object_get(e, "sd")) - sd) <= 1e-9 * sd);
	assert_true(fabs(json_number_value(json_object_get(e, "ci_hi")) -
			 (mean + t4 * sd / sqrt(5))) <= 1e-9 * mean);
	assert_true(json_number_value(json_object_get(e, "median_lo")) == mn);
	assert_true(json_number_value(json_object_get(e, "median_hi")) == mx);
	assert_true(json_number_value(json_object_get(e, "median_coverage")) == 1 - 2.0 / 32);
	/* Every invocation lasts work_s exactly: the same latency in every
	 * repetition, no spread. */
	const json_t *l = get(get(a, "figures", "repeat", "figures"), "latency", "p50_s", NULL);
	TS_ASSERT_EXACT(json_number_value(json_object_get(l, "mean")), 1.0 / 128);
	assert_true(json_number_value(json_object_get(l, "sd")) == 0);
	/* The whole run's time spans the repetitions'. */
	const json_t *mt = json_object_get(a, "measurement_time");
	assert_true(json_number_value(json_object_get(mt, "end_monotonic_s")) >= prev_end);
	json_decref(a);
	free(pa);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Ctrl-C in the middle of repetition 2 (the stop flag raised by the
 * simulated clock at 4.5 s: repetition 1 is 0..3 s, repetition 2 from 3 s
 * on): the report keeps repetition 1 whole and what repetition 2 measured,
 * says interrupted, withholds the repeat statistics and verifies. */
static volatile sig_atomic_t stop;
static void stop_at_4_5(void *ctx, double before_s)
{
	(void)ctx;
	if (before_s < 4.5 && sim.t_s >= 4.5)
		stop = 1;
}

static void interrupted_in_repetition_2(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/i.json", dir);
	const char *ikv[] = {"seed=3", "work_s=0.0078125", "drop=0", NULL};
	const char *wkv[] = {NULL};
	stop = 0;
	struct ergon_run_config cfg = {
	    .device = "dut",
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload_spec = "builtin:spin,iters=1",
	    .workload_opts = {.kv = wkv},
	    .session = {.idle_s = 1.0,
			.windows = 2,
			.window_s = 1.0,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = 128,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE,
			.stop_flag = &stop},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .out_path = out,
	    .repeat = 5,
	};
	sim = (struct ts_sim_clock){.on_advance = stop_at_4_5};
	ts_sim_clock_install(&sim);
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_run(&cfg, NULL, &rep, &err);
	ts_sim_clock_remove();
	if (rc)
		fail_msg("ergon_run: %s", err.msg);
	assert_string_equal(json_string_value(json_object_get(rep, "status")), "interrupted");
	assert_string_equal(json_string_value(json_object_get(rep, "integrity")), "invalid");
	assert_int_equal(json_array_size(json_object_get(rep, "repetitions")), 2);
	assert_int_equal(json_integer_value(get(rep, "repeat", "completed", NULL)), 1);
	assert_non_null(get(rep, "figures", "withheld", NULL));
	assert_null(get(rep, "figures", "repeat", NULL));
	const json_t *f1 = json_array_get(get(rep, "figures", "repetitions", NULL), 0);
	const json_t *f2 = json_array_get(get(rep, "figures", "repetitions", NULL), 1);
	assert_true(json_is_object(json_object_get(f1, "energy_per_op")));
	assert_non_null(json_object_get(f2, "withheld"));
	char *issues = json_dumps(json_object_get(rep, "issues"), 0);
	assert_non_null(strstr(issues, "run.repetitions_incomplete"));
	assert_non_null(strstr(issues, "repetition 2/5: "));
	free(issues);
	if (ergon_report_verify(rep, &err) != 0)
		fail_msg("verify: %s", err.msg);
	/* Verify rejects the same report calling itself complete. */
	json_t *forged = json_deep_copy(rep);
	json_object_set_new(forged, "status", json_string("complete"));
	json_object_del(forged, "report_id");
	char id[72];
	assert_int_equal(ergon_artifact_digest(forged, id, &err), 0);
	json_object_set_new(forged, "report_id", json_string(id));
	assert_int_not_equal(ergon_report_verify(forged, &err), 0);
	json_decref(forged);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(same_configuration_and_5pct_change),
	    cmocka_unit_test(statistics_by_hand),
	    cmocka_unit_test(interrupted_in_repetition_2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

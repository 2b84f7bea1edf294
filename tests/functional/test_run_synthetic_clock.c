/* `ergon run`'s pipeline (ergon_run: instrument, workload, session, report,
 * atomic write) on the synthetic instrument's per-invocation work in
 * simulated time (ergon/clock.h), so that the latency and energy figures
 * are exact instead of a +-2 % wall-clock band (test_run_cli.sh checks
 * the same scenario through the CLI only for what timing cannot change).
 *
 * Scenario: synthetic idle 0.5 W, load 3 W, noise 0, drop 0, work_s =
 * 1/128 s; builtin:spin,iters=1 (real CPU work that takes no simulated
 * time); inline sampler at 128 Hz; settle 0, idle 1 s, 2 windows of 1 s.
 * Every invocation is stretched to the work_s grid and ends exactly
 * 1/128 s after it started, so by hand:
 *   256 invocations (128 per window), every latency 1/128 s:
 *   p50 = p90 = p95 = p99 = min = max = mean = 0.0078125 s;
 *   throughput counts an invocation in the window [lo, hi) that holds
 *   its end (the last window also holds its end edge): the 128th ends at
 *   exactly 2 s, so the windows hold 127 and 129 operations; first
 *   127 ops/s, tail (the mean of the last 2 windows) 128 ops/s, change
 *   100/127 % = +0.787 %, under the 15 % threshold: STABLE;
 *   idle samples at m/128 (m = 0..127) all 0.5 W; load samples at
 *   1 + j/128 (j = 1..256) all 3 W: idle 0.5 W, load 3 W;
 *   saturated E/op: total 3 x 1/128 = 0.0234375 J, above idle
 *   2.5 x 1/128 = 0.01953125 J. */
#include "ergon/clock.h"
#include "ergon/report.h"
#include "sim_clock.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* With a --temp-file: 45.0 C until simulated time 3 s, 55.0 C from then
 * on (rewritten when the clock crosses 3 s; nothing else runs). */
static struct ts_sim_clock sim;
static const char *sim_temp_path;
static int sim_temp_rises; /* 0: the file stays at 45.0 C */

static void sim_advanced(void *ctx, double before_s)
{
	(void)ctx;
	if (sim_temp_path && sim_temp_rises && before_s < 3.0 && sim.t_s >= 3.0)
		assert_int_equal(ts_write_file(sim_temp_path, "55000\n", 6), 0);
}

/* ergon_run on the synthetic instrument with options ikv, in simulated
 * time from 0; inline sampler at 128 Hz, settle 0, idle 1 s, windows of
 * 1 s; the report is written to dir/work.json and verified by the CLI. */
static double sim_window_s = 1.0, sim_release_hz = 0;

static json_t *run_sim(const char *const *ikv, size_t windows, const char *temp_file,
		       const char *out)
{
	sim_temp_path = temp_file;
	if (temp_file)
		assert_int_equal(ts_write_file(temp_file, "45000\n", 6), 0);
	const char *wkv[] = {NULL};
	struct ergon_run_config cfg = {
	    .device = "dut",
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload_spec = "builtin:spin,iters=1",
	    .workload_opts = {.kv = wkv},
	    .session = {.idle_s = 1.0,
			.windows = windows,
			.window_s = sim_window_s,
			.release_hz = sim_release_hz,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = 128,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .temp_file = temp_file,
	    .out_path = out,
	};
	sim = (struct ts_sim_clock){.on_advance = sim_advanced};
	ts_sim_clock_install(&sim);
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_run(&cfg, NULL, &rep, &err);
	ts_sim_clock_remove();
	if (rc)
		fail_msg("ergon_run: %s", err.msg);
	/* The pipeline wrote it, and the CLI recomputes it. */
	char *verr = NULL;
	rc = ts_run_ergon(NULL, &verr, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, verr);
	free(verr);
	return rep;
}

static void work_s_exact(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/work.json", dir);
	const char *ikv[] = {"work_s=0.0078125", "idle_w=0.5", "load_w=3",
			     "noise_w=0",	 "drop=0",     NULL};
	json_t *rep = run_sim(ikv, 2, NULL, out);
	TS_ASSERT_EXACT(sim.t_s, 3.0);
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *lat = json_object_get(fig, "latency");
	assert_int_equal((long)ts_json_num(lat, "count", NULL), 256);
	static const char *const keys[] = {"min_s", "mean_s", "max_s", "p50_s",
					   "p90_s", "p95_s",  "p99_s"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		TS_ASSERT_EXACT(ts_json_num(lat, keys[k], NULL), 1.0 / 128);
	assert_int_equal((long)ts_json_num(fig, "operations", "count"), 256);
	assert_int_equal((long)ts_json_num(fig, "operations", "failed"), 0);
	const json_t *tp = json_object_get(fig, "throughput");
	const json_t *tw = json_object_get(tp, "windows");
	assert_int_equal(json_array_size(tw), 2);
	assert_int_equal((long)ts_json_num(json_array_get(tw, 0), "operations", NULL), 127);
	assert_int_equal((long)ts_json_num(json_array_get(tw, 1), "operations", NULL), 129);
	TS_ASSERT_EXACT(ts_json_num(tp, "first_ops_per_s", NULL), 127.0);
	TS_ASSERT_EXACT(ts_json_num(tp, "tail_ops_per_s", NULL), 128.0);
	TS_ASSERT_EXACT(ts_json_num(tp, "change_pct", NULL), 100.0 / 127);
	assert_true(json_is_false(json_object_get(tp, "throttled")));
	/* Window 1 opened at exactly its planned start (2 s), not past its
	 * planned end: no window was spanned. */
	char *issues = json_dumps(json_object_get(rep, "issues"), 0);
	assert_null(strstr(issues, "window_spanned"));
	free(issues);
	TS_ASSERT_EXACT(ts_json_num(fig, "idle", "mean_power_w"), 0.5);
	TS_ASSERT_EXACT(ts_json_num(fig, "load", "mean_power_w"), 3.0);
	const json_t *eop = json_object_get(fig, "energy_per_op");
	assert_string_equal(json_string_value(json_object_get(eop, "formula")), "saturated");
	TS_ASSERT_EXACT(ts_json_num(eop, "total_j", NULL), 0.0234375);
	TS_ASSERT_EXACT(ts_json_num(eop, "above_idle_j", NULL), 0.01953125);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* The README demo's mechanism (an emulated throttle after throttle_s of
 * load) in simulated time, dyadic: work_s = 1/128 s, throttle_s = 2 s,
 * drop = 0.5, 4 windows of 1 s from t = 1 s. Invocation k starts at
 * a_k; it is stretched to 2 x 1/128 once a_k + 1/128 - 1 >= 2, i.e. from
 * k = 255 (a = 1 + 255/128) on. So k = 0..254 end at 1 + (k + 1)/128,
 * k = 255 ends at 3 + 1/128, and k >= 256 end at 3 + (2k - 509)/128.
 * A window ends where the invocation that reaches its planned end ends
 * (session.c: the recorded edge is that invocation's end): edges at 1, 2
 * (k = 127 ends exactly there), 3 + 1/128 (k = 255), 4 + 1/128 (k = 319)
 * and 5 + 1/128 s (k = 383, the last). Counted by end in [lo, hi) (the
 * last window also holds its end edge):
 *   window 0 [1, 2):                 k = 0..126    127 ops in 1 s
 *   window 1 [2, 3 + 1/128):         k = 127..254  128 ops in 129/128 s
 *   window 2 [3 + 1/128, 4 + 1/128): k = 255..318   64 ops in 1 s
 *   window 3 [4 + 1/128, 5 + 1/128]: k = 319..383   65 ops in 1 s
 * The rule (15 %, 2 consecutive windows below 0.85 x 127 ops/s):
 * throttled from window 2, 2 + 1/128 s after the load started; first
 * 127 ops/s, tail (mean of the last two) 64.5, change
 * 100 x (64.5 - 127) / 127 %. 384 invocations: 255 of 1/128 s and 129 of
 * 1/64 s, so p50 (the 192nd) is 1/128 s and p90 1/64 s.
 * --temp-file reads 45.0 C until 3 s and 55.0 C after: every sample of
 * window 0 reads 45.0, every one of window 3 reads 55.0, 10 C above the
 * first with throughput down: the temperature is the evidence
 * ({45.0, 55.0}). A file that stays at 45.0 C is not evidence, and the
 * verdict says it did not rise. */
static void throttle_case(int rises)
{
	sim_temp_rises = rises;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/throttle.json", dir);
	const char *ikv[] = {"work_s=0.0078125", "throttle_s=2", "drop=0.5", "noise_w=0", NULL};
	char *temp = ts_strf("%s/temp", dir);
	json_t *rep = run_sim(ikv, 4, temp, out);
	free(temp);
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *tp = json_object_get(fig, "throughput");
	const json_t *tw = json_object_get(tp, "windows");
	assert_int_equal(json_array_size(tw), 4);
	static const long want_ops[4] = {127, 128, 64, 65};
	static const double want_dur[4] = {1.0, 129.0 / 128, 1.0, 1.0};
	for (size_t w = 0; w < 4; w++) {
		const json_t *x = json_array_get(tw, w);
		if ((long)ts_json_num(x, "operations", NULL) != want_ops[w])
			fail_msg("window %zu: %ld operations, by hand %ld", w,
				 (long)ts_json_num(x, "operations", NULL), want_ops[w]);
		TS_ASSERT_EXACT(ts_json_num(x, "duration_s", NULL), want_dur[w]);
		TS_ASSERT_EXACT(ts_json_num(x, "ops_per_s", NULL),
				(double)want_ops[w] / want_dur[w]);
	}
	assert_true(json_is_true(json_object_get(tp, "throttled")));
	assert_int_equal((long)ts_json_num(tp, "onset_window", NULL), 2);
	TS_ASSERT_EXACT(ts_json_num(tp, "onset_t_s", NULL), 2.0 + 1.0 / 128);
	TS_ASSERT_EXACT(ts_json_num(tp, "first_ops_per_s", NULL), 127.0);
	TS_ASSERT_EXACT(ts_json_num(tp, "tail_ops_per_s", NULL), 64.5);
	TS_ASSERT_EXACT(ts_json_num(tp, "change_pct", NULL), 100.0 * (64.5 - 127) / 127);
	const json_t *ev = json_object_get(tp, "temperature_evidence");
	const char *verdict = json_string_value(json_object_get(tp, "verdict"));
	assert_non_null(verdict);
	if (rises) {
		assert_true(json_is_object(ev));
		TS_ASSERT_EXACT(ts_json_num(ev, "first_window_c", NULL), 45.0);
		TS_ASSERT_EXACT(ts_json_num(ev, "last_window_c", NULL), 55.0);
		assert_non_null(
		    strstr(verdict, "rose by more than 3 C: evidence of a thermal limit"));
	} else {
		/* A flat file beside a throttled run is not evidence. */
		assert_true(json_is_null(ev));
		assert_non_null(
		    strstr(verdict,
			   "45.0 -> 45.0 C (first -> last window) did not rise by more than 3 C"));
	}
	const json_t *lat = json_object_get(fig, "latency");
	assert_int_equal((long)ts_json_num(lat, "count", NULL), 384);
	TS_ASSERT_EXACT(ts_json_num(lat, "p50_s", NULL), 1.0 / 128);
	TS_ASSERT_EXACT(ts_json_num(lat, "p90_s", NULL), 1.0 / 64);
	TS_ASSERT_EXACT(ts_json_num(lat, "mean_s", NULL), (255.0 / 128 + 129.0 / 64) / 384);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void throttle_exact(void **state)
{
	(void)state;
	throttle_case(1);
}

static void throttle_flat_temperature(void **state)
{
	(void)state;
	throttle_case(0);
}

/* Issue 30, case 1: an invocation longer than a window (7/8 s against
 * windows of 3/8 s; idle 1 s, 3 windows). Invocation 0 runs from 1 to
 * 1 + 7/8 s, past the nominal edges of windows 0 (1 + 3/8) and 1
 * (1 + 6/8): window 0 ends with it (the first invocation that ends at or
 * after its nominal edge), and window 1, which opens past its own nominal
 * edge, ends with the next invocation that ends (docs/METHOD.md): edges
 * 1, 1 + 7/8, 1 + 14/8, 1 + 21/8, every window 7/8 s. Counted by end in
 * [lo, hi) (the last window holds its end edge): invocation 0 ends on
 * edge 1 (window 1), invocation 1 on edge 2 (window 2), invocation 2 on
 * the last edge (window 2): 0, 1 and 2 operations. Before the fix window
 * 1's edge repeated window 0's and the report was refused ("edges ... do
 * not increase"). Periodic (--release-hz 4): every release overruns, the
 * schedule catches up to "now", and the same edges follow. */
static void spanned_edge_case(double release_hz)
{
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/slow.json", dir);
	const char *ikv[] = {"work_s=0.875", "idle_w=0.5", "load_w=3", "noise_w=0", "drop=0", NULL};
	sim_window_s = 0.375;
	sim_release_hz = release_hz;
	json_t *rep = run_sim(ikv, 3, NULL, out);
	sim_window_s = 1.0;
	sim_release_hz = 0;
	TS_ASSERT_EXACT(sim.t_s, 1.0 + 21.0 / 8);
	const json_t *edges = json_object_get(json_object_get(rep, "series"), "window_edges_s");
	assert_int_equal(json_array_size(edges), 4);
	for (size_t i = 0; i < 4; i++)
		TS_ASSERT_EXACT(json_number_value(json_array_get(edges, i)),
				1.0 + 7.0 * (double)i / 8);
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *tw = json_object_get(json_object_get(fig, "throughput"), "windows");
	assert_int_equal(json_array_size(tw), 3);
	static const long want_ops[3] = {0, 1, 2};
	for (size_t w = 0; w < 3; w++) {
		const json_t *x = json_array_get(tw, w);
		assert_int_equal((long)ts_json_num(x, "operations", NULL), want_ops[w]);
		TS_ASSERT_EXACT(ts_json_num(x, "duration_s", NULL), 7.0 / 8);
	}
	assert_int_equal((long)ts_json_num(fig, "operations", "count"), 3);
	assert_string_equal(json_string_value(json_object_get(rep, "status")), "complete");
	/* Windows 1 and 2 opened at 1 + 7/8 and 1 + 14/8 s, past their
	 * planned ends 1 + 6/8 and 1 + 9/8 s: said, once. */
	const json_t *is = NULL, *x;
	size_t i;
	json_array_foreach(json_object_get(rep, "issues"), i,
			   x) if (strcmp(json_string_value(json_object_get(x, "code")),
					 "run.window_spanned") == 0) is = x;
	assert_non_null(is);
	assert_int_equal((long)ts_json_num(is, "context", "windows"), 2);
	assert_int_equal((long)ts_json_num(is, "context", "first_window"), 1);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void spanned_edge_saturated(void **state)
{
	(void)state;
	spanned_edge_case(0);
}

static void spanned_edge_periodic(void **state)
{
	(void)state;
	spanned_edge_case(4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(spanned_edge_saturated),
	    cmocka_unit_test(spanned_edge_periodic),
	    cmocka_unit_test(work_s_exact),
	    cmocka_unit_test(throttle_exact),
	    cmocka_unit_test(throttle_flat_temperature),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

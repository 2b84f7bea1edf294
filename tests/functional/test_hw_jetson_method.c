/* The Jetson method end to end through the CLI: `ergon run --instrument
 * hwmon:VDD_IN` on a fake Orin NX tree whose VDD_IN a writer thread
 * rewrites in place: 5 W (5.000 V x 1.000 A) while ergon measures idle.
 *
 * Saturated: 10 W (5.000 V x 2.000 A) from the moment ergon says the load
 * phase runs; E/op = load mean power x mean latency, the load mean power
 * worked out from the scripted switch time.
 *
 * Periodic (--release-hz 33): from the moment the load phase runs, a
 * toggler thread follows its own duty cycle, independent of ergon: 10 W
 * for 10 ms at every 1/33 s, 5 W between. The periodic formula (mean power
 * / release rate, idle gaps folded in) must then give, from the script and
 * --release-hz alone,
 *   above idle: (10 - 5) W x 10 ms x 33 Hz / 33 Hz = 50 mJ per operation,
 *   total:      (5 W + 5 W x 10 ms x 33 Hz) / 33 Hz = 6.65 / 33 = 201.5 mJ.
 * The test checks that, and, more tightly, the same figures from the edge
 * times the toggler actually wrote (so its scheduling jitter is not
 * charged to ergon). A formula that did not fold the idle gaps in (mean
 * active power x latency, ~66 mJ total) is far outside either band.
 *
 * This test needs wall-clock time (ergon's sampler and the toggler are real
 * threads on CLOCK_MONOTONIC; there is no clock to inject through the CLI),
 * so it is in the ctest label "walltime" (ERGON_WALLTIME_TESTS in
 * cmake/ErgonTests.cmake), which scripts/test.sh runs once, without retry,
 * and reports on its own. Its bands are jitter allowances, not proof. */
#include "fake_sysfs.h"
#include "test_support.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run_out {
	json_t *rep;
	int status;
};

/* The periodic script: 33 Hz, 10 ms at 10 W. */
#define DUTY_HZ 33.0
#define DUTY_HIGH_S 0.010
#define MAX_EDGES 1024

struct toggler {
	struct fs_writer *w;
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	/* CLOCK_MONOTONIC seconds at which each level was written. */
	double rise_s[MAX_EDGES], fall_s[MAX_EDGES];
	int n_rise, n_fall;
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t_s)
{
	struct timespec ts = {.tv_sec = (time_t)t_s};
	ts.tv_nsec = (long)((t_s - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

static int toggler_stopped(struct toggler *tg)
{
	pthread_mutex_lock(&tg->mu);
	int s = tg->stop;
	pthread_mutex_unlock(&tg->mu);
	return s;
}

/* Absolute deadlines: edge k rises at start + k / 33 and falls 10 ms
 * later, so a late wake-up never accumulates into the next period. The
 * current changes in one digit (1000 <-> 2000 mA), safe against a reader. */
static void *toggler_main(void *arg)
{
	struct toggler *tg = arg;
	double start = mono_s();
	for (int k = 0; k < MAX_EDGES && !toggler_stopped(tg); k++) {
		sleep_until(start + k / DUTY_HZ);
		fs_writer_rail(tg->w, "hwmon0", 1, 5000, 2000);
		tg->rise_s[tg->n_rise++] = mono_s();
		sleep_until(start + k / DUTY_HZ + DUTY_HIGH_S);
		fs_writer_rail(tg->w, "hwmon0", 1, 5000, 1000);
		tg->fall_s[tg->n_fall++] = mono_s();
	}
	return NULL;
}

/* Run ergon with argv, its stderr on a pseudo-terminal (ergon prints its
 * phase progress only to a terminal); switch VDD_IN to the load level when
 * that progress first says "load". */
static struct run_out run_switching(struct fs_writer *w, struct toggler *tg,
				    const char *const *argv, const char *out_path)
{
	struct run_out r = {NULL, -1};
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	char slave_name[128];
	assert_int_equal(ptsname_r(master, slave_name, sizeof(slave_name)), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int slave = open(slave_name, O_RDWR | O_NOCTTY);
		if (slave < 0)
			_exit(126);
		dup2(slave, 2);
		close(slave);
		close(master);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		execv(getenv("ERGON_BIN"), (char *const *)argv);
		_exit(127);
	}
	int errp[2] = {master, -1};
	char buf[4096], tail[16] = "", last[600] = "";
	int switched = 0;
	ssize_t n;
	/* The master reads EIO once the child has exited and closed the slave. */
	while ((n = read(errp[0], buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		/* Catch "load" also when split across two reads. */
		char joined[4096 + 16];
		snprintf(joined, sizeof(joined), "%s%s", tail, buf);
		if (!switched && strstr(joined, "load")) {
			if (tg)
				assert_int_equal(
				    pthread_create(&tg->thread, NULL, toggler_main, tg), 0);
			else
				fs_writer_rail(w, "hwmon0", 1, 5000, 2000);
			switched = 1;
		}
		/* Keep the end of ergon's stderr for a failure message. */
		char both[sizeof(last) + sizeof(buf)];
		snprintf(both, sizeof(both), "%s%s", last, buf);
		size_t bl = strlen(both);
		snprintf(last, sizeof(last), "%s",
			 both + (bl > sizeof(last) - 1 ? bl - (sizeof(last) - 1) : 0));
		size_t jl = strlen(joined);
		snprintf(tail, sizeof(tail), "%s", joined + (jl > 8 ? jl - 8 : 0));
	}
	close(errp[0]);
	waitpid(pid, &r.status, 0);
	assert_true(switched);
	if (tg) {
		pthread_mutex_lock(&tg->mu);
		tg->stop = 1;
		pthread_mutex_unlock(&tg->mu);
		pthread_join(tg->thread, NULL);
	}
	json_error_t je;
	r.rep = json_load_file(out_path, 0, &je);
	if (r.rep == NULL)
		fail_msg("%s: %s (ergon status %d); its stderr ended: %s", out_path, je.text,
			 r.status, last);
	return r;
}

/* |got - want| <= tol, in doubles (cmocka's float check narrows to float). */
#define assert_near(got, want, tol)                                                     \
	do {                                                                            \
		double g_ = (got), w_ = (want), t_ = (tol);                             \
		if (!(fabs(g_ - w_) <= t_))                                             \
			fail_msg("%s = %.9g, expected %.9g +- %.3g", #got, g_, w_, t_); \
	} while (0)

static double num(const json_t *o, const char *a, const char *b)
{
	const json_t *x = json_object_get(o, a);
	if (b)
		x = json_object_get(x, b);
	if (!json_is_number(x))
		fail_msg("missing number %s.%s", a, b ? b : "");
	return json_number_value(x);
}

/* The load mean power expected from the scripted profile, and checks that
 * the series only ever held the two scripted levels. */
static double expected_load_mean_w(const json_t *rep)
{
	const json_t *series = json_object_get(rep, "series");
	const json_t *ph = json_object_get(series, "phases");
	double i0 = num(json_object_get(ph, "idle"), "t_start_s", NULL);
	double i1 = num(json_object_get(ph, "idle"), "t_end_s", NULL);
	double t0 = num(json_object_get(ph, "load"), "t_start_s", NULL);
	double t1 = num(json_object_get(ph, "load"), "t_end_s", NULL);
	const json_t *ts = json_object_get(json_object_get(series, "samples"), "t_s");
	const json_t *ps = json_object_get(json_object_get(series, "samples"), "power_w");
	size_t n = json_array_size(ts);
	assert_true(n > 100);
	double t_prev = -1, t_sw = -1;
	for (size_t i = 0; i < n; i++) {
		double t = json_number_value(json_array_get(ts, i));
		double p = json_number_value(json_array_get(ps, i));
		if (p != 5.0 && p != 10.0)
			fail_msg("sample %zu at %.6f s: %.9f W is not a scripted level", i, t, p);
		if (t >= i0 && t <= i1 && p != 5.0)
			fail_msg("idle sample at %.6f s is %.3f W, not 5 W", t, p);
		if (p == 5.0 && t_sw < 0)
			t_prev = t;
		if (p == 10.0 && t_sw < 0)
			t_sw = t;
	}
	assert_true(t_sw > t0 && t_sw < t1);
	double sw = t_prev > t0 ? 0.5 * (t_prev + t_sw) : t0;
	return (5.0 * (sw - t0) + 10.0 * (t1 - sw)) / (t1 - t0);
}

/* Load energy from the toggler's recorded edges: 5 W throughout plus 5 W
 * while high, over [t0, t1] of the report's time. The toggler's clock is
 * mapped onto the report's by its first rise, which the report sees as its
 * first 10 W sample (within one sampler period). Returns the mean power. */
static double scripted_load_mean_w(const json_t *rep, const struct toggler *tg)
{
	const json_t *series = json_object_get(rep, "series");
	const json_t *ph = json_object_get(series, "phases");
	double t0 = num(json_object_get(ph, "load"), "t_start_s", NULL);
	double t1 = num(json_object_get(ph, "load"), "t_end_s", NULL);
	const json_t *ts = json_object_get(json_object_get(series, "samples"), "t_s");
	const json_t *ps = json_object_get(json_object_get(series, "samples"), "power_w");
	double t_first_high = -1;
	for (size_t i = 0; i < json_array_size(ts) && t_first_high < 0; i++)
		if (json_number_value(json_array_get(ps, i)) == 10.0)
			t_first_high = json_number_value(json_array_get(ts, i));
	assert_true(t_first_high > t0 && tg->n_rise > 0);
	double off = t_first_high - tg->rise_s[0];
	double high = 0;
	for (int k = 0; k < tg->n_rise; k++) {
		double a = tg->rise_s[k] + off;
		double b = k < tg->n_fall ? tg->fall_s[k] + off : t1;
		a = a < t0 ? t0 : a;
		b = b > t1 ? t1 : b;
		if (b > a)
			high += b - a;
	}
	return (5.0 * (t1 - t0) + 5.0 * high) / (t1 - t0);
}

static void check_identity(const json_t *rep)
{
	const json_t *inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "driver")), "hwmon");
	assert_string_equal(json_string_value(json_object_get(inst, "model")), "ina3221");
	assert_string_equal(json_string_value(json_object_get(inst, "total_rail")), "VDD_IN");
	assert_string_equal(json_string_value(json_object_get(inst, "provenance")), "measured");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(rep, "provenance"), "kind")),
	    "measured");
	const json_t *r0 =
	    json_array_get(json_object_get(json_object_get(rep, "instrument_stats"), "rails"), 0);
	assert_string_equal(json_string_value(json_object_get(r0, "rail")), "VDD_IN");
	json_int_t reads = json_integer_value(json_object_get(r0, "reads"));
	json_int_t distinct = json_integer_value(json_object_get(r0, "distinct_updates"));
	assert_true(reads > 100 && distinct >= 2 && distinct <= reads);
}

static void run_case(int periodic)
{
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct fs_writer *w = fs_writer_start(root, 0.001);
	assert_non_null(w);
	fs_writer_rail(w, "hwmon0", 1, 5000, 1000);
	while (fs_writer_ticks(w) < 2)
		usleep(1000);
	char *out = ts_strf("%s/report.json", root);
	const char *argv[40];
	int a = 0;
	argv[a++] = "ergon";
	argv[a++] = "run";
	argv[a++] = "--device";
	argv[a++] = "orin-nx-fake";
	argv[a++] = "--instrument";
	argv[a++] = "hwmon:VDD_IN";
	argv[a++] = "--sysfs-root";
	argv[a++] = root;
	/* The fake tree stands in for a board's live one: a root other than
	 * / is synthetic unless the user says measured (issue 17 item 8). */
	argv[a++] = "--provenance";
	argv[a++] = "measured";
	argv[a++] = "--workload";
	argv[a++] = "builtin:periodic";
	argv[a++] = "--workload-opt";
	argv[a++] = "burst_ms=10";
	argv[a++] = "--workload-opt";
	argv[a++] = "sleep_ms=0";
	if (periodic) {
		argv[a++] = "--release-hz";
		argv[a++] = "33";
	}
	argv[a++] = "--settle-s";
	argv[a++] = "0";
	argv[a++] = "--idle-s";
	argv[a++] = "1";
	argv[a++] = "--windows";
	argv[a++] = "3";
	argv[a++] = "--window-s";
	argv[a++] = "1";
	argv[a++] = "--out";
	argv[a++] = out;
	argv[a] = NULL;
	static struct toggler tg;
	memset(&tg, 0, sizeof(tg));
	tg.w = w;
	pthread_mutex_init(&tg.mu, NULL);
	struct run_out r = run_switching(w, periodic ? &tg : NULL, argv, out);
	fs_writer_stop(w);
	pthread_mutex_destroy(&tg.mu);
	check_identity(r.rep);
	const json_t *fig = json_object_get(r.rep, "figures");
	assert_near(num(fig, "idle", "mean_power_w"), 5.0, 1e-9);
	const json_t *eop = json_object_get(fig, "energy_per_op");
	assert_true(json_is_object(eop));
	const json_t *inv = json_object_get(json_object_get(r.rep, "series"), "invocations");
	const json_t *starts = json_object_get(inv, "t_start_s");
	const json_t *lat = json_object_get(inv, "latency_s");
	size_t n_inv = json_array_size(starts);
	assert_true(n_inv > 10);
	double lat_sum = 0;
	for (size_t i = 0; i < n_inv; i++)
		lat_sum += json_number_value(json_array_get(lat, i));
	if (periodic) {
		assert_string_equal(json_string_value(json_object_get(eop, "formula")), "periodic");
		/* Per operation means per achieved release: the operations can
		 * never exceed what --release-hz 33 over the load phase allows
		 * (33 x D, +1.5 for where the phase edges fall); on a loaded
		 * machine releases are lost (seen: 81 in 3.5 s with ASan and
		 * four tests on two cores), so the lower bound is only a
		 * sanity check. */
		const json_t *ph = json_object_get(json_object_get(r.rep, "series"), "phases");
		double d = num(json_object_get(ph, "load"), "t_end_s", NULL) -
			   num(json_object_get(ph, "load"), "t_start_s", NULL);
		if (!((double)n_inv <= 33.0 * d + 1.5 && (double)n_inv >= 0.5 * 33.0 * d))
			fail_msg("%zu operations in %.3f s at 33 Hz", n_inv, d);
		/* From the script alone: 201.5 mJ total, 50 mJ above idle per
		 * 1/33 s release, scaled by 33 D / n when releases were lost
		 * (the load energy is shared among the operations that ran).
		 * The band allows the toggler's wake-up jitter on shared
		 * cores under ASan (each 10 ms high can stretch or shrink by a
		 * few ms; seen: +11 % above idle at load average 5) and the
		 * late start of the script (it begins when ergon prints
		 * "load"): 15 % above idle, 5 % total. A formula that did not
		 * fold the idle gaps in gives 16.5 mJ above idle and 66.5 mJ
		 * total ((6.65 - 5) W and 6.65 W x 10 ms), far outside both. */
		double lost = 33.0 * d / (double)n_inv;
		double total_script = (5.0 + 5.0 * DUTY_HIGH_S * DUTY_HZ) / 33.0 * lost;
		double above_script = 5.0 * DUTY_HIGH_S * DUTY_HZ / 33.0 * lost;
		assert_near(num(eop, "above_idle_j", NULL), above_script, 0.15 * above_script);
		assert_near(num(eop, "total_j", NULL), total_script, 0.05 * total_script);
		/* From the edges the toggler actually wrote (its jitter is then
		 * not charged to ergon): what is left is the sampling of each
		 * edge (5 W x half a sampler gap, random in sign over ~200
		 * edges) and the clock mapping at the first edge (one sampler
		 * gap, up to ~8 ms on a loaded VM: 40 mJ of ~5 J above idle,
		 * 0.8 %): 3 % above idle, 1 % total and mean power. */
		double load_w = scripted_load_mean_w(r.rep, &tg);
		assert_near(num(fig, "load", "mean_power_w"), load_w, 0.01 * load_w);
		double rate = (double)n_inv / d;
		assert_near(num(eop, "total_j", NULL), load_w / rate, 0.01 * load_w / rate);
		assert_near(num(eop, "above_idle_j", NULL), (load_w - 5.0) / rate,
			    0.03 * (load_w - 5.0) / rate);
	} else {
		double load_w = expected_load_mean_w(r.rep);
		assert_near(num(fig, "load", "mean_power_w"), load_w, 0.005 * load_w);
		assert_string_equal(json_string_value(json_object_get(eop, "formula")),
				    "saturated");
		double mean_lat = lat_sum / (double)n_inv;
		assert_near(num(eop, "total_j", NULL), load_w * mean_lat, 0.02 * load_w * mean_lat);
		assert_near(num(eop, "above_idle_j", NULL), (load_w - 5.0) * mean_lat,
			    0.03 * load_w * mean_lat);
	}
	json_decref(r.rep);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

static void periodic_33hz(void **state)
{
	(void)state;
	run_case(1);
}

static void saturated(void **state)
{
	(void)state;
	run_case(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(periodic_33hz),
	    cmocka_unit_test(saturated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Several rails at once through the CLI: `ergon run --instrument
 * hwmon:RAIL,RAIL,RAIL` on fake Jetson trees whose rails a writer thread
 * rewrites in place, each rail with its own idle and load level. The
 * expected figures are worked out here from that scripted profile, rail by
 * rail (the same way as test_hw_jetson_method.c does for one rail):
 *   idle mean power = the rail's idle level exactly;
 *   load mean power = (P_idle (t_sw - t0) + P_load (t1 - t_sw)) / (t1 - t0),
 *     t_sw the rail's switch time seen in its own series;
 *   periodic: E/op total = load mean / rate, above idle = (load mean - idle)
 *     / rate, rate = operations / load duration;
 *   saturated: E/op total = load mean x mean latency, above idle =
 *     (load mean - idle) x mean latency.
 * Orin NX (VDD_IN is the total input): VDD_IN is the headline and no figure
 * anywhere equals a sum of rails. AGX Orin (no total input rail): the
 * headline is withheld with run.no_total_rail, every rail keeps its own
 * figures, and energy-model refuses. */
#include "fake_sysfs.h"
#include "test_support.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct board {
	int (*make)(const char *root, int idx);
	const char *spec;
	const char *labels[3];
	long mv[3], idle_ma[3], load_ma[3];
	int total; /* index of the total input rail, -1 none */
};

/* Levels in W: idle mv x ma / 1e6, load likewise. Changes are one digit of
 * the current file, so a read racing a rewrite never sees a torn value. */
static const struct board orin_nx = {fs_orin_nx,
				     "hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC",
				     {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"},
				     {5000, 5000, 5000},
				     {1000, 300, 250}, /* 5 W, 1.5 W, 1.25 W */
				     {2000, 900, 450}, /* 10 W, 4.5 W, 2.25 W */
				     0};
static const struct board agx_orin = {fs_agx_orin,
				      "hwmon:VDD_GPU_SOC,VDD_CPU_CV,VIN_SYS_5V0",
				      {"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"},
				      {19000, 19000, 5000},
				      {800, 400, 600},	/* 15.2 W, 7.6 W, 3 W */
				      {1800, 900, 700}, /* 34.2 W, 17.1 W, 3.5 W */
				      -1};

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

/* The exit code run_switching expects of `ergon run` (4 where the headline
 * is withheld). */
static int run_board_exit;

/* Run ergon with stderr on a pseudo-terminal (ergon prints its phase
 * progress only to a terminal) and stdout into stdout_path; switch every
 * rail to its load level when the progress first says "load". */
static json_t *run_switching(struct fs_writer *w, const struct board *b, const char *const *argv,
			     const char *out_path, const char *stdout_path)
{
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
		int so = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (so >= 0)
			dup2(so, 1);
		execv(getenv("ERGON_BIN"), (char *const *)argv);
		_exit(127);
	}
	char buf[4096], tail[16] = "";
	int switched = 0;
	ssize_t n;
	while ((n = read(master, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		char joined[4096 + 16];
		snprintf(joined, sizeof(joined), "%s%s", tail, buf);
		if (!switched && strstr(joined, "load")) {
			for (int c = 0; c < 3; c++)
				fs_writer_rail(w, "hwmon0", c + 1, b->mv[c], b->load_ma[c]);
			switched = 1;
		}
		size_t jl = strlen(joined);
		snprintf(tail, sizeof(tail), "%s", joined + (jl > 8 ? jl - 8 : 0));
	}
	close(master);
	int status = -1;
	waitpid(pid, &status, 0);
	assert_true(switched);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != run_board_exit)
		fail_msg("ergon run exited with status %d, not exit %d", status, run_board_exit);
	json_error_t je;
	json_t *rep = json_load_file(out_path, 0, &je);
	if (rep == NULL)
		fail_msg("%s: %s", out_path, je.text);
	return rep;
}

/* The load mean power of rail c expected from the script, after checking
 * that its own series held only its two scripted levels. */
static double expected_load_w(const json_t *rep, int c, double idle_w, double load_w)
{
	const json_t *series = json_object_get(rep, "series");
	const json_t *ph = json_object_get(series, "phases");
	double i0 = num(json_object_get(ph, "idle"), "t_start_s", NULL);
	double i1 = num(json_object_get(ph, "idle"), "t_end_s", NULL);
	double t0 = num(json_object_get(ph, "load"), "t_start_s", NULL);
	double t1 = num(json_object_get(ph, "load"), "t_end_s", NULL);
	const json_t *smp =
	    json_object_get(json_array_get(json_object_get(series, "rails"), (size_t)c), "samples");
	const json_t *ts = json_object_get(smp, "t_s");
	const json_t *ps = json_object_get(smp, "power_w");
	size_t n = json_array_size(ts);
	assert_true(n > 100);
	double t_prev = -1, t_sw = -1;
	for (size_t i = 0; i < n; i++) {
		double t = json_number_value(json_array_get(ts, i));
		double p = json_number_value(json_array_get(ps, i));
		if (fabs(p - idle_w) > 1e-9 && fabs(p - load_w) > 1e-9)
			fail_msg("rail %d sample %zu at %.6f s: %.9f W is not a scripted level", c,
				 i, t, p);
		if (t >= i0 && t <= i1 && fabs(p - idle_w) > 1e-9)
			fail_msg("rail %d idle sample at %.6f s is %.3f W", c, t, p);
		if (fabs(p - idle_w) <= 1e-9 && t_sw < 0)
			t_prev = t;
		if (fabs(p - load_w) <= 1e-9 && t_sw < 0)
			t_sw = t;
	}
	assert_true(t_sw > t0 && t_sw < t1);
	double sw = t_prev > t0 ? 0.5 * (t_prev + t_sw) : t0;
	return (idle_w * (sw - t0) + load_w * (t1 - sw)) / (t1 - t0);
}

/* Fail if any number under v is within 1e-6 relative of want. */
static void assert_absent(const json_t *v, double want, const char *what)
{
	if (json_is_number(v)) {
		if (fabs(json_number_value(v) - want) <= 1e-6 * fabs(want))
			fail_msg("a figure equals the sum of rails' %s (%.9g)", what, want);
		return;
	}
	const char *k;
	const json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) assert_absent(x, want, what);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) assert_absent(x, want, what);
	}
}

static json_t *run_board(const struct board *b, int periodic, char **root_out, char **out_out,
			 char **stdout_text)
{
	char *root = ts_tmpdir();
	assert_int_equal(b->make(root, 0), 0);
	struct fs_writer *w = fs_writer_start(root, 0.001);
	assert_non_null(w);
	for (int c = 0; c < 3; c++)
		fs_writer_rail(w, "hwmon0", c + 1, b->mv[c], b->idle_ma[c]);
	while (fs_writer_ticks(w) < 2)
		usleep(1000);
	char *out = ts_strf("%s/report.json", root);
	char *so = ts_strf("%s/stdout.txt", root);
	const char *argv[40];
	int a = 0;
	argv[a++] = "ergon";
	argv[a++] = "run";
	argv[a++] = "--device";
	argv[a++] = "jetson-fake";
	argv[a++] = "--instrument";
	argv[a++] = b->spec;
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
	argv[a++] = "2";
	argv[a++] = "--window-s";
	argv[a++] = "1";
	argv[a++] = "--out";
	argv[a++] = out;
	argv[a] = NULL;
	json_t *rep = run_switching(w, b, argv, out, so);
	fs_writer_stop(w);
	size_t len = 0;
	*stdout_text = ts_read_file(so, &len);
	assert_non_null(*stdout_text);
	free(so);
	*root_out = root;
	*out_out = out;
	return rep;
}

/* Every rail's figures against the script; returns the sums of the rails'
 * idle means, load means, above-idle and total E/op for the no-sum check. */
static void check_rails(const json_t *rep, const struct board *b, int periodic, double sums[4])
{
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *rails = json_object_get(fig, "rails");
	assert_int_equal(json_array_size(rails), 3);
	const json_t *ph = json_object_get(json_object_get(rep, "series"), "phases");
	double t0 = num(json_object_get(ph, "load"), "t_start_s", NULL);
	double t1 = num(json_object_get(ph, "load"), "t_end_s", NULL);
	const json_t *inv = json_object_get(json_object_get(rep, "series"), "invocations");
	const json_t *lat = json_object_get(inv, "latency_s");
	size_t n_inv = json_array_size(lat);
	assert_true(n_inv > 10);
	assert_int_equal(json_array_size(json_object_get(inv, "failed_index")), 0);
	double lat_sum = 0;
	for (size_t i = 0; i < n_inv; i++)
		lat_sum += json_number_value(json_array_get(lat, i));
	double rate = (double)n_inv / (t1 - t0), mean_lat = lat_sum / (double)n_inv;
	memset(sums, 0, 4 * sizeof(double));
	for (int c = 0; c < 3; c++) {
		const json_t *r = json_array_get(rails, (size_t)c);
		assert_string_equal(json_string_value(json_object_get(r, "name")), b->labels[c]);
		assert_int_equal(json_is_true(json_object_get(r, "total_input")), c == b->total);
		double idle_w = (double)b->mv[c] * (double)b->idle_ma[c] * 1e-6;
		double level_w = (double)b->mv[c] * (double)b->load_ma[c] * 1e-6;
		double load_w = expected_load_w(rep, c, idle_w, level_w);
		assert_near(num(json_object_get(r, "idle"), "mean_power_w", NULL), idle_w,
			    1e-9 * idle_w);
		assert_near(num(json_object_get(r, "load"), "mean_power_w", NULL), load_w,
			    0.005 * load_w);
		const json_t *eop = json_object_get(r, "energy_per_op");
		assert_true(json_is_object(eop));
		double want_total = periodic ? load_w / rate : load_w * mean_lat;
		double want_above =
		    periodic ? (load_w - idle_w) / rate : (load_w - idle_w) * mean_lat;
		assert_string_equal(json_string_value(json_object_get(eop, "formula")),
				    periodic ? "periodic" : "saturated");
		assert_near(num(eop, "total_j", NULL), want_total, 0.01 * want_total);
		assert_near(num(eop, "above_idle_j", NULL), want_above, 0.01 * want_total);
		sums[0] += num(json_object_get(r, "idle"), "mean_power_w", NULL);
		sums[1] += num(json_object_get(r, "load"), "mean_power_w", NULL);
		sums[2] += num(eop, "above_idle_j", NULL);
		sums[3] += num(eop, "total_j", NULL);
	}
}

static void orin_nx_three_rails(void **state)
{
	(void)state;
	char *root, *out, *so;
	json_t *rep = run_board(&orin_nx, 1, &root, &out, &so);
	double sums[4];
	check_rails(rep, &orin_nx, 1, sums);
	const json_t *fig = json_object_get(rep, "figures");
	/* VDD_IN is the headline: its figures, word for word. */
	assert_string_equal(json_string_value(json_object_get(fig, "headline_rail")), "VDD_IN");
	const json_t *vin = json_array_get(json_object_get(fig, "rails"), 0);
	assert_true(json_equal(json_object_get(fig, "energy_per_op"),
			       json_object_get(vin, "energy_per_op")));
	assert_true(json_equal(json_object_get(fig, "load"), json_object_get(vin, "load")));
	assert_near(num(fig, "idle", "mean_power_w"), 5.0, 1e-9);
	/* No sum of rails anywhere in the figures (7.75 W idle, ...). */
	const char *what[4] = {"idle W", "load W", "above-idle J", "total J"};
	for (int k = 0; k < 4; k++)
		assert_absent(fig, sums[k], what[k]);
	assert_near(sums[0], 7.75, 1e-6); /* the sum the check looked for */
	/* One summary line per rail, the total input named, the headline. */
	assert_non_null(strstr(so, "rail        : VDD_IN read"));
	assert_non_null(strstr(so, "(total input); idle 5.000 W"));
	assert_non_null(strstr(so, "rail        : VDD_CPU_GPU_CV read"));
	assert_non_null(strstr(so, "rail        : VDD_SOC read"));
	assert_non_null(strstr(so, "idle 1.250 W"));
	assert_non_null(strstr(so, "headline    : rail VDD_IN"));
	/* ergon verify recomputes every per-rail figure. */
	char *err = NULL;
	int rc = ts_run_ergon(NULL, &err, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, err);
	free(err);
	/* energy-model exports VDD_IN's figure and names it. */
	char *model = NULL;
	rc = ts_run_ergon(&model, NULL, "energy-model", out, "--action", "inference", NULL);
	assert_int_equal(rc, 0);
	json_error_t je;
	json_t *m = json_loads(model, 0, &je);
	assert_non_null(m);
	assert_near(num(json_object_get(m, "values"), "inference", NULL),
		    num(json_object_get(vin, "energy_per_op"), "above_idle_j", NULL), 0);
	assert_non_null(strstr(json_string_value(json_object_get(m, "source")),
			       "rail VDD_IN (the module's total input)"));
	json_decref(m);
	free(model);
	json_decref(rep);
	free(so);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

static void agx_orin_no_total_rail(void **state)
{
	(void)state;
	char *root, *out, *so;
	/* The headline is withheld: degraded, exit 4 (was 0). */
	run_board_exit = 4;
	json_t *rep = run_board(&agx_orin, 0, &root, &out, &so);
	run_board_exit = 0;
	double sums[4];
	check_rails(rep, &agx_orin, 0, sums);
	const json_t *fig = json_object_get(rep, "figures");
	assert_true(json_is_null(json_object_get(fig, "headline_rail")));
	assert_true(json_is_null(json_object_get(fig, "energy_per_op")));
	assert_null(json_object_get(fig, "idle"));
	assert_null(json_object_get(fig, "load"));
	const char *what[4] = {"idle W", "load W", "above-idle J", "total J"};
	for (int k = 0; k < 4; k++)
		assert_absent(fig, sums[k], what[k]);
	/* The issue says why, naming the rails. */
	const json_t *issues = json_object_get(rep, "issues");
	size_t i;
	const json_t *x;
	int found = 0;
	json_array_foreach(issues, i, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "code")), "run.no_total_rail"))
			continue;
		found = 1;
		assert_non_null(strstr(json_string_value(json_object_get(x, "message")),
				       "VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0"));
	}
	assert_true(found);
	assert_string_equal(json_string_value(json_object_get(rep, "integrity")), "degraded");
	assert_non_null(strstr(so, "headline    : WITHHELD"));
	assert_non_null(strstr(so, "rail        : VIN_SYS_5V0 read"));
	char *err = NULL;
	int rc = ts_run_ergon(NULL, &err, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, err);
	free(err);
	err = NULL;
	rc = ts_run_ergon(NULL, &err, "energy-model", out, "--action", "inference", NULL);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, "none is the module's total input"));
	free(err);
	json_decref(rep);
	free(so);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(orin_nx_three_rails),
	    cmocka_unit_test(agx_orin_no_total_rail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

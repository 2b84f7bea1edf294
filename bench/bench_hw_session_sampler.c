/* The hwmon instrument through the shipped sampler: ergon_session_run's
 * threaded sampler (the one `ergon run` uses) reading three ina3221 rails
 * (VDD_IN, VDD_CPU_GPU_CV, VDD_SOC: six files per sweep) from a fake
 * Orin NX tree on tmpfs, during a pure idle baseline, at 1, 5 and 20 kHz
 * targets. Reported per target: achieved sweep rate (sweeps of rail 0 /
 * idle span) and its share of the target, gap p50/p99/max between sweeps,
 * late and missed readings as the session counts them, and the process CPU
 * time over the session as a share of one core (the measuring thread
 * sleeps through the idle baseline, so it is the sampler's). Baseline in
 * the same run: one sweep of ergon_instrument_read in a tight loop.
 *
 * Usage: bench_hw_session_sampler [SECONDS_PER_RATE (3)]
 * The fake tree goes under $TMPDIR_FAST or /dev/shm (tmpfs). */
#include "ergon/figures.h"
#include "ergon/instrument.h"
#include "ergon/parse.h"
#include "ergon/session.h"
#include "ergon/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_hw_tree.h"

static int nop_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)wl;
	(void)err;
	return 0;
}
static const struct ergon_workload_driver nop = {.name = "nop", .invoke = nop_invoke};

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}


int main(int argc, char **argv)
{
	double secs = 3;
	struct ergon_err err = {0};
	if (argc > 1 && ergon_parse_double(argv[1], "seconds", &secs, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	const char *base = getenv("TMPDIR_FAST") ? getenv("TMPDIR_FAST") : "/dev/shm";
	char root[256];
	snprintf(root, sizeof(root), "%s/ergon-bench-hws-XXXXXX", base);
	if (mkdtemp(root) == NULL || make_tree(root) != 0) {
		fprintf(stderr, "cannot build the fake tree under %s\n", base);
		return 1;
	}
	struct ergon_instrument_options o = {.sysfs_root = root};
	const char *kv[] = {"thermal=off", NULL};
	o.kv = kv;
	struct ergon_instrument *inst = NULL;
	if (ergon_instrument_open("hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC", &o, &inst, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 3;
	}
	/* Baseline: one sweep (three rails, six files) in a tight loop. */
	struct ergon_sample s[8];
	size_t n = 0;
	const int sweeps = 100000;
	double t0 = ergon_now_s();
	for (int i = 0; i < sweeps; i++)
		if (ergon_instrument_read(inst, s, 8, &n, &err) || n != 3) {
			fprintf(stderr, "read: %s\n", err.msg);
			return 3;
		}
	double sweep_us = (ergon_now_s() - t0) / sweeps * 1e6;
	printf("one 3-rail sweep (ergon_instrument_read, tight loop): %.2f us\n", sweep_us);
	printf("session threaded sampler, %.1f s idle baseline, 3 rails:\n", secs);
	printf("  %8s %12s %8s %10s %10s %10s %8s %8s %8s\n", "target", "achieved", "share",
	       "gap p50", "gap p99", "max gap", "late", "missed", "CPU %");
	double rates[] = {1000, 5000, 20000};
	for (int r = 0; r < 3; r++) {
		struct ergon_workload wl = {.driver = &nop};
		struct ergon_session_config cfg = {.idle_s = secs,
						   .windows = 1,
						   .window_s = 0.001,
						   .release_hz = 1,
						   .sampler = ERGON_SAMPLER_THREADED,
						   .sample_hz = rates[r],
						   .failure_policy = ERGON_ON_FAILURE_CONTINUE};
		struct ergon_session_result res;
		double c0 = cpu_s(), w0 = ergon_now_s();
		if (ergon_session_run(&cfg, inst, &wl, &res, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 3;
		}
		double cpu = cpu_s() - c0, wall = ergon_now_s() - w0;
		/* Sweep times: the rail-0 sample of each sweep, idle phase. */
		double *t = malloc((res.n_samples + 1) * sizeof(double));
		double *gaps = malloc((res.n_samples + 1) * sizeof(double));
		size_t m = 0, g = 0;
		for (size_t i = 0; t && i < res.n_samples; i++)
			if (res.sample_channel == NULL || res.sample_channel[i] == 0)
				if (res.sample_t_s[i] >= res.idle_start_s &&
				    res.sample_t_s[i] <= res.idle_end_s)
					t[m++] = res.sample_t_s[i];
		for (size_t i = 1; gaps && i < m; i++)
			gaps[g++] = t[i] - t[i - 1];
		if (t == NULL || gaps == NULL || g == 0) {
			fprintf(stderr, "no sweeps recorded\n");
			return 3;
		}
		qsort(gaps, g, sizeof(double), cmp);
		double span = t[m - 1] - t[0];
		double achieved = (double)(m - 1) / span;
		printf("  %7.0f %9.1f Hz %7.1f%% %7.1f us %7.1f us %7.1f us %8zu %8zu %7.1f%%\n",
		       rates[r], achieved, 100.0 * achieved / rates[r],
		       ergon_percentile_nearest_rank(gaps, g, 50) * 1e6,
		       ergon_percentile_nearest_rank(gaps, g, 99) * 1e6, gaps[g - 1] * 1e6,
		       res.sampler_late, res.sampler_missed, 100.0 * cpu / wall);
		free(t);
		free(gaps);
		ergon_session_result_cleanup(&res);
	}
	ergon_instrument_close(inst);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return 0;
}

/* The threaded sampler on the synthetic instrument at 1, 10 and 50 kHz:
 * achieved rate, gap p50/p99, late/missed, and CPU time used per second of
 * sampling (process CPU time while the measuring thread sleeps in the idle
 * baseline, so it is the sampler's). Baseline in the same run: the cost of
 * one synthetic read in a tight loop.
 *   bench_run_sampler [seconds]
 */
#include "ergon/figures.h"
#include "ergon/instrument.h"
#include "ergon/parse.h"
#include "ergon/session.h"
#include "ergon/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
	if (argc > 1 && ergon_parse_double(argv[1], "seconds", &secs, &err))
		return 2;
	struct ergon_instrument_options io = {0};
	struct ergon_instrument *inst = NULL;
	if (ergon_instrument_open("synthetic", &io, &inst, &err))
		return 3;
	/* Baseline: one read in a tight loop. */
	struct ergon_sample s;
	size_t n;
	double t0 = ergon_now_s();
	for (int i = 0; i < 1000000; i++)
		ergon_instrument_read(inst, &s, 1, &n, &err);
	double read_ns = (ergon_now_s() - t0) * 1e3;
	printf("synthetic read: %.1f ns each (tight loop)\n", read_ns);
	printf("threaded sampler, %.1f s idle baseline:\n", secs);
	printf("  %8s %12s %10s %10s %10s %8s %8s %10s\n", "target", "achieved", "gap p50",
	       "gap p99", "max gap", "late", "missed", "CPU %");
	double rates[] = {1000, 10000, 50000};
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
		double c0 = cpu_s();
		if (ergon_session_run(&cfg, inst, &wl, &res, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 3;
		}
		double cpu = cpu_s() - c0;
		size_t m = 0;
		double *gaps = malloc(res.n_samples * sizeof(double));
		for (size_t i = 1; i < res.n_samples; i++)
			if (res.sample_t_s[i] <= res.idle_end_s)
				gaps[m++] = res.sample_t_s[i] - res.sample_t_s[i - 1];
		qsort(gaps, m, sizeof(double), cmp);
		double span = res.idle_end_s;
		printf("  %7.0f %9.1f Hz %7.1f us %7.1f us %7.1f us %8zu %8zu %9.1f%%\n", rates[r],
		       (double)m / span, ergon_percentile_nearest_rank(gaps, m, 50) * 1e6,
		       ergon_percentile_nearest_rank(gaps, m, 99) * 1e6, gaps[m - 1] * 1e6,
		       res.sampler_late, res.sampler_missed, 100.0 * cpu / (res.load_end_s));
		free(gaps);
		ergon_session_result_cleanup(&res);
	}
	ergon_instrument_close(inst);
	return 0;
}

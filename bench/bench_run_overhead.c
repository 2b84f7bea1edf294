/* Harness overhead per invocation with the no-op plugin workload, inline
 * and threaded sampler, against a bare loop calling the same workload
 * through the same interface (measured in the same run).
 *   bench_run_overhead PATH/libergon_noop_plugin.so [seconds]
 */
#include "ergon/instrument.h"
#include "ergon/parse.h"
#include "ergon/session.h"
#include "ergon/workload.h"

#include <stdio.h>
#include <stdlib.h>

static double session_ns(const char *spec, int sampler, double secs)
{
	struct ergon_err err = {0};
	struct ergon_instrument *inst = NULL;
	struct ergon_workload *wl = NULL;
	struct ergon_instrument_options io = {0};
	struct ergon_workload_options wo = {0};
	if (ergon_instrument_open("synthetic", &io, &inst, &err) ||
	    ergon_workload_open(spec, &wo, &wl, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(3);
	}
	struct ergon_session_config cfg = {.idle_s = 0.05,
					   .windows = 1,
					   .window_s = secs,
					   .sampler = sampler,
					   .sample_hz = 1000,
					   .failure_policy = ERGON_ON_FAILURE_CONTINUE,
					   .max_invocations = 400000000u};
	struct ergon_session_result res;
	if (ergon_session_run(&cfg, inst, wl, &res, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(3);
	}
	double ns = (res.window_edges_s[1] - res.window_edges_s[0]) * 1e9 / (double)res.n_inv;
	printf("  %-8s %12zu invocations  %7.1f ns/invocation  (%zu samples)\n",
	       sampler == ERGON_SAMPLER_INLINE ? "inline" : "threaded", res.n_inv, ns,
	       res.n_samples);
	ergon_session_result_cleanup(&res);
	ergon_workload_close(wl);
	ergon_instrument_close(inst);
	return ns;
}

static double bare_ns(const char *spec, double secs)
{
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	struct ergon_workload_options wo = {0};
	if (ergon_workload_open(spec, &wo, &wl, &err) || ergon_workload_prepare(wl, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(3);
	}
	size_t n = 0;
	double t0 = ergon_now_s(), t = t0;
	while (t - t0 < secs) {
		for (int i = 0; i < 1000; i++)
			ergon_workload_invoke(wl, &err);
		n += 1000;
		t = ergon_now_s();
	}
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
	double ns = (t - t0) * 1e9 / (double)n;
	printf("  %-8s %12zu invocations  %7.1f ns/invocation\n", "bare", n, ns);
	return ns;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH/libergon_noop_plugin.so [seconds]\n", argv[0]);
		return 2;
	}
	double secs = 2;
	struct ergon_err err = {0};
	if (argc > 2 && ergon_parse_double(argv[2], "seconds", &secs, &err))
		return 2;
	char spec[4096];
	snprintf(spec, sizeof(spec), "plugin:%s", argv[1]);
	printf("harness overhead, no-op plugin, saturated, %.1f s window:\n", secs);
	/* The floor: timing an invocation takes two clock reads. */
	double c0 = ergon_now_s();
	volatile double sink = 0;
	for (int i = 0; i < 10000000; i++)
		sink += ergon_now_s();
	(void)sink;
	double clock_ns = (ergon_now_s() - c0) * 1e9 / 1e7;
	printf("  clock_gettime(CLOCK_MONOTONIC): %.1f ns each, 2 per invocation\n", clock_ns);
	double b = bare_ns(spec, secs);
	double in = session_ns(spec, ERGON_SAMPLER_INLINE, secs);
	double th = session_ns(spec, ERGON_SAMPLER_THREADED, secs);
	printf("  overhead above the bare loop: inline %.1f ns, threaded %.1f ns\n", in - b,
	       th - b);
	printf("  ratio to bare loop: inline %.2fx, threaded %.2fx\n", in / b, th / b);
	printf("  beyond the two clock reads: inline %.1f ns, threaded %.1f ns\n",
	       in - b - 2 * clock_ns, th - b - 2 * clock_ns);
	return 0;
}

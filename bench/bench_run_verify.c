/* `ergon verify` on a report holding 1,000,000 invocations: seconds and
 * MB/s for load + digest + figure recomputation, against parsing alone
 * (jansson) in the same run.
 *   bench_run_verify [invocations] [out.json]
 */
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/parse.h"
#include "ergon/report.h"
#include "ergon/session.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const struct ergon_instrument_driver drv = {.name = "bench", .longname = "bench"};
static const struct ergon_workload_driver wdrv = {.name = "bench", .longname = "bench"};

int main(int argc, char **argv)
{
	long n_inv = 1000000;
	struct ergon_err err = {0};
	if (argc > 1 && ergon_parse_long(argv[1], "invocations", 1, 100000000, &n_inv, &err))
		return 2;
	const char *path = argc > 2 ? argv[2] : "/tmp/ergon-bench-verify.json";
	/* 10 s idle + 6 x 10 s load at 1 kHz: 70,000 samples; invocations of
	 * 60 us spread over the load. */
	size_t ns = 70001;
	double edges[7];
	struct ergon_session_result res = {.status = ERGON_SESSION_COMPLETE,
					   .idle_end_s = 10,
					   .load_start_s = 10,
					   .load_end_s = 70,
					   .window_edges_s = edges,
					   .windows_completed = 6,
					   .n_samples = ns,
					   .n_inv = (size_t)n_inv,
					   .clock_res_s = 1e-9};
	for (int w = 0; w <= 6; w++)
		edges[w] = 10 + 10.0 * w;
	res.sample_t_s = malloc(ns * sizeof(double));
	res.sample_power_w = malloc(ns * sizeof(double));
	res.inv_start_s = malloc((size_t)n_inv * sizeof(double));
	res.inv_latency_s = malloc((size_t)n_inv * sizeof(double));
	for (size_t i = 0; i < ns; i++) {
		res.sample_t_s[i] = (double)i * 1e-3 + 1e-7 * sin((double)i);
		res.sample_power_w[i] = i < 10000 ? 0.6 : 3.0 + 0.01 * sin((double)i * 0.1);
	}
	double dt = 60.0 / (double)n_inv;
	for (long i = 0; i < n_inv; i++) {
		res.inv_start_s[i] = 10 + (double)i * dt;
		res.inv_latency_s[i] = dt * (0.9 + 0.05 * sin((double)i));
	}
	struct ergon_instrument inst = {.driver = &drv};
	inst.identity.accuracy_pct = 0.5;
	inst.identity.resolution_w = 0.001;
	inst.identity.provenance = ERGON_PROV_SYNTHETIC;
	inst.identity.n_rails = 1;
	struct ergon_workload wl = {.driver = &wdrv};
	struct ergon_run_config cfg = {.device = "bench",
				       .workload_spec = "bench:",
				       .session = {.idle_s = 10,
						   .windows = 6,
						   .window_s = 10,
						   .sampler = ERGON_SAMPLER_THREADED,
						   .sample_hz = 1000},
				       .throttle_threshold = 0.15,
				       .throttle_windows = 2,
				       .ambient_c = NAN};
	json_t *rep = NULL;
	if (ergon_report_build(&cfg, &inst, &wl, &res, &rep, &err) ||
	    ergon_artifact_write(rep, path, ERGON_WRITE_FORCE, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 3;
	}
	json_decref(rep);
	struct stat st;
	stat(path, &st);
	double mb = (double)st.st_size / 1e6;
	/* Baseline: read + parse only. */
	double t0 = ergon_now_s();
	json_t *j = NULL;
	if (ergon_artifact_load(path, (size_t)4 << 30, &j, &err))
		return 3;
	double t_parse = ergon_now_s() - t0;
	/* Its parts: the digest (JCS + SHA-256) and the figure recomputation. */
	t0 = ergon_now_s();
	if (ergon_artifact_check_digest(j, &err))
		return 1;
	double t_digest = ergon_now_s() - t0;
	json_t *fig = NULL, *iss = NULL;
	t0 = ergon_now_s();
	if (ergon_report_compute_figures(j, &fig, &iss, &err))
		return 1;
	double t_fig = ergon_now_s() - t0;
	json_decref(fig);
	json_decref(iss);
	json_decref(j);
	/* verify: load + digest + recompute every figure. */
	t0 = ergon_now_s();
	if (ergon_artifact_load(path, (size_t)4 << 30, &j, &err) || ergon_report_verify(j, &err)) {
		fprintf(stderr, "verify: %s\n", err.msg);
		return 1;
	}
	double t_verify = ergon_now_s() - t0;
	json_decref(j);
	printf("verify of a %ld-invocation report (%.1f MB):\n", n_inv, mb);
	printf("  parse only : %.2f s (%.1f MB/s)\n", t_parse, mb / t_parse);
	printf("  verify     : %.2f s (%.1f MB/s), %.2fx parse alone\n", t_verify, mb / t_verify,
	       t_verify / t_parse);
	printf("  of which   : digest %.2f s, figures %.2f s\n", t_digest, t_fig);
	free(res.sample_t_s);
	free(res.sample_power_w);
	free(res.inv_start_s);
	free(res.inv_latency_s);
	remove(path);
	return 0;
}

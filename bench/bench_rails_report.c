/* What several rails cost the report pipeline: the same number of power
 * samples built into a report and verified as one rail, then as three
 * interleaved rails (each a third of them, split by the report, figured per
 * rail), in the same run. Prints seconds (best of 3) and the ratio.
 *   bench_rails_report [total_samples]
 */
#include "ergon/artifact.h"
#include "ergon/parse.h"
#include "ergon/report.h"
#include "ergon/session.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ergon_instrument_driver drv = {.name = "bench", .longname = "bench"};
static const struct ergon_workload_driver wdrv = {.name = "bench", .longname = "bench"};

/* Build, seal and verify once; seconds for build+seal and for verify. */
static int once(int rails, size_t ns, double *build_s, double *verify_s)
{
	double edges[6];
	struct ergon_session_result res = {.status = ERGON_SESSION_COMPLETE,
					   .idle_end_s = 10,
					   .load_start_s = 10,
					   .load_end_s = 60,
					   .window_edges_s = edges,
					   .windows_completed = 5,
					   .n_samples = ns,
					   .n_channels = rails,
					   .clock_res_s = 1e-9};
	for (int w = 0; w <= 5; w++)
		edges[w] = 10 + 10.0 * w;
	size_t n_inv = 100000;
	res.sample_t_s = malloc(ns * sizeof(double));
	res.sample_power_w = malloc(ns * sizeof(double));
	res.sample_channel = malloc(ns * sizeof(uint16_t));
	res.inv_start_s = malloc(n_inv * sizeof(double));
	res.inv_latency_s = malloc(n_inv * sizeof(double));
	res.n_inv = n_inv;
	double dt = 60.0 / (double)ns;
	for (size_t i = 0; i < ns; i++) {
		double t = (double)i * dt;
		res.sample_t_s[i] = t;
		res.sample_channel[i] = (uint16_t)(i % (size_t)rails);
		res.sample_power_w[i] = (t < 10 ? 0.6 : 3.0) / (1 + (double)res.sample_channel[i]);
	}
	for (size_t i = 0; i < n_inv; i++) {
		res.inv_start_s[i] = 10 + (double)i * 5e-4;
		res.inv_latency_s[i] = 4e-4;
	}
	struct ergon_instrument inst = {.driver = &drv};
	inst.identity.accuracy_pct = 0.5;
	inst.identity.resolution_w = 0.001;
	inst.identity.provenance = ERGON_PROV_SYNTHETIC;
	inst.identity.n_rails = rails;
	inst.identity.total_rail = 0;
	for (int c = 0; c < rails; c++)
		snprintf(inst.identity.rails[c], sizeof(inst.identity.rails[c]), "RAIL%d", c);
	struct ergon_workload wl = {.driver = &wdrv};
	struct ergon_run_config cfg = {.device = "bench",
				       .workload_spec = "bench:",
				       .session = {.idle_s = 10,
						   .windows = 5,
						   .window_s = 10,
						   .sampler = ERGON_SAMPLER_THREADED,
						   .sample_hz = (double)ns / 60.0 / rails},
				       .throttle_threshold = 0.15,
				       .throttle_windows = 2,
				       .ambient_c = NAN};
	struct ergon_err err = {0};
	json_t *rep = NULL;
	double a = ergon_now_s();
	int rc = ergon_report_build(&cfg, &inst, &wl, &res, &rep, &err);
	if (rc == 0)
		rc = ergon_artifact_seal(rep, &err);
	double b = ergon_now_s();
	if (rc == 0)
		rc = ergon_report_verify(rep, &err);
	double c = ergon_now_s();
	if (rc)
		fprintf(stderr, "%d rails: %s\n", rails, err.msg);
	*build_s = b - a;
	*verify_s = c - b;
	json_decref(rep);
	res.window_edges_s = NULL;
	free(res.sample_t_s);
	free(res.sample_power_w);
	free(res.sample_channel);
	free(res.inv_start_s);
	free(res.inv_latency_s);
	return rc;
}

int main(int argc, char **argv)
{
	long ns = 180000;
	struct ergon_err err = {0};
	if (argc > 1 && ergon_parse_long(argv[1], "total_samples", 1000, 190000, &ns, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	double best_b[2] = {1e9, 1e9}, best_v[2] = {1e9, 1e9};
	const int rails[2] = {1, 3};
	for (int rep = 0; rep < 3; rep++)
		for (int k = 0; k < 2; k++) {
			double b, v;
			if (once(rails[k], (size_t)ns, &b, &v))
				return 3;
			best_b[k] = fmin(best_b[k], b);
			best_v[k] = fmin(best_v[k], v);
		}
	printf("%ld samples, 100000 invocations, best of 3\n", ns);
	printf("| rails | build + seal s | verify s |\n|---|---|---|\n");
	for (int k = 0; k < 2; k++)
		printf("| %d | %.3f | %.3f |\n", rails[k], best_b[k], best_v[k]);
	printf("ratio 3 rails / 1 rail: build %.2f, verify %.2f\n", best_b[1] / best_b[0],
	       best_v[1] / best_v[0]);
	return 0;
}

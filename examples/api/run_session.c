/* A sustained-load session with your own workload (docs/API.md, example 3).
 *
 *   run_session REPORT.json
 *
 * The unit of work is a function of this program (a small integer matrix
 * multiply): a struct ergon_workload whose driver's invoke calls it. The
 * session measures an idle baseline, then load windows in which the work
 * runs back to back, and writes REPORT.json (a verifiable ergon.report:
 * `ergon verify REPORT.json`). The instrument is the synthetic one, a
 * seeded power model (0.5 W idle, 3 W under load, no noise) so that the
 * example runs anywhere: its figures are labelled synthetic, never
 * measured. Swap in "hwmon:RAIL", "rapl" or "joulescope" for a real one. */
#include <ergon/ergon.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define N 48

static int8_t a[N][N], b[N][N];
static int32_t c[N][N];

/* The work: C = A x B, int8 in, int32 out. 0 ok; ergon counts a failure. */
static int matmul_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)wl;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			int32_t s = 0;
			for (int k = 0; k < N; k++)
				s += (int32_t)a[i][k] * (int32_t)b[k][j];
			c[i][j] = s;
		}
	/* A check of the product: c[0][0] = sum over k of a[0][k] b[k][0] =
	 * sum of -3 ((k mod 5) - 2), k = 0..47: nine whole cycles of 5 add 0,
	 * k = 45, 46, 47 add -3 (-2 - 1 + 0) = 9. */
	if (c[0][0] != 9)
		return ergon_err_set(err, ERGON_EIO, "matmul: c[0][0] is %d, not 9", (int)c[0][0]);
	return 0;
}

static int matmul_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)wl;
	(void)err;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (int8_t)((i * j) % 7 - 3);
			b[i][j] = (int8_t)((i + 2 * j) % 5 - 2);
		}
	return 0;
}

static const struct ergon_workload_driver matmul_driver = {
    .name = "matmul48",
    .longname = "48x48 int8 matrix multiply (examples/api/run_session.c)",
    .prepare = matmul_prepare,
    .invoke = matmul_invoke,
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: run_session REPORT.json\n");
		return 2;
	}
	struct ergon_workload wl = {.driver = &matmul_driver,
				    .description = "48x48 int8 matmul, in process"};
	const char *ikv[] = {"idle_w=0.5", "load_w=3", "noise_w=0", NULL};
	struct ergon_run_config cfg = {
	    .device = "this host",
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload = &wl,
	    .session = {.idle_s = 0.5,
			.windows = 2,
			.window_s = 0.5,
			.sampler = ERGON_SAMPLER_THREADED,
			.sample_hz = 1000,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN, /* not given */
	    .out_path = argv[1],
	    .write_flags = ERGON_WRITE_FORCE,
	};
	struct ergon_run_result res;
	struct ergon_err err = {0};
	if (ergon_run(&cfg, &res, NULL, &err) != 0) {
		fprintf(stderr, "run_session: %s\n", err.msg);
		return 1;
	}
	const struct ergon_run_headline *f = &res.figures;
	printf("provenance %s\n", ergon_provenance_name(res.provenance));
	/* integrity: what the checks found (a sampler gap on a loaded host
	 * degrades it); verdict: whether the figures stand (the exit code
	 * `ergon run` would give). */
	printf("integrity %s\n", ergon_integrity_name(res.integrity));
	printf("verdict %s\n", res.verdict.kind == ERGON_VERDICT_VALID	    ? "valid"
			       : res.verdict.kind == ERGON_VERDICT_DEGRADED ? "degraded"
									    : "invalid");
	printf("operations %llu\n", (unsigned long long)f->operations);
	printf("operations_failed %llu\n", (unsigned long long)f->operations_failed);
	printf("idle_mean_power_w %.17g\n", f->idle_mean_power_w);
	printf("load_mean_power_w %.17g\n", f->load_mean_power_w);
	printf("energy_per_op_j %.17g\n", f->energy_per_op_j);
	printf("energy_per_op_u_j %.17g\n", f->energy_per_op_u_j);
	printf("latency_p50_s %.17g\n", f->latency_p50_s);
	printf("latency_p99_s %.17g\n", f->latency_p99_s);
	printf("report_id %s\n", res.report_id);
	return 0;
}

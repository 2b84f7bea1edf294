/* What the profile pipeline costs on top of the virtual bench it drives:
 * `ergon profile --board sim --power` in-process (config, plan, PMU stage
 * through the capture pipeline and HPX parser, power stage through the
 * gated engine, summary.json + CSV written atomically) against the two
 * ergon_sim_run calls it makes (baseline_profile + baseline_power), both
 * measured in the same run. The ratio is the pipeline's overhead factor.
 *   bench_profile_sim [REPS]   (default 20)
 */
#include "ergon/config.h"
#include "ergon/fileio.h"
#include "ergon/profile.h"
#include "ergon/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long reps = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
	if (reps < 1)
		reps = 1;
	char dir[] = "/tmp/ergon-bench-profile-XXXXXX";
	if (mkdtemp(dir) == NULL)
		return 1;
	struct ergon_err err = {0};
	double t0 = now_s();
	for (long i = 0; i < reps; i++) {
		struct ergon_sim_result a, b;
		if (ergon_sim_run("baseline_profile", &a, &err) ||
		    ergon_sim_run("baseline_power", &b, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		ergon_sim_result_cleanup(&a);
		ergon_sim_result_cleanup(&b);
	}
	double sim_s = (now_s() - t0) / (double)reps;
	struct ergon_config cfg;
	ergon_config_init(&cfg);
	if (ergon_config_set(&cfg, "target.board=sim", ERGON_CFG_CLI, &err) ||
	    ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err) ||
	    ergon_config_resolve(&cfg, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t0 = now_s();
	for (long i = 0; i < reps; i++) {
		struct ergon_profile_opts o = {.cfg = &cfg, .out_dir = dir, .write_flags = 1u};
		json_t *s = NULL;
		if (ergon_profile_run(&o, NULL, &s, &err) != 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		json_decref(s);
	}
	double prof_s = (now_s() - t0) / (double)reps;
	ergon_config_cleanup(&cfg);
	printf("reps %ld\nsim_runs_ms %.3f\nprofile_run_ms %.3f\noverhead_ratio %.2f\n", reps,
	       sim_s * 1e3, prof_s * 1e3, prof_s / sim_s);
	/* The outputs one run leaves (docs/internals/profile.md). */
	static const char *const files[] = {
	    "summary.json", "profile_results.csv", "pmu/capture.log", "power/capture.log", "pmu",
	    "power"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		remove(path);
	}
	return rmdir(dir) == 0 ? 0 : 1;
}

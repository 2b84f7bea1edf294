/* `ergon verify` on a report holding 1,000,000 invocations: seconds, MB/s
 * and peak RSS of each way to verify it, all in the same run, each in a
 * fresh process (so that one's peak memory is not another's):
 *   tree      jansson loads the file, the tree canonicalizer digests it,
 *             the figures are recomputed from the tree (the path verify
 *             took before it streamed; its numbers now use the Ryu
 *             formatter, so it is faster than the original)
 *   parse     jansson load alone (the floor of the tree path)
 *   digest    the streaming digest alone (no tree)
 *   stream    what `ergon verify` does now: streaming digest + tree without
 *             the series values + figures from the packed series
 * The original (pre-stream, printf-search formatter) CLI is measured by
 * bench/verify_before_after.sh on the same file.
 *   spill     the same with every series re-read from the file (the
 *             bounded-memory path a report above 1 Mi invocations takes)
 *   bench_run_verify [invocations] [out.json] [--keep] [MODES]
 * MODES: comma-separated subset (default all; a 1 GB report cannot take
 * the tree path on a 23 GB machine: run it with digest,stream,spill).
 *   bench_run_verify --child MODE FILE     (internal)
 */
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/parse.h"
#include "ergon/report.h"
#include "ergon/session.h"

#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct ergon_instrument_driver drv = {.name = "bench", .longname = "bench"};
static const struct ergon_workload_driver wdrv = {.name = "bench", .longname = "bench"};

extern char **environ;

static int child(const char *mode, const char *path)
{
	struct ergon_err err = {0};
	double t0 = ergon_now_s();
	int rc = 0;
	if (strcmp(mode, "tree") == 0 || strcmp(mode, "parse") == 0) {
		json_t *j = NULL;
		rc = ergon_artifact_load(path, (size_t)4 << 30, &j, &err);
		if (rc == 0 && strcmp(mode, "tree") == 0)
			rc = ergon_report_verify(j, &err);
		json_decref(j);
	} else if (strcmp(mode, "digest") == 0) {
		struct ergon_jcs_stream_result res;
		rc = ergon_jcs_stream_file(path, (size_t)4 << 30, ERGON_JCS_OMIT_REPORT_ID, &res,
					   &err);
		ergon_jcs_stream_result_free(&res);
	} else {
		rc = ergon_report_verify_file(
		    path, (size_t)4 << 30, strcmp(mode, "spill") == 0 ? ERGON_VERIFY_SPILL_ALL : 0,
		    NULL, &err);
	}
	double t = ergon_now_s() - t0;
	if (rc) {
		fprintf(stderr, "%s: %s\n", mode, err.msg);
		return 1;
	}
	/* This process's own peak (VmHWM belongs to the address space exec
	 * gave it; ru_maxrss would also count the parent's pages before the
	 * exec), and its CPU time. */
	long hwm_kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			hwm_kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("%.6f %.6f %ld\n", t, cpu, hwm_kb);
	return 0;
}

/* Run this program again as `--child mode path`; its seconds on the wall
 * (the verify alone), CPU seconds and peak RSS (the whole process). */
static int measure(const char *self, const char *mode, const char *path, double *secs,
		   double *cpu_s, double *rss_mb)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	/* posix_spawn, not fork: a forked child would start with this
	 * process's pages resident and count them in its peak. */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	char *args[] = {(char *)self, "--child", (char *)mode, (char *)path, NULL};
	pid_t pid;
	int sp = posix_spawn(&pid, self, &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (sp != 0) {
		close(fds[0]);
		return -1;
	}
	char buf[64] = "";
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	int st = 0;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n <= 0)
		return -1;
	buf[n] = '\0';
	char *e1 = NULL, *e2 = NULL;
	*secs = strtod(buf, &e1);
	*cpu_s = strtod(e1, &e2);
	*rss_mb = strtod(e2, NULL) / 1024.0; /* VmHWM, KiB */
	(void)ru;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], argv[3]);
	long n_inv = 1000000;
	struct ergon_err err = {0};
	if (argc > 1 && ergon_parse_long(argv[1], "invocations", 1, 100000000, &n_inv, &err))
		return 2;
	const char *path = argc > 2 ? argv[2] : "/tmp/ergon-bench-verify.json";
	int keep = argc > 3 && strcmp(argv[3], "--keep") == 0;
	const char *want = argc > 4 ? argv[4] : "tree,parse,digest,stream,spill";
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
	free(res.sample_t_s);
	free(res.sample_power_w);
	free(res.inv_start_s);
	free(res.inv_latency_s);
	struct stat st;
	stat(path, &st);
	double mb = (double)st.st_size / 1e6;
	const char *modes[] = {"tree", "parse", "digest", "stream", "spill"};
	double t[5], m[5], c[5];
	/* BENCH_REPS: how many runs each (best kept); 3 by default. */
	const char *re = getenv("BENCH_REPS");
	long reps = 3;
	if (re && ergon_parse_long(re, "BENCH_REPS", 1, 100, &reps, &err))
		return 2;
	int on[5];
	for (int i = 0; i < 5; i++) {
		/* Best of three: the machine is shared. */
		t[i] = INFINITY;
		c[i] = INFINITY;
		m[i] = 0;
		on[i] = strstr(want, modes[i]) != NULL;
		if (!on[i])
			continue;
		for (int k = 0; k < reps; k++) {
			double s, cs, r;
			if (measure(argv[0], modes[i], path, &s, &cs, &r) != 0) {
				fprintf(stderr, "%s failed\n", modes[i]);
				return 1;
			}
			if (s < t[i])
				t[i] = s;
			if (cs < c[i])
				c[i] = cs;
			if (r > m[i])
				m[i] = r;
		}
	}
	printf("verify of a %ld-invocation report (%.1f MB), best of %d (wall: the verify "
	       "itself; cpu: the whole process), peak RSS:\n",
	       n_inv, mb, (int)reps);
	for (int i = 0; i < 5; i++)
		if (on[i])
			printf(
			    "  %-6s : wall %6.3f s (%6.1f MB/s, %5.3f s per 10 MB)  cpu %6.3f s  "
			    "RSS %7.1f MB\n",
			    modes[i], t[i], mb / t[i], t[i] * 10 / mb, c[i], m[i]);
	if (on[0] && on[3])
		printf("  stream vs tree: %.1fx faster (wall), %.1fx less memory\n", t[0] / t[3],
		       m[0] / m[3]);
	if (!keep)
		remove(path);
	return 0;
}

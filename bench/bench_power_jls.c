/* JLS file -> power summary from the page cache: MB/s against the file's
 * size, and peak RSS of the whole analysis for a file and one twice as
 * long (each analysed in a fresh child process, so RSS is its own).
 *   bench_power_jls [SECONDS_SHORT] [DIR]   (default 20 s at 500 kHz, /tmp)
 * The JLS files are written by the test writer (tests/support), a test
 * tool: ergon itself only reads JLS. */
#include "../tests/support/ts_jls_writer.c"
#include "ergon/analyze.h"
#include "ergon/jls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each analysis is timed on both clocks at once: the wall clock and the
 * process CPU clock (the analysis is single-threaded). The headline figure
 * is the wall clock, or with ERGON_BENCH_CLOCK=cpu the CPU clock (on a
 * shared, loaded host wall time mostly measures the other tenants); both
 * are printed, with the child's context switches (voluntary: it slept or
 * waited on I/O; involuntary: it was preempted) and major faults, which
 * say where wall time above CPU time went. */
static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct times {
	double wall, cpu;
};

static struct times now_t(void)
{
	return (struct times){clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID)};
}

static int use_cpu_clock(void)
{
	const char *clk = getenv("ERGON_BENCH_CLOCK");
	return clk && strcmp(clk, "cpu") == 0;
}

static double cur(uint64_t k, void *c)
{
	(void)c;
	return ((k / 500000) % 4 == 1 ? 0.012 : 0.002) + (double)(k % 13) * 1e-6;
}

static double volt(uint64_t k, void *c)
{
	(void)k;
	(void)c;
	return 1.8;
}

static int gate(uint64_t k, void *c)
{
	(void)c;
	return (k / 500000) % 4 == 1;
}

static int feed(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	return ergon_gated_push_raw(ctx, b->current_a, b->voltage_v, b->power_w, b->gate_bits,
				    b->gate_bit0, b->n, err);
}

static int count_only(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	(void)err;
	*(uint64_t *)ctx += b->n;
	return 0;
}

static int reader_only;

/* The analysis ergon analyze does, minus writing files (or, with
 * reader_only, just the JLS reader streaming every block). */
static int analyse(const char *path, struct times *secs)
{
	struct times t0 = now_t();
	struct ergon_err err = {0};
	struct ergon_jls_reader *r = NULL;
	struct ergon_gated *g = NULL;
	struct ergon_gated_config cfg = {.stats_rate_hz = 1000, .min_window_s = 1.0};
	int rc = ergon_jls_file_open(path, &r, &err);
	if (rc == 0 && reader_only) {
		uint64_t n = 0;
		rc = ergon_jls_reader_stream(r, "gpi[0]", count_only, &n, &err);
		struct times t1 = now_t();
		*secs = (struct times){t1.wall - t0.wall, t1.cpu - t0.cpu};
		ergon_jls_reader_free(r);
		return rc;
	}
	if (rc == 0)
		rc = ergon_gated_new(&cfg, &g, &err);
	if (rc == 0)
		rc = ergon_gated_raw_begin(g, ergon_jls_reader_sample_rate(r), &err);
	if (rc == 0)
		rc = ergon_jls_reader_stream(r, "gpi[0]", feed, g, &err);
	const struct ergon_gated_result *res = NULL;
	json_t *sec = NULL;
	if (rc == 0)
		rc = ergon_gated_finish(g, &res, &err);
	if (rc == 0)
		rc = ergon_power_section(res, 1.0, NULL, ergon_jls_reader_warnings(r), &sec, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	struct times t1 = now_t();
	*secs = (struct times){t1.wall - t0.wall, t1.cpu - t0.cpu};
	json_decref(sec);
	ergon_gated_free(g);
	ergon_jls_reader_free(r);
	return rc;
}

struct result {
	double mbps_wall, mbps_cpu; /* best of three each */
	long rss_kb, vcsw, ivcsw, majflt;
};

static int measure(const char *path, struct result *res)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	struct times t;
	if (analyse(path, &t)) /* warm the page cache */
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct times best = {1e9, 1e9};
		for (int i = 0; i < 3; i++) {
			if (analyse(path, &t))
				_exit(1);
			if (t.wall < best.wall)
				best.wall = t.wall;
			if (t.cpu < best.cpu)
				best.cpu = t.cpu;
		}
		FILE *f = fopen("/tmp/ergon_bench_jls.time", "w");
		fprintf(f, "%.9f %.9f\n", best.wall, best.cpu);
		fclose(f);
		_exit(0);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	FILE *f = fopen("/tmp/ergon_bench_jls.time", "r");
	char line[96] = {0};
	if (f == NULL || fgets(line, sizeof(line), f) == NULL)
		return -1;
	fclose(f);
	char *end = NULL;
	double wall = strtod(line, &end), cpu = strtod(end, NULL);
	res->mbps_wall = (double)st.st_size / wall / 1e6;
	res->mbps_cpu = (double)st.st_size / cpu / 1e6;
	res->rss_kb = ru.ru_maxrss;
	res->vcsw = ru.ru_nvcsw;
	res->ivcsw = ru.ru_nivcsw;
	res->majflt = ru.ru_majflt;
	return 0;
}

static void print_result(const char *what, const char *path, double mb, const struct result *r)
{
	printf("%-12s %-28s %7.1f MB  %7.1f MB/s (%s)  wall %7.1f MB/s  cpu %7.1f MB/s  peak RSS "
	       "%6ld KiB  csw %ld vol %ld invol  majflt %ld\n",
	       what, path, mb, use_cpu_clock() ? r->mbps_cpu : r->mbps_wall,
	       use_cpu_clock() ? "cpu" : "wall", r->mbps_wall, r->mbps_cpu, r->rss_kb, r->vcsw,
	       r->ivcsw, r->majflt);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 20.0;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char p1[512], p2[512];
	snprintf(p1, sizeof(p1), "%s/ergon_bench_%gs.jls", dir, secs);
	snprintf(p2, sizeof(p2), "%s/ergon_bench_%gs.jls", dir, 2 * secs);
	struct ts_jls_spec s = {.rate_hz = 500000,
				.samples_per_data = 8192,
				.with_power = 1,
				.with_gate = 1,
				.current_a = cur,
				.voltage_v = volt,
				.gate = gate};
	s.samples = (uint64_t)(secs * 500000);
	if (ts_jls_write_file(p1, &s))
		return 1;
	s.samples *= 2;
	if (ts_jls_write_file(p2, &s))
		return 1;
	/* The files were just written: their pages are dirty and the kernel
	 * writes them back over the next seconds, on this host's two CPUs,
	 * while the analysis runs. ERGON_BENCH_SYNC=1 waits for that first
	 * (sync), so the figure is the analysis's alone. */
	const char *sy = getenv("ERGON_BENCH_SYNC");
	if (sy && strcmp(sy, "1") == 0)
		sync();
	struct result m1, m2;
	if (measure(p1, &m1) || measure(p2, &m2)) {
		fprintf(stderr, "analysis failed\n");
		return 1;
	}
	struct stat a, b;
	stat(p1, &a);
	stat(p2, &b);
	print_result("analysis", p1, (double)a.st_size / 1e6, &m1);
	print_result("analysis", p2, (double)b.st_size / 1e6, &m2);
	printf("RSS ratio (2x length / 1x): %.3f\n", (double)m2.rss_kb / (double)m1.rss_kb);
	reader_only = 1;
	if (measure(p1, &m1) || measure(p2, &m2))
		return 1;
	print_result("reader only", p1, (double)a.st_size / 1e6, &m1);
	print_result("reader only", p2, (double)b.st_size / 1e6, &m2);
	printf("reader RSS ratio: %.3f\n", (double)m2.rss_kb / (double)m1.rss_kb);
	/* ERGON_BENCH_KEEP=1 keeps the recordings (to profile `ergon analyze
	 * --jls` on them). */
	const char *keep = getenv("ERGON_BENCH_KEEP");
	if (keep == NULL || strcmp(keep, "1") != 0) {
		unlink(p1);
		unlink(p2);
	}
	unlink("/tmp/ergon_bench_jls.time");
	return 0;
}

/* Parse throughput and peak memory of the HPX parser, single thread.
 *
 *   bench_hpx_parse STREAM [REPEATS]
 *
 * The stream (from bench/gen_hpx_stream.py) is read from the page cache in
 * 64 KiB chunks, as `ergon parse` does, so the file never sits in memory.
 * Baseline, measured in the same run over the same chunks: splitting the
 * bytes into lines with memchr and nothing else. The parser's figure is
 * reported in MB/s and as a ratio to that baseline. Peak RSS comes from
 * getrusage (ru_maxrss) after the parse and aggregation. Times are process
 * CPU time (the parser is single-threaded), best of REPEATS.
 */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 16)

/* CPU time of this (single-threaded) process: on a shared, loaded host it
 * is a steadier measure of the work than wall time. ERGON_BENCH_CLOCK=wall
 * measures wall time instead (CLOCK_MONOTONIC), to set beside a
 * multi-threaded `ergon parse`'s wall time (bench_parse_e2e.sh). */
static clockid_t bench_clock = CLOCK_PROCESS_CPUTIME_ID;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Baseline: count lines with memchr over the same chunked reads. */
static double baseline(const char *path, size_t *bytes, size_t *lines)
{
	static char buf[CHUNK];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	double t0 = now_s();
	ssize_t n;
	*bytes = 0;
	*lines = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		*bytes += (size_t)n;
		const char *p = buf, *e = buf + n;
		while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
			(*lines)++;
			p++;
		}
	}
	double t = now_s() - t0;
	close(fd);
	return t;
}

static double parse(const char *path, size_t *layers, double *agg_s)
{
	static char buf[CHUNK];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	if (ergon_hpx_parser_new(NULL, &p, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	double t0 = now_s();
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (ergon_hpx_parser_feed(p, buf, (size_t)n, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
	}
	ergon_hpx_parser_finish(p, &err);
	double t = now_s() - t0;
	json_t *res = NULL;
	double t1 = now_s();
	if (ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, 0, &res, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	*agg_s = now_s() - t1;
	*layers = json_array_size(json_object_get(res, "layers"));
	json_decref(res);
	ergon_hpx_parser_free(p);
	close(fd);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_hpx_parse STREAM [REPEATS]\n");
		return 2;
	}
	const char *clk = getenv("ERGON_BENCH_CLOCK");
	if (clk && strcmp(clk, "wall") == 0)
		bench_clock = CLOCK_MONOTONIC;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (reps < 1)
		reps = 1;
	long rss0 = rss_kib();
	double best_b = 1e9, best_p = 1e9, agg = 0;
	size_t bytes = 0, lines = 0, layers = 0;
	for (int r = 0; r < reps; r++) {
		double b = baseline(argv[1], &bytes, &lines);
		double p = parse(argv[1], &layers, &agg);
		if (b < 0 || p < 0) {
			perror(argv[1]);
			return 1;
		}
		if (b < best_b)
			best_b = b;
		if (p < best_p)
			best_p = p;
	}
	double mb = (double)bytes / 1e6;
	printf("stream: %.1f MB, %zu lines, %zu merged layers\n", mb, lines, layers);
	printf("baseline (memchr line split): %.0f MB/s\n", mb / best_b);
	printf("hpx parser: %.0f MB/s (%.3f s, best of %d), %.2fx the baseline time\n", mb / best_p,
	       best_p, reps, best_p / best_b);
	printf("aggregation + JSON (median): %.3f s\n", agg);
	printf("peak RSS: %ld KiB (at start %ld KiB)\n", rss_kib(), rss0);
	return 0;
}

/* Parse throughput and peak memory of the HPX parser, single thread.
 *
 *   bench_hpx_parse STREAM [REPEATS] [alone|parse]
 *
 * The stream (from bench/gen_hpx_stream.py) is read from the page cache in
 * 64 KiB chunks, as `ergon parse` does, so the file never sits in memory.
 * Baseline, measured in the same run over the same chunks: splitting the
 * bytes into lines with memchr and nothing else. The parser's figure is
 * reported in MB/s and as a ratio to that baseline. Peak RSS comes from
 * getrusage (ru_maxrss) after the parse and aggregation. Times are process
 * CPU time (the parser is single-threaded), best of REPEATS.
 *
 * Mode `parse` measures the parser thread as `ergon parse` runs it: early
 * aggregation (median) in the parser's worker thread, the samples spilled
 * to an unlinked temporary file in $TMPDIR (else /tmp), and the stream
 * read by a second thread into a ring of four 1 MiB slots that the calling
 * thread parses in order (as src/pipelines/hpx/hpx_parse.c does, without the
 * digest). The figure is the calling thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) from the first feed to the end of finish, best
 * of REPEATS; the whole process's CPU and the wall time of the same span
 * are printed beside it, and the time to make the result after finish
 * (the last preset's aggregation).
 */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

/* --- mode `parse`: the parser thread of `ergon parse` --------------------- */

#define RING_CHUNK ((size_t)1 << 20)
#define RING 4

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd;
	char *buf[RING];
	size_t len[RING];
	unsigned long long filled, parsed;
	int eof;
};

static void *ring_reader(void *arg)
{
	struct ring *r = arg;
	for (unsigned long long i = 0;; i++) {
		pthread_mutex_lock(&r->mu);
		while (i - r->parsed >= RING)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
		size_t slot = (size_t)(i % RING);
		ssize_t n = read(r->fd, r->buf[slot], RING_CHUNK);
		pthread_mutex_lock(&r->mu);
		if (n > 0) {
			r->len[slot] = (size_t)n;
			r->filled = i + 1;
		} else {
			r->eof = 1;
		}
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (n <= 0)
			return NULL;
	}
}

static int spill_rw(void *ctx, uint64_t off, char *b, size_t len, int wr, struct ergon_err *err)
{
	int fd = *(int *)ctx;
	while (len) {
		ssize_t n = wr ? pwrite(fd, b, len, (off_t)off) : pread(fd, b, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ergon_err_set(err, ERGON_EIO, "bench spill: %s failed",
					     wr ? "write" : "read");
		b += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int spill_write(void *ctx, uint64_t off, const void *buf, size_t len, struct ergon_err *err)
{
	return spill_rw(ctx, off, (char *)(uintptr_t)buf, len, 1, err);
}

static int spill_read(void *ctx, uint64_t off, void *buf, size_t len, struct ergon_err *err)
{
	return spill_rw(ctx, off, buf, len, 0, err);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One `ergon parse`-like parse: the parser thread's CPU seconds; *proc_s,
 * *wall_s the process CPU and wall time of the same span, *result_s the
 * time to make the result after finish, *faults and *sys_s the parser
 * thread's minor page faults and system CPU seconds. */
static double parse_as_ergon(const char *path, double *proc_s, double *wall_s, double *result_s,
			     long *faults, double *sys_s)
{
	struct ring r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	r.fd = open(path, O_RDONLY);
	if (r.fd < 0)
		return -1;
	const char *dir = getenv("TMPDIR");
	int sfd = open(dir && dir[0] ? dir : "/tmp", O_TMPFILE | O_RDWR, 0600);
	if (sfd < 0) {
		perror("bench spill (O_TMPFILE)");
		exit(1);
	}
	for (size_t k = 0; k < RING; k++)
		if ((r.buf[k] = malloc(RING_CHUNK)) == NULL)
			exit(1);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	struct ergon_hpx_spill sp = {.ctx = &sfd, .write = spill_write, .read = spill_read};
	if (ergon_hpx_parser_new(NULL, &p, &err) ||
	    ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, true, &err) ||
	    ergon_hpx_parser_spill(p, &sp, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	pthread_t th;
	if (pthread_create(&th, NULL, ring_reader, &r) != 0)
		exit(1);
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_THREAD, &ru0);
	for (unsigned long long i = 0;; i++) {
		pthread_mutex_lock(&r.mu);
		while (r.filled <= i && !r.eof)
			pthread_cond_wait(&r.cv, &r.mu);
		int have = r.filled > i;
		pthread_mutex_unlock(&r.mu);
		if (!have)
			break;
		size_t slot = (size_t)(i % RING);
		if (ergon_hpx_parser_feed(p, r.buf[slot], r.len[slot], &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
		pthread_mutex_lock(&r.mu);
		r.parsed = i + 1;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
	}
	if (ergon_hpx_parser_finish(p, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	double t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
	getrusage(RUSAGE_THREAD, &ru1);
	*faults = ru1.ru_minflt - ru0.ru_minflt;
	*sys_s = (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		 (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
	*proc_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*wall_s = clock_s(CLOCK_MONOTONIC) - w0;
	pthread_join(th, NULL);
	struct ergon_pmu_result *res = NULL;
	double r0 = clock_s(CLOCK_MONOTONIC);
	if (ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &res, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	*result_s = clock_s(CLOCK_MONOTONIC) - r0;
	ergon_pmu_result_free(res);
	ergon_hpx_parser_free(p);
	for (size_t k = 0; k < RING; k++)
		free(r.buf[k]);
	close(sfd);
	close(r.fd);
	return t;
}

static int main_parse_mode(const char *path, int reps)
{
	double best = 1e9, proc = 0, wall = 0, res = 0;
	for (int i = 0; i < reps; i++) {
		double pc, wl, rs, sy;
		long flt;
		double t = parse_as_ergon(path, &pc, &wl, &rs, &flt, &sy);
		if (t < 0) {
			perror(path);
			return 1;
		}
		printf("repeat %d: parser thread %.3f s CPU (%.3f s system, %ld page faults), "
		       "process %.3f s CPU, wall %.3f s, result after finish %.3f s\n",
		       i + 1, t, sy, flt, pc, wl, rs);
		if (t < best) {
			best = t;
			proc = pc;
			wall = wl;
			res = rs;
		}
	}
	struct stat st;
	double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
	printf("parser thread (as ergon parse: early + spill + reader ring): %.3f s CPU = %.0f "
	       "MB/s (best of %d; that repeat: process %.3f s CPU, wall %.3f s, result %.3f s)\n",
	       best, mb / best, reps, proc, wall, res);
	printf("peak RSS: %ld KiB\n", rss_kib());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 ||
	    (argc > 3 && strcmp(argv[3], "alone") != 0 && strcmp(argv[3], "parse") != 0)) {
		fprintf(stderr, "usage: bench_hpx_parse STREAM [REPEATS] [alone|parse]\n");
		return 2;
	}
	const char *clk = getenv("ERGON_BENCH_CLOCK");
	if (clk && strcmp(clk, "wall") == 0)
		bench_clock = CLOCK_MONOTONIC;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (reps < 1)
		reps = 1;
	if (argc > 3 && strcmp(argv[3], "parse") == 0)
		return main_parse_mode(argv[1], reps);
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

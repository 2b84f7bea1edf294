/* ergon record's JLS writer: (1) sustained MB/s of the writer against a
 * plain write(2) of the same number of bytes to the same folder (the
 * ratio is the figure); (2) RSS over a 10-minute recording at 100 kSPS
 * with 8 digital lines (60 M samples, written as fast as the disk takes
 * them), sampled every simulated minute.
 *   bench_record [DIR] [MINUTES]   (default /tmp, 10) */
#include "ergon/jls_writer.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long rss_kib(void)
{
	/* /proc/self/statm: size resident ... (pages). */
	char buf[128] = "";
	FILE *f = fopen("/proc/self/statm", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	char *p = strchr(buf, ' ');
	long res = p ? strtol(p + 1, NULL, 10) : 0;
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	double minutes = argc > 2 ? strtod(argv[2], NULL) : 10.0;
	char path[512], plain[512];
	snprintf(path, sizeof(path), "%s/bench_record.jls", dir);
	snprintf(plain, sizeof(plain), "%s/bench_record.plain", dir);
	uint64_t total = (uint64_t)(minutes * 60.0 * 100000.0);
	struct ergon_jls_writer_config cfg = {.path = path,
					      .force = 1,
					      .sample_rate_hz = 100000,
					      .source_name = "bench",
					      .digital_lines = 8,
					      .with_power = 1};
	struct ergon_jls_writer *w = NULL;
	struct ergon_err err = {0};
	if (ergon_jls_writer_open(&cfg, &w, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	enum { B = 1000 }; /* one PPK2 read's worth */
	float c[B], v[B];
	uint32_t d[B];
	long rss0 = rss_kib(), rss_max = rss0;
	printf("rss at start: %ld KiB\n", rss0);
	double t0 = now_s();
	for (uint64_t k0 = 0; k0 < total; k0 += B) {
		for (size_t j = 0; j < B; j++) {
			uint64_t k = k0 + j;
			c[j] = (float)(0.002 + 1e-6 * (double)(k % 977));
			v[j] = 3.0f;
			d[j] = (uint32_t)((k / 50000) & 0xff);
		}
		if (ergon_jls_writer_push(w, c, v, NULL, d, B, &err)) {
			fprintf(stderr, "bench_record: %s\n", err.msg);
			return 1;
		}
		if ((k0 + B) % (100000u * 60u) == 0) {
			long r = rss_kib();
			if (r > rss_max)
				rss_max = r;
			printf("rss after %.0f min of samples: %ld KiB\n", (double)(k0 + B) / 6e6,
			       r);
		}
	}
	if (ergon_jls_writer_close(w, "{}", &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	double t_jls = now_s() - t0;
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long bytes = ftell(f);
	fclose(f);
	/* Baseline: the same bytes with write(2) in 64 KiB blocks + fsync. */
	char *blk = malloc(65536);
	memset(blk, 0x5a, 65536);
	int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	double t1 = now_s();
	for (long o = 0; o < bytes; o += 65536) {
		size_t n = (size_t)(bytes - o < 65536 ? bytes - o : 65536);
		if (write(fd, blk, n) != (ssize_t)n)
			return 1;
	}
	fsync(fd);
	close(fd);
	double t_plain = now_s() - t1;
	printf("writer: %llu samples (%.1f min at 100 kSPS, 11 signals), %.1f MB in %.2f s = "
	       "%.1f MB/s (%.1f x real time)\n",
	       (unsigned long long)total, minutes, (double)bytes / 1e6, t_jls,
	       (double)bytes / 1e6 / t_jls, (double)total / 1e5 / t_jls);
	printf("plain write of the same bytes: %.2f s = %.1f MB/s; writer/plain = %.2f\n", t_plain,
	       (double)bytes / 1e6 / t_plain, t_plain / t_jls);
	printf("rss: start %ld KiB, max %ld KiB over the recording\n", rss0, rss_max);
	unlink(path);
	unlink(plain);
	free(blk);
	return 0;
}

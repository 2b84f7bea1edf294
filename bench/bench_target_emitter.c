/* Emitter cost on the host build: bytes/s of HPX CSV rows formatted by the
 * target runtime's own formatter (ert_buf_* + ert_hpx_end) into a sink that
 * only counts, against snprintf of the same rows in the same run (the
 * baseline). Prints both rates and their ratio; no figure is asserted.
 *   bench_target_emitter [ROWS]
 */
#include "ergon/ert_hpx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t sink_bytes;

static int sink_write(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	/* Touch the data so the formatting cannot be optimised away. */
	sink_bytes += len + (unsigned char)data[len - 1] * 0u;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const ops[4] = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"};

int main(int argc, char **argv)
{
	long rows = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	if (rows <= 0) {
		fprintf(stderr, "bench_target_emitter: ROWS must be a positive integer\n");
		return 2;
	}
	struct ert_hal hal = {.write = sink_write};
	struct ert_hpx e;
	ert_hpx_init(&e, &hal);
	uint32_t x = 2463534242u; /* xorshift: varied digit counts */

	double t0 = now_s();
	for (long i = 0; i < rows; i++) {
		struct ert_buf *b = ert_hpx_begin(&e);
		ert_buf_u64(b, (uint64_t)(i & 63));
		ert_buf_char(b, ',');
		ert_buf_str(b, ops[i & 3]);
		for (int c = 0; c < 6; c++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			ert_buf_char(b, ',');
			ert_buf_u64(b, x >> (c * 4));
		}
		ert_buf_str(b, ",0");
		ert_hpx_end(&e);
	}
	double t_ert = now_s() - t0;
	uint64_t bytes_ert = sink_bytes;

	sink_bytes = 0;
	x = 2463534242u;
	char line[ERT_HPX_LINE_MAX];
	t0 = now_s();
	for (long i = 0; i < rows; i++) {
		uint32_t v[6];
		for (int c = 0; c < 6; c++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			v[c] = x >> (c * 4);
		}
		int n = snprintf(line, sizeof line, "%ld,%s,%u,%u,%u,%u,%u,%u,0\n", i & 63,
				 ops[i & 3], v[0], v[1], v[2], v[3], v[4], v[5]);
		sink_write(NULL, line, (size_t)n);
	}
	double t_printf = now_s() - t0;
	if (sink_bytes != bytes_ert) {
		fprintf(stderr, "bench_target_emitter: outputs differ (%llu vs %llu bytes)\n",
			(unsigned long long)bytes_ert, (unsigned long long)sink_bytes);
		return 1;
	}
	printf("rows %ld, bytes %llu\n", rows, (unsigned long long)bytes_ert);
	printf("ert emitter  %.1f MB/s\n", (double)bytes_ert / t_ert / 1e6);
	printf("snprintf     %.1f MB/s (baseline)\n", (double)bytes_ert / t_printf / 1e6);
	printf("ratio ert/snprintf %.2f\n", t_printf / t_ert);
	return 0;
}

/* Gated engine throughput on an in-memory raw stream: f32 current and
 * voltage + a u1 gate at 2 MS/s for SECONDS (default 60), single thread.
 * Baseline in the same run: a plain read of the same bytes (sum of 64-bit
 * words), so the ratio shows how close the engine is to memory bandwidth.
 *   bench_power_engine [SECONDS]
 */
#include "ergon/gated.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ERGON_BENCH_CLOCK=cpu: the process CPU clock (single thread), for a
 * shared host where wall time measures the other tenants. */
static double now_s(void)
{
	struct timespec ts;
	const char *clk = getenv("ERGON_BENCH_CLOCK");
	clock_gettime(clk && strcmp(clk, "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC,
		      &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t read_all(const void *p, size_t len)
{
	const uint64_t *w = p;
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t n = len / 8, k = 0;
	for (; k + 4 <= n; k += 4) {
		a += w[k];
		b += w[k + 1];
		c += w[k + 2];
		d += w[k + 3];
	}
	for (; k < n; k++)
		a += w[k];
	return a + b + c + d;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 60.0;
	const double fs = 2e6;
	size_t n = (size_t)(secs * fs);
	float *cur = malloc(n * sizeof(float));
	float *vol = malloc(n * sizeof(float));
	uint8_t *bits = calloc(n / 8 + 1, 1);
	if (cur == NULL || vol == NULL || bits == NULL) {
		fprintf(stderr, "out of memory for %zu samples\n", n);
		return 1;
	}
	/* A 5 s period: gate high for 3 s, a 2 ms glitch in the low part. */
	uint32_t x = 12345;
	for (size_t k = 0; k < n; k++) {
		double t = (double)k / fs;
		double ph = t - 5.0 * (double)(uint64_t)(t / 5.0);
		int g = (ph >= 1.0 && ph < 4.0) || (ph >= 4.5 && ph < 4.502);
		x = x * 1664525u + 1013904223u;
		cur[k] = (g ? 0.012f : 0.002f) + (float)(x >> 8) * 1e-12f;
		vol[k] = 1.8f;
		if (g)
			bits[k / 8] |= (uint8_t)(1u << (k % 8));
	}
	size_t bytes = n * 8 + n / 8;

	double t0 = now_s();
	uint64_t s = read_all(cur, n * 4) + read_all(vol, n * 4) + read_all(bits, n / 8);
	double t_read = now_s() - t0;

	struct ergon_gated_config cfg = {.stats_rate_hz = 1000, .min_window_s = 1.0};
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	if (ergon_gated_new(&cfg, &g, &err) || ergon_gated_raw_begin(g, fs, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	const size_t block = 1u << 16; /* a multiple of 8: bit offsets stay 0 */
	t0 = now_s();
	for (size_t k = 0; k < n; k += block) {
		size_t m = n - k < block ? n - k : block;
		if (ergon_gated_push_raw(g, cur + k, vol + k, NULL, bits + k / 8, 0, m, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
	}
	const struct ergon_gated_result *res;
	ergon_gated_finish(g, &res, &err);
	double t_eng = now_s() - t0;

	printf("samples %zu (%.0f s at 2 MS/s), input %.3f GB, windows %zu, glitches %llu\n", n,
	       secs, (double)bytes / 1e9, res->window_count,
	       (unsigned long long)res->short_gate_pulses_ignored);
	printf("memory read: %.3f s, %.2f GB/s (checksum %llu)\n", t_read,
	       (double)bytes / t_read / 1e9, (unsigned long long)(s & 0xff));
	printf("engine:      %.3f s, %.1f MS/s, %.2f GB/s\n", t_eng, (double)n / t_eng / 1e6,
	       (double)bytes / t_eng / 1e9);
	printf("ratio engine/read: %.2f\n", t_read / t_eng);
	ergon_gated_free(g);
	free(cur);
	free(vol);
	free(bits);
	return 0;
}

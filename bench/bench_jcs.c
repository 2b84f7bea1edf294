/* RFC 8785 number formatting cost: ns per number for ergon's formatter
 * against two baselines measured in the same run on the same values:
 *   printf17   snprintf("%.17g") — round-trips but is not canonical;
 *   bsearch    the first version of our formatter (binary search of the
 *              precision 1..17, ~5 printf+strtod per number).
 * Values: measurement-like doubles (timestamps, latencies, watts) and small
 * integers (counts), as an ergon report holds them.
 *   bench_jcs [count]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ergon/jcs.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bsearch_format(double v, char *out)
{
	char buf[40];
	int lo = 1, hi = 17;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		snprintf(buf, sizeof(buf), "%.*e", mid - 1, v);
		if (strtod(buf, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return snprintf(out, 40, "%.*e", lo - 1, v);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	if (n < 1)
		n = 1000000;
	double *v = malloc((size_t)n * sizeof(double));
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double u = (double)(x >> 11) * 0x1.0p-53;
		switch (i % 4) {
		case 0: v[i] = 10.0 + (double)i * 6e-5; break; /* timestamps, s */
		case 1: v[i] = 5.4e-5 * (0.9 + 0.1 * u); break; /* latencies, s */
		case 2: v[i] = 2.5 + u; break;                    /* watts */
		default: v[i] = (double)(x % 100000); break;     /* counts */
		}
	}
	char out[40];
	size_t sink = 0;
	double t0 = now_s();
	for (long i = 0; i < n; i++)
		sink += (size_t)snprintf(out, sizeof(out), "%.17g", v[i]);
	double t1 = now_s();
	for (long i = 0; i < n; i++)
		sink += (size_t)bsearch_format(v[i], out);
	double t2 = now_s();
	for (long i = 0; i < n; i++)
		sink += (size_t)ergon_jcs_format_number(v[i], out);
	double t3 = now_s();
	double p17 = (t1 - t0) / (double)n * 1e9, bs = (t2 - t1) / (double)n * 1e9,
	       jcs = (t3 - t2) / (double)n * 1e9;
	printf("numbers            : %ld (sink %zu)\n", n, sink);
	printf("printf %%.17g       : %.1f ns/number (baseline)\n", p17);
	printf("bsearch (old)      : %.1f ns/number (%.2fx baseline)\n", bs, bs / p17);
	printf("ergon_jcs_format   : %.1f ns/number (%.2fx baseline, %.2fx faster than old)\n", jcs,
	       jcs / p17, bs / jcs);
	free(v);
	return 0;
}

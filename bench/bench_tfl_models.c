/* Host latency of ergon-target's int8 interpreter per model: median and
 * minimum ms per inference over N runs on the deterministic input xs1,
 * with the kernel path it took (ERGON_TFL_SIMD chooses one). bench/
 * bench_tfl.sh runs LiteRT.js (XNNPack, one thread) on the same models and
 * inputs in the same session, in interleaved rounds, and prints the ratio.
 *   bench_tfl_models MODEL.tflite... [-n N]
 */
#include "ergon/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = 30;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "-n") == 0)
			n = atoi(argv[i + 1]);
	if (n < 1 || n > 100000)
		n = 30;
	double *t = malloc(sizeof(double) * (size_t)n);
	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "-n") == 0) {
			a++;
			continue;
		}
		struct ergon_model *m = NULL;
		struct ergon_err err = {0};
		if (ergon_model_open(argv[a], &m, &err) != 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		const struct ert_tfl_model *tm = ergon_model_tfl(m);
		uint32_t in_len = 0;
		uint8_t *in = ert_tfl_input(tm, 0, &in_len);
		uint8_t *pattern = malloc(in_len);
		ergon_model_pattern("xs1", pattern, in_len, &err);
		ergon_model_set_input(m, pattern, in_len, "xs1", &err);
		ergon_model_invoke(m, &err); /* warm caches */
		for (int k = 0; k < n; k++) {
			memcpy(in, pattern, in_len);
			double t0 = now_s();
			ergon_model_invoke(m, &err);
			t[k] = now_s() - t0;
		}
		qsort(t, (size_t)n, sizeof t[0], cmp_d);
		const char *base = strrchr(argv[a], '/');
		printf("ergon %-32s n=%d median_ms=%.4f min_ms=%.4f macs=%llu path=%s\n",
		       base ? base + 1 : argv[a], n, 1e3 * t[n / 2], 1e3 * t[0],
		       (unsigned long long)tm->total_macs, ert_tfl_simd_name(tm));
		free(pattern);
		ergon_model_free(m);
	}
	free(t);
	return 0;
}

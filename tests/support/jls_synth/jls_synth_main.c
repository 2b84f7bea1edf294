/* ergon_jls_synth: a recording written by ergon's JLS writer from a known
 * synthetic signal, for the tests that read ergon's files with the
 * reference JLS library (tests/functional/test_jls_reference_readers.sh).
 *
 *   ergon_jls_synth OUT N [--decimate D] [--samples-per-data S]
 *                   [--sample-id-offset ID] [--push P] [--abandon]
 *
 * N samples at 100 kHz, pushed P at a time (default 997, so that pushes
 * straddle chunk and entry edges): current k -> ((k x 7919) mod 1000) / 8
 * + k / 100000 (exact in f32, wide enough that the reference tools' six
 * decimals resolve its statistics), voltage 3 + (k mod 7) / 4, power their
 * product; gpi[0] high for k in [50000, 150000), gpi[1] = bit 3 of k,
 * gpi[2] a pseudo-random bit. D and S are the writer's samples per summary
 * entry and per DATA chunk (0 = its defaults); small ones make many
 * summary levels from few samples. --abandon leaves the file as a killed
 * recording leaves it: never closed. Exit 0 when the file is written. */
#include "ergon/jls_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: ergon_jls_synth OUT N [--decimate D] [--samples-per-data S] "
			"[--sample-id-offset ID] [--push P] [--abandon]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *out = argv[1];
	char *end = NULL;
	unsigned long long n = strtoull(argv[2], &end, 10);
	if (*end)
		return usage();
	struct ergon_jls_writer_config cfg = {.path = out,
					      .force = 1,
					      .sample_rate_hz = 100000,
					      .source_name = "synth",
					      .vendor = "ergon tests",
					      .model = "synthetic",
					      .version = "1",
					      .serial = "0",
					      .digital_lines = 3,
					      .with_power = 1,
					      .utc_q30_start = (int64_t)1000 << 30,
					      .note_json = "{\"ergon\":\"jls_synth\"}"};
	unsigned long push = 997;
	int abandon = 0;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--abandon") == 0) {
			abandon = 1;
			continue;
		}
		if (i + 1 >= argc)
			return usage();
		unsigned long long v = strtoull(argv[i + 1], &end, 10);
		if (*end)
			return usage();
		if (strcmp(argv[i], "--decimate") == 0)
			cfg.sample_decimate = (uint32_t)v;
		else if (strcmp(argv[i], "--samples-per-data") == 0)
			cfg.samples_per_data = (uint32_t)v;
		else if (strcmp(argv[i], "--sample-id-offset") == 0)
			cfg.sample_id_offset = (int64_t)v;
		else if (strcmp(argv[i], "--push") == 0 && v > 0 && v <= 100000)
			push = (unsigned long)v;
		else
			return usage();
		i++;
	}
	struct ergon_jls_writer *w = NULL;
	struct ergon_err err = {0};
	if (ergon_jls_writer_open(&cfg, &w, &err) != 0) {
		fprintf(stderr, "ergon_jls_synth: %s\n", err.msg);
		return 1;
	}
	float *c = malloc(sizeof(float) * push), *v = malloc(sizeof(float) * push);
	uint32_t *d = malloc(sizeof(uint32_t) * push);
	if (c == NULL || v == NULL || d == NULL) {
		fprintf(stderr, "ergon_jls_synth: out of memory\n");
		return 1;
	}
	for (unsigned long long k0 = 0; k0 < n; k0 += push) {
		size_t m = n - k0 < push ? (size_t)(n - k0) : push;
		for (size_t j = 0; j < m; j++) {
			unsigned long long k = k0 + j;
			c[j] = (float)((double)((k * 7919u) % 1000u) / 8.0 + (double)(k / 100000u));
			v[j] = (float)(3.0 + (double)(k % 7u) / 4.0);
			uint32_t r = (uint32_t)(k * 2654435761u) >> 13;
			d[j] = (uint32_t)(k >= 50000 && k < 150000) |
			       (uint32_t)((k >> 3) & 1u) << 1 | (r & 1u) << 2;
		}
		if (ergon_jls_writer_push(w, c, v, NULL, d, m, &err) != 0) {
			fprintf(stderr, "ergon_jls_synth: %s\n", err.msg);
			ergon_jls_writer_abandon(w);
			return 1;
		}
	}
	free(c);
	free(v);
	free(d);
	if (abandon) {
		ergon_jls_writer_abandon(w);
		return 0;
	}
	if (ergon_jls_writer_close(w, "{\"complete\":true}", &err) != 0) {
		fprintf(stderr, "ergon_jls_synth: %s\n", err.msg);
		return 1;
	}
	return 0;
}

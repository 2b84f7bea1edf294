/* Fuzz the layer-energy engine (ergon/layer_energy.h) with any sample
 * stream: the first bytes pick the segments, the inference count and the
 * block split; then each sample is 3 bytes (a current code, and a digital
 * byte for D0 gate and D1 marker). Whatever comes, the engine must not
 * crash, must keep its counts consistent and its figures finite when it
 * gives them, and the marker plan must cover its layers. */
#include "ergon/layer_energy.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	size_t segs = 1 + data[0] % 8;
	uint64_t inf = data[1] % 16;
	size_t split = data[2];
	uint8_t min = data[3] % 12;
	data += 4;
	size -= 4;
	size_t n = size / 3;
	float *i = malloc((n ? n : 1) * sizeof *i);
	uint8_t *d = malloc(n ? n : 1);
	if (i == NULL || d == NULL)
		abort();
	for (size_t k = 0; k < n; k++) {
		uint16_t c = (uint16_t)(data[3 * k] | data[3 * k + 1] << 8);
		/* Mostly ordinary currents, and every float pattern's worth of
		 * extremes: negative, zero, huge. */
		i[k] = c == 0xffff ? NAN : (float)((int)c - 1000) * 1e-5f;
		d[k] = data[3 * k + 2];
	}
	struct ergon_layers_config c = {.sample_rate_hz = 100000.0,
					.gate_bit = 0,
					.marker_bit = 1,
					.segments = segs,
					.inferences = inf,
					.min_samples = min};
	struct ergon_layers *L = NULL;
	struct ergon_err err = {0};
	if (ergon_layers_new(&c, &L, &err) != 0)
		abort();
	size_t a = split < n ? split : n;
	int rc = ergon_layers_push(L, i, NULL, 1.8, d, a, &err);
	if (rc == 0)
		rc = ergon_layers_push(L, i + a, NULL, 1.8, d + a, n - a, &err);
	const struct ergon_layers_result *r = NULL;
	if (rc == 0 && ergon_layers_finish(L, &r, &err) == 0) {
		if (r->inferences_used + r->inferences_dropped > r->edges)
			abort();
		size_t covered = 0;
		for (size_t u = 0; u < r->n_layers; u++) {
			const struct ergon_layer_figures *f = &r->layers[u];
			if (f->first > f->last || f->last >= segs || f->first != covered)
				abort();
			covered = f->last + 1;
			if (!isfinite(f->energy_mean_j) || f->inferences != r->inferences_used)
				abort();
		}
		if (r->n_layers > 0 && covered != segs)
			abort();
		struct ergon_issue_list l = {0};
		(void)ergon_layers_check_sum(r, 1e-6, NULL, &l);
		ergon_issue_list_cleanup(&l);
	}
	ergon_layers_free(L);
	/* The plan over the same bytes as layer times. */
	double t[64];
	size_t nl = n < 64 ? n : 64;
	for (size_t k = 0; k < nl; k++)
		t[k] = (double)data[3 * k] * 1e-5;
	uint32_t mask[8];
	size_t first[64], ns = 0;
	ergon_layers_plan(t, nl, 100000.0, min, mask, first, &ns);
	if (nl > 0 && (ns < 1 || first[0] != 0 || !(mask[0] & 1u)))
		abort();
	for (size_t s = 1; s < ns; s++)
		if (first[s] <= first[s - 1] || !(mask[first[s] / 32] >> (first[s] % 32) & 1u))
			abort();
	free(i);
	free(d);
	return 0;
}

/* Fuzz the PPK2 sample decoder with arbitrary bytes cut at arbitrary
 * places: it must never write past the caller's array, must consume every
 * byte it is given room for, must keep sample indexes strictly increasing,
 * and must account every index as a sample or a counted drop. */
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void on_gap(void *ctx, uint64_t at, uint64_t missing)
{
	uint64_t *total = ctx;
	if (missing == 0 || missing > 63)
		abort();
	(void)at;
	*total += missing;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct ppk2_cal c;
	memset(&c, 0, sizeof(c));
	for (unsigned r = 0; r < PPK2_RANGES; r++) {
		c.r[r] = ppk2_default_r_ohm[r];
		c.gi[r] = 1;
		c.ug[r] = 1;
	}
	struct ppk2_decoder d;
	ppk2_decoder_init(&d, &c, 3300);
	d.spike_filter = data[0] & 1;
	/* The first byte picks the chunk size the bytes arrive in. */
	size_t step = (size_t)(data[1] % 13) + 1;
	data += 2;
	size -= 2;
	struct ppk2_sample *out = malloc(sizeof(*out) * 8);
	uint64_t gaps = 0, n_total = 0, last = 0;
	int have_last = 0;
	for (size_t p = 0; p < size;) {
		size_t len = size - p < step ? size - p : step;
		size_t used = 0;
		size_t n = ppk2_decode(&d, data + p, len, out, 8, &used, on_gap, &gaps);
		if (n > 8 || used > len)
			abort();
		for (size_t i = 0; i < n; i++) {
			if (have_last && out[i].index <= last)
				abort();
			last = out[i].index;
			have_last = 1;
			if (out[i].range < PPK2_RANGES && !isfinite(out[i].current_a))
				abort();
		}
		n_total += n;
		if (used == 0 && n == 0)
			abort(); /* room for 8 samples, yet nothing taken */
		p += used;
	}
	if (d.index != n_total + gaps || gaps != d.dropped)
		abort();
	free(out);
	return 0;
}

/* Fuzz the PPK2 sample decoder with arbitrary bytes cut at arbitrary
 * places: it must never write past the caller's array, must consume every
 * byte it is given room for, must keep sample indexes strictly increasing,
 * must account every index as a sample, a counted drop or a block the
 * host-clock check found, and, filter on or off, on the identity or a
 * calibrated PPK2, must show for every valid-range sample exactly (to the
 * float) what Nordic's app's rules give (tests/support/ts_ppk2_rules.c,
 * written from the rules' text). Each piece is also a read for the
 * host-clock check, at a host time the bytes choose (0..25.5 ms after the
 * one before, drained or not): whatever it finds is whole 64-sample
 * blocks, inside the stream, and what it says it found. */
#include "../support/ts_ppk2_rules.c"
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

/* A calibrated PPK2 (not the identity; values of a real calibration's
 * size), the same for the decoder and for the rules. */
static const double cal_r[5] = {1025.3, 101.2, 10.21, 0.9412, 0.0431};
static const double cal_gs[5] = {0.0005, 0.0123, -0.0007, 0.0031, -0.0042};
static const double cal_gi[5] = {1.0021, 0.9987, 1.0004, 1.0005, 1.0013};
static const double cal_o[5] = {21.5, 12.5, -4.25, 7, -3};
static const double cal_s[5] = {3.1e-9, -1.2e-6, 4.4e-6, 1e-6, 2.1e-5};
static const double cal_i[5] = {1e-8, 3.4e-7, -2.2e-6, 5e-6, -1.1e-5};
static const double cal_ug[5] = {0.9991, 1.0021, 1.0007, 1.0002, 0.9968};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct ppk2_cal c;
	memset(&c, 0, sizeof(c));
	struct ts_ppk2_rules_cal rc;
	ts_ppk2_rules_defaults(&rc);
	int calibrated = (data[0] >> 1) & 1;
	for (unsigned r = 0; r < PPK2_RANGES; r++) {
		if (calibrated) {
			rc.r[r] = cal_r[r];
			rc.gs[r] = cal_gs[r];
			rc.gi[r] = cal_gi[r];
			rc.o[r] = cal_o[r];
			rc.s[r] = cal_s[r];
			rc.i[r] = cal_i[r];
			rc.ug[r] = cal_ug[r];
		} else {
			rc.gs[r] = 0; /* the identity: GS 0, GI 1, UG 1 */
		}
		c.r[r] = rc.r[r];
		c.gs[r] = rc.gs[r];
		c.gi[r] = rc.gi[r];
		c.o[r] = rc.o[r];
		c.s[r] = rc.s[r];
		c.i[r] = rc.i[r];
		c.ug[r] = rc.ug[r];
	}
	struct ppk2_decoder d;
	ppk2_decoder_init(&d, &c, 3300);
	d.spike_filter = data[0] & 1;
	/* The second byte picks the chunk size the bytes arrive in. */
	size_t step = (size_t)(data[1] % 13) + 1;
	data += 2;
	size -= 2;
	size_t words = size / 4;
	struct ppk2_sample *out = malloc(sizeof(*out) * 8);
	/* The valid-range samples as decoded, and their words, for the rules. */
	float *got = calloc(words + 1, sizeof(float));
	uint16_t *adc = calloc(words + 1, sizeof(uint16_t));
	uint8_t *range = calloc(words + 1, 1);
	size_t valid = 0;
	uint64_t gaps = 0, n_total = 0, last = 0, found = 0;
	int have_last = 0;
	struct ppk2_clock_check cc;
	ppk2_clock_check_init(&cc, 100000.0);
	double t_s = 1000.0;
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
			if (out[i].range < PPK2_RANGES) {
				if (!isfinite(out[i].current_a) || valid >= words)
					abort();
				got[valid++] = out[i].current_a;
			}
		}
		n_total += n;
		if (used == 0 && n == 0)
			abort(); /* room for 8 samples, yet nothing taken */
		t_s += (double)data[p] * 1e-4;
		uint64_t from = 0;
		uint64_t lost = ppk2_clock_check_feed(&cc, t_s, d.index, data[p] & 1, &from);
		if (lost % PPK2_CC_BLOCK != 0 || (lost > 0 && from > d.index) ||
		    !isfinite(ppk2_clock_check_pending(&cc)))
			abort();
		if (lost > 0) {
			/* The driver puts the blocks before the next samples. */
			ppk2_decoder_skip(&d, lost);
			found += lost;
			last = d.index - 1;
		}
		p += used;
	}
	if (d.index != n_total + gaps + found || gaps != d.dropped || n_total != words ||
	    found != d.skipped || found != cc.lost_samples)
		abort();
	/* The words themselves, valid ranges only, through the rules. */
	size_t nv = 0;
	for (size_t k = 0; k < words; k++) {
		uint32_t w = (uint32_t)data[4 * k] | (uint32_t)data[4 * k + 1] << 8 |
			     (uint32_t)data[4 * k + 2] << 16 | (uint32_t)data[4 * k + 3] << 24;
		unsigned r = (w >> 14) & 7u;
		if (r < PPK2_RANGES) {
			adc[nv] = (uint16_t)(w & 0x3fffu);
			range[nv++] = (uint8_t)r;
		}
	}
	if (nv != valid)
		abort();
	float *want = calloc(nv + 1, sizeof(float));
	ts_ppk2_rules_decode(&rc, 3.3, adc, range, nv, d.spike_filter, want);
	for (size_t k = 0; k < nv; k++)
		if (memcmp(&want[k], &got[k], sizeof(float)) != 0)
			abort();
	free(want);
	free(out);
	free(got);
	free(adc);
	free(range);
	return 0;
}

/* Agreement of the PPK2 decoder with Nordic's app's decode rules (issue
 * 29; tests/support/ts_ppk2_rules.c) on a 1.4 s stream: a calibrated PPK2
 * (no key at its default) auto-ranging over a duty-cycled load (5 uA
 * asleep, 8 mA radio bursts, 0.3 mA CPU bursts, 50 mA and 120 mA peaks on
 * range 4, a short x40 spike every 173 samples, 5 % noise), so the range
 * switches about once every 110 samples. Prints, filter on and off, how
 * many samples differ from the rules (to the float) and the charge of
 * each. Not a timing benchmark: run it on a build of an older decoder to
 * compare (docs/internals/ppk2.md has the figures of issue 29).
 *   bench_ppk2_agreement */
#include "../tests/support/ts_ppk2_rules.c"
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *meta = "Calibrated: 1\n"
			  "R0: 1025.3\nR1: 101.2\nR2: 10.21\nR3: 0.9412\nR4: 0.0431\n"
			  "GS0: 0.0005\nGS1: 0.0123\nGS2: -0.0007\nGS3: 0.0031\nGS4: -0.0042\n"
			  "GI0: 1.0021\nGI1: 0.9987\nGI2: 1.0004\nGI3: 1.0005\nGI4: 1.0013\n"
			  "O0: 21.5\nO1: 12.5\nO2: -4.25\nO3: 7\nO4: -3\n"
			  "S0: 3.1e-9\nS1: -1.2e-6\nS2: 4.4e-6\nS3: 1e-6\nS4: 2.1e-5\n"
			  "I0: 1e-8\nI1: 3.4e-7\nI2: -2.2e-6\nI3: 5e-6\nI4: -1.1e-5\n"
			  "UG0: 0.9991\nUG1: 1.0021\nUG2: 1.0007\nUG3: 1.0002\nUG4: 0.9968\n"
			  "HW: 9173\nIA: 56\nEND\n";
static const struct ts_ppk2_rules_cal rules_cal = {
    .r = {1025.3, 101.2, 10.21, 0.9412, 0.0431},
    .gs = {0.0005, 0.0123, -0.0007, 0.0031, -0.0042},
    .gi = {1.0021, 0.9987, 1.0004, 1.0005, 1.0013},
    .o = {21.5, 12.5, -4.25, 7, -3},
    .s = {3.1e-9, -1.2e-6, 4.4e-6, 1e-6, 2.1e-5},
    .i = {1e-8, 3.4e-7, -2.2e-6, 5e-6, -1.1e-5},
    .ug = {0.9991, 1.0021, 1.0007, 1.0002, 0.9968},
};

static uint32_t lcg = 7;
static double rnd(void)
{
	lcg = lcg * 1103515245u + 12345u;
	return (double)((lcg >> 8) & 0xffffu) / 65536.0;
}

#define N 140000u

int main(void)
{
	uint16_t *adc = malloc(N * sizeof(*adc));
	uint8_t *range = malloc(N);
	float *want = malloc(N * sizeof(*want));
	struct ppk2_sample *out = malloc(N * sizeof(*out));
	uint8_t *b = malloc(4u * N);
	if (!adc || !range || !want || !out || !b)
		return 1;
	/* The PPK2's shunts and the finest range holding I (90 % of the
	 * 14-bit span: 16383 x 4 x 1.8 V / 163840 over the shunt). */
	static const double shunt[5] = {1031.64, 101.65, 10.15, 0.94, 0.043};
	size_t switches = 0;
	for (size_t k = 0; k < N; k++) {
		size_t ph = k % 1000;
		double i = 5e-6;
		if (ph < 300)
			i = 0.008;
		else if (ph >= 500 && ph < 560)
			i = 3e-4;
		else if (ph >= 700 && ph < 705)
			i = 0.05;
		if (ph >= 100 && ph < 103 && (k / 1000) % 3 == 0)
			i = 0.12;
		if (k % 173 == 0)
			i *= 40;
		i *= 1.0 + 0.05 * (rnd() - 0.5);
		unsigned r = 0;
		while (r < 4 && i > 0.9 * 16383 * 4 * 1.8 / 163840 / shunt[r])
			r++;
		double raw = i * shunt[r] * 163840 / 1.8 / 4 + (rnd() - 0.5) * 3;
		raw = raw < 0 ? 0 : raw > 16383 ? 16383 : raw;
		adc[k] = (uint16_t)lround(raw);
		range[k] = (uint8_t)r;
		if (k > 0 && range[k] != range[k - 1])
			switches++;
		uint32_t w = (uint32_t)((k & 63u) << 18 | (uint32_t)r << 14 | adc[k]);
		b[4 * k] = (uint8_t)w;
		b[4 * k + 1] = (uint8_t)(w >> 8);
		b[4 * k + 2] = (uint8_t)(w >> 16);
		b[4 * k + 3] = (uint8_t)(w >> 24);
	}
	struct ppk2_cal c;
	struct ergon_err err = {0};
	if (ppk2_meta_parse(meta, strlen(meta), &c, "bench", &err) != 0) {
		fprintf(stderr, "calibration: %s\n", err.msg);
		return 1;
	}
	for (int filter = 1; filter >= 0; filter--) {
		struct ppk2_decoder d;
		ppk2_decoder_init(&d, &c, 3300);
		d.spike_filter = filter;
		size_t used = 0;
		size_t n = ppk2_decode(&d, b, 4u * N, out, N, &used, NULL, NULL);
		ts_ppk2_rules_decode(&rules_cal, 3.3, adc, range, N, filter, want);
		size_t differ = 0;
		double q_dec = 0, q_app = 0;
		for (size_t k = 0; k < n; k++) {
			if (memcmp(&out[k].current_a, &want[k], sizeof(float)) != 0)
				differ++;
			q_dec += (double)out[k].current_a * 1e-5;
			q_app += (double)want[k] * 1e-5;
		}
		printf("spike_filter=%d: %zu samples, %zu range switches, %zu differ from the "
		       "app's rules (%.3f %%); charge %.9e C, the rules %.9e C (%+.4f %%)\n",
		       filter, n, switches, differ, 100.0 * (double)differ / (double)n, q_dec,
		       q_app, 100.0 * (q_dec - q_app) / q_app);
	}
	free(adc);
	free(range);
	free(want);
	free(out);
	free(b);
	return 0;
}

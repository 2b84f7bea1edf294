/* The ppk2 instrument: the sample word and the conversion formula worked
 * by hand, the calibration answer (good, R = 0, garbled, keys missing,
 * all zero), counter gaps, the spike filter, and the driver against the
 * pty protocol simulator (waveform, gate on a logic line, gaps, unplug,
 * no device, two devices, a port that does not answer). Expected currents
 * and energies are computed here from the waveform, by hand. */
#include "drivers/instruments/ppk2/ppk2.h"
#include "ergon/artifact.h"
#include "ergon/clock.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "test_support.h"
#include "ts_ppk2_rules.h"
#include "ts_ppk2_sim.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |a - b| <= tol, with both values in the message. */
#define assert_double_equal(a, b, tol)                                                             \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (tol)))                                                     \
			fail_msg("%s = %.12g, expected %.12g (+- %g)", #a, a_, b_, (double)(tol)); \
	} while (0)

/* One raw14 step in volts: 4 counts of 1.8 V / 163840. */
#define STEP_V (4.0 * 1.8 / 163840.0)

static struct ppk2_cal identity_cal(void)
{
	struct ppk2_cal c;
	memset(&c, 0, sizeof(c));
	const double r[5] = {1031.64, 101.65, 10.15, 0.94, 0.043};
	for (int i = 0; i < 5; i++) {
		c.r[i] = r[i];
		c.gi[i] = 1;
		c.ug[i] = 1;
	}
	return c;
}

static void word_fields(void **state)
{
	(void)state;
	/* 0xA5 logic, counter 5, range 2, raw14 1000: packed by hand. */
	uint32_t w = 0xA5u << 24 | 5u << 18 | 2u << 14 | 1000u;
	assert_int_equal(w, 0xA51483E8u);
	struct ppk2_word s = ppk2_word_unpack(w);
	assert_int_equal(s.adc14, 1000);
	assert_int_equal(s.range, 2);
	assert_int_equal(s.counter, 5);
	assert_int_equal(s.logic, 0xA5);
	assert_int_equal(ppk2_word_pack(s), w);
}

static void current_formula(void **state)
{
	(void)state;
	struct ppk2_cal c = identity_cal();
	/* 1000 * 4 * 1.8 / 163840 = 0.0439453125 V over 10.15 ohm. */
	assert_double_equal(ppk2_current_a(&c, 2, 1000, 3300), 0.0439453125 / 10.15, 1e-15);
	/* A full calibration on range 1: O 100, GS 0.5, GI 2, S 0.01, I 1e-6,
	 * UG 1.1, Vdd 3000 mV. x = (4000 - 100) * 1.8 / 163840 / 101.65
	 * = 0.04284667969 / 101.65 = 4.215118513e-4 V/ohm;
	 * I = 1.1 * (x * (0.5 x + 2) + 0.03 + 1e-6) = 1.1 * (8.431126e-4 +
	 * 0.030001) = 0.0339284..., worked out below step by step. */
	c.o[1] = 100;
	c.gs[1] = 0.5;
	c.gi[1] = 2;
	c.s[1] = 0.01;
	c.i[1] = 1e-6;
	c.ug[1] = 1.1;
	double x = 3900.0 * (1.8 / 163840.0) / 101.65;
	assert_double_equal(x, 4.2151185e-4, 1e-10);
	double want = 1.1 * (x * (0.5 * x + 2.0) + 0.01 * 3.0 + 1e-6);
	assert_double_equal(want, 0.03393, 1e-5);
	assert_double_equal(ppk2_current_a(&c, 1, 1000, 3000), want, 1e-12);
	/* Resolution of range 4: one step over 0.043 ohm = 1.022 mA. */
	assert_double_equal(ppk2_resolution_a(&c, 4), STEP_V / 0.043, 1e-12);
	assert_double_equal(ppk2_resolution_a(&c, 4), 1.0220e-3, 1e-6);
}

static const char *good_meta = "Calibrated: 1\n"
			       "R0: 1000.5\nR1: 100.25\nR2: 10.5\nR3: 1.0\nR4: 0.05\n"
			       "GS0: 0\nGS1: 0\nGS2: 0\nGS3: 0\nGS4: 0\n"
			       "GI0: 1\nGI1: 1\nGI2: 1\nGI3: 1\nGI4: 1\n"
			       "O0: 0\nO1: 0\nO2: 0\nO3: 0\nO4: 0\n"
			       "S0: 0\nS1: 0\nS2: 0\nS3: 0\nS4: 0\n"
			       "I0: 0\nI1: 0\nI2: 0\nI3: 0\nI4: 0\n"
			       "UG0: 1\nUG1: 1.5\nUG2: 1\nUG3: 1\nUG4: 1\n"
			       "HW: 9173\nIA: -nan\nFuture: 7e99\nEND\n";

static char *replace(const char *in, const char *from, const char *to)
{
	const char *p = strstr(in, from);
	assert_non_null(p);
	return ts_strf("%.*s%s%s", (int)(p - in), in, to, p + strlen(from));
}

static void metadata_good_and_r_zero(void **state)
{
	(void)state;
	struct ppk2_cal c;
	struct ergon_err err = {0};
	assert_int_equal(ppk2_meta_parse(good_meta, strlen(good_meta), &c, "sim", &err), 0);
	assert_double_equal(c.r[0], 1000.5, 0);
	assert_double_equal(c.r[4], 0.05, 0);
	assert_int_equal(c.calibrated, 1);
	assert_int_equal(c.hw, 9173);
	assert_int_equal(c.have_ia, 0);
	assert_int_equal(c.unknown_keys, 1);
	assert_int_equal(c.r_defaulted, 0);
	/* Not complete until END has arrived. */
	assert_int_equal(ppk2_meta_parse(good_meta, 40, &c, "sim", &err), 1);
	/* R2 = 0 and R4 absent: the documented defaults. */
	char *m = replace(good_meta, "R2: 10.5", "R2: 0");
	char *m2 = replace(m, "R4: 0.05", "R4: -nan");
	assert_int_equal(ppk2_meta_parse(m2, strlen(m2), &c, "sim", &err), 0);
	assert_int_equal(c.r_defaulted, (1u << 2) | (1u << 4));
	assert_double_equal(c.r[2], 10.15, 0);
	assert_double_equal(c.r[4], 0.043, 0);
	assert_double_equal(c.r[1], 100.25, 0);
	free(m);
	free(m2);
}

static void metadata_faults(void **state)
{
	(void)state;
	struct ppk2_cal c;
	struct ergon_err err = {0};
	/* A missing key and a -nan gain keep the app's defaults (GS = UG =
	 * 1), flagged key by key. */
	char *m = replace(good_meta, "GS2: 0\n", "");
	char *m2 = replace(m, "UG1: 1.5", "UG1: -nan");
	assert_int_equal(ppk2_meta_parse(m2, strlen(m2), &c, "sim", &err), 0);
	assert_double_equal(c.gs[2], 1.0, 0);
	assert_double_equal(c.ug[1], 1.0, 0);
	assert_double_equal(c.ug[0], 1.0, 0);
	assert_int_equal(c.defaulted, PPK2_CAL_BIT(PPK2_CAL_GS, 2) | PPK2_CAL_BIT(PPK2_CAL_UG, 1));
	assert_int_equal(c.r_defaulted, 0);
	char names[64];
	ppk2_cal_key_names(c.defaulted, names, sizeof(names));
	assert_string_equal(names, "GS2, UG1");
	free(m);
	free(m2);
	/* One damaged line each: refused, the message names what and where. */
	static const struct {
		const char *from, *to, *says;
	} bad[] = {
	    {"O3: 0", "O3 0 \x01\x02", "line 20"},    /* garbled line */
	    {"GI3: 1", "GI3: inf", "GI3"},	      /* not a number */
	    {"S1: 0\n", "S1: 0\nS1: 0.5\n", "twice"}, /* duplicate */
	    {"UG3: 1", "UG3: 0", "range 3"},	      /* all-zero gain */
	    /* Out of range: refused with the key and the value, never
	     * converted (HW into an integer was undefined, UBSan). */
	    {"HW: 9173", "HW: 1e61", "HW has the value '1e61', out of range"},
	    {"HW: 9173", "HW: -1", "HW has the value '-1', out of range"},
	    {"HW: 9173", "HW: 9173.5", "HW has the value '9173.5', out of range"},
	    {"HW: 9173", "HW: 4294967296", "HW has the value '4294967296', out of range"},
	    {"GI1: 1", "GI1: 1e13", "GI1 has the value '1e13', out of range"},
	    {"O4: 0", "O4: -2e12", "O4 has the value '-2e12', out of range"},
	    {"IA: -nan", "IA: 1e300", "IA has the value '1e300', out of range"},
	    {"R2: 10.5", "R2: 1e-9", "R2 has the value '1e-9', out of range"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err = (struct ergon_err){0};
		m = replace(good_meta, bad[k].from, bad[k].to);
		assert_int_equal(ppk2_meta_parse(m, strlen(m), &c, "sim", &err), ERGON_EPARSE);
		if (strstr(err.msg, bad[k].says) == NULL)
			fail_msg("case %zu: '%s' not in: %s", k, bad[k].says, err.msg);
		free(m);
	}
	/* The largest HW a u32 holds is a hardware revision still. */
	m = replace(good_meta, "HW: 9173", "HW: 4294967295");
	assert_int_equal(ppk2_meta_parse(m, strlen(m), &c, "sim", &err), 0);
	assert_int_equal(c.hw, 4294967295u);
	free(m);
	/* No END within the limit. */
	char *big = malloc(PPK2_META_MAX + 10);
	memset(big, 'x', PPK2_META_MAX + 10);
	assert_int_equal(ppk2_meta_parse(big, PPK2_META_MAX + 10, &c, "sim", &err), ERGON_ETOOBIG);
	free(big);
}

static void put(uint8_t *b, uint32_t w)
{
	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
	b[2] = (uint8_t)(w >> 16);
	b[3] = (uint8_t)(w >> 24);
}

static void decoder_gaps_and_splits(void **state)
{
	(void)state;
	struct ppk2_cal c = identity_cal();
	struct ppk2_decoder d;
	ppk2_decoder_init(&d, &c, 3000);
	/* Counters 62, 63, 0, 3 (two lost), range 2, raw 100, logic = k. */
	uint8_t b[16];
	const unsigned ctr[4] = {62, 63, 0, 3};
	for (int i = 0; i < 4; i++)
		put(b + 4 * i, (uint32_t)i << 24 | ctr[i] << 18 | 2u << 14 | 100u);
	struct ppk2_sample out[8];
	size_t used = 0, n = 0;
	/* Split mid-word: 6 bytes, then the rest. */
	n += ppk2_decode(&d, b, 6, out, 8, &used, NULL, NULL);
	assert_int_equal(used, 6);
	assert_int_equal(n, 1);
	n += ppk2_decode(&d, b + 6, 10, out + n, 8 - n, &used, NULL, NULL);
	assert_int_equal(used, 10);
	assert_int_equal(n, 4);
	assert_int_equal(out[2].index, 2);
	assert_int_equal(out[3].index, 5); /* samples 3 and 4 were lost */
	assert_int_equal(out[3].logic, 3);
	assert_int_equal(d.dropped, 2);
	assert_int_equal(d.gaps, 1);
	assert_double_equal(out[0].current_a, (float)(100 * STEP_V / 10.15), 1e-9);
	/* A range field of 5..7 is not a current: NaN, counted. */
	put(b, 4u << 18 | 6u << 14 | 100u);
	n = ppk2_decode(&d, b, 4, out, 8, &used, NULL, NULL);
	assert_int_equal(n, 1);
	assert_true(isnan(out[0].current_a));
	assert_int_equal(d.bad_range, 1);
}

/* A calibration that is not the identity on ranges 1, 3 and 4 (GS3 and
 * I0 absent: the app's defaults 1 and 0), for the hand-worked stream. */
static const char *hand_meta = "Calibrated: 1\n"
			       "R0: 1025.3\nR1: 101.2\nR2: 10.21\nR3: 0.9412\nR4: 0.0431\n"
			       "GS0: 0.0005\nGS1: 0.0123\nGS2: -0.0007\nGS4: -0.0042\n"
			       "GI0: 1.0021\nGI1: 0.9987\nGI2: 1.0004\nGI3: 1.0005\nGI4: 1.0013\n"
			       "O0: 21.5\nO1: 12.5\nO2: -4.25\nO3: 7\nO4: -3\n"
			       "S0: 3.1e-9\nS1: -1.2e-6\nS2: 4.4e-6\nS3: 0\nS4: 2.1e-5\n"
			       "I0: -nan\nI1: 3.4e-7\nI2: -2.2e-6\nI3: 0\nI4: -1.1e-5\n"
			       "UG0: 0.9991\nUG1: 1.0021\nUG2: 1.0007\nUG3: 1\nUG4: 0.9968\n"
			       "HW: 9173\nIA: 56\nEND\n";

/* The same calibration for the rules' reference (ts_ppk2_rules.c). */
static void hand_rules_cal(struct ts_ppk2_rules_cal *c)
{
	static const struct ts_ppk2_rules_cal k = {
	    .r = {1025.3, 101.2, 10.21, 0.9412, 0.0431},
	    .gs = {0.0005, 0.0123, -0.0007, 1, -0.0042},
	    .gi = {1.0021, 0.9987, 1.0004, 1.0005, 1.0013},
	    .o = {21.5, 12.5, -4.25, 7, -3},
	    .s = {3.1e-9, -1.2e-6, 4.4e-6, 0, 2.1e-5},
	    .i = {0, 3.4e-7, -2.2e-6, 0, -1.1e-5},
	    .ug = {0.9991, 1.0021, 1.0007, 1, 0.9968},
	};
	*c = k;
}

static size_t decode_words(struct ppk2_decoder *d, const uint16_t *adc, const uint8_t *range,
			   size_t n, struct ppk2_sample *out, size_t chunk)
{
	uint8_t *b = malloc(4 * n);
	for (size_t k = 0; k < n; k++)
		put(b + 4 * k, (uint32_t)((k & 63u) << 18 | (unsigned)range[k] << 14 | adc[k]));
	size_t got = 0, p = 0, used = 0;
	while (p < 4 * n) {
		size_t len = 4 * n - p < chunk ? 4 * n - p : chunk;
		got += ppk2_decode(d, b + p, len, out + got, n - got, &used, NULL, NULL);
		p += used;
	}
	free(b);
	return got;
}

/* Nordic's app's rule, worked out by hand (with Python's IEEE doubles,
 * outside ergon) on ten samples: range 1, a switch to range 4 (its first
 * two samples restore both averages, so the 3.47 mA average shows twice,
 * then a4 = 0.06 x 0.31080 + 0.94 x 3.4721e-3 = 0.021912 A), then range
 * 4 unfiltered, then a switch to range 3 (a for three samples). VDD_V 3.3.
 *   k r adc   I (A)               a after k           shown (float)
 *   0 1 8000  0.0034718703574781  0.0034718703574781  0.00347187044
 *   1 1 8010  0.0034762166137098  0.0034726526835998  0.00347621669 (I)
 *   2 4 300   0.305729084643646   restored            0.00347213121 (a4)
 *   3 4 310   0.315879182904089   restored            0.00347213121 (a4)
 *   4 4 305   0.310804242583640   0.0587923388656071  0.021912057 (a4)
 *   5 4 306   0.311819248057294   0.104337182520111   0.311819255 (I)
 *   6 3 2000  0.102051238183957   0.103925712539603   0.103925712 (a)
 *   7 3 2004  0.102272979218710   0.103628220541842   0.103628218 (a)
 *   8 3 2001  0.102106666902573   0.103354340886774   0.103354342 (a)
 *   9 3 1999  0.101995813825389   0.103109806015725   0.101995811 (I) */
static void decoder_hand_worked(void **state)
{
	(void)state;
	struct ppk2_cal c;
	struct ergon_err err = {0};
	assert_int_equal(ppk2_meta_parse(hand_meta, strlen(hand_meta), &c, "sim", &err), 0);
	assert_int_equal(c.defaulted, PPK2_CAL_BIT(PPK2_CAL_GS, 3) | PPK2_CAL_BIT(PPK2_CAL_I, 0));
	assert_double_equal(c.gs[3], 1.0, 0);
	assert_double_equal(c.i[0], 0.0, 0);
	const uint16_t adc[10] = {8000, 8010, 300, 310, 305, 306, 2000, 2004, 2001, 1999};
	const uint8_t range[10] = {1, 1, 4, 4, 4, 4, 3, 3, 3, 3};
	const float want[10] = {0.00347187044f, 0.00347621669f, 0.00347213121f, 0.00347213121f,
				0.021912057f,	0.311819255f,	0.103925712f,	0.103628218f,
				0.103354342f,	0.101995811f};
	struct ppk2_decoder d;
	ppk2_decoder_init(&d, &c, 3300);
	struct ppk2_sample out[10];
	assert_int_equal(decode_words(&d, adc, range, 10, out, 40), 10);
	for (int k = 0; k < 10; k++)
		if (out[k].current_a != want[k])
			fail_msg("sample %d: %.9g, worked by hand %.9g", k, out[k].current_a,
				 want[k]);
	assert_int_equal(d.filtered, 6);
	/* The same words with the filter off: every sample is its own
	 * current (I in the table, to the float). */
	ppk2_decoder_init(&d, &c, 3300);
	d.spike_filter = 0;
	assert_int_equal(decode_words(&d, adc, range, 10, out, 40), 10);
	const double raw[10] = {0.0034718703574781, 0.0034762166137098, 0.305729084643646,
				0.315879182904089,  0.310804242583640,	0.311819248057294,
				0.102051238183957,  0.102272979218710,	0.102106666902573,
				0.101995813825389};
	for (int k = 0; k < 10; k++)
		assert_double_equal(out[k].current_a, (float)raw[k], 0);
	assert_int_equal(d.filtered, 0);
}

/* Into and out of every range: the ranges visit every ordered pair
 * (i, j), i != j, of 0..4 (an Euler circuit of the 20 pairs), each dwell
 * 1..6 samples so that switches also fall inside the three samples of the
 * one before, with ADC values from a fixed LCG; the decoder equals the
 * rules' reference (tests/support/ts_ppk2_rules.c, written from the
 * issue's text) sample by sample, to the float, filter on and off, fed
 * whole and in 7-byte pieces. */
static void decoder_app_rules_every_switch(void **state)
{
	(void)state;
	static const uint8_t circuit[21] = {0, 1, 0, 2, 0, 3, 0, 4, 1, 2, 1,
					    3, 1, 4, 2, 3, 2, 4, 3, 4, 0};
	enum { N = 4000 };
	uint16_t *adc = malloc(N * sizeof(*adc));
	uint8_t *range = malloc(N);
	size_t n = 0;
	uint32_t lcg = 12345;
	unsigned pairs[5][5] = {{0}};
	for (unsigned lap = 0; n < N; lap++)
		for (unsigned v = 0; v < 21 && n < N; v++) {
			unsigned dwell = 1 + (lap * 21 + v) % 6;
			for (unsigned j = 0; j < dwell && n < N; j++) {
				lcg = lcg * 1103515245u + 12345u;
				adc[n] = (uint16_t)(200 + (lcg >> 16) % 16000);
				range[n] = circuit[v];
				if (n > 0 && range[n] != range[n - 1])
					pairs[range[n - 1]][range[n]]++;
				n++;
			}
		}
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++)
			if (i != j && pairs[i][j] == 0)
				fail_msg("no switch %d -> %d in the stream", i, j);
	struct ppk2_cal c;
	struct ergon_err err = {0};
	assert_int_equal(ppk2_meta_parse(hand_meta, strlen(hand_meta), &c, "sim", &err), 0);
	struct ts_ppk2_rules_cal rc;
	hand_rules_cal(&rc);
	float *want = malloc(N * sizeof(*want));
	struct ppk2_sample *out = malloc(N * sizeof(*out));
	size_t filtered_seen = 0;
	for (int filter = 0; filter < 2; filter++)
		for (int pieces = 0; pieces < 2; pieces++) {
			ts_ppk2_rules_decode(&rc, 3.3, adc, range, N, filter, want);
			struct ppk2_decoder d;
			ppk2_decoder_init(&d, &c, 3300);
			d.spike_filter = filter;
			assert_int_equal(decode_words(&d, adc, range, N, out, pieces ? 7 : 4 * N),
					 N);
			size_t differ = 0;
			for (size_t k = 0; k < N; k++)
				if (memcmp(&out[k].current_a, &want[k], sizeof(float)) != 0) {
					if (differ++ < 5)
						print_message("sample %zu (range %u): %.9g, the "
							      "rules %.9g\n",
							      k, range[k], out[k].current_a,
							      want[k]);
				}
			if (differ)
				fail_msg("%zu of %d samples differ from the app's rules "
					 "(filter %d)",
					 differ, N, filter);
			if (filter)
				filtered_seen = d.filtered;
		}
	/* The filter acted: about half the samples are within three of a
	 * switch with dwells of 1..6. */
	assert_true(filtered_seen > N / 3);
	free(adc);
	free(range);
	free(want);
	free(out);
}

/* ---- the host-clock check, on series worked out here ---------------- */

/* A PPK2 at 100 kSPS read by a host whose clock runs (1 + ppm 1e-6) times
 * the device's: a read every 1 ms of host time brings every sample made up
 * to `latency` before it, less the samples lost so far and not yet found.
 * The latency is 0.2..0.4 ms, and 2..8 ms on one read in ten (a late
 * host), plus `late_s` inside [late_from_s, late_to_s) of device time;
 * every seventh read did not drain the port and brings a lag of 50 ms. */
struct series {
	double ppm, late_s, late_from_s, late_to_s, seconds;
	double wander_s, wander_period_s; /* a floor that wanders: + wander |sin| */
	double loss_at_s[4];
	uint64_t loss_len[4];
	size_t n_loss;
	/* results */
	uint64_t found[8], found_at[8], found_from[8];
	size_t n_found;
	struct ppk2_clock_check cc;
};

static void run_series(struct series *z)
{
	ppk2_clock_check_init(&z->cc, 100000.0);
	uint32_t lcg = 99;
	uint64_t accounted = 0;
	for (uint64_t r = 0;; r++) {
		double t_host = 10.0 + (double)r * 1e-3;
		double t_dev = (t_host - 10.0) / (1.0 + z->ppm * 1e-6);
		if (t_dev > z->seconds)
			break;
		lcg = lcg * 1103515245u + 12345u;
		unsigned u = (lcg >> 16) & 0x7fffu;
		double lat = 2e-4 + 2e-4 * (double)(u % 1000) / 1000.0;
		if (u % 10 == 0)
			lat = 2e-3 + 6e-3 * (double)(u % 977) / 977.0;
		int drained = r % 7 != 3;
		if (!drained)
			lat = 0.05;
		if (t_dev >= z->late_from_s && t_dev < z->late_to_s)
			lat += z->late_s;
		if (z->wander_s > 0)
			lat += z->wander_s * fabs(sin(2 * M_PI * t_dev / z->wander_period_s));
		double made_s = t_dev - lat;
		if (made_s < 0)
			continue;
		uint64_t made = (uint64_t)(made_s * 100000.0);
		uint64_t lost = 0;
		for (size_t i = 0; i < z->n_loss; i++)
			if (made_s >= z->loss_at_s[i])
				lost += z->loss_len[i];
		uint64_t index = made - lost + accounted;
		uint64_t from = 0;
		uint64_t got = ppk2_clock_check_feed(&z->cc, t_host, index, drained, &from);
		if (got) {
			accounted += got;
			if (z->n_found < 8) {
				z->found[z->n_found] = got;
				z->found_at[z->n_found] = index;
				z->found_from[z->n_found] = from;
			}
			z->n_found++;
		}
	}
}

static void clock_check_series(void **state)
{
	(void)state;
	/* Jitter, late reads, a drift of +-150 ppm, 20 s: nothing lost. */
	for (int sign = -1; sign <= 1; sign += 2) {
		struct series z = {.ppm = 150.0 * sign, .seconds = 20};
		run_series(&z);
		assert_int_equal(z.n_found, 0);
		assert_int_equal(z.cc.inconclusive, 0);
		assert_true(z.cc.draining_reads > 17000);
	}
	/* A drift of +-500 ppm (what NTP's slew could add to CLOCK_MONOTONIC,
	 * which the driver does not use): still nothing. */
	for (int sign = -1; sign <= 1; sign += 2) {
		struct series z = {.ppm = 500.0 * sign, .seconds = 20};
		run_series(&z);
		assert_int_equal(z.n_found, 0);
	}
	/* A floor that wanders slowly by up to 1.5 ms (a loaded host), with
	 * a loss of 128 at 6 s in it: no loss is guessed from a floor that
	 * is not steady; what cannot be told is counted as inconclusive. */
	struct series wander = {.seconds = 20,
				.wander_s = 1.5e-3,
				.wander_period_s = 14,
				.loss_at_s = {6.0},
				.loss_len = {128},
				.n_loss = 1};
	run_series(&wander);
	for (size_t i = 0; i < wander.n_found && i < 8; i++)
		if (wander.found[i] != 128)
			fail_msg("wandering floor: %llu samples guessed lost",
				 (unsigned long long)wander.found[i]);
	assert_int_equal(wander.n_found, 0);
	assert_true(wander.cc.inconclusive >= 1);
	/* A host late by 4 ms for 0.9 s (shorter than the 1 s to confirm):
	 * nothing lost, the run cancelled. */
	struct series late = {.seconds = 8, .late_s = 4e-3, .late_from_s = 3.0, .late_to_s = 3.9};
	run_series(&late);
	assert_int_equal(late.n_found, 0);
	assert_true(late.cc.cancelled >= 1);
	/* Losses of 64 at 3.0 s, 192 at 9.0 s and 64 at 9.4 s (inside the
	 * confirmation of the one before): found in whole blocks, the first
	 * 1 s after it, the two close ones together (256) 1 s after the
	 * second; each span holds its losses. */
	struct series z = {.ppm = 80,
			   .seconds = 14,
			   .loss_at_s = {3.0, 9.0, 9.4},
			   .loss_len = {64, 192, 64},
			   .n_loss = 3};
	run_series(&z);
	assert_int_equal(z.n_found, 2);
	assert_int_equal(z.found[0], 64);
	assert_int_equal(z.found[1], 256);
	assert_int_equal(z.cc.lost_samples, 320);
	/* Where: the span [from, at) starts at the last read at the floor, a
	 * few ms before the (first) loss (the index space differs from the
	 * device's by the blocks not yet found: at most 256 here), and ends
	 * where it was found, 1 s of reads after the (last) loss. */
	const double first_s[2] = {3.0, 9.0}, last_s[2] = {3.0, 9.4};
	for (int i = 0; i < 2; i++) {
		double d0 = first_s[i] * 100000.0, d1 = last_s[i] * 100000.0;
		double from = (double)z.found_from[i], at = (double)z.found_at[i];
		if (!(from <= d0 + 256 && from >= d0 - 1500 - 256))
			fail_msg("loss %d at sample %.0f: its span starts at %.0f", i, d0, from);
		double after_s = (at - d1) / 100000.0;
		if (!(after_s >= 0.99 && after_s < 1.3))
			fail_msg("loss %d found %.3f s after it", i, after_s);
	}
	/* A latency that rises by 1 ms (100 samples, not whole blocks) for 3
	 * s: not a loss; inconclusive, and the level starts afresh. */
	struct series shift = {.seconds = 10, .late_s = 1e-3, .late_from_s = 4, .late_to_s = 7};
	run_series(&shift);
	assert_int_equal(shift.n_found, 0);
	assert_int_equal(shift.cc.inconclusive, 1);
	/* A loss in the last half second: not confirmed, only pending. */
	struct series tail = {.seconds = 6, .loss_at_s = {5.6}, .loss_len = {128}, .n_loss = 1};
	run_series(&tail);
	assert_int_equal(tail.n_found, 0);
	double pend = ppk2_clock_check_pending(&tail.cc);
	if (!(pend > 100 && pend < 150))
		fail_msg("pending step %.1f samples, expected about 128", pend);
}

/* ---- against the simulator ------------------------------------------ */

static double wave_current(uint64_t k, void *ctx)
{
	(void)ctx;
	return k < 50000 ? 0.003 : 0.010;
}

static int wave_range(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 2;
}

static uint8_t wave_logic(uint64_t k, void *ctx)
{
	(void)ctx;
	/* Gate on D3 for samples [20000, 70000); D0 toggles every sample. */
	return (uint8_t)((k >= 20000 && k < 70000 ? 0x08 : 0) | (k & 1));
}

static struct ergon_instrument *open_sim(const char *path, const char *const *kv, int *rc,
					 struct ergon_err *err)
{
	char spec[200];
	snprintf(spec, sizeof(spec), "ppk2:%s", path);
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	*rc = ergon_instrument_open(spec, &o, &inst, err);
	return inst;
}

/* Read until `want` samples or an error / 2 s of silence. */
static size_t read_all(struct ergon_instrument *inst, struct ergon_sample *all, size_t want,
		       int *rc, struct ergon_err *err)
{
	size_t total = 0;
	int idle = 0;
	*rc = 0;
	while (total < want && idle < 100) {
		size_t n = 0;
		size_t cap = want - total < 4096 ? want - total : 4096;
		*rc = ergon_instrument_read(inst, all + total, cap, &n, err);
		if (*rc)
			break;
		idle = n ? 0 : idle + 1;
		total += n;
	}
	return total;
}

static void sim_waveform_energy_and_gate(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg cfg = {
	    .current_a = wave_current, .range = wave_range, .logic = wave_logic, .samples = 100000};
	const char *path = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&cfg, &path);
	assert_non_null(sim);
	const char *kv[] = {"vdd_mv=3000", NULL};
	struct ergon_err err = {0};
	int rc;
	struct ergon_instrument *inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample *all = calloc(100000, sizeof(*all));
	size_t n = read_all(inst, all, 100000, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 100000);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	/* By hand: 3 mA on 10.15 ohm is 0.03045 V = 692.9 steps of
	 * 4.39453125e-5 V -> 693; 10 mA -> 0.1015 V = 2309.7 -> 2310. */
	double i1 = 693 * STEP_V / 10.15, i2 = 2310 * STEP_V / 10.15;
	double e_want = (50000 * i1 + 50000 * i2) * 3.0 / 100000.0;
	double e_gate_want = (30000 * i1 + 20000 * i2) * 3.0 / 100000.0;
	double e = 0, e_gate = 0;
	for (size_t k = 0; k < n; k++) {
		double p = all[k].power_w;
		e += p / 100000.0;
		if (all[k].digital & 0x08)
			e_gate += p / 100000.0;
		assert_int_equal(all[k].digital & 1, k & 1);
	}
	assert_double_equal(e, e_want, 1e-9);
	assert_double_equal(e_gate, e_gate_want, 1e-9);
	/* 1.51 s of 3 mA/10 mA at 3 V, roughly: 0.0195 J (a sanity anchor). */
	assert_double_equal(e_want, 0.0195, 2e-4);
	assert_double_equal(all[99999].t_s - all[0].t_s, 0.99999, 1e-9);
	/* Identity. */
	assert_int_equal(inst->identity.provenance, ERGON_PROV_SYNTHETIC);
	assert_double_equal(inst->identity.sample_rate_hz, 100000, 0);
	assert_non_null(
	    strstr(inst->identity.notes, "validated against a protocol simulator only"));
	assert_non_null(strstr(inst->identity.notes, "spike filter applied"));
	assert_non_null(strstr(inst->identity.notes, "ampere meter mode at 3000 mV"));
	assert_int_equal(json_array_size(inst->issues), 0);
	ergon_instrument_close(inst);
	struct ts_ppk2_sim_state st;
	ts_ppk2_sim_state(sim, &st);
	assert_int_equal(st.mode, 1);
	assert_int_equal(st.vdd_mv, 3000);
	assert_int_equal(st.dut_power, -1); /* ampere mode leaves DUT power alone */
	assert_int_equal(st.metadata_requests, 1);
	assert_true(st.stops >= 2);
	ts_ppk2_sim_stop(sim);
	free(all);
}

static void sim_gaps_reported_never_filled(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg cfg = {.current_a = wave_current,
				      .range = wave_range,
				      .samples = 60000,
				      .n_gaps = 3,
				      .gap_at = {30000, 40000, 50000},
				      .gap_len = {40, 17, 63}};
	const char *path = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&cfg, &path);
	const char *kv[] = {"vdd_mv=1800", NULL};
	struct ergon_err err = {0};
	int rc;
	struct ergon_instrument *inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample *all = calloc(60000, sizeof(*all));
	size_t n = read_all(inst, all, 60000, &rc, &err);
	assert_int_equal(rc, 0);
	/* 40 lost at 30000, 17 at 40000, and 63 at 50000, which reads as a
	 * repeated counter (the most a 6-bit counter can tell). */
	assert_int_equal(n, 60000 - 120);
	assert_double_equal(all[30000].t_s - all[29999].t_s, 41 / 100000.0, 1e-9);
	assert_double_equal(all[49943].t_s - all[49942].t_s, 64 / 100000.0, 1e-9);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_true(ergon_issue_has(inst->issues, "instrument.samples_dropped"));
	json_t *iss = json_array_get(inst->issues, 0);
	json_t *ctx = json_object_get(iss, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "dropped_samples")), 120);
	json_t *g0 = json_array_get(json_object_get(ctx, "first_gaps"), 0);
	assert_int_equal(json_integer_value(json_object_get(g0, "sample_index")), 30000);
	assert_double_equal(json_real_value(json_object_get(g0, "duration_s")), 0.0004, 1e-12);
	ergon_instrument_close(inst);
	ts_ppk2_sim_stop(sim);
	free(all);
}

/* The host-clock check end to end: a simulator that is the host's clock
 * (8 words a write, the clock at the device time sent), losses of 64 at
 * sample 20,000, 128 at 150,000 and 69 at 280,000 (the counter shows 5 of
 * them): the counter alone reads 5 dropped; the driver finds the other 256
 * in whole blocks, 1 s of stream after each, and reports them as lost
 * samples (a time gap: NaN in a recording), never filled. Then a host
 * late by 5 ms for 0.5 s and latency 1 ms higher for 1.5 s: nothing lost. */
static double late_host(uint64_t k, void *ctx)
{
	(void)ctx;
	if (k >= 100000 && k < 150000)
		return 5e-3;
	if (k >= 200000 && k < 350000)
		return 1e-3;
	return 0;
}

static void sim_clock_finds_whole_blocks(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg cfg = {.current_a = wave_current,
				      .range = wave_range,
				      .samples = 420000,
				      .n_gaps = 3,
				      .gap_at = {20000, 150000, 280000},
				      .gap_len = {64, 128, 69},
				      .clocked = 1,
				      .clock_ppm = 60};
	const char *path = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&cfg, &path);
	assert_non_null(sim);
	ergon_clock_set(ts_ppk2_sim_clock(sim));
	const char *kv[] = {"vdd_mv=1800", NULL};
	struct ergon_err err = {0};
	int rc;
	struct ergon_instrument *inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	size_t want = 420000 - 261;
	struct ergon_sample *all = calloc(want, sizeof(*all));
	size_t n = read_all(inst, all, want, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(n, want);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	/* Every sample's time is its device index: the blocks were placed
	 * where found, so each loss is a time gap of its size, up to the
	 * ~1 s it took to find it. */
	double t0 = all[0].t_s;
	uint64_t last = (uint64_t)llround((all[n - 1].t_s - t0) * 100000.0);
	assert_int_equal(last, 420000 - 1);
	uint64_t jumps = 0, jumped = 0;
	for (size_t i = 1; i < n; i++) {
		uint64_t d = (uint64_t)llround((all[i].t_s - all[i - 1].t_s) * 100000.0);
		if (d > 1) {
			jumps++;
			jumped += d - 1;
		}
	}
	assert_int_equal(jumped, 261);
	json_t *iss = json_array_get(inst->issues, 0);
	assert_string_equal(json_string_value(json_object_get(iss, "code")),
			    "instrument.samples_dropped");
	json_t *ctx = json_object_get(iss, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "dropped_samples")), 261);
	assert_int_equal(json_integer_value(json_object_get(ctx, "counter_dropped_samples")), 5);
	assert_int_equal(json_integer_value(json_object_get(ctx, "host_clock_dropped_samples")),
			 256);
	json_t *gaps = json_object_get(ctx, "first_gaps");
	/* The counter's 5 at 280,000, the clock's 64, 128 and 64 (the 69's
	 * blocks), each found 1..1.3 s after its loss and spanning it. */
	const uint64_t loss_at[3] = {20000, 150000, 280000}, blocks[3] = {64, 128, 64};
	size_t seen = 0;
	size_t gi;
	json_t *g;
	json_array_foreach(gaps, gi, g)
	{
		const char *by = json_string_value(json_object_get(g, "found_by"));
		uint64_t at = (uint64_t)json_integer_value(json_object_get(g, "sample_index"));
		uint64_t len = (uint64_t)json_integer_value(json_object_get(g, "samples"));
		if (strcmp(by, "sample_counter") == 0) {
			assert_int_equal(len, 5);
			continue;
		}
		assert_true(seen < 3);
		assert_int_equal(len, blocks[seen]);
		json_t *span = json_object_get(g, "lost_between_samples");
		uint64_t from = (uint64_t)json_integer_value(json_array_get(span, 0));
		if (!(from <= loss_at[seen] + 256 && from + 2000 >= loss_at[seen] &&
		      at >= loss_at[seen] + 99000 && at <= loss_at[seen] + 130000))
			fail_msg("block %zu: lost in [%llu, %llu), the loss was at %llu", seen,
				 (unsigned long long)from, (unsigned long long)at,
				 (unsigned long long)loss_at[seen]);
		seen++;
	}
	assert_int_equal(seen, 3);
	assert_non_null(
	    strstr(json_string_value(json_object_get(iss, "message")), "whole 64-sample blocks"));
	json_t *st = ergon_instrument_stats(inst);
	json_t *cc = json_object_get(st, "host_clock_check");
	assert_int_equal(json_integer_value(json_object_get(cc, "losses")), 3);
	json_decref(st);
	ergon_instrument_close(inst);
	ergon_clock_set(NULL);
	ts_ppk2_sim_stop(sim);
	free(all);

	/* A late host, no loss: nothing found, nothing dropped. */
	struct ts_ppk2_sim_cfg late = {.current_a = wave_current,
				       .range = wave_range,
				       .samples = 420000,
				       .clocked = 1,
				       .clock_ppm = -60,
				       .clock_late_s = late_host};
	sim = ts_ppk2_sim_start(&late, &path);
	assert_non_null(sim);
	ergon_clock_set(ts_ppk2_sim_clock(sim));
	err = (struct ergon_err){0};
	inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	all = calloc(420000, sizeof(*all));
	n = read_all(inst, all, 420000, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 420000);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_false(ergon_issue_has(inst->issues, "instrument.samples_dropped"));
	st = ergon_instrument_stats(inst);
	cc = json_object_get(st, "host_clock_check");
	assert_int_equal(json_integer_value(json_object_get(cc, "losses")), 0);
	assert_int_equal(json_integer_value(json_object_get(cc, "inconclusive_steps")), 1);
	json_decref(st);
	ergon_instrument_close(inst);
	ergon_clock_set(NULL);
	ts_ppk2_sim_stop(sim);
	free(all);
}

static void sim_unplug_keeps_samples(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg cfg = {
	    .current_a = wave_current, .range = wave_range, .disconnect_after = 40000};
	const char *path = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&cfg, &path);
	const char *kv[] = {"vdd_mv=3300", "mode=source", NULL};
	struct ergon_err err = {0};
	int rc;
	struct ergon_instrument *inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample *all = calloc(100000, sizeof(*all));
	size_t n = read_all(inst, all, 100000, &rc, &err);
	assert_int_equal(rc, ERGON_EDEVICE);
	assert_int_equal(n, 40000);
	assert_non_null(strstr(err.msg, "disconnected after 40000 samples"));
	assert_true(ergon_issue_has(inst->issues, "instrument.disconnected"));
	struct ts_ppk2_sim_state st;
	ts_ppk2_sim_state(sim, &st);
	assert_int_equal(st.mode, 2);
	assert_int_equal(st.vdd_mv, 3300);
	assert_int_equal(st.dut_power, 1); /* source mode powers the target */
	assert_non_null(strstr(inst->identity.notes, "source meter mode at 3300 mV"));
	ergon_instrument_close(inst);
	ts_ppk2_sim_stop(sim);
	free(all);
}

static void sim_bad_calibration_issue(void **state)
{
	(void)state;
	const double r[5] = {1031.64, 0, 10.15, 0.94, 0.043};
	struct ts_ppk2_sim_cfg cfg = {.metadata = ts_ppk2_identity_metadata(r)};
	const char *path = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&cfg, &path);
	const char *kv[] = {"vdd_mv=3300", NULL};
	struct ergon_err err = {0};
	int rc;
	struct ergon_instrument *inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	assert_true(ergon_issue_has(inst->issues, "instrument.calibration_defaulted"));
	ergon_instrument_close(inst);
	ts_ppk2_sim_stop(sim);
	/* All shunts 0 (the all-zero calibration): every range falls back. */
	const double rz[5] = {0, 0, 0, 0, 0};
	cfg.metadata = ts_ppk2_identity_metadata(rz);
	sim = ts_ppk2_sim_start(&cfg, &path);
	err = (struct ergon_err){0};
	inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, 0);
	json_t *ctx = json_object_get(json_array_get(inst->issues, 0), "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "ranges_mask")), 0x1f);
	ergon_instrument_close(inst);
	ts_ppk2_sim_stop(sim);
	/* Still streaming from an earlier session: stopped and drained. */
	struct ts_ppk2_sim_cfg busy = {.current_a = wave_current, .streaming_at_start = 1};
	sim = ts_ppk2_sim_start(&busy, &path);
	err = (struct ergon_err){0};
	inst = open_sim(path, kv, &rc, &err);
	if (rc)
		fail_msg("open of a streaming PPK2: %s", err.msg);
	ergon_instrument_close(inst);
	ts_ppk2_sim_stop(sim);
	/* Garbled: open refuses and names the line. */
	cfg.metadata = "Calibrated: 1\nR0 1031\nEND\n";
	sim = ts_ppk2_sim_start(&cfg, &path);
	err = (struct ergon_err){0};
	inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, ERGON_EPARSE);
	assert_null(inst);
	assert_non_null(strstr(err.msg, "line 2"));
	ts_ppk2_sim_stop(sim);
	/* A port that never answers is not a PPK2. */
	cfg.metadata = NULL;
	cfg.mute = 1;
	sim = ts_ppk2_sim_start(&cfg, &path);
	err = (struct ergon_err){0};
	inst = open_sim(path, kv, &rc, &err);
	assert_int_equal(rc, ERGON_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "not a PPK2"));
	ts_ppk2_sim_stop(sim);
}

static void selection_rules(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg cfg = {0};
	const char *p1 = NULL, *p2 = NULL;
	struct ts_ppk2_sim *s1 = ts_ppk2_sim_start(&cfg, &p1);
	struct ts_ppk2_sim *s2 = ts_ppk2_sim_start(&cfg, &p2);
	const char *kv[] = {"vdd_mv=3300", NULL};
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	/* None. */
	setenv("ERGON_PPK2_PORTS", "", 1);
	assert_int_equal(ergon_instrument_open("ppk2", &o, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "no PPK2 found"));
	/* Two, no serial: refused, both listed. */
	char *env = ts_strf("%s=AAA111,%s=BBB222", p1, p2);
	setenv("ERGON_PPK2_PORTS", env, 1);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("ppk2", &o, &inst, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "2 PPK2s found"));
	assert_non_null(strstr(err.msg, "AAA111"));
	assert_non_null(strstr(err.msg, "BBB222"));
	/* By serial. */
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("ppk2:serial=BBB222", &o, &inst, &err), 0);
	assert_string_equal(inst->identity.serial, "BBB222");
	ergon_instrument_close(inst);
	struct ts_ppk2_sim_state st1, st2;
	ts_ppk2_sim_state(s1, &st1);
	ts_ppk2_sim_state(s2, &st2);
	assert_int_equal(st1.metadata_requests, 0);
	assert_int_equal(st2.metadata_requests, 1);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("ppk2:serial=CCC", &o, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "AAA111"));
	/* The scan lists both. */
	const struct ergon_instrument_driver *d = ergon_instrument_find("ppk2");
	json_t *found = NULL;
	assert_int_equal(d->scan(&o, &found, &err), 0);
	assert_int_equal(json_array_size(found), 2);
	json_decref(found);
	/* Options are checked. */
	const char *bad[] = {"vdd_mv=6000", NULL};
	struct ergon_instrument_options ob = {.kv = bad};
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("ppk2:serial=AAA111", &ob, &inst, &err),
			 ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "800..5000"));
	struct ergon_instrument_options none = {0};
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("ppk2:serial=AAA111", &none, &inst, &err),
			 ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "vdd_mv"));
	unsetenv("ERGON_PPK2_PORTS");
	free(env);
	ts_ppk2_sim_stop(s1);
	ts_ppk2_sim_stop(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(word_fields),
	    cmocka_unit_test(current_formula),
	    cmocka_unit_test(metadata_good_and_r_zero),
	    cmocka_unit_test(metadata_faults),
	    cmocka_unit_test(decoder_gaps_and_splits),
	    cmocka_unit_test(decoder_hand_worked),
	    cmocka_unit_test(decoder_app_rules_every_switch),
	    cmocka_unit_test(clock_check_series),
	    cmocka_unit_test(sim_waveform_energy_and_gate),
	    cmocka_unit_test(sim_gaps_reported_never_filled),
	    cmocka_unit_test(sim_clock_finds_whole_blocks),
	    cmocka_unit_test(sim_unplug_keeps_samples),
	    cmocka_unit_test(sim_bad_calibration_issue),
	    cmocka_unit_test(selection_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Nordic's app's PPK2 decode, written for the tests straight from the
 * rules stated in issue 29 (not from the driver, and not from any
 * implementation of the app): the tests compare the driver's decoder with
 * it sample by sample, to the float.
 *
 * For sample i on range r with 14-bit ADC value adc14:
 *   x = (adc14 * 4 - O[r]) * (1.8 / 163840) / R[r]
 *   I = UG[r] * (x * (GS[r] * x + GI[r]) + (S[r] * VDD_V + I[r]))
 * Two averages of I, a (0.18 / 0.82) and a4 (0.06 / 0.94), start at the
 * first sample's I and are updated on every later sample. A sample whose
 * range differs from the previous sample's, and the two after it, show an
 * average (a4 on range 4, else a) instead of I; the first two samples after
 * a switch to range 4 first restore both averages to their values before
 * the sample, then show a4.
 */
#ifndef TS_PPK2_RULES_H
#define TS_PPK2_RULES_H

#include <stddef.h>
#include <stdint.h>

struct ts_ppk2_rules_cal {
	double r[5], gs[5], gi[5], o[5], s[5], i[5], ug[5];
};

/* The app's defaults for every key (R = 1031.64, 101.65, 10.15, 0.94,
 * 0.043; GS = GI = UG = 1; O = S = I = 0). */
void ts_ppk2_rules_defaults(struct ts_ppk2_rules_cal *c);

/* The current on range r (0..4) for adc14, VDD_V = vdd_v. */
double ts_ppk2_rules_current(const struct ts_ppk2_rules_cal *c, unsigned r, unsigned adc14,
			     double vdd_v);

/* The app's shown value for each of n samples (ranges 0..4 only), rounded
 * to float: out[i]. spike_filter 0 shows I for every sample. */
void ts_ppk2_rules_decode(const struct ts_ppk2_rules_cal *c, double vdd_v, const uint16_t *adc14,
			  const uint8_t *range, size_t n, int spike_filter, float *out);

#endif

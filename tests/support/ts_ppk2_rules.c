/* The app's PPK2 decode rules (ts_ppk2_rules.h), for tests. Written from
 * the rules' text only; deliberately unlike the driver's decoder (which
 * keeps a running counter): the position of each sample after the latest
 * range switch is found here by looking back along the ranges. */
#include "ts_ppk2_rules.h"

void ts_ppk2_rules_defaults(struct ts_ppk2_rules_cal *c)
{
	static const double r[5] = {1031.64, 101.65, 10.15, 0.94, 0.043};
	for (int k = 0; k < 5; k++) {
		c->r[k] = r[k];
		c->gs[k] = 1;
		c->gi[k] = 1;
		c->ug[k] = 1;
		c->o[k] = 0;
		c->s[k] = 0;
		c->i[k] = 0;
	}
}

double ts_ppk2_rules_current(const struct ts_ppk2_rules_cal *c, unsigned r, unsigned adc14,
			     double vdd_v)
{
	double x = ((double)adc14 * 4 - c->o[r]) * (1.8 / 163840) / c->r[r];
	return c->ug[r] * (x * (c->gs[r] * x + c->gi[r]) + (c->s[r] * vdd_v + c->i[r]));
}

/* How many samples sample k is after the latest range switch at or before
 * it (0: k itself switched), or 3 when that is 3 or more (or none). */
static unsigned after_switch(const uint8_t *range, size_t k)
{
	for (unsigned back = 0; back < 3 && back < k; back++)
		if (range[k - back] != range[k - back - 1])
			return back;
	return 3;
}

void ts_ppk2_rules_decode(const struct ts_ppk2_rules_cal *c, double vdd_v, const uint16_t *adc14,
			  const uint8_t *range, size_t n, int spike_filter, float *out)
{
	double a = 0, a4 = 0;
	for (size_t k = 0; k < n; k++) {
		double cur = ts_ppk2_rules_current(c, range[k], adc14[k], vdd_v);
		if (k == 0) {
			a = cur;
			a4 = cur;
			out[k] = (float)cur;
			continue;
		}
		double a_before = a, a4_before = a4;
		a = 0.18 * cur + 0.82 * a;
		a4 = 0.06 * cur + 0.94 * a4;
		unsigned pos = after_switch(range, k);
		if (!spike_filter || pos >= 3) {
			out[k] = (float)cur;
			continue;
		}
		if (range[k] == 4 && pos < 2) {
			a = a_before;
			a4 = a4_before;
		}
		out[k] = (float)(range[k] == 4 ? a4 : a);
	}
}

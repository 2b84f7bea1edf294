/* The PPK2 wire format: the calibration answer and the sample decoder
 * (ppk2.h). Pure functions on buffers: the fuzzers drive them with bytes. */
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protocol facts: the documented default shunts, ohms, ranges 0..4. */
const double ppk2_default_r_ohm[PPK2_RANGES] = {1031.64, 101.65, 10.15, 0.94, 0.043};

/* The defaults Nordic's app keeps for a calibration key that is missing or
 * -nan (issue 29): R as above, GS = GI = UG = 1, O = S = I = 0. */
static double default_value(int g, unsigned r);

/* Every number in the answer has |value| <= this. A PPK2's calibration is
 * of order 1 (gains), 1e3 (offsets in ADC counts) or 1e-3..1e3 (ohms);
 * 1e12 refuses nothing a device reports and keeps every conversion finite:
 * with R >= PPK2_R_MIN_OHM, |x| < 1.2e13 and |I| < 1e12 * (1.2e13 * (1e12 *
 * 1.2e13 + 1e12) + 1e12 * 5 + 1e12) ~ 1.7e50, far below DBL_MAX. */
#define PPK2_VALUE_ABS_MAX 1e12
/* A positive shunt below this is not a shunt (the smallest, range 4, is
 * 0.043 ohm); 0 or negative is the known bad calibration (defaults). */
#define PPK2_R_MIN_OHM 1e-6
/* HW is a hardware revision number: a whole number that fits a u32. */
#define PPK2_HW_MAX 4294967295.0

/* One ADC count in volts: 1.8 V full scale over 163840 counts (protocol
 * facts); a raw14 step is 4 counts. */
#define PPK2_ADC_V_PER_COUNT (1.8 / 163840.0)

enum {
	K_R = PPK2_CAL_R,
	K_GS = PPK2_CAL_GS,
	K_GI = PPK2_CAL_GI,
	K_O = PPK2_CAL_O,
	K_S = PPK2_CAL_S,
	K_I = PPK2_CAL_I,
	K_UG = PPK2_CAL_UG,
	K_GROUPS = PPK2_CAL_GROUPS
};
static const char *const group_name[K_GROUPS] = {"R", "GS", "GI", "O", "S", "I", "UG"};

static double *group_slot(struct ppk2_cal *c, int g, unsigned r)
{
	switch (g) {
	case K_R:
		return &c->r[r];
	case K_GS:
		return &c->gs[r];
	case K_GI:
		return &c->gi[r];
	case K_O:
		return &c->o[r];
	case K_S:
		return &c->s[r];
	case K_I:
		return &c->i[r];
	default:
		return &c->ug[r];
	}
}

/* A value: a finite decimal, or "-nan"/"nan" (absent: *absent = 1). */
static int parse_value(const char *v, size_t n, double *out, int *absent)
{
	char tmp[64];
	*absent = 0;
	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, v, n);
	tmp[n] = '\0';
	if (strcmp(tmp, "-nan") == 0 || strcmp(tmp, "nan") == 0) {
		*absent = 1;
		return 0;
	}
	/* strtod would take "inf", hex floats and leading blanks: only plain
	 * decimals are numbers here. */
	for (size_t i = 0; i < n; i++) {
		char ch = tmp[i];
		if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '+' ||
		      ch == 'e' || ch == 'E'))
			return -1;
	}
	char *end = NULL;
	double d = strtod(tmp, &end);
	if (end != tmp + n || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int ppk2_meta_parse(const char *buf, size_t len, struct ppk2_cal *cal, const char *where,
		    struct ergon_err *err)
{
	/* Find END first: until it arrives the answer is incomplete. */
	size_t end_at = len;
	for (size_t p = 0; p < len;) {
		size_t e = p;
		while (e < len && buf[e] != '\n')
			e++;
		size_t a = p, b = e;
		while (a < b && is_blank(buf[a]))
			a++;
		while (b > a && is_blank(buf[b - 1]))
			b--;
		if (b - a == 3 && memcmp(buf + a, "END", 3) == 0) {
			end_at = p;
			break;
		}
		p = e + 1;
	}
	if (end_at == len) {
		if (len > PPK2_META_MAX)
			return ergon_err_set(
			    err, ERGON_ETOOBIG,
			    "%s: the calibration answer exceeds %u bytes without "
			    "an END line; this is not a PPK2 answering GetMetadata "
			    "(check the port)",
			    where, PPK2_META_MAX);
		return 1;
	}
	memset(cal, 0, sizeof(*cal));
	unsigned seen[K_GROUPS] = {0};
	unsigned absent[K_GROUPS] = {0};
	unsigned line = 0;
	for (size_t p = 0; p < end_at;) {
		size_t e = p;
		while (e < end_at && buf[e] != '\n')
			e++;
		line++;
		size_t a = p, b = e;
		p = e + 1;
		while (a < b && is_blank(buf[a]))
			a++;
		while (b > a && is_blank(buf[b - 1]))
			b--;
		if (a == b)
			continue;
		const char *colon = memchr(buf + a, ':', b - a);
		if (colon == NULL)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u (byte %zu) is not 'key: value'; "
			    "the answer is garbled: replug the PPK2 and retry",
			    where, line, a);
		size_t klen = (size_t)(colon - (buf + a));
		while (klen > 0 && is_blank(buf[a + klen - 1]))
			klen--;
		size_t va = (size_t)(colon - buf) + 1;
		while (va < b && is_blank(buf[va]))
			va++;
		char key[16];
		if (klen == 0 || klen >= sizeof(key)) {
			cal->unknown_keys++;
			continue;
		}
		memcpy(key, buf + a, klen);
		key[klen] = '\0';
		double v = 0;
		int abs_ = 0;
		int vw = (int)((b - va) > 32 ? 32 : (b - va));
		if (parse_value(buf + va, b - va, &v, &abs_) != 0)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u: %s has the value '%.*s', not "
			    "a number; the answer is garbled: replug the PPK2 and "
			    "retry",
			    where, line, key, vw, buf + va);
		if (strcmp(key, "Calibrated") == 0) {
			cal->have_calibrated = !abs_;
			cal->calibrated = !abs_ && v != 0;
			continue;
		}
		if (strcmp(key, "HW") == 0) {
			if (!abs_ && !(v >= 0 && v <= PPK2_HW_MAX && v == floor(v)))
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s: calibration line %u: HW has the value '%.*s', out of "
				    "range (a hardware revision is a whole number 0..%.0f); "
				    "the answer is garbled: replug the PPK2 and retry",
				    where, line, vw, buf + va, PPK2_HW_MAX);
			cal->have_hw = !abs_;
			cal->hw = abs_ ? 0 : (uint32_t)v;
			continue;
		}
		/* A number beyond any calibration is a garbled answer (and could
		 * make a current overflow). Unknown keys are not ours to judge. */
		int known = strcmp(key, "IA") == 0;
		size_t glen = 0;
		int g = -1;
		for (int k = 0; k < K_GROUPS && !known; k++) {
			size_t n = strlen(group_name[k]);
			if (klen == n + 1 && memcmp(key, group_name[k], n) == 0 && key[n] >= '0' &&
			    key[n] <= '4' && n >= glen) {
				g = k;
				glen = n;
			}
		}
		if ((known || g >= 0) && !abs_ && !(fabs(v) <= PPK2_VALUE_ABS_MAX))
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u: %s has the value '%.*s', out "
			    "of range (|value| <= %g); the answer is garbled: "
			    "replug the PPK2 and retry",
			    where, line, key, vw, buf + va, PPK2_VALUE_ABS_MAX);
		if (known) {
			cal->have_ia = !abs_;
			cal->ia = abs_ ? 0 : v;
			continue;
		}
		if (g < 0) {
			cal->unknown_keys++;
			continue;
		}
		unsigned r = (unsigned)(key[glen] - '0');
		if (seen[g] & (1u << r))
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u: %s appears twice; the answer "
			    "is garbled: replug the PPK2 and retry",
			    where, line, key);
		if (g == K_R && !abs_ && v > 0 && v < PPK2_R_MIN_OHM)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u: %s has the value '%.*s', out "
			    "of range (a shunt of at least %g ohm, or 0 for none); "
			    "the answer is garbled: replug the PPK2 and retry",
			    where, line, key, vw, buf + va, PPK2_R_MIN_OHM);
		seen[g] |= 1u << r;
		if (abs_)
			absent[g] |= 1u << r;
		else
			*group_slot(cal, g, r) = v;
	}
	/* A key missing or -nan keeps the default Nordic's app keeps; R = 0 or
	 * negative (the known bad calibration) is a missing shunt too. The
	 * caller raises an issue for every defaulted key. */
	for (int g = 0; g < K_GROUPS; g++)
		for (unsigned r = 0; r < PPK2_RANGES; r++) {
			double *slot = group_slot(cal, g, r);
			if (!(seen[g] & (1u << r)) || (absent[g] & (1u << r)) ||
			    (g == K_R && !(*slot > 0))) {
				*slot = default_value(g, r);
				cal->defaulted |= PPK2_CAL_BIT(g, r);
				if (g == K_R)
					cal->r_defaulted |= 1u << r;
			}
		}
	for (unsigned r = 0; r < PPK2_RANGES; r++) {
		if (cal->ug[r] == 0 || (cal->gs[r] == 0 && cal->gi[r] == 0))
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: the calibration of range %u is all zero (UG%u = "
			    "%g, GS%u = %g, GI%u = %g): every current would read 0 "
			    "A. The PPK2's calibration is lost: have it "
			    "recalibrated",
			    where, r, r, cal->ug[r], r, cal->gs[r], r, cal->gi[r]);
	}
	return 0;
}

static double default_value(int g, unsigned r)
{
	switch (g) {
	case K_R:
		return ppk2_default_r_ohm[r];
	case K_GS:
	case K_GI:
	case K_UG:
		return 1.0;
	default:
		return 0.0; /* O, S, I */
	}
}

size_t ppk2_cal_key_names(uint64_t mask, char *out, size_t cap)
{
	size_t o = 0;
	if (cap == 0)
		return 0;
	out[0] = '\0';
	for (int g = 0; g < K_GROUPS; g++)
		for (unsigned r = 0; r < PPK2_RANGES; r++) {
			if (!(mask & PPK2_CAL_BIT(g, r)))
				continue;
			int w =
			    snprintf(out + o, cap - o, "%s%s%u", o ? ", " : "", group_name[g], r);
			if (w < 0 || (size_t)w >= cap - o) {
				out[o] = '\0';
				return o;
			}
			o += (size_t)w;
		}
	return o;
}

double ppk2_current_a(const struct ppk2_cal *c, unsigned r, unsigned adc14, double vdd_mv)
{
	double adc = (double)adc14 * 4.0;
	double x = (adc - c->o[r]) * PPK2_ADC_V_PER_COUNT / c->r[r];
	/* Parenthesised as the app's rule is written: the offset terms
	 * (S * VDD_V + I) are summed first; in floating point the order
	 * changes the last bit, and the sample is compared to the float. */
	return c->ug[r] * (x * (c->gs[r] * x + c->gi[r]) + (c->s[r] * (vdd_mv / 1000.0) + c->i[r]));
}

double ppk2_resolution_a(const struct ppk2_cal *c, unsigned r)
{
	return 4.0 * PPK2_ADC_V_PER_COUNT / c->r[r];
}

void ppk2_decoder_init(struct ppk2_decoder *d, const struct ppk2_cal *cal, double vdd_mv)
{
	memset(d, 0, sizeof(*d));
	d->cal = cal;
	d->vdd_mv = vdd_mv;
	d->spike_filter = 1;
}

static uint32_t rd_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The app's post-range-switch rule (docs/internals/ppk2.md): two
 * exponential averages of the current, updated on every sample; the
 * switching sample and the two after it show an average (a4 on range 4,
 * else a); the first two of them on range 4 first put both averages back
 * to their values before the sample, so the spike is not fed into them. */
#define SPIKE_SAMPLES 3u
#define SPIKE_RESTORE_SAMPLES 2u

static double spike_rule(struct ppk2_decoder *d, unsigned range, double cur)
{
	if (!d->have_avg) {
		/* Both averages start at the first sample's value. */
		d->avg_a = d->avg_a4 = cur;
		d->have_avg = 1;
		d->since_switch = SPIKE_SAMPLES;
		d->avg_range = (uint8_t)range;
		return cur;
	}
	double before_a = d->avg_a, before_a4 = d->avg_a4;
	d->avg_a = 0.18 * cur + 0.82 * d->avg_a;
	d->avg_a4 = 0.06 * cur + 0.94 * d->avg_a4;
	if (range != d->avg_range)
		d->since_switch = 0;
	else if (d->since_switch < SPIKE_SAMPLES)
		d->since_switch++;
	d->avg_range = (uint8_t)range;
	if (!d->spike_filter || d->since_switch >= SPIKE_SAMPLES)
		return cur;
	if (range == 4 && d->since_switch < SPIKE_RESTORE_SAMPLES) {
		d->avg_a = before_a;
		d->avg_a4 = before_a4;
	}
	d->filtered++;
	return range == 4 ? d->avg_a4 : d->avg_a;
}

static void decode_word(struct ppk2_decoder *d, uint32_t w, struct ppk2_sample *o, ppk2_gap_fn gap,
			void *gap_ctx)
{
	struct ppk2_word s = ppk2_word_unpack(w);
	if (d->have_prev) {
		unsigned step = (unsigned)(s.counter - d->prev_counter) & 0x3fu;
		/* The counter advances by one per sample, so k lost samples
		 * show as a step of k + 1 (mod 64): a repeated counter is 63
		 * lost, and a loss of 64 (or any multiple) cannot be seen
		 * here (the driver's host-clock check looks for those). */
		uint64_t missing = (step + 63u) & 0x3fu;
		if (missing > 0) {
			if (gap)
				gap(gap_ctx, d->index, missing);
			d->index += missing;
			d->dropped += missing;
			d->gaps++;
		}
	}
	o->index = d->index++;
	o->logic = s.logic;
	o->range = s.range;
	d->prev_counter = s.counter;
	d->have_prev = 1;
	if (s.range >= PPK2_RANGES) {
		/* Not a range: no current, and no part in the averages or in
		 * the range-switch rule (the next valid sample is compared
		 * with the last valid one). */
		d->bad_range++;
		o->current_a = NAN;
		return;
	}
	double x = ppk2_current_a(d->cal, s.range, s.adc14, d->vdd_mv);
	o->current_a = (float)spike_rule(d, s.range, x);
}

size_t ppk2_decode(struct ppk2_decoder *d, const uint8_t *bytes, size_t len,
		   struct ppk2_sample *out, size_t cap, size_t *consumed, ppk2_gap_fn gap,
		   void *gap_ctx)
{
	size_t n = 0, p = 0;
	while (n < cap && d->rem_len > 0 && d->rem_len < 4 && p < len) {
		d->rem[d->rem_len++] = bytes[p++];
		if (d->rem_len == 4) {
			decode_word(d, rd_le32(d->rem), &out[n++], gap, gap_ctx);
			d->rem_len = 0;
		}
	}
	while (n < cap && p + 4 <= len) {
		decode_word(d, rd_le32(bytes + p), &out[n++], gap, gap_ctx);
		p += 4;
	}
	if (n < cap) {
		while (p < len && d->rem_len < 4)
			d->rem[d->rem_len++] = bytes[p++];
	}
	*consumed = p;
	return n;
}

void ppk2_decoder_skip(struct ppk2_decoder *d, uint64_t n)
{
	d->index += n;
	d->skipped += n;
}

/* ---- the host-clock check (ppk2.h) ------------------------------------ */

void ppk2_clock_check_init(struct ppk2_clock_check *c, double rate_hz)
{
	memset(c, 0, sizeof(*c));
	c->rate_hz = rate_hz;
}

/* The floor: the lowest lag of the two latest buckets (the nearest in
 * time: a clock drift of 100 ppm moves the floor 1 sample in 0.1 s), and
 * the spread of the floors of all the buckets of the last PPK2_CC_BASE_S
 * (older ones are forgotten, so that drift over a long pause cannot pass
 * for a step). Returns 0 when there is none. */
static int cc_floor(const struct ppk2_clock_check *c, double t_s, double *floor_s, double *spread_s)
{
	int have = 0, near = 0;
	double lo = 0, hi = 0;
	for (unsigned j = 0; j < c->buckets; j++) {
		/* newest first */
		unsigned k = (c->cur + PPK2_CC_BUCKETS - j) % PPK2_CC_BUCKETS;
		if (c->bucket_start_s[k] < t_s - PPK2_CC_BASE_S - PPK2_CC_BUCKET_S)
			continue;
		double m = c->bucket_min_s[k];
		if (j < 2 && (!near || m < *floor_s)) {
			*floor_s = m;
			near = 1;
		}
		if (!have || m < lo)
			lo = m;
		if (!have || m > hi)
			hi = m;
		have = 1;
	}
	*spread_s = hi - lo;
	return near;
}

static void cc_add(struct ppk2_clock_check *c, double t_s, double lag_s, uint64_t index)
{
	if (c->buckets == 0 || t_s >= c->bucket_start_s[c->cur] + PPK2_CC_BUCKET_S) {
		c->cur = c->buckets == 0 ? 0 : (c->cur + 1) % PPK2_CC_BUCKETS;
		if (c->buckets < PPK2_CC_BUCKETS)
			c->buckets++;
		c->bucket_start_s[c->cur] = t_s;
		c->bucket_min_s[c->cur] = lag_s;
	} else if (lag_s < c->bucket_min_s[c->cur]) {
		c->bucket_min_s[c->cur] = lag_s;
	}
	c->last_low_index = index;
}

/* The run's own buckets: a completed bucket's floor widens [lo, hi]. */
static void run_close_bucket(struct ppk2_clock_check *c)
{
	if (c->run_buckets == 0 || c->run_bucket_min_s < c->run_floor_lo_s)
		c->run_floor_lo_s = c->run_bucket_min_s;
	if (c->run_buckets == 0 || c->run_bucket_min_s > c->run_floor_hi_s)
		c->run_floor_hi_s = c->run_bucket_min_s;
	c->run_buckets++;
}

static void run_add(struct ppk2_clock_check *c, double t_s, double lag_s)
{
	if (t_s >= c->run_bucket_start_s + PPK2_CC_BUCKET_S) {
		if (c->run_buckets > 0 && (c->run_bucket_min_s - c->run_floor_lo_s) * c->rate_hz >=
					      PPK2_CC_SUSPECT_SAMPLES) {
			/* A further step inside the run (a second loss): the run
			 * starts again from this bucket, against the same floor
			 * before, so that the step measured is both. */
			c->run_buckets = 0;
			c->run_start_s = c->run_bucket_start_s;
			c->run_reads = 0;
		}
		run_close_bucket(c);
		c->run_bucket_start_s = t_s;
		c->run_bucket_min_s = lag_s;
	} else if (lag_s < c->run_bucket_min_s) {
		c->run_bucket_min_s = lag_s;
	}
	c->run_reads++;
}

/* Start the floor afresh from this read (after a decision). */
static void cc_restart(struct ppk2_clock_check *c, double t_s, double lag_s, uint64_t index)
{
	c->suspect = 0;
	c->buckets = 0;
	cc_add(c, t_s, lag_s, index);
}

uint64_t ppk2_clock_check_feed(struct ppk2_clock_check *c, double t_s, uint64_t index, int drained,
			       uint64_t *lost_from)
{
	*lost_from = 0;
	if (!drained || !isfinite(t_s) || !(c->rate_hz > 0))
		return 0;
	c->draining_reads++;
	double dev_s = (double)index / c->rate_hz;
	if (!c->have_origin) {
		c->have_origin = 1;
		c->origin_s = t_s - dev_s;
	}
	double lag_s = t_s - c->origin_s - dev_s;
	double f = c->rate_hz;
	if (!c->suspect) {
		double floor_s = 0, spread_s = 0;
		if (!cc_floor(c, t_s, &floor_s, &spread_s) ||
		    (lag_s - floor_s) * f < PPK2_CC_SUSPECT_SAMPLES) {
			cc_add(c, t_s, lag_s, index);
			return 0;
		}
		c->suspect = 1;
		c->run_start_s = t_s;
		c->run_base_s = floor_s;
		/* A floor that was not steady cannot measure a step: the run
		 * is followed to its end, then called inconclusive. */
		c->run_base_unsteady = spread_s * f > PPK2_CC_FLOOR_SPREAD;
		c->run_min_s = lag_s;
		c->run_bucket_start_s = t_s;
		c->run_bucket_min_s = lag_s;
		c->run_buckets = 0;
		c->run_reads = 1;
		c->run_from = c->last_low_index;
		return 0;
	}
	if ((lag_s - c->run_base_s) * f < PPK2_CC_SUSPECT_SAMPLES) {
		/* Back at the floor: the host was late, nothing was lost. */
		c->suspect = 0;
		c->cancelled++;
		cc_add(c, t_s, lag_s, index);
		return 0;
	}
	run_add(c, t_s, lag_s);
	if (lag_s < c->run_min_s)
		c->run_min_s = lag_s;
	if (t_s - c->run_start_s < PPK2_CC_CONFIRM_S || c->run_reads < PPK2_CC_CONFIRM_READS)
		return 0;
	run_close_bucket(c);
	double step = (c->run_floor_lo_s - c->run_base_s) * f;
	double spread = (c->run_floor_hi_s - c->run_floor_lo_s) * f;
	double blocks = floor(step / PPK2_CC_BLOCK + 0.5);
	if (!c->run_base_unsteady && spread <= PPK2_CC_FLOOR_SPREAD && blocks >= 1 &&
	    blocks < 1e9 && fabs(step - blocks * PPK2_CC_BLOCK) <= PPK2_CC_QUANTUM_TOL) {
		uint64_t lost = (uint64_t)blocks * PPK2_CC_BLOCK;
		c->losses++;
		c->lost_samples += lost;
		*lost_from = c->run_from;
		/* The caller advances the index by `lost`: the lag is back at
		 * the floor before the step, which starts the floor afresh. A
		 * further loss inside the run shows as a step right after this
		 * one; it lies somewhere since the run began. */
		cc_restart(c, t_s, lag_s - (double)lost / f, index + lost);
		c->last_low_index = c->run_from;
		return lost;
	}
	/* Not a steady step of whole blocks: a change of latency, a wandering
	 * floor (a loaded host), or a loss mixed with either. Start the floor
	 * afresh from here rather than guess. */
	c->inconclusive++;
	cc_restart(c, t_s, lag_s, index);
	return 0;
}

double ppk2_clock_check_pending(const struct ppk2_clock_check *c)
{
	return c->suspect ? (c->run_min_s - c->run_base_s) * c->rate_hz : 0.0;
}

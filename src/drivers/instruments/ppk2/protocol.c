/* The PPK2 wire format: the calibration answer and the sample decoder
 * (ppk2.h). Pure functions on buffers: the fuzzers drive them with bytes. */
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protocol facts: the documented default shunts, ohms, ranges 0..4. */
const double ppk2_default_r_ohm[PPK2_RANGES] = {1031.64, 101.65, 10.15, 0.94, 0.043};

/* One ADC count in volts: 1.8 V full scale over 163840 counts (protocol
 * facts); a raw14 step is 4 counts. */
#define PPK2_ADC_V_PER_COUNT (1.8 / 163840.0)

enum { K_R, K_GS, K_GI, K_O, K_S, K_I, K_UG, K_GROUPS };
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
		if (parse_value(buf + va, b - va, &v, &abs_) != 0)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s: calibration line %u: %s has the value '%.*s', not "
			    "a number; the answer is garbled: replug the PPK2 and "
			    "retry",
			    where, line, key, (int)((b - va) > 32 ? 32 : (b - va)), buf + va);
		if (strcmp(key, "Calibrated") == 0) {
			cal->have_calibrated = !abs_;
			cal->calibrated = !abs_ && v != 0;
			continue;
		}
		if (strcmp(key, "HW") == 0) {
			cal->have_hw = !abs_;
			cal->hw = abs_ ? 0 : (long)v;
			continue;
		}
		if (strcmp(key, "IA") == 0) {
			cal->have_ia = !abs_;
			cal->ia = abs_ ? 0 : v;
			continue;
		}
		int g = -1;
		size_t glen = 0;
		for (int k = 0; k < K_GROUPS; k++) {
			size_t n = strlen(group_name[k]);
			if (klen == n + 1 && memcmp(key, group_name[k], n) == 0 && key[n] >= '0' &&
			    key[n] <= '4' && n >= glen) {
				g = k;
				glen = n;
			}
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
		seen[g] |= 1u << r;
		if (abs_)
			absent[g] |= 1u << r;
		else
			*group_slot(cal, g, r) = v;
	}
	/* R: 0, negative or absent is the known bad calibration; the
	 * documented defaults stand in and the caller raises an issue. */
	for (unsigned r = 0; r < PPK2_RANGES; r++) {
		if (!(seen[K_R] & (1u << r)) || (absent[K_R] & (1u << r)) || !(cal->r[r] > 0)) {
			cal->r[r] = ppk2_default_r_ohm[r];
			cal->r_defaulted |= 1u << r;
		}
	}
	char missing[256] = "";
	size_t mo = 0;
	for (int g = K_GS; g < K_GROUPS; g++)
		for (unsigned r = 0; r < PPK2_RANGES; r++)
			if (!(seen[g] & (1u << r)) || (absent[g] & (1u << r))) {
				size_t room = sizeof(missing) - mo;
				if (room > 8)
					mo += (size_t)snprintf(missing + mo, room, "%s%s%u",
							       mo ? ", " : "", group_name[g], r);
			}
	if (mo)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: the calibration lacks %s (missing or -nan); no current "
				     "can be computed without them. Replug the PPK2; if it "
				     "persists, its calibration is lost: have it recalibrated",
				     where, missing);
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

double ppk2_current_a(const struct ppk2_cal *c, unsigned r, unsigned adc14, double vdd_mv)
{
	double adc = (double)adc14 * 4.0;
	double x = (adc - c->o[r]) * PPK2_ADC_V_PER_COUNT / c->r[r];
	return c->ug[r] * (x * (c->gs[r] * x + c->gi[r]) + c->s[r] * (vdd_mv / 1000.0) + c->i[r]);
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

static void decode_word(struct ppk2_decoder *d, uint32_t w, struct ppk2_sample *o, ppk2_gap_fn gap,
			void *gap_ctx)
{
	struct ppk2_word s = ppk2_word_unpack(w);
	if (d->have_prev) {
		unsigned step = (unsigned)(s.counter - d->prev_counter) & 0x3fu;
		/* The counter advances by one per sample, so k lost samples
		 * show as a step of k + 1 (mod 64): a repeated counter is 63
		 * lost, and a loss of 64 (or any multiple) cannot be seen. */
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
	if (s.range >= PPK2_RANGES) {
		d->bad_range++;
		o->current_a = NAN;
		d->prev_counter = s.counter;
		d->have_prev = 1;
		return;
	}
	double x = ppk2_current_a(d->cal, s.range, s.adc14, d->vdd_mv);
	double y = x;
	if (d->have_prev && s.range != d->prev_range)
		d->filter_left = 3;
	if (d->spike_filter && d->filter_left > 0 && d->have_prev && isfinite(d->prev_out_a)) {
		double alpha = s.range == 4 ? 0.06 : 0.18;
		y = alpha * x + (1.0 - alpha) * d->prev_out_a;
		d->filtered++;
	}
	if (d->filter_left > 0)
		d->filter_left--;
	d->prev_out_a = y;
	d->prev_range = s.range;
	d->prev_counter = s.counter;
	d->have_prev = 1;
	o->current_a = (float)y;
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

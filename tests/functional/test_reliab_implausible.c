/* Issue 30, cases 3 and 4: implausible recordings are refused or their
 * figures withheld, with a code whose message names the row, column or
 * time; real recordings on the near side of each threshold stay valid
 * (docs/POWER_CHECKS.md, "Sign and time checks"; thresholds in
 * include/ergon/plausible.h). Every recording is written here from a model
 * whose figures follow by hand:
 *   statistics: 300 packets of 10 ms; 2 mA, or 12 mA while `digital` = 1
 *   (packets 50..249, t = 0.5 .. 2.5 s: one 2 s gate window), 1.8 V,
 *   running charge_c and energy_j (the reviewer's s.csv);
 *   raw: 3000 samples at 1 kHz; 2 mA, or 12 mA for samples 500..2499
 *   (the same 2 s window), 1.8 V.
 * Before this change every "bad" recording below was published `valid`
 * with figures (the negated one with -0.0432 J), and the non-UTF-8 one was
 * dropped as "the recording holds no samples" with no place. */
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a recording departs from the honest model. */
struct model {
	int raw;	   /* raw samples, else statistics packets */
	int i_neg;	   /* current (and charge/energy) negated */
	int v_neg;	   /* voltage (and energy) negated */
	int no_accum;	   /* statistics without charge_c/energy_j */
	int reverse_from;  /* first row/sample at -0.5 A (with reverse_n) */
	int reverse_n;	   /* how many */
	int hole_after;	   /* statistics: rows after this 0-based packet move later */
	double hole_s;	   /* by this much */
	double p_factor;   /* raw: power_w column = p_factor x i x v (0: none) */
	int max_row;	   /* statistics: i_max_a below i_avg_a on packet max_row - 1 (0: none) */
	double max_below;  /* by this much */
	double offset_a;   /* added to every current */
	double noise_a;	   /* added to even samples, taken from odd ones */
	int fine;	   /* currents and voltages printed to 9 digits (+1.2 uA, +0.12 uV) */
	int no_gate;	   /* no gate at all (free-form capture) */
	int gate_n;	   /* statistics: gate packets from packet 50 (0: 200) */
	const char *extra; /* bytes spliced into one row (see splice_row) */
	int splice_row;	   /* 0-based data row */
};

#define STATS_N 300
#define RAW_N 3000

static char *write_recording(const char *dir, const char *name, const struct model *m)
{
	char *path = ts_strf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	double c = 0, e = 0;
	if (m->raw)
		fprintf(f, "t_s,current_a,voltage_v%s,digital\n", m->p_factor ? ",power_w" : "");
	else if (m->no_accum)
		fprintf(f, "t_start_s,t_end_s,i_avg_a,i_max_a,v_avg_v,digital\n");
	else
		fprintf(f, "t_start_s,t_end_s,i_avg_a,i_max_a,v_avg_v,charge_c,energy_j,digital\n");
	int n = m->raw ? RAW_N : STATS_N;
	for (int k = 0; k < n; k++) {
		int lo = m->raw ? 500 : 50, hi = m->raw ? 2500 : 50 + (m->gate_n ? m->gate_n : 200);
		int d = !m->no_gate && k >= lo && k < hi;
		double i = (d ? 0.012 : 0.002) + m->offset_a + (k % 2 ? -m->noise_a : m->noise_a) +
			   (m->fine ? 1.2345678e-6 : 0);
		if (m->reverse_n && k >= m->reverse_from && k < m->reverse_from + m->reverse_n)
			i = -0.5;
		i *= m->i_neg ? -1 : 1;
		double v = (m->v_neg ? -1.8 : 1.8) + (m->fine ? 1.234567e-7 : 0);
		char row[256];
		if (m->raw) {
			double t = k / 1000.0;
			int l = snprintf(row, sizeof row, "%.3f,%.9g,%.9g", t, i, v);
			if (m->p_factor)
				l += snprintf(row + l, sizeof row - (size_t)l, ",%.9g",
					      m->p_factor * i * v);
			snprintf(row + l, sizeof row - (size_t)l, ",%d", d);
		} else {
			double t0 = k / 100.0 + (k > m->hole_after && m->hole_s ? m->hole_s : 0);
			double imax = k + 1 == m->max_row ? i - m->max_below : i;
			c += i * 0.01;
			e += i * v * 0.01;
			if (m->no_accum)
				snprintf(row, sizeof row, "%.6f,%.6f,%.9g,%.9g,%.9g,%d", t0,
					 t0 + 0.01, i, imax, v, d);
			else
				snprintf(row, sizeof row, "%.6f,%.6f,%.9g,%.9g,%.9g,%.9g,%.9g,%d",
					 t0, t0 + 0.01, i, imax, v, c, e, d);
		}
		if (m->extra && k == m->splice_row) {
			/* The extra bytes go right after the row's fourth field. */
			char *p = row;
			for (int comma = 0; comma < 4 && p; comma++)
				p = strchr(p + 1, ',');
			assert_non_null(p);
			fprintf(f, "%.*s%s%s\n", (int)(p - row), row, m->extra, p);
		} else {
			fprintf(f, "%s\n", row);
		}
	}
	fclose(f);
	return path;
}

static const json_t *issue(const json_t *s, const char *code)
{
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(json_object_get(s, "power"), "issues"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "code")), code) == 0)
			return v;
	}
	return NULL;
}

static int new_codes(const json_t *s)
{
	static const char *const codes[] = {"power.negative_energy", "power.reverse_current",
					    "power.time_gap", "power.values_inconsistent",
					    "power.recording_unusable"};
	int n = 0;
	for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
		n += issue(s, codes[k]) != NULL;
	return n;
}

/* analyze the recording; *rc the exit code; the summary (caller frees). */
static json_t *analyze(const char *dir, const char *csv, int raw, const char *tag, int *rc,
		       const char *extra_opt, const char *extra_val)
{
	char *out = ts_strf("%s/%s.out", dir, tag);
	char *facts = ts_strf("%s/facts.json", dir);
	const char *fj = "{\"clean_infer_count\": 100, \"clean_infer_avg_us\": 20000}\n";
	assert_int_equal(ts_write_file(facts, fj, strlen(fj)), 0);
	char *se = NULL;
	*rc = ts_run_ergon(NULL, &se, "analyze", raw ? "--raw" : "--stats", csv, "--facts", facts,
			   "--out", out, extra_opt, extra_val, NULL);
	char *sum = ts_strf("%s/summary.json", out);
	json_error_t je;
	json_t *s = json_load_file(sum, 0, &je);
	if (s == NULL && *rc != 2)
		fail_msg("%s: no summary (exit %d): %s", csv, *rc, se ? se : "");
	free(se);
	free(sum);
	free(facts);
	free(out);
	return s;
}

static const char *pstr(const json_t *s, const char *k)
{
	return json_string_value(json_object_get(json_object_get(s, "power"), k));
}

/* The recording is published invalid with code, per-inference withheld,
 * and the message holds `where`. */
static void expect_flagged(const char *dir, const struct model *m, const char *tag,
			   const char *code, const char *where)
{
	char *name = ts_strf("%s.csv", tag);
	char *csv = write_recording(dir, name, m);
	int rc;
	json_t *s = analyze(dir, csv, m->raw, tag, &rc, NULL, NULL);
	const json_t *x = issue(s, code);
	if (x == NULL)
		fail_msg("%s: no %s (integrity %s)", tag, code, pstr(s, "integrity"));
	const char *msg = json_string_value(json_object_get(x, "message"));
	if (strstr(msg, where) == NULL)
		fail_msg("%s: '%s' not in: %s", tag, where, msg);
	assert_string_equal(pstr(s, "integrity"), "invalid");
	assert_int_equal(rc, 1);
	assert_true(json_is_true(
	    json_object_get(json_object_get(s, "power"), "per_inference_metrics_omitted")));
	assert_true(
	    json_is_null(json_object_get(json_object_get(s, "power"), "energy_per_inference_j")));
	json_decref(s);
	free(csv);
	free(name);
}

/* The recording stays valid (no new code; energy per inference published). */
static void expect_valid(const char *dir, const struct model *m, const char *tag)
{
	char *name = ts_strf("%s.csv", tag);
	char *csv = write_recording(dir, name, m);
	int rc;
	json_t *s = analyze(dir, csv, m->raw, tag, &rc, NULL, NULL);
	if (new_codes(s) != 0 || strcmp(pstr(s, "integrity"), "invalid") == 0)
		fail_msg("%s: flagged (integrity %s)", tag, pstr(s, "integrity"));
	json_decref(s);
	free(csv);
	free(name);
}

#define HONEST(...) ((struct model){__VA_ARGS__})

static void negated_recordings(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* Statistics: current, charge and energy negated: -0.0432 J in the
	 * window, a mean of -12 mA in the load's direction. */
	struct model m = HONEST(.i_neg = 1);
	expect_flagged(dir, &m, "stats_neg", "power.negative_energy",
		       "gate window 1 (t = 0.500000 .. 2.500000 s): energy -0.0432 J");
	/* Raw: current negated, or voltage negated. */
	m = HONEST(.raw = 1, .i_neg = 1);
	expect_flagged(dir, &m, "raw_neg_i", "power.negative_energy", "a mean of -0.012 A");
	m = HONEST(.raw = 1, .v_neg = 1);
	expect_flagged(dir, &m, "raw_neg_v", "power.negative_energy", "gate window 1");
	/* A negative rail (both negative) draws energy: valid. */
	m = HONEST(.raw = 1, .i_neg = 1, .v_neg = 1);
	expect_valid(dir, &m, "raw_negative_rail");
	ts_tmpdir_remove(dir);
	free(dir);
}

/* The 1 mA floor on both sides, on a free-form capture (no gate) of a
 * meter reading a constant offset: -0.9 mA is an offset, -1.1 mA is not. */
static void negative_offset_floor(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct model m = HONEST(.raw = 1, .no_gate = 1, .offset_a = -0.0029);
	expect_valid(dir, &m, "offset_0_9mA");
	m = HONEST(.raw = 1, .no_gate = 1, .offset_a = -0.0031);
	expect_flagged(dir, &m, "offset_1_1mA", "power.negative_energy",
		       "the whole capture (t = 0.000000 .. 3.000000 s)");
	/* Noise around zero: +-0.4 mA alternating on a zero current (the
	 * model's 2 mA taken off): half the samples read negative, the mean
	 * is zero, nothing is flagged. */
	m = HONEST(.raw = 1, .no_gate = 1, .offset_a = -0.002, .noise_a = 0.0004);
	expect_valid(dir, &m, "noise_zero");
	/* The same noise under a gated load. */
	m = HONEST(.raw = 1, .offset_a = -0.002, .noise_a = 0.0004);
	expect_valid(dir, &m, "noise_gated");
	ts_tmpdir_remove(dir);
	free(dir);
}

static void reverse_samples(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* 100 raw samples of -0.5 A inside the gate (t = 1.000 s on). */
	struct model m = HONEST(.raw = 1, .reverse_from = 1000, .reverse_n = 100);
	expect_flagged(dir, &m, "raw_rev100", "power.reverse_current",
		       "gate window 1: 100 samples ran backwards through the load (negative "
		       "power at more than 0.05 A), the first at t = 1.000000 s, down to -0.5 A");
	/* 11 is more than 10; 10 (a range-switching spike or two) is not. */
	m = HONEST(.raw = 1, .reverse_from = 1000, .reverse_n = 11);
	expect_flagged(dir, &m, "raw_rev11", "power.reverse_current", "11 samples");
	m = HONEST(.raw = 1, .reverse_from = 1000, .reverse_n = 10);
	expect_valid(dir, &m, "raw_rev10");
	/* 100 statistics packets of -0.5 A inside the gate (no accumulator,
	 * whose running total would be refused first). */
	m = HONEST(.no_accum = 1, .reverse_from = 100, .reverse_n = 100);
	expect_flagged(dir, &m, "stats_rev100", "power.reverse_current",
		       "100 statistics packets ran backwards");
	ts_tmpdir_remove(dir);
	free(dir);
}

static void time_holes(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* A 60 s hole after packet 150 (t = 1.51 s), inside the gate: the
	 * window runs 0.5 .. 62.5 s on the clock and its packets cover 2 s. */
	struct model m = HONEST(.hole_after = 150, .hole_s = 60);
	expect_flagged(dir, &m, "hole60", "power.time_gap",
		       "gate window 1 (t = 0.500000 .. 62.500000 s): 60 s of its 62 s are covered "
		       "by no statistics packet (the largest hole 60 s from t = 1.510000 s)");
	/* 1 % of the window: a hole h in a 2 s window is h / (2 + h) of it:
	 * 0.021 s is 1.04 %, 0.020 s is 0.99 %. */
	m = HONEST(.hole_after = 150, .hole_s = 0.021);
	expect_flagged(dir, &m, "hole21ms", "power.time_gap", "more than 1% of it");
	m = HONEST(.hole_after = 150, .hole_s = 0.020);
	expect_valid(dir, &m, "hole20ms");
	ts_tmpdir_remove(dir);
	free(dir);
}

static void rows_that_contradict_themselves(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* i_max_a 2 mA below i_avg_a on packet 120: line 122 (header first),
	 * column 25 (after "1.200000,1.210000,0.012,"). The columns print at
	 * most 2 significant digits ("0.012", "0.002"), so each cell is known
	 * to half of 1 mA: 1 mA below is inside the printing, not flagged. */
	struct model m = HONEST(.max_row = 121, .max_below = 0.002);
	expect_flagged(dir, &m, "imax", "power.values_inconsistent",
		       "imax.csv:122:25: i_max_a 0.01 is below i_avg_a 0.012 in the same row");
	m = HONEST(.max_row = 121, .max_below = 0.001);
	expect_valid(dir, &m, "imax_1mA");
	/* power_w 10 x current x voltage on every row: refused at the first,
	 * line 2, column 17 ("0.000,0.002,1.8," then power_w). */
	m = HONEST(.raw = 1, .p_factor = 10);
	expect_flagged(dir, &m, "p10", "power.values_inconsistent",
		       "p10.csv:2:17: power_w 0.036 W is not current_a x voltage_v");
	/* 1 % allowed, on currents and voltages printed to 9 digits (a current
	 * printed as "0.002" is itself known only to 25 % and "1.8" to 3 %,
	 * and the check adds that): 1.009 x is a reading, 1.011 x is not
	 * (line 2, column 32, after "0.000,0.00200123457,1.80000012,"). */
	m = HONEST(.raw = 1, .fine = 1, .p_factor = 1.009);
	expect_valid(dir, &m, "p1009");
	m = HONEST(.raw = 1, .fine = 1, .p_factor = 1.011);
	expect_flagged(dir, &m, "p1011", "power.values_inconsistent", "p1011.csv:2:32:");
	ts_tmpdir_remove(dir);
	free(dir);
}

/* --stats-rate-hz that contradicts the packets' own 10 ms is refused
 * (usage, exit 2, naming the packet and its time); the right rate is not. */
static void stats_rate_contradiction(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct model m = HONEST();
	char *csv = write_recording(dir, "rate.csv", &m);
	char *out = ts_strf("%s/rate.out", dir);
	char *se = NULL;
	int rc = ts_run_ergon(NULL, &se, "analyze", "--stats", csv, "--stats-rate-hz", "1000",
			      "--out", out, NULL);
	assert_int_equal(rc, 2);
	if (strstr(se, "statistics packet 1 (t = 0 s) spans 0.01 s, but the statistics rate "
		       "given (1000 Hz) means 0.001 s") == NULL)
		fail_msg("message: %s", se);
	free(se);
	json_t *s = analyze(dir, csv, 0, "rate100", &rc, "--stats-rate-hz", "100");
	assert_int_equal(rc, 0);
	assert_string_equal(pstr(s, "integrity"), "valid");
	json_decref(s);
	free(out);
	free(csv);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Case 4: a byte that is not UTF-8 is reported with file:line:column; the
 * issue is there (it used to be dropped, leaving "holds no samples"). */
static void non_utf8_is_placed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* Row 149 (line 151, as the reviewer's sed '151s/...'), after
	 * "1.490000,1.500000,0.012,0.012" (29 bytes): the byte is column 30. */
	struct model m = HONEST(.extra = "\xff", .splice_row = 149);
	expect_flagged(dir, &m, "ff", "power.recording_unusable",
		       "ff.csv:151:30: byte 0xff is not UTF-8 text");
	/* A control byte is UTF-8 and simply not a number: placed as before. */
	m = HONEST(.extra = "\x01", .splice_row = 149);
	expect_flagged(dir, &m, "ctl", "power.recording_unusable", "ctl.csv:151:");
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Case 10: analyze's default glitch floor is 1 s (docs/POWER_CHECKS.md,
 * power.short_gate_pulses_ignored; every other test passes --min-window-s
 * explicitly). With no option: a gate of 99 packets of 10 ms (0.99 s) is a
 * glitch, one of 100 (rising at 0.5, falling at 1.5 s: exactly 1 s) is a
 * window. */
static void default_glitch_floor(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	for (int k = 0; k < 2; k++) {
		struct model m = HONEST(.gate_n = k ? 100 : 99);
		char *csv = write_recording(dir, k ? "g100.csv" : "g99.csv", &m);
		char *out = ts_strf("%s/g%d", dir, k);
		int rc = ts_run_ergon(NULL, NULL, "analyze", "--stats", csv, "--out", out, NULL);
		char *sum = ts_strf("%s/summary.json", out);
		json_error_t je;
		json_t *s = json_load_file(sum, 0, &je);
		assert_non_null(s);
		const json_t *p = json_object_get(s, "power");
		if (k == 0) {
			assert_int_equal(rc, 4);
			assert_non_null(issue(s, "power.short_gate_pulses_ignored"));
			assert_int_equal(
			    json_integer_value(json_object_get(p, "gated_window_count")), 0);
		} else {
			assert_int_equal(rc, 0);
			assert_null(issue(s, "power.short_gate_pulses_ignored"));
			assert_int_equal(
			    json_integer_value(json_object_get(p, "gated_window_count")), 1);
		}
		json_decref(s);
		free(sum);
		free(out);
		free(csv);
	}
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(negated_recordings),
	    cmocka_unit_test(negative_offset_floor),
	    cmocka_unit_test(reverse_samples),
	    cmocka_unit_test(time_holes),
	    cmocka_unit_test(rows_that_contradict_themselves),
	    cmocka_unit_test(stats_rate_contradiction),
	    cmocka_unit_test(non_utf8_is_placed),
	    cmocka_unit_test(default_glitch_floor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

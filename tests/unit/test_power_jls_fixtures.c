/* The shared JLS fixtures, written by the reference library (jetperch/jls),
 * read by our reader and analysed by the gated engine must reproduce the
 * windows, durations, energies, charges and means the writer computed
 * (the .expected.json beside each file in ../shared/fixtures/jls, read at test
 * time). */
#include "ergon/gated.h"
#include "ergon/jls.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct feed {
	struct ergon_gated *g;
	uint64_t blocks;
};

static int feed_block(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	struct feed *f = ctx;
	f->blocks++;
	return ergon_gated_push_raw(f->g, b->current_a, b->voltage_v, b->power_w, b->gate_bits,
				    b->gate_bit0, b->n, err);
}

/* Sums/means: the writer's float64 Neumaier sums vs our sequential float64
 * sums agree to ~1e-12 relative (definitions.summation); 1e-9 leaves room. */
static void assert_rel(double got, double want, double rel)
{
	double tol = fabs(want) * rel + 1e-15;
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, expected %.17g (rel %.3g)", got, want, rel);
}

static double jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	assert_non_null(v);
	return json_number_value(v);
}

static void check_fixture(const char *name)
{
	char *jls = ts_strf("jls/%s.jls", name);
	char *exp = ts_strf("jls/%s.expected.json", name);
	char *jls_path = ts_fixture(jls);
	char *exp_path = ts_fixture(exp);
	json_error_t je;
	json_t *ex = json_load_file(exp_path, 0, &je);
	assert_non_null(ex);

	struct ergon_err err = {0};
	struct ergon_jls_reader *r = NULL;
	assert_int_equal(ergon_jls_file_open(jls_path, &r, &err), 0);
	/* A cleanly closed file from the reference writer raises no warning. */
	assert_int_equal(ergon_jls_reader_warnings(r)->n, 0);
	double fs = jnum(ex, "sample_rate");
	assert_int_equal(ergon_jls_reader_sample_rate(r), (uint32_t)fs);
	assert_string_equal(ergon_jls_reader_source_field(r, "model"), "JS220");
	assert_string_equal(ergon_jls_reader_source_field(r, "serial"), "000415");

	struct ergon_gated_config cfg = {.stats_rate_hz = 1000, .min_window_s = 1.0};
	struct feed f = {0};
	assert_int_equal(ergon_gated_new(&cfg, &f.g, &err), 0);
	assert_int_equal(ergon_gated_raw_begin(f.g, fs, &err), 0);
	assert_int_equal(ergon_jls_reader_stream(r, "gpi[0]", feed_block, &f, &err), 0);
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(f.g, &res, &err), 0);

	/* Whole capture. */
	assert_int_equal(res->samples, (uint64_t)jnum(ex, "sample_count"));
	assert_int_equal(res->nan_samples, 0);
	const json_t *tot = json_object_get(ex, "total");
	assert_rel(res->whole.energy_j, jnum(tot, "energy_j"), 1e-9);
	assert_rel(res->whole.charge_c, jnum(tot, "charge_c"), 1e-9);
	assert_rel(res->whole.avg_current_a, jnum(tot, "mean_current_a"), 1e-9);
	assert_rel(res->whole.duration_s, jnum(ex, "duration_s"), 1e-12);
	const json_t *cur = json_object_get(json_object_get(ex, "signal_stats"), "current");
	/* Peak current is a single float32 sample: exact. */
	assert_true(res->whole.peak_current_a == jnum(cur, "max"));

	/* Windows: every gate window of the writer, none else; glitches (all
	 * shorter than our 1 s floor) counted. */
	const json_t *wins = json_object_get(ex, "gate_windows");
	assert_int_equal(res->window_count, json_array_size(wins));
	for (size_t i = 0; i < res->window_count; i++) {
		const json_t *w = json_array_get(wins, i);
		const struct ergon_window_figures *got = &res->windows[i];
		assert_int_equal(got->start_index, (uint64_t)jnum(w, "start_index"));
		assert_int_equal(got->end_index, (uint64_t)jnum(w, "end_index"));
		assert_int_equal(got->samples, (uint64_t)jnum(w, "sample_count"));
		assert_rel(got->start_s, jnum(w, "start_s"), 1e-12);
		assert_rel(got->end_s, jnum(w, "end_s"), 1e-12);
		assert_rel(got->duration_s, jnum(w, "duration_s"), 1e-12);
		assert_rel(got->energy_j, jnum(w, "energy_j"), 1e-9);
		assert_rel(got->charge_c, jnum(w, "charge_c"), 1e-9);
		assert_rel(got->avg_current_a, jnum(w, "mean_current_a"), 1e-9);
		assert_rel(got->avg_power_w, jnum(w, "mean_power_w"), 1e-9);
		assert_rel(got->avg_voltage_v, jnum(w, "mean_voltage_v"), 1e-9);
		assert_true(got->peak_current_a == jnum(w, "max_current_a"));
		/* Percentiles: ours over 1 ms packets, theirs over samples; the
		 * packet median must lie within the sample range of the window. */
		assert_true(got->has_distribution);
		assert_true(got->median_current_a >= jnum(w, "min_current_a"));
		assert_true(got->p99_current_a <= jnum(w, "max_current_a"));
		assert_true(got->median_current_a <= got->p95_current_a);
		assert_true(got->p95_current_a <= got->p99_current_a);
		/* 1 ms packets entirely inside [start, end): (end-start)/fs/1ms. */
		assert_int_equal(got->packets, (uint64_t)(jnum(w, "duration_s") * 1000.0 + 0.5));
	}
	assert_int_equal(res->short_gate_pulses_ignored,
			 json_array_size(json_object_get(ex, "glitch_pulses")));
	for (size_t i = 0; i < res->glitch_kept; i++) {
		const json_t *gl = json_array_get(json_object_get(ex, "glitch_pulses"), i);
		assert_rel(res->glitches[i].start_s, jnum(gl, "start_s"), 1e-12);
		assert_rel(res->glitches[i].duration_s, jnum(gl, "duration_s"), 1e-9);
	}
	assert_int_equal(res->rises,
			 json_array_size(json_object_get(json_object_get(ex, "edges"), "rising")));
	assert_false(res->unterminated);
	assert_false(res->gate_high_at_start);

	/* UTC track: the writer's entries (first and last) with their relative
	 * and file sample ids and JLS times, and the ISO time of sample 0. */
	const json_t *utc = json_object_get(ex, "utc");
	assert_true(json_array_size(utc) >= 1);
	struct ergon_jls_utc_entry ue[2];
	size_t nu = ergon_jls_reader_utc(r, "current", ue);
	assert_int_equal(nu, json_array_size(utc) < 2 ? json_array_size(utc) : 2);
	for (size_t i = 0; i < nu; i++) {
		const json_t *u = json_array_get(utc, i == 0 ? 0 : json_array_size(utc) - 1);
		assert_int_equal(ue[i].sample_id,
				 json_integer_value(json_object_get(u, "sample_id")));
		assert_int_equal(ue[i].file_sample_id,
				 json_integer_value(json_object_get(u, "file_sample_id")));
		assert_int_equal(ue[i].utc_q30,
				 json_integer_value(json_object_get(u, "utc_jls_q30")));
		char iso[40];
		assert_int_equal(ergon_jls_utc_iso(ue[i].utc_q30, iso, sizeof iso), 0);
		assert_string_equal(iso, json_string_value(json_object_get(u, "utc_iso")));
	}
	const json_t *u0 = json_array_get(utc, 0);
	assert_int_equal(json_integer_value(json_object_get(u0, "sample_id")), 0);
	int64_t start_q30 = 0;
	assert_int_equal(ergon_jls_reader_start_utc(r, &start_q30), 0);
	assert_int_equal(start_q30, json_integer_value(json_object_get(u0, "utc_jls_q30")));

	ergon_gated_free(f.g);
	ergon_jls_reader_free(r);
	json_decref(ex);
	free(jls);
	free(exp);
	free(jls_path);
	free(exp_path);
}

/* ISO formatting by hand: 2^30 q30 units = 1 s, so 0 is the epoch
 * 2018-01-01T00:00:00Z; 1.5 s later is 1.5 x 2^30; one second before the
 * epoch is -2^30 (the floor, not truncation toward zero). */
static void utc_iso_by_hand(void **state)
{
	(void)state;
	char iso[40];
	assert_int_equal(ergon_jls_utc_iso(0, iso, sizeof iso), 0);
	assert_string_equal(iso, "2018-01-01T00:00:00.000000Z");
	assert_int_equal(ergon_jls_utc_iso(INT64_C(3) << 29, iso, sizeof iso), 0);
	assert_string_equal(iso, "2018-01-01T00:00:01.500000Z");
	assert_int_equal(ergon_jls_utc_iso(-(INT64_C(1) << 30), iso, sizeof iso), 0);
	assert_string_equal(iso, "2017-12-31T23:59:59.000000Z");
	/* 86400 s = one day later */
	assert_int_equal(ergon_jls_utc_iso(INT64_C(86400) << 30, iso, sizeof iso), 0);
	assert_string_equal(iso, "2018-01-02T00:00:00.000000Z");
	assert_int_not_equal(ergon_jls_utc_iso(0, iso, 10), 0); /* buffer too small */
}

static void shared_basic(void **state)
{
	(void)state;
	check_fixture("shared_basic");
}

static void shared_two_windows(void **state)
{
	(void)state;
	check_fixture("shared_two_windows");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shared_basic),
	    cmocka_unit_test(shared_two_windows),
	    cmocka_unit_test(utc_iso_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

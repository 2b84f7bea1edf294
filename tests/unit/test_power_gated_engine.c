/* The gated engine at its boundary: edges, the 1 s glitch floor, gate
 * failures, packet accumulators, markers, NaN, time order; and the power
 * section built from it. Expected values are worked out by hand. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 6000

struct raw {
	float i[N], v[N];
	uint8_t bits[N / 8];
};

/* 1 kHz: 2 mA idle, 12 mA while the gate is high, 1.5 V. */
static void raw_fill(struct raw *r, size_t n, int (*gate)(size_t))
{
	memset(r->bits, 0, sizeof(r->bits));
	for (size_t k = 0; k < n; k++) {
		int g = gate(k);
		r->i[k] = g ? 0.012f : 0.002f;
		r->v[k] = 1.5f;
		if (g)
			r->bits[k / 8] |= (uint8_t)(1u << (k % 8));
	}
}

static const struct ergon_gated_result *run_raw(struct ergon_gated **g, struct raw *r, size_t n,
						const struct ergon_gate_marker *mk, size_t nmk,
						int use_bits)
{
	struct ergon_err err = {0};
	struct ergon_gated_config cfg = {
	    .stats_rate_hz = 100, .min_window_s = 1.0, .markers = mk, .marker_count = nmk};
	assert_int_equal(ergon_gated_new(&cfg, g, &err), 0);
	assert_int_equal(ergon_gated_raw_begin(*g, 1000.0, &err), 0);
	/* Odd block sizes: edges and packets must not depend on them. */
	size_t k = 0, step = 777;
	while (k < n) {
		size_t m = n - k < step ? n - k : step;
		assert_int_equal(ergon_gated_push_raw(*g, r->i + k, r->v + k, NULL,
						      use_bits ? r->bits : NULL, k, m, &err),
				 0);
		k += m;
	}
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(*g, &res, &err), 0);
	return res;
}

/* High for [100, 1099) = 999 samples = 0.999 s (glitch) and [2000, 3000) =
 * 1.000 s (window, the floor is inclusive). */
static int gate_floor(size_t k)
{
	return (k >= 100 && k < 1099) || (k >= 2000 && k < 3000);
}

static void glitch_floor_near_miss(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_floor);
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, NULL, 0, 1);
	assert_int_equal(res->short_gate_pulses_ignored, 1);
	assert_true(fabs(res->glitches[0].duration_s - 0.999) < 1e-12);
	assert_true(fabs(res->glitches[0].start_s - 0.1) < 1e-12);
	assert_int_equal(res->window_count, 1);
	assert_int_equal(res->windows[0].start_index, 2000);
	assert_int_equal(res->windows[0].end_index, 3000);
	/* 1000 samples x 12 mA x 1.5 V / 1000 Hz = 18 mJ; 12 mC. */
	assert_true(fabs(res->windows[0].energy_j - 0.018) < 1e-9);
	assert_true(fabs(res->windows[0].charge_c - 0.012) < 1e-9);
	/* 100 Hz packets of 10 samples, all 100 inside the window. */
	assert_int_equal(res->windows[0].packets, 100);
	assert_true(fabs(res->windows[0].median_current_a - 0.012) < 1e-9);
	/* Whole capture: 6 s, 1999 samples at 12 mA, 4001 at 2 mA:
	 * charge = (1999 x 0.012 + 4001 x 0.002) / 1000 = 0.031990 C. */
	assert_true(fabs(res->whole.charge_c - 0.031990) < 1e-9);
	assert_true(fabs(res->whole.duration_s - 6.0) < 1e-12);
	/* Near miss of observation_degraded: the 1.000 s window qualifies. */
	json_t *sec = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_section(res, 1.0, NULL, NULL, &sec, &err), 0);
	assert_false(ergon_issue_has(json_object_get(sec, "issues"), "power.observation_degraded"));
	assert_true(json_is_null(json_object_get(sec, "gate_failure")));
	assert_int_equal(json_integer_value(json_object_get(sec, "short_gate_pulses_ignored")), 1);
	json_decref(sec);
	ergon_gated_free(g);
}

/* The percentile cap, lowered to 30 packets through the engine's
 * distribution_max: gate_floor's 6 s at 1 kHz give 600 packets of 10
 * samples (100 Hz), the window [2000, 3000) 100 of them. The window keeps
 * its first 30 (all 12 mA, median 12 mA), the whole capture its first 30
 * of 600 (packets 0..29: samples 0..299, of which [100, 300) are in the
 * 12 mA glitch: 10 packets at 2 mA then 20 at 12 mA -> nearest-rank median
 * rank ceil(15) = 15 -> 12 mA). With the cap at 600 nothing is dropped. */
static void distribution_cap(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_floor);
	for (int pass = 0; pass < 2; pass++) {
		size_t cap = pass == 0 ? 30 : 600;
		struct ergon_err err = {0};
		struct ergon_gated_config cfg = {
		    .stats_rate_hz = 100, .min_window_s = 1.0, .distribution_max = cap};
		struct ergon_gated *g;
		assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
		assert_int_equal(ergon_gated_raw_begin(g, 1000.0, &err), 0);
		assert_int_equal(ergon_gated_push_raw(g, r.i, r.v, NULL, r.bits, 0, N, &err), 0);
		const struct ergon_gated_result *res = NULL;
		assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
		assert_int_equal(res->window_count, 1);
		assert_int_equal(res->windows[0].packets_total, 100);
		assert_int_equal(res->whole.packets_total, 600);
		/* energy is not capped: 1000 x 12 mA x 1.5 V / 1 kHz = 18 mJ */
		assert_true(fabs(res->windows[0].energy_j - 0.018) < 1e-9);
		json_t *sec = NULL;
		assert_int_equal(ergon_power_section(res, 1.0, NULL, NULL, &sec, &err), 0);
		const json_t *is = NULL;
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(sec, "issues"), i, v)
		{
			if (strcmp(json_string_value(json_object_get(v, "code")),
				   "power.distribution_truncated") == 0)
				is = v;
		}
		if (pass == 0) {
			assert_int_equal(res->windows[0].packets, 30);
			assert_int_equal(res->whole.packets, 30);
			assert_true(fabs(res->whole.median_current_a - 0.012) < 1e-9);
			assert_non_null(is);
			assert_string_equal(json_string_value(json_object_get(is, "severity")),
					    "info");
			const json_t *c = json_object_get(is, "context");
			assert_int_equal(json_integer_value(json_object_get(c, "retained")), 30);
			assert_int_equal(json_integer_value(json_object_get(c, "total")), 100);
			assert_int_equal(json_integer_value(json_object_get(c, "whole_retained")),
					 30);
			assert_int_equal(json_integer_value(json_object_get(c, "whole_total")),
					 600);
		} else {
			assert_int_equal(res->windows[0].packets, 100);
			assert_int_equal(res->whole.packets, 600);
			assert_null(is);
		}
		json_decref(sec);
		ergon_gated_free(g);
	}
}

/* Near miss of gate_high_at_start: low on sample 0, high from sample 1. */
static int gate_from_second(size_t k)
{
	return k >= 1 && k < 1500;
}

static void gate_rising_on_second_sample(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_from_second);
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, NULL, 0, 1);
	assert_false(res->gate_high_at_start);
	assert_int_equal(res->window_count, 1);
	assert_int_equal(res->windows[0].start_index, 1);
	ergon_gated_free(g);
}

struct feed_ctx {
	struct raw *r;
};

static int feed_memory(void *ctx, struct ergon_gated *g, struct ergon_err *err)
{
	struct feed_ctx *c = ctx;
	int rc = ergon_gated_raw_begin(g, 1000.0, err);
	if (rc == 0)
		rc = ergon_gated_push_raw(g, c->r->i, c->r->v, NULL, c->r->bits, 0, N, err);
	return rc;
}

/* The in-memory pipeline entry (for `ergon profile`): same section. */
static void analyze_stream_in_memory(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_floor);
	struct feed_ctx c = {&r};
	struct ergon_gated_config cfg = {.stats_rate_hz = 100, .min_window_s = 1.0};
	json_t *sec = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_analyze_stream(&cfg, feed_memory, &c, NULL, &sec, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(sec, "gated_window_count")), 1);
	/* 1000 samples x (double)0.012f x 1.5 V / 1000 Hz. */
	double e_j = (double)0.012f * 1.5;
	assert_true(fabs(json_number_value(json_object_get(sec, "energy_j")) - e_j) < 1e-15);
	json_decref(sec);
}

/* Gate high from the very first sample to 1500, then a real window. */
static int gate_high_start(size_t k)
{
	return k < 1500 || (k >= 3000 && k < 4500);
}

static void gate_high_from_first_sample(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_high_start);
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, NULL, 0, 1);
	assert_true(res->gate_high_at_start);
	assert_int_equal(res->window_count, 1);
	assert_int_equal(res->windows[0].start_index, 3000);
	assert_int_equal(res->short_gate_pulses_ignored, 0);
	json_t *sec = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_section(res, 1.0, NULL, NULL, &sec, &err), 0);
	assert_true(ergon_issue_has(json_object_get(sec, "issues"), "power.gate_high_at_start"));
	json_decref(sec);
	ergon_gated_free(g);
}

static int gate_never(size_t k)
{
	(void)k;
	return 0;
}

static int gate_no_fall(size_t k)
{
	return k >= 5000;
}

static int gate_glitches_only(size_t k)
{
	return (k >= 100 && k < 300) || (k >= 1000 && k < 1500);
}

static void gate_failures(void **state)
{
	(void)state;
	static struct raw r;
	struct {
		int (*gate)(size_t);
		size_t n;
		const char *failure;
	} cases[] = {
	    {gate_never, N, "no_gate_rise"},
	    {gate_glitches_only, N, "no_gate_rise"},
	    {gate_no_fall, N, "no_gate_fall"},
	    {gate_never, 0, "no_stats_window"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		raw_fill(&r, N, cases[c].gate);
		struct ergon_gated *g;
		const struct ergon_gated_result *res = run_raw(&g, &r, cases[c].n, NULL, 0, 1);
		json_t *sec = NULL;
		struct ergon_err err = {0};
		struct ergon_power_facts f;
		memset(&f, 0, sizeof(f));
		f.have_clean_count = 1;
		f.clean_infer_count = 10;
		assert_int_equal(ergon_power_section(res, 1.0, &f, NULL, &sec, &err), 0);
		assert_string_equal(json_string_value(json_object_get(sec, "gate_failure")),
				    cases[c].failure);
		assert_string_equal(json_string_value(json_object_get(sec, "measurement_scope")),
				    "free_form_capture");
		assert_string_equal(json_string_value(json_object_get(sec, "integrity")),
				    "degraded");
		assert_true(
		    ergon_issue_has(json_object_get(sec, "issues"), "power.observation_degraded"));
		assert_true(json_is_true(json_object_get(sec, "per_inference_metrics_omitted")));
		assert_true(json_is_null(json_object_get(sec, "energy_per_inference_j")));
		if (cases[c].n > 0) {
			/* Whole-capture energy is kept. */
			assert_true(json_number_value(json_object_get(sec, "energy_j")) > 0);
		} else {
			/* No samples: nothing measured, energy and charge null (not 0 J). */
			assert_true(json_is_null(json_object_get(sec, "energy_j")));
			assert_true(json_is_null(json_object_get(sec, "charge_c")));
		}
		json_decref(sec);
		ergon_gated_free(g);
	}
}

/* Markers [1.0, 2.5) s at 1 kHz gate samples 1000..2499: 1.5 s. */
static void marker_gate(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_never);
	struct ergon_gate_marker mk[] = {{1.0, 2.5}, {3.0, 3.2}};
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, mk, 2, 0);
	assert_int_equal(res->window_count, 1);
	assert_int_equal(res->windows[0].start_index, 1000);
	assert_int_equal(res->windows[0].end_index, 2500);
	assert_true(fabs(res->windows[0].duration_s - 1.5) < 1e-12);
	assert_int_equal(res->short_gate_pulses_ignored, 1);
	assert_int_equal(res->gate_source, 2);
	ergon_gated_free(g);
	/* Overlapping markers are refused with the marker named. */
	struct ergon_gate_marker bad[] = {{1.0, 2.5}, {2.0, 3.0}};
	struct ergon_gated_config cfg = {.markers = bad, .marker_count = 2};
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "marker 2"));
}

static void nan_samples_counted_and_left_out(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_floor);
	r.i[2500] = NAN;
	r.v[2501] = NAN;
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, NULL, 0, 1);
	assert_int_equal(res->nan_samples, 2);
	/* 998 valid samples in the window: 998 x 0.018 / 1000 J. */
	assert_int_equal(res->windows[0].samples, 998);
	assert_true(fabs(res->windows[0].energy_j - 0.017964) < 1e-9);
	assert_true(isfinite(res->whole.energy_j));
	json_t *sec = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_section(res, 1.0, NULL, NULL, &sec, &err), 0);
	assert_true(ergon_issue_has(json_object_get(sec, "issues"), "power.nan_samples"));
	json_decref(sec);
	ergon_gated_free(g);
}

static struct ergon_stats_packet pkt(double t0, double span, double i, double e_acc, double c_acc,
				     int dig)
{
	struct ergon_stats_packet p;
	memset(&p, 0, sizeof(p));
	p.t_start_s = t0;
	p.t_end_s = t0 + span;
	p.i_avg_a = i;
	p.v_avg_v = 2.0;
	p.p_avg_w = 2.0 * i;
	p.energy_j = e_acc;
	p.charge_c = c_acc;
	p.digital = (uint32_t)dig;
	p.fields = ERGON_PKT_VOLTAGE | ERGON_PKT_POWER | ERGON_PKT_ACCUM | ERGON_PKT_DIGITAL;
	return p;
}

/* 1 s packets; the gate (INPUT1 here) is high in packets 2 and 3. The
 * window's energy is the accumulator difference end-of-3 minus end-of-1:
 * 0.6 - 0.1 = 0.5 J (not p_avg x span, which would be 0.08 J). */
static void packet_accumulators(void **state)
{
	(void)state;
	struct ergon_stats_packet p[] = {
	    pkt(0, 1, 0.01, 0.1, 0.05, 0),
	    pkt(1, 1, 0.02, 0.3, 0.15, 2),
	    pkt(2, 1, 0.02, 0.6, 0.30, 2),
	    pkt(3, 1, 0.01, 0.7, 0.35, 0),
	};
	struct ergon_gated_config cfg = {.sync_input_index = 1};
	struct ergon_gated *g;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	assert_int_equal(ergon_gated_push_packets(g, p, 4, &err), 0);
	const struct ergon_gated_result *res;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->window_count, 1);
	const struct ergon_window_figures *w = &res->windows[0];
	assert_true(w->from_accumulator);
	assert_true(fabs(w->energy_j - 0.5) < 1e-12);
	assert_true(fabs(w->charge_c - 0.25) < 1e-12);
	assert_true(fabs(w->duration_s - 2.0) < 1e-12);
	/* 0.25 C / 2 s; 0.5 J / 2 s. */
	assert_true(fabs(w->avg_current_a - 0.125) < 1e-12);
	assert_true(fabs(w->avg_power_w - 0.25) < 1e-12);
	ergon_gated_free(g);
}

/* 0.125 s packets. The gate is high from t = 1.0 to 2.25 (edges 1.25 s
 * apart) but packets inside are missing: with 8 of them the packets cover
 * 1.0 s (passes), with 7 only 0.875 s (gate_below_minimum). */
static void packet_gap_gate_below_minimum(void **state)
{
	(void)state;
	for (int present = 7; present <= 8; present++) {
		struct ergon_stats_packet p[32];
		size_t n = 0;
		for (int k = 0; k < 8; k++) /* 0 .. 1.0 s low */
			p[n++] = pkt(0.125 * k, 0.125, 0.002, 0, 0, 0);
		for (int k = 0; k < present; k++) /* high packets from 1.0 s */
			p[n++] = pkt(1.0 + 0.125 * k, 0.125, 0.012, 0, 0, 1);
		for (int k = 0; k < 4; k++) /* low again from 2.25 s */
			p[n++] = pkt(2.25 + 0.125 * k, 0.125, 0.002, 0, 0, 0);
		for (size_t k = 0; k < n; k++)
			p[k].fields &= ~(uint32_t)ERGON_PKT_ACCUM;
		struct ergon_gated_config cfg = {0};
		struct ergon_gated *g;
		struct ergon_err err = {0};
		assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
		assert_int_equal(ergon_gated_push_packets(g, p, n, &err), 0);
		const struct ergon_gated_result *res;
		assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
		assert_int_equal(res->window_count, 1);
		assert_true(res->windows[0].duration_s == 1.25);
		assert_true(res->windows[0].integral_s == 0.125 * present);
		json_t *sec = NULL;
		assert_int_equal(ergon_power_section(res, 1.0, NULL, NULL, &sec, &err), 0);
		int below =
		    ergon_issue_has(json_object_get(sec, "issues"), "power.gate_below_minimum");
		assert_int_equal(below, present == 7);
		assert_string_equal(json_string_value(json_object_get(sec, "integrity")),
				    present == 7 ? "invalid" : "valid");
		json_decref(sec);
		ergon_gated_free(g);
	}
}

static void packet_time_backwards(void **state)
{
	(void)state;
	struct ergon_stats_packet p[] = {pkt(0, 1, 0.01, 0, 0, 0), pkt(1, 1, 0.01, 0, 0, 0),
					 pkt(1.5, 1, 0.01, 0, 0, 0)};
	struct ergon_gated_config cfg = {0};
	struct ergon_gated *g;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	assert_int_equal(ergon_gated_push_packets(g, p, 3, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "packet 3"));
	assert_non_null(strstr(err.msg, "backwards"));
	ergon_gated_free(g);
}

/* A clean window with facts that pass: energy per inference published.
 * Window [2000, 3000): 18 mJ; 100 inferences of 10 ms (expected 1.0 s,
 * ratio 1.0): 180 uJ per inference, 5555.6 inferences per joule. */
static void energy_per_inference_published(void **state)
{
	(void)state;
	static struct raw r;
	raw_fill(&r, N, gate_floor);
	struct ergon_gated *g;
	const struct ergon_gated_result *res = run_raw(&g, &r, N, NULL, 0, 1);
	struct ergon_power_facts f;
	memset(&f, 0, sizeof(f));
	f.have_clean_count = 1;
	f.clean_infer_count = 100;
	f.clean_infer_avg_us = 10000;
	f.terminal.status = ERGON_TERMINAL_OK;
	f.terminal.have_elapsed = 1;
	f.terminal.elapsed_us = 1001000; /* within 1 % + 2 packets (20 ms) */
	f.terminal.completed_count = 100;
	json_t *sec = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_section(res, 1.0, &f, NULL, &sec, &err), 0);
	assert_string_equal(json_string_value(json_object_get(sec, "integrity")), "valid");
	assert_false(json_is_true(json_object_get(sec, "per_inference_metrics_omitted")));
	/* The samples are float32: 12 mA is stored as (double)0.012f. */
	double e_j = 1000.0 * (double)0.012f * 1.5 / 1000.0;
	double epi = json_number_value(json_object_get(sec, "energy_per_inference_j"));
	assert_true(fabs(epi - e_j / 100.0) <= 1e-15 * e_j);
	assert_true(fabs(epi - 180e-6) < 1e-10);
	double ipj = json_number_value(json_object_get(sec, "inferences_per_joule"));
	assert_true(fabs(ipj - 100.0 / e_j) < 1e-9);
	assert_true(json_is_true(json_object_get(sec, "gated_vs_whole_current_ok")));
	assert_true(json_number_value(json_object_get(sec, "gated_window_duration_ratio")) == 1.0);
	/* The CSV has a window row and the whole-capture row. */
	char *csv = NULL;
	size_t len = 0;
	assert_int_equal(ergon_power_csv_render(sec, &csv, &len, &err), 0);
	assert_true(strncmp(csv, "scope,", 6) == 0);
	char *cell = ts_csv_cell(csv, "window_1", "energy_j");
	assert_non_null(cell);
	assert_true(strncmp(cell, "0.018", 5) == 0);
	free(cell);
	cell = ts_csv_cell(csv, "whole_capture_window", "duration_s");
	assert_non_null(cell);
	assert_string_equal(cell, "6");
	free(cell);
	/* Two rows under the header, no more. */
	size_t lines = 0;
	for (const char *c = csv; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 3);
	free(csv);
	/* The table: ASCII when not a TTY, box drawing otherwise. */
	char *t = NULL;
	assert_int_equal(ergon_power_table_render(sec, 0, &t, &err), 0);
	assert_non_null(strstr(t, "| Energy/inference | "));
	assert_non_null(strstr(t, "180.000 uJ"));
	assert_null(strstr(t, "\xe2\x94"));
	free(t);
	assert_int_equal(ergon_power_table_render(sec, 1, &t, &err), 0);
	assert_non_null(strstr(t, "\xe2\x94\x8c"));
	assert_non_null(strstr(t, "180.000 \xc2\xb5J"));
	free(t);
	json_decref(sec);
	ergon_gated_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(distribution_cap),
	    cmocka_unit_test(glitch_floor_near_miss),
	    cmocka_unit_test(gate_high_from_first_sample),
	    cmocka_unit_test(gate_rising_on_second_sample),
	    cmocka_unit_test(analyze_stream_in_memory),
	    cmocka_unit_test(gate_failures),
	    cmocka_unit_test(marker_gate),
	    cmocka_unit_test(nan_samples_counted_and_left_out),
	    cmocka_unit_test(packet_accumulators),
	    cmocka_unit_test(packet_gap_gate_below_minimum),
	    cmocka_unit_test(packet_time_backwards),
	    cmocka_unit_test(energy_per_inference_published),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The power CSV readers and the marker parser: a good file of each form
 * through the engine (values by hand), and every rejection naming the
 * line, column and fix. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/power_csv.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse(int kind, const char *text, size_t split, const struct ergon_gated_result **res,
		 struct ergon_gated **g, struct ergon_err *err)
{
	struct ergon_gated_config cfg = {.stats_rate_hz = 100, .min_window_s = 1.0};
	assert_int_equal(ergon_gated_new(&cfg, g, err), 0);
	struct ergon_power_csv *p = NULL;
	struct ergon_power_sink sink;
	ergon_power_sink_gated(*g, &sink);
	assert_int_equal(ergon_power_csv_new(kind, &sink, 0, "t.csv", &p, err), 0);
	size_t len = strlen(text);
	if (split > len)
		split = len;
	int rc = ergon_power_csv_feed(p, text, split, err);
	if (rc == 0)
		rc = ergon_power_csv_feed(p, text + split, len - split, err);
	if (rc == 0)
		rc = ergon_power_csv_end(p, err);
	ergon_power_csv_free(p);
	if (rc == 0)
		rc = ergon_gated_finish(*g, res, err);
	return rc;
}

/* Four 0.5 s packets, gate (digital bit 0) high in the middle two; the
 * accumulators give the window 0.9 - 0.2 = 0.7 J and 0.35 - 0.1 = 0.25 C. */
static const char *stats_ok =
    "# a comment line\r\n"
    "t_start_s,t_end_s,i_avg_a,i_max_a,v_avg_v,p_avg_w,charge_c,energy_j,digital\r\n"
    "0.0,0.5,0.1,0.2,2.0,0.2,0.10,0.2,0\r\n"
    "\r\n"
    "0.5,1.0,0.3,0.9,2.0,0.6,0.25,0.5,1\r\n"
    "1.0,1.5,0.2,0.4,2.0,0.4,0.35,0.9,0x1\r\n"
    "1.5,2.0,0.1,0.2,2.0,0.2,0.40,1.0,0";

static void stats_csv_through_engine(void **state)
{
	(void)state;
	/* Every split point gives the same result (incremental parser). */
	for (size_t split = 0; split < strlen(stats_ok); split += 7) {
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		assert_int_equal(parse(ERGON_POWER_CSV_STATS, stats_ok, split, &res, &g, &err), 0);
		assert_int_equal(res->packets, 4);
		assert_int_equal(res->window_count, 1);
		assert_true(fabs(res->windows[0].energy_j - 0.7) < 1e-12);
		assert_true(fabs(res->windows[0].charge_c - 0.25) < 1e-12);
		assert_true(res->windows[0].duration_s == 1.0);
		assert_true(res->windows[0].peak_current_a == 0.9);
		/* Median over the two packets (0.3, 0.2): nearest rank 1 = 0.2. */
		assert_true(res->windows[0].median_current_a == 0.2);
		ergon_gated_free(g);
	}
}

/* 10 Hz raw samples, gate high for samples 5..16 (1.2 s). */
static void raw_csv_through_engine(void **state)
{
	(void)state;
	char *text = ts_strf("t_s,current_a,voltage_v,digital\n");
	for (int k = 0; k < 25; k++) {
		int hi = k >= 5 && k < 17;
		char *line = ts_strf("%s%.1f,%s,2.0,%d\n", text, k * 0.1, hi ? "0.5" : "0.25", hi);
		free(text);
		text = line;
	}
	struct ergon_gated *g;
	const struct ergon_gated_result *res;
	struct ergon_err err = {0};
	assert_int_equal(parse(ERGON_POWER_CSV_RAW, text, 33, &res, &g, &err), 0);
	assert_true(fabs(res->sample_rate_hz - 10.0) < 1e-9);
	assert_int_equal(res->window_count, 1);
	assert_int_equal(res->windows[0].start_index, 5);
	assert_int_equal(res->windows[0].end_index, 17);
	/* 12 samples x 0.5 A x 2 V / 10 Hz = 1.2 J. */
	assert_true(fabs(res->windows[0].energy_j - 1.2) < 1e-9);
	ergon_gated_free(g);
	free(text);
}

static void expect_error(int kind, const char *text, int code, const char *needle1,
			 const char *needle2)
{
	struct ergon_gated *g;
	const struct ergon_gated_result *res;
	struct ergon_err err = {0};
	assert_int_equal(parse(kind, text, 0, &res, &g, &err), code);
	if (strstr(err.msg, needle1) == NULL || (needle2 && strstr(err.msg, needle2) == NULL))
		fail_msg("message '%s' lacks '%s'/'%s'", err.msg, needle1, needle2 ? needle2 : "");
	ergon_gated_free(g);
}

static void csv_rejections(void **state)
{
	(void)state;
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,i_avg_a\n0,1\n", ERGON_EPARSE, "t.csv:1",
		     "'t_end_s'");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a\n0,1,abc\n", ERGON_EPARSE,
		     "t.csv:2:5", "i_avg_a 'abc' is not a number");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a\n0,1\n", ERGON_EPARSE,
		     "t.csv:2", "2 fields but the header names 3");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a,i_avg_a\n", ERGON_EPARSE,
		     "t.csv:1:27", "appears twice");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a,charge_c\n", ERGON_EPARSE,
		     "t.csv:1", "charge_c and energy_j");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a,digital\n0,1,1,-1\n",
		     ERGON_EPARSE, "t.csv:2:7", "unsigned integer");
	expect_error(ERGON_POWER_CSV_STATS, "t_start_s,t_end_s,i_avg_a\n0,1,1\n0.5,1.5,1\n",
		     ERGON_EPARSE, "t.csv:3", "backwards");
	expect_error(ERGON_POWER_CSV_STATS, "", ERGON_EPARSE, "t.csv", "no header");
	expect_error(ERGON_POWER_CSV_RAW, "t_s,current_a,voltage_v\n0,1,1\n0.1,1,1\n0.05,1,1\n",
		     ERGON_EPARSE, "t.csv:4", "time goes backwards");
	expect_error(ERGON_POWER_CSV_RAW, "t_s,current_a,voltage_v\n0,1,1\n0.1,1,1\n0.26,1,1\n",
		     ERGON_EPARSE, "t.csv:4", "off the 10 Hz grid");
	expect_error(ERGON_POWER_CSV_RAW, "t_s,current_a,voltage_v\n0,1,1\n", ERGON_EPARSE, "t.csv",
		     "single raw sample");
	char *longline = calloc(1, ERGON_POWER_CSV_LINE_MAX + 100);
	memset(longline, 'x', ERGON_POWER_CSV_LINE_MAX + 10);
	expect_error(ERGON_POWER_CSV_RAW, longline, ERGON_ETOOBIG, "t.csv:1", "longer than");
	free(longline);
}

static void markers_parse(void **state)
{
	(void)state;
	struct ergon_gate_marker *m = NULL;
	size_t n = 0;
	struct ergon_err err = {0};
	const char *ok = "start_s,end_s\n# first window\n1.0,2.5\r\n3,4.25\n";
	assert_int_equal(ergon_gate_markers_parse(ok, strlen(ok), "g.csv", &m, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(m[0].start_s == 1.0 && m[0].end_s == 2.5);
	assert_true(m[1].start_s == 3.0 && m[1].end_s == 4.25);
	free(m);
	const char *overlap = "1.0,2.5\n2.0,3.0\n";
	assert_int_equal(ergon_gate_markers_parse(overlap, strlen(overlap), "g.csv", &m, &n, &err),
			 ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "g.csv:2"));
	ergon_err_clear(&err);
	const char *junk = "1.0;2.5\n";
	assert_int_equal(ergon_gate_markers_parse(junk, strlen(junk), "g.csv", &m, &n, &err),
			 ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "g.csv:1: expected 'start_s,end_s'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(stats_csv_through_engine),
	    cmocka_unit_test(raw_csv_through_engine),
	    cmocka_unit_test(csv_rejections),
	    cmocka_unit_test(markers_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Issue 30, scripts/mutate.sh: the bounds of the recording readers and the
 * gated engine pinned on both sides, each written for a mutant that
 * survived the first mutation run (named in each test). Every expected
 * value is worked out here from the doc's rule:
 *  - JLS DATA payloads: the entries must fit the payload after its
 *    16-byte header; entry sizes 1..64 bits; a chunk payload at most
 *    ERGON_JLS_PAYLOAD_MAX bytes (include/ergon/jls.h);
 *  - statistics CSV: full scale with headroom (12.5 A), sample-id jumps
 *    beyond 1.5 spans at 2 MHz, a line of 4096 bytes (docs/POWER_CHECKS.md);
 *  - the gated engine: reverse packets beyond 50 mA, --stats-rate-hz
 *    against a packet's span within 1 % + 1 us;
 *  - the HPX parser: a line longer than line_max_bytes is dropped and
 *    counted (include/ergon/hpx.h). */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/hpx.h"
#include "ergon/issue_list.h"
#include "ergon/jls.h"
#include "ergon/power_csv.h"
#include "test_support.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void wr_u16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static void wr_u32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/* DATA payload: u64 first sample id, u32 entry count, u16 entry bits, u16
 * reserved, then the entries. 20 bytes hold 4 bytes of entries: 32 one-bit
 * entries fit, 33 need 5 bytes and are refused; 64-bit entries are the
 * widest, 65 bits refused (mutants jls_data_bound, jls_entry_bits_65). */
static void jls_data_entries_fit_the_payload(void **state)
{
	(void)state;
	uint8_t p[20] = {0};
	struct ergon_jls_data d;
	struct ergon_err err = {0};
	wr_u32(p + 8, 32);
	wr_u16(p + 12, 1);
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), 0);
	assert_int_equal(d.entries_len, 4);
	wr_u32(p + 8, 33);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "holds 4"));
	/* 8 x 4 bits = 4 bytes fit, 9 x 4 bits = 5 bytes do not. */
	wr_u32(p + 8, 8);
	wr_u16(p + 12, 4);
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), 0);
	wr_u32(p + 8, 9);
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), ERGON_EPARSE);
	/* Entry sizes: 64 bits with no entries is fine, 65 is not, 0 is not. */
	wr_u32(p + 8, 0);
	wr_u16(p + 12, 64);
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), 0);
	wr_u16(p + 12, 65);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), ERGON_EPARSE);
	if (strstr(err.msg, "65 bits") == NULL)
		fail_msg("%s", err.msg);
	wr_u16(p + 12, 0);
	assert_int_equal(ergon_jls_data_decode(p, sizeof p, &d, "t.jls", &err), ERGON_EPARSE);
}

/* A chunk header with a valid CRC32C whose payload length is
 * ERGON_JLS_PAYLOAD_MAX is read; one byte more is refused naming the
 * limit (mutant jls_payload_max_dropped). The header: item_next,
 * item_prev (u64), tag, reserved, chunk_meta (u16), payload_length,
 * payload_prev_length (u32), CRC32C of the first 28 bytes. */
static void jls_chunk_payload_limit(void **state)
{
	(void)state;
	uint32_t lens[] = {ERGON_JLS_PAYLOAD_MAX, ERGON_JLS_PAYLOAD_MAX + 1u};
	for (int k = 0; k < 2; k++) {
		uint8_t b[ERGON_JLS_CHUNK_HEADER_SIZE] = {0};
		b[16] = 0x20;
		wr_u32(b + 20, lens[k]);
		wr_u32(b + 28, ergon_jls_crc32c(0, b, 28));
		struct ergon_jls_chunk_header h;
		struct ergon_err err = {0};
		int rc = ergon_jls_chunk_header_decode(b, sizeof b, &h, "t.jls", &err);
		if (k == 0) {
			assert_int_equal(rc, 0);
			assert_int_equal(h.payload_length, ERGON_JLS_PAYLOAD_MAX);
		} else {
			assert_int_equal(rc, ERGON_EPARSE);
			assert_non_null(strstr(err.msg, "exceeds"));
		}
	}
}

/* Parse a statistics CSV through the gated engine; *warn gets the reader's
 * warnings. Returns the first error's code. */
static int parse_stats(const char *text, int strict, double rate_hz, struct ergon_gated **g,
		       const struct ergon_gated_result **res, struct ergon_issue_list *warn,
		       struct ergon_err *err)
{
	struct ergon_gated_config cfg = {
	    .stats_rate_hz = rate_hz, .stats_rate_strict = strict, .min_window_s = 0.05};
	assert_int_equal(ergon_gated_new(&cfg, g, err), 0);
	struct ergon_power_csv *p = NULL;
	struct ergon_power_sink sink;
	ergon_power_sink_gated(*g, &sink);
	assert_int_equal(ergon_power_csv_new(ERGON_POWER_CSV_STATS, &sink, 0, "s.csv", &p, err),
			 0);
	int rc = ergon_power_csv_feed(p, text, strlen(text), err);
	if (rc == 0)
		rc = ergon_power_csv_end(p, err);
	if (rc == 0 && warn)
		ergon_power_csv_warnings(p, warn);
	ergon_power_csv_free(p);
	if (rc == 0)
		rc = ergon_gated_finish(*g, res, err);
	return rc;
}

/* POWER_CHECKS.md: for raw input --stats-rate-hz is the rate samples are
 * reduced to packets at (default 1000). 100 samples at 10 kHz (10 ms),
 * no rate given: 10 packets of 1 ms (mutant raw_rate_default_doubled
 * gives 20 of 0.5 ms). */
static void raw_packets_default_1_kHz(void **state)
{
	(void)state;
	char *text = ts_strf("t_s,current_a,voltage_v\n");
	for (int k = 0; k < 100; k++) {
		char *n = ts_strf("%s%.4f,0.01,1.8\n", text, k * 1e-4);
		free(text);
		text = n;
	}
	struct ergon_gated_config cfg = {.min_window_s = 0.001};
	struct ergon_gated *g;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	struct ergon_power_csv *p = NULL;
	struct ergon_power_sink sink;
	ergon_power_sink_gated(g, &sink);
	assert_int_equal(ergon_power_csv_new(ERGON_POWER_CSV_RAW, &sink, 0, "r.csv", &p, &err), 0);
	assert_int_equal(ergon_power_csv_feed(p, text, strlen(text), &err), 0);
	assert_int_equal(ergon_power_csv_end(p, &err), 0);
	ergon_power_csv_free(p);
	const struct ergon_gated_result *res;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->packets, 10);
	assert_true(fabs(res->stats_period_s - 0.001) < 1e-12);
	ergon_gated_free(g);
	free(text);
}

/* Twenty 10 ms packets, the gate high for packets 5..16 (0.12 s); a
 * column of the caller's choosing per packet. */
static char *stats_text(const char *header, char *(*row)(int k, double t0, double t1, int gate))
{
	char *text = ts_strf("%s\n", header);
	for (int k = 0; k < 20; k++) {
		char *r = row(k, k * 0.01, (k + 1) * 0.01, k >= 5 && k < 17);
		char *n = ts_strf("%s%s\n", text, r);
		free(r);
		free(text);
		text = n;
	}
	return text;
}

static double g_current_a;
static char *row_current(int k, double t0, double t1, int gate)
{
	double i = k == 10 ? g_current_a : 0.01;
	return ts_strf("%.2f,%.2f,%.6g,1.8,%d", t0, t1, i, gate);
}

/* The statistics CSV's full scale: JS220 10 A with 25 % headroom = 12.5 A.
 * 12.4 A is a reading, 12.6 A a corrupt file (mutant
 * csv_full_scale_doubled). */
static void stats_current_full_scale(void **state)
{
	(void)state;
	double cur[] = {12.4, 12.6};
	for (int k = 0; k < 2; k++) {
		g_current_a = cur[k];
		char *text = stats_text("t_start_s,t_end_s,i_avg_a,v_avg_v,digital", row_current);
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		int rc = parse_stats(text, 0, 100, &g, &res, NULL, &err);
		if (k == 0) {
			assert_int_equal(rc, 0);
			assert_true(res->windows[0].peak_current_a == 12.4);
		} else {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(err.msg, "s.csv:12:"));
		}
		ergon_gated_free(g);
		free(text);
	}
}

/* Sample ids at 2 MHz: a 10 ms packet spans 20,000 ids. The id after
 * packet 9 jumps by J: up to 1.5 x 20,000 = 30,000 is no drop; 35,000
 * (1.75 spans) is power.packets_dropped (mutant csv_id_jump_3). */
static long g_jump;
static char *row_ids(int k, double t0, double t1, int gate)
{
	long id = 20000L * k + (k >= 10 ? g_jump - 20000 : 0);
	return ts_strf("%.2f,%.2f,0.01,1.8,%d,%ld", t0, t1, gate, id);
}

static void stats_sample_id_jump(void **state)
{
	(void)state;
	long jumps[] = {30000, 35000};
	for (int k = 0; k < 2; k++) {
		g_jump = jumps[k];
		char *text = stats_text("t_start_s,t_end_s,i_avg_a,v_avg_v,digital,sample_id", row_ids);
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		struct ergon_issue_list w = {0};
		assert_int_equal(parse_stats(text, 0, 100, &g, &res, &w, &err), 0);
		assert_int_equal(ergon_issue_list_has(&w, "power.packets_dropped"), k);
		ergon_issue_list_cleanup(&w);
		ergon_gated_free(g);
		free(text);
	}
}

/* A line of exactly 4096 bytes (without its newline) is read; 4097 bytes
 * are cut and refused at column 4097 (mutant csv_line_max_off_by_one). A
 * comment line pads to the length. */
static void stats_line_of_4096_bytes(void **state)
{
	(void)state;
	size_t lens[] = {ERGON_POWER_CSV_LINE_MAX, ERGON_POWER_CSV_LINE_MAX + 1};
	for (int k = 0; k < 2; k++) {
		char *pad = malloc(lens[k] + 1);
		pad[0] = '#';
		memset(pad + 1, 'x', lens[k] - 1);
		pad[lens[k]] = 0;
		g_current_a = 0.01;
		char *body = stats_text("t_start_s,t_end_s,i_avg_a,v_avg_v,digital", row_current);
		char *text = ts_strf("%s\n%s", pad, body);
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		int rc = parse_stats(text, 0, 100, &g, &res, NULL, &err);
		if (k == 0) {
			if (rc)
				fail_msg("%s", err.msg);
			assert_int_equal(res->packets, 20);
		} else {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(err.msg, "s.csv:1:4097"));
		}
		ergon_gated_free(g);
		free(text);
		free(body);
		free(pad);
	}
}

/* Reverse packets: power negative and |current| beyond 50 mA. Eleven gated
 * packets at -60 mA (-0.108 W at 1.8 V) count 11; at -40 mA none
 * (mutant reverse_current_100mA). */
static char *row_reverse(int k, double t0, double t1, int gate)
{
	double i = gate && k >= 6 && k < 17 ? g_current_a : 0.01;
	return ts_strf("%.2f,%.2f,%.6g,1.8,%.6g,%d", t0, t1, i, i * 1.8, gate);
}

static void reverse_packets_beyond_50_mA(void **state)
{
	(void)state;
	double cur[] = {-0.06, -0.04};
	uint64_t want[] = {11, 0};
	for (int k = 0; k < 2; k++) {
		g_current_a = cur[k];
		char *text =
		    stats_text("t_start_s,t_end_s,i_avg_a,v_avg_v,p_avg_w,digital", row_reverse);
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		assert_int_equal(parse_stats(text, 0, 100, &g, &res, NULL, &err), 0);
		assert_int_equal(res->window_count, 1);
		assert_int_equal(res->windows[0].sg.reverse_n, want[k]);
		ergon_gated_free(g);
		free(text);
	}
}

/* --stats-rate-hz 100 against packets of span S: allowed |S - 0.01| <=
 * 1 % x 0.01 + 1 us = 0.000101 s. 0.0101 s passes; 0.01015 s is refused
 * naming the packet (mutant stats_rate_2pct). */
static double g_span;
static char *row_span(int k, double t0, double t1, int gate)
{
	(void)t0;
	(void)t1;
	return ts_strf("%.6f,%.6f,0.01,1.8,%d", k * g_span, (k + 1) * g_span, gate);
}

static void stats_rate_one_percent(void **state)
{
	(void)state;
	double spans[] = {0.0101, 0.01015};
	for (int k = 0; k < 2; k++) {
		g_span = spans[k];
		char *text = stats_text("t_start_s,t_end_s,i_avg_a,v_avg_v,digital", row_span);
		struct ergon_gated *g;
		const struct ergon_gated_result *res;
		struct ergon_err err = {0};
		int rc = parse_stats(text, 1, 100, &g, &res, NULL, &err);
		if (k == 0) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, ERGON_EUSAGE);
			assert_non_null(strstr(err.msg, "statistics packet 1 "));
		}
		ergon_gated_free(g);
		free(text);
	}
}

/* HPX lines: with line_max_bytes 64 a line of 64 bytes (without its
 * newline) is read, one of 65 is dropped and counted in lines_too_long,
 * fed whole or a byte at a time (mutant hpx_line_cap_ge). */
static void hpx_line_of_max_bytes(void **state)
{
	(void)state;
	for (size_t len = 64; len <= 65; len++) {
		for (int bytewise = 0; bytewise < 2; bytewise++) {
			struct ergon_hpx_limits lim = {.line_max_bytes = 64};
			struct ergon_hpx_parser *p = NULL;
			struct ergon_err err = {0};
			assert_int_equal(ergon_hpx_parser_new(&lim, &p, &err), 0);
			char line[80];
			memset(line, 'x', len);
			line[len] = '\n';
			if (bytewise) {
				for (size_t i = 0; i <= len; i++)
					assert_true(ergon_hpx_parser_feed(p, line + i, 1, &err) >= 0);
			} else {
				assert_true(ergon_hpx_parser_feed(p, line, len + 1, &err) >= 0);
			}
			assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
			struct ergon_hpx_stats st;
			ergon_hpx_parser_stats(p, &st);
			assert_int_equal(st.lines_too_long, len - 64);
			ergon_hpx_parser_free(p);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(jls_data_entries_fit_the_payload),
	    cmocka_unit_test(jls_chunk_payload_limit),
	    cmocka_unit_test(stats_current_full_scale),
	    cmocka_unit_test(stats_sample_id_jump),
	    cmocka_unit_test(stats_line_of_4096_bytes),
	    cmocka_unit_test(reverse_packets_beyond_50_mA),
	    cmocka_unit_test(stats_rate_one_percent),
	    cmocka_unit_test(hpx_line_of_max_bytes),
	    cmocka_unit_test(raw_packets_default_1_kHz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The bridge instrument (docs/BRIDGE.md): the wire decoder on hand-made
 * lines, and the driver against tests/support/bridge_fake.py, whose
 * waveform (3.3 V; 10 mA for packets 0-99, 20 mA for 100-199, ...; 1 ms
 * packets of 1000 samples at 1 MHz) gives every expected value by hand. */
#include "drivers/instruments/bridge/bridge_wire.h"
#include "ergon/bridge.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *fake_py(void)
{
	static char path[512];
	const char *src = getenv("ERGON_SOURCE_DIR");
	snprintf(path, sizeof(path), "%s/tests/support/bridge_fake.py", src ? src : ".");
	return path;
}

static int open_fake(const char *args, struct ergon_instrument **inst, struct ergon_err *err)
{
	char spec[1024];
	snprintf(spec, sizeof(spec), "bridge:python3 %s %s", fake_py(), args);
	return ergon_instrument_open(spec, NULL, inst, err);
}

/* Read packets until want arrived, an error, or 10 s. */
static int read_n(struct ergon_instrument *inst, struct ergon_stats_packet *out, size_t want,
		  size_t *got, struct ergon_err *err)
{
	*got = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (*got < want) {
		size_t n = 0;
		int rc = ergon_bridge_read_packets(inst, out + *got, want - *got, &n, err);
		*got += n;
		if (rc)
			return rc;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) > 10.0)
			fail_msg("timed out after %zu packets", *got);
	}
	return 0;
}

/* Open the fake bridge with args, start it and read n packets into p
 * (read_n's result; open and start must succeed). */
static int start_read(const char *args, struct ergon_instrument **inst,
		      struct ergon_stats_packet *p, size_t n, size_t *got, struct ergon_err *err)
{
	assert_int_equal(open_fake(args, inst, err), 0);
	assert_int_equal(ergon_instrument_start(*inst, err), 0);
	*got = 0;
	return read_n(*inst, p, n, got, err);
}

/* --- the wire decoder ----------------------------------------------------- */

static const char hello[] =
    "{\"type\":\"hello\",\"protocol\":1,\"vendor\":\"V\",\"model\":\"M\",\"serial\":\"S\","
    "\"accuracy_pct\":0.5,\"sample_rate_hz\":1000000,\"stats_rate_hz\":1000,"
    "\"integrates\":\"energy+charge\",\"provenance\":\"measured\",\"clock\":\"instrument\","
    "\"streams\":[\"stats\"],\"inputs\":2,\"outputs\":1,\"heartbeat_s\":2,"
    "\"validated_against\":\"x\"}";

static void test_wire_hello(void **state)
{
	(void)state;
	struct bridge_msg m;
	struct ergon_err err = {0};
	assert_int_equal(bridge_wire_decode(hello, strlen(hello), 0, 1, &m, &err), 0);
	assert_int_equal(m.type, BRIDGE_MSG_HELLO);
	assert_string_equal(m.hello.vendor, "V");
	assert_true(m.hello.sample_rate_hz == 1e6);
	assert_int_equal(m.hello.outputs, 1);
	assert_int_equal(m.hello.stream_stats, 1);
	assert_int_equal(m.hello.stream_raw, 0);
	bridge_msg_cleanup(&m);
}

static void test_wire_nan_names_offset(void **state)
{
	(void)state;
	/* "NaN" starts at index 57 of this line (counted by hand: 1 + 7 + 1 +
	 * 7 + 1 + 12 + 1 + 15 + 1 + 10 + 1); the line starts at stream byte
	 * 1000, so the error must name byte 1057, column 58. */
	const char *l = "{\"type\":\"stats\",\"sample_id\":0,\"sample_count\":1,\"i_avg_a\":NaN}";
	assert_int_equal(strstr(l, "NaN") - l, 57);
	struct bridge_msg m;
	struct ergon_err err = {0};
	assert_int_equal(bridge_wire_decode(l, strlen(l), 1000, 7, &m, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "byte 1057 (line 7, column 58)"));
	assert_non_null(strstr(err.msg, "NaN"));
	bridge_msg_cleanup(&m);
}

static void test_wire_errors(void **state)
{
	(void)state;
	struct {
		const char *line, *want;
	} cases[] = {
	    {"hello", "not a JSON object"},
	    {"[1]", "expected a JSON object"},
	    {"{\"type\":\"nope\"}", "'nope' is not a message type"},
	    {"{\"type\":\"heartbeat\",\"extra\":1}", "heartbeat.extra: unknown field"},
	    {"{\"type\":\"stats\",\"sample_id\":0,\"sample_count\":1,\"t_start_s\":1,"
	     "\"t_end_s\":1,\"i_avg_a\":0}",
	     "stats.t_end_s: 1 is not after t_start_s 1"},
	    {"{\"type\":\"stats\",\"sample_id\":0,\"sample_count\":1,\"t_start_s\":0,"
	     "\"t_end_s\":1,\"i_avg_a\":0,\"energy_j\":1}",
	     "come as a pair"},
	    {"{\"type\":\"raw\",\"sample_id\":0,\"t_s\":0,\"n\":1,\"current_a\":\"AAAA\"}",
	     "does not hold 1 float32"},
	    /* 0x7fc00000 little-endian = NaN */
	    {"{\"type\":\"raw\",\"sample_id\":0,\"t_s\":0,\"n\":1,\"current_a\":\"AADAfw==\"}",
	     "sample 0 is NaN"},
	    {"{\"type\":\"ack\",\"id\":-1,\"ok\":true}", "ack.id: expected an integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bridge_msg m;
		struct ergon_err err = {0};
		int rc = bridge_wire_decode(cases[i].line, strlen(cases[i].line), 0, 1, &m, &err);
		bridge_msg_cleanup(&m);
		if (rc != ERGON_EPARSE || strstr(err.msg, cases[i].want) == NULL)
			fail_msg("case %zu: rc %d, message '%s', wanted '%s'", i, rc, err.msg,
				 cases[i].want);
	}
}

static void test_wire_raw_base64(void **state)
{
	(void)state;
	/* 1.0f = 0x3f800000 -> bytes 00 00 80 3f; 2.0f = 0x40000000 -> 00 00 00 40:
	 * base64 of 00 00 80 3f 00 00 00 40 is "AACAPwAAAEA=". */
	const char *l = "{\"type\":\"raw\",\"sample_id\":5,\"t_s\":0,\"n\":2,"
			"\"current_a\":\"AACAPwAAAEA=\",\"digital\":\"AQI=\"}";
	struct bridge_msg m;
	struct ergon_err err = {0};
	assert_int_equal(bridge_wire_decode(l, strlen(l), 0, 1, &m, &err), 0);
	assert_int_equal(m.raw.n, 2);
	assert_true(m.raw.current_a[0] == 1.0f && m.raw.current_a[1] == 2.0f);
	assert_int_equal(m.raw.digital[0], 1);
	assert_int_equal(m.raw.digital[1], 2);
	assert_null(m.raw.voltage_v);
	bridge_msg_cleanup(&m);
}

/* A stats_block of two packets, every array written by hand: float64
 * little-endian 0.5 = 3fe0000000000000 -> bytes 00 00 00 00 00 00 e0 3f,
 * 1.0 = 3ff0..., 1.5 = 3ff8..., 2.0 = 4000..., 0.25 = 3fd0...; base64 of
 * the 16 bytes of two of them (checked with Python's struct + base64, not
 * with ergon). */
#define B64_05_10 "AAAAAAAA4D8AAAAAAADwPw=="
#define B64_10_15 "AAAAAAAA8D8AAAAAAAD4Pw=="
#define B64_10_20 "AAAAAAAA8D8AAAAAAAAAQA=="
#define B64_025_025 "AAAAAAAA0D8AAAAAAADQPw=="
#define B64_10_NAN "AAAAAAAA8D8AAAAAAAD4fw==" /* 1.0, then 7ff8... = NaN */
#define B64_10_10 "AAAAAAAA8D8AAAAAAADwPw=="
#define BLOCK_HEAD "{\"type\":\"stats_block\",\"sample_id\":1000,\"sample_count\":10,\"n\":2,"

static void test_wire_stats_block(void **state)
{
	(void)state;
	const char *l = BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
				   "\",\"i_avg_a\":\"" B64_10_20 "\",\"i_min_a\":\"" B64_025_025
				   "\",\"i_max_a\":\"" B64_10_20 "\",\"v_avg_v\":\"" B64_10_20
				   "\",\"charge_c\":\"" B64_05_10 "\",\"energy_j\":\"" B64_10_15
				   "\",\"digital\":\"AQAAAAIAAAA=\"}"; /* u32 1, 2 */
	struct bridge_msg m;
	struct ergon_err err = {0};
	if (bridge_wire_decode(l, strlen(l), 0, 1, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.type, BRIDGE_MSG_STATS_BLOCK);
	assert_int_equal(m.block.n, 2);
	assert_int_equal(m.block.sample_count, 10);
	const struct ergon_stats_packet *p = m.block.p;
	assert_int_equal(p[0].sample_id, 1000);
	assert_int_equal(p[1].sample_id, 1010);
	assert_true(p[0].t_start_s == 0.5 && p[1].t_start_s == 1.0);
	assert_true(p[0].t_end_s == 1.0 && p[1].t_end_s == 1.5);
	assert_true(p[0].i_avg_a == 1.0 && p[1].i_avg_a == 2.0);
	assert_true(p[1].i_min_a == 0.25 && p[1].i_max_a == 2.0 && p[1].v_avg_v == 2.0);
	assert_true(p[1].charge_c == 1.0 && p[1].energy_j == 1.5);
	assert_int_equal(p[0].digital, 1);
	assert_int_equal(p[1].digital, 2);
	assert_int_equal(p[1].fields, ERGON_PKT_VOLTAGE | ERGON_PKT_ACCUM | ERGON_PKT_DIGITAL |
					  ERGON_PKT_MINMAX);
	/* The fast path (the plain form above) and jansson's agree; so do a
	 * form the fast path leaves to jansson: blanks, and an escaped base64
	 * character ("\u0041" is 'A'). */
	struct bridge_msg mj;
	bridge_wire_no_fast = 1;
	assert_int_equal(bridge_wire_decode(l, strlen(l), 0, 1, &mj, &err), 0);
	bridge_wire_no_fast = 0;
	assert_int_equal(mj.block.n, 2);
	assert_memory_equal(mj.block.p, m.block.p, 2 * sizeof(*m.block.p));
	bridge_msg_cleanup(&mj);
	const char *spaced = "{\"type\": \"stats_block\", \"sample_id\": 1000, \"sample_count\": 10, "
			     "\"n\": 2, \"t_start_s\": \"\\u0041AAAAAAA4D8AAAAAAADwPw==\", \"t_end_s\": \"" B64_10_15
			     "\", \"i_avg_a\":\"" B64_10_20 "\",\"i_min_a\":\"" B64_025_025
			     "\",\"i_max_a\":\"" B64_10_20 "\",\"v_avg_v\":\"" B64_10_20
			     "\",\"charge_c\":\"" B64_05_10 "\",\"energy_j\":\"" B64_10_15
			     "\",\"digital\":\"AQAAAAIAAAA=\"}";
	if (bridge_wire_decode(spaced, strlen(spaced), 0, 1, &mj, &err))
		fail_msg("%s", err.msg);
	assert_memory_equal(mj.block.p, m.block.p, 2 * sizeof(*m.block.p));
	bridge_msg_cleanup(&mj);
	bridge_msg_cleanup(&m);
	bridge_msg_cleanup(&m); /* twice is safe */
	/* The least: times and the average current, no digital. */
	const char *l2 = BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
				    "\",\"i_avg_a\":\"" B64_10_20 "\"}";
	assert_int_equal(bridge_wire_decode(l2, strlen(l2), 0, 1, &m, &err), 0);
	assert_int_equal(m.block.p[1].fields, 0);
	bridge_msg_cleanup(&m);
}

static void test_wire_stats_block_errors(void **state)
{
	(void)state;
	struct {
		const char *line, *want;
	} cases[] = {
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_NAN "\"}",
	     "stats_block.i_avg_a: packet 1 is NaN"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_10
			"\",\"i_avg_a\":\"" B64_10_20 "\"}",
	     "stats_block.t_end_s: packet 1: 1 is not after t_start_s 1"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"AAAA\"}",
	     "does not hold 2 float64 (16 bytes, 24 characters padded)"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15 "\"}",
	     "stats_block.i_avg_a: missing (required)"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_20 "\",\"i_min_a\":\"" B64_10_20 "\"}",
	     "i_min_a and i_max_a come as a pair"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_20 "\",\"v_std_v\":\"" B64_10_20 "\"}",
	     "v_avg_v: missing while other v_* fields are present"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_20 "\",\"digital\":\"AQAA\"}",
	     "does not hold 2 u32"},
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_20 "\",\"sample_rate_hz\":1}",
	     "stats_block.sample_rate_hz: unknown field"},
	    {"{\"type\":\"stats_block\",\"sample_id\":0,\"sample_count\":10,\"n\":4097}",
	     "stats_block.n: a block holds 1..4096 packets"},
	    {"{\"type\":\"raw\",\"sample_id\":0,\"t_s\":0,\"n\":65537,\"current_a\":\"AAAA\"}",
	     "raw.n: a block holds 1..65536 samples"},
	    {"{\"type\":\"stats_block\",\"sample_id\":0,\"sample_count\":10,\"n\":0}",
	     "stats_block.n: a block holds 1..4096 packets"},
	    {"{\"type\":\"stats_block\",\"sample_id\":0,\"sample_count\":0,\"n\":1}",
	     "a packet covers at least one sample"},
	    /* The plain form the fast path reads, with a column twice: refused
	     * as jansson refuses it, never the last copy's values. */
	    {BLOCK_HEAD "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
			"\",\"i_avg_a\":\"" B64_10_20 "\",\"i_avg_a\":\"" B64_05_10 "\"}",
	     "duplicate object key"},
	    /* A leading zero is not JSON (RFC 8259 section 6), on either path. */
	    {"{\"type\":\"stats_block\",\"sample_id\":01000,\"sample_count\":10,\"n\":2,"
	     "\"t_start_s\":\"" B64_05_10 "\",\"t_end_s\":\"" B64_10_15
	     "\",\"i_avg_a\":\"" B64_10_20 "\"}",
	     "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bridge_msg m;
		struct ergon_err err = {0};
		int rc = bridge_wire_decode(cases[i].line, strlen(cases[i].line), 0, 1, &m, &err);
		bridge_msg_cleanup(&m);
		if (rc != ERGON_EPARSE || strstr(err.msg, cases[i].want) == NULL)
			fail_msg("case %zu: rc %d, message '%s', wanted '%s'", i, rc, err.msg,
				 cases[i].want);
	}
}

static void test_lines_split_and_limit(void **state)
{
	(void)state;
	struct bridge_lines l = {0};
	struct ergon_err err = {0};
	const char *line;
	size_t len;
	uint64_t off, no;
	assert_int_equal(bridge_lines_append(&l, "ab\ncd", 5, &err), 0);
	assert_int_equal(bridge_lines_next(&l, &line, &len, &off, &no), 1);
	assert_int_equal(len, 2);
	assert_int_equal(off, 0);
	assert_int_equal(no, 1);
	assert_int_equal(bridge_lines_next(&l, &line, &len, &off, &no), 0);
	assert_int_equal(bridge_lines_append(&l, "e\n", 2, &err), 0);
	assert_int_equal(bridge_lines_next(&l, &line, &len, &off, &no), 1);
	assert_int_equal(len, 3);
	assert_memory_equal(line, "cde", 3);
	assert_int_equal(off, 3);
	/* An endless line: refused once it passes the limit, naming where it
	 * started (byte 7: "ab" and "cde" with their newlines came first). */
	char *blob = malloc(ERGON_BRIDGE_APPEND_MAX);
	memset(blob, 'x', ERGON_BRIDGE_APPEND_MAX);
	int rc = 0;
	for (size_t i = 0; i < 20 && rc == 0; i++)
		rc = bridge_lines_append(&l, blob, ERGON_BRIDGE_APPEND_MAX, &err);
	free(blob);
	assert_int_equal(rc, ERGON_ETOOBIG);
	if (strstr(err.msg, "stdout byte 7 (line 3)") == NULL)
		fail_msg("%s", err.msg);
	bridge_lines_free(&l);
}

/* --- the driver against the fake ----------------------------------------- */

static void test_packets_by_hand(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--packets 300", &inst, &err), 0);
	assert_string_equal(inst->identity.model, "fake-meter");
	assert_true(inst->identity.accuracy_pct == 0.5);
	assert_true(inst->identity.sample_rate_hz == 1000.0);
	assert_true(fabs(inst->identity.averaging_period_s - 0.001) < 1e-12);
	assert_non_null(strstr(inst->identity.notes, "validated against: nothing"));
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	static struct ergon_stats_packet p[300];
	size_t got = 0;
	assert_int_equal(read_n(inst, p, 300, &got, &err), 0);
	assert_int_equal(p[0].sample_id, 0);
	assert_int_equal(p[150].sample_id, 150000);
	assert_true(fabs(p[0].i_avg_a - 0.010) < 1e-12);
	assert_true(fabs(p[150].i_avg_a - 0.020) < 1e-12);
	assert_int_equal(p[50].digital, 0);
	assert_int_equal(p[150].digital, 1);
	assert_true(p[0].fields & ERGON_PKT_ACCUM);
	/* 100 ms at 10 mA, 100 ms at 20 mA, 100 ms at 10 mA: 4 mC; at 3.3 V
	 * 13.2 mJ. */
	assert_true(fabs(p[299].charge_c - 0.004) < 1e-9);
	assert_true(fabs(p[299].energy_j - 0.0132) < 1e-9);
	/* Instrument time is mapped to the host clock: 1 ms apart still. */
	assert_true(fabs((p[299].t_end_s - p[0].t_end_s) - 0.299) < 1e-9);
	uint32_t gpi = 0;
	assert_int_equal(ergon_bridge_gpo(inst, 1, 0, &err), 0);
	assert_int_equal(ergon_bridge_gpi(inst, &gpi, &err), 0);
	assert_int_equal(gpi, 3); /* input 0 high, output 0 echoed on bit 1 */
	assert_int_equal(ergon_bridge_passthrough(inst, 1, &err), 0);
	assert_int_equal(ergon_bridge_gpo(inst, 4, 0, &err), ERGON_ENOTSUP);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_int_equal(json_array_size(inst->issues), 0);
	ergon_instrument_close(inst);
}

static void test_samples_stream(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--packets 120", &inst, &err), 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[200];
	size_t got = 0;
	for (int tries = 0; got < 120 && tries < 2000; tries++) {
		size_t n = 0;
		assert_int_equal(ergon_instrument_read(inst, s + got, 120 - got, &n, &err), 0);
		got += n;
	}
	assert_int_equal(got, 120);
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_true(fabs(s[0].power_w - 0.033) < 1e-12);
	assert_true(fabs(s[110].current_a - 0.020) < 1e-12);
	/* After packet 119: 100 ms at 10 mA + 20 ms at 20 mA = 1.4 mC. */
	assert_true(fabs(s[119].charge_c - 0.0014) < 1e-9);
	assert_int_equal(s[110].digital, 1);
	ergon_instrument_stop(inst, &err);
	ergon_instrument_close(inst);
}

static void test_raw_blocks(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--raw --packets 3", &inst, &err), 0);
	assert_true(inst->identity.sample_rate_hz == 1e6);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	static struct ergon_sample s[3000];
	size_t got = 0;
	for (int tries = 0; got < 3000 && tries < 5000; tries++) {
		size_t n = 0;
		assert_int_equal(ergon_instrument_read(inst, s + got, 3000 - got, &n, &err), 0);
		got += n;
	}
	assert_int_equal(got, 3000);
	assert_true(s[0].current_a == 0.010f ? 1 : fabs(s[0].current_a - 0.010) < 1e-9);
	assert_true(fabs(s[2999].voltage_v - 3.3) < 1e-6); /* float32 of 3.3 */
	assert_true(fabs((s[2999].t_s - s[0].t_s) - 2999e-6) < 1e-9);
	ergon_instrument_stop(inst, &err);
	ergon_instrument_close(inst);
}

/* Raw blocks into the gated engine, gated by input 0 as a raw JLS
 * recording would be: the fake's gate is high for packets 100-199 and
 * 300-399 (100 ms each at 20 mA, 3.3 V: 6.6 mJ per window, by hand), and
 * 2 packets (2000 samples) are lost at packet 350, inside the second
 * window: kept in place as NaN, left out of the sums, the window is 2 ms
 * longer edge to edge but holds the same 6.6 mJ. */
static void test_raw_gated(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--raw --packets 450 --gap-at 350 --gap-len 2", &inst, &err), 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_gated_config cfg = {.min_window_s = 0.05};
	struct ergon_gated *g = NULL;
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	assert_int_equal(ergon_gated_raw_begin(g, 1e6, &err), 0);
	static float cur[256], volt[256];
	static uint8_t dig[256], bits[32];
	size_t total = 0;
	for (int tries = 0; total < 452000 && tries < 100000; tries++) {
		size_t n = 0;
		assert_int_equal(ergon_bridge_read_raw(inst, cur, volt, dig, 256, &n, &err), 0);
		memset(bits, 0, sizeof(bits));
		for (size_t j = 0; j < n; j++)
			bits[j / 8] |= (uint8_t)((dig[j] & 1u) << (j % 8));
		assert_int_equal(ergon_gated_push_raw(g, cur, volt, NULL, bits, 0, n, &err), 0);
		total += n;
	}
	assert_int_equal(total, 452000); /* 450 packets + the 2 lost, in place */
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->window_count, 2);
	assert_int_equal(res->nan_samples, 2000);
	for (size_t w = 0; w < 2; w++)
		if (fabs(res->windows[w].energy_j - 0.0066) > 1e-8)
			fail_msg("window %zu: %.9g J, wanted 0.0066", w, res->windows[w].energy_j);
	assert_true(fabs(res->windows[0].duration_s - 0.100) < 1e-9);
	assert_true(fabs(res->windows[1].duration_s - 0.102) < 1e-9);
	assert_true(ergon_issue_has(inst->issues, "instrument.bridge_samples_dropped"));
	ergon_gated_free(g);
	ergon_instrument_stop(inst, &err);
	ergon_instrument_close(inst);
}

/* The first issue is the gap from sample id first, samples long (1 MHz). */
static void assert_gap(const struct ergon_instrument *inst, long long first, long long samples)
{
	json_t *iss = json_array_get(inst->issues, 0);
	assert_non_null(iss);
	assert_string_equal(json_string_value(json_object_get(iss, "code")),
			    "instrument.bridge_samples_dropped");
	json_t *ctx = json_object_get(iss, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "first_sample_id")), first);
	assert_int_equal(json_integer_value(json_object_get(ctx, "samples")), samples);
	assert_true(fabs(json_real_value(json_object_get(ctx, "duration_s")) - (double)samples * 1e-6) <
		    1e-12);
}

static void test_gap_reported(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	static struct ergon_stats_packet p[40];
	size_t got = 0;
	assert_int_equal(start_read("--packets 40 --gap-at 10 --gap-len 5", &inst, p, 40, &got, &err), 0);
	assert_int_equal(p[10].sample_id, 15000); /* 5 packets of 1000 samples skipped */
	assert_gap(inst, 10000, 5000);
	ergon_instrument_stop(inst, &err);
	ergon_instrument_close(inst);
}

/* The same waveform as test_packets_by_hand, sent in stats_block messages
 * of up to 32 packets (the fake sends at most 50 at a time, so blocks of
 * 32 and 18), with a gap of 5 packets at packet 150: the same values by
 * hand, the gap reported as from stats lines. */
static void test_packets_in_blocks(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	static struct ergon_stats_packet p[300];
	size_t got = 0;
	assert_int_equal(
	    start_read("--packets 300 --block 32 --gap-at 150", &inst, p, 300, &got, &err), 0);
	assert_int_equal(p[0].sample_id, 0);
	assert_int_equal(p[149].sample_id, 149000);
	assert_int_equal(p[150].sample_id, 155000); /* 5 packets of 1000 samples skipped */
	assert_true(fabs(p[0].i_avg_a - 0.010) < 1e-12);
	assert_true(fabs(p[150].i_avg_a - 0.020) < 1e-12);
	assert_true(fabs(p[150].v_avg_v - 3.3) < 1e-12);
	assert_int_equal(p[50].digital, 0);
	assert_int_equal(p[150].digital, 1);
	assert_int_equal(p[0].fields,
			 ERGON_PKT_VOLTAGE | ERGON_PKT_POWER | ERGON_PKT_ACCUM | ERGON_PKT_DIGITAL |
			     ERGON_PKT_MINMAX);
	/* 100 ms at 10 mA, 100 ms at 20 mA, 100 ms at 10 mA: 4 mC, 13.2 mJ
	 * (the gap loses no charge: the fake integrates its own packets). */
	assert_true(fabs(p[299].charge_c - 0.004) < 1e-9);
	assert_true(fabs(p[299].energy_j - 0.0132) < 1e-9);
	assert_true(fabs((p[149].t_end_s - p[0].t_end_s) - 0.149) < 1e-9);
	assert_gap(inst, 150000, 5000);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
}

/* A fault after 20 packets: the 20 arrive, then the error with want. */
static void fault_case(const char *args, int want_rc, const char *want1, const char *want2)
{
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	static struct ergon_stats_packet p[100];
	size_t got = 0;
	int rc = start_read(args, &inst, p, 100, &got, &err);
	if (rc != want_rc || got != 20 || strstr(err.msg, want1) == NULL ||
	    (want2 && strstr(err.msg, want2) == NULL))
		fail_msg("%s: rc %d (wanted %d) after %zu packets (wanted 20): %s", args, rc,
			 want_rc, got, err.msg);
	ergon_instrument_stop(inst, &(struct ergon_err){0});
	ergon_instrument_close(inst);
}

/* Time going backwards inside a block: the packets before it arrive, then
 * the error naming the packet in its block (packet 20 is the 21st of the
 * first block of 32). */
static void test_block_time_backwards(void **state)
{
	(void)state;
	fault_case("--packets 100 --block 32 --time-back-at 20", ERGON_EPARSE,
		   "stats_block.t_start_s",
		   "(packet 20 of its stats_block) is before the previous packet's end");
}

/* The same in stats lines (packet 20 of 1 ms packets starts 0.5 ms early:
 * 0.0195 s, after the previous end 0.020 s): the message names the stats
 * field, no block. */
static void test_line_time_backwards(void **state)
{
	(void)state;
	fault_case("--packets 100 --time-back-at 20", ERGON_EPARSE,
		   "): stats.t_start_s 0.0195 is before the previous packet's end 0.02;", NULL);
}

/* Impossible statistics (docs/BRIDGE.md, "Statistics that cannot be") in
 * packet 20 (sample_id 20000; 10 mA, resolution_a 1e-9 in the fake's
 * hello): refused like time going backwards, naming the packet, the field
 * and the values. Tolerances by hand: 1e-6 * max(|min|, |max|) + 1e-9. */
static void test_stats_min_above_max(void **state)
{
	(void)state;
	fault_case("--packets 100 --set-at 20 --set i_min_a=0.02,i_max_a=0.005", ERGON_EPARSE,
		   "): stats (sample_id 20000): i_min_a 0.02 is above i_max_a 0.005; "
		   "fix the bridge (docs/BRIDGE.md)",
		   NULL);
	fault_case("--packets 100 --block 32 --set-at 20 --set i_min_a=0.02,i_max_a=0.005",
		   ERGON_EPARSE,
		   "): stats_block packet 20 (sample_id 20000): i_min_a 0.02 is above i_max_a 0.005;",
		   "fix the bridge (docs/BRIDGE.md)");
}

/* The average 0.01 A above the maximum 0.0099 A: the tolerance is
 * 1e-6 * 0.0099 + 1e-9 = 1.09e-08 A. Below the minimum 0.0101 A: the
 * tolerance is 1e-6 * 0.02 + 1e-9 = 2.1e-08 A. */
static void test_stats_avg_outside(void **state)
{
	(void)state;
	fault_case("--packets 100 --set-at 20 --set i_min_a=0.009,i_max_a=0.0099", ERGON_EPARSE,
		   "stats (sample_id 20000): i_avg_a 0.01 is outside [i_min_a 0.009, i_max_a 0.0099] "
		   "by more than the rounding tolerance 1.09e-08",
		   "fix the bridge (docs/BRIDGE.md)");
	fault_case("--packets 100 --block 32 --set-at 20 --set i_min_a=0.0101,i_max_a=0.02",
		   ERGON_EPARSE,
		   "stats_block packet 20 (sample_id 20000): i_avg_a 0.01 is outside [i_min_a "
		   "0.0101, i_max_a 0.02] by more than the rounding tolerance 2.1e-08",
		   NULL);
	/* Just past the bound: 0.01 - 0.009999985 = 1.5e-08 > 1.0999985e-08. */
	fault_case("--packets 100 --block 32 --set-at 20 --set i_min_a=0.009,i_max_a=0.009999985",
		   ERGON_EPARSE, "i_avg_a 0.01 is outside [i_min_a 0.009, i_max_a 0.009999985]",
		   NULL);
}

static void test_stats_std_negative(void **state)
{
	(void)state;
	fault_case("--packets 100 --set-at 20 --set i_std_a=-0.001", ERGON_EPARSE,
		   "stats (sample_id 20000): i_std_a -0.001 is not a standard deviation "
		   "(negative or NaN); fix the bridge (docs/BRIDGE.md)",
		   NULL);
	fault_case("--packets 100 --block 32 --set-at 20 --set i_std_a=-0.001", ERGON_EPARSE,
		   "stats_block packet 20 (sample_id 20000): i_std_a -0.001 is not a standard",
		   NULL);
	/* Power: p_avg_w 0.033 W (10 mA at 3.3 V), p_std_w given negative. */
	fault_case("--packets 100 --set-at 20 --set p_std_w=-1e-06", ERGON_EPARSE,
		   "stats (sample_id 20000): p_std_w -1e-06 is not a standard deviation", NULL);
	/* Power min/max: 0.033 W above p_max_w 0.032 W (tolerance 1e-6 * 0.032 +
	 * resolution_w 3.3e-9 = 3.53e-08 W). */
	fault_case("--packets 100 --set-at 20 --set p_min_w=0.03,p_max_w=0.032", ERGON_EPARSE,
		   "p_avg_w 0.033 is outside [p_min_w 0.03, p_max_w 0.032] by more than the rounding "
		   "tolerance 3.53e-08",
		   NULL);
}

/* Within the tolerance: the average 0.01 A is 1e-08 A above i_max_a
 * 0.00999999 A, less than 1e-6 * 0.00999999 + 1e-9 = 1.099999e-08 A; the
 * packet arrives as sent. Every other packet has min = avg = max exactly. */
static void test_stats_within_tolerance(void **state)
{
	(void)state;
	const char *args[] = {"--packets 100 --set-at 20 --set i_min_a=0.009,i_max_a=0.00999999",
			      "--packets 100 --block 32 --set-at 20 --set "
			      "i_min_a=0.009,i_max_a=0.00999999"};
	for (int a = 0; a < 2; a++) {
		struct ergon_instrument *inst = NULL;
		struct ergon_err err = {0};
		static struct ergon_stats_packet p[100];
		size_t got = 0;
		if (start_read(args[a], &inst, p, 100, &got, &err))
			fail_msg("%s: %s", args[a], err.msg);
		assert_int_equal(got, 100);
		assert_true(p[20].i_max_a == 0.00999999 && p[20].i_min_a == 0.009);
		assert_true(p[20].i_avg_a == 0.01);
		assert_true(p[21].i_min_a == 0.01 && p[21].i_avg_a == 0.01 && p[21].i_max_a == 0.01);
		ergon_instrument_stop(inst, &(struct ergon_err){0});
		ergon_instrument_close(inst);
	}
}

static void test_fault_garbage(void **state)
{
	(void)state;
	fault_case("--garbage-after 20", ERGON_EPARSE, "stdout byte ", "not a JSON object");
}

static void test_fault_nan(void **state)
{
	(void)state;
	fault_case("--nan-after 20", ERGON_EPARSE, "NaN or Infinity is refused", "stdout byte ");
}

static void test_fault_stall(void **state)
{
	(void)state;
	fault_case("--stall-after 20 --heartbeat 0.3", ERGON_ETIMEDOUT, "stalled",
		   "heartbeat bound 0.30 s");
}

static void test_fault_exit(void **state)
{
	(void)state;
	fault_case("--exit-after 20 --status 3", ERGON_EDEVICE, "mid-run (exited with status 3)",
		   "exiting with status 3");
}

static void test_fault_unplugged(void **state)
{
	(void)state;
	fault_case("--error-after 20", ERGON_EDEVICE, "the device was unplugged", NULL);
}

static void test_fault_huge_line(void **state)
{
	(void)state;
	fault_case("--huge-line-after 20", ERGON_ETOOBIG, "a line is longer than 1048576 bytes",
		   "stdout byte ");
}

/* 10 MB of stderr before the hello: kept to its last 1 KiB, the bridge
 * works (stderr is drained while waiting, so it never blocks). */
static void test_stderr_flood(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	static struct ergon_stats_packet p[10];
	size_t got = 0;
	assert_int_equal(start_read("--packets 10 --stderr-flood 10000000", &inst, p, 10, &got, &err), 0);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
}

static void test_fault_no_hello(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--no-hello", &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "before its hello (exited with status 3)"));
	assert_non_null(strstr(err.msg, "cannot open the device"));
}

static void test_fault_two_devices(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_fake("--devices JS1,JS2", &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "2 devices and no serial given: JS1, JS2"));
	assert_non_null(strstr(err.msg, "exited with status 2"));
	assert_int_equal(open_fake("--devices JS1,JS2 --serial JS2", &inst, &err), 0);
	assert_string_equal(inst->identity.serial, "JS2");
	ergon_instrument_close(inst);
}

static void test_quit_status(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	static struct ergon_stats_packet p[5];
	size_t got = 0;
	assert_int_equal(start_read("--packets 5 --quit-status 4", &inst, p, 5, &got, &err), 0);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_true(ergon_issue_has(inst->issues, "instrument.bridge_exit_status"));
	json_t *ctx = json_object_get(json_array_get(inst->issues, 0), "context");
	assert_string_equal(json_string_value(json_object_get(ctx, "status")),
			    "exited with status 4");
	ergon_instrument_close(inst);
}

static void test_bad_spec(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("bridge:", NULL, &inst, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "docs/BRIDGE.md"));
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("bridge:/nonexistent/meter", NULL, &inst, &err),
			 ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "--instrument bridge:/nonexistent/meter"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wire_hello),
	    cmocka_unit_test(test_wire_nan_names_offset),
	    cmocka_unit_test(test_wire_errors),
	    cmocka_unit_test(test_wire_raw_base64),
	    cmocka_unit_test(test_wire_stats_block),
	    cmocka_unit_test(test_wire_stats_block_errors),
	    cmocka_unit_test(test_lines_split_and_limit),
	    cmocka_unit_test(test_packets_by_hand),
	    cmocka_unit_test(test_samples_stream),
	    cmocka_unit_test(test_raw_blocks),
	    cmocka_unit_test(test_raw_gated),
	    cmocka_unit_test(test_gap_reported),
	    cmocka_unit_test(test_packets_in_blocks),
	    cmocka_unit_test(test_block_time_backwards),
	    cmocka_unit_test(test_line_time_backwards),
	    cmocka_unit_test(test_stats_min_above_max),
	    cmocka_unit_test(test_stats_avg_outside),
	    cmocka_unit_test(test_stats_std_negative),
	    cmocka_unit_test(test_stats_within_tolerance),
	    cmocka_unit_test(test_fault_garbage),
	    cmocka_unit_test(test_fault_nan),
	    cmocka_unit_test(test_fault_stall),
	    cmocka_unit_test(test_fault_exit),
	    cmocka_unit_test(test_fault_unplugged),
	    cmocka_unit_test(test_fault_huge_line),
	    cmocka_unit_test(test_stderr_flood),
	    cmocka_unit_test(test_fault_no_hello),
	    cmocka_unit_test(test_fault_two_devices),
	    cmocka_unit_test(test_quit_status),
	    cmocka_unit_test(test_bad_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

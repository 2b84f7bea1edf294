/* The Joulescope instrument (bridges/joulescope_bridge.py) against the stub
 * pyjoulescope_driver in tests/support/pyjoulescope_stub, which simulates a
 * JS220 at 3.3 V: 5 mA idle, 30 mA while INPUT0 (the gate) is high, gate
 * windows of 1.2 s every 2.0 s from 0.3 s, INPUT1 high from 0.1 s, 1 ms
 * statistics packets. Expected values are computed by hand from that:
 * a gate window holds 0.030 A x 3.3 V x 1.2 s = 0.1188 J.
 *
 * The stub runs unpaced ("pace": false): its simulated time is the sample
 * counter, and it delivers packets as fast as this test reads them (the
 * bridge's writes block on a full pipe), so no expectation here depends on
 * the host's clock or load (issue 20). */
#include "ergon/artifact.h"
#include "ergon/bridge.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "ergon/live_gate.h"
#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW_J (0.030 * 3.3 * 1.2)
#define IDLE_W (0.005 * 3.3)
#define ACTIVE_W (0.030 * 3.3)

static char *stub_log;

static int setup(void **state)
{
	(void)state;
	const char *src = getenv("ERGON_SOURCE_DIR");
	char *pp = ts_strf("%s/tests/support/pyjoulescope_stub", src ? src : ".");
	setenv("PYTHONPATH", pp, 1);
	free(pp);
	char *dir = ts_tmpdir();
	stub_log = ts_strf("%s/stub.log", dir);
	free(dir);
	setenv("ERGON_JS_STUB_LOG", stub_log, 1);
	return 0;
}

/* Configure the stub (json: an object, "{...}"), unpaced. */
static void stub(const char *json)
{
	char *unpaced = ts_strf("{\"pace\":false%s%s", json[1] == '}' ? "" : ",", json + 1);
	setenv("ERGON_JS_STUB", unpaced, 1);
	free(unpaced);
	unlink(stub_log);
}

/* Read packets covering stream_s seconds of the instrument's time (or
 * until an error) into a growing array. */
static int collect(struct ergon_instrument *inst, double stream_s, struct ergon_stats_packet **out,
		   size_t *n, struct ergon_err *err)
{
	size_t cap = 8192;
	*out = malloc(cap * sizeof(**out));
	*n = 0;
	int rc = 0;
	while (rc == 0 && (*n == 0 || (*out)[*n - 1].t_end_s - (*out)[0].t_start_s < stream_s)) {
		if (*n + 256 > cap) {
			cap *= 2;
			*out = realloc(*out, cap * sizeof(**out));
		}
		size_t got = 0;
		rc = ergon_bridge_read_packets(inst, *out + *n, 256, &got, err);
		*n += got;
	}
	return rc;
}

/* Open the Joulescope on a stub configured by stub_json and start it. */
static struct ergon_instrument *start_js(const char *stub_json,
					 const struct ergon_instrument_options *opts)
{
	stub(stub_json);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open("joulescope", opts, &inst, &err) != 0 ||
	    ergon_instrument_start(inst, &err) != 0)
		fail_msg("joulescope on stub %s: %s", stub_json, err.msg);
	return inst;
}

static void test_scan_and_two_devices(void **state)
{
	(void)state;
	stub("{\"devices\":[\"u/js220/000415\",\"u/js220/002557\"]}");
	const struct ergon_instrument_driver *d = ergon_instrument_find("joulescope");
	assert_non_null(d);
	json_t *found = NULL;
	struct ergon_err err = {0};
	assert_int_equal(d->scan(NULL, &found, &err), 0);
	assert_int_equal(json_array_size(found), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(found, 1), "id")),
			    "joulescope:002557");
	json_decref(found);
	struct ergon_instrument *inst = NULL;
	assert_int_equal(ergon_instrument_open("joulescope", NULL, &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "2 Joulescopes and no serial given"));
	assert_non_null(strstr(err.msg, "u/js220/000415 (serial 000415)"));
	assert_non_null(strstr(err.msg, "u/js220/002557 (serial 002557)"));
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope:002557", NULL, &inst, &err), 0);
	assert_string_equal(inst->identity.serial, "002557");
	assert_string_equal(inst->identity.model, "JS220");
	/* The stub is a simulation: never labelled measured. */
	assert_int_equal(inst->identity.provenance, ERGON_PROV_SYNTHETIC);
	assert_non_null(strstr(inst->identity.notes, "never run on a real JS220"));
	ergon_instrument_close(inst);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope:999999", NULL, &inst, &err),
			 ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "no Joulescope with serial 999999"));
}

static void test_driver_missing(void **state)
{
	(void)state;
	stub("{}");
	char *saved = strdup(getenv("PYTHONPATH"));
	setenv("PYTHONPATH", "/nonexistent", 1);
	const struct ergon_instrument_driver *d = ergon_instrument_find("joulescope");
	json_t *found = NULL;
	struct ergon_err err = {0};
	assert_int_equal(d->scan(NULL, &found, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "pyjoulescope_driver is not installed"));
	assert_non_null(strstr(err.msg, "-m pip install pyjoulescope_driver"));
	struct ergon_instrument *inst = NULL;
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope", NULL, &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "pyjoulescope_driver is not installed"));
	/* And `ergon instruments` says so, with the fix. */
	char *out = NULL;
	int rc = ts_run_ergon(&out, NULL, "instruments", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "pyjoulescope_driver is not installed"));
	assert_non_null(strstr(out, "pip install pyjoulescope_driver"));
	free(out);
	setenv("PYTHONPATH", saved, 1);
	free(saved);
}

static void test_stream_gate_state_go(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_instrument *inst = start_js("{}", NULL);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	assert_int_equal(collect(inst, 0.5, &p, &n, &err), 0);
	assert_true(n > 100);
	/* The first packet: sample ids from 1,000,000 at 1 MHz, 1000 per
	 * packet; idle current; accumulators of one packet. */
	assert_int_equal(p[0].sample_id, 1000000);
	assert_int_equal(p[1].sample_id, 1001000);
	assert_true(fabs(p[0].i_avg_a - 0.005) < 1e-12);
	assert_true(fabs(p[0].v_avg_v - 3.3) < 1e-12);
	assert_true(fabs(p[0].energy_j - IDLE_W * 0.001) < 1e-12);
	/* Packet 350 (0.350 s) is inside the first gate: 30 mA. */
	assert_true(n > 351);
	assert_true(fabs(p[350].i_avg_a - 0.030) < 1e-12);
	/* The inputs travel in the stream by sample id (s/gpi/N/!data): INPUT1
	 * (READY) from 0.1 s, INPUT0 (the gate) in [0.3, 1.5); the packets
	 * around both edges, by the level at their middle sample. */
	assert_int_equal(p[99].digital, 0);
	assert_int_equal(p[100].digital, 2);
	assert_int_equal(p[299].digital, 2);
	assert_int_equal(p[300].digital, 3);
	assert_true(p[350].fields & ERGON_PKT_DIGITAL);
	/* GO on OUTPUT0, then the state line INPUT1 (high from 0.1 s) and the
	 * gate INPUT0 (high in [0.3, 1.5)) in a snapshot. */
	assert_int_equal(ergon_bridge_gpo(inst, 1, 0, &err), 0);
	uint32_t gpi = 0;
	assert_int_equal(ergon_bridge_gpi(inst, &gpi, &err), 0);
	assert_int_equal(gpi & 2, 2);
	assert_int_equal(ergon_bridge_gpo(inst, 0, 1, &err), 0);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
	free(p);
	/* What the bridge asked of the driver, in the vendor's topics. */
	char *log = ts_read_file(stub_log, NULL);
	assert_non_null(log);
	const char *want[] = {
	    "{\"topic\": \"u/js220/000415/s/i/range/mode\", \"value\": \"auto\"}",
	    "{\"topic\": \"u/js220/000415/s/stats/scnt\", \"value\": 1000}",
	    "{\"topic\": \"u/js220/000415/s/gpi/0/ctrl\", \"value\": 1}",
	    "{\"topic\": \"u/js220/000415/s/gpi/1/ctrl\", \"value\": 1}",
	    "{\"topic\": \"u/js220/000415/s/stats/ctrl\", \"value\": 1}",
	    "{\"topic\": \"u/js220/000415/s/gpi/+/!req\", \"value\": 0}",
	    "{\"topic\": \"u/js220/000415/s/gpo/+/!set\", \"value\": 1}",
	    "{\"topic\": \"u/js220/000415/s/gpo/+/!clr\", \"value\": 1}",
	    "{\"topic\": \"u/js220/000415/s/stats/ctrl\", \"value\": 0}",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(log, want[i]) == NULL)
			fail_msg("stub log lacks %s", want[i]);
	free(log);
}

static void test_dropped_sample_ids(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_instrument *inst = start_js("{\"drop_packets\":[100,101,102]}", NULL);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	assert_int_equal(collect(inst, 0.4, &p, &n, &err), 0);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_true(n > 150);
	assert_int_equal(p[100].sample_id, 1000000 + 103 * 1000);
	json_t *iss = json_array_get(inst->issues, 0);
	assert_string_equal(json_string_value(json_object_get(iss, "code")),
			    "instrument.bridge_samples_dropped");
	json_t *ctx = json_object_get(iss, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "first_sample_id")), 1100000);
	assert_int_equal(json_integer_value(json_object_get(ctx, "samples")), 3000);
	ergon_instrument_close(inst);
	free(p);
}

static void test_unplugged_mid_run(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_instrument *inst = start_js("{\"unplug_after_s\":0.5}", NULL);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	int rc = collect(inst, 5.0, &p, &n, &err);
	assert_int_equal(rc, ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "the Joulescope u/js220/000415 was unplugged"));
	/* What was measured before the unplug is kept: the stub unplugs at
	 * sample 500,000, after packets 0..499, and the bridge writes each
	 * before the removal (the inputs stream ahead of the statistics). */
	if (n != 500)
		fail_msg("%zu packets before the unplug, by hand 500", n);
	assert_true(
	    fabs(p[n - 1].energy_j - (IDLE_W * 0.3 + ACTIVE_W * ((double)n * 0.001 - 0.3))) < 1e-9);
	ergon_instrument_stop(inst, &(struct ergon_err){0});
	ergon_instrument_close(inst);
	free(p);
}

/* The gated engine fed from the bridge's stream, gated by software markers
 * placed on the stub's gate schedule: energy per inference within its
 * stated uncertainty of the hand-computed truth. */
static void test_gated_energy_per_inference(void **state)
{
	(void)state;
	stub("{\"first_gate_s\":0.3,\"gate_s\":1.2,\"period_s\":2.0}");
	const char *kv[] = {"accuracy_pct=0.3", NULL};
	struct ergon_instrument_options opts = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("joulescope", &opts, &inst, &err), 0);
	assert_true(inst->identity.accuracy_pct == 0.3);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	assert_int_equal(collect(inst, 4.0, &p, &n, &err), 0);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_true(n > 3600);
	/* Instrument time is 1.0 s + stub time (first sample id 1,000,000 at
	 * 1 MHz); the driver adds its clock offset. */
	json_t *st = ergon_instrument_stats(inst);
	double off = json_real_value(json_object_get(st, "clock_offset_s"));
	json_decref(st);
	struct ergon_gate_marker mk[2] = {{1.3 + off, 2.5 + off}, {3.3 + off, 4.5 + off}};
	struct ergon_gated_config cfg = {.markers = mk, .marker_count = 2};
	struct ergon_gated *g = NULL;
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	assert_int_equal(ergon_gated_push_packets(g, p, n, &err), 0);
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->window_count, 2);
	/* 100 inferences per window (the workload's count, by construction). */
	const double per_inf_truth = WINDOW_J / 100.0; /* 1.188 mJ */
	for (size_t w = 0; w < 2; w++) {
		double e = res->windows[w].energy_j / 100.0;
		/* Stated uncertainty: the rated accuracy of the reading plus two
		 * statistics packets at the window's power (an edge may fall
		 * anywhere in a packet at each end: ergon_power_observer_agrees). */
		double u = 0.003 * e + 2.0 * res->stats_period_s * ACTIVE_W / 100.0;
		if (fabs(e - per_inf_truth) > u)
			fail_msg("window %zu: %.9g J per inference, truth %.9g +- %.3g", w, e,
				 per_inf_truth, u);
	}
	/* The accumulator delta agrees as well. */
	assert_true(fabs(res->windows[0].duration_s - 1.2) < 1e-6);
	ergon_gated_free(g);

	/* The same stream gated by INPUT0 as the instrument streams it: each
	 * packet's digital is the gate's level at its middle sample id, so the
	 * stub's windows [0.3, 1.5) and [2.3, 3.5) s (on 1 ms packet edges)
	 * are exactly 1200 packets of 30 mA at 3.3 V, however loaded the
	 * host: 0.1188 J each, to rounding. */
	struct ergon_gated_config dcfg = {.sync_input_index = 0};
	assert_int_equal(ergon_gated_new(&dcfg, &g, &err), 0);
	assert_int_equal(ergon_gated_push_packets(g, p, n, &err), 0);
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->window_count, 2);
	for (size_t w = 0; w < 2; w++) {
		if (fabs(res->windows[w].energy_j - WINDOW_J) > 1e-9)
			fail_msg("digital window %zu: %.12g J, by hand %.12g J", w,
				 res->windows[w].energy_j, WINDOW_J);
		assert_true(fabs(res->windows[w].duration_s - 1.2) < 1e-9);
	}
	ergon_gated_free(g);
	ergon_instrument_close(inst);
	free(p);
}

/* A JS110: sensor-side statistics at a fixed 2 Hz (0.5 s = 1,000,000
 * samples at 2 MHz), outputs through s/gpo/N/value, inputs streamed and
 * snapshotted; host-side statistics at any other rate. */
static void test_js110(void **state)
{
	(void)state;
	stub("{\"devices\":[\"u/js110/000123\"],\"first_gate_s\":1e9}");
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("joulescope", NULL, &inst, &err), 0);
	assert_string_equal(inst->identity.model, "JS110");
	assert_true(inst->identity.sample_rate_hz == 2.0);
	assert_non_null(strstr(inst->identity.notes, "sensor-side"));
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	assert_int_equal(collect(inst, 1.4, &p, &n, &err), 0);
	assert_true(n >= 2);
	assert_int_equal(p[1].sample_id - p[0].sample_id, 1000000);
	assert_true(fabs(p[0].i_avg_a - 0.005) < 1e-12);
	assert_true(fabs((p[0].t_end_s - p[0].t_start_s) - 0.5) < 1e-9);
	assert_int_equal(ergon_bridge_gpo(inst, 1, 0, &err), 0);
	assert_int_equal(ergon_bridge_passthrough(inst, 0, &err), 0);
	/* Inputs: streamed (INPUT1, READY, high from 0.1 s: the first 0.5 s
	 * packet's middle is 0.25 s) and snapshotted (s/gpi/+/!req, which
	 * the vendor's driver answers on a JS110 from 1.1.4). */
	assert_int_equal(p[0].digital, 2);
	uint32_t gpi = 0;
	if (ergon_bridge_gpi(inst, &gpi, &err) != 0)
		fail_msg("JS110 snapshot: %s", err.msg);
	assert_int_equal(gpi, 2);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
	free(p);
	char *log = ts_read_file(stub_log, NULL);
	assert_non_null(log);
	assert_non_null(strstr(log, "\"u/js110/000123/s/i/range/select\", \"value\": \"auto\""));
	assert_non_null(strstr(log, "\"u/js110/000123/s/gpo/0/value\", \"value\": 1"));
	assert_non_null(strstr(log, "\"u/js110/000123/s/gpi/+/!req\", \"value\": 0"));
	assert_non_null(strstr(log, "\"u/js110/000123/s/gpi/0/ctrl\", \"value\": 1"));
	assert_non_null(strstr(log, "\"u/js110/000123/s/i/range/select\", \"value\": \"off\""));
	assert_null(strstr(log, "s/stats/ctrl")); /* sensor-side needs no switch */
	free(log);

	/* Host-side statistics at 100 Hz: 20,000 samples per packet at 2 MHz. */
	stub("{\"devices\":[\"u/js110/000123\"],\"first_gate_s\":1e9}");
	const char *kv[] = {"stats_rate_hz=100", NULL};
	struct ergon_instrument_options opts = {.kv = kv};
	assert_int_equal(ergon_instrument_open("joulescope", &opts, &inst, &err), 0);
	assert_non_null(strstr(inst->identity.notes, "host-side"));
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	assert_int_equal(collect(inst, 0.5, &p, &n, &err), 0);
	assert_true(n >= 10);
	assert_int_equal(p[1].sample_id - p[0].sample_id, 20000);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
	free(p);
	log = ts_read_file(stub_log, NULL);
	assert_non_null(strstr(log, "\"u/js110/000123/s/stats/scnt\", \"value\": 20000"));
	assert_non_null(strstr(log, "\"u/js110/000123/s/i/ctrl\", \"value\": \"on\""));
	free(log);
}

/* stats_rate_hz: a rate the model gives reaches it (a JS220's
 * s/stats/scnt = 1,000,000 / rate: 500 -> 2000 samples, packets of 2 ms);
 * a rate it cannot give is refused at open with the rates it gives (300 on
 * a JS220: 1,000,000 / 300 is not whole; 3 on a JS110: neither 2 nor
 * 2,000,000 / N). */
static void test_stats_rate(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_instrument *inst = NULL;
	stub("{\"first_gate_s\":1e9}");
	const char *kv500[] = {"stats_rate_hz=500", NULL};
	struct ergon_instrument_options o500 = {.kv = kv500};
	assert_int_equal(ergon_instrument_open("joulescope", &o500, &inst, &err), 0);
	struct ergon_bridge_caps caps;
	assert_int_equal(ergon_bridge_caps(inst, &caps), 0);
	assert_true(caps.stats_rate_hz == 500.0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_stats_packet *p = NULL;
	size_t n = 0;
	assert_int_equal(collect(inst, 0.1, &p, &n, &err), 0);
	assert_true(n >= 10);
	assert_int_equal(p[1].sample_id - p[0].sample_id, 2000);
	assert_true(fabs((p[0].t_end_s - p[0].t_start_s) - 0.002) < 1e-9);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	ergon_instrument_close(inst);
	free(p);
	char *log = ts_read_file(stub_log, NULL);
	assert_non_null(strstr(log, "\"u/js220/000415/s/stats/scnt\", \"value\": 2000"));
	free(log);
	/* Refused, with the rates a JS220 gives. */
	stub("{}");
	const char *kv300[] = {"stats_rate_hz=300", NULL};
	struct ergon_instrument_options o300 = {.kv = kv300};
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope", &o300, &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "stats_rate_hz=300 is not a rate it can give: a JS220"));
	assert_non_null(strstr(err.msg, "1,000,000 / N per second, N = 10..1,000,000"));
	assert_non_null(strstr(err.msg, "250, 320, 400"));
	assert_non_null(strstr(err.msg, "62500, 100000 Hz"));
	/* A JS110 at 3 a second. */
	stub("{\"devices\":[\"u/js110/000123\"]}");
	const char *kv3[] = {"stats_rate_hz=3", NULL};
	struct ergon_instrument_options o3 = {.kv = kv3};
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope", &o3, &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "a JS110 gives 2/s on the instrument"));
	assert_non_null(strstr(err.msg, "125, 128, 160"));
	/* Beyond what ergon asks of any meter: refused before the bridge. */
	const char *kvbig[] = {"stats_rate_hz=200000", NULL};
	struct ergon_instrument_options obig = {.kv = kvbig};
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("joulescope", &obig, &inst, &err), ERGON_ERANGE);
}

/* A host too slow for the rate: the stub paced to the host's clock at
 * 100000 packets a second (10 samples of 1 MHz), but delivering at most
 * 20000 a second, as when the host cannot keep up. The bridge stops with
 * an error before the window is lost, naming power.stats_rate_hz and a
 * rate the JS220 gives (1,000,000 / N, whole) at or below 80 % of what it
 * took: at most 20000 a second, plus the burst with which the stub catches
 * up when its first packet went late, so the rate named is at most 20000
 * (how much less depends on the host's load), never the 100000 asked for.
 * The packets before it are kept. Returns them (*n), and the issues in
 * *iss (a reference the caller drops). */
static struct ergon_stats_packet *falling_behind(const char *stub_json, const char *want, size_t *n,
						 json_t **iss)
{
	setenv("ERGON_JS_STUB", stub_json, 1);
	unlink(stub_log);
	const char *kv[] = {"stats_rate_hz=100000", NULL};
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("joulescope", &o, &inst, &err), 0);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_stats_packet *p = NULL;
	int rc = collect(inst, 60.0, &p, n, &err);
	if (rc != ERGON_EDEVICE || strstr(err.msg, "joulescope: falling behind") == NULL ||
	    strstr(err.msg, want) == NULL || strstr(err.msg, "power.stats_rate_hz") == NULL ||
	    strstr(err.msg, "at 100000 statistics packets a second") == NULL)
		fail_msg("rc %d: %s", rc, err.msg);
	const char *at = strstr(err.msg, ") to ");
	assert_non_null(at);
	long named = strtol(at + 5, NULL, 10);
	if (!(named > 0 && named <= 20000 && 1000000 % named == 0))
		fail_msg("the rate named, %ld, is not a JS220 rate at or below 20000: %s", named,
			 err.msg);
	ergon_instrument_stop(inst, &(struct ergon_err){0});
	*iss = json_incref(inst->issues);
	ergon_instrument_close(inst);
	return p;
}

/* The vendor's queue holds the packets: once they reach the bridge 1 s
 * behind the sample clock (at 20000 of 100000 a second: after 1.25 s of
 * host time, 0.25 s of the sample clock), the bridge stops; no packet was
 * lost before. */
static void test_falling_behind_lag(void **state)
{
	(void)state;
	size_t n = 0;
	json_t *iss = NULL;
	struct ergon_stats_packet *p =
	    falling_behind("{\"pace\":true,\"max_deliver_hz\":20000,\"first_gate_s\":1e9}",
			   "the vendor's queue would drop samples", &n, &iss);
	assert_true(n > 1000);
	for (size_t i = 1; i < n; i++)
		if (p[i].sample_id != p[i - 1].sample_id + 10)
			fail_msg("packet %zu: sample id %llu after %llu", i,
				 (unsigned long long)p[i].sample_id,
				 (unsigned long long)p[i - 1].sample_id);
	assert_false(ergon_issue_has(iss, "instrument.bridge_samples_dropped"));
	json_decref(iss);
	free(p);
}

/* The vendor's queue holds 5000 packets (50 ms) and drops the oldest
 * beyond: the sample ids jump long before 1 s of lag. The bridge takes a
 * gap after 0.2 s at under 90 % of the rate as its own doing and stops,
 * naming the drop (gaps in the first 0.2 s, if the host's timing gave
 * any, are ergon's instrument.bridge_samples_dropped). */
static void test_falling_behind_drops(void **state)
{
	(void)state;
	size_t n = 0;
	json_t *iss = NULL;
	struct ergon_stats_packet *p = falling_behind(
	    "{\"pace\":true,\"max_deliver_hz\":20000,\"queue_max\":5000,\"first_gate_s\":1e9}",
	    "the vendor's queue dropped samples from sample id ", &n, &iss);
	assert_true(n > 1000);
	json_decref(iss);
	free(p);
}

/* A probe's reset that takes the host this long (seconds). */
static int slow_reset(void *ctx, struct ergon_err *err)
{
	(void)err;
	double s = *(const double *)ctx;
	nanosleep(&(struct timespec){(time_t)s, (long)((s - (double)(time_t)s) * 1e9)}, NULL);
	return 0;
}

/* A live gated capture (gate-only; on the packets' clock as `ergon
 * profile` takes a synthetic instrument, or on the host's as a measured
 * one) of the stub configured by stub_json (ERGON_JS_STUB as is) at kv's
 * options, with a capture bound of timeout_s and a reset of reset_s host
 * seconds (0: none). It must close one window of 1.2 s at 30 mA, 3.3 V
 * (WINDOW_J) with no sample lost. */
static void live_window(const char *stub_json, const char *const *kv, int packet_clock,
			double timeout_s, double reset_s)
{
	setenv("ERGON_JS_STUB", stub_json, 1);
	unlink(stub_log);
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_gated *g = NULL;
	struct ergon_gated_config gc = {.min_window_s = 1.0};
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("joulescope", &o, &inst, &err), 0);
	assert_int_equal(inst->identity.provenance, ERGON_PROV_SYNTHETIC);
	assert_int_equal(ergon_gated_new(&gc, &g, &err), 0);
	struct ergon_live_config cfg = {.reset_grace_s = 0.01,
					.timeout_s = timeout_s,
					.min_window_s = 1.0,
					.windows = 1,
					.reset = reset_s > 0 ? slow_reset : NULL,
					.reset_ctx = &reset_s,
					.packet_clock = packet_clock};
	struct ergon_live_result res;
	int rc = ergon_live_gated_capture(inst, &cfg, g, &res, &err);
	if (rc)
		fail_msg("capture: %s", err.msg);
	assert_int_equal(res.end, ERGON_LIVE_WINDOWS);
	char *iss = json_dumps(inst->issues, JSON_COMPACT);
	if (strstr(iss, "instrument.bridge_samples_dropped"))
		fail_msg("samples were lost: %s", iss);
	free(iss);
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(g, &gr, &err), 0);
	assert_int_equal(gr->window_count, 1);
	if (fabs(gr->windows[0].energy_j - WINDOW_J) > 1e-9 * WINDOW_J ||
	    fabs(gr->windows[0].duration_s - 1.2) > 1e-9)
		fail_msg("window %.12g J over %.12g s, by hand %.12g J over 1.2 s",
			 gr->windows[0].energy_j, gr->windows[0].duration_s, WINDOW_J);
	ergon_gated_free(g);
	ergon_instrument_close(inst);
}

/* A host too starved of CPU to take the stream quickly: the stub unpaced
 * at 1000 packets a second of its clock, delivered at most 500 a second of
 * the host's. The window (0.3 .. 1.5 s of the stream) closes at 1.5 s of
 * the stream, inside the capture's bound of 2 s on the packets' clock,
 * although taking it costs the host at least 3 s. */
static void test_live_starved_host(void **state)
{
	(void)state;
	live_window("{\"pace\":false,\"max_deliver_hz\":500,\"first_gate_s\":0.3,"
		    "\"gate_s\":1.2,\"period_s\":100}",
		    NULL, 1, 2.0, 0);
}

/* A measured Joulescope (the host's clock) whose vendor queue holds 400
 * packets (0.2 s at 2000 a second: the stub paced to the host's clock);
 * the probe's reset takes 2 s, ten times that. The capture keeps reading
 * while the reset runs, so the queue never overflows: no sample is lost,
 * and the window (3.0 .. 4.2 s of the stream, after the reset and its
 * grace) holds its hand value. */
static void test_live_reset_drains(void **state)
{
	(void)state;
	const char *kv[] = {"stats_rate_hz=2000", NULL};
	live_window("{\"pace\":true,\"max_deliver_hz\":1e9,\"queue_max\":400,"
		    "\"first_gate_s\":3.0,\"gate_s\":1.2,\"period_s\":100}",
		    kv, 0, 20, 2.0);
}

/* The range-mode publishes in the stub's log ("auto" = passthrough on,
 * "off" = off), in order, as one string: "auto,auto,off". */
static char *range_publishes(const char *topic_tail)
{
	size_t len = 0;
	char *log = ts_read_file(stub_log, &len);
	char *out = calloc(1, len + 1);
	for (char *line = log ? strtok(log, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		json_t *o = json_loads(line, 0, NULL);
		const char *t = json_string_value(json_object_get(o, "topic"));
		const char *v = json_string_value(json_object_get(o, "value"));
		if (t && v && strlen(t) >= strlen(topic_tail) &&
		    strcmp(t + strlen(t) - strlen(topic_tail), topic_tail) == 0) {
			if (out[0])
				strcat(out, ",");
			strcat(out, v);
		}
		json_decref(o);
	}
	free(log);
	return out;
}

/* `ergon power-on --instrument joulescope[:SERIAL]` and the method's
 * `--driver joulescope --power-serial SN`: the passthrough switched on
 * through the bridge (after the bridge's own setup, which puts the range
 * to auto too), held, left on or switched off on release; Ctrl-C
 * releases; a Joulescope pulled out while held fails with the bridge's
 * message; --vdd-mv and a wrong serial are refused. */
static void test_power_on(void **state)
{
	(void)state;
	stub("{\"devices\":[\"u/js220/000415\",\"u/js220/002557\"]}");
	char *out = NULL, *err = NULL;
	int rc = ts_run_ergon(&out, &err, "power-on", "--instrument", "joulescope:002557",
			      "--hold-s", "0.3", NULL);
	if (rc != 0)
		fail_msg("power-on: %s", err);
	assert_non_null(strstr(out, "passthrough on"));
	assert_non_null(strstr(out, "stays on"));
	char *seq = range_publishes("/s/i/range/mode");
	assert_string_equal(seq, "auto,auto"); /* setup, then the passthrough command */
	free(seq);
	free(out);
	free(err);
	/* The method's spelling, switched off on release. */
	stub("{\"devices\":[\"u/js220/000415\",\"u/js220/002557\"]}");
	rc = ts_run_ergon(&out, &err, "power-on", "--driver", "joulescope", "--power-serial",
			  "000415", "--hold-s", "0.2", "--off-on-exit", NULL);
	if (rc != 0)
		fail_msg("power-on --driver: %s", err);
	assert_non_null(strstr(out, "joulescope:000415"));
	seq = range_publishes("/s/i/range/mode");
	assert_string_equal(seq, "auto,auto,off");
	free(seq);
	free(out);
	free(err);
	/* A JS110 switches s/i/range/select. */
	stub("{\"devices\":[\"u/js110/000123\"]}");
	rc = ts_run_ergon(&out, &err, "power-on", "--instrument", "joulescope", "--hold-s", "0.2",
			  NULL);
	if (rc != 0)
		fail_msg("power-on js110: %s", err);
	seq = range_publishes("/s/i/range/select");
	assert_string_equal(seq, "auto,auto");
	free(seq);
	free(out);
	free(err);
	/* Refused: a voltage, a serial nobody has, a driver power-on cannot
	 * drive, a serial without a driver. */
	stub("{}");
	rc = ts_run_ergon(NULL, &err, "power-on", "--instrument", "joulescope", "--vdd-mv", "3300",
			  "--hold-s", "0.1", NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "drop --vdd-mv"));
	free(err);
	rc = ts_run_ergon(NULL, &err, "power-on", "--driver", "joulescope", "--power-serial",
			  "999999", "--hold-s", "0.1", NULL);
	assert_true(rc != 0);
	assert_non_null(strstr(err, "no Joulescope with serial 999999"));
	free(err);
	rc = ts_run_ergon(NULL, &err, "power-on", "--driver", "otii", NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "ppk2 (source meter) or joulescope"));
	free(err);
	rc = ts_run_ergon(NULL, &err, "power-on", "--power-serial", "000415", NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "needs --driver"));
	free(err);
	/* Ctrl-C releases a held passthrough (left on): interrupt once the
	 * stub has seen the passthrough command. */
	stub("{}");
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(getenv("ERGON_BIN"), "ergon", "power-on", "--instrument", "joulescope",
		      (char *)NULL);
		_exit(127);
	}
	struct timespec nap = {0, 50 * 1000 * 1000};
	for (int i = 0; i < 600; i++) {
		seq = range_publishes("/s/i/range/mode");
		int on = strcmp(seq, "auto,auto") == 0;
		free(seq);
		if (on)
			break;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGINT);
	int wst = 0;
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	assert_true(WIFEXITED(wst));
	assert_int_equal(WEXITSTATUS(wst), 0);
	seq = range_publishes("/s/i/range/mode");
	assert_string_equal(seq, "auto,auto");
	free(seq);
	/* Pulled out while held: the bridge's message, a failure. */
	stub("{\"unplug_open_s\":0.5}");
	rc = ts_run_ergon(NULL, &err, "power-on", "--instrument", "joulescope", "--hold-s", "600",
			  NULL);
	assert_true(rc != 0);
	assert_non_null(strstr(err, "unplugged"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scan_and_two_devices),
	    cmocka_unit_test(test_driver_missing),
	    cmocka_unit_test(test_stream_gate_state_go),
	    cmocka_unit_test(test_dropped_sample_ids),
	    cmocka_unit_test(test_unplugged_mid_run),
	    cmocka_unit_test(test_gated_energy_per_inference),
	    cmocka_unit_test(test_js110),
	    cmocka_unit_test(test_power_on),
	    cmocka_unit_test(test_stats_rate),
	    cmocka_unit_test(test_falling_behind_lag),
	    cmocka_unit_test(test_falling_behind_drops),
	    cmocka_unit_test(test_live_starved_host),
	    cmocka_unit_test(test_live_reset_drains),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

/* The ppk2 instrument through the CLI, against the pty protocol simulator:
 * `ergon record` to JLS then `ergon analyze --jls --sync-input-index 3`
 * (energies worked out by hand from the simulated waveform), counter gaps
 * as NaN, an unplug mid-recording, --until-gate-falls, Ctrl-C, an existing
 * file, no device and two devices, `ergon power-on`, `ergon instruments`,
 * `ergon run --instrument ppk2` (software markers), and a full disk through
 * the record pipeline. */
#include "ergon/jls.h"
#include "ergon/record.h"
#include "test_support.h"
#include "ts_ppk2_sim.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP_V (4.0 * 1.8 / 163840.0)
/* By hand: 1 mA on 10.15 ohm = 0.01015 V = 230.97 steps -> 231;
 * 10 mA = 0.1015 V = 2309.7 steps -> 2310. */
#define I1 (231 * STEP_V / 10.15)
#define I2 (2310 * STEP_V / 10.15)

static double cur(uint64_t k, void *ctx)
{
	(void)ctx;
	return k >= 50000 && k < 250000 ? 0.010 : 0.001;
}

static int rng(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 2;
}

static uint8_t logic(uint64_t k, void *ctx)
{
	(void)ctx;
	return k >= 50000 && k < 250000 ? 0x08 : 0x00;
}

static struct ts_ppk2_sim *sim(uint64_t samples, const char **path)
{
	struct ts_ppk2_sim_cfg c = {
	    .current_a = cur, .range = rng, .logic = logic, .samples = samples};
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&c, path);
	assert_non_null(s);
	return s;
}

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (j == NULL)
		fail_msg("%s: %s", path, je.text);
	return j;
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_number(v))
		fail_msg("%s is not a number", k);
	return json_number_value(v);
}

static void record_then_analyze_energy(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	const char *path = NULL;
	struct ts_ppk2_sim *s = sim(300000, &path);
	char *spec = ts_strf("ppk2:%s", path);
	char *jls = ts_strf("%s/r.jls", dir);
	char *out = NULL, *err = NULL;
	int rc = ts_run_ergon(&out, &err, "record", "--instrument", spec, "--instrument-opt",
			      "vdd_mv=3000", "--duration-s", "3", "--out", jls, NULL);
	if (rc != 0)
		fail_msg("record: %d %s", rc, err);
	assert_non_null(strstr(out, "recorded 300000 samples"));
	assert_null(strstr(err, "\r")); /* no progress line off a TTY */
	free(out);
	free(err);
	/* Refused the second time, replaced with --force. */
	rc = ts_run_ergon(NULL, &err, "record", "--instrument", spec, "--instrument-opt",
			  "vdd_mv=3000", "--duration-s", "0.1", "--out", jls, NULL);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(err, "--force"));
	free(err);
	char *an = ts_strf("%s/an", dir);
	rc = ts_run_ergon(&out, &err, "analyze", "--jls", jls, "--sync-input-index", "3", "--out",
			  an, NULL);
	if (rc != 0 && rc != 1)
		fail_msg("analyze: %d %s", rc, err);
	free(out);
	free(err);
	char *sp = ts_strf("%s/summary.json", an);
	json_t *sum = load(sp);
	json_t *pw = json_object_get(sum, "power");
	/* One window, D3 high for samples [50000, 250000): 2 s of I2 at 3 V. */
	assert_int_equal((int)num(pw, "gated_window_count"), 1);
	assert_true(fabs(num(pw, "gated_duration_s") - 2.0) < 1e-9);
	double e_want = 2.0 * I2 * 3.0;
	double e = num(pw, "energy_j");
	if (!(fabs(e - e_want) <= 1e-6 * e_want))
		fail_msg("gated energy %.9g J, by hand %.9g J", e, e_want);
	assert_true(fabs(num(pw, "avg_current_a") - I2) < 1e-7 * I2);
	assert_true(fabs(num(pw, "capture_duration_s") - 3.0) < 1e-9);
	/* The recording names itself: synthetic (a simulator, not a USB PPK2). */
	json_t *prov = json_object_get(sum, "provenance");
	assert_non_null(prov);
	json_decref(sum);
	/* Our reader: every sample, I1 outside the gate, I2 inside. */
	struct ergon_jls_reader *r = NULL;
	struct ergon_err e2 = {0};
	assert_int_equal(ergon_jls_file_open(jls, &r, &e2), 0);
	assert_int_equal(ergon_jls_reader_warnings(r)->n, 0);
	assert_string_equal(ergon_jls_reader_source_field(r, "vendor"), "Nordic Semiconductor");
	ergon_jls_reader_free(r);
	free(sp);
	free(an);
	free(jls);
	free(spec);
	ts_ppk2_sim_stop(s);
	ts_tmpdir_remove(dir);
	free(dir);
}

struct scan {
	uint64_t n, nan, nan_first;
	double sum_i;
};

static int scan_block(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	(void)err;
	struct scan *s = ctx;
	for (size_t j = 0; j < b->n; j++) {
		if (isnan(b->current_a[j])) {
			if (s->nan == 0)
				s->nan_first = b->first_index + j;
			s->nan++;
		} else {
			s->sum_i += b->current_a[j];
		}
	}
	s->n += b->n;
	return 0;
}

static struct scan scan_file(const char *jls)
{
	struct ergon_jls_reader *r = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_jls_file_open(jls, &r, &e), 0);
	struct scan s = {0};
	assert_int_equal(ergon_jls_reader_stream(r, NULL, scan_block, &s, &e), 0);
	ergon_jls_reader_free(r);
	return s;
}

static void gaps_unplug_and_gate_fall(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* Counter gap: 40 samples at 100000 are NaN, not filled. */
	struct ts_ppk2_sim_cfg c = {.current_a = cur,
				    .range = rng,
				    .logic = logic,
				    .samples = 200000,
				    .n_gaps = 1,
				    .gap_at = {100000},
				    .gap_len = {40}};
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&c, &path);
	char *spec = ts_strf("ppk2:%s", path);
	char *jls = ts_strf("%s/g.jls", dir);
	char *out = NULL, *err = NULL;
	int rc = ts_run_ergon(&out, &err, "record", "--instrument", spec, "--instrument-opt",
			      "vdd_mv=3000", "--duration-s", "2", "--out", jls, NULL);
	/* Written, 40 samples withheld as NaN: degraded (exit 4). */
	assert_int_equal(rc, 4);
	assert_non_null(strstr(err, "instrument.samples_dropped"));
	assert_non_null(strstr(out, "40 dropped"));
	struct scan sc = scan_file(jls);
	assert_int_equal(sc.n, 200000);
	assert_int_equal(sc.nan, 40);
	assert_int_equal(sc.nan_first, 100000);
	free(out);
	free(err);
	ts_ppk2_sim_stop(s);
	/* Unplugged after 150000 samples: everything before is kept, exit 1. */
	struct ts_ppk2_sim_cfg u = {
	    .current_a = cur, .range = rng, .logic = logic, .disconnect_after = 150000};
	s = ts_ppk2_sim_start(&u, &path);
	free(spec);
	spec = ts_strf("ppk2:%s", path);
	rc = ts_run_ergon(&out, &err, "record", "--instrument", spec, "--instrument-opt",
			  "vdd_mv=3000", "--duration-s", "5", "--out", jls, "--force", NULL);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, "incomplete"));
	assert_non_null(strstr(err, "disconnected after 150000 samples"));
	sc = scan_file(jls);
	assert_int_equal(sc.n, 150000);
	/* By hand: 50000 x I1 + 100000 x I2. */
	assert_true(fabs(sc.sum_i - (50000 * I1 + 100000 * I2)) < 1e-4 * sc.sum_i);
	free(out);
	free(err);
	ts_ppk2_sim_stop(s);
	/* Stalled: 1000 samples, then silence; stops after 2 s, incomplete. */
	s = sim(1000, &path);
	free(spec);
	spec = ts_strf("ppk2:%s", path);
	rc = ts_run_ergon(&out, &err, "record", "--instrument", spec, "--instrument-opt",
			  "vdd_mv=3000", "--duration-s", "5", "--out", jls, "--force", NULL);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, "sent no sample for 2 s after 1000 samples"));
	sc = scan_file(jls);
	assert_int_equal(sc.n, 1000);
	free(out);
	free(err);
	ts_ppk2_sim_stop(s);
	/* Silent from the start: nothing is written, no file. */
	char *none = ts_strf("%s/none.jls", dir);
	struct ts_ppk2_sim_cfg q = {.current_a = cur, .silent = 1};
	s = ts_ppk2_sim_start(&q, &path);
	free(spec);
	spec = ts_strf("ppk2:%s", path);
	rc = ts_run_ergon(NULL, &err, "record", "--instrument", spec, "--instrument-opt",
			  "vdd_mv=3000", "--duration-s", "5", "--out", none, NULL);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(err, "no sample arrived"));
	assert_int_equal(access(none, F_OK), -1);
	free(err);
	free(none);
	ts_ppk2_sim_stop(s);
	/* --until-gate-falls: stops at the first low sample after the gate. */
	s = sim(0, &path);
	free(spec);
	spec = ts_strf("ppk2:%s", path);
	rc = ts_run_ergon(&out, &err, "record", "--instrument", spec, "--instrument-opt",
			  "vdd_mv=3000", "--until-gate-falls", "--sync-input-index", "3", "--out",
			  jls, "--force", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the gate on digital line 3 fell"));
	sc = scan_file(jls);
	assert_int_equal(sc.n, 250001);
	free(out);
	free(err);
	ts_ppk2_sim_stop(s);
	free(spec);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void ctrl_c_keeps_a_valid_file(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct ts_ppk2_sim_cfg c = {.current_a = cur, .range = rng, .logic = logic, .realtime = 1};
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&c, &path);
	char *spec = ts_strf("ppk2:%s", path);
	char *jls = ts_strf("%s/c.jls", dir);
	pid_t pid = fork();
	if (pid == 0) {
		/* Written to: a read-only descriptor fails every write to
		 * stdout, which is exit 3 since issue 30. */
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(getenv("ERGON_BIN"), "ergon", "record", "--instrument", spec,
		      "--instrument-opt", "vdd_mv=3000", "--duration-s", "60", "--out", jls,
		      (char *)NULL);
		_exit(127);
	}
	/* Interrupt once the simulator has sent 60,000 samples (0.6 s at
	 * 100 kSPS; at most a pty buffer of them, 16,384, can still be
	 * unread), not after a fixed sleep that a loaded host (an ASan build
	 * starting slowly) can outlast: up to 60 s. */
	struct ts_ppk2_sim_state ss = {0};
	struct timespec nap = {0, 20 * 1000 * 1000};
	for (int i = 0; i < 3000; i++) {
		ts_ppk2_sim_state(s, &ss);
		if (ss.sent >= 60000)
			break;
		nanosleep(&nap, NULL);
	}
	if (ss.sent < 60000)
		fail_msg("the recording read only %llu samples in 60 s",
			 (unsigned long long)ss.sent);
	kill(pid, SIGINT);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	struct scan sc = scan_file(jls);
	assert_true(sc.n > 10000);
	assert_true(sc.n < 6000000);
	/* Closed properly: no warning from the reader. */
	struct ergon_jls_reader *r = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_jls_file_open(jls, &r, &e), 0);
	assert_int_equal(ergon_jls_reader_warnings(r)->n, 0);
	ergon_jls_reader_free(r);
	ts_ppk2_sim_stop(s);
	free(spec);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void selection_instruments_and_power_on(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_strf("%s/n.jls", dir);
	char *out = NULL, *err = NULL;
	setenv("ERGON_PPK2_PORTS", "", 1);
	int rc = ts_run_ergon(NULL, &err, "record", "--instrument", "ppk2", "--instrument-opt",
			      "vdd_mv=3000", "--duration-s", "1", "--out", jls, NULL);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(err, "no PPK2 found"));
	free(err);
	rc = ts_run_ergon(&out, NULL, "instruments", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "no PPK2 found (USB VID 0x1915 PID 0xC00A)"));
	free(out);
	const char *p1 = NULL, *p2 = NULL;
	struct ts_ppk2_sim_cfg c = {0};
	struct ts_ppk2_sim *s1 = ts_ppk2_sim_start(&c, &p1);
	struct ts_ppk2_sim *s2 = ts_ppk2_sim_start(&c, &p2);
	char *env = ts_strf("%s=AAA111,%s=BBB222", p1, p2);
	setenv("ERGON_PPK2_PORTS", env, 1);
	rc = ts_run_ergon(NULL, &err, "record", "--instrument", "ppk2", "--instrument-opt",
			  "vdd_mv=3000", "--duration-s", "1", "--out", jls, NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "AAA111"));
	assert_non_null(strstr(err, "BBB222"));
	free(err);
	rc = ts_run_ergon(&out, NULL, "instruments", NULL);
	assert_non_null(strstr(out, "BBB222"));
	free(out);
	/* power-on: source mode at the voltage given, DUT power on, left on. */
	rc = ts_run_ergon(&out, &err, "power-on", "--instrument", "ppk2:serial=BBB222", "--vdd-mv",
			  "1800", "--hold-s", "0.2", NULL);
	if (rc != 0)
		fail_msg("power-on: %s", err);
	assert_non_null(strstr(out, "stays on"));
	struct ts_ppk2_sim_state st;
	ts_ppk2_sim_state(s2, &st);
	assert_int_equal(st.mode, 2);
	assert_int_equal(st.vdd_mv, 1800);
	assert_int_equal(st.dut_power, 1);
	free(out);
	free(err);
	rc = ts_run_ergon(&out, &err, "power-on", "--instrument", "ppk2:serial=AAA111", "--vdd-mv",
			  "3300", "--hold-s", "0.2", "--off-on-exit", NULL);
	assert_int_equal(rc, 0);
	ts_ppk2_sim_state(s1, &st);
	assert_int_equal(st.vdd_mv, 3300);
	assert_int_equal(st.dut_power, 0); /* on, then off on release */
	free(out);
	free(err);
	/* Ctrl-C releases a held power-on (power stays on). */
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(getenv("ERGON_BIN"), "ergon", "power-on", "--instrument",
		      "ppk2:serial=AAA111", "--vdd-mv", "2500", (char *)NULL);
		_exit(127);
	}
	/* Wait (up to 20 s: an ASan build on a loaded machine starts slowly)
	 * until the simulator has seen the voltage, then interrupt. */
	struct timespec nap = {0, 50 * 1000 * 1000};
	for (int i = 0; i < 400; i++) {
		ts_ppk2_sim_state(s1, &st);
		if (st.vdd_mv == 2500 && st.dut_power == 1)
			break;
		nanosleep(&nap, NULL);
	}
	assert_int_equal(st.vdd_mv, 2500);
	assert_int_equal(st.dut_power, 1);
	kill(pid, SIGINT);
	int wst = 0;
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	assert_true(WIFEXITED(wst));
	assert_int_equal(WEXITSTATUS(wst), 0);
	ts_ppk2_sim_state(s1, &st);
	assert_int_equal(st.dut_power, 1);
	rc = ts_run_ergon(NULL, &err, "power-on", "--instrument", "ppk2:serial=AAA111", "--hold-s",
			  "0.1", NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "--vdd-mv"));
	free(err);
	unsetenv("ERGON_PPK2_PORTS");
	ts_ppk2_sim_stop(s1);
	ts_ppk2_sim_stop(s2);
	free(env);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

static double flat(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 0.005;
}

static void run_with_software_markers(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct ts_ppk2_sim_cfg c = {.current_a = flat, .range = rng, .realtime = 1};
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&c, &path);
	char *spec = ts_strf("ppk2:%s", path);
	char *rep = ts_strf("%s/run.json", dir);
	char *out = NULL, *err = NULL;
	int rc = ts_run_ergon(&out, &err, "run", "--device", "sim-dut", "--instrument", spec,
			      "--instrument-opt", "vdd_mv=2000", "--workload", "builtin:spin",
			      "--idle-s", "0.5", "--windows", "2", "--window-s", "0.5", "--out",
			      rep, NULL);
	if (rc != 0)
		fail_msg("run: %d %s", rc, err);
	json_t *j = load(rep);
	json_t *inst = json_object_get(j, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "driver")), "ppk2");
	assert_string_equal(json_string_value(json_object_get(inst, "provenance")), "synthetic");
	assert_non_null(strstr(json_string_value(json_object_get(inst, "notes")),
			       "validated against a protocol simulator only"));
	/* By hand: 5 mA on 10.15 ohm = 0.05075 V = 1154.8 steps -> 1155;
	 * idle power = 1155 x step / 10.15 ohm x 2 V = 9.9997 mW. */
	double p_want = 1155 * STEP_V / 10.15 * 2.0;
	json_t *idle = json_object_get(json_object_get(j, "figures"), "idle");
	double p = num(idle, "mean_power_w");
	if (!(fabs(p - p_want) <= 1e-6 * p_want))
		fail_msg("idle power %.9g W, by hand %.9g W", p, p_want);
	/* Every sample of the stream was kept at 100 kSPS. */
	json_t *smp = json_object_get(json_object_get(j, "figures"), "sampler");
	assert_true(fabs(num(smp, "achieved_hz") - 100000.0) < 1.0);
	json_decref(j);
	free(out);
	free(err);
	ts_ppk2_sim_stop(s);
	free(spec);
	free(rep);
	ts_tmpdir_remove(dir);
	free(dir);
}

static off_t room;
static ssize_t small_disk(int fd, const void *b, size_t n, off_t off)
{
	if (off + (off_t)n > room) {
		if (off >= room) {
			errno = ENOSPC;
			return -1;
		}
		n = (size_t)(room - off);
	}
	return pwrite(fd, b, n, off);
}

static void record_full_disk(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	const char *path = NULL;
	struct ts_ppk2_sim *s = sim(300000, &path);
	char *spec = ts_strf("ppk2:%s", path);
	char *jls = ts_strf("%s/f.jls", dir);
	const char *kv[] = {"vdd_mv=3000", NULL};
	room = 1 << 20; /* about 1 MiB: far less than 3 s of 11 signals */
	struct ergon_record_options o = {.instrument_spec = spec,
					 .instrument_opts = {.kv = kv},
					 .out_path = jls,
					 .duration_s = 3,
					 .pwrite_fn = small_disk};
	struct ergon_record_result res;
	struct ergon_err err = {0};
	int rc = ergon_record_run(&o, &res, &err);
	assert_int_equal(rc, ERGON_EIO);
	assert_int_equal(res.stop, ERGON_RECORD_WRITE);
	assert_int_equal(res.complete, 0);
	assert_non_null(strstr(err.msg, "No space left"));
	assert_true(res.samples_kept > 10000);
	struct scan sc = scan_file(jls);
	assert_int_equal(sc.n, res.samples_kept);
	ergon_record_result_cleanup(&res);
	ts_ppk2_sim_stop(s);
	free(spec);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(record_then_analyze_energy),
	    cmocka_unit_test(gaps_unplug_and_gate_fall),
	    cmocka_unit_test(ctrl_c_keeps_a_valid_file),
	    cmocka_unit_test(selection_instruments_and_power_on),
	    cmocka_unit_test(run_with_software_markers),
	    cmocka_unit_test(record_full_disk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

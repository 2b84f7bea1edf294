/* hwmon instrument against fake sysfs trees: discovery, rails by label,
 * ABI units, ina3221 P = V x I, INA2xx power register, INA228 energy
 * deltas, stale readings, faults mid-run. Expected values are worked out
 * by hand from the values the fake tree holds (tests/support/fake_sysfs.h). */
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "fake_sysfs.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct ergon_instrument *open_ok(const char *root, const char *spec)
{
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	int rc = ergon_instrument_open(spec, &o, &inst, &err);
	if (rc)
		fail_msg("open %s: %s", spec, err.msg);
	return inst;
}

static int open_fail(const char *root, const char *spec, struct ergon_err *err)
{
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	int rc = ergon_instrument_open(spec, &o, &inst, err);
	assert_null(inst);
	return rc;
}

static void read_sweep(struct ergon_instrument *inst, struct ergon_sample *s, size_t want)
{
	struct ergon_err err = {0};
	size_t n = 0;
	int rc = ergon_instrument_read(inst, s, 8, &n, &err);
	if (rc)
		fail_msg("read: %s", err.msg);
	assert_int_equal(n, want);
}

static void orin_nx_three_rails(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_other_hwmon(root, 0, "coretemp"), 0);
	assert_int_equal(fs_orin_nx(root, 1), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC");
	const struct ergon_instrument_identity *id = &inst->identity;
	assert_int_equal(id->n_rails, 3);
	assert_string_equal(id->rails[0], "VDD_IN");
	assert_string_equal(id->rails[2], "VDD_SOC");
	assert_int_equal(id->total_rail, 0);
	assert_string_equal(id->model, "ina3221");
	assert_string_equal(id->integrates, "none");
	/* INA3221 datasheet: gain error 0.25 % max. */
	assert_float_equal(id->accuracy_pct, 0.25, 1e-12);
	/* update_interval = 1 ms: stated as an interval (the Jetson method's
	 * "~1 ms"), not as a 1000 Hz sample rate; nothing measured yet. */
	assert_float_equal(id->sample_rate_hz, 0.0, 0.0);
	assert_float_equal(id->update_interval_s, 0.001, 1e-15);
	assert_float_equal(id->distinct_rate_hz, 0.0, 0.0);
	/* Worst rail VDD_IN at 5 V, 1 A: dI = 40 uV / 5 mOhm = 8 mA,
	 * dV = 8 mV: 5 * 0.008 + 1 * 0.008 = 0.048 W. */
	assert_float_equal(id->resolution_w, 0.048, 1e-9);
	assert_non_null(strstr(id->notes, "VDD_IN is the module's total input"));
	assert_non_null(strstr(id->notes, "validated against fake sysfs trees only"));
	json_t *idj = ergon_instrument_identity_json(inst);
	assert_string_equal(json_string_value(json_object_get(idj, "total_rail")), "VDD_IN");
	/* A fake tree under a root other than /: recorded, and synthetic
	 * (no --provenance measured in the options). */
	assert_string_equal(json_string_value(json_object_get(idj, "provenance")), "synthetic");
	assert_non_null(json_string_value(json_object_get(idj, "sysfs_root")));
	assert_string_equal(json_string_value(json_object_get(idj, "validated_against")),
			    "fake sysfs trees only (not yet on a board)");
	json_decref(idj);

	struct ergon_sample s[8];
	read_sweep(inst, s, 3);
	/* P = V x I per channel: 5.000 V x 1.000 A, 5 x 0.300, 5 x 0.250. */
	assert_float_equal(s[0].power_w, 5.0, 1e-9);
	assert_float_equal(s[1].power_w, 1.5, 1e-9);
	assert_float_equal(s[2].power_w, 1.25, 1e-9);
	assert_float_equal(s[1].current_a, 0.3, 1e-12);
	assert_float_equal(s[1].voltage_v, 5.0, 1e-12);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].channel, i);
		assert_true(s[i].fields & ERGON_F_POWER);
		assert_false(s[i].fields & ERGON_F_ENERGY);
	}
	assert_true(s[0].t_s <= s[1].t_s && s[1].t_s <= s[2].t_s);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void unknown_label_lists_existing(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_err err = {0};
	assert_int_equal(open_fail(root, "hwmon:VDD_IN,VDD_GPU", &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "\"VDD_GPU\""));
	assert_non_null(strstr(err.msg, "VDD_IN (ina3221 hwmon0)"));
	assert_non_null(strstr(err.msg, "VDD_CPU_GPU_CV"));
	assert_non_null(strstr(err.msg, "VDD_SOC"));
	ergon_err_clear(&err);
	assert_int_equal(open_fail(root, "hwmon:VDD_IN,VDD_IN", &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "twice"));
	ts_tmpdir_remove(root);
	free(root);
}

static void agx_orin_has_no_total(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_agx_orin(root, 2), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon");
	assert_int_equal(inst->identity.n_rails, 3);
	assert_string_equal(inst->identity.rails[0], "VDD_GPU_SOC");
	assert_string_equal(inst->identity.rails[2], "VIN_SYS_5V0");
	assert_int_equal(inst->identity.total_rail, -1);
	assert_non_null(strstr(inst->identity.notes, "never summed"));
	struct ergon_sample s[8];
	read_sweep(inst, s, 3);
	/* 19.000 V x 0.800 A = 15.2 W; 5.000 V x 0.600 A = 3 W. */
	assert_float_equal(s[0].power_w, 15.2, 1e-9);
	assert_float_equal(s[2].power_w, 3.0, 1e-9);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void ina226_uses_power_register(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_ina226(root, 0, 2), 0);
	/* The chip's own product, which differs from 12.000 V x 0.500 A. */
	assert_int_equal(fs_put(root, "sys/class/hwmon/hwmon0/power1_input", "5990000\n"), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:ina226@hwmon0");
	const struct ergon_instrument_identity *id = &inst->identity;
	assert_string_equal(id->rails[0], "ina226@hwmon0");
	/* update_interval 2 ms: an interval, no rate. */
	assert_float_equal(id->sample_rate_hz, 0.0, 0.0);
	assert_float_equal(id->update_interval_s, 0.002, 1e-15);
	assert_float_equal(id->accuracy_pct, 0.1, 1e-12);
	/* dI = 2.5 uV / 10 mOhm = 0.25 mA, coarser ABI quantum 1 mA;
	 * dV = 1.25 mV: 12 * 0.001 + 0.5 * 0.00125 = 0.012625 W. */
	assert_float_equal(id->resolution_w, 0.012625, 1e-12);
	assert_int_equal(id->total_rail, -1);
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	assert_float_equal(s[0].power_w, 5.99, 1e-12);
	assert_float_equal(s[0].voltage_v, 12.0, 1e-12);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void ina228_energy_and_backwards(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_ina228(root, 0), 0);
	const char *e = "sys/class/hwmon/hwmon0/energy1_input";
	struct ergon_instrument *inst = open_ok(root, "hwmon");
	assert_string_equal(inst->identity.integrates, "energy");
	assert_float_equal(inst->identity.resolution_j, 1e-6, 1e-18);
	assert_float_equal(inst->identity.accuracy_pct, 0.05, 1e-12);
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].energy_j, 0.0, 1e-12);
	assert_int_equal(fs_set(root, e, 1500000), 0);
	read_sweep(inst, s, 1);
	assert_float_equal(s[0].energy_j, 1.5, 1e-9);
	/* Backwards with no wrap range: reported, not added. */
	assert_int_equal(fs_set(root, e, 1000), 0);
	read_sweep(inst, s, 1);
	assert_false(s[0].fields & ERGON_F_ENERGY);
	assert_true(s[0].fields & ERGON_F_POWER);
	assert_float_equal(s[0].energy_j, 1.5, 1e-9);
	assert_true(ergon_issue_has(inst->issues, "instrument.counter_backwards"));
	const char *msg =
	    json_string_value(json_object_get(json_array_get(inst->issues, 0), "message"));
	assert_non_null(strstr(msg, "energy1_input"));
	/* From there the deltas count again: +0.5 J. */
	assert_int_equal(fs_set(root, e, 501000), 0);
	read_sweep(inst, s, 1);
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].energy_j, 2.0, 1e-9);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void stale_readings_counted(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_IN,VDD_SOC");
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[8];
	/* 40 sweeps; VDD_IN's current changes before sweeps 0, 10, 20, 30:
	 * 4 distinct updates in 40 reads. VDD_SOC never changes: 1 in 40. */
	for (int i = 0; i < 40; i++) {
		if (i % 10 == 0)
			assert_int_equal(
			    fs_set(root, "sys/class/hwmon/hwmon0/curr1_input", 1100 + i), 0);
		read_sweep(inst, s, 2);
	}
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	json_t *st = ergon_instrument_stats(inst);
	json_t *r0 = json_array_get(json_object_get(st, "rails"), 0);
	json_t *r1 = json_array_get(json_object_get(st, "rails"), 1);
	assert_int_equal(json_integer_value(json_object_get(r0, "reads")), 40);
	assert_int_equal(json_integer_value(json_object_get(r0, "distinct_updates")), 4);
	assert_int_equal(json_integer_value(json_object_get(r1, "distinct_updates")), 1);
	assert_true(json_is_true(json_object_get(r0, "total_input")));
	assert_true(ergon_issue_has(inst->issues, "instrument.stale_readings"));
	/* The identity states the measured distinct-update rate: VDD_SOC
	 * updated once (no rate), so VDD_IN's, (4 - 1) updates over the span
	 * its (40 - 1) reads took: 3/39 of its read rate, exactly. */
	double rr = json_real_value(json_object_get(r0, "read_rate_hz"));
	assert_true(rr > 0.0);
	assert_true(fabs(inst->identity.distinct_rate_hz / rr - 3.0 / 39.0) < 1e-12);
	json_t *idj = ergon_instrument_identity_json(inst);
	assert_float_equal(json_real_value(json_object_get(idj, "distinct_update_rate_hz")),
			   inst->identity.distinct_rate_hz, 0.0);
	assert_float_equal(json_real_value(json_object_get(idj, "update_interval_s")), 0.001,
			   1e-15);
	assert_float_equal(json_real_value(json_object_get(idj, "sample_rate_hz")), 0.0, 0.0);
	json_decref(idj);
	json_decref(st);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void not_a_number_mid_run(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_SOC");
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	assert_int_equal(fs_put(root, "sys/class/hwmon/hwmon0/curr3_input", "12ab\n"), 0);
	struct ergon_err err = {0};
	size_t n = 0;
	assert_int_equal(ergon_instrument_read(inst, s, 8, &n, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "hwmon0/curr3_input"));
	assert_non_null(strstr(err.msg, "column 3"));
	assert_non_null(strstr(err.msg, "\"12ab\""));
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void attribute_gone_mid_run(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_IN");
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	/* A sysfs attribute whose device went away reads nothing. */
	char *p = ts_strf("%s/sys/class/hwmon/hwmon0/in1_input", root);
	assert_int_equal(truncate(p, 0), 0);
	struct ergon_err err = {0};
	size_t n = 0;
	assert_int_equal(ergon_instrument_read(inst, s, 8, &n, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "hwmon0/in1_input"));
	assert_non_null(strstr(err.msg, "gone away"));
	free(p);
	ergon_instrument_close(inst);
	/* Missing at open: a rail whose files are absent is not offered. */
	p = ts_strf("%s/sys/class/hwmon/hwmon0/curr2_input", root);
	assert_int_equal(unlink(p), 0);
	err = (struct ergon_err){0};
	assert_int_equal(open_fail(root, "hwmon:VDD_CPU_GPU_CV", &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "VDD_SOC"));
	free(p);
	ts_tmpdir_remove(root);
	free(root);
}

static void no_device_says_why(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	struct ergon_err err = {0};
	assert_int_equal(open_fail(root, "hwmon", &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "/sys/class/hwmon"));
	assert_non_null(strstr(err.msg, "--sysfs-root"));
	assert_int_equal(fs_other_hwmon(root, 0, "coretemp"), 0);
	err = (struct ergon_err){0};
	assert_int_equal(open_fail(root, "hwmon", &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "hwmon0 (coretemp)"));
	assert_non_null(strstr(err.msg, "ina3221"));
	ts_tmpdir_remove(root);
	free(root);
}

static void thermal_and_env_root(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	assert_int_equal(fs_thermal_zone(root, 0, "cpu-thermal", 45500), 0);
	assert_int_equal(fs_thermal_zone(root, 1, "gpu-thermal", 51250), 0);
	setenv("ERGON_SYSFS_ROOT", root, 1);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("hwmon:VDD_IN", NULL, &inst, &err), 0);
	unsetenv("ERGON_SYSFS_ROOT");
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	/* The hottest zone, 51250 millidegrees. */
	assert_true(s[0].fields & ERGON_F_TEMP);
	assert_float_equal(s[0].temp_c, 51.25, 1e-12);
	json_t *st = ergon_instrument_stats(inst);
	json_t *z = json_object_get(json_object_get(st, "thermal"), "zones");
	assert_int_equal(json_array_size(z), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(z, 0), "type")),
			    "cpu-thermal");
	json_decref(st);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void writer_thread_rewrites_in_place(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_IN");
	struct fs_writer *w = fs_writer_start(root, 0.0005);
	assert_non_null(w);
	/* Idle: 5.000 V x 1.000 A = 5 W; load: 5.000 V x 3.000 A = 15 W. */
	fs_writer_rail(w, "hwmon0", 1, 5000, 1000);
	struct ergon_sample s[8];
	int seen_idle = 0, seen_load = 0;
	for (int i = 0; i < 4000; i++) {
		if (i == 2000)
			fs_writer_rail(w, "hwmon0", 1, 5000, 3000);
		read_sweep(inst, s, 1);
		/* A rewrite never shows a torn or empty value. */
		if (s[0].power_w == 5.0)
			seen_idle = 1;
		else if (s[0].power_w == 15.0)
			seen_load = 1;
		else
			fail_msg("read %d: unexpected power %.6f W", i, s[0].power_w);
	}
	while (fs_writer_ticks(w) < 5)
		usleep(1000);
	long ticks = fs_writer_stop(w);
	assert_true(seen_idle);
	assert_true(ticks > 0);
	/* The load value is written at the writer's next tick; it shows up in
	 * a later read unless all 2000 remaining reads beat one tick, in
	 * which case the final read after stop must show it. */
	if (!seen_load) {
		read_sweep(inst, s, 1);
		assert_float_equal(s[0].power_w, 15.0, 1e-12);
	}
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

/* Permission denied as an unprivileged user (the child drops to uid 65534;
 * root reads any file). */
static void permission_denied_names_fix(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	char *f = ts_strf("%s/sys/class/hwmon/hwmon0/curr1_input", root);
	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(chmod(f, 0400), 0);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(99);
		struct ergon_instrument_options o = {.sysfs_root = root};
		struct ergon_instrument *inst = NULL;
		struct ergon_err err = {0};
		int rc = ergon_instrument_open("hwmon:VDD_IN", &o, &inst, &err);
		ssize_t w = write(fds[1], err.msg, strlen(err.msg));
		(void)w;
		_exit(rc == ERGON_EACCES ? 0 : 1);
	}
	close(fds[1]);
	char msg[2048] = "";
	size_t got = 0;
	ssize_t r;
	while ((r = read(fds[0], msg + got, sizeof(msg) - 1 - got)) > 0)
		got += (size_t)r;
	msg[got] = '\0';
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %d: %s", status, msg);
	assert_non_null(strstr(msg, f));
	assert_non_null(strstr(msg, "permission denied"));
	assert_non_null(strstr(msg, "udev rule"));
	free(f);
	ts_tmpdir_remove(root);
	free(root);
}

/* The resolution floor must not depend on the load at open. INA3221
 * (SBOS576: shunt LSB 40 uV, bus LSB 8 mV), VDD_IN shunt 5 mOhm: dI =
 * 40 uV / 5 mOhm = 8 mA, dV = 8 mV. At open 5 V, 1 A: 5 x 0.008 + 1 x
 * 0.008 = 0.048 W. The load then draws 4 A: after stop the floor is the
 * load's, 5 x 0.008 + 4 x 0.008 = 0.072 W (the open reading alone would
 * keep 0.048 W). */
static void ina3221_floor_follows_the_load(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon:VDD_IN");
	assert_float_equal(inst->identity.resolution_w, 0.048, 1e-12);
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[8];
	read_sweep(inst, s, 1);
	assert_int_equal(fs_set(root, "sys/class/hwmon/hwmon0/curr1_input", 4000), 0);
	read_sweep(inst, s, 1);
	/* Back to idle: the floor keeps the largest reading. */
	assert_int_equal(fs_set(root, "sys/class/hwmon/hwmon0/curr1_input", 1000), 0);
	read_sweep(inst, s, 1);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_float_equal(inst->identity.resolution_w, 0.072, 1e-12);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

/* INA226 (SBOS547: shunt LSB 2.5 uV, bus LSB 1.25 mV), shunt 10 mOhm:
 * dI = 0.25 mA, below the ABI's 1 mA quantum, so dI = 1 mA; dV = 1.25 mV.
 * Open at 12 V, 0.5 A: 12 x 0.001 + 0.5 x 0.00125 = 0.012625 W. Loaded at
 * 12 V, 2 A: 12 x 0.001 + 2 x 0.00125 = 0.0145 W. */
static void ina226_floor_follows_the_load(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_ina226(root, 0, 2), 0);
	struct ergon_instrument *inst = open_ok(root, "hwmon");
	assert_float_equal(inst->identity.resolution_w, 0.012625, 1e-12);
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[8];
	assert_int_equal(fs_set(root, "sys/class/hwmon/hwmon0/curr1_input", 2000), 0);
	read_sweep(inst, s, 1);
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	assert_float_equal(inst->identity.resolution_w, 0.0145, 1e-12);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(orin_nx_three_rails),
	    cmocka_unit_test(ina3221_floor_follows_the_load),
	    cmocka_unit_test(ina226_floor_follows_the_load),
	    cmocka_unit_test(unknown_label_lists_existing),
	    cmocka_unit_test(agx_orin_has_no_total),
	    cmocka_unit_test(ina226_uses_power_register),
	    cmocka_unit_test(ina228_energy_and_backwards),
	    cmocka_unit_test(stale_readings_counted),
	    cmocka_unit_test(not_a_number_mid_run),
	    cmocka_unit_test(attribute_gone_mid_run),
	    cmocka_unit_test(no_device_says_why),
	    cmocka_unit_test(thermal_and_env_root),
	    cmocka_unit_test(writer_thread_rewrites_in_place),
	    cmocka_unit_test(permission_denied_names_fix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

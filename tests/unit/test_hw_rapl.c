/* rapl instrument against fake powercap trees: zones and subzones, the
 * wrap at max_energy_range_uj, a counter going backwards, permission
 * denied. Expected energies are worked out by hand from the raw values. */
#include "drivers/instruments/rapl/rapl_zone.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "fake_sysfs.h"
#include "test_support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void counter_step_rules(void **state)
{
	(void)state;
	struct rapl_counter c = {.max_range_uj = 1000};
	int64_t d;
	assert_int_equal(rapl_counter_step(&c, 900, &d), RAPL_STEP_OK);
	assert_int_equal(d, 0);
	assert_int_equal(rapl_counter_step(&c, 950, &d), RAPL_STEP_OK);
	assert_int_equal(d, 50);
	/* (1000 - 950) + 40 = 90 < 500: a wrap. */
	assert_int_equal(rapl_counter_step(&c, 40, &d), RAPL_STEP_WRAPPED);
	assert_int_equal(d, 90);
	assert_int_equal(rapl_counter_step(&c, 500, &d), RAPL_STEP_OK);
	/* (1000 - 500) + 100 = 600 >= 500: not a wrap, a reset. */
	assert_int_equal(rapl_counter_step(&c, 100, &d), RAPL_STEP_BACKWARDS);
	assert_int_equal(d, 0);
	struct rapl_counter nr = {0};
	assert_int_equal(rapl_counter_step(&nr, 900, &d), RAPL_STEP_OK);
	assert_int_equal(rapl_counter_step(&nr, 10, &d), RAPL_STEP_BACKWARDS);
}

static void read1(struct ergon_instrument *inst, struct ergon_sample *s, size_t want)
{
	struct ergon_err err = {0};
	size_t n = 0;
	if (ergon_instrument_read(inst, s, 8, &n, &err))
		fail_msg("read: %s", err.msg);
	assert_int_equal(n, want);
}

static void package_wrap_and_backwards(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_rapl_package(root, 0, 1000000, 10000000), 0);
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("rapl", &o, &inst, &err), 0);
	assert_int_equal(inst->identity.n_rails, 1);
	assert_string_equal(inst->identity.rails[0], "package-0");
	assert_int_equal(inst->identity.total_rail, -1);
	assert_string_equal(inst->identity.integrates, "energy");
	/* 10 J range at the zone's 125 W maximum: 0.08 s. */
	assert_non_null(strstr(inst->identity.notes, "every 0.08 s"));
	assert_non_null(strstr(inst->identity.notes, "validated against fake powercap trees only"));
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	const char *e = "sys/class/powercap/intel-rapl:0/energy_uj";
	struct ergon_sample s[8];
	read1(inst, s, 1);
	assert_float_equal(s[0].energy_j, 0.0, 1e-12);
	assert_int_equal(fs_set(root, e, 9900000), 0);
	read1(inst, s, 1);
	/* 9.9 J - 1.0 J */
	assert_float_equal(s[0].energy_j, 8.9, 1e-9);
	assert_int_equal(fs_set(root, e, 100000), 0);
	read1(inst, s, 1);
	/* wrap: (10.0 - 9.9) + 0.1 = 0.2 J more */
	assert_float_equal(s[0].energy_j, 9.1, 1e-9);
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_true(ergon_issue_has(inst->issues, "instrument.counter_wrapped"));
	assert_false(ergon_issue_has(inst->issues, "instrument.counter_backwards"));
	assert_int_equal(fs_set(root, e, 50000), 0);
	read1(inst, s, 1);
	/* (10.0 - 0.1) + 0.05 = 9.95 J would be implied: a reset, not added. */
	assert_float_equal(s[0].energy_j, 9.1, 1e-9);
	assert_false(s[0].fields & ERGON_F_ENERGY);
	assert_true(ergon_issue_has(inst->issues, "instrument.counter_backwards"));
	assert_int_equal(fs_set(root, e, 1050000), 0);
	read1(inst, s, 1);
	assert_float_equal(s[0].energy_j, 10.1, 1e-9);
	json_t *st = ergon_instrument_stats(inst);
	json_t *d0 = json_array_get(json_object_get(st, "rails"), 0);
	assert_int_equal(json_integer_value(json_object_get(d0, "wraps")), 1);
	assert_int_equal(json_integer_value(json_object_get(d0, "counter_backwards")), 1);
	assert_int_equal(json_integer_value(json_object_get(d0, "reads")), 5);
	json_decref(st);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void domains_by_name(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_rapl_package(root, 0, 4000000, 262143328850LL), 0);
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("rapl:package-0,core", &o, &inst, &err), 0);
	assert_int_equal(inst->identity.n_rails, 2);
	assert_string_equal(inst->identity.rails[1], "package-0/core");
	struct ergon_sample s[8];
	read1(inst, s, 2);
	assert_int_equal(s[1].channel, 1);
	ergon_instrument_close(inst);
	inst = NULL;

	assert_int_equal(ergon_instrument_open("rapl:gpu", &o, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "\"gpu\""));
	assert_non_null(strstr(err.msg, "package-0/dram"));
	/* A second package makes a bare "core" ambiguous. */
	assert_int_equal(fs_rapl_package(root, 1, 4000000, 262143328850LL), 0);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("rapl:core", &o, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "ambiguous"));
	/* psys is the platform total. */
	assert_int_equal(fs_put(root, "sys/class/powercap/intel-rapl:2/name", "psys\n"), 0);
	assert_int_equal(fs_put(root, "sys/class/powercap/intel-rapl:2/energy_uj", "7\n"), 0);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("rapl", &o, &inst, &err), 0);
	assert_int_equal(inst->identity.n_rails, 3);
	assert_string_equal(inst->identity.rails[2], "psys");
	assert_int_equal(inst->identity.total_rail, 2);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

static void no_powercap(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("rapl", &o, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "sys/class/powercap"));
	assert_non_null(strstr(err.msg, "intel_rapl_msr"));
	ts_tmpdir_remove(root);
	free(root);
}

/* Permission denied as an unprivileged user: root reads any file, so the
 * open runs in a child that drops to nobody (uid 65534) first. */
static void permission_denied_names_remedies(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_rapl_package(root, 0, 1000, 262143328850LL), 0);
	char *e = ts_strf("%s/sys/class/powercap/intel-rapl:0/energy_uj", root);
	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(chmod(e, 0400), 0);
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
		int rc = ergon_instrument_open("rapl", &o, &inst, &err);
		ssize_t w = write(fds[1], err.msg, strlen(err.msg));
		(void)w;
		close(fds[1]);
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
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("child status %d, message: %s", WEXITSTATUS(status), msg);
	assert_non_null(strstr(msg, e));
	assert_non_null(strstr(msg, "permission denied"));
	assert_non_null(strstr(msg, "root"));
	assert_non_null(strstr(msg, "udev rule"));
	assert_non_null(strstr(msg, "chmod o+r"));
	free(e);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counter_step_rules),
	    cmocka_unit_test(package_wrap_and_backwards),
	    cmocka_unit_test(domains_by_name),
	    cmocka_unit_test(no_powercap),
	    cmocka_unit_test(permission_denied_names_remedies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

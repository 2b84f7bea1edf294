/* Sysfs trees the driver did not produce (--sysfs-root is user input):
 * FIFOs, directories and oversized or binary files where attributes should
 * be. Discovery and reading must neither hang nor overrun, and must say
 * what is wrong with which file. */
#include "ergon/instrument.h"
#include "fake_sysfs.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_spec(const char *root, const char *spec, struct ergon_instrument **inst,
		     struct ergon_err *err)
{
	struct ergon_instrument_options o = {.sysfs_root = root};
	return ergon_instrument_open(spec, &o, inst, err);
}

static void fifo_name_and_value_do_not_hang(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	/* hwmon1's name is a FIFO nobody writes. */
	char *d = ts_strf("%s/sys/class/hwmon/hwmon1", root);
	char *n = ts_strf("%s/name", d);
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(mkfifo(n, 0644), 0);
	/* VDD_SOC's current is a FIFO too. */
	char *c = ts_strf("%s/sys/class/hwmon/hwmon0/curr3_input", root);
	assert_int_equal(unlink(c), 0);
	assert_int_equal(mkfifo(c, 0644), 0);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_spec(root, "hwmon:VDD_IN", &inst, &err), 0);
	ergon_instrument_close(inst);
	inst = NULL;
	err = (struct ergon_err){0};
	assert_int_not_equal(open_spec(root, "hwmon:VDD_SOC", &inst, &err), 0);
	assert_null(inst);
	assert_non_null(strstr(err.msg, "curr3_input"));
	free(c);
	free(n);
	free(d);
	ts_tmpdir_remove(root);
	free(root);
}

static void directory_and_oversized_files(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	/* A directory where VDD_CPU_GPU_CV's voltage should be. */
	char *v = ts_strf("%s/sys/class/hwmon/hwmon0/in2_input", root);
	assert_int_equal(unlink(v), 0);
	assert_int_equal(mkdir(v, 0755), 0);
	/* A 64 KiB label: truncated to the rail-name buffer, no overrun. */
	char *big = malloc(65536);
	memset(big, 'A', 65535);
	big[65535] = '\0';
	char *lp = ts_strf("%s/sys/class/hwmon/hwmon0/in1_label", root);
	assert_int_equal(ts_write_file(lp, big, 65535), 0);
	/* Binary junk in VDD_SOC's label. */
	assert_int_equal(fs_put(root, "sys/class/hwmon/hwmon0/in3_label", "\x01\xff\x7f"), 0);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_not_equal(open_spec(root, "hwmon", &inst, &err), 0);
	assert_null(inst);
	assert_non_null(strstr(err.msg, "in2_input"));
	/* The long label is cut to 47 characters. */
	err = (struct ergon_err){0};
	char label[48];
	memset(label, 'A', 47);
	label[47] = '\0';
	char *spec = ts_strf("hwmon:%s", label);
	assert_int_equal(open_spec(root, spec, &inst, &err), 0);
	assert_string_equal(inst->identity.rails[0], label);
	ergon_instrument_close(inst);
	free(spec);
	free(lp);
	free(big);
	free(v);
	ts_tmpdir_remove(root);
	free(root);
}

static void rapl_hostile(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_rapl_package(root, 0, 1000, 262143328850LL), 0);
	/* energy_uj holding a float, then a negative number. */
	assert_int_equal(fs_put(root, "sys/class/powercap/intel-rapl:0/energy_uj", "12.5\n"), 0);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_spec(root, "rapl", &inst, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "intel-rapl:0/energy_uj"));
	assert_non_null(strstr(err.msg, "\"12.5\""));
	/* A negative max range is ignored as no range (backwards stays backwards). */
	assert_int_equal(fs_put(root, "sys/class/powercap/intel-rapl:0/energy_uj", "100\n"), 0);
	assert_int_equal(
	    fs_put(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "-5\n"), 0);
	err = (struct ergon_err){0};
	assert_int_equal(open_spec(root, "rapl", &inst, &err), 0);
	struct ergon_sample s[4];
	size_t n;
	assert_int_equal(ergon_instrument_read(inst, s, 4, &n, &err), 0);
	assert_int_equal(fs_set(root, "sys/class/powercap/intel-rapl:0/energy_uj", 50), 0);
	assert_int_equal(ergon_instrument_read(inst, s, 4, &n, &err), 0);
	assert_false(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].energy_j, 0.0, 0.0);
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fifo_name_and_value_do_not_hang),
	    cmocka_unit_test(directory_and_oversized_files),
	    cmocka_unit_test(rapl_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The sysfs integer parser and reader: what the kernel prints is accepted,
 * everything else is refused with the column where it went wrong. */
#include "drivers/instruments/sysfs/sysfs.h"
#include "fake_sysfs.h"
#include "test_support.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *s, int64_t *v, size_t *stop)
{
	return ergon_sysfs_parse_i64(s, strlen(s), v, stop);
}

static void accepts_kernel_output(void **state)
{
	(void)state;
	int64_t v;
	size_t stop;
	assert_int_equal(parse("5000\n", &v, &stop), 0);
	assert_int_equal(v, 5000);
	assert_int_equal(parse("-40\n", &v, &stop), 0);
	assert_int_equal(v, -40);
	assert_int_equal(parse("0", &v, &stop), 0);
	assert_int_equal(v, 0);
	/* INT64 limits, as "%lld" prints them. */
	assert_int_equal(parse("9223372036854775807\n", &v, &stop), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(parse("-9223372036854775808\n", &v, &stop), 0);
	assert_true(v == INT64_MIN);
	/* Zero padding and trailing spaces (the fake writer's fixed width). */
	assert_int_equal(parse("000000000000000012345\n  ", &v, &stop), 0);
	assert_int_equal(v, 12345);
}

static void refuses_the_rest(void **state)
{
	(void)state;
	int64_t v = 7;
	size_t stop;
	assert_int_equal(parse("", &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 0);
	assert_int_equal(parse("\n", &v, &stop), ERGON_EPARSE);
	assert_int_equal(parse("-", &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 1);
	assert_int_equal(parse("12ab\n", &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 2);
	assert_int_equal(parse(" 12", &v, &stop), ERGON_EPARSE);
	assert_int_equal(parse("+12", &v, &stop), ERGON_EPARSE);
	assert_int_equal(parse("1.5", &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 1);
	assert_int_equal(parse("12 13", &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 3);
	assert_int_equal(parse("9223372036854775808", &v, &stop), ERGON_ERANGE);
	assert_int_equal(stop, 18);
	assert_int_equal(parse("-9223372036854775809", &v, &stop), ERGON_ERANGE);
	/* An embedded NUL is not whitespace. */
	assert_int_equal(ergon_sysfs_parse_i64("12\0", 3, &v, &stop), ERGON_EPARSE);
	assert_int_equal(stop, 2);
	assert_int_equal(v, 7); /* untouched on failure */
}

static void reader_names_file_and_bounds_size(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	assert_int_equal(fs_put(root, "big", "%0100d\n", 1), 0);
	assert_int_equal(fs_put(root, "bin", "\x01\x02\xff"), 0);
	char *big = ts_strf("%s/big", root), *bin = ts_strf("%s/bin", root);
	int fd = open(big, O_RDONLY);
	int64_t v;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sysfs_read_i64(fd, big, &v, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, big));
	assert_non_null(strstr(err.msg, "more than 63 bytes"));
	close(fd);
	fd = open(bin, O_RDONLY);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_sysfs_read_i64(fd, bin, &v, &err), ERGON_EPARSE);
	/* Unprintable bytes are quoted as '?'. */
	assert_non_null(strstr(err.msg, "\"???\""));
	close(fd);
	free(big);
	free(bin);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(accepts_kernel_output),
	    cmocka_unit_test(refuses_the_rest),
	    cmocka_unit_test(reader_names_file_and_bounds_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Configuration files ergon did not write: pathological YAML must be
 * refused quickly with a message naming the place, never crash, hang or
 * change the configuration. */
#include "ergon/config.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static int load_buf(const char *buf, size_t len, struct ergon_err *err)
{
	struct ergon_config cfg;
	assert_int_equal(ergon_config_init(&cfg), 0);
	int rc = ergon_config_load_yaml(&cfg, "evil.yml", buf, len, err);
	/* Whatever happened, the defaults are intact on failure. */
	if (rc != 0)
		assert_int_equal(cfg.profiling.iterations, 100);
	ergon_config_cleanup(&cfg);
	return rc;
}

static void deep_flow_nesting_refused_early(void **state)
{
	(void)state;
	/* 200 000 nested flow sequences: libyaml's scanner is quadratic in the
	 * flow depth, so without the nesting pre-check this takes minutes. */
	size_t n = 200000;
	char *buf = malloc(2 * n + 8);
	memcpy(buf, "a: ", 3);
	memset(buf + 3, '[', n);
	memset(buf + 3 + n, ']', n);
	struct ergon_err err = {0};
	assert_int_equal(load_buf(buf, 3 + 2 * n, &err), ERGON_ECONFIG);
	/* The root mapping is level 1, so the 16th '[' is level 17, the first
	 * too deep; it sits at column 3 + 16 = 19 of line 1. */
	assert_non_null(strstr(err.msg, "evil.yml:1:19: nested more than 16 levels deep"));
	free(buf);
}

static void deep_block_nesting_refused(void **state)
{
	(void)state;
	/* Block mappings 40 deep: "a:\n b:\n  c: ..." */
	char buf[4096];
	size_t o = 0;
	for (int i = 0; i < 40; i++) {
		for (int j = 0; j < i; j++)
			buf[o++] = ' ';
		buf[o++] = 'k';
		buf[o++] = ':';
		buf[o++] = '\n';
	}
	struct ergon_err err = {0};
	assert_int_equal(load_buf(buf, o, &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "nested more than 16 levels"));
}

static void aliases_are_not_expanded(void **state)
{
	(void)state;
	/* The "billion laughs" shape: the loader keeps aliases as references;
	 * the walk stops at the first unknown key. */
	const char *y = "a: &a [x, x, x, x, x, x, x, x, x]\n"
			"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			"e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
	struct ergon_err err = {0};
	assert_int_equal(load_buf(y, strlen(y), &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "evil.yml:1:1: unknown key 'a'"));
	/* An alias used as a section's value is walked like the section. */
	const char *y2 = "profiling: &p {iterations: 5}\npower: *p\n";
	ergon_err_clear(&err);
	assert_int_equal(load_buf(y2, strlen(y2), &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "(it belongs under profiling)"));
}

static void binary_and_bad_utf8(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	const char bin[] = "\x00\x01\x02\xff\xfe power: true";
	assert_int_not_equal(load_buf(bin, sizeof(bin) - 1, &err), 0);
	assert_non_null(strstr(err.msg, "evil.yml:"));
	ergon_err_clear(&err);
	const char bad[] = "power:\n  serial: \xc3\x28\n";
	assert_int_not_equal(load_buf(bad, sizeof(bad) - 1, &err), 0);
	assert_non_null(strstr(err.msg, "evil.yml:"));
	ergon_err_clear(&err);
	/* A NUL through a double-quoted escape. */
	const char nul[] = "power:\n  serial: \"ab\\0cd\"\n";
	assert_int_equal(load_buf(nul, sizeof(nul) - 1, &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "evil.yml:2:11: power.serial holds a NUL byte"));
	ergon_err_clear(&err);
	/* A control character in a string value. */
	const char ctl[] = "power:\n  serial: \"ab\\tcd\"\n";
	assert_int_equal(load_buf(ctl, sizeof(ctl) - 1, &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "control character at byte 3"));
}

static void oversize_values(void **state)
{
	(void)state;
	/* A 70-byte board name exceeds the 63 bytes target.board holds. */
	char y[256];
	snprintf(y, sizeof(y), "target:\n  board: %070d\n", 0);
	struct ergon_err err = {0};
	assert_int_equal(load_buf(y, strlen(y), &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "the value is 70 bytes, longer than the 63 allowed"));
	/* A 5000-byte scalar exceeds the 4095-byte scalar limit. */
	size_t n = 5000;
	char *big = malloc(n + 32);
	int w = snprintf(big, 32, "output:\n  dir: ");
	memset(big + w, 'd', n);
	big[(size_t)w + n] = '\n';
	ergon_err_clear(&err);
	assert_int_equal(load_buf(big, (size_t)w + n + 1, &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "is 5000 bytes long, above the 4095 allowed"));
	free(big);
	/* A 100-byte key. */
	char key[256];
	memset(key, 'k', 100);
	memcpy(key + 100, ": 1\n", 5);
	ergon_err_clear(&err);
	assert_int_equal(load_buf(key, strlen(key), &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "a key is 100 bytes long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(deep_flow_nesting_refused_early),
	    cmocka_unit_test(deep_block_nesting_refused),
	    cmocka_unit_test(aliases_are_not_expanded),
	    cmocka_unit_test(binary_and_bad_utf8),
	    cmocka_unit_test(oversize_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

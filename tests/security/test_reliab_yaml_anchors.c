/* YAML anchor and alias floods are refused in linear time, before
 * libyaml's loader (quadratic in the number of anchors) sees them, with
 * file:line:column. The time is measured in bench/bench_config_anchors.c,
 * never asserted here. */
#include "ergon/config.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load_buf(const char *buf, size_t len, struct ergon_err *err)
{
	struct ergon_config cfg;
	assert_int_equal(ergon_config_init(&cfg), 0);
	int rc = ergon_config_load_yaml(&cfg, "evil.yml", buf, len, err);
	if (rc != 0)
		assert_int_equal(cfg.profiling.iterations, 100);
	ergon_config_cleanup(&cfg);
	return rc;
}

/* "unknown_key: [&a0 1,&a1 1,...]": n anchors, base-36 names. *col65 gets
 * the 1-based column of the 65th anchor ('&'). */
static char *anchor_flood(size_t n, size_t *len, size_t *col65)
{
	size_t cap = 32 + n * 9;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t o = (size_t)snprintf(buf, cap, "unknown_key: [");
	for (size_t k = 0; k < n; k++) {
		char name[8];
		size_t v = k, l = 0;
		do {
			name[l++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
			v /= 36;
		} while (v);
		if (k == 64)
			*col65 = o + 1;
		buf[o++] = '&';
		while (l)
			buf[o++] = name[--l];
		o += (size_t)snprintf(buf + o, cap - o, " 1%s", k + 1 < n ? "," : "]\n");
	}
	*len = o;
	return buf;
}

static void anchor_flood_refused(void **state)
{
	(void)state;
	/* The case: 100 000 anchors in under 1 MB. */
	size_t len = 0, col = 0;
	char *buf = anchor_flood(100000, &len, &col);
	assert_true(len <= ERGON_CFG_FILE_MAX);
	assert_true(len > 700000);
	struct ergon_err err = {0};
	assert_int_equal(load_buf(buf, len, &err), ERGON_ECONFIG);
	char *want = ts_strf("evil.yml:1:%zu: more than 64 YAML anchors", col);
	if (strstr(err.msg, want) == NULL)
		fail_msg("'%s' lacks '%s'", err.msg, want);
	free(want);
	free(buf);
}

static void alias_flood_refused(void **state)
{
	(void)state;
	/* One anchor, 300 aliases to it on lines 2..301: the 257th alias is
	 * on line 258, column 4 ("- *a"). */
	size_t cap = 64 + 300 * 12, o = 0;
	char *buf = malloc(cap);
	o += (size_t)snprintf(buf, cap, "x: &a 1\n");
	for (int k = 0; k < 300; k++)
		o += (size_t)snprintf(buf + o, cap - o, "y%d: *a\n", k);
	struct ergon_err err = {0};
	assert_int_equal(load_buf(buf, o, &err), ERGON_ECONFIG);
	/* "y256: *a": line 258, the alias at column 7. */
	if (strstr(err.msg, "evil.yml:258:7: more than 256 YAML aliases") == NULL)
		fail_msg("'%s'", err.msg);
	free(buf);
}

static void near_miss_at_the_caps(void **state)
{
	(void)state;
	/* Exactly 64 anchors and 256 aliases pass the caps; the walk then stops
	 * at the first unknown key as for any file. */
	size_t len = 0, col = 0;
	char *buf = anchor_flood(64, &len, &col);
	struct ergon_err err = {0};
	assert_int_equal(load_buf(buf, len, &err), ERGON_ECONFIG);
	assert_null(strstr(err.msg, "anchors"));
	assert_non_null(strstr(err.msg, "unknown key 'unknown_key'"));
	free(buf);
	size_t cap2 = 64 + 256 * 12;
	char *b2 = malloc(cap2);
	size_t o = (size_t)snprintf(b2, cap2, "x: &a 1\n");
	for (int k = 0; k < 256; k++)
		o += (size_t)snprintf(b2 + o, cap2 - o, "y%d: *a\n", k);
	ergon_err_clear(&err);
	assert_int_equal(load_buf(b2, o, &err), ERGON_ECONFIG);
	assert_null(strstr(err.msg, "aliases"));
	assert_non_null(strstr(err.msg, "unknown key 'x'"));
	free(b2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(anchor_flood_refused),
	    cmocka_unit_test(alias_flood_refused),
	    cmocka_unit_test(near_miss_at_the_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

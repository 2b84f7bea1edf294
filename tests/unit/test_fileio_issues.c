/* Atomic output (no overwrite without force, folder checks) and the issue
 * registry's integrity rule. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "test_support.h"

static void write_refuses_existing_without_force(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/a.json", dir);
	struct ergon_err err = {0};
	assert_int_equal(ergon_file_write_atomic(path, "one", 3, 0, &err), 0);
	assert_int_equal(ergon_file_write_atomic(path, "two", 3, 0, &err), ERGON_EEXIST);
	assert_non_null(strstr(err.msg, "--force"));
	char *got = ts_read_file(path, NULL);
	assert_string_equal(got, "one");
	free(got);
	ergon_err_clear(&err);
	assert_int_equal(ergon_file_write_atomic(path, "two", 3, ERGON_WRITE_FORCE, &err), 0);
	got = ts_read_file(path, NULL);
	assert_string_equal(got, "two");
	free(got);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void check_writable_fails_before_measuring(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	assert_int_equal(ergon_file_check_writable("/nonexistent-dir-ergon/x.json", 0, &err),
			 ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent-dir-ergon"));
	char *dir = ts_tmpdir();
	char *sub = ts_strf("%s/ro", dir);
	mkdir(sub, 0555);
	char *path = ts_strf("%s/x.json", sub);
	ergon_err_clear(&err);
	if (geteuid() != 0) {
		assert_int_equal(ergon_file_check_writable(path, 0, &err), ERGON_EACCES);
	}
	char *deep = ts_strf("%s/new/deeper/x.json", dir);
	ergon_err_clear(&err);
	assert_int_equal(ergon_file_check_writable(deep, ERGON_WRITE_MKDIR, &err), 0);
	free(deep);
	free(path);
	free(sub);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void integrity_from_worst_severity(void **state)
{
	(void)state;
	json_t *l = json_array();
	assert_int_equal(ergon_issues_integrity(l), ERGON_INTEGRITY_VALID);
	assert_int_equal(ergon_issue_add(l, "run.sampler_late", NULL, "late %d", 3), 0);
	assert_int_equal(ergon_issues_integrity(l), ERGON_INTEGRITY_VALID);
	/* run.throttled is a finding (info): a THROTTLED run stays valid. */
	assert_int_equal(ergon_issue_add(l, "run.throttled", NULL, "x"), 0);
	assert_int_equal(ergon_issues_integrity(l), ERGON_INTEGRITY_VALID);
	assert_int_equal(ergon_issue_add(l, "run.sampler_gap", NULL, "x"), 0);
	assert_int_equal(ergon_issues_integrity(l), ERGON_INTEGRITY_DEGRADED);
	assert_int_equal(ergon_issue_add(l, "run.interrupted", NULL, "x"), 0);
	assert_int_equal(ergon_issues_integrity(l), ERGON_INTEGRITY_INVALID);
	assert_int_equal(ergon_issue_add(l, "no.such.code", NULL, "x"), ERGON_EUSAGE);
	assert_int_equal(json_array_size(l), 4);
	assert_true(ergon_issue_has(l, "run.throttled"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "message")),
			    "late 3");
	json_decref(l);
}

static void artifact_roundtrip_and_tamper(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	json_t *a = ergon_artifact_new("ergon.test", 1, ERGON_PROV_SYNTHETIC);
	json_object_set_new(a, "value_w", json_real(0.1 + 0.2));
	struct ergon_err err = {0};
	assert_int_equal(ergon_artifact_write(a, path, 0, &err), 0);
	json_t *b = NULL;
	assert_int_equal(ergon_artifact_load(path, 1 << 20, &b, &err), 0);
	assert_int_equal(ergon_artifact_check_digest(b, &err), 0);
	/* 0.1 + 0.2 survives the file exactly. */
	assert_true(json_real_value(json_object_get(b, "value_w")) == 0.1 + 0.2);
	json_object_set_new(b, "value_w", json_real(0.3));
	assert_int_equal(ergon_artifact_check_digest(b, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "report_id"));
	json_decref(a);
	json_decref(b);
	/* Truncated file: the error names the place. */
	ts_write_file(path, "{\"a\": [1, 2", 11);
	ergon_err_clear(&err);
	b = NULL;
	assert_int_equal(ergon_artifact_load(path, 1 << 20, &b, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "r.json:1:"));
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_refuses_existing_without_force),
		cmocka_unit_test(check_writable_fails_before_measuring),
		cmocka_unit_test(integrity_from_worst_severity),
		cmocka_unit_test(artifact_roundtrip_and_tamper),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

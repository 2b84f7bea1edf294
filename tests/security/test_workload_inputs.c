/* Workload specs ergon did not produce: plugin paths that are not ELF
 * shared objects, bare names that must not be searched on the library path,
 * and commands that name no program. */
#include "ergon/workload.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void plugin_not_elf(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	const char *bodies[] = {"#!/bin/sh\necho hi\n", "",
				"\x7f\x45L", /* 0x7f 'E' 'L': a truncated ELF magic */
				"MZ\x90\x00 not elf"};
	/* Lengths without the terminating NUL; the last body holds a NUL. */
	const size_t lens[] = {sizeof("#!/bin/sh\necho hi\n") - 1, 0, 3,
			       sizeof("MZ\x90\x00 not elf") - 1};
	for (size_t i = 0; i < 4; i++) {
		char *path = ts_strf("%s/p%zu.so", dir, i);
		assert_int_equal(ts_write_file(path, bodies[i], lens[i]), 0);
		char *spec = ts_strf("plugin:%s", path);
		struct ergon_err err = {0};
		struct ergon_workload *wl = NULL;
		assert_int_equal(ergon_workload_open(spec, NULL, &wl, &err), ERGON_EPARSE);
		assert_null(wl);
		assert_non_null(strstr(err.msg, "is not an ELF shared object"));
		assert_non_null(strstr(err.msg, path));
		free(spec);
		free(path);
	}
	/* A folder is not a plugin either (open succeeds, read fails). */
	char *spec = ts_strf("plugin:%s", dir);
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_not_equal(ergon_workload_open(spec, NULL, &wl, &err), 0);
	assert_null(wl);
	free(spec);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void plugin_bare_name_not_searched(void **state)
{
	(void)state;
	/* libc.so.6 exists on the loader's path; a bare name must mean
	 * ./libc.so.6, which does not exist in the test's folder. */
	char *dir = ts_tmpdir();
	char *old = getcwd(NULL, 0);
	assert_int_equal(chdir(dir), 0);
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open("plugin:libc.so.6", NULL, &wl, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "'./libc.so.6'"));
	assert_int_equal(chdir(old), 0);
	free(old);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void command_no_such_program(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(
	    ergon_workload_open("command:ergon-no-such-program-xyz --flag", NULL, &wl, &err),
	    ERGON_ENOENT);
	assert_null(wl);
	assert_non_null(strstr(err.msg, "no program 'ergon-no-such-program-xyz' on PATH"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_open("pipe:/nonexistent/bin/x", NULL, &wl, &err),
			 ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "'/nonexistent/bin/x' is not an executable file"));
	ergon_err_clear(&err);
	/* A folder named like a program is not one. */
	assert_int_equal(ergon_workload_open("command:/tmp", NULL, &wl, &err), ERGON_ENOENT);
	ergon_err_clear(&err);
	/* Shell metacharacters are not interpreted: no shell runs, so ";" is
	 * part of the program name and no such program exists. */
	assert_int_equal(ergon_workload_open("command:true;rm -rf /nonexistent", NULL, &wl, &err),
			 ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "'true;rm'"));
}

static void pipe_reply_with_nul(void **state)
{
	(void)state;
	/* "ok\0junk" must not pass as "ok": strcmp would stop at the NUL. */
	struct ergon_workload_options o = {.invoke_timeout_s = 5.0};
	struct ergon_workload *wl = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_open("pipe:sh -c 'while read w n; do printf "
					     "\"ok\\000junk\\n\"; done'",
					     &o, &wl, &err),
			 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "holds a NUL byte"));
	ergon_workload_close(wl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(plugin_not_elf),
	    cmocka_unit_test(plugin_bare_name_not_searched),
	    cmocka_unit_test(command_no_such_program),
	    cmocka_unit_test(pipe_reply_with_nul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

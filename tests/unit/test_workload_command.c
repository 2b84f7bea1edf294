/* command workload: argv splitting, success, failure by exit status, by
 * signal, timeout with the process group killed, and no zombie left. */
#include "drivers/workloads/wl_proc.h"
#include "ergon/workload.h"
#include "test_support.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* After every invocation the driver must have reaped its child: this
 * process then has no child at all, so waitpid says ECHILD. */
static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static int invoke_once(const char *spec, double timeout_s, struct ergon_err *err)
{
	struct ergon_workload_options o = {.invoke_timeout_s = timeout_s};
	struct ergon_workload *wl = NULL;
	int rc = ergon_workload_open(spec, &o, &wl, err);
	if (rc)
		return rc;
	rc = ergon_workload_prepare(wl, err);
	if (rc == 0)
		rc = ergon_workload_invoke(wl, err);
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
	return rc;
}

static void split_rules(void **state)
{
	(void)state;
	struct ergon_wl_argv av;
	struct ergon_err err = {0};
	assert_int_equal(
	    ergon_wl_argv_split("  a  'b c'\t\"d \\\" \\\\ e\" f\\ g h'i'\"j\" ", "t", &av, &err),
	    0);
	assert_int_equal(av.argc, 5);
	assert_string_equal(av.argv[0], "a");
	assert_string_equal(av.argv[1], "b c");
	assert_string_equal(av.argv[2], "d \" \\ e");
	assert_string_equal(av.argv[3], "f g");
	assert_string_equal(av.argv[4], "hij");
	assert_null(av.argv[5]);
	/* Inside single quotes a backslash is literal. */
	assert_int_equal(ergon_wl_argv_split("'a\\b' ''", "t", &av, &err), 0);
	assert_int_equal(av.argc, 2);
	assert_string_equal(av.argv[0], "a\\b");
	assert_string_equal(av.argv[1], "");

	assert_int_equal(ergon_wl_argv_split("echo 'oops", "t", &av, &err), ERGON_EUSAGE);
	/* The quote opens at column 6 (1-based). */
	assert_non_null(strstr(err.msg, "column 6: unterminated ' quote"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_wl_argv_split("a \"b", "t", &av, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "column 3: unterminated \" quote"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_wl_argv_split("a b\\", "t", &av, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "column 4"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_wl_argv_split("   ", "t", &av, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "no command given"));
	ergon_err_clear(&err);
	/* 257 one-letter words exceed the 256-word limit. */
	char many[600];
	size_t o = 0;
	for (int i = 0; i < 257; i++) {
		many[o++] = 'x';
		many[o++] = ' ';
	}
	many[o] = '\0';
	assert_int_equal(ergon_wl_argv_split(many, "t", &av, &err), ERGON_ETOOBIG);
	ergon_err_clear(&err);
	char *huge = malloc(ERGON_WL_ARGV_BYTES + 2);
	memset(huge, 'a', ERGON_WL_ARGV_BYTES + 1);
	huge[ERGON_WL_ARGV_BYTES + 1] = '\0';
	assert_int_equal(ergon_wl_argv_split(huge, "t", &av, &err), ERGON_ETOOBIG);
	free(huge);
}

static void true_succeeds_false_fails(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	assert_int_equal(invoke_once("command:true", 5.0, &err), 0);
	assert_no_children();
	assert_int_equal(invoke_once("command:false", 5.0, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "exited with status 1"));
	assert_no_children();
}

static void exit_status_and_stderr_in_message(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	assert_int_equal(
	    invoke_once("command:sh -c 'echo first >&2; echo boom here >&2; exit 3'", 5.0, &err),
	    ERGON_EIO);
	assert_non_null(strstr(err.msg, "exited with status 3"));
	/* The last line of stderr is quoted, not the first. */
	const char *tail = strstr(err.msg, "stderr: ");
	assert_non_null(tail);
	assert_string_equal(tail, "stderr: boom here");
	assert_no_children();
}

static void crash_is_failed_invocation(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	assert_int_equal(invoke_once("command:sh -c 'kill -SEGV $$'", 5.0, &err), ERGON_EIO);
	/* SIGSEGV is 11 on Linux (signal(7)). */
	assert_non_null(strstr(err.msg, "killed by signal 11"));
	assert_no_children();
}

static void hang_times_out_and_group_dies(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *pidfile = ts_strf("%s/pid", dir);
	/* The shell records its pid (= its process-group id), starts a
	 * background sleep in the same group and waits: both must die. */
	char *spec = ts_strf("command:sh -c 'echo $$ > %s; sleep 100 & wait'", pidfile);
	struct ergon_err err = {0};
	assert_int_equal(invoke_once(spec, 0.3, &err), ERGON_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "0.3 s invocation timeout"));
	assert_no_children();
	char *txt = ts_read_file(pidfile, NULL);
	assert_non_null(txt);
	long pgid = strtol(txt, NULL, 10);
	assert_true(pgid > 1);
	/* The background sleep was reparented, so it is not our child; the
	 * group must still be empty a moment after SIGKILL. */
	int gone = 0;
	for (int i = 0; i < 200 && !gone; i++) {
		if (kill(-(pid_t)pgid, 0) != 0 && errno == ESRCH)
			gone = 1;
		else
			usleep(10000);
	}
	assert_true(gone);
	free(txt);
	free(spec);
	free(pidfile);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void repeated_invocations_each_reaped(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open("command:sh -c 'exit 0'", NULL, &wl, &err), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(ergon_workload_invoke(wl, &err), 0);
		assert_no_children();
	}
	ergon_workload_close(wl);
}

static void open_errors(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open("command:", NULL, &wl, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "no command given"));
	ergon_err_clear(&err);
	struct ergon_workload_options o = {.invoke_timeout_s = -1.0};
	assert_int_equal(ergon_workload_open("command:true", &o, &wl, &err), ERGON_ERANGE);
	assert_non_null(strstr(err.msg, "negative"));
	assert_null(wl);
	/* A kv option means nothing to a command: refused, not ignored. */
	ergon_err_clear(&err);
	const char *kv[] = {"iters=5", NULL};
	struct ergon_workload_options ko = {.kv = kv};
	assert_int_equal(ergon_workload_open("command:true", &ko, &wl, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown option 'iters'; valid options: (none)"));
	assert_null(wl);
}

/* The same cases without pidfd: the exit is then noticed by polling. */
static void without_pidfd(void **state)
{
	int was = ergon_wl_pidfd_enable(0);
	true_succeeds_false_fails(state);
	exit_status_and_stderr_in_message(state);
	crash_is_failed_invocation(state);
	hang_times_out_and_group_dies(state);
	ergon_wl_pidfd_enable(was);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(split_rules),
	    cmocka_unit_test(true_succeeds_false_fails),
	    cmocka_unit_test(exit_status_and_stderr_in_message),
	    cmocka_unit_test(crash_is_failed_invocation),
	    cmocka_unit_test(hang_times_out_and_group_dies),
	    cmocka_unit_test(repeated_invocations_each_reaped),
	    cmocka_unit_test(open_errors),
	    cmocka_unit_test(without_pidfd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* pipe workload: the request/reply protocol against small shell children:
 * one that answers, one that reports errors, one that dies, one that hangs,
 * one that breaks the protocol; the child is reaped at close. */
#include "ergon/workload.h"
#include "test_support.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static struct ergon_workload *open_pipe(const char *spec, double timeout_s)
{
	struct ergon_workload_options o = {.invoke_timeout_s = timeout_s};
	struct ergon_workload *wl = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_open(spec, &o, &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	return wl;
}

static void answers_every_request(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/requests", dir);
	/* The child logs each request line it receives, so the test can check
	 * the exact bytes ergon sent. */
	char *spec = ts_strf("pipe:sh -c 'while read w n; do echo \"$w $n\" >> %s; echo \"ok "
			     "done $n\"; done'",
			     log);
	struct ergon_workload *wl = open_pipe(spec, 5.0);
	struct ergon_err err = {0};
	for (int i = 0; i < 5; i++)
		assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	assert_no_children();
	char *got = ts_read_file(log, NULL);
	assert_non_null(got);
	assert_string_equal(got, "invoke 1\ninvoke 2\ninvoke 3\ninvoke 4\ninvoke 5\n");
	free(got);
	free(spec);
	free(log);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void err_reply_is_failed_invocation(void **state)
{
	(void)state;
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'while read w n; do if [ $n = 2 ]; then echo \"err model "
		      "missing\"; else echo ok; fi; done'",
		      5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "invocation 2 failed: err model missing"));
	/* The child is alive after an err reply: the next request works. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	assert_no_children();
}

static void crlf_and_bare_ok(void **state)
{
	(void)state;
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'while read w n; do printf \"ok\\r\\n\"; done'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	assert_no_children();
}

static void unknown_reply_stops_child(void **state)
{
	(void)state;
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'while read w n; do echo okay; done'", 5.0);
	struct ergon_err err = {0};
	/* "okay" is neither "ok" nor "ok <text>": the stream cannot be trusted. */
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "'okay' is neither"));
	assert_non_null(strstr(err.msg, "the child was stopped"));
	assert_no_children();
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	ergon_workload_close(wl);
}

static void two_lines_for_one_request_stops_child(void **state)
{
	(void)state;
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'while read w n; do printf \"ok\\nok\\n\"; done'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "more than one line"));
	assert_no_children();
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	ergon_workload_close(wl);
}

static void child_that_dies(void **state)
{
	(void)state;
	/* Answers once, then exits with 3 on the second request. */
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'read w n; echo ok; read w n; exit 3'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "closed its output at invocation 2"));
	assert_non_null(strstr(err.msg, "exited with status 3"));
	assert_non_null(strstr(err.msg, "not restarted"));
	assert_no_children();
	/* No restart: later invocations fail at once with the same cause. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "invocation 2 (exited with status 3)"));
	assert_no_children();
	ergon_workload_close(wl);
}

static void child_that_hangs(void **state)
{
	(void)state;
	struct ergon_workload *wl = open_pipe("pipe:sh -c 'read w n; sleep 100'", 0.3);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "no reply to invocation 1 within the 0.3 s timeout"));
	assert_no_children();
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	ergon_workload_close(wl);
}

static void child_ignoring_eof_is_killed_at_close(void **state)
{
	(void)state;
	/* Answers, then ignores EOF on stdin by sleeping: close must kill it
	 * after the grace period and reap it. */
	struct ergon_workload *wl = open_pipe("pipe:sh -c 'read w n; echo ok; sleep 100'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	assert_no_children();
}

static void overlong_reply(void **state)
{
	(void)state;
	/* 5000 bytes without a newline exceed the 4096-byte reply limit. */
	struct ergon_workload *wl = open_pipe(
	    "pipe:sh -c 'read w n; head -c 5000 /dev/zero | tr \"\\\\0\" x; sleep 100'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "longer than 4096 bytes"));
	assert_no_children();
	ergon_workload_close(wl);
}

static void unrequested_output_stops_child(void **state)
{
	(void)state;
	/* A start banner on stdout. Whether it is caught by the check before
	 * request 1, read as reply 1, or read together with reply 1, the first
	 * invocation fails as a protocol error and stops the child. */
	struct ergon_workload *wl =
	    open_pipe("pipe:sh -c 'echo hello; while read w n; do echo ok; done'", 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "the child was stopped"));
	assert_no_children();
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	ergon_workload_close(wl);
}

static void output_between_requests_is_caught(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *mark = ts_strf("%s/written", dir);
	char *go = ts_strf("%s/go", dir);
	/* After reply 1 the child waits for the test's go file (so reply 1 has
	 * been read alone), writes an extra line, then a marker file; the test
	 * waits for the marker, so the extra line is surely waiting when
	 * request 2 is about to be sent. */
	char *spec = ts_strf("pipe:sh -c 'read w n; echo ok; while [ ! -e %s ]; do sleep 0.01; "
			     "done; echo extra; touch %s; while read w n; do echo ok; done'",
			     go, mark);
	struct ergon_workload *wl = open_pipe(spec, 5.0);
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ts_write_file(go, "", 0), 0);
	for (int i = 0; i < 500 && access(mark, F_OK) != 0; i++)
		usleep(10000);
	assert_int_equal(access(mark, F_OK), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "unrequested output before request 2 ('extra...')"));
	assert_no_children();
	ergon_workload_close(wl);
	free(spec);
	free(go);
	free(mark);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void c_helper_child(void **state)
{
	(void)state;
	/* The example C child (examples/pipe_child) with N=8: 50 requests,
	 * 50 ok replies, reaped at close. */
	const char *b = getenv("ERGON_BUILD_DIR");
	assert_non_null(b);
	char *spec = ts_strf("pipe:%s/examples/pipe_child/ergon_pipe_child 8", b);
	struct ergon_workload *wl = open_pipe(spec, 5.0);
	struct ergon_err err = {0};
	for (int i = 0; i < 50; i++)
		assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	assert_no_children();
	free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(answers_every_request),
	    cmocka_unit_test(err_reply_is_failed_invocation),
	    cmocka_unit_test(crlf_and_bare_ok),
	    cmocka_unit_test(unknown_reply_stops_child),
	    cmocka_unit_test(two_lines_for_one_request_stops_child),
	    cmocka_unit_test(child_that_dies),
	    cmocka_unit_test(child_that_hangs),
	    cmocka_unit_test(child_ignoring_eof_is_killed_at_close),
	    cmocka_unit_test(overlong_reply),
	    cmocka_unit_test(unrequested_output_stops_child),
	    cmocka_unit_test(output_between_requests_is_caught),
	    cmocka_unit_test(c_helper_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

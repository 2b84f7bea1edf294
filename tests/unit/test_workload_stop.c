/* The stop flag of ergon_workload_options: a blocking invoke gives up with
 * ERGON_EINTR once it is set (and kills its child), while a signal that
 * does not set it leaves the invocation to finish. */
#include "ergon/workload.h"
#include "test_support.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t alarms;

static void on_alarm_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_alarm_count(int sig)
{
	(void)sig;
	alarms++;
}

/* SIGALRM after 50 ms, without SA_RESTART so that waits see EINTR. */
static void arm(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	struct itimerval it = {.it_value = {0, 50000}};
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void disarm(void)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
}

static int invoke_with_stop(const char *spec, struct ergon_err *err)
{
	struct ergon_workload_options o = {.stop = &stop_flag};
	struct ergon_workload *wl = NULL;
	int rc = ergon_workload_open(spec, &o, &wl, err);
	assert_int_equal(rc, 0);
	rc = ergon_workload_prepare(wl, err);
	if (rc == 0)
		rc = ergon_workload_invoke(wl, err);
	ergon_workload_close(wl);
	return rc;
}

static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void signal_setting_flag_stops_blocking_invokes(void **state)
{
	(void)state;
	/* Without the flag each of these would block for 100 s (no timeout). */
	const char *specs[] = {"command:sleep 100", "pipe:sh -c 'read w n; sleep 100'",
			       "builtin:periodic,burst_ms=0,sleep_ms=100000"};
	for (size_t i = 0; i < 3; i++) {
		struct ergon_err err = {0};
		stop_flag = 0;
		arm(on_alarm_stop);
		assert_int_equal(invoke_with_stop(specs[i], &err), ERGON_EINTR);
		disarm();
		assert_non_null(strstr(err.msg, "stopped on request"));
		assert_no_children();
	}
}

static void flag_set_before_invoke_is_seen(void **state)
{
	(void)state;
	/* No signal at all: the flag is already set, and the sliced wait must
	 * notice it instead of blocking on the child. */
	struct ergon_err err = {0};
	stop_flag = 1;
	assert_int_equal(invoke_with_stop("command:sleep 100", &err), ERGON_EINTR);
	assert_no_children();
	stop_flag = 0;
}

static void signal_without_flag_is_retried(void **state)
{
	(void)state;
	/* The alarm fires mid-invocation but sets no flag: the invocations
	 * complete normally. */
	const char *specs[] = {"command:sleep 0.3",
			       "pipe:sh -c 'while read w n; do sleep 0.3; echo ok; done'",
			       "builtin:periodic,burst_ms=0,sleep_ms=300"};
	for (size_t i = 0; i < 3; i++) {
		struct ergon_err err = {0};
		stop_flag = 0;
		alarms = 0;
		arm(on_alarm_count);
		assert_int_equal(invoke_with_stop(specs[i], &err), 0);
		disarm();
		assert_int_equal(alarms, 1);
		assert_no_children();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(signal_setting_flag_stops_blocking_invokes),
	    cmocka_unit_test(flag_set_before_invoke_is_seen),
	    cmocka_unit_test(signal_without_flag_is_retried),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

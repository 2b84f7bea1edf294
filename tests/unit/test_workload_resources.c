/* Resource hygiene of the process-based workloads: after open, many
 * invocations (ok, failing, timed out) and close, this process holds the
 * same number of file descriptors as before and no child. */
#include "ergon/workload.h"
#include "test_support.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void cycle(const char *spec, double timeout_s, int invokes)
{
	struct ergon_workload_options o = {.invoke_timeout_s = timeout_s};
	struct ergon_workload *wl = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_workload_open(spec, &o, &wl, &err), 0);
	(void)ergon_workload_prepare(wl, &err);
	for (int i = 0; i < invokes; i++) {
		ergon_err_clear(&err);
		(void)ergon_workload_invoke(wl, &err);
	}
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
}

static void no_fd_or_child_leaks(void **state)
{
	(void)state;
	int before = count_fds();
	cycle("command:true", 5.0, 10);
	cycle("command:false", 5.0, 10);
	cycle("command:sh -c 'echo x >&2; kill -KILL $$'", 5.0, 5);
	cycle("command:sleep 10", 0.05, 2);
	cycle("pipe:sh -c 'while read w n; do echo ok; done'", 5.0, 20);
	cycle("pipe:sh -c 'read w n; exit 1'", 5.0, 3);
	cycle("pipe:sleep 10", 0.05, 2);
	assert_int_equal(count_fds(), before);
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(no_fd_or_child_leaks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

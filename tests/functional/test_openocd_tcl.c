/* ergon's OpenOCD TCL client against Debian's real openocd (0.12), run
 * without a probe: its dummy adapter, a dummy JTAG tap, no target (a
 * target on the dummy adapter hangs in init). What this validates against
 * the real program: starting a session with `tcl_port 0` and finding the
 * port from /proc (ergon_lifecycle_listen_port), the 0x1a framing, the
 * catch wrapper's OK:/ERR: replies (a real command, a real error), OpenOCD's
 * `rtt server start/stop` opening and closing a real TCP port, the
 * refusal of a command that could break out of the wrapper, and shutdown.
 * Commands that need a target (reset, program, rtt setup/start) are only
 * tested against the fake in test_profile_probes.sh. */
#include "drivers/lifecycle/openocd/openocd_tcl.h"
#include "ergon/lifecycle.h"
#include "test_support.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	socklen_t l = sizeof a;
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
	close(s);
	return ntohs(a.sin_port);
}

static void real_openocd_speaks_the_tcl_protocol(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/openocd.log", dir);
	const char *argv[] = {"openocd",
			      "-f",
			      "interface/dummy.cfg",
			      "-c",
			      "transport select jtag",
			      "-c",
			      "adapter speed 1000",
			      "-c",
			      "gdb_port disabled",
			      "-c",
			      "telnet_port disabled",
			      "-c",
			      "tcl_port 0",
			      "-c",
			      "jtag newtap dummy cpu -irlen 4 -expected-id 0",
			      "-c",
			      "init",
			      NULL};
	struct ergon_err err = {0};
	int pid = 0;
	assert_int_equal(ergon_lifecycle_spawn(argv, log, &pid, &err), 0);
	unsigned tcl = 0;
	int rc = ergon_lifecycle_listen_port(pid, 0, "openocd", log, 20.0, &tcl, &err);
	if (rc)
		fail_msg("openocd (Debian package openocd) did not listen: %s\n%s", err.msg,
			 ts_read_file(log, NULL));
	assert_true(tcl > 0);
	struct ergon_ocd_tcl t;
	assert_int_equal(ergon_ocd_tcl_connect(&t, tcl, 5.0, &err), 0);
	char reply[512];
	/* A real command: its result text. */
	assert_int_equal(ergon_ocd_tcl_cmd(&t, "version", reply, sizeof reply, 5.0, &err), 0);
	assert_true(strncmp(reply, "Open On-Chip Debugger 0.12", 26) == 0);
	/* A real error: no target, so no reset command. */
	struct ergon_err e2 = {0};
	assert_int_equal(ergon_ocd_tcl_cmd(&t, "reset run", reply, sizeof reply, 5.0, &e2),
			 ERGON_EDEVICE);
	assert_non_null(strstr(e2.msg, "'reset run' failed: invalid command name \"reset\""));
	/* OpenOCD's RTT TCP server opens and closes a real port. */
	unsigned rp = free_port();
	char *start = ts_strf("rtt server start %u 0", rp);
	char *stop = ts_strf("rtt server stop %u", rp);
	assert_int_equal(ergon_ocd_tcl_cmd(&t, start, reply, sizeof reply, 5.0, &err), 0);
	assert_int_equal(ergon_lifecycle_wait_port(rp, pid, "openocd", log, 5.0, &err), 0);
	assert_int_equal(ergon_ocd_tcl_cmd(&t, stop, reply, sizeof reply, 5.0, &err), 0);
	/* A command that would break out of the catch wrapper is refused
	 * before it is sent; the session still answers. */
	struct ergon_err e3 = {0};
	assert_int_equal(
	    ergon_ocd_tcl_cmd(&t, "version} ; shutdown ; {", reply, sizeof reply, 5.0, &e3),
	    ERGON_EUSAGE);
	assert_int_equal(ergon_ocd_tcl_cmd(&t, "version", reply, sizeof reply, 5.0, &err), 0);
	/* shutdown ends openocd. */
	(void)ergon_ocd_tcl_cmd(&t, "shutdown", reply, sizeof reply, 5.0, &err);
	ergon_ocd_tcl_close(&t);
	int status = 0, exited = 0;
	for (int i = 0; i < 300 && !exited; i++) {
		exited = waitpid((pid_t)pid, &status, WNOHANG) == (pid_t)pid;
		if (!exited)
			usleep(10000);
	}
	if (!exited)
		ergon_lifecycle_stop(pid, 1.0);
	assert_true(exited);
	free(start);
	free(stop);
	free(log);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(real_openocd_speaks_the_tcl_protocol),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

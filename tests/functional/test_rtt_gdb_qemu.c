/* RTT end to end on the emulated Cortex-M55: the an547 firmware built with
 * -DERT_AN547_RTT streams HPX into its RTT up buffer; QEMU runs it halted
 * (-S) behind its gdbstub (-gdb tcp:127.0.0.1:PORT); `ergon capture
 * --transport rtt:gdb=127.0.0.1:PORT` finds the control block by searching
 * RAM (and, in a second run, at the _SEGGER_RTT address from the ELF's
 * symbol table) and drains it. The per-layer results must match the UART
 * build's capture of the same network.
 *
 * Exactly: the an547 port stages the stream in RAM through the same code in
 * both builds and hands it to the link (UART0 or the RTT ring) only at exit,
 * so under -icount (time = instruction count) both builds execute the same
 * instructions up to the end sentinel and every window_us is equal.
 */
#include "test_support.h"

#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QEMU_TIMEOUT_S 60

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *firmware(const char *which)
{
	const char *b = getenv("ERGON_BUILD_DIR");
	assert_non_null(b);
	char *p = ts_strf("%s/target/an547/ergon_an547_%s.elf", b, which);
	struct stat st;
	if (stat(p, &st) != 0)
		fail_msg("%s is missing: the arm build (gcc-arm-none-eabi) must run first", p);
	return p;
}

/* A loopback port nobody listens on right now. */
static int free_port(void)
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

static pid_t start_qemu(const char *elf, const char *serial, const char *gdb, const char *log)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (gdb)
			execlp("qemu-system-arm", "qemu-system-arm", "-M", "mps3-an547",
			       "-nographic", "-monitor", "none", "-semihosting-config",
			       "enable=on,target=native", "-icount", "shift=4,sleep=off,align=off",
			       "-serial", "null", "-gdb", gdb, "-S", "-kernel", elf, (char *)NULL);
		else
			execlp("qemu-system-arm", "qemu-system-arm", "-M", "mps3-an547",
			       "-nographic", "-monitor", "none", "-semihosting-config",
			       "enable=on,target=native", "-icount", "shift=4,sleep=off,align=off",
			       "-chardev", serial, "-serial", "chardev:u0", "-kernel", elf,
			       (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int reap_qemu(pid_t pid, double t0)
{
	int status = 0;
	while (now_s() - t0 < QEMU_TIMEOUT_S) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Capture through `spec` while QEMU runs; summary.json loaded. */
static json_t *capture(const char *dir, const char *name, const char *spec, pid_t pid, double t0)
{
	char *out = ts_strf("%s/%s", dir, name);
	char *cout = NULL, *cerr = NULL;
	int rc = ts_run_ergon(&cout, &cerr, "capture", "--transport", spec, "--out", out,
			      "--timeout", "40", "--heartbeat-timeout", "20", NULL);
	int qemu_rc = reap_qemu(pid, t0);
	if (rc != 0)
		fail_msg("ergon capture --transport %s exited %d:\n%s\n%s", spec, rc,
			 cout ? cout : "", cerr ? cerr : "");
	/* The firmware waits for the host to drain, then exits 0. */
	assert_int_equal(qemu_rc, 0);
	char *path = ts_strf("%s/summary.json", out);
	json_error_t je;
	json_t *sum = json_load_file(path, 0, &je);
	if (!sum)
		fail_msg("%s: %s", path, je.text);
	free(path);
	free(out);
	free(cout);
	free(cerr);
	return sum;
}

static json_t *uart_run(const char *dir)
{
	char *elf = firmware("profile");
	char *sock = ts_strf("%s/uart0.sock", dir);
	char *chardev = ts_strf("socket,id=u0,path=%s,server=on,wait=on", sock);
	char *log = ts_strf("%s/qemu_uart.log", dir);
	char *spec = ts_strf("unix:%s", sock);
	double t0 = now_s();
	pid_t pid = start_qemu(elf, chardev, NULL, log);
	struct stat st;
	while (stat(sock, &st) != 0 && now_s() - t0 < 10.0)
		usleep(20000);
	json_t *sum = capture(dir, "uart", spec, pid, t0);
	free(elf);
	free(sock);
	free(chardev);
	free(log);
	free(spec);
	return sum;
}

static json_t *rtt_run(const char *dir, const char *name, const char *extra)
{
	char *elf = firmware("profile_rtt");
	int port = free_port();
	char *gdb = ts_strf("tcp:127.0.0.1:%d", port);
	char *log = ts_strf("%s/qemu_%s.log", dir, name);
	char *spec = ts_strf("rtt:gdb=127.0.0.1:%d%s", port, extra);
	double t0 = now_s();
	pid_t pid = start_qemu(elf, NULL, gdb, log);
	/* QEMU listens once started: wait for the port. */
	for (;;) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		int ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
		close(s);
		if (ok || now_s() - t0 > 10.0)
			break;
		usleep(20000);
	}
	/* QEMU's gdbstub takes one client; the probe connection above is
	 * gone before ergon connects. */
	usleep(50000);
	json_t *sum = capture(dir, name, spec, pid, t0);
	free(elf);
	free(gdb);
	free(log);
	free(spec);
	return sum;
}

/* The _SEGGER_RTT address from the ELF's symbol table (arm-none-eabi-nm). */
static char *segger_rtt_addr(void)
{
	char *elf = firmware("profile_rtt");
	char *cmd = ts_strf("arm-none-eabi-nm '%s'", elf);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[256], *addr = NULL;
	while (fgets(line, sizeof line, p))
		if (strstr(line, " _SEGGER_RTT\n") && strlen(line) > 8) {
			line[8] = '\0';
			addr = ts_strf("0x%s", line);
		}
	pclose(p);
	free(cmd);
	free(elf);
	if (!addr)
		fail_msg("no _SEGGER_RTT symbol in the RTT firmware");
	return addr;
}

static void same_layers(json_t *uart, json_t *rtt)
{
	json_t *pu = json_object_get(uart, "profile"), *pr = json_object_get(rtt, "profile");
	assert_true(json_is_true(json_object_get(pr, "complete")));
	assert_string_equal(json_string_value(json_object_get(rtt, "integrity")),
			    json_string_value(json_object_get(uart, "integrity")));
	json_t *lu = json_object_get(pu, "layers"), *lr = json_object_get(pr, "layers");
	/* The network has four operators (target/port/an547/netdemo.c). */
	assert_int_equal(json_array_size(lu), 4);
	assert_int_equal(json_array_size(lr), 4);
	for (size_t i = 0; i < 4; i++) {
		json_t *a = json_array_get(lu, i), *b = json_array_get(lr, i);
		assert_string_equal(json_string_value(json_object_get(a, "op")),
				    json_string_value(json_object_get(b, "op")));
		assert_int_equal(json_integer_value(json_object_get(a, "id")),
				 json_integer_value(json_object_get(b, "id")));
		double wa =
		    json_number_value(json_object_get(json_object_get(a, "counters"), "window_us"));
		double wb =
		    json_number_value(json_object_get(json_object_get(b, "counters"), "window_us"));
		assert_true(wa > 0 && wb > 0);
		if (wa != wb)
			fail_msg("layer %zu: window_us %.1f (UART) vs %.1f (RTT): the builds' "
				 "timed code differs (target/port/an547/port.c stages both)",
				 i, wa, wb);
	}
	json_t *mu = json_object_get(pu, "meta"), *mr = json_object_get(pr, "meta");
	static const char *const keys[] = {"profiled_infer_count", "clean_infer_count",
					   "model_size", "num_presets", "system_clock_hz"};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		json_t *a = json_object_get(mu, keys[k]);
		assert_non_null(a);
		assert_true(json_equal(a, json_object_get(mr, keys[k])));
	}
	/* The network's answer, from the raw logs. */
	char *la = ts_read_file(
	    json_string_value(json_object_get(json_object_get(pu, "capture"), "log")), NULL);
	char *lb = ts_read_file(
	    json_string_value(json_object_get(json_object_get(pr, "capture"), "log")), NULL);
	assert_non_null(la);
	assert_non_null(lb);
	static const char *const answer[] = {"HPX_EXAMPLE_CLASS=", "HPX_EXAMPLE_CHECKSUM="};
	for (size_t k = 0; k < 2; k++) {
		const char *a = strstr(la, answer[k]), *b = strstr(lb, answer[k]);
		assert_non_null(a);
		assert_non_null(b);
		size_t n = strcspn(a, "\n");
		assert_int_equal(n, strcspn(b, "\n"));
		assert_memory_equal(a, b, n);
	}
	free(la);
	free(lb);
	json_t *link = json_object_get(json_object_get(pr, "capture"), "link");
	assert_string_equal(json_string_value(json_object_get(link, "kind")), "rtt_gdb");
	/* Every byte the link drained is in the log, nothing was dropped. */
	assert_int_equal(
	    json_integer_value(json_object_get(link, "bytes")),
	    json_integer_value(json_object_get(json_object_get(pr, "capture"), "bytes")));
	assert_int_equal(json_integer_value(json_object_get(link, "dropped_bytes")), 0);
	assert_int_equal(json_integer_value(json_object_get(link, "target_resets")), 0);
	/* QEMU's gdbstub: the target had to be halted for the reads. */
	assert_true(json_integer_value(json_object_get(link, "halts")) >= 1);
}

static void rtt_through_qemu_gdbstub_matches_uart(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	json_t *uart = uart_run(dir);
	json_t *rtt = rtt_run(dir, "rtt_search", "");
	same_layers(uart, rtt);
	/* The block was found where the symbol table says it is. */
	char *addr = segger_rtt_addr();
	json_t *link =
	    json_object_get(json_object_get(json_object_get(rtt, "profile"), "capture"), "link");
	char *want = ts_strf("0x%08lx", strtoul(addr, NULL, 16));
	assert_string_equal(json_string_value(json_object_get(link, "cb_addr")), want);
	/* Given the address, the same. */
	char *extra = ts_strf(",addr=%s", addr);
	json_t *rtt2 = rtt_run(dir, "rtt_addr", extra);
	same_layers(uart, rtt2);
	json_decref(uart);
	json_decref(rtt);
	json_decref(rtt2);
	free(want);
	free(extra);
	free(addr);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rtt_through_qemu_gdbstub_matches_uart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Lifecycle of the emulated Cortex-M55 (QEMU mps3-an547): "flash" records
 * the ELF, "reset" starts qemu-system-arm on it with UART0 on a unix-socket
 * chardev (server, wait=on: the guest does not run until the host has
 * connected, so no byte is lost), "finish" reaps QEMU. -icount gives
 * instruction-derived time; the firmware ends with a semihosting exit.
 * With stream RTT_GDB (target.transport: rtt), "reset" starts QEMU halted
 * (-S) behind its gdbstub on a loopback port the kernel picks (or the one
 * target.probe gdb://HOST:PORT names) with UART0 discarded, and the
 * endpoint is rtt:gdb=HOST:PORT: the firmware must be the RTT build.
 * No instrument observes an emulated rail: the power stage refuses. */
#include "ergon/lifecycle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ergon_lifecycle {
	char work_dir[1024];
	char elf[1024];
	char sock[1100];
	char log[1100];
	char machine[32];   /* -M */
	char gdb_host[256]; /* RTT_GDB: the gdbstub's host and port */
	unsigned gdb_port;
	int rtt;
	double start_timeout_s;
	int pid;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* True when a unix socket at path is listening. The socket file appears at
 * bind(), before listen(): connecting in between is refused. Read from
 * /proc/net/unix (flag __SO_ACCEPTCON, 0x10000) rather than by connecting,
 * because QEMU (wait=on) starts the guest on its first client. */
static int unix_listening(const char *path)
{
	FILE *f = fopen("/proc/net/unix", "re");
	if (f == NULL)
		return 1; /* cannot tell: fall back to the file's presence */
	char line[1400];
	size_t plen = strlen(path);
	int found = 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		/* "Num: RefCount Protocol Flags Type St Inode Path" */
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		size_t n = strlen(line);
		if (n <= plen || strcmp(line + n - plen, path) != 0 || line[n - plen - 1] != ' ')
			continue;
		char *c = strchr(line, ':');
		if (c == NULL)
			continue;
		char *end = NULL;
		strtoul(c + 1, &end, 16); /* RefCount */
		strtoul(end, &end, 16);	  /* Protocol */
		unsigned long flags = strtoul(end, &end, 16);
		if (flags & 0x10000ul)
			found = 1;
	}
	fclose(f);
	return found;
}

static int q_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "qemu: out of memory");
	snprintf(lc->work_dir, sizeof lc->work_dir, "%s", o->work_dir);
	snprintf(lc->machine, sizeof lc->machine, "%s",
		 o->qemu_machine[0] ? o->qemu_machine : "mps3-an547");
	lc->start_timeout_s = o->start_timeout_s > 0 ? o->start_timeout_s : 10.0;
	lc->rtt = o->stream == ERGON_LC_STREAM_RTT_GDB;
	snprintf(lc->gdb_host, sizeof lc->gdb_host, "127.0.0.1");
	if (lc->rtt && o->gdb_server && o->gdb_server[0]) {
		/* "HOST:PORT", checked by the configuration (target.probe). */
		if (ergon_lifecycle_parse_hostport(o->gdb_server, lc->gdb_host, sizeof lc->gdb_host,
						   &lc->gdb_port) != 0) {
			free(lc);
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "qemu: gdb server '%s': expected HOST:PORT (target.probe: "
			    "gdb://127.0.0.1:1234)",
			    o->gdb_server);
		}
	}
	*out = lc;
	return 0;
}

/* QEMU halted (-S) behind its gdbstub, UART0 discarded; the port is the
 * configured one or the kernel's pick (port 0), read back from /proc. */
static int q_reset_gdb(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	char gdb[300];
	snprintf(gdb, sizeof gdb, "tcp:%s:%u", lc->gdb_host, lc->gdb_port);
	const char *argv[] = {
	    ERGON_QEMU_ARGV(lc->machine), "-serial", "null", "-gdb", gdb, "-S", "-kernel", lc->elf,
	    NULL};
	int rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	if (rc)
		return rc;
	unsigned port = 0;
	if (lc->gdb_port)
		rc = ergon_lifecycle_wait_port(lc->gdb_port, lc->pid, "qemu-system-arm", lc->log,
					       lc->start_timeout_s, err);
	else
		rc = ergon_lifecycle_listen_port(lc->pid, 0, "qemu-system-arm", lc->log,
						 lc->start_timeout_s, &port, err);
	if (rc) {
		if (rc != ERGON_ETIMEDOUT)
			lc->pid = 0; /* reaped by the wait */
		return rc;
	}
	if (!lc->gdb_port)
		lc->gdb_port = port;
	return 0;
}

static int q_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	if (access(image, R_OK) != 0)
		return ergon_err_errno(err, errno, "qemu: cannot read the firmware %s", image);
	if ((size_t)snprintf(lc->elf, sizeof lc->elf, "%s", image) >= sizeof lc->elf)
		return ergon_err_set(err, ERGON_ETOOBIG, "qemu: path too long: %s", image);
	return 0;
}

static int q_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	if (lc->pid > 0)
		ergon_lifecycle_stop(lc->pid, 1.0);
	lc->pid = 0;
	/* A unix socket path is limited to ~108 bytes: keep it short and in
	 * the stage folder when it fits, else under /tmp. */
	int n = snprintf(lc->sock, sizeof lc->sock, "%s/uart0.sock", lc->work_dir);
	if (n < 0 || n >= 100)
		snprintf(lc->sock, sizeof lc->sock, "/tmp/ergon-qemu-%ld.sock", (long)getpid());
	remove(lc->sock);
	snprintf(lc->log, sizeof lc->log, "%s/qemu.log", lc->work_dir);
	if (lc->rtt)
		return q_reset_gdb(lc, err);
	char chardev[1200];
	snprintf(chardev, sizeof chardev, "socket,id=u0,path=%s,server=on,wait=on", lc->sock);
	const char *argv[] = {ERGON_QEMU_ARGV(lc->machine), "-chardev", chardev, "-serial",
			      "chardev:u0", "-kernel", lc->elf, NULL};
	int rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	if (rc)
		return rc;
	/* Wait for QEMU's listening socket (or its early death). */
	double t0 = now_s();
	struct stat st;
	while (stat(lc->sock, &st) != 0 || !unix_listening(lc->sock)) {
		int status;
		if (waitpid((pid_t)lc->pid, &status, WNOHANG) == (pid_t)lc->pid) {
			lc->pid = 0;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return ergon_err_set(err, ERGON_ENOENT,
						     "qemu-system-arm: not found on PATH; install "
						     "qemu-system-arm (Debian package "
						     "qemu-system-arm)");
			return ergon_err_set(err, ERGON_EDEVICE,
					     "qemu-system-arm exited before opening %s; its "
					     "output is in %s",
					     lc->sock, lc->log);
		}
		if (now_s() - t0 > lc->start_timeout_s)
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "qemu-system-arm did not open %s within %.0f s; its "
					     "output is in %s",
					     lc->sock, lc->start_timeout_s, lc->log);
		usleep(20000);
	}
	return 0;
}

static int q_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	if (lc->rtt) {
		/* The block is found by searching the an547's DTCM (the
		 * transport's default range, 0x20000000 + 512 KiB). */
		if ((size_t)snprintf(spec, cap, "rtt:gdb=%s:%u", lc->gdb_host, lc->gdb_port) >= cap)
			return ergon_err_set(err, ERGON_ETOOBIG, "qemu: endpoint too long");
		return 0;
	}
	if ((size_t)snprintf(spec, cap, "unix:%s", lc->sock) >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "qemu: socket path too long");
	return 0;
}

static int q_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	/* The firmware exits through semihosting after its end sentinel; give
	 * it a moment, then stop it. */
	if (lc->pid > 0) {
		double t0 = now_s();
		while (now_s() - t0 < 2.0) {
			if (waitpid((pid_t)lc->pid, NULL, WNOHANG) == (pid_t)lc->pid) {
				lc->pid = 0;
				break;
			}
			usleep(10000);
		}
		ergon_lifecycle_stop(lc->pid, 1.0);
		lc->pid = 0;
	}
	remove(lc->sock);
	return 0;
}

static void q_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	if (lc->pid > 0)
		ergon_lifecycle_stop(lc->pid, 1.0);
	if (lc->sock[0])
		remove(lc->sock);
	free(lc);
}

const struct ergon_lifecycle_driver ergon_lifecycle_qemu = {
    .name = "qemu",
    .hardware = 0,
    .open = q_open,
    .flash = q_flash,
    .reset = q_reset,
    .endpoint = q_endpoint,
    .finish = q_finish,
    .close = q_close,
};

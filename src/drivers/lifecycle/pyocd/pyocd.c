/* Lifecycle through pyOCD's command line (target.probe pyocd[:UID]; pyOCD
 * 0.14 or later, the `pyocd` subcommand tool):
 *   flash    pyocd flash [-u UID] [-t TARGET] IMAGE
 *   reset    pyocd reset [-u UID] [-t TARGET]         (none: no reset)
 *            then, in the background,
 *            pyocd gdbserver [-u UID] [-t TARGET] --port P -O connect_mode=attach
 *            on a free loopback port P (attach: the running target is
 *            neither halted nor reset when the server connects)
 *   endpoint rtt:gdb=127.0.0.1:P (ergon's GDB client drains RTT; non-stop
 *            where the server offers it, else a halt per poll)
 *   finish   stop the gdbserver.
 * TARGET is ERGON_PYOCD_TARGET (pyOCD's target type, `pyocd list
 * --targets`); unset, pyOCD picks it from the probe's board ID. Every
 * command's output is in the stage folder's pyocd.log.
 * Debian bookworm's python3-pyocd (0.13.1) has only the older
 * pyocd-flashtool and pyocd-gdbserver tools, which wait for a probe to be
 * plugged in: ergon does not drive them (start pyocd-gdbserver yourself and
 * give target.probe gdb://127.0.0.1:3333 instead).
 * Not run on hardware or on a real pyOCD: tested against a fake `pyocd`
 * whose gdbserver is a fake GDB server with an RTT target
 * (tests/functional/test_profile_pyocd_bmp.sh). */
#include "ergon/lifecycle.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PYOCD_TOOL_TIMEOUT_S 180.0 /* a flash of a big image over a slow probe */
#define PYOCD_ARGV_MAX 16

struct ergon_lifecycle {
	char log[1100];
	char uid[128];	  /* "" for the only probe */
	char target[128]; /* ERGON_PYOCD_TARGET, "" when unset */
	unsigned port;
	int reset_strategy;
	double start_timeout_s;
	int pid;
	const volatile sig_atomic_t *cancel;
};

static int p_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	const char *probe = o->probe ? o->probe : "";
	if (strncmp(probe, "pyocd", 5) != 0 || (probe[5] != '\0' && probe[5] != ':'))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "pyocd: target.probe '%s' is not pyocd[:UID]", probe);
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "pyocd: out of memory");
	snprintf(lc->log, sizeof lc->log, "%s/pyocd.log", o->work_dir);
	snprintf(lc->uid, sizeof lc->uid, "%s", probe[5] == ':' ? probe + 6 : "");
	const char *t = getenv("ERGON_PYOCD_TARGET");
	snprintf(lc->target, sizeof lc->target, "%s", t ? t : "");
	lc->reset_strategy = o->reset_strategy;
	lc->start_timeout_s = o->start_timeout_s > 0 ? o->start_timeout_s : 10.0;
	lc->cancel = o->cancel;
	*out = lc;
	return 0;
}

/* argv = pyocd SUB [-u UID] [-t TARGET]; returns the count. */
static size_t base_argv(const struct ergon_lifecycle *lc, const char *sub, const char **argv)
{
	size_t n = 0;
	argv[n++] = "pyocd";
	argv[n++] = sub;
	if (lc->uid[0]) {
		argv[n++] = "-u";
		argv[n++] = lc->uid;
	}
	if (lc->target[0]) {
		argv[n++] = "-t";
		argv[n++] = lc->target;
	}
	return n;
}

static int p_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	const char *argv[PYOCD_ARGV_MAX];
	size_t n = base_argv(lc, "flash", argv);
	argv[n++] = image;
	argv[n] = NULL;
	return ergon_lifecycle_run_tool_cancel(argv, lc->log, PYOCD_TOOL_TIMEOUT_S, lc->cancel,
					       err);
}

/* A free loopback port (the kernel's pick, released for the server; the
 * moment between is the only race). */
static int free_port(unsigned *port, struct ergon_err *err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ergon_err_errno(err, errno, "pyocd: socket");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	int rc = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) != 0)
		rc = ergon_err_errno(err, errno, "pyocd: no free loopback port");
	else
		*port = ntohs(a.sin_port);
	close(fd);
	return rc;
}

static int p_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	ergon_lifecycle_stop(lc->pid, 2.0);
	lc->pid = 0;
	const char *argv[PYOCD_ARGV_MAX];
	int rc = 0;
	if (lc->reset_strategy != ERGON_LC_RESET_NONE) {
		size_t n = base_argv(lc, "reset", argv);
		argv[n] = NULL;
		rc = ergon_lifecycle_run_tool_cancel(argv, lc->log, PYOCD_TOOL_TIMEOUT_S,
						     lc->cancel, err);
	}
	if (!rc)
		rc = free_port(&lc->port, err);
	if (rc)
		return rc;
	char port[16];
	snprintf(port, sizeof port, "%u", lc->port);
	size_t n = base_argv(lc, "gdbserver", argv);
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "-O";
	argv[n++] = "connect_mode=attach";
	argv[n] = NULL;
	rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	if (!rc)
		rc = ergon_lifecycle_wait_port(lc->port, lc->pid, "pyocd gdbserver", lc->log,
					       lc->start_timeout_s, err);
	if (rc == ERGON_EDEVICE || rc == ERGON_ENOENT)
		lc->pid = 0; /* reaped by the wait */
	return rc;
}

static int p_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	int n = snprintf(spec, cap, "rtt:gdb=127.0.0.1:%u", lc->port);
	if (lc->port == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "pyocd: no gdbserver before the reset");
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "pyocd: endpoint too long");
	return 0;
}

static int p_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	ergon_lifecycle_stop(lc->pid, 2.0);
	lc->pid = 0;
	return 0;
}

static void p_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	ergon_lifecycle_stop(lc->pid, 2.0);
	free(lc);
}

const struct ergon_lifecycle_driver ergon_lifecycle_pyocd = {
    .name = "pyocd",
    .hardware = 1,
    .open = p_open,
    .flash = p_flash,
    .reset = p_reset,
    .endpoint = p_endpoint,
    .finish = p_finish,
    .close = p_close,
};

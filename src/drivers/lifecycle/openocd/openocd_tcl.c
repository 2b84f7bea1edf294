/* OpenOCD's TCL command interface (see openocd_tcl.h). */
#include "drivers/lifecycle/openocd/openocd_tcl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OCD_TERM '\x1a'
/* The wrapper: the `if` returns what the branch's `set` returns. */
#define OCD_WRAP_HEAD "if {[catch {"
#define OCD_WRAP_TAIL \
	"} ergon_m]} {set ergon_r \"ERR:$ergon_m\"} else {set ergon_r \"OK:$ergon_m\"}"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ergon_ocd_tcl_connect(struct ergon_ocd_tcl *t, unsigned port, double timeout_s,
			  struct ergon_err *err)
{
	t->fd = -1;
	t->port = port;
	double t0 = now_s();
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return ergon_err_errno(err, errno, "openocd: socket");
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
			t->fd = fd;
			return 0;
		}
		int e = errno;
		close(fd);
		if (now_s() - t0 > timeout_s)
			return ergon_err_errno(
			    err, e,
			    "openocd: cannot connect to its TCL port 127.0.0.1:%u "
			    "within %.0f s",
			    port, timeout_s);
		usleep(20000);
	}
}

/* Braces balance and no terminator byte: the command cannot break out of
 * the catch wrapper. */
static int check_cmd(const char *cmd)
{
	long depth = 0;
	for (const char *p = cmd; *p; p++) {
		if (*p == OCD_TERM || *p == '\\')
			return -1;
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth < 0)
			return -1;
	}
	return depth == 0 ? 0 : -1;
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

int ergon_ocd_tcl_cmd(struct ergon_ocd_tcl *t, const char *cmd, char *reply, size_t cap,
		      double timeout_s, struct ergon_err *err)
{
	char *buf = NULL, *wrapped = NULL;
	int rc = 0;
	if (reply && cap)
		reply[0] = '\0';
	if (t->fd < 0)
		return ergon_err_set(err, ERGON_EIO, "openocd: the TCL link is not open");
	if (check_cmd(cmd) != 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "openocd: refusing command '%.200s': unbalanced braces, a "
				     "backslash or a 0x1a byte",
				     cmd);
	size_t n = strlen(OCD_WRAP_HEAD) + strlen(cmd) + strlen(OCD_WRAP_TAIL) + 2;
	wrapped = malloc(n);
	buf = malloc(ERGON_OCD_TCL_REPLY_MAX + 1);
	if (!wrapped || !buf) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "openocd: out of memory");
		goto cleanup;
	}
	int wl = snprintf(wrapped, n, "%s%s%s%c", OCD_WRAP_HEAD, cmd, OCD_WRAP_TAIL, OCD_TERM);
	if (send_all(t->fd, wrapped, (size_t)wl) != 0) {
		rc = ergon_err_errno(err, errno, "openocd: sending '%.200s' on its TCL port %u",
				     cmd, t->port);
		goto cleanup;
	}
	size_t len = 0;
	int too_long = 0;
	double deadline = now_s() + timeout_s;
	for (;;) {
		int ms = (int)((deadline - now_s()) * 1000.0);
		if (ms <= 0) {
			rc = ergon_err_set(err, ERGON_ETIMEDOUT,
					   "openocd: no reply to '%.200s' within %.0f s", cmd,
					   timeout_s);
			goto cleanup;
		}
		struct pollfd p = {.fd = t->fd, .events = POLLIN};
		int pr = poll(&p, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		char chunk[1024];
		ssize_t k = recv(t->fd, chunk, sizeof chunk, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = ergon_err_set(err, ERGON_EIO,
					   "openocd: the TCL link closed during '%.200s' (did "
					   "openocd exit? see its log)",
					   cmd);
			goto cleanup;
		}
		char *term = memchr(chunk, OCD_TERM, (size_t)k);
		size_t take = term ? (size_t)(term - chunk) : (size_t)k;
		if (len + take > ERGON_OCD_TCL_REPLY_MAX)
			too_long = 1;
		else {
			memcpy(buf + len, chunk, take);
			len += take;
		}
		if (term)
			break;
	}
	buf[len] = '\0';
	if (too_long) {
		rc = ergon_err_set(err, ERGON_ETOOBIG,
				   "openocd: the reply to '%.200s' is longer than %d bytes", cmd,
				   ERGON_OCD_TCL_REPLY_MAX);
		goto cleanup;
	}
	const char *body = NULL;
	if (strncmp(buf, "OK:", 3) == 0)
		body = buf + 3;
	else if (strncmp(buf, "ERR:", 4) == 0) {
		rc = ergon_err_set(err, ERGON_EDEVICE, "openocd: '%.200s' failed: %.600s", cmd,
				   buf + 4);
		body = buf + 4;
	} else {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "openocd: unexpected reply to '%.200s': '%.100s' (not an "
				   "OpenOCD TCL port?)",
				   cmd, buf);
	}
	if (body && reply && cap)
		snprintf(reply, cap, "%s", body);
cleanup:
	free(wrapped);
	free(buf);
	return rc;
}

void ergon_ocd_tcl_close(struct ergon_ocd_tcl *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

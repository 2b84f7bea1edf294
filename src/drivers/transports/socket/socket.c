/* tcp:HOST:PORT and unix:PATH: RTT telnet servers (J-Link, OpenOCD) and QEMU
 * character devices. */
#include "../fdio.h"
#include "ergon/transport.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct sock_t {
	struct ergon_transport base;
	int fd;
	char what[300];
};

int ergon_socket_connect_tcp(const char *arg, char *what, size_t what_cap, int *fd_out,
			     struct ergon_err *err);

int ergon_socket_connect_tcp(const char *arg, char *what, size_t what_cap, int *fd_out,
			     struct ergon_err *err)
{
	/* HOST:PORT with the last ':' separating the port ([::1]:19021 too). */
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || !colon[1])
		return ergon_err_set(err, ERGON_EUSAGE,
				     "transport tcp:%s: expected tcp:HOST:PORT, e.g. "
				     "tcp:127.0.0.1:19021",
				     arg);
	char host[256];
	size_t hl = (size_t)(colon - arg);
	if (hl >= sizeof(host))
		return ergon_err_set(err, ERGON_EUSAGE, "transport tcp: host name too long");
	memcpy(host, arg, hl);
	host[hl] = '\0';
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	snprintf(what, what_cap, "tcp:%s", arg);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host, colon + 1, &hints, &res);
	if (g)
		return ergon_err_set(err, ERGON_ENOENT, "%s: cannot resolve: %s", what,
				     gai_strerror(g));
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return ergon_err_errno(err, e,
				       "%s: cannot connect (is the RTT/trace server "
				       "running?)",
				       what);
	*fd_out = fd;
	return 0;
}

static int tcp_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	struct sock_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ergon_err_set(err, ERGON_ENOMEM, "transport tcp: out of memory");
	int rc = ergon_socket_connect_tcp(arg, s->what, sizeof(s->what), &s->fd, err);
	if (rc) {
		free(s);
		return rc;
	}
	*out = &s->base;
	return 0;
}

static int unix_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!*arg || strlen(arg) >= sizeof(sa.sun_path))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "transport unix:%s: expected unix:PATH shorter than %zu bytes",
				     arg, sizeof(sa.sun_path));
	memcpy(sa.sun_path, arg, strlen(arg) + 1);
	struct sock_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ergon_err_set(err, ERGON_ENOMEM, "transport unix: out of memory");
	snprintf(s->what, sizeof(s->what), "unix:%s", arg);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return ergon_err_errno(err, e, "transport unix:%s: cannot connect", arg);
	}
	*out = &s->base;
	return 0;
}

static int sock_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got,
		     struct ergon_err *err)
{
	struct sock_t *s = (struct sock_t *)t;
	return ergon_fd_read(s->fd, s->what, buf, cap, timeout_ms, got, err);
}

static void sock_close(struct ergon_transport *t)
{
	struct sock_t *s = (struct sock_t *)t;
	close(s->fd);
	free(s);
}

const struct ergon_transport_driver ergon_transport_tcp = {
    .name = "tcp",
    .longname = "a TCP byte stream (RTT telnet, OpenOCD rtt server, QEMU chardev)",
    .open = tcp_open,
    .read = sock_read,
    .close = sock_close,
};

const struct ergon_transport_driver ergon_transport_unix = {
    .name = "unix",
    .longname = "a unix-domain stream socket (QEMU chardev)",
    .open = unix_open,
    .read = sock_read,
    .close = sock_close,
};

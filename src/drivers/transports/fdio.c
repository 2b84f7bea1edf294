/* poll + read for the fd-based transports. */
#include "fdio.h"

#include "ergon/transport.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

int ergon_fd_read(int fd, const char *what, void *buf, size_t cap, int timeout_ms, size_t *got,
		  struct ergon_err *err)
{
	*got = 0;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int pr = poll(&pfd, 1, timeout_ms);
	if (pr < 0) {
		if (errno == EINTR)
			return 0;
		return ergon_err_errno(err, errno, "%s: poll", what);
	}
	if (pr == 0)
		return 0;
	ssize_t n = read(fd, buf, cap);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		/* A pty whose other side closed reads EIO: the link ended. */
		if (errno == EIO)
			return ERGON_TRANSPORT_EOF;
		return ergon_err_errno(err, errno, "%s: read", what);
	}
	if (n == 0)
		return ERGON_TRANSPORT_EOF;
	*got = (size_t)n;
	return 0;
}

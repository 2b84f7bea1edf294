/* Shared by the fd-based transports: wait for bytes with poll, read them. */
#ifndef ERGON_TRANSPORT_FDIO_H
#define ERGON_TRANSPORT_FDIO_H

#include "ergon/error.h"

#include <stddef.h>

/* Wait up to timeout_ms for fd to be readable and read at most cap bytes.
 * Returns 0 (*got may be 0 on timeout), ERGON_TRANSPORT_EOF at end of
 * stream, or a negative ERGON_E* naming what. */
int ergon_fd_read(int fd, const char *what, void *buf, size_t cap, int timeout_ms, size_t *got,
		  struct ergon_err *err);

#endif

/* file:PATH and - (stdin): replay a saved log. */
#include "../fdio.h"
#include "ergon/fileio.h"
#include "ergon/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct file_t {
	struct ergon_transport base;
	int fd;
	char path[512];
};

static int file_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	if (!*arg)
		return ergon_err_set(err, ERGON_EUSAGE, "transport file: expected file:PATH");
	struct file_t *f = calloc(1, sizeof(*f));
	if (!f)
		return ergon_err_set(err, ERGON_ENOMEM, "transport file: out of memory");
	snprintf(f->path, sizeof(f->path), "%s", strcmp(arg, "-") == 0 ? "stdin" : arg);
	f->fd = 0;
	/* A file or a pipe; a device is not a log (serial:DEVICE is the
	 * transport for a port), and a FIFO never blocks the open. */
	if (strcmp(arg, "-") != 0) {
		int orc = ergon_open_input(arg, "(transport file:)", ERGON_INPUT_FIFO, &f->fd, err);
		if (orc) {
			free(f);
			return orc;
		}
	}
	*out = &f->base;
	return 0;
}

static int file_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got,
		     struct ergon_err *err)
{
	struct file_t *f = (struct file_t *)t;
	return ergon_fd_read(f->fd, f->path, buf, cap, timeout_ms, got, err);
}

static void file_close(struct ergon_transport *t)
{
	struct file_t *f = (struct file_t *)t;
	if (f->fd > 0)
		close(f->fd);
	free(f);
}

const struct ergon_transport_driver ergon_transport_file = {
    .name = "file",
    .longname = "a saved log file, or - for stdin",
    .open = file_open,
    .read = file_read,
    .close = file_close,
};

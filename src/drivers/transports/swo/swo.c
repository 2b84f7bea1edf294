/* swo:SOURCE: SWO trace bytes (a file, or tcp:HOST:PORT of a trace server
 * such as OpenOCD's `tpiu ... -output :PORT` or J-Link SWO) decoded as ITM,
 * stimulus port 0 only. SWO has no flow control: overflow and malformed
 * packets are counted and the capture is marked diagnostic. */
#include "../fdio.h"
#include "ergon/fileio.h"
#include "ergon/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ergon_socket_connect_tcp(const char *arg, char *what, size_t what_cap, int *fd_out,
			     struct ergon_err *err);

#define RAW_CHUNK 4096

struct swo_t {
	struct ergon_transport base;
	int fd;
	char what[300];
	struct ergon_itm itm;
	unsigned char raw[RAW_CHUNK];
	unsigned long long raw_bytes;
	int raw_fd; /* raw trace copy, -1 when none (not owned) */
};

static int swo_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	if (!*arg)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "transport swo: expected swo:FILE or swo:tcp:HOST:PORT");
	struct swo_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ergon_err_set(err, ERGON_ENOMEM, "transport swo: out of memory");
	s->raw_fd = -1;
	int rc = 0;
	if (strncmp(arg, "tcp:", 4) == 0) {
		rc = ergon_socket_connect_tcp(arg + 4, s->what, sizeof(s->what), &s->fd, err);
	} else {
		snprintf(s->what, sizeof(s->what), "swo:%s", arg);
		rc = ergon_open_input(arg, "(transport swo:)", ERGON_INPUT_FIFO, &s->fd, err);
	}
	if (rc) {
		free(s);
		return rc;
	}
	*out = &s->base;
	return 0;
}

static int swo_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got,
		    struct ergon_err *err)
{
	struct swo_t *s = (struct swo_t *)t;
	*got = 0;
	/* Port-0 payload is at most the raw size; read no more than fits. */
	size_t want = cap < RAW_CHUNK ? cap : RAW_CHUNK;
	size_t n = 0;
	int rc = ergon_fd_read(s->fd, s->what, s->raw, want, timeout_ms, &n, err);
	if (rc)
		return rc;
	s->raw_bytes += n;
	/* The raw trace first: a decoder fault must not lose it. */
	for (size_t off = 0; s->raw_fd >= 0 && off < n;) {
		ssize_t w = write(s->raw_fd, s->raw + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return ergon_err_errno(err, errno, "%s: cannot write the raw trace log",
					       s->what);
		off += (size_t)w;
	}
	*got = ergon_itm_decode(&s->itm, s->raw, n, buf, cap);
	return 0;
}

static json_t *swo_stats(const struct ergon_transport *t)
{
	const struct swo_t *s = (const struct swo_t *)t;
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "source", s->what, "raw_bytes",
			 (json_int_t)s->raw_bytes, "overflow_packets", (json_int_t)s->itm.overflows,
			 "malformed_packets", (json_int_t)s->itm.malformed, "other_port_bytes",
			 (json_int_t)s->itm.other_ports, "syncs", (json_int_t)s->itm.syncs);
}

static bool swo_lossy(const struct ergon_transport *t)
{
	const struct swo_t *s = (const struct swo_t *)t;
	return s->itm.overflows || s->itm.malformed;
}

static int swo_set_raw_sink(struct ergon_transport *t, int fd)
{
	((struct swo_t *)t)->raw_fd = fd;
	return 0;
}

static void swo_close(struct ergon_transport *t)
{
	struct swo_t *s = (struct swo_t *)t;
	close(s->fd);
	free(s);
}

const struct ergon_transport_driver ergon_transport_swo = {
    .name = "swo",
    .longname = "ITM stimulus port 0 from a SWO trace file or tcp:HOST:PORT server",
    .open = swo_open,
    .read = swo_read,
    .stats = swo_stats,
    .lossy = swo_lossy,
    .close = swo_close,
    .set_raw_sink = swo_set_raw_sink,
};

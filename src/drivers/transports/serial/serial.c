/* serial:DEVICE[,BAUD]: UART, J-Link VCOM, USB CDC.
 *
 * libserialport does the port I/O (8N1, no flow control, DTR asserted so
 * USB CDC firmware starts sending). libserialport only accepts device names
 * it can find in sysfs (tty*); pseudo-terminals (/dev/pts/N, e.g. QEMU's
 * `-serial pty`, and the tests' pty pairs) are refused by name, so those are
 * driven through termios directly — same settings, same contract.
 *
 * A serial link never "ends": when the port disappears (a USB CDC target
 * resetting) the driver closes it and retries opening it on every read until
 * it is back; the capture's heartbeat and overall timeouts bound the wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#ifdef ERGON_HAVE_SERIALPORT
#include <libserialport.h>
#endif

#include "../fdio.h"
#include "ergon/transport.h"

#define DEFAULT_BAUD 115200

struct serial_t {
	struct ergon_transport base;
	char dev[256];
	int baud;
#ifdef ERGON_HAVE_SERIALPORT
	struct sp_port *sp;
#endif
	int fd; /* termios path; -1 when closed */
	bool use_termios;
	unsigned long long reconnects;
};

static speed_t baud_const(int baud)
{
	switch (baud) {
	case 9600:
		return B9600;
	case 19200:
		return B19200;
	case 38400:
		return B38400;
	case 57600:
		return B57600;
	case 115200:
		return B115200;
	case 230400:
		return B230400;
	case 460800:
		return B460800;
	case 921600:
		return B921600;
	case 1000000:
		return B1000000;
	case 2000000:
		return B2000000;
	default:
		return 0;
	}
}

static int open_termios(struct serial_t *s, struct ergon_err *err)
{
	int fd = open(s->dev, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno, "serial:%s: cannot open", s->dev);
	struct termios tio;
	if (tcgetattr(fd, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "serial:%s: not a terminal", s->dev);
	}
	cfmakeraw(&tio);
	tio.c_cflag |= CLOCAL | CREAD;
	tio.c_cflag &= (tcflag_t)~CRTSCTS;
	speed_t sp = baud_const(s->baud);
	cfsetispeed(&tio, sp);
	cfsetospeed(&tio, sp);
	if (tcsetattr(fd, TCSANOW, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "serial:%s: cannot configure %d 8N1", s->dev,
				       s->baud);
	}
	/* Assert DTR; a pty has no modem lines (ENOTTY/EINVAL), which is fine. */
	int bits = TIOCM_DTR;
	(void)ioctl(fd, TIOCMBIS, &bits);
	s->fd = fd;
	return 0;
}

#ifdef ERGON_HAVE_SERIALPORT
static int open_sp(struct serial_t *s, struct ergon_err *err)
{
	struct sp_port *p = NULL;
	if (sp_get_port_by_name(s->dev, &p) != SP_OK)
		return ERGON_ENOENT; /* caller decides: termios or missing */
	if (sp_open(p, SP_MODE_READ_WRITE) != SP_OK) {
		int rc = ergon_err_set(err, ERGON_EIO, "serial:%s: cannot open: %s", s->dev,
				       sp_last_error_message());
		sp_free_port(p);
		return rc;
	}
	if (sp_set_baudrate(p, s->baud) != SP_OK || sp_set_bits(p, 8) != SP_OK ||
	    sp_set_parity(p, SP_PARITY_NONE) != SP_OK || sp_set_stopbits(p, 1) != SP_OK ||
	    sp_set_flowcontrol(p, SP_FLOWCONTROL_NONE) != SP_OK) {
		int rc = ergon_err_set(err, ERGON_EIO, "serial:%s: cannot configure %d 8N1: %s",
				       s->dev, s->baud, sp_last_error_message());
		sp_close(p);
		sp_free_port(p);
		return rc;
	}
	(void)sp_set_dtr(p, SP_DTR_ON);
	s->sp = p;
	return 0;
}
#endif

static int do_open(struct serial_t *s, struct ergon_err *err)
{
#ifdef ERGON_HAVE_SERIALPORT
	if (!s->use_termios) {
		int rc = open_sp(s, err);
		if (rc != ERGON_ENOENT)
			return rc;
		/* Not a device libserialport knows by name (a pty): termios. */
		if (access(s->dev, F_OK) != 0)
			return ergon_err_errno(err, errno, "serial:%s: cannot open", s->dev);
		s->use_termios = true;
	}
#else
	s->use_termios = true;
#endif
	return open_termios(s, err);
}

static int serial_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	struct serial_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ergon_err_set(err, ERGON_ENOMEM, "serial: out of memory");
	s->fd = -1;
	s->baud = DEFAULT_BAUD;
	const char *comma = strchr(arg, ',');
	size_t dl = comma ? (size_t)(comma - arg) : strlen(arg);
	if (dl == 0 || dl >= sizeof(s->dev)) {
		free(s);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "serial:%s: expected serial:DEVICE[,BAUD], e.g. "
				     "serial:/dev/ttyACM0,115200",
				     arg);
	}
	memcpy(s->dev, arg, dl);
	s->dev[dl] = '\0';
	if (comma) {
		long b = 0;
		const char *c = comma + 1;
		for (; *c >= '0' && *c <= '9' && b < 100000000; c++)
			b = b * 10 + (*c - '0');
		if (*c || !baud_const((int)b)) {
			free(s);
			return ergon_err_set(err, ERGON_EUSAGE,
					     "serial:%s: baud '%s' is not a standard rate (9600 .. "
					     "2000000)",
					     arg, comma + 1);
		}
		s->baud = (int)b;
	}
	int rc = do_open(s, err);
	if (rc) {
		free(s);
		return rc;
	}
	*out = &s->base;
	return 0;
}

static void close_port(struct serial_t *s)
{
#ifdef ERGON_HAVE_SERIALPORT
	if (s->sp) {
		sp_close(s->sp);
		sp_free_port(s->sp);
		s->sp = NULL;
	}
#endif
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}

static bool is_open(const struct serial_t *s)
{
#ifdef ERGON_HAVE_SERIALPORT
	if (s->sp)
		return true;
#endif
	return s->fd >= 0;
}

static void nap_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int serial_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms,
		       size_t *got, struct ergon_err *err)
{
	struct serial_t *s = (struct serial_t *)t;
	*got = 0;
	if (!is_open(s)) {
		struct ergon_err quiet = {0};
		if (do_open(s, &quiet) != 0) {
			/* Still gone (target resetting): wait, report no bytes. */
			nap_ms(timeout_ms < 100 ? timeout_ms : 100);
			return 0;
		}
		s->reconnects++;
	}
#ifdef ERGON_HAVE_SERIALPORT
	if (s->sp) {
		int n =
		    sp_blocking_read(s->sp, buf, cap, (unsigned)(timeout_ms > 0 ? timeout_ms : 1));
		if (n < 0) {
			close_port(s);
			return 0;
		}
		*got = (size_t)n;
		return 0;
	}
#endif
	struct ergon_err e2 = {0};
	int rc = ergon_fd_read(s->fd, s->dev, buf, cap, timeout_ms, got, &e2);
	if (rc == ERGON_TRANSPORT_EOF || rc < 0) {
		/* The other end went away: close, and reopen on a later read. */
		close_port(s);
		return 0;
	}
	(void)err;
	return 0;
}

static json_t *serial_stats(const struct ergon_transport *t)
{
	const struct serial_t *s = (const struct serial_t *)t;
	return json_pack("{s:s, s:i, s:s, s:I}", "device", s->dev, "baud", s->baud, "backend",
			 s->use_termios ? "termios" : "libserialport", "reconnects",
			 (json_int_t)s->reconnects);
}

static void serial_close(struct ergon_transport *t)
{
	struct serial_t *s = (struct serial_t *)t;
	close_port(s);
	free(s);
}

const struct ergon_transport_driver ergon_transport_serial = {
    .name = "serial",
    .longname = "a serial port (UART, J-Link VCOM, USB CDC; DTR asserted)",
    .open = serial_open,
    .read = serial_read,
    .stats = serial_stats,
    .close = serial_close,
};

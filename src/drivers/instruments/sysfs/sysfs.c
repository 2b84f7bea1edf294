/* sysfs attribute reading: bounded integer parsing and pread on open
 * descriptors (see sysfs.h). */
#include "sysfs.h"

#include "ergon/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A sysfs integer attribute is at most 21 characters plus newline; anything
 * longer is not a number we read. */
#define SYSFS_VALUE_MAX 64

static int is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

int ergon_sysfs_parse_i64(const char *buf, size_t len, int64_t *out, size_t *stop)
{
	size_t i = 0;
	int neg = 0;
	uint64_t mag = 0;
	/* The magnitude limit: INT64_MAX, or one more for a negative value. */
	uint64_t limit = (uint64_t)INT64_MAX;
	*stop = 0;
	if (i < len && buf[i] == '-') {
		neg = 1;
		limit += 1;
		i++;
	}
	size_t first_digit = i;
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		uint64_t d = (uint64_t)(buf[i] - '0');
		if (mag > (limit - d) / 10) {
			*stop = i;
			return ERGON_ERANGE;
		}
		mag = mag * 10 + d;
	}
	if (i == first_digit) {
		*stop = i;
		return ERGON_EPARSE;
	}
	for (; i < len; i++)
		if (!is_space(buf[i])) {
			*stop = i;
			return ERGON_EPARSE;
		}
	*stop = i;
	if (neg)
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		*out = (int64_t)mag;
	return 0;
}

/* Quote at most 24 bytes of what the file held, unprintable bytes as '?'. */
static void quote(const char *buf, size_t len, char *q, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < cap && i < 24; i++) {
		char c = buf[i];
		q[o++] = (c >= 0x20 && c < 0x7f) ? c : (c == '\n' ? ' ' : '?');
	}
	while (o > 0 && q[o - 1] == ' ')
		o--;
	q[o] = '\0';
}

int ergon_sysfs_read_i64(int fd, const char *path, int64_t *out, struct ergon_err *err)
{
	char buf[SYSFS_VALUE_MAX];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);
	if (r < 0) {
		int e = errno;
		return ergon_err_errno(err, e,
				       "%s: read failed (the device may have gone away or the "
				       "driver reported an error); check `dmesg` and that the "
				       "device is still bound",
				       path);
	}
	if (r == 0)
		return ergon_err_set(err, ERGON_EIO,
				     "%s: the attribute returned no data; the device or its "
				     "driver has gone away mid-run (check `dmesg`)",
				     path);
	if ((size_t)r == sizeof(buf))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: more than %d bytes; this is not a sysfs integer "
				     "attribute (check --sysfs-root and the rail)",
				     path, SYSFS_VALUE_MAX - 1);
	size_t stop;
	int rc = ergon_sysfs_parse_i64(buf, (size_t)r, out, &stop);
	if (rc) {
		char q[32];
		quote(buf, (size_t)r, q, sizeof(q));
		return ergon_err_set(err, rc,
				     "%s: column %zu: expected an integer as the kernel ABI "
				     "prints it, found \"%s\"%s; fix the file or the tree that "
				     "provides it",
				     path, stop + 1, q,
				     rc == ERGON_ERANGE ? " (out of the 64-bit range)" : "");
	}
	return 0;
}

/* Attributes are opened O_NONBLOCK: a --sysfs-root tree is user input, and
 * a FIFO planted where an attribute should be must not hang discovery (a
 * FIFO without a writer then reads as empty). Regular files ignore it. */
int ergon_sysfs_open(const char *path, int *fd, struct ergon_err *err)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0) {
		int e = errno;
		*fd = -1;
		return ergon_err_errno(err, e, "%s: cannot open", path);
	}
	return 0;
}

int ergon_sysfs_read_text(const char *path, char *buf, size_t cap, struct ergon_err *err)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return ERGON_ENOENT;
		return ergon_err_errno(err, e, "%s: cannot open", path);
	}
	ssize_t r = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (r < 0)
		return ergon_err_errno(err, e, "%s: cannot read", path);
	size_t n = (size_t)r;
	while (n > 0 && is_space(buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}

const char *ergon_sysfs_root(const struct ergon_instrument_options *opts)
{
	const char *r = opts ? opts->sysfs_root : NULL;
	if (r == NULL || r[0] == '\0')
		r = getenv("ERGON_SYSFS_ROOT");
	if (r == NULL || strcmp(r, "/") == 0)
		return "";
	return r;
}

int ergon_sysfs_path(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap)
		return ERGON_ETOOBIG;
	return 0;
}

double ergon_sysfs_now_s(void)
{
	return ergon_clock_now_s();
}

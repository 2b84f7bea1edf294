/* Reading Linux sysfs attributes: one integer per file, read with pread on
 * a descriptor kept open, parsed with a bounded cursor. Shared by the
 * hwmon, rapl and thermal readers. Private to libergon. */
#ifndef ERGON_DRIVERS_SYSFS_H
#define ERGON_DRIVERS_SYSFS_H

#include "ergon/error.h"
#include "ergon/instrument.h"

#include <stddef.h>
#include <stdint.h>

/* Longest path we build under a sysfs root. */
#define ERGON_SYSFS_PATH_MAX 512

/* Parse one sysfs integer as the kernel prints it ("%d\n", "%llu\n"):
 * an optional '-', decimal digits, then only whitespace up to len. On
 * success *out holds the value. Returns 0, ERGON_EPARSE (*stop: offset of
 * the first offending byte) or ERGON_ERANGE (does not fit an int64). */
int ergon_sysfs_parse_i64(const char *buf, size_t len, int64_t *out, size_t *stop);

/* pread the attribute behind fd from offset 0 and parse it. path is only
 * used in the error message, which names the file and quotes what it held. */
int ergon_sysfs_read_i64(int fd, const char *path, int64_t *out, struct ergon_err *err);

/* Open an attribute read-only for the whole run. A permission error names
 * the file; the caller adds the remedy that fits its device. */
int ergon_sysfs_open(const char *path, int *fd, struct ergon_err *err);

/* Read a short text attribute (name, label, type) into buf, without the
 * trailing newline. Returns ERGON_ENOENT quietly when absent (no message). */
int ergon_sysfs_read_text(const char *path, char *buf, size_t cap, struct ergon_err *err);

/* The sysfs root: opts->sysfs_root, else $ERGON_SYSFS_ROOT, else "" (the
 * real "/"); never NULL. Paths are built as root + "/sys/...". */
const char *ergon_sysfs_root(const struct ergon_instrument_options *opts);

/* snprintf into a path buffer; ERGON_ETOOBIG if it does not fit. */
int ergon_sysfs_path(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The measuring clock in seconds (ergon/clock.h: CLOCK_MONOTONIC unless a
 * simulated clock is installed), for sample timestamps. */
double ergon_sysfs_now_s(void);

#endif

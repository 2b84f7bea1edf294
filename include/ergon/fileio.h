/* Atomic artifact output and bounded file input.
 *
 * Artifacts are written to a temporary file in the destination's folder,
 * flushed, and then moved into place, so a reader never sees half a report
 * and a crash never destroys an earlier one. An existing file is never
 * replaced unless ERGON_WRITE_FORCE is given.
 */
#ifndef ERGON_FILEIO_H
#define ERGON_FILEIO_H

#include <stddef.h>

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_write_flags {
	ERGON_WRITE_FORCE = 1 << 0, /* replace an existing file */
	ERGON_WRITE_MKDIR = 1 << 1, /* create missing parent folders */
	ERGON_WRITE_PRIVATE = 1 << 2, /* mode 0600: only the owner reads it (secret keys) */
};

/* Write len bytes to path atomically (temp file, fsync, rename or link). */
ERGON_API int ergon_file_write_atomic(const char *path, const void *data, size_t len,
				      unsigned flags, struct ergon_err *err);
/* 1 when the file open as fd is still the one named path (nobody unlinked
 * or replaced it between an open and a flock), else 0. */
ERGON_API int ergon_fd_is_path(int fd, const char *path);


/* 0 when path does not exist or is a regular file (what --force may
 * replace); otherwise an ERGON_EEXIST error naming what it is (a device
 * node, a FIFO, a socket, a folder, a symbolic link). */
ERGON_API int ergon_path_replaceable(const char *path, struct ergon_err *err);

/* Check, before any measuring starts, that path can be written: its folder
 * exists (or can be created with ERGON_WRITE_MKDIR) and is writable, and the
 * file does not exist unless ERGON_WRITE_FORCE, and then only as a regular
 * file (ergon_path_replaceable). Creates nothing else. */
ERGON_API int ergon_file_check_writable(const char *path, unsigned flags,
					struct ergon_err *err);

enum ergon_input_flags {
	ERGON_INPUT_FIFO = 1 << 0, /* a FIFO or pipe is accepted (read as a stream) */
};

/* Open path (what names it in a message, e.g. "the log"; may be NULL) for
 * reading without ever blocking in open() (a FIFO with no
 * writer then reads as empty): a regular file, or with ERGON_INPUT_FIFO a
 * FIFO; anything else (a device such as /dev/zero, a socket, a folder) is
 * refused with ERGON_EUSAGE naming what it is. *fd_out is blocking again
 * for reads (caller closes). */
ERGON_API int ergon_open_input(const char *path, const char *what, unsigned flags, int *fd_out,
			       struct ergon_err *err);

/* Read a whole file of at most max_len bytes (ergon_open_input with
 * ERGON_INPUT_FIFO: a pipe is read up to max_len, a device is refused). *data is malloc'd with a NUL
 * after the last byte (caller frees). */
ERGON_API int ergon_file_read_all(const char *path, size_t max_len, char **data, size_t *len,
				  struct ergon_err *err);
/* The same into *buf (malloc'd, *cap bytes plus one; NULL and 0 at
 * first), grown as needed and kept by the caller for the next file, so
 * that reading many files allocates once. The caller frees *buf. */
ERGON_API int ergon_file_read_reuse(const char *path, size_t max_len, char **buf, size_t *cap,
				    size_t *len, struct ergon_err *err);

/* The folder of path into dir (cap bytes; "." without a slash, "/" for a
 * file in the root) and *base pointing at its last component in path. */
ERGON_API void ergon_path_split(const char *path, char *dir, size_t cap, const char **base);

/* mkdir -p. */
ERGON_API int ergon_mkdir_p(const char *path, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

/* Atomic file output (temp + fsync + rename/link) and bounded file input. */
#include "ergon/fileio.h"

#include "ergon/reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void ergon_path_split(const char *path, char *dir, size_t cap, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL) {
		snprintf(dir, cap, ".");
		*base = path;
	} else if (slash == path) {
		snprintf(dir, cap, "/");
		*base = slash + 1;
	} else {
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
		*base = slash + 1;
	}
}

static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *base;
	ergon_path_split(path, dir, cap, &base);
}

int ergon_mkdir_p(const char *path, struct ergon_err *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: path too long", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return ergon_err_errno(err, errno, "%s: cannot create folder", buf);
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return ergon_err_errno(err, errno, "%s: cannot create folder", buf);
	return 0;
}

/* Attempts at a temporary file whose name another process removed between
 * our open and our flock. */
#define TMP_RETRIES 8

int ergon_fd_is_path(int fd, const char *path)
{
	struct stat a, b;
	if (fstat(fd, &a) != 0 || stat(path, &b) != 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int ergon_tmp_create_locked(const char *dir, char *tmp, size_t cap, int *fd_out)
{
	*fd_out = -1;
	int last = -EAGAIN;
	for (int attempt = 0; attempt < TMP_RETRIES; attempt++) {
		if (snprintf(tmp, cap, "%s/" ERGON_RESERVE_TMP_PREFIX "XXXXXX", dir) >= (int)cap)
			return -ENAMETOOLONG;
		int fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* A scan in another process may have locked and removed the
		 * file between mkostemp and flock: then take a new name. */
		if (flock(fd, LOCK_EX) != 0) {
			/* Not locked, a stale-file scan would take it for a
			 * leftover: remove it and try a new name. */
			last = -errno;
			unlink(tmp);
			close(fd);
			continue;
		}
		if (ergon_fd_is_path(fd, tmp)) {
			*fd_out = fd;
			return 0;
		}
		close(fd);
	}
	return last;
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a folder";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO (named pipe)";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

int ergon_path_replaceable(const char *path, struct ergon_err *err)
{
	struct stat st;
	/* lstat: a link is judged as itself, since rename() would replace
	 * the link, and a link to a device names the device. */
	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return 0;
	return ergon_err_set(err, ERGON_EEXIST,
			     "%s: is %s; --force replaces only regular files (choose another "
			     "output path)",
			     path, file_kind(st.st_mode));
}

int ergon_file_check_writable(const char *path, unsigned flags, struct ergon_err *err)
{
	char dir[PATH_MAX];
	struct stat st;
	if (path == NULL || path[0] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE, "empty output path");
	if (lstat(path, &st) == 0) {
		struct stat target;
		if (stat(path, &target) == 0 && S_ISDIR(target.st_mode))
			return ergon_err_set(err, ERGON_EEXIST,
					     "%s: is a folder; give a file name for the output",
					     path);
		if (!(flags & ERGON_WRITE_FORCE))
			return ergon_err_set(
			    err, ERGON_EEXIST,
			    "%s: already exists; choose another path or pass --force "
			    "to replace it",
			    path);
		int rc = ergon_path_replaceable(path, err);
		if (rc)
			return rc;
	}
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st) != 0) {
		if (errno == ENOENT && (flags & ERGON_WRITE_MKDIR))
			return ergon_mkdir_p(dir, err);
		if (errno == ENOENT)
			return ergon_err_set(err, ERGON_ENOENT,
					     "%s: the output folder %s does not exist; create it "
					     "(mkdir -p %s) or choose another output path",
					     path, dir, dir);
		return ergon_err_errno(err, errno, "%s: output folder %s is not usable", path, dir);
	}
	if (!S_ISDIR(st.st_mode))
		return ergon_err_set(err, ERGON_ENOENT, "%s: %s is not a folder", path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return ergon_err_errno(err, errno,
				       "%s: cannot write into folder %s (check its permissions or "
				       "choose another --out)",
				       path, dir);
	return 0;
}

int ergon_file_write_atomic(const char *path, const void *data, size_t len, unsigned flags,
			    struct ergon_err *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	int fd = -1, rc = 0;
	rc = ergon_file_check_writable(path, flags, err);
	if (rc)
		return rc;
	dir_of(path, dir, sizeof(dir));
	/* Locked while it lives, so a stale-file scan (--clean) leaves it. */
	int e = ergon_tmp_create_locked(dir, tmp, sizeof(tmp), &fd);
	if (e)
		return ergon_err_errno(err, -e, "%s: cannot create a temporary file in %s", path,
				       dir);
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = ergon_err_errno(err, errno, "%s: write failed", tmp);
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	if (fchmod(fd, (flags & ERGON_WRITE_PRIVATE) ? 0600 : 0644) != 0 || fsync(fd) != 0) {
		rc = ergon_err_errno(err, errno, "%s: flush failed", tmp);
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = ergon_err_errno(err, errno, "%s: close failed", tmp);
		goto fail;
	}
	fd = -1;
	if (flags & ERGON_WRITE_FORCE) {
		/* Checked again: a device node may have appeared since. */
		rc = ergon_path_replaceable(path, err);
		if (rc)
			goto fail;
		if (rename(tmp, path) != 0) {
			rc = ergon_err_errno(err, errno, "%s: cannot move the new file into place",
					     path);
			goto fail;
		}
	} else {
		/* link() refuses to replace: a file that appeared since the check
		 * is not overwritten. */
		if (link(tmp, path) != 0) {
			int e = errno;
			if (e == EEXIST)
				rc =
				    ergon_err_set(err, ERGON_EEXIST,
						  "%s: already exists; choose another path or pass "
						  "--force to replace it",
						  path);
			else
				rc = ergon_err_errno(err, e, "%s: cannot create", path);
			goto fail;
		}
		unlink(tmp);
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}

int ergon_open_input(const char *path, const char *what, unsigned flags, int *fd_out,
		     struct ergon_err *err)
{
	*fd_out = -1;
	const char *sp = what ? " " : "";
	what = what ? what : "";
	/* O_NONBLOCK: opening a FIFO that has no writer returns at once
	 * instead of waiting for one (it then reads as empty). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return ergon_err_errno(err, errno, "%s: cannot open%s%s", path, sp, what);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: cannot open%s%s", path, sp, what);
	}
	int ok = S_ISREG(st.st_mode) || (S_ISFIFO(st.st_mode) && (flags & ERGON_INPUT_FIFO));
	if (!ok) {
		close(fd);
		return ergon_err_set(err, ERGON_EUSAGE, "%s: is %s; give a regular file%s", path,
				     file_kind(st.st_mode),
				     (flags & ERGON_INPUT_FIFO) ? " (or a pipe)" : "");
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: cannot open%s%s", path, sp, what);
	}
	*fd_out = fd;
	return 0;
}

int ergon_file_read_reuse(const char *path, size_t max_len, char **buf, size_t *cap_io, size_t *len,
			  struct ergon_err *err)
{
	*len = 0;
	int fd;
	/* A pipe is read up to max_len like a file; a device (/dev/zero) or a
	 * folder is refused: it is not a document. */
	int orc = ergon_open_input(path, NULL, ERGON_INPUT_FIFO, &fd, err);
	if (orc)
		return orc;
	size_t want = 65536, n = 0;
	/* A regular file's size is known: one buffer of that size (plus one
	 * byte to see the end), no growth by copies. A file that grows while
	 * it is read still grows the buffer below. */
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (uint64_t)st.st_size < max_len)
		want = (size_t)st.st_size + 1;
	int rc = 0;
	size_t cap = *cap_io;
	if (*buf == NULL || cap < want) {
		char *nb = realloc(*buf, want + 1);
		if (nb == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
			goto out;
		}
		*buf = nb;
		cap = *cap_io = want;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= max_len) {
				rc = ergon_err_set(err, ERGON_ETOOBIG,
						   "%s: larger than the %zu-byte limit", path,
						   max_len);
				goto out;
			}
			size_t ncap = cap * 2 > max_len ? max_len : cap * 2;
			char *nb = realloc(*buf, ncap + 1);
			if (nb == NULL) {
				rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
				goto out;
			}
			*buf = nb;
			cap = *cap_io = ncap;
		}
		ssize_t r = read(fd, *buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = ergon_err_errno(err, errno, "%s: read failed", path);
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	(*buf)[n] = '\0';
	*len = n;
out:
	close(fd);
	return rc;
}

int ergon_file_read_all(const char *path, size_t max_len, char **data, size_t *len,
			struct ergon_err *err)
{
	char *buf = NULL;
	size_t cap = 0;
	*data = NULL;
	int rc = ergon_file_read_reuse(path, max_len, &buf, &cap, len, err);
	if (rc)
		free(buf);
	else
		*data = buf;
	return rc;
}

/* Output reservation before measuring, commit with a rescue path, and the
 * stale temporary-file scan (see include/ergon/reserve.h). */
#include "ergon/reserve.h"

#include "ergon/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Attempts at a lock or temporary file whose name another process removed
 * between our open and our flock (see lock_open). */
#define RESERVE_RETRIES 8

/* The file open as fd is still the one named path (ergon_fd_is_path). */
static int same_file(int fd, const char *path)
{
	return ergon_fd_is_path(fd, path);
}

int ergon_fd_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void read_pid(int fd, char *out, size_t cap)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	size_t k = 0;
	while (n > 0 && k < (size_t)n && buf[k] >= '0' && buf[k] <= '9')
		k++;
	if (k == 0)
		snprintf(out, cap, "another ergon run");
	else
		snprintf(out, cap, "another ergon run (pid %.*s)", (int)k, buf);
}

/* Take the lock on slot->lock: flock, then check that the name still
 * points at the locked file (a releasing holder unlinks it). */
static int lock_open(struct ergon_out_slot *s, struct ergon_err *err)
{
	for (int attempt = 0; attempt < RESERVE_RETRIES; attempt++) {
		int fd = open(s->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return ergon_err_errno(
			    err, errno,
			    "%s: cannot create the lock file %s before measuring "
			    "(choose another --out)",
			    s->path, s->lock);
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int e = errno;
			if (e == EWOULDBLOCK) {
				char who[64];
				read_pid(fd, who, sizeof(who));
				close(fd);
				return ergon_err_set(err, ERGON_EREFUSED,
						     "%s: %s is writing this output (lock %s); "
						     "wait for it to finish or choose another "
						     "--out. Nothing was measured",
						     s->path, who, s->lock);
			}
			close(fd);
			return ergon_err_errno(err, e, "%s: cannot lock %s", s->path, s->lock);
		}
		if (same_file(fd, s->lock)) {
			char pid[32];
			int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
			if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) == n) {
				s->lock_fd = fd;
				return 0;
			}
			int e = errno;
			unlink(s->lock);
			close(fd);
			return ergon_err_errno(err, e, "%s: cannot write the lock file %s", s->path,
					       s->lock);
		}
		close(fd);
	}
	return ergon_err_set(err, ERGON_EREFUSED,
			     "%s: the lock file %s keeps changing under us (another ergon on the "
			     "same output?); choose another --out",
			     s->path, s->lock);
}

static void slot_zero(struct ergon_out_slot *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->lock_fd = -1;
}

int ergon_out_reserve(struct ergon_out_slot *s, const char *path, size_t estimate_bytes,
		      unsigned flags, struct ergon_err *err)
{
	char dir[PATH_MAX];
	const char *base;
	slot_zero(s);
	if (path == NULL || path[0] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE, "empty output path");
	if (snprintf(s->path, sizeof(s->path), "%s", path) >= (int)sizeof(s->path))
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: path too long", path);
	s->flags = flags;
	int rc = ergon_file_check_writable(path, flags, err);
	if (rc)
		return rc;
	ergon_path_split(path, dir, sizeof(dir), &base);
	if (base[0] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE, "%s: give a file name for the output",
				     path);
	if (snprintf(s->lock, sizeof(s->lock), "%s/.%s.ergon-lock", dir, base) >=
	    (int)sizeof(s->lock))
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: path too long", path);
	rc = lock_open(s, err);
	if (rc)
		return rc;
	int e = ergon_tmp_create_locked(dir, s->tmp, sizeof(s->tmp), &s->fd);
	if (e) {
		s->tmp[0] = '\0';
		rc = ergon_err_errno(err, -e,
				     "%s: cannot create a temporary file in %s before measuring "
				     "(check the folder's permissions or choose another --out)",
				     path, dir);
		goto fail;
	}
	size_t want = estimate_bytes;
	if (want < 4096)
		want = 4096;
	if (want > ERGON_RESERVE_MAX_BYTES)
		want = ERGON_RESERVE_MAX_BYTES;
	/* posix_fallocate returns the error number; it does not set errno. */
	e = posix_fallocate(s->fd, 0, (off_t)want);
	if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) {
		/* A file system that cannot preallocate (some FUSE and network
		 * ones): the lock and the temporary file still hold, the space
		 * is not guaranteed; the commit's rescue path covers the rest. */
		s->reserved_bytes = 0;
		return 0;
	}
	if (e != 0) {
		rc = ergon_err_errno(err, e,
				     "%s: cannot reserve %zu bytes for the output in %s before "
				     "measuring (free space there or choose another --out)",
				     path, want, dir);
		goto fail;
	}
	s->reserved_bytes = want;
	return 0;
fail:
	ergon_out_release(s);
	return rc;
}

/* Move the flushed temporary file to dst: rename over an existing file with
 * FORCE, otherwise link() (which refuses to replace) and unlink. */
static int place(const char *tmp, const char *dst, int force)
{
	if (force)
		return rename(tmp, dst) == 0 ? 0 : -errno;
	if (link(tmp, dst) != 0)
		return -errno;
	unlink(tmp);
	return 0;
}

static int flush_fd(int fd)
{
	if (fchmod(fd, 0644) != 0 || fsync(fd) != 0)
		return -errno;
	return 0;
}

struct buf_emit {
	const void *data;
	size_t len;
};

static int emit_buf(void *ctx, int fd)
{
	const struct buf_emit *b = ctx;
	return ergon_fd_write_all(fd, b->data, b->len);
}

int ergon_out_commit(struct ergon_out_slot *s, const void *data, size_t len, struct ergon_err *err)
{
	char why[ERGON_ERR_MSG_MAX / 2];
	int e = 0;
	const char *step = "write";
	if (s->fd < 0)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: no reservation to commit", s->path);
	if (lseek(s->fd, 0, SEEK_SET) != 0) {
		e = -errno;
		goto rescue;
	}
	e = ergon_fd_write_all(s->fd, data, len);
	if (e)
		goto rescue;
	step = "truncate";
	if (ftruncate(s->fd, (off_t)len) != 0) {
		e = -errno;
		goto rescue;
	}
	step = "flush";
	e = flush_fd(s->fd);
	if (e)
		goto rescue;
	step = "move into place";
	if (s->flags & ERGON_WRITE_FORCE) {
		/* Checked before measuring; a device node, FIFO or socket that
		 * appeared since is never replaced either. */
		struct ergon_err perr = {0};
		if (ergon_path_replaceable(s->path, &perr) != 0) {
			snprintf(why, sizeof(why), "%.400s", perr.msg);
			e = -EEXIST;
			goto rescue_why;
		}
	}
	e = place(s->tmp, s->path, (s->flags & ERGON_WRITE_FORCE) != 0);
	if (e)
		goto rescue;
	close(s->fd);
	s->fd = -1;
	s->tmp[0] = '\0';
	s->committed = 1;
	return 0;
rescue:
	if (e == -EEXIST)
		snprintf(why, sizeof(why),
			 "%.300s appeared while measuring (pass --force to replace it)", s->path);
	else
		snprintf(why, sizeof(why), "%s of %.300s failed: %.120s", step, s->tmp,
			 strerror(-e));
rescue_why:;
	struct buf_emit b = {data, len};
	struct ergon_err rerr = {0};
	if (ergon_out_rescue(s, emit_buf, &b, &rerr) == 0)
		return ergon_err_set(err, ergon_err_from_errno(-e),
				     "%s: %s; the measurement is kept in %s", s->path, why,
				     s->kept_path);
	return ergon_err_set(err, ergon_err_from_errno(-e),
			     "%s: %s; keeping the measurement elsewhere failed too (%s)", s->path,
			     why, rerr.msg);
}

/* emit into fd from its start, cut the file there and flush it. */
static int emit_into(int fd, ergon_out_emit_fn emit, void *ctx)
{
	if (lseek(fd, 0, SEEK_SET) != 0)
		return -errno;
	int e = emit(ctx, fd);
	if (e)
		return e;
	off_t end = lseek(fd, 0, SEEK_CUR);
	if (end < 0 || ftruncate(fd, end) != 0)
		return -errno;
	return flush_fd(fd);
}

/* emit into a file just created as fd (fd < 0: its creation failed, errno
 * says why) named path; on success it becomes the kept path, on failure it
 * is removed. Returns 0 or a negative errno. */
static int emit_new(struct ergon_out_slot *s, int fd, const char *path, ergon_out_emit_fn emit,
		    void *ctx)
{
	if (fd < 0)
		return -errno;
	int e = emit_into(fd, emit, ctx);
	if (close(fd) != 0 && e == 0)
		e = -errno;
	if (e) {
		unlink(path);
		return e;
	}
	snprintf(s->kept_path, sizeof(s->kept_path), "%s", path);
	return 0;
}

int ergon_out_rescue(struct ergon_out_slot *s, ergon_out_emit_fn emit, void *ctx,
		     struct ergon_err *err)
{
	char partial[PATH_MAX];
	int e = -ENAMETOOLONG, tmp_holds_data = 0;
	s->kept_path[0] = '\0';
	int have_partial =
	    snprintf(partial, sizeof(partial), "%s.partial", s->path) < (int)sizeof(partial);
	/* 1. The reserved space: it was claimed before measuring. */
	if (s->fd >= 0 && s->tmp[0]) {
		e = emit_into(s->fd, emit, ctx);
		if (e == 0) {
			tmp_holds_data = 1;
			if (have_partial && place(s->tmp, partial, 0) == 0) {
				snprintf(s->kept_path, sizeof(s->kept_path), "%s", partial);
				close(s->fd);
				s->fd = -1;
				s->tmp[0] = '\0';
				return 0;
			}
		}
	}
	/* 2. A new OUT.partial beside the output. */
	if (have_partial) {
		e = emit_new(s, open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644),
			     partial, emit, ctx);
		if (e == 0)
			return 0;
	}
	/* 3. The temporary folder. */
	const char *tdir = getenv("TMPDIR");
	char fb[PATH_MAX];
	if (tdir == NULL || tdir[0] == '\0')
		tdir = "/tmp";
	if (snprintf(fb, sizeof(fb), "%s/ergon-rescue-XXXXXX", tdir) < (int)sizeof(fb)) {
		e = emit_new(s, mkostemp(fb, O_CLOEXEC), fb, emit, ctx);
		if (e == 0)
			return 0;
	}
	/* 4. The reserved file itself, when it got the data but could not be
	 * renamed: keep it (release will not remove it). */
	if (tmp_holds_data) {
		snprintf(s->kept_path, sizeof(s->kept_path), "%s", s->tmp);
		close(s->fd);
		s->fd = -1;
		s->tmp[0] = '\0';
		return 0;
	}
	return ergon_err_errno(err, e < 0 ? -e : EIO,
			       "%s: could not write the measurement to the reservation, %s or "
			       "%s/ergon-rescue-*",
			       s->path, have_partial ? partial : "OUT.partial", tdir);
}

void ergon_out_free_space(struct ergon_out_slot *s)
{
	if (s == NULL || s->fd < 0)
		return;
	if (s->tmp[0])
		unlink(s->tmp);
	close(s->fd);
	s->fd = -1;
	s->tmp[0] = '\0';
	s->reserved_bytes = 0;
}

void ergon_out_release(struct ergon_out_slot *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0) {
		if (s->tmp[0])
			unlink(s->tmp);
		close(s->fd);
		s->fd = -1;
	}
	s->tmp[0] = '\0';
	if (s->lock_fd >= 0) {
		/* Unlink while holding the lock; a process that opened the old
		 * name notices (same_file) and retries on a fresh file. */
		unlink(s->lock);
		close(s->lock_fd);
		s->lock_fd = -1;
	}
}

int ergon_out_scan_stale(const char *path, int remove, ergon_stale_fn found, void *ctx,
			 struct ergon_err *err)
{
	char dir[PATH_MAX], full[PATH_MAX];
	const char *base;
	const size_t plen = strlen(ERGON_RESERVE_TMP_PREFIX);
	ergon_path_split(path, dir, sizeof(dir), &base);
	DIR *d = opendir(dir);
	if (d == NULL) {
		if (errno == ENOENT)
			return 0;
		return ergon_err_errno(err, errno, "%s: cannot list the output folder %s", path,
				       dir);
	}
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;
		/* mkstemp's pattern: the prefix and exactly six characters. */
		if (strncmp(nm, ERGON_RESERVE_TMP_PREFIX, plen) != 0 || strlen(nm) != plen + 6)
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", dir, nm) >= (int)sizeof(full))
			continue;
		int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		/* A live run holds its temporary file locked: not stale. */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);
			continue;
		}
		int has_data = 0;
		unsigned char head[4096];
		ssize_t got = pread(fd, head, sizeof(head), 0);
		for (ssize_t k = 0; k < got && !has_data; k++)
			has_data = head[k] != 0;
		int removed = 0;
		if (remove)
			removed = same_file(fd, full) && unlink(full) == 0;
		close(fd);
		n++;
		if (found)
			found(ctx, nm, (long long)st.st_size, has_data, removed);
	}
	closedir(d);
	return n;
}

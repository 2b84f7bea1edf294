/* Output reservation: claim an artifact's place and space before measuring.
 *
 * ergon_out_reserve() runs before the first sample: it takes a lock on the
 * output path (a second run on the same path is refused), creates the
 * temporary file in the destination's folder and preallocates a
 * conservative estimate of the artifact's size (posix_fallocate), so a full
 * disk, an unwritable folder or a path like /proc/x.json fails before
 * anything is measured. ergon_out_commit() writes the artifact into the
 * reserved file, flushes it and moves it into place. When that still fails,
 * the data is kept: in OUT.partial, or failing that in a file in the
 * temporary folder ($TMPDIR or /tmp), and the error message and
 * slot->kept_path say where it went.
 *
 * The lock is flock(2) on DIR/.BASENAME.ergon-lock, held until
 * ergon_out_release(); the kernel drops it when the process dies, so a
 * killed run never blocks the next one. Temporary files are
 * DIR/.ergon-tmp-XXXXXX and are flock'ed while a run holds them, which is
 * how ergon_out_scan_stale() tells a live reservation from a stale one.
 */
#ifndef ERGON_RESERVE_H
#define ERGON_RESERVE_H

#include "ergon/error.h"

#include <limits.h>
#include <stddef.h>

/* The paths' room: PATH_MAX (4096 on Linux) when <limits.h> gives it,
 * which it does only with POSIX or GNU features asked for; the same 4096
 * otherwise, so the struct is the same for every consumer. */
#ifdef PATH_MAX
#define ERGON_OUT_PATH_MAX PATH_MAX
#else
#define ERGON_OUT_PATH_MAX 4096
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The largest reservation ergon asks for: an estimate above this is clamped
 * (the rescue path still keeps a larger artifact). */
#define ERGON_RESERVE_MAX_BYTES ((size_t)1 << 30)
#define ERGON_RESERVE_TMP_PREFIX ".ergon-tmp-"

struct ergon_out_slot {
	char path[ERGON_OUT_PATH_MAX];	    /* the final output path */
	char tmp[ERGON_OUT_PATH_MAX];	    /* the reserved temporary file */
	char lock[ERGON_OUT_PATH_MAX];	    /* the lock file */
	char kept_path[ERGON_OUT_PATH_MAX]; /* where a failed commit kept the data ("" = nowhere) */
	int fd;				    /* reserved temporary file, -1 when none */
	int lock_fd;			    /* lock file, -1 when none */
	size_t reserved_bytes;
	unsigned flags; /* ERGON_WRITE_* */
	int committed;
};

/* Reserve path for an artifact of about estimate_bytes (clamped to
 * [4096, ERGON_RESERVE_MAX_BYTES]). flags: ERGON_WRITE_FORCE, ERGON_WRITE_MKDIR.
 * Fails with ERGON_EEXIST when path exists (without FORCE), ERGON_EREFUSED
 * when another process holds the reservation, the errno's code when the
 * folder cannot hold the file. On failure nothing is left behind. The slot
 * must be released with ergon_out_release() in every case. */
ERGON_API int ergon_out_reserve(struct ergon_out_slot *slot, const char *path,
				size_t estimate_bytes, unsigned flags, struct ergon_err *err);

/* Write data (len bytes) into the reserved file, fsync it and move it to
 * the output path (rename with FORCE, link otherwise: an existing file is
 * never replaced without FORCE). On failure the data is kept (see above):
 * slot->kept_path names the file and err's message ends with it. */
ERGON_API int ergon_out_commit(struct ergon_out_slot *slot, const void *data, size_t len,
			       struct ergon_err *err);

/* A writer for ergon_out_rescue: writes the data to fd, returns 0 or a
 * negative errno. It must not allocate (it runs when memory may be gone). */
typedef int (*ergon_out_emit_fn)(void *ctx, int fd);

/* Keep whatever emit writes when the artifact itself cannot be produced:
 * into the reserved space (moved to OUT.partial), else a new OUT.partial,
 * else $TMPDIR/ergon-rescue-XXXXXX. Returns 0 and sets slot->kept_path, or
 * a negative code when every place failed. Allocates nothing. */
ERGON_API int ergon_out_rescue(struct ergon_out_slot *slot, ergon_out_emit_fn emit, void *ctx,
			       struct ergon_err *err);

/* Give the reserved space back (remove the temporary file) but keep the
 * lock: for a writer that then writes its files itself (ergon capture's
 * summary and CSVs, right after the stream ends), so that the space proven
 * free before streaming is there for them and no second run takes the
 * output meanwhile. Safe on a slot without a temporary file. */
ERGON_API void ergon_out_free_space(struct ergon_out_slot *slot);

/* Unlock, remove the reserved temporary file unless it holds kept data, and
 * close. Safe on a zeroed or already released slot. */
ERGON_API void ergon_out_release(struct ergon_out_slot *slot);

/* Stale temporary files of ergon's own in the folder of path: regular
 * files named .ergon-tmp-XXXXXX that no live process holds. Calls found()
 * for each (name relative to the folder, its size); with remove set they
 * are unlinked first and removed says whether that worked. has_data is 0
 * when the file's first 4 KiB are all zero (or it is empty): the space a
 * run reserved before measuring, killed before it wrote anything (ergon
 * writes its artifacts from offset 0). Returns the number found, or a
 * negative code when the folder cannot be read (a missing folder has none). */
typedef void (*ergon_stale_fn)(void *ctx, const char *file, long long size_bytes, int has_data,
			       int removed);
ERGON_API int ergon_out_scan_stale(const char *path, int remove, ergon_stale_fn found, void *ctx,
				   struct ergon_err *err);

/* write(2) all len bytes, retrying EINTR and short writes. Returns 0 or a
 * negative errno. Allocates nothing. */
ERGON_API int ergon_fd_write_all(int fd, const void *data, size_t len);

/* Create DIR/.ergon-tmp-XXXXXX (mode 0600) and flock it, so a stale-file
 * scan never mistakes it for a leftover. tmp (cap bytes) receives the
 * name, *fd the descriptor (caller closes). Returns 0 or a negative errno. */
ERGON_API int ergon_tmp_create_locked(const char *dir, char *tmp, size_t cap, int *fd);

#ifdef __cplusplus
}
#endif
#endif

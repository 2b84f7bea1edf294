/* hpx/: `ergon parse | capture`: HPX streams -> PMU results.
 *
 * `ergon parse` and `ergon capture` as pipelines: bytes (a log file,
 * standard input, a transport) through the HPX parser, the result through
 * the report writer. The CLI only parses arguments and prints.
 *
 * A regular file is read in 1 MiB chunks by a second thread, which also
 * digests them for provenance.recording.sha256, while the calling thread
 * parses them; a third (the parser's, early aggregation) aggregates each
 * preset once it has ended. So the parse waits neither for the kernel's
 * copy, the digest nor the aggregation, and the log is read once. Anything
 * else (a pipe, standard input) is read in chunks, digested inline for a
 * named file, not at all for standard input. Reads, not a mapping: a log
 * truncated while it is read ends with an error, where a mapping would
 * raise SIGBUS.
 *
 * The samples of each preset are spilled (ergon_hpx_parser_spill) to an
 * unlinked temporary file in the output folder, so memory does not grow
 * with the iterations of a preset; the file's ranges are handed back
 * (punched) once their preset is aggregated, and the file goes away with
 * its descriptor. */
#include "ergon/fileio.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/reserve.h"
#include "ergon/sha256.h"
#include "hpx_json_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read size: large enough that a read costs little next to parsing it. */
#define PARSE_CHUNK ((size_t)1 << 20)
/* Read buffers start on a page (PARSE_CHUNK is a multiple of it): the
 * kernel's copy out of the page cache into a buffer 16 bytes off a page
 * (where malloc puts a large block) runs at a third of the speed here
 * (0.09 s against 0.03 s of system time for the 100 MB reference stream). */
#define PARSE_ALIGN ((size_t)4096)
/* Chunks in flight between the reader thread and the parser. */
#define RING 4

/* A regular file is read by a second thread: it fills ring slots (pread)
 * and digests each one, the calling thread parses them in order, and a
 * slot is refilled only once parsed. So the parse never waits for the
 * kernel's copy or the digest, and the log is read once. */
struct reader_job {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd;
	uint64_t size;
	const char *name;
	char *buf[RING];
	size_t len[RING];
	uint64_t filled, parsed; /* chunks posted by the reader, chunks parsed */
	int eof;		 /* the reader is done (at the end, or at rc) */
	int stop;		 /* the parser failed: the reader stops */
	struct ergon_sha256 sha;
	int rc;
	struct ergon_err err;
};

/* Read the chunk at byte `off` into a slot (j->len[slot] gets its length)
 * and digest it. A file shorter than it was at the start is an error naming
 * the byte. Returns 0 or an ERGON_E* (in j->err). */
static int read_slot(struct reader_job *j, size_t slot, uint64_t off)
{
	size_t want = j->size - off < PARSE_CHUNK ? (size_t)(j->size - off) : PARSE_CHUNK;
	ssize_t n;
	do
		n = pread(j->fd, j->buf[slot], want, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ergon_err_errno(&j->err, errno, "%s: read failed at byte %llu", j->name,
				       (unsigned long long)off);
	if (n == 0)
		return ergon_err_set(&j->err, ERGON_EIO,
				     "%s: the file shrank while it was read (ends at byte "
				     "%llu of %llu); parse a copy that is not being written",
				     j->name, (unsigned long long)off, (unsigned long long)j->size);
	j->len[slot] = (size_t)n;
	return ergon_sha256_update(&j->sha, j->buf[slot], (size_t)n, &j->err);
}

static void *reader_main(void *arg)
{
	struct reader_job *j = arg;
	uint64_t off = 0;
	for (uint64_t i = 0; off < j->size; i++) {
		pthread_mutex_lock(&j->mu);
		while (i - j->parsed >= RING && !j->stop)
			pthread_cond_wait(&j->cv, &j->mu);
		int stop = j->stop;
		pthread_mutex_unlock(&j->mu);
		if (stop)
			break;
		size_t slot = (size_t)(i % RING);
		int rc = read_slot(j, slot, off);
		pthread_mutex_lock(&j->mu);
		if (rc)
			j->rc = rc;
		else
			j->filled = i + 1;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		if (rc)
			break;
		off += j->len[slot];
	}
	pthread_mutex_lock(&j->mu);
	j->eof = 1;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Parse the chunks the reader posts, in order, until it is done. */
static int parse_posted(struct reader_job *j, struct ergon_hpx_parser *p, struct ergon_err *err)
{
	int rc = 0;
	for (uint64_t i = 0;; i++) {
		pthread_mutex_lock(&j->mu);
		while (j->filled <= i && !j->eof)
			pthread_cond_wait(&j->cv, &j->mu);
		int have = j->filled > i;
		pthread_mutex_unlock(&j->mu);
		if (!have)
			break;
		size_t slot = (size_t)(i % RING);
		int st = ergon_hpx_parser_feed(p, j->buf[slot], j->len[slot], err);
		pthread_mutex_lock(&j->mu);
		j->parsed = i + 1;
		if (st < 0)
			j->stop = 1;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		if (st < 0) {
			rc = st;
			break;
		}
	}
	return rc;
}

/* Without a thread: read, digest and parse each chunk in turn. */
static int parse_inline(struct reader_job *j, struct ergon_hpx_parser *p, struct ergon_err *err)
{
	for (uint64_t off = 0; off < j->size;) {
		int rc = read_slot(j, 0, off);
		if (rc) {
			*err = j->err;
			return rc;
		}
		int st = ergon_hpx_parser_feed(p, j->buf[0], j->len[0], err);
		if (st < 0)
			return st;
		off += j->len[0];
	}
	return 0;
}

/* Parse and digest a regular file of `size` bytes; hex gets the digest. */
static int parse_regular(int fd, uint64_t size, const char *name, struct ergon_hpx_parser *p,
			 char hex[65], struct ergon_err *err)
{
	struct reader_job j;
	memset(&j, 0, sizeof j);
	j.fd = fd;
	j.size = size;
	j.name = name;
	int rc = ergon_sha256_init(&j.sha, err);
	for (size_t k = 0; rc == 0 && k < RING; k++) {
		j.buf[k] = aligned_alloc(PARSE_ALIGN, PARSE_CHUNK);
		if (j.buf[k] == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	}
	int threaded = 0;
	pthread_t th;
	if (rc == 0 && pthread_mutex_init(&j.mu, NULL) == 0) {
		if (pthread_cond_init(&j.cv, NULL) == 0) {
			/* A thread that cannot start: read and parse in turn. */
			threaded = pthread_create(&th, NULL, reader_main, &j) == 0;
			if (!threaded)
				pthread_cond_destroy(&j.cv);
		}
		if (!threaded)
			pthread_mutex_destroy(&j.mu);
	}
	if (rc == 0 && !threaded)
		rc = parse_inline(&j, p, err);
	if (threaded) {
		rc = parse_posted(&j, p, err);
		pthread_join(th, NULL);
		pthread_cond_destroy(&j.cv);
		pthread_mutex_destroy(&j.mu);
		/* The parser's error comes first; else the reader's. */
		if (rc == 0 && j.rc) {
			*err = j.err;
			rc = j.rc;
		}
	}
	if (rc == 0)
		rc = ergon_sha256_final_hex(&j.sha, hex, err);
	ergon_sha256_cleanup(&j.sha);
	for (size_t k = 0; k < RING; k++)
		free(j.buf[k]);
	return rc;
}

/* Not a regular file: chunks through a buffer, digested inline (sha NULL:
 * not digested). */
static int read_chunks(int fd, const char *log, struct ergon_hpx_parser *p,
		       struct ergon_sha256 *sha, struct ergon_err *err)
{
	char *buf = aligned_alloc(PARSE_ALIGN, PARSE_CHUNK);
	int rc = buf ? 0 : ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", log);
	while (!rc) {
		ssize_t n = read(fd, buf, PARSE_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ergon_err_errno(err, errno, "%s: read failed", log);
			break;
		}
		if (n == 0)
			break;
		if (sha)
			rc = ergon_sha256_update(sha, buf, (size_t)n, err);
		if (!rc) {
			int st = ergon_hpx_parser_feed(p, buf, (size_t)n, err);
			rc = st < 0 ? st : 0;
		}
	}
	free(buf);
	return rc;
}

/* The spill store: an unlinked file in the output folder. */
struct spill_file {
	int fd;
	const char *dir;
	/* The parse is over and the file is about to be closed, which hands
	 * all of it back at once: no hole is punched range by range. */
	bool closing;
};

/* Write (or read) len bytes at off, whole; errors name the folder. */
static int spill_io(struct spill_file *f, uint64_t off, char *b, size_t len, int wr,
		    struct ergon_err *err)
{
	while (len) {
		ssize_t n =
		    wr ? pwrite(f->fd, b, len, (off_t)off) : pread(f->fd, b, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ergon_err_errno(err, errno,
					       "--out %s: cannot %s the parse's temporary spill "
					       "file (at byte %llu); free space there or choose "
					       "another --out",
					       f->dir, wr ? "write" : "read",
					       (unsigned long long)off);
		if (n == 0)
			return ergon_err_set(
			    err, ERGON_EIO,
			    wr ? "--out %s: the parse's temporary spill file "
				 "took no bytes at byte %llu; free space there or "
				 "choose another --out"
			       : "--out %s: the parse's temporary spill file ends at "
				 "byte %llu, before what was written there",
			    f->dir, (unsigned long long)off);
		b += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int spill_write(void *ctx, uint64_t off, const void *buf, size_t len, struct ergon_err *err)
{
	/* pwrite does not write through the pointer. */
	return spill_io(ctx, off, (char *)(uintptr_t)buf, len, 1, err);
}

static int spill_read(void *ctx, uint64_t off, void *buf, size_t len, struct ergon_err *err)
{
	return spill_io(ctx, off, buf, len, 0, err);
}

/* Disk space back; where holes cannot be punched the file keeps it until
 * the parse ends. */
static void spill_release(void *ctx, uint64_t off, uint64_t len)
{
	struct spill_file *f = ctx;
	if (f->closing)
		return;
	(void)fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
}

/* Create the output folder and an unlinked file in it (O_TMPFILE, else a
 * named one removed at once). */
static int spill_open(struct spill_file *f, const char *dir, struct ergon_err *err)
{
	f->dir = dir;
	f->fd = -1;
	int rc = ergon_mkdir_p(dir, err);
	if (rc)
		return rc;
	f->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f->fd >= 0)
		return 0;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/.ergon-parse-spill-XXXXXX", dir) >= (int)sizeof(path))
		return ergon_err_set(err, ERGON_ETOOBIG, "--out %s: path too long", dir);
	f->fd = mkstemp(path);
	if (f->fd < 0)
		return ergon_err_errno(err, errno,
				       "--out %s: cannot create the parse's temporary spill "
				       "file; make the folder writable or choose another --out",
				       dir);
	unlink(path);
	return 0;
}

/* The parser and the spill file, let go (a thread's body). */
struct drop_job {
	struct ergon_hpx_parser *p;
	struct spill_file *sf;
};

static void *drop_main(void *arg)
{
	struct drop_job *d = arg;
	d->sf->closing = true;
	ergon_hpx_parser_free(d->p);
	if (d->sf->fd >= 0)
		close(d->sf->fd);
	return NULL;
}

/* The typed result and the document of a written summary (the result is
 * read from the document as written). */
static int hand_back(json_t *art, const struct ergon_hpx_report_opts *o,
		     struct ergon_hpx_run_result *res, json_t **summary, struct ergon_err *err)
{
	int rc = 0;
	if (res) {
		rc = ergon_hpx_run_result_read(art, res, err);
		snprintf(res->summary_path, sizeof res->summary_path, "%s/summary.json",
			 o->out_dir);
	}
	if (summary)
		*summary = json_incref(art);
	return rc;
}

int ergon_hpx_parse_run(const char *log, const struct ergon_hpx_report_opts *o,
			struct ergon_hpx_run_result *res, json_t **summary, struct ergon_err *err)
{
	if (summary)
		*summary = NULL;
	if (res)
		ergon_hpx_run_result_read(NULL, res, NULL);
	int from_stdin = strcmp(log, "-") == 0;
	int fd = STDIN_FILENO;
	/* A pipe streams; a device (/dev/zero) is no log, and a FIFO with no
	 * writer must not block the open. */
	if (!from_stdin) {
		int orc = ergon_open_input(log, "the log", ERGON_INPUT_FIFO, &fd, err);
		if (orc)
			return orc;
	}
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_report_opts ro = *o;
	json_t *result = NULL;
	char hex[65];
	struct stat st;
	int regular = !from_stdin && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	/* Each preset is aggregated as it ends, beside the parse of the next:
	 * one preset's samples in memory, and only the last one's aggregation
	 * after the end of the log. */
	if (!rc)
		rc = ergon_hpx_parser_aggregate_early(p, o->aggregation, true, err);
	struct spill_file sf = {.fd = -1};
	if (!rc && o->out_dir)
		rc = spill_open(&sf, o->out_dir, err);
	if (!rc && sf.fd >= 0) {
		struct ergon_hpx_spill sp = {
		    .ctx = &sf, .write = spill_write, .read = spill_read, .release = spill_release};
		rc = ergon_hpx_parser_spill(p, &sp, err);
	}
	if (!rc && regular) {
		rc = parse_regular(fd, (uint64_t)st.st_size, log, p, hex, err);
		ro.log_sha256 = hex;
		ro.log_bytes = (unsigned long long)st.st_size;
	} else if (!rc) {
		/* A file is digested as it is read: one pass over the bytes. */
		struct ergon_sha256 sha = {0};
		if (!from_stdin)
			rc = ergon_sha256_init(&sha, err);
		if (!rc)
			rc = read_chunks(fd, log, p, from_stdin ? NULL : &sha, err);
		if (!rc && !from_stdin) {
			rc = ergon_sha256_final_hex(&sha, hex, err);
			ro.log_sha256 = hex;
			ro.log_bytes = sha.bytes;
		}
		ergon_sha256_cleanup(&sha);
	}
	if (!from_stdin)
		close(fd);
	if (!rc) {
		int fin = ergon_hpx_parser_finish(p, err);
		if (fin < 0)
			rc = fin;
	}
	/* Only what the outputs read (hpx_json_internal.h). */
	if (!rc)
		rc = hpx_parser_json_lean(p, o->aggregation, &result, err);
	/* The result holds what the outputs need: the parser and the spill
	 * (its page cache) are let go by a second thread while they are
	 * written. */
	struct drop_job dj = {.p = p, .sf = &sf};
	pthread_t dth;
	bool dropping = pthread_create(&dth, NULL, drop_main, &dj) == 0;
	if (!dropping)
		drop_main(&dj);
	json_t *art = NULL;
	if (!rc)
		rc = ergon_hpx_report_write(result, &ro, &art, err);
	if (dropping)
		pthread_join(dth, NULL);
	if (!rc)
		rc = hand_back(art, o, res, summary, err);
	json_decref(art);
	json_decref(result);
	return rc;
}

/* 1 when a capture's source is a regular file (file:PATH, or - with a
 * file on stdin): the stream was written before ergon read it, so the
 * capture's span is when ergon read it, not when the counters were
 * measured. A FIFO, a pipe, a device, a socket or a debug link is read as
 * the board sends it. */
static int replayed_source(const char *spec)
{
	struct stat st;
	if (spec == NULL)
		return 0;
	if (strcmp(spec, "-") == 0)
		return fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
	if (strncmp(spec, "file:", 5) == 0)
		return stat(spec + 5, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}

int ergon_hpx_capture_run(const struct ergon_hpx_capture_opts *co,
			  const struct ergon_hpx_report_opts *o, struct ergon_hpx_run_result *res,
			  json_t **summary, struct ergon_err *err)
{
	if (summary)
		*summary = NULL;
	if (res)
		ergon_hpx_run_result_read(NULL, res, NULL);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cr = {0};
	json_t *result = NULL;
	struct ergon_out_slot slot;
	char sum_path[PATH_MAX];
	slot.fd = slot.lock_fd = -1;
	slot.tmp[0] = '\0';
	/* Claim the output folder and the space of what is written at the end
	 * before the first byte is read (reserve.h): a full disk, an
	 * unwritable folder or a second capture on the same --out fails here,
	 * not after the stream. The lock is held until the files are written;
	 * the space is handed back just before they are. */
	if (snprintf(sum_path, sizeof(sum_path), "%s/summary.json", o->out_dir) >=
	    (int)sizeof(sum_path))
		return ergon_err_set(err, ERGON_ETOOBIG, "--out %s: path too long", o->out_dir);
	int rc = ergon_out_reserve(&slot, sum_path, ERGON_CAPTURE_RESERVE_BYTES,
				   o->write_flags | ERGON_WRITE_MKDIR, err);
	if (rc) {
		ergon_out_release(&slot);
		return rc;
	}
	rc = ergon_hpx_parser_new(NULL, &p, err);
	int replayed = replayed_source(co->transport);
	struct ergon_mtime mt;
	ergon_mtime_start(&mt);
	if (!rc)
		rc = ergon_hpx_capture(co, p, &cr, err);
	ergon_mtime_end(&mt);
	if (!rc)
		rc = hpx_parser_json_lean(p, o->aggregation, &result, err);
	if (!rc) {
		struct ergon_hpx_report_opts ro = *o;
		ro.extra_issues = cr.issues;
		ro.capture = cr.details;
		/* A replayed file states no time (hpx_report.c says so). */
		ro.measured = replayed ? NULL : &mt;
		ergon_out_free_space(&slot);
		json_t *art = NULL;
		rc = ergon_hpx_report_write(result, &ro, &art, err);
		if (!rc)
			rc = hand_back(art, o, res, summary, err);
		json_decref(art);
	}
	ergon_out_release(&slot);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(result);
	return rc;
}

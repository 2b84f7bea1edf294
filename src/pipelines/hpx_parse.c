/* `ergon parse` and `ergon capture` as pipelines: bytes (a log file,
 * standard input, a transport) through the HPX parser, the result through
 * the report writer. The CLI only parses arguments and prints.
 *
 * A regular file is read in 1 MiB chunks while a second thread digests the
 * same file for provenance.recording.sha256 (its own pread offsets), so the
 * digest is off the parse's path; anything else (a pipe, standard input)
 * is read in chunks and digested inline. Reads, not a mapping: a log
 * truncated while it is read ends the read with an error, where a mapping
 * would raise SIGBUS. */
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read size: large enough that a read costs little next to parsing it. */
#define PARSE_CHUNK ((size_t)1 << 20)
typedef int (*window_fn)(void *ctx, const char *data, size_t len, struct ergon_err *err);

/* Hand the first `size` bytes of a regular file to fn chunk by chunk
 * (pread: the offset of fd is not used). A file shorter than it was at the
 * start is an error naming the byte. */
static int read_windows(int fd, uint64_t size, const char *name, window_fn fn, void *ctx,
			struct ergon_err *err)
{
	char *buf = malloc(PARSE_CHUNK);
	if (buf == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	int rc = 0;
	for (uint64_t off = 0; rc == 0 && off < size;) {
		size_t want = size - off < PARSE_CHUNK ? (size_t)(size - off) : PARSE_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ergon_err_errno(err, errno, "%s: read failed at byte %llu", name,
					     (unsigned long long)off);
			break;
		}
		if (n == 0) {
			rc = ergon_err_set(err, ERGON_EIO,
					   "%s: the file shrank while it was read (ends at byte "
					   "%llu of %llu); parse a copy that is not being written",
					   name, (unsigned long long)off, (unsigned long long)size);
			break;
		}
		rc = fn(ctx, buf, (size_t)n, err);
		off += (uint64_t)n;
	}
	free(buf);
	return rc;
}

static int feed_window(void *ctx, const char *data, size_t len, struct ergon_err *err)
{
	int st = ergon_hpx_parser_feed(ctx, data, len, err);
	return st < 0 ? st : 0;
}

static int digest_window(void *ctx, const char *data, size_t len, struct ergon_err *err)
{
	return ergon_sha256_update(ctx, data, len, err);
}

struct digest_job {
	int fd;
	uint64_t size;
	const char *name;
	char hex[65];
	int rc;
	struct ergon_err err;
};

static void *digest_main(void *arg)
{
	struct digest_job *j = arg;
	struct ergon_sha256 sha = {0};
	j->rc = ergon_sha256_init(&sha, &j->err);
	if (!j->rc)
		j->rc = read_windows(j->fd, j->size, j->name, digest_window, &sha, &j->err);
	if (!j->rc)
		j->rc = ergon_sha256_final_hex(&sha, j->hex, &j->err);
	ergon_sha256_cleanup(&sha);
	return NULL;
}

/* Not a regular file: chunks through a buffer, digested inline (sha NULL:
 * not digested). */
static int read_chunks(int fd, const char *log, struct ergon_hpx_parser *p,
		       struct ergon_sha256 *sha, struct ergon_err *err)
{
	char *buf = malloc(PARSE_CHUNK);
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
		if (!rc)
			rc = feed_window(p, buf, (size_t)n, err);
	}
	free(buf);
	return rc;
}

int ergon_hpx_parse_run(const char *log, const struct ergon_hpx_report_opts *o, json_t **summary,
			struct ergon_err *err)
{
	int from_stdin = strcmp(log, "-") == 0;
	int fd = from_stdin ? STDIN_FILENO : open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno, "%s: cannot open the log", log);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_report_opts ro = *o;
	json_t *result = NULL;
	char hex[65];
	struct stat st;
	int regular = !from_stdin && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	struct digest_job job = {.fd = fd, .size = regular ? (uint64_t)st.st_size : 0, .name = log};
	pthread_t th;
	int threaded = 0;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (!rc && regular) {
		/* The digest runs beside the parse; a thread that cannot start
		 * digests afterwards instead. */
		threaded = pthread_create(&th, NULL, digest_main, &job) == 0;
		rc = read_windows(fd, (uint64_t)st.st_size, log, feed_window, p, err);
		if (threaded)
			pthread_join(th, NULL);
		else
			digest_main(&job);
		if (!rc && job.rc) {
			*err = job.err;
			rc = job.rc;
		}
		if (!rc) {
			memcpy(hex, job.hex, sizeof hex);
			ro.log_sha256 = hex;
			ro.log_bytes = job.size;
		}
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
	if (!rc)
		rc = ergon_hpx_parser_to_json(p, o->aggregation, 0, &result, err);
	if (!rc)
		rc = ergon_hpx_report_write(result, &ro, summary, err);
	ergon_hpx_parser_free(p);
	json_decref(result);
	return rc;
}

int ergon_hpx_capture_run(const struct ergon_hpx_capture_opts *co,
			  const struct ergon_hpx_report_opts *o, json_t **summary,
			  struct ergon_err *err)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cr = {0};
	json_t *result = NULL;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (!rc)
		rc = ergon_hpx_capture(co, p, &cr, err);
	if (!rc)
		rc = ergon_hpx_parser_to_json(p, o->aggregation, 0, &result, err);
	if (!rc) {
		struct ergon_hpx_report_opts ro = *o;
		ro.extra_issues = cr.issues;
		ro.capture = cr.details;
		rc = ergon_hpx_report_write(result, &ro, summary, err);
	}
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(result);
	return rc;
}

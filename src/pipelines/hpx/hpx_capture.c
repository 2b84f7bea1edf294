/* Transport -> capture log -> HPX parser, with overall and heartbeat
 * timeouts. */
#include "ergon/hpx_capture.h"

#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/transport.h"
#include "ergon/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 16384
#define POLL_MS 100

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_all(int fd, const char *path, const unsigned char *b, size_t n,
		     struct ergon_err *err)
{
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return ergon_err_errno(err, errno, "%s: cannot write the capture log",
					       path);
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Whether one of the sentinels ends a line in tail+data; keeps the last
 * bytes of data in tail for the next call. scan holds tail_cap + len. */
static bool sentinel_seen(unsigned char *scan, unsigned char *tail, size_t *tail_len,
			  size_t tail_cap, const unsigned char *data, size_t len,
			  const char *const *sentinels, size_t n)
{
	memcpy(scan, tail, *tail_len);
	memcpy(scan + *tail_len, data, len);
	size_t total = *tail_len + len;
	bool found = false;
	for (size_t i = 0; i < n && !found; i++) {
		size_t k = strlen(sentinels[i]);
		for (size_t at = 0; at + k <= total; at++) {
			const unsigned char *hit = memchr(scan + at, sentinels[i][0], total - at);
			if (!hit || (size_t)(hit - scan) + k > total)
				break;
			at = (size_t)(hit - scan);
			/* at the start of a line, as the parser requires */
			if (memcmp(hit, sentinels[i], k) == 0 &&
			    (at == 0 || scan[at - 1] == '\n')) {
				found = true;
				break;
			}
		}
	}
	size_t keep = total < tail_cap ? total : tail_cap;
	memmove(tail, scan + total - keep, keep);
	*tail_len = keep;
	return found;
}

void ergon_hpx_capture_result_cleanup(struct ergon_hpx_capture_result *res)
{
	json_decref(res->issues);
	json_decref(res->details);
	res->issues = NULL;
	res->details = NULL;
}

int ergon_hpx_capture(const struct ergon_hpx_capture_opts *o, struct ergon_hpx_parser *p,
		      struct ergon_hpx_capture_result *res, struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	int rc = ergon_file_check_writable(o->log_path, o->write_flags | ERGON_WRITE_MKDIR, err);
	if (rc)
		return rc;
	struct ergon_transport *t = NULL;
	rc = ergon_transport_open(o->transport, &t, err);
	if (rc)
		return rc;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC |
		    ((o->write_flags & ERGON_WRITE_FORCE) ? O_TRUNC : O_EXCL);
	int raw_fd = -1;
	char raw_path[4096] = "";
	unsigned char *buf = NULL, *scan = NULL;
	int fd = open(o->log_path, flags, 0644);
	if (fd < 0) {
		rc = ergon_err_errno(err, errno, "%s: cannot create the capture log%s", o->log_path,
				     errno == EEXIST ? " (exists; use --force)" : "");
		ergon_transport_close(t);
		return rc;
	}
	/* A decoding link (SWO) also keeps its raw bytes, beside the log. */
	if (ergon_transport_has_raw(t)) {
		snprintf(raw_path, sizeof(raw_path), "%s.raw", o->log_path);
		if ((o->write_flags & ERGON_WRITE_FORCE) && ergon_path_replaceable(raw_path, err)) {
			rc = err->code;
			raw_path[0] = '\0';
			goto done;
		}
		raw_fd = open(raw_path, flags, 0644);
		if (raw_fd < 0) {
			rc = ergon_err_errno(err, errno, "%s: cannot create the raw trace log%s",
					     raw_path,
					     errno == EEXIST ? " (exists; use --force)" : "");
			goto done;
		}
		ergon_transport_set_raw_sink(t, raw_fd);
	}
	buf = malloc(CHUNK);
	res->issues = json_array();
	if (!buf || !res->issues) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "capture: out of memory");
		goto done;
	}
	/* After a parse failure the sentinels are found by a byte search over
	 * the tail of the previous chunk plus the new one (a sentinel can
	 * straddle reads). */
	const char *const sentinels[] = {HPX_TOK_END, HPX_TOK_POWER_TERMINAL_END};
	unsigned char tail[64];
	size_t tail_len = 0;
	scan = malloc(CHUNK + sizeof(tail));
	if (!scan) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "capture: out of memory");
		goto done;
	}
	/* The link is open and the log ready: now start the target (a serial
	 * port keeps no bytes sent before it was opened). */
	if (o->on_open != NULL) {
		rc = o->on_open(o->on_open_ctx, err);
		if (rc)
			goto done;
	}
	double t0 = now_s();
	double last_line = t0;
	/* The clean window is silent by design: track whether the last
	 * heartbeat opened it, from the completed lines. */
	char line[96];
	size_t line_len = 0;
	int in_window = 0;
	double hb_used = o->heartbeat_s;
	const char *end = "sentinel";
	for (;;) {
		double now = now_s();
		if (o->cancel != NULL && *o->cancel) {
			res->interrupted = true;
			end = "interrupted";
			break;
		}
		if (o->timeout_s > 0 && now - t0 >= o->timeout_s) {
			res->timed_out = true;
			end = "timeout";
			break;
		}
		double hb_s = o->heartbeat_s;
		if (in_window && hb_s > 0 && o->window_heartbeat_s > hb_s)
			hb_s = o->window_heartbeat_s;
		if (hb_s > 0 && now - last_line >= hb_s) {
			hb_used = hb_s;
			res->heartbeat_timed_out = true;
			end = "heartbeat_timeout";
			break;
		}
		size_t got = 0;
		int r = ergon_transport_read(t, buf, CHUNK, POLL_MS, &got, err);
		if (r < 0) {
			rc = r;
			goto done;
		}
		if (got) {
			/* The log first: a parse failure below loses nothing. */
			rc = write_all(fd, o->log_path, buf, got, err);
			if (rc)
				goto done;
			res->bytes += got;
			if (memchr(buf, '\n', got))
				last_line = now_s();
			for (size_t i = 0; i < got; i++) {
				if (buf[i] != '\n') {
					if (line_len < sizeof line - 1)
						line[line_len++] = (char)buf[i];
					continue;
				}
				line[line_len] = '\0';
				if (o->on_line != NULL)
					o->on_line(o->on_line_ctx, line);
				if (strncmp(line, HPX_TOK_HEARTBEAT " ",
					    strlen(HPX_TOK_HEARTBEAT) + 1) == 0) {
					if (strstr(line, HPX_HB_CLEAN_WINDOW_BEGIN))
						in_window = 1;
					else if (strstr(line, HPX_HB_CLEAN_WINDOW_END))
						in_window = 0;
				}
				line_len = 0;
			}
			if (res->parse_failed) {
				if (sentinel_seen(scan, tail, &tail_len, sizeof(tail), buf, got,
						  sentinels, 2)) {
					res->complete = true;
					break;
				}
			} else {
				struct ergon_err perr = {0};
				int st = ergon_hpx_parser_feed(p, buf, got, &perr);
				if (st < 0) {
					/* A parser limit is a fault of the data, not of
					 * the link: stop parsing, keep logging. */
					res->parse_failed = true;
					snprintf(res->parse_error, sizeof(res->parse_error), "%s",
						 perr.msg);
					/* The sentinel may be in this very chunk, after
					 * the line that failed. */
					if (sentinel_seen(scan, tail, &tail_len, sizeof(tail), buf,
							  got, sentinels, 2)) {
						res->complete = true;
						break;
					}
					goto next;
				}
				struct ergon_hpx_stats s;
				ergon_hpx_parser_stats(p, &s);
				if (st == ERGON_HPX_DONE || s.terminal_ended) {
					res->complete = true;
					break;
				}
			}
		}
	next:
		if (r == ERGON_TRANSPORT_EOF) {
			res->source_ended = true;
			end = "end_of_source";
			break;
		}
	}
	res->elapsed_s = now_s() - t0;
	if (fsync(fd) != 0 && errno != EINVAL) {
		rc = ergon_err_errno(err, errno, "%s: cannot flush the capture log", o->log_path);
		goto done;
	}
	if (!res->parse_failed) {
		struct ergon_err perr = {0};
		int st = ergon_hpx_parser_finish(p, &perr);
		if (st < 0) {
			res->parse_failed = true;
			snprintf(res->parse_error, sizeof(res->parse_error), "%s", perr.msg);
		} else {
			struct ergon_hpx_stats s;
			ergon_hpx_parser_stats(p, &s);
			if (st == ERGON_HPX_DONE || s.terminal_ended)
				res->complete = true;
		}
	}
	if (res->parse_failed)
		ergon_issue_add(
		    res->issues, "pmu.parser_limit",
		    json_pack("{s:s, s:s}", "parser_error", res->parse_error, "log", o->log_path),
		    "%s; parsing stopped there, the whole capture (%llu bytes) is kept "
		    "in %s for `ergon parse`",
		    res->parse_error, res->bytes, o->log_path);
	res->lossy = ergon_transport_lossy(t);
	if (res->timed_out)
		ergon_issue_add(res->issues, "capture.timeout",
				json_pack("{s:f}", "timeout_s", o->timeout_s),
				"no end sentinel within %.1f s; %llu bytes kept in %s",
				o->timeout_s, res->bytes, o->log_path);
	if (res->heartbeat_timed_out)
		ergon_issue_add(res->issues, "capture.heartbeat_timeout",
				json_pack("{s:f}", "heartbeat_s", hb_used),
				"no line for %.1f s (target stalled or link lost); %llu bytes kept "
				"in %s",
				hb_used, res->bytes, o->log_path);
	if (!res->complete)
		ergon_issue_add(
		    res->issues, "capture.incomplete", json_pack("{s:s}", "end", end),
		    "the capture ended (%s) before '%s'; what arrived is parsed and kept", end,
		    HPX_TOK_END);
	json_t *link = ergon_transport_stats(t);
	if (res->lossy)
		ergon_issue_add(res->issues, "capture.lossy", json_deep_copy(link),
				"the link lost or mangled data; the profile is diagnostic only");
	if (raw_fd >= 0 && fsync(raw_fd) != 0 && errno != EINVAL) {
		rc = ergon_err_errno(err, errno, "%s: cannot flush the raw trace log", raw_path);
		goto done;
	}
	res->details =
	    json_pack("{s:s, s:s, s:I, s:f, s:s, s:o}", "transport", o->transport, "log",
		      o->log_path, "bytes", (json_int_t)res->bytes, "elapsed_s", res->elapsed_s,
		      "end", res->complete ? "sentinel" : end, "link", link ? link : json_null());
	if (res->details && raw_fd >= 0)
		json_object_set_new(res->details, "raw_log", json_string(raw_path));
	rc = 0;
done:
	free(scan);
	free(buf);
	if (raw_fd >= 0)
		close(raw_fd);
	close(fd);
	ergon_transport_close(t);
	return rc;
}

/* `ergon parse` and `ergon capture` as pipelines: bytes (a log file,
 * standard input, a transport) through the HPX parser, the result through
 * the report writer. The CLI only parses arguments and prints. */
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read size: large enough that a read costs little next to parsing it. */
#define PARSE_CHUNK ((size_t)1 << 20)

int ergon_hpx_parse_run(const char *log, const struct ergon_hpx_report_opts *o, json_t **summary,
			struct ergon_err *err)
{
	int from_stdin = strcmp(log, "-") == 0;
	int fd = from_stdin ? STDIN_FILENO : open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno, "%s: cannot open the log", log);
	struct ergon_hpx_parser *p = NULL;
	json_t *result = NULL;
	char *buf = malloc(PARSE_CHUNK);
	int rc = buf ? ergon_hpx_parser_new(NULL, &p, err)
		     : ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", log);
	/* Stream the log: memory is bounded by the parser's caps, not the file. */
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
		int st = ergon_hpx_parser_feed(p, buf, (size_t)n, err);
		if (st < 0)
			rc = st;
	}
	if (!from_stdin)
		close(fd);
	free(buf);
	if (!rc) {
		int st = ergon_hpx_parser_finish(p, err);
		if (st < 0)
			rc = st;
	}
	if (!rc)
		rc = ergon_hpx_parser_to_json(p, o->aggregation, 0, &result, err);
	if (!rc)
		rc = ergon_hpx_report_write(result, o, summary, err);
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

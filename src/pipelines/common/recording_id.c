/* Which recording a summary was made from: ergon analyze writes the
 * recording's size and SHA-256 into provenance.recording; ergon report
 * --jls and ergon view --summary compare them with the recording they are
 * given, so that a summary's gate windows are never drawn over a recording
 * that is not the one they were measured on (issue 34). */
#include "ergon/fileio.h"
#include "ergon/sha256.h"
#include "pipelines/common/common.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The size and SHA-256 of the regular file at path. */
static int digest(const char *path, char hex[65], uint64_t *bytes, struct ergon_err *err)
{
	int fd = -1;
	int rc = ergon_open_input(path, "the recording", 0, &fd, err);
	if (rc)
		return rc;
	rc = ergon_sha256_fd_hex(fd, path, hex, bytes, err);
	close(fd);
	return rc;
}

int ergon_summary_recording_identify(const char *path, json_t *rec, struct ergon_err *err)
{
	char hex[65];
	uint64_t bytes = 0;
	int rc = digest(path, hex, &bytes, err);
	if (rc)
		return rc;
	if (json_object_set_new(rec, "sha256", json_string(hex)) != 0 ||
	    json_object_set_new(rec, "bytes", json_integer((json_int_t)bytes)) != 0)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	return 0;
}

/* 64 lower-case hex digits. */
static int is_sha256_hex(const char *s)
{
	if (s == NULL || strlen(s) != 64)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

int ergon_summary_recording_check(const json_t *summary, const char *summary_name,
				  const char *jls_path, struct ergon_err *err)
{
	const json_t *rec = ergon_jpath(summary, "provenance.recording");
	const char *want = json_string_value(json_object_get(rec, "sha256"));
	const json_t *want_bytes = json_object_get(rec, "bytes");
	if (!is_sha256_hex(want) || !json_is_integer(want_bytes) ||
	    json_integer_value(want_bytes) < 0)
		return ergon_err_set(
		    err, ERGON_EREFUSED,
		    "%s does not record which recording it was made from (no "
		    "provenance.recording.sha256 and .bytes: it was made before ergon analyze "
		    "wrote them, from a pipe, or by an ergon profile that wrote no recording: only "
		    "the virtual bench writes its trace), so "
		    "%s cannot be shown to be its recording; analyze that recording again (ergon "
		    "analyze --jls %s --out DIR) and give that summary, or pass --force-jls to "
		    "draw "
		    "it anyway, marked as not shown to belong",
		    summary_name, jls_path, jls_path);
	char hex[65];
	uint64_t bytes = 0;
	int rc = digest(jls_path, hex, &bytes, err);
	if (rc)
		return rc;
	if (bytes == (uint64_t)json_integer_value(want_bytes) && strcmp(hex, want) == 0)
		return 0;
	const char *path = json_string_value(json_object_get(rec, "path"));
	return ergon_err_set(err, ERGON_EREFUSED,
			     "%s is not the recording %s was made from: it has %" PRIu64
			     " bytes and SHA-256 %.16s..., the summary's recording%s%s had %" PRId64
			     " bytes and SHA-256 %.16s...; give that recording, or pass "
			     "--force-jls to draw this one anyway, marked as not its recording",
			     jls_path, summary_name, bytes, hex, path ? " " : "", path ? path : "",
			     (int64_t)json_integer_value(want_bytes), want);
}

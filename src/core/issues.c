/* The issue registry and integrity from issues. */
#include "ergon/issues.h"

#include "ergon/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct issue_def {
	const char *code;
	int severity;
	const char *meaning;
};

static const struct issue_def issue_defs[] = {
#define X(code, sev, meaning) {code, sev, meaning},
	ERGON_ISSUE_CODES(X)
#undef X
};

int ergon_issue_severity(const char *code)
{
	for (size_t i = 0; i < sizeof(issue_defs) / sizeof(issue_defs[0]); i++)
		if (strcmp(issue_defs[i].code, code) == 0)
			return issue_defs[i].severity;
	return 0;
}

const char *ergon_issue_code_at(size_t i, int *severity, const char **meaning)
{
	if (i >= sizeof(issue_defs) / sizeof(issue_defs[0]))
		return NULL;
	if (severity)
		*severity = issue_defs[i].severity;
	if (meaning)
		*meaning = issue_defs[i].meaning;
	return issue_defs[i].code;
}

const char *ergon_severity_name(int severity)
{
	switch (severity) {
	case ERGON_SEV_INFO:
		return "info";
	case ERGON_SEV_WARNING:
		return "warning";
	case ERGON_SEV_ERROR:
		return "error";
	default:
		return "unknown";
	}
}

const char *ergon_integrity_name(int integrity)
{
	switch (integrity) {
	case ERGON_INTEGRITY_VALID:
		return "valid";
	case ERGON_INTEGRITY_DEGRADED:
		return "degraded";
	default:
		return "invalid";
	}
}

int ergon_issue_add(json_t *list, const char *code, json_t *context, const char *fmt, ...)
{
	int sev = ergon_issue_severity(code);
	if (sev == 0 || !json_is_array(list)) {
		json_decref(context);
		return ERGON_EUSAGE;
	}
	char raw[1024], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* A message may quote raw input: bytes that are not UTF-8 would make
	 * the JSON string (and so the issue) impossible. */
	ergon_utf8_escape(raw, msg, sizeof(msg));
	json_t *o = json_pack("{s:s, s:s, s:s}", "code", code, "severity",
			      ergon_severity_name(sev), "message", msg);
	if (o == NULL) {
		json_decref(context);
		return ERGON_ENOMEM;
	}
	json_object_set_new(o, "context", context ? context : json_object());
	json_array_append_new(list, o);
	return 0;
}

int ergon_issue_has(const json_t *list, const char *code)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		const char *c = json_string_value(json_object_get(v, "code"));
		if (c && strcmp(c, code) == 0)
			return 1;
	}
	return 0;
}

int ergon_issues_integrity(const json_t *list)
{
	int worst = 0;
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		const char *s = json_string_value(json_object_get(v, "severity"));
		int sev = 0;
		if (s && strcmp(s, "error") == 0)
			sev = ERGON_SEV_ERROR;
		else if (s && strcmp(s, "warning") == 0)
			sev = ERGON_SEV_WARNING;
		if (sev > worst)
			worst = sev;
	}
	if (worst == ERGON_SEV_ERROR)
		return ERGON_INTEGRITY_INVALID;
	if (worst == ERGON_SEV_WARNING)
		return ERGON_INTEGRITY_DEGRADED;
	return ERGON_INTEGRITY_VALID;
}

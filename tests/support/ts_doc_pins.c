/* Numbers stated in the docs, for the tests that pin the code to them
 * (unit/test_pins_docs, unit/test_pins). */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

/* The doc with every run of whitespace made one space. */
char *ts_doc_load(const char *name)
{
	const char *src = getenv("ERGON_SOURCE_DIR");
	if (src == NULL)
		src = ".";
	char *path = ts_strf("%s/docs/%s", src, name);
	char *raw = ts_read_file(path, NULL);
	if (raw == NULL)
		fail_msg("cannot read %s (ERGON_SOURCE_DIR=%s)", path, src);
	free(path);
	size_t j = 0;
	int space = 0;
	for (size_t i = 0; raw[i]; i++) {
		char c = raw[i];
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			space = 1;
			continue;
		}
		if (space && j > 0)
			raw[j++] = ' ';
		space = 0;
		raw[j++] = c;
	}
	raw[j] = 0;
	return raw;
}

/* Match pat at s: literal text, `#` a number (strtod). 1 on a match. */
static int match_at(const char *s, const char *pat, double *out, size_t nmax, size_t *nout)
{
	size_t n = 0;
	while (*pat) {
		if (*pat == '#') {
			char *end;
			if (n == nmax)
				return 0;
			double v = strtod(s, &end);
			if (end == s)
				return 0;
			out[n++] = v;
			s = end;
			pat++;
		} else if (*s++ != *pat++) {
			return 0;
		}
	}
	*nout = n;
	return 1;
}

/* The numbers of the first place in doc where pat matches; fails naming
 * the doc and pattern when none does, or when the count differs. */
void ts_doc_nums(const char *doc, const char *doc_name, const char *pat, double *out,
		 size_t want)
{
	size_t plen = strcspn(pat, "#");
	char *lead = ts_strf("%.*s", (int)plen, pat);
	for (const char *p = strstr(doc, lead); p; p = strstr(p + 1, lead)) {
		size_t n = 0;
		if (match_at(p, pat, out, want, &n) && n == want) {
			free(lead);
			return;
		}
	}
	free(lead);
	fail_msg("docs/%s no longer states \"%s\": the threshold moved in the doc; update "
		 "this pin and the code together",
		 doc_name, pat);
}


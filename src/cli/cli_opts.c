/* The shared option parser and terminal conventions of the ergon CLI
 * (cli_opts.h, docs/internals/cli.md). */
#include "cli_opts.h"

#include "cli.h"

#include <langinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CLI_NAME_MAX 64

void cli_init(struct cli_parser *p, const char *cmd, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->i = 0;
}

int cli_error(struct cli_parser *p, const char *fmt, ...)
{
	if (p->rc)
		return p->rc;
	va_list ap;
	fprintf(stderr, "ergon %s: ", p->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ergon %s --help'.\n", p->cmd);
	p->rc = ERGON_EXIT_USAGE;
	return p->rc;
}

int cli_next(struct cli_parser *p)
{
	if (p->rc)
		return 0;
	p->i++;
	p->matched = 0;
	p->n_names = 0;
	if (p->i >= p->argc)
		return 0;
	if (!p->dashdash && strcmp(p->argv[p->i], "--") == 0) {
		p->dashdash = 1;
		return cli_next(p);
	}
	return 1;
}

static void record(struct cli_parser *p, const char *name)
{
	for (size_t k = 0; k < p->n_names; k++)
		if (strcmp(p->names[k], name) == 0)
			return;
	if (p->n_names < CLI_OPTS_MAX)
		p->names[p->n_names++] = name;
}

/* Match argv[i] against name; with takes_value, *val gets the value (from
 * "=VALUE" or the next argument). Returns 1 on a match (also when the
 * error "needs a value" was printed), 0 otherwise. */
static int match(struct cli_parser *p, const char *name, int takes_value, const char **val)
{
	record(p, name);
	if (p->rc || p->matched || p->dashdash)
		return 0;
	const char *a = p->argv[p->i];
	size_t l = strlen(name);
	if (strncmp(a, name, l) != 0 || (a[l] != '\0' && a[l] != '='))
		return 0;
	p->matched = 1;
	if (!takes_value) {
		if (a[l] == '=')
			cli_error(p, "option '%s' takes no value (got '%s')", name, a);
		return 1;
	}
	if (a[l] == '=') {
		*val = a + l + 1;
		return 1;
	}
	if (p->i + 1 >= p->argc) {
		cli_error(p, "option '%s' needs a value", name);
		return 1;
	}
	*val = p->argv[++p->i];
	return 1;
}

int cli_flag(struct cli_parser *p, const char *name, int *dst)
{
	if (!match(p, name, 0, NULL))
		return 0;
	if (!p->rc)
		*dst = 1;
	return 1;
}

int cli_str(struct cli_parser *p, const char *name, const char **dst)
{
	const char *v = NULL;
	if (!match(p, name, 1, &v))
		return 0;
	if (!p->rc)
		*dst = v;
	return 1;
}

int cli_choice(struct cli_parser *p, const char *name, const char *const *choices, const char **dst)
{
	const char *v = NULL;
	if (!match(p, name, 1, &v))
		return 0;
	if (p->rc)
		return 1;
	for (const char *const *c = choices; *c; c++)
		if (strcmp(*c, v) == 0) {
			*dst = *c;
			return 1;
		}
	char list[512] = "";
	size_t used = 0;
	for (const char *const *c = choices; *c; c++) {
		int n = snprintf(list + used, sizeof(list) - used, "%s%s", c == choices ? "" : ", ",
				 *c);
		if (n < 0 || (size_t)n >= sizeof(list) - used)
			break;
		used += (size_t)n;
	}
	const char *near = cli_nearest_list(v, choices);
	if (near)
		cli_error(p, "%s '%s': did you mean '%s'? (one of: %s)", name, v, near, list);
	else
		cli_error(p, "%s '%s': use one of: %s", name, v, list);
	return 1;
}

static void rule_text(char *out, size_t cap, enum cli_rule rule, double lo, double hi, int integer)
{
	const char *what = integer ? "an integer" : "a number";
	if (integer)
		snprintf(out, cap, "%s in [%.0f, %.0f]", what, lo, hi);
	else if (isinf(hi))
		snprintf(out, cap, "%s %s %g", what, rule == CLI_GT ? ">" : ">=", lo);
	else if (rule == CLI_GT)
		snprintf(out, cap, "%s in (%g, %g]", what, lo, hi);
	else
		snprintf(out, cap, "%s in [%g, %g]", what, lo, hi);
}

int cli_num(struct cli_parser *p, const char *name, enum cli_rule rule, double lo, double hi,
	    double *dst)
{
	const char *v = NULL;
	if (!match(p, name, 1, &v))
		return 0;
	if (p->rc)
		return 1;
	char *end = NULL;
	double d = strtod(v, &end);
	int ok = *v != '\0' && end && *end == '\0' && isfinite(d) &&
		 (rule == CLI_GT ? d > lo : d >= lo) && d <= hi;
	if (!ok) {
		char r[96];
		rule_text(r, sizeof(r), rule, lo, hi, 0);
		cli_error(p, "%s '%s': must be %s", name, v, r);
		return 1;
	}
	*dst = d;
	return 1;
}

int cli_long(struct cli_parser *p, const char *name, long lo, long hi, long *dst)
{
	const char *v = NULL;
	if (!match(p, name, 1, &v))
		return 0;
	if (p->rc)
		return 1;
	char *end = NULL;
	long l = strtol(v, &end, 10);
	if (*v == '\0' || end == NULL || *end != '\0' || l < lo || l > hi) {
		char r[96];
		rule_text(r, sizeof(r), CLI_GE, (double)lo, (double)hi, 1);
		cli_error(p, "%s '%s': must be %s", name, v, r);
		return 1;
	}
	*dst = l;
	return 1;
}

int cli_positional(struct cli_parser *p, const char **dst)
{
	if (p->rc || p->matched || *dst != NULL)
		return 0;
	const char *a = p->argv[p->i];
	if (!p->dashdash && a[0] == '-' && a[1] != '\0')
		return 0;
	p->matched = 1;
	p->positionals++;
	*dst = a;
	return 1;
}

void cli_unknown(struct cli_parser *p)
{
	if (p->rc || p->matched)
		return;
	const char *a = p->argv[p->i];
	if (p->dashdash || a[0] != '-' || a[1] == '\0') {
		cli_error(p, "unexpected argument '%s'", a);
		return;
	}
	char opt[CLI_NAME_MAX];
	snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(a, "="), a);
	const char *near = cli_nearest(opt, p->names, p->n_names);
	if (near)
		cli_error(p, "unknown option '%s'; did you mean '%s'?", opt, near);
	else
		cli_error(p, "unknown option '%s'", opt);
}

int cli_require(struct cli_parser *p, const char *name, const void *value)
{
	if (p->rc == 0 && value == NULL)
		cli_error(p, "missing required option %s", name);
	return p->rc;
}

/* Optimal string alignment distance (Levenshtein + adjacent swaps), bounded
 * inputs. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > CLI_NAME_MAX || lb > CLI_NAME_MAX)
		return (size_t)-1;
	size_t d[CLI_NAME_MAX + 1][CLI_NAME_MAX + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *cli_nearest(const char *given, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	size_t lg = strlen(given);
	const char *prefix = NULL;
	size_t n_prefix = 0;
	for (size_t i = 0; i < n; i++) {
		size_t dist = edit_distance(given, names[i]);
		if (dist < best_d) {
			best_d = dist;
			best = names[i];
		}
		if (lg >= 3 && strncmp(names[i], given, lg) == 0) {
			prefix = names[i];
			n_prefix++;
		}
	}
	/* Strip a leading "--" from the length that sets the tolerance. */
	size_t core = lg > 2 && given[0] == '-' && given[1] == '-' ? lg - 2 : lg;
	size_t tol = core / 3 > 2 ? core / 3 : 2;
	if (best && best_d <= tol && best_d < core)
		return best;
	if (n_prefix == 1)
		return prefix;
	return NULL;
}

const char *cli_nearest_list(const char *given, const char *const *names)
{
	size_t n = 0;
	while (names[n])
		n++;
	return cli_nearest(given, names, n);
}

int cli_utf8(void)
{
	static int cached = -1;
	if (cached < 0) {
		const char *cs = nl_langinfo(CODESET);
		cached = cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
	}
	return cached;
}

const char *cli_sym(const char *utf8, const char *ascii)
{
	return cli_utf8() ? utf8 : ascii;
}

int cli_progress_ok(void)
{
	return isatty(STDERR_FILENO);
}

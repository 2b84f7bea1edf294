/* The shared option parser and terminal conventions of the ergon CLI
 * (cli_opts.h, docs/internals/cli.md). */
#include "cli_opts.h"

#include "cli.h"
#include "ergon/parse.h"
#include "ergon/suggest.h"

#include <float.h>
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
	cli_json_scan(argc, argv, 1);
}

/* "a, b or c" (quoted when quote) into out. */
static void join_names(char *out, size_t cap, const char *const *names, int quote)
{
	size_t used = 0;
	out[0] = '\0';
	for (const char *const *a = names; *a; a++) {
		int n = snprintf(out + used, cap - used, "%s%s%s%s",
				 a == names ? "" : (a[1] ? ", " : " or "), quote ? "'" : "", *a,
				 quote ? "'" : "");
		if (n < 0 || (size_t)n >= cap - used)
			break;
		used += (size_t)n;
	}
}

void cli_init_from(struct cli_parser *p, const char *cmd, int argc, char **argv, int first)
{
	cli_init(p, cmd, argc, argv);
	p->i = first - 1;
}

int cli_action(struct cli_parser *p, const char *const *actions)
{
	char list[256];
	join_names(list, sizeof(list), actions, 1);
	if (p->argc < 2) {
		cli_error(p, "missing action: expected %s", list);
		return -1;
	}
	for (int k = 0; actions[k]; k++)
		if (strcmp(p->argv[1], actions[k]) == 0)
			return k;
	const char *near = cli_nearest_list(p->argv[1], actions);
	if (near)
		cli_error(p, "unknown action '%s'; did you mean '%s'?", p->argv[1], near);
	else
		cli_error(p, "unknown action '%s'; expected %s", p->argv[1], list);
	return -1;
}

int cli_error(struct cli_parser *p, const char *fmt, ...)
{
	if (p->rc)
		return p->rc;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	p->rc = cli_report_error(p->cmd, ERGON_EXIT_USAGE, "EUSAGE", msg, 1);
	return p->rc;
}

/* --color[=WHEN], the global option every command takes (main takes it
 * before the command too): 1 when argv[i] was it (consumed). */
static int color_option(struct cli_parser *p)
{
	const char *a = p->argv[p->i];
	if (p->dashdash || strncmp(a, "--color", 7) != 0 || (a[7] != '\0' && a[7] != '='))
		return 0;
	int when = cli_color_parse(a[7] == '=' ? a + 8 : "");
	if (when < 0) {
		static const char *const whens[] = {"auto", "always", "never", NULL};
		const char *near = cli_nearest_list(a + 8, whens);
		if (near)
			cli_error(p, "--color '%s': did you mean '%s'? (use auto, always or never)",
				  a + 8, near);
		else
			cli_error(p, "--color '%s': use auto, always or never", a + 8);
		return 1;
	}
	cli_color_set((enum cli_color_when)when);
	return 1;
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
	if (color_option(p))
		return cli_next(p);
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

int cli_outdir(struct cli_parser *p, const char *name, const char **dst)
{
	const char *v = NULL;
	if (!match(p, name, 1, &v))
		return 0;
	if (!p->rc) {
		/* v points into argv (writable, by the C standard). */
		*dst = cli_dir((char *)v);
	}
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
	char list[512];
	join_names(list, sizeof(list), choices, 0);
	const char *near = cli_nearest_list(v, choices);
	if (near)
		cli_error(p, "%s '%s': did you mean '%s'? (use %s)", name, v, near, list);
	else
		cli_error(p, "%s '%s': use %s", name, v, list);
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
	double d = NAN;
	struct ergon_err e = {0};
	int prc = ergon_parse_double(v, name, &d, &e);
	int ok = prc == 0 && isfinite(d) && (rule == CLI_GT ? d > lo : d >= lo) && d <= hi;
	if (!ok) {
		char r[96];
		rule_text(r, sizeof(r), rule, lo, hi, 0);
		/* An underflow (1e-400) is not taken as the 0 or denormal strtod
		 * makes of it, even where 0 is in the range: the text says
		 * otherwise. */
		if (prc == ERGON_ERANGE)
			cli_error(p,
				  "%s '%s': must be %s; it underflows (a magnitude under "
				  "%.17g, the smallest normal double, reads as 0 or a "
				  "denormal, not as the value written)",
				  name, v, r, DBL_MIN);
		else
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
	long l = 0;
	struct ergon_err e = {0};
	if (ergon_parse_long(v, name, lo, hi, &l, &e) != 0) {
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
	record(p, "--color"); /* the global option every command takes */
	const char *near = cli_nearest(opt, p->names, p->n_names);
	if (near) {
		cli_error(p, "unknown option '%s'; did you mean '%s'?", opt, near);
		return;
	}
	char list[512] = "";
	size_t used = 0;
	for (size_t k = 0; k < p->n_names; k++) {
		int n =
		    snprintf(list + used, sizeof(list) - used, "%s%s", k ? " " : "", p->names[k]);
		if (n < 0 || (size_t)n >= sizeof(list) - used)
			break;
		used += (size_t)n;
	}
	if (p->n_names)
		cli_error(p, "unknown option '%s'; the options are: %s", opt, list);
	else
		cli_error(p, "unknown option '%s' (this command takes no options)", opt);
}

int cli_require(struct cli_parser *p, const char *name, const void *value)
{
	if (p->rc == 0 && value == NULL)
		cli_error(p, "missing required %s %s", name[0] == '-' ? "option" : "argument",
			  name);
	return p->rc;
}

const char *cli_nearest(const char *given, const char *const *names, size_t n)
{
	/* Options are compared without their leading "--", so the tolerance
	 * (a third of the name) is that of the word. */
	const char *core = strncmp(given, "--", 2) == 0 ? given + 2 : given;
	const char *stripped[CLI_OPTS_MAX] = {0};
	size_t m = 0, lg = strlen(core), n_prefix = 0;
	const char *prefix = NULL;
	for (size_t i = 0; i < n && m < CLI_OPTS_MAX; i++) {
		stripped[m++] = strncmp(names[i], "--", 2) == 0 ? names[i] + 2 : names[i];
		if (lg >= 2 && strncmp(stripped[m - 1], core, lg) == 0) {
			prefix = names[i];
			n_prefix++;
		}
	}
	const char *hit = lg > 1 ? ergon_suggest_nearest(core, stripped, m) : NULL;
	for (size_t k = 0; hit && k < m; k++)
		if (stripped[k] == hit)
			return names[k];
	return n_prefix == 1 ? prefix : NULL;
}

const char *cli_nearest_list(const char *given, const char *const *names)
{
	size_t n = 0;
	while (names[n])
		n++;
	return cli_nearest(given, names, n);
}

/* --quiet on the commands that draw progress (run, record, profile,
 * capture, kernels run): one process, one command; the flag lives with
 * the progress it turns off (cli_term.c). */
int cli_quiet(struct cli_parser *p)
{
	int q = 0;
	int m = cli_flag(p, "--quiet", &q);
	if (q)
		cli_quiet_set(1);
	return m;
}

char *cli_dir(char *dir)
{
	if (dir == NULL)
		return NULL;
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		dir[--l] = '\0';
	return dir;
}

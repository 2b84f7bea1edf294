/* The one option parser every subcommand uses (docs/internals/cli.md).
 *
 *     struct cli_parser p;
 *     cli_init(&p, "analyze", argc, argv);
 *     while (cli_next(&p)) {
 *             if (cli_str(&p, "--out", &out)) {
 *             } else if (cli_num(&p, "--min-window-s", CLI_GT, 0, 1e6, &win)) {
 *             } else if (cli_flag(&p, "--json", &as_json)) {
 *             } else if (cli_positional(&p, &file)) {
 *             } else {
 *                     cli_unknown(&p);
 *             }
 *     }
 *     if (p.rc || cli_require(&p, "--out", out))
 *             return p.rc;
 *
 * Every matcher records its option name, so by the time the chain reaches
 * cli_unknown() the parser knows every option the command accepts and names
 * the nearest one: "unknown option '--jsn'; did you mean '--json'?". One
 * error is printed (stderr, "ergon CMD: ...", then a pointer to --help),
 * p.rc becomes ERGON_EXIT_USAGE and cli_next() stops. "--opt VALUE" and
 * "--opt=VALUE" both work; "--" ends the options. */
#ifndef ERGON_CLI_OPTS_H
#define ERGON_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

#define CLI_OPTS_MAX 96

struct cli_parser {
	const char *cmd;
	int argc;
	char **argv;
	int i;				 /* the argument being matched */
	int rc;				 /* 0, or the exit code of the error already printed */
	int matched;			 /* argv[i] was consumed by a matcher */
	int started;			 /* cli_next was called */
	int dashdash;			 /* after "--": only positionals */
	int positionals;		 /* how many cli_positional accepted */
	const char *names[CLI_OPTS_MAX]; /* every option name tried so far */
	size_t n_names;
};

/* Numeric rules: the value must be > lo, or >= lo; always <= hi. */
enum cli_rule { CLI_GT, CLI_GE };

void cli_init(struct cli_parser *p, const char *cmd, int argc, char **argv);
/* For actions ("config show ..."): options start at argv[first]. */
void cli_init_from(struct cli_parser *p, const char *cmd, int argc, char **argv, int first);
/* An action word (argv[1]) one of actions (NULL-terminated): returns its
 * index, or -1 after printing "unknown action 'x'; did you mean 'y'?" /
 * "missing action" (p->rc set). */
int cli_action(struct cli_parser *p, const char *const *actions);
/* 1 while there is an argument to match and no error so far. */
int cli_next(struct cli_parser *p);
/* --name (no value): sets *dst = 1. */
int cli_flag(struct cli_parser *p, const char *name, int *dst);
/* --name VALUE: *dst points into argv. */
int cli_str(struct cli_parser *p, const char *name, const char **dst);
/* --name DIR, an output folder: trailing slashes dropped (cli_dir). */
int cli_outdir(struct cli_parser *p, const char *name, const char **dst);
/* --name VALUE, VALUE one of choices (NULL-terminated); a mistyped one names
 * the nearest. */
int cli_choice(struct cli_parser *p, const char *name, const char *const *choices,
	       const char **dst);
/* --name NUMBER, a finite number obeying rule with lo, and <= hi. */
int cli_num(struct cli_parser *p, const char *name, enum cli_rule rule, double lo, double hi,
	    double *dst);
/* --name INTEGER in [lo, hi]. */
int cli_long(struct cli_parser *p, const char *name, long lo, long hi, long *dst);
/* An argument that is not an option, when *dst is still NULL (one per
 * call site; a second file is "unexpected argument"). */
int cli_positional(struct cli_parser *p, const char **dst);
/* The current argument matched nothing: "unknown option '--x'; did you mean
 * '--y'?" (or "unexpected argument 'x'"). */
void cli_unknown(struct cli_parser *p);
/* Missing required option: "missing required option --out". Returns p->rc. */
int cli_require(struct cli_parser *p, const char *name, const void *value);
/* A usage error in the parser's command (sets p->rc); returns p->rc. */
int cli_error(struct cli_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The name in names[0..n) nearest to given (edit distance, at most about a
 * third of its length, or a unique prefix), or NULL. */
const char *cli_nearest(const char *given, const char *const *names, size_t n);
/* Same for a NULL-terminated list. */
const char *cli_nearest_list(const char *given, const char *const *names);

/* An output folder as given, without trailing slashes ("run1/" -> "run1",
 * "/" stays), so no "run1//summary.json" is ever printed or recorded.
 * Rewrites the string in place (argv strings are writable); NULL-safe. */
char *cli_dir(char *dir);

/* Terminal and machine output conventions (docs/internals/cli.md "Output
 * rules"; implemented in cli_term.c): */
/* 1 when the locale's character set is UTF-8 (main calls setlocale). */
int cli_utf8(void);
/* utf8 when the terminal can show it, ascii otherwise ("±" / "+/-"). */
const char *cli_sym(const char *utf8, const char *ascii);
/* --json: print value (indented, doubles round-trip) and a newline on
 * stdout. Returns ERGON_EXIT_IO when stdout fails. */
#include <jansson.h>
int cli_print_json(const json_t *value);
/* A plan's relative budget (a --dry-run uncertainty estimate), a term a
 * line: "  NAME  +/- x % (rectangular bound; SOURCE)" or "unknown: WHY";
 * name_w: the name column's width. */
void cli_print_plan_terms(const json_t *budget, int name_w);
/* 1 when the command line holds --json (cli_init looks before any option
 * is matched, so even a usage error in the parser comes out as JSON). In
 * JSON mode stdout gets one JSON document and stderr only JSON lines:
 * {"error": ...}, {"verdict": ...}, {"warning": ...}, {"note": ...}. */
int cli_json_on(void);
void cli_json_set(int on);
/* Looks for "--json" in argv[first..] before any "--" and sets JSON mode. */
void cli_json_scan(int argc, char **argv, int first);
/* The --json document of a command that has no artifact of its own to
 * print: {"command": cmd, ...doc}. Takes doc; returns cli_print_json's
 * code. */
int cli_json_doc(const char *cmd, json_t *doc);
/* 1 when progress may be drawn: stderr is a terminal, --quiet was not
 * given and the output is not --json. */
int cli_progress_ok(void);
/* Matches --quiet (no progress) like cli_flag. */
int cli_quiet(struct cli_parser *p);
/* 1 when --quiet was given. */
int cli_quiet_on(void);
void cli_quiet_set(int on);
/* Redraw the progress line on stderr (printf format, cut to one line);
 * cli_progress_clear() blanks it. Only call them when cli_progress_ok(). */
void cli_progress_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_clear(void);
/* The width of the terminal f is (TIOCGWINSZ, else $COLUMNS, else 80);
 * 0 when f is not a terminal. */
int cli_columns(FILE *f);
/* text from column col on, words wrapped at width (0: not wrapped),
 * continuation lines indented by indent; ends the line. */
void cli_wrap(FILE *f, const char *text, int indent, int col, int width);
/* A step of unknown length (a firmware build): on a terminal only (as
 * cli_progress_ok), a thread redraws "LABEL  N s" every second until
 * cli_ticker_stop(), which blanks the line and returns the seconds (0 when
 * no ticker ran). Nothing else may draw progress meanwhile. */
void cli_ticker_start(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double cli_ticker_stop(void);
/* "12 s", "3 min 05 s": a duration or an ETA for a progress line. */
void cli_duration(char *out, size_t cap, double s);
/* The time left for total steps when done of them took the time since t0
 * (CLOCK_MONOTONIC), at their mean pace, as cli_duration writes it. Returns
 * 1; 0 with out "" when done is 0 (no pace yet). */
struct timespec;
int cli_time_left(char *out, size_t cap, const struct timespec *t0, size_t done, size_t total);

/* Colour (--color=auto|always|never, NO_COLOR): what verdicts and issue
 * severities look like. cli_on(f, style) is the escape sequence that starts
 * style on f, cli_off(f) the one that ends it; both are "" when f gets no
 * colour (not a terminal, NO_COLOR set, TERM=dumb, --color=never, --json).
 *     printf("%sNOT VALID%s\n", cli_on(stdout, CLI_BAD), cli_off(stdout)); */
enum cli_style { CLI_GOOD, CLI_WARN, CLI_BAD, CLI_NOTE, CLI_BOLD };
enum cli_color_when { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };
/* "auto", "always", "never" (also "" for a bare --color: always); -1 for
 * anything else. */
int cli_color_parse(const char *when);
void cli_color_set(enum cli_color_when when);
/* 1 when escape sequences go to f. */
int cli_color(FILE *f);
const char *cli_on(FILE *f, enum cli_style style);
const char *cli_off(FILE *f);
/* The style of an issue severity ("error", "warning", "info") and of a
 * verdict kind (enum ergon_verdict_kind). */
enum cli_style cli_severity_style(const char *severity);
enum cli_style cli_verdict_style(int verdict_kind);

/* Messages on stderr, each one line, in the command's voice:
 *   cli_warn     "ergon CMD: warning: ..."        {"warning": {"command", "message"}}
 *   cli_note     "ergon CMD: ..."                 {"note": {"command", "message"}}
 *   cli_issue    "ergon CMD: SEVERITY: CODE: MSG" nothing with --json: the
 *                document holds its issues
 * The JSON forms are what --json prints instead (one object per line). */
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_note(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_issue(const char *cmd, const char *severity, const char *code, const char *message);
/* The error a command ends with: "ergon CMD: MESSAGE" (with usage, a
 * pointer to --help), or with --json {"error": {"command", "exit",
 * "exit_name", "code", "message"}} on stderr. Returns exit_code.
 * code is the ERGON_E* name ("ENOENT"), NULL when there is none. */
int cli_report_error(const char *cmd, int exit_code, const char *code, const char *message,
		     int usage);

#endif

/* What the ergon CLI prints besides its results, one way in every command
 * (docs/internals/cli.md "Output rules"): JSON mode and the JSON lines it
 * puts on stderr, colour (--color, NO_COLOR), warnings, notes, issues and
 * the error a command ends with. */
#include "cli.h"
#include "cli_opts.h"

#include <jansson.h>
#include <langinfo.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int json_mode;
static enum cli_color_when color_when = CLI_COLOR_AUTO;

void cli_json_set(int on)
{
	json_mode = on;
}

int cli_json_on(void)
{
	return json_mode;
}

void cli_json_scan(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return;
		if (strcmp(argv[i], "--json") == 0)
			json_mode = 1;
	}
}

int cli_color_parse(const char *when)
{
	if (when[0] == '\0' || strcmp(when, "always") == 0)
		return CLI_COLOR_ALWAYS;
	if (strcmp(when, "auto") == 0)
		return CLI_COLOR_AUTO;
	if (strcmp(when, "never") == 0)
		return CLI_COLOR_NEVER;
	return -1;
}

void cli_color_set(enum cli_color_when when)
{
	color_when = when;
}

int cli_color(FILE *f)
{
	/* A JSON document or JSON line never carries escape sequences. */
	if (json_mode || color_when == CLI_COLOR_NEVER)
		return 0;
	if (color_when == CLI_COLOR_ALWAYS)
		return 1;
	/* no-color.org: NO_COLOR present and not empty turns colour off;
	 * --color=always (above) overrides it. */
	const char *nc = getenv("NO_COLOR");
	if (nc && nc[0])
		return 0;
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return 0;
	int fd = f == stdout ? STDOUT_FILENO : f == stderr ? STDERR_FILENO : fileno(f);
	return fd >= 0 && isatty(fd);
}

/* SGR sequences (ECMA-48 8.3.117): green, yellow, bold red, cyan, bold. */
static const char *const sgr[] = {
    [CLI_GOOD] = "\033[32m", [CLI_WARN] = "\033[33m", [CLI_BAD] = "\033[1;31m",
    [CLI_NOTE] = "\033[36m", [CLI_BOLD] = "\033[1m",
};

const char *cli_on(FILE *f, enum cli_style style)
{
	return cli_color(f) ? sgr[style] : "";
}

const char *cli_off(FILE *f)
{
	return cli_color(f) ? "\033[0m" : "";
}

enum cli_style cli_severity_style(const char *severity)
{
	if (severity && strcmp(severity, "error") == 0)
		return CLI_BAD;
	if (severity && strcmp(severity, "warning") == 0)
		return CLI_WARN;
	return CLI_NOTE;
}

enum cli_style cli_verdict_style(int verdict_kind)
{
	return verdict_kind == ERGON_VERDICT_VALID	? CLI_GOOD
	       : verdict_kind == ERGON_VERDICT_DEGRADED ? CLI_WARN
							: CLI_BAD;
}

/* One JSON line on stderr: {"<kind>": body}; takes body. */
static void json_line(const char *kind, json_t *body)
{
	json_t *o = json_object();
	if (o != NULL && body != NULL && json_object_set_new(o, kind, body) == 0) {
		body = NULL;
		json_dumpf(o, stderr, JSON_COMPACT | JSON_ENSURE_ASCII);
		fputc('\n', stderr);
		fflush(stderr);
	}
	json_decref(body);
	json_decref(o);
}

static void message(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
	char msg[2048];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (json_mode) {
		json_line(kind, json_pack("{s:s, s:s}", "command", cmd, "message", msg));
		return;
	}
	if (strcmp(kind, "warning") == 0)
		fprintf(stderr, "ergon %s: %swarning%s: %s\n", cmd, cli_on(stderr, CLI_WARN),
			cli_off(stderr), msg);
	else
		fprintf(stderr, "ergon %s: %s\n", cmd, msg);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message(cmd, "warning", fmt, ap);
	va_end(ap);
}

void cli_note(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message(cmd, "note", fmt, ap);
	va_end(ap);
}

void cli_issue(const char *cmd, const char *severity, const char *code, const char *message)
{
	if (json_mode)
		return;
	fprintf(stderr, "ergon %s: %s%s%s: %s: %s\n", cmd, cli_on(stderr, cli_severity_style(severity)),
		severity ? severity : "?", cli_off(stderr), code ? code : "?", message ? message : "");
}

/* The name of an exit code in ERGON_EXIT_CODES ("io"), or "?". */
static const char *exit_name(int exit_code)
{
	int code;
	const char *name, *meaning;
	for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++)
		if (code == exit_code)
			return name;
	return "?";
}

int cli_report_error(const char *cmd, int exit_code, const char *code, const char *message,
		     int usage)
{
	if (json_mode) {
		json_t *e = json_pack("{s:s?, s:i, s:s, s:s?, s:s}", "command", cmd[0] ? cmd : NULL,
				      "exit", exit_code,
				      "exit_name", exit_name(exit_code), "code", code, "message",
				      message);
		if (e && usage) {
			char help[96];
			snprintf(help, sizeof help, "ergon %s --help", cmd);
			json_object_set_new(e, "help", json_string(help));
		}
		json_line("error", e);
		return exit_code;
	}
	fprintf(stderr, "ergon%s%s: %s\n", cmd[0] ? " " : "", cmd, message);
	if (usage)
		fprintf(stderr, "Try 'ergon%s%s --help'.\n", cmd[0] ? " " : "", cmd);
	return exit_code;
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

void cli_print_plan_terms(const json_t *budget, int name_w)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(budget, "terms"), i, t)
	{
		const char *nm = json_string_value(json_object_get(t, "name"));
		if (json_is_true(json_object_get(t, "known")))
			printf("  %-*s %s %.3g %% (rectangular bound; %s)\n", name_w, nm,
			       cli_sym("±", "+/-"),
			       100.0 * json_number_value(json_object_get(t, "limit")),
			       json_string_value(json_object_get(t, "source")));
		else
			printf("  %-*s unknown: %s\n", name_w, nm,
			       json_string_value(json_object_get(t, "source")));
	}
}

/* --quiet on the commands that draw progress (run, record, profile,
 * capture, kernels run; cli_quiet matches it): one process, one command,
 * so a file-level flag. */
static int quiet_flag;

void cli_quiet_set(int on)
{
	quiet_flag = on;
}

int cli_quiet_on(void)
{
	return quiet_flag;
}

int cli_progress_ok(void)
{
	return !quiet_flag && !cli_json_on() && isatty(STDERR_FILENO);
}

void cli_progress_line(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* One terminal line: cut at 78 columns, the rest of the old line blanked. */
	fprintf(stderr, "\r%-78.78s", line);
	fflush(stderr);
}

void cli_progress_clear(void)
{
	fprintf(stderr, "\r%78s\r", "");
	fflush(stderr);
}

/* The ticker: one thread that redraws "LABEL  N s" every second while a
 * step of unknown length runs (a firmware build), on a terminal only. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int on;
	char label[128];
	struct timespec t0;
} ticker = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void *ticker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ticker.mu);
	while (ticker.on) {
		cli_progress_line("%s  %.0f s", ticker.label, since(&ticker.t0));
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&ticker.cv, &ticker.mu, &until);
	}
	pthread_mutex_unlock(&ticker.mu);
	return NULL;
}

void cli_ticker_start(const char *fmt, ...)
{
	if (!cli_progress_ok() || ticker.on)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ticker.label, sizeof ticker.label, fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_MONOTONIC, &ticker.t0);
	ticker.on = 1;
	if (pthread_create(&ticker.th, NULL, ticker_main, NULL) != 0) {
		ticker.on = 0;
		cli_progress_line("%s", ticker.label); /* once, without the seconds */
	}
}

double cli_ticker_stop(void)
{
	if (!ticker.on)
		return 0;
	pthread_mutex_lock(&ticker.mu);
	ticker.on = 0;
	pthread_cond_signal(&ticker.cv);
	pthread_mutex_unlock(&ticker.mu);
	pthread_join(ticker.th, NULL);
	cli_progress_clear();
	return since(&ticker.t0);
}

int cli_columns(FILE *f)
{
	struct winsize ws;
	int fd = f == stdout ? STDOUT_FILENO : f == stderr ? STDERR_FILENO : fileno(f);
	if (fd < 0 || !isatty(fd))
		return 0; /* a pipe or a file: lines are not wrapped (grep finds them whole) */
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	long n = c ? strtol(c, NULL, 10) : 0;
	return n >= 40 && n <= 1000 ? (int)n : 80;
}

void cli_wrap(FILE *f, const char *text, int indent, int col, int width)
{
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t w = strcspn(p, " ");
		if (width > 0 && col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		} else if (col < indent) {
			fprintf(f, "%*s", indent - col, "");
			col = indent;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
	}
	fputc('\n', f);
}

void cli_duration(char *out, size_t cap, double s)
{
	if (!(s >= 0))
		snprintf(out, cap, "?");
	else if (s < 100)
		snprintf(out, cap, "%.0f s", s);
	else if (s < 3600)
		snprintf(out, cap, "%.0f min %02.0f s", (double)((long)s / 60), (double)((long)s % 60));
	else
		snprintf(out, cap, "%.0f h %02.0f min", (double)((long)s / 3600),
			 (double)(((long)s % 3600) / 60));
}

int cli_time_left(char *out, size_t cap, const struct timespec *t0, size_t done, size_t total)
{
	struct timespec t;
	if (done == 0 || clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
		if (cap > 0)
			out[0] = '\0';
		return 0;
	}
	double el = (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
	cli_duration(out, cap, el / (double)done * (double)(total - done));
	return 1;
}

int cli_print_json(const json_t *value)
{
	if (value == NULL)
		return ERGON_EXIT_OK;
	if (json_dumpf(value, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0 ||
	    fputc('\n', stdout) == EOF || fflush(stdout) != 0)
		return ERGON_EXIT_IO; /* said once, with the exit code, by main (stdout_checked) */
	return ERGON_EXIT_OK;
}

int cli_json_doc(const char *cmd, json_t *doc)
{
	if (doc == NULL) {
		fprintf(stderr, "ergon %s: out of memory for the JSON document\n", cmd);
		return ERGON_EXIT_IO;
	}
	/* "command" first: the object keeps insertion order. */
	json_t *o = json_pack("{s:s}", "command", cmd);
	if (o == NULL || json_object_update(o, doc) != 0) {
		json_decref(o);
		json_decref(doc);
		return cli_report_error(cmd, ERGON_EXIT_IO, "ENOMEM", "out of memory", 0);
	}
	json_decref(doc);
	int rc = cli_print_json(o);
	json_decref(o);
	return rc;
}

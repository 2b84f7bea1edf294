/* ergon: entry point and subcommand dispatch. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/suggest.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERGON_CLI_CMD(n) extern const struct ergon_cli_command ergon_cli_cmd_##n;
#include "ergon_cli_commands.inc"
#undef ERGON_CLI_CMD

static const struct ergon_cli_command *const commands[] = {
#define ERGON_CLI_CMD(n) &ergon_cli_cmd_##n,
#include "ergon_cli_commands.inc"
#undef ERGON_CLI_CMD
	NULL,
};

int ergon_cli_fail(const char *cmd, const struct ergon_err *err)
{
	int exit_code = ergon_exit_code(err->code);
	return cli_report_error(cmd, exit_code, ergon_strerror_name(err->code),
				err->msg[0] ? err->msg : ergon_strerror(err->code),
				exit_code == ERGON_EXIT_USAGE);
}

int ergon_cli_usage(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cli_report_error(cmd, ERGON_EXIT_USAGE, "EUSAGE", msg, 1);
}

int ergon_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

static void print_help(FILE *f)
{
	fprintf(f, "ergon %s - measure what a unit of work really costs on a real device\n\n"
		   "Usage: ergon [--color[=WHEN]] <command> [options]\n"
		   "       ergon <command> --help\n"
		   "       ergon help exit-codes\n"
		   "       ergon --version\n\n"
		   "Every artifact says whether its figures were measured or synthetic.\n"
		   "Documentation: README.md, docs/USAGE.md, docs/METHOD.md,\n"
		   "docs/REPORT_FORMAT.md.\n\n"
		   "Commands:\n",
		ERGON_VERSION);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nOptions:\n"
		   "  --color[=WHEN]  colour for verdicts and issue severities: auto (on a\n"
		   "                  terminal, unless NO_COLOR is set), always, never\n"
		   "  --json          (every command but power-on) one JSON document on stdout,\n"
		   "                  errors as JSON lines on stderr\n"
		   "  -h, --help      this text; ergon COMMAND --help for a command's\n"
		   "  -V, --version   the version\n\n"
		   "Examples:\n"
		   "  ergon doctor\n"
		   "  ergon profile --board sim --power --out sim-run\n"
		   "  ergon report sim-run/summary.json --out sim-run.html\n");
	ergon_cli_exit_codes_print(f, NULL);
}

/* Whether stdout is a pipe whose reader has gone (EPIPE): `ergon run ... |
 * head -1` is a choice, not a failure (docs/RELIABILITY.md). */
static int reader_gone(void)
{
	struct stat st;
	struct pollfd pf = {.fd = STDOUT_FILENO, .events = POLLOUT};
	return fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) && poll(&pf, 1, 0) == 1 &&
	       (pf.revents & POLLERR);
}

/* Every command's stdout is checked here, once, at the end: a write that
 * failed (a full disk, /dev/full, a closed descriptor) is an I/O error,
 * exit 3, unless the command already failed with a more specific code;
 * a reader that has gone is not an error. */
static int stdout_checked(const char *cmd, int rc)
{
	errno = 0;
	int flushed = fflush(stdout) == 0;
	int e = errno;
	if (flushed && !ferror(stdout))
		return rc;
	if ((!flushed && e == EPIPE) || reader_gone())
		return rc;
	char msg[256];
	snprintf(msg, sizeof msg, "cannot write to stdout: %s; what was printed is incomplete",
		 !flushed && e ? strerror(e) : "a write failed");
	int code = rc == ERGON_EXIT_OK || rc == ERGON_EXIT_DEGRADED ? ERGON_EXIT_IO : rc;
	/* With --json a JSON error line, like every other failure. */
	return cli_report_error(cmd, code, "EIO", msg, 0);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);
	return stdout_checked(argc > 1 ? argv[1] : "", rc);
}

static int dispatch(int argc, char **argv)
{
	/* Only the character set: it decides UTF-8 symbols or their ASCII
	 * fallback (cli_sym); numbers keep the C locale's format. */
	setlocale(LC_CTYPE, "");
	/* Global options before the command: --color[=WHEN] (every command
	 * also takes it among its own options). */
	while (argc > 1 && strncmp(argv[1], "--color", 7) == 0 &&
	       (argv[1][7] == '\0' || argv[1][7] == '=')) {
		int when = cli_color_parse(argv[1][7] == '=' ? argv[1] + 8 : "");
		if (when < 0)
			return cli_report_error("", ERGON_EXIT_USAGE, "EUSAGE",
						"--color: use --color=auto, --color=always or "
						"--color=never",
						0);
		cli_color_set((enum cli_color_when)when);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	cli_json_scan(argc, argv, 2);
	if (argc < 2) {
		print_help(stderr);
		return ERGON_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			if (strcmp(argv[2], "exit-codes") == 0)
				return ergon_cli_exit_help(stdout, commands);
			for (size_t i = 0; commands[i]; i++)
				if (strcmp(commands[i]->name, argv[2]) == 0) {
					ergon_cli_print_help(stdout, commands[i]);
					return ERGON_EXIT_OK;
				}
		}
		print_help(stdout);
		return ERGON_EXIT_OK;
	}
	if (strncmp(name, "__", 2) == 0) {
		int rc = ergon_cli_meta(commands, print_help, argc - 1, argv + 1);
		if (rc >= 0)
			return rc;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("ergon %s\n", ERGON_VERSION);
		return ERGON_EXIT_OK;
	}
	for (size_t i = 0; commands[i]; i++) {
		if (strcmp(commands[i]->name, name) != 0)
			continue;
		if (ergon_cli_wants_help(argc - 1, argv + 1)) {
			ergon_cli_print_help(stdout, commands[i]);
			return ERGON_EXIT_OK;
		}
		return commands[i]->run(argc - 1, argv + 1);
	}
	const char *names[64];
	size_t nn = 0;
	for (size_t i = 0; commands[i] && nn < 64; i++)
		names[nn++] = commands[i]->name;
	const char *near = ergon_suggest_nearest(name, names, nn);
	char msg[1024];
	size_t used = 0;
	int w = near ? snprintf(msg, sizeof msg, "unknown command '%.64s'; did you mean '%s'? Commands:",
				name, near)
		     : snprintf(msg, sizeof msg, "unknown command '%.64s'. Commands:", name);
	used = w > 0 ? (size_t)w : 0;
	for (size_t i = 0; commands[i] && used < sizeof msg; i++) {
		w = snprintf(msg + used, sizeof msg - used, " %s", commands[i]->name);
		used += w > 0 ? (size_t)w : 0;
	}
	if (cli_json_on())
		return cli_report_error("", ERGON_EXIT_USAGE, "EUSAGE", msg, 0);
	fprintf(stderr, "ergon: %s\nTry 'ergon --help'.\n", msg);
	return ERGON_EXIT_USAGE;
}

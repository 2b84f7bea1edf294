/* ergon: entry point and subcommand dispatch. */
#include "cli.h"
#include "ergon/suggest.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
	fprintf(stderr, "ergon %s: %s\n", cmd,
		err->msg[0] ? err->msg : ergon_strerror(err->code));
	return ergon_exit_code(err->code);
}

int ergon_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ergon %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ergon %s --help'.\n", cmd);
	return ERGON_EXIT_USAGE;
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
		   "Usage: ergon <command> [options]\n"
		   "       ergon <command> --help\n"
		   "       ergon --version\n\n"
		   "Commands:\n",
		ERGON_VERSION);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
	ergon_cli_exit_codes_print(f, NULL);
	fprintf(f, "\nEvery artifact says whether its figures were measured or synthetic.\n"
		   "Documentation: README.md, docs/METHOD.md, docs/REPORT_FORMAT.md.\n");
}

int main(int argc, char **argv)
{
	/* Only the character set: it decides UTF-8 symbols or their ASCII
	 * fallback (cli_sym); numbers keep the C locale's format. */
	setlocale(LC_CTYPE, "");
	if (argc < 2) {
		print_help(stderr);
		return ERGON_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			if (strcmp(argv[2], "exit-codes") == 0)
				return ergon_cli_exit_help(stdout);
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
	if (near)
		fprintf(stderr, "ergon: unknown command '%s'; did you mean '%s'? Commands:", name,
			near);
	else
		fprintf(stderr, "ergon: unknown command '%s'. Commands:", name);
	for (size_t i = 0; commands[i]; i++)
		fprintf(stderr, " %s", commands[i]->name);
	fprintf(stderr, "\nTry 'ergon --help'.\n");
	return ERGON_EXIT_USAGE;
}

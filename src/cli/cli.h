/* Private header of the ergon CLI: the subcommand contract and helpers.
 *
 * Each src/cli/cmd_<name>.c defines
 *     const struct ergon_cli_command ergon_cli_cmd_<name> = {...};
 * and the table is generated from the file names (CMakeLists.txt). The CLI
 * parses arguments, calls the library, prints, and maps errors to exit
 * codes; it computes no figures.
 */
#ifndef ERGON_CLI_H
#define ERGON_CLI_H

#include "ergon/error.h"

#include <stdio.h>

/* Exit codes: ERGON_EXIT_CODES (ergon/error.h) is the table --help,
 * `ergon help exit-codes` and README print; cli_exit.c decides them. */
enum {
	ERGON_EXIT_OK = 0,
	ERGON_EXIT_MEASUREMENT = 1, /* measurement invalid or refused */
	ERGON_EXIT_USAGE = 2,
	ERGON_EXIT_IO = 3,	 /* I/O or device */
	ERGON_EXIT_DEGRADED = 4, /* artifact written, some figures withheld */
};

struct ergon_cli_command {
	const char *name;
	const char *summary;		   /* one line for `ergon --help` */
	const char *help;		   /* full text for `ergon <name> --help`, with examples */
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
	/* The first word after the name (`ergon db ingest`), NULL-terminated;
	 * NULL when the command has none. Completion reads it. */
	const char *const *actions;
	/* What each exit code means for this command, by code 0..4 (the rows
	 * of ERGON_EXIT_CODES): NULL, the code's general meaning;
	 * CLI_EXIT_NONE, the command never exits with it. --help ends with
	 * them, and the man page and `ergon help exit-codes` print them. */
	const char *exits[5];
};

#define CLI_EXIT_NONE ""

/* Print "ergon <cmd>: <message>" for err to stderr; return its exit code. */
int ergon_cli_fail(const char *cmd, const struct ergon_err *err);
/* Print a usage error and a pointer to --help; returns ERGON_EXIT_USAGE. */
int ergon_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv holds -h or --help before any "--". */
int ergon_cli_wants_help(int argc, char **argv);
struct ergon_verdict;
/* The exit code of a written artifact's verdict (ergon/verdict.h): 0
 * valid, 4 degraded, 1 invalid; unless valid, one line on stderr names the
 * verdict, what decided it and the artifact. Every command that writes an
 * artifact ends with it. */
int ergon_cli_verdict_exit(const char *cmd, const struct ergon_verdict *v, const char *artifact);
/* c->help, the options every command takes, and its exit-code section
 * (cli_exit.c): what --help and the man pages show. */
void ergon_cli_print_help(FILE *f, const struct ergon_cli_command *c);
/* The "Exit codes" section: for c, or the general table when c is NULL. */
void ergon_cli_exit_codes_print(FILE *f, const struct ergon_cli_command *c);
/* `ergon help exit-codes`: the table and each command's meaning of it. */
int ergon_cli_exit_help(FILE *f, const struct ergon_cli_command *const *cmds);
/* The hidden __man and __complete subcommands (cli_meta.c); argv[0] is
 * "__man" or "__complete". Returns an exit code, -1 for another name. */
int ergon_cli_meta(const struct ergon_cli_command *const *cmds, void (*print_help)(FILE *),
		   int argc, char **argv);

#endif

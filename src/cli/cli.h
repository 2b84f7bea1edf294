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

/* Exit codes (documented in --help and README). */
enum {
	ERGON_EXIT_OK = 0,
	ERGON_EXIT_MEASUREMENT = 1, /* measurement invalid or refused */
	ERGON_EXIT_USAGE = 2,
	ERGON_EXIT_IO = 3, /* I/O or device */
};

struct ergon_cli_command {
	const char *name;
	const char *summary;		   /* one line for `ergon --help` */
	const char *help;		   /* full text for `ergon <name> --help`, with examples */
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
	/* The first word after the name (`ergon db ingest`), NULL-terminated;
	 * NULL when the command has none. Completion reads it. */
	const char *const *actions;
};

/* Print "ergon <cmd>: <message>" for err to stderr; return its exit code. */
int ergon_cli_fail(const char *cmd, const struct ergon_err *err);
/* Print a usage error and a pointer to --help; returns ERGON_EXIT_USAGE. */
int ergon_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv holds -h or --help before any "--". */
int ergon_cli_wants_help(int argc, char **argv);
/* The hidden __man and __complete subcommands (cli_meta.c); argv[0] is
 * "__man" or "__complete". Returns an exit code, -1 for another name. */
int ergon_cli_meta(const struct ergon_cli_command *const *cmds, void (*print_help)(FILE *),
		   int argc, char **argv);

#endif

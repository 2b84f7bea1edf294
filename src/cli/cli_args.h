/* Small argument helpers shared by the run, verify and energy-model
 * subcommands: "--flag VALUE" and "--flag=VALUE". */
#ifndef ERGON_CLI_ARGS_H
#define ERGON_CLI_ARGS_H

#include <string.h>

/* If argv[*i] is flag (or flag=...), set *val and advance *i past its value.
 * Returns 1 on a match, 0 if not this flag, -1 if the value is missing. */
static inline int cli_opt(int argc, char **argv, int *i, const char *flag, const char **val)
{
	size_t l = strlen(flag);
	if (strncmp(argv[*i], flag, l) != 0)
		return 0;
	if (argv[*i][l] == '=') {
		*val = argv[*i] + l + 1;
		return 1;
	}
	if (argv[*i][l] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
}

#endif

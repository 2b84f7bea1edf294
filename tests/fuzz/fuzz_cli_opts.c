/* Fuzz the CLI's option parser (src/cli/cli_opts.c, compiled in here: the
 * CLI is not part of libergon). The input is split at NUL bytes into argv;
 * a chain of every matcher kind runs over it. Invariants: the parser stops
 * at the first error with exit code 2, never reads past argv, every value
 * it hands back points into argv, and numbers obey their rule. Run with
 * -close_fd_mask=2: every rejected input prints a usage error. */
#include "cli/cli_opts.c"
#include "cli/cli_term.c"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_ARGS_MAX 32

static int inside(const char *v, char **args, int n)
{
	for (int i = 0; i < n; i++)
		if (v >= args[i] && v <= args[i] + strlen(args[i]))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *args[FZ_ARGS_MAX + 1];
	int n = 0;
	args[n++] = "fuzz";
	for (size_t i = 0; i < size && n < FZ_ARGS_MAX; i += strlen(buf + i) + 1)
		args[n++] = buf + i;
	args[n] = NULL;
	static const char *const choices[] = {"inline", "threaded", NULL};
	const char *out = NULL, *file = NULL, *choice = NULL;
	double num = NAN;
	long l = -1;
	int flag = 0;
	struct cli_parser p;
	cli_init(&p, "fuzz", n, args);
	while (cli_next(&p)) {
		if (cli_flag(&p, "--force", &flag)) {
		} else if (cli_str(&p, "--out", &out)) {
		} else if (cli_outdir(&p, "--dir", &out)) {
		} else if (cli_choice(&p, "--sampler", choices, &choice)) {
		} else if (cli_num(&p, "--window-s", CLI_GT, 0, 1e6, &num)) {
		} else if (cli_long(&p, "--windows", 1, 100000, &l)) {
		} else if (cli_positional(&p, &file)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc != 0 && p.rc != ERGON_EXIT_USAGE)
		abort();
	if (p.i > n)
		abort();
	if ((out && !inside(out, args, n)) || (file && !inside(file, args, n)))
		abort();
	if (choice && strcmp(choice, "inline") != 0 && strcmp(choice, "threaded") != 0)
		abort();
	if (!isnan(num) && !(num > 0 && num <= 1e6))
		abort();
	if (l != -1 && (l < 1 || l > 100000))
		abort();
	free(buf);
	return 0;
}

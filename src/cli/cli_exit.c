/* Exit codes: the one function that turns an artifact's verdict into the
 * exit code (every command that writes an artifact calls it), and the
 * exit-code section of --help, `ergon --help` and `ergon help exit-codes`,
 * printed from ERGON_EXIT_CODES (ergon/error.h) and what each code means
 * for each command (its .exits, in src/cli/cmd_<name>.c). */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/verdict.h"

#include <jansson.h>

#include <string.h>

/* Print text after a prefix of indent columns, wrapped at 79 columns. */
static void wrap(FILE *f, const char *text, int indent, int col)
{
	const char *s = text;
	while (*s) {
		size_t word = strcspn(s, " ");
		if (col > indent && col + 1 + (int)word > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, word, f);
		col += (int)word;
		s += word;
		while (*s == ' ')
			s++;
	}
	fputc('\n', f);
}

void ergon_cli_exit_codes_print(FILE *f, const struct ergon_cli_command *c)
{
	fprintf(f, "\nExit codes (the same in every command; ergon help exit-codes):\n");
	int code;
	const char *name, *meaning;
	for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++) {
		const char *when = c && c->exits[code] ? c->exits[code] : meaning;
		if (when[0] == '\0') /* CLI_EXIT_NONE */
			continue;
		int col = fprintf(f, "  %d  %-9s ", code, name);
		wrap(f, when, 15, col);
	}
}

int ergon_cli_exit_help(FILE *f, const struct ergon_cli_command *const *cmds)
{
	fprintf(f, "Exit codes\n\nOne meaning in every command that writes an artifact:\n");
	int code;
	const char *name, *meaning;
	for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++) {
		int col = fprintf(f, "  %d  %-9s ", code, name);
		wrap(f, meaning, 15, col);
	}
	fprintf(f, "\nA warning leaves a run valid (exit 0) while every figure is published;\n"
		   "`integrity: degraded` in an artifact is such a warning. Exit 4 says figures\n"
		   "were withheld. `ergon compare` answers another question: 0 no regression,\n"
		   "1 a regression, 4 not comparable (docs/COMPARE.md).\n");
	for (size_t k = 0; cmds[k]; k++) {
		fprintf(f, "\nergon %s:\n", cmds[k]->name);
		for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++) {
			const char *when = cmds[k]->exits[code] ? cmds[k]->exits[code] : meaning;
			if (when[0] == '\0')
				continue;
			int col = fprintf(f, "  %d  %-9s ", code, name);
			wrap(f, when, 15, col);
		}
	}
	return ferror(f) ? ERGON_EXIT_IO : ERGON_EXIT_OK;
}

void ergon_cli_print_help(FILE *f, const struct ergon_cli_command *c)
{
	fputs(c->help, f);
	fprintf(f, "\nCommon options:\n"
		   "  --color[=WHEN]   colour for verdicts and issue severities: auto (the\n"
		   "                   default: on a terminal, unless NO_COLOR is set), always,\n"
		   "                   never; also before the command (ergon --color=never %s)\n"
		   "  -h, --help       this text\n",
		c->name);
	ergon_cli_exit_codes_print(f, c);
}

int ergon_cli_verdict_exit(const char *cmd, const struct ergon_verdict *v, const char *artifact)
{
	int code = ergon_verdict_exit_code(v->kind);
	if (code == ERGON_EXIT_OK)
		return code;
	const char *what = code == ERGON_EXIT_DEGRADED ? "DEGRADED" : "NOT VALID";
	if (cli_json_on()) {
		/* The document on stdout holds the verdict; this line says why
		 * the exit status is not 0, as every failing --json command does. */
		json_t *o = json_pack("{s:{s:s, s:i, s:s, s:s, s:s}}", "verdict", "command", cmd,
				      "exit", code, "verdict",
				      code == ERGON_EXIT_DEGRADED ? "degraded" : "invalid", "why",
				      v->why, "artifact", artifact);
		if (o != NULL) {
			json_dumpf(o, stderr, JSON_COMPACT | JSON_ENSURE_ASCII);
			fputc('\n', stderr);
		}
		json_decref(o);
		return code;
	}
	if (code == ERGON_EXIT_DEGRADED)
		fprintf(stderr, "ergon %s: %s%s%s (exit 4): %s; %s was written\n", cmd,
			cli_on(stderr, CLI_WARN), what, cli_off(stderr), v->why, artifact);
	else
		fprintf(stderr,
			"ergon %s: %s%s%s (exit 1): %s; %s keeps what was measured and says "
			"why\n",
			cmd, cli_on(stderr, CLI_BAD), what, cli_off(stderr), v->why, artifact);
	return code;
}

/* Exit codes: the one function that turns an artifact's verdict into the
 * exit code (every command that writes an artifact calls it), and the
 * exit-code section of --help, `ergon --help` and `ergon help exit-codes`,
 * printed from ERGON_EXIT_CODES (ergon/error.h) and the table below of
 * what each code means for each command. */
#include "cli.h"
#include "ergon/verdict.h"

#include <string.h>

/* What each code means for one command, by code 0..4; NULL: it does not
 * occur for this command. Each line is printed after the code's name. */
struct cmd_exits {
	const char *cmd;
	const char *when[5];
};

static const struct cmd_exits table[] = {
    {"run",
     {"the run completed and every figure was derived (a THROTTLED run too)",
      "interrupted, incomplete or a failed check (the report is kept and its issues say "
      "why), or refused",
      NULL, "the instrument, the workload or --out failed",
      "the report was written without its headline figures (several rails, none the "
      "module's total input: run.no_total_rail)"}},
    {"profile",
     {"every stage ran and every figure was published",
      "a stage failed, a check failed (an error issue, named on the NOT VALID line) or "
      "Ctrl-C (what was captured is kept), or refused",
      "usage, or configuration that cannot act", "the board, the probe or the instrument",
      "summary.json was written but the power stage's per-inference figures were withheld "
      "(e.g. power.observation_degraded: no gate window)"}},
    {"capture",
     {"the stream reached HPX_END and its profile was written",
      "no usable profile (pmu.missing), or refused", NULL, NULL,
      "the stream stopped before HPX_END (timeout, end of source): the complete "
      "iterations are written, what followed is missing (pmu.incomplete)"}},
    {"parse",
     {"the log reached HPX_END and its profile was written",
      "no usable profile (pmu.missing; the outputs are still written)", NULL, NULL,
      "the log ends before HPX_END: the complete iterations are written, what followed "
      "is missing (pmu.incomplete)"}},
    {"analyze",
     {"every figure was published (without --facts no per-inference figure is asked for)",
      "a check failed (an error issue, e.g. power.window_observer_mismatch; summary.json "
      "is written and says so)",
      NULL, "the recording cannot be read, or the outputs cannot be written",
      "no gate window qualified (whole-capture figures only), or --facts asked for "
      "per-inference figures and a check withheld them"}},
    {"record",
     {"recorded to its end (--duration-s, the gate's fall, or Ctrl-C)",
      "incomplete: the instrument went away (the file keeps everything before), or "
      "refused",
      NULL, "e.g. a full disk (the file is valid up to what fit)",
      "the file is complete but samples were lost (NaN, never interpolated) or refused "
      "(time went backwards)"}},
    {"verify",
     {"the artifact verifies (whatever verdict it states: it is printed)",
      "it does not verify: the first field that fails is named", NULL,
      "the file cannot be read or is not JSON (the byte where it stops)",
      "(not used: verify writes no artifact)"}},
};

static const struct cmd_exits *find(const char *cmd)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].cmd, cmd) == 0)
			return &table[i];
	return NULL;
}

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

void ergon_cli_exit_codes_print(FILE *f, const char *cmd)
{
	const struct cmd_exits *c = cmd ? find(cmd) : NULL;
	if (cmd && c == NULL)
		return;
	fprintf(f, "\nExit codes (the same in every command; ergon help exit-codes):\n");
	int code;
	const char *name, *meaning;
	for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++) {
		const char *when = c ? c->when[code] : meaning;
		if (c && when == NULL)
			when = meaning;
		int col = fprintf(f, "  %d  %-9s ", code, name);
		wrap(f, when, 15, col);
	}
}

int ergon_cli_exit_help(FILE *f)
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
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		fprintf(f, "\nergon %s:\n", table[k].cmd);
		for (size_t i = 0; ergon_exit_code_at(i, &code, &name, &meaning); i++) {
			const char *when = table[k].when[code] ? table[k].when[code] : meaning;
			int col = fprintf(f, "  %d  %-9s ", code, name);
			wrap(f, when, 15, col);
		}
	}
	return ferror(f) ? ERGON_EXIT_IO : ERGON_EXIT_OK;
}

void ergon_cli_print_help(FILE *f, const struct ergon_cli_command *c)
{
	fputs(c->help, f);
	ergon_cli_exit_codes_print(f, c->name);
}

int ergon_cli_verdict_exit(const char *cmd, const struct ergon_verdict *v, const char *artifact)
{
	int code = ergon_verdict_exit_code(v->kind);
	if (code == ERGON_EXIT_DEGRADED)
		fprintf(stderr, "ergon %s: DEGRADED (exit 4): %s; %s was written\n", cmd, v->why,
			artifact);
	else if (code != ERGON_EXIT_OK)
		fprintf(stderr,
			"ergon %s: NOT VALID (exit 1): %s; %s keeps what was measured and says "
			"why\n",
			cmd, v->why, artifact);
	return code;
}

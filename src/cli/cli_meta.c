/* Hidden subcommands for the build and the shells, derived from the same
 * command table and help text users see, so they cannot drift:
 *   ergon __man --out-dir DIR      ergon(1) and ergon-<cmd>(1) from --help
 *   ergon __man [CMD]              one page on stdout
 *   ergon __complete commands|options CMD|actions CMD|boards|scenarios|instruments|workloads
 * The completion scripts (completions/) call __complete at completion time. */
#include "cli.h"
#include "ergon/config.h"
#include "ergon/instrument.h"
#include "ergon/sim.h"
#include "ergon/workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_PATH_MAX 4096
#define META_OPTS_MAX 128

/* Roff-escape one line of help text: backslashes, minus signs (so options
 * copy-paste as ASCII hyphens), and a leading control character. */
static void roff_text(FILE *f, const char *s, size_t len)
{
	if (len > 0 && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
}

static void roff_line(FILE *f, const char *s, size_t len)
{
	roff_text(f, s, len);
	fputc('\n', f);
}

/* A section heading in help text: an unindented line "Word(s):" alone. */
static int is_heading(const char *s, size_t len)
{
	if (len < 2 || len > 40 || s[len - 1] != ':' || !isupper((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i + 1 < len; i++)
		if (!isalpha((unsigned char)s[i]) && s[i] != ' ')
			return 0;
	return 1;
}

/* 1 when the "--word" at p follows "ergon OTHER" on its line: an option of
 * another subcommand that the help text mentions ("check it with ergon
 * verify ARTIFACT --pubkey PUB"), not one of cmd's own. */
static int other_cmds_option(const char *help, const char *p, const char *cmd)
{
	const char *line = p;
	while (line > help && line[-1] != '\n')
		line--;
	const char *last = NULL;
	for (const char *e = strstr(line, "ergon "); e && e < p; e = strstr(e + 6, "ergon "))
		last = e + 6;
	if (last == NULL || *last == '-')
		return 0;
	size_t l = strlen(cmd);
	return !(strncmp(last, cmd, l) == 0 && (last[l] == ' ' || last[l] == '\n'));
}

/* Every "--word" of cmd's own in its help text, once, in order of
 * appearance. */
static void help_options(FILE *out, const char *help, const char *cmd)
{
	char seen[META_OPTS_MAX][48];
	size_t n = 0;
	for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--")) {
		if (p > help && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
			continue;
		if (other_cmds_option(help, p, cmd))
			continue;
		size_t l = 2;
		while (isalnum((unsigned char)p[l]) || p[l] == '-')
			l++;
		if (l <= 2 || l >= sizeof(seen[0]) || p[l - 1] == '-')
			continue;
		int dup = 0;
		for (size_t k = 0; k < n && !dup; k++)
			dup = strncmp(seen[k], p, l) == 0 && seen[k][l] == '\0';
		if (dup || n >= META_OPTS_MAX)
			continue;
		memcpy(seen[n], p, l);
		seen[n][l] = '\0';
		fprintf(out, "%s\n", seen[n++]);
	}
	fprintf(out, "--help\n");
}

/* A heading in the text --help prints: an unindented line "Word(s):", or
 * the exit-code section's "Exit codes (...):". */
static int is_any_heading(const char *s, size_t len)
{
	return is_heading(s, len) || (len > 11 && strncmp(s, "Exit codes", 10) == 0 &&
				      s[len - 1] == ':');
}

/* The man section (man-pages(7) order) a help heading belongs to. */
enum man_sec { SEC_DESCRIPTION, SEC_OPTIONS, SEC_EXIT, SEC_EXAMPLES, SEC_N };

static enum man_sec heading_section(const char *s, size_t len)
{
	if ((len == 8 && strncmp(s, "Options:", 8) == 0) ||
	    (len == 15 && strncmp(s, "Common options:", 15) == 0))
		return SEC_OPTIONS;
	if (strncmp(s, "Exit codes", 10) == 0)
		return SEC_EXIT;
	if ((len == 9 && strncmp(s, "Examples:", 9) == 0) ||
	    (len == 8 && strncmp(s, "Example:", 8) == 0))
		return SEC_EXAMPLES;
	return SEC_DESCRIPTION;
}

/* Lines of text in no-fill mode, a blank line a paragraph break. */
static void roff_block(FILE *f, const char *p, const char *end)
{
	fputs(".nf\n", f);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len == 0)
			fputs(".fi\n.PP\n.nf\n", f);
		else
			roff_line(f, p, len);
		p += len + (nl ? 1 : 0);
	}
	fputs(".fi\n", f);
}

/* One block of the help text: from a heading (or the start) to the next. */
struct man_block {
	const char *heading; /* NULL: the text before the first heading */
	size_t heading_len;
	const char *body, *end;
	enum man_sec sec;
};

#define MAN_BLOCKS_MAX 32

/* The page of a --help text (`ergon CMD --help` or `ergon --help` after
 * its title line): SYNOPSIS (the Usage lines up to the first blank line),
 * DESCRIPTION (the text after it, and any other heading as a
 * subsection), OPTIONS ("Options:", "Common options:"; when the help has
 * no "Options:" block, the options its text describes are listed and
 * pointed to), EXIT STATUS, EXAMPLES, in that order. Every line of the
 * help text is on the page; only the order of the blocks changes. */
static void man_body(FILE *f, const char *help, const char *cmd)
{
	struct man_block b[MAN_BLOCKS_MAX];
	size_t nb = 0;
	const char *p = help, *end = help + strlen(help);
	/* SYNOPSIS: the first paragraph. */
	const char *syn_end = strstr(p, "\n\n");
	syn_end = syn_end ? syn_end + 1 : end;
	fputs(".SH SYNOPSIS\n", f);
	roff_block(f, p, syn_end - 1 > p ? syn_end - 1 : syn_end);
	p = syn_end;
	while (*p == '\n')
		p++;
	b[nb++] = (struct man_block){NULL, 0, p, end, SEC_DESCRIPTION};
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (is_any_heading(p, len) && nb < MAN_BLOCKS_MAX) {
			b[nb - 1].end = p;
			b[nb++] = (struct man_block){p, len, nl ? nl + 1 : end, end,
						     heading_section(p, len)};
		}
		p += len + (nl ? 1 : 0);
	}
	static const char *const names[SEC_N] = {"DESCRIPTION", "OPTIONS", "EXIT STATUS",
						 "EXAMPLES"};
	for (int sec = 0; sec < SEC_N; sec++) {
		fprintf(f, ".SH %s\n", names[sec]);
		int own_options = 0;
		for (size_t k = 0; k < nb; k++)
			own_options |= b[k].sec == SEC_OPTIONS && b[k].heading_len == 8;
		if (sec == SEC_OPTIONS && !own_options && cmd != NULL) {
			/* The options are described in the text above: name them. */
			fputs("The options of this command are described under DESCRIPTION:\n.PP\n",
			      f);
			char *list = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&list, &len);
			if (m != NULL) {
				help_options(m, help, cmd);
				fclose(m);
			}
			for (char *w = list ? strtok(list, "\n") : NULL; w; w = strtok(NULL, "\n"))
				if (strcmp(w, "--help") != 0 && strcmp(w, "--color") != 0) {
					fputs(".B ", f);
					roff_line(f, w, strlen(w));
					fputs(".br\n", f);
				}
			free(list);
		}
		for (size_t k = 0; k < nb; k++) {
			if (b[k].sec != (enum man_sec)sec)
				continue;
			/* A heading that names the section is the section; any
			 * other becomes a subsection with its own words. */
			if (b[k].heading && (sec == SEC_DESCRIPTION ||
					     strncmp(b[k].heading, "Common options:", 15) == 0)) {
				fputs(".SS ", f);
				roff_line(f, b[k].heading, b[k].heading_len - 1);
			}
			const char *e = b[k].end;
			while (e > b[k].body && e[-1] == '\n')
				e--;
			if (e > b[k].body)
				roff_block(f, b[k].body, e);
		}
	}
}

static void man_cmd(FILE *f, const struct ergon_cli_command *c,
		    const struct ergon_cli_command *const *cmds)
{
	fprintf(f, ".TH ERGON-");
	for (const char *s = c->name; *s; s++)
		fputc(toupper((unsigned char)*s), f);
	fprintf(f, " 1 \"\" \"ergon %s\" \"ergon manual\"\n.SH NAME\nergon\\-", ERGON_VERSION);
	roff_text(f, c->name, strlen(c->name));
	fputs(" \\- ", f);
	roff_line(f, c->summary, strlen(c->summary));
	/* What --help prints: the help text and its exit-code section. */
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (m != NULL) {
		ergon_cli_print_help(m, c);
		fclose(m);
	}
	man_body(f, text ? text : c->help, c->name);
	/* SEE ALSO: ergon(1) and every other command the help text names
	 * ("ergon verify ..."). */
	fputs(".SH SEE ALSO\n.BR ergon (1)", f);
	for (size_t i = 0; cmds[i]; i++) {
		char ref[64];
		snprintf(ref, sizeof ref, "ergon %s ", cmds[i]->name);
		if (cmds[i] != c && strstr(text ? text : c->help, ref))
			fprintf(f, ",\n.BR ergon\\-%s (1)", cmds[i]->name);
	}
	fputs("\n", f);
	free(text);
}

static void man_main(FILE *f, const struct ergon_cli_command *const *cmds,
		     void (*print_help)(FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (m == NULL)
		return;
	print_help(m);
	fclose(m);
	fprintf(f,
		".TH ERGON 1 \"\" \"ergon %s\" \"ergon manual\"\n.SH NAME\n"
		"ergon \\- measure what a unit of work really costs on a real device\n",
		ERGON_VERSION);
	/* print_help's first line is the title; the rest is the body. */
	const char *body = strchr(text, '\n');
	while (body && *body == '\n')
		body++;
	man_body(f, body ? body : "", NULL);
	fputs(".SH SEE ALSO\n", f);
	for (size_t i = 0; cmds[i]; i++)
		fprintf(f, ".BR ergon\\-%s (1)%s\n", cmds[i]->name, cmds[i + 1] ? "," : "");
	free(text);
}

static int write_page(const char *dir, const char *name, const struct ergon_cli_command *c,
		      const struct ergon_cli_command *const *cmds, void (*print_help)(FILE *))
{
	char path[META_PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s.1", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "ergon __man: output path too long: %s/%s.1\n", dir, name);
		return ERGON_EXIT_USAGE;
	}
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "ergon __man: %s: %s\n", path, strerror(errno));
		return ERGON_EXIT_IO;
	}
	if (c)
		man_cmd(f, c, cmds);
	else
		man_main(f, cmds, print_help);
	if (fclose(f) != 0) {
		fprintf(stderr, "ergon __man: %s: %s\n", path, strerror(errno));
		return ERGON_EXIT_IO;
	}
	return ERGON_EXIT_OK;
}

static int man(const struct ergon_cli_command *const *cmds, void (*print_help)(FILE *), int argc,
	       char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--out-dir") == 0) {
		int rc = write_page(argv[2], "ergon", NULL, cmds, print_help);
		char name[128];
		for (size_t i = 0; rc == 0 && cmds[i]; i++) {
			snprintf(name, sizeof(name), "ergon-%s", cmds[i]->name);
			rc = write_page(argv[2], name, cmds[i], cmds, print_help);
		}
		return rc;
	}
	if (argc == 1) {
		man_main(stdout, cmds, print_help);
		return ERGON_EXIT_OK;
	}
	if (argc == 2)
		for (size_t i = 0; cmds[i]; i++)
			if (strcmp(cmds[i]->name, argv[1]) == 0) {
				man_cmd(stdout, cmds[i], cmds);
				return ERGON_EXIT_OK;
			}
	fprintf(stderr, "ergon __man: usage: ergon __man [CMD] | --out-dir DIR\n");
	return ERGON_EXIT_USAGE;
}

static int complete(const struct ergon_cli_command *const *cmds, int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	size_t n = 0;
	if (strcmp(what, "commands") == 0) {
		for (size_t i = 0; cmds[i]; i++)
			printf("%s\n", cmds[i]->name);
	} else if (strcmp(what, "options") == 0 && argc == 3) {
		for (size_t i = 0; cmds[i]; i++)
			if (strcmp(cmds[i]->name, argv[2]) == 0)
				help_options(stdout, cmds[i]->help, cmds[i]->name);
	} else if (strcmp(what, "actions") == 0 && argc == 3) {
		for (size_t i = 0; cmds[i]; i++)
			if (strcmp(cmds[i]->name, argv[2]) == 0 && cmds[i]->actions)
				for (const char *const *a = cmds[i]->actions; *a; a++)
					printf("%s\n", *a);
	} else if (strcmp(what, "boards") == 0) {
		const struct ergon_board *b = ergon_boards(&n);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", b[i].name);
	} else if (strcmp(what, "scenarios") == 0) {
		for (const char *const *s = ergon_sim_scenarios(); s && *s; s++)
			printf("%s\n", *s);
	} else if (strcmp(what, "instruments") == 0) {
		const struct ergon_instrument_driver *const *d = ergon_instrument_drivers(&n);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", d[i]->name);
	} else if (strcmp(what, "workloads") == 0) {
		const struct ergon_workload_driver *const *d = ergon_workload_drivers(&n);
		for (size_t i = 0; i < n; i++)
			if (strcmp(d[i]->name, "builtin") == 0)
				printf("builtin:spin\nbuiltin:memstream\nbuiltin:periodic\n");
			else
				printf("%s:\n", d[i]->name);
	} else {
		fprintf(stderr, "ergon __complete: usage: ergon __complete commands | options CMD "
				"| actions CMD | boards | scenarios | instruments | workloads\n");
		return ERGON_EXIT_USAGE;
	}
	return ERGON_EXIT_OK;
}

int ergon_cli_meta(const struct ergon_cli_command *const *cmds, void (*print_help)(FILE *),
		   int argc, char **argv)
{
	if (strcmp(argv[0], "__man") == 0)
		return man(cmds, print_help, argc, argv);
	if (strcmp(argv[0], "__complete") == 0)
		return complete(cmds, argc, argv);
	return -1;
}

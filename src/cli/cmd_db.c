/* ergon db: keep results in SQLite (default) or PostgreSQL and query them.
 *
 *   ergon db [--db PATH|URL] ingest [--pubkey KEY.pub]... FILE|DIR...
 *   ergon db [--db ...] list [--device D] [--since T]
 *   ergon db [--db ...] show ID
 *   ergon db [--db ...] trend FIGURE --device D [--board B] [--html F] [--out F]
 *   ergon db [--db ...] export --csv|--json QUERY
 *
 * The library verifies and stores; this file walks folders, prints tables
 * and maps errors to exit codes.
 */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/artifact.h"
#include "ergon/db.h"
#include "ergon/fileio.h"
#include "ergon/report_html.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define DB_DIR_DEPTH_MAX 16
#define DB_DIR_ENTRIES_MAX 100000

struct ingest_tally {
	json_t *list; /* --json: one object per artifact, else NULL */
	unsigned ingested, duplicates, refused, skipped;
	/* The files to ingest, in order, and whether each came from a folder. */
	char **paths;
	unsigned char *from_dir;
	size_t n, cap;
	int oom;
};

static void ingest_add(struct ingest_tally *t, const char *path, int from_dir)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **p = realloc(t->paths, cap * sizeof *p);
		if (p)
			t->paths = p;
		unsigned char *f = p ? realloc(t->from_dir, cap) : NULL;
		if (f)
			t->from_dir = f;
		if (!p || !f) {
			t->oom = 1;
			return;
		}
		t->cap = cap;
	}
	t->paths[t->n] = strdup(path);
	if (!t->paths[t->n]) {
		t->oom = 1;
		return;
	}
	t->from_dir[t->n++] = (unsigned char)from_dir;
}

static void refused(struct ingest_tally *t, const char *path, const char *why)
{
	t->refused++;
	if (t->list)
		json_array_append_new(t->list, json_pack("{s:s, s:s, s:s}", "path", path, "result",
							 "refused", "why", why));
	else
		printf("REFUSED   %s: %s\n", path, why);
}

/* One artifact's outcome, once final (its batch committed, or refused). */
static void ingest_done(void *ctx, size_t index, const char *path, int rc, int result,
			const char *key, const struct ergon_err *err)
{
	struct ingest_tally *t = ctx;
	if (rc == 0) {
		if (result == ERGON_DB_INGESTED)
			t->ingested++;
		else
			t->duplicates++;
		const char *what = result == ERGON_DB_INGESTED ? "ingested" : "duplicate";
		if (t->list)
			json_array_append_new(t->list, json_pack("{s:s, s:s, s:s}", "path", path,
								 "result", what, "report_id", key));
		else
			printf("%-9s %s  %s\n", what, key, path);
		return;
	}
	/* Inside a folder, JSON files that are not ergon artifacts at all
	 * (a profile's detailed/ tables) are skipped, not refused. */
	if (t->from_dir[index] && rc == ERGON_EREFUSED && strstr(err->msg, "schema")) {
		t->skipped++;
		return;
	}
	refused(t, path, err->msg);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_json_suffix(const char *name)
{
	size_t n = strlen(name);
	return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* Every *.json under dir, in name order, folders depth-first. */
static void ingest_dir(struct ingest_tally *t, const char *dir, int depth)
{
	if (depth > DB_DIR_DEPTH_MAX) {
		char why[96];
		snprintf(why, sizeof why, "folders nested deeper than %d; ingest it directly",
			 DB_DIR_DEPTH_MAX);
		refused(t, dir, why);
		return;
	}
	DIR *d = opendir(dir);
	if (!d) {
		refused(t, dir, "cannot open folder");
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	for (e = readdir(d); e; e = readdir(d)) {
		if (e->d_name[0] == '.' || n >= DB_DIR_ENTRIES_MAX)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof *nn);
			if (!nn)
				break;
			names = nn;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n && !t->oom; i++) {
		char path[4096];
		int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		struct stat st;
		if (len < 0 || (size_t)len >= sizeof path || stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			ingest_dir(t, path, depth + 1);
		else if (S_ISREG(st.st_mode) && has_json_suffix(names[i]))
			ingest_add(t, path, 1);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int do_ingest(struct ergon_db *db, int argc, char **argv, int json)
{
	struct ingest_tally t = {.list = json ? json_array() : NULL};
	for (int i = 0; i < argc && !t.oom; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			ingest_dir(&t, argv[i], 0);
		else
			ingest_add(&t, argv[i], 0);
	}
	struct ergon_err err = {0};
	int rc =
	    t.oom ? ergon_err_set(&err, ERGON_ENOMEM, "db ingest: out of memory listing files") : 0;
	/* Name the thread after the phase: `ps -L` shows it, and the
	 * fault-injection shim (tests/support/faultinj/) arms on it, so the
	 * disk-full test fails the ingest's writes, not the schema's. */
	prctl(PR_SET_NAME, (unsigned long)"ergon-ingest", 0UL, 0UL, 0UL);
	if (rc == 0)
		rc = ergon_db_ingest_files(db, (const char *const *)t.paths, t.n, ingest_done, &t,
					   &err);
	for (size_t i = 0; i < t.n; i++)
		free(t.paths[i]);
	free(t.paths);
	free(t.from_dir);
	if (json) {
		if (rc) {
			json_decref(t.list);
			return ergon_cli_fail("db", &err);
		}
		int jrc = cli_json_doc("db", json_pack("{s:s, s:i, s:i, s:i, s:i, s:o}", "action",
						       "ingest", "ingested", (int)t.ingested,
						       "duplicate", (int)t.duplicates, "refused",
						       (int)t.refused, "skipped", (int)t.skipped,
						       "artifacts", t.list));
		if (jrc)
			return jrc;
		if (t.refused) {
			char msg[96];
			snprintf(msg, sizeof msg, "%u artifact(s) refused (listed in the document)",
				 t.refused);
			return cli_report_error("db", ERGON_EXIT_MEASUREMENT, "EREFUSED", msg, 0);
		}
		return ERGON_EXIT_OK;
	}
	printf("ingest: %u ingested, %u duplicate, %u refused%s", t.ingested, t.duplicates,
	       t.refused, t.refused ? " (listed above)" : "");
	if (t.skipped)
		printf(", %u non-artifact JSON file(s) skipped", t.skipped);
	printf("\n");
	if (rc)
		return ergon_cli_fail("db", &err);
	return t.refused ? ERGON_EXIT_MEASUREMENT : ERGON_EXIT_OK;
}

/* A result row as a JSON object: integers and finite numbers as numbers,
 * NULL as null, the rest as strings. */
static json_t *row_json(int n, const char *const *names, const char *const *vals)
{
	json_t *o = json_object();
	for (int i = 0; o && i < n; i++) {
		json_t *v;
		char *end = NULL, *iend = NULL;
		double d = vals[i] ? strtod(vals[i], &end) : 0;
		long long ll = vals[i] ? strtoll(vals[i], &iend, 10) : 0;
		if (!vals[i])
			v = json_null();
		else if (vals[i][0] && iend && *iend == '\0')
			v = json_integer(ll);
		else if (vals[i][0] && end && *end == '\0' && isfinite(d))
			v = json_real(d);
		else
			v = json_string(vals[i]);
		json_object_set_new(o, names[i], v);
	}
	return o;
}

/* --json: the rows of list and trend, collected. */
static int json_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	json_array_append_new(ctx, row_json(n, names, vals));
	return 0;
}

/* A column of a result row by name, "" for NULL or missing. */
static const char *col(int n, const char *const *names, const char *const *vals, const char *c)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], c) == 0)
			return vals[i] ? vals[i] : "";
	return "";
}

static int list_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	unsigned *count = ctx;
	if (*count == 0)
		printf("%-27s %-19s %-15s %-10s %-12s %-10s %-9s %s\n", "time", "report_id",
		       "schema", "kind", "device", "board", "provenance", "integrity");
	(*count)++;
	printf("%-27s %-19.19s %-15s %-10s %-12s %-10s %-9s %s\n", col(n, names, vals, "time"),
	       col(n, names, vals, "report_id"), col(n, names, vals, "schema"),
	       col(n, names, vals, "kind"), col(n, names, vals, "device"),
	       col(n, names, vals, "board"), col(n, names, vals, "provenance"),
	       col(n, names, vals, "integrity"));
	return 0;
}

struct trend_ctx {
	unsigned points, counted;
};

static int trend_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct trend_ctx *t = ctx;
	if (t->points == 0)
		printf("%-27s %-19s %-10s %-7s %s\n", "time", "report_id", "provenance", "counted",
		       "value");
	t->points++;
	const char *counted = col(n, names, vals, "counted");
	if (strcmp(counted, "yes") == 0)
		t->counted++;
	const char *u = col(n, names, vals, "u");
	char mark[40] = "";
	if (strcmp(counted, "yes") != 0)
		snprintf(mark, sizeof mark, "  [%s: not a measurement]",
			 strcmp(col(n, names, vals, "provenance"), "measured") == 0
			     ? "invalid"
			     : col(n, names, vals, "provenance"));
	printf("%-27s %-19.19s %-10s %-7s %s%s%s %s%s\n", col(n, names, vals, "time"),
	       col(n, names, vals, "report_id"), col(n, names, vals, "provenance"), counted,
	       col(n, names, vals, "value"), u[0] ? " ± " : "", u, col(n, names, vals, "unit"),
	       mark);
	return 0;
}

/* --out: the sealed ergon.trend artifact; --html: the page `ergon report`
 * makes of it. Both files are checked writable before the query. */
static int trend_files(struct ergon_db *db, const char *figure, const char *device,
		       const char *board, const char *html, const char *out, int force, int json,
		       struct ergon_err *err)
{
	unsigned flags = force ? ERGON_WRITE_FORCE : 0;
	int rc = 0;
	if (html)
		rc = ergon_file_check_writable(html, flags, err);
	if (rc == 0 && out)
		rc = ergon_file_check_writable(out, flags, err);
	json_t *a = NULL;
	if (rc == 0)
		rc = ergon_db_trend_artifact(db, figure, device, board, &a, err);
	if (rc == 0 && out)
		rc = ergon_artifact_write(a, out, flags, err);
	if (rc == 0 && html) {
		char label[320];
		snprintf(label, sizeof label, "ergon db trend %s --device %s%s%s", figure, device,
			 board ? " --board " : "", board ? board : "");
		struct ergon_html_input in = {.path = out ? out : label, .artifact = a};
		rc = ergon_report_html_write(&in, 1, NULL, html, flags, err);
	}
	if (rc == 0 && json) {
		const json_t *t = json_object_get(a, "trend");
		rc = cli_json_doc(
		    "db", json_pack("{s:s, s:s, s:s, s:s?, s:i, s:O, s:O, s:s?, s:s?}", "action",
				    "trend", "figure", figure, "device", device, "board", board,
				    "points", (int)json_array_size(json_object_get(t, "points")),
				    "counted", json_object_get(t, "counted"), "not_counted",
				    json_object_get(t, "not_counted"), "trend", out, "html", html));
		json_decref(a);
		return rc ? ergon_err_set(err, ERGON_EIO, "cannot write the JSON document") : 0;
	}
	if (rc == 0) {
		const json_t *t = json_object_get(a, "trend");
		printf("%zu point(s) for %s on %s: %lld measured (counted), %lld synthetic, "
		       "replayed or invalid (shown, never counted)\n",
		       json_array_size(json_object_get(t, "points")), figure, device,
		       (long long)json_integer_value(json_object_get(t, "counted")),
		       (long long)json_integer_value(json_object_get(t, "not_counted")));
		if (out)
			printf("trend: %s\n", out);
		if (html)
			printf("html: %s\n", html);
	}
	json_decref(a);
	return rc;
}

/* CSV per RFC 4180: quote a field holding a comma, quote or line break. */
static void csv_field(const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

struct export_ctx {
	int json;
	unsigned rows;
	json_t *arr;
};

static int export_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct export_ctx *x = ctx;
	if (x->json) {
		json_array_append_new(x->arr, row_json(n, names, vals));
		x->rows++;
		return 0;
	}
	if (x->rows++ == 0) {
		for (int i = 0; i < n; i++) {
			if (i)
				putchar(',');
			csv_field(names[i]);
		}
		putchar('\n');
	}
	for (int i = 0; i < n; i++) {
		if (i)
			putchar(',');
		csv_field(vals[i] ? vals[i] : "");
	}
	putchar('\n');
	return 0;
}

/* QUERY: one SELECT (or WITH) statement, or the name of a table or view. */
static int export_sql(const char *q, char *buf, size_t cap)
{
	static const char *const tables[] = {
	    "runs",	 "figures",	     "issues",	     "windows",	      "layers",
	    "artifacts", "measured_figures", "run_overview", "schema_version"};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (strcmp(q, tables[i]) == 0) {
			snprintf(buf, cap, "SELECT * FROM %s", q);
			return 0;
		}
	while (*q == ' ' || *q == '\t' || *q == '\n')
		q++;
	if (strncasecmp(q, "select", 6) != 0 && strncasecmp(q, "with", 4) != 0)
		return -1;
	const char *semi = strchr(q, ';');
	if (semi && semi[strspn(semi, "; \t\n")] != '\0')
		return -1;
	if (strlen(q) >= cap)
		return -1;
	snprintf(buf, cap, "%.*s", semi ? (int)(semi - q) : (int)strlen(q), q);
	return 0;
}

/* ergon db changes: the shifts, as the pipeline found them. */
static void print_changes(const json_t *c)
{
	const char *unit = json_string_value(json_object_get(c, "unit"));
	const json_t *shifts = json_object_get(c, "shifts");
	long long n = (long long)json_integer_value(json_object_get(c, "points"));
	if (n == 0) {
		printf("%s on %s: no points%s\n", json_string_value(json_object_get(c, "figure")),
		       json_string_value(json_object_get(c, "device")),
		       json_is_true(json_object_get(c, "all"))
			   ? ""
			   : " that are measurements (counted); --all takes every point");
		return;
	}
	printf("%s on %s: %lld point(s) (%s), PELT at alpha %g (penalty %.4g; the history's "
	       "scatter %.4g %s)\n",
	       json_string_value(json_object_get(c, "figure")),
	       json_string_value(json_object_get(c, "device")), n,
	       json_is_true(json_object_get(c, "all")) ? "every point"
						       : "counted points only; --all for every one",
	       json_number_value(json_object_get(c, "alpha")),
	       json_number_value(json_object_get(c, "penalty")),
	       json_number_value(json_object_get(c, "sigma_data")), unit ? unit : "");
	if (json_string_value(json_object_get(c, "time_note")))
		printf("note: %s\n", json_string_value(json_object_get(c, "time_note")));
	if (n < 4)
		printf("too few points to find a shift (segments hold at least 2)\n");
	printf("%zu shift(s)%s\n", json_array_size(shifts), json_array_size(shifts) ? ":" : "");
	size_t i;
	const json_t *x;
	json_array_foreach(shifts, i, x)
	{
		const json_t *b = json_object_get(x, "before"), *a = json_object_get(x, "after");
		printf("  at point %lld, %s: %.6g %s %.2g -> %.6g %s %.2g %s",
		       (long long)json_integer_value(json_object_get(x, "at")),
		       json_string_value(json_object_get(x, "time")),
		       json_number_value(json_object_get(x, "from")), cli_sym("±", "+/-"),
		       json_number_value(json_object_get(x, "from_se")),
		       json_number_value(json_object_get(x, "to")), cli_sym("±", "+/-"),
		       json_number_value(json_object_get(x, "to_se")), unit ? unit : "");
		if (json_is_number(json_object_get(x, "change_pct")))
			printf(" (%+.2f %%)", json_number_value(json_object_get(x, "change_pct")));
		printf("\n    last before: %s (%s)\n    first after: %s (%s)\n",
		       json_string_value(json_object_get(b, "report_id")),
		       json_string_value(json_object_get(b, "time")),
		       json_string_value(json_object_get(a, "report_id")),
		       json_string_value(json_object_get(a, "time")));
	}
	printf("segments (mean %s its standard error):\n", cli_sym("±", "+/-"));
	json_array_foreach(json_object_get(c, "segments"), i, x)
	{
		const json_t *se = json_object_get(x, "se");
		printf("  points %lld..%lld  %s .. %s  %.6g",
		       (long long)json_integer_value(json_object_get(x, "first")),
		       (long long)(json_integer_value(json_object_get(x, "first")) +
				   json_integer_value(json_object_get(x, "points")) - 1),
		       json_string_value(json_object_get(x, "from_time")),
		       json_string_value(json_object_get(x, "to_time")),
		       json_number_value(json_object_get(x, "mean")));
		if (json_is_number(se))
			printf(" %s %.2g %s\n", cli_sym("±", "+/-"), json_number_value(se),
			       unit ? unit : "");
		else
			printf(" %s (no standard error: the points neither scatter nor state an "
			       "uncertainty)\n",
			       unit ? unit : "");
	}
}

#define DB_ARGS_MAX 256

/* The actions, also completed by `ergon __complete actions db`. */
static const char *const actions[] = {"ingest", "list", "show", "trend", "changes", "export", NULL};

static int run(int argc, char **argv)
{
	const char *target = NULL, *device = NULL, *since = NULL, *board = NULL;
	const char *html = NULL, *trend_out = NULL;
	int csv = 0, json = 0, force = 0, all = 0;
	double alpha = 0;
	char *pos[DB_ARGS_MAX];
	int npos = 0;
	const char *pubkeys[ERGON_DB_KEYS_MAX];
	int nkeys = 0;
	struct cli_parser p;
	cli_init(&p, "db", argc, argv);
	while (cli_next(&p)) {
		const char *arg = NULL;
		if (cli_str(&p, "--db", &target)) {
		} else if (cli_str(&p, "--device", &device)) {
		} else if (cli_str(&p, "--board", &board)) {
		} else if (cli_str(&p, "--since", &since)) {
		} else if (cli_str(&p, "--pubkey", &arg)) {
			if (arg && nkeys == ERGON_DB_KEYS_MAX)
				cli_error(&p, "more than %d --pubkey options", ERGON_DB_KEYS_MAX);
			else if (arg)
				pubkeys[nkeys++] = arg;
		} else if (cli_str(&p, "--html", &html)) {
		} else if (cli_str(&p, "--out", &trend_out)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--all", &all)) {
		} else if (cli_num(&p, "--alpha", CLI_GT, 0, 0.5, &alpha)) {
		} else if (cli_flag(&p, "--csv", &csv)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_positional(&p, &arg)) {
			if (npos >= DB_ARGS_MAX)
				return cli_error(&p, "more than %d arguments", DB_ARGS_MAX);
			pos[npos++] = argv[p.i];
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	if (npos == 0)
		return cli_error(
		    &p, "missing action: expected ingest, list, show, trend, changes or export");
	const char *sub = pos[0];
	int known = 0;
	for (int k = 0; actions[k]; k++)
		known |= strcmp(sub, actions[k]) == 0;
	if (!known) {
		const char *near = cli_nearest_list(sub, actions);
		if (near)
			return cli_error(&p, "unknown action '%s'; did you mean '%s'?", sub, near);
		return cli_error(
		    &p, "unknown action '%s'; expected ingest, list, show, trend, changes or export",
		    sub);
	}
	if (strcmp(sub, "trend") == 0 && (npos != 2 || cli_require(&p, "--device", device)))
		return p.rc ? p.rc : cli_error(&p, "trend: expected one FIGURE");
	if (strcmp(sub, "changes") == 0 && (npos != 2 || cli_require(&p, "--device", device)))
		return p.rc ? p.rc : cli_error(&p, "changes: expected one FIGURE");
	if ((all || alpha > 0) && strcmp(sub, "changes") != 0)
		return cli_error(&p, "--all and --alpha are options of changes (the action is %s)",
				 sub);
	if (strcmp(sub, "show") == 0 && npos != 2)
		return cli_error(&p, "show: expected one report_id");
	if (strcmp(sub, "export") == 0 && (npos != 2 || csv + json != 1))
		return cli_error(&p, "export: expected --csv or --json and one QUERY");
	if (strcmp(sub, "list") == 0 && npos != 1)
		return cli_error(&p, "unexpected argument '%s'", pos[1]);
	if (strcmp(sub, "ingest") == 0 && npos < 2)
		return cli_error(&p, "missing required argument FILE|DIR");
	if ((html || trend_out) && strcmp(sub, "trend") != 0)
		return cli_error(&p, "--html and --out write a trend (the action is %s)", sub);
	if (nkeys && strcmp(sub, "ingest") != 0)
		return cli_error(&p, "--pubkey checks signatures on ingest only (the action is %s)",
				 sub);

	struct ergon_err err = {0};
	/* Inputs first: a FILE|DIR that is not there is I/O (3), named once,
	 * before the database is opened; an artifact that is there and fails
	 * is refused (1) and listed. */
	if (strcmp(sub, "ingest") == 0)
		for (int k = 1; k < npos; k++) {
			struct stat st;
			if (stat(pos[k], &st) != 0) {
				ergon_err_set(&err, ergon_err_from_errno(errno),
					      "%s: %s (nothing was ingested; check the path)", pos[k],
					      strerror(errno));
				return ergon_cli_fail("db", &err);
			}
			/* "run/" is the folder run: its files are run/x.json,
			 * not run//x.json (a missing one is named as given). */
			cli_dir(pos[k]);
		}
	char def[ERGON_DB_TARGET_MAX];
	if (!target) {
		if (ergon_db_default_path(def, &err))
			return ergon_cli_fail("db", &err);
		target = def;
	}
	struct ergon_db *db = NULL;
	if (ergon_db_open(target, ERGON_DB_SCHEMA_VERSION, &db, &err))
		return ergon_cli_fail("db", &err);
	int rc = 0, exit_code = ERGON_EXIT_OK;
	for (int k = 0; k < nkeys && rc == 0; k++) {
		struct ergon_public_key pk;
		rc = ergon_public_key_load(pubkeys[k], &pk, &err);
		if (rc == 0)
			rc = ergon_db_trust_key(db, &pk, &err);
	}
	if (rc) {
		/* a --pubkey file did not load: err names it (below) */
	} else if (strcmp(sub, "ingest") == 0) {
		exit_code = do_ingest(db, npos - 1, pos + 1, json);
	} else if (strcmp(sub, "list") == 0 && json) {
		json_t *rows = json_array();
		rc = ergon_db_list(db, device, since, json_row, rows, &err);
		if (rc == 0)
			exit_code = cli_json_doc(
			    "db", json_pack("{s:s, s:s, s:O}", "action", "list", "database",
					    strcmp(ergon_db_backend_name(db), "sqlite") == 0
						? target
						: "PostgreSQL",
					    "runs", rows));
		json_decref(rows);
	} else if (strcmp(sub, "list") == 0) {
		unsigned count = 0;
		rc = ergon_db_list(db, device, since, list_row, &count, &err);
		if (rc == 0)
			printf("%u run(s) in %s\n", count,
			       strcmp(ergon_db_backend_name(db), "sqlite") == 0 ? target
										: "PostgreSQL");
	} else if (strcmp(sub, "show") == 0) {
		char *text = NULL;
		rc = ergon_db_show(db, pos[1], &text, &err);
		/* The stored text as it was verified: the artifact's own bytes
		 * (older databases hold a compact re-serialisation). */
		if (rc == 0) {
			size_t tl = strlen(text);
			fwrite(text, 1, tl, stdout);
			if (tl == 0 || text[tl - 1] != '\n')
				putchar('\n');
		}
		free(text);
	} else if (strcmp(sub, "changes") == 0) {
		struct ergon_db_changes_opts co = {
		    .figure = pos[1], .device = device, .board = board, .all = all, .alpha = alpha};
		json_t *c = NULL;
		rc = ergon_db_changes(db, &co, &c, &err);
		if (rc == 0 && json)
			exit_code = cli_print_json(c);
		else if (rc == 0)
			print_changes(c);
		json_decref(c);
	} else if (strcmp(sub, "trend") == 0 && (html || trend_out)) {
		rc = trend_files(db, pos[1], device, board, html, trend_out, force, json, &err);
	} else if (strcmp(sub, "trend") == 0 && json) {
		json_t *rows = json_array();
		rc = ergon_db_trend(db, pos[1], device, board, json_row, rows, &err);
		if (rc == 0) {
			int counted = 0;
			size_t k;
			json_t *r;
			json_array_foreach(rows, k, r)
			{
				counted += strcmp(json_string_value(json_object_get(r, "counted")) ?: "",
						  "yes") == 0;
			}
			exit_code = cli_json_doc(
			    "db", json_pack("{s:s, s:s, s:s, s:s?, s:i, s:i, s:O}", "action", "trend",
					    "figure", pos[1], "device", device, "board", board,
					    "counted", counted, "not_counted",
					    (int)json_array_size(rows) - counted, "points", rows));
		}
		json_decref(rows);
	} else if (strcmp(sub, "trend") == 0) {
		struct trend_ctx t = {0};
		rc = ergon_db_trend(db, pos[1], device, board, trend_row, &t, &err);
		if (rc == 0)
			printf("%u point(s) for %s on %s%s%s: %u measured (counted), %u "
			       "synthetic, replayed or invalid (shown, never counted)\n",
			       t.points, pos[1], device, board ? " board " : "", board ? board : "",
			       t.counted, t.points - t.counted);
	} else {
		char sql[8192];
		if (export_sql(pos[1], sql, sizeof sql)) {
			ergon_db_close(db);
			return cli_error(&p,
					 "export: QUERY must be one SELECT or WITH statement "
					 "(under 8 KiB) or a table or view name (runs, figures, "
					 "issues, windows, layers, measured_figures, "
					 "run_overview)");
		}
		struct export_ctx x = {.json = json, .arr = json ? json_array() : NULL};
		rc = ergon_db_query(db, sql, 0, NULL, export_row, &x, &err);
		if (rc == 0 && json)
			exit_code = cli_print_json(x.arr);
		json_decref(x.arr);
	}
	ergon_db_close(db);
	if (rc)
		return ergon_cli_fail("db", &err);
	return exit_code;
}

const struct ergon_cli_command ergon_cli_cmd_db = {
    .actions = actions,
    .name = "db",
    .summary = "keep results in SQLite (default) or PostgreSQL; list, show, trend, export",
    .help = "Usage: ergon db [--db PATH|postgresql://...] SUBCOMMAND ...\n\n"
	    "  ingest [--pubkey KEY.pub]... FILE|DIR...\n"
	    "                                     verify and store artifacts (ergon.report,\n"
	    "                                     ergon.profile summary.json, energy model);\n"
	    "                                     keyed by report_id: twice changes nothing;\n"
	    "                                     with --pubkey only artifacts signed by one of\n"
	    "                                     the keys are stored (signer kept in runs);\n"
	    "                                     400 artifacts (or 32 MiB) per transaction,\n"
	    "                                     each stored whole or refused alone\n"
	    "  list [--device D] [--since T]      runs, newest first (T: 2026-12-01[THH:MM:SSZ])\n"
	    "  show ID                            the stored artifact, the bytes that were\n"
	    "                                     verified (ID: report_id or a prefix)\n"
	    "  trend FIGURE --device D [--board B] [--html PAGE.html] [--out TREND.json]\n"
	    "                                     one figure over time; synthetic, replayed and\n"
	    "                                     invalid points are shown and never counted;\n"
	    "                                     --html: a page like ergon report's, --out: the\n"
	    "                                     sealed ergon.trend artifact (--force replaces)\n"
	    "  changes FIGURE --device D [--board B] [--all] [--alpha A] [--json]\n"
	    "                                     the shifts in the figure's history: PELT on\n"
	    "                                     a mean-shift cost weighted by each point's own\n"
	    "                                     uncertainty, a shift a finding at level A\n"
	    "                                     (default 0.01); each listed with its time, the\n"
	    "                                     level before and after and the report_ids on\n"
	    "                                     either side (docs/METHOD.md); counted points\n"
	    "                                     only unless --all\n"
	    "  export --csv|--json QUERY          one SELECT, or a table or view name\n\n"
	    "--db defaults to $XDG_DATA_HOME/ergon/results.db (else\n"
	    "~/.local/share/ergon/results.db), created with its folder. The schema is in\n"
	    "docs/DB.md; `sqlite3 results.db` and psql work on it directly.\n\n"
	    "Exit codes: 0 ok, 1 an artifact refused (listed), 2 usage, 3 database or I/O.\n\n"
	    "Examples:\n"
	    "  ergon db ingest runs/\n"
	    "  ergon db trend load.mean_power_w --device dut\n"
	    "  ergon db changes energy_per_op.above_idle_j --device dut\n"
	    "  ergon db --db postgresql://ergon@localhost/lab list --device board7\n"
	    "  ergon db export --csv measured_figures > figures.csv\n",
    .run = run,
};

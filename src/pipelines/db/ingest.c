/* `ergon db ingest`: verify artifacts and store them in batches.
 *
 * Kinds (docs/DB.md): ergon.report (ergon run, and profile reports made
 * from HPX logs), ergon.profile (ergon profile's and ergon analyze's
 * summary.json), ergon.kernels (ergon kernels report|run; its cases go to
 * kernel_cases) and measurement-harness/energy-model/v1 (or its old name
 * energy-model/v1). With trusted keys
 * (ergon_db_trust_key) an artifact must also carry a signature by one of
 * them that verifies; the signer is stored either way. An enveloped
 * artifact must verify: its report_id is recomputed
 * (ergon_artifact_check_digest), and a sustained ergon.report also has its
 * figures recomputed from its series (ergon_report_verify, what `ergon
 * verify` runs). An energy model carries no digest of its own (its
 * report_id names the report it came from), so it is keyed by the SHA-256
 * of its own JCS form and its shape is checked.
 *
 * Two phases per batch (ERGON_DB_BATCH_ARTIFACTS artifacts or
 * ERGON_DB_BATCH_BYTES of them, whichever comes first):
 *  1. outside any transaction, each file is read once, parsed from those
 *     bytes, verified, and every row it will store is taken from the
 *     parsed JSON in one walk (figures, issues, windows, layers, kernel
 *     cases; the trend points are the figures again); the JSON is freed;
 *  2. one transaction stores the batch, the artifacts in key order (two
 *     ingesters of the same artifacts never wait on each other in a
 *     circle). Each run row goes in first with ON CONFLICT DO NOTHING
 *     RETURNING: no returned row means the key is already stored (by an
 *     earlier ingest, or by another process now: the insert waits on the
 *     other's uncommitted key), and nothing else of that artifact is
 *     written. Then each table's rows of the whole batch in one insert.
 *     A row that breaks a constraint of the schema cannot be pinned on one
 *     artifact there: the batch is rolled back and stored again with a
 *     savepoint per artifact, so that only that artifact is refused. Any
 *     other failure (a full disk, a lost connection) rolls back the batch.
 * The artifact's text is stored as the bytes that were verified.
 */
#include "db_internal.h"
#include "ergon/artifact.h"
#include "ergon/dynbuf.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/report.h"
#include "ergon/signature.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest artifact accepted: run reports embed their series. */
#define INGEST_MAX_BYTES ((size_t)1 << 30)
/* Deepest object path flattened into figures (e.g. load.energy_j). */
#define FIGURE_DEPTH_MAX 3
#define FIGURE_NAME_MAX 192
/* The text of one artifact's rows (names, numbers, messages). */
#define ROWS_TEXT_MAX ((size_t)256 << 20)
/* A cell that is SQL NULL. */
#define NONE ((size_t)-1)

/* The tables ingest writes row by row (the SQL text is the same on both
 * backends; each backend inserts a table's rows its own fastest way). */
struct table {
	const char *name, *cols;
	int ncols;
};
static const struct table T_ISSUES = {"issues", "report_id, seq, code, severity, message", 5};
/* Figures are taken with schema 6's cells (sem, repetitions: a repeated
 * run's mean); an older database gets the first five (FIG_COLS apart). */
#define FIG_COLS 7
static const struct table T_FIGURES = {"figures",
				       "report_id, name, value, unit, u, sem, repetitions", 7};
static const struct table T_FIGURES_V1 = {"figures", "report_id, name, value, unit, u", 5};
static const struct table T_WINDOWS = {
    "windows", "report_id, idx, t_start_s, duration_s, operations, energy_j, mean_power_w", 7};
static const struct table T_LAYERS = {"layers", "report_id, idx, layer_id, op, counter, value", 6};
static const struct table T_KCASES = {
    "kernel_cases", "report_id, case_name, impl, correct, timed, n, min, median, mean, unit", 10};
static const struct table T_TREND = {"trend_points", ERGON_DB_TREND_COLS, 13};
static const struct table T_TREND_V4 = {"trend_points", ERGON_DB_TREND_COLS_V4, 10};
static const struct table T_ARTIFACT = {"artifacts", "report_id, json", 2};

/* The run row: 17 columns, the signature's two from schema 3 on, and
 * when it ended from schema 6 on. */
#define RUN_COLS 20
static const char sql_run[] =
    "INSERT INTO runs (report_id, schema, schema_version, kind, device, board, firmware_sha,"
    " firmware_image, instrument, instrument_serial, provenance, integrity, time, time_source,"
    " ingested_at, tool_version, source_report_id) VALUES ($1, $2, $3, $4,"
    " COALESCE($5, (SELECT device FROM runs WHERE report_id = $17)), $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17) ON CONFLICT (report_id) DO NOTHING"
    " RETURNING report_id, device";
static const char sql_run_v6[] =
    "INSERT INTO runs (report_id, schema, schema_version, kind, device, board, firmware_sha,"
    " firmware_image, instrument, instrument_serial, provenance, integrity, time, time_source,"
    " ingested_at, tool_version, source_report_id, signer_key_id, signature, time_end) VALUES"
    " ($1, $2, $3, $4, COALESCE($5, (SELECT device FROM runs WHERE report_id = $17)), $6, $7,"
    " $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) ON CONFLICT (report_id)"
    " DO NOTHING RETURNING report_id, device";
static const char sql_run_signed[] =
    "INSERT INTO runs (report_id, schema, schema_version, kind, device, board, firmware_sha,"
    " firmware_image, instrument, instrument_serial, provenance, integrity, time, time_source,"
    " ingested_at, tool_version, source_report_id, signer_key_id, signature) VALUES ($1, $2,"
    " $3, $4, COALESCE($5, (SELECT device FROM runs WHERE report_id = $17)), $6, $7, $8, $9,"
    " $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT (report_id) DO NOTHING"
    " RETURNING report_id, device";
/* An energy model ingested before its report learns the report's device. */
static const char sql_model_device[] = "UPDATE runs SET device = $2 WHERE source_report_id = $1"
				       " AND device IS NULL";
/* Schema 4: an energy model's trend points once its device is known (it
 * had none, so it had no points). It may meet rows a model already has:
 * ON CONFLICT keeps them. */
static const char sql_trend_models[] =
    ERGON_DB_TREND_FILL " AND r.source_report_id = $1 ON CONFLICT DO NOTHING";
static const char sql_trend_models_v4[] =
    ERGON_DB_TREND_FILL_V4 " AND r.source_report_id = $1 ON CONFLICT DO NOTHING";

/* Each artifact's savepoint: statements without parameters run through
 * query(), whose prepared statements the SQLite backend keeps. */
static const char sql_savepoint[] = "SAVEPOINT ergon_artifact";
static const char sql_release[] = "RELEASE SAVEPOINT ergon_artifact";
static const char sql_rollback_to[] = "ROLLBACK TO SAVEPOINT ergon_artifact";

/* Rows of one table: ncols cells each, a cell an offset into the
 * artifact's text (NONE: NULL). */
struct rows {
	size_t n, cap;
	size_t *cell;
};

/* The run row's cells that the trend points copy. */
enum {
	RUN_KEY = 0,
	RUN_DEVICE = 4,
	RUN_BOARD = 5,
	RUN_PROV = 10,
	RUN_INTEGRITY = 11,
	RUN_TIME = 12,
	RUN_TIME_SOURCE = 13
};

/* One artifact of a batch, from its file to its outcome. */
struct art {
	size_t index; /* in the caller's list */
	const char *path;
	char *bytes;	 /* the file, NUL-terminated: stored as it was verified */
	size_t len, cap; /* cap: the buffer's, kept for the next batch's file */
	char key[80];
	int is_model;
	int rc; /* 0, or why it was refused */
	struct ergon_err err;
	int result;   /* ERGON_DB_INGESTED or ERGON_DB_DUPLICATE once stored */
	char *device; /* the device its run row holds (an energy model's from its report) */
	struct ergon_dynbuf text;
	size_t run[RUN_COLS];
	struct rows issues, figures, windows, layers, kcases;
};

/* Taking rows out of one parsed artifact. */
struct extract {
	struct art *a;
	size_t key; /* the key's cell */
	int oom;
};

/* The text s (NULL: NONE) into the artifact's text; its offset. */
static size_t cell(struct extract *x, const char *s)
{
	if (s == NULL)
		return NONE;
	size_t at = x->a->text.len;
	ergon_dynbuf_add(&x->a->text, s, strlen(s) + 1);
	if (ergon_dynbuf_error(&x->a->text))
		x->oom = 1;
	return at;
}

/* A new row of r (ncols cells, NONE until set); NULL when out of memory. */
static size_t *row(struct extract *x, struct rows *r, int ncols)
{
	if (x->oom)
		return NULL;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		size_t *c = realloc(r->cell, cap * (size_t)ncols * sizeof *c);
		if (!c) {
			x->oom = 1;
			return NULL;
		}
		r->cell = c;
		r->cap = cap;
	}
	size_t *c = r->cell + r->n++ * (size_t)ncols;
	for (int i = 0; i < ncols; i++)
		c[i] = NONE;
	return c;
}

/* The shortest text that reads back to the same double (ECMAScript's
 * Number::toString, as the artifact's own canonical form writes it): six
 * times quicker than printf's %.17g, and the same double once stored. */
static const char *num(double v, char buf[ERGON_JCS_NUMBER_MAX])
{
	if (!isfinite(v) || ergon_jcs_format_number(v, buf) < 0)
		return NULL;
	return buf;
}

static const char *jnum(const json_t *v, char buf[ERGON_JCS_NUMBER_MAX])
{
	if (!json_is_number(v))
		return NULL;
	return num(json_number_value(v), buf);
}

/* A UTC time as the database stores it, "YYYY-MM-DDTHH:MM:SS.uuuuuuZ"
 * (ergon_utc_format's form: text order is time order), from an ISO 8601
 * string in UTC with 1 to 9 fraction digits or none; NULL for anything
 * else (an artifact's own text is not trusted to sort). */
static const char *utc_norm(const json_t *v, char out[32])
{
	const char *s = json_string_value(v);
	if (s == NULL)
		return NULL;
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	for (size_t i = 0; i < sizeof shape - 1; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return NULL;
	const char *f = s + sizeof shape - 1;
	char frac[7] = "000000";
	if (*f == '.') {
		size_t k = 0;
		for (f++; *f >= '0' && *f <= '9'; f++, k++)
			if (k < 6)
				frac[k] = *f;
		if (k == 0 || k > 9)
			return NULL;
	}
	if (strcmp(f, "Z") != 0)
		return NULL;
	snprintf(out, 32, "%.19s.%sZ", s, frac);
	return out;
}

/* The unit a field name ends in (docs/REPORT_FORMAT.md: units in names). */
static const char *unit_of(const char *key)
{
	static const struct {
		const char *suffix, *unit;
	} units[] = {{"_j", "J"},	   {"_w", "W"},		 {"_a", "A"},
		     {"_v", "V"},	   {"_c", "C"},		 {"_us", "us"},
		     {"_s", "s"},	   {"_hz", "Hz"},	 {"_pct", "%"},
		     {"_cyc", "cycles"},   {"cycles", "cycles"}, {"_per_s", "1/s"},
		     {"_per_joule", "1/J"}};
	size_t kl = strlen(key);
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t sl = strlen(units[i].suffix);
		if (kl >= sl && strcmp(key + kl - sl, units[i].suffix) == 0)
			return units[i].unit;
	}
	return "";
}

/* An uncertainty field is stored as the ± of its figure, not as a figure. */
static int is_uncertainty(const char *key)
{
	return strstr(key, "_u_") != NULL || strstr(key, "_uncertainty_") != NULL ||
	       strcmp(key, "u") == 0;
}

/* The ± of field key in obj: energy_j -> energy_u_j (run reports),
 * energy_per_inference_j -> energy_per_inference_uncertainty_j (profiles). */
static const json_t *uncertainty_of(const json_t *obj, const char *key)
{
	const char *us = strrchr(key, '_');
	if (!us || us == key)
		return NULL;
	char name[FIGURE_NAME_MAX];
	int n = snprintf(name, sizeof name, "%.*s_u%s", (int)(us - key), key, us);
	if (n > 0 && (size_t)n < sizeof name && json_object_get(obj, name))
		return json_object_get(obj, name);
	n = snprintf(name, sizeof name, "%.*s_uncertainty%s", (int)(us - key), key, us);
	if (n > 0 && (size_t)n < sizeof name)
		return json_object_get(obj, name);
	return NULL;
}

/* Every finite number under obj (objects only; arrays are windows, layers
 * or rails and have tables of their own) as a figure named by its path. */
static void flatten(struct extract *x, const json_t *obj, const char *prefix, int depth)
{
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (x->oom)
			return;
		char name[FIGURE_NAME_MAX];
		int n = snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", k);
		if (n < 0 || (size_t)n >= sizeof name)
			continue;
		if (json_is_object(v) && depth < FIGURE_DEPTH_MAX) {
			flatten(x, v, name, depth + 1);
			continue;
		}
		if (!json_is_number(v) || is_uncertainty(k))
			continue;
		char vb[32], ub[32];
		const char *val = jnum(v, vb);
		if (!val)
			continue;
		size_t *c = row(x, &x->a->figures, FIG_COLS);
		if (!c)
			return;
		c[0] = x->key;
		c[1] = cell(x, name);
		c[2] = cell(x, val);
		c[3] = cell(x, unit_of(k));
		c[4] = cell(x, jnum(uncertainty_of(obj, k), ub));
	}
}

/* A repeated run (docs/REPORT_FORMAT.md, figures.repeat): each figure's
 * mean over the repetitions under the figure's own name, so that its
 * trend holds repeated and single runs alike, with the instrument's ±
 * (u_instrument), the standard error of the mean and the number of
 * repetitions (stored from schema 6 on). The statistics themselves stay
 * under repeat.figures.* (figures.repeat.figures.<group>.<key>: each
 * figure's statistics, an object with its n and mean). */
static void take_repeat_means(struct extract *x, const json_t *figs)
{
	const char *g, *k;
	const json_t *grp, *f;
	json_object_foreach((json_t *)figs, g, grp)
	{
		json_object_foreach((json_t *)grp, k, f)
		{
			const json_t *n = json_object_get(f, "n");
			char vb[ERGON_JCS_NUMBER_MAX], ub[ERGON_JCS_NUMBER_MAX];
			char sb[ERGON_JCS_NUMBER_MAX], nb[24], name[FIGURE_NAME_MAX];
			const char *val = jnum(json_object_get(f, "mean"), vb);
			int len = snprintf(name, sizeof name, "%s.%s", g, k);
			if (!json_is_integer(n) || !val || len < 0 || (size_t)len >= sizeof name)
				continue;
			snprintf(nb, sizeof nb, "%lld", (long long)json_integer_value(n));
			size_t *c = row(x, &x->a->figures, FIG_COLS);
			if (!c)
				return;
			c[0] = x->key;
			c[1] = cell(x, name);
			c[2] = cell(x, val);
			c[3] = cell(x, unit_of(k)); /* the unit a single run's figure has */
			c[4] = cell(x, jnum(json_object_get(f, "u_instrument"), ub));
			c[5] = cell(x, jnum(json_object_get(f, "sem"), sb));
			c[6] = cell(x, nb);
		}
	}
}

static void take_issues(struct extract *x, const json_t *issues)
{
	size_t i;
	const json_t *it;
	json_array_foreach(issues, i, it)
	{
		char seq[24];
		snprintf(seq, sizeof seq, "%zu", i);
		const char *code = json_string_value(json_object_get(it, "code"));
		size_t *c = row(x, &x->a->issues, T_ISSUES.ncols);
		if (!c)
			return;
		c[0] = x->key;
		c[1] = cell(x, seq);
		c[2] = cell(x, code ? code : "(none)");
		c[3] = cell(x, json_string_value(json_object_get(it, "severity")));
		c[4] = cell(x, json_string_value(json_object_get(it, "message")));
	}
}

/* Windows: a run report's throughput windows, a profile's gated windows. */
static void take_windows(struct extract *x, const json_t *windows)
{
	size_t i;
	const json_t *w;
	json_array_foreach(windows, i, w)
	{
		char idx[24], b[32];
		snprintf(idx, sizeof idx, "%zu", i);
		const json_t *t0 = json_object_get(w, "t_start_s");
		if (!t0)
			t0 = json_object_get(w, "start_s");
		const json_t *pw = json_object_get(w, "mean_power_w");
		if (!pw)
			pw = json_object_get(w, "avg_power_w");
		size_t *c = row(x, &x->a->windows, T_WINDOWS.ncols);
		if (!c)
			return;
		c[0] = x->key;
		c[1] = cell(x, idx);
		c[2] = cell(x, jnum(t0, b));
		c[3] = cell(x, jnum(json_object_get(w, "duration_s"), b));
		c[4] = cell(x, jnum(json_object_get(w, "operations"), b));
		c[5] = cell(x, jnum(json_object_get(w, "energy_j"), b));
		c[6] = cell(x, jnum(pw, b));
	}
}

static void layer_row(struct extract *x, size_t idx, size_t id, size_t op, const char *counter,
		      const char *value)
{
	size_t *c = row(x, &x->a->layers, T_LAYERS.ncols);
	if (!c)
		return;
	c[0] = x->key;
	c[1] = idx;
	c[2] = id;
	c[3] = op;
	c[4] = cell(x, counter);
	c[5] = cell(x, value);
}

/* Layers: one row per layer and counter (cycles included). */
static void take_layers(struct extract *x, const json_t *layers)
{
	size_t i;
	const json_t *l;
	json_array_foreach(layers, i, l)
	{
		char idx[24], id[24], vb[32];
		snprintf(idx, sizeof idx, "%zu", i);
		const json_t *jid = json_object_get(l, "id");
		const char *pid = NULL;
		if (json_is_integer(jid)) {
			snprintf(id, sizeof id, "%lld", (long long)json_integer_value(jid));
			pid = id;
		}
		size_t cidx = cell(x, idx), cid = cell(x, pid);
		size_t cop = cell(x, json_string_value(json_object_get(l, "op")));
		const char *cyc = jnum(json_object_get(l, "cycles"), vb);
		if (cyc)
			layer_row(x, cidx, cid, cop, "cycles", cyc);
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)json_object_get(l, "counters"), k, v)
		{
			if (strcmp(k, "cycles") != 0)
				layer_row(x, cidx, cid, cop, k, jnum(v, vb));
		}
	}
}

/* Kernels: one row per case and implementation (a failed one untimed). */
static void take_kernel_cases(struct extract *x, const json_t *sec)
{
	const char *unit = json_string_value(json_object_get(sec, "unit"));
	size_t i, k;
	const json_t *c, *im;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		json_array_foreach(json_object_get(c, "impls"), k, im)
		{
			const char *name = json_string_value(json_object_get(c, "case"));
			const char *impl = json_string_value(json_object_get(im, "impl"));
			if (!name || !impl)
				continue;
			char n[24], b[32];
			const json_t *jn = json_object_get(im, "n");
			if (json_is_integer(jn))
				snprintf(n, sizeof n, "%lld", (long long)json_integer_value(jn));
			const json_t *ok = json_object_get(im, "correct");
			const json_t *timed = json_object_get(im, "timed");
			size_t *r = row(x, &x->a->kcases, T_KCASES.ncols);
			if (!r)
				return;
			r[0] = x->key;
			r[1] = cell(x, name);
			r[2] = cell(x, impl);
			r[3] = cell(x, json_is_boolean(ok) ? (json_is_true(ok) ? "1" : "0") : NULL);
			r[4] = cell(x, json_is_boolean(timed) ? (json_is_true(timed) ? "1" : "0")
							      : NULL);
			r[5] = cell(x, json_is_integer(jn) ? n : NULL);
			r[6] = cell(x, jnum(json_object_get(im, "min"), b));
			r[7] = cell(x, jnum(json_object_get(im, "median"), b));
			r[8] = cell(x, jnum(json_object_get(im, "mean"), b));
			r[9] = cell(x, unit);
		}
	}
}

static const char *str_at(const json_t *j, const char *a, const char *b)
{
	const json_t *o = json_object_get(j, a);
	return json_string_value(b ? json_object_get(o, b) : o);
}

/* Verify according to kind and compute the key; nothing is stored yet. */
static int verify(const char *path, const json_t *j, const char *schema, char key[80],
		  struct ergon_err *err)
{
	struct ergon_err e = {0};
	int rc;
	if (ERGON_IS_ENERGY_MODEL_SCHEMA(schema)) {
		const json_t *vals = json_object_get(j, "values");
		const char *rid = json_string_value(json_object_get(j, "report_id"));
		const char *prov = json_string_value(json_object_get(j, "provenance"));
		if (!json_is_object(vals) || json_object_size(vals) == 0)
			return ergon_err_set(err, ERGON_EVERIFY,
					     "%s: an energy model without values: not an energy "
					     "model ergon wrote; refused",
					     path);
		if (!rid || strncmp(rid, "sha256:", 7) != 0 || strlen(rid) != 71)
			return ergon_err_set(
			    err, ERGON_EVERIFY,
			    "%s: field report_id: not sha256:<64 hex> of the source "
			    "report; refused",
			    path);
		if (!prov || !ergon_provenance_parse(prov))
			return ergon_err_set(
			    err, ERGON_EVERIFY,
			    "%s: field provenance: '%s' is not measured, synthetic "
			    "or replayed; refused",
			    path, prov ? prov : "(missing)");
		char *canon = NULL;
		size_t len = 0;
		rc = ergon_jcs_canonicalize(j, &canon, &len, &e);
		if (rc)
			return ergon_err_set(err, rc, "%s: %s", path, e.msg);
		char hex[65];
		ergon_sha256_hex(canon, len, hex);
		free(canon);
		snprintf(key, 80, "sha256:%s", hex);
		return 0;
	}
	const char *rid = json_string_value(json_object_get(j, "report_id"));
	if (!rid || strlen(rid) >= 80)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: no report_id: not a sealed ergon artifact; refused",
				     path);
	rc = ergon_artifact_verify(j, &e);
	if (rc)
		return ergon_err_set(err, ERGON_EVERIFY, "%s: fails verification: %s; refused",
				     path, e.msg);
	snprintf(key, 80, "%s", rid);
	return 0;
}

/* What ingest knows of an artifact's signature (runs.signature). */
struct sig_state {
	const char *status; /* "verified", "not checked" or "unsigned" */
	char key_id[ERGON_KEY_ID_MAX];
};

/* With trusted keys: the artifact must be signed by one of them and the
 * signature must verify (its digest was checked by verify() already).
 * Without: the claimed signer is kept, marked not checked. */
static int check_signature(const struct ergon_db *db, const char *path, const json_t *j,
			   const char *schema, struct sig_state *sig, struct ergon_err *err)
{
	int signed_ = ergon_artifact_signer(j, sig->key_id);
	if (db->nkeys == 0) {
		sig->status = signed_ ? "not checked" : "unsigned";
		if (!signed_)
			sig->key_id[0] = '\0';
		return 0;
	}
	if (ERGON_IS_ENERGY_MODEL_SCHEMA(schema))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: an energy model has no report_id of its own, so no "
				     "signature can bind it, and ingest with --pubkey stores "
				     "signed artifacts only; refused (ingest energy models "
				     "without --pubkey, or rebuild them from the signed report)",
				     path);
	if (!signed_)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: unsigned, and ingest with --pubkey stores signed "
				     "artifacts only; refused (sign it with `ergon sign --key "
				     "KEY %s`, or ingest without --pubkey)",
				     path, path);
	char trusted[ERGON_DB_KEYS_MAX * (ERGON_KEY_ID_MAX + 2)] = "";
	for (int i = 0; i < db->nkeys; i++) {
		if (strcmp(db->keys[i].key_id, sig->key_id) != 0) {
			size_t n = strlen(trusted);
			snprintf(trusted + n, sizeof trusted - n, "%s%s", n ? ", " : "",
				 db->keys[i].key_id);
			continue;
		}
		struct ergon_err e = {0};
		if (ergon_artifact_check_signature(j, &db->keys[i], &e))
			return ergon_err_set(err, ERGON_EVERIFY, "%s: bad signature: %s; refused",
					     path, e.msg);
		sig->status = "verified";
		return 0;
	}
	return ergon_err_set(err, ERGON_EVERIFY,
			     "%s: signed by %s, which is none of the --pubkey keys (%s); refused "
			     "(add that signer's public key with --pubkey if you trust it)",
			     path, sig->key_id, trusted);
}

/* The run row and every other row of the parsed artifact j, in one walk. */
static void take_rows(struct extract *x, struct ergon_db *db, const json_t *j, const char *schema,
		      const struct sig_state *sig)
{
	struct art *a = x->a;
	int is_profile = strcmp(schema, "ergon.profile") == 0;
	int is_kernels = strcmp(schema, "ergon.kernels") == 0;
	char now[32], sv[24];
	ergon_db_now_utc(now);
	snprintf(sv, sizeof sv, "%lld",
		 (long long)json_integer_value(json_object_get(j, "schema_version")));
	if (a->is_model)
		snprintf(sv, sizeof sv, "1");
	const char *device = str_at(j, "device", "name");
	const char *board = str_at(j, "board", "name");
	if (!board)
		board = json_string_value(json_object_get(
		    json_object_get(json_object_get(j, "provenance"), "target"), "board"));
	if (!device)
		device = board;
	char instr[256] = "";
	const json_t *ins = json_object_get(j, "instrument");
	if (json_is_object(ins)) {
		const char *drv = json_string_value(json_object_get(ins, "driver"));
		const char *ven = json_string_value(json_object_get(ins, "vendor"));
		const char *mod = json_string_value(json_object_get(ins, "model"));
		snprintf(instr, sizeof instr, "%s%s%s%s%s", drv ? drv : "", ven ? " " : "",
			 ven ? ven : "", mod ? " " : "", mod ? mod : "");
	}
	const char *prov = a->is_model ? json_string_value(json_object_get(j, "provenance"))
				       : str_at(j, "provenance", "kind");
	/* The time of the result (docs/DB.md, runs.time_source): when it was
	 * measured, as its measurement_time says ("measured": ergon read both
	 * clocks around the measurement; "recording": the recording's own UTC
	 * track), else a recording's capture start named in its provenance
	 * ("artifact", artifacts written before measurement_time), else when
	 * it was ingested ("ingested": not a measurement time; taken now, in
	 * the order of the files). */
	const json_t *mt = json_object_get(j, "measurement_time");
	char tb[32], teb[32];
	const char *t = NULL, *tsrc = "ingested", *tend = NULL;
	if ((t = utc_norm(json_object_get(mt, "start_utc"), tb)) != NULL) {
		tend = utc_norm(json_object_get(mt, "end_utc"), teb);
		tsrc = json_is_number(json_object_get(mt, "start_monotonic_s")) ? "measured"
										 : "recording";
	} else {
		t = json_string_value(json_object_get(
		    json_object_get(json_object_get(j, "provenance"), "recording"),
		    "capture_start_utc"));
		if (t)
			tsrc = "artifact";
	}
	const json_t *fw = json_object_get(j, "firmware");
	const char *kind =
	    a->is_model ? "energy-model" : json_string_value(json_object_get(j, "kind"));
	if (is_kernels && !kind)
		kind = "kernels";
	if (is_profile && !kind)
		kind = json_object_get(j, "power") && !json_is_null(json_object_get(j, "power"))
			   ? (json_object_get(j, "stages") ? "profile" : "analyze")
			   : "profile";
	const char *p[RUN_COLS] = {a->key,
				   schema,
				   sv,
				   kind,
				   device,
				   board,
				   json_string_value(json_object_get(fw, "sha256")),
				   str_at(json_object_get(j, "stages"), "pmu", "image"),
				   instr[0] ? instr : NULL,
				   json_string_value(json_object_get(ins, "serial")),
				   prov ? prov : "unknown",
				   json_string_value(json_object_get(j, "integrity")),
				   t ? t : now,
				   tsrc,
				   now,
				   str_at(j, "tool", "version"),
				   a->is_model ? json_string_value(json_object_get(j, "report_id"))
					       : NULL,
				   sig->key_id[0] ? sig->key_id : NULL,
				   sig->status,
				   tend};
	for (int i = 0; i < RUN_COLS; i++)
		a->run[i] = cell(x, p[i]);
	x->key = a->run[RUN_KEY];

	take_issues(x, json_object_get(j, "issues"));
	if (a->is_model) {
		const char *k;
		const json_t *v;
		char vb[32], ub[32];
		json_object_foreach((json_t *)json_object_get(j, "values"), k, v)
		{
			char name[FIGURE_NAME_MAX];
			snprintf(name, sizeof name, "values.%s", k);
			const char *val = jnum(v, vb);
			size_t *c = val ? row(x, &a->figures, FIG_COLS) : NULL;
			if (!c)
				continue;
			c[0] = x->key;
			c[1] = cell(x, name);
			c[2] = cell(x, val);
			c[3] = cell(x, "J");
			c[4] = cell(x, jnum(json_object_get(j, "uncertainty_j_per_operation"), ub));
		}
	} else if (is_kernels) {
		if (db->version >= 3)
			take_kernel_cases(x, json_object_get(j, "kernels"));
	} else if (is_profile) {
		if (json_is_object(json_object_get(j, "power")))
			flatten(x, json_object_get(j, "power"), "power", 1);
		const json_t *prof = json_object_get(j, "profile");
		if (json_is_object(prof)) {
			flatten(x, prof, "profile", 1);
			if (db->version >= 2)
				take_layers(x, json_object_get(prof, "layers"));
		}
		if (db->version >= 2)
			take_windows(x, json_object_get(json_object_get(j, "power"), "windows"));
	} else {
		flatten(x, json_object_get(j, "figures"), "", 0);
		take_repeat_means(
		    x, json_object_get(json_object_get(json_object_get(j, "figures"), "repeat"),
				       "figures"));
		if (db->version >= 2)
			take_windows(x,
				     json_object_get(json_object_get(json_object_get(j, "figures"),
								     "throughput"),
						     "windows"));
	}
}

/* Errors that belong to the artifact (refuse it, go on) rather than to
 * the machine (stop): what the file holds, or that it cannot be read. */
static int artifact_fault(int code)
{
	return code == ERGON_EVERIFY || code == ERGON_EREFUSED || code == ERGON_EPARSE ||
	       code == ERGON_ETOOBIG || code == ERGON_ENOENT || code == ERGON_EACCES ||
	       code == ERGON_ERANGE;
}

/* Phase 1 for one file: read, parse, verify, check the signature and take
 * its rows. Nothing touches the database. The artifact's own faults are
 * kept in a->rc (returns 0); anything else is returned. */
static int prepare(struct ergon_db *db, struct art *a, struct ergon_err *err)
{
	struct ergon_err e = {0};
	json_t *j = NULL;
	int rc = ergon_file_read_reuse(a->path, INGEST_MAX_BYTES, &a->bytes, &a->cap, &a->len, &e);
	const char *nul = rc == 0 ? memchr(a->bytes, '\0', a->len) : NULL;
	if (nul)
		/* The text is stored as a string: no NUL byte (JSON has none). */
		rc = ergon_err_set(&e, ERGON_EPARSE,
				   "%s: byte %zu is a NUL byte; not a JSON text (was the file "
				   "damaged?); refused",
				   a->path, (size_t)(nul - a->bytes));
	if (rc == 0)
		rc = ergon_artifact_parse(a->path, a->bytes, a->len, &j, &e);
	const char *schema = rc == 0 ? json_string_value(json_object_get(j, "schema")) : NULL;
	if (rc == 0 && !schema) {
		rc = ergon_err_set(&e, ERGON_EREFUSED,
				   "%s: no field schema: not an ergon artifact; refused", a->path);
	} else if (rc == 0 && strcmp(schema, "ergon.report") != 0 &&
		   strcmp(schema, "ergon.profile") != 0 && strcmp(schema, "ergon.kernels") != 0 &&
		   !ERGON_IS_ENERGY_MODEL_SCHEMA(schema)) {
		rc = ergon_err_set(&e, ERGON_EREFUSED,
				   "%s: schema '%s' is not one `ergon db` stores (ergon.report, "
				   "ergon.profile, ergon.kernels, " ERGON_ENERGY_MODEL_SCHEMA "); refused",
				   a->path, schema);
	}
	struct sig_state sig = {0};
	if (rc == 0)
		rc = verify(a->path, j, schema, a->key, &e);
	if (rc == 0)
		rc = check_signature(db, a->path, j, schema, &sig, &e);
	if (rc == 0) {
		a->is_model = ERGON_IS_ENERGY_MODEL_SCHEMA(schema);
		struct extract x = {.a = a};
		if (a->text.p == NULL)
			ergon_dynbuf_init(&a->text, ROWS_TEXT_MAX);
		take_rows(&x, db, j, schema, &sig);
		if (x.oom)
			rc = ergon_err_set(&e,
					   ergon_dynbuf_error(&a->text) == ERGON_ETOOBIG
					       ? ERGON_ETOOBIG
					       : ERGON_ENOMEM,
					   "%s: its rows need more than %zu MiB of text, or memory "
					   "ran out",
					   a->path, ROWS_TEXT_MAX >> 20);
	}
	json_decref(j);
	if (rc == 0)
		return 0;
	if (!artifact_fault(rc)) {
		*err = e;
		return rc;
	}
	a->rc = rc;
	a->err = e;
	return 0;
}

/* The tables of this database's schema: figures with sem and repetitions
 * and trend points with them and the time's source from schema 6 on. */
static const struct table *figures_table(const struct ergon_db *db)
{
	return db->version >= 6 ? &T_FIGURES : &T_FIGURES_V1;
}

static const struct table *trend_table(const struct ergon_db *db)
{
	return db->version >= 6 ? &T_TREND : &T_TREND_V4;
}

/* The cells a row of t's is taken with (figures: always FIG_COLS). */
static size_t stride(const struct table *t)
{
	return t == &T_FIGURES_V1 ? FIG_COLS : (size_t)t->ncols;
}

/* The pointers to the first t->ncols cells of each of r's rows into text
 * (NULL for NONE), row-major, into out. */
static void copy_cells(const char **out, const struct rows *r, const struct table *t,
		       const char *text)
{
	size_t w = stride(t), nc = (size_t)t->ncols;
	for (size_t i = 0; i < r->n; i++)
		for (size_t c = 0; c < nc; c++) {
			size_t off = r->cell[i * w + c];
			out[i * nc + c] = off == NONE ? NULL : text + off;
		}
}

/* The same, allocated; NULL when out of memory. */
static const char **cells(const struct rows *r, const struct table *t, const char *text)
{
	size_t n = r->n * (size_t)t->ncols;
	const char **v = malloc((n ? n : 1) * sizeof *v);
	if (v)
		copy_cells(v, r, t, text);
	return v;
}

static int insert(struct ergon_db *db, const struct table *t, const struct rows *r,
		  const char *text, struct ergon_err *err)
{
	if (r->n == 0)
		return 0;
	const char **v = cells(r, t, text);
	if (!v)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	int rc = db->be->insert(db->h, t->name, t->cols, t->ncols, r->n, v, err);
	free(v);
	return rc;
}

/* The run row, first: *inserted 0 when its key is already stored;
 * a->device: the stored device (an energy model's from its report). */
static int run_returned(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	struct art *a = ctx;
	a->result = ERGON_DB_INGESTED;
	if (n >= 2 && vals[1] && !a->device)
		a->device = strdup(vals[1]);
	return 0;
}

static int insert_run(struct ergon_db *db, struct art *a, struct ergon_err *err)
{
	const char *run[RUN_COLS];
	for (int i = 0; i < RUN_COLS; i++)
		run[i] = a->run[i] == NONE ? NULL : a->text.p + a->run[i];
	a->result = ERGON_DB_DUPLICATE;
	free(a->device);
	a->device = NULL;
	return db->be->query(db->h,
			     db->version >= 6   ? sql_run_v6
			     : db->version >= 3 ? sql_run_signed
						: sql_run,
			     db->version >= 6 ? RUN_COLS : db->version >= 3 ? 19 : 17, run,
			     run_returned, a, err);
}

/* Schema 4: one trend point per figure of a run with a device, the same
 * rows ERGON_DB_TREND_FILL(_V4) would select from what was just stored,
 * into out (tb->ncols pointers a row: schema 6's 13 or older ones' 10). */
static void trend_rows(const struct art *a, const struct table *tb, const char **out)
{
	const struct rows *f = &a->figures;
	const char *t = a->text.p;
#define AT(off) ((off) == NONE ? NULL : t + (off))
	for (size_t i = 0; i < f->n; i++) {
		const size_t *c = f->cell + i * (size_t)FIG_COLS;
		const char **o = out + i * (size_t)tb->ncols;
		/* name, device, time, report_id, board, provenance, integrity,
		 * value, u, unit */
		o[0] = AT(c[1]);
		o[1] = a->device;
		o[2] = AT(a->run[RUN_TIME]);
		o[3] = AT(a->run[RUN_KEY]);
		o[4] = AT(a->run[RUN_BOARD]);
		o[5] = AT(a->run[RUN_PROV]);
		o[6] = AT(a->run[RUN_INTEGRITY]);
		o[7] = AT(c[2]);
		o[8] = AT(c[4]);
		o[9] = AT(c[3]);
		if (tb->ncols > 10) {
			/* schema 6: time_source, sem, repetitions */
			o[10] = AT(a->run[RUN_TIME_SOURCE]);
			o[11] = AT(c[5]);
			o[12] = AT(c[6]);
		}
	}
#undef AT
}

static int insert_trend(struct ergon_db *db, const struct art *a, struct ergon_err *err)
{
	const struct rows *f = &a->figures;
	const struct table *t = trend_table(db);
	if (f->n == 0)
		return 0;
	const char **v = malloc(f->n * (size_t)t->ncols * sizeof *v);
	if (!v)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	trend_rows(a, t, v);
	int rc = db->be->insert(db->h, t->name, t->cols, t->ncols, f->n, v, err);
	free(v);
	return rc;
}

/* A stored report brings its device to the energy models stored before
 * it, and (schema 4) their trend points. */
static int model_device(struct ergon_db *db, const struct art *a, struct ergon_err *err)
{
	const char *q[2] = {a->text.p + a->run[RUN_KEY], a->device};
	return db->be->query(db->h, sql_model_device, 2, q, NULL, NULL, err);
}

static int model_trend(struct ergon_db *db, const struct art *a, struct ergon_err *err)
{
	const char *q[1] = {a->text.p + a->run[RUN_KEY]};
	return db->be->query(db->h, db->version >= 6 ? sql_trend_models : sql_trend_models_v4, 1, q,
			     NULL, NULL, err);
}

/* One artifact inside the batch's transaction under a savepoint of its
 * own (the careful path, store_batch's second try): a constraint broken
 * by its rows rolls back the savepoint and refuses it alone (returns 0,
 * a->rc set); any other failure is returned. */
static int store(struct ergon_db *db, struct art *a, struct ergon_err *err)
{
	struct ergon_err e = {0};
	int rc = db->be->query(db->h, sql_savepoint, 0, NULL, NULL, NULL, &e);
	if (rc == 0)
		rc = insert_run(db, a, &e);
	if (rc == 0 && a->result == ERGON_DB_DUPLICATE) {
		/* Already stored: the insert did nothing. */
		rc = db->be->query(db->h, sql_release, 0, NULL, NULL, NULL, &e);
		goto out;
	}
	if (rc == 0 && !a->is_model && a->device)
		rc = model_device(db, a, &e);
	const char *text = a->text.p;
	if (rc == 0)
		rc = insert(db, &T_ISSUES, &a->issues, text, &e);
	if (rc == 0)
		rc = insert(db, figures_table(db), &a->figures, text, &e);
	if (rc == 0 && db->version >= 2)
		rc = insert(db, &T_WINDOWS, &a->windows, text, &e);
	if (rc == 0 && db->version >= 2)
		rc = insert(db, &T_LAYERS, &a->layers, text, &e);
	if (rc == 0 && db->version >= 3)
		rc = insert(db, &T_KCASES, &a->kcases, text, &e);
	if (rc == 0 && db->version >= 4 && a->device)
		rc = insert_trend(db, a, &e);
	if (rc == 0 && db->version >= 4 && !a->is_model && a->device)
		rc = model_trend(db, a, &e);
	if (rc == 0) {
		const char *q[2] = {text + a->run[RUN_KEY], a->bytes};
		rc = db->be->insert(db->h, T_ARTIFACT.name, T_ARTIFACT.cols, T_ARTIFACT.ncols, 1, q,
				    &e);
	}
	if (rc == 0)
		rc = db->be->query(db->h, sql_release, 0, NULL, NULL, NULL, &e);
	if (rc == ERGON_EREFUSED) {
		/* This artifact's rows alone are undone; the batch goes on. */
		struct ergon_err e2 = {0};
		rc = db->be->query(db->h, sql_rollback_to, 0, NULL, NULL, NULL, &e2);
		if (rc == 0)
			rc = db->be->query(db->h, sql_release, 0, NULL, NULL, NULL, &e2);
		a->rc = ERGON_EREFUSED;
		a->result = 0;
		ergon_err_set(&a->err, ERGON_EREFUSED, "%s: %s; refused", a->path, e.msg);
		if (rc)
			e = e2;
	}
out:
	if (rc)
		*err = e;
	return rc;
}

/* A table's rows across the artifacts of a batch: pointers, row-major. */
struct batch_rows {
	const char **v;
	size_t n, cap;
};

/* Room for more rows of ncols; NULL when out of memory. */
static const char **batch_room(struct batch_rows *b, size_t more, int ncols)
{
	if (b->n + more > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + more)
			cap *= 2;
		const char **v = realloc(b->v, cap * (size_t)ncols * sizeof *v);
		if (!v)
			return NULL;
		b->v = v;
		b->cap = cap;
	}
	const char **at = b->v + b->n * (size_t)ncols;
	b->n += more;
	return at;
}

/* The rows of a's that go into table t (the trend points are made from
 * the figures). */
static const struct rows *rows_for(const struct art *a, const struct table *t)
{
	return t == &T_ISSUES	 ? &a->issues
	       : t == &T_WINDOWS ? &a->windows
	       : t == &T_LAYERS	 ? &a->layers
	       : t == &T_KCASES	 ? &a->kcases
				 : &a->figures;
}

/* Every row of table t of the new artifacts of order[0..k), in one insert:
 * the backend's statements per batch, not per artifact. */
static int insert_all(struct ergon_db *db, const struct table *t, struct art **order, size_t k,
		      struct ergon_err *err)
{
	struct batch_rows b = {0};
	int rc = 0;
	for (size_t i = 0; i < k && rc == 0; i++) {
		struct art *a = order[i];
		int trend = t == &T_TREND || t == &T_TREND_V4;
		if (a->result != ERGON_DB_INGESTED || (trend && !a->device))
			continue;
		const struct rows *r = rows_for(a, t);
		size_t m = t == &T_ARTIFACT ? 1 : r->n;
		if (m == 0)
			continue;
		const char **at = batch_room(&b, m, t->ncols);
		if (!at) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
			break;
		}
		if (t == &T_ARTIFACT) {
			at[0] = a->text.p + a->run[RUN_KEY];
			at[1] = a->bytes;
		} else if (trend) {
			trend_rows(a, t, at);
		} else {
			copy_cells(at, r, t, a->text.p);
		}
	}
	if (rc == 0 && b.n > 0)
		rc = db->be->insert(db->h, t->name, t->cols, t->ncols, b.n, b.v, err);
	free(b.v);
	return rc;
}

static int found(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)n;
	(void)names;
	(void)vals;
	*(int *)ctx = 1;
	return 1;
}

/* The quick path of a batch: its run rows, then every table's rows in
 * one insert each. A constraint broken anywhere cannot be pinned on one
 * artifact here: the batch is rolled back and ERGON_EREFUSED returned, for
 * store_batch to store it again artifact by artifact. */
static int store_quick(struct ergon_db *db, struct art **order, size_t k, struct ergon_err *err)
{
	int rc = 0, models = 0;
	for (size_t i = 0; i < k && rc == 0; i++) {
		rc = insert_run(db, order[i], err);
		models |= order[i]->is_model;
	}
	/* Energy models wait for their report's device: look for them only
	 * when the database holds one (the index on source_report_id). */
	if (rc == 0 && !models)
		rc = db->be->query(db->h,
				   "SELECT 1 FROM runs WHERE source_report_id IS NOT NULL LIMIT 1",
				   0, NULL, found, &models, err);
	for (size_t i = 0; i < k && rc == 0 && models; i++)
		if (order[i]->result == ERGON_DB_INGESTED && !order[i]->is_model &&
		    order[i]->device)
			rc = model_device(db, order[i], err);
	if (rc == 0)
		rc = insert_all(db, &T_ISSUES, order, k, err);
	if (rc == 0)
		rc = insert_all(db, figures_table(db), order, k, err);
	if (rc == 0 && db->version >= 2)
		rc = insert_all(db, &T_WINDOWS, order, k, err);
	if (rc == 0 && db->version >= 2)
		rc = insert_all(db, &T_LAYERS, order, k, err);
	if (rc == 0 && db->version >= 3)
		rc = insert_all(db, &T_KCASES, order, k, err);
	if (rc == 0 && db->version >= 4)
		rc = insert_all(db, trend_table(db), order, k, err);
	for (size_t i = 0; i < k && rc == 0 && models && db->version >= 4; i++)
		if (order[i]->result == ERGON_DB_INGESTED && !order[i]->is_model &&
		    order[i]->device)
			rc = model_trend(db, order[i], err);
	if (rc == 0)
		rc = insert_all(db, &T_ARTIFACT, order, k, err);
	return rc;
}

/* Ready a slot for the next batch's artifact: its buffers are kept (a
 * batch of similar files then allocates nothing new). */
static void art_reset(struct art *a)
{
	char *bytes = a->bytes;
	size_t cap = a->cap;
	struct ergon_dynbuf text = a->text;
	struct rows r[5] = {a->issues, a->figures, a->windows, a->layers, a->kcases};
	free(a->device);
	memset(a, 0, sizeof *a);
	a->bytes = bytes;
	a->cap = cap;
	a->text = text;
	a->text.len = 0;
	a->text.err = 0;
	if (a->text.p)
		a->text.p[0] = '\0';
	struct rows *mine[5] = {&a->issues, &a->figures, &a->windows, &a->layers, &a->kcases};
	for (int i = 0; i < 5; i++) {
		*mine[i] = r[i];
		mine[i]->n = 0;
	}
}

static void art_free(struct art *a)
{
	art_reset(a);
	free(a->bytes);
	ergon_dynbuf_free(&a->text);
	free(a->issues.cell);
	free(a->figures.cell);
	free(a->windows.cell);
	free(a->layers.cell);
	free(a->kcases.cell);
	memset(a, 0, sizeof *a);
}

static int by_key(const void *x, const void *y)
{
	const struct art *a = *(const struct art *const *)x, *b = *(const struct art *const *)y;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->index < b->index ? -1 : a->index > b->index);
}

static void rollback(struct ergon_db *db)
{
	struct ergon_err ignore = {0};
	db->be->exec(db->h, "ROLLBACK", &ignore);
}

/* Phase 2 for a batch: one transaction, the artifacts in key order; if a
 * constraint breaks, again with a savepoint per artifact, so that only the
 * artifact that broke it is refused. On a failure nothing of the batch is
 * stored. */
static int store_batch(struct ergon_db *db, struct art *arts, size_t n, struct ergon_err *err)
{
	struct art **order = malloc((n ? n : 1) * sizeof *order);
	if (!order)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (arts[i].rc == 0)
			order[k++] = &arts[i];
	int rc = 0;
	if (k > 0) {
		qsort(order, k, sizeof *order, by_key);
		rc = db->be->begin(db->h, err);
		if (rc == 0)
			rc = store_quick(db, order, k, err);
		if (rc == ERGON_EREFUSED) {
			rollback(db);
			rc = db->be->begin(db->h, err);
			for (size_t i = 0; rc == 0 && i < k; i++)
				rc = store(db, order[i], err);
		}
		if (rc == 0)
			rc = db->be->exec(db->h, "COMMIT", err);
		if (rc)
			rollback(db);
	}
	free(order);
	return rc;
}

/* The outcome of every artifact of a stored batch, in the caller's order. */
static void report(struct art *arts, size_t n, ergon_db_ingest_fn fn, void *ctx)
{
	for (size_t i = 0; i < n; i++)
		if (fn)
			fn(ctx, arts[i].index, arts[i].path, arts[i].rc, arts[i].result,
			   arts[i].rc ? NULL : arts[i].key, &arts[i].err);
}

/* A fatal error while a batch was in hand: say which files were not
 * stored, after what went wrong. */
static int not_stored(int rc, struct ergon_err *err, const struct art *arts, size_t n)
{
	if (n <= 1)
		return rc;
	struct ergon_err e = *err;
	ergon_err_set(err, rc,
		      "%s [not stored: the %zu artifacts of this batch, %s to %s; ingest "
		      "them again]",
		      e.msg, n, arts[0].path, arts[n - 1].path);
	return rc;
}

int ergon_db_ingest_files(struct ergon_db *db, const char *const *paths, size_t n,
			  ergon_db_ingest_fn fn, void *ctx, struct ergon_err *err)
{
	struct art *arts = calloc(ERGON_DB_BATCH_ARTIFACTS, sizeof *arts);
	if (!arts)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	int rc = 0;
	size_t i = 0;
	while (i < n && rc == 0) {
		size_t m = 0, bytes = 0;
		/* Phase 1 until the batch is full; a fatal error ends it at that
		 * file, and what was verified before it is still stored. */
		int fatal = 0;
		struct ergon_err ferr = {0};
		while (i < n && m < ERGON_DB_BATCH_ARTIFACTS && bytes < ERGON_DB_BATCH_BYTES) {
			struct art *a = &arts[m];
			a->index = i;
			a->path = paths[i];
			fatal = prepare(db, a, &ferr);
			if (fatal) {
				art_reset(a);
				break;
			}
			bytes += a->len;
			m++;
			i++;
		}
		rc = store_batch(db, arts, m, err);
		if (rc)
			rc = not_stored(rc, err, arts, m);
		else
			report(arts, m, fn, ctx);
		for (size_t k = 0; k < m; k++)
			art_reset(&arts[k]);
		if (rc == 0 && fatal) {
			*err = ferr;
			rc = fatal;
		}
	}
	for (size_t k = 0; k < ERGON_DB_BATCH_ARTIFACTS; k++)
		art_free(&arts[k]);
	free(arts);
	return rc;
}

/* ergon_db_ingest_file: a batch of one. */
struct one {
	int rc, result;
	char key[80];
	struct ergon_err err;
};

static void one_done(void *ctx, size_t index, const char *path, int rc, int result, const char *key,
		     const struct ergon_err *err)
{
	(void)index;
	(void)path;
	struct one *o = ctx;
	o->rc = rc;
	o->result = result;
	if (key)
		snprintf(o->key, sizeof o->key, "%s", key);
	if (rc)
		o->err = *err;
}

int ergon_db_ingest_file(struct ergon_db *db, const char *path, int *result, char key[80],
			 struct ergon_err *err)
{
	*result = 0;
	struct one o = {0};
	const char *paths[1] = {path};
	int rc = ergon_db_ingest_files(db, paths, 1, one_done, &o, err);
	if (rc)
		return rc;
	if (o.rc) {
		*err = o.err;
		return o.rc;
	}
	*result = o.result;
	if (key)
		snprintf(key, 80, "%s", o.key);
	return 0;
}

/* `ergon db ingest`: verify one artifact and store it in one transaction.
 *
 * Kinds (docs/DB.md): ergon.report (ergon run, and profile reports made
 * from HPX logs), ergon.profile (ergon profile's and ergon analyze's
 * summary.json), ergon.kernels (ergon kernels report|run; its cases go to
 * kernel_cases) and energy-model/v1. With trusted keys
 * (ergon_db_trust_key) an artifact must also carry a signature by one of
 * them that verifies; the signer is stored either way. An enveloped artifact must verify:
 * its report_id is recomputed (ergon_artifact_check_digest), and a
 * sustained ergon.report also has its figures recomputed from its series
 * (ergon_report_verify, what `ergon verify` runs). energy-model/v1 carries
 * no digest of its own (its report_id names the report it came from), so
 * it is keyed by the SHA-256 of its own JCS form and its shape is checked.
 *
 * The run row goes in first with ON CONFLICT DO NOTHING RETURNING: no
 * returned row means the key is already stored, and the transaction is
 * rolled back, so a duplicate changes nothing even when two processes
 * ingest the same artifact at once (the second waits on the first's
 * uncommitted key).
 */
#include "db_internal.h"
#include "ergon/artifact.h"
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

struct ingest {
	struct ergon_db *db;
	const char *key;
	struct ergon_err *err;
	int rc;
};

static const char sql_run[] =
    "INSERT INTO runs (report_id, schema, schema_version, kind, device, board, firmware_sha,"
    " firmware_image, instrument, instrument_serial, provenance, integrity, time, time_source,"
    " ingested_at, tool_version, source_report_id) VALUES ($1, $2, $3, $4,"
    " COALESCE($5, (SELECT device FROM runs WHERE report_id = $17)), $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17) ON CONFLICT (report_id) DO NOTHING"
    " RETURNING report_id";
static const char sql_figure[] =
    "INSERT INTO figures (report_id, name, value, unit, u) VALUES ($1, $2, $3, $4, $5)";
static const char sql_issue[] =
    "INSERT INTO issues (report_id, seq, code, severity, message) VALUES ($1, $2, $3, $4, $5)";
static const char sql_window[] =
    "INSERT INTO windows (report_id, idx, t_start_s, duration_s, operations, energy_j,"
    " mean_power_w) VALUES ($1, $2, $3, $4, $5, $6, $7)";
static const char sql_layer[] = "INSERT INTO layers (report_id, idx, layer_id, op, counter, value)"
				" VALUES ($1, $2, $3, $4, $5, $6)";
/* An energy model ingested before its report learns the report's device. */
static const char sql_model_device[] = "UPDATE runs SET device = $2 WHERE source_report_id = $1"
				       " AND device IS NULL";
static const char sql_kernel_case[] =
    "INSERT INTO kernel_cases (report_id, case_name, impl, correct, timed, n, min, median,"
    " mean, unit) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
static const char sql_signature[] = "UPDATE runs SET signer_key_id = $2, signature = $3"
				    " WHERE report_id = $1";
/* Schema 4: this report's figures as trend points, and an energy model's
 * once its device is known (it had none, so it had no points). The model
 * case may meet rows a model already has: ON CONFLICT keeps them. */
static const char sql_trend[] = ERGON_DB_TREND_FILL " AND r.report_id = $1";
static const char sql_trend_models[] =
    ERGON_DB_TREND_FILL " AND r.source_report_id = $1 ON CONFLICT DO NOTHING";
static const char sql_artifact[] = "INSERT INTO artifacts (report_id, json) VALUES ($1, $2)";

static int put(struct ingest *in, const char *sql, int n, const char *const *p)
{
	if (in->rc)
		return in->rc;
	in->rc = in->db->be->query(in->db->h, sql, n, p, NULL, NULL, in->err);
	return in->rc;
}

/* A double as text that reads back to the same double; NULL for non-finite. */
static const char *num(double v, char buf[32])
{
	if (!isfinite(v))
		return NULL;
	snprintf(buf, 32, "%.17g", v);
	return buf;
}

static const char *jnum(const json_t *v, char buf[32])
{
	if (!json_is_number(v))
		return NULL;
	return num(json_number_value(v), buf);
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
static void flatten(struct ingest *in, const json_t *obj, const char *prefix, int depth)
{
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (in->rc)
			return;
		char name[FIGURE_NAME_MAX];
		int n = snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", k);
		if (n < 0 || (size_t)n >= sizeof name)
			continue;
		if (json_is_object(v) && depth < FIGURE_DEPTH_MAX) {
			flatten(in, v, name, depth + 1);
			continue;
		}
		if (!json_is_number(v) || is_uncertainty(k))
			continue;
		char vb[32], ub[32];
		const char *p[5] = {in->key, name, jnum(v, vb), unit_of(k),
				    jnum(uncertainty_of(obj, k), ub)};
		if (p[2])
			put(in, sql_figure, 5, p);
	}
}

static void put_issues(struct ingest *in, const json_t *issues)
{
	size_t i;
	const json_t *x;
	json_array_foreach(issues, i, x)
	{
		char seq[24];
		snprintf(seq, sizeof seq, "%zu", i);
		const char *code = json_string_value(json_object_get(x, "code"));
		const char *p[5] = {in->key, seq, code ? code : "(none)",
				    json_string_value(json_object_get(x, "severity")),
				    json_string_value(json_object_get(x, "message"))};
		put(in, sql_issue, 5, p);
	}
}

/* Windows: a run report's throughput windows, a profile's gated windows. */
static void put_windows(struct ingest *in, const json_t *windows)
{
	size_t i;
	const json_t *w;
	json_array_foreach(windows, i, w)
	{
		char idx[24], b[5][32];
		snprintf(idx, sizeof idx, "%zu", i);
		const json_t *t0 = json_object_get(w, "t_start_s");
		if (!t0)
			t0 = json_object_get(w, "start_s");
		const json_t *pw = json_object_get(w, "mean_power_w");
		if (!pw)
			pw = json_object_get(w, "avg_power_w");
		const char *p[7] = {in->key,
				    idx,
				    jnum(t0, b[0]),
				    jnum(json_object_get(w, "duration_s"), b[1]),
				    jnum(json_object_get(w, "operations"), b[2]),
				    jnum(json_object_get(w, "energy_j"), b[3]),
				    jnum(pw, b[4])};
		put(in, sql_window, 7, p);
	}
}

/* Layers: one row per layer and counter (cycles included). */
static void put_layers(struct ingest *in, const json_t *layers)
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
		const char *op = json_string_value(json_object_get(l, "op"));
		const char *p[6] = {in->key, idx,      pid,
				    op,	     "cycles", jnum(json_object_get(l, "cycles"), vb)};
		if (p[5])
			put(in, sql_layer, 6, p);
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)json_object_get(l, "counters"), k, v)
		{
			if (strcmp(k, "cycles") == 0)
				continue;
			const char *q[6] = {in->key, idx, pid, op, k, jnum(v, vb)};
			put(in, sql_layer, 6, q);
		}
	}
}

/* Kernels: one row per case and implementation (a failed one untimed). */
static void put_kernel_cases(struct ingest *in, const json_t *sec)
{
	const char *unit = json_string_value(json_object_get(sec, "unit"));
	size_t i, k;
	const json_t *c, *im;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		json_array_foreach(json_object_get(c, "impls"), k, im)
		{
			char n[24], b[3][32];
			const json_t *jn = json_object_get(im, "n");
			if (json_is_integer(jn))
				snprintf(n, sizeof n, "%lld", (long long)json_integer_value(jn));
			const json_t *ok = json_object_get(im, "correct");
			const json_t *timed = json_object_get(im, "timed");
			const char *p[10] = {
			    in->key,
			    json_string_value(json_object_get(c, "case")),
			    json_string_value(json_object_get(im, "impl")),
			    json_is_boolean(ok) ? (json_is_true(ok) ? "1" : "0") : NULL,
			    json_is_boolean(timed) ? (json_is_true(timed) ? "1" : "0") : NULL,
			    json_is_integer(jn) ? n : NULL,
			    jnum(json_object_get(im, "min"), b[0]),
			    jnum(json_object_get(im, "median"), b[1]),
			    jnum(json_object_get(im, "mean"), b[2]),
			    unit};
			if (p[1] && p[2])
				put(in, sql_kernel_case, 10, p);
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
	if (strcmp(schema, "energy-model/v1") == 0) {
		const json_t *vals = json_object_get(j, "values");
		const char *rid = json_string_value(json_object_get(j, "report_id"));
		const char *prov = json_string_value(json_object_get(j, "provenance"));
		if (!json_is_object(vals) || json_object_size(vals) == 0)
			return ergon_err_set(err, ERGON_EVERIFY,
					     "%s: energy-model/v1 without values: not an energy "
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
	const char *kind = json_string_value(json_object_get(j, "kind"));
	if (strcmp(schema, "ergon.report") == 0 && kind && strcmp(kind, "sustained") == 0)
		rc = ergon_report_verify(j, &e);
	else
		rc = ergon_artifact_check_digest(j, &e);
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
	if (strcmp(schema, "energy-model/v1") == 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "%s: an energy-model/v1 has no report_id of its own, so no "
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

static int row_seen(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)n;
	(void)names;
	(void)vals;
	*(int *)ctx = 1;
	return 0;
}

static int store(struct ergon_db *db, const char *path, const json_t *j, const char *schema,
		 const char *key, const struct sig_state *sig, int *result, struct ergon_err *err)
{
	struct ingest in = {.db = db, .key = key, .err = err};
	int is_model = strcmp(schema, "energy-model/v1") == 0;
	int is_profile = strcmp(schema, "ergon.profile") == 0;
	int is_kernels = strcmp(schema, "ergon.kernels") == 0;
	char now[32], sv[24], *dump = NULL;
	ergon_db_now_utc(now);
	snprintf(sv, sizeof sv, "%lld",
		 (long long)json_integer_value(json_object_get(j, "schema_version")));
	if (is_model)
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
	const char *prov = is_model ? json_string_value(json_object_get(j, "provenance"))
				    : str_at(j, "provenance", "kind");
	/* The time of the result: a recording's start when the artifact names
	 * one, else when it was ingested (today's run reports carry no clock
	 * time of their own). */
	const char *t = json_string_value(json_object_get(
	    json_object_get(json_object_get(j, "provenance"), "recording"), "capture_start_utc"));
	const json_t *fw = json_object_get(j, "firmware");
	const char *p[17] = {key,
			     schema,
			     sv,
			     is_model ? "energy-model"
				      : json_string_value(json_object_get(j, "kind")),
			     device,
			     board,
			     json_string_value(json_object_get(fw, "sha256")),
			     str_at(json_object_get(j, "stages"), "pmu", "image"),
			     instr[0] ? instr : NULL,
			     json_string_value(json_object_get(ins, "serial")),
			     prov ? prov : "unknown",
			     json_string_value(json_object_get(j, "integrity")),
			     t ? t : now,
			     t ? "artifact" : "ingested",
			     now,
			     str_at(j, "tool", "version"),
			     is_model ? json_string_value(json_object_get(j, "report_id")) : NULL};
	if (is_kernels && !p[3])
		p[3] = "kernels";
	if (is_profile && !p[3])
		p[3] = json_object_get(j, "power") && !json_is_null(json_object_get(j, "power"))
			   ? (json_object_get(j, "stages") ? "profile" : "analyze")
			   : "profile";

	int rc = db->be->begin(db->h, err);
	if (rc)
		return rc;
	int inserted = 0;
	rc = db->be->query(db->h, sql_run, 17, p, row_seen, &inserted, err);
	if (rc == 0 && !inserted) {
		/* Already stored: nothing of this transaction is kept. */
		rc = db->be->exec(db->h, "ROLLBACK", err);
		if (rc == 0)
			*result = ERGON_DB_DUPLICATE;
		return rc;
	}
	in.rc = rc;
	if (!is_model && device) {
		const char *q[2] = {key, device};
		put(&in, sql_model_device, 2, q);
	}
	if (db->version >= 3) {
		const char *q[3] = {key, sig->key_id[0] ? sig->key_id : NULL, sig->status};
		put(&in, sql_signature, 3, q);
	}
	put_issues(&in, json_object_get(j, "issues"));
	if (is_model) {
		const char *k;
		const json_t *v;
		char vb[32], ub[32];
		json_object_foreach((json_t *)json_object_get(j, "values"), k, v)
		{
			char name[FIGURE_NAME_MAX];
			snprintf(name, sizeof name, "values.%s", k);
			const char *q[5] = {
			    key, name, jnum(v, vb), "J",
			    jnum(json_object_get(j, "uncertainty_j_per_operation"), ub)};
			if (q[2])
				put(&in, sql_figure, 5, q);
		}
	} else if (is_kernels) {
		if (db->version >= 3)
			put_kernel_cases(&in, json_object_get(j, "kernels"));
	} else if (is_profile) {
		if (json_is_object(json_object_get(j, "power")))
			flatten(&in, json_object_get(j, "power"), "power", 1);
		const json_t *prof = json_object_get(j, "profile");
		if (json_is_object(prof)) {
			flatten(&in, prof, "profile", 1);
			if (db->version >= 2)
				put_layers(&in, json_object_get(prof, "layers"));
		}
		if (db->version >= 2)
			put_windows(&in, json_object_get(json_object_get(j, "power"), "windows"));
	} else {
		flatten(&in, json_object_get(j, "figures"), "", 0);
		if (db->version >= 2)
			put_windows(&in,
				    json_object_get(json_object_get(json_object_get(j, "figures"),
								    "throughput"),
						    "windows"));
	}
	if (db->version >= 4) {
		const char *q[1] = {key};
		put(&in, sql_trend, 1, q);
		if (!is_model && device)
			put(&in, sql_trend_models, 1, q);
	}
	if (in.rc == 0) {
		/* Re-serialised with 17 significant digits: the stored text has
		 * the same JCS form, so its report_id still verifies. */
		dump = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (!dump)
			in.rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
		const char *q[2] = {key, dump};
		put(&in, sql_artifact, 2, q);
		free(dump);
	}
	if (in.rc == 0)
		in.rc = db->be->exec(db->h, "COMMIT", err);
	if (in.rc) {
		struct ergon_err ignore = {0};
		db->be->exec(db->h, "ROLLBACK", &ignore);
		return in.rc;
	}
	*result = ERGON_DB_INGESTED;
	return 0;
}

int ergon_db_ingest_file(struct ergon_db *db, const char *path, int *result, char key[80],
			 struct ergon_err *err)
{
	*result = 0;
	char k[80] = "";
	json_t *j = NULL;
	int rc = ergon_artifact_load(path, INGEST_MAX_BYTES, &j, err);
	if (rc)
		return rc;
	const char *schema = json_string_value(json_object_get(j, "schema"));
	if (!json_is_object(j) || !schema) {
		rc = ergon_err_set(err, ERGON_EREFUSED,
				   "%s: no field schema: not an ergon artifact; refused", path);
	} else if (strcmp(schema, "ergon.report") != 0 && strcmp(schema, "ergon.profile") != 0 &&
		   strcmp(schema, "ergon.kernels") != 0 && strcmp(schema, "energy-model/v1") != 0) {
		rc = ergon_err_set(err, ERGON_EREFUSED,
				   "%s: schema '%s' is not one `ergon db` stores (ergon.report, "
				   "ergon.profile, ergon.kernels, energy-model/v1); refused",
				   path, schema);
	}
	struct sig_state sig = {0};
	if (rc == 0)
		rc = verify(path, j, schema, k, err);
	if (rc == 0)
		rc = check_signature(db, path, j, schema, &sig, err);
	if (rc == 0)
		rc = store(db, path, j, schema, k, &sig, result, err);
	if (rc == 0 && key)
		snprintf(key, 80, "%s", k);
	json_decref(j);
	return rc;
}

/* validate/: `ergon validate`: every model profiled, JUnit XML.
 *
 * `ergon validate`: every model of a folder profiled and checked, the
 * outcome written as JUnit XML (ergon/validate.h, docs/VALIDATE.md).
 *
 * Three kinds of board: qemu-an547 (ergon builds the model firmware), sim
 * (the virtual bench runs the model in-process) and a real board (the
 * user's firmware per model, --firmware-dir, through the board's probe
 * lifecycle). Everything that can refuse the whole run (no models, a real
 * board without firmware or sim/QEMU with some, an unreadable baseline, an
 * unwritable XML path) is checked before the first model is built, so a CI job fails in seconds on
 * a typo, not after an hour of profiling. The XML is written once, at the
 * end, atomically; a model that fails never stops the others.
 */
#include "ergon/validate.h"

#include "ergon/artifact.h"
#include "ergon/compare.h"
#include "ergon/stats.h"
#include "ergon/config.h"
#include "ergon/db.h"
#include "ergon/dynbuf.h"
#include "ergon/fileio.h"
#include "ergon/model_fw.h"
#include "ergon/profile.h"
#include "ergon/utf8.h"
#include "pipelines/common/common.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VALIDATE_XML_MAX ((size_t)64 << 20)
#define VALIDATE_DETAIL_MAX 4096
#define VALIDATE_PATH_MAX 1024
#define VALIDATE_NAME_MAX 256
/* Summaries read back (a baseline, the run's own): profiles are small. */
#define VALIDATE_SUMMARY_MAX ((size_t)256 << 20)

/* --board sim: profiled iterations and warmup per model. */
#define VALIDATE_SIM_ITERATIONS "10"
#define VALIDATE_SIM_WARMUP "1"

enum outcome { PASS, FAILURE, ERROR, SKIPPED };

struct check {
	const char *name;
	enum outcome outcome;
	double time_s;
	char message[ERGON_ERR_MSG_MAX];
	char detail[VALIDATE_DETAIL_MAX]; /* body of <failure>/<error>, or system-out */
};

#define CHECKS_MAX 5

struct model_result {
	char name[VALIDATE_NAME_MAX]; /* the file name without .tflite */
	char path[VALIDATE_PATH_MAX];
	char provenance[32]; /* the summary's provenance.kind; "" without one */
	struct check checks[CHECKS_MAX];
	int n;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ergon_xml_escape(struct ergon_dynbuf *b, const char *s)
{
	if (!s)
		return;
	size_t n = strlen(s);
	/* Repaired UTF-8 is at most 3 bytes per input byte, and so is U+FFFD
	 * in place of a control byte. */
	char *fixed = malloc(3 * n + 1), *clean = malloc(3 * n + 1);
	if (!fixed || !clean) {
		free(fixed);
		free(clean);
		ergon_dynbuf_adds(b, "?");
		return;
	}
	size_t m = ergon_utf8_repair(s, n, fixed, 3 * n), k = 0;
	for (size_t i = 0; i < m; i++) {
		unsigned char c = (unsigned char)fixed[i];
		/* XML 1.0 allows no C0 control but tab, LF and CR. */
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			memcpy(clean + k, "\xef\xbf\xbd", 3);
			k += 3;
		} else {
			clean[k++] = fixed[i];
		}
	}
	clean[k] = '\0';
	/* The five characters XML escapes are the ones HTML's escaper does
	 * (' as &#39;, which XML reads the same). */
	ergon_html_escape(b, clean);
	free(fixed);
	free(clean);
}

static struct check *check_add(struct model_result *m, const char *name)
{
	struct check *c = &m->checks[m->n++];
	memset(c, 0, sizeof *c);
	c->name = name;
	return c;
}

static void check_set(struct check *c, enum outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_set(struct check *c, enum outcome o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	c->outcome = o;
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.tflite names of dir, sorted; *names is the caller's (free each). */
static int list_models(const char *dir, char ***names, size_t *n, struct ergon_err *err)
{
	*names = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return ergon_err_set(err, ERGON_ENOENT,
				     "--models %s: cannot open the folder; give the folder that "
				     "holds the .tflite models",
				     dir);
	char **v = calloc(ERGON_VALIDATE_MODELS_MAX, sizeof *v);
	int rc = v ? 0 : ergon_err_set(err, ERGON_ENOMEM, "validate: out of memory");
	size_t k = 0;
	for (struct dirent *e = readdir(d); e && rc == 0; e = readdir(d)) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len <= 7 || strcmp(e->d_name + len - 7, ".tflite") != 0)
			continue;
		if (len - 7 >= VALIDATE_NAME_MAX) {
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--models %s: model file name %s is longer than %d "
					   "bytes; rename it",
					   dir, e->d_name, VALIDATE_NAME_MAX - 1);
			break;
		}
		if (k == ERGON_VALIDATE_MODELS_MAX) {
			rc = ergon_err_set(err, ERGON_ETOOBIG,
					   "--models %s: more than %d models; split the folder",
					   dir, ERGON_VALIDATE_MODELS_MAX);
			break;
		}
		v[k] = strdup(e->d_name);
		if (!v[k])
			rc = ergon_err_set(err, ERGON_ENOMEM, "validate: out of memory");
		else
			k++;
	}
	closedir(d);
	if (rc == 0 && k == 0)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--models %s: no .tflite files in the folder; give the folder "
				   "that holds the models",
				   dir);
	if (rc) {
		for (size_t i = 0; i < k; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	qsort(v, k, sizeof *v, cmp_str);
	*names = v;
	*n = k;
	return 0;
}

/* The configuration of one model's profile. */
static int model_config(const struct ergon_validate_opts *o, const char *out_dir,
			struct ergon_config *cfg, struct ergon_err *err)
{
	char kv[VALIDATE_PATH_MAX + 32];
	int rc = ergon_config_init(cfg);
	if (rc)
		return ergon_err_set(err, rc, "cannot initialise the configuration");
	snprintf(kv, sizeof kv, "target.board=%s", o->board);
	rc = ergon_config_set(cfg, kv, ERGON_CFG_CLI, err);
	if (rc == 0 && o->power)
		rc = ergon_config_set(cfg, "power.enabled=true", ERGON_CFG_CLI, err);
	/* The virtual bench runs what the configuration says (100 profiled
	 * iterations by default: 26 s of simulated time for a 12.5 M MAC
	 * model, past the simulated meter's 20 s). Like ergon's an547 model
	 * firmware, which has its counts built in, validate profiles a model
	 * on the sim with fewer iterations; the clean window stays auto (its
	 * target time, long enough for the power checks whatever the model's
	 * inference time). docs/VALIDATE.md. */
	static const char *const sim_counts[] = {"profiling.iterations=" VALIDATE_SIM_ITERATIONS,
						 "profiling.warmup=" VALIDATE_SIM_WARMUP};
	for (size_t i = 0; rc == 0 && strcmp(o->board, "sim") == 0 && i < 2; i++)
		rc = ergon_config_set(cfg, sim_counts[i], ERGON_CFG_CLI, err);
	if (rc == 0 && out_dir) {
		snprintf(kv, sizeof kv, "output.dir=%s", out_dir);
		rc = ergon_config_set(cfg, kv, ERGON_CFG_CLI, err);
	}
	if (rc == 0)
		rc = ergon_config_resolve(cfg, err);
	int own = rc == 0 && (cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU ||
			      cfg->target.lifecycle == ERGON_LIFECYCLE_SIM);
	if (rc == 0 && own && o->firmware_dir)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--firmware-dir %s: on --board %s ergon runs each model itself "
				   "(%s); drop --firmware-dir",
				   o->firmware_dir, o->board,
				   cfg->target.lifecycle == ERGON_LIFECYCLE_SIM
				       ? "the virtual bench runs it in-process"
				       : "it builds the board's firmware from its port");
	else if (rc == 0 && !own && !o->firmware_dir)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--board %s: ergon cannot build firmware for this board; give "
				   "--firmware-dir DIR with DIR/MODEL/ holding your profile (and "
				   "power) build of each model (docs/VALIDATE.md), or use --board "
				   "sim, qemu-an547 or qemu-an505",
				   o->board);
	if (rc)
		ergon_config_cleanup(cfg);
	return rc;
}

/* The issues of severity error in a summary, "; "-separated, into out. */
static void error_issues(const json_t *summary, char *out, size_t cap)
{
	size_t i, len = 0;
	const json_t *x;
	out[0] = '\0';
	json_array_foreach(json_object_get(summary, "issues"), i, x)
	{
		const char *sev = json_string_value(json_object_get(x, "severity"));
		if (!sev || strcmp(sev, "error") != 0 || len + 4 >= cap)
			continue;
		int n = snprintf(out + len, cap - len, "%s%s: %s", len ? "; " : "",
				 json_string_value(json_object_get(x, "code")),
				 json_string_value(json_object_get(x, "message")));
		if (n > 0)
			len = strlen(out);
	}
}

static void check_correctness(struct check *c, const json_t *summary)
{
	const json_t *k = json_object_get(summary, "correctness");
	const json_t *exact = json_object_get(k, "bit_exact");
	const char *hf = json_string_value(json_object_get(json_object_get(k, "host"), "fnv1a64"));
	const char *tf =
	    json_string_value(json_object_get(json_object_get(k, "target"), "fnv1a64"));
	if (json_is_true(exact))
		check_set(c, PASS, "bit-exact: target and host output FNV-1a 64 %s", hf ? hf : "?");
	else if (json_is_false(exact))
		check_set(c, FAILURE,
			  "the target's output (FNV-1a 64 %s) differs from the host "
			  "interpreter's (%s) on the same input",
			  tf ? tf : "?", hf ? hf : "?");
	else
		check_set(c, FAILURE,
			  "not checked: summary.json has no on-target output to compare with the "
			  "host (correctness.bit_exact is %s)",
			  k ? "null" : "missing");
	const char *method = json_string_value(json_object_get(k, "method"));
	snprintf(c->detail, sizeof c->detail, "%s", method ? method : "");
}

static void check_integrity(struct check *c, const json_t *summary)
{
	const char *integ = json_string_value(json_object_get(summary, "integrity"));
	int valid = json_is_true(json_object_get(summary, "valid"));
	error_issues(summary, c->detail, sizeof c->detail);
	if (valid && integ && strcmp(integ, "invalid") != 0)
		check_set(c, PASS, "valid, integrity %s", integ);
	else
		check_set(c, FAILURE, "%s, integrity %s%s%s", valid ? "valid" : "NOT VALID",
			  integ ? integ : "(missing)", c->detail[0] ? ": " : "", c->detail);
}

struct db_pick {
	const char *file; /* the model's file name */
	json_t *found;
};

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

static int pick_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	struct db_pick *k = ctx;
	if (n < 1 || !vals[0])
		return 0;
	json_t *j = json_loads(vals[0], 0, NULL);
	const char *mp = json_string_value(json_object_get(json_object_get(j, "model"), "path"));
	if (mp && strcmp(base_name(mp), k->file) == 0) {
		k->found = j;
		return 1;
	}
	json_decref(j);
	return 0;
}

/* The baseline of one model: *base is NULL (no baseline for it, why in
 * err) or a new reference. A read error of the baseline itself fails. */
static int baseline_of(const struct ergon_validate_opts *o, struct ergon_db *bdb,
		       const struct model_result *m, json_t **base, struct ergon_err *err)
{
	*base = NULL;
	if (bdb) {
		char file[VALIDATE_NAME_MAX + 8];
		snprintf(file, sizeof file, "%s.tflite", m->name);
		struct db_pick k = {.file = file};
		const char *params[1] = {o->board};
		int rc =
		    ergon_db_query(bdb,
				   "SELECT a.json FROM artifacts a JOIN runs r ON r.report_id "
				   "= a.report_id WHERE r.schema = 'ergon.profile' AND r.board "
				   "= $1 ORDER BY r.time DESC, r.ingested_at DESC",
				   1, params, pick_row, &k, err);
		if (rc)
			return rc;
		if (!k.found)
			ergon_err_set(err, ERGON_ENOENT,
				      "the baseline database holds no ergon.profile of %s on board "
				      "%s",
				      file, o->board);
		*base = k.found;
		return 0;
	}
	char path[VALIDATE_PATH_MAX * 2];
	snprintf(path, sizeof path, "%s/%s/summary.json", o->baseline, m->name);
	if (access(path, F_OK) != 0) {
		ergon_err_set(err, ERGON_ENOENT, "the baseline folder has no %s", path);
		return 0;
	}
	return ergon_artifact_load(path, VALIDATE_SUMMARY_MAX, base, err);
}

static void check_regression(struct check *c, const struct ergon_validate_opts *o,
			     struct ergon_db *bdb, const struct model_result *m,
			     const json_t *summary)
{
	struct ergon_err e = {0};
	json_t *base = NULL;
	if (baseline_of(o, bdb, m, &base, &e)) {
		check_set(c, ERROR, "the baseline could not be read: %s", e.msg);
		return;
	}
	if (!base) {
		check_set(c, SKIPPED, "no baseline for this model: %s", e.msg);
		return;
	}
	if (ergon_artifact_check_digest(base, &e)) {
		check_set(c, FAILURE, "the baseline fails verification: %s", e.msg);
		json_decref(base);
		return;
	}
	const json_t *arts[2] = {base, summary};
	const char *labels[2] = {"baseline", "this run"};
	struct ergon_compare_options co = {.threshold_pct = o->threshold_pct};
	json_t *res = NULL;
	int rc = ergon_compare(arts, labels, 2, &co, &res, &e);
	char *text = NULL;
	if (res && ergon_compare_text(res, &text, &e) == 0 && text)
		snprintf(c->detail, sizeof c->detail, "%s", text);
	free(text);
	if (rc == ERGON_EREFUSED)
		check_set(c, FAILURE,
			  "not comparable with the baseline (ergon compare's rules): %s; the "
			  "differences are listed below",
			  e.msg[0] ? e.msg : "a difference breaks comparability");
	else if (rc)
		check_set(c, ERROR, "compare failed: %s", e.msg);
	else if (json_integer_value(json_object_get(res, "spread_unknown")) > 0)
		/* ergon compare's rule: no verdict without the run-to-run
		 * spread, and compare exits as for "not comparable". */
		check_set(c, FAILURE,
			  "no verdict: the run-to-run spread is unknown (fewer than %d "
			  "repetitions on a side for %lld figures; ergon compare's rule, "
			  "docs/COMPARE.md): a regression check needs %d or more profiles of "
			  "this model and of the baseline",
			  ERGON_STATS_MIN_REPEATS,
			  (long long)json_integer_value(json_object_get(res, "spread_unknown")),
			  ERGON_STATS_MIN_REPEATS);
	else if (ergon_compare_regressed(res))
		check_set(c, FAILURE,
			  "regression: a headline figure is worse than the baseline by more than "
			  "%g %% (figures below)",
			  o->threshold_pct);
	else
		check_set(c, PASS, "no headline figure worse than the baseline by more than %g %%",
			  o->threshold_pct);
	json_decref(res);
	json_decref(base);
}

/* One model's stages, in order (validate_model): prepare and profile
 * (model_profile), the profile check (check_profile), then the checks of
 * its summary: correctness, integrity, regression against the baseline,
 * the database. Each adds its check to m. */

/* Prepare the model (its configuration; its firmware on QEMU, the host
 * interpreter's run elsewhere; the board's firmware folder) and profile it
 * into out: *summary (caller decrefs) and *model (the model's record). */
static int model_profile(const struct ergon_validate_opts *o, const struct model_result *m,
			 const char *out, json_t **model, json_t **summary, struct ergon_err *e)
{
	char fwdir[VALIDATE_PATH_MAX + 16];
	snprintf(fwdir, sizeof fwdir, "%s/firmware", out);
	struct ergon_config cfg;
	struct ergon_profile_firmware fw;
	int rc = model_config(o, out, &cfg, e);
	if (rc != 0)
		return rc;
	int sim = cfg.target.lifecycle == ERGON_LIFECYCLE_SIM;
	int need_power = cfg.power.enabled && cfg.power.firmware == ERGON_FIRMWARE_DEDICATED;
	/* QEMU: build the firmware here; sim and real boards: only the host
	 * interpreter's run (the output the board must match). */
	if (o->firmware_dir)
		snprintf(fwdir, sizeof fwdir, "%s/%s", o->firmware_dir, m->name);
	rc = ergon_mkdir_p(out, e);
	if (rc == 0)
		rc = ergon_model_fw_prepare_profile(m->path, cfg.board->name, sim || o->firmware_dir ? NULL : fwdir,
						    need_power,
						    (o->no_cache ? ERGON_MODEL_FW_NO_CACHE : 0u) |
							(cfg.profiling.extreme_mode
							     ? ERGON_MODEL_FW_EXTREME_MODE
							     : 0u) |
							(cfg.profiling.force_shared_sram
							     ? ERGON_MODEL_FW_SHARED_SRAM
							     : 0u),
						    model, e);
	/* ergon's own build: its images, not a search of a folder an earlier
	 * run may have left other images in; a --firmware-dir: the search. */
	if (rc == 0 && !sim)
		rc = o->firmware_dir ? ergon_profile_firmware_find(fwdir, need_power, &fw, e)
				     : ergon_profile_firmware_built(*model, need_power, &fw, e);
	if (rc == 0) {
		struct ergon_profile_opts po = {.cfg = &cfg,
						.fw = sim ? NULL : &fw,
						.rtt_port = o->rtt_port,
						.out_dir = out,
						.write_flags = o->write_flags,
						.interrupted = o->interrupted,
						.model = *model,
						.repeat = o->repeat > 1 ? o->repeat : 1u,
						.repeat_pmu = o->repeat > 1};
		rc = ergon_profile_run(&po, NULL, summary, e);
	}
	ergon_config_cleanup(&cfg);
	return rc;
}

/* The profile check: the PMU stage finished, or why not. */
static void check_profile(struct check *prof, int rc, const json_t *summary, const char *out,
			  const struct ergon_err *e)
{
	const json_t *pmu = json_object_get(json_object_get(summary, "stages"), "pmu");
	const char *status = json_string_value(json_object_get(pmu, "status"));
	if (rc == 0 && summary && status && strcmp(status, "ok") != 0) {
		const char *why = json_string_value(json_object_get(pmu, "error"));
		check_set(prof, ERROR, "the PMU stage %s: %s", status, why ? why : e->msg);
	} else if (rc || !summary) {
		check_set(prof, ERROR, "%s",
			  e->msg[0] ? e->msg : "the profile produced no summary");
	} else {
		check_set(prof, PASS, "profiled: %s/summary.json", out);
	}
}

/* The summary stored in the database (--db). */
static void check_ingest(struct check *c, const struct ergon_validate_opts *o, const char *out)
{
	char spath[VALIDATE_PATH_MAX + 16], key[80] = "";
	int res = 0;
	struct ergon_err e = {0};
	snprintf(spath, sizeof spath, "%s/summary.json", out);
	if (ergon_db_ingest_file(o->db, spath, &res, key, &e))
		check_set(c, FAILURE, "%s", e.msg);
	else
		check_set(c, PASS, "%s %s", res == ERGON_DB_INGESTED ? "stored" : "already stored",
			  key);
}

/* Profile one model and run its checks into m. */
static void validate_model(const struct ergon_validate_opts *o, struct ergon_db *bdb,
			   struct model_result *m, size_t i_model, size_t n_models)
{
	char out[VALIDATE_PATH_MAX];
	snprintf(out, sizeof out, "%s/%s", o->out_dir, m->name);
	struct check *prof = check_add(m, "profile");
	struct ergon_err e = {0};
	json_t *model = NULL, *summary = NULL;
	double t0 = now_s();
	if (o->progress)
		o->progress(o->progress_ctx, i_model, n_models, m->name, "profile");
	int rc = model_profile(o, m, out, &model, &summary, &e);
	prof->time_s = now_s() - t0;
	const char *kind =
	    json_string_value(json_object_get(json_object_get(summary, "provenance"), "kind"));
	snprintf(m->provenance, sizeof m->provenance, "%s", kind ? kind : "");
	check_profile(prof, rc, summary, out, &e);
	const char *later[] = {"correctness", "integrity", o->baseline ? "regression" : NULL,
			       o->db ? "db ingest" : NULL};
	if (prof->outcome != PASS) {
		for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
			if (later[i])
				check_set(check_add(m, later[i]), SKIPPED,
					  "not checked: the profile did not complete");
	} else {
		check_correctness(check_add(m, "correctness"), summary);
		check_integrity(check_add(m, "integrity"), summary);
		if (o->baseline) {
			if (o->progress)
				o->progress(o->progress_ctx, i_model, n_models, m->name,
					    "regression");
			check_regression(check_add(m, "regression"), o, bdb, m, summary);
		}
		if (o->db)
			check_ingest(check_add(m, "db ingest"), o, out);
	}
	json_decref(summary);
	json_decref(model);
}

static const char *outcome_tag(enum outcome o)
{
	return o == FAILURE ? "failure" : o == ERROR ? "error" : "skipped";
}

static void xml_attr(struct ergon_dynbuf *b, const char *name, const char *v)
{
	ergon_dynbuf_addf(b, " %s=\"", name);
	ergon_xml_escape(b, v);
	ergon_dynbuf_adds(b, "\"");
}

static void xml_testsuite(struct ergon_dynbuf *b, const struct ergon_validate_opts *o,
			  const struct model_result *m, const char *stamp, const char *host)
{
	unsigned f = 0, er = 0, sk = 0;
	double t = 0;
	for (int i = 0; i < m->n; i++) {
		f += m->checks[i].outcome == FAILURE;
		er += m->checks[i].outcome == ERROR;
		sk += m->checks[i].outcome == SKIPPED;
		t += m->checks[i].time_s;
	}
	char classname[VALIDATE_NAME_MAX + 96];
	snprintf(classname, sizeof classname, "ergon.validate.%s.%s", o->board, m->name);
	ergon_dynbuf_adds(b, "  <testsuite");
	xml_attr(b, "name", classname);
	ergon_dynbuf_addf(b, " tests=\"%d\" failures=\"%u\" errors=\"%u\" skipped=\"%u\"", m->n, f,
			  er, sk);
	ergon_dynbuf_addf(b, " time=\"%.3f\"", t);
	xml_attr(b, "timestamp", stamp);
	xml_attr(b, "hostname", host);
	ergon_dynbuf_adds(b, ">\n    <properties>\n      <property name=\"model\"");
	xml_attr(b, "value", m->path);
	ergon_dynbuf_adds(b, "/>\n      <property name=\"board\"");
	xml_attr(b, "value", o->board);
	ergon_dynbuf_addf(b, "/>\n      <property name=\"power\" value=\"%s\"/>\n",
			  o->power ? "true" : "false");
	/* What the figures are (DESIGN.md's one rule): the summary's own
	 * provenance, and for the virtual bench why. */
	if (m->provenance[0]) {
		ergon_dynbuf_adds(b, "      <property name=\"provenance\"");
		xml_attr(b, "value", m->provenance);
		ergon_dynbuf_adds(b, "/>\n");
	}
	if (strcmp(o->board, "sim") == 0)
		ergon_dynbuf_adds(b, "      <property name=\"provenance_note\" value=\"virtual "
				     "bench: a simulated board and simulated instruments run the "
				     "model; cycles, times and power are synthetic, not "
				     "measured\"/>\n");
	if (o->firmware_dir) {
		ergon_dynbuf_adds(b, "      <property name=\"firmware_dir\"");
		xml_attr(b, "value", o->firmware_dir);
		ergon_dynbuf_adds(b, "/>\n");
	}
	if (o->baseline) {
		ergon_dynbuf_adds(b, "      <property name=\"baseline\"");
		xml_attr(b, "value", o->baseline);
		ergon_dynbuf_adds(b, "/>\n");
	}
	ergon_dynbuf_adds(b, "    </properties>\n");
	for (int i = 0; i < m->n; i++) {
		const struct check *c = &m->checks[i];
		ergon_dynbuf_adds(b, "    <testcase");
		xml_attr(b, "classname", classname);
		xml_attr(b, "name", c->name);
		ergon_dynbuf_addf(b, " time=\"%.3f\">\n", c->time_s);
		if (c->outcome == PASS) {
			ergon_dynbuf_adds(b, "      <system-out>");
			ergon_xml_escape(b, c->message);
			if (c->detail[0]) {
				ergon_dynbuf_adds(b, "\n");
				ergon_xml_escape(b, c->detail);
			}
			ergon_dynbuf_adds(b, "</system-out>\n");
		} else {
			ergon_dynbuf_addf(b, "      <%s", outcome_tag(c->outcome));
			xml_attr(b, "message", c->message);
			if (c->outcome != SKIPPED) {
				xml_attr(b, "type", c->name);
				ergon_dynbuf_adds(b, ">");
				ergon_xml_escape(b, c->detail[0] ? c->detail : c->message);
				ergon_dynbuf_addf(b, "</%s>\n", outcome_tag(c->outcome));
			} else {
				ergon_dynbuf_adds(b, "/>\n");
			}
		}
		ergon_dynbuf_adds(b, "    </testcase>\n");
	}
	ergon_dynbuf_adds(b, "  </testsuite>\n");
}

static int write_junit(const struct ergon_validate_opts *o, const struct model_result *m, size_t n,
		       struct ergon_validate_result *res, struct ergon_err *err)
{
	char stamp[32], host[256] = "localhost";
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "localhost");
	double total = 0;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < m[i].n; k++)
			total += m[i].checks[k].time_s;
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, VALIDATE_XML_MAX);
	ergon_dynbuf_adds(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	xml_attr(&b, "name", "ergon validate");
	ergon_dynbuf_addf(&b, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\"",
			  res->tests, res->failures, res->errors, res->skipped);
	ergon_dynbuf_addf(&b, " time=\"%.3f\">\n", total);
	for (size_t i = 0; i < n; i++)
		xml_testsuite(&b, o, &m[i], stamp, host);
	ergon_dynbuf_adds(&b, "</testsuites>\n");
	int rc = ergon_dynbuf_error(&b);
	if (rc) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, rc, "%s: the XML is over %zu bytes or out of memory",
				     o->junit_path, VALIDATE_XML_MAX);
	}
	size_t len = 0;
	char *xml = ergon_dynbuf_take(&b, &len);
	if (!xml)
		return ergon_err_set(err, ERGON_ENOMEM, "validate: out of memory");
	rc = ergon_file_write_atomic(o->junit_path, xml, len, o->write_flags | ERGON_WRITE_MKDIR,
				     err);
	free(xml);
	return rc;
}

/* The public outcomes are the private ones, counted from 1. */
_Static_assert(PASS + ERGON_VALIDATE_PASS == ERGON_VALIDATE_PASS &&
		   FAILURE + ERGON_VALIDATE_PASS == ERGON_VALIDATE_FAILURE &&
		   ERROR + ERGON_VALIDATE_PASS == ERGON_VALIDATE_ERROR &&
		   SKIPPED + ERGON_VALIDATE_PASS == ERGON_VALIDATE_SKIPPED,
	       "enum outcome and enum ergon_validate_outcome differ");

/* The typed records of the models, copied from the ones the XML is
 * written from. */
static int typed_models(const struct model_result *m, size_t n, struct ergon_validate_result *res,
			struct ergon_err *err)
{
	if (n == 0)
		return 0;
	res->per_model = calloc(n, sizeof *res->per_model);
	if (res->per_model == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "validate: out of memory");
	for (size_t i = 0; i < n; i++) {
		struct ergon_validate_model *t = &res->per_model[i];
		snprintf(t->name, sizeof t->name, "%s", m[i].name);
		t->provenance = m[i].provenance[0] ? ergon_provenance_parse(m[i].provenance) : 0;
		for (int k = 0; k < m[i].n && k < ERGON_VALIDATE_CHECKS_MAX; k++) {
			const struct check *c = &m[i].checks[k];
			struct ergon_validate_check *tc = &t->checks[k];
			snprintf(tc->name, sizeof tc->name, "%s", c->name);
			tc->outcome = (int)c->outcome + ERGON_VALIDATE_PASS;
			tc->time_s = c->time_s;
			snprintf(tc->message, sizeof tc->message, "%s", c->message);
			t->n_checks = (size_t)k + 1;
		}
	}
	return 0;
}

void ergon_validate_result_cleanup(struct ergon_validate_result *res)
{
	if (res == NULL)
		return;
	free(res->per_model);
	res->per_model = NULL;
}

int ergon_validate_run(const struct ergon_validate_opts *o, struct ergon_validate_result *res,
		       struct ergon_err *err)
{
	memset(res, 0, sizeof *res);
	char **names = NULL;
	size_t n = 0;
	struct model_result *m = NULL;
	struct ergon_db *bdb = NULL;
	struct ergon_config cfg;
	int rc = ergon_file_check_writable(o->junit_path, o->write_flags | ERGON_WRITE_MKDIR, err);
	if (rc)
		return rc;
	/* The board first: a board ergon builds no model firmware for is a
	 * usage error before anything is listed or built. */
	if ((rc = model_config(o, NULL, &cfg, err)) != 0)
		return rc;
	ergon_config_cleanup(&cfg);
	if ((rc = list_models(o->models_dir, &names, &n, err)) != 0)
		return rc;
	if (o->baseline) {
		struct stat st;
		int is_dir = stat(o->baseline, &st) == 0 && S_ISDIR(st.st_mode);
		if (!is_dir && strncmp(o->baseline, "postgres", 8) != 0 &&
		    access(o->baseline, R_OK) != 0)
			rc = ergon_err_set(err, ERGON_ENOENT,
					   "--baseline %s: no such folder or database; give an "
					   "earlier `ergon validate --out` folder or a database",
					   o->baseline);
		else if (!is_dir)
			rc = ergon_db_open(o->baseline, ERGON_DB_SCHEMA_VERSION, &bdb, err);
		if (rc)
			goto out;
	}
	m = calloc(n, sizeof *m);
	if (!m) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "validate: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		snprintf(m[i].name, sizeof m[i].name, "%.*s", (int)(len - 7), names[i]);
		snprintf(m[i].path, sizeof m[i].path, "%s/%s", o->models_dir, names[i]);
		if (o->interrupted && *o->interrupted) {
			check_set(check_add(&m[i], "profile"), SKIPPED,
				  "not run: validate was interrupted");
			continue;
		}
		validate_model(o, bdb, &m[i], i, n);
	}
	res->models = (unsigned)n;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < m[i].n; k++) {
			res->tests++;
			res->failures += m[i].checks[k].outcome == FAILURE;
			res->errors += m[i].checks[k].outcome == ERROR;
			res->skipped += m[i].checks[k].outcome == SKIPPED;
		}
	res->interrupted = o->interrupted && *o->interrupted;
	rc = typed_models(m, n, res, err);
	if (rc == 0)
		rc = write_junit(o, m, n, res, err);
out:
	ergon_db_close(bdb);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(m);
	return rc;
}

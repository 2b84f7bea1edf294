/* HPX outputs: the profile body, the CSV views and summary.json. */
#include "ergon/hpx_report.h"

#include "ergon/artifact.h"
#include "ergon/dynbuf.h"
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/sha256.h"
#include "ergon/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* RFC 4180 quoting when the cell needs it. */
static void sb_csv_cell(struct ergon_dynbuf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		ergon_dynbuf_adds(b, s);
		return;
	}
	ergon_dynbuf_add(b, "\"", 1);
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			ergon_dynbuf_add(b, "\"\"", 2);
		else
			ergon_dynbuf_add(b, c, 1);
	}
	ergon_dynbuf_add(b, "\"", 1);
}

/* The decimal digits of v, and a '-' before them when neg, ending at end;
 * returns where they start. */
static char *int_digits(uint64_t v, bool neg, char *end)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10u);
		v /= 10u;
	} while (v);
	if (neg)
		*--p = '-';
	return p;
}

/* Shortest decimal that reads back as the same double. An integer below
 * 10^15 in magnitude (not -0) is its digits: what %.15g prints for it
 * (no exponent below 10^15, no point, no trailing zeros) and reads back
 * exactly (below 2^53). So is a multiple of 1/4 below 10^13 (a median of
 * two or four counts) with its fraction: at most 13 + 2 significant
 * digits, so %.15g prints it exactly, and that reads back. The rest as
 * %.15g, %.16g or %.17g, the first that reads back. Without printf for
 * the first two (out has room for 32 bytes). */
static void fmt_num(char *out, size_t cap, double v)
{
	double a = fabs(v);
	if (a < 1e15 && v == (double)(int64_t)v && !(v == 0.0 && signbit(v))) {
		char buf[24];
		int64_t i = (int64_t)v;
		char *p = int_digits(i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i, i < 0,
				     buf + sizeof buf);
		size_t n = (size_t)(buf + sizeof buf - p);
		memcpy(out, p, n);
		out[n] = '\0';
		return;
	}
	double q = a * 4.0; /* exact: a power of two */
	if (a < 1e13 && q == floor(q) && ((uint64_t)q & 3u) != 0) {
		static const char *const frac[4] = {"", ".25", ".5", ".75"};
		char buf[24];
		uint64_t qi = (uint64_t)q;
		char *p = int_digits(qi >> 2, signbit(v), buf + sizeof buf);
		size_t n = (size_t)(buf + sizeof buf - p);
		memcpy(out, p, n);
		strcpy(out + n, frac[qi & 3u]);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, cap, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

static void sb_json_scalar(struct ergon_dynbuf *b, const json_t *v)
{
	char tmp[64];
	if (json_is_string(v)) {
		sb_csv_cell(b, json_string_value(v));
	} else if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		char *p = int_digits(i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i, i < 0,
				     tmp + sizeof tmp);
		ergon_dynbuf_add(b, p, (size_t)(tmp + sizeof tmp - p));
	} else if (json_is_number(v)) {
		fmt_num(tmp, sizeof(tmp), json_number_value(v));
		ergon_dynbuf_adds(b, tmp);
	}
}

int ergon_hpx_layers_csv(const json_t *layers, char **csv, size_t *len, struct ergon_err *err)
{
	*csv = NULL;
	struct ergon_dynbuf b;
	/* 10,000 layers x a few dozen counters stay far below this. */
	ergon_dynbuf_init(&b, (size_t)1 << 30);
	json_t *names = json_object(); /* ordered set of counter names */
	if (!names)
		return ergon_err_set(err, ERGON_ENOMEM, "csv: out of memory");
	size_t i;
	json_t *L;
	json_array_foreach(layers, i, L)
	{
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(L, "counters"), k, v)
		{
			if (!json_object_get(names, k))
				json_object_set_new(names, k, json_true());
		}
	}
	ergon_dynbuf_adds(&b, "index,op");
	const char *k;
	json_t *v;
	json_object_foreach(names, k, v)
	{
		ergon_dynbuf_add(&b, ",", 1);
		sb_csv_cell(&b, k);
	}
	ergon_dynbuf_adds(&b, ",overflow\n");
	json_array_foreach(layers, i, L)
	{
		sb_json_scalar(&b, json_object_get(L, "id"));
		ergon_dynbuf_add(&b, ",", 1);
		sb_json_scalar(&b, json_object_get(L, "op"));
		json_t *c = json_object_get(L, "counters");
		json_object_foreach(names, k, v)
		{
			ergon_dynbuf_add(&b, ",", 1);
			json_t *x = json_object_get(c, k);
			if (x)
				sb_json_scalar(&b, x);
		}
		ergon_dynbuf_adds(&b,
				  json_is_true(json_object_get(L, "overflow")) ? ",1\n" : ",0\n");
	}
	json_decref(names);
	if (ergon_dynbuf_error(&b)) {
		int e = ergon_dynbuf_error(&b);
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, e, "csv: %s", ergon_strerror(e));
	}
	*csv = ergon_dynbuf_take(&b, len);
	return *csv ? 0 : ergon_err_set(err, ERGON_ENOMEM, "csv: out of memory");
}

int ergon_hpx_profile_body(const json_t *result, int aggregation, json_t **out,
			   struct ergon_err *err)
{
	*out = NULL;
	const json_t *layers = json_object_get(result, "layers");
	const json_t *meta = json_object_get(result, "meta");
	const json_t *eg = json_object_get(result, "ergon");
	if (!json_is_array(layers) || !json_is_object(meta) || !json_is_object(eg))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "profile: the result is not an HPX parser result");
	/* total_cycles: the sum over layers that have a cycle count; null when no
	 * layer has one (an unsupported counter is never reported as zero). */
	double total = 0.0;
	size_t with_cycles = 0, i;
	json_t *L;
	json_array_foreach(layers, i, L)
	{
		json_t *c = json_object_get(L, "cycles");
		if (json_is_number(c)) {
			total += json_number_value(c);
			with_cycles++;
		}
	}
	/* Each layer with its cycles, read once (not two lookups per
	 * comparison). */
	struct by_cycles {
		json_t *layer;
		double cycles;
	} *sorted = calloc(with_cycles + 1, sizeof(*sorted));
	json_t *top = json_array();
	if (!sorted || !top) {
		free(sorted);
		json_decref(top);
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	}
	size_t n = 0;
	json_array_foreach(layers, i, L)
	{
		json_t *c = json_object_get(L, "cycles");
		if (json_is_number(c))
			sorted[n++] = (struct by_cycles){L, json_number_value(c)};
	}
	/* Stable order for equal cycles: qsort is not stable, so ties are broken
	 * by position through a merge-free insertion (n is a layer count). */
	for (size_t a = 1; a < n; a++) {
		struct by_cycles x = sorted[a];
		size_t b = a;
		while (b > 0 && sorted[b - 1].cycles < x.cycles) {
			sorted[b] = sorted[b - 1];
			b--;
		}
		sorted[b] = x;
	}
	for (size_t t = 0; t < n && t < ERGON_HPX_TOP_LAYERS; t++) {
		double cyc = sorted[t].cycles;
		json_array_append_new(top,
				      json_pack("{s:O, s:O, s:f, s:f}", "id",
						json_object_get(sorted[t].layer, "id"), "op",
						json_object_get(sorted[t].layer, "op"), "cycles",
						cyc, "pct", total > 0 ? 100.0 * cyc / total : 0.0));
	}
	free(sorted);
	json_t *issues = json_deep_copy(json_object_get(eg, "issues"));
	json_t *presets = json_array();
	const char *pk;
	json_t *pv;
	json_object_foreach(json_object_get(result, "presets"), pk, pv)
	{
		json_array_append_new(presets, json_string(pk));
	}
	json_t *body = json_pack(
	    "{s:s, s:O, s:O, s:o, s:o, s:O, s:{s:O, s:O, s:O}, s:o, s:O, s:O, s:I, s:I, s:I}",
	    "aggregation", ergon_hpx_aggregation_name(aggregation), "complete",
	    json_object_get(eg, "complete"), "layers", layers, "total_cycles",
	    with_cycles ? json_real(total) : json_null(), "top_layers", top, "overflow_detected",
	    json_object_get(result, "overflow_detected"), "memory", "model_size",
	    json_object_get(meta, "model_size"), "arena_size", json_object_get(meta, "arena_size"),
	    "allocated_arena", json_object_get(meta, "allocated_arena"), "presets", presets,
	    "groups", json_object_get(result, "groups"), "meta", meta, "parse_errors",
	    json_integer_value(json_object_get(eg, "parse_errors")), "lines",
	    json_integer_value(json_object_get(eg, "lines")), "heartbeats",
	    json_integer_value(json_object_get(eg, "heartbeats")));
	if (!body || !issues) {
		json_decref(body);
		json_decref(issues);
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	}
	json_object_set(body, "capabilities", json_object_get(eg, "capabilities"));
	if (!with_cycles) {
		/* Say why total_cycles is null and top_layers empty. */
		const char *why = ergon_issue_has(issues, "pmu.cycle_counter_missing")
				      ? "the target has no CPU cycle counter "
					"(pmu.cycle_counter_missing)"
				      : "no layer has an " HPX_COUNTER_CYCLES " column";
		json_object_set_new(body, "total_cycles_absent_reason", json_string(why));
	}
	json_object_set_new(body, "validity",
			    json_string(ergon_integrity_name(ergon_issues_integrity(issues))));
	json_object_set_new(body, "issues", issues);
	*out = body;
	return 0;
}

static int write_csv(const char *dir, const char *name, const json_t *layers, unsigned flags,
		     struct ergon_err *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return ergon_err_set(err, ERGON_EUSAGE, "%s: output path too long", dir);
	char *csv = NULL;
	size_t len = 0;
	int rc = ergon_hpx_layers_csv(layers, &csv, &len, err);
	if (!rc)
		rc = ergon_file_write_atomic(path, csv, len, flags, err);
	free(csv);
	return rc;
}

/* A group name is safe in a file name when it is [A-Za-z0-9_.-] only. */
static bool safe_name(const char *s)
{
	if (!*s || s[0] == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

/* Every CSV view of the result: profile_results.csv, then one per group
 * whose name is safe in a file name. */
static int write_csvs(const json_t *result, const char *dir, unsigned flags, struct ergon_err *err)
{
	int rc =
	    write_csv(dir, "profile_results.csv", json_object_get(result, "layers"), flags, err);
	const char *g;
	json_t *gl;
	json_object_foreach(json_object_get(result, "groups"), g, gl)
	{
		if (rc)
			break;
		if (!safe_name(g))
			continue; /* named in summary.json only */
		char name[300];
		snprintf(name, sizeof(name), "profile_results_%.200s.csv", g);
		rc = write_csv(dir, name, gl, flags, err);
	}
	return rc;
}

/* The CSVs are written by a second thread while the calling thread seals
 * and serialises summary.json (after the last byte of the log they are
 * all that is left); summary.json is written after the CSVs, and only when
 * they were. The thread reads the result only (jansson's lookups do not
 * write, its reference counts are atomic); one that cannot start writes
 * the CSVs inline. */
struct csv_job {
	const json_t *result;
	const char *dir;
	unsigned flags;
	int rc;
	struct ergon_err err;
};

static void *csv_main(void *arg)
{
	struct csv_job *j = arg;
	j->rc = write_csvs(j->result, j->dir, j->flags, &j->err);
	return NULL;
}

static int write_outputs(const json_t *result, json_t *art, const char *dir, const char *spath,
			 unsigned flags, struct ergon_err *err)
{
	struct csv_job csv = {.result = result, .dir = dir, .flags = flags};
	pthread_t th;
	bool started = pthread_create(&th, NULL, csv_main, &csv) == 0;
	if (!started)
		csv_main(&csv);
	char *text = NULL;
	size_t len = 0;
	struct ergon_err aerr = {0};
	int arc = ergon_artifact_serialize(art, spath, &text, &len, &aerr);
	if (started)
		pthread_join(th, NULL);
	/* The CSVs' error first (they were written first before). */
	int rc = csv.rc ? csv.rc : arc;
	if (csv.rc)
		*err = csv.err;
	else if (arc)
		*err = aerr;
	if (!rc)
		rc = ergon_file_write_atomic(spath, text, len, flags, err);
	free(text);
	return rc;
}

int ergon_hpx_report_write(const json_t *result, const struct ergon_hpx_report_opts *o,
			   json_t **summary_out, struct ergon_err *err)
{
	if (summary_out)
		*summary_out = NULL;
	unsigned flags = o->write_flags | ERGON_WRITE_MKDIR;
	char spath[4096];
	if ((size_t)snprintf(spath, sizeof(spath), "%s/summary.json", o->out_dir) >= sizeof(spath))
		return ergon_err_set(err, ERGON_EUSAGE, "%s: output path too long", o->out_dir);
	/* Refuse before writing anything, so outputs are never half replaced. */
	int rc = ergon_file_check_writable(spath, flags, err);
	if (rc)
		return rc;
	json_t *body = NULL;
	rc = ergon_hpx_profile_body(result, o->aggregation, &body, err);
	if (rc)
		return rc;
	if (o->extra_issues) {
		json_array_extend(json_object_get(body, "issues"), o->extra_issues);
		json_object_set_new(body, "validity",
				    json_string(ergon_integrity_name(
					ergon_issues_integrity(json_object_get(body, "issues")))));
	}
	if (o->capture)
		json_object_set(body, "capture", o->capture);
	json_t *art = ergon_artifact_new("ergon.report", 1, ERGON_PROV_REPLAYED);
	if (!art) {
		json_decref(body);
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	}
	json_t *mt = o->measured ? ergon_mtime_json(o->measured)
				 : ergon_mtime_unknown_json(
				       "the log was written before ergon read it and states no "
				       "time: when its counters were measured is not known",
				       NULL, NULL);
	json_object_set_new(art, "measurement_time", mt ? mt : json_null());
	/* The recording: where the counters came from. */
	json_t *rec = json_pack("{s:s, s:s}", "file", o->log_path ? o->log_path : "-", "provenance",
				o->recording ? o->recording : "unknown");
	char hex[65];
	uint64_t nbytes = 0;
	struct ergon_err se = {0};
	if (o->log_path && strcmp(o->log_path, "-") != 0 && o->log_sha256 != NULL) {
		json_object_set_new(rec, "bytes", json_integer((json_int_t)o->log_bytes));
		json_object_set_new(rec, "sha256", json_string(o->log_sha256));
	} else if (o->log_path && strcmp(o->log_path, "-") != 0 &&
		   ergon_sha256_file_hex(o->log_path, hex, &nbytes, &se) == 0) {
		json_object_set_new(rec, "bytes", json_integer((json_int_t)nbytes));
		json_object_set_new(rec, "sha256", json_string(hex));
	}
	json_object_set_new(json_object_get(art, "provenance"), "recording", rec);
	json_object_set_new(art, "instrument",
			    json_pack("{s:s, s:s}", "name", "hpx", "kind", "pmu_counters"));
	json_array_extend(json_object_get(art, "issues"), json_object_get(body, "issues"));
	json_object_set_new(art, "integrity",
			    json_string(ergon_integrity_name(
				ergon_issues_integrity(json_object_get(art, "issues")))));
	json_object_set_new(art, "profile", body);

	rc = write_outputs(result, art, o->out_dir, spath, flags, err);
	if (!rc && summary_out)
		*summary_out = json_incref(art);
	json_decref(art);
	return rc;
}

/* The typed result of ergon parse and ergon capture, read back from the
 * summary.json they wrote (ergon/hpx_report.h): the struct and the file
 * cannot disagree. */
#include "ergon/artifact.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every string and array the result owns, freed at cleanup. */
struct hpx_store {
	void **ptrs;
	size_t n, cap;
};

static void *store_keep(struct hpx_store *s, void *p)
{
	if (p == NULL)
		return NULL;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		void **v = realloc(s->ptrs, ncap * sizeof *v);
		if (v == NULL) {
			free(p);
			return NULL;
		}
		s->ptrs = v;
		s->cap = ncap;
	}
	s->ptrs[s->n++] = p;
	return p;
}

static char *store_strdup(struct hpx_store *s, const char *text, size_t len)
{
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, text, len);
		c[len] = '\0';
	}
	return store_keep(s, c);
}

/* A layer's id or op cell as the document holds it: an integer, a number
 * too large for one (REAL), text, else none. -1: out of memory. */
static int value_of(struct hpx_store *s, const json_t *j, struct ergon_pmu_value *v)
{
	memset(v, 0, sizeof *v);
	if (json_is_integer(j)) {
		v->kind = ERGON_PMU_INT;
		v->i = (int64_t)json_integer_value(j);
	} else if (json_is_real(j)) {
		v->kind = ERGON_PMU_REAL;
		v->d = json_real_value(j);
	} else if (json_is_string(j)) {
		v->kind = ERGON_PMU_TEXT;
		v->len = json_string_length(j);
		v->text = store_strdup(s, json_string_value(j), v->len);
		if (v->text == NULL)
			return -1;
	}
	return 0;
}

static int layer_of(struct hpx_store *s, const json_t *L, struct ergon_pmu_layer *out)
{
	memset(out, 0, sizeof *out);
	if (value_of(s, json_object_get(L, "id"), &out->id) ||
	    value_of(s, json_object_get(L, "op"), &out->op))
		return -1;
	const json_t *cyc = json_object_get(L, "cycles");
	out->has_cycles = json_is_number(cyc);
	out->cycles = out->has_cycles ? json_number_value(cyc) : NAN;
	out->overflow = json_is_true(json_object_get(L, "overflow"));
	const json_t *counters = json_object_get(L, "counters");
	size_t n = json_is_object(counters) ? json_object_size(counters) : 0;
	if (n == 0)
		return 0;
	out->counters = store_keep(s, calloc(n, sizeof *out->counters));
	if (out->counters == NULL)
		return -1;
	const char *name;
	const json_t *v;
	json_object_foreach((json_t *)counters, name, v)
	{
		if (!json_is_number(v))
			continue;
		struct ergon_pmu_counter *c = &out->counters[out->ncounters];
		c->name_len = strlen(name);
		c->name = store_strdup(s, name, c->name_len);
		if (c->name == NULL)
			return -1;
		c->value = json_number_value(v);
		out->ncounters++;
	}
	return 0;
}

static uint64_t count_of(const json_t *j)
{
	return json_is_integer(j) && json_integer_value(j) > 0 ? (uint64_t)json_integer_value(j)
							       : 0;
}

static int integrity_of(const char *name)
{
	if (name && strcmp(name, "valid") == 0)
		return ERGON_INTEGRITY_VALID;
	if (name && strcmp(name, "degraded") == 0)
		return ERGON_INTEGRITY_DEGRADED;
	return ERGON_INTEGRITY_INVALID;
}

static int capture_end_of(const char *end)
{
	static const char *const names[] = {
	    [ERGON_HPX_END_SENTINEL] = "sentinel",
	    [ERGON_HPX_END_OF_SOURCE] = "end_of_source",
	    [ERGON_HPX_END_TIMEOUT] = "timeout",
	    [ERGON_HPX_END_HEARTBEAT_TIMEOUT] = "heartbeat_timeout",
	    [ERGON_HPX_END_INTERRUPTED] = "interrupted",
	};
	for (int i = 1; end && i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(end, names[i]) == 0)
			return i;
	return ERGON_HPX_END_NONE;
}

static void read_recording(const json_t *rec, struct ergon_hpx_run_result *res)
{
	const char *prov = json_string_value(json_object_get(rec, "provenance"));
	res->recording = prov && strcmp(prov, "unknown") != 0 ? ergon_provenance_parse(prov) : 0;
	const char *file = json_string_value(json_object_get(rec, "file"));
	snprintf(res->log_path, sizeof res->log_path, "%s", file ? file : "");
	res->log_bytes = count_of(json_object_get(rec, "bytes"));
	const char *sha = json_string_value(json_object_get(rec, "sha256"));
	snprintf(res->log_sha256, sizeof res->log_sha256, "%s",
		 sha && strlen(sha) == 64 ? sha : "");
}

int ergon_hpx_run_result_read(const json_t *summary, struct ergon_hpx_run_result *res,
			      struct ergon_err *err)
{
	memset(res, 0, sizeof *res); /* padding too: a reader is a pure function */
	res->total_cycles = NAN;
	res->capture_elapsed_s = NAN;
	const json_t *profile = json_object_get(summary, "profile");
	ergon_verdict_hpx(summary, &res->verdict);
	res->integrity = integrity_of(json_string_value(json_object_get(summary, "integrity")));
	res->validity = integrity_of(json_string_value(json_object_get(profile, "validity")));
	if (!json_is_object(profile))
		return ergon_err_set(err, ERGON_EPARSE,
				     "summary.json: no \"profile\" object: not the summary of "
				     "ergon parse or ergon capture");
	const json_t *prov = json_object_get(summary, "provenance");
	res->provenance = ergon_provenance_parse(json_string_value(json_object_get(prov, "kind")));
	read_recording(json_object_get(prov, "recording"), res);
	res->aggregation =
	    ergon_hpx_aggregation_parse(json_string_value(json_object_get(profile, "aggregation")));
	if (res->aggregation < 0)
		res->aggregation = 0;
	res->complete = json_is_true(json_object_get(profile, "complete"));
	res->overflow_detected = json_is_true(json_object_get(profile, "overflow_detected"));
	const json_t *total = json_object_get(profile, "total_cycles");
	if (json_is_number(total))
		res->total_cycles = json_number_value(total);
	res->lines = count_of(json_object_get(profile, "lines"));
	res->parse_errors = count_of(json_object_get(profile, "parse_errors"));
	res->heartbeats = count_of(json_object_get(profile, "heartbeats"));
	const json_t *cap = json_object_get(profile, "capture");
	if (json_is_object(cap)) {
		res->capture_end = capture_end_of(json_string_value(json_object_get(cap, "end")));
		res->capture_bytes = count_of(json_object_get(cap, "bytes"));
		const json_t *el = json_object_get(cap, "elapsed_s");
		if (json_is_number(el))
			res->capture_elapsed_s = json_number_value(el);
	}
	const char *id = json_string_value(json_object_get(summary, "report_id"));
	snprintf(res->report_id, sizeof res->report_id, "%s", id ? id : "");

	struct hpx_store *s = calloc(1, sizeof *s);
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "summary.json: out of memory");
	res->priv = s;
	const json_t *layers = json_object_get(profile, "layers");
	size_t n = json_array_size(layers);
	if (n > 0) {
		res->layers.layers = store_keep(s, calloc(n, sizeof *res->layers.layers));
		if (res->layers.layers == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "summary.json: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (layer_of(s, json_array_get(layers, i), &res->layers.layers[i]))
			return ergon_err_set(err, ERGON_ENOMEM, "summary.json: out of memory");
		res->layers.n = i + 1;
	}
	const json_t *top = json_object_get(profile, "top_layers");
	for (size_t i = 0; i < json_array_size(top) && i < ERGON_HPX_TOP_LAYERS; i++) {
		const json_t *t = json_array_get(top, i);
		struct ergon_hpx_top_layer *tl = &res->top[i];
		if (value_of(s, json_object_get(t, "id"), &tl->id) ||
		    value_of(s, json_object_get(t, "op"), &tl->op))
			return ergon_err_set(err, ERGON_ENOMEM, "summary.json: out of memory");
		tl->cycles = json_number_value(json_object_get(t, "cycles"));
		tl->pct = json_number_value(json_object_get(t, "pct"));
		res->n_top = i + 1;
	}
	int rc = ergon_issue_list_from_json(json_object_get(profile, "issues"), &res->issues, err);
	return rc;
}

void ergon_hpx_run_result_cleanup(struct ergon_hpx_run_result *res)
{
	if (res == NULL)
		return;
	struct hpx_store *s = res->priv;
	for (size_t i = 0; s && i < s->n; i++)
		free(s->ptrs[i]);
	if (s)
		free(s->ptrs);
	free(s);
	ergon_issue_list_cleanup(&res->issues);
	memset(res, 0, sizeof *res);
	res->total_cycles = NAN;
	res->capture_elapsed_s = NAN;
}

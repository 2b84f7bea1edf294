/* Uncertainty budgets as JSON, read back and checked (common.h). */
#include "common.h"

#include "ergon/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define COMBINATION                                                                         \
	"GUM: standard uncertainties; terms of one correlation group add linearly, the "    \
	"rest in quadrature; U = k u_c with k = 2 (about 95 %); an unknown term makes the " \
	"budget incomplete and U is not stated"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

const char *ergon_budget_dominant_name(const struct ergon_budget *b)
{
	if (b->dominant < 0 || (size_t)b->dominant >= b->n)
		return "";
	return b->term[b->dominant].name;
}

json_t *ergon_budget_json(const struct ergon_budget *b)
{
	json_t *terms = json_array();
	if (terms == NULL)
		return NULL;
	for (size_t i = 0; i < b->n; i++) {
		const struct ergon_budget_term *t = &b->term[i];
		json_array_append_new(
		    terms, json_pack("{s:s, s:b, s:o, s:s, s:o, s:o, s:s, s:i, s:s}", "name",
				     t->name, "known", t->known, "value", num(t->u), "unit",
				     b->unit, "limit", num(t->limit), "divisor", num(t->divisor),
				     "distribution", ergon_budget_dist_name(t->dist),
				     "correlation_group", t->group, "source", t->source));
	}
	const char *dom = ergon_budget_dominant_name(b);
	double rel = ergon_budget_rel_pct(b);
	return json_pack("{s:o, s:s, s:o, s:f, s:o, s:o, s:o, s:b, s:o, s:b, s:o, s:s}", "figure",
			 num(b->value), "unit", b->unit, "u_c", num(b->u_c), "k", b->k, "U",
			 num(b->U), "U_known", num(b->U_known), "U_pct", num(rel), "complete",
			 b->complete, "dominant", dom[0] ? json_string(dom) : json_null(),
			 "terms_dropped", b->overflow, "terms", terms, "combination", COMBINATION);
}

int ergon_budget_from_json(const json_t *j, const char *where, struct ergon_budget *b,
			   struct ergon_err *err)
{
	const json_t *fig = json_object_get(j, "figure");
	const char *unit = json_string_value(json_object_get(j, "unit"));
	const json_t *terms = json_object_get(j, "terms");
	if (!json_is_object(j) || (!json_is_number(fig) && !json_is_null(fig)) || unit == NULL ||
	    !json_is_array(terms) || json_array_size(terms) > ERGON_BUDGET_MAX_TERMS)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: not an uncertainty budget (figure, unit, terms; at "
				     "most %d terms)",
				     where, ERGON_BUDGET_MAX_TERMS);
	ergon_budget_init(b, json_is_number(fig) ? json_number_value(fig) : NAN, unit);
	b->overflow = json_is_true(json_object_get(j, "terms_dropped"));
	size_t i;
	const json_t *t;
	json_array_foreach(terms, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *src = json_string_value(json_object_get(t, "source"));
		const char *dist = json_string_value(json_object_get(t, "distribution"));
		const json_t *known = json_object_get(t, "known");
		const json_t *limit = json_object_get(t, "limit");
		const json_t *div = json_object_get(t, "divisor");
		const json_t *grp = json_object_get(t, "correlation_group");
		int d = ergon_budget_dist_parse(dist);
		if (name == NULL || src == NULL || d == 0 || !json_is_boolean(known) ||
		    !json_is_integer(grp) || json_integer_value(grp) < 0 ||
		    json_integer_value(grp) > 1000000)
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field %s.terms[%zu]: needs name, known, limit, "
					     "divisor, distribution, correlation_group and source",
					     where, i);
		if (json_is_true(known)) {
			if (!json_is_number(limit) || !json_is_number(div) ||
			    !(json_number_value(div) > 0) || json_number_value(limit) < 0)
				return ergon_err_set(
				    err, ERGON_EVERIFY,
				    "field %s.terms[%zu]: a known term needs a limit "
				    ">= 0 and a divisor > 0",
				    where, i);
			ergon_budget_add_u(b, name, json_number_value(limit),
					   json_number_value(div), d, (int)json_integer_value(grp),
					   "%s", src);
		} else {
			ergon_budget_add_unknown(b, name, "%s", src);
		}
	}
	ergon_budget_close(b);
	return 0;
}

static int same(const json_t *stated, double want, const char *where, const char *field,
		struct ergon_err *err)
{
	if (!isfinite(want)) {
		if (json_is_null(stated))
			return 0;
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.%s: states a number where its terms give none",
				     where, field);
	}
	if (!json_is_number(stated))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.%s: missing, though its terms give a number", where,
				     field);
	double x = json_number_value(stated);
	if (fabs(x - want) <= ERGON_VERIFY_ABS + ERGON_VERIFY_REL * fmax(fabs(x), fabs(want)))
		return 0;
	return ergon_err_set(err, ERGON_EVERIFY,
			     "field %s.%s: differs from what its terms combine to; the budget "
			     "was edited",
			     where, field);
}

int ergon_budget_json_check(const json_t *j, const char *where, struct ergon_err *err)
{
	struct ergon_budget b;
	int rc = ergon_budget_from_json(j, where, &b, err);
	if (rc)
		return rc;
	const json_t *terms = json_object_get(j, "terms");
	for (size_t i = 0; i < b.n; i++) {
		char f[64];
		snprintf(f, sizeof(f), "terms[%zu].value", i);
		if ((rc = same(json_object_get(json_array_get(terms, i), "value"), b.term[i].u,
			       where, f, err)))
			return rc;
	}
	const json_t *k = json_object_get(j, "k");
	if (!json_is_number(k) || json_number_value(k) != ERGON_BUDGET_K)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.k: the coverage factor must be %g", where,
				     ERGON_BUDGET_K);
	if ((rc = same(json_object_get(j, "u_c"), b.u_c, where, "u_c", err)) ||
	    (rc = same(json_object_get(j, "U"), b.U, where, "U", err)) ||
	    (rc = same(json_object_get(j, "U_known"), b.U_known, where, "U_known", err)) ||
	    (rc = same(json_object_get(j, "U_pct"), ergon_budget_rel_pct(&b), where, "U_pct", err)))
		return rc;
	if (json_is_true(json_object_get(j, "complete")) != b.complete)
		return ergon_err_set(
		    err, ERGON_EVERIFY, "field %s.complete: says %s, its terms make it %s", where,
		    b.complete ? "incomplete" : "complete", b.complete ? "complete" : "incomplete");
	const char *dom = json_string_value(json_object_get(j, "dominant"));
	const char *want = ergon_budget_dominant_name(&b);
	if (strcmp(dom ? dom : "", want) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.dominant: names %s, its terms make it %s", where,
				     dom ? dom : "nothing", want[0] ? want : "nothing");
	return 0;
}

static int is_budget(const json_t *o)
{
	return json_is_object(o) && json_is_array(json_object_get(o, "terms")) &&
	       json_object_get(o, "U") != NULL && json_object_get(o, "figure") != NULL;
}

int ergon_budget_json_check_all(const json_t *root, const char *where, size_t *count,
				struct ergon_err *err)
{
	if (is_budget(root)) {
		(*count)++;
		return ergon_budget_json_check(root, where, err);
	}
	char sub[400];
	if (json_is_object(root)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)root, k, v)
		{
			if (!json_is_object(v) && !json_is_array(v))
				continue;
			snprintf(sub, sizeof(sub), "%s%s%s", where, where[0] ? "." : "", k);
			int rc = ergon_budget_json_check_all(v, sub, count, err);
			if (rc)
				return rc;
		}
	} else if (json_is_array(root)) {
		size_t i;
		json_t *v;
		json_array_foreach((json_t *)root, i, v)
		{
			if (!json_is_object(v) && !json_is_array(v))
				continue;
			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			int rc = ergon_budget_json_check_all(v, sub, count, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

json_t *ergon_rated_to_json(const struct ergon_rated *x)
{
	return json_pack("{s:o, s:s}", "value", num(x->value), "source", x->source);
}

/* The rated figure at um.key (key NULL: um itself). */
static int rated_from(const json_t *um, const char *key, const char *where, struct ergon_rated *x,
		      struct ergon_err *err)
{
	const json_t *j = key ? json_object_get(um, key) : um;
	const json_t *v = json_object_get(j, "value");
	const char *s = json_string_value(json_object_get(j, "source"));
	if (!json_is_object(j) || (!json_is_number(v) && !json_is_null(v)) || s == NULL ||
	    (json_is_number(v) && json_number_value(v) < 0))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s%s%s: expected {\"value\": number >= 0 or null, "
				     "\"source\": text}",
				     where, key ? "." : "", key ? key : "");
	x->value = json_is_number(v) ? json_number_value(v) : NAN;
	snprintf(x->source, sizeof(x->source), "%s", s);
	return 0;
}

json_t *ergon_run_um_json(const struct ergon_run_um *um)
{
	json_t *pv = json_array();
	for (int i = 0; i < um->n_pterms; i++) {
		const struct ergon_rating_pterm *t = &um->pterm[i];
		json_array_append_new(
		    pv, json_pack("{s:s, s:s, s:o, s:s}", "name", t->name, "kind",
				  t->kind == ERGON_PTERM_GAIN_PCT ? "gain_pct" : "offset_w",
				  "value", num(t->x.value), "source", t->x.source));
	}
	return json_pack("{s:i, s:f, s:o, s:b, s:o, s:o, s:o, s:o, s:b}", "version", 1, "k",
			 ERGON_BUDGET_K, "rated", pv, "offset_constant", um->offset_constant,
			 "resolution_w", ergon_rated_to_json(&um->resolution_w), "resolution_j",
			 ergon_rated_to_json(&um->resolution_j), "host_timebase_ppm",
			 ergon_rated_to_json(&um->host_ppm), "instrument_timebase_ppm",
			 ergon_rated_to_json(&um->inst_ppm), "clock_instrument",
			 um->clock_instrument);
}

int ergon_run_um_from_json(const json_t *j, const char *where, struct ergon_run_um *um,
			   struct ergon_err *err)
{
	memset(um, 0, sizeof(*um));
	const json_t *ver = json_object_get(j, "version");
	if (!json_is_object(j) || !json_is_integer(ver) || json_integer_value(ver) != 1)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field %s: an uncertainty budget model of version 1 is expected", where);
	int rc;
	const json_t *pv = json_object_get(j, "rated");
	if (!json_is_array(pv) || json_array_size(pv) > ERGON_RATING_MAX_PTERMS)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.rated: expected an array of at most %d terms", where,
				     ERGON_RATING_MAX_PTERMS);
	for (size_t i = 0; i < json_array_size(pv); i++) {
		const json_t *t = json_array_get(pv, i);
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *kind = json_string_value(json_object_get(t, "kind"));
		struct ergon_rating_pterm *d = &um->pterm[um->n_pterms];
		char f[48];
		snprintf(f, sizeof(f), "rated[%zu]", i);
		if (name == NULL || kind == NULL ||
		    (strcmp(kind, "gain_pct") != 0 && strcmp(kind, "offset_w") != 0))
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field %s.%s: needs a name and a kind (gain_pct or "
					     "offset_w)",
					     where, f);
		char w2[160];
		snprintf(w2, sizeof(w2), "%s.%s", where, f);
		struct ergon_rated x;
		if ((rc = rated_from(t, NULL, w2, &x, err)))
			return rc;
		snprintf(d->name, sizeof(d->name), "%s", name);
		d->kind = kind[0] == 'g' ? ERGON_PTERM_GAIN_PCT : ERGON_PTERM_OFFSET_W;
		d->x = x;
		um->n_pterms++;
	}
	if ((rc = rated_from(j, "resolution_w", where, &um->resolution_w, err)) ||
	    (rc = rated_from(j, "resolution_j", where, &um->resolution_j, err)) ||
	    (rc = rated_from(j, "host_timebase_ppm", where, &um->host_ppm, err)) ||
	    (rc = rated_from(j, "instrument_timebase_ppm", where, &um->inst_ppm, err)))
		return rc;
	const json_t *oc = json_object_get(j, "offset_constant");
	const json_t *ci = json_object_get(j, "clock_instrument");
	if (!json_is_boolean(oc) || !json_is_boolean(ci))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: offset_constant and clock_instrument must be "
				     "booleans",
				     where);
	um->offset_constant = json_is_true(oc);
	um->clock_instrument = json_is_true(ci);
	return 0;
}

/* Instrument ratings: the stated figures, their overrides and their JSON
 * (ergon/rating.h). */
#include "ergon/rating.h"

#include "ergon/parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void unknown(struct ergon_rated *x)
{
	x->value = NAN;
	x->source[0] = '\0';
}

void ergon_rating_init(struct ergon_rating *r, int model)
{
	memset(r, 0, sizeof(*r));
	r->model = model;
	r->view_v = NAN;
	r->view_a = NAN;
	unknown(&r->v_gain_pct);
	unknown(&r->v_offset_v);
	unknown(&r->shunt_tol_pct);
	unknown(&r->shunt_tempco_ppm_c);
	unknown(&r->shunt_temp_span_c);
	unknown(&r->timebase_ppm);
	for (int i = 0; i < ERGON_RATING_MAX_RANGES; i++) {
		r->range[i].full_scale_a = INFINITY;
		unknown(&r->range[i].gain_pct);
		unknown(&r->range[i].offset_a);
	}
}

void ergon_rating_add_pterm(struct ergon_rating *r, const char *name, int kind, double value,
			    const char *source_fmt, ...)
{
	if (r->n_pterms >= ERGON_RATING_MAX_PTERMS)
		return;
	struct ergon_rating_pterm *t = &r->pterm[r->n_pterms++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->kind = kind;
	t->x.value = value;
	va_list ap;
	va_start(ap, source_fmt);
	vsnprintf(t->x.source, sizeof(t->x.source), source_fmt, ap);
	va_end(ap);
}

/* The widest of one figure over the ranges: its value and the range whose
 * source it takes; unknown when any range's is. */
static double widest(const struct ergon_rating *r, int offset, int *at)
{
	double w = 0;
	*at = 0;
	for (int i = 0; i < r->n_ranges; i++) {
		const struct ergon_rated *x =
		    offset ? &r->range[i].offset_a : &r->range[i].gain_pct;
		if (!isfinite(x->value)) {
			*at = i;
			return NAN;
		}
		if (x->value >= w) {
			w = x->value;
			*at = i;
		}
	}
	return w;
}

void ergon_rating_build_power_view(struct ergon_rating *r)
{
	if (r->model != ERGON_RATING_IV)
		return;
	r->n_pterms = 0;
	r->offset_constant = r->n_ranges <= 1;
	int at = 0;
	double g = widest(r, 0, &at);
	const struct ergon_rating_range *rg = &r->range[at];
	if (isfinite(g))
		ergon_rating_add_pterm(
		    r, "current gain", ERGON_PTERM_GAIN_PCT, g, "%s%s%s", rg->gain_pct.source,
		    r->n_ranges > 1 ? "; the widest range: " : "", r->n_ranges > 1 ? rg->name : "");
	else
		ergon_rating_add_pterm(r, "current gain", ERGON_PTERM_GAIN_PCT, NAN, "range %s: %s",
				       rg->name,
				       rg->gain_pct.source[0] ? rg->gain_pct.source : "not stated");
	ergon_rating_add_pterm(r, "voltage gain", ERGON_PTERM_GAIN_PCT, r->v_gain_pct.value, "%s",
			       r->v_gain_pct.source[0] ? r->v_gain_pct.source : "not stated");
	double o = widest(r, 1, &at);
	rg = &r->range[at];
	if (!isfinite(o))
		ergon_rating_add_pterm(r, "current offset", ERGON_PTERM_OFFSET_W, NAN,
				       "range %s: %s", rg->name,
				       rg->offset_a.source[0] ? rg->offset_a.source : "not stated");
	else if (!isfinite(r->view_v))
		ergon_rating_add_pterm(r, "current offset", ERGON_PTERM_OFFSET_W, NAN,
				       "%.3g A (%s) at a rail voltage nobody states", o,
				       rg->offset_a.source);
	else
		ergon_rating_add_pterm(r, "current offset", ERGON_PTERM_OFFSET_W, o * r->view_v,
				       "%.3g A (%s) x the rail's %.4g V", o, rg->offset_a.source,
				       r->view_v);
	/* A voltage offset dv moves every power reading by I x dv = P x dv / V:
	 * a gain of dv / V at the rail's voltage. */
	if (!isfinite(r->v_offset_v.value))
		ergon_rating_add_pterm(r, "voltage offset", ERGON_PTERM_GAIN_PCT, NAN, "%s",
				       r->v_offset_v.source[0] ? r->v_offset_v.source
							       : "not stated");
	else if (!(r->view_v > 0))
		ergon_rating_add_pterm(r, "voltage offset", ERGON_PTERM_GAIN_PCT, NAN,
				       "%.3g V (%s) at a rail voltage nobody states",
				       r->v_offset_v.value, r->v_offset_v.source);
	else
		ergon_rating_add_pterm(r, "voltage offset", ERGON_PTERM_GAIN_PCT,
				       100.0 * r->v_offset_v.value / r->view_v,
				       "%.3g V (%s) over the rail's %.4g V", r->v_offset_v.value,
				       r->v_offset_v.source, r->view_v);
	if (r->external_shunt) {
		ergon_rating_add_pterm(
		    r, "shunt tolerance", ERGON_PTERM_GAIN_PCT, r->shunt_tol_pct.value, "%s",
		    r->shunt_tol_pct.source[0] ? r->shunt_tol_pct.source : "not stated");
		double tc = r->shunt_tempco_ppm_c.value * r->shunt_temp_span_c.value * 1e-4;
		if (isfinite(tc))
			ergon_rating_add_pterm(
			    r, "shunt tempco", ERGON_PTERM_GAIN_PCT, tc,
			    "%g ppm/C (%s) x %g C (%s)", r->shunt_tempco_ppm_c.value,
			    r->shunt_tempco_ppm_c.source, r->shunt_temp_span_c.value,
			    r->shunt_temp_span_c.source);
		else
			ergon_rating_add_pterm(r, "shunt tempco", ERGON_PTERM_GAIN_PCT, NAN, "%s",
					       !isfinite(r->shunt_tempco_ppm_c.value)
						   ? (r->shunt_tempco_ppm_c.source[0]
							  ? r->shunt_tempco_ppm_c.source
							  : "temperature coefficient not stated")
						   : (r->shunt_temp_span_c.source[0]
							  ? r->shunt_temp_span_c.source
							  : "temperature span not stated"));
	}
}

int ergon_rated_known(const struct ergon_rated *x)
{
	return isfinite(x->value);
}

void ergon_rated_set(struct ergon_rated *x, double value, const char *source_fmt, ...)
{
	x->value = value;
	va_list ap;
	va_start(ap, source_fmt);
	vsnprintf(x->source, sizeof(x->source), source_fmt, ap);
	va_end(ap);
}

void ergon_rated_unknown(struct ergon_rated *x, const char *why_fmt, ...)
{
	x->value = NAN;
	va_list ap;
	va_start(ap, why_fmt);
	vsnprintf(x->source, sizeof(x->source), why_fmt, ap);
	va_end(ap);
}

int ergon_rating_range_for(const struct ergon_rating *r, double abs_a)
{
	if (r->n_ranges <= 1)
		return 0;
	for (int i = 0; i < r->n_ranges; i++)
		if (!(abs_a > r->range[i].full_scale_a))
			return i;
	return r->n_ranges - 1;
}

int ergon_rating_override(struct ergon_rating *r, const char *key, const char *value,
			  const char *who, struct ergon_err *err)
{
	static const char *const keys =
	    "gain_pct, offset_w, i_gain_pct, i_offset_a, i_step_a, v_gain_pct, v_offset_v, "
	    "shunt_tolerance_pct, shunt_tempco_ppm_per_c, shunt_temp_span_c, timebase_ppm";
	double v = 0;
	char what[96];
	snprintf(what, sizeof(what), "%s rating.%s", who, key);
	struct ergon_err perr = {0};
	if (ergon_parse_double(value, what, &v, &perr) != 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s=%s: not a number; give the bound as a "
				     "plain number (e.g. rating.%s=0.1)",
				     what, value, key);
	if (v < 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s rating.%s=%s: a bound is not negative; give its magnitude",
				     who, key, value);
	struct ergon_rated *x = NULL;
	if (strcmp(key, "gain_pct") == 0 || strcmp(key, "offset_w") == 0) {
		/* The power view's terms of that kind give way to the one stated. */
		int kind = key[0] == 'g' ? ERGON_PTERM_GAIN_PCT : ERGON_PTERM_OFFSET_W;
		int w = 0;
		for (int i = 0; i < r->n_pterms; i++)
			if (r->pterm[i].kind != kind)
				r->pterm[w++] = r->pterm[i];
		r->n_pterms = w;
		if (r->model != ERGON_RATING_IV)
			r->model = ERGON_RATING_POWER;
		ergon_rating_add_pterm(r, kind == ERGON_PTERM_GAIN_PCT ? "gain" : "offset", kind, v,
				       "stated by the user (%s rating.%s=%s)", who, key, value);
		/* An IV rating keeps its channels for the gated engine; the
		 * view is what the user stated and is not rebuilt. */
		return 0;
	} else if (strcmp(key, "v_gain_pct") == 0) {
		x = &r->v_gain_pct;
	} else if (strcmp(key, "v_offset_v") == 0) {
		x = &r->v_offset_v;
	} else if (strcmp(key, "i_gain_pct") == 0 || strcmp(key, "i_offset_a") == 0) {
		int gain = key[2] == 'g';
		if (r->model != ERGON_RATING_IV) {
			r->model = ERGON_RATING_IV;
			r->n_ranges = 1;
		}
		for (int i = 0; i < r->n_ranges; i++)
			ergon_rated_set(gain ? &r->range[i].gain_pct : &r->range[i].offset_a, v,
					"stated by the user (%s rating.%s=%s)", who, key, value);
		ergon_rating_build_power_view(r);
		return 0;
	} else if (strcmp(key, "i_step_a") == 0) {
		if (r->model != ERGON_RATING_IV) {
			r->model = ERGON_RATING_IV;
			r->n_ranges = 1;
		}
		for (int i = 0; i < r->n_ranges; i++)
			r->range[i].resolution_a = v;
		return 0;
	} else if (strcmp(key, "shunt_tolerance_pct") == 0) {
		x = &r->shunt_tol_pct;
		r->external_shunt = 1;
	} else if (strcmp(key, "shunt_tempco_ppm_per_c") == 0) {
		x = &r->shunt_tempco_ppm_c;
		r->external_shunt = 1;
	} else if (strcmp(key, "shunt_temp_span_c") == 0) {
		x = &r->shunt_temp_span_c;
		r->external_shunt = 1;
	} else if (strcmp(key, "timebase_ppm") == 0) {
		x = &r->timebase_ppm;
	} else {
		return ergon_err_set(err, ERGON_EUSAGE, "%s rating.%s: unknown rating; known: %s",
				     who, key, keys);
	}
	ergon_rated_set(x, v, "stated by the user (%s rating.%s=%s)", who, key, value);
	if (x != &r->timebase_ppm)
		ergon_rating_build_power_view(r);
	return 0;
}

static json_t *rated_json(const struct ergon_rated *x)
{
	return json_pack("{s:o, s:s}", "value",
			 ergon_rated_known(x) ? json_real(x->value) : json_null(), "source",
			 x->source);
}

static const char *model_name(int m)
{
	return m == ERGON_RATING_POWER ? "power" : m == ERGON_RATING_IV ? "iv" : "none";
}

json_t *ergon_rating_to_json(const struct ergon_rating *r)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "model", json_string(model_name(r->model)));
	json_t *pv = json_array();
	for (int i = 0; i < r->n_pterms; i++) {
		const struct ergon_rating_pterm *t = &r->pterm[i];
		json_array_append_new(
		    pv,
		    json_pack("{s:s, s:s, s:o, s:s}", "name", t->name, "kind",
			      t->kind == ERGON_PTERM_GAIN_PCT ? "gain_pct" : "offset_w", "value",
			      ergon_rated_known(&t->x) ? json_real(t->x.value) : json_null(),
			      "source", t->x.source));
	}
	json_object_set_new(o, "power_view", pv);
	json_object_set_new(o, "offset_constant", json_boolean(r->offset_constant));
	json_object_set_new(o, "view_v", isfinite(r->view_v) ? json_real(r->view_v) : json_null());
	json_object_set_new(o, "view_a", isfinite(r->view_a) ? json_real(r->view_a) : json_null());
	if (r->model == ERGON_RATING_IV) {
		json_t *ranges = json_array();
		for (int i = 0; i < r->n_ranges && i < ERGON_RATING_MAX_RANGES; i++) {
			const struct ergon_rating_range *g = &r->range[i];
			json_array_append_new(
			    ranges,
			    json_pack("{s:s, s:o, s:o, s:o, s:f}", "name", g->name, "full_scale_a",
				      isfinite(g->full_scale_a) ? json_real(g->full_scale_a)
								: json_null(),
				      "gain_pct", rated_json(&g->gain_pct), "offset_a",
				      rated_json(&g->offset_a), "resolution_a", g->resolution_a));
		}
		json_object_set_new(o, "ranges", ranges);
		json_object_set_new(o, "range_rule", json_string(r->range_rule));
		json_object_set_new(o, "voltage",
				    json_pack("{s:o, s:o}", "gain_pct", rated_json(&r->v_gain_pct),
					      "offset_v", rated_json(&r->v_offset_v)));
	}
	json_object_set_new(o, "shunt",
			    r->external_shunt
				? json_pack("{s:o, s:o, s:o}", "tolerance_pct",
					    rated_json(&r->shunt_tol_pct), "tempco_ppm_per_c",
					    rated_json(&r->shunt_tempco_ppm_c), "temp_span_c",
					    rated_json(&r->shunt_temp_span_c))
				: json_null());
	json_object_set_new(o, "timebase_ppm", rated_json(&r->timebase_ppm));
	json_object_set_new(o, "notes", json_string(r->notes));
	return o;
}

static int rated_from(const json_t *j, const char *where, const char *field, struct ergon_rated *x,
		      struct ergon_err *err)
{
	const json_t *v = json_object_get(j, "value");
	const char *s = json_string_value(json_object_get(j, "source"));
	if (!json_is_object(j) || (!json_is_number(v) && !json_is_null(v)) || s == NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating field %s: expected {\"value\": number or null, "
				     "\"source\": text}",
				     where, field);
	x->value = json_is_number(v) ? json_number_value(v) : NAN;
	if (json_is_number(v) && (!isfinite(x->value) || x->value < 0))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating field %s: %g is not a bound (finite, >= 0)", where,
				     field, x->value);
	snprintf(x->source, sizeof(x->source), "%s", s);
	return 0;
}

int ergon_rating_from_json(const json_t *j, const char *where, struct ergon_rating *r,
			   struct ergon_err *err)
{
	const char *m = json_string_value(json_object_get(j, "model"));
	if (!json_is_object(j) || m == NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating: expected an object with a \"model\" (power, iv "
				     "or none)",
				     where);
	int model = strcmp(m, "power") == 0  ? ERGON_RATING_POWER
		    : strcmp(m, "iv") == 0   ? ERGON_RATING_IV
		    : strcmp(m, "none") == 0 ? ERGON_RATING_NONE
					     : -1;
	if (model < 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating.model %s: expected power, iv or none", where, m);
	ergon_rating_init(r, model);
	int rc = 0;
	const json_t *pv = json_object_get(j, "power_view");
	if (!json_is_array(pv) || json_array_size(pv) > ERGON_RATING_MAX_PTERMS)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating.power_view: expected an array of at most %d terms",
				     where, ERGON_RATING_MAX_PTERMS);
	for (size_t i = 0; i < json_array_size(pv); i++) {
		const json_t *t = json_array_get(pv, i);
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *kind = json_string_value(json_object_get(t, "kind"));
		char f[48];
		snprintf(f, sizeof(f), "power_view[%zu]", i);
		struct ergon_rated x;
		if (name == NULL || kind == NULL ||
		    (strcmp(kind, "gain_pct") != 0 && strcmp(kind, "offset_w") != 0))
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s: rating.%s: needs a name and a kind (gain_pct or "
					     "offset_w)",
					     where, f);
		if ((rc = rated_from(t, where, f, &x, err)))
			return rc;
		ergon_rating_add_pterm(r, name,
				       kind[0] == 'g' ? ERGON_PTERM_GAIN_PCT : ERGON_PTERM_OFFSET_W,
				       x.value, "%s", x.source);
	}
	r->offset_constant = json_is_true(json_object_get(j, "offset_constant"));
	const json_t *vv = json_object_get(j, "view_v"), *va = json_object_get(j, "view_a");
	r->view_v = json_is_number(vv) ? json_number_value(vv) : NAN;
	r->view_a = json_is_number(va) ? json_number_value(va) : NAN;
	if (model == ERGON_RATING_IV) {
		const json_t *ranges = json_object_get(j, "ranges");
		size_t n = json_array_size(ranges);
		if (!json_is_array(ranges) || n == 0 || n > ERGON_RATING_MAX_RANGES)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s: rating.ranges: expected 1 to %d ranges", where,
					     ERGON_RATING_MAX_RANGES);
		r->n_ranges = (int)n;
		double prev = -1;
		for (size_t i = 0; i < n; i++) {
			const json_t *g = json_array_get(ranges, i);
			struct ergon_rating_range *d = &r->range[i];
			char f[48];
			const char *name = json_string_value(json_object_get(g, "name"));
			const json_t *fs = json_object_get(g, "full_scale_a");
			const json_t *res = json_object_get(g, "resolution_a");
			if (name == NULL || (!json_is_number(fs) && !json_is_null(fs)) ||
			    !json_is_number(res) || json_number_value(res) < 0)
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s: rating.ranges[%zu]: needs name, full_scale_a "
				    "(number or null for the widest) and "
				    "resolution_a (>= 0)",
				    where, i);
			snprintf(d->name, sizeof(d->name), "%s", name);
			d->full_scale_a = json_is_number(fs) ? json_number_value(fs) : INFINITY;
			d->resolution_a = json_number_value(res);
			if (!(d->full_scale_a > prev))
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s: rating.ranges[%zu].full_scale_a: ranges "
						     "must ascend",
						     where, i);
			prev = d->full_scale_a;
			snprintf(f, sizeof(f), "ranges[%zu].gain_pct", i);
			if ((rc = rated_from(json_object_get(g, "gain_pct"), where, f, &d->gain_pct,
					     err)))
				return rc;
			snprintf(f, sizeof(f), "ranges[%zu].offset_a", i);
			if ((rc = rated_from(json_object_get(g, "offset_a"), where, f, &d->offset_a,
					     err)))
				return rc;
		}
		const json_t *v = json_object_get(j, "voltage");
		if ((rc = rated_from(json_object_get(v, "gain_pct"), where, "voltage.gain_pct",
				     &r->v_gain_pct, err)) ||
		    (rc = rated_from(json_object_get(v, "offset_v"), where, "voltage.offset_v",
				     &r->v_offset_v, err)))
			return rc;
		const char *rule = json_string_value(json_object_get(j, "range_rule"));
		snprintf(r->range_rule, sizeof(r->range_rule), "%s", rule ? rule : "");
	}
	const json_t *sh = json_object_get(j, "shunt");
	if (json_is_object(sh)) {
		r->external_shunt = 1;
		if ((rc = rated_from(json_object_get(sh, "tolerance_pct"), where,
				     "shunt.tolerance_pct", &r->shunt_tol_pct, err)) ||
		    (rc = rated_from(json_object_get(sh, "tempco_ppm_per_c"), where,
				     "shunt.tempco_ppm_per_c", &r->shunt_tempco_ppm_c, err)) ||
		    (rc = rated_from(json_object_get(sh, "temp_span_c"), where, "shunt.temp_span_c",
				     &r->shunt_temp_span_c, err)))
			return rc;
	} else if (sh != NULL && !json_is_null(sh)) {
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: rating.shunt: expected an object or null", where);
	}
	if ((rc = rated_from(json_object_get(j, "timebase_ppm"), where, "timebase_ppm",
			     &r->timebase_ppm, err)))
		return rc;
	const char *notes = json_string_value(json_object_get(j, "notes"));
	snprintf(r->notes, sizeof(r->notes), "%s", notes ? notes : "");
	return 0;
}

/* kernels.csv, the terminal table and the typed statistics of a "kernels"
 * section. */
#include "ergon/dynbuf.h"
#include "ergon/kernels_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RENDER_MAX (64u * 1024u * 1024u)

static const json_t *speedup_of(const json_t *c, const char *impl)
{
	const json_t *sp = json_object_get(c, "speedups");
	for (size_t k = 0; k < json_array_size(sp); k++) {
		const json_t *s = json_array_get(sp, k);
		const char *n = json_string_value(json_object_get(s, "impl"));
		if (n != NULL && strcmp(n, impl) == 0)
			return s;
	}
	return NULL;
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static int finish(struct ergon_dynbuf *b, char **out, size_t *len, struct ergon_err *err)
{
	int e = ergon_dynbuf_error(b);
	if (e != 0) {
		ergon_dynbuf_free(b);
		return ergon_err_set(err, e, "kernels: the rendered table is too big");
	}
	*out = ergon_dynbuf_take(b, len);
	return 0;
}

int ergon_kernels_csv_render(const json_t *section, char **out, size_t *len, struct ergon_err *err)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, RENDER_MAX);
	ergon_dynbuf_adds(&b, "case,impl,correct,timed,n,min,median,mean,baseline_mean,speedup\n");
	const json_t *cases = json_object_get(section, "cases");
	for (size_t i = 0; i < json_array_size(cases); i++) {
		const json_t *c = json_array_get(cases, i);
		const char *cn = json_string_value(json_object_get(c, "case"));
		const json_t *im = json_object_get(c, "impls");
		for (size_t k = 0; k < json_array_size(im); k++) {
			const json_t *m = json_array_get(im, k);
			const char *in = json_string_value(json_object_get(m, "impl"));
			int correct = json_is_true(json_object_get(m, "correct"));
			int timed = json_is_true(json_object_get(m, "timed"));
			ergon_dynbuf_addf(&b, "%s,%s,%s,%s,", cn, in, correct ? "pass" : "fail",
					  timed ? "yes" : "no");
			if (timed)
				ergon_dynbuf_addf(
				    &b, "%lld,%.17g,%.17g,%.17g,",
				    (long long)json_integer_value(json_object_get(m, "n")),
				    num(m, "min"), num(m, "median"), num(m, "mean"));
			else
				ergon_dynbuf_adds(&b, ",,,,");
			const json_t *s = speedup_of(c, in);
			if (s != NULL)
				ergon_dynbuf_addf(&b, "%.17g,%.17g\n", num(s, "baseline_mean"),
						  num(s, "speedup"));
			else
				ergon_dynbuf_adds(&b, ",\n");
		}
	}
	return finish(&b, out, len, err);
}

/* A CSV cell: quoted when it holds a comma, a quote or a line break. */
static void csv_cell(struct ergon_dynbuf *b, const char *v)
{
	if (strpbrk(v, ",\"\r\n") == NULL) {
		ergon_dynbuf_adds(b, v);
		return;
	}
	ergon_dynbuf_adds(b, "\"");
	for (const char *p = v; *p; p++)
		ergon_dynbuf_addf(b, *p == '"' ? "\"\"" : "%c", *p);
	ergon_dynbuf_adds(b, "\"");
}

/* A PMU count as a cell: the count, overflow, unsupported, or nothing. */
static void pmu_cell(struct ergon_dynbuf *b, const struct ergon_kernel_pmu_count *c,
		     const char *sep)
{
	ergon_dynbuf_adds(b, sep);
	if (c->state == ERGON_KERNEL_PMU_COUNTED)
		ergon_dynbuf_addf(b, "%llu", c->count);
	else if (c->state == ERGON_KERNEL_PMU_OVERFLOW)
		ergon_dynbuf_adds(b, "overflow");
	else if (c->state == ERGON_KERNEL_PMU_UNSUPPORTED)
		ergon_dynbuf_adds(b, "unsupported");
}

/* The PMU part of the terminal table: the counts of each case and
 * implementation, or one line saying why there are none. */
static void pmu_table(struct ergon_dynbuf *b, const struct ergon_kernels_summary *s)
{
	if (s->n_pmu_events == 0)
		return;
	if (!s->pmu_counted) {
		ergon_dynbuf_adds(b, "PMU counters ");
		for (size_t e = 0; e < s->n_pmu_events; e++)
			ergon_dynbuf_addf(b, "%s%s", e ? ", " : "", s->pmu_events[e]);
		ergon_dynbuf_addf(b, ": unsupported (%s); no count is reported\n", s->pmu_why);
		return;
	}
	ergon_dynbuf_adds(b, "PMU counts of one run per pass (ARM_PMU_ names without the "
			     "prefix; overflow: a chained pair overflowed, no exact count):\n");
	for (size_t i = 0; i < s->n_cases; i++)
		for (size_t k = 0; k < s->cases[i].n_impls; k++) {
			const struct ergon_kernel_impl_result *m = &s->cases[i].impls[k];
			ergon_dynbuf_addf(b, "  %s [%s]:", s->cases[i].name, m->impl);
			for (size_t e = 0; e < s->n_pmu_events; e++) {
				const char *nm = s->pmu_events[e];
				if (strncmp(nm, "ARM_PMU_", 8) == 0)
					nm += 8;
				ergon_dynbuf_addf(b, " %s=", nm);
				if (m->pmu[e].state == ERGON_KERNEL_PMU_NONE)
					ergon_dynbuf_adds(b, "-");
				else
					pmu_cell(b, &m->pmu[e], "");
			}
			ergon_dynbuf_adds(b, "\n");
		}
}

int ergon_kernels_case_summary_render(const json_t *section, char **out, size_t *len,
				      struct ergon_err *err)
{
	struct ergon_kernels_summary s;
	int rc = ergon_kernels_summary_read(section, &s, err);
	if (rc != 0) {
		ergon_kernels_summary_cleanup(&s);
		return rc;
	}
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, RENDER_MAX);
	ergon_dynbuf_adds(&b, "case,impl,correct,timed,n,median,median_ci_lo,median_ci_hi,"
			      "speedup_vs_baseline,valid_for_regression,reason");
	for (size_t e = 0; e < s.n_pmu_events; e++) {
		ergon_dynbuf_adds(&b, ",");
		csv_cell(&b, s.pmu_events[e]);
	}
	ergon_dynbuf_adds(&b, "\n");
	for (size_t i = 0; i < s.n_cases; i++) {
		const struct ergon_kernel_case_result *c = &s.cases[i];
		for (size_t k = 0; k < c->n_impls; k++) {
			const struct ergon_kernel_impl_result *m = &c->impls[k];
			csv_cell(&b, c->name);
			ergon_dynbuf_adds(&b, ",");
			csv_cell(&b, m->impl);
			ergon_dynbuf_addf(&b, ",%s,%s,", m->correct ? "pass" : "fail",
					  m->timed ? "yes" : "no");
			if (m->timed)
				ergon_dynbuf_addf(&b, "%zu,%.17g,%.17g,%.17g,", m->n, m->median,
						  m->ci_lo, m->ci_hi);
			else
				ergon_dynbuf_adds(&b, ",,,,");
			if (m->has_speedup && !isnan(m->speedup))
				ergon_dynbuf_addf(&b, "%.17g", m->speedup);
			ergon_dynbuf_addf(&b, ",%s,", m->valid_for_regression ? "yes" : "no");
			csv_cell(&b, m->regression_reason);
			for (size_t e = 0; e < s.n_pmu_events; e++)
				pmu_cell(&b, &m->pmu[e], ",");
			ergon_dynbuf_adds(&b, "\n");
		}
	}
	ergon_kernels_summary_cleanup(&s);
	return finish(&b, out, len, err);
}

int ergon_kernels_summary_table(const struct ergon_kernels_summary *s, char **out,
				struct ergon_err *err)
{
	struct ergon_dynbuf b;
	size_t len;
	ergon_dynbuf_init(&b, RENDER_MAX);
	ergon_dynbuf_addf(&b, "%-34s %-6s %-7s %-5s %8s %14s %14s %14s %14s %9s\n", "case", "impl",
			  "correct", "regr", "n", "min", "median", "mean", "baseline mean",
			  "speedup");
	for (size_t i = 0; i < s->n_cases; i++) {
		const struct ergon_kernel_case_result *c = &s->cases[i];
		for (size_t k = 0; k < c->n_impls; k++) {
			const struct ergon_kernel_impl_result *m = &c->impls[k];
			ergon_dynbuf_addf(&b, "%-34s %-6s %-7s %-5s ", c->name, m->impl,
					  m->correct ? "pass" : "FAIL",
					  m->valid_for_regression ? "yes" : "no");
			if (!m->timed) {
				ergon_dynbuf_addf(&b, "%8s  (%s)\n", "-", m->why);
				continue;
			}
			ergon_dynbuf_addf(&b, "%8zu %14.1f %14.1f %14.1f", m->n, m->min, m->median,
					  m->mean);
			if (m->has_speedup)
				ergon_dynbuf_addf(&b, " %14.1f %8.3fx\n", m->baseline_mean,
						  m->speedup);
			else
				ergon_dynbuf_adds(&b, "\n");
		}
	}
	ergon_dynbuf_addf(&b, "\ncounts in %s; speedup = %s mean / candidate mean (> 1: faster)\n",
			  s->unit[0] ? s->unit : "counts",
			  s->baseline[0] ? s->baseline : "baseline");
	for (size_t j = 0; j < s->n_geomean; j++) {
		const struct ergon_kernel_geomean *g = &s->geomean[j];
		ergon_dynbuf_addf(&b, "geometric mean of %s speedups over %zu cases: %.3fx (%s)\n",
				  g->impl, g->cases, g->speedup, g->note);
	}
	if (s->n_failures > 0)
		ergon_dynbuf_addf(&b,
				  "%zu implementation(s) failed correctness and were not timed\n",
				  s->n_failures);
	if (s->overhead_note[0])
		ergon_dynbuf_addf(&b, "timing-read overhead: %s\n", s->overhead_note);
	pmu_table(&b, s);
	/* regr: valid_for_regression (ergon_kernels_regression_valid); why
	 * each timed one that is not. */
	ergon_dynbuf_addf(&b,
			  "regr: valid for regression (correct, n >= %d, the median's interval "
			  "within +/-%.3g %% of the median); ergon compare calls a regression "
			  "only where both sides are valid\n",
			  ERGON_KERNELS_VALID_MIN_N, ERGON_KERNELS_VALID_CI_PCT);
	for (size_t i = 0; i < s->n_cases; i++)
		for (size_t k = 0; k < s->cases[i].n_impls; k++) {
			const struct ergon_kernel_impl_result *m = &s->cases[i].impls[k];
			if (m->timed && !m->valid_for_regression)
				ergon_dynbuf_addf(&b, "%s [%s]: not valid for regression: %s\n",
						  s->cases[i].name, m->impl, m->regression_reason);
		}
	/* Where outliers pull the mean away from the median, and the
	 * repetitions' medians (kernels run --repeat). */
	for (size_t i = 0; i < s->n_cases; i++) {
		const struct ergon_kernel_case_result *c = &s->cases[i];
		for (size_t k = 0; k < c->n_impls; k++) {
			const struct ergon_kernel_impl_result *m = &c->impls[k];
			if (m->mean_disagrees)
				ergon_dynbuf_addf(
				    &b,
				    "%s [%s]: the mean %.1f lies outside the median's interval "
				    "[%.1f, %.1f]; %zu slow and %zu fast outliers (Tukey's "
				    "fences): trust the median (%.1f)\n",
				    c->name, m->impl, m->mean, m->ci_lo, m->ci_hi, m->outliers_high,
				    m->outliers_low, m->median);
			if (!isnan(m->repeat_sd))
				ergon_dynbuf_addf(
				    &b,
				    "%s [%s]: median over %zu repetitions %.1f ± %.1f "
				    "(95 %% interval of their mean %.1f, sd %.1f)\n",
				    c->name, m->impl, m->repetitions, m->repeat_mean,
				    (m->repeat_ci_hi - m->repeat_ci_lo) / 2, m->repeat_mean,
				    m->repeat_sd);
		}
	}
	return finish(&b, out, &len, err);
}

int ergon_kernels_table_render(const json_t *section, char **out, struct ergon_err *err)
{
	struct ergon_kernels_summary s;
	int rc = ergon_kernels_summary_read(section, &s, err);
	if (rc == 0)
		rc = ergon_kernels_summary_table(&s, out, err);
	ergon_kernels_summary_cleanup(&s);
	return rc;
}

/* A number of the section, NaN when it has none. */
static double num_or_nan(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A text of the section into dst (cap max + 1). */
static int text_of(const json_t *o, const char *k, char *dst, size_t max, const char *where,
		   size_t i, struct ergon_err *err)
{
	const char *v = json_string_value(json_object_get(o, k));
	if (v == NULL)
		v = "";
	if (strlen(v) > max)
		return ergon_err_set(err, ERGON_EPARSE,
				     "kernels section: %s[%zu].%s is longer than %zu bytes", where,
				     i, k, max);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* A name of the section into dst (cap ERGON_KERNELS_NAME_MAX + 1). */
static int name_of(const json_t *o, const char *k, char *dst, const char *where, size_t i,
		   struct ergon_err *err)
{
	return text_of(o, k, dst, ERGON_KERNELS_NAME_MAX, where, i, err);
}

/* A count of the section, 0 when it is none or out of range. */
static size_t count_of(const json_t *o, const char *k)
{
	double n = num_or_nan(o, k);
	return n >= 0 && n <= (double)ERGON_KERNELS_MAX_SAMPLES ? (size_t)n : 0;
}

/* The implementation's "pmu" entry of each of the section's events. */
static void pmu_read(const json_t *m, const struct ergon_kernels_summary *s,
		     struct ergon_kernel_impl_result *r)
{
	const json_t *pmu = json_object_get(m, "pmu");
	for (size_t e = 0; e < s->n_pmu_events; e++) {
		const json_t *v = json_object_get(pmu, s->pmu_events[e]);
		const char *t = json_string_value(v);
		struct ergon_kernel_pmu_count *c = &r->pmu[e];
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			c->state = ERGON_KERNEL_PMU_COUNTED;
			c->count = (unsigned long long)json_integer_value(v);
		} else if (t != NULL && strncmp(t, "overflow", 8) == 0) {
			c->state = ERGON_KERNEL_PMU_OVERFLOW;
		} else if (t != NULL && strcmp(t, "unsupported") == 0) {
			c->state = ERGON_KERNEL_PMU_UNSUPPORTED;
		} else {
			c->state = ERGON_KERNEL_PMU_NONE;
		}
	}
}

static int impl_read(const json_t *c, const json_t *m, size_t k, struct ergon_kernel_impl_result *r,
		     struct ergon_err *err)
{
	int rc = name_of(m, "impl", r->impl, "cases[].impls", k, err);
	if (rc != 0)
		return rc;
	r->correct = json_is_true(json_object_get(m, "correct"));
	r->timed = json_is_true(json_object_get(m, "timed"));
	double n = num_or_nan(m, "n");
	r->n = r->timed && n >= 1 && n <= (double)ERGON_KERNELS_MAX_SAMPLES ? (size_t)n : 0;
	r->min = num_or_nan(m, "min");
	r->median = num_or_nan(m, "median");
	r->mean = num_or_nan(m, "mean");
	const json_t *ci = json_object_get(m, "median_ci");
	r->ci_lo = num_or_nan(ci, "lo");
	r->ci_hi = num_or_nan(ci, "hi");
	r->ci_coverage = num_or_nan(ci, "coverage");
	r->baseline_mean = r->speedup = NAN;
	const json_t *sp = r->impl[0] ? speedup_of(c, r->impl) : NULL;
	if (sp != NULL) {
		r->has_speedup = 1;
		r->baseline_mean = num_or_nan(sp, "baseline_mean");
		r->speedup = num_or_nan(sp, "speedup");
	}
	const json_t *rep = json_object_get(m, "repeat");
	double rn = num_or_nan(rep, "n");
	r->repetitions = rn >= 1 && rn <= ERGON_KERNELS_MAX_REPEAT ? (size_t)rn : 0;
	r->repeat_mean = num_or_nan(rep, "mean");
	r->repeat_sd = num_or_nan(rep, "sd");
	r->repeat_ci_lo = num_or_nan(rep, "ci_lo");
	r->repeat_ci_hi = num_or_nan(rep, "ci_hi");
	const char *mvm = json_string_value(json_object_get(m, "mean_vs_median"));
	r->mean_disagrees = mvm != NULL && strncmp(mvm, "disagree", 8) == 0;
	const json_t *out = json_object_get(m, "outliers");
	r->outliers_low = count_of(out, "low");
	r->outliers_high = count_of(out, "high");
	/* The artifact's verdict; the rule applied to what it states when it
	 * was written before the field existed. */
	const json_t *vr = json_object_get(m, "valid_for_regression");
	char reason[ERGON_KERNELS_NOTE_MAX + 1];
	int valid = ergon_kernels_regression_valid(r->correct, r->timed, r->n, r->median,
						   r->ci_lo, r->ci_hi, reason, sizeof reason);
	if (json_is_boolean(vr)) {
		r->valid_for_regression = json_is_true(vr);
		rc = text_of(m, "regression_reason", r->regression_reason, ERGON_KERNELS_NOTE_MAX,
			     "cases[].impls", k, err);
		if (rc != 0)
			return rc;
	} else {
		r->valid_for_regression = valid;
		memcpy(r->regression_reason, reason, strlen(reason) + 1);
	}
	return r->timed ? 0 : text_of(m, "why", r->why, ERGON_KERNELS_NOTE_MAX, "cases[].impls", k, err);
}

int ergon_kernels_summary_read(const json_t *section, struct ergon_kernels_summary *out,
			       struct ergon_err *err)
{
	*out = (struct ergon_kernels_summary){0};
	if (!json_is_object(section))
		return ergon_err_set(err, ERGON_EPARSE, "kernels section: not an object");
	int rc = name_of(section, "baseline", out->baseline, "section", 0, err);
	if (rc == 0)
		rc = name_of(section, "unit", out->unit, "section", 0, err);
	const json_t *cases = json_object_get(section, "cases");
	size_t nc = json_array_size(cases);
	if (rc == 0 && nc > ERGON_KERNELS_MAX_CASES)
		rc = ergon_err_set(err, ERGON_EPARSE, "kernels section: %zu cases, at most %d", nc,
				   ERGON_KERNELS_MAX_CASES);
	const json_t *pe = json_object_get(section, "pmu_events");
	if (rc == 0 && json_array_size(pe) > ERGON_KERNELS_MAX_PMU_EVENTS)
		rc = ergon_err_set(err, ERGON_EPARSE, "kernels section: %zu pmu_events, at most %d",
				   json_array_size(pe), ERGON_KERNELS_MAX_PMU_EVENTS);
	for (size_t e = 0; rc == 0 && e < json_array_size(pe); e++) {
		const char *v = json_string_value(json_array_get(pe, e));
		if (v == NULL || strlen(v) > ERGON_KERNELS_NAME_MAX)
			rc = ergon_err_set(err, ERGON_EPARSE,
					   "kernels section: pmu_events[%zu] is not a name of at "
					   "most %d bytes",
					   e, ERGON_KERNELS_NAME_MAX);
		else
			memcpy(out->pmu_events[e], v, strlen(v) + 1);
		out->n_pmu_events = rc == 0 ? e + 1 : out->n_pmu_events;
	}
	if (rc == 0 && out->n_pmu_events > 0) {
		const char *st = json_string_value(json_object_get(section, "pmu_status"));
		out->pmu_counted = st != NULL && strcmp(st, "counted") == 0;
		rc = text_of(section, "pmu_why", out->pmu_why, ERGON_KERNELS_NOTE_MAX, "section", 0,
			     err);
	}
	if (rc == 0 && nc > 0 && (out->cases = calloc(nc, sizeof *out->cases)) == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	for (size_t i = 0; rc == 0 && i < nc; i++) {
		const json_t *c = json_array_get(cases, i);
		struct ergon_kernel_case_result *cr = &out->cases[i];
		out->n_cases = i + 1;
		rc = name_of(c, "case", cr->name, "cases", i, err);
		const json_t *im = json_object_get(c, "impls");
		if (rc == 0 && json_array_size(im) > ERGON_KERNELS_MAX_IMPLS)
			rc =
			    ergon_err_set(err, ERGON_EPARSE,
					  "kernels section: cases[%zu] has %zu implementations, at "
					  "most %d",
					  i, json_array_size(im), ERGON_KERNELS_MAX_IMPLS);
		for (size_t k = 0; rc == 0 && k < json_array_size(im); k++) {
			rc = impl_read(c, json_array_get(im, k), k, &cr->impls[k], err);
			pmu_read(json_array_get(im, k), out, &cr->impls[k]);
			cr->n_impls = k + 1;
		}
	}
	const json_t *gm = json_object_get(section, "geomean");
	for (size_t j = 0; rc == 0 && j < json_array_size(gm) && j < ERGON_KERNELS_MAX_GEOMEANS;
	     j++) {
		const json_t *g = json_array_get(gm, j);
		struct ergon_kernel_geomean *o = &out->geomean[j];
		rc = name_of(g, "impl", o->impl, "geomean", j, err);
		double n = num_or_nan(g, "cases");
		o->cases = n >= 0 && n <= ERGON_KERNELS_MAX_CASES ? (size_t)n : 0;
		o->speedup = num_or_nan(g, "speedup");
		out->n_geomean = j + 1;
		if (rc == 0)
			rc = text_of(g, "note", o->note, ERGON_KERNELS_NOTE_MAX, "geomean", j, err);
	}
	size_t nf = json_array_size(json_object_get(section, "failures"));
	out->n_failures = nf <= ERGON_KERNELS_MAX_CASES * ERGON_KERNELS_MAX_IMPLS ? nf : 0;
	if (rc == 0)
		rc = text_of(section, "overhead_note", out->overhead_note, ERGON_KERNELS_NOTE_MAX,
			     "section", 0, err);
	return rc;
}

void ergon_kernels_summary_cleanup(struct ergon_kernels_summary *s)
{
	if (s == NULL)
		return;
	free(s->cases);
	*s = (struct ergon_kernels_summary){0};
}

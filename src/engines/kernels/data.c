/* The kernel method's statistics: per case and implementation the
 * correctness verdict and the kept samples, then min/median/mean, speedup
 * ratios against a baseline and their geometric mean (include/ergon/kernels.h). */
#include "ergon/kernels.h"
#include "ergon/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kimpl {
	char name[ERGON_KERNELS_NAME_MAX + 1];
	int failed;    /* a row said the output did not match the reference */
	size_t checks; /* rows seen (timed or not) */
	double *v;     /* timed counts, in arrival order */
	unsigned *rep; /* the repetition of each count (0: none given) */
	size_t n, cap;
};

struct kcase {
	char name[ERGON_KERNELS_NAME_MAX + 1];
	struct kimpl impl[ERGON_KERNELS_MAX_IMPLS];
	size_t n_impl;
};

struct ergon_kernels_data {
	struct kcase *cases;
	size_t n_cases, cap_cases;
	size_t n_samples;
	size_t last; /* the case of the previous add: rows arrive grouped */
};

int ergon_kernels_data_new(struct ergon_kernels_data **out, struct ergon_err *err)
{
	*out = calloc(1, sizeof **out);
	if (*out == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	return 0;
}

void ergon_kernels_data_free(struct ergon_kernels_data *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n_cases; i++)
		for (size_t k = 0; k < d->cases[i].n_impl; k++) {
			free(d->cases[i].impl[k].v);
			free(d->cases[i].impl[k].rep);
		}
	free(d->cases);
	free(d);
}

int ergon_kernels_data_merge(struct ergon_kernels_data *dst, const struct ergon_kernels_data *src,
			     unsigned repetition, struct ergon_err *err)
{
	for (size_t i = 0; i < src->n_cases; i++) {
		const struct kcase *c = &src->cases[i];
		for (size_t k = 0; k < c->n_impl; k++) {
			const struct kimpl *m = &c->impl[k];
			int rc = 0;
			if (m->failed || m->n == 0)
				rc = ergon_kernels_add_rep(dst, c->name, m->name, !m->failed, NAN,
							   repetition, err);
			for (size_t j = 0; rc == 0 && j < m->n; j++)
				rc = ergon_kernels_add_rep(dst, c->name, m->name, !m->failed,
							   m->v[j], repetition, err);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

static int name_ok(const char *s, const char *what, struct ergon_err *err)
{
	size_t l = strlen(s);
	if (l == 0)
		return ergon_err_set(err, ERGON_EPARSE, "%s is empty: name every case and impl",
				     what);
	if (l > ERGON_KERNELS_NAME_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s is %zu bytes long (at most %d)", what,
				     l, ERGON_KERNELS_NAME_MAX);
	/* Names go into JSON strings and CSV cells: UTF-8, no commas, no
	 * control characters. */
	for (size_t i = 0; i < l; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == ',' || s[i] == 0x7f)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s has a comma or control character at byte %zu",
					     what, i + 1);
	json_t *t = json_stringn(s, l);
	if (t == NULL)
		return ergon_err_set(err, ERGON_EPARSE, "%s is not valid UTF-8", what);
	json_decref(t);
	return 0;
}

static struct kcase *find_case(struct ergon_kernels_data *d, const char *name,
			       struct ergon_err *err)
{
	if (d->last < d->n_cases && strcmp(d->cases[d->last].name, name) == 0)
		return &d->cases[d->last];
	for (size_t i = 0; i < d->n_cases; i++)
		if (strcmp(d->cases[i].name, name) == 0) {
			d->last = i;
			return &d->cases[i];
		}
	if (d->n_cases >= ERGON_KERNELS_MAX_CASES) {
		ergon_err_set(err, ERGON_ETOOBIG, "more than %d cases", ERGON_KERNELS_MAX_CASES);
		return NULL;
	}
	if (d->n_cases == d->cap_cases) {
		size_t cap = d->cap_cases ? d->cap_cases * 2 : 16;
		struct kcase *c = realloc(d->cases, cap * sizeof *c);
		if (c == NULL) {
			ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
			return NULL;
		}
		d->cases = c;
		d->cap_cases = cap;
	}
	struct kcase *c = &d->cases[d->n_cases];
	memset(c, 0, sizeof *c);
	memcpy(c->name, name, strlen(name) + 1);
	d->last = d->n_cases++;
	return c;
}

int ergon_kernels_add(struct ergon_kernels_data *d, const char *case_name, const char *impl,
		      int correct, double count, struct ergon_err *err)
{
	return ergon_kernels_add_rep(d, case_name, impl, correct, count, 0, err);
}

int ergon_kernels_add_rep(struct ergon_kernels_data *d, const char *case_name, const char *impl,
			  int correct, double count, unsigned repetition, struct ergon_err *err)
{
	if (repetition > ERGON_KERNELS_MAX_REPEAT)
		return ergon_err_set(err, ERGON_ERANGE, "%s/%s: repetition %u: at most %d",
				     case_name, impl, repetition, ERGON_KERNELS_MAX_REPEAT);
	int rc = name_ok(case_name, "case", err);
	if (rc == 0)
		rc = name_ok(impl, "impl", err);
	if (rc != 0)
		return rc;
	if (!isnan(count) && !(isfinite(count) && count > 0))
		return ergon_err_set(err, ERGON_ERANGE,
				     "%s/%s: count %g is not > 0: a count that did not advance is "
				     "unsupported or broken, never a zero-cost iteration",
				     case_name, impl, count);
	struct kcase *c = find_case(d, case_name, err);
	if (c == NULL)
		return err ? err->code : ERGON_ENOMEM;
	struct kimpl *m = NULL;
	for (size_t k = 0; k < c->n_impl; k++)
		if (strcmp(c->impl[k].name, impl) == 0)
			m = &c->impl[k];
	if (m == NULL) {
		if (c->n_impl >= ERGON_KERNELS_MAX_IMPLS)
			return ergon_err_set(err, ERGON_ETOOBIG,
					     "case %s: more than %d implementations", case_name,
					     ERGON_KERNELS_MAX_IMPLS);
		m = &c->impl[c->n_impl++];
		memcpy(m->name, impl, strlen(impl) + 1);
	}
	m->checks++;
	if (!correct)
		m->failed = 1;
	if (isnan(count))
		return 0;
	if (d->n_samples >= ERGON_KERNELS_MAX_SAMPLES)
		return ergon_err_set(err, ERGON_ETOOBIG, "more than %d samples",
				     ERGON_KERNELS_MAX_SAMPLES);
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		double *v = realloc(m->v, cap * sizeof *v);
		if (v == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		m->v = v;
		unsigned *r = realloc(m->rep, cap * sizeof *r);
		if (r == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		m->rep = r;
		m->cap = cap;
	}
	m->rep[m->n] = repetition;
	m->v[m->n++] = count;
	d->n_samples++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A sorted copy of v[0..n) in *out (caller frees); what names the
 * statistic in the error for n == 0. */
static int sorted_copy(const double *v, size_t n, const char *what, double **out,
		       struct ergon_err *err)
{
	*out = NULL;
	if (n == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "kernels: %s of no samples", what);
	double *s = malloc(n * sizeof *s);
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	*out = s;
	return 0;
}

int ergon_kernels_stats(const double *v, size_t n, double *min, double *median, double *mean,
			struct ergon_err *err)
{
	double *s = NULL;
	int rc = sorted_copy(v, n, "statistics", &s, err);
	if (rc != 0)
		return rc;
	*min = s[0];
	*median = (n % 2) ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	/* Kahan summation: a million counts of ~1e6 keep their last digit. */
	double sum = 0.0, c = 0.0;
	for (size_t i = 0; i < n; i++) {
		double y = s[i] - c;
		double t = sum + y;
		c = (t - sum) - y;
		sum = t;
	}
	*mean = sum / (double)n;
	free(s);
	return 0;
}

int ergon_kernels_median_ci(const double *v, size_t n, double *lo, double *hi, double *coverage,
			    struct ergon_err *err)
{
	double *s = NULL;
	int rc = sorted_copy(v, n, "interval", &s, err);
	if (rc != 0)
		return rc;
	size_t k;
	ergon_median_ci_ranks(n, &k, coverage);
	*lo = s[k - 1];
	*hi = s[n - k];
	free(s);
	return 0;
}

int ergon_kernels_geomean(const double *r, size_t n, double *out, struct ergon_err *err)
{
	if (n == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "kernels: geometric mean of no ratios");
	double acc = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (!(isfinite(r[i]) && r[i] > 0))
			return ergon_err_set(err, ERGON_ERANGE,
					     "kernels: ratio %g is not a positive number", r[i]);
		acc += log(r[i]);
	}
	*out = exp(acc / (double)n);
	return 0;
}

static const char REGRESSION_RULE[] =
    "valid_for_regression: the output matched the reference, the case was timed with at "
    "least 6 samples (the least n whose median interval reaches 95 % coverage), the median "
    "is > 0 and the wider side of the median's interval is at most 5 % of the median; "
    "ergon compare calls a regression only where both sides are valid";

const char *ergon_kernels_regression_rule(void)
{
	return REGRESSION_RULE;
}

static void say(char *reason, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *reason, size_t cap, const char *fmt, ...)
{
	if (reason == NULL || cap == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, cap, fmt, ap);
	va_end(ap);
}

int ergon_kernels_regression_valid(int correct, int timed, size_t n, double median, double lo,
				   double hi, char *reason, size_t cap)
{
	if (!correct) {
		say(reason, cap, "not correct: the output differs from the reference");
		return 0;
	}
	if (!timed || n == 0) {
		say(reason, cap, "not timed: no timed samples");
		return 0;
	}
	if (n < ERGON_KERNELS_VALID_MIN_N) {
		say(reason, cap,
		    "n = %zu < %d: the median's interval does not reach 95 %% coverage", n,
		    ERGON_KERNELS_VALID_MIN_N);
		return 0;
	}
	if (!(isfinite(median) && median > 0)) {
		say(reason, cap, "median %g is not > 0: no relative interval", median);
		return 0;
	}
	if (!(isfinite(lo) && isfinite(hi) && lo <= median && hi >= median)) {
		say(reason, cap, "the median's interval is not stated");
		return 0;
	}
	double pct = 100.0 * fmax(median - lo, hi - median) / median;
	if (pct > ERGON_KERNELS_VALID_CI_PCT) {
		say(reason, cap,
		    "the median's interval is +/-%.3g %% of the median (wider side), more than "
		    "%.3g %%",
		    pct, ERGON_KERNELS_VALID_CI_PCT);
		return 0;
	}
	say(reason, cap, "valid: correct, n = %zu, the median's interval +/-%.3g %% of the median (<= %.3g %%)",
	    n, pct, ERGON_KERNELS_VALID_CI_PCT);
	return 1;
}

static const char GEOMEAN_NOTE[] =
    "geometric mean of the per-case speedups (each case weighs the same); not a model "
    "latency and not a speedup of any one model";

/* Tukey's outliers of the samples and whether the mean can be trusted
 * beside the median (docs/METHOD.md, "Kernels"). */
static int distribution_json(const struct kimpl *m, json_t *o, double md, double lo, double hi,
			     double cov, double me, struct ergon_err *err)
{
	double *s = NULL;
	int rc = sorted_copy(m->v, m->n, "outliers", &s, err);
	if (rc != 0)
		return rc;
	struct ergon_outliers t;
	ergon_outliers_tukey_sorted(s, m->n, &t);
	free(s);
	json_object_set_new(o, "outliers",
			    json_pack("{s:s, s:f, s:f, s:f, s:f, s:I, s:I}", "rule",
				      "Tukey's fences: below q1 - 1.5 IQR or above q3 + 1.5 IQR "
				      "(nearest-rank quartiles)",
				      "q1", t.q1, "q3", t.q3, "low_fence", t.lo_fence, "high_fence",
				      t.hi_fence, "low", (json_int_t)t.n_low, "high",
				      (json_int_t)t.n_high));
	if (me >= lo && me <= hi)
		json_object_set_new(o, "mean_vs_median",
				    json_sprintf("agree: the mean lies within the median's %.2f %% "
						 "interval",
						 100.0 * cov));
	else
		json_object_set_new(
		    o, "mean_vs_median",
		    json_sprintf("disagree: the mean %.6g lies %s the median's %.2f %% interval "
				 "[%.6g, %.6g]; %zu samples above Tukey's upper fence and %zu "
				 "below the lower one pull it: trust the median (%.6g)",
				 me, me > hi ? "above" : "below", 100.0 * cov, lo, hi, t.n_high,
				 t.n_low, md));
	return 0;
}

/* With repetitions (kernels run --repeat, a samples CSV's repetition
 * column): each repetition's median and the half-width (wider side) of
 * its interval, and the statistics of the medians over the repetitions. */
static int repeat_json(const struct kimpl *m, json_t *o, struct ergon_err *err)
{
	unsigned maxr = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->rep[i] > maxr)
			maxr = m->rep[i];
	if (maxr == 0)
		return 0;
	double *buf = malloc(m->n * sizeof *buf);
	double meds[ERGON_KERNELS_MAX_REPEAT];
	json_t *jm = json_array(), *ju = json_array(), *jc = json_array();
	size_t nm = 0;
	int rc = 0;
	if (buf == NULL || jm == NULL || ju == NULL || jc == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto out;
	}
	for (unsigned r = 1; r <= maxr; r++) {
		size_t k = 0;
		for (size_t i = 0; i < m->n; i++)
			if (m->rep[i] == r)
				buf[k++] = m->v[i];
		if (k == 0)
			continue;
		double mn, md, me, lo, hi, cov;
		if ((rc = ergon_kernels_stats(buf, k, &mn, &md, &me, err)) != 0 ||
		    (rc = ergon_kernels_median_ci(buf, k, &lo, &hi, &cov, err)) != 0)
			goto out;
		meds[nm++] = md;
		json_array_append_new(jm, json_real(md));
		json_array_append_new(ju, json_real(fmax(md - lo, hi - md)));
		json_array_append_new(jc, json_real(cov));
	}
	struct ergon_summary st;
	if ((rc = ergon_summary_of(meds, nm, &st, err)) != 0)
		goto out;
	json_t *rj = json_pack("{s:I, s:O, s:O, s:O, s:f}", "n", (json_int_t)nm, "medians", jm, "u",
			       ju, "coverage", jc, "mean", st.mean);
	if (nm >= 2) {
		json_object_set_new(rj, "sd", json_real(st.sd));
		json_object_set_new(rj, "ci_lo", json_real(st.ci_lo));
		json_object_set_new(rj, "ci_hi", json_real(st.ci_hi));
	}
	json_object_set_new(rj, "median", json_real(st.median));
	json_object_set_new(rj, "median_lo", json_real(st.median_lo));
	json_object_set_new(rj, "median_hi", json_real(st.median_hi));
	json_object_set_new(rj, "median_coverage", json_real(st.median_coverage));
	json_object_set_new(o, "repeat", rj);
out:
	json_decref(jm);
	json_decref(ju);
	json_decref(jc);
	free(buf);
	return rc;
}

/* One implementation's entry; *mean_out is NaN when it was not timed. */
static int impl_json(const struct kimpl *m, json_t *arr, double *mean_out, struct ergon_err *err)
{
	json_t *o = json_object();
	*mean_out = NAN;
	json_object_set_new(o, "impl", json_string(m->name));
	json_object_set_new(o, "correct", json_boolean(!m->failed));
	char reason[256];
	if (m->failed || m->n == 0) {
		json_object_set_new(o, "timed", json_false());
		json_object_set_new(o, "why",
				    json_string(m->failed
						    ? "output differs from the reference: not timed"
						    : "no timed samples"));
		ergon_kernels_regression_valid(!m->failed, 0, 0, NAN, NAN, NAN, reason,
					       sizeof reason);
		json_object_set_new(o, "valid_for_regression", json_false());
		json_object_set_new(o, "regression_reason", json_string(reason));
	} else {
		double mn, md, me;
		int rc = ergon_kernels_stats(m->v, m->n, &mn, &md, &me, err);
		if (rc != 0) {
			json_decref(o);
			return rc;
		}
		json_object_set_new(o, "timed", json_true());
		json_object_set_new(o, "n", json_integer((json_int_t)m->n));
		json_object_set_new(o, "min", json_real(mn));
		json_object_set_new(o, "median", json_real(md));
		json_object_set_new(o, "mean", json_real(me));
		double lo, hi, cov;
		rc = ergon_kernels_median_ci(m->v, m->n, &lo, &hi, &cov, err);
		if (rc != 0) {
			json_decref(o);
			return rc;
		}
		json_object_set_new(
		    o, "median_ci",
		    json_pack("{s:f, s:f, s:f}", "lo", lo, "hi", hi, "coverage", cov));
		int valid = ergon_kernels_regression_valid(1, 1, m->n, md, lo, hi, reason,
							   sizeof reason);
		json_object_set_new(o, "valid_for_regression", json_boolean(valid));
		json_object_set_new(o, "regression_reason", json_string(reason));
		rc = distribution_json(m, o, md, lo, hi, cov, me, err);
		if (rc == 0)
			rc = repeat_json(m, o, err);
		if (rc != 0) {
			json_decref(o);
			return rc;
		}
		*mean_out = me;
	}
	json_array_append_new(arr, o);
	return 0;
}

int ergon_kernels_summarize(const struct ergon_kernels_data *d, const char *baseline,
			    const char *unit, json_t **section, struct ergon_err *err)
{
	int rc = 0;
	json_t *sec = NULL;
	double *ratios = NULL;
	*section = NULL;
	if (baseline == NULL)
		baseline = "ref";
	if (d->n_cases == 0)
		return ergon_err_set(err, ERGON_EPARSE, "kernels: no case at all (no sample rows)");
	int have_base = 0;
	for (size_t i = 0; i < d->n_cases && !have_base; i++)
		for (size_t k = 0; k < d->cases[i].n_impl; k++)
			if (strcmp(d->cases[i].impl[k].name, baseline) == 0)
				have_base = 1;
	if (!have_base)
		return ergon_err_set(err, ERGON_EPARSE,
				     "kernels: the baseline implementation '%s' is in no case; "
				     "name the baseline with --baseline IMPL",
				     baseline);
	/* Candidate names in order of first appearance, for the geometric means. */
	char names[ERGON_KERNELS_MAX_IMPLS * 4][ERGON_KERNELS_NAME_MAX + 1];
	size_t n_names = 0;
	ratios = malloc(d->n_cases * ERGON_KERNELS_MAX_IMPLS * sizeof *ratios);
	sec = json_object();
	json_t *cases = json_array(), *fails = json_array();
	if (ratios == NULL || sec == NULL || cases == NULL || fails == NULL) {
		json_decref(cases);
		json_decref(fails);
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto cleanup;
	}
	json_object_set_new(sec, "baseline", json_string(baseline));
	json_object_set_new(sec, "unit", json_string(unit ? unit : "counts"));
	json_object_set_new(sec, "speedup_definition",
			    json_string("baseline mean / candidate mean; > 1 means the "
					"candidate is faster"));
	json_object_set_new(sec, "regression_rule", json_string(REGRESSION_RULE));
	json_object_set_new(sec, "cases", cases);
	json_object_set_new(sec, "failures", fails);
	for (size_t i = 0; i < d->n_cases; i++) {
		const struct kcase *c = &d->cases[i];
		json_t *co = json_object(), *im = json_array(), *sp = json_array();
		json_object_set_new(co, "case", json_string(c->name));
		json_object_set_new(co, "impls", im);
		json_object_set_new(co, "speedups", sp);
		json_array_append_new(cases, co);
		double means[ERGON_KERNELS_MAX_IMPLS];
		double base_mean = NAN;
		for (size_t k = 0; k < c->n_impl; k++) {
			rc = impl_json(&c->impl[k], im, &means[k], err);
			if (rc != 0)
				goto cleanup;
			if (c->impl[k].failed) {
				json_t *f = json_object();
				json_object_set_new(f, "case", json_string(c->name));
				json_object_set_new(f, "impl", json_string(c->impl[k].name));
				json_array_append_new(fails, f);
			}
			if (strcmp(c->impl[k].name, baseline) == 0)
				base_mean = means[k];
		}
		for (size_t k = 0; k < c->n_impl; k++) {
			if (strcmp(c->impl[k].name, baseline) == 0 || isnan(means[k]) ||
			    isnan(base_mean))
				continue;
			double r = base_mean / means[k];
			json_t *s = json_object();
			json_object_set_new(s, "impl", json_string(c->impl[k].name));
			json_object_set_new(s, "baseline_mean", json_real(base_mean));
			json_object_set_new(s, "candidate_mean", json_real(means[k]));
			json_object_set_new(s, "speedup", json_real(r));
			json_array_append_new(sp, s);
			size_t j = 0;
			while (j < n_names && strcmp(names[j], c->impl[k].name) != 0)
				j++;
			if (j == n_names && n_names < sizeof names / sizeof names[0])
				memcpy(names[n_names++], c->impl[k].name,
				       strlen(c->impl[k].name) + 1);
		}
	}
	json_t *gm = json_array();
	json_object_set_new(sec, "geomean", gm);
	for (size_t j = 0; j < n_names; j++) {
		size_t n = 0;
		for (size_t i = 0; i < json_array_size(cases); i++) {
			json_t *sp = json_object_get(json_array_get(cases, i), "speedups");
			for (size_t k = 0; k < json_array_size(sp); k++) {
				json_t *s = json_array_get(sp, k);
				if (strcmp(json_string_value(json_object_get(s, "impl")),
					   names[j]) == 0)
					ratios[n++] =
					    json_real_value(json_object_get(s, "speedup"));
			}
		}
		double g;
		rc = ergon_kernels_geomean(ratios, n, &g, err);
		if (rc != 0)
			goto cleanup;
		json_t *o = json_object();
		json_object_set_new(o, "impl", json_string(names[j]));
		json_object_set_new(o, "cases", json_integer((json_int_t)n));
		json_object_set_new(o, "speedup", json_real(g));
		json_object_set_new(o, "note", json_string(GEOMEAN_NOTE));
		json_array_append_new(gm, o);
	}
	*section = sec;
	sec = NULL;
cleanup:
	json_decref(sec);
	free(ratios);
	return rc;
}

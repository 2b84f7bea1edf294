/* The verdict of each kind of artifact (ergon/verdict.h): the one place
 * that decides valid / degraded / invalid, from typed fields. */
#include "ergon/verdict.h"

#include "ergon/gated.h"
#include "ergon/issues.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set(struct ergon_verdict *v, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set(struct ergon_verdict *v, int kind, const char *fmt, ...)
{
	v->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof v->why, fmt, ap);
	va_end(ap);
}

static void valid(struct ergon_verdict *v)
{
	v->kind = ERGON_VERDICT_VALID;
	v->why[0] = '\0';
}

/* The codes of list's issues of severity sev ("error", "warning"), comma
 * separated, into out (truncated, never overflowing). */
static void codes(const json_t *list, const char *sev, char *out, size_t cap)
{
	size_t len = 0, i;
	const json_t *x;
	out[0] = '\0';
	json_array_foreach(list, i, x)
	{
		const char *s = json_string_value(json_object_get(x, "severity"));
		const char *c = json_string_value(json_object_get(x, "code"));
		if (s == NULL || c == NULL || strcmp(s, sev) != 0)
			continue;
		int n = snprintf(out + len, cap - len, "%s%s", len ? ", " : "", c);
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
	}
}

/* Invalid when any of the issue lists holds an error; 1 if so. */
static int failed(struct ergon_verdict *v, const json_t *a, const json_t *b)
{
	char list[ERGON_VERDICT_WHY_MAX - 16];
	if (json_is_array(a) && ergon_issues_integrity(a) == ERGON_INTEGRITY_INVALID) {
		codes(a, "error", list, sizeof list);
		set(v, ERGON_VERDICT_INVALID, "failed: %s", list);
		return 1;
	}
	if (json_is_array(b) && ergon_issues_integrity(b) == ERGON_INTEGRITY_INVALID) {
		codes(b, "error", list, sizeof list);
		set(v, ERGON_VERDICT_INVALID, "failed: %s", list);
		return 1;
	}
	return 0;
}

/* The reasons array of a power section into out, each reason followed by
 * the codes of the section's issues that decided it ("gate_duration_mismatch:
 * power.gate_duration_mismatch; no_clean_inference_count"), so the line
 * names what docs/ISSUES.md explains. */
static void reasons(const json_t *power, char *out, size_t cap)
{
	size_t len = 0, i;
	const json_t *x, *issues = json_object_get(power, "issues");
	out[0] = '\0';
	json_array_foreach(json_object_get(power, "per_inference_omitted_reasons"), i, x)
	{
		const char *r = json_string_value(x);
		if (r == NULL)
			continue;
		int n = snprintf(out + len, cap - len, "%s%s", len ? "; " : "", r);
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
		const char *const *c = ergon_power_reason_issues(r);
		int first = 1;
		for (size_t j = 0; c != NULL && c[j] != NULL; j++) {
			if (!ergon_issue_has(issues, c[j]))
				continue;
			n = snprintf(out + len, cap - len, "%s%s", first ? ": " : ", ", c[j]);
			if (n < 0 || (size_t)n >= cap - len)
				return;
			len += (size_t)n;
			first = 0;
		}
	}
}

/* Degraded when the power section withheld what was asked of it; 1 if so. */
static int power_withheld(struct ergon_verdict *v, const json_t *power, int expect_per_inference)
{
	char why[ERGON_VERDICT_WHY_MAX - 96];
	reasons(power, why, sizeof why);
	const char *gf = json_string_value(json_object_get(power, "gate_failure"));
	if (gf != NULL) {
		set(v, ERGON_VERDICT_DEGRADED,
		    "no qualifying gate window (gate_failure %s): gated and per-inference figures "
		    "withheld, whole-capture figures kept",
		    gf);
		return 1;
	}
	if (expect_per_inference &&
	    !json_is_false(json_object_get(power, "per_inference_metrics_omitted"))) {
		set(v, ERGON_VERDICT_DEGRADED, "per-inference figures withheld (%s)",
		    why[0] ? why : "no reason stated");
		return 1;
	}
	return 0;
}

/* --trim-s asked for the trimmed duty-cycle figures (plan.trim_s): when
 * their block (figures.duty_cycle, or figures.repeat.duty_cycle for a
 * repeated run) is withheld, the run is degraded like any withheld figure. */
static void trim_withheld(const json_t *report, const json_t *dc, struct ergon_verdict *v)
{
	if (v->kind != ERGON_VERDICT_VALID ||
	    !json_is_number(json_object_get(json_object_get(report, "plan"), "trim_s")))
		return;
	const char *w = json_string_value(json_object_get(dc, "withheld"));
	if (w != NULL)
		set(v, ERGON_VERDICT_DEGRADED, "trimmed duty-cycle figures (--trim-s) withheld: %s",
		    w);
}

void ergon_verdict_run(const json_t *report, struct ergon_verdict *v)
{
	valid(v);
	const json_t *issues = json_object_get(report, "issues");
	if (failed(v, issues, NULL)) {
		/* A run that stopped early says how, in its own words. */
		const char *st = json_string_value(json_object_get(report, "status"));
		const char *why = json_string_value(json_object_get(report, "stop_reason"));
		size_t len = strlen(v->why);
		if (st && strcmp(st, "complete") != 0 && len < sizeof v->why)
			snprintf(v->why + len, sizeof v->why - len, " (status %s%s%s)", st,
				 why ? ": " : "", why ? why : "");
		return;
	}
	const json_t *fig = json_object_get(report, "figures");
	const char *withheld = json_string_value(json_object_get(fig, "withheld"));
	if (withheld != NULL) {
		set(v, ERGON_VERDICT_DEGRADED, "figures withheld: %s", withheld);
		return;
	}
	/* A repeated run: the energy per operation of every repetition. */
	const json_t *reps = json_object_get(fig, "repetitions");
	if (json_is_array(reps)) {
		const json_t *e = json_object_get(json_object_get(fig, "repeat"), "figures");
		const json_t *eop =
		    json_object_get(json_object_get(e, "energy_per_op"), "above_idle_j");
		json_int_t n = json_integer_value(json_object_get(eop, "n"));
		if ((size_t)n != json_array_size(reps))
			set(v, ERGON_VERDICT_DEGRADED,
			    "energy per operation in %lld of %zu repetitions (see each "
			    "repetition's issues)",
			    (long long)n, json_array_size(reps));
		trim_withheld(report, json_object_get(json_object_get(fig, "repeat"), "duty_cycle"),
			      v);
		return;
	}
	if (!json_is_object(json_object_get(fig, "energy_per_op"))) {
		/* The issue that says why, when it is the one that withholds. */
		if (ergon_issue_has(issues, "run.no_total_rail")) {
			set(v, ERGON_VERDICT_DEGRADED,
			    "headline figures withheld (run.no_total_rail: no selected rail is "
			    "the module's total input; each rail's figures stand alone)");
			return;
		}
		char list[ERGON_VERDICT_WHY_MAX - 64];
		codes(issues, "warning", list, sizeof list);
		set(v, ERGON_VERDICT_DEGRADED, "no energy per operation (%s)",
		    list[0] ? list : "no issue says why");
	}
	trim_withheld(report, json_object_get(fig, "duty_cycle"), v);
}

void ergon_verdict_profile(const json_t *summary, struct ergon_verdict *v)
{
	valid(v);
	if (json_is_true(json_object_get(summary, "interrupted"))) {
		set(v, ERGON_VERDICT_INVALID,
		    "interrupted: what was captured is kept and marked (profile.interrupted)");
		return;
	}
	const char *k;
	const json_t *st;
	json_object_foreach((json_t *)json_object_get(summary, "stages"), k, st)
	{
		const char *s = json_string_value(json_object_get(st, "status"));
		if (s != NULL && (strcmp(s, "ok") == 0 || strcmp(s, "disabled") == 0))
			continue;
		const char *e = json_string_value(json_object_get(st, "error"));
		set(v, ERGON_VERDICT_INVALID, "stage %s %s%s%s", k, s ? s : "without a status",
		    e ? ": " : "", e ? e : "");
		return;
	}
	const json_t *power = json_object_get(summary, "power");
	if (failed(v, json_object_get(summary, "issues"), json_object_get(power, "issues")))
		return;
	const char *ps = json_string_value(json_object_get(
	    json_object_get(json_object_get(summary, "stages"), "power"), "status"));
	if (ps != NULL && strcmp(ps, "ok") == 0) {
		if (!json_is_object(power)) {
			set(v, ERGON_VERDICT_INVALID,
			    "the power stage ran but left no power section");
			return;
		}
		if (power_withheld(v, power, 1))
			return;
	}
	if (!json_is_true(json_object_get(summary, "valid")))
		set(v, ERGON_VERDICT_INVALID, "the summary says valid: false");
}

void ergon_verdict_analysis(const json_t *summary, int expect_per_inference,
			    struct ergon_verdict *v)
{
	valid(v);
	const json_t *power = json_object_get(summary, "power");
	if (!json_is_object(power)) {
		set(v, ERGON_VERDICT_INVALID, "no power section");
		return;
	}
	if (failed(v, json_object_get(summary, "issues"), json_object_get(power, "issues")))
		return;
	power_withheld(v, power, expect_per_inference);
}

void ergon_verdict_hpx(const json_t *summary, struct ergon_verdict *v)
{
	valid(v);
	const json_t *profile = json_object_get(summary, "profile");
	if (failed(v, json_object_get(summary, "issues"), json_object_get(profile, "issues")))
		return;
	if (!json_is_object(profile)) {
		set(v, ERGON_VERDICT_INVALID, "no profile section");
		return;
	}
	if (!json_is_true(json_object_get(profile, "complete")))
		set(v, ERGON_VERDICT_DEGRADED,
		    "the stream ended before HPX_END (pmu.incomplete): the open iteration and "
		    "whatever followed are not in the figures");
}

void ergon_verdict_record(const struct ergon_record_result *res, struct ergon_verdict *v)
{
	valid(v);
	if (!res->complete) {
		set(v, ERGON_VERDICT_INVALID, "the recording is incomplete (%s)",
		    res->stop_reason[0] ? res->stop_reason : "cut short");
		return;
	}
	if (res->dropped > 0 || res->out_of_order > 0)
		set(v, ERGON_VERDICT_DEGRADED,
		    "%llu sample(s) lost (NaN in the file, never interpolated) and %llu refused "
		    "(time went backwards)",
		    (unsigned long long)res->dropped, (unsigned long long)res->out_of_order);
}

/* Uncertainty budgets: terms in, combined and expanded uncertainty out
 * (ergon/budget.h, docs/UNCERTAINTY.md). */
#include "ergon/budget.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ergon_budget_init(struct ergon_budget *b, double value, const char *unit)
{
	memset(b, 0, sizeof(*b));
	b->value = value;
	snprintf(b->unit, sizeof(b->unit), "%s", unit ? unit : "");
	b->k = ERGON_BUDGET_K;
	b->u_c = 0.0;
	b->U = NAN;
	b->U_known = 0.0;
	b->dominant = -1;
}

static struct ergon_budget_term *slot(struct ergon_budget *b, const char *name)
{
	if (b->n >= ERGON_BUDGET_MAX_TERMS) {
		b->overflow = 1;
		return NULL;
	}
	struct ergon_budget_term *t = &b->term[b->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "?");
	return t;
}

static double divisor_of(int dist)
{
	return dist == ERGON_DIST_RECT ? sqrt(3.0) : 1.0;
}

static void vadd(struct ergon_budget *b, const char *name, double limit, double divisor, int dist,
		 int group, const char *fmt, va_list ap)
{
	struct ergon_budget_term *t = slot(b, name);
	if (t == NULL)
		return;
	t->dist = dist;
	t->group = group;
	t->divisor = divisor;
	if (fmt)
		vsnprintf(t->source, sizeof(t->source), fmt, ap);
	if (isfinite(limit) && isfinite(divisor) && divisor > 0) {
		t->known = 1;
		t->limit = fabs(limit);
		t->u = t->limit / divisor;
	} else {
		t->known = 0;
		t->limit = NAN;
		t->u = NAN;
	}
}

void ergon_budget_add(struct ergon_budget *b, const char *name, double limit, int dist, int group,
		      const char *source_fmt, ...)
{
	va_list ap;
	va_start(ap, source_fmt);
	vadd(b, name, limit, divisor_of(dist), dist, group, source_fmt, ap);
	va_end(ap);
}

void ergon_budget_add_u(struct ergon_budget *b, const char *name, double limit, double divisor,
			int dist, int group, const char *source_fmt, ...)
{
	va_list ap;
	va_start(ap, source_fmt);
	vadd(b, name, limit, divisor, dist, group, source_fmt, ap);
	va_end(ap);
}

void ergon_budget_add_unknown(struct ergon_budget *b, const char *name, const char *why_fmt, ...)
{
	va_list ap;
	va_start(ap, why_fmt);
	vadd(b, name, NAN, NAN, ERGON_DIST_RECT, 0, why_fmt, ap);
	va_end(ap);
}

void ergon_budget_close(struct ergon_budget *b)
{
	/* Groups: each distinct group number sums its members' u linearly
	 * (fully correlated, r = 1); independent terms stand alone. */
	double sumsq = 0.0;
	int done[ERGON_BUDGET_MAX_TERMS] = {0};
	int complete = !b->overflow;
	int dominant = -1, first_unknown = -1;
	for (size_t i = 0; i < b->n; i++) {
		const struct ergon_budget_term *t = &b->term[i];
		if (!t->known) {
			complete = 0;
			if (first_unknown < 0)
				first_unknown = (int)i;
			continue;
		}
		if (dominant < 0 || t->u > b->term[dominant].u)
			dominant = (int)i;
		if (done[i])
			continue;
		double s = t->u;
		if (t->group > 0)
			for (size_t j = i + 1; j < b->n; j++)
				if (b->term[j].known && b->term[j].group == t->group) {
					s += b->term[j].u;
					done[j] = 1;
				}
		sumsq += s * s;
	}
	b->k = ERGON_BUDGET_K;
	b->u_c = sqrt(sumsq);
	b->U_known = b->k * b->u_c;
	b->complete = complete;
	b->U = complete ? b->U_known : NAN;
	b->dominant = complete ? dominant : (first_unknown >= 0 ? first_unknown : dominant);
}

void ergon_budget_scale(struct ergon_budget *b, double factor, const char *unit)
{
	double f = fabs(factor);
	b->value *= factor;
	if (unit)
		snprintf(b->unit, sizeof(b->unit), "%s", unit);
	for (size_t i = 0; i < b->n; i++) {
		struct ergon_budget_term *t = &b->term[i];
		if (!t->known)
			continue;
		t->limit *= f;
		t->u = t->limit / t->divisor;
	}
	ergon_budget_close(b);
}

double ergon_budget_rel_pct(const struct ergon_budget *b)
{
	if (!b->complete || !isfinite(b->value) || b->value == 0.0 || !isfinite(b->U))
		return NAN;
	return fabs(b->U / b->value) * 100.0;
}

int ergon_budget_gate(const struct ergon_budget *b, double max_pct)
{
	if (!(max_pct > 0))
		return 0;
	if (!b->complete)
		return 2;
	double rel = ergon_budget_rel_pct(b);
	if (!isfinite(rel))
		return 3;
	return rel > max_pct ? 1 : 0;
}

const char *ergon_budget_dist_name(int dist)
{
	switch (dist) {
	case ERGON_DIST_RECT:
		return "rectangular";
	case ERGON_DIST_STAT:
		return "statistical";
	case ERGON_DIST_NORMAL:
		return "normal";
	default:
		return "unknown";
	}
}

int ergon_budget_dist_parse(const char *name)
{
	if (name == NULL)
		return 0;
	if (strcmp(name, "rectangular") == 0)
		return ERGON_DIST_RECT;
	if (strcmp(name, "statistical") == 0)
		return ERGON_DIST_STAT;
	if (strcmp(name, "normal") == 0)
		return ERGON_DIST_NORMAL;
	return 0;
}

/* kernels.csv and the terminal table of a "kernels" section. */
#include "ergon/dynbuf.h"
#include "ergon/kernels_run.h"

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

int ergon_kernels_table_render(const json_t *section, char **out, struct ergon_err *err)
{
	struct ergon_dynbuf b;
	size_t len;
	ergon_dynbuf_init(&b, RENDER_MAX);
	const char *unit = json_string_value(json_object_get(section, "unit"));
	const char *base = json_string_value(json_object_get(section, "baseline"));
	ergon_dynbuf_addf(&b, "%-34s %-6s %-7s %8s %14s %14s %14s %14s %9s\n", "case", "impl",
			  "correct", "n", "min", "median", "mean", "baseline mean", "speedup");
	const json_t *cases = json_object_get(section, "cases");
	for (size_t i = 0; i < json_array_size(cases); i++) {
		const json_t *c = json_array_get(cases, i);
		const char *cn = json_string_value(json_object_get(c, "case"));
		const json_t *im = json_object_get(c, "impls");
		for (size_t k = 0; k < json_array_size(im); k++) {
			const json_t *m = json_array_get(im, k);
			const char *in = json_string_value(json_object_get(m, "impl"));
			int correct = json_is_true(json_object_get(m, "correct"));
			ergon_dynbuf_addf(&b, "%-34s %-6s %-7s ", cn, in,
					  correct ? "pass" : "FAIL");
			if (!json_is_true(json_object_get(m, "timed"))) {
				ergon_dynbuf_addf(&b, "%8s  (%s)\n", "-",
						  json_string_value(json_object_get(m, "why")));
				continue;
			}
			ergon_dynbuf_addf(&b, "%8lld %14.1f %14.1f %14.1f",
					  (long long)json_integer_value(json_object_get(m, "n")),
					  num(m, "min"), num(m, "median"), num(m, "mean"));
			const json_t *s = speedup_of(c, in);
			if (s != NULL)
				ergon_dynbuf_addf(&b, " %14.1f %8.3fx\n", num(s, "baseline_mean"),
						  num(s, "speedup"));
			else
				ergon_dynbuf_adds(&b, "\n");
		}
	}
	ergon_dynbuf_addf(&b, "\ncounts in %s; speedup = %s mean / candidate mean (> 1: faster)\n",
			  unit ? unit : "counts", base ? base : "baseline");
	const json_t *gm = json_object_get(section, "geomean");
	for (size_t j = 0; j < json_array_size(gm); j++) {
		const json_t *g = json_array_get(gm, j);
		ergon_dynbuf_addf(&b, "geometric mean of %s speedups over %lld cases: %.3fx (%s)\n",
				  json_string_value(json_object_get(g, "impl")),
				  (long long)json_integer_value(json_object_get(g, "cases")),
				  num(g, "speedup"), json_string_value(json_object_get(g, "note")));
	}
	const json_t *f = json_object_get(section, "failures");
	if (json_array_size(f) > 0)
		ergon_dynbuf_addf(&b,
				  "%zu implementation(s) failed correctness and were not timed\n",
				  json_array_size(f));
	const char *ov = json_string_value(json_object_get(section, "overhead_note"));
	if (ov != NULL)
		ergon_dynbuf_addf(&b, "timing-read overhead: %s\n", ov);
	/* Where outliers pull the mean away from the median, and the
	 * repetitions' medians (kernels run --repeat). */
	for (size_t i = 0; i < json_array_size(cases); i++) {
		const json_t *c = json_array_get(cases, i);
		const json_t *im = json_object_get(c, "impls");
		for (size_t k = 0; k < json_array_size(im); k++) {
			const json_t *m = json_array_get(im, k);
			const char *mvm = json_string_value(json_object_get(m, "mean_vs_median"));
			const char *cn = json_string_value(json_object_get(c, "case"));
			const char *in = json_string_value(json_object_get(m, "impl"));
			if (mvm && strncmp(mvm, "disagree", 8) == 0)
				ergon_dynbuf_addf(
				    &b,
				    "%s [%s]: the mean %.1f lies outside the median's interval "
				    "[%.1f, %.1f]; %lld slow and %lld fast outliers (Tukey's "
				    "fences): trust the median (%.1f)\n",
				    cn, in, num(m, "mean"),
				    num(json_object_get(m, "median_ci"), "lo"),
				    num(json_object_get(m, "median_ci"), "hi"),
				    (long long)json_integer_value(
					json_object_get(json_object_get(m, "outliers"), "high")),
				    (long long)json_integer_value(
					json_object_get(json_object_get(m, "outliers"), "low")),
				    num(m, "median"));
			const json_t *r = json_object_get(m, "repeat");
			if (json_is_object(r) && json_is_number(json_object_get(r, "sd")))
				ergon_dynbuf_addf(
				    &b,
				    "%s [%s]: median over %lld repetitions %.1f ± %.1f "
				    "(95 %% interval of their mean %.1f, sd %.1f)\n",
				    cn, in, (long long)json_integer_value(json_object_get(r, "n")),
				    num(r, "mean"), (num(r, "ci_hi") - num(r, "ci_lo")) / 2,
				    num(r, "mean"), num(r, "sd"));
		}
	}
	return finish(&b, out, &len, err);
}

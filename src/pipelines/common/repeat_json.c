/* Repeat statistics of one figure at the artifact edge (common.h;
 * docs/METHOD.md, "Repeats"): the shape of figures.repeat (ergon run) and
 * repeat.figures (ergon profile), which ergon compare reads. */
#include "ergon/stats.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdlib.h>

json_t *ergon_repeat_figure_json(const char *name, const char *unit, const double *v_in,
				 const double *u_in, size_t n, struct ergon_err *err)
{
	json_t *vals = json_array(), *us = json_array();
	double *v = malloc((n ? n : 1) * sizeof *v);
	double usum = 0;
	size_t m = 0, nu = 0;
	int all_u = 1;
	if (v == NULL || vals == NULL || us == NULL) {
		free(v);
		json_decref(vals);
		json_decref(us);
		ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		double x = v_in[i];
		double u = u_in ? u_in[i] : NAN;
		json_array_append_new(vals, ergon_jnum(x));
		json_array_append_new(us, ergon_jnum(u));
		if (!isfinite(x))
			continue;
		v[m++] = x;
		if (isfinite(u)) {
			usum += u;
			nu++;
		} else {
			all_u = 0;
		}
	}
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:I}", "name", name, "unit", unit, "values",
			      vals, "u", us, "n", (json_int_t)m);
	if (m == 0) {
		free(v);
		return o;
	}
	struct ergon_summary st;
	int rc = ergon_summary_of(v, m, &st, err);
	free(v);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	double ui = all_u && nu == m ? usum / (double)nu : NAN;
	json_t *add = json_pack(
	    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "mean",
	    ergon_jnum(st.mean), "sd", ergon_jnum(st.sd), "sem", ergon_jnum(st.sem), "df",
	    ergon_jnum(st.df), "t", ergon_jnum(st.t), "ci_lo", ergon_jnum(st.ci_lo), "ci_hi",
	    ergon_jnum(st.ci_hi), "median", ergon_jnum(st.median), "median_lo",
	    ergon_jnum(st.median_lo), "median_hi", ergon_jnum(st.median_hi), "median_coverage",
	    ergon_jnum(st.median_coverage), "u_instrument", ergon_jnum(ui), "spread_to_instrument",
	    ergon_jnum(isfinite(ui) && ui > 0 ? st.sd / ui : NAN), "min", ergon_jnum(st.min));
	json_object_set_new(add, "max", ergon_jnum(st.max));
	json_object_update(o, add);
	json_decref(add);
	return o;
}

/* ergon report: the section of an `ergon run` report (power over time with
 * its phases, per-window throughput and temperature, latency histogram and
 * CDF, the figure tables). */
#include "pipelines/common/common.h"
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIST_BINS 50

/* An array at path as doubles (NULL, 0 when absent). Caller frees. */
static double *arr(const json_t *a, const char *path, size_t *n)
{
	double *v = NULL;
	*n = 0;
	if (!json_is_array(ergon_jpath(a, path)) || ergon_jarray(a, path, &v, n, NULL) != 0)
		return NULL;
	return v;
}

/* Rail r's (or the single rail's) sample times and powers. Caller frees. */
static void rail_series(const json_t *a, size_t nr, size_t r, double **t, size_t *n, double **p,
			size_t *m)
{
	char path[128];
	snprintf(path, sizeof path, nr ? "series.rails[%zu].samples.t_s" : "series.samples.t_s", r);
	*t = arr(a, path, n);
	snprintf(path, sizeof path,
		 nr ? "series.rails[%zu].samples.power_w" : "series.samples.power_w", r);
	*p = arr(a, path, m);
}

/* The end of the report's time axis, shared by the power and throughput
 * plots (one origin, one range: the start of the idle baseline to the last
 * sample, the load's end or the last window's end, whichever is last). */
static double time_axis_end(const json_t *a)
{
	double end = hd_num(a, "series.phases.load.t_end_s");
	size_t nr = json_array_size(ergon_jpath(a, "series.rails"));
	for (size_t r = 0; r < (nr ? nr : 1); r++) {
		size_t n = 0, m = 0;
		double *t, *p, lo, hi;
		rail_series(a, nr, r, &t, &n, &p, &m);
		hp_range(t, n, &lo, &hi);
		if (isfinite(hi) && !(end >= hi))
			end = hi;
		free(t);
		free(p);
	}
	const json_t *w = ergon_jpath(a, "figures.throughput.windows");
	const json_t *last = json_array_get(w, json_array_size(w) ? json_array_size(w) - 1 : 0);
	double load0 = hd_num(a, "series.phases.load.t_start_s");
	double we = (isfinite(load0) ? load0 : 0) +
		    json_number_value(json_object_get(last, "t_start_s")) +
		    json_number_value(json_object_get(last, "duration_s"));
	if (last && isfinite(we) && !(end >= we))
		end = we;
	return end;
}

static void power_plot(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *a = d->a;
	char id[64], path[128], label[160], cap[600];
	size_t nr = json_array_size(ergon_jpath(a, "series.rails"));
	size_t nseries = nr ? nr : 1;
	double t_end = hd_num(a, "series.phases.load.t_end_s");
	double lo = NAN, hi = NAN, tmax = NAN;
	/* Ranges first: over every rail. */
	for (size_t r = 0; r < nseries; r++) {
		size_t n = 0, m = 0;
		double *t, *p;
		rail_series(a, nr, r, &t, &n, &p, &m);
		double l, h, tl, th;
		hp_range(p, m, &l, &h);
		hp_range(t, n, &tl, &th);
		if (!isnan(l) && (isnan(lo) || l < lo))
			lo = l;
		if (!isnan(h) && (isnan(hi) || h > hi))
			hi = h;
		if (!isnan(th) && (isnan(tmax) || th > tmax))
			tmax = th;
		free(t);
		free(p);
	}
	if (isnan(tmax)) {
		ergon_dynbuf_adds(b, "<p class=\"caption\">No power samples embedded.</p>\n");
		return;
	}
	tmax = time_axis_end(a);
	struct hp_plot pl;
	hd_id(id, sizeof id, d, "power");
	hp_begin(&pl, id, 0, tmax, fmin(lo, 0), hi);
	hp_span(&pl, hd_num(a, "series.phases.idle.t_start_s"),
		hd_num(a, "series.phases.idle.t_end_s"), "idle", "idle baseline");
	double load0 = hd_num(a, "series.phases.load.t_start_s");
	hp_span(&pl, load0, t_end, "load", "load");
	size_t ne = 0;
	double *edges = arr(a, "series.window_edges_s", &ne);
	for (size_t i = 0; i < ne; i++)
		hp_vline(&pl, edges[i], "win", NULL);
	free(edges);
	double onset = hd_num(a, "figures.throughput.onset_t_s");
	if (isfinite(onset) && isfinite(load0)) {
		snprintf(label, sizeof label, "throttle onset (window %.0f)",
			 hd_num(a, "figures.throughput.onset_window"));
		hp_vline(&pl, load0 + onset, "onset", label);
	}
	int decimated = 0;
	for (size_t r = 0; r < nseries; r++) {
		size_t n = 0, m = 0;
		double *t, *p;
		rail_series(a, nr, r, &t, &n, &p, &m);
		struct hp_decim dm;
		if (hp_decim_init(&dm, 0, tmax, HP_BUCKETS) == 0) {
			for (size_t i = 0; i < n && i < m; i++)
				hp_decim_add(&dm, t[i], p[i]);
			char cls[8];
			snprintf(cls, sizeof cls, "s%zu", r % 6);
			snprintf(path, sizeof path, "series.rails[%zu].name", r);
			const char *name = nr ? json_string_value(ergon_jpath(a, path)) : NULL;
			snprintf(label, sizeof label, "%s", name ? name : "power");
			if (hp_decimated(&pl, &dm, cls, label) == 2)
				decimated = 1;
			hp_decim_free(&dm);
		}
		free(t);
		free(p);
	}
	double k = hd_num(a, "series.exact.decimation_factor");
	snprintf(cap, sizeof cap,
		 "Embedded power samples over time; the idle baseline and the load phase are "
		 "shaded, window edges are grey lines%s%s.",
		 isfinite(onset) ? ", the throttle onset is the red line" : "",
		 decimated ? "; drawn as the min/max envelope and mean of 1200 time buckets" : "");
	if (isfinite(k)) {
		size_t len = strlen(cap);
		snprintf(cap + len, sizeof cap - len,
			 " The report itself keeps every %.0fth of %.0f samples (decimated above "
			 "--max-embedded-samples); its energies come from series.exact.",
			 k, hd_num(a, "series.exact.samples_total"));
	}
	hp_end(&pl, b, "Power over time", "time since the idle baseline started (s)", "power (W)",
	       cap);
}

static void throughput_plot(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *a = d->a;
	const json_t *w = ergon_jpath(a, "figures.throughput.windows");
	size_t n = json_array_size(w);
	if (n == 0)
		return;
	double *x = calloc(n, sizeof(double)), *wd = calloc(n, sizeof(double));
	double *y = calloc(n, sizeof(double)), *tc = calloc(n, sizeof(double));
	double *mid = calloc(n, sizeof(double));
	size_t nt = 0, ns = 0;
	double *temp = arr(a, "series.samples.temp_c", &nt);
	double *ts = arr(a, "series.samples.t_s", &ns);
	double load0 = hd_num(a, "series.phases.load.t_start_s");
	if (!isfinite(load0))
		load0 = 0;
	int have_temp = 0;
	for (size_t i = 0; x && wd && y && tc && mid && i < n; i++) {
		const json_t *wi = json_array_get(w, i);
		/* One time origin per report: the power plot's (the start of
		 * the idle baseline); windows are timed from the load's start. */
		x[i] = load0 + json_number_value(json_object_get(wi, "t_start_s"));
		wd[i] = json_number_value(json_object_get(wi, "duration_s"));
		y[i] = json_number_value(json_object_get(wi, "ops_per_s"));
		mid[i] = x[i] + wd[i] / 2;
		/* The window's mean temperature from the embedded series. */
		double sum = 0;
		size_t cnt = 0;
		for (size_t j = 0; temp && j < nt && j < ns; j++) {
			double t = ts[j];
			if (t >= x[i] && t < x[i] + wd[i] && isfinite(temp[j])) {
				sum += temp[j];
				cnt++;
			}
		}
		tc[i] = cnt ? sum / (double)cnt : NAN;
		have_temp |= cnt > 0;
	}
	if (x && wd && y && tc && mid) {
		double lo, hi, tl, th;
		hp_range(y, n, &lo, &hi);
		struct hp_plot pl;
		char id[64], label[160];
		hd_id(id, sizeof id, d, "throughput");
		/* The power plot's x range, so that the two line up. */
		hp_begin(&pl, id, 0, time_axis_end(a), 0, hi);
		hp_bars(&pl, x, wd, y, n, "s0", "operations per second in the window");
		double first = hd_num(a, "figures.throughput.first_ops_per_s");
		double thr = hd_num(a, "plan.throttle_threshold");
		if (isfinite(first) && isfinite(thr)) {
			double line_x[2] = {x[0], x[n - 1] + wd[n - 1]};
			double line_y[2] = {first * (1 - thr), first * (1 - thr)};
			snprintf(label, sizeof label,
				 "throttle threshold: %.0f%% of the first window", 100 * (1 - thr));
			hp_line(&pl, line_x, line_y, 2, "s4", label);
		}
		double onset = hd_num(a, "figures.throughput.onset_t_s");
		if (isfinite(onset))
			hp_vline(&pl, load0 + onset, "onset", "throttle onset");
		if (have_temp) {
			hp_range(tc, n, &tl, &th);
			hp_line_right(&pl, mid, tc, n, tl - 1, th + 1, "s1",
				      "mean device temperature in the window (°C)", "°C");
		}
		const char *verdict =
		    json_string_value(ergon_jpath(a, "figures.throughput.verdict"));
		hp_end(&pl, b, "Throughput per window", "time since the idle baseline started (s)",
		       "operations per second", verdict ? verdict : NULL);
	}
	free(x);
	free(wd);
	free(y);
	free(tc);
	free(mid);
	free(temp);
	free(ts);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* The successful latencies, sorted. */
static double *latencies(const json_t *a, size_t *n)
{
	size_t nl = 0, nf = 0;
	double *l = arr(a, "series.invocations.latency_s", &nl);
	double *f = arr(a, "series.invocations.failed_index", &nf);
	size_t k = 0;
	for (size_t i = 0, j = 0; l && i < nl; i++) {
		while (j < nf && f[j] < (double)i)
			j++;
		if (j < nf && f[j] == (double)i)
			continue;
		if (isfinite(l[i]))
			l[k++] = l[i];
	}
	free(f);
	if (l)
		qsort(l, k, sizeof(double), cmp_double);
	*n = k;
	return l;
}

static void percentile_marks(struct hp_plot *pl, const json_t *a, double scale)
{
	static const char *const p[][2] = {{"figures.latency.p50_s", "p50"},
					   {"figures.latency.p90_s", "p90"},
					   {"figures.latency.p95_s", "p95"},
					   {"figures.latency.p99_s", "p99"}};
	hd_value_marks(pl, a, p, 4, "s", scale);
}

static void latency_plots(struct ergon_dynbuf *b, const struct html_doc *d)
{
	size_t n = 0;
	double *l = latencies(d->a, &n);
	if (n == 0) {
		free(l);
		return;
	}
	/* Milliseconds read better on the axis than seconds. Latencies run
	 * over decades (a 2 ms median, a 400 ms stall), so both plots use a
	 * log axis and the histogram's bins are equal on it (each bin r times
	 * as wide as the one before); a range that is not positive stays
	 * linear. */
	const double ms = 1e3;
	double lo = l[0] * ms, hi = l[n - 1] * ms;
	int logx = lo > 0;
	if (hi <= lo)
		hi = lo + (lo > 0 ? lo * 0.01 : 1e-6);
	double ratio = logx ? pow(hi / lo, 1.0 / HIST_BINS) : 1;
	double bw = (hi - lo) / HIST_BINS;
	double x[HIST_BINS], w[HIST_BINS], c[HIST_BINS] = {0};
	for (size_t i = 0; i < HIST_BINS; i++) {
		x[i] = logx ? lo * pow(ratio, (double)i) : lo + (double)i * bw;
		w[i] = logx ? lo * pow(ratio, (double)i + 1) - x[i] : bw;
	}
	for (size_t i = 0; i < n; i++) {
		double v = l[i] * ms;
		double pos = logx ? log(v / lo) / log(ratio) : (v - lo) / bw;
		size_t k = pos <= 0 ? 0 : (size_t)pos;
		c[k >= HIST_BINS ? HIST_BINS - 1 : k] += 1;
	}
	double cl, ch;
	hp_range(c, HIST_BINS, &cl, &ch);
	struct hp_plot pl;
	char id[64], cap[240];
	hd_id(id, sizeof id, d, "latency-hist");
	hp_begin(&pl, id, lo, hi, 0, ch);
	if (logx)
		hp_logx(&pl);
	hp_bars(&pl, x, w, c, HIST_BINS, "s2", "invocations per bin");
	percentile_marks(&pl, d->a, ms);
	snprintf(cap, sizeof cap,
		 "%zu successful invocations in %d bins%s; percentiles (nearest rank) from the "
		 "report's figures.",
		 n, HIST_BINS, logx ? " of equal width on the log axis" : "");
	hp_end(&pl, b, "Latency histogram", logx ? "latency (ms, log scale)" : "latency (ms)",
	       "invocations", cap);

	/* CDF: every invocation when few, else evenly spaced ranks. */
	size_t m = n <= HP_MAX_RAW ? n : HP_BUCKETS;
	double *cx = malloc(m * sizeof(double)), *cy = malloc(m * sizeof(double));
	if (cx && cy) {
		for (size_t i = 0; i < m; i++) {
			size_t r =
			    m == n ? i : (size_t)((double)i / (double)(m - 1) * (double)(n - 1));
			cx[i] = l[r] * ms;
			cy[i] = (double)(r + 1) / (double)n;
		}
		hd_id(id, sizeof id, d, "latency-cdf");
		hp_begin(&pl, id, lo, hi, 0, 1);
		if (logx)
			hp_logx(&pl);
		hp_steps(&pl, cx, cy, m, "s3", "fraction of invocations at or below");
		percentile_marks(&pl, d->a, ms);
		hp_end(&pl, b, "Latency CDF", logx ? "latency (ms, log scale)" : "latency (ms)",
		       "cumulative fraction", NULL);
	}
	free(cx);
	free(cy);
	free(l);
}

/* The single-run figures of figures at path (a run's own figures, or
 * figures.repetitions[i] of a repeated run). */
static void figure_grid(struct ergon_dynbuf *b, const json_t *f, const char *fpath)
{
	static const char *const groups[][2] = {{"energy_per_op", "energy per operation"},
						{"load", "load phase"},
						{"idle", "idle baseline"},
						{"latency", "latency"},
						{"throughput", "sustained throughput"},
						{"sampler", "sampler"},
						{"operations", "operations"}};
	char path[160];
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		snprintf(path, sizeof path, "%s.%s", fpath, groups[i][0]);
		hd_scalar_table(b, json_object_get(f, groups[i][0]), path, groups[i][1]);
	}
}

/* The repeat statistics of a repeated run: one row per figure (mean and
 * its interval, sd, median and its interval, the instrument's ±, each
 * repetition's value). */
static void repeat_table(struct ergon_dynbuf *b, const json_t *a)
{
	const json_t *per = ergon_jpath(a, "figures.repeat.figures");
	ergon_dynbuf_adds(
	    b, "<table class=\"figures\"><caption>repeat statistics: mean with its 95 % "
	       "interval (Student t), sample sd, median with its distribution-free interval, "
	       "the instrument's ±, every repetition</caption><tr><th>figure</th><th>mean</th>"
	       "<th>95 % interval</th><th>sd</th><th>median</th><th>median interval</th>"
	       "<th>instrument ±</th><th>repetitions</th></tr>\n");
	const char *g;
	json_t *grp;
	json_object_foreach((json_t *)per, g, grp)
	{
		const char *k;
		json_t *o;
		json_object_foreach(grp, k, o)
		{
			char base[160], p[200];
			snprintf(base, sizeof base, "figures.repeat.figures.%s.%s", g, k);
			const char *unit = hd_unit_of(k);
			ergon_dynbuf_adds(b, "<tr><th>");
			ergon_html_escape(b, json_string_value(json_object_get(o, "name")));
			ergon_dynbuf_adds(b, "</th>");
			static const char *const cells[] = {"mean", "ci_lo", "sd", "median",
							    "median_lo"};
			for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
				snprintf(p, sizeof p, "%s.%s", base, cells[c]);
				if (strcmp(cells[c], "ci_lo") == 0 ||
				    strcmp(cells[c], "median_lo") == 0) {
					/* An interval: two cells' worth in one. */
					const char *hi =
					    strcmp(cells[c], "ci_lo") == 0 ? "ci_hi" : "median_hi";
					ergon_dynbuf_adds(b, "<td><table><tr>");
					hd_figure_cell(b, p, json_object_get(o, cells[c]), unit);
					snprintf(p, sizeof p, "%s.%s", base, hi);
					hd_figure_cell(b, p, json_object_get(o, hi), unit);
					ergon_dynbuf_adds(b, "</tr></table></td>");
					continue;
				}
				hd_figure_cell(b, p, json_object_get(o, cells[c]), unit);
			}
			snprintf(p, sizeof p, "%s.u_instrument", base);
			hd_figure_cell(b, p, json_object_get(o, "u_instrument"), unit);
			ergon_dynbuf_adds(b, "<td><table><tr>");
			size_t i;
			json_t *v;
			json_array_foreach(json_object_get(o, "values"), i, v)
			{
				snprintf(p, sizeof p, "%s.values[%zu]", base, i);
				hd_figure_cell(b, p, v, unit);
			}
			ergon_dynbuf_adds(b, "</tr></table></td></tr>\n");
		}
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

/* A repeated run: the statistics, then every repetition as a run of its
 * own (its figures, its plots from its series). */
static void repeated_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *a = d->a;
	const json_t *f = json_object_get(a, "figures");
	char buf[256];
	snprintf(buf, sizeof buf,
		 "<p>%lld of %lld planned repetitions completed; each is the whole measurement "
		 "(settle, its own idle baseline, its load windows).</p>\n",
		 (long long)json_integer_value(ergon_jpath(a, "repeat.completed")),
		 (long long)json_integer_value(ergon_jpath(a, "repeat.planned")));
	ergon_dynbuf_adds(b, buf);
	if (json_object_get(f, "withheld"))
		ergon_dynbuf_adds(b, "<div class=\"banner warn\">Repeat statistics withheld: the "
				     "run did not complete every repetition (see status and "
				     "issues).</div>\n");
	else
		repeat_table(b, a);
	size_t i;
	const json_t *rep;
	json_array_foreach(json_object_get(a, "repetitions"), i, rep)
	{
		snprintf(buf, sizeof buf, "<h3>Repetition %zu</h3><div class=\"grid\">\n", i + 1);
		ergon_dynbuf_adds(b, buf);
		char fpath[64];
		snprintf(fpath, sizeof fpath, "figures.repetitions[%zu]", i);
		figure_grid(b, json_array_get(json_object_get(f, "repetitions"), i), fpath);
		ergon_dynbuf_adds(b, "</div>\n");
		/* The plots read the series of a single run: a view of this
		 * repetition, with ids of its own. */
		json_t *v = json_copy((json_t *)a);
		if (v == NULL)
			continue;
		json_object_del(v, "repetitions");
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)rep, k, x) json_object_set(v, k, x);
		json_object_set(v, "figures", json_array_get(json_object_get(f, "repetitions"), i));
		struct html_doc dv = *d;
		dv.a = v;
		dv.index = d->index * 1000 + (int)i + 1;
		power_plot(b, &dv);
		throughput_plot(b, &dv);
		latency_plots(b, &dv);
		json_decref(v);
	}
}

void hd_run_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *a = d->a;
	if (json_is_array(json_object_get(a, "repetitions"))) {
		repeated_section(b, d);
		ergon_dynbuf_adds(b, "<h3>Run</h3><div class=\"grid\">");
		hd_kv_table(b, json_object_get(a, "plan"), "plan");
		hd_kv_table(b, json_object_get(a, "sampler"), "sampler");
		hd_kv_table(b, json_object_get(a, "measurement_time"), "measurement time");
		ergon_dynbuf_adds(b, "</div>\n");
		return;
	}
	const json_t *f = json_object_get(a, "figures");
	if (json_object_get(f, "withheld"))
		ergon_dynbuf_adds(b, "<div class=\"banner warn\">Figures withheld: the run did not "
				     "complete (see status and issues).</div>\n");
	ergon_dynbuf_adds(b, "<h3>Figures</h3><div class=\"grid\">\n");
	figure_grid(b, f, "figures");
	char path[96];
	const json_t *rails = json_object_get(f, "rails");
	size_t r;
	json_t *rail;
	json_array_foreach(rails, r, rail)
	{
		char title[160];
		const char *nm = json_string_value(json_object_get(rail, "name"));
		snprintf(path, sizeof path, "figures.rails[%zu].load", r);
		snprintf(title, sizeof title, "rail %s: load", nm ? nm : "?");
		hd_scalar_table(b, json_object_get(rail, "load"), path, title);
		snprintf(path, sizeof path, "figures.rails[%zu].energy_per_op", r);
		snprintf(title, sizeof title, "rail %s: energy per operation", nm ? nm : "?");
		hd_scalar_table(b, json_object_get(rail, "energy_per_op"), path, title);
	}
	ergon_dynbuf_adds(b, "</div>\n");
	/* Every budget the figures carry (reports since the budgets). */
	if (json_is_object(json_object_get(json_object_get(a, "uncertainty_model"), "budget"))) {
		ergon_dynbuf_adds(
		    b, "<h3>Uncertainty budgets (GUM, k = 2)</h3><div class=\"grid\">\n");
		hd_budget_tables(b, f, "figures", "");
		ergon_dynbuf_adds(b, "</div>\n");
	}
	ergon_dynbuf_adds(b, "<h3>Plots</h3>\n");
	power_plot(b, d);
	throughput_plot(b, d);
	latency_plots(b, d);
	ergon_dynbuf_adds(b, "<h3>Run</h3><div class=\"grid\">");
	hd_kv_table(b, json_object_get(a, "plan"), "plan");
	hd_kv_table(b, json_object_get(a, "sampler"), "sampler");
	hd_kv_table(b, json_object_get(a, "uncertainty_model"), "uncertainty model");
	hd_kv_table(b, json_object_get(a, "measurement_time"), "measurement time");
	json_t *misc = json_pack(
	    "{s:O?, s:O?, s:O?, s:O?, s:O?}", "device", json_object_get(a, "device"), "workload",
	    json_object_get(a, "workload"), "mode", json_object_get(a, "mode"), "status",
	    json_object_get(a, "status"), "session", json_object_get(a, "session"));
	hd_kv_table(b, misc, "device, workload, mode, status");
	json_decref(misc);
	ergon_dynbuf_adds(b, "</div>\n");
}

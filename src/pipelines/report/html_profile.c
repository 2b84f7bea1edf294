/* ergon report: the section of a profile or analyze summary (the power
 * trace around the gate from the recording, the current distribution, the
 * per-window table, the checks, the per-layer table and charts). */
#include "ergon/jls.h"
#include "pipelines/common/common.h"
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIST_BINS 60
/* The key of a layer's emulated instruction count (QEMU -icount, when the
 * profile says that is what was measured: profile.emulated_instruction_count). */
#define EMU_KEY "pmu.emulated_instruction_count"

/* What one pass over the recording collects. */
struct trace_ctx {
	double rate_hz;
	struct hp_decim cur;	 /* current over the whole recording */
	double lo_a, hi_a;	 /* histogram range (A) */
	double hist[DIST_BINS];	 /* gated samples per bin */
	const double *win_start; /* gated windows from the artifact, s */
	const double *win_end;
	size_t n_win;
	size_t wcur; /* the first window that has not ended */
	uint64_t gated, total;
};

static int on_block(void *ctx, const struct ergon_jls_block *blk, struct ergon_err *err)
{
	(void)err;
	struct trace_ctx *c = ctx;
	const double dt = 1.0 / c->rate_hz, hscale = DIST_BINS / (c->hi_a - c->lo_a);
	const double t0 = (double)blk->first_index * dt;
	for (size_t i = 0; i < blk->n; i++) {
		double t = t0 + (double)i * dt;
		double ia = blk->current_a[i];
		hp_decim_add(&c->cur, t, ia);
		c->total++;
		/* Windows are in time order and so are samples: one cursor. */
		while (c->wcur < c->n_win && t >= c->win_end[c->wcur])
			c->wcur++;
		int in = c->wcur < c->n_win && t >= c->win_start[c->wcur];
		if (!in || !isfinite(ia))
			continue;
		c->gated++;
		double pos = (ia - c->lo_a) * hscale;
		size_t k = pos < 0 ? 0 : pos >= DIST_BINS ? DIST_BINS - 1 : (size_t)pos;
		c->hist[k] += 1;
	}
	return 0;
}

static void window_marks(struct hp_plot *pl, const double *s, const double *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char label[64];
		snprintf(label, sizeof label, "gated window %zu", i + 1);
		hp_span(pl, s[i], e[i], "gate", label);
		hp_vline(pl, s[i], "edge", "rising edge");
		hp_vline(pl, e[i], "edge", "falling edge");
	}
}

static void quantile_marks(struct hp_plot *pl, const json_t *pw, double scale)
{
	static const char *const q[][2] = {
	    {"median_current_a", "median"}, {"p95_current_a", "p95"}, {"p99_current_a", "p99"}};
	hd_value_marks(pl, pw, q, 3, "A", scale);
}

/* The trace and the distribution from the recording. */
static int recording_plots(struct ergon_dynbuf *b, const struct html_doc *d, const json_t *pw,
			   struct ergon_err *err)
{
	struct ergon_jls_reader *r = NULL;
	struct trace_ctx c;
	const json_t *wins = json_object_get(pw, "windows");
	size_t nw = json_array_size(wins);
	double *ws = calloc(nw + 1, sizeof(double)), *we = calloc(nw + 1, sizeof(double));
	memset(&c, 0, sizeof c);
	int rc = 0;
	if (ws == NULL || we == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nw; i++) {
		ws[i] = json_number_value(json_object_get(json_array_get(wins, i), "start_s"));
		we[i] = json_number_value(json_object_get(json_array_get(wins, i), "end_s"));
	}
	if ((rc = ergon_jls_file_open(d->jls_path, &r, err)) != 0)
		goto out;
	c.rate_hz = ergon_jls_reader_sample_rate(r);
	double dur = hd_num(pw, "capture_duration_s");
	if (!(c.rate_hz > 0)) {
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: no sample rate for \"current\"",
				   d->jls_path);
		goto out;
	}
	if (!isfinite(dur) || dur <= 0)
		dur = hd_num(pw, "whole_capture_window.end_s");
	if (!isfinite(dur) || dur <= 0) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "%s: the summary has no capture_duration_s to lay the recording "
				   "%s out on",
				   d->path, d->jls_path);
		goto out;
	}
	c.lo_a = 0;
	c.hi_a = hd_num(pw, "whole_capture_window.peak_current_a");
	if (!isfinite(c.hi_a) || c.hi_a <= 0)
		c.hi_a = hd_num(pw, "peak_current_a");
	if (!isfinite(c.hi_a) || c.hi_a <= 0)
		c.hi_a = 1;
	c.hi_a *= 1.02;
	c.win_start = ws;
	c.win_end = we;
	c.n_win = nw;
	if (hp_decim_init(&c.cur, 0, dur, HP_BUCKETS) != 0) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = ergon_jls_reader_stream(r, NULL, on_block, &c, err)) != 0)
		goto out;
	double lo = NAN, hi = NAN;
	for (size_t i = 0; i < c.cur.buckets; i++) {
		if (!c.cur.cnt[i])
			continue;
		if (isnan(lo) || c.cur.mn[i] < lo)
			lo = c.cur.mn[i];
		if (isnan(hi) || c.cur.mx[i] > hi)
			hi = c.cur.mx[i];
	}
	const double ma = 1e3;
	/* Drawn in mA: scale the decimator's values in place. */
	for (size_t i = 0; i < c.cur.buckets; i++) {
		c.cur.mn[i] *= ma;
		c.cur.mx[i] *= ma;
		c.cur.sum[i] *= ma;
	}
	for (size_t i = 0; i < c.cur.nraw; i++)
		c.cur.ry[i] *= ma;
	struct hp_plot pl;
	char id[64], cap[400];
	hd_id(id, sizeof id, d, "trace");
	hp_begin(&pl, id, 0, dur, fmin(lo * ma, 0), hi * ma);
	window_marks(&pl, ws, we, nw);
	hp_decimated(&pl, &c.cur, "s0", "current");
	snprintf(cap, sizeof cap,
		 "%llu samples at %.0f Hz from %s; the gated windows of the summary are shaded "
		 "and their edges marked%s.",
		 (unsigned long long)c.total, c.rate_hz, d->jls_path,
		 c.total > HP_MAX_RAW ? "; min/max envelope and mean of 1200 time buckets" : "");
	hp_end(&pl, b, "Current around the gate (recording)",
	       "time since the recording started (s)", "current (mA)", cap);

	double x[DIST_BINS], w[DIST_BINS], hy[DIST_BINS];
	double bw = (c.hi_a - c.lo_a) / DIST_BINS * ma;
	for (size_t i = 0; i < DIST_BINS; i++) {
		x[i] = c.lo_a * ma + (double)i * bw;
		w[i] = bw;
		hy[i] = c.gated ? c.hist[i] / (double)c.gated : 0;
	}
	hp_range(hy, DIST_BINS, &lo, &hi);
	hd_id(id, sizeof id, d, "distribution");
	hp_begin(&pl, id, c.lo_a * ma, c.hi_a * ma, 0, hi);
	hp_bars(&pl, x, w, hy, DIST_BINS, "s2", "share of gated samples");
	quantile_marks(&pl, pw, ma);
	snprintf(cap, sizeof cap,
		 "%llu samples inside the gated windows in %d bins; median, p95 and p99 from the "
		 "summary.",
		 (unsigned long long)c.gated, DIST_BINS);
	hp_end(&pl, b, "Current distribution in the gated windows", "current (mA)",
	       "share of samples", cap);
out:
	hp_decim_free(&c.cur);
	ergon_jls_reader_free(r);
	free(ws);
	free(we);
	return rc;
}

/* The gated windows (and the whole capture) as one table. */
static void window_table(struct ergon_dynbuf *b, const json_t *pw)
{
	const json_t *wins = json_object_get(pw, "windows");
	const json_t *whole = json_object_get(pw, "whole_capture_window");
	const json_t *first = json_array_get(wins, 0);
	if (first == NULL)
		first = whole;
	if (!json_is_object(first))
		return;
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>gated "
			     "windows</caption><tr><th>"
			     "window</th>");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)first, k, v) if (json_is_number(v)) hd_key_th(b, k);
	ergon_dynbuf_adds(b, "</tr>\n");
	size_t n = json_array_size(wins);
	for (size_t i = 0; i <= n; i++) {
		const json_t *row = i < n ? json_array_get(wins, i) : whole;
		if (!json_is_object(row))
			continue;
		char label[48], base[64], path[160];
		if (i < n) {
			snprintf(label, sizeof label, "%zu", i + 1);
			snprintf(base, sizeof base, "power.windows[%zu]", i);
		} else {
			snprintf(label, sizeof label, "whole capture");
			snprintf(base, sizeof base, "power.whole_capture_window");
		}
		ergon_dynbuf_addf(b, "<tr><td>%s</td>", label);
		json_object_foreach((json_t *)first, k, v) if (json_is_number(v))
		{
			snprintf(path, sizeof path, "%s.%s", base, k);
			hd_figure_cell(b, path, json_object_get(row, k), hd_unit_of(k));
		}
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
}

static void checks_table(struct ergon_dynbuf *b, const json_t *a, const json_t *pw)
{
	static const char *const rows[][2] = {
	    {"integrity", "integrity (from the issues)"},
	    {"valid", "valid"},
	    {"power.integrity", "power integrity"},
	    {"power.measurement_scope", "measurement scope"},
	    {"power.per_inference_metrics_omitted", "per-inference figures withheld"},
	    {"power.gate_failure", "gate failure"},
	    {"power.gated_window_count", "gated windows"},
	    {"power.gated_window_duration_suspect", "window duration suspect"},
	    {"power.gated_window_duration_ratio", "window duration / expected"},
	    {"power.gated_vs_whole_current_ok", "gated vs whole-capture current plausible"},
	    {"power.observer_check.agrees", "observer agrees with the firmware window"},
	    {"power.short_gate_pulses_ignored", "short gate pulses ignored"},
	    {"power.sync.ready_observed", "READY observed (lock-step)"},
	    {"power.firmware.transport_contamination", "transport contamination"}};
	(void)pw;
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>checks and verdicts</caption>\n");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const json_t *v = ergon_jpath(a, rows[i][0]);
		if (v == NULL)
			continue;
		ergon_dynbuf_adds(b, "<tr><th>");
		ergon_html_escape(b, rows[i][1]);
		ergon_dynbuf_adds(b, "</th>");
		hd_figure_cell(b, rows[i][0], v, "");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	const json_t *why = ergon_jpath(a, "power.per_inference_omitted_reasons");
	if (json_array_size(why)) {
		char *s = json_dumps(why, JSON_COMPACT);
		ergon_dynbuf_adds(b, "<tr><th>why withheld</th><td>");
		ergon_html_escape(b, s ? s : "?");
		ergon_dynbuf_adds(b, "</td></tr>\n");
		free(s);
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

/* Counter names of a layer list: cycles, then the counters. Caller decrefs. */
static json_t *counter_names(const json_t *layers)
{
	json_t *names = json_array();
	size_t i;
	json_t *l;
	json_array_foreach(layers, i, l)
	{
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(l, "counters"), k, v)
		{
			int seen = 0;
			size_t j;
			json_t *x;
			json_array_foreach(names, j, x) seen |=
			    strcmp(json_string_value(x), k) == 0;
			if (!seen && json_is_number(v))
				json_array_append_new(names, json_string(k));
		}
	}
	return names;
}

static void layer_table(struct ergon_dynbuf *b, const json_t *layers, const char *base,
			const char *title, int emulated)
{
	json_t *names = counter_names(layers);
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>");
	ergon_html_escape(b, title);
	ergon_dynbuf_adds(b, "</caption><tr><th>layer</th><th>op</th><th>cycles</th>");
	size_t i, j;
	json_t *l, *x;
	json_array_foreach(names, j, x) hd_key_th(b, json_string_value(x));
	if (emulated)
		ergon_dynbuf_adds(b, "<th>emulated instructions (QEMU -icount)</th>");
	ergon_dynbuf_adds(b, "<th>overflow</th></tr>\n");
	json_array_foreach(layers, i, l)
	{
		char path[256];
		ergon_dynbuf_addf(b, "<tr><td>%lld</td><td>",
				  (long long)json_integer_value(json_object_get(l, "id")));
		ergon_html_escape(b, json_string_value(json_object_get(l, "op")));
		ergon_dynbuf_adds(b, "</td>");
		snprintf(path, sizeof path, "%s[%zu].cycles", base, i);
		hd_figure_cell(b, path, json_object_get(l, "cycles"), "");
		json_array_foreach(names, j, x)
		{
			const char *cn = json_string_value(x);
			snprintf(path, sizeof path, "%s[%zu].counters.%s", base, i, cn);
			hd_figure_cell(b, path, json_object_get(json_object_get(l, "counters"), cn),
				       "");
		}
		if (emulated) {
			/* The key holds a dot ("pmu.emulated_instruction_count"), so
			 * it has no dotted path: the cell carries its value only. */
			const json_t *ei = json_object_get(l, EMU_KEY);
			if (json_is_number(ei))
				ergon_dynbuf_addf(
				    b, "<td class=\"num\" data-value=\"%.17g\">%.0f</td>",
				    json_number_value(ei), json_number_value(ei));
			else
				ergon_dynbuf_adds(b, "<td class=\"na\">—</td>");
		}
		hd_figure_cell(b, "", json_object_get(l, "overflow"), "");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
	json_decref(names);
}

/* A layer's value of counter c: 0 cycles, 1..nc-1 the counters, nc the
 * emulated instruction count; NaN when absent. */
static double layer_value(const json_t *l, const json_t *names, size_t c, size_t nc)
{
	const json_t *v = c == 0 ? json_object_get(l, "cycles")
			  : c < nc
			      ? json_object_get(json_object_get(l, "counters"),
						json_string_value(json_array_get(names, c - 1)))
			      : json_object_get(l, EMU_KEY);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

struct layer_rank {
	size_t i;
	double key;
};

static int by_key_desc(const void *pa, const void *pb)
{
	const struct layer_rank *a = pa, *b = pb;
	int na = !isfinite(a->key), nb = !isfinite(b->key);
	if (na || nb)
		return na - nb; /* layers without the figure last */
	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return (a->i > b->i) - (a->i < b->i); /* ties in layer order */
}

/* One chart per counter group: for every counter, each layer's share of
 * the group's total (so that cycles and microseconds share an axis), the
 * layers sorted by the first figure they have of cycles, the emulated
 * instruction count (QEMU) and the window time, largest first, and named
 * by id and op under the axis. */
static void group_chart(struct ergon_dynbuf *b, const struct html_doc *d, const char *group,
			const json_t *layers, int emulated)
{
	json_t *names = counter_names(layers);
	size_t nl = json_array_size(layers), nc = json_array_size(names) + 1;
	size_t ns = nc + (emulated ? 1 : 0);
	if (nl == 0) {
		json_decref(names);
		return;
	}
	double *x = calloc(nl, sizeof(double)), *w = calloc(nl, sizeof(double));
	double *y = calloc(nl, sizeof(double));
	struct layer_rank *rank = calloc(nl, sizeof *rank);
	char **labels = calloc(nl, sizeof *labels);
	struct hp_plot pl;
	char id[96], gid[64], label[160];
	const char *sorted_by = "layer order";
	snprintf(gid, sizeof gid, "layers-%s", group);
	for (char *p = gid; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			*p = '_';
	hd_id(id, sizeof id, d, gid);
	if (!x || !w || !y || !rank || !labels)
		goto out;
	/* The sort key: cycles when any layer has them, else the emulated
	 * instructions, else the window time. */
	size_t window_c = nc;
	for (size_t c = 1; c < nc; c++)
		if (strcmp(json_string_value(json_array_get(names, c - 1)), "window_us") == 0)
			window_c = c;
	const size_t keys[3] = {0, emulated ? nc : (size_t)-1,
				window_c < nc ? window_c : (size_t)-1};
	static const char *const key_names[3] = {"cycles", "emulated instructions", "window time"};
	for (size_t k = 0; k < 3; k++) {
		if (keys[k] == (size_t)-1)
			continue;
		int any = 0;
		for (size_t i = 0; i < nl; i++)
			any |= isfinite(layer_value(json_array_get(layers, i), names, keys[k], nc));
		if (!any)
			continue;
		for (size_t i = 0; i < nl; i++) {
			rank[i].i = i;
			rank[i].key = layer_value(json_array_get(layers, i), names, keys[k], nc);
		}
		qsort(rank, nl, sizeof *rank, by_key_desc);
		sorted_by = key_names[k];
		break;
	}
	if (strcmp(sorted_by, "layer order") == 0)
		for (size_t i = 0; i < nl; i++)
			rank[i].i = i;
	hp_begin(&pl, id, -0.5, (double)nl - 0.5, 0, 100);
	for (size_t c = 0; c < ns; c++) {
		const char *cn = c == 0	  ? "cycles"
				 : c < nc ? json_string_value(json_array_get(names, c - 1))
					  : "emulated instructions (QEMU -icount)";
		double total = 0;
		for (size_t r = 0; r < nl; r++) {
			y[r] = layer_value(json_array_get(layers, rank[r].i), names, c, nc);
			if (isfinite(y[r]))
				total += y[r];
		}
		for (size_t r = 0; r < nl; r++) {
			y[r] = total > 0 ? 100 * y[r] / total : NAN;
			x[r] = (double)r - 0.4 + 0.8 * (double)c / (double)ns;
			w[r] = 0.8 / (double)ns;
		}
		char cls[8];
		snprintf(cls, sizeof cls, "s%zu", c % 6);
		hd_label(label, sizeof label, cn);
		hp_bars(&pl, x, w, y, nl, cls, label);
	}
	/* Every layer named when the names fit, else every k-th. */
	size_t step = hp_xcat_step(&pl, nl);
	for (size_t r = 0; r < nl; r += step) {
		const json_t *l = json_array_get(layers, rank[r].i);
		const char *op = json_string_value(json_object_get(l, "op"));
		char nm[96];
		snprintf(nm, sizeof nm, "%lld %s",
			 (long long)json_integer_value(json_object_get(l, "id")), op ? op : "?");
		labels[r] = strdup(nm);
	}
	hp_xcategories(&pl, (const char *const *)labels, nl);
	snprintf(label, sizeof label, "Counter group %s: each layer's share of every counter",
		 group);
	char cap[500], every[64] = "";
	if (step > 1)
		snprintf(every, sizeof every, " (here every %zu%s; all in the table)", step,
			 hp_ordinal_suffix(step));
	snprintf(cap, sizeof cap,
		 "%zu layers, sorted by %s (largest first), named by id and op%s; bar height = "
		 "the layer's share of the counter's total over all layers.%s",
		 nl, sorted_by, every,
		 emulated ? " On QEMU the emulated instruction count is what was measured, not "
			    "Cortex-M55 cycles."
			  : "");
	hp_end(&pl, b, label, "layer (id and op)", "share of the total (%)", cap);
out:
	for (size_t i = 0; labels && i < nl; i++)
		free(labels[i]);
	free(labels);
	free(rank);
	free(x);
	free(w);
	free(y);
	json_decref(names);
}

/* Energy per layer (power.layers[], issue 33): the measured layers sorted
 * by their energy, costliest first, named by index and op, the measured
 * mean with its expanded uncertainty beside the cycle-split estimate
 * (labelled estimated), and the same as a table whose cells the page's
 * self-check ties to the artifact. Without markers (power.layers_estimated
 * only) the estimate alone, and the caption says nothing was measured. */
static void layer_energy_part(struct ergon_dynbuf *b, const struct html_doc *d, const json_t *pw)
{
	const json_t *meas = json_object_get(pw, "layers");
	const json_t *est_only = json_object_get(pw, "layers_estimated");
	int measured = json_array_size(meas) > 0;
	const json_t *layers = measured ? meas : est_only;
	size_t nl = json_array_size(layers);
	if (nl == 0)
		return;
	const char *base = measured ? "power.layers" : "power.layers_estimated";
	double *x = calloc(nl, sizeof(double)), *w = calloc(nl, sizeof(double));
	double *y = calloc(nl, sizeof(double)), *lo = calloc(nl, sizeof(double));
	double *hi = calloc(nl, sizeof(double));
	struct layer_rank *rank = calloc(nl, sizeof *rank);
	char **labels = calloc(nl, sizeof *labels);
	if (!x || !w || !y || !lo || !hi || !rank || !labels)
		goto out;
	double top = 0;
	size_t n_est = 0;
	for (size_t i = 0; i < nl; i++) {
		const json_t *l = json_array_get(layers, i);
		double e = hd_num(l, "energy_j"), u = hd_num(l, "energy_U_j");
		double es = hd_num(json_object_get(l, "estimated_energy"), "energy_j");
		rank[i].i = i;
		rank[i].key = isfinite(e) ? e : -INFINITY;
		top = fmax(top, isfinite(e) ? e + (isfinite(u) ? u : 0) : 0);
		top = fmax(top, isfinite(es) ? es : 0);
		n_est += measured && isfinite(es);
	}
	qsort(rank, nl, sizeof *rank, by_key_desc);
	ergon_dynbuf_addf(b,
			  "<h3>Energy per layer</h3>\n<table class=\"wide\" "
			  "data-layer-energy=\"%s\"><caption>%s</caption><tr><th>layer</th>"
			  "<th>op</th><th>energy</th>",
			  measured ? "measured" : "estimated",
			  measured ? "energy per layer and inference, measured between the "
				     "marker edges, costliest first"
				   : "energy per layer and inference, ESTIMATED (the cycle split; "
				     "no markers, nothing measured per layer)");
	if (measured)
		ergon_dynbuf_adds(b, "<th>U (k = 2)</th><th>estimated</th><th>measured / "
				     "estimated</th><th>duration</th><th>share</th>");
	ergon_dynbuf_adds(b, "</tr>\n");
	for (size_t r = 0; r < nl; r++) {
		size_t i = rank[r].i;
		const json_t *l = json_array_get(layers, i);
		long long i0 = (long long)json_integer_value(json_object_get(l, "index"));
		long long i1 = json_is_integer(json_object_get(l, "last_index"))
				   ? (long long)json_integer_value(json_object_get(l, "last_index"))
				   : i0;
		const char *op = json_string_value(json_object_get(l, "op"));
		char nm[160], idx[48], path[128];
		if (i1 > i0)
			snprintf(idx, sizeof idx, "%lld-%lld", i0, i1);
		else
			snprintf(idx, sizeof idx, "%lld", i0);
		snprintf(nm, sizeof nm, "%s %s", idx, op ? op : "?");
		labels[r] = strdup(nm);
		ergon_dynbuf_addf(b, "<tr data-rank=\"%zu\"><td>%s</td><td>", r, idx);
		ergon_html_escape(b, op ? op : "?");
		ergon_dynbuf_adds(b, "</td>");
		snprintf(path, sizeof path, "%s[%zu].energy_j", base, i);
		hd_figure_cell(b, path, json_object_get(l, "energy_j"), "J");
		if (measured) {
			const json_t *est = json_object_get(l, "estimated_energy");
			snprintf(path, sizeof path, "%s[%zu].energy_U_j", base, i);
			hd_figure_cell(b, path, json_object_get(l, "energy_U_j"), "J");
			snprintf(path, sizeof path, "%s[%zu].estimated_energy.energy_j", base, i);
			hd_figure_cell(b, path, json_object_get(est, "energy_j"), "J");
			snprintf(path, sizeof path,
				 "%s[%zu].estimated_energy.measured_over_estimated", base, i);
			hd_figure_cell(b, path, json_object_get(est, "measured_over_estimated"),
				       "");
			snprintf(path, sizeof path, "%s[%zu].duration_s", base, i);
			hd_figure_cell(b, path, json_object_get(l, "duration_s"), "s");
			snprintf(path, sizeof path, "%s[%zu].share", base, i);
			hd_figure_cell(b, path, json_object_get(l, "share"), "");
		}
		ergon_dynbuf_adds(b, "</tr>\n");
		/* The chart in µJ: bars left (measured) and right (estimate). */
		double e = hd_num(l, "energy_j"), u = hd_num(l, "energy_U_j");
		x[r] = (double)r - 0.4;
		w[r] = measured ? 0.4 : 0.8;
		y[r] = e * 1e6;
		lo[r] = isfinite(u) ? (e - u) * 1e6 : NAN;
		hi[r] = isfinite(u) ? (e + u) * 1e6 : NAN;
	}
	ergon_dynbuf_adds(b, "</table>\n");
	if (!(top > 0))
		goto out;
	struct hp_plot pl;
	char id[96];
	hd_id(id, sizeof id, d, "layer-energy");
	hp_begin(&pl, id, -0.5, (double)nl - 0.5, 0, top * 1e6 * 1.05);
	hp_bars(&pl, x, w, y, nl, measured ? "s0" : "s1",
		measured ? "measured (mean over inferences)" : "estimated (cycle split)");
	if (measured) {
		for (size_t r = 0; r < nl; r++)
			x[r] += 0.4 * 0.5;
		hp_errbars(&pl, x, lo, hi, nl, "s0", "measured ± U (k = 2)");
		if (n_est > 0) {
			for (size_t r = 0; r < nl; r++) {
				const json_t *l = json_array_get(layers, rank[r].i);
				x[r] = (double)r;
				y[r] = hd_num(json_object_get(l, "estimated_energy"), "energy_j") *
				       1e6;
			}
			hp_bars(&pl, x, w, y, nl, "s1", "estimated (cycle split)");
		}
	}
	size_t step = hp_xcat_step(&pl, nl);
	for (size_t r = 0; r < nl; r++)
		if (r % step != 0) {
			free(labels[r]);
			labels[r] = NULL;
		}
	hp_xcategories(&pl, (const char *const *)labels, nl);
	char cap[400], every[64] = "";
	if (step > 1)
		snprintf(every, sizeof every, " (here every %zu%s; all in the table)", step,
			 hp_ordinal_suffix(step));
	snprintf(cap, sizeof cap,
		 measured
		     ? "%zu layers (merged ones as first-last), sorted by measured energy "
		       "(largest first), named by index and op%s; left bar: measured between "
		       "the marker edges with its U; right bar: the energy per inference split "
		       "by the PMU cycles, estimated."
		     : "%zu layers sorted by the estimate (largest first)%s: the energy per "
		       "inference split by the PMU cycles, ESTIMATED; nothing was measured per "
		       "layer (no markers).",
		 nl, every);
	hp_end(&pl, b,
	       measured ? "Energy per layer, measured beside estimated"
			: "Energy per layer, estimated only",
	       "layer (index and op)", "energy per inference (µJ)", cap);
out:
	for (size_t i = 0; labels && i < nl; i++)
		free(labels[i]);
	free(labels);
	free(rank);
	free(x);
	free(w);
	free(y);
	free(lo);
	free(hi);
}

static void profile_part(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *p = json_object_get(d->a, "profile");
	int emulated = json_is_object(json_object_get(p, "emulated_instruction_count"));
	ergon_dynbuf_adds(b, "<h3>Per layer</h3>\n");
	ergon_dynbuf_adds(b, "<div class=\"grid\">");
	hd_scalar_table(b, p, "profile", "profile");
	const json_t *top = json_object_get(p, "top_layers");
	ergon_dynbuf_adds(b, "<table class=\"wide\"><caption>top layers by cycles</caption>"
			     "<tr><th>layer</th><th>op</th><th>cycles</th><th>share</th></tr>\n");
	size_t i;
	json_t *t;
	json_array_foreach(top, i, t)
	{
		char path[96];
		ergon_dynbuf_addf(b, "<tr><td>%lld</td><td>",
				  (long long)json_integer_value(json_object_get(t, "id")));
		ergon_html_escape(b, json_string_value(json_object_get(t, "op")));
		ergon_dynbuf_adds(b, "</td>");
		snprintf(path, sizeof path, "profile.top_layers[%zu].cycles", i);
		hd_figure_cell(b, path, json_object_get(t, "cycles"), "");
		snprintf(path, sizeof path, "profile.top_layers[%zu].pct", i);
		hd_figure_cell(b, path, json_object_get(t, "pct"), "%");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
	layer_table(b, json_object_get(p, "layers"), "profile.layers",
		    "layers (aggregated over every preset)", emulated);
	const json_t *groups = json_object_get(p, "groups");
	if (json_object_size(groups) == 0) {
		group_chart(b, d, "all", json_object_get(p, "layers"), emulated);
		return;
	}
	const char *g;
	json_t *gl;
	json_object_foreach((json_t *)groups, g, gl)
	{
		char base[128], title[160];
		snprintf(base, sizeof base, "profile.groups.%s", g);
		snprintf(title, sizeof title, "counter group %s", g);
		group_chart(b, d, g, gl, emulated);
		layer_table(b, gl, base, title, emulated);
	}
}

int hd_profile_section(struct ergon_dynbuf *b, struct html_doc *d, struct ergon_err *err)
{
	const json_t *pw = json_object_get(d->a, "power");
	int have_power =
	    json_is_object(pw) && json_is_string(json_object_get(pw, "measurement_scope"));
	if (have_power) {
		ergon_dynbuf_adds(b, "<h3>Power</h3><div class=\"grid\">");
		hd_scalar_table(b, pw, "power", "power figures");
		checks_table(b, d->a, pw);
		ergon_dynbuf_adds(b, "</div>\n");
		/* The budgets of the section's figures (docs/UNCERTAINTY.md). */
		const json_t *unc = json_object_get(pw, "uncertainty");
		if (json_is_object(unc)) {
			ergon_dynbuf_adds(b, "<h3>Uncertainty budgets (GUM, k = 2)</h3>"
					     "<p class=\"caption\">The instrument's rating: ");
			ergon_html_escape(
			    b, json_string_value(json_object_get(unc, "rating_from"))
				   ? json_string_value(json_object_get(unc, "rating_from"))
				   : "as the power stage knew it");
			ergon_dynbuf_adds(b, "</p><div class=\"grid\">\n");
			hd_budget_tables(b, unc, "power.uncertainty", "");
			ergon_dynbuf_adds(b, "</div>\n");
		}
		window_table(b, pw);
		layer_energy_part(b, d, pw);
		if (d->jls_path) {
			if (d->jls_note[0]) {
				ergon_dynbuf_adds(b,
						  "<p class=\"banner bad\" data-jls-forced=\"1\">"
						  "Recording drawn with --force-jls, NOT shown to "
						  "be this summary's: ");
				ergon_html_escape(b, d->jls_note);
				ergon_dynbuf_adds(b, "</p>\n");
			}
			int rc = recording_plots(b, d, pw, err);
			if (rc)
				return rc;
		} else {
			ergon_dynbuf_adds(b,
					  "<p class=\"caption\">The summary does not embed the "
					  "recording: give it with <code>--jls FILE</code> after "
					  "this artifact to draw the trace around the gate and the "
					  "current distribution.</p>\n");
		}
	} else {
		ergon_dynbuf_adds(b, "<p class=\"caption\">No power stage in this summary.</p>\n");
	}
	if (json_is_object(json_object_get(d->a, "profile")))
		profile_part(b, d);
	/* An analyze summary has no stages, plan or board. */
	if (json_object_get(d->a, "stages") || json_object_get(d->a, "plan")) {
		ergon_dynbuf_adds(b, "<h3>Stages and plan</h3><div class=\"grid\">");
		hd_kv_table(b, json_object_get(d->a, "stages"), "stages");
		hd_kv_table(b, json_object_get(d->a, "plan"), "plan");
		hd_kv_table(b, json_object_get(d->a, "board"), "board");
		ergon_dynbuf_adds(b, "</div>\n");
	}
	return 0;
}

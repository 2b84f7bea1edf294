/* ergon run: the sustained-load harness. Parses flags, installs the
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT handler, calls ergon_run and prints the summary: the
 * typed result's figures and verdict, the report's instrument, rails and repetitions
 * (the CLI computes nothing). */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "cli_sign.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/parse.h"
#include "ergon/report.h"
#include "ergon/verdict.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_KV 64

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* --repeat on a terminal: when each repetition started, for the line that
 * says it is done and how long the rest will take (progress runs on the
 * measuring thread only, so a file-level state). */
static struct {
	size_t repetition; /* the one running, 1-based; 0 before the first */
	struct timespec t0, rep_t0;
} reps_seen;

/* "ergon run: repetition k/N done in T; about E left" (the mean pace of the
 * repetitions so far), a line of its own above the redrawn one. */
static void repetition_done(size_t k, size_t n, const struct timespec *now)
{
	char took[24], left[24];
	cli_duration(took, sizeof took,
		     (double)(now->tv_sec - reps_seen.rep_t0.tv_sec) +
			 1e-9 * (double)(now->tv_nsec - reps_seen.rep_t0.tv_nsec));
	int more = k < n && cli_time_left(left, sizeof left, &reps_seen.t0, k, n);
	fprintf(stderr, "\r%-78s\rergon run: repetition %zu/%zu done in %s%s%s%s\n", "", k, n, took,
		more ? "; about " : "", more ? left : "", more ? " left" : "");
}

static void progress(void *ctx, const struct ergon_session_progress *p)
{
	(void)ctx;
	if (p->repetitions > 1 && p->repetition != reps_seen.repetition) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (reps_seen.repetition == 0)
			reps_seen.t0 = now;
		else
			repetition_done(reps_seen.repetition, p->repetitions, &now);
		reps_seen.repetition = p->repetition;
		reps_seen.rep_t0 = now;
	}
	char rep[32] = "";
	if (p->repetitions > 1)
		snprintf(rep, sizeof rep, "rep %zu/%zu ", p->repetition, p->repetitions);
	if (strcmp(p->phase, "load") == 0)
		fprintf(stderr, "\r  %sload   window %zu/%zu  %6.1f s  %zu ops (%zu failed)   ",
			rep, p->window + 1, p->windows, p->elapsed_s, p->operations, p->failed);
	else
		fprintf(stderr, "\r  %s%-6s %6.1f s                                  ", rep,
			p->phase, p->phase_s);
	fflush(stderr);
}

static double num(const json_t *r, const char *path)
{
	const json_t *v = r;
	char key[64];
	while (v && *path) {
		size_t l = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)l, path);
		v = json_object_get(v, key);
		path += l + (path[l] == '.');
	}
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *r, const char *a, const char *b)
{
	const char *s = json_string_value(json_object_get(json_object_get(r, a), b));
	return s ? s : "?";
}

/* value in a unit prefix that puts it in [1, 1000). */
/* One prefix for the value and its ±, chosen from the larger of the two:
 * "0.00 nJ ± 191382.22 nJ" hides the value's scale, "0.00 ± 0.19 mJ" does
 * not. u = NaN: no ± at all (latency); unrated: the instrument states no
 * accuracy, so the ± is printed as "unrated" rather than a confident
 * resolution-only figure. */
static void si(char *out, size_t cap, double v, double u, const char *unit, int digits, int unrated)
{
	const struct {
		double f;
		const char *p;
	} pre[] = {{1, ""}, {1e-3, "m"}, {1e-6, cli_sym("µ", "u")}, {1e-9, "n"}};
	double mag = fabs(v);
	if (!isnan(u) && fabs(u) > mag)
		mag = fabs(u);
	size_t k = 0;
	while (k + 1 < sizeof(pre) / sizeof(pre[0]) && mag < pre[k].f)
		k++;
	if (isnan(u))
		snprintf(out, cap, "%.*f %s%s", digits, v / pre[k].f, pre[k].p, unit);
	else if (unrated)
		snprintf(out, cap,
			 "%.*f %s%s above idle %s unrated (the instrument states no "
			 "accuracy)",
			 digits, v / pre[k].f, pre[k].p, unit, cli_sym("±", "+/-"));
	else
		snprintf(out, cap, "%.*f %s%s above idle %s %.*f %s%s", digits, v / pre[k].f,
			 pre[k].p, unit, cli_sym("±", "+/-"), digits, u / pre[k].f, pre[k].p, unit);
}

/* " ± U (k = 2, 6.2 %; largest term: gain)" after a figure printed in
 * units of scale (prefix), from a budget the report holds; the incomplete
 * form names the unknown term ("± unrated" when the instrument states no
 * accuracy at all); "" without a budget (a report from before them). The
 * CLI prints, the report computed. */
static void budget_txt(char *out, size_t cap, const json_t *b, double scale, const char *prefix,
		       int digits, int unrated)
{
	out[0] = '\0';
	if (!json_is_object(b))
		return;
	const char *dom = json_string_value(json_object_get(b, "dominant"));
	const char *pm = cli_sym("±", "+/-");
	if (json_is_true(json_object_get(b, "complete")))
		snprintf(out, cap, " %s %.*f %s (k = 2, %.2g %%; largest term: %s)", pm, digits,
			 num(b, "U") / scale, prefix, num(b, "U_pct"), dom ? dom : "?");
	else
		snprintf(out, cap,
			 " %s %s (budget incomplete: %s is unknown; the known terms alone give "
			 "%s %.*f %s)",
			 pm, unrated ? "unrated" : "?", dom ? dom : "a term", pm, digits,
			 num(b, "U_known") / scale, prefix);
}

/* The prefix that puts max(|v|, |u|) in [1, 1000) ("m" for 1e-3): one
 * prefix for a figure and its ±, so a 0 J value never picks nJ for a
 * mJ-sized ±. */
static double prefix_of(double v, double u, const char **p)
{
	double a = fabs(v);
	if (isfinite(u) && fabs(u) > a)
		a = fabs(u);
	if (a >= 1 || a == 0 || !isfinite(a)) {
		*p = "";
		return 1;
	}
	if (a >= 1e-3) {
		*p = "m";
		return 1e-3;
	}
	if (a >= 1e-6) {
		*p = cli_sym("µ", "u");
		return 1e-6;
	}
	*p = "n";
	return 1e-9;
}

/* One figure's repeat statistics (figures.repeat.figures.KEY), in the
 * unit the single-run summary uses. */
/* --trim-s: the Jetson method's duty-cycle figures (figures.duty_cycle or
 * figures.repeat.duty_cycle), as the report states them; nothing when the
 * report has none. */
static void print_duty(const json_t *dc, const char *label, int unrated)
{
	if (!json_is_object(dc))
		return;
	const json_t *w = json_object_get(dc, "withheld");
	if (json_is_string(w)) {
		printf("%s: trim %g s: WITHHELD, %s\n", label, num(dc, "trim_s"),
		       json_string_value(w));
		return;
	}
	const char *p;
	double sc = prefix_of(num(dc, "total_j"), NAN, &p);
	char t[96], a[96];
	if (unrated) {
		snprintf(t, sizeof t, "%.2f %sJ %s unrated", num(dc, "total_j") / sc, p,
			 cli_sym("±", "+/-"));
		snprintf(a, sizeof a, "%.2f %sJ %s unrated", num(dc, "above_idle_j") / sc, p,
			 cli_sym("±", "+/-"));
	} else {
		snprintf(t, sizeof t, "%.2f %sJ %s %.2f %sJ", num(dc, "total_j") / sc, p,
			 cli_sym("±", "+/-"), num(dc, "total_u_j") / sc, p);
		snprintf(a, sizeof a, "%.2f %sJ %s %.2f %sJ", num(dc, "above_idle_j") / sc, p,
			 cli_sym("±", "+/-"), num(dc, "above_idle_u_j") / sc, p);
	}
	printf("%s: trim %g s at each window's ends: D %.3f (%s), load %.4g W, %.4g ops/s, "
	       "energy/op %s total, %s above idle\n",
	       label, num(dc, "trim_s"), num(dc, "duty_cycle"),
	       json_string_value(json_object_get(dc, "formula")), num(dc, "load_power_w"),
	       num(dc, "achieved_ops_per_s"), t, a);
	/* The average over repeats states the sum over the repetitions and no
	 * window total of its own. */
	double nk = num(dc, "windows_without_kept_part"), nw = num(dc, "windows");
	if (nk > 0 && isfinite(nw))
		printf("%*s  %.0f of %.0f window(s) shorter than twice the trim kept nothing "
		       "(windows_without_kept_part)\n",
		       (int)strlen(label), "", nk, nw);
	else if (nk > 0)
		printf("%*s  %.0f window(s) of the repetitions shorter than twice the trim kept "
		       "nothing (windows_without_kept_part)\n",
		       (int)strlen(label), "", nk);
}

static void print_repeat_row(const json_t *per, const char *key, const char *label, int unrated)
{
	char group[32];
	const char *dot = strchr(key, '.');
	snprintf(group, sizeof group, "%.*s", (int)(dot - key), key);
	const json_t *o = json_object_get(json_object_get(per, group), dot + 1);
	const char *unit = json_string_value(json_object_get(o, "unit"));
	double n = num(o, "n");
	if (!(n >= 1)) {
		printf("  %-22s WITHHELD in every repetition\n", label);
		return;
	}
	double mean = num(o, "mean"), lo = num(o, "ci_lo"), hi = num(o, "ci_hi");
	double f = 1;
	const char *pfx = "";
	int si_unit =
	    unit && (strcmp(unit, "J") == 0 || strcmp(unit, "W") == 0 || strcmp(unit, "s") == 0);
	if (si_unit)
		f = prefix_of(mean, NAN, &pfx);
	char u[32];
	snprintf(u, sizeof u, "%s%s", pfx, unit ? unit : "");
	const char *pm = cli_sym("±", "+/-");
	printf("  %-22s %10.4g %s %-8.3g %-6s sd %-8.3g median %.4g [%.4g, %.4g] (%.1f %%)", label,
	       mean / f, pm, (hi - lo) / 2 / f, u, num(o, "sd") / f, num(o, "median") / f,
	       num(o, "median_lo") / f, num(o, "median_hi") / f, 100 * num(o, "median_coverage"));
	double ui = num(o, "u_instrument");
	if (unrated && isfinite(ui))
		printf("; instrument %s unrated", pm);
	else if (isfinite(ui))
		printf("; instrument %s %.3g %s, sd/%s %.2g", pm, ui / f, u, pm,
		       num(o, "spread_to_instrument"));
	printf("\n");
}

static void print_repeated(const json_t *r)
{
	const json_t *fig = json_object_get(r, "figures");
	int unrated = ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy");
	printf("repetitions : %.0f of %.0f complete (each: settle %g s, its own idle baseline "
	       "%g s and %.0f windows of %g s)\n",
	       num(r, "repeat.completed"), num(r, "repeat.planned"), num(r, "plan.settle_s"),
	       num(r, "plan.idle_s"), num(r, "plan.windows"), num(r, "plan.window_s"));
	const json_t *withheld = json_object_get(fig, "withheld");
	if (json_is_string(withheld)) {
		printf("figures     : repeat statistics WITHHELD, %s\n",
		       json_string_value(withheld));
	} else {
		const json_t *per = json_object_get(json_object_get(fig, "repeat"), "figures");
		printf("figures     : mean %s half-width of its 95 %% interval (Student t), "
		       "sample sd, median [distribution-free interval (coverage)]\n",
		       cli_sym("±", "+/-"));
		static const char *const rows[][2] = {
		    {"energy_per_op.above_idle_j", "energy/op above idle"},
		    {"energy_per_op.total_j", "energy/op total"},
		    {"idle.mean_power_w", "idle power"},
		    {"load.mean_power_w", "load power"},
		    {"latency.p50_s", "latency p50"},
		    {"latency.p99_s", "latency p99"},
		    {"latency.mean_s", "latency mean"},
		    {"throughput.tail_ops_per_s", "throughput tail"},
		};
		for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
			print_repeat_row(per, rows[i][0], rows[i][1], unrated);
		/* Every repetition's value of the headline figure. */
		const json_t *e =
		    json_object_get(json_object_get(per, "energy_per_op"), "above_idle_j");
		size_t k;
		const json_t *x;
		double f = 1;
		const char *pfx = "";
		f = prefix_of(num(e, "mean"), NAN, &pfx);
		printf("  energy/op per repetition (%sJ):", pfx);
		json_array_foreach(json_object_get(e, "values"), k, x)
		{
			if (json_is_number(x))
				printf(" %.4g", json_number_value(x) / f);
			else
				printf(" withheld");
		}
		printf("\n");
		print_duty(json_object_get(json_object_get(fig, "repeat"), "duty_cycle"),
			   "duty cycle (means)", unrated);
	}
	/* Latency distributions whose mean the outliers pull. */
	size_t k, skewed = 0;
	const json_t *rf;
	json_array_foreach(json_object_get(fig, "repetitions"), k, rf)
	{
		const char *m = json_string_value(
		    json_object_get(json_object_get(rf, "latency"), "mean_vs_median"));
		skewed += m && strncmp(m, "disagree", 8) == 0;
	}
	if (skewed)
		printf("latency     : in %zu of %zu repetitions the mean lies outside the median's "
		       "interval (outliers, Tukey's fences): trust the median (p50)\n",
		       skewed, json_array_size(json_object_get(fig, "repetitions")));
}

/* The summary of a run: a single run's headline figures from the typed
 * result (res), the instrument's, the rails' and a repeated run's detail
 * from the report document (r). */
static void print_summary(const json_t *r, const struct ergon_run_result *res)
{
	const struct ergon_run_headline *f = &res->figures;
	const json_t *fig = json_object_get(r, "figures");
	int unrated = ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy");
	const char *prov = str(r, "provenance", "kind");
	int replayed = strcmp(prov, "replayed") == 0;
	printf("device      : %s\n", str(r, "device", "name"));
	printf("instrument  : %s (%s)\n", str(r, "instrument", "driver"),
	       str(r, "provenance", "kind"));
	/* Not a measurement: said here, not only in the JSON. */
	if (strcmp(prov, "synthetic") == 0)
		printf("result      : %sSYNTHETIC%s - a seeded power model, not a measurement%s\n",
		       cli_on(stdout, CLI_NOTE), cli_off(stdout),
		       json_is_object(json_object_get(r, "emulation"))
			   ? "; the throttle is emulated (it cannot heat the host)"
			   : "");
	else if (replayed)
		printf("result      : %sREPLAYED%s - %s\n", cli_on(stdout, CLI_NOTE),
		       cli_off(stdout), ERGON_REPLAYED_LABEL);
	if (json_is_array(json_object_get(r, "repetitions"))) {
		print_repeated(r);
		goto tail;
	}
	if (json_is_object(json_object_get(fig, "sampler")))
		printf("sampler     : %s %.0f Hz (achieved %.1f Hz, max gap %.1f ms)\n",
		       str(r, "sampler", "kind"), num(r, "sampler.target_hz"),
		       num(fig, "sampler.achieved_hz"), num(fig, "sampler.max_gap_s") * 1e3);
	else
		printf("sampler     : %s %.0f Hz (achieved per rail below)\n",
		       str(r, "sampler", "kind"), num(r, "sampler.target_hz"));
	/* Real instruments: how often the hardware really updated; with
	 * several rails, each rail's own figures on the same line. */
	const json_t *frails = json_object_get(fig, "rails");
	size_t ri;
	const json_t *rail;
	json_array_foreach(json_object_get(json_object_get(r, "instrument_stats"), "rails"), ri,
			   rail)
	{
		const json_t *name = json_object_get(rail, "rail");
		if (name == NULL)
			name = json_object_get(rail, "domain");
		const char *nm = json_is_string(name) ? json_string_value(name) : "?";
		printf("rail        : %s read %.0f Hz, %.0f distinct updates/s", nm,
		       json_number_value(json_object_get(rail, "read_rate_hz")),
		       json_number_value(json_object_get(rail, "distinct_rate_hz")));
		size_t fi;
		const json_t *fr;
		json_array_foreach(frails, fi, fr)
		{
			const char *fn = json_string_value(json_object_get(fr, "name"));
			if (!json_is_string(name) || fn == NULL || strcmp(fn, nm) != 0)
				continue;
			printf("%s; idle %.3f W, load %.3f W",
			       json_is_true(json_object_get(fr, "total_input")) ? " (total input)"
										: "",
			       num(fr, "idle.mean_power_w"), num(fr, "load.mean_power_w"));
			if (json_is_object(json_object_get(fr, "energy_per_op"))) {
				char b[128];
				si(b, sizeof(b), num(fr, "energy_per_op.above_idle_j"),
				   num(fr, "energy_per_op.above_idle_u_j"), "J", 2, unrated);
				printf(", energy/op %s", b);
			}
		}
		printf("\n");
	}
	printf("operations  : %llu (%llu failed)\n", (unsigned long long)f->operations,
	       (unsigned long long)f->operations_failed);
	if (f->withheld) {
		printf("figures     : WITHHELD, %s\n",
		       json_string_value(json_object_get(fig, "withheld")));
	} else {
		if (json_is_object(json_object_get(fig, "idle"))) {
			const json_t *hr = json_object_get(fig, "headline_rail");
			if (json_is_string(hr))
				printf("headline    : rail %s, the module's total input (rails "
				       "are never summed)\n",
				       json_string_value(hr));
			const json_t *ib =
			    json_object_get(json_object_get(fig, "idle"), "mean_power_budget");
			char bt[256];
			if (json_is_object(ib)) {
				budget_txt(bt, sizeof(bt), ib, 1, "W", 3, unrated);
				printf("idle        : %.3f W%s\n", f->idle_mean_power_w,
				       bt);
			} else if (unrated)
				printf("idle        : %.3f W %s unrated\n",
				       f->idle_mean_power_w, cli_sym("±", "+/-"));
			else
				printf("idle        : %.3f W %s %.3f\n",
				       f->idle_mean_power_w, cli_sym("±", "+/-"),
				       f->idle_mean_power_u_w);
			const json_t *lb =
			    json_object_get(json_object_get(fig, "load"), "mean_power_budget");
			budget_txt(bt, sizeof(bt), lb, 1, "W", 3, unrated);
			printf("load        : %.3f W mean%s, %.3f W peak\n",
			       f->load_mean_power_w, bt, f->load_peak_power_w);
		} else {
			printf("headline    : WITHHELD, no selected rail is the module's total "
			       "input; per-rail figures above (never summed)\n");
		}
		char b[128];
		const json_t *ab =
		    json_object_get(json_object_get(fig, "energy_per_op"), "above_idle_budget");
		if (json_is_object(ab)) {
			/* The budget's U (k = 2) and its largest term. */
			const char *p;
			double v = f->energy_per_op_j;
			double u = json_is_true(json_object_get(ab, "complete"))
				       ? num(ab, "U")
				       : num(ab, "U_known");
			double sc = prefix_of(v, u, &p);
			char unit[8], bt[256];
			snprintf(unit, sizeof(unit), "%sJ", p);
			budget_txt(bt, sizeof(bt), ab, sc, unit, 2, unrated);
			printf("energy/op   : %.2f %s above idle%s%s\n", v / sc, unit, bt,
			       replayed ? " (" ERGON_REPLAYED_LABEL ")" : "");
		} else if (json_is_object(json_object_get(fig, "energy_per_op"))) {
			si(b, sizeof(b), f->energy_per_op_j,
			   f->energy_per_op_u_j, "J", 2, unrated);
			printf("energy/op   : %s%s\n", b,
			       replayed ? " (" ERGON_REPLAYED_LABEL ")" : "");
		} else {
			printf("energy/op   : WITHHELD (see issues in the report)\n");
		}
		print_duty(json_object_get(fig, "duty_cycle"), "duty cycle  ", unrated);
		char p50[48], p95[48], p99[48];
		si(p50, sizeof(p50), f->latency_p50_s, NAN, "s", 1, 0);
		si(p95, sizeof(p95), f->latency_p95_s, NAN, "s", 1, 0);
		si(p99, sizeof(p99), f->latency_p99_s, NAN, "s", 1, 0);
		printf("latency     : p50 %s, p95 %s, p99 %s\n", p50, p95, p99);
		/* When the outliers pull the mean away from the median, say so
		 * and which to trust (the report's words). */
		const char *mvm = json_string_value(
		    json_object_get(json_object_get(fig, "latency"), "mean_vs_median"));
		if (mvm && strncmp(mvm, "disagree", 8) == 0) {
			char mean[48];
			si(mean, sizeof(mean), f->latency_mean_s, NAN, "s", 1, 0);
			printf("              mean %s lies outside the median's %.0f %% interval; "
			       "%.0f slow and %.0f fast outliers (Tukey's fences): trust the "
			       "median (p50)\n",
			       mean, 100 * num(fig, "latency.median_ci.coverage"),
			       num(fig, "latency.outliers.high"), num(fig, "latency.outliers.low"));
		}
		double onset = f->onset_t_s;
		if (f->throttled)
			/* Whole seconds like the issue's "t=60s"; sub-10 s onsets
			 * (short test runs) keep two significant digits. */
			printf("sustained   : %sTHROTTLED%s from t=%.*fs, %.1f -> %.1f ops/s (%+.1f%% "
			       "throughput)\n",
			       cli_on(stdout, CLI_WARN), cli_off(stdout), onset >= 10 ? 0 : 2, onset,
			       f->first_ops_per_s, f->tail_ops_per_s, f->change_pct);
		else if (isfinite(f->change_pct))
			printf("sustained   : %sSTABLE%s, %.1f -> %.1f ops/s (%+.1f%% throughput)\n",
			       cli_on(stdout, CLI_GOOD), cli_off(stdout), f->first_ops_per_s,
			       f->tail_ops_per_s, f->change_pct);
		else /* no operation ended in the first window: no ratio */
			printf("sustained   : %sSTABLE%s, %.1f -> %.1f ops/s\n", cli_on(stdout, CLI_GOOD),
			       cli_off(stdout), f->first_ops_per_s, f->tail_ops_per_s);
	}
tail:;
	enum cli_style ist = res->integrity == ERGON_INTEGRITY_VALID	    ? CLI_GOOD
			     : res->integrity == ERGON_INTEGRITY_DEGRADED ? CLI_WARN
									  : CLI_BAD;
	printf("integrity   : %s%s%s\n", cli_on(stdout, ist), ergon_integrity_name(res->integrity),
	       cli_off(stdout));
	/* The issues that decided it: every error and warning (infos are in
	 * the report). */
	size_t ii;
	const json_t *is;
	json_array_foreach(json_object_get(r, "issues"), ii, is)
	{
		const char *sev = json_string_value(json_object_get(is, "severity"));
		if (sev == NULL || strcmp(sev, "info") == 0)
			continue;
		printf("  %s%-8s%s %s: %s\n", cli_on(stdout, cli_severity_style(sev)), sev,
		       cli_off(stdout), json_string_value(json_object_get(is, "code")),
		       json_string_value(json_object_get(is, "message")));
	}
	const char *id = json_string_value(json_object_get(r, "report_id"));
	printf("report_id   : %.15s%s\n", id ? id : "?", cli_sym("…", "..."));
}

/* "about N s": on a terminal always, otherwise from 10 s on. */
static void announce(void *ctx)
{
	const struct ergon_run_config *cfg = ctx;
	double one_s = cfg->session.settle_s + cfg->session.idle_s +
		       (double)cfg->session.windows * cfg->session.window_s;
	size_t reps = cfg->repeat > 1 ? cfg->repeat : 1;
	double total_s = one_s * (double)reps;
	if (!cli_progress_ok() && total_s < 10)
		return;
	if (reps > 1)
		fprintf(stderr,
			"ergon run: about %.0f s (%zu repetitions x (settle %g s + idle %g s + %zu "
			"windows x %g s)); Ctrl-C stops early and keeps what was measured\n",
			total_s, reps, cfg->session.settle_s, cfg->session.idle_s,
			cfg->session.windows, cfg->session.window_s);
	else
		fprintf(stderr,
			"ergon run: about %.0f s (settle %g s + idle %g s + %zu windows x %g s); "
			"Ctrl-C stops early and keeps what was measured\n",
			total_s, cfg->session.settle_s, cfg->session.idle_s, cfg->session.windows,
			cfg->session.window_s);
}

/* --dry-run: the plan and its uncertainty estimate, nothing measured;
 * exit 1 when the gate would refuse the run. */
static int dry_run(const struct ergon_run_config *cfg, int as_json)
{
	struct ergon_err err = {0};
	json_t *plan = NULL;
	int rc = ergon_run_plan(cfg, &plan, &err);
	if (rc)
		return ergon_cli_fail("run", &err);
	const json_t *est = json_object_get(plan, "uncertainty_estimate");
	int refused = json_is_true(json_object_get(plan, "refused"));
	if (as_json) {
		cli_print_json(plan);
	} else {
		printf("dry run     : nothing is measured\n");
		printf("instrument  : %s (%s %s)\n", str(plan, "instrument", "driver"),
		       str(plan, "instrument", "vendor"), str(plan, "instrument", "model"));
		printf("plan        : idle %g s, %.0f windows x %g s at %g Hz\n",
		       num(plan, "plan.idle_s"), num(plan, "plan.windows"),
		       num(plan, "plan.window_s"), num(plan, "plan.sample_hz"));
		printf("uncertainty : %s\n", json_string_value(json_object_get(est, "why")));
		cli_print_plan_terms(json_object_get(est, "budget"), 22);
		printf("verdict     : %s\n", json_string_value(json_object_get(est, "verdict")));
	}
	json_decref(plan);
	/* --json: a non-zero exit comes with its error line. */
	if (refused && as_json)
		return cli_report_error("run", ERGON_EXIT_MEASUREMENT, "EREFUSED",
					"the plan cannot meet --max-uncertainty-pct "
					"(the document's uncertainty_estimate says why)",
					0);
	return refused ? ERGON_EXIT_MEASUREMENT : ERGON_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct ergon_run_config cfg = {
	    .instrument_spec = "synthetic",
	    .session = {.idle_s = 10,
			.windows = 6,
			.window_s = 60,
			.sampler = ERGON_SAMPLER_THREADED,
			.sample_hz = 1000,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = ERGON_THROTTLE_THRESHOLD_DEFAULT,
	    .throttle_windows = ERGON_THROTTLE_WINDOWS_DEFAULT,
	    .ambient_c = NAN,
	    /* --out into a missing folder is refused with the fix (issue 35):
	     * a typo must not create folders. */
	    .write_flags = 0,
	};
	const char *ikv[MAX_KV + 1] = {0}, *wkv[MAX_KV + 1] = {0};
	size_t ni = 0, nw = 0;
	struct ergon_err err = {0};
	const char *sign_key = NULL;
	const char *log_path = NULL;
	int clean = 0;
	static const char *const samplers[] = {"inline", "threaded", NULL};
	static const char *const policies[] = {"continue", "abort", NULL};
	static const char *const provs[] = {"measured", "synthetic", NULL};
	const char *sampler = NULL, *policy = NULL, *prov = NULL;
	long windows = 0, tw = 0, maxemb = 0, repeat = 0;
	int force = 0, as_json = 0, dry = 0;
	struct cli_parser p;
	cli_init(&p, "run", argc, argv);
	while (cli_next(&p)) {
		const char *kv = NULL;
		double d = NAN;
		if (cli_str(&p, "--device", &cfg.device)) {
		} else if (cli_str(&p, "--instrument", &cfg.instrument_spec)) {
		} else if (cli_str(&p, "--instrument-opt", &kv)) {
			if (kv && ni >= MAX_KV)
				cli_error(&p, "too many --instrument-opt (at most %d)", MAX_KV);
			else if (kv)
				ikv[ni++] = kv;
		} else if (cli_str(&p, "--sysfs-root", &cfg.instrument_opts.sysfs_root)) {
		} else if (cli_str(&p, "--workload", &cfg.workload_spec)) {
		} else if (cli_str(&p, "--workload-opt", &kv)) {
			if (kv && nw >= MAX_KV)
				cli_error(&p, "too many --workload-opt (at most %d)", MAX_KV);
			else if (kv)
				wkv[nw++] = kv;
		} else if (cli_choice(&p, "--provenance", provs, &prov)) {
		} else if (cli_num(&p, "--settle-s", CLI_GE, 0, 1e6, &cfg.session.settle_s)) {
		} else if (cli_num(&p, "--idle-s", CLI_GT, 0, 1e6, &cfg.session.idle_s)) {
		} else if (cli_num(&p, "--window-s", CLI_GT, 0, 1e6, &cfg.session.window_s)) {
		} else if (cli_long(&p, "--windows", 1, 100000, &windows)) {
			cfg.session.windows = (size_t)windows;
		} else if (cli_num(&p, "--release-hz", CLI_GT, 0, 1e6, &cfg.session.release_hz)) {
		} else if (cli_choice(&p, "--sampler", samplers, &sampler)) {
		} else if (cli_num(&p, "--sample-hz", CLI_GT, 0, 1e6, &cfg.session.sample_hz)) {
		} else if (cli_choice(&p, "--on-failure", policies, &policy)) {
		} else if (cli_num(&p, "--invoke-timeout-s", CLI_GT, 0, 1e6, &d)) {
			cfg.session.invoke_timeout_s = d;
			cfg.workload_opts.invoke_timeout_s = d;
		} else if (cli_num(&p, "--throttle-threshold", CLI_GT, 0, 0.999999,
				   &cfg.throttle_threshold)) {
		} else if (cli_long(&p, "--throttle-windows", 1, 1000, &tw)) {
			cfg.throttle_windows = (size_t)tw;
		} else if (cli_str(&p, "--temp-file", &cfg.temp_file)) {
		} else if (cli_num(&p, "--ambient-c", CLI_GE, -100, 200, &cfg.ambient_c)) {
		} else if (cli_long(&p, "--repeat", 1, ERGON_RUN_REPEAT_MAX, &repeat)) {
			cfg.repeat = (size_t)repeat;
		} else if (cli_num(&p, "--max-uncertainty-pct", CLI_GT, 0, 1e6,
				   &cfg.max_uncertainty_pct)) {
		} else if (cli_num(&p, "--trim-s", CLI_GE, 0, 1e6, &cfg.trim_s)) {
			cfg.trim = 1;
		} else if (cli_long(&p, "--max-embedded-samples", 2, 1L << 40, &maxemb)) {
			cfg.max_embedded_samples = (size_t)maxemb;
		} else if (cli_str(&p, "--out", &cfg.out_path)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_quiet(&p)) {
		} else if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_str(&p, "--sign", &sign_key)) {
		} else if (cli_str(&p, "--log", &log_path)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--dry-run", &dry)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "--device", cfg.device) ||
	    cli_require(&p, "--workload", cfg.workload_spec) ||
	    (!dry && cli_require(&p, "--out", cfg.out_path)))
		return p.rc;
	if (force)
		cfg.write_flags |= ERGON_WRITE_FORCE;
	if (prov)
		cfg.instrument_opts.provenance_override = ergon_provenance_parse(prov);
	if (sampler)
		cfg.session.sampler =
		    strcmp(sampler, "inline") == 0 ? ERGON_SAMPLER_INLINE : ERGON_SAMPLER_THREADED;
	if (policy)
		cfg.session.failure_policy = strcmp(policy, "abort") == 0
						 ? ERGON_ON_FAILURE_ABORT
						 : ERGON_ON_FAILURE_CONTINUE;
	if (dry) {
		cfg.instrument_opts.kv = ikv;
		return dry_run(&cfg, as_json);
	}
	struct ergon_secret_key skey = {0};
	int src = ergon_cli_sign_load("run", sign_key, &skey);
	if (src)
		return src;
	cfg.instrument_opts.kv = ikv;
	cfg.workload_opts.kv = wkv;
	cfg.session.stop_flag = &stop_flag;
	cfg.workload_opts.stop = &stop_flag; /* a hanging invoke gives up on SIGINT */
	if (log_path) {
		int lrc = ergon_cli_log_to("run", log_path);
		if (lrc)
			return lrc;
	}
	if (cli_progress_ok())
		cfg.session.progress = progress;
	/* SIGHUP and SIGQUIT end the run like SIGINT (report kept); --log
	 * detaches it, so a closed terminal no longer stops it. */
	ergon_cli_signals_install(on_signal, log_path != NULL, NULL);
	ergon_cli_stale_report("run", cfg.out_path, clean);

	/* How long it will take, once every input passed its check and before
	 * the first sample (a run with the defaults is over six minutes). */
	if (!as_json && !cli_quiet_on()) {
		cfg.ready = announce;
		cfg.ready_ctx = &cfg;
	}
	json_t *rep = NULL;
	struct ergon_run_result res;
	int rc = ergon_run(&cfg, &res, &rep, &err);
	if (cfg.session.progress && reps_seen.repetition > 0 &&
	    reps_seen.repetition == cfg.repeat && rc == 0 && !stop_flag) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		repetition_done(reps_seen.repetition, cfg.repeat, &now);
	} else if (cfg.session.progress) {
		fprintf(stderr, "\r%60s\r", "");
	}
	if (rc) {
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("run", &err);
	}
	if (as_json) {
		json_t *o = json_pack(
		    "{s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "report", cfg.out_path,
		    "report_id", json_object_get(rep, "report_id"), "provenance",
		    json_object_get(rep, "provenance"), "integrity",
		    json_object_get(rep, "integrity"), "status", json_object_get(rep, "status"),
		    "device", json_object_get(rep, "device"), "figures",
		    json_object_get(rep, "figures"), "issues", json_object_get(rep, "issues"));
		cli_print_json(o);
		json_decref(o);
	} else {
		print_summary(rep, &res);
	}
	src = ergon_cli_sign_written("run", sign_key, cfg.out_path, &skey);
	int exit_code = ergon_cli_verdict_exit("run", &res.verdict, cfg.out_path);
	if (src && exit_code == ERGON_EXIT_OK)
		exit_code = src;
	json_decref(rep);
	return exit_code;
}

const struct ergon_cli_command ergon_cli_cmd_run = {
    .name = "run",
    .summary = "sustained-load measurement: idle baseline, N windows, verifiable report",
    .help = "Usage: ergon run --device NAME --workload SPEC --out FILE [options]\n\n"
	    "Phases: optional settle (no work, no samples), idle baseline (sampled, no\n"
	    "work), then N load windows of W seconds. Every invocation is timed with\n"
	    "CLOCK_MONOTONIC; power is integrated over the real sample timestamps.\n\n"
	    "  --device NAME            what is measured (recorded in the report)\n"
	    "  --instrument SPEC        synthetic (default) | replay:FILE.csv |\n"
	    "                           hwmon:RAIL[,RAIL...] | rapl[:DOMAIN] | nvml[:INDEX]\n"
	    "                           | joulescope[:SERIAL] | bridge:ARGV (docs/BRIDGE.md)\n"
	    "                           (several rails: figures per rail, the total\n"
	    "                           input rail, e.g. VDD_IN, is the headline;\n"
	    "                           rails are never summed)\n"
	    "  --sysfs-root DIR         read hwmon/powercap/thermal under DIR, not /\n"
	    "                           (also: ERGON_SYSFS_ROOT)\n"
	    "  --instrument-opt K=V     driver option (synthetic: seed, idle_w, load_w,\n"
	    "                           noise_w, throttle_s, drop, temp_start_c,\n"
	    "                           temp_rate_c_per_s, temp_max_c, accuracy_pct,\n"
	    "                           resolution_w, fail_after, work_s; replay:\n"
	    "                           accuracy_pct,\n"
	    "                           resolution_w; bridge, joulescope: accuracy_pct,\n"
	    "                           heartbeat_s, hello_timeout_s; joulescope:\n"
	    "                           stats_rate_hz)\n"
	    "  --provenance KIND        replay: the recording's kind (measured|synthetic)\n"
	    "  --workload SPEC          builtin:spin|memstream|periodic, command:ARGV,\n"
	    "                           pipe:ARGV, plugin:PATH.so,\n"
	    "                           tflite:MODEL.tflite[,input=IN.bin]\n"
	    "  --workload-opt K=V       workload option\n"
	    "  --settle-s S             wait before the idle baseline (default 0)\n"
	    "  --idle-s S               idle baseline (default 10)\n"
	    "  --windows N              load windows (default 6)\n"
	    "  --window-s S             seconds per window (default 60)\n"
	    "  --release-hz R           periodic mode: release R invocations per second\n"
	    "                           (default: saturated, back to back)\n"
	    "  --sampler inline|threaded  (default threaded)\n"
	    "  --sample-hz HZ           sampling rate (default 1000)\n"
	    "  --on-failure continue|abort  failed invocations (default continue)\n"
	    "  --invoke-timeout-s S     per-invocation bound; longer counts as failed\n"
	    "  --throttle-threshold F   throughput drop that counts (default 0.15)\n"
	    "  --throttle-windows K     consecutive windows it must last (default 2)\n"
	    "  --ambient-c C            ambient temperature, recorded in conditions\n"
	    "  --temp-file PATH         device temperature file in millidegrees C (e.g.\n"
	    "                           /sys/class/thermal/thermal_zone0/temp), read with\n"
	    "                           the samples: evidence for a throttle verdict\n"
	    "  --repeat N               repeat the whole measurement N times (settle, its own\n"
	    "                           idle baseline, load windows), kept in one report with\n"
	    "                           every figure's values, mean, sd, 95 % interval of\n"
	    "                           the mean (Student t) and median interval; ergon\n"
	    "                           compare needs 3 or more to judge a difference\n"
	    "  --trim-s S               the Jetson method's duty-cycle figures\n"
	    "                           (figures.duty_cycle): each load window less S\n"
	    "                           seconds at both ends (warm-up and window edges)\n"
	    "                           before the formulas; with --repeat, the formulas\n"
	    "                           on the averages over the repetitions\n"
	    "                           (figures.repeat.duty_cycle); 0 <= 2 S < --window-s\n"
	    "  --max-embedded-samples N decimate the embedded power series above N (per\n"
	    "                           repetition)\n"
	    "  --max-uncertainty-pct P  the gate: a figure whose expanded uncertainty\n"
	    "                           (k = 2) is above P %, or whose budget has an\n"
	    "                           unknown term, is an error (exit 1); the figure\n"
	    "                           stays in the report with its budget. A plan\n"
	    "                           that cannot meet P is refused before measuring\n"
	    "  --dry-run                show the plan and its uncertainty estimate\n"
	    "                           (what the instrument's rating and the clock\n"
	    "                           already bound); measure nothing; exit 1 when the\n"
	    "                           gate would refuse the run\n"
	    "  --out FILE               report path (checked writable before measuring)\n"
	    "  --force                  replace an existing report\n"
	    "  --sign KEY               sign the report with KEY (ergon keygen; loaded\n"
	    "                           before measuring)\n"
	    "  --json                   print the summary (report path, report_id,\n"
	    "                           provenance, integrity, figures, issues) as JSON\n"
	    "                           on stdout instead of the terminal summary\n"
	    "  --log FILE               append the summary and messages to FILE, not the\n"
	    "                           terminal, and ignore SIGHUP: a long run survives\n"
	    "                           a closed terminal or SSH session (start it with &)\n"
	    "  --clean                  remove stale .ergon-tmp-* files of killed runs\n"
	    "                           in the output folder (reported otherwise)\n"
	    "  --quiet                  no progress line (drawn only when stderr is a\n"
	    "                           terminal) and no duration announcement\n\n"
	    "Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the run early; the report\n"
	    "is written, marked interrupted. SIGPIPE is ignored.\n\n"
	    "Examples:\n"
	    "  ergon run --device demo-board --instrument synthetic --workload builtin:spin \\\n"
	    "      --idle-s 10 --windows 6 --window-s 60 --out run/report.json\n"
	    "  ergon run --device cam --workload builtin:periodic --release-hz 30 \\\n"
	    "      --sampler inline --idle-s 5 --windows 4 --window-s 15 --out cam.json\n"
	    "  ergon run --device jetson --workload command:./infer --windows 60 \\\n"
	    "      --out long.json --log long.log &\n"
	    "  ergon run --device pi5 --instrument replay:bench.csv --provenance measured \\\n"
	    "      --workload builtin:spin --idle-s 2 --windows 2 --window-s 3 --out r.json\n",
    .run = run,
    .exits =
	{[0] = "the run completed and every figure was derived (a THROTTLED run too)",
	 [1] = "interrupted, incomplete or a failed check (the report is kept and its issues say "
	       "why), or refused",
	 [3] = "the instrument, the workload or --out failed",
	 [4] = "the report was written without its headline figures (several rails, none the "
	       "module's total input: run.no_total_rail), or without the trimmed duty-cycle "
	       "figures --trim-s asked for (figures.duty_cycle says why)"},
};

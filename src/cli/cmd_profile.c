/* ergon profile: resolve the configuration, plan, run the PMU stage and the
 * power stage on a target, write summary.json and print the tables. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "cli_sign.h"
#include "config_print.h"
#include "ergon/analyze.h"
#include "ergon/config.h"
#include "ergon/issues.h"
#include "ergon/model_fw.h"
#include "ergon/model_run.h"
#include "ergon/profile.h"
#include "ergon/sim.h"
#include "ergon/verdict.h"
#include "hpx_cli.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 64
/* The sim board's fitted INA228 shunt and planned full scale
 * (sim/src/board.c SIM_SHUNT_OHMS, SIM_MAX_CURRENT_A). */
#define SIM_INA228_SHUNT "0.5"
#define SIM_INA228_MAX_A "0.02"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Apply one assignment with the command line as origin. */
static int set(struct ergon_config *cfg, const char *fmt, const char *v, struct ergon_err *err)
{
	char a[1200];
	if ((size_t)snprintf(a, sizeof a, fmt, v) >= sizeof a)
		return ergon_err_set(err, ERGON_EUSAGE, "%.60s...: value too long", v);
	return ergon_config_set(cfg, a, ERGON_CFG_CLI, err);
}

static int key_is_default(const struct ergon_config *cfg, const char *key)
{
	int i = ergon_config_key_index(key);
	return i >= 0 && cfg->origin[i] == ERGON_CFG_DEFAULT;
}

/* The an547 firmware the build made, next to this executable. */
static int default_qemu_firmware(char *dir, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(dir, cap, "%s/target/an547", exe) >= cap)
		return -1;
	return access(dir, R_OK) == 0 ? 0 : -1;
}

/* True unless board has a port whose QEMU machine is not mps3-an547. */
static int runs_an547(const char *board)
{
	json_t *port = NULL;
	struct ergon_err e = {0};
	int rc = ergon_model_fw_board_check(board, &port, &e);
	const char *run = json_string_value(json_object_get(port, "run"));
	int an547 = rc != 0 || run == NULL || strcmp(run, "mps3-an547") == 0;
	json_decref(port);
	return an547;
}

static void print_layers(const json_t *summary)
{
	const json_t *profile = json_object_get(summary, "profile");
	const json_t *layers = json_object_get(profile, "layers");
	if (!json_is_array(layers))
		return;
	/* The top layers from the typed HPX result of the same body. */
	struct ergon_hpx_run_result top;
	struct ergon_err terr = {0};
	(void)ergon_hpx_run_result_read(summary, &top, &terr);
	ergon_cli_hpx_print_top(stdout, &top);
	ergon_hpx_run_result_cleanup(&top);
	/* The whole per-layer table: cycles when the counter counts, and the
	 * layer's window time (present also where no cycle counter exists,
	 * such as QEMU). */
	const json_t *emu = json_object_get(profile, "emulated_instruction_count");
	printf("Every layer (cycles and the layer's window time):\n");
	if (json_is_object(emu))
		printf("  emulated_insns: QEMU -icount emulated instructions per layer (not "
		       "cycles; +/- %.1f): profile.emulated_instruction_count in summary.json\n",
		       json_number_value(json_object_get(emu, "resolution_instructions")));
	printf("  %-6s %-28s %14s %12s%s\n", "layer", "op", "cycles", "window_us",
	       json_is_object(emu) ? "  emulated_insns" : "");
	size_t i;
	json_t *L;
	json_array_foreach(layers, i, L)
	{
		if (i == 50) {
			printf("  ... %zu more in profile_results.csv\n",
			       json_array_size(layers) - i);
			break;
		}
		const json_t *c = json_object_get(L, "cycles");
		const json_t *w = json_object_get(json_object_get(L, "counters"), "window_us");
		char cyc[32] = "-", win[32] = "-";
		if (json_is_number(c))
			snprintf(cyc, sizeof cyc, "%.0f", json_number_value(c));
		if (json_is_number(w))
			snprintf(win, sizeof win, "%.0f", json_number_value(w));
		const json_t *ei = json_object_get(L, "pmu.emulated_instruction_count");
		char emi[32] = "";
		if (json_is_integer(ei))
			snprintf(emi, sizeof emi, "  %14lld", (long long)json_integer_value(ei));
		printf("  %-6lld %-28.28s %14s %12s%s\n",
		       (long long)json_integer_value(json_object_get(L, "id")),
		       json_string_value(json_object_get(L, "op")), cyc, win, emi);
	}
}

/* 1 when list holds an issue with issue's code and message. */
static int issue_in(const json_t *list, const json_t *issue)
{
	size_t i;
	const json_t *x;
	json_array_foreach(list, i, x)
	{
		if (json_equal(json_object_get(x, "code"), json_object_get(issue, "code")) &&
		    json_equal(json_object_get(x, "message"), json_object_get(issue, "message")))
			return 1;
	}
	return 0;
}

/* The stage an issue belongs to, by its code: pmu.*, power.* and the
 * on-board INA228's profile.ina228_* (the power stage's); NULL for any
 * other. */
static const char *issue_stage(const char *code)
{
	if (code == NULL)
		return NULL;
	if (strncmp(code, "pmu.", 4) == 0)
		return "pmu";
	if (strncmp(code, "power.", 6) == 0 || strncmp(code, "profile.ina228", 14) == 0)
		return "power";
	return NULL;
}

/* The one stage every error and warning belongs to, NULL when they belong
 * to several or to none that is known (then every stage line names the
 * verdict's reason). */
static const char *verdict_stage(const json_t *issues)
{
	const char *owner = NULL;
	size_t i;
	const json_t *is;
	json_array_foreach(issues, i, is)
	{
		const char *sev = json_string_value(json_object_get(is, "severity"));
		if (sev == NULL || strcmp(sev, "info") == 0)
			continue;
		const char *st = issue_stage(json_string_value(json_object_get(is, "code")));
		if (st == NULL || (owner && strcmp(owner, st) != 0))
			return NULL;
		owner = st;
	}
	return owner;
}

/* --layer-energy with the user's power build (FIRMWARE_DIR): the mask the
 * marker plan needs it to carry (stages.power.marker_plan). */
static void note_marker_plan(const json_t *summary)
{
	const json_t *mp = json_object_get(
	    json_object_get(json_object_get(summary, "stages"), "power"), "marker_plan");
	const char *by =
	    json_string_value(json_object_get(json_object_get(mp, "power_image"), "built_by"));
	if (by == NULL || strncmp(by, "the user", 8) != 0)
		return;
	if (json_array_size(json_object_get(mp, "left_out")) == 0) {
		cli_note(
		    "profile",
		    "the marker plan marks every layer (%lld of %lld at %.0f/s): a power build "
		    "that marks every layer (ert_power_config.marker.mask all zero, the "
		    "default) matches it",
		    (long long)json_integer_value(json_object_get(mp, "segments")),
		    (long long)json_integer_value(json_object_get(mp, "layers")),
		    json_number_value(json_object_get(mp, "rate_hz")));
		return;
	}
	char left[160] = "";
	size_t i, o = 0;
	const json_t *v;
	json_array_foreach(json_object_get(mp, "left_out"), i, v)
	{
		int w = snprintf(left + o, sizeof left - o, "%s%lld", i ? ", " : "",
				 (long long)json_integer_value(v));
		if (w < 0 || (size_t)w >= sizeof left - o) {
			snprintf(left + (o < sizeof left - 4 ? o : sizeof left - 4), 4, "...");
			break;
		}
		o += (size_t)w;
	}
	cli_note("profile",
		 "the marker plan (%lld segments of %lld layers at %.0f/s; layers left out: %s) "
		 "needs the power build to carry its mask: ert_power_config.marker.mask = %s "
		 "(ergon-target's model main: %s); stages.power.marker_plan in summary.json",
		 (long long)json_integer_value(json_object_get(mp, "segments")),
		 (long long)json_integer_value(json_object_get(mp, "layers")),
		 json_number_value(json_object_get(mp, "rate_hz")), left,
		 json_string_value(json_object_get(mp, "initializer")),
		 json_string_value(json_object_get(mp, "define")));
}

/* --layer-energy: the costliest layers (power.layer_energy.costliest). */
static void print_layer_energy(const json_t *pw, int utf8)
{
	const json_t *layers = json_object_get(pw, "layers");
	const json_t *meta = json_object_get(pw, "layer_energy");
	const json_t *order = json_object_get(meta, "costliest");
	if (!json_is_array(layers) || !json_is_array(order))
		return;
	const json_t *inf = json_object_get(meta, "inferences");
	printf("energy per layer (measured between marker edges, %lld of %lld inferences; "
	       "uJ, %s U at k = 2):\n",
	       (long long)json_integer_value(json_object_get(inf, "used")),
	       (long long)json_integer_value(json_object_get(inf, "expected")),
	       utf8 ? "±" : "+/-");
	printf("  %-7s %-28s %12s %10s %11s %8s %6s %11s\n", "layer", "op", "energy", "U",
	       "duration_us", "power_mW", "share", "estimated");
	size_t i;
	const json_t *v;
	json_array_foreach(order, i, v)
	{
		if (i >= 10)
			break;
		const json_t *e = json_array_get(layers, (size_t)json_integer_value(v));
		char idx[32];
		long long a = (long long)json_integer_value(json_object_get(e, "index"));
		long long b = (long long)json_integer_value(json_object_get(e, "last_index"));
		if (a == b)
			snprintf(idx, sizeof idx, "%lld", a);
		else
			snprintf(idx, sizeof idx, "%lld-%lld", a, b);
		const json_t *u = json_object_get(e, "energy_U_j");
		const json_t *est = json_object_get(json_object_get(e, "estimated_energy"), "energy_j");
		char us[24] = "n/a", es[24] = "n/a";
		if (json_is_number(u))
			snprintf(us, sizeof us, "%.4f", json_number_value(u) * 1e6);
		if (json_is_number(est))
			snprintf(es, sizeof es, "%.4f", json_number_value(est) * 1e6);
		const char *op = json_string_value(json_object_get(e, "op"));
		printf("  %-7s %-28.28s %12.4f %10s %11.1f %8.3f %5.1f%% %11s\n", idx, op ? op : "?",
		       json_number_value(json_object_get(e, "energy_j")) * 1e6, us,
		       json_number_value(json_object_get(e, "duration_s")) * 1e6,
		       json_number_value(json_object_get(e, "power_w")) * 1e3,
		       json_number_value(json_object_get(e, "share")) * 100, es);
	}
	size_t nu = json_array_size(json_object_get(meta, "unresolved"));
	if (nu > 0)
		printf("  %zu layer(s) not resolved alone (shorter than %g samples at %g Hz): "
		       "measured with the layer before them, named in power.layer_energy."
		       "unresolved\n",
		       nu, json_number_value(json_object_get(meta, "min_samples")),
		       json_number_value(json_object_get(meta, "sample_rate_hz")));
	printf("  estimated: the energy per inference split by the PMU stage's cycles, not "
	       "measured\n");
	/* The marker's own cost (power.layer_energy.marker_cost). */
	const json_t *mc = json_object_get(meta, "marker_cost");
	const char *mm = json_string_value(json_object_get(mc, "measured"));
	if (mm != NULL && strcmp(mm, "yes") == 0)
		printf(
		    "  marker cost: %.4f uJ %s %.4f per inference (%.4g nJ a toggle; marked %.4f "
		    "uJ, unmarked %.4f uJ per inference)\n",
		    json_number_value(json_object_get(mc, "cost_j")) * 1e6, utf8 ? "±" : "+/-",
		    json_number_value(json_object_get(mc, "cost_U_j")) * 1e6,
		    json_number_value(json_object_get(mc, "per_toggle_j")) * 1e9,
		    json_number_value(json_object_get(mc, "marked_epi_j")) * 1e6,
		    json_number_value(json_object_get(mc, "unmarked_epi_j")) * 1e6);
	else if (mm != NULL)
		printf("  marker cost: %s\n", json_string_value(json_object_get(mc, "why")));
}

/* --repeat: each power figure over the repetitions (repeat.figures.power):
 * mean +- the half-width of its 95 % interval, sd, median and its
 * interval, in the figure's unit. */
static void print_repeat(const json_t *rep)
{
	if (!json_is_object(rep))
		return;
	const json_t *w = json_object_get(rep, "withheld");
	printf("repeat     : %lld of %lld repetitions (%s)%s%s\n",
	       (long long)json_integer_value(json_object_get(rep, "completed")),
	       (long long)json_integer_value(json_object_get(rep, "planned")),
	       json_string_value(json_object_get(rep, "what")), json_is_string(w) ? ": " : "",
	       json_is_string(w) ? json_string_value(w) : "");
	const json_t *figs = json_object_get(json_object_get(rep, "figures"), "power");
	const char *k;
	const json_t *o;
	const char *pm = cli_sym("±", "+/-");
	json_object_foreach((json_t *)figs, k, o)
	{
		(void)k;
		const json_t *mean = json_object_get(o, "mean");
		if (!json_is_number(mean)) {
			printf("  %-22s withheld in every repetition\n",
			       json_string_value(json_object_get(o, "name")));
			continue;
		}
		double m = json_number_value(mean);
		double f = fabs(m) >= 1 || m == 0 ? 1
			   : fabs(m) >= 1e-3	  ? 1e-3
			   : fabs(m) >= 1e-6	  ? 1e-6
						  : 1e-9;
		const char *unit = json_string_value(json_object_get(o, "unit"));
		int si = unit && (strcmp(unit, "J") == 0 || strcmp(unit, "W") == 0 ||
				  strcmp(unit, "A") == 0);
		if (!si)
			f = 1;
		const char *pfx = f == 1 ? "" : f == 1e-3 ? "m" : f == 1e-6 ? "u" : "n";
		double lo = json_number_value(json_object_get(o, "ci_lo"));
		double hi = json_number_value(json_object_get(o, "ci_hi"));
		printf("  %-22s %.6g %s %.3g %s%s (95 %%, n = %lld), sd %.3g, median %.6g\n",
		       json_string_value(json_object_get(o, "name")), m / f, pm, (hi - lo) / 2 / f,
		       pfx, unit ? unit : "",
		       (long long)json_integer_value(json_object_get(o, "n")),
		       json_number_value(json_object_get(o, "sd")) / f,
		       json_number_value(json_object_get(o, "median")) / f);
	}
}

/* The terminal summary: stages, layers, the Power table, and what kind of
 * result this is (the virtual bench and QEMU are not measurements). The
 * verdict and the energy per inference are the typed result's (res). */
static void print_result(const json_t *summary, const struct ergon_profile_result *res)
{
	const struct ergon_verdict *v = &res->verdict;
	const json_t *prov = json_object_get(summary, "provenance");
	const char *kind = json_string_value(json_object_get(prov, "kind"));
	const char *lc =
	    json_string_value(json_object_get(json_object_get(prov, "target"), "lifecycle"));
	if (lc && strcmp(lc, "sim") == 0)
		printf("result     : SYNTHETIC - the virtual bench (simulated board and "
		       "instrument), not a measurement\n");
	else if (lc && strcmp(lc, "qemu") == 0) {
		const char *soc = json_string_value(
		    json_object_get(json_object_get(prov, "target"), "soc"));
		printf("result     : EMULATED - %s (no cycle counter, no power "
		       "rail), not a measurement of hardware\n",
		       soc ? soc : "QEMU");
	}
	else if (kind)
		printf("result     : %s\n", kind);
	const json_t *stages = json_object_get(summary, "stages");
	const char *k;
	json_t *st;
	json_object_foreach((json_t *)stages, k, st)
	{
		const char *e = json_string_value(json_object_get(st, "error"));
		const char *s = json_string_value(json_object_get(st, "status"));
		/* A stage that ran is never shown "ok" beside a result that is
		 * not valid without the check that decided it; the check is
		 * named on the line of the stage it belongs to, and another
		 * stage's line says its own checks passed. */
		const char *what = v->kind == ERGON_VERDICT_DEGRADED ? "DEGRADED" : "NOT VALID";
		enum cli_style sty = v->kind == ERGON_VERDICT_DEGRADED ? CLI_WARN : CLI_BAD;
		const char *owner = NULL;
		if (e == NULL && s && strcmp(s, "ok") == 0 && v->kind != ERGON_VERDICT_VALID)
			owner = verdict_stage(json_object_get(summary, "issues"));
		if (owner && strcmp(owner, k) != 0 && json_object_get(stages, owner))
			printf("stage %-5s: ok - its own checks passed; the result is %s%s%s by "
			       "stage %s\n",
			       k, cli_on(stdout, sty), what, cli_off(stdout), owner);
		else if (e == NULL && s && strcmp(s, "ok") == 0 && v->kind != ERGON_VERDICT_VALID)
			printf("stage %-5s: ok - it ran, but the result is %s%s%s: %s\n", k,
			       cli_on(stdout, sty), what, cli_off(stdout), v->why);
		else
			printf("stage %-5s: %s%s%s\n", k, s, e ? " - " : "", e ? e : "");
	}
	print_layers(summary);
	const json_t *corr = json_object_get(summary, "correctness");
	if (json_is_object(corr)) {
		const json_t *be = json_object_get(corr, "bit_exact");
		printf("correctness: on-target output vs host interpreter: %s\n",
		       json_is_true(be)	   ? "bit-exact"
		       : json_is_false(be) ? "MISMATCH"
					   : "not reported by the firmware");
	}
	const json_t *pw = json_object_get(summary, "power");
	if (json_is_object(pw) && json_object_get(pw, "measurement_scope") &&
	    !json_is_null(json_object_get(pw, "measurement_scope"))) {
		char *table = NULL;
		struct ergon_err te = {0};
		/* UTF-8 (µ, box rules) only on a terminal whose locale has it. */
		int utf8 = isatty(STDOUT_FILENO) && cli_utf8();
		if (ergon_power_table_render(pw, utf8, &table, &te) == 0)
			printf("%s", table);
		free(table);
		double u = res->power.energy_per_inference_u_j;
		double e = res->power.energy_per_inference_j;
		/* The budget's U (docs/UNCERTAINTY.md) when there is one, else
		 * the older stated bound. */
		const json_t *eb =
		    json_object_get(json_object_get(pw, "uncertainty"), "energy_per_inference_j");
		int have_budget = json_is_object(eb);
		int complete = json_is_true(json_object_get(eb, "complete"));
		if (have_budget)
			u = complete ? json_number_value(json_object_get(eb, "U")) : NAN;
		if (have_budget && !complete) {
			const char *dom = json_string_value(json_object_get(eb, "dominant"));
			printf("energy per inference uncertainty: %s ? (budget incomplete: %s is "
			       "unknown)\n",
			       utf8 ? "±" : "+/-", dom ? dom : "a term");
		} else if (!isnan(u)) {
			/* The unit the table shows energy/inference in (the table
			 * picks mJ/uJ/nJ from the value), so the two read together. */
			double ref = !isnan(e) ? fabs(e) : fabs(u);
			double f = ref >= 1 ? 1 : ref >= 1e-3 ? 1e-3 : ref >= 1e-6 ? 1e-6 : 1e-9;
			const char *unit = f == 1      ? "J"
					   : f == 1e-3 ? "mJ"
					   : f == 1e-6 ? (utf8 ? "µJ" : "uJ")
						       : "nJ";
			if (have_budget) {
				const char *dom =
				    json_string_value(json_object_get(eb, "dominant"));
				printf("energy per inference uncertainty: %s %.3g %s (k = 2, %.3g "
				       "%%; largest term: %s)\n",
				       utf8 ? "±" : "+/-", u / f, unit,
				       json_number_value(json_object_get(eb, "U_pct")),
				       dom ? dom : "?");
			} else {
				printf("energy per inference uncertainty: %s %.3g %s (%s)\n",
				       utf8 ? "±" : "+/-", u / f, unit,
				       json_string_value(json_object_get(pw, "uncertainty_basis")));
			}
		}
		print_layer_energy(pw, utf8);
		print_repeat(json_object_get(summary, "repeat"));
		/* Internal mode: the calibration the firmware's record names,
		 * verbatim (power.ina228.calibration_id built into it). */
		const json_t *ods = json_object_get(pw, "on_device_summary");
		if (json_is_object(ods)) {
			const char *cal = json_string_value(json_object_get(ods, "calibration_id"));
			printf("calibration: %s\n",
			       cal ? cal : "none stated in the firmware's record");
		}
	}
}

/* --dry-run: can this meter resolve it (plan.power.uncertainty_estimate)? */
static void print_estimate(const json_t *est)
{
	if (!json_is_object(est))
		return;
	printf("uncertainty: %s\n", json_string_value(json_object_get(est, "why")));
	const json_t *ia = json_object_get(est, "expected_current_a");
	const json_t *ws = json_object_get(est, "window_s");
	char a[32] = "unknown", w[32] = "unknown";
	if (json_is_number(ia))
		snprintf(a, sizeof a, "%.6g A", json_number_value(ia));
	if (json_is_number(ws))
		snprintf(w, sizeof w, "%.6g s", json_number_value(ws));
	printf("  expected current: %s (%s)\n", a,
	       json_string_value(json_object_get(est, "expected_current_from")));
	printf("  window          : %s (%s)\n", w,
	       json_string_value(json_object_get(est, "window_from")));
	printf("  meter           : %s\n", json_string_value(json_object_get(est, "rating_from")));
	cli_print_plan_terms(json_object_get(est, "budget"), 18);
	printf("verdict    : %s\n", json_string_value(json_object_get(est, "verdict")));
}

/* "ergon profile: [1/3 pmu] pass 2/3 cache   4.1 s" on a terminal. */
static void stage_progress(void *ctx, const struct ergon_profile_progress *p)
{
	const struct timespec *t0 = ctx;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double el = (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
	char what[96];
	/* The plan's count, unless the stream holds more passes than planned
	 * (a firmware with its own presets). */
	if (strcmp(p->step, "pass") == 0 && p->passes > 0 && p->pass <= p->passes)
		snprintf(what, sizeof what, "pass %u/%u %s", p->pass, p->passes,
			 p->detail ? p->detail : "");
	else if (strcmp(p->step, "pass") == 0)
		snprintf(what, sizeof what, "pass %u %s", p->pass, p->detail ? p->detail : "");
	else
		snprintf(what, sizeof what, "%s %s", p->step, p->detail ? p->detail : "");
	cli_progress_line("ergon profile: [%u/%u %s] %s  %.1f s", p->stage_no, p->stages, p->stage,
			  what, el);
}

static int run(int argc, char **argv)
{
	const char *fwdir = NULL, *file = NULL, *board = NULL, *scenario = NULL, *out = NULL;
	const char *sign_key = NULL, *transport = NULL;
	const char *sets[MAX_SETS];
	size_t nsets = 0;
	int power = 0, dry = 0, layer_energy = 0;
	unsigned flags = 0, rtt_port = 0;
	int force = 0, as_json = 0, no_cache = 0;
	long port = 0, repeat = 0;
	double max_u_pct = 0;
	struct cli_parser p;
	cli_init(&p, "profile", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		const char *set_kv = NULL, *power_serial = NULL, *alias = NULL;
		if (cli_flag(&p, "--power", &power)) {
		} else if (cli_flag(&p, "--dry-run", &dry)) {
		} else if (cli_flag(&p, "--layer-energy", &layer_energy)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--no-cache", &no_cache)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_quiet(&p)) {
		} else if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_str(&p, "--board", &board)) {
		} else if (cli_str(&p, "--config", &file)) {
		} else if (cli_str(&p, "--sim-scenario", &scenario)) {
		} else if (cli_outdir(&p, "--out", &out)) {
		} else if (cli_str(&p, "--sign", &sign_key)) {
		} else if (cli_str(&p, "--transport", &transport)) {
			/* Same as --set target.transport=T (rtt or uart on QEMU). */
		} else if (cli_long(&p, "--rtt-port", 1, 65535, &port)) {
			rtt_port = (unsigned)port;
		} else if (cli_str(&p, "--power-serial", &power_serial)) {
			/* Same as --set power.serial=S (the live instrument's serial). */
			static char power_serial_kv[96];
			if (power_serial && nsets == MAX_SETS)
				cli_error(&p, "more than %d --set options", MAX_SETS);
			else if (power_serial) {
				snprintf(power_serial_kv, sizeof power_serial_kv, "power.serial=%s",
					 power_serial);
				sets[nsets++] = power_serial_kv;
			}
		} else if (cli_str(&p, "--power-firmware", &alias)) {
			/* The method's flag: --set power.firmware=dedicated|shared. */
			static char fw_kv[96];
			if (alias && nsets == MAX_SETS)
				cli_error(&p, "more than %d --set options", MAX_SETS);
			else if (alias) {
				snprintf(fw_kv, sizeof fw_kv, "power.firmware=%.64s", alias);
				sets[nsets++] = fw_kv;
			}
		} else if (cli_str(&p, "--jlink-serial", &alias)) {
			/* The method's flag: --set target.jlink_serial=SN. */
			static char jl_kv[160];
			if (alias && nsets == MAX_SETS)
				cli_error(&p, "more than %d --set options", MAX_SETS);
			else if (alias) {
				snprintf(jl_kv, sizeof jl_kv, "target.jlink_serial=%.128s", alias);
				sets[nsets++] = jl_kv;
			}
		} else if (cli_num(&p, "--max-uncertainty-pct", CLI_GT, 0, 1e6, &max_u_pct)) {
			/* Same as --set power.max_uncertainty_pct=P (run's and
			 * analyze's flag, the same gate). */
			static char max_u_kv[96];
			if (nsets == MAX_SETS)
				cli_error(&p, "more than %d --set options", MAX_SETS);
			else {
				snprintf(max_u_kv, sizeof max_u_kv,
					 "power.max_uncertainty_pct=%.17g", max_u_pct);
				sets[nsets++] = max_u_kv;
			}
		} else if (cli_long(&p, "--repeat", 1, ERGON_PROFILE_REPEAT_MAX, &repeat)) {
		} else if (cli_str(&p, "--set", &set_kv)) {
			if (set_kv && nsets == MAX_SETS)
				cli_error(&p, "more than %d --set options", MAX_SETS);
			else if (set_kv)
				sets[nsets++] = set_kv;
		} else if (cli_positional(&p, &fwdir)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	if (force)
		flags |= 1u; /* ERGON_WRITE_FORCE */
	ergon_cli_stale_report_dir("profile", out, clean);
	if (fwdir)
		fwdir = cli_dir((char *)fwdir); /* argv: "fw/" names files fw/x, not fw//x */
	struct ergon_config cfg;
	struct ergon_err err = {0};
	struct ergon_profile_firmware fw;
	json_t *summary = NULL;
	json_t *model_json = NULL;
	int code = ERGON_EXIT_OK;
	int rc = ergon_config_init(&cfg);
	if (rc) {
		ergon_err_set(&err, rc, "cannot initialise the configuration");
		goto fail;
	}
	if (file && (rc = ergon_config_load_file(&cfg, file, &err)) != 0)
		goto fail;
	/* With neither a FIRMWARE_DIR nor a board anywhere, the built-in
	 * default is the virtual bench. */
	if (!board && !fwdir && key_is_default(&cfg, "target.board")) {
		if ((rc = ergon_config_set(&cfg, "target.board=sim", ERGON_CFG_DEFAULT, &err)) != 0)
			goto fail;
		int bi = ergon_config_key_index("target.board");
		snprintf(cfg.where[bi], sizeof cfg.where[bi],
			 "ergon profile's built-in default (no FIRMWARE_DIR, no --board)");
	}
	if (board && (rc = set(&cfg, "target.board=%s", board, &err)) != 0)
		goto fail;
	if (transport && (rc = set(&cfg, "target.transport=%s", transport, &err)) != 0)
		goto fail;
	if (power && (rc = set(&cfg, "power.enabled=%s", "true", &err)) != 0)
		goto fail;
	if (out && (rc = set(&cfg, "output.dir=%s", out, &err)) != 0)
		goto fail;
	for (size_t i = 0; i < nsets; i++)
		if ((rc = ergon_config_set(&cfg, sets[i], ERGON_CFG_CLI, &err)) != 0)
			goto fail;
	if (scenario) {
		if (strcmp(cfg.target.board, "sim") != 0) {
			rc = ergon_err_set(&err, ERGON_EUSAGE,
					   "--sim-scenario %s needs --board sim (the board is %s)",
					   scenario, cfg.target.board);
			goto fail;
		}
		int flow = 0;
		rc = ergon_profile_sim_flow_check(scenario, &flow, &err);
		if (rc != 0)
			goto fail;
		/* A power scenario runs the power stage; an INA228 one in
		 * internal mode with the sim board's fitted shunt. */
		if ((flow != ERGON_SIM_FLOW_PROFILE || ergon_profile_sim_power_checked(scenario)) &&
		    !cfg.power.enabled)
			rc = set(&cfg, "power.enabled=%s", "true", &err);
		if (!rc && flow == ERGON_SIM_FLOW_POWER_INA228) {
			if (key_is_default(&cfg, "power.mode"))
				rc = set(&cfg, "power.mode=%s", "internal", &err);
			if (!rc && key_is_default(&cfg, "power.driver"))
				rc = set(&cfg, "power.driver=%s", "ina228", &err);
		}
		/* The INA228 scenarios, and an external one whose firmware
		 * reads the chip too: the sim board's fitted shunt. */
		if (!rc && (flow == ERGON_SIM_FLOW_POWER_INA228 ||
			    ergon_profile_sim_ina228_bystander(scenario))) {
			if (!rc && key_is_default(&cfg, "power.ina228.shunt_ohms"))
				rc =
				    set(&cfg, "power.ina228.shunt_ohms=%s", SIM_INA228_SHUNT, &err);
			if (!rc && key_is_default(&cfg, "power.ina228.max_current_a"))
				rc = set(&cfg, "power.ina228.max_current_a=%s", SIM_INA228_MAX_A,
					 &err);
		}
		if (rc)
			goto fail;
	}
	if ((rc = ergon_config_resolve(&cfg, &err)) != 0)
		goto fail;
	int sim = cfg.target.lifecycle == ERGON_LIFECYCLE_SIM;
	char qdir[PATH_MAX];
	/* The prebuilt images next to ergon are the an547's: for a board
	 * whose QEMU machine is the an547 (its port's run), or that has no
	 * port of its own (another board run on the qemu lifecycle). */
	if (!sim && !fwdir && cfg.target.lifecycle == ERGON_LIFECYCLE_QEMU &&
	    runs_an547(cfg.board->name) && default_qemu_firmware(qdir, sizeof qdir) == 0)
		fwdir = qdir;
	if (!sim && !fwdir) {
		rc =
		    ergon_err_set(&err, ERGON_EUSAGE,
				  "board %s runs real firmware: give FIRMWARE_DIR (the folder with "
				  "the profile and power builds), or use --board sim",
				  cfg.board->name);
		goto fail;
	}
	struct stat sst;
	if (sim && fwdir && stat(fwdir, &sst) == 0 && S_ISREG(sst.st_mode)) {
		/* ergon profile MODEL.tflite --board sim: the virtual firmware
		 * runs the model (no firmware is built). */
		rc = ergon_model_fw_prepare_profile(fwdir, cfg.board->name, NULL, 0, 0u, &model_json, &err);
		if (rc)
			goto fail;
		fwdir = NULL;
	}
	if (repeat > 1 && !cfg.power.enabled) {
		rc =
		    ergon_err_set(&err, ERGON_EUSAGE,
				  "--repeat %ld repeats the power stage (the PMU stage runs once): "
				  "add --power",
				  repeat);
		goto fail;
	}
	if (layer_energy && !power && !scenario) {
		rc = ergon_err_set(&err, ERGON_EUSAGE,
				   "--layer-energy measures in the power stage: add --power");
		goto fail;
	}
	if (sim && fwdir) {
		rc = ergon_err_set(&err, ERGON_EUSAGE,
				   "FIRMWARE_DIR %s: the virtual bench runs its own firmware; drop "
				   "the folder or pick a real board with --board",
				   fwdir);
		goto fail;
	}
	/* A .tflite model instead of a firmware folder: build the firmware
	 * with it embedded (a board with a port), then profile that. */
	struct stat mst;
	char mdir[PATH_MAX];
	/* The images are ergon's build of the model: the power stage may
	 * build the power image again (the marker plan's mask). */
	struct ergon_profile_fw_build fw_build = {0};
	const char *model_path = NULL;
	char port_transport[8] = "";
	if (!sim && fwdir && stat(fwdir, &mst) == 0 && S_ISREG(mst.st_mode)) {
		model_path = fwdir;
		/* A board without a port in ergon-target is refused, with
		 * how to write one. */
		json_t *port = NULL;
		if ((rc = ergon_model_fw_board_check(cfg.board->name, &port, &err)) != 0)
			goto fail;
		/* A port that never ran on its board says so before anything. */
		const char *vs = json_string_value(
		    json_object_get(json_object_get(port, "validation"), "status"));
		if (vs && strcmp(vs, "unvalidated") == 0)
			cli_note("profile",
				 "warning: the port %s of board %s is unvalidated: %s; its "
				 "results are a hypothesis until the port has run on the board",
				 json_string_value(json_object_get(port, "port")), cfg.board->name,
				 json_string_value(json_object_get(
				     json_object_get(port, "validation"), "note")));
		snprintf(port_transport, sizeof port_transport, "%s",
			 json_string_value(json_object_get(port, "transport")));
		char port_name[64];
		snprintf(port_name, sizeof port_name, "%s",
			 json_string_value(json_object_get(port, "port")));
		int rtt_build = json_is_true(json_object_get(port, "rtt_build"));
		json_decref(port);
		if (cfg.target.transport == ERGON_TRANSPORT_RTT && !rtt_build) {
			/* The model build takes the port's hal.transport, or RTT
			 * through its descriptor's rtt_defines; this port has
			 * neither. */
			int ti = ergon_config_key_index("target.transport");
			rc = ergon_err_set(
			    &err, ERGON_EUSAGE,
			    "%s: target.transport rtt (%s) cannot act with a .tflite model on "
			    "board %s: ergon builds the model's firmware from port %s for its "
			    "hal.transport, %s, only (the descriptor has no rtt_defines); set "
			    "target.transport: uart (drop --transport rtt), or build the model's "
			    "profile firmware with RTT yourself and give its folder, holding a "
			    "*profile*rtt* image, as FIRMWARE_DIR",
			    model_path,
			    ti >= 0 && cfg.where[ti][0] ? cfg.where[ti]
							: ergon_config_origin_name(cfg.origin[ti]),
			    cfg.board->name, port_name, port_transport);
			goto fail;
		}
		snprintf(mdir, sizeof mdir, "%s/firmware", cfg.output.dir);
		/* The model first: a file that is not a model the interpreter
		 * runs is refused before anything is built or announced. */
		struct ergon_model_info mi;
		if ((rc = ergon_model_info_load(model_path, &mi, &err)) != 0)
			goto fail;
		ergon_model_info_release(&mi);
		fw_build = (struct ergon_profile_fw_build){
		    .model_path = model_path,
		    .board = cfg.board->name,
		    .dir = mdir,
		    .flags = (no_cache ? ERGON_MODEL_FW_NO_CACHE : 0u) |
			     (cfg.profiling.extreme_mode ? ERGON_MODEL_FW_EXTREME_MODE : 0u) |
			     (cfg.profiling.force_shared_sram ? ERGON_MODEL_FW_SHARED_SRAM : 0u) |
			     (cfg.target.transport == ERGON_TRANSPORT_RTT ? ERGON_MODEL_FW_RTT : 0u)};
		if (!dry) {
			cli_note("profile", "building the %s firmware for %s in %s",
				 cfg.board->name, model_path, mdir);
			cli_ticker_start("ergon profile: building the firmware");
			rc = ergon_model_fw_prepare_profile(
			    model_path, cfg.board->name, mdir,
			    cfg.power.enabled && cfg.power.firmware == ERGON_FIRMWARE_DEDICATED,
			    fw_build.flags, &model_json, &err);
			cli_ticker_stop();
			if (rc)
				goto fail;
		} else if ((rc = ergon_model_fw_prepare_profile(model_path, cfg.board->name, NULL,
								0, 0u, &model_json, &err)) != 0) {
			/* The dry run's plan: the model, nothing built. */
			goto fail;
		}
		fwdir = mdir;
	}
	if (!sim && !(dry && model_path)) {
		int need_power =
		    cfg.power.enabled && cfg.power.firmware == ERGON_FIRMWARE_DEDICATED;
		/* ergon's own build: the images it just made, not a search of
		 * OUT/firmware, which may hold an earlier run's (--force). */
		rc = model_path
			 ? ergon_profile_firmware_built(model_json, need_power, &fw, &err)
			 : ergon_profile_firmware_find_link(
			       fwdir, need_power, ergon_profile_firmware_link(&cfg), &fw, &err);
		if (rc != 0)
			goto fail;
	}
	if (dry) {
		json_t *plan = NULL;
		if ((rc = ergon_profile_plan_model(&cfg, model_json, &plan, &err)) != 0)
			goto fail;
		const json_t *est =
		    json_object_get(json_object_get(plan, "power"), "uncertainty_estimate");
		int refused = json_is_object(est) &&
			      strcmp(json_string_value(json_object_get(est, "verdict")),
				     "cannot meet the limit") == 0;
		if (as_json) {
			json_t *doc = json_pack("{s:b,s:o,s:O}", "dry_run", 1, "config",
						ergon_config_to_json(&cfg), "plan", plan);
			cli_print_json(doc);
			json_decref(doc);
		} else {
			ergon_cli_config_print(stdout, &cfg);
			char *s = json_dumps(plan, JSON_INDENT(2));
			printf("plan:\n%s\n", s ? s : "(out of memory)");
			free(s);
			if (model_path)
				printf(
				    "firmware: built from %s into %s when the run starts%s\n",
				    model_path, mdir,
				    layer_energy && cfg.power.firmware == ERGON_FIRMWARE_DEDICATED
					? "; with --layer-energy and a live meter, the power "
					  "build again after the PMU stage, carrying the marker "
					  "plan's mask (the PMU stage's layers at the meter's rate)"
					: "");
			else if (!sim)
				printf("firmware: profile %s; power %s\n", fw.profile,
				       fw.power[0] ? fw.power : "(not needed)");
			print_estimate(est);
		}
		json_decref(plan);
		json_decref(model_json);
		ergon_cli_config_print_issues(stderr, "profile", &cfg);
		ergon_config_cleanup(&cfg);
		/* --json: a non-zero exit comes with its error line. */
		if (refused && as_json)
			return cli_report_error("profile", ERGON_EXIT_MEASUREMENT, "EREFUSED",
						"the plan cannot meet power.max_uncertainty_pct "
						"(plan.power.uncertainty_estimate says why)",
						0);
		return refused ? ERGON_EXIT_MEASUREMENT : ERGON_EXIT_OK;
	}
	ergon_cli_config_print_issues(stderr, "profile", &cfg);
	struct ergon_secret_key skey = {0};
	if ((code = ergon_cli_sign_load("profile", sign_key, &skey)) != 0) {
		ergon_config_cleanup(&cfg);
		return code;
	}

	/* Ctrl-C: no SA_RESTART, so a blocked read returns and the stage ends
	 * with what it has; the pipeline marks it interrupted. */
	struct ergon_cli_signals old_sig; /* also SIGHUP, SIGQUIT; SIGPIPE ignored */
	ergon_cli_signals_install(on_signal, 0, &old_sig);
	struct ergon_profile_opts po = {.cfg = &cfg,
					.fw = sim ? NULL : &fw,
					.sim_scenario = scenario,
					.out_dir = cfg.output.dir,
					.write_flags = flags,
					.rtt_port = rtt_port,
					.interrupted = &interrupted,
					.model = model_json,
					.layer_energy = layer_energy,
					.fw_build = model_path ? &fw_build : NULL,
					.repeat = repeat > 1 ? (unsigned)repeat : 1u};
	/* On a terminal, every step of every stage while it runs (one line,
	 * redrawn, cleared when the stages end). */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (cli_progress_ok() && !as_json) {
		po.progress = stage_progress;
		po.progress_ctx = &t0;
	}
	struct ergon_profile_result res;
	rc = ergon_profile_run(&po, &res, &summary, &err);
	if (po.progress)
		cli_progress_clear();
	ergon_cli_signals_restore(&old_sig);
	if (rc && summary == NULL) {
		ergon_secret_key_wipe(&skey);
		goto fail;
	}

	/* A summary came back: the typed result is filled (its verdict decides
	 * the exit code); the document is what --json and the tables print. */
	const struct ergon_verdict verdict = res.verdict;
	if (as_json)
		cli_print_json(summary);
	else
		print_result(summary, &res);
	size_t i;
	json_t *issue;
	if (!as_json)
		note_marker_plan(summary);
	json_array_foreach(json_object_get(summary, "issues"), i, issue)
	{
		/* The configuration's own issues were printed before the run
		 * (the summary repeats them): once is enough. */
		if (issue_in(cfg.issues, issue))
			continue;
		/* cli_issue: nothing with --json (the document holds them). */
		cli_issue("profile", json_string_value(json_object_get(issue, "severity")),
			  json_string_value(json_object_get(issue, "code")),
			  json_string_value(json_object_get(issue, "message")));
	}
	if (!as_json)
		printf("%s: %s/summary.json (integrity %s%s)%s%s\n",
		       verdict.kind == ERGON_VERDICT_VALID	? "valid"
		       : verdict.kind == ERGON_VERDICT_DEGRADED ? "DEGRADED"
								: "NOT VALID",
		       cfg.output.dir, ergon_integrity_name(res.integrity),
		       res.interrupted ? ", interrupted" : "", verdict.why[0] ? ": " : "",
		       verdict.why);
	char spath[PATH_MAX + 16];
	snprintf(spath, sizeof spath, "%s/summary.json", cfg.output.dir);
	code = ergon_cli_verdict_exit("profile", &verdict, spath);
	int src = ergon_cli_sign_written("profile", sign_key, spath, &skey);
	if (src && code == ERGON_EXIT_OK)
		code = src;
	json_decref(summary);
	json_decref(model_json);
	ergon_config_cleanup(&cfg);
	return code;
fail:
	json_decref(model_json);
	ergon_config_cleanup(&cfg);
	return ergon_cli_fail("profile", &err);
}

const struct ergon_cli_command ergon_cli_cmd_profile = {
    .name = "profile",
    .summary = "profile a target: per-layer PMU counters, then a gated power measurement",
    .help = "Usage: ergon profile [FIRMWARE_DIR] [--board B] [--config ergon.yml]\n"
	    "         [--set KEY=VALUE ...] [--power] [--sim-scenario NAME] [--dry-run]\n"
	    "         [--out DIR] [--force] [--clean] [--rtt-port PORT] [--json] [--sign KEY]\n"
	    "         [--power-serial SERIAL] [--transport rtt|uart] [--no-cache] [--quiet]\n"
	    "         [--layer-energy] [--max-uncertainty-pct P] [--repeat N]\n"
	    "         [--power-firmware dedicated|shared] [--jlink-serial SN]\n"
	    "       ergon profile MODEL.tflite --board sim [--power [--layer-energy]] ...\n\n"
	    "Resolves the configuration (defaults < board < INA228 preset < --config file <\n"
	    "command line; then the rules: docs/internals/config.md), plans the counter\n"
	    "passes, window, lock-step and power duration, then runs:\n"
	    "  PMU stage    flash the profile firmware, reset, capture the HPX stream to its\n"
	    "               end sentinel (raw log DIR/pmu/capture.log), parse\n"
	    "  power stage  (--power or power.enabled) flash the dedicated power firmware\n"
	    "               (or keep the shared one: power.firmware: shared, recorded as\n"
	    "               transport contamination), gated capture with the arm -> reset ->\n"
	    "               READY -> GO handshake, the terminal record, gated analysis;\n"
	    "               on a real board in external mode the live instrument is\n"
	    "               power.driver joulescope (power.serial or --power-serial),\n"
	    "               or ppk2 gate-only (a PPK2 cannot raise GO: lock-step is off,\n"
	    "               and a forced power.lockstep: true is refused)\n"
	    "and writes DIR/summary.json, DIR/profile_results.csv and, with\n"
	    "output.detailed: true, DIR/detailed/. A failed stage keeps its artifacts,\n"
	    "marked; Ctrl-C marks them interrupted.\n\n"
	    "FIRMWARE_DIR holds the builds: a file named *profile* and one named *power*\n"
	    "(.elf, .axf, .bin or .hex). Without FIRMWARE_DIR and --board the virtual bench\n"
	    "(--board sim) runs; --board qemu-an547 uses the an547 builds next to ergon.\n"
	    "A MODEL.tflite instead of FIRMWARE_DIR builds the board's firmware (the\n"
	    "profile build, and the power build with --power) with the model into\n"
	    "DIR/firmware, for a board with a port in ergon-target (qemu-an547,\n"
	    "qemu-an505; `ergon config boards`; docs/internals/ports.md; a board\n"
	    "without one is refused); objects built before with the same\n"
	    "toolchain, flags and sources (and model) come from the firmware object cache\n"
	    "($XDG_CACHE_HOME/ergon, else ~/.cache/ergon; docs/internals/fw_cache.md);\n"
	    "--no-cache compiles every object and neither reads nor writes the cache.\n"
	    "--sim-scenario NAME picks a virtual-bench fault scenario (a power scenario\n"
	    "turns the power stage on). --dry-run prints every effective value, where it\n"
	    "came from, and the plan, and runs nothing; with the power stage also the\n"
	    "uncertainty estimate (can this meter resolve it?), exit 1 when the gate\n"
	    "cannot be met; with --json one document {config, plan}. Lifecycles: sim, qemu, jlink\n"
	    "(JLinkExe), openocd, pyocd, bmp; the probe drivers are not yet run on\n"
	    "hardware (tested against fakes).\n"
	    "--transport rtt|uart (target.transport): on qemu-an547, rtt runs the RTT build\n"
	    "(*profile*rtt*) halted behind QEMU's gdbstub on a free loopback port and reads\n"
	    "the stream through it; target.probe: gdb://HOST:PORT reads RTT through that\n"
	    "GDB server instead (OpenOCD, pyOCD, JLinkGDBServer); target.probe:\n"
	    "pyocd[:UID] or bmp:/dev/ttyACM0 flashes, resets and reads RTT through pyOCD\n"
	    "or a Black Magic Probe. With a .tflite model, rtt builds the model's profile\n"
	    "firmware with its port's RTT switch (descriptor rtt_defines: qemu-an547); a\n"
	    "port without one (qemu-an505) refuses it.\n"
	    "--layer-energy (with --power; the virtual bench, or a real board with a live\n"
	    "PPK2 or a Joulescope with power.lockstep: false, its packets at\n"
	    "power.stats_rate_hz as samples: markers on power.marker_input_index, D1 or\n"
	    "INPUT1 by default) marks the layer\n"
	    "boundaries on a second digital line (a marker plan from the PMU stage's\n"
	    "layers and the meter's rate) and measures each layer's energy between the\n"
	    "marker edges: power.layers[] in summary.json, DIR/detailed/layer_energy.csv\n"
	    "and a table of the costliest layers (docs/METHOD.md, Energy per layer).\n"
	    "MODEL.tflite with --board sim runs that model on the virtual bench.\n"
	    "--repeat N (with --power; 1..100): the power stage's whole capture N times,\n"
	    "the PMU stage once; summary.json keeps each repetition (repetitions[], the\n"
	    "first is \"power\") and each power figure's mean, sd, 95 % interval (Student\n"
	    "t) and median with its interval (repeat.figures.power); ergon compare calls\n"
	    "a difference only with 3 or more repetitions a side (docs/COMPARE.md).\n"
	    "--max-uncertainty-pct P (= --set power.max_uncertainty_pct=P): the gate on\n"
	    "the power stage's budgeted figures (energy, charge, mean power, energy per\n"
	    "inference; docs/UNCERTAINTY.md): one whose expanded uncertainty (k = 2) is\n"
	    "above P %, or whose budget is incomplete, raises\n"
	    "power.uncertainty_above_limit (an error, exit 1); the figure stays.\n"
	    "--power-firmware dedicated|shared (= --set power.firmware=...) and\n"
	    "--jlink-serial SN (= --set target.jlink_serial=SN) are the method's flags.\n"
	    "--json prints the summary on stdout instead of the tables. --sign KEY (ergon\n"
	    "keygen) signs DIR/summary.json; the key is loaded before anything runs.\n"
	    "On a terminal a progress line shows each stage's steps (firmware, start,\n"
	    "capture, each PMU pass k/N, analysis, writing); --quiet turns it off.\n\n"
	    "Examples:\n"
	    "  ergon profile --board sim --power\n"
	    "  ergon profile --board sim --sim-scenario gate_glitches --out glitch\n"
	    "  ergon profile --board qemu-an547\n"
	    "  ergon profile --board qemu-an547 --transport rtt\n"
	    "  ergon profile build/fw --board apollo510_evb --power --config ergon.yml\n"
	    "  ergon profile --board sim --power --dry-run --set power.lockstep=false\n"
	    "  ergon profile kws_ref_model.tflite --board sim --power --layer-energy\n",
    .run = run,
    .exits =
	{[0] = "every stage ran and every figure was published",
	 [1] = "a stage failed, a check failed (an error issue, named on the NOT VALID line) or "
	       "Ctrl-C (what was captured is kept), or refused",
	 [2] = "usage, or configuration that cannot act",
	 [3] = "the board, the probe or the instrument",
	 [4] = "summary.json was written but the power stage's per-inference figures were withheld "
	       "(e.g. power.observation_degraded: no gate window)"},
};

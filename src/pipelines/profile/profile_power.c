/* The power stage of `ergon profile`: program the power firmware (or keep
 * the shared build and record its transport contamination), start the
 * instrument stream and the gate observation, reset, READY on the state
 * input, GO, the gated window, the terminal record, then the gated-window
 * analysis (ergon_power_section). Internal mode: the target's INA228
 * record is the measurement (on_device_summary). */
#include "ergon/analyze.h"
#include "ergon/ert_ina228_math.h"
#include "ergon/fileio.h"
#include "ergon/gated.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/jls_writer.h"
#include "ergon/layer_energy.h"
#include "ergon/model_fw.h"
#include "ergon/session.h"
#include "ergon/sim.h"
#include "ergon/wire.h"
#include "pipelines/common/common.h"
#include "profile_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The method's glitch floor: a gate pulse shorter than 1 s is not a
 * window. `ergon profile --board sim` keeps it too (its auto windows are
 * 5 s), so a short fixed window fails there as on a bench; only the
 * scenarios' own 20 ms windows (src/pipelines/profile/sim_host.c) say otherwise. */
#define BENCH_MIN_WINDOW_S 1.0
/* A fixed gated window this short cannot pass the gated engine's 1 s floor
 * on a real bench. */
#define FIXED_WINDOW_WARN_S 1.0

static void refuse(struct prof_run *r, json_t *stage, const char *code, const char *why,
		   struct prof_power *out)
{
	ergon_issue_add(r->issues, code, NULL, "%s", why);
	json_object_set_new(stage, "status", json_string("refused"));
	json_object_set_new(stage, "error", json_string(why));
	json_decref(out->section);
	out->section =
	    json_pack("{s:s,s:s,s:n}", "status", "refused", "reason", why, "measurement_scope");
	out->status = PROF_REFUSED;
}

/* Facts from the terminal record (the same mapping the virtual bench's
 * host check uses: the parser says "error" where the facts say "failed"). */
int prof_terminal_facts(struct ergon_hpx_parser *p, double clean_infer_avg_us, int busy_loop_probe,
			int internal, struct ergon_power_facts *facts, json_t **terminal,
			struct ergon_err *err)
{
	*terminal = NULL;
	struct ergon_hpx_terminal term;
	struct ergon_err terr = {0};
	json_t *fj = NULL;
	int rc = ergon_hpx_parser_terminal(p, &term, &terr);
	if (rc == 0) {
		fj = ergon_hpx_terminal_to_json(&term);
		if (fj == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "power stage: out of memory");
		*terminal = json_deep_copy(fj);
		json_t *t = json_object_get(fj, "terminal");
		const char *st = json_string_value(json_object_get(t, "status"));
		if (st != NULL && strcmp(st, "error") == 0)
			json_object_set_new(t, "status", json_string("failed"));
		json_object_set_new(fj, "clean_infer_count",
				    json_integer((json_int_t)term.completed_count));
	} else if (rc == ERGON_ENOENT) {
		fj = json_object(); /* no record: the facts hold no terminal */
	} else {
		return ergon_err_set(err, rc, "power stage: the terminal record was refused: %s",
				     terr.msg);
	}
	if (fj == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "power stage: out of memory");
	if (clean_infer_avg_us > 0)
		json_object_set_new(fj, "clean_infer_avg_us", json_real(clean_infer_avg_us));
	json_object_set_new(fj, "probe_kind", json_string(busy_loop_probe ? "busy_loop" : "infer"));
	json_object_set_new(fj, "internal", json_boolean(internal));
	rc = ergon_power_facts_from_json(fj, "power terminal record", facts, err);
	json_decref(fj);
	return rc;
}

static size_t rising(const struct ergon_sim_result *s, uint64_t pin)
{
	return pin > 0 && pin < 256 ? ergon_sim_rising_edges(s, (uint8_t)pin) : 0;
}

/* The lock-step handshake as the instrument's inputs saw it. */
static json_t *sync_block(struct prof_run *r, const struct ergon_sim_result *s)
{
	const struct ergon_config *cfg = r->o->cfg;
	int lock = cfg->power.lockstep == 1;
	json_t *j = json_pack("{s:b,s:I,s:I,s:I}", "lockstep", lock, "sync_gpio_pin",
			      (json_int_t)cfg->power.sync_gpio_pin, "state_gpio_pin",
			      (json_int_t)cfg->power.state_gpio_pin, "go_gpio_pin",
			      (json_int_t)cfg->power.go_gpio_pin);
	if (j == NULL)
		return NULL;
	if (s == NULL || !lock) {
		/* Not observed by this lifecycle / not part of this run. */
		json_object_set_new(j, "ready_observed", json_null());
		return j;
	}
	int ready = rising(s, cfg->power.state_gpio_pin) > 0;
	json_object_set_new(j, "ready_observed", json_boolean(ready));
	json_object_set_new(j, "gate_rising_edges",
			    json_integer((json_int_t)ergon_sim_js_in0_rising(s)));
	if (!ready) {
		char hint[512];
		snprintf(hint, sizeof hint,
			 "READY was never observed on the state input (target pin %llu -> "
			 "instrument input %llu): check that wire, that the power firmware was "
			 "built with lock-step (state and go pins), or set power.lockstep: false",
			 (unsigned long long)cfg->power.state_gpio_pin,
			 (unsigned long long)cfg->power.state_input_index);
		json_object_set_new(j, "hint", json_string(hint));
		ergon_issue_add(
		    r->issues, "profile.ready_not_observed",
		    json_pack("{s:I}", "state_gpio_pin", (json_int_t)cfg->power.state_gpio_pin),
		    "%s", hint);
	}
	return j;
}

/* What the live capture (profile_live.c) saw of the lock-step handshake,
 * from its facts, into the sync block. */
/* The virtual bench's recording: its simulated Joulescope's statistics
 * packets, one sample each (mean current, voltage and power of the
 * packet; gpi[i] = the packet's digital bit i, INPUT0 the gate), written to
 * dir/trace.jls as `ergon record` writes a real one, so that the demo's
 * report and `ergon view` draw the gated waveform the figures come from.
 * *rec gets what provenance.recording says of it (path, format, size and
 * SHA-256: report --jls and view --summary check it). */
static int sim_trace(const char *dir, const struct ergon_sim_result *s, json_t **rec,
		     struct ergon_err *err)
{
	*rec = NULL;
	char path[4200];
	double rate = s->js_period_s > 0 ? 1.0 / s->js_period_s : 0;
	if (!(rate >= 1) || rate > 1e9 || s->n_js == 0)
		return 0; /* nothing to write: no packets */
	snprintf(path, sizeof path, "%s/trace.jls", dir);
	struct ergon_jls_writer_config cfg = {
	    .path = path,
	    .force = 1, /* the stage's own folder */
	    .sample_rate_hz = (uint32_t)lround(rate),
	    .source_name = "virtual-bench",
	    .vendor = "ergon",
	    .model = "virtual bench (simulated Joulescope statistics)",
	    .version = "ergon " ERGON_VERSION,
	    .serial = "sim",
	    .digital_lines = 4,
	    .with_power = 1,
	    .note_json = "{\"ergon\": \"virtual bench: one sample per simulated statistics packet "
			 "(its mean current, voltage and power); synthetic, not a measurement\"}",
	};
	struct ergon_jls_writer *w = NULL;
	int rc = ergon_jls_writer_open(&cfg, &w, err);
	enum { CHUNK = 4096 };
	float c[CHUNK], v[CHUNK], p[CHUNK];
	uint32_t d[CHUNK];
	for (size_t i = 0; rc == 0 && i < s->n_js; i += CHUNK) {
		size_t n = s->n_js - i < CHUNK ? s->n_js - i : CHUNK;
		for (size_t k = 0; k < n; k++) {
			const struct ergon_stats_packet *q = &s->stats[i + k];
			c[k] = (float)q->i_avg_a;
			v[k] = (float)q->v_avg_v;
			p[k] = (float)q->p_avg_w;
			d[k] = q->digital & 0xFu;
		}
		rc = ergon_jls_writer_push(w, c, v, p, d, n, err);
	}
	if (w != NULL) {
		if (rc == 0)
			rc = ergon_jls_writer_close(w, NULL, err);
		else
			ergon_jls_writer_abandon(w);
	}
	if (rc)
		return rc;
	json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:f}", "path", path, "format", "jls",
			      "recording_provenance", "synthetic", "samples", (json_int_t)s->n_js,
			      "sample_rate_hz", rate);
	if (o == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	if ((rc = ergon_summary_recording_identify(path, o, err)) != 0) {
		json_decref(o);
		return rc;
	}
	*rec = o;
	return 0;
}

static void live_sync(json_t *sync, const json_t *live)
{
	json_t *lock = json_object_get(live, "lockstep");
	if (json_is_true(lock)) {
		double ra = json_number_value(json_object_get(live, "ready_after_reset_s"));
		json_object_set_new(sync, "ready_observed", json_boolean(ra >= 0));
		json_object_set_new(sync, "go_set", json_copy(json_object_get(live, "go_set")));
	}
	json_object_set_new(sync, "gate_only", json_boolean(!json_is_true(lock)));
	json_object_set_new(sync, "observed_by", json_string("live_instrument"));
}

/* The INA228 bring-up failed on the target: say which address the
 * firmware used and, on a board preset with a strapped address, the fix. */
static void ina228_init_hint(struct prof_run *r, const json_t *terminal)
{
	const struct ergon_config *cfg = r->o->cfg;
	const json_t *t = json_object_get(terminal, "terminal");
	const char *phase = json_string_value(json_object_get(t, "final_phase"));
	if (phase == NULL || strcmp(phase, "ina228_init") != 0)
		return;
	unsigned long long addr = (unsigned long long)cfg->power.ina228.i2c_address;
	int click = strcmp(cfg->power.ina228.board, "mikroe-power-monitor-click") == 0;
	long long code = (long long)json_integer_value(json_object_get(t, "error_code"));
	char hint[400];
	/* The record's code is per phase (wire.h): 10/11 here are SHUNT_CAL's. */
	const char *name = ergon_power_error_name(phase, code);
	if (strcmp(name, HPX_ERR_I2C) != 0)
		snprintf(hint, sizeof hint,
			 "the target's INA228 at 0x%llX answered but its bring-up failed (phase "
			 "ina228_init, error %lld: %s): see the terminal record",
			 addr, code,
			 strcmp(name, HPX_ERR_INA228_ID) == 0 ? "wrong manufacturer or device ID"
			 : strcmp(name, HPX_ERR_SHUNT_CAL_WRITE) == 0
			     ? "SHUNT_CAL write failed (not acknowledged)"
			 : strcmp(name, HPX_ERR_SHUNT_CAL_READBACK) == 0
			     ? "SHUNT_CAL read back differs"
			     : name);
	else if (click && addr != 0x4A)
		snprintf(hint, sizeof hint,
			 "the target's INA228 did not come up at power.ina228.i2c_address 0x%llX "
			 "(phase ina228_init, error %lld): the MikroE Power Monitor Click answers "
			 "at 0x4A; set power.ina228.i2c_address: 0x4A",
			 addr, code);
	else
		snprintf(hint, sizeof hint,
			 "the target's INA228 did not come up at power.ina228.i2c_address 0x%llX "
			 "(phase ina228_init, error %lld): check the address straps (A0/A1), the "
			 "I2C wiring and power.ina228.i2c_iom",
			 addr, code);
	ergon_issue_add(r->issues, "profile.ina228_init_failed",
			json_pack("{s:I}", "i2c_address", (json_int_t)addr), "%s", hint);
}

/* The rating the power section's budgets use (docs/UNCERTAINTY.md) and
 * where it came from: the virtual bench's declared meter (ratings.c
 * "VBENCH"), the on-board INA228's datasheet figures with the configured
 * shunt (and its ENERGY/CHARGE steps and conversion cycle in *bo), or the
 * live instrument's identity. 0 when there is none (the rated terms are
 * then unknown and the budgets incomplete). */
static int power_rating(const struct prof_run *r, const struct prof_plan *pl, int internal,
			struct ergon_rating *rating, struct ergon_power_budget_opts *bo,
			const char **from)
{
	const struct ergon_config *cfg = r->o->cfg;
	bo->energy_lsb_j = bo->charge_lsb_c = bo->cycle_s = NAN;
	bo->max_uncertainty_pct =
	    isfinite(cfg->power.max_uncertainty_pct) ? cfg->power.max_uncertainty_pct : 0;
	bo->rating = NULL;
	*from = "none: the instrument states no rating known to ergon";
	if (internal) {
		struct ert_ina228_plan plan;
		if (!pl->have_ina228_rating)
			return 0;
		*rating = pl->ina228_rating;
		if (ert_ina228_plan(cfg->power.ina228.shunt_ohms, cfg->power.ina228.max_current_a,
				    &plan) == 0) {
			bo->energy_lsb_j = plan.energy_lsb_j;
			bo->charge_lsb_c = plan.charge_lsb_c;
		}
		/* One conversion cycle: VBUS, VSHUNT and DIETEMP, each
		 * conversion_time x averaging (INA228 datasheet, ADC_CONFIG). */
		bo->cycle_s = 3.0 * (double)cfg->power.ina228.conversion_time_us *
			      (double)cfg->power.ina228.averaging_count * 1e-6;
		*from = "the INA228 datasheet's figures (ratings.c) with power.ina228.shunt_ohms "
			"and the shunt's stated terms (power.ina228.shunt_*)";
	} else if (r->sim) {
		if (ergon_rating_for_model("VBENCH", NAN, rating) != 0)
			return 0;
		*from = "the virtual bench's declared meter (ratings.c VBENCH)";
	} else if (r->have_live_rating) {
		*rating = r->live_rating;
		*from = "the live instrument's identity (instrument.rating)";
	} else {
		return 0;
	}
	bo->rating = rating;
	return 1;
}

/* Stated uncertainty of the energy per inference. External: each window
 * edge is known to one statistics period, so the window's energy is off by
 * at most 2 periods at the peak power. Internal: one ENERGY LSB of the
 * INA228's accumulator (datasheet 7.6.1.x, 16 x 3.2 x CURRENT_LSB). */
static void add_uncertainty(struct prof_run *r, json_t *sec, int internal)
{
	const struct ergon_config *cfg = r->o->cfg;
	const json_t *epi = json_object_get(sec, "energy_per_inference_j");
	const json_t *cnt = json_object_get(sec, "inference_count");
	if (!json_is_number(epi) || !json_is_number(cnt) || !(json_number_value(cnt) > 0))
		return;
	double n = json_number_value(cnt);
	double u = NAN;
	const char *basis = NULL;
	if (internal) {
		/* The accumulator also only moves once per conversion cycle
		 * (VBUS, VSHUNT and DIETEMP, each conversion_time x averaging),
		 * so the window's edges are known to one cycle at the window's
		 * mean power, on top of the ENERGY register's LSB. */
		struct ert_ina228_plan plan;
		double pw = json_number_value(json_object_get(sec, "avg_power_w"));
		double cycle_s = 3.0 * (double)cfg->power.ina228.conversion_time_us *
				 (double)cfg->power.ina228.averaging_count * 1e-6;
		if (ert_ina228_plan(cfg->power.ina228.shunt_ohms, cfg->power.ina228.max_current_a,
				    &plan) == 0 &&
		    pw > 0) {
			u = (plan.energy_lsb_j + cycle_s * pw) / n;
			basis = "one INA228 ENERGY LSB plus one conversion cycle (3 x "
				"conversion_time x averaging) at the mean power, over the "
				"window's inference count";
		}
	} else {
		double period = json_number_value(
		    json_object_get(json_object_get(sec, "gate"), "stats_period_s"));
		double ipk = json_number_value(json_object_get(sec, "peak_current_a"));
		double pw = json_number_value(json_object_get(sec, "avg_power_w"));
		double ia = json_number_value(json_object_get(sec, "avg_current_a"));
		/* Peak power = peak current x the window's mean voltage (P/I). */
		if (period > 0 && ipk > 0 && pw > 0 && ia > 0) {
			u = 2.0 * period * ipk * (pw / ia) / n;
			basis = "two statistics periods at the peak power over the inference count";
		}
	}
	if (isfinite(u)) {
		json_object_set_new(sec, "energy_per_inference_uncertainty_j", json_real(u));
		json_object_set_new(sec, "uncertainty_basis", json_string(basis));
	}
}

/* A live capture that ended early (Ctrl-C, an unplug, no terminal record):
 * what the engine was fed is kept as a partial power section, the whole
 * capture's figures and any window that closed, with no per-inference
 * figure (the firmware's count is missing or the window is incomplete). */
static void live_partial(struct prof_run *r, struct ergon_gated *g, double min_window_s,
			 json_t *live_facts, const char *why, struct prof_power *out)
{
	const struct ergon_gated_result *gres = NULL;
	struct ergon_err e = {0};
	json_t *sec = NULL;
	if (ergon_gated_finish(g, &gres, &e) != 0 ||
	    ergon_power_section(gres, min_window_s, NULL, NULL, &sec, &e) != 0)
		return;
	json_object_set_new(sec, "partial", json_true());
	json_object_set_new(sec, "partial_reason",
			    json_sprintf("%s: the figures cover the samples captured until then; "
					 "no per-inference figure is published",
					 why));
	json_object_set_new(sec, "energy_per_inference_j", json_null());
	json_object_set_new(sec, "per_inference_metrics_omitted", json_true());
	json_array_extend(r->issues, json_object_get(sec, "issues"));
	if (live_facts)
		json_object_set(sec, "live_capture", live_facts);
	json_decref(out->section);
	out->section = sec;
}

/* ---- Energy per layer (--layer-energy; docs/METHOD.md, "Energy per
 * layer"): the marker plan from the PMU stage's layers, the virtual
 * bench's marker line and raw meter, and the layer engine over what the
 * power stage captured, into power.layers[] and power.layer_energy. ---- */

/* The virtual bench's raw meter: a PPK2's 100 kSPS. */
#define SIM_RAW_RATE_HZ 100000.0
/* Who reports no layers, in the plan's message. */
#define LAYER_PLAN_WHAT "--layer-energy: the PMU stage"

static void prof_layers_sim_options(const struct ergon_layer_plan *lp, struct ergon_sim_options *so)
{
	if (!lp->on)
		return;
	so->marker_pin = ERGON_SIM_MARKER_PIN;
	so->raw_rate_hz = lp->rate_hz;
	for (int w = 0; w < 8; w++)
		so->marker_mask[w] = lp->mask[w];
}

static void prof_layers_estimate_only(const json_t *profile, json_t *sec, const char *why)
{
	struct ergon_layer_plan lp;
	struct ergon_err e = {0};
	double epi = json_is_number(json_object_get(sec, "energy_per_inference_j"))
			 ? json_number_value(json_object_get(sec, "energy_per_inference_j"))
			 : NAN;
	json_t *est = json_null();
	if (ergon_layer_plan_from_profile(profile, 1.0, LAYER_PLAN_WHAT, &lp, &e) == 0) {
		struct ergon_layer_model m = {.n_layers = lp.n_layers, .op = lp.op, .cycles = lp.cycles};
		est = ergon_layers_estimate_json(&m, epi);
	}
	ergon_layer_plan_free(&lp);
	json_object_set_new(sec, "layers_estimated", est ? est : json_null());
	json_object_set_new(sec, "layer_energy",
			    json_pack("{s:s, s:s}", "measured", "no", "why", why));
}

static double prof_layers_sim_rate_hz(void)
{
	return SIM_RAW_RATE_HZ;
}

/* The virtual bench's raw meter as a rating: exact by construction but
 * for its float32 samples (sim/src/board.c). */
static void sim_rating(struct ergon_rating *r)
{
	ergon_rating_init(r, ERGON_RATING_IV);
	r->n_ranges = 1;
	struct ergon_rating_range *g = &r->range[0];
	snprintf(g->name, sizeof g->name, "%s", "the one range");
	g->full_scale_a = INFINITY;
	ergon_rated_set(&g->gain_pct, 0.0,
			"the virtual bench's raw meter: the simulated current itself, no gain "
			"error (sim/src/board.c)");
	ergon_rated_set(&g->offset_a, 0.0,
			"the virtual bench's raw meter: no offset (sim/src/board.c)");
	/* float32 samples below 16 mA: one step (ulp) at most 2^-29 A. */
	g->resolution_a = 1.862645149230957e-09;
	ergon_rated_set(&r->v_gain_pct, 0.0, "the virtual bench's rail is exactly 1.8 V");
	ergon_rated_set(&r->v_offset_v, 0.0, "the virtual bench's rail is exactly 1.8 V");
	ergon_rated_set(&r->timebase_ppm, 0.0,
			"the virtual bench's clock is the simulation's own: no drift");
}

static int prof_layers_analyze_sim(const struct ergon_layer_plan *lp,
				   const struct ergon_sim_result *s, uint64_t inferences,
				   double epi_j, double epi_u_j, json_t *sec, json_t *issues,
				   struct ergon_err *err)
{
	if (!lp->on || s == NULL || s->n_raw == 0)
		return 0;
	struct ergon_rating rating;
	sim_rating(&rating);
	struct ergon_layers_config c = {.sample_rate_hz = s->raw_rate_hz,
					.gate_bit = 0,
					.marker_bit = 1,
					.segments = lp->n_segments,
					.inferences = inferences,
					.rating = &rating};
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = NULL;
	int rc = ergon_layers_new(&c, &L, err);
	if (!rc)
		rc = ergon_layers_push(L, s->raw_current_a, NULL, s->rail_v, s->raw_digital, s->n_raw,
				       err);
	if (!rc)
		rc = ergon_layers_finish(L, &res, err);
	if (!rc)
		rc = ergon_layers_section(res, lp, epi_j, epi_u_j,
					  "the virtual bench's raw meter (100 kSPS, D0 gate, D1 "
					  "marker)",
					  sec, issues, err);
	ergon_layers_free(L);
	return rc;
}

/* The shared (instrumented) power firmware leaves no terminal record: the
 * count of the window its gate spanned is its own stream's
 * CLEAN_INFER_COUNT, and the checks compare the gate with that count x the
 * profile boot's CLEAN_INFER_AVG_US (the no-firmware-window band,
 * docs/POWER_CHECKS.md), which the build's transport traffic inside the
 * window can push out of the band. */
static void shared_count(struct ergon_hpx_parser *p, struct ergon_power_facts *facts)
{
	struct ergon_pmu_result *res = NULL;
	struct ergon_err e = {0};
	if (ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &res, &e) != 0)
		return;
	for (size_t i = 0; i < res->nmeta; i++)
		if (strcmp(res->meta[i].key, "clean_infer_count") == 0 &&
		    res->meta[i].value.kind == ERGON_PMU_INT && res->meta[i].value.i > 0) {
			facts->have_clean_count = 1;
			facts->clean_infer_count = (uint64_t)res->meta[i].value.i;
			snprintf(facts->clean_count_source, sizeof facts->clean_count_source, "%s",
				 "shared_boot");
		}
	ergon_pmu_result_free(res);
}

/* A number of the power section, NaN when it has none. */
static double sec_num(const json_t *sec, const char *key)
{
	const json_t *v = json_object_get(sec, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Inferences dropped for another number of marker edges than the plan's
 * segments: power.layers_mask_mismatch names the mask the plan expected
 * and what the firmware marked as far as the edges tell (the first dropped
 * inference's count; a build that marks every layer shows one edge per
 * layer), and the fix for a user's own power build. */
static void mask_mismatch_issue(const struct prof_live_layers *ly,
				const struct ergon_layers_result *res, json_t *sec, json_t *issues)
{
	char def[ERGON_MARKER_DEFINE_MAX], init[ERGON_MARKER_INIT_MAX];
	ergon_marker_mask_define(ly->plan.mask, def, sizeof def);
	ergon_marker_mask_initializer(ly->plan.mask, init, sizeof init);
	size_t marked_layers = ly->plan.n_layers < 256 ? ly->plan.n_layers : 256;
	char seen[300];
	if (res->first_dropped_edges == marked_layers ||
	    res->first_dropped_edges == marked_layers + 1)
		snprintf(seen, sizeof seen,
			 "%llu, one per layer: the power build marks every layer (a mask of all "
			 "zero)",
			 (unsigned long long)res->first_dropped_edges);
	else
		snprintf(seen, sizeof seen, "%llu (a missed or extra edge, or another mask)",
			 (unsigned long long)res->first_dropped_edges);
	json_t *a = json_array();
	ergon_issue_add(
	    a, "power.layers_mask_mismatch",
	    json_pack("{s:I, s:I, s:I, s:s, s:s}", "segments_expected",
		      (json_int_t)ly->plan.n_segments, "first_dropped_edges",
		      (json_int_t)res->first_dropped_edges, "layers", (json_int_t)ly->plan.n_layers,
		      "expected_define", def, "expected_initializer", init),
	    "the marker plan expected %zu marker edges per inference (its mask %s marks %zu of "
	    "the %zu layers); the first dropped inference showed %s. %s",
	    ly->plan.n_segments, init, ly->plan.n_segments, ly->plan.n_layers, seen,
	    ly->image[0] ? "The power image ergon built carries the plan's mask, so the edges "
			   "themselves disagree: check the marker wire and its logic level"
			 : "Build the power image with this mask: ert_power_config.marker.mask = "
			   "the initializer above (a model main: the define in "
			   "power.marker_plan)");
	json_array_extend(issues, a);
	json_array_extend(json_object_get(sec, "issues"), a);
	json_decref(a);
}

/* The live PPK2's layer engine (fed by the capture) into power.layers[]
 * and power.layer_energy: the firmware's count, the sum against the
 * gated energy per inference, and what the marker's cost needs. A layer
 * engine that stopped (a lost sample) says why, with the estimate. */
static int prof_layers_analyze_live(const struct ergon_config *cfg, struct prof_live_layers *ly,
				    uint64_t inferences, json_t *sec, json_t *issues,
				    struct ergon_err *err)
{
	const struct ergon_layers_result *res = NULL;
	int rc = 0;
	if (ly->L == NULL || ly->failed) {
		char why[1200];
		snprintf(why, sizeof why,
			 "not measured: %s; shown: the cycle split of the energy per inference, "
			 "an estimate",
			 ly->failed ? ly->err.msg : "the meter gave no samples");
		prof_layers_estimate_only(ly->profile, sec, why);
		return 0;
	}
	rc = ergon_layers_set_inferences(ly->L, inferences, err);
	if (!rc)
		rc = ergon_layers_finish(ly->L, &res, err);
	char meter[400];
	if (ly->packet_rate_hz > 0)
		snprintf(meter, sizeof meter,
			 "the live Joulescope's statistics packets (power.stats_rate_hz %.0f/s, "
			 "gate INPUT%u, markers INPUT%u; each packet one sample: an edge is placed "
			 "to one packet, %.6g s)",
			 ly->meter_rate_hz, (unsigned)cfg->power.sync_input_index,
			 ly->marker_input_index, 1.0 / ly->meter_rate_hz);
	else
		snprintf(meter, sizeof meter, "the live PPK2 (%.0f SPS, gate D%u, markers D%u)",
			 ly->meter_rate_hz, (unsigned)cfg->power.sync_input_index,
			 ly->marker_input_index);
	if (!rc)
		rc = ergon_layers_section(res, &ly->plan, sec_num(sec, "energy_per_inference_j"),
					  sec_num(sec, "energy_per_inference_uncertainty_j"), meter,
					  sec, issues, err);
	if (!rc && res->inferences_dropped > 0)
		mask_mismatch_issue(ly, res, sec, issues);
	json_t *meta = json_object_get(sec, "layer_energy");
	if (!rc && json_is_object(meta)) {
		json_object_set_new(meta, "marker_input_index",
				    json_integer((json_int_t)ly->marker_input_index));
		/* The plan the segments are (made before the meter opened) and
		 * the rate the meter gave. */
		char def[ERGON_MARKER_DEFINE_MAX];
		ergon_marker_mask_define(ly->plan.mask, def, sizeof def);
		json_object_set_new(meta, "marker_plan",
				    json_pack("{s:f, s:s, s:s}", "rate_hz", ly->plan.rate_hz,
					      "define", def, "power_image",
					      ly->image[0] ? "carries this mask (ergon built it)"
							   : "the user's (FIRMWARE_DIR): its mask "
							     "unknown to ergon"));
		if (fabs(ly->meter_rate_hz - ly->plan.rate_hz) > 1e-9 * ly->plan.rate_hz)
			json_object_set_new(
			    meta, "rate_note",
			    json_sprintf("the marker plan (the power image's mask) was made at "
					 "%.9g/s before the meter opened; the meter gave %.9g/s: "
					 "the segments stay the plan's, and one shorter than %g "
					 "samples at the meter's rate is measured with its "
					 "neighbours (power.layers_unresolved)",
					 ly->plan.rate_hz, ly->meter_rate_hz,
					 ERGON_LAYERS_MIN_SAMPLES));
		/* With ergon's images the power stage replaces this with the
		 * unmarked run's comparison (marker_cost below). */
		json_object_set_new(
		    meta, "marker_cost",
		    json_pack(
			"{s:s, s:s}", "measured", "no", "why",
			ly->image[0]
			    ? "the unmarked run did not take place"
			    : "the power image is the user's (FIRMWARE_DIR): ergon cannot "
			      "build it without its marker line; to measure the marker's "
			      "cost, build the same power image with -DERT_PORT_MARKER_PIN=0u "
			      "(or ERT_LAYER_MARKERS=0: the markers compiled out), run it "
			      "with the same config and compare its energy_per_inference_j "
			      "with this run's (`ergon compare`): an unmarked run of the same "
			      "build; on the virtual bench it is 2.25 nJ a toggle "
			      "(docs/METHOD.md)"));
		/* A layer too short at the packet rate: the reason names the
		 * rate and what a JS220 can give. */
		json_t *un = json_object_get(meta, "unresolved"), *u;
		size_t ui;
		json_array_foreach(un, ui, u)
		{
			const char *why = json_string_value(json_object_get(u, "reason"));
			if (ly->packet_rate_hz > 0 && why != NULL)
				json_object_set_new(
				    u, "reason",
				    json_sprintf("%s (each statistics packet is one sample at "
						 "power.stats_rate_hz %.0f/s; raise it to resolve "
						 "shorter layers: a JS220 gives up to 100000/s)",
						 why, ly->meter_rate_hz));
		}
		if (ly->packet_rate_hz > 0)
			json_object_set_new(
			    meta, "resolution",
			    json_sprintf(
				"each statistics packet is one sample: a marker edge is "
				"placed to one packet (1/power.stats_rate_hz = %.6g s), and a "
				"layer shorter than %g packets (%.6g s) is measured with its "
				"neighbours (power.layers_unresolved); raise "
				"power.stats_rate_hz to resolve shorter layers (a JS220 gives "
				"up to 100000/s)",
				1.0 / ly->meter_rate_hz, ERGON_LAYERS_MIN_SAMPLES,
				ERGON_LAYERS_MIN_SAMPLES / ly->meter_rate_hz));
	}
	return rc;
}

/* --layer-energy with ergon's images on a live meter: the marker's own
 * cost (issue 33, docs/METHOD.md "The marker's cost"). The same power
 * image (the plan's mask) is built again with its marker line compiled out
 * (pin 0: the firmware cache makes it one object), flashed, and captured
 * once more, gated, with no layer tap, into DIR/unmarked/; its energy per
 * inference goes through the same power-section analysis as the marked
 * run's. marker_cost = marked - unmarked, its uncertainty both runs' stated
 * ones in quadrature, per toggle over the marked run's edges per inference.
 * A second run that fails or whose figures are withheld leaves
 * measured: "no" with the reason: never a guessed number. The unmarked
 * run's issues stay in its record (runs[1].issues): they say nothing of
 * the marked run's figures. Returns the new marker_cost object (NULL: out
 * of memory). */
static json_t *marker_cost_no(json_t *runs, const char *why)
{
	return json_pack("{s:s, s:s, s:o}", "measured", "no", "why", why, "runs", runs);
}

static json_t *marker_cost(struct prof_run *r, const struct prof_plan *plan,
			   const struct prof_live_layers *ly, const char *dir, double duration_s,
			   double hb_s, const struct prof_pmu *pmu, const json_t *sec)
{
	const struct ergon_profile_fw_build *fb = r->o->fw_build;
	double m_epi = sec_num(sec, "energy_per_inference_j");
	double m_u = sec_num(sec, "energy_per_inference_uncertainty_j");
	double n_inf = sec_num(sec, "inference_count");
	json_t *runs = json_pack(
	    "[{s:s, s:s, s:o, s:o, s:s}]", "run", "marked", "image", ly->image,
	    "energy_per_inference_j", isfinite(m_epi) ? json_real(m_epi) : json_null(),
	    "uncertainty_j", isfinite(m_u) ? json_real(m_u) : json_null(), "log", "capture.log");
	if (runs == NULL)
		return NULL;
	if (!isfinite(m_epi) || !isfinite(m_u) || !(n_inf > 0))
		return marker_cost_no(runs, "not measured: the marked run's energy per inference "
					    "or its uncertainty is withheld (power."
					    "per_inference_omitted_reasons), so there is nothing "
					    "to compare an unmarked run with");
	struct ergon_err e = {0};
	char udir[PATH_MAX], fwdir[PATH_MAX], why[1200];
	int n1 = snprintf(udir, sizeof udir, "%s/unmarked", dir);
	int n2 = snprintf(fwdir, sizeof fwdir, "%s/unmarked", fb->dir);
	int rc = n1 < 0 || (size_t)n1 >= sizeof udir || n2 < 0 || (size_t)n2 >= sizeof fwdir
		     ? ergon_err_set(&e, ERGON_ETOOBIG, "%s/unmarked: path too long", dir)
		     : ergon_mkdir_p(udir, &e);
	struct ergon_model_fw_marker mk = {
	    .from = "the marker plan's mask, the marker line compiled out (the marker's cost run)",
	    .no_line = 1};
	memcpy(mk.mask, ly->plan.mask, sizeof mk.mask);
	json_t *b = NULL, *live = NULL, *terminal = NULL, *usec = NULL;
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cap = {0};
	struct ergon_lifecycle *lc = NULL;
	struct ergon_gated *g = NULL;
	const struct ergon_gated_result *gres = NULL;
	/* The unmarked run's issues apart from the marked run's. */
	json_t *saved_issues = r->issues, *uissues = json_array();
	json_t *urun = json_pack("{s:s, s:s}", "run", "unmarked", "log", "unmarked/capture.log");
	json_t *out = NULL;
	if (uissues == NULL || urun == NULL) {
		json_decref(uissues);
		json_decref(urun);
		json_decref(runs);
		return NULL;
	}
	r->issues = uissues;
	if (!rc) {
		prof_progress(r, "firmware", "the power build without its marker line (its cost)");
		rc = ergon_model_fw_build_power(fb->model_path, fb->board, fwdir, fb->flags, &mk,
						&b, &e);
	}
	const char *elf = json_string_value(json_object_get(b, "elf"));
	if (!rc) {
		json_object_set_new(urun, "image", json_string(elf ? elf : ""));
		json_object_set(urun, "elf_sha256", json_object_get(b, "elf_sha256"));
		rc = ergon_hpx_parser_new(NULL, &p, &e);
	}
	if (!rc) {
		prof_progress(r, "capture", "live: the unmarked image, the gated window again");
		rc = prof_live_capture(r, udir, elf ? elf : "", duration_s, hb_s, p, &cap, &lc, &g,
				       &live, NULL, &e);
	}
	if (cap.issues)
		json_array_extend(uissues, cap.issues);
	if (!rc) {
		int frc = ergon_hpx_parser_finish(p, &e);
		rc = frc < 0 ? frc : 0;
	}
	struct ergon_power_facts facts;
	if (!rc)
		rc = prof_terminal_facts(p, pmu->clean_infer_avg_us, 0, 0, &facts, &terminal, &e);
	if (!rc) {
		facts.zero_time_inference = pmu->clean_zero_time;
		facts.terminal_expected = 1;
		rc = g != NULL ? ergon_gated_finish(g, &gres, &e)
			       : ergon_err_set(&e, ERGON_EUSAGE, "no gated capture");
	}
	struct ergon_rating rating;
	struct ergon_power_budget_opts bo;
	const char *rating_from = NULL;
	if (!rc) {
		(void)power_rating(r, plan, 0, &rating, &bo, &rating_from);
		rc = ergon_power_section_ex(gres, BENCH_MIN_WINDOW_S, &facts, NULL, &bo, &usec, &e);
	}
	if (!rc)
		add_uncertainty(r, usec, 0);
	r->issues = saved_issues;
	if (lc)
		r->drv->close(lc);
	double u_epi = sec_num(usec, "energy_per_inference_j");
	double u_u = sec_num(usec, "energy_per_inference_uncertainty_j");
	json_object_set_new(urun, "energy_per_inference_j",
			    isfinite(u_epi) ? json_real(u_epi) : json_null());
	json_object_set_new(urun, "uncertainty_j", isfinite(u_u) ? json_real(u_u) : json_null());
	if (usec != NULL) {
		json_object_set(urun, "inference_count", json_object_get(usec, "inference_count"));
		json_object_set(urun, "per_inference_omitted_reasons",
				json_object_get(usec, "per_inference_omitted_reasons"));
		json_array_extend(uissues, json_object_get(usec, "issues"));
	}
	if (live)
		json_object_set(urun, "live_capture", live);
	json_object_set(urun, "issues", uissues);
	json_array_append(runs, urun);
	if (rc) {
		snprintf(why, sizeof why,
			 "not measured: the unmarked run failed: %s (its record: "
			 "runs[1], power/unmarked/capture.log)",
			 e.msg[0] ? e.msg : ergon_strerror(rc));
		out = marker_cost_no(runs, why);
	} else if (!isfinite(u_epi) || !isfinite(u_u)) {
		out =
		    marker_cost_no(runs, "not measured: the unmarked run's energy per inference or "
					 "its uncertainty is withheld (runs[1]."
					 "per_inference_omitted_reasons and issues)");
	} else {
		double cost = m_epi - u_epi, cost_u = sqrt(m_u * m_u + u_u * u_u);
		/* Toggles per inference: the marked run's edges over its
		 * inferences (segments + 1/N: one more closes the window). */
		json_t *meta = json_object_get(sec, "layer_energy");
		double edges = sec_num(meta, "edges");
		double tpi = isfinite(edges) && edges > 0
				 ? edges / n_inf
				 : (double)ly->plan.n_segments + 1.0 / n_inf;
		out = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:o}", "measured", "yes",
				"marked_epi_j", m_epi, "unmarked_epi_j", u_epi, "cost_j", cost,
				"cost_U_j", cost_u, "per_toggle_j", cost / tpi,
				"toggles_per_inference", tpi, "method",
				"a marked and an unmarked run of the same power build (the same "
				"mask, the marker pin 0 in the second), each gated energy per "
				"inference with its stated uncertainty: cost = marked - unmarked, "
				"cost_U = both uncertainties in quadrature, per toggle = cost over "
				"the marked run's edges per inference",
				"runs", runs);
	}
	json_decref(urun);
	json_decref(uissues);
	json_decref(b);
	json_decref(live);
	json_decref(terminal);
	json_decref(usec);
	ergon_gated_free(g);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cap);
	return out;
}

void prof_power(struct prof_run *r, const struct prof_plan *plan, const struct prof_pmu *pmu,
		json_t *stage, struct prof_power *out)
{
	*out = (struct prof_power){0};
	int pmu_ok = pmu->rc == 0;
	const struct ergon_config *cfg = r->o->cfg;
	int internal = cfg->power.mode == ERGON_POWER_INTERNAL;
	int shared = cfg->power.firmware == ERGON_FIRMWARE_SHARED;
	struct ergon_err e = {0};
	char dir[1100];
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cap = {0};
	struct ergon_lifecycle *lc = NULL;
	struct ergon_gated *g = NULL;
	json_t *terminal = NULL, *sec = NULL;
	json_object_set_new(stage, "mode", json_string(internal ? "internal" : "external"));
	json_object_set_new(stage, "firmware",
			    json_pack("{s:s,s:b}", "kind", shared ? "shared" : "dedicated",
				      "transport_contamination", shared));
	if (cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU) {
		refuse(r, stage, "profile.power_unobservable",
		       "qemu-an547 is an emulated Cortex-M55: no instrument observes an emulated "
		       "rail, so there is no energy to report; run the power stage on a real "
		       "board or on --board sim",
		       out);
		return;
	}
	int live = !r->sim && !internal && prof_live_driver(cfg);
	if (cfg->power.serial[0] && !live) {
		/* power.serial / --power-serial selects a live instrument; a run
		 * without one must not look as if it had used that instrument. */
		char why[400];
		snprintf(why, sizeof why,
			 "power.serial %s selects a live instrument, but this power stage has "
			 "none to select (%s): remove power.serial (--power-serial), or use "
			 "power.driver joulescope or ppk2 in external mode on a board",
			 cfg->power.serial,
			 internal ? "internal mode reads the target's own INA228"
			 : r->sim ? "the virtual bench's simulated meter"
				  : cfg->power.driver);
		refuse(r, stage, "profile.power_instrument_unavailable", why, out);
		return;
	}
	if (!r->sim && !internal && !live) {
		char why[400];
		snprintf(why, sizeof why,
			 "power.driver %s: external gated capture needs a live instrument stream, "
			 "which this build does not drive yet; record with the vendor tool and run "
			 "`ergon analyze`, or use power.mode: internal with an INA228",
			 cfg->power.driver);
		refuse(r, stage, "profile.power_instrument_unavailable", why, out);
		return;
	}
	if (shared)
		ergon_issue_add(r->issues, "profile.firmware_shared", NULL,
				"power.firmware: shared: the power stage runs the profile build, "
				"whose transport traffic draws current inside the measured window");

	/* The window's length: auto runs to window_target_ms; fixed runs
	 * exactly `iterations`, so its length is iterations x the PMU stage's
	 * CLEAN_INFER_AVG_US (unknown without it: the target is the fallback). */
	int known = pmu_ok && pmu->clean_infer_avg_us > 0;
	double window_s = (double)cfg->profiling.window_target_ms * 1e-3;
	/* Auto: the firmware stops at window_max inferences even before the
	 * target time, and runs at least window_min (target/src/window.c), so
	 * with the PMU stage's timing the plan clamps the window the same way. */
	const char *clamp = NULL;
	if (cfg->profiling.window_mode == ERGON_WINDOW_AUTO && known) {
		double lo = (double)cfg->profiling.window_min * pmu->clean_infer_avg_us * 1e-6;
		double hi = (double)cfg->profiling.window_max * pmu->clean_infer_avg_us * 1e-6;
		if (window_s > hi) {
			window_s = hi;
			clamp = "profiling.window_max";
		} else if (window_s < lo) {
			window_s = lo;
			clamp = "profiling.window_min";
		}
	}
	if (cfg->profiling.window_mode == ERGON_WINDOW_FIXED && known) {
		window_s = (double)cfg->profiling.iterations * pmu->clean_infer_avg_us * 1e-6;
		if (window_s <= FIXED_WINDOW_WARN_S)
			ergon_issue_add(
			    r->issues, "config.fixed_window_short",
			    json_pack("{s:I,s:f,s:f}", "iterations",
				      (json_int_t)cfg->profiling.iterations, "clean_infer_avg_us",
				      pmu->clean_infer_avg_us, "window_s", window_s),
			    "profiling.iterations %llu with window_mode fixed: %llu x %.1f us "
			    "(the PMU stage's CLEAN_INFER_AVG_US) = %.4g s, a window of about 1 s "
			    "or less cannot yield a valid gated run; use window_mode auto or at "
			    "least %.0f iterations",
			    (unsigned long long)cfg->profiling.iterations,
			    (unsigned long long)cfg->profiling.iterations, pmu->clean_infer_avg_us,
			    window_s,
			    floor(FIXED_WINDOW_WARN_S / (pmu->clean_infer_avg_us * 1e-6)) + 1);
	}
	/* Duration: explicit wins; else boot settle + the firmware's runtime
	 * (window + warmup, from the PMU stage's timing) + margin. */
	double est_s = window_s;
	if (known)
		est_s += (double)cfg->profiling.warmup * pmu->clean_infer_avg_us * 1e-6;
	double duration_s = NAN;
	int dorigin = 0;
	int rc = ergon_config_power_duration_s(cfg, est_s, &duration_s, &dorigin, &e);
	if (!rc) {
		json_t *pp = json_object_get(plan->json, "power");
		json_object_set_new(pp, "duration_s", json_real(duration_s));
		json_object_set_new(pp, "duration_origin",
				    json_string(ergon_config_origin_name(dorigin)));
		/* duration_from said "default" (the unset key) while the value
		 * came from the rule: both now name the same origin. */
		json_t *from = json_object_get(pp, "duration_from");
		if (json_is_object(from))
			json_object_set_new(from, "origin",
					    json_string(ergon_config_origin_name(dorigin)));
		json_object_set_new(pp, "estimated_runtime_s", json_real(est_s));
	}
	const char *image = plan->power_image; /* or the one built with the marker plan */
	json_object_set_new(stage, "image", json_string(image));
	if (!rc)
		rc = prof_stage_dir(r, "power", dir, sizeof dir, &e);
	if (!rc)
		json_object_set_new(stage, "log", json_sprintf("%s/capture.log", dir));
	if (!rc)
		rc = ergon_hpx_parser_new(NULL, &p, &e);
	json_t *live_facts = NULL;
	/* --layer-energy (or a marker scenario): the marker plan from the PMU
	 * stage's layers, which the bench's firmware and meter get. */
	struct ergon_layer_plan lp = {0};
	const char *no_markers = NULL;
	struct ergon_sim_options so = plan->sim;
	/* A live PPK2 takes the marker line beside the gate (profile_live.c):
	 * the plan is made at the meter's rate once it is open. */
	struct prof_live_layers ly = {.marker_input_index = (unsigned)cfg->power.marker_input_index};
	int live_layers = 0;
	if (!rc && (r->o->layer_energy || (r->sim && ergon_sim_scenario_markers(r->o->sim_scenario)))) {
		/* A live meter with the marker line: a PPK2, or a Joulescope
		 * with lock-step off (accept_layers refused it with lock-step on). */
		int ppk2 = live && !internal &&
			   (strcmp(cfg->power.driver, "ppk2") == 0 ||
			    (strcmp(cfg->power.driver, "joulescope") == 0 && cfg->power.lockstep != 1));
		if ((!r->sim && !ppk2) || internal) {
			no_markers = internal
					 ? "not measured: the on-board INA228 (internal mode) gives one "
					   "energy per window, no marker line; shown: the cycle split "
					   "of the energy per inference, an estimate"
					 : "not measured: --layer-energy measures with the virtual "
					   "bench's meter, a live PPK2 (power.driver ppk2) or a live "
					   "Joulescope with power.lockstep: false; shown: "
					   "the cycle split of the energy per inference, an estimate";
			json_object_set_new(stage, "layer_energy", json_string(no_markers));
		} else if ((!pmu_ok || pmu->profile == NULL) && ppk2) {
			no_markers = "not measured: the PMU stage gave no layers to plan the markers "
				     "from";
			json_object_set_new(stage, "layer_energy", json_string(no_markers));
		} else if (ppk2) {
			ly.profile = pmu->profile;
			live_layers = 1;
			/* The plan before the meter opens, at the rate it will
			 * give; ergon's own power image is built again with its
			 * mask, so that the firmware marks what the host folds. */
			rc = prof_live_layers_plan(r, &ly, stage, &e);
			if (!rc && ly.image[0]) {
				image = ly.image;
				json_object_set_new(stage, "image", json_string(image));
			}
		} else if (!pmu_ok || pmu->profile == NULL) {
			json_object_set_new(stage, "layer_energy",
					    json_string("not measured: the PMU stage gave no layers "
							"to plan the markers from"));
		} else {
			rc = ergon_layer_plan_from_profile(pmu->profile, prof_layers_sim_rate_hz(),
							   LAYER_PLAN_WHAT, &lp, &e);
			if (!rc)
				prof_layers_sim_options(&lp, &so);
		}
	}
	/* profiling.clean_window_probe busy_loop on the virtual bench: its
	 * power boot spins the profile boot's inference time per count
	 * instead of running inferences (target/src/window.c). */
	uint32_t busy_loop_us = 0;
	if (!rc && cfg->profiling.clean_window_probe == ERGON_CFG_PROBE_BUSY_LOOP && r->sim) {
		if (pmu_ok && pmu->clean_infer_avg_us >= 1.0 && pmu->clean_infer_avg_us < 4e9)
			busy_loop_us = (uint32_t)llround(pmu->clean_infer_avg_us);
		json_object_set_new(
		    stage, "clean_window_probe",
		    busy_loop_us > 0
			? json_pack("{s:s,s:I,s:s}", "kind", "busy_loop", "busy_loop_us",
				    (json_int_t)busy_loop_us, "from",
				    "the profile boot's CLEAN_INFER_AVG_US")
			: json_pack("{s:s,s:s}", "kind", "infer", "why",
				    "busy_loop needs the profile boot's inference time, which "
				    "the PMU stage did not give: the window ran inferences"));
	}
	/* Internal mode's host envelope: from starting the power build to
	 * collecting its record (window_clock_ceiling bounds the firmware's
	 * window by it). */
	double envelope_t0_s = ergon_now_s();
	if (!rc && live) {
		prof_progress(r, "capture", "live: program, reset, READY, GO, the gated window");
		rc = prof_live_capture(r, dir, image, duration_s,
				       prof_planned_window_hb_s(cfg, pmu->clean_infer_avg_us), p,
				       &cap, &lc, &g, &live_facts, live_layers ? &ly : NULL, &e);
	} else if (!rc) {
		/* The power build prints nothing from boot to its record: the
		 * heartbeat bound must cover the whole planned run. */
		struct ergon_hpx_target_opts to =
		    prof_capture_opts(r, dir, duration_s, duration_s,
				      prof_planned_window_hb_s(cfg, pmu->clean_infer_avg_us));
		struct ergon_lifecycle_opts lo = r->lo;
		lo.work_dir = dir;
		if (r->sim && busy_loop_us > 0)
			so.busy_loop_us = busy_loop_us;
		/* power.firmware: shared on the bench: the profile build runs
		 * the power boot (its gate around the clean window, its trace on
		 * the live wire inside it, no terminal record). */
		so.shared_power = shared;
		if (r->sim && (lp.on || busy_loop_us > 0 || shared))
			lo.sim_options = &so;
		rc = ergon_hpx_capture_boot(&to, &lo, image, p, &cap, &lc, &e);
	}
	double envelope_s = ergon_now_s() - envelope_t0_s;
	if (cap.issues)
		json_array_extend(r->issues, cap.issues);
	if (cap.details)
		json_object_set(stage, "capture", cap.details);
	if (!rc) {
		int frc = ergon_hpx_parser_finish(p, &e);
		rc = frc < 0 ? frc : 0;
	}
	struct ergon_power_facts facts;
	if (!rc)
		prof_progress(r, "analysis",
			      internal ? "the terminal record" : "the gated windows");
	if (!rc)
		rc = prof_terminal_facts(p, pmu->clean_infer_avg_us,
					 cfg->profiling.clean_window_probe ==
						 ERGON_CFG_PROBE_BUSY_LOOP &&
					     (!r->sim || busy_loop_us > 0),
					 internal, &facts, &terminal, &e);
	if (!rc)
		facts.zero_time_inference = pmu->clean_zero_time;
	if (!rc && !shared) {
		/* The dedicated power build always writes a record. Without it
		 * the count is the profile boot's (a cross-boot count: the ratio
		 * check's tolerance carries the allowance for that). */
		facts.terminal_expected = 1;
		if (facts.terminal.status == ERGON_TERMINAL_NONE && !facts.have_clean_count &&
		    pmu->clean_infer_count > 0) {
			facts.have_clean_count = 1;
			facts.clean_infer_count = pmu->clean_infer_count;
			snprintf(facts.clean_count_source, sizeof facts.clean_count_source, "%s",
				 "profile_boot");
		}
	}
	if (!rc && shared && facts.terminal.status == ERGON_TERMINAL_NONE && !facts.have_clean_count)
		shared_count(p, &facts);
	const struct ergon_gated_result *gres = NULL;
	const struct ergon_sim_result *s = r->sim && lc ? ergon_lifecycle_sim_result(lc) : NULL;
	/* power.duration_s on the virtual bench, whose board runs on its own
	 * clock (faster than real time, so the host's timeouts never fire): the
	 * capture keeps what a real one of duration_s would, from the reset on
	 * the bench's clock, when the key is set (the auto value follows the
	 * plan, which the bench's clock faults scenarios outrun on purpose to
	 * show their own checks). External: the meter's packets up to duration_s (a
	 * window still open then is unterminated, as on a board); internal: a
	 * record that arrives after duration_s is a timeout. */
	size_t sim_packets = s != NULL ? s->n_js : 0;
	if (!rc && s != NULL && isfinite(duration_s) &&
	    (dorigin == ERGON_CFG_FILE || dorigin == ERGON_CFG_CLI)) {
		double t0 = s->n_js > 0 ? s->stats[0].t_start_s : 0.0;
		while (sim_packets > 0 && s->stats[sim_packets - 1].t_end_s - t0 > duration_s)
			sim_packets--;
		json_object_set_new(
		    stage, "bench_capture",
		    json_pack("{s:f,s:I,s:I,s:s}", "duration_s", duration_s, "packets_kept",
			      (json_int_t)sim_packets, "packets_after_duration",
			      (json_int_t)(s->n_js - sim_packets), "clock", "virtual_bench"));
		if (internal && s->host_envelope_s > duration_s)
			rc = ergon_err_set(&e, ERGON_ETIMEDOUT,
					   "power stage: the terminal record arrived %.3f s after the "
					   "start on the bench's clock, after power.duration_s %.3f s: "
					   "a capture of that length would have ended without it; "
					   "raise power.duration_s or leave it auto",
					   s->host_envelope_s, duration_s);
	}
	if (!rc && internal) {
		/* The virtual bench's host is timed on the bench's own clock
		 * (its board runs faster than real time). */
		facts.host_envelope_s = s != NULL ? s->host_envelope_s : envelope_s;
		json_object_set_new(stage, "host_envelope",
				    json_pack("{s:f,s:s}", "seconds", facts.host_envelope_s,
					      "clock",
					      s != NULL ? "virtual_bench" : "host_monotonic"));
	}
	double min_window_s = BENCH_MIN_WINDOW_S;
	/* The budgets' rating (the live one is known once the capture ran). */
	struct ergon_rating rating;
	struct ergon_power_budget_opts bo;
	const char *rating_from = NULL;
	int have_rating = power_rating(r, plan, internal, &rating, &bo, &rating_from);
	if (!rc && !internal && s != NULL) {
		/* The simulated Joulescope's statistics packets are the stream. */
		struct ergon_gated_config gc = {.min_window_s = min_window_s,
						.stats_rate_hz = 1.0 / s->js_period_s,
						.sync_input_index =
						    (unsigned)cfg->power.sync_input_index,
						.rating = have_rating ? &rating : NULL};
		rc = ergon_gated_new(&gc, &g, &e);
		if (!rc)
			rc = ergon_gated_push_packets(g, s->stats, sim_packets, &e);
		if (!rc)
			rc = ergon_gated_finish(g, &gres, &e);
		json_t *rec = NULL;
		if (!rc && (rc = sim_trace(dir, s, &rec, &e)) == 0 && rec != NULL)
			json_object_set_new(stage, "recording", rec);
	}
	if (!rc && g != NULL && s == NULL)
		rc = ergon_gated_finish(g, &gres, &e); /* the live stream fed it */
	if (!rc)
		rc = ergon_power_section_ex(gres, min_window_s, &facts, NULL, &bo, &sec, &e);
	if (!rc) {
		json_t *unc = json_object_get(sec, "uncertainty");
		if (json_is_object(unc))
			json_object_set_new(unc, "rating_from", json_string(rating_from));
		json_array_extend(r->issues, json_object_get(sec, "issues"));
		json_t *sync = sync_block(r, internal ? NULL : s);
		if (sync && live_facts)
			live_sync(sync, live_facts);
		if (sync)
			json_object_set_new(sec, "sync", sync);
		if (live_facts)
			json_object_set(sec, "live_capture", live_facts);
		json_object_set_new(sec, "firmware",
				    json_deep_copy(json_object_get(stage, "firmware")));
		/* heliaPROFILER's name for the same fact. */
		json_object_set_new(sec, "power_firmware",
				    json_string(shared ? "shared" : "dedicated"));
		/* heliaPROFILER's power_plan: the count the host chose for the
		 * power build (fixed: profiling.iterations; auto: the firmware
		 * sizes its window from window_target_ms, so the host chose none:
		 * null) and the window the plan expected. */
		int fixed = cfg->profiling.window_mode == ERGON_WINDOW_FIXED;
		json_object_set_new(
		    sec, "power_plan",
		    json_pack("{s:s,s:o,s:I,s:f}", "window_mode", fixed ? "fixed" : "auto",
			      "inference_count",
			      fixed ? json_integer((json_int_t)cfg->profiling.iterations)
				    : json_null(),
			      "window_target_ms", (json_int_t)cfg->profiling.window_target_ms,
			      "planned_window_s", window_s));
		/* Which bound decided the auto window (null: the target time). */
		json_object_set_new(json_object_get(sec, "power_plan"), "clamped_by",
				    clamp ? json_string(clamp) : json_null());
		if (terminal)
			json_object_set(sec, "terminal_record", terminal);
		if (internal)
			ina228_init_hint(r, terminal);
		if (internal) {
			json_t *m = json_object_get(terminal, "measurement");
			json_t *ods = json_is_object(m) ? json_deep_copy(m) : json_object();
			json_object_set_new(ods, "measurement_scope",
					    json_string("on_device_gated_inference"));
			json_object_set_new(sec, "on_device_summary", ods);
		}
		add_uncertainty(r, sec, internal);
		if (no_markers != NULL && pmu_ok && pmu->profile != NULL)
			prof_layers_estimate_only(pmu->profile, sec, no_markers);
		if (live_layers) {
			prof_progress(r, "analysis", "energy per layer");
			rc = prof_layers_analyze_live(
			    cfg, &ly,
			    (uint64_t)json_integer_value(json_object_get(sec, "inference_count")),
			    sec, r->issues, &e);
			json_t *meta = json_object_get(sec, "layer_energy");
			if (!rc && ly.image[0] && json_is_object(meta) && !prof_interrupted(r)) {
				prof_progress(r, "analysis", "the marker's cost: an unmarked run");
				json_t *mc = marker_cost(
				    r, plan, &ly, dir, duration_s,
				    prof_planned_window_hb_s(cfg, pmu->clean_infer_avg_us), pmu,
				    sec);
				if (mc == NULL)
					rc = ergon_err_set(&e, ERGON_ENOMEM, "out of memory");
				else
					json_object_set_new(meta, "marker_cost", mc);
			}
		}
		if (lp.on) {
			prof_progress(r, "analysis", "energy per layer");
			rc = prof_layers_analyze_sim(
			    &lp, s,
			    (uint64_t)json_integer_value(json_object_get(sec, "inference_count")),
			    json_is_number(json_object_get(sec, "energy_per_inference_j"))
				? json_number_value(json_object_get(sec, "energy_per_inference_j"))
				: NAN,
			    json_is_number(json_object_get(sec, "energy_per_inference_uncertainty_j"))
				? json_number_value(
				      json_object_get(sec, "energy_per_inference_uncertainty_j"))
				: NAN,
			    sec, r->issues, &e);
		}
		json_decref(out->section);
		out->section = sec;
		sec = NULL;
	}
	if (rc != 0 && live && g != NULL && out->section == NULL)
		live_partial(r, g, min_window_s, live_facts,
			     rc == ERGON_EINTR || prof_interrupted(r)
				 ? "interrupted (SIGINT) during the live capture"
				 : e.msg,
			     out);
	out->status = prof_stage_end(r, rc, &e, PROF_OK, &out->err);
	if (lc)
		r->drv->close(lc);
	json_decref(sec);
	json_decref(live_facts);
	json_decref(terminal);
	ergon_gated_free(g);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cap);
	ergon_layer_plan_free(&lp);
	prof_live_layers_cleanup(&ly);
}

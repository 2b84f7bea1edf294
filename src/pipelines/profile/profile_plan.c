/* The plan stage of `ergon profile`: what the run will do, derived from the
 * resolved configuration (counter passes from pmu.h, the effective window,
 * the lock-step decision, where each decision came from) and what each
 * stage boots (a firmware, or on the virtual bench a scenario, with the
 * bench's settings). Also the firmware lookup and the virtual bench's
 * scenario choice per stage. */
#include "ergon/ert_ina228_math.h"
#include "ergon/ert_window.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/pmu.h"
#include "ergon/profile.h"
#include "ergon/sim.h"
#include "pipelines/common/common.h"
#include "profile_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int has_fw_ext(const char *name)
{
	static const char *const exts[] = {".elf", ".axf", ".bin", ".hex"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && strcmp(name + n - e, exts[i]) == 0)
			return 1;
	}
	return 0;
}

int ergon_profile_firmware_find_link(const char *dir, int need_power, int link,
				     struct ergon_profile_firmware *fw, struct ergon_err *err)
{
	*fw = (struct ergon_profile_firmware){0};
	DIR *d = opendir(dir);
	if (d == NULL)
		return ergon_err_errno(err, errno,
				       "FIRMWARE_DIR %s: cannot open it; give the folder holding "
				       "the profile and power builds",
				       dir);
	/* Sorted choice: the lexically smallest match, so the pick does not
	 * depend on directory order. */
	char best_prof[256] = "", best_pow[256] = "", other[256] = "";
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;
		if (n[0] == '.' || !has_fw_ext(n) || strlen(n) >= sizeof best_prof)
			continue;
		if (strstr(n, "profile")) {
			/* The link the build speaks: "rtt" in its name. */
			int is_rtt = strstr(n, "rtt") != NULL;
			int fits = link == ERGON_PROFILE_FW_ANY ||
				   (link == ERGON_PROFILE_FW_RTT) == is_rtt;
			char *slot = fits ? best_prof : other;
			if (!slot[0] || strcmp(n, slot) < 0)
				snprintf(slot, sizeof best_prof, "%s", n);
		} else if (strstr(n, "power") && (!best_pow[0] || strcmp(n, best_pow) < 0))
			snprintf(best_pow, sizeof best_pow, "%s", n);
	}
	closedir(d);
	if (!best_prof[0] && link == ERGON_PROFILE_FW_RTT)
		return ergon_err_set(err, ERGON_ENOENT,
				     "FIRMWARE_DIR %s: target.transport is rtt but there is no "
				     "RTT profile firmware (a file named *profile*rtt* ending in "
				     "%s)%s%s; build the RTT profile firmware (the an547 one: "
				     "ergon_an547_profile_rtt.elf) or set target.transport: uart",
				     dir, ERGON_PROFILE_FW_EXTS, other[0] ? "; found only " : "",
				     other);
	if (!best_prof[0] && link == ERGON_PROFILE_FW_UART && other[0])
		return ergon_err_set(err, ERGON_ENOENT,
				     "FIRMWARE_DIR %s: target.transport is uart but the only "
				     "profile firmware, %s, is an RTT build; set target.transport: "
				     "rtt or build the UART profile firmware",
				     dir, other);
	if (!best_prof[0])
		return ergon_err_set(err, ERGON_ENOENT,
				     "FIRMWARE_DIR %s: no profile firmware (a file named *profile* "
				     "ending in %s); build the profile firmware into this folder",
				     dir, ERGON_PROFILE_FW_EXTS);
	if (need_power && !best_pow[0])
		return ergon_err_set(err, ERGON_ENOENT,
				     "FIRMWARE_DIR %s: no power firmware (a file named *power* "
				     "ending in %s); build the dedicated power firmware, or set "
				     "power.firmware: shared to reuse the profile build (its "
				     "transport contamination is then recorded)",
				     dir, ERGON_PROFILE_FW_EXTS);
	if ((size_t)snprintf(fw->profile, sizeof fw->profile, "%s/%s", dir, best_prof) >=
	    sizeof fw->profile)
		return ergon_err_set(err, ERGON_ETOOBIG, "FIRMWARE_DIR %s: path too long", dir);
	if (best_pow[0] && (size_t)snprintf(fw->power, sizeof fw->power, "%s/%s", dir, best_pow) >=
			       sizeof fw->power)
		return ergon_err_set(err, ERGON_ETOOBIG, "FIRMWARE_DIR %s: path too long", dir);
	return 0;
}

int ergon_profile_firmware_find(const char *dir, int need_power, struct ergon_profile_firmware *fw,
				struct ergon_err *err)
{
	return ergon_profile_firmware_find_link(dir, need_power, ERGON_PROFILE_FW_ANY, fw, err);
}

int ergon_profile_firmware_built(const json_t *model, int need_power,
				 struct ergon_profile_firmware *fw, struct ergon_err *err)
{
	*fw = (struct ergon_profile_firmware){0};
	const json_t *builds = json_object_get(model, "builds");
	size_t i;
	const json_t *b;
	json_array_foreach(builds, i, b)
	{
		const char *kind = json_string_value(json_object_get(b, "kind"));
		const char *elf = json_string_value(json_object_get(b, "elf"));
		char *slot = kind && strcmp(kind, "profile") == 0 ? fw->profile
			     : kind && strcmp(kind, "power") == 0 ? fw->power
								  : NULL;
		if (slot == NULL || elf == NULL)
			continue;
		if (strlen(elf) >= ERGON_PROFILE_PATH_MAX)
			return ergon_err_set(err, ERGON_ETOOBIG, "%s: path too long", elf);
		snprintf(slot, ERGON_PROFILE_PATH_MAX, "%s", elf);
	}
	if (!fw->profile[0] || (need_power && !fw->power[0]))
		return ergon_err_set(err, ERGON_ENOENT,
				     "the model's build record has no %s image (model.builds)",
				     fw->profile[0] ? "power" : "profile");
	return 0;
}

int ergon_profile_firmware_link(const struct ergon_config *cfg)
{
	/* Only QEMU's link is fixed by the build (UART0 or the RTT ring); a
	 * probe's firmware speaks what it was built for, whatever its name. */
	if (cfg->target.lifecycle != ERGON_LIFECYCLE_QEMU)
		return ERGON_PROFILE_FW_ANY;
	return cfg->target.transport == ERGON_TRANSPORT_RTT ? ERGON_PROFILE_FW_RTT
							    : ERGON_PROFILE_FW_UART;
}

static json_t *origin_of(const struct ergon_config *cfg, const char *key)
{
	int i = ergon_config_key_index(key);
	if (i < 0)
		return json_null();
	return json_pack("{s:s,s:s,s:s}", "origin", ergon_config_origin_name(cfg->origin[i]),
			 "where", cfg->where[i], "note", cfg->note[i]);
}

/* The INA228's rating with power.ina228.shunt_ohms and the shunt's
 * stated terms (power.ina228.shunt_tolerance_pct, shunt_tempco_ppm_per_c,
 * shunt_temp_span_c; unset stays unknown): what the plan's estimate and
 * (through prof_plan.ina228_rating) the power stage's budgets use. 0, or
 * -1 when there is no rating. */
static int prof_ina228_rating(const struct ergon_config *cfg, struct ergon_rating *r)
{
	if (ergon_rating_for_model("INA228", cfg->power.ina228.shunt_ohms, r) != 0)
		return -1;
	static const char *const keys[][2] = {
	    {"power.ina228.shunt_tolerance_pct", "shunt_tolerance_pct"},
	    {"power.ina228.shunt_tempco_ppm_per_c", "shunt_tempco_ppm_per_c"},
	    {"power.ina228.shunt_temp_span_c", "shunt_temp_span_c"}};
	const double v[] = {cfg->power.ina228.shunt_tolerance_pct,
			    cfg->power.ina228.shunt_tempco_ppm_per_c,
			    cfg->power.ina228.shunt_temp_span_c};
	for (size_t k = 0; k < 3; k++) {
		if (!isfinite(v[k]))
			continue;
		char val[40], who[96];
		snprintf(val, sizeof val, "%.17g", v[k]);
		snprintf(who, sizeof who, "%s", keys[k][0]);
		/* The key's range was checked when it was set. */
		struct ergon_err e = {0};
		if (ergon_rating_override(r, keys[k][1], val, who, &e) != 0)
			return -1;
	}
	return 0;
}

/* Can this meter resolve it? The power stage's budget estimate before a
 * second is measured (docs/UNCERTAINTY.md, "Before measuring"): the
 * rating the stage will budget with, the current the bench (or nothing,
 * on a real board) lets the plan expect, the planned window and the meter's
 * packet period, through ergon_gated_plan_budget. *refused: the gate
 * (power.max_uncertainty_pct) cannot be met, why says so. */
static json_t *power_estimate(const struct ergon_config *cfg, const json_t *model, int *refused,
			      char *why, size_t cap)
{
	int sim = cfg->target.lifecycle == ERGON_LIFECYCLE_SIM;
	int internal = cfg->power.mode == ERGON_POWER_INTERNAL;
	double p = isfinite(cfg->power.max_uncertainty_pct) ? cfg->power.max_uncertainty_pct : 0;
	struct ergon_rating rating;
	int have_rating = 0;
	const char *rating_from;
	struct ergon_gated_plan gp = {.current_a = NAN,
				      .voltage_v = cfg->power.rail_voltage,
				      .window_s = NAN,
				      .edge_s = NAN,
				      .energy_lsb_j = NAN};
	const char *current_from = "not known before measuring (a real board)";
	if (sim && model == NULL) {
		gp.current_a = ergon_sim_active_current_a();
		gp.voltage_v = ergon_sim_rail_v();
		current_from = "the virtual bench's layers (sim.h: 5 mA on its 1.8 V rail)";
	} else if (sim) {
		gp.voltage_v = ergon_sim_rail_v();
		current_from = "not known before the model runs (each operator kind draws its own "
			       "current, sim.h)";
	}
	if (cfg->profiling.window_mode == ERGON_WINDOW_AUTO)
		gp.window_s = (double)cfg->profiling.window_target_ms * 1e-3;
	if (internal) {
		have_rating =
		    prof_ina228_rating(cfg, &rating) == 0;
		rating_from = "the INA228 datasheet's figures (ratings.c) with "
			      "power.ina228.shunt_ohms";
		struct ert_ina228_plan ip;
		if (ert_ina228_plan(cfg->power.ina228.shunt_ohms, cfg->power.ina228.max_current_a,
				    &ip) == 0)
			gp.energy_lsb_j = ip.energy_lsb_j;
		/* Each end of the window within one conversion cycle. */
		gp.edge_s = 3.0 * (double)cfg->power.ina228.conversion_time_us *
			    (double)cfg->power.ina228.averaging_count * 1e-6;
	} else if (sim) {
		have_rating = ergon_rating_for_model("VBENCH", NAN, &rating) == 0;
		rating_from = "the virtual bench's declared meter (ratings.c VBENCH)";
		struct ergon_sim_options so;
		ergon_profile_sim_options(cfg, &so);
		/* Its simulated JS220 sums 1,000,000 samples a second. */
		gp.edge_s = so.js_stats_rate_hz > 0 ? 1.0 / so.js_stats_rate_hz : NAN;
		gp.samples_per_packet = so.js_stats_rate_hz > 0 ? 1e6 / so.js_stats_rate_hz : 0;
	} else {
		rating_from = "the live instrument's identity: read when it opens";
	}
	const char *window_from =
	    cfg->profiling.window_mode == ERGON_WINDOW_AUTO
		? "profiling.window_target_ms (auto window)"
		: "not known before the PMU stage times an inference (fixed window)";
	*refused = 0;
	struct ergon_budget b;
	int verdict; /* 0 may meet / no gate, 1 cannot (bound), 2 cannot (unknown), 3 cannot tell */
	if (!have_rating) {
		ergon_budget_init(&b, 1.0, "1");
		ergon_budget_close(&b);
		verdict = 3;
		snprintf(why, cap,
			 "the rating is the live instrument's own, read when it opens: nothing can "
			 "be estimated before; the gate%s applies to the measured figures",
			 p > 0 ? "" : " (none set)");
	} else {
		ergon_gated_plan_budget(&rating, &gp, &b);
		double lb = 100.0 * b.U_known;
		const char *dom = ergon_budget_dominant_name(&b);
		verdict = !(p > 0) ? 0 : !b.complete ? 2 : lb > p ? 1 : 0;
		if (verdict == 2)
			snprintf(why, cap,
				 "the budget will be incomplete (%s is unknown: %s), and an "
				 "incomplete budget fails the gate",
				 dom, b.term[b.dominant].source);
		else if (verdict == 1)
			snprintf(why, cap,
				 "the terms the plan bounds give %.3g %% (k = 2; largest: %s), "
				 "above the limit %g %%",
				 lb, dom, p);
		else if (!b.complete)
			snprintf(why, cap,
				 "no gate; the budget will be incomplete: %s is unknown (%s)", dom,
				 b.term[b.dominant].source);
		else if (p > 0)
			snprintf(why, cap,
				 "%.3g %% from the terms the plan bounds, within %g %% so far; the "
				 "measured terms (the firmware's window against the gate%s) add "
				 "to it",
				 lb, p,
				 isfinite(gp.current_a) ? "" : ", the offsets at the current");
		else
			snprintf(why, cap, "no gate; %.3g %% from the terms the plan bounds", lb);
		*refused = verdict == 1 || verdict == 2;
	}
	return json_pack(
	    "{s:s, s:o, s:s, s:o, s:s, s:o, s:o, s:s, s:o, s:o, s:b, s:s, s:s, s:o}", "figures",
	    "energy, mean power, energy per inference (charge carries no voltage terms)",
	    "expected_current_a", ergon_jnum(gp.current_a), "expected_current_from", current_from,
	    "window_s", ergon_jnum(gp.window_s), "window_from", window_from, "edge_s",
	    ergon_jnum(gp.edge_s), "voltage_v", ergon_jnum(gp.voltage_v), "rating_from",
	    rating_from, "estimate_pct", have_rating ? ergon_jnum(100.0 * b.U_known) : json_null(),
	    "max_uncertainty_pct", p > 0 ? json_real(p) : json_null(), "complete_expected",
	    have_rating && b.complete, "verdict",
	    verdict == 1 || verdict == 2 ? "cannot meet the limit"
	    : verdict == 3		 ? "not known before the instrument opens"
	    : p > 0			 ? "may meet the limit"
					 : "no gate",
	    "why", why, "budget", have_rating ? ergon_budget_json(&b) : json_null());
}

int prof_plan(const struct ergon_config *cfg, const struct ergon_profile_opts *o,
	      const json_t *model, struct prof_plan *out, struct ergon_err *err)
{
	*out = (struct prof_plan){0};
	out->have_ina228_rating = prof_ina228_rating(cfg, &out->ina228_rating) == 0;
	struct ergon_pmu_plan pp = {0};
	/* "default" is the CPU preset (heliaPROFILER's `cpu: default`). */
	const char *item = strcmp(cfg->profiling.pmu_counters_cpu, "default") == 0
			       ? "cpu"
			       : cfg->profiling.pmu_counters_cpu;
	int rc = ergon_pmu_plan(&item, 1, &pp, err);
	if (rc)
		return rc;
	json_t *passes = json_array();
	for (size_t i = 0; passes && i < pp.npasses; i++) {
		json_t *ev = json_array();
		for (size_t k = 0; ev && k < pp.passes[i].nevents; k++)
			json_array_append_new(ev, json_string(pp.passes[i].events[k]->name));
		json_array_append_new(
		    passes, json_pack("{s:s,s:o*}", "name", pp.passes[i].name, "events", ev));
	}
	int cycles = pp.cycles;
	ergon_pmu_plan_cleanup(&pp);
	json_t *plan = json_pack(
	    "{s:s,s:s,s:{s:o*,s:b,s:o*},s:{s:s,s:I,s:I,s:I,s:I,s:I,s:o*},s:{s:b,s:s,s:s,s:s,s:b,s:"
	    "o*,s:o*,s:o*}}",
	    "board", cfg->board ? cfg->board->name : cfg->target.board, "lifecycle",
	    prof_lifecycle_name(cfg), "counters", "passes", passes, "cycles", cycles, "from",
	    origin_of(cfg, "profiling.pmu_counters.cpu"), "window", "mode",
	    cfg->profiling.window_mode == ERGON_WINDOW_FIXED ? "fixed" : "auto", "target_ms",
	    (json_int_t)cfg->profiling.window_target_ms, "min",
	    (json_int_t)cfg->profiling.window_min, "max", (json_int_t)cfg->profiling.window_max,
	    "iterations", (json_int_t)cfg->profiling.iterations, "warmup",
	    (json_int_t)cfg->profiling.warmup, "target_ms_from",
	    origin_of(cfg, "profiling.window_target_ms"), "power", "enabled", cfg->power.enabled,
	    "mode", cfg->power.mode == ERGON_POWER_INTERNAL ? "internal" : "external", "firmware",
	    cfg->power.firmware == ERGON_FIRMWARE_SHARED ? "shared" : "dedicated", "driver",
	    cfg->power.driver, "lockstep", cfg->power.lockstep == 1, "lockstep_from",
	    origin_of(cfg, "power.lockstep"), "duration_s",
	    isnan(cfg->power.duration_s) ? json_null() : json_real(cfg->power.duration_s),
	    "duration_from", origin_of(cfg, "power.duration_s"));
	if (plan == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "profile plan: out of memory");
	out->json = plan;
	if (cfg->power.enabled && cfg->target.lifecycle != ERGON_LIFECYCLE_QEMU) {
		json_t *est =
		    power_estimate(cfg, model, &out->u_refused, out->u_why, sizeof out->u_why);
		if (est == NULL) {
			json_decref(plan);
			out->json = NULL;
			return ergon_err_set(err, ERGON_ENOMEM, "profile plan: out of memory");
		}
		json_object_set_new(json_object_get(plan, "power"), "uncertainty_estimate", est);
	}
	out->passes =
	    (unsigned)json_array_size(json_object_get(json_object_get(plan, "counters"), "passes"));
	if (o == NULL)
		return 0;
	/* What each stage boots. The virtual firmware is "built" with the
	 * resolved configuration (and, for ergon profile MODEL.tflite --board
	 * sim, runs the model: sim.h, model_path). */
	int sim = cfg->target.lifecycle == ERGON_LIFECYCLE_SIM;
	int internal = cfg->power.mode == ERGON_POWER_INTERNAL;
	int shared = cfg->power.firmware == ERGON_FIRMWARE_SHARED;
	if (sim) {
		ergon_profile_sim_options(cfg, &out->sim);
		out->sim.model_path = json_string_value(json_object_get(o->model, "path"));
		out->pmu_image = ergon_profile_sim_stage_scenario(o->sim_scenario, 0, 0);
	} else {
		out->pmu_image = o->fw->profile;
	}
	if (cfg->power.enabled && cfg->target.lifecycle != ERGON_LIFECYCLE_QEMU)
		out->power_image =
		    sim	     ? ergon_profile_sim_stage_scenario(o->sim_scenario, 1, internal)
		    : shared ? o->fw->profile
			     : o->fw->power;
	return 0;
}

int ergon_profile_sim_flow(const char *scenario)
{
	struct ergon_sim_result r;
	struct ergon_err e = {0};
	/* Scenarios are cheap (milliseconds of simulated time); the flow is
	 * the sim's own answer, not a copy of its table. */
	if (scenario == NULL || ergon_sim_run(scenario, &r, &e) != 0)
		return 0;
	int flow = r.flow;
	ergon_sim_result_cleanup(&r);
	return flow;
}

int ergon_profile_sim_power_checked(const char *scenario)
{
	return ergon_sim_scenario_power_checked(scenario);
}

int ergon_profile_sim_ina228_bystander(const char *scenario)
{
	return ergon_sim_scenario_ina228_bystander(scenario);
}

int ergon_profile_sim_flow_check(const char *scenario, int *flow, struct ergon_err *err)
{
	struct ergon_sim_result r;
	int rc = ergon_sim_run(scenario, &r, err); /* its message lists the names */
	if (rc != 0)
		return rc;
	*flow = r.flow;
	ergon_sim_result_cleanup(&r);
	return 0;
}

static uint32_t u32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Pins beyond 255 cannot be a GPIO; 255 is beyond the board's 15, so the
 * runtime refuses it at init (ERT_E_CONFIG) as real firmware would. */
static uint8_t pin8(uint64_t v)
{
	return v > 255u ? 255u : (uint8_t)v;
}

void ergon_profile_sim_options(const struct ergon_config *cfg, struct ergon_sim_options *o)
{
	ergon_sim_options_default(o);
	const struct ergon_sim_options d = *o;
	o->window_mode =
	    cfg->profiling.window_mode == ERGON_WINDOW_FIXED ? ERT_WINDOW_FIXED : ERT_WINDOW_AUTO;
	o->window_target_ms = u32(cfg->profiling.window_target_ms);
	o->window_min = u32(cfg->profiling.window_min);
	o->window_max = u32(cfg->profiling.window_max);
	o->iterations = u32(cfg->profiling.iterations);
	o->profile_iterations = o->iterations;
	o->warmup = u32(cfg->profiling.warmup);
	o->gate_pin = pin8(cfg->power.sync_gpio_pin);
	o->state_pin = pin8(cfg->power.state_gpio_pin);
	o->go_pin = pin8(cfg->power.go_gpio_pin);
	o->lockstep = cfg->power.lockstep == 1;
	o->ina228_addr7 =
	    cfg->power.ina228.i2c_address > 0x7F ? 0xFF : (uint8_t)cfg->power.ina228.i2c_address;
	o->ina228_iom = cfg->power.ina228.i2c_iom > 7 ? 0xFF : (uint8_t)cfg->power.ina228.i2c_iom;
	if (strcmp(cfg->power.ina228.board, "mikroe-power-monitor-click") == 0)
		o->ina228_board_addr7 = 0x4A; /* strapped on the Click */
	else if (strcmp(cfg->power.ina228.board, "adafruit-ina228") == 0)
		o->ina228_board_addr7 = 0x40;
	else
		o->ina228_board_addr7 = d.ina228_board_addr7; /* the bench's own strap, 0x40 */
	/* External mode may leave the shunt unset: the firmware does not
	 * touch the INA228 then, the default only keeps the model defined. */
	o->shunt_ohms = isfinite(cfg->power.ina228.shunt_ohms) && cfg->power.ina228.shunt_ohms > 0
			    ? cfg->power.ina228.shunt_ohms
			    : d.shunt_ohms;
	o->max_current_a =
	    isfinite(cfg->power.ina228.max_current_a) && cfg->power.ina228.max_current_a > 0
		? cfg->power.ina228.max_current_a
		: d.max_current_a;
	o->clean_window_trace = cfg->profiling.clean_window_trace != 0;
	o->attach_wait_set = 1;
	o->attach_wait_ms = u32(cfg->profiling.clean_window_attach_wait_ms);
	o->memory_mode = cfg->profiling.extreme_mode	    ? 1
			 : cfg->profiling.force_shared_sram ? 2
							    : 0;
	o->heartbeat_every_iters = 0; /* the configuration speaks in ops and ms */
	o->heartbeat_every_ops = u32(cfg->target.heartbeat.every_n_ops);
	o->heartbeat_every_ms = u32(cfg->target.heartbeat.every_ms);
	o->conv_time_us = u32(cfg->power.ina228.conversion_time_us);
	o->averages = u32(cfg->power.ina228.averaging_count);
	o->calibration_id = cfg->power.ina228.calibration_id;
	/* power.stats_rate_hz shapes the simulated Joulescope's packets when
	 * it was set; otherwise the bench keeps its own 10 kHz. */
	int ri = ergon_config_key_index("power.stats_rate_hz");
	if (ri >= 0 && (cfg->origin[ri] == ERGON_CFG_FILE || cfg->origin[ri] == ERGON_CFG_CLI))
		o->js_stats_rate_hz = (double)cfg->power.stats_rate_hz;
}

const char *ergon_profile_sim_stage_scenario(const char *chosen, int power_stage,
					     int power_internal)
{
	int flow = chosen ? ergon_profile_sim_flow(chosen) : 0;
	if (!power_stage)
		return flow == ERGON_SIM_FLOW_PROFILE ? chosen : "baseline_profile";
	if (flow == ERGON_SIM_FLOW_POWER_EXTERNAL || flow == ERGON_SIM_FLOW_POWER_INA228)
		return chosen;
	return power_internal ? "baseline_ina228" : "baseline_power";
}

/* The external power stage on a real board with a live instrument
 * (power.driver joulescope | ppk2, power.serial): open the instrument (a
 * Joulescope's passthrough switched on through its bridge, so that a board
 * powered through it is powered for the flash, and stays so through the
 * flash and the reset), open the lifecycle, flash the power build, then
 * the live capture arms the stream, resets the target through the
 * lifecycle, drops the reset grace period and feeds the stream to the
 * gated engine as it arrives. Nothing streams before the capture starts
 * (a bridge's data before `start` is refused, a PPK2 is not started), so
 * what the inputs saw during the flash never reaches the engine. The
 * Joulescope (a bridge with statistics packets) waits for READY and sets
 * GO (lock-step; ergon/live_gate.h); the PPK2 (raw 100 kSPS samples with
 * D0-D7, no outputs) is gate-only, its samples reduced to packets by the
 * engine's raw input with sample-precise edges (ergon/live_raw.h). The
 * target's terminal record is read from the lifecycle's endpoint after the
 * window closed (the power build is silent until then; the probe's RTT
 * buffer holds the record). On SIGINT the capture stops, what was fed is
 * kept in the engine and the live facts say `end: signal`. */
#include "ergon/artifact.h"
#include "ergon/bridge.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/layer_energy.h"
#include "ergon/live_gate.h"
#include "ergon/live_raw.h"
#include "ergon/model_fw.h"
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* GPIO seen this soon after the reset is flash/reset noise. */
#define LIVE_RESET_GRACE_S 0.06
#define LIVE_MIN_WINDOW_S 1.0
/* Allowance for the lifecycle's reset inside the capture's bound. */
#define LIVE_RESET_ALLOWANCE_S 10.0
/* READY within this after the grace period. */
#define LIVE_READY_TIMEOUT_S 5.0

struct reset_ctx {
	struct prof_run *r;
	struct ergon_lifecycle *lc;
};

static int reset_target(void *ctx, struct ergon_err *err)
{
	struct reset_ctx *c = ctx;
	return c->r->drv->reset(c->lc, err);
}

static const char *end_name(int end)
{
	return end == ERGON_LIVE_WINDOWS   ? "windows_closed"
	       : end == ERGON_LIVE_TIMEOUT ? "timeout"
	       : end == ERGON_LIVE_SIGNAL  ? "signal"
					   : "error";
}

/* The capture's facts. source is the instrument's own provenance: a
 * simulator or a stub behind a real driver is never "measured". */
static json_t *live_json(const struct ergon_live_config *lc, const struct ergon_live_result *res,
			 const char *spec, const struct ergon_instrument *inst)
{
	return json_pack("{s:s,s:s,s:s,s:b,s:b,s:f,s:b,s:s,s:I,s:I,s:I,s:f}", "instrument", spec,
			 "source", ergon_provenance_name(inst->identity.provenance), "stream",
			 "statistics_packets", "lockstep", lc->lockstep, "gate_only", !lc->lockstep,
			 "reset_grace_s", lc->reset_grace_s, "go_set", res->go_set, "end",
			 end_name(res->end), "windows_closed", (json_int_t)res->windows_closed,
			 "packets_fed", (json_int_t)res->packets_fed, "packets_discarded",
			 (json_int_t)res->packets_discarded, "ready_after_reset_s",
			 res->ready_observed ? res->ready_after_reset_s : -1.0);
}

static json_t *live_raw_json(const struct ergon_live_config *lc,
			     const struct ergon_live_raw_result *res, const char *spec,
			     const struct ergon_instrument *inst, double stats_rate_hz,
			     double vdd_v, const char *rail_from)
{
	json_t *o = json_pack(
	    "{s:s,s:s,s:s,s:b,s:b,s:f,s:b,s:s,s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I}", "instrument", spec,
	    "source", ergon_provenance_name(inst->identity.provenance), "stream", "raw_samples",
	    "lockstep", 0, "gate_only", 1, "reset_grace_s", lc->reset_grace_s, "go_set", 0, "end",
	    res->instrument_failed ? "instrument_failed" : end_name(res->end), "windows_closed",
	    (json_int_t)res->windows_closed, "sample_rate_hz", res->sample_rate_hz, "stats_rate_hz",
	    stats_rate_hz, "samples_fed", (json_int_t)res->samples_fed, "samples_discarded",
	    (json_int_t)res->samples_discarded, "samples_lost", (json_int_t)res->samples_lost,
	    "samples_out_of_order", (json_int_t)res->out_of_order, "gate_rises",
	    (json_int_t)res->rises);
	if (o && vdd_v > 0)
		json_object_set_new(
		    o, "rail_voltage",
		    json_pack("{s:f,s:s,s:s}", "v", vdd_v, "from", rail_from, "note",
			      "a PPK2 in ampere mode does not measure voltage: power and "
			      "energy use this stated rail voltage"));
	return o;
}

/* Where the measured rail's voltage came from: power.rail_voltage when it
 * is set, else power.io_voltage (the config rule). */
static const char *rail_from(const struct ergon_config *cfg)
{
	int i = ergon_config_key_index("power.rail_voltage");
	return i >= 0 && cfg->origin[i] == ERGON_CFG_RULE
		   ? "power.io_voltage (power.rail_voltage not set)"
		   : "power.rail_voltage";
}

/* power.driver ppk2: the PPK2 in ampere mode (in series with the board's
 * supply) on the rail power.rail_voltage states (power.io_voltage when it
 * is not set: config resolve). */
static int open_ppk2(const char *spec, const struct ergon_config *cfg,
		     struct ergon_instrument **inst, struct ergon_err *err)
{
	char vdd[32];
	long mv = lround(cfg->power.rail_voltage * 1000.0);
	if (mv < 800 || mv > 5000)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s %.3f V: a PPK2 works on 0.8..5 V rails; set "
				     "power.rail_voltage to the voltage of the measured rail",
				     rail_from(cfg), cfg->power.rail_voltage);
	snprintf(vdd, sizeof vdd, "vdd_mv=%ld", mv);
	const char *kv[] = {vdd, "mode=ampere", NULL};
	struct ergon_instrument_options o = {.kv = kv};
	return ergon_instrument_open(spec, &o, inst, err);
}

/* A bridge instrument (power.driver joulescope): opened at
 * power.stats_rate_hz (the bridge refuses a rate the model in hand cannot
 * give, naming those it can), and its passthrough switched on when it can
 * switch one (the bridge acks once the relay changed). */
static int open_bridge_powered(const char *spec, const struct ergon_config *cfg,
			       struct ergon_instrument **inst, struct ergon_err *err)
{
	char rate[48];
	snprintf(rate, sizeof rate, "stats_rate_hz=%llu",
		 (unsigned long long)cfg->power.stats_rate_hz);
	const char *kv[] = {rate, NULL};
	struct ergon_instrument_options o = {.kv = kv};
	int rc = ergon_instrument_open(spec, &o, inst, err);
	struct ergon_bridge_caps caps;
	if (rc == 0 && ergon_bridge_caps(*inst, &caps) == 0 && caps.passthrough) {
		struct ergon_err e = {0};
		rc = ergon_bridge_passthrough(*inst, 1, &e);
		if (rc)
			rc =
			    ergon_err_set(err, rc,
					  "power stage: %s: cannot switch the passthrough on "
					  "before the flash (the board it powers would be off): %s",
					  spec, e.msg);
	}
	if (rc) {
		ergon_instrument_close(*inst);
		*inst = NULL;
	}
	return rc;
}

/* ---- --layer-energy: the marker line beside the gate ---- */

#define LIVE_LAYER_PLAN_WHAT "--layer-energy: the PMU stage"

/* The capture's raw_tap: every block the gated engine gets, into the
 * layer engine too. A sample it refuses (a lost one is NaN: the method
 * needs every sample) stops the layers, not the capture. */
static int layers_tap(void *ctx, const float *current_a, const float *voltage_v,
		      const uint8_t *digital, size_t n, struct ergon_err *err)
{
	(void)err;
	struct prof_live_layers *ly = ctx;
	if (ly->failed || ly->L == NULL)
		return 0;
	if (ergon_layers_push(ly->L, current_a, voltage_v, NAN, digital, n, &ly->err) != 0)
		ly->failed = 1;
	return 0;
}

/* The capture's packet_tap (a Joulescope, lock-step off): each
 * statistics packet is one sample of the layer engine at
 * power.stats_rate_hz, its digital inputs the packet's (the levels at its
 * middle sample), its energy the one the gated engine takes (the
 * accumulators' step when the packet and the one before carry them, else
 * mean power x span) given as the packet's mean current at the voltage
 * that makes current x voltage that energy's power. A lost packet (a hole
 * in the spans) or a packet without a number stops the layers, not the
 * capture: the edges would be misplaced. */
#define PACKET_BLOCK 256
static int layers_packet_tap(void *ctx, const struct ergon_stats_packet *p, size_t n,
			     struct ergon_err *err)
{
	(void)err;
	struct prof_live_layers *ly = ctx;
	float cur[PACKET_BLOCK], volt[PACKET_BLOCK];
	uint8_t dig[PACKET_BLOCK];
	size_t m = 0;
	for (size_t k = 0; k < n && !ly->failed && ly->L != NULL; k++) {
		const struct ergon_stats_packet *q = &p[k];
		double span = q->t_end_s - q->t_start_s;
		if (ly->have_prev && q->t_start_s > ly->prev_t_end_s + 0.5 / ly->packet_rate_hz) {
			ly->failed = 1;
			ergon_err_set(&ly->err, ERGON_EPARSE,
				      "statistics packets %.9g..%.9g s are missing (a hole in "
				      "the stream): the marker edges after it cannot be placed",
				      ly->prev_t_end_s, q->t_start_s);
			break;
		}
		int acc = (q->fields & ERGON_PKT_ACCUM) && isfinite(q->energy_j);
		double pw = (q->fields & ERGON_PKT_POWER)     ? q->p_avg_w
			    : (q->fields & ERGON_PKT_VOLTAGE) ? q->i_avg_a * q->v_avg_v
							      : NAN;
		if (acc && ly->have_prev && ly->prev_acc && span > 0)
			pw = (q->energy_j - ly->prev_energy_j) / span;
		ly->have_prev = 1;
		ly->prev_acc = acc;
		ly->prev_energy_j = q->energy_j;
		ly->prev_t_end_s = q->t_end_s;
		double i = q->i_avg_a;
		double v = fabs(i) > 0 ? pw / i : (q->fields & ERGON_PKT_VOLTAGE) ? q->v_avg_v : NAN;
		cur[m] = (float)i;
		volt[m] = (float)v;
		dig[m] = (uint8_t)(q->digital & 0xffu);
		if (++m == PACKET_BLOCK || k + 1 == n) {
			if (ergon_layers_push(ly->L, cur, volt, NAN, dig, m, &ly->err) != 0)
				ly->failed = 1;
			m = 0;
		}
	}
	if (m > 0 && !ly->failed && ly->L != NULL &&
	    ergon_layers_push(ly->L, cur, volt, NAN, dig, m, &ly->err) != 0)
		ly->failed = 1;
	return 0;
}

int prof_live_layers_plan(struct prof_run *r, struct prof_live_layers *ly, json_t *stage,
			  struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	const struct ergon_profile_fw_build *fb = r->o->fw_build;
	int ppk2 = strcmp(cfg->power.driver, "ppk2") == 0;
	double rate_hz = ppk2 ? PROF_PPK2_RATE_HZ : (double)cfg->power.stats_rate_hz;
	ly->image[0] = '\0';
	int rc = ergon_layer_plan_from_profile(ly->profile, rate_hz, LIVE_LAYER_PLAN_WHAT,
					       &ly->plan, err);
	if (rc)
		return rc;
	char from[200];
	snprintf(from, sizeof from,
		 "the marker plan: the PMU stage's %zu layers at %.0f %s (%s), each marked "
		 "segment at least %g samples",
		 ly->plan.n_layers, rate_hz, ppk2 ? "samples/s" : "packets/s",
		 ppk2 ? "the PPK2's fixed rate" : "power.stats_rate_hz", ERGON_LAYERS_MIN_SAMPLES);
	json_t *mp = ergon_layer_plan_json(&ly->plan, from);
	if (mp == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	json_object_set_new(stage, "marker_plan", mp);
	if (fb != NULL && cfg->power.firmware == ERGON_FIRMWARE_SHARED) {
		/* The shared image is the profile build: it has no marker line,
		 * and the run asked for that image, not another. */
		json_object_set_new(
		    mp, "power_image",
		    json_pack("{s:s, s:s}", "built_by", "ergon (power.firmware: shared)", "carries",
			      "no marker line: the shared image is the profile build, which marks "
			      "no layer; use power.firmware: dedicated"));
		return 0;
	}
	if (fb == NULL) {
		/* The user's images: ergon cannot see which mask their power
		 * build carries; it says which one the plan needs. */
		json_object_set_new(
		    mp, "power_image",
		    json_pack("{s:s, s:s}", "built_by", "the user (FIRMWARE_DIR)", "carries",
			      "unknown to ergon: the power build must carry this plan's mask "
			      "(its ert_power_config.marker.mask = initializer, or a model main "
			      "built with define); one that marks every layer (mask all zero) "
			      "matches only when left_out is empty"));
		return 0;
	}
	struct ergon_model_fw_marker mk = {.from = from};
	memcpy(mk.mask, ly->plan.mask, sizeof mk.mask);
	prof_progress(r, "firmware", "the power build again, with the marker plan's mask");
	json_t *b = NULL;
	rc =
	    ergon_model_fw_build_power(fb->model_path, fb->board, fb->dir, fb->flags, &mk, &b, err);
	if (rc) {
		json_decref(b);
		return rc;
	}
	if (json_integer_value(json_object_get(json_object_get(b, "marker"), "pin")) == 0) {
		rc = ergon_err_set(
		    err, ERGON_EUSAGE,
		    "--layer-energy: board %s's port has no layer-marker line (its "
		    "descriptor's hal.gpio.marker is 0 or absent), so its power image "
		    "marks no layer; give the port a marker pin (docs/internals/ports.md) "
		    "or drop --layer-energy",
		    fb->board);
		json_decref(b);
		return rc;
	}
	const char *elf = json_string_value(json_object_get(b, "elf"));
	snprintf(ly->image, sizeof ly->image, "%s", elf ? elf : "");
	json_object_set_new(mp, "power_image",
			    json_pack("{s:s, s:s, s:O, s:O, s:s?}", "built_by",
				      "ergon, after the PMU stage", "carries", "this plan's mask",
				      "elf", json_object_get(b, "elf"), "elf_sha256",
				      json_object_get(b, "elf_sha256"), "build_record",
				      "build-power.json beside the ELF"));
	json_decref(r->power_build);
	r->power_build = b;
	return 0;
}

/* A layer engine for the capture at the opened meter's rate, on the
 * segments the plan made before it opened (the power image's, when ergon
 * built it with the plan's mask): the gate on power.sync_input_index, the
 * markers on power.marker_input_index, the meter's rating. A meter whose
 * rate differs from the plan's keeps those segments; a segment too short
 * at the real rate comes out unresolved, with the reason. */
static int layers_begin(struct prof_run *r, struct prof_live_layers *ly, double rate_hz,
			struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	if (!ly->plan.on)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: no marker plan was made before the meter opened",
				     LIVE_LAYER_PLAN_WHAT);
	ly->meter_rate_hz = rate_hz;
	struct ergon_layers_config c = {.sample_rate_hz = rate_hz,
					.gate_bit = (unsigned)cfg->power.sync_input_index,
					.marker_bit = ly->marker_input_index,
					.segments = ly->plan.n_segments,
					.rating = r->have_live_rating ? &r->live_rating : NULL,
					.sample_name = ly->packet_rate_hz > 0 ? "statistics packet"
									      : NULL};
	return ergon_layers_new(&c, &ly->L, err);
}

int prof_live_capture(struct prof_run *r, const char *dir, const char *image, double duration_s,
		      double window_hb_s, struct ergon_hpx_parser *p,
		      struct ergon_hpx_capture_result *cap, struct ergon_lifecycle **lc_out,
		      struct ergon_gated **g_out, json_t **live_out, struct prof_live_layers *ly,
		      struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	*g_out = NULL;
	*live_out = NULL;
	int raw = strcmp(cfg->power.driver, "ppk2") == 0;
	char spec[128];
	snprintf(spec, sizeof spec, "%s%s%s", cfg->power.driver, cfg->power.serial[0] ? ":" : "",
		 cfg->power.serial);
	/* The same options as the boot path: target.probe, the stream and
	 * the reset strategy reach the lifecycle here too. */
	struct ergon_lifecycle_opts lo = r->lo;
	lo.work_dir = dir;
	struct ergon_lifecycle *lc = NULL;
	struct ergon_instrument *inst = NULL;
	struct ergon_gated *g = NULL;
	/* The meter first: its passthrough powers the board for the flash. */
	int rc =
	    raw ? open_ppk2(spec, cfg, &inst, err) : open_bridge_powered(spec, cfg, &inst, err);
	if (rc)
		return rc;
	rc = r->drv->open(&lo, &lc, err);
	if (rc) {
		ergon_instrument_close(inst);
		return rc;
	}
	*lc_out = lc;
	rc = r->drv->flash(lc, image, err);
	int flashed = rc == 0;
	/* Raw samples are reduced to packets at power.stats_rate_hz (1 ms by
	 * default, as the Joulescope's statistics); a Joulescope's packets come
	 * at the rate its bridge announced (the one asked for). */
	struct ergon_bridge_caps caps = {0};
	if (!raw && inst != NULL)
		ergon_bridge_caps(inst, &caps);
	/* The instrument's rating outlives it (r holds the copy): the engine
	 * puts packets in its ranges, the power section budgets with it. */
	if (inst != NULL) {
		r->live_rating = inst->identity.rating;
		r->have_live_rating = 1;
	}
	struct ergon_gated_config gc = {.min_window_s = LIVE_MIN_WINDOW_S,
					.stats_rate_hz = raw ? (double)cfg->power.stats_rate_hz
							     : caps.stats_rate_hz,
					.sync_input_index = (unsigned)cfg->power.sync_input_index,
					.rating = r->have_live_rating ? &r->live_rating : NULL};
	if (!rc)
		rc = ergon_gated_new(&gc, &g, err);
	/* The layer engine at the PPK2's own rate, or at a Joulescope's
	 * packet rate (the accept stage refused it with lock-step on, where
	 * INPUT1 is READY). */
	if (!rc && ly != NULL && raw && inst != NULL)
		rc = layers_begin(r, ly, inst->identity.sample_rate_hz, err);
	if (!rc && ly != NULL && !raw && inst != NULL && cfg->power.lockstep != 1 &&
	    caps.stats_rate_hz > 0) {
		ly->packet_rate_hz = caps.stats_rate_hz;
		rc = layers_begin(r, ly, caps.stats_rate_hz, err);
	}
	struct reset_ctx rctx = {.r = r, .lc = lc};
	/* Duration bounds the whole capture; the window's end stops it. */
	struct ergon_live_config lcfg = {
	    .sync_input_index = (unsigned)cfg->power.sync_input_index,
	    .state_input_index = (unsigned)cfg->power.state_input_index,
	    .go_output_index = (unsigned)cfg->power.go_output_index,
	    .lockstep = cfg->power.lockstep == 1,
	    .reset_grace_s = LIVE_RESET_GRACE_S,
	    /* The bound counts from before the reset: the probe's reset
	     * (JLinkExe, openocd) takes seconds of its own. */
	    .timeout_s = (duration_s > 0 ? duration_s : 60.0) + LIVE_RESET_ALLOWANCE_S,
	    .ready_timeout_s = LIVE_READY_TIMEOUT_S,
	    .min_window_s = LIVE_MIN_WINDOW_S,
	    .windows = 1,
	    .reset = reset_target,
	    .reset_ctx = &rctx,
	    .stop = r->o->interrupted,
	    /* A simulated instrument's stream carries the simulated target's
	     * time (it starts with the target's reset) and may run faster than
	     * the host: reset, grace and READY follow the packets. A measured
	     * one keeps the host clock (a real reset takes the probe's
	     * seconds while the stream already runs). */
	    .packet_clock = inst != NULL && inst->identity.provenance == ERGON_PROV_SYNTHETIC,
	    .raw_tap = raw && ly != NULL && ly->L != NULL ? layers_tap : NULL,
	    .raw_tap_ctx = ly,
	    .packet_tap = !raw && ly != NULL && ly->L != NULL ? layers_packet_tap : NULL,
	    .packet_tap_ctx = ly,
	};
	struct ergon_live_result res = {0};
	struct ergon_live_raw_result rres = {0};
	if (!rc && !prof_interrupted(r)) {
		if (raw)
			rc = ergon_live_raw_capture(inst, &lcfg, g, &rres, err);
		else
			rc = ergon_live_gated_capture(inst, &lcfg, g, &res, err);
	}
	int end = raw ? rres.end : res.end;
	unsigned long long fed = raw ? rres.samples_fed : res.packets_fed;
	if (inst && flashed)
		*live_out =
		    raw ? live_raw_json(&lcfg, &rres, spec, inst, (double)cfg->power.stats_rate_hz,
					cfg->power.rail_voltage, rail_from(cfg))
			: live_json(&lcfg, &res, spec, inst);
	if (!rc && end == ERGON_LIVE_TIMEOUT)
		rc = ergon_err_set(
		    err, ERGON_ETIMEDOUT,
		    "power stage: %s: no gate window of at least %.1f s closed within "
		    "%.1f s%s (%llu %s seen); check the gate wire (target pin "
		    "%llu -> instrument %s%llu), that the instrument's logic reference "
		    "matches the target's I/O voltage (power.io_voltage %.2g V: %s), "
		    "or raise power.duration_s",
		    spec, LIVE_MIN_WINDOW_S, lcfg.timeout_s,
		    lcfg.packet_clock ? " of the synthetic instrument's own clock (or nothing "
					"came for that long)"
				      : "",
		    fed, raw ? "samples" : "packets",
		    (unsigned long long)cfg->power.sync_gpio_pin, raw ? "D" : "INPUT",
		    (unsigned long long)cfg->power.sync_input_index, cfg->power.io_voltage,
		    raw ? "a PPK2's logic port reads D0-D7 against its VCC pin, which must be "
			  "wired to the target's I/O rail"
			: "a gate that swings below the Joulescope's I/O reference voltage "
			  "(Vref) never reads high");
	if (!rc && end == ERGON_LIVE_SIGNAL)
		rc = ERGON_EINTR;
	if (!rc && !prof_interrupted(r)) {
		struct ergon_hpx_target_opts to =
		    prof_capture_opts(r, dir, duration_s, duration_s, window_hb_s);
		rc = ergon_hpx_capture_endpoint(&to, lc, p, cap, err);
	}
	if (prof_interrupted(r) && rc == 0)
		rc = ERGON_EINTR;
	if (inst && flashed)
		ergon_instrument_unvalidated_issue(inst, r->issues);
	if (inst && *live_out) {
		json_t *id = ergon_instrument_identity_json(inst);
		if (id)
			json_object_set_new(*live_out, "identity", id);
		/* What the driver saw (lost samples, an unplug) decides too. */
		json_array_extend(r->issues, inst->issues);
	}
	ergon_instrument_close(inst);
	struct ergon_err fe = {0};
	r->drv->finish(lc, &fe);
	*g_out = g;
	return rc;
}

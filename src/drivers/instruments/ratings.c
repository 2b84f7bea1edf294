/* The ratings ergon holds for instruments more than one driver or
 * pipeline meets (ergon_rating_for_model): each figure with the document
 * and section it is read from, and "unknown" with the reason where the
 * vendor's figure could not be read. docs/UNCERTAINTY.md lists them; never
 * add a figure here without its source. */
#include "ergon/instrument.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RANGE_RULE                                                                          \
	"inferred: the smallest range whose full scale holds the largest |current| of the " \
	"statistics period and of the one before (the instrument autoranges; a range it "   \
	"left a period ago may still hold)"

static void range(struct ergon_rating *r, const char *name, double fs_a)
{
	struct ergon_rating_range *g = &r->range[r->n_ranges++];
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->full_scale_a = fs_a;
}

static void joulescope(struct ergon_rating *r, int js110)
{
	static const char *const ug220 =
	    "ergon holds no figure for it: the JS220 User's Guide rev 1.3 (2022-10-25) states "
	    "it in its current measurement specifications, which could not be read where "
	    "this rating was written; give it with rating.i_gain_pct / rating.i_offset_a";
	static const char *const ug110 =
	    "ergon holds no figure for this range: of the Joulescope User's Guide's (JS110) "
	    "p. 12 accuracy table only the 2 A range could be read (quoted by Jetperch on "
	    "forum.joulescope.com t/388); give it with rating.i_gain_pct / rating.i_offset_a";
	ergon_rating_init(r, ERGON_RATING_IV);
	/* The ranges, and the JS110's 2 A range shared with 10 A on one 0.01
	 * ohm shunt: forum.joulescope.com t/268 (Jetperch, "6 resistor values
	 * and 7 ranges"). */
	range(r, "18 uA", 18e-6);
	range(r, "180 uA", 180e-6);
	range(r, "1.8 mA", 1.8e-3);
	range(r, "18 mA", 18e-3);
	range(r, "180 mA", 180e-3);
	if (js110)
		range(r, "2 A", 2.0);
	range(r, "10 A", INFINITY);
	for (int i = 0; i < r->n_ranges; i++) {
		ergon_rated_unknown(&r->range[i].gain_pct, "%s", js110 ? ug110 : ug220);
		ergon_rated_unknown(&r->range[i].offset_a, "%s", js110 ? ug110 : ug220);
	}
	if (js110) {
		struct ergon_rating_range *g = &r->range[5];
		ergon_rated_set(&g->gain_pct, 0.3,
				"Joulescope User's Guide (JS110) p. 12, 2 A range: 0.3 %% of "
				"reading (quoted by Jetperch, forum.joulescope.com t/388)");
		ergon_rated_set(&g->offset_a, 1.5e-3,
				"Joulescope User's Guide (JS110) p. 12, 2 A range: +-1.5 mA "
				"(quoted by Jetperch, forum.joulescope.com t/388)");
	}
	ergon_rated_unknown(&r->v_gain_pct,
			    "%s voltage accuracy: not readable from this "
			    "workplace",
			    js110 ? "Joulescope User's Guide (JS110)" : "JS220 User's Guide");
	ergon_rated_unknown(&r->v_offset_v,
			    "%s voltage accuracy: not readable from this "
			    "workplace",
			    js110 ? "Joulescope User's Guide (JS110)" : "JS220 User's Guide");
	ergon_rated_unknown(&r->timebase_ppm, "the Joulescope's sample clock tolerance: not "
					      "stated in the sources available here");
	snprintf(r->range_rule, sizeof(r->range_rule), "%s", RANGE_RULE);
	ergon_rating_build_power_view(r);
}

/* TI INA228 (SLYS021A): current-channel figures from section 1 (Features),
 * the bus voltage's gain from TI's answer on E2E, the oscillator from
 * section 3 (Description). ADCRANGE = 0 (what the kernel's ina238 driver
 * and ergon-target use): 163.84 mV full scale, 312.5 nV per LSB (Table
 * 8-1). */
static void ina228(struct ergon_rating *r, double shunt_ohm)
{
	ergon_rating_init(r, ERGON_RATING_IV);
	r->n_ranges = 1;
	struct ergon_rating_range *g = &r->range[0];
	snprintf(g->name, sizeof(g->name), "ADCRANGE 0");
	g->full_scale_a = isfinite(shunt_ohm) && shunt_ohm > 0 ? 163.84e-3 / shunt_ohm : INFINITY;
	g->resolution_a = isfinite(shunt_ohm) && shunt_ohm > 0 ? 312.5e-9 / shunt_ohm : 0;
	ergon_rated_set(&g->gain_pct, 0.05,
			"TI SLYS021A (INA228) section 1 Features: current monitoring gain error "
			"+-0.05 %% (maximum; at 25 C, drift +-20 ppm/C not included)");
	if (isfinite(shunt_ohm) && shunt_ohm > 0)
		ergon_rated_set(&g->offset_a, 1e-6 / shunt_ohm,
				"TI SLYS021A (INA228) section 1 Features: offset voltage +-1 uV "
				"(maximum) / the %.6g ohm shunt",
				shunt_ohm);
	else
		ergon_rated_unknown(&g->offset_a,
				    "TI SLYS021A: offset +-1 uV, but the shunt's resistance is not "
				    "known: no current offset");
	ergon_rated_set(&r->v_gain_pct, 0.05,
			"TI E2E thread 1279620 (TI's answer on the INA228's P_TME): VBUS gain "
			"error 0.05 %% maximum at room temperature");
	ergon_rated_unknown(&r->v_offset_v,
			    "INA228 VBUS offset: not in the sources available here (SLYS021A "
			    "section 1 states the current channel only); give rating.v_offset_v");
	ergon_rated_set(
	    &r->timebase_ppm, 5000.0,
	    "TI SLYS021A (INA228) section 3 Description: precision +-0.5 %% "
	    "integrated oscillator (the ENERGY and CHARGE accumulators count its time)");
	r->external_shunt = 1;
	ergon_rated_unknown(&r->shunt_tol_pct,
			    "the board's shunt tolerance is not stated: set "
			    "power.ina228.shunt_tolerance_pct (or rating.shunt_tolerance_pct)");
	ergon_rated_unknown(&r->shunt_tempco_ppm_c,
			    "the board's shunt temperature coefficient is not stated: set "
			    "power.ina228.shunt_tempco_ppm_per_c");
	ergon_rated_unknown(&r->shunt_temp_span_c,
			    "how far the shunt's temperature is from its rating temperature is not "
			    "stated: set power.ina228.shunt_temp_span_c");
	r->view_a = g->full_scale_a;
	ergon_rating_build_power_view(r);
}

/* TI INA3221 (SBOS576B): section 1 (Features) states one offset and one
 * gain error, for the shunt (current) channel; the bus channel's figures
 * were not readable here. 40 uV per LSB, 163.8 mV full scale. */
static void ina3221(struct ergon_rating *r, double shunt_ohm)
{
	ergon_rating_init(r, ERGON_RATING_IV);
	r->n_ranges = 1;
	struct ergon_rating_range *g = &r->range[0];
	snprintf(g->name, sizeof(g->name), "shunt");
	int have_r = isfinite(shunt_ohm) && shunt_ohm > 0;
	g->full_scale_a = have_r ? 163.8e-3 / shunt_ohm : INFINITY;
	g->resolution_a = have_r ? 40e-6 / shunt_ohm : 0;
	ergon_rated_set(&g->gain_pct, 0.25,
			"TI SBOS576B (INA3221) section 1 Features: gain error 0.25 %% (max)");
	if (have_r)
		ergon_rated_set(&g->offset_a, 80e-6 / shunt_ohm,
				"TI SBOS576B (INA3221) section 1 Features: offset voltage +-80 uV "
				"(max) / the %.6g ohm shunt",
				shunt_ohm);
	else
		ergon_rated_unknown(
		    &g->offset_a, "TI SBOS576B: offset +-80 uV, but the shunt's resistance is not "
				  "known: no current offset");
	ergon_rated_unknown(&r->v_gain_pct, "INA3221 bus-voltage gain error: not in the sources "
					    "available here; give rating.v_gain_pct");
	ergon_rated_unknown(&r->v_offset_v, "INA3221 bus-voltage offset: not in the sources "
					    "available here; give rating.v_offset_v");
	ergon_rated_unknown(&r->timebase_ppm, "host-timed readings: the host clock's bound "
					      "applies");
	r->external_shunt = 1;
	ergon_rated_unknown(&r->shunt_tol_pct, "the board's shunt tolerance is not stated: give "
					       "rating.shunt_tolerance_pct");
	ergon_rated_unknown(&r->shunt_tempco_ppm_c,
			    "the board's shunt temperature coefficient is not stated: give "
			    "rating.shunt_tempco_ppm_per_c");
	ergon_rated_unknown(&r->shunt_temp_span_c,
			    "the shunt's temperature span is not stated: give "
			    "rating.shunt_temp_span_c");
	r->view_a = g->full_scale_a;
	ergon_rating_build_power_view(r);
}

/* The virtual bench's meter (sim/): a simulation that reads its rail
 * exactly. The rating it declares is the model's, not a datasheet's: the
 * coverage tests draw their seeded errors within it. */
static void vbench(struct ergon_rating *r)
{
	static const char *const src = "declared by ergon's virtual bench meter (a simulation, "
				       "not a datasheet; tests draw seeded errors within it)";
	ergon_rating_init(r, ERGON_RATING_IV);
	range(r, "1.8 mA", 1.8e-3);
	range(r, "18 mA", INFINITY);
	ergon_rated_set(&r->range[0].gain_pct, 0.2, "%s", src);
	ergon_rated_set(&r->range[0].offset_a, 2e-6, "%s", src);
	r->range[0].resolution_a = 50e-9;
	ergon_rated_set(&r->range[1].gain_pct, 0.2, "%s", src);
	ergon_rated_set(&r->range[1].offset_a, 10e-6, "%s", src);
	r->range[1].resolution_a = 500e-9;
	ergon_rated_set(&r->v_gain_pct, 0.2, "%s", src);
	ergon_rated_set(&r->v_offset_v, 1e-3, "%s", src);
	ergon_rated_set(&r->timebase_ppm, 50.0, "%s", src);
	snprintf(r->range_rule, sizeof(r->range_rule), "%s", RANGE_RULE);
	r->view_v = 1.8;
	r->view_a = 0.02;
	ergon_rating_build_power_view(r);
}

int ergon_rating_for_model(const char *model, double shunt_ohm, struct ergon_rating *out)
{
	if (model == NULL)
		return ERGON_ENOENT;
	if (strcasecmp(model, "JS220") == 0)
		joulescope(out, 0);
	else if (strcasecmp(model, "JS110") == 0)
		joulescope(out, 1);
	else if (strcasecmp(model, "INA228") == 0)
		ina228(out, shunt_ohm);
	else if (strcasecmp(model, "INA3221") == 0)
		ina3221(out, shunt_ohm);
	else if (strcasecmp(model, "VBENCH") == 0)
		vbench(out);
	else
		return ERGON_ENOENT;
	return 0;
}

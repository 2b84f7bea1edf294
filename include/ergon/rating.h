/* An instrument's rated accuracy, as its vendor states it (docs/UNCERTAINTY.md):
 * per current range a gain and an offset bound, the voltage's gain and
 * offset, or for instruments rated on the power reading itself a gain and
 * an absolute bound; the shunt's tolerance and temperature coefficient
 * where the shunt is not the instrument's own (an INA228 or INA3221 on a
 * board); the instrument's own timebase. Every figure carries its source;
 * a figure nobody states is NaN ("unknown"), never 0, and makes every
 * budget that needs it incomplete.
 *
 * Drivers fill a rating into their identity; the gated engine and the
 * run's figures turn it into budget terms (ergon/budget.h).
 */
#ifndef ERGON_RATING_H
#define ERGON_RATING_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_RATING_MAX_RANGES 8
#define ERGON_RATING_SRC 200

/* One stated figure and where it is stated. */
struct ergon_rated {
	double value; /* NaN: unknown (nobody states it) */
	char source[ERGON_RATING_SRC];
};

struct ergon_rating_range {
	char name[24];		     /* "18 mA", "range 0" */
	double full_scale_a;	     /* the largest |current| it holds; INFINITY: the widest */
	struct ergon_rated gain_pct; /* current gain error bound, % of reading */
	struct ergon_rated offset_a; /* current offset bound, A */
	double resolution_a;	     /* one step, A; 0: not known */
};

/* A term of the rating as it bears on a power reading (the run's view):
 * a gain (% of the reading) or an absolute bound (W). */
enum ergon_pterm_kind {
	ERGON_PTERM_GAIN_PCT = 1,
	ERGON_PTERM_OFFSET_W = 2,
};
#define ERGON_RATING_MAX_PTERMS 8
struct ergon_rating_pterm {
	char name[32];
	int kind; /* enum ergon_pterm_kind */
	struct ergon_rated x;
};

enum ergon_rating_model {
	ERGON_RATING_NONE = 0,	/* nothing known: every rated term is unknown */
	ERGON_RATING_POWER = 1, /* rated on the power (or energy) reading itself */
	ERGON_RATING_IV = 2,	/* rated per current range and on the voltage */
};

struct ergon_rating {
	int model; /* enum ergon_rating_model */
	/* The power view: what bounds a power reading. ERGON_RATING_POWER
	 * states it directly; ERGON_RATING_IV builds it from the ranges, the
	 * voltage and the shunt at view_v and view_a
	 * (ergon_rating_build_power_view). */
	int n_pterms;
	struct ergon_rating_pterm pterm[ERGON_RATING_MAX_PTERMS];
	int offset_constant; /* one offset for every reading (a single range) */
	double view_v;	     /* the rail's voltage for the power view (NaN: unknown) */
	double view_a;	     /* the largest current it may carry (NaN: unknown) */
	/* ERGON_RATING_IV: current ranges (ascending full scale) and voltage. */
	int n_ranges;
	struct ergon_rating_range range[ERGON_RATING_MAX_RANGES];
	struct ergon_rated v_gain_pct, v_offset_v;
	/* How a reading's range is known (static text in the JSON). */
	char range_rule[200];
	/* The shunt is the board's, not the instrument's: its tolerance (%),
	 * temperature coefficient (ppm/C) and how far its temperature may be
	 * from the temperature its value holds at (C). */
	int external_shunt;
	struct ergon_rated shunt_tol_pct, shunt_tempco_ppm_c, shunt_temp_span_c;
	/* The instrument's own timebase (the clock its samples or its
	 * accumulator run on), ppm. Host-timed instruments leave it NaN with
	 * the source "host clock": the host's bound is the run's. */
	struct ergon_rated timebase_ppm;
	/* Free text: who checked what (a driver validated against a fake). */
	char notes[200];
};

/* Every figure unknown, model as given. */
ERGON_API void ergon_rating_init(struct ergon_rating *r, int model);
/* Append a power-view term (dropped beyond ERGON_RATING_MAX_PTERMS);
 * value NaN: unknown, the source says why. */
ERGON_API void ergon_rating_add_pterm(struct ergon_rating *r, const char *name, int kind,
				      double value, const char *source_fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* For ERGON_RATING_IV: the power view from the ranges (the widest gain and
 * offset of any range, the offset at view_v), the voltage's gain and
 * offset (a gain of offset / view_v: it moves P by I x dv = P x dv / V) and
 * an external shunt's tolerance and temperature coefficient;
 * offset_constant when there is one range. */
ERGON_API void ergon_rating_build_power_view(struct ergon_rating *r);
/* Set a figure and its source (printf format). */
ERGON_API void ergon_rated_set(struct ergon_rated *x, double value, const char *source_fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Mark a figure unknown with the reason. */
ERGON_API void ergon_rated_unknown(struct ergon_rated *x, const char *why_fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* 1 when the figure is stated (finite). */
ERGON_API int ergon_rated_known(const struct ergon_rated *x);

/* The range a reading of |current| abs_a was taken in, for an autoranging
 * instrument: the smallest range whose full scale holds it (the widest
 * when none does); 0 for a single-range instrument or none. */
ERGON_API int ergon_rating_range_for(const struct ergon_rating *r, double abs_a);

/* Override a figure from "key=value" (--instrument-opt rating.KEY=V,
 * --rating KEY=V, config power.ina228.*): gain_pct and offset_w replace
 * every gain (offset) term of the power view by the one stated; v_gain_pct,
 * v_offset_v, i_gain_pct, i_offset_a, i_step_a (every range), shunt_tolerance_pct,
 * shunt_tempco_ppm_per_c, shunt_temp_span_c and timebase_ppm set that
 * figure (an IV rating's power view is then rebuilt). `who` names where
 * the value came from in its source ("--instrument-opt"). ERGON_EUSAGE
 * names an unknown key or a bad number. */
ERGON_API int ergon_rating_override(struct ergon_rating *r, const char *key, const char *value,
				    const char *who, struct ergon_err *err);

/* The rating as JSON (new reference) and back. from_json refuses a
 * malformed object (ERGON_EPARSE naming the field under `where`). */
ERGON_API json_t *ergon_rating_to_json(const struct ergon_rating *r);
ERGON_API int ergon_rating_from_json(const json_t *j, const char *where, struct ergon_rating *r,
				     struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

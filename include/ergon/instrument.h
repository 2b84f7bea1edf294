/* The instrument driver interface.
 *
 * One `const struct ergon_instrument_driver` per driver, registered in the
 * table in src/drivers/instruments/registry.c. A driver turns a device into a
 * sample stream and describes itself with an identity; it never computes
 * figures. Optional entries may be NULL; the wrappers answer ERGON_ENOTSUP.
 * A driver written from a datasheet but never run against the part must
 * refuse to open with ERGON_EUNPORTED.
 */
#ifndef ERGON_INSTRUMENT_H
#define ERGON_INSTRUMENT_H

#include <jansson.h>
#include <stddef.h>

#include "ergon/error.h"
#include "ergon/rating.h"
#include "ergon/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_MAX_RAILS 8

/* What an instrument is and how far to trust it. */
struct ergon_instrument_identity {
	char vendor[64];
	char model[64];
	char serial[64];
	double accuracy_pct;        /* rated accuracy, % of reading (gain error) */
	double resolution_w;        /* absolute power floor per reading, W (from LSBs) */
	double resolution_j;        /* energy accumulator LSB, J (0 if none) */
	double floor_w;             /* documented absolute power accuracy, W, on every energy (0: none) */
	double sample_rate_hz;      /* nominal hardware update rate (0 if unknown) */
	double averaging_period_s;  /* power readings average over this period (0: instantaneous) */
	/* A driver that states a nominal update interval rather than a
	 * sample rate (hwmon's sysfs update_interval, "~1 ms" in the Jetson
	 * method): that interval, s (0: none; sample_rate_hz stays 0). */
	double update_interval_s;
	/* Measured, set when the instrument stops: distinct updates per
	 * second over the run (the slowest rail), what the readings really
	 * resolved in time (0: not measured). */
	double distinct_rate_hz;
	char integrates[32];        /* "none", "energy", "energy+charge" */
	char clock[32];             /* "host_monotonic" or "instrument" */
	int provenance;             /* enum ergon_provenance */
	int n_rails;                /* channels in the stream (>= 1) */
	int total_rail;             /* index of the module's total input rail, -1 if none */
	char rails[ERGON_MAX_RAILS][48]; /* rail names, by channel */
	char notes[512];            /* free text: wiring, wrap time, caveats */
	/* The unported rule: what a driver ergon ships was checked against
	 * when it has never run against the part ("a protocol simulator
	 * only"); "" when it has. A non-empty value is in the identity
	 * ("validated_against") and raises instrument.unvalidated_driver
	 * (info) in every artifact (ergon_instrument_open). */
	char validated_against[128];
	/* sysfs-backed drivers (hwmon, rapl) read under this root when it is
	 * not "/" (--sysfs-root, ERGON_SYSFS_ROOT): a tree that may be a copy
	 * or a fake, so the figures are synthetic unless --provenance
	 * measured says otherwise; "" for "/" and other drivers. */
	char sysfs_root[256];
	/* The rated accuracy with its sources, per range where the
	 * instrument has ranges (ergon/rating.h, docs/UNCERTAINTY.md).
	 * ergon_instrument_open sets every figure unknown before the driver's
	 * open; a driver states what its vendor states. A driver that leaves
	 * the model ERGON_RATING_NONE gets a power view made from
	 * accuracy_pct and floor_w when they are set (bridges, replays with
	 * --instrument-opt accuracy_pct), else "unknown". --instrument-opt
	 * rating.KEY=VALUE overrides a figure (ergon_rating_override). */
	struct ergon_rating rating;
};

/* Options given on the command line as key=value (--instrument-opt) and the
 * text after "name:" in --instrument. */
struct ergon_instrument_options {
	const char *arg;            /* "VDD_IN,VDD_SOC" in hwmon:VDD_IN,VDD_SOC; may be NULL */
	const char *const *kv;      /* NULL-terminated "key=value" strings; may be NULL */
	const char *sysfs_root;     /* root override for sysfs-backed drivers; NULL = "/" */
	int provenance_override;    /* replay: provenance given by --provenance; 0 = none */
};

struct ergon_instrument;

struct ergon_instrument_driver {
	const char *name;
	const char *longname;
	/* List usable devices as a JSON array of {id, identity...}; or explain
	 * in err why none is usable (no device, permission, no library) and how
	 * to fix it. Optional. */
	int (*scan)(const struct ergon_instrument_options *opts, json_t **found,
		    struct ergon_err *err);
	/* Open the device; fill inst->identity; set inst->priv. */
	int (*open)(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		    struct ergon_err *err);
	int (*start)(struct ergon_instrument *inst, struct ergon_err *err);
	/* Return up to cap samples in buf, *n set. Blocking but bounded: returns
	 * with *n == 0 rather than waiting long. A driver whose device is
	 * polled returns one fresh reading per call. */
	int (*read)(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		    struct ergon_err *err);
	int (*stop)(struct ergon_instrument *inst, struct ergon_err *err);
	void (*close)(struct ergon_instrument *inst);
	/* Tell a synthetic/simulated instrument what the workload is doing
	 * (load level 0..1, phase). Real drivers leave it NULL. */
	void (*hint_load)(struct ergon_instrument *inst, double load);
	/* What the driver saw while reading, as a JSON object the caller owns:
	 * per rail the read rate beside the rate of distinct hardware updates,
	 * device evidence (temperature, throttle reasons). Optional. */
	json_t *(*stats)(const struct ergon_instrument *inst);
};

struct ergon_instrument {
	const struct ergon_instrument_driver *driver;
	struct ergon_instrument_identity identity;
	void *priv;
	/* instrument.* issues the driver found while reading (a counter that
	 * went backwards, a wrap, stale readings): a JSON array created by
	 * ergon_instrument_open, freed by ergon_instrument_close. Engines copy
	 * it into their report. */
	json_t *issues;
};

/* The unported rule: append instrument.unvalidated_driver (info) to an
 * artifact's issues when the identity's validated_against is set (a
 * driver never run against the part). Pipelines call it for every
 * artifact an instrument's figures go into. 0 or ERGON_ENOMEM. */
ERGON_API int ergon_instrument_unvalidated_issue(const struct ergon_instrument *inst,
						 json_t *issues);

/* The driver table. */
ERGON_API const struct ergon_instrument_driver *const *ergon_instrument_drivers(size_t *count);
/* Find a driver by the part of spec before ':' ("hwmon:VDD_IN" -> hwmon). */
ERGON_API const struct ergon_instrument_driver *ergon_instrument_find(const char *spec);

/* Open an instrument from a spec "name[:arg]". On success *out is owned by
 * the caller (ergon_instrument_close). Unknown names list the drivers. */
ERGON_API int ergon_instrument_open(const char *spec, const struct ergon_instrument_options *opts,
				    struct ergon_instrument **out, struct ergon_err *err);
ERGON_API int ergon_instrument_start(struct ergon_instrument *inst, struct ergon_err *err);
ERGON_API int ergon_instrument_read(struct ergon_instrument *inst, struct ergon_sample *buf,
				    size_t cap, size_t *n, struct ergon_err *err);
ERGON_API int ergon_instrument_stop(struct ergon_instrument *inst, struct ergon_err *err);
/* Close and free; NULL is a no-op. */
ERGON_API void ergon_instrument_close(struct ergon_instrument *inst);
/* The identity as a JSON object (caller owns). */
ERGON_API json_t *ergon_instrument_identity_json(const struct ergon_instrument *inst);
/* The driver's reading statistics (caller owns), or NULL if it keeps none. */
ERGON_API json_t *ergon_instrument_stats(const struct ergon_instrument *inst);
/* For instruments whose power readings are averages (identity
 * averaging_period_s > 0): add an instrument.averaged_power warning to
 * issues when window_s is shorter than ERGON_AVERAGED_MIN_PERIODS averaging
 * periods. Returns 1 if it warned, 0 if not. */
#define ERGON_AVERAGED_MIN_PERIODS 5.0
ERGON_API int ergon_instrument_check_window(const struct ergon_instrument *inst, double window_s,
					    json_t *issues);
/* The vendors' stated ratings that more than one driver or pipeline needs
 * (src/drivers/instruments/ratings.c, docs/UNCERTAINTY.md), by model:
 * "JS110", "JS220" (Joulescope), "PPK2", "INA228", "INA3221", "VBENCH"
 * (the virtual bench's simulated meter). shunt_ohm is the board's shunt
 * for the INA parts (NaN when not known). 0, or ERGON_ENOENT for a model
 * ergon holds no rating of. */
ERGON_API int ergon_rating_for_model(const char *model, double shunt_ohm,
				     struct ergon_rating *out);

/* Look up key in opts->kv; NULL if absent. */
ERGON_API const char *ergon_options_get(const struct ergon_instrument_options *opts,
					const char *key);

#ifdef __cplusplus
}
#endif
#endif

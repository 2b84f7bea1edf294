/* Instrument wrappers: lookup by spec, lifecycle, identity as JSON. */
#include "ergon/instrument.h"

#include "ergon/artifact.h"
#include "ergon/issues.h"
#include "ergon/suggest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ergon_instrument_driver *ergon_instrument_find(const char *spec)
{
	size_t n, len = strcspn(spec, ":");
	const struct ergon_instrument_driver *const *d = ergon_instrument_drivers(&n);
	for (size_t i = 0; i < n; i++)
		if (strlen(d[i]->name) == len && strncmp(d[i]->name, spec, len) == 0)
			return d[i];
	return NULL;
}

const char *ergon_options_get(const struct ergon_instrument_options *opts, const char *key)
{
	if (opts == NULL || opts->kv == NULL)
		return NULL;
	size_t klen = strlen(key);
	for (const char *const *p = opts->kv; *p; p++)
		if (strncmp(*p, key, klen) == 0 && (*p)[klen] == '=')
			return *p + klen + 1;
	return NULL;
}

#define RATING_KV_MAX 64

/* After the driver's open: a driver that stated no rating gets a power
 * view from its legacy accuracy_pct and floor_w (a bridge's or a replay's
 * --instrument-opt accuracy_pct), and the user's rating.KEY=VALUE
 * overrides apply. */
static int rating_finish(struct ergon_instrument *inst, const char *const *kv,
			 struct ergon_err *err)
{
	struct ergon_instrument_identity *id = &inst->identity;
	struct ergon_rating *r = &id->rating;
	if (r->model == ERGON_RATING_NONE) {
		if (id->accuracy_pct > 0 || id->floor_w > 0) {
			r->model = ERGON_RATING_POWER;
			if (id->accuracy_pct > 0)
				ergon_rating_add_pterm(
				    r, "gain", ERGON_PTERM_GAIN_PCT, id->accuracy_pct,
				    "the %s driver's accuracy_pct (as its bridge "
				    "or --instrument-opt states it)",
				    inst->driver->name);
			else
				ergon_rating_add_pterm(r, "gain", ERGON_PTERM_GAIN_PCT, NAN,
						       "the %s driver states no gain error; give "
						       "--instrument-opt rating.gain_pct=PCT",
						       inst->driver->name);
			if (id->floor_w > 0)
				ergon_rating_add_pterm(r, "offset", ERGON_PTERM_OFFSET_W,
						       id->floor_w,
						       "the %s driver's documented absolute "
						       "accuracy (floor_w)",
						       inst->driver->name);
			else
				ergon_rating_add_pterm(r, "offset", ERGON_PTERM_OFFSET_W, NAN,
						       "the %s driver states no absolute bound; "
						       "give --instrument-opt rating.offset_w=W",
						       inst->driver->name);
			r->offset_constant = 1;
		} else {
			ergon_rating_add_pterm(r, "rated accuracy", ERGON_PTERM_GAIN_PCT, NAN,
					       "the %s driver states no rated accuracy; give "
					       "--instrument-opt rating.gain_pct=PCT and "
					       "rating.offset_w=W",
					       inst->driver->name);
		}
	}
	for (const char *const *p = kv; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		char key[64];
		size_t kl = eq ? (size_t)(eq - *p) - 7 : 0;
		if (eq == NULL || kl == 0 || kl >= sizeof(key))
			return ergon_err_set(err, ERGON_EUSAGE,
					     "--instrument-opt %s: expected rating.KEY=VALUE", *p);
		memcpy(key, *p + 7, kl);
		key[kl] = '\0';
		int rc = ergon_rating_override(r, key, eq + 1, "--instrument-opt", err);
		if (rc)
			return rc;
	}
	return 0;
}

int ergon_instrument_open(const char *spec, const struct ergon_instrument_options *opts,
			  struct ergon_instrument **out, struct ergon_err *err)
{
	*out = NULL;
	const struct ergon_instrument_driver *drv = ergon_instrument_find(spec);
	if (drv == NULL) {
		char names[512] = "";
		size_t n, o = 0;
		const struct ergon_instrument_driver *const *d = ergon_instrument_drivers(&n);
		for (size_t i = 0; i < n && o < sizeof(names) - 64; i++) {
			size_t l = strlen(d[i]->name);
			if (o)
				names[o++] = ',', names[o++] = ' ';
			memcpy(names + o, d[i]->name, l);
			o += l;
			names[o] = '\0';
		}
		/* A typo gets the nearest name: "synthtic" -> "synthetic". */
		const char *cands[32];
		size_t nc = 0;
		for (size_t i = 0; i < n && nc < 32; i++)
			cands[nc++] = d[i]->name;
		char want[64];
		snprintf(want, sizeof(want), "%.*s", (int)strcspn(spec, ":"), spec);
		const char *near = ergon_suggest_nearest(want, cands, nc);
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "--instrument %s: unknown instrument%s%s%s; known instruments: %s "
		    "(see `ergon instruments`)",
		    spec, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
		    names);
	}
	struct ergon_instrument *inst = calloc(1, sizeof(*inst));
	if (inst == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	inst->driver = drv;
	inst->issues = json_array();
	if (inst->issues == NULL) {
		free(inst);
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	inst->identity.n_rails = 1;
	inst->identity.total_rail = 0;
	ergon_rating_init(&inst->identity.rating, ERGON_RATING_NONE);
	struct ergon_instrument_options o = {0};
	if (opts)
		o = *opts;
	const char *colon = strchr(spec, ':');
	if (o.arg == NULL && colon)
		o.arg = colon + 1;
	/* rating.KEY=VALUE is the wrapper's (every driver takes it): the
	 * driver sees the other options. */
	const char *drv_kv[RATING_KV_MAX + 1];
	const char *rating_kv[RATING_KV_MAX + 1];
	size_t nd = 0, nr = 0;
	for (const char *const *kv = o.kv; kv && *kv; kv++) {
		if (nd >= RATING_KV_MAX || nr >= RATING_KV_MAX) {
			json_decref(inst->issues);
			free(inst);
			return ergon_err_set(err, ERGON_EUSAGE,
					     "--instrument-opt: more than %d options",
					     RATING_KV_MAX);
		}
		if (strncmp(*kv, "rating.", 7) == 0)
			rating_kv[nr++] = *kv;
		else
			drv_kv[nd++] = *kv;
	}
	drv_kv[nd] = NULL;
	rating_kv[nr] = NULL;
	if (o.kv)
		o.kv = drv_kv;
	int rc = drv->open(inst, &o, err);
	if (rc) {
		json_decref(inst->issues);
		free(inst);
		return rc;
	}
	rc = rating_finish(inst, rating_kv, err);
	if (rc) {
		if (drv->close)
			drv->close(inst);
		json_decref(inst->issues);
		free(inst);
		return rc;
	}
	/* Provenance of a sysfs tree that is not the system's own. */
	const char *root = o.sysfs_root ? o.sysfs_root : getenv("ERGON_SYSFS_ROOT");
	int sysfs_backed = strcmp(drv->name, "hwmon") == 0 || strcmp(drv->name, "rapl") == 0;
	if (sysfs_backed && root != NULL && root[0] && strcmp(root, "/") != 0) {
		struct ergon_instrument_identity *id = &inst->identity;
		snprintf(id->sysfs_root, sizeof id->sysfs_root, "%s", root);
		if (id->provenance == ERGON_PROV_MEASURED &&
		    o.provenance_override != ERGON_PROV_MEASURED)
			id->provenance = ERGON_PROV_SYNTHETIC;
		size_t l = strlen(id->notes);
		if (l < sizeof id->notes)
			snprintf(id->notes + l, sizeof id->notes - l,
				 "%sread under sysfs root %s (not /): %s", l ? " " : "", root,
				 id->provenance == ERGON_PROV_MEASURED
				     ? "measured, as --provenance measured states"
				     : "synthetic unless --provenance measured states it is the "
				       "live tree of the device");
	}
	*out = inst;
	return 0;
}

int ergon_instrument_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	if (inst->driver->start == NULL)
		return 0;
	return inst->driver->start(inst, err);
}

int ergon_instrument_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
			  size_t *n, struct ergon_err *err)
{
	*n = 0;
	if (inst->driver->read == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "instrument %s: reading is not supported",
				     inst->driver->name);
	return inst->driver->read(inst, buf, cap, n, err);
}

int ergon_instrument_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	if (inst->driver->stop == NULL)
		return 0;
	return inst->driver->stop(inst, err);
}

void ergon_instrument_close(struct ergon_instrument *inst)
{
	if (inst == NULL)
		return;
	if (inst->driver->close)
		inst->driver->close(inst);
	json_decref(inst->issues);
	free(inst);
}

json_t *ergon_instrument_stats(const struct ergon_instrument *inst)
{
	if (inst == NULL || inst->driver->stats == NULL)
		return NULL;
	return inst->driver->stats(inst);
}

int ergon_instrument_check_window(const struct ergon_instrument *inst, double window_s,
				  json_t *issues)
{
	double period_s = inst->identity.averaging_period_s;
	if (!(period_s > 0.0) || window_s >= ERGON_AVERAGED_MIN_PERIODS * period_s)
		return 0;
	/* Each reading averages the last period_s; a window only a few periods
	 * long is smeared by the readings that straddle its edges. */
	ergon_issue_add(
	    issues, "instrument.averaged_power",
	    json_pack("{s:s, s:f, s:f, s:f}", "instrument", inst->driver->name, "window_s",
		      window_s, "averaging_period_s", period_s, "min_window_s",
		      ERGON_AVERAGED_MIN_PERIODS * period_s),
	    "%s: the window of %.3f s is shorter than %.0f averaging periods of %.3f s; "
	    "its power readings are averages that straddle the window edges, so the "
	    "figure is not trustworthy. Lengthen the window to at least %.3f s "
	    "(more invocations per window) or use an energy-counter instrument",
	    inst->driver->name, window_s, ERGON_AVERAGED_MIN_PERIODS, period_s,
	    ERGON_AVERAGED_MIN_PERIODS * period_s);
	return 1;
}

int ergon_instrument_unvalidated_issue(const struct ergon_instrument *inst, json_t *issues)
{
	const char *va = inst->identity.validated_against;
	if (va[0] == '\0' || issues == NULL)
		return 0;
	return ergon_issue_add(
		   issues, "instrument.unvalidated_driver",
		   json_pack("{s:s,s:s}", "driver", inst->driver->name, "validated_against", va),
		   "the %s driver was written from a data sheet or protocol description and "
		   "validated against %s: it has never run against the part, so its figures "
		   "are not proven on hardware",
		   inst->driver->name, va) != 0
		   ? ERGON_ENOMEM
		   : 0;
}

json_t *ergon_instrument_identity_json(const struct ergon_instrument *inst)
{
	const struct ergon_instrument_identity *id = &inst->identity;
	json_t *rails = json_array();
	for (int i = 0; i < id->n_rails && i < ERGON_MAX_RAILS; i++)
		json_array_append_new(rails, json_string(id->rails[i]));
	json_t *o = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:s, s:s, s:o, s:s}", "driver",
	    inst->driver->name, "longname", inst->driver->longname, "vendor", id->vendor, "model",
	    id->model, "serial", id->serial, "accuracy_pct", id->accuracy_pct, "resolution_w",
	    id->resolution_w, "resolution_j", id->resolution_j, "sample_rate_hz",
	    id->sample_rate_hz, "averaging_period_s", id->averaging_period_s, "integrates",
	    id->integrates, "clock", id->clock, "provenance", ergon_provenance_name(id->provenance),
	    "rails", rails, "notes", id->notes);
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "floor_w", json_real(id->floor_w));
	if (id->update_interval_s > 0.0)
		json_object_set_new(o, "update_interval_s", json_real(id->update_interval_s));
	if (id->distinct_rate_hz > 0.0)
		json_object_set_new(o, "distinct_update_rate_hz", json_real(id->distinct_rate_hz));
	json_t *rating = ergon_rating_to_json(&id->rating);
	json_object_set_new(o, "rating", rating ? rating : json_null());
	json_object_set_new(o, "sysfs_root",
			    id->sysfs_root[0] ? json_string(id->sysfs_root) : json_null());
	json_object_set_new(o, "validated_against",
			    id->validated_against[0] ? json_string(id->validated_against)
						     : json_null());
	json_object_set_new(o, "total_rail",
			    id->total_rail >= 0 && id->total_rail < id->n_rails
				? json_string(id->rails[id->total_rail])
				: json_null());
	return o;
}

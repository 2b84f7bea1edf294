/* hwmon instrument: INA power monitors behind the Linux hwmon class.
 *
 * `--instrument hwmon[:LABEL[,LABEL...]]`. Every attribute is opened once
 * and read with pread for the whole run. One read() sweeps every selected
 * rail and returns one sample per rail (channel = rail index). Readings
 * that repeat the previous hardware update are counted so that the rate of
 * distinct updates is reported beside the read rate.
 */
#include "../sysfs/sysfs.h"
#include "../sysfs/thermal.h"
#include "ergon/artifact.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "hwmon_abi.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Below this share of distinct readings the run gets a stale_readings note. */
#define HWMON_STALE_SHARE 0.5

struct hwmon_state {
	struct hwmon_rail rail;
	int fd_v, fd_i, fd_p, fd_e;
	struct hwmon_raw last;
	int have_last;
	long reads, distinct;
	double first_t_s, last_t_s;
	/* Energy accumulator unwrapping: energy_j = raw_uj * 1e-6 + offset_j. */
	double offset_j;
	long backwards;
	/* Largest |V| and |I| read so far (open included): the resolution
	 * floor V·dI + I·dV of every reading is bounded by theirs. */
	double max_v, max_a;
};

struct hwmon_priv {
	int n;
	struct hwmon_state rail[ERGON_MAX_RAILS];
	struct ergon_thermal thermal;
	int use_thermal;
};

static void close_fds(struct hwmon_priv *p)
{
	for (int i = 0; i < p->n; i++) {
		struct hwmon_state *s = &p->rail[i];
		int *fds[4] = {&s->fd_v, &s->fd_i, &s->fd_p, &s->fd_e};
		for (int k = 0; k < 4; k++)
			if (*fds[k] >= 0) {
				close(*fds[k]);
				*fds[k] = -1;
			}
	}
	ergon_thermal_close(&p->thermal);
}

static int open_attr(const char *path, int *fd, struct ergon_err *err)
{
	*fd = -1;
	if (path[0] == '\0')
		return 0;
	int rc = ergon_sysfs_open(path, fd, NULL);
	if (rc == ERGON_EACCES)
		return ergon_err_set(err, rc,
				     "%s: permission denied; run as a user that can read the "
				     "hwmon attributes (root), or have the administrator add a "
				     "udev rule or `chmod o+r` for this file",
				     path);
	if (rc)
		return ergon_err_set(err, rc, "%s: cannot open: %s", path, ergon_strerror(rc));
	return 0;
}

/* Append "label (chip hwmonN)" for every rail to buf: the labels that do
 * exist, for the message about one that does not. */
static void list_labels(const struct hwmon_rail *all, int n, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(buf + o, cap - o, "%s%s (%s %s)", i ? ", " : "", all[i].label,
				 all[i].chip->name, all[i].hwmon);
		if (w < 0 || o + (size_t)w >= cap)
			break;
		o += (size_t)w;
	}
}

static int no_rails_error(const char *root, const char *others, struct ergon_err *err)
{
	return ergon_err_set(err, ERGON_ENOENT,
			     "%s/sys/class/hwmon: no INA power monitor (ina3221, ina219, ina226, "
			     "ina230, ina231, ina238, ina228)%s%s%s; load the chip's hwmon "
			     "driver (device tree or `echo ina226 0x40 > "
			     "/sys/bus/i2c/devices/i2c-N/new_device`), or give --sysfs-root",
			     root, others[0] ? "; found only " : "", others,
			     others[0] ? "" : " found");
}

/* Select rails by the comma-separated labels in arg (all rails if none). */
static int select_rails(const char *root, const char *arg, struct hwmon_rail *all, int n_all,
			struct hwmon_priv *p, struct ergon_err *err)
{
	if (arg == NULL || arg[0] == '\0') {
		for (int i = 0; i < n_all && p->n < ERGON_MAX_RAILS; i++)
			p->rail[p->n++].rail = all[i];
		return 0;
	}
	const char *c = arg;
	while (*c) {
		size_t len = strcspn(c, ",");
		int found = -1;
		for (int i = 0; i < n_all; i++)
			if (strlen(all[i].label) == len && strncmp(all[i].label, c, len) == 0)
				found = i;
		if (found < 0) {
			char have[1024];
			list_labels(all, n_all, have, sizeof(have));
			return ergon_err_set(
			    err, ERGON_ENOENT,
			    "--instrument hwmon:%s: no rail labelled \"%.*s\" under "
			    "%s/sys/class/hwmon; the rails that exist are: %s",
			    arg, (int)len, c, root, have);
		}
		for (int k = 0; k < p->n; k++)
			if (strcmp(p->rail[k].rail.label, all[found].label) == 0)
				return ergon_err_set(err, ERGON_EUSAGE,
						     "--instrument hwmon:%s: rail %s is listed "
						     "twice; name each rail once",
						     arg, all[found].label);
		if (p->n >= ERGON_MAX_RAILS)
			return ergon_err_set(err, ERGON_ERANGE,
					     "--instrument hwmon:%s: more than %d rails; name at "
					     "most %d",
					     arg, ERGON_MAX_RAILS, ERGON_MAX_RAILS);
		p->rail[p->n++].rail = all[found];
		c += len;
		if (*c == ',')
			c++;
	}
	return 0;
}

static int read_raw(struct hwmon_state *s, struct hwmon_raw *raw, struct ergon_err *err)
{
	int rc;
	memset(raw, 0, sizeof(*raw));
	if ((rc = ergon_sysfs_read_i64(s->fd_v, s->rail.volt_path, &raw->mv, err)) ||
	    (rc = ergon_sysfs_read_i64(s->fd_i, s->rail.curr_path, &raw->ma, err)))
		return rc;
	if (s->fd_p >= 0 && (rc = ergon_sysfs_read_i64(s->fd_p, s->rail.power_path, &raw->uw, err)))
		return rc;
	if (s->fd_e >= 0 &&
	    (rc = ergon_sysfs_read_i64(s->fd_e, s->rail.energy_path, &raw->uj, err)))
		return rc;
	return 0;
}

/* Keep the largest |V| and |I| a rail has read. */
static void track_max(struct hwmon_state *s, const struct hwmon_raw *raw)
{
	double v = fabs((double)raw->mv) * 1e-3, a = fabs((double)raw->ma) * 1e-3;
	if (v > s->max_v)
		s->max_v = v;
	if (a > s->max_a)
		s->max_a = a;
}

/* The instrument's absolute floor: the worst rail's V·dI + I·dV at the
 * largest voltage and current it has read. At open that is the single
 * reading taken there; stop() widens it to every reading of the run, so
 * the floor of a run that idled at open and loaded later is the load's,
 * not the idle current's. */
static double resolution_w(const struct hwmon_priv *p)
{
	double worst = 0.0;
	for (int i = 0; i < p->n; i++) {
		double di, dv;
		hwmon_rail_resolution(&p->rail[i].rail, &di, &dv);
		double res_w = p->rail[i].max_v * di + p->rail[i].max_a * dv;
		if (res_w > worst)
			worst = res_w;
	}
	return worst;
}

/* The rating (docs/UNCERTAINTY.md): the rail with the widest gain error
 * (the smallest shunt among equals, whose offset current is largest)
 * stands for every rail. INA228 and INA3221 have their vendors' figures
 * (ergon_rating_for_model); the other chips their table's gain error. */
static void fill_rating(struct ergon_instrument_identity *id, const struct hwmon_priv *p)
{
	int w = 0;
	for (int i = 1; i < p->n; i++) {
		const struct hwmon_rail *a = &p->rail[i].rail, *b = &p->rail[w].rail;
		if (a->chip->gain_error_pct > b->chip->gain_error_pct ||
		    (a->chip->gain_error_pct == b->chip->gain_error_pct && a->shunt_ohm > 0 &&
		     (b->shunt_ohm <= 0 || a->shunt_ohm < b->shunt_ohm)))
			w = i;
	}
	const struct hwmon_rail *r = &p->rail[w].rail;
	double shunt = r->shunt_ohm > 0 ? r->shunt_ohm : NAN;
	struct ergon_rating *g = &id->rating;
	char model[16];
	size_t k = 0;
	for (; r->chip->name[k] && k + 1 < sizeof(model); k++)
		model[k] = (char)toupper((unsigned char)r->chip->name[k]);
	model[k] = '\0';
	if (ergon_rating_for_model(model, shunt, g) != 0) {
		ergon_rating_init(g, ERGON_RATING_IV);
		g->n_ranges = 1;
		snprintf(g->range[0].name, sizeof(g->range[0].name), "shunt");
		ergon_rated_set(&g->range[0].gain_pct, r->chip->gain_error_pct, "%s",
				r->chip->source);
		ergon_rated_unknown(&g->range[0].offset_a,
				    "%s: the offset is not in ergon's table; give "
				    "rating.i_offset_a",
				    r->chip->name);
		ergon_rated_unknown(&g->v_gain_pct,
				    "%s: the bus voltage's gain error is not in "
				    "ergon's table; give rating.v_gain_pct",
				    r->chip->name);
		ergon_rated_unknown(&g->v_offset_v,
				    "%s: the bus voltage's offset is not in "
				    "ergon's table; give rating.v_offset_v",
				    r->chip->name);
		g->external_shunt = 1;
		ergon_rated_unknown(&g->shunt_tol_pct, "the board's shunt tolerance is not stated: "
						       "give rating.shunt_tolerance_pct");
		ergon_rated_unknown(&g->shunt_tempco_ppm_c,
				    "the shunt's temperature coefficient is not stated: give "
				    "rating.shunt_tempco_ppm_per_c");
		ergon_rated_unknown(&g->shunt_temp_span_c,
				    "the shunt's temperature span is not stated: give "
				    "rating.shunt_temp_span_c");
	}
	g->view_v = p->rail[w].max_v > 0 ? p->rail[w].max_v : NAN;
	snprintf(g->notes, sizeof(g->notes),
		 "the rating of rail %s (%s, shunt %.4g ohm) stands for every rail", r->label,
		 r->chip->name, r->shunt_ohm);
	ergon_rating_build_power_view(g);
}

static void fill_identity(struct ergon_instrument *inst, struct hwmon_priv *p,
			  const struct hwmon_raw *first)
{
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "Texas Instruments");
	id->serial[0] = '\0';
	id->n_rails = p->n;
	id->total_rail = -1;
	id->accuracy_pct = 0.0;
	id->resolution_w = 0.0;
	id->resolution_j = 0.0;
	id->sample_rate_hz = 0.0; /* hwmon states an update interval, not a rate */
	id->update_interval_s = 0.0;
	id->distinct_rate_hz = 0.0;
	id->averaging_period_s = 0.0;
	int has_energy = 0;
	size_t mo = 0, no = 0;
	id->model[0] = '\0';
	/* First, so a long rail list never truncates it: the reader of a
	 * report must know how far this driver has been checked. */
	snprintf(id->validated_against, sizeof(id->validated_against),
		 "fake sysfs trees only (not yet on a board)");
	int vw = snprintf(id->notes, sizeof(id->notes),
			  "Driver validated against fake sysfs trees only, not yet on a board. ");
	if (vw > 0 && (size_t)vw < sizeof(id->notes))
		no = (size_t)vw;
	for (int i = 0; i < p->n; i++) {
		const struct hwmon_rail *r = &p->rail[i].rail;
		snprintf(id->rails[i], sizeof(id->rails[i]), "%s", r->label);
		if (r->is_total && id->total_rail < 0)
			id->total_rail = i;
		if (!strstr(id->model, r->chip->name)) {
			int w = snprintf(id->model + mo, sizeof(id->model) - mo, "%s%s",
					 mo ? "," : "", r->chip->name);
			if (w > 0 && mo + (size_t)w < sizeof(id->model))
				mo += (size_t)w;
		}
		/* The worst rail decides the instrument's accuracy and floor. */
		if (r->chip->gain_error_pct > id->accuracy_pct)
			id->accuracy_pct = r->chip->gain_error_pct;
		track_max(&p->rail[i], &first[i]);
		/* update_interval is the driver's nominal interval (the
		 * method's "~1 ms"), not a rate the readings reach: the
		 * identity states it as an interval (the slowest rail's), and
		 * the measured distinct-update rate when the run stops. */
		if (r->update_interval_s > id->update_interval_s)
			id->update_interval_s = r->update_interval_s;
		if (r->energy_path[0])
			has_energy = 1;
		int w = snprintf(id->notes + no, sizeof(id->notes) - no,
				 "%s: %s %s ch%d, shunt %.4g ohm%s; ", r->label, r->chip->name,
				 r->hwmon, r->channel, r->shunt_ohm,
				 r->shunt_ohm > 0 ? "" : " (not exposed)");
		if (w > 0 && no + (size_t)w < sizeof(id->notes))
			no += (size_t)w;
	}
	id->resolution_w = resolution_w(p);
	fill_rating(id, p);
	if (has_energy) {
		/* energy1_input is in whole microjoules (ABI). */
		id->resolution_j = 1e-6;
		snprintf(id->integrates, sizeof(id->integrates), "energy");
	} else {
		snprintf(id->integrates, sizeof(id->integrates), "none");
	}
	snprintf(id->clock, sizeof(id->clock), "host_monotonic");
	id->provenance = ERGON_PROV_MEASURED;
	if (id->total_rail >= 0)
		snprintf(id->notes + no, sizeof(id->notes) - no,
			 "%s is the module's total input; the other rails are nested in it and "
			 "are never added to it.",
			 id->rails[id->total_rail]);
	else
		snprintf(id->notes + no, sizeof(id->notes) - no,
			 "No rail is the module's total input; rails are reported one by one and "
			 "never summed.");
}

static int hwmon_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		      struct ergon_err *err)
{
	const char *root = ergon_sysfs_root(opts);
	struct hwmon_rail *all = calloc(HWMON_MAX_RAILS, sizeof(*all));
	struct hwmon_priv *p = calloc(1, sizeof(*p));
	struct hwmon_raw first[ERGON_MAX_RAILS];
	char others[256];
	int n_all = 0, rc = 0;
	if (all == NULL || p == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto fail;
	}
	rc = hwmon_discover(root, all, HWMON_MAX_RAILS, &n_all, others, sizeof(others), err);
	if (rc)
		goto fail;
	if (n_all == 0) {
		rc = no_rails_error(root, others, err);
		goto fail;
	}
	rc = select_rails(root, opts->arg, all, n_all, p, err);
	if (rc)
		goto fail;
	for (int i = 0; i < p->n; i++) {
		struct hwmon_state *s = &p->rail[i];
		s->fd_v = s->fd_i = s->fd_p = s->fd_e = -1;
	}
	for (int i = 0; i < p->n; i++) {
		struct hwmon_state *s = &p->rail[i];
		if ((rc = open_attr(s->rail.volt_path, &s->fd_v, err)) ||
		    (rc = open_attr(s->rail.curr_path, &s->fd_i, err)) ||
		    (rc = open_attr(s->rail.power_path, &s->fd_p, err)) ||
		    (rc = open_attr(s->rail.energy_path, &s->fd_e, err)))
			goto fail;
		/* Read once now: a rail that cannot be read fails at open, not
		 * in the middle of a measurement. */
		rc = read_raw(s, &first[i], err);
		if (rc)
			goto fail;
	}
	const char *th = ergon_options_get(opts, "thermal");
	p->use_thermal = th == NULL || strcmp(th, "off") != 0;
	if (p->use_thermal)
		ergon_thermal_open(&p->thermal, root, 0.05, NULL);
	inst->priv = p;
	fill_identity(inst, p, first);
	free(all);
	return 0;
fail:
	if (p)
		close_fds(p);
	free(p);
	free(all);
	return rc;
}

static int hwmon_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct hwmon_priv *p = inst->priv;
	for (int i = 0; i < p->n; i++) {
		struct hwmon_state *s = &p->rail[i];
		s->reads = s->distinct = s->backwards = 0;
		s->have_last = 0;
		s->offset_j = 0.0;
	}
	return 0;
}

static void note_backwards(struct ergon_instrument *inst, struct hwmon_state *s, int64_t prev_uj,
			   int64_t now_uj)
{
	s->backwards++;
	if (s->backwards > 1)
		return; /* one issue per rail; the count is in the stats */
	ergon_issue_add(inst->issues, "instrument.counter_backwards",
			json_pack("{s:s, s:s, s:I, s:I}", "rail", s->rail.label, "file",
				  s->rail.energy_path, "previous_uj", (json_int_t)prev_uj, "now_uj",
				  (json_int_t)now_uj),
			"hwmon %s: %s went from %lld to %lld uJ, backwards, with no wrap range "
			"known; the interval was not added (power readings still cover it). The "
			"accumulator was reset (by the driver, a reload or RSTACC) during the run",
			s->rail.label, s->rail.energy_path, (long long)prev_uj, (long long)now_uj);
}

static int hwmon_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
		      size_t *n, struct ergon_err *err)
{
	struct hwmon_priv *p = inst->priv;
	double temp_c = 0.0;
	int have_temp = 0;
	*n = 0;
	for (int i = 0; i < p->n && *n < cap; i++) {
		struct hwmon_state *s = &p->rail[i];
		struct hwmon_raw raw;
		double t_s = ergon_sysfs_now_s();
		int rc = read_raw(s, &raw, err);
		if (rc)
			return rc;
		if (i == 0 && p->use_thermal)
			have_temp = ergon_thermal_poll(&p->thermal, t_s, &temp_c);
		struct ergon_sample *o = &buf[(*n)++];
		memset(o, 0, sizeof(*o));
		o->t_s = t_s;
		o->channel = (uint16_t)i;
		/* Kernel ABI units: mV, mA, uW, uJ. */
		o->voltage_v = (double)raw.mv * 1e-3;
		o->current_a = (double)raw.ma * 1e-3;
		/* The ina3221 has no power register: P = V x I of the same
		 * channel. The others compute power in the chip. */
		o->power_w = s->fd_p >= 0 ? (double)raw.uw * 1e-6 : o->voltage_v * o->current_a;
		o->fields = ERGON_F_VOLTAGE | ERGON_F_CURRENT | ERGON_F_POWER;
		if (s->fd_e >= 0) {
			if (s->have_last && raw.uj < s->last.uj) {
				note_backwards(inst, s, s->last.uj, raw.uj);
				/* Continue the accumulator from where it was: the
				 * reset interval adds nothing, and is reported. */
				s->offset_j += (double)(s->last.uj - raw.uj) * 1e-6;
			} else {
				o->fields |= ERGON_F_ENERGY;
			}
			o->energy_j = (double)raw.uj * 1e-6 + s->offset_j;
		}
		if (have_temp) {
			o->temp_c = temp_c;
			o->fields |= ERGON_F_TEMP;
		}
		track_max(s, &raw);
		if (!s->have_last || memcmp(&raw, &s->last, sizeof(raw)) != 0)
			s->distinct++;
		if (s->reads == 0)
			s->first_t_s = t_s;
		s->last_t_s = t_s;
		s->reads++;
		s->last = raw;
		s->have_last = 1;
	}
	return 0;
}

static double rate_hz(long count, double span_s)
{
	return span_s > 0.0 && count > 1 ? (double)(count - 1) / span_s : 0.0;
}

static int hwmon_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct hwmon_priv *p = inst->priv;
	/* The floor covers every reading of the run, not the one at open. */
	inst->identity.resolution_w = resolution_w(p);
	/* What the readings resolved: the slowest rail's distinct updates/s. */
	inst->identity.distinct_rate_hz = 0.0;
	for (int i = 0; i < p->n; i++) {
		const struct hwmon_state *s = &p->rail[i];
		double hz = rate_hz(s->distinct, s->last_t_s - s->first_t_s);
		if (hz > 0.0 &&
		    (inst->identity.distinct_rate_hz == 0.0 || hz < inst->identity.distinct_rate_hz))
			inst->identity.distinct_rate_hz = hz;
	}
	for (int i = 0; i < p->n; i++) {
		struct hwmon_state *s = &p->rail[i];
		if (s->reads < 20 || (double)s->distinct >= HWMON_STALE_SHARE * (double)s->reads)
			continue;
		double span = s->last_t_s - s->first_t_s;
		ergon_issue_add(inst->issues, "instrument.stale_readings",
				json_pack("{s:s, s:I, s:I, s:f, s:f}", "rail", s->rail.label,
					  "reads", (json_int_t)s->reads, "distinct_updates",
					  (json_int_t)s->distinct, "read_rate_hz",
					  rate_hz(s->reads, span), "distinct_rate_hz",
					  rate_hz(s->distinct, span)),
				"hwmon %s: %ld of %ld readings repeated the previous update; the "
				"chip updated at about %.0f Hz while it was read at %.0f Hz",
				s->rail.label, s->reads - s->distinct, s->reads,
				rate_hz(s->distinct, span), rate_hz(s->reads, span));
	}
	return 0;
}

static json_t *hwmon_stats(const struct ergon_instrument *inst)
{
	const struct hwmon_priv *p = inst->priv;
	json_t *rails = json_array();
	for (int i = 0; i < p->n; i++) {
		const struct hwmon_state *s = &p->rail[i];
		double span = s->last_t_s - s->first_t_s;
		json_array_append_new(
		    rails,
		    json_pack(
			"{s:s, s:s, s:s, s:b, s:I, s:I, s:f, s:f, s:f, s:I}", "rail", s->rail.label,
			"chip", s->rail.chip->name, "hwmon", s->rail.hwmon, "total_input",
			s->rail.is_total, "reads", (json_int_t)s->reads, "distinct_updates",
			(json_int_t)s->distinct, "read_rate_hz", rate_hz(s->reads, span),
			"distinct_rate_hz", rate_hz(s->distinct, span), "update_interval_s",
			s->rail.update_interval_s, "counter_backwards", (json_int_t)s->backwards));
	}
	json_t *o = json_pack("{s:o}", "rails", rails);
	if (o && p->use_thermal)
		json_object_set_new(o, "thermal", ergon_thermal_stats(&p->thermal));
	return o;
}

static void hwmon_close(struct ergon_instrument *inst)
{
	struct hwmon_priv *p = inst->priv;
	if (p == NULL)
		return;
	close_fds(p);
	free(p);
	inst->priv = NULL;
}

static int hwmon_scan(const struct ergon_instrument_options *opts, json_t **found,
		      struct ergon_err *err)
{
	const char *root = ergon_sysfs_root(opts);
	struct hwmon_rail *all = calloc(HWMON_MAX_RAILS, sizeof(*all));
	char others[256];
	int n = 0, rc;
	*found = NULL;
	if (all == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	rc = hwmon_discover(root, all, HWMON_MAX_RAILS, &n, others, sizeof(others), err);
	if (rc == 0 && n == 0)
		rc = no_rails_error(root, others, err);
	if (rc == 0) {
		/* A rail is usable only if its files can be read by us. */
		for (int i = 0; i < n && rc == 0; i++) {
			int fd;
			rc = open_attr(all[i].curr_path, &fd, err);
			if (rc == 0)
				close(fd);
		}
	}
	if (rc == 0) {
		*found = json_array();
		for (int i = 0; i < n; i++) {
			char id[64];
			snprintf(id, sizeof(id), "hwmon:%s", all[i].label);
			json_array_append_new(
			    *found,
			    json_pack("{s:s, s:s, s:s, s:i, s:b, s:f, s:f, s:f, s:b, s:s}", "id",
				      id, "chip", all[i].chip->name, "hwmon", all[i].hwmon,
				      "channel", all[i].channel, "total_input", all[i].is_total,
				      "shunt_ohm", all[i].shunt_ohm, "update_interval_s",
				      all[i].update_interval_s, "accuracy_pct",
				      all[i].chip->gain_error_pct, "integrates_energy",
				      all[i].energy_path[0] != '\0', "lsb", all[i].chip->source));
		}
	}
	free(all);
	return rc;
}

const struct ergon_instrument_driver ergon_instrument_hwmon = {
    .name = "hwmon",
    .longname = "INA power monitors via Linux hwmon (ina3221, ina2xx, ina238/ina228)",
    .scan = hwmon_scan,
    .open = hwmon_open,
    .start = hwmon_start,
    .read = hwmon_read,
    .stop = hwmon_stop,
    .close = hwmon_close,
    .stats = hwmon_stats,
};

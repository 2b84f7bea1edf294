/* rapl instrument: CPU energy counters through Linux powercap.
 *
 * `--instrument rapl[:DOMAIN[,DOMAIN...]]`, DOMAIN a zone name
 * (package-0, psys) or a subzone (package-0/core, or core when only one
 * package has one). energy_uj is opened once and read with pread; each
 * read() returns one sample per domain carrying the energy accumulated
 * since start (J), unwrapped at max_energy_range_uj. See
 * docs/internals/rapl.md for the aliasing limit and the permission story.
 */
#include "../sysfs/sysfs.h"
#include "../sysfs/thermal.h"
#include "ergon/artifact.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "rapl_zone.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The counter updates about every 1 ms (Intel SDM, MSR_PKG_ENERGY_STATUS;
 * measured ~976 us on most parts) and carries no timestamp. A window must
 * span many updates for the +-1 update quantization to be small: 100
 * updates give 1 %. */
#define RAPL_UPDATE_S 0.001
#define RAPL_MIN_WINDOW_S 0.1
/* Wrap time is quoted at this power when the zone gives no maximum. */
#define RAPL_ASSUMED_MAX_W 500.0

struct rapl_dom {
	struct rapl_zone zone;
	int fd;
	struct rapl_counter ctr;
	double total_j;
	long reads, distinct, wraps, backwards;
	double first_t_s, last_t_s;
};

struct rapl_priv {
	int n;
	struct rapl_dom dom[ERGON_MAX_RAILS];
	struct ergon_thermal thermal;
	int use_thermal;
};

static int permission_error(const char *path, struct ergon_err *err)
{
	return ergon_err_set(err, ERGON_EACCES,
			     "%s: permission denied. Since the 2020 PLATYPUS fix "
			     "(CVE-2020-8694) energy_uj is readable only by root on most "
			     "kernels. Remedies: run ergon as root; or have the administrator "
			     "grant read access with a udev rule (SUBSYSTEM==\"powercap\", "
			     "ACTION==\"add\", RUN+=\"/bin/chmod o+r /sys%%p/energy_uj\") or "
			     "with `chmod o+r %s` (until the next reboot)",
			     path, path);
}

static int open_energy(const char *path, int *fd, struct ergon_err *err)
{
	int rc = ergon_sysfs_open(path, fd, NULL);
	if (rc == ERGON_EACCES)
		return permission_error(path, err);
	if (rc)
		return ergon_err_set(err, rc, "%s: cannot open: %s", path, ergon_strerror(rc));
	/* Some kernels let open succeed and refuse the read. */
	int64_t v;
	struct ergon_err e2 = {0};
	rc = ergon_sysfs_read_i64(*fd, path, &v, &e2);
	if (rc == ERGON_EACCES) {
		close(*fd);
		*fd = -1;
		return permission_error(path, err);
	}
	if (rc) {
		close(*fd);
		*fd = -1;
		return ergon_err_set(err, rc, "%s", e2.msg);
	}
	return 0;
}

static void list_names(const struct rapl_zone *z, int n, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", z[i].name);
		if (w < 0 || o + (size_t)w >= cap)
			break;
		o += (size_t)w;
	}
}

/* Index of the zone named by name[0..len): exact, or a bare subzone name
 * that only one package has. -1 none, -2 ambiguous. */
static int find_zone(const struct rapl_zone *z, int n, const char *name, size_t len)
{
	int hit = -1;
	for (int i = 0; i < n; i++)
		if (strlen(z[i].name) == len && strncmp(z[i].name, name, len) == 0)
			return i;
	for (int i = 0; i < n; i++) {
		const char *slash = strchr(z[i].name, '/');
		if (slash && strlen(slash + 1) == len && strncmp(slash + 1, name, len) == 0)
			hit = hit == -1 ? i : -2;
	}
	return hit;
}

static int select_domains(const char *arg, const struct rapl_zone *all, int n_all,
			  struct rapl_priv *p, struct ergon_err *err)
{
	if (arg == NULL || arg[0] == '\0') {
		for (int i = 0; i < n_all && p->n < ERGON_MAX_RAILS; i++)
			if (!all[i].is_sub)
				p->dom[p->n++].zone = all[i];
		return 0;
	}
	for (const char *c = arg; *c;) {
		size_t len = strcspn(c, ",");
		int k = find_zone(all, n_all, c, len);
		if (k < 0) {
			char have[1024];
			list_names(all, n_all, have, sizeof(have));
			return ergon_err_set(
			    err, ERGON_ENOENT,
			    "--instrument rapl:%s: %s domain \"%.*s\"; the domains "
			    "that exist are: %s",
			    arg, k == -2 ? "ambiguous" : "no", (int)len, c, have);
		}
		if (p->n >= ERGON_MAX_RAILS)
			return ergon_err_set(err, ERGON_ERANGE,
					     "--instrument rapl:%s: more than %d domains", arg,
					     ERGON_MAX_RAILS);
		p->dom[p->n++].zone = all[k];
		c += len;
		if (*c == ',')
			c++;
	}
	return 0;
}

static void fill_identity(struct ergon_instrument *inst, const struct rapl_priv *p)
{
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "x86 CPU (RAPL)");
	snprintf(id->model, sizeof(id->model), "powercap intel-rapl");
	/* Neither Intel nor AMD rates RAPL's accuracy: 0 means unrated. */
	id->accuracy_pct = 0.0;
	ergon_rating_init(&id->rating, ERGON_RATING_POWER);
	ergon_rating_add_pterm(&id->rating, "rated accuracy", ERGON_PTERM_GAIN_PCT, NAN,
			       "Intel's SDM (vol. 3B, RAPL interfaces) states no accuracy for "
			       "the RAPL energy counters; give --instrument-opt "
			       "rating.gain_pct=PCT from a calibration of your own");
	ergon_rated_unknown(&id->rating.timebase_ppm,
			    "no tolerance is stated for the clock RAPL integrates on");
	id->resolution_w = 0.0;
	/* energy_uj counts whole microjoules (the hardware unit is coarser,
	 * typically 61 uJ = 2^-14 J). */
	id->resolution_j = 1e-6;
	id->sample_rate_hz = 1.0 / RAPL_UPDATE_S;
	id->averaging_period_s = 0.0;
	snprintf(id->integrates, sizeof(id->integrates), "energy");
	snprintf(id->clock, sizeof(id->clock), "host_monotonic");
	id->provenance = ERGON_PROV_MEASURED;
	id->n_rails = p->n;
	id->total_rail = -1;
	double wrap_s = 0.0;
	for (int i = 0; i < p->n; i++) {
		const struct rapl_zone *z = &p->dom[i].zone;
		snprintf(id->rails[i], sizeof(id->rails[i]), "%s", z->name);
		if (strcmp(z->name, "psys") == 0)
			id->total_rail = i;
		double w = z->max_power_w > 0.0 ? z->max_power_w : RAPL_ASSUMED_MAX_W;
		double s = (double)z->max_range_uj * 1e-6 / w;
		if (z->max_range_uj > 0 && (wrap_s == 0.0 || s < wrap_s))
			wrap_s = s;
	}
	snprintf(id->validated_against, sizeof(id->validated_against),
		 "fake powercap trees only (not yet on a CPU)");
	snprintf(id->notes, sizeof(id->notes),
		 "Driver validated against fake powercap trees only, not yet on a CPU. "
		 "energy_uj updates about every %.0f ms with no timestamp: readings closer "
		 "than that are aliased, and a window shorter than %.0f ms carries more than "
		 "1 %% quantization. The counter wraps at max_energy_range_uj: at the zone's "
		 "maximum power that is every %.3g s, and the sampler reads far inside that. "
		 "Subzones (core, uncore) are nested in their package and never added to it; "
		 "psys, when present, is the platform total.",
		 RAPL_UPDATE_S * 1e3, RAPL_MIN_WINDOW_S * 1e3, wrap_s);
}

static void close_all(struct rapl_priv *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->dom[i].fd >= 0) {
			close(p->dom[i].fd);
			p->dom[i].fd = -1;
		}
	ergon_thermal_close(&p->thermal);
}

static int rapl_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		     struct ergon_err *err)
{
	const char *root = ergon_sysfs_root(opts);
	struct rapl_zone *all = calloc(RAPL_MAX_ZONES, sizeof(*all));
	struct rapl_priv *p = calloc(1, sizeof(*p));
	int n_all = 0, rc;
	if (all == NULL || p == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto fail;
	}
	rc = rapl_discover(root, all, RAPL_MAX_ZONES, &n_all, err);
	if (rc)
		goto fail;
	rc = select_domains(opts->arg, all, n_all, p, err);
	if (rc)
		goto fail;
	for (int i = 0; i < p->n; i++)
		p->dom[i].fd = -1;
	for (int i = 0; i < p->n; i++) {
		rc = open_energy(p->dom[i].zone.energy_path, &p->dom[i].fd, err);
		if (rc)
			goto fail;
		p->dom[i].ctr.max_range_uj = p->dom[i].zone.max_range_uj;
	}
	const char *th = ergon_options_get(opts, "thermal");
	p->use_thermal = th == NULL || strcmp(th, "off") != 0;
	if (p->use_thermal)
		ergon_thermal_open(&p->thermal, root, 0.05, NULL);
	inst->priv = p;
	fill_identity(inst, p);
	free(all);
	return 0;
fail:
	if (p)
		close_all(p);
	free(p);
	free(all);
	return rc;
}

static int rapl_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct rapl_priv *p = inst->priv;
	for (int i = 0; i < p->n; i++) {
		struct rapl_dom *d = &p->dom[i];
		d->ctr.have_last = 0;
		d->total_j = 0.0;
		d->reads = d->distinct = d->wraps = d->backwards = 0;
	}
	return 0;
}

static void report_step(struct ergon_instrument *inst, struct rapl_dom *d, int kind,
			int64_t prev_uj, int64_t raw_uj)
{
	json_t *ctx =
	    json_pack("{s:s, s:s, s:I, s:I, s:I}", "domain", d->zone.name, "file",
		      d->zone.energy_path, "previous_uj", (json_int_t)prev_uj, "now_uj",
		      (json_int_t)raw_uj, "max_energy_range_uj", (json_int_t)d->zone.max_range_uj);
	if (kind == RAPL_STEP_WRAPPED) {
		if (++d->wraps == 1)
			ergon_issue_add(inst->issues, "instrument.counter_wrapped", ctx,
					"rapl %s: energy_uj wrapped at max_energy_range_uj = %lld "
					"uJ (%lld -> %lld) and was unwrapped",
					d->zone.name, (long long)d->zone.max_range_uj,
					(long long)prev_uj, (long long)raw_uj);
		else
			json_decref(ctx);
		return;
	}
	if (++d->backwards == 1)
		ergon_issue_add(inst->issues, "instrument.counter_backwards", ctx,
				"rapl %s: %s went from %lld to %lld uJ, backwards, without "
				"reaching its wrap range (%lld uJ); the interval was not added. "
				"The counter was reset (CPU hot-plug, suspend, or a firmware "
				"reset) during the run",
				d->zone.name, d->zone.energy_path, (long long)prev_uj,
				(long long)raw_uj, (long long)d->zone.max_range_uj);
	else
		json_decref(ctx);
}

static int rapl_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		     struct ergon_err *err)
{
	struct rapl_priv *p = inst->priv;
	double temp_c = 0.0;
	int have_temp = 0;
	*n = 0;
	for (int i = 0; i < p->n && *n < cap; i++) {
		struct rapl_dom *d = &p->dom[i];
		double t_s = ergon_sysfs_now_s();
		int64_t raw, delta, prev = d->ctr.last_uj;
		int had = d->ctr.have_last;
		int rc = ergon_sysfs_read_i64(d->fd, d->zone.energy_path, &raw, err);
		if (rc)
			return rc;
		if (i == 0 && p->use_thermal)
			have_temp = ergon_thermal_poll(&p->thermal, t_s, &temp_c);
		int kind = rapl_counter_step(&d->ctr, raw, &delta);
		if (kind != RAPL_STEP_OK)
			report_step(inst, d, kind, prev, raw);
		d->total_j += (double)delta * 1e-6;
		struct ergon_sample *o = &buf[(*n)++];
		memset(o, 0, sizeof(*o));
		o->t_s = t_s;
		o->channel = (uint16_t)i;
		o->energy_j = d->total_j;
		o->fields = kind == RAPL_STEP_BACKWARDS ? 0 : ERGON_F_ENERGY;
		if (have_temp) {
			o->temp_c = temp_c;
			o->fields |= ERGON_F_TEMP;
		}
		if (!had || raw != prev)
			d->distinct++;
		if (d->reads == 0)
			d->first_t_s = t_s;
		d->last_t_s = t_s;
		d->reads++;
	}
	return 0;
}

static double rate_hz(long count, double span_s)
{
	return span_s > 0.0 && count > 1 ? (double)(count - 1) / span_s : 0.0;
}

static json_t *rapl_stats(const struct ergon_instrument *inst)
{
	const struct rapl_priv *p = inst->priv;
	json_t *doms = json_array();
	for (int i = 0; i < p->n; i++) {
		const struct rapl_dom *d = &p->dom[i];
		double span = d->last_t_s - d->first_t_s;
		json_array_append_new(
		    doms,
		    json_pack("{s:s, s:I, s:I, s:f, s:f, s:I, s:I, s:I}", "domain", d->zone.name,
			      "reads", (json_int_t)d->reads, "distinct_updates",
			      (json_int_t)d->distinct, "read_rate_hz", rate_hz(d->reads, span),
			      "distinct_rate_hz", rate_hz(d->distinct, span), "wraps",
			      (json_int_t)d->wraps, "counter_backwards", (json_int_t)d->backwards,
			      "max_energy_range_uj", (json_int_t)d->zone.max_range_uj));
	}
	json_t *o = json_pack("{s:o, s:f}", "rails", doms, "min_window_s", RAPL_MIN_WINDOW_S);
	if (o && p->use_thermal)
		json_object_set_new(o, "thermal", ergon_thermal_stats(&p->thermal));
	return o;
}

static void rapl_close(struct ergon_instrument *inst)
{
	struct rapl_priv *p = inst->priv;
	if (p == NULL)
		return;
	close_all(p);
	free(p);
	inst->priv = NULL;
}

static int rapl_scan(const struct ergon_instrument_options *opts, json_t **found,
		     struct ergon_err *err)
{
	const char *root = ergon_sysfs_root(opts);
	struct rapl_zone *all = calloc(RAPL_MAX_ZONES, sizeof(*all));
	int n = 0, rc;
	*found = NULL;
	if (all == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	rc = rapl_discover(root, all, RAPL_MAX_ZONES, &n, err);
	for (int i = 0; rc == 0 && i < n; i++) {
		int fd;
		rc = open_energy(all[i].energy_path, &fd, err);
		if (rc == 0)
			close(fd);
	}
	if (rc == 0) {
		*found = json_array();
		for (int i = 0; i < n; i++) {
			char id[64];
			snprintf(id, sizeof(id), "rapl:%s", all[i].name);
			json_array_append_new(*found,
					      json_pack("{s:s, s:b, s:I, s:f}", "id", id, "subzone",
							all[i].is_sub, "max_energy_range_uj",
							(json_int_t)all[i].max_range_uj,
							"max_power_w", all[i].max_power_w));
		}
	}
	free(all);
	return rc;
}

const struct ergon_instrument_driver ergon_instrument_rapl = {
    .name = "rapl",
    .longname = "CPU energy counters via Linux powercap RAPL (energy_uj)",
    .scan = rapl_scan,
    .open = rapl_open,
    .start = rapl_start,
    .read = rapl_read,
    .stats = rapl_stats,
    .close = rapl_close,
};

/* nvml instrument: NVIDIA GPU energy through NVML, loaded at run time.
 *
 * `--instrument nvml[:INDEX]`. Prefers the total-energy counter
 * (nvmlDeviceGetTotalEnergyConsumption, mJ, Volta and newer): each read()
 * returns one sample with the energy accumulated since start. Where the
 * counter is not supported it falls back to nvmlDeviceGetPowerUsage, whose
 * value is a 1 s average on Ampere and newer (except GA100): the identity
 * then says so and short windows get instrument.averaged_power. GPU
 * temperature and clock-event (throttle) reasons are polled alongside as
 * device evidence. See docs/internals/nvml.md.
 */
#include "../sysfs/sysfs.h"
#include "ergon/artifact.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "nvml_api.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Temperature and reasons change slowly and each NVML call costs tens of
 * microseconds or more: poll them at most this often. */
#define NVML_EVIDENCE_INTERVAL_S 0.05
/* nvmlDeviceGetPowerUsage averaging on Ampere+ (NVML API reference). */
#define NVML_AVERAGING_S 1.0

enum { NVML_MODE_ENERGY = 1, NVML_MODE_POWER = 2 };

struct nvml_priv {
	struct nvml_api api;
	int inited;
	nvml_device dev;
	unsigned int index;
	int mode;
	char fallback_why[160];
	/* energy mode */
	unsigned long long last_mj;
	int have_last;
	double total_j;
	long backwards;
	/* power mode */
	unsigned int last_mw;
	/* both */
	long reads, distinct;
	double first_t_s, last_t_s;
	/* evidence */
	double evidence_t_s;
	int have_temp;
	double temp_c, temp_max_c, temp_first_c;
	unsigned long long reasons_seen;
	long polls, polls_power_cap, polls_thermal, polls_hw_slowdown;
	int reasons_supported;
};

static int nvml_fail(struct nvml_priv *p, const char *call, int rc, struct ergon_err *err)
{
	int code = rc == NVML_ERROR_NOT_SUPPORTED   ? ERGON_ENOTSUP
		   : rc == NVML_ERROR_NO_PERMISSION ? ERGON_EACCES
						    : ERGON_EDEVICE;
	const char *fix =
	    rc == NVML_ERROR_DRIVER_NOT_LOADED
		? "load the NVIDIA kernel module (check `nvidia-smi`)"
	    : rc == NVML_ERROR_NO_PERMISSION ? "run as a user allowed to query the GPU (root)"
	    : rc == NVML_ERROR_GPU_IS_LOST ? "the GPU fell off the bus: check `dmesg` and reset it"
					   : "check `nvidia-smi -q` for this GPU";
	return ergon_err_set(err, code, "nvml (%s) device %u: %s failed: %s (NVML %d); %s",
			     p->api.lib, p->index, call, nvml_api_strerror(&p->api, rc), rc, fix);
}

static void poll_evidence(struct nvml_priv *p, double now_s)
{
	if (p->polls > 0 && now_s - p->evidence_t_s < NVML_EVIDENCE_INTERVAL_S)
		return;
	p->evidence_t_s = now_s;
	p->polls++;
	unsigned int c;
	/* Sensor 0 is NVML_TEMPERATURE_GPU (degrees C). */
	if (p->api.get_temp && p->api.get_temp(p->dev, 0, &c) == NVML_SUCCESS) {
		p->temp_c = (double)c;
		if (!p->have_temp)
			p->temp_first_c = p->temp_max_c = p->temp_c;
		if (p->temp_c > p->temp_max_c)
			p->temp_max_c = p->temp_c;
		p->have_temp = 1;
	}
	unsigned long long r;
	if (p->reasons_supported && p->api.get_reasons(p->dev, &r) == NVML_SUCCESS) {
		p->reasons_seen |= r;
		if (r & NVML_REASON_SW_POWER_CAP)
			p->polls_power_cap++;
		if (r & (NVML_REASON_SW_THERMAL | NVML_REASON_HW_THERMAL))
			p->polls_thermal++;
		if (r & (NVML_REASON_HW_SLOWDOWN | NVML_REASON_HW_POWER_BRAKE))
			p->polls_hw_slowdown++;
	}
}

static int parse_index(const char *arg, unsigned int *index, struct ergon_err *err)
{
	*index = 0;
	if (arg == NULL || arg[0] == '\0')
		return 0;
	unsigned long v = 0;
	const char *c = arg;
	for (; *c >= '0' && *c <= '9' && v <= 4096; c++)
		v = v * 10 + (unsigned long)(*c - '0');
	if (*c != '\0' || c == arg || v > 4096)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument nvml:%s: expected a GPU index (0, 1, ...) as "
				     "`nvidia-smi -L` lists them",
				     arg);
	*index = (unsigned int)v;
	return 0;
}

/* nvidia-smi --help-query-gpu, power.draw: "accurate to within +/- 5
 * watts". */
#define NVML_FLOOR_W 5.0

static void fill_identity(struct ergon_instrument *inst, struct nvml_priv *p, const char *name,
			  const char *serial, unsigned int arch, int averaged)
{
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "NVIDIA");
	/* Bounded copies (the names NVML returns may be longer than the
	 * identity's fields): -Os sees the truncation -O3 does not. */
	snprintf(id->model, sizeof(id->model), "%.*s", (int)sizeof(id->model) - 1, name);
	snprintf(id->serial, sizeof(id->serial), "%.*s", (int)sizeof(id->serial) - 1, serial);
	/* NVIDIA rates no percentage; nvidia-smi documents power.draw as
	 * accurate to within +-5 W (noted below). */
	id->accuracy_pct = 0.0;
	/* The documented +-5 W applies to the board power sensor; the energy
	 * counter integrates the same sensor and NVIDIA states no separate
	 * figure for it, so both modes carry +-5 W x span
	 * (docs/internals/nvml.md). */
	id->floor_w = NVML_FLOOR_W;
	/* The rating with its sources (docs/UNCERTAINTY.md): the +-5 W bound
	 * of the reading; NVML adds +-5 % of the draw for Fermi and Kepler
	 * GPUs (nvmlDeviceGetPowerUsage's reference; Fermi predates
	 * nvmlDeviceArchitecture_t, whose first value is Kepler). */
	ergon_rating_init(&id->rating, ERGON_RATING_POWER);
	ergon_rating_add_pterm(&id->rating, "rated accuracy (absolute)", ERGON_PTERM_OFFSET_W,
			       NVML_FLOOR_W,
			       "nvidia-smi --help-query-gpu, power.draw: accurate to within +/- 5 "
			       "watts");
	if (arch != UINT_MAX && arch <= NVML_ARCH_KEPLER)
		ergon_rating_add_pterm(&id->rating, "gain", ERGON_PTERM_GAIN_PCT, 5.0,
				       "NVML API reference, nvmlDeviceGetPowerUsage: on Fermi and "
				       "Kepler GPUs the reading is accurate to within +/- 5%% of "
				       "current power draw");
	id->rating.offset_constant = 1;
	ergon_rated_unknown(&id->rating.timebase_ppm,
			    "NVIDIA states no tolerance for the energy counter's clock");
	id->n_rails = 1;
	id->total_rail = 0;
	snprintf(id->rails[0], sizeof(id->rails[0]), "gpu%u", p->index);
	snprintf(id->clock, sizeof(id->clock), "host_monotonic");
	id->provenance = ERGON_PROV_MEASURED;
	id->sample_rate_hz = 0.0; /* not documented; the stats report the distinct rate */
	char archs[16];
	if (arch == UINT_MAX)
		snprintf(archs, sizeof(archs), "unknown");
	else
		snprintf(archs, sizeof(archs), "%u", arch);
	snprintf(id->validated_against, sizeof(id->validated_against),
		 "a stub libnvidia-ml only (not yet on a GPU)");
	if (p->mode == NVML_MODE_ENERGY) {
		/* nvmlDeviceGetTotalEnergyConsumption counts millijoules. */
		id->resolution_j = 1e-3;
		id->resolution_w = 0.0;
		id->averaging_period_s = 0.0;
		snprintf(id->integrates, sizeof(id->integrates), "energy");
		snprintf(id->notes, sizeof(id->notes),
			 "Driver validated against a stub libnvidia-ml only, not yet on a GPU. "
			 "Whole-board GPU energy from nvmlDeviceGetTotalEnergyConsumption (mJ "
			 "since driver load), differenced from start. Architecture %s. "
			 "Throttle evidence from %s and the GPU temperature.",
			 archs, p->api.reasons_symbol[0] ? p->api.reasons_symbol : "(none)");
	} else {
		/* nvmlDeviceGetPowerUsage returns milliwatts. */
		id->resolution_w = 1e-3;
		id->resolution_j = 0.0;
		id->averaging_period_s = averaged ? NVML_AVERAGING_S : 0.0;
		snprintf(id->integrates, sizeof(id->integrates), "none");
		snprintf(id->notes, sizeof(id->notes),
			 "Driver validated against a stub libnvidia-ml only, not yet on a GPU. "
			 "Power from nvmlDeviceGetPowerUsage (mW) because %s. Architecture %s: "
			 "%s. nvidia-smi documents power.draw as accurate to within +-5 W. "
			 "Throttle evidence from %s and the GPU temperature.",
			 p->fallback_why, archs,
			 averaged ? "the reading is a 1 s average, not instantaneous; windows "
				    "shorter than 5 s are flagged"
				  : "the reading is instantaneous",
			 p->api.reasons_symbol[0] ? p->api.reasons_symbol : "(none)");
	}
}

static void nvml_teardown(struct nvml_priv *p)
{
	if (p->inited)
		p->api.shutdown();
	p->inited = 0;
	nvml_api_unload(&p->api);
}

static int nvml_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		     struct ergon_err *err)
{
	struct nvml_priv *p = calloc(1, sizeof(*p));
	int rc;
	if (p == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	rc = parse_index(opts->arg, &p->index, err);
	if (rc)
		goto fail;
	rc = nvml_api_load(&p->api, ergon_options_get(opts, "lib"), err);
	if (rc)
		goto fail;
	int nr = p->api.init();
	if (nr != NVML_SUCCESS) {
		rc = nvml_fail(p, "nvmlInit_v2", nr, err);
		goto fail;
	}
	p->inited = 1;
	unsigned int count = 0;
	nr = p->api.get_count(&count);
	if (nr != NVML_SUCCESS) {
		rc = nvml_fail(p, "nvmlDeviceGetCount_v2", nr, err);
		goto fail;
	}
	if (p->index >= count) {
		rc = ergon_err_set(err, ERGON_ENOENT,
				   "--instrument nvml:%u: this machine has %u NVIDIA GPU(s) "
				   "(indices 0..%d); pick one that `nvidia-smi -L` lists",
				   p->index, count, (int)count - 1);
		goto fail;
	}
	nr = p->api.get_handle(p->index, &p->dev);
	if (nr != NVML_SUCCESS) {
		rc = nvml_fail(p, "nvmlDeviceGetHandleByIndex_v2", nr, err);
		goto fail;
	}
	char name[96] = "NVIDIA GPU", serial[64] = "";
	if (p->api.get_name && p->api.get_name(p->dev, name, sizeof(name)) != NVML_SUCCESS)
		snprintf(name, sizeof(name), "NVIDIA GPU");
	if (p->api.get_serial && p->api.get_serial(p->dev, serial, sizeof(serial)) != NVML_SUCCESS)
		serial[0] = '\0';
	if (serial[0] == '\0' && p->api.get_uuid &&
	    p->api.get_uuid(p->dev, serial, sizeof(serial)) != NVML_SUCCESS)
		serial[0] = '\0';
	unsigned int arch = UINT_MAX;
	if (p->api.get_arch == NULL || p->api.get_arch(p->dev, &arch) != NVML_SUCCESS)
		arch = UINT_MAX; /* unknown: treat power as averaged (the safe side) */
	/* Prefer the energy counter; fall back where it is missing. */
	unsigned long long mj;
	if (p->api.get_energy == NULL) {
		snprintf(p->fallback_why, sizeof(p->fallback_why),
			 "this NVML has no nvmlDeviceGetTotalEnergyConsumption");
	} else {
		nr = p->api.get_energy(p->dev, &mj);
		if (nr == NVML_SUCCESS)
			p->mode = NVML_MODE_ENERGY;
		else
			snprintf(p->fallback_why, sizeof(p->fallback_why),
				 "nvmlDeviceGetTotalEnergyConsumption answered \"%s\" (NVML %d; "
				 "the counter needs Volta or newer)",
				 nvml_api_strerror(&p->api, nr), nr);
	}
	if (p->mode == 0) {
		unsigned int mw;
		if (p->api.get_power == NULL) {
			rc = ergon_err_set(err, ERGON_ENOTSUP,
					   "nvml device %u (%s): %s, and this NVML has no "
					   "nvmlDeviceGetPowerUsage either; this GPU cannot be "
					   "measured through NVML",
					   p->index, name, p->fallback_why);
			goto fail;
		}
		nr = p->api.get_power(p->dev, &mw);
		if (nr != NVML_SUCCESS) {
			rc = ergon_err_set(
			    err, nr == NVML_ERROR_NOT_SUPPORTED ? ERGON_ENOTSUP : ERGON_EDEVICE,
			    "nvml device %u (%s): %s, and nvmlDeviceGetPowerUsage "
			    "failed: %s (NVML %d); this GPU reports no power through "
			    "NVML (consumer boards often do not): use a power meter on "
			    "its supply instead",
			    p->index, name, p->fallback_why, nvml_api_strerror(&p->api, nr), nr);
			goto fail;
		}
		p->mode = NVML_MODE_POWER;
	}
	unsigned long long r;
	p->reasons_supported =
	    p->api.get_reasons != NULL && p->api.get_reasons(p->dev, &r) == NVML_SUCCESS;
	inst->priv = p;
	fill_identity(inst, p, name, serial, arch, nvml_power_is_averaged(arch, name));
	return 0;
fail:
	nvml_teardown(p);
	free(p);
	return rc;
}

static int nvml_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct nvml_priv *p = inst->priv;
	p->have_last = 0;
	p->total_j = 0.0;
	p->reads = p->distinct = p->backwards = 0;
	p->polls = 0;
	return 0;
}

static int nvml_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		     struct ergon_err *err)
{
	struct nvml_priv *p = inst->priv;
	*n = 0;
	if (cap == 0)
		return 0;
	struct ergon_sample *o = &buf[0];
	memset(o, 0, sizeof(*o));
	double t_s = ergon_sysfs_now_s();
	o->t_s = t_s;
	int distinct;
	if (p->mode == NVML_MODE_ENERGY) {
		unsigned long long mj;
		int nr = p->api.get_energy(p->dev, &mj);
		if (nr != NVML_SUCCESS)
			return nvml_fail(p, "nvmlDeviceGetTotalEnergyConsumption", nr, err);
		o->fields = ERGON_F_ENERGY;
		distinct = !p->have_last || mj != p->last_mj;
		if (p->have_last && mj < p->last_mj) {
			/* A 64-bit mJ counter does not wrap: this is a reset. */
			if (++p->backwards == 1)
				ergon_issue_add(
				    inst->issues, "instrument.counter_backwards",
				    json_pack("{s:s, s:I, s:I}", "call",
					      "nvmlDeviceGetTotalEnergyConsumption", "previous_mj",
					      (json_int_t)p->last_mj, "now_mj", (json_int_t)mj),
				    "nvml device %u: the total-energy counter went from %llu to "
				    "%llu mJ, backwards (a driver reload or GPU reset); the "
				    "interval was not added",
				    p->index, p->last_mj, mj);
			o->fields = 0;
		} else if (p->have_last) {
			p->total_j += (double)(mj - p->last_mj) * 1e-3;
		}
		p->last_mj = mj;
		p->have_last = 1;
		o->energy_j = p->total_j;
	} else {
		unsigned int mw;
		int nr = p->api.get_power(p->dev, &mw);
		if (nr != NVML_SUCCESS)
			return nvml_fail(p, "nvmlDeviceGetPowerUsage", nr, err);
		o->power_w = (double)mw * 1e-3;
		o->fields = ERGON_F_POWER;
		distinct = !p->have_last || mw != p->last_mw;
		p->last_mw = mw;
		p->have_last = 1;
	}
	poll_evidence(p, t_s);
	if (p->have_temp) {
		o->temp_c = p->temp_c;
		o->fields |= ERGON_F_TEMP;
	}
	if (distinct)
		p->distinct++;
	if (p->reads == 0)
		p->first_t_s = t_s;
	p->last_t_s = t_s;
	p->reads++;
	*n = 1;
	return 0;
}

static int nvml_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct nvml_priv *p = inst->priv;
	/* The whole run is the longest window there is: if even that is short
	 * against the averaging period, say so here too. */
	if (p->reads > 1)
		ergon_instrument_check_window(inst, p->last_t_s - p->first_t_s, inst->issues);
	return 0;
}

static double rate_hz(long count, double span_s)
{
	return span_s > 0.0 && count > 1 ? (double)(count - 1) / span_s : 0.0;
}

static json_t *nvml_stats(const struct ergon_instrument *inst)
{
	const struct nvml_priv *p = inst->priv;
	double span = p->last_t_s - p->first_t_s;
	json_t *rail =
	    json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:I}", "rail", inst->identity.rails[0],
		      "mode", p->mode == NVML_MODE_ENERGY ? "energy" : "power", "reads",
		      (json_int_t)p->reads, "distinct_updates", (json_int_t)p->distinct,
		      "read_rate_hz", rate_hz(p->reads, span), "distinct_rate_hz",
		      rate_hz(p->distinct, span), "counter_backwards", (json_int_t)p->backwards);
	json_t *ev = json_pack(
	    "{s:s, s:b, s:I, s:I, s:I, s:I, s:I}", "reasons_symbol", p->api.reasons_symbol,
	    "reasons_supported", p->reasons_supported, "reasons_seen", (json_int_t)p->reasons_seen,
	    "polls", (json_int_t)p->polls, "polls_power_cap", (json_int_t)p->polls_power_cap,
	    "polls_thermal", (json_int_t)p->polls_thermal, "polls_hw_slowdown",
	    (json_int_t)p->polls_hw_slowdown);
	if (ev && p->have_temp) {
		json_object_set_new(ev, "temp_first_c", json_real(p->temp_first_c));
		json_object_set_new(ev, "temp_last_c", json_real(p->temp_c));
		json_object_set_new(ev, "temp_max_c", json_real(p->temp_max_c));
	}
	json_t *rails = json_array();
	json_array_append_new(rails, rail);
	return json_pack("{s:o, s:o}", "rails", rails, "evidence", ev);
}

static void nvml_close(struct ergon_instrument *inst)
{
	struct nvml_priv *p = inst->priv;
	if (p == NULL)
		return;
	nvml_teardown(p);
	free(p);
	inst->priv = NULL;
}

static int nvml_scan(const struct ergon_instrument_options *opts, json_t **found,
		     struct ergon_err *err)
{
	struct nvml_api api;
	*found = NULL;
	int rc = nvml_api_load(&api, ergon_options_get(opts, "lib"), err);
	if (rc)
		return rc;
	int nr = api.init();
	if (nr != NVML_SUCCESS) {
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "%s: nvmlInit_v2 failed: %s (NVML %d); the library is "
				   "present but the driver is not usable: load the NVIDIA kernel "
				   "module (check `nvidia-smi`)",
				   api.lib, nvml_api_strerror(&api, nr), nr);
		nvml_api_unload(&api);
		return rc;
	}
	unsigned int count = 0;
	nr = api.get_count(&count);
	if (nr != NVML_SUCCESS || count == 0) {
		rc = ergon_err_set(err, ERGON_ENOENT,
				   "%s: NVML reports no GPU (%s); check `nvidia-smi -L`", api.lib,
				   nr != NVML_SUCCESS ? nvml_api_strerror(&api, nr) : "0 devices");
	} else {
		*found = json_array();
		for (unsigned int i = 0; i < count; i++) {
			nvml_device d;
			char name[96] = "NVIDIA GPU", id[32];
			unsigned long long mj;
			if (api.get_handle(i, &d) != NVML_SUCCESS)
				continue;
			if (api.get_name)
				api.get_name(d, name, sizeof(name));
			int energy = api.get_energy && api.get_energy(d, &mj) == NVML_SUCCESS;
			snprintf(id, sizeof(id), "nvml:%u", i);
			json_array_append_new(
			    *found, json_pack("{s:s, s:s, s:s}", "id", id, "model", name, "reads",
					      energy ? "energy counter (mJ)" : "power (mW)"));
		}
	}
	api.shutdown();
	nvml_api_unload(&api);
	return rc;
}

const struct ergon_instrument_driver ergon_instrument_nvml = {
    .name = "nvml",
    .longname = "NVIDIA GPU energy/power via NVML (libnvidia-ml.so.1, loaded at run time)",
    .scan = nvml_scan,
    .open = nvml_open,
    .start = nvml_start,
    .read = nvml_read,
    .stop = nvml_stop,
    .close = nvml_close,
    .stats = nvml_stats,
};

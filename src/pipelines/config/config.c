/* config/: the configuration: keys, YAML, rules, boards.
 *
 * The configuration keys (one table: name, type, range, default) and the
 * typed scalar parser used by the YAML loader and --set. */
#include "ergon/config.h"
#include "ergon/dynbuf.h"
#include "ergon/suggest.h"

#include "pipelines/config/config_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(struct ergon_config, field)
#define SZ(field) sizeof(((struct ergon_config *)0)->field)

static const char *const transports[] = {"rtt", "uart", "usb_cdc", "swo", NULL};
static const char *const lifecycles[] = {"sim", "qemu", "jlink", "openocd", NULL};
static const char *const window_modes[] = {"auto", "fixed", NULL};
static const char *const probes[] = {"infer", "busy_loop", NULL};
static const char *const aggregations[] = {"median", "mean", "trimmed", NULL};
static const char *const power_modes[] = {"external", "internal", NULL};
static const char *const firmwares[] = {"dedicated", "shared", NULL};
static const char *const resets[] = {
    "auto", "power_cycle", "none", "debug_reset", "swpoi_reset", "debug_reset+swpoi_reset", NULL};
static const char *const formats[] = {"csv", "json", NULL};
/* Instrument drivers a profile run can name (DESIGN.md's driver list plus
 * the target's on-board INA228). */
static const char *const power_drivers[] = {"joulescope", "ina228", "sim",	 "ppk2", "hwmon",
					    "rapl",	  "nvml",   "synthetic", NULL};
static const char *const ina228_boards[] = {"", "mikroe-power-monitor-click", "adafruit-ina228",
					    NULL};
/* INA228 datasheet (SBOSA20), ADC_CONFIG register: the conversion times of
 * the VBUSCT/VSHCT/VTCT fields and the sample counts of the AVG field. */
static const uint64_t ina228_conv_us[] = {50, 84, 150, 280, 540, 1052, 2074, 4120, 0};
static const uint64_t ina228_avg[] = {1, 4, 16, 64, 128, 256, 512, 1024, 0};

#define B(n, f, d)                                                  \
	{                                                           \
		n, KT_BOOL, OFF(f), 0, 0, 0, 0, 0, NULL, NULL, 0, d \
	}
#define U(n, f, lo, hi, d)                                            \
	{                                                             \
		n, KT_UINT, OFF(f), 0, lo, hi, 0, 0, NULL, NULL, 0, d \
	}
#define UX(n, f, lo, hi, d)                                           \
	{                                                             \
		n, KT_UINT, OFF(f), 0, lo, hi, 0, 0, NULL, NULL, 1, d \
	}
#define UA(n, f, set, d)                                                    \
	{                                                                   \
		n, KT_UINT, OFF(f), 0, 0, UINT64_MAX, 0, 0, NULL, set, 0, d \
	}
#define D(n, f, lo, hi, d)                                              \
	{                                                               \
		n, KT_DOUBLE, OFF(f), 0, 0, 0, lo, hi, NULL, NULL, 0, d \
	}
#define OD(n, f, lo, hi, d)                                              \
	{                                                                \
		n, KT_ODOUBLE, OFF(f), 0, 0, 0, lo, hi, NULL, NULL, 0, d \
	}
#define E(n, f, vals, d)                                            \
	{                                                           \
		n, KT_ENUM, OFF(f), 0, 0, 0, 0, 0, vals, NULL, 0, d \
	}
#define S(n, f, vals, d)                                                  \
	{                                                                 \
		n, KT_STRING, OFF(f), SZ(f), 0, 0, 0, 0, vals, NULL, 0, d \
	}

/* Ranges are ours where the issue gives none: wide enough for any real
 * setup, narrow enough to catch a unit slip (ms for s, mA for A). */
const struct cfg_key ergon_cfg_keys[] = {
    S("target.board", target.board, NULL, "apollo510_evb"),
    E("target.transport", target.transport, transports, "rtt"),
    S("target.jlink_serial", target.jlink_serial, NULL, ""),
    S("target.usb_port", target.usb_port, NULL, ""),
    E("target.lifecycle", target.lifecycle, lifecycles, "jlink"),
    S("target.probe", target.probe, NULL, ""),
    U("target.heartbeat.every_n_ops", target.heartbeat.every_n_ops, 0, 1000000, "8"),
    U("target.heartbeat.every_ms", target.heartbeat.every_ms, 0, 3600000, "2000"),
    D("target.heartbeat.host_timeout_s", target.heartbeat.host_timeout_s, 0.1, 86400.0, "30"),
    OD("target.heartbeat.overall_timeout_s", target.heartbeat.overall_timeout_s, 1.0, 604800.0,
       "null"),
    S("profiling.pmu_counters.cpu", profiling.pmu_counters_cpu, NULL, "default"),
    B("profiling.per_layer", profiling.per_layer, "true"),
    U("profiling.iterations", profiling.iterations, 1, 10000000, "100"),
    U("profiling.warmup", profiling.warmup, 0, 1000000, "5"),
    E("profiling.window_mode", profiling.window_mode, window_modes, "auto"),
    U("profiling.window_target_ms", profiling.window_target_ms, 1, 3600000, "1000"),
    U("profiling.window_min", profiling.window_min, 1, 1000000000, "10"),
    U("profiling.window_max", profiling.window_max, 1, 1000000000, "500000"),
    E("profiling.clean_window_probe", profiling.clean_window_probe, probes, "infer"),
    B("profiling.clean_window_trace", profiling.clean_window_trace, "false"),
    /* The method's HPX_CLEAN_WINDOW_ATTACH_WAIT_MS (1 s); at most a minute. */
    U("profiling.clean_window_attach_wait_ms", profiling.clean_window_attach_wait_ms, 0, 60000,
      "1000"),
    E("profiling.aggregation", profiling.aggregation, aggregations, "median"),
    B("profiling.extreme_mode", profiling.extreme_mode, "false"),
    B("profiling.force_shared_sram", profiling.force_shared_sram, "false"),
    B("power.enabled", power.enabled, "false"),
    S("power.driver", power.driver, power_drivers, "joulescope"),
    E("power.mode", power.mode, power_modes, "external"),
    E("power.firmware", power.firmware, firmwares, "dedicated"),
    OD("power.duration_s", power.duration_s, 0.1, 86400.0, "null"),
    D("power.io_voltage", power.io_voltage, 1.0, 5.0, "1.8"),
    /* A PPK2 measures rails of 0.8..5 V; null: power.io_voltage. */
    OD("power.rail_voltage", power.rail_voltage, 0.8, 5.0, "null"),
    U("power.sync_gpio_pin", power.sync_gpio_pin, 0, 255, "0"),
    U("power.state_gpio_pin", power.state_gpio_pin, 0, 255, "0"),
    U("power.go_gpio_pin", power.go_gpio_pin, 0, 255, "0"),
    U("power.sync_input_index", power.sync_input_index, 0, 7, "0"),
    U("power.state_input_index", power.state_input_index, 0, 7, "1"),
    U("power.go_output_index", power.go_output_index, 0, 7, "0"),
    /* The meter's digital input the layer-marker line is wired to
     * (--layer-energy on a live PPK2: D1 by default, beside the gate). */
    U("power.marker_input_index", power.marker_input_index, 0, 7, "1"),
    {"power.lockstep", KT_TRIBOOL, OFF(power.lockstep), 0, 0, 0, 0, 0, NULL, NULL, 0, "null"},
    U("power.stats_rate_hz", power.stats_rate_hz, 1, 2000000, "1000"),
    E("power.reset_strategy", power.reset_strategy, resets, "auto"),
    S("power.serial", power.serial, NULL, ""),
    /* The same bounds as --max-uncertainty-pct on run and analyze: a
     * percentage above 0 (null: no gate). */
    OD("power.max_uncertainty_pct", power.max_uncertainty_pct, 1e-6, 1e6, "null"),
    S("power.ina228.board", power.ina228.board, ina228_boards, ""),
    OD("power.ina228.shunt_ohms", power.ina228.shunt_ohms, 1e-6, 1000.0, "null"),
    /* The shunt's budget terms (docs/UNCERTAINTY.md): unset = unknown. */
    OD("power.ina228.shunt_tolerance_pct", power.ina228.shunt_tolerance_pct, 0.0, 100.0, "null"),
    OD("power.ina228.shunt_tempco_ppm_per_c", power.ina228.shunt_tempco_ppm_per_c, 0.0, 1e5,
       "null"),
    OD("power.ina228.shunt_temp_span_c", power.ina228.shunt_temp_span_c, 0.0, 500.0, "null"),
    D("power.ina228.max_current_a", power.ina228.max_current_a, 1e-6, 100.0, "0.5"),
    U("power.ina228.i2c_iom", power.ina228.i2c_iom, 0, 7, "1"),
    /* INA228 datasheet table "Address Pins and Target Addresses": A0/A1
     * select one of 16 addresses, 0x40..0x4F. */
    UX("power.ina228.i2c_address", power.ina228.i2c_address, 0x40, 0x4F, "0x40"),
    U("power.ina228.i2c_speed_hz", power.ina228.i2c_speed_hz, 1000, 3400000, "400000"),
    UA("power.ina228.conversion_time_us", power.ina228.conversion_time_us, ina228_conv_us, "540"),
    UA("power.ina228.averaging_count", power.ina228.averaging_count, ina228_avg, "16"),
    S("power.ina228.calibration_id", power.ina228.calibration_id, NULL,
      "UNCALIBRATED-parasitic-path"),
    S("output.dir", output.dir, NULL, "results"),
    E("output.format", output.format, formats, "csv"),
    B("output.detailed", output.detailed, "false"),
};
const size_t ergon_cfg_nkeys = sizeof(ergon_cfg_keys) / sizeof(ergon_cfg_keys[0]);

_Static_assert(sizeof(ergon_cfg_keys) / sizeof(ergon_cfg_keys[0]) <= ERGON_CFG_KEYS_MAX,
	       "raise ERGON_CFG_KEYS_MAX");

size_t ergon_config_key_count(void)
{
	return ergon_cfg_nkeys;
}

const char *ergon_config_key_name(size_t i)
{
	return i < ergon_cfg_nkeys ? ergon_cfg_keys[i].name : NULL;
}

int ergon_config_key_index(const char *name)
{
	for (size_t i = 0; i < ergon_cfg_nkeys; i++)
		if (strcmp(ergon_cfg_keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *ergon_config_origin_name(int origin)
{
	switch (origin) {
	case ERGON_CFG_DEFAULT:
		return "default";
	case ERGON_CFG_BOARD:
		return "board";
	case ERGON_CFG_PRESET:
		return "preset";
	case ERGON_CFG_FILE:
		return "config file";
	case ERGON_CFG_CLI:
		return "command line";
	case ERGON_CFG_RULE:
		return "rule";
	}
	return "unknown";
}

void ergon_cfg_suggest(const char *name, const char *const *cands, size_t n, char *buf, size_t cap)
{
	const char *hit = ergon_suggest_nearest(name, cands, n);
	if (hit)
		snprintf(buf, cap, " (did you mean '%s'?)", hit);
	else if (cap)
		buf[0] = '\0';
}

static size_t count_list(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

/* "a, b, c" of a NULL-terminated list, skipping empty strings. */
static void join_list(const char *const *v, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = '\0';
	for (; *v && o + 1 < cap; v++) {
		if (**v == '\0')
			continue;
		int w = snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", *v);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

static int is_null_text(const char *t)
{
	return strcmp(t, "null") == 0 || strcmp(t, "~") == 0 || strcmp(t, "Null") == 0 ||
	       strcmp(t, "NULL") == 0 || t[0] == '\0';
}

static int parse_bool(const char *t, int *out)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off", NULL};
	for (size_t i = 0; yes[i]; i++)
		if (strcmp(t, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
	for (size_t i = 0; no[i]; i++)
		if (strcmp(t, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	return -1;
}

/* Decimal, or hexadecimal with 0x; digits only (no sign, no blanks). */
static int parse_u64(const char *t, uint64_t *out)
{
	uint64_t base = 10, acc = 0;
	const char *p = t;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (*p == '\0')
		return -1;
	for (; *p; p++) {
		uint64_t d;
		if (*p >= '0' && *p <= '9')
			d = (uint64_t)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (uint64_t)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (uint64_t)(*p - 'A' + 10);
		else
			return -1;
		if (acc > (UINT64_MAX - d) / base)
			return -2;
		acc = acc * base + d;
	}
	*out = acc;
	return 0;
}

static int parse_double(const char *t, double *out)
{
	char *end = NULL;
	if (t[0] == '\0' || t[0] == ' ' || t[0] == '\t' || t[0] == '+')
		return -1;
	/* strtod takes "nan", "inf" and hex floats; a configuration wants a
	 * plain decimal number, so letters other than an exponent are refused. */
	for (const char *p = t; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == 'e' ||
		      *p == 'E' || *p == '+'))
			return -1;
	errno = 0;
	double v = strtod(t, &end);
	if (end == t || *end != '\0' || !isfinite(v))
		return -1;
	/* A magnitude under DBL_MIN underflows to 0 or a denormal (ERANGE):
	 * refused (-2), not taken as a value the text does not say. */
	if (errno == ERANGE || fpclassify(v) == FP_SUBNORMAL)
		return -2;
	*out = v;
	return 0;
}

int ergon_cfg_apply(struct ergon_config *cfg, size_t i, const char *text, int quoted, int origin,
		    const char *where, struct ergon_err *err)
{
	const struct cfg_key *k = &ergon_cfg_keys[i];
	char *base = (char *)cfg + k->off;
	char list[512];
	switch (k->type) {
	case KT_BOOL:
	case KT_TRIBOOL: {
		int v;
		if (k->type == KT_TRIBOOL && !quoted &&
		    (is_null_text(text) || strcmp(text, "auto") == 0)) {
			*(int *)base = -1;
			break;
		}
		if (quoted || parse_bool(text, &v) != 0)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: '%.64s' is not a boolean; write true or "
					     "false%s",
					     where, k->name, text,
					     k->type == KT_TRIBOOL ? " (or null for auto)" : "");
		*(int *)base = v;
		break;
	}
	case KT_UINT: {
		uint64_t v = 0;
		int prc = quoted ? -1 : parse_u64(text, &v);
		if (prc == -1)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: '%.64s' is not an unsigned integer; write "
					     "digits without quotes (0x.. for hex)",
					     where, k->name, text);
		if (k->allowed) {
			int ok = 0;
			size_t o = 0;
			list[0] = '\0';
			for (const uint64_t *a = k->allowed; *a; a++) {
				ok |= (prc == 0 && *a == v);
				int w = snprintf(list + o, sizeof(list) - o, "%s%llu",
						 o ? ", " : "", (unsigned long long)*a);
				if (w > 0 && (size_t)w < sizeof(list) - o)
					o += (size_t)w;
			}
			if (!ok)
				return ergon_err_set(err, ERGON_ECONFIG,
						     "%s: %s: %.64s is not a value the device "
						     "supports; use one of %s",
						     where, k->name, text, list);
		} else if (prc == -2 || v < k->umin || v > k->umax) {
			if (k->hex)
				return ergon_err_set(err, ERGON_ECONFIG,
						     "%s: %s: %.64s is out of range; use a value "
						     "in [0x%llX, 0x%llX]",
						     where, k->name, text,
						     (unsigned long long)k->umin,
						     (unsigned long long)k->umax);
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: %.64s is out of range; use a value in "
					     "[%llu, %llu]",
					     where, k->name, text, (unsigned long long)k->umin,
					     (unsigned long long)k->umax);
		}
		*(uint64_t *)base = v;
		break;
	}
	case KT_DOUBLE:
	case KT_ODOUBLE: {
		double v;
		if (k->type == KT_ODOUBLE && !quoted &&
		    (is_null_text(text) || strcmp(text, "auto") == 0)) {
			*(double *)base = NAN;
			break;
		}
		int prc = quoted ? -1 : parse_double(text, &v);
		if (prc == -2)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: %.64s underflows (a magnitude under %.17g, "
					     "the smallest normal double, reads as 0 or a "
					     "denormal); use a value in [%g, %g]",
					     where, k->name, text, DBL_MIN, k->dmin, k->dmax);
		if (prc != 0)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: '%.64s' is not a number; write a decimal "
					     "number without quotes%s",
					     where, k->name, text,
					     k->type == KT_ODOUBLE ? " (or null for auto/none)"
								   : "");
		if (v < k->dmin || v > k->dmax)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: %.64s is out of range; use a value in "
					     "[%g, %g]",
					     where, k->name, text, k->dmin, k->dmax);
		*(double *)base = v;
		break;
	}
	case KT_ENUM: {
		for (size_t j = 0; k->enums[j]; j++) {
			if (strcmp(text, k->enums[j]) == 0) {
				*(int *)base = (int)j;
				goto done;
			}
		}
		char sug[96];
		ergon_cfg_suggest(text, k->enums, count_list(k->enums), sug, sizeof(sug));
		join_list(k->enums, list, sizeof(list));
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: %s: '%.64s' is not valid%s; use one of %s", where,
				     k->name, text, sug, list);
	}
	case KT_STRING: {
		size_t len = strlen(text);
		for (size_t j = 0; j < len; j++)
			if ((unsigned char)text[j] < 0x20 || text[j] == 0x7f)
				return ergon_err_set(err, ERGON_ECONFIG,
						     "%s: %s: the value holds a control character "
						     "at byte %zu; remove it",
						     where, k->name, j + 1);
		if (len >= k->size)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: %s: the value is %zu bytes, longer than the %zu "
					     "allowed; shorten it",
					     where, k->name, len, k->size - 1);
		if (k->enums) {
			size_t j;
			for (j = 0; k->enums[j]; j++)
				if (strcmp(text, k->enums[j]) == 0)
					break;
			if (k->enums[j] == NULL) {
				char sug[96];
				ergon_cfg_suggest(text, k->enums, count_list(k->enums), sug,
						  sizeof(sug));
				join_list(k->enums, list, sizeof(list));
				return ergon_err_set(
				    err, ERGON_ECONFIG,
				    "%s: %s: '%.64s' is not known%s; use one of %s", where, k->name,
				    text, sug, list);
			}
		}
		memcpy(base, text, len + 1);
		break;
	}
	}
done:
	cfg->origin[i] = (uint8_t)origin;
	snprintf(cfg->where[i], sizeof(cfg->where[i]), "%s", where);
	cfg->note[i][0] = '\0';
	return 0;
}

int ergon_config_init(struct ergon_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ergon_cfg_nkeys; i++) {
		struct ergon_err e = {0};
		/* The defaults are in the table as text; a default that does not
		 * parse is a programming error caught by the unit tests. */
		if (ergon_cfg_apply(cfg, i, ergon_cfg_keys[i].def, 0, ERGON_CFG_DEFAULT, "default",
				    &e) != 0)
			return ERGON_EUSAGE;
		cfg->where[i][0] = '\0';
	}
	cfg->issues = json_array();
	return cfg->issues ? 0 : ERGON_ENOMEM;
}

void ergon_config_cleanup(struct ergon_config *cfg)
{
	if (cfg == NULL)
		return;
	json_decref(cfg->issues);
	cfg->issues = NULL;
}

int ergon_config_set(struct ergon_config *cfg, const char *assignment, int origin,
		     struct ergon_err *err)
{
	const char *eq = strchr(assignment, '=');
	char key[128], where[ERGON_CFG_WHERE_MAX];
	snprintf(where, sizeof(where), "--set %.140s", assignment);
	if (eq == NULL || eq == assignment || (size_t)(eq - assignment) >= sizeof(key))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--set %.140s: expected KEY=VALUE, e.g. --set "
				     "profiling.iterations=200",
				     assignment);
	memcpy(key, assignment, (size_t)(eq - assignment));
	key[eq - assignment] = '\0';
	int i = ergon_config_key_index(key);
	if (i < 0) {
		const char *names[ERGON_CFG_KEYS_MAX];
		for (size_t j = 0; j < ergon_cfg_nkeys; j++)
			names[j] = ergon_cfg_keys[j].name;
		char sug[160];
		ergon_cfg_suggest(key, names, ergon_cfg_nkeys, sug, sizeof(sug));
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: unknown key '%s'%s; `ergon config show` lists every key",
				     where, key, sug);
	}
	if (cfg->resolved)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: the configuration is already resolved; set values "
				     "before ergon_config_resolve",
				     where);
	return ergon_cfg_apply(cfg, (size_t)i, eq + 1, 0, origin, where, err);
}

void ergon_config_value_text(const struct ergon_config *cfg, size_t i, char *buf, size_t cap)
{
	if (i >= ergon_cfg_nkeys || cap == 0) {
		if (cap)
			buf[0] = '\0';
		return;
	}
	const struct cfg_key *k = &ergon_cfg_keys[i];
	const char *base = (const char *)cfg + k->off;
	switch (k->type) {
	case KT_BOOL:
		snprintf(buf, cap, "%s", *(const int *)base ? "true" : "false");
		break;
	case KT_TRIBOOL: {
		int v = *(const int *)base;
		snprintf(buf, cap, "%s", v < 0 ? "auto" : v ? "true" : "false");
		break;
	}
	case KT_UINT:
		snprintf(buf, cap, k->hex ? "0x%llX" : "%llu",
			 (unsigned long long)*(const uint64_t *)base);
		break;
	case KT_DOUBLE:
	case KT_ODOUBLE: {
		double v = *(const double *)base;
		if (isnan(v))
			snprintf(buf, cap, "null");
		else
			snprintf(buf, cap, "%.15g", v);
		break;
	}
	case KT_ENUM:
		snprintf(buf, cap, "%s", k->enums[*(const int *)base]);
		break;
	case KT_STRING:
		snprintf(buf, cap, "%s", base);
		break;
	}
}

json_t *ergon_config_to_json(const struct ergon_config *cfg)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < ergon_cfg_nkeys; i++) {
		const struct cfg_key *k = &ergon_cfg_keys[i];
		const char *base = (const char *)cfg + k->off;
		json_t *v = NULL;
		switch (k->type) {
		case KT_BOOL:
			v = json_boolean(*(const int *)base);
			break;
		case KT_TRIBOOL:
			v = *(const int *)base < 0 ? json_null() : json_boolean(*(const int *)base);
			break;
		case KT_UINT:
			v = json_integer((json_int_t) * (const uint64_t *)base);
			break;
		case KT_DOUBLE:
		case KT_ODOUBLE: {
			double d = *(const double *)base;
			v = isnan(d) ? json_null() : json_real(d);
			break;
		}
		case KT_ENUM:
			v = json_string(k->enums[*(const int *)base]);
			break;
		case KT_STRING:
			v = json_string(base);
			break;
		}
		json_t *e = json_pack("{s:o?,s:s}", "value", v, "origin",
				      ergon_config_origin_name(cfg->origin[i]));
		if (e == NULL)
			goto fail;
		if (cfg->where[i][0] && json_object_set_new(e, "where", json_string(cfg->where[i])))
			goto fail_e;
		if (cfg->note[i][0] && json_object_set_new(e, "note", json_string(cfg->note[i])))
			goto fail_e;
		if (json_object_set_new(o, k->name, e))
			goto fail;
		continue;
	fail_e:
		json_decref(e);
		goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

char *ergon_config_format(const struct ergon_config *cfg)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, (size_t)1 << 24);
	if (cfg->board)
		ergon_dynbuf_addf(&b, "board       : %s (%s)\n", cfg->board->name, cfg->board->soc);
	/* The key column is as wide as the longest key, so that the values
	 * line up (profiling.clean_window_attach_wait_ms is 37 bytes). */
	int kw = 36;
	for (size_t i = 0; i < ergon_cfg_nkeys; i++)
		if ((int)strlen(ergon_cfg_keys[i].name) > kw)
			kw = (int)strlen(ergon_cfg_keys[i].name);
	ergon_dynbuf_addf(&b, "%-*s %-26s %-13s %s\n", kw, "key", "value", "origin", "from");
	for (size_t i = 0; i < ergon_cfg_nkeys; i++) {
		char v[1100];
		ergon_config_value_text(cfg, i, v, sizeof(v));
		const char *where = cfg->where[i];
		ergon_dynbuf_addf(&b, "%-*s %-26s %-13s %s%s%s\n", kw, ergon_cfg_keys[i].name,
				  v[0] ? v : "\"\"", ergon_config_origin_name(cfg->origin[i]), where,
				  cfg->note[i][0] && where[0] ? "; " : "", cfg->note[i]);
	}
	return ergon_dynbuf_take(&b, NULL);
}

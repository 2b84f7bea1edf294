/* The profile configuration (issue 7): YAML file (heliaPROFILER-compatible
 * keys), command-line overrides, the board registry and the rules that turn
 * what was written into the effective values, each with its origin.
 *
 * Precedence, lowest first: default < board < preset (power.ina228.board) <
 * config file < command line. A rule (lock-step auto, the power window
 * target) may then derive a value; its origin is then "rule" with a note.
 *
 * Typical use:
 *     struct ergon_config cfg;
 *     ergon_config_init(&cfg);
 *     ergon_config_load_file(&cfg, "ergon.yml", &err);   // optional
 *     ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err);
 *     ergon_config_resolve(&cfg, &err);
 *     ... cfg.power.lockstep, cfg.issues ...
 *     ergon_config_cleanup(&cfg);
 */
#ifndef ERGON_CONFIG_H
#define ERGON_CONFIG_H

#include "ergon/error.h"
#include "ergon/suggest.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where an effective value came from. */
enum ergon_cfg_origin {
	ERGON_CFG_DEFAULT = 1,
	ERGON_CFG_BOARD = 2,  /* the board registry */
	ERGON_CFG_PRESET = 3, /* an INA228 board preset */
	ERGON_CFG_FILE = 4,   /* the YAML configuration file */
	ERGON_CFG_CLI = 5,    /* --board / --set on the command line */
	ERGON_CFG_RULE = 6,   /* derived by a rule from other values (see note) */
};

enum ergon_cfg_transport {
	ERGON_TRANSPORT_RTT = 0,
	ERGON_TRANSPORT_UART,
	ERGON_TRANSPORT_USB_CDC,
	ERGON_TRANSPORT_SWO
};
enum ergon_cfg_lifecycle {
	ERGON_LIFECYCLE_SIM = 0,
	ERGON_LIFECYCLE_QEMU,
	ERGON_LIFECYCLE_JLINK,
	ERGON_LIFECYCLE_OPENOCD
};
enum ergon_cfg_window_mode { ERGON_WINDOW_AUTO = 0, ERGON_WINDOW_FIXED };
enum ergon_cfg_probe { ERGON_CFG_PROBE_INFER = 0, ERGON_CFG_PROBE_BUSY_LOOP };
enum ergon_cfg_aggregation { ERGON_AGG_MEDIAN = 0, ERGON_AGG_MEAN, ERGON_AGG_TRIMMED };
enum ergon_cfg_power_mode { ERGON_POWER_EXTERNAL = 0, ERGON_POWER_INTERNAL };
enum ergon_cfg_firmware { ERGON_FIRMWARE_DEDICATED = 0, ERGON_FIRMWARE_SHARED };
enum ergon_cfg_reset {
	ERGON_RESET_AUTO = 0,
	ERGON_RESET_POWER_CYCLE,
	ERGON_RESET_NONE,
	ERGON_RESET_DEBUG,
	ERGON_RESET_SWPOI,
	ERGON_RESET_DEBUG_SWPOI
};
enum ergon_cfg_format { ERGON_FORMAT_CSV = 0, ERGON_FORMAT_JSON };

/* One board of the registry (src/pipelines/config/boards.c). Pins are
 * GPIO numbers on the board; 0 = not wired. */
struct ergon_board {
	const char *name;
	const char *soc;
	int apollo5_family;    /* defaults to reset debug_reset+swpoi_reset */
	int wiring_registered; /* 0: sync/state/go must be set by the user */
	uint32_t sync_gpio_pin, state_gpio_pin, go_gpio_pin;
	int lifecycle;		  /* enum ergon_cfg_lifecycle default */
	const char *power_driver; /* default power.driver, NULL = keep */
	const char *hint;	  /* wiring hint for errors, may be NULL */
	const char *transport;	  /* default target.transport, NULL = keep */
};

/* The board table and a lookup (NULL when unknown). */
ERGON_API const struct ergon_board *ergon_boards(size_t *count);
ERGON_API const struct ergon_board *ergon_board_find(const char *name);

#define ERGON_CFG_KEYS_MAX 64
#define ERGON_CFG_WHERE_MAX 160
#define ERGON_CFG_NOTE_MAX 160
/* A configuration file larger than this is refused. */
#define ERGON_CFG_FILE_MAX (1024 * 1024)

/* Effective values. Doubles that may be unset hold NaN for "null". */
struct ergon_config {
	struct {
		char board[64];
		int transport; /* enum ergon_cfg_transport */
		char jlink_serial[64];
		char usb_port[256];
		int lifecycle; /* enum ergon_cfg_lifecycle */
		/* "" (the lifecycle's own link) or "gdb://HOST:PORT": read RTT
		 * through that GDB server (target.transport: rtt). */
		char probe[288];
		struct {
			uint64_t every_n_ops;
			uint64_t every_ms;
			double host_timeout_s;
			double overall_timeout_s; /* NaN = none */
		} heartbeat;
	} target;
	struct {
		char pmu_counters_cpu[64]; /* profiling.pmu_counters.cpu: preset name */
		int per_layer;
		uint64_t iterations;
		uint64_t warmup;
		int window_mode; /* enum ergon_cfg_window_mode */
		uint64_t window_target_ms;
		uint64_t window_min;
		uint64_t window_max;
		int clean_window_probe; /* enum ergon_cfg_probe */
		int clean_window_trace;
		/* HPX_CLEAN_WINDOW_ATTACH_WAIT_MS: the longest the clean window
		 * waits for the transport to drain before it opens. */
		uint64_t clean_window_attach_wait_ms;
		int aggregation; /* enum ergon_cfg_aggregation */
		int extreme_mode;
		int force_shared_sram;
	} profiling;
	struct {
		int enabled;
		char driver[32];
		int mode;	   /* enum ergon_cfg_power_mode */
		int firmware;	   /* enum ergon_cfg_firmware */
		double duration_s; /* NaN = auto (ergon_config_power_duration_s) */
		double io_voltage;   /* the target's I/O (logic) voltage: gate, state, GO levels */
		/* The measured rail's voltage, for a meter that does not measure
		 * voltage (a PPK2 in ampere mode) and for the plan's estimates;
		 * NaN until resolved, then power.io_voltage unless set. */
		double rail_voltage;
		uint64_t sync_gpio_pin;
		uint64_t state_gpio_pin;
		uint64_t go_gpio_pin;
		uint64_t sync_input_index;
		uint64_t state_input_index;
		uint64_t go_output_index;
		/* The meter's input carrying the layer-marker line
		 * (--layer-energy with a live PPK2; docs/METHOD.md). */
		uint64_t marker_input_index;
		int lockstep; /* -1 auto until resolved, then 0 or 1 */
		uint64_t stats_rate_hz;
		int reset_strategy; /* enum ergon_cfg_reset */
		char serial[64];
		/* The gate on the power stage's budgeted figures (energy, charge,
		 * mean power, energy per inference), in percent of the figure's
		 * expanded uncertainty (k = 2); NaN = no gate. */
		double max_uncertainty_pct;
		struct {
			char board[64];	   /* preset: mikroe-power-monitor-click, adafruit-ina228 */
			double shunt_ohms; /* NaN = not set (no default, on purpose) */
			/* The fitted shunt's tolerance (%), temperature coefficient
			 * (ppm/degC) and how far its temperature may be from where its
			 * value holds (degC): budget terms (docs/UNCERTAINTY.md); NaN
			 * = not stated, the term is unknown (never zero). */
			double shunt_tolerance_pct, shunt_tempco_ppm_per_c, shunt_temp_span_c;
			double max_current_a;
			uint64_t i2c_iom;
			uint64_t i2c_address;
			uint64_t i2c_speed_hz;
			uint64_t conversion_time_us;
			uint64_t averaging_count;
			char calibration_id[64];
		} ina228;
	} power;
	struct {
		char dir[1024];
		int format; /* enum ergon_cfg_format */
		int detailed;
	} output;

	/* Filled by ergon_config_resolve. */
	const struct ergon_board *board;
	int resolved;
	/* Warnings of the rules (issue registry entries, "config.*"); owned. */
	json_t *issues;

	/* Per key (index as in ergon_config_key_name): origin, where it was set
	 * ("ergon.yml:12:5", "--set", "board apollo510_evb") and a rule's note. */
	uint8_t origin[ERGON_CFG_KEYS_MAX];
	char where[ERGON_CFG_KEYS_MAX][ERGON_CFG_WHERE_MAX];
	char note[ERGON_CFG_KEYS_MAX][ERGON_CFG_NOTE_MAX];
};

/* Defaults everywhere (origin default). Pair with ergon_config_cleanup. */
ERGON_API int ergon_config_init(struct ergon_config *cfg);
ERGON_API void ergon_config_cleanup(struct ergon_config *cfg);

/* Apply a YAML configuration file (at most ERGON_CFG_FILE_MAX bytes).
 * Errors name path:line:column, the key and the fix; an unknown key
 * suggests the nearest valid one. */
ERGON_API int ergon_config_load_file(struct ergon_config *cfg, const char *path,
				     struct ergon_err *err);
/* Same from memory; name is used in messages ("ergon.yml"). */
ERGON_API int ergon_config_load_yaml(struct ergon_config *cfg, const char *name, const char *text,
				     size_t len, struct ergon_err *err);
/* Apply one "dotted.key=value" (YAML scalar syntax; "null" unsets a
 * nullable key) with the given origin (normally ERGON_CFG_CLI). */
ERGON_API int ergon_config_set(struct ergon_config *cfg, const char *assignment, int origin,
			       struct ergon_err *err);

/* Apply the board registry and presets to values not set explicitly, then
 * check and apply every rule (docs/internals/config.md). Warnings go to
 * cfg->issues. Call once, after every load and set. */
ERGON_API int ergon_config_resolve(struct ergon_config *cfg, struct ergon_err *err);

/* The power stage's capture duration. An explicit power.duration_s wins;
 * otherwise boot settle + est_runtime_s (the firmware's runtime estimated
 * from the PMU stage) + margin (docs/internals/config.md). *origin gets
 * the value's origin (ERGON_CFG_RULE when auto-tuned). */
ERGON_API int ergon_config_power_duration_s(const struct ergon_config *cfg, double est_runtime_s,
					    double *duration_s, int *origin, struct ergon_err *err);
#define ERGON_CFG_BOOT_SETTLE_S 2.0
#define ERGON_CFG_DURATION_MARGIN_FRAC 0.25
#define ERGON_CFG_DURATION_MARGIN_MIN_S 2.0

/* The keys, in listing order. */
ERGON_API size_t ergon_config_key_count(void);
ERGON_API const char *ergon_config_key_name(size_t i);
/* Index of a dotted key, or -1. */
ERGON_API int ergon_config_key_index(const char *name);
/* The effective value as YAML-like text ("true", "0x40", "auto", "null"). */
ERGON_API void ergon_config_value_text(const struct ergon_config *cfg, size_t i, char *buf,
				       size_t cap);
/* "default", "board", "preset", "config file", "command line", "rule". */
ERGON_API const char *ergon_config_origin_name(int origin);
/* {"key": {"value": ..., "origin": ..., "where": ..., "note": ...}, ...};
 * new reference (caller decrefs), NULL when out of memory. */
ERGON_API json_t *ergon_config_to_json(const struct ergon_config *cfg);

/* The effective configuration as a text table, one line per key: key,
 * value, origin, where it was set and a rule's note; a first line names
 * the board (after resolve). What `ergon config show` and `ergon profile
 * --dry-run` print. malloc'd (caller frees); NULL when out of memory. */
ERGON_API char *ergon_config_format(const struct ergon_config *cfg);

#ifdef __cplusplus
}
#endif
#endif

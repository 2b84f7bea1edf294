/* The rules that turn what was written into effective values (issue 7):
 * board registry, INA228 presets, the Apollo5 reset default, lock-step
 * auto, the power window target, and the configuration errors and
 * warnings. docs/internals/config.md states each rule. */
#include "ergon/config.h"
#include "ergon/issues.h"
#include "ergon/lifecycle.h"
#include "pipelines/config/config_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The gated window engine needs windows of at least this long with power
 * enabled and window_mode auto (issue 7). */
#define POWER_WINDOW_MIN_MS 5000u
/* A fixed window at or below this cannot yield a valid gated run. */
/* Board presets of power.ina228.board. MikroE Power Monitor Click: INA228
 * strapped to 0x4A and no shunt fitted; Adafruit INA228 breakout: 0x40 and
 * a 15 mOhm shunt (the vendors' product pages). */
#define CLICK_ADDR 0x4Au
#define ADAFRUIT_ADDR 0x40u
#define ADAFRUIT_SHUNT_OHMS 0.015

static size_t K(const char *name)
{
	int i = ergon_config_key_index(name);
	/* Every name used here is in the table; the unit tests resolve every
	 * path, so a typo cannot survive them. */
	return i < 0 ? 0 : (size_t)i;
}

static int explicit_(const struct ergon_config *cfg, size_t i)
{
	return cfg->origin[i] == ERGON_CFG_FILE || cfg->origin[i] == ERGON_CFG_CLI;
}

/* Where a value came from, for messages: "ergon.yml:4:12", "--set ...",
 * "board apollo5b_evb" or "default". */
static const char *from(const struct ergon_config *cfg, size_t i)
{
	return cfg->where[i][0] ? cfg->where[i] : ergon_config_origin_name(cfg->origin[i]);
}

static void set_u(struct ergon_config *cfg, const char *name, uint64_t v, int origin,
		  const char *where, const char *note)
{
	size_t i = K(name);
	*(uint64_t *)((char *)cfg + ergon_cfg_keys[i].off) = v;
	cfg->origin[i] = (uint8_t)origin;
	snprintf(cfg->where[i], sizeof(cfg->where[i]), "%s", where);
	snprintf(cfg->note[i], sizeof(cfg->note[i]), "%s", note ? note : "");
}

static void note(struct ergon_config *cfg, size_t i, int origin, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(struct ergon_config *cfg, size_t i, int origin, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cfg->note[i], sizeof(cfg->note[i]), fmt, ap);
	va_end(ap);
	cfg->origin[i] = (uint8_t)origin;
}

static int unknown_board(struct ergon_config *cfg, struct ergon_err *err)
{
	size_t n;
	const struct ergon_board *b = ergon_boards(&n);
	const char *names[32];
	char list[512] = "", sug[96];
	size_t o = 0;
	for (size_t i = 0; i < n && i < 32; i++) {
		names[i] = b[i].name;
		int w = snprintf(list + o, sizeof(list) - o, "%s%s", o ? ", " : "", b[i].name);
		if (w > 0 && (size_t)w < sizeof(list) - o)
			o += (size_t)w;
	}
	ergon_cfg_suggest(cfg->target.board, names, n < 32 ? n : 32, sug, sizeof(sug));
	size_t ib = K("target.board");
	return ergon_err_set(err, ERGON_ECONFIG,
			     "%s: target.board: unknown board '%s'%s; boards: %s", from(cfg, ib),
			     cfg->target.board, sug, list);
}

static void apply_board(struct ergon_config *cfg, const struct ergon_board *b)
{
	char where[ERGON_CFG_WHERE_MAX];
	snprintf(where, sizeof(where), "board %.100s", b->name);
	if (b->wiring_registered) {
		const char *pins[] = {"power.sync_gpio_pin", "power.state_gpio_pin",
				      "power.go_gpio_pin"};
		const uint32_t v[] = {b->sync_gpio_pin, b->state_gpio_pin, b->go_gpio_pin};
		for (size_t j = 0; j < 3; j++)
			if (cfg->origin[K(pins[j])] == ERGON_CFG_DEFAULT)
				set_u(cfg, pins[j], v[j], ERGON_CFG_BOARD, where, NULL);
	}
	size_t il = K("target.lifecycle");
	if (cfg->origin[il] == ERGON_CFG_DEFAULT) {
		cfg->target.lifecycle = b->lifecycle;
		cfg->origin[il] = ERGON_CFG_BOARD;
		snprintf(cfg->where[il], sizeof(cfg->where[il]), "%s", where);
	}
	size_t it = K("target.transport");
	if (b->transport && cfg->origin[it] == ERGON_CFG_DEFAULT) {
		/* The board's link; the names are the table's (a typo fails the
		 * unit tests, which resolve every board). */
		static const char *const names[] = {"rtt", "uart", "usb_cdc", "swo"};
		for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
			if (strcmp(b->transport, names[j]) == 0)
				cfg->target.transport = (int)j;
		cfg->origin[it] = ERGON_CFG_BOARD;
		snprintf(cfg->where[it], sizeof(cfg->where[it]), "%s", where);
	}
	size_t id = K("power.driver");
	if (b->power_driver && cfg->origin[id] == ERGON_CFG_DEFAULT) {
		snprintf(cfg->power.driver, sizeof(cfg->power.driver), "%s", b->power_driver);
		cfg->origin[id] = ERGON_CFG_BOARD;
		snprintf(cfg->where[id], sizeof(cfg->where[id]), "%s", where);
	}
	size_t ir = K("power.reset_strategy");
	if (b->apollo5_family && cfg->power.reset_strategy == ERGON_RESET_AUTO) {
		cfg->power.reset_strategy = ERGON_RESET_DEBUG_SWPOI;
		snprintf(cfg->where[ir], sizeof(cfg->where[ir]), "%s", where);
		note(cfg, ir, ERGON_CFG_BOARD,
		     "auto: Apollo5-family boards reset with "
		     "debug_reset+swpoi_reset");
	}
}

static void apply_ina228_preset(struct ergon_config *cfg)
{
	size_t ia = K("power.ina228.i2c_address"), is = K("power.ina228.shunt_ohms");
	const char *preset = cfg->power.ina228.board;
	char where[ERGON_CFG_WHERE_MAX];
	snprintf(where, sizeof(where), "preset %.100s", preset);
	/* A preset fills what neither the file nor the command line set. */
	if (strcmp(preset, "mikroe-power-monitor-click") == 0) {
		if (!explicit_(cfg, ia))
			set_u(cfg, "power.ina228.i2c_address", CLICK_ADDR, ERGON_CFG_PRESET, where,
			      NULL);
	} else if (strcmp(preset, "adafruit-ina228") == 0) {
		if (!explicit_(cfg, ia))
			set_u(cfg, "power.ina228.i2c_address", ADAFRUIT_ADDR, ERGON_CFG_PRESET,
			      where, NULL);
		if (!explicit_(cfg, is)) {
			cfg->power.ina228.shunt_ohms = ADAFRUIT_SHUNT_OHMS;
			cfg->origin[is] = ERGON_CFG_PRESET;
			snprintf(cfg->where[is], sizeof(cfg->where[is]), "%s", where);
		}
	}
}

/* target.probe pyocd[:UID] (UID: letters, digits, '-', '_') or
 * bmp:/dev/... (a Black Magic Probe's GDB port): the probe lifecycles of
 * hardware boards. */
static int probe_lifecycle_ok(const struct ergon_config *cfg, const char *probe, size_t ip,
			      int *is_probe, struct ergon_err *err)
{
	*is_probe = 0;
	int pyocd = strncmp(probe, "pyocd", 5) == 0 && (probe[5] == '\0' || probe[5] == ':');
	int bmp = strncmp(probe, "bmp:", 4) == 0;
	if (!pyocd && !bmp)
		return 0;
	*is_probe = 1;
	if (pyocd && probe[5] == ':') {
		const char *u = probe + 6;
		size_t n =
		    strspn(u, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
		if (n == 0 || u[n] != '\0')
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: target.probe: '%s': the probe UID after pyocd: "
					     "is letters, digits, '-' and '_' (`pyocd list` shows "
					     "it); or give pyocd alone for the only probe",
					     from(cfg, ip), probe);
	}
	if (bmp && strncmp(probe + 4, "/dev/", 5) != 0)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: target.probe: '%s': a Black Magic Probe is its GDB "
				     "serial port, bmp:/dev/ttyACM0 (the first of its two ports; "
				     "/dev/serial/by-id/*-if00 names it stably)",
				     from(cfg, ip), probe);
	if (cfg->target.lifecycle == ERGON_LIFECYCLE_SIM ||
	    cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: target.probe: %s drives a debug probe on a hardware "
				     "board, and board %s is %s; drop target.probe",
				     from(cfg, ip), probe, cfg->board ? cfg->board->name : "?",
				     cfg->target.lifecycle == ERGON_LIFECYCLE_SIM
					 ? "the virtual bench"
					 : "emulated");
	return 0;
}

/* target.probe: "", gdb://HOST:PORT with a port in 1..65535, pyocd[:UID]
 * or bmp:/dev/..., and only with target.transport: rtt; QEMU carries uart
 * or rtt. */
static int check_target(struct ergon_config *cfg, struct ergon_err *err)
{
	size_t ip = K("target.probe"), it = K("target.transport");
	const char *probe = cfg->target.probe;
	int is_probe = 0;
	int prc = probe_lifecycle_ok(cfg, probe, ip, &is_probe, err);
	if (prc)
		return prc;
	if (probe[0]) {
		const char *hp = strncmp(probe, "gdb://", 6) == 0 ? probe + 6 : NULL;
		char host[256];
		unsigned port = 0;
		if (!is_probe &&
		    (hp == NULL || strchr(hp, '/') != NULL ||
		     ergon_lifecycle_parse_hostport(hp, host, sizeof host, &port) != 0))
			return ergon_err_set(
			    err, ERGON_ECONFIG,
			    "%s: target.probe: '%s' is not gdb://HOST:PORT, pyocd[:UID] or "
			    "bmp:/dev/...; give the GDB server that reads the target "
			    "(gdb://127.0.0.1:3333 for OpenOCD or pyOCD, gdb://127.0.0.1:2331 "
			    "for JLinkGDBServer), the probe to drive, or leave it empty",
			    from(cfg, ip), probe);
		if (cfg->target.transport != ERGON_TRANSPORT_RTT)
			return ergon_err_set(err, ERGON_ECONFIG,
					     "%s: target.probe: %s reads RTT through a GDB server, "
					     "but target.transport is not rtt (%s); set "
					     "target.transport: rtt or drop target.probe",
					     from(cfg, ip), probe, from(cfg, it));
	}
	if (cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU &&
	    cfg->target.transport != ERGON_TRANSPORT_RTT &&
	    cfg->target.transport != ERGON_TRANSPORT_UART)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: target.transport: the QEMU lifecycle carries uart (UART0 "
				     "on a socket) or rtt (RTT through QEMU's gdbstub); set one "
				     "of them",
				     from(cfg, it));
	return 0;
}

static int check_rules(struct ergon_config *cfg, struct ergon_err *err)
{
	const struct ergon_board *b = cfg->board;
	int trc = check_target(cfg, err);
	if (trc)
		return trc;
	if (cfg->profiling.extreme_mode && cfg->profiling.force_shared_sram)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: profiling.extreme_mode: true cannot be combined with "
		    "profiling.force_shared_sram: true (%s): they pull the shared SSRAM "
		    "opposite ways (extreme mode powers the shared SSRAM down and keeps "
		    "one MRAM bank, for a model whose weights and arena are all in TCM; "
		    "force_shared_sram powers and retains the whole SSRAM array at boot "
		    "to measure its static power), and each firmware part assumes the "
		    "other is off; turn one of them off",
		    from(cfg, K("profiling.extreme_mode")),
		    from(cfg, K("profiling.force_shared_sram")));
	if (cfg->profiling.window_min > cfg->profiling.window_max)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: profiling.window_min %llu is above profiling.window_max "
				     "%llu (%s); make min <= max",
				     from(cfg, K("profiling.window_min")),
				     (unsigned long long)cfg->profiling.window_min,
				     (unsigned long long)cfg->profiling.window_max,
				     from(cfg, K("profiling.window_max")));
	int external = cfg->power.enabled && cfg->power.mode == ERGON_POWER_EXTERNAL;
	/* The gate (sync pin) is what an external run needs; state and go are
	 * the optional lock-step pair (a gate-only run without them). */
	if (!b->wiring_registered && external && cfg->power.sync_gpio_pin == 0)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "board %s has no registered wiring, so power.sync_gpio_pin "
				     "(the gate) must be set, and power.state_gpio_pin and "
				     "power.go_gpio_pin too for lock-step (now %llu/%llu/%llu); %s",
				     b->name, (unsigned long long)cfg->power.sync_gpio_pin,
				     (unsigned long long)cfg->power.state_gpio_pin,
				     (unsigned long long)cfg->power.go_gpio_pin,
				     b->hint ? b->hint : "set them to the pins you wired");
	size_t il = K("power.lockstep");
	if (cfg->power.lockstep == 1 &&
	    (cfg->power.state_gpio_pin == 0 || cfg->power.go_gpio_pin == 0))
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: power.lockstep: true requires power.state_gpio_pin > 0 and "
		    "power.go_gpio_pin > 0 (now %llu from %s and %llu from %s); "
		    "wire and set both pins, or set power.lockstep: false",
		    from(cfg, il), (unsigned long long)cfg->power.state_gpio_pin,
		    from(cfg, K("power.state_gpio_pin")),
		    (unsigned long long)cfg->power.go_gpio_pin, from(cfg, K("power.go_gpio_pin")));
	/* The shared power firmware is the profile build, whose flow has no
	 * READY/GO handshake (target/src/profile.c drives the gate only): a
	 * forced lock-step would wait for a READY that is never raised. */
	if (cfg->power.lockstep == 1 && cfg->power.enabled &&
	    cfg->power.mode == ERGON_POWER_EXTERNAL && cfg->power.firmware == ERGON_FIRMWARE_SHARED)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: power.lockstep: true with power.firmware: shared (%s): the shared "
		    "power firmware is the profile build, which raises the gate but never "
		    "READY and never waits for GO, so lock-step cannot run; set "
		    "power.lockstep: false (or leave it auto) for a gate-only run, or use "
		    "the dedicated power build (power.firmware: dedicated) for lock-step",
		    from(cfg, il), from(cfg, K("power.firmware")));
	/* A PPK2's D0-D7 are logic inputs: nothing on it can raise GO, so a
	 * forced lock-step would wait for a GO that never comes. */
	if (cfg->power.lockstep == 1 && cfg->power.enabled &&
	    cfg->power.mode == ERGON_POWER_EXTERNAL && strcmp(cfg->power.driver, "ppk2") == 0)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: power.lockstep: true with power.driver: ppk2: a PPK2 has no output "
		    "to raise GO with (its D0-D7 are inputs), so lock-step cannot run; set "
		    "power.lockstep: false (or leave it auto) for a gate-only run, or use a "
		    "Joulescope (power.driver: joulescope) for lock-step",
		    from(cfg, il));
	int ina228_used = cfg->power.enabled && (strcmp(cfg->power.driver, "ina228") == 0 ||
						 cfg->power.mode == ERGON_POWER_INTERNAL);
	int click = strcmp(cfg->power.ina228.board, "mikroe-power-monitor-click") == 0;
	if (ina228_used && isnan(cfg->power.ina228.shunt_ohms)) {
		if (click)
			return ergon_err_set(
			    err, ERGON_ECONFIG,
			    "%s: power.ina228.board: mikroe-power-monitor-click needs "
			    "power.ina228.shunt_ohms: the Click board carries no "
			    "shunt resistor, so ergon cannot know it; set the value of "
			    "the shunt you fitted",
			    from(cfg, K("power.ina228.board")));
		return ergon_err_set(err, ERGON_ECONFIG,
				     "power.ina228.shunt_ohms is not set and has no default on "
				     "purpose (a wrong shunt scales every current); set it to your "
				     "shunt's value, or use power.ina228.board: adafruit-ina228 "
				     "(15 mOhm)");
	}
	return 0;
}

static int apply_rules(struct ergon_config *cfg)
{
	size_t ia = K("power.ina228.i2c_address");
	if (strcmp(cfg->power.ina228.board, "mikroe-power-monitor-click") == 0 &&
	    cfg->power.ina228.i2c_address != CLICK_ADDR &&
	    ergon_issue_add(cfg->issues, "config.ina228_address_mismatch", NULL,
			    "%s: power.ina228.i2c_address 0x%llX on a MikroE Power Monitor Click, "
			    "whose INA228 answers at 0x4A: ina228_init will fail; set 0x4A",
			    from(cfg, ia), (unsigned long long)cfg->power.ina228.i2c_address))
		return ERGON_ENOMEM;

	/* Lock-step auto: on when both handshake pins are wired and the run is a
	 * gated external capture (power on, external mode, a sync pin for the
	 * gate). Internal mode never turns it on by itself. */
	size_t il = K("power.lockstep");
	if (cfg->power.lockstep < 0) {
		int gated = cfg->power.enabled && cfg->power.mode == ERGON_POWER_EXTERNAL &&
			    cfg->power.sync_gpio_pin > 0;
		int pins = cfg->power.state_gpio_pin > 0 && cfg->power.go_gpio_pin > 0;
		/* A PPK2 has no outputs to set GO with: gate-only. */
		int no_go = strcmp(cfg->power.driver, "ppk2") == 0;
		/* The shared power firmware (the profile build) has no
		 * handshake: it never raises READY. */
		int shared = cfg->power.firmware == ERGON_FIRMWARE_SHARED;
		cfg->power.lockstep = gated && pins && !no_go && !shared;
		note(cfg, il, ERGON_CFG_RULE, "auto: %s",
		     cfg->power.lockstep   ? "state and go pins > 0 in a gated external capture"
		     : !cfg->power.enabled ? "power is not enabled"
		     : gated && pins && no_go
			 ? "power.driver ppk2 has no outputs for GO: the run is gate-only"
		     : gated && pins && shared
			 ? "power.firmware shared is the profile build, which has no READY/GO "
			   "handshake: the run is gate-only"
		     : cfg->power.mode == ERGON_POWER_INTERNAL ? "internal mode never enables it"
		     : !pins				       ? "state or go pin is 0 (not wired)"
			     : "no sync pin: not a gated capture");
	}

	/* The measured rail is the target's I/O rail unless it is named. */
	size_t irv = K("power.rail_voltage");
	if (isnan(cfg->power.rail_voltage)) {
		cfg->power.rail_voltage = cfg->power.io_voltage;
		note(cfg, irv, ERGON_CFG_RULE,
		     "auto: power.io_voltage (%.3g V): the measured rail is the I/O rail unless "
		     "power.rail_voltage names it",
		     cfg->power.io_voltage);
	}

	size_t idur = K("power.duration_s");
	if (isnan(cfg->power.duration_s))
		snprintf(
		    cfg->note[idur], sizeof(cfg->note[idur]),
		    "auto: %.1f s boot settle + the PMU stage's runtime estimate + max(%.1f s, "
		    "%.0f%%)",
		    ERGON_CFG_BOOT_SETTLE_S, ERGON_CFG_DURATION_MARGIN_MIN_S,
		    ERGON_CFG_DURATION_MARGIN_FRAC * 100.0);

	size_t iw = K("profiling.window_target_ms");
	if (cfg->power.enabled && cfg->profiling.window_mode == ERGON_WINDOW_AUTO &&
	    cfg->profiling.window_target_ms < POWER_WINDOW_MIN_MS) {
		uint64_t was = cfg->profiling.window_target_ms;
		cfg->profiling.window_target_ms = POWER_WINDOW_MIN_MS;
		note(cfg, iw, ERGON_CFG_RULE,
		     "max(%llu from %s, %u): power enabled with window_mode auto",
		     (unsigned long long)was, cfg->where[iw][0] ? cfg->where[iw] : "default",
		     POWER_WINDOW_MIN_MS);
	}
	/* A fixed window runs exactly `iterations`, whatever window_target_ms
	 * says: its length is iterations x the inference time, which only the
	 * PMU stage knows. The short-window warning is raised there
	 * (src/pipelines/profile/profile_power.c), not here. */
	return 0;
}

int ergon_config_resolve(struct ergon_config *cfg, struct ergon_err *err)
{
	if (cfg->resolved)
		return 0;
	const struct ergon_board *b = ergon_board_find(cfg->target.board);
	if (b == NULL)
		return unknown_board(cfg, err);
	cfg->board = b;
	apply_board(cfg, b);
	apply_ina228_preset(cfg);
	int rc = check_rules(cfg, err);
	if (rc)
		return rc;
	rc = apply_rules(cfg);
	if (rc)
		return ergon_err_set(err, rc, "resolving the configuration: out of memory");
	cfg->resolved = 1;
	return 0;
}

int ergon_config_power_duration_s(const struct ergon_config *cfg, double est_runtime_s,
				  double *duration_s, int *origin, struct ergon_err *err)
{
	size_t id = K("power.duration_s");
	if (!isnan(cfg->power.duration_s)) {
		*duration_s = cfg->power.duration_s;
		*origin = cfg->origin[id];
		return 0;
	}
	if (!isfinite(est_runtime_s) || est_runtime_s < 0 || est_runtime_s > 86400.0)
		return ergon_err_set(
		    err, ERGON_ERANGE,
		    "power.duration_s auto: the estimated firmware runtime %g s is "
		    "not in [0, 86400]; set power.duration_s explicitly",
		    est_runtime_s);
	double margin = ERGON_CFG_DURATION_MARGIN_FRAC * est_runtime_s;
	if (margin < ERGON_CFG_DURATION_MARGIN_MIN_S)
		margin = ERGON_CFG_DURATION_MARGIN_MIN_S;
	*duration_s = ERGON_CFG_BOOT_SETTLE_S + est_runtime_s + margin;
	*origin = ERGON_CFG_RULE;
	return 0;
}

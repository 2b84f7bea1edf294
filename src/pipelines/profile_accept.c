/* Configuration that `ergon profile` accepts must act (issue 17 item 6):
 * the capture transport and the reset strategy as the lifecycle really
 * carries them out, named step by step in the plan; a value that cannot
 * act on this lifecycle yet is refused with the reason, before any stage
 * runs, never silently ignored. */
#include "ergon/issues.h"
#include "profile_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const transport_names[] = {"rtt", "uart", "usb_cdc", "swo"};
static const char *const reset_names[] = {"auto",	 "power_cycle", "none",
					  "debug_reset", "swpoi_reset", "debug_reset+swpoi_reset"};

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : "unknown";
}

static int explicit_key(const struct ergon_config *cfg, const char *key, const char **where)
{
	int i = ergon_config_key_index(key);
	if (i < 0)
		return 0;
	*where = cfg->where[i][0] ? cfg->where[i] : key;
	return cfg->origin[i] == ERGON_CFG_FILE || cfg->origin[i] == ERGON_CFG_CLI;
}

/* The transport the lifecycle reads the target's stream from. */
static int lifecycle_transport(int lifecycle, int want, int gdb_probe, const char **how)
{
	switch (lifecycle) {
	case ERGON_LIFECYCLE_JLINK:
		*how = gdb_probe ? "RTT through the GDB server of target.probe"
				 : "J-Link RTT telnet server (JLinkExe -RTTTelnetPort)";
		return ERGON_TRANSPORT_RTT;
	case ERGON_LIFECYCLE_OPENOCD:
		*how = gdb_probe ? "RTT through OpenOCD's GDB port (target.probe)"
				 : "OpenOCD `rtt server start`";
		return ERGON_TRANSPORT_RTT;
	case ERGON_LIFECYCLE_QEMU:
		if (want == ERGON_TRANSPORT_RTT) {
			*how = gdb_probe ? "RTT through the GDB server of target.probe"
					 : "RTT through QEMU's gdbstub on a free loopback port";
			return ERGON_TRANSPORT_RTT;
		}
		*how = "QEMU mps3-an547 UART0 on a unix socket";
		return ERGON_TRANSPORT_UART;
	default:
		*how = "the virtual bench's wire (any transport: the bench has one)";
		return -1;
	}
}

int prof_config_acts(const struct ergon_config *cfg, json_t *plan, json_t *issues,
		     struct ergon_err *err)
{
	const char *where = NULL;
	const char *how = NULL;
	int lc = cfg->target.lifecycle;
	const char *lname = lc == ERGON_LIFECYCLE_JLINK	    ? "jlink"
			    : lc == ERGON_LIFECYCLE_OPENOCD ? "openocd"
			    : lc == ERGON_LIFECYCLE_QEMU    ? "qemu"
							    : "sim";
	const char *want = name_of(transport_names, 4, cfg->target.transport);
	int used =
	    lifecycle_transport(lc, cfg->target.transport, cfg->target.probe[0] != '\0', &how);
	/* target.probe pyocd[:UID] / bmp:DEVICE: the probe lifecycles (rtt). */
	const char *pname = prof_lifecycle_name(cfg);
	int probe_lc = strcmp(pname, "pyocd") == 0 || strcmp(pname, "bmp") == 0;
	if (probe_lc) {
		lname = pname;
		used = ERGON_TRANSPORT_RTT;
		how = pname[0] == 'p' ? "RTT through `pyocd gdbserver` on a free loopback port"
				      : "RTT through the Black Magic Probe's GDB serial port";
	}
	if (used >= 0 && used != cfg->target.transport &&
	    explicit_key(cfg, "target.transport", &where))
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: target.transport %s cannot act on the %s lifecycle: it reads the "
		    "target's stream from the %s only; set target.transport: %s, or capture %s "
		    "with `ergon capture --transport ...` and analyse the log with `ergon parse`",
		    where, want, lname, how, name_of(transport_names, 4, used), want);
	json_object_set_new(
	    plan, "transport",
	    json_pack("{s:s,s:s,s:s}", "configured", want, "used",
		      used >= 0 ? name_of(transport_names, 4, used) : "virtual_wire", "how", how));

	/* The reset: what each lifecycle really does at its reset step. */
	int rs = cfg->power.reset_strategy;
	const char *rname = name_of(reset_names, 6, rs);
	int probe = lc == ERGON_LIFECYCLE_JLINK || lc == ERGON_LIFECYCLE_OPENOCD;
	const char *debug_step = lc == ERGON_LIFECYCLE_JLINK ? "debug_reset: JLinkExe `r` then `g`"
				 : lc == ERGON_LIFECYCLE_OPENOCD
				     ? "debug_reset: OpenOCD `reset halt`; RTT setup; `resume`"
				 : lc == ERGON_LIFECYCLE_QEMU ? "restart: a new qemu-system-arm"
							      : "restart: a new virtual board";
	int explicit_rs = explicit_key(cfg, "power.reset_strategy", &where);
	int acts = rs == ERGON_RESET_AUTO || (probe && rs == ERGON_RESET_DEBUG);
	if (probe_lc) {
		acts = rs == ERGON_RESET_AUTO || rs == ERGON_RESET_DEBUG || rs == ERGON_RESET_NONE;
		debug_step = rs == ERGON_RESET_NONE ? "none: no reset (the target runs as flashed)"
			     : pname[0] == 'p'	    ? "debug_reset: `pyocd reset`"
						    : "debug_reset: vRun through the BMP (reset, "
						      "halted until the capture continues it)";
	}
	if (lc == ERGON_LIFECYCLE_OPENOCD) {
		/* The openocd lifecycle carries out none, debug_reset and the
		 * swpoi sequences itself (a TCL proc the target script defines),
		 * and refuses power_cycle with its own reason when it opens. */
		acts = 1;
		debug_step = rs == ERGON_RESET_NONE ? "none: OpenOCD RTT setup; `resume` (no reset)"
			     : rs == ERGON_RESET_SWPOI
				 ? "swpoi_reset: RTT setup; the target script's ergon_swpoi_reset"
			     : rs == ERGON_RESET_DEBUG_SWPOI
				 ? "debug_reset+swpoi_reset: OpenOCD `reset halt`; RTT setup; "
				   "ergon_swpoi_reset"
			     : rs == ERGON_RESET_POWER_CYCLE
				 ? "power_cycle: refused by the openocd lifecycle"
				 : "debug_reset: OpenOCD `reset halt`; RTT setup; `resume`";
	}
	if (!acts && explicit_rs && probe)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: power.reset_strategy %s cannot act on the %s lifecycle yet: its reset "
		    "step is %s only (ergon switches no power and does not have the SWPOI "
		    "register write of %s); set power.reset_strategy: debug_reset (or auto)",
		    where, rname, lname, debug_step, cfg->board ? cfg->board->soc : "this SoC");
	if (!acts && explicit_rs)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.reset_strategy %s has no meaning on the %s "
				     "lifecycle: an emulated board has one reset (%s); set "
				     "power.reset_strategy: auto",
				     where, rname, lname, debug_step);
	json_t *steps = json_array();
	json_array_append_new(steps, json_string(debug_step));
	const char *missing = NULL;
	if (!acts && rs == ERGON_RESET_DEBUG_SWPOI)
		missing = "swpoi_reset";
	else if (!acts)
		missing = rname;
	json_object_set_new(plan, "reset",
			    json_pack("{s:s,s:o,s:s?}", "strategy", rname, "steps", steps,
				      "not_performed", missing));
	if (missing != NULL && issues != NULL &&
	    ergon_issue_add(
		issues, "profile.reset_step_not_performed",
		json_pack("{s:s,s:s}", "strategy", rname, "not_performed", missing),
		"power.reset_strategy %s (from the board rule) asks for %s, which the %s "
		"lifecycle does not perform yet: only %s runs, so the power-on state the "
		"method resets into may differ; set power.reset_strategy: debug_reset to "
		"state what runs",
		rname, missing, lname, debug_step) != 0)
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	return 0;
}

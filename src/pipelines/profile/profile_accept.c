/* The accept stage of `ergon profile`. Configuration that it accepts must
 * act (issue 17 item 6):
 * the capture transport and the reset strategy as the lifecycle really
 * carries them out, named step by step in the plan; a value that cannot
 * act on this lifecycle yet is refused with the reason, before any stage
 * runs, never silently ignored. */
#include "ergon/issues.h"
#include "ergon/lifecycle.h"
#include "ergon/sim.h"
#include "profile_internal.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const transport_names[] = {"rtt", "uart", "usb_cdc", "swo"};
static const char *const reset_names[] = {"auto",	 "power_cycle", "none",
					  "debug_reset", "swpoi_reset", "debug_reset+swpoi_reset"};

/* How the stages' lifecycles carry the configuration out (the stream, the
 * reset, the SWPOI write): here, beside the plan's account of it, so the
 * two cannot drift. The lifecycle stream (enum ergon_lifecycle_stream) of
 * a configuration: target.transport rtt on QEMU or with target.probe
 * gdb:// is RTT_GDB. */
static int lifecycle_stream(const struct ergon_config *cfg)
{
	/* RTT through a GDB server: QEMU's gdbstub, or the one target.probe
	 * names; otherwise the lifecycle's own link (a probe's RTT server). */
	if (cfg->target.transport == ERGON_TRANSPORT_RTT &&
	    (cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU || cfg->target.probe[0]))
		return ERGON_LC_STREAM_RTT_GDB;
	/* A probe flashes and resets; the UART / USB CDC is a host port. */
	int probe = cfg->target.lifecycle == ERGON_LIFECYCLE_JLINK ||
		    cfg->target.lifecycle == ERGON_LIFECYCLE_OPENOCD;
	if (probe && (cfg->target.transport == ERGON_TRANSPORT_UART ||
		      cfg->target.transport == ERGON_TRANSPORT_USB_CDC))
		return ERGON_LC_STREAM_SERIAL;
	return ERGON_LC_STREAM_DEFAULT;
}

/* The board SoC's SWPOI register write (address, value); 0, 0 when the SoC
 * has none known. */
static void lifecycle_swpoi(const struct ergon_config *cfg, unsigned long *addr,
			    unsigned long *value)
{
	/* Every Ambiq Apollo part ergon knows has RSTGEN's SWPOI at the same
	 * address (include/ergon/lifecycle.h names the sources). */
	const char *soc = cfg->board ? cfg->board->soc : NULL;
	int ambiq = soc != NULL && strncmp(soc, "Apollo", 6) == 0;
	*addr = ambiq ? ERGON_SWPOI_AMBIQ_ADDR : 0;
	*value = ambiq ? ERGON_SWPOI_AMBIQ_KEY : 0;
}

/* power.reset_strategy as enum ergon_lifecycle_reset. */
static int lifecycle_reset(const struct ergon_config *cfg)
{
	switch (cfg->power.reset_strategy) {
	case ERGON_RESET_POWER_CYCLE:
		return ERGON_LC_RESET_POWER_CYCLE;
	case ERGON_RESET_NONE:
		return ERGON_LC_RESET_NONE;
	case ERGON_RESET_DEBUG:
		return ERGON_LC_RESET_DEBUG;
	case ERGON_RESET_SWPOI:
		return ERGON_LC_RESET_SWPOI;
	case ERGON_RESET_DEBUG_SWPOI:
		return ERGON_LC_RESET_DEBUG_SWPOI;
	default:
		return ERGON_LC_RESET_AUTO;
	}
}

/* The lifecycle options of the configuration: the boot path and the live
 * power path (profile_live.c) both open with them, so target.probe, the
 * stream, the reset strategy, its SWPOI write and target.usb_port reach
 * every lifecycle. */
static void lifecycle_opts(const struct ergon_config *cfg, struct ergon_lifecycle_opts *lo)
{
	const char *probe = cfg->target.probe;
	*lo = (struct ergon_lifecycle_opts){
	    .board = cfg->board->name,
	    .device = cfg->board->soc,
	    .probe_serial = cfg->target.jlink_serial,
	    .stream = lifecycle_stream(cfg),
	    /* target.probe is checked to be one of its forms (resolve.c). */
	    .gdb_server = strncmp(probe, "gdb://", 6) == 0 ? probe + 6 : NULL,
	    .probe = probe,
	};
	lo->reset_strategy = lifecycle_reset(cfg);
	lo->serial_port = cfg->target.usb_port;
	lifecycle_swpoi(cfg, &lo->swpoi_addr, &lo->swpoi_value);
}

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : "unknown";
}

/* The drain wait's bound ergon's an547 firmware is built with
 * (target/port/an547/main.c, port/common/model_main.c: drain_wait_max_us 2000). */
#define AN547_ATTACH_WAIT_MS 2u

static int explicit_key(const struct ergon_config *cfg, const char *key, const char **where)
{
	int i = ergon_config_key_index(key);
	if (i < 0)
		return 0;
	*where = cfg->where[i][0] ? cfg->where[i] : key;
	return cfg->origin[i] == ERGON_CFG_FILE || cfg->origin[i] == ERGON_CFG_CLI;
}

/* Why a probe lifecycle cannot give SWO (NULL: it can). */
static const char *swo_refusal(int lifecycle)
{
	if (lifecycle == ERGON_LIFECYCLE_JLINK)
		return "ergon reads SWO as ITM bytes from a trace server's TCP port "
		       "(swo:tcp:HOST:PORT), and the jlink lifecycle drives JLinkExe, which "
		       "starts no SWO server; the SWO pin rate also depends on the part's "
		       "trace clock, which ergon's board table does not hold";
	return "OpenOCD's trace server (`tpiu ... -traceclk HZ -pin-freq HZ -output :PORT`) "
	       "needs the part's trace clock and SWO pin rate, which ergon's board table "
	       "does not hold, so the openocd lifecycle does not configure it";
}

/* The transport the lifecycle reads the target's stream from: *how says
 * where; -1 for the virtual bench (one wire). On a probe lifecycle *refuse
 * is set when the configured transport cannot act there. */
static int lifecycle_transport(const struct ergon_config *cfg, const char **how,
			       const char **refuse)
{
	int lifecycle = cfg->target.lifecycle, want = cfg->target.transport;
	int gdb_probe = cfg->target.probe[0] != '\0';
	*refuse = NULL;
	switch (lifecycle) {
	case ERGON_LIFECYCLE_JLINK:
	case ERGON_LIFECYCLE_OPENOCD:
		if (want == ERGON_TRANSPORT_UART || want == ERGON_TRANSPORT_USB_CDC) {
			*how = "serial:target.usb_port (the probe flashes and resets; the port "
			       "is opened before the reset so the boot's first line is kept)";
			if (!cfg->target.usb_port[0])
				*refuse = "the target's UART / USB CDC is read from a host serial "
					  "port and target.usb_port is empty";
			return want;
		}
		if (want == ERGON_TRANSPORT_SWO) {
			*how = "none";
			*refuse = swo_refusal(lifecycle);
			return want;
		}
		if (lifecycle == ERGON_LIFECYCLE_JLINK)
			*how = gdb_probe ? "RTT through the GDB server of target.probe"
					 : "J-Link RTT telnet server (JLinkExe -RTTTelnetPort)";
		else
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

/* The reset steps a probe lifecycle carries out for strategy rs, one
 * string per step, appended to steps; the SWPOI write names its register. */
static void probe_reset_steps(const struct ergon_config *cfg, int rs, int rtt, json_t *steps)
{
	int jlink = cfg->target.lifecycle == ERGON_LIFECYCLE_JLINK;
	unsigned long addr, value;
	lifecycle_swpoi(cfg, &addr, &value);
	int debug =
	    rs == ERGON_RESET_AUTO || rs == ERGON_RESET_DEBUG || rs == ERGON_RESET_DEBUG_SWPOI;
	int swpoi = rs == ERGON_RESET_SWPOI || rs == ERGON_RESET_DEBUG_SWPOI;
	if (debug)
		json_array_append_new(steps,
				      json_string(jlink ? "debug_reset: JLinkExe `r` (reset, halt)"
							: "debug_reset: OpenOCD `reset halt`"));
	if (!jlink && rtt)
		json_array_append_new(steps, json_string("OpenOCD `rtt setup 0x20000000 0x100000 "
							 "\"SEGGER RTT\"`"));
	if (swpoi)
		json_array_append_new(
		    steps,
		    jlink ? json_sprintf("swpoi_reset: JLinkExe `w4 0x%08lX 0x%lX` (RSTGEN SWPOI: "
					 "the part restarts)",
					 addr, value)
			  : json_sprintf(
				"swpoi_reset: OpenOCD `mww 0x%08lx 0x%lx` (RSTGEN SWPOI: the "
				"part restarts), or the target script's ergon_swpoi_reset "
				"proc when it defines one",
				addr, value));
	else
		json_array_append_new(
		    steps, json_string(jlink ? "run: JLinkExe `g`" : "run: OpenOCD `resume`"));
	if (!jlink && rtt)
		json_array_append_new(steps, json_string("OpenOCD `rtt start` until found; `rtt "
							 "server start PORT 0`"));
}

/* The plan's reset entry, and profile.reset_step_not_performed when a
 * board rule asks for a step (missing) the lifecycle does not perform:
 * only `ran` runs. Takes steps. */
static int plan_reset(json_t *plan, json_t *issues, const char *rname, json_t *steps,
		      const char *missing, const char *lname, const char *ran,
		      struct ergon_err *err)
{
	json_object_set_new(plan, "reset",
			    json_pack("{s:s,s:o,s:s?}", "strategy", rname, "steps", steps,
				      "not_performed", missing));
	if (missing != NULL && issues != NULL &&
	    ergon_issue_add(
		issues, "profile.reset_step_not_performed",
		json_pack("{s:s,s:s}", "strategy", rname, "not_performed", missing),
		"power.reset_strategy %s (from the board rule) asks for %s, which the %s "
		"lifecycle does not perform: only %s runs, so the power-on state the "
		"method resets into may differ",
		rname, missing, lname, ran) != 0)
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	return 0;
}

/* 1 when base_hz / hz is a whole number n with n_min <= n <= base_hz. */
static int whole_divisor(double base_hz, double hz, double n_min)
{
	double n = base_hz / hz;
	double whole = floor(n + 0.5);
	return hz > 0 && whole >= n_min && whole <= base_hz && fabs(n - whole) <= 1e-9 * n;
}

/* The whole rates among base_hz / n, n >= n_min, largest first. */
static void whole_rates(uint64_t base_hz, uint64_t n_min, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (uint64_t r = base_hz / n_min; r >= 1 && o + 16 < cap; r--)
		if (base_hz % r == 0)
			o += (size_t)snprintf(out + o, cap - o, "%s%llu", o ? ", " : "",
					      (unsigned long long)r);
}

/* power.stats_rate_hz must be a rate the meter gives (issue 29): the
 * virtual bench's simulated Joulescope (1 MHz / N, N >= 100; set or not,
 * it is checked where it shapes the packets); a Joulescope (a JS220 sums N
 * of its 1 MHz samples into a packet, N >= 10; a JS110 2 Hz, or host-side
 * 2 MHz / N, N >= 20: together 2 MHz / N, N >= 20; the bridge refuses at
 * open what the model in hand cannot give); a PPK2, whose 100 kSPS samples
 * ergon reduces to packets of a whole number of samples. */
static int stats_rate_acts(const struct ergon_config *cfg, struct ergon_err *err)
{
	if (!cfg->power.enabled || cfg->power.mode == ERGON_POWER_INTERNAL)
		return 0;
	const char *where = NULL;
	int set = explicit_key(cfg, "power.stats_rate_hz", &where);
	if (!set)
		where = "power.stats_rate_hz";
	double hz = (double)cfg->power.stats_rate_hz;
	char rates[400];
	if (cfg->target.lifecycle == ERGON_LIFECYCLE_SIM)
		return set ? ergon_sim_check_stats_rate(hz, where, err) : 0;
	const char *why = NULL;
	if (strcmp(cfg->power.driver, "joulescope") == 0 && !whole_divisor(2e6, hz, 20)) {
		whole_rates(1000000, 10, rates, sizeof rates);
		why = "no Joulescope gives that statistics rate: a JS220 or JS320 sums a whole "
		      "number N of its 1,000,000 samples a second into each packet (s/stats/scnt), "
		      "N = 10..1,000,000; a JS110 gives 2 a second, or host-side 2,000,000 / N, "
		      "N = 20..2,000,000. The whole rates a JS220 gives";
	} else if (strcmp(cfg->power.driver, "ppk2") == 0 && !whole_divisor(1e5, hz, 1)) {
		whole_rates(100000, 1, rates, sizeof rates);
		why = "a PPK2's 100,000 samples a second are reduced to packets of a whole number "
		      "N of samples, so the rate is 100,000 / N a second";
	}
	if (why != NULL)
		return ergon_err_set(err, ERGON_ECONFIG, "%s: power.stats_rate_hz %g: %s: %s Hz",
				     where, hz, why, rates);
	return 0;
}

/* profiling.extreme_mode / force_shared_sram (docs/internals/config.md,
 * rule 5) act where ergon builds the firmware or models the board: the
 * an547 model firmware (a define and its arena's placement, the build
 * record proves where it landed) and the virtual bench (the shared SRAM's
 * static current). A firmware ergon did not build keeps the placement it
 * was linked with: the key is refused there rather than recorded as if it
 * had acted. plan.memory says which and how. */
static int memory_acts(const struct ergon_config *cfg, const json_t *model, int plan_only,
		       json_t *plan, struct ergon_err *err)
{
	const char *key = cfg->profiling.extreme_mode	   ? "profiling.extreme_mode"
			  : cfg->profiling.force_shared_sram ? "profiling.force_shared_sram"
							     : NULL;
	int lc = cfg->target.lifecycle;
	/* Whether ergon builds the firmware: with a model on a board's port,
	 * the build record lists the images it built (a dry run's plan is
	 * made before the build). A model beside a firmware folder (ergon
	 * validate --firmware-dir: the model is there for the correctness
	 * check) comes with no build: the images are the user's. */
	int built = model != NULL && lc != ERGON_LIFECYCLE_SIM &&
		    (plan_only || json_array_size(json_object_get(model, "builds")) > 0);
	const char *how =
	    lc == ERGON_LIFECYCLE_SIM
		? "the virtual bench's default: half its shared SRAM retained (neither key set)"
	    : built ? "ergon's model firmware's default placement (neither key set; the build "
		      "record's memory says where it landed)"
		    : "not known: ergon did not build this firmware for the run (a firmware "
		      "folder), so it applied no placement; the images keep the one they were "
		      "linked with";
	/* With a model, ergon builds the board's firmware from its port: the
	 * key acts when the port offers the placement (memory_modes). */
	char buf[320];
	int offered = 0, rc = 0;
	if (key != NULL && built && cfg->board != NULL) {
		struct ergon_fw_port *p = malloc(sizeof *p);
		int found = 0;
		rc = p ? ergon_fw_port_find(cfg->board->name, p, &found, err)
		       : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		offered = !rc && found &&
			  (p->memory_modes & (cfg->profiling.extreme_mode
						  ? ERGON_FW_PORT_MODE_EXTREME
						  : ERGON_FW_PORT_MODE_SHARED_SRAM));
		if (offered)
			snprintf(buf, sizeof buf,
				 cfg->profiling.extreme_mode
				     ? "ergon's %s model firmware: -DERT_MEM_EXTREME=1, weights and "
				       "arena in the TCMs (build record memory, read from the ELF)"
				     : "ergon's %s model firmware: -DERT_MEM_SHARED_SRAM=1, the arena "
				       "in the shared SRAM (%s, build record memory, read from "
				       "the ELF)",
				 p->name, p->shared_region);
		free(p);
		if (rc)
			return rc;
	}
	if (key != NULL && lc == ERGON_LIFECYCLE_SIM)
		how = cfg->profiling.extreme_mode
			  ? "the virtual bench powers its shared SRAM down: its static "
			    "current (ERGON_SIM_SSRAM_HALF_A) leaves every state"
			  : "the virtual bench retains its whole shared SRAM: twice its "
			    "static current (ERGON_SIM_SSRAM_HALF_A more) in every state";
	else if (key != NULL && offered)
		how = buf;
	else if (key != NULL) {
		const char *where = key;
		(void)explicit_key(cfg, key, &where);
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: %s cannot act on board %s: it is a choice of the firmware's build "
		    "(where the model's weights and arena are linked, which parts of the "
		    "shared SRAM the firmware powers), and ergon builds the firmware only for "
		    "a .tflite model on a board whose port offers the placement (its "
		    "descriptor's memory_modes: qemu-an547; docs/internals/ports.md); "
		    "FIRMWARE_DIR's images keep the placement they were linked with; build your "
		    "firmware with it and leave the key false, or run `ergon profile "
		    "MODEL.tflite --board qemu-an547`, or --board sim",
		    where, key, cfg->board ? cfg->board->name : "(none)");
	}
	/* applied: ergon built or models the firmware, so the mode is the
	 * one it placed; otherwise the placement is the firmware's own and
	 * not known here. */
	int applied = lc == ERGON_LIFECYCLE_SIM || built;
	json_object_set_new(plan, "memory",
			    json_pack("{s:s,s:b,s:s}", "mode",
				      !applied			    ? "not_known"
				      : key == NULL		    ? "default"
				      : cfg->profiling.extreme_mode ? "extreme_mode"
								    : "force_shared_sram",
				      "applied", applied, "how", how));
	return 0;
}

/* Keys that have nothing to act on here (issue 37's key walk,
 * functional/test_key_walk): an explicit value is refused with the reason
 * rather than accepted and ignored. lname: the lifecycle's name. */
static int nothing_to_act_on(const struct ergon_config *cfg, const char *lname,
			     struct ergon_err *err)
{
	int lc = cfg->target.lifecycle;
	int sim = lc == ERGON_LIFECYCLE_SIM;
	int probe = (lc == ERGON_LIFECYCLE_JLINK || lc == ERGON_LIFECYCLE_OPENOCD) &&
		    strcmp(lname, "pyocd") != 0 && strcmp(lname, "bmp") != 0;
	int serial = cfg->target.transport == ERGON_TRANSPORT_UART ||
		     cfg->target.transport == ERGON_TRANSPORT_USB_CDC;
	const char *where = NULL;
	const char *key = NULL, *why = NULL, *fix = NULL;
	if (explicit_key(cfg, "profiling.per_layer", &where) && !cfg->profiling.per_layer) {
		key = "profiling.per_layer";
		why = "ergon-target's profile flow times every layer on every board (the "
		      "per-layer table is what the PMU stage reports); a flow without the layer "
		      "hooks is not built";
		fix = "leave it true";
	} else if (explicit_key(cfg, "output.format", &where) &&
		   cfg->output.format != ERGON_FORMAT_CSV) {
		key = "output.format";
		why = "ergon writes summary.json (JSON) beside profile_results.csv on every "
		      "run; a results file in another format is not written";
		fix = "leave it csv and read summary.json";
	} else if (explicit_key(cfg, "target.jlink_serial", &where) && cfg->target.jlink_serial[0] &&
		   !(lc == ERGON_LIFECYCLE_JLINK && strcmp(lname, "jlink") == 0)) {
		key = "target.jlink_serial";
		why = "it selects a J-Link probe by its serial number, and this lifecycle "
		      "drives no J-Link";
		fix = "remove it, or use a board on the jlink lifecycle";
	} else if (explicit_key(cfg, "target.usb_port", &where) && cfg->target.usb_port[0] &&
		   !(probe && serial)) {
		key = "target.usb_port";
		why = "it is the target's serial port, read only with target.transport uart or "
		      "usb_cdc on the jlink or openocd lifecycle";
		fix = "remove it, or set target.transport: uart on a probe lifecycle";
	} else if (sim && explicit_key(cfg, "target.probe", &where) && cfg->target.probe[0]) {
		key = "target.probe";
		why = "it names a GDB server or probe to read RTT through, and the virtual bench "
		      "has one wire of its own";
		fix = "remove it for --board sim";
	} else if (sim && (explicit_key(cfg, "target.heartbeat.host_timeout_s", &where) ||
			   explicit_key(cfg, "target.heartbeat.overall_timeout_s", &where))) {
		key = explicit_key(cfg, "target.heartbeat.host_timeout_s", &where)
			  ? "target.heartbeat.host_timeout_s"
			  : "target.heartbeat.overall_timeout_s";
		(void)explicit_key(cfg, key, &where);
		why = "it bounds the host's wait for the target on the wall clock, and the "
		      "virtual bench hands its stream over whole (nothing is waited for)";
		fix = "remove it for --board sim (power.duration_s bounds a bench capture on its "
		      "own clock)";
	} else if (sim && explicit_key(cfg, "power.io_voltage", &where) &&
		   cfg->power.io_voltage != 1.8) {
		key = "power.io_voltage";
		why = "the virtual bench's I/O and its meter's logic reference are fixed at 1.8 V";
		fix = "remove it for --board sim";
	} else if (sim && explicit_key(cfg, "power.rail_voltage", &where)) {
		key = "power.rail_voltage";
		why = "the bench's simulated meter measures its own rail's voltage (1.8 V); the "
		      "key is for a meter that measures current only (a PPK2)";
		fix = "remove it for --board sim";
	} else if (sim && ((explicit_key(cfg, "power.state_input_index", &where) &&
			    cfg->power.state_input_index != 1) ||
			   (explicit_key(cfg, "power.go_output_index", &where) &&
			    cfg->power.go_output_index != 0))) {
		key = cfg->power.state_input_index != 1 ? "power.state_input_index"
							: "power.go_output_index";
		(void)explicit_key(cfg, key, &where);
		why = "the virtual bench's host watches the state pin and raises GO itself, on "
		      "the bench's own wires (input 1, output 0)";
		fix = "remove it for --board sim";
	} else if (sim && explicit_key(cfg, "power.ina228.i2c_speed_hz", &where) &&
		   cfg->power.ina228.i2c_speed_hz != 400000) {
		key = "power.ina228.i2c_speed_hz";
		why = "the virtual bench's I2C bus runs at 400 kHz (25 us a byte) whatever the "
		      "firmware asks";
		fix = "remove it for --board sim";
	}
	if (key == NULL)
		return 0;
	return ergon_err_set(err, ERGON_ECONFIG, "%s: %s cannot act on the %s lifecycle (board %s): %s; %s",
			     where, key, lname, cfg->board ? cfg->board->name : "(none)", why, fix);
}

static int config_acts(const struct ergon_config *cfg, json_t *plan, json_t *issues,
		       struct ergon_err *err)
{
	int src = stats_rate_acts(cfg, err);
	if (src)
		return src;
	const char *where = NULL;
	/* The virtual bench's meter carries its markers on D1 by construction
	 * (ERGON_SIM_MARKER_PIN), so another input would be ignored there. */
	if (cfg->target.lifecycle == ERGON_LIFECYCLE_SIM && cfg->power.marker_input_index != 1 &&
	    explicit_key(cfg, "power.marker_input_index", &where))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.marker_input_index %llu cannot act on the virtual "
				     "bench: its meter carries the layer markers on D1 (input 1); "
				     "leave it unset or 1 there (it names the live PPK2's input on "
				     "a real board)",
				     where, (unsigned long long)cfg->power.marker_input_index);
	const char *how = NULL, *refuse = NULL;
	int lc = cfg->target.lifecycle;
	const char *lname = lc == ERGON_LIFECYCLE_JLINK	    ? "jlink"
			    : lc == ERGON_LIFECYCLE_OPENOCD ? "openocd"
			    : lc == ERGON_LIFECYCLE_QEMU    ? "qemu"
							    : "sim";
	const char *want = name_of(transport_names, 4, cfg->target.transport);
	int used = lifecycle_transport(cfg, &how, &refuse);
	int probe = lc == ERGON_LIFECYCLE_JLINK || lc == ERGON_LIFECYCLE_OPENOCD;
	/* target.probe pyocd[:UID] / bmp:DEVICE: the probe lifecycles, which
	 * read RTT through their own GDB server and reset their own way. */
	const char *pname = prof_lifecycle_name(cfg);
	int probe_lc = strcmp(pname, "pyocd") == 0 || strcmp(pname, "bmp") == 0;
	if (probe_lc) {
		lname = pname;
		used = ERGON_TRANSPORT_RTT;
		refuse = NULL;
		probe = 0;
		how = pname[0] == 'p' ? "RTT through `pyocd gdbserver` on a free loopback port"
				      : "RTT through the Black Magic Probe's GDB serial port";
	}
	int nrc = nothing_to_act_on(cfg, lname, err);
	if (nrc)
		return nrc;
	/* The clean-window trace is a property of the firmware: the virtual
	 * bench's is configured per run; ergon's an547 firmware has no trace
	 * build, so the key would be ignored there; a board's own firmware
	 * decides (CLEAN_TRACE in its stream) and the host checks whatever it
	 * prints (pmu.clean_trace_mismatch). */
	if (lc == ERGON_LIFECYCLE_QEMU && cfg->profiling.clean_window_trace &&
	    explicit_key(cfg, "profiling.clean_window_trace", &where))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: profiling.clean_window_trace cannot act on qemu-an547: the "
				     "an547 firmware ergon builds has no trace build (the emulated "
				     "window's count needs no trace: QEMU loses no line); set it "
				     "false, or use --board sim to see the trace",
				     where);
	/* The attach wait's bound is built into ergon's an547 firmware
	 * (drain_wait_max_us 2000 in target/port/an547: QEMU's UART drains as
	 * it is written); the virtual bench takes it per run and a board's
	 * firmware is built with its own. The firmware's own value is
	 * accepted: it is what runs. */
	if (lc == ERGON_LIFECYCLE_QEMU &&
	    explicit_key(cfg, "profiling.clean_window_attach_wait_ms", &where) &&
	    cfg->profiling.clean_window_attach_wait_ms != AN547_ATTACH_WAIT_MS)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: profiling.clean_window_attach_wait_ms %llu cannot act on "
				     "qemu-an547: ergon's an547 firmware is built with a %u ms "
				     "bound (QEMU's UART drains as it is written, so a longer "
				     "wait would end at the same point); set it to %u or remove "
				     "the key (the firmware's %u ms always applies), or use "
				     "--board sim to see the wait on the bench's clock",
				     where,
				     (unsigned long long)cfg->profiling.clean_window_attach_wait_ms,
				     AN547_ATTACH_WAIT_MS, AN547_ATTACH_WAIT_MS,
				     AN547_ATTACH_WAIT_MS);
	int tr_explicit = explicit_key(cfg, "target.transport", &where);
	if (!tr_explicit)
		where = "target.transport";
	if (refuse != NULL)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: target.transport %s cannot act on the %s lifecycle: %s; "
		    "%s",
		    where, want, lname, refuse,
		    cfg->target.transport == ERGON_TRANSPORT_SWO
			? "set target.transport: rtt (or uart with target.usb_port), "
			  "or run a SWO server yourself and capture it with `ergon "
			  "capture --transport swo:tcp:HOST:PORT`"
			: "set target.usb_port: /dev/ttyACM0 (DEVICE[,BAUD]) or "
			  "target.transport: rtt");
	if (used >= 0 && used != cfg->target.transport && tr_explicit)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: target.transport %s cannot act on the %s lifecycle: it reads the "
		    "target's stream from the %s only; set target.transport: %s, or capture %s "
		    "with `ergon capture --transport ...` and analyse the log with `ergon parse`",
		    where, want, lname, how, name_of(transport_names, 4, used), want);
	int serial = lifecycle_stream(cfg) == ERGON_LC_STREAM_SERIAL;
	/* The live power stage reads the stream only after its gated window,
	 * which an RTT buffer keeps and a serial port does not. */
	if (serial && cfg->power.enabled && cfg->power.mode != ERGON_POWER_INTERNAL &&
	    prof_live_driver(cfg))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: target.transport %s cannot act with power.driver %s: the "
				     "live power stage reads the target's stream after the gated "
				     "window, and a serial port keeps nothing sent before it is "
				     "read; set target.transport: rtt for the power run",
				     where, want, cfg->power.driver);
	json_t *tr =
	    json_pack("{s:s,s:s,s:s}", "configured", want, "used",
		      used >= 0 ? name_of(transport_names, 4, used) : "virtual_wire", "how", how);
	if (tr && serial) {
		char spec[300];
		snprintf(spec, sizeof spec, "serial:%s", cfg->target.usb_port);
		json_object_set_new(tr, "endpoint", json_string(spec));
	}
	json_object_set_new(plan, "transport", tr);

	/* The reset: what each lifecycle really does at its reset step. */
	int rs = cfg->power.reset_strategy;
	const char *rname = name_of(reset_names, 6, rs);
	int explicit_rs = explicit_key(cfg, "power.reset_strategy", &where);
	unsigned long swpoi_addr, swpoi_value;
	lifecycle_swpoi(cfg, &swpoi_addr, &swpoi_value);
	int wants_swpoi = rs == ERGON_RESET_SWPOI || rs == ERGON_RESET_DEBUG_SWPOI;
	if (probe && rs == ERGON_RESET_POWER_CYCLE)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "%s: power.reset_strategy power_cycle cannot act on the %s "
		    "lifecycle: power_cycle needs something that switches the target's "
		    "rail, which the probe cannot; set power.reset_strategy: "
		    "debug_reset, debug_reset+swpoi_reset or none",
		    explicit_rs ? where : "power.reset_strategy", lname);
	if (probe && wants_swpoi && swpoi_addr == 0)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.reset_strategy %s cannot act on %s: its SoC (%s) "
				     "has no known software power-on reset register; set "
				     "power.reset_strategy: debug_reset",
				     explicit_rs ? where : "power.reset_strategy", rname,
				     cfg->board ? cfg->board->name : "this board",
				     cfg->board ? cfg->board->soc : "unknown");
	const char *emu_step = lc == ERGON_LIFECYCLE_QEMU ? "restart: a new qemu-system-arm"
							  : "restart: a new virtual board";
	if (probe_lc) {
		/* pyocd and bmp carry out auto, debug_reset and none. */
		int acts =
		    rs == ERGON_RESET_AUTO || rs == ERGON_RESET_DEBUG || rs == ERGON_RESET_NONE;
		const char *step = rs == ERGON_RESET_NONE
				       ? "none: no reset (the target runs as flashed)"
				   : pname[0] == 'p' ? "debug_reset: `pyocd reset`"
						     : "debug_reset: vRun through the BMP (reset, "
						       "halted until the capture continues it)";
		if (!acts && explicit_rs)
			return ergon_err_set(
			    err, ERGON_ECONFIG,
			    "%s: power.reset_strategy %s cannot act on the %s lifecycle: it resets "
			    "with %s only (it switches no power and sends no SWPOI write); set "
			    "power.reset_strategy: debug_reset, none or auto",
			    where, rname, lname, step);
		const char *pmiss = acts			    ? NULL
				    : rs == ERGON_RESET_DEBUG_SWPOI ? "swpoi_reset"
								    : rname;
		json_t *psteps = json_array();
		json_array_append_new(psteps, json_string(step));
		return plan_reset(plan, issues, rname, psteps, pmiss, lname, step, err);
	}
	if (!probe && rs != ERGON_RESET_AUTO && explicit_rs)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.reset_strategy %s has no meaning on the %s "
				     "lifecycle: an emulated board has one reset (%s); set "
				     "power.reset_strategy: auto",
				     where, rname, lname, emu_step);
	json_t *steps = json_array();
	if (probe)
		probe_reset_steps(cfg, rs, !serial && cfg->target.probe[0] == '\0', steps);
	else
		json_array_append_new(steps, json_string(emu_step));
	/* Every step of a probe's strategy is performed now; the emulated
	 * boards' one restart is the whole of theirs. */
	const char *missing = !probe && rs != ERGON_RESET_AUTO ? rname : NULL;
	return plan_reset(plan, issues, rname, steps, missing, lname, emu_step, err);
}

/* --layer-energy on a real board with a live meter: ERGON_ECONFIG when
 * the marker line cannot be taken (a Joulescope with lock-step on, which
 * holds INPUT1 for READY, or with the markers on another input than
 * INPUT1; markers on the gate's input), naming the reason and the fix; else
 * plan.power.layer_markers says which inputs carry what. */
static int accept_layers(const struct ergon_config *cfg, int layer_energy, json_t *plan,
			 struct ergon_err *err)
{
	if (!layer_energy || !cfg->power.enabled || cfg->power.mode == ERGON_POWER_INTERNAL ||
	    cfg->target.lifecycle == ERGON_LIFECYCLE_SIM || !prof_live_driver(cfg))
		return 0;
	const char *where = NULL;
	unsigned mk = (unsigned)cfg->power.marker_input_index;
	if (!explicit_key(cfg, "power.marker_input_index", &where))
		where = "power.marker_input_index";
	int js = strcmp(cfg->power.driver, "joulescope") == 0;
	if (js && cfg->power.lockstep == 1)
		return ergon_err_set(
		    err, ERGON_ECONFIG,
		    "--layer-energy with power.driver joulescope and lock-step on: lock-step "
		    "reads READY on INPUT1 (power.state_input_index), the marker line's input, "
		    "and a JS220 has two inputs; set power.lockstep: false (gate on INPUT0, "
		    "markers on INPUT1, taken from the statistics packets at "
		    "power.stats_rate_hz), or measure the layers from a separate gate-only run "
		    "of the same power build recorded at 1 MSPS with the Joulescope UI, then "
		    "`ergon analyze --jls RUN.jls --marker-input-index 1 --layers SUMMARY.json` "
		    "(this profile's summary.json)");
	if (js && mk != 1)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.marker_input_index %u with power.driver joulescope: "
				     "a JS220's statistics packets carry INPUT0 (the gate) and "
				     "INPUT1; wire the layer-marker line to INPUT1 and set "
				     "power.marker_input_index: 1",
				     where, mk);
	if (mk == cfg->power.sync_input_index)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: power.marker_input_index %u is the gate's input "
				     "(power.sync_input_index); wire the layer-marker line to "
				     "another logic input and name it (D1 / INPUT1 by default)",
				     where, mk);
	json_object_set_new(json_object_get(plan, "power"), "layer_markers",
			    json_pack("{s:s, s:I, s:I}", "meter", cfg->power.driver,
				      "gate_input_index", (json_int_t)cfg->power.sync_input_index,
				      "marker_input_index", (json_int_t)mk));
	return 0;
}

int prof_accept(const struct ergon_config *cfg, const json_t *model, json_t *plan,
		json_t *issues, struct ergon_lifecycle_opts *lo, struct ergon_err *err)
{
	/* No lifecycle options: ergon_profile_plan_model's plan (a dry run),
	 * made before ergon builds the model's firmware. */
	int rc = memory_acts(cfg, model, lo == NULL, plan, err);
	if (!rc)
		rc = config_acts(cfg, plan, issues, err);
	if (rc == 0 && lo != NULL)
		lifecycle_opts(cfg, lo);
	/* An emulated board runs on its port's QEMU machine. */
	if (rc == 0 && lo != NULL && cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU) {
		struct ergon_fw_port *p = malloc(sizeof *p);
		int found = 0;
		rc = p ? ergon_fw_port_find(cfg->board->name, p, &found, err)
		       : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		if (rc == 0 && found && p->run == ERGON_FW_PORT_RUN_QEMU)
			snprintf(lo->qemu_machine, sizeof lo->qemu_machine, "%s", p->qemu_machine);
		free(p);
	}
	return rc;
}

int prof_accept_run(const struct ergon_config *cfg, const json_t *model, int layer_energy,
		    json_t *plan, json_t *issues, struct ergon_lifecycle_opts *lo,
		    struct ergon_err *err)
{
	int rc = prof_accept(cfg, model, plan, issues, lo, err);
	return rc ? rc : accept_layers(cfg, layer_energy, plan, err);
}

/* Lifecycle through OpenOCD: one openocd session per stage, started with
 *   openocd -f IFACE [-c "adapter serial S"] -f TARGET
 *           -c "gdb_port G|disabled" -c "telnet_port disabled" -c "tcl_port 0" -c init
 * (the TCL port is the kernel's pick, read back from /proc), then driven
 * through its TCL command interface (openocd_tcl.c):
 *   flash   program {IMAGE} verify
 *   reset   the strategy's sequence (power.reset_strategy):
 *             auto, debug_reset    reset halt; RTT setup; resume
 *             none                 RTT setup; resume            (no reset)
 *             swpoi_reset          RTT setup; SWPOI
 *             debug_reset+swpoi    reset halt; RTT setup; SWPOI
 *             power_cycle          refused: OpenOCD cannot switch the rail
 *           SWPOI is `mww ADDR VALUE`, the SoC's software power-on reset
 *           register write (Ambiq RSTGEN SWPOI: mww 0x40000004 0x1B, see
 *           ERGON_SWPOI_AMBIQ_ADDR), or, when the TARGET script defines a
 *           TCL proc ergon_swpoi_reset, that proc (the script knows its
 *           part best). After the write the part restarts by itself, so
 *           no resume follows. RTT setup is
 *             rtt setup 0x20000000 0x100000 "SEGGER RTT"
 *           and after the sequence
 *             rtt start; rtt channels   (repeated until "Channels:")
 *             rtt server start PORT 0
 *   endpoint tcp:127.0.0.1:PORT (OpenOCD's RTT server, channel 0), or with
 *            stream RTT_GDB (target.probe gdb://HOST:PORT) no RTT commands
 *            and rtt:gdb=HOST:PORT through OpenOCD's own GDB port, or with
 *            stream SERIAL (target.transport uart/usb_cdc) no RTT commands
 *            and serial:DEVICE (target.usb_port); the pipeline opens that
 *            port before it calls reset, so the boot's first line is kept
 *   finish  rtt server stop PORT; rtt stop; shutdown, then reap.
 * The interface and target scripts come from the environment
 * (ERGON_OPENOCD_INTERFACE, ERGON_OPENOCD_TARGET; defaults cmsis-dap and an
 * Ambiq target) because boards differ in their adapters.
 * Validated: the TCL framing, the catch wrapper, errors, `rtt server
 * start/stop` and the session start against Debian's openocd 0.12 with its
 * dummy adapter (no target: tests/functional/test_openocd_tcl.c). Not run
 * on hardware: the reset, program and rtt setup/start/channels replies come
 * from a fake modelled on OpenOCD 0.12's documentation
 * (tests/support/fake_probe/fake_openocd.py, test_profile_probes.sh). */
#include "drivers/lifecycle/openocd/openocd_tcl.h"
#include "ergon/lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OPENOCD_DEFAULT_RTT_PORT 9090u
#define OPENOCD_DEFAULT_GDB_PORT 3333u
#define OPENOCD_CMD_TIMEOUT_S 120.0 /* program can take a while on big images */
/* SEGGER RTT control block search: start of SRAM and a generous span. */
#define OPENOCD_RTT_SETUP "rtt setup 0x20000000 0x100000 \"SEGGER RTT\""
#define OPENOCD_RTT_FIND_POLL_US 100000

struct ergon_lifecycle {
	char work_dir[1024];
	char log[1100];
	char interface_cfg[256];
	char target_cfg[256];
	char serial[64];
	char gdb_host[256];
	unsigned port, gdb_port;
	int rtt_gdb, serial_stream, reset_strategy;
	char serial_port[256];
	unsigned long swpoi_addr, swpoi_value;
	double start_timeout_s;
	int pid;
	int rtt_server; /* `rtt server start` succeeded */
	struct ergon_ocd_tcl tcl;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int o_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "openocd: out of memory");
	lc->tcl.fd = -1;
	const char *ifc = getenv("ERGON_OPENOCD_INTERFACE");
	const char *tgt = getenv("ERGON_OPENOCD_TARGET");
	snprintf(lc->work_dir, sizeof lc->work_dir, "%s", o->work_dir);
	snprintf(lc->log, sizeof lc->log, "%s/openocd.log", o->work_dir);
	snprintf(lc->interface_cfg, sizeof lc->interface_cfg, "%s",
		 ifc && ifc[0] ? ifc : "interface/cmsis-dap.cfg");
	snprintf(lc->target_cfg, sizeof lc->target_cfg, "%s",
		 tgt && tgt[0] ? tgt : "target/ambiqmicro.cfg");
	snprintf(lc->serial, sizeof lc->serial, "%s", o->probe_serial ? o->probe_serial : "");
	lc->port = o->rtt_port ? o->rtt_port : OPENOCD_DEFAULT_RTT_PORT;
	lc->start_timeout_s = o->start_timeout_s > 0 ? o->start_timeout_s : 10.0;
	lc->reset_strategy = o->reset_strategy;
	lc->rtt_gdb = o->stream == ERGON_LC_STREAM_RTT_GDB;
	lc->serial_stream = o->stream == ERGON_LC_STREAM_SERIAL;
	snprintf(lc->serial_port, sizeof lc->serial_port, "%s",
		 o->serial_port ? o->serial_port : "");
	lc->swpoi_addr = o->swpoi_addr;
	lc->swpoi_value = o->swpoi_value;
	if (lc->serial_stream && !lc->serial_port[0]) {
		free(lc);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "openocd: the target's stream is a serial port but "
				     "target.usb_port is empty; set target.usb_port: /dev/ttyACM0 "
				     "(or DEVICE,BAUD)");
	}
	snprintf(lc->gdb_host, sizeof lc->gdb_host, "127.0.0.1");
	lc->gdb_port = OPENOCD_DEFAULT_GDB_PORT;
	if (lc->rtt_gdb && o->gdb_server && o->gdb_server[0]) {
		if (ergon_lifecycle_parse_hostport(o->gdb_server, lc->gdb_host, sizeof lc->gdb_host,
						   &lc->gdb_port) != 0) {
			free(lc);
			return ergon_err_set(err, ERGON_EUSAGE,
					     "openocd: gdb server '%s': expected HOST:PORT "
					     "(target.probe: gdb://127.0.0.1:3333)",
					     o->gdb_server);
		}
	}
	if (lc->reset_strategy == ERGON_LC_RESET_POWER_CYCLE) {
		free(lc);
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "openocd: power.reset_strategy: power_cycle needs something "
		    "that switches the target's rail, which OpenOCD cannot; use "
		    "debug_reset (reset halt; resume), swpoi_reset (the SoC's SWPOI "
		    "register write) or none");
	}
	*out = lc;
	return 0;
}

/* Start the session (once per stage) and connect to its TCL port. */
static int session(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	if (lc->pid > 0 && lc->tcl.fd >= 0)
		return 0;
	char serial_cmd[96], gdb_cmd[64];
	const char *argv[24];
	size_t n = 0;
	argv[n++] = "openocd";
	argv[n++] = "-f";
	argv[n++] = lc->interface_cfg;
	if (lc->serial[0]) {
		snprintf(serial_cmd, sizeof serial_cmd, "adapter serial %s", lc->serial);
		argv[n++] = "-c";
		argv[n++] = serial_cmd;
	}
	argv[n++] = "-f";
	argv[n++] = lc->target_cfg;
	if (lc->rtt_gdb)
		snprintf(gdb_cmd, sizeof gdb_cmd, "gdb_port %u", lc->gdb_port);
	else
		snprintf(gdb_cmd, sizeof gdb_cmd, "gdb_port disabled");
	argv[n++] = "-c";
	argv[n++] = gdb_cmd;
	argv[n++] = "-c";
	argv[n++] = "telnet_port disabled";
	argv[n++] = "-c";
	argv[n++] = "tcl_port 0";
	argv[n++] = "-c";
	argv[n++] = "init";
	argv[n] = NULL;
	int rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	unsigned tcl = 0;
	if (!rc) {
		rc = ergon_lifecycle_listen_port(lc->pid, lc->rtt_gdb ? lc->gdb_port : 0, "openocd",
						 lc->log, lc->start_timeout_s, &tcl, err);
		if (rc && rc != ERGON_ETIMEDOUT)
			lc->pid = 0; /* reaped by the wait */
	}
	if (!rc)
		rc = ergon_ocd_tcl_connect(&lc->tcl, tcl, lc->start_timeout_s, err);
	return rc;
}

static int cmd(struct ergon_lifecycle *lc, const char *c, char *reply, size_t cap,
	       struct ergon_err *err)
{
	return ergon_ocd_tcl_cmd(&lc->tcl, c, reply, cap, OPENOCD_CMD_TIMEOUT_S, err);
}

static int o_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	char prog[1200];
	if (strpbrk(image, "{}\\\"") != NULL)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "openocd: firmware path %s has a brace, quote or backslash, "
				     "which OpenOCD's command line cannot carry; rename it",
				     image);
	if ((size_t)snprintf(prog, sizeof prog, "program {%s} verify", image) >= sizeof prog)
		return ergon_err_set(err, ERGON_ETOOBIG, "openocd: firmware path too long: %s",
				     image);
	int rc = session(lc, err);
	return rc ? rc : cmd(lc, prog, NULL, 0, err);
}

/* rtt start until the block is found (the firmware creates it at boot). */
static int rtt_find(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	char reply[512];
	double t0 = now_s();
	for (;;) {
		int rc = cmd(lc, "rtt start", NULL, 0, err);
		if (!rc)
			rc = cmd(lc, "rtt channels", reply, sizeof reply, err);
		if (rc)
			return rc;
		if (strstr(reply, "Channels:") != NULL)
			return 0;
		if (now_s() - t0 > lc->start_timeout_s)
			return ergon_err_set(err, ERGON_ENOENT,
					     "openocd: no RTT control block (\"SEGGER RTT\") in "
					     "0x20000000..0x20100000 within %.0f s (rtt channels: "
					     "'%.100s'); check that the firmware initialises RTT",
					     lc->start_timeout_s, reply);
		usleep(OPENOCD_RTT_FIND_POLL_US);
	}
}

static int o_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	int rc = session(lc, err);
	if (rc)
		return rc;
	int s = lc->reset_strategy;
	int debug = s == ERGON_LC_RESET_AUTO || s == ERGON_LC_RESET_DEBUG ||
		    s == ERGON_LC_RESET_DEBUG_SWPOI;
	int swpoi = s == ERGON_LC_RESET_SWPOI || s == ERGON_LC_RESET_DEBUG_SWPOI;
	int rtt = !lc->rtt_gdb && !lc->serial_stream;
	char poi[64] = "";
	if (swpoi) {
		char reply[256];
		rc = cmd(lc, "info procs ergon_swpoi_reset", reply, sizeof reply, err);
		if (rc)
			return rc;
		if (strcmp(reply, "ergon_swpoi_reset") == 0)
			snprintf(poi, sizeof poi, "ergon_swpoi_reset");
		else if (lc->swpoi_addr != 0)
			snprintf(poi, sizeof poi, "mww 0x%08lx 0x%lx", lc->swpoi_addr,
				 lc->swpoi_value);
		else
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "openocd: power.reset_strategy %s: this SoC has no known software "
			    "power-on reset register, and the target script (%s) defines no "
			    "TCL proc ergon_swpoi_reset; define the proc, or use debug_reset",
			    s == ERGON_LC_RESET_SWPOI ? "swpoi_reset" : "debug_reset+swpoi_reset",
			    lc->target_cfg);
	}
	if (debug)
		rc = cmd(lc, "reset halt", NULL, 0, err);
	if (!rc && rtt)
		rc = cmd(lc, OPENOCD_RTT_SETUP, NULL, 0, err);
	if (!rc)
		rc = cmd(lc, swpoi ? poi : "resume", NULL, 0, err);
	if (rc || !rtt)
		return rc;
	rc = rtt_find(lc, err);
	char server[64];
	snprintf(server, sizeof server, "rtt server start %u 0", lc->port);
	if (!rc)
		rc = cmd(lc, server, NULL, 0, err);
	if (!rc) {
		lc->rtt_server = 1;
		rc = ergon_lifecycle_wait_port(lc->port, lc->pid, "openocd", lc->log,
					       lc->start_timeout_s, err);
	}
	return rc;
}

static int o_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	int n = lc->rtt_gdb ? snprintf(spec, cap, "rtt:gdb=%s:%u", lc->gdb_host, lc->gdb_port)
		: lc->serial_stream ? snprintf(spec, cap, "serial:%s", lc->serial_port)
				    : snprintf(spec, cap, "tcp:127.0.0.1:%u", lc->port);
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "openocd: endpoint too long");
	return 0;
}

/* Close the session politely, then reap openocd whatever it answered. */
static void end_session(struct ergon_lifecycle *lc)
{
	struct ergon_err e = {0};
	if (lc->tcl.fd >= 0) {
		if (lc->rtt_server) {
			char stop[64];
			snprintf(stop, sizeof stop, "rtt server stop %u", lc->port);
			(void)ergon_ocd_tcl_cmd(&lc->tcl, stop, NULL, 0, 2.0, &e);
			(void)ergon_ocd_tcl_cmd(&lc->tcl, "rtt stop", NULL, 0, 2.0, &e);
		}
		(void)ergon_ocd_tcl_cmd(&lc->tcl, "shutdown", NULL, 0, 2.0, &e);
		ergon_ocd_tcl_close(&lc->tcl);
	}
	lc->rtt_server = 0;
	ergon_lifecycle_stop(lc->pid, 2.0);
	lc->pid = 0;
}

static int o_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	end_session(lc);
	return 0;
}

static void o_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	end_session(lc);
	free(lc);
}

const struct ergon_lifecycle_driver ergon_lifecycle_openocd = {
    .name = "openocd",
    .hardware = 1,
    .open = o_open,
    .flash = o_flash,
    .reset = o_reset,
    .endpoint = o_endpoint,
    .finish = o_finish,
    .close = o_close,
};

/* Lifecycle through SEGGER J-Link: JLinkExe runs command files (flash:
 * reset, halt, loadfile, reset, exit; run: the reset strategy's commands,
 * then a long sleep so the J-Link session, and with it the RTT telnet
 * server, stays up while the host captures). RTT is read from the telnet
 * port (-RTTTelnetPort). The reset strategy (power.reset_strategy):
 *   auto, debug_reset         r; g
 *   none                      g                      (no reset)
 *   swpoi_reset               w4 ADDR VALUE          (the SoC's SWPOI write)
 *   debug_reset+swpoi_reset   r; w4 ADDR VALUE
 *   power_cycle               refused: J-Link cannot switch the rail
 * `w4 ADDR VALUE` is J-Link Commander's 32-bit memory write; on Ambiq parts
 * it is `w4 0x40000004 0x1B` (RSTGEN SWPOI, ERGON_SWPOI_AMBIQ_ADDR): the
 * part restarts by itself, so no `g` follows.
 * With stream SERIAL (target.transport uart/usb_cdc) the run command file
 * ends with `exit` (no RTT server to keep up; the target keeps running)
 * and the endpoint is serial:DEVICE (target.usb_port); the pipeline opens
 * the port before it calls reset.
 * With stream RTT_GDB (target.probe gdb://HOST:PORT) the endpoint is
 * rtt:gdb=HOST:PORT instead: a JLinkGDBServer the user started (J-Link
 * allows it beside the JLinkExe session).
 * Not yet run on hardware: tested against a fake JLinkExe that records
 * its arguments and command files (tests/functional/test_profile_probes.sh). */
#include "ergon/fileio.h"
#include "ergon/lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JLINK_DEFAULT_RTT_PORT 19021u
#define JLINK_TOOL_TIMEOUT_S 120.0
/* The run command file keeps the session for at most this long (ms). */
#define JLINK_SESSION_MS "3600000"

struct ergon_lifecycle {
	char work_dir[1024];
	char device[64];
	char serial[64];
	char log[1100];
	char gdb_server[300];  /* RTT_GDB: "HOST:PORT"; "" otherwise */
	char serial_port[256]; /* SERIAL: "DEVICE[,BAUD]"; "" otherwise */
	int reset_strategy;
	unsigned long swpoi_addr, swpoi_value;
	unsigned port;
	double start_timeout_s;
	int pid;
	const volatile sig_atomic_t *cancel; /* the caller's Ctrl-C flag, may be NULL */
};

static int j_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "jlink: out of memory");
	snprintf(lc->work_dir, sizeof lc->work_dir, "%s", o->work_dir);
	snprintf(lc->device, sizeof lc->device, "%s", o->device ? o->device : "Cortex-M4");
	snprintf(lc->serial, sizeof lc->serial, "%s", o->probe_serial ? o->probe_serial : "");
	snprintf(lc->log, sizeof lc->log, "%s/jlink.log", o->work_dir);
	lc->port = o->rtt_port ? o->rtt_port : JLINK_DEFAULT_RTT_PORT;
	lc->start_timeout_s = o->start_timeout_s > 0 ? o->start_timeout_s : 10.0;
	lc->cancel = o->cancel;
	if (o->stream == ERGON_LC_STREAM_RTT_GDB && o->gdb_server)
		snprintf(lc->gdb_server, sizeof lc->gdb_server, "%s", o->gdb_server);
	lc->reset_strategy = o->reset_strategy;
	lc->swpoi_addr = o->swpoi_addr;
	lc->swpoi_value = o->swpoi_value;
	const char *why = NULL;
	if (o->stream == ERGON_LC_STREAM_SERIAL) {
		snprintf(lc->serial_port, sizeof lc->serial_port, "%s",
			 o->serial_port ? o->serial_port : "");
		if (!lc->serial_port[0])
			why = "the target's stream is a serial port but target.usb_port is "
			      "empty; set target.usb_port: /dev/ttyACM0 (or DEVICE,BAUD)";
	}
	if (lc->reset_strategy == ERGON_LC_RESET_POWER_CYCLE)
		why = "power.reset_strategy: power_cycle needs something that switches the "
		      "target's rail, which J-Link cannot; use debug_reset (r; g), "
		      "debug_reset+swpoi_reset (r; the SoC's SWPOI write) or none";
	int swpoi = lc->reset_strategy == ERGON_LC_RESET_SWPOI ||
		    lc->reset_strategy == ERGON_LC_RESET_DEBUG_SWPOI;
	if (swpoi && lc->swpoi_addr == 0)
		why = "power.reset_strategy asks for a SWPOI reset, but this SoC has no "
		      "known software power-on reset register; use debug_reset";
	if (why != NULL) {
		free(lc);
		return ergon_err_set(err, ERGON_EUSAGE, "jlink: %s", why);
	}
	*out = lc;
	return 0;
}

/* Write a command file and build JLinkExe's argument vector around it. */
static int run_jlink(struct ergon_lifecycle *lc, const char *name, const char *commands,
		     int background, struct ergon_err *err)
{
	char path[1200], port[16];
	snprintf(path, sizeof path, "%s/%s", lc->work_dir, name);
	snprintf(port, sizeof port, "%u", lc->port);
	int rc = ergon_file_write_atomic(path, commands, strlen(commands), ERGON_WRITE_FORCE, err);
	if (rc)
		return rc;
	const char *argv[20];
	size_t n = 0;
	argv[n++] = "JLinkExe";
	if (lc->serial[0]) {
		argv[n++] = "-USB";
		argv[n++] = lc->serial;
	}
	argv[n++] = "-device";
	argv[n++] = lc->device;
	argv[n++] = "-if";
	argv[n++] = "SWD";
	argv[n++] = "-speed";
	argv[n++] = "4000";
	argv[n++] = "-autoconnect";
	argv[n++] = "1";
	argv[n++] = "-NoGui";
	argv[n++] = "1";
	argv[n++] = "-ExitOnError";
	argv[n++] = "1";
	argv[n++] = "-RTTTelnetPort";
	argv[n++] = port;
	argv[n++] = "-CommandFile";
	argv[n++] = path;
	argv[n] = NULL;
	if (!background)
		return ergon_lifecycle_run_tool_cancel(argv, lc->log, JLINK_TOOL_TIMEOUT_S,
						       lc->cancel, err);
	rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	if (rc == 0)
		rc = ergon_lifecycle_wait_port(lc->port, lc->pid, "JLinkExe", lc->log,
					       lc->start_timeout_s, err);
	return rc;
}

static int j_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	char cmds[1400];
	if ((size_t)snprintf(cmds, sizeof cmds, "r\nh\nloadfile %s\nr\nexit\n", image) >=
	    sizeof cmds)
		return ergon_err_set(err, ERGON_ETOOBIG, "jlink: firmware path too long: %s",
				     image);
	return run_jlink(lc, "flash.jlink", cmds, 0, err);
}

/* The run command file of the reset strategy (see the head comment). */
static int run_commands(const struct ergon_lifecycle *lc, char *cmds, size_t cap)
{
	char poi[48];
	snprintf(poi, sizeof poi, "w4 0x%08lX 0x%lX\n", lc->swpoi_addr, lc->swpoi_value);
	const char *steps = "r\ng\n";
	if (lc->reset_strategy == ERGON_LC_RESET_NONE)
		steps = "g\n";
	else if (lc->reset_strategy == ERGON_LC_RESET_SWPOI)
		steps = poi;
	const char *tail = lc->serial_port[0] ? "exit\n" : "sleep " JLINK_SESSION_MS "\nexit\n";
	int n = lc->reset_strategy == ERGON_LC_RESET_DEBUG_SWPOI
		    ? snprintf(cmds, cap, "r\n%s%s", poi, tail)
		    : snprintf(cmds, cap, "%s%s", steps, tail);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int j_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	if (lc->pid > 0)
		ergon_lifecycle_stop(lc->pid, 1.0);
	lc->pid = 0;
	char cmds[160];
	if (run_commands(lc, cmds, sizeof cmds) != 0)
		return ergon_err_set(err, ERGON_ETOOBIG, "jlink: run command file too long");
	/* A serial stream needs no J-Link session afterwards: run to the end. */
	return run_jlink(lc, "run.jlink", cmds, lc->serial_port[0] ? 0 : 1, err);
}

static int j_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	int n = lc->gdb_server[0]    ? snprintf(spec, cap, "rtt:gdb=%s", lc->gdb_server)
		: lc->serial_port[0] ? snprintf(spec, cap, "serial:%s", lc->serial_port)
				     : snprintf(spec, cap, "tcp:127.0.0.1:%u", lc->port);
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "jlink: endpoint too long");
	return 0;
}

static int j_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	ergon_lifecycle_stop(lc->pid, 2.0);
	lc->pid = 0;
	return 0;
}

static void j_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	ergon_lifecycle_stop(lc->pid, 2.0);
	free(lc);
}

const struct ergon_lifecycle_driver ergon_lifecycle_jlink = {
    .name = "jlink",
    .hardware = 1,
    .open = j_open,
    .flash = j_flash,
    .reset = j_reset,
    .endpoint = j_endpoint,
    .finish = j_finish,
    .close = j_close,
};

/* Lifecycle through OpenOCD: flash with `program FILE verify reset exit`;
 * run with `init; reset run; rtt setup; rtt start; rtt server start PORT 0`
 * kept in the background so the RTT TCP server stays up during the
 * capture. The interface and target scripts come from the environment
 * (ERGON_OPENOCD_INTERFACE, ERGON_OPENOCD_TARGET; defaults cmsis-dap and a
 * Cortex-M generic target) because boards differ in their adapters.
 * Not yet run on hardware: tested against a fake openocd that records its
 * arguments (tests/functional/test_profile_probes.sh). */
#include "ergon/lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPENOCD_DEFAULT_RTT_PORT 9090u
#define OPENOCD_TOOL_TIMEOUT_S 120.0
/* SEGGER RTT control block search: start of SRAM and a generous span. */
#define OPENOCD_RTT_SETUP "rtt setup 0x20000000 0x100000 \"SEGGER RTT\""

struct ergon_lifecycle {
	char work_dir[1024];
	char log[1100];
	char interface_cfg[256];
	char target_cfg[256];
	char serial[64];
	unsigned port;
	double start_timeout_s;
	int pid;
};

static int o_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "openocd: out of memory");
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
	*out = lc;
	return 0;
}

static int run_openocd(struct ergon_lifecycle *lc, const char *const *cmds, size_t ncmds,
		       int background, struct ergon_err *err)
{
	const char *argv[32];
	char serial_cmd[96];
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
	for (size_t i = 0; i < ncmds && n + 3 < sizeof argv / sizeof argv[0]; i++) {
		argv[n++] = "-c";
		argv[n++] = cmds[i];
	}
	argv[n] = NULL;
	if (!background)
		return ergon_lifecycle_run_tool(argv, lc->log, OPENOCD_TOOL_TIMEOUT_S, err);
	int rc = ergon_lifecycle_spawn(argv, lc->log, &lc->pid, err);
	if (rc == 0)
		rc = ergon_lifecycle_wait_port(lc->port, lc->pid, "openocd", lc->log,
					       lc->start_timeout_s, err);
	return rc;
}

static int o_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	char prog[1200];
	if ((size_t)snprintf(prog, sizeof prog, "program %s verify reset exit", image) >=
	    sizeof prog)
		return ergon_err_set(err, ERGON_ETOOBIG, "openocd: firmware path too long: %s",
				     image);
	const char *cmds[] = {prog};
	return run_openocd(lc, cmds, 1, 0, err);
}

static int o_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	char server[64];
	snprintf(server, sizeof server, "rtt server start %u 0", lc->port);
	const char *cmds[] = {"init", "reset run", OPENOCD_RTT_SETUP, "rtt start", server};
	if (lc->pid > 0)
		ergon_lifecycle_stop(lc->pid, 1.0);
	lc->pid = 0;
	return run_openocd(lc, cmds, sizeof cmds / sizeof cmds[0], 1, err);
}

static int o_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	if ((size_t)snprintf(spec, cap, "tcp:127.0.0.1:%u", lc->port) >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "openocd: endpoint too long");
	return 0;
}

static int o_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	ergon_lifecycle_stop(lc->pid, 2.0);
	lc->pid = 0;
	return 0;
}

static void o_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	ergon_lifecycle_stop(lc->pid, 2.0);
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

/* ergon capture: collect an HPX stream from a transport, keep the raw log,
 * parse it and write the same outputs as `ergon parse`. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/verdict.h"
#include "ergon/wire.h"
#include "hpx_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct capture_progress {
	const char *transport;
	unsigned long long lines;
	unsigned passes;
	char preset[64];
};

/* Every line of the stream: redraw on a new counter pass and every 256
 * lines (a terminal cannot show more). */
static void on_line(void *ctx, const char *line)
{
	struct capture_progress *c = ctx;
	size_t pl = strlen(HPX_TOK_PRESET_PREFIX);
	int redraw = (++c->lines % 256) == 0;
	if (strncmp(line, HPX_TOK_PRESET_PREFIX, pl) == 0) {
		const char *name = line + pl;
		size_t l = strcspn(name, " ");
		if (c->passes == 0 || strlen(c->preset) != l || strncmp(c->preset, name, l) != 0) {
			snprintf(c->preset, sizeof c->preset, "%.*s", (int)l, name);
			c->passes++;
			redraw = 1;
		}
	}
	if (redraw)
		cli_progress_line("ergon capture: pass %u %s, %llu lines from %s", c->passes,
				  c->preset, c->lines, c->transport);
}

static int run(int argc, char **argv)
{
	const char *transport = NULL, *out_dir = "results", *log = NULL, *recording = "unknown";
	int agg = ERGON_HPX_AGG_MEDIAN;
	unsigned flags = 0;
	double timeout_s = 600, heartbeat_s = 30;
	const char *agg_name = NULL;
	int force = 0, as_json = 0;
	struct cli_parser cp;
	cli_init(&cp, "capture", argc, argv);
	int clean = 0;
	while (cli_next(&cp)) {
		if (cli_str(&cp, "--transport", &transport)) {
		} else if (cli_outdir(&cp, "--out", &out_dir)) {
		} else if (cli_str(&cp, "--log", &log)) {
		} else if (cli_choice(&cp, "--aggregation", ergon_cli_hpx_aggregations,
				      &agg_name)) {
		} else if (cli_num(&cp, "--timeout", CLI_GE, 0, 1e7, &timeout_s)) {
		} else if (cli_num(&cp, "--heartbeat-timeout", CLI_GE, 0, 1e7, &heartbeat_s)) {
		} else if (cli_choice(&cp, "--recording", ergon_cli_hpx_recordings, &recording)) {
		} else if (cli_flag(&cp, "--clean", &clean)) {
		} else if (cli_flag(&cp, "--force", &force)) {
		} else if (cli_flag(&cp, "--json", &as_json)) {
		} else if (cli_quiet(&cp)) {
		} else {
			cli_unknown(&cp);
		}
	}
	if (cp.rc || cli_require(&cp, "--transport (e.g. serial:/dev/ttyACM0,115200)", transport))
		return cp.rc;
	if (agg_name)
		agg = ergon_hpx_aggregation_parse(agg_name);
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report_dir("capture", out_dir, clean);
	char logbuf[4096];
	if (!log) {
		snprintf(logbuf, sizeof(logbuf), "%s/capture.log", out_dir);
		log = logbuf;
	}
	struct ergon_err err = {0};
	json_t *summary = NULL;
	struct ergon_hpx_capture_opts co = {.transport = transport,
					    .log_path = log,
					    .write_flags = flags,
					    .timeout_s = timeout_s,
					    .heartbeat_s = heartbeat_s};
	struct ergon_hpx_report_opts o = {.out_dir = out_dir,
					  .log_path = log,
					  .recording = recording,
					  .aggregation = agg,
					  .write_flags = flags};
	/* On a terminal, one line while the stream is read: lines so far and
	 * the counter pass (preset) the stream is in (cleared after). */
	struct capture_progress cpg = {.transport = transport};
	int progress = cli_progress_ok();
	if (progress) {
		co.on_line = on_line;
		co.on_line_ctx = &cpg;
		cli_progress_line("ergon capture: reading %s until HPX_END (timeout %g s)",
				  transport, timeout_s);
	}
	struct ergon_hpx_run_result res;
	int rc = ergon_hpx_capture_run(&co, &o, &res, as_json ? &summary : NULL, &err);
	if (progress)
		cli_progress_clear();
	if (rc != 0) {
		ergon_hpx_run_result_cleanup(&res);
		return ergon_cli_fail("capture", &err);
	}
	if (as_json) {
		cli_print_json(summary);
	} else {
		ergon_cli_hpx_print_top(stdout, &res);
		printf("raw log %s; wrote %s/summary.json\n", log, out_dir);
	}
	int code = ergon_cli_verdict_exit("capture", &res.verdict, res.summary_path);
	ergon_hpx_run_result_cleanup(&res);
	json_decref(summary);
	return code;
}

const struct ergon_cli_command ergon_cli_cmd_capture = {
    .name = "capture",
    .summary = "capture an HPX PMU stream from a board and parse it",
    .help = "Usage: ergon capture --transport SPEC [--out DIR] [--log FILE] [--json]\n"
	    "         [--timeout S] [--heartbeat-timeout S] [--aggregation median|mean|trimmed]\n"
	    "         [--recording measured|synthetic|unknown] [--force] [--clean] [--quiet]\n\n"
	    "SPEC: file:PATH | - | serial:DEVICE[,BAUD] | tcp:HOST:PORT | unix:PATH |\n"
	    "      swo:FILE | swo:tcp:HOST:PORT |\n"
	    "      rtt:gdb=HOST:PORT[,addr=0x...|search=START:LEN][,find_s=S][,poll_max_ms=M]\n"
	    "      (SEGGER RTT through a GDB server: QEMU -gdb, OpenOCD, pyOCD, J-Link)\n\n"
	    "Every byte is written to the capture log (default DIR/capture.log) before it\n"
	    "is parsed. The capture ends at `--- HPX_END ---` (or the power terminal\n"
	    "record's end), at the end of the source, after --timeout seconds (default\n"
	    "600) or when no line arrives for --heartbeat-timeout seconds (default 30);\n"
	    "then it is kept and marked incomplete. SWO captures that lost packets are\n"
	    "marked diagnostic. Outputs are those of `ergon parse`. On a terminal a\n"
	    "progress line counts the lines and names the counter pass (--quiet: none).\n\n"
	    "Examples:\n  ergon capture --transport serial:/dev/ttyACM0,115200 --out run1\n"
	    "  ergon capture --transport tcp:127.0.0.1:19021 --timeout 120\n"
	    "  ergon capture --transport rtt:gdb=127.0.0.1:1234 --out run2\n",
    .run = run,
    .exits = {[0] = "the stream reached HPX_END and its profile was written",
	      [1] = "no usable profile (pmu.missing), or refused",
	      [4] = "the stream stopped before HPX_END (timeout, end of source): the complete "
	      "iterations are written, what followed is missing (pmu.incomplete)"},
};

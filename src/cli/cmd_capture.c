/* ergon capture: collect an HPX stream from a transport, keep the raw log,
 * parse it and write the same outputs as `ergon parse`. */
#include "cli.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "hpx_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_seconds(const char *s, double *out)
{
	char *end = NULL;
	double v = strtod(s, &end);
	if (!end || *end || !(v >= 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

static int run(int argc, char **argv)
{
	const char *transport = NULL, *out_dir = "results", *log = NULL, *recording = "unknown";
	int agg = ERGON_HPX_AGG_MEDIAN;
	unsigned flags = 0;
	double timeout_s = 600, heartbeat_s = 30;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;
		if (strcmp(a, "--transport") == 0 && has) {
			transport = argv[++i];
		} else if (strcmp(a, "--out") == 0 && has) {
			out_dir = argv[++i];
		} else if (strcmp(a, "--log") == 0 && has) {
			log = argv[++i];
		} else if (strcmp(a, "--aggregation") == 0 && has) {
			agg = ergon_hpx_aggregation_parse(argv[++i]);
			if (!agg)
				return ergon_cli_usage("capture",
						       "--aggregation %s: use median, mean or "
						       "trimmed",
						       argv[i]);
		} else if (strcmp(a, "--timeout") == 0 && has) {
			if (parse_seconds(argv[++i], &timeout_s))
				return ergon_cli_usage("capture", "--timeout %s: seconds >= 0",
						       argv[i]);
		} else if (strcmp(a, "--heartbeat-timeout") == 0 && has) {
			if (parse_seconds(argv[++i], &heartbeat_s))
				return ergon_cli_usage(
				    "capture", "--heartbeat-timeout %s: seconds >= 0", argv[i]);
		} else if (strcmp(a, "--recording") == 0 && has) {
			recording = argv[++i];
			if (strcmp(recording, "measured") && strcmp(recording, "synthetic") &&
			    strcmp(recording, "unknown"))
				return ergon_cli_usage("capture",
						       "--recording %s: use measured, synthetic or "
						       "unknown",
						       recording);
		} else if (strcmp(a, "--force") == 0) {
			flags |= ERGON_WRITE_FORCE;
		} else {
			return ergon_cli_usage("capture", "unknown argument %s", a);
		}
	}
	if (!transport)
		return ergon_cli_usage("capture", "--transport is required (e.g. "
						  "serial:/dev/ttyACM0,115200)");
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
	if (ergon_hpx_capture_run(&co, &o, &summary, &err) != 0)
		return ergon_cli_fail("capture", &err);
	const json_t *profile = json_object_get(summary, "profile");
	ergon_cli_hpx_print_top(stdout, profile);
	printf("raw log %s; wrote %s/summary.json\n", log, out_dir);
	int code =
	    ergon_issues_integrity(json_object_get(profile, "issues")) == ERGON_INTEGRITY_INVALID
		? ERGON_EXIT_MEASUREMENT
		: ERGON_EXIT_OK;
	json_decref(summary);
	return code;
}

const struct ergon_cli_command ergon_cli_cmd_capture = {
    .name = "capture",
    .summary = "capture an HPX PMU stream from a board and parse it",
    .help = "Usage: ergon capture --transport SPEC [--out DIR] [--log FILE]\n"
	    "         [--timeout S] [--heartbeat-timeout S] [--aggregation median|mean|trimmed]\n"
	    "         [--recording measured|synthetic|unknown] [--force]\n\n"
	    "SPEC: file:PATH | - | serial:DEVICE[,BAUD] | tcp:HOST:PORT | unix:PATH |\n"
	    "      swo:FILE | swo:tcp:HOST:PORT |\n"
	    "      rtt:gdb=HOST:PORT[,addr=0x...|search=START:LEN][,find_s=S][,poll_max_ms=M]\n"
	    "      (SEGGER RTT through a GDB server: QEMU -gdb, OpenOCD, pyOCD, J-Link)\n\n"
	    "Every byte is written to the capture log (default DIR/capture.log) before it\n"
	    "is parsed. The capture ends at `--- HPX_END ---` (or the power terminal\n"
	    "record's end), at the end of the source, after --timeout seconds (default\n"
	    "600) or when no line arrives for --heartbeat-timeout seconds (default 30);\n"
	    "then it is kept and marked incomplete. SWO captures that lost packets are\n"
	    "marked diagnostic. Outputs are those of `ergon parse`.\n\n"
	    "Examples:\n  ergon capture --transport serial:/dev/ttyACM0,115200 --out run1\n"
	    "  ergon capture --transport tcp:127.0.0.1:19021 --timeout 120\n"
	    "  ergon capture --transport rtt:gdb=127.0.0.1:1234 --out run2\n",
    .run = run,
};

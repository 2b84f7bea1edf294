/* ergon record: a streaming instrument (ppk2, a raw-sample bridge) to a
 * JLS v2 file that our reader, the reference JLS reader and the Joulescope
 * UI read. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/record.h"
#include "ergon/verdict.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_KV 32

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void progress(void *ctx, const struct ergon_record_progress *p)
{
	(void)ctx;
	fprintf(stderr, "\r  %8.2f s  %10llu samples  %6llu dropped  mean %.6g A   ", p->elapsed_s,
		(unsigned long long)p->samples, (unsigned long long)p->dropped, p->mean_current_a);
	fflush(stderr);
}

static int run(int argc, char **argv)
{
	struct ergon_record_options o = {0};
	const char *kv[MAX_KV + 1] = {0};
	size_t nkv = 0;
	struct ergon_err err = {0};
	long idx = 0;
	int json = 0;
	struct cli_parser p;
	cli_init(&p, "record", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		const char *v = NULL;
		if (cli_str(&p, "--instrument", &o.instrument_spec)) {
		} else if (cli_str(&p, "--instrument-opt", &v)) {
			if (v && nkv >= MAX_KV)
				cli_error(&p, "too many --instrument-opt (at most %d)", MAX_KV);
			else if (v)
				kv[nkv++] = v;
		} else if (cli_num(&p, "--duration-s", CLI_GT, 0, 1e7, &o.duration_s)) {
		} else if (cli_str(&p, "--out", &o.out_path)) {
		} else if (cli_long(&p, "--sync-input-index", 0, 7, &idx)) {
			o.sync_input_index = (unsigned)idx;
		} else if (cli_flag(&p, "--until-gate-falls", &o.until_gate_falls)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &o.force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_quiet(&p)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "--instrument", o.instrument_spec) ||
	    cli_require(&p, "--out", o.out_path))
		return p.rc;
	ergon_cli_stale_report("record", o.out_path, clean);
	if (o.duration_s == 0 && !o.until_gate_falls && !isatty(0))
		return cli_error(&p, "give --duration-s S or --until-gate-falls (or run it on a "
				     "terminal and stop it with Ctrl-C)");
	o.instrument_opts.kv = nkv ? kv : NULL;
	o.stop_flag = &stop_flag;
	int tty = cli_progress_ok();
	if (tty)
		o.progress = progress;
	/* SIGINT, SIGTERM, SIGHUP (a closed SSH session) and SIGQUIT stop the
	 * recording with the file closed and kept; SIGPIPE is ignored. */
	ergon_cli_signals_install(on_signal, 0, NULL);
	struct ergon_record_result res;
	int rc = ergon_record_run(&o, &res, &err);
	if (tty && o.progress)
		fprintf(stderr, "\n");
	if (rc && res.samples_kept == 0) {
		ergon_record_result_cleanup(&res);
		return ergon_cli_fail("record", &err);
	}
	if (json)
		cli_json_doc("record",
			     json_pack("{s:s, s:I, s:f, s:I, s:f, s:s, s:o, s:o}", "out", res.out_path,
				       "samples", (json_int_t)res.samples_kept, "elapsed_s",
				       res.samples_kept > 0 ? res.elapsed_s : 0.0, "dropped",
				       (json_int_t)res.dropped, "mean_current_a",
				       isfinite(res.mean_current_a) ? res.mean_current_a : 0.0,
				       "stop_reason", res.stop_reason[0] ? res.stop_reason : "done",
				       "instrument",
				       res.identity ? json_incref(res.identity) : json_null(), "issues",
				       res.issues ? json_incref(res.issues) : json_array()));
	else
		printf("recorded %llu samples (%.3f s, %llu dropped, mean %.6g A) to %s: %s\n",
	       (unsigned long long)res.samples_kept,
	       (double)res.samples_kept > 0 ? res.elapsed_s : 0.0, (unsigned long long)res.dropped,
	       res.mean_current_a, res.out_path, res.stop_reason[0] ? res.stop_reason : "done");
	if (res.write_retries > 0)
		cli_warn("record",
			"%llu write(s) of %s failed (%s) and succeeded once "
			"the space reserved before the recording was released",
			(unsigned long long)res.write_retries, res.out_path,
			strerror(res.write_errno));
	for (size_t i = 0; !json && i < res.issue_list.n; i++) /* --json: the document holds them */
		fprintf(stderr, "ergon record: %s: %s\n", res.issue_list.items[i].code,
			res.issue_list.items[i].message);
	ergon_record_result_cleanup(&res);
	if (rc)
		return cli_report_error("record", ergon_exit_code(rc), ergon_strerror_name(rc),
					err.msg, 0);
	struct ergon_verdict verdict;
	ergon_verdict_record(&res, &verdict);
	return ergon_cli_verdict_exit("record", &verdict, res.out_path);
}

const struct ergon_cli_command ergon_cli_cmd_record = {
    .name = "record",
    .summary = "record a live instrument (ppk2) to a JLS file",
    .help = "Usage: ergon record --instrument SPEC --out FILE.jls [--json]\n"
	    "                    (--duration-s S | --until-gate-falls | Ctrl-C)\n"
	    "                    [--sync-input-index N] [--instrument-opt K=V]... [--force]\n"
	    "                    [--clean] [--quiet]\n\n"
	    "Records every sample of a streaming instrument to a JLS v2 file (current,\n"
	    "voltage, power as f32; the digital lines as gpi[0]..gpi[7]), with CRC32C on\n"
	    "every chunk, summaries and a UTC track. `ergon analyze --jls FILE.jls` reads\n"
	    "it like a Joulescope recording. Lost samples (a PPK2 counter gap) are NaN,\n"
	    "never interpolated. If the recording is killed, the file is valid up to its\n"
	    "last complete chunk; a full disk keeps what fits.\n\n"
	    "Options:\n"
	    "  --instrument SPEC     ppk2 | ppk2:PORT | ppk2:serial=SN\n"
	    "  --instrument-opt K=V  ppk2: vdd_mv=N (required), mode=ampere|source,\n"
	    "                        dut_power=on|off, spike_filter=0|1\n"
	    "  --duration-s S        stop after S seconds of samples\n"
	    "  --until-gate-falls    stop when the gate line falls after it rose\n"
	    "  --sync-input-index N  the digital line of the gate (default 0 = D0)\n"
	    "  --out FILE.jls        the recording (refused if it exists)\n"
	    "  --force               replace an existing FILE.jls\n"
	    "  --clean               remove stale .ergon-tmp-* files of killed writes\n\n"
	    "On a terminal a progress line shows elapsed time, samples, drops and the\n"
	    "mean current (--quiet: none).\n\n"
	    "Examples:\n"
	    "  ergon record --instrument ppk2 --instrument-opt vdd_mv=3300 \\\n"
	    "      --instrument-opt mode=source --duration-s 10 --out boot.jls\n"
	    "  ergon record --instrument ppk2:serial=C0FFEE1234 --instrument-opt vdd_mv=1800 \\\n"
	    "      --until-gate-falls --sync-input-index 3 --out infer.jls\n",
    .run = run,
    .exits = {[0] = "recorded to its end (--duration-s, the gate's fall, or Ctrl-C)",
	      [1] = "incomplete: the instrument went away (the file keeps everything before), or "
	      "refused",
	      [3] = "e.g. a full disk (the file is valid up to what fit)",
	      [4] = "the file is complete but samples were lost (NaN, never interpolated) or refused "
	      "(time went backwards)"},
};

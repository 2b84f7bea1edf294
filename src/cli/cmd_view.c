/* ergon view: one or two recordings as a page to explore (zoom, cursors,
 * selection statistics), written to a file. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/view.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* --serve: answer requests until SIGINT, SIGTERM or SIGHUP. The signals
 * are blocked before the server's thread starts (it inherits the mask)
 * and taken here with sigwait, so no handler runs inside the server. */
static int serve(const struct ergon_view_input *in, size_t n, const struct ergon_view_options *o,
		 long port, int json)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct ergon_err err = {0};
	struct ergon_view_server *srv = NULL;
	if (ergon_view_serve_start(in, n, o, (uint16_t)port, &srv, &err) != 0)
		return ergon_cli_fail("view", &err);
	if (json) {
		/* The document is printed when the server is ready; the stop is
		 * a note on stderr (stdout keeps one document). */
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			json_array_append_new(a, json_pack("{s:s, s:s?}", "jls", in[i].jls_path,
							   "summary", in[i].summary_path));
		int rc =
		    cli_json_doc("view", json_pack("{s:s, s:o}", "serving",
						   ergon_view_server_url(srv), "recordings", a));
		if (rc != ERGON_EXIT_OK) {
			ergon_view_server_stop(srv);
			return rc;
		}
	} else {
		printf("serving %s%s%s on 127.0.0.1 only; open\n  %s\n(Ctrl-C stops)\n",
		       in[0].jls_path, n > 1 ? " and " : "", n > 1 ? in[1].jls_path : "",
		       ergon_view_server_url(srv));
	}
	fflush(stdout);
	int sig = 0;
	while (sigwait(&set, &sig) != 0)
		;
	unsigned long long served = (unsigned long long)ergon_view_server_requests(srv);
	ergon_view_server_stop(srv);
	const char *why = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
	if (json)
		cli_note("view", "stopped (%s): %llu request%s answered", why, served,
			 served == 1 ? "" : "s");
	else
		printf("stopped (%s): %llu request%s answered\n", why, served,
		       served == 1 ? "" : "s");
	return ERGON_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct ergon_view_input in[ERGON_VIEW_RECORDINGS_MAX];
	struct ergon_view_options o = {0};
	const char *out = NULL;
	size_t n = 0;
	memset(in, 0, sizeof in);
	int force = 0, clean = 0, force_jls = 0, json = 0, serve_flag = 0;
	long max_bins = 0, port = 0;
	struct cli_parser p;
	cli_init(&p, "view", argc, argv);
	while (cli_next(&p)) {
		const char *v = NULL;
		if (cli_str(&p, "--out", &out)) {
		} else if (cli_str(&p, "--summary", &v)) {
			if (v && n == 0)
				cli_error(&p,
					  "--summary %s: give it after the recording it belongs to",
					  v);
			else if (v && in[n - 1].summary_path != NULL)
				cli_error(&p, "--summary %s: %s already has the summary %s", v,
					  in[n - 1].jls_path, in[n - 1].summary_path);
			else if (v)
				in[n - 1].summary_path = v;
		} else if (cli_long(&p, "--max-bins", 10, 100000000, &max_bins)) {
		} else if (cli_flag(&p, "--serve", &serve_flag)) {
		} else if (cli_long(&p, "--port", 1, 65535, &port)) {
		} else if (cli_flag(&p, "--force-jls", &force_jls)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_positional(&p, &v)) {
			if (n == ERGON_VIEW_RECORDINGS_MAX)
				cli_error(&p, "%s: at most %u recordings (side by side)", v,
					  ERGON_VIEW_RECORDINGS_MAX);
			else
				in[n++].jls_path = v;
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "RECORDING.jls", in[0].jls_path))
		return p.rc;
	if (serve_flag && out != NULL)
		return cli_error(&p, "--serve and --out %s: give one (--serve writes no file)",
				 out);
	if (!serve_flag && port != 0)
		return cli_error(&p, "--port %ld: only with --serve", port);
	if (!serve_flag && cli_require(&p, "--out", out))
		return p.rc;
	if (max_bins % 10 != 0)
		return cli_error(&p, "--max-bins %ld: give a multiple of 10", max_bins);
	o.max_bins = (uint64_t)max_bins;
	for (size_t i = 0; i < n; i++)
		in[i].force_jls = force_jls;
	if (serve_flag)
		return serve(in, n, &o, port, json);
	ergon_cli_stale_report("view", out, clean);
	struct ergon_err err = {0};
	if (ergon_view_write(in, n, &o, out, force ? ERGON_WRITE_FORCE : 0, &err) != 0)
		return ergon_cli_fail("view", &err);
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			json_array_append_new(a, json_pack("{s:s, s:s?}", "jls", in[i].jls_path,
							   "summary", in[i].summary_path));
		return cli_json_doc("view", json_pack("{s:s, s:o}", "wrote", out, "recordings", a));
	}
	printf("wrote %s (%zu recording%s)\n", out, n, n > 1 ? "s" : "");
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_view = {
    .name = "view",
    .summary = "explore a JLS recording in the browser: zoom, cursors, selection figures",
    .help = "Usage: ergon view RECORDING.jls [--summary summary.json]\n"
	    "                  [RECORDING2.jls [--summary summary2.json]]\n"
	    "                  --out view.html [--max-bins N] [--force] [--force-jls]\n"
	    "                  [--json]\n"
	    "       ergon view RECORDING.jls [--summary summary.json] ... --serve\n"
	    "                  [--port N] [--json]\n\n"
	    "Writes one self-contained page (it loads nothing from the network) with the\n"
	    "recording's current, voltage, power and digital lines on a shared time axis.\n"
	    "Wheel or pinch zooms, dragging pans, Shift+drag (or a drag on the time axis)\n"
	    "selects; the selection's edges are the cursors A and B. Below the plot,\n"
	    "#selection-stats shows the selection's duration, mean/min/max current and\n"
	    "power, charge and energy, computed from the finest bins embedded (their size\n"
	    "is stated; the selection's edges snap to them). A URL fragment selects a\n"
	    "range on load: view.html#t0=0.5&t1=1.5.\n\n"
	    "With --summary (the summary.json of ergon analyze or ergon profile --power on\n"
	    "that recording), its gate windows, ignored gate pulses and layer markers are\n"
	    "drawn over the recording. The summary must be that recording's: its size\n"
	    "and SHA-256 (provenance.recording, written by ergon analyze) are compared,\n"
	    "and another recording, or a summary that records none, is refused (exit 1)\n"
	    "unless --force-jls. Two recordings are drawn one above the other, the\n"
	    "second shifted so that both first gate edges line up.\n\n"
	    "With --serve, nothing is written: the page is served on 127.0.0.1 only (a\n"
	    "free port, or --port N) at the URL printed, which holds a random token that\n"
	    "every request needs (403 without it). Zoomed in past the embedded bins,\n"
	    "the page fetches finer bins read from the recording's own summary levels\n"
	    "and samples (GET /api/tile), and a selection's figures are exact at full\n"
	    "resolution (GET /api/stats), so a recording of any length can be explored.\n"
	    "Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the server: exit 0.\n\n"
	    "Options:\n"
	    "  --out FILE.html     the page (refused if it exists)\n"
	    "  --serve             serve the page on 127.0.0.1 instead of writing it\n"
	    "  --port N            with --serve: listen on port N (1..65535; default: a\n"
	    "                      free port)\n"
	    "  --summary FILE      the summary of the recording given just before it\n"
	    "  --max-bins N        embed at most N bins per recording (a multiple of 10;\n"
	    "                      default 100000): the finest decimal bin size (1, 10,\n"
	    "                      100... samples) that fits is used\n"
	    "  --force             replace an existing FILE.html\n"
	    "  --force-jls         draw a summary over a recording not shown to be its\n"
	    "                      own (the page says so)\n"
	    "  --clean             remove stale .ergon-tmp-* files of killed writes\n"
	    "  --json              print {\"command\", \"wrote\", \"recordings\": [{\"jls\",\n"
	    "                      \"summary\"}]} instead of the \"wrote\" line; with\n"
	    "                      --serve {\"command\", \"serving\": URL, \"recordings\"}\n"
	    "                      when it is ready\n\n"
	    "Examples:\n"
	    "  ergon view infer.jls --summary an/summary.json --out infer.html\n"
	    "  ergon view before.jls after.jls --out compare.html\n"
	    "  ergon view day.jls --serve\n",
    .run = run,
};

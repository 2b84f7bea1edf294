/* CLI helpers that keep a measurement alive (docs/RELIABILITY.md): stop
 * signals, --log FILE, and the stale temporary-file report. */
#ifndef ERGON_CLI_RELIAB_H
#define ERGON_CLI_RELIAB_H

#include <signal.h>

struct ergon_cli_signals {
	struct sigaction old_int, old_term, old_hup, old_quit, old_pipe;
};

/* The signals that end a measurement early with its report kept: SIGINT,
 * SIGTERM, SIGHUP (a closed SSH session), SIGQUIT.
 * Install handler (no SA_RESTART, so a blocked read returns) for the stop
 * signals and ignore SIGPIPE: a closed pipe on the summary or the progress
 * line gives EPIPE, never kills a run that holds data. With ignore_hup
 * (--log: the run is detached from its terminal) SIGHUP is ignored
 * instead. saved (may be NULL) receives the previous dispositions. */
void ergon_cli_signals_install(void (*handler)(int), int ignore_hup,
			       struct ergon_cli_signals *saved);
/* Restore what ergon_cli_signals_install saved. */
void ergon_cli_signals_restore(const struct ergon_cli_signals *saved);

/* --log FILE: append stdout and stderr to path (created 0644) and read
 * stdin from /dev/null, so the run no longer needs its terminal. Returns 0,
 * or prints why on stderr and returns ERGON_EXIT_IO. */
int ergon_cli_log_to(const char *cmd, const char *path);

/* Report stale .ergon-tmp-XXXXXX files in the folder of out_path on stderr
 * (with clean: remove them and say so). Returns the number found. */
int ergon_cli_stale_report(const char *cmd, const char *out_path, int clean);
/* The same for an output folder (--out DIR of profile, analyze, parse,
 * capture, kernels, compare): the stale files inside DIR. NULL: nothing. */
int ergon_cli_stale_report_dir(const char *cmd, const char *out_dir, int clean);

#endif

/* Stop signals, --log FILE and the stale temporary-file report for the
 * measuring subcommands (see cli_reliab.h). */
#include "cli_reliab.h"

#include "cli.h"
#include "cli_opts.h"
#include "ergon/reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ergon_cli_signals_install(void (*handler)(int), int ignore_hup,
			       struct ergon_cli_signals *saved)
{
	struct ergon_cli_signals dummy;
	struct sigaction sa = {0}, ign = {0};
	if (saved == NULL)
		saved = &dummy;
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &sa, &saved->old_int);
	sigaction(SIGTERM, &sa, &saved->old_term);
	sigaction(SIGHUP, ignore_hup ? &ign : &sa, &saved->old_hup);
	sigaction(SIGQUIT, &sa, &saved->old_quit);
	sigaction(SIGPIPE, &ign, &saved->old_pipe);
}

void ergon_cli_signals_restore(const struct ergon_cli_signals *saved)
{
	sigaction(SIGINT, &saved->old_int, NULL);
	sigaction(SIGTERM, &saved->old_term, NULL);
	sigaction(SIGHUP, &saved->old_hup, NULL);
	sigaction(SIGQUIT, &saved->old_quit, NULL);
	sigaction(SIGPIPE, &saved->old_pipe, NULL);
}

/* --log's failure, as every command's final error (a JSON line with --json). */
static int log_fail(const char *cmd, const char *path, const char *what, int e)
{
	char msg[1200];
	snprintf(msg, sizeof msg, "--log %s: %s: %s%s", path, what, strerror(e),
		 strcmp(what, "cannot open") == 0 ? " (choose another file)" : "");
	return cli_report_error(cmd, ERGON_EXIT_IO, ergon_strerror_name(ergon_err_from_errno(e)),
				msg, 0);
}

int ergon_cli_log_to(const char *cmd, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_fail(cmd, path, "cannot open", errno);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fflush(stdout);
	fflush(stderr);
	if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0) {
		int e = errno;
		if (in >= 0)
			close(in);
		close(fd);
		return log_fail(cmd, path, "cannot redirect the output", e);
	}
	close(in);
	close(fd);
	/* Line-buffered: the log shows the summary as it is printed. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return 0;
}

struct stale_ctx {
	const char *cmd;
	const char *out;
	int clean;
};

static void on_stale(void *ctx, const char *file, long long size, int has_data, int removed)
{
	const struct stale_ctx *c = ctx;
	char dir[4096];
	const char *slash = strrchr(c->out, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - c->out) : 1, slash ? c->out : ".");
	if (c->clean)
		cli_note(c->cmd, "%s %s/%s (%lld bytes), a stale temporary file of an earlier ergon run",
			 removed ? "removed" : "could not remove", dir, file, size);
	else if (has_data)
		cli_warn(c->cmd,
			 "%s/%s (%lld bytes) is a stale temporary file of an earlier ergon run that "
			 "was killed while writing; it may hold a complete report: look at it, "
			 "rename it, or pass --clean to remove it",
			 dir, file, size);
	else
		cli_warn(c->cmd,
			 "%s/%s (%lld bytes) is a stale temporary file of an earlier ergon run that "
			 "was killed before it wrote anything (only the space reserved before "
			 "measuring, all zero): pass --clean to remove it",
			 dir, file, size);
}

int ergon_cli_stale_report(const char *cmd, const char *out_path, int clean)
{
	if (out_path == NULL || out_path[0] == '\0')
		return 0;
	struct ergon_err err = {0};
	struct stale_ctx c = {cmd, out_path, clean};
	int n = ergon_out_scan_stale(out_path, clean, on_stale, &c, &err);
	if (n < 0) {
		cli_warn(cmd, "%s", err.msg);
		return 0;
	}
	return n;
}

int ergon_cli_stale_report_dir(const char *cmd, const char *out_dir, int clean)
{
	char inside[4096];
	if (out_dir == NULL || out_dir[0] == '\0')
		return 0;
	/* The scan looks in the folder of a path: name a file inside DIR. */
	size_t n = strlen(out_dir);
	if (snprintf(inside, sizeof(inside), "%s%s.", out_dir, out_dir[n - 1] == '/' ? "" : "/") >=
	    (int)sizeof(inside))
		return 0;
	return ergon_cli_stale_report(cmd, inside, clean);
}

/* command: one process per invocation (`--workload command:ARGV`).
 *
 * ARGV is split by ergon_wl_argv_split (no shell; quoting rules in
 * docs/internals/workloads.md). Each invoke spawns the program in its own
 * process group with stdin and stdout on /dev/null, keeps the tail of its
 * stderr for the error message, and waits for it with the per-invocation
 * timeout. A non-zero exit or a death by signal is a failed invocation;
 * the timeout kills the whole group and answers ERGON_ETIMEDOUT. Every
 * child is reaped before invoke returns.
 */
#include "drivers/workloads/wl_opts.h"
#include "drivers/workloads/wl_proc.h"
#include "ergon/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STDERR_TAIL 240 /* bytes of the child's stderr quoted in an error */
/* Without a pidfd the exit is noticed by polling at this period. */
#define FALLBACK_POLL_MS 2

struct command {
	struct ergon_wl_argv av;
	double timeout_s;
	const volatile sig_atomic_t *stop;
	char tail[STDERR_TAIL];
	size_t tail_len;
};

static int command_open(struct ergon_workload *wl, const struct ergon_workload_options *opts,
			struct ergon_err *err)
{
	struct command *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory",
				     wl->description);
	static const char *const no_keys[] = {NULL};
	/* Commas belong to the command line here, so options can only come
	 * through kv, and this driver has none. */
	int rc = ergon_wl_opt_check_keys(opts, NULL, wl->description, no_keys, err);
	if (rc == 0 && !(opts->invoke_timeout_s >= 0.0))
		rc = ergon_err_set(err, ERGON_ERANGE,
				   "--workload %s: invocation timeout %g s is negative; give 0 "
				   "(none) or a positive number of seconds",
				   wl->description, opts->invoke_timeout_s);
	if (rc == 0)
		rc = ergon_wl_argv_split(opts->arg ? opts->arg : "", wl->description, &c->av, err);
	if (rc == 0)
		rc = ergon_wl_program_check(c->av.argv[0], wl->description, err);
	if (rc) {
		free(c);
		return rc;
	}
	c->timeout_s = opts->invoke_timeout_s;
	c->stop = opts->stop;
	wl->priv = c;
	return 0;
}

/* Keep the last STDERR_TAIL bytes the child wrote. */
static void tail_add(struct command *c, const char *p, size_t n)
{
	if (n >= STDERR_TAIL) {
		memcpy(c->tail, p + n - STDERR_TAIL, STDERR_TAIL);
		c->tail_len = STDERR_TAIL;
		return;
	}
	if (c->tail_len + n > STDERR_TAIL) {
		size_t drop = c->tail_len + n - STDERR_TAIL;
		memmove(c->tail, c->tail + drop, c->tail_len - drop);
		c->tail_len -= drop;
	}
	memcpy(c->tail + c->tail_len, p, n);
	c->tail_len += n;
}

/* Read what is there; returns 1 at EOF. */
static int drain(struct command *c, int fd)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			tail_add(c, buf, (size_t)n);
			continue;
		}
		if (n == 0)
			return 1;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? 0 : 1;
	}
}

/* The tail as one printable line: control bytes become spaces. */
static void tail_text(const struct command *c, char *out, size_t cap)
{
	size_t n = 0, start = c->tail_len;
	while (start > 0 && c->tail[start - 1] == '\n')
		start--;
	size_t end = start;
	while (start > 0 && c->tail[start - 1] != '\n')
		start--;
	for (size_t i = start; i < end && n + 1 < cap; i++) {
		unsigned char ch = (unsigned char)c->tail[i];
		out[n++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
	}
	out[n] = '\0';
}

/* Has pid exited? Leaves it a zombie (WNOWAIT) so that its pid, and with
 * it the process-group id, cannot be reused before we kill the group. */
static int exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

static int command_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct command *c = wl->priv;
	int pfd[2] = {-1, -1}, pidfd = -1, rc = 0, status = 0, timed_out = 0, interrupted = 0;
	pid_t pid = -1;
	c->tail_len = 0;
	double deadline = c->timeout_s > 0 ? ergon_wl_now_s() + c->timeout_s : 0;
	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0)
		return ergon_err_errno(err, errno, "--workload %s: pipe", wl->description);
	rc = ergon_wl_spawn(&c->av, -1, -1, pfd[1], wl->description, &pid, err);
	close(pfd[1]);
	pfd[1] = -1;
	if (rc)
		goto out;
	pidfd = ergon_wl_pidfd(pid);
	for (;;) {
		if (pidfd >= 0 ? 0 : exited(pid))
			break;
		int wait_ms = -1;
		if (deadline > 0) {
			double left = deadline - ergon_wl_now_s();
			if (left <= 0) {
				timed_out = 1;
				break;
			}
			wait_ms = (int)(left * 1000.0) + 1;
		}
		if (ergon_wl_stopping(c->stop)) {
			interrupted = 1;
			break;
		}
		if (pidfd < 0 && (wait_ms < 0 || wait_ms > FALLBACK_POLL_MS))
			wait_ms = FALLBACK_POLL_MS;
		if (c->stop && (wait_ms < 0 || wait_ms > ERGON_WL_STOP_SLICE_MS))
			wait_ms = ERGON_WL_STOP_SLICE_MS;
		struct pollfd fds[2];
		nfds_t nf = 0;
		if (pidfd >= 0)
			fds[nf++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		if (pfd[0] >= 0)
			fds[nf++] = (struct pollfd){.fd = pfd[0], .events = POLLIN};
		int n = poll(fds, nf, wait_ms);
		if (n < 0) {
			/* A handled signal: the loop head checks the stop flag. */
			if (errno == EINTR)
				continue;
			rc = ergon_err_errno(err, errno, "--workload %s: poll", wl->description);
			break;
		}
		for (nfds_t i = 0; i < nf; i++) {
			if (fds[i].fd == pfd[0] && fds[i].revents && drain(c, pfd[0])) {
				close(pfd[0]);
				pfd[0] = -1;
			}
		}
		if (pidfd >= 0 && (fds[0].revents & POLLIN))
			break;
	}
	if (pfd[0] >= 0)
		drain(c, pfd[0]);
	/* Exited or not, kill the group: a normal exit may leave background
	 * processes whose work would leak into the next invocation. */
	status = ergon_wl_kill_reap(pid);
	if (rc)
		goto out;
	char tail[STDERR_TAIL + 1], st[96];
	tail_text(c, tail, sizeof(tail));
	if (interrupted) {
		rc = ergon_err_set(
		    err, ERGON_EINTR,
		    "--workload %s: stopped on request (signal); the command was killed",
		    wl->description);
	} else if (timed_out) {
		rc =
		    ergon_err_set(err, ERGON_ETIMEDOUT,
				  "--workload %s: still running after the %g s invocation timeout; "
				  "killed its process group (raise --invoke-timeout-s if it is "
				  "merely slow)",
				  wl->description, c->timeout_s);
	} else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		ergon_wl_status_text(status, st, sizeof(st));
		rc = ergon_err_set(err, ERGON_EIO, "--workload %s: failed invocation: %s%s%s",
				   wl->description, st, tail[0] ? "; stderr: " : "", tail);
	}
out:
	if (pidfd >= 0)
		close(pidfd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	return rc;
}

static void command_close(struct ergon_workload *wl)
{
	free(wl->priv);
	wl->priv = NULL;
}

const struct ergon_workload_driver ergon_workload_command = {
    .name = "command",
    .longname = "one process per invocation (fork/exec, no shell)",
    .open = command_open,
    .invoke = command_invoke,
    .close = command_close,
};

/* pipe: a persistent child answering one line per invocation
 * (`--workload pipe:ARGV`).
 *
 * The child is spawned in prepare (so its start-up cost stays out of the
 * timed invocations) with stdin and stdout on one end of a socketpair. Per
 * invoke ergon writes "invoke <seq>\n" and reads exactly one reply line:
 * "ok[ text]" is success, "err[ text]" a failed invocation, anything else a
 * protocol error that stops the child. EOF means the child died; it is not restarted (a restart
 * would put its start-up inside a timed invocation), so every later invoke
 * fails at once with the cause. A timeout or a desynchronised stream kills
 * the child's process group for the same reason. Protocol:
 * docs/internals/workloads.md.
 */
#include "drivers/workloads/wl_opts.h"
#include "drivers/workloads/wl_proc.h"
#include "ergon/workload.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX 4096 /* bytes of one reply line, newline included */
/* At close the child gets this long to exit on EOF before SIGKILL. */
#define CLOSE_GRACE_S 2.0

struct pipe_wl {
	struct ergon_wl_argv av;
	double timeout_s;
	const volatile sig_atomic_t *stop;
	pid_t pid;	/* -1 when no child runs */
	int fd;		/* our end of the socketpair; -1 when closed */
	uint64_t seq;	/* invocations sent */
	char dead[384]; /* why the child is gone, for every later invoke */
	char reply[REPLY_MAX + 1];
};

static int pipe_open(struct ergon_workload *wl, const struct ergon_workload_options *opts,
		     struct ergon_err *err)
{
	struct pipe_wl *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory",
				     wl->description);
	p->pid = -1;
	p->fd = -1;
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
		rc = ergon_wl_argv_split(opts->arg ? opts->arg : "", wl->description, &p->av, err);
	if (rc == 0)
		rc = ergon_wl_program_check(p->av.argv[0], wl->description, err);
	if (rc) {
		free(p);
		return rc;
	}
	p->timeout_s = opts->invoke_timeout_s;
	p->stop = opts->stop;
	wl->priv = p;
	return 0;
}

static int pipe_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	struct pipe_wl *p = wl->priv;
	if (p->pid > 0 || p->dead[0])
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return ergon_err_errno(err, errno, "--workload %s: socketpair", wl->description);
	/* stderr is inherited: the child's diagnostics reach the operator. */
	int rc = ergon_wl_spawn(&p->av, sv[1], sv[1], -1, wl->description, &p->pid, err);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		p->pid = -1;
		return rc;
	}
	p->fd = sv[0];
	return 0;
}

/* Stop the child for good and remember why. */
static void pipe_kill(struct pipe_wl *p, const char *why)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (p->pid > 0)
		ergon_wl_kill_reap(p->pid);
	p->pid = -1;
	snprintf(p->dead, sizeof(p->dead), "%s", why);
}

/* After EOF: the child is exiting or has exited. Give it a moment, then
 * collect its status (killing it if it lingers with the socket closed). */
static void pipe_reap_after_eof(struct pipe_wl *p, uint64_t seq)
{
	int status = 0;
	double until = ergon_wl_now_s() + 1.0;
	for (;;) {
		if (ergon_wl_try_reap(p->pid, &status))
			break;
		if (ergon_wl_now_s() > until) {
			status = ergon_wl_kill_reap(p->pid);
			break;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	p->pid = -1;
	close(p->fd);
	p->fd = -1;
	char st[96];
	ergon_wl_status_text(status, st, sizeof(st));
	snprintf(p->dead, sizeof(p->dead),
		 "the pipe child closed its output at invocation %llu (%s); it is not restarted",
		 (unsigned long long)seq, st);
}

/* Wait for fd to be ready for events until deadline (0 = none). Returns
 * 1 ready, 0 timed out, -EINTR when the stop flag is set, another negative
 * errno on failure. A signal without the stop flag is retried. */
static int wait_fd(int fd, short events, double deadline, const volatile sig_atomic_t *stop)
{
	for (;;) {
		if (ergon_wl_stopping(stop))
			return -EINTR;
		int wait_ms = -1;
		if (deadline > 0) {
			double left = deadline - ergon_wl_now_s();
			if (left <= 0)
				return 0;
			wait_ms = (int)(left * 1000.0) + 1;
		}
		if (stop && (wait_ms < 0 || wait_ms > ERGON_WL_STOP_SLICE_MS))
			wait_ms = ERGON_WL_STOP_SLICE_MS;
		struct pollfd pf = {.fd = fd, .events = events};
		int n = poll(&pf, 1, wait_ms);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int pipe_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct pipe_wl *p = wl->priv;
	const char *spec = wl->description;
	char why[384];
	int w = 0;
	if (p->pid <= 0 && !p->dead[0]) {
		int rc = pipe_prepare(wl, err);
		if (rc)
			return rc;
	}
	if (p->dead[0])
		return ergon_err_set(err, ERGON_EIO, "--workload %s: %s", spec, p->dead);
	uint64_t seq = ++p->seq;
	/* Nothing may be waiting before a request: unrequested output (a start
	 * banner, a second reply) would be taken for the next reply, and every
	 * later latency would be off by one request while all still say ok. */
	struct pollfd pre = {.fd = p->fd, .events = POLLIN};
	if (poll(&pre, 1, 0) > 0) {
		char junk[32];
		ssize_t n = recv(p->fd, junk, sizeof(junk), MSG_DONTWAIT | MSG_PEEK);
		if (n == 0) {
			pipe_reap_after_eof(p, seq);
			return ergon_err_set(err, ERGON_EIO, "--workload %s: %s", spec, p->dead);
		}
		if (n > 0) {
			size_t shown = 0;
			char txt[sizeof(junk) + 1];
			for (ssize_t i = 0; i < n && junk[i] != '\n'; i++)
				txt[shown++] = (junk[i] >= 0x20 && junk[i] < 0x7f) ? junk[i] : '?';
			txt[shown] = '\0';
			snprintf(
			    why, sizeof(why),
			    "the child wrote unrequested output before request %llu ('%s...'); the "
			    "child was stopped: write only reply lines to stdout, diagnostics to "
			    "stderr",
			    (unsigned long long)seq, txt);
			pipe_kill(p, why);
			return ergon_err_set(err, ERGON_EPARSE, "--workload %s: %s", spec, why);
		}
	}
	double deadline = p->timeout_s > 0 ? ergon_wl_now_s() + p->timeout_s : 0;
	char req[40];
	int reqlen = snprintf(req, sizeof(req), "invoke %llu\n", (unsigned long long)seq);
	size_t off = 0;
	while (off < (size_t)reqlen) {
		w = wait_fd(p->fd, POLLOUT, deadline, p->stop);
		if (w <= 0)
			goto wait_failed;
		/* MSG_NOSIGNAL: a dead child must give EPIPE, not kill ergon with
		 * SIGPIPE. */
		ssize_t n =
		    send(p->fd, req + off, (size_t)reqlen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			pipe_reap_after_eof(p, seq);
			return ergon_err_set(err, ERGON_EIO, "--workload %s: %s", spec, p->dead);
		}
		off += (size_t)n;
	}
	size_t len = 0;
	char *nl = NULL;
	while (nl == NULL) {
		w = wait_fd(p->fd, POLLIN, deadline, p->stop);
		if (w <= 0)
			goto wait_failed;
		ssize_t n = recv(p->fd, p->reply + len, REPLY_MAX - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			pipe_reap_after_eof(p, seq);
			return ergon_err_set(err, ERGON_EIO, "--workload %s: %s", spec, p->dead);
		}
		nl = memchr(p->reply + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl == NULL && len == REPLY_MAX) {
			snprintf(why, sizeof(why),
				 "reply %llu is longer than %d bytes without a newline; the child "
				 "was stopped (the stream can no longer be trusted)",
				 (unsigned long long)seq, REPLY_MAX);
			pipe_kill(p, why);
			return ergon_err_set(err, ERGON_EPARSE, "--workload %s: %s", spec, why);
		}
	}
	if ((size_t)(nl - p->reply) + 1 != len) {
		snprintf(
		    why, sizeof(why),
		    "the child sent more than one line for request %llu; the child was stopped "
		    "(one request, one reply line)",
		    (unsigned long long)seq);
		pipe_kill(p, why);
		return ergon_err_set(err, ERGON_EPARSE, "--workload %s: %s", spec, why);
	}
	*nl = '\0';
	if (memchr(p->reply, '\0', (size_t)(nl - p->reply))) {
		snprintf(why, sizeof(why),
			 "reply %llu holds a NUL byte; replies are text lines ('ok ...' or "
			 "'err ...'); the child was stopped",
			 (unsigned long long)seq);
		pipe_kill(p, why);
		return ergon_err_set(err, ERGON_EPARSE, "--workload %s: %s", spec, why);
	}
	if (nl > p->reply && nl[-1] == '\r')
		nl[-1] = '\0';
	const char *r = p->reply;
	if (strcmp(r, "ok") == 0 || strncmp(r, "ok ", 3) == 0)
		return 0;
	if (strcmp(r, "err") == 0 || strncmp(r, "err ", 4) == 0)
		return ergon_err_set(err, ERGON_EIO,
				     "--workload %s: invocation %llu failed: %.200s", spec,
				     (unsigned long long)seq, r);
	/* Anything else may be output that was not a reply (a banner, a log
	 * line): the stream can no longer be matched to requests, so the child
	 * goes, as for every other protocol error. */
	snprintf(why, sizeof(why),
		 "reply %llu '%.80s' is neither 'ok ...' nor 'err ...'; the child was stopped "
		 "(see docs/internals/workloads.md for the protocol)",
		 (unsigned long long)seq, r);
	pipe_kill(p, why);
	return ergon_err_set(err, ERGON_EPARSE, "--workload %s: %s", spec, why);
wait_failed:
	if (w == 0) {
		snprintf(why, sizeof(why),
			 "no reply to invocation %llu within the %g s timeout; the child was "
			 "killed and is not restarted",
			 (unsigned long long)seq, p->timeout_s);
		pipe_kill(p, why);
		return ergon_err_set(err, ERGON_ETIMEDOUT,
				     "--workload %s: %s (raise --invoke-timeout-s if it is merely "
				     "slow)",
				     spec, why);
	}
	if (w == -EINTR) {
		/* Stopped on request: a reply may still be on its way, so the
		 * stream is out of step and the child goes. */
		snprintf(why, sizeof(why),
			 "stopped on request while waiting for reply %llu; the child was killed",
			 (unsigned long long)seq);
		pipe_kill(p, why);
		return ergon_err_set(err, ERGON_EINTR, "--workload %s: %s", spec, why);
	}
	snprintf(why, sizeof(why), "poll failed at invocation %llu: %s; the child was killed",
		 (unsigned long long)seq, strerror(-w));
	pipe_kill(p, why);
	return ergon_err_set(err, ERGON_EIO, "--workload %s: %s", spec, why);
}

static void pipe_teardown(struct ergon_workload *wl)
{
	struct pipe_wl *p = wl->priv;
	if (p->pid <= 0) {
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
		return;
	}
	/* EOF on its stdin is the child's cue to exit; give it a grace period,
	 * then kill the group. Either way it is reaped here. */
	close(p->fd);
	p->fd = -1;
	double until = ergon_wl_now_s() + CLOSE_GRACE_S;
	int status;
	for (;;) {
		if (ergon_wl_try_reap(p->pid, &status))
			break;
		if (ergon_wl_now_s() > until) {
			ergon_wl_kill_reap(p->pid);
			break;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	p->pid = -1;
	snprintf(p->dead, sizeof(p->dead), "the pipe child was stopped by teardown");
}

static void pipe_close(struct ergon_workload *wl)
{
	if (wl->priv == NULL)
		return;
	pipe_teardown(wl);
	free(wl->priv);
	wl->priv = NULL;
}

const struct ergon_workload_driver ergon_workload_pipe = {
    .name = "pipe",
    .longname = "persistent child, one request line and one reply line per invocation",
    .open = pipe_open,
    .prepare = pipe_prepare,
    .invoke = pipe_invoke,
    .teardown = pipe_teardown,
    .close = pipe_close,
};

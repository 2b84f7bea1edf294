/* Process helpers for the command and pipe workload drivers. */
#include "drivers/workloads/wl_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int ergon_wl_argv_split(const char *text, const char *spec, struct ergon_wl_argv *out,
			struct ergon_err *err)
{
	size_t o = 0, i = 0;
	out->argc = 0;
	if (strlen(text) > ERGON_WL_ARGV_BYTES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "--workload %.64s…: the command line is longer than %d bytes; "
				     "put it in a script and run that",
				     spec, ERGON_WL_ARGV_BYTES);
	for (;;) {
		while (text[i] == ' ' || text[i] == '\t')
			i++;
		if (text[i] == '\0')
			break;
		if (out->argc == ERGON_WL_ARGV_MAX)
			return ergon_err_set(
			    err, ERGON_ETOOBIG,
			    "--workload %s: more than %d words; put the command in "
			    "a script and run that",
			    spec, ERGON_WL_ARGV_MAX);
		out->argv[out->argc++] = out->buf + o;
		/* One word: runs of plain, quoted and escaped bytes until a blank.
		 * Each input byte yields at most one output byte, so buf (as long as
		 * the limit on text, plus one NUL per word at the place of a blank
		 * or the end) cannot overflow. */
		while (text[i] != '\0' && text[i] != ' ' && text[i] != '\t') {
			char c = text[i];
			if (c == '\'') {
				size_t start = i++;
				while (text[i] != '\0' && text[i] != '\'')
					out->buf[o++] = text[i++];
				if (text[i] != '\'')
					return ergon_err_set(
					    err, ERGON_EUSAGE,
					    "--workload %s: column %zu: unterminated "
					    "' quote; close it with '",
					    spec, start + 1);
				i++;
			} else if (c == '"') {
				size_t start = i++;
				while (text[i] != '\0' && text[i] != '"') {
					if (text[i] == '\\' &&
					    (text[i + 1] == '"' || text[i + 1] == '\\'))
						i++;
					out->buf[o++] = text[i++];
				}
				if (text[i] != '"')
					return ergon_err_set(
					    err, ERGON_EUSAGE,
					    "--workload %s: column %zu: unterminated "
					    "\" quote; close it with \"",
					    spec, start + 1);
				i++;
			} else if (c == '\\') {
				if (text[i + 1] == '\0')
					return ergon_err_set(
					    err, ERGON_EUSAGE,
					    "--workload %s: column %zu: a backslash "
					    "at the end escapes nothing; remove it or "
					    "write \\\\",
					    spec, i + 1);
				out->buf[o++] = text[i + 1];
				i += 2;
			} else {
				out->buf[o++] = text[i++];
			}
		}
		out->buf[o++] = '\0';
	}
	out->argv[out->argc] = NULL;
	if (out->argc == 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--workload %s: no command given; write e.g. "
				     "command:./infer --once",
				     spec);
	return 0;
}

static int is_exec_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int ergon_wl_program_check(const char *prog, const char *spec, struct ergon_err *err)
{
	if (strchr(prog, '/')) {
		if (is_exec_file(prog))
			return 0;
		return ergon_err_set(
		    err, ERGON_ENOENT,
		    "--workload %s: '%s' is not an executable file; check the path "
		    "and its x permission",
		    spec, prog);
	}
	const char *path = getenv("PATH");
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	char cand[4096];
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		/* An empty PATH element means the current folder (POSIX). */
		int w = n ? snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, prog)
			  : snprintf(cand, sizeof(cand), "./%s", prog);
		if (w > 0 && (size_t)w < sizeof(cand) && is_exec_file(cand))
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return ergon_err_set(err, ERGON_ENOENT,
			     "--workload %s: no program '%s' on PATH; give its path (./%s) or "
			     "install it",
			     spec, prog, prog);
}

int ergon_wl_spawn(const struct ergon_wl_argv *av, int stdin_fd, int stdout_fd, int stderr_fd,
		   const char *spec, pid_t *pid_out, struct ergon_err *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc = 0, e;
	*pid_out = -1;
	e = posix_spawn_file_actions_init(&fa);
	if (e)
		return ergon_err_errno(err, e, "--workload %s: posix_spawn_file_actions_init",
				       spec);
	e = posix_spawnattr_init(&attr);
	if (e) {
		posix_spawn_file_actions_destroy(&fa);
		return ergon_err_errno(err, e, "--workload %s: posix_spawnattr_init", spec);
	}
	/* A new process group so that a timeout can kill the child and
	 * everything it started; default signal dispositions and an empty mask so
	 * the child does not inherit the session's SIGINT handling. */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						POSIX_SPAWN_SETSIGDEF);
	if (!e)
		e = posix_spawnattr_setpgroup(&attr, 0);
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &none);
	if (!e)
		e = posix_spawnattr_setsigdefault(&attr, &all);
	if (!e)
		e = stdin_fd >= 0
			? posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0)
			: posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!e)
		e = stdout_fd >= 0
			? posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1)
			: posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (!e && stderr_fd >= 0)
		e = posix_spawn_file_actions_adddup2(&fa, stderr_fd, 2);
	if (e) {
		rc = ergon_err_errno(err, e, "--workload %s: preparing the spawn", spec);
		goto out;
	}
	pid_t pid;
	e = posix_spawnp(&pid, av->argv[0], &fa, &attr, av->argv, environ);
	if (e) {
		rc = ergon_err_errno(err, e, "--workload %s: cannot run '%s'", spec, av->argv[0]);
		goto out;
	}
	*pid_out = pid;
out:
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static int pidfd_enabled = 1;

int ergon_wl_pidfd_enable(int on)
{
	int was = pidfd_enabled;
	pidfd_enabled = on;
	return was;
}

int ergon_wl_pidfd(pid_t pid)
{
	if (!pidfd_enabled)
		return -1;
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		/* pidfd_open sets no close-on-exec flag by default, but a pidfd
		 * is always O_CLOEXEC (see pidfd_open(2)). */
		return (int)fd;
	}
#else
	(void)pid;
#endif
	return -1;
}

int ergon_wl_kill_reap(pid_t pid)
{
	int status = 0;
	/* The group first (the child and whatever it started), then the child
	 * itself in case it left its group. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

int ergon_wl_try_reap(pid_t pid, int *status)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
		if (errno == EINTR)
			return 0;
		/* ECHILD: nothing to wait for (already reaped elsewhere). */
		*status = 0;
		return 1;
	}
	if (si.si_pid != pid)
		return 0;
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 1;
}

void ergon_wl_status_text(int status, char *buf, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, cap, "ended with wait status 0x%x", (unsigned)status);
}

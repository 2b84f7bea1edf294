/* Child processes for the lifecycle drivers that drive vendor tools
 * (JLinkExe, openocd, qemu-system-arm): run to completion with a time
 * bound, or start in the background and stop later. Output goes to a log
 * file in the stage folder so a failure can be diagnosed afterwards. */
#include "ergon/lifecycle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit status a child uses when exec failed: the program is missing. */
#define EXEC_FAILED 127

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ergon_lifecycle_spawn(const char *const *argv, const char *log_path, int *pid,
			  struct ergon_err *err)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return ergon_err_errno(err, errno, "cannot open the tool log %s", log_path);
	pid_t p = fork();
	if (p < 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "cannot start %s", argv[0]);
	}
	if (p == 0) {
		/* Own process group, so stopping it stops its helpers too. */
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(EXEC_FAILED);
	}
	close(fd);
	*pid = (int)p;
	return 0;
}

int ergon_lifecycle_run_tool_in(const char *const *argv, const char *cwd, const char *log_path,
				double timeout_s, struct ergon_err *err)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return ergon_err_errno(err, errno, "cannot open the tool log %s", log_path);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc) {
		close(fd);
		return ergon_err_errno(err, rc, "cannot start %s", argv[0]);
	}
	rc = posix_spawnattr_init(&at);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		close(fd);
		return ergon_err_errno(err, rc, "cannot start %s", argv[0]);
	}
	/* Own process group (stopping it stops its helpers too); stdin from
	 * /dev/null, stdout and stderr to the log. */
	rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fd, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fd, 2);
	if (!rc && cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, cwd);
	pid_t pid = 0;
	extern char **environ;
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(fd);
	if (rc == ENOENT)
		return ergon_err_set(err, ERGON_ENOENT,
				     "%s: not found on PATH%s%s; install it (docs/USAGE.md lists the "
				     "vendor tools) or put it on PATH",
				     argv[0], cwd ? ", or no folder " : "", cwd ? cwd : "");
	if (rc)
		return ergon_err_errno(err, rc, "cannot start %s", argv[0]);
	double t0 = now_s();
	int status = 0;
	useconds_t nap = 1000;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return ergon_err_errno(err, errno, "waiting for %s", argv[0]);
		if (now_s() - t0 > timeout_s) {
			ergon_lifecycle_stop((int)pid, 1.0);
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "%s did not finish within %.0f s; its output is in %s",
					     argv[0], timeout_s, log_path);
		}
		usleep(nap);
		if (nap < 10000)
			nap *= 2;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ergon_err_set(err, ERGON_EDEVICE,
				     "%s failed (exit status %d); its output is in %s", argv[0],
				     WIFEXITED(status) ? WEXITSTATUS(status) : -1, log_path);
	return 0;
}

void ergon_lifecycle_stop(int pid, double grace_s)
{
	if (pid <= 0)
		return;
	kill(-(pid_t)pid, SIGTERM);
	kill((pid_t)pid, SIGTERM);
	double t0 = now_s();
	for (;;) {
		pid_t r = waitpid((pid_t)pid, NULL, WNOHANG);
		if (r == (pid_t)pid || (r < 0 && errno != EINTR))
			return;
		if (now_s() - t0 > grace_s) {
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
			waitpid((pid_t)pid, NULL, 0);
			return;
		}
		usleep(10000);
	}
}

int ergon_lifecycle_run_tool(const char *const *argv, const char *log_path, double timeout_s,
			     struct ergon_err *err)
{
	return ergon_lifecycle_run_tool_cancel(argv, log_path, timeout_s, NULL, err);
}

int ergon_lifecycle_run_tool_cancel(const char *const *argv, const char *log_path, double timeout_s,
				    const volatile sig_atomic_t *cancel, struct ergon_err *err)
{
	int pid = 0;
	int rc = ergon_lifecycle_spawn(argv, log_path, &pid, err);
	if (rc)
		return rc;
	double t0 = now_s();
	int status = 0;
	for (;;) {
		pid_t r = waitpid((pid_t)pid, &status, WNOHANG);
		if (r == (pid_t)pid)
			break;
		if (r < 0 && errno != EINTR)
			return ergon_err_errno(err, errno, "waiting for %s", argv[0]);
		if (cancel != NULL && *cancel) {
			ergon_lifecycle_stop(pid, 1.0);
			return ergon_err_set(err, ERGON_EINTR,
					     "%s stopped: interrupted (its output so far is in %s)",
					     argv[0], log_path);
		}
		if (now_s() - t0 > timeout_s) {
			ergon_lifecycle_stop(pid, 1.0);
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "%s did not finish within %.0f s; its output is in %s",
					     argv[0], timeout_s, log_path);
		}
		usleep(10000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXEC_FAILED)
		return ergon_err_set(err, ERGON_ENOENT,
				     "%s: not found on PATH; install it (docs/USAGE.md lists the "
				     "vendor tools) or put it on PATH",
				     argv[0]);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ergon_err_set(err, ERGON_EDEVICE,
				     "%s failed (exit status %d); its output is in %s", argv[0],
				     WIFEXITED(status) ? WEXITSTATUS(status) : -1, log_path);
	return 0;
}

/* True when a socket listens on 127.0.0.1/0.0.0.0 (or ::) at port. Read
 * from /proc/net/tcp{,6} rather than by connecting: a probe connection to
 * an RTT server would consume the first bytes of the target's stream. */
static int port_listening(unsigned port)
{
	static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		FILE *f = fopen(tables[t], "re");
		if (f == NULL)
			continue;
		char line[512];
		int found = 0;
		while (!found && fgets(line, sizeof line, f) != NULL) {
			/* "  sl  local_address rem_address   st ..." with
			 * local_address = HEXADDR:HEXPORT and st 0A = LISTEN. */
			char *colon = strchr(line, ':');
			char *local = colon ? colon + 1 : NULL;
			while (local && *local == ' ')
				local++;
			char *pc = local ? strchr(local, ':') : NULL;
			if (pc == NULL)
				continue;
			char *end = NULL;
			unsigned long lp = strtoul(pc + 1, &end, 16);
			if (end == NULL || *end != ' ')
				continue;
			char *rem = end + 1;
			char *st = strchr(rem, ' ');
			if (st && lp == port && strncmp(st + 1, "0A", 2) == 0)
				found = 1;
		}
		fclose(f);
		if (found)
			return 1;
	}
	return 0;
}

/* True (err set, the child reaped) when pid has exited: ENOENT when exec
 * failed (the tool is missing), else EDEVICE "WHAT exited before BEFORE". */
static int child_died(int pid, const char *what, const char *before, const char *log_path,
		      struct ergon_err *err)
{
	int status;
	if (waitpid((pid_t)pid, &status, WNOHANG) != (pid_t)pid)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXEC_FAILED)
		ergon_err_set(err, ERGON_ENOENT,
			      "%s: not found on PATH; install it or put it on PATH (docs/USAGE.md)",
			      what);
	else
		ergon_err_set(err, ERGON_EDEVICE, "%s exited before %s; its output is in %s", what,
			      before, log_path);
	return 1;
}

int ergon_lifecycle_wait_port(unsigned port, int pid, const char *what, const char *log_path,
			      double timeout_s, struct ergon_err *err)
{
	double t0 = now_s();
	for (;;) {
		if (port_listening(port))
			return 0;
		char before[64];
		snprintf(before, sizeof before, "its RTT server listened on port %u", port);
		if (child_died(pid, what, before, log_path, err))
			return err->code;
		if (now_s() - t0 > timeout_s)
			return ergon_err_set(
			    err, ERGON_ETIMEDOUT,
			    "%s: no RTT server on 127.0.0.1:%u within %.0f s; check "
			    "the probe connection; output in %s",
			    what, port, timeout_s, log_path);
		usleep(50000);
	}
}

/* The socket inodes of pid's open files, at most cap. */
static size_t socket_inodes(int pid, unsigned long *ino, size_t cap)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while (n < cap && (e = readdir(d)) != NULL) {
		char path[128], target[64];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%.32s", dir, e->d_name);
		ssize_t k = readlink(path, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = '\0';
		if (strncmp(target, "socket:[", 8) != 0)
			continue;
		char *end = NULL;
		unsigned long v = strtoul(target + 8, &end, 10);
		if (end != NULL && *end == ']')
			ino[n++] = v;
	}
	closedir(d);
	return n;
}

/* The port of a LISTEN entry of /proc/net/tcp whose inode is in ino; 0
 * when none. Line: "sl: local rem st tx:rx tr:tm retrnsmt uid timeout
 * inode ...", local = HEXADDR:HEXPORT, st 0A = LISTEN. */
static unsigned listening_port_of(const unsigned long *ino, size_t nino, unsigned skip)
{
	FILE *f = fopen("/proc/net/tcp", "re");
	if (f == NULL)
		return 0;
	char line[512];
	unsigned found = 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		char *tok[10];
		size_t nt = 0;
		char *save = NULL;
		for (char *t = strtok_r(line, " \n", &save); t != NULL && nt < 10;
		     t = strtok_r(NULL, " \n", &save))
			tok[nt++] = t;
		if (nt < 10 || strcmp(tok[3], "0A") != 0)
			continue;
		char *pc = strchr(tok[1], ':');
		char *end = NULL;
		unsigned long in = strtoul(tok[9], &end, 10);
		if (pc == NULL || end == NULL || *end != '\0')
			continue;
		unsigned port = (unsigned)strtoul(pc + 1, NULL, 16);
		for (size_t i = 0; i < nino; i++)
			if (ino[i] == in && port != skip)
				found = port;
	}
	fclose(f);
	return found;
}

int ergon_lifecycle_listen_port(int pid, unsigned skip_port, const char *what, const char *log_path,
				double timeout_s, unsigned *port, struct ergon_err *err)
{
	double t0 = now_s();
	*port = 0;
	for (;;) {
		unsigned long ino[64];
		size_t n = socket_inodes(pid, ino, sizeof ino / sizeof ino[0]);
		unsigned p = n ? listening_port_of(ino, n, skip_port) : 0;
		if (p) {
			*port = p;
			return 0;
		}
		if (child_died(pid, what, "it listened on a TCP port", log_path, err))
			return err->code;
		if (now_s() - t0 > timeout_s)
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "%s did not listen on a TCP port within %.0f s; its "
					     "output is in %s",
					     what, timeout_s, log_path);
		usleep(20000);
	}
}

int ergon_lifecycle_parse_hostport(const char *hp, char *host, size_t cap, unsigned *port)
{
	const char *c = strrchr(hp, ':');
	size_t hl = c ? (size_t)(c - hp) : 0;
	char *end = NULL;
	unsigned long p = c ? strtoul(c + 1, &end, 10) : 0;
	if (hl == 0 || hl >= cap || end == NULL || end == c + 1 || *end || p == 0 || p > 65535)
		return -1;
	memcpy(host, hp, hl);
	host[hl] = '\0';
	*port = (unsigned)p;
	return 0;
}

/* Private process helpers shared by the command and pipe workload drivers:
 * argv splitting, program lookup, spawning in a new process group, waiting
 * with a deadline, killing the group and reaping. */
#ifndef ERGON_WL_PROC_H
#define ERGON_WL_PROC_H

#include "ergon/error.h"

#include <stddef.h>
#include <sys/types.h>

#define ERGON_WL_ARGV_MAX 256	 /* words in one command line */
#define ERGON_WL_ARGV_BYTES 8192 /* bytes of one command line */

struct ergon_wl_argv {
	char *argv[ERGON_WL_ARGV_MAX + 1]; /* NULL-terminated, pointing into buf */
	size_t argc;
	char buf[ERGON_WL_ARGV_BYTES + 1];
};

/* Split text into words (rules in docs/internals/workloads.md: blanks
 * separate, '...' is literal, "..." honours \" and \\, a backslash outside
 * quotes escapes the next byte). spec names the input in messages. */
int ergon_wl_argv_split(const char *text, const char *spec, struct ergon_wl_argv *out,
			struct ergon_err *err);

/* Check that argv[0] names an executable (directly when it holds '/',
 * otherwise on $PATH), so that a typo fails before any measurement. */
int ergon_wl_program_check(const char *prog, const char *spec, struct ergon_err *err);

/* Spawn argv in a new process group (its pgid is its pid). stdin_fd and
 * stdout_fd are dup'ed onto 0 and 1 (-1 = /dev/null); stderr_fd onto 2
 * (-1 = inherit). *pid_out is the child. */
int ergon_wl_spawn(const struct ergon_wl_argv *av, int stdin_fd, int stdout_fd, int stderr_fd,
		   const char *spec, pid_t *pid_out, struct ergon_err *err);

/* Open a descriptor that polls readable when pid exits (pidfd), or -1 when
 * the kernel has none (then callers fall back to short waits). */
int ergon_wl_pidfd(pid_t pid);
/* Tests only: 0 makes ergon_wl_pidfd answer -1, so that the fallback path
 * (kernels before 5.3) is exercised too. Returns the previous setting. */
int ergon_wl_pidfd_enable(int on);

/* Kill the child's whole process group with SIGKILL and reap the child
 * (blocking; SIGKILL cannot be ignored so this returns promptly). Returns
 * the wait status. */
int ergon_wl_kill_reap(pid_t pid);

/* If pid has exited: kill what is left of its process group, reap it,
 * store its wait status and return 1. Return 0 while it still runs. The
 * group is killed before the reap, while the zombie still pins the pid, so
 * the group id cannot have been reused by then. */
int ergon_wl_try_reap(pid_t pid, int *status);

/* Describe a wait status: "exited with status 3", "killed by signal 11
 * (Segmentation fault)". */
void ergon_wl_status_text(int status, char *buf, size_t cap);

#endif

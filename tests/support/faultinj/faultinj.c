/* Fault-injection shim (LD_PRELOAD) in the style of curl's torture mode and
 * nanopb's io_errors: count every allocation and every write-side file
 * call, and make the Nth fail. docs/RELIABILITY.md ("Fault injection").
 *
 * Environment:
 *   FAULTINJ_ARM=NAME    start counting when the process names a thread NAME
 *                        (prctl PR_SET_NAME; ergon run names its report
 *                        phase "ergon-report"); FAULTINJ_ARM=main: from the
 *                        entry of main() (after the C library and every
 *                        constructor ran); unset: count from the start
 *   FAULTINJ_FAIL_AT=N   fail the Nth counted call (1-based); 0/unset: count only
 *   FAULTINJ_KINDS=alloc,write   what is counted (default both)
 *   FAULTINJ_REPORT=FILE at exit, write to FILE:
 *                          calls N          the counted calls
 *                          failed NAME      the call made to fail (- none)
 *                          fault_phase P    the phase it failed in
 *                          exit_phase Q     the last phase the process reached
 *                        (a phase is the last thread name set, "main" before
 *                        any: the walk tells "failed before measuring" from
 *                        "lost what it measured" with them)
 *   FAULTINJ_TRACE=FILE  append "N NAME PHASE" for every counted call
 *   FAULTINJ_KILL=1      instead of failing the Nth call, write the report
 *                        and kill the process (SIGKILL) just before it: a
 *                        power cut or kill -9 at that exact point
 *
 * setlocale is counted as one allocation-kind call ("setlocale"), and the
 * C library's locale code under it is not counted at all: when its call is
 * the one to fail, the shim returns NULL (ENOMEM) without entering glibc,
 * which is the failure a program must survive; otherwise glibc's
 * setlocale runs with counting suspended on that thread, so no fault is
 * ever injected inside it. glibc leaks on some of its own failed
 * allocations there (5 bytes from _nl_normalize_codeset), a leak that is
 * not the program's and that LeakSanitizer could only be told to ignore
 * by function name, which needs libc's debug symbols (issue 38).
 *
 * A failed allocation returns NULL with ENOMEM; a failed write-side call
 * returns -1 (or the error number for posix_fallocate) with ENOSPC for
 * data, EIO for flush and close, ENOSPC for open/link/rename/mkdir,
 * ENOLCK for flock. Only the Nth call
 * fails: the code's retries and fallbacks then succeed, which is what
 * "one fault at a time" tests.
 *
 * With AddressSanitizer the shim sits before libasan (set
 * ASAN_OPTIONS=verify_asan_link_order=0): its malloc forwards to ASan's,
 * so the sanitizer still sees every allocation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int armed = -1; /* -1 not initialised */
static int count_alloc = 1, count_write = 1;
static unsigned long fail_at;
static unsigned long calls;
static char failed_name[32];
static char report_path[512];
static char arm_name[32];
static char phase[32] = "main";
static char fault_phase[32] = "-";
static char trace_path[512];
static int trace_fd = -1;
/* > 0 while this thread is inside a call whose own calls are not counted
 * (setlocale). Initial-exec: the shim is preloaded, so its TLS is static
 * and reading it never allocates. */
static __thread int suspended __attribute__((tls_model("initial-exec")));
static int kill_mode;

/* dlsym may allocate: serve that from a static arena, never freed. */
static char arena[8192];
static size_t arena_used;
static int resolving;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

static void resolve_alloc(void)
{
	if (real_malloc)
		return;
	resolving = 1;
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

extern char **environ;

static void init(void)
{
	if (armed >= 0)
		return;
	/* Sanitizer runtimes call in (prctl, malloc) before the C library
	 * has set up the environment: decide only once it is there. */
	if (environ == NULL)
		return;
	const char *a = getenv("FAULTINJ_ARM");
	const char *n = getenv("FAULTINJ_FAIL_AT");
	const char *k = getenv("FAULTINJ_KINDS");
	const char *r = getenv("FAULTINJ_REPORT");
	if (n) {
		char *end = NULL;
		fail_at = strtoul(n, &end, 10);
	}
	if (k) {
		count_alloc = strstr(k, "alloc") != NULL;
		count_write = strstr(k, "write") != NULL;
	}
	if (r)
		snprintf(report_path, sizeof(report_path), "%s", r);
	const char *t = getenv("FAULTINJ_TRACE");
	if (t)
		snprintf(trace_path, sizeof(trace_path), "%s", t);
	const char *kl = getenv("FAULTINJ_KILL");
	kill_mode = kl && strcmp(kl, "1") == 0;
	if (a && strcmp(a, "main") == 0) {
		armed = 0; /* main_armed below arms it */
	} else if (a && a[0]) {
		snprintf(arm_name, sizeof(arm_name), "%s", a);
		armed = 0;
	} else {
		armed = 1;
	}
}

static void report(void);

/* 1 when this call is the one to fail (in kill mode it never returns). */
static int hit(const char *name, int is_alloc)
{
	if (armed < 0)
		init();
	if (armed != 1 || (is_alloc ? !count_alloc : !count_write) || suspended)
		return 0;
	unsigned long c = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
	if (trace_path[0]) {
		/* Raw syscalls: the trace must not count (or allocate) itself. */
		if (trace_fd < 0)
			trace_fd = (int)syscall(SYS_openat, AT_FDCWD, trace_path,
						O_WRONLY | O_CREAT | O_APPEND, 0644);
		char line[96];
		int len = snprintf(line, sizeof(line), "%lu %s %s\n", c, name, phase);
		if (trace_fd >= 0 && len > 0)
			syscall(SYS_write, trace_fd, line, (size_t)len);
	}
	if (fail_at == 0 || c != fail_at)
		return 0;
	snprintf(failed_name, sizeof(failed_name), "%s", name);
	snprintf(fault_phase, sizeof(fault_phase), "%s", phase);
	if (kill_mode) {
		/* The report first (no destructor runs after SIGKILL). */
		report();
		syscall(SYS_kill, (pid_t)syscall(SYS_getpid), SIGKILL);
	}
	return 1;
}

__attribute__((destructor)) static void report(void)
{
	if (report_path[0] == '\0')
		return;
	/* Raw syscalls: stdio may be gone, and our own write is counted. */
	int fd =
	    (int)syscall(SYS_openat, AT_FDCWD, report_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	char buf[192];
	int len =
	    snprintf(buf, sizeof(buf), "calls %lu\nfailed %s\nfault_phase %s\nexit_phase %s\n",
		     calls, failed_name[0] ? failed_name : "-", fault_phase, phase);
	if (len > 0)
		syscall(SYS_write, fd, buf, (size_t)len);
	syscall(SYS_close, fd);
}

#define REAL(ret, name, ...)                    \
	static ret (*real_##name)(__VA_ARGS__); \
	if (real_##name == NULL)                \
	real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
		      a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (armed < 0)
		init();
	if (option == PR_SET_NAME && a2) {
		if (armed == 0 && arm_name[0] &&
		    strncmp((const char *)a2, arm_name, sizeof(arm_name)) == 0)
			armed = 1;
		snprintf(phase, sizeof(phase), "%.15s", (const char *)a2);
	}
	return (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
}

/* FAULTINJ_ARM=main: __libc_start_main calls main_armed instead of the
 * program's main; it arms the counter and calls main. */
static int (*program_main)(int, char **, char **);

static int main_armed(int argc, char **argv, char **envp)
{
	if (armed < 0)
		init();
	const char *a = getenv("FAULTINJ_ARM");
	if (armed == 0 && a && strcmp(a, "main") == 0)
		armed = 1;
	return program_main(argc, argv, envp);
}

typedef int (*start_main_fn)(int (*)(int, char **, char **), int, char **, void (*)(void),
			     void (*)(void), void (*)(void), void *);

EXPORT int __libc_start_main(int (*m)(int, char **, char **), int argc, char **argv,
			     void (*ini)(void), void (*fini)(void), void (*rtld_fini)(void),
			     void *stack_end)
{
	start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	program_main = m;
	return real(main_armed, argc, argv, ini, fini, rtld_fini, stack_end);
}

EXPORT void *malloc(size_t n)
{
	if (resolving) {
		size_t at = (arena_used + 15) & ~(size_t)15;
		if (at + n > sizeof(arena))
			return NULL;
		arena_used = at + n;
		return arena + at;
	}
	resolve_alloc();
	if (hit("malloc", 1)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_malloc(n);
}

EXPORT void *calloc(size_t m, size_t n)
{
	if (resolving) {
		void *p = malloc(m * n);
		if (p)
			memset(p, 0, m * n);
		return p;
	}
	resolve_alloc();
	if (hit("calloc", 1)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_calloc(m, n);
}

EXPORT void *realloc(void *p, size_t n)
{
	resolve_alloc();
	if (hit("realloc", 1)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_realloc(p, n);
}

EXPORT void free(void *p)
{
	if ((char *)p >= arena && (char *)p < arena + sizeof(arena))
		return;
	resolve_alloc();
	real_free(p);
}

/* setlocale: one counted call, and nothing counted inside it (see the
 * top). A query (locale NULL) is not counted: it changes nothing. */
EXPORT char *setlocale(int category, const char *locale)
{
	if (locale != NULL && hit("setlocale", 1)) {
		errno = ENOMEM;
		return NULL;
	}
	suspended++;
	static char *(*real_setlocale)(int, const char *);
	if (real_setlocale == NULL)
		real_setlocale = (char *(*)(int, const char *))dlsym(RTLD_NEXT, "setlocale");
	char *r = real_setlocale(category, locale);
	suspended--;
	return r;
}

/* A wrapper that fails with errno e when its call is the Nth. */
#define WRAP(ret, name, e, params, args, ...) \
	EXPORT ret name params                \
	{                                     \
		REAL(ret, name, __VA_ARGS__); \
		if (hit(#name, 0)) {          \
			errno = e;            \
			return -1;            \
		}                             \
		return real_##name args;      \
	}

WRAP(ssize_t, write, ENOSPC, (int fd, const void *b, size_t n), (fd, b, n), int, const void *,
     size_t)
WRAP(ssize_t, pwrite, ENOSPC, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o), int,
     const void *, size_t, off_t)
WRAP(ssize_t, pwrite64, ENOSPC, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o), int,
     const void *, size_t, off_t)
WRAP(ssize_t, writev, ENOSPC, (int fd, const struct iovec *v, int n), (fd, v, n), int,
     const struct iovec *, int)
WRAP(int, fsync, EIO, (int fd), (fd), int)
WRAP(int, fdatasync, EIO, (int fd), (fd), int)
WRAP(int, ftruncate, EIO, (int fd, off_t len), (fd, len), int, off_t)
WRAP(int, ftruncate64, EIO, (int fd, off_t len), (fd, len), int, off_t)
WRAP(int, fchmod, EIO, (int fd, mode_t m), (fd, m), int, mode_t)
WRAP(int, link, ENOSPC, (const char *a, const char *b), (a, b), const char *, const char *)
WRAP(int, rename, ENOSPC, (const char *a, const char *b), (a, b), const char *, const char *)
WRAP(int, mkostemp, ENOSPC, (char *t, int flags), (t, flags), char *, int)
WRAP(int, mkstemp, ENOSPC, (char *t), (t), char *)

WRAP(int, mkdir, ENOSPC, (const char *p, mode_t m), (p, m), const char *, mode_t)
WRAP(int, flock, ENOLCK, (int fd, int op), (fd, op), int, int)

/* close() of a file open for writing can report a late write error (EIO
 * on NFS, ENOSPC on a quota); the descriptor is closed either way, as on
 * Linux. Closing a read-only descriptor is not a write-side call. */
EXPORT int close(int fd)
{
	REAL(int, close, int);
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && hit("close", 0)) {
		real_close(fd);
		errno = EIO;
		return -1;
	}
	return real_close(fd);
}

/* posix_fallocate returns the error number instead of setting errno. */
EXPORT int posix_fallocate(int fd, off_t o, off_t n)
{
	REAL(int, posix_fallocate, int, off_t, off_t);
	if (hit("posix_fallocate", 0))
		return ENOSPC;
	return real_posix_fallocate(fd, o, n);
}

EXPORT int posix_fallocate64(int fd, off_t o, off_t n)
{
	REAL(int, posix_fallocate64, int, off_t, off_t);
	if (hit("posix_fallocate64", 0))
		return ENOSPC;
	return real_posix_fallocate64(fd, o, n);
}

/* Opening for writing is a write-side call (creating OUT.partial). */
static int opens_for_write(int flags)
{
	return (flags & (O_WRONLY | O_RDWR | O_CREAT)) != 0;
}

#define WRAP_OPEN(name)                                        \
	EXPORT int name(const char *path, int flags, ...)      \
	{                                                      \
		REAL(int, name, const char *, int, ...);       \
		mode_t mode = 0;                               \
		if (flags & (O_CREAT | O_TMPFILE)) {           \
			va_list ap;                            \
			va_start(ap, flags);                   \
			mode = (mode_t)va_arg(ap, int);        \
			va_end(ap);                            \
		}                                              \
		if (opens_for_write(flags) && hit(#name, 0)) { \
			errno = ENOSPC;                        \
			return -1;                             \
		}                                              \
		return real_##name(path, flags, mode);         \
	}

WRAP_OPEN(open)
WRAP_OPEN(open64)

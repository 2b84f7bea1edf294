#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *ts_strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

char *ts_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = ts_strf("%s/ergon-test-XXXXXX", base && base[0] ? base : "/tmp");
	if (tmpl == NULL || mkdtemp(tmpl) == NULL) {
		free(tmpl);
		return NULL;
	}
	return tmpl;
}

void ts_tmpdir_remove(const char *dir)
{
	if (dir == NULL || strncmp(dir, "/tmp/", 5) != 0 || strstr(dir, "ergon-test-") == NULL)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

char *ts_fixture(const char *rel)
{
	const char *shared = getenv("ERGON_SHARED_DIR");
	char *path = ts_strf("%s/fixtures/%s", shared ? shared : "../shared", rel);
	/* A missing fixtures folder is a set-up problem, not a failed
	 * assertion somewhere later: say which path and how to point at it. */
	if (access(path, F_OK) != 0) {
		char *dir = ts_strf("%s/fixtures", shared ? shared : "../shared");
		if (access(dir, F_OK) != 0)
			fail_msg("shared fixtures not found: %s does not exist; clone the shared "
				 "fixtures beside the checkout (../shared) or configure with "
				 "-DERGON_SHARED_DIR=/path/to/shared (the tests read "
				 "ERGON_SHARED_DIR)",
				 dir);
		free(dir);
	}
	return path;
}

char *ts_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (buf == NULL)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int ts_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	size_t w = fwrite(data, 1, len, f);
	return (fclose(f) == 0 && w == len) ? 0 : -1;
}

static char *slurp_fd(int fd)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	if (buf == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return buf;
}

int ts_run_ergon_argv(char **out, char **errout, const char *const *argv)
{
	const char *bin = getenv("ERGON_BIN");
	if (bin == NULL)
		return -1;
	char outtmpl[] = "/tmp/ergon-out-XXXXXX", errtmpl[] = "/tmp/ergon-err-XXXXXX";
	int ofd = mkstemp(outtmpl), efd = mkstemp(errtmpl);
	if (ofd < 0 || efd < 0)
		return -1;
	unlink(outtmpl);
	unlink(errtmpl);
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = calloc(n + 2, sizeof(char *));
	av[0] = (char *)bin;
	for (size_t i = 0; i < n; i++)
		av[i + 1] = (char *)argv[i];
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(bin, av);
		_exit(127);
	}
	free(av);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	lseek(ofd, 0, SEEK_SET);
	lseek(efd, 0, SEEK_SET);
	if (out)
		*out = slurp_fd(ofd);
	if (errout)
		*errout = slurp_fd(efd);
	close(ofd);
	close(efd);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

int ts_run_ergon(char **out, char **errout, const char *arg0, ...)
{
	const char *argv[128];
	size_t n = 0;
	va_list ap;
	va_start(ap, arg0);
	for (const char *a = arg0; a && n < 127; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return ts_run_ergon_argv(out, errout, argv);
}

int ts_make_short_report(const char *path)
{
	char *err = NULL;
	int rc = ts_run_ergon(NULL, &err, "run", "--device", "d", "--workload",
			      "builtin:spin,iters=20000", "--idle-s", "0.2", "--windows", "2",
			      "--window-s", "0.2", "--sample-hz", "500", "--out", path, NULL);
	if (rc != 0)
		fprintf(stderr, "setup run failed (%d): %s\n", rc, err ? err : "");
	free(err);
	return rc;
}

/* The index-th comma-separated field of line [p, end): start and length. */
static int csv_nth(const char *p, const char *end, int index, const char **f, size_t *n)
{
	for (int i = 0; p <= end; i++) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *e = c ? c : end;
		if (i == index) {
			*f = p;
			*n = (size_t)(e - p);
			return 0;
		}
		if (c == NULL)
			break;
		p = c + 1;
	}
	return -1;
}

char *ts_csv_cell(const char *csv, const char *row, const char *col)
{
	const char *hend = strchr(csv, '\n');
	if (hend == NULL)
		return NULL;
	int ci = -1;
	const char *f;
	size_t n;
	for (int i = 0; csv_nth(csv, hend, i, &f, &n) == 0; i++)
		if (n == strlen(col) && strncmp(f, col, n) == 0) {
			ci = i;
			break;
		}
	if (ci < 0)
		return NULL;
	for (const char *l = hend + 1; *l; ) {
		const char *le = strchr(l, '\n');
		if (le == NULL)
			le = l + strlen(l);
		if (csv_nth(l, le, 0, &f, &n) == 0 && n == strlen(row) && strncmp(f, row, n) == 0) {
			if (csv_nth(l, le, ci, &f, &n) != 0)
				return NULL;
			char *out = malloc(n + 1);
			if (out) {
				memcpy(out, f, n);
				out[n] = '\0';
			}
			return out;
		}
		l = *le ? le + 1 : le;
	}
	return NULL;
}

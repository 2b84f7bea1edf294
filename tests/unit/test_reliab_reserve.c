/* Output reservation (include/ergon/reserve.h): space and lock claimed
 * before measuring, commit, the rescue path when the commit fails, and the
 * stale temporary-file scan. */
#include "ergon/fileio.h"
#include "ergon/reserve.h"
#include "test_support.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files in dir whose name starts with prefix. */
static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void reserve_commit_places_the_data(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	assert_int_equal(ergon_out_reserve(&s, path, 100000, 0, &err), 0);
	/* The space is taken now: the temporary file already has it. */
	assert_int_equal(file_size(s.tmp), 100000);
	assert_int_equal(count_prefix(dir, ".r.json.ergon-lock"), 1);
	assert_int_equal(ergon_out_commit(&s, "{\"a\": 1}\n", 9, &err), 0);
	ergon_out_release(&s);
	char *got = ts_read_file(path, NULL);
	assert_string_equal(got, "{\"a\": 1}\n");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* Nothing else is left: no temporary file, no lock file. */
	assert_int_equal(count_prefix(dir, ".ergon-tmp-"), 0);
	assert_int_equal(count_prefix(dir, ".r.json"), 0);
	free(got);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void second_reservation_is_refused(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	char *other = ts_strf("%s/./r.json", dir); /* another spelling, same file */
	struct ergon_out_slot a, b;
	struct ergon_err err = {0};
	assert_int_equal(ergon_out_reserve(&a, path, 4096, 0, &err), 0);
	assert_int_equal(ergon_out_reserve(&b, other, 4096, 0, &err), ERGON_EREFUSED);
	assert_non_null(strstr(err.msg, "is writing this output"));
	char pid[32];
	snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
	assert_non_null(strstr(err.msg, pid));
	ergon_out_release(&b);
	/* The refused one left nothing of its own; the first still holds. */
	assert_int_equal(count_prefix(dir, ".ergon-tmp-"), 1);
	ergon_out_release(&a);
	ergon_err_clear(&err);
	assert_int_equal(ergon_out_reserve(&b, other, 4096, 0, &err), 0);
	ergon_out_release(&b);
	assert_int_equal(count_prefix(dir, ".ergon-tmp-"), 0);
	free(path);
	free(other);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void commit_keeps_data_in_partial_when_output_appeared(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	char *partial = ts_strf("%s/r.json.partial", dir);
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	assert_int_equal(ergon_out_reserve(&s, path, 4096, 0, &err), 0);
	assert_int_equal(ts_write_file(path, "someone else", 12), 0);
	assert_int_equal(ergon_out_commit(&s, "measured", 8, &err), ERGON_EEXIST);
	ergon_out_release(&s);
	assert_string_equal(s.kept_path, partial);
	assert_non_null(strstr(err.msg, "kept in"));
	assert_non_null(strstr(err.msg, partial));
	char *got = ts_read_file(partial, NULL);
	assert_string_equal(got, "measured");
	free(got);
	got = ts_read_file(path, NULL);
	assert_string_equal(got, "someone else"); /* never replaced without force */
	free(got);
	assert_int_equal(count_prefix(dir, ".ergon-tmp-"), 0);
	free(path);
	free(partial);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Issue 30, case 2: --force replaces only regular files. A FIFO that takes
 * the output's name while measuring is not replaced by the commit (the
 * data is kept in OUT.partial), and one there before is refused by the
 * reservation and by the plain atomic write, as is a symbolic link; a
 * regular file is replaced. (Device nodes: functional/test_reliab_force_nodes,
 * which runs as root.) */
static void force_replaces_only_regular_files(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	char *partial = ts_strf("%s/r.json.partial", dir);
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	assert_int_equal(ergon_out_reserve(&s, path, 4096, ERGON_WRITE_FORCE, &err), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(ergon_out_commit(&s, "measured", 8, &err), ERGON_EEXIST);
	ergon_out_release(&s);
	assert_non_null(
	    strstr(err.msg, "is a FIFO (named pipe); --force replaces only regular files"));
	assert_non_null(strstr(err.msg, partial));
	char *got = ts_read_file(partial, NULL);
	assert_string_equal(got, "measured");
	free(got);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* Refused before measuring, by the reservation and the plain write. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_out_reserve(&s, path, 4096, ERGON_WRITE_FORCE, &err), ERGON_EEXIST);
	assert_non_null(strstr(err.msg, "is a FIFO"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_file_write_atomic(path, "x", 1, ERGON_WRITE_FORCE, &err),
			 ERGON_EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* A link is judged as itself: rename would replace the link. */
	char *target = ts_strf("%s/target", dir), *link = ts_strf("%s/l.json", dir);
	assert_int_equal(ts_write_file(target, "keep", 4), 0);
	assert_int_equal(symlink(target, link), 0);
	ergon_err_clear(&err);
	assert_int_equal(ergon_file_write_atomic(link, "x", 1, ERGON_WRITE_FORCE, &err),
			 ERGON_EEXIST);
	assert_non_null(strstr(err.msg, "is a symbolic link"));
	/* A regular file is what --force replaces. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_file_write_atomic(target, "new", 3, ERGON_WRITE_FORCE, &err), 0);
	got = ts_read_file(target, NULL);
	assert_string_equal(got, "new");
	free(got);
	free(target);
	free(link);
	free(path);
	free(partial);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void commit_falls_back_to_tmpdir(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *tdir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	char *partial = ts_strf("%s/r.json.partial", dir);
	char *old_tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	assert_int_equal(ergon_out_reserve(&s, path, 4096, 0, &err), 0);
	assert_int_equal(ts_write_file(path, "x", 1), 0);
	assert_int_equal(ts_write_file(partial, "earlier rescue", 14), 0);
	setenv("TMPDIR", tdir, 1);
	assert_int_equal(ergon_out_commit(&s, "measured", 8, &err), ERGON_EEXIST);
	if (old_tmpdir)
		setenv("TMPDIR", old_tmpdir, 1);
	else
		unsetenv("TMPDIR");
	ergon_out_release(&s);
	char *prefix = ts_strf("%s/ergon-rescue-", tdir);
	assert_memory_equal(s.kept_path, prefix, strlen(prefix));
	char *got = ts_read_file(s.kept_path, NULL);
	assert_string_equal(got, "measured");
	free(got);
	got = ts_read_file(partial, NULL);
	assert_string_equal(got, "earlier rescue"); /* an earlier rescue is kept too */
	free(got);
	free(prefix);
	free(old_tmpdir);
	free(path);
	free(partial);
	ts_tmpdir_remove(dir);
	ts_tmpdir_remove(tdir);
	free(dir);
	free(tdir);
}

/* A folder that cannot hold the reservation: the file-size limit stands in
 * for a full disk (posix_fallocate fails the same way, before measuring). */
static void reservation_fails_when_space_is_missing(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	struct rlimit old, small = {.rlim_cur = 65536, .rlim_max = 0};
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	int rc = ergon_out_reserve(&s, path, 1 << 20, 0, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(err.msg, "cannot reserve 1048576 bytes"));
	assert_non_null(strstr(err.msg, "before measuring"));
	ergon_out_release(&s);
	assert_int_equal(count_prefix(dir, ".ergon-tmp-"), 0);
	assert_int_equal(count_prefix(dir, ".r.json"), 0);
	assert_int_equal(count_prefix(dir, "r.json"), 0);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void unusable_paths_fail_at_reserve(void **state)
{
	(void)state;
	struct ergon_out_slot s;
	struct ergon_err err = {0};
	assert_int_not_equal(ergon_out_reserve(&s, "/proc/x.json", 4096, 0, &err), 0);
	assert_non_null(strstr(err.msg, "/proc/x.json"));
	ergon_out_release(&s);
	ergon_err_clear(&err);
	assert_int_equal(ergon_out_reserve(&s, "", 4096, 0, &err), ERGON_EUSAGE);
	ergon_out_release(&s);
}

struct stale_seen {
	int n, removed, with_data;
	long long size;
	char name[64];
};

static void on_stale(void *ctx, const char *file, long long size, int has_data, int removed)
{
	struct stale_seen *st = ctx;
	st->n++;
	st->with_data += has_data;
	st->removed += removed;
	st->size = size;
	snprintf(st->name, sizeof(st->name), "%s", file);
}

static void stale_temp_files_are_found_and_removed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.json", dir);
	char *stale = ts_strf("%s/.ergon-tmp-Ab12Cd", dir);
	char *notours = ts_strf("%s/.ergon-tmp-toolongname", dir);
	assert_int_equal(ts_write_file(stale, "{\"complete\": true}\n", 19), 0);
	assert_int_equal(ts_write_file(notours, "x", 1), 0);
	/* A live reservation in the same folder is not stale. */
	struct ergon_out_slot live;
	struct ergon_err err = {0};
	char *other = ts_strf("%s/live.json", dir);
	assert_int_equal(ergon_out_reserve(&live, other, 4096, 0, &err), 0);
	struct stale_seen seen = {0};
	assert_int_equal(ergon_out_scan_stale(path, 0, on_stale, &seen, &err), 1);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.removed, 0);
	assert_int_equal(seen.size, 19);
	assert_int_equal(seen.with_data, 1);
	assert_string_equal(seen.name, ".ergon-tmp-Ab12Cd");
	assert_int_equal(access(stale, F_OK), 0); /* reported, not touched */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(ergon_out_scan_stale(path, 1, on_stale, &seen, &err), 1);
	assert_int_equal(seen.removed, 1);
	assert_int_not_equal(access(stale, F_OK), 0);
	assert_int_equal(access(live.tmp, F_OK), 0); /* the live one stays */
	assert_int_equal(access(notours, F_OK), 0);
	ergon_out_release(&live);
	/* A run killed while measuring leaves only its reserved space: 8 KiB of
	 * zeros (posix_fallocate), no data; said so, and --clean removes it. */
	char *zeros = ts_strf("%s/.ergon-tmp-Zz99Yy", dir);
	static const char zero8k[8192];
	assert_int_equal(ts_write_file(zeros, zero8k, sizeof(zero8k)), 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(ergon_out_scan_stale(path, 0, on_stale, &seen, &err), 1);
	assert_int_equal(seen.size, 8192);
	assert_int_equal(seen.with_data, 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(ergon_out_scan_stale(path, 1, on_stale, &seen, &err), 1);
	assert_int_equal(seen.removed, 1);
	assert_int_not_equal(access(zeros, F_OK), 0);
	free(zeros);
	/* A folder that does not exist yet has none. */
	assert_int_equal(ergon_out_scan_stale("/nonexistent-ergon-dir/r.json", 0, NULL, NULL, &err),
			 0);
	free(other);
	free(path);
	free(stale);
	free(notours);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reserve_commit_places_the_data),
	    cmocka_unit_test(second_reservation_is_refused),
	    cmocka_unit_test(commit_keeps_data_in_partial_when_output_appeared),
	    cmocka_unit_test(force_replaces_only_regular_files),
	    cmocka_unit_test(commit_falls_back_to_tmpdir),
	    cmocka_unit_test(reservation_fails_when_space_is_missing),
	    cmocka_unit_test(unusable_paths_fail_at_reserve),
	    cmocka_unit_test(stale_temp_files_are_found_and_removed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

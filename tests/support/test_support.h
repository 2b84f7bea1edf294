/* Helpers shared by the test tiers: temporary folders, fixture paths,
 * running the ergon CLI and capturing its output. */
#ifndef ERGON_TEST_SUPPORT_H
#define ERGON_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka needs the three headers above first. */
#include <cmocka.h>

/* A fresh temporary folder (mkdtemp under $TMPDIR); removed by
 * ts_tmpdir_remove. Returns a static-lifetime copy the caller frees. */
char *ts_tmpdir(void);
void ts_tmpdir_remove(const char *dir);
/* "$ERGON_SHARED_DIR/fixtures/<rel>" in a malloc'd string. */
char *ts_fixture(const char *rel);
/* Run the ergon CLI (ERGON_BIN) with args (NULL-terminated), capture stdout
 * and stderr (malloc'd, caller frees; either may be NULL to discard).
 * Returns the exit status, or -1 on failure to run, 128+sig when killed. */
int ts_run_ergon(char **out, char **errout, const char *arg0, ...);
/* Same with an argv array. */
int ts_run_ergon_argv(char **out, char **errout, const char *const *argv);
/* A short synthetic `ergon run` report (2 windows of 0.2 s after a 0.2 s
 * idle phase at 500 Hz) written to path: the input the verify tests edit.
 * Returns ergon's exit code (0 on success; the error is printed). */
int ts_make_short_report(const char *path);
/* Read a whole file (malloc'd, NUL-terminated). NULL on failure. */
char *ts_read_file(const char *path, size_t *len);
/* The cell of a CSV with a header row (no quoted fields): the row whose
 * first field is row, the column named col; a malloc'd copy, NULL when
 * either is absent. */
char *ts_csv_cell(const char *csv, const char *row, const char *col);
/* Write a whole file; 0 on success. */
int ts_write_file(const char *path, const void *data, size_t len);
/* snprintf into a malloc'd string. */
char *ts_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* docs/NAME of the source tree ($ERGON_SOURCE_DIR) with every run of
 * whitespace made one space (malloc'd; fails the test when unreadable). */
char *ts_doc_load(const char *name);
/* The numbers of the first place in doc where pat matches: pat is the
 * doc's text with `#` for each number (strtod). Fails the test, naming
 * doc_name and pat, when no place matches with exactly `want` numbers. */
void ts_doc_nums(const char *doc, const char *doc_name, const char *pat, double *out,
		 size_t want);

#endif

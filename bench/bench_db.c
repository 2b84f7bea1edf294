/* ergon db: ingest rate of N run reports (artifacts/s, MB/s) and the time
 * of one `trend` over them, with a baseline measured in the same run:
 * loading and verifying the same files without storing them (the part of
 * ingest that is not the database).
 *
 *   bench_db REPORT.json N DB WORKDIR [--reuse]
 * REPORT.json is any ergon run report; N copies differing in one
 * conditions field are sealed into WORKDIR (not timed; --reuse: they are
 * there from an earlier run), then ingested into DB (an SQLite path or a
 * postgresql:// URL, which should be empty) the way `ergon db ingest`
 * does (ergon_db_ingest_files: batches). bench/bench_db_ingest.sh runs it
 * in interleaved rounds on both backends.
 */
#include "ergon/artifact.h"
#include "ergon/db.h"
#include "ergon/fileio.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU time (user + sys), s: on a VM shared with other
 * builds the wall time measures the neighbours as much as ergon. A
 * PostgreSQL server's own CPU time is not included. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int count_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)n;
	(void)names;
	(void)vals;
	(*(long *)ctx)++;
	return 0;
}

struct tally {
	long stored, refused;
	char first[ERGON_ERR_MSG_MAX];
};

static void tally_fn(void *ctx, size_t index, const char *path, int rc, int result, const char *key,
		     const struct ergon_err *err)
{
	(void)index;
	(void)path;
	(void)key;
	struct tally *t = ctx;
	if (rc && t->refused++ == 0)
		snprintf(t->first, sizeof t->first, "%s", err->msg);
	t->stored += rc == 0 && result == ERGON_DB_INGESTED;
}

int main(int argc, char **argv)
{
	int reuse = argc == 6 && strcmp(argv[5], "--reuse") == 0;
	if (argc != 5 && !reuse) {
		fprintf(stderr, "usage: bench_db REPORT.json N DB WORKDIR [--reuse]\n");
		return 2;
	}
	char *end = NULL;
	long n = strtol(argv[2], &end, 10);
	if (!end || *end || n < 1 || n > 1000000) {
		fprintf(stderr, "bench_db: N must be 1..1000000\n");
		return 2;
	}
	struct ergon_err err = {0};
	json_t *base = NULL;
	if (ergon_artifact_load(argv[1], (size_t)1 << 30, &base, &err)) {
		fprintf(stderr, "bench_db: %s\n", err.msg);
		return 3;
	}
	const char *dev =
	    json_string_value(json_object_get(json_object_get(base, "device"), "name"));
	char devname[128];
	snprintf(devname, sizeof devname, "%s", dev ? dev : "dut");
	double bytes = 0;
	for (long i = 0; i < n; i++) {
		json_object_set_new(json_object_get(base, "conditions"), "bench_seq",
				    json_integer(i));
		char path[1024];
		snprintf(path, sizeof path, "%s/r%06ld.json", argv[4], i);
		if (!reuse &&
		    ergon_artifact_write(base, path, ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR, &err)) {
			fprintf(stderr, "bench_db: %s\n", err.msg);
			return 3;
		}
		struct stat st;
		if (stat(path, &st) != 0) {
			fprintf(stderr, "bench_db: %s: missing (run once without --reuse)\n", path);
			return 3;
		}
		bytes += (double)st.st_size;
	}
	json_decref(base);

	/* Baseline: load + verify every file, store nothing. */
	double c0 = cpu_s();
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/r%06ld.json", argv[4], i);
		json_t *j = NULL;
		if (ergon_artifact_load(path, (size_t)1 << 30, &j, &err) ||
		    ergon_report_verify(j, &err)) {
			fprintf(stderr, "bench_db: %s\n", err.msg);
			return 3;
		}
		json_decref(j);
	}
	double t_verify = now_s() - t0;
	double c_verify = cpu_s() - c0;

	struct ergon_db *db = NULL;
	if (ergon_db_open(argv[3], ERGON_DB_SCHEMA_VERSION, &db, &err)) {
		fprintf(stderr, "bench_db: %s\n", err.msg);
		return 3;
	}
	/* As `ergon db ingest` does: every path in one call, stored in
	 * batches (ERGON_DB_BATCH_ARTIFACTS per transaction). */
	char **paths = calloc((size_t)n, sizeof *paths);
	for (long i = 0; paths && i < n; i++) {
		paths[i] = malloc(1024);
		if (paths[i])
			snprintf(paths[i], 1024, "%s/r%06ld.json", argv[4], i);
	}
	c0 = cpu_s();
	t0 = now_s();
	struct tally tl = {0};
	if (!paths ||
	    ergon_db_ingest_files(db, (const char *const *)paths, (size_t)n, tally_fn, &tl, &err)) {
		fprintf(stderr, "bench_db: %s\n", paths ? err.msg : "out of memory");
		return 3;
	}
	if (tl.refused) {
		fprintf(stderr, "bench_db: %ld refused: %s\n", tl.refused, tl.first);
		return 3;
	}
	long stored = tl.stored;
	/* Closing is part of the ingest: SQLite copies the last of its WAL
	 * into the database then (a checkpoint), as the command does. */
	char backend[32];
	snprintf(backend, sizeof backend, "%s", ergon_db_backend_name(db));
	ergon_db_close(db);
	db = NULL;
	double t_ingest = now_s() - t0;
	double c_ingest = cpu_s() - c0;
	if (ergon_db_open(argv[3], ERGON_DB_SCHEMA_VERSION, &db, &err)) {
		fprintf(stderr, "bench_db: %s\n", err.msg);
		return 3;
	}
	long rows = 0;
	c0 = cpu_s();
	t0 = now_s();
	if (ergon_db_trend(db, "load.mean_power_w", devname, NULL, count_row, &rows, &err)) {
		fprintf(stderr, "bench_db: %s\n", err.msg);
		return 3;
	}
	double t_trend = now_s() - t0;
	double c_trend = cpu_s() - c0;
	printf("backend %s, %ld run reports of %.1f kB each (%ld newly stored)\n", backend, n,
	       bytes / (double)n / 1e3, stored);
	printf("baseline load+verify : %.2f s  %.0f artifacts/s  %.1f MB/s\n", t_verify,
	       (double)n / t_verify, bytes / t_verify / 1e6);
	printf("ingest               : %.2f s  %.0f artifacts/s  %.1f MB/s  (%.2fx the baseline "
	       "time)\n",
	       t_ingest, (double)n / t_ingest, bytes / t_ingest / 1e6, t_ingest / t_verify);
	printf("trend load.mean_power_w --device %s: %ld rows in %.3f s\n", devname, rows, t_trend);
	printf("cpu (this process): baseline %.2f s, ingest %.2f s (%.2fx), trend %.3f s\n",
	       c_verify, c_ingest, c_ingest / c_verify, c_trend);
	ergon_db_close(db);
	for (long i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return 0;
}

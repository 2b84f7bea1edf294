/* ergon report on a long recording: a JLS of SECONDS (default 60) at
 * 2 MS/s (current, voltage, gate) and a summary with two gated windows
 * rendered into one HTML page; the time against the JLS reader streaming
 * the same file with a no-op callback in the same run (the floor any
 * renderer of the recording pays), and the page's size.
 *   bench_report_html [SECONDS] [DIR]   (default 60 s, /tmp)
 * The JLS file is written by the test writer (tests/support). */
#include "../tests/support/ts_jls_writer.c"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/jls.h"
#include "ergon/report_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RATE 2000000u

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double secs_total;

/* Gated from 20 % to 45 % and from 55 % to 80 % of the recording. */
static int in_gate(uint64_t k)
{
	double f = (double)k / (secs_total * RATE);
	return (f >= 0.2 && f < 0.45) || (f >= 0.55 && f < 0.8);
}

static double cur(uint64_t k, void *c)
{
	(void)c;
	return (in_gate(k) ? 0.012 : 0.002) + (double)(k % 97) * 2e-6 + (k % 100003 == 0) * 0.01;
}

static double volt(uint64_t k, void *c)
{
	(void)k;
	(void)c;
	return 1.8;
}

static int gate(uint64_t k, void *c)
{
	(void)c;
	return in_gate(k);
}

static int count_only(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	(void)err;
	*(uint64_t *)ctx += b->n;
	return 0;
}

int main(int argc, char **argv)
{
	secs_total = argc > 1 ? strtod(argv[1], NULL) : 60.0;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char jls[512], sum[512], html[512];
	snprintf(jls, sizeof jls, "%s/ergon_bench_report.jls", dir);
	snprintf(sum, sizeof sum, "%s/ergon_bench_report_summary.json", dir);
	snprintf(html, sizeof html, "%s/ergon_bench_report.html", dir);
	struct ts_jls_spec s = {.rate_hz = RATE,
				.samples = (uint64_t)(secs_total * RATE),
				.samples_per_data = 65536,
				.with_gate = 1,
				.current_a = cur,
				.voltage_v = volt,
				.gate = gate};
	double t0 = now_s();
	if (ts_jls_write_file(jls, &s) != 0) {
		fprintf(stderr, "cannot write %s\n", jls);
		return 1;
	}
	double t_write = now_s() - t0;
	struct stat st;
	stat(jls, &st);
	/* A summary as ergon analyze would write it, with the fields the
	 * renderer reads. */
	json_t *a = ergon_artifact_new("ergon.profile", 1, ERGON_PROV_SYNTHETIC);
	json_t *w = json_pack("[{s:f, s:f, s:f}, {s:f, s:f, s:f}]", "start_s", 0.2 * secs_total,
			      "end_s", 0.45 * secs_total, "duration_s", 0.25 * secs_total,
			      "start_s", 0.55 * secs_total, "end_s", 0.8 * secs_total, "duration_s",
			      0.25 * secs_total);
	json_object_set_new(a, "power",
			    json_pack("{s:s, s:f, s:f, s:f, s:f, s:o, s:{s:f, s:f}}",
				      "measurement_scope", "gpio_gated_clean_window",
				      "capture_duration_s", secs_total, "median_current_a", 0.0121,
				      "p95_current_a", 0.0122, "p99_current_a", 0.0122, "windows",
				      w, "whole_capture_window", "end_s", secs_total,
				      "peak_current_a", 0.0222));
	struct ergon_err err = {0};
	unlink(sum);
	if (ergon_artifact_write(a, sum, ERGON_WRITE_FORCE, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	json_decref(a);
	double best_read = 1e9, best_report = 1e9;
	for (int i = 0; i < 3; i++) {
		struct ergon_jls_reader *r = NULL;
		uint64_t n = 0;
		t0 = now_s();
		if (ergon_jls_file_open(jls, &r, &err) ||
		    ergon_jls_reader_stream(r, NULL, count_only, &n, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t = now_s() - t0;
		ergon_jls_reader_free(r);
		if (t < best_read)
			best_read = t;
		struct ergon_html_input in = {.path = sum, .jls_path = jls};
		t0 = now_s();
		if (ergon_report_html_write(&in, 1, NULL, html, ERGON_WRITE_FORCE, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		t = now_s() - t0;
		if (t < best_report)
			best_report = t;
	}
	struct stat hs;
	stat(html, &hs);
	printf("recording %.0f s at 2 MS/s: %llu samples, JLS %.1f MB (written in %.1f s)\n",
	       secs_total, (unsigned long long)s.samples, (double)st.st_size / 1e6, t_write);
	printf("JLS reader alone (no-op callback): %.3f s (best of 3)\n", best_read);
	printf("ergon report (read + decimate + histogram + page): %.3f s (best of 3), "
	       "ratio %.2f x the reader\n",
	       best_report, best_report / best_read);
	printf("page: %.3f MB\n", (double)hs.st_size / 1e6);
	unlink(jls);
	return 0;
}

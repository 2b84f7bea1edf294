/* The JLS writer: every file it writes reads back through our reader with
 * byte-identical samples; every chunk's CRC32C checks out with an
 * independent (bitwise) CRC; summaries hold the mean/std/min/max worked
 * out by hand; a recording killed mid-way, cut mid-chunk, or stopped by a
 * full disk stays valid up to its last complete chunk; an existing file is
 * refused without force. */
#include "ergon/jls.h"
#include "ergon/jls_writer.h"
#include "test_support.h"
#include "ts_jls_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_SAMPLES 300000u

static float cur_at(uint64_t k)
{
	/* 0, 1, 2, 3 mA repeating; a NaN (lost sample) at 150001. */
	return k == 150001 ? NAN : (float)(1e-3 * (double)(k % 4));
}

static float volt_at(uint64_t k)
{
	return (float)(3.3 - 1e-6 * (double)(k % 1000));
}

static uint32_t dig_at(uint64_t k)
{
	/* D0 toggles; D1 high for [100000, 200000); D2 high every 3rd. */
	return (uint32_t)((k & 1) | (k >= 100000 && k < 200000 ? 2u : 0u) | (k % 3 == 0 ? 4u : 0u));
}

/* The writer's on_write_error hook for the next write_file (NULL: none). */
static int (*next_on_write_error)(void *ctx, int errno_value);

static int write_file(const char *path, uint64_t n, int close_it, ergon_jls_pwrite_fn pw,
		      struct ergon_err *err, uint64_t *kept)
{
	struct ergon_jls_writer_config cfg = {.path = path,
					      .sample_rate_hz = 100000,
					      .source_name = "PPK2-SIM",
					      .vendor = "Nordic Semiconductor",
					      .model = "PPK2",
					      .version = "test",
					      .serial = "SN42",
					      .digital_lines = 3,
					      .with_power = 1,
					      .utc_q30_start = (int64_t)1000 << 30,
					      .note_json = "{\"ergon\":\"test\"}",
					      .pwrite_fn = pw,
					      .on_write_error = next_on_write_error};
	struct ergon_jls_writer *w = NULL;
	int rc = ergon_jls_writer_open(&cfg, &w, err);
	if (rc)
		return rc;
	float c[1000], v[1000];
	uint32_t d[1000];
	for (uint64_t k0 = 0; k0 < n && rc == 0; k0 += 1000) {
		size_t m = n - k0 < 1000 ? (size_t)(n - k0) : 1000;
		for (size_t j = 0; j < m; j++) {
			c[j] = cur_at(k0 + j);
			v[j] = volt_at(k0 + j);
			d[j] = dig_at(k0 + j);
		}
		rc = ergon_jls_writer_push(w, c, v, NULL, d, m, err);
	}
	if (kept)
		*kept = ergon_jls_writer_samples_kept(w);
	if (!close_it) {
		ergon_jls_writer_abandon(w);
		return rc;
	}
	int rc2 = ergon_jls_writer_close(w, "{\"complete\":true}", rc ? NULL : err);
	return rc ? rc : rc2;
}

struct check {
	uint64_t seen;
	unsigned gate_line;
	int bad;
};

static int check_block(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	(void)err;
	struct check *c = ctx;
	for (size_t j = 0; j < b->n; j++) {
		uint64_t k = b->first_index + j;
		float want_c = cur_at(k), want_v = volt_at(k);
		float want_p = want_c * want_v;
		if (memcmp(&b->current_a[j], &want_c, 4) != 0 ||
		    memcmp(&b->voltage_v[j], &want_v, 4) != 0 ||
		    (b->power_w && memcmp(&b->power_w[j], &want_p, 4) != 0))
			c->bad++;
		size_t bit = b->gate_bit0 + j;
		unsigned g = ((unsigned)b->gate_bits[bit / 8] >> (bit % 8)) & 1u;
		if (g != ((dig_at(k) >> c->gate_line) & 1u))
			c->bad++;
	}
	c->seen += b->n;
	return 0;
}

static uint64_t read_back(const char *path, unsigned line, size_t *warnings)
{
	struct ergon_jls_reader *r = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_jls_file_open(path, &r, &err), 0);
	char gate[16];
	snprintf(gate, sizeof(gate), "gpi[%u]", line);
	struct check c = {.gate_line = line};
	assert_int_equal(ergon_jls_reader_stream(r, gate, check_block, &c, &err), 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(ergon_jls_reader_sample_rate(r), 100000);
	assert_string_equal(ergon_jls_reader_source_field(r, "serial"), "SN42");
	assert_string_equal(ergon_jls_reader_source_field(r, "vendor"), "Nordic Semiconductor");
	*warnings = ergon_jls_reader_warnings(r)->n;
	ergon_jls_reader_free(r);
	return c.seen;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void roundtrip_identical_and_crcs(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.jls", dir);
	struct ergon_err err = {0};
	assert_int_equal(write_file(path, N_SAMPLES, 1, NULL, &err, NULL), 0);
	size_t warnings = 99;
	for (unsigned line = 0; line < 3; line++)
		assert_int_equal(read_back(path, line, &warnings), N_SAMPLES);
	assert_int_equal(warnings, 0);
	/* Walk it with the independent bitwise CRC. */
	size_t len = 0;
	uint8_t *f = (uint8_t *)ts_read_file(path, &len);
	assert_non_null(f);
	assert_int_equal(rd32(f + 28), ts_crc32c(f, 28));
	uint64_t hdr_len = (uint64_t)rd32(f + 16) | (uint64_t)rd32(f + 20) << 32;
	assert_int_equal(hdr_len, len);
	size_t off = 32, chunks = 0, l1 = 0, l2 = 0, utc = 0, ends = 0, user = 0, utc_summaries = 0;
	size_t first_l1_summary = 0, second_l1_summary = 0, first_l1_gpi0 = 0, first_l1_gpi1 = 0;
	while (off + 32 <= len) {
		assert_int_equal(rd32(f + off + 28), ts_crc32c(f + off, 28));
		uint32_t plen = rd32(f + off + 20);
		uint8_t tag = f[off + 16];
		unsigned meta = (unsigned)f[off + 18] | (unsigned)f[off + 19] << 8;
		size_t span = plen ? ((plen + 4u + 7u) & ~7u) : 0;
		if (plen)
			assert_int_equal(rd32(f + off + 32 + span - 4),
					 ts_crc32c(f + off + 32, plen));
		if (tag == 0x24 && (meta >> 12) == 1) {
			l1++;
			if ((meta & 0xff) == 1 && first_l1_summary != 0 && second_l1_summary == 0)
				second_l1_summary = off;
			if ((meta & 0xff) == 1 && first_l1_summary == 0)
				first_l1_summary = off;
			if ((meta & 0xff) == 4 && first_l1_gpi0 == 0)
				first_l1_gpi0 = off;
			if ((meta & 0xff) == 5 && first_l1_gpi1 == 0)
				first_l1_gpi1 = off;
		}
		l2 += tag == 0x24 && (meta >> 12) == 2;
		utc += tag == 0x3a;
		utc_summaries += tag == 0x3c && (meta >> 12) == 1;
		ends += tag == 0xff;
		user += tag == 0x40;
		chunks++;
		off += 32 + span;
	}
	assert_int_equal(off, len);
	assert_int_equal(ends, 1);
	assert_int_equal(user, 3); /* the empty list head, the opening and closing notes */
	/* 6 signals x 300000 / (100 entries x 1000 samples) = 3 level-1
	 * summary chunks each; level 2 (30 entries) is the top: one chunk. */
	assert_int_equal(l1, 6 * 3);
	assert_int_equal(l2, 6);
	assert_int_equal(utc, 6);
	assert_int_equal(utc_summaries, 6);
	/* Level-1 entry 0 of current: samples 0..999 are 0,1,2,3 mA x 250:
	 * mean 1.5 mA, min 0, max 3 mA, std sqrt(14/4 - 2.25) mA = 1.118 mA. */
	const uint8_t *e = f + first_l1_summary + 32 + 16;
	float mean, sd, mn, mx;
	memcpy(&mean, e, 4);
	memcpy(&sd, e + 4, 4);
	memcpy(&mn, e + 8, 4);
	memcpy(&mx, e + 12, 4);
	assert_true(fabs(mean - 1.5e-3) < 1e-9);
	assert_true(fabs(sd - sqrt(1.25) * 1e-3) < 1e-8);
	assert_true(mn == 0.0f);
	assert_true(fabs(mx - 3e-3) < 1e-9);
	/* Entry 150 (the second chunk's entry 50) covers samples 150000..150999
	 * with the NaN at 150001 (a 1 mA sample) left out: 999 samples of sum
	 * 1500 - 1 = 1499 mA and sum of squares 3500 - 1 = 3499 mA^2. */
	assert_true(second_l1_summary > first_l1_summary);
	e = f + second_l1_summary + 32 + 16 + 16 * 50;
	memcpy(&mean, e, 4);
	memcpy(&sd, e + 4, 4);
	memcpy(&mn, e + 8, 4);
	memcpy(&mx, e + 12, 4);
	double m_nan = 1499.0 / 999.0, v_nan = 3499.0 / 999.0 - m_nan * m_nan;
	assert_true(fabs(mean - m_nan * 1e-3) < 1e-9);
	assert_true(fabs(sd - sqrt(v_nan) * 1e-3) < 1e-8);
	assert_true(mn == 0.0f);
	assert_true(fabs(mx - 3e-3) < 1e-9);
	/* gpi[0] toggles: entry 0 is mean 0.5, std 0.5, min 0, max 1; gpi[1]
	 * is low until sample 100000: entry 0 is all 0. */
	const uint8_t *g0 = f + first_l1_gpi0 + 32 + 16, *g1 = f + first_l1_gpi1 + 32 + 16;
	float gv[4], hv[4];
	memcpy(gv, g0, 16);
	memcpy(hv, g1, 16);
	assert_true(gv[0] == 0.5f && gv[1] == 0.5f && gv[2] == 0.0f && gv[3] == 1.0f);
	assert_true(hv[0] == 0.0f && hv[1] == 0.0f && hv[2] == 0.0f && hv[3] == 0.0f);
	/* The UTC track: sample 0 at JLS time 1000 s. */
	struct ergon_jls_reader *r = NULL;
	assert_int_equal(ergon_jls_file_open(path, &r, &err), 0);
	int64_t q30 = 0;
	assert_int_equal(ergon_jls_reader_start_utc(r, &q30), 0);
	assert_true(q30 == (int64_t)1000 << 30);
	ergon_jls_reader_free(r);
	free(f);
	/* An existing file is refused; force replaces it. */
	err = (struct ergon_err){0};
	struct ergon_jls_writer_config cfg = {.path = path, .sample_rate_hz = 1000};
	struct ergon_jls_writer *w = NULL;
	assert_int_equal(ergon_jls_writer_open(&cfg, &w, &err), ERGON_EEXIST);
	assert_non_null(strstr(err.msg, "--force"));
	cfg.force = 1;
	assert_int_equal(ergon_jls_writer_open(&cfg, &w, &err), 0);
	assert_int_equal(ergon_jls_writer_close(w, NULL, &err), 0);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void killed_and_cut_stay_valid(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/k.jls", dir);
	struct ergon_err err = {0};
	uint64_t kept = 0;
	/* Killed: never closed. 95000 samples: 9 whole chunks of 10000 per
	 * signal (90000) are on disk, the 10th is lost with the process. */
	assert_int_equal(write_file(path, 95000, 0, NULL, &err, &kept), 0);
	assert_int_equal(kept, 90000);
	size_t warnings = 0;
	assert_int_equal(read_back(path, 1, &warnings), 90000);
	assert_true(warnings >= 1); /* unclosed: power.recording_truncated */
	/* Cut in the middle of the last chunk. */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 100), 0);
	/* The last chunk written is gpi[2]'s 9th: that signal now stops one
	 * chunk earlier, and the reader stops the stream with it. */
	assert_int_equal(read_back(path, 2, &warnings), 90000 - 10000);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static off_t fail_at;
static ssize_t full_disk(int fd, const void *b, size_t n, off_t off)
{
	if (off + (off_t)n > fail_at) {
		if (off >= fail_at) {
			errno = ENOSPC;
			return -1;
		}
		n = (size_t)(fail_at - off); /* a short write, then ENOSPC */
	}
	return pwrite(fd, b, n, off);
}

static void full_disk_keeps_what_fits(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/d.jls", dir);
	struct ergon_err err = {0};
	/* Room for about 200000 samples of 6 signals. */
	fail_at = 200000 * 13;
	uint64_t kept = 0;
	int rc = write_file(path, N_SAMPLES, 1, full_disk, &err, &kept);
	assert_int_equal(rc, ERGON_EIO);
	assert_non_null(strstr(err.msg, "No space left"));
	assert_non_null(strstr(err.msg, "valid JLS up to there"));
	assert_true(kept > 100000 && kept < N_SAMPLES);
	size_t warnings = 0;
	uint64_t got = read_back(path, 2, &warnings);
	assert_int_equal(got, kept);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= fail_at);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Room is made on the first failure (as ergon record does by releasing
 * the space it reserved before recording): the failed write is tried again
 * and the recording completes with every sample. */
static int made_room, room_errno;
static int make_room_once(void *ctx, int errno_value)
{
	(void)ctx;
	if (made_room++)
		return 0;
	room_errno = errno_value;
	fail_at = (off_t)1 << 40;
	return 1;
}

static void room_made_on_failure_keeps_everything(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/r.jls", dir);
	struct ergon_err err = {0};
	fail_at = 200000 * 13;
	made_room = 0;
	next_on_write_error = make_room_once;
	uint64_t kept = 0;
	int rc = write_file(path, N_SAMPLES, 1, full_disk, &err, &kept);
	next_on_write_error = NULL;
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(made_room, 1);
	assert_int_equal(room_errno, ENOSPC);
	size_t warnings = 0;
	assert_int_equal(read_back(path, 2, &warnings), N_SAMPLES);
	assert_int_equal(warnings, 0);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(roundtrip_identical_and_crcs),
	    cmocka_unit_test(killed_and_cut_stay_valid),
	    cmocka_unit_test(full_disk_keeps_what_fits),
	    cmocka_unit_test(room_made_on_failure_keeps_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Joulescope JLS v2 recordings: a streaming writer (our own code, beside
 * the reader in jls.h), for `ergon record`.
 *
 * Layout (docs/internals/jls_writer.md), in the reference writer's order:
 * file header; the user-data list head; source 0 and its global
 * annotation signal 0; a USER_DATA note; source 1 (the instrument); per
 * signal a SIGNAL_DEF with FSR, ANNOTATION and UTC track DEF/HEAD chunks;
 * then, interleaved in time, FSR DATA chunks (f32 "current", "voltage",
 * "power"; u1 "gpi[0]".."gpi[7]"), summary levels (INDEX + SUMMARY with
 * mean/std/min/max per 1000 samples at level 1, per 10 entries above), UTC
 * DATA entries mapping sample ids to time; at close a final USER_DATA
 * note, END and the file length in the header. Every chunk carries its
 * CRC32C. Chunks are appended in order and complete before the next
 * starts, so a recording killed at any point is valid up to its last
 * complete chunk (the header length stays 0, which is how readers know it
 * was not closed).
 *
 * Memory is bounded by the signal count, whatever the length: one DATA
 * chunk per signal and one summary chunk per level.
 */
#ifndef ERGON_JLS_WRITER_H
#define ERGON_JLS_WRITER_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_JLS_WRITER_DIGITAL_MAX 8u

/* pwrite(2)'s contract; tests inject short writes and ENOSPC. */
typedef ssize_t (*ergon_jls_pwrite_fn)(int fd, const void *buf, size_t n, off_t off);

struct ergon_jls_writer_config {
	const char *path;
	int force;		 /* replace an existing file (else ERGON_EEXIST) */
	uint32_t sample_rate_hz; /* > 0 */
	/* Source identity (source 1); NULL = "". */
	const char *source_name, *vendor, *model, *version, *serial;
	unsigned digital_lines;	  /* u1 signals gpi[0..n-1], 0..8 */
	int with_power;		  /* write "power" (f32, current x voltage unless given) */
	int64_t utc_q30_start;	  /* JLS time of sample 0 (34Q30 s since 2018-01-01) */
	int64_t sample_id_offset; /* file sample id of sample 0 */
	const char *note_json;	  /* USER_DATA note at the start (JSON text); may be NULL */
	/* Samples per DATA chunk and per level-1 summary entry, every signal;
	 * 0 and 0 = 10000 and 1000 (decimal, so that the reference reader's
	 * statistics over 1000, 10000, ... samples are whole entries). Others
	 * are for tests that need many levels from few samples; the chunk
	 * must be a multiple of 8 and of the entry, 100 entries a whole
	 * number of chunks, the entry 10 samples or more (ERGON_EUSAGE). */
	uint32_t samples_per_data;
	uint32_t sample_decimate;
	ergon_jls_pwrite_fn pwrite_fn; /* NULL = pwrite */
	/* May be NULL. Called when a write fails, with its errno: return 1
	 * to have the same write tried again (after making room, e.g. by
	 * releasing space reserved before the recording), 0 to give up.
	 * It must return 0 eventually (the writer asks after every failure). */
	int (*on_write_error)(void *ctx, int errno_value);
	void *on_write_error_ctx;
};

struct ergon_jls_writer;

/* Create the file and write the definitions. On success the caller owns
 * *out (ergon_jls_writer_close or _abandon). An existing file is refused
 * with ERGON_EEXIST unless cfg->force. */
ERGON_API int ergon_jls_writer_open(const struct ergon_jls_writer_config *cfg,
				    struct ergon_jls_writer **out, struct ergon_err *err);

/* Append n samples. power may be NULL (current x voltage is written when
 * the file has a power signal); digital may be NULL (all lines 0), else
 * bit i of digital[j] is gpi[i] of sample j. NaN is written as NaN (a lost
 * sample), never replaced. A write failure (disk full) leaves the file
 * valid up to the last complete chunk and returns ERGON_EIO naming how
 * many samples are kept; the writer then accepts only close/abandon. */
ERGON_API int ergon_jls_writer_push(struct ergon_jls_writer *w, const float *current_a,
				    const float *voltage_v, const float *power_w,
				    const uint32_t *digital, size_t n, struct ergon_err *err);

/* Add a UTC entry: sample `index` (0 = the first pushed) is at utc_q30. */
ERGON_API int ergon_jls_writer_utc(struct ergon_jls_writer *w, uint64_t index, int64_t utc_q30,
				   struct ergon_err *err);

/* Flush what is buffered, write note_json (may be NULL) as the closing
 * USER_DATA note, END, and the length into the header; then free w. After
 * a write failure it closes what is on disk as well as it can and returns
 * the first error. */
ERGON_API int ergon_jls_writer_close(struct ergon_jls_writer *w, const char *note_json,
				     struct ergon_err *err);

/* Free without finishing (as if the process were killed); NULL is a
 * no-op. The file keeps the chunks already written. */
ERGON_API void ergon_jls_writer_abandon(struct ergon_jls_writer *w);

/* Samples pushed, samples on disk in complete chunks, bytes on disk. */
ERGON_API uint64_t ergon_jls_writer_samples(const struct ergon_jls_writer *w);
ERGON_API uint64_t ergon_jls_writer_samples_kept(const struct ergon_jls_writer *w);
ERGON_API uint64_t ergon_jls_writer_bytes(const struct ergon_jls_writer *w);

/* JLS time (34Q30 s since 2018-01-01T00:00:00Z) from a CLOCK_REALTIME
 * reading. */
ERGON_API int64_t ergon_jls_utc_from_unix(int64_t sec, long nsec);

#ifdef __cplusplus
}
#endif
#endif

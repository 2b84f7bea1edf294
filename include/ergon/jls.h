/* Joulescope JLS recordings: a read-only, streaming reader (our own code).
 *
 * The format (jetperch/jls, Apache-2.0) is a 32-byte file header followed by
 * chunks: a 32-byte header (u64 item_next, u64 item_prev, u8 tag, u8 rsv,
 * u16 chunk_meta, u32 payload_length, u32 payload_prev_length, u32 CRC32C of
 * the first 28 bytes), then the payload, zero padding, and the u32 CRC32C of
 * the payload bytes, ending on an 8-byte boundary (an empty payload has no
 * CRC). All integers little-endian.
 *
 * Two layers: decoders that work on byte buffers (what the fuzzer drives),
 * and a reader that walks a random-access source with bounded memory (one
 * decoded DATA chunk per selected signal, whatever the file length). The
 * reader walks chunks in file order and does not follow item_next/item_prev,
 * so pointers that loop or point outside the file cannot make it loop; they
 * are only reported.
 */
#ifndef ERGON_JLS_H
#define ERGON_JLS_H

#include "ergon/error.h"
#include "ergon/issue_list.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_JLS_HEADER_SIZE 32u
#define ERGON_JLS_CHUNK_HEADER_SIZE 32u
/* No legitimate payload is this long (a DATA chunk of the JS220 writer is
 * about 32 KiB); a longer one is treated as corrupt rather than allocated. */
#define ERGON_JLS_PAYLOAD_MAX (64u * 1024u * 1024u)
#define ERGON_JLS_SIGNAL_MAX 256u
/* u1 signals one ergon_jls_reader_stream_lines call streams at most. */
#define ERGON_JLS_LINES_MAX 8u

enum ergon_jls_tag {
	ERGON_JLS_TAG_SOURCE_DEF = 0x01,
	ERGON_JLS_TAG_SIGNAL_DEF = 0x02,
	ERGON_JLS_TAG_FSR_DATA = 0x22, /* 0x20 | FSR(0)<<3 | DATA(2) */
	ERGON_JLS_TAG_UTC_DATA = 0x3a, /* 0x20 | UTC(3)<<3 | DATA(2) */
	ERGON_JLS_TAG_USER_DATA = 0x40,
	ERGON_JLS_TAG_END = 0xff,
	ERGON_JLS_TAG_FSR_SUMMARY = 0x24, /* 0x20 | FSR(0)<<3 | SUMMARY(4) */
};

/* Data types: basetype | bits << 8. */
enum ergon_jls_dtype {
	ERGON_JLS_DT_U1 = 0x0103,
	ERGON_JLS_DT_U4 = 0x0403,
	ERGON_JLS_DT_F32 = 0x2004,
};

struct ergon_jls_file_header {
	uint64_t file_length; /* 0 when the writer did not close the file */
	uint32_t version;
};

struct ergon_jls_chunk_header {
	uint64_t item_next;
	uint64_t item_prev;
	uint8_t tag;
	uint16_t chunk_meta; /* signal id in bits 7:0, summary level in 15:12 */
	uint32_t payload_length;
	uint32_t payload_prev_length;
};

struct ergon_jls_signal {
	int defined;
	uint16_t signal_id;
	uint16_t source_id;
	uint8_t signal_type; /* 0 FSR, 1 VSR */
	uint32_t data_type;
	uint32_t sample_rate_hz;
	uint32_t samples_per_data;
	char name[64];
	char units[16];
	/* Summary layout (SIGNAL_DEF offsets 16, 20, 24): samples per
	 * level-1 summary entry, entries per SUMMARY chunk, level-k entries
	 * per level-k+1 entry. */
	uint32_t sample_decimate_factor;
	uint32_t entries_per_summary;
	uint32_t summary_decimate_factor;
};

/* A decoded DATA payload header; entries points into the payload. */
struct ergon_jls_data {
	int64_t first_sample_id;
	uint32_t entry_count;
	uint16_t entry_size_bits;
	const uint8_t *entries;
	size_t entries_len;
};

/* CRC32C (Castagnoli), the JLS checksum; crc = 0 to start. */
ERGON_API uint32_t ergon_jls_crc32c(uint32_t crc, const void *buf, size_t len);
/* Bytes a chunk with this payload length occupies after its header. */
ERGON_API uint64_t ergon_jls_payload_span(uint32_t payload_length);

/* Decoders on buffers. Each checks lengths and CRCs and returns 0,
 * ERGON_EPARSE (bad content) or ERGON_EVERIFY (CRC mismatch), naming what
 * is wrong in err. `where` names the input in messages ("x.jls@1234"). */
ERGON_API int ergon_jls_file_header_decode(const uint8_t *b, size_t len,
					   struct ergon_jls_file_header *h, const char *where,
					   struct ergon_err *err);
ERGON_API int ergon_jls_chunk_header_decode(const uint8_t *b, size_t len,
					    struct ergon_jls_chunk_header *h, const char *where,
					    struct ergon_err *err);
/* Check the u32 CRC32C stored after a payload. span = the chunk's payload
 * span (payload, padding, CRC); b holds span bytes. */
ERGON_API int ergon_jls_payload_check(const uint8_t *b, size_t span, uint32_t payload_length,
				      const char *where, struct ergon_err *err);
/* signal_id: the chunk's chunk_meta bits 7:0 (the payload does not hold it). */
ERGON_API int ergon_jls_signal_def_decode(const uint8_t *p, size_t len, uint16_t signal_id,
					  struct ergon_jls_signal *s, const char *where,
					  struct ergon_err *err);
/* Decode a DATA payload; entries must fit the payload
 * (entry_count * entry_size_bits / 8 <= len - 16). */
ERGON_API int ergon_jls_data_decode(const uint8_t *p, size_t len, struct ergon_jls_data *d,
				    const char *where, struct ergon_err *err);

/* A random-access byte source: read exactly len bytes at off, 0 or a
 * negative ERGON_E* (short reads are errors). */
struct ergon_jls_source {
	int (*read_at)(void *ctx, uint64_t off, void *buf, size_t len);
	void *ctx;
	uint64_t size;
	const char *name; /* for messages */
};

struct ergon_jls_reader;

/* Open: check the file header and walk every chunk header once, collecting
 * the source and signal definitions; stops at the first damaged chunk (the
 * rest of the file is ignored, with a warning). Caller frees with
 * ergon_jls_reader_free. Warnings are appended to the reader's typed warning
 * list (ergon_jls_reader_warnings), codes from the issue registry. */
ERGON_API int ergon_jls_reader_open(const struct ergon_jls_source *src,
				    struct ergon_jls_reader **out, struct ergon_err *err);
ERGON_API void ergon_jls_reader_free(struct ergon_jls_reader *r);
/* The signal with this name ("current", "gpi[0]"), or NULL. */
ERGON_API const struct ergon_jls_signal *ergon_jls_reader_signal(const struct ergon_jls_reader *r,
								 const char *name);
/* Source identity (name like "JS220-000415", vendor, model, serial); "" when absent. */
ERGON_API const char *ergon_jls_reader_source_field(const struct ergon_jls_reader *r,
						    const char *field);
/* The recording's first note kept as JSON text (a USER_DATA chunk of
 * storage type 3, what `ergon record` writes), NUL-terminated; NULL when
 * there is none. Valid until ergon_jls_reader_free. */
ERGON_API const char *ergon_jls_reader_note(const struct ergon_jls_reader *r);
/* Warnings gathered so far (at most 64), a typed list (ergon/issue_list.h)
 * the reader owns: valid until ergon_jls_reader_free, and it grows while
 * ergon_jls_reader_stream runs. Its oom flag says an entry was lost to
 * memory. */
ERGON_API const struct ergon_issue_list *
ergon_jls_reader_warnings(const struct ergon_jls_reader *r);

/* A block of time-aligned samples: n samples starting at sample index
 * first_index (0 = the first recorded sample). current/voltage are always
 * set; power is NULL when the recording has no power signal; gate_bits is
 * NULL when no gate signal was selected, else packed u1 (sample j of the
 * block is bit (gate_bit0 + j) % 8 of byte (gate_bit0 + j) / 8). */
struct ergon_jls_block {
	uint64_t first_index;
	size_t n;
	const float *current_a;
	const float *voltage_v;
	const float *power_w;
	const uint8_t *gate_bits;
	size_t gate_bit0;
	/* ergon_jls_reader_stream_lines only: line k of the lines asked for,
	 * packed u1 as gate_bits (bit (line_bit0[k] + j) % 8 of byte
	 * (line_bit0[k] + j) / 8); NULL for a line the recording lacks. */
	const uint8_t *line_bits[ERGON_JLS_LINES_MAX];
	size_t line_bit0[ERGON_JLS_LINES_MAX];
};

typedef int (*ergon_jls_block_fn)(void *ctx, const struct ergon_jls_block *b,
				  struct ergon_err *err);

/* Stream the f32 signals "current" and "voltage", "power" if present, and
 * the u1 signal gate_signal (e.g. "gpi[0]"; NULL or absent: no gate) as
 * aligned blocks, in order. Stops at the end of the shortest signal, or at
 * the first damaged or out-of-order chunk (a warning says where). A
 * callback error stops the stream and is returned. */
ERGON_API int ergon_jls_reader_stream(struct ergon_jls_reader *r, const char *gate_signal,
				      ergon_jls_block_fn fn, void *ctx, struct ergon_err *err);
/* The same, with up to ERGON_JLS_LINES_MAX u1 signals (e.g. "gpi[0]" ..
 * "gpi[7]") in the block's line_bits, in the order named; a name the
 * recording does not define streams as NULL bits (gate_bits stays NULL).
 * Every line present must have the current's sample rate. */
ERGON_API int ergon_jls_reader_stream_lines(struct ergon_jls_reader *r, const char *const *lines,
					    size_t n_lines, ergon_jls_block_fn fn, void *ctx,
					    struct ergon_err *err);
/* Sample rate of the streamed signals (from "current"). */
ERGON_API uint32_t ergon_jls_reader_sample_rate(const struct ergon_jls_reader *r);

/* The UTC track: JLS time is int64 34Q30 seconds since 2018-01-01T00:00:00Z.
 * Each UTC DATA entry maps a file sample id to a time; sample_id is the
 * same id relative to the signal's first recorded sample (the streamed
 * index). */
struct ergon_jls_utc_entry {
	int64_t sample_id;
	int64_t file_sample_id;
	int64_t utc_q30;
};
/* The first and last UTC entries of the named signal, in file order; returns
 * how many (0 when the signal has no UTC track or no DATA). */
ERGON_API size_t ergon_jls_reader_utc(const struct ergon_jls_reader *r, const char *signal,
				      struct ergon_jls_utc_entry out[2]);
/* JLS time of streamed sample 0 of "current", from its first UTC entry and
 * the sample rate; ERGON_ENOENT when the recording has no UTC entry. */
ERGON_API int ergon_jls_reader_start_utc(const struct ergon_jls_reader *r, int64_t *utc_q30);
/* JLS time as ISO 8601 UTC with microseconds ("2025-06-02T15:04:05.000000Z",
 * rounded to the nearest microsecond); ERGON_ERANGE when out of range. */
ERGON_API int ergon_jls_utc_iso(int64_t utc_q30, char *buf, size_t n);

/* The reader's byte source (valid until ergon_jls_reader_free) and the
 * offset after its last intact chunk: what ergon/jls_levels.h walks. */
ERGON_API const struct ergon_jls_source *ergon_jls_reader_source(const struct ergon_jls_reader *r);
ERGON_API uint64_t ergon_jls_reader_chunks_end(const struct ergon_jls_reader *r);

/* Open a file on disk (pread; the file is never written). */
ERGON_API int ergon_jls_file_open(const char *path, struct ergon_jls_reader **out,
				  struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

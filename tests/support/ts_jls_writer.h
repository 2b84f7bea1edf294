/* A small JLS writer for tests, fuzz seeds and benchmarks: a test tool, not
 * part of libergon (ergon only reads JLS). It writes the layout the
 * reference library writes for a Joulescope (source 1; FSR signals 1
 * current, 2 voltage, 3 power (optional) f32 and 4 gpi[0] u1 (optional);
 * interleaved DATA chunks; END), with correct CRC32C everywhere, and can
 * damage what it writes on request. */
#ifndef TS_JLS_WRITER_H
#define TS_JLS_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct ts_jls_spec {
	uint32_t rate_hz;
	uint64_t samples;
	uint32_t samples_per_data; /* f32 entries per DATA chunk; u1 chunks hold 8x */
	int64_t sample_id_offset;
	int with_power;
	int with_gate;
	/* sample k: current (A), voltage (V), gate level */
	double (*current_a)(uint64_t k, void *ctx);
	double (*voltage_v)(uint64_t k, void *ctx);
	int (*gate)(uint64_t k, void *ctx);
	void *ctx;
	uint32_t gate_data_type; /* 0 = u1; set e.g. 0x0403 to write an unknown type */
	int no_end;		 /* leave out END and the header's length (unclosed) */
	int backwards_at_chunk;	 /* >0: this f32 DATA chunk of current repeats ids */
};

/* Write to a sink: write(ctx, bytes, len) returns 0 on success. */
typedef int (*ts_jls_sink)(void *ctx, const void *buf, size_t len);
int ts_jls_write_sink(const struct ts_jls_spec *s, ts_jls_sink sink, void *sink_ctx,
		      uint64_t *total);
/* Write a file; 0 on success. */
int ts_jls_write_file(const char *path, const struct ts_jls_spec *s);
/* Build in memory (malloc'd, caller frees); NULL on failure. */
uint8_t *ts_jls_build(const struct ts_jls_spec *s, size_t *len);
/* CRC32C helper for tests that patch bytes and re-seal a header. */
uint32_t ts_crc32c(const void *buf, size_t len);
/* Re-seal the 32-byte chunk header at off after patching it. */
void ts_jls_reseal_header(uint8_t *file, size_t off);

#endif

/* The bridge protocol's wire format (docs/BRIDGE.md): JSON Lines from the
 * bridge's stdout split into lines and decoded into typed messages, and the
 * command lines ergon writes back. Pure: no I/O, so that the fuzzer and
 * the unit tests drive it with bytes. */
#ifndef ERGON_BRIDGE_WIRE_H
#define ERGON_BRIDGE_WIRE_H

#include "ergon/error.h"
#include "ergon/stream.h"

#include <stddef.h>
#include <stdint.h>

#define ERGON_BRIDGE_PROTOCOL 1
#define ERGON_BRIDGE_LINE_MAX ((size_t)1 << 20) /* bytes of one line, newline excluded */
#define ERGON_BRIDGE_RAW_MAX 65536		/* samples in one raw block */
#define ERGON_BRIDGE_IO_MAX 32			/* inputs / outputs */
#define ERGON_BRIDGE_APPEND_MAX 65536		/* bytes given to bridge_lines_append at once */
/* Statistics packets in one stats_block: with every field (16 float64 and
 * the u32 inputs, base64) 4096 packets are about 720 KB, under the line
 * limit. */
#define ERGON_BRIDGE_BLOCK_MAX 4096

enum bridge_msg_type {
	BRIDGE_MSG_NONE = 0,
	BRIDGE_MSG_HELLO,
	BRIDGE_MSG_STATS,
	BRIDGE_MSG_RAW,
	BRIDGE_MSG_GPI,
	BRIDGE_MSG_ACK,
	BRIDGE_MSG_HEARTBEAT,
	BRIDGE_MSG_DROPPED,
	BRIDGE_MSG_ERROR,
	BRIDGE_MSG_STATS_BLOCK,
};

struct bridge_hello {
	int protocol;
	char vendor[64], model[64], serial[64];
	double accuracy_pct;
	double resolution_a, resolution_w, resolution_j;
	double sample_rate_hz, stats_rate_hz;
	double heartbeat_s;
	char integrates[32];
	int provenance; /* enum ergon_provenance: measured or synthetic */
	int clock_host; /* 1: times are host CLOCK_MONOTONIC; 0: instrument clock */
	int stream_stats, stream_raw;
	int inputs, outputs, passthrough;
	char validated_against[192];
	char notes[256];
};

/* A raw block; the arrays are owned by the message (bridge_msg_cleanup). */
struct bridge_raw {
	uint64_t sample_id;
	double t_s;
	size_t n;
	float *current_a, *voltage_v, *power_w; /* voltage_v, power_w may be NULL */
	uint8_t *digital;			/* may be NULL */
};

/* A stats_block: n consecutive statistics packets of sample_count samples
 * each, packet k starting at sample_id + k * sample_count. The packets are
 * owned by the message (bridge_msg_cleanup); each has its sample_id set and
 * passed the same checks as a stats line. */
struct bridge_stats_block {
	uint64_t sample_count;
	size_t n;
	struct ergon_stats_packet *p;
};

struct bridge_msg {
	int type; /* enum bridge_msg_type */
	struct bridge_hello hello;
	struct ergon_stats_packet stats;
	uint64_t sample_count; /* stats: samples the packet covers */
	struct bridge_raw raw;
	struct bridge_stats_block block;
	int has_id;
	uint64_t id; /* ack, gpi */
	int ok;	     /* ack */
	int has_t;
	double t_s;	/* gpi */
	uint32_t value; /* gpi */
	uint64_t drop_sample_id, drop_count;
	char message[512]; /* ack (not ok), error */
};

/* Decode one line (without its newline) that starts at stream byte offset
 * `offset` and is line number `line_no` (1-based). 0 ok; ERGON_EPARSE with
 * a message naming the byte offset, line, column and field otherwise. On
 * success raw arrays are owned by m (bridge_msg_cleanup, also safe after a
 * failure). */
int bridge_wire_decode(const char *line, size_t len, uint64_t offset, uint64_t line_no,
		       struct bridge_msg *m, struct ergon_err *err);
void bridge_msg_cleanup(struct bridge_msg *m);
/* Non-zero: every line through jansson, no stats_block fast path (for the
 * fuzzer's and the benchmark's comparisons of the two; 0 by default). */
extern int bridge_wire_no_fast;

/* The line splitter: bytes in, complete lines out, bounded. */
struct bridge_lines {
	char *buf;	 /* owned; grows to ERGON_BRIDGE_LINE_MAX + 1 at most */
	size_t len, cap; /* bytes held, allocated */
	size_t pos;	 /* start of the next unread line in buf */
	uint64_t offset; /* stream offset of buf[0] */
	uint64_t line_no;
};

/* Append n <= ERGON_BRIDGE_APPEND_MAX bytes; take every complete line
 * with bridge_lines_next before the next append. ERGON_ETOOBIG when an
 * unterminated line exceeds ERGON_BRIDGE_LINE_MAX (the message names the
 * offset where it started), ERGON_ENOMEM. */
int bridge_lines_append(struct bridge_lines *l, const char *data, size_t n, struct ergon_err *err);
/* The next complete line: 1 with line, len, offset and line_no set (the
 * line stays valid until the next append), or 0 when more bytes are
 * needed. */
int bridge_lines_next(struct bridge_lines *l, const char **line, size_t *len, uint64_t *offset,
		      uint64_t *line_no);
/* Bytes held that do not end a line yet. */
size_t bridge_lines_pending(const struct bridge_lines *l);
void bridge_lines_free(struct bridge_lines *l);

/* Format the command line {"cmd":cmd,"id":id[,extra]}\n into buf.
 * extra is a JSON fragment such as "\"set\":1" or NULL. Returns the length
 * or -1 when it does not fit. */
int bridge_wire_command(char *buf, size_t cap, const char *cmd, uint64_t id, const char *extra);

#endif

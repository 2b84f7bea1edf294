/* RTT transport for the emitter: a SEGGER-layout control block in the
 * target's RAM, one up buffer (the HPX stream, target -> host) and one down
 * buffer (host commands, host -> target). The host finds the block by its
 * 16-byte ID ("SEGGER RTT") or at the symbol's address and drains the up
 * buffer over the debug port (ergon's rtt:gdb= transport, J-Link, OpenOCD,
 * pyOCD).
 *
 * Freestanding C11, no malloc: the caller owns the block and both buffers
 * (static storage). Not part of the dedicated power build.
 *
 * Layout (32-bit target, little-endian, the standard SEGGER one):
 *   char  id[16]                  "SEGGER RTT", NUL padded, written last
 *   int32 max_up, max_down        1, 1
 *   up[0], down[0]: 6 x 32-bit    name, buffer, size, wr_off, rd_off, flags
 * followed by ergon's extension (never read by other tools):
 *   uint32 ext_magic              ERT_RTT_EXT_MAGIC
 *   uint32 dropped                bytes dropped in ERT_RTT_DROP mode
 *
 * Full-buffer mode is configuration: ERT_RTT_BLOCK waits (bounded by
 * spin_max polls; 0: forever) for the host to drain; ERT_RTT_DROP drops the
 * whole write, counts the bytes in `dropped`, and at the next line start
 * writes "HPX_HEARTBEAT rtt_dropped bytes=N" into the stream, so a drop is
 * never silent.
 */
#ifndef ERT_RTT_H
#define ERT_RTT_H

#include <stddef.h>
#include <stdint.h>

#define ERT_RTT_ID_LEN 16
#define ERT_RTT_EXT_MAGIC 0x44475245u /* "ERGD" little-endian */
/* SEGGER's flag values for the mode bits. */
#define ERT_RTT_DROP 0u	 /* SEGGER_RTT_MODE_NO_BLOCK_SKIP */
#define ERT_RTT_BLOCK 2u /* SEGGER_RTT_MODE_BLOCK_IF_FIFO_FULL */

struct ert_rtt_buffer {
	const char *name;
	char *buf;
	uint32_t size;
	volatile uint32_t wr_off;
	volatile uint32_t rd_off;
	uint32_t flags;
};

struct ert_rtt_cb {
	volatile char id[ERT_RTT_ID_LEN];
	int32_t max_up;
	int32_t max_down;
	struct ert_rtt_buffer up[1];
	struct ert_rtt_buffer down[1];
	/* ergon extension */
	uint32_t ext_magic;
	volatile uint32_t dropped;
};

struct ert_rtt {
	struct ert_rtt_cb cb;
	uint32_t spin_max; /* ERT_RTT_BLOCK: polls before giving up, 0 = forever */
	uint32_t reported; /* dropped bytes already reported in the stream */
	int at_line_start; /* the last accepted write ended a line */
};

/* Initialise the block (the ID last, after a barrier, so a host never sees
 * a half-built block). up_size and down_size must be >= 2. */
void ert_rtt_init(struct ert_rtt *r, char *up, uint32_t up_size, char *down, uint32_t down_size,
		  uint32_t mode, uint32_t spin_max);
/* Write len bytes into the up buffer: 0 when all were accepted (or, in
 * drop mode, counted as dropped), -1 when a blocking write gave up. */
int ert_rtt_write(struct ert_rtt *r, const char *data, size_t len);
/* Bytes the host has not drained yet. */
uint32_t ert_rtt_pending(const struct ert_rtt *r);
/* Read up to cap bytes of host commands from the down buffer. */
size_t ert_rtt_read(struct ert_rtt *r, char *data, size_t cap);

#endif

/* rtt:gdb=HOST:PORT[,addr=0x...|search=START:LEN][,find_s=S][,poll_max_ms=M]
 *                   [,mem=auto|non_stop|running|halt]
 *
 * SEGGER RTT read over the GDB remote serial protocol: works with every
 * GDB server (QEMU's gdbstub, OpenOCD, pyOCD, Black Magic Probe, J-Link GDB
 * server). Background memory access where the server allows it: with
 * mem=auto (the default) a server that offers non-stop mode (QNonStop+ in
 * qSupported) is read while the target runs; otherwise the driver halts
 * the target (0x03) only for the reads and writes and continues it (`c`)
 * right after, because a plain all-stop GDB server (QEMU's gdbstub stops
 * the VM on any byte received while it runs) cannot read memory while the
 * core runs. mem=running reads an all-stop server while the target runs
 * (for servers documented to do so); mem=non_stop refuses a server without
 * non-stop mode; mem=halt always halts. The link statistics say which mode
 * was used and why (memory_access, memory_access_why).
 *
 * rtt:dev=DEVICE[,same options] reads through a GDB server on a serial
 * port (a Black Magic Probe's first port, already scanned and attached by
 * its lifecycle): raw mode, stale input flushed, acks kept on. The control block is found at addr=
 * (the
 * `_SEGGER_RTT` symbol: `arm-none-eabi-nm FW.elf | grep _SEGGER_RTT`) or by
 * searching search=START:LEN (default 0x20000000:0x80000) for its ID, and is
 * validated against that region before any buffer is read.
 *
 * Link statistics (ergon_transport_stats): bytes drained, polls, halts,
 * NAKs, bad checksums, dropped bytes the target counted, target resets
 * seen, and how the link ended. Dropped bytes or a reset make the capture
 * lossy (diagnostic), never silent.
 */
#ifndef ERGON_RTT_GDB_H
#define ERGON_RTT_GDB_H

#include "ergon/error.h"
#include "ergon/transport.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Open over an already-connected stream fd (tests, the fuzzer); arg is the
 * part after "gdb=HOST:PORT" (",addr=..." or ""). Takes ownership of fd,
 * also on failure. */
ERGON_API int ergon_rtt_gdb_open_fd(int fd, const char *what, const char *opts,
				    struct ergon_transport **out, struct ergon_err *err);
/* Write host commands into the down buffer (halting the target for it).
 * *written < len when the buffer is full. ERGON_EUSAGE for another
 * transport; ENOTSUP when the block has no down buffer. */
ERGON_API int ergon_rtt_gdb_write_down(struct ergon_transport *t, const void *data, size_t len,
				       size_t *written, struct ergon_err *err);

/* A bare GDB remote-protocol link to a probe's own GDB server on a serial
 * port (a Black Magic Probe), for its lifecycle: the RTT reader's framing,
 * checksums, NAK retries and bounds, with acks kept on. Opening sends
 * qSupported (the packet size). */
struct ergon_gdb_link;
/* *out is the caller's (ergon_gdb_link_close). */
ERGON_API int ergon_gdb_link_open_dev(const char *dev, struct ergon_gdb_link **out,
				      struct ergon_err *err);
/* The same over an already-open fd (tests, the fuzzer); takes ownership of
 * fd, also on failure. */
ERGON_API int ergon_gdb_link_open_fd(int fd, const char *what, struct ergon_gdb_link **out,
				     struct ergon_err *err);
/* Send a packet of len bytes (binary data already escaped: '#', '$', '}'
 * and '*' as '}' then the byte ^ 0x20) and receive its reply into reply
 * (NUL-terminated), waiting at most timeout_ms. Console output packets on
 * the way are kept for ergon_gdb_link_console. */
ERGON_API int ergon_gdb_link_cmd(struct ergon_gdb_link *l, const void *payload, size_t len,
				 char *reply, size_t cap, int timeout_ms, struct ergon_err *err);
/* The console output of the last command (borrowed, bounded). */
ERGON_API const char *ergon_gdb_link_console(const struct ergon_gdb_link *l);
/* The server's PacketSize (400 when it gave none). */
ERGON_API size_t ergon_gdb_link_packet_size(const struct ergon_gdb_link *l);
/* NULL is a no-op. */
ERGON_API void ergon_gdb_link_close(struct ergon_gdb_link *l);

#ifdef __cplusplus
}
#endif

#endif

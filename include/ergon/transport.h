/* Byte transports for firmware logs: one contract, bytes in.
 *
 *   file:PATH | -            replay a saved log (stdin for -)
 *   serial:DEVICE[,BAUD]     UART, J-Link VCOM, USB CDC (DTR asserted; the
 *                            port may vanish and return across a reset)
 *   tcp:HOST:PORT            J-Link RTT telnet, OpenOCD rtt server, QEMU chardev
 *   unix:PATH                QEMU chardev unix socket
 *   swo:SOURCE               ITM stimulus port 0 decoded from SOURCE, a file
 *                            or tcp:HOST:PORT trace server (lossy: diagnostic)
 *   rtt:gdb=HOST:PORT[,...]  SEGGER RTT read through a GDB server (ergon/rtt_gdb.h)
 *   rtt:dev=DEVICE[,...]     the same through a GDB server on a serial port (a
 *                            Black Magic Probe)
 *
 * Drivers never compute figures: they return bytes. Lines and the end
 * sentinel are the HPX parser's business (pipelines/hpx/hpx_capture.c).
 */
#ifndef ERGON_TRANSPORT_H
#define ERGON_TRANSPORT_H

#include "ergon/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ergon_transport_read's answer when the source has ended for good. */
#define ERGON_TRANSPORT_EOF 1

struct ergon_transport;

struct ergon_transport_driver {
	const char *name;     /* the spec prefix: "file", "serial", ... */
	const char *longname; /* one line for help */
	int (*open)(const char *arg, struct ergon_transport **out, struct ergon_err *err);
	/* Wait at most timeout_ms for bytes; *got = 0 on timeout. Returns 0,
	 * ERGON_TRANSPORT_EOF, or a negative ERGON_E*. */
	int (*read)(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got,
		    struct ergon_err *err);
	/* Link statistics (e.g. SWO overflow counts) as a new JSON object, or
	 * NULL when the driver has none. */
	json_t *(*stats)(const struct ergon_transport *t);
	/* True when the link lost or mangled data (the capture is diagnostic). */
	bool (*lossy)(const struct ergon_transport *t);
	void (*close)(struct ergon_transport *t);
	/* Optional, for transports that decode (SWO): write every raw byte read
	 * to fd before decoding, so a decoder fault loses nothing. */
	int (*set_raw_sink)(struct ergon_transport *t, int fd);
};

/* Every transport begins with this header so the generic calls can
 * dispatch. */
struct ergon_transport {
	const struct ergon_transport_driver *drv;
};

/* Open by spec (see above). Unknown prefixes are ERGON_EUSAGE naming the
 * known ones. *out is owned by the caller (ergon_transport_close). */
ERGON_API int ergon_transport_open(const char *spec, struct ergon_transport **out,
				   struct ergon_err *err);
ERGON_API int ergon_transport_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms,
				   size_t *got, struct ergon_err *err);
ERGON_API json_t *ergon_transport_stats(const struct ergon_transport *t);
ERGON_API bool ergon_transport_lossy(const struct ergon_transport *t);
/* NULL is a no-op. */
ERGON_API void ergon_transport_close(struct ergon_transport *t);
/* True when the transport decodes its link and can keep the raw bytes. */
ERGON_API bool ergon_transport_has_raw(const struct ergon_transport *t);
/* Give a decoding transport a file descriptor for its raw bytes (the
 * caller keeps ownership of fd). ERGON_ENOTSUP for plain byte transports. */
ERGON_API int ergon_transport_set_raw_sink(struct ergon_transport *t, int fd);

/* --- ITM (SWO) decoding, exposed for tests and tools -------------------- */
struct ergon_itm {
	int state;	/* decoder state */
	unsigned need;	/* payload/continuation bytes still expected */
	unsigned port;	/* stimulus port of the current packet */
	bool hw;	/* current source packet is a hardware (DWT) packet */
	unsigned zeros; /* consecutive zero bytes (sync detection) */
	bool synced;
	unsigned long long overflows;	/* overflow packets (0x70) */
	unsigned long long malformed;	/* reserved headers */
	unsigned long long other_ports; /* payload bytes of ports other than 0 */
	unsigned long long syncs;
};

/* Decode ITM bytes; port-0 stimulus payload bytes are appended to out (at
 * most cap; the caller gives cap >= 4 * len). Returns bytes written. */
ERGON_API size_t ergon_itm_decode(struct ergon_itm *d, const unsigned char *in, size_t len,
				  unsigned char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif

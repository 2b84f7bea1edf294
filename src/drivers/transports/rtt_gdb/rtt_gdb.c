/* rtt:gdb=HOST:PORT: SEGGER RTT over the GDB remote serial protocol (see
 * ergon/rtt_gdb.h). Packets are $payload#cc with a modulo-256 checksum,
 * acknowledged with +/- until QStartNoAckMode (when qSupported offers it).
 * Memory is read with `m` and written with `M`. How the target is treated
 * while the host reads (mem=, the link statistics' memory_access):
 *   non_stop       the server offered QNonStop+ and accepted QNonStop:1: the
 *                  target is resumed once (vCont;c, answered OK) and memory
 *                  is read while it runs; stop events arrive as %Stop:
 *                  notifications, are drained with vStopped and the target
 *                  is resumed again.
 *   running        (mem=running only) an all-stop server that the user says
 *                  reads memory while the target runs (J-Link GDB server,
 *                  OpenOCD and pyOCD do on Cortex-M through the AHB-AP): `c`
 *                  once, then `m`/`M` while it runs; a stop reply that arrives
 *                  instead of a memory reply is taken as the stop it is.
 *   halt_per_poll  otherwise: the target is interrupted (0x03) for each poll
 *                  and continued (`c`) after it, because an all-stop server
 *                  accepts no packet while the target runs (QEMU's gdbstub
 *                  stops the VM on any byte it receives then).
 *
 * A reset is detected three ways: the ID is gone; the up buffer moved,
 * changed size or its read offset is not the one the host wrote; or the
 * host's mark is gone. The mark is four bytes the host writes into the ID's
 * NUL padding (bytes 12..15, which no tool reads) when it finds the block;
 * a reboot rebuilds the block (ert_rtt_init clears all 16 ID bytes, and
 * SEGGER's own block lives in .bss, zeroed at boot), so a reset whose
 * stream lands on the same read offset is still seen. */
#include "ergon/rtt_gdb.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int ergon_socket_connect_tcp(const char *arg, char *what, size_t what_cap, int *fd_out,
			     struct ergon_err *err);

#define RSP_MAX 8192	    /* largest payload sent or accepted */
#define RSP_RETRIES 5	    /* retransmissions after a NAK, re-sends after a bad checksum */
#define RSP_TIMEOUT_MS 3000 /* a reply that takes longer: the server is gone */
#define CB_HDR 24u	    /* id[16] + max_up + max_down */
#define CB_DESC 24u	    /* name, buffer, size, wr_off, rd_off, flags */
#define CB_MAX_BUFS 16	    /* more up or down buffers than this: corrupt */
#define ID_LEN 11u	    /* "SEGGER RTT" and its NUL */
#define DEFAULT_START 0x20000000u
#define DEFAULT_LEN 0x80000u
#define EXT_MAGIC 0x44475245u /* ergon's extension after the block (ert_rtt.h) */
#define MARK_OFF 12u	      /* the host's mark: ID bytes 12..15 (NUL padding) */

/* mem=: how memory is read (see the top of this file). */
enum mem_mode { MEM_AUTO = 0, MEM_HALT, MEM_NONSTOP, MEM_RUNNING };
static const char *const mem_names[] = {"auto", "halt_per_poll", "non_stop", "running"};

static const char rtt_id[ID_LEN] = "SEGGER RTT";

struct desc {
	uint32_t addr; /* of the descriptor */
	uint32_t buf, size, wr, rd;
};

struct rtt {
	struct ergon_transport base;
	int fd;
	char what[300];
	/* RSP */
	unsigned char in[4096];
	size_t in_len, in_pos;
	bool noack, halted, closed;
	size_t packet_size, max_read;
	bool tty;	    /* a serial GDB port (a BMP): write(), acks stay on */
	char console[1024]; /* console output ("O" packets) since the last command */
	size_t console_len;
	int mem_want, mem; /* enum mem_mode: asked (mem=), used */
	char mem_why[160]; /* why that mode, for the link statistics */
	bool stop_pending; /* non-stop: a %Stop notification not yet drained */
	unsigned long long notifications;
	/* the block */
	uint32_t start, len, cb_addr;
	bool have_addr, found;
	int max_up, max_down;
	struct desc up, down;
	uint32_t last_rd;
	unsigned char mark[4]; /* "erg" + an epoch byte that is never 0 */
	bool marked;	       /* the mark was written into the block */
	bool mark_seen;	       /* load_block found it */
	bool have_ext;
	uint32_t ext_dropped;
	double find_s;
	/* polling */
	int poll_ms, poll_max_ms;
	/* statistics */
	unsigned long long bytes, polls, halts, naks, bad_checksums, dropped, resets;
	double poll_s_total;
	const char *end;
	/* I/O buffers (per transport: no static state) */
	char frame[RSP_MAX + 4];
	char reply[RSP_MAX + 1];
	char wcmd[RSP_MAX + 1];
	unsigned char chunk[4096 + ID_LEN];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ RSP */

static int conn_closed(struct rtt *r, struct ergon_err *err)
{
	r->closed = true;
	if (!r->end)
		r->end = "server_closed";
	return ergon_err_set(err, ERGON_EIO, "%s: the GDB server closed the connection", r->what);
}

/* One byte within timeout_ms: 0, ETIMEDOUT, or EIO (closed). */
static int get_byte(struct rtt *r, int timeout_ms, unsigned char *c, struct ergon_err *err)
{
	if (r->in_pos == r->in_len) {
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		int n;
		do
			n = poll(&p, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return ergon_err_errno(err, errno, "%s: poll", r->what);
		if (n == 0)
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "%s: no reply from the GDB server within %d ms",
					     r->what, timeout_ms);
		ssize_t got;
		do
			got = read(r->fd, r->in, sizeof r->in);
		while (got < 0 && errno == EINTR);
		if (got <= 0)
			return conn_closed(r, err);
		r->in_len = (size_t)got;
		r->in_pos = 0;
	}
	*c = r->in[r->in_pos++];
	return 0;
}

static int send_raw(struct rtt *r, const char *data, size_t len, struct ergon_err *err)
{
	while (len > 0) {
		ssize_t n = r->tty ? write(r->fd, data, len) : send(r->fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return conn_closed(r, err);
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Send payload (n bytes: binary data is escaped by the caller). */
static int send_packet_n(struct rtt *r, const char *payload, size_t n, struct ergon_err *err)
{
	char *frame = r->frame;
	if (n > RSP_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: packet of %zu bytes", r->what, n);
	unsigned sum = 0;
	frame[0] = '$';
	for (size_t i = 0; i < n; i++) {
		frame[1 + i] = payload[i];
		sum += (unsigned char)payload[i];
	}
	snprintf(frame + 1 + n, 4, "#%02x", sum & 0xFFu);
	for (int attempt = 0;; attempt++) {
		int rc = send_raw(r, frame, n + 4, err);
		if (rc || r->noack)
			return rc;
		unsigned char c = 0;
		do {
			rc = get_byte(r, RSP_TIMEOUT_MS, &c, err);
			if (rc)
				return rc;
		} while (c != '+' && c != '-');
		if (c == '+')
			return 0;
		r->naks++;
		if (attempt + 1 >= RSP_RETRIES)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the GDB server NAKed packet '%.32s' %d times; "
					     "check the link (a noisy serial GDB port?)",
					     r->what, payload, RSP_RETRIES);
	}
}

static int send_packet(struct rtt *r, const char *payload, struct ergon_err *err)
{
	return send_packet_n(r, payload, strlen(payload), err);
}

/* A non-stop notification (%Name:payload): a stop is drained later with
 * vStopped (stop_pending); the target's exit ends the link. Others are
 * ignored, as the protocol allows. */
static void take_notification(struct rtt *r, const char *note)
{
	r->notifications++;
	if (strncmp(note, "Stop:", 5) != 0)
		return;
	if (note[5] == 'W' || note[5] == 'X') {
		r->closed = true;
		r->end = "target_exited";
	} else if (note[5] == 'T' || note[5] == 'S')
		r->halted = true;
	r->stop_pending = true;
}

/* One frame: a packet ($, *note false) or a notification (%, *note true),
 * its payload into out (NUL-terminated). A packet with a bad checksum is
 * NAKed and the retransmission awaited; in no-ack mode it is ERGON_EPARSE
 * (the caller re-sends its command). A notification is never acknowledged
 * (the protocol's rule); one with a bad checksum is taken as a stop, which
 * costs one vStopped at worst. */
static int recv_frame(struct rtt *r, char *out, size_t cap, size_t *len, bool *note, int timeout_ms,
		      struct ergon_err *err)
{
	for (int bad = 0;;) {
		unsigned char c = 0;
		int rc;
		do {
			rc = get_byte(r, timeout_ms, &c, err);
			if (rc)
				return rc;
		} while (c != '$' && c != '%');
		*note = c == '%';
		size_t n = 0;
		unsigned sum = 0;
		bool esc = false, too_long = false;
		for (;;) {
			rc = get_byte(r, timeout_ms, &c, err);
			if (rc)
				return rc;
			if (c == '#')
				break;
			sum += c;
			if (esc) {
				c ^= 0x20;
				esc = false;
			} else if (c == '}') {
				esc = true;
				continue;
			} else if (c == '*' && n > 0) {
				/* run-length: the previous character c-29 more times */
				unsigned char k = 0;
				rc = get_byte(r, timeout_ms, &k, err);
				if (rc)
					return rc;
				sum += k;
				int rep = (int)k - 29;
				for (int i = 0; i < rep && !too_long; i++) {
					if (n + 1 >= cap)
						too_long = true;
					else {
						out[n] = out[n - 1];
						n++;
					}
				}
				continue;
			}
			if (n + 1 >= cap)
				too_long = true;
			else
				out[n++] = (char)c;
		}
		unsigned char h1 = 0, h2 = 0;
		if ((rc = get_byte(r, timeout_ms, &h1, err)) ||
		    (rc = get_byte(r, timeout_ms, &h2, err)))
			return rc;
		out[n] = '\0';
		int v1 = hexval(h1), v2 = hexval(h2);
		bool sum_ok = v1 >= 0 && v2 >= 0 && (unsigned)(v1 * 16 + v2) == (sum & 0xFFu);
		if (*note) {
			if (!sum_ok) {
				r->bad_checksums++;
				snprintf(out, cap, "Stop:?");
			}
			*len = strlen(out);
			return 0;
		}
		if (!sum_ok) {
			r->bad_checksums++;
			if (r->noack)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s: reply with a bad checksum in no-ack mode",
						     r->what);
			if (++bad > RSP_RETRIES)
				return ergon_err_set(err, ERGON_EIO,
						     "%s: %d replies in a row with bad checksums; "
						     "check the link",
						     r->what, bad);
			if ((rc = send_raw(r, "-", 1, err)))
				return rc;
			continue;
		}
		if (!r->noack && (rc = send_raw(r, "+", 1, err)))
			return rc;
		if (too_long)
			return ergon_err_set(err, ERGON_ETOOBIG,
					     "%s: reply longer than %zu bytes from the GDB server",
					     r->what, cap - 1);
		/* "O<hex>" is console output from the target, not a reply. */
		if (out[0] == 'O' && n > 1 && strcmp(out, "OK") != 0 &&
		    hexval((unsigned char)out[1]) >= 0) {
			/* Kept (bounded) for ergon_gdb_link_console. */
			for (size_t i = 1; i + 1 < n; i += 2) {
				int hi = hexval((unsigned char)out[i]),
				    lo = hexval((unsigned char)out[i + 1]);
				if (hi < 0 || lo < 0 || r->console_len + 1 >= sizeof r->console)
					break;
				r->console[r->console_len++] = (char)(hi * 16 + lo);
			}
			r->console[r->console_len] = '\0';
			continue;
		}
		*len = n;
		return 0;
	}
}

/* One packet's payload into out; notifications on the way are taken. */
static int recv_packet(struct rtt *r, char *out, size_t cap, size_t *len, int timeout_ms,
		       struct ergon_err *err)
{
	for (;;) {
		bool note = false;
		int rc = recv_frame(r, out, cap, len, &note, timeout_ms, err);
		if (rc || !note)
			return rc;
		take_notification(r, out);
	}
}

static bool is_stop_reply(const char *reply)
{
	return reply[0] == 'T' || reply[0] == 'S' || reply[0] == 'W' || reply[0] == 'X';
}

/* Send a command and receive its reply, re-sending on a bad checksum in
 * no-ack mode (every command used here is idempotent). */
static int command_n(struct rtt *r, const char *payload, size_t n, char *reply, size_t cap,
		     size_t *len, int timeout_ms, struct ergon_err *err)
{
	for (int attempt = 0;; attempt++) {
		int rc = send_packet_n(r, payload, n, err);
		if (rc)
			return rc;
		rc = recv_packet(r, reply, cap, len, timeout_ms, err);
		/* mem=running: the target stopped on its own while it ran and
		 * the stop reply came first; the command's own reply follows
		 * (memory replies never begin with T, S, W or X). */
		while (!rc && r->mem == MEM_RUNNING && !r->halted && payload[0] != '?' &&
		       is_stop_reply(reply)) {
			if (reply[0] == 'W' || reply[0] == 'X') {
				r->closed = true;
				r->end = "target_exited";
				return ergon_err_set(err, ERGON_EIO,
						     "%s: the target exited ('%.16s')", r->what,
						     reply);
			}
			r->halted = true;
			rc = recv_packet(r, reply, cap, len, timeout_ms, err);
		}
		if (rc != ERGON_EPARSE || attempt + 1 >= RSP_RETRIES)
			return rc;
	}
}

static int command(struct rtt *r, const char *payload, char *reply, size_t cap, size_t *len,
		   struct ergon_err *err)
{
	return command_n(r, payload, strlen(payload), reply, cap, len, RSP_TIMEOUT_MS, err);
}

static int read_mem(struct rtt *r, uint32_t addr, void *buf, size_t len, struct ergon_err *err)
{
	char *reply = r->reply;
	unsigned char *b = buf;
	while (len > 0) {
		size_t n = len < r->max_read ? len : r->max_read;
		char cmd[40];
		snprintf(cmd, sizeof cmd, "m%x,%zx", addr, n);
		size_t rl = 0;
		int rc = command(r, cmd, reply, RSP_MAX + 1, &rl, err);
		if (rc)
			return rc;
		if (rl == 0 || reply[0] == 'E' || rl % 2 != 0 || rl / 2 > n)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the GDB server did not read %zu bytes at 0x%08x "
					     "(reply '%.16s'); is the address mapped?",
					     r->what, n, addr, reply);
		for (size_t i = 0; i < rl / 2; i++) {
			int hi = hexval((unsigned char)reply[2 * i]),
			    lo = hexval((unsigned char)reply[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s: memory read at 0x%08x: reply is not hex "
						     "at byte %zu",
						     r->what, addr, 2 * i);
			b[i] = (unsigned char)(hi * 16 + lo);
		}
		b += rl / 2;
		addr += (uint32_t)(rl / 2);
		len -= rl / 2;
	}
	return 0;
}

static int write_mem(struct rtt *r, uint32_t addr, const void *buf, size_t len,
		     struct ergon_err *err)
{
	char *cmd = r->wcmd;
	const unsigned char *b = buf;
	while (len > 0) {
		size_t n = len < r->max_read ? len : r->max_read;
		int k = snprintf(cmd, RSP_MAX + 1, "M%x,%zx:", addr, n);
		for (size_t i = 0; i < n; i++)
			snprintf(cmd + k + 2 * i, 3, "%02x", b[i]);
		char reply[64];
		size_t rl = 0;
		int rc = command(r, cmd, reply, sizeof reply, &rl, err);
		if (rc)
			return rc;
		if (strcmp(reply, "OK") != 0)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the GDB server refused to write %zu bytes at "
					     "0x%08x (reply '%.16s')",
					     r->what, n, addr, reply);
		b += n;
		addr += (uint32_t)n;
		len -= n;
	}
	return 0;
}

static int wait_stop(struct rtt *r, struct ergon_err *err)
{
	char reply[512];
	for (;;) {
		size_t rl = 0;
		int rc = recv_packet(r, reply, sizeof reply, &rl, RSP_TIMEOUT_MS, err);
		if (rc == ERGON_EPARSE) /* bad checksum, no-ack: ask again */
			rc = command(r, "?", reply, sizeof reply, &rl, err);
		if (rc)
			return rc;
		if (reply[0] == 'W' || reply[0] == 'X') {
			r->closed = true;
			r->end = "target_exited";
			return ergon_err_set(err, ERGON_EIO, "%s: the target exited ('%.16s')",
					     r->what, reply);
		}
		if (reply[0] == 'T' || reply[0] == 'S') {
			r->halted = true;
			return 0;
		}
	}
}

/* Halt for a read: only in halt_per_poll mode (the others read while the
 * target runs). */
static int halt(struct rtt *r, struct ergon_err *err)
{
	if (r->halted || r->mem != MEM_HALT)
		return 0;
	int rc = send_raw(r, "\x03", 1, err);
	if (rc)
		return rc;
	r->halts++;
	return wait_stop(r, err);
}

/* Non-stop: drain the stop events (vStopped until OK; the target's exit
 * ends the link) so that the stopped target can be resumed. */
static int settle(struct rtt *r, struct ergon_err *err)
{
	char reply[512];
	for (int i = 0; r->stop_pending && !r->closed; i++) {
		size_t rl = 0;
		if (i > 64)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the server reported more than 64 stopped threads "
					     "to vStopped; is it a non-stop server?",
					     r->what);
		int rc = command(r, "vStopped", reply, sizeof reply, &rl, err);
		if (rc)
			return rc;
		if (strcmp(reply, "OK") == 0 || reply[0] == 'E' || rl == 0)
			r->stop_pending = false;
		else if (reply[0] == 'W' || reply[0] == 'X') {
			r->closed = true;
			r->end = "target_exited";
		} else if (reply[0] == 'T' || reply[0] == 'S')
			r->halted = true;
	}
	if (r->closed && r->end && strcmp(r->end, "target_exited") == 0)
		return ergon_err_set(err, ERGON_EIO, "%s: the target exited", r->what);
	return 0;
}

static int resume(struct rtt *r, struct ergon_err *err)
{
	if (r->mem == MEM_NONSTOP) {
		int rc = settle(r, err);
		if (rc || !r->halted)
			return rc;
		char reply[64];
		size_t rl = 0;
		rc = command(r, "vCont;c", reply, sizeof reply, &rl, err);
		if (!rc && strcmp(reply, "OK") != 0)
			return ergon_err_set(err, ERGON_EIO,
					     "%s: the non-stop server refused vCont;c (reply "
					     "'%.16s'); use mem=halt",
					     r->what, reply);
		if (!rc)
			r->halted = false;
		return rc;
	}
	if (!r->halted)
		return 0;
	int rc = send_packet(r, "c", err);
	if (!rc)
		r->halted = false;
	return rc;
}

/* ------------------------------------------------------------- the block */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool in_region(const struct rtt *r, uint32_t a, uint32_t n)
{
	uint64_t end = (uint64_t)r->start + r->len;
	return a >= r->start && (uint64_t)a + n <= end;
}

static int check_desc(struct rtt *r, const char *which, const unsigned char *p, uint32_t daddr,
		      struct desc *d, struct ergon_err *err)
{
	d->addr = daddr;
	d->buf = le32(p + 4);
	d->size = le32(p + 8);
	d->wr = le32(p + 12);
	d->rd = le32(p + 16);
	const char *fix = "the block is corrupt (or not RTT): give the right addr= or rebuild the "
			  "firmware";
	if (d->size == 0)
		return ergon_err_set(err, ERGON_EPARSE, "%s: RTT block at 0x%08x: %s.size is 0; %s",
				     r->what, r->cb_addr, which, fix);
	if (!in_region(r, d->buf, d->size))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: RTT block at 0x%08x: %s.buffer 0x%08x+%u is outside "
				     "RAM 0x%08x..0x%08llx (search=START:LEN sets it); %s",
				     r->what, r->cb_addr, which, d->buf, d->size, r->start,
				     (unsigned long long)r->start + r->len, fix);
	if (d->wr >= d->size)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: RTT block at 0x%08x: %s.wr_off %u is not below size %u; %s", r->what,
		    r->cb_addr, which, d->wr, d->size, fix);
	if (d->rd >= d->size)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: RTT block at 0x%08x: %s.rd_off %u is not below size %u; %s", r->what,
		    r->cb_addr, which, d->rd, d->size, fix);
	return 0;
}

/* Read and validate the block at r->cb_addr. *gone: the ID is not there. */
static int load_block(struct rtt *r, bool *gone, struct ergon_err *err)
{
	unsigned char img[CB_HDR + CB_DESC * 2 * CB_MAX_BUFS + 8];
	*gone = false;
	int rc = read_mem(r, r->cb_addr, img, CB_HDR, err);
	if (rc)
		return rc;
	if (memcmp(img, rtt_id, ID_LEN) != 0) {
		*gone = true;
		return 0;
	}
	r->mark_seen = r->marked && memcmp(img + MARK_OFF, r->mark, sizeof r->mark) == 0;
	int32_t mu = (int32_t)le32(img + 16), md = (int32_t)le32(img + 20);
	if (mu < 1 || mu > CB_MAX_BUFS)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: RTT block at 0x%08x: max_up = %d, expected 1..%d; the "
				     "block is corrupt (or not RTT)",
				     r->what, r->cb_addr, mu, CB_MAX_BUFS);
	if (md < 0 || md > CB_MAX_BUFS)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: RTT block at 0x%08x: max_down = %d, expected 0..%d; the "
				     "block is corrupt (or not RTT)",
				     r->what, r->cb_addr, md, CB_MAX_BUFS);
	uint32_t total = CB_HDR + CB_DESC * (uint32_t)(mu + md) + 8u;
	if (!in_region(r, r->cb_addr, total))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: RTT block at 0x%08x (%u bytes with %d up and %d down "
				     "buffers) is outside RAM 0x%08x..0x%08llx",
				     r->what, r->cb_addr, total, mu, md, r->start,
				     (unsigned long long)r->start + r->len);
	rc = read_mem(r, r->cb_addr + CB_HDR, img + CB_HDR, total - CB_HDR, err);
	if (rc)
		return rc;
	r->max_up = mu;
	r->max_down = md;
	rc = check_desc(r, "up[0]", img + CB_HDR, r->cb_addr + CB_HDR, &r->up, err);
	if (!rc && md > 0) {
		uint32_t off = CB_HDR + CB_DESC * (uint32_t)mu;
		rc = check_desc(r, "down[0]", img + off, r->cb_addr + off, &r->down, err);
	}
	if (rc)
		return rc;
	const unsigned char *ext = img + total - 8u;
	r->have_ext = le32(ext) == EXT_MAGIC;
	if (r->have_ext) {
		uint32_t d = le32(ext + 4);
		if (d >= r->ext_dropped)
			r->dropped += d - r->ext_dropped;
		else
			r->dropped += d; /* the counter restarted: a reset */
		r->ext_dropped = d;
	}
	return 0;
}

/* Write a fresh mark into the block just found (target halted). */
static int stamp(struct rtt *r, struct ergon_err *err)
{
	r->mark[0] = 'e';
	r->mark[1] = 'r';
	r->mark[2] = 'g';
	r->mark[3] = (unsigned char)(r->mark[3] == 0xFF ? 1 : r->mark[3] + 1);
	int rc = write_mem(r, r->cb_addr + MARK_OFF, r->mark, sizeof r->mark, err);
	r->marked = rc == 0;
	return rc;
}

/* Look for the ID in [start, start+len), target halted. */
static int search(struct rtt *r, bool *hit, struct ergon_err *err)
{
	unsigned char *chunk = r->chunk;
	*hit = false;
	if (r->have_addr) {
		bool gone = false;
		int rc = load_block(r, &gone, err);
		*hit = !rc && !gone;
		return rc;
	}
	/* Chunks overlap by ID_LEN - 1 bytes: an ID across a boundary is seen. */
	size_t n_max = r->max_read < 4096 ? r->max_read : 4096;
	size_t step = n_max - (ID_LEN - 1);
	for (uint64_t a = r->start; a + ID_LEN <= (uint64_t)r->start + r->len; a += step) {
		size_t n = n_max;
		if (a + n > (uint64_t)r->start + r->len)
			n = (size_t)((uint64_t)r->start + r->len - a);
		int rc = read_mem(r, (uint32_t)a, chunk, n, err);
		if (rc)
			return rc;
		for (size_t i = 0; i + ID_LEN <= n; i++) {
			if (chunk[i] == 'S' && memcmp(chunk + i, rtt_id, ID_LEN) == 0) {
				r->cb_addr = (uint32_t)(a + i);
				bool gone = false;
				rc = load_block(r, &gone, err);
				*hit = !rc && !gone;
				return rc;
			}
		}
	}
	return 0;
}

/* Find the block, letting the target run between attempts (it creates the
 * block at boot). Leaves the target running. */
static int find_block(struct rtt *r, struct ergon_err *err)
{
	double t0 = now_s();
	for (;;) {
		bool hit = false;
		int rc = halt(r, err);
		if (!rc)
			rc = search(r, &hit, err);
		if (rc)
			return rc;
		if (hit) {
			r->found = true;
			r->last_rd = r->up.rd;
			if ((rc = stamp(r, err)))
				return rc;
			return resume(r, err);
		}
		if ((rc = resume(r, err)))
			return rc;
		if (now_s() - t0 >= r->find_s)
			break;
		usleep(20000);
	}
	if (r->have_addr)
		return ergon_err_set(
		    err, ERGON_ENOENT,
		    "%s: no RTT control block (ID \"SEGGER RTT\") at addr=0x%08x "
		    "after %.1f s; check the address (arm-none-eabi-nm FW.elf | grep "
		    "_SEGGER_RTT) or drop addr= to search RAM",
		    r->what, r->cb_addr, r->find_s);
	return ergon_err_set(err, ERGON_ENOENT,
			     "%s: no RTT control block (ID \"SEGGER RTT\") in 0x%08x..0x%08llx "
			     "after %.1f s of searching; give its address with addr=0x... "
			     "(arm-none-eabi-nm FW.elf | grep _SEGGER_RTT) or the RAM range with "
			     "search=START:LEN, and check that the firmware initialises RTT",
			     r->what, r->start, (unsigned long long)r->start + r->len, r->find_s);
}

/* One poll: halt, re-read the block, drain up to cap bytes, continue. */
static int poll_once(struct rtt *r, unsigned char *buf, size_t cap, size_t *got,
		     struct ergon_err *err)
{
	double t0 = now_s();
	r->polls++;
	int rc = halt(r, err);
	if (rc)
		return rc;
	bool gone = false;
	if (r->found) {
		uint32_t old_buf = r->up.buf, old_size = r->up.size;
		rc = load_block(r, &gone, err);
		if (rc)
			return rc;
		if (!gone && (r->up.buf != old_buf || r->up.size != old_size ||
			      r->up.rd != r->last_rd || (r->marked && !r->mark_seen))) {
			/* Re-initialised under us (a reset): take its state. */
			r->resets++;
			r->last_rd = r->up.rd;
			if ((rc = stamp(r, err)))
				return rc;
		}
	}
	if (!r->found || gone) {
		if (gone)
			r->resets++;
		r->found = false;
		bool hit = false;
		rc = search(r, &hit, err);
		if (rc)
			return rc;
		if (!hit)
			return resume(r, err);
		r->found = true;
		r->last_rd = r->up.rd;
		if ((rc = stamp(r, err)))
			return rc;
	}
	struct desc *u = &r->up;
	uint32_t pending = u->wr >= u->rd ? u->wr - u->rd : u->size - u->rd + u->wr;
	uint32_t n = pending < cap ? pending : (uint32_t)cap;
	if (n > 0) {
		uint32_t first = u->size - u->rd < n ? u->size - u->rd : n;
		rc = read_mem(r, u->buf + u->rd, buf, first, err);
		if (!rc && n > first)
			rc = read_mem(r, u->buf, buf + first, n - first, err);
		if (rc)
			return rc;
		*got = n;
		r->bytes += n;
		uint32_t rd = (u->rd + n) % u->size;
		unsigned char le[4] = {(unsigned char)rd, (unsigned char)(rd >> 8),
				       (unsigned char)(rd >> 16), (unsigned char)(rd >> 24)};
		rc = write_mem(r, u->addr + 16u, le, 4, err);
		if (rc)
			return rc;
		u->rd = rd;
		r->last_rd = rd;
	}
	rc = resume(r, err);
	r->poll_s_total += now_s() - t0;
	return rc;
}

/* ------------------------------------------------------------- transport */

static int parse_u32(const char *s, size_t n, uint32_t *v)
{
	char tmp[24];
	if (n == 0 || n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long x = strtoull(tmp, &end, 0);
	if (errno || *end || tmp[0] == '-' || x > 0xFFFFFFFFull)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_opts(struct rtt *r, const char *opts, struct ergon_err *err)
{
	const char *usage = "expected rtt:gdb=HOST:PORT[,addr=0x...|search=START:LEN][,find_s=S]"
			    "[,poll_max_ms=M][,mem=auto|non_stop|running|halt]";
	const char *p = opts;
	while (*p) {
		if (*p != ',')
			return ergon_err_set(err, ERGON_EUSAGE, "%s: '%s': %s", r->what, p, usage);
		p++;
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (!eq)
			return ergon_err_set(err, ERGON_EUSAGE,
					     "%s: option '%.*s' has no value; %s", r->what, (int)n,
					     p, usage);
		size_t kl = (size_t)(eq - p), vl = n - kl - 1;
		const char *v = eq + 1;
		uint32_t x = 0, y = 0;
		int bad = 0;
		if (kl == 4 && memcmp(p, "addr", 4) == 0) {
			bad = parse_u32(v, vl, &x);
			r->cb_addr = x;
			r->have_addr = true;
		} else if (kl == 6 && memcmp(p, "search", 6) == 0) {
			const char *c = memchr(v, ':', vl);
			bad = !c || parse_u32(v, (size_t)(c - v), &x) ||
			      parse_u32(c + 1, vl - (size_t)(c - v) - 1, &y) || y < ID_LEN;
			r->start = x;
			r->len = y;
		} else if (kl == 6 && memcmp(p, "find_s", 6) == 0) {
			bad = parse_u32(v, vl, &x) || x > 3600;
			r->find_s = x;
		} else if (kl == 3 && memcmp(p, "mem", 3) == 0) {
			bad = 1;
			for (int m = 0; m < 4; m++)
				if (strlen(mem_names[m]) == vl &&
				    memcmp(v, mem_names[m], vl) == 0) {
					r->mem_want = m;
					bad = 0;
				}
			if (vl == 4 && memcmp(v, "halt", 4) == 0) {
				r->mem_want = MEM_HALT;
				bad = 0;
			}
		} else if (kl == 11 && memcmp(p, "poll_max_ms", 11) == 0) {
			bad = parse_u32(v, vl, &x) || x < 1 || x > 10000;
			r->poll_max_ms = (int)x;
		} else {
			return ergon_err_set(err, ERGON_EUSAGE, "%s: unknown option '%.*s'; %s",
					     r->what, (int)kl, p, usage);
		}
		if (bad)
			return ergon_err_set(err, ERGON_EUSAGE, "%s: bad value in '%.*s'; %s",
					     r->what, (int)n, p, usage);
		p += n;
	}
	if (r->have_addr && !in_region(r, r->cb_addr, CB_HDR))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: addr=0x%08x is outside RAM 0x%08x..0x%08llx; set the RAM "
				     "range with search=START:LEN",
				     r->what, r->cb_addr, r->start,
				     (unsigned long long)r->start + r->len);
	return 0;
}

/* The memory-access mode (mem=, and what qSupported offered); after
 * QStartNoAckMode, before `?`. */
static int choose_mem(struct rtt *r, bool offered, struct ergon_err *err)
{
	char reply[64];
	size_t rl = 0;
	r->mem = MEM_HALT;
	if (r->mem_want == MEM_HALT) {
		snprintf(r->mem_why, sizeof r->mem_why,
			 "mem=halt: the target is halted for each poll");
		return 0;
	}
	if (r->mem_want == MEM_RUNNING) {
		r->mem = MEM_RUNNING;
		snprintf(r->mem_why, sizeof r->mem_why,
			 "mem=running: the server is said to read memory while the target runs");
		return 0;
	}
	if (!offered) {
		if (r->mem_want == MEM_NONSTOP)
			return ergon_err_set(
			    err, ERGON_ENOTSUP,
			    "%s: mem=non_stop, but the server's qSupported reply "
			    "has no QNonStop+; use mem=auto (halt for each poll) or "
			    "mem=running if the server reads memory while the "
			    "target runs",
			    r->what);
		snprintf(r->mem_why, sizeof r->mem_why,
			 "the server offers no non-stop mode (no QNonStop+ in qSupported): the "
			 "target is halted for each poll");
		return 0;
	}
	int rc = command(r, "QNonStop:1", reply, sizeof reply, &rl, err);
	if (rc)
		return rc;
	if (strcmp(reply, "OK") == 0) {
		r->mem = MEM_NONSTOP;
		snprintf(r->mem_why, sizeof r->mem_why,
			 "the server offered QNonStop+ and accepted QNonStop:1: memory is read "
			 "while the target runs");
		return 0;
	}
	if (r->mem_want == MEM_NONSTOP)
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "%s: mem=non_stop, but the server refused QNonStop:1 (reply "
				     "'%.16s'); use mem=auto",
				     r->what, reply);
	snprintf(r->mem_why, sizeof r->mem_why,
		 "the server offered QNonStop+ but refused QNonStop:1 ('%.16s'): the target "
		 "is halted for each poll",
		 reply);
	return 0;
}

/* qSupported: the packet size (and so the largest memory read). */
static int hello(struct rtt *r, struct ergon_err *err)
{
	char *reply = r->reply;
	size_t rl = 0;
	int rc = command(r, "qSupported:swbreak+;hwbreak+", reply, RSP_MAX + 1, &rl, err);
	if (rc)
		return rc;
	r->packet_size = 400; /* the protocol's floor when none is given */
	const char *ps = strstr(reply, "PacketSize=");
	if (ps) {
		unsigned long long v = strtoull(ps + 11, NULL, 16);
		if (v >= 64)
			r->packet_size = v > RSP_MAX ? RSP_MAX : (size_t)v;
	}
	r->max_read = (r->packet_size - 8) / 2;
	return 0;
}

static int handshake(struct rtt *r, struct ergon_err *err)
{
	char *reply = r->reply;
	size_t rl = 0;
	int rc = hello(r, err);
	if (rc)
		return rc;
	bool nonstop = strstr(reply, "QNonStop+") != NULL;
	/* On a serial GDB port the acks stay on: they recover a corrupted
	 * byte, and a probe keeps its mode across our two sessions (the
	 * lifecycle's and the capture's). */
	if (strstr(reply, "QStartNoAckMode+") && !r->tty) {
		rc = command(r, "QStartNoAckMode", reply, RSP_MAX + 1, &rl, err);
		if (rc)
			return rc;
		if (strcmp(reply, "OK") == 0)
			r->noack = true;
	}
	rc = choose_mem(r, nonstop, err);
	if (rc)
		return rc;
	/* The stop reason: all-stop, the target is halted now; non-stop, the
	 * first stopped thread (the rest come from vStopped) or OK when every
	 * thread runs. */
	rc = command(r, "?", reply, RSP_MAX + 1, &rl, err);
	if (rc)
		return rc;
	if (reply[0] == 'W' || reply[0] == 'X')
		return ergon_err_set(err, ERGON_EIO, "%s: the target has exited ('%.16s')", r->what,
				     reply);
	if (r->mem == MEM_NONSTOP) {
		r->halted = strcmp(reply, "OK") != 0;
		r->stop_pending = r->halted;
		return 0;
	}
	r->halted = true;
	return 0;
}

static void rtt_free(struct rtt *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* A transport with its options parsed, not yet connected (fd -1). */
static int rtt_new(const char *what, const char *opts, struct rtt **out, struct ergon_err *err)
{
	*out = NULL;
	struct rtt *r = calloc(1, sizeof *r);
	if (!r)
		return ergon_err_set(err, ERGON_ENOMEM, "transport rtt: out of memory");
	r->fd = -1;
	snprintf(r->what, sizeof r->what, "%.*s", (int)sizeof r->what - 1, what);
	r->start = DEFAULT_START;
	r->len = DEFAULT_LEN;
	r->find_s = 10;
	r->poll_ms = 1;
	r->poll_max_ms = 20;
	r->max_read = 196; /* (400 - 8) / 2 until qSupported says more */
	int rc = parse_opts(r, opts, err);
	if (rc) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* Handshake and find the block on r->fd; frees r on failure. */
static int rtt_attach(struct rtt *r, struct ergon_transport **out, struct ergon_err *err)
{
	extern const struct ergon_transport_driver ergon_transport_rtt;
	/* Small request/reply packets: Nagle plus delayed ACKs would add 40 ms
	 * to every round trip. Fails harmlessly on a non-TCP fd. */
	int one = 1;
	(void)setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	int rc = handshake(r, err);
	if (!rc)
		rc = find_block(r, err);
	if (rc) {
		rtt_free(r);
		return rc;
	}
	r->base.drv = &ergon_transport_rtt;
	*out = &r->base;
	return 0;
}

int ergon_rtt_gdb_open_fd(int fd, const char *what, const char *opts, struct ergon_transport **out,
			  struct ergon_err *err)
{
	*out = NULL;
	struct rtt *r = NULL;
	int rc = rtt_new(what, opts, &r, err);
	if (rc) {
		close(fd);
		return rc;
	}
	r->fd = fd;
	return rtt_attach(r, out, err);
}

/* A serial GDB port (a Black Magic Probe's first CDC-ACM port) in raw
 * mode, blocking writes (reads are polled); stale input is dropped. */
static int open_tty(const char *dev, const char *what, int *fd_out, struct ergon_err *err)
{
	int fd = open(dev, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno,
				       "%s: cannot open the GDB serial port %s; is the probe "
				       "plugged in (ls /dev/serial/by-id/) and may you use it "
				       "(group dialout)?",
				       what, dev);
	struct termios tio;
	if (tcgetattr(fd, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: %s is not a serial port", what, dev);
	}
	cfmakeraw(&tio);
	tio.c_cflag |= CLOCAL | CREAD;
	if (tcsetattr(fd, TCSANOW, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: cannot set %s to raw mode", what, dev);
	}
	(void)tcflush(fd, TCIFLUSH);
	*fd_out = fd;
	return 0;
}

/* rtt:dev=DEVICE[,opts]: RTT through a GDB server on a serial port. */
static int rtt_open_dev(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	size_t n = strcspn(arg, ",");
	char dev[256], what[300];
	if (n == 0 || n >= sizeof dev)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "transport rtt:dev=%s: expected rtt:dev=/dev/ttyACM0", arg);
	memcpy(dev, arg, n);
	dev[n] = '\0';
	snprintf(what, sizeof what, "rtt:dev=%s", dev);
	struct rtt *r = NULL;
	int rc = rtt_new(what, arg + n, &r, err);
	if (rc)
		return rc;
	r->tty = true;
	rc = open_tty(dev, what, &r->fd, err);
	if (rc) {
		free(r);
		return rc;
	}
	return rtt_attach(r, out, err);
}

static int rtt_open(const char *arg, struct ergon_transport **out, struct ergon_err *err)
{
	*out = NULL;
	if (strncmp(arg, "dev=", 4) == 0)
		return rtt_open_dev(arg + 4, out, err);
	if (strncmp(arg, "gdb=", 4) != 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "transport rtt:%s: expected rtt:gdb=HOST:PORT[,addr=0x...|"
				     "search=START:LEN] or rtt:dev=/dev/ttyACM0[,...], e.g. "
				     "rtt:gdb=127.0.0.1:1234",
				     arg);
	const char *hp = arg + 4;
	size_t n = strcspn(hp, ",");
	char host[300];
	if (n == 0 || n >= sizeof host)
		return ergon_err_set(err, ERGON_EUSAGE, "transport rtt:%s: expected gdb=HOST:PORT",
				     arg);
	memcpy(host, hp, n);
	host[n] = '\0';
	char what[320];
	snprintf(what, sizeof what, "rtt:gdb=%s", host);
	/* Options first: a bad spec never touches the server. */
	struct rtt *r = NULL;
	int rc = rtt_new(what, hp + n, &r, err);
	if (rc)
		return rc;
	char tcpwhat[300];
	struct ergon_err cerr = {0};
	rc = ergon_socket_connect_tcp(host, tcpwhat, sizeof tcpwhat, &r->fd, &cerr);
	if (rc) {
		free(r);
		return ergon_err_set(err, rc,
				     "%s: %s; start the GDB server first (qemu-system-arm -gdb "
				     "tcp:127.0.0.1:PORT -S, openocd: 3333, pyocd gdbserver: 3333, "
				     "JLinkGDBServer: 2331)",
				     what, cerr.msg);
	}
	return rtt_attach(r, out, err);
}

/* Input while the target runs and nothing was asked: a stop reply
 * (all-stop) or a notification (non-stop). */
static int idle_input(struct rtt *r, struct ergon_err *err)
{
	if (r->mem != MEM_NONSTOP)
		return wait_stop(r, err);
	char reply[512];
	size_t rl = 0;
	bool note = false;
	int rc = recv_frame(r, reply, sizeof reply, &rl, &note, RSP_TIMEOUT_MS, err);
	if (!rc && note)
		take_notification(r, reply);
	return rc;
}

static int rtt_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got,
		    struct ergon_err *err)
{
	struct rtt *r = (struct rtt *)t;
	double deadline = now_s() + timeout_ms / 1000.0;
	for (;;) {
		if (r->closed)
			return ERGON_TRANSPORT_EOF;
		/* Let the target run for one poll interval; a packet from a
		 * running target is a stop it reached on its own. */
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		int n = poll(&p, 1, r->poll_ms);
		if (n > 0 && !r->halted) {
			struct ergon_err e2 = {0};
			if (idle_input(r, &e2) && r->closed)
				return ERGON_TRANSPORT_EOF;
		}
		struct ergon_err perr = {0};
		int rc = poll_once(r, buf, cap, got, &perr);
		if (rc) {
			if (r->closed)
				return *got ? 0 : ERGON_TRANSPORT_EOF; /* kept, then end */
			*err = perr;
			return rc;
		}
		if (*got) {
			r->poll_ms = 1;
			return 0;
		}
		r->poll_ms = r->poll_ms * 2 > r->poll_max_ms ? r->poll_max_ms : r->poll_ms * 2;
		if (now_s() >= deadline)
			return 0;
	}
}

static json_t *rtt_stats(const struct ergon_transport *t)
{
	const struct rtt *r = (const struct rtt *)t;
	char cb[16];
	snprintf(cb, sizeof cb, "0x%08x", r->cb_addr);
	return json_pack(
	    "{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f, "
	    "s:s, s:s, s:s, s:I}",
	    "kind", "rtt_gdb", "server", r->what, "cb_addr", cb, "noack", r->noack, "packet_size",
	    (json_int_t)r->packet_size, "bytes", (json_int_t)r->bytes, "polls",
	    (json_int_t)r->polls, "halts", (json_int_t)r->halts, "naks", (json_int_t)r->naks,
	    "bad_checksums", (json_int_t)r->bad_checksums, "dropped_bytes", (json_int_t)r->dropped,
	    "target_resets", (json_int_t)r->resets, "halt_per_poll", r->mem == MEM_HALT,
	    "poll_ms_mean", r->polls ? 1000.0 * r->poll_s_total / (double)r->polls : 0.0, "end",
	    r->end ? r->end : "open", "memory_access", mem_names[r->mem], "memory_access_why",
	    r->mem_why, "stop_notifications", (json_int_t)r->notifications);
}

static bool rtt_lossy(const struct ergon_transport *t)
{
	const struct rtt *r = (const struct rtt *)t;
	return r->dropped > 0 || r->resets > 0;
}

static void rtt_close(struct ergon_transport *t)
{
	struct rtt *r = (struct rtt *)t;
	if (!r->closed) {
		struct ergon_err e = {0};
		/* Leave the target running, as found. */
		if (r->halted)
			(void)resume(r, &e);
	}
	rtt_free(r);
}

int ergon_rtt_gdb_write_down(struct ergon_transport *t, const void *data, size_t len,
			     size_t *written, struct ergon_err *err)
{
	extern const struct ergon_transport_driver ergon_transport_rtt;
	*written = 0;
	if (!t || t->drv != &ergon_transport_rtt)
		return ergon_err_set(err, ERGON_EUSAGE, "write_down: not an rtt: transport");
	struct rtt *r = (struct rtt *)t;
	if (r->closed)
		return ergon_err_set(err, ERGON_EIO, "%s: the link has ended", r->what);
	int rc = halt(r, err);
	bool gone = false;
	if (!rc)
		rc = load_block(r, &gone, err);
	if (!rc && (gone || r->max_down < 1))
		rc = ergon_err_set(err, ERGON_ENOTSUP, "%s: the RTT block has no down buffer%s",
				   r->what, gone ? " (it vanished: target reset?)" : "");
	if (rc)
		goto out;
	struct desc *d = &r->down;
	uint32_t space = d->rd > d->wr ? d->rd - d->wr - 1u : d->size - 1u - (d->wr - d->rd);
	uint32_t n = len < space ? (uint32_t)len : space;
	const unsigned char *b = data;
	uint32_t first = d->size - d->wr < n ? d->size - d->wr : n;
	if (first)
		rc = write_mem(r, d->buf + d->wr, b, first, err);
	if (!rc && n > first)
		rc = write_mem(r, d->buf, b + first, n - first, err);
	if (!rc && n > 0) {
		uint32_t wr = (d->wr + n) % d->size;
		unsigned char le[4] = {(unsigned char)wr, (unsigned char)(wr >> 8),
				       (unsigned char)(wr >> 16), (unsigned char)(wr >> 24)};
		rc = write_mem(r, d->addr + 12u, le, 4, err);
		if (!rc)
			*written = n;
	}
out:;
	struct ergon_err e2 = {0};
	int rc2 = r->closed ? 0 : resume(r, rc ? &e2 : err);
	return rc ? rc : rc2;
}

/* ------------------------------------------------------------- the link */

/* A link on r->fd (set): qSupported; frees r on failure. */
static int link_start(struct rtt *r, struct ergon_gdb_link **out, struct ergon_err *err)
{
	int rc = hello(r, err);
	if (rc) {
		rtt_free(r);
		return rc;
	}
	*out = (struct ergon_gdb_link *)r;
	return 0;
}

int ergon_gdb_link_open_dev(const char *dev, struct ergon_gdb_link **out, struct ergon_err *err)
{
	*out = NULL;
	char what[300];
	snprintf(what, sizeof what, "bmp:%.250s", dev);
	struct rtt *r = NULL;
	int rc = rtt_new(what, "", &r, err);
	if (rc)
		return rc;
	r->tty = true;
	r->mem = MEM_HALT;
	rc = open_tty(dev, what, &r->fd, err);
	if (rc) {
		free(r);
		return rc;
	}
	return link_start(r, out, err);
}

int ergon_gdb_link_open_fd(int fd, const char *what, struct ergon_gdb_link **out,
			   struct ergon_err *err)
{
	*out = NULL;
	struct rtt *r = NULL;
	int rc = rtt_new(what, "", &r, err);
	if (rc) {
		close(fd);
		return rc;
	}
	r->fd = fd;
	r->mem = MEM_HALT;
	return link_start(r, out, err);
}

int ergon_gdb_link_cmd(struct ergon_gdb_link *l, const void *payload, size_t len, char *reply,
		       size_t cap, int timeout_ms, struct ergon_err *err)
{
	struct rtt *r = (struct rtt *)l;
	size_t rl = 0;
	r->console_len = 0;
	r->console[0] = '\0';
	return command_n(r, payload, len, reply, cap, &rl, timeout_ms, err);
}

const char *ergon_gdb_link_console(const struct ergon_gdb_link *l)
{
	return ((const struct rtt *)l)->console;
}

size_t ergon_gdb_link_packet_size(const struct ergon_gdb_link *l)
{
	return ((const struct rtt *)l)->packet_size;
}

void ergon_gdb_link_close(struct ergon_gdb_link *l)
{
	if (l)
		rtt_free((struct rtt *)l);
}

const struct ergon_transport_driver ergon_transport_rtt = {
    .name = "rtt",
    .longname = "SEGGER RTT over a GDB server (QEMU gdbstub, OpenOCD, pyOCD, BMP, J-Link)",
    .open = rtt_open,
    .read = rtt_read,
    .stats = rtt_stats,
    .lossy = rtt_lossy,
    .close = rtt_close,
};

/* rtt:gdb= against a fake GDB server (a thread on loopback): the block's
 * memory image is 32-bit little-endian as on the target, built here by hand
 * from the SEGGER layout (16-byte ID, max_up, max_down, then 24-byte
 * descriptors: name, buffer, size, wr_off, rd_off, flags; then ergon's
 * extension: magic "ERGD", dropped). Each `c` lets the fake "target" write
 * the next chunk of its stream into the up ring. Faults: no block, corrupt
 * blocks, NAKs, bad checksums, the server closing, a ring that dropped
 * bytes, a target reset. Background memory access: a fake that offers
 * non-stop mode (QNonStop+) and answers `m` while its target runs (the
 * target writes a chunk at each read of the block header then), one that
 * offers it and refuses QNonStop:1, the plain all-stop one, and an all-stop
 * one that reads while running (mem=running). The fake is a fake: the real
 * gdbstub is exercised by test_rtt_gdb_qemu. */
#include "ergon/rtt_gdb.h"
#include "ergon/transport.h"
#include "test_support.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BASE 0x20000000u
#define MEM 0x10000u
#define CB 0x20000100u	  /* the block */
#define UPBUF 0x20001000u /* up ring */
#define UPSIZE 64u	  /* small: the stream wraps */
#define DNBUF 0x20002000u /* down ring */
#define DNSIZE 16u

struct fake {
	uint8_t mem[MEM];
	int listen_fd, port;
	pthread_t th;
	/* behaviour */
	bool offer_noack;
	int nak_first;	     /* NAK this many packets */
	bool nak_all;	     /* NAK every packet */
	int bad_csum_first;  /* corrupt this many replies' checksums */
	int close_after_c;   /* close the link at this continue (0: never) */
	int reset_at_c;	     /* re-initialise the block at this continue */
	int reset_same_at_c; /* the same, landing on the offsets the host had */
	uint32_t drop_at_c;  /* at continue 2, set the dropped counter to this */
	const char *stream;  /* what the target writes, chunk bytes per continue */
	size_t chunk, pos;
	bool offer_nonstop;  /* qSupported has QNonStop+ */
	bool refuse_nonstop; /* ... and QNonStop:1 answers E01 */
	bool read_running;   /* answer `m`/`M` while running (non-stop, mem=running) */
	int stop_at_read;    /* the target stops on its own at this running header read */
	bool exit_at_stop;   /* ... and exits (W00) instead */
	/* state */
	bool noack, running, nonstop;
	int continues;
	int interrupts, vconts, vstopped, m_running, header_reads, c_packets;
};

static void put32(struct fake *f, uint32_t addr, uint32_t v)
{
	uint8_t *p = f->mem + (addr - BASE);
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const struct fake *f, uint32_t addr)
{
	const uint8_t *p = f->mem + (addr - BASE);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The standard block: 1 up (UPSIZE at UPBUF), 1 down (DNSIZE at DNBUF). */
static void make_block(struct fake *f)
{
	memset(f->mem + (CB - BASE), 0, 128);
	memcpy(f->mem + (CB - BASE), "SEGGER RTT", 11);
	put32(f, CB + 16, 1);
	put32(f, CB + 20, 1);
	put32(f, CB + 24, 0x00001234u); /* name: in flash, never read */
	put32(f, CB + 28, UPBUF);
	put32(f, CB + 32, UPSIZE);
	put32(f, CB + 48, 0x00001238u);
	put32(f, CB + 52, DNBUF);
	put32(f, CB + 56, DNSIZE);
	put32(f, CB + 72, 0x44475245u); /* "ERGD" */
}

/* The target runs: write the next chunk into the up ring. */
static void target_runs(struct fake *f)
{
	f->continues++;
	if (f->reset_at_c && f->continues == f->reset_at_c) {
		make_block(f); /* rd = wr = 0 again, as after a reboot */
	}
	if (f->reset_same_at_c && f->continues == f->reset_same_at_c) {
		/* A reboot that rebuilds the block (the ID's padding zeroed like
		 * every byte of it) and whose stream happens to reach the read
		 * offset the host last wrote: buffer, size and rd_off are all
		 * unchanged. */
		uint32_t rd = get32(f, CB + 40);
		make_block(f);
		put32(f, CB + 36, rd);
		put32(f, CB + 40, rd);
	}
	if (f->drop_at_c && f->continues == 2)
		put32(f, CB + 76, f->drop_at_c);
	if (!f->stream)
		return;
	uint32_t wr = get32(f, CB + 36), rd = get32(f, CB + 40);
	size_t left = strlen(f->stream) - f->pos;
	for (size_t i = 0; i < f->chunk && i < left; i++) {
		uint32_t next = (wr + 1) % UPSIZE;
		if (next == rd)
			break;
		f->mem[UPBUF - BASE + wr] = (uint8_t)f->stream[f->pos++];
		wr = next;
	}
	put32(f, CB + 36, wr);
}

static int hexv(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Send $payload#cc; the first bad_csum_first replies carry a wrong
 * checksum. `last` keeps the correct frame for a retransmission on '-'. */
static void reply(struct fake *f, int fd, const char *payload, char *last, size_t cap)
{
	unsigned sum = 0;
	for (const char *p = payload; *p; p++)
		sum += (unsigned char)*p;
	snprintf(last, cap, "$%s#%02x", payload, sum & 0xFFu);
	if (f->bad_csum_first > 0) {
		f->bad_csum_first--;
		char *frame = ts_strf("$%s#%02x", payload, (sum + 1u) & 0xFFu);
		(void)!write(fd, frame, strlen(frame));
		free(frame);
		return;
	}
	(void)!write(fd, last, strlen(last));
}

/* A %Stop notification (never acknowledged), or in all-stop the stop
 * reply itself. */
static void stop_event(struct fake *f, int fd, char *last, size_t cap)
{
	const char *why = f->exit_at_stop ? "W00" : "T05thread:01;";
	f->running = false;
	if (!f->nonstop) {
		reply(f, fd, why, last, cap);
		return;
	}
	unsigned sum = 0;
	char *body = ts_strf("Stop:%s", why);
	for (const char *p = body; *p; p++)
		sum += (unsigned char)*p;
	char *frame = ts_strf("%%%s#%02x", body, sum & 0xFFu);
	(void)!write(fd, frame, strlen(frame));
	free(frame);
	free(body);
}

static void handle(struct fake *f, int fd, const char *pk, char *last, size_t cap)
{
	static char out[8192];
	if (strncmp(pk, "qSupported", 10) == 0) {
		snprintf(out, sizeof out, "PacketSize=400%s%s",
			 f->offer_noack ? ";QStartNoAckMode+" : "",
			 f->offer_nonstop ? ";QNonStop+" : "");
		reply(f, fd, out, last, cap);
	} else if (strcmp(pk, "QStartNoAckMode") == 0) {
		reply(f, fd, "OK", last, cap);
		f->noack = true;
	} else if (strcmp(pk, "QNonStop:1") == 0 && f->offer_nonstop) {
		f->nonstop = !f->refuse_nonstop;
		reply(f, fd, f->nonstop ? "OK" : "E01", last, cap);
	} else if (strcmp(pk, "?") == 0) {
		reply(f, fd,
		      f->nonstop && f->running ? "OK"
		      : f->nonstop	       ? "T05thread:01;"
					       : "S05",
		      last, cap);
	} else if (strcmp(pk, "vStopped") == 0 && f->nonstop) {
		f->vstopped++;
		reply(f, fd, "OK", last, cap);
	} else if (strcmp(pk, "vCont;c") == 0 && f->nonstop) {
		f->vconts++;
		f->running = true;
		reply(f, fd, "OK", last, cap);
	} else if ((pk[0] == 'm' || pk[0] == 'M') && f->running && !f->read_running) {
		/* An all-stop server takes no packet while the target runs. */
		reply(f, fd, "E99", last, cap);
	} else if (pk[0] == 'm') {
		char *end = NULL;
		unsigned long a = strtoul(pk + 1, &end, 16);
		unsigned long n = strtoul(end + 1, NULL, 16);
		if (f->running) {
			f->m_running++;
			/* Running: time passes between two polls of the header. */
			if (a == CB && ++f->header_reads == f->stop_at_read)
				stop_event(f, fd, last, cap);
			else if (a == CB)
				target_runs(f);
		}
		if (a < BASE || a + n > BASE + MEM || n * 2 >= sizeof out) {
			reply(f, fd, "E01", last, cap);
			return;
		}
		for (unsigned long i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", f->mem[a - BASE + i]);
		reply(f, fd, out, last, cap);
	} else if (pk[0] == 'M') {
		char *end = NULL;
		unsigned long a = strtoul(pk + 1, &end, 16);
		unsigned long n = strtoul(end + 1, &end, 16);
		if (a < BASE || a + n > BASE + MEM || *end != ':') {
			reply(f, fd, "E01", last, cap);
			return;
		}
		for (unsigned long i = 0; i < n; i++)
			f->mem[a - BASE + i] =
			    (uint8_t)(hexv(end[1 + 2 * i]) * 16 + hexv(end[2 + 2 * i]));
		reply(f, fd, "OK", last, cap);
	} else if (strcmp(pk, "c") == 0) {
		f->c_packets++;
		f->running = true;
		target_runs(f);
	} else {
		reply(f, fd, "", last, cap);
	}
}

static void *serve(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->listen_fd, NULL, NULL);
	if (fd < 0)
		return NULL;
	int one = 1; /* '+' then the reply: no Nagle delay between them */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	static char pk[8192], last[8300];
	last[0] = '\0';
	size_t n = 0;
	int state = 0; /* 0 idle, 1 in packet, 2/3 checksum digits */
	unsigned char c;
	while (read(fd, &c, 1) == 1) {
		if (f->close_after_c && f->continues >= f->close_after_c)
			break;
		if (state == 0) {
			if (c == 0x03)
				f->interrupts++;
			if (c == 0x03 && f->running) {
				f->running = false;
				reply(f, fd, "T02thread:01;", last, sizeof last);
			} else if (c == '-' && last[0]) {
				(void)!write(fd, last, strlen(last));
			} else if (c == '$') {
				state = 1;
				n = 0;
			}
		} else if (state == 1) {
			if (c == '#')
				state = 2;
			else if (n + 1 < sizeof pk)
				pk[n++] = (char)c;
		} else if (state == 2) {
			state = 3;
		} else {
			state = 0;
			pk[n] = '\0';
			if (!f->noack) {
				if (f->nak_all || f->nak_first > 0) {
					f->nak_first--;
					(void)!write(fd, "-", 1);
					continue;
				}
				(void)!write(fd, "+", 1);
			}
			handle(f, fd, pk, last, sizeof last);
		}
	}
	close(fd);
	return NULL;
}

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->chunk = 10;
	f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(f->listen_fd, 1), 0);
	socklen_t l = sizeof a;
	getsockname(f->listen_fd, (struct sockaddr *)&a, &l);
	f->port = ntohs(a.sin_port);
	return f;
}

static void fake_start(struct fake *f)
{
	assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

static void fake_free(struct fake *f)
{
	shutdown(f->listen_fd, SHUT_RDWR);
	close(f->listen_fd);
	pthread_join(f->th, NULL);
	free(f);
}

static int open_rtt(struct fake *f, const char *opts, struct ergon_transport **t,
		    struct ergon_err *err)
{
	char *spec = ts_strf("rtt:gdb=127.0.0.1:%d,search=0x20000000:0x10000%s", f->port, opts);
	int rc = ergon_transport_open(spec, t, err);
	free(spec);
	return rc;
}

/* Read until EOF or want bytes or 3 s; returns the bytes (malloc'd). */
static char *drain(struct ergon_transport *t, size_t want, size_t *len, int *last_rc)
{
	char *buf = calloc(1, 65536);
	assert_non_null(buf);
	*len = 0;
	*last_rc = 0;
	for (int i = 0; i < 300 && *len < want; i++) {
		size_t got = 0;
		struct ergon_err err = {0};
		int rc = ergon_transport_read(t, buf + *len, 65535 - *len, 10, &got, &err);
		*len += got;
		*last_rc = rc;
		if (rc != 0)
			break;
	}
	return buf;
}

static long long stat_int(struct ergon_transport *t, const char *key)
{
	json_t *s = ergon_transport_stats(t);
	long long v = json_integer_value(json_object_get(s, key));
	json_decref(s);
	return v;
}

/* A stream longer than the 64-byte ring: it wraps several times. */
static const char STREAM[] = "HPX_READY\n--- HPX_START ---\nHPX_VERSION=1\n"
			     "0123456789abcdefghijklmnopqrstuvwxyz\n--- HPX_END ---\n";

/* A fake with the standard block and STREAM to emit. */
static struct fake *fake_stream(void)
{
	struct fake *f = fake_new();
	make_block(f);
	f->stream = STREAM;
	return f;
}

static void finish(struct ergon_transport *t, struct fake *f, char *got)
{
	ergon_transport_close(t);
	fake_free(f);
	free(got);
}

/* Start the fake, open the transport (failing the test on error) and
 * drain up to want bytes. */
static char *start_and_drain(struct fake *f, struct ergon_transport **t, size_t want, size_t *len,
			     int *lrc)
{
	fake_start(f);
	struct ergon_err err = {0};
	*t = NULL;
	if (open_rtt(f, "", t, &err) != 0)
		fail_msg("%s", err.msg);
	return drain(*t, want, len, lrc);
}

static void drains_whole_stream_across_wraps(void **state)
{
	(void)state;
	for (int noack = 0; noack < 2; noack++) {
		struct fake *f = fake_new();
		make_block(f);
		f->stream = STREAM;
		f->offer_noack = noack;
		fake_start(f);
		struct ergon_transport *t = NULL;
		struct ergon_err err = {0};
		int rc = open_rtt(f, "", &t, &err);
		if (rc)
			fail_msg("%s", err.msg);
		size_t len = 0;
		int lrc = 0;
		char *got = drain(t, strlen(STREAM), &len, &lrc);
		assert_int_equal(len, strlen(STREAM));
		assert_memory_equal(got, STREAM, len);
		json_t *s = ergon_transport_stats(t);
		assert_true(json_is_boolean(json_object_get(s, "noack")));
		assert_int_equal(json_is_true(json_object_get(s, "noack")), noack);
		assert_string_equal(json_string_value(json_object_get(s, "cb_addr")), "0x20000100");
		json_decref(s);
		assert_false(ergon_transport_lossy(t));
		/* Host commands into the down ring: bytes and wr_off. */
		size_t w = 0;
		rc = ergon_rtt_gdb_write_down(t, "GO\n", 3, &w, &err);
		if (rc)
			fail_msg("%s", err.msg);
		assert_int_equal(w, 3);
		ergon_transport_close(t);
		fake_free(f);
		free(got);
	}
}

static void down_buffer_write_lands_in_target_ram(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	make_block(f);
	put32(f, CB + 60, 14); /* wr_off near the end: the write wraps */
	put32(f, CB + 64, 14); /* rd_off */
	fake_start(f);
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_rtt(f, "", &t, &err), 0);
	size_t w = 0;
	assert_int_equal(ergon_rtt_gdb_write_down(t, "GO\n", 3, &w, &err), 0);
	assert_int_equal(w, 3);
	/* A full ring takes only what fits: 16 - 1 - 3 = 12 bytes. */
	assert_int_equal(ergon_rtt_gdb_write_down(t, "0123456789ABCDEF", 16, &w, &err), 0);
	assert_int_equal(w, 12);
	ergon_transport_close(t);
	pthread_join(f->th, NULL); /* the server ends with the connection */
	assert_int_equal(f->mem[DNBUF - BASE + 14], 'G');
	assert_int_equal(f->mem[DNBUF - BASE + 15], 'O');
	assert_int_equal(f->mem[DNBUF - BASE + 0], '\n');
	assert_int_equal(get32(f, CB + 60), 1 + 12);
	assert_int_equal(f->mem[DNBUF - BASE + 1], '0');
	close(f->listen_fd);
	free(f);
}

static void no_block_says_where_and_how(void **state)
{
	(void)state;
	struct fake *f = fake_new(); /* RAM all zero */
	fake_start(f);
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	int rc = open_rtt(f, ",find_s=0", &t, &err);
	assert_int_equal(rc, ERGON_ENOENT);
	assert_null(t);
	assert_non_null(strstr(err.msg, "0x20000000..0x20010000"));
	assert_non_null(strstr(err.msg, "addr=0x"));
	assert_non_null(strstr(err.msg, "_SEGGER_RTT"));
	fake_free(f);
}

struct corrupt_case {
	uint32_t off, value;
	const char *field;
};

static void corrupt_block_names_the_field(void **state)
{
	(void)state;
	static const struct corrupt_case cases[] = {
	    {32, 0, "up[0].size is 0"},
	    {40, UPSIZE, "up[0].rd_off 64 is not below size 64"},
	    {36, 1000, "up[0].wr_off 1000"},
	    {28, 0x30000000u, "up[0].buffer 0x30000000"},
	    {32, 0x100000u, "up[0].buffer 0x20001000+1048576 is outside"},
	    {16, 99, "max_up = 99"},
	    {56, 0, "down[0].size is 0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fake *f = fake_new();
		make_block(f);
		put32(f, CB + cases[i].off, cases[i].value);
		fake_start(f);
		struct ergon_transport *t = NULL;
		struct ergon_err err = {0};
		int rc = open_rtt(f, ",find_s=0", &t, &err);
		assert_int_equal(rc, ERGON_EPARSE);
		if (!strstr(err.msg, cases[i].field))
			fail_msg("case %zu: '%s' not in: %s", i, cases[i].field, err.msg);
		fake_free(f);
	}
}

static void server_close_keeps_what_arrived(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->close_after_c = 3; /* two chunks of 10 bytes, then gone */
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, sizeof STREAM, &len, &lrc);
	assert_int_equal(lrc, ERGON_TRANSPORT_EOF);
	/* The find's continue wrote chunk 1, the first poll's chunk 2; the
	 * third continue's chunk was written but the server closed before it
	 * could be read. */
	assert_int_equal(len, 20);
	assert_memory_equal(got, STREAM, len);
	json_t *s = ergon_transport_stats(t);
	assert_string_equal(json_string_value(json_object_get(s, "end")), "server_closed");
	json_decref(s);
	finish(t, f, got);
}

static void naks_are_retransmitted_then_refused(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->nak_first = 2;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(len, strlen(STREAM));
	assert_int_equal(stat_int(t, "naks"), 2);
	finish(t, f, got);

	f = fake_new();
	make_block(f);
	f->nak_all = true;
	fake_start(f);
	t = NULL;
	struct ergon_err err = {0};
	int rc = open_rtt(f, "", &t, &err);
	assert_int_equal(rc, ERGON_EIO);
	assert_non_null(strstr(err.msg, "NAKed packet 'qSupported"));
	fake_free(f);
}

static void bad_checksums_are_nakked_and_resent(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->bad_csum_first = 3;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(len, strlen(STREAM));
	assert_memory_equal(got, STREAM, len);
	assert_int_equal(stat_int(t, "bad_checksums"), 3);
	finish(t, f, got);
}

static void dropped_bytes_are_reported(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->drop_at_c = 37;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(stat_int(t, "dropped_bytes"), 37);
	assert_true(ergon_transport_lossy(t));
	finish(t, f, got);
}

static void target_reset_is_detected(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->reset_at_c = 3; /* the block is rebuilt: rd = wr = 0 */
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	/* Everything was drained before the reset rewrote the ring, and
	 * the stream went on after it. */
	assert_int_equal(len, strlen(STREAM));
	assert_memory_equal(got, STREAM, len);
	assert_int_equal(stat_int(t, "target_resets"), 1);
	assert_true(ergon_transport_lossy(t));
	finish(t, f, got);
}

static void reset_on_the_same_offset_is_detected(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->reset_same_at_c = 3;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(len, strlen(STREAM));
	assert_memory_equal(got, STREAM, len);
	/* Only the host's mark in the ID's padding (bytes 12..15) tells. */
	assert_int_equal(stat_int(t, "target_resets"), 1);
	assert_true(ergon_transport_lossy(t));
	/* The mark is back in place on the rebuilt block. */
	assert_memory_equal(f->mem + (CB - BASE), "SEGGER RTT", 11);
	assert_true(f->mem[CB - BASE + 12] != 0 || f->mem[CB - BASE + 13] != 0);
	finish(t, f, got);
}

/* Close the client and wait for the fake's thread (it ends with the
 * connection), so that its counters can be read; then fake_release. */
static void close_and_join(struct ergon_transport *t, struct fake *f)
{
	ergon_transport_close(t);
	pthread_join(f->th, NULL);
}

static void fake_release(struct fake *f, char *got)
{
	close(f->listen_fd);
	free(f);
	free(got);
}

static const char *stat_str(struct ergon_transport *t, const char *key, char *buf, size_t cap)
{
	json_t *s = ergon_transport_stats(t);
	snprintf(buf, cap, "%s", json_string_value(json_object_get(s, key)) ?: "(none)");
	json_decref(s);
	return buf;
}

/* A non-stop server: the block is found, the target resumed once with
 * vCont;c and then read while it runs; never interrupted. */
static void nonstop_server_is_read_while_running(void **state)
{
	(void)state;
	for (int noack = 0; noack < 2; noack++) {
		struct fake *f = fake_stream();
		f->offer_nonstop = true;
		f->read_running = true;
		f->offer_noack = noack;
		struct ergon_transport *t = NULL;
		size_t len = 0;
		int lrc = 0;
		char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
		assert_int_equal(len, strlen(STREAM));
		assert_memory_equal(got, STREAM, len);
		char b[200];
		assert_string_equal(stat_str(t, "memory_access", b, sizeof b), "non_stop");
		assert_non_null(strstr(stat_str(t, "memory_access_why", b, sizeof b), "QNonStop+"));
		assert_int_equal(stat_int(t, "halts"), 0);
		/* Host commands go in while it runs too. */
		size_t w = 0;
		struct ergon_err err = {0};
		if (ergon_rtt_gdb_write_down(t, "GO\n", 3, &w, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(w, 3);
		close_and_join(t, f);
		/* The fake started halted (`?` answered T05): one vStopped
		 * (OK), one vCont;c, and no 0x03 ever. STREAM is 89 bytes in
		 * 10-byte chunks, one per running read of the header: at least
		 * 9 such reads. */
		assert_int_equal(f->interrupts, 0);
		assert_int_equal(f->vconts, 1);
		assert_int_equal(f->vstopped, 1);
		assert_true(f->m_running >= 9);
		assert_memory_equal(f->mem + (DNBUF - BASE), "GO\n", 3);
		fake_release(f, got);
	}
}

/* The target stops on its own (a %Stop notification arrives before a
 * memory reply): the client drains it with vStopped and resumes. */
static void nonstop_stop_notification_is_drained(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->offer_nonstop = true;
	f->read_running = true;
	f->stop_at_read = 3;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(len, strlen(STREAM));
	assert_memory_equal(got, STREAM, len);
	assert_int_equal(stat_int(t, "stop_notifications"), 1);
	close_and_join(t, f);
	/* The first stop (the attach) and the notified one. */
	assert_int_equal(f->vstopped, 2);
	assert_int_equal(f->vconts, 2);
	assert_int_equal(f->interrupts, 0);
	fake_release(f, got);
}

/* The target exits (%Stop:W00): what was drained is kept, then EOF. */
static void nonstop_exit_notification_ends_the_link(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->offer_nonstop = true;
	f->read_running = true;
	f->stop_at_read = 2;
	f->exit_at_stop = true;
	struct ergon_transport *t = NULL;
	size_t len = 0;
	int lrc = 0;
	char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
	assert_int_equal(lrc, ERGON_TRANSPORT_EOF);
	/* Header read 1 wrote chunk 1 (read, 10 bytes); read 2 was the exit. */
	assert_int_equal(len, 10);
	assert_memory_equal(got, STREAM, len);
	char b[64];
	assert_string_equal(stat_str(t, "end", b, sizeof b), "target_exited");
	finish(t, f, got);
}

/* Offered but refused, or not offered: halt for each poll (the fake
 * answers E99 to a read while its target runs, so a wrong mode fails). */
static void nonstop_refused_or_absent_halts_per_poll(void **state)
{
	(void)state;
	for (int offered = 0; offered < 2; offered++) {
		struct fake *f = fake_stream();
		f->offer_nonstop = offered;
		f->refuse_nonstop = offered;
		struct ergon_transport *t = NULL;
		size_t len = 0;
		int lrc = 0;
		char *got = start_and_drain(f, &t, strlen(STREAM), &len, &lrc);
		assert_int_equal(len, strlen(STREAM));
		assert_memory_equal(got, STREAM, len);
		char b[200];
		assert_string_equal(stat_str(t, "memory_access", b, sizeof b), "halt_per_poll");
		assert_non_null(strstr(stat_str(t, "memory_access_why", b, sizeof b),
				       offered ? "refused QNonStop:1" : "no QNonStop+"));
		assert_true(stat_int(t, "halts") >= 9);
		close_and_join(t, f);
		assert_int_equal(f->m_running, 0);
		assert_int_equal(f->vconts, 0);
		fake_release(f, got);
	}
	/* mem=non_stop insists. */
	struct fake *f = fake_stream();
	fake_start(f);
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	assert_int_equal(open_rtt(f, ",mem=non_stop", &t, &err), ERGON_ENOTSUP);
	assert_non_null(strstr(err.msg, "no QNonStop+"));
	assert_non_null(strstr(err.msg, "mem=auto"));
	fake_free(f);
	/* mem=halt halts even where non-stop is offered. */
	f = fake_stream();
	f->offer_nonstop = true;
	fake_start(f);
	assert_int_equal(open_rtt(f, ",mem=halt", &t, &err), 0);
	char b[200];
	assert_string_equal(stat_str(t, "memory_access", b, sizeof b), "halt_per_poll");
	close_and_join(t, f);
	assert_false(f->nonstop);
	close(f->listen_fd);
	free(f);
}

/* mem=running: an all-stop server that reads while the target runs; a
 * stop reply that arrives before a memory reply is taken, and the target
 * continued after the poll. */
static void allstop_server_read_running_on_request(void **state)
{
	(void)state;
	struct fake *f = fake_stream();
	f->read_running = true;
	f->stop_at_read = 4;
	fake_start(f);
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	if (open_rtt(f, ",mem=running", &t, &err))
		fail_msg("%s", err.msg);
	size_t len = 0;
	int lrc = 0;
	char *got = drain(t, strlen(STREAM), &len, &lrc);
	assert_int_equal(len, strlen(STREAM));
	assert_memory_equal(got, STREAM, len);
	char b[200];
	assert_string_equal(stat_str(t, "memory_access", b, sizeof b), "running");
	assert_int_equal(stat_int(t, "halts"), 0);
	close_and_join(t, f);
	assert_int_equal(f->interrupts, 0);
	assert_true(f->m_running >= 9);
	/* `c` after the find and again after the stop it reported. */
	assert_int_equal(f->c_packets, 2);
	fake_release(f, got);
}

static void bad_specs_are_usage_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {"rtt:127.0.0.1:1",
					  "rtt:gdb=127.0.0.1:1,addr=zz",
					  "rtt:gdb=127.0.0.1:1,search=0x20000000",
					  "rtt:gdb=127.0.0.1:1,speed=3",
					  "rtt:gdb=127.0.0.1:1,addr=0x10000000",
					  "rtt:gdb=127.0.0.1:1,mem=sometimes"};
	struct fake *f = fake_new();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ergon_transport *t = NULL;
		struct ergon_err err = {0};
		char *spec = ts_strf("%s", bad[i]);
		if (i > 0) {
			free(spec);
			spec = ts_strf("rtt:gdb=127.0.0.1:%d%s", f->port, strchr(bad[i] + 8, ','));
		}
		int rc = ergon_transport_open(spec, &t, &err);
		/* Usage errors are found before any packet; the fake never
		 * accepts (its backlog holds the connection). */
		if (rc != ERGON_EUSAGE)
			fail_msg("%s: rc %d: %s", spec, rc, err.msg);
		free(spec);
	}
	close(f->listen_fd);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(drains_whole_stream_across_wraps),
	    cmocka_unit_test(down_buffer_write_lands_in_target_ram),
	    cmocka_unit_test(no_block_says_where_and_how),
	    cmocka_unit_test(corrupt_block_names_the_field),
	    cmocka_unit_test(server_close_keeps_what_arrived),
	    cmocka_unit_test(naks_are_retransmitted_then_refused),
	    cmocka_unit_test(bad_checksums_are_nakked_and_resent),
	    cmocka_unit_test(dropped_bytes_are_reported),
	    cmocka_unit_test(target_reset_is_detected),
	    cmocka_unit_test(reset_on_the_same_offset_is_detected),
	    cmocka_unit_test(nonstop_server_is_read_while_running),
	    cmocka_unit_test(nonstop_stop_notification_is_drained),
	    cmocka_unit_test(nonstop_exit_notification_ends_the_link),
	    cmocka_unit_test(nonstop_refused_or_absent_halts_per_poll),
	    cmocka_unit_test(allstop_server_read_running_on_request),
	    cmocka_unit_test(bad_specs_are_usage_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

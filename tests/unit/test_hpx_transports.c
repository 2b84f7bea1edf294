/* Capture end to end through real links: a pty pair (serial), a TCP server
 * thread on 127.0.0.1, a unix socket server thread, and hand-built ITM
 * packet streams (swo). The byte streams are the shared fixtures; the raw
 * capture log must equal what was sent, byte for byte, up to the end
 * sentinel. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/hpx_capture.h"
#include "ergon/issues.h"
#include "ergon/transport.h"
#include "test_support.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct sender {
	int fd;	       /* connected fd to write to (pty master or accepted socket) */
	int listen_fd; /* accept first when >= 0 */
	const char *data;
	size_t len;
	size_t stop_at;	 /* stop sending after this many bytes (stall) */
	int hold_ms;	 /* keep the link open this long after sending */
	int close_after; /* close the fd when done */
};

static void nap(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void *send_thread(void *arg)
{
	struct sender *s = arg;
	if (s->listen_fd >= 0) {
		s->fd = accept(s->listen_fd, NULL, NULL);
		if (s->fd < 0)
			return NULL;
	}
	size_t end = s->stop_at ? s->stop_at : s->len;
	/* Odd chunk sizes so lines straddle reads. */
	for (size_t off = 0; off < end;) {
		size_t n = end - off < 37 ? end - off : 37;
		ssize_t w = write(s->fd, s->data + off, n);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	nap(s->hold_ms);
	if (s->close_after)
		close(s->fd);
	return NULL;
}

static char *fixture(const char *name, size_t *len)
{
	char *rel = ts_strf("hpx/%s", name);
	char *path = ts_fixture(rel);
	char *d = ts_read_file(path, len);
	assert_non_null(d);
	free(rel);
	free(path);
	return d;
}

/* Capture through spec; returns the parser result JSON. */
static json_t *capture(const char *spec, const char *log, double hb_s,
		       struct ergon_hpx_capture_result *cr)
{
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	struct ergon_hpx_capture_opts o = {
	    .transport = spec, .log_path = log, .timeout_s = 20, .heartbeat_s = hb_s};
	int rc = ergon_hpx_capture(&o, p, cr, &err);
	if (rc)
		print_error("capture %s: %s\n", spec, err.msg);
	assert_int_equal(rc, 0);
	json_t *res = NULL;
	assert_int_equal(ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, 0, &res, &err), 0);
	ergon_hpx_parser_free(p);
	return res;
}

/* The log holds what was sent up to and including the END line. */
static void assert_log_is_prefix(const char *log, const char *data, size_t len)
{
	size_t got_len = 0;
	char *got = ts_read_file(log, &got_len);
	assert_non_null(got);
	const char *endl = strstr(data, "--- HPX_END ---");
	assert_non_null(endl);
	size_t through_end = (size_t)(endl - data) + strlen("--- HPX_END ---");
	assert_true(got_len >= through_end && got_len <= len);
	assert_memory_equal(got, data, got_len);
	free(got);
}

static void serial_over_pty(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("basic.hpx.txt", &len);
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	char *spec = ts_strf("serial:%s,115200", ptsname(m));
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	/* Put the slave in raw mode before anything is written, so bytes that
	 * arrive before the driver configures the port are not cooked by the
	 * line discipline (the driver sets raw mode too; this removes the race). */
	int slave = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	struct termios tio;
	assert_int_equal(tcgetattr(slave, &tio), 0);
	cfmakeraw(&tio);
	assert_int_equal(tcsetattr(slave, TCSANOW, &tio), 0);
	struct sender s = {.fd = m, .listen_fd = -1, .data = data, .len = len, .hold_ms = 200};
	pthread_t th;
	struct ergon_hpx_capture_result cr;
	struct sender *sp = &s;
	assert_int_equal(pthread_create(&th, NULL, send_thread, sp), 0);
	json_t *res = capture(spec, log, 5, &cr);
	pthread_join(th, NULL);
	assert_true(cr.complete);
	assert_int_equal(json_array_size(json_object_get(res, "layers")), 5);
	/* basic: layer 2 median cycles of 1285064, 1283555, 1281581 = 1283555 */
	json_t *l2 = json_array_get(json_object_get(res, "layers"), 2);
	assert_true(json_number_value(json_object_get(l2, "cycles")) == 1283555.0);
	assert_log_is_prefix(log, data, len);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(res);
	close(slave);
	close(m);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
	free(data);
}

static int tcp_listener(int *port);

/* A USB CDC target resetting: the port vanishes mid-stream and comes back
 * under the same name. Modelled with a symlink to a pty: the first pty
 * sends half the stream and closes, the link is pointed at a new pty which
 * sends the rest. The capture reconnects, completes, and the log holds
 * every byte of both halves. */
struct reset_ctx {
	const char *data;
	size_t len;
	const char *link;
	const char *log;
	int m1, m2;
};

/* Wait (up to 10 s) until the capture log holds n bytes: the capture has
 * read them, so closing the link cannot discard unread input. */
static void wait_log(const char *log, size_t n)
{
	for (int i = 0; i < 1000; i++) {
		struct stat st;
		if (stat(log, &st) == 0 && (size_t)st.st_size >= n)
			return;
		nap(10);
	}
}

static void raw_slave(int m)
{
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	struct termios tio;
	tcgetattr(s, &tio);
	cfmakeraw(&tio);
	tcsetattr(s, TCSANOW, &tio);
	close(s);
}

static void *reset_thread(void *arg)
{
	struct reset_ctx *c = arg;
	size_t half = c->len / 2;
	nap(200); /* the driver opens the first pty */
	if (write(c->m1, c->data, half) != (ssize_t)half)
		return NULL;
	wait_log(c->log, half);
	/* The port disappears: the link first, so that the driver can never
	 * reopen the old pty's path, which another process may be given once
	 * its master closes (a second "reconnect" seen under ctest -j2). */
	unlink(c->link);
	close(c->m1);
	nap(300);
	if (symlink(ptsname(c->m2), c->link) != 0)
		return NULL;
	nap(500); /* the driver reopens the link: now the second pty */
	size_t rest = c->len - half;
	if (write(c->m2, c->data + half, rest) != (ssize_t)rest)
		return NULL;
	nap(300);
	return NULL;
}

static void serial_survives_target_reset(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("basic.hpx.txt", &len);
	char *dir = ts_tmpdir();
	char *link = ts_strf("%s/ttyACM_test", dir);
	struct reset_ctx c = {.data = data, .len = len, .link = link};
	c.m1 = posix_openpt(O_RDWR | O_NOCTTY);
	c.m2 = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(c.m1 >= 0 && c.m2 >= 0);
	grantpt(c.m1);
	unlockpt(c.m1);
	grantpt(c.m2);
	unlockpt(c.m2);
	raw_slave(c.m1);
	raw_slave(c.m2);
	/* Keep a slave of m2 open so its raw settings persist until the driver
	 * opens it. */
	int keep2 = open(ptsname(c.m2), O_RDWR | O_NOCTTY);
	assert_int_equal(symlink(ptsname(c.m1), link), 0);
	char *spec = ts_strf("serial:%s", link);
	char *log = ts_strf("%s/cap.log", dir);
	c.log = log;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, reset_thread, &c), 0);
	struct ergon_hpx_capture_result cr;
	json_t *res = capture(spec, log, 5, &cr);
	pthread_join(th, NULL);
	assert_true(cr.complete);
	assert_int_equal(json_array_size(json_object_get(res, "layers")), 5);
	assert_log_is_prefix(log, data, len);
	json_t *link_stats = json_object_get(cr.details, "link");
	assert_int_equal(json_integer_value(json_object_get(link_stats, "reconnects")), 1);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(res);
	close(keep2);
	close(c.m2);
	unlink(link);
	ts_tmpdir_remove(dir);
	free(dir);
	free(link);
	free(log);
	free(spec);
	free(data);
}

static void overall_timeout_keeps_everything(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("basic.hpx.txt", &len);
	int port = 0;
	int lfd = tcp_listener(&port);
	/* 300 bytes then silence for 5 s; overall bound 2 s, no heartbeat
	 * bound. */
	struct sender s = {.listen_fd = lfd,
			   .data = data,
			   .len = len,
			   .stop_at = 300,
			   .hold_ms = 5000,
			   .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("tcp:127.0.0.1:%d", port);
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	struct ergon_hpx_capture_opts o = {.transport = spec, .log_path = log, .timeout_s = 2.0};
	struct ergon_hpx_capture_result cr;
	assert_int_equal(ergon_hpx_capture(&o, p, &cr, &err), 0);
	assert_true(cr.timed_out);
	assert_false(cr.complete);
	assert_true(ergon_issue_has(cr.issues, "capture.timeout"));
	assert_int_equal(cr.bytes, 300);
	size_t got_len = 0;
	char *got = ts_read_file(log, &got_len);
	assert_int_equal(got_len, 300);
	free(got);
	pthread_join(th, NULL);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cr);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
	free(data);
}

static int tcp_listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	socklen_t sl = sizeof(sa);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void tcp_server_thread(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("multi_preset.hpx.txt", &len);
	int port = 0;
	int lfd = tcp_listener(&port);
	struct sender s = {.listen_fd = lfd, .data = data, .len = len, .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("tcp:127.0.0.1:%d", port);
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_hpx_capture_result cr;
	json_t *res = capture(spec, log, 5, &cr);
	pthread_join(th, NULL);
	assert_true(cr.complete);
	/* multi_preset: presets cpu_0, mve_0, mve_1 and groups cpu, mve. */
	assert_int_equal(json_object_size(json_object_get(res, "presets")), 3);
	assert_int_equal(json_object_size(json_object_get(res, "groups")), 2);
	assert_log_is_prefix(log, data, len);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(res);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
	free(data);
}

static void unix_server_thread(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("legacy.hpx.txt", &len);
	char *dir = ts_tmpdir();
	char *sock = ts_strf("%s/s.sock", dir);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	struct sender s = {.listen_fd = lfd, .data = data, .len = len, .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("unix:%s", sock);
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_hpx_capture_result cr;
	json_t *res = capture(spec, log, 5, &cr);
	pthread_join(th, NULL);
	assert_true(cr.complete);
	/* legacy: preset _default, 6 layers, no groups. */
	assert_non_null(json_object_get(json_object_get(res, "presets"), "_default"));
	assert_int_equal(json_array_size(json_object_get(res, "layers")), 6);
	assert_log_is_prefix(log, data, len);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(res);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(sock);
	free(log);
	free(spec);
	free(data);
}

static void heartbeat_timeout_keeps_everything(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("basic.hpx.txt", &len);
	int port = 0;
	int lfd = tcp_listener(&port);
	/* Send the first 1200 bytes, then stall with the link open for 5 s; the
	 * capture's heartbeat bound is 2 s (generous: the sender thread may start
	 * late on a loaded host, and the bound runs from the capture's start). */
	struct sender s = {.listen_fd = lfd,
			   .data = data,
			   .len = len,
			   .stop_at = 1200,
			   .hold_ms = 5000,
			   .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("tcp:127.0.0.1:%d", port);
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_hpx_capture_result cr;
	json_t *res = capture(spec, log, 2.0, &cr);
	assert_false(cr.complete);
	assert_true(cr.heartbeat_timed_out);
	assert_true(ergon_issue_has(cr.issues, "capture.heartbeat_timeout"));
	assert_true(ergon_issue_has(cr.issues, "capture.incomplete"));
	size_t got_len = 0;
	char *got = ts_read_file(log, &got_len);
	assert_int_equal(got_len, 1200);
	assert_memory_equal(got, data, 1200);
	free(got);
	pthread_join(th, NULL);
	ergon_hpx_capture_result_cleanup(&cr);
	json_decref(res);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
	free(data);
}

/* The clean window is silent on purpose: inside it (after the
 * clean_window_begin heartbeat) the bound is window_heartbeat_s, not the
 * host's heartbeat_s. The sender goes quiet for 3 s right after the
 * heartbeat, then closes: with a 1 s host bound and a 10 s window bound the
 * capture runs to the end of the source; with no window bound it stops at
 * the 1 s heartbeat bound. */
static void silent_window_heartbeat(double window_hb_s, int want_timeout)
{
	static const char data[] = "--- HPX_START ---\nHPX_HEARTBEAT init\n"
				   "HPX_HEARTBEAT clean_window_begin\n";
	size_t len = sizeof data - 1;
	int port = 0;
	int lfd = tcp_listener(&port);
	struct sender s = {.listen_fd = lfd,
			   .data = data,
			   .len = len,
			   .stop_at = len,
			   .hold_ms = 3000,
			   .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("tcp:127.0.0.1:%d", port);
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	struct ergon_hpx_capture_opts o = {.transport = spec,
					   .log_path = log,
					   .timeout_s = 20,
					   .heartbeat_s = 1.0,
					   .window_heartbeat_s = window_hb_s};
	struct ergon_hpx_capture_result cr;
	assert_int_equal(ergon_hpx_capture(&o, p, &cr, &err), 0);
	assert_int_equal(cr.heartbeat_timed_out, want_timeout);
	assert_int_equal(ergon_issue_has(cr.issues, "capture.heartbeat_timeout"), want_timeout);
	if (!want_timeout)
		assert_true(cr.source_ended);
	assert_int_equal(cr.bytes, len);
	pthread_join(th, NULL);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cr);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
}

static void window_heartbeat_covers_the_silent_window(void **state)
{
	(void)state;
	silent_window_heartbeat(10.0, 0);
	silent_window_heartbeat(0.0, 1);
}

/* Encode text as ITM port-0 packets cycling through 1-, 2- and 4-byte
 * payloads, with a port-1 packet, a local timestamp and (optionally) an
 * overflow packet interleaved. */
static size_t itm_encode(const char *text, size_t n, unsigned char *out, bool overflow)
{
	size_t o = 0;
	static const unsigned char sync[] = {0, 0, 0, 0, 0, 0x80};
	memcpy(out, sync, sizeof(sync));
	o += sizeof(sync);
	size_t i = 0;
	int k = 0;
	while (i < n) {
		size_t want = (k % 3 == 0) ? 1 : (k % 3 == 1) ? 2 : 4;
		if (want > n - i)
			want = 1;
		out[o++] = (unsigned char)(want == 1 ? 0x01 : want == 2 ? 0x02 : 0x03);
		memcpy(out + o, text + i, want);
		o += want;
		i += want;
		if (k % 5 == 0) {
			out[o++] = 0x09; /* port 1, 1 byte: not ours */
			out[o++] = 'X';
		}
		if (k % 7 == 0) {
			out[o++] = 0xC0; /* local timestamp with continuation */
			out[o++] = 0x85;
			out[o++] = 0x03;
		}
		if (overflow && k == 11)
			out[o++] = 0x70;
		k++;
	}
	return o;
}

static void itm_decoder_counts(void **state)
{
	(void)state;
	/* sync, "H" (1 byte), "PX" (2 bytes), "_END" (4 bytes), port 2 "ab",
	 * hardware packet 0x05 + 1 byte, overflow, reserved header 0x04. */
	static const unsigned char in[] = {0,	 0,   0,   0,	 0,    0x80, 0x01, 'H',
					   0x02, 'P', 'X', 0x03, '_',  'E',  'N',  'D',
					   0x12, 'a', 'b', 0x05, 0x7f, 0x70, 0x04};
	unsigned char out[64];
	struct ergon_itm d = {0};
	size_t n = ergon_itm_decode(&d, in, sizeof(in), out, sizeof(out));
	assert_int_equal(n, 7);
	assert_memory_equal(out, "HPX_END", 7);
	assert_int_equal(d.syncs, 1);
	assert_int_equal(d.overflows, 1);
	assert_int_equal(d.malformed, 1);
	assert_int_equal(d.other_ports, 2);
}

static void swo_capture_is_diagnostic_when_lossy(void **state)
{
	(void)state;
	size_t len;
	char *data = fixture("basic.hpx.txt", &len);
	unsigned char *enc = malloc(len * 4 + 64);
	char *dir = ts_tmpdir();
	for (int lossy = 0; lossy < 2; lossy++) {
		size_t elen = itm_encode(data, len, enc, lossy);
		char *trace = ts_strf("%s/trace%d.bin", dir, lossy);
		assert_int_equal(ts_write_file(trace, enc, elen), 0);
		char *spec = ts_strf("swo:%s", trace);
		char *log = ts_strf("%s/cap%d.log", dir, lossy);
		struct ergon_hpx_capture_result cr;
		json_t *res = capture(spec, log, 5, &cr);
		assert_true(cr.complete);
		assert_int_equal(json_array_size(json_object_get(res, "layers")), 5);
		assert_int_equal(cr.lossy, lossy);
		assert_int_equal(ergon_issue_has(cr.issues, "capture.lossy"), lossy);
		assert_log_is_prefix(log, data, len);
		/* The raw ITM bytes are kept beside the decoded log: the capture
		 * stops at END, so the raw log is a prefix of the trace file. */
		char *raw = ts_strf("%s.raw", log);
		size_t rlen = 0;
		char *rgot = ts_read_file(raw, &rlen);
		assert_non_null(rgot);
		assert_true(rlen > 0 && rlen <= elen);
		assert_memory_equal(rgot, enc, rlen);
		assert_string_equal(json_string_value(json_object_get(cr.details, "raw_log")), raw);
		free(rgot);
		free(raw);
		ergon_hpx_capture_result_cleanup(&cr);
		json_decref(res);
		free(trace);
		free(spec);
		free(log);
	}
	ts_tmpdir_remove(dir);
	free(dir);
	free(enc);
	free(data);
}

static void bad_specs(void **state)
{
	(void)state;
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_transport_open("carrier-pigeon:1", &t, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "serial:DEV"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_transport_open("tcp:nohostport", &t, &err), ERGON_EUSAGE);
	ergon_err_clear(&err);
	assert_int_equal(ergon_transport_open("serial:/dev/null,12345", &t, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "baud"));
	ergon_err_clear(&err);
	assert_true(ergon_transport_open("file:/nonexistent/x.log", &t, &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent/x.log"));
}

/* A header of 300 columns is over the parser's 256-column cap: the parser
 * stops at line 3, but the capture keeps logging every byte up to the END
 * sentinel and reports pmu.parser_limit instead of failing. */
static void parser_limit_keeps_whole_log(void **state)
{
	(void)state;
	size_t cap = 64 * 1024, len = 0;
	char *data = malloc(cap);
	assert_non_null(data);
	len += (size_t)snprintf(data + len, cap - len,
				"--- HPX_START ---\n--- HPX_ITER 0 ---\n\"Layer\",\"Op\"");
	for (int c = 0; c < 297; c++)
		len += (size_t)snprintf(data + len, cap - len, ",\"C%d\"", c);
	len += (size_t)snprintf(data + len, cap - len, ",\"overflow\"\n");
	for (int r = 0; r < 200; r++)
		len += (size_t)snprintf(data + len, cap - len, "%d,CONV_2D,1,2,3,0\n", r);
	len += (size_t)snprintf(data + len, cap - len, "--- HPX_END ---\n");
	int port = 0;
	int lfd = tcp_listener(&port);
	struct sender s = {.listen_fd = lfd, .data = data, .len = len, .close_after = 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
	char *spec = ts_strf("tcp:127.0.0.1:%d", port);
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/cap.log", dir);
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	struct ergon_hpx_capture_opts o = {
	    .transport = spec, .log_path = log, .timeout_s = 20, .heartbeat_s = 5};
	struct ergon_hpx_capture_result cr;
	assert_int_equal(ergon_hpx_capture(&o, p, &cr, &err), 0);
	pthread_join(th, NULL);
	assert_true(cr.parse_failed);
	assert_true(cr.complete); /* the END sentinel was seen after the failure */
	/* every byte sent, up to and including the END line, is in the log */
	size_t got_len = 0;
	char *got = ts_read_file(log, &got_len);
	assert_non_null(got);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, data, len);
	assert_int_equal(cr.bytes, len);
	const json_t *is = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(cr.issues, i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "code")), "pmu.parser_limit") == 0)
			is = v;
	}
	assert_non_null(is);
	assert_int_equal(ergon_issues_integrity(cr.issues), ERGON_INTEGRITY_INVALID);
	/* the message names the line of the header (3) and the cap */
	const char *msg = json_string_value(json_object_get(is, "message"));
	assert_non_null(strstr(msg, "line 3"));
	assert_non_null(strstr(msg, log));
	free(got);
	ergon_hpx_capture_result_cleanup(&cr);
	ergon_hpx_parser_free(p);
	close(lfd);
	ts_tmpdir_remove(dir);
	free(dir);
	free(log);
	free(spec);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(serial_over_pty),
	    cmocka_unit_test(tcp_server_thread),
	    cmocka_unit_test(unix_server_thread),
	    cmocka_unit_test(heartbeat_timeout_keeps_everything),
	    cmocka_unit_test(window_heartbeat_covers_the_silent_window),
	    cmocka_unit_test(itm_decoder_counts),
	    cmocka_unit_test(swo_capture_is_diagnostic_when_lossy),
	    cmocka_unit_test(bad_specs),
	    cmocka_unit_test(parser_limit_keeps_whole_log),
	    cmocka_unit_test(serial_survives_target_reset),
	    cmocka_unit_test(overall_timeout_keeps_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

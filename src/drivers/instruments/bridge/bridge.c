/* The bridge instrument (`--instrument bridge:ARGV`): a persistent child
 * process that speaks docs/BRIDGE.md on its stdin/stdout, exposed as an
 * instrument. This file is the glue (process, poll, queues, heartbeat,
 * commands); bridge_wire.c is the wire format.
 *
 * The child's stdin and stdout are one end of a socketpair (send with
 * MSG_NOSIGNAL: a dead bridge gives EPIPE, never SIGPIPE); stderr is a pipe
 * whose last 1 KiB is kept and quoted when the bridge fails. The first
 * failure is kept; packets that arrived before it are still handed out,
 * then the failure, so nothing measured is lost. */

#include "ergon/bridge.h"

#include "drivers/instruments/bridge/bridge_priv.h"
#include "drivers/instruments/bridge/bridge_wire.h"
#include "ergon/artifact.h"
#include "ergon/issues.h"
#include "ergon/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK ERGON_BRIDGE_APPEND_MAX
#define QUEUE_MAX ((size_t)1 << 18)  /* packets held for a slow reader: 262 s at 1 kHz, 2.6 s at 100 kHz */
#define RQUEUE_MAX ((size_t)1 << 22) /* raw samples held */
#define ERRTAIL 1024
#define CLOSE_GRACE_S 2.0
#define GAP_ISSUES_MAX 16
#define RAW_GAP_MAX ((uint64_t)1 << 20) /* lost raw samples kept in place as NaN, at once */
#define READ_WAIT_S 0.01		/* longest a read waits for a line */

/* A ring of fixed-size elements that grows by doubling up to max. */
struct ring {
	unsigned char *buf;
	size_t head, len, cap, max, esize;
};

struct bridge {
	struct ergon_wl_argv av;
	char label[160];
	pid_t pid; /* -1 once reaped */
	int fd;	   /* socketpair end: commands out, lines in; -1 closed */
	int efd;   /* stderr pipe; -1 closed */
	int eof;   /* stdout ended */
	int status, have_status;
	struct bridge_lines lines;
	char errtail[ERRTAIL];
	size_t errlen;
	struct bridge_hello hello;
	double heartbeat_s, hello_timeout_s;
	double last_line_s;
	int have_hello, started, stopping, stopped;
	/* The first failure, returned once the queue is empty. */
	int fail_code;
	char fail_msg[ERGON_ERR_MSG_MAX];
	struct ring q;	/* statistics packets */
	struct ring rq; /* raw samples as instrument samples */
	struct ergon_sample last_raw;
	/* Instrument time -> host monotonic. */
	int have_offset;
	double offset_s;
	/* Contiguity of sample ids. */
	int have_next_id;
	uint64_t next_id;
	uint64_t gaps, dropped_samples;
	int gap_summary, quit_done;
	double prev_t_end_s;
	int have_prev_t;
	/* Commands. */
	uint64_t cmd_id;
	uint64_t ack_id;
	int ack_ok;
	char ack_msg[512];
	uint64_t gpi_id;
	uint32_t gpi_value;
	int have_gpi;
	/* Counters for stats(). */
	uint64_t packets, raw_samples, raw_ignored, late_ignored, bytes, lines_n;
	double max_silence_s;
	json_t *issues; /* inst->issues, borrowed */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct bridge *bridge_of(const struct ergon_instrument *inst)
{
	return ergon_bridge_is(inst) ? inst->priv : NULL;
}

/* The last stderr line, for messages. */
static void stderr_last(const struct bridge *b, char *out, size_t cap)
{
	size_t end = b->errlen;
	while (end > 0 && (b->errtail[end - 1] == '\n' || b->errtail[end - 1] == '\r'))
		end--;
	size_t start = end;
	while (start > 0 && b->errtail[start - 1] != '\n')
		start--;
	size_t n = end - start;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, b->errtail + start, n);
	out[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20)
			out[i] = ' ';
}

/* Keep the first failure; kill the child when asked (a bridge that talks
 * garbage or stalls is not trusted to stop by itself). */
__attribute__((format(printf, 4, 5))) static void fail(struct bridge *b, int code, int kill_it,
						       const char *fmt, ...)
{
	if (b->fail_code == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(b->fail_msg, sizeof(b->fail_msg), fmt, ap);
		va_end(ap);
		b->fail_code = code;
	}
	if (kill_it && b->pid > 0) {
		b->status = ergon_wl_kill_reap(b->pid);
		b->have_status = 1;
		b->pid = -1;
	}
}

/* Reap the child if it has exited, waiting at most wait_s. */
static void reap(struct bridge *b, double wait_s)
{
	double until = now_s() + wait_s;
	while (b->pid > 0) {
		int st = 0;
		if (ergon_wl_try_reap(b->pid, &st)) {
			b->status = st;
			b->have_status = 1;
			b->pid = -1;
			break;
		}
		if (now_s() >= until)
			break;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
}

static void status_text(const struct bridge *b, char *buf, size_t cap)
{
	if (b->have_status)
		ergon_wl_status_text(b->status, buf, cap);
	else
		snprintf(buf, cap, "closed its stdout but is still running");
}

/* --- the queues -------------------------------------------------------- */

static int ring_push(struct ring *r, const void *e)
{
	if (r->len == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 1024;
		if (nc > r->max)
			return ERGON_ETOOBIG;
		unsigned char *nb = malloc(nc * r->esize);
		if (nb == NULL)
			return ERGON_ENOMEM;
		for (size_t i = 0; i < r->len; i++)
			memcpy(nb + i * r->esize, r->buf + ((r->head + i) % r->cap) * r->esize,
			       r->esize);
		free(r->buf);
		r->buf = nb;
		r->cap = nc;
		r->head = 0;
	}
	memcpy(r->buf + ((r->head + r->len) % r->cap) * r->esize, e, r->esize);
	r->len++;
	return 0;
}

/* Move up to cap elements into out; returns how many. */
static size_t ring_take(struct ring *r, void *out, size_t cap)
{
	size_t n = 0;
	for (; n < cap && r->len > 0; n++) {
		memcpy((unsigned char *)out + n * r->esize, r->buf + r->head * r->esize, r->esize);
		r->head = (r->head + 1) % r->cap;
		r->len--;
	}
	return n;
}

/* Statistics packets one read can bring: a held partial line (at most
 * ERGON_BRIDGE_LINE_MAX) completed by one read, every packet at least 32
 * bytes (a stats_block's three required float64 in base64; a stats line
 * takes more than 80). */
#define PUMP_PACKETS_MAX ((ERGON_BRIDGE_LINE_MAX + READ_CHUNK) / 32)

/* A full queue stops reading from the bridge (it then blocks on its
 * writes), which is back-pressure, not a stall. */
static int queue_full(const struct bridge *b)
{
	return b->q.len + PUMP_PACKETS_MAX >= QUEUE_MAX ||
	       b->rq.len + ERGON_BRIDGE_RAW_MAX >= RQUEUE_MAX;
}

/* --- messages ---------------------------------------------------------- */

static double map_t(struct bridge *b, double t_s)
{
	if (b->hello.clock_host)
		return t_s;
	return t_s + b->offset_s;
}

static void note_gap(struct bridge *b, uint64_t first, uint64_t count, const char *how)
{
	b->gaps++;
	b->dropped_samples += count;
	if (b->gaps > GAP_ISSUES_MAX)
		return;
	double dur = (double)count / b->hello.sample_rate_hz;
	ergon_issue_add(b->issues, "instrument.bridge_samples_dropped",
			json_pack("{s:s, s:I, s:I, s:f}", "instrument", b->label, "first_sample_id",
				  (json_int_t)first, "samples", (json_int_t)count, "duration_s",
				  dur),
			"%s: %llu samples (%.6f s) from sample id %llu were lost (%s); they are "
			"not interpolated: the figures cover the samples that arrived",
			b->label, (unsigned long long)count, dur, (unsigned long long)first, how);
}

/* Sample ids must not go backwards; a jump forward is lost data. */
static int check_ids(struct bridge *b, uint64_t first, uint64_t count, uint64_t line_no,
		     uint64_t offset)
{
	if (b->have_next_id && first < b->next_id) {
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): sample_id %llu goes backwards (the "
		     "previous block ended at %llu); fix the bridge to follow docs/BRIDGE.md",
		     (unsigned long long)offset, (unsigned long long)line_no,
		     (unsigned long long)first, (unsigned long long)b->next_id);
		return -1;
	}
	if (b->have_next_id && first > b->next_id)
		note_gap(b, b->next_id, first - b->next_id, "a gap in sample ids");
	b->next_id = first + count;
	b->have_next_id = 1;
	return 0;
}

/* A packet's statistics must be possible (docs/BRIDGE.md, "Statistics that
 * cannot be"): min <= max, the average within [min, max] give or take a
 * rounding tolerance of 1e-6 of the larger magnitude plus the hello's
 * resolution (resolution_a for i_*, resolution_w for p_*, none for v_*),
 * and no negative standard deviation. min and max feed the uncertainty
 * bound and the peak (engines/gated), so an impossible pair would leave
 * ergon as a figure. v_min_v/v_max_v and p_min_w/p_max_w carry no presence
 * flag: both 0 reads as "not sent". Returns -1 once it failed. */
static int check_group(struct bridge *b, const char *pkt, const char *g, const char *unit,
		       double avg, double std, double mn, double mx, int has_minmax, double res,
		       uint64_t line_no, uint64_t offset)
{
	if (!(std >= 0)) {
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): %s: %s_std_%s %.9g is not a standard "
		     "deviation (negative or NaN); fix the bridge (docs/BRIDGE.md)",
		     (unsigned long long)offset, (unsigned long long)line_no, pkt, g, unit, std);
		return -1;
	}
	if (!has_minmax)
		return 0;
	if (mn > mx) {
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): %s: %s_min_%s %.9g is above %s_max_%s "
		     "%.9g; fix the bridge (docs/BRIDGE.md)",
		     (unsigned long long)offset, (unsigned long long)line_no, pkt, g, unit, mn, g,
		     unit, mx);
		return -1;
	}
	double tol = 1e-6 * fmax(fabs(mn), fabs(mx)) + res;
	if (avg < mn - tol || avg > mx + tol) {
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): %s: %s_avg_%s %.9g is outside "
		     "[%s_min_%s %.9g, %s_max_%s %.9g] by more than the rounding tolerance %.3g "
		     "(1e-6 of the larger magnitude plus the hello's resolution); fix the bridge "
		     "(docs/BRIDGE.md)",
		     (unsigned long long)offset, (unsigned long long)line_no, pkt, g, unit, avg, g,
		     unit, mn, g, unit, mx, tol);
		return -1;
	}
	return 0;
}

static int check_stats(struct bridge *b, const struct ergon_stats_packet *p, long block_k,
		       uint64_t line_no, uint64_t offset)
{
	char pkt[96];
	if (block_k >= 0)
		snprintf(pkt, sizeof(pkt), "stats_block packet %ld (sample_id %llu)", block_k,
			 (unsigned long long)p->sample_id);
	else
		snprintf(pkt, sizeof(pkt), "stats (sample_id %llu)",
			 (unsigned long long)p->sample_id);
	int mm = (p->fields & ERGON_PKT_MINMAX) != 0;
	if (check_group(b, pkt, "i", "a", p->i_avg_a, p->i_std_a, p->i_min_a, p->i_max_a, mm,
			b->hello.resolution_a, line_no, offset))
		return -1;
	if (check_group(b, pkt, "v", "v", p->v_avg_v, p->v_std_v, p->v_min_v, p->v_max_v,
			(p->fields & ERGON_PKT_VOLTAGE) && (p->v_min_v != 0 || p->v_max_v != 0),
			0.0, line_no, offset))
		return -1;
	return check_group(b, pkt, "p", "w", p->p_avg_w, p->p_std_w, p->p_min_w, p->p_max_w,
			   (p->fields & ERGON_PKT_POWER) && (p->p_min_w != 0 || p->p_max_w != 0),
			   b->hello.resolution_w, line_no, offset);
}

/* One statistics packet, from a stats line or a stats_block (block_k: the
 * packet's index in its block, -1 for a line). Returns -1 once it failed. */
static int on_packet(struct bridge *b, const struct ergon_stats_packet *in, uint64_t count,
		     long block_k, uint64_t line_no, uint64_t offset)
{
	struct ergon_stats_packet p = *in;
	if (check_ids(b, p.sample_id, count, line_no, offset))
		return -1;
	if (b->have_prev_t && p.t_start_s < b->prev_t_end_s - 1e-9) {
		char where[64] = "";
		if (block_k >= 0)
			snprintf(where, sizeof(where), " (packet %ld of its stats_block)", block_k);
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): %s.t_start_s %.9g%s is before the "
		     "previous packet's end %.9g; time must not go backwards",
		     (unsigned long long)offset, (unsigned long long)line_no,
		     block_k >= 0 ? "stats_block" : "stats", p.t_start_s, where, b->prev_t_end_s);
		return -1;
	}
	if (check_stats(b, &p, block_k, line_no, offset))
		return -1;
	b->prev_t_end_s = p.t_end_s;
	b->have_prev_t = 1;
	if (!b->have_offset && !b->hello.clock_host) {
		b->offset_s = now_s() - p.t_end_s;
		b->have_offset = 1;
	}
	p.t_start_s = map_t(b, p.t_start_s);
	p.t_end_s = map_t(b, p.t_end_s);
	int rc = ring_push(&b->q, &p);
	if (rc) {
		fail(b, rc, 1, "%s: the packet queue is full (%zu packets); read faster", b->label,
		     QUEUE_MAX);
		return -1;
	}
	b->packets++;
	return 0;
}

static void on_stats(struct bridge *b, struct bridge_msg *m, uint64_t line_no, uint64_t offset)
{
	if (m->type == BRIDGE_MSG_STATS) {
		(void)on_packet(b, &m->stats, m->sample_count, -1, line_no, offset);
		return;
	}
	/* A stats_block: its packets one by one, through the same checks. */
	for (size_t k = 0; k < m->block.n; k++)
		if (on_packet(b, &m->block.p[k], m->block.sample_count, (long)k, line_no, offset))
			return;
}

static void on_raw(struct bridge *b, struct bridge_msg *m, uint64_t line_no, uint64_t offset)
{
	const struct bridge_raw *r = &m->raw;
	uint64_t gap = b->have_next_id && r->sample_id > b->next_id ? r->sample_id - b->next_id : 0;
	if (check_ids(b, r->sample_id, r->n, line_no, offset))
		return;
	if (gap > 0 && !b->hello.stream_stats) {
		/* The lost samples keep their places as NaN, so that the raw
		 * stream stays on its sample clock: consumers leave them out of
		 * every sum (never interpolated); the inputs hold their last
		 * level so that a gap makes no gate edge. */
		if (gap > RAW_GAP_MAX) {
			fail(b, ERGON_EDEVICE, 1,
			     "%s: %llu raw samples were lost at once (more than %llu): the stream "
			     "cannot be kept on its sample clock; check the USB link",
			     b->label, (unsigned long long)gap, (unsigned long long)RAW_GAP_MAX);
			return;
		}
		double t_gap = r->t_s - (double)gap / b->hello.sample_rate_hz;
		for (uint64_t k = 0; k < gap; k++) {
			struct ergon_sample s = b->last_raw;
			s.t_s = map_t(b, t_gap + (double)k / b->hello.sample_rate_hz);
			s.current_a = s.voltage_v = s.power_w = NAN;
			s.fields |= ERGON_F_CURRENT | ERGON_F_VOLTAGE;
			if (ring_push(&b->rq, &s)) {
				fail(b, ERGON_ETOOBIG, 1,
				     "%s: the sample queue is full; read faster", b->label);
				return;
			}
		}
	}
	if (b->hello.stream_stats) {
		/* The instrument stream is the statistics; raw blocks beside
		 * them are counted, not mixed in (times would interleave). */
		b->raw_ignored += r->n;
		return;
	}
	if (!b->have_offset && !b->hello.clock_host) {
		b->offset_s = now_s() - (r->t_s + (double)(r->n - 1) / b->hello.sample_rate_hz);
		b->have_offset = 1;
	}
	for (size_t k = 0; k < r->n; k++) {
		struct ergon_sample s = {0};
		s.t_s = map_t(b, r->t_s + (double)k / b->hello.sample_rate_hz);
		s.current_a = r->current_a[k];
		s.fields = ERGON_F_CURRENT;
		if (r->voltage_v) {
			s.voltage_v = r->voltage_v[k];
			s.fields |= ERGON_F_VOLTAGE;
		}
		if (r->power_w) {
			s.power_w = r->power_w[k];
			s.fields |= ERGON_F_POWER;
		}
		if (r->digital) {
			s.digital = r->digital[k];
			s.fields |= ERGON_F_DIGITAL;
		}
		b->last_raw = s;
		int rc = ring_push(&b->rq, &s);
		if (rc) {
			fail(b, rc, 1, "%s: the sample queue is full (%zu samples); read faster",
			     b->label, RQUEUE_MAX);
			return;
		}
	}
	b->raw_samples += r->n;
}

static void on_line(struct bridge *b, const char *line, size_t len, uint64_t offset,
		    uint64_t line_no)
{
	struct bridge_msg m;
	struct ergon_err e = {0};
	b->lines_n++;
	int rc = bridge_wire_decode(line, len, offset, line_no, &m, &e);
	if (rc) {
		bridge_msg_cleanup(&m);
		fail(b, rc, 1, "%s (%s)", e.msg, b->label);
		return;
	}
	if (!b->have_hello && m.type != BRIDGE_MSG_HELLO && m.type != BRIDGE_MSG_ERROR) {
		fail(b, ERGON_EPARSE, 1,
		     "bridge: stdout byte %llu (line %llu): the first message must be hello "
		     "(docs/BRIDGE.md) (%s)",
		     (unsigned long long)offset, (unsigned long long)line_no, b->label);
		goto done;
	}
	switch (m.type) {
	case BRIDGE_MSG_HELLO:
		if (b->have_hello) {
			fail(b, ERGON_EPARSE, 1,
			     "bridge: stdout byte %llu (line %llu): a second hello (%s)",
			     (unsigned long long)offset, (unsigned long long)line_no, b->label);
			break;
		}
		b->hello = m.hello;
		b->have_hello = 1;
		break;
	case BRIDGE_MSG_STATS:
	case BRIDGE_MSG_STATS_BLOCK:
	case BRIDGE_MSG_RAW: {
		int is_stats = m.type != BRIDGE_MSG_RAW;
		const char *kind = m.type == BRIDGE_MSG_STATS	    ? "stats"
				   : m.type == BRIDGE_MSG_STATS_BLOCK ? "stats_block"
								      : "raw";
		if (b->stopped || b->stopping) {
			/* Packets in flight when stop was sent: counted, not used. */
			b->late_ignored += m.type == BRIDGE_MSG_STATS_BLOCK ? m.block.n : 1;
			break;
		}
		if (!b->started) {
			fail(
			    b, ERGON_EPARSE, 1,
			    "bridge: stdout byte %llu (line %llu): %s data before start; send data "
			    "only after the ack of start (%s)",
			    (unsigned long long)offset, (unsigned long long)line_no, kind,
			    b->label);
			break;
		}
		if (!(is_stats ? b->hello.stream_stats : b->hello.stream_raw)) {
			fail(
			    b, ERGON_EPARSE, 1,
			    "bridge: stdout byte %llu (line %llu): %s sent but the hello's streams "
			    "do not list \"%s\" (%s)",
			    (unsigned long long)offset, (unsigned long long)line_no, kind,
			    is_stats ? "stats" : "raw", b->label);
			break;
		}
		if (is_stats)
			on_stats(b, &m, line_no, offset);
		else
			on_raw(b, &m, line_no, offset);
		break;
	}
	case BRIDGE_MSG_GPI:
		b->gpi_value = m.value;
		b->have_gpi = 1;
		if (m.has_id)
			b->gpi_id = m.id;
		break;
	case BRIDGE_MSG_ACK:
		b->ack_id = m.id;
		b->ack_ok = m.ok;
		snprintf(b->ack_msg, sizeof(b->ack_msg), "%s", m.message);
		break;
	case BRIDGE_MSG_DROPPED:
		note_gap(b, m.drop_sample_id, m.drop_count, "reported by the bridge");
		break;
	case BRIDGE_MSG_ERROR:
		fail(b, ERGON_EDEVICE, 0, "%s: the bridge reported: %s", b->label, m.message);
		break;
	default: /* heartbeat */
		break;
	}
done:
	bridge_msg_cleanup(&m);
}

/* Read what the bridge wrote within timeout_s. Failures go to b->fail_*. */
static void pump(struct bridge *b, double timeout_s)
{
	if (b->fail_code && b->pid < 0)
		return;
	struct pollfd pf[2];
	int nfd = 0, ifd = -1, iefd = -1;
	if (b->fd >= 0 && !b->eof && !queue_full(b) && b->fail_code == 0) {
		pf[nfd] = (struct pollfd){.fd = b->fd, .events = POLLIN};
		ifd = nfd++;
	}
	if (b->efd >= 0) {
		pf[nfd] = (struct pollfd){.fd = b->efd, .events = POLLIN};
		iefd = nfd++;
	}
	if (nfd == 0)
		return;
	int ms = (int)ceil(timeout_s * 1000.0);
	int pr = poll(pf, (nfds_t)nfd, ms < 0 ? 0 : ms);
	if (pr <= 0)
		return;
	if (iefd >= 0 && (pf[iefd].revents & (POLLIN | POLLHUP | POLLERR))) {
		char tmp[4096];
		ssize_t r = read(b->efd, tmp, sizeof(tmp));
		if (r <= 0) {
			close(b->efd);
			b->efd = -1;
		} else {
			size_t n = (size_t)r;
			if (b->errlen + n > ERRTAIL) {
				size_t drop = b->errlen + n - ERRTAIL;
				if (drop > b->errlen)
					drop = b->errlen;
				memmove(b->errtail, b->errtail + drop, b->errlen - drop);
				b->errlen -= drop;
			}
			if (n > ERRTAIL)
				n = ERRTAIL;
			memcpy(b->errtail + b->errlen, tmp + (size_t)r - n, n);
			b->errlen += n;
		}
	}
	if (ifd < 0 || !(pf[ifd].revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	char buf[READ_CHUNK];
	ssize_t r = recv(b->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		b->eof = 1;
		if (bridge_lines_pending(&b->lines) > 0) {
			/* A last line without its newline: decode it anyway so that
			 * a packet is not lost for want of "\n", but say so if bad. */
			if (bridge_lines_append(&b->lines, "\n", 1, &(struct ergon_err){0}) == 0) {
				const char *line;
				size_t len;
				uint64_t off, ln;
				while (bridge_lines_next(&b->lines, &line, &len, &off, &ln))
					on_line(b, line, len, off, ln);
			}
		}
		return;
	}
	b->bytes += (uint64_t)r;
	struct ergon_err e = {0};
	int rc = bridge_lines_append(&b->lines, buf, (size_t)r, &e);
	const char *line;
	size_t len;
	uint64_t off, ln;
	int got = 0;
	while (b->fail_code == 0 && bridge_lines_next(&b->lines, &line, &len, &off, &ln)) {
		on_line(b, line, len, off, ln);
		got = 1;
	}
	if (rc)
		fail(b, rc, 1, "%s (%s)", e.msg, b->label);
	if (got) {
		double t = now_s();
		if (b->started && !b->stopped && t - b->last_line_s > b->max_silence_s)
			b->max_silence_s = t - b->last_line_s;
		b->last_line_s = t;
	}
}

/* After EOF: the bridge's end is a failure unless it came after stop. */
static void check_end(struct bridge *b)
{
	if (!b->eof || b->fail_code)
		return;
	reap(b, 1.0);
	if (b->stopped && b->have_status && WIFEXITED(b->status) && WEXITSTATUS(b->status) == 0)
		return;
	char st[160], last[256];
	status_text(b, st, sizeof(st));
	stderr_last(b, last, sizeof(last));
	fail(b, ERGON_EDEVICE, 0,
	     "%s: the bridge ended %s (%s)%s%s; what it measured before is kept", b->label,
	     !b->have_hello ? "before its hello"
	     : !b->started  ? "before start"
	     : b->stopped   ? "after stop"
			    : "mid-run",
	     st, last[0] ? "; its last stderr line: " : "", last);
}

static void check_stall(struct bridge *b)
{
	if (!b->started || b->stopped || b->fail_code || b->eof || queue_full(b))
		return;
	double silent = now_s() - b->last_line_s;
	if (silent > b->heartbeat_s) {
		char last[256];
		stderr_last(b, last, sizeof(last));
		fail(b, ERGON_ETIMEDOUT, 1,
		     "%s: the bridge stalled: no line for %.2f s (heartbeat bound %.2f s); it was "
		     "killed, what it measured before is kept%s%s",
		     b->label, silent, b->heartbeat_s, last[0] ? "; its last stderr line: " : "",
		     last);
	}
}

static int failure(const struct bridge *b, struct ergon_err *err)
{
	return ergon_err_set(err, b->fail_code, "%s", b->fail_msg);
}

/* --- commands ------------------------------------------------------------ */

/* Send a command and wait for its ack (or, for gpi, the snapshot). */
static int command(struct bridge *b, const char *cmd, const char *extra, double timeout_s,
		   struct ergon_err *err)
{
	if (b->fail_code)
		return failure(b, err);
	if (b->fd < 0 || b->eof)
		return ergon_err_set(err, ERGON_EDEVICE, "%s: the bridge is gone; cannot send %s",
				     b->label, cmd);
	char line[256];
	uint64_t id = ++b->cmd_id;
	int len = bridge_wire_command(line, sizeof(line), cmd, id, extra);
	if (len < 0)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: command %s too long", b->label, cmd);
	size_t off = 0;
	while (off < (size_t)len) {
		ssize_t w = send(b->fd, line + off, (size_t)len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;
			pump(b, 0);
			check_end(b);
			if (b->fail_code)
				return failure(b, err);
			return ergon_err_errno(err, e, "%s: sending %s to the bridge", b->label,
					       cmd);
		}
		off += (size_t)w;
	}
	int is_gpi = strcmp(cmd, "gpi") == 0;
	double until = now_s() + timeout_s;
	for (;;) {
		if (is_gpi ? b->gpi_id == id : b->ack_id == id)
			break;
		if (b->fail_code)
			return failure(b, err);
		if (b->eof) {
			check_end(b);
			if (b->fail_code)
				return failure(b, err);
			return ergon_err_set(err, ERGON_EDEVICE,
					     "%s: the bridge ended before it acknowledged %s",
					     b->label, cmd);
		}
		double left = until - now_s();
		if (left <= 0)
			return ergon_err_set(err, ERGON_ETIMEDOUT,
					     "%s: no acknowledgement of %s within %.2f s; the "
					     "bridge must answer every command (docs/BRIDGE.md)",
					     b->label, cmd, timeout_s);
		pump(b, left < 0.05 ? left : 0.05);
	}
	if (!is_gpi && !b->ack_ok)
		return ergon_err_set(err, ERGON_EDEVICE, "%s: the bridge refused %s: %s", b->label,
				     cmd, b->ack_msg[0] ? b->ack_msg : "(no reason given)");
	return 0;
}

/* --- opening ------------------------------------------------------------- */

static int opt_seconds(const struct ergon_instrument_options *opts, const char *key,
		       const char *label, double lo, double hi, double *out, struct ergon_err *err)
{
	const char *v = ergon_options_get(opts, key);
	if (v == NULL)
		return 0;
	char what[96];
	snprintf(what, sizeof(what), "--instrument-opt %s (%s)", key, label);
	int rc = ergon_parse_double(v, what, out, err);
	if (rc)
		return rc;
	if (!(*out >= lo && *out <= hi))
		return ergon_err_set(err, ERGON_ERANGE, "%s: %g s is not in %g..%g s", what, *out,
				     lo, hi);
	return 0;
}

/* The workload helpers name their input "--workload X"; here it is an
 * instrument. */
static void as_instrument(struct ergon_err *err)
{
	static const char w[] = "--workload ";
	if (strncmp(err->msg, w, sizeof(w) - 1) == 0) {
		char tmp[ERGON_ERR_MSG_MAX];
		snprintf(tmp, sizeof(tmp), "--instrument %s", err->msg + sizeof(w) - 1);
		memcpy(err->msg, tmp, sizeof(tmp));
	}
}

static int spawn(struct bridge *b, struct ergon_err *err)
{
	int sv[2] = {-1, -1}, ep[2] = {-1, -1};
	int rc = ergon_wl_program_check(b->av.argv[0], b->label, err);
	if (rc) {
		as_instrument(err);
		return rc;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return ergon_err_errno(err, errno, "%s: socketpair", b->label);
	if (pipe2(ep, O_CLOEXEC) != 0) {
		rc = ergon_err_errno(err, errno, "%s: pipe", b->label);
		goto fail;
	}
	rc = ergon_wl_spawn(&b->av, sv[1], sv[1], ep[1], b->label, &b->pid, err);
	if (rc) {
		as_instrument(err);
		goto fail;
	}
	close(sv[1]);
	close(ep[1]);
	b->fd = sv[0];
	b->efd = ep[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	return rc;
}

/* A bridge not yet spawned; NULL when out of memory. Free: bridge_free. */
static struct bridge *bridge_new(const struct ergon_wl_argv *av, const char *label)
{
	struct bridge *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	b->pid = -1;
	b->fd = b->efd = -1;
	b->q = (struct ring){.esize = sizeof(struct ergon_stats_packet), .max = QUEUE_MAX};
	b->rq = (struct ring){.esize = sizeof(struct ergon_sample), .max = RQUEUE_MAX};
	b->av = *av;
	/* argv points into av.buf: rebase the pointers onto the copy. */
	for (size_t i = 0; i < av->argc; i++)
		b->av.argv[i] = b->av.buf + (av->argv[i] - av->buf);
	b->av.argv[av->argc] = NULL;
	snprintf(b->label, sizeof(b->label), "%s", label);
	return b;
}

static void bridge_free(struct bridge *b)
{
	if (b == NULL)
		return;
	if (b->pid > 0)
		ergon_wl_kill_reap(b->pid);
	if (b->fd >= 0)
		close(b->fd);
	if (b->efd >= 0)
		close(b->efd);
	bridge_lines_free(&b->lines);
	free(b->q.buf);
	free(b->rq.buf);
	free(b);
}

static void fill_identity(struct ergon_instrument *inst, const struct bridge *b)
{
	const struct bridge_hello *h = &b->hello;
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "%s", h->vendor);
	snprintf(id->model, sizeof(id->model), "%s", h->model);
	snprintf(id->serial, sizeof(id->serial), "%s", h->serial);
	id->accuracy_pct = h->accuracy_pct;
	id->resolution_w = h->resolution_w;
	id->resolution_j = h->resolution_j;
	id->sample_rate_hz = h->stream_stats ? h->stats_rate_hz : h->sample_rate_hz;
	/* A statistics packet is the mean over its span. */
	id->averaging_period_s = h->stream_stats ? 1.0 / h->stats_rate_hz : 0.0;
	snprintf(id->integrates, sizeof(id->integrates), "%s", h->integrates);
	snprintf(id->clock, sizeof(id->clock), "%s",
		 h->clock_host ? "host_monotonic" : "instrument");
	id->provenance = h->provenance;
	id->n_rails = 1;
	id->total_rail = 0;
	snprintf(id->rails[0], sizeof(id->rails[0]), "bridge");
	snprintf(id->notes, sizeof(id->notes),
		 "%.60s, bridge protocol %d; validated against: %.150s; %.160s%s%s stream on a "
		 "%g Hz base, %d in/%d out; provenance: the bridge's word",
		 b->label, h->protocol, h->validated_against, h->notes, h->notes[0] ? "; " : "",
		 h->stream_stats ? "statistics" : "raw", h->sample_rate_hz, h->inputs, h->outputs);
	if (!h->clock_host) {
		size_t l = strlen(id->notes);
		snprintf(id->notes + l, sizeof(id->notes) - l,
			 "; time mapped to the host clock at the first packet (lags by its "
			 "delivery latency)");
	}
}

int ergon_bridge_open_argv(struct ergon_instrument *inst, const struct ergon_wl_argv *av,
			   const char *label, const struct ergon_instrument_options *opts,
			   const char *const *extra, struct ergon_err *err)
{
	static const char *const keys[] = {"hello_timeout_s", "heartbeat_s", "accuracy_pct", NULL};
	for (const char *const *kv = opts->kv; kv && *kv; kv++) {
		int ok = 0;
		size_t kl = strcspn(*kv, "=");
		for (const char *const *k = keys; *k && !ok; k++)
			ok = strlen(*k) == kl && strncmp(*kv, *k, kl) == 0;
		for (const char *const *k = extra; k && *k && !ok; k++)
			ok = strlen(*k) == kl && strncmp(*kv, *k, kl) == 0;
		if (!ok || (*kv)[kl] != '=')
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "--instrument-opt %s: %s knows only hello_timeout_s=S, "
			    "heartbeat_s=S and accuracy_pct=PCT%s%s",
			    *kv, label, extra && extra[0] ? " and " : "",
			    extra && extra[0] ? extra[0] : "");
	}
	struct bridge *b = bridge_new(av, label);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	b->issues = inst->issues;
	b->hello_timeout_s = 10.0;
	double hb = 0;
	int rc = opt_seconds(opts, "hello_timeout_s", label, 0.1, 600, &b->hello_timeout_s, err);
	if (rc == 0)
		rc = opt_seconds(opts, "heartbeat_s", label, 0.05, 600, &hb, err);
	if (rc == 0)
		rc = spawn(b, err);
	if (rc)
		goto fail;
	double until = now_s() + b->hello_timeout_s;
	while (!b->have_hello && !b->fail_code && !b->eof && now_s() < until)
		pump(b, 0.05);
	if (b->eof && !b->have_hello)
		check_end(b);
	if (b->fail_code) {
		if (b->pid > 0) { /* an error message: give it a moment to exit */
			reap(b, 1.0);
			if (b->have_status) {
				char st[160];
				status_text(b, st, sizeof(st));
				size_t l = strlen(b->fail_msg);
				snprintf(b->fail_msg + l, sizeof(b->fail_msg) - l,
					 " (the bridge %s)", st);
			}
		}
		rc = failure(b, err);
		goto fail;
	}
	if (!b->have_hello) {
		char last[256];
		stderr_last(b, last, sizeof(last));
		rc = ergon_err_set(err, ERGON_ETIMEDOUT,
				   "%s: no hello within %.1f s; a bridge's first line must be its "
				   "hello (docs/BRIDGE.md)%s%s; raise --instrument-opt "
				   "hello_timeout_s=S if the device is slow to open",
				   label, b->hello_timeout_s,
				   last[0] ? "; its last stderr line: " : "", last);
		goto fail;
	}
	b->heartbeat_s = hb > 0 ? hb : b->hello.heartbeat_s;
	fill_identity(inst, b);
	const char *acc = ergon_options_get(opts, "accuracy_pct");
	if (acc) {
		double pct = 0;
		char what[96];
		snprintf(what, sizeof(what), "--instrument-opt accuracy_pct (%s)", label);
		rc = ergon_parse_double(acc, what, &pct, err);
		if (rc == 0 && !(pct > 0 && pct <= 100))
			rc = ergon_err_set(err, ERGON_ERANGE,
					   "%s: %g is not a percentage in (0, 100]", what, pct);
		if (rc)
			goto fail;
		inst->identity.accuracy_pct = pct;
		size_t l = strlen(inst->identity.notes);
		snprintf(inst->identity.notes + l, sizeof(inst->identity.notes) - l,
			 "; accuracy %g %% from --instrument-opt (bridge: %g %%)", pct,
			 b->hello.accuracy_pct);
	}
	/* A Joulescope gets its vendor's ranges and whatever of their figures
	 * ergon could read (ratings.c), unless an accuracy was stated for the
	 * whole reading: then ergon_instrument_open makes that the rating. */
	if (!(inst->identity.accuracy_pct > 0) && strcmp(b->hello.vendor, "Jetperch") == 0)
		(void)ergon_rating_for_model(b->hello.model, NAN, &inst->identity.rating);
	inst->priv = b;
	return 0;
fail:
	bridge_free(b);
	return rc;
}

/* --- the driver entries --------------------------------------------------- */

static int bridge_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		       struct ergon_err *err)
{
	if (opts->arg == NULL || opts->arg[strspn(opts->arg, " \t")] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument bridge: give the bridge's command line, e.g. "
				     "bridge:'python3 my_meter.py' (protocol: docs/BRIDGE.md)");
	static struct ergon_wl_argv av; /* 8 KiB: not on the stack */
	char label[160];
	snprintf(label, sizeof(label), "bridge:%.120s", opts->arg);
	int rc = ergon_wl_argv_split(opts->arg, label, &av, err);
	if (rc) {
		as_instrument(err);
		return rc;
	}
	return ergon_bridge_open_argv(inst, &av, label, opts, NULL, err);
}

int ergon_bridge_drv_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct bridge *b = inst->priv;
	if (b->started)
		return 0;
	/* Data may follow the ack at once: accept it from here on. */
	b->started = 1;
	b->last_line_s = now_s();
	int rc = command(b, "start", NULL, b->hello_timeout_s, err);
	if (rc)
		b->started = 0;
	b->last_line_s = now_s();
	return rc;
}

/* Hand out what a queue holds (waiting a little for the bridge when it is
 * empty); then the failure, if any. */
static int take(struct bridge *b, struct ring *r, void *buf, size_t cap, size_t *n,
		struct ergon_err *err)
{
	if (r->len == 0 && b->fail_code == 0 && !b->stopped) {
		pump(b, READ_WAIT_S);
		check_end(b);
		check_stall(b);
	}
	*n = ring_take(r, buf, cap);
	if (*n == 0 && b->fail_code)
		return failure(b, err);
	return 0;
}

/* Hand out queued packets; then the failure, if any. */
static int take_packets(struct bridge *b, struct ergon_stats_packet *buf, size_t cap, size_t *n,
			struct ergon_err *err)
{
	return take(b, &b->q, buf, cap, n, err);
}

int ergon_bridge_drv_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
			  size_t *n, struct ergon_err *err)
{
	struct bridge *b = inst->priv;
	*n = 0;
	if (!b->started)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: read before start", b->label);
	if (b->hello.stream_stats) {
		struct ergon_stats_packet pk[64];
		if (cap > 64)
			cap = 64;
		int rc = take_packets(b, pk, cap, n, err);
		for (size_t i = 0; i < *n; i++) {
			const struct ergon_stats_packet *p = &pk[i];
			struct ergon_sample s = {0};
			s.t_s = p->t_end_s;
			s.current_a = p->i_avg_a;
			s.fields = ERGON_F_CURRENT;
			if (p->fields & ERGON_PKT_VOLTAGE) {
				s.voltage_v = p->v_avg_v;
				s.fields |= ERGON_F_VOLTAGE;
			}
			if (p->fields & ERGON_PKT_POWER) {
				s.power_w = p->p_avg_w;
				s.fields |= ERGON_F_POWER;
			}
			if (p->fields & ERGON_PKT_ACCUM) {
				s.energy_j = p->energy_j;
				s.charge_c = p->charge_c;
				s.fields |= ERGON_F_ENERGY | ERGON_F_CHARGE;
			}
			if (p->fields & ERGON_PKT_DIGITAL) {
				s.digital = p->digital;
				s.fields |= ERGON_F_DIGITAL;
			}
			buf[i] = s;
		}
		return rc;
	}
	return take(b, &b->rq, buf, cap, n, err);
}

/* Ask the bridge to quit and reap it; a non-zero exit becomes an issue. */
static void quit(struct bridge *b, struct ergon_err *err)
{
	if (b->quit_done)
		return;
	b->quit_done = 1;
	if (b->pid > 0 && b->fd >= 0 && !b->eof && b->fail_code == 0) {
		struct ergon_err qerr = {0};
		command(b, "quit", NULL, CLOSE_GRACE_S, &qerr);
		shutdown(b->fd, SHUT_WR);
		double until = now_s() + CLOSE_GRACE_S;
		while (!b->eof && now_s() < until)
			pump(b, 0.05);
	}
	if (b->pid > 0)
		reap(b, CLOSE_GRACE_S);
	if (b->pid > 0) {
		b->status = ergon_wl_kill_reap(b->pid);
		b->have_status = 1;
		b->pid = -1;
		ergon_issue_add(b->issues, "instrument.bridge_exit_status",
				json_pack("{s:s}", "instrument", b->label),
				"%s: the bridge did not exit within %.0f s of quit and was killed",
				b->label, CLOSE_GRACE_S);
		return;
	}
	if (b->have_status && b->fail_code == 0 &&
	    !(WIFEXITED(b->status) && WEXITSTATUS(b->status) == 0)) {
		char st[160], last[256];
		status_text(b, st, sizeof(st));
		stderr_last(b, last, sizeof(last));
		ergon_issue_add(b->issues, "instrument.bridge_exit_status",
				json_pack("{s:s, s:s}", "instrument", b->label, "status", st),
				"%s: the bridge %s at quit%s%s", b->label, st,
				last[0] ? "; its last stderr line: " : "", last);
		(void)err;
	}
}

int ergon_bridge_drv_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct bridge *b = inst->priv;
	int rc = 0;
	if (b->started && !b->stopped) {
		b->stopping = 1;
		if (b->fail_code == 0 && !b->eof)
			rc = command(b, "stop", NULL, b->heartbeat_s + 1.0, err);
		b->stopped = 1;
	}
	/* A bridge measures once: after stop it is asked to quit, so that its
	 * exit status makes it into this run's issues. */
	quit(b, err);
	if (b->gaps > GAP_ISSUES_MAX && !b->gap_summary) {
		b->gap_summary = 1;
		ergon_issue_add(b->issues, "instrument.bridge_samples_dropped",
				json_pack("{s:s, s:I, s:I}", "instrument", b->label, "gaps",
					  (json_int_t)b->gaps, "samples",
					  (json_int_t)b->dropped_samples),
				"%s: %llu gaps lost %llu samples in all (the first %d are listed)",
				b->label, (unsigned long long)b->gaps,
				(unsigned long long)b->dropped_samples, GAP_ISSUES_MAX);
	}
	return rc;
}

void ergon_bridge_drv_close(struct ergon_instrument *inst)
{
	struct bridge *b = inst->priv;
	if (b == NULL)
		return;
	quit(b, NULL);
	bridge_free(b);
	inst->priv = NULL;
}

json_t *ergon_bridge_drv_stats(const struct ergon_instrument *inst)
{
	const struct bridge *b = inst->priv;
	if (b == NULL)
		return NULL;
	json_t *o =
	    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "bridge", b->label, "bytes",
		      (json_int_t)b->bytes, "lines", (json_int_t)b->lines_n, "packets",
		      (json_int_t)b->packets, "raw_samples", (json_int_t)b->raw_samples, "gaps",
		      (json_int_t)b->gaps, "dropped_samples", (json_int_t)b->dropped_samples,
		      "max_silence_s", b->max_silence_s, "heartbeat_bound_s", b->heartbeat_s);
	if (o && b->raw_ignored)
		json_object_set_new(o, "raw_samples_ignored",
				    json_integer((json_int_t)b->raw_ignored));
	if (o && b->late_ignored)
		json_object_set_new(o, "after_stop_ignored",
				    json_integer((json_int_t)b->late_ignored));
	if (o && b->have_offset)
		json_object_set_new(o, "clock_offset_s", json_real(b->offset_s));
	return o;
}

/* --- include/ergon/bridge.h ------------------------------------------------ */

extern const struct ergon_instrument_driver ergon_instrument_bridge;
extern const struct ergon_instrument_driver ergon_instrument_joulescope;

int ergon_bridge_is(const struct ergon_instrument *inst)
{
	return inst && inst->priv &&
	       (inst->driver == &ergon_instrument_bridge ||
		inst->driver == &ergon_instrument_joulescope);
}

int ergon_bridge_read_packets(struct ergon_instrument *inst, struct ergon_stats_packet *buf,
			      size_t cap, size_t *n, struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	*n = 0;
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	if (!b->hello.stream_stats)
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "%s: the bridge sends no statistics packets (its hello's "
				     "streams are [\"raw\"])",
				     b->label);
	if (!b->started)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: read before start", b->label);
	return take_packets(b, buf, cap, n, err);
}

int ergon_bridge_read_raw(struct ergon_instrument *inst, float *current_a, float *voltage_v,
			  uint8_t *digital, size_t cap, size_t *n, struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	*n = 0;
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	if (!b->hello.stream_raw || b->hello.stream_stats)
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "%s: the bridge sends no raw stream of its own (its hello's "
				     "streams must be [\"raw\"] alone)",
				     b->label);
	if (!b->started)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: read before start", b->label);
	struct ergon_sample s[256];
	if (cap > 256)
		cap = 256;
	int rc = take(b, &b->rq, s, cap, n, err);
	for (size_t i = 0; i < *n; i++) {
		current_a[i] = (float)s[i].current_a;
		voltage_v[i] = (s[i].fields & ERGON_F_VOLTAGE) ? (float)s[i].voltage_v : NAN;
		digital[i] = (uint8_t)s[i].digital;
	}
	return rc;
}

static int need_outputs(struct bridge *b, uint32_t mask, struct ergon_err *err)
{
	uint32_t have = b->hello.outputs >= 32 ? UINT32_MAX : ((uint32_t)1 << b->hello.outputs) - 1;
	if (mask & ~have)
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "%s: output mask 0x%x names outputs the instrument lacks (it "
				     "has %d)",
				     b->label, mask, b->hello.outputs);
	return 0;
}

int ergon_bridge_gpo(struct ergon_instrument *inst, uint32_t set_mask, uint32_t clear_mask,
		     struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	int rc = need_outputs(b, set_mask | clear_mask, err);
	char extra[48];
	if (rc == 0 && set_mask) {
		snprintf(extra, sizeof(extra), "\"set\":%u", set_mask);
		rc = command(b, "gpo", extra, b->heartbeat_s, err);
	}
	if (rc == 0 && clear_mask) {
		snprintf(extra, sizeof(extra), "\"clear\":%u", clear_mask);
		rc = command(b, "gpo", extra, b->heartbeat_s, err);
	}
	return rc;
}

int ergon_bridge_gpi(struct ergon_instrument *inst, uint32_t *value, struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	if (b->hello.inputs == 0)
		return ergon_err_set(err, ERGON_ENOTSUP, "%s: the instrument has no inputs",
				     b->label);
	int rc = command(b, "gpi", NULL, b->heartbeat_s, err);
	if (rc == 0)
		*value = b->gpi_value;
	return rc;
}

int ergon_bridge_passthrough(struct ergon_instrument *inst, int on, struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	if (!b->hello.passthrough)
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "%s: the instrument cannot switch the target supply",
				     b->label);
	return command(b, "passthrough", on ? "\"on\":true" : "\"on\":false", b->heartbeat_s, err);
}

int ergon_bridge_idle(struct ergon_instrument *inst, double wait_s, struct ergon_err *err)
{
	struct bridge *b = bridge_of(inst);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOTSUP, "not a bridge instrument");
	if (b->started && !b->stopped)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: the bridge is streaming; read its packets instead",
				     b->label);
	/* Take what it wrote (heartbeats; an error when its device went
	 * away), so that a long hold never fills the pipe and blocks it. */
	pump(b, wait_s > 0 ? wait_s : 0);
	check_end(b);
	if (b->fail_code)
		return failure(b, err);
	if (b->eof)
		return ergon_err_set(err, ERGON_EDEVICE, "%s: the bridge ended", b->label);
	return 0;
}

int ergon_bridge_caps(const struct ergon_instrument *inst, struct ergon_bridge_caps *out)
{
	const struct bridge *b = bridge_of(inst);
	if (b == NULL)
		return ERGON_ENOTSUP;
	*out = (struct ergon_bridge_caps){b->hello.inputs,	   b->hello.outputs,
					  b->hello.passthrough,	   b->hello.stream_stats,
					  b->hello.stream_raw,	   b->hello.stats_rate_hz,
					  b->hello.sample_rate_hz, b->heartbeat_s};
	return 0;
}

/* --- run once (scans) ------------------------------------------------------- */

int ergon_bridge_run_once(const struct ergon_wl_argv *av, const char *label, double timeout_s,
			  char *out, size_t cap, int *status, struct ergon_err *err)
{
	struct bridge *b = bridge_new(av, label);
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	size_t n = 0;
	int rc = spawn(b, err);
	if (rc)
		goto done;
	shutdown(b->fd, SHUT_WR);
	double until = now_s() + timeout_s;
	while (now_s() < until) {
		struct pollfd pf = {.fd = b->fd, .events = POLLIN};
		if (poll(&pf, 1, 50) <= 0)
			continue;
		ssize_t r = recv(b->fd, out + n, cap - 1 - n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0 || (n += (size_t)r) >= cap - 1)
			break;
	}
	out[n] = '\0';
	reap(b, 1.0);
	if (b->pid > 0) {
		ergon_wl_kill_reap(b->pid);
		b->pid = -1;
		rc = ergon_err_set(err, ERGON_ETIMEDOUT, "%s: no answer within %.1f s", label,
				   timeout_s);
		goto done;
	}
	*status = b->status;
done:
	bridge_free(b);
	return rc;
}

const struct ergon_instrument_driver ergon_instrument_bridge = {
    .name = "bridge",
    .longname = "a persistent child process speaking ergon's instrument protocol "
		"(bridge:ARGV, docs/BRIDGE.md)",
    .open = bridge_open,
    .start = ergon_bridge_drv_start,
    .read = ergon_bridge_drv_read,
    .stop = ergon_bridge_drv_stop,
    .close = ergon_bridge_drv_close,
    .stats = ergon_bridge_drv_stats,
};

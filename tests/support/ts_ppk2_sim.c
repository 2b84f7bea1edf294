/* The PPK2 protocol simulator (see ts_ppk2_sim.h). Written from the
 * protocol facts only; it shares no code with the driver, so the sample
 * word is packed here by hand. */
#include "ts_ppk2_sim.h"

#include "ergon/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const double default_r[5] = {1031.64, 101.65, 10.15, 0.94, 0.043};

struct ts_ppk2_sim {
	struct ts_ppk2_sim_cfg cfg;
	int master, slave_keep;
	char path[128];
	pthread_t thread;
	atomic_int stop;
	atomic_ullong late_disconnect; /* ts_ppk2_sim_disconnect_at; 0 = none */
	pthread_mutex_t mu;
	struct ts_ppk2_sim_state st;
	int streaming;
	uint64_t k;	  /* next device sample index */
	uint8_t counter;  /* counter of the next word */
	double t_start_s; /* realtime pacing origin */
	uint64_t k_start;
	/* clocked: the device index after the words sent so far, and the clock */
	atomic_ullong k_sent;
	atomic_ullong clock_calls; /* the host looked at the clock: it took a chunk */
	unsigned long long calls_at_write;
	int wrote;
	struct ergon_clock clock;
	pthread_mutex_t clock_mu;
	double clock_last_s;
};

/* Words per write of a clocked simulator. */
#define CLOCKED_CHUNK 8u

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *ts_ppk2_identity_metadata(const double *r_ohm)
{
	static char buf[2048];
	const double *r = r_ohm ? r_ohm : default_r;
	size_t o = 0;
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "Calibrated: 1\n");
	for (int i = 0; i < 5; i++)
		o += (size_t)snprintf(
		    buf + o, sizeof(buf) - o,
		    "R%d: %.6g\nGS%d: 0\nGI%d: 1\nO%d: 0\nS%d: 0\nI%d: 0\nUG%d: 1\n", i, r[i], i, i,
		    i, i, i, i);
	snprintf(buf + o, sizeof(buf) - o, "HW: 9173\nIA: 56\nEND\n");
	return buf;
}

unsigned ts_ppk2_raw14(double i_a, int range, const double *r_ohm)
{
	const double *r = r_ohm ? r_ohm : default_r;
	double rr = r[range] > 0 ? r[range] : default_r[range];
	/* I = raw14 * 4 * (1.8 / 163840) / R under the identity calibration. */
	double raw = i_a * rr * 163840.0 / 1.8 / 4.0;
	if (raw < 0)
		raw = 0;
	if (raw > 16383)
		raw = 16383;
	return (unsigned)lround(raw);
}

static int auto_range(double i_a)
{
	/* The finest range whose 14-bit span holds I (identity calibration,
	 * default shunts): full scale 16383 * 4 * 1.8 / 163840 / R. */
	for (int r = 0; r < 5; r++)
		if (i_a <= 16383.0 * 4.0 * 1.8 / 163840.0 / default_r[r] * 0.9)
			return r;
	return 4;
}

static int in_gap(const struct ts_ppk2_sim_cfg *c, uint64_t k, uint64_t *skip_to)
{
	for (size_t i = 0; i < c->n_gaps; i++)
		if (k >= c->gap_at[i] && k < c->gap_at[i] + c->gap_len[i]) {
			*skip_to = c->gap_at[i] + c->gap_len[i];
			return 1;
		}
	return 0;
}

/* Fill up to max words; returns how many. */
static size_t make_words(struct ts_ppk2_sim *s, uint8_t *out, size_t max)
{
	const struct ts_ppk2_sim_cfg *c = &s->cfg;
	size_t n = 0;
	while (n < max) {
		if (c->samples && s->k >= c->samples)
			break;
		uint64_t skip = 0;
		if (in_gap(c, s->k, &skip)) {
			/* Lost on the wire: the counter advances as the device's
			 * does, the words never arrive. */
			s->counter = (uint8_t)((s->counter + (skip - s->k)) & 0x3f);
			s->k = skip;
			continue;
		}
		double i = c->current_a ? c->current_a(s->k, c->ctx) : 0;
		int r = c->range ? c->range(s->k, c->ctx) : auto_range(i);
		unsigned raw = r >= 0 && r < 5 ? ts_ppk2_raw14(i, r, NULL) : 0;
		uint8_t logic = c->logic ? c->logic(s->k, c->ctx) : 0;
		uint32_t w = (uint32_t)(raw & 0x3fffu) | ((uint32_t)(r & 7) << 14) |
			     ((uint32_t)(s->counter & 0x3fu) << 18) | ((uint32_t)logic << 24);
		out[4 * n] = (uint8_t)w;
		out[4 * n + 1] = (uint8_t)(w >> 8);
		out[4 * n + 2] = (uint8_t)(w >> 16);
		out[4 * n + 3] = (uint8_t)(w >> 24);
		n++;
		s->counter = (uint8_t)((s->counter + 1) & 0x3f);
		s->k++;
	}
	return n;
}

static void write_all(int fd, const uint8_t *b, size_t n, atomic_int *stop)
{
	size_t o = 0;
	while (o < n && !atomic_load(stop)) {
		ssize_t w = write(fd, b + o, n - o);
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pf = {.fd = fd, .events = POLLOUT};
			(void)poll(&pf, 1, 20);
			continue;
		}
		if (w <= 0)
			return;
		o += (size_t)w;
	}
}

static void handle_cmds(struct ts_ppk2_sim *s, const uint8_t *b, size_t n, size_t *used)
{
	size_t p = 0;
	while (p < n) {
		uint8_t c = b[p];
		size_t args = (c == 0x0C || c == 0x11) ? 1 : c == 0x0D ? 2 : 0;
		if (p + 1 + args > n)
			break;
		pthread_mutex_lock(&s->mu);
		switch (c) {
		case 0x19:
			s->st.metadata_requests++;
			pthread_mutex_unlock(&s->mu);
			if (!s->cfg.mute) {
				const char *m = s->cfg.metadata ? s->cfg.metadata
								: ts_ppk2_identity_metadata(NULL);
				write_all(s->master, (const uint8_t *)m, strlen(m), &s->stop);
			}
			pthread_mutex_lock(&s->mu);
			break;
		case 0x06:
			s->st.starts++;
			s->streaming = 1;
			s->t_start_s = now_s();
			s->k_start = s->k;
			if (s->cfg.on_start)
				s->cfg.on_start(s->k, s->cfg.ctx);
			break;
		case 0x07:
			s->st.stops++;
			s->streaming = 0;
			break;
		case 0x0C:
			s->st.dut_power = b[p + 1];
			break;
		case 0x0D:
			s->st.vdd_mv = (b[p + 1] << 8) | b[p + 2];
			break;
		case 0x11:
			s->st.mode = b[p + 1];
			break;
		case 0x20:
			s->st.resets++;
			break;
		default:
			break;
		}
		pthread_mutex_unlock(&s->mu);
		p += 1 + args;
	}
	*used = p;
}

static void *sim_main(void *arg)
{
	struct ts_ppk2_sim *s = arg;
	uint8_t in[256];
	size_t in_len = 0;
	uint8_t out[4 * 1024];
	while (!atomic_load(&s->stop)) {
		struct pollfd pf = {.fd = s->master, .events = POLLIN};
		int streaming = s->streaming;
		(void)poll(&pf, 1, streaming ? (s->cfg.clocked ? 0 : 1) : 20);
		ssize_t r = read(s->master, in + in_len, sizeof(in) - in_len);
		if (r > 0) {
			in_len += (size_t)r;
			size_t used = 0;
			handle_cmds(s, in, in_len, &used);
			memmove(in, in + used, in_len - used);
			in_len -= used;
		}
		if (!s->streaming || s->cfg.silent)
			continue;
		size_t max = sizeof(out) / 4;
		if (s->cfg.clocked) {
			/* The next words once the host has taken every byte. */
			int q = 0;
			if (s->slave_keep < 0 || ioctl(s->slave_keep, FIONREAD, &q) != 0 || q > 0 ||
			    (s->wrote && atomic_load(&s->clock_calls) == s->calls_at_write)) {
				struct timespec ts = {0, 20000};
				nanosleep(&ts, NULL);
				continue;
			}
			max = CLOCKED_CHUNK;
		}
		if (s->cfg.realtime) {
			double due = (now_s() - s->t_start_s) * 100000.0;
			uint64_t sent_since = s->k - s->k_start;
			max = due > (double)sent_since ? (size_t)(due - (double)sent_since) : 0;
			if (max > sizeof(out) / 4)
				max = sizeof(out) / 4;
		}
		uint64_t da = s->cfg.disconnect_after;
		uint64_t late = (uint64_t)atomic_load(&s->late_disconnect);
		if (late && (da == 0 || late < da))
			da = late < s->st.sent ? s->st.sent : late;
		if (da && s->st.sent + max >= da)
			max = (size_t)(da - s->st.sent);
		size_t n = make_words(s, out, max);
		if (n == 0 && s->cfg.clocked) {
			/* The stream paused (cfg.samples): do not spin. */
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		if (n > 0) {
			s->calls_at_write = atomic_load(&s->clock_calls);
			s->wrote = 1;
			write_all(s->master, out, 4 * n, &s->stop);
			atomic_store(&s->k_sent, (unsigned long long)s->k);
			pthread_mutex_lock(&s->mu);
			s->st.sent += n;
			pthread_mutex_unlock(&s->mu);
		}
		if (da && s->st.sent >= da) {
			/* Unplugged: both ends of the pty go away, once the host
			 * has read what was sent (closing the master drops
			 * unread bytes; a real unplug may lose them too, but a
			 * test wants an exact count). */
			for (int w = 0, quiet = 0; w < 4000 && quiet < 10 && !atomic_load(&s->stop);
			     w++) {
				int q = 0;
				if (ioctl(s->slave_keep, FIONREAD, &q) != 0)
					break;
				quiet = q == 0 ? quiet + 1 : 0;
				struct timespec ts = {0, 5000000};
				nanosleep(&ts, NULL);
			}
			pthread_mutex_lock(&s->mu);
			s->st.disconnected = 1;
			pthread_mutex_unlock(&s->mu);
			close(s->master);
			s->master = -1;
			if (s->slave_keep >= 0)
				close(s->slave_keep);
			s->slave_keep = -1;
			break;
		}
	}
	return NULL;
}

static double clock_now(void *ctx)
{
	struct ts_ppk2_sim *s = ctx;
	atomic_fetch_add(&s->clock_calls, 1);
	uint64_t k = (uint64_t)atomic_load(&s->k_sent);
	double t = (double)k / 100000.0 * (1.0 + s->cfg.clock_ppm * 1e-6);
	if (s->cfg.clock_late_s)
		t += s->cfg.clock_late_s(k, s->cfg.ctx);
	pthread_mutex_lock(&s->clock_mu);
	if (t < s->clock_last_s)
		t = s->clock_last_s; /* a clock never goes back */
	s->clock_last_s = t;
	pthread_mutex_unlock(&s->clock_mu);
	return t;
}

static void clock_sleep_until(void *ctx, double t_s)
{
	/* Time is the stream: wait for it to get there. */
	while (clock_now(ctx) < t_s) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
}

const struct ergon_clock *ts_ppk2_sim_clock(struct ts_ppk2_sim *s)
{
	return &s->clock;
}

struct ts_ppk2_sim *ts_ppk2_sim_start(const struct ts_ppk2_sim_cfg *cfg, const char **path)
{
	struct ts_ppk2_sim *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->cfg = *cfg;
	s->st.dut_power = -1;
	s->slave_keep = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->clock_mu, NULL);
	s->clock =
	    (struct ergon_clock){.now_s = clock_now, .sleep_until = clock_sleep_until, .ctx = s};
	s->master = posix_openpt(O_RDWR | O_NOCTTY);
	if (s->master < 0 || grantpt(s->master) != 0 || unlockpt(s->master) != 0 ||
	    ptsname_r(s->master, s->path, sizeof(s->path)) != 0)
		goto fail;
	/* Raw slave from the start: no echo, no CR/LF rewriting, so nothing
	 * the host sends comes back before it configures the port. */
	s->slave_keep = open(s->path, O_RDWR | O_NOCTTY);
	if (s->slave_keep < 0)
		goto fail;
	struct termios tio;
	if (tcgetattr(s->slave_keep, &tio) != 0)
		goto fail;
	cfmakeraw(&tio);
	if (tcsetattr(s->slave_keep, TCSANOW, &tio) != 0)
		goto fail;
	/* Not inherited by the programs a test starts: a child holding the
	 * master open would keep the pty alive after an "unplug". */
	(void)fcntl(s->master, F_SETFD, FD_CLOEXEC);
	(void)fcntl(s->slave_keep, F_SETFD, FD_CLOEXEC);
	int fl = fcntl(s->master, F_GETFL);
	(void)fcntl(s->master, F_SETFL, fl | O_NONBLOCK);
	if (cfg->streaming_at_start) {
		s->streaming = 1;
		s->t_start_s = now_s();
	}
	if (pthread_create(&s->thread, NULL, sim_main, s) != 0)
		goto fail;
	*path = s->path;
	return s;
fail:
	if (s->master >= 0)
		close(s->master);
	if (s->slave_keep >= 0)
		close(s->slave_keep);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->clock_mu);
	free(s);
	return NULL;
}

void ts_ppk2_sim_state(struct ts_ppk2_sim *s, struct ts_ppk2_sim_state *out)
{
	/* Let the thread take what the host already sent: no unread input
	 * for 5 checks 10 ms apart (the thread polls every 20 ms at most). */
	for (int i = 0, quiet = 0; i < 300 && quiet < 5; i++) {
		int q = 0;
		int fd = s->master;
		if (fd < 0 || ioctl(fd, FIONREAD, &q) != 0)
			break;
		quiet = q == 0 ? quiet + 1 : 0;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	pthread_mutex_unlock(&s->mu);
}

void ts_ppk2_sim_stop(struct ts_ppk2_sim *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
	if (s->master >= 0)
		close(s->master);
	if (s->slave_keep >= 0)
		close(s->slave_keep);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->clock_mu);
	free(s);
}

void ts_ppk2_sim_disconnect_at(struct ts_ppk2_sim *s, uint64_t sent)
{
	atomic_store(&s->late_disconnect, (unsigned long long)sent);
}

int ts_ppk2_sim_drained(struct ts_ppk2_sim *s, uint64_t sent)
{
	pthread_mutex_lock(&s->mu);
	uint64_t done = s->st.sent;
	int fd = s->slave_keep;
	pthread_mutex_unlock(&s->mu);
	int q = 0;
	return done >= sent && fd >= 0 && ioctl(fd, FIONREAD, &q) == 0 && q == 0;
}

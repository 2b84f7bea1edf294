/* A live gated capture from a raw-sample instrument (include/ergon/live_raw.h):
 * start, reset, grace, then samples into the gated engine's raw input as
 * they arrive, lost samples as NaN, until the expected windows have closed. */
#include "ergon/live_raw.h"

#include "live_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BATCH 4096u
/* Staged samples per push; a multiple of 8 keeps the gate bits aligned. */
#define STAGE 4096u
/* A jump longer than this is a clock fault, not a counter gap: filling it
 * with NaN would push gigabytes. */
#define GAP_MAX_S 10.0

struct lraw {
	const struct ergon_live_config *c;
	struct ergon_gated *g;
	struct ergon_live_raw_result *res;
	const char *name;
	double fs;
	double t_keep_s; /* samples ending before this are reset noise */
	/* packet_clock: the grace in samples from the stream's first one */
	int have_origin;
	double t_origin_s; /* the first sample's time: the target's reset */
	uint64_t grace_n;  /* samples ending before grace_n / fs are noise */
	int started;	   /* the first sample after the grace was fed */
	double t_first_s;  /* its time */
	uint64_t next;	   /* index of the next sample to feed */
	int level;	   /* gate level of the last fed sample */
	uint64_t rise;	   /* index of the last rising edge */
	uint64_t min_high; /* samples a high must last to close a window */
	float cur[STAGE], volt[STAGE];
	uint8_t bits[STAGE / 8];
	uint8_t digital[STAGE]; /* every input, for cfg->raw_tap */
	uint8_t last_digital;
	size_t n;
};

static int flush(struct lraw *l, struct ergon_err *err)
{
	if (l->n == 0)
		return 0;
	int rc = ergon_gated_push_raw(l->g, l->cur, l->volt, NULL, l->bits, 0, l->n, err);
	if (rc == 0 && l->c->raw_tap)
		rc = l->c->raw_tap(l->c->raw_tap_ctx, l->cur, l->volt, l->digital, l->n, err);
	l->n = 0;
	return rc;
}

/* One sample (or a lost one: NaN) at index l->next with its inputs d. */
static int put(struct lraw *l, float i_a, float v_v, uint8_t d, struct ergon_err *err)
{
	int high = (int)(((unsigned)d >> l->c->sync_input_index) & 1u);
	size_t k = l->n;
	l->digital[k] = d;
	l->last_digital = d;
	if ((k & 7u) == 0)
		l->bits[k >> 3] = 0;
	l->cur[k] = i_a;
	l->volt[k] = v_v;
	if (high)
		l->bits[k >> 3] = (uint8_t)(l->bits[k >> 3] | (1u << (k & 7u)));
	/* The same edge rule as the engine: a rise at index 0 is not a rise. */
	if (high && !l->level && l->next > 0) {
		l->rise = l->next;
		l->res->rises++;
	}
	if (!high && l->level && l->rise > 0 && l->next - l->rise >= l->min_high)
		l->res->windows_closed++;
	l->level = high;
	l->next++;
	l->res->samples_fed++;
	if (++l->n == STAGE)
		return flush(l, err);
	return 0;
}

static int take(struct lraw *l, const struct ergon_sample *s, struct ergon_err *err)
{
	/* Only what ends after the grace period takes part in the gate. On
	 * the packets' clock the stream's first sample is the reset and the
	 * grace is counted in samples: sample j (0-based) ends at (j + 1) / fs,
	 * so samples 0 .. grace_n - 2 are discarded, whatever the host's load. */
	if (!l->started && l->c->packet_clock) {
		if (!l->have_origin) {
			l->have_origin = 1;
			l->t_origin_s = s->t_s;
		}
		double j = (s->t_s - l->t_origin_s) * l->fs;
		if (isfinite(j) && j >= -0.5 && (uint64_t)llround(j) + 1 < l->grace_n) {
			l->res->samples_discarded++;
			return 0;
		}
		l->started = 1;
		l->t_first_s = s->t_s;
	}
	if (!l->started) {
		if (s->t_s + 1.0 / l->fs < l->t_keep_s) {
			l->res->samples_discarded++;
			return 0;
		}
		l->started = 1;
		l->t_first_s = s->t_s;
	}
	double rel = (s->t_s - l->t_first_s) * l->fs;
	if (!isfinite(rel) || rel < -0.5 || rel > (double)l->next + GAP_MAX_S * l->fs)
		return ergon_err_set(err, ERGON_EPARSE,
				     "live capture: %s: sample time %.6f s is %s the capture's "
				     "clock (first kept sample %.6f s, %llu samples fed); the "
				     "instrument's clock jumped",
				     l->name, s->t_s, rel < 0 ? "before" : "far ahead of",
				     l->t_first_s, (unsigned long long)l->next);
	uint64_t idx = (uint64_t)llround(rel);
	if (idx < l->next) {
		l->res->out_of_order++;
		return 0;
	}
	int rc = 0;
	/* Lost samples: NaN, the gate held at its last level (no edge is
	 * invented inside a gap). */
	while (rc == 0 && l->next < idx) {
		l->res->samples_lost++;
		rc = put(l, NAN, NAN, l->last_digital, err);
	}
	if (rc)
		return rc;
	float i = (s->fields & ERGON_F_CURRENT) ? (float)s->current_a : NAN;
	float v = (s->fields & ERGON_F_VOLTAGE) ? (float)s->voltage_v : NAN;
	uint32_t d = (s->fields & ERGON_F_DIGITAL) ? s->digital : 0;
	return put(l, i, v, (uint8_t)d, err);
}

/* Draining while the reset runs (live_reset_draining): what arrives is
 * taken as usual until the windows closed, and read but not fed after. */
struct raw_drain {
	struct lraw *l;
	struct ergon_instrument *inst;
	struct ergon_sample *buf;
	struct ergon_err *ierr, *err;
	size_t want;
	int irc, rc;
};

static int raw_drain(void *ctx)
{
	struct raw_drain *d = ctx;
	size_t n = 0;
	d->irc = ergon_instrument_read(d->inst, d->buf, READ_BATCH, &n, d->ierr);
	for (size_t k = 0; k < n && d->rc == 0 && d->l->res->windows_closed < d->want; k++)
		d->rc = take(d->l, &d->buf[k], d->err);
	return d->irc;
}

int ergon_live_raw_capture(struct ergon_instrument *inst, const struct ergon_live_config *cfg,
			   struct ergon_gated *g, struct ergon_live_raw_result *res,
			   struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	const struct ergon_instrument_identity *id = &inst->identity;
	const char *name = inst->driver->name;
	if (cfg->lockstep)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "live capture: %s has no outputs for GO, so it cannot run "
				     "lock-step; set power.lockstep: false (gate-only)",
				     name);
	if (strcmp(id->clock, "instrument") != 0 || !(id->sample_rate_hz > 0))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "live capture: %s does not stream samples at a fixed rate on "
				     "its own clock; a raw live capture needs one (ppk2)",
				     name);
	if (cfg->sync_input_index > 7)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "live capture: sync input %u: %s has digital lines 0..7",
				     cfg->sync_input_index, name);
	struct ergon_sample *buf = NULL;
	struct lraw *l = calloc(1, sizeof(*l));
	int rc = l ? 0 : ergon_err_set(err, ERGON_ENOMEM, "live capture: out of memory");
	if (rc == 0) {
		buf = malloc(READ_BATCH * sizeof(*buf));
		if (buf == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "live capture: out of memory");
	}
	if (rc)
		goto out;
	l->c = cfg;
	l->g = g;
	l->res = res;
	l->name = name;
	l->fs = id->sample_rate_hz;
	res->sample_rate_hz = l->fs;
	double min_window_s = cfg->min_window_s > 0 ? cfg->min_window_s : 1.0;
	l->min_high = (uint64_t)ceil(min_window_s * l->fs - 1e-6);
	l->grace_n = (uint64_t)llround(cfg->reset_grace_s * l->fs);
	double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 60.0;
	size_t want = cfg->windows ? cfg->windows : 1;
	rc = ergon_gated_raw_begin(g, l->fs, err);
	if (rc)
		goto out;
	rc = ergon_instrument_start(inst, err);
	if (rc)
		goto out;
	double t0 = live_now_s();
	struct ergon_err ierr = {0};
	int irc = 0;
	/* The reset runs on its own thread while this one keeps reading: a
	 * probe's reset takes seconds, and an instrument that is not drained
	 * meanwhile loses samples (a PPK2's USB buffer overflows). On the host
	 * clock what arrives before the reset has ended is reset noise:
	 * discarded. On the packets' clock (a simulator whose stream starts
	 * with the simulated target's reset) the samples decide alone: the
	 * grace is counted from the first sample, and what follows it is fed
	 * while the host's reset still runs; once the windows closed the
	 * instrument is still drained, but nothing more is fed. */
	l->t_keep_s = t0 + cfg->reset_grace_s;
	struct raw_drain d = {
	    .l = l, .inst = inst, .buf = buf, .ierr = &ierr, .want = want, .err = err};
	if (cfg->reset) {
		if (!cfg->packet_clock)
			l->t_keep_s = INFINITY;
		struct ergon_err rerr = {0};
		double t_done_s = 0;
		int rrc = live_reset_draining(cfg, raw_drain, &d, &t_done_s, &rerr);
		if (!cfg->packet_clock)
			l->t_keep_s = t_done_s + cfg->reset_grace_s;
		rc = d.rc;
		irc = d.irc;
		if (rc == 0 && rrc)
			rc = ergon_err_set(err, rrc, "%s", rerr.msg);
	}
	if (rc == 0 && irc)
		res->instrument_failed = 1;
	while (rc == 0 && !res->instrument_failed) {
		/* Read before looking at the flag: a stop keeps what the
		 * instrument already delivered. */
		size_t n = 0;
		irc = ergon_instrument_read(inst, buf, READ_BATCH, &n, &ierr);
		for (size_t k = 0; k < n && rc == 0 && res->windows_closed < want; k++)
			rc = take(l, &buf[k], err);
		if (rc == 0 && irc) {
			/* What was read is kept: flush it below, then fail. */
			res->instrument_failed = 1;
			break;
		}
		if (rc == 0 && res->windows_closed >= want)
			res->end = ERGON_LIVE_WINDOWS;
		else if (cfg->stop && *cfg->stop)
			res->end = ERGON_LIVE_SIGNAL;
		else if (live_now_s() - t0 > timeout_s)
			res->end = ERGON_LIVE_TIMEOUT;
		if (res->end)
			break;
	}
	int frc = flush(l, err);
	if (rc == 0)
		rc = frc;
	struct ergon_err serr = {0};
	int src = ergon_instrument_stop(inst, &serr);
	if (rc == 0 && res->instrument_failed)
		rc = ergon_err_set(err, ierr.code ? ierr.code : ERGON_EDEVICE, "%s", ierr.msg);
	if (rc == 0 && src != 0)
		rc = ergon_err_set(err, src, "%s", serr.msg);
out:
	free(buf);
	free(l);
	return rc;
}

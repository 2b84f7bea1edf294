/* live/: live instruments: gated captures, recording, power-on.
 *
 * live_gate.c (this file), live_raw.c: a gated capture as it arrives;
 * live_reset.c: the target's reset on a thread while they read;
 * record.c: an instrument to a JLS file; power_on.c: `ergon power-on`.
 *
 * A live gated capture from a bridge instrument (include/ergon/live_gate.h):
 * start, reset, grace, READY, GO, then packets into the gated engine as
 * they arrive until the expected windows have closed. */
#include "ergon/live_gate.h"

#include "ergon/bridge.h"
#include "live_internal.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define BATCH 256

struct live {
	const struct ergon_live_config *c;
	struct ergon_gated *g;
	struct ergon_live_result *res;
	double t_reset_s;
	int have_packet;    /* packet_clock: a packet was seen, t_reset_s is its start */
	double t_latest_s;  /* packet_clock: the end of the latest packet */
	double t_arrival_s; /* packet_clock: host time the latest packet arrived */
	int high;	    /* the gate level of the last fed packet */
	double rise_s;	    /* when it rose */
	double min_window_s;
	int hold_go; /* the capture ended: READY is noted, no GO */
};

/* Feed a batch: drop the grace period, follow READY and the gate. */
static int feed(struct live *l, struct ergon_instrument *inst, const struct ergon_stats_packet *p,
		size_t n, struct ergon_err *err)
{
	const struct ergon_live_config *c = l->c;
	size_t first = 0;
	if (c->packet_clock && n > 0) {
		if (!l->have_packet)
			l->t_reset_s = p[0].t_start_s;
		l->have_packet = 1;
		l->t_latest_s = p[n - 1].t_end_s;
		l->t_arrival_s = live_now_s();
	}
	/* GPIO seen while the target is flashed or reset is noise: only what
	 * ends after the grace period takes part in READY, GO and the gate. */
	while (first < n && p[first].t_end_s < l->t_reset_s + c->reset_grace_s)
		first++;
	l->res->packets_discarded += first;
	for (size_t k = first; k < n; k++) {
		uint32_t d = p[k].digital;
		if (c->lockstep && !l->res->ready_observed && (d >> c->state_input_index) & 1u) {
			l->res->ready_observed = 1;
			l->res->ready_after_reset_s = p[k].t_end_s - l->t_reset_s;
		}
		int high = (int)((d >> c->sync_input_index) & 1u);
		if (high && !l->high)
			l->rise_s = p[k].t_start_s;
		if (!high && l->high && p[k].t_start_s - l->rise_s >= l->min_window_s)
			l->res->windows_closed++;
		l->high = high;
	}
	if (n > first) {
		int rc = ergon_gated_push_packets(l->g, p + first, n - first, err);
		if (rc == 0 && c->packet_tap)
			rc = c->packet_tap(c->packet_tap_ctx, p + first, n - first, err);
		if (rc)
			return rc;
		l->res->packets_fed += n - first;
	}
	/* GO once READY was seen, never in the packets drained after the
	 * capture ended. */
	if (c->lockstep && l->res->ready_observed && !l->res->go_set && !l->hold_go) {
		int rc = ergon_bridge_gpo(inst, 1u << c->go_output_index, 0, err);
		if (rc)
			return rc;
		l->res->go_set = 1;
	}
	return 0;
}

/* Draining while the reset runs on the host clock (live_reset_draining):
 * t_reset_s is not yet known (infinite), so feed() discards every packet
 * as reset noise. */
struct gate_drain {
	struct live *l;
	struct ergon_instrument *inst;
	struct ergon_stats_packet *p;
	struct ergon_err *err;
	int rc;
};

static int gate_drain(void *ctx)
{
	struct gate_drain *d = ctx;
	size_t n = 0;
	int rc = ergon_bridge_read_packets(d->inst, d->p, BATCH, &n, d->err);
	if (rc == 0)
		rc = feed(d->l, d->inst, d->p, n, d->err);
	d->rc = rc;
	return rc;
}

int ergon_live_gated_capture(struct ergon_instrument *inst, const struct ergon_live_config *cfg,
			     struct ergon_gated *g, struct ergon_live_result *res,
			     struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	if (!ergon_bridge_is(inst))
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "live capture: instrument %s is not a bridge instrument",
				     inst->driver->name);
	struct ergon_bridge_caps caps;
	ergon_bridge_caps(inst, &caps);
	if (cfg->sync_input_index >= 32 ||
	    (cfg->lockstep && ((int)cfg->state_input_index >= caps.inputs ||
			       (int)cfg->go_output_index >= caps.outputs)))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "live capture: lock-step needs input %u and output %u; %s "
				     "has %d inputs and %d outputs",
				     cfg->state_input_index, cfg->go_output_index,
				     inst->driver->name, caps.inputs, caps.outputs);
	struct live l = {.c = cfg, .g = g, .res = res};
	l.min_window_s = cfg->min_window_s > 0 ? cfg->min_window_s : ERGON_GATE_MIN_WINDOW_S;
	double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 60.0;
	double ready_s = cfg->ready_timeout_s > 0 ? cfg->ready_timeout_s : 5.0;
	size_t want = cfg->windows ? cfg->windows : 1;
	int rc = ergon_instrument_start(inst, err);
	if (rc)
		return rc;
	double t0 = live_now_s();
	l.t_reset_s = t0;
	l.t_arrival_s = t0;
	struct ergon_stats_packet p[BATCH];
	/* On the host clock (a measured instrument, whose stream runs on
	 * whatever the host does) the reset runs on its own thread while this
	 * one keeps reading: a probe's reset or flash takes seconds, and a
	 * bridge that is not read meanwhile makes the vendor's queue overflow
	 * at a fast packet rate (a gap in the stream). What arrives meanwhile
	 * is reset noise, discarded. On the packets' clock (a simulator) the
	 * reset blocks as before: an unpaced simulator's clock waits for its
	 * reader, and a stream drained through the reset would run ahead of
	 * it by as much as the host takes (a lock-step target's GO, which
	 * waits for the reset's end, would come arbitrarily late on the
	 * stream's clock). */
	if (cfg->reset && cfg->packet_clock) {
		rc = cfg->reset(cfg->reset_ctx, err);
		/* A stream that waited for the reset sent nothing meanwhile:
		 * its silence counts from the reset's end. */
		l.t_arrival_s = live_now_s();
	} else if (cfg->reset) {
		struct gate_drain d = {.l = &l, .inst = inst, .p = p, .err = err};
		struct ergon_err rerr = {0};
		double t_done_s = t0;
		l.t_reset_s = INFINITY;
		int rrc = live_reset_draining(cfg, gate_drain, &d, &t_done_s, &rerr);
		l.t_reset_s = t_done_s;
		rc = d.rc;
		if (rc == 0 && rrc)
			rc = ergon_err_set(err, rrc, "%s", rerr.msg);
	}
	while (rc == 0) {
		if (cfg->stop && *cfg->stop) {
			res->end = ERGON_LIVE_SIGNAL;
			break;
		}
		/* The capture's bound. On the packets' clock it is the stream's
		 * own time since the reset, so that a host too loaded to take an
		 * unpaced stream quickly cannot end it; a stream that stops is
		 * still ended when no packet came for timeout_s host seconds (a
		 * bridge that stops writing altogether fails the read sooner,
		 * at its heartbeat bound). On the host clock it counts from
		 * before the reset. */
		double t = live_now_s();
		int over = cfg->packet_clock
			       ? (l.have_packet && l.t_latest_s - l.t_reset_s > timeout_s) ||
				     t - l.t_arrival_s > timeout_s
			       : t - t0 > timeout_s;
		if (over) {
			res->end = ERGON_LIVE_TIMEOUT;
			break;
		}
		/* READY's deadline, on the host clock or the packets'. */
		double t_ready = cfg->packet_clock ? l.t_latest_s : t;
		if (cfg->lockstep && !res->ready_observed &&
		    (!cfg->packet_clock || l.have_packet) &&
		    t_ready - l.t_reset_s > cfg->reset_grace_s + ready_s) {
			rc =
			    ergon_err_set(err, ERGON_ETIMEDOUT,
					  "live capture: READY (input %u) not observed within %.1f "
					  "s after the reset grace period; GO was not set. Check "
					  "the state wire (target pin -> instrument INPUT%u)",
					  cfg->state_input_index, ready_s, cfg->state_input_index);
			break;
		}
		size_t n = 0;
		rc = ergon_bridge_read_packets(inst, p, BATCH, &n, err);
		if (rc == 0)
			rc = feed(&l, inst, p, n, err);
		if (rc == 0 && res->windows_closed >= want) {
			res->end = ERGON_LIVE_WINDOWS;
			break;
		}
	}
	/* Clear GO and stop; the packets still queued are fed too. */
	struct ergon_err e2 = {0};
	if (res->go_set)
		ergon_bridge_gpo(inst, 0, 1u << cfg->go_output_index, &e2);
	int src = ergon_instrument_stop(inst, &e2);
	l.hold_go = 1;
	for (size_t n = BATCH; rc == 0 && src == 0 && n > 0;) {
		src = ergon_bridge_read_packets(inst, p, BATCH, &n, &e2);
		if (src == 0)
			rc = feed(&l, inst, p, n, err);
	}
	if (rc == 0 && src != 0)
		rc = ergon_err_set(err, src, "%s", e2.msg);
	return rc;
}

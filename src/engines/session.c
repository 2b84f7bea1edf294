/* The session engine: settle, idle baseline, load windows; inline and
 * threaded samplers. docs/internals/session.md explains the loop. */
#include "ergon/session.h"

#include "ergon/clock.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BATCH 64

double ergon_now_s(void)
{
	return ergon_clock_now_s();
}

static void sleep_until(double t_s)
{
	ergon_clock_sleep_until(t_s);
}

/* --- growable series --------------------------------------------------- */

struct samples {
	double *t, *p, *temp, *e;
	uint16_t *ch; /* rail index of each sample */
	size_t n, cap, max, rejected;
	int has_temp, has_energy;
	int n_channels; /* channels the instrument emits (identity n_rails, >= 1) */
	/* Last accepted time per channel: a multi-rail instrument stamps each
	 * rail's reading on its own, so time must increase within a rail, not
	 * across rails. */
	double last_t[ERGON_MAX_RAILS];
	int have_last[ERGON_MAX_RAILS];
};

static int samples_push(struct samples *s, const struct ergon_sample *x, double origin)
{
	/* A reading that cannot be integrated is refused at the door and
	 * counted, so the figures never meet it (and the report still gets
	 * written with everything else). */
	double pw = (x->fields & ERGON_F_POWER) ? x->power_w : x->voltage_v * x->current_a;
	double ts = x->t_s - origin;
	unsigned c = x->channel;
	if (c >= (unsigned)s->n_channels || !isfinite(ts) || !isfinite(pw) ||
	    (s->have_last[c] && !(ts > s->last_t[c]))) {
		s->rejected++;
		return 0;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 4096;
		if (nc > s->max)
			nc = s->max;
		if (s->n >= nc)
			return ERGON_ETOOBIG;
		double *a[4] = {s->t, s->p, s->temp, s->e};
		for (int i = 0; i < 4; i++) {
			double *na = realloc(a[i], nc * sizeof(double));
			if (na == NULL)
				return ERGON_ENOMEM;
			a[i] = na;
			if (i == 0)
				s->t = na;
			else if (i == 1)
				s->p = na;
			else if (i == 2)
				s->temp = na;
			else
				s->e = na;
		}
		uint16_t *nch = realloc(s->ch, nc * sizeof(uint16_t));
		if (nch == NULL)
			return ERGON_ENOMEM;
		s->ch = nch;
		s->cap = nc;
	}
	double p = x->power_w;
	if (!(x->fields & ERGON_F_POWER))
		p = x->voltage_v * x->current_a;
	s->t[s->n] = x->t_s - origin;
	s->p[s->n] = p;
	s->temp[s->n] = (x->fields & ERGON_F_TEMP) ? x->temp_c : NAN;
	s->e[s->n] = (x->fields & ERGON_F_ENERGY) ? x->energy_j : NAN;
	s->ch[s->n] = (uint16_t)c;
	s->last_t[c] = ts;
	s->have_last[c] = 1;
	if (x->fields & ERGON_F_TEMP)
		s->has_temp = 1;
	if (x->fields & ERGON_F_ENERGY)
		s->has_energy = 1;
	s->n++;
	return 0;
}

/* --- the sampler --------------------------------------------------------- */

struct sampler {
	struct ergon_instrument *inst;
	struct samples s;
	double origin_s;
	double period_s;
	double next_due_s;
	size_t late, missed;
	double max_read_s, sum_read_s;
	size_t n_reads;
	atomic_int failed; /* a read failed: the measuring loop stops */
	atomic_int stop;
	struct ergon_err err;
	pthread_t thread;
	int running;
};

/* One reading: read calls until the driver has nothing more queued (a
 * replay or a streaming instrument may hold more than one batch), at most
 * 16 batches. Non-zero on failure (recorded in sp). */
static int sampler_read_batch(struct sampler *sp, size_t *got);

static int sampler_read(struct sampler *sp)
{
	size_t got = READ_BATCH;
	for (int i = 0; i < 16 && got == READ_BATCH; i++) {
		int rc = sampler_read_batch(sp, &got);
		if (rc)
			return rc;
	}
	return 0;
}

static int sampler_read_batch(struct sampler *sp, size_t *got)
{
	struct ergon_sample buf[READ_BATCH];
	size_t n = 0;
	*got = 0;
	double a = ergon_now_s();
	int rc = ergon_instrument_read(sp->inst, buf, READ_BATCH, &n, &sp->err);
	double b = ergon_now_s();
	if (b - a > sp->max_read_s)
		sp->max_read_s = b - a;
	sp->sum_read_s += b - a;
	sp->n_reads++;
	if (rc) {
		atomic_store(&sp->failed, 1);
		return rc;
	}
	*got = n;
	for (size_t i = 0; i < n; i++) {
		rc = samples_push(&sp->s, &buf[i], sp->origin_s);
		if (rc == 0)
			continue;
		if (rc == ERGON_ENOMEM)
			ergon_err_set(&sp->err, rc,
				      "out of memory growing the power series beyond %zu samples; "
				      "the samples before are kept",
				      sp->s.n);
		else
			ergon_err_set(&sp->err, rc,
				      "the power series reached its limit of %zu samples; lower "
				      "--sample-hz or shorten the run",
				      sp->s.max);
		atomic_store(&sp->failed, 1);
		return rc;
	}
	return 0;
}

/* Account for lateness against the schedule and advance it. A reading is
 * late when taken more than one period after it was due; each whole period
 * skipped beyond that is a missed reading. */
static void sampler_schedule(struct sampler *sp, double t)
{
	double behind = t - sp->next_due_s;
	if (behind > sp->period_s) {
		sp->late++;
		size_t skip = (size_t)floor(behind / sp->period_s);
		sp->missed += skip - (skip > 0 ? 1 : 0);
		sp->next_due_s += (double)skip * sp->period_s;
	}
	sp->next_due_s += sp->period_s;
}

static void *sampler_main(void *arg)
{
	struct sampler *sp = arg;
	/* Below 100 us per reading the timer wake-up latency (tens of us on a
	 * VM) would cap the rate, so the thread polls the clock instead of
	 * sleeping: it then uses one core, which the report's CPU figures in
	 * docs/PERFORMANCE.md show. */
	int spin = sp->period_s < 1e-4;
	while (!atomic_load(&sp->stop)) {
		if (spin) {
			while (ergon_now_s() < sp->next_due_s && !atomic_load(&sp->stop))
				;
		} else {
			sleep_until(sp->next_due_s);
		}
		if (atomic_load(&sp->stop))
			break;
		sampler_schedule(sp, ergon_now_s());
		if (sampler_read(sp))
			break;
	}
	return NULL;
}

/* Inline: read if due. */
static inline int sampler_poll(struct sampler *sp, double t)
{
	if (t < sp->next_due_s)
		return 0;
	sampler_schedule(sp, t);
	return sampler_read(sp);
}

/* --- the session --------------------------------------------------------- */

struct run {
	const struct ergon_session_config *cfg;
	struct ergon_instrument *inst;
	struct ergon_workload *wl;
	struct ergon_session_result *res;
	struct sampler sp;
	double *inv_t, *inv_l;
	size_t n_inv, cap_inv, max_inv;
	size_t *failed;
	size_t n_failed, cap_failed;
	double next_progress_s;
	int stopped; /* status != complete */
};

static int stop_requested(struct run *r)
{
	if (r->stopped)
		return 1;
	if (r->cfg->stop_flag && *r->cfg->stop_flag) {
		r->res->status = ERGON_SESSION_INTERRUPTED;
		snprintf(r->res->stop_reason, sizeof(r->res->stop_reason),
			 "interrupted by a signal");
		r->stopped = 1;
	} else if (atomic_load(&r->sp.failed)) {
		r->res->status = ERGON_SESSION_INSTRUMENT_FAILED;
		snprintf(r->res->stop_reason, sizeof(r->res->stop_reason), "%s", r->sp.err.msg);
		r->stopped = 1;
	}
	return r->stopped;
}

static void abort_run(struct run *r, const char *why)
{
	r->res->status = ERGON_SESSION_ABORTED;
	/* Bounded: the reason may quote a full error message. */
	snprintf(r->res->stop_reason, sizeof(r->res->stop_reason), "%.1000s", why);
	r->stopped = 1;
}

static void progress(struct run *r, const char *phase, size_t w, double t, double phase_start)
{
	if (r->cfg->progress == NULL || t < r->next_progress_s)
		return;
	r->next_progress_s = t + 0.25;
	struct ergon_session_progress p = {.phase = phase,
					   .window = w,
					   .windows = r->cfg->windows,
					   .elapsed_s = t - r->sp.origin_s,
					   .phase_s = t - phase_start,
					   .operations = r->n_inv,
					   .failed = r->n_failed};
	r->cfg->progress(r->cfg->progress_ctx, &p);
}

/* Wait until t_end without work: sleep in short steps so the stop flag and
 * (inline) the sampler's schedule are honoured. */
static void wait_until(struct run *r, double t_end, const char *phase, size_t w, double ps)
{
	for (;;) {
		double t = ergon_now_s();
		if (t >= t_end || stop_requested(r))
			return;
		if (r->cfg->sampler == ERGON_SAMPLER_INLINE && sampler_poll(&r->sp, t)) {
			stop_requested(r);
			return;
		}
		progress(r, phase, w, t, ps);
		double next = t_end;
		if (r->cfg->sampler == ERGON_SAMPLER_INLINE && r->sp.next_due_s < next)
			next = r->sp.next_due_s;
		if (next > t + 0.05)
			next = t + 0.05;
		sleep_until(next);
	}
}

static int record_invocation(struct run *r, double t0, double lat, int failed)
{
	if (r->n_inv == r->cap_inv) {
		size_t nc = r->cap_inv ? r->cap_inv * 2 : 65536;
		if (nc > r->max_inv)
			nc = r->max_inv;
		if (r->n_inv >= nc) {
			abort_run(r, "the invocation series reached its limit; shorten the run");
			return ERGON_ETOOBIG;
		}
		double *a = realloc(r->inv_t, nc * sizeof(double));
		if (a == NULL)
			return ERGON_ENOMEM;
		r->inv_t = a;
		a = realloc(r->inv_l, nc * sizeof(double));
		if (a == NULL)
			return ERGON_ENOMEM;
		r->inv_l = a;
		r->cap_inv = nc;
	}
	if (failed) {
		if (r->n_failed == r->cap_failed) {
			size_t nc = r->cap_failed ? r->cap_failed * 2 : 64;
			size_t *a = realloc(r->failed, nc * sizeof(size_t));
			if (a == NULL)
				return ERGON_ENOMEM;
			r->failed = a;
			r->cap_failed = nc;
		}
		r->failed[r->n_failed++] = r->n_inv;
	}
	r->inv_t[r->n_inv] = t0 - r->sp.origin_s;
	r->inv_l[r->n_inv] = lat;
	r->n_inv++;
	return 0;
}

/* One timed invocation; returns the end time. */
static double invoke_once(struct run *r, double *t_start)
{
	const struct ergon_session_config *cfg = r->cfg;
	/* Not zero-filled: clearing 1 KiB per invocation would be most of the
	 * harness overhead; an empty code and message is all "no error" needs. */
	struct ergon_err ierr;
	ierr.code = 0;
	ierr.msg[0] = '\0';
	double a = ergon_now_s();
	int rc = ergon_workload_invoke(r->wl, &ierr);
	double b = ergon_now_s();
	if (cfg->stretch) {
		/* Emulated work or throttle: busy, so the load hint stays true. */
		double until = cfg->stretch(cfg->stretch_ctx, a, b);
		if (until > b && ergon_clock_simulated()) {
			/* Simulated time only moves when asked to. */
			ergon_clock_sleep_until(until);
			b = ergon_now_s();
		}
		while (b < until)
			b = ergon_now_s();
	}
	double lat = b - a;
	int timed_out =
	    rc == ERGON_ETIMEDOUT || (cfg->invoke_timeout_s > 0 && lat > cfg->invoke_timeout_s);
	int failed = rc != 0 || timed_out;
	if (timed_out)
		r->res->n_timeouts++;
	if (record_invocation(r, a, lat, failed) == ERGON_ENOMEM)
		abort_run(r, "out of memory recording invocations");
	if (failed && cfg->failure_policy == ERGON_ON_FAILURE_ABORT && !r->stopped) {
		char why[ERGON_ERR_MSG_MAX + 128];
		snprintf(why, sizeof(why),
			 "invocation %zu failed (%.900s) and --on-failure abort stops the run",
			 r->n_inv - 1,
			 ierr.msg[0] ? ierr.msg : ergon_strerror(rc ? rc : ERGON_ETIMEDOUT));
		abort_run(r, why);
	}
	*t_start = a;
	return b;
}

static void load_phase(struct run *r)
{
	const struct ergon_session_config *cfg = r->cfg;
	struct ergon_session_result *res = r->res;
	int inline_s = cfg->sampler == ERGON_SAMPLER_INLINE;
	int periodic = cfg->release_hz > 0;
	double start = ergon_now_s();
	double t = start;
	res->load_start_s = start - r->sp.origin_s;
	res->window_edges_s[0] = res->load_start_s;
	if (!periodic && r->inst->driver->hint_load)
		r->inst->driver->hint_load(r->inst, 1.0);
	size_t k = 0; /* release index */
	for (size_t w = 0; w < cfg->windows && !stop_requested(r); w++) {
		double edge = start + (double)(w + 1) * cfg->window_s;
		/* The invocation that closed the previous window may have run
		 * past this window's nominal edge too (a slow model, a stalled
		 * or stopped process): this window then ends with the next
		 * invocation that ends, so every window holds one and its edges
		 * strictly increase (docs/METHOD.md, "Run order"). */
		double opened = t;
		int spanned = t >= edge;
		while (spanned || t < edge) {
			if (stop_requested(r))
				break;
			double t0;
			if (periodic) {
				double rel = start + (double)k / cfg->release_hz;
				if (rel >= edge && !spanned) {
					wait_until(r, edge, "load", w, start);
					t = ergon_now_s();
					break;
				}
				wait_until(r, rel, "load", w, start);
				if (r->stopped)
					break;
				if (r->inst->driver->hint_load)
					r->inst->driver->hint_load(r->inst, 1.0);
				t = invoke_once(r, &t0);
				if (r->inst->driver->hint_load)
					r->inst->driver->hint_load(r->inst, 0.0);
				k++;
				if (t > start + (double)k / cfg->release_hz) {
					res->release_overruns++;
					/* Catch up: the next release is now, not a
					 * burst of the ones missed. */
					double behind = (t - start) * cfg->release_hz;
					k = (size_t)ceil(behind);
				}
			} else {
				t = invoke_once(r, &t0);
			}
			spanned = 0;
			if (inline_s && sampler_poll(&r->sp, t)) {
				stop_requested(r);
				break;
			}
			progress(r, "load", w, t, start);
		}
		if (r->stopped &&
		    !(res->status == ERGON_SESSION_ABORTED && t >= edge && t > opened))
			break;
		res->window_edges_s[w + 1] = t - r->sp.origin_s;
		res->windows_completed = w + 1;
		if (r->stopped)
			break;
	}
	if (r->inst->driver->hint_load)
		r->inst->driver->hint_load(r->inst, 0.0);
	res->load_end_s = ergon_now_s() - r->sp.origin_s;
}

int ergon_session_run(const struct ergon_session_config *cfg, struct ergon_instrument *inst,
		      struct ergon_workload *wl, struct ergon_session_result *res,
		      struct ergon_err *err)
{
	*res = (struct ergon_session_result){0};
	if (!(cfg->idle_s > 0) || cfg->windows == 0 || !(cfg->window_s > 0) ||
	    !(cfg->sample_hz > 0) || cfg->settle_s < 0 || cfg->release_hz < 0 ||
	    (cfg->sampler != ERGON_SAMPLER_INLINE && cfg->sampler != ERGON_SAMPLER_THREADED))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "session: idle_s, windows, window_s and sample_hz must be "
				     "positive, settle_s and release_hz not negative, and the "
				     "sampler inline or threaded");
	if (cfg->sampler == ERGON_SAMPLER_THREADED && ergon_clock_simulated())
		return ergon_err_set(err, ERGON_EUSAGE,
				     "session: a simulated clock is installed (ergon_clock_set); "
				     "only the inline sampler runs on it");
	struct run r = {.cfg = cfg, .inst = inst, .wl = wl, .res = res};
	r.max_inv = cfg->max_invocations ? cfg->max_invocations : 100000000u;
	r.sp.inst = inst;
	r.sp.s.max = cfg->max_samples ? cfg->max_samples : 50000000u;
	r.sp.s.n_channels = inst->identity.n_rails > 1 ? inst->identity.n_rails : 1;
	if (r.sp.s.n_channels > ERGON_MAX_RAILS)
		r.sp.s.n_channels = ERGON_MAX_RAILS;
	r.sp.period_s = 1.0 / cfg->sample_hz;
	atomic_init(&r.sp.failed, 0);
	atomic_init(&r.sp.stop, 0);
	struct timespec res_ts;
	clock_getres(CLOCK_MONOTONIC, &res_ts);
	res->clock_res_s = (double)res_ts.tv_sec + (double)res_ts.tv_nsec * 1e-9;
	res->window_edges_s = calloc(cfg->windows + 1, sizeof(double));
	if (res->window_edges_s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	int rc = ergon_workload_prepare(wl, err);
	if (rc)
		goto fail;
	rc = ergon_instrument_start(inst, err);
	if (rc)
		goto fail_prepared;
	if (inst->driver->hint_load)
		inst->driver->hint_load(inst, 0.0);
	res->status = ERGON_SESSION_COMPLETE;
	double t = ergon_now_s();
	r.sp.origin_s = t + cfg->settle_s;
	if (cfg->settle_s > 0)
		wait_until(&r, r.sp.origin_s, "settle", 0, t);
	/* Idle baseline. */
	double idle0 = ergon_now_s();
	r.sp.origin_s = idle0;
	r.sp.next_due_s = idle0;
	res->origin_s = idle0;
	res->idle_start_s = 0;
	if (!r.stopped && cfg->sampler == ERGON_SAMPLER_THREADED) {
		if (pthread_create(&r.sp.thread, NULL, sampler_main, &r.sp) != 0) {
			rc = ergon_err_set(err, ERGON_EIO, "cannot start the sampler thread");
			goto fail_started;
		}
		r.sp.running = 1;
	}
	if (!r.stopped)
		wait_until(&r, idle0 + cfg->idle_s, "idle", 0, idle0);
	res->idle_end_s = ergon_now_s() - idle0;
	if (!r.stopped)
		load_phase(&r);
	if (r.sp.running) {
		atomic_store(&r.sp.stop, 1);
		pthread_join(r.sp.thread, NULL);
	}
	stop_requested(&r); /* a read that failed while the thread wound down */
	{
		struct ergon_err serr = {0};
		ergon_instrument_stop(inst, &serr);
	}
	ergon_workload_teardown(wl);
	res->sample_t_s = r.sp.s.t;
	res->sample_power_w = r.sp.s.p;
	res->sample_temp_c = r.sp.s.temp;
	res->sample_energy_j = r.sp.s.e;
	res->sample_channel = r.sp.s.ch;
	res->n_channels = r.sp.s.n_channels;
	res->n_samples = r.sp.s.n;
	res->has_temp = r.sp.s.has_temp;
	res->has_energy = r.sp.s.has_energy;
	res->inv_start_s = r.inv_t;
	res->inv_latency_s = r.inv_l;
	res->n_inv = r.n_inv;
	res->failed_index = r.failed;
	res->n_failed = r.n_failed;
	res->sampler_late = r.sp.late;
	res->sampler_missed = r.sp.missed;
	res->samples_rejected = r.sp.s.rejected;
	res->max_read_s = r.sp.max_read_s;
	res->mean_read_s = r.sp.n_reads ? r.sp.sum_read_s / (double)r.sp.n_reads : 0;
	return 0;
fail_started : {
	struct ergon_err serr = {0};
	ergon_instrument_stop(inst, &serr);
}
fail_prepared:
	ergon_workload_teardown(wl);
fail:
	free(r.sp.s.t);
	free(r.sp.s.p);
	free(r.sp.s.temp);
	free(r.sp.s.e);
	free(r.sp.s.ch);
	free(r.inv_t);
	free(r.inv_l);
	free(r.failed);
	free(res->window_edges_s);
	*res = (struct ergon_session_result){0};
	return rc;
}

void ergon_session_result_cleanup(struct ergon_session_result *res)
{
	if (res == NULL)
		return;
	free(res->window_edges_s);
	free(res->sample_t_s);
	free(res->sample_power_w);
	free(res->sample_temp_c);
	free(res->sample_energy_j);
	free(res->sample_channel);
	free(res->inv_start_s);
	free(res->inv_latency_s);
	free(res->failed_index);
	*res = (struct ergon_session_result){0};
}

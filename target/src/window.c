/* The clean window: warm reference, rate probe, bounded drain wait, then
 * inferences back to back timed by the window clock. Nothing is printed
 * and no I2C happens between the open and close edges unless `trace`. */
#include "ergon/ert_hpx.h"
#include "ergon/ert_window.h"

/* Warm inferences measured before the window for the reference delta. */
#define WARM_REF_RUNS 3u
/* Poll step of the drain wait. */
#define DRAIN_POLL_US 100u

int ert_window_validate(const struct ert_window_config *cfg)
{
	if (cfg->mode == ERT_WINDOW_FIXED)
		return cfg->iterations > 0 ? ERT_OK : ERT_E_CONFIG;
	if (cfg->mode != ERT_WINDOW_AUTO)
		return ERT_E_CONFIG;
	if (cfg->window_min == 0 || cfg->window_min > cfg->window_max || cfg->window_target_ms == 0)
		return ERT_E_CONFIG;
	if (cfg->window_target_ms > UINT32_MAX / 1000u)
		return ERT_E_CONFIG;
	if (cfg->busy_loop && cfg->busy_loop_us == 0)
		return ERT_E_CONFIG;
	return ERT_OK;
}

static int one(const struct ert_hal *hal, const struct ert_window_config *cfg,
	       const struct ert_workload *work)
{
	if (cfg->busy_loop)
		return hal->delay_us(hal->ctx, cfg->busy_loop_us) == 0 ? ERT_OK : ERT_E_CLOCK;
	return work->infer(work->user) == 0 ? ERT_OK : ERT_E_WORKLOAD;
}

static int cycles(const struct ert_hal *hal, uint32_t *c)
{
	return hal->cycles(hal->ctx, c) == 0 ? ERT_OK : ERT_E_UNSUPPORTED;
}

static int clock_now(const struct ert_hal *hal, uint32_t *t)
{
	return hal->clock_us(hal->ctx, t) == 0 ? ERT_OK : ERT_E_CLOCK;
}

static int prepare(const struct ert_hal *hal, const struct ert_window_config *cfg,
		   const struct ert_workload *work, struct ert_window_result *res)
{
	int rc = ERT_OK;
	uint32_t c0 = 0, c1 = 0;
	if (res->have_cycles) {
		/* The reference is the largest warm delta, so a counter that
		 * under-counts now and then cannot lower it. */
		for (unsigned i = 0; i < WARM_REF_RUNS && rc == ERT_OK; i++) {
			rc = cycles(hal, &c0);
			if (rc == ERT_OK)
				rc = one(hal, cfg, work);
			if (rc == ERT_OK)
				rc = cycles(hal, &c1);
			if (rc == ERT_OK && c1 - c0 > res->ref_cycles)
				res->ref_cycles = c1 - c0;
		}
		if (rc == ERT_OK && cfg->rate_probe_us > 0) {
			/* delay_us does not use the cycle counter, so cycles over a
			 * fixed interval measure the core's actual rate: a uniform
			 * slowdown shows here and nowhere else. */
			rc = cycles(hal, &c0);
			if (rc == ERT_OK)
				rc = hal->delay_us(hal->ctx, cfg->rate_probe_us) == 0 ? ERT_OK
										      : ERT_E_CLOCK;
			if (rc == ERT_OK)
				rc = cycles(hal, &c1);
			if (rc == ERT_OK) {
				res->rate_probe_us = cfg->rate_probe_us;
				res->rate_probe_cycles = c1 - c0;
			}
		}
	}
	if (rc == ERT_OK && cfg->drain_wait_max_us > 0 && hal->tx_pending != NULL) {
		/* Let the host drain the transport so its interrupts do not
		 * land inside the window; bounded, and the wait is reported. */
		size_t pending = 0;
		res->drain_timed_out = 1;
		while (rc == ERT_OK && res->drain_waited_us <= cfg->drain_wait_max_us) {
			if (hal->tx_pending(hal->ctx, &pending) != 0) {
				rc = ERT_E_TRANSPORT;
				break;
			}
			if (pending == 0) {
				res->drain_timed_out = 0;
				break;
			}
			if (hal->delay_us(hal->ctx, DRAIN_POLL_US) != 0)
				rc = ERT_E_CLOCK;
			res->drain_waited_us += DRAIN_POLL_US;
		}
	}
	return rc;
}

int ert_window_run(const struct ert_hal *hal, const struct ert_window_config *cfg,
		   const struct ert_workload *work, const struct ert_window_edges *edges,
		   struct ert_window_result *res_out, struct ert_hpx *trace_out)
{
	struct ert_window_result r = {0};
	int rc = ert_window_validate(cfg);
	if (rc != ERT_OK)
		goto out;
	if (hal->clock_us == NULL || hal->delay_us == NULL || (!cfg->busy_loop && !work)) {
		rc = ERT_E_UNSUPPORTED;
		goto out;
	}
	r.requested = cfg->mode == ERT_WINDOW_FIXED ? cfg->iterations : cfg->window_max;
	if (hal->cycles != NULL) {
		uint32_t a = 0, b = 0;
		r.have_cycles = hal->cycles(hal->ctx, &a) == 0 &&
				hal->delay_us(hal->ctx, 10) == 0 &&
				hal->cycles(hal->ctx, &b) == 0 && a != b;
	}
	rc = prepare(hal, cfg, work, &r);
	if (rc != ERT_OK)
		goto out;

	if (edges != NULL && edges->open != NULL) {
		rc = edges->open(edges->user);
		if (rc != ERT_OK)
			goto out;
	}
	uint32_t t0 = 0, t = 0, c0 = 0, c1 = 0;
	int rc_close = ERT_OK;
	rc = clock_now(hal, &t0);
	const uint32_t target_us = cfg->window_target_ms * 1000u;
	while (rc == ERT_OK) {
		if (r.have_cycles)
			rc = cycles(hal, &c0);
		if (rc == ERT_OK)
			rc = one(hal, cfg, work);
		if (rc == ERT_OK && r.have_cycles)
			rc = cycles(hal, &c1);
		if (rc == ERT_OK)
			rc = clock_now(hal, &t);
		if (rc != ERT_OK)
			break;
		r.completed++;
		if (r.have_cycles) {
			uint32_t d = c1 - c0;
			r.total_cycles += d;
			if (d == 0)
				r.stalled_iters++;
			else if (d < r.ref_cycles / 8u)
				r.partial_iters++;
		}
#ifndef ERT_POWER_BUILD
		if (cfg->trace && trace_out != NULL)
			(void)ert_hpx_meta_u(trace_out, HPX_KEY_CLEAN_ITER, r.completed);
#else
		(void)trace_out;
#endif
		if (cfg->mode == ERT_WINDOW_FIXED) {
			if (r.completed >= cfg->iterations)
				break;
		} else if (r.completed >= cfg->window_max ||
			   (r.completed >= cfg->window_min && t - t0 >= target_us)) {
			break;
		} else if (t == t0 && r.completed >= ERT_WINDOW_FROZEN_ITERS) {
			/* A µs clock that has not moved across this many
			 * inferences is frozen; the target would never be
			 * reached (the check below reports it). */
			break;
		}
	}
	/* Close the gate even after a failure: a gate left high would make
	 * the meter integrate the fault. */
	if (edges != NULL && edges->close != NULL)
		rc_close = edges->close(edges->user);
	r.elapsed_us = t - t0;
	if (rc == ERT_OK)
		rc = rc_close;
	/* A window that ran inferences in zero time means the window clock is
	 * frozen: no duration can be trusted. */
	if (rc == ERT_OK && r.completed > 0 && r.elapsed_us == 0) {
		r.clock_frozen = 1;
		rc = ERT_E_CLOCK;
	}
out:
	*res_out = r;
	return rc;
}

/* The clean window: inferences back to back, timed with the window clock,
 * with no output and no I2C inside (unless clean_window_trace, which is
 * documented as perturbing).
 */
#ifndef ERT_WINDOW_H
#define ERT_WINDOW_H

#include "ergon/ert_hal.h"

#include <stdint.h>

struct ert_hpx;

/* One unit of work: the user's inference. Returns 0 or a negative code. */
struct ert_workload {
	int (*infer)(void *user);
	void *user;
};

enum ert_window_mode {
	ERT_WINDOW_AUTO = 1,  /* run until window_target_ms, clamped to [min, max] */
	ERT_WINDOW_FIXED = 2, /* run exactly `iterations` */
};

/* Auto mode stops early when the window clock has not advanced after this
 * many inferences (a frozen clock; the window then fails as ERT_E_CLOCK). */
#define ERT_WINDOW_FROZEN_ITERS 1000u

struct ert_window_config {
	int mode;
	uint32_t window_target_ms;
	uint32_t window_min;	    /* inferences, auto mode */
	uint32_t window_max;	    /* inferences, auto mode; also the record bound */
	uint32_t iterations;	    /* fixed mode */
	uint32_t rate_probe_us;	    /* delay_us interval timed with the cycle counter; 0 = off */
	uint32_t drain_wait_max_us; /* wait for the transport to drain; 0 = off */
	int busy_loop;		    /* a calibrated spin instead of inference */
	uint32_t busy_loop_us;	    /* spin length per "inference" */
	int trace;		    /* a line per iteration (perturbs the window) */
};

struct ert_window_result {
	uint32_t requested; /* fixed: iterations; auto: window_max */
	uint32_t completed;
	uint32_t elapsed_us; /* window clock, first to last inference */
	int have_cycles;
	uint32_t ref_cycles;	/* warm reference: the largest of 3 warm deltas */
	uint64_t total_cycles;	/* sum of the window's per-iteration deltas */
	uint32_t stalled_iters; /* zero cycle delta */
	uint32_t partial_iters; /* non-zero delta below ref_cycles / 8 */
	uint32_t rate_probe_us;
	uint32_t rate_probe_cycles; /* cycles counted across the probe; 0 if none */
	uint32_t drain_waited_us;
	int drain_timed_out;
	int clock_frozen; /* inferences completed in 0 us: the window clock is stopped */
};

/* Check a configuration before anything runs (ERT_E_CONFIG). */
int ert_window_validate(const struct ert_window_config *cfg);

/* Hooks the gated flows use to raise/lower the gate around exactly the
 * timed part (may be NULL). */
struct ert_window_edges {
	int (*open)(void *user);
	int (*close)(void *user);
	void *user;
};

/* Run the warm reference, the rate probe, the drain wait and the window.
 * `trace_out` receives trace lines when cfg->trace (may be NULL). */
int ert_window_run(const struct ert_hal *hal, const struct ert_window_config *cfg,
		   const struct ert_workload *work, const struct ert_window_edges *edges,
		   struct ert_window_result *res, struct ert_hpx *trace_out);

#endif

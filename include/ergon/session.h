/* The session engine: optional settle, idle baseline, N load windows.
 *
 * It drives an instrument and a workload through their interfaces (tests
 * pass test-only drivers) and records raw series: every invocation's start
 * and latency on CLOCK_MONOTONIC, every power sample, the window edges and
 * the sampler's health. It computes no figures (see figures.h and run.h)
 * and installs no signal handler: the caller passes a stop flag.
 */
#ifndef ERGON_SESSION_H
#define ERGON_SESSION_H

#include "ergon/error.h"
#include "ergon/instrument.h"
#include "ergon/workload.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_sampler_kind {
	ERGON_SAMPLER_INLINE = 1,   /* a reading between invocations when due */
	ERGON_SAMPLER_THREADED = 2, /* a thread reading at sample_hz */
};

enum ergon_failure_policy {
	ERGON_ON_FAILURE_CONTINUE = 1, /* count failed invocations, go on */
	ERGON_ON_FAILURE_ABORT = 2,    /* stop the run at the first failure */
};

enum ergon_session_status {
	ERGON_SESSION_COMPLETE = 1,
	ERGON_SESSION_INTERRUPTED = 2,	     /* the stop flag was raised (SIGINT/SIGTERM) */
	ERGON_SESSION_INSTRUMENT_FAILED = 3, /* a read failed mid-run */
	ERGON_SESSION_ABORTED = 4,	     /* failure policy abort, or a limit was reached */
};

struct ergon_session_progress {
	const char *phase; /* "settle", "idle", "load" */
	size_t window, windows;
	double elapsed_s, phase_s;
	size_t operations, failed;
	/* Filled by a caller that repeats the session (ergon run --repeat):
	 * 1-based repetition of repetitions; 0 when it does not. */
	size_t repetition, repetitions;
};

struct ergon_session_config {
	double settle_s; /* wait before the idle baseline, no work, no samples */
	double idle_s;	 /* idle baseline: sampled, no work */
	size_t windows;	 /* load windows */
	double window_s;
	double release_hz;		  /* 0: saturated; > 0: periodic releases */
	int sampler;			  /* enum ergon_sampler_kind */
	double sample_hz;		  /* threaded rate; inline: the most readings per second */
	int failure_policy;		  /* enum ergon_failure_policy */
	double invoke_timeout_s;	  /* an invocation longer than this failed (0 = none) */
	size_t max_samples;		  /* memory bound (0 = 50,000,000) */
	size_t max_invocations;		  /* memory bound (0 = 100,000,000) */
	volatile sig_atomic_t *stop_flag; /* raised by the caller's signal handler; may be NULL */
	/* Emulation (synthetic scenarios): given an invocation that ran from
	 * t_start_s to t_end_s (host monotonic), the time it must end at
	 * (>= t_end_s): per-invocation work and a throttle's slowdown. The
	 * session busy-waits until then. May be NULL. */
	double (*stretch)(void *ctx, double t_start_s, double t_end_s);
	void *stretch_ctx;
	/* Called about 4 times a second from the measuring thread. May be NULL. */
	void (*progress)(void *ctx, const struct ergon_session_progress *p);
	void *progress_ctx;
};

/* Raw series. All times are seconds relative to origin_s (host monotonic
 * time at the start of the idle baseline). Arrays are malloc'd and freed by
 * ergon_session_result_cleanup. */
struct ergon_session_result {
	int status; /* enum ergon_session_status */
	char stop_reason[ERGON_ERR_MSG_MAX];
	double origin_s;
	double idle_start_s, idle_end_s, load_start_s, load_end_s;
	double *window_edges_s; /* windows_completed + 1 edges */
	size_t windows_completed;
	/* power samples */
	double *sample_t_s, *sample_power_w, *sample_temp_c, *sample_energy_j;
	uint16_t *sample_channel; /* rail index of each sample (identity rails[]) */
	size_t n_samples;
	int n_channels; /* rails in the stream (>= 1); time increases within each */
	int has_temp, has_energy;
	/* invocations in the load phase */
	double *inv_start_s, *inv_latency_s;
	size_t n_inv;
	size_t *failed_index;
	size_t n_failed, n_timeouts, release_overruns;
	/* sampler health */
	size_t sampler_late, sampler_missed;
	size_t samples_rejected; /* non-finite or non-increasing readings refused */
	double max_read_s;	 /* longest instrument read call */
	double mean_read_s;	 /* mean instrument read call */
	double clock_res_s;	 /* CLOCK_MONOTONIC resolution */
};

/* Run a session. Returns 0 when the session ran to an end (complete,
 * interrupted, instrument failure or abort: see res->status, the series
 * hold what was measured); a negative code when it could not start (the
 * result is then empty). Ownership: res arrays belong to the caller. */
ERGON_API int ergon_session_run(const struct ergon_session_config *cfg,
				struct ergon_instrument *inst, struct ergon_workload *wl,
				struct ergon_session_result *res, struct ergon_err *err);
ERGON_API void ergon_session_result_cleanup(struct ergon_session_result *res);
/* Host monotonic time in seconds. */
ERGON_API double ergon_now_s(void);

#ifdef __cplusplus
}
#endif
#endif

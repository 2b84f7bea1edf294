/* The figures engines: pure functions on arrays and streams that turn a
 * sample stream and invocation timings into energy, energy per operation,
 * uncertainty, latency, throughput and throttle onset. They open nothing and
 * print nothing; docs/METHOD.md states every formula used here.
 */
#ifndef ERGON_FIGURES_H
#define ERGON_FIGURES_H

#include "ergon/budget.h"
#include "ergon/error.h"
#include "ergon/stats.h"
#include "ergon/rating.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An energy figure over one phase, with its uncertainty split by source. */
struct ergon_energy {
	size_t n_samples;
	double span_s;	     /* t_last - t_first of the samples integrated */
	double energy_j;     /* trapezoid over the actual timestamps (or accumulator delta) */
	double u_rated_j;    /* accuracy % of reading + resolution floor, integrated */
	double u_timing_j;   /* timestamp quantization propagated through the trapezoid */
	double u_j;	     /* u_rated_j + u_timing_j (worst case, linear) */
	double mean_power_w; /* energy_j / span_s */
	double mean_power_u_w;
	double peak_power_w;
	/* What the uncertainty budget needs (figures_budget.c): the integral
	 * of |p| (J), the signed sensitivities of E to the first and the last
	 * timestamp (W) and the sum of the squared interior ones (W^2). */
	double abs_energy_j;
	double sens_first_w, sens_last_w, sens_int2_w2;
};

/* Incremental trapezoidal integrator: samples arrive one at a time and the
 * whole capture is never needed in memory. */
struct ergon_integrator {
	double accuracy_frac;	 /* rated accuracy as a fraction of reading */
	double resolution_w;	 /* absolute floor per reading */
	double timing_quantum_s; /* worst-case error of one timestamp */
	size_t n;
	double t_first_s, t_last_s;
	double p_prev_w, p_prev2_w;
	double energy_j, abs_energy_j;
	double sens_w;	     /* sum of |dE/dt_i| for finalised samples */
	double first_sens_w; /* |dE/dt_0| = (|p0 + p1|)/2, known at n == 2 */
	double peak_w;
	double sens2_w2;       /* sum of (dE/dt_i)^2 for finalised interior samples */
	double first_signed_w; /* dE/dt_0 = -(p0 + p1)/2 */
};

ERGON_API void ergon_integrator_init(struct ergon_integrator *ig, double accuracy_pct,
				     double resolution_w, double timing_quantum_s);
/* Add one sample. Refuses a non-finite value and a timestamp that does not
 * strictly increase (ERGON_EPARSE; the message names the sample index). */
ERGON_API int ergon_integrator_add(struct ergon_integrator *ig, double t_s, double power_w,
				   struct ergon_err *err);
/* The figure so far (a phase with fewer than 2 samples has energy 0 and
 * mean power NaN: the caller reports run.too_few_samples). */
ERGON_API void ergon_integrator_result(const struct ergon_integrator *ig, struct ergon_energy *out);

/* Trapezoid over arrays (the integrator run over them). */
ERGON_API int ergon_energy_trapezoid(const double *t_s, const double *power_w, size_t n,
				     double accuracy_pct, double resolution_w,
				     double timing_quantum_s, struct ergon_energy *out,
				     struct ergon_err *err);

/* Energy from a hardware accumulator: last - first. A decreasing counter is
 * refused (ERGON_EMEASURE, naming the index). Uncertainty: accuracy % of the
 * delta plus one accumulator LSB at each end. */
ERGON_API int ergon_energy_accumulator(const double *t_s, const double *energy_j, size_t n,
				       double accuracy_pct, double resolution_j,
				       struct ergon_energy *out, struct ergon_err *err);

/* Latency over every invocation; percentiles by nearest rank
 * (rank = ceil(p/100 * n), 1-based, on the sorted values). */
struct ergon_latency {
	size_t count;
	double min_s, mean_s, max_s, p50_s, p90_s, p95_s, p99_s;
	/* The distribution (docs/METHOD.md, "Latency"): the median's
	 * distribution-free interval [x_(k), x_(n-k+1)] and its coverage
	 * (ergon_median_ci_ranks), and Tukey's fences on the nearest-rank
	 * quartiles with the count of latencies outside them
	 * (ergon_outliers_tukey_sorted). NaN and 0 when count is 0. */
	double median_lo_s, median_hi_s, median_coverage;
	double q1_s, q3_s, lo_fence_s, hi_fence_s;
	size_t outliers_low, outliers_high;
};
ERGON_API int ergon_latency_stats(const double *latency_s, size_t n, struct ergon_latency *out,
				  struct ergon_err *err);
/* The distribution fields of out (median interval, quartiles, fences,
 * outlier counts) from the n sorted latencies. */
ERGON_API void ergon_latency_distribution_sorted(const double *sorted, size_t n,
						 struct ergon_latency *out);
/* ergon_percentile_nearest_rank, ergon_percentile_rank: ergon/stats.h. */

/* Operations per window: an operation belongs to the window in which it
 * ended; bounds_s holds n_windows + 1 increasing window edges, the last
 * window includes its end edge. ops_per_s[i] = ops[i] / (bounds[i+1] -
 * bounds[i]). end_s need not be sorted. */
ERGON_API int ergon_throughput_windows(const double *end_s, size_t n, const double *bounds_s,
				       size_t n_windows, size_t *ops, double *ops_per_s,
				       struct ergon_err *err);

/* Throttle onset. onset = the first window i >= 1 whose throughput is below
 * (1 - threshold) * first-window throughput and stays below for `consecutive`
 * windows COUNTING window i itself (windows i .. i+consecutive-1 all below;
 * all of them must exist). Strictly below: equal is not below. */
struct ergon_throttle {
	int throttled;
	long onset_window; /* -1 when none */
	double first_ops_per_s;
	double tail_ops_per_s; /* mean of the last `consecutive` windows */
	double change_pct;     /* 100 * (tail - first) / first */
};
ERGON_API int ergon_throttle_onset(const double *ops_per_s, size_t n, double threshold,
				   size_t consecutive, struct ergon_throttle *out,
				   struct ergon_err *err);

/* Energy per operation. */
enum ergon_eop_formula {
	ERGON_EOP_SATURATED = 1, /* mean active power x compute latency */
	ERGON_EOP_PERIODIC = 2,	 /* mean power / release rate (idle gaps folded in) */
};
struct ergon_eop_input {
	int periodic;		   /* the run was in periodic mode */
	double release_hz;	   /* requested release rate (periodic) */
	double achieved_ops_per_s; /* operations / load duration */
	double latency_mean_s;
	double latency_quantum_s; /* clock resolution of one latency measurement */
	double load_power_w, load_power_u_w;
	double idle_power_w, idle_power_u_w;
};
struct ergon_eop {
	int formula;
	double duty_cycle; /* latency_mean_s * release_hz (periodic), 1 saturated */
	double total_j, total_u_j;
	double above_idle_j, above_idle_u_j;
	char reason[160];
};
ERGON_API int ergon_energy_per_op(const struct ergon_eop_input *in, struct ergon_eop *out,
				  struct ergon_err *err);

/* ---- Uncertainty budgets of the run's figures (figures_budget.c,
 * docs/UNCERTAINTY.md). ------------------------------------------------ */

/* The report's uncertainty model, typed: what the instrument states at the
 * power level and what the clocks are good for. A NaN value is unknown. */
struct ergon_run_um {
	/* The instrument's rating as it bears on a power reading (its power
	 * view, ergon/rating.h): gains (% of reading) and absolute bounds. */
	int n_pterms;
	struct ergon_rating_pterm pterm[ERGON_RATING_MAX_PTERMS];
	int offset_constant;		 /* one offset for every reading (one range) */
	struct ergon_rated resolution_w; /* one power reading's step, W */
	struct ergon_rated resolution_j; /* one accumulator step, J */
	struct ergon_rated host_ppm;	 /* host CLOCK_MONOTONIC rate bound, ppm */
	struct ergon_rated inst_ppm;	 /* the instrument's own clock, ppm */
	int clock_instrument;		 /* samples are stamped by the instrument */
	double timing_quantum_s;	 /* bound of one timestamp's error */
	double latency_quantum_s;	 /* the clock's resolution */
};

/* Budget of a phase's energy (accum: from the accumulator delta). */
ERGON_API void ergon_budget_phase_energy(const struct ergon_energy *e, int accum,
					 const struct ergon_run_um *um, struct ergon_budget *b);
/* Budget of a phase's mean power (energy / span). */
ERGON_API void ergon_budget_phase_power(const struct ergon_energy *e, int accum,
					const struct ergon_run_um *um, struct ergon_budget *b);

struct ergon_eop_budget_input {
	const struct ergon_eop *eop;
	const struct ergon_energy *load, *idle;
	int load_accum, idle_accum;
	size_t n_ops;		/* successful operations */
	double latency_mean_s;	/* their mean latency (saturated) */
	double load_duration_s; /* load phase, host clock */
	/* Standard error of the mean of the per-window energy per operation
	 * (ergon_window_spread), J; NaN when fewer than two windows give one. */
	double spread_se_total_j, spread_se_above_j;
	size_t spread_windows;
	/* Standard error over repeated runs (issue 31's repeats), J; NaN: no
	 * repeats, the term is left out. */
	double repeat_se_j;
	size_t repeats;
};

/* Budget of the energy per operation, total (above_idle 0) or above idle. */
ERGON_API void ergon_budget_eop(const struct ergon_eop_budget_input *in,
				const struct ergon_run_um *um, int above_idle,
				struct ergon_budget *b);

/* Before measuring: the part of the gated figures' relative budget the plan
 * already bounds (value 1, unit "1": every limit is a fraction). The rated
 * gains and the clock's bound are known now; a term the plan already
 * knows will be unknown (an unstated rating or step, fewer than 2 windows
 * for the spread) is listed unknown; what depends on the data (offsets over
 * the power, resolution, timestamps, the spread itself) only adds, so the
 * known part is a lower bound of what the run will state (U_known). accum:
 * the instrument integrates (its accumulator's step and clock apply). */
ERGON_API void ergon_budget_run_plan(const struct ergon_run_um *um, size_t windows, int accum,
				     struct ergon_budget *b);

/* The "spread over windows" of the energy per operation: per load window
 * (edges_s[0..nw]) the window's mean power (trapezoid over power_w, or the
 * accumulator delta over energy_j when it is not NULL) times its duration
 * over its operations ops[w] (above idle: the idle power taken off first),
 * then the standard error of their mean (ergon_window_spread), J. A window
 * with fewer than 2 samples or no operation gives none; NaN when fewer
 * than 2 do. *used: how many did. */
ERGON_API void ergon_window_spread_eop(const double *t_s, const double *power_w,
				       const double *energy_j, size_t n, const double *edges_s,
				       size_t nw, const size_t *ops, double idle_power_w,
				       double *se_total_j, double *se_above_j, size_t *used);

/* Standard error of the mean of x[0..n): s / sqrt(n) (s the sample
 * standard deviation); NaN when n < 2 or a value is not finite. */
ERGON_API double ergon_window_spread(const double *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif

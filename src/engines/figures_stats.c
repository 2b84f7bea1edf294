/* Latency percentiles, throughput per window and throttle onset. */
#include "ergon/figures.h"
#include "ergon/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void ergon_latency_distribution_sorted(const double *s, size_t n, struct ergon_latency *out)
{
	if (n == 0)
		return;
	size_t k;
	ergon_median_ci_ranks(n, &k, &out->median_coverage);
	out->median_lo_s = s[k - 1];
	out->median_hi_s = s[n - k];
	struct ergon_outliers o;
	ergon_outliers_tukey_sorted(s, n, &o);
	out->q1_s = o.q1;
	out->q3_s = o.q3;
	out->lo_fence_s = o.lo_fence;
	out->hi_fence_s = o.hi_fence;
	out->outliers_low = o.n_low;
	out->outliers_high = o.n_high;
}

int ergon_latency_stats(const double *latency_s, size_t n, struct ergon_latency *out,
			struct ergon_err *err)
{
	*out = (struct ergon_latency){0};
	out->count = n;
	if (n == 0) {
		out->min_s = out->mean_s = out->max_s = NAN;
		out->p50_s = out->p90_s = out->p95_s = out->p99_s = NAN;
		out->median_lo_s = out->median_hi_s = out->median_coverage = NAN;
		out->q1_s = out->q3_s = out->lo_fence_s = out->hi_fence_s = NAN;
		return 0;
	}
	double *s = malloc(n * sizeof(*s));
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "latency: out of memory for %zu values", n);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(latency_s[i]) || latency_s[i] < 0) {
			free(s);
			return ergon_err_set(err, ERGON_EPARSE,
					     "invocation %zu: latency %g s is not a finite "
					     "non-negative number",
					     i, latency_s[i]);
		}
		s[i] = latency_s[i];
		sum += s[i];
	}
	qsort(s, n, sizeof(*s), cmp_double);
	out->min_s = s[0];
	out->max_s = s[n - 1];
	out->mean_s = sum / (double)n;
	out->p50_s = ergon_percentile_nearest_rank(s, n, 50);
	out->p90_s = ergon_percentile_nearest_rank(s, n, 90);
	out->p95_s = ergon_percentile_nearest_rank(s, n, 95);
	out->p99_s = ergon_percentile_nearest_rank(s, n, 99);
	ergon_latency_distribution_sorted(s, n, out);
	free(s);
	return 0;
}

int ergon_throughput_windows(const double *end_s, size_t n, const double *bounds_s,
			     size_t n_windows, size_t *ops, double *ops_per_s,
			     struct ergon_err *err)
{
	if (n_windows == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "throughput: no windows");
	for (size_t w = 0; w < n_windows; w++) {
		if (!(bounds_s[w + 1] > bounds_s[w]))
			return ergon_err_set(err, ERGON_EPARSE,
					     "window %zu: edges %.9f..%.9f s do not increase", w,
					     bounds_s[w], bounds_s[w + 1]);
		ops[w] = 0;
	}
	for (size_t i = 0; i < n; i++) {
		double t = end_s[i];
		if (t < bounds_s[0] || t > bounds_s[n_windows])
			continue;
		/* Binary search for the window whose [lo, hi) holds t. */
		size_t lo = 0, hi = n_windows;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (t >= bounds_s[mid])
				lo = mid;
			else
				hi = mid;
		}
		ops[lo]++;
	}
	for (size_t w = 0; w < n_windows; w++)
		ops_per_s[w] = (double)ops[w] / (bounds_s[w + 1] - bounds_s[w]);
	return 0;
}

int ergon_throttle_onset(const double *ops_per_s, size_t n, double threshold, size_t consecutive,
			 struct ergon_throttle *out, struct ergon_err *err)
{
	*out = (struct ergon_throttle){.onset_window = -1};
	if (n == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "throttle: no windows");
	if (!(threshold > 0 && threshold < 1) || consecutive == 0)
		return ergon_err_set(err, ERGON_ERANGE,
				     "throttle: threshold %g must be in (0, 1) and consecutive "
				     "windows %zu at least 1",
				     threshold, consecutive);
	out->first_ops_per_s = ops_per_s[0];
	size_t k = consecutive < n ? consecutive : n;
	double tail = 0;
	for (size_t i = n - k; i < n; i++)
		tail += ops_per_s[i];
	out->tail_ops_per_s = tail / (double)k;
	out->change_pct =
	    ops_per_s[0] > 0 ? 100.0 * (out->tail_ops_per_s - ops_per_s[0]) / ops_per_s[0] : NAN;
	double limit = (1.0 - threshold) * ops_per_s[0];
	for (size_t i = 1; i + consecutive <= n; i++) {
		size_t j = i;
		while (j < i + consecutive && ops_per_s[j] < limit)
			j++;
		if (j == i + consecutive) {
			out->throttled = 1;
			out->onset_window = (long)i;
			break;
		}
	}
	return 0;
}

int ergon_energy_per_op(const struct ergon_eop_input *in, struct ergon_eop *out,
			struct ergon_err *err)
{
	*out = (struct ergon_eop){0};
	if (!isfinite(in->load_power_w) || !isfinite(in->idle_power_w) ||
	    !(in->latency_mean_s > 0) || !(in->achieved_ops_per_s > 0))
		return ergon_err_set(err, ERGON_EMEASURE,
				     "energy per operation: load or idle power, latency or "
				     "operation rate is missing; no figure is published");
	double above_w = in->load_power_w - in->idle_power_w;
	double u_above_w = in->load_power_u_w + in->idle_power_u_w;
	if (in->periodic && in->release_hz > 0)
		out->duty_cycle = in->latency_mean_s * in->release_hz;
	else
		out->duty_cycle = 1.0;
	if (in->periodic && out->duty_cycle < 1.0) {
		/* Idle gaps between releases belong to the operation's cost on
		 * a deployed loop: fold them in by dividing the mean power over
		 * the whole load phase by the achieved release rate. */
		out->formula = ERGON_EOP_PERIODIC;
		double r = in->achieved_ops_per_s;
		out->total_j = in->load_power_w / r;
		out->total_u_j = in->load_power_u_w / r;
		out->above_idle_j = above_w / r;
		out->above_idle_u_j = u_above_w / r;
		snprintf(out->reason, sizeof(out->reason),
			 "periodic mode, duty cycle %.3f < 1: mean power / achieved release rate",
			 out->duty_cycle);
	} else {
		out->formula = ERGON_EOP_SATURATED;
		double l = in->latency_mean_s, q = in->latency_quantum_s;
		out->total_j = in->load_power_w * l;
		out->total_u_j = in->load_power_u_w * l + fabs(in->load_power_w) * q;
		out->above_idle_j = above_w * l;
		out->above_idle_u_j = u_above_w * l + fabs(above_w) * q;
		snprintf(out->reason, sizeof(out->reason), "%s",
			 in->periodic ? "periodic mode overran (duty cycle >= 1): the device was "
					"saturated, mean active power x compute latency"
				      : "saturated mode: mean active power x compute latency");
	}
	return 0;
}

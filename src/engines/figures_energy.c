/* Energy over a phase: trapezoid over the actual sample timestamps or
 * hardware accumulator deltas, with the uncertainty of docs/METHOD.md. */
#include "ergon/figures.h"

#include <math.h>
#include <stddef.h>

void ergon_integrator_init(struct ergon_integrator *ig, double accuracy_pct, double resolution_w,
			   double timing_quantum_s)
{
	*ig = (struct ergon_integrator){0};
	ig->accuracy_frac = accuracy_pct / 100.0;
	ig->resolution_w = resolution_w;
	ig->timing_quantum_s = timing_quantum_s;
}

int ergon_integrator_add(struct ergon_integrator *ig, double t_s, double power_w,
			 struct ergon_err *err)
{
	if (!isfinite(t_s) || !isfinite(power_w))
		return ergon_err_set(err, ERGON_EPARSE,
				     "sample %zu: non-finite time or power (t_s=%g, power_w=%g); "
				     "the instrument or recording is corrupt",
				     ig->n, t_s, power_w);
	if (ig->n > 0 && !(t_s > ig->t_last_s))
		return ergon_err_set(err, ERGON_EPARSE,
				     "sample %zu: time %.9f s does not increase (previous %.9f s); "
				     "energy is integrated over real timestamps and non-monotonic "
				     "time is refused",
				     ig->n, t_s, ig->t_last_s);
	if (ig->n == 0) {
		ig->t_first_s = t_s;
		ig->peak_w = power_w;
	} else {
		double dt = t_s - ig->t_last_s;
		ig->energy_j += 0.5 * (ig->p_prev_w + power_w) * dt;
		ig->abs_energy_j += 0.5 * (fabs(ig->p_prev_w) + fabs(power_w)) * dt;
		/* dE/dt_i for the previous sample is known once its right
		 * neighbour arrives: (p_{i-1} - p_{i+1}) / 2 for an interior
		 * sample, -(p_0 + p_1) / 2 for the first. */
		if (ig->n == 1) {
			ig->first_sens_w = 0.5 * fabs(ig->p_prev_w + power_w);
			ig->first_signed_w = -0.5 * (ig->p_prev_w + power_w);
		} else {
			double d = 0.5 * (ig->p_prev2_w - power_w);
			ig->sens_w += fabs(d);
			ig->sens2_w2 += d * d;
		}
		if (power_w > ig->peak_w)
			ig->peak_w = power_w;
	}
	ig->p_prev2_w = ig->p_prev_w;
	ig->p_prev_w = power_w;
	ig->t_last_s = t_s;
	ig->n++;
	return 0;
}

void ergon_integrator_result(const struct ergon_integrator *ig, struct ergon_energy *out)
{
	*out = (struct ergon_energy){0};
	out->n_samples = ig->n;
	out->peak_power_w = ig->n ? ig->peak_w : NAN;
	if (ig->n < 2) {
		out->mean_power_w = NAN;
		out->mean_power_u_w = NAN;
		return;
	}
	out->span_s = ig->t_last_s - ig->t_first_s;
	out->energy_j = ig->energy_j;
	/* Gain error is systematic (one calibration for every reading), so it
	 * adds linearly: accuracy x integral of |p|; the resolution floor is
	 * an absolute band around every reading: resolution x span. */
	out->u_rated_j = ig->accuracy_frac * ig->abs_energy_j + ig->resolution_w * out->span_s;
	/* Last sample: dE/dt_{n-1} = (p_{n-2} + p_{n-1}) / 2. */
	double sens = ig->sens_w + ig->first_sens_w + 0.5 * fabs(ig->p_prev2_w + ig->p_prev_w);
	out->u_timing_j = ig->timing_quantum_s * sens;
	out->u_j = out->u_rated_j + out->u_timing_j;
	out->mean_power_w = out->energy_j / out->span_s;
	out->mean_power_u_w = out->u_j / out->span_s;
	out->abs_energy_j = ig->abs_energy_j;
	out->sens_first_w = ig->first_signed_w;
	out->sens_last_w = 0.5 * (ig->p_prev2_w + ig->p_prev_w);
	out->sens_int2_w2 = ig->sens2_w2;
}

int ergon_energy_trapezoid(const double *t_s, const double *power_w, size_t n, double accuracy_pct,
			   double resolution_w, double timing_quantum_s, struct ergon_energy *out,
			   struct ergon_err *err)
{
	struct ergon_integrator ig;
	ergon_integrator_init(&ig, accuracy_pct, resolution_w, timing_quantum_s);
	for (size_t i = 0; i < n; i++) {
		int rc = ergon_integrator_add(&ig, t_s[i], power_w[i], err);
		if (rc)
			return rc;
	}
	ergon_integrator_result(&ig, out);
	return 0;
}

int ergon_energy_accumulator(const double *t_s, const double *energy_j, size_t n,
			     double accuracy_pct, double resolution_j, struct ergon_energy *out,
			     struct ergon_err *err)
{
	*out = (struct ergon_energy){0};
	out->n_samples = n;
	out->peak_power_w = NAN;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(t_s[i]) || !isfinite(energy_j[i]))
			return ergon_err_set(err, ERGON_EPARSE,
					     "sample %zu: non-finite time or energy accumulator",
					     i);
		if (i > 0 && !(t_s[i] > t_s[i - 1]))
			return ergon_err_set(err, ERGON_EPARSE,
					     "sample %zu: time %.9f s does not increase", i,
					     t_s[i]);
		if (i > 0 && energy_j[i] < energy_j[i - 1])
			return ergon_err_set(err, ERGON_EMEASURE,
					     "sample %zu: energy accumulator went backwards "
					     "(%.9g J after %.9g J); unwrap it in the driver",
					     i, energy_j[i], energy_j[i - 1]);
	}
	if (n < 2) {
		out->mean_power_w = NAN;
		out->mean_power_u_w = NAN;
		return 0;
	}
	out->span_s = t_s[n - 1] - t_s[0];
	out->energy_j = energy_j[n - 1] - energy_j[0];
	out->abs_energy_j = fabs(out->energy_j);
	out->u_rated_j = accuracy_pct / 100.0 * out->energy_j + 2.0 * resolution_j;
	out->u_j = out->u_rated_j;
	out->mean_power_w = out->energy_j / out->span_s;
	out->mean_power_u_w = out->u_j / out->span_s;
	return 0;
}

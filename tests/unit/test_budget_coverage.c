/* Coverage of the run's energy-per-operation budget (docs/UNCERTAINTY.md,
 * "Coverage"): the synthetic instrument's model run through the figures
 * engines 1,000 times, each time with errors drawn at random within the
 * instrument's rating, must find the true energy per operation inside
 * +-U (k = 2) in 93-97 % of the runs: a budget that covers less is
 * overconfident, one that covers (much) more says less than it knows.
 * Deterministic: every run's errors come from its seed.
 *
 * The scenario, per run:
 * - the device: idle 0.6 W, load 3.0 W, each reading with the device's
 *   own fluctuation (normal, sigma 0.05 W, zero mean); saturated
 *   invocations back to back, each lasting 10 ms x (1 + 0.05 N(0, 1));
 *   the true energy per operation above idle is (3.0 - 0.6) x 10 ms =
 *   24 mJ (the expectation: a run's own mean latency is a sample of it);
 * - the instrument (the synthetic model's rating): gain within +-0.3 %
 *   (uniform), readings rounded to 1 mW, timestamps within +-50 us
 *   (uniform, each), the host clock's rate within +-500 ppm (uniform);
 * - the plan: 2 s idle, 20 windows of 0.5 s, 500 samples per second.
 * No single term dominates (gain u = 0.17 %, the spread over windows
 * about 0.16 %): where one rectangular term does, k = 2 covers all of it,
 * which the last test shows.
 */
#include "ergon/budget.h"
#include "ergon/figures.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/sim.h"
#include "test_support.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 1000
#define FS 500.0
#define IDLE_S 2.0
#define WINDOWS 20
#define WINDOW_S 0.5
#define MU_L 0.010

struct rng {
	uint64_t s;
};

/* splitmix64: a seeded, portable stream. */
static uint64_t next(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double unif(struct rng *r) /* [0, 1) */
{
	return (double)(next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static double sym(struct rng *r, double a) /* uniform in [-a, a) */
{
	return a * (2.0 * unif(r) - 1.0);
}

static double gauss(struct rng *r)
{
	double u1 = unif(r), u2 = unif(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

struct scenario {
	double gain_pct;   /* rated and drawn within */
	double res_w;	   /* reading step */
	double q_s;	   /* timestamp bound */
	double ppm;	   /* host clock bound */
	double noise_w;	   /* device fluctuation per reading (sigma) */
	double lat_rel_sd; /* relative spread of one invocation's duration */
};

/* One seeded run: 1 when the true energy per operation lies within +-U. */
static int one_run(const struct scenario *sc, uint64_t seed, double *rel_u)
{
	struct rng r = {seed};
	double g = sym(&r, sc->gain_pct / 100.0);
	double eps = sym(&r, sc->ppm * 1e-6);
	/* The invocations: back to back from the load's start; a window ends
	 * with the first invocation that ends at or after its nominal edge. */
	size_t cap = (size_t)(WINDOWS * WINDOW_S / (MU_L * 0.5)) + 16;
	double *lat = malloc(cap * sizeof(double));
	double edges[WINDOWS + 1];
	size_t ops[WINDOWS] = {0};
	size_t n_ops = 0;
	double t = IDLE_S;
	edges[0] = IDLE_S * (1 + eps);
	for (int w = 0; w < WINDOWS; w++) {
		double nominal = IDLE_S + (w + 1) * WINDOW_S;
		while (t < nominal && n_ops < cap) {
			double l = MU_L * (1.0 + sc->lat_rel_sd * gauss(&r));
			if (l < 1e-4)
				l = 1e-4;
			t += l;
			lat[n_ops++] = l * (1 + eps); /* as the host clock times it */
			ops[w]++;
		}
		edges[w + 1] = t * (1 + eps);
	}
	double t_end = t;
	/* The readings: every 2 ms, stamped within +-q on the host clock,
	 * the device's power plus its fluctuation, times the gain, rounded. */
	size_t ni = (size_t)(IDLE_S * FS), nl = (size_t)((t_end - IDLE_S) * FS);
	double *ti = malloc(ni * sizeof(double)), *pi = malloc(ni * sizeof(double));
	double *tl = malloc(nl * sizeof(double)), *pl = malloc(nl * sizeof(double));
	for (size_t k = 0; k < ni; k++) {
		double tt = (double)k / FS + sym(&r, sc->q_s);
		ti[k] = tt * (1 + eps);
		double p = (0.6 + sc->noise_w * gauss(&r)) * (1 + g);
		pi[k] = round(p / sc->res_w) * sc->res_w;
	}
	for (size_t k = 0; k < nl; k++) {
		double tt = IDLE_S + (double)(k + 1) / FS + sym(&r, sc->q_s);
		tl[k] = tt * (1 + eps);
		double p = (3.0 + sc->noise_w * gauss(&r)) * (1 + g);
		pl[k] = round(p / sc->res_w) * sc->res_w;
	}
	struct ergon_energy idle, load;
	assert_int_equal(ergon_energy_trapezoid(ti, pi, ni, 0, 0, 0, &idle, NULL), 0);
	assert_int_equal(ergon_energy_trapezoid(tl, pl, nl, 0, 0, 0, &load, NULL), 0);
	double lsum = 0;
	for (size_t k = 0; k < n_ops; k++)
		lsum += lat[k];
	double lmean = lsum / (double)n_ops;
	double dur = edges[WINDOWS] - edges[0];
	struct ergon_eop_input in = {.achieved_ops_per_s = (double)n_ops / dur,
				     .latency_mean_s = lmean,
				     .latency_quantum_s = 1e-9,
				     .load_power_w = load.mean_power_w,
				     .idle_power_w = idle.mean_power_w};
	struct ergon_eop eop;
	assert_int_equal(ergon_energy_per_op(&in, &eop, NULL), 0);
	struct ergon_eop_budget_input bi = {.eop = &eop,
					    .load = &load,
					    .idle = &idle,
					    .n_ops = n_ops,
					    .latency_mean_s = lmean,
					    .load_duration_s = dur,
					    .repeat_se_j = NAN};
	ergon_window_spread_eop(tl, pl, NULL, nl, edges, WINDOWS, ops, idle.mean_power_w,
				&bi.spread_se_total_j, &bi.spread_se_above_j, &bi.spread_windows);
	assert_int_equal(bi.spread_windows, WINDOWS);
	struct ergon_run_um um;
	memset(&um, 0, sizeof(um));
	um.n_pterms = 2;
	snprintf(um.pterm[0].name, sizeof(um.pterm[0].name), "gain");
	um.pterm[0].kind = ERGON_PTERM_GAIN_PCT;
	ergon_rated_set(&um.pterm[0].x, sc->gain_pct, "the scenario's rating");
	snprintf(um.pterm[1].name, sizeof(um.pterm[1].name), "offset");
	um.pterm[1].kind = ERGON_PTERM_OFFSET_W;
	ergon_rated_set(&um.pterm[1].x, 0.0, "the scenario adds none");
	um.offset_constant = 1;
	ergon_rated_set(&um.resolution_w, sc->res_w, "the scenario's step");
	ergon_rated_unknown(&um.resolution_j, "none");
	ergon_rated_set(&um.host_ppm, sc->ppm, "the scenario's clock");
	ergon_rated_unknown(&um.inst_ppm, "host-timed");
	um.timing_quantum_s = sc->q_s;
	um.latency_quantum_s = 1e-9;
	struct ergon_budget b;
	ergon_budget_eop(&bi, &um, 1, &b);
	assert_true(b.complete);
	double truth = (3.0 - 0.6) * MU_L;
	*rel_u = b.U / truth;
	free(lat);
	free(ti);
	free(pi);
	free(tl);
	free(pl);
	return fabs(eop.above_idle_j - truth) <= b.U;
}

static void energy_per_op_covers_95_percent(void **state)
{
	(void)state;
	const struct scenario sc = {.gain_pct = 0.3,
				    .res_w = 1e-3,
				    .q_s = 50e-6,
				    .ppm = 500,
				    .noise_w = 0.05,
				    .lat_rel_sd = 0.05};
	int hits = 0;
	double urel = 0;
	for (int i = 0; i < RUNS; i++) {
		double u;
		hits += one_run(&sc, 0x5eed0000u + (uint64_t)i, &u);
		urel += u;
	}
	double cov = (double)hits / RUNS;
	printf("coverage (synthetic model, energy per operation above idle): %d of %d = %.1f %% "
	       "(mean U %.3f %%)\n",
	       hits, RUNS, 100.0 * cov, 100.0 * urel / RUNS);
	assert_true(cov >= 0.93 && cov <= 0.97);
}

static void one_dominant_rectangle_covers_everything(void **state)
{
	(void)state;
	/* Gain +-2 % dwarfs everything else: the error is (almost) uniform
	 * within +-2 %, U = 2 x 2 % / sqrt(3) = 2.31 % covers it all. */
	const struct scenario sc = {.gain_pct = 2.0,
				    .res_w = 1e-3,
				    .q_s = 50e-6,
				    .ppm = 500,
				    .noise_w = 0.05,
				    .lat_rel_sd = 0.01};
	int hits = 0;
	for (int i = 0; i < 200; i++) {
		double u;
		hits += one_run(&sc, 0xd0e50000u + (uint64_t)i, &u);
	}
	printf("coverage with one dominant rectangular term: %d of 200\n", hits);
	assert_int_equal(hits, 200);
}

/* The virtual bench (sim/): its power build runs a fixed window of 2,000
 * inferences (1 ms each at 5 mA, 1.8 V: 1.2 s, 10.8 mJ) under the gate while
 * its meter, exact, sends 100 us statistics packets. Each seeded run
 * draws the meter's errors within the rating the bench declares (ratings.c
 * "VBENCH"): a gain and an offset per current range, the voltage's gain
 * and offset, the timebase, and each packet's quantization (100 samples of
 * the range's step, independent); the gated engine and the budget then
 * see the packets as they would from a real meter. The truth is the bench's
 * own energy while the gate was high, over the firmware's count. */
static void virtual_bench_energy_per_inference_covers_95_percent(void **state)
{
	(void)state;
	struct ergon_sim_options so;
	ergon_sim_options_default(&so);
	so.iterations = 1200;
	struct ergon_sim_result sr;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sim_run_opts("baseline_power", &so, &sr, &err), 0);
	assert_int_equal(sr.terminal.completed_count, 1200);
	double count = (double)sr.terminal.completed_count;
	double truth = sr.true_window_energy_j / count;
	double elapsed_s = (double)sr.terminal.elapsed_us * 1e-6;
	struct ergon_rating rating;
	assert_int_equal(ergon_rating_for_model("VBENCH", NAN, &rating), 0);
	struct ergon_stats_packet *pk = malloc(sr.n_js * sizeof(*pk));
	assert_non_null(pk);
	int hits = 0;
	double urel = 0;
	for (int run = 0; run < RUNS; run++) {
		struct rng r = {0xbe7c0000u + (uint64_t)run};
		double gi[2], oi[2];
		for (int k = 0; k < 2; k++) {
			gi[k] = sym(&r, rating.range[k].gain_pct.value / 100.0);
			oi[k] = sym(&r, rating.range[k].offset_a.value);
		}
		double gv = sym(&r, rating.v_gain_pct.value / 100.0);
		double ov = sym(&r, rating.v_offset_v.value);
		double eps = sym(&r, rating.timebase_ppm.value * 1e-6);
		for (size_t k = 0; k < sr.n_js; k++) {
			struct ergon_stats_packet q = sr.stats[k];
			int rg = ergon_rating_range_for(&rating, fabs(q.i_avg_a));
			/* The mean of 100 samples, each rounded to the range's step. */
			double step = rating.range[rg].resolution_a;
			double qn = step / sqrt(12.0) / 10.0 * gauss(&r);
			double i = q.i_avg_a * (1 + gi[rg]) + oi[rg] + qn;
			double v = q.v_avg_v * (1 + gv) + ov;
			q.i_avg_a = q.i_min_a = q.i_max_a = i;
			q.v_avg_v = q.v_min_v = q.v_max_v = v;
			q.p_avg_w = q.p_min_w = q.p_max_w = i * v;
			q.t_start_s *= 1 + eps;
			q.t_end_s *= 1 + eps;
			/* A meter without accumulators: the energy is the packets'. */
			q.fields &= ~(uint32_t)ERGON_PKT_ACCUM;
			pk[k] = q;
		}
		struct ergon_gated_config gc = {
		    .min_window_s = 1.0, .stats_rate_hz = 1.0 / sr.js_period_s, .rating = &rating};
		struct ergon_gated *g = NULL;
		const struct ergon_gated_result *res = NULL;
		assert_int_equal(ergon_gated_new(&gc, &g, &err), 0);
		assert_int_equal(ergon_gated_push_packets(g, pk, sr.n_js, &err), 0);
		assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
		assert_int_equal(res->window_count, 1);
		struct ergon_budget eb, ib;
		ergon_gated_budget(res, 0, ERGON_PF_ENERGY, &rating, &eb);
		ergon_epi_budget(&eb, sr.terminal.completed_count,
				 res->gated.duration_s - elapsed_s, res->gated.avg_power_w,
				 "the firmware's window against the gate", &ib);
		assert_true(ib.complete);
		double epi = res->gated.energy_j / count;
		hits += fabs(epi - truth) <= ib.U;
		urel += ib.U / truth;
		ergon_gated_free(g);
	}
	free(pk);
	ergon_sim_result_cleanup(&sr);
	double cov = (double)hits / RUNS;
	printf("coverage (virtual bench, energy per inference): %d of %d = %.1f %% (mean U %.3f "
	       "%%)\n",
	       hits, RUNS, 100.0 * cov, 100.0 * urel / RUNS);
	assert_true(cov >= 0.93 && cov <= 0.97);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(energy_per_op_covers_95_percent),
	    cmocka_unit_test(one_dominant_rectangle_covers_everything),
	    cmocka_unit_test(virtual_bench_energy_per_inference_covers_95_percent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

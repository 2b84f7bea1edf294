/* Layer markers on the virtual bench (docs/METHOD.md, "Energy per
 * layer"): the firmware's marker line, the bench's truth per layer, the
 * raw meter, the three marker faults, and the engine's layers against the
 * truth for the three simulated layers and the four shared MLPerf Tiny
 * models.
 *
 * By hand, from the bench's constants (sim.h, test_sim_scenarios.c): one
 * inference is 48000 + 24000 + 24000 cycles at 96 MHz = 500 + 250 + 250 us
 * at 5 mA, 1.8 V: 4.5 + 2.25 + 2.25 uJ. Each marker toggle costs 250 ns of
 * core time after the line moves, at the current of the moment (5 mA in an
 * inference: 2.25 nJ; 1 mA after the last: 0.45 nJ). So the layers are
 * 4.50225, 2.25225, 2.25225 uJ and the marker costs 3 x 2.25 nJ = 6.75 nJ
 * per inference; 20 inferences show 60 + 1 toggles.
 */
#include "ergon/ert_tfl.h"
#include "ergon/fileio.h"
#include "ergon/layer_energy.h"
#include "ergon/sim.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ergon_sim_result run_opts(const char *scenario, const struct ergon_sim_options *o)
{
	struct ergon_sim_result r;
	struct ergon_err err = {0};
	int rc = ergon_sim_run_opts(scenario, o, &r, &err);
	if (rc != 0)
		fail_msg("%s: %s", scenario, err.msg);
	return r;
}

static void marked_options(struct ergon_sim_options *o)
{
	ergon_sim_options_default(o);
	o->marker_pin = ERGON_SIM_MARKER_PIN;
	o->raw_rate_hz = 100000.0;
}

/* The engine over the bench's raw meter. */
static const struct ergon_layers_result *fold(struct ergon_layers **L,
					      const struct ergon_sim_result *r, size_t segments,
					      uint64_t inferences)
{
	struct ergon_layers_config c = {.sample_rate_hz = r->raw_rate_hz,
					.gate_bit = 0,
					.marker_bit = 1,
					.segments = segments,
					.inferences = inferences};
	struct ergon_err err = {0};
	assert_int_equal(ergon_layers_new(&c, L, &err), 0);
	if (ergon_layers_push(*L, r->raw_current_a, NULL, r->rail_v, r->raw_digital, r->n_raw,
			      &err) != 0)
		fail_msg("%s", err.msg);
	const struct ergon_layers_result *res = NULL;
	assert_int_equal(ergon_layers_finish(*L, &res, &err), 0);
	return res;
}

/* The truth of segment m: the mean of the bench's intervals m, m + S, ... */
static double truth_of(const struct ergon_sim_result *r, size_t S, size_t first, size_t last)
{
	double e = 0;
	size_t n = r->n_marks / S;
	for (size_t k = 0; k < n; k++)
		for (size_t m = first; m <= last; m++)
			e += r->marks[k * S + m].energy_j;
	return e / (double)n;
}

static void truth_and_overhead(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	marked_options(&o);
	struct ergon_sim_result r = run_opts("baseline_power", &o);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.marker_toggles, 61);
	assert_int_equal(r.n_marks, 60);
	const double want[3] = {4.50225e-6, 2.25225e-6, 2.25225e-6};
	for (size_t i = 0; i < r.n_marks; i++)
		assert_true(fabs(r.marks[i].energy_j - want[i % 3]) < 1e-15);
	/* The raw meter: 100 kSPS from power-on, D0 the gate, D1 the marker. */
	assert_true(fabs(r.raw_rate_hz - 100000.0) < 1e-9);
	assert_true(r.n_raw > 0 && r.raw_digital != NULL);
	size_t gate_rises = 0, marker_edges = 0;
	for (size_t k = 1; k < r.n_raw; k++) {
		gate_rises += (r.raw_digital[k] & 1) && !(r.raw_digital[k - 1] & 1);
		marker_edges += ((r.raw_digital[k] ^ r.raw_digital[k - 1]) & 2) != 0;
	}
	assert_int_equal(gate_rises, 1);
	assert_int_equal(marker_edges, 61);
	/* Marked against unmarked: 6.75 nJ per inference in the window, plus
	 * the end toggle (0.45 nJ) once. */
	struct ergon_sim_result u = run_opts("baseline_power", NULL);
	assert_true(fabs(u.true_window_energy_j - 180e-6) < 1e-12);
	assert_true(fabs(r.true_window_energy_j - u.true_window_energy_j -
			 (20 * 6.75e-9 + 0.45e-9)) < 1e-14);
	assert_int_equal(u.marker_toggles, 0);
	assert_int_equal(u.n_raw, 0);
	ergon_sim_result_cleanup(&u);
	ergon_sim_result_cleanup(&r);
}

static void three_layers_within_their_uncertainty(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	marked_options(&o);
	struct ergon_sim_result r = run_opts("baseline_power", &o);
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = fold(&L, &r, 3, 20);
	assert_int_equal(res->inferences_used, 20);
	assert_int_equal(res->n_layers, 3);
	const double want[3] = {4.50225e-6, 2.25225e-6, 2.25225e-6};
	for (size_t i = 0; i < 3; i++) {
		const struct ergon_layer_figures *f = &res->layers[i];
		assert_true(fabs(f->energy_mean_j - want[i]) <= f->budget.U_known);
		/* And the bound is not vacuous: under 5 % of the layer. */
		assert_true(f->budget.U_known < 0.05 * want[i]);
	}
	/* The sum against the gate's energy per inference. */
	struct ergon_issue_list l = {0};
	assert_int_equal(ergon_layers_check_sum(res, r.true_window_energy_j / 20, NULL, &l), 0);
	ergon_issue_list_cleanup(&l);
	ergon_layers_free(L);
	ergon_sim_result_cleanup(&r);
}

static void fault_missing_edge(void **state)
{
	(void)state;
	struct ergon_sim_result r = run_opts("marker_missing_edge", NULL);
	/* The firmware toggled 61 times; the meter saw 60. */
	assert_int_equal(r.marker_toggles, 61);
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = fold(&L, &r, 3, 20);
	assert_int_equal(res->edges, 60);
	assert_int_equal(res->inferences_used, 19);
	assert_int_equal(res->inferences_dropped, 1);
	assert_int_equal(res->first_dropped, 5); /* toggles 16..18 are inference 5's */
	assert_int_equal(res->first_dropped_edges, 2);
	assert_true(ergon_issue_list_has(&res->issues, "power.layers_inferences_dropped"));
	assert_true(fabs(res->layers[1].energy_mean_j - 2.25225e-6) <=
		    res->layers[1].budget.U_known);
	ergon_layers_free(L);
	ergon_sim_result_cleanup(&r);
}

static void fault_extra_edge(void **state)
{
	(void)state;
	struct ergon_sim_result r = run_opts("marker_extra_edge", NULL);
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = fold(&L, &r, 3, 20);
	assert_int_equal(res->edges, 62);
	assert_int_equal(res->inferences_used, 19);
	assert_int_equal(res->inferences_dropped, 1);
	assert_int_equal(res->first_dropped, 8); /* toggle 25 starts inference 8 */
	assert_int_equal(res->first_dropped_edges, 4);
	assert_true(ergon_issue_list_has(&res->issues, "power.layers_inferences_dropped"));
	ergon_layers_free(L);
	ergon_sim_result_cleanup(&r);
}

static void fault_short_layer(void **state)
{
	(void)state;
	struct ergon_sim_result r = run_opts("marker_short_layer", NULL);
	/* Layer 2 is 2400 cycles = 25 us (+ the toggle's 0.25 us): 2.5
	 * samples at 100 kSPS, under the minimum of 10; layer 1 has the rest,
	 * 45600 cycles. */
	assert_true(fabs(r.marks[2].t_end_s - r.marks[2].t_start_s - 25.25e-6) < 1e-12);
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = fold(&L, &r, 3, 20);
	assert_int_equal(res->inferences_used, 20);
	assert_int_equal(res->n_layers, 2);
	assert_int_equal(res->layers[1].first, 1);
	assert_int_equal(res->layers[1].last, 2);
	assert_true(ergon_issue_list_has(&res->issues, "power.layers_unresolved"));
	/* Layers 1 and 2 together: 48000 cycles = 500 us at 9 mW, 4.5 uJ, and
	 * two toggles of 2.25 nJ. */
	double want = 4.5e-6 + 2 * 2.25e-9;
	assert_true(fabs(truth_of(&r, 3, 1, 2) - want) < 1e-15);
	assert_true(fabs(res->layers[1].energy_mean_j - want) <= res->layers[1].budget.U_known);
	ergon_layers_free(L);
	ergon_sim_result_cleanup(&r);
}

/* One MLPerf Tiny model: the marker plan from the bench's documented cost
 * model (sim.h: 2 cycles per MAC + 1 per output byte + 500, at 96 MHz),
 * a marked run, and every resolved layer against the truth. */
static void one_model(const char *file)
{
	const char *shared = getenv("ERGON_SHARED_DIR");
	assert_non_null(shared);
	char *path = ts_strf("%s/fixtures/models/%s", shared, file);
	char *bytes = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_file_read_all(path, (size_t)16 << 20, &bytes, &len, &err), 0);
	static struct ert_tfl_model m;
	struct ert_tfl_err te = {0};
	assert_int_equal(ert_tfl_load(&m, bytes, len, &te), 0);
	double *dur = calloc(m.n_ops, sizeof *dur);
	size_t *first = calloc(m.n_ops, sizeof *first);
	assert_non_null(dur);
	assert_non_null(first);
	for (unsigned i = 0; i < m.n_ops; i++)
		dur[i] = (2.0 * (double)m.ops[i].macs + (double)m.tensors[m.ops[i].out].bytes +
			  500.0) / 96e6;
	struct ergon_sim_options o;
	marked_options(&o);
	o.model_path = path;
	size_t S = 0;
	ergon_layers_plan(dur, m.n_ops, o.raw_rate_hz, 0, o.marker_mask, first, &S);
	assert_true(S >= 1);
	struct ergon_sim_result r = run_opts("baseline_power", &o);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.marker_toggles, 20 * S + 1);
	struct ergon_layers *L = NULL;
	const struct ergon_layers_result *res = fold(&L, &r, S, 20);
	assert_int_equal(res->inferences_used, 20);
	size_t within = 0, worst_i = 0;
	double worst = 0;
	for (size_t u = 0; u < res->n_layers; u++) {
		const struct ergon_layer_figures *f = &res->layers[u];
		double t = truth_of(&r, S, f->first, f->last);
		double dev = fabs(f->energy_mean_j - t) / f->budget.U_known;
		within += dev <= 1.0;
		if (dev > worst) {
			worst = dev;
			worst_i = u;
		}
	}
	/* The unresolved layers: the ones the plan left unmarked. */
	size_t unresolved = m.n_ops - S;
	for (size_t u = 0; u < res->n_layers; u++)
		unresolved += res->layers[u].last - res->layers[u].first;
	struct ergon_issue_list l = {0};
	int mismatch = ergon_layers_check_sum(res, r.true_window_energy_j / 20, NULL, &l);
	print_message("%s: %u operators, %zu marked segments, %zu resolved layers, %zu "
		      "unmarked or merged operators; %zu of %zu within U of the truth (worst "
		      "%.3f U, layer %zu); sum %.6g J vs gate %.6g J per inference\n",
		      file, m.n_ops, S, res->n_layers, unresolved, within, res->n_layers, worst,
		      worst_i, res->sum_j, r.true_window_energy_j / 20);
	assert_int_equal(within, res->n_layers);
	assert_int_equal(mismatch, 0);
	/* The marker's cost, a marked against an unmarked run: S toggles of
	 * 250 ns at 5 mA (2.25 nJ) per inference, and the end toggle's
	 * 0.45 nJ once over the 20. */
	struct ergon_sim_options uo = o;
	uo.marker_pin = 0;
	uo.raw_rate_hz = 0;
	struct ergon_sim_result ur = run_opts("baseline_power", &uo);
	double overhead = (r.true_window_energy_j - ur.true_window_energy_j) / 20;
	print_message("%s: marker overhead %.4g J per inference (%.3g %%)\n", file, overhead,
		      100 * overhead / (ur.true_window_energy_j / 20));
	assert_true(fabs(overhead - ((double)S * 2.25e-9 + 0.45e-9 / 20)) < 1e-15);
	ergon_sim_result_cleanup(&ur);
	ergon_issue_list_cleanup(&l);
	ergon_layers_free(L);
	ergon_sim_result_cleanup(&r);
	free(dur);
	free(first);
	free(bytes);
	free(path);
}

static void mlperf_ad(void **state)
{
	(void)state;
	one_model("ad01_int8.tflite");
}

static void mlperf_kws(void **state)
{
	(void)state;
	one_model("kws_ref_model.tflite");
}

static void mlperf_ic(void **state)
{
	(void)state;
	one_model("pretrainedResnet_quant.tflite");
}

static void mlperf_vww(void **state)
{
	(void)state;
	one_model("vww_96_int8.tflite");
}

static void op_currents(void **state)
{
	(void)state;
	/* The documented table (sim.h). */
	assert_true(ergon_sim_op_current_a("CONV_2D") == 0.006);
	assert_true(ergon_sim_op_current_a("DEPTHWISE_CONV_2D") == 0.004);
	assert_true(ergon_sim_op_current_a("FULLY_CONNECTED") == 0.005);
	assert_true(ergon_sim_op_current_a("RESHAPE") == 0.003);
	assert_true(ergon_sim_op_current_a(NULL) == 0.003);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(op_currents),
	    cmocka_unit_test(truth_and_overhead),
	    cmocka_unit_test(three_layers_within_their_uncertainty),
	    cmocka_unit_test(fault_missing_edge),
	    cmocka_unit_test(fault_extra_edge),
	    cmocka_unit_test(fault_short_layer),
	    cmocka_unit_test(mlperf_ad),
	    cmocka_unit_test(mlperf_kws),
	    cmocka_unit_test(mlperf_ic),
	    cmocka_unit_test(mlperf_vww),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* One budget per instrument kind of the gated engine and the on-device
 * record, against values worked out by hand from the ratings' stated
 * figures (docs/UNCERTAINTY.md): a Joulescope JS110 on its 2 A range, the
 * virtual bench's meter across its two ranges, an on-board INA228 record. */
#include "ergon/budget.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "test_support.h"

#include <math.h>
#include <string.h>

#define NEAR(a, b) \
	assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * (1e-12 + fabs((double)(b))))

static const struct ergon_budget_term *term(const struct ergon_budget *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->term[i].name, name) == 0)
			return &b->term[i];
	fail_msg("no term %s", name);
	return NULL;
}

/* n packets of span_s at i (A) and v (V), gate high on packets
 * [on, off), sample ids step ids_per_packet. */
static void packets(struct ergon_stats_packet *p, size_t n, double span_s, const double *i_a,
		    double v, size_t on, size_t off, uint64_t ids_per_packet)
{
	for (size_t k = 0; k < n; k++) {
		p[k] = (struct ergon_stats_packet){0};
		p[k].t_start_s = (double)k * span_s;
		p[k].t_end_s = (double)(k + 1) * span_s;
		p[k].i_avg_a = p[k].i_min_a = p[k].i_max_a = i_a[k];
		p[k].v_avg_v = p[k].v_min_v = p[k].v_max_v = v;
		p[k].p_avg_w = p[k].p_min_w = p[k].p_max_w = i_a[k] * v;
		p[k].sample_id = (uint64_t)k * ids_per_packet;
		p[k].digital = k >= on && k < off ? 1u : 0u;
		p[k].fields =
		    ERGON_PKT_VOLTAGE | ERGON_PKT_POWER | ERGON_PKT_DIGITAL | ERGON_PKT_MINMAX;
	}
}

static const struct ergon_gated_result *run_gated(struct ergon_gated **g,
						  const struct ergon_stats_packet *p, size_t n,
						  double rate_hz, const struct ergon_rating *r)
{
	struct ergon_gated_config c = {.min_window_s = 1.0, .stats_rate_hz = rate_hz, .rating = r};
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_new(&c, g, NULL), 0);
	assert_int_equal(ergon_gated_push_packets(*g, p, n, NULL), 0);
	assert_int_equal(ergon_gated_finish(*g, &res, NULL), 0);
	return res;
}

static void joulescope_js110_two_amp_range(void **state)
{
	(void)state;
	/* 3000 packets of 1 ms at 0.5 A, 5 V (2.5 W); the gate is high on
	 * packets 500..2499: 2 s, E = 5 J, Q = 1 C. 0.5 A needs the 2 A range.
	 * The JS110's 2 A range: gain 0.3 %, offset 1.5 mA (User's Guide p. 12);
	 * the user states the rest: voltage 0.1 % and 1 mV, timebase 20 ppm,
	 * step 1 uA.
	 *   current gain   0.3 % x 5 J          = 0.015 J
	 *   current offset 1.5 mA x 5 V x 2 s   = 0.015 J
	 *   voltage gain   0.1 % x 5 J          = 0.005 J
	 *   voltage offset 1 mV x 1 C           = 0.001 J
	 *   quantization   2000 samples (ids) per packet: per packet
	 *     (5 V x 1 ms)^2 / 2000, 2000 packets: sum 2.5e-5 J^2/A^2;
	 *     x (1 uA)^2 -> sqrt = 5e-9 J, u = that / sqrt(12)
	 *   timebase       20 ppm x 5 J         = 1e-4 J
	 *   gate edges     two, each 2.5 W x 1 ms: sqrt(2) x 2.5e-3 J
	 * all rectangular but the quantization (u = limit / sqrt(12)). */
	struct ergon_rating r;
	assert_int_equal(ergon_rating_for_model("JS110", NAN, &r), 0);
	assert_int_equal(ergon_rating_override(&r, "v_gain_pct", "0.1", "test", NULL), 0);
	assert_int_equal(ergon_rating_override(&r, "v_offset_v", "0.001", "test", NULL), 0);
	assert_int_equal(ergon_rating_override(&r, "timebase_ppm", "20", "test", NULL), 0);
	assert_int_equal(ergon_rating_override(&r, "i_step_a", "1e-6", "test", NULL), 0);
	static struct ergon_stats_packet p[3000];
	static double ia[3000];
	for (size_t k = 0; k < 3000; k++)
		ia[k] = 0.5;
	packets(p, 3000, 1e-3, ia, 5.0, 500, 2500, 2000);
	struct ergon_gated *g = NULL;
	const struct ergon_gated_result *res = run_gated(&g, p, 3000, 1000, &r);
	assert_int_equal(res->window_count, 1);
	NEAR(res->gated.energy_j, 5.0);
	struct ergon_budget b;
	ergon_gated_budget(res, 0, ERGON_PF_ENERGY, &r, &b);
	NEAR(term(&b, "current gain")->limit, 0.015);
	assert_non_null(strstr(term(&b, "current gain")->source, "2 A range"));
	NEAR(term(&b, "current offset")->limit, 0.015);
	NEAR(term(&b, "voltage gain")->limit, 0.005);
	NEAR(term(&b, "voltage offset")->limit, 0.001);
	NEAR(term(&b, "quantization")->limit, 5e-9);
	NEAR(term(&b, "quantization")->divisor, sqrt(12.0));
	NEAR(term(&b, "timebase")->limit, 1e-4);
	NEAR(term(&b, "gate edges")->limit, sqrt(2.0) * 2.5e-3);
	double uc2 =
	    (0.015 * 0.015 * 2 + 0.005 * 0.005 + 1e-6 + 1e-8 + 2 * 6.25e-6) / 3.0 + 25e-18 / 12.0;
	NEAR(b.u_c, sqrt(uc2));
	NEAR(b.U, 2 * sqrt(uc2));
	assert_true(b.complete);
	/* Energy per inference over 1000 inferences whose firmware window
	 * was 1.999 s: the observer term is 1 ms at the mean 2.5 W / 1000. */
	struct ergon_budget ib;
	ergon_epi_budget(&b, 1000, res->gated.duration_s - 1.999, res->gated.avg_power_w, "test",
			 &ib);
	NEAR(ib.value, 5e-3);
	NEAR(term(&ib, "current gain")->limit, 1.5e-5);
	NEAR(term(&ib, "observer window")->limit, 2.5e-3 / 1000);
	/* Charge: gain 0.3 % x 1 C, offset 1.5 mA x 2 s, no voltage terms. */
	ergon_gated_budget(res, 0, ERGON_PF_CHARGE, &r, &b);
	NEAR(b.value, 1.0);
	NEAR(term(&b, "current gain")->limit, 3e-3);
	NEAR(term(&b, "current offset")->limit, 3e-3);
	/* Mean power: energy / 2 s; the timebase cancels. */
	ergon_gated_budget(res, 0, ERGON_PF_POWER, &r, &b);
	NEAR(b.value, 2.5);
	NEAR(term(&b, "current gain")->limit, 0.0075);
	NEAR(term(&b, "timebase")->limit, 0.0);
	ergon_gated_free(g);

	/* Without the user's figures: the voltage's gain is unknown, the
	 * budget is incomplete and says which term. */
	assert_int_equal(ergon_rating_for_model("JS110", NAN, &r), 0);
	res = run_gated(&g, p, 3000, 1000, &r);
	ergon_gated_budget(res, 0, ERGON_PF_ENERGY, &r, &b);
	assert_false(b.complete);
	assert_true(isnan(b.U));
	assert_false(term(&b, "voltage gain")->known);
	ergon_gated_free(g);

	/* 50 mA is in the 180 mA range, whose figures ergon does not hold:
	 * unknown, whatever the voltage. */
	for (size_t k = 0; k < 3000; k++)
		ia[k] = 0.05;
	packets(p, 3000, 1e-3, ia, 5.0, 500, 2500, 2000);
	res = run_gated(&g, p, 3000, 1000, &r);
	ergon_gated_budget(res, 0, ERGON_PF_ENERGY, &r, &b);
	assert_false(term(&b, "current gain")->known);
	assert_non_null(strstr(term(&b, "current gain")->source, "range 180 mA"));
	ergon_gated_free(g);
}

static void virtual_bench_meter_two_ranges(void **state)
{
	(void)state;
	/* 4000 packets of 1 ms at 1.8 V; the gate on packets 1000..2999 (2 s).
	 * Inside it the current alternates by 500 packets: 1 mA, 5 mA, 1 mA,
	 * 5 mA. The bench's ranges: "1.8 mA" (gain 0.2 %, 2 uA, step 50 nA)
	 * and "18 mA" (0.2 %, 10 uA, 500 nA); voltage 0.2 %, 1 mV; 50 ppm.
	 * A 1 mA packet right after a 5 mA one is still in the 18 mA range
	 * (the previous packet's peak counts): inside the gate, one (2000).
	 *   in the 1.8 mA range: 999 packets, 1 mA: E 999 x 1.8e-6 J, t 0.999 s
	 *   in the 18 mA range: 1001 packets: 1000 at 5 mA, 1 at 1 mA
	 *   current gain   0.2 % x (E_lo + E_hi)
	 *   current offset 2 uA x 1.8 V x 0.999 s + 10 uA x 1.8 V x 1.001 s */
	struct ergon_rating r;
	assert_int_equal(ergon_rating_for_model("VBENCH", NAN, &r), 0);
	static struct ergon_stats_packet p[4000];
	static double ia[4000];
	for (size_t k = 0; k < 4000; k++)
		ia[k] = k >= 1000 && k < 3000 && ((k - 1000) / 500) % 2 == 1 ? 5e-3 : 1e-3;
	packets(p, 4000, 1e-3, ia, 1.8, 1000, 3000, 1);
	struct ergon_gated *g = NULL;
	const struct ergon_gated_result *res = run_gated(&g, p, 4000, 1000, &r);
	assert_int_equal(res->window_count, 1);
	double e_lo = 999 * 1e-3 * 1.8 * 1e-3, e_hi = (1000 * 5e-3 + 1 * 1e-3) * 1.8 * 1e-3;
	NEAR(res->gated.energy_j, e_lo + e_hi);
	struct ergon_budget b;
	ergon_gated_budget(res, 0, ERGON_PF_ENERGY, &r, &b);
	NEAR(term(&b, "current gain")->limit, 0.002 * (e_lo + e_hi));
	NEAR(term(&b, "current offset")->limit, 2e-6 * 1.8 * 0.999 + 10e-6 * 1.8 * 1.001);
	assert_non_null(strstr(term(&b, "current offset")->source, "1.8 mA, 18 mA"));
	NEAR(term(&b, "voltage gain")->limit, 0.002 * (e_lo + e_hi));
	/* voltage offset: 1 mV x Q, Q = 999 x 1 uC + 1001 packets' charge */
	double q = 999 * 1e-6 + (1000 * 5e-3 + 1 * 1e-3) * 1e-3;
	NEAR(term(&b, "voltage offset")->limit, 1e-3 * q);
	/* quantization: one sample per packet (no sample ids), (1.8 V x 1 ms)^2
	 * each, times the range's step squared. */
	double q2 =
	    50e-9 * 50e-9 * 999 * (1.8e-3 * 1.8e-3) + 500e-9 * 500e-9 * 1001 * (1.8e-3 * 1.8e-3);
	NEAR(term(&b, "quantization")->limit, sqrt(q2));
	NEAR(term(&b, "timebase")->limit, 50e-6 * (e_lo + e_hi));
	/* The edges: the first packet (1 mA) and the last (5 mA), 1 ms each. */
	NEAR(term(&b, "gate edges")->limit, sqrt(pow(1.8e-3 * 1e-3, 2) + pow(9e-3 * 1e-3, 2)));
	assert_true(b.complete);
	ergon_gated_free(g);
}

static void ina228_on_device_record(void **state)
{
	(void)state;
	/* The record: 9 mJ, 5 mC over 5 s at a 1.8 V bus; shunt 0.5 ohm; the
	 * user states the shunt (0.1 %, 25 ppm/C over 20 C) and the VBUS
	 * offset (5 mV); ENERGY step 1 uJ, CHARGE step 1 uC, conversion cycle
	 * 150 us.
	 *   current gain   0.05 % x 9 mJ       = 4.5e-6 J
	 *   current offset 1 uV / 0.5 ohm x 1.8 V x 5 s = 1.8e-5 J
	 *   voltage gain   0.05 % x 9 mJ       = 4.5e-6 J
	 *   voltage offset 5 mV x 5 mC         = 2.5e-5 J
	 *   shunt tolerance 0.1 % x 9 mJ       = 9e-6 J
	 *   shunt tempco   25e-6 x 20 x 9 mJ   = 4.5e-6 J
	 *   resolution     1 uJ
	 *   timebase       0.5 % x 9 mJ        = 4.5e-5 J (the oscillator)
	 *   window edges   sqrt(2) x 150 us x 1.8 mW */
	struct ergon_rating r;
	assert_int_equal(ergon_rating_for_model("INA228", 0.5, &r), 0);
	assert_int_equal(ergon_rating_override(&r, "shunt_tolerance_pct", "0.1", "test", NULL), 0);
	assert_int_equal(ergon_rating_override(&r, "shunt_tempco_ppm_per_c", "25", "test", NULL),
			 0);
	assert_int_equal(ergon_rating_override(&r, "shunt_temp_span_c", "20", "test", NULL), 0);
	assert_int_equal(ergon_rating_override(&r, "v_offset_v", "0.005", "test", NULL), 0);
	struct ergon_power_terminal t = {.status = ERGON_TERMINAL_OK,
					 .have_energy = 1,
					 .have_charge = 1,
					 .energy_nj = 9e6,
					 .charge_nc = 5e6,
					 .duration_us = 5000000,
					 .bus_voltage_uv = 1.8e6};
	struct ergon_budget b;
	ergon_internal_budget(&t, &r, 1e-6, 1e-6, 150e-6, ERGON_PF_ENERGY, &b);
	NEAR(b.value, 9e-3);
	NEAR(term(&b, "current gain")->limit, 4.5e-6);
	NEAR(term(&b, "current offset")->limit, 1.8e-5);
	NEAR(term(&b, "voltage gain")->limit, 4.5e-6);
	NEAR(term(&b, "voltage offset")->limit, 2.5e-5);
	NEAR(term(&b, "shunt tolerance")->limit, 9e-6);
	NEAR(term(&b, "shunt tempco")->limit, 4.5e-6);
	NEAR(term(&b, "resolution")->limit, 1e-6);
	NEAR(term(&b, "timebase")->limit, 4.5e-5);
	NEAR(term(&b, "window edges")->limit, sqrt(2.0) * 150e-6 * 1.8e-3);
	double l[] = {4.5e-6, 1.8e-5, 4.5e-6,
		      2.5e-5, 9e-6,   4.5e-6,
		      1e-6,   4.5e-5, sqrt(2.0) * 150e-6 * 1.8e-3};
	double s2 = 0;
	for (size_t k = 0; k < sizeof l / sizeof l[0]; k++)
		s2 += l[k] * l[k] / 3.0;
	NEAR(b.U, 2 * sqrt(s2));
	assert_true(b.complete);
	assert_string_equal(b.term[b.dominant].name, "timebase");
	/* The mean power divides by the firmware's clock: unknown. */
	ergon_internal_budget(&t, &r, 1e-6, 1e-6, 150e-6, ERGON_PF_POWER, &b);
	assert_false(b.complete);
	assert_string_equal(b.term[b.dominant].name, "firmware clock");
	/* Without the shunt's figures (the config left unset): unknown. */
	assert_int_equal(ergon_rating_for_model("INA228", 0.5, &r), 0);
	ergon_internal_budget(&t, &r, 1e-6, 1e-6, 150e-6, ERGON_PF_ENERGY, &b);
	assert_false(b.complete);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(joulescope_js110_two_amp_range),
	    cmocka_unit_test(virtual_bench_meter_two_ranges),
	    cmocka_unit_test(ina228_on_device_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

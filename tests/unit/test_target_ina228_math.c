/* INA228 calibration math (target/src/ina228_math.c, shared by the target
 * and the host planner) against the worked examples of issue 6 and values
 * computed by hand from the datasheet formulas (TI SBOSA20 8.1.2):
 *   CURRENT_LSB = Imax / 2^19
 *   SHUNT_CAL   = 13107.2e6 x CURRENT_LSB x R  (x4 when ADCRANGE = 1)
 *               = 25000 x R x Imax             (x4 when ADCRANGE = 1)
 */
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"
#include "test_support.h"

#include <math.h>
#include <stdint.h>

static void half_ohm_at_20ma_is_10mv_burden(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	assert_int_equal(ert_ina228_plan(0.5, 0.020, &p), ERT_OK);
	/* 0.5 ohm x 20 mA = 10 mV: fits +-40.96 mV, so the fine range. */
	assert_true(fabs(p.burden_v - 0.010) < 1e-12);
	assert_int_equal(p.adcrange, 1);
	/* 10 mV / 1.8 V = 0.5556 %, which the issue rounds to 0.6 %. */
	double pct = 100.0 * ert_ina228_burden_fraction(&p, 1.8);
	assert_true(fabs(pct - 0.5555555) < 1e-6);
	assert_int_equal((int)(pct * 10.0 + 0.5), 6);
	/* 25000 x 0.5 x 0.02 = 250, x4 = 1000. */
	assert_int_equal(p.shunt_cal, 1000);
	/* 0.02 / 524288 = 3.814697265625e-8 A (exact in binary). */
	assert_true(p.current_lsb_a == 3.814697265625e-8);
	/* energy LSB 16 x 3.2 x CURRENT_LSB = 1.953125e-6 J: 1000 counts is
	 * 1953125 nJ; charge LSB = CURRENT_LSB: 1e6 counts = 38146972.65625 nC. */
	assert_int_equal(ert_ina228_energy_nj(&p, 1000), 1953125);
	assert_int_equal(ert_ina228_charge_nc(&p, 1000000), 38146973);
	assert_true(fabs(p.power_lsb_w - 1.220703125e-7) < 1e-18);
}

static void fifteen_milliohm_at_20ma_is_300uv(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	assert_int_equal(ert_ina228_plan(0.015, 0.020, &p), ERT_OK);
	assert_true(fabs(p.burden_v - 300e-6) < 1e-12);
	assert_int_equal(p.adcrange, 1);
	/* 25000 x 0.015 x 0.02 = 7.5, x4 = 30. */
	assert_int_equal(p.shunt_cal, 30);
}

static void point82_ohm_at_50ma_takes_wide_range(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	assert_int_equal(ert_ina228_plan(0.82, 0.050, &p), ERT_OK);
	/* 41.0 mV > 40.96 mV: the +-163.84 mV range, no x4. */
	assert_true(fabs(p.burden_v - 0.041) < 1e-12);
	assert_int_equal(p.adcrange, 0);
	/* 25000 x 0.82 x 0.05 = 1025. */
	assert_int_equal(p.shunt_cal, 1025);
}

/* SHUNT_CAL rounding: 15 mOhm at 7 mA. By hand: exact SHUNT_CAL = 25000 x
 * 0.015 x 0.007 x 4 = 10.5 (105 uV: the fine range), the register holds
 * 11, so the chip's CURRENT_LSB is 11 / (13107.2e6 x 0.015 x 4) =
 * 11 / 786432000 = 1.3987223307291667e-8 A, not the nominal
 * 0.007 / 2^19 = 1.33514404296875e-8 A (+4.7619 %, 0.5 / 10.5). 1000
 * ENERGY counts are 1000 x 51.2 x 1.3987223307e-8 J = 716145.83 nJ
 * (the nominal LSB would say 683593.75 nJ). */
static void shunt_cal_rounding_uses_the_effective_lsb(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	assert_int_equal(ert_ina228_plan(0.015, 0.007, &p), ERT_OK);
	assert_int_equal(p.adcrange, 1);
	assert_int_equal(p.shunt_cal, 11);
	assert_true(fabs(p.current_lsb_nominal_a - 1.33514404296875e-8) < 1e-22);
	assert_true(fabs(p.current_lsb_a - 1.3987223307291667e-8) < 1e-20);
	assert_true(fabs(p.shunt_cal_rounding - 0.5 / 10.5) < 1e-12);
	assert_int_equal(ert_ina228_energy_nj(&p, 1000), 716146);
	/* charge LSB = CURRENT_LSB: 1e6 counts = 1e6 x 1.39872233e-8 C = 13987223 nC. */
	assert_int_equal(ert_ina228_charge_nc(&p, 1000000), 13987223);
	/* An exact SHUNT_CAL has no rounding (0.5 ohm, 20 mA: 1000). */
	assert_int_equal(ert_ina228_plan(0.5, 0.020, &p), ERT_OK);
	assert_true(p.shunt_cal_rounding == 0.0);
	assert_true(p.current_lsb_a == p.current_lsb_nominal_a);
}

static void refuses_what_the_chip_cannot_do(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	/* 10 ohm x 20 mA = 200 mV exceeds even the wide range. */
	assert_int_equal(ert_ina228_plan(10.0, 0.020, &p), ERT_E_CONFIG);
	assert_int_equal(ert_ina228_plan(0.0, 0.020, &p), ERT_E_CONFIG);
	assert_int_equal(ert_ina228_plan(0.5, -1.0, &p), ERT_E_CONFIG);
	assert_int_equal(ert_ina228_plan(NAN, 0.020, &p), ERT_E_CONFIG);
	/* 1 micro-ohm x 1 mA: SHUNT_CAL = 1e-4 would round to 0 (the chip
	 * would then report zero current). */
	assert_int_equal(ert_ina228_plan(1e-6, 0.001, &p), ERT_E_CONFIG);
}

static void vbus_and_adc_codes(void **state)
{
	(void)state;
	/* 1.8 V / 195.3125 uV = 9216 counts exactly. */
	assert_int_equal(ert_ina228_vbus_uv(9216), 1800000);
	/* Full scale 0xFFFFF x 195.3125 uV = 204799.8046875 mV. */
	assert_int_equal(ert_ina228_vbus_uv(0xFFFFF), 204799805);
	/* Datasheet table 7-6: 50 us is code 0, 4120 us code 7; 1 sample
	 * code 0, 1024 samples code 7. */
	assert_int_equal(ert_ina228_conv_time_code(50), 0);
	assert_int_equal(ert_ina228_conv_time_code(1052), 5);
	assert_int_equal(ert_ina228_conv_time_code(4120), 7);
	assert_int_equal(ert_ina228_conv_time_code(51), -1);
	assert_int_equal(ert_ina228_avg_code(1), 0);
	assert_int_equal(ert_ina228_avg_code(128), 4);
	assert_int_equal(ert_ina228_avg_code(1024), 7);
	assert_int_equal(ert_ina228_avg_code(2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(half_ohm_at_20ma_is_10mv_burden),
	    cmocka_unit_test(fifteen_milliohm_at_20ma_is_300uv),
	    cmocka_unit_test(point82_ohm_at_50ma_takes_wide_range),
	    cmocka_unit_test(shunt_cal_rounding_uses_the_effective_lsb),
	    cmocka_unit_test(refuses_what_the_chip_cannot_do),
	    cmocka_unit_test(vbus_and_adc_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

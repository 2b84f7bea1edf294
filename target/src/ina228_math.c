/* INA228 calibration arithmetic (TI SBOSA20 section 8.1.2), shared by the
 * target and the host planner. */
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"

/* 2^19: CURRENT is a 20-bit signed result, so the full scale spans 2^19
 * LSBs (datasheet equation 2). */
#define INA228_CURRENT_STEPS 524288.0
/* Internal fixed-point scaling constant (datasheet equation 3). */
#define INA228_SHUNT_CAL_K 13107.2e6

int ert_ina228_plan(double shunt_ohms, double max_current_a, struct ert_ina228_plan *plan)
{
	/* NaN fails both comparisons, so it is refused too. */
	if (!(shunt_ohms > 0.0) || !(max_current_a > 0.0))
		return ERT_E_CONFIG;
	plan->shunt_ohms = shunt_ohms;
	plan->max_current_a = max_current_a;
	plan->burden_v = shunt_ohms * max_current_a;
	if (plan->burden_v > ERT_INA228_RANGE0_FS_V)
		return ERT_E_CONFIG;
	/* The ±40.96 mV range has 4x the resolution; use it whenever the
	 * largest expected shunt voltage fits. */
	plan->adcrange = plan->burden_v <= ERT_INA228_RANGE1_FS_V ? 1 : 0;
	plan->current_lsb_nominal_a = max_current_a / INA228_CURRENT_STEPS;
	double k = INA228_SHUNT_CAL_K * shunt_ohms * (plan->adcrange == 1 ? 4.0 : 1.0);
	/* datasheet equation 3 (x4 with ADCRANGE = 1) */
	double cal = k * plan->current_lsb_nominal_a;
	double rounded = cal + 0.5;
	if (!(rounded >= 1.0) || rounded >= (double)ERT_INA228_SHUNT_CAL_MAX + 1.0)
		return ERT_E_CONFIG;
	plan->shunt_cal = (uint16_t)rounded;
	/* The chip scales by the register, so its LSB is the rounded
	 * SHUNT_CAL's: converting with the nominal LSB would carry the
	 * rounding (4.8 % at 15 mOhm / 7 mA) into every figure. */
	plan->current_lsb_a = (double)plan->shunt_cal / k;
	plan->shunt_cal_rounding = ((double)plan->shunt_cal - cal) / cal;
	plan->power_lsb_w = 3.2 * plan->current_lsb_a;
	plan->energy_lsb_j = 16.0 * 3.2 * plan->current_lsb_a;
	plan->charge_lsb_c = plan->current_lsb_a;
	return ERT_OK;
}

double ert_ina228_burden_fraction(const struct ert_ina228_plan *plan, double rail_v)
{
	if (!(rail_v > 0.0))
		return 0.0;
	return plan->burden_v / rail_v;
}

static uint64_t round_nonneg(double v)
{
	if (!(v > 0.0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)(v + 0.5);
}

uint64_t ert_ina228_energy_nj(const struct ert_ina228_plan *plan, uint64_t energy_raw)
{
	return round_nonneg((double)energy_raw * plan->energy_lsb_j * 1e9);
}

uint64_t ert_ina228_charge_nc(const struct ert_ina228_plan *plan, uint64_t charge_raw_nonneg)
{
	return round_nonneg((double)charge_raw_nonneg * plan->charge_lsb_c * 1e9);
}

uint64_t ert_ina228_vbus_uv(uint32_t vbus_raw20)
{
	/* 195.3125 µV = 3125/16 µV: exact in integers. */
	return ((uint64_t)vbus_raw20 * 3125u + 8u) / 16u;
}

uint64_t ert_ina228_energy_raw(const struct ert_ina228_plan *plan, double energy_j)
{
	if (!(energy_j > 0.0))
		return 0;
	return (uint64_t)(energy_j / plan->energy_lsb_j);
}

int64_t ert_ina228_charge_raw(const struct ert_ina228_plan *plan, double charge_c)
{
	return (int64_t)(charge_c / plan->charge_lsb_c);
}

int ert_ina228_conv_time_code(uint32_t conv_time_us)
{
	static const uint32_t table[8] = {50, 84, 150, 280, 540, 1052, 2074, 4120};
	for (int i = 0; i < 8; i++)
		if (table[i] == conv_time_us)
			return i;
	return -1;
}

int ert_ina228_avg_code(uint32_t averages)
{
	static const uint32_t table[8] = {1, 4, 16, 64, 128, 256, 512, 1024};
	for (int i = 0; i < 8; i++)
		if (table[i] == averages)
			return i;
	return -1;
}

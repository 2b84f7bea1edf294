/* INA228 calibration and unit conversion, shared by the target driver and
 * the host planner (`ergon ina228 plan`). Pure arithmetic, freestanding.
 *
 * Source for every constant: TI INA228 datasheet (SBOSA20), section 8.1.2
 * "Current and Power Calculations" and table 7-x register descriptions.
 */
#ifndef ERT_INA228_MATH_H
#define ERT_INA228_MATH_H

#include <stdint.h>

/* Full-scale shunt voltage of the two ADC ranges (datasheet 7.6). */
#define ERT_INA228_RANGE0_FS_V 0.16384 /* ADCRANGE = 0: ±163.84 mV */
#define ERT_INA228_RANGE1_FS_V 0.04096 /* ADCRANGE = 1: ±40.96 mV */
/* VBUS LSB: 195.3125 µV per count (datasheet 7.6.1.6). */
#define ERT_INA228_VBUS_LSB_UV 195.3125
/* SHUNT_CAL is a 15-bit field. */
#define ERT_INA228_SHUNT_CAL_MAX 0x7FFFu
/* Rounding of SHUNT_CAL the planner warns about (0.1 %). */
#define ERT_INA228_SHUNT_CAL_ROUNDING_WARN 0.001

struct ert_ina228_plan {
	double shunt_ohms;
	double max_current_a;
	int adcrange;	      /* 1: ±40.96 mV (high resolution), 0: ±163.84 mV */
	/* The LSB the chip actually uses: SHUNT_CAL is rounded to an integer,
	 * so CURRENT_LSB = SHUNT_CAL / (13107.2e6 × R × (4 if ADCRANGE 1)),
	 * not the nominal max_current_a / 2^19. Every conversion uses it. */
	double current_lsb_a;
	double current_lsb_nominal_a; /* max_current_a / 2^19 */
	double shunt_cal_rounding;    /* (rounded - exact) / exact SHUNT_CAL */
	uint16_t shunt_cal;	      /* rounded register value (×4 applied for ADCRANGE 1) */
	double burden_v;      /* shunt_ohms × max_current_a */
	double power_lsb_w;   /* 3.2 × CURRENT_LSB */
	double energy_lsb_j;  /* 16 × 3.2 × CURRENT_LSB */
	double charge_lsb_c;  /* CURRENT_LSB */
};

/* Plan the calibration. Returns 0, or ERT_E_CONFIG when an input is not
 * positive, the burden exceeds the wide range, or SHUNT_CAL would not fit
 * in 15 bits / round to 0. */
int ert_ina228_plan(double shunt_ohms, double max_current_a, struct ert_ina228_plan *plan);
/* Burden as a fraction of a rail (0.0056 for 10 mV on 1.8 V). */
double ert_ina228_burden_fraction(const struct ert_ina228_plan *plan, double rail_v);
/* Conversions of raw register values (already extracted from their
 * fields). Results are rounded to the nearest integer unit. */
uint64_t ert_ina228_energy_nj(const struct ert_ina228_plan *plan, uint64_t energy_raw);
uint64_t ert_ina228_charge_nc(const struct ert_ina228_plan *plan, uint64_t charge_raw_nonneg);
uint64_t ert_ina228_vbus_uv(uint32_t vbus_raw20);
/* Inverse, used by the register-level model in sim/: the raw count a
 * physical quantity encodes to (truncated, as the chip accumulates). */
uint64_t ert_ina228_energy_raw(const struct ert_ina228_plan *plan, double energy_j);
int64_t ert_ina228_charge_raw(const struct ert_ina228_plan *plan, double charge_c);

/* ADC_CONFIG conversion-time and averaging codes (datasheet table 7-6):
 * code for an exact value, or -1 when the value is not one the chip has. */
int ert_ina228_conv_time_code(uint32_t conv_time_us);
int ert_ina228_avg_code(uint32_t averages);

#endif

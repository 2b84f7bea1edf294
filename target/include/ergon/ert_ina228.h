/* INA228 driver (internal power measurement): bring-up, arm right before
 * the window, read right after. All I2C traffic happens outside the
 * window; the driver is never called while the gate is high.
 *
 * Const configuration (struct ert_ina228_config) apart from changing state
 * (struct ert_ina228); bus I/O here, arithmetic in ina228_math.
 */
#ifndef ERT_INA228_H
#define ERT_INA228_H

#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"

#include <stdint.h>

/* Registers (datasheet table 7-4). */
#define ERT_INA228_REG_CONFIG 0x00
#define ERT_INA228_REG_ADC_CONFIG 0x01
#define ERT_INA228_REG_SHUNT_CAL 0x02
#define ERT_INA228_REG_VSHUNT 0x04
#define ERT_INA228_REG_VBUS 0x05
#define ERT_INA228_REG_CURRENT 0x07
#define ERT_INA228_REG_POWER 0x08
#define ERT_INA228_REG_ENERGY 0x09
#define ERT_INA228_REG_CHARGE 0x0A
#define ERT_INA228_REG_DIAG_ALRT 0x0B
#define ERT_INA228_REG_MANUFACTURER_ID 0x3E
#define ERT_INA228_REG_DEVICE_ID 0x3F
/* Field bits. */
#define ERT_INA228_CONFIG_RST (1u << 15)
#define ERT_INA228_CONFIG_RSTACC (1u << 14)
#define ERT_INA228_CONFIG_ADCRANGE (1u << 4)
#define ERT_INA228_DIAG_ENERGYOF (1u << 11)
#define ERT_INA228_DIAG_CHARGEOF (1u << 10)
#define ERT_INA228_DIAG_MATHOF (1u << 9)
#define ERT_INA228_MANUFACTURER_TI 0x5449u /* "TI" */
#define ERT_INA228_DEVICE_ID 0x228u	   /* DEVICE_ID bits 15:4 */
/* ADC_CONFIG.MODE = 0xF: continuous shunt, bus and temperature. */
#define ERT_INA228_MODE_CONT_ALL 0xFu

struct ert_ina228_config {
	uint8_t addr7;
	double shunt_ohms;
	double max_current_a;
	uint32_t conv_time_us; /* one of 50, 84, 150, 280, 540, 1052, 2074, 4120 */
	uint32_t averages;     /* one of 1, 4, 16, 64, 128, 256, 512, 1024 */
};

struct ert_ina228 {
	const struct ert_hal *hal;
	struct ert_ina228_config cfg;
	struct ert_ina228_plan plan;
	uint16_t adc_config;
	uint16_t config;
	int armed;
};

struct ert_ina228_reading {
	uint64_t energy_raw; /* 40-bit unsigned */
	int64_t charge_raw;  /* 40-bit signed, sign-extended */
	uint32_t vbus_raw;   /* 20-bit */
	uint16_t diag;	     /* DIAG_ALRT */
	uint64_t energy_nj;
	uint64_t charge_nc; /* negative charge clamped to 0 */
	int charge_clamped; /* CHARGE read negative (reversed sense wiring?) */
	uint64_t bus_uv;
	int overflow; /* ENERGYOF, CHARGEOF or MATHOF */
};

/* Check identity, configure ADC and CONFIG.ADCRANGE, write SHUNT_CAL and
 * read it back. ERT_E_CONFIG (bad plan / conv time / averaging),
 * ERT_E_I2C, ERT_E_INA228_ID, ERT_E_SHUNT_CAL_WRITE,
 * ERT_E_SHUNT_CAL_READBACK. */
int ert_ina228_init(struct ert_ina228 *dev, const struct ert_hal *hal,
		    const struct ert_ina228_config *cfg);
/* Reset the accumulators (CONFIG.RSTACC); call right before the window. */
int ert_ina228_arm(struct ert_ina228 *dev);
/* Read ENERGY, CHARGE, VBUS, DIAG_ALRT; call right after the window. */
int ert_ina228_read(struct ert_ina228 *dev, struct ert_ina228_reading *out);

#endif

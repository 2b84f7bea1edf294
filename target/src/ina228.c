/* INA228 bus I/O: identity, configuration, SHUNT_CAL with readback,
 * accumulator reset, and the post-window read. Register layouts from TI
 * SBOSA20 table 7-4; values are big-endian on the bus. */
#include "ergon/ert_ina228.h"

static int rd(struct ert_ina228 *dev, uint8_t reg, uint8_t *buf, size_t len)
{
	if (dev->hal->i2c_read(dev->hal->ctx, dev->cfg.addr7, reg, buf, len) != 0)
		return ERT_E_I2C;
	return ERT_OK;
}

static int rd16(struct ert_ina228 *dev, uint8_t reg, uint16_t *v)
{
	uint8_t b[2];
	int rc = rd(dev, reg, b, sizeof b);
	if (rc == ERT_OK)
		*v = (uint16_t)(((unsigned)b[0] << 8) | b[1]);
	return rc;
}

static int wr16(struct ert_ina228 *dev, uint8_t reg, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)(v & 0xFFu)};
	if (dev->hal->i2c_write(dev->hal->ctx, dev->cfg.addr7, reg, b, sizeof b) != 0)
		return ERT_E_I2C;
	return ERT_OK;
}

static uint64_t be40(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 5; i++)
		v = (v << 8) | b[i];
	return v;
}

int ert_ina228_init(struct ert_ina228 *dev, const struct ert_hal *hal,
		    const struct ert_ina228_config *cfg)
{
	dev->hal = hal;
	dev->cfg = *cfg;
	dev->armed = 0;
	if (hal->i2c_read == NULL || hal->i2c_write == NULL)
		return ERT_E_UNSUPPORTED;
	if (ert_ina228_plan(cfg->shunt_ohms, cfg->max_current_a, &dev->plan) != ERT_OK)
		return ERT_E_CONFIG;
	int ct = ert_ina228_conv_time_code(cfg->conv_time_us);
	int avg = ert_ina228_avg_code(cfg->averages);
	if (ct < 0 || avg < 0)
		return ERT_E_CONFIG;

	uint16_t id = 0;
	int rc = rd16(dev, ERT_INA228_REG_MANUFACTURER_ID, &id);
	if (rc != ERT_OK)
		return rc;
	if (id != ERT_INA228_MANUFACTURER_TI)
		return ERT_E_INA228_ID;
	rc = rd16(dev, ERT_INA228_REG_DEVICE_ID, &id);
	if (rc != ERT_OK)
		return rc;
	if ((id >> 4) != ERT_INA228_DEVICE_ID)
		return ERT_E_INA228_ID;

	dev->config = dev->plan.adcrange ? (uint16_t)ERT_INA228_CONFIG_ADCRANGE : 0u;
	rc = wr16(dev, ERT_INA228_REG_CONFIG, dev->config);
	if (rc != ERT_OK)
		return rc;
	/* MODE 15:12, VBUSCT 11:9, VSHCT 8:6, VTCT 5:3, AVG 2:0. */
	unsigned c = (unsigned)ct;
	dev->adc_config = (uint16_t)((ERT_INA228_MODE_CONT_ALL << 12) | (c << 9) | (c << 6) |
				     (c << 3) | (unsigned)avg);
	rc = wr16(dev, ERT_INA228_REG_ADC_CONFIG, dev->adc_config);
	if (rc != ERT_OK)
		return rc;

	/* SHUNT_CAL = 0 makes the chip report exactly zero current, power,
	 * energy and charge while VBUS looks perfect: verify it landed. */
	if (wr16(dev, ERT_INA228_REG_SHUNT_CAL, dev->plan.shunt_cal) != ERT_OK)
		return ERT_E_SHUNT_CAL_WRITE;
	uint16_t back = 0;
	rc = rd16(dev, ERT_INA228_REG_SHUNT_CAL, &back);
	if (rc != ERT_OK)
		return rc;
	if ((back & ERT_INA228_SHUNT_CAL_MAX) != dev->plan.shunt_cal)
		return ERT_E_SHUNT_CAL_READBACK;
	return ERT_OK;
}

int ert_ina228_arm(struct ert_ina228 *dev)
{
	int rc =
	    wr16(dev, ERT_INA228_REG_CONFIG, (uint16_t)(dev->config | ERT_INA228_CONFIG_RSTACC));
	if (rc == ERT_OK)
		dev->armed = 1;
	return rc;
}

int ert_ina228_read(struct ert_ina228 *dev, struct ert_ina228_reading *out)
{
	uint8_t b[5];
	int rc = rd(dev, ERT_INA228_REG_ENERGY, b, 5);
	if (rc != ERT_OK)
		return rc;
	out->energy_raw = be40(b);
	rc = rd(dev, ERT_INA228_REG_CHARGE, b, 5);
	if (rc != ERT_OK)
		return rc;
	uint64_t c = be40(b);
	/* Sign-extend the 40-bit two's complement value. */
	if (c & (UINT64_C(1) << 39))
		out->charge_raw = (int64_t)(c | ~((UINT64_C(1) << 40) - 1u));
	else
		out->charge_raw = (int64_t)c;
	rc = rd(dev, ERT_INA228_REG_VBUS, b, 3);
	if (rc != ERT_OK)
		return rc;
	/* VBUS: 20-bit value in bits 23:4 (always positive). */
	out->vbus_raw = ((uint32_t)b[0] << 12) | ((uint32_t)b[1] << 4) | ((uint32_t)b[2] >> 4);
	rc = rd16(dev, ERT_INA228_REG_DIAG_ALRT, &out->diag);
	if (rc != ERT_OK)
		return rc;
	out->energy_nj = ert_ina228_energy_nj(&dev->plan, out->energy_raw);
	/* Negative charge means current flowed backwards through the shunt
	 * (reversed sense wiring): clamp, never wrap into a huge number. */
	out->charge_clamped = out->charge_raw < 0;
	out->charge_nc =
	    out->charge_clamped ? 0 : ert_ina228_charge_nc(&dev->plan, (uint64_t)out->charge_raw);
	out->bus_uv = ert_ina228_vbus_uv(out->vbus_raw);
	out->overflow = (out->diag & (ERT_INA228_DIAG_ENERGYOF | ERT_INA228_DIAG_CHARGEOF |
				      ERT_INA228_DIAG_MATHOF)) != 0;
	return ERT_OK;
}

/* Register-level INA228 model (TI SBOSA20 table 7-4). Readings are encoded
 * as the chip would encode them: energy and charge in the LSBs implied by
 * the SHUNT_CAL the host programmed, big-endian, 40-bit accumulators with
 * overflow flags in DIAG_ALRT. Idealised in one respect: the chip
 * integrates per ADC conversion, the model continuously. */
#include "ergon/ert_ina228.h"
#include "sim_internal.h"

#include <math.h>

#define FULL40 1099511627776.0 /* 2^40 */

void sim_ina228_init(struct sim_ina228 *m, double shunt_ohms, double bus_v,
		     const struct sim_ina228_faults *faults)
{
	*m = (struct sim_ina228){0};
	m->shunt_ohms = shunt_ohms;
	m->bus_v = bus_v;
	if (faults != NULL)
		m->faults = *faults;
	/* Power-on defaults: ADC_CONFIG 0xFB68, SHUNT_CAL 0x1000. */
	m->adc_config = 0xFB68;
	m->shunt_cal = 0x1000;
}

/* The chip's CURRENT_LSB, implied by the programmed SHUNT_CAL and the real
 * shunt: SHUNT_CAL = 13107.2e6 x CURRENT_LSB x R (x4 with ADCRANGE = 1). */
static double chip_current_lsb(const struct sim_ina228 *m)
{
	double k = (m->config & ERT_INA228_CONFIG_ADCRANGE) ? 4.0 : 1.0;
	return (double)m->shunt_cal / (13107.2e6 * m->shunt_ohms * k);
}

void sim_ina228_advance(struct sim_ina228 *m, double current_a, double dt_s)
{
	/* SHUNT_CAL = 0 makes every derived quantity exactly zero while VBUS
	 * still reads right: the failure the driver's readback catches. */
	if (m->shunt_cal == 0 || dt_s <= 0.0)
		return;
	/* Open sense lines: the inputs see no shunt voltage, so no current. */
	double i = m->faults.sense_open ? 0.0 : m->faults.reversed_sense ? -current_a : current_a;
	double lsb = chip_current_lsb(m);
	/* POWER is a magnitude (unsigned register); CHARGE keeps the sign. */
	m->energy_lsb += fabs(i) * m->bus_v * dt_s / (16.0 * 3.2 * lsb);
	m->charge_lsb += i * dt_s / lsb;
	if (m->energy_lsb >= FULL40) {
		m->energy_lsb = fmod(m->energy_lsb, FULL40);
		m->diag |= ERT_INA228_DIAG_ENERGYOF;
	}
	if (m->charge_lsb >= FULL40 / 2.0 || m->charge_lsb < -FULL40 / 2.0) {
		m->charge_lsb = fmod(m->charge_lsb, FULL40 / 2.0);
		m->diag |= ERT_INA228_DIAG_CHARGEOF;
	}
}

static void put_be(uint8_t *data, size_t len, uint64_t v)
{
	for (size_t i = 0; i < len; i++)
		data[len - 1 - i] = (uint8_t)(v >> (8 * i));
}

int sim_ina228_read(struct sim_ina228 *m, uint8_t reg, uint8_t *data, size_t len)
{
	m->reads++;
	switch (reg) {
	case ERT_INA228_REG_CONFIG:
	case ERT_INA228_REG_ADC_CONFIG:
	case ERT_INA228_REG_SHUNT_CAL:
	case ERT_INA228_REG_DIAG_ALRT:
	case ERT_INA228_REG_MANUFACTURER_ID:
	case ERT_INA228_REG_DEVICE_ID: {
		if (len != 2)
			return -1;
		uint16_t v = 0;
		if (reg == ERT_INA228_REG_CONFIG)
			v = m->config;
		else if (reg == ERT_INA228_REG_ADC_CONFIG)
			v = m->adc_config;
		else if (reg == ERT_INA228_REG_SHUNT_CAL)
			v = m->shunt_cal;
		else if (reg == ERT_INA228_REG_DIAG_ALRT) {
			v = m->diag;
			/* Overflow flags clear on read (datasheet 7.6.1.12). */
			m->diag &=
			    (uint16_t) ~(ERT_INA228_DIAG_ENERGYOF | ERT_INA228_DIAG_CHARGEOF);
		} else if (reg == ERT_INA228_REG_MANUFACTURER_ID)
			v = ERT_INA228_MANUFACTURER_TI;
		else
			v = m->faults.device_id ? m->faults.device_id : 0x2281;
		put_be(data, 2, v);
		return 0;
	}
	case ERT_INA228_REG_VBUS: {
		if (len != 3)
			return -1;
		/* 20-bit value in bits 23:4, LSB 195.3125 µV. */
		uint64_t raw = (uint64_t)(m->bus_v / 195.3125e-6 + 0.5) & 0xFFFFFu;
		put_be(data, 3, raw << 4);
		return 0;
	}
	case ERT_INA228_REG_ENERGY: {
		if (len != 5)
			return -1;
		put_be(data, 5, (uint64_t)m->energy_lsb);
		return 0;
	}
	case ERT_INA228_REG_CHARGE: {
		if (len != 5)
			return -1;
		/* 40-bit two's complement; truncation toward zero as the chip. */
		int64_t c = (int64_t)m->charge_lsb;
		put_be(data, 5, (uint64_t)c & 0xFFFFFFFFFFull);
		return 0;
	}
	default:
		return -1;
	}
}

int sim_ina228_write(struct sim_ina228 *m, uint8_t reg, const uint8_t *data, size_t len)
{
	m->writes++;
	if (len != 2)
		return -1;
	uint16_t v = (uint16_t)((data[0] << 8) | data[1]);
	switch (reg) {
	case ERT_INA228_REG_CONFIG:
		if (v & ERT_INA228_CONFIG_RSTACC) {
			/* RSTACC clears the accumulators and self-clears. */
			double pre = m->faults.preload_lsb_below_full > 0
					 ? FULL40 - (double)m->faults.preload_lsb_below_full
					 : 0.0;
			m->energy_lsb = pre;
			m->charge_lsb = 0.0;
			m->diag &= (uint16_t) ~(ERT_INA228_DIAG_ENERGYOF |
						ERT_INA228_DIAG_CHARGEOF | ERT_INA228_DIAG_MATHOF);
		}
		m->config = (uint16_t)(v & ~(ERT_INA228_CONFIG_RSTACC | ERT_INA228_CONFIG_RST));
		return 0;
	case ERT_INA228_REG_ADC_CONFIG:
		m->adc_config = v;
		return 0;
	case ERT_INA228_REG_SHUNT_CAL:
		m->shunt_cal = m->faults.shunt_cal_stuck_zero ? 0 : (uint16_t)(v & 0x7FFFu);
		return 0;
	default:
		return -1;
	}
}

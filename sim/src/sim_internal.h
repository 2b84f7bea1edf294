/* Private to the virtual bench: the register-level INA228 model. */
#ifndef ERGON_SIM_INTERNAL_H
#define ERGON_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Faults the model can carry. */
struct sim_ina228_faults {
	uint16_t device_id;		 /* 0: the real 0x2281 */
	int shunt_cal_stuck_zero;	 /* writes to SHUNT_CAL are lost: reads 0 */
	int reversed_sense;		 /* IN+ and IN- swapped: current negative */
	uint64_t preload_lsb_below_full; /* after RSTACC, accumulators this close to 2^40 */
	int sense_open;			 /* IN+/IN- not connected: 0 V across the inputs */
};

/* The chip: registers are derived from physical state (shunt voltage from
 * the current model, bus voltage) the way the chip encodes them. */
struct sim_ina228 {
	double shunt_ohms; /* the physical shunt on the board */
	double bus_v;
	struct sim_ina228_faults faults;
	uint16_t config;
	uint16_t adc_config;
	uint16_t shunt_cal;
	/* Accumulators in LSBs of the chip's own calibration, kept fractional
	 * between reads, as the chip keeps more internal resolution. */
	double energy_lsb;
	double charge_lsb;
	uint16_t diag;
	uint64_t reads, writes;
};

void sim_ina228_init(struct sim_ina228 *m, double shunt_ohms, double bus_v,
		     const struct sim_ina228_faults *faults);
/* Integrate dt_s at a current (the true current through the shunt). */
void sim_ina228_advance(struct sim_ina228 *m, double current_a, double dt_s);
int sim_ina228_read(struct sim_ina228 *m, uint8_t reg, uint8_t *data, size_t len);
int sim_ina228_write(struct sim_ina228 *m, uint8_t reg, const uint8_t *data, size_t len);

#endif

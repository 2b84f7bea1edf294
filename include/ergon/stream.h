/* The sample stream: time-ordered records from an instrument.
 *
 * A record carries any subset of the fields below; `fields` says which. A
 * driver fills records, engines consume them incrementally (no engine needs
 * a whole capture in memory).
 */
#ifndef ERGON_STREAM_H
#define ERGON_STREAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_sample_field {
	ERGON_F_CURRENT = 1u << 0,  /* current_a */
	ERGON_F_VOLTAGE = 1u << 1,  /* voltage_v */
	ERGON_F_POWER = 1u << 2,    /* power_w (instantaneous unless the identity says averaged) */
	ERGON_F_ENERGY = 1u << 3,   /* energy_j: hardware accumulator, monotonic */
	ERGON_F_CHARGE = 1u << 4,   /* charge_c: hardware accumulator */
	ERGON_F_DIGITAL = 1u << 5,  /* digital: bit i = input i */
	ERGON_F_TEMP = 1u << 6,     /* temp_c: device temperature, evidence for throttling */
};

struct ergon_sample {
	double t_s;       /* monotonic seconds (instrument or host clock, per identity) */
	double current_a;
	double voltage_v;
	double power_w;
	double energy_j;  /* accumulator value, not a delta */
	double charge_c;  /* accumulator value, not a delta */
	double temp_c;
	uint32_t digital;
	uint16_t fields;  /* ergon_sample_field bits */
	uint16_t channel; /* rail index for multi-rail instruments, else 0 */
};

#ifdef __cplusplus
}
#endif
#endif

/* The sample stream: time-ordered records from an instrument.
 *
 * A record carries any subset of the fields below; `fields` says which. A
 * driver fills records, engines consume them incrementally (no engine needs
 * a whole capture in memory).
 */
#ifndef ERGON_STREAM_H
#define ERGON_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_sample_field {
	ERGON_F_CURRENT = 1u << 0, /* current_a */
	ERGON_F_VOLTAGE = 1u << 1, /* voltage_v */
	ERGON_F_POWER = 1u << 2,   /* power_w (instantaneous unless the identity says averaged) */
	ERGON_F_ENERGY = 1u << 3,  /* energy_j: hardware accumulator, monotonic */
	ERGON_F_CHARGE = 1u << 4,  /* charge_c: hardware accumulator */
	ERGON_F_DIGITAL = 1u << 5, /* digital: bit i = input i */
	ERGON_F_TEMP = 1u << 6,	   /* temp_c: device temperature, evidence for throttling */
};

struct ergon_sample {
	double t_s; /* monotonic seconds (instrument or host clock, per identity) */
	double current_a;
	double voltage_v;
	double power_w;
	double energy_j; /* accumulator value, not a delta */
	double charge_c; /* accumulator value, not a delta */
	double temp_c;
	uint32_t digital;
	uint16_t fields;  /* ergon_sample_field bits */
	uint16_t channel; /* rail index for multi-rail instruments, else 0 */
};

/* ---- Statistics packets and software gates ---------------------------
 * What statistics instruments (Joulescope, the virtual bench) and recording
 * readers deliver; the pipelines feed them to the gated engine
 * (ergon/gated.h). */

/* Which optional fields of a statistics packet hold values. */
enum ergon_packet_field {
	ERGON_PKT_VOLTAGE = 1u << 0, /* v_* */
	ERGON_PKT_POWER = 1u << 1,   /* p_* */
	ERGON_PKT_ACCUM = 1u << 2,   /* charge_c and energy_j accumulators */
	ERGON_PKT_DIGITAL = 1u << 3, /* digital */
	ERGON_PKT_MINMAX = 1u << 4,  /* i_min_a/i_max_a (and v, p when present) */
};

/* One statistics packet, the field set of libjsdrv's statistics payload:
 * the span it covers, current/voltage/power mean, std, min, max, the
 * on-instrument charge and energy accumulators at the end of the span, the
 * polled digital inputs (bit i = INPUTi) and the first sample id. */
struct ergon_stats_packet {
	double t_start_s;
	double t_end_s;
	double i_avg_a, i_std_a, i_min_a, i_max_a;
	double v_avg_v, v_std_v, v_min_v, v_max_v;
	double p_avg_w, p_std_w, p_min_w, p_max_w;
	double charge_c; /* accumulator, C, not a delta */
	double energy_j; /* accumulator, J, not a delta */
	uint64_t sample_id;
	uint32_t digital;
	uint32_t fields; /* ergon_packet_field bits */
	/* Resolution of energy_j, p_avg_w, i_avg_a, v_avg_v as recorded (a
	 * CSV's printed digits: the place value of the last significant
	 * digit the column shows); 0 for exact binary values. The
	 * accumulator cross-check's tolerance. */
	double energy_res_j, p_res_w, i_res_a, v_res_v;
};

/* A software gate interval [start_s, end_s). */
struct ergon_gate_marker {
	double start_s;
	double end_s;
};

struct ergon_err;

/* Where a recording reader or a statistics instrument delivers what it
 * read, in time order. A pipeline wires it to an engine
 * (ergon_power_sink_gated feeds the gated engine); tests wire it to arrays.
 * Each callback returns 0 or a negative ERGON_E* code (which stops the
 * reader); raw_begin comes once, before the first raw block. */
struct ergon_power_sink {
	void *ctx;
	int (*packets)(void *ctx, const struct ergon_stats_packet *p, size_t n,
		       struct ergon_err *err);
	int (*raw_begin)(void *ctx, double sample_rate_hz, struct ergon_err *err);
	/* n samples; power_w may be NULL (current x voltage), gate_bits may be
	 * NULL, else packed u1 from bit0 (see ergon_gated_push_raw). */
	int (*raw)(void *ctx, const float *current_a, const float *voltage_v, const float *power_w,
		   const uint8_t *gate_bits, size_t bit0, size_t n, struct ergon_err *err);
};

#ifdef __cplusplus
}
#endif
#endif

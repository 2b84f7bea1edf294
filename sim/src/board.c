/* The simulated board: a virtual clock, a workload that advances it, GPIO
 * with timestamped edges, an I2C bus with the INA228 model, a Joulescope
 * watching the gate, and the fault scenarios. Everything is deterministic:
 * the same scenario gives the same bytes. */
#include "ergon/ert_layer.h"
#include "ergon/ert_profile.h"
#include "ergon/ert_rtt.h"
#include "ergon/ert_tfl.h"
#include "ergon/fileio.h"
#include "ergon/model_input.h"
#include "ergon/sim.h"
#include "ergon/suggest.h"
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_CORE_HZ 96000000.0 /* nominal core clock (an Apollo4-class part) */
#define SIM_RAIL_V 1.8
#define SIM_IDLE_A 0.001
#define SIM_ACTIVE_A 0.005
#define SIM_SHUNT_OHMS 0.5
#define SIM_MAX_CURRENT_A 0.02
#define SIM_INA228_ADDR 0x40
#define SIM_GATE_PIN 3
#define SIM_STATE_PIN 4
#define SIM_GO_PIN 5
#define SIM_GO_DELAY_NS 2000000u /* the host raises GO 2 ms after READY */
#define SIM_JS_RATE_HZ 10000.0	 /* the scenarios' own statistics rate */
/* The simulated JS220's sample clock (its packets sum whole numbers of
 * these samples) and the fewest samples a packet sums (10 kHz at most). */
#define SIM_JS_SAMPLE_HZ 1000000u
#define SIM_JS_MIN_SPP 100u
#define SIM_JS_MAX_PACKETS 200000u
#define SIM_STREAM_MAX (1u << 20)
#define SIM_RTT_UP_MAX 4096u
#define SIM_RTT_POLL_NS 1000000u /* the probe drains the RTT up buffer every 1 ms */
#define SIM_RTT_NS_PER_BYTE 100u /* a write into the RTT ring: RAM, not a wire */
/* Cycles of the three simulated layers of one inference. */
static const uint32_t layer_cycles[3] = {48000, 24000, 24000};
/* Both boots run a fixed clean window of this many inferences. */
#define SIM_WINDOW_ITERATIONS 20u

static const char *const layer_ops[3] = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"};

double ergon_sim_rail_v(void)
{
	return SIM_RAIL_V;
}

double ergon_sim_active_current_a(void)
{
	return SIM_ACTIVE_A;
}

double ergon_sim_op_current_a(const char *op_name)
{
	static const struct {
		const char *op;
		double a;
	} kinds[] = {
	    {"CONV_2D", 0.006},
	    {"DEPTHWISE_CONV_2D", 0.004},
	    {"FULLY_CONNECTED", 0.005},
	};
	for (size_t i = 0; op_name != NULL && i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].op, op_name) == 0)
			return kinds[i].a;
	return 0.003;
}

struct sim_faults {
	int stalled_counter;	      /* cycle counter stops during inferences */
	int slow_counter;	      /* every 2nd inference counts 1/16 of its cycles */
	double core_speed;	      /* actual/nominal core rate (uniform slowdown) */
	int frozen_clock;	      /* the window clock stops */
	double clock_drift;	      /* window clock runs (1 + drift) x true time */
	int gate_stuck_high;	      /* the gate pin cannot be driven low once high */
	int glitches;		      /* short pulses on INPUT0 before the window */
	int go_never;		      /* the host never raises GO */
	int drop_terminal;	      /* bytes written after the window are lost */
	int ready_wire_open;	      /* the state pin's wire to the instrument is cut */
	uint64_t drop_from, drop_len; /* silently lose stream bytes [from, from+len) */
	uint64_t fail_after;	      /* transport write fails once this many bytes went */
	int shunt_cal_nack;	      /* the SHUNT_CAL write is not acknowledged */
	int rstacc_nack;	      /* the arming CONFIG write (RSTACC) is not acknowledged */
	int energy_read_nack;	      /* reading ENERGY after the window is not acknowledged */
	int js_gap;		      /* the meter loses 9 of 10 packets while the gate is high */
	int pmu;		      /* the board has a PMU (two presets are profiled) */
	uint32_t pmu_preload;	      /* counters start this close below 2^32 (overflow) */
	int no_cycle_counter;	      /* the port has no cycle counter (no DWT CYCCNT) */
	int pmu_asked;		/* the firmware asks for the two presets (even without a PMU) */
	uint64_t restart_after; /* the board resets before the write that would pass
				 * this many bytes, reboots and runs the flow again */
	uint32_t rtt_up_size;	/* the transport is RTT in drop mode with this up buffer */
	double idle_a;		/* idle current (0: SIM_IDLE_A) */
	int ina228_bystander;	/* an external run whose firmware also reads the INA228 */
	/* Layer-marker faults: the marker pin ignores the Nth toggle of the
	 * window (a missing edge); after the Nth toggle, one more toggle half
	 * way through that layer (an extra edge); the third simulated layer
	 * runs 2,400 cycles (25 us: a layer shorter than the minimum), the second
	 * the rest of its cycles, so the inference keeps its length. */
	uint32_t marker_skip_at, marker_extra_at;
	int marker_short;
	int markers; /* the scenario marks layers: marker pin and raw meter on */
	struct sim_ina228_faults ina;
};

/* The model the virtual firmware runs (ergon_sim_options.model_path). */
#define SIM_MODEL_MAX_BYTES ((size_t)16 << 20)
struct sim_model {
	struct ert_tfl_model tfl;
	char *bytes; /* the file, malloc'd */
	size_t len;
	uint8_t *arena; /* malloc'd, tfl.arena_bytes */
	uint8_t *input; /* input 0's pattern, malloc'd */
	uint32_t input_len;
	struct ert_meta_u meta[4];
};

struct sim_board {
	struct sim_faults f;
	struct sim_model *model; /* NULL: the three simulated layers */
	struct ergon_sim_options o;
	uint64_t now_ns;	    /* true time */
	double cycles;		    /* true cycles since boot (at actual rate) */
	double counter;		    /* what the cycle counter shows */
	uint64_t counter_frozen_us; /* window clock value when frozen */
	int pins[16];
	int go_armed;
	uint64_t ready_ns;
	int busy;	 /* in an inference: active current */
	int window_over; /* gate has fallen once */
	uint64_t n_infer;
	struct sim_ina228 ina;
	/* Joulescope accumulation of the current packet. */
	uint64_t js_t0_ns;
	uint64_t js_period_ns; /* one statistics packet: js_spp us */
	uint64_t js_spp;       /* samples of the 1 MHz clock per packet */
	double js_q, js_e, js_in0_ns, js_total_q, js_total_e;
	uint64_t next_glitch_ns[2];
	uint64_t js_gap_n; /* fully-high packets seen (js_gap) */
	double pmu_base_cycles;
	uint16_t pmu_events[ERT_PMU_PASS_COUNTERS];
	unsigned pmu_n;
	struct ergon_sim_result *res;
	size_t stream_cap;
	int oom;
	int restarted; /* the board has reset once (restart_after) */
	/* RTT transport (rtt_up_size): the target's own ring in drop mode, and
	 * the host's probe draining it every SIM_RTT_POLL_NS. */
	struct ert_rtt rtt;
	char rtt_up[SIM_RTT_UP_MAX];
	char rtt_down[16];
	uint64_t rtt_next_poll_ns;
	double op_a; /* the running operator's current (0: SIM_ACTIVE_A) */
	/* The raw meter: the span now accumulating, its charge, its latched
	 * digital inputs; the result's capacity. */
	uint64_t raw_ns, raw_t0_ns;
	double raw_q;
	uint8_t raw_dig;
	size_t raw_cap;
	/* Markers: toggles asked, an extra toggle due in the running layer,
	 * the open truth interval. */
	uint32_t mk_asked;
	int mk_extra_due;
	int mk_open;
	int mk_invert; /* the meter's view of the pin is inverted (a lost edge) */
	uint64_t mk_t0_ns;
	double mk_e;
	size_t mk_cap;
};

static int gate_level(const struct sim_board *b, uint64_t t_ns)
{
	if (b->o.gate_pin > 0 && b->o.gate_pin < 16 && b->pins[b->o.gate_pin])
		return 1;
	/* Glitch pulses: 20 µs each, on the wire between board and meter. */
	for (int i = 0; b->f.glitches && i < 2; i++)
		if (t_ns >= b->next_glitch_ns[i] && t_ns < b->next_glitch_ns[i] + 20000u)
			return 1;
	return 0;
}

/* The marker wire's level as the meter sees it. */
static int marker_level(const struct sim_board *b)
{
	return b->o.marker_pin > 0 && b->o.marker_pin < 16 && b->pins[b->o.marker_pin];
}

/* Close the raw meter's span: its mean current and latched inputs. */
static void raw_emit(struct sim_board *b)
{
	struct ergon_sim_result *r = b->res;
	if (r->n_raw >= b->raw_cap && r->n_raw < ERGON_SIM_RAW_MAX) {
		size_t cap = b->raw_cap ? 2 * b->raw_cap : 65536;
		float *i = realloc(r->raw_current_a, cap * sizeof *i);
		if (i != NULL)
			r->raw_current_a = i;
		uint8_t *d = realloc(r->raw_digital, cap);
		if (d != NULL)
			r->raw_digital = d;
		if (i == NULL || d == NULL)
			b->oom = 1;
		else
			b->raw_cap = cap;
	}
	if (r->n_raw < b->raw_cap) {
		r->raw_current_a[r->n_raw] = (float)(b->raw_q / ((double)b->raw_ns * 1e-9));
		r->raw_digital[r->n_raw] = b->raw_dig;
		r->n_raw++;
	}
	b->raw_q = 0;
	b->raw_t0_ns += b->raw_ns;
	b->raw_dig = (uint8_t)(gate_level(b, b->raw_t0_ns) | marker_level(b) << 1);
}

static void js_emit(struct sim_board *b)
{
	struct ergon_sim_result *r = b->res;
	if (r->n_js >= SIM_JS_MAX_PACKETS)
		return;
	double period = (double)b->js_period_ns * 1e-9;
	struct ergon_sim_js_packet *p = &r->js[r->n_js++];
	b->js_total_q += b->js_q;
	b->js_total_e += b->js_e;
	p->t_s = (double)(b->js_t0_ns + b->js_period_ns) * 1e-9;
	p->current_a = b->js_q / period;
	p->voltage_v = SIM_RAIL_V;
	p->power_w = b->js_e / period;
	p->charge_c = b->js_total_q;
	p->energy_j = b->js_total_e;
	p->in0 = b->js_in0_ns / (double)b->js_period_ns;
	struct ergon_stats_packet *q = &r->stats[r->n_js - 1];
	*q = (struct ergon_stats_packet){0};
	q->t_start_s = (double)b->js_t0_ns * 1e-9;
	q->t_end_s = p->t_s;
	q->i_avg_a = q->i_min_a = q->i_max_a = p->current_a;
	q->v_avg_v = q->v_min_v = q->v_max_v = SIM_RAIL_V;
	q->p_avg_w = q->p_min_w = q->p_max_w = p->power_w;
	q->charge_c = p->charge_c;
	q->energy_j = p->energy_j;
	/* A JS220 samples at 1 MHz: js_spp samples per packet (100 per 100 us
	 * packet at the scenarios' own 10 kHz). */
	q->sample_id = (uint64_t)(r->n_js - 1) * b->js_spp;
	q->digital = p->in0 > 0.0 ? 1u : 0u;
	q->fields = ERGON_PKT_VOLTAGE | ERGON_PKT_POWER | ERGON_PKT_ACCUM | ERGON_PKT_DIGITAL;
	/* A lossy link inside the window: the packet is lost (its sample ids
	 * leave a gap), the meter's accumulators still count it. */
	if (b->f.js_gap && p->in0 >= 1.0 && (b->js_gap_n++ % 10u) != 0u)
		r->n_js--;
	b->js_q = b->js_e = b->js_in0_ns = 0.0;
	b->js_t0_ns += b->js_period_ns;
}

/* Append one byte to what the host received; 0, or -1 when full. */
static int host_receive(struct sim_board *b, char c)
{
	struct ergon_sim_result *r = b->res;
	if (r->stream_len + 1 >= b->stream_cap) {
		b->oom = 1;
		return -1;
	}
	r->stream[r->stream_len++] = c;
	r->stream[r->stream_len] = '\0';
	return 0;
}

/* The probe drains the whole RTT up buffer, as a J-Link RTT poll does. */
static int rtt_drain(struct sim_board *b)
{
	struct ert_rtt_buffer *u = &b->rtt.cb.up[0];
	uint32_t rd = u->rd_off;
	while (rd != u->wr_off) {
		if (host_receive(b, u->buf[rd]) != 0)
			return -1;
		rd = rd + 1u == u->size ? 0u : rd + 1u;
	}
	u->rd_off = rd;
	return 0;
}

/* Advance true time by dt_ns at the present current, feeding the meters. */
static void advance(struct sim_board *b, uint64_t dt_ns)
{
	double idle_a = b->f.idle_a > 0.0 ? b->f.idle_a : SIM_IDLE_A;
	double i_a = b->busy ? (b->op_a > 0 ? b->op_a : SIM_ACTIVE_A) : idle_a;
	/* The shared SRAM's static current (ergon_sim_options.memory_mode). */
	if (b->o.memory_mode == 1)
		i_a -= ERGON_SIM_SSRAM_HALF_A;
	else if (b->o.memory_mode == 2)
		i_a += ERGON_SIM_SSRAM_HALF_A;
	while (dt_ns > 0) {
		/* Step to the next packet boundary so INPUT0 is sampled finely
		 * enough to see 20 µs glitches (1 µs steps inside). */
		uint64_t to_packet = b->js_t0_ns + b->js_period_ns - b->now_ns;
		uint64_t step = dt_ns < to_packet ? dt_ns : to_packet;
		if (step > 1000u)
			step = 1000u;
		if (b->raw_ns > 0 && b->raw_t0_ns + b->raw_ns - b->now_ns < step)
			step = b->raw_t0_ns + b->raw_ns - b->now_ns;
		double s = (double)step * 1e-9;
		int g = gate_level(b, b->now_ns);
		b->js_q += i_a * s;
		b->js_e += i_a * SIM_RAIL_V * s;
		if (g) {
			b->js_in0_ns += (double)step;
			b->res->true_gate_high_s += s;
			b->res->true_window_energy_j += i_a * SIM_RAIL_V * s;
			if (b->mk_open)
				b->mk_e += i_a * SIM_RAIL_V * s;
		}
		b->raw_q += i_a * s;
		sim_ina228_advance(&b->ina, i_a, s);
		b->now_ns += step;
		dt_ns -= step;
		/* The probe polls the RTT up buffer on its own schedule. */
		if (b->f.rtt_up_size > 0 && b->now_ns >= b->rtt_next_poll_ns) {
			(void)rtt_drain(b);
			b->rtt_next_poll_ns += SIM_RTT_POLL_NS;
		}
		if (b->now_ns >= b->js_t0_ns + b->js_period_ns)
			js_emit(b);
		if (b->raw_ns > 0 && b->now_ns >= b->raw_t0_ns + b->raw_ns)
			raw_emit(b);
	}
}

static void record_edge(struct sim_board *b, uint8_t pin, int high)
{
	struct ergon_sim_result *r = b->res;
	if (r->n_edges < ERGON_SIM_MAX_EDGES)
		r->edges[r->n_edges++] = (struct ergon_sim_edge){b->now_ns, pin, (uint8_t)high};
}

/* --- the HAL ------------------------------------------------------------ */

/* RTT in drop mode: the target's ert_rtt_write into its ring (a full ring
 * drops the write and reports it at the next line start), the probe
 * draining every SIM_RTT_POLL_NS of true time. */
static int rtt_write(struct sim_board *b, const char *data, size_t len)
{
	if (b->oom)
		return -1;
	(void)ert_rtt_write(&b->rtt, data, len);
	b->res->bytes_sent += len;
	advance(b, SIM_RTT_NS_PER_BYTE * (uint64_t)len);
	return 0;
}

static int hal_write(void *ctx, const char *data, size_t len)
{
	struct sim_board *b = ctx;
	struct ergon_sim_result *r = b->res;
	if (b->f.rtt_up_size > 0)
		return rtt_write(b, data, len);
	if (b->f.fail_after > 0 && r->bytes_sent + len > b->f.fail_after)
		return -1;
	/* The reset lands between two writes: the stream stops there. */
	if (b->f.restart_after > 0 && !b->restarted && r->bytes_sent + len > b->f.restart_after)
		return -1;
	for (size_t i = 0; i < len; i++) {
		uint64_t pos = r->bytes_sent + i;
		int lost = (b->f.drop_len > 0 && pos >= b->f.drop_from &&
			    pos < b->f.drop_from + b->f.drop_len) ||
			   (b->f.drop_terminal && b->window_over);
		if (lost)
			continue;
		if (host_receive(b, data[i]) != 0)
			return -1;
	}
	r->bytes_sent += len;
	/* 1 MBd UART: 10 µs per byte, spent in the write. */
	advance(b, 10000u * (uint64_t)len);
	return 0;
}

static int hal_tx_pending(void *ctx, size_t *pending)
{
	struct sim_board *b = ctx;
	/* The UART's writes are synchronous; the RTT ring holds what the
	 * probe has not drained yet. */
	*pending = b->f.rtt_up_size > 0 ? ert_rtt_pending(&b->rtt) : 0;
	return 0;
}

static int hal_clock_us(void *ctx, uint32_t *now_us)
{
	struct sim_board *b = ctx;
	if (b->f.frozen_clock) {
		*now_us = (uint32_t)b->counter_frozen_us;
		return 0;
	}
	double t_us = (double)b->now_ns / 1000.0 * (1.0 + b->f.clock_drift);
	*now_us = (uint32_t)(uint64_t)t_us;
	return 0;
}

static int hal_cycles(void *ctx, uint32_t *now)
{
	struct sim_board *b = ctx;
	*now = (uint32_t)(uint64_t)b->counter;
	return 0;
}

/* Spend `cycles` of core work (not an inference: the counter is healthy). */
static void spend_idle_ns(struct sim_board *b, uint64_t ns)
{
	/* ns x Hz / 1e9 keeps whole-µs intervals exact in double. */
	double c = (double)ns * SIM_CORE_HZ * b->f.core_speed / 1e9;
	b->cycles += c;
	b->counter += c;
	advance(b, ns);
}

static int hal_delay_us(void *ctx, uint32_t us)
{
	struct sim_board *b = ctx;
	/* delay_us is timed by the window clock: with drift, one "µs" of it
	 * is 1/(1+drift) true µs. A frozen clock would hang real hardware;
	 * the model spends the nominal time so the bounds stay testable. */
	double ns = (double)us * 1000.0 / (1.0 + b->f.clock_drift);
	spend_idle_ns(b, (uint64_t)ns);
	return 0;
}

/* The marker wire moves to `high`: the truth interval between two edges
 * inside the gate closes and the next opens. */
static void marker_move(struct sim_board *b, int high)
{
	struct ergon_sim_result *r = b->res;
	b->pins[b->o.marker_pin] = high;
	if (!gate_level(b, b->now_ns))
		return;
	if (b->mk_open) {
		if (r->n_marks >= b->mk_cap) {
			size_t cap = b->mk_cap ? 2 * b->mk_cap : 1024;
			struct ergon_sim_mark *m = realloc(r->marks, cap * sizeof *m);
			if (m == NULL) {
				b->oom = 1;
				return;
			}
			r->marks = m;
			b->mk_cap = cap;
		}
		r->marks[r->n_marks++] = (struct ergon_sim_mark){
		    (double)b->mk_t0_ns * 1e-9, (double)b->now_ns * 1e-9, b->mk_e};
	}
	b->mk_open = 1;
	b->mk_t0_ns = b->now_ns;
	b->mk_e = 0;
}

/* The firmware writes the marker pin: a toggle (a change of level) is
 * counted; the faults lose one or add one; every write costs
 * ERGON_SIM_MARKER_NS of core time after the pin moves. */
static void marker_write(struct sim_board *b, int high)
{
	int now = b->pins[b->o.marker_pin];
	int want = (high != 0) ^ b->mk_invert;
	if (want != now) {
		b->res->marker_toggles++;
		b->mk_asked++;
		if (b->f.marker_skip_at > 0 && b->mk_asked == b->f.marker_skip_at)
			b->mk_invert ^= 1; /* the meter never sees this one */
		else
			marker_move(b, want);
		if (b->f.marker_extra_at > 0 && b->mk_asked == b->f.marker_extra_at)
			b->mk_extra_due = 1;
	}
	spend_idle_ns(b, ERGON_SIM_MARKER_NS);
}

static int hal_gpio_set(void *ctx, uint8_t pin, int high)
{
	struct sim_board *b = ctx;
	if (pin == 0 || pin >= 16)
		return -1;
	if (pin == b->o.marker_pin) {
		marker_write(b, high);
		return 0;
	}
	int gate = pin == b->o.gate_pin;
	int state = pin == b->o.state_pin;
	if (gate && !high && b->pins[pin]) {
		b->window_over = 1;
		b->mk_open = 0; /* the interval after the last edge is not a layer's */
	}
	if (gate && !high && b->f.gate_stuck_high && b->pins[pin])
		return 0; /* the pin does not move; the runtime reads it back */
	if (b->pins[pin] != (high != 0)) {
		b->pins[pin] = high != 0;
		/* The edges are what the instrument's inputs see: an open
		 * state wire shows nothing, and the host never sends GO. */
		if (!(state && b->f.ready_wire_open))
			record_edge(b, pin, high != 0);
	}
	if (state && high && !b->go_armed && !b->f.ready_wire_open) {
		b->go_armed = 1;
		b->ready_ns = b->now_ns;
	}
	return 0;
}

static int hal_gpio_get(void *ctx, uint8_t pin, int *high)
{
	struct sim_board *b = ctx;
	if (pin == 0 || pin >= 16)
		return -1;
	if (pin == b->o.go_pin) {
		/* The host raises GO a fixed delay after it sees READY. */
		*high = !b->f.go_never && b->go_armed && b->now_ns >= b->ready_ns + SIM_GO_DELAY_NS;
		return 0;
	}
	*high = b->pins[pin];
	return 0;
}

static int hal_i2c_read(void *ctx, uint8_t addr7, uint8_t reg, uint8_t *data, size_t len)
{
	struct sim_board *b = ctx;
	/* NACK: no device answers at that address, or on that I2C master. */
	if (addr7 != b->o.ina228_board_addr7 || b->o.ina228_iom != b->o.ina228_board_iom)
		return -1;
	/* 400 kHz I2C: ~25 µs per byte plus address and register. */
	spend_idle_ns(b, 25000u * (uint64_t)(len + 2));
	if (b->f.energy_read_nack && reg == ERT_INA228_REG_ENERGY)
		return -1;
	return sim_ina228_read(&b->ina, reg, data, len);
}

static int hal_i2c_write(void *ctx, uint8_t addr7, uint8_t reg, const uint8_t *data, size_t len)
{
	struct sim_board *b = ctx;
	if (addr7 != b->o.ina228_board_addr7 || b->o.ina228_iom != b->o.ina228_board_iom)
		return -1;
	spend_idle_ns(b, 25000u * (uint64_t)(len + 2));
	if (b->f.shunt_cal_nack && reg == ERT_INA228_REG_SHUNT_CAL)
		return -1;
	/* CONFIG is big-endian on the bus: RSTACC (bit 14) is in the first byte. */
	if (b->f.rstacc_nack && reg == ERT_INA228_REG_CONFIG && len == 2 &&
	    ((unsigned)data[0] << 8 & ERT_INA228_CONFIG_RSTACC) != 0)
		return -1;
	return sim_ina228_write(&b->ina, reg, data, len);
}

/* PMU model: each event counts a fixed fraction of the core's cycles. */
static double pmu_rate(uint16_t event)
{
	switch (event) {
	case 0x0008: /* INST_RETIRED */
		return 0.5;
	case 0x0013: /* MEM_ACCESS */
		return 0.25;
	case 0x0004: /* L1D_CACHE */
		return 0.125;
	default:
		return 0.0625;
	}
}

static int hal_pmu_configure(void *ctx, const uint16_t *events, unsigned n)
{
	struct sim_board *b = ctx;
	if (n > ERT_PMU_PASS_COUNTERS)
		return -1;
	for (unsigned i = 0; i < n; i++)
		b->pmu_events[i] = events[i];
	b->pmu_n = n;
	b->pmu_base_cycles = b->cycles;
	return 0;
}

static int hal_pmu_read(void *ctx, uint32_t *counts, unsigned n, int *overflow)
{
	struct sim_board *b = ctx;
	*overflow = 0;
	for (unsigned i = 0; i < n && i < b->pmu_n; i++) {
		double c = (b->cycles - b->pmu_base_cycles) * pmu_rate(b->pmu_events[i]) +
			   (b->f.pmu_preload ? 4294967296.0 - b->f.pmu_preload : 0.0);
		if (c >= 4294967296.0) {
			*overflow = 1;
			c -= 4294967296.0;
		}
		counts[i] = (uint32_t)c;
	}
	return 0;
}

/* --- the workload ---------------------------------------------------------- */

/* c cycles of inference work: the core runs them, the counter shows what
 * its faults let it show, and time passes. */
static void spend_infer_cycles_once(struct sim_board *b, double c);

static void spend_infer_cycles(struct sim_board *b, double c)
{
	if (b->mk_extra_due) {
		/* The extra edge half way through the layer. */
		b->mk_extra_due = 0;
		spend_infer_cycles_once(b, c / 2);
		b->mk_invert ^= 1;
		marker_move(b, !b->pins[b->o.marker_pin]);
		spend_infer_cycles_once(b, c - c / 2);
		return;
	}
	spend_infer_cycles_once(b, c);
}

static void spend_infer_cycles_once(struct sim_board *b, double c)
{
	double ns = c / (SIM_CORE_HZ * b->f.core_speed) * 1e9;
	b->cycles += c;
	double shown = c;
	if (b->f.stalled_counter)
		shown = 0.0;
	else if (b->f.slow_counter && (b->n_infer % 2u) == 1u)
		shown = c / 16.0;
	b->counter += shown;
	advance(b, (uint64_t)ns);
}

static int sim_infer(void *user)
{
	struct sim_board *b = user;
	b->busy = 1;
	for (unsigned l = 0; l < 3; l++) {
		ert_layer_begin((uint16_t)l, layer_ops[l]);
		/* marker_short moves all but 2400 of layer 2's cycles into
		 * layer 1: the inference keeps its length. */
		double c = layer_cycles[l];
		if (b->f.marker_short && l > 0)
			c = l == 1 ? c + layer_cycles[2] - 2400.0 : 2400.0;
		spend_infer_cycles(b, c);
		ert_layer_end();
	}
	b->busy = 0;
	b->n_infer++;
	return 0;
}

/* The modelled cycles of one operator (sim.h). */
static double op_cycles(const struct ert_tfl_model *m, const struct ert_tfl_op *op)
{
	return ERGON_SIM_CYCLES_PER_MAC * (double)op->macs + (double)m->tensors[op->out].bytes +
	       ERGON_SIM_CYCLES_PER_OP;
}

/* The interpreter's hook after each operator (ert_tfl_model.op_done). */
static void sim_op_done(void *ctx, const struct ert_tfl_op *op)
{
	struct sim_board *b = ctx;
	b->op_a = ergon_sim_op_current_a(ert_tfl_op_name(op->opcode));
	spend_infer_cycles(b, op_cycles(&b->model->tfl, op));
	b->op_a = 0;
}

/* One inference of the model, as the an547 model firmware runs it: the
 * input copied in first (the plan may reuse its bytes). */
static int sim_infer_model(void *user)
{
	struct sim_board *b = user;
	struct sim_model *m = b->model;
	uint32_t n = 0;
	uint8_t *in = ert_tfl_input(&m->tfl, 0, &n);
	if (in == NULL || n != m->input_len)
		return -1;
	memcpy(in, m->input, n);
	b->busy = 1;
	int rc = ert_tfl_invoke(&m->tfl);
	b->busy = 0;
	b->n_infer++;
	return rc == ERT_TFL_OK ? 0 : -1;
}

static void sim_model_free(struct sim_model *m)
{
	if (m == NULL)
		return;
	free(m->bytes);
	free(m->arena);
	free(m->input);
	free(m);
}

/* Read, load and bind the model at path, and make its input. *out is the
 * caller's (sim_model_free). */
static int sim_model_open(const char *path, struct sim_model **out, struct ergon_err *err)
{
	*out = NULL;
	struct sim_model *m = calloc(1, sizeof *m);
	if (m == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	int rc = ergon_file_read_all(path, SIM_MODEL_MAX_BYTES, &m->bytes, &m->len, err);
	struct ert_tfl_err te = {0};
	if (rc == 0 && ert_tfl_load(&m->tfl, m->bytes, m->len, &te) != ERT_TFL_OK)
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "%s: the virtual bench's interpreter refuses the model: %s",
				   path, te.msg);
	if (rc == 0) {
		m->arena = malloc(m->tfl.arena_bytes > 0 ? m->tfl.arena_bytes : 1);
		if (m->arena == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	}
	if (rc == 0 && ert_tfl_bind(&m->tfl, m->arena, m->tfl.arena_bytes, &te) != ERT_TFL_OK)
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: %s", path, te.msg);
	if (rc == 0 && ert_tfl_input(&m->tfl, 0, &m->input_len) == NULL)
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: the model has no input 0", path);
	if (rc == 0) {
		m->input = malloc(m->input_len > 0 ? m->input_len : 1);
		rc = m->input ? ergon_model_pattern("xs1", m->input, m->input_len, err)
			      : ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	}
	if (rc) {
		sim_model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* --- scenarios ----------------------------------------------------------- */

struct scenario {
	const char *name;
	int flow;
	int lockstep;
	struct sim_faults f;
};

#define NOMINAL .core_speed = 1.0
static const struct scenario scenarios[] = {
    {"baseline_profile", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL}},
    {"baseline_power", ERGON_SIM_FLOW_POWER_EXTERNAL, 1, {NOMINAL}},
    {"baseline_ina228", ERGON_SIM_FLOW_POWER_INA228, 1, {NOMINAL}},
    {"stalled_counter", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .stalled_counter = 1}},
    {"slow_counter", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .slow_counter = 1}},
    {"uniform_slowdown", ERGON_SIM_FLOW_PROFILE, 0, {.core_speed = 0.25}},
    {"frozen_window_clock", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .frozen_clock = 1}},
    {"hfrc_drift", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .clock_drift = 0.05}},
    {"window_clock_fast", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .clock_drift = 19.0}},
    {"window_clock_slow", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .clock_drift = -0.4}},
    {"core_clock_drift", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {.core_speed = 0.92}},
    /* An inference of 0.5 us on the window clock's 1 us resolution: the
     * profile boot reports CLEAN_INFER_AVG_US=0. */
    {"zero_time_inference", ERGON_SIM_FLOW_PROFILE, 0, {.core_speed = 2000.0}},
    {"packets_lost_in_window", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .js_gap = 1}},
    {"gate_never_falls", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .gate_stuck_high = 1}},
    {"gate_glitches", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .glitches = 1}},
    {"go_never_arrives", ERGON_SIM_FLOW_POWER_EXTERNAL, 1, {NOMINAL, .go_never = 1}},
    {"lost_terminal_record", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .drop_terminal = 1}},
    /* The record is lost and the power boot's window clock runs at half
     * rate: its auto window runs twice the profile boot's count x
     * reference, which the ratio check alone must catch. */
    {"lost_record_slow_window_clock",
     ERGON_SIM_FLOW_POWER_EXTERNAL,
     0,
     {NOMINAL, .clock_drift = -0.5, .drop_terminal = 1}},
    {"ready_wire_open", ERGON_SIM_FLOW_POWER_EXTERNAL, 1, {NOMINAL, .ready_wire_open = 1}},
    {"ina228_wrong_id", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .ina = {.device_id = 0x2271}}},
    {"ina228_shunt_cal_zero",
     ERGON_SIM_FLOW_POWER_INA228,
     0,
     {NOMINAL, .ina = {.shunt_cal_stuck_zero = 1}}},
    {"ina228_shunt_cal_nack", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .shunt_cal_nack = 1}},
    {"ina228_arm_fails", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .rstacc_nack = 1}},
    {"ina228_read_fails", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .energy_read_nack = 1}},
    {"ina228_reversed_sense",
     ERGON_SIM_FLOW_POWER_INA228,
     0,
     {NOMINAL, .ina = {.reversed_sense = 1}}},
    {"ina228_accumulator_overflow",
     ERGON_SIM_FLOW_POWER_INA228,
     0,
     {NOMINAL, .ina = {.preload_lsb_below_full = 50}}},
    {"transport_bytes_dropped",
     ERGON_SIM_FLOW_PROFILE,
     0,
     {NOMINAL, .drop_from = 400, .drop_len = 37}},
    {"transport_write_fails", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .fail_after = 300}},
    {"pmu_presets", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .pmu = 1}},
    {"pmu_counter_overflow", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .pmu = 1, .pmu_preload = 1000}},
    {"no_cycle_counter", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .no_cycle_counter = 1}},
    /* A port without a PMU whose firmware was built with counter presets. */
    {"pmu_unit_missing", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .pmu_asked = 1}},
    /* The board resets mid-stream and its second boot sends HPX_START again. */
    {"target_restart", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .restart_after = 1000}},
    /* RTT in drop mode with a 256-byte up buffer drained every 1 ms. */
    {"rtt_drop_mode", ERGON_SIM_FLOW_PROFILE, 0, {NOMINAL, .rtt_up_size = 256}},
    /* The idle loop draws 6 mA, more than an inference's 5 mA. */
    {"idle_above_inference", ERGON_SIM_FLOW_POWER_EXTERNAL, 0, {NOMINAL, .idle_a = 0.006}},
    /* External run; the firmware's on-board INA228 overflows (preload). */
    {"ina228_bystander_overflow",
     ERGON_SIM_FLOW_POWER_EXTERNAL,
     0,
     {NOMINAL, .ina228_bystander = 1, .ina = {.preload_lsb_below_full = 50}}},
    /* Layer markers on D1 of a 100 kSPS raw meter, with one fault each:
     * the 17th toggle of the window never reaches the meter (inference 5
     * of 20 shows 2 edges instead of 3), an extra toggle half way through
     * the layer after the 25th (inference 8 shows 4), the third layer
     * lasts 25 us (2.5 samples, below the minimum) and the second 475 us. */
    {"marker_missing_edge",
     ERGON_SIM_FLOW_POWER_EXTERNAL,
     0,
     {NOMINAL, .markers = 1, .marker_skip_at = 17}},
    {"marker_extra_edge",
     ERGON_SIM_FLOW_POWER_EXTERNAL,
     0,
     {NOMINAL, .markers = 1, .marker_extra_at = 25}},
    {"marker_short_layer",
     ERGON_SIM_FLOW_POWER_EXTERNAL,
     0,
     {NOMINAL, .markers = 1, .marker_short = 1}},
    /* IN+/IN- not connected: zero energy and charge, VBUS right. */
    {"ina228_sense_open", ERGON_SIM_FLOW_POWER_INA228, 0, {NOMINAL, .ina = {.sense_open = 1}}},
};
#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

const char *const *ergon_sim_scenarios(void)
{
	static const char *names[N_SCENARIOS + 1];
	for (size_t i = 0; i < N_SCENARIOS; i++)
		names[i] = scenarios[i].name;
	names[N_SCENARIOS] = NULL;
	return names;
}

int ergon_sim_scenario_power_checked(const char *scenario)
{
	/* Profile-boot faults that only the power stage's checks can see. */
	static const char *const power_checked[] = {"zero_time_inference"};
	for (size_t i = 0; scenario != NULL && i < sizeof power_checked / sizeof power_checked[0];
	     i++)
		if (strcmp(power_checked[i], scenario) == 0)
			return 1;
	return 0;
}

int ergon_sim_scenario_markers(const char *scenario)
{
	for (size_t i = 0; scenario != NULL && i < N_SCENARIOS; i++)
		if (strcmp(scenarios[i].name, scenario) == 0)
			return scenarios[i].f.markers;
	return 0;
}

int ergon_sim_scenario_ina228_bystander(const char *scenario)
{
	for (size_t i = 0; scenario != NULL && i < N_SCENARIOS; i++)
		if (strcmp(scenarios[i].name, scenario) == 0)
			return scenarios[i].f.ina228_bystander;
	return 0;
}

static void fill_hal(struct ert_hal *h, struct sim_board *b)
{
	*h = (struct ert_hal){
	    .ctx = b,
	    .write = hal_write,
	    .tx_pending = hal_tx_pending,
	    .clock_us = hal_clock_us,
	    .cycles = b->f.no_cycle_counter ? NULL : hal_cycles,
	    .delay_us = hal_delay_us,
	    .gpio_set = hal_gpio_set,
	    .gpio_get = hal_gpio_get,
	    .i2c_read = hal_i2c_read,
	    .i2c_write = hal_i2c_write,
	    .pmu_configure = b->f.pmu ? hal_pmu_configure : NULL,
	    .pmu_read = b->f.pmu ? hal_pmu_read : NULL,
	    .core_clock_hz = (uint32_t)SIM_CORE_HZ,
	    .max_gpio_pin = 15,
	};
}

static int run_flow(const struct scenario *sc, struct sim_board *b, const struct ert_hal *hal)
{
	struct sim_model *m = b->model;
	const struct ert_workload work = {m ? sim_infer_model : sim_infer, b};
	/* The shared power firmware is the profile build (sim.h). */
	int shared = b->o.shared_power && sc->flow == ERGON_SIM_FLOW_POWER_EXTERNAL;
	if (sc->flow == ERGON_SIM_FLOW_PROFILE || shared) {
		static struct ert_layers layers;
		/* Two passes, as the host's pass plan would split them. */
		static const struct ert_preset presets[2] = {
		    {.name = "cpu",
		     .n_events = 2,
		     .events = {0x0008, 0x0013},
		     .event_names = {"ARM_PMU_INST_RETIRED", "ARM_PMU_MEM_ACCESS"}},
		    {.name = "mem",
		     .n_events = 1,
		     .events = {0x0004},
		     .event_names = {"ARM_PMU_L1D_CACHE"}},
		};
		struct ert_profile_config cfg = {
		    .presets = sc->f.pmu || sc->f.pmu_asked ? presets : NULL,
		    .n_presets = sc->f.pmu || sc->f.pmu_asked ? 2u : 0u,
		    .model_size = 1234,
		    .arena_size = 4096,
		    .allocated_arena = 2048,
		    .warmup = b->o.warmup,
		    .iterations = b->o.profile_iterations,
		    .heartbeat_every_iters = b->o.heartbeat_every_iters,
		    .heartbeat_every_ops = b->o.heartbeat_every_ops,
		    .heartbeat_every_ms = b->o.heartbeat_every_ms,
		    .clean_window = 1,
		    .window = {.mode = b->o.window_mode,
			       .window_target_ms = b->o.window_target_ms,
			       .window_min = b->o.window_min,
			       .window_max = b->o.window_max,
			       .iterations = b->o.iterations,
			       .rate_probe_us = 1000,
			       .drain_wait_max_us =
				   b->o.attach_wait_set ? b->o.attach_wait_ms * 1000u : 1000u,
			       .trace = b->o.clean_window_trace != 0 || shared},
		    .clock_note = "virtual bench: simulated time",
		    .window_gate_pin = shared ? b->o.gate_pin : 0,
		};
		if (m != NULL) {
			/* As the model firmware does: output 0 of a first
			 * inference for the host's check, then the profile. */
			if (sim_infer_model(b) != 0)
				return ERT_E_WORKLOAD;
			uint32_t n = 0;
			const uint8_t *out = ert_tfl_output(&m->tfl, 0, &n);
			m->meta[0] = (struct ert_meta_u){"MODEL_OUTPUT_BYTES", n};
			m->meta[1] = (struct ert_meta_u){"MODEL_OUTPUT_FNV1A64",
							 ergon_model_fnv1a64(out, n)};
			m->meta[2] = (struct ert_meta_u){"MODEL_OPERATORS", m->tfl.n_ops};
			m->meta[3] = (struct ert_meta_u){"MODEL_MACS", m->tfl.total_macs};
			cfg.extra_meta = m->meta;
			cfg.n_extra_meta = 4;
			cfg.model_size = (uint32_t)m->len;
			cfg.arena_size = m->tfl.arena_bytes;
			cfg.allocated_arena = m->tfl.arena_bytes;
			cfg.clock_note =
			    "virtual bench: simulated time; the model's operators cost "
			    "modelled cycles (2 per MAC + 1 per output byte + 500), "
			    "not measured ones";
		}
		struct ert_profile_stats st;
		if (sc->f.restart_after > 0) {
			/* The first boot stops at the reset (its next write fails);
			 * the board reboots with its cycle counter at 0 and runs
			 * the whole flow again on the same stream. */
			(void)ert_profile_run(hal, &cfg, &work, &layers, &st);
			b->restarted = 1;
			b->counter = 0.0;
		}
		int rc = ert_profile_run(hal, &cfg, &work, &layers, &st);
		/* What the probe has not drained yet, after the flow ends. */
		if (sc->f.rtt_up_size > 0 && rtt_drain(b) != 0)
			return ERT_E_TRANSPORT;
		return rc;
	}
	struct ert_power_config cfg = {
	    .warmup = b->o.warmup,
	    .window = {.mode = b->o.window_mode,
		       .window_target_ms = b->o.window_target_ms,
		       .window_min = b->o.window_min,
		       .window_max = b->o.window_max,
		       .iterations = b->o.iterations,
		       .rate_probe_us = 1000,
		       .busy_loop = b->o.busy_loop_us > 0,
		       .busy_loop_us = b->o.busy_loop_us},
	    .sync = {.gate_pin = b->o.gate_pin},
	    /* A bystander INA228: the firmware reads its on-board chip while
	     * the host's meter on the gate owns the figures. */
	    .source = sc->flow == ERGON_SIM_FLOW_POWER_INA228 || sc->f.ina228_bystander
			  ? ERT_SOURCE_INA228
			  : ERT_SOURCE_EXTERNAL,
	    .ina228 = {.addr7 = b->o.ina228_addr7,
		       .shunt_ohms = b->o.shunt_ohms,
		       .max_current_a = b->o.max_current_a,
		       .conv_time_us = b->o.conv_time_us,
		       .averages = b->o.averages},
	    .calibration_id = b->o.calibration_id,
	    .marker = {.pin = b->o.marker_pin},
	};
	for (unsigned w = 0; w < 8; w++)
		cfg.marker.mask[w] = b->o.marker_mask[w];
	/* Lock-step as configured; the scenarios about the handshake need it. */
	int lockstep = b->o.lockstep < 0 ? sc->lockstep
					 : b->o.lockstep || sc->f.go_never || sc->f.ready_wire_open;
	if (lockstep) {
		cfg.sync.state_pin = b->o.state_pin;
		cfg.sync.go_pin = b->o.go_pin;
		cfg.sync.go_timeout_us = 50000;
		cfg.sync.go_poll_us = 100;
	}
	int rc = ert_power_run(hal, &cfg, &work);
	b->res->terminal = ert_power_terminal;
	return rc;
}

void ergon_sim_options_default(struct ergon_sim_options *o)
{
	*o = (struct ergon_sim_options){
	    .window_mode = ERT_WINDOW_FIXED,
	    .window_target_ms = 1000,
	    .window_min = 10,
	    .window_max = 500000,
	    .iterations = SIM_WINDOW_ITERATIONS,
	    .warmup = 2,
	    .profile_iterations = 3,
	    .heartbeat_every_iters = 2,
	    .gate_pin = SIM_GATE_PIN,
	    .state_pin = SIM_STATE_PIN,
	    .go_pin = SIM_GO_PIN,
	    .lockstep = -1,
	    .ina228_addr7 = SIM_INA228_ADDR,
	    .ina228_board_addr7 = SIM_INA228_ADDR,
	    .ina228_iom = ERGON_SIM_INA228_IOM,
	    .ina228_board_iom = ERGON_SIM_INA228_IOM,
	    .shunt_ohms = SIM_SHUNT_OHMS,
	    .max_current_a = SIM_MAX_CURRENT_A,
	    .conv_time_us = 50,
	    .averages = 1,
	    .calibration_id = "sim-bench",
	    .js_stats_rate_hz = SIM_JS_RATE_HZ,
	};
}

/* The samples per packet for hz, or 0 when the simulated JS220 cannot give
 * it (1e6 / hz not a whole number in SIM_JS_MIN_SPP..1e6). */
static uint64_t js_spp_of(double hz)
{
	if (!(hz > 0) || !isfinite(hz))
		return 0;
	double n = (double)SIM_JS_SAMPLE_HZ / hz;
	double whole = floor(n + 0.5);
	if (!(whole >= SIM_JS_MIN_SPP && whole <= SIM_JS_SAMPLE_HZ) || fabs(n - whole) > 1e-9 * n)
		return 0;
	return (uint64_t)whole;
}

int ergon_sim_check_stats_rate(double hz, const char *where, struct ergon_err *err)
{
	if (js_spp_of(hz) != 0)
		return 0;
	char rates[400] = "";
	size_t o = 0;
	for (uint64_t r = SIM_JS_SAMPLE_HZ / SIM_JS_MIN_SPP; r >= 1 && o + 16 < sizeof rates; r--)
		if (SIM_JS_SAMPLE_HZ % r == 0)
			o += (size_t)snprintf(rates + o, sizeof rates - o, "%s%llu", o ? ", " : "",
					      (unsigned long long)r);
	return ergon_err_set(err, ERGON_ECONFIG,
			     "%s: power.stats_rate_hz %g: the virtual bench's simulated Joulescope "
			     "cannot give that "
			     "rate: like a JS220 it sums a whole number N of its 1,000,000 samples "
			     "a second into each statistics packet, N = %u..1,000,000, so it gives "
			     "1,000,000 / N packets a second; the whole rates among them: %s Hz",
			     where, hz, SIM_JS_MIN_SPP, rates);
}

int ergon_sim_run(const char *scenario, struct ergon_sim_result *res, struct ergon_err *err)
{
	return ergon_sim_run_opts(scenario, NULL, res, err);
}

int ergon_sim_run_opts(const char *scenario, const struct ergon_sim_options *opts,
		       struct ergon_sim_result *res, struct ergon_err *err)
{
	const struct scenario *sc = NULL;
	*res = (struct ergon_sim_result){0};
	for (size_t i = 0; scenario != NULL && i < N_SCENARIOS; i++)
		if (strcmp(scenarios[i].name, scenario) == 0)
			sc = &scenarios[i];
	if (sc == NULL) {
		char names[1024] = "";
		size_t used = 0;
		for (size_t i = 0; i < N_SCENARIOS && used < sizeof names; i++) {
			size_t n = strlen(scenarios[i].name);
			if (used + n + 2 >= sizeof names)
				break;
			memcpy(names + used, scenarios[i].name, n);
			used += n;
			if (i + 1 < N_SCENARIOS) {
				names[used++] = ',';
				names[used++] = ' ';
			}
			names[used] = '\0';
		}
		const char *cands[N_SCENARIOS];
		for (size_t i = 0; i < N_SCENARIOS; i++)
			cands[i] = scenarios[i].name;
		const char *near =
		    scenario ? ergon_suggest_nearest(scenario, cands, N_SCENARIOS) : NULL;
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--sim-scenario: unknown scenario '%s'%s%s%s; use one of: %s",
				     scenario ? scenario : "(null)", near ? " (did you mean '" : "",
				     near ? near : "", near ? "'?)" : "", names);
	}
	double js_hz =
	    opts != NULL && opts->js_stats_rate_hz > 0 ? opts->js_stats_rate_hz : SIM_JS_RATE_HZ;
	int crc = ergon_sim_check_stats_rate(js_hz, "virtual bench", err);
	if (crc)
		return crc;
	struct sim_model *model = NULL;
	if (opts != NULL && opts->model_path != NULL) {
		int mrc = sim_model_open(opts->model_path, &model, err);
		if (mrc)
			return mrc;
	}
	struct sim_board *b = calloc(1, sizeof *b);
	res->stream = malloc(SIM_STREAM_MAX);
	res->js = calloc(SIM_JS_MAX_PACKETS, sizeof *res->js);
	res->stats = calloc(SIM_JS_MAX_PACKETS, sizeof *res->stats);
	if (b == NULL || res->stream == NULL || res->js == NULL || res->stats == NULL) {
		free(b);
		sim_model_free(model);
		ergon_sim_result_cleanup(res);
		return ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	}
	res->stream[0] = '\0';
	res->scenario = sc->name;
	res->flow = sc->flow;
	b->js_spp = js_spp_of(js_hz);
	b->js_period_ns = b->js_spp * (1000000000u / SIM_JS_SAMPLE_HZ);
	res->js_period_s = (double)b->js_period_ns * 1e-9;
	res->core_hz_nominal = SIM_CORE_HZ;
	res->rail_v = SIM_RAIL_V;
	if (opts != NULL)
		b->o = *opts;
	else
		ergon_sim_options_default(&b->o);
	/* What the host knows of the count without the terminal record. */
	res->window_iterations = b->o.window_mode == ERT_WINDOW_FIXED ? b->o.iterations : 0;
	res->active_current_a = SIM_ACTIVE_A;
	res->infer_cycles = (uint64_t)layer_cycles[0] + layer_cycles[1] + layer_cycles[2];
	if (model != NULL) {
		double c = 0;
		for (unsigned i = 0; i < model->tfl.n_ops; i++)
			c += op_cycles(&model->tfl, &model->tfl.ops[i]);
		res->infer_cycles = (uint64_t)c;
		model->tfl.op_done = sim_op_done;
		model->tfl.op_done_ctx = b;
		b->model = model;
	}
	b->f = sc->f;
	b->res = res;
	if (sc->f.markers && b->o.marker_pin == 0)
		b->o.marker_pin = ERGON_SIM_MARKER_PIN;
	if (sc->f.markers && !(b->o.raw_rate_hz > 0))
		b->o.raw_rate_hz = 100000.0;
	if (b->o.raw_rate_hz > 0) {
		double ns = 1e9 / b->o.raw_rate_hz;
		if (!isfinite(ns) || ns < 1.0 || fabs(ns - floor(ns + 0.5)) > 1e-9 * ns) {
			double hz = b->o.raw_rate_hz;
			sim_model_free(model);
			free(b);
			ergon_sim_result_cleanup(res);
			return ergon_err_set(err, ERGON_EUSAGE,
					     "virtual bench: raw meter rate %g Hz: the span of a "
					     "sample must be a whole number of ns (e.g. 100000 for a "
					     "PPK2, 1000000)",
					     hz);
		}
		b->raw_ns = (uint64_t)floor(ns + 0.5);
		res->raw_rate_hz = 1e9 / (double)b->raw_ns;
	}
	b->stream_cap = SIM_STREAM_MAX;
	/* Glitches at 1 ms and 1.5 ms, during warmup, long before the window. */
	b->next_glitch_ns[0] = 1000000u;
	b->next_glitch_ns[1] = 1500000u;
	sim_ina228_init(&b->ina, b->o.shunt_ohms, SIM_RAIL_V, &sc->f.ina);
	if (sc->f.rtt_up_size > 0) {
		uint32_t up =
		    sc->f.rtt_up_size < SIM_RTT_UP_MAX ? sc->f.rtt_up_size : SIM_RTT_UP_MAX;
		ert_rtt_init(&b->rtt, b->rtt_up, up, b->rtt_down, sizeof b->rtt_down, ERT_RTT_DROP,
			     0);
		b->rtt_next_poll_ns = SIM_RTT_POLL_NS;
	}
	struct ert_hal hal;
	fill_hal(&hal, b);
	res->status = run_flow(sc, b, &hal);
	res->host_envelope_s = (double)b->now_ns * 1e-9;
	/* Let the meter see a little idle tail after the flow ends. */
	advance(b, 1000000u);
	res->inferences = b->n_infer;
	int oom = b->oom;
	sim_model_free(model);
	free(b);
	if (oom) {
		ergon_sim_result_cleanup(res);
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "virtual bench: scenario %s wrote more than %u bytes",
				     sc->name, SIM_STREAM_MAX);
	}
	return 0;
}

void ergon_sim_result_cleanup(struct ergon_sim_result *res)
{
	if (res == NULL)
		return;
	free(res->stream);
	free(res->js);
	free(res->stats);
	free(res->raw_current_a);
	free(res->raw_digital);
	free(res->marks);
	res->raw_current_a = NULL;
	res->raw_digital = NULL;
	res->marks = NULL;
	res->n_raw = res->n_marks = 0;
	res->stream = NULL;
	res->js = NULL;
	res->stats = NULL;
	res->stream_len = res->n_js = 0;
}

size_t ergon_sim_rising_edges(const struct ergon_sim_result *res, uint8_t pin)
{
	size_t n = 0;
	for (size_t i = 0; i < res->n_edges; i++)
		if (res->edges[i].pin == pin && res->edges[i].high)
			n++;
	return n;
}

size_t ergon_sim_js_in0_rising(const struct ergon_sim_result *res)
{
	size_t n = 0;
	int prev = 0;
	for (size_t i = 0; i < res->n_js; i++) {
		int hi = res->js[i].in0 > 0.0;
		if (hi && !prev)
			n++;
		prev = hi;
	}
	return n;
}

/* The virtual bench: the target runtime on a simulated board.
 *
 * A virtual clock advanced by a simulated inference workload, GPIO edges
 * with virtual timestamps, an I2C bus carrying a register-level INA228
 * model, a simulated Joulescope that watches the gate (INPUT0) and the
 * current model and emits statistics packets, and named fault scenarios.
 * `ergon profile --board sim --sim-scenario NAME` is meant to call
 * ergon_sim_run; the tests in tests/unit/test_sim_*.c call it directly.
 *
 * Not part of the installed library API (docs/API.md): this header is not
 * installed, and its functions, which ergon's own commands and tests call
 * (they link the library statically), are not exported from libergon.so.
 */
#ifndef ERGON_SIM_H
#define ERGON_SIM_H

#include "ergon/error.h"
#include "ergon/ert_power.h"
#include "ergon/stream.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which runtime flow a scenario drives. */
enum ergon_sim_flow {
	ERGON_SIM_FLOW_PROFILE = 1,
	ERGON_SIM_FLOW_POWER_EXTERNAL = 2, /* Joulescope on the gate */
	ERGON_SIM_FLOW_POWER_INA228 = 3,   /* internal INA228 */
};

/* One Joulescope statistics packet: means over `period_s` ending at t_s,
 * with the accumulators since the capture started. */
struct ergon_sim_js_packet {
	double t_s;
	double current_a;
	double voltage_v;
	double power_w;
	double charge_c;
	double energy_j;
	double in0; /* fraction of the period INPUT0 (the gate) was high */
};

struct ergon_sim_edge {
	uint64_t t_ns;
	uint8_t pin;
	uint8_t high;
};

#define ERGON_SIM_MAX_EDGES 256

/* The truth of one interval between two consecutive marker edges inside
 * the gate (layer markers, ergon_sim_options.marker_pin): its true start
 * and end and the energy the rail delivered in it. */
struct ergon_sim_mark {
	double t_start_s, t_end_s;
	double energy_j;
};

struct ergon_sim_result {
	const char *scenario;
	int flow;
	int status;   /* the runtime's return (ert_status) */
	char *stream; /* bytes the host received (after any drops); malloc'd */
	size_t stream_len;
	uint64_t bytes_sent;		    /* bytes the target handed to the transport */
	struct ert_power_terminal terminal; /* the RAM record (power flows) */
	struct ergon_sim_edge edges[ERGON_SIM_MAX_EDGES]; /* first edges, in order (the
							   * marker pin's are in marks) */
	size_t n_edges;
	struct ergon_sim_js_packet *js;	  /* malloc'd */
	struct ergon_stats_packet *stats; /* the same packets as the gated engine
					   * takes them (digital bit 0 = INPUT0,
					   * high when INPUT0 was high at any time
					   * in the packet); malloc'd, n_js of them */
	size_t n_js;
	double js_period_s;
	/* Ground truth of the model, for tests. */
	double core_hz_nominal;
	double rail_v;
	double active_current_a;
	uint64_t infer_cycles;	     /* cycles one inference takes */
	double true_gate_high_s;     /* total time the gate pin was high */
	double true_window_energy_j; /* energy while the gate was high */
	uint64_t inferences;	     /* all inferences run (warmup included) */
	/* The fixed clean window the host configured (both boots): what the
	 * host knows of the count without the terminal record. */
	uint64_t window_iterations;
	/* True time from power-on to the last byte of the flow's output (the
	 * terminal record) leaving the board: what a host that times the
	 * power build from its start to collecting its record measures (the
	 * internal mode's host envelope, window_clock_ceiling). */
	double host_envelope_s;
	/* The raw meter (ergon_sim_options.raw_rate_hz > 0), a PPK2-like
	 * sampler: sample k covers [k/rate, (k+1)/rate) from power-on; its
	 * current is the mean over that span (the rail is raw_voltage_v), its
	 * digital inputs are the wires' levels at the span's start: bit 0 the
	 * gate (D0), bit 1 the marker line (D1). malloc'd, n_raw of each. */
	float *raw_current_a;
	uint8_t *raw_digital;
	size_t n_raw;
	double raw_rate_hz;
	/* Layer markers: the true intervals between consecutive marker edges
	 * inside the gate, in order (malloc'd), and the marker pin's toggles
	 * the firmware made (the end toggle included). */
	struct ergon_sim_mark *marks;
	size_t n_marks;
	uint64_t marker_toggles;
};

/* The resolved configuration a run honours, as the firmware would be built
 * with it (ergon_sim_options_default gives the scenarios' own settings,
 * which ergon_sim_run uses). The board is the virtual bench: the INA228
 * fitted on it carries the configured shunt (nothing else could tell the
 * model which shunt a user fitted) and answers at `ina228_board_addr7`
 * (a board preset's strap: 0x4A on the MikroE Click), so a firmware
 * configured with another address sees a NACK at ina228_init. */
struct ergon_sim_options {
	int window_mode; /* enum ert_window_mode */
	uint32_t window_target_ms, window_min, window_max;
	uint32_t iterations;	     /* the fixed window's count */
	uint32_t profile_iterations; /* the profile flow's per-layer (CSV) iterations */
	uint32_t warmup;
	uint8_t gate_pin, state_pin, go_pin; /* 0 = absent; the board has pins 1..15 */
	int lockstep;			     /* the firmware waits for GO (state and go pins) */
	uint8_t ina228_addr7;		     /* the firmware's configured address */
	uint8_t ina228_board_addr7;	     /* where the chip on the board answers */
	/* The I2C master (IOM) the firmware drives (power.ina228.i2c_iom)
	 * and the one the bench's INA228 is wired to (ERGON_SIM_INA228_IOM):
	 * on another IOM nothing answers (a NACK at ina228_init). */
	uint8_t ina228_iom, ina228_board_iom;
	double shunt_ohms, max_current_a;    /* the firmware's calibration = the fitted shunt */
	uint32_t conv_time_us, averages;
	/* Profile flow heartbeats (0 = off): every N iterations (the
	 * scenarios' own 2), every N operators, every M ms of the window clock
	 * (target.heartbeat.every_n_ops / every_ms). */
	uint32_t heartbeat_every_iters, heartbeat_every_ops, heartbeat_every_ms;
	/* profiling.clean_window_trace: the profile flow's clean window
	 * prints HPX_CLEAN_ITER=<n> after each inference (0: off). */
	int clean_window_trace;
	/* The firmware's calibration id (power.ina228.calibration_id; not
	 * owned, NULL or "": none). The scenarios' own: "sim-bench". */
	const char *calibration_id;
	/* A .tflite model the virtual firmware runs instead of its three
	 * simulated layers (NULL: those), as ergon's an547 model firmware
	 * does: the target runtime's interpreter (the same sources as the
	 * host's) on input pattern "xs1", output 0 of a first inference
	 * reported as HPX_MODEL_OUTPUT_BYTES / _FNV1A64. Simulated time per
	 * operator: ERGON_SIM_CYCLES_PER_MAC x its MACs + one cycle per output
	 * byte + ERGON_SIM_CYCLES_PER_OP, a model of cost, not a measurement.
	 * Borrowed; read at ergon_sim_run_opts. */
	const char *model_path;
	/* The simulated Joulescope's statistics packets per second
	 * (power.stats_rate_hz; 0: the scenarios' own 10000). Like a JS220 it
	 * sums a whole number N of its 1,000,000 samples a second into each
	 * packet, N = 100..1,000,000 (up to 10 kHz: its record of packets
	 * holds 20 s at that rate); any other rate is refused
	 * (ergon_sim_check_stats_rate). */
	double js_stats_rate_hz;
	/* Layer markers (power flows): the firmware's marker pin (0: none;
	 * ERGON_SIM_MARKER_PIN is the bench's wire to the meter's D1) and
	 * which layers it marks (ert_marker_config.mask; all zero: every
	 * layer). Each toggle costs ERGON_SIM_MARKER_NS of core time, a GPIO
	 * write's cost, so a marked and an unmarked run differ as on a board. */
	uint8_t marker_pin;
	uint32_t marker_mask[8];
	/* The raw meter's rate (0: none): a whole divisor of 1 GHz in ns
	 * (100,000 for a PPK2). At most ERGON_SIM_RAW_MAX samples are kept. */
	double raw_rate_hz;
	/* profiling.extreme_mode / force_shared_sram: the bench's shared SRAM.
	 * 0: half of it powered, as the board leaves it (its static current,
	 * ERGON_SIM_SSRAM_HALF_A, is part of the bench's 1 and 5 mA); 1
	 * (extreme mode): powered down, that current leaves every state; 2
	 * (force_shared_sram): the whole array retained, as much again. */
	int memory_mode;
	/* profiling.clean_window_probe busy_loop: the power boot's clean
	 * window spins busy_loop_us per count (the profile boot's inference
	 * time) instead of running inferences; 0: inferences. */
	uint32_t busy_loop_us;
	/* HPX_CLEAN_WINDOW_ATTACH_WAIT_MS: the longest the profile boot's
	 * clean window waits for the transport to drain before it opens
	 * (profiling.clean_window_attach_wait_ms; 0: no wait) when
	 * attach_wait_set, else the scenarios' 1 ms. */
	int attach_wait_set;
	uint32_t attach_wait_ms;
	/* power.firmware: shared: a power flow boots the profile build (the
	 * instrumented firmware) instead of the dedicated power build: its
	 * clean window raises the gate pin, prints its per-inference trace on
	 * the live transport inside the window (the build's traffic: 10 us a
	 * byte at the idle current) and leaves no terminal record. */
	int shared_power;
};

/* The bench's shared SRAM's static current, half of the array (a model of
 * cost, not a measurement): extreme mode takes it off every state,
 * force_shared_sram adds it again. */
#define ERGON_SIM_SSRAM_HALF_A 0.0001

#define ERGON_SIM_MARKER_PIN 6
/* The bench's INA228 is on I2C master 1 (power.ina228.i2c_iom's default). */
#define ERGON_SIM_INA228_IOM 1
#define ERGON_SIM_MARKER_NS 250u
#define ERGON_SIM_RAW_MAX ((size_t)32 << 20)

/* The current the virtual bench draws while an operator of a model runs
 * (ergon_sim_options.model_path), by operator kind: a model of cost, not a
 * measurement (docs/METHOD.md, "The virtual bench's operator currents"):
 * CONV_2D 6 mA, DEPTHWISE_CONV_2D 4 mA, FULLY_CONNECTED 5 mA, every other
 * kind 3 mA; the three simulated layers of the scenarios without a model
 * all draw 5 mA; idle 1 mA; the rail is 1.8 V. */
double ergon_sim_op_current_a(const char *op_name);

/* What a plan may expect of the bench before it runs (the power stage's
 * budget estimate, docs/UNCERTAINTY.md "Before measuring"): its rail, V,
 * and the current the scenarios' three simulated layers draw, A. */
double ergon_sim_rail_v(void);
double ergon_sim_active_current_a(void);

#define ERGON_SIM_CYCLES_PER_MAC 2.0
#define ERGON_SIM_CYCLES_PER_OP 500.0

/* 0 when the virtual bench's simulated Joulescope gives hz statistics
 * packets per second (1,000,000 / N, N a whole 100..1,000,000); else
 * ERGON_ECONFIG, "WHERE: power.stats_rate_hz HZ: ...", with the rule and
 * the whole rates it gives (where: what set it, e.g. "ergon.yml:4:3"). */
int ergon_sim_check_stats_rate(double hz, const char *where, struct ergon_err *err);

/* The scenarios' own settings: a fixed window of 20 inferences, warmup 2,
 * 3 profiled iterations, gate 3 / state 4 / go 5, 0.5 Ohm at 20 mA, 50 us x 1 at 0x40.
 * lockstep -1: as the scenario's table says. */
void ergon_sim_options_default(struct ergon_sim_options *o);
/* Run a scenario with the given settings (NULL: the defaults). Scenarios
 * that need lock-step (go_never_arrives, ready_wire_open) force it on. A
 * model (o->model_path) that cannot be read or that the interpreter
 * refuses fails here (ERGON_EIO / ERGON_EPARSE, naming the file and the
 * interpreter's reason). */
int ergon_sim_run_opts(const char *scenario, const struct ergon_sim_options *o,
		       struct ergon_sim_result *res, struct ergon_err *err);

/* The scenario names, NULL-terminated. */
const char *const *ergon_sim_scenarios(void);
/* 1 when the scenario's fault is in the profile boot but shows in the
 * power stage's checks (zero_time_inference: the clean window's reference
 * is 0 us), so `ergon profile` runs the power stage for it; 0 otherwise
 * (and for an unknown name). */
int ergon_sim_scenario_power_checked(const char *scenario);
/* 1 when the scenario's firmware reads the on-board INA228 in an external
 * run (ina228_bystander_overflow: the host's meter owns the figures, the
 * record carries the chip's), so `ergon profile` gives it the sim board's
 * fitted shunt as it does the INA228 scenarios; 0 otherwise. */
int ergon_sim_scenario_ina228_bystander(const char *scenario);
/* 1 when the scenario marks layers (marker_missing_edge, marker_extra_edge,
 * marker_short_layer), so `ergon profile` folds the energy per layer for
 * it as --layer-energy does; 0 otherwise (and for an unknown name). */
int ergon_sim_scenario_markers(const char *scenario);
/* Run one scenario. ERGON_EUSAGE for an unknown name (message lists the
 * names), ERGON_ENOMEM. A runtime failure is not an error here: it is the
 * scenario's result (res->status). res is filled; release it with
 * ergon_sim_result_cleanup. */
int ergon_sim_run(const char *scenario, struct ergon_sim_result *res, struct ergon_err *err);
void ergon_sim_result_cleanup(struct ergon_sim_result *res);
/* Count rising edges of a pin in the recorded edges. */
size_t ergon_sim_rising_edges(const struct ergon_sim_result *res, uint8_t pin);
/* Rising edges of INPUT0 as the Joulescope saw it (a packet with any high time after one with
 * none). */
size_t ergon_sim_js_in0_rising(const struct ergon_sim_result *res);

#ifdef __cplusplus
}
#endif
#endif

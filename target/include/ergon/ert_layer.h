/* Layer hooks for the user's inference engine: per-layer window-clock time,
 * cycle-counter deltas and PMU counter deltas (one pass of up to
 * ERT_PMU_PASS_COUNTERS events at a time).
 *
 * The engine calls ert_layer_begin / ert_layer_end around each operator.
 * When nothing is attached (warmup, clean window) the hooks cost one
 * pointer test, so the same binary runs profiled and clean.
 */
#ifndef ERT_LAYER_H
#define ERT_LAYER_H

#include "ergon/ert_hal.h"

#include <stdint.h>

#ifndef ERT_MAX_LAYERS
#define ERT_MAX_LAYERS 64
#endif

struct ert_layer_rec {
	uint16_t index;
	const char *op_name;
	uint32_t window_us;
	uint32_t cycles;
	uint32_t counts[ERT_PMU_PASS_COUNTERS];
	uint8_t overflow;
};

struct ert_layers {
	const struct ert_hal *hal;
	int have_cycles;
	int have_pmu;
	unsigned n_events;
	uint16_t events[ERT_PMU_PASS_COUNTERS];
	struct ert_layer_rec rec[ERT_MAX_LAYERS];
	unsigned n_rec;
	int open; /* a begin without its end */
	uint32_t start_us;
	uint32_t start_cycles;
	int status; /* first failure, sticky */
};

/* Probe the HAL: the cycle counter counts only if two reads around a
 * delay differ (QEMU's DWT reads 0), the PMU only if it is provided. */
int ert_layers_init(struct ert_layers *L, const struct ert_hal *hal);
/* Program one pass; ERT_E_CONFIG when n_events > ERT_PMU_PASS_COUNTERS,
 * ERT_E_UNSUPPORTED when events are asked for and there is no PMU. */
int ert_layers_set_pass(struct ert_layers *L, const uint16_t *events, unsigned n_events);
/* Attach for one iteration (clears the records) or detach (NULL). */
void ert_layers_attach(struct ert_layers *L);
int ert_layers_status(const struct ert_layers *L);

/* ---- Layer markers (docs/METHOD.md, "Energy per layer") ---------------
 * A power build option: with a marker line armed, ert_layer_begin toggles
 * it at the start of every marked layer and ert_marker_disarm toggles it
 * once more after the last one, so a meter's second digital input (PPK2
 * D1, Joulescope INPUT1 when lock-step is off) sees one edge at every
 * layer boundary inside the clean window and the host folds the energy
 * between them by layer. Build with -DERT_LAYER_MARKERS=0 to compile the
 * toggling out (ert_marker_arm then refuses a marker pin). */
#ifndef ERT_LAYER_MARKERS
#define ERT_LAYER_MARKERS 1
#endif
#define ERT_MARKER_MASK_WORDS 8 /* layer indices 0..255 */

struct ert_marker_config {
	uint8_t pin; /* 0: no marker line */
	/* The layers whose start toggles the line: bit i % 32 of word i / 32
	 * for layer index i. All zero: every layer. A layer left out is
	 * merged with the marked layer before it (the host's marker plan
	 * leaves out layers too short for the meter to resolve). Layers from
	 * index 256 on are never marked. */
	uint32_t mask[ERT_MARKER_MASK_WORDS];
};

/* ERT_OK, or ERT_E_CONFIG when pin is beyond hal->max_gpio_pin or the
 * build has no markers (ERT_LAYER_MARKERS 0) and a pin is set. */
int ert_marker_validate(const struct ert_marker_config *m, const struct ert_hal *hal);
/* Drive the line low and arm the hooks (pin 0: nothing). Call with the
 * gate high, right before the window's first inference. */
int ert_marker_arm(const struct ert_marker_config *m, const struct ert_hal *hal);
/* Toggle once more (the end of the last inference) and disarm; returns
 * the first GPIO failure since arming (ERT_E_GPIO) or ERT_OK. */
int ert_marker_disarm(void);
/* Marker toggles since the last arm (the end toggle included). */
uint32_t ert_marker_toggles(void);

/* The hooks. */
void ert_layer_begin(uint16_t layer_index, const char *op_name);
void ert_layer_end(void);
/* Operators begun since boot, attached or not (warmup included): what the
 * profile flow's every-N-ops heartbeat counts. Wraps at 2^32. */
uint32_t ert_layer_ops(void);

#endif

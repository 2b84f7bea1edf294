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

/* The hooks. */
void ert_layer_begin(uint16_t layer_index, const char *op_name);
void ert_layer_end(void);
/* Operators begun since boot, attached or not (warmup included): what the
 * profile flow's every-N-ops heartbeat counts. Wraps at 2^32. */
uint32_t ert_layer_ops(void);

#endif

/* The profile flow: metadata, per preset (one PMU pass each) warmup, a
 * warmup_done heartbeat and N iterations each printing its CSV block; then
 * an optional clean window, HPX_PROFILED_INFER_*, flushing and END.
 * Not available in the dedicated power build.
 */
#ifndef ERT_PROFILE_H
#define ERT_PROFILE_H

#include "ergon/ert_hal.h"
#include "ergon/ert_layer.h"
#include "ergon/ert_window.h"

#include <stdint.h>

#ifndef ERT_MAX_PRESETS
#define ERT_MAX_PRESETS 8
#endif

struct ert_preset {
	const char *name;
	unsigned n_events;
	uint16_t events[ERT_PMU_PASS_COUNTERS];
	const char *event_names[ERT_PMU_PASS_COUNTERS];
};

/* Extra HPX_<key>=<value> metadata from the application (model facts). */
struct ert_meta_u {
	const char *key;
	uint64_t value;
};

struct ert_profile_config {
	uint32_t model_size;
	uint32_t arena_size;
	uint32_t allocated_arena;
	uint32_t warmup;
	uint32_t iterations;
	const struct ert_preset *presets;
	unsigned n_presets;		/* 0: one pass without PMU events */
	uint32_t heartbeat_every_iters; /* 0 = off */
	/* Every N operators (layer hooks) / M ms of the window clock, checked
	 * between inferences, never inside one or inside the clean window
	 * (target.heartbeat.every_n_ops / every_ms on the host). 0 = off. */
	uint32_t heartbeat_every_ops;
	uint32_t heartbeat_every_ms;
	int clean_window;		/* run a clean window after the presets */
	struct ert_window_config window;
	const char *clock_note;		     /* port's note on the clocks (may be NULL) */
	const struct ert_meta_u *extra_meta; /* emitted after the standard keys */
	unsigned n_extra_meta;
	/* The shared (instrumented) power firmware (power.firmware: shared):
	 * the clean window raises this pin while it runs, as the power build
	 * raises its gate, with the profile build's transport still live
	 * (0: no gate). */
	uint8_t window_gate_pin;
};

struct ert_profile_stats {
	uint32_t profiled_iters;
	uint64_t profiled_us;
	struct ert_window_result window;
	uint64_t bytes_written;
};

/* Validate everything first (ERT_E_CONFIG before any output), then run.
 * `L` is caller-provided storage (it is large). */
int ert_profile_validate(const struct ert_profile_config *cfg, const struct ert_hal *hal);
int ert_profile_run(const struct ert_hal *hal, const struct ert_profile_config *cfg,
		    const struct ert_workload *work, struct ert_layers *L,
		    struct ert_profile_stats *stats);

#endif

/* The board-independent model firmware: an int8 TFLite model embedded at
 * build time runs on any port that provides ert_port.h (its HAL, its clock
 * note, its gate and marker pins, its arena sections; docs/internals/ports.md).
 * ergon builds it (src/pipelines/firmware/model_fw.c) for a port whose
 * descriptor names this file as model_main (every port does). The model and
 * the input come from model_data.S (.incbin), the arena size from
 * -DERT_MODEL_ARENA_BYTES. Three builds:
 *   profile (default): the profile flow over the model's real layers, with
 *       the output of a first inference as HPX_MODEL_OUTPUT_* metadata for
 *       the host's bit-exactness check;
 *   power (ERT_POWER_BUILD): the gated power window, no transport, the
 *       layer-marker line on ERT_PORT_MARKER_PIN toggled at the start of the
 *       layers -DERT_MODEL_MARKER_MASK=w0,..,w7 marks (default: every layer);
 *   infer (ERT_TFL_INFER_BUILD): one inference, "ERGON_TFL_OUTPUT <hex>".
 * Exit codes through semihosting: 0 ok, 10 + |status| on a runtime failure,
 * 40 + |ert_tfl status| when the model is refused (the message goes to the
 * UART first). */
#include "ergon/ert_fmt.h"
#include "ergon/ert_layer.h"
#include "ergon/ert_power.h"
#include "ergon/ert_profile.h"
#include "ergon/ert_tfl.h"
#include "ert_port.h"

#ifndef ERT_MODEL_ARENA_BYTES
#error "build with -DERT_MODEL_ARENA_BYTES=<the model's arena size>"
#endif

extern const uint8_t ert_model_data[];
extern const uint8_t ert_model_end[];
extern const uint8_t ert_input_data[];
extern const uint8_t ert_input_end[];

static struct ert_hal hal;
static struct ert_tfl_model model;
/* Where the arena lives (profiling.extreme_mode / force_shared_sram, built
 * by ergon with one of the two defines for a port whose descriptor offers
 * them in memory_modes; docs/internals/config.md rule 5): extreme mode
 * keeps the model's weights (.rodata) and the arena in the TCMs, as the
 * method requires before it powers the shared SRAM down; force_shared_sram
 * places the arena in the port's shared system SRAM and the firmware writes
 * it whole at boot, as the method powers and retains that array. The
 * sections are the port's (ert_port.h, its linker script). */
#if defined(ERT_MEM_EXTREME) && defined(ERT_MEM_SHARED_SRAM)
#error "ERT_MEM_EXTREME and ERT_MEM_SHARED_SRAM pull the shared SRAM opposite ways"
#elif defined(ERT_MEM_SHARED_SRAM)
#ifndef ERT_PORT_SHARED_SRAM_SECTION
#error "ERT_MEM_SHARED_SRAM: this port's ert_port.h names no ERT_PORT_SHARED_SRAM_SECTION"
#endif
static uint8_t arena[ERT_MODEL_ARENA_BYTES]
    __attribute__((section(ERT_PORT_SHARED_SRAM_SECTION), aligned(16)));
#elif defined(ERT_MEM_EXTREME)
#ifndef ERT_PORT_TCM_ARENA_SECTION
#error "ERT_MEM_EXTREME: this port's ert_port.h names no ERT_PORT_TCM_ARENA_SECTION"
#endif
static uint8_t arena[ERT_MODEL_ARENA_BYTES]
    __attribute__((section(ERT_PORT_TCM_ARENA_SECTION), aligned(16)));
#else
static uint8_t arena[ERT_MODEL_ARENA_BYTES] __attribute__((aligned(16)));
#endif

static int infer(void *user)
{
	(void)user;
	uint32_t n = 0;
	uint8_t *in = ert_tfl_input(&model, 0, &n);
	const uint8_t *src = ert_input_data;
	/* The plan may reuse the input's bytes once it is consumed: copy it in
	 * before every inference. */
	for (uint32_t i = 0; i < n; i++)
		in[i] = src[i];
	return ert_tfl_invoke(&model) == ERT_TFL_OK ? 0 : -1;
}

static void say(const char *s)
{
	size_t n = 0;
	while (s[n] != '\0')
		n++;
	if (hal.write != 0)
		(void)hal.write(hal.ctx, s, n);
}

#if !defined(ERT_POWER_BUILD) && !defined(ERT_TFL_INFER_BUILD)
static uint64_t output_fnv1a64(const uint8_t *p, uint32_t n)
{
	uint64_t h = 14695981039346656037u;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}
#endif

#if !defined(ERT_POWER_BUILD) && !defined(ERT_TFL_INFER_BUILD)
static struct ert_layers layers;
#ifndef ERT_MODEL_WARMUP
#define ERT_MODEL_WARMUP 1u
#endif
#ifndef ERT_MODEL_ITERATIONS
#define ERT_MODEL_ITERATIONS 2u
#endif
static struct ert_meta_u model_meta[4] = {{"MODEL_OUTPUT_BYTES", 0},
					  {"MODEL_OUTPUT_FNV1A64", 0},
					  {"MODEL_OPERATORS", 0},
					  {"MODEL_MACS", 0}};
static struct ert_profile_config profile_cfg = {
    .warmup = ERT_MODEL_WARMUP,
    .iterations = ERT_MODEL_ITERATIONS,
    .presets = 0,
    .n_presets = 0, /* no PMU presets: the host plans none for a model */
    .heartbeat_every_iters = 0,
    .heartbeat_every_ops = 0,
    .heartbeat_every_ms = 0,
    .clean_window = 1,
    .window = {.mode = ERT_WINDOW_FIXED,
	       .iterations = 2,
	       .rate_probe_us = 1000,
	       .drain_wait_max_us = 2000},
    .clock_note = ERT_PORT_CLOCK_NOTE,
    .extra_meta = model_meta,
    .n_extra_meta = 4,
};
#endif
#ifdef ERT_POWER_BUILD
/* The layers whose start toggles the marker line (ert_marker_config.mask:
 * bit i % 32 of word i / 32 for layer i; all zero: every layer). ergon
 * builds it from the host's marker plan (--layer-energy with a live meter:
 * the layers too short for the meter's rate are left out and measured with
 * the marked one before them); a user's own build puts the initializer
 * `ergon profile` prints (docs/METHOD.md, "Energy per layer"). At most
 * ERT_MARKER_MASK_WORDS words: more do not compile. */
#ifndef ERT_MODEL_MARKER_MASK
#define ERT_MODEL_MARKER_MASK 0
#endif
#ifndef ERT_PORT_MARKER_PIN
#define ERT_PORT_MARKER_PIN 0u /* a port without a marker line */
#endif
/* Not static: a test reads the mask the image carries from the ELF's
 * symbol (tests/functional/test_profile_marker_plan.sh). */
const struct ert_power_config ert_model_power_cfg = {
    .warmup = 1,
    .window = {.mode = ERT_WINDOW_FIXED, .iterations = 5},
    .sync = {.gate_pin = ERT_PORT_GATE_PIN},
    .marker = {.pin = ERT_PORT_MARKER_PIN, .mask = {ERT_MODEL_MARKER_MASK}},
    .source = ERT_SOURCE_EXTERNAL,
    .calibration_id = 0,
};
#endif

int main(void)
{
	ert_port_hal_init(&hal);
#ifdef ERT_MEM_SHARED_SRAM
	/* A NOLOAD section: nothing zeroes it; write the array whole. */
	for (uint32_t i = 0; i < (uint32_t)sizeof arena; i++)
		arena[i] = 0;
#endif
	struct ert_tfl_err err;
	uint32_t model_len = (uint32_t)(ert_model_end - ert_model_data);
	int rc = ert_tfl_load(&model, ert_model_data, model_len, &err);
	if (rc == ERT_TFL_OK)
		rc = ert_tfl_bind(&model, arena, sizeof arena, &err);
	uint32_t in_len = 0;
	if (rc == ERT_TFL_OK && (ert_tfl_input(&model, 0, &in_len) == 0 ||
				 in_len != (uint32_t)(ert_input_end - ert_input_data))) {
		rc = ERT_TFL_E_STATE;
		err.msg[0] = '\0';
	}
	if (rc != ERT_TFL_OK) {
		say("ERGON_TFL_ERROR ");
		say(err.msg);
		say("\n");
		return 40 - rc;
	}
#ifdef ERT_TFL_INFER_BUILD
	if (infer(0) != 0)
		return 10 - ERT_E_WORKLOAD;
	uint32_t n = 0;
	const uint8_t *out = ert_tfl_output(&model, 0, &n);
	static const char hex[] = "0123456789abcdef";
	char line[72];
	say("ERGON_TFL_OUTPUT ");
	for (uint32_t i = 0; i < n; i += 32) {
		uint32_t k = 0;
		for (uint32_t j = i; j < n && j < i + 32; j++) {
			line[k++] = hex[out[j] >> 4];
			line[k++] = hex[out[j] & 15u];
		}
		line[k] = '\0';
		say(line);
	}
	say("\n");
	return 0;
#elif !defined(ERT_POWER_BUILD)
	if (infer(0) != 0)
		return 10 - ERT_E_WORKLOAD;
	uint32_t n = 0;
	const uint8_t *out = ert_tfl_output(&model, 0, &n);
	model_meta[0].value = n;
	model_meta[1].value = output_fnv1a64(out, n);
	model_meta[2].value = model.n_ops;
	model_meta[3].value = model.total_macs;
	profile_cfg.model_size = model_len;
	profile_cfg.arena_size = model.arena_bytes;
	profile_cfg.allocated_arena = (uint32_t)sizeof arena;
	const struct ert_workload work = {infer, 0};
	struct ert_profile_stats stats;
	rc = ert_profile_run(&hal, &profile_cfg, &work, &layers, &stats);
	return rc == ERT_OK ? 0 : 10 - rc;
#else
	const struct ert_workload work = {infer, 0};
	rc = ert_power_run(&hal, &ert_model_power_cfg, &work);
	return rc == ERT_OK ? 0 : 10 - rc;
#endif
}

/* Example firmware for QEMU's mps3-an547: the profile build streams HPX over
 * UART0; the power build (ERT_POWER_BUILD) runs the gated window with no
 * transport and leaves the terminal record in RAM. The exit code reaches
 * QEMU through semihosting: 0 ok, 10 + |status| on a runtime failure. */
#include "an547.h"
#include "ergon/ert_power.h"
#include "ergon/ert_profile.h"

static struct ert_hal hal;

#ifndef ERT_POWER_BUILD
static struct ert_layers layers;
/* The network's answer on the fixed input, for the host to check against
 * an independent reference (tests/functional/netdemo_ref.py). */
/* target.heartbeat.every_n_ops / every_ms of the host configuration reach
 * real firmware at build time: -DERT_HEARTBEAT_EVERY_N_OPS=N
 * -DERT_HEARTBEAT_EVERY_MS=M (the configuration's defaults otherwise). */
#ifndef ERT_HEARTBEAT_EVERY_N_OPS
#define ERT_HEARTBEAT_EVERY_N_OPS 8u
#endif
#ifndef ERT_HEARTBEAT_EVERY_MS
#define ERT_HEARTBEAT_EVERY_MS 2000u
#endif

static struct ert_meta_u example_meta[2] = {{"EXAMPLE_CLASS", 0}, {"EXAMPLE_CHECKSUM", 0}};

static struct ert_profile_config profile_cfg = {
    .model_size = (uint32_t)(4 * 9 * 2 + 10 * 256), /* weight bytes */
    .arena_size = 8 * 8 * 4 * 2,
    .allocated_arena = 8 * 8 * 4 * 2,
    .warmup = 2,
    .iterations = 3,
    .presets = 0,
    .n_presets = 0, /* one pass; PMU presets need a PMU (QEMU has none) */
    .heartbeat_every_iters = 0,
    .heartbeat_every_ops = ERT_HEARTBEAT_EVERY_N_OPS,
    .heartbeat_every_ms = ERT_HEARTBEAT_EVERY_MS,
    .clean_window = 1,
    .window = {.mode = ERT_WINDOW_AUTO,
	       .window_target_ms = 20,
	       .window_min = 5,
	       .window_max = 500,
	       .rate_probe_us = 1000,
	       .drain_wait_max_us = 2000},
    .clock_note = "an547 SysTick at 32 MHz nominal; under QEMU -icount time is "
		  "instruction-derived, not M55 cycles",
    .extra_meta = example_meta,
    .n_extra_meta = 2,
};
#else
static const struct ert_power_config power_cfg = {
    .warmup = 2,
    .window = {.mode = ERT_WINDOW_FIXED, .iterations = 50},
    .sync = {.gate_pin = 1},		     /* FPGAIO LED0 */
    .marker = {.pin = ERT_AN547_MARKER_PIN}, /* LED1 (an547.h) */
    .source = ERT_SOURCE_EXTERNAL,
    .calibration_id = 0,
};
#endif

int main(void)
{
	an547_hal_init(&hal);
	const struct ert_workload work = {netdemo_infer, 0};
#ifndef ERT_POWER_BUILD
	struct ert_profile_stats stats;
	(void)netdemo_infer(0);
	example_meta[0].value = (uint64_t)netdemo_last_class();
	example_meta[1].value = netdemo_last_checksum();
	int rc = ert_profile_run(&hal, &profile_cfg, &work, &layers, &stats);
#else
	int rc = ert_power_run(&hal, &power_cfg, &work);
#endif
	return rc == ERT_OK ? 0 : 10 - rc;
}

/* The HPX wire protocol registry: every token of the line protocol, once.
 *
 * Both sides include this header: the target emitter (freestanding) and the
 * host parser. docs/PROTOCOL.md is checked against it by a test, so the two
 * sides and the documentation cannot drift. Only macros and plain constants
 * here: no functions, no libc.
 *
 * Stream shape:
 *   HPX_READY                       (before start; repeated on lossy links)
 *   --- HPX_START ---
 *   HPX_<KEY>=<value>               metadata
 *   --- HPX_PRESET <name> ---       one per counter pass (absent in legacy streams)
 *   --- HPX_ITER <n> ---
 *   "Layer","Op",<counters...>,"overflow"
 *   <index>,<OP_NAME>,<u32...>,<0|1>
 *   HPX_HEARTBEAT <phase> [k=v ...]
 *   --- HPX_END ---
 *   --- HPX_POWER_TERMINAL_START --- ... --- HPX_POWER_TERMINAL_END ---
 */
#ifndef ERGON_WIRE_H
#define ERGON_WIRE_H

/* Version of this registry; emitted as HPX_VERSION by the target. */
#define HPX_WIRE_VERSION 1

/* Sentinels and markers (whole lines, after trimming whitespace). */
#define HPX_TOK_READY "HPX_READY"
#define HPX_TOK_START "--- HPX_START ---"
#define HPX_TOK_END "--- HPX_END ---"
#define HPX_TOK_PRESET_PREFIX "--- HPX_PRESET "
#define HPX_TOK_ITER_PREFIX "--- HPX_ITER "
#define HPX_TOK_MARKER_SUFFIX " ---"
#define HPX_TOK_POWER_TERMINAL_START "--- HPX_POWER_TERMINAL_START ---"
#define HPX_TOK_POWER_TERMINAL_END "--- HPX_POWER_TERMINAL_END ---"
#define HPX_TOK_ERROR_PREFIX "HPX_ERROR"

/* Metadata lines: HPX_<KEY>=<value>; the host lower-cases KEY. */
#define HPX_TOK_META_PREFIX "HPX_"
#define HPX_TOK_META_SEP '='

/* Heartbeats: HPX_HEARTBEAT <phase> [k=v ...]. */
#define HPX_TOK_HEARTBEAT "HPX_HEARTBEAT"
#define HPX_HB_INIT "init"
#define HPX_HB_ALLOC "alloc"
#define HPX_HB_WARMUP "warmup"
#define HPX_HB_WARMUP_DONE "warmup_done"
#define HPX_HB_INFER "infer"
#define HPX_HB_CLEAN_WINDOW_BEGIN "clean_window_begin"
#define HPX_HB_CLEAN_WINDOW_END "clean_window_end"
#define HPX_HB_FLUSHING "flushing"
#define HPX_HB_KEY_ITERS "iters"
/* `HPX_HEARTBEAT rtt_dropped bytes=N`: the RTT up buffer (drop mode) was
 * full and N more bytes were dropped since the last such report
 * (target/src/rtt.c); the host raises pmu.target_dropped. */
#define HPX_HB_RTT_DROPPED "rtt_dropped"
#define HPX_HB_KEY_BYTES "bytes"

/* CSV block: header row then one row per layer. */
#define HPX_CSV_COL_LAYER "\"Layer\""
#define HPX_CSV_COL_OP "\"Op\""
#define HPX_CSV_COL_OVERFLOW "\"overflow\""
#define HPX_CSV_SEP ','

/* Metadata keys (upper case on the wire). */
#define HPX_KEY_VERSION "VERSION"
#define HPX_KEY_MODEL_SIZE "MODEL_SIZE"
#define HPX_KEY_ARENA_SIZE "ARENA_SIZE"
#define HPX_KEY_ALLOCATED_ARENA "ALLOCATED_ARENA"
#define HPX_KEY_NUM_PRESETS "NUM_PRESETS"
#define HPX_KEY_PRESETS "PRESETS"
#define HPX_KEY_ITERATIONS "ITERATIONS"
#define HPX_KEY_WARMUP "WARMUP"
#define HPX_KEY_POWER_SYNC "POWER_SYNC"
#define HPX_KEY_EXTREME_MODE "EXTREME_MODE"
#define HPX_KEY_CLEAN_INFER_COUNT "CLEAN_INFER_COUNT"
#define HPX_KEY_CLEAN_INFER_AVG_US "CLEAN_INFER_AVG_US"
#define HPX_KEY_PROFILED_INFER_PREFIX "PROFILED_INFER_"

/* Port capability keys: HPX_<KEY>=present|missing. A port without a PMU or
 * without a cycle counter (QEMU, some Cortex-M0+/M33 parts) says so; the host
 * then reports pmu.unit_missing / pmu.cycle_counter_missing and never shows
 * the absent counters as zeros. */
#define HPX_KEY_PMU "PMU"
#define HPX_KEY_CYCLE_COUNTER "CYCLE_COUNTER"
#define HPX_VAL_PRESENT "present"
#define HPX_VAL_MISSING "missing"
/* Free text from the port: what its clocks mean (e.g. QEMU icount time). */
#define HPX_KEY_CLOCK_NOTE "CLOCK_NOTE"
#define HPX_KEY_SYSTEM_CLOCK_HZ "SYSTEM_CLOCK_HZ"

/* Clean-window keys of the profile boot (host: power_facts, profile). */
#define HPX_KEY_WINDOW_MODE "WINDOW_MODE"
#define HPX_WINDOW_MODE_AUTO "auto"
#define HPX_WINDOW_MODE_FIXED "fixed"
#define HPX_WINDOW_MODE_BUSY_LOOP "busy_loop"
#define HPX_KEY_CLEAN_REQUESTED "CLEAN_INFER_REQUESTED"
#define HPX_KEY_CLEAN_ELAPSED_US "CLEAN_ELAPSED_US"
#define HPX_KEY_CLEAN_STALLED_ITERS "CLEAN_STALLED_ITERS"
#define HPX_KEY_CLEAN_PARTIAL_ITERS "CLEAN_PARTIAL_ITERS"
#define HPX_KEY_CLEAN_REF_CYCLES "CLEAN_REF_CYCLES"
#define HPX_KEY_CLEAN_RATE_PROBE_US "CLEAN_DWT_RATE_US"
#define HPX_KEY_CLEAN_RATE_PROBE_CYCLES "CLEAN_DWT_RATE_CYC"
#define HPX_KEY_CLEAN_DRAIN_WAIT_US "CLEAN_ATTACH_WAIT_US"
#define HPX_KEY_CLEAN_TOTAL_CYCLES "CLEAN_INFER_TOTAL_CYCLES"
#define HPX_KEY_CLEAN_AVG_CYCLES "CLEAN_INFER_AVG_CYCLES"
#define HPX_KEY_DRAIN_TIMED_OUT "DRAIN_TIMED_OUT"
/* "1": the firmware printed HPX_CLEAN_ITER=<n> after each clean iteration
 * n = 1, 2, ... (the method's trace; it perturbs the window), so the host
 * can count the lines against CLEAN_INFER_COUNT. */
#define HPX_KEY_CLEAN_TRACE "CLEAN_TRACE"
#define HPX_KEY_CLEAN_ITER "CLEAN_ITER"
/* HPX_PROFILED_INFER_<suffix> (prefix above). */
#define HPX_KEY_PROFILED_COUNT_SUFFIX "COUNT"
#define HPX_KEY_PROFILED_TOTAL_US_SUFFIX "TOTAL_US"
#define HPX_KEY_PROFILED_AVG_US_SUFFIX "AVG_US"

/* Per-layer columns the runtime writes besides the PMU events: the window
 * clock's microseconds and the cycle counter (the host reads a layer's
 * cycles from this column). */
#define HPX_CSV_COL_WINDOW_US "\"window_us\""
#define HPX_CSV_COL_CYCLES "\"ARM_PMU_CPU_CYCLES\""
#define HPX_COUNTER_CYCLES "ARM_PMU_CPU_CYCLES"
/* Event counter columns (PMU) share this prefix; cycles come from the
 * cycle counter, not the PMU. */
#define HPX_COUNTER_PMU_PREFIX "ARM_PMU_"

/* HPX_ERROR <status>[: <why>]: why the target stopped (ert_status names). */
#define HPX_ERR_OK "ok"
#define HPX_ERR_TRANSPORT "transport"
#define HPX_ERR_TIMEOUT "timeout"
#define HPX_ERR_I2C "i2c"
#define HPX_ERR_CONFIG "config"
#define HPX_ERR_GPIO "gpio"
#define HPX_ERR_UNSUPPORTED "unsupported"
#define HPX_ERR_INA228_ID "ina228_id"
#define HPX_ERR_SHUNT_CAL_WRITE "shunt_cal_write"
#define HPX_ERR_SHUNT_CAL_READBACK "shunt_cal_readback"
#define HPX_ERR_WINDOW_CLOCK "window_clock"
#define HPX_ERR_WORKLOAD "workload"
#define HPX_ERR_LAYERS "layers"
#define HPX_ERR_GATE_STUCK "gate_stuck"
#define HPX_ERR_UNKNOWN "unknown"

/* Power terminal record keys: HPX_POWER_<KEY>=<value> inside the terminal
 * block (the host lower-cases KEY without the POWER_ prefix). */
#define HPX_KEY_POWER_PREFIX "POWER_"
#define HPX_KEY_PT_TERMINAL_VERSION "TERMINAL_VERSION"
#define HPX_KEY_PT_STATUS "STATUS"
#define HPX_KEY_PT_REQUESTED_COUNT "REQUESTED_COUNT"
#define HPX_KEY_PT_COMPLETED_COUNT "COMPLETED_COUNT"
#define HPX_KEY_PT_ELAPSED_US "ELAPSED_US"
#define HPX_KEY_PT_FINAL_PHASE "FINAL_PHASE"
#define HPX_KEY_PT_ERROR_CODE "ERROR_CODE"
#define HPX_KEY_PT_GATE_ASSERTED "GATE_ASSERTED"
#define HPX_KEY_PT_GATE_LOWERED "GATE_LOWERED"
#define HPX_KEY_PT_MEASUREMENT_SOURCE "MEASUREMENT_SOURCE"
#define HPX_KEY_PT_MEASUREMENT_SCOPE "MEASUREMENT_SCOPE"
#define HPX_KEY_PT_ENERGY_NJ "ENERGY_NJ"
#define HPX_KEY_PT_MEASUREMENT_DURATION_US "MEASUREMENT_DURATION_US"
#define HPX_KEY_PT_MEASUREMENT_COUNT "MEASUREMENT_COUNT"
#define HPX_KEY_PT_MEASUREMENT_OVERFLOW "MEASUREMENT_OVERFLOW"
#define HPX_KEY_PT_CHARGE_NC "CHARGE_NC"
#define HPX_KEY_PT_BUS_VOLTAGE_UV "BUS_VOLTAGE_UV"
#define HPX_KEY_PT_SAMPLE_COUNT "SAMPLE_COUNT"
#define HPX_KEY_PT_CALIBRATION_ID "CALIBRATION_ID"
#define HPX_KEY_PT_INA228_DIAG "INA228_DIAG"
/* 1 when the INA228's CHARGE read negative and was clamped to 0 (reversed
 * sense wiring), so the host can tell it from a true zero. */
#define HPX_KEY_PT_CHARGE_CLAMPED "CHARGE_CLAMPED"

#define HPX_KEY_PT_INA228_BYSTANDER_FAILED "INA228_BYSTANDER_FAILED"

/* HPX_POWER_STATUS values. The host accepts exactly ok and error (with a
 * nonzero HPX_POWER_ERROR_CODE); "failed" and "incomplete" were in the first
 * draft of this registry and are refused by the host parser: an emitter
 * reports them as status error with its own error code. */
#define HPX_STATUS_OK "ok"
#define HPX_STATUS_ERROR "error"
#define HPX_STATUS_FAILED "failed"
#define HPX_STATUS_INCOMPLETE "incomplete"

/* HPX_POWER_FINAL_PHASE values: where the power flow stopped. */
#define HPX_PT_PHASE_INIT "init"
#define HPX_PT_PHASE_INA228_INIT "ina228_init"
#define HPX_PT_PHASE_WARMUP "warmup"
#define HPX_PT_PHASE_SYNC_GO "sync_go"
#define HPX_PT_PHASE_INA228_ARM "ina228_arm"
#define HPX_PT_PHASE_WINDOW "window"
#define HPX_PT_PHASE_GATE_LOW "gate_low"
#define HPX_PT_PHASE_INA228_READ "ina228_read"
/* The method's name for a finished run (shared fixtures/hpx/power_ok). */
#define HPX_PT_PHASE_DONE "complete"
#define HPX_PT_PHASE_UNKNOWN "unknown"

/* HPX_POWER_ERROR_CODE is a per-phase code, as the method names it: in
 * FINAL_PHASE ina228_init, 10 is "SHUNT_CAL write failed" and 11 "SHUNT_CAL
 * read back differs" (the runtime's ERT_E_SHUNT_CAL_WRITE/_READBACK, -8/-9).
 * Every other code, in every phase, is |ert_status| (ergon/ert_hal.h).
 * ina228_init only talks I2C, so ERT_E_CLOCK (-10) and ERT_E_WORKLOAD
 * (-11) never end it: (FINAL_PHASE, ERROR_CODE) names one failure. */
#define HPX_PT_INA228_INIT_SHUNT_CAL_WRITE_FAILED 10
#define HPX_PT_INA228_INIT_SHUNT_CAL_READBACK_DIFFERS 11

/* HPX_POWER_MEASUREMENT_SOURCE values. */
#define HPX_PT_SOURCE_INA228 "ina228"
/* An external meter watches the gate; the record carries no figures. */
#define HPX_PT_SOURCE_EXTERNAL "external"

/* HPX_POWER_MEASUREMENT_SCOPE: the only scope the host accepts. */
#define HPX_PT_SCOPE_FIXED_N_INFERENCE "fixed_n_inference"

/* CSV cells the host treats as text, not counters (besides Layer, Op and
 * overflow above): AOT streams may tag rows. */
#define HPX_CSV_COL_TAG "\"tag\""
#define HPX_CSV_COL_NAME "\"name\""

/* Preset given to iterations without any HPX_PRESET marker (legacy streams).
 * Presets whose names start with '_' are merged but not grouped. */
#define HPX_PRESET_LEGACY "_default"

/* A per-layer counter delta at or above this value is a uint32 subtraction
 * that wrapped on the target (finish < start), not a count. */
#define HPX_U32_WRAP_MIN 2147483648.0

#endif

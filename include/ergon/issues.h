/* The issue registry: every check ergon makes reports through one table of
 * codes. An issue is {code, severity, message, context}; the issues of an
 * analysis decide its integrity (valid / degraded / invalid) and whether
 * per-operation figures are published.
 *
 * Codes are listed once, below, grouped by domain; add a code by adding one
 * line to its group (and a row to docs/ISSUES.md).
 */
#ifndef ERGON_ISSUES_H
#define ERGON_ISSUES_H

#include <jansson.h>
#include <stddef.h>

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_severity {
	ERGON_SEV_INFO = 1,
	ERGON_SEV_WARNING = 2,
	ERGON_SEV_ERROR = 3,
};

enum ergon_integrity {
	ERGON_INTEGRITY_VALID = 1,
	ERGON_INTEGRITY_DEGRADED = 2,
	ERGON_INTEGRITY_INVALID = 3,
};

/* X(code string, severity, one-line meaning) */
#define ERGON_ISSUE_CODES(X)                                                                       \
	/* --- run: the sustained-load harness --- */                                              \
	X("run.interrupted", ERGON_SEV_ERROR, "the run was interrupted by a signal")               \
	X("run.incomplete", ERGON_SEV_ERROR, "the run stopped before its planned end")             \
	X("run.instrument_read_failed", ERGON_SEV_ERROR, "the instrument failed mid-run")          \
	X("run.invocations_failed", ERGON_SEV_WARNING, "some invocations failed")                  \
	X("run.invocation_timeout", ERGON_SEV_WARNING, "an invocation exceeded its timeout")       \
	X("run.sampler_gap", ERGON_SEV_WARNING, "the sampler left a gap far above its period")     \
	X("run.sampler_late", ERGON_SEV_INFO, "some threaded readings were late or missed")        \
	X("run.too_few_samples", ERGON_SEV_ERROR, "too few power samples to integrate a phase")    \
	X("run.no_operations", ERGON_SEV_ERROR, "no invocation completed in the load phase")       \
	X("run.power_below_idle", ERGON_SEV_WARNING, "load power is not above the idle floor")     \
	X("run.samples_decimated", ERGON_SEV_INFO, "the embedded power series is decimated")       \
	X("run.throttled", ERGON_SEV_INFO,                                                         \
	  "sustained throughput regressed: a finding, not a fault")                                \
	X("run.release_overrun", ERGON_SEV_WARNING, "periodic invocations overran their period")   \
	X("run.samples_rejected", ERGON_SEV_WARNING,                                               \
	  "instrument readings refused: non-finite, or time not increasing")                       \
	X("run.no_total_rail", ERGON_SEV_WARNING,                                                  \
	  "no selected rail is the module's total input: headline figures withheld")               \
	X("run.window_spanned", ERGON_SEV_WARNING,                                                 \
	  "an invocation ran past a window's planned end: that window holds one invocation")       \
	X("run.latency_skewed", ERGON_SEV_INFO,                                                    \
	  "the mean latency lies outside the median's interval: outliers pull it")                 \
	X("run.repetitions_incomplete", ERGON_SEV_ERROR,                                           \
	  "fewer repetitions completed than planned: the repeat statistics are withheld")          \
	X("run.uncertainty_above_limit", ERGON_SEV_ERROR,                                          \
	  "a figure's expanded uncertainty exceeds --max-uncertainty-pct, or its budget is "       \
	  "incomplete")                                                                            \
	/* --- pmu: HPX profile streams (engines/hpx) --- */                                       \
	X("pmu.missing", ERGON_SEV_ERROR, "the stream holds no PMU profile data")                  \
	X("pmu.incomplete", ERGON_SEV_WARNING,                                                     \
	  "the stream ended without HPX_END; the open iteration was dropped")                      \
	X("pmu.parse_error", ERGON_SEV_WARNING,                                                    \
	  "rows with a wrong field count or non-numeric counter cells were left out")              \
	X("pmu.line_too_long", ERGON_SEV_WARNING,                                                  \
	  "lines over the parser's length limit were dropped")                                     \
	X("pmu.counter_wrap", ERGON_SEV_INFO,                                                      \
	  "counter samples >= 2^31 (uint32 wraps) were rejected")                                  \
	X("pmu.frozen_rows", ERGON_SEV_INFO, "all-zero (frozen) sample rows were rejected")        \
	X("pmu.wrap_fallback", ERGON_SEV_WARNING,                                                  \
	  "a counter had no valid sample; its raw (rejected) samples were aggregated")             \
	X("pmu.layer_count_mismatch", ERGON_SEV_WARNING,                                           \
	  "layer counts differ between iterations or presets")                                     \
	X("pmu.counter_overflow", ERGON_SEV_WARNING, "a PMU counter overflowed in some layer")     \
	X("pmu.version_mismatch", ERGON_SEV_WARNING, "HPX_VERSION differs from the wire registry") \
	X("pmu.duplicate_preset", ERGON_SEV_WARNING,                                               \
	  "a preset appeared twice; the later data replaced the earlier")                          \
	X("pmu.iter_order", ERGON_SEV_WARNING, "iteration numbers repeat or go backwards")         \
	X("pmu.restart", ERGON_SEV_WARNING, "a second HPX_START: the target restarted mid-stream") \
	X("pmu.clean_trace_mismatch", ERGON_SEV_WARNING,                                           \
	  "the clean-window trace's HPX_CLEAN_ITER lines do not count to CLEAN_INFER_COUNT")       \
	X("pmu.attach_wait_exceeded", ERGON_SEV_WARNING,                                           \
	  "the clean window waited longer than profiling.clean_window_attach_wait_ms")             \
	X("pmu.target_dropped", ERGON_SEV_WARNING,                                                 \
	  "the target reported bytes its RTT buffer dropped (drop mode): rows are missing")        \
	X("pmu.unit_missing", ERGON_SEV_INFO,                                                      \
	  "HPX_PMU=missing: the port has no PMU, no event counts")                                 \
	X("pmu.cycle_counter_missing", ERGON_SEV_WARNING,                                          \
	  "HPX_CYCLE_COUNTER=missing: no per-layer cycles, total_cycles null")                     \
	X("pmu.negative_counter", ERGON_SEV_WARNING,                                               \
	  "negative counter cells were kept but flagged")                                          \
	X("pmu.parser_limit", ERGON_SEV_ERROR,                                                     \
	  "the parser hit a limit; the log was kept, not parsed")                                  \
	/* --- capture: HPX transports (drivers/transports) --- */                                 \
	X("capture.incomplete", ERGON_SEV_WARNING, "the capture stopped before the end sentinel")  \
	X("capture.timeout", ERGON_SEV_WARNING, "the capture hit its overall time limit")          \
	X("capture.heartbeat_timeout", ERGON_SEV_WARNING,                                          \
	  "no line arrived within the heartbeat limit")                                            \
	X("capture.lossy", ERGON_SEV_WARNING,                                                      \
	  "the link lost or mangled data (SWO overflow or malformed packets): diagnostic only")    \
	/* --- instrument: drivers --- */                                                          \
	X("instrument.averaged_power", ERGON_SEV_WARNING,                                          \
	  "power comes from an averaged reading and the window is short against its period")       \
	/* instrument bridges (docs/BRIDGE.md) */                                                  \
	X("instrument.bridge_exit_status", ERGON_SEV_WARNING,                                      \
	  "the instrument bridge exited non-zero or had to be killed at the end")                  \
	X("instrument.bridge_samples_dropped", ERGON_SEV_WARNING,                                  \
	  "the instrument bridge lost samples (a sample-id gap): not interpolated")                \
	X("instrument.counter_backwards", ERGON_SEV_WARNING,                                       \
	  "an energy counter went backwards without reaching its wrap range")                      \
	X("instrument.counter_wrapped", ERGON_SEV_INFO,                                            \
	  "an energy counter wrapped and was unwrapped")                                           \
	X("instrument.stale_readings", ERGON_SEV_INFO,                                             \
	  "many readings repeated the previous hardware update")                                   \
	X("instrument.unrated_accuracy", ERGON_SEV_WARNING,                                        \
	  "the instrument states no rated accuracy: every ± holds resolution and timing only")     \
	/* instrument: streaming meters (ppk2, JLS recording) */                                   \
	X("instrument.samples_dropped", ERGON_SEV_WARNING,                                         \
	  "the instrument lost samples (a sample-counter gap): missing, never interpolated")       \
	X("instrument.calibration_defaulted", ERGON_SEV_WARNING,                                   \
	  "the instrument's calibration was bad or absent; documented defaults were used")         \
	X("instrument.disconnected", ERGON_SEV_ERROR,                                              \
	  "the instrument went away mid-run; what was measured before is kept, incomplete")        \
	/* --- instrument: the unported rule (issue 17) --- */                                     \
	X("instrument.unvalidated_driver", ERGON_SEV_INFO,                                         \
	  "the driver has never run against the part: validated against a fake only")              \
	/* --- config: profile configuration rules --- */                                          \
	X("config.fixed_window_short", ERGON_SEV_WARNING,                                          \
	  "a fixed window of about 1 s or less cannot yield a valid gated power run")              \
	X("config.ina228_address_mismatch", ERGON_SEV_WARNING,                                     \
	  "the INA228 I2C address differs from the one its board preset wires")                    \
	/* --- power: gated-window analysis (docs/POWER_CHECKS.md) --- */                          \
	X("power.observation_degraded", ERGON_SEV_WARNING,                                         \
	  "no qualifying gate window: free-form capture")                                          \
	X("power.gate_below_minimum", ERGON_SEV_ERROR,                                             \
	  "a gated window integrates to under the floor")                                          \
	X("power.window_observer_mismatch", ERGON_SEV_ERROR,                                       \
	  "firmware window clock and gate disagree")                                               \
	X("power.gate_duration_mismatch", ERGON_SEV_WARNING,                                       \
	  "gate duration misses the reference window")                                             \
	X("power.gated_window_reference_drift", ERGON_SEV_INFO,                                    \
	  "confirmed gate drifts from the reference")                                              \
	X("power.gated_current_not_above_whole", ERGON_SEV_INFO,                                   \
	  "gated mean current not above whole capture")                                            \
	X("power.terminal_incomplete", ERGON_SEV_WARNING,                                          \
	  "the power terminal reported failed or incomplete work")                                 \
	X("power.device_timing_corrupt", ERGON_SEV_WARNING, "an inference reported zero time")     \
	X("power.window_clock_frozen", ERGON_SEV_WARNING,                                          \
	  "elapsed_us is 0 (error in internal mode)")                                              \
	X("power.window_clock_mismatch", ERGON_SEV_WARNING,                                        \
	  "elapsed_us misses count x reference by >25%")                                           \
	X("power.window_clock_exceeds_host_time", ERGON_SEV_WARNING,                               \
	  "firmware window longer than host envelope")                                             \
	X("power.zero_energy_and_charge", ERGON_SEV_ERROR,                                         \
	  "INA228 reported exactly zero energy and charge")                                        \
	X("power.zero_charge", ERGON_SEV_ERROR, "INA228 energy without charge: IN+/IN- reversed")  \
	X("power.accumulator_overflow", ERGON_SEV_ERROR,                                           \
	  "INA228 accumulator overflowed (measurement of record)")                                 \
	X("power.ina228_failed", ERGON_SEV_ERROR,                                                  \
	  "internal run: the INA228 failed or gave no measurement; the run is failed")             \
	X("power.accumulator_overflow_bystander", ERGON_SEV_WARNING,                               \
	  "INA228 bystander accumulator overflowed")                                               \
	X("power.recording_truncated", ERGON_SEV_WARNING,                                          \
	  "recording cut short: samples up to the last intact chunk")                              \
	X("power.recording_damaged", ERGON_SEV_WARNING,                                            \
	  "recording damaged (CRC, length, link): samples stop there")                             \
	X("power.recording_sample_gap", ERGON_SEV_WARNING,                                         \
	  "recording sample ids jump or go backwards")                                             \
	X("power.nan_samples", ERGON_SEV_WARNING,                                                  \
	  "NaN or infinite samples were left out of the sums")                                     \
	X("power.gate_high_at_start", ERGON_SEV_INFO, "the gate was high from the first sample")   \
	X("power.terminal_missing", ERGON_SEV_WARNING,                                             \
	  "no power terminal record: observer check not run")                                      \
	X("power.short_gate_pulses_ignored", ERGON_SEV_INFO,                                       \
	  "gate pulses under the 1 s floor were ignored")                                          \
	X("power.multiple_gate_windows", ERGON_SEV_WARNING,                                        \
	  "several gate windows where the firmware drove one")                                     \
	X("power.distribution_truncated", ERGON_SEV_INFO,                                          \
	  "percentiles use only the first packets (capped)")                                       \
	X("power.packets_dropped", ERGON_SEV_WARNING,                                              \
	  "statistics sample_id jumps: packets were dropped")                                      \
	X("power.time_backwards", ERGON_SEV_ERROR,                                                 \
	  "recording time goes backwards: nothing measured from it")                               \
	X("power.recording_unusable", ERGON_SEV_ERROR,                                             \
	  "the recording's content cannot be read as samples")                                     \
	X("power.negative_energy", ERGON_SEV_ERROR,                                                \
	  "a window delivered energy instead of drawing it: a column is negated")                  \
	X("power.reverse_current", ERGON_SEV_ERROR,                                                \
	  "readings ran backwards through the load beyond any meter's noise")                      \
	X("power.time_gap", ERGON_SEV_ERROR,                                                       \
	  "statistics packets leave more than 1 % of a gate window uncovered")                     \
	X("power.values_inconsistent", ERGON_SEV_ERROR,                                            \
	  "a row's own values contradict each other (max below mean, power not i x v)")            \
	/* --- power: accumulator cross-checks (docs/POWER_CHECKS.md) --- */                       \
	X("power.accumulator_inconsistent", ERGON_SEV_ERROR,                                       \
	  "the energy accumulator disagrees with the packets' power")                              \
	/* --- power: uncertainty budgets (docs/UNCERTAINTY.md) --- */                             \
	X("power.uncertainty_above_limit", ERGON_SEV_ERROR,                                        \
	  "a figure's expanded uncertainty exceeds --max-uncertainty-pct, or its budget is "       \
	  "incomplete")                                                                            \
	/* --- power: energy per layer (docs/METHOD.md, "Energy per layer") --- */                 \
	X("power.layers_inferences_dropped", ERGON_SEV_WARNING,                                    \
	  "inferences with another number of marker edges than marked layers were left out of "    \
	  "the layer figures")                                                                     \
	X("power.layers_unresolved", ERGON_SEV_INFO,                                               \
	  "layers spanning fewer samples than the minimum were measured together with their "      \
	  "neighbours")                                                                            \
	X("power.layers_none", ERGON_SEV_WARNING,                                                  \
	  "no inference showed its marker edges: no layer figures")                                \
	X("power.layers_no_gate", ERGON_SEV_WARNING,                                               \
	  "the gate never rose in the recording: no layer figures")                                \
	X("power.layers_sum_mismatch", ERGON_SEV_WARNING,                                          \
	  "the layers' energies do not sum to the energy per inference within their "              \
	  "uncertainties")                                                                         \
	X("power.layers_mask_mismatch", ERGON_SEV_WARNING,                                         \
	  "inferences showed another number of marker edges than the marker plan's mask expects "  \
	  "(a power build with another mask)")                                                     \
	/* --- profile: clean-window checks --- */                                                 \
	X("profile.clean_window_stalled", ERGON_SEV_WARNING,                                       \
	  "clean-window iterations stalled or partial")                                            \
	X("profile.clean_window_clock_rate_low", ERGON_SEV_WARNING,                                \
	  "rate probe cycles below half the core clock")                                           \
	X("profile.clean_window_check_inoperative", ERGON_SEV_WARNING,                             \
	  "partial floor is zero: silence is not health")                                          \
	/* --- profile: the `ergon profile` pipeline (stages, sync, lifecycle) --- */              \
	X("profile.interrupted", ERGON_SEV_ERROR, "the profile run was interrupted (Ctrl-C)")      \
	X("profile.repetitions_incomplete", ERGON_SEV_ERROR,                                       \
	  "fewer power repetitions completed than planned (--repeat): the repeat statistics are "  \
	  "withheld")                                                                              \
	X("profile.stage_failed", ERGON_SEV_ERROR, "a pipeline stage could not complete")          \
	X("profile.no_start_sentinel", ERGON_SEV_ERROR, "the transport never showed HPX_START")    \
	X("profile.power_unobservable", ERGON_SEV_ERROR,                                           \
	  "no instrument observes this target's rail")                                             \
	X("profile.power_instrument_unavailable", ERGON_SEV_ERROR,                                 \
	  "the power instrument has no live driver here")                                          \
	X("profile.ready_not_observed", ERGON_SEV_WARNING,                                         \
	  "lock-step READY never seen on the state input")                                         \
	X("profile.firmware_shared", ERGON_SEV_WARNING,                                            \
	  "power stage ran the profile build: transport contamination")                            \
	X("profile.ina228_init_failed", ERGON_SEV_ERROR,                                           \
	  "the target's INA228 bring-up failed (address, ID, SHUNT_CAL)")                          \
	/* --- profile: configuration the lifecycle cannot carry out (yet) --- */                  \
	X("profile.reset_step_not_performed", ERGON_SEV_WARNING,                                   \
	  "a reset step the board rule asks for is not performed")                                 \
	/* --- profile: a TFLite model run on the target (ergon profile MODEL.tflite) --- */       \
	X("profile.model_output_mismatch", ERGON_SEV_ERROR,                                        \
	  "the on-target model output differs from the host interpreter's")                        \
	X("profile.model_output_missing", ERGON_SEV_ERROR,                                         \
	  "the firmware reported no model output: correctness unknown")                            \
	X("profile.emulated_instructions", ERGON_SEV_INFO,                                         \
	  "per-layer counts are QEMU -icount emulated instructions, not cycles")                   \
	/* end of the registry: add codes above this line, each line ending in a backslash */

/* Severity of a registered code; 0 if the code is not registered. */
ERGON_API int ergon_issue_severity(const char *code);
/* The i-th registered code (0-based) with its severity and meaning; NULL
 * past the end. For listings and the registry/docs consistency test. */
ERGON_API const char *ergon_issue_code_at(size_t i, int *severity, const char **meaning);
/* "info" / "warning" / "error". */
ERGON_API const char *ergon_severity_name(int severity);
/* "valid" / "degraded" / "invalid". */
ERGON_API const char *ergon_integrity_name(int integrity);

/* Append {code, severity, message, context} to the JSON array `list`.
 * context (may be NULL) is stolen. An unregistered code is a programming
 * error: ERGON_EUSAGE is returned and nothing is added. */
ERGON_API int ergon_issue_add(json_t *list, const char *code, json_t *context, const char *fmt,
			      ...) __attribute__((format(printf, 4, 5)));
/* True if list holds an issue with this code. */
ERGON_API int ergon_issue_has(const json_t *list, const char *code);
/* Integrity decided by the worst severity in list. */
ERGON_API int ergon_issues_integrity(const json_t *list);

#ifdef __cplusplus
}
#endif
#endif

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
	X("run.too_few_samples", ERGON_SEV_ERROR, "too few power samples to integrate a phase")   \
	X("run.no_operations", ERGON_SEV_ERROR, "no invocation completed in the load phase")       \
	X("run.power_below_idle", ERGON_SEV_WARNING, "load power is not above the idle floor")     \
	X("run.samples_decimated", ERGON_SEV_INFO, "the embedded power series is decimated")       \
	X("run.throttled", ERGON_SEV_WARNING, "sustained throughput regressed (throttle onset)")   \
	X("run.release_overrun", ERGON_SEV_WARNING, "periodic invocations overran their period")   \
	/* --- pmu: HPX profile streams (engines/hpx) --- */                                         \
	X("pmu.missing", ERGON_SEV_ERROR, "the stream holds no PMU profile data")                  \
	X("pmu.incomplete", ERGON_SEV_WARNING,                                                     \
	  "the stream ended without HPX_END; the open iteration was dropped")                   \
	X("pmu.parse_error", ERGON_SEV_WARNING,                                                    \
	  "rows with a wrong field count or non-numeric counter cells were left out")           \
	X("pmu.line_too_long", ERGON_SEV_WARNING, "lines over the parser's length limit were dropped") \
	X("pmu.counter_wrap", ERGON_SEV_INFO, "counter samples >= 2^31 (uint32 wraps) were rejected") \
	X("pmu.frozen_rows", ERGON_SEV_INFO, "all-zero (frozen) sample rows were rejected")        \
	X("pmu.wrap_fallback", ERGON_SEV_WARNING,                                                  \
	  "a counter had no valid sample; its raw (rejected) samples were aggregated")          \
	X("pmu.layer_count_mismatch", ERGON_SEV_WARNING,                                           \
	  "layer counts differ between iterations or presets")                                  \
	X("pmu.counter_overflow", ERGON_SEV_WARNING, "a PMU counter overflowed in some layer")     \
	X("pmu.version_mismatch", ERGON_SEV_WARNING, "HPX_VERSION differs from the wire registry") \
	X("pmu.duplicate_preset", ERGON_SEV_WARNING,                                               \
	  "a preset appeared twice; the later data replaced the earlier")                       \
	X("pmu.iter_order", ERGON_SEV_WARNING, "iteration numbers repeat or go backwards")          \
	X("pmu.restart", ERGON_SEV_WARNING, "a second HPX_START: the target restarted mid-stream") \
	/* --- capture: HPX transports (drivers/transports) --- */                                 \
	X("capture.incomplete", ERGON_SEV_WARNING, "the capture stopped before the end sentinel")    \
	X("capture.timeout", ERGON_SEV_WARNING, "the capture hit its overall time limit")            \
	X("capture.heartbeat_timeout", ERGON_SEV_WARNING,                                            \
	  "no line arrived within the heartbeat limit")                                         \
	X("capture.lossy", ERGON_SEV_WARNING,                                                      \
	  "the link lost or mangled data (SWO overflow or malformed packets): diagnostic only") \
	/* --- instrument: drivers --- */                                                          \
	X("instrument.averaged_power", ERGON_SEV_WARNING,                                          \
	  "power comes from an averaged reading and the window is short against its period")    \
	X("instrument.counter_backwards", ERGON_SEV_WARNING,                                       \
	  "an energy counter went backwards without reaching its wrap range")                   \
	X("instrument.counter_wrapped", ERGON_SEV_INFO, "an energy counter wrapped and was unwrapped") \
	X("instrument.stale_readings", ERGON_SEV_INFO,                                             \
	  "many readings repeated the previous hardware update")

/* Severity of a registered code; 0 if the code is not registered. */
ERGON_API int ergon_issue_severity(const char *code);
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

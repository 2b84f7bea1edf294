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
	X("run.samples_rejected", ERGON_SEV_WARNING,                                                \
	  "instrument readings refused: non-finite, or time not increasing")                      \
	/* --- instrument: drivers --- */                                                          \
	X("instrument.averaged_power", ERGON_SEV_WARNING,                                          \
	  "power comes from an averaged reading and the window is short against its period")    \
	X("instrument.counter_backwards", ERGON_SEV_WARNING,                                       \
	  "an energy counter went backwards without reaching its wrap range")                   \
	X("instrument.counter_wrapped", ERGON_SEV_INFO, "an energy counter wrapped and was unwrapped") \
	X("instrument.stale_readings", ERGON_SEV_INFO,                                             \
	  "many readings repeated the previous hardware update")                                     \
	/* --- config: profile configuration rules --- */                                          \
	X("config.fixed_window_short", ERGON_SEV_WARNING,                                          \
	  "a fixed window of about 1 s or less cannot yield a valid gated power run")           \
	X("config.ina228_address_mismatch", ERGON_SEV_WARNING,                                     \
	  "the INA228 I2C address differs from the one its board preset wires")

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

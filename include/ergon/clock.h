/* The host's measuring clock, with one seam for simulated time.
 *
 * Everything that times a measurement on the host (the session engine's
 * phases, releases, invocation latencies and inline sampler; the sysfs
 * drivers' sample timestamps: hwmon, RAPL, NVML; the synthetic
 * instrument's power model and its emulated per-invocation work, which
 * the session waits out through ergon_clock_sleep_until on a simulated
 * clock) reads this clock. By
 * default it is CLOCK_MONOTONIC and sleeping is clock_nanosleep(2) on it.
 * ergon_clock_set() replaces both with a simulated clock, so a test or a
 * virtual bench can run a whole session in simulated time and assert
 * figures worked out by hand instead of bands around scheduler jitter
 * (tests/functional/test_hw_jetson_method.c, test_rails_cli.c,
 * test_run_synthetic_clock.c; tests/support/sim_clock.h).
 *
 * A simulated clock must only be installed while no measuring thread runs,
 * and only with the inline sampler: a threaded sampler would wait on a
 * clock that no one advances. The session refuses the threaded sampler
 * while a simulated clock is installed.
 */
#ifndef ERGON_CLOCK_H
#define ERGON_CLOCK_H

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_clock {
	/* The current time in seconds (monotonic, never decreasing). */
	double (*now_s)(void *ctx);
	/* Return once now_s() >= t_s (a simulated clock advances to t_s). */
	void (*sleep_until)(void *ctx, double t_s);
	void *ctx;
};

/* Install clock (borrowed: it must outlive its use), or NULL for
 * CLOCK_MONOTONIC. Not thread-safe: call it while nothing measures. */
ERGON_API void ergon_clock_set(const struct ergon_clock *clock);
/* 1 when a simulated clock is installed. */
ERGON_API int ergon_clock_simulated(void);
/* Seconds on the measuring clock. */
ERGON_API double ergon_clock_now_s(void);
/* Sleep until the measuring clock reads t_s (an interrupted sleep is
 * resumed; callers check their stop flag after it returns). */
ERGON_API void ergon_clock_sleep_until(double t_s);
/* The bound of the measuring clock's rate error, ppm, and where it comes
 * from (written into src, cap bytes): the kernel's own statement of its
 * clock's frequency tolerance (adjtimex(2), struct timex.tolerance), 0 for
 * a simulated clock (exact by construction); NaN when neither is known. */
ERGON_API double ergon_clock_rate_bound_ppm(char *src, size_t cap);

#ifdef __cplusplus
}
#endif
#endif

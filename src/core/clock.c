/* The measuring clock and its simulated-time seam (include/ergon/clock.h). */
#include "ergon/clock.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/timex.h>
#include <time.h>

static const struct ergon_clock *installed;

void ergon_clock_set(const struct ergon_clock *clock)
{
	installed = clock;
}

int ergon_clock_simulated(void)
{
	return installed != NULL;
}

double ergon_clock_now_s(void)
{
	if (installed)
		return installed->now_s(installed->ctx);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ergon_clock_sleep_until(double t_s)
{
	if (installed) {
		installed->sleep_until(installed->ctx, t_s);
		return;
	}
	struct timespec ts;
	ts.tv_sec = (time_t)t_s;
	ts.tv_nsec = (long)((t_s - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_sec++, ts.tv_nsec -= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		; /* a signal: the caller checks its stop flag after we return */
}

double ergon_clock_rate_bound_ppm(char *src, size_t cap)
{
	if (installed != NULL) {
		snprintf(src, cap, "a simulated clock: exact by construction");
		return 0.0;
	}
	/* modes 0 reads without changing anything (no privilege needed). The
	 * tolerance is in ppm with a 16-bit fraction (adjtimex(2)). */
	struct timex tx = {0};
	if (adjtimex(&tx) < 0) {
		snprintf(src, cap,
			 "adjtimex(2) could not be read (errno %d): the host clock's "
			 "rate bound is unknown",
			 errno);
		return NAN;
	}
	double ppm = (double)tx.tolerance / 65536.0;
	snprintf(src, cap,
		 "adjtimex(2) tolerance: the frequency tolerance the kernel states for its "
		 "clock, %.6g ppm",
		 ppm);
	return ppm;
}

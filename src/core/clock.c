/* The measuring clock and its simulated-time seam (include/ergon/clock.h). */
#include "ergon/clock.h"

#include <errno.h>
#include <stddef.h>
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

/* A simulated measuring clock for tests (ergon/clock.h): time moves only
 * when the code under test sleeps, and a hook sees every move (to rewrite
 * a fake sysfs tree or a --temp-file as a pure function of time). Plus
 * the workload whose invocation takes a fixed simulated time, and the two
 * helpers the simulated-time tests share. Used by test_hw_jetson_method,
 * test_rails_cli and test_run_synthetic_clock. */
#ifndef ERGON_TS_SIM_CLOCK_H
#define ERGON_TS_SIM_CLOCK_H

#include "ergon/clock.h"
#include "ergon/workload.h"

#include <jansson.h>
#include <math.h>

struct ts_sim_clock {
	double t_s; /* now, in simulated seconds */
	/* Called after every sleep with the time before it (may be NULL). */
	void (*on_advance)(void *ctx, double before_s);
	void *ctx;
	struct ergon_clock clock; /* filled by ts_sim_clock_install */
};

/* Install s (borrowed: it must outlive the measurement) at s->t_s. */
void ts_sim_clock_install(struct ts_sim_clock *s);
/* Back to CLOCK_MONOTONIC. */
void ts_sim_clock_remove(void);

/* A workload whose invocation sleeps *(const double *)priv seconds on the
 * measuring clock (priv: the latency, borrowed). */
extern const struct ergon_workload_driver ts_sim_workload;

/* The number at o.a (o.a.b when b is given); fails the test otherwise. */
double ts_json_num(const json_t *o, const char *a, const char *b);

/* Exact up to the last bits of a double sum over a few thousand terms. */
#define TS_ASSERT_EXACT(got, want)                                                      \
	do {                                                                            \
		double g_ = (got), w_ = (want);                                         \
		if (!(fabs(g_ - w_) <= 1e-12 * fabs(w_)))                               \
			fail_msg("%s = %.17g, expected %.17g (by hand)", #got, g_, w_); \
	} while (0)

#endif

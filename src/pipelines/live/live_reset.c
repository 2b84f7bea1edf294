/* The target's reset on a thread of its own while the capture's thread
 * keeps draining the instrument (live_internal.h), for both gated
 * captures. */
#include "live_internal.h"

#include <pthread.h>
#include <time.h>

double live_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct reset_job {
	const struct ergon_live_config *c;
	pthread_mutex_t mu;
	int done, rc;
	double t_done_s;
	struct ergon_err err;
};

static void *reset_main(void *arg)
{
	struct reset_job *j = arg;
	int rc = j->c->reset(j->c->reset_ctx, &j->err);
	double t = live_now_s();
	pthread_mutex_lock(&j->mu);
	j->rc = rc;
	j->t_done_s = t;
	j->done = 1;
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

int live_reset_draining(const struct ergon_live_config *cfg, int (*drain)(void *ctx), void *ctx,
			double *t_done_s, struct ergon_err *err)
{
	struct reset_job job = {.c = cfg};
	pthread_t thread;
	int rc = 0;
	*t_done_s = live_now_s();
	pthread_mutex_init(&job.mu, NULL);
	if (pthread_create(&thread, NULL, reset_main, &job) != 0) {
		rc =
		    ergon_err_set(err, ERGON_ENOMEM, "live capture: cannot start the reset thread");
		goto out;
	}
	int idle = 0;
	for (;;) {
		pthread_mutex_lock(&job.mu);
		int done = job.done;
		pthread_mutex_unlock(&job.mu);
		if (done)
			break;
		if (!idle)
			idle = drain(ctx);
		else
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	pthread_join(thread, NULL);
	*t_done_s = job.t_done_s;
	if (job.rc)
		rc = ergon_err_set(err, job.rc, "%s", job.err.msg);
out:
	pthread_mutex_destroy(&job.mu);
	return rc;
}

/* The workload driver interface: prepare / invoke / teardown, one unit of
 * work per invoke. Drivers are registered in src/drivers/workloads/registry.c.
 */
#ifndef ERGON_WORKLOAD_H
#define ERGON_WORKLOAD_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_workload_options {
	const char *arg;          /* text after "name:" ("spin", ARGV, PATH.so) */
	const char *const *kv;    /* NULL-terminated "key=value"; may be NULL */
	double invoke_timeout_s;  /* per-invocation bound (command, pipe, plugin); 0 = none */
	/* Optional stop flag (e.g. set by the session's SIGINT handler). While
	 * it is non-zero, a blocking invoke (command, pipe, builtin:periodic's
	 * sleep) gives up within ~100 ms with ERGON_EINTR, killing its child.
	 * NULL: a signal interrupting a wait is retried. */
	const volatile sig_atomic_t *stop;
};

struct ergon_workload;

struct ergon_workload_driver {
	const char *name;
	const char *longname;
	int (*open)(struct ergon_workload *wl, const struct ergon_workload_options *opts,
		    struct ergon_err *err);
	int (*prepare)(struct ergon_workload *wl, struct ergon_err *err);
	/* One unit of work. 0 ok; ERGON_ETIMEDOUT when it exceeded its bound;
	 * another negative code when the invocation failed (counted, the run
	 * goes on unless the failure policy says otherwise). */
	int (*invoke)(struct ergon_workload *wl, struct ergon_err *err);
	void (*teardown)(struct ergon_workload *wl);
	void (*close)(struct ergon_workload *wl);
};

struct ergon_workload {
	const struct ergon_workload_driver *driver;
	char description[256]; /* what runs, for the report */
	void *priv;
};

ERGON_API const struct ergon_workload_driver *const *ergon_workload_drivers(size_t *count);
ERGON_API int ergon_workload_open(const char *spec, const struct ergon_workload_options *opts,
				  struct ergon_workload **out, struct ergon_err *err);
ERGON_API int ergon_workload_prepare(struct ergon_workload *wl, struct ergon_err *err);
ERGON_API int ergon_workload_invoke(struct ergon_workload *wl, struct ergon_err *err);
ERGON_API void ergon_workload_teardown(struct ergon_workload *wl);
/* Close and free; NULL is a no-op. */
ERGON_API void ergon_workload_close(struct ergon_workload *wl);

#ifdef __cplusplus
}
#endif
#endif

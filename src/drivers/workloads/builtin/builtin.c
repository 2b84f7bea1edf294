/* builtin: synthetic workloads that need nothing outside ergon.
 *
 *   builtin:spin[,iters=N]                     fixed integer work per invoke
 *   builtin:memstream[,bytes=N]                read-modify-write over a buffer
 *   builtin:periodic[,burst_ms=B][,sleep_ms=S] spin B ms, then sleep S ms
 *
 * Options may also come through ergon_workload_options.kv. The results of
 * the work are folded into a volatile sink so that the compiler cannot drop
 * the loops (see docs/internals/workloads.md).
 */
#include "drivers/workloads/wl_opts.h"
#include "ergon/suggest.h"
#include "ergon/workload.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum builtin_kind {
	BUILTIN_SPIN = 1,
	BUILTIN_MEMSTREAM = 2,
	BUILTIN_PERIODIC = 3,
};

/* Defaults: a spin of ~1-3 ms on a desktop core, a buffer well above
 * last-level cache sizes of the boards we target, a 20 % duty cycle. */
#define SPIN_ITERS_DEFAULT 1000000u
#define SPIN_ITERS_MAX 1000000000000u
#define MEMSTREAM_BYTES_DEFAULT (64u * 1024u * 1024u)
#define MEMSTREAM_BYTES_MIN 4096u
#define MEMSTREAM_BYTES_MAX ((uint64_t)16 * 1024 * 1024 * 1024)
#define PERIODIC_BURST_MS_DEFAULT 10u
#define PERIODIC_SLEEP_MS_DEFAULT 40u
#define PERIODIC_MS_MAX 3600000u

struct builtin {
	enum builtin_kind kind;
	uint64_t iters;
	uint64_t bytes;
	uint64_t burst_ms;
	uint64_t sleep_ms;
	uint64_t *buf; /* memstream only; allocated in prepare */
	size_t words;
	uint64_t state; /* carried between invokes so each depends on the last */
	const volatile sig_atomic_t *stop;
};

/* Written after every invoke: a store to a volatile object is an observable
 * side effect, so the computation feeding it must happen. */
static volatile uint64_t builtin_sink;

/* xorshift64 steps: cheap, serially dependent (no vectorising the chain
 * away), and the final value depends on every step. */
static uint64_t spin_chain(uint64_t x, uint64_t iters)
{
	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static int builtin_open(struct ergon_workload *wl, const struct ergon_workload_options *opts,
			struct ergon_err *err)
{
	const char *arg = opts->arg ? opts->arg : "";
	size_t klen = strcspn(arg, ",");
	const char *suffix = arg[klen] == ',' ? arg + klen : NULL;
	const char *spec = wl->description;
	struct builtin *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory", spec);
	b->state = 0x9e3779b97f4a7c15u;
	b->stop = opts->stop;
	int rc;
	if (klen == 4 && strncmp(arg, "spin", 4) == 0) {
		static const char *const keys[] = {"iters", NULL};
		b->kind = BUILTIN_SPIN;
		rc = ergon_wl_opt_check_keys(opts, suffix, spec, keys, err);
		if (rc == 0)
			rc = ergon_wl_opt_u64(opts, suffix, spec, "iters", 1, SPIN_ITERS_MAX,
					      SPIN_ITERS_DEFAULT, &b->iters, err);
	} else if (klen == 9 && strncmp(arg, "memstream", 9) == 0) {
		static const char *const keys[] = {"bytes", NULL};
		b->kind = BUILTIN_MEMSTREAM;
		rc = ergon_wl_opt_check_keys(opts, suffix, spec, keys, err);
		if (rc == 0)
			rc = ergon_wl_opt_u64(opts, suffix, spec, "bytes", MEMSTREAM_BYTES_MIN,
					      MEMSTREAM_BYTES_MAX, MEMSTREAM_BYTES_DEFAULT,
					      &b->bytes, err);
		if (rc == 0 && (uint64_t)(size_t)b->bytes != b->bytes)
			rc = ergon_err_set(err, ERGON_ERANGE,
					   "--workload %s: bytes=%llu does not fit this address "
					   "space; use a smaller buffer",
					   spec, (unsigned long long)b->bytes);
		b->words = (size_t)(b->bytes / sizeof(uint64_t));
	} else if (klen == 8 && strncmp(arg, "periodic", 8) == 0) {
		static const char *const keys[] = {"burst_ms", "sleep_ms", NULL};
		b->kind = BUILTIN_PERIODIC;
		rc = ergon_wl_opt_check_keys(opts, suffix, spec, keys, err);
		if (rc == 0)
			rc = ergon_wl_opt_u64(opts, suffix, spec, "burst_ms", 0, PERIODIC_MS_MAX,
					      PERIODIC_BURST_MS_DEFAULT, &b->burst_ms, err);
		if (rc == 0)
			rc = ergon_wl_opt_u64(opts, suffix, spec, "sleep_ms", 0, PERIODIC_MS_MAX,
					      PERIODIC_SLEEP_MS_DEFAULT, &b->sleep_ms, err);
		if (rc == 0 && b->burst_ms == 0 && b->sleep_ms == 0)
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--workload %s: burst_ms=0 and sleep_ms=0 is no work at "
					   "all; set at least one above 0",
					   spec);
	} else {
		static const char *const kinds[] = {"spin", "memstream", "periodic", NULL};
		char want[65];
		snprintf(want, sizeof(want), "%.*s", (int)(klen > 64 ? 64 : klen), arg);
		const char *near = ergon_suggest_nearest_list(want, kinds);
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--workload %s: unknown builtin '%s'%s%s%s; use builtin:spin, "
				   "builtin:memstream or builtin:periodic",
				   spec, want, near ? " (did you mean 'builtin:" : "",
				   near ? near : "", near ? "'?)" : "");
	}
	if (rc) {
		free(b);
		return rc;
	}
	wl->priv = b;
	return 0;
}

static int builtin_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	struct builtin *b = wl->priv;
	if (b->kind != BUILTIN_MEMSTREAM || b->buf != NULL)
		return 0;
	b->buf = malloc(b->words * sizeof(uint64_t));
	if (b->buf == NULL)
		return ergon_err_set(err, ERGON_ENOMEM,
				     "--workload %s: cannot allocate %llu bytes; use a smaller "
				     "bytes=",
				     wl->description, (unsigned long long)b->bytes);
	/* Touch every page now so that first-touch page faults land in prepare,
	 * not in the first timed invocations. */
	for (size_t i = 0; i < b->words; i++)
		b->buf[i] = (uint64_t)i;
	return 0;
}

/* Busy work until the monotonic clock passes end_s, in chunks short enough
 * (a few microseconds) that the overshoot stays small. */
static uint64_t spin_until(uint64_t x, double end_s)
{
	while (ergon_wl_now_s() < end_s)
		x = spin_chain(x, 1000);
	return x;
}

/* Sleep ms on the monotonic clock, in slices while a stop flag is given so
 * that a stop request is seen within ERGON_WL_STOP_SLICE_MS. A signal
 * without the flag set resumes the sleep until the absolute end. */
static int sleep_ms(uint64_t ms, const volatile sig_atomic_t *stop, const char *spec,
		    struct ergon_err *err)
{
	double end_s = ergon_wl_now_s() + (double)ms * 1e-3;
	for (;;) {
		if (ergon_wl_stopping(stop))
			return ergon_err_set(err, ERGON_EINTR,
					     "--workload %s: stopped on request during the sleep",
					     spec);
		double left_s = end_s - ergon_wl_now_s();
		if (left_s <= 0)
			return 0;
		if (stop && left_s > ERGON_WL_STOP_SLICE_MS * 1e-3)
			left_s = ERGON_WL_STOP_SLICE_MS * 1e-3;
		struct timespec req = {.tv_sec = (time_t)left_s,
				       .tv_nsec = (long)((left_s - (double)(time_t)left_s) * 1e9)};
		if (nanosleep(&req, NULL) != 0 && errno != EINTR)
			return ergon_err_errno(err, errno, "--workload %s: nanosleep", spec);
	}
}

static int builtin_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct builtin *b = wl->priv;
	switch (b->kind) {
	case BUILTIN_SPIN:
		b->state = spin_chain(b->state, b->iters);
		break;
	case BUILTIN_MEMSTREAM: {
		if (b->buf == NULL) {
			int rc = builtin_prepare(wl, err);
			if (rc)
				return rc;
		}
		/* One read and one write of every word: the traffic is 2 x bytes. The
		 * running sum makes each store depend on all earlier loads. */
		uint64_t acc = b->state;
		for (size_t i = 0; i < b->words; i++) {
			acc += b->buf[i];
			b->buf[i] = acc;
		}
		b->state = acc;
		break;
	}
	case BUILTIN_PERIODIC:
		if (b->burst_ms)
			b->state =
			    spin_until(b->state, ergon_wl_now_s() + (double)b->burst_ms * 1e-3);
		if (b->sleep_ms) {
			int rc = sleep_ms(b->sleep_ms, b->stop, wl->description, err);
			if (rc)
				return rc;
		}
		break;
	}
	builtin_sink = b->state;
	return 0;
}

static void builtin_teardown(struct ergon_workload *wl)
{
	struct builtin *b = wl->priv;
	free(b->buf);
	b->buf = NULL;
}

static void builtin_close(struct ergon_workload *wl)
{
	struct builtin *b = wl->priv;
	if (b == NULL)
		return;
	free(b->buf);
	free(b);
	wl->priv = NULL;
}

const struct ergon_workload_driver ergon_workload_builtin = {
    .name = "builtin",
    .longname = "built-in synthetic work (spin, memstream, periodic)",
    .open = builtin_open,
    .prepare = builtin_prepare,
    .invoke = builtin_invoke,
    .teardown = builtin_teardown,
    .close = builtin_close,
};

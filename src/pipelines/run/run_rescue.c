/* The run pipeline's last resort: when the report cannot be built or
 * serialised (out of memory, a failing library call), the raw measurement
 * (phases, samples, invocations) is written as plain CSV through a stack
 * buffer, so nothing measured is lost even when no allocation succeeds.
 * Format: docs/RELIABILITY.md ("The rescue file"). */
#include "ergon/artifact.h"
#include "ergon/instrument.h"
#include "ergon/reserve.h"
#include "ergon/session.h"
#include "ergon/workload.h"
#include "run_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RESCUE_BUF 8192

struct out {
	int fd;
	int err; /* first negative errno */
	size_t used;
	char buf[RESCUE_BUF];
};

static void flush(struct out *o)
{
	if (o->err == 0 && o->used > 0)
		o->err = ergon_fd_write_all(o->fd, o->buf, o->used);
	o->used = 0;
}

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0) {
		/* Formatting can need memory (long conversions): a rescue with
		 * a line missing must not pass for complete, so fail it and let
		 * the caller try the next place. */
		if (o->err == 0)
			o->err = -ENOMEM;
		return;
	}
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (o->used + len > sizeof(o->buf))
		flush(o);
	memcpy(o->buf + o->used, line, len);
	o->used += len;
}

/* Header text without newlines (a reason or a name from the input). */
static void put_text(struct out *o, const char *key, const char *v)
{
	char clean[256];
	size_t k = 0;
	for (; v && v[k] && k + 1 < sizeof(clean); k++)
		clean[k] = (v[k] == '\n' || v[k] == '\r') ? ' ' : v[k];
	clean[k] = '\0';
	put(o, "# %s: %s\n", key, clean);
}

int ergon_run_rescue_emit(void *ctx, int fd)
{
	const struct ergon_run_rescue *r = ctx;
	const struct ergon_session_result *res = r->res;
	/* Static: the emitter runs when the heap may be exhausted, and the
	 * pipeline is single-threaded by then. */
	static struct out o;
	o.fd = fd;
	o.err = 0;
	o.used = 0;
	put(&o, "# ergon rescue v1: ergon run measured this but could not write its report\n");
	put_text(&o, "reason", r->reason);
	put_text(&o, "output", r->out_path);
	put_text(&o, "provenance", ergon_provenance_name(r->inst->identity.provenance));
	put_text(&o, "device", r->device);
	put_text(&o, "instrument", r->inst->driver->name);
	put_text(&o, "workload", r->wl ? r->wl->description : "?");
	put_text(&o, "stop_reason", res->stop_reason);
	put(&o, "# status: %d (1 complete, 2 interrupted, 3 instrument failed, 4 aborted)\n",
	    res->status);
	put(&o, "# phases_s: idle %.17g %.17g load %.17g %.17g\n", res->idle_start_s,
	    res->idle_end_s, res->load_start_s, res->load_end_s);
	put(&o, "# counts: samples %zu invocations %zu failed %zu windows %zu\n", res->n_samples,
	    res->n_inv, res->n_failed, res->windows_completed);
	put(&o, "kind,t_s,value,channel,energy_j,temp_c\n");
	for (size_t i = 0; res->window_edges_s && i <= res->windows_completed; i++)
		put(&o, "edge,%.17g,,,,\n", res->window_edges_s[i]);
	for (size_t i = 0; i < res->n_samples; i++) {
		put(&o, "sample,%.17g,%.17g,%u,", res->sample_t_s[i], res->sample_power_w[i],
		    res->sample_channel ? (unsigned)res->sample_channel[i] : 0u);
		if (res->has_energy && res->sample_energy_j)
			put(&o, "%.17g", res->sample_energy_j[i]);
		put(&o, ",");
		if (res->has_temp && res->sample_temp_c)
			put(&o, "%.17g", res->sample_temp_c[i]);
		put(&o, "\n");
	}
	for (size_t i = 0; i < res->n_inv; i++)
		put(&o, "invocation,%.17g,%.17g,,,\n", res->inv_start_s[i], res->inv_latency_s[i]);
	for (size_t i = 0; i < res->n_failed; i++)
		put(&o, "failed,%zu,,,,\n", res->failed_index[i]);
	put(&o, "# end\n");
	flush(&o);
	return o.err;
}

/* Workload wrappers: lookup by spec and lifecycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ergon/suggest.h"
#include "ergon/workload.h"

int ergon_workload_open(const char *spec, const struct ergon_workload_options *opts,
			struct ergon_workload **out, struct ergon_err *err)
{
	*out = NULL;
	size_t n, len = strcspn(spec, ":");
	const struct ergon_workload_driver *const *d = ergon_workload_drivers(&n);
	const struct ergon_workload_driver *drv = NULL;
	char names[512] = "";
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (strlen(d[i]->name) == len && strncmp(d[i]->name, spec, len) == 0)
			drv = d[i];
		if (o < sizeof(names) - 64)
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s:…", o ? ", " : "",
					      d[i]->name);
	}
	if (drv == NULL) {
		const char *cands[32];
		size_t nc = 0;
		for (size_t i = 0; i < n && nc < 32; i++)
			cands[nc++] = d[i]->name;
		char want[64];
		snprintf(want, sizeof(want), "%.*s", (int)(len < 63 ? len : 63), spec);
		const char *near = ergon_suggest_nearest(want, cands, nc);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--workload %s: unknown workload kind%s%s%s; known kinds: %s",
				     spec, near ? " (did you mean '" : "", near ? near : "",
				     near ? ":'?)" : "", names);
	}
	struct ergon_workload *wl = calloc(1, sizeof(*wl));
	if (wl == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	wl->driver = drv;
	snprintf(wl->description, sizeof(wl->description), "%s", spec);
	struct ergon_workload_options wo = {0};
	if (opts)
		wo = *opts;
	if (wo.arg == NULL && spec[len] == ':')
		wo.arg = spec + len + 1;
	int rc = drv->open(wl, &wo, err);
	if (rc) {
		free(wl);
		return rc;
	}
	*out = wl;
	return 0;
}

int ergon_workload_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	return wl->driver->prepare ? wl->driver->prepare(wl, err) : 0;
}

int ergon_workload_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	return wl->driver->invoke(wl, err);
}

void ergon_workload_teardown(struct ergon_workload *wl)
{
	if (wl && wl->driver->teardown)
		wl->driver->teardown(wl);
}

void ergon_workload_close(struct ergon_workload *wl)
{
	if (wl == NULL)
		return;
	if (wl->driver->close)
		wl->driver->close(wl);
	free(wl);
}

/* plugin: a shared object loaded into ergon (`--workload plugin:PATH.so[,ARG]`).
 *
 * The object exports ERGON_PLUGIN_SYMBOL, a const struct ergon_plugin_v1
 * (include/ergon/plugin.h). open checks the file is an ELF object before
 * dlopen (a clearer message than the loader's), resolves the symbol and
 * refuses an ABI version other than ERGON_PLUGIN_ABI_VERSION before calling
 * anything in it. A PATH without '/' is taken relative to the current folder,
 * never searched on the loader's library path.
 *
 * The plugin runs in ergon's process and cannot be interrupted: with an
 * invocation timeout, an invoke that returns later than the bound is
 * reported as ERGON_ETIMEDOUT after the fact.
 */
#include "ergon/plugin.h"

#include "drivers/workloads/wl_opts.h"
#include "ergon/fileio.h"
#include "ergon/workload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct plugin {
	void *dl;
	const struct ergon_plugin_v1 *api;
	void *state;
	int prepared;
	double timeout_s;
	char path[4096];
	char arg[1024]; /* empty = none */
	int has_arg;
};

static int check_elf(const char *path, const char *spec, struct ergon_err *err)
{
	int fd;
	/* A shared object is a regular file; a FIFO must not block here. */
	if (ergon_open_input(path, NULL, 0, &fd, err) != 0) {
		char why[ERGON_ERR_MSG_MAX / 2];
		snprintf(why, sizeof why, "%.400s", err->msg);
		int code = err->code;
		ergon_err_clear(err);
		return ergon_err_set(err, code,
				     "--workload %s: cannot open plugin '%s' (give the path of a "
				     ".so built against include/ergon/plugin.h): %s",
				     spec, path, why);
	}
	unsigned char magic[4] = {0};
	ssize_t n;
	do
		n = read(fd, magic, sizeof(magic));
	while (n < 0 && errno == EINTR);
	close(fd);
	/* ELF identification: e_ident[EI_MAG0..3] = 0x7f 'E' 'L' 'F' (elf(5)). */
	if (n != 4 || memcmp(magic,
			     "\x7f"
			     "ELF",
			     4) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "--workload %s: '%s' is not an ELF shared object; build the "
				     "plugin as a shared library (see examples/noop_plugin)",
				     spec, path);
	return 0;
}

static int plugin_open(struct ergon_workload *wl, const struct ergon_workload_options *opts,
		       struct ergon_err *err)
{
	const char *spec = wl->description;
	const char *a = opts->arg ? opts->arg : "";
	struct plugin *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "--workload %s: out of memory", spec);
	static const char *const no_keys[] = {NULL};
	/* The text after the comma is the plugin's ARG; kv options have no
	 * meaning here. */
	int rc = ergon_wl_opt_check_keys(opts, NULL, spec, no_keys, err);
	if (rc)
		goto fail;
	size_t plen = strcspn(a, ",");
	if (plen == 0) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--workload %s: no plugin path; write plugin:./libmy.so[,ARG]",
				   spec);
		goto fail;
	}
	if (!(opts->invoke_timeout_s >= 0.0)) {
		rc = ergon_err_set(err, ERGON_ERANGE,
				   "--workload %s: invocation timeout %g s is negative; give 0 "
				   "(none) or a positive number of seconds",
				   spec, opts->invoke_timeout_s);
		goto fail;
	}
	p->timeout_s = opts->invoke_timeout_s;
	/* "./" keeps dlopen from searching LD_LIBRARY_PATH and the system
	 * folders for a bare name (dlopen(3)). */
	int w = snprintf(p->path, sizeof(p->path), "%s%.*s", memchr(a, '/', plen) ? "" : "./",
			 (int)plen, a);
	if (w < 0 || (size_t)w >= sizeof(p->path)) {
		rc = ergon_err_set(err, ERGON_ETOOBIG, "--workload %.80s…: plugin path too long",
				   spec);
		goto fail;
	}
	if (a[plen] == ',') {
		w = snprintf(p->arg, sizeof(p->arg), "%s", a + plen + 1);
		if (w < 0 || (size_t)w >= sizeof(p->arg)) {
			rc = ergon_err_set(
			    err, ERGON_ETOOBIG,
			    "--workload %.80s…: plugin argument longer than %zu bytes", spec,
			    sizeof(p->arg) - 1);
			goto fail;
		}
		p->has_arg = 1;
	}
	rc = check_elf(p->path, spec, err);
	if (rc)
		goto fail;
	dlerror();
	p->dl = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
	if (p->dl == NULL) {
		const char *why = dlerror();
		rc = ergon_err_set(err, ERGON_EIO,
				   "--workload %s: dlopen '%s' failed: %s; check that it is built "
				   "for this machine and its dependencies are installed",
				   spec, p->path, why ? why : "unknown reason");
		goto fail;
	}
	dlerror();
	p->api = dlsym(p->dl, ERGON_PLUGIN_SYMBOL);
	if (p->api == NULL) {
		rc = ergon_err_set(
		    err, ERGON_ENOENT,
		    "--workload %s: '%s' exports no symbol %s; define "
		    "`const struct ergon_plugin_v1 %s = {...}` with default visibility "
		    "(see examples/noop_plugin)",
		    spec, p->path, ERGON_PLUGIN_SYMBOL, ERGON_PLUGIN_SYMBOL);
		goto fail;
	}
	if (p->api->abi_version != ERGON_PLUGIN_ABI_VERSION) {
		rc = ergon_err_set(err, ERGON_ENOTSUP,
				   "--workload %s: '%s' has plugin ABI version %u but this ergon "
				   "speaks version %u; rebuild the plugin against this ergon's "
				   "include/ergon/plugin.h",
				   spec, p->path, (unsigned)p->api->abi_version,
				   (unsigned)ERGON_PLUGIN_ABI_VERSION);
		goto fail;
	}
	if (p->api->invoke == NULL) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--workload %s: '%s' sets no invoke function; a plugin must "
				   "provide invoke",
				   spec, p->path);
		goto fail;
	}
	if (p->api->name && p->api->name[0])
		snprintf(wl->description, sizeof(wl->description), "plugin:%.160s (%.64s)", p->path,
			 p->api->name);
	wl->priv = p;
	return 0;
fail:
	if (p->dl)
		dlclose(p->dl);
	free(p);
	return rc;
}

static int plugin_prepare(struct ergon_workload *wl, struct ergon_err *err)
{
	struct plugin *p = wl->priv;
	if (p->prepared)
		return 0;
	if (p->api->prepare) {
		int prc = p->api->prepare(&p->state, p->has_arg ? p->arg : NULL);
		if (prc != 0)
			return ergon_err_set(err, ERGON_EIO,
					     "--workload %s: the plugin's prepare returned %d; see "
					     "the plugin's documentation for that code",
					     wl->description, prc);
	}
	p->prepared = 1;
	return 0;
}

static int plugin_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct plugin *p = wl->priv;
	if (!p->prepared) {
		int rc = plugin_prepare(wl, err);
		if (rc)
			return rc;
	}
	/* The coarse clock: two precise reads would cost more than the rest of
	 * the harness per invocation (docs/PERFORMANCE.md), and a timeout is
	 * far longer than the coarse clock's tick. */
	double t0 = p->timeout_s > 0 ? ergon_wl_coarse_now_s() : 0;
	int irc = p->api->invoke(p->state);
	if (irc != 0)
		return ergon_err_set(
		    err, ERGON_EIO,
		    "--workload %s: failed invocation: the plugin's invoke returned "
		    "%d",
		    wl->description, irc);
	if (p->timeout_s > 0) {
		double dt = ergon_wl_coarse_now_s() - t0;
		if (dt > p->timeout_s)
			return ergon_err_set(
			    err, ERGON_ETIMEDOUT,
			    "--workload %s: invoke took %.3f s, over the %g s "
			    "timeout (an in-process plugin cannot be stopped early)",
			    wl->description, dt, p->timeout_s);
	}
	return 0;
}

static void plugin_teardown(struct ergon_workload *wl)
{
	struct plugin *p = wl->priv;
	if (p->prepared && p->api->teardown)
		p->api->teardown(p->state);
	p->state = NULL;
	p->prepared = 0;
}

static void plugin_close(struct ergon_workload *wl)
{
	struct plugin *p = wl->priv;
	if (p == NULL)
		return;
	plugin_teardown(wl);
	dlclose(p->dl);
	free(p);
	wl->priv = NULL;
}

const struct ergon_workload_driver ergon_workload_plugin = {
    .name = "plugin",
    .longname = "shared object exporting " ERGON_PLUGIN_SYMBOL,
    .open = plugin_open,
    .prepare = plugin_prepare,
    .invoke = plugin_invoke,
    .teardown = plugin_teardown,
    .close = plugin_close,
};

/* Per-invocation cost of the workload drivers, each against a baseline
 * measured in the same run:
 *   plugin:noop      vs calling the plugin's invoke directly (dlsym)
 *   builtin:spin,iters=1 vs the same direct call baseline
 *   command:true     vs posix_spawn + waitpid of /bin/true by hand
 *   pipe:sed -u ...  vs command:true (what "no fork per op" buys)
 * Usage: bench_workloads [BUILD_DIR]   (BUILD_DIR holds examples/noop_plugin)
 * Figures go to docs/PERFORMANCE.md as ratios. */
#include "ergon/plugin.h"
#include "ergon/workload.h"

#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ns per invoke of spec over n invocations; negative on failure. */
static double per_invoke_ns_t(const char *spec, long n, double timeout_s)
{
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	struct ergon_workload_options o = {.invoke_timeout_s = timeout_s};
	if (ergon_workload_open(spec, &o, &wl, &err) || ergon_workload_prepare(wl, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		ergon_workload_close(wl);
		return -1;
	}
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		if (ergon_workload_invoke(wl, &err)) {
			fprintf(stderr, "bench: %s\n", err.msg);
			ergon_workload_close(wl);
			return -1;
		}
	}
	double dt = now_s() - t0;
	ergon_workload_close(wl);
	return dt / (double)n * 1e9;
}

static double per_invoke_ns(const char *spec, long n)
{
	return per_invoke_ns_t(spec, n, 10.0);
}

int main(int argc, char **argv)
{
	const char *build = argc > 1 ? argv[1] : ".";
	char so[4096];
	snprintf(so, sizeof(so), "%s/examples/noop_plugin/libergon_noop_plugin.so", build);

	/* Baseline 1: the plugin's invoke through a function pointer, no ergon. */
	void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fprintf(stderr, "bench: %s\n", dlerror());
		return 1;
	}
	const struct ergon_plugin_v1 *api = dlsym(dl, ERGON_PLUGIN_SYMBOL);
	void *st = NULL;
	api->prepare(&st, NULL);
	const long n_fast = 5000000;
	double t0 = now_s();
	for (long i = 0; i < n_fast; i++)
		api->invoke(st);
	double direct_ns = (now_s() - t0) / (double)n_fast * 1e9;

	char spec[4200];
	snprintf(spec, sizeof(spec), "plugin:%s", so);
	double plugin_ns = per_invoke_ns(spec, n_fast);
	double plugin_nt_ns = per_invoke_ns_t(spec, n_fast, 0.0);
	/* The cost of one monotonic clock read, which a timeout check needs
	 * twice per in-process invocation. */
	t0 = now_s();
	double sink = 0;
	for (long i = 0; i < n_fast; i++)
		sink += now_s();
	double clock_ns = (now_s() - t0) / (double)n_fast * 1e9;
	if (sink < 0)
		return 1;
	double spin_ns = per_invoke_ns("builtin:spin,iters=1", n_fast);

	/* Baseline 2: spawn and reap /bin/true by hand. */
	const long n_proc = 300;
	char *targv[] = {"true", NULL};
	t0 = now_s();
	for (long i = 0; i < n_proc; i++) {
		pid_t pid;
		int status;
		if (posix_spawnp(&pid, "true", NULL, NULL, targv, environ) != 0)
			return 1;
		waitpid(pid, &status, 0);
	}
	double spawn_ns = (now_s() - t0) / (double)n_proc * 1e9;
	double command_ns = per_invoke_ns("command:true", n_proc);
	double pipe_ns = per_invoke_ns("pipe:sed -u s/.*/ok/", 20000);
	char cspec[4200];
	snprintf(cspec, sizeof(cspec), "pipe:%s/examples/pipe_child/ergon_pipe_child 0", build);
	double cpipe_ns = per_invoke_ns(cspec, 20000);
	if (plugin_ns < 0 || spin_ns < 0 || command_ns < 0 || pipe_ns < 0 || cpipe_ns < 0)
		return 1;

	printf("direct plugin call          : %10.1f ns/invoke (baseline)\n", direct_ns);
	printf("plugin:noop via ergon       : %10.1f ns/invoke (%.2fx baseline, +%.1f ns)\n",
	       plugin_ns, plugin_ns / direct_ns, plugin_ns - direct_ns);
	printf("plugin:noop, no timeout     : %10.1f ns/invoke (%.2fx baseline, +%.1f ns)\n",
	       plugin_nt_ns, plugin_nt_ns / direct_ns, plugin_nt_ns - direct_ns);
	printf("clock_gettime(MONOTONIC)    : %10.1f ns/call\n", clock_ns);
	printf("builtin:spin,iters=1        : %10.1f ns/invoke (%.2fx baseline)\n", spin_ns,
	       spin_ns / direct_ns);
	printf("posix_spawn+waitpid true    : %10.1f ns/invoke (baseline)\n", spawn_ns);
	printf("command:true                : %10.1f ns/invoke (%.2fx baseline)\n", command_ns,
	       command_ns / spawn_ns);
	printf("pipe:sed -u s/.*/ok/        : %10.1f ns/invoke (%.3fx command:true)\n", pipe_ns,
	       pipe_ns / command_ns);
	printf("pipe:ergon_pipe_child 0     : %10.1f ns/invoke (%.3fx command:true)\n", cpipe_ns,
	       cpipe_ns / command_ns);
	/* The builtin work is not optimised away: 10x the iterations or bytes
	 * must cost ~10x the time. */
	double spin5 = per_invoke_ns("builtin:spin,iters=100000", 200);
	double spin6 = per_invoke_ns("builtin:spin,iters=1000000", 20);
	double mem1 = per_invoke_ns("builtin:memstream,bytes=4194304", 50);
	double mem2 = per_invoke_ns("builtin:memstream,bytes=41943040", 5);
	if (spin5 < 0 || spin6 < 0 || mem1 < 0 || mem2 < 0)
		return 1;
	printf(
	    "builtin:spin 1e5 / 1e6 iters: %10.1f / %.1f ns (ratio %.2f, ideal 10; %.2f ns/iter)\n",
	    spin5, spin6, spin6 / spin5, spin6 / 1e6);
	printf("builtin:memstream 4 / 40 MiB: %10.1f / %.1f ns (ratio %.2f, ideal 10; %.2f GB/s "
	       "read+write at 40 MiB)\n",
	       mem1, mem2, mem2 / mem1, 2.0 * 41943040.0 / mem2);
	api->teardown(st);
	dlclose(dl);
	return 0;
}

/* Benchmarks of the hwmon instrument under a threaded sampler.
 *
 * 1. Rate: a sampler thread reads three ina3221 rails (six attribute files,
 *    pread on descriptors kept open) from a fake Orin NX tree on tmpfs at
 *    1, 5 and 20 kHz targets: achieved sweep rate, p99 gap between sweeps,
 *    and the sampler thread's CPU time as a share of one core.
 * 2. Perturbation: throughput of builtin:spin with the sampler off and on
 *    at 1 kHz, interleaved off/on rounds in one run; the loss is reported
 *    as a ratio against the "off" rounds of the same run.
 *
 * The sampler loop here is the bench's own (absolute deadlines with
 * clock_nanosleep, like the session engine's threaded sampler): it
 * isolates the driver's cost. bench_hw_session_sampler.c measures the same
 * three rails through the session engine's threaded sampler, the one
 * `ergon run` ships.
 *
 * Usage: bench_hw_sampler [SECONDS_PER_RATE (2)] [ROUNDS (5)] [ROUND_S (1)]
 * The fake tree goes under $TMPDIR_FAST or /dev/shm (tmpfs). */
#include "ergon/instrument.h"
#include "ergon/workload.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_hw_tree.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


struct sampler {
	struct ergon_instrument *inst;
	double period_s, duration_s;
	atomic_int stop;
	double *t;
	size_t n, cap;
	double cpu_s, wall_s;
	int failed;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct ergon_sample buf[8];
	struct ergon_err err = {0};
	double c0 = thread_cpu_s(), t0 = now_s(), due = t0;
	while (!atomic_load(&s->stop) && (s->duration_s <= 0 || now_s() - t0 < s->duration_s)) {
		size_t n = 0;
		if (ergon_instrument_read(s->inst, buf, 8, &n, &err) != 0 || n != 3) {
			s->failed = 1;
			break;
		}
		if (s->n < s->cap)
			s->t[s->n++] = buf[0].t_s;
		due += s->period_s;
		double late = now_s() - due;
		if (late > s->period_s) /* fell behind: skip, do not burst */
			due += floor(late / s->period_s) * s->period_s;
		struct timespec ts = {(time_t)due, (long)((due - floor(due)) * 1e9)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	s->cpu_s = thread_cpu_s() - c0;
	s->wall_s = now_s() - t0;
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int start_sampler(struct sampler *s, pthread_t *th)
{
	return pthread_create(th, NULL, sampler_main, s);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 2.0;
	int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	double round_s = argc > 3 ? strtod(argv[3], NULL) : 1.0;
	const char *base = getenv("TMPDIR_FAST") ? getenv("TMPDIR_FAST") : "/dev/shm";
	char root[256];
	snprintf(root, sizeof(root), "%s/ergon-bench-hw-XXXXXX", base);
	if (mkdtemp(root) == NULL || make_tree(root) != 0) {
		fprintf(stderr, "cannot build the fake tree under %s\n", base);
		return 1;
	}
	struct ergon_instrument_options o = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open("hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC", &o, &inst, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	/* Cost per sweep, tight loop: the driver's read vs the bare syscalls
	 * it cannot avoid (six preads of the same files), in the same run. */
	{
		static const char *const rel[6] = {"in1_input",	  "curr1_input", "in2_input",
						   "curr2_input", "in3_input",	 "curr3_input"};
		int fds[6];
		for (int i = 0; i < 6; i++) {
			char p[512];
			snprintf(p, sizeof(p), "%s/sys/class/hwmon/hwmon0/%s", root, rel[i]);
			fds[i] = open(p, O_RDONLY);
			if (fds[i] < 0)
				return 1;
		}
		const long iters = 200000;
		char b[64];
		double t0 = now_s();
		for (long k = 0; k < iters; k++)
			for (int i = 0; i < 6; i++)
				if (pread(fds[i], b, sizeof(b), 0) <= 0)
					return 1;
		double bare_us = (now_s() - t0) / (double)iters * 1e6;
		struct ergon_sample sb[8];
		size_t n;
		t0 = now_s();
		for (long k = 0; k < iters; k++)
			if (ergon_instrument_read(inst, sb, 8, &n, &err))
				return 1;
		double drv_us = (now_s() - t0) / (double)iters * 1e6;
		for (int i = 0; i < 6; i++)
			close(fds[i]);
		printf("## cost per sweep (3 rails, 6 files), tight loop of %ld sweeps\n\n", iters);
		printf("| bare 6 x pread | ergon_instrument_read | ratio |\n|---|---|---|\n");
		printf("| %.2f us | %.2f us | %.2f |\n\n", bare_us, drv_us, drv_us / bare_us);
	}
	printf("## hwmon sampler: 3 rails (6 files), fake tree on %s\n\n", base);
	printf("| target Hz | achieved Hz | gap p50 us | gap p99 us | max gap us | sampler CPU %% "
	       "of a core | per sweep us CPU |\n");
	printf("|---|---|---|---|---|---|---|\n");
	static const double targets[3] = {1000, 5000, 20000};
	for (int k = 0; k < 3; k++) {
		struct sampler s = {.inst = inst, .period_s = 1.0 / targets[k], .duration_s = secs};
		s.cap = (size_t)(targets[k] * secs * 1.2) + 16;
		s.t = malloc(s.cap * sizeof(double));
		pthread_t th;
		if (s.t == NULL || start_sampler(&s, &th) != 0)
			return 1;
		pthread_join(th, NULL);
		if (s.failed || s.n < 3) {
			fprintf(stderr, "sampler failed\n");
			return 1;
		}
		size_t ng = s.n - 1;
		double *g = malloc(ng * sizeof(double));
		for (size_t i = 0; i < ng; i++)
			g[i] = s.t[i + 1] - s.t[i];
		qsort(g, ng, sizeof(double), cmp_d);
		double p50 = g[ng / 2], p99 = g[(size_t)ceil(0.99 * (double)ng) - 1],
		       mx = g[ng - 1];
		double achieved = (double)ng / (s.t[s.n - 1] - s.t[0]);
		printf("| %.0f | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", targets[k], achieved,
		       p50 * 1e6, p99 * 1e6, mx * 1e6, 100.0 * s.cpu_s / s.wall_s,
		       1e6 * s.cpu_s / (double)s.n);
		free(g);
		free(s.t);
	}

	/* Perturbation: builtin:spin throughput, sampler off vs on at 1 kHz. */
	struct ergon_workload *wl = NULL;
	if (ergon_workload_open("builtin:spin,iters=200000", NULL, &wl, &err) ||
	    ergon_workload_prepare(wl, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double off_ops = 0, off_s = 0, on_ops = 0, on_s = 0;
	printf("\n## perturbation: builtin:spin,iters=200000, %d off/on rounds of %.1f s\n\n",
	       rounds, round_s);
	printf("| round | off ops/s | on ops/s | on/off |\n|---|---|---|---|\n");
	for (int r = 0; r < rounds; r++) {
		double rate[2];
		for (int on = 0; on < 2; on++) {
			struct sampler s = {.inst = inst, .period_s = 1e-3, .duration_s = 0};
			s.cap = 0;
			pthread_t th;
			if (on && start_sampler(&s, &th) != 0)
				return 1;
			double t0 = now_s(), t;
			long ops = 0;
			while ((t = now_s()) - t0 < round_s) {
				if (ergon_workload_invoke(wl, &err)) {
					fprintf(stderr, "%s\n", err.msg);
					return 1;
				}
				ops++;
			}
			if (on) {
				atomic_store(&s.stop, 1);
				pthread_join(th, NULL);
			}
			rate[on] = (double)ops / (t - t0);
			if (on) {
				on_ops += (double)ops;
				on_s += t - t0;
			} else {
				off_ops += (double)ops;
				off_s += t - t0;
			}
		}
		printf("| %d | %.1f | %.1f | %.4f |\n", r + 1, rate[0], rate[1], rate[1] / rate[0]);
	}
	double ratio = (on_ops / on_s) / (off_ops / off_s);
	printf("\noverall on/off throughput ratio: %.4f (loss %.2f %%)\n", ratio,
	       100.0 * (1.0 - ratio));
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
	ergon_instrument_close(inst);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return 0;
}

/* PPK2: (1) the sample decoder alone, MS/s over words in memory with range
 * switches, counter steps and logic changes; (2) decode + gated analysis
 * of a live 100 kSPS stream from the pty protocol simulator through the
 * ppk2 instrument driver, as the CPU share of one core used by the
 * consuming thread (the simulator's own thread is not counted; its cost
 * is printed beside).
 *   bench_ppk2 [SECONDS_LIVE]   (default 10) */
#include "../tests/support/ts_ppk2_sim.c"
#include "drivers/instruments/ppk2/ppk2.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clk(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wave(uint64_t k, void *ctx)
{
	(void)ctx;
	return (k / 50000) % 2 ? 0.020 : 0.002;
}

static uint8_t gate(uint64_t k, void *ctx)
{
	(void)ctx;
	return (k / 50000) % 2 ? 0x01 : 0x00;
}

static void bench_decoder(void)
{
	const size_t words = 20u * 1000 * 1000;
	uint8_t *b = malloc(words * 4);
	for (size_t i = 0; i < words; i++) {
		unsigned r = (unsigned)((i / 1000) % 5);
		uint32_t w = (uint32_t)((i * 37) % 16384) | r << 14 | (uint32_t)(i & 63) << 18 |
			     (uint32_t)((i / 777) & 255) << 24;
		memcpy(b + 4 * i, &w, 4);
	}
	struct ppk2_cal c;
	memset(&c, 0, sizeof(c));
	for (unsigned r = 0; r < PPK2_RANGES; r++) {
		c.r[r] = ppk2_default_r_ohm[r];
		c.gs[r] = 0.01;
		c.gi[r] = 1;
		c.ug[r] = 1;
	}
	struct ppk2_decoder d;
	ppk2_decoder_init(&d, &c, 3300);
	struct ppk2_sample out[1024];
	double sum = 0;
	double t0 = clk(CLOCK_MONOTONIC);
	for (size_t p = 0; p < words * 4;) {
		size_t used = 0;
		size_t n = ppk2_decode(&d, b + p, words * 4 - p < 4096 ? words * 4 - p : 4096, out,
				       1024, &used, NULL, NULL);
		sum += out[n ? n - 1 : 0].current_a;
		p += used;
	}
	double t = clk(CLOCK_MONOTONIC) - t0;
	printf("decoder: %zu samples in %.3f s = %.1f MS/s (x%.0f the PPK2's 0.1 MS/s; "
	       "checksum %.3g)\n",
	       words, t, (double)words / t / 1e6, (double)words / t / 1e5, sum);
	free(b);
}

static void bench_live(double secs)
{
	struct ts_ppk2_sim_cfg cfg = {.current_a = wave, .logic = gate, .realtime = 1};
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&cfg, &path);
	char spec[200];
	snprintf(spec, sizeof(spec), "ppk2:%s", path);
	const char *kv[] = {"vdd_mv=3000", NULL};
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	struct ergon_gated *g = NULL;
	struct ergon_gated_config gc = {.min_window_s = 0.1};
	if (ergon_instrument_open(spec, &o, &inst, &err) || ergon_gated_new(&gc, &g, &err) ||
	    ergon_gated_raw_begin(g, 100000, &err) || ergon_instrument_start(inst, &err)) {
		fprintf(stderr, "bench_ppk2: %s\n", err.msg);
		exit(1);
	}
	enum { CAP = 4096 };
	static struct ergon_sample buf[CAP];
	static float cur[CAP], volt[CAP];
	static uint8_t bits[CAP / 8 + 1];
	uint64_t n_total = 0;
	double w0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_THREAD_CPUTIME_ID);
	double p0 = clk(CLOCK_PROCESS_CPUTIME_ID);
	while (clk(CLOCK_MONOTONIC) - w0 < secs) {
		size_t n = 0;
		if (ergon_instrument_read(inst, buf, CAP, &n, &err))
			break;
		memset(bits, 0, sizeof(bits));
		for (size_t i = 0; i < n; i++) {
			cur[i] = (float)buf[i].current_a;
			volt[i] = (float)buf[i].voltage_v;
			if (buf[i].digital & 1)
				bits[i / 8] |= (uint8_t)(1u << (i % 8));
		}
		if (n && ergon_gated_push_raw(g, cur, volt, NULL, bits, 0, n, &err)) {
			fprintf(stderr, "bench_ppk2: %s\n", err.msg);
			exit(1);
		}
		n_total += n;
	}
	double wall = clk(CLOCK_MONOTONIC) - w0, cpu = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
	double proc = clk(CLOCK_PROCESS_CPUTIME_ID) - p0;
	const struct ergon_gated_result *res = NULL;
	ergon_gated_finish(g, &res, &err);
	printf("live: %llu samples in %.2f s (%.0f S/s), %zu gate windows; consumer "
	       "(read + decode + gated engine) %.3f s CPU = %.2f %% of one core; simulator "
	       "thread %.2f %%\n",
	       (unsigned long long)n_total, wall, (double)n_total / wall,
	       res ? res->window_count : 0, cpu, 100.0 * cpu / wall, 100.0 * (proc - cpu) / wall);
	ergon_instrument_stop(inst, &err);
	ergon_instrument_close(inst);
	ergon_gated_free(g);
	ts_ppk2_sim_stop(s);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 10.0;
	bench_decoder();
	bench_live(secs > 0 ? secs : 10.0);
	return 0;
}

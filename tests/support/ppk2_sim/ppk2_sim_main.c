/* ergon_ppk2_sim: the PPK2 protocol simulator as a program, for shell
 * tests, benchmarks and trying the ppk2 driver without a PPK2.
 *
 *   ergon_ppk2_sim [--current-a A] [--burst-a A] [--gate-line N]
 *                  [--period-s S] [--duty D] [--samples N] [--gap-at K:LEN]
 *                  [--disconnect-after N] [--r-zero] [--garbled] [--fast]
 *                  [--gate-after FILE --gate-delay-s D --gate-s W
 *                   [--unplug-in-gate F]]
 *
 * Prints the pty path on stdout (one line), then serves until SIGTERM,
 * SIGINT or stdin closing. The waveform: --current-a at rest and
 * --burst-a while logic line --gate-line is high, for the first duty x
 * period of each period (gate from the start of every period). Samples are
 * paced at 100 kSPS unless --fast.
 *
 * --gate-after FILE replaces the periodic gate by one window, as firmware
 * after a reset draws it: the simulator looks for FILE every 1000 samples
 * (10 ms); from the sample k at which it first exists, the gate line is
 * high for samples k + D x 100 kHz .. k + (D + W) x 100 kHz - 1, at
 * --burst-a, and low (--current-a) before and after. A test's fake probe
 * creates FILE when it resets the target. The window is W x 100,000
 * samples whatever the host's load: its energy is exact in device time.
 * --unplug-in-gate F unplugs the simulated PPK2 at fraction F of that
 * window (0 < F < 1), wherever the window falls. */
#include "ts_ppk2_sim.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

struct wave {
	double rest_a, burst_a, period_s, duty;
	int line;
	const char *trigger; /* --gate-after FILE */
	double delay_s, width_s;
	volatile sig_atomic_t triggered;
	uint64_t k_trig;
	double unplug_frac; /* --unplug-in-gate */
};

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

static int gate_high(const struct wave *w, uint64_t k)
{
	if (w->trigger) {
		uint64_t a = w->k_trig + (uint64_t)(w->delay_s * 100000.0 + 0.5);
		uint64_t b = a + (uint64_t)(w->width_s * 100000.0 + 0.5);
		return w->triggered && k >= a && k < b;
	}
	if (w->period_s <= 0)
		return 0;
	uint64_t per = (uint64_t)(w->period_s * 100000.0 + 0.5);
	uint64_t hi = (uint64_t)(w->duty * (double)per + 0.5);
	return per > 0 && k % per < hi;
}

static double cur(uint64_t k, void *ctx)
{
	struct wave *w = ctx;
	if (w->trigger && !w->triggered && k % 1000 == 0 && access(w->trigger, F_OK) == 0) {
		w->k_trig = k;
		w->triggered = 1;
	}
	return gate_high(w, k) ? w->burst_a : w->rest_a;
}

static uint8_t logic(uint64_t k, void *ctx)
{
	const struct wave *w = ctx;
	return (uint8_t)(gate_high(w, k) ? 1u << w->line : 0u);
}

static int num(const char *s, double *out)
{
	char *end = NULL;
	*out = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct wave w = {
	    .rest_a = 0.001, .burst_a = 0.010, .period_s = 2.0, .duty = 0.5, .line = 0};
	struct ts_ppk2_sim_cfg cfg = {.current_a = cur, .logic = logic, .ctx = &w, .realtime = 1};
	static char garbled[] = "Calibrated: 1\nR0 1031.64\nEND\n";
	const double rzero[5] = {0, 0, 0, 0, 0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double d = 0;
		int takes = 1;
		if (strcmp(a, "--fast") == 0) {
			cfg.realtime = 0;
			takes = 0;
		} else if (strcmp(a, "--r-zero") == 0) {
			cfg.metadata = ts_ppk2_identity_metadata(rzero);
			takes = 0;
		} else if (strcmp(a, "--garbled") == 0) {
			cfg.metadata = garbled;
			takes = 0;
		} else if (v == NULL) {
			fprintf(stderr, "ergon_ppk2_sim: %s needs a value\n", a);
			return 2;
		} else if (strcmp(a, "--gate-after") == 0) {
			w.trigger = v;
		} else if (strcmp(a, "--gap-at") == 0) {
			const char *c = strchr(v, ':');
			double at = 0, len = 0;
			char tmp[64];
			snprintf(tmp, sizeof(tmp), "%.*s", c ? (int)(c - v) : 0, v);
			if (c == NULL || num(tmp, &at) || num(c + 1, &len) ||
			    cfg.n_gaps >= TS_PPK2_GAPS_MAX) {
				fprintf(stderr, "ergon_ppk2_sim: --gap-at K:LEN\n");
				return 2;
			}
			cfg.gap_at[cfg.n_gaps] = (uint64_t)at;
			cfg.gap_len[cfg.n_gaps++] = (uint64_t)len;
		} else if (num(v, &d) != 0) {
			fprintf(stderr, "ergon_ppk2_sim: %s %s: not a number\n", a, v);
			return 2;
		} else if (strcmp(a, "--current-a") == 0) {
			w.rest_a = d;
		} else if (strcmp(a, "--burst-a") == 0) {
			w.burst_a = d;
		} else if (strcmp(a, "--gate-line") == 0) {
			w.line = (int)d & 7;
		} else if (strcmp(a, "--period-s") == 0) {
			w.period_s = d;
		} else if (strcmp(a, "--gate-delay-s") == 0) {
			w.delay_s = d;
		} else if (strcmp(a, "--gate-s") == 0) {
			w.width_s = d;
		} else if (strcmp(a, "--unplug-in-gate") == 0) {
			w.unplug_frac = d;
		} else if (strcmp(a, "--duty") == 0) {
			w.duty = d;
		} else if (strcmp(a, "--samples") == 0) {
			cfg.samples = (uint64_t)d;
		} else if (strcmp(a, "--disconnect-after") == 0) {
			cfg.disconnect_after = (uint64_t)d;
		} else {
			fprintf(stderr, "ergon_ppk2_sim: unknown option %s\n", a);
			return 2;
		}
		i += takes;
	}
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&cfg, &path);
	if (s == NULL) {
		perror("ergon_ppk2_sim: cannot start");
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("%s\n", path);
	fflush(stdout);
	char b;
	int unplug_set = 0;
	while (!stop) {
		if (w.unplug_frac > 0 && w.triggered && !unplug_set) {
			/* No gaps in this mode: samples sent = device index. */
			double at =
			    (double)w.k_trig + (w.delay_s + w.unplug_frac * w.width_s) * 1e5;
			ts_ppk2_sim_disconnect_at(s, (uint64_t)at);
			unplug_set = 1;
		}
		fd_set rs;
		FD_ZERO(&rs);
		FD_SET(0, &rs);
		struct timeval tv = {0, 100000};
		int r = select(1, &rs, NULL, NULL, &tv);
		if (r > 0 && read(0, &b, 1) <= 0)
			break;
	}
	ts_ppk2_sim_stop(s);
	return 0;
}

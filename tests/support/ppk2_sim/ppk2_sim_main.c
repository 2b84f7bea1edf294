/* ergon_ppk2_sim: the PPK2 protocol simulator as a program, for shell
 * tests, benchmarks and trying the ppk2 driver without a PPK2.
 *
 *   ergon_ppk2_sim [--current-a A] [--burst-a A] [--gate-line N]
 *                  [--period-s S] [--duty D] [--samples N] [--gap-at K:LEN]
 *                  [--disconnect-after N] [--r-zero] [--garbled] [--fast]
 *                  [--gate-at-start --gate-delay-s D --gate-s W
 *                   [--unplug-in-gate F]] [--drained-file FILE]
 *                  [--layers-a A1,.. --layer-samples N1,.. [--inferences N]
 *                   [--marker-line M] [--marker-skip K] [--marker-mask B]
 *                   [--toggle-a A]] [--rearm [--unmarked-from N]
 *                   [--fail-start N]]
 *
 * Prints the pty path on stdout (one line), then serves until SIGTERM,
 * SIGINT or stdin closing. The waveform: --current-a at rest and
 * --burst-a while logic line --gate-line is high, for the first duty x
 * period of each period (gate from the start of every period). Samples are
 * paced at 100 kSPS unless --fast.
 *
 * --gate-at-start replaces the periodic gate by one window, as firmware
 * after a reset draws it, counted in samples from the stream's first one
 * (the simulated target's reset: AverageStart): the gate line is high for
 * stream samples D x 100 kHz .. (D + W) x 100 kHz - 1, at --burst-a, and
 * low (--current-a) before and after. The window is W x 100,000 samples at
 * a fixed place in the stream, whatever the host's load or pacing (with
 * --fast, as fast as the host reads): its energy is exact in device time.
 * --unplug-in-gate F unplugs the simulated PPK2 at fraction F of that
 * window (0 < F < 1): after (D + F x W) x 100,000 stream samples.
 * --drained-file FILE (with --samples N) creates FILE once all N samples
 * were sent and the host has read every byte of them: a test's cue that
 * the host holds the whole stream.
 * window (0 < F < 1), wherever the window falls.
 * --layers-a A1,A2,... --layer-samples N1,N2,... [--inferences N]
 * [--marker-line M] (with --gate-at-start): an inference of layers as
 * firmware with a layer-marker line draws it (docs/METHOD.md, "Energy per
 * layer"). The gate is high for 100 + N x P + 100 samples (P = the sum of
 * the layers' samples; --gate-s is ignored): 100 samples at --burst-a,
 * then N inferences back to back, layer j drawing Aj for Nj samples, then
 * 100 samples at --burst-a. Logic line M (default 1 = D1) is low before
 * the gate and toggles at the first sample of every layer and once more at
 * the first sample after the last inference: N x layers + 1 edges.
 * --marker-skip K leaves out the K-th of those toggles (1 = the first), as
 * firmware that missed one: that inference shows one edge fewer.
 * --marker-mask B marks only the layers whose bit is set in B (bit j:
 * layer j; 0, the default: every layer), as firmware built with that
 * ert_marker_config.mask: a layer left out draws its current without an
 * edge at its start, so an inference shows one edge per marked layer and
 * the window N x marked + 1.
 * --toggle-a A: the sample at which the marker line toggles draws A more
 * (the marker's own cost, as a GPIO write and its hook cost on a board):
 * a window's marker cost is A x its toggles x one sample.
 * --rearm (with --gate-at-start): every AverageStart is a new reset of the
 * simulated target: the window (and the layers) are placed again from
 * that start's first sample, as a second capture of a reflashed board
 * sees them. --unmarked-from N: from the N-th AverageStart on (1 = the
 * first) the firmware is the unmarked build (its marker line compiled
 * out): the same currents, no toggle and no --toggle-a. --fail-start N:
 * the simulated PPK2 unplugs at the N-th AverageStart (the host's capture
 * fails before a sample arrives). */
#include "ts_ppk2_sim.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

/* Layers of a simulated inference at most, and the samples at --burst-a
 * before the first and after the last inference inside the gate. */
#define LAYERS_MAX 16
#define LAYER_LEAD 100u

struct wave {
	double rest_a, burst_a, period_s, duty;
	int line;
	int at_start; /* --gate-at-start */
	double delay_s, width_s;
	int triggered;	    /* the stream's first sample was made */
	uint64_t k_trig;    /* its device index */
	double unplug_frac; /* --unplug-in-gate */
	/* --layers-a/--layer-samples: the inference inside the gate */
	double layer_a[LAYERS_MAX];
	uint64_t layer_n[LAYERS_MAX];
	size_t n_layers, n_layer_n;
	uint64_t inferences, period; /* period: the layers' samples summed */
	int marker_line;
	int64_t marker_skip; /* --marker-skip: the toggle left out; 0 none */
	uint32_t marker_mask; /* --marker-mask: the layers marked; 0 every one */
	double toggle_a;      /* --toggle-a: extra current at a toggle's sample */
	int rearm;	      /* --rearm */
	unsigned starts;      /* AverageStarts seen */
	unsigned unmarked_from, fail_start; /* --unmarked-from, --fail-start; 0 never */
	struct ts_ppk2_sim *sim;
};

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

static int gate_high(const struct wave *w, uint64_t k)
{
	if (w->at_start) {
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

/* Sample k's place among the layers: -1 before the first inference (or no
 * layers), else the marker toggles at or before k; *layer gets the layer
 * drawing at k (-1 outside the inferences). */
static int64_t layer_at(const struct wave *w, uint64_t k, int *layer)
{
	*layer = -1;
	if (w->n_layers == 0 || !w->triggered)
		return -1;
	uint64_t a = w->k_trig + (uint64_t)(w->delay_s * 100000.0 + 0.5) + LAYER_LEAD;
	if (k < a)
		return -1;
	uint64_t off = k - a, i = off / w->period;
	if (i >= w->inferences) {
		uint64_t per = 0;
		for (size_t q = 0; q < w->n_layers; q++)
			per += w->marker_mask == 0 ? 1u : (w->marker_mask >> q) & 1u;
		return (int64_t)(w->inferences * per + 1);
	}
	uint64_t r = off % w->period;
	size_t j = 0;
	while (r >= w->layer_n[j]) {
		r -= w->layer_n[j];
		j++;
	}
	*layer = (int)j;
	if (w->marker_mask == 0)
		return (int64_t)(i * w->n_layers + j + 1);
	/* Only the marked layers toggle: those up to j in this inference. */
	uint64_t per = 0, upto = 0;
	for (size_t q = 0; q < w->n_layers; q++) {
		unsigned on = (w->marker_mask >> q) & 1u;
		per += on;
		upto += q <= j ? on : 0u;
	}
	return (int64_t)(i * per + upto);
}

/* The capture's firmware has no marker line (--unmarked-from). */
static int unmarked(const struct wave *w)
{
	return w->unmarked_from > 0 && w->starts >= w->unmarked_from;
}

/* The marker toggles at or before sample k (firmware that missed one
 * included); <= 0: none yet. */
static int64_t toggles_at(const struct wave *w, uint64_t k)
{
	int layer = -1;
	int64_t t = layer_at(w, k, &layer);
	if (w->marker_skip > 0 && t >= w->marker_skip)
		t--;
	return t;
}

static void on_start(uint64_t k, void *ctx)
{
	struct wave *w = ctx;
	w->starts++;
	if (w->rearm && w->at_start) {
		w->k_trig = k;
		w->triggered = 1;
	}
	if (w->fail_start > 0 && w->starts == w->fail_start && w->sim != NULL)
		ts_ppk2_sim_disconnect_at(w->sim, 1);
}

static double cur(uint64_t k, void *ctx)
{
	struct wave *w = ctx;
	if (w->at_start && !w->triggered) {
		w->k_trig = k;
		w->triggered = 1;
	}
	int layer = -1;
	(void)layer_at(w, k, &layer);
	double extra = 0;
	if (w->toggle_a != 0 && !unmarked(w) && k > 0 && toggles_at(w, k) != toggles_at(w, k - 1) &&
	    toggles_at(w, k) > 0)
		extra = w->toggle_a;
	if (layer >= 0)
		return w->layer_a[layer] + extra;
	return (gate_high(w, k) ? w->burst_a : w->rest_a) + extra;
}

static uint8_t logic(uint64_t k, void *ctx)
{
	const struct wave *w = ctx;
	int64_t toggles = unmarked(w) ? 0 : toggles_at(w, k);
	unsigned m = toggles > 0 && (toggles & 1) ? 1u << w->marker_line : 0u;
	return (uint8_t)((gate_high(w, k) ? 1u << w->line : 0u) | m);
}

/* "1,2.5,3" into v[0..*n) (at most LAYERS_MAX); -1 when not numbers. */
static int num_list(const char *s, double *v, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end = NULL;
		double d = strtod(s, &end);
		if (end == s || *n >= LAYERS_MAX || (*end != ',' && *end != '\0'))
			return -1;
		v[(*n)++] = d;
		s = *end ? end + 1 : end;
	}
	return *n > 0 ? 0 : -1;
}

static int num(const char *s, double *out)
{
	char *end = NULL;
	*out = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct wave w = {.rest_a = 0.001,
			 .burst_a = 0.010,
			 .period_s = 2.0,
			 .duty = 0.5,
			 .line = 0,
			 .inferences = 1,
			 .marker_line = 1};
	double ln[LAYERS_MAX];
	struct ts_ppk2_sim_cfg cfg = {
	    .current_a = cur, .logic = logic, .on_start = on_start, .ctx = &w, .realtime = 1};
	const char *drained_file = NULL;
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
		} else if (strcmp(a, "--gate-at-start") == 0) {
			w.at_start = 1;
			takes = 0;
		} else if (strcmp(a, "--rearm") == 0) {
			w.rearm = 1;
			takes = 0;
		} else if (v == NULL) {
			fprintf(stderr, "ergon_ppk2_sim: %s needs a value\n", a);
			return 2;
		} else if (strcmp(a, "--drained-file") == 0) {
			drained_file = v;
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
		} else if (strcmp(a, "--layers-a") == 0) {
			if (num_list(v, w.layer_a, &w.n_layers)) {
				fprintf(stderr,
					"ergon_ppk2_sim: --layers-a A1,A2,... (at most %d)\n",
					LAYERS_MAX);
				return 2;
			}
		} else if (strcmp(a, "--layer-samples") == 0) {
			if (num_list(v, ln, &w.n_layer_n)) {
				fprintf(stderr, "ergon_ppk2_sim: --layer-samples N1,N2,...\n");
				return 2;
			}
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
		} else if (strcmp(a, "--inferences") == 0) {
			w.inferences = (uint64_t)d;
		} else if (strcmp(a, "--marker-skip") == 0) {
			w.marker_skip = (int64_t)d;
		} else if (strcmp(a, "--marker-mask") == 0) {
			w.marker_mask = (uint32_t)d;
		} else if (strcmp(a, "--toggle-a") == 0) {
			w.toggle_a = d;
		} else if (strcmp(a, "--unmarked-from") == 0) {
			w.unmarked_from = (unsigned)d;
		} else if (strcmp(a, "--fail-start") == 0) {
			w.fail_start = (unsigned)d;
		} else if (strcmp(a, "--marker-line") == 0) {
			w.marker_line = (int)d & 7;
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
	if (w.n_layers || w.n_layer_n) {
		int okl = w.at_start && w.n_layers == w.n_layer_n && w.inferences > 0 &&
			  w.marker_line != w.line;
		for (size_t j = 0; okl && j < w.n_layer_n; j++) {
			okl = ln[j] >= 1;
			w.layer_n[j] = (uint64_t)ln[j];
			w.period += w.layer_n[j];
		}
		if (!okl) {
			fprintf(stderr,
				"ergon_ppk2_sim: --layers-a and --layer-samples need "
				"--gate-at-start, one count (>= 1) per current, "
				"--inferences >= 1 and a marker line other than the gate's\n");
			return 2;
		}
		w.width_s = (double)(2u * LAYER_LEAD + w.inferences * w.period) / 100000.0;
	}
	if ((w.unmarked_from > 0 || w.fail_start > 0) && !w.rearm) {
		fprintf(stderr, "ergon_ppk2_sim: --unmarked-from and --fail-start need --rearm\n");
		return 2;
	}
	if (w.unplug_frac > 0) {
		if (!w.at_start || !(w.unplug_frac < 1)) {
			fprintf(stderr, "ergon_ppk2_sim: --unplug-in-gate F needs --gate-at-start "
					"and 0 < F < 1\n");
			return 2;
		}
		/* Known before the stream starts: no gaps in this mode, so
		 * samples sent = stream samples. */
		cfg.disconnect_after =
		    (uint64_t)llround((w.delay_s + w.unplug_frac * w.width_s) * 1e5);
	}
	const char *path = NULL;
	struct ts_ppk2_sim *s = ts_ppk2_sim_start(&cfg, &path);
	w.sim = s; /* before any AverageStart: the host has not the path yet */
	if (s == NULL) {
		perror("ergon_ppk2_sim: cannot start");
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("%s\n", path);
	fflush(stdout);
	char b;
	while (!stop) {
		if (drained_file && cfg.samples && ts_ppk2_sim_drained(s, cfg.samples)) {
			FILE *f = fopen(drained_file, "w");
			if (f)
				fclose(f);
			drained_file = NULL;
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

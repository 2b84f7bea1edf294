/* The synthetic instrument: a deterministic, seeded power model of a board
 * under load, the reference driver the CLI tests use.
 *
 * Power is computed on demand at the host monotonic clock from the load the
 * session hints (hint_load), the scenario knobs and a seeded xorshift64
 * noise source, so a reading sequence is reproducible for a given seed and
 * timing. It never claims to be measured: provenance is `synthetic`.
 */
#include "drivers/instruments/synthetic/synthetic.h"
#include "ergon/artifact.h"
#include "ergon/clock.h"
#include "ergon/instrument.h"
#include "ergon/parse.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct synth {
	double idle_w, load_w, noise_w;
	double work_s;		 /* per-invocation work: minimum duration */
	double throttle_s, drop; /* onset after the first load; fractional throughput drop */
	double temp_start_c, temp_rate_c_per_s, temp_max_c;
	double accuracy_pct, resolution_w, voltage_v;
	long fail_after; /* fault injection: fail the Nth read (0 = never) */
	long seed;
	uint64_t rng;
	long reads;
	atomic_int load_milli;	     /* hinted load x 1000, written by the session */
	_Atomic double load_start_s; /* first time load was hinted, 0 = not yet */
	double grid_end_s;	     /* work_s > 0: where the last emulated invocation ended */
};

/* The measuring clock (CLOCK_MONOTONIC unless a simulated clock is
 * installed, ergon/clock.h): the power model's time is the session's. */
static double now_s(void)
{
	return ergon_clock_now_s();
}

/* xorshift64 (Marsaglia 2003): deterministic, fast, good enough for noise. */
static double uniform_pm1(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return (double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static const char *const known_keys[] = {
    "seed",	  "idle_w",	  "load_w",	  "noise_w",
    "throttle_s", "drop",	  "temp_start_c", "temp_rate_c_per_s",
    "temp_max_c", "accuracy_pct", "resolution_w", "fail_after",
    "work_s",	  NULL,
};

static int set_knob(struct synth *s, const char *key, const char *val, struct ergon_err *err)
{
	char what[96];
	snprintf(what, sizeof(what), "--instrument-opt %s", key);
	double v;
	if (strcmp(key, "seed") == 0)
		return ergon_parse_long(val, what, 0, 1L << 62, &s->seed, err);
	if (strcmp(key, "fail_after") == 0)
		return ergon_parse_long(val, what, 0, 1L << 62, &s->fail_after, err);
	int rc = ergon_parse_double(val, what, &v, err);
	if (rc)
		return rc;
	struct {
		const char *k;
		double *p;
		double lo, hi;
	} t[] = {
	    {"idle_w", &s->idle_w, 0, 1e6},
	    {"load_w", &s->load_w, 0, 1e6},
	    {"noise_w", &s->noise_w, 0, 1e6},
	    {"throttle_s", &s->throttle_s, 0, 1e9},
	    {"drop", &s->drop, 0, 0.95},
	    {"temp_start_c", &s->temp_start_c, -80, 200},
	    {"temp_rate_c_per_s", &s->temp_rate_c_per_s, 0, 100},
	    {"temp_max_c", &s->temp_max_c, -80, 300},
	    {"accuracy_pct", &s->accuracy_pct, 0, 100},
	    {"resolution_w", &s->resolution_w, 0, 1e3},
	    {"work_s", &s->work_s, 0, 3600},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(key, t[i].k) != 0)
			continue;
		if (v < t[i].lo || v > t[i].hi)
			return ergon_err_set(err, ERGON_ERANGE, "%s=%g: must be within [%g, %g]",
					     what, v, t[i].lo, t[i].hi);
		*t[i].p = v;
		return 0;
	}
	return ergon_err_set(err, ERGON_EUSAGE, "%s: unknown synthetic knob", what);
}

static int synth_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		      struct ergon_err *err)
{
	if (opts->arg && opts->arg[0])
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument synthetic:%s: the synthetic instrument takes no "
				     "argument; set its scenario with --instrument-opt key=value",
				     opts->arg);
	struct synth *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	/* The default scenario: a 0.6 W idle board drawing 3 W under load,
	 * throttling 30 s into the load by 30 % with a temperature ramp, so
	 * the one-minute demo shows a verdict. */
	*s = (struct synth){.idle_w = 0.6,
			    .load_w = 3.0,
			    .noise_w = 0.02,
			    .throttle_s = 30.0,
			    .drop = 0.3,
			    .temp_start_c = 38.0,
			    .temp_rate_c_per_s = 0.8,
			    .temp_max_c = 85.0,
			    .accuracy_pct = 0.5,
			    .resolution_w = 0.001,
			    .voltage_v = 5.0,
			    .seed = 1};
	for (const char *const *p = opts->kv; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		char key[64];
		size_t kl = eq ? (size_t)(eq - *p) : strlen(*p);
		if (eq == NULL || kl == 0 || kl >= sizeof(key)) {
			free(s);
			return ergon_err_set(err, ERGON_EUSAGE,
					     "--instrument-opt '%s': expected key=value", *p);
		}
		memcpy(key, *p, kl);
		key[kl] = '\0';
		int known = 0;
		for (size_t i = 0; known_keys[i]; i++)
			known |= strcmp(known_keys[i], key) == 0;
		if (!known) {
			free(s);
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "--instrument-opt %s: unknown synthetic knob; known: seed, "
			    "idle_w, load_w, noise_w, throttle_s, drop, temp_start_c, "
			    "temp_rate_c_per_s, temp_max_c, accuracy_pct, "
			    "resolution_w, fail_after, work_s",
			    key);
		}
		int rc = set_knob(s, key, eq + 1, err);
		if (rc) {
			free(s);
			return rc;
		}
	}
	s->rng = (uint64_t)s->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	atomic_init(&s->load_milli, 0);
	atomic_init(&s->load_start_s, 0.0);
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "ergon");
	snprintf(id->model, sizeof(id->model), "synthetic");
	snprintf(id->serial, sizeof(id->serial), "seed-%ld", s->seed);
	id->accuracy_pct = s->accuracy_pct;
	id->resolution_w = s->resolution_w;
	/* The model's own statement of its errors (docs/UNCERTAINTY.md): a
	 * gain within accuracy_pct and no offset; not a datasheet. */
	ergon_rating_init(&id->rating, ERGON_RATING_POWER);
	ergon_rating_add_pterm(&id->rating, "gain", ERGON_PTERM_GAIN_PCT, s->accuracy_pct,
			       "the synthetic model's declared accuracy_pct (a model, not a "
			       "datasheet)");
	ergon_rating_add_pterm(&id->rating, "offset", ERGON_PTERM_OFFSET_W, 0.0,
			       "the synthetic model adds no offset to its readings");
	id->rating.offset_constant = 1;
	ergon_rated_unknown(&id->rating.timebase_ppm, "host-timed: the host clock's bound applies");
	id->sample_rate_hz = 0; /* answers on demand */
	snprintf(id->integrates, sizeof(id->integrates), "none");
	snprintf(id->clock, sizeof(id->clock), "host_monotonic");
	id->provenance = ERGON_PROV_SYNTHETIC;
	id->n_rails = 1;
	id->total_rail = 0;
	snprintf(id->rails[0], sizeof(id->rails[0]), "synthetic");
	snprintf(id->notes, sizeof(id->notes),
		 "a seeded model, not a measurement: power follows the load hint; throughput "
		 "throttle emulated by stretching invocations");
	inst->priv = s;
	return 0;
}

static int synth_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
		      size_t *n, struct ergon_err *err)
{
	struct synth *s = inst->priv;
	*n = 0;
	if (cap == 0)
		return 0;
	s->reads++;
	if (s->fail_after > 0 && s->reads >= s->fail_after)
		return ergon_err_set(err, ERGON_EDEVICE,
				     "synthetic instrument: injected read failure at read %ld "
				     "(fail_after=%ld)",
				     s->reads, s->fail_after);
	double t = now_s();
	double load = atomic_load(&s->load_milli) / 1000.0;
	double t0 = atomic_load(&s->load_start_s);
	double since = t0 > 0 ? t - t0 : 0;
	double active_w = s->load_w - s->idle_w;
	if (t0 > 0 && since >= s->throttle_s)
		active_w *= 1.0 - s->drop; /* the governor pulled the clock back */
	double p = s->idle_w + load * active_w + s->noise_w * uniform_pm1(&s->rng);
	if (p < 0)
		p = 0;
	double temp = s->temp_start_c;
	if (t0 > 0) {
		temp += s->temp_rate_c_per_s * since;
		if (temp > s->temp_max_c)
			temp = s->temp_max_c;
	}
	buf[0] = (struct ergon_sample){.t_s = t,
				       .power_w = p,
				       .voltage_v = s->voltage_v,
				       .current_a = p / s->voltage_v,
				       .temp_c = temp,
				       .fields = ERGON_F_POWER | ERGON_F_VOLTAGE | ERGON_F_CURRENT |
						 ERGON_F_TEMP};
	*n = 1;
	return 0;
}

/* Each session (each repetition of ergon run --repeat) starts the
 * scenario afresh: its throttle clock and the work_s grid restart with
 * the session's load. The noise continues from the seed's stream, so
 * repetitions differ as repeated runs on a bench do. */
static int synth_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct synth *s = inst->priv;
	atomic_store(&s->load_start_s, 0.0);
	atomic_store(&s->load_milli, 0);
	s->grid_end_s = 0;
	return 0;
}

static void synth_hint(struct ergon_instrument *inst, double load)
{
	struct synth *s = inst->priv;
	atomic_store(&s->load_milli, (int)lround(load * 1000.0));
	if (load > 0 && atomic_load(&s->load_start_s) == 0.0)
		atomic_store(&s->load_start_s, now_s());
}

static void synth_close(struct ergon_instrument *inst)
{
	free(inst->priv);
	inst->priv = NULL;
}

const struct ergon_instrument_driver ergon_instrument_synthetic = {
    .name = "synthetic",
    .longname = "synthetic power model (seeded, not a measurement)",
    .open = synth_open,
    .start = synth_start,
    .read = synth_read,
    .close = synth_close,
    .hint_load = synth_hint,
};

double ergon_synthetic_stretch(struct ergon_instrument *inst, double t_start_s, double t_end_s)
{
	if (inst == NULL || inst->driver != &ergon_instrument_synthetic)
		return t_end_s;
	struct synth *s = inst->priv;
	double d = t_end_s - t_start_s;
	double base = t_start_s;
	if (s->work_s > 0) {
		if (d < s->work_s)
			d = s->work_s;
		/* Emulated work sits on a grid of work_s: an invocation whose busy
		 * wait the host preempted (and so ended more than 0.2 ms late) is
		 * followed by one that ends one work_s after where it should have
		 * ended (so it is shorter); so the throughput is
		 * the scenario's and not this machine's load (a busy 2-core host
		 * stalls a thread for tens of milliseconds). Only a gap longer
		 * than 2 s (not a stall: a new phase) restarts the grid. */
		double behind = t_start_s - s->grid_end_s;
		if (s->grid_end_s > 0 && behind > 2e-4 && behind < 2.0)
			base = s->grid_end_s;
	}
	double t0 = atomic_load(&s->load_start_s);
	if (t0 > 0 && base + d - t0 >= s->throttle_s && s->drop > 0)
		d /= 1.0 - s->drop;
	double until = base + d;
	/* The grid point, even when this invocation cannot end there (it is
	 * catching up, or the workload itself took longer). */
	if (s->work_s > 0)
		s->grid_end_s = until;
	return until < t_end_s ? t_end_s : until;
}

json_t *ergon_synthetic_scenario_json(const struct ergon_instrument *inst)
{
	if (inst == NULL || inst->driver != &ergon_instrument_synthetic)
		return NULL;
	const struct synth *s = inst->priv;
	return json_pack("{s:s, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}",
			 "mechanism",
			 "each invocation lasts at least work_s, stretched by 1/(1-drop) after "
			 "throttle_s of load; with work_s > 0 invocations follow a work_s grid "
			 "(one that ended late is followed by a shorter one)",
			 "work_s", s->work_s, "seed", (json_int_t)s->seed, "idle_w", s->idle_w,
			 "load_w", s->load_w, "noise_w", s->noise_w, "throttle_s", s->throttle_s,
			 "drop", s->drop, "temp_start_c", s->temp_start_c, "temp_rate_c_per_s",
			 s->temp_rate_c_per_s, "temp_max_c", s->temp_max_c, "note",
			 "emulated: the synthetic instrument cannot heat the host");
}

/* The replay instrument (`replay:FILE.csv`): plays a recording back on the
 * host monotonic clock, sample i being delivered once (t_i - t_0) seconds
 * have passed since start. A recording that ends before the run does is an
 * instrument failure (the run stops, incomplete), never looped or padded. */
#include "drivers/instruments/replay/replay.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/instrument.h"
#include "ergon/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct replay {
	struct replay_data d;
	char path[512];
	size_t next;
	double host_t0_s;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int replay_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		       struct ergon_err *err)
{
	if (opts->arg == NULL || opts->arg[0] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument replay: give the recording as replay:FILE.csv");
	for (const char *const *kv = opts->kv; kv && *kv; kv++)
		if (strncmp(*kv, "accuracy_pct=", 13) != 0 &&
		    strncmp(*kv, "resolution_w=", 13) != 0)
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "--instrument-opt %s: replay knows only accuracy_pct=PCT "
			    "and resolution_w=W",
			    *kv);
	struct replay *r = calloc(1, sizeof(*r));
	char *text = NULL;
	size_t len = 0;
	int rc;
	if (r == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	snprintf(r->path, sizeof(r->path), "%s", opts->arg);
	rc = ergon_file_read_all(opts->arg, (size_t)1 << 30, &text, &len, err);
	if (rc)
		goto fail;
	rc = ergon_replay_parse(opts->arg, text, len, &r->d, err);
	if (rc)
		goto fail;
	int src = opts->provenance_override ? opts->provenance_override : r->d.header_provenance;
	if (src == -1 || src == 0) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "%s: %s; a recording is never assumed measured: add a line "
				   "'# provenance: measured' (or synthetic) or pass --provenance",
				   opts->arg,
				   src == -1 ? "the '# provenance:' header names no known kind"
					     : "no '# provenance:' header line");
		goto fail;
	}
	if (src != ERGON_PROV_MEASURED && src != ERGON_PROV_SYNTHETIC) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "%s: provenance must be measured or synthetic (the recording's "
				   "own kind)",
				   opts->arg);
		goto fail;
	}
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "ergon");
	snprintf(id->model, sizeof(id->model), "replay");
	snprintf(id->serial, sizeof(id->serial), "%.63s", opts->arg);
	const char *acc = ergon_options_get(opts, "accuracy_pct");
	const char *res = ergon_options_get(opts, "resolution_w");
	if (acc &&
	    (rc = ergon_parse_double(acc, "--instrument-opt accuracy_pct", &id->accuracy_pct, err)))
		goto fail;
	if (res &&
	    (rc = ergon_parse_double(res, "--instrument-opt resolution_w", &id->resolution_w, err)))
		goto fail;
	id->sample_rate_hz = (double)(r->d.n - 1) / (r->d.s[r->d.n - 1].t_s - r->d.s[0].t_s);
	snprintf(id->integrates, sizeof(id->integrates), "none");
	snprintf(id->clock, sizeof(id->clock), "instrument");
	/* DESIGN.md: replays of synthetic files are synthetic; analysis of a
	 * measured recording is `replayed` (naming the recording's kind). */
	id->provenance = src == ERGON_PROV_SYNTHETIC ? ERGON_PROV_SYNTHETIC : ERGON_PROV_REPLAYED;
	id->n_rails = 1;
	id->total_rail = 0;
	snprintf(id->rails[0], sizeof(id->rails[0]), "recorded");
	snprintf(id->notes, sizeof(id->notes),
		 "replay of %.300s (recording provenance: %s, %zu samples%s%s)", opts->arg,
		 ergon_provenance_name(src), r->d.n, r->d.has_power ? ", power_w column" : "",
		 acc ? "" : "; accuracy unknown unless given with --instrument-opt accuracy_pct");
	free(text);
	inst->priv = r;
	return 0;
fail:
	free(text);
	ergon_replay_data_free(&r->d);
	free(r);
	return rc;
}

static int replay_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	(void)err;
	struct replay *r = inst->priv;
	r->host_t0_s = now_s();
	r->next = 0;
	return 0;
}

static int replay_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
		       size_t *n, struct ergon_err *err)
{
	struct replay *r = inst->priv;
	*n = 0;
	if (r->host_t0_s == 0)
		replay_start(inst, err);
	if (r->next >= r->d.n)
		return ergon_err_set(err, ERGON_EIO,
				     "%s: the recording ended (%.3f s of samples) before the run "
				     "did; shorten the run or record longer",
				     r->path, r->d.s[r->d.n - 1].t_s - r->d.s[0].t_s);
	double elapsed = now_s() - r->host_t0_s;
	double t0 = r->d.s[0].t_s;
	while (*n < cap && r->next < r->d.n && r->d.s[r->next].t_s - t0 <= elapsed) {
		buf[*n] = r->d.s[r->next];
		buf[*n].t_s = r->host_t0_s + (r->d.s[r->next].t_s - t0);
		(*n)++;
		r->next++;
	}
	return 0;
}

static void replay_close(struct ergon_instrument *inst)
{
	struct replay *r = inst->priv;
	if (r) {
		ergon_replay_data_free(&r->d);
		free(r);
	}
	inst->priv = NULL;
}

const struct ergon_instrument_driver ergon_instrument_replay = {
    .name = "replay",
    .longname = "replay of a CSV recording (t_s, voltage_v, current_a[, power_w, temperature_c])",
    .open = replay_open,
    .start = replay_start,
    .read = replay_read,
    .close = replay_close,
};

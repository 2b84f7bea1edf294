/* The record pipeline (include/ergon/record.h): instrument -> JLS writer. */
#include "ergon/record.h"

#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/jls.h"
#include "ergon/reserve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH 4096u
/* A gap longer than this is not a counter gap but a clock jump: refuse
 * to fill it with NaN (it would be gigabytes). */
#define GAP_MAX_S 10.0
/* A streaming instrument that sends nothing for this long has stalled. */
#define STALL_S 2.0

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t utc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ergon_jls_utc_from_unix((int64_t)ts.tv_sec, ts.tv_nsec);
}

struct rec {
	const struct ergon_record_options *o;
	struct ergon_record_result *res;
	struct ergon_instrument *inst;
	struct ergon_jls_writer *w;
	double rate_hz;
	double t_first_s;
	uint64_t next_index; /* index of the next sample to write */
	uint32_t last_digital;
	int gate_was_high;
	int gate_fell;
	int started; /* the instrument was asked to start */
	int opened;  /* the JLS file was created */
	/* The output claimed before the first sample (reserve.h): a lock and
	 * preallocated space, released to make room when a write fails. */
	struct ergon_out_slot slot;
	double i_sum;
	uint64_t i_n;
	/* staging */
	float c[BATCH], v[BATCH], p[BATCH];
	uint32_t d[BATCH];
	size_t n;
};

static int flush(struct rec *r, struct ergon_err *err)
{
	if (r->n == 0)
		return 0;
	int rc = ergon_jls_writer_push(r->w, r->c, r->v, r->p, r->d, r->n, err);
	r->n = 0;
	return rc;
}

static int put(struct rec *r, float c, float v, float p, uint32_t d, struct ergon_err *err)
{
	r->c[r->n] = c;
	r->v[r->n] = v;
	r->p[r->n] = p;
	r->d[r->n] = d;
	r->n++;
	r->next_index++;
	return r->n == BATCH ? flush(r, err) : 0;
}

static char *note(const struct rec *r, int closing)
{
	json_t *o = json_object();
	json_object_set_new(o, "tool", json_string("ergon " ERGON_VERSION));
	json_object_set_new(o, "kind", json_string("ergon record"));
	json_object_set(o, "instrument", r->res->identity ? r->res->identity : json_null());
	json_object_set_new(o, "provenance",
			    json_string(ergon_provenance_name(r->inst->identity.provenance)));
	if (closing) {
		json_object_set_new(o, "complete", json_boolean(r->res->complete));
		json_object_set_new(o, "stop_reason", json_string(r->res->stop_reason));
		json_object_set_new(o, "samples", json_integer((json_int_t)r->next_index));
		json_object_set_new(o, "dropped_samples",
				    json_integer((json_int_t)r->res->dropped));
		json_object_set(o, "issues", r->inst->issues);
	} else {
		json_object_set_new(
		    o, "note",
		    json_string("NaN samples are samples the instrument lost, never interpolated; "
				"the closing note says whether the recording is complete"));
	}
	json_t *wrap = json_pack("{s:o}", "ergon", o);
	char *s = json_dumps(wrap, JSON_COMPACT);
	json_decref(wrap);
	return s;
}

/* A write of the recording failed: give back the space reserved before
 * the recording (once) and have the writer try the same write again. */
static int on_write_error(void *ctx, int errno_value)
{
	struct rec *r = ctx;
	if (r->slot.fd < 0)
		return 0;
	ergon_out_free_space(&r->slot);
	r->res->write_retries++;
	r->res->write_errno = errno_value;
	return 1;
}

/* A conservative size of the recording: per sample three f32 signals,
 * eight u1 lines, their summaries (4 floats per 1000 samples per level) and
 * chunk headers: under 16 bytes; a recording without a duration reserves
 * what 10 s take. */
static size_t record_estimate_bytes(const struct ergon_record_options *o, double rate_hz)
{
	double s = (o->duration_s > 0 ? o->duration_s : 10.0) * rate_hz;
	double bytes = 65536.0 + 16.0 * s;
	if (!(bytes < (double)ERGON_RESERVE_MAX_BYTES))
		return ERGON_RESERVE_MAX_BYTES;
	return (size_t)bytes;
}

static int count_block(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	(void)err;
	*(uint64_t *)ctx += b->n;
	return 0;
}

/* What the file holds, as our reader reads it (0 when it cannot). */
static uint64_t samples_on_disk(const char *path)
{
	struct ergon_jls_reader *jr = NULL;
	struct ergon_err e = {0};
	uint64_t n = 0;
	if (ergon_jls_file_open(path, &jr, &e) != 0)
		return 0;
	if (ergon_jls_reader_stream(jr, NULL, count_block, &n, &e) != 0)
		n = 0;
	ergon_jls_reader_free(jr);
	return n;
}

static int open_writer(struct rec *r, const struct ergon_sample *first, struct ergon_err *err)
{
	const struct ergon_instrument_identity *id = &r->inst->identity;
	char name[160];
	snprintf(name, sizeof(name), "%s-%s", r->inst->driver->name,
		 id->serial[0] ? id->serial : "unknown");
	char *n0 = note(r, 0);
	struct ergon_jls_writer_config cfg = {
	    .path = r->o->out_path,
	    .force = 1, /* existence was checked before the instrument opened */
	    .sample_rate_hz = (uint32_t)lround(r->rate_hz),
	    .source_name = name,
	    .vendor = id->vendor,
	    .model = id->model,
	    .version = "ergon " ERGON_VERSION,
	    .serial = id->serial,
	    .digital_lines = (first->fields & ERGON_F_DIGITAL) ? 8u : 0u,
	    .with_power = 1,
	    .utc_q30_start = utc_now(),
	    .note_json = n0,
	    .pwrite_fn = r->o->pwrite_fn,
	    .on_write_error = on_write_error,
	    .on_write_error_ctx = r,
	};
	int rc = ergon_jls_writer_open(&cfg, &r->w, err);
	free(n0);
	if (rc == 0)
		r->opened = 1;
	else
		unlink(r->o->out_path); /* definitions only, no sample: not a recording */
	return rc;
}

/* One sample from the instrument into the file, with its gap. */
static int take(struct rec *r, const struct ergon_sample *s, struct ergon_err *err)
{
	double rel = (s->t_s - r->t_first_s) * r->rate_hz;
	if (!isfinite(rel) || rel < -0.5 || rel > GAP_MAX_S * r->rate_hz + (double)r->next_index)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: sample time %.6f s is %s the recording's clock (first "
				     "sample %.6f s); the instrument's clock jumped",
				     r->o->instrument_spec, s->t_s,
				     rel < 0 ? "before" : "far ahead of", r->t_first_s);
	uint64_t idx = (uint64_t)llround(rel);
	if (idx < r->next_index) {
		r->res->out_of_order++;
		return 0;
	}
	int rc = 0;
	while (rc == 0 && r->next_index < idx) {
		r->res->dropped++;
		rc = put(r, NAN, NAN, NAN, r->last_digital, err);
	}
	if (rc)
		return rc;
	double i = (s->fields & ERGON_F_CURRENT) ? s->current_a : NAN;
	double v = (s->fields & ERGON_F_VOLTAGE) ? s->voltage_v : NAN;
	double p = (s->fields & ERGON_F_POWER) ? s->power_w : i * v;
	uint32_t d = (s->fields & ERGON_F_DIGITAL) ? s->digital : 0;
	if (isfinite(i)) {
		r->i_sum += i;
		r->i_n++;
	}
	int high = (int)((d >> r->o->sync_input_index) & 1u);
	if (high)
		r->gate_was_high = 1;
	else if (r->gate_was_high)
		r->gate_fell = 1;
	r->last_digital = d;
	return put(r, (float)i, (float)v, (float)p, d, err);
}

int ergon_record_run(const struct ergon_record_options *o, struct ergon_record_result *res,
		     struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	snprintf(res->out_path, sizeof res->out_path, "%s", o->out_path ? o->out_path : "");
	struct rec *r = calloc(1, sizeof(*r));
	struct ergon_sample *buf = malloc(BATCH * sizeof(*buf));
	int rc = 0;
	if (r == NULL || buf == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	r->o = o;
	r->res = res;
	r->slot.fd = r->slot.lock_fd = -1;
	struct stat st;
	if (!o->force && stat(o->out_path, &st) == 0) {
		rc = ergon_err_set(
		    err, ERGON_EEXIST,
		    "%s: already exists; give another --out or --force to replace it", o->out_path);
		goto out;
	}
	if (o->sync_input_index > 7) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--sync-input-index %u: the digital lines are 0..7",
				   o->sync_input_index);
		goto out;
	}
	rc = ergon_instrument_open(o->instrument_spec, &o->instrument_opts, &r->inst, err);
	if (rc)
		goto out;
	const struct ergon_instrument_identity *id = &r->inst->identity;
	if (strcmp(id->clock, "instrument") != 0 || !(id->sample_rate_hz > 0)) {
		rc = ergon_err_set(err, ERGON_ENOTSUP,
				   "--instrument %s: `ergon record` needs an instrument that "
				   "streams every sample at a fixed rate on its own clock (ppk2, a "
				   "bridge with raw samples); %s is polled (use `ergon run`)",
				   o->instrument_spec, r->inst->driver->name);
		goto out;
	}
	r->rate_hz = id->sample_rate_hz;
	res->instrument = *id;
	res->provenance = id->provenance;
	res->sample_rate_hz = id->sample_rate_hz;
	/* Claim the output and its space before the first sample: a full
	 * disk, an unwritable folder or a second recording on the same --out
	 * fails here, with nothing measured. */
	rc = ergon_out_reserve(&r->slot, o->out_path, record_estimate_bytes(o, r->rate_hz),
			       o->force ? ERGON_WRITE_FORCE : 0, err);
	if (rc)
		goto out;
	res->identity = ergon_instrument_identity_json(r->inst);
	/* Name the thread after the phase: `ps -L` shows it, and the
	 * fault-injection shim (tests/support/faultinj/) arms on it. */
	prctl(PR_SET_NAME, (unsigned long)"ergon-record", 0UL, 0UL, 0UL);
	r->started = 1;
	rc = ergon_instrument_start(r->inst, err);
	if (rc)
		goto out;
	double last_progress = now_s(), last_utc = last_progress, last_data = last_progress;
	uint64_t limit = o->duration_s > 0 ? (uint64_t)llround(o->duration_s * r->rate_hz) : 0;
	struct ergon_err ierr = {0};
	for (;;) {
		if (o->stop_flag && *o->stop_flag) {
			res->stop = ERGON_RECORD_STOPPED;
			snprintf(res->stop_reason, sizeof(res->stop_reason),
				 "stopped by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)");
			break;
		}
		size_t n = 0;
		int irc = ergon_instrument_read(r->inst, buf, BATCH, &n, &ierr);
		for (size_t k = 0; k < n && rc == 0; k++) {
			if (r->w == NULL) {
				r->t_first_s = buf[k].t_s;
				rc = open_writer(r, &buf[k], err);
				if (rc)
					goto stop_inst;
			}
			if (limit && r->next_index >= limit)
				break;
			rc = take(r, &buf[k], err);
			if (o->until_gate_falls && r->gate_fell)
				break;
		}
		if (rc) {
			if (rc == ERGON_EIO || rc == ERGON_ENOMEM) {
				res->stop = ERGON_RECORD_WRITE;
				snprintf(res->stop_reason, sizeof(res->stop_reason), "%s",
					 err->msg);
			}
			break;
		}
		if (irc) {
			res->stop = ERGON_RECORD_INSTRUMENT;
			snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", ierr.msg);
			break;
		}
		double tn = now_s();
		if (n > 0)
			last_data = tn;
		else if (tn - last_data > STALL_S) {
			res->stop = ERGON_RECORD_INSTRUMENT;
			snprintf(res->stop_reason, sizeof(res->stop_reason),
				 "%s sent no sample for %.0f s after %llu samples (stalled, or "
				 "its stream was stopped by another program)",
				 o->instrument_spec, STALL_S, (unsigned long long)r->next_index);
			break;
		}
		if (limit && r->next_index >= limit) {
			res->stop = ERGON_RECORD_DURATION;
			snprintf(res->stop_reason, sizeof(res->stop_reason),
				 "the duration of %.3f s was reached", o->duration_s);
			break;
		}
		if (o->until_gate_falls && r->gate_fell) {
			res->stop = ERGON_RECORD_GATE_FELL;
			snprintf(res->stop_reason, sizeof(res->stop_reason),
				 "the gate on digital line %u fell", o->sync_input_index);
			break;
		}
		double t = now_s();
		if (r->w && t - last_utc >= 1.0) {
			/* The host's wall clock when this sample arrived. */
			rc = flush(r, err);
			if (rc == 0 && r->next_index > 0)
				rc = ergon_jls_writer_utc(r->w, r->next_index - 1, utc_now(), err);
			if (rc) {
				res->stop = ERGON_RECORD_WRITE;
				snprintf(res->stop_reason, sizeof(res->stop_reason), "%s",
					 err->msg);
				break;
			}
			last_utc = t;
		}
		if (o->progress && t - last_progress >= 0.25) {
			struct ergon_record_progress p = {
			    .elapsed_s = (double)r->next_index / r->rate_hz,
			    .samples = r->next_index,
			    .dropped = res->dropped,
			    .mean_current_a = r->i_n ? r->i_sum / (double)r->i_n : NAN};
			o->progress(o->progress_ctx, &p);
			last_progress = t;
		}
	}
stop_inst : {
	struct ergon_err serr = {0};
	(void)ergon_instrument_stop(r->inst, &serr);
}
	res->complete = res->stop != ERGON_RECORD_INSTRUMENT && res->stop != ERGON_RECORD_WRITE;
	res->issues = json_deep_copy(r->inst->issues);
	ergon_instrument_unvalidated_issue(r->inst, res->issues);
	/* Every code an instrument raises is registered: the list is whole
	 * unless memory ran out (issue_list.oom). */
	struct ergon_err lerr = {0};
	(void)ergon_issue_list_from_json(res->issues, &res->issue_list, &lerr);
	if (r->w) {
		int frc = rc ? 0 : flush(r, err);
		if (frc && rc == 0) {
			rc = frc;
			res->complete = 0;
			res->stop = ERGON_RECORD_WRITE;
			snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", err->msg);
		}
		if (r->next_index > 0 && rc == 0)
			(void)ergon_jls_writer_utc(r->w, r->next_index - 1, utc_now(), err);
		res->samples = ergon_jls_writer_samples(r->w);
		char *n1 = note(r, 1);
		struct ergon_err cerr = {0};
		int crc = ergon_jls_writer_close(r->w, n1, &cerr);
		free(n1);
		r->w = NULL;
		if (crc && rc == 0) {
			rc = crc;
			*err = cerr;
		}
		/* A clean close puts every sample on disk; after a failure
		 * what is kept is what the file holds, read back. */
		res->samples_kept =
		    (crc == 0 && rc == 0) ? res->samples : samples_on_disk(o->out_path);
		res->bytes = 0;
		struct stat fst;
		if (stat(o->out_path, &fst) == 0)
			res->bytes = (uint64_t)fst.st_size;
	} else if (rc == 0) {
		rc = ergon_err_set(err,
				   res->stop == ERGON_RECORD_STOPPED ? ERGON_EINTR : ERGON_EDEVICE,
				   "%s: no sample arrived (%s); nothing was written to %s",
				   o->instrument_spec, res->stop_reason, o->out_path);
	}
	res->elapsed_s = (double)res->samples_kept / r->rate_hz;
	res->mean_current_a = r->i_n ? r->i_sum / (double)r->i_n : NAN;
out:
	if (rc && r && r->started && !r->opened &&
	    strstr(err->msg, "nothing was written") == NULL) {
		/* Failed before the first sample reached the file: say that
		 * nothing was recorded, so no one looks for a partial file. */
		char why[ERGON_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		ergon_err_clear(err);
		ergon_err_set(err, rc,
			      "%.800s; no sample was recorded and nothing was written to %s", why,
			      o->out_path);
	}
	if (r && r->w)
		ergon_jls_writer_abandon(r->w);
	if (r) {
		ergon_out_release(&r->slot);
		ergon_instrument_close(r->inst);
	}
	free(r);
	free(buf);
	return rc;
}

void ergon_record_result_cleanup(struct ergon_record_result *res)
{
	if (res == NULL)
		return;
	json_decref(res->identity);
	json_decref(res->issues);
	res->identity = NULL;
	res->issues = NULL;
	ergon_issue_list_cleanup(&res->issue_list);
}

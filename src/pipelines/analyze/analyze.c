/* analyze/: `ergon analyze`: a recording -> the power section.
 *
 * `ergon analyze`: a recording (JLS, statistics CSV, raw CSV) + optional
 * gate markers + optional firmware facts -> summary.json (power section),
 * detailed/power_summary.csv and the Power table. */
#include "ergon/analyze.h"

#include "ergon/artifact.h"
#include "ergon/mtime.h"
#include "ergon/fileio.h"
#include "ergon/instrument.h"
#include "ergon/layer_energy.h"
#include "ergon/jls.h"
#include "ergon/power_csv.h"
#include "ergon/reserve.h"
#include "pipelines/common/common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARKERS_MAX_BYTES (64u << 20)
/* summary.json holds per-window figures, not the samples: 1 MiB is ample. */
#define ANALYZE_SUMMARY_RESERVE_BYTES ((size_t)1 << 20)

static int feed_jls(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	return ergon_gated_push_raw(ctx, b->current_a, b->voltage_v, b->power_w, b->gate_bits,
				    b->gate_bit0, b->n, err);
}

/* A recording with a layer-marker line: the gate (line 0) into the gated
 * engine, gate and marker (lines 0 and 1, as bits 0 and 1) into the layer
 * engine. */
struct jls_layers_feed {
	struct ergon_gated *g;
	struct ergon_layers *L;
	uint8_t *digital;
	size_t cap;
	const char *path;
	unsigned marker_index;
};

static int feed_jls_layers(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	struct jls_layers_feed *f = ctx;
	int rc = ergon_gated_push_raw(f->g, b->current_a, b->voltage_v, b->power_w, b->line_bits[0],
				      b->line_bit0[0], b->n, err);
	if (rc)
		return rc;
	if (b->n > f->cap) {
		uint8_t *d = realloc(f->digital, b->n);
		if (d == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", f->path);
		f->digital = d;
		f->cap = b->n;
	}
	for (size_t j = 0; j < b->n; j++) {
		unsigned v = 0;
		for (unsigned k = 0; k < 2; k++) {
			const uint8_t *bits = b->line_bits[k];
			size_t at = b->line_bit0[k] + j;
			if (bits != NULL && (((unsigned)bits[at / 8] >> (at % 8)) & 1u))
				v |= 1u << k;
		}
		f->digital[j] = (uint8_t)v;
	}
	return ergon_layers_push(f->L, b->current_a, b->voltage_v, NAN, f->digital, b->n, err);
}

static int sink_packets(void *ctx, const struct ergon_stats_packet *p, size_t n,
			struct ergon_err *err)
{
	return ergon_gated_push_packets(ctx, p, n, err);
}

static int sink_raw_begin(void *ctx, double sample_rate_hz, struct ergon_err *err)
{
	return ergon_gated_raw_begin(ctx, sample_rate_hz, err);
}

static int sink_raw(void *ctx, const float *current_a, const float *voltage_v, const float *power_w,
		    const uint8_t *gate_bits, size_t bit0, size_t n, struct ergon_err *err)
{
	return ergon_gated_push_raw(ctx, current_a, voltage_v, power_w, gate_bits, bit0, n, err);
}

void ergon_power_sink_gated(struct ergon_gated *g, struct ergon_power_sink *out)
{
	out->ctx = g;
	out->packets = sink_packets;
	out->raw_begin = sink_raw_begin;
	out->raw = sink_raw;
}

/* A fault of the recording's content, reported as an issue on an invalid
 * artifact; anything else (cannot open, read or write; out of memory;
 * usage) stops the command without one. */
static int is_data_fault(int rc)
{
	return rc == ERGON_EPARSE || rc == ERGON_ETOOBIG || rc == ERGON_EVERIFY ||
	       rc == ERGON_ENOTSUP || rc == ERGON_ERANGE;
}

/* Append a copy of issue e to l; ERGON_ENOMEM names `what`. */
static int issue_copy(struct ergon_issue_list *l, const struct ergon_issue_entry *e,
		      const char *what, struct ergon_err *err)
{
	if (ergon_issue_list_add(l, e->code, e->fields, e->nfields, "%s", e->message) == 0)
		return 0;
	return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", what);
}

static int feed_csv(struct ergon_gated *g, int kind, const char *path, unsigned sync,
		    const char **fault, struct ergon_issue_list *warnings, struct ergon_err *err)
{
	int fd;
	int orc = ergon_open_input(path, "the recording", ERGON_INPUT_FIFO, &fd, err);
	if (orc)
		return orc;
	FILE *fp = fdopen(fd, "rb");
	if (fp == NULL) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: cannot open the recording", path);
	}
	struct ergon_power_csv *p = NULL;
	struct ergon_power_sink sink;
	ergon_power_sink_gated(g, &sink);
	int rc = ergon_power_csv_new(kind, &sink, sync, path, &p, err);
	char *buf = malloc(1u << 16);
	if (rc == 0 && buf == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	while (rc == 0) {
		size_t n = fread(buf, 1, 1u << 16, fp);
		if (n > 0)
			rc = ergon_power_csv_feed(p, buf, n, err);
		if (n < (1u << 16)) {
			if (ferror(fp))
				rc = ergon_err_set(err, ERGON_EIO, "%s: read error", path);
			break;
		}
	}
	if (rc == 0)
		rc = ergon_power_csv_end(p, err);
	*fault = ergon_power_csv_fault_code(p);
	if (ergon_power_csv_warnings(p, warnings) && rc == 0)
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	free(buf);
	ergon_power_csv_free(p);
	fclose(fp);
	return rc;
}

int ergon_power_analyze_stream(const struct ergon_gated_config *cfg, ergon_power_feed_fn feed,
			       void *ctx, const struct ergon_power_facts *f, json_t **out,
			       struct ergon_err *err)
{
	*out = NULL;
	struct ergon_gated *g = NULL;
	const struct ergon_gated_result *res = NULL;
	int rc = ergon_gated_new(cfg, &g, err);
	if (rc == 0)
		rc = feed(ctx, g, err);
	if (rc == 0)
		rc = ergon_gated_finish(g, &res, err);
	if (rc == 0)
		rc = ergon_power_section(res, cfg->min_window_s, f, NULL, out, err);
	ergon_gated_free(g);
	return rc;
}

/* The rating of the instrument that made the recording (options above):
 * *have 0 when nothing is known (the budgets' rated terms are then
 * unknown); from names where it came from. */
static int analyze_rating(const struct ergon_analyze_options *o, struct ergon_jls_reader *jr,
			  const struct ergon_power_facts *f, struct ergon_rating *r, int *have,
			  char *from, size_t cap, struct ergon_err *err)
{
	*have = 0;
	snprintf(from, cap,
		 "none: the recording does not say which instrument made it; give "
		 "--meter MODEL");
	double shunt = o->shunt_ohms > 0		? o->shunt_ohms
		       : f && f->monitor_shunt_ohms > 0 ? f->monitor_shunt_ohms
							: NAN;
	if (o->meter) {
		if (ergon_rating_for_model(o->meter, shunt, r) != 0)
			return ergon_err_set(
			    err, ERGON_EUSAGE,
			    "--meter %s: ergon holds no rating of this instrument; "
			    "known: js110, js220, ina228, ina3221, vbench (or give "
			    "the figures with --rating KEY=VALUE)",
			    o->meter);
		*have = 1;
		snprintf(from, cap, "--meter %s", o->meter);
	} else if (jr != NULL && ergon_jls_reader_note(jr) != NULL) {
		/* ergon record's note: {"ergon": {"instrument": {..., "rating"}}}. */
		json_t *note = json_loads(ergon_jls_reader_note(jr), 0, NULL);
		const json_t *rj = json_object_get(
		    json_object_get(json_object_get(note, "ergon"), "instrument"), "rating");
		struct ergon_err e2 = {0};
		if (json_is_object(rj) && ergon_rating_from_json(rj, o->jls_path, r, &e2) == 0) {
			*have = 1;
			snprintf(from, cap,
				 "the recording's note (the instrument that `ergon record` "
				 "used)");
		}
		json_decref(note);
	}
	if (!*have && jr != NULL &&
	    ergon_rating_for_model(ergon_jls_reader_source_field(jr, "model"), shunt, r) == 0) {
		*have = 1;
		snprintf(from, cap, "the recording's source model (%s)",
			 ergon_jls_reader_source_field(jr, "model"));
	}
	if (!*have && f && f->internal && strcmp(f->terminal.source, "ina228") == 0) {
		(void)ergon_rating_for_model("INA228", shunt, r);
		*have = 1;
		snprintf(from, cap, "the power terminal record's source (the on-board INA228)");
	}
	for (const char *const *kv = o->rating_kv; kv && *kv; kv++) {
		const char *eq = strchr(*kv, '=');
		char key[64];
		size_t kl = eq ? (size_t)(eq - *kv) : 0;
		if (eq == NULL || kl == 0 || kl >= sizeof(key))
			return ergon_err_set(err, ERGON_EUSAGE, "--rating %s: expected KEY=VALUE",
					     *kv);
		memcpy(key, *kv, kl);
		key[kl] = '\0';
		if (!*have) {
			ergon_rating_init(r, ERGON_RATING_NONE);
			*have = 1;
			snprintf(from, cap, "--rating only");
		}
		int rc = ergon_rating_override(r, key, eq + 1, "--rating", err);
		if (rc)
			return rc;
	}
	return 0;
}

static char *path_join(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", dir, rel);
	return s;
}

/* The layer engine's result into the power section: power.layers[],
 * power.layer_energy, their issues; the sum checked against the energy per
 * inference when the section publishes it (--facts). */
static int analyze_layers(struct ergon_layers *L, const struct ergon_layer_plan *plan,
			  json_t *section, const struct ergon_analyze_options *o,
			  struct ergon_err *err)
{
	const struct ergon_layers_result *res = NULL;
	int rc = ergon_layers_finish(L, &res, err);
	if (rc)
		return rc;
	struct ergon_power_summary ps;
	ergon_power_summary_read(section, &ps);
	double epi_j = ps.energy_per_inference_j;
	char meter[200];
	snprintf(meter, sizeof meter, "the recording %s (gate gpi[%u], markers gpi[%u])",
		 o->jls_path, o->sync_input_index, o->marker_input_index);
	rc = ergon_layers_section(res, plan, epi_j, ps.energy_per_inference_u_j, meter, section,
				  NULL, err);
	if (rc)
		return rc;
	json_t *meta = json_object_get(section, "layer_energy");
	json_object_set_new(meta, "plan_from", json_string(o->layers_path));
	json_object_set_new(
	    meta, "sum_checked",
	    json_string(isfinite(epi_j) ? "against the energy per inference"
					: "not checked: no energy per inference (give --facts)"));
	return rc;
}

int ergon_analyze_run(const struct ergon_analyze_options *o, int utf8, char **table,
		      struct ergon_power_summary *power, json_t **summary, struct ergon_err *err)
{
	if (table)
		*table = NULL;
	if (power)
		ergon_power_summary_read(NULL, power);
	if (summary)
		*summary = NULL;
	int inputs = (o->jls_path != NULL) + (o->stats_path != NULL) + (o->raw_path != NULL);
	struct ergon_power_facts facts;
	memset(&facts, 0, sizeof(facts));
	int have_facts = 0;
	struct ergon_gate_marker *markers = NULL;
	size_t nmarkers = 0;
	struct ergon_gated *g = NULL;
	struct ergon_jls_reader *jr = NULL;
	json_t *section = NULL, *art = NULL;
	struct ergon_issue_list warnings = {0};
	char *sum_path = NULL, *csv_path = NULL, *csv = NULL, *mk = NULL;
	size_t csv_len = 0;
	int rc = 0;
	unsigned wflags = ERGON_WRITE_MKDIR | (o->force ? ERGON_WRITE_FORCE : 0);
	struct ergon_rating rating;
	int have_rating = 0, jls_open_rc = 0;
	char rating_from[200];
	struct ergon_err jls_open_err = {0};
	struct ergon_out_slot slot = {.fd = -1, .lock_fd = -1};
	char *lay_text = NULL, *lay_csv_path = NULL;
	json_t *lay_doc = NULL;
	struct ergon_layer_plan plan = {0};
	struct ergon_layers *L = NULL;
	struct jls_layers_feed lf = {0};
	char marker_sig[16];

	if (o->out_dir == NULL)
		return ergon_err_set(err, ERGON_EUSAGE, "an output folder is required (--out DIR)");
	if (inputs > 1)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "give one recording: --jls, --stats or --raw, not several");
	int want_layers = o->has_marker_input || o->layers_path != NULL;
	if (want_layers && (!o->has_marker_input || o->layers_path == NULL))
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "energy per layer needs both --marker-input-index N (the marker "
		    "line's digital input) and --layers SUMMARY.json (the profile "
		    "whose layers were marked)");
	if (want_layers && (o->jls_path == NULL || o->markers_path != NULL))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--marker-input-index needs a JLS recording (--jls) with the "
				     "gate on a digital line (not --markers): markers need raw "
				     "samples and the gate line");
	if (want_layers && o->marker_input_index == o->sync_input_index)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--marker-input-index %u is the gate's line "
				     "(--sync-input-index); the markers need their own line",
				     o->marker_input_index);
	if (want_layers) {
		size_t len = 0;
		json_error_t je;
		rc = ergon_file_read_all(o->layers_path, MARKERS_MAX_BYTES, &lay_text, &len, err);
		if (rc)
			return rc;
		lay_doc = json_loadb(lay_text, len, 0, &je);
		free(lay_text);
		lay_text = NULL;
		if (lay_doc == NULL)
			return ergon_err_set(err, ERGON_EPARSE,
					     "--layers %s: line %d: %s; give the summary.json of "
					     "`ergon profile MODEL --layer-energy`",
					     o->layers_path, je.line, je.text);
		if (!json_is_array(
			json_object_get(json_object_get(lay_doc, "profile"), "layers"))) {
			json_decref(lay_doc);
			return ergon_err_set(err, ERGON_EPARSE,
					     "--layers %s: no profile.layers[]; give the "
					     "summary.json of `ergon profile MODEL --layer-energy`",
					     o->layers_path);
		}
	}
	if (o->facts_path) {
		rc = ergon_power_facts_load(o->facts_path, &facts, err);
		if (rc) {
			json_decref(lay_doc);
			return rc;
		}
		have_facts = 1;
	}
	if (inputs == 0 && !(have_facts && facts.internal)) {
		json_decref(lay_doc);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "no recording: give --jls FILE.jls, --stats FILE.csv or --raw "
				     "FILE.csv (or --facts with an internal INA228 record)");
	}
	sum_path = path_join(o->out_dir, "summary.json");
	csv_path = path_join(o->out_dir, "detailed/power_summary.csv");
	if (sum_path == NULL || csv_path == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	/* Refuse before reading a large recording, not after. */
	rc = ergon_file_check_writable(csv_path, wflags, err);
	if (rc == 0 && lay_doc != NULL) {
		lay_csv_path = path_join(o->out_dir, "detailed/layer_energy.csv");
		rc = lay_csv_path ? ergon_file_check_writable(lay_csv_path, wflags, err)
				  : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	if (rc == 0) /* summary.json: its place and space, held to the end */
		rc = ergon_out_reserve(&slot, sum_path, ANALYZE_SUMMARY_RESERVE_BYTES, wflags, err);
	if (rc)
		goto out;
	if (o->markers_path) {
		size_t len = 0;
		rc = ergon_file_read_all(o->markers_path, MARKERS_MAX_BYTES, &mk, &len, err);
		if (rc == 0)
			rc = ergon_gate_markers_parse(mk, len, o->markers_path, &markers, &nmarkers,
						      err);
		if (rc)
			goto out;
		if (nmarkers == 0) {
			rc = ergon_err_set(err, ERGON_EPARSE,
					   "%s: no markers; write one 'start_s,end_s' line per "
					   "gated window",
					   o->markers_path);
			goto out;
		}
	}
	struct ergon_gated_config cfg = {
	    .stats_rate_hz = o->stats_rate_hz,
	    /* A statistics CSV's packets carry their own period: a rate given
	     * for them must agree with it. */
	    .stats_rate_strict = o->stats_path != NULL && o->stats_rate_hz > 0,
	    .min_window_s = o->min_window_s,
	    .sync_input_index = o->sync_input_index,
	    .markers = markers,
	    .marker_count = nmarkers,
	};
	const struct ergon_gated_result *res = NULL;
	const char *format = "none";
	const char *input = o->jls_path ? o->jls_path : o->stats_path ? o->stats_path : o->raw_path;
	const char *fault_code = NULL;
	/* The recording's header first: which instrument made it decides the
	 * ranges the engine sorts the samples into. */
	if (o->jls_path) {
		rc = ergon_jls_file_open(o->jls_path, &jr, err);
		if (rc && is_data_fault(rc)) {
			jls_open_err = *err;
			jls_open_rc = rc;
			ergon_err_clear(err);
			rc = 0;
		} else if (rc) {
			goto out;
		}
	}
	rc = analyze_rating(o, jr, have_facts ? &facts : NULL, &rating, &have_rating, rating_from,
			    sizeof rating_from, err);
	if (rc)
		goto out;
	cfg.rating = have_rating ? &rating : NULL;
	if (inputs == 1) {
		rc = ergon_gated_new(&cfg, &g, err);
		if (rc)
			goto out;
		const char *csv_fault = NULL;
		if (o->jls_path) {
			format = "jls";
			if (jls_open_rc) {
				*err = jls_open_err;
				rc = jls_open_rc;
			}
			if (rc == 0) {
				rc = ergon_gated_raw_begin(
				    g, (double)ergon_jls_reader_sample_rate(jr), err);
				if (rc) {
					ergon_err_clear(err);
					rc = ergon_err_set(
					    err, ERGON_EPARSE,
					    "%s: no usable 'current' signal rate; record the "
					    "current signal",
					    o->jls_path);
				}
			}
			if (rc == 0 && lay_doc != NULL) {
				snprintf(marker_sig, sizeof marker_sig, "gpi[%u]",
					 o->marker_input_index);
				if (ergon_jls_reader_signal(jr, marker_sig) == NULL) {
					rc = ergon_err_set(
					    err, ERGON_EUSAGE,
					    "%s: no digital signal %s for --marker-input-index "
					    "%u; record the marker line (ergon record keeps D0-D7 "
					    "of a PPK2)",
					    o->jls_path, marker_sig, o->marker_input_index);
					goto out;
				}
				double hz = (double)ergon_jls_reader_sample_rate(jr);
				rc = ergon_layer_plan_from_profile(
				    json_object_get(lay_doc, "profile"), hz, o->layers_path, &plan,
				    err);
				struct ergon_layers_config lc = {
				    .sample_rate_hz = hz,
				    .gate_bit = 0,
				    .marker_bit = 1,
				    .segments = plan.n_segments,
				    .inferences = have_facts ? facts.clean_infer_count : 0,
				    .rating = have_rating ? &rating : NULL};
				if (rc == 0)
					rc = ergon_layers_new(&lc, &L, err);
				if (rc)
					goto out;
			}
			if (rc == 0) {
				char gate[16];
				snprintf(gate, sizeof(gate), "gpi[%u]", o->sync_input_index);
				if (L != NULL) {
					const char *lines[2] = {gate, marker_sig};
					lf = (struct jls_layers_feed){
					    .g = g, .L = L, .path = o->jls_path};
					rc = ergon_jls_reader_stream_lines(
					    jr, lines, 2, feed_jls_layers, &lf, err);
				} else {
					rc = ergon_jls_reader_stream(jr, nmarkers ? NULL : gate,
								     feed_jls, g, err);
				}
			}
			for (size_t i = 0; rc == 0 && i < ergon_jls_reader_warnings(jr)->n; i++)
				rc = issue_copy(&warnings, &ergon_jls_reader_warnings(jr)->items[i],
						o->jls_path, err);
			if (rc == 0 && ergon_jls_reader_warnings(jr)->oom)
				rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
						   o->jls_path);
		} else if (o->stats_path) {
			format = "stats_csv";
			rc = feed_csv(g, ERGON_POWER_CSV_STATS, o->stats_path, o->sync_input_index,
				      &csv_fault, &warnings, err);
		} else {
			format = "raw_csv";
			rc = feed_csv(g, ERGON_POWER_CSV_RAW, o->raw_path, o->sync_input_index,
				      &csv_fault, &warnings, err);
		}
		if (rc && is_data_fault(rc)) {
			/* The recording's content is unusable: the artifact is still
			 * written, invalid, with the reason as an issue (its message
			 * names the file and line) and no stats window. The half-fed
			 * engine is replaced by an empty one so nothing partial is
			 * reported as measured. */
			fault_code = csv_fault ? csv_fault : "power.recording_unusable";
			struct ergon_issue_list fw = {0};
			int frc = ergon_issue_list_add(&fw, fault_code, NULL, 0, "%s", err->msg);
			for (size_t i = 0; frc == 0 && i < warnings.n; i++)
				frc = issue_copy(&fw, &warnings.items[i], "analyze", err);
			fw.oom |= warnings.oom;
			ergon_issue_list_cleanup(&warnings);
			warnings = fw;
			ergon_err_clear(err);
			ergon_gated_free(g);
			g = NULL;
			rc = frc == 0 ? ergon_gated_new(&cfg, &g, err)
				      : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		}
		if (rc)
			goto out;
		rc = ergon_gated_finish(g, &res, err);
		if (rc)
			goto out;
	}
	double min_window_s = o->min_window_s > 0 ? o->min_window_s : ERGON_GATE_MIN_WINDOW_S;
	struct ergon_power_budget_opts bo = {
	    .rating = have_rating ? &rating : NULL,
	    .max_uncertainty_pct = o->max_uncertainty_pct,
	    .energy_lsb_j = facts.monitor_energy_lsb_j > 0 ? facts.monitor_energy_lsb_j : NAN,
	    .charge_lsb_c = facts.monitor_charge_lsb_c > 0 ? facts.monitor_charge_lsb_c : NAN,
	    .cycle_s = facts.monitor_cycle_s > 0 ? facts.monitor_cycle_s : NAN,
	};
	rc = ergon_power_section_ex(res, min_window_s, have_facts ? &facts : NULL, &warnings, &bo,
				    &section, err);
	if (rc == 0 && json_is_object(json_object_get(section, "uncertainty")))
		json_object_set_new(json_object_get(section, "uncertainty"), "rating_from",
				    json_string(rating_from));
	if (rc)
		goto out;
	if (L != NULL && fault_code == NULL) {
		rc = analyze_layers(L, &plan, section, o, err);
		if (rc)
			goto out;
	} else if (L != NULL) {
		json_object_set_new(section, "layer_energy",
				    json_pack("{s:s, s:s}", "measured", "no", "why",
					      "the recording's content is unusable (see issues)"));
	}
	art = ergon_artifact_new("ergon.profile", 1, ERGON_PROV_REPLAYED);
	if (art == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	/* A replay names what it replayed and that recording's own provenance. */
	json_t *prov = json_object_get(art, "provenance");
	json_object_set_new(prov, "recording",
			    json_pack("{s:s?,s:s,s:s,s:s?}", "path", input, "format", format,
				      "recording_provenance",
				      o->recording_provenance ? o->recording_provenance : "unknown",
				      "facts", o->facts_path));
	/* Wall-clock anchor of sample 0 from the recording's UTC track; null
	 * when it has none (CSV inputs, or a JLS written without UTC). */
	json_t *start_utc = json_null();
	int64_t q30 = 0;
	char iso[40];
	if (jr != NULL && ergon_jls_reader_start_utc(jr, &q30) == 0 &&
	    ergon_jls_utc_iso(q30, iso, sizeof iso) == 0) {
		json_decref(start_utc);
		start_utc = json_string(iso);
	}
	json_object_set(json_object_get(prov, "recording"), "capture_start_utc", start_utc);
	/* Which recording this is (its size and SHA-256), so that report --jls
	 * and view --summary refuse one that is not it. A pipe or stdin cannot
	 * be read again: nothing is recorded, and those readers then refuse
	 * any recording with this summary unless told to draw it anyway. */
	if (input != NULL && strcmp(input, "-") != 0) {
		struct ergon_err ie = {0};
		int irc = ergon_summary_recording_identify(input,
							   json_object_get(prov, "recording"), &ie);
		if (irc != 0 && irc != ERGON_EUSAGE) {
			json_decref(start_utc);
			rc = ergon_err_set(err, irc, "%s", ie.msg);
			goto out;
		}
	}
	json_object_set_new(section, "capture_start_utc", start_utc);
	/* When it was measured: what the recording itself says (its UTC
	 * track, the start and the start plus the capture's span), or not
	 * known. ergon did not see the measurement: no monotonic times. */
	json_t *mt = NULL;
	if (json_is_string(start_utc)) {
		char end_iso[40];
		double span_s = json_number_value(json_object_get(section, "capture_duration_s"));
		int64_t end_q30 = q30 + (int64_t)(span_s * 1073741824.0);
		mt = ergon_mtime_unknown_json("the times the recording's UTC track states (its "
					      "first sample, and that plus the capture's span); "
					      "ergon did not see the measurement",
					      json_string_value(start_utc),
					      "the recording's UTC track (JLS)");
		if (mt && isfinite(span_s) && span_s >= 0 &&
		    ergon_jls_utc_iso(end_q30, end_iso, sizeof end_iso) == 0)
			json_object_set_new(mt, "end_utc", json_string(end_iso));
	} else {
		mt = ergon_mtime_unknown_json("the recording states no wall-clock time (a CSV, or "
					      "a JLS written without UTC): when it was measured is "
					      "not known",
					      NULL, NULL);
	}
	json_object_set_new(art, "measurement_time", mt ? mt : json_null());
	json_object_set(section, "provenance", prov);
	if (jr != NULL)
		json_object_set_new(art, "instrument",
				    json_pack("{s:s,s:s,s:s,s:s}", "name",
					      ergon_jls_reader_source_field(jr, "name"), "vendor",
					      ergon_jls_reader_source_field(jr, "vendor"), "model",
					      ergon_jls_reader_source_field(jr, "model"), "serial",
					      ergon_jls_reader_source_field(jr, "serial")));
	json_object_set(art, "issues", json_object_get(section, "issues"));
	json_object_set(art, "power", section);
	rc = ergon_power_csv_render(section, &csv, &csv_len, err);
	if (rc == 0 && table)
		rc = ergon_power_table_render(section, utf8, table, err);
	if (rc == 0)
		rc = ergon_file_write_atomic(csv_path, csv, csv_len, wflags, err);
	if (rc == 0 && lay_csv_path != NULL && json_is_array(json_object_get(section, "layers"))) {
		char *lcsv = NULL;
		size_t llen = 0;
		rc = ergon_layers_csv(json_object_get(section, "layers"), &lcsv, &llen, err);
		if (rc == 0)
			rc = ergon_file_write_atomic(lay_csv_path, lcsv, llen, wflags, err);
		free(lcsv);
	}
	if (rc == 0) {
		char *text = NULL;
		size_t len = 0;
		rc = ergon_artifact_serialize(art, sum_path, &text, &len, err);
		if (rc == 0)
			rc = ergon_out_commit(&slot, text, len, err);
		free(text);
	}
	if (rc == 0 && power)
		ergon_power_summary_read(section, power);
	if (rc == 0 && summary)
		*summary = json_incref(art);
out:
	ergon_out_release(&slot);
	if (rc) {
		free(*table);
		*table = NULL;
	}
	json_decref(section);
	json_decref(art);
	ergon_issue_list_cleanup(&warnings);
	ergon_jls_reader_free(jr);
	ergon_gated_free(g);
	free(markers);
	free(mk);
	free(csv);
	free(sum_path);
	free(csv_path);
	free(lay_csv_path);
	free(lf.digital);
	ergon_layers_free(L);
	ergon_layer_plan_free(&plan);
	json_decref(lay_doc);
	return rc;
}

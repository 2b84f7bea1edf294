/* view/: `ergon view`: recordings as one page to explore.
 *
 * A recording is streamed once through the bins engine (ergon/bins.h) into
 * at most max_bins min/max/mean bins of a decimal size (1, 10, 100, ...
 * samples: the finest that fits), which the page embeds as its finest
 * level; the page builds the coarser levels itself. A summary adds its gate
 * windows, ignored pulses and layer markers. docs/internals/view.md. */
#include "../common/common.h"
#include "ergon/fileio.h"
#include "view_internal.h"

#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Summaries are small; a larger file is not one. */
#define SUMMARY_MAX ((size_t)64 << 20)
/* Overlay items drawn from a summary, each kind. */
#define OVERLAY_MAX 100000u
/* Bins whose finite counts are listed one by one; more go in an array. */
#define SPARSE_MAX 4096u

int view_b64_set(json_t *obj, const char *key, const void *data, size_t n, struct ergon_err *err)
{
	size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(cap);
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
	sodium_bin2base64(s, cap, data, n, sodium_base64_VARIANT_ORIGINAL);
	int rc = json_object_set_new(obj, key, json_string(s));
	free(s);
	return rc ? ergon_err_set(err, ERGON_ENOMEM, "view: out of memory") : 0;
}

struct stream_ctx {
	struct ergon_bins bins;
	float *power; /* current x voltage when the recording has no power */
	size_t power_cap;
	size_t n_lines;
};

static int on_block(void *ctx, const struct ergon_jls_block *b, struct ergon_err *err)
{
	struct stream_ctx *s = ctx;
	const float *p = b->power_w;
	if (p == NULL) {
		if (b->n > s->power_cap) {
			float *np = realloc(s->power, b->n * sizeof(float));
			if (np == NULL)
				return ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
			s->power = np;
			s->power_cap = b->n;
		}
		for (size_t j = 0; j < b->n; j++)
			s->power[j] = b->current_a[j] * b->voltage_v[j];
		p = s->power;
	}
	const float *f32[VIEW_F32] = {b->current_a, b->voltage_v, p};
	return ergon_bins_push(&s->bins, b->first_index, b->n, f32, b->line_bits, b->line_bit0,
			       err);
}

/* Finite counts of the bins that are not full: [[bin, current, voltage,
 * power], ...] while few, else three base64 u32 arrays. */
static int finite_counts(json_t *rec, const struct ergon_bins *b, struct ergon_err *err)
{
	size_t odd = 0;
	for (size_t i = 0; i < b->n_bins; i++) {
		uint64_t want = ergon_bins_count(b, i);
		for (int k = 0; k < VIEW_F32; k++)
			if (b->finite[k][i] != want) {
				odd++;
				break;
			}
	}
	if (odd <= SPARSE_MAX) {
		json_t *a = json_array();
		for (size_t i = 0; i < b->n_bins; i++) {
			uint64_t want = ergon_bins_count(b, i);
			if (b->finite[0][i] == want && b->finite[1][i] == want &&
			    b->finite[2][i] == want)
				continue;
			json_array_append_new(
			    a, json_pack("[I,I,I,I]", (json_int_t)i, (json_int_t)b->finite[0][i],
					 (json_int_t)b->finite[1][i], (json_int_t)b->finite[2][i]));
		}
		return json_object_set_new(rec, "finite_sparse", a)
			   ? ergon_err_set(err, ERGON_ENOMEM, "view: out of memory")
			   : 0;
	}
	json_t *dense = json_object();
	json_object_set_new(rec, "finite_dense", dense);
	const char *names[VIEW_F32] = {"current", "voltage", "power"};
	for (int k = 0; k < VIEW_F32; k++) {
		int rc =
		    view_b64_set(dense, names[k], b->finite[k], b->n_bins * sizeof(uint32_t), err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A number field of a summary item, or NaN. */
static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The summary at path, parsed, with its power section (a summary of
 * ergon analyze or ergon profile --power); *out is the caller's. */
static int load_summary(const char *path, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, SUMMARY_MAX, &text, &len, err);
	if (rc)
		return rc;
	json_error_t jerr;
	json_t *sum = json_loadb(text, len, 0, &jerr);
	free(text);
	if (sum == NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%d:%d: %s; pass the summary.json ergon analyze or "
				     "ergon profile wrote",
				     path, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(json_object_get(sum, "power"))) {
		json_decref(sum);
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: no power section; `ergon view --summary` takes the "
				     "summary.json of ergon analyze or ergon profile --power",
				     path);
	}
	*out = sum;
	return 0;
}

/* Whether the summary sum was made from in->jls_path (its size and
 * SHA-256: ergon_summary_recording_check), checked before the recording is
 * read. With in->force_jls a recording not shown to belong is drawn, and
 * *note gets why (the page says it); "" when it was shown to belong. */
static int summary_check(const struct ergon_view_input *in, const json_t *sum, char *note,
			 size_t cap, struct ergon_err *err)
{
	note[0] = '\0';
	struct ergon_err cerr = {0};
	int rc = ergon_summary_recording_check(sum, in->summary_path, in->jls_path, &cerr);
	if (rc == ERGON_EREFUSED && in->force_jls) {
		snprintf(note, cap, "%s", cerr.msg);
		return 0;
	}
	return rc ? ergon_err_set(err, rc, "%s", cerr.msg) : 0;
}

/* The summary's overlays: gate windows (sample indices when it has them),
 * ignored pulses, layers. Items without usable times are skipped. */
static void summary_overlays(json_t *rec, const struct ergon_view_input *in, const json_t *sum,
			     double fs, const char *note)
{
	const json_t *power = json_object_get(sum, "power");
	json_t *o = json_object();
	json_object_set_new(rec, "summary", o);
	json_object_set_new(o, "path", json_string(in->summary_path));
	/* Drawn with --force-jls over a recording not shown to be its own. */
	json_object_set_new(o, "not_shown_to_belong", note[0] ? json_string(note) : json_null());
	const json_t *integ = json_object_get(power, "integrity");
	json_object_set(o, "integrity", json_is_string(integ) ? (json_t *)integ : json_null());
	json_t *wins = json_array();
	json_object_set_new(o, "windows", wins);
	size_t i;
	const json_t *w;
	json_array_foreach(json_object_get(power, "windows"), i, w)
	{
		if (i >= OVERLAY_MAX)
			break;
		double s = num(w, "start_s"), e = num(w, "end_s");
		double si = num(w, "start_index"), ei = num(w, "end_index");
		if (isfinite(si) && isfinite(ei) && fs > 0) {
			s = si / fs;
			e = ei / fs;
		}
		if (!isfinite(s) || !isfinite(e))
			continue;
		json_array_append_new(
		    wins, json_pack("{s:f,s:f,s:o,s:o,s:o}", "start_s", s, "end_s", e, "energy_j",
				    ergon_jnum(num(w, "energy_j")), "charge_c",
				    ergon_jnum(num(w, "charge_c")), "start_index", ergon_jnum(si)));
	}
	json_t *gl = json_array();
	json_object_set_new(o, "ignored_pulses", gl);
	json_array_foreach(ergon_jpath(power, "gate.glitches"), i, w)
	{
		if (i >= OVERLAY_MAX)
			break;
		double s = num(w, "start_s"), d = num(w, "duration_s");
		if (isfinite(s) && isfinite(d))
			json_array_append_new(
			    gl, json_pack("{s:f,s:f}", "start_s", s, "duration_s", d));
	}
	const json_t *ign = json_object_get(power, "short_gate_pulses_ignored");
	json_object_set(o, "ignored_pulses_total",
			json_is_integer(ign) ? (json_t *)ign : json_null());
	/* Per-layer energy (power.layers[], when the summary has it): each
	 * layer's start and end, its name or op, its energy. */
	json_t *layers = json_array();
	json_object_set_new(o, "layers", layers);
	json_array_foreach(json_object_get(power, "layers"), i, w)
	{
		if (i >= OVERLAY_MAX)
			break;
		double s = num(w, "start_s"), e = num(w, "end_s");
		if (!isfinite(s))
			continue;
		const char *name = json_string_value(json_object_get(w, "name"));
		const char *op = json_string_value(json_object_get(w, "op"));
		json_t *l = json_pack("{s:f,s:o,s:o}", "start_s", s, "end_s", ergon_jnum(e),
				      "energy_j", ergon_jnum(num(w, "energy_j")));
		json_object_set_new(l, "name", json_string(name ? name : op ? op : ""));
		json_object_set_new(l, "op", op ? json_string(op) : json_null());
		json_array_append_new(layers, l);
	}
}

/* The default fill: every sample streamed once into the bins engine. */
int view_stream_fill(void *ctx, struct ergon_jls_reader *r, const char *const *lines,
		     size_t n_lines, uint64_t max_bins, struct ergon_bins *b, struct ergon_err *err)
{
	(void)ctx;
	struct stream_ctx s;
	memset(&s, 0, sizeof(s));
	struct ergon_bins_config bc = {
	    .bin_samples = 1,
	    .max_bins = max_bins,
	    .n_f32 = VIEW_F32,
	    .n_lines = n_lines,
	    .coarsen = 10,
	};
	int rc = ergon_bins_init(&s.bins, &bc, err);
	if (rc == 0 &&
	    (rc = ergon_jls_reader_stream_lines(r, lines, n_lines, on_block, &s, err)) == 0)
		rc = ergon_bins_finish(&s.bins, err);
	free(s.power);
	if (rc) {
		ergon_bins_cleanup(&s.bins);
		return rc;
	}
	*b = s.bins;
	return 0;
}

int view_recording(const struct ergon_view_input *in, const struct ergon_view_options *o,
		   json_t **out, struct ergon_err *err)
{
	return view_recording_with(in, o, view_stream_fill, NULL, out, err);
}

int view_recording_with(const struct ergon_view_input *in, const struct ergon_view_options *o,
			view_fill_fn fill, void *fill_ctx, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	struct ergon_jls_reader *r = NULL;
	struct ergon_bins bins;
	memset(&bins, 0, sizeof(bins));
	json_t *rec = NULL;
	char note[ERGON_ERR_MSG_MAX] = "";
	json_t *sum = NULL;
	int rc = 0;
	if (in->summary_path != NULL &&
	    ((rc = load_summary(in->summary_path, &sum, err)) != 0 ||
	     (rc = summary_check(in, sum, note, sizeof note, err)) != 0)) {
		json_decref(sum);
		return rc;
	}
	if ((rc = ergon_jls_file_open(in->jls_path, &r, err)) != 0) {
		json_decref(sum);
		return rc;
	}
	/* The lines the recording defines, in order gpi[0]..gpi[7]. */
	char names[ERGON_JLS_LINES_MAX][16];
	const char *lines[ERGON_JLS_LINES_MAX];
	size_t n_lines = 0;
	for (unsigned k = 0; k < ERGON_JLS_LINES_MAX; k++) {
		snprintf(names[n_lines], sizeof(names[0]), "gpi[%u]", k);
		if (ergon_jls_reader_signal(r, names[n_lines]) != NULL) {
			lines[n_lines] = names[n_lines];
			n_lines++;
		}
	}
	if ((rc = fill(fill_ctx, r, lines, n_lines,
		       o->max_bins ? o->max_bins : ERGON_VIEW_MAX_BINS_DEFAULT, &bins, err)) != 0)
		goto out;
	double fs = (double)ergon_jls_reader_sample_rate(r);
	const struct ergon_bins *b = &bins;
	if (b->samples == 0) {
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: the recording holds no sample",
				   in->jls_path);
		goto out;
	}
	rec = json_object();
	const char *base = strrchr(in->jls_path, '/');
	json_object_set_new(rec, "name", json_string(base ? base + 1 : in->jls_path));
	json_object_set_new(rec, "path", json_string(in->jls_path));
	json_object_set_new(rec, "sample_rate_hz", json_real(fs));
	json_object_set_new(rec, "samples", json_integer((json_int_t)b->samples));
	json_object_set_new(rec, "bin_samples", json_integer((json_int_t)b->bin_samples));
	json_object_set_new(rec, "bins", json_integer((json_int_t)b->n_bins));
	json_t *src = json_object();
	json_object_set_new(rec, "source", src);
	const char *fields[] = {"name", "vendor", "model", "serial"};
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(src, fields[i],
				    json_string(ergon_jls_reader_source_field(r, fields[i])));
	int64_t utc = 0;
	char iso[40];
	if (ergon_jls_reader_start_utc(r, &utc) == 0 &&
	    ergon_jls_utc_iso(utc, iso, sizeof(iso)) == 0)
		json_object_set_new(rec, "start_utc", json_string(iso));
	else
		json_object_set_new(rec, "start_utc", json_null());
	const char *sig_names[VIEW_F32] = {"current", "voltage", "power"};
	const char *units[VIEW_F32] = {"A", "V", "W"};
	json_t *sigs = json_array();
	json_object_set_new(rec, "signals", sigs);
	for (int k = 0; k < VIEW_F32; k++) {
		json_t *sg = json_pack("{s:s,s:s,s:I}", "name", sig_names[k], "unit", units[k],
				       "lost_samples", (json_int_t)b->lost[k]);
		json_array_append_new(sigs, sg);
		size_t nb = b->n_bins * sizeof(float);
		if ((rc = view_b64_set(sg, "min", b->min[k], nb, err)) != 0 ||
		    (rc = view_b64_set(sg, "max", b->max[k], nb, err)) != 0 ||
		    (rc = view_b64_set(sg, "mean", b->mean[k], nb, err)) != 0)
			goto out;
	}
	json_object_set_new(json_array_get(sigs, VIEW_POWER), "computed",
			    json_boolean(ergon_jls_reader_signal(r, "power") == NULL));
	if ((rc = finite_counts(rec, b, err)) != 0)
		goto out;
	json_t *jl = json_array();
	json_object_set_new(rec, "lines", jl);
	for (size_t k = 0; k < n_lines; k++) {
		json_t *l =
		    json_pack("{s:s,s:o}", "name", lines[k], "first_rise_index",
			      b->first_rise[k] >= 0 ? json_integer(b->first_rise[k]) : json_null());
		json_array_append_new(jl, l);
		if ((rc = view_b64_set(l, "bins", b->lines[k], b->n_bins, err)) != 0)
			goto out;
	}
	/* The reader's warnings (a truncated or damaged file). */
	json_t *warns = json_array();
	json_object_set_new(rec, "warnings", warns);
	const struct ergon_issue_list *wl = ergon_jls_reader_warnings(r);
	for (size_t i = 0; i < wl->n; i++)
		json_array_append_new(warns, json_pack("{s:s,s:s}", "code", wl->items[i].code,
						       "message", wl->items[i].message));
	if (sum != NULL)
		summary_overlays(rec, in, sum, fs, note);
	*out = rec;
	rec = NULL;
out:
	json_decref(sum);
	json_decref(rec);
	ergon_bins_cleanup(&bins);
	ergon_jls_reader_free(r);
	return rc;
}

int ergon_view_html(const struct ergon_view_input *in, size_t n, const struct ergon_view_options *o,
		    char **html, size_t *len, struct ergon_err *err)
{
	*html = NULL;
	*len = 0;
	if (n == 0 || n > ERGON_VIEW_RECORDINGS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "view: %zu recordings; give 1 or %u", n,
				     ERGON_VIEW_RECORDINGS_MAX);
	if (o->max_bins != 0 && (o->max_bins < 10 || o->max_bins % 10 != 0))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "view: --max-bins %" PRIu64 ": give a multiple of 10 (>= 10)",
				     o->max_bins);
	if (sodium_init() < 0)
		return ergon_err_set(err, ERGON_EIO, "view: libsodium failed to initialise");
	json_t *data = json_pack("{s:s,s:i,s:s,s:[]}", "schema", "ergon.view", "schema_version", 1,
				 "tool_version", ERGON_VERSION, "recordings");
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *rec = NULL;
		if ((rc = view_recording(&in[i], o, &rec, err)) != 0)
			goto out;
		json_array_append_new(json_object_get(data, "recordings"), rec);
	}
	rc = view_page(data, o, html, len, err);
out:
	json_decref(data);
	return rc;
}

int ergon_view_write(const struct ergon_view_input *in, size_t n,
		     const struct ergon_view_options *o, const char *out, unsigned flags,
		     struct ergon_err *err)
{
	char *html = NULL;
	size_t len = 0;
	int rc = ergon_file_check_writable(out, flags, err);
	if (rc)
		return rc;
	if ((rc = ergon_view_html(in, n, o, &html, &len, err)) != 0)
		return rc;
	rc = ergon_file_write_atomic(out, html, len, flags, err);
	free(html);
	return rc;
}

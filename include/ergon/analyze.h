/* Power analysis outputs and the `ergon analyze` pipeline.
 *
 * ergon_power_section turns a gated-engine result and the firmware facts
 * into the `power` section of summary.json (heliaPROFILER-compatible
 * names); the renderers make detailed/power_summary.csv and the terminal
 * Power table from that section. ergon_analyze_run wires a recording (JLS,
 * statistics CSV, raw CSV) and a facts file through them and writes the
 * artifacts; `ergon profile` can call ergon_power_section directly with an
 * in-memory stream's result.
 */
#ifndef ERGON_ANALYZE_H
#define ERGON_ANALYZE_H

#include "ergon/error.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"

#include <jansson.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Build the power section. res may be NULL (internal runs without a
 * recording); f may be NULL (no facts); warnings (may be NULL) is
 * the reader's typed list (ergon/issue_list.h), each entry added as an
 * issue with its code and message (the list stays the caller's). The section's
 * "issues" array holds every issue; *out is a new reference. */
ERGON_API int ergon_power_section(const struct ergon_gated_result *res, double min_window_s,
				  const struct ergon_power_facts *f,
				  const struct ergon_issue_list *warnings, json_t **out,
				  struct ergon_err *err);
/* The uncertainty budgets of the section's figures (docs/UNCERTAINTY.md). */
struct ergon_power_budget_opts {
	/* The instrument's rating, as the gated engine put packets in its
	 * ranges by (NULL: the rated terms are unknown). */
	const struct ergon_rating *rating;
	double max_uncertainty_pct; /* > 0: power.uncertainty_above_limit beyond it */
	/* On-device monitor (internal runs): one ENERGY and one CHARGE step
	 * and its conversion cycle, s (NaN: unknown). */
	double energy_lsb_j, charge_lsb_c, cycle_s;
};

/* ergon_power_section with budgets: bo NULL makes exactly the section of
 * ergon_power_section; otherwise it adds "uncertainty" (a budget for
 * energy_j, charge_c, avg_power_w and, when published,
 * energy_per_inference_j; the rating; the limit) and the gate's issues. */
ERGON_API int ergon_power_section_ex(const struct ergon_gated_result *res, double min_window_s,
				     const struct ergon_power_facts *f,
				     const struct ergon_issue_list *warnings,
				     const struct ergon_power_budget_opts *bo, json_t **out,
				     struct ergon_err *err);
/* The power section's headline figures, typed: what the Power table shows
 * (ergon analyze, ergon profile). NaN where the section has none: a
 * withheld per-inference figure (per_inference_omitted), no gated window,
 * a figure the instrument cannot give. */
struct ergon_power_summary {
	int present;		   /* a power section was made (0: none, or refused) */
	int integrity;		   /* enum ergon_integrity of its checks */
	int per_inference_omitted; /* the per-inference figures are withheld */
	double energy_per_inference_j;
	double energy_per_inference_u_j; /* its stated uncertainty; NaN when none */
	double inferences_per_joule;
	uint64_t inference_count; /* 0: unknown */
	/* Over the gated window(s). */
	unsigned gated_window_count;
	double gated_duration_s;
	double energy_j, charge_c;
	double avg_power_w, avg_current_a, peak_current_a;
	/* The whole capture. */
	double capture_duration_s;
};
/* The summary of a power section (a summary.json's "power", as
 * ergon_power_section made it or an artifact loaded with
 * ergon_artifact_load holds it). A section that is not an object, or one
 * refused, gives present 0. */
ERGON_API void ergon_power_summary_read(const json_t *power, struct ergon_power_summary *out);

/* The name of a power terminal record's (final_phase, error_code): the
 * per-phase codes of target/include/ergon/wire.h (ina228_init 10
 * "shunt_cal_write", 11 "shunt_cal_readback"), else the runtime status
 * name of -code ("ok" for 0, "unknown" for a code the runtime never
 * writes). Static string. */
ERGON_API const char *ergon_power_error_name(const char *final_phase, int64_t error_code);
/* The power section's window_clock_ceiling object from the checks' typed
 * ceiling (new reference; null when it cannot be made). */
ERGON_API json_t *ergon_power_ceiling_json(const struct ergon_power_ceiling *c);
/* detailed/power_summary.csv: "scope,metric,value", a block per gated
 * window (window_1, ...) and a whole_capture_window block. *out malloc'd. */
ERGON_API int ergon_power_csv_render(const json_t *power, char **out, size_t *len,
				     struct ergon_err *err);
/* The terminal Power table: box drawing when utf8, else plain ASCII. */
ERGON_API int ergon_power_table_render(const json_t *power, int utf8, char **out,
				       struct ergon_err *err);

/* Facts from JSON: {"clean_infer_count", "clean_infer_avg_us",
 * "probe_kind": "infer"|"busy_loop", "zero_time_inference", "internal",
 * "host_envelope_s", "terminal": {...}, "measurement": {...}} (the
 * terminal/measurement objects use the power terminal record's lower-case
 * names; docs/POWER_CHECKS.md). */
ERGON_API int ergon_power_facts_from_json(const json_t *j, const char *name,
					  struct ergon_power_facts *f, struct ergon_err *err);
/* Load a facts file (JSON form; HPX logs once the HPX parser is merged). */
ERGON_API int ergon_power_facts_load(const char *path, struct ergon_power_facts *f,
				     struct ergon_err *err);

/* In-memory analysis for pipelines that hold the stream themselves (`ergon
 * profile`): a new engine with cfg, feed(ctx, engine, err) pushes packets or
 * raw blocks into it (ergon_gated_push_*), then the power section is built
 * as ergon_power_section would. *out is a new reference. */
/* A sink (ergon/stream.h) that pushes what a reader delivers into g (not
 * owned): the wiring from the recording readers to the gated engine. */
ERGON_API void ergon_power_sink_gated(struct ergon_gated *g, struct ergon_power_sink *out);

typedef int (*ergon_power_feed_fn)(void *ctx, struct ergon_gated *g, struct ergon_err *err);
ERGON_API int ergon_power_analyze_stream(const struct ergon_gated_config *cfg,
					 ergon_power_feed_fn feed, void *ctx,
					 const struct ergon_power_facts *f, json_t **out,
					 struct ergon_err *err);

struct ergon_analyze_options {
	const char *jls_path; /* one of jls_path, stats_path, raw_path ... */
	const char *stats_path;
	const char *raw_path;
	const char *markers_path; /* software gate (optional) */
	const char *facts_path;	  /* firmware facts (optional) */
	const char *out_dir;	  /* summary.json and detailed/power_summary.csv */
	unsigned sync_input_index;
	double stats_rate_hz;		  /* 0 = 1000 */
	double min_window_s;		  /* 0 = 1.0 */
	const char *recording_provenance; /* "measured"/"synthetic"/NULL unknown */
	int force;			  /* replace existing outputs */
	/* The uncertainty budgets (docs/UNCERTAINTY.md). The instrument's
	 * rating: --meter MODEL (ergon_rating_for_model; shunt_ohms for the
	 * INA parts, 0 = unknown), else the recording's ergon note, else its
	 * source model (a Joulescope's JLS), else the on-board monitor of an
	 * internal record; rating_kv ("KEY=VALUE", NULL-terminated; may be
	 * NULL) overrides figures. max_uncertainty_pct > 0 is the gate. */
	const char *meter;
	double shunt_ohms;
	const char *const *rating_kv;
	double max_uncertainty_pct;
	/* Energy per layer (docs/METHOD.md, "Energy per layer"): the marker
	 * line's digital input (when has_marker_input; needs jls_path) and the profile
	 * summary whose profile.layers[] the firmware's marker plan came from
	 * (layers_path; the plan is made again at the recording's rate).
	 * Adds power.layers[], power.layer_energy and
	 * detailed/layer_energy.csv. */
	int has_marker_input;
	unsigned marker_input_index;
	const char *layers_path;
};

/* Analyse and write summary.json + detailed/power_summary.csv. *power
 * (may be NULL) gets the power section's figures, typed; *table (may be
 * NULL) the Power table (box drawing when utf8; caller frees); *summary
 * (may be NULL) the document as written (caller decrefs). An invalid
 * measurement is not an error: the artifact says so. Errors are usage or
 * I/O. */
ERGON_API int ergon_analyze_run(const struct ergon_analyze_options *o, int utf8, char **table,
				struct ergon_power_summary *power, json_t **summary,
				struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

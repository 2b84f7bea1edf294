/* From a parsed HPX stream to ergon's outputs: the `profile` body of the
 * artifact (summary.json), profile_results.csv and per-group CSVs.
 *
 * Provenance: a parsed log is an analysis of a recording, so the envelope's
 * provenance.kind is "replayed" and provenance.recording names the log file
 * (path, bytes, sha256) and the recording's own provenance, which ergon cannot
 * know from the bytes: "unknown" unless the caller states it (the CLI's
 * --recording measured|synthetic). See docs/PROTOCOL.md. */
#ifndef ERGON_HPX_REPORT_H
#define ERGON_HPX_REPORT_H

#include "ergon/error.h"
#include "ergon/mtime.h"
#include "ergon/hpx.h"

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_HPX_TOP_LAYERS 5

/* The PMU result in the reference parser's layout:
 *   {"meta": {...}, "presets": {name: {name, header, [iterations], layers}},
 *    "layers": [Layer], "overflow_detected": bool, "groups": {group: [Layer]},
 *    "ergon": {"complete", "parse_errors", "lines", "lines_too_long",
 *              "heartbeats", "layer_count", "issues": [...],
 *              "capabilities": {pmu, cycle_counter}}}
 * with Layer = {id, op, counters{name: number}, cycles: number|null, overflow}.
 * The one place this JSON is made. *out is owned by the caller. */
ERGON_API int ergon_pmu_result_to_json(const struct ergon_pmu_result *r, json_t **out,
				       struct ergon_err *err);
/* {"terminal": {...}, "measurement": {...} | null} with the reference field
 * names (version, status, requested_count, completed_count, elapsed_us,
 * final_phase, error_code, gate_asserted, gate_lowered; source, scope,
 * energy_nj, duration_us, inference_count, overflow, charge_nc,
 * bus_voltage_uv, sample_count, calibration_id; absent optional fields are
 * null). Caller owns the result; NULL on out of memory. */
ERGON_API json_t *ergon_hpx_terminal_to_json(const struct ergon_hpx_terminal *t);
/* ergon_hpx_parser_result + ergon_pmu_result_to_json. Call after
 * ergon_hpx_parser_finish. *out is owned by the caller (json_decref). */
ERGON_API int ergon_hpx_parser_to_json(struct ergon_hpx_parser *p, int aggregation, unsigned flags,
				       json_t **out, struct ergon_err *err);

/* The profile body from a parser result (ergon_hpx_parser_to_json):
 *   {aggregation, complete, layers, total_cycles, top_layers[{id, op, cycles,
 *    pct}], overflow_detected, memory{model_size, arena_size,
 *    allocated_arena}, presets, groups, meta, validity, issues}
 * result is borrowed. *out is owned by the caller. */
ERGON_API int ergon_hpx_profile_body(const json_t *result, int aggregation, json_t **out,
				     struct ergon_err *err);

/* A CSV of layers [{id, op, counters, overflow}]: header `index,op,<every
 * counter in first-seen order>,overflow`; a counter a layer lacks is an empty
 * cell, never 0. *csv is malloc'd (caller frees). */
ERGON_API int ergon_hpx_layers_csv(const json_t *layers, char **csv, size_t *len,
				   struct ergon_err *err);

struct ergon_hpx_report_opts {
	const char *out_dir;   /* created if missing */
	const char *log_path;  /* the recording, named in provenance */
	const char *recording; /* "unknown" (default), "measured" or "synthetic" */
	int aggregation;       /* ERGON_HPX_AGG_* */
	unsigned write_flags;  /* ERGON_WRITE_FORCE to replace earlier outputs */
	json_t *extra_issues;  /* borrowed, may be NULL: capture issues to add */
	json_t *capture;       /* borrowed, may be NULL: capture details for the body */
	/* The log's sha256 (64 hex digits) and size when the caller digested
	 * it while reading it (NULL: the log is read again to digest it). */
	const char *log_sha256;
	unsigned long long log_bytes;
	/* When the counters were measured (ergon capture: the capture's span);
	 * NULL: a log ergon did not see being written (ergon parse), whose
	 * measurement time is then stated as not known. */
	const struct ergon_mtime *measured;
};

/* Write <out_dir>/summary.json (envelope + profile body), profile_results.csv
 * and profile_results_<group>.csv, each atomically. If summary_out is not
 * NULL it receives the sealed artifact (caller owns). */
ERGON_API int ergon_hpx_report_write(const json_t *result, const struct ergon_hpx_report_opts *o,
				     json_t **summary_out, struct ergon_err *err);

/* `ergon parse`: read log (a path, or "-" for standard input) through the
 * parser in bounded chunks (memory is bounded by the parser's caps, not the
 * file), aggregate with o->aggregation and write o's outputs as
 * ergon_hpx_report_write does. *summary (may be NULL) receives the sealed
 * artifact (caller owns). */
ERGON_API int ergon_hpx_parse_run(const char *log, const struct ergon_hpx_report_opts *o,
				  json_t **summary, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

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
#include "ergon/hpx.h"
#include "ergon/issue_list.h"
#include "ergon/mtime.h"
#include "ergon/reserve.h"
#include "ergon/verdict.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

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

/* How an `ergon capture` stream ended (summary.json profile.capture.end). */
enum ergon_hpx_capture_end {
	ERGON_HPX_END_NONE = 0,		     /* no capture (ergon parse), or not stated */
	ERGON_HPX_END_SENTINEL = 1,	     /* the end sentinel arrived: complete */
	ERGON_HPX_END_OF_SOURCE = 2,	     /* the file, stdin or socket ended first */
	ERGON_HPX_END_TIMEOUT = 3,	     /* the overall bound (--timeout) */
	ERGON_HPX_END_HEARTBEAT_TIMEOUT = 4, /* no line within the heartbeat bound */
	ERGON_HPX_END_INTERRUPTED = 5,	     /* the caller's cancel flag */
};

/* One of the top layers by cycles (summary.json profile.top_layers[]). */
struct ergon_hpx_top_layer {
	struct ergon_pmu_value id, op; /* as the layer's (INT or TEXT; NONE: absent) */
	double cycles;
	double pct; /* of total_cycles, % */
};

/* What `ergon parse` and `ergon capture` give their caller, typed: read
 * from summary.json as sealed and written (ergon_hpx_run_result_read), so
 * the struct and the file cannot disagree. Free with
 * ergon_hpx_run_result_cleanup. */
struct ergon_hpx_run_result {
	int provenance;		      /* enum ergon_provenance: replayed (an analysis of a log) */
	int recording;		      /* the log's own provenance: ERGON_PROV_*, 0 unknown */
	int integrity;		      /* enum ergon_integrity of the artifact */
	int validity;		      /* enum ergon_integrity of the profile's own issues */
	struct ergon_verdict verdict; /* ergon_verdict_hpx of the document */
	int aggregation;	      /* enum ergon_hpx_aggregation; 0 when not stated */
	bool complete;		      /* the log reached `--- HPX_END ---` */
	bool overflow_detected;	      /* a counter wrapped in a kept iteration */
	/* Every layer in order: id, op, the aggregated counters (first-seen
	 * column order), cycles (has_cycles) and the overflow flag. Owned by
	 * the result. */
	struct ergon_pmu_table layers;
	double total_cycles; /* over the layers with a cycle count; NaN: none has one */
	size_t n_top;	     /* the top layers by cycles, most first */
	struct ergon_hpx_top_layer top[ERGON_HPX_TOP_LAYERS];
	uint64_t lines, parse_errors, heartbeats; /* what the parser saw */
	/* The profile's issues in order ({code, severity, message, context});
	 * owned by the result. */
	struct ergon_issue_list issues;
	/* The log named in provenance.recording: its path ("-": standard
	 * input), size and SHA-256 ("" and 0 when not digested: stdin). */
	char log_path[ERGON_OUT_PATH_MAX];
	unsigned long long log_bytes;
	char log_sha256[65];
	/* ergon capture only (capture_end NONE otherwise): how the stream
	 * ended, the bytes and seconds it ran. */
	int capture_end; /* enum ergon_hpx_capture_end */
	unsigned long long capture_bytes;
	double capture_elapsed_s;
	char report_id[72];			 /* "sha256:..." of summary.json */
	char summary_path[ERGON_OUT_PATH_MAX]; /* OUT/summary.json ("" when read from a
						* document loaded elsewhere) */
	void *priv; /* the storage the layers point into */
};

/* The typed result of a summary.json that ergon parse or ergon capture
 * wrote (or one loaded with ergon_artifact_load). Returns 0, ERGON_EPARSE
 * when summary is not an HPX profile (no "profile" object) or an issue's
 * code is unknown, ERGON_ENOMEM; *res is filled as far as it could be
 * either way and must be cleaned up. summary is borrowed; nothing in *res
 * points into it. */
ERGON_API int ergon_hpx_run_result_read(const json_t *summary, struct ergon_hpx_run_result *res,
					struct ergon_err *err);
/* Free what the result owns; the result is empty afterwards (a second
 * cleanup is harmless). */
ERGON_API void ergon_hpx_run_result_cleanup(struct ergon_hpx_run_result *res);

/* `ergon parse`: read log (a path, or "-" for standard input) through the
 * parser in bounded chunks (memory is bounded by the parser's caps, not the
 * file), aggregate with o->aggregation and write o's outputs as
 * ergon_hpx_report_write does. *res (may be NULL) receives the result,
 * typed (clean it up, also after a failure); *summary (may be NULL) the
 * sealed artifact as written (caller owns). */
ERGON_API int ergon_hpx_parse_run(const char *log, const struct ergon_hpx_report_opts *o,
				  struct ergon_hpx_run_result *res, json_t **summary,
				  struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

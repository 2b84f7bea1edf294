/* The HPX line protocol on the host: one incremental parser for the PMU
 * profile stream and the power terminal record.
 *
 * The parser is an engine: it never opens files or devices. Feed it bytes in
 * chunks of any size (a line may straddle chunks); it splits lines on '\n',
 * tolerates CR, drops lines longer than a limit (counted, resynchronised at
 * the next newline) and keeps memory bounded by explicit caps on layers,
 * iterations, columns and presets. The tokens come from the wire registry
 * target/include/ergon/wire.h, shared with the target emitter.
 *
 * Semantics match heliaPROFILER's reference parser on valid input (see
 * docs/PROTOCOL.md for where ergon is stricter, and the issue code it
 * reports then).
 *
 * Typical use:
 *     struct ergon_hpx_parser *p = NULL;
 *     ergon_hpx_parser_new(NULL, &p, &err);
 *     while (read chunk) ergon_hpx_parser_feed(p, buf, n, &err);
 *     ergon_hpx_parser_finish(p, &err);
 *     ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &result, &err);
 *     ergon_hpx_parser_free(p);
 *     ... result->layers.layers[i].counters ...
 *     ergon_pmu_result_free(result);
 * The pipelines make the JSON from the result (ergon/hpx_report.h).
 */
#ifndef ERGON_HPX_H
#define ERGON_HPX_H

#include "ergon/error.h"
#include "ergon/issue_list.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Answers of ergon_hpx_parser_feed besides negative ERGON_E* codes. */
enum ergon_hpx_state {
	ERGON_HPX_NEED_MORE = 0, /* no end sentinel yet: feed more bytes */
	ERGON_HPX_DONE = 1,	 /* `--- HPX_END ---` seen: the profile is complete */
};

/* Per-layer aggregation across iterations. */
enum ergon_hpx_aggregation {
	ERGON_HPX_AGG_MEDIAN = 1,  /* statistics.median: middle, or mean of the two middle */
	ERGON_HPX_AGG_MEAN = 2,	   /* left-to-right sum / n */
	ERGON_HPX_AGG_TRIMMED = 3, /* drop one min and one max, then mean (n >= 3, else mean) */
};

/* "median" / "mean" / "trimmed" -> enum; 0 if unknown. */
ERGON_API int ergon_hpx_aggregation_parse(const char *name);
ERGON_API const char *ergon_hpx_aggregation_name(int aggregation);

/* Explicit caps; 0 in any field means its default. Exceeding a cap stops the
 * parse with ERGON_ETOOBIG and a message naming the line and the cap. */
struct ergon_hpx_limits {
	size_t line_max_bytes; /* longer lines are dropped and counted (default 65536) */
	size_t max_presets;    /* default 64 */
	size_t max_iterations; /* per preset, default 100000 */
	size_t max_layers;     /* rows per iteration, default 65536 */
	size_t max_columns;    /* CSV fields per header, default 256 */
	size_t max_cells;      /* counter cells kept over the whole stream, default 2^26 */
	size_t max_meta_keys;  /* distinct HPX_<KEY> metadata keys, default 1024 */
	size_t max_text_bytes; /* Layer/Op text kept (shared across iterations), default 256 MiB */
};

struct ergon_hpx_parser;

/* A new parser. limits may be NULL for the defaults. On success *out is owned
 * by the caller (ergon_hpx_parser_free). */
ERGON_API int ergon_hpx_parser_new(const struct ergon_hpx_limits *limits,
				   struct ergon_hpx_parser **out, struct ergon_err *err);
/* Free a parser; NULL is a no-op. */
ERGON_API void ergon_hpx_parser_free(struct ergon_hpx_parser *p);

/* Early aggregation: aggregate each preset with `method` (enum
 * ergon_hpx_aggregation) as soon as it has ended (at the next preset
 * marker, at END, or at ergon_hpx_parser_finish) and release its samples,
 * so the parser holds one preset's samples at a time instead of the whole
 * stream's. With `background`, a second thread (owned by the parser,
 * joined by ergon_hpx_parser_free) aggregates an ended preset while the
 * parse of the next one goes on; without it, or when the thread cannot be
 * started, the aggregation runs inside the feed call that ends the preset.
 * The result is the same as without early aggregation, but it must then
 * be asked for once, with the same method and without
 * ERGON_HPX_JSON_ITERATIONS (else ERGON_EUSAGE). Call before the first
 * feed; ERGON_EUSAGE for an unknown method or a second call. */
ERGON_API int ergon_hpx_parser_aggregate_early(struct ergon_hpx_parser *p, int method,
					       bool background, struct ergon_err *err);

/* A store of bytes the caller provides for the samples of early
 * aggregation (`ergon parse` gives an unlinked temporary file in its
 * output folder). The parser writes each run of up to 64 ended iterations
 * there (transposed: layer, then counter, then iteration) and reads them
 * back, one block of layers at a time, when the preset is aggregated, so
 * its memory no longer grows with the iterations of a preset. write
 * stores len bytes at byte off; read fills buf with exactly len bytes from
 * off (a short read is an error); both return 0 or an ERGON_E* with err
 * set, and both may be called from the parser's worker thread while the
 * parser's thread writes other ranges (never the same range). A range is
 * written again once the preset it held is aggregated, so the store stays
 * about two presets' samples large. release (may be NULL) says that
 * [off, off + len) is no longer needed (a file may punch a hole): for
 * every range at the latest when the parser is freed. */
struct ergon_hpx_spill {
	void *ctx;
	int (*write)(void *ctx, uint64_t off, const void *buf, size_t len, struct ergon_err *err);
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len, struct ergon_err *err);
	void (*release)(void *ctx, uint64_t off, uint64_t len);
};

/* Keep early aggregation's samples in `spill` (copied; its ctx must
 * outlive the parser) instead of memory. Call after
 * ergon_hpx_parser_aggregate_early and before the first feed; ERGON_EUSAGE
 * otherwise or when write or read is NULL. The result is the same as
 * without it; a failed write or read is the result's error (its message
 * names the store's error). */
ERGON_API int ergon_hpx_parser_spill(struct ergon_hpx_parser *p,
				     const struct ergon_hpx_spill *spill, struct ergon_err *err);

/* Feed len bytes. Returns ERGON_HPX_NEED_MORE, ERGON_HPX_DONE once the PMU
 * END sentinel has been seen (later PMU lines are ignored; a power terminal
 * record is still collected), or a negative ERGON_E* code (a cap was
 * exceeded, out of memory); after an error the parser refuses further
 * input. The terminal record's end is visible in ergon_hpx_parser_stats. */
ERGON_API int ergon_hpx_parser_feed(struct ergon_hpx_parser *p, const void *data, size_t len,
				    struct ergon_err *err);
/* End of input: a last line without '\n' is processed. Idempotent. Returns
 * ERGON_HPX_DONE or ERGON_HPX_NEED_MORE (stream ended without END: the data
 * is kept, the result is marked incomplete), or a negative ERGON_E*. */
ERGON_API int ergon_hpx_parser_finish(struct ergon_hpx_parser *p, struct ergon_err *err);

/* Counters of what the parser saw (for progress and diagnostics). */
struct ergon_hpx_stats {
	uint64_t bytes;
	uint64_t lines;		 /* '\n'-terminated lines plus a final unterminated one */
	uint64_t lines_too_long; /* dropped for exceeding line_max_bytes */
	uint64_t heartbeats;
	uint64_t parse_errors; /* wrong field counts and non-numeric counter cells */
	bool started;	       /* `--- HPX_START ---` seen */
	bool ended;	       /* `--- HPX_END ---` seen */
	bool terminal_started; /* `--- HPX_POWER_TERMINAL_START ---` seen */
	bool terminal_ended;   /* `--- HPX_POWER_TERMINAL_END ---` seen */
};
ERGON_API void ergon_hpx_parser_stats(const struct ergon_hpx_parser *p,
				      struct ergon_hpx_stats *out);

/* Options for ergon_hpx_parser_result (and the pipelines'
 * ergon_hpx_parser_to_json, ergon/hpx_report.h). */
enum ergon_hpx_json_flags {
	ERGON_HPX_JSON_ITERATIONS = 1 << 0, /* keep every iteration's rows per preset */
};

/* ---- The PMU result (the method's PmuResult) ---------------------------
 * What the engine makes of a stream: metadata, presets with their
 * aggregated layers (and optionally every iteration's rows), the layers of
 * all presets merged by position, per-group merges, the overflow flag,
 * what the parser saw, and the issues (pmu.*). Every pointer in it points
 * into memory the result owns: it stays valid until ergon_pmu_result_free,
 * and the parser may be freed first. Text is valid UTF-8 (invalid bytes
 * and NUL became U+FFFD, as the reference's decode(errors='replace')). */

/* A Layer/Op cell or a metadata value as the reference reads it: an
 * integer when int() accepts it, else text. */
enum ergon_pmu_value_kind {
	ERGON_PMU_NONE = 0, /* absent (null) */
	ERGON_PMU_INT = 1,  /* i */
	ERGON_PMU_REAL = 2, /* d: an integer too large for int64 */
	ERGON_PMU_TEXT = 3, /* text, len bytes (NUL-terminated) */
	ERGON_PMU_BOOL = 4, /* i: 0 or 1 */
};

struct ergon_pmu_value {
	int kind; /* enum ergon_pmu_value_kind */
	int64_t i;
	double d;
	const char *text;
	size_t len;
};

/* One aggregated counter of a layer. The name is the CSV column's, as
 * bytes (name_len; NUL-terminated; not repaired: names come from the
 * header line). */
struct ergon_pmu_counter {
	const char *name;
	size_t name_len;
	double value;
};

struct ergon_pmu_layer {
	struct ergon_pmu_value id; /* Layer cell (default: the row index, or 0 in iterations) */
	struct ergon_pmu_value op; /* Op (else tag) cell (default: text "unknown") */
	struct ergon_pmu_counter *counters; /* first-seen column order */
	size_t ncounters;
	bool has_cycles; /* an ARM_PMU_CPU_CYCLES counter (cycles) */
	double cycles;
	bool overflow;
};

struct ergon_pmu_table {
	struct ergon_pmu_layer *layers;
	size_t n;
};

struct ergon_pmu_preset {
	const char *name;
	const char **columns; /* the final CSV header's column names */
	size_t ncolumns;
	struct ergon_pmu_table layers;	    /* aggregated across iterations */
	struct ergon_pmu_table *iterations; /* with ERGON_HPX_JSON_ITERATIONS, else NULL */
	size_t niterations;
};

/* `<group>_<n>` presets merged (a name of another form is its own group);
 * presets whose name starts with '_' are in no group. */
struct ergon_pmu_group {
	const char *name;
	struct ergon_pmu_table layers;
};

struct ergon_pmu_meta_item {
	const char *key; /* lower case */
	struct ergon_pmu_value value;
};

#define ERGON_PMU_PSRAM_FIELDS 8

struct ergon_pmu_result {
	int aggregation; /* enum ergon_hpx_aggregation */
	/* The metadata the reference reports, in its order (model_size,
	 * arena_size, ..., clean_drain_wait_us); NONE when absent. */
	struct ergon_pmu_meta_item *meta;
	size_t nmeta;
	bool has_psram; /* HPX_PSRAM_CLOCK_HZ seen: psram[] in PsramInfo order */
	struct ergon_pmu_meta_item psram[ERGON_PMU_PSRAM_FIELDS];
	struct ergon_pmu_value *preset_list; /* HPX_PRESETS, split on ',' */
	size_t npreset_list;
	struct ergon_pmu_preset *presets; /* in order of first appearance */
	size_t npresets;
	struct ergon_pmu_table layers;	/* merged by layer position */
	struct ergon_pmu_group *groups; /* in order of first appearance */
	size_t ngroups;
	bool overflow_detected; /* any row of any kept iteration */
	/* What the parser saw. */
	bool complete; /* `--- HPX_END ---` */
	uint64_t parse_errors, lines, lines_too_long, heartbeats;
	/* HPX_PMU and HPX_CYCLE_COUNTER as declared (NONE when not). */
	struct ergon_pmu_value cap_pmu, cap_cycle_counter;
	struct ergon_issue_list issues; /* pmu.* with line numbers */
	void *priv;			/* the storage all of the above points into */
};

/* The result of a finished parse (call after ergon_hpx_parser_finish).
 * flags: ERGON_HPX_JSON_ITERATIONS. *out is owned by the caller
 * (ergon_pmu_result_free). ERGON_EUSAGE for an unknown aggregation,
 * ERGON_ENOMEM. */
ERGON_API int ergon_hpx_parser_result(struct ergon_hpx_parser *p, int aggregation, unsigned flags,
				      struct ergon_pmu_result **out, struct ergon_err *err);
/* Free a result; NULL is a no-op. */
ERGON_API void ergon_pmu_result_free(struct ergon_pmu_result *r);

/* --- the power terminal record ------------------------------------------
 * `--- HPX_POWER_TERMINAL_START ---`, HPX_POWER_<KEY>=<value> lines,
 * `--- HPX_POWER_TERMINAL_END ---`: the power firmware's end-of-run status
 * and its optional on-device measurement (all or none). */

#define ERGON_HPX_TEXT_MAX 128

struct ergon_hpx_power_measurement {
	char source[ERGON_HPX_TEXT_MAX]; /* e.g. "ina228" */
	char scope[ERGON_HPX_TEXT_MAX];	 /* only "fixed_n_inference" is accepted */
	int64_t energy_nj;
	int64_t duration_us;	 /* equals the terminal's elapsed_us */
	int64_t inference_count; /* equals the terminal's completed_count */
	bool overflow;
	bool has_charge_nc;
	int64_t charge_nc;
	bool has_charge_clamped; /* CHARGE read negative and was clamped to 0 */
	bool charge_clamped;
	bool has_ina228_diag; /* DIAG_ALRT as read after the window */
	int64_t ina228_diag;
	bool has_bus_voltage_uv;
	int64_t bus_voltage_uv;
	bool has_sample_count;
	int64_t sample_count;
	bool has_calibration_id;
	char calibration_id[ERGON_HPX_TEXT_MAX];
};

struct ergon_hpx_terminal {
	int64_t version;		 /* 1 */
	char status[ERGON_HPX_TEXT_MAX]; /* "ok" or "error" */
	int64_t requested_count;
	int64_t completed_count; /* <= requested_count */
	int64_t elapsed_us;
	char final_phase[ERGON_HPX_TEXT_MAX]; /* not empty */
	int64_t error_code;		      /* 0 iff status is "ok" */
	bool gate_asserted;
	bool gate_lowered;
	bool has_source; /* HPX_POWER_MEASUREMENT_SOURCE (every record of a current emitter) */
	char source[ERGON_HPX_TEXT_MAX];
	bool has_measurement;
	struct ergon_hpx_power_measurement measurement;
};

/* The terminal record the parser has seen so far, validated. Returns 0 and
 * fills *out, or ERGON_ENOENT (no record), ERGON_EPARSE (incomplete, or a
 * malformed line, a duplicate or unknown key, a failed consistency check),
 * with the first problem and its line number in err. */
ERGON_API int ergon_hpx_parser_terminal(const struct ergon_hpx_parser *p,
					struct ergon_hpx_terminal *out, struct ergon_err *err);

/* One-shot: parse a whole buffer holding a terminal record (lines outside
 * the record, e.g. diagnostics, are ignored). Same returns as above. */
ERGON_API int ergon_hpx_terminal_parse(const char *data, size_t len, struct ergon_hpx_terminal *out,
				       struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

/* CSV recordings for the gated engine (docs/POWER_CHECKS.md has the forms).
 *
 * Statistics packets (`ergon analyze --stats FILE.csv`): a header naming
 * columns, any order, of
 *   t_start_s,t_end_s,i_avg_a            (required)
 *   i_std_a,i_min_a,i_max_a,v_avg_v,v_std_v,v_min_v,v_max_v,
 *   p_avg_w,p_std_w,p_min_w,p_max_w,charge_c,energy_j,sample_id,digital
 * (the field set of libjsdrv's statistics payload; charge_c/energy_j are the
 * instrument's accumulators at t_end_s, digital the polled inputs, bit i =
 * INPUTi). Raw samples (`--raw FILE.csv`): t_s,current_a,voltage_v and
 * optional power_w and digital, uniformly sampled.
 * Lines starting with '#' and blank lines are skipped; CRLF is accepted.
 *
 * Parsers are incremental (feed any split of the bytes, then end) and hand
 * what they read to a sink (ergon/stream.h; the pipeline's
 * ergon_power_sink_gated feeds the gated engine), so the fuzzer drives them
 * with bytes.
 */
#ifndef ERGON_POWER_CSV_H
#define ERGON_POWER_CSV_H

#include "ergon/error.h"
#include "ergon/issue_list.h"
#include "ergon/stream.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_POWER_CSV_LINE_MAX 4096u

/* Limits of the CSV readers (docs/POWER_CHECKS.md; unit/test_pins_docs
 * checks each against the doc):
 * - a finite value beyond the widest instrument these columns come from
 *   (Joulescope JS220: 10 A, 15 V full scale, datasheet) with 25 %
 *   headroom for over-range readings is a corrupt file, not a reading;
 * - Joulescope sample ids count samples at 2 MHz, and an id more than 1.5
 *   packet spans past the previous one is a drop (power.packets_dropped);
 * - a raw sample's power_w must be current_a x voltage_v within 1 %. */
#define ERGON_CSV_FULL_SCALE_A 10.0
#define ERGON_CSV_FULL_SCALE_V 15.0
#define ERGON_CSV_HEADROOM 1.25
#define ERGON_CSV_SAMPLE_ID_HZ 2e6
#define ERGON_CSV_ID_JUMP 1.5
#define ERGON_CSV_POWER_REL 0.01

enum ergon_power_csv_kind {
	ERGON_POWER_CSV_STATS = 1,
	ERGON_POWER_CSV_RAW = 2,
};

struct ergon_power_csv;

/* A parser delivering to sink (copied; sink->ctx not owned): packets for
 * ERGON_POWER_CSV_STATS, raw_begin and raw for ERGON_POWER_CSV_RAW
 * (ERGON_EUSAGE when missing). name labels messages ("run.csv"). */
ERGON_API int ergon_power_csv_new(int kind, const struct ergon_power_sink *sink,
				  unsigned sync_input_index, const char *name,
				  struct ergon_power_csv **out, struct ergon_err *err);
ERGON_API void ergon_power_csv_free(struct ergon_power_csv *p);
/* Parse bytes; errors name the line and column and the fix. */
ERGON_API int ergon_power_csv_feed(struct ergon_power_csv *p, const char *buf, size_t len,
				   struct ergon_err *err);
/* The last line (without newline) and any buffered samples. */
ERGON_API int ergon_power_csv_end(struct ergon_power_csv *p, struct ergon_err *err);
/* 1 when the error that stopped the parser was time not moving forward
 * (t_start_s before the previous t_end_s, a reversed span, raw t_s not
 * increasing): the caller reports power.time_backwards. */
ERGON_API int ergon_power_csv_time_fault(const struct ergon_power_csv *p);
/* The issue code of the error that stopped the parser: power.time_backwards
 * (above), power.values_inconsistent (a row's own values contradict each
 * other: a maximum below the mean, a raw power that is not current x
 * voltage), else power.recording_unusable. */
ERGON_API const char *ergon_power_csv_fault_code(const struct ergon_power_csv *p);
/* Warnings about what was read, appended to the typed list `out` (the
 * caller owns it; ergon/issue_list.h): power.packets_dropped when
 * successive sample_id values jump by more than the previous packet's span
 * x 2 MHz (Joulescope sample ids), naming the first line, and when
 * sample_id repeats or goes backwards. p NULL adds nothing. 0 or
 * ERGON_ENOMEM (out->oom is set). */
ERGON_API int ergon_power_csv_warnings(const struct ergon_power_csv *p,
				       struct ergon_issue_list *out);

/* Parse a marker file: lines "start_s,end_s" (optional header line naming
 * them). *out is malloc'd (caller frees); at most 1 Mi markers. */
ERGON_API int ergon_gate_markers_parse(const char *buf, size_t len, const char *name,
				       struct ergon_gate_marker **out, size_t *count,
				       struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

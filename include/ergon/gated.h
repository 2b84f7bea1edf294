/* Gated-window power analysis: a stream of statistics packets or raw
 * samples and a gate in, per-window and whole-capture figures out, and the
 * checks that decide whether energy per inference may be published.
 *
 * The engine is pure: it never opens files. Drivers and pipelines push
 * packets or raw sample blocks into it (docs/internals/gated.md).
 */
#ifndef ERGON_GATED_H
#define ERGON_GATED_H

#include "ergon/budget.h"
#include "ergon/error.h"
#include "ergon/issue_list.h"
#include "ergon/rating.h"
#include "ergon/stream.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct ergon_stats_packet and struct ergon_gate_marker, what recording
 * readers and instruments produce, are in ergon/stream.h. */

struct ergon_gated_config {
	double stats_rate_hz;	   /* packets per second for raw input; 0 = 1000 */
	/* Packet input: the packets must span 1 / stats_rate_hz (1 % + 1 us):
	 * a rate the user gave that contradicts the packets is refused
	 * (ERGON_EUSAGE naming the packet) rather than used. */
	int stats_rate_strict;
	double min_window_s;	   /* gates shorter than this are glitches; 0 = 1.0 */
	unsigned sync_input_index; /* digital input carrying the gate (INPUT0 = 0) */
	/* Software gate: when marker_count > 0 the markers are the gate and the
	 * digital inputs are ignored. Sorted, non-overlapping; copied. */
	const struct ergon_gate_marker *markers;
	size_t marker_count;
	/* Packets kept per distribution (median/p95/p99); 0 = the default of
	 * 16 Mi. Beyond it the percentiles use the first packets only and
	 * power.distribution_truncated says so. Lowered only by tests. */
	size_t distribution_max;
	/* The instrument's ranges (copied; NULL: one range): each packet, or
	 * raw run, is put in the range its largest |current| (and the
	 * previous packet's) needs, for the budgets' sums. */
	const struct ergon_rating *rating;
};

/* What the uncertainty budgets need of a set of windows (the gated union
 * or the whole capture), summed while the stream passes: per range (the
 * rating's; one when none) the integrals of |p|, |v|, |i| and time, the
 * quantization sums, the recorded values' rounding, and the power and
 * current at every gate edge times its time step (gated_budget.c). */
struct ergon_budget_sums {
	double rg_p_j[ERGON_RATING_MAX_RANGES];	 /* sum |p| x span */
	double rg_v_vs[ERGON_RATING_MAX_RANGES]; /* sum |v| x span (NaN: no voltage) */
	double rg_q_c[ERGON_RATING_MAX_RANGES];	 /* sum |i| x span */
	double rg_t_s[ERGON_RATING_MAX_RANGES];	 /* sum span */
	double q_p2[ERGON_RATING_MAX_RANGES];	 /* sum (|v| x span)^2 / samples */
	double q_t2[ERGON_RATING_MAX_RANGES];	 /* sum span^2 / samples */
	double rec_p_j, rec_i_c;		 /* sum span x printed step */
	double edge_p2_j2, edge_i2_c2;		 /* sum (edge power x step)^2 */
	uint64_t edges;				 /* gate edges counted */
};

/* Accumulator cross-check sums over the packets whose energy came from the
 * instrument's accumulator (docs/POWER_CHECKS.md, "Accumulator
 * cross-checks"; src/engines/gated/accum_check.c). */
struct ergon_accum_xcheck {
	uint64_t packets;     /* packets with an accumulator delta */
	double acc_j;	      /* sum of the energy_j deltas */
	uint64_t p_packets;   /* of those, packets with p_avg_w */
	double pdt_j;	      /* sum of p_avg_w x span */
	uint64_t iv_packets;  /* of those, packets with v_avg_v */
	double ivdt_j;	      /* sum of i_avg_a x v_avg_v x span */
	uint64_t cov_packets; /* of the iv packets, those with a covariance bound */
	double cov_j;	      /* sum of |cov(i, v)| bounds x span */
	double gap_j;	      /* sum of gap x peak-power bound (spans between packets) */
	double acc_max_abs;   /* largest |energy_j| accumulator value (its precision) */
	double acc_res_j;     /* recorded resolution of the largest energy_j total */
	double pres_j;	      /* sum of span x half the resolution of p_avg_w */
	double ivres_j;	      /* sum of span x the rounding bound of i_avg_a x v_avg_v */
};

/* Add one packet to x: span_s its span, gap_s the time since the previous
 * packet's end (the accumulator delta covers it too), delta_j the
 * accumulator's delta. */
ERGON_API void ergon_accum_xcheck_add(struct ergon_accum_xcheck *x,
				      const struct ergon_stats_packet *q, double span_s,
				      double gap_s, double delta_j);
/* x += y. */
ERGON_API void ergon_accum_xcheck_merge(struct ergon_accum_xcheck *x,
					const struct ergon_accum_xcheck *y);
/* The tolerance of comparing x's accumulator sum with other_j (another
 * integral of the same packets), before any covariance allowance. */
ERGON_API double ergon_accum_xcheck_tolerance_j(const struct ergon_accum_xcheck *x, double other_j);

/* Sign and continuity of a window (ergon/plausible.h): samples or packets
 * that ran backwards through the load, the first one's time and the most
 * negative such current; for packets, the time between them that no packet
 * covered, and the largest such hole with where it began. */
struct ergon_sign_gaps {
	uint64_t reverse_n;
	double reverse_first_s, reverse_min_a;
	double gap_s, gap_max_s, gap_max_at_s;
};

/* Figures for one window (or the whole capture). Percentiles are over
 * statistics packets (spike-robust); has_distribution is 0 when no
 * complete packet fell inside the window. */
struct ergon_window_figures {
	double start_s, end_s;
	double duration_s;		 /* edge to edge */
	double integral_s;		 /* sum of the spans actually observed */
	uint64_t start_index, end_index; /* raw input: samples [start, end) */
	uint64_t samples;		 /* raw samples used (NaN samples excluded) */
	uint64_t packets;		 /* complete packets in the distribution */
	uint64_t packets_total;		 /* complete packets seen; > packets when truncated */
	double energy_j, charge_c;
	double avg_current_a, avg_voltage_v, avg_power_w, peak_current_a;
	int has_distribution;
	double median_current_a, p95_current_a, p99_current_a;
	double median_power_w, p95_power_w, p99_power_w;
	struct ergon_sign_gaps sg;	  /* sign and continuity (recording_check.c) */
	int closed;			  /* the gate fell (always 1 for gate windows) */
	int from_accumulator;		  /* energy/charge from instrument accumulators */
	struct ergon_accum_xcheck xcheck; /* statistics packets with accumulators */
};

#define ERGON_GATED_GLITCH_KEEP 16

/* Thresholds of docs/POWER_CHECKS.md that live outside one function
 * (unit/test_pins_docs checks each against the number the doc states):
 * - the gate's minimum window and glitch floor when none is given (1 s);
 * - the rate raw samples are reduced to packets at by default (1 kHz);
 * - a distribution's cap (16 Mi packets, 4.6 hours at 1 kHz); beyond it
 *   the percentiles use the first packets only;
 * - a --stats-rate-hz that contradicts a packet's span by more than
 *   1 % + 1 us is refused. */
#define ERGON_GATE_MIN_WINDOW_S 1.0
/* Raw samples are reduced to packets at this rate unless one is given. */
#define ERGON_GATED_RAW_RATE_DEFAULT_HZ 1000.0
#define ERGON_GATED_DIST_MAX (1u << 24)
#define ERGON_STATS_RATE_REL 0.01
#define ERGON_STATS_RATE_ABS_S 1e-6

struct ergon_gated_result {
	int raw;	       /* raw samples (1) or statistics packets (0) */
	double sample_rate_hz; /* raw input */
	double stats_period_s; /* packet period */
	int gate_source;       /* 0 none, 1 digital input, 2 markers */
	uint64_t samples, packets, nan_samples;
	struct ergon_window_figures whole;
	/* All qualifying windows together: sums of energy, charge and
	 * durations; percentiles over the union of their packets. */
	struct ergon_window_figures gated;
	size_t window_count;
	const struct ergon_window_figures *windows; /* owned by the engine */
	uint64_t short_gate_pulses_ignored;
	size_t glitch_kept; /* diagnostics of the first ERGON_GATED_GLITCH_KEEP glitches */
	struct {
		double start_s, duration_s;
	} glitches[ERGON_GATED_GLITCH_KEEP];
	int gate_high_at_start; /* high on the first sample: not a rising edge */
	int unterminated;	/* a gate rose and never fell */
	double unterminated_start_s;
	uint64_t rises; /* rising edges seen (glitches included) */
	/* The budgets' sums of the gated union and the whole capture, and the
	 * rating they were put in ranges by (NULL: one range). */
	struct ergon_budget_sums gated_sums, whole_sums;
	const struct ergon_rating *rating;
	/* Packets whose energy accumulator ran backwards while their power
	 * (or current and charge) says the load drew energy: negative energy
	 * (ergon/plausible.h). The first one's index (1-based) and step. */
	uint64_t energy_backwards, energy_backwards_first;
	double energy_backwards_j;
};

struct ergon_gated;

/* A new engine. Caller frees with ergon_gated_free. */
ERGON_API int ergon_gated_new(const struct ergon_gated_config *cfg, struct ergon_gated **out,
			      struct ergon_err *err);
ERGON_API void ergon_gated_free(struct ergon_gated *g);

/* Packet input: push packets in time order. ERGON_EPARSE when time goes
 * backwards or a packet is malformed (the message names the packet index). */
ERGON_API int ergon_gated_push_packets(struct ergon_gated *g, const struct ergon_stats_packet *p,
				       size_t n, struct ergon_err *err);

/* Raw input at a fixed rate: call once before the first block. Samples are
 * reduced to statistics packets of round(rate / stats_rate_hz) samples as
 * the instrument would; gate edges keep sample precision. */
ERGON_API int ergon_gated_raw_begin(struct ergon_gated *g, double sample_rate_hz,
				    struct ergon_err *err);
/* n consecutive samples. power may be NULL (then current x voltage);
 * gate_bits may be NULL (gate from markers, or none), else packed u1:
 * sample j is bit (bit0 + j) % 8 of byte (bit0 + j) / 8. */
ERGON_API int ergon_gated_push_raw(struct ergon_gated *g, const float *current_a,
				   const float *voltage_v, const float *power_w,
				   const uint8_t *gate_bits, size_t bit0, size_t n,
				   struct ergon_err *err);

/* End of stream: close the figures. The result stays valid until the
 * engine is freed. */
ERGON_API int ergon_gated_finish(struct ergon_gated *g, const struct ergon_gated_result **out,
				 struct ergon_err *err);

/* ---- Uncertainty budgets (gated_budget.c, docs/UNCERTAINTY.md) ------- */

enum ergon_power_figure {
	ERGON_PF_ENERGY = 1,
	ERGON_PF_CHARGE = 2,
	ERGON_PF_POWER = 3, /* the mean power: energy / observed time */
};

/* The budget of a figure of the gated result (the gated union, or the
 * whole capture when whole), from its sums and the instrument's rating
 * (NULL or ERGON_RATING_NONE: the rated terms are unknown). */
ERGON_API void ergon_gated_budget(const struct ergon_gated_result *res, int whole, int figure,
				  const struct ergon_rating *rating, struct ergon_budget *b);

/* What a gated capture is planned to see, for the budget estimate before
 * measuring (docs/UNCERTAINTY.md, "Before measuring"). NaN or 0 where the
 * plan does not know it: the terms that need it are then left out, so the
 * estimate is a lower bound of the U the capture will state. */
struct ergon_gated_plan {
	double current_a; /* the expected mean current under the gate (NaN: unknown) */
	double voltage_v; /* the rail (NaN: unknown) */
	double window_s;  /* the planned gated window (NaN: unknown) */
	/* Where each gate edge (or, on-device, each end of the window) is
	 * known to: one statistics packet, sample or conversion cycle, s. */
	double edge_s;
	/* Raw samples each statistics packet averages (quantization); 0: the
	 * meter's step is not a term (an on-device accumulator: energy_lsb_j). */
	double samples_per_packet;
	double energy_lsb_j; /* an accumulator's one step (NaN: none) */
};

/* The relative budget (value 1, unit "1": each term a fraction of the
 * figure) that the energy, mean power and energy per inference of a
 * planned capture will at least carry: the rating's gains (the current's in
 * the range the expected current needs, else the smallest of the ranges),
 * its offsets, quantization, the accumulator step and the gate edges at
 * the expected current, the shunt and the timebase. Unknown rated figures
 * are unknown terms (the budget will be incomplete). The observer window
 * (the firmware's count against the gate) is measured and adds to it. */
ERGON_API void ergon_gated_plan_budget(const struct ergon_rating *r,
				       const struct ergon_gated_plan *p, struct ergon_budget *b);

/* ---- Checks on firmware facts (docs/POWER_CHECKS.md) ---------------- */

enum ergon_probe_kind {
	ERGON_PROBE_UNKNOWN = 0,
	ERGON_PROBE_INFER = 1,
	ERGON_PROBE_BUSY_LOOP = 2,
};

enum ergon_terminal_status {
	ERGON_TERMINAL_NONE = 0, /* no terminal record */
	ERGON_TERMINAL_OK = 1,
	ERGON_TERMINAL_FAILED = 2,
	ERGON_TERMINAL_INCOMPLETE = 3,
};

/* The power terminal record (wire.h HPX_KEY_PT_*), filled by whoever parsed it. */
struct ergon_power_terminal {
	int status; /* ergon_terminal_status */
	int version;
	uint64_t requested_count, completed_count;
	int have_elapsed;
	uint64_t elapsed_us; /* the firmware's own window clock */
	int gate_asserted, gate_lowered;
	char final_phase[32];
	int64_t error_code;
	/* INA228 measurement */
	char source[32]; /* "ina228", "external", ... */
	char scope[48];
	int have_energy, have_charge;
	double energy_nj, charge_nc;
	int have_charge_clamped; /* the firmware said whether CHARGE was clamped */
	int charge_clamped;	 /* CHARGE read negative and was clamped to 0 */
	uint64_t duration_us, inference_count;
	int overflow;
	double bus_voltage_uv;
	char calibration_id[64];
};

struct ergon_power_facts {
	int have_clean_count;
	uint64_t clean_infer_count; /* HPX_CLEAN_INFER_COUNT */
	double clean_infer_avg_us;  /* profile boot's reference; 0 = unknown */
	int probe_kind;		    /* ergon_probe_kind */
	int zero_time_inference;    /* an inference reported zero time */
	struct ergon_power_terminal terminal;
	/* A dedicated power build ran, so a terminal record was due: its
	 * absence is power.terminal_missing, not just an incomplete capture. */
	int terminal_expected;
	/* Where clean_infer_count came from when not from the record
	 * ("profile_boot", "host_configuration"; "" = the record or unknown). */
	char clean_count_source[24];
	/* Gate windows the firmware says it drove (facts "gate_windows");
	 * 0 = not stated, which means the one window of the power firmware. */
	uint64_t gate_windows_driven;
	int internal;		/* the on-board INA228 is the measurement of record */
	double host_envelope_s; /* internal: host-timed start-to-record interval; 0 unknown */
	/* Clean-window counts reported by the profile boot (HPX_CLEAN_*). */
	int have_clean_window;
	uint64_t clean_stalled_iters, clean_partial_iters, clean_ref_cycles;
	/* The pre-window rate probe: cycles counted in probe_us at core clock. */
	int have_rate_probe;
	double system_clock_hz, rate_probe_us;
	uint64_t rate_probe_cycles;
	/* The on-board monitor's configuration (facts "monitor": shunt_ohms,
	 * energy_lsb_j, charge_lsb_c, conversion_cycle_s), what its budgets
	 * need; 0 = not stated. */
	double monitor_shunt_ohms, monitor_energy_lsb_j, monitor_charge_lsb_c, monitor_cycle_s;
};

/* What the gate analysis saw, for the checks. */
struct ergon_power_gate_view {
	size_t window_count;
	double gate_s;		    /* total edge-to-edge duration of the windows */
	double integral_s;	    /* total packet-integral duration */
	double shortest_integral_s; /* the shortest window's packet-integral duration */
	double gated_avg_current_a;
	double whole_avg_current_a;
	int have_whole;
	double stats_period_s;
	double min_window_s;
};

/* window_clock_ceiling (internal runs): the firmware window against the
 * host-timed envelope. The have_ flags say which figures could be made;
 * reason says why not (NULL when the check ran in full; static text). */
struct ergon_power_ceiling {
	int have_elapsed;
	uint64_t elapsed_us;
	double elapsed_s;
	int have_envelope;
	double host_envelope_s, slack_s;
	int have_ratio;
	double ratio; /* elapsed_s / host_envelope_s */
	const char *reason;
};

#define ERGON_POWER_REASONS_MAX 16

struct ergon_power_verdict {
	int suspect; /* gated_window_duration_suspect */
	int omit_per_inference;
	int have_expected;
	double expected_s; /* clean count x clean_infer_avg_us */
	double ratio;	   /* gate_s / expected_s */
	int have_drift;
	double drift; /* ratio - 1, published when the observer confirmed */
	int have_current_ok;
	int current_ok; /* gated_vs_whole_current_ok */
	int observer_checked, observer_ok;
	double observer_allowance_s;
	/* Why suspect/omitted, in the order found (static text). */
	const char *reasons[ERGON_POWER_REASONS_MAX];
	size_t nreasons;
	int have_ceiling; /* internal runs */
	struct ergon_power_ceiling ceiling;
};

/* The issue codes that can decide the per-inference reason `reason` (a
 * string of ergon_power_verdict.reasons, as per_inference_omitted_reasons
 * holds it): a NULL-terminated static list, or NULL for a reason that no
 * issue decides (no_clean_inference_count, busy_loop_probe) or an unknown
 * one. Which of them a run raised is in its issues list. */
ERGON_API const char *const *ergon_power_reason_issues(const char *reason);

/* Observer check: |gate_s - elapsed_s| <= 1% of elapsed + allowance, where
 * allowance = 2 stats packets (an edge may land anywhere in the packet and
 * poll period at each end). Returns 1 when they agree. */
ERGON_API int ergon_power_observer_agrees(double gate_s, double elapsed_s, double stats_period_s,
					  double *allowance_s);
/* Tolerance of the reference check when no firmware window arbitrates:
 * max(2 packets, half an inference when count > 1, 10% of expected for a
 * counted window or 25% for a busy_loop probe). */
ERGON_API double ergon_power_reference_tolerance_s(double expected_s, uint64_t count, double avg_us,
						   double stats_period_s, int probe_kind);

/* Run every gate/terminal check, appending issues to `issues` (the
 * caller's list); fills v (nothing in it to free). */
ERGON_API int ergon_power_evaluate(const struct ergon_power_facts *f,
				   const struct ergon_power_gate_view *gv,
				   struct ergon_issue_list *issues, struct ergon_power_verdict *v);

/* Internal-mode (INA228 terminal record) checks; appends issues and fills
 * *ceiling (always: its have_ flags and reason say what could be made).
 * *fail: the measurement failed. Part of ergon_power_evaluate when
 * f->internal; public for tests. */
ERGON_API void ergon_power_check_internal(const struct ergon_power_facts *f,
					  struct ergon_issue_list *issues, int *fail,
					  struct ergon_power_ceiling *ceiling);

/* Accumulator cross-checks over every gate window and the whole capture
 * (statistics packets with accumulators; docs/POWER_CHECKS.md). Adds
 * power.accumulator_inconsistent for the first mismatch and returns 1, else
 * 0. Raw input has no accumulator: 0. */
ERGON_API int ergon_accum_check(const struct ergon_gated_result *res,
				struct ergon_issue_list *issues);

/* Sign and continuity checks of the recording over every gate window and
 * the whole capture (ergon/plausible.h, docs/POWER_CHECKS.md "Sign and time
 * checks"): power.negative_energy, power.reverse_current, power.time_gap.
 * Returns 1 when one was added (the figures are withheld), else 0. */
ERGON_API int ergon_recording_check(const struct ergon_gated_result *res,
				    struct ergon_issue_list *issues);

/* Clean-window checks on the profile boot's per-iteration cycle deltas.
 * total_iters 0 = unknown (the number of deltas is used). ref_cycles is the
 * warm reference. Appends profile.clean_window_stalled and
 * profile.clean_window_check_inoperative as they apply; returns 1 if any. */
ERGON_API int ergon_clean_window_check(const uint64_t *deltas, size_t n, uint64_t total_iters,
				       uint64_t ref_cycles, struct ergon_issue_list *issues);
/* The same check from counts the firmware already made (stalled, partial);
 * observed = number of deltas looked at, 0 when unknown. */
ERGON_API int ergon_clean_window_check_counts(uint64_t stalled, uint64_t partial, uint64_t observed,
					      uint64_t total_iters, uint64_t ref_cycles,
					      struct ergon_issue_list *issues);
/* The pre-window rate probe: cycles below half of core_hz x probe_us. */
ERGON_API int ergon_clean_window_rate_check(double core_hz, double probe_us, uint64_t probe_cycles,
					    struct ergon_issue_list *issues);

/* The budget of a figure of an on-device monitor's record (the INA228's
 * ENERGY and CHARGE over the firmware's window): the monitor's rating,
 * one register step (NaN: unknown), its clock, and the window's ends, each
 * within one conversion cycle (cycle_s; NaN: unknown). The mean power also
 * needs the firmware clock's tolerance, which no record states. */
ERGON_API void ergon_internal_budget(const struct ergon_power_terminal *t,
				     const struct ergon_rating *r, double energy_lsb_j,
				     double charge_lsb_c, double cycle_s, int figure,
				     struct ergon_budget *b);

/* Energy per inference: the energy's budget over count, and where the
 * figure relies on a firmware window that the energy's window only
 * approximates (observer_src not NULL), the energy of their disagreement
 * window_error_s at avg_power_w (NaN: unknown). */
ERGON_API void ergon_epi_budget(const struct ergon_budget *energy, uint64_t count,
				double window_error_s, double avg_power_w, const char *observer_src,
				struct ergon_budget *b);

#ifdef __cplusplus
}
#endif
#endif

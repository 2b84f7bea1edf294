/* Physical plausibility rules shared by every input that carries an energy
 * accumulator (docs/POWER_CHECKS.md, "Impossible values"): the statistics
 * CSV reader rejects the row, the gated engine flags a live stream's
 * packet (bridge instruments), both with the same rule. */
#ifndef ERGON_PLAUSIBLE_H
#define ERGON_PLAUSIBLE_H

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sign and continuity of a recording (docs/POWER_CHECKS.md, "Sign and
 * time checks"; src/engines/gated/recording_check.c):
 * - a window (gate window or the whole capture) whose mean current in the
 *   load's direction is below -ERGON_NEGATIVE_MEAN_A delivered energy
 *   instead of drawing it (power.negative_energy): an instrument's offset
 *   and noise are microamps to a few hundred microamps, never a milliamp
 *   of mean;
 * - a sample (raw) or packet mean (statistics) whose power is negative while
 *   its current is beyond ERGON_REVERSE_CURRENT_A in magnitude ran backwards
 *   through the load; more than ERGON_REVERSE_COUNT_MAX of them in a window
 *   is power.reverse_current (one or two range-switching spikes are not);
 * - statistics packets that leave more than ERGON_TIME_GAP_FRACTION of a
 *   gate window's edge-to-edge duration uncovered (holes between packets)
 *   make its figures miss that much of the gate (power.time_gap). */
#define ERGON_NEGATIVE_MEAN_A 1e-3
#define ERGON_REVERSE_CURRENT_A 0.05
#define ERGON_REVERSE_COUNT_MAX 10
#define ERGON_TIME_GAP_FRACTION 0.01

/* A replay CSV (`ergon run --instrument replay:FILE`) may come from any
 * instrument, so its limits are those of the widest bench rail, not of one
 * meter: 1 kA, 1 kV, 1 MW (a 1e30 A cell is a corrupt file, never a
 * reading). A step in time of more than ERGON_REPLAY_HOLE_PERIODS median
 * periods is a hole in the recording (as run.sampler_gap's 10 periods). */
#define ERGON_REPLAY_MAX_ABS_A 1e3
#define ERGON_REPLAY_MAX_ABS_V 1e3
#define ERGON_REPLAY_MAX_ABS_W 1e6
#define ERGON_REPLAY_HOLE_PERIODS 10
/* Bytes of one replay CSV line: longer is no recording (an endless line is
 * cut there with its place). */
#define ERGON_REPLAY_LINE_MAX 4096

/* Whether an energy accumulator step is negative energy for a load: the
 * accumulator moved by de_j (and the charge accumulator by dc_c, NaN when
 * there is none) over dt_s, while the same span's mean power is p_w (NaN
 * when the input has neither power nor voltage) and its mean current i_a.
 *   With a power figure: p_w > 0 and de_j < -(p_w x dt_s + slack_j), i.e.
 *   backwards by more than the span's whole energy at its own power.
 *   Without one: the current says the load draws (i_a > 0) and the charge
 *   accumulator agrees (dc_c > slack_c), yet de_j < -slack_j: energy and
 *   charge of one rail moving apart needs a negative rail voltage, and an
 *   input with a negative rail says so in its voltage or power column.
 * slack_j / slack_c are the accumulators' printing precision. Returns 1
 * when the step is impossible, 0 otherwise (non-finite inputs: 0). */
ERGON_API int ergon_energy_step_negative(double de_j, double dc_c, double dt_s, double p_w,
					 double i_a, double slack_j, double slack_c);

#ifdef __cplusplus
}
#endif
#endif

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

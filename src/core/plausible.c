/* Physical plausibility rules (include/ergon/plausible.h). */
#include "ergon/plausible.h"

#include <math.h>

int ergon_energy_step_negative(double de_j, double dc_c, double dt_s, double p_w, double i_a,
			       double slack_j, double slack_c)
{
	if (!isfinite(de_j) || !isfinite(dt_s))
		return 0;
	if (isfinite(p_w))
		return p_w > 0 && de_j < -(p_w * dt_s + slack_j);
	return isfinite(i_a) && i_a > 0 && isfinite(dc_c) && dc_c > slack_c && de_j < -slack_j;
}

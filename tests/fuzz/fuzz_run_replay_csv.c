/* Fuzz the replay CSV parser: a recording is input ergon did not produce.
 * Whatever it accepts must be a finite, strictly increasing, non-negative
 * time series. */
#include "drivers/instruments/replay/replay.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_data d = {0};
	struct ergon_err err = {0};
	if (ergon_replay_parse("fuzz.csv", (const char *)data, size, &d, &err) == 0) {
		for (size_t i = 0; i < d.n; i++) {
			if (!isfinite(d.s[i].t_s) || d.s[i].t_s < 0 || !isfinite(d.s[i].power_w))
				abort();
			if (i > 0 && !(d.s[i].t_s > d.s[i - 1].t_s))
				abort();
		}
	} else if (err.msg[0] == '\0') {
		abort(); /* every refusal says why */
	}
	ergon_replay_data_free(&d);
	return 0;
}

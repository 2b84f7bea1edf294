/* A live gated capture from an instrument that streams raw samples at a
 * fixed rate on its own clock with a digital bitmask (the PPK2: 100 kSPS,
 * logic D0-D7): start, reset the target, discard the reset grace period,
 * then every sample into the gated engine's raw input as it arrives, which
 * reduces them to statistics packets at the engine's stats rate with
 * sample-precise gate edges, exactly as a raw JLS recording is reduced by
 * `ergon analyze`. Memory is bounded by the engine, not by the window.
 *
 * Such an instrument has no outputs, so there is no lock-step: the run is
 * gate-only. Samples the instrument lost (a counter gap: the next sample's
 * time is more than one period after the last) enter the engine as NaN,
 * never interpolated, and keep the gate level of the sample before them.
 * The sibling for bridge instruments with statistics packets is
 * ergon/live_gate.h; the configuration is the same struct. */
#ifndef ERGON_LIVE_RAW_H
#define ERGON_LIVE_RAW_H

#include "ergon/error.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/live_gate.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_live_raw_result {
	int end; /* enum ergon_live_end; 0 when an instrument error ended it */
	double sample_rate_hz;
	uint64_t samples_fed;	    /* into the engine, lost ones (NaN) included */
	uint64_t samples_discarded; /* inside the reset grace period */
	uint64_t samples_lost;	    /* counter gaps, fed as NaN */
	uint64_t out_of_order;	    /* samples older than the last one, dropped */
	size_t windows_closed;	    /* gate highs of at least min_window_s that fell */
	uint64_t rises;		    /* rising gate edges fed (short pulses included) */
	int instrument_failed;	    /* the instrument's read failed (message in err) */
};

/* Run the capture on inst (opened, not started; its identity must say
 * clock "instrument" and a sample rate), feeding g, a new engine that has
 * not been given any input (this calls ergon_gated_raw_begin with the
 * instrument's rate). cfg->lockstep must be 0. Stops the instrument before
 * it returns. Returns 0 when the capture ran to an end in res->end (the
 * windows, the timeout, or *cfg->stop); when the instrument fails
 * mid-capture (an unplug) everything read before is already in g,
 * res->instrument_failed is 1 and the instrument's code is returned;
 * ERGON_EPARSE when the instrument's clock jumps by more than 10 s;
 * ERGON_ECONFIG for lock-step or an unusable identity. */
ERGON_API int ergon_live_raw_capture(struct ergon_instrument *inst,
				     const struct ergon_live_config *cfg, struct ergon_gated *g,
				     struct ergon_live_raw_result *res, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

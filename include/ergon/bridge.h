/* What an instrument bridge (`bridge:ARGV`, `joulescope[:SERIAL]`) offers
 * beyond the sample stream of include/ergon/instrument.h: the statistics
 * packets themselves, for the gated engine, and the instrument's outputs,
 * inputs and supply switch. Protocol: docs/BRIDGE.md.
 *
 * Every function takes an instrument opened with ergon_instrument_open
 * whose driver is `bridge` or `joulescope` and answers ERGON_ENOTSUP for
 * any other. An instrument is not thread-safe: read and command it from one
 * thread (a sampler thread that reads must also be the one that drives the
 * outputs). A bridge measures once: after ergon_instrument_stop it has been
 * asked to quit. */
#ifndef ERGON_BRIDGE_H
#define ERGON_BRIDGE_H

#include "ergon/error.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when inst is a bridge-backed instrument. */
ERGON_API int ergon_bridge_is(const struct ergon_instrument *inst);

/* Up to cap statistics packets, times on the host monotonic clock (the
 * mapping of docs/BRIDGE.md). Blocking but bounded like
 * ergon_instrument_read (*n == 0 rather than waiting long). After the
 * bridge ended or failed, the packets it sent are returned first and then
 * the failure (ERGON_EDEVICE, ERGON_ETIMEDOUT, ERGON_EPARSE) with its
 * cause. After ergon_instrument_stop the packets still queued are handed
 * out, then 0 with *n == 0. Do not mix with ergon_instrument_read on the
 * same instrument. */
ERGON_API int ergon_bridge_read_packets(struct ergon_instrument *inst,
					struct ergon_stats_packet *buf, size_t cap, size_t *n,
					struct ergon_err *err);

/* Up to cap consecutive raw samples (a bridge whose hello's streams are
 * ["raw"]): current, voltage (NaN when the bridge sends none) and the
 * inputs (bit i = input i, inputs 0-7), one per sample at the hello's
 * sample_rate_hz, for ergon_gated_push_raw. Samples lost in a sample-id
 * gap keep their places as NaN (never interpolated; the engine leaves them
 * out of its sums) with the inputs held at their last level, and the gap
 * is an instrument.bridge_samples_dropped issue. Same blocking, failure and
 * stop rules as ergon_bridge_read_packets. */
ERGON_API int ergon_bridge_read_raw(struct ergon_instrument *inst, float *current_a,
				    float *voltage_v, uint8_t *digital, size_t cap, size_t *n,
				    struct ergon_err *err);

/* Drive outputs (bit i = output i) high (set) or low (clear) and wait for
 * the bridge's acknowledgement that the level changed (lock-step GO). */
ERGON_API int ergon_bridge_gpo(struct ergon_instrument *inst, uint32_t set_mask,
			       uint32_t clear_mask, struct ergon_err *err);
/* Read the inputs now (bit i = input i). */
ERGON_API int ergon_bridge_gpi(struct ergon_instrument *inst, uint32_t *value,
			       struct ergon_err *err);
/* Connect (on = 1) or disconnect the target's supply. */
ERGON_API int ergon_bridge_passthrough(struct ergon_instrument *inst, int on,
				       struct ergon_err *err);

/* While the bridge is not streaming (before start, or after stop): wait up
 * to wait_s for what it writes (heartbeats) and take it, so that a bridge
 * held open for hours (`ergon power-on`) never blocks on a full pipe.
 * Returns 0, or the bridge's failure: it reported an error (its device
 * was unplugged), talked garbage, or ended (ERGON_EDEVICE). ERGON_EUSAGE
 * while streaming. */
ERGON_API int ergon_bridge_idle(struct ergon_instrument *inst, double wait_s,
				struct ergon_err *err);

/* The capabilities the bridge declared in its hello. */
struct ergon_bridge_caps {
	int inputs, outputs, passthrough;
	int stream_stats, stream_raw;
	double stats_rate_hz, sample_rate_hz, heartbeat_s;
};
ERGON_API int ergon_bridge_caps(const struct ergon_instrument *inst, struct ergon_bridge_caps *out);

#ifdef __cplusplus
}
#endif
#endif

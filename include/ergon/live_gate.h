/* A live gated capture from a bridge instrument (include/ergon/bridge.h):
 * arm the stream, reset the target, discard what the inputs do during the
 * reset grace period, wait for READY on the state input, set GO, and feed
 * every later statistics packet to the gated engine as it arrives (memory
 * bounded by the engine, not by the window's length) until the expected
 * number of gate windows has closed. The piece `ergon profile --power`
 * needs for an external capture on a live instrument; tested against the
 * fake lock-step bridge (tests/support/bridge_fake.py --lockstep). */
#ifndef ERGON_LIVE_GATE_H
#define ERGON_LIVE_GATE_H

#include "ergon/error.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_live_config {
	unsigned sync_input_index;  /* the gate (INPUT0 = 0) */
	unsigned state_input_index; /* READY, with lockstep */
	unsigned go_output_index;   /* GO, with lockstep */
	int lockstep;		    /* wait for READY, then set GO */
	double reset_grace_s;	    /* packets ending this soon after the reset are discarded */
	double ready_timeout_s;	    /* lockstep: READY within this after the grace; 0 = 5 s */
	double timeout_s;	    /* the whole capture; 0 = 60 s (packet_clock: below) */
	double min_window_s;	    /* a high shorter than this closes no window; 0 = 1 s */
	size_t windows;		    /* stop once this many windows closed; 0 = 1 */
	/* Reset the target once the stream runs (NULL: no reset). */
	int (*reset)(void *ctx, struct ergon_err *err);
	void *reset_ctx;
	const volatile sig_atomic_t *stop; /* set by a signal handler; may be NULL */
	/* 1: the reset instant, the grace period and the READY timeout are
	 * taken on the packets' own clock instead of the host's: the reset is
	 * the start of the first packet (the stream starts with the target's
	 * reset), "now" is the end of the latest packet. For a bridge on an
	 * instrument clock that delivers faster than real time (a simulator,
	 * a replay), where the host clock says nothing about the target; every
	 * decision then follows from the stream alone, timeout_s included:
	 * the capture ends once the packets cover timeout_s after the reset,
	 * however slowly a loaded host takes them, or once no packet came
	 * for timeout_s host seconds (a stream that stops; a bridge that
	 * stops writing altogether fails the read at its heartbeat bound). The
	 * raw capture (live_raw.h) reads it the same way with samples: the
	 * first sample is the reset, the grace is counted in samples. */
	int packet_clock;
	/* Raw captures only (live_raw.h; NULL: none): every block of samples
	 * fed to the engine is also handed here as it is fed, with each
	 * sample's whole digital byte (inputs 0-7; a lost sample holds the
	 * last level, its current and voltage NaN), e.g. for the layer
	 * engine's marker line. A non-zero return stops the capture with it. */
	int (*raw_tap)(void *ctx, const float *current_a, const float *voltage_v,
		       const uint8_t *digital, size_t n, struct ergon_err *err);
	void *raw_tap_ctx;
	/* Statistics-packet captures only (this header's capture; NULL:
	 * none): every block of packets fed to the gated engine is also
	 * handed here as it is fed (after the reset grace), e.g. for the
	 * layer engine's marker line on a Joulescope's INPUT1 (each packet's
	 * `digital`: the inputs' levels at its middle sample). A non-zero
	 * return stops the capture with it. */
	int (*packet_tap)(void *ctx, const struct ergon_stats_packet *p, size_t n,
			  struct ergon_err *err);
	void *packet_tap_ctx;
};

enum ergon_live_end {
	ERGON_LIVE_WINDOWS = 1, /* the expected windows closed */
	ERGON_LIVE_TIMEOUT = 2, /* timeout_s passed first */
	ERGON_LIVE_SIGNAL = 3,	/* *stop was set */
};

struct ergon_live_result {
	int end; /* enum ergon_live_end */
	int ready_observed;
	double ready_after_reset_s;
	int go_set;
	size_t windows_closed;
	uint64_t packets_fed, packets_discarded;
};

/* Run the capture on inst (a bridge instrument, opened, not started),
 * feeding g (packet input, never raw). Stops the instrument before it
 * returns and clears GO when it set it. 0 when the capture ran (see
 * res->end); ERGON_ETIMEDOUT when lockstep READY never came (the packets
 * seen are fed all the same); an instrument failure's code otherwise. */
ERGON_API int ergon_live_gated_capture(struct ergon_instrument *inst,
				       const struct ergon_live_config *cfg, struct ergon_gated *g,
				       struct ergon_live_result *res, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

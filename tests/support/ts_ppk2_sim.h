/* A PPK2 protocol simulator on a pseudo-terminal, for tests and benches.
 *
 * It speaks the protocol facts of docs/USAGE.md ("PPK2"): single-byte
 * commands with arguments, the GetMetadata answer (programmable text, so a
 * test can garble it, leave keys out or report R = 0), and after
 * AverageStart a stream of u32 sample words built from a programmable
 * current waveform, range per sample, logic lines D0-D7, counter gaps and a
 * disconnect (the master side is closed after N samples).
 *
 * The sample for true current I on range r is the raw14 value whose
 * decoded current is nearest I under the simulator's calibration (the
 * inverse of the conversion formula); tests that want exact figures use
 * the identity calibration (GS 0, GI 1, O 0, S 0, I 0, UG 1) and currents
 * on the raw14 grid of their range.
 */
#ifndef TS_PPK2_SIM_H
#define TS_PPK2_SIM_H

#include <stddef.h>
#include <stdint.h>

#define TS_PPK2_GAPS_MAX 16

struct ts_ppk2_sim_cfg {
	const char *metadata; /* the full answer incl. "END\n"; NULL = identity calibration */
	/* per sample k (sample index in device time, gaps included) */
	double (*current_a)(uint64_t k, void *ctx);
	int (*range)(uint64_t k, void *ctx);	 /* NULL: the finest range that holds I */
	uint8_t (*logic)(uint64_t k, void *ctx); /* NULL: 0 */
	void *ctx;
	/* Called at every AverageStart with the next sample's device index
	 * (NULL: none), on the simulator's thread under its lock: for a
	 * waveform that starts again with each capture. It may call
	 * ts_ppk2_sim_disconnect_at (atomic), nothing that takes the lock. */
	void (*on_start)(uint64_t k, void *ctx);
	uint64_t samples;		   /* then the stream pauses (0 = unlimited) */
	uint64_t gap_at[TS_PPK2_GAPS_MAX]; /* samples gap_at[i] .. + gap_len[i] - 1 are not sent */
	uint64_t gap_len[TS_PPK2_GAPS_MAX];
	size_t n_gaps;
	uint64_t disconnect_after; /* close the port after this many sent samples (0 = never) */
	int realtime;		   /* pace at 100 kSPS instead of as fast as read */
	int mute;		   /* never answer GetMetadata */
	int silent;		   /* answer commands but never stream a sample */
	int streaming_at_start;	   /* already streaming (an earlier session left it on) */
	/* The simulator is the host's clock (ts_ppk2_sim_clock): it sends 8
	 * words at a time, each once the host has read all before and looked
	 * at the clock since (the driver does right after a read), and the
	 * clock reads the device time of the words sent so far (lost ones
	 * included) times (1 + clock_ppm 1e-6), plus clock_late_s(k) (a late
	 * host; NULL: 0) at device sample k, never going back. Unpaced and
	 * lock-step with the host, so exact whatever the machine's load: the
	 * host-clock check sees the lag of what was lost and what
	 * clock_late_s adds, nothing of the pty's own delays. */
	int clocked;
	double clock_ppm;
	double (*clock_late_s)(uint64_t k, void *ctx);
};

struct ts_ppk2_sim;

/* Start a simulator thread on a new pty; *path gets the slave's name
 * (valid until ts_ppk2_sim_stop). Returns NULL on failure. */
struct ts_ppk2_sim *ts_ppk2_sim_start(const struct ts_ppk2_sim_cfg *cfg, const char **path);
/* Stop the thread, close the pty, free. NULL is a no-op. */
void ts_ppk2_sim_stop(struct ts_ppk2_sim *s);

/* Unplug once `sent` samples were sent in all (or at once if already past),
 * decided while running (from any thread): for a disconnect placed
 * relative to something the simulator saw, as --unplug-in-gate does. */
void ts_ppk2_sim_disconnect_at(struct ts_ppk2_sim *s, uint64_t sent);

/* 1 once at least `sent` samples were sent in all and the host has read
 * every byte sent (nothing waits in the pty); 0 otherwise. */
int ts_ppk2_sim_drained(struct ts_ppk2_sim *s, uint64_t sent);

/* The simulated host clock of a `clocked` simulator, for ergon_clock_set
 * (include/ergon/clock.h); valid until ts_ppk2_sim_stop. */
struct ergon_clock;
const struct ergon_clock *ts_ppk2_sim_clock(struct ts_ppk2_sim *s);

/* What the host set (read after the host is done; waits until the
 * simulator has taken every byte the host already sent). */
struct ts_ppk2_sim_state {
	int mode;      /* last SetPowerMode argument, 0 = never */
	int vdd_mv;    /* last RegulatorSet, 0 = never */
	int dut_power; /* last DeviceRunningSet, -1 = never */
	int metadata_requests, starts, stops, resets;
	uint64_t sent; /* samples sent */
	int disconnected;
};
void ts_ppk2_sim_state(struct ts_ppk2_sim *s, struct ts_ppk2_sim_state *out);

/* The identity calibration text (R as given; R = default shunts when
 * r_ohm is NULL). Returns a static buffer. */
const char *ts_ppk2_identity_metadata(const double *r_ohm);
/* The raw14 value whose current on range r under the identity
 * calibration is nearest i_a. */
unsigned ts_ppk2_raw14(double i_a, int range, const double *r_ohm);

/* Standalone: run until SIGTERM/SIGINT, printing the slave path on stdout
 * (the ergon_ppk2_sim tool for CLI tests). argv: see ts_ppk2_sim_main.c. */

#endif

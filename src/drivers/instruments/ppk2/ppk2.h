/* Nordic Power Profiler Kit II: the device's wire format (protocol.c),
 * private to the ppk2 driver, its tests, fuzzers and benchmarks.
 *
 * Written clean-room from the protocol facts in docs/USAGE.md ("PPK2"):
 * single-byte commands with arguments, an ASCII calibration answer ending
 * in END, and a stream of little-endian u32 samples at 100 kSPS.
 */
#ifndef ERGON_PPK2_H
#define ERGON_PPK2_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#define PPK2_USB_VID 0x1915u
#define PPK2_USB_PID 0xC00Au
#define PPK2_SAMPLE_RATE_HZ 100000.0
#define PPK2_RANGES 5
#define PPK2_VDD_MIN_MV 800
#define PPK2_VDD_MAX_MV 5000
/* The calibration answer is a few hundred bytes; more is not a PPK2. */
#define PPK2_META_MAX 4096u

/* Commands: one byte, then its arguments. */
enum ppk2_cmd {
	PPK2_CMD_AVERAGE_START = 0x06,
	PPK2_CMD_AVERAGE_STOP = 0x07,
	PPK2_CMD_DEVICE_RUNNING_SET = 0x0C, /* [0|1]: DUT power */
	PPK2_CMD_REGULATOR_SET = 0x0D,	    /* [mV >> 8, mV & 0xFF] */
	PPK2_CMD_SET_POWER_MODE = 0x11,	    /* [1 ampere meter | 2 source meter] */
	PPK2_CMD_GET_METADATA = 0x19,
	PPK2_CMD_RESET = 0x20,
};

enum ppk2_mode {
	PPK2_MODE_AMPERE = 1,
	PPK2_MODE_SOURCE = 2,
};

/* The shunt resistances used when the device reports R = 0 or none (a
 * known bad calibration), ohms, ranges 0..4 (protocol facts). */
extern const double ppk2_default_r_ohm[PPK2_RANGES];

/* Calibration key groups (R0..R4, GS0..GS4, ...), in the bit order of
 * ppk2_cal.defaulted. */
enum ppk2_cal_group {
	PPK2_CAL_R,
	PPK2_CAL_GS,
	PPK2_CAL_GI,
	PPK2_CAL_O,
	PPK2_CAL_S,
	PPK2_CAL_I,
	PPK2_CAL_UG,
	PPK2_CAL_GROUPS
};
#define PPK2_CAL_BIT(g, r) ((uint64_t)1 << ((unsigned)(g)*PPK2_RANGES + (unsigned)(r)))

/* Calibration from GetMetadata. Parallel arrays by range. */
struct ppk2_cal {
	double r[PPK2_RANGES], gs[PPK2_RANGES], gi[PPK2_RANGES], o[PPK2_RANGES];
	double s[PPK2_RANGES], i[PPK2_RANGES], ug[PPK2_RANGES];
	int have_calibrated;
	int calibrated; /* "Calibrated" key */
	int have_hw;
	uint32_t hw; /* "HW" key: a whole number 0..2^32-1, else refused */
	int have_ia;
	double ia;	      /* "IA" key, kept as reported */
	unsigned r_defaulted; /* bit r: R[r] was 0, negative, missing or -nan: default used */
	uint64_t defaulted;   /* PPK2_CAL_BIT(group, r): that key was missing or -nan (or R
			       * <= 0) and keeps the app's default */
	size_t unknown_keys;  /* keys we do not know, ignored */
};

/* Parse the GetMetadata answer held in buf[0..len). Returns 1 while no END
 * line has arrived (need more), 0 when cal is complete, ERGON_EPARSE for a
 * garbled line, a value that is not a number or is out of range (|value| >
 * 1e12, HW not a whole number 0..2^32-1, a shunt in (0, 1e-6) ohm), a
 * duplicate key, or an unusable (all-zero) gain, ERGON_ETOOBIG past
 * PPK2_META_MAX. A calibration key missing or -nan (or R <= 0) keeps the
 * default of Nordic's app (R = ppk2_default_r_ohm, GS = GI = UG = 1,
 * O = S = I = 0) and is flagged in cal->defaulted. `where` names the
 * device in messages; the message names the line, key, value and fix. */
int ppk2_meta_parse(const char *buf, size_t len, struct ppk2_cal *cal, const char *where,
		    struct ergon_err *err);

/* The names of the keys in a ppk2_cal.defaulted mask ("R2, GS0, UG4") into
 * out (always terminated; cut at cap). Returns the length written. */
size_t ppk2_cal_key_names(uint64_t mask, char *out, size_t cap);

/* One sample word: ADC bits 0..13, range 14..16, counter 18..23 (wraps
 * at 64), logic D0..D7 in bits 24..31. */
struct ppk2_word {
	uint16_t adc14;
	uint8_t range;
	uint8_t counter;
	uint8_t logic;
};

static inline struct ppk2_word ppk2_word_unpack(uint32_t w)
{
	struct ppk2_word s = {
	    .adc14 = (uint16_t)(w & 0x3fffu),
	    .range = (uint8_t)((w >> 14) & 0x7u),
	    .counter = (uint8_t)((w >> 18) & 0x3fu),
	    .logic = (uint8_t)(w >> 24),
	};
	return s;
}

static inline uint32_t ppk2_word_pack(struct ppk2_word s)
{
	return (uint32_t)(s.adc14 & 0x3fffu) | ((uint32_t)(s.range & 7u) << 14) |
	       ((uint32_t)(s.counter & 0x3fu) << 18) | ((uint32_t)s.logic << 24);
}

/* Current in amperes for range r (0..4) from the 14-bit ADC value, in
 * double precision and in the order the app's rule is written:
 * x = (raw14 * 4 - O) * (1.8 / 163840) / R;
 * I = UG * (x * (GS * x + GI) + (S * VDD_V + I)), VDD_V = vdd_mv / 1000. */
double ppk2_current_a(const struct ppk2_cal *c, unsigned r, unsigned adc14, double vdd_mv);

/* Resolution of range r in amperes: one raw14 step (4 ADC counts of
 * 1.8 V / 163840) across that range's shunt, with unit gain. */
double ppk2_resolution_a(const struct ppk2_cal *c, unsigned r);

/* The decoder: words in, samples out, with Nordic's app's post-range-switch
 * rule when spike_filter is on (docs/internals/ppk2.md: averages a (0.18)
 * and a4 (0.06) of the current updated on every sample; the switching
 * sample and the 2 after it show a4 on range 4, else a; the first two on
 * range 4 restore both averages first) and counter-gap accounting. Plain
 * state; ppk2_decoder_init before use. */
struct ppk2_decoder {
	const struct ppk2_cal *cal;
	double vdd_mv;
	int spike_filter; /* 1 = apply (default) */
	/* state */
	int have_prev; /* a word was decoded (prev_counter is set) */
	uint8_t prev_counter;
	int have_avg;	       /* a valid-range sample was decoded: the averages are set */
	uint8_t avg_range;     /* the range of the last valid-range sample */
	unsigned since_switch; /* samples since the last range switch (3 = none near) */
	double avg_a, avg_a4;  /* the app's two exponential averages, A */
	uint8_t rem[4];
	size_t rem_len;
	uint64_t index; /* sample index of the next word, dropped samples included */
	uint64_t dropped;
	uint64_t gaps;
	uint64_t bad_range; /* words whose range field was 5..7: current NaN */
	uint64_t filtered;  /* samples shown as an average by the spike rule */
	uint64_t skipped;   /* samples accounted by ppk2_decoder_skip (host clock) */
};

void ppk2_decoder_init(struct ppk2_decoder *d, const struct ppk2_cal *cal, double vdd_mv);

/* A decoded sample. */
struct ppk2_sample {
	uint64_t index; /* position at 100 kSPS from the first word */
	float current_a;
	uint8_t logic;
	uint8_t range;
};

/* Called for each counter gap before the sample after it: `missing`
 * samples were lost, starting at sample index `at`. */
typedef void (*ppk2_gap_fn)(void *ctx, uint64_t at, uint64_t missing);

/* Decode bytes (any split; a partial word is kept for the next call) into
 * out, at most cap samples. *consumed is set to the bytes of `bytes` used;
 * the caller passes the rest again. The counter advances by one per sample
 * (mod 64): a jump of k > 1 means k - 1 samples were lost; they get no
 * sample, only the gap callback and the index advance. Returns the number
 * of samples written. */
size_t ppk2_decode(struct ppk2_decoder *d, const uint8_t *bytes, size_t len,
		   struct ppk2_sample *out, size_t cap, size_t *consumed, ppk2_gap_fn gap,
		   void *gap_ctx);

/* The host-clock check for losses the 6-bit counter cannot show (64 x n
 * samples: the counter wraps to the same value). It follows the lag of the
 * stream behind the host's clock, t - index / rate, over the reads that
 * drained the port (returned less than was asked), by its floor: the
 * lowest lag of each PPK2_CC_BUCKET_S of reads (latency only ever adds to
 * the lag, so the floor is the steady part). Samples lost unseen raise
 * the floor by 64 / rate per block for good. A loss is declared only on
 * crisp evidence: the floor was steady before (its buckets within
 * PPK2_CC_FLOOR_SPREAD samples over PPK2_CC_BASE_S), every draining read
 * then stays at least PPK2_CC_SUSPECT_SAMPLES above it for PPK2_CC_CONFIRM_S
 * and PPK2_CC_CONFIRM_READS reads, the new floor is steady too, and the
 * step is within PPK2_CC_QUANTUM_TOL samples of a whole number of 64-sample
 * blocks. Anything else that lasts (a latency that rose, a wandering floor
 * on a loaded host) is counted as inconclusive and the floor starts
 * afresh: never a guessed loss. docs/internals/ppk2.md gives the reasons
 * for the numbers. */
#define PPK2_CC_BLOCK 64u
#define PPK2_CC_SUSPECT_SAMPLES 48.0
#define PPK2_CC_QUANTUM_TOL 16.0
#define PPK2_CC_FLOOR_SPREAD 16.0
#define PPK2_CC_CONFIRM_S 1.0
#define PPK2_CC_CONFIRM_READS 32u
#define PPK2_CC_BUCKET_S 0.1
#define PPK2_CC_BUCKETS 5u
#define PPK2_CC_BASE_S (PPK2_CC_BUCKET_S * PPK2_CC_BUCKETS)

struct ppk2_clock_check {
	double rate_hz;
	int have_origin;
	double origin_s; /* lags are t - origin - index / rate */
	/* the floor of the lag per bucket of PPK2_CC_BUCKET_S */
	double bucket_start_s[PPK2_CC_BUCKETS], bucket_min_s[PPK2_CC_BUCKETS];
	unsigned buckets, cur;
	uint64_t last_low_index; /* index after the last draining read at the floor */
	/* a step under confirmation: its own buckets' floors */
	int suspect;
	int run_base_unsteady; /* the floor before it was not steady: no decision */
	double run_start_s, run_base_s, run_min_s;
	double run_bucket_start_s, run_bucket_min_s;
	double run_floor_lo_s, run_floor_hi_s; /* over its completed buckets */
	unsigned run_buckets;
	unsigned run_reads;
	uint64_t run_from;
	/* what it saw */
	uint64_t draining_reads, losses, lost_samples, inconclusive, cancelled;
};

void ppk2_clock_check_init(struct ppk2_clock_check *c, double rate_hz);

/* Feed one read that returned data: t_s the host's time right after it
 * returned (a clock that NTP does not slew), index the decoder's index after
 * its samples (received + counted drops + blocks found earlier), drained 1
 * when the read returned less than it asked for. Returns the number of
 * samples found lost (a positive multiple of 64) or 0; with a loss,
 * *lost_from is the index after the last read that was certainly before
 * it (the loss lies in [*lost_from, index before this read's samples)). */
uint64_t ppk2_clock_check_feed(struct ppk2_clock_check *c, double t_s, uint64_t index, int drained,
			       uint64_t *lost_from);

/* The step (samples above the level) under confirmation, or 0 when none:
 * at the end of a stream, a loss too recent to confirm. */
double ppk2_clock_check_pending(const struct ppk2_clock_check *c);

/* Account samples found lost outside the counter (the host-clock check):
 * the index advances by n and the next sample comes after them. */
void ppk2_decoder_skip(struct ppk2_decoder *d, uint64_t n);

#endif

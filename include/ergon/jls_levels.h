/* Random access to a JLS recording's FSR signals at every level the file
 * holds: the samples (level 0, from the DATA chunks) and the summary
 * entries (levels 1.., from the SUMMARY chunks: mean, min, max of the
 * finite samples an entry covers). docs/internals/view.md.
 *
 * Opening walks the chunk headers once and keeps, per signal and level,
 * where each chunk starts and which entries it holds (24 bytes a chunk;
 * an hour at 100 kSPS in DATA chunks of 10,000 samples is 36,000 chunks).
 * A read touches only the chunks that hold the entries asked for, each
 * checked against its CRC. A level is used up to its first gap, damaged
 * or inconsistent chunk: entries stay contiguous from sample 0.
 */
#ifndef ERGON_JLS_LEVELS_H
#define ERGON_JLS_LEVELS_H

#include "ergon/error.h"
#include "ergon/jls.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Level 0 (samples) and up to 15 summary levels (chunk_meta bits 15:12). */
#define ERGON_JLS_LEVELS_MAX 16u
/* Signals one index holds. */
#define ERGON_JLS_LEVELS_SIGNALS_MAX 16u
/* Entries one ergon_jls_levels_read call returns at most. */
#define ERGON_JLS_LEVELS_READ_MAX (1u << 20)

/* One entry: the statistics of the finite samples it covers (a sample at
 * level 0: mean = min = max = the value; a u1 sample reads 0 or 1); NaN
 * when none of them is finite. */
struct ergon_jls_entry {
	float mean, min, max;
};

struct ergon_jls_levels;

/* Index the named signals (f32 or u1 FSR signals; a name the recording does
 * not define is indexed as empty) of r, which must outlive the index.
 * Caller frees with ergon_jls_levels_free. ERGON_ENOMEM, ERGON_EIO, or
 * ERGON_EUSAGE for more than ERGON_JLS_LEVELS_SIGNALS_MAX names. */
ERGON_API int ergon_jls_levels_open(struct ergon_jls_reader *r, const char *const *names, size_t n,
				    struct ergon_jls_levels **out, struct ergon_err *err);
ERGON_API void ergon_jls_levels_free(struct ergon_jls_levels *l);
/* Levels of signal k (index in names) with at least one entry: 0 when the
 * signal has no sample, else 1 + its summary levels in use. */
ERGON_API unsigned ergon_jls_levels_depth(const struct ergon_jls_levels *l, size_t k);
/* Samples one entry of that level covers (1 at level 0); 0 past the depth. */
ERGON_API uint64_t ergon_jls_levels_entry_samples(const struct ergon_jls_levels *l, size_t k,
						  unsigned level);
/* Entries of that level, contiguous from entry 0 (at level 0: the samples). */
ERGON_API uint64_t ergon_jls_levels_entries(const struct ergon_jls_levels *l, size_t k,
					    unsigned level);
/* Entries [first, first + n) of signal k at that level into out[n]. All of
 * them must exist (first + n <= ergon_jls_levels_entries) and n <=
 * ERGON_JLS_LEVELS_READ_MAX, else ERGON_ERANGE; ERGON_EIO or ERGON_EVERIFY
 * when a chunk cannot be read or fails its CRC (the file changed). */
ERGON_API int ergon_jls_levels_read(struct ergon_jls_levels *l, size_t k, unsigned level,
				    uint64_t first, size_t n, struct ergon_jls_entry *out,
				    struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

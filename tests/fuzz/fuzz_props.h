/* Properties the fuzz targets check on top of "does not crash": a violated
 * property abort()s (libFuzzer records the input as a crash; the corpus
 * replay fails). Header-only: each target is built from one source file. */
#ifndef ERGON_FUZZ_PROPS_H
#define ERGON_FUZZ_PROPS_H

#include "ergon/gated.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_REQUIRE(cond)                                                                 \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz property violated at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                                          \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* Two optional texts are the same: both absent, or equal bytes. */
static inline int fuzz_same_text(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Invariants of a gated result, whatever the input: counts are bounded by
 * what was seen, every window ends after it starts; windows cut from one
 * digital gate input (edges of one signal) are also in time order, do not
 * overlap, lie inside the input and hold no more samples than the whole. */
static inline void fuzz_check_gated_result(const struct ergon_gated_result *r)
{
	/* Raw input: NaN samples are among the samples seen. (Statistics
	 * input counts NaN packets there and no samples.) */
	if (r->raw)
		FUZZ_REQUIRE(r->nan_samples <= r->samples);
	else
		FUZZ_REQUIRE(r->nan_samples <= r->packets);
	FUZZ_REQUIRE(r->window_count == 0 || r->windows != NULL);
	FUZZ_REQUIRE(r->glitch_kept <= ERGON_GATED_GLITCH_KEEP);
	uint64_t win_samples = 0;
	for (size_t i = 0; i < r->window_count; i++) {
		const struct ergon_window_figures *w = &r->windows[i];
		FUZZ_REQUIRE(!(w->end_s < w->start_s));
		FUZZ_REQUIRE(!(w->duration_s < 0));
		if (r->gate_source != 1)
			continue;
		if (i > 0)
			FUZZ_REQUIRE(!(w->start_s < r->windows[i - 1].end_s));
		if (r->raw) {
			FUZZ_REQUIRE(w->start_index <= w->end_index);
			FUZZ_REQUIRE(w->end_index <= r->samples);
			if (i > 0)
				FUZZ_REQUIRE(w->start_index >= r->windows[i - 1].end_index);
		}
		win_samples += w->samples;
	}
	if (r->gate_source == 1) {
		FUZZ_REQUIRE(r->window_count <= r->rises);
		FUZZ_REQUIRE(r->gated.samples <= r->whole.samples);
		if (r->raw)
			FUZZ_REQUIRE(win_samples <= r->whole.samples);
	}
}

#endif

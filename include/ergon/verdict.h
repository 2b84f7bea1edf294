/* The verdict of a written artifact: valid (every figure published,
 * warnings allowed), degraded (written, but some figures withheld) or
 * invalid. It is decided here, once per kind of artifact, from the
 * artifact's typed content (issue severities, the withheld flags the
 * pipelines set), never from printed text; the CLI turns it into the exit
 * code with ergon_verdict_exit_code (ergon/error.h), the same in every
 * command.
 *
 * `integrity: degraded` (a warning) is not a degraded verdict: a warning
 * with every figure published is valid. run.throttled is a finding (info),
 * so a THROTTLED run is valid.
 */
#ifndef ERGON_VERDICT_H
#define ERGON_VERDICT_H

#include "ergon/error.h"
#include "ergon/record.h"

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_VERDICT_WHY_MAX 512

struct ergon_verdict {
	int kind; /* enum ergon_verdict_kind */
	/* What decided it, for the user: the failed checks (issue codes), or
	 * what was withheld and why; "" when valid. Truncated at the maximum. */
	char why[ERGON_VERDICT_WHY_MAX];
};

/* A sustained report (ergon run): invalid when an issue is an error;
 * degraded when the headline figures are withheld (figures.withheld, or no
 * energy_per_op: run.no_total_rail). */
ERGON_API void ergon_verdict_run(const json_t *report, struct ergon_verdict *v);
/* A profile summary.json (ergon profile): invalid when interrupted, when a
 * stage did not complete or an issue is an error; degraded when the power
 * stage ran but its per-inference figures were withheld. */
ERGON_API void ergon_verdict_profile(const json_t *summary, struct ergon_verdict *v);
/* An analysis summary.json (ergon analyze): invalid when an issue is an
 * error; degraded when no gate window qualified (gate_failure: the gated
 * figures are withheld) or, when per-inference figures were asked for
 * (facts given: expect_per_inference), they were withheld. */
ERGON_API void ergon_verdict_analysis(const json_t *summary, int expect_per_inference,
				      struct ergon_verdict *v);
/* An HPX profile summary.json (ergon capture, ergon parse): invalid when
 * an issue is an error (pmu.missing); degraded when the stream was cut
 * before HPX_END (profile.complete false: the open iteration and what
 * followed are not in the figures). */
ERGON_API void ergon_verdict_hpx(const json_t *summary, struct ergon_verdict *v);
/* A recording (ergon record): invalid when it is incomplete (the
 * instrument went away: the file keeps what came before); degraded when
 * samples were lost (NaN in the file, never interpolated) or refused
 * (time went backwards). */
ERGON_API void ergon_verdict_record(const struct ergon_record_result *res, struct ergon_verdict *v);

#ifdef __cplusplus
}
#endif
#endif

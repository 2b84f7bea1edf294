/* Energy per layer, measured (docs/METHOD.md, "Energy per layer"): raw
 * samples with a gate line and a layer-marker line in, per layer of the
 * inference the energy between consecutive marker edges folded over the
 * window's inferences out.
 *
 * The firmware (ert_marker_config) toggles the marker line at the start of
 * every marked layer inside the gate and once after the last inference,
 * so an inference of S marked segments shows S edges and the window's
 * last inference S + 1. Each inference is found by time (the next
 * inference starts one inference period after this one, the period being
 * the marked span over the count); an inference whose edges differ from S
 * is dropped and counted. Segments that span fewer samples than the
 * minimum are merged with their neighbour, the reason stated.
 *
 * The engine is pure: the pipelines push sample blocks and make JSON from
 * the typed result (docs/internals/layer_energy.md).
 */
#ifndef ERGON_LAYER_ENERGY_H
#define ERGON_LAYER_ENERGY_H

#include "ergon/budget.h"
#include "ergon/error.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/rating.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fewest samples a resolved layer spans (median over inferences): its
 * two edges are each placed within half a sample, so at 10 samples the
 * placement alone can move a layer's energy by up to a tenth. */
#define ERGON_LAYERS_MIN_SAMPLES 10.0
/* The next inference starts within this fraction of the period of where
 * the period says (docs/METHOD.md, "Energy per layer"). */
#define ERGON_LAYERS_PERIOD_TOL 0.05
/* The median's distribution-free interval per segment: the order
 * statistics n/2 -+ 0.98 sqrt(n), [min, max] under 6 inferences. */
#define ERGON_LAYERS_CI_Z 0.98
#define ERGON_LAYERS_CI_MIN_N 6
/* The most marked segments per inference. */
#define ERGON_LAYERS_MAX_SEGMENTS 256
/* The most inferences folded (their edges are kept). */
#define ERGON_LAYERS_MAX_INFERENCES 1000000u

struct ergon_layers_config {
	double sample_rate_hz;	/* the raw samples' rate (> 0) */
	unsigned gate_bit;	/* the gate's digital input (D0 = 0) */
	unsigned marker_bit;	/* the marker line's digital input (e.g. PPK2 D1 = 1) */
	size_t segments;	/* marked segments per inference (1..MAX_SEGMENTS) */
	uint64_t inferences;	/* inferences the window ran (the record's count); 0: unknown */
	double min_samples;	/* 0: ERGON_LAYERS_MIN_SAMPLES */
	/* How far from one inference period after the last the next
	 * inference's first edge may fall, as a fraction of the period; 0:
	 * 0.05. Steady inferences are the method's assumption. */
	double period_tolerance;
	const struct ergon_rating *rating; /* the meter's (copied); NULL: unrated */
	/* What one sample is, in the budget's and the issues' words (e.g.
	 * "statistics packet" when a meter's packets are the samples); NULL:
	 * "sample". Borrowed: must outlive the engine. */
	const char *sample_name;
};

/* One resolved layer, or several merged: segments first..last. */
struct ergon_layer_figures {
	size_t first, last;
	int merged;	/* last > first: too short alone */
	uint64_t inferences; /* inferences folded */
	double energy_mean_j, energy_median_j;
	double median_lo_j, median_hi_j; /* a distribution-free 95 % interval of the median */
	double energy_min_j, energy_max_j;
	double duration_s;  /* mean, edge to edge */
	double samples;	    /* median span, in samples */
	double power_w;	    /* mean energy / mean duration */
	double share;	    /* of the sum over the layers */
	struct ergon_budget budget; /* of energy_mean_j (k = 2) */
};

struct ergon_layers_result {
	double sample_rate_hz;
	double min_samples; /* the minimum span of a resolved layer, samples */
	size_t segments;
	uint64_t samples;
	uint64_t edges;		     /* marker edges inside the gate */
	uint64_t inferences_expected; /* the config's count, else edges / segments */
	uint64_t inferences_used;
	uint64_t inferences_dropped; /* found, but with another number of edges */
	uint64_t inferences_lost;    /* expected but not found at all */
	int64_t first_dropped;	     /* index of the first dropped inference; -1 none */
	uint64_t first_dropped_edges;
	double period_s;	     /* the inference period the search used */
	double gate_start_s, gate_end_s;
	double gate_energy_j;	/* inside the gate */
	/* Energy per used inference outside its marked span (the window's
	 * loop between inferences falls in the last layer; this is the gate's
	 * lead-in and tail shared out): (gate energy - marked energy of all
	 * found inferences) / inferences found. */
	double unmarked_j;
	size_t n_layers;
	struct ergon_layer_figures *layers; /* owned by the engine */
	double sum_j;			    /* sum of the layers' mean energies */
	/* The sum's budget: the whole marked inference, whose inner edges
	 * cancel (only its first and last edge are placed). */
	struct ergon_budget sum_budget;
	struct ergon_issue_list issues; /* owned by the engine */
};

struct ergon_layers;

/* A new engine; ERGON_EUSAGE for a bad configuration (named). Free with
 * ergon_layers_free. */
ERGON_API int ergon_layers_new(const struct ergon_layers_config *cfg, struct ergon_layers **out,
			       struct ergon_err *err);
ERGON_API void ergon_layers_free(struct ergon_layers *L);

/* n consecutive samples: current (A), voltage (V; NULL: voltage_v for
 * all), digital inputs (bit i = input i). Non-finite current or voltage
 * is refused (ERGON_EPARSE naming the sample index). */
ERGON_API int ergon_layers_push(struct ergon_layers *L, const float *current_a,
				const float *voltage_v, double voltage_const_v,
				const uint8_t *digital, size_t n, struct ergon_err *err);

/* The window's inference count once it is known, before finish (a live
 * capture reads the firmware's record only after the window): replaces
 * the config's. ERGON_EUSAGE after finish or beyond
 * ERGON_LAYERS_MAX_INFERENCES. */
ERGON_API int ergon_layers_set_inferences(struct ergon_layers *L, uint64_t inferences,
					  struct ergon_err *err);

/* End of the stream: fold, merge, budget. *out stays valid until the
 * engine is freed. Issues: power.layers_inferences_dropped,
 * power.layers_unresolved, power.layers_none (no inference folded: no
 * layer figures), power.layers_no_gate. */
ERGON_API int ergon_layers_finish(struct ergon_layers *L, const struct ergon_layers_result **out,
				  struct ergon_err *err);

/* The sum over the layers against the gated energy per inference
 * (epi_j with its budget, NULL: unbudgeted): power.layers_sum_mismatch
 * into issues when |sum - epi| exceeds the two expanded uncertainties
 * combined in quadrature (an incomplete budget uses its known part). The
 * unmarked energy is not added: sum + unmarked is the gate's energy per
 * inference by construction, so only the sum alone can disagree (a large
 * unmarked share shows here). Returns 1 when they disagree, 0 when they
 * agree. */
ERGON_API int ergon_layers_check_sum(const struct ergon_layers_result *res, double epi_j,
				     const struct ergon_budget *epi_budget,
				     struct ergon_issue_list *issues);

/* The marker plan: which layers' starts to mark so that every marked
 * segment (a layer and the unmarked layers after it) lasts at least
 * min_samples samples at rate_hz, from each layer's expected duration
 * layer_s[0..n) (the PMU stage's per-layer time). Layer 0 is always
 * marked. mask gets ert_marker_config's bits (words of 32, layers from
 * index 256 on are never marked); seg_first[0..*segments) (may be NULL,
 * room for n) the first layer of each segment. A trailing segment too short
 * joins the one before. */
ERGON_API void ergon_layers_plan(const double *layer_s, size_t n, double rate_hz,
				 double min_samples, uint32_t mask[8], size_t *seg_first,
				 size_t *segments);

#ifdef __cplusplus
}
#endif
#endif

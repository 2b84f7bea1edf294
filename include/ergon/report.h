/* The sustained-load report (schema "ergon.report", version 1): the run
 * pipeline, figure recomputation from the embedded series, verification,
 * and the measurement-harness/energy-model/v1 export. docs/REPORT_FORMAT.md lists every field.
 */
#ifndef ERGON_REPORT_H
#define ERGON_REPORT_H

#include "ergon/error.h"
#include "ergon/instrument.h"
#include "ergon/session.h"
#include "ergon/verdict.h"
#include "ergon/workload.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_REPORT_SCHEMA "ergon.report"
#define ERGON_REPORT_VERSION 1
/* A repeated run (--repeat N, N >= 2) is version 2: its series live under
 * repetitions[] (docs/REPORT_FORMAT.md); a single run stays version 1. */
#define ERGON_REPORT_VERSION_REPEATED 2
/* The most repetitions of one run. */
#define ERGON_RUN_REPEAT_MAX 1000
/* verify: a recomputed figure equals the stored one when
 * |a - b| <= ERGON_VERIFY_ABS + ERGON_VERIFY_REL * max(|a|, |b|). The
 * report stores doubles with 17 significant digits, so honest reports agree
 * exactly; the band only absorbs last-bit differences of libm. */
#define ERGON_VERIFY_REL 1e-9
#define ERGON_VERIFY_ABS 1e-12
/* Embedded power samples above this count are decimated (every k-th sample
 * kept, first and last always) and the exact integrals are embedded. */
#define ERGON_REPORT_MAX_SAMPLES 200000
/* A decimated phase's mean power must lie within this fraction (plus the
 * stated uncertainty) of the mean power of the embedded exact integral. */
#define ERGON_DECIMATION_TOL 0.05

struct ergon_run_config {
	const char *device;
	const char *instrument_spec;
	struct ergon_instrument_options instrument_opts;
	const char *workload_spec;
	struct ergon_workload_options workload_opts;
	/* Your own workload instead of workload_spec: a struct ergon_workload
	 * whose driver's invoke does one unit of work (prepare, teardown,
	 * open and close may be NULL; ergon/workload.h). Not owned: ergon
	 * neither opens nor closes it. The report names it
	 * "caller:<driver name>" with its description. NULL: workload_spec. */
	struct ergon_workload *workload;
	struct ergon_session_config session; /* stop flag and progress callback inside */
	double throttle_threshold;	     /* e.g. 0.15 */
	size_t throttle_windows;	     /* consecutive windows, e.g. 2 */
	double ambient_c;		     /* NaN when not given */
	const char *temp_file;		     /* thermal-zone style file (millidegrees C) read
					      * alongside every sample; NULL = none */
	const char *out_path;
	unsigned write_flags;	     /* ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR */
	size_t max_embedded_samples; /* 0 = ERGON_REPORT_MAX_SAMPLES */
	/* Repetitions of the whole measurement (settle, idle baseline, load
	 * windows), kept whole in one report with the statistics of every
	 * figure over them. 0 or 1: one run (a version 1 report). */
	size_t repeat;
	/* Called once every input passed its check (the output, the
	 * instrument, its space, the workload, --temp-file) and just before
	 * the first sample: where a caller announces how long the run will
	 * take. NULL: none. */
	void (*ready)(void *ctx);
	void *ready_ctx;
	/* --max-uncertainty-pct: a budgeted figure whose relative expanded
	 * uncertainty exceeds it (or whose budget is incomplete) raises
	 * run.uncertainty_above_limit; 0 = no gate. */
	double max_uncertainty_pct;
	/* --trim-s (the Jetson method): when trim is nonzero, the report
	 * states plan.trim_s and its figures.duty_cycle: each load window less
	 * trim_s seconds at both ends (the first window's start is the
	 * warm-up) before the duty-cycle formulas; with repeat, also
	 * figures.repeat.duty_cycle, the formulas applied to the averages over
	 * the repetitions. 0 <= 2 x trim_s < the window's length. */
	int trim;
	double trim_s;
};

/* A figure of a run that ergon states statistics for over repetitions and
 * that ergon compare compares (one table: src/pipelines/run/report_figures.c). */
struct ergon_run_figure {
	const char *key;   /* its path under a run's figures, e.g. "load.mean_power_w" */
	const char *u_key; /* the path of its ± from the report's root, or NULL: none stated */
	const char *unit;  /* the unit the value is stored in */
	const char *name;  /* in words */
	int better;	   /* -1 lower is better, +1 higher is better, 0 neither */
	int headline;	   /* counts for compare's regression verdict */
};
/* The table and its length. */
ERGON_API const struct ergon_run_figure *ergon_run_figures(size_t *n);

/* The sustained report's headline figures (its "figures"), typed: what
 * `ergon run` prints. NaN where the report has no such figure: withheld
 * (see withheld and the verdict), or not measured. With several rails,
 * the headline (total input) rail's. A repeated run (--repeat N) has no
 * single headline: its figures are NaN here, each repetition's and their
 * statistics are in the document (figures.repetitions[], figures.repeat). */
struct ergon_run_headline {
	uint64_t operations;	    /* invocations that succeeded */
	uint64_t operations_failed; /* and failed */
	int withheld;		    /* the report withholds its figures */
	/* The idle baseline and the load windows. */
	double idle_duration_s, idle_energy_j, idle_energy_u_j;
	double idle_mean_power_w, idle_mean_power_u_w;
	double load_duration_s, load_energy_j, load_energy_u_j;
	double load_mean_power_w, load_mean_power_u_w, load_peak_power_w;
	/* Energy per operation: above idle (the headline) and in total, with
	 * their uncertainties; the achieved rate. */
	double energy_per_op_j, energy_per_op_u_j;
	double energy_per_op_total_j, energy_per_op_total_u_j;
	double ops_per_s;
	/* Latency of every successful invocation (nearest rank). */
	double latency_min_s, latency_mean_s, latency_max_s;
	double latency_p50_s, latency_p90_s, latency_p95_s, latency_p99_s;
	/* Sustained throughput: the first window, the tail, the change, and
	 * whether it throttled (from onset_t_s on). */
	double first_ops_per_s, tail_ops_per_s, change_pct;
	int throttled;
	double onset_t_s;
};

/* What a run gives its caller, typed. */
struct ergon_run_result {
	int provenance;		      /* enum ergon_provenance: measured, synthetic, replayed */
	int integrity;		      /* enum ergon_integrity */
	struct ergon_verdict verdict; /* valid, degraded or invalid, and why */
	char report_id[72];	      /* "sha256:..." of the report written */
	size_t repetitions;	      /* 1, or the repetitions of a --repeat N report */
	struct ergon_run_headline figures;
};

/* The result of a report document (one ergon_run wrote, or one loaded
 * with ergon_artifact_load). */
ERGON_API void ergon_run_result_read(const json_t *report, struct ergon_run_result *res);

/* Run a sustained-load measurement and write its report. The output path is
 * checked before anything is measured. On return 0 the report was written
 * and *res (may be NULL) holds its figures, typed; its verdict may still
 * be invalid (interrupted, instrument failure, ...): the caller maps that
 * to its exit code. report (may be NULL) receives the report document as
 * written (caller owns, json_decref), for a caller that prints or
 * re-checks the document itself (the CLI). A negative code means no
 * report is at out_path: the run failed before measuring (nothing was
 * measured), or the report or the raw measurement was kept elsewhere and
 * err's message says where (OUT.partial or $TMPDIR/ergon-rescue-*;
 * docs/RELIABILITY.md). */
ERGON_API int ergon_run(const struct ergon_run_config *cfg, struct ergon_run_result *res,
			json_t **report, struct ergon_err *err);

/* The plan without measuring (--dry-run): the instrument is opened for its
 * identity and closed; *plan (caller owns) holds the identity, the plan
 * and uncertainty_estimate: the part of the gated figures' budget the plan
 * already bounds (a lower bound), the terms that will be unknown, and
 * whether the run can meet --max-uncertainty-pct ("refused": it cannot,
 * and ergon_run would refuse it). */
ERGON_API int ergon_run_plan(const struct ergon_run_config *cfg, json_t **plan,
			     struct ergon_err *err);

/* Build a report from a session result (no I/O). Caller owns *report. */
ERGON_API int ergon_report_build(const struct ergon_run_config *cfg,
				 const struct ergon_instrument *inst,
				 const struct ergon_workload *wl,
				 const struct ergon_session_result *res, json_t **report,
				 struct ergon_err *err);

/* Compute every derived figure from the report's plan, uncertainty model
 * and series. *figures (caller owns) is the "figures" object; *issues
 * (caller owns) lists the issues the figures raise. */
ERGON_API int ergon_report_compute_figures(const json_t *report, json_t **figures, json_t **issues,
					   struct ergon_err *err);

/* The same with the series arrays the streaming reader packed (see
 * ERGON_JCS_PACK_SERIES in ergon/jcs.h; NULL: read them from the JSON).
 * The packed arrays it reads are taken from *packed. */
struct ergon_jcs_stream_result;
ERGON_API int ergon_report_compute_figures_packed(const json_t *report,
						  struct ergon_jcs_stream_result *packed,
						  json_t **figures, json_t **issues,
						  struct ergon_err *err);

/* Verify: the schema, the digest, every figure recomputed from the series,
 * integrity against the issues, then the artifact's own consistency
 * (provenance.kind against the instrument's provenance and driver, the
 * uncertainty model against the instrument, the window counts).
 * ERGON_EVERIFY names the first field that fails, and for a figure how far
 * off it is in units of the tolerance, never the value the series give. */
ERGON_API int ergon_report_verify(const json_t *report, struct ergon_err *err);

/* What every consumer of an artifact checks before using it (db ingest,
 * compare): a sustained report as ergon_report_verify (every figure from
 * its series, so a resealed forged figure is refused), any other artifact
 * its digest; and a signature, when there is one, must have been made for
 * this report_id (ergon_artifact_signature_bound, no key needed). */
ERGON_API int ergon_artifact_verify(const json_t *artifact, struct ergon_err *err);

/* Verify the report file at path (at most max_len bytes) in bounded
 * memory: the digest is streamed from the file (never the canonical text
 * in memory) and the series are read once as doubles
 * (docs/internals/verify.md): series longer than ERGON_JCS_SPILL_MIN values
 * are not held but read again from the file. Errors as ergon_report_verify, plus those of
 * ergon_jcs_stream_file (ERGON_EPARSE naming the byte, ERGON_ENOMEM said as
 * out of memory). On success *report (may be NULL; caller json_decref's)
 * is the report without its series values. */
ERGON_API int ergon_report_verify_file(const char *path, size_t max_len, unsigned flags,
				       json_t **report, struct ergon_err *err);
/* flags: re-read every series from the file instead of holding the short
 * ones (by default only series above ERGON_JCS_SPILL_MIN values are). */
#define ERGON_VERIFY_SPILL_ALL 1u

/* Every uncertainty budget in an artifact of any kind (a profile's or an
 * analysis's power section, a report) recomputed from its terms
 * (combination, U, completeness, the largest term), and the gate: a power
 * section whose uncertainty states max_uncertainty_pct must list
 * power.uncertainty_above_limit exactly when one of its budgets fails it.
 * *count gets how many budgets were checked. ERGON_EVERIFY names the
 * field. */
ERGON_API int ergon_artifact_check_budgets(const json_t *a, size_t *count, struct ergon_err *err);

/* The energy model's schema, the name the measurement harness's consumers
 * read; ERGON_ENERGY_MODEL_SCHEMA_OLD is the name ergon wrote before
 * (still read by report, db ingest; never written). */
#define ERGON_ENERGY_MODEL_SCHEMA "measurement-harness/energy-model/v1"
#define ERGON_ENERGY_MODEL_SCHEMA_OLD "energy-model/v1"
/* 1 when schema s (not NULL) names an energy model, by either name. */
#define ERGON_IS_ENERGY_MODEL_SCHEMA(s)                                                            \
	(strcmp((s), ERGON_ENERGY_MODEL_SCHEMA) == 0 ||                                            \
	 strcmp((s), ERGON_ENERGY_MODEL_SCHEMA_OLD) == 0)

/* Export measurement-harness/energy-model/v1 from a verified report. actions: n names. A
 * synthetic report is refused (ERGON_EREFUSED) unless allow has
 * ERGON_MODEL_ALLOW_SYNTHETIC; a replayed one (power recorded at another
 * time than this workload ran, whatever the recording's own provenance)
 * unless it has ERGON_MODEL_ALLOW_REPLAYED. Only a report whose
 * provenance.kind is measured is ever labelled measured. Caller owns
 * *model. */
/* The throttle verdict names temperature as evidence only when the
 * last window's mean temperature exceeds the first's by more than this
 * (docs/METHOD.md): three steps of the 1 C resolution common to thermal
 * zones and GPU sensors, so one-step sensor noise never counts. */
#define ERGON_THROTTLE_TEMP_RISE_C 3.0
/* `ergon run`'s throttle defaults (docs/METHOD.md): a drop of 15 % that
 * lasts 2 windows, the onset window counted among them. */
#define ERGON_THROTTLE_THRESHOLD_DEFAULT 0.15
/* A sampler gap above this many periods raises run.sampler_gap. */
#define ERGON_SAMPLER_GAP_PERIODS 10.0
#define ERGON_THROTTLE_WINDOWS_DEFAULT 2
#define ERGON_MODEL_ALLOW_SYNTHETIC 1
/* The label a replayed figure carries in the report and the model. */
#define ERGON_REPLAYED_LABEL "replayed — power not recorded during this workload"
#define ERGON_MODEL_ALLOW_REPLAYED 2
ERGON_API int ergon_energy_model_build(const json_t *report, const char *const *actions,
				       size_t n_actions, int allow, json_t **model,
				       struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

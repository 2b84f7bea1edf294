/* `ergon validate`: profile every model of a folder on a board, check each
 * one and write the outcome as JUnit XML for CI (docs/VALIDATE.md).
 *
 * Per model MODEL.tflite (file name order), in OUT/MODEL/:
 *   profile      the model is profiled on the board: qemu-an547, the
 *                firmware is built with the model embedded (`ergon profile
 *                MODEL.tflite --board qemu-an547`); sim, the virtual bench
 *                runs the model in-process (synthetic: simulated board and
 *                instruments); any other board runs the user's firmware
 *                FIRMWARE_DIR/MODEL/ (profile and power builds) through the
 *                board's probe lifecycle. A model the interpreter refuses,
 *                missing firmware or a stage that fails is an <error> and
 *                the checks below are <skipped> with the reason
 *   correctness  the target's output against the host interpreter on the
 *                same input (summary.json "correctness": bit-exact)
 *   integrity    summary.json valid, integrity not "invalid"
 *   regression   only with a baseline: `ergon compare BASE NEW --threshold`
 *                (comparability first; a headline figure worse by more than
 *                the threshold fails); a model the baseline lacks is
 *                <skipped>, named
 *   db ingest    only with a database: summary.json stored
 * One <testsuite> per model, one <testcase> per check.
 */
#ifndef ERGON_VALIDATE_H
#define ERGON_VALIDATE_H

#include "ergon/error.h"

#include <signal.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many models in one folder. */
#define ERGON_VALIDATE_MODELS_MAX 256

struct ergon_db;

struct ergon_validate_opts {
	const char *board;	/* sim, qemu-an547 or a board preset with a probe lifecycle */
	const char *models_dir; /* its *.tflite files are the models */
	/* Real boards only (not sim or qemu-an547, which ergon runs the model
	 * on itself): FIRMWARE_DIR/MODEL/ holds the user's builds of MODEL for
	 * the board, found as `ergon profile FIRMWARE_DIR/MODEL` finds them;
	 * they must run the model on input pattern xs1 and report output 0
	 * (HPX_MODEL_OUTPUT_BYTES / _FNV1A64) as ergon's an547 model firmware
	 * does. NULL otherwise. */
	const char *firmware_dir;
	unsigned rtt_port; /* real boards: the probe's RTT port; 0: the lifecycle's default */
	int power;	   /* also run the power stage (power.enabled) */
	/* An earlier `ergon validate --out` folder (BASE/MODEL/summary.json) or
	 * a database (path or postgresql:// URL: the newest ergon.profile of
	 * the same model file name on the same board); NULL: no regression
	 * check. */
	const char *baseline;
	double threshold_pct; /* regression threshold (compare --threshold) */
	const char *out_dir;  /* OUT/MODEL/ per model */
	const char *junit_path;
	struct ergon_db *db;		    /* ingest every summary.json here; NULL: none */
	unsigned write_flags;		    /* ERGON_WRITE_FORCE: replace earlier outputs */
	int no_cache; /* qemu-an547: build the firmware without the object cache */
	/* --repeat N (issue 31): each model's whole profile (the PMU stage and,
	 * with power, the power stage) N times into one summary.json
	 * (repetitions[], repeat.figures: ergon profile's repeat_pmu), so that
	 * the regression check (ergon compare's Welch test) has the
	 * run-to-run spread with 3 or more on each side. 0 or 1: once. */
	unsigned repeat;
	volatile sig_atomic_t *interrupted; /* stop after the model running now */
	/* Called before each model's checks that take time (may be NULL):
	 * model i (0-based) of n, and the check that runs now ("profile",
	 * "regression"). For a progress line and its ETA. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *model, const char *check);
	void *progress_ctx;
};

/* How one check of one model ended (a <testcase> of the JUnit XML). */
enum ergon_validate_outcome {
	ERGON_VALIDATE_PASS = 1,
	ERGON_VALIDATE_FAILURE = 2, /* <failure>: the check found a fault */
	ERGON_VALIDATE_ERROR = 3,   /* <error>: the check could not run */
	ERGON_VALIDATE_SKIPPED = 4, /* <skipped>: not checked, and why */
};

/* At most this many checks per model: profile, correctness, integrity,
 * regression, db ingest. */
#define ERGON_VALIDATE_CHECKS_MAX 5
#define ERGON_VALIDATE_NAME_MAX 256

struct ergon_validate_check {
	char name[16]; /* "profile", "correctness", "integrity", "regression", "db ingest" */
	int outcome;   /* enum ergon_validate_outcome */
	double time_s; /* how long the check took */
	char message[ERGON_ERR_MSG_MAX]; /* what it found ("" when it passed quietly) */
};

/* One model: its checks in the order they ran. */
struct ergon_validate_model {
	char name[ERGON_VALIDATE_NAME_MAX]; /* the file name without .tflite */
	int provenance;			    /* enum ergon_provenance of its summary; 0: none */
	struct ergon_validate_check checks[ERGON_VALIDATE_CHECKS_MAX];
	size_t n_checks;
};

/* The outcome of ergon_validate_run, typed: the counts of the JUnit XML's
 * <testsuites> and every model's checks, filled from the same records the
 * XML is written from (they cannot disagree). Free with
 * ergon_validate_result_cleanup. */
struct ergon_validate_result {
	unsigned models, tests, failures, errors, skipped;
	struct ergon_validate_model *per_model; /* `models` entries, in file name order */
	int interrupted; /* the opts' flag stopped it: later models were not run */
};

/* Run the validation and write the JUnit XML atomically. Returns 0 when
 * the XML was written (whatever the checks said: see *res), or a negative
 * ERGON_E* when nothing could be validated (no models, a real board without
 * firmware_dir or sim/qemu-an547 with one, the baseline unreadable, the XML
 * not writable: all
 * checked before the first model runs) or the XML could not be written. */
ERGON_API int ergon_validate_run(const struct ergon_validate_opts *o,
				 struct ergon_validate_result *res, struct ergon_err *err);
/* Free what the result holds (per_model); the counts stay. A second
 * cleanup is harmless. */
ERGON_API void ergon_validate_result_cleanup(struct ergon_validate_result *res);

/* Append s to b with XML's five characters escaped, invalid UTF-8 repaired
 * and control characters XML 1.0 forbids replaced by U+FFFD. */
struct ergon_dynbuf;
ERGON_API void ergon_xml_escape(struct ergon_dynbuf *b, const char *s);

#ifdef __cplusplus
}
#endif
#endif

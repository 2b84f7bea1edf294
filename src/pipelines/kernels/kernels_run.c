/* kernels/: `ergon kernels run | report`: kernel timing.
 *
 * `ergon kernels run --board host`: correctness first, then timing, every
 * sample kept (docs/METHOD.md, "Kernels"). */
#include "ergon/kernels_run.h"
#include "ergon/mtime.h"

#include "engines/kernels/kernels_internal.h"
#include "ergon/artifact.h"
#include "ergon/config.h"
#include "ergon/dynbuf.h"
#include "ergon/fileio.h"
#include "ergon/model.h"
#include "kernels_qemu.h"
#include "pipelines/common/common.h"

#include "ergon/ert_kblob.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ERGON_KERNELS_CFLAGS
#define ERGON_KERNELS_CFLAGS "unknown (not passed by the build)"
#endif

#define SHAPES_MAX (1024u * 1024u)
#define ITER_MAX 1000000L
#define OVERHEAD_READS ERGON_KERNELS_OVERHEAD_READS

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The cost of one timing read: the least of many back-to-back pairs. */
static uint64_t read_overhead_ns(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < OVERHEAD_READS; i++) {
		uint64_t a = now_ns(), b = now_ns();
		if (b - a < best)
			best = b - a;
	}
	return best;
}

static json_t *build_json(void)
{
	json_t *defs = json_array();
#ifdef __OPTIMIZE__
	json_array_append_new(defs, json_string("__OPTIMIZE__"));
#endif
#ifdef __SANITIZE_ADDRESS__
	json_array_append_new(defs, json_string("__SANITIZE_ADDRESS__"));
#endif
#ifdef __AVX2__
	json_array_append_new(defs, json_string("__AVX2__"));
#endif
#ifdef __SSE4_2__
	json_array_append_new(defs, json_string("__SSE4_2__"));
#endif
#ifdef __ARM_FEATURE_MVE
	json_array_append_new(defs, json_string("__ARM_FEATURE_MVE"));
#endif
#if defined(__clang__)
	const char *compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
	const char *compiler = "gcc " __VERSION__;
#else
	const char *compiler = "unknown C compiler " __VERSION__;
#endif
	return json_pack("{s:s, s:s, s:s, s:o, s:s}", "compiler", compiler, "flags",
			 ERGON_KERNELS_CFLAGS, "kernel_flags",
			 "the flags above plus -ffreestanding (ert_host, target/CMakeLists.txt)",
			 "feature_defines", defs, "kernels", "ref (the interpreter's portable C)");
}

/* The --impl list as KQ_IMPL_* bits; mve only where the board has it. */
static int impl_list(const struct ergon_kernels_run_options *o, int qemu, unsigned *mask,
		     struct ergon_err *err)
{
	const char *s = o->impls ? o->impls : "ref";
	const char *p = s;
	*mask = 0;
	while (*p != '\0') {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 3 && memcmp(p, "ref", 3) == 0) {
			*mask |= KQ_IMPL_REF;
		} else if (l == 3 && memcmp(p, "mve", 3) == 0) {
			if (!qemu)
				return ergon_err_set(
				    err, ERGON_EREFUSED,
				    "--impl mve: board %s has no Helium (MVE): the MVE "
				    "kernels run only on a Cortex-M55 (--board qemu-an547)",
				    o->board);
			*mask |= KQ_IMPL_MVE;
		} else {
			return ergon_err_set(err, ERGON_EUSAGE,
					     "--impl %.*s: unknown implementation (ref, mve)",
					     (int)l, p);
		}
		p += l;
		if (*p == ',')
			p++;
	}
	if (*mask == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "--impl: empty list (ref, mve)");
	return 0;
}

/* --repeat: the progress line names the repetition. */
struct rep_progress {
	const struct ergon_kernels_run_options *o;
	long rep, reps;
	char name[ERGON_KERNELS_NAME_MAX + 32];
};

static void rep_progress_fn(void *ctx, size_t i, size_t n, const char *case_name)
{
	struct rep_progress *rp = ctx;
	snprintf(rp->name, sizeof rp->name, "%s (repetition %ld/%ld)", case_name, rp->rep,
		 rp->reps);
	rp->o->progress(rp->o->progress_ctx, i, n, rp->name);
}

/* The sample lines of one repetition with its number appended. */
static int tag_samples(struct ergon_dynbuf *dst, const struct ergon_dynbuf *src, long r,
		       struct ergon_err *err)
{
	size_t start = 0;
	for (size_t i = 0; i < src->len; i++) {
		if (src->p[i] != '\n')
			continue;
		ergon_dynbuf_add(dst, src->p + start, i - start);
		ergon_dynbuf_addf(dst, ",%ld\n", r);
		start = i + 1;
	}
	if (ergon_dynbuf_error(dst) != 0)
		return ergon_err_set(err, ergon_dynbuf_error(dst),
				     "kernels: the samples do not fit in memory");
	return 0;
}

/* Check, warm up and time one case; adds to d, samples and refused. */
static int run_case(struct kcase *c, const struct ergon_kernels_run_options *o, size_t idx,
		    uint64_t overhead, struct ergon_kernels_data *d, struct ergon_dynbuf *samples,
		    json_t *refused, uint64_t *raw, struct ergon_err *err)
{
	kcase_prepare(c, (uint32_t)idx + 1u);
	memset(c->out, 0x55, c->out_len);
	kcase_run_ref(c);
	if (o->inject_mismatch && idx == 0)
		c->out[c->out_len / 2] = (int8_t)(c->out[c->out_len / 2] ^ 1);
	size_t bad = c->out_len;
	for (size_t i = 0; i < c->out_len && bad == c->out_len; i++)
		if (c->out[i] != c->expect[i])
			bad = i;
	if (bad != c->out_len) {
		json_object_set_new(c->record, "first_mismatch",
				    json_pack("{s:I, s:i, s:i}", "byte", (json_int_t)bad, "got",
					      (int)c->out[bad], "expected", (int)c->expect[bad]));
		ergon_dynbuf_addf(samples, "%s,ref,fail,,\n", c->name);
		return ergon_kernels_add(d, c->name, "ref", 0, NAN, err);
	}
	for (long w = 0; w < o->warmup; w++)
		kcase_run_ref(c);
	for (long it = 0; it < o->iterations; it++) {
		/* The kernel writes only its output: re-initialize it. */
		memset(c->out, 0x55, c->out_len);
		uint64_t t0 = now_ns();
		kcase_run_ref(c);
		uint64_t t1 = now_ns();
		raw[it] = t1 - t0;
	}
	for (long it = 0; it < o->iterations; it++)
		if (raw[it] <= overhead) {
			json_array_append_new(
			    refused, json_pack("{s:s, s:s}", "case", c->name, "why",
					       "a sample is not above the timing-read overhead: "
					       "the kernel is too short for this clock"));
			return 0;
		}
	int rc = 0;
	for (long it = 0; it < o->iterations && rc == 0; it++) {
		ergon_dynbuf_addf(samples, "%s,ref,pass,%llu,%llu\n", c->name,
				  (unsigned long long)raw[it], (unsigned long long)overhead);
		rc = ergon_kernels_add(d, c->name, "ref", 1, (double)(raw[it] - overhead), err);
	}
	return rc;
}

/* The host board: wall-clock nanoseconds here. *art: the artifact with
 * provenance, timing, build and the "kernels" section. */
static int run_host(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		    struct ergon_kernels_data *d, struct ergon_dynbuf *samples, json_t *refused,
		    uint64_t *raw, json_t **art_out, struct ergon_err *err)
{
	json_t *sec = NULL;
	int rc = 0;
	struct timespec res;
	clock_getres(CLOCK_MONOTONIC_RAW, &res);
	uint64_t overhead = read_overhead_ns();
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (o->progress != NULL)
			o->progress(o->progress_ctx, i, n, cases[i].name);
		rc = run_case(&cases[i], o, i, overhead, d, samples, refused, raw, err);
	}
	if (rc == 0 && ergon_dynbuf_error(samples) != 0)
		rc = ergon_err_set(err, ergon_dynbuf_error(samples),
				   "kernels: the samples do not fit in memory");
	if (rc == 0)
		rc = ergon_kernels_summarize(d, "ref", "ns", &sec, err);
	if (rc != 0)
		return rc;
	json_object_set_new(sec, "overhead_note",
			    json_string("measured (the least of 1000 back-to-back clock reads) "
					"and subtracted from every sample"));
	json_t *art =
	    ergon_artifact_new(ERGON_KERNELS_SCHEMA, ERGON_KERNELS_VERSION, ERGON_PROV_MEASURED);
	if (art == NULL) {
		json_decref(sec);
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	}
	json_t *prov = json_object_get(art, "provenance");
	json_object_set_new(prov, "board", json_string("host"));
	json_object_set_new(
	    prov, "note",
	    json_string("wall-clock nanoseconds of the host build of the kernels on this "
			"machine (a user process: preemption shows as outliers); not a "
			"Cortex-M figure"));
	json_object_set_new(
	    art, "timing",
	    json_pack("{s:s, s:I, s:I, s:b, s:I, s:I, s:s, s:s, s:s}", "clock",
		      "CLOCK_MONOTONIC_RAW", "resolution_ns",
		      (json_int_t)((uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec),
		      "overhead_ns", (json_int_t)overhead, "overhead_subtracted", 1, "iterations",
		      (json_int_t)o->iterations, "warmup", (json_int_t)o->warmup, "correctness",
		      "bit-exact against the oracle (TFLite reference_integer_ops loops), "
		      "before any timing; the correctness run is also the first warm-up",
		      "inputs",
		      "the input is written once per case; the output, the only buffer the "
		      "kernel writes, is re-initialized before every iteration, outside the "
		      "timed region",
		      "interrupts", "not masked (host user process)"));
	json_object_set_new(art, "build", build_json());
	json_object_set_new(art, "kernels", sec);
	*art_out = art;
	return 0;
}

/* The implementations' symbols in a case's record. */
static json_t *impl_record(const struct kcase *c, unsigned impls)
{
	static const char *const ref[] = {"", "tfl_conv_s8", "tfl_dwconv_s8", "", "tfl_fc_s8"};
	static const char *const mve[] = {"", "tfl_mve_conv_s8", "tfl_mve_dwconv_s8", "",
					  "tfl_mve_fc_s8"};
	json_t *j = json_object();
	if (impls & KQ_IMPL_REF)
		json_object_set_new(j, "ref", json_string(ref[c->kind]));
	if (impls & KQ_IMPL_MVE) {
		int dw_fallback = c->kind == KC_DWCONV && c->conv.depth_mult != 1;
		json_object_set_new(
		    j, "mve",
		    json_string(dw_fallback ? "tfl_mve_dwconv_s8 (hands a depth multiplier "
					      "other than 1 to tfl_dwconv_s8: not Helium code)"
					    : mve[c->kind]));
	}
	return j;
}

/* The qemu-an547 board: checks and counts on the emulated Cortex-M55. */
static int run_qemu(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		    unsigned impls, const struct ergon_pmu_plan *plan, struct ergon_kernels_data *d,
		    struct ergon_dynbuf *samples, json_t **art_out, struct ergon_err *err)
{
	json_t *info = NULL, *sec = NULL;
	const char *unit = NULL;
	for (size_t i = 0; i < n; i++) {
		kcase_prepare(&cases[i], (uint32_t)i + 1u);
		json_object_set_new(cases[i].record, "implementations",
				    impl_record(&cases[i], impls));
	}
	int rc = ergon_kernels_qemu(cases, n, o, impls, plan, d, samples, &info, &unit, err);
	if (rc == 0 && ergon_dynbuf_error(samples) != 0)
		rc = ergon_err_set(err, ergon_dynbuf_error(samples),
				   "kernels: the samples do not fit in memory");
	if (rc == 0)
		rc = ergon_kernels_summarize(d, (impls & KQ_IMPL_REF) ? "ref" : "mve", unit, &sec,
					     err);
	if (rc != 0) {
		json_decref(info);
		return rc;
	}
	json_object_set_new(sec, "overhead_note",
			    json_string("measured on the target (the least of 64 back-to-back "
					"count reads) and subtracted from every sample"));
	json_t *art =
	    ergon_artifact_new(ERGON_KERNELS_SCHEMA, ERGON_KERNELS_VERSION, ERGON_PROV_SYNTHETIC);
	if (art == NULL) {
		json_decref(info);
		json_decref(sec);
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	}
	json_t *prov = json_object_get(art, "provenance");
	json_object_set_new(prov, "board", json_string("qemu-an547"));
	json_object_set_new(prov, "clock", json_string("emulated"));
	json_object_set_new(
	    prov, "note",
	    json_string(strcmp(unit, "cycles") == 0
			    ? "core cycles read from DWT CYCCNT by the kernel firmware"
			    : "emulated instruction counts of QEMU's mps3-an547 (Cortex-M55) "
			      "under -icount, not cycles of any real core: a ratio of two "
			      "counts says how many fewer instructions ran, not how much "
			      "faster an M55 would be"));
	json_object_set_new(
	    art, "timing",
	    json_pack("{s:O, s:O, s:O, s:I, s:I, s:s, s:s, s:s}", "counter",
		      json_object_get(info, "counter"), "method", json_object_get(info, "method"),
		      "overhead_raw_ticks", json_object_get(info, "overhead_raw"), "iterations",
		      (json_int_t)o->iterations, "warmup", (json_int_t)o->warmup, "correctness",
		      "on the target: every implementation's output compared byte for byte "
		      "with the oracle's (TFLite reference_integer_ops loops, computed on the "
		      "host), before any timing; a failing case is never timed",
		      "inputs",
		      "input, weights and requantization are read-only in DDR; the output, "
		      "the only buffer a kernel writes, is re-initialized before every "
		      "iteration, outside the counted region",
		      "interrupts",
		      "the SysTick 1 ms interrupt stays enabled (it extends the 24-bit "
		      "counter); its handler's few instructions per ~62,500 are in the "
		      "counts; nothing else runs"));
	json_object_set(art, "build", json_object_get(info, "build"));
	json_object_set(art, "pmu", json_object_get(info, "pmu"));
	json_object_set_new(art, "kernels", sec);
	json_decref(info);
	*art_out = art;
	return 0;
}

/* What --board qemu-an547 asks for without --pmu-counters (the method's
 * events for the Helium kernels). */
static const char *const DEFAULT_ITEMS[] = {"INST_RETIRED", "MVE_INST_RETIRED",
					    "MVE_STALL_RESOURCE_MEM", "MVE_PRED",
					    "MVE_INT_MAC_RETIRED"};
#define PMU_ITEMS_MAX 64u

int kpmu_request(const char *list, int qemu, struct ergon_pmu_plan *plan, struct ergon_err *err)
{
	memset(plan, 0, sizeof *plan);
	if (list == NULL && qemu)
		return ergon_pmu_plan(DEFAULT_ITEMS, sizeof DEFAULT_ITEMS / sizeof DEFAULT_ITEMS[0],
				      plan, err);
	if (list == NULL || strcmp(list, "none") == 0)
		return 0;
	char *copy = strdup(list);
	const char *items[PMU_ITEMS_MAX];
	size_t n = 0;
	int rc = 0;
	if (copy == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	char *p = copy;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma != NULL)
			*comma = '\0';
		if (*p == '\0') {
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--pmu-counters '%s': an empty name; give event names "
					   "separated by commas (ergon counters list), or none",
					   list);
			break;
		}
		if (n == PMU_ITEMS_MAX) {
			rc = ergon_err_set(err, ERGON_EUSAGE, "--pmu-counters: more than %u names",
					   PMU_ITEMS_MAX);
			break;
		}
		if (strcmp(p, "none") == 0) {
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--pmu-counters '%s': none means no events and stands "
					   "alone; give either none or event names",
					   list);
			break;
		}
		items[n++] = p;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	if (rc == 0) {
		struct ergon_err e = {0};
		rc = ergon_pmu_plan(items, n, plan, &e);
		if (rc)
			ergon_err_set(err, rc, "--pmu-counters: %s", e.msg);
	}
	/* The limit is the kernel firmware's (its case blob has room for
	 * ERT_KBLOB_MAX_PASSES passes). The host counts no event, so nothing
	 * on it runs passes; it keeps the same limit so that a request it
	 * takes also runs on qemu-an547 or a board, and the message says so
	 * rather than blaming a firmware the host does not run. */
	if (rc == 0 && plan->npasses > ERT_KBLOB_MAX_PASSES) {
		if (qemu)
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "--pmu-counters: the events need %zu passes; the "
					   "kernel firmware runs at most %u (up to %u events per "
					   "pass, grouped cpu/memory/mve): ask fewer, or run twice",
					   plan->npasses, ERT_KBLOB_MAX_PASSES,
					   ERT_KBLOB_PASS_EVENTS);
		else
			rc = ergon_err_set(
			    err, ERGON_EUSAGE,
			    "--pmu-counters: the events need %zu passes; --board host counts "
			    "no PMU event (each would be reported unsupported: ergon reads no "
			    "counter of the host's CPU), and takes at most the %u passes (up "
			    "to %u events per pass, grouped cpu/memory/mve) that the kernel "
			    "firmware of --board qemu-an547 or a board runs, so the same "
			    "request runs there: ask fewer, or run twice",
			    plan->npasses, ERT_KBLOB_MAX_PASSES, ERT_KBLOB_PASS_EVENTS);
		ergon_pmu_plan_cleanup(plan);
	}
	free(copy);
	return rc;
}

/* Why --board B, not host or qemu-an547, cannot run the kernels, told by
 * what ergon knows of B: a board with a port in ergon-target whose
 * descriptor has no kernels_main (qemu-an505) has no kernel firmware; one
 * whose port has it still runs only where the case blob's loader is (the
 * AN547's DDR, kernels_qemu.c); a board of the registry without a port
 * has nothing to build; anything else is unknown. */
static int board_refused(const char *board, struct ergon_err *err)
{
	struct ergon_fw_port *port = malloc(sizeof *port);
	int found = 0;
	struct ergon_err e2 = {0};
	if (port != NULL && ergon_fw_port_find(board, port, &found, &e2) != 0)
		found = 0; /* the ports cannot be read: say what the registry knows */
	int rc;
	if (found && port->kernels_main[0] == '\0')
		rc = ergon_err_set(
		    err, ERGON_EUSAGE,
		    "--board %s: its port (%s) has no kernel firmware: the descriptor has no "
		    "kernels_main; run --board qemu-an547 (Cortex-M55 under QEMU) or --board "
		    "host, or give the port a kernels_main (docs/internals/ports.md)",
		    board, port->file);
	else if (found)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--board %s: its port (%s) names a kernels_main, but ergon kernels "
				   "run loads the cases only into the AN547's DDR under QEMU; run "
				   "--board qemu-an547 or --board host",
				   board, port->file);
	else if (ergon_board_find(board) != NULL)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--board %s: no port in ergon-target (ergon config boards, the "
				   "port column), so no kernel firmware to build; run --board "
				   "qemu-an547 or --board host, or measure on the board and give "
				   "the samples to ergon kernels report",
				   board);
	else
		rc = ergon_err_set(err, ERGON_EUSAGE, "--board %s: unknown board (host, qemu-an547)",
				   board);
	free(port);
	return rc;
}

/* The options: the board (host or qemu-an547), the counts, the
 * implementations, the PMU events (planned into *plan), exactly one
 * source of cases. */
static int check_options(const struct ergon_kernels_run_options *o, int *qemu, unsigned *impls,
			 struct ergon_pmu_plan *plan, struct ergon_err *err)
{
	*qemu = o->board != NULL && strcmp(o->board, "qemu-an547") == 0;
	if (o->board == NULL)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--board (none): unknown board (host, qemu-an547)");
	if (!*qemu && strcmp(o->board, "host") != 0)
		return board_refused(o->board, err);
	if (o->iterations < 1 || o->iterations > ITER_MAX || o->warmup < 0 || o->warmup > ITER_MAX)
		return ergon_err_set(err, ERGON_ERANGE,
				     "--iterations must be 1..%ld and the warm-up 0..%ld", ITER_MAX,
				     ITER_MAX);
	if (o->repeat < 0 || o->repeat > ERGON_KERNELS_MAX_REPEAT)
		return ergon_err_set(err, ERGON_ERANGE, "--repeat %ld: must be 1..%d", o->repeat,
				     ERGON_KERNELS_MAX_REPEAT);
	int rc = impl_list(o, *qemu, impls, err);
	if (rc == 0)
		rc = kpmu_request(o->pmu_counters, *qemu, plan, err);
	if (rc != 0)
		return rc;
	if ((o->shapes_path == NULL) == (o->model_path == NULL))
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "give exactly one of --shapes FILE and --from-model MODEL.tflite");
	return 0;
}

/* The cases, from a shapes file or a model's own layers; those the kernels
 * cannot take go to *refused. *text and *model hold what the cases point
 * into (the caller frees them after the cases). */
static int build_cases(const struct ergon_kernels_run_options *o, struct kcase **cases, size_t *n,
		       json_t **refused, char **text, struct ergon_model **model,
		       struct ergon_err *err)
{
	int suites = o->suites ? o->suites : (KC_CONV | KC_DWCONV | KC_FC);
	int rc;
	if (o->shapes_path != NULL) {
		size_t len = 0;
		rc = ergon_file_read_all(o->shapes_path, SHAPES_MAX, text, &len, err);
		if (rc == 0)
			rc = kcases_from_shapes(*text, len, o->shapes_path, suites, cases, n,
						refused, err);
	} else {
		rc = ergon_model_open(o->model_path, model, err);
		if (rc == 0)
			rc = kcases_from_model(ergon_model_tfl(*model), o->model_path, suites,
					       cases, n, refused, err);
	}
	if (rc == 0 && *n == 0)
		rc = ergon_err_set(err, ERGON_EREFUSED,
				   "%s: no conv/dwconv/fc case to run (%zu refused, see above; "
				   "or none in --suite)",
				   o->shapes_path ? o->shapes_path : o->model_path,
				   json_array_size(*refused));
	return rc;
}

/* The requested PMU events' counts per case and implementation
 * (kernels_pmu.c): counted where the firmware's PMU counted (run_qemu
 * left {counted, why} in art's "pmu"), else each one "unsupported" with
 * the board's reason. With repetitions, the counts are the last
 * repetition's. */
static int attach_pmu(json_t *art, json_t *sec, const struct kcase *cases, size_t n,
		      const struct ergon_pmu_plan *plan, const char *requested,
		      struct ergon_err *err)
{
	const json_t *fw = json_object_get(art, "pmu");
	const int counted = json_is_true(json_object_get(fw, "counted"));
	const char *why = json_string_value(json_object_get(fw, "why"));
	char *why_copy = strdup(why ? why
				    : "the host build runs on this machine's CPU, whose counters "
				      "ergon does not read: the Armv8.1-M PMU events are a "
				      "Cortex-M55's (run --board qemu-an547 or on a board)");
	if (why_copy == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	json_object_del(art, "pmu");
	int rc = kpmu_attach(art, sec, cases, n, plan, requested, counted, why_copy, err);
	free(why_copy);
	return rc;
}

/* `ergon kernels run`, its stages in order: the options, the cases,
 * correctness then timing on the board (run_host | run_qemu, which make
 * the artifact's board part), the artifact's cases and samples. */
int ergon_kernels_run(const struct ergon_kernels_run_options *o, json_t **artifact,
		      char **samples_out, size_t *samples_len, struct ergon_err *err)
{
	struct kcase *cases = NULL;
	size_t n = 0;
	json_t *refused = NULL, *sec = NULL, *art = NULL;
	struct ergon_model *model = NULL;
	struct ergon_kernels_data *d = NULL;
	char *text = NULL;
	uint64_t *raw = NULL;
	struct ergon_dynbuf samples;
	struct ergon_pmu_plan plan = {0};
	int qemu = 0;
	unsigned impls = 0;
	ergon_dynbuf_init(&samples, 512u * 1024u * 1024u);
	*artifact = NULL;
	*samples_out = NULL;
	int rc = check_options(o, &qemu, &impls, &plan, err);
	if (rc == 0)
		rc = build_cases(o, &cases, &n, &refused, &text, &model, err);
	if (rc == 0)
		rc = ergon_kernels_data_new(&d, err);
	if (rc != 0)
		goto cleanup;
	long reps = o->repeat > 1 ? o->repeat : 1;
	ergon_dynbuf_adds(&samples, reps > 1 ? "case,impl,correct,count,overhead,repetition\n"
					     : "case,impl,correct,count,overhead\n");
	if (!qemu) {
		raw = malloc((size_t)o->iterations * sizeof *raw);
		if (raw == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
			goto cleanup;
		}
	}
	/* Every repetition is the whole measurement of every case, into its
	 * own collection, then merged with its repetition number. */
	struct rep_progress rp = {.o = o, .reps = reps};
	struct ergon_kernels_run_options orep = *o;
	if (reps > 1 && o->progress != NULL) {
		orep.progress = rep_progress_fn;
		orep.progress_ctx = &rp;
	}
	o = &orep;
	struct ergon_mtime mt;
	ergon_mtime_start(&mt);
	for (long r = 1; r <= reps && rc == 0; r++) {
		rp.rep = r;
		struct ergon_kernels_data *dr = NULL;
		struct ergon_dynbuf sr;
		ergon_dynbuf_init(&sr, 512u * 1024u * 1024u);
		json_t *ar = NULL;
		json_t *ref_r = r == 1 ? refused : json_array();
		rc = ergon_kernels_data_new(&dr, err);
		if (rc == 0)
			rc = qemu ? run_qemu(cases, n, o, impls, &plan, dr, &sr, &ar, err)
				  : run_host(cases, n, o, dr, &sr, ref_r, raw, &ar, err);
		if (rc == 0 && reps > 1)
			rc = ergon_kernels_data_merge(d, dr, (unsigned)r, err);
		if (rc == 0 && reps > 1)
			rc = tag_samples(&samples, &sr, r, err);
		else if (rc == 0)
			ergon_dynbuf_add(&samples, sr.p ? sr.p : "", sr.len);
		if (r != 1)
			json_decref(ref_r);
		ergon_dynbuf_free(&sr);
		ergon_kernels_data_free(dr);
		/* The artifact of the last repetition carries the timing and
		 * build; its statistics are made again from every repetition. */
		json_decref(art);
		art = ar;
	}
	ergon_mtime_end(&mt);
	if (rc == 0 && art != NULL) {
		json_t *mj = ergon_mtime_json(&mt);
		json_object_set_new(art, "measurement_time", mj ? mj : json_null());
	}
	if (rc == 0 && reps > 1) {
		json_t *all = NULL;
		const json_t *ks = json_object_get(art, "kernels");
		const char *unit = json_string_value(json_object_get(ks, "unit"));
		const char *base = json_string_value(json_object_get(ks, "baseline"));
		rc = ergon_kernels_summarize(d, base, unit, &all, err);
		if (rc == 0) {
			json_t *note = json_object_get(ks, "overhead_note");
			if (note)
				json_object_set(all, "overhead_note", note);
			json_object_set_new(art, "kernels", all);
			json_object_set_new(json_object_get(art, "timing"), "repeat",
					    json_integer(reps));
		}
	}
	if (rc != 0)
		goto cleanup;
	sec = json_object_get(art, "kernels");
	json_incref(sec);
	json_object_del(art, "kernels");
	json_object_set_new(art, "source",
			    json_pack("{s:s, s:s}", "form", o->shapes_path ? "shapes" : "model",
				      "path", o->shapes_path ? o->shapes_path : o->model_path));
	json_t *wl = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(wl, cases[i].record);
	json_object_set_new(art, "workloads", wl);
	json_object_set(art, "refused", refused);
	rc = attach_pmu(art, sec, cases, n, &plan, o->pmu_counters, err);
	if (rc != 0)
		goto cleanup;
	json_object_set_new(art, "kernels", sec);
	sec = NULL;
	*samples_out = ergon_dynbuf_take(&samples, samples_len);
	if (*samples_out == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto cleanup;
	}
	*artifact = art;
	art = NULL;
cleanup:
	ergon_dynbuf_free(&samples);
	json_decref(sec);
	json_decref(art);
	json_decref(refused);
	ergon_kernels_data_free(d);
	kcases_free(cases, n);
	ergon_model_free(model);
	ergon_pmu_plan_cleanup(&plan);
	free(text);
	free(raw);
	return rc;
}

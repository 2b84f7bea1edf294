/* The four MLPerf Tiny models through every host kernel path the build and
 * the CPU have (portable, SSE4.1, AVX2, NEON; ERGON_TFL_SIMD's values; on
 * x86-64 the NEON path is refused here and unit/test_tfl_neon_qemu runs it
 * under qemu-aarch64), with the
 * filters packed once (as ergon_model_open does) and packed per invoke:
 * the output of every operator, on the ten inputs of the LiteRT oracle,
 * must be the bytes recorded from the interpreter before the kernel paths
 * existed (tests/oracle/tfl_op_outputs.txt: FNV-1a 64 per operator output,
 * main 8004839, whose outputs equal the Cortex-M55 build's). */
#include "ergon/model.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

struct digests {
	const struct ert_tfl_model *t;
	uint64_t h[ERT_TFL_MAX_OPS];
	int n;
};

static void op_done(void *ctx, const struct ert_tfl_op *op)
{
	struct digests *d = ctx;
	const struct ert_tfl_tensor *o = &d->t->tensors[op->out];
	if (d->n < ERT_TFL_MAX_OPS)
		d->h[d->n++] = fnv1a64(d->t->arena + o->arena_offset, o->bytes);
}

static void every_path_gives_the_recorded_bytes(void **state)
{
	(void)state;
	char *refs = ts_strf("%s/tests/oracle/tfl_op_outputs.txt", getenv("ERGON_SOURCE_DIR"));
	char *text = ts_read_file(refs, NULL);
	assert_non_null(text);
	static const enum ert_tfl_simd paths[] = {ERT_TFL_SIMD_PORTABLE, ERT_TFL_SIMD_SSE41,
						  ERT_TFL_SIMD_AVX2, ERT_TFL_SIMD_NEON};
	struct ergon_model *m = NULL;
	char loaded[96] = "";
	static struct digests d;
	int lines = 0, runs = 0, paths_run = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		char name[96], kind[16];
		int n_ops = 0, used = 0;
		assert_int_equal(sscanf(line, "%95s %15s %d%n", name, kind, &n_ops, &used), 3);
		uint64_t want[ERT_TFL_MAX_OPS];
		assert_true(n_ops > 0 && n_ops <= ERT_TFL_MAX_OPS);
		const char *p = line + used;
		for (int i = 0; i < n_ops; i++) {
			int k = 0;
			unsigned long long v = 0;
			assert_int_equal(sscanf(p, " %16llx%n", &v, &k), 1);
			want[i] = v;
			p += k;
		}
		if (strcmp(name, loaded) != 0) {
			ergon_model_free(m);
			char *rel = ts_strf("models/%s", name);
			char *path = ts_fixture(rel);
			struct ergon_err err = {0};
			if (ergon_model_open(path, &m, &err) != 0)
				fail_msg("%s", err.msg);
			snprintf(loaded, sizeof loaded, "%s", name);
			free(rel);
			free(path);
		}
		/* The interpreter's own object: the test attaches its hook and
		 * takes the packed filters away for one run. */
		struct ert_tfl_model *t = (struct ert_tfl_model *)ergon_model_tfl(m);
		const uint8_t *pack = t->pack;
		assert_non_null(pack);
		d.t = t;
		t->op_done = op_done;
		t->op_done_ctx = &d;
		paths_run = 0;
		for (unsigned i = 0; i < sizeof paths / sizeof paths[0]; i++) {
			if (!ert_tfl_simd_available(paths[i])) {
				assert_int_equal(ert_tfl_simd_set(t, paths[i]),
						 ERT_TFL_E_UNSUPPORTED);
				continue;
			}
			assert_int_equal(ert_tfl_simd_set(t, paths[i]), 0);
			paths_run++;
			for (int packed = 0; packed < 2; packed++) {
				t->pack = packed ? pack : NULL;
				uint32_t in_len = 0;
				uint8_t *in = ert_tfl_input(t, 0, &in_len);
				struct ergon_err err = {0};
				/* Stale bytes must not pass for fresh ones. */
				memset(t->arena, 0xa5, t->activation_bytes);
				assert_int_equal(ergon_model_pattern(kind, in, in_len, &err), 0);
				d.n = 0;
				assert_int_equal(ergon_model_invoke(m, &err), 0);
				assert_int_equal(d.n, n_ops);
				for (int k = 0; k < n_ops; k++)
					if (d.h[k] != want[k])
						fail_msg("%s on %s, path %s, filters packed %s: "
							 "operator %d's output differs from the "
							 "recorded one",
							 name, kind, ert_tfl_simd_name(t),
							 packed ? "once" : "per invoke", k);
				runs++;
			}
		}
		t->pack = pack;
		t->op_done = NULL;
		lines++;
	}
	/* Four models, ten inputs each. */
	assert_int_equal(lines, 40);
	assert_true(paths_run >= 1);
	print_message(
	    "tfl paths: %d runs (%d paths in this build and CPU), every operator as recorded\n",
	    runs, paths_run);
	ergon_model_free(m);
	free(text);
	free(refs);
}

/* ERGON_TFL_SIMD picks the path of ergon_model_open's model; a bad value
 * is refused with the variable, the value and what this build has. */
static void env_picks_the_path(void **state)
{
	(void)state;
	char *path = ts_fixture("models/kws_ref_model.tflite");
	struct ergon_model *m = NULL;
	struct ergon_err err = {0};
	setenv("ERGON_TFL_SIMD", "portable", 1);
	assert_int_equal(ergon_model_open(path, &m, &err), 0);
	assert_string_equal(ert_tfl_simd_name(ergon_model_tfl(m)), "portable");
	ergon_model_free(m);
	m = NULL;
	/* The case does not matter: PORTABLE is the portable path, and the
	 * instruction sets as they are written (NEON, AVX2, SSE4.1) are the
	 * paths they name, present or refused as absent like the lower case. */
	setenv("ERGON_TFL_SIMD", "PORTABLE", 1);
	assert_int_equal(ergon_model_open(path, &m, &err), 0);
	assert_string_equal(ert_tfl_simd_name(ergon_model_tfl(m)), "portable");
	ergon_model_free(m);
	m = NULL;
	static const struct {
		const char *upper;
		enum ert_tfl_simd path;
		const char *name;
	} upper[] = {{"NEON", ERT_TFL_SIMD_NEON, "neon"},
		     {"AVX2", ERT_TFL_SIMD_AVX2, "avx2"},
		     {"SSE4.1", ERT_TFL_SIMD_SSE41, "sse4.1"},
		     {"Auto", ERT_TFL_SIMD_AUTO, NULL}};
	for (size_t i = 0; i < sizeof upper / sizeof upper[0]; i++) {
		struct ergon_err e = {0};
		setenv("ERGON_TFL_SIMD", upper[i].upper, 1);
		int rc = ergon_model_open(path, &m, &e);
		if (upper[i].path == ERT_TFL_SIMD_AUTO || ert_tfl_simd_available(upper[i].path)) {
			assert_int_equal(rc, 0);
			if (upper[i].name != NULL)
				assert_string_equal(ert_tfl_simd_name(ergon_model_tfl(m)),
						    upper[i].name);
			ergon_model_free(m);
			m = NULL;
		} else {
			assert_int_equal(rc, ERGON_EUSAGE);
			assert_null(m);
			assert_non_null(strstr(e.msg, "kernel path not in this build or CPU"));
			assert_null(strstr(e.msg, "unknown kernel path"));
		}
	}
	setenv("ERGON_TFL_SIMD", "avx3", 1);
	assert_int_equal(ergon_model_open(path, &m, &err), ERGON_EUSAGE);
	assert_null(m);
	assert_non_null(strstr(err.msg, "ERGON_TFL_SIMD=avx3: unknown kernel path"));
	assert_non_null(strstr(err.msg, "auto, portable"));
	/* ... and the fix: one of those, or unset (the fastest). */
	assert_non_null(strstr(err.msg, "(set one of them, or unset ERGON_TFL_SIMD for the "
					"fastest; docs/USAGE.md section 4)"));
	/* A known path this build or CPU lacks (NEON on x86-64, the x86
	 * paths on AArch64) is refused as such, not run as another. */
	const char *absent = !ert_tfl_simd_available(ERT_TFL_SIMD_NEON)	  ? "neon"
			     : !ert_tfl_simd_available(ERT_TFL_SIMD_AVX2) ? "avx2"
									  : NULL;
	if (absent != NULL) {
		struct ergon_err err2 = {0};
		setenv("ERGON_TFL_SIMD", absent, 1);
		assert_int_equal(ergon_model_open(path, &m, &err2), ERGON_EUSAGE);
		assert_null(m);
		assert_non_null(strstr(err2.msg, "kernel path not in this build or CPU"));
	}
	unsetenv("ERGON_TFL_SIMD");
	assert_int_equal(ergon_model_open(path, &m, &err), 0);
	/* auto: the best path this CPU runs. */
	const char *want = ert_tfl_simd_available(ERT_TFL_SIMD_AVX2)	? "avx2"
			   : ert_tfl_simd_available(ERT_TFL_SIMD_SSE41) ? "sse4.1"
			   : ert_tfl_simd_available(ERT_TFL_SIMD_NEON)	? "neon"
									: "portable";
	assert_string_equal(ert_tfl_simd_name(ergon_model_tfl(m)), want);
	ergon_model_free(m);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_path_gives_the_recorded_bytes),
	    cmocka_unit_test(env_picks_the_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

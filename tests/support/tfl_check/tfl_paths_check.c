/* The four MLPerf Tiny models through every host kernel path this build and
 * CPU have, on the target runtime alone (no libergon, so that it also
 * builds for a foreign architecture: tests/unit/test_tfl_neon_qemu.sh
 * cross-builds it for AArch64 and runs it under qemu-aarch64). Each model
 * is loaded, bound and packed as ergon_model_open does; every operator's
 * output on the ten inputs of tests/oracle/tfl_op_outputs.txt, with the
 * filters packed once and packed per invoke, must have the recorded
 * FNV-1a 64 (main 8004839, before the kernel paths existed; its outputs
 * equal the Cortex-M55 build's).
 *
 *   tfl_paths_check ORACLE MODELS_DIR
 *
 * Prints one line per model, input, path and packing: "model input path
 * packed digest", the digest an FNV-1a 64 over the operators' digests, so
 * that two builds' outputs can be compared line by line. Exit 0 when every
 * operator matched, 1 otherwise (naming the first difference). */
#include "ergon/ert_tfl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a64(const uint8_t *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV0 0xcbf29ce484222325ull

/* The input patterns of `ergon model infer --input`: zero, ramp, xsN
 * (xorshift32 from seed N, the top byte of each state), written out from
 * docs/USAGE.md's definition rather than taken from libergon. */
static int pattern(const char *kind, uint8_t *buf, size_t len)
{
	if (strcmp(kind, "zero") == 0) {
		memset(buf, 0, len);
		return 0;
	}
	if (strcmp(kind, "ramp") == 0) {
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)i;
		return 0;
	}
	if (strncmp(kind, "xs", 2) != 0)
		return -1;
	char *end = NULL;
	unsigned long seed = strtoul(kind + 2, &end, 10);
	if (end == kind + 2 || *end != '\0' || seed == 0)
		return -1;
	uint32_t s = (uint32_t)seed;
	for (size_t i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		buf[i] = (uint8_t)(s >> 24);
	}
	return 0;
}

struct run {
	const struct ert_tfl_model *t;
	uint64_t h[ERT_TFL_MAX_OPS];
	int n;
};

static void op_done(void *ctx, const struct ert_tfl_op *op)
{
	struct run *r = ctx;
	const struct ert_tfl_tensor *o = &r->t->tensors[op->out];
	if (r->n < ERT_TFL_MAX_OPS)
		r->h[r->n++] = fnv1a64(r->t->arena + o->arena_offset, o->bytes, FNV0);
}

/* A loaded model and what it owns. */
struct loaded {
	char name[96];
	uint8_t *bytes, *arena, *pack;
	struct ert_tfl_model tfl;
};

static void unload(struct loaded *m)
{
	free(m->bytes);
	free(m->arena);
	free(m->pack);
	m->bytes = m->arena = m->pack = NULL;
	m->name[0] = '\0';
}

static int load(struct loaded *m, const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open (the shared fixtures: ERGON_SHARED_DIR)\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	m->bytes = aligned_alloc(16, ((size_t)len + 16) & ~(size_t)15);
	if (m->bytes == NULL || fread(m->bytes, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	fclose(f);
	struct ert_tfl_err err;
	if (ert_tfl_load(&m->tfl, m->bytes, (size_t)len, &err) != 0) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	const size_t alen = ((size_t)m->tfl.arena_bytes + 16) & ~(size_t)15;
	m->arena = aligned_alloc(16, alen);
	if (m->arena == NULL)
		return -1;
	memset(m->arena, 0, alen);
	if (ert_tfl_bind(&m->tfl, m->arena, m->tfl.arena_bytes, &err) != 0) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	const size_t plen = ((size_t)ert_tfl_pack_bytes(&m->tfl) + 63) & ~(size_t)63;
	m->pack = aligned_alloc(64, plen > 0 ? plen : 64);
	if (m->pack == NULL || ert_tfl_pack(&m->tfl, m->pack, plen) != 0) {
		fprintf(stderr, "%s: packing the filters failed\n", path);
		return -1;
	}
	snprintf(m->name, sizeof m->name, "%s", name);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tfl_paths_check ORACLE MODELS_DIR\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open\n", argv[1]);
		return 2;
	}
	static const enum ert_tfl_simd paths[] = {ERT_TFL_SIMD_PORTABLE, ERT_TFL_SIMD_SSE41,
						  ERT_TFL_SIMD_AVX2, ERT_TFL_SIMD_NEON};
	static struct loaded m;
	static struct run r;
	static char line[8192];
	int lines = 0, runs = 0, bad = 0;
	while (!bad && fgets(line, sizeof line, f) != NULL) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char name[96], kind[16];
		int n_ops = 0, used = 0;
		if (sscanf(line, "%95s %15s %d%n", name, kind, &n_ops, &used) != 3 || n_ops <= 0 ||
		    n_ops > ERT_TFL_MAX_OPS) {
			fprintf(stderr, "%s: bad line %d\n", argv[1], lines + 1);
			bad = 1;
			break;
		}
		uint64_t want[ERT_TFL_MAX_OPS];
		const char *p = line + used;
		for (int i = 0; i < n_ops; i++) {
			int k = 0;
			unsigned long long v = 0;
			if (sscanf(p, " %16llx%n", &v, &k) != 1) {
				fprintf(stderr, "%s: %s %s: %d digests, want %d\n", argv[1], name,
					kind, i, n_ops);
				return 1;
			}
			want[i] = v;
			p += k;
		}
		if (strcmp(name, m.name) != 0) {
			unload(&m);
			if (load(&m, argv[2], name) != 0)
				return 1;
		}
		struct ert_tfl_model *t = &m.tfl;
		r.t = t;
		t->op_done = op_done;
		t->op_done_ctx = &r;
		for (unsigned i = 0; !bad && i < sizeof paths / sizeof paths[0]; i++) {
			if (ert_tfl_simd_set(t, paths[i]) != 0)
				continue;
			for (int packed = 1; !bad && packed >= 0; packed--) {
				t->pack = packed ? m.pack : NULL;
				uint32_t in_len = 0;
				uint8_t *in = ert_tfl_input(t, 0, &in_len);
				/* Stale bytes must not pass for fresh ones. */
				memset(t->arena, 0xa5, t->activation_bytes);
				if (in == NULL || pattern(kind, in, in_len) != 0) {
					fprintf(stderr, "%s: input %s refused\n", name, kind);
					return 1;
				}
				r.n = 0;
				if (ert_tfl_invoke(t) != 0 || r.n != n_ops) {
					fprintf(stderr, "%s on %s, path %s: invoke failed\n", name,
						kind, ert_tfl_simd_name(t));
					return 1;
				}
				uint64_t all = FNV0;
				for (int k = 0; k < n_ops; k++) {
					if (r.h[k] != want[k] && !bad) {
						fprintf(stderr,
							"%s on %s, path %s, filters packed %s: "
							"operator %d's output differs from the "
							"recorded one\n",
							name, kind, ert_tfl_simd_name(t),
							packed ? "once" : "per invoke", k);
						bad = 1;
					}
					uint8_t b[8];
					for (int j = 0; j < 8; j++)
						b[j] = (uint8_t)(r.h[k] >> (8 * j));
					all = fnv1a64(b, 8, all);
				}
				printf("%s %s %s %s %016llx\n", name, kind, ert_tfl_simd_name(t),
				       packed ? "once" : "per-invoke", (unsigned long long)all);
				runs++;
			}
		}
		t->pack = m.pack;
		t->op_done = NULL;
		lines++;
	}
	fclose(f);
	unload(&m);
	if (bad)
		return 1;
	if (lines != 40) {
		fprintf(stderr, "%s: %d lines, want 40 (four models, ten inputs)\n", argv[1],
			lines);
		return 1;
	}
	fprintf(stderr, "tfl_paths_check: %d runs, every operator as recorded\n", runs);
	return 0;
}

/* The TFLite model reader and interpreter on arbitrary bytes: loading must
 * never read outside the buffer, and whatever it accepts must bind and run
 * without touching memory outside the model, the arena and the tensors
 * (ASan/UBSan watch). A refused model always carries a message. Models
 * that would take long to run (many MACs) are loaded but not invoked.
 * Every host kernel path the CPU has runs each model, with the filters
 * packed per invoke and packed once (ert_tfl_pack), and must give the
 * portable path's output bytes. */
#include "ergon/ert_tfl.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct ert_tfl_model model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy so that reads past `size` are caught exactly. */
	uint8_t *buf = malloc(size > 0 ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	struct ert_tfl_err err;
	int rc = ert_tfl_load(&model, buf, size, &err);
	if (rc != 0) {
		if (err.code != rc || err.msg[0] == '\0')
			abort();
		free(buf);
		return 0;
	}
	if (model.arena_bytes <= (8u << 20) && model.total_macs <= 2000000u) {
		uint8_t *arena = malloc(model.arena_bytes > 0 ? model.arena_bytes : 1);
		if (arena != NULL) {
			if (model.arena_bytes > 0 &&
			    ert_tfl_bind(&model, arena, model.arena_bytes - 1, &err) !=
				ERT_TFL_E_ARENA)
				abort(); /* one byte short must be refused */
			if (ert_tfl_bind(&model, arena, model.arena_bytes, &err) != 0)
				abort();
			static const enum ert_tfl_simd paths[] = {
			    ERT_TFL_SIMD_PORTABLE, ERT_TFL_SIMD_SSE41, ERT_TFL_SIMD_AVX2,
			    ERT_TFL_SIMD_NEON};
			uint32_t plen = ert_tfl_pack_bytes(&model);
			uint8_t *pack =
			    plen <= (8u << 20) ? aligned_alloc(32, (plen + 32) & ~31u) : NULL;
			uint8_t *first = NULL;
			uint32_t out_n = 0;
			for (unsigned p = 0; p < sizeof paths / sizeof paths[0]; p++) {
				if (ert_tfl_simd_set(&model, paths[p]) != 0)
					continue;
				for (int packed = 0; packed < 2; packed++) {
					if (packed &&
					    (pack == NULL || ert_tfl_pack(&model, pack, plen) != 0))
						continue;
					if (!packed)
						model.pack = NULL;
					/* A model may read a tensor before any operator
					 * wrote it: every run starts from the same arena. */
					memset(model.arena, 0, model.activation_bytes);
					uint32_t n = 0;
					uint8_t *in = ert_tfl_input(&model, 0, &n);
					if (in != NULL)
						memset(in, 0x5a, n);
					if (ert_tfl_invoke(&model) != 0)
						abort();
					const uint8_t *out = ert_tfl_output(&model, 0, &out_n);
					if (out == NULL)
						continue;
					if (first == NULL) {
						first = malloc(out_n > 0 ? out_n : 1);
						if (first == NULL)
							abort();
						memcpy(first, out, out_n);
					} else if (memcmp(first, out, out_n) != 0) {
						abort(); /* a path gave other bytes */
					}
				}
			}
			free(first);
			free(pack);
			free(arena);
		}
	}
	free(buf);
	return 0;
}

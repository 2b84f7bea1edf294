/* An ergon workload plugin doing real work: one int8 x int8 -> int32 matrix
 * multiply of N x N matrices per invoke, the inner loop of a quantised
 * fully-connected or 1x1-convolution layer.
 *
 * ARG is N (default 64, 1..1024): plugin:libergon_matmul_plugin.so,128
 * prepare returns 1 for a malformed N, 2 when out of memory. invoke returns
 * 3 if the result's checksum differs from the one computed in prepare (the
 * same inputs must give the same product: a cheap self-check that a
 * miscompiled or faulty kernel does not go unnoticed).
 */
#include "ergon/plugin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mm {
	int n;
	int8_t *a, *b;
	int32_t *c;
	int64_t checksum;
};

static int64_t mm_run(struct mm *m)
{
	int n = m->n;
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int32_t acc = 0;
			for (int k = 0; k < n; k++)
				acc += (int32_t)m->a[i * n + k] * (int32_t)m->b[k * n + j];
			m->c[i * n + j] = acc;
			sum += acc;
		}
	}
	return sum;
}

static void mm_free(struct mm *m)
{
	if (m == NULL)
		return;
	free(m->a);
	free(m->b);
	free(m->c);
	free(m);
}

static int mm_prepare(void **state, const char *arg)
{
	int n = 64;
	if (arg && *arg) {
		n = 0;
		for (const char *p = arg; *p; p++) {
			if (*p < '0' || *p > '9' || n > 1024)
				return 1;
			n = n * 10 + (*p - '0');
		}
		if (n < 1 || n > 1024)
			return 1;
	}
	struct mm *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return 2;
	m->n = n;
	size_t nn = (size_t)n * (size_t)n;
	m->a = malloc(nn);
	m->b = malloc(nn);
	m->c = malloc(nn * sizeof(int32_t));
	if (!m->a || !m->b || !m->c) {
		mm_free(m);
		return 2;
	}
	/* Deterministic inputs in the full int8 range. */
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < nn; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		m->a[i] = (int8_t)(x & 0xff);
		m->b[i] = (int8_t)((x >> 8) & 0xff);
	}
	m->checksum = mm_run(m);
	*state = m;
	return 0;
}

static int mm_invoke(void *state)
{
	struct mm *m = state;
	return mm_run(m) == m->checksum ? 0 : 3;
}

static void mm_teardown(void *state)
{
	mm_free(state);
}

__attribute__((visibility("default"))) const struct ergon_plugin_v1 ergon_workload_plugin_v1 = {
    .abi_version = ERGON_PLUGIN_ABI_VERSION,
    .name = "int8-matmul",
    .prepare = mm_prepare,
    .invoke = mm_invoke,
    .teardown = mm_teardown,
};

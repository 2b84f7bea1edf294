/* The part of cmocka that tests/unit/test_tfl_conv_shapes.c uses, for the
 * cross builds of tests/unit/test_tfl_neon_qemu.sh: Debian has no cmocka
 * for a foreign architecture without multiarch, and the kernel test needs
 * nothing else. Put this folder first on the include path in place of
 * tests/support; a failed assertion prints where and exits 1. */
#ifndef ERGON_CROSS_TEST_SUPPORT_H
#define ERGON_CROSS_TEST_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define fail_msg(...)                                           \
	do {                                                    \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                   \
		fprintf(stderr, "\n");                          \
		exit(1);                                        \
	} while (0)
#define print_message(...) printf(__VA_ARGS__)
#define assert_true(c)                               \
	do {                                         \
		if (!(c))                            \
			fail_msg("%s is false", #c); \
	} while (0)
#define assert_int_equal(a, b)                                         \
	do {                                                           \
		const intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b); \
		if (a_ != b_)                                          \
			fail_msg("%s = %jd, want %jd", #a, a_, b_);    \
	} while (0)
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_null(p) assert_true((p) == NULL)

struct CMUnitTest {
	const char *name;
	void (*fn)(void **state);
};
#define cmocka_unit_test(f) \
	{                   \
#f, f       \
	}
#define cmocka_run_group_tests(tests, setup, teardown) \
	((void)(setup), (void)(teardown), ts_cross_run((tests), sizeof(tests) / sizeof((tests)[0])))

static inline int ts_cross_run(const struct CMUnitTest *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *state = NULL;
		printf("[ RUN      ] %s\n", t[i].name);
		fflush(stdout);
		t[i].fn(&state);
		printf("[       OK ] %s\n", t[i].name);
	}
	printf("[  PASSED  ] %zu test(s).\n", n);
	return 0;
}

#endif

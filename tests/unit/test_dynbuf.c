/* The growable buffer: contents, the growth limit, and failures that stick
 * so a caller checks once at the end. */
#include <stdlib.h>
#include <string.h>

#include "ergon/dynbuf.h"
#include "test_support.h"

static void builds_text(void **state)
{
	(void)state;
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, 1 << 20);
	ergon_dynbuf_adds(&b, "a=");
	ergon_dynbuf_addf(&b, "%d,%s", 42, "x");
	ergon_dynbuf_add(&b, "\0y", 2); /* bytes, NUL included */
	assert_int_equal(ergon_dynbuf_error(&b), 0);
	size_t len = 0;
	char *s = ergon_dynbuf_take(&b, &len);
	assert_int_equal(len, 8); /* "a=42,x" + NUL + "y" */
	assert_memory_equal(s, "a=42,x\0y", 8);
	assert_int_equal(s[8], '\0');
	free(s);
	/* Empty take gives "" not NULL. */
	s = ergon_dynbuf_take(&b, &len);
	assert_non_null(s);
	assert_int_equal(len, 0);
	assert_string_equal(s, "");
	free(s);
}

static void limit_is_exact_and_sticky(void **state)
{
	(void)state;
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, 10);
	ergon_dynbuf_adds(&b, "0123456789"); /* exactly the limit: fine */
	assert_int_equal(ergon_dynbuf_error(&b), 0);
	ergon_dynbuf_adds(&b, "A"); /* one byte over */
	assert_int_equal(ergon_dynbuf_error(&b), ERGON_ETOOBIG);
	ergon_dynbuf_adds(&b, ""); /* later appends do nothing */
	ergon_dynbuf_addf(&b, "%s", "more");
	assert_int_equal(ergon_dynbuf_error(&b), ERGON_ETOOBIG);
	assert_int_equal(b.len, 10);
	assert_null(ergon_dynbuf_take(&b, NULL));
	ergon_dynbuf_free(&b);
	/* A formatted append over the limit fails without writing past it. */
	ergon_dynbuf_init(&b, 4);
	ergon_dynbuf_addf(&b, "%s", "12345");
	assert_int_equal(ergon_dynbuf_error(&b), ERGON_ETOOBIG);
	ergon_dynbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builds_text),
		cmocka_unit_test(limit_is_exact_and_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

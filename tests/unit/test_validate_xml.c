/* ergon_xml_escape (include/ergon/validate.h): what ergon validate puts into
 * JUnit XML attributes and text must be well-formed XML 1.0 whatever an
 * error message holds. Expected bytes by hand: the five characters XML
 * escapes (' as &#39;), U+FFFD (EF BF BD) for C0 controls other than tab/LF/CR and for
 * each invalid UTF-8 byte, valid multi-byte UTF-8 kept as it is. */
#include "ergon/dynbuf.h"
#include "ergon/validate.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static void esc(const char *in, const char *want)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, 4096);
	ergon_xml_escape(&b, in);
	assert_int_equal(ergon_dynbuf_error(&b), 0);
	assert_string_equal(b.p ? b.p : "", want);
	ergon_dynbuf_free(&b);
}

static void entities(void **state)
{
	(void)state;
	esc("a<b>&\"c\"'d'", "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
	esc("", "");
	esc(NULL, "");
}

static void controls_replaced(void **state)
{
	(void)state;
	/* Tab, LF and CR are allowed in XML 1.0; BEL, ESC and 0x1F are not. */
	esc("x\ty\nz\r", "x\ty\nz\r");
	esc("\a\x1b[31m\x1f", "\xef\xbf\xbd\xef\xbf\xbd[31m\xef\xbf\xbd");
}

static void utf8_kept_or_repaired(void **state)
{
	(void)state;
	esc("\xc2\xb1 5 \xc2\xb5J", "\xc2\xb1 5 \xc2\xb5J"); /* ± and µ stay */
	/* A lone continuation byte and a truncated 2-byte lead. */
	esc("a\x80"
	    "b\xc3",
	    "a\xef\xbf\xbd"
	    "b\xef\xbf\xbd");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(entities),
	    cmocka_unit_test(controls_replaced),
	    cmocka_unit_test(utf8_kept_or_repaired),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

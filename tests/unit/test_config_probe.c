/* target.probe's forms (src/pipelines/config/resolve.c): gdb://HOST:PORT,
 * pyocd[:UID] and bmp:/dev/... with target.transport rtt; the probe forms
 * only on hardware boards. Each refusal names the key and the fix. */
#include "ergon/config.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

struct probe_case {
	const char *board, *probe, *transport;
	int rc;		    /* ergon_config_resolve's answer */
	const char *needle; /* in the message when refused */
};

static void probe_forms(void **state)
{
	(void)state;
	static const struct probe_case cases[] = {
	    {"apollo510_evb", "pyocd", NULL, 0, NULL},
	    {"apollo510_evb", "pyocd:0240000034544e45", NULL, 0, NULL},
	    {"apollo510_evb", "bmp:/dev/ttyACM0", NULL, 0, NULL},
	    {"apollo510_evb", "gdb://127.0.0.1:3333", NULL, 0, NULL},
	    {"apollo510_evb", "pyocd:", NULL, ERGON_ECONFIG, "letters, digits"},
	    {"apollo510_evb", "pyocd:a b", NULL, ERGON_ECONFIG, "letters, digits"},
	    {"apollo510_evb", "pyocdx", NULL, ERGON_ECONFIG, "is not gdb://HOST:PORT, pyocd[:UID]"},
	    {"apollo510_evb", "bmp:ttyACM0", NULL, ERGON_ECONFIG, "bmp:/dev/ttyACM0"},
	    {"apollo510_evb", "bmp:/dev/ttyACM0", "uart", ERGON_ECONFIG,
	     "set target.transport: rtt"},
	    {"sim", "pyocd", NULL, ERGON_ECONFIG, "the virtual bench; drop target.probe"},
	    {"qemu-an547", "bmp:/dev/ttyACM0", "rtt", ERGON_ECONFIG, "emulated; drop target.probe"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct probe_case *c = &cases[i];
		struct ergon_config cfg;
		struct ergon_err err = {0};
		assert_int_equal(ergon_config_init(&cfg), 0);
		char *b = ts_strf("target.board=%s", c->board);
		char *p = ts_strf("target.probe=%s", c->probe);
		assert_int_equal(ergon_config_set(&cfg, b, ERGON_CFG_CLI, &err), 0);
		assert_int_equal(ergon_config_set(&cfg, p, ERGON_CFG_CLI, &err), 0);
		if (c->transport) {
			char *t = ts_strf("target.transport=%s", c->transport);
			assert_int_equal(ergon_config_set(&cfg, t, ERGON_CFG_CLI, &err), 0);
			free(t);
		}
		int rc = ergon_config_resolve(&cfg, &err);
		if (rc != c->rc)
			fail_msg("case %zu (%s on %s): rc %d, expected %d: %s", i, c->probe,
				 c->board, rc, c->rc, err.msg);
		if (c->needle &&
		    (strstr(err.msg, c->needle) == NULL || strstr(err.msg, "target.probe") == NULL))
			fail_msg("case %zu: '%s' not in: %s", i, c->needle, err.msg);
		free(b);
		free(p);
		ergon_config_cleanup(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(probe_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

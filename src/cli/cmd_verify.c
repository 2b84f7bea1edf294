/* ergon verify: the digest and every figure recomputed from the series. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/artifact.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdio.h>

/* --json: {"file", "ok", "report_id", "provenance", "integrity", "error",
 * "tolerance"} on stdout; the human lines stay off stdout. */
static void verify_json(int as_json, const char *path, const json_t *r, int rc,
			const struct ergon_err *err)
{
	if (!as_json)
		return;
	json_t *o = json_pack("{s:s, s:b, s:{s:f, s:f}}", "file", path, "ok", rc == 0, "tolerance",
			      "relative", ERGON_VERIFY_REL, "absolute", ERGON_VERIFY_ABS);
	if (o == NULL)
		return;
	if (r) {
		json_object_set(o, "report_id", json_object_get(r, "report_id"));
		json_object_set(o, "provenance",
				json_object_get(json_object_get(r, "provenance"), "kind"));
		json_object_set(o, "integrity", json_object_get(r, "integrity"));
	}
	if (rc)
		json_object_set_new(o, "error",
				    json_string(err->msg[0] ? err->msg : ergon_strerror(rc)));
	cli_print_json(o);
	json_decref(o);
}

static int run(int argc, char **argv)
{
	const char *path = NULL;
	int as_json = 0;
	struct cli_parser p;
	cli_init(&p, "verify", argc, argv);
	while (cli_next(&p)) {
		if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_positional(&p, &path)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "REPORT.json", path))
		return p.rc;
	struct ergon_err err = {0};
	json_t *r = NULL;
	int rc = ergon_artifact_load(path, (size_t)4 << 30, &r, &err);
	if (rc) {
		verify_json(as_json, path, NULL, rc, &err);
		return ergon_cli_fail("verify", &err);
	}
	rc = ergon_report_verify(r, &err);
	if (as_json)
		verify_json(1, path, r, rc, &err);
	if (rc) {
		json_decref(r);
		fprintf(stderr, "ergon verify: %s: FAILED: %s\n", path, err.msg);
		return ergon_exit_code(rc);
	}
	if (as_json) {
		json_decref(r);
		return ERGON_EXIT_OK;
	}
	printf("%s: OK: report_id matches its content and every figure follows from the "
	       "embedded series (tolerance %g relative + %g absolute)\n",
	       argv[1], ERGON_VERIFY_REL, ERGON_VERIFY_ABS);
	printf("  provenance %s, integrity %s, %s\n",
	       json_string_value(json_object_get(json_object_get(r, "provenance"), "kind")),
	       json_string_value(json_object_get(r, "integrity")),
	       json_string_value(json_object_get(r, "report_id")));
	json_decref(r);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_verify = {
    .name = "verify",
    .summary = "check a report: digest and every figure recomputed from its series",
    .help = "Usage: ergon verify [--json] REPORT.json\n\n"
	    "Recomputes report_id (sha256 of the RFC 8785 form without report_id) and\n"
	    "every derived figure from the embedded series, and compares them within a\n"
	    "stated tolerance (1e-9 relative + 1e-12 absolute). Exit 0 only when both\n"
	    "hold; otherwise the first field that differs is named (exit 1), or the\n"
	    "byte where the file stops being JSON (exit 3).\n\n"
	    "With --json the result (file, ok, report_id, provenance, integrity, error,\n"
	    "tolerance) is printed as JSON on stdout instead.\n\n"
	    "What this proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon verify run/report.json\n",
    .run = run,
};

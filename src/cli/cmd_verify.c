/* ergon verify: the digest and every figure recomputed from the series. */
#include "cli.h"
#include "ergon/artifact.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdio.h>

static int run(int argc, char **argv)
{
	if (argc != 2)
		return ergon_cli_usage("verify", "expected one REPORT.json");
	struct ergon_err err = {0};
	json_t *r = NULL;
	/* Streamed: the digest and the figures in bounded memory, whatever
	 * the report's size (docs/internals/verify.md). */
	int rc = ergon_report_verify_file(argv[1], (size_t)4 << 30, 0, &r, &err);
	if (rc == ERGON_EVERIFY) {
		fprintf(stderr, "ergon verify: %s: FAILED: %s\n", argv[1], err.msg);
		return ergon_exit_code(rc);
	}
	if (rc)
		return ergon_cli_fail("verify", &err);
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
    .help = "Usage: ergon verify REPORT.json\n\n"
	    "Recomputes report_id (sha256 of the RFC 8785 form without report_id) and\n"
	    "every derived figure from the embedded series, and compares them within a\n"
	    "stated tolerance (1e-9 relative + 1e-12 absolute); checks that the report\n"
	    "agrees with itself (provenance against the instrument, the uncertainty\n"
	    "model, the window counts). Exit 0 only when all hold; otherwise the first\n"
	    "field that fails is named (exit 1; a figure with how far off it is, in\n"
	    "decades of the tolerance, never the value the series give), or the byte\n"
	    "where the file stops being JSON (exit 3). The file is streamed: memory\n"
	    "stays bounded whatever its size (docs/internals/verify.md).\n\n"
	    "What this proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon verify run/report.json\n",
    .run = run,
};

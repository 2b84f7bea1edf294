/* ergon verify: the digest and every figure recomputed from the series. */
#include "cli.h"
#include "ergon/artifact.h"
#include "ergon/report.h"
#include "ergon/signature.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* --pubkey PUB: the signature, after the digest and the figures. */
static int check_signature(const json_t *r, const char *pubkey, char *said, size_t cap,
			   struct ergon_err *err)
{
	struct ergon_public_key pub;
	char signer[ERGON_KEY_ID_MAX];
	if (pubkey == NULL) {
		if (ergon_artifact_signer(r, signer))
			snprintf(said, cap, "signed by %s (not checked: give --pubkey PUB)",
				 signer);
		else
			snprintf(said, cap, "unsigned");
		return 0;
	}
	int rc = ergon_public_key_load(pubkey, &pub, err);
	if (rc == 0)
		rc = ergon_artifact_check_signature(r, &pub, err);
	if (rc == 0)
		snprintf(said, cap, "signature OK: signed by %s", pub.key_id);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *path = NULL, *pubkey = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--pubkey") == 0 && i + 1 < argc)
			pubkey = argv[++i];
		else if (strncmp(argv[i], "--pubkey=", 9) == 0)
			pubkey = argv[i] + 9;
		else if (argv[i][0] == '-')
			return ergon_cli_usage("verify", "unknown option or missing value '%s'",
					       argv[i]);
		else if (path == NULL)
			path = argv[i];
		else
			return ergon_cli_usage("verify", "expected one REPORT.json");
	}
	if (path == NULL)
		return ergon_cli_usage("verify", "expected one REPORT.json");
	struct ergon_err err = {0};
	char sigtxt[160] = "";
	json_t *r = NULL;
	int rc = ergon_artifact_load(path, (size_t)4 << 30, &r, &err);
	if (rc)
		return ergon_cli_fail("verify", &err);
	const char *schema = json_string_value(json_object_get(r, "schema"));
	/* Other artifacts (profile and analyze summaries) with --pubkey: the
	 * digest and the signature; their figures are not recomputed. */
	int other = pubkey && (schema == NULL || strcmp(schema, ERGON_REPORT_SCHEMA) != 0);
	rc = other ? ergon_artifact_check_digest(r, &err) : ergon_report_verify(r, &err);
	if (rc == 0)
		rc = check_signature(r, pubkey, sigtxt, sizeof sigtxt, &err);
	if (rc == 0 && other) {
		printf("%s: OK: report_id matches its content; %s\n  figures NOT recomputed: "
		       "verify recomputes the figures of %s reports only, this is %s\n",
		       path, sigtxt, ERGON_REPORT_SCHEMA, schema ? schema : "(no schema)");
		json_decref(r);
		return ERGON_EXIT_OK;
	}
	if (rc) {
		json_decref(r);
		fprintf(stderr, "ergon verify: %s: FAILED: %s\n", path, err.msg);
		return ergon_exit_code(rc);
	}
	printf("%s: OK: report_id matches its content and every figure follows from the "
	       "embedded series (tolerance %g relative + %g absolute)\n",
	       path, ERGON_VERIFY_REL, ERGON_VERIFY_ABS);
	printf("  provenance %s, integrity %s, %s\n",
	       json_string_value(json_object_get(json_object_get(r, "provenance"), "kind")),
	       json_string_value(json_object_get(r, "integrity")),
	       json_string_value(json_object_get(r, "report_id")));
	printf("  %s\n", sigtxt);
	json_decref(r);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_verify = {
    .name = "verify",
    .summary = "check a report: digest and every figure recomputed from its series",
    .help = "Usage: ergon verify REPORT.json [--pubkey PUB]\n\n"
	    "Recomputes report_id (sha256 of the RFC 8785 form without report_id) and\n"
	    "every derived figure from the embedded series, and compares them within a\n"
	    "stated tolerance (1e-9 relative + 1e-12 absolute). Exit 0 only when both\n"
	    "hold; otherwise the first field that differs is named (exit 1), or the\n"
	    "byte where the file stops being JSON (exit 3).\n\n"
	    "--pubkey PUB also checks the signature (ergon sign, ergon keygen): it must be\n"
	    "made by PUB's key for this report_id; the signer's key id is printed. Without\n"
	    "--pubkey a signature is named but not checked. Other artifacts (profile and\n"
	    "analyze summary.json) are checked with --pubkey for digest and signature only;\n"
	    "the output says their figures were not recomputed.\n\n"
	    "What this proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon verify run/report.json\n"
	    "  ergon verify run/report.json --pubkey bench.key.pub\n",
    .run = run,
};

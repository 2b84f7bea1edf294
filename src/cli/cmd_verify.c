/* ergon verify: the digest and every figure recomputed from the series. */
#include "cli.h"
#include "ergon/artifact.h"
#include "ergon/report.h"
#include "ergon/signature.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
	/* Streamed: the digest and the figures in bounded memory, whatever
	 * the report's size (docs/internals/verify.md). */
	int rc = ergon_report_verify_file(path, (size_t)4 << 30, 0, &r, &err);
	struct stat st;
	/* A report fails its own checks; a smaller file may be another kind of
	 * artifact (profile, parse and analyze summaries, energy models): then
	 * the digest, and the signature with --pubkey; their figures are not
	 * recomputed. They are small: read whole. */
	if (rc == ERGON_EVERIFY && stat(path, &st) == 0 && st.st_size < ((off_t)64 << 20)) {
		struct ergon_err first = err;
		json_decref(r);
		r = NULL;
		memset(&err, 0, sizeof err);
		rc = ergon_artifact_load(path, (size_t)64 << 20, &r, &err);
		if (rc)
			return ergon_cli_fail("verify", &err);
		const char *schema = json_string_value(json_object_get(r, "schema"));
		/* A sustained report (it has series: any version), or no schema
		 * at all, stays failed; a profile body (summary.json of parse,
		 * profile and analyze) or another artifact kind goes on. */
		if (schema == NULL ||
		    (strcmp(schema, ERGON_REPORT_SCHEMA) == 0 &&
		     json_object_get(r, "profile") == NULL &&
		     json_object_get(r, "power") == NULL) ||
		    json_object_get(r, "series") != NULL) {
			json_decref(r);
			fprintf(stderr, "ergon verify: %s: FAILED: %s\n", path, first.msg);
			return ergon_exit_code(ERGON_EVERIFY);
		}
		rc = ergon_artifact_check_digest(r, &err);
		if (rc == 0)
			rc = check_signature(r, pubkey, sigtxt, sizeof sigtxt, &err);
		if (rc == 0) {
			printf("%s: OK: report_id matches its content; %s\n  figures NOT "
			       "recomputed: verify recomputes the figures of sustained (ergon run) "
			       "reports only, this is %s with a %s body\n",
			       path, sigtxt, schema,
			       json_object_get(r, "profile") ? "profile"
			       : json_object_get(r, "power") ? "power"
							     : "non-sustained");
			json_decref(r);
			return ERGON_EXIT_OK;
		}
	} else if (rc == 0) {
		rc = check_signature(r, pubkey, sigtxt, sizeof sigtxt, &err);
	}
	if (rc == ERGON_EVERIFY) {
		json_decref(r);
		fprintf(stderr, "ergon verify: %s: FAILED: %s\n", path, err.msg);
		return ergon_exit_code(rc);
	}
	if (rc) {
		json_decref(r);
		return ergon_cli_fail("verify", &err);
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
	    "stated tolerance (1e-9 relative + 1e-12 absolute); checks that the report\n"
	    "agrees with itself (provenance against the instrument, the uncertainty\n"
	    "model, the window counts). Exit 0 only when all hold; otherwise the first\n"
	    "field that fails is named (exit 1; a figure with how far off it is, in\n"
	    "decades of the tolerance, never the value the series give), or the byte\n"
	    "where the file stops being JSON (exit 3). The file is streamed: memory\n"
	    "stays bounded whatever its size (docs/internals/verify.md).\n\n"
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

/* ergon verify: the digest and every figure recomputed from the series. */
#include "cli.h"
#include "cli_opts.h"
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
		/* Without the key the signature cannot be checked, but whether
		 * it was made for this report can. */
		int rc = ergon_artifact_signature_bound(r, err);
		if (rc)
			return rc;
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

/* --json: {"file", "ok", "report_id", "provenance", "integrity", "error",
 * "tolerance", "figures_recomputed", "signature"} on stdout; the human lines stay off stdout. */
static void verify_json(int as_json, const char *path, const json_t *r, int rc,
			const struct ergon_err *err, const char *sigtxt, int figures)
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
	json_object_set_new(o, "figures_recomputed", json_boolean(figures));
	if (sigtxt && sigtxt[0])
		json_object_set_new(o, "signature", json_string(sigtxt));
	if (rc)
		json_object_set_new(o, "error",
				    json_string(err->msg[0] ? err->msg : ergon_strerror(rc)));
	cli_print_json(o);
	json_decref(o);
}

/* "ergon verify: PATH: FAILED: WHY" (FAILED in red on a terminal), or
 * with --json its JSON error line; returns the exit code. */
static int failed(const char *path, int rc, const struct ergon_err *err)
{
	if (cli_json_on()) {
		char msg[sizeof err->msg + 256];
		snprintf(msg, sizeof msg, "%.200s: FAILED: %s", path, err->msg);
		return cli_report_error("verify", ergon_exit_code(rc), ergon_strerror_name(rc), msg,
					0);
	}
	fprintf(stderr, "ergon verify: %s: %sFAILED%s: %s\n", path, cli_on(stderr, CLI_BAD),
		cli_off(stderr), err->msg);
	return ergon_exit_code(rc);
}

static int run(int argc, char **argv)
{
	const char *path = NULL, *pubkey = NULL;
	int as_json = 0;
	struct cli_parser p;
	cli_init(&p, "verify", argc, argv);
	while (cli_next(&p)) {
		if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_str(&p, "--pubkey", &pubkey)) {
		} else if (cli_positional(&p, &path)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "REPORT.json", path))
		return p.rc;
	struct ergon_err err = {0};
	char sigtxt[160] = "";
	json_t *r = NULL;
	/* Streamed: the digest and the figures in bounded memory, whatever
	 * the report's size (docs/internals/verify.md). */
	int rc = ergon_report_verify_file(path, (size_t)4 << 30, 0, &r, &err);
	int figures = 1;
	size_t budgets = 0;
	struct stat st;
	/* A report fails its own checks; a smaller file may be another kind of
	 * artifact (profile, parse and analyze summaries, kernels, energy
	 * models): then the digest, and the signature with --pubkey; their
	 * figures are not recomputed. They are small: read whole. */
	if (rc == ERGON_EVERIFY && stat(path, &st) == 0 && st.st_size < ((off_t)64 << 20)) {
		struct ergon_err first = err;
		json_decref(r);
		r = NULL;
		memset(&err, 0, sizeof err);
		figures = 0;
		rc = ergon_artifact_load(path, (size_t)64 << 20, &r, &err);
		if (rc) {
			verify_json(as_json, path, NULL, rc, &err, NULL, figures);
			return ergon_cli_fail("verify", &err);
		}
		const char *schema = json_string_value(json_object_get(r, "schema"));
		/* A sustained report (it has series: any version), or no schema
		 * at all, stays failed with its first finding; a profile body
		 * (summary.json) or another artifact kind goes on. */
		if (schema == NULL || json_object_get(r, "series") != NULL ||
		    (strcmp(schema, ERGON_REPORT_SCHEMA) == 0 &&
		     json_object_get(r, "profile") == NULL &&
		     json_object_get(r, "power") == NULL)) {
			err = first;
			rc = ERGON_EVERIFY;
			figures = 1;
			verify_json(as_json, path, NULL, rc, &err, NULL, figures);
			json_decref(r);
			return failed(path, rc, &err);
		}
		rc = ergon_artifact_check_digest(r, &err);
		/* Whatever the body, its uncertainty budgets are recomputed from
		 * their terms and the gate from them (docs/UNCERTAINTY.md). */
		if (rc == 0)
			rc = ergon_artifact_check_budgets(r, &budgets, &err);
	}
	if (rc == 0)
		rc = check_signature(r, pubkey, sigtxt, sizeof sigtxt, &err);
	verify_json(as_json, path, r, rc, &err, sigtxt, figures);
	if (rc == ERGON_EVERIFY) {
		json_decref(r);
		return failed(path, rc, &err);
	}
	if (rc) {
		json_decref(r);
		return ergon_cli_fail("verify", &err);
	}
	if (as_json) {
		json_decref(r);
		return ERGON_EXIT_OK;
	}
	if (!figures) {
		const char *schema = json_string_value(json_object_get(r, "schema"));
		printf("%s: %sOK%s: report_id matches its content; %s\n  figures NOT "
		       "recomputed: verify recomputes the figures of sustained (ergon run) "
		       "reports only, this is %s with a %s body\n",
		       path, cli_on(stdout, CLI_GOOD), cli_off(stdout), sigtxt, schema ? schema : "(no schema)",
		       json_object_get(r, "profile") ? "profile"
		       : json_object_get(r, "power") ? "power"
						     : "non-sustained");
		if (budgets)
			printf("  %zu uncertainty budget(s) recomputed from their terms, and the "
			       "gate from them\n",
			       budgets);
		json_decref(r);
		return ERGON_EXIT_OK;
	}
	printf("%s: %sOK%s: report_id matches its content and every figure follows from the "
	       "embedded series (tolerance %g relative + %g absolute)\n",
	       path, cli_on(stdout, CLI_GOOD), cli_off(stdout), ERGON_VERIFY_REL, ERGON_VERIFY_ABS);
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
    .help = "Usage: ergon verify [--json] [--pubkey PUB] REPORT.json\n\n"
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
	    "--pubkey a signature is named but not checked. Other artifacts (profile,\n"
	    "parse and analyze summary.json, kernels.json) get their digest checked, and\n"
	    "their signature with --pubkey; the output says their figures were not\n"
	    "recomputed.\n\n"
	    "With --json the result (file, ok, report_id, provenance, integrity, error,\n"
	    "tolerance, signature) is printed as JSON on stdout instead.\n\n"
	    "What this proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon verify run/report.json\n"
	    "  ergon verify run/report.json --pubkey bench.key.pub\n",
    .run = run,
    .exits = {[0] = "the artifact verifies (whatever verdict it states: it is printed)",
	      [1] = "it does not verify: the first field that fails is named",
	      [3] = "the file cannot be read or is not JSON (the byte where it stops)",
	      [4] = CLI_EXIT_NONE},
};

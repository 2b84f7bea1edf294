/* ergon sign: sign an artifact's report_id with an Ed25519 key. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_sign.h"

#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv)
{
	const char *key = NULL, *path = NULL;
	int json = 0;
	struct cli_parser p;
	cli_init(&p, "sign", argc, argv);
	while (cli_next(&p)) {
		if (cli_str(&p, "--key", &key)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_positional(&p, &path)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "ARTIFACT", path) || cli_require(&p, "--key", key))
		return p.rc;
	struct ergon_secret_key k;
	int rc = ergon_cli_sign_load("sign", key, &k);
	if (rc)
		return rc;
	char key_id[ERGON_KEY_ID_MAX];
	snprintf(key_id, sizeof key_id, "%s", k.key_id);
	rc = ergon_cli_sign_written("sign", key, path, &k);
	if (rc || !json)
		return rc;
	return cli_json_doc("sign", json_pack("{s:s, s:s}", "signed", path, "key_id", key_id));
}

const struct ergon_cli_command ergon_cli_cmd_sign = {
    .name = "sign",
    .summary = "sign an artifact's report_id with an Ed25519 key",
    .help = "Usage: ergon sign ARTIFACT --key KEY [--json]\n\n"
	    "Checks that ARTIFACT's report_id matches its content (a tampered artifact is\n"
	    "never signed), then stores \"signature\": {algorithm, key_id, report_id, value}\n"
	    "in it. report_id does not cover the signature, so it stays the same. Signing\n"
	    "again replaces the signature. Check it with ergon verify ARTIFACT --pubkey PUB.\n\n"
	    "What a signature proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon sign run/report.json --key bench.key\n",
    .run = run,
    .exits = {[0] = "the artifact was signed",
	      [1] = "refused: the artifact's report_id does not match its content",
	      [3] = "the artifact or the key cannot be read or written",
	      [4] = CLI_EXIT_NONE},
};

/* ergon sign: sign an artifact's report_id with an Ed25519 key. */
#include "cli.h"
#include "cli_args.h"
#include "cli_sign.h"

#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv)
{
	const char *key = NULL, *path = NULL;
	for (int i = 1; i < argc; i++) {
		int m = cli_opt(argc, argv, &i, "--key", &key);
		if (m < 0)
			return ergon_cli_usage("sign", "--key needs a value (the secret key file)");
		if (m > 0)
			continue;
		if (argv[i][0] == '-' && argv[i][1] != '\0')
			return ergon_cli_usage("sign", "unknown option '%s'", argv[i]);
		if (path != NULL)
			return ergon_cli_usage("sign", "expected one ARTIFACT, got '%s' too",
					       argv[i]);
		path = argv[i];
	}
	if (path == NULL || key == NULL)
		return ergon_cli_usage("sign", "expected ARTIFACT --key KEY");
	struct ergon_secret_key k;
	int rc = ergon_cli_sign_load("sign", key, &k);
	if (rc)
		return rc;
	return ergon_cli_sign_written("sign", key, path, &k);
}

const struct ergon_cli_command ergon_cli_cmd_sign = {
    .name = "sign",
    .summary = "sign an artifact's report_id with an Ed25519 key",
    .help = "Usage: ergon sign ARTIFACT --key KEY\n\n"
	    "Checks that ARTIFACT's report_id matches its content (a tampered artifact is\n"
	    "never signed), then stores \"signature\": {algorithm, key_id, report_id, value}\n"
	    "in it. report_id does not cover the signature, so it stays the same. Signing\n"
	    "again replaces the signature. Check it with ergon verify ARTIFACT --pubkey PUB.\n\n"
	    "What a signature proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon sign run/report.json --key bench.key\n",
    .run = run,
};

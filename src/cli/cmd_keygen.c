/* ergon keygen: make an Ed25519 key pair for signing artifacts. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/signature.h"

#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv)
{
	const char *out = NULL;
	unsigned flags = 0;
	int force = 0, json = 0;
	struct cli_parser p;
	cli_init(&p, "keygen", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		if (cli_str(&p, "--out", &out)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "--out", out))
		return p.rc;
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report("keygen", out, clean);
	struct ergon_err err = {0};
	char key_id[ERGON_KEY_ID_MAX];
	if (ergon_keygen(out, flags, key_id, &err) != 0)
		return ergon_cli_fail("keygen", &err);
	if (json) {
		char pub[4096];
		snprintf(pub, sizeof pub, "%s.pub", out);
		return cli_json_doc("keygen", json_pack("{s:s, s:s, s:s}", "secret_key", out,
							"public_key", pub, "key_id", key_id));
	}
	printf("wrote %s (secret key, mode 0600) and %s.pub (public key)\nkey id %s\n", out, out,
	       key_id);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_keygen = {
    .name = "keygen",
    .summary = "make an Ed25519 key pair for signing artifacts",
    .help = "Usage: ergon keygen --out KEY [--force] [--clean] [--json]\n\n"
	    "Writes the secret key to KEY (mode 0600: keep it on the bench) and the public\n"
	    "key to KEY.pub (give it to whoever checks your artifacts). Both are one line\n"
	    "of text; the key id is ed25519:<first 16 bytes of sha256(public key)>.\n"
	    "Refuses to replace an existing file unless --force.\n\n"
	    "What a signature proves and what it does not: docs/THREAT_MODEL.md.\n\n"
	    "Example:\n  ergon keygen --out bench.key\n"
	    "  ergon run ... --sign bench.key\n"
	    "  ergon verify run/report.json --pubkey bench.key.pub\n",
    .run = run,
    .exits = {[0] = "the key pair was written",
	      [1] = CLI_EXIT_NONE,
	      [3] = "a key file cannot be written (or exists: --force replaces it)",
	      [4] = CLI_EXIT_NONE},
};

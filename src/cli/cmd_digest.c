/* ergon digest: print the report_id an artifact's content hashes to. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/artifact.h"
#include "ergon/jcs.h"

#include <jansson.h>
#include <stdio.h>

static int run(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	struct cli_parser p;
	cli_init(&p, "digest", argc, argv);
	while (cli_next(&p))
		if (!cli_flag(&p, "--json", &json) && !cli_positional(&p, &path))
			cli_unknown(&p);
	if (p.rc || cli_require(&p, "FILE.json", path))
		return p.rc;
	struct ergon_err err = {0};
	json_t *j = NULL;
	int rc = ergon_artifact_load(path, (size_t)1 << 31, &j, &err);
	if (rc)
		return ergon_cli_fail("digest", &err);
	char id[72];
	rc = ergon_artifact_digest(j, id, &err);
	json_decref(j);
	if (rc)
		return ergon_cli_fail("digest", &err);
	if (json)
		return cli_json_doc("digest", json_pack("{s:s, s:s}", "file", path, "report_id", id));
	printf("%s\n", id);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_digest = {
    .name = "digest",
    .summary = "print the sha256 of a JSON file's RFC 8785 form (without report_id, signature)",
    .help = "Usage: ergon digest FILE.json [--json]\n\n"
	    "Prints sha256:<hex> of the RFC 8785 (JCS) canonical form of the JSON object\n"
	    "in FILE without its members report_id and signature: the report_id ergon\n"
	    "would give it.\n\n"
	    "Example:\n  ergon digest run/report.json\n",
    .run = run,
    .exits = {[0] = "the report_id was printed",
	      [1] = CLI_EXIT_NONE,
	      [3] = "the file cannot be read or is not JSON",
	      [4] = CLI_EXIT_NONE},
};

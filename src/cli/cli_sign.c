/* --sign KEY for run, profile and analyze (cli_sign.h). */
#include "cli_sign.h"

#include "cli.h"
#include "cli_opts.h"

#include <stdio.h>
#include <string.h>

/* "ergon sign" takes the key as --key, the others as --sign. */
static const char *opt_label(const char *cmd)
{
	return strcmp(cmd, "sign") == 0 ? "" : "--sign: ";
}

static int fail(const char *cmd, int rc, const struct ergon_err *err)
{
	char msg[sizeof err->msg + 16];
	snprintf(msg, sizeof msg, "%s%s", opt_label(cmd), err->msg);
	return cli_report_error(cmd, ergon_exit_code(rc), ergon_strerror_name(rc), msg, 0);
}

int ergon_cli_sign_load(const char *cmd, const char *key_path, struct ergon_secret_key *key)
{
	struct ergon_err err = {0};
	if (key_path == NULL)
		return 0;
	int rc = ergon_secret_key_load(key_path, key, &err);
	if (rc)
		return fail(cmd, rc, &err);
	return 0;
}

int ergon_cli_sign_written(const char *cmd, const char *key_path, const char *path,
			   struct ergon_secret_key *key)
{
	struct ergon_err err = {0};
	if (key_path == NULL)
		return 0;
	char key_id[ERGON_KEY_ID_MAX];
	snprintf(key_id, sizeof key_id, "%s", key->key_id);
	int rc = ergon_artifact_sign_file(path, key, &err);
	ergon_secret_key_wipe(key);
	if (rc)
		return fail(cmd, rc, &err);
	cli_note(cmd, "signed %s with %s", path, key_id);
	return 0;
}

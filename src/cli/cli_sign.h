/* `--sign KEY` for the subcommands that write artifacts (run, profile,
 * analyze): the key is loaded before anything is measured, so a bad key
 * fails at once, and the written artifact is signed in place after. */
#ifndef ERGON_CLI_SIGN_H
#define ERGON_CLI_SIGN_H

#include "ergon/signature.h"

/* Load key_path (NULL: nothing to do, returns 0). On failure prints the
 * error and returns the exit code. */
int ergon_cli_sign_load(const char *cmd, const char *key_path, struct ergon_secret_key *key);
/* Sign the artifact at path with key (when key_path was given), print
 * "signed PATH (KEY_ID)", wipe the key. Returns an exit code (0 ok). */
int ergon_cli_sign_written(const char *cmd, const char *key_path, const char *path,
			   struct ergon_secret_key *key);

#endif

/* The effective-configuration table shared by `ergon config show` and
 * `ergon profile --dry-run`: every key, its value, origin and where. */
#ifndef ERGON_CLI_CONFIG_PRINT_H
#define ERGON_CLI_CONFIG_PRINT_H
#include "ergon/config.h"

#include <stdio.h>

void ergon_cli_config_print(FILE *f, const struct ergon_config *cfg);
/* The rules' warnings, one line each, prefixed "ergon <cmd>: ". */
void ergon_cli_config_print_issues(FILE *f, const char *cmd, const struct ergon_config *cfg);
#endif

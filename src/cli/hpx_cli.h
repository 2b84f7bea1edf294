/* Helpers shared by `ergon parse` and `ergon capture`: printing the top
 * layers of a profile. */
#ifndef ERGON_HPX_CLI_H
#define ERGON_HPX_CLI_H

#include <jansson.h>
#include <stdio.h>

/* The terminal table of the top layers of a profile body. */
void ergon_cli_hpx_print_top(FILE *f, const json_t *profile);

/* The --aggregation and --recording choices of parse and capture. */
extern const char *const ergon_cli_hpx_aggregations[];
extern const char *const ergon_cli_hpx_recordings[];

#endif

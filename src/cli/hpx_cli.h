/* Helpers shared by `ergon parse` and `ergon capture`: printing the top
 * layers of a profile. */
#ifndef ERGON_HPX_CLI_H
#define ERGON_HPX_CLI_H

#include "ergon/hpx_report.h"

#include <stdio.h>

/* The terminal table of the top layers of a profile, and its issues. */
void ergon_cli_hpx_print_top(FILE *f, const struct ergon_hpx_run_result *r);

/* The --aggregation and --recording choices of parse and capture. */
extern const char *const ergon_cli_hpx_aggregations[];
extern const char *const ergon_cli_hpx_recordings[];

#endif

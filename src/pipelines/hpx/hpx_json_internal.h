/* Private to the HPX pipelines (hpx_json.c, hpx_parse.c). */
#ifndef ERGON_HPX_JSON_INTERNAL_H
#define ERGON_HPX_JSON_INTERNAL_H

#include "ergon/error.h"
#include "ergon/hpx.h"

#include <jansson.h>

/* ergon_hpx_parser_to_json (without iterations) less the presets' own
 * tables: each preset is {name, header}, without its layers. That is all
 * summary.json and the CSVs read of a result (ergon_hpx_report_write); the
 * presets' tables are half the document's nodes, which `ergon parse` would
 * otherwise make and free unread. *out is owned by the caller. */
int hpx_parser_json_lean(struct ergon_hpx_parser *p, int aggregation, json_t **out,
			 struct ergon_err *err);

#endif

/* Private to the HPX pipelines (hpx_json.c, hpx_parse.c). */
#ifndef ERGON_HPX_JSON_INTERNAL_H
#define ERGON_HPX_JSON_INTERNAL_H

#include "ergon/error.h"
#include "ergon/hpx.h"

#include <jansson.h>

/* ergon_pmu_result_to_json without the presets' own tables: each preset is
 * {name, header}, with neither its layers nor its iterations. That is all
 * summary.json and the CSVs read of a result (ergon_hpx_report_write); the
 * presets' tables are half the document's nodes, which `ergon parse` would
 * otherwise make and free unread. *out is owned by the caller. */
int hpx_result_json_lean(const struct ergon_pmu_result *r, json_t **out, struct ergon_err *err);

#endif

/* Terminal output for HPX profiles (figures come from the library). */
#include "hpx_cli.h"

#include <string.h>

const char *const ergon_cli_hpx_aggregations[] = {"median", "mean", "trimmed", NULL};
const char *const ergon_cli_hpx_recordings[] = {"measured", "synthetic", "unknown", NULL};

void ergon_cli_hpx_print_top(FILE *f, const json_t *profile)
{
	const json_t *top = json_object_get(profile, "top_layers");
	const json_t *total = json_object_get(profile, "total_cycles");
	fprintf(f, "%zu layers, aggregation %s, validity %s\n",
		json_array_size(json_object_get(profile, "layers")),
		json_string_value(json_object_get(profile, "aggregation")),
		json_string_value(json_object_get(profile, "validity")));
	if (!json_is_number(total) || json_array_size(top) == 0) {
		fprintf(f, "no cycle counts in this profile\n");
	} else {
		fprintf(f, "Top layers by cycles (total cycles %.0f):\n", json_number_value(total));
		fprintf(f, "  %-6s %-28s %14s %7s\n", "layer", "op", "cycles", "%");
		size_t i;
		json_t *L;
		json_array_foreach(top, i, L)
		{
			char id[32];
			json_t *j = json_object_get(L, "id");
			if (json_is_integer(j))
				snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(j));
			else
				snprintf(id, sizeof(id), "%.31s",
					 json_is_string(j) ? json_string_value(j) : "?");
			json_t *op = json_object_get(L, "op");
			char opb[32];
			if (json_is_string(op))
				snprintf(opb, sizeof(opb), "%.28s", json_string_value(op));
			else
				snprintf(opb, sizeof(opb), "%lld",
					 (long long)json_integer_value(op));
			fprintf(f, "  %-6s %-28s %14.0f %6.1f%%\n", id, opb,
				json_number_value(json_object_get(L, "cycles")),
				json_number_value(json_object_get(L, "pct")));
		}
	}
	size_t i;
	json_t *is;
	json_array_foreach(json_object_get(profile, "issues"), i, is)
	{
		fprintf(f, "%s: %s: %s\n", json_string_value(json_object_get(is, "severity")),
			json_string_value(json_object_get(is, "code")),
			json_string_value(json_object_get(is, "message")));
	}
}

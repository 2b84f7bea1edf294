/* The effective-configuration table (see config_print.h). */
#include "config_print.h"

#include <jansson.h>

void ergon_cli_config_print(FILE *f, const struct ergon_config *cfg)
{
	fprintf(f, "board       : %s (%s)\n", cfg->board->name, cfg->board->soc);
	fprintf(f, "%-36s %-26s %-13s %s\n", "key", "value", "origin", "from");
	for (size_t i = 0; i < ergon_config_key_count(); i++) {
		char v[1100];
		ergon_config_value_text(cfg, i, v, sizeof(v));
		const char *where = cfg->where[i];
		fprintf(f, "%-36s %-26s %-13s %s%s%s\n", ergon_config_key_name(i),
			v[0] ? v : "\"\"", ergon_config_origin_name(cfg->origin[i]), where,
			cfg->note[i][0] && where[0] ? "; " : "", cfg->note[i]);
	}
}

void ergon_cli_config_print_issues(FILE *f, const char *cmd, const struct ergon_config *cfg)
{
	size_t k;
	json_t *issue;
	json_array_foreach(cfg->issues, k, issue)
	{
		fprintf(f, "ergon %s: %s: %s: %s\n", cmd,
			json_string_value(json_object_get(issue, "severity")),
			json_string_value(json_object_get(issue, "code")),
			json_string_value(json_object_get(issue, "message")));
	}
}

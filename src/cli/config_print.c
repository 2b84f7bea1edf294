/* The effective-configuration table (see config_print.h). */
#include "config_print.h"
#include "cli_opts.h"

#include <jansson.h>
#include <stdlib.h>

void ergon_cli_config_print(FILE *f, const struct ergon_config *cfg)
{
	/* The table itself is the library's (ergon_config_format), shared by
	 * `config show` and `profile --dry-run`. */
	char *text = ergon_config_format(cfg);
	if (text == NULL) {
		fputs("ergon: out of memory formatting the configuration\n", stderr);
		return;
	}
	fputs(text, f);
	free(text);
}

void ergon_cli_config_print_issues(FILE *f, const char *cmd, const struct ergon_config *cfg)
{
	size_t k;
	json_t *issue;
	json_array_foreach(cfg->issues, k, issue)
	{
		(void)f; /* stderr: cli_issue's stream */
		cli_issue(cmd, json_string_value(json_object_get(issue, "severity")),
			  json_string_value(json_object_get(issue, "code")),
			  json_string_value(json_object_get(issue, "message")));
	}
}

/* ergon instruments: list the instruments usable on this machine with
 * their identity, and for each one that is not usable, why and the fix. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/instrument.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void print_found(const struct ergon_instrument_driver *d, json_t *found)
{
	size_t i;
	json_t *e;
	json_array_foreach(found, i, e)
	{
		const char *id = json_string_value(json_object_get(e, "id"));
		printf("  %-28s", id ? id : d->name);
		const char *k;
		json_t *v;
		int first = 1;
		json_object_foreach(e, k, v)
		{
			if (strcmp(k, "id") == 0)
				continue;
			char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			printf("%s%s=%s", first ? " " : ", ", k, s ? s : "?");
			free(s);
			first = 0;
		}
		printf("\n");
	}
}

static int run(int argc, char **argv)
{
	struct ergon_instrument_options opts = {0};
	int as_json = 0;
	struct cli_parser p;
	cli_init(&p, "instruments", argc, argv);
	while (cli_next(&p)) {
		if (cli_str(&p, "--sysfs-root", &opts.sysfs_root)) {
		} else if (cli_flag(&p, "--json", &as_json)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	size_t n;
	const struct ergon_instrument_driver *const *d = ergon_instrument_drivers(&n);
	json_t *all = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *found = NULL;
		struct ergon_err err = {0};
		json_t *row =
		    json_pack("{s:s, s:s}", "driver", d[i]->name, "longname", d[i]->longname);
		if (d[i]->scan == NULL) {
			json_object_set_new(row, "usable", json_true());
			json_object_set_new(row, "found", json_array());
			json_object_set_new(row, "note",
					    json_string("needs no device; always available"));
		} else if (d[i]->scan(&opts, &found, &err) == 0 && found &&
			   json_array_size(found) > 0) {
			json_object_set_new(row, "usable", json_true());
			json_object_set_new(row, "found", found);
		} else {
			json_decref(found);
			json_object_set_new(row, "usable", json_false());
			json_object_set_new(row, "why",
					    json_string(err.msg[0] ? err.msg : "no device found"));
			json_object_set_new(row, "error",
					    json_string(ergon_strerror_name(err.code)));
		}
		json_array_append_new(all, row);
	}
	if (as_json) {
		char *s = json_dumps(all, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
		json_decref(all);
		return ERGON_EXIT_OK;
	}
	size_t i;
	json_t *row;
	printf("Usable on this machine:\n");
	int any = 0;
	json_array_foreach(all, i, row)
	{
		if (!json_is_true(json_object_get(row, "usable")))
			continue;
		any = 1;
		printf("%s - %s\n", json_string_value(json_object_get(row, "driver")),
		       json_string_value(json_object_get(row, "longname")));
		const char *note = json_string_value(json_object_get(row, "note"));
		if (note)
			printf("  (%s)\n", note);
		print_found(d[i], json_object_get(row, "found"));
	}
	if (!any)
		printf("  (none)\n");
	printf("\nNot usable on this machine:\n");
	any = 0;
	json_array_foreach(all, i, row)
	{
		if (json_is_true(json_object_get(row, "usable")))
			continue;
		any = 1;
		printf("%s - %s\n  why and fix: %s\n",
		       json_string_value(json_object_get(row, "driver")),
		       json_string_value(json_object_get(row, "longname")),
		       json_string_value(json_object_get(row, "why")));
	}
	if (!any)
		printf("  (none)\n");
	json_decref(all);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_instruments = {
    .name = "instruments",
    .summary = "list the instruments usable here, and why the others are not",
    .help = "Usage: ergon instruments [--sysfs-root DIR] [--json]\n\n"
	    "Looks for every instrument ergon has a driver for and lists the usable ones\n"
	    "with their identity (chip, rails, accuracy); for each one that is not usable\n"
	    "it says why (no device, permission, no library) and how to fix it.\n\n"
	    "Options:\n"
	    "  --sysfs-root DIR  read sysfs (hwmon, powercap, thermal) under DIR instead\n"
	    "                    of / (also: environment variable ERGON_SYSFS_ROOT)\n"
	    "  --json            print the listing as JSON\n\n"
	    "Environment:\n"
	    "  ERGON_NVML_LIB    path of libnvidia-ml.so.1 (default: the loader's search)\n\n"
	    "Examples:\n"
	    "  ergon instruments\n"
	    "  ergon instruments --sysfs-root /tmp/fake-orin --json\n",
    .run = run,
    .exits = {[0] = "the listing was printed (an instrument that is not usable is listed with why)",
	      [1] = CLI_EXIT_NONE,
	      [3] = CLI_EXIT_NONE,
	      [4] = CLI_EXIT_NONE},
};

/* ergon counters: the Armv8.1-M PMU event catalog and pass planning. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/pmu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int list(int argc, char **argv)
{
	const char *group = NULL;
	int json = 0;
	struct cli_parser p;
	cli_init_from(&p, "counters", argc, argv, 2);
	while (cli_next(&p))
		if (!cli_str(&p, "--group", &group) && !cli_flag(&p, "--json", &json))
			cli_unknown(&p);
	if (p.rc)
		return p.rc;
	size_t n;
	const struct ergon_pmu_event *ev = ergon_pmu_events(&n);
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			if (!group || strcmp(group, ev[i].group) == 0)
				json_array_append_new(
				    a, json_pack("{s:i, s:s, s:s, s:s}", "id", (int)ev[i].id, "name",
						 ev[i].name, "group", ev[i].group, "description",
						 ev[i].description));
		return cli_json_doc("counters", json_pack("{s:o}", "events", a));
	}
	printf("%-6s  %-40s %-7s %s\n", "id", "name", "group", "description");
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (group && strcmp(group, ev[i].group) != 0)
			continue;
		printf("0x%04X  %-40s %-7s %s\n", ev[i].id, ev[i].name, ev[i].group,
		       ev[i].description);
		shown++;
	}
	printf("%zu events. Sets: cpu, memory, mve (4 each), <group>:all.\n", shown);
	return ERGON_EXIT_OK;
}

static int plan(int argc, char **argv)
{
	/* Items may be given as separate words or comma-separated; the one
	 * option is --json (and the common --color). */
	const char *items[256];
	size_t n = 0;
	char *copies[64];
	int ncopies = 0, json = 0, nwords = 0;
	struct cli_parser cp;
	cli_init_from(&cp, "counters", argc, argv, 2);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strncmp(argv[i], "--color", 7) == 0 &&
			 (argv[i][7] == '\0' || argv[i][7] == '='))
			continue; /* taken by main's scan (cli_next) below */
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return cli_error(&cp, "plan: unknown option '%s' (items are counter names "
					      "or sets, e.g. cpu mve:all; the option is --json)",
					 argv[i]);
		else
			nwords++;
	}
	while (cli_next(&cp)) {
		/* applies --color; the words are read below */
	}
	if (cp.rc)
		return cp.rc;
	if (nwords == 0)
		return ergon_cli_usage("counters", "plan needs counters or sets, e.g. cpu mve:all");
	for (int i = 2; i < argc && ncopies < 64; i++) {
		if (argv[i][0] == '-' && argv[i][1] != '\0')
			continue;
		char *c = strdup(argv[i]);
		if (!c)
			break;
		copies[ncopies++] = c;
		for (char *save = NULL, *tok = strtok_r(c, ",", &save); tok && n < 256;
		     tok = strtok_r(NULL, ",", &save))
			items[n++] = tok;
	}
	struct ergon_err err = {0};
	struct ergon_pmu_plan p;
	int rc = ergon_pmu_plan(items, n, &p, &err);
	for (int i = 0; i < ncopies; i++)
		free(copies[i]);
	if (rc)
		return ergon_cli_fail("counters", &err);
	if (json) {
		json_t *passes = json_array();
		for (size_t i = 0; passes && i < p.npasses; i++) {
			json_t *evs = json_array();
			for (size_t k = 0; evs && k < p.passes[i].nevents; k++)
				json_array_append_new(evs, json_pack("{s:s, s:i}", "name",
								     p.passes[i].events[k]->name, "id",
								     (int)p.passes[i].events[k]->id));
			json_array_append_new(passes, json_pack("{s:s, s:o}", "name",
								p.passes[i].name, "events", evs));
		}
		json_t *o = json_pack("{s:s, s:i, s:b, s:o}", "core", "Cortex-M55",
				      "counters_per_pass", ERGON_PMU_M55_COUNTERS_PER_PASS,
				      "cycle_counter", p.cycles, "passes", passes);
		ergon_pmu_plan_cleanup(&p);
		return cli_json_doc("counters", o);
	}
	printf("%zu pass(es) on a Cortex-M55 (%d chained 32-bit counters per pass)%s\n", p.npasses,
	       ERGON_PMU_M55_COUNTERS_PER_PASS,
	       p.cycles ? "; ARM_PMU_CPU_CYCLES from the cycle counter in every pass" : "");
	for (size_t i = 0; i < p.npasses; i++) {
		printf("  %-10s", p.passes[i].name);
		for (size_t k = 0; k < p.passes[i].nevents; k++)
			printf(" %s(0x%04X)", p.passes[i].events[k]->name,
			       p.passes[i].events[k]->id);
		printf("\n");
	}
	ergon_pmu_plan_cleanup(&p);
	return ERGON_EXIT_OK;
}

/* The actions, also completed by `ergon __complete actions counters`. */
static const char *const actions[] = {"list", "plan", NULL};

static int run(int argc, char **argv)
{
	struct cli_parser p;
	cli_init_from(&p, "counters", argc, argv, 2);
	int a = cli_action(&p, actions);
	if (a < 0)
		return p.rc;
	return a == 0 ? list(argc, argv) : plan(argc, argv);
}

const struct ergon_cli_command ergon_cli_cmd_counters = {
    .actions = actions,
    .name = "counters",
    .summary = "list the Armv8.1-M PMU events and plan counter passes",
    .help = "Usage: ergon counters plan ITEM[,ITEM...] ... [--json]\n"
	    "       ergon counters list [--group cpu|memory|mve] [--json]\n\n"
	    "list prints the event catalog (id, name, group, description).\n"
	    "plan splits the requested counters into passes for a Cortex-M55: 8 event\n"
	    "counters of 16 bits chained in pairs give 4 counters of 32 bits per pass;\n"
	    "ARM_PMU_CPU_CYCLES comes from the cycle counter and takes no slot. Items are\n"
	    "event names (with or without ARM_PMU_), the sets cpu, memory, mve, or\n"
	    "<group>:all. Passes are named <group>_<n>, the preset names the firmware\n"
	    "emits and `ergon parse` groups by.\n\n"
	    "Examples:\n  ergon counters list --group mve\n  ergon counters plan cpu,memory\n"
	    "  ergon counters plan mve:all\n",
    .run = run,
    .exits = {[0] = "the catalog or the plan was printed",
	      [1] = CLI_EXIT_NONE,
	      [2] = "usage, or an unknown counter or set",
	      [3] = CLI_EXIT_NONE,
	      [4] = CLI_EXIT_NONE},
};

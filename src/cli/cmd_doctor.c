/* ergon doctor: what this machine can do and, for what it cannot, why and
 * the fix; with --for FLOW the exit code says whether that flow can run. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/doctor.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const flows[] = {ERGON_DOCTOR_FLOWS, NULL};

static void print_human(json_t *doc, const char *flow)
{
	size_t i;
	json_t *c;
	/* Two columns wide in both forms. */
	const char *ok = cli_sym("✓ ", "ok");
	const char *no = cli_sym("✗ ", "--");
	/* Reasons and fixes wrapped to the terminal, under their column. */
	int width = cli_columns(stdout);
	printf("Capabilities:\n");
	json_array_foreach(json_object_get(doc, "capabilities"), i, c)
	{
		int good = json_is_true(json_object_get(c, "ok"));
		printf("  %s%s%s %-28s ", cli_on(stdout, good ? CLI_GOOD : CLI_BAD), good ? ok : no,
		       cli_off(stdout), json_string_value(json_object_get(c, "id")));
		cli_wrap(stdout, json_string_value(json_object_get(c, "reason")) ?: "", 34, 34, width);
		const char *fix = json_string_value(json_object_get(c, "fix"));
		if (!good && fix) {
			printf("%34sfix: ", "");
			cli_wrap(stdout, fix, 39, 39, width);
		}
	}
	printf("\nFlows:\n");
	const char *k;
	json_t *f;
	json_object_foreach(json_object_get(doc, "flows"), k, f)
	{
		if (flow && strcmp(flow, k) != 0)
			continue;
		int good = json_is_true(json_object_get(f, "ok"));
		printf("  %s%s%s %-14s ", cli_on(stdout, good ? CLI_GOOD : CLI_BAD), good ? ok : no,
		       cli_off(stdout), k);
		cli_wrap(stdout, json_string_value(json_object_get(f, "reason")) ?: "", 20, 20, width);
	}
}

static int run(int argc, char **argv)
{
	struct cli_parser p;
	struct ergon_doctor_options o = {0};
	const char *flow = NULL;
	int as_json = 0;
	cli_init(&p, "doctor", argc, argv);
	while (cli_next(&p)) {
		if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_choice(&p, "--for", flows, &flow)) {
		} else if (cli_str(&p, "--sysfs-root", &o.sysfs_root)) {
		} else if (cli_str(&p, "--python", &o.python)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	json_t *doc = NULL;
	struct ergon_err err = {0};
	if (ergon_doctor_collect(&o, &doc, &err))
		return ergon_cli_fail("doctor", &err);
	if (flow)
		json_object_set_new(doc, "for", json_string(flow));
	int can = flow == NULL || json_is_true(json_object_get(
				      json_object_get(json_object_get(doc, "flows"), flow), "ok"));
	if (as_json) {
		char *s = json_dumps(doc, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
	} else {
		print_human(doc, flow);
	}
	json_decref(doc);
	return can ? ERGON_EXIT_OK : ERGON_EXIT_MEASUREMENT;
}

const struct ergon_cli_command ergon_cli_cmd_doctor = {
    .name = "doctor",
    .summary = "what this machine can measure, what is missing, and the fix for each",
    .help = "Usage: ergon doctor [--json] [--for run|profile-power|profile-qemu]\n"
	    "                    [--sysfs-root DIR] [--python PATH]\n\n"
	    "Checks, without touching any device: the instruments ergon has drivers for\n"
	    "(found, and permissions), QEMU with the mps3-an547 machine and the Arm\n"
	    "toolchain, J-Link (JLinkExe) and OpenOCD on PATH, USB serial ports with\n"
	    "their USB ids and whether you may open them, and the vendor Python driver\n"
	    "the Joulescope bridge needs (pyjoulescope_driver). Each failed check says\n"
	    "why and how to fix it.\n\n"
	    "Options:\n"
	    "  --json          print every capability and flow as JSON on stdout\n"
	    "  --for FLOW      exit 0 only when FLOW can run here:\n"
	    "                    run            a measuring instrument (not synthetic)\n"
	    "                    profile-power  a debug probe tool and a power instrument\n"
	    "                                   (Joulescope bridge or PPK2)\n"
	    "                    profile-qemu   qemu-system-arm (mps3-an547) and\n"
	    "                                   arm-none-eabi-gcc\n"
	    "  --sysfs-root DIR  read sysfs and /dev under DIR instead of / (also:\n"
	    "                  ERGON_SYSFS_ROOT)\n"
	    "  --python PATH   the Python for bridges (default: $ERGON_PYTHON, python3)\n\n"
	    "Examples:\n"
	    "  ergon doctor\n"
	    "  ergon doctor --json --for profile-power\n",
    .run = run,
    .exits = {[0] = "the checks ran (with --for FLOW: the flow can run here)",
	      [1] = "with --for FLOW: the flow cannot run here (the checks say why)",
	      [3] = "the checks could not run",
	      [4] = CLI_EXIT_NONE},
};

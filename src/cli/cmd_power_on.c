/* ergon power-on: turn the target's supply on through the instrument (PPK2
 * source meter: DUT power; Joulescope: passthrough) and hold it until
 * Ctrl-C. Releasing leaves the power on unless --off-on-exit. The method's
 * spelling `--driver NAME --power-serial SN` is the same as --instrument. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/power_on.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct powered_ctx {
	const char *spec;
	const char *vdd;
	int off_on_exit;
	double hold_s;
};

static void on_powered(void *ctx, const struct ergon_instrument_identity *id)
{
	const struct powered_ctx *c = ctx;
	int js = strncmp(c->spec, "joulescope", 10) == 0 || strncmp(c->spec, "bridge", 6) == 0;
	printf("target power on through %s (%s %s, %s); %s\n", c->spec, id->vendor, id->model,
	       js	   ? "passthrough on: the supply at its input"
	       : c->vdd[0] ? c->vdd
			   : "its own supply",
	       c->hold_s > 0 ? "holding" : "press Ctrl-C to release");
	printf("on release the power %s\n",
	       c->off_on_exit ? "is switched off (--off-on-exit)" : "stays on");
	fflush(stdout);
}

static int run(int argc, char **argv)
{
	const char *spec = NULL, *driver = NULL, *serial = NULL;
	char spec_buf[160];
	char vdd[32] = "";
	int off_on_exit = 0;
	double hold_s = 0;
	struct ergon_err err = {0};
	long vdd_mv = 0;
	struct cli_parser p;
	cli_init(&p, "power-on", argc, argv);
	while (cli_next(&p)) {
		if (cli_str(&p, "--instrument", &spec)) {
		} else if (cli_str(&p, "--driver", &driver)) {
		} else if (cli_str(&p, "--power-serial", &serial)) {
		} else if (cli_long(&p, "--vdd-mv", 800, 5000, &vdd_mv)) {
			snprintf(vdd, sizeof(vdd), "vdd_mv=%ld", vdd_mv);
		} else if (cli_num(&p, "--hold-s", CLI_GT, 0, 1e7, &hold_s)) {
		} else if (cli_flag(&p, "--off-on-exit", &off_on_exit)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	/* The method's spelling: --driver ppk2|joulescope [--power-serial SN]. */
	if (driver != NULL && spec != NULL)
		return cli_error(&p, "give --instrument SPEC or --driver NAME [--power-serial SN], "
				     "not both");
	if (serial != NULL && driver == NULL)
		return cli_error(&p,
				 "--power-serial %s needs --driver ppk2|joulescope (or give "
				 "--instrument joulescope:%s / ppk2:serial=%s)",
				 serial, serial, serial);
	if (driver != NULL) {
		int js = strcmp(driver, "joulescope") == 0;
		if (!js && strcmp(driver, "ppk2") != 0)
			return cli_error(&p,
					 "--driver %s: power-on drives ppk2 (source meter) or "
					 "joulescope (passthrough)",
					 driver);
		if (serial != NULL && (serial[0] == '\0' || strlen(serial) > 100))
			return cli_error(&p, "--power-serial: give the serial number "
					     "(`ergon instruments` lists them)");
		snprintf(spec_buf, sizeof(spec_buf), "%s%s%s", driver,
			 serial ? (js ? ":" : ":serial=") : "", serial ? serial : "");
		spec = spec_buf;
	}
	if (cli_require(&p, "--instrument", spec))
		return p.rc;
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct powered_ctx pc = {spec, vdd, off_on_exit, hold_s};
	const struct ergon_power_on_opts po = {
	    .spec = spec,
	    .vdd_kv = vdd[0] ? vdd : NULL,
	    .off_on_exit = off_on_exit,
	    .hold_s = hold_s,
	    .stop = &stop_flag,
	    .on_powered = on_powered,
	    .ctx = &pc,
	};
	int rc = ergon_power_on_run(&po, &err);
	if (rc) {
		if (rc == ERGON_EUSAGE && strstr(err.msg, "vdd_mv") && !vdd[0])
			return cli_error(&p, "%s: give the target's supply voltage with --vdd-mv N",
					 spec);
		return ergon_cli_fail("power-on", &err);
	}
	printf("released%s\n", off_on_exit ? "; target power off" : "; target power left on");
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_power_on = {
    .name = "power-on",
    .summary = "turn the target's supply on through the instrument and hold it",
    .help = "Usage: ergon power-on --instrument SPEC [--vdd-mv N] [--off-on-exit]\n"
	    "                      [--hold-s S]\n"
	    "       ergon power-on --driver ppk2|joulescope [--power-serial SN] ...\n\n"
	    "Turns the target's supply on through the instrument and holds it until\n"
	    "Ctrl-C (or S seconds with --hold-s), e.g. to flash or debug a board that the\n"
	    "meter powers. With a PPK2 this is source-meter mode at --vdd-mv (required:\n"
	    "the PPK2 would otherwise drive a voltage you did not choose) and DUT power\n"
	    "on. With a Joulescope it is the passthrough (the relay between its input and\n"
	    "the target) switched on through the bridge; it sets no voltage. Releasing\n"
	    "leaves the power on unless --off-on-exit.\n\n"
	    "Options:\n"
	    "  --instrument SPEC  ppk2 | ppk2:PORT | ppk2:serial=SN | joulescope |\n"
	    "                     joulescope:SERIAL\n"
	    "  --driver NAME      ppk2 or joulescope (the method's spelling of --instrument)\n"
	    "  --power-serial SN  with --driver: the instrument's serial number\n"
	    "  --vdd-mv N         PPK2 supply voltage, 800..5000 mV\n"
	    "  --off-on-exit      switch the target's power off on release\n"
	    "  --hold-s S         release after S seconds instead of waiting for Ctrl-C\n\n"
	    "Examples:\n"
	    "  ergon power-on --instrument ppk2 --vdd-mv 3300\n"
	    "  ergon power-on --instrument ppk2:serial=C0FFEE1234 --vdd-mv 1800 --off-on-exit\n"
	    "  ergon power-on --instrument joulescope:000415\n"
	    "  ergon power-on --driver joulescope --power-serial 000415\n",
    .run = run,
    .exits = {[0] = "the power was held and released",
	      [1] = CLI_EXIT_NONE,
	      [3] = "the instrument cannot be opened or driven",
	      [4] = CLI_EXIT_NONE},
};

/* ergon ina228 plan: the INA228 calibration for a shunt and a maximum
 * current, from the same arithmetic the target driver runs
 * (target/src/ina228_math.c). */
#include "cli.h"
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int number(const char *opt, const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0.0)
		return ergon_cli_usage("ina228", "%s '%s': expected a positive number", opt, s);
	*out = v;
	return 0;
}

static int run(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "plan") != 0)
		return ergon_cli_usage("ina228", "expected the action 'plan'");
	double shunt = 0, imax = 0, rail = 0;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			return ergon_cli_usage("ina228", "%s needs a value", o);
		double *dst = strcmp(o, "--shunt-ohms") == 0	  ? &shunt
			      : strcmp(o, "--max-current-a") == 0 ? &imax
			      : strcmp(o, "--rail-v") == 0	  ? &rail
								  : NULL;
		if (dst == NULL)
			return ergon_cli_usage("ina228", "unknown option %s", o);
		int rc = number(o, argv[++i], dst);
		if (rc)
			return rc;
	}
	if (shunt == 0 || imax == 0)
		return ergon_cli_usage("ina228", "--shunt-ohms and --max-current-a are required");
	struct ert_ina228_plan p;
	if (ert_ina228_plan(shunt, imax, &p) != ERT_OK) {
		struct ergon_err err = {0};
		if (shunt * imax > ERT_INA228_RANGE0_FS_V)
			ergon_err_set(&err, ERGON_ERANGE,
				      "--shunt-ohms %g x --max-current-a %g = %.3f mV exceeds the "
				      "INA228's widest range (163.84 mV); use a smaller shunt",
				      shunt, imax, 1e3 * shunt * imax);
		else
			ergon_err_set(
			    &err, ERGON_ERANGE,
			    "--shunt-ohms %g x --max-current-a %g gives SHUNT_CAL below 1: "
			    "the chip would report zero current; use a larger shunt",
			    shunt, imax);
		return ergon_cli_fail("ina228", &err);
	}
	printf("shunt_ohms %g\nmax_current_a %g\n", p.shunt_ohms, p.max_current_a);
	printf("burden_mv %.4f\n", 1e3 * p.burden_v);
	if (rail > 0)
		printf("burden_percent_of_rail %.2f\n",
		       100.0 * ert_ina228_burden_fraction(&p, rail));
	printf("adcrange %d (%s)\n", p.adcrange, p.adcrange ? "+-40.96 mV" : "+-163.84 mV");
	printf("current_lsb_a %.6e\nshunt_cal %u\n", p.current_lsb_a, (unsigned)p.shunt_cal);
	printf("power_lsb_w %.6e\nenergy_lsb_j %.6e\ncharge_lsb_c %.6e\n", p.power_lsb_w,
	       p.energy_lsb_j, p.charge_lsb_c);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_ina228 = {
    .name = "ina228",
    .summary = "plan an INA228 calibration (range, SHUNT_CAL, LSBs, burden)",
    .help = "Usage: ergon ina228 plan --shunt-ohms R --max-current-a I [--rail-v V]\n\n"
	    "Prints the INA228 calibration the target driver will program: ADC range\n"
	    "(+-40.96 mV when R x I fits, else +-163.84 mV), CURRENT_LSB = I / 2^19,\n"
	    "SHUNT_CAL (x4 on the fine range), the power, energy and charge LSBs, and\n"
	    "the shunt's burden (as a share of the rail with --rail-v). Same arithmetic\n"
	    "as target/src/ina228_math.c.\n\n"
	    "Examples:\n  ergon ina228 plan --shunt-ohms 0.5 --max-current-a 0.02 --rail-v 1.8\n"
	    "  ergon ina228 plan --shunt-ohms 0.82 --max-current-a 0.05\n",
    .run = run,
};

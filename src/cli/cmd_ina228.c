/* ergon ina228 plan: the INA228 calibration for a shunt and a full-scale
 * current, from the same arithmetic the target runs (target/src/
 * ina228_math.c), and what the shunt costs the rail. */
#include "cli.h"
#include "ergon/config.h"
#include "ergon/ert_ina228_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_pos(const char *s, double *out)
{
	char *end = NULL;
	double v = strtod(s, &end);
	if (!end || end == s || *end || !(v > 0) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int plan(int argc, char **argv)
{
	double shunt = NAN, imax = NAN;
	const char *board = NULL;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		int has = i + 1 < argc;
		if (strcmp(a, "--shunt-ohms") == 0 && has) {
			if (parse_pos(argv[++i], &shunt))
				return ergon_cli_usage("ina228",
						       "--shunt-ohms %s: a resistance > 0 in "
						       "ohms (e.g. 0.015)",
						       argv[i]);
		} else if (strcmp(a, "--max-current-a") == 0 && has) {
			if (parse_pos(argv[++i], &imax))
				return ergon_cli_usage("ina228",
						       "--max-current-a %s: a current > 0 "
						       "in amperes (e.g. 0.5)",
						       argv[i]);
		} else if (strcmp(a, "--board") == 0 && has) {
			board = argv[++i];
		} else {
			return ergon_cli_usage("ina228", "unknown argument '%s'", a);
		}
	}
	if (isnan(shunt))
		return ergon_cli_usage("ina228", "--shunt-ohms is required (it has no default on "
						 "purpose: a wrong shunt scales every current)");
	if (isnan(imax))
		return ergon_cli_usage("ina228", "--max-current-a is required (the largest "
						 "current the rail draws, e.g. 0.5)");
	/* The rail comes from the configuration (power.io_voltage), so a
	 * board's value is the one a profile run would use. */
	struct ergon_config cfg;
	struct ergon_err err = {0};
	int rc = ergon_config_init(&cfg);
	if (!rc && board) {
		char set[128];
		snprintf(set, sizeof set, "target.board=%.100s", board);
		rc = ergon_config_set(&cfg, set, ERGON_CFG_CLI, &err);
	}
	if (!rc)
		rc = ergon_config_resolve(&cfg, &err);
	if (rc) {
		ergon_config_cleanup(&cfg);
		return ergon_cli_fail("ina228", &err);
	}
	double rail_v = cfg.power.io_voltage;
	int vi = ergon_config_key_index("power.io_voltage");
	const char *rail_from = vi >= 0 ? ergon_config_origin_name(cfg.origin[vi]) : "default";
	char bname[64];
	snprintf(bname, sizeof bname, "%s", cfg.board->name);
	ergon_config_cleanup(&cfg);

	struct ert_ina228_plan p;
	if (ert_ina228_plan(shunt, imax, &p) != 0) {
		double burden = shunt * imax;
		if (burden > ERT_INA228_RANGE0_FS_V)
			fprintf(stderr,
				"ergon ina228: %.6g ohm x %.6g A = %.3f mV exceeds the widest ADC "
				"range (163.84 mV); use a shunt of at most %.6g ohm for %.6g A\n",
				shunt, imax, burden * 1e3, ERT_INA228_RANGE0_FS_V / imax, imax);
		else
			fprintf(stderr,
				"ergon ina228: SHUNT_CAL for %.6g ohm at %.6g A does not fit the "
				"15-bit register (or rounds to 0); pick a smaller shunt or a lower "
				"--max-current-a\n",
				shunt, imax);
		return ERGON_EXIT_USAGE;
	}
	printf("INA228 plan: shunt %.6g ohm, max current %.6g A, board %s\n", shunt, imax, bname);
	printf("  CURRENT_LSB  %.15g A   (max current / 2^19, datasheet eq. 2)\n", p.current_lsb_a);
	printf("  SHUNT_CAL    %u (0x%04X)   (13107.2e6 x CURRENT_LSB x R%s, eq. 3)\n",
	       (unsigned)p.shunt_cal, (unsigned)p.shunt_cal, p.adcrange ? " x 4" : "");
	printf("  ADC range    ADCRANGE=%d (+/-%.2f mV)\n", p.adcrange ? 1 : 0,
	       (p.adcrange ? ERT_INA228_RANGE1_FS_V : ERT_INA228_RANGE0_FS_V) * 1e3);
	printf("  burden       %.4f mV at %.6g A = %.3f %% of the %.3g V rail (power.io_voltage, "
	       "%s)\n",
	       p.burden_v * 1e3, imax, 100.0 * ert_ina228_burden_fraction(&p, rail_v), rail_v,
	       rail_from);
	printf("  POWER LSB    %.15g W; ENERGY LSB %.15g J; CHARGE LSB %.15g C\n", p.power_lsb_w,
	       p.energy_lsb_j, p.charge_lsb_c);
	if (p.adcrange == 0)
		fprintf(
		    stderr,
		    "ergon ina228: warning: %.4f mV at full scale is above the fine +/-40.96 mV "
		    "range, so the ADC uses the wide +/-163.84 mV range (4x coarser shunt "
		    "voltage); if the shunt was rounded up, one of at most %.6g ohm keeps the "
		    "fine range at %.6g A\n",
		    p.burden_v * 1e3, ERT_INA228_RANGE1_FS_V / imax, imax);
	return ERGON_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "plan") != 0)
		return ergon_cli_usage("ina228", "expected 'plan'");
	return plan(argc, argv);
}

const struct ergon_cli_command ergon_cli_cmd_ina228 = {
    .name = "ina228",
    .summary = "plan an INA228 calibration: CURRENT_LSB, SHUNT_CAL, ADC range, burden",
    .help = "Usage: ergon ina228 plan --shunt-ohms R --max-current-a I [--board B]\n\n"
	    "Prints CURRENT_LSB, SHUNT_CAL, the ADC range (ADCRANGE 1, +/-40.96 mV, when the\n"
	    "full-scale shunt voltage fits, else 0, +/-163.84 mV), the burden voltage at\n"
	    "the peak current and its share of the rail (power.io_voltage, for the board),\n"
	    "and the POWER/ENERGY/CHARGE LSBs. The arithmetic is the target runtime's\n"
	    "(TI SBOSA20 section 8.1.2). Warns when the shunt puts the ADC on the wide\n"
	    "range (a rounded-up shunt often does) and names the largest shunt that\n"
	    "keeps the fine range.\n\n"
	    "Exit codes: 0 ok, 2 usage or a shunt/current the chip cannot measure.\n\n"
	    "Examples:\n"
	    "  ergon ina228 plan --shunt-ohms 0.015 --max-current-a 0.5\n"
	    "  ergon ina228 plan --shunt-ohms 0.5 --max-current-a 0.02 --board sim\n",
    .run = run,
};

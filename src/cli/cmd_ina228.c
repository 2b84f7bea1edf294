/* ergon ina228 plan: the INA228 calibration for a shunt and a maximum
 * current, from the same arithmetic the target driver runs
 * (target/src/ina228_math.c), and what the shunt costs the rail. */
#include "cli.h"
#include "cli_opts.h"
#include "ergon/config.h"
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rail of a board as a profile run would use it (power.rail_voltage,
 * power.io_voltage unless set, after the board registry and rules). */
static int board_rail(const char *board, double *rail_v, const char **from, char *name, size_t cap,
		      struct ergon_err *err)
{
	struct ergon_config cfg;
	int rc = ergon_config_init(&cfg);
	if (!rc && board) {
		char set[128];
		snprintf(set, sizeof set, "target.board=%.100s", board);
		rc = ergon_config_set(&cfg, set, ERGON_CFG_CLI, err);
	}
	if (!rc)
		rc = ergon_config_resolve(&cfg, err);
	if (!rc) {
		int vi = ergon_config_key_index("power.io_voltage");
		*rail_v = cfg.power.rail_voltage;
		*from = vi >= 0 ? ergon_config_origin_name(cfg.origin[vi]) : "default";
		snprintf(name, cap, "%s", cfg.board->name);
	}
	ergon_config_cleanup(&cfg);
	return rc;
}

/* The actions, also completed by `ergon __complete actions ina228`. */
static const char *const actions[] = {"plan", NULL};

static int run(int argc, char **argv)
{
	double shunt = 0, imax = 0, rail = 0;
	const char *board = NULL;
	int json = 0;
	struct cli_parser cp;
	cli_init_from(&cp, "ina228", argc, argv, 2);
	if (cli_action(&cp, actions) < 0)
		return cp.rc;
	while (cli_next(&cp)) {
		if (cli_str(&cp, "--board", &board)) {
		} else if (cli_flag(&cp, "--json", &json)) {
		} else if (cli_num(&cp, "--shunt-ohms", CLI_GT, 0, HUGE_VAL, &shunt)) {
		} else if (cli_num(&cp, "--max-current-a", CLI_GT, 0, HUGE_VAL, &imax)) {
		} else if (cli_num(&cp, "--rail-v", CLI_GT, 0, HUGE_VAL, &rail)) {
		} else {
			cli_unknown(&cp);
		}
	}
	if (cp.rc)
		return cp.rc;
	if (shunt == 0)
		return ergon_cli_usage("ina228", "--shunt-ohms is required (it has no default on "
						 "purpose: a wrong shunt scales every current)");
	if (imax == 0)
		return ergon_cli_usage("ina228", "--max-current-a is required (the largest "
						 "current the rail draws, e.g. 0.5)");
	struct ergon_err err = {0};
	const char *rail_from = "--rail-v";
	char bname[64] = "";
	if (rail == 0 || board) {
		double brail = 0;
		const char *bfrom = NULL;
		if (board_rail(board, &brail, &bfrom, bname, sizeof bname, &err) != 0)
			return ergon_cli_fail("ina228", &err);
		if (rail == 0) {
			rail = brail;
			rail_from = bfrom;
		}
	}
	struct ert_ina228_plan p;
	if (ert_ina228_plan(shunt, imax, &p) != ERT_OK) {
		if (shunt * imax > ERT_INA228_RANGE0_FS_V)
			ergon_err_set(&err, ERGON_ERANGE,
				      "--shunt-ohms %g x --max-current-a %g = %.3f mV exceeds the "
				      "INA228's widest range (163.84 mV); use a smaller shunt (at "
				      "most %.6g ohm for %g A)",
				      shunt, imax, 1e3 * shunt * imax,
				      ERT_INA228_RANGE0_FS_V / imax, imax);
		else
			ergon_err_set(
			    &err, ERGON_ERANGE,
			    "--shunt-ohms %g x --max-current-a %g gives SHUNT_CAL below 1 "
			    "(or above 15 bits): the chip would report zero current; use a "
			    "larger shunt",
			    shunt, imax);
		return ergon_cli_fail("ina228", &err);
	}
	int rc = ERGON_EXIT_OK;
	if (json) {
		json_t *o = json_pack(
		    "{s:f, s:f, s:s?, s:f, s:f, s:s, s:f, s:i, s:s, s:f, s:f, s:i, s:f, s:f, s:f, "
		    "s:f}",
		    "shunt_ohms", p.shunt_ohms, "max_current_a", p.max_current_a, "board",
		    bname[0] ? bname : NULL, "burden_v", p.burden_v, "rail_v", rail, "rail_v_from",
		    rail_from, "burden_fraction_of_rail", ert_ina228_burden_fraction(&p, rail),
		    "adcrange", p.adcrange, "adc_range", p.adcrange ? "+-40.96 mV" : "+-163.84 mV",
		    "current_lsb_a", p.current_lsb_a, "current_lsb_nominal_a",
		    p.current_lsb_nominal_a, "shunt_cal", (int)p.shunt_cal, "shunt_cal_rounding",
		    p.shunt_cal_rounding, "power_lsb_w", p.power_lsb_w, "energy_lsb_j",
		    p.energy_lsb_j, "charge_lsb_c", p.charge_lsb_c);
		rc = cli_json_doc("ina228", o);
		goto warnings;
	}
	printf("shunt_ohms %g\nmax_current_a %g\n", p.shunt_ohms, p.max_current_a);
	if (bname[0])
		printf("board %s\n", bname);
	printf("burden_mv %.4f\n", 1e3 * p.burden_v);
	printf("rail_v %g (%s)\n", rail, rail_from);
	printf("burden_percent_of_rail %.2f\n", 100.0 * ert_ina228_burden_fraction(&p, rail));
	printf("adcrange %d (%s)\n", p.adcrange, p.adcrange ? "+-40.96 mV" : "+-163.84 mV");
	/* %.15g: CURRENT_LSB is I / 2^19, exact in binary; show all its digits. */
	printf("current_lsb_a %.15g\ncurrent_lsb_nominal_a %.15g\nshunt_cal %u\nshunt_cal_hex "
	       "0x%04X\nshunt_cal_rounding_percent %.4f\n",
	       p.current_lsb_a, p.current_lsb_nominal_a, (unsigned)p.shunt_cal,
	       (unsigned)p.shunt_cal, 100.0 * p.shunt_cal_rounding);
	printf("power_lsb_w %.15g\nenergy_lsb_j %.15g\ncharge_lsb_c %.15g\n", p.power_lsb_w,
	       p.energy_lsb_j, p.charge_lsb_c);
warnings:
	if (fabs(p.shunt_cal_rounding) > ERT_INA228_SHUNT_CAL_ROUNDING_WARN)
		cli_warn("ina228",
			"SHUNT_CAL %.6g rounds to %u (%+.2f %%): the chip's "
			"effective CURRENT_LSB is %.15g A, not the nominal %.15g A; ergon converts "
			"with the effective LSB, so full scale becomes %.6g A",
			p.shunt_cal / (1.0 + p.shunt_cal_rounding), (unsigned)p.shunt_cal,
			100.0 * p.shunt_cal_rounding, p.current_lsb_a, p.current_lsb_nominal_a,
			p.current_lsb_a * 524288.0);
	if (p.adcrange == 0)
		cli_warn("ina228",
			"%.4f mV at full scale is above the fine +-40.96 mV "
			"range, so the ADC uses the wide +-163.84 mV range (4x coarser shunt "
			"voltage); if the shunt was rounded up, one of at most %.6g ohm keeps the "
			"fine range at %g A",
			p.burden_v * 1e3, ERT_INA228_RANGE1_FS_V / imax, imax);
	return rc;
}

const struct ergon_cli_command ergon_cli_cmd_ina228 = {
    .actions = actions,
    .name = "ina228",
    .summary = "plan an INA228 calibration (range, SHUNT_CAL, LSBs, burden)",
    .help = "Usage: ergon ina228 plan --shunt-ohms R --max-current-a I [--rail-v V] "
	    "[--board B]\n"
	    "                   [--json]\n\n"
	    "Prints the INA228 calibration the target driver will program: ADC range\n"
	    "(+-40.96 mV when R x I fits, else +-163.84 mV), CURRENT_LSB = I / 2^19,\n"
	    "SHUNT_CAL (x4 on the fine range), the power, energy and charge LSBs, and\n"
	    "the shunt's burden at the peak current as a share of the rail (--rail-v,\n"
	    "else power.io_voltage of --board). Warns when the shunt puts the ADC on the\n"
	    "wide range (a rounded-up shunt often does) and names the largest shunt that\n"
	    "keeps the fine range. Same arithmetic as target/src/ina228_math.c\n"
	    "(TI SBOSA20 section 8.1.2).\n\n"
	    "Examples:\n  ergon ina228 plan --shunt-ohms 0.5 --max-current-a 0.02 --rail-v 1.8\n"
	    "  ergon ina228 plan --shunt-ohms 0.015 --max-current-a 0.5 --board apollo510_evb\n",
    .run = run,
    .exits = {[0] = "the plan was printed (warnings are allowed)",
	      [1] = CLI_EXIT_NONE,
	      [2] = "usage, or a shunt and current the chip cannot measure",
	      [3] = CLI_EXIT_NONE,
	      [4] = CLI_EXIT_NONE},
};

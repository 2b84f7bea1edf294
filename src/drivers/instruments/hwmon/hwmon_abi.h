/* The Linux hwmon ABI of the TI INA power monitors: which chips, where
 * their rails are, what their attributes mean and the chips' LSBs.
 * Units per Documentation/hwmon/sysfs-interface.rst: in*_input mV,
 * curr*_input mA, power*_input µW, energy*_input µJ, update_interval ms,
 * shunt*_resistor µΩ. Private to the hwmon driver. */
#ifndef ERGON_HWMON_ABI_H
#define ERGON_HWMON_ABI_H

#include "../sysfs/sysfs.h"
#include "ergon/error.h"

#include <stdint.h>

enum hwmon_family {
	HWMON_INA3221 = 1, /* three channels, no power attribute: P = V x I */
	HWMON_INA2XX = 2,  /* ina219/226/230/231: power1_input from the chip */
	HWMON_INA238 = 3,  /* ina238/ina228: power1_input, ina228 adds energy1_input */
};

/* A chip we know, with its datasheet LSBs. */
struct hwmon_chip {
	const char *name; /* the hwmon `name` attribute */
	int family;
	double shunt_lsb_v;    /* shunt-voltage ADC LSB */
	double bus_lsb_v;      /* bus-voltage ADC LSB */
	double gain_error_pct; /* datasheet maximum gain error */
	const char *source;    /* where the numbers come from */
};

#define HWMON_MAX_RAILS 32

/* One rail found under /sys/class/hwmon. Paths are empty when absent. */
struct hwmon_rail {
	char label[48];
	char hwmon[16]; /* "hwmon3" */
	int channel;	/* ina3221 channel 1..3; 1 for the single-channel chips */
	const struct hwmon_chip *chip;
	char volt_path[ERGON_SYSFS_PATH_MAX];
	char curr_path[ERGON_SYSFS_PATH_MAX];
	char power_path[ERGON_SYSFS_PATH_MAX];
	char energy_path[ERGON_SYSFS_PATH_MAX];
	double shunt_ohm;	  /* 0 when the driver does not expose it */
	double update_interval_s; /* 0 when the driver does not expose it */
	int is_total;		  /* the module's total input rail */
};

/* The chip table entry for a hwmon `name`, or NULL. */
const struct hwmon_chip *hwmon_chip_find(const char *name);
/* True for labels that name a module's total input (VDD_IN on Orin NX/Nano
 * and Xavier NX, POM_5V_IN on TX2/Nano). */
int hwmon_label_is_total(const char *label);

/* Find every INA rail under root. *n may be 0 (no device); `others` gets
 * the names of hwmon devices that are not INA monitors, for the message
 * that says why nothing was found. Returns ERGON_ENOENT when
 * root/sys/class/hwmon does not exist, with err naming it. */
int hwmon_discover(const char *root, struct hwmon_rail *rails, int cap, int *n, char *others,
		   size_t others_cap, struct ergon_err *err);

/* Raw ABI values of one reading of a rail. */
struct hwmon_raw {
	int64_t mv, ma, uw, uj;
};

/* Current and voltage resolution of a rail: the chip's LSB, or the ABI's
 * 1 mA / 1 mV quantum when that is coarser. current is unknown (0) when
 * the shunt is not exposed; the ABI quantum is used then. */
void hwmon_rail_resolution(const struct hwmon_rail *r, double *di_a, double *dv_v);

#endif

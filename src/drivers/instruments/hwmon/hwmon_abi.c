/* INA hwmon discovery and ABI decoding (see hwmon_abi.h). */
#include "hwmon_abi.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* LSBs and gain errors are the datasheets' Electrical Characteristics
 * tables (TI SBOS576 INA3221, SBOS448 INA219, SBOS547 INA226, SBOS601
 * INA230, SBOSA16 INA238, SBOS817 INA228). INA238/INA228 shunt LSBs are
 * for ADCRANGE = 0 (the kernel driver's default). */
static const struct hwmon_chip chips[] = {
    {"ina3221", HWMON_INA3221, 40e-6, 8e-3, 0.25,
     "INA3221: shunt LSB 40 uV, bus LSB 8 mV, gain error 0.25 % max"},
    {"ina219", HWMON_INA2XX, 10e-6, 4e-3, 1.0,
     "INA219: shunt LSB 10 uV, bus LSB 4 mV, gain error 1 % max (A grade)"},
    {"ina226", HWMON_INA2XX, 2.5e-6, 1.25e-3, 0.1,
     "INA226: shunt LSB 2.5 uV, bus LSB 1.25 mV, gain error 0.1 % max"},
    {"ina230", HWMON_INA2XX, 2.5e-6, 1.25e-3, 0.5,
     "INA230: shunt LSB 2.5 uV, bus LSB 1.25 mV, gain error 0.5 % max"},
    {"ina231", HWMON_INA2XX, 2.5e-6, 1.25e-3, 0.5,
     "INA231: shunt LSB 2.5 uV, bus LSB 1.25 mV, gain error 0.5 % max"},
    {"ina238", HWMON_INA238, 5e-6, 3.125e-3, 0.1,
     "INA238: shunt LSB 5 uV, VBUS LSB 3.125 mV, gain error 0.1 % max"},
    {"ina228", HWMON_INA238, 312.5e-9, 195.3125e-6, 0.05,
     "INA228: shunt LSB 312.5 nV, VBUS LSB 195.3125 uV, gain error 0.05 % max"},
};

const struct hwmon_chip *hwmon_chip_find(const char *name)
{
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		if (strcmp(chips[i].name, name) == 0)
			return &chips[i];
	return NULL;
}

int hwmon_label_is_total(const char *label)
{
	return strcmp(label, "VDD_IN") == 0 || strcmp(label, "POM_5V_IN") == 0;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Numeric order: hwmon2 before hwmon10. */
static int cmp_hwmon(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	long nx = strtol(x + 5, NULL, 10), ny = strtol(y + 5, NULL, 10);
	return (nx > ny) - (nx < ny);
}

/* Read an optional integer attribute; 0 if absent or unreadable. */
static int64_t read_opt(const char *path)
{
	int fd;
	int64_t v = 0;
	if (ergon_sysfs_open(path, &fd, NULL))
		return 0;
	if (ergon_sysfs_read_i64(fd, path, &v, NULL))
		v = 0;
	close(fd);
	return v;
}

static int add_rail(const char *dir, const char *hw, const struct hwmon_chip *chip, int ch,
		    struct hwmon_rail *r)
{
	memset(r, 0, sizeof(*r));
	r->chip = chip;
	r->channel = ch;
	snprintf(r->hwmon, sizeof(r->hwmon), "%s", hw);
	char p[ERGON_SYSFS_PATH_MAX];
	if (chip->family == HWMON_INA3221) {
		/* A channel the device tree disabled has in<N>_enable = 0. */
		if (ergon_sysfs_path(p, sizeof(p), "%s/in%d_enable", dir, ch) == 0 && exists(p) &&
		    read_opt(p) == 0)
			return 0;
		if (ergon_sysfs_path(r->volt_path, sizeof(r->volt_path), "%s/in%d_input", dir,
				     ch) ||
		    ergon_sysfs_path(r->curr_path, sizeof(r->curr_path), "%s/curr%d_input", dir,
				     ch))
			return 0;
		if (ergon_sysfs_path(p, sizeof(p), "%s/in%d_label", dir, ch) ||
		    ergon_sysfs_read_text(p, r->label, sizeof(r->label), NULL) || !r->label[0])
			snprintf(r->label, sizeof(r->label), "%s@%s.ch%d", chip->name, hw, ch);
		/* shunt<N>_resistor, micro-ohms (ina3221.c). */
		if (ergon_sysfs_path(p, sizeof(p), "%s/shunt%d_resistor", dir, ch) == 0)
			r->shunt_ohm = (double)read_opt(p) * 1e-6;
	} else {
		/* Single channel: in0 is the shunt voltage, in1 the bus voltage. */
		if (ergon_sysfs_path(r->volt_path, sizeof(r->volt_path), "%s/in1_input", dir) ||
		    ergon_sysfs_path(r->curr_path, sizeof(r->curr_path), "%s/curr1_input", dir) ||
		    ergon_sysfs_path(r->power_path, sizeof(r->power_path), "%s/power1_input",
				     dir) ||
		    ergon_sysfs_path(r->energy_path, sizeof(r->energy_path), "%s/energy1_input",
				     dir))
			return 0;
		if (!exists(r->power_path))
			r->power_path[0] = '\0';
		if (!exists(r->energy_path))
			r->energy_path[0] = '\0';
		if ((ergon_sysfs_path(p, sizeof(p), "%s/in1_label", dir) ||
		     ergon_sysfs_read_text(p, r->label, sizeof(r->label), NULL) || !r->label[0]) &&
		    (ergon_sysfs_path(p, sizeof(p), "%s/curr1_label", dir) ||
		     ergon_sysfs_read_text(p, r->label, sizeof(r->label), NULL) || !r->label[0]))
			snprintf(r->label, sizeof(r->label), "%s@%s", chip->name, hw);
		/* shunt_resistor, micro-ohms (ina2xx.c). */
		if (ergon_sysfs_path(p, sizeof(p), "%s/shunt_resistor", dir) == 0)
			r->shunt_ohm = (double)read_opt(p) * 1e-6;
	}
	if (!exists(r->volt_path) || !exists(r->curr_path))
		return 0;
	/* update_interval, milliseconds (hwmon sysfs ABI). */
	if (ergon_sysfs_path(p, sizeof(p), "%s/update_interval", dir) == 0)
		r->update_interval_s = (double)read_opt(p) * 1e-3;
	r->is_total = hwmon_label_is_total(r->label);
	return 1;
}

int hwmon_discover(const char *root, struct hwmon_rail *rails, int cap, int *n, char *others,
		   size_t others_cap, struct ergon_err *err)
{
	*n = 0;
	if (others_cap)
		others[0] = '\0';
	char base[ERGON_SYSFS_PATH_MAX];
	if (ergon_sysfs_path(base, sizeof(base), "%s/sys/class/hwmon", root))
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: sysfs root path too long", root);
	DIR *d = opendir(base);
	if (d == NULL)
		return ergon_err_set(err, ERGON_ENOENT,
				     "%s: no hwmon class in this system (no hardware monitor "
				     "driver is loaded, or this is a container without /sys); "
				     "on a board with INA monitors load their driver "
				     "(ina3221, ina2xx, ina238), or give --sysfs-root",
				     base);
	char *names[256];
	size_t nn = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && nn < 256)
		if (strncmp(de->d_name, "hwmon", 5) == 0)
			names[nn++] = strdup(de->d_name);
	closedir(d);
	qsort(names, nn, sizeof(names[0]), cmp_hwmon);
	size_t oo = 0;
	for (size_t i = 0; i < nn; i++) {
		char dir[ERGON_SYSFS_PATH_MAX], p[ERGON_SYSFS_PATH_MAX], name[32];
		if (names[i] == NULL ||
		    ergon_sysfs_path(dir, sizeof(dir), "%s/%s", base, names[i]) ||
		    ergon_sysfs_path(p, sizeof(p), "%s/name", dir) ||
		    ergon_sysfs_read_text(p, name, sizeof(name), NULL))
			continue;
		const struct hwmon_chip *chip = hwmon_chip_find(name);
		if (chip == NULL) {
			int w = snprintf(others + oo, others_cap - oo, "%s%s (%s)", oo ? ", " : "",
					 names[i], name);
			if (w > 0 && oo + (size_t)w < others_cap)
				oo += (size_t)w;
			continue;
		}
		int channels = chip->family == HWMON_INA3221 ? 3 : 1;
		for (int ch = 1; ch <= channels && *n < cap; ch++)
			if (add_rail(dir, names[i], chip, ch, &rails[*n]))
				(*n)++;
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	return 0;
}

void hwmon_rail_resolution(const struct hwmon_rail *r, double *di_a, double *dv_v)
{
	/* The ABI reports whole mA and mV, so nothing finer than 1 mA / 1 mV
	 * reaches us whatever the chip resolves. */
	double di = r->shunt_ohm > 0.0 ? r->chip->shunt_lsb_v / r->shunt_ohm : 0.0;
	*di_a = di > 1e-3 ? di : 1e-3;
	*dv_v = r->chip->bus_lsb_v > 1e-3 ? r->chip->bus_lsb_v : 1e-3;
}

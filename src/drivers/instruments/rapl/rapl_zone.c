/* RAPL powercap discovery and counter unwrapping (see rapl_zone.h). */
#include "rapl_zone.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rapl_counter_step(struct rapl_counter *c, int64_t raw_uj, int64_t *delta_uj)
{
	int kind = RAPL_STEP_OK;
	*delta_uj = 0;
	if (c->have_last) {
		if (raw_uj >= c->last_uj) {
			*delta_uj = raw_uj - c->last_uj;
		} else if (c->max_range_uj > 0 && c->last_uj <= c->max_range_uj &&
			   (c->max_range_uj - c->last_uj) + raw_uj < c->max_range_uj / 2) {
			/* powercap counts 0..max_energy_range_uj, then restarts. */
			*delta_uj = (c->max_range_uj - c->last_uj) + raw_uj;
			kind = RAPL_STEP_WRAPPED;
		} else {
			kind = RAPL_STEP_BACKWARDS;
		}
	}
	c->last_uj = raw_uj;
	c->have_last = 1;
	return kind;
}

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

static int add_zone(const char *dir, const char *parent, struct rapl_zone *z)
{
	char p[ERGON_SYSFS_PATH_MAX], name[32];
	memset(z, 0, sizeof(*z));
	if (ergon_sysfs_path(p, sizeof(p), "%s/name", dir) ||
	    ergon_sysfs_read_text(p, name, sizeof(name), NULL) || !name[0])
		return 0;
	if (parent)
		snprintf(z->name, sizeof(z->name), "%s/%s", parent, name);
	else
		snprintf(z->name, sizeof(z->name), "%s", name);
	z->is_sub = parent != NULL;
	snprintf(z->dir, sizeof(z->dir), "%s", dir);
	if (ergon_sysfs_path(z->energy_path, sizeof(z->energy_path), "%s/energy_uj", dir) ||
	    access(z->energy_path, F_OK) != 0)
		return 0;
	/* max_energy_range_uj: the counter's range, microjoules. */
	if (ergon_sysfs_path(p, sizeof(p), "%s/max_energy_range_uj", dir) == 0)
		z->max_range_uj = read_opt(p);
	/* constraint_0_max_power_uw: microwatts. */
	if (ergon_sysfs_path(p, sizeof(p), "%s/constraint_0_max_power_uw", dir) == 0)
		z->max_power_w = (double)read_opt(p) * 1e-6;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Directory entries of dir starting with prefix, sorted (caller frees). */
static size_t list(const char *dir, const char *prefix, char **names, size_t cap)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	if (d == NULL)
		return 0;
	struct dirent *de;
	size_t pl = strlen(prefix);
	while ((de = readdir(d)) != NULL && n < cap)
		if (strncmp(de->d_name, prefix, pl) == 0)
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	return n;
}

int rapl_discover(const char *root, struct rapl_zone *zones, int cap, int *n, struct ergon_err *err)
{
	char base[ERGON_SYSFS_PATH_MAX];
	*n = 0;
	if (ergon_sysfs_path(base, sizeof(base), "%s/sys/class/powercap", root))
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: sysfs root path too long", root);
	char *top[64];
	size_t nt = list(base, "intel-rapl:", top, 64);
	for (size_t i = 0; i < nt; i++) {
		/* Top-level zones are intel-rapl:N; intel-rapl:N:M are also linked
		 * at the top of the class folder: those are read as subzones. */
		if (top[i] == NULL || strchr(top[i] + 11, ':'))
			continue;
		char dir[ERGON_SYSFS_PATH_MAX];
		if (ergon_sysfs_path(dir, sizeof(dir), "%s/%s", base, top[i]) || *n >= cap ||
		    !add_zone(dir, NULL, &zones[*n]))
			continue;
		char parent[48];
		snprintf(parent, sizeof(parent), "%s", zones[*n].name);
		(*n)++;
		char prefix[64], *sub[16];
		snprintf(prefix, sizeof(prefix), "%s:", top[i]);
		size_t ns = list(dir, prefix, sub, 16);
		for (size_t k = 0; k < ns; k++) {
			char sdir[ERGON_SYSFS_PATH_MAX];
			if (sub[k] && *n < cap &&
			    ergon_sysfs_path(sdir, sizeof(sdir), "%s/%s", dir, sub[k]) == 0 &&
			    add_zone(sdir, parent, &zones[*n]))
				(*n)++;
			free(sub[k]);
		}
	}
	for (size_t i = 0; i < nt; i++)
		free(top[i]);
	if (*n == 0)
		return ergon_err_set(err, ERGON_ENOENT,
				     "%s: no RAPL zone (intel-rapl:*); this CPU or kernel offers "
				     "no RAPL through powercap, or the intel_rapl_msr module is "
				     "not loaded (`modprobe intel_rapl_msr` as root), or this is "
				     "a virtual machine or container that hides it",
				     base);
	return 0;
}

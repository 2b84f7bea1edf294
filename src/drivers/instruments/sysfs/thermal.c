/* thermal_zone temperature reader (see thermal.h). */
#include "thermal.h"

#include "sysfs.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ergon_thermal_open(struct ergon_thermal *t, const char *root, double interval_s,
		       struct ergon_err *err)
{
	(void)err;
	memset(t, 0, sizeof(*t));
	t->interval_s = interval_s;
	t->last_read_s = -1.0;
	char dir[ERGON_SYSFS_PATH_MAX];
	if (ergon_sysfs_path(dir, sizeof(dir), "%s/sys/class/thermal", root))
		return 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	char *names[64];
	size_t nn = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && nn < 64)
		if (strncmp(de->d_name, "thermal_zone", 12) == 0)
			names[nn++] = strdup(de->d_name);
	closedir(d);
	qsort(names, nn, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < nn; i++) {
		struct ergon_thermal_zone *z = &t->zone[t->n];
		if (names[i] == NULL || t->n >= ERGON_THERMAL_MAX_ZONES)
			continue;
		char p[ERGON_SYSFS_PATH_MAX];
		if (ergon_sysfs_path(p, sizeof(p), "%s/%s/type", dir, names[i]) ||
		    ergon_sysfs_read_text(p, z->type, sizeof(z->type), NULL))
			snprintf(z->type, sizeof(z->type), "%s", names[i]);
		if (ergon_sysfs_path(z->path, sizeof(z->path), "%s/%s/temp", dir, names[i]) ||
		    ergon_sysfs_open(z->path, &z->fd, NULL))
			continue;
		/* Some zones (disabled sensors, ACPI zones without a backend)
		 * fail every read: leave them out from the start. */
		int64_t mc;
		if (ergon_sysfs_read_i64(z->fd, z->path, &mc, NULL)) {
			close(z->fd);
			continue;
		}
		z->first_c = z->last_c = z->max_c = (double)mc / 1000.0;
		t->n++;
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	return 0;
}

int ergon_thermal_poll(struct ergon_thermal *t, double now_s, double *hottest_c)
{
	if (t->n == 0)
		return 0;
	if (t->last_read_s >= 0.0 && now_s - t->last_read_s < t->interval_s) {
		*hottest_c = t->hottest_c;
		return 1;
	}
	t->last_read_s = now_s;
	int have = 0;
	double hot = 0.0;
	for (int i = 0; i < t->n; i++) {
		struct ergon_thermal_zone *z = &t->zone[i];
		int64_t mc;
		if (z->fd < 0 || ergon_sysfs_read_i64(z->fd, z->path, &mc, NULL)) {
			z->failures++;
			continue;
		}
		/* Kernel ABI: millidegrees Celsius. */
		double c = (double)mc / 1000.0;
		z->last_c = c;
		if (c > z->max_c)
			z->max_c = c;
		z->reads++;
		if (!have || c > hot)
			hot = c;
		have = 1;
	}
	if (have)
		t->hottest_c = hot;
	*hottest_c = t->hottest_c;
	return 1;
}

json_t *ergon_thermal_stats(const struct ergon_thermal *t)
{
	json_t *zones = json_array();
	for (int i = 0; i < t->n; i++) {
		const struct ergon_thermal_zone *z = &t->zone[i];
		json_array_append_new(
		    zones, json_pack("{s:s, s:f, s:f, s:f, s:I, s:I}", "type", z->type, "first_c",
				     z->first_c, "last_c", z->last_c, "max_c", z->max_c, "reads",
				     (json_int_t)z->reads, "failures", (json_int_t)z->failures));
	}
	return json_pack("{s:o, s:f}", "zones", zones, "interval_s", t->interval_s);
}

void ergon_thermal_close(struct ergon_thermal *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->zone[i].fd >= 0)
			close(t->zone[i].fd);
	t->n = 0;
}

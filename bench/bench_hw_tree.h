/* The fake 3-rail ina3221 hwmon tree (Jetson Orin NX labels) that both hwmon
 * sampler benchmarks read: bench_hw_sampler (a bare loop) and
 * bench_hw_session_sampler (the session engine's threaded sampler). */
#ifndef ERGON_BENCH_HW_TREE_H
#define ERGON_BENCH_HW_TREE_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline int put(const char *root, const char *rel, const char *val)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(val, f);
	return fclose(f);
}

static inline int make_tree(const char *root)
{
	static const char *const labels[3] = {"VDD_IN\n", "VDD_CPU_GPU_CV\n", "VDD_SOC\n"};
	int rc = put(root, "sys/class/hwmon/hwmon0/name", "ina3221\n");
	for (int ch = 1; ch <= 3; ch++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon0/in%d_label", ch);
		rc |= put(root, rel, labels[ch - 1]);
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon0/in%d_input", ch);
		rc |= put(root, rel, "5000\n");
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon0/curr%d_input", ch);
		rc |= put(root, rel, "1000\n");
	}
	return rc;
}

#endif

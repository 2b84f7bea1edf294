/* Fake sysfs trees and the scripted writer thread (see fake_sysfs.h). */
#include "fake_sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int mkdirs_for(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

int fs_put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[1024], body[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (mkdirs_for(path))
		return -1;
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(body, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* Fixed width: longer than anything fs_put writes, so a rewrite covers
 * the whole previous content. */
#define FS_WIDTH 20

static int set_path(const char *path, long long value)
{
	char body[FS_WIDTH + 2];
	int n = snprintf(body, sizeof(body), "%0*lld\n", FS_WIDTH, value);
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t w = pwrite(fd, body, (size_t)n, 0);
	close(fd);
	return w == n ? 0 : -1;
}

int fs_set(const char *root, const char *rel, long long value)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return set_path(path, value);
}

static int ina3221(const char *root, int idx, const char *const labels[3], const long mv[3],
		   const long ma[3])
{
	char rel[256];
	int rc = 0;
	snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/name", idx);
	rc |= fs_put(root, rel, "ina3221\n");
	snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/update_interval", idx);
	rc |= fs_put(root, rel, "1\n");
	for (int ch = 1; ch <= 3; ch++) {
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/in%d_label", idx, ch);
		rc |= fs_put(root, rel, "%s\n", labels[ch - 1]);
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/in%d_input", idx, ch);
		rc |= fs_put(root, rel, "%ld\n", mv[ch - 1]);
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/curr%d_input", idx, ch);
		rc |= fs_put(root, rel, "%ld\n", ma[ch - 1]);
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/shunt%d_resistor", idx, ch);
		rc |= fs_put(root, rel, "5000\n");
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/in%d_enable", idx, ch);
		rc |= fs_put(root, rel, "1\n");
		/* The shunt-voltage channels in4..in6 exist too; we do not read them. */
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/in%d_input", idx, ch + 3);
		rc |= fs_put(root, rel, "%ld\n", ma[ch - 1] * 5 / 1000);
	}
	return rc;
}

int fs_orin_nx(const char *root, int idx)
{
	static const char *const labels[3] = {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"};
	static const long mv[3] = {5000, 5000, 5000}, ma[3] = {1000, 300, 250};
	return ina3221(root, idx, labels, mv, ma);
}

int fs_agx_orin(const char *root, int idx)
{
	static const char *const labels[3] = {"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"};
	static const long mv[3] = {19000, 19000, 5000}, ma[3] = {800, 400, 600};
	return ina3221(root, idx, labels, mv, ma);
}

int fs_ina226(const char *root, int idx, int update_interval_ms)
{
	char d[128], rel[256];
	int rc = 0;
	snprintf(d, sizeof(d), "sys/class/hwmon/hwmon%d", idx);
	snprintf(rel, sizeof(rel), "%s/name", d);
	rc |= fs_put(root, rel, "ina226\n");
	snprintf(rel, sizeof(rel), "%s/update_interval", d);
	rc |= fs_put(root, rel, "%d\n", update_interval_ms);
	snprintf(rel, sizeof(rel), "%s/in0_input", d);
	rc |= fs_put(root, rel, "5\n");
	snprintf(rel, sizeof(rel), "%s/in1_input", d);
	rc |= fs_put(root, rel, "12000\n");
	snprintf(rel, sizeof(rel), "%s/curr1_input", d);
	rc |= fs_put(root, rel, "500\n");
	snprintf(rel, sizeof(rel), "%s/power1_input", d);
	rc |= fs_put(root, rel, "6000000\n");
	snprintf(rel, sizeof(rel), "%s/shunt_resistor", d);
	rc |= fs_put(root, rel, "10000\n");
	return rc;
}

int fs_ina228(const char *root, int idx)
{
	char d[128], rel[256];
	int rc = 0;
	snprintf(d, sizeof(d), "sys/class/hwmon/hwmon%d", idx);
	snprintf(rel, sizeof(rel), "%s/name", d);
	rc |= fs_put(root, rel, "ina228\n");
	snprintf(rel, sizeof(rel), "%s/in0_input", d);
	rc |= fs_put(root, rel, "1\n");
	snprintf(rel, sizeof(rel), "%s/in1_input", d);
	rc |= fs_put(root, rel, "12000\n");
	snprintf(rel, sizeof(rel), "%s/curr1_input", d);
	rc |= fs_put(root, rel, "250\n");
	snprintf(rel, sizeof(rel), "%s/power1_input", d);
	rc |= fs_put(root, rel, "3000000\n");
	snprintf(rel, sizeof(rel), "%s/energy1_input", d);
	rc |= fs_put(root, rel, "0\n");
	snprintf(rel, sizeof(rel), "%s/temp1_input", d);
	rc |= fs_put(root, rel, "31000\n");
	return rc;
}

int fs_other_hwmon(const char *root, int idx, const char *name)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/name", idx);
	int rc = fs_put(root, rel, "%s\n", name);
	snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/temp1_input", idx);
	return rc | fs_put(root, rel, "45000\n");
}

int fs_thermal_zone(const char *root, int idx, const char *type, long mc)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "sys/class/thermal/thermal_zone%d/type", idx);
	int rc = fs_put(root, rel, "%s\n", type);
	snprintf(rel, sizeof(rel), "sys/class/thermal/thermal_zone%d/temp", idx);
	return rc | fs_put(root, rel, "%ld\n", mc);
}

int fs_rapl_package(const char *root, int pkg, long long energy_uj, long long max_range_uj)
{
	char d[128], rel[256];
	int rc = 0;
	snprintf(d, sizeof(d), "sys/class/powercap/intel-rapl:%d", pkg);
	snprintf(rel, sizeof(rel), "%s/name", d);
	rc |= fs_put(root, rel, "package-%d\n", pkg);
	snprintf(rel, sizeof(rel), "%s/energy_uj", d);
	rc |= fs_put(root, rel, "%lld\n", energy_uj);
	snprintf(rel, sizeof(rel), "%s/max_energy_range_uj", d);
	rc |= fs_put(root, rel, "%lld\n", max_range_uj);
	snprintf(rel, sizeof(rel), "%s/constraint_0_max_power_uw", d);
	rc |= fs_put(root, rel, "125000000\n");
	static const char *const sub[2] = {"core", "dram"};
	for (int s = 0; s < 2; s++) {
		snprintf(rel, sizeof(rel), "%s/intel-rapl:%d:%d/name", d, pkg, s);
		rc |= fs_put(root, rel, "%s\n", sub[s]);
		snprintf(rel, sizeof(rel), "%s/intel-rapl:%d:%d/energy_uj", d, pkg, s);
		rc |= fs_put(root, rel, "%lld\n", energy_uj / 2);
		snprintf(rel, sizeof(rel), "%s/intel-rapl:%d:%d/max_energy_range_uj", d, pkg, s);
		rc |= fs_put(root, rel, "%lld\n", max_range_uj);
	}
	return rc;
}

#define FS_MAX_FILES 32

struct fs_entry {
	char path[1024];
	long long value, step;
};

struct fs_writer {
	char root[512];
	double period_s;
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	long ticks;
	int n;
	struct fs_entry e[FS_MAX_FILES];
};

static void *writer_main(void *arg)
{
	struct fs_writer *w = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	long period_ns = (long)(w->period_s * 1e9);
	for (;;) {
		pthread_mutex_lock(&w->mu);
		if (w->stop) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		for (int i = 0; i < w->n; i++) {
			w->e[i].value += w->e[i].step;
			set_path(w->e[i].path, w->e[i].value);
		}
		w->ticks++;
		pthread_mutex_unlock(&w->mu);
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

struct fs_writer *fs_writer_start(const char *root, double period_s)
{
	struct fs_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	snprintf(w->root, sizeof(w->root), "%s", root);
	w->period_s = period_s;
	pthread_mutex_init(&w->mu, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		free(w);
		return NULL;
	}
	return w;
}

void fs_writer_set(struct fs_writer *w, const char *rel, long long value, long long step)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", w->root, rel);
	pthread_mutex_lock(&w->mu);
	int i;
	for (i = 0; i < w->n; i++)
		if (strcmp(w->e[i].path, path) == 0)
			break;
	if (i == w->n && w->n < FS_MAX_FILES)
		snprintf(w->e[w->n++].path, sizeof(w->e[0].path), "%s", path);
	if (i < FS_MAX_FILES) {
		w->e[i].value = value;
		w->e[i].step = step;
		/* Write now, from the caller: the first fixed-width write grows
		 * the file, and a reader racing that growth could see the new
		 * first bytes with the old length ("0000\n"). From here on every
		 * rewrite has the same length. */
		set_path(w->e[i].path, value);
	}
	pthread_mutex_unlock(&w->mu);
}

void fs_writer_rail(struct fs_writer *w, const char *hwmon, int ch, long long mv, long long ma)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "sys/class/hwmon/%s/in%d_input", hwmon, ch);
	fs_writer_set(w, rel, mv, 0);
	snprintf(rel, sizeof(rel), "sys/class/hwmon/%s/curr%d_input", hwmon, ch);
	fs_writer_set(w, rel, ma, 0);
}

long fs_writer_ticks(struct fs_writer *w)
{
	pthread_mutex_lock(&w->mu);
	long t = w->ticks;
	pthread_mutex_unlock(&w->mu);
	return t;
}

long fs_writer_stop(struct fs_writer *w)
{
	if (w == NULL)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	long t = w->ticks;
	pthread_mutex_destroy(&w->mu);
	free(w);
	return t;
}

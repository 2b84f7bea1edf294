/* Fake sysfs trees for the hwmon, RAPL and thermal drivers, laid out under
 * a temporary root as the kernel lays them out under /, and a writer
 * thread that rewrites attribute files in place (as sysfs does: the same
 * inode, so descriptors kept open see new values) to script load and idle.
 *
 * Values written by the writer are zero-padded to a fixed width and written
 * with one pwrite at offset 0, so a concurrent reader never sees an empty
 * or half-length file. */
#ifndef ERGON_FAKE_SYSFS_H
#define ERGON_FAKE_SYSFS_H

#include <stddef.h>

/* Write root/rel with printf-formatted content, creating parent folders.
 * Returns 0 on success. */
int fs_put(const char *root, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Rewrite root/rel in place with a fixed-width number. */
int fs_set(const char *root, const char *rel, long long value);

/* Jetson Orin NX / Orin Nano: one ina3221 at hwmon<idx> with VDD_IN,
 * VDD_CPU_GPU_CV, VDD_SOC on channels 1..3 (shunts 5 mOhm each),
 * idle values: VDD_IN 5000 mV x 1000 mA, VDD_CPU_GPU_CV 5000 mV x 300 mA,
 * VDD_SOC 5000 mV x 250 mA. */
int fs_orin_nx(const char *root, int idx);
/* Jetson AGX Orin: ina3221 with VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0. */
int fs_agx_orin(const char *root, int idx);
/* An INA226 (no label) with update_interval_ms, 12000 mV, 500 mA,
 * 6000000 uW, shunt 10 mOhm. */
int fs_ina226(const char *root, int idx, int update_interval_ms);
/* An INA228 (ina238 driver) with energy1_input: 12000 mV, 250 mA,
 * 3000000 uW, energy 0 uJ. */
int fs_ina228(const char *root, int idx);
/* A hwmon device that is not a power monitor (name e.g. "coretemp"). */
int fs_other_hwmon(const char *root, int idx, const char *name);
/* A thermal zone with a type and a temperature in millidegrees. */
int fs_thermal_zone(const char *root, int idx, const char *type, long mc);
/* A RAPL package zone intel-rapl:<pkg> (name package-<pkg>) with core and
 * dram subzones; energy_uj values and max_energy_range_uj given. */
int fs_rapl_package(const char *root, int pkg, long long energy_uj, long long max_range_uj);

/* The writer thread. Each tick (period_s) it writes every registered file
 * with its current value; a value may grow by a rate per tick (energy
 * counters). The test changes values between ticks with fs_writer_set. */
struct fs_writer;
struct fs_writer *fs_writer_start(const char *root, double period_s);
/* Register or change a file's value; step is added every tick. The file is
 * rewritten at once, in the caller's thread. Sysfs never shows a torn
 * value; tmpfs can, when a read races a rewrite whose digits differ in
 * several places: a value that changes in one digit (1000 -> 2000) is safe
 * to switch while a reader runs, counters stepping across big carries are
 * a small risk the tests that use them bound with their tolerance. */
void fs_writer_set(struct fs_writer *w, const char *rel, long long value, long long step);
/* Script a rail: the ina3221 channel's in/curr files, to mv and ma. */
void fs_writer_rail(struct fs_writer *w, const char *hwmon, int ch, long long mv, long long ma);
/* Ticks done so far. */
long fs_writer_ticks(struct fs_writer *w);
/* Stop and free; returns the ticks done. */
long fs_writer_stop(struct fs_writer *w);

#endif

/* A stub libnvidia-ml.so.1 for the nvml instrument's tests. It exports the
 * NVML symbols ergon binds, with nvml.h's signatures, and behaves as the
 * environment says (read at nvmlInit_v2, which also resets the counters):
 *   STUB_NVML_INIT=fail          nvmlInit_v2 answers DRIVER_NOT_LOADED (9)
 *   STUB_NVML_ENERGY=unsupported the energy counter answers NOT_SUPPORTED (3)
 *   STUB_NVML_POWER=unsupported  so does nvmlDeviceGetPowerUsage
 *   STUB_NVML_NAME, STUB_NVML_ARCH   device name (NVIDIA H200), architecture (9)
 *   STUB_NVML_BACK_AT=k          from the k-th energy call on, 5000 mJ lower (a reset)
 *   STUB_NVML_FAIL_AT=k          the k-th energy/power call answers GPU_IS_LOST (15)
 *   STUB_NVML_REASONS=n          clock-event reasons bitmask (0)
 * Energy: call k (counted from 1 since init) answers 1000000 + 250 (k - 1)
 * mJ. Power: 150000 mW. Temperature: 55 C.
 * Built with -DSTUB_OLD it lacks nvmlDeviceGetTotalEnergyConsumption,
 * nvmlDeviceGetArchitecture and the ClocksEvent name (a pre-Volta era
 * driver), keeping nvmlDeviceGetCurrentClocksThrottleReasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int calls, back_at, fail_at;
static struct {
	int dummy;
} device;

static const char *env(const char *k, const char *dflt)
{
	const char *v = getenv(k);
	return v && v[0] ? v : dflt;
}

EXPORT int nvmlInit_v2(void)
{
	calls = 0;
	back_at = (int)strtol(env("STUB_NVML_BACK_AT", "0"), NULL, 10);
	fail_at = (int)strtol(env("STUB_NVML_FAIL_AT", "0"), NULL, 10);
	return strcmp(env("STUB_NVML_INIT", "ok"), "fail") == 0 ? 9 : 0;
}

EXPORT int nvmlShutdown(void)
{
	return 0;
}

EXPORT const char *nvmlErrorString(int rc)
{
	switch (rc) {
	case 0:
		return "Success";
	case 3:
		return "Not Supported";
	case 9:
		return "Driver Not Loaded";
	case 15:
		return "GPU is lost";
	default:
		return "Unknown Error";
	}
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 1;
	return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (i != 0)
		return 2;
	*dev = &device;
	return 0;
}

EXPORT int nvmlDeviceGetName(void *dev, char *name, unsigned int len)
{
	(void)dev;
	snprintf(name, len, "%s", env("STUB_NVML_NAME", "NVIDIA H200"));
	return 0;
}

EXPORT int nvmlDeviceGetSerial(void *dev, char *s, unsigned int len)
{
	(void)dev;
	snprintf(s, len, "1650923012345");
	return 0;
}

EXPORT int nvmlDeviceGetUUID(void *dev, char *s, unsigned int len)
{
	(void)dev;
	snprintf(s, len, "GPU-00000000-1111-2222-3333-444444444444");
	return 0;
}

EXPORT int nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw)
{
	(void)dev;
	if (strcmp(env("STUB_NVML_POWER", "ok"), "unsupported") == 0)
		return 3;
	if (++calls == fail_at)
		return 15;
	*mw = 150000;
	return 0;
}

EXPORT int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned int *c)
{
	(void)dev;
	if (sensor != 0)
		return 2;
	*c = 55;
	return 0;
}

EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *r)
{
	(void)dev;
	*r = strtoull(env("STUB_NVML_REASONS", "0"), NULL, 0);
	return 0;
}

#ifndef STUB_OLD
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
	return nvmlDeviceGetCurrentClocksThrottleReasons(dev, r);
}

EXPORT int nvmlDeviceGetArchitecture(void *dev, unsigned int *arch)
{
	(void)dev;
	*arch = (unsigned int)strtoul(env("STUB_NVML_ARCH", "9"), NULL, 10);
	return 0;
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
	(void)dev;
	if (strcmp(env("STUB_NVML_ENERGY", "ok"), "unsupported") == 0)
		return 3;
	++calls;
	if (calls == fail_at)
		return 15;
	*mj = 1000000ull + 250ull * (unsigned long long)(calls - 1);
	/* From the k-th call on the counter restarts 5000 mJ lower, as after a
	 * reset. */
	if (back_at > 0 && calls >= back_at)
		*mj -= 5000;
	return 0;
}
#endif

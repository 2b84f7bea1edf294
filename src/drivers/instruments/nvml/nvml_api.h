/* The slice of the NVIDIA Management Library that the nvml instrument
 * uses, bound at run time with dlopen (no build dependency). Types and
 * constants as in nvml.h of the CUDA toolkit. Private to the nvml driver. */
#ifndef ERGON_NVML_API_H
#define ERGON_NVML_API_H

#include "ergon/error.h"

/* nvmlReturn_t values we act on. */
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
};

/* nvmlDeviceArchitecture_t */
enum {
	NVML_ARCH_KEPLER = 2,
	NVML_ARCH_VOLTA = 5,
	NVML_ARCH_AMPERE = 7,
};

/* nvmlClocksEventReasons bits (formerly ClocksThrottleReasons). */
#define NVML_REASON_GPU_IDLE 0x1ull
#define NVML_REASON_SW_POWER_CAP 0x4ull
#define NVML_REASON_HW_SLOWDOWN 0x8ull
#define NVML_REASON_SW_THERMAL 0x20ull
#define NVML_REASON_HW_THERMAL 0x40ull
#define NVML_REASON_HW_POWER_BRAKE 0x80ull

typedef void *nvml_device;

struct nvml_api {
	void *dl;
	char lib[256];
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*get_count)(unsigned int *);
	int (*get_handle)(unsigned int, nvml_device *);
	int (*get_name)(nvml_device, char *, unsigned int);
	int (*get_serial)(nvml_device, char *, unsigned int);
	int (*get_uuid)(nvml_device, char *, unsigned int);
	int (*get_arch)(nvml_device, unsigned int *);
	int (*get_energy)(nvml_device, unsigned long long *); /* mJ since driver load */
	int (*get_power)(nvml_device, unsigned int *);	      /* mW */
	int (*get_temp)(nvml_device, int, unsigned int *);    /* degrees C */
	int (*get_reasons)(nvml_device, unsigned long long *);
	const char *reasons_symbol; /* which symbol get_reasons is bound to */
};

/* dlopen lib (NULL: $ERGON_NVML_LIB, else "libnvidia-ml.so.1") and bind the
 * symbols. Required: nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2,
 * nvmlDeviceGetHandleByIndex_v2; the others may be NULL. */
int nvml_api_load(struct nvml_api *api, const char *lib, struct ergon_err *err);
void nvml_api_unload(struct nvml_api *api);
/* nvmlErrorString(rc) when bound, else "NVML error <rc>". */
const char *nvml_api_strerror(const struct nvml_api *api, int rc);
/* True when nvmlDeviceGetPowerUsage returns a 1 s average on this device:
 * Ampere and newer, except GA100 (A100, A30, A800). */
int nvml_power_is_averaged(unsigned int arch, const char *name);

#endif

/* NVML binding by dlopen (see nvml_api.h). */
#include "nvml_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dlsym returns an object pointer; copy it into a function pointer. */
#define BIND(api, field, sym)                           \
	do {                                            \
		void *p_ = dlsym((api)->dl, sym);       \
		memcpy(&(api)->field, &p_, sizeof(p_)); \
	} while (0)

int nvml_api_load(struct nvml_api *api, const char *lib, struct ergon_err *err)
{
	memset(api, 0, sizeof(*api));
	if (lib == NULL || lib[0] == '\0')
		lib = getenv("ERGON_NVML_LIB");
	if (lib == NULL || lib[0] == '\0')
		lib = "libnvidia-ml.so.1";
	snprintf(api->lib, sizeof(api->lib), "%s", lib);
	api->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (api->dl == NULL) {
		const char *why = dlerror();
		return ergon_err_set(err, ERGON_ENOENT,
				     "%s: cannot load the NVIDIA Management Library (%s); no "
				     "NVIDIA driver is installed here. Install the NVIDIA driver "
				     "(it ships libnvidia-ml.so.1), or point ERGON_NVML_LIB (or "
				     "--instrument-opt lib=PATH) at the library",
				     lib, why ? why : "not found");
	}
	BIND(api, init, "nvmlInit_v2");
	BIND(api, shutdown, "nvmlShutdown");
	BIND(api, error_string, "nvmlErrorString");
	BIND(api, get_count, "nvmlDeviceGetCount_v2");
	BIND(api, get_handle, "nvmlDeviceGetHandleByIndex_v2");
	BIND(api, get_name, "nvmlDeviceGetName");
	BIND(api, get_serial, "nvmlDeviceGetSerial");
	BIND(api, get_uuid, "nvmlDeviceGetUUID");
	BIND(api, get_arch, "nvmlDeviceGetArchitecture");
	BIND(api, get_energy, "nvmlDeviceGetTotalEnergyConsumption");
	BIND(api, get_power, "nvmlDeviceGetPowerUsage");
	BIND(api, get_temp, "nvmlDeviceGetTemperature");
	/* Renamed in driver 535 (CUDA 12.2); older drivers only have the
	 * ThrottleReasons name for the same bits. */
	api->reasons_symbol = "nvmlDeviceGetCurrentClocksEventReasons";
	BIND(api, get_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
	if (api->get_reasons == NULL) {
		api->reasons_symbol = "nvmlDeviceGetCurrentClocksThrottleReasons";
		BIND(api, get_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	}
	if (api->get_reasons == NULL)
		api->reasons_symbol = "";
	const char *missing = api->init == NULL		? "nvmlInit_v2"
			      : api->shutdown == NULL	? "nvmlShutdown"
			      : api->get_count == NULL	? "nvmlDeviceGetCount_v2"
			      : api->get_handle == NULL ? "nvmlDeviceGetHandleByIndex_v2"
							: NULL;
	if (missing) {
		int rc = ergon_err_set(err, ERGON_ENOTSUP,
				       "%s: has no symbol %s; this NVML is older than the R319 "
				       "driver API ergon needs: update the NVIDIA driver",
				       lib, missing);
		dlclose(api->dl);
		api->dl = NULL;
		return rc;
	}
	return 0;
}

void nvml_api_unload(struct nvml_api *api)
{
	if (api->dl)
		dlclose(api->dl);
	api->dl = NULL;
}

const char *nvml_api_strerror(const struct nvml_api *api, int rc)
{
	static __thread char buf[32];
	if (api->error_string) {
		const char *s = api->error_string(rc);
		if (s)
			return s;
	}
	snprintf(buf, sizeof(buf), "NVML error %d", rc);
	return buf;
}

/* True if name holds token as a whole word ("NVIDIA A100-SXM4-80GB" holds
 * A100; "NVIDIA RTX A3000" does not hold A30). */
static int has_model(const char *name, const char *token)
{
	size_t tl = strlen(token);
	for (const char *p = strstr(name, token); p; p = strstr(p + 1, token)) {
		int start = p == name || p[-1] == ' ';
		char after = p[tl];
		if (start && (after == '\0' || after == ' ' || after == '-'))
			return 1;
	}
	return 0;
}

int nvml_power_is_averaged(unsigned int arch, const char *name)
{
	/* NVML docs of nvmlDeviceGetPowerUsage: on Ampere (except GA100) and
	 * newer the value is averaged over a 1 s window. */
	if (arch < NVML_ARCH_AMPERE)
		return 0;
	if (has_model(name, "A100") || has_model(name, "A30") || has_model(name, "A800"))
		return 0;
	return 1;
}

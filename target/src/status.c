/* Stable names of runtime status codes (they travel in terminal records). */
#include "ergon/ert_hal.h"

const char *ert_status_name(int status)
{
	switch (status) {
	case ERT_OK:
		return "ok";
	case ERT_E_TRANSPORT:
		return "transport";
	case ERT_E_TIMEOUT:
		return "timeout";
	case ERT_E_I2C:
		return "i2c";
	case ERT_E_CONFIG:
		return "config";
	case ERT_E_GPIO:
		return "gpio";
	case ERT_E_UNSUPPORTED:
		return "unsupported";
	case ERT_E_INA228_ID:
		return "ina228_id";
	case ERT_E_SHUNT_CAL_WRITE:
		return "shunt_cal_write";
	case ERT_E_SHUNT_CAL_READBACK:
		return "shunt_cal_readback";
	case ERT_E_CLOCK:
		return "window_clock";
	case ERT_E_WORKLOAD:
		return "workload";
	case ERT_E_LAYERS:
		return "layers";
	case ERT_E_GATE_STUCK:
		return "gate_stuck";
	default:
		return "unknown";
	}
}

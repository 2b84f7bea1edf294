/* Stable names of runtime status codes (they travel in terminal records). */
#include "ergon/ert_hal.h"
#include "ergon/wire.h"

const char *ert_status_name(int status)
{
	switch (status) {
	case ERT_OK:
		return HPX_ERR_OK;
	case ERT_E_TRANSPORT:
		return HPX_ERR_TRANSPORT;
	case ERT_E_TIMEOUT:
		return HPX_ERR_TIMEOUT;
	case ERT_E_I2C:
		return HPX_ERR_I2C;
	case ERT_E_CONFIG:
		return HPX_ERR_CONFIG;
	case ERT_E_GPIO:
		return HPX_ERR_GPIO;
	case ERT_E_UNSUPPORTED:
		return HPX_ERR_UNSUPPORTED;
	case ERT_E_INA228_ID:
		return HPX_ERR_INA228_ID;
	case ERT_E_SHUNT_CAL_WRITE:
		return HPX_ERR_SHUNT_CAL_WRITE;
	case ERT_E_SHUNT_CAL_READBACK:
		return HPX_ERR_SHUNT_CAL_READBACK;
	case ERT_E_CLOCK:
		return HPX_ERR_WINDOW_CLOCK;
	case ERT_E_WORKLOAD:
		return HPX_ERR_WORKLOAD;
	case ERT_E_LAYERS:
		return HPX_ERR_LAYERS;
	case ERT_E_GATE_STUCK:
		return HPX_ERR_GATE_STUCK;
	default:
		return HPX_ERR_UNKNOWN;
	}
}

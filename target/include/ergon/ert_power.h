/* The dedicated power flow: init, warmup, sync, the gated clean window,
 * then the power terminal record, written to a RAM buffer at a known symbol
 * (`ert_power_terminal`, readable by a debug probe) and — when a transport
 * exists — emitted only after the gate has fallen. Then the caller parks.
 */
#ifndef ERT_POWER_H
#define ERT_POWER_H

#include "ergon/ert_hal.h"
#include "ergon/ert_ina228.h"
#include "ergon/ert_layer.h"
#include "ergon/ert_sync.h"
#include "ergon/ert_window.h"

#include <stdint.h>

#define ERT_POWER_TERMINAL_VERSION 1
#define ERT_POWER_TERMINAL_TEXT_MAX 1024
/* The calibration id's buffer in the record (63 characters and the NUL;
 * the host's configuration key power.ina228.calibration_id has the same
 * bound). */
#define ERT_CALIBRATION_ID_MAX 64
/* Marks a record as complete (written last), so a probe can tell a record
 * from RAM left over by a crash. */
#define ERT_POWER_TERMINAL_MAGIC 0x45525450u /* "ERTP" */

enum ert_power_source {
	ERT_SOURCE_EXTERNAL = 1, /* a Joulescope-class meter watching the gate */
	ERT_SOURCE_INA228 = 2,	 /* internal mode */
};

/* Phases, in order; the terminal record keeps the last one reached. */
enum ert_power_phase {
	ERT_PHASE_INIT = 1,
	ERT_PHASE_INA228_INIT = 2,
	ERT_PHASE_WARMUP = 3,
	ERT_PHASE_SYNC_GO = 4,
	ERT_PHASE_INA228_ARM = 5,
	ERT_PHASE_WINDOW = 6,
	ERT_PHASE_GATE_LOW = 7,
	ERT_PHASE_INA228_READ = 8,
	ERT_PHASE_DONE = 9,
};
const char *ert_power_phase_name(int phase);

struct ert_power_config {
	uint32_t warmup;
	struct ert_window_config window;
	struct ert_sync_config sync;
	int source;
	struct ert_ina228_config ina228; /* source == ERT_SOURCE_INA228 */
	/* Layer markers (ert_layer.h): a line toggled at every marked layer's
	 * start inside the clean window, and once after the last inference;
	 * pin 0: none. Must not collide with the gate or lock-step pins. */
	struct ert_marker_config marker;
	/* Which calibration the measurement path carries (the configuration's
	 * power.ina228.calibration_id, e.g. "UNCALIBRATED-parasitic-path"),
	 * copied verbatim into the record (at most ERT_CALIBRATION_ID_MAX - 1
	 * bytes; a control character becomes '?', since the record is a line
	 * protocol). NULL or "": none stated, the record carries no
	 * CALIBRATION_ID. Not owned; read during ert_power_run only. */
	const char *calibration_id;
};

struct ert_power_terminal {
	uint32_t magic; /* ERT_POWER_TERMINAL_MAGIC once complete */
	uint32_t version;
	int32_t status; /* 0 ok, else the ert_status of the failure */
	uint32_t final_phase;
	uint32_t requested_count;
	uint32_t completed_count;
	uint32_t elapsed_us;
	uint8_t gate_asserted;
	uint8_t gate_lowered;
	uint8_t measurement_overflow;
	uint8_t charge_clamped;
	uint32_t source;
	uint64_t energy_nj;
	uint64_t charge_nc;
	uint64_t bus_voltage_uv;
	uint32_t measurement_duration_us;
	uint32_t measurement_count;
	uint32_t ina228_diag;
	char calibration_id[ERT_CALIBRATION_ID_MAX]; /* NUL-terminated; "" none */
	uint32_t stalled_iters;
	uint32_t partial_iters;
	uint32_t text_len;
	char text[ERT_POWER_TERMINAL_TEXT_MAX]; /* the record as HPX lines */
};

/* The record's HPX_POWER_ERROR_CODE for a flow that stopped in final_phase
 * with status (an ert_status): per phase, as wire.h documents (ina228_init:
 * 10 SHUNT_CAL write failed, 11 read back differs), else |status|. */
uint32_t ert_power_error_code(uint32_t final_phase, int32_t status);

/* The record, at a fixed symbol for the debug probe. */
extern struct ert_power_terminal ert_power_terminal;

/* Validate (ERT_E_CONFIG before anything runs), then run the flow. The
 * return value is the record's status. The record is always written. */
int ert_power_run(const struct ert_hal *hal, const struct ert_power_config *cfg,
		  const struct ert_workload *work);

#endif

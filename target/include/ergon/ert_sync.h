/* Gate-only and 3-wire lock-step synchronisation with the host.
 *
 * Gate-only: the gate pin is high for exactly the clean window.
 * Lock-step: state pin high = READY; wait (bounded) for GO high; gate high,
 * window, gate low; state pin low = done. A fault blinks the state pin
 * `code` times. Pin 0 means absent.
 */
#ifndef ERT_SYNC_H
#define ERT_SYNC_H

#include "ergon/ert_hal.h"

#include <stdint.h>

struct ert_sync_config {
	uint8_t gate_pin;
	uint8_t state_pin; /* lock-step only */
	uint8_t go_pin;	   /* lock-step only */
	uint32_t go_timeout_us;
	uint32_t go_poll_us;
};

/* Lock-step is on when both state and go pins are set. ERT_E_CONFIG when a
 * pin is beyond hal->max_gpio_pin, only one of state/go is set, or pins
 * collide. */
int ert_sync_validate(const struct ert_sync_config *cfg, const struct ert_hal *hal);
int ert_sync_lockstep(const struct ert_sync_config *cfg);
/* Drive everything low; state pin high when lock-step (READY). */
int ert_sync_ready(const struct ert_sync_config *cfg, const struct ert_hal *hal);
/* Wait for GO (lock-step) up to go_timeout_us by the window clock; sets
 * *waited_us. ERT_E_TIMEOUT when it never comes. No-op for gate-only. */
int ert_sync_wait_go(const struct ert_sync_config *cfg, const struct ert_hal *hal,
		     uint32_t *waited_us);
int ert_sync_gate(const struct ert_sync_config *cfg, const struct ert_hal *hal, int high);
/* Lower the state pin (done). */
int ert_sync_done(const struct ert_sync_config *cfg, const struct ert_hal *hal);
/* Blink the state pin `code` times (fault); best effort. */
void ert_sync_fault_blink(const struct ert_sync_config *cfg, const struct ert_hal *hal,
			  unsigned code);

#endif

/* Gate-only and 3-wire lock-step GPIO synchronisation. */
#include "ergon/ert_sync.h"

int ert_sync_lockstep(const struct ert_sync_config *cfg)
{
	return cfg->state_pin != 0 && cfg->go_pin != 0;
}

int ert_sync_validate(const struct ert_sync_config *cfg, const struct ert_hal *hal)
{
	const uint8_t max = hal->max_gpio_pin;
	if (cfg->gate_pin > max || cfg->state_pin > max || cfg->go_pin > max)
		return ERT_E_CONFIG;
	/* Lock-step needs both wires; one alone is a half-wired board. */
	if ((cfg->state_pin == 0) != (cfg->go_pin == 0))
		return ERT_E_CONFIG;
	if (ert_sync_lockstep(cfg) &&
	    (cfg->state_pin == cfg->go_pin || cfg->state_pin == cfg->gate_pin ||
	     cfg->go_pin == cfg->gate_pin || cfg->go_timeout_us == 0 || cfg->go_poll_us == 0))
		return ERT_E_CONFIG;
	if ((cfg->gate_pin != 0 || ert_sync_lockstep(cfg)) &&
	    (hal->gpio_set == NULL || hal->gpio_get == NULL))
		return ERT_E_UNSUPPORTED;
	return ERT_OK;
}

static int set(const struct ert_hal *hal, uint8_t pin, int high)
{
	if (pin == 0)
		return ERT_OK;
	return hal->gpio_set(hal->ctx, pin, high) == 0 ? ERT_OK : ERT_E_GPIO;
}

int ert_sync_ready(const struct ert_sync_config *cfg, const struct ert_hal *hal)
{
	int rc = set(hal, cfg->gate_pin, 0);
	if (rc == ERT_OK && ert_sync_lockstep(cfg))
		rc = set(hal, cfg->state_pin, 1);
	return rc;
}

int ert_sync_wait_go(const struct ert_sync_config *cfg, const struct ert_hal *hal,
		     uint32_t *waited_us)
{
	*waited_us = 0;
	if (!ert_sync_lockstep(cfg))
		return ERT_OK;
	uint32_t t0 = 0, t = 0;
	if (hal->clock_us(hal->ctx, &t0) != 0)
		return ERT_E_CLOCK;
	/* Bound the wait by the window clock and, in case that clock is
	 * frozen, by the number of polls too. */
	uint32_t max_polls = cfg->go_timeout_us / cfg->go_poll_us + 1u;
	for (uint32_t polls = 0; polls <= max_polls; polls++) {
		int go = 0;
		if (hal->gpio_get(hal->ctx, cfg->go_pin, &go) != 0)
			return ERT_E_GPIO;
		if (hal->clock_us(hal->ctx, &t) != 0)
			return ERT_E_CLOCK;
		*waited_us = t - t0;
		if (go)
			return ERT_OK;
		if (*waited_us >= cfg->go_timeout_us)
			break;
		if (hal->delay_us(hal->ctx, cfg->go_poll_us) != 0)
			return ERT_E_CLOCK;
	}
	return ERT_E_TIMEOUT;
}

int ert_sync_gate(const struct ert_sync_config *cfg, const struct ert_hal *hal, int high)
{
	int rc = set(hal, cfg->gate_pin, high);
	if (rc != ERT_OK || cfg->gate_pin == 0)
		return rc;
	/* Read back: a gate stuck high would have the meter integrate past
	 * the window. */
	int level = 0;
	if (hal->gpio_get(hal->ctx, cfg->gate_pin, &level) != 0)
		return ERT_E_GPIO;
	if ((level != 0) != (high != 0))
		return high ? ERT_E_GPIO : ERT_E_GATE_STUCK;
	return ERT_OK;
}

int ert_sync_done(const struct ert_sync_config *cfg, const struct ert_hal *hal)
{
	if (!ert_sync_lockstep(cfg))
		return ERT_OK;
	return set(hal, cfg->state_pin, 0);
}

void ert_sync_fault_blink(const struct ert_sync_config *cfg, const struct ert_hal *hal,
			  unsigned code)
{
	if (!ert_sync_lockstep(cfg) || code == 0)
		return;
	(void)set(hal, cfg->state_pin, 0);
	for (unsigned i = 0; i < code && i < 32u; i++) {
		(void)set(hal, cfg->state_pin, 1);
		(void)hal->delay_us(hal->ctx, 1000);
		(void)set(hal, cfg->state_pin, 0);
		(void)hal->delay_us(hal->ctx, 1000);
	}
}

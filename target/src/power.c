/* The dedicated power flow and its terminal record. */
#include "ergon/ert_fmt.h"
#include "ergon/ert_hpx.h"
#include "ergon/ert_power.h"

/* The record lives at a fixed symbol so a debug probe can read it even when
 * there is no transport (the power build). Not static on purpose. */
struct ert_power_terminal ert_power_terminal;

const char *ert_power_phase_name(int phase)
{
	switch (phase) {
	case ERT_PHASE_INIT:
		return HPX_PT_PHASE_INIT;
	case ERT_PHASE_INA228_INIT:
		return HPX_PT_PHASE_INA228_INIT;
	case ERT_PHASE_WARMUP:
		return HPX_PT_PHASE_WARMUP;
	case ERT_PHASE_SYNC_GO:
		return HPX_PT_PHASE_SYNC_GO;
	case ERT_PHASE_INA228_ARM:
		return HPX_PT_PHASE_INA228_ARM;
	case ERT_PHASE_WINDOW:
		return HPX_PT_PHASE_WINDOW;
	case ERT_PHASE_GATE_LOW:
		return HPX_PT_PHASE_GATE_LOW;
	case ERT_PHASE_INA228_READ:
		return HPX_PT_PHASE_INA228_READ;
	case ERT_PHASE_DONE:
		return HPX_PT_PHASE_DONE;
	default:
		return HPX_PT_PHASE_UNKNOWN;
	}
}

struct gate_ctx {
	const struct ert_sync_config *sync;
	const struct ert_hal *hal;
	struct ert_power_terminal *t;
	struct ert_ina228 *ina; /* NULL unless internal mode */
	const struct ert_marker_config *marker;
};

static int gate_open(void *user)
{
	struct gate_ctx *g = user;
	if (g->ina != NULL) {
		/* Reset the accumulators as late as possible: after the warm
		 * reference and the rate probe, right before the gate rises. */
		g->t->final_phase = ERT_PHASE_INA228_ARM;
		int rc = ert_ina228_arm(g->ina);
		if (rc != ERT_OK)
			return rc;
		g->t->final_phase = ERT_PHASE_WINDOW;
	}
	/* The marker line is low when the gate rises: the first layer's
	 * start is its first edge. Armed before the gate, so a failure leaves
	 * no gate high. */
	int rc = ert_marker_arm(g->marker, g->hal);
	if (rc != ERT_OK)
		return rc;
	rc = ert_sync_gate(g->sync, g->hal, 1);
	if (rc == ERT_OK && g->sync->gate_pin != 0)
		g->t->gate_asserted = 1;
	return rc;
}

static int gate_close(void *user)
{
	struct gate_ctx *g = user;
	/* The last inference's end, still inside the gate. */
	int mrc = ert_marker_disarm();
	if (g->sync->gate_pin == 0)
		return mrc;
	int rc = ert_sync_gate(g->sync, g->hal, 0);
	g->t->gate_lowered = rc == ERT_OK;
	return rc == ERT_OK ? mrc : rc;
}

static void kv_u(struct ert_buf *b, const char *key, uint64_t v)
{
	ert_buf_str(b, HPX_TOK_META_PREFIX HPX_KEY_POWER_PREFIX);
	ert_buf_str(b, key);
	ert_buf_char(b, HPX_TOK_META_SEP);
	ert_buf_u64(b, v);
	ert_buf_char(b, '\n');
}

static void kv_s(struct ert_buf *b, const char *key, const char *v)
{
	ert_buf_str(b, HPX_TOK_META_PREFIX HPX_KEY_POWER_PREFIX);
	ert_buf_str(b, key);
	ert_buf_char(b, HPX_TOK_META_SEP);
	ert_buf_str(b, v);
	ert_buf_char(b, '\n');
}

uint32_t ert_power_error_code(uint32_t final_phase, int32_t status)
{
	if (final_phase == ERT_PHASE_INA228_INIT && status == ERT_E_SHUNT_CAL_WRITE)
		return HPX_PT_INA228_INIT_SHUNT_CAL_WRITE_FAILED;
	if (final_phase == ERT_PHASE_INA228_INIT && status == ERT_E_SHUNT_CAL_READBACK)
		return HPX_PT_INA228_INIT_SHUNT_CAL_READBACK_DIFFERS;
	/* |ert_status|: ert_status_name() maps it back (2 = timeout, ...). */
	return (uint32_t)(-status);
}

/* Copy the configured id, bounded, keeping the record one line per key. */
static void copy_calibration_id(char *dst, const char *src)
{
	unsigned i = 0;
	for (; src != NULL && src[i] != '\0' && i + 1 < ERT_CALIBRATION_ID_MAX; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	dst[i] = '\0';
}

/* Render the record as HPX lines into its own text buffer, in the form the
 * host's terminal parser validates (src/engines/hpx/terminal.c): status
 * "ok" or "error", a numeric error code that is 0 iff ok, and the
 * measurement fields all together or not at all. */
static void render(struct ert_power_terminal *t)
{
	struct ert_buf b;
	ert_buf_init(&b, t->text, sizeof t->text);
	ert_buf_str(&b, HPX_TOK_POWER_TERMINAL_START "\n");
	kv_u(&b, HPX_KEY_PT_TERMINAL_VERSION, t->version);
	kv_s(&b, HPX_KEY_PT_STATUS, t->status == ERT_OK ? HPX_STATUS_OK : HPX_STATUS_ERROR);
	kv_u(&b, HPX_KEY_PT_ERROR_CODE, ert_power_error_code(t->final_phase, t->status));
	kv_s(&b, HPX_KEY_PT_FINAL_PHASE, ert_power_phase_name((int)t->final_phase));
	kv_u(&b, HPX_KEY_PT_REQUESTED_COUNT, t->requested_count);
	kv_u(&b, HPX_KEY_PT_COMPLETED_COUNT, t->completed_count);
	kv_u(&b, HPX_KEY_PT_ELAPSED_US, t->elapsed_us);
	kv_u(&b, HPX_KEY_PT_GATE_ASSERTED, t->gate_asserted);
	kv_u(&b, HPX_KEY_PT_GATE_LOWERED, t->gate_lowered);
	kv_s(&b, HPX_KEY_PT_MEASUREMENT_SOURCE,
	     t->source == ERT_SOURCE_INA228 ? HPX_PT_SOURCE_INA228 : HPX_PT_SOURCE_EXTERNAL);
	/* Measurement fields only once they were read: a failed bring-up
	 * must not look like a measured zero. An external meter's figures are
	 * not in the record at all. */
	if (t->source == ERT_SOURCE_INA228 && t->final_phase == ERT_PHASE_DONE) {
		kv_s(&b, HPX_KEY_PT_MEASUREMENT_SCOPE, HPX_PT_SCOPE_FIXED_N_INFERENCE);
		kv_u(&b, HPX_KEY_PT_ENERGY_NJ, t->energy_nj);
		kv_u(&b, HPX_KEY_PT_CHARGE_NC, t->charge_nc);
		kv_u(&b, HPX_KEY_PT_BUS_VOLTAGE_UV, t->bus_voltage_uv);
		kv_u(&b, HPX_KEY_PT_MEASUREMENT_DURATION_US, t->measurement_duration_us);
		kv_u(&b, HPX_KEY_PT_MEASUREMENT_COUNT, t->measurement_count);
		kv_u(&b, HPX_KEY_PT_MEASUREMENT_OVERFLOW, t->measurement_overflow);
		if (t->calibration_id[0] != '\0')
			kv_s(&b, HPX_KEY_PT_CALIBRATION_ID, t->calibration_id);
		kv_u(&b, HPX_KEY_PT_CHARGE_CLAMPED, t->charge_clamped);
		kv_u(&b, HPX_KEY_PT_INA228_DIAG, t->ina228_diag);
	}
	ert_buf_str(&b, HPX_TOK_POWER_TERMINAL_END "\n");
	/* The buffer is sized for the longest record; an overflow would be a
	 * build-time sizing bug, flagged by the missing END line. */
	t->text_len = (uint32_t)b.len;
}

int ert_power_run(const struct ert_hal *hal, const struct ert_power_config *cfg,
		  const struct ert_workload *work)
{
	struct ert_power_terminal *t = &ert_power_terminal;
	static struct ert_ina228 ina;
	struct ert_window_result w = {0};
	uint32_t waited_us = 0;
	struct gate_ctx g = {&cfg->sync, hal, t, cfg->source == ERT_SOURCE_INA228 ? &ina : NULL,
			  &cfg->marker};
	const struct ert_window_edges edges = {gate_open, gate_close, &g};
	int rc = ERT_OK;

	/* Clear field by field: no libc, and the compiler may not call memset
	 * on a freestanding target without a libc. */
	t->magic = 0;
	t->version = ERT_POWER_TERMINAL_VERSION;
	t->status = ERT_OK;
	t->requested_count = t->completed_count = t->elapsed_us = 0;
	t->gate_asserted = t->gate_lowered = t->measurement_overflow = t->charge_clamped = 0;
	t->source = (uint32_t)cfg->source;
	t->energy_nj = t->charge_nc = t->bus_voltage_uv = 0;
	t->measurement_duration_us = t->measurement_count = t->ina228_diag = 0;
	copy_calibration_id(t->calibration_id, cfg->calibration_id);
	t->stalled_iters = t->partial_iters = 0;
	t->text_len = 0;
	t->text[0] = '\0';

	t->final_phase = ERT_PHASE_INIT;
	if (ert_window_validate(&cfg->window) != ERT_OK ||
	    ert_sync_validate(&cfg->sync, hal) != ERT_OK ||
	    ert_marker_validate(&cfg->marker, hal) != ERT_OK ||
	    (cfg->marker.pin != 0 &&
	     (cfg->marker.pin == cfg->sync.gate_pin || cfg->marker.pin == cfg->sync.state_pin ||
	      cfg->marker.pin == cfg->sync.go_pin)) ||
	    (cfg->source != ERT_SOURCE_EXTERNAL && cfg->source != ERT_SOURCE_INA228) ||
	    (cfg->source == ERT_SOURCE_EXTERNAL && cfg->sync.gate_pin == 0) || work == NULL) {
		rc = ERT_E_CONFIG;
		goto done;
	}
	if (cfg->source == ERT_SOURCE_INA228) {
		t->final_phase = ERT_PHASE_INA228_INIT;
		rc = ert_ina228_init(&ina, hal, &cfg->ina228);
		if (rc != ERT_OK)
			goto done;
	}
	t->final_phase = ERT_PHASE_WARMUP;
	for (uint32_t i = 0; i < cfg->warmup && rc == ERT_OK; i++)
		rc = work->infer(work->user) == 0 ? ERT_OK : ERT_E_WORKLOAD;
	if (rc != ERT_OK)
		goto done;
	t->final_phase = ERT_PHASE_SYNC_GO;
	rc = ert_sync_ready(&cfg->sync, hal);
	if (rc == ERT_OK)
		rc = ert_sync_wait_go(&cfg->sync, hal, &waited_us);
	if (rc != ERT_OK)
		goto done;
	t->final_phase = ERT_PHASE_WINDOW;
	rc = ert_window_run(hal, &cfg->window, work, &edges, &w, NULL);
	/* External mode: the meter watching the gate owns the figures, so a
	 * stopped window clock is the host's warning (elapsed_us = 0 travels),
	 * not a failed run. Internal mode has no other clock: it fails. */
	if (rc == ERT_E_CLOCK && w.clock_frozen && cfg->source == ERT_SOURCE_EXTERNAL)
		rc = ERT_OK;
	t->requested_count = w.requested;
	t->completed_count = w.completed;
	t->elapsed_us = w.elapsed_us;
	t->stalled_iters = w.stalled_iters;
	t->partial_iters = w.partial_iters;
	if (rc == ERT_E_GATE_STUCK)
		t->final_phase = ERT_PHASE_GATE_LOW;
	if (rc == ERT_OK && cfg->sync.gate_pin != 0 && !t->gate_lowered)
		rc = ERT_E_GATE_STUCK;
	if (rc != ERT_OK)
		goto done;
	if (cfg->source == ERT_SOURCE_INA228) {
		struct ert_ina228_reading r = {0};
		t->final_phase = ERT_PHASE_INA228_READ;
		rc = ert_ina228_read(&ina, &r);
		if (rc != ERT_OK)
			goto done;
		t->energy_nj = r.energy_nj;
		t->charge_nc = r.charge_nc;
		t->charge_clamped = (uint8_t)r.charge_clamped;
		t->bus_voltage_uv = r.bus_uv;
		t->measurement_overflow = (uint8_t)r.overflow;
		t->ina228_diag = r.diag;
		t->measurement_duration_us = w.elapsed_us;
		t->measurement_count = w.completed;
	}
	t->final_phase = ERT_PHASE_DONE;
done:
	t->status = rc;
	if (rc == ERT_OK)
		rc = ert_sync_done(&cfg->sync, hal);
	else if (ert_sync_validate(&cfg->sync, hal) == ERT_OK)
		ert_sync_fault_blink(&cfg->sync, hal, (unsigned)-rc);
	render(t);
	t->magic = ERT_POWER_TERMINAL_MAGIC;
#if ERT_HPX_ENABLED
	/* Only now, with the gate low, may the transport run. */
	if (hal->write != NULL && t->text_len > 0)
		(void)hal->write(hal->ctx, t->text, t->text_len);
#endif
	return t->status;
}

/* Layer hooks: per-operator deltas of the window clock, the cycle counter
 * and one PMU pass. */
#include "ergon/ert_layer.h"

/* The hooks are called from deep inside the user's engine, which knows
 * nothing about us: one attached context, NULL when not profiling. */
static struct ert_layers *attached;
static uint32_t ops_begun;

uint32_t ert_layer_ops(void)
{
	return ops_begun;
}

/* The armed marker line (ert_marker_arm): its HAL, pin, mask and level. */
static const struct ert_hal *marker_hal;
static const struct ert_marker_config *marker_cfg;
static int marker_level;
static int marker_status;
static uint32_t marker_toggles;

int ert_marker_validate(const struct ert_marker_config *m, const struct ert_hal *hal)
{
	if (m == NULL || m->pin == 0)
		return ERT_OK;
	if (!ERT_LAYER_MARKERS || hal->gpio_set == NULL || m->pin > hal->max_gpio_pin)
		return ERT_E_CONFIG;
	return ERT_OK;
}

#if ERT_LAYER_MARKERS
static void marker_toggle(void)
{
	marker_level = !marker_level;
	marker_toggles++;
	if (marker_hal->gpio_set(marker_hal->ctx, marker_cfg->pin, marker_level) != 0 &&
	    marker_status == ERT_OK)
		marker_status = ERT_E_GPIO;
}

static int marker_marks(uint16_t index)
{
	if (index >= 32u * ERT_MARKER_MASK_WORDS)
		return 0;
	int any = 0;
	for (unsigned w = 0; w < ERT_MARKER_MASK_WORDS; w++)
		any |= marker_cfg->mask[w] != 0;
	return !any || (marker_cfg->mask[index / 32u] >> (index % 32u) & 1u) != 0;
}
#endif

int ert_marker_arm(const struct ert_marker_config *m, const struct ert_hal *hal)
{
	marker_hal = NULL;
	marker_toggles = 0;
	marker_status = ERT_OK;
	if (m == NULL || m->pin == 0)
		return ERT_OK;
	int rc = ert_marker_validate(m, hal);
	if (rc != ERT_OK)
		return rc;
	marker_level = 0;
	if (hal->gpio_set(hal->ctx, m->pin, 0) != 0)
		return ERT_E_GPIO;
	marker_cfg = m;
	marker_hal = hal;
	return ERT_OK;
}

int ert_marker_disarm(void)
{
#if ERT_LAYER_MARKERS
	if (marker_hal != NULL)
		marker_toggle();
#endif
	marker_hal = NULL;
	return marker_status;
}

uint32_t ert_marker_toggles(void)
{
	return marker_toggles;
}

int ert_layers_init(struct ert_layers *L, const struct ert_hal *hal)
{
	L->hal = hal;
	L->have_cycles = 0;
	L->have_pmu = hal->pmu_configure != NULL && hal->pmu_read != NULL;
	L->n_events = 0;
	L->n_rec = 0;
	L->open = 0;
	L->status = ERT_OK;
	if (hal->clock_us == NULL || hal->delay_us == NULL)
		return ERT_E_UNSUPPORTED;
	if (hal->cycles != NULL) {
		/* A counter that reads the same across a delay does not count
		 * (QEMU's DWT CYCCNT reads 0): report it missing, never print
		 * its zeros as cycles. */
		uint32_t c0 = 0, c1 = 0;
		if (hal->cycles(hal->ctx, &c0) == 0 && hal->delay_us(hal->ctx, 10) == 0 &&
		    hal->cycles(hal->ctx, &c1) == 0 && c1 != c0)
			L->have_cycles = 1;
	}
	return ERT_OK;
}

int ert_layers_set_pass(struct ert_layers *L, const uint16_t *events, unsigned n_events)
{
	if (n_events > ERT_PMU_PASS_COUNTERS)
		return ERT_E_CONFIG;
	if (n_events > 0 && !L->have_pmu)
		return ERT_E_UNSUPPORTED;
	L->n_events = n_events;
	for (unsigned i = 0; i < n_events; i++)
		L->events[i] = events[i];
	return ERT_OK;
}

void ert_layers_attach(struct ert_layers *L)
{
	if (L != NULL) {
		L->n_rec = 0;
		L->open = 0;
	}
	attached = L;
}

int ert_layers_status(const struct ert_layers *L)
{
	return L->status;
}

static void fail(struct ert_layers *L, int status)
{
	if (L->status == ERT_OK)
		L->status = status;
}

void ert_layer_begin(uint16_t layer_index, const char *op_name)
{
	ops_begun++;
#if ERT_LAYER_MARKERS
	if (marker_hal != NULL && marker_marks(layer_index))
		marker_toggle();
#endif
	struct ert_layers *L = attached;
	if (L == NULL)
		return;
	if (L->open || L->n_rec >= ERT_MAX_LAYERS) {
		fail(L, ERT_E_LAYERS);
		return;
	}
	struct ert_layer_rec *r = &L->rec[L->n_rec];
	r->index = layer_index;
	r->op_name = op_name;
	r->overflow = 0;
	L->open = 1;
	const struct ert_hal *h = L->hal;
	/* Program the PMU first so its own cost stays outside the interval
	 * read by the cheaper clocks below. */
	if (L->n_events > 0 && h->pmu_configure(h->ctx, L->events, L->n_events) != 0)
		fail(L, ERT_E_UNSUPPORTED);
	if (L->have_cycles && h->cycles(h->ctx, &L->start_cycles) != 0)
		fail(L, ERT_E_UNSUPPORTED);
	if (h->clock_us(h->ctx, &L->start_us) != 0)
		fail(L, ERT_E_CLOCK);
}

void ert_layer_end(void)
{
	struct ert_layers *L = attached;
	if (L == NULL)
		return;
	if (!L->open) {
		fail(L, ERT_E_LAYERS);
		return;
	}
	const struct ert_hal *h = L->hal;
	struct ert_layer_rec *r = &L->rec[L->n_rec];
	uint32_t now_us = 0, now_cycles = 0;
	if (h->clock_us(h->ctx, &now_us) != 0)
		fail(L, ERT_E_CLOCK);
	if (L->have_cycles && h->cycles(h->ctx, &now_cycles) != 0)
		fail(L, ERT_E_UNSUPPORTED);
	int ovf = 0;
	if (L->n_events > 0 && h->pmu_read(h->ctx, r->counts, L->n_events, &ovf) != 0)
		fail(L, ERT_E_UNSUPPORTED);
	/* Unsigned subtraction is right across one wrap of either counter. */
	r->window_us = now_us - L->start_us;
	r->cycles = L->have_cycles ? now_cycles - L->start_cycles : 0;
	r->overflow = (uint8_t)(ovf != 0);
	L->open = 0;
	L->n_rec++;
}

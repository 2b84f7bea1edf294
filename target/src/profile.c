/* The profile flow: metadata, one PMU pass per preset with warmup and N
 * printed iterations, an optional clean window, then the summary and END. */
#ifdef ERT_POWER_BUILD
#error "profile.c needs the transport; it is not part of the power build"
#endif
#include "ergon/ert_hpx.h"
#include "ergon/ert_profile.h"

/* The first problem with a configuration, as a line for the host. */
struct why {
	const char *what;
	const char *name; /* a preset, when it is about one */
};

static int check(const struct ert_profile_config *cfg, const struct ert_hal *hal, struct why *why)
{
	if (hal->write == NULL || hal->clock_us == NULL || hal->delay_us == NULL) {
		why->what = "the board lacks a transport, window clock or delay_us";
		return ERT_E_UNSUPPORTED;
	}
	if (cfg->iterations == 0) {
		why->what = "iterations must be at least 1";
		return ERT_E_CONFIG;
	}
	if (cfg->n_presets > ERT_MAX_PRESETS || (cfg->n_presets > 0 && cfg->presets == NULL)) {
		why->what = "presets: more than ERT_MAX_PRESETS, or none given for n_presets";
		return ERT_E_CONFIG;
	}
	for (unsigned i = 0; i < cfg->n_extra_meta; i++)
		if (cfg->extra_meta == NULL || cfg->extra_meta[i].key == NULL) {
			why->what = "extra_meta: a key is missing";
			return ERT_E_CONFIG;
		}
	for (unsigned p = 0; p < cfg->n_presets; p++) {
		const struct ert_preset *ps = &cfg->presets[p];
		why->name = ps->name;
		if (ps->name == NULL) {
			why->what = "a preset has no name";
			return ERT_E_CONFIG;
		}
		/* Too many counters for one pass fails here, never mid-run. */
		if (ps->n_events > ERT_PMU_PASS_COUNTERS) {
			why->what = "more counters than one pass holds (4); split the preset "
				    "as the host's pass plan does";
			return ERT_E_CONFIG;
		}
		for (unsigned i = 0; i < ps->n_events; i++)
			if (ps->event_names[i] == NULL) {
				why->what = "an event has no name";
				return ERT_E_CONFIG;
			}
	}
	why->name = NULL;
	if (cfg->clean_window && ert_window_validate(&cfg->window) != ERT_OK) {
		why->what = "clean window: fixed needs iterations > 0; auto needs "
			    "0 < window_min <= window_max and window_target_ms > 0";
		return ERT_E_CONFIG;
	}
	return ERT_OK;
}

int ert_profile_validate(const struct ert_profile_config *cfg, const struct ert_hal *hal)
{
	struct why why = {0};
	return check(cfg, hal, &why);
}

static int csv_block(struct ert_hpx *e, const struct ert_layers *L, const struct ert_preset *ps)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, HPX_CSV_COL_LAYER);
	ert_buf_char(b, HPX_CSV_SEP);
	ert_buf_str(b, HPX_CSV_COL_OP);
	ert_buf_char(b, HPX_CSV_SEP);
	ert_buf_str(b, HPX_CSV_COL_WINDOW_US);
	if (L->have_cycles) {
		ert_buf_char(b, HPX_CSV_SEP);
		ert_buf_str(b, HPX_CSV_COL_CYCLES);
	}
	for (unsigned i = 0; ps != NULL && i < ps->n_events; i++) {
		ert_buf_char(b, HPX_CSV_SEP);
		ert_buf_char(b, '"');
		ert_buf_str(b, ps->event_names[i]);
		ert_buf_char(b, '"');
	}
	ert_buf_char(b, HPX_CSV_SEP);
	ert_buf_str(b, HPX_CSV_COL_OVERFLOW);
	int rc = ert_hpx_end(e);
	for (unsigned r = 0; r < L->n_rec && rc == ERT_OK; r++) {
		const struct ert_layer_rec *rec = &L->rec[r];
		b = ert_hpx_begin(e);
		ert_buf_u64(b, rec->index);
		ert_buf_char(b, HPX_CSV_SEP);
		ert_buf_str(b, rec->op_name);
		ert_buf_char(b, HPX_CSV_SEP);
		ert_buf_u64(b, rec->window_us);
		if (L->have_cycles) {
			ert_buf_char(b, HPX_CSV_SEP);
			ert_buf_u64(b, rec->cycles);
		}
		for (unsigned i = 0; i < L->n_events; i++) {
			ert_buf_char(b, HPX_CSV_SEP);
			ert_buf_u64(b, rec->counts[i]);
		}
		ert_buf_char(b, HPX_CSV_SEP);
		ert_buf_char(b, rec->overflow ? '1' : '0');
		rc = ert_hpx_end(e);
	}
	return rc;
}

static int metadata(struct ert_hpx *e, const struct ert_profile_config *cfg,
		    const struct ert_hal *hal, const struct ert_layers *L)
{
	int rc = ert_hpx_line(e, HPX_TOK_READY);
	if (rc == ERT_OK)
		rc = ert_hpx_line(e, HPX_TOK_START);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_VERSION, HPX_WIRE_VERSION);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_MODEL_SIZE, cfg->model_size);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_ARENA_SIZE, cfg->arena_size);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_ALLOCATED_ARENA, cfg->allocated_arena);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_NUM_PRESETS, cfg->n_presets);
	if (rc == ERT_OK && cfg->n_presets > 0) {
		struct ert_buf *b = ert_hpx_begin(e);
		ert_buf_str(b, HPX_TOK_META_PREFIX HPX_KEY_PRESETS);
		ert_buf_char(b, HPX_TOK_META_SEP);
		for (unsigned p = 0; p < cfg->n_presets; p++) {
			if (p > 0)
				ert_buf_char(b, ',');
			ert_buf_str(b, cfg->presets[p].name);
		}
		rc = ert_hpx_end(e);
	}
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_ITERATIONS, cfg->iterations);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_WARMUP, cfg->warmup);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_POWER_SYNC, 0);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_SYSTEM_CLOCK_HZ, hal->core_clock_hz);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_s(e, HPX_KEY_CYCLE_COUNTER,
				    L->have_cycles ? HPX_VAL_PRESENT : HPX_VAL_MISSING);
	if (rc == ERT_OK)
		rc =
		    ert_hpx_meta_s(e, HPX_KEY_PMU, L->have_pmu ? HPX_VAL_PRESENT : HPX_VAL_MISSING);
	if (rc == ERT_OK && cfg->clock_note != NULL)
		rc = ert_hpx_meta_s(e, HPX_KEY_CLOCK_NOTE, cfg->clock_note);
	for (unsigned i = 0; i < cfg->n_extra_meta && rc == ERT_OK; i++)
		rc = ert_hpx_meta_u(e, cfg->extra_meta[i].key, cfg->extra_meta[i].value);
	if (rc == ERT_OK)
		rc = ert_hpx_heartbeat(e, HPX_HB_INIT, NULL, 0);
	return rc;
}

static int infer(const struct ert_workload *work)
{
	return work->infer(work->user) == 0 ? ERT_OK : ERT_E_WORKLOAD;
}

/* A heartbeat is due by operator count or by the window clock; *now gets
 * the clock when read. */
static int hb_due(const struct ert_profile_config *cfg, const struct ert_hal *hal, uint32_t hb_t,
		  uint32_t hb_ops, uint32_t *now)
{
	if (cfg->heartbeat_every_ops > 0 && ert_layer_ops() - hb_ops >= cfg->heartbeat_every_ops) {
		if (hal->clock_us(hal->ctx, now) != 0)
			*now = hb_t;
		return 1;
	}
	if (cfg->heartbeat_every_ms == 0 || hal->clock_us(hal->ctx, now) != 0)
		return 0;
	return *now - hb_t >= cfg->heartbeat_every_ms * 1000u;
}

static int run_pass(struct ert_hpx *e, const struct ert_hal *hal,
		    const struct ert_profile_config *cfg, const struct ert_preset *ps,
		    const struct ert_workload *work, struct ert_layers *L,
		    struct ert_profile_stats *st)
{
	int rc = ERT_OK;
	if (ps != NULL) {
		rc = ert_hpx_marker(e, HPX_TOK_PRESET_PREFIX, ps->name);
		if (rc == ERT_OK)
			rc = ert_layers_set_pass(L, ps->events, ps->n_events);
	}
	ert_layers_attach(NULL);
	uint32_t hb_t = 0, t0 = 0, t1 = 0;
	if (rc == ERT_OK && hal->clock_us(hal->ctx, &hb_t) != 0)
		rc = ERT_E_CLOCK;
	uint32_t hb_ops = ert_layer_ops();
	/* Warmup keeps the host's heartbeat bound alive too; the last warmup
	 * inference is followed by warmup_done anyway. */
	for (uint32_t w = 0; w < cfg->warmup && rc == ERT_OK; w++) {
		rc = infer(work);
		if (rc == ERT_OK && w + 1u < cfg->warmup && hb_due(cfg, hal, hb_t, hb_ops, &t1)) {
			rc = ert_hpx_heartbeat(e, HPX_HB_WARMUP, HPX_HB_KEY_ITERS, w + 1u);
			hb_t = t1;
			hb_ops = ert_layer_ops();
		}
	}
	if (rc == ERT_OK)
		rc = ert_hpx_heartbeat(e, HPX_HB_WARMUP_DONE, NULL, 0);
	if (rc == ERT_OK && hal->clock_us(hal->ctx, &hb_t) != 0)
		rc = ERT_E_CLOCK;
	hb_ops = ert_layer_ops();
	uint32_t since_hb = 0;
	for (uint32_t it = 0; it < cfg->iterations && rc == ERT_OK; it++) {
		rc = ert_hpx_marker_u(e, HPX_TOK_ITER_PREFIX, it);
		if (rc != ERT_OK)
			break;
		if (hal->clock_us(hal->ctx, &t0) != 0) {
			rc = ERT_E_CLOCK;
			break;
		}
		ert_layers_attach(L);
		rc = infer(work);
		ert_layers_attach(NULL);
		if (hal->clock_us(hal->ctx, &t1) != 0 && rc == ERT_OK)
			rc = ERT_E_CLOCK;
		if (rc == ERT_OK)
			rc = ert_layers_status(L);
		if (rc == ERT_OK && L->open)
			rc = ERT_E_LAYERS;
		if (rc != ERT_OK)
			break;
		st->profiled_iters++;
		st->profiled_us += (uint32_t)(t1 - t0);
		rc = csv_block(e, L, ps);
		since_hb++;
		int due = cfg->heartbeat_every_iters > 0 && since_hb >= cfg->heartbeat_every_iters;
		if (cfg->heartbeat_every_ms > 0 && t1 - hb_t >= cfg->heartbeat_every_ms * 1000u)
			due = 1;
		if (cfg->heartbeat_every_ops > 0 &&
		    ert_layer_ops() - hb_ops >= cfg->heartbeat_every_ops)
			due = 1;
		if (rc == ERT_OK && due) {
			rc = ert_hpx_heartbeat(e, HPX_HB_INFER, HPX_HB_KEY_ITERS, it + 1u);
			since_hb = 0;
			hb_t = t1;
			hb_ops = ert_layer_ops();
		}
	}
	return rc;
}

struct window_gate {
	const struct ert_hal *hal;
	uint8_t pin;
};

static int window_gate_set(void *user, int level)
{
	const struct window_gate *g = user;
	return g->hal->gpio_set(g->hal->ctx, g->pin, level) == 0 ? ERT_OK : ERT_E_GPIO;
}

static int window_gate_open(void *user)
{
	return window_gate_set(user, 1);
}

static int window_gate_close(void *user)
{
	return window_gate_set(user, 0);
}

static int clean_window(struct ert_hpx *e, const struct ert_hal *hal,
			const struct ert_profile_config *cfg, const struct ert_workload *work,
			struct ert_profile_stats *st)
{
	/* The shared power firmware's gate around the window (none: 0). */
	struct window_gate g = {hal, cfg->window_gate_pin};
	const struct ert_window_edges edges = {window_gate_open, window_gate_close, &g};
	const struct ert_window_edges *ep =
	    cfg->window_gate_pin > 0 && hal->gpio_set != NULL ? &edges : NULL;
	struct ert_window_result *w = &st->window;
	int rc = ert_hpx_heartbeat(e, HPX_HB_CLEAN_WINDOW_BEGIN, NULL, 0);
	if (rc != ERT_OK)
		return rc;
	rc = ert_window_run(hal, &cfg->window, work, ep, w, cfg->window.trace ? e : NULL);
	if (rc != ERT_OK)
		return rc;
	rc = ert_hpx_heartbeat(e, HPX_HB_CLEAN_WINDOW_END, HPX_HB_KEY_ITERS, w->completed);
	const char *mode = cfg->window.busy_loop		  ? HPX_WINDOW_MODE_BUSY_LOOP
			   : cfg->window.mode == ERT_WINDOW_FIXED ? HPX_WINDOW_MODE_FIXED
								  : HPX_WINDOW_MODE_AUTO;
	if (rc == ERT_OK)
		rc = ert_hpx_meta_s(e, HPX_KEY_WINDOW_MODE, mode);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_REQUESTED, w->requested);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_INFER_COUNT, w->completed);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_ELAPSED_US, w->elapsed_us);
	if (rc == ERT_OK && w->completed > 0)
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_INFER_AVG_US, w->elapsed_us / w->completed);
	if (rc == ERT_OK && w->have_cycles) {
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_REF_CYCLES, w->ref_cycles);
		if (rc == ERT_OK)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_TOTAL_CYCLES, w->total_cycles);
		if (rc == ERT_OK && w->completed > 0)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_AVG_CYCLES,
					    w->total_cycles / w->completed);
		if (rc == ERT_OK)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_STALLED_ITERS, w->stalled_iters);
		if (rc == ERT_OK)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_PARTIAL_ITERS, w->partial_iters);
		if (rc == ERT_OK && w->rate_probe_us > 0)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_RATE_PROBE_US, w->rate_probe_us);
		if (rc == ERT_OK && w->rate_probe_us > 0)
			rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_RATE_PROBE_CYCLES,
					    w->rate_probe_cycles);
	}
	if (rc == ERT_OK && cfg->window.drain_wait_max_us > 0) {
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_DRAIN_WAIT_US, w->drain_waited_us);
		if (rc == ERT_OK)
			rc = ert_hpx_meta_u(e, HPX_KEY_DRAIN_TIMED_OUT,
					    (uint64_t)w->drain_timed_out);
	}
	if (rc == ERT_OK && cfg->window.trace)
		rc = ert_hpx_meta_u(e, HPX_KEY_CLEAN_TRACE, 1);
	return rc;
}

int ert_profile_run(const struct ert_hal *hal, const struct ert_profile_config *cfg,
		    const struct ert_workload *work, struct ert_layers *L,
		    struct ert_profile_stats *stats)
{
	static struct ert_hpx e; /* 200 bytes kept off small target stacks */
	struct ert_profile_stats st = {0};
	e.hal = NULL;
	e.status = ERT_OK;
	e.bytes_written = 0;
	struct why why = {0};
	int rc = check(cfg, hal, &why);
	if (rc != ERT_OK) {
		/* Refused before anything ran; say why if there is a transport:
		 * "HPX_ERROR config: [preset <name>: ]<what>". */
		if (ert_hpx_init(&e, hal) == ERT_OK) {
			struct ert_buf *b = ert_hpx_begin(&e);
			ert_buf_str(b, HPX_TOK_ERROR_PREFIX " ");
			ert_buf_str(b, ert_status_name(rc));
			ert_buf_str(b, ": ");
			if (why.name != NULL) {
				ert_buf_str(b, "preset ");
				ert_buf_str(b, why.name);
				ert_buf_str(b, ": ");
			}
			ert_buf_str(b, why.what);
			(void)ert_hpx_end(&e);
		}
		goto out;
	}
	rc = ert_layers_init(L, hal);
	if (rc == ERT_OK)
		rc = ert_hpx_init(&e, hal);
	if (rc == ERT_OK)
		rc = metadata(&e, cfg, hal, L);
	if (cfg->n_presets == 0 && rc == ERT_OK)
		rc = run_pass(&e, hal, cfg, NULL, work, L, &st);
	for (unsigned p = 0; p < cfg->n_presets && rc == ERT_OK; p++)
		rc = run_pass(&e, hal, cfg, &cfg->presets[p], work, L, &st);
	if (rc == ERT_OK && cfg->clean_window)
		rc = clean_window(&e, hal, cfg, work, &st);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(&e, HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_COUNT_SUFFIX,
				    st.profiled_iters);
	if (rc == ERT_OK)
		rc = ert_hpx_meta_u(&e,
				    HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_TOTAL_US_SUFFIX,
				    st.profiled_us);
	if (rc == ERT_OK && st.profiled_iters > 0)
		rc =
		    ert_hpx_meta_u(&e, HPX_KEY_PROFILED_INFER_PREFIX HPX_KEY_PROFILED_AVG_US_SUFFIX,
				   st.profiled_us / st.profiled_iters);
	if (rc == ERT_OK)
		rc = ert_hpx_heartbeat(&e, HPX_HB_FLUSHING, NULL, 0);
	if (rc == ERT_OK)
		rc = ert_hpx_line(&e, HPX_TOK_END);
	if (rc != ERT_OK && e.status == ERT_OK && e.hal != NULL) {
		/* Tell the host why the stream stops (if the transport still
		 * works); it sees no END either way. */
		struct ert_buf *b = ert_hpx_begin(&e);
		ert_buf_str(b, HPX_TOK_ERROR_PREFIX " ");
		ert_buf_str(b, ert_status_name(rc));
		(void)ert_hpx_end(&e);
	}
out:
	ert_layers_attach(NULL);
	st.bytes_written = e.bytes_written;
	if (stats != NULL)
		*stats = st;
	return rc;
}

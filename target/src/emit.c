/* The HPX emitter (not compiled into the dedicated power build). */
#ifdef ERT_POWER_BUILD
#error "emit.c must not be part of the power build: the transport compiles out"
#endif
#include "ergon/ert_hpx.h"

int ert_hpx_init(struct ert_hpx *e, const struct ert_hal *hal)
{
	e->hal = hal;
	e->status = ERT_OK;
	e->bytes_written = 0;
	ert_buf_init(&e->line, e->line_data, sizeof e->line_data);
	if (hal == NULL || hal->write == NULL)
		e->status = ERT_E_UNSUPPORTED;
	return e->status;
}

struct ert_buf *ert_hpx_begin(struct ert_hpx *e)
{
	ert_buf_reset(&e->line);
	return &e->line;
}

int ert_hpx_end(struct ert_hpx *e)
{
	if (e->status != ERT_OK)
		return e->status;
	/* A line that did not fit is a bug in the caller's sizing; send it
	 * anyway would corrupt the stream, so fail loudly instead. */
	ert_buf_char(&e->line, '\n');
	if (e->line.overflow) {
		e->status = ERT_E_CONFIG;
		return e->status;
	}
	int rc = e->hal->write(e->hal->ctx, e->line.data, e->line.len);
	if (rc != 0) {
		e->status = ERT_E_TRANSPORT;
		return e->status;
	}
	e->bytes_written += e->line.len;
	return ERT_OK;
}

int ert_hpx_line(struct ert_hpx *e, const char *text)
{
	ert_buf_str(ert_hpx_begin(e), text);
	return ert_hpx_end(e);
}

int ert_hpx_marker(struct ert_hpx *e, const char *prefix, const char *name)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, prefix);
	ert_buf_str(b, name);
	ert_buf_str(b, HPX_TOK_MARKER_SUFFIX);
	return ert_hpx_end(e);
}

int ert_hpx_marker_u(struct ert_hpx *e, const char *prefix, uint64_t n)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, prefix);
	ert_buf_u64(b, n);
	ert_buf_str(b, HPX_TOK_MARKER_SUFFIX);
	return ert_hpx_end(e);
}

int ert_hpx_meta_u(struct ert_hpx *e, const char *key, uint64_t value)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, HPX_TOK_META_PREFIX);
	ert_buf_str(b, key);
	ert_buf_char(b, HPX_TOK_META_SEP);
	ert_buf_u64(b, value);
	return ert_hpx_end(e);
}

int ert_hpx_meta_s(struct ert_hpx *e, const char *key, const char *value)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, HPX_TOK_META_PREFIX);
	ert_buf_str(b, key);
	ert_buf_char(b, HPX_TOK_META_SEP);
	ert_buf_str(b, value);
	return ert_hpx_end(e);
}

int ert_hpx_heartbeat(struct ert_hpx *e, const char *phase, const char *key, uint64_t value)
{
	struct ert_buf *b = ert_hpx_begin(e);
	ert_buf_str(b, HPX_TOK_HEARTBEAT);
	ert_buf_char(b, ' ');
	ert_buf_str(b, phase);
	if (key != NULL) {
		ert_buf_char(b, ' ');
		ert_buf_str(b, key);
		ert_buf_char(b, HPX_TOK_META_SEP);
		ert_buf_u64(b, value);
	}
	return ert_hpx_end(e);
}

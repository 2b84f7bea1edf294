/* RTT control block and ring buffers (see ergon/ert_rtt.h). */
#include "ergon/ert_rtt.h"
#include "ergon/wire.h"

#define BARRIER() __asm volatile("" ::: "memory")

/* Spelled backwards, so that the ID never appears in the firmware image
 * (flash or the .data load image): a host searching memory finds only the
 * live block. */
static const char rtt_id_rev[] = "TTR REGGES";

void ert_rtt_init(struct ert_rtt *r, char *up, uint32_t up_size, char *down, uint32_t down_size,
		  uint32_t mode, uint32_t spin_max)
{
	struct ert_rtt_cb *cb = &r->cb;
	for (unsigned i = 0; i < ERT_RTT_ID_LEN; i++)
		cb->id[i] = 0;
	BARRIER();
	cb->max_up = 1;
	cb->max_down = 1;
	cb->up[0].name = "HPX";
	cb->up[0].buf = up;
	cb->up[0].size = up_size;
	cb->up[0].wr_off = 0;
	cb->up[0].rd_off = 0;
	cb->up[0].flags = mode;
	cb->down[0].name = "ergon";
	cb->down[0].buf = down;
	cb->down[0].size = down_size;
	cb->down[0].wr_off = 0;
	cb->down[0].rd_off = 0;
	cb->down[0].flags = 0;
	cb->ext_magic = ERT_RTT_EXT_MAGIC;
	cb->dropped = 0;
	r->spin_max = spin_max;
	r->reported = 0;
	r->at_line_start = 1;
	BARRIER();
	for (unsigned i = 0; i < sizeof(rtt_id_rev) - 1u; i++)
		cb->id[i] = rtt_id_rev[sizeof(rtt_id_rev) - 2u - i];
	BARRIER();
}

static uint32_t space(const struct ert_rtt_buffer *b)
{
	uint32_t rd = b->rd_off, wr = b->wr_off;
	/* One slot stays free: wr == rd means empty. */
	return rd > wr ? rd - wr - 1u : b->size - 1u - (wr - rd);
}

uint32_t ert_rtt_pending(const struct ert_rtt *r)
{
	const struct ert_rtt_buffer *b = &r->cb.up[0];
	uint32_t rd = b->rd_off, wr = b->wr_off;
	return wr >= rd ? wr - rd : b->size - (rd - wr);
}

static void put(struct ert_rtt_buffer *b, const char *data, uint32_t len)
{
	uint32_t wr = b->wr_off;
	for (uint32_t i = 0; i < len; i++) {
		b->buf[wr] = data[i];
		wr = wr + 1u == b->size ? 0u : wr + 1u;
	}
	BARRIER(); /* data before the offset the host reads */
	b->wr_off = wr;
}

/* "HPX_HEARTBEAT rtt_dropped bytes=N\n" into out (>= 48 bytes). */
static uint32_t drop_line(char *out, uint32_t n)
{
	static const char head[] =
	    HPX_TOK_HEARTBEAT " " HPX_HB_RTT_DROPPED " " HPX_HB_KEY_BYTES "=";
	uint32_t k = 0;
	for (; head[k]; k++)
		out[k] = head[k];
	char digits[10];
	unsigned nd = 0;
	do {
		digits[nd++] = (char)('0' + n % 10u);
		n /= 10u;
	} while (n && nd < sizeof digits);
	while (nd)
		out[k++] = digits[--nd];
	out[k++] = '\n';
	return k;
}

int ert_rtt_write(struct ert_rtt *r, const char *data, size_t len)
{
	struct ert_rtt_buffer *b = &r->cb.up[0];
	if (len == 0)
		return 0;
	if (b->flags == ERT_RTT_DROP) {
		if (r->at_line_start && r->cb.dropped != r->reported) {
			char line[48];
			uint32_t n = drop_line(line, r->cb.dropped - r->reported);
			if (space(b) >= n + len) {
				put(b, line, n);
				r->reported = r->cb.dropped;
			}
		}
		if (len > space(b)) {
			r->cb.dropped += (uint32_t)len;
			return 0;
		}
		put(b, data, (uint32_t)len);
		r->at_line_start = data[len - 1] == '\n';
		return 0;
	}
	size_t done = 0;
	uint32_t spins = 0;
	while (done < len) {
		uint32_t s = space(b);
		if (s == 0) {
			if (r->spin_max && ++spins > r->spin_max)
				return -1;
			continue;
		}
		spins = 0;
		uint32_t n = len - done < s ? (uint32_t)(len - done) : s;
		put(b, data + done, n);
		done += n;
	}
	r->at_line_start = data[len - 1] == '\n';
	return 0;
}

size_t ert_rtt_read(struct ert_rtt *r, char *data, size_t cap)
{
	struct ert_rtt_buffer *b = &r->cb.down[0];
	size_t n = 0;
	uint32_t rd = b->rd_off;
	uint32_t wr = b->wr_off;
	if (rd >= b->size || wr >= b->size)
		return 0; /* a corrupt offset from the host: read nothing */
	while (rd != wr && n < cap) {
		data[n++] = b->buf[rd];
		rd = rd + 1u == b->size ? 0u : rd + 1u;
	}
	BARRIER();
	b->rd_off = rd;
	return n;
}

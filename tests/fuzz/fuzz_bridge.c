/* Fuzz the bridge protocol's decoder (docs/BRIDGE.md): any bytes, split
 * into chunks of varying size, go through the line splitter and every
 * complete line through the message decoder. Every failure must carry a
 * message naming a stdout byte offset inside the input; nothing may read
 * past a buffer (ASan) or leak. */
#include "drivers/instruments/bridge/bridge_wire.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_lines l = {0};
	size_t pos = 0;
	/* The first byte picks the chunk size, so that lines split across
	 * appends are exercised. */
	size_t chunk = size ? (size_t)data[0] % 61 + 1 : 1;
	while (pos < size) {
		size_t n = size - pos < chunk ? size - pos : chunk;
		struct ergon_err err = {0};
		int rc = bridge_lines_append(&l, (const char *)data + pos, n, &err);
		pos += n;
		if (rc) {
			if (err.msg[0] == '\0' || strstr(err.msg, "stdout byte ") == NULL)
				abort();
			break;
		}
		const char *line;
		size_t len;
		uint64_t off, no;
		while (bridge_lines_next(&l, &line, &len, &off, &no)) {
			if (off + len >= pos + 1 || line < l.buf || line + len > l.buf + l.len)
				abort();
			struct bridge_msg m;
			struct ergon_err e = {0};
			int r = bridge_wire_decode(line, len, off, no, &m, &e);
			if (r != 0 && (e.msg[0] == '\0' || (r == ERGON_EPARSE &&
							    strstr(e.msg, "stdout byte ") == NULL)))
				abort();
			if (r == 0 && m.type == BRIDGE_MSG_RAW &&
			    (m.raw.n == 0 || m.raw.n > ERGON_BRIDGE_RAW_MAX ||
			     m.raw.current_a == NULL))
				abort();
			if (r == 0 && m.type == BRIDGE_MSG_STATS &&
			    !(m.stats.t_end_s > m.stats.t_start_s))
				abort();
			/* A block: 1..max packets, consecutive, each one passing
			 * a stats line's checks. */
			if (r == 0 && m.type == BRIDGE_MSG_STATS_BLOCK) {
				if (m.block.n == 0 || m.block.n > ERGON_BRIDGE_BLOCK_MAX ||
				    m.block.p == NULL || m.block.sample_count == 0)
					abort();
				for (size_t k = 0; k < m.block.n; k++)
					if (!(m.block.p[k].t_end_s > m.block.p[k].t_start_s) ||
					    !isfinite(m.block.p[k].i_avg_a) ||
					    (k > 0 && m.block.p[k].sample_id !=
							  m.block.p[k - 1].sample_id +
							      m.block.sample_count))
						abort();
			}
			/* The stats_block fast path and the general path agree:
			 * the same result, the same packets. */
			struct bridge_msg m2;
			struct ergon_err e2 = {0};
			bridge_wire_no_fast = 1;
			int r2 = bridge_wire_decode(line, len, off, no, &m2, &e2);
			bridge_wire_no_fast = 0;
			if (r2 != r || (r == 0 && m2.type != m.type))
				abort();
			if (r == 0 && m.type == BRIDGE_MSG_STATS_BLOCK &&
			    (m2.block.n != m.block.n || m2.block.sample_count != m.block.sample_count ||
			     memcmp(m2.block.p, m.block.p, m.block.n * sizeof(*m.block.p)) != 0))
				abort();
			bridge_msg_cleanup(&m2);
			bridge_msg_cleanup(&m);
		}
	}
	bridge_lines_free(&l);
	return 0;
}

/* ITM packet decoding (Armv7-M/Armv8-M ARM, Appendix "ITM and DWT Packet
 * Protocol"): keep the payload of software source packets on stimulus
 * port 0, skip everything else, count what was lost.
 *
 * Header byte:
 *   0x00 ... 0x00 0x80   synchronisation (>= 47 zero bits then a one)
 *   0x70                 overflow: the ITM FIFO dropped packets
 *   xxxxx0ss (ss != 0)   software source packet, port = bits 7:3, ss = 1/2/4 bytes
 *   xxxxx1ss (ss != 0)   hardware source packet (DWT), skipped
 *   cDDD0000             local timestamp; c=1 means continuation bytes follow
 *   cxxx1x00             extension packet; c=1 means continuation bytes follow
 *   10x10100             global timestamp 1/2, continuation bytes follow
 * Anything else is malformed and counted (the capture becomes diagnostic).
 */
#include "ergon/transport.h"

enum { ST_HEADER = 0, ST_PAYLOAD, ST_CONT };

size_t ergon_itm_decode(struct ergon_itm *d, const unsigned char *in, size_t len,
			unsigned char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char b = in[i];
		switch (d->state) {
		case ST_PAYLOAD:
			if (!d->hw && d->port == 0) {
				if (o < cap)
					out[o++] = b;
			} else if (!d->hw) {
				d->other_ports++;
			}
			if (--d->need == 0)
				d->state = ST_HEADER;
			continue;
		case ST_CONT:
			/* Continuation bytes end with bit 7 clear (at most 4). */
			if (!(b & 0x80) || --d->need == 0)
				d->state = ST_HEADER;
			continue;
		default:
			break;
		}
		if (b == 0x00) {
			d->zeros++;
			continue;
		}
		if (b == 0x80 && d->zeros >= 5) {
			d->zeros = 0;
			d->synced = true;
			d->syncs++;
			continue;
		}
		if (d->zeros) {
			/* Zero bytes that did not end in a sync are not packets. */
			d->malformed++;
			d->zeros = 0;
		}
		unsigned ss = b & 0x03u;
		if (ss) {
			d->need = ss == 3 ? 4u : ss;
			d->hw = (b & 0x04u) != 0;
			d->port = b >> 3;
			d->state = ST_PAYLOAD;
			continue;
		}
		if (b == 0x70) {
			d->overflows++;
			continue;
		}
		if ((b & 0x0Fu) == 0x00) {
			/* Local timestamp format 1 (c=1) or 2 (single byte). */
			if (b & 0x80u) {
				d->need = 4;
				d->state = ST_CONT;
			}
			continue;
		}
		if ((b & 0x0Bu) == 0x08u) {
			if (b & 0x80u) {
				d->need = 4;
				d->state = ST_CONT;
			}
			continue;
		}
		if (b == 0x94 || b == 0xB4) {
			d->need = b == 0x94 ? 4u : 6u;
			d->state = ST_CONT;
			continue;
		}
		d->malformed++;
	}
	return o;
}

/* Lifecycle through a Black Magic Probe (target.probe bmp:DEVICE): the
 * probe is a GDB server on its first serial port, so every step is GDB
 * remote protocol (ergon_gdb_link, acks on):
 *   flash    qRcmd swdp_scan (`monitor swdp_scan`; the console must list a
 *            target), vAttach;1 (halts the core), then per loadable
 *            segment of the ELF vFlashErase:ADDR,LEN and vFlashWrite:ADDR:
 *            DATA (escaped binary, packet-sized pieces), then vFlashDone
 *   reset    scan and attach again, then vRun (the probe resets the core,
 *            which stays halted); none: no vRun
 *   endpoint rtt:dev=DEVICE: the RTT reader's first `?` finds the core
 *            halted and its first `c` starts it, so nothing the firmware
 *            writes is missed
 *   finish   nothing: the reader left the core running.
 * The probe keeps the attach between sessions (one per step; a serial
 * port has no connection to lose). BMP firmware also has `monitor rtt`
 * (its own RTT reader on the second serial port); ergon reads RTT through
 * GDB instead so that one reader serves every probe.
 * Not run on a real probe: tested against a fake BMP on a pty that
 * implements these packets and checks the flashed bytes
 * (tests/support/fake_probe/fake_gdb_rtt.py --bmp,
 * tests/functional/test_profile_pyocd_bmp.sh). */
#include "drivers/lifecycle/bmp/bmp_elf.h"
#include "ergon/lifecycle.h"
#include "ergon/rtt_gdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BMP_CMD_MS 5000	     /* scan, attach, write, vRun */
#define BMP_ERASE_MS 60000   /* a mass erase of a large flash */
#define BMP_PACKET_MAX 4096u /* our side of a vFlashWrite */

struct ergon_lifecycle {
	char dev[256];
	int reset_strategy;
	char reply[512];
	char pkt[BMP_PACKET_MAX + 64];
};

static int b_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		  struct ergon_err *err)
{
	const char *probe = o->probe ? o->probe : "";
	if (strncmp(probe, "bmp:", 4) != 0 || strlen(probe + 4) >= 256 || probe[4] == '\0')
		return ergon_err_set(err, ERGON_EUSAGE,
				     "bmp: target.probe '%s' is not bmp:/dev/ttyACM0", probe);
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "bmp: out of memory");
	snprintf(lc->dev, sizeof lc->dev, "%s", probe + 4);
	lc->reset_strategy = o->reset_strategy;
	*out = lc;
	return 0;
}

/* "qRcmd," and the command in hex. */
static int monitor(struct ergon_lifecycle *lc, struct ergon_gdb_link *l, const char *cmd,
		   struct ergon_err *err)
{
	int k = snprintf(lc->pkt, sizeof lc->pkt, "qRcmd,");
	for (const char *c = cmd; *c; c++)
		k += snprintf(lc->pkt + k, sizeof lc->pkt - (size_t)k, "%02x", (unsigned char)*c);
	int rc =
	    ergon_gdb_link_cmd(l, lc->pkt, (size_t)k, lc->reply, sizeof lc->reply, BMP_CMD_MS, err);
	if (!rc && strcmp(lc->reply, "OK") != 0)
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "bmp:%s: `monitor %s` failed (reply '%.16s', output '%.200s')",
				   lc->dev, cmd, lc->reply, ergon_gdb_link_console(l));
	return rc;
}

/* Scan the SWD bus and attach target 1 (halted). */
static int attach(struct ergon_lifecycle *lc, struct ergon_gdb_link **out, struct ergon_err *err)
{
	struct ergon_gdb_link *l = NULL;
	int rc = ergon_gdb_link_open_dev(lc->dev, &l, err);
	if (!rc)
		rc = monitor(lc, l, "swdp_scan", err);
	if (!rc && strstr(ergon_gdb_link_console(l), "Available Targets") == NULL)
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "bmp:%s: swdp_scan found no target (output '%.200s'); check "
				   "the SWD wires and the target's power",
				   lc->dev, ergon_gdb_link_console(l));
	if (!rc)
		rc = ergon_gdb_link_cmd(l, "vAttach;1", 9, lc->reply, sizeof lc->reply, BMP_CMD_MS,
					err);
	if (!rc && lc->reply[0] != 'T' && lc->reply[0] != 'S')
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "bmp:%s: vAttach;1 failed (reply '%.16s'); is target 1 the "
				   "core (monitor swdp_scan lists it)?",
				   lc->dev, lc->reply);
	if (rc) {
		ergon_gdb_link_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int ok_reply(struct ergon_lifecycle *lc, const char *what, uint32_t addr,
		    struct ergon_err *err)
{
	if (strcmp(lc->reply, "OK") == 0)
		return 0;
	return ergon_err_set(err, ERGON_EDEVICE,
			     "bmp:%s: %s at 0x%08x refused (reply '%.16s'); is the address in "
			     "the target's flash (the ELF's load addresses)?",
			     lc->dev, what, addr, lc->reply);
}

/* One segment: erase its range, then write it in packet-sized pieces. */
static int flash_segment(struct ergon_lifecycle *lc, struct ergon_gdb_link *l,
			 const unsigned char *data, uint32_t addr, uint32_t len,
			 struct ergon_err *err)
{
	int k = snprintf(lc->pkt, sizeof lc->pkt, "vFlashErase:%x,%x", addr, len);
	int rc = ergon_gdb_link_cmd(l, lc->pkt, (size_t)k, lc->reply, sizeof lc->reply,
				    BMP_ERASE_MS, err);
	if (!rc)
		rc = ok_reply(lc, "vFlashErase", addr, err);
	size_t psz = ergon_gdb_link_packet_size(l);
	size_t room = (psz < BMP_PACKET_MAX ? psz : BMP_PACKET_MAX) - 32u;
	for (uint32_t done = 0; !rc && done < len;) {
		size_t n =
		    (size_t)snprintf(lc->pkt, sizeof lc->pkt, "vFlashWrite:%x:", addr + done);
		uint32_t start = done;
		/* Escape '#', '$', '}' and '*'; each byte takes at most two. */
		while (done < len && n + 2 <= room) {
			unsigned char c = data[done++];
			if (c == '#' || c == '$' || c == '}' || c == '*') {
				lc->pkt[n++] = '}';
				c ^= 0x20;
			}
			lc->pkt[n++] = (char)c;
		}
		rc =
		    ergon_gdb_link_cmd(l, lc->pkt, n, lc->reply, sizeof lc->reply, BMP_CMD_MS, err);
		if (!rc)
			rc = ok_reply(lc, "vFlashWrite", addr + start, err);
	}
	return rc;
}

static int b_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	struct ergon_bmp_elf elf;
	int rc = ergon_bmp_elf_load(image, &elf, err);
	if (rc)
		return rc;
	struct ergon_gdb_link *l = NULL;
	rc = attach(lc, &l, err);
	for (int i = 0; !rc && i < elf.count; i++)
		rc = flash_segment(lc, l, elf.data + elf.seg[i].offset, elf.seg[i].addr,
				   elf.seg[i].len, err);
	if (!rc)
		rc = ergon_gdb_link_cmd(l, "vFlashDone", 10, lc->reply, sizeof lc->reply,
					BMP_ERASE_MS, err);
	if (!rc)
		rc = ok_reply(lc, "vFlashDone", elf.seg[0].addr, err);
	ergon_gdb_link_close(l);
	ergon_bmp_elf_free(&elf);
	return rc;
}

static int b_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	struct ergon_gdb_link *l = NULL;
	int rc = attach(lc, &l, err);
	if (!rc && lc->reset_strategy != ERGON_LC_RESET_NONE) {
		rc =
		    ergon_gdb_link_cmd(l, "vRun;", 5, lc->reply, sizeof lc->reply, BMP_CMD_MS, err);
		if (!rc && lc->reply[0] != 'T' && lc->reply[0] != 'S')
			rc = ergon_err_set(err, ERGON_EDEVICE,
					   "bmp:%s: vRun (reset) failed (reply '%.16s')", lc->dev,
					   lc->reply);
	}
	ergon_gdb_link_close(l);
	return rc;
}

static int b_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	int n = snprintf(spec, cap, "rtt:dev=%s", lc->dev);
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "bmp: endpoint too long");
	return 0;
}

static int b_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)lc;
	(void)err;
	return 0;
}

static void b_close(struct ergon_lifecycle *lc)
{
	free(lc);
}

const struct ergon_lifecycle_driver ergon_lifecycle_bmp = {
    .name = "bmp",
    .hardware = 1,
    .open = b_open,
    .flash = b_flash,
    .reset = b_reset,
    .endpoint = b_endpoint,
    .finish = b_finish,
    .close = b_close,
};

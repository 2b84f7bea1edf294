/* The target's INA228 driver against a bus that answers with arbitrary
 * bytes (input it did not produce): bring-up, arm and read must never read
 * or write out of bounds, and whatever the registers say, the reading keeps
 * its invariants: negative CHARGE is clamped to 0 (never wrapped), the
 * overflow flag is exactly DIAG_ALRT's ENERGYOF|CHARGEOF|MATHOF, VBUS fits
 * its 20 bits. The first input byte picks the shunt/current plan. */
#include "ergon/ert_ina228.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct bus {
	const uint8_t *data;
	size_t len, pos;
};

static int rd(void *ctx, uint8_t addr7, uint8_t reg, uint8_t *out, size_t n)
{
	struct bus *b = ctx;
	(void)addr7;
	(void)reg;
	/* Running out of input is a NACK. */
	if (b->len - b->pos < n)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = b->data[b->pos++];
	return 0;
}

static int wr(void *ctx, uint8_t addr7, uint8_t reg, const uint8_t *in, size_t n)
{
	struct bus *b = ctx;
	(void)addr7;
	(void)reg;
	(void)in;
	(void)n;
	/* One input byte decides whether the write is acknowledged. */
	if (b->pos >= b->len)
		return -1;
	return (b->data[b->pos++] & 0x0Fu) == 0x0Fu ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const double shunts[4] = {0.5, 0.015, 0.82, 0.1};
	static const double imax[4] = {0.02, 0.02, 0.05, 1.0};
	unsigned k = data[0] & 3u;
	struct bus b = {data, size, 1};
	struct ert_hal hal = {.ctx = &b, .i2c_read = rd, .i2c_write = wr};
	struct ert_ina228_config cfg = {.addr7 = 0x40,
					.shunt_ohms = shunts[k],
					.max_current_a = imax[k],
					.conv_time_us = 1052,
					.averages = 64};
	struct ert_ina228 dev;
	/* Bring-up may fail any way the bytes make it; the rest of the run
	 * exercises arm/read whatever the identity said. */
	int rc = ert_ina228_init(&dev, &hal, &cfg);
	if (rc == ERT_E_CONFIG || rc == ERT_E_UNSUPPORTED)
		abort(); /* the plans above are all valid */
	if (ert_ina228_arm(&dev) != ERT_OK)
		return 0;
	struct ert_ina228_reading r = {0};
	if (ert_ina228_read(&dev, &r) != ERT_OK)
		return 0;
	if (r.energy_raw >= (UINT64_C(1) << 40) || r.vbus_raw >= (1u << 20))
		abort();
	if (r.charge_raw < -(INT64_C(1) << 39) || r.charge_raw >= (INT64_C(1) << 39))
		abort();
	if (r.charge_clamped != (r.charge_raw < 0) || (r.charge_clamped && r.charge_nc != 0))
		abort();
	int want_ovf = (r.diag & (ERT_INA228_DIAG_ENERGYOF | ERT_INA228_DIAG_CHARGEOF |
				  ERT_INA228_DIAG_MATHOF)) != 0;
	if (r.overflow != want_ovf)
		abort();
	/* 2^40 energy LSBs at the largest plan (1 A: 51.2 x 1.9 uA = 97.7 uJ
	 * per LSB) stay far below 2^64 nJ. */
	if (r.energy_nj > UINT64_C(1) << 60)
		abort();
	return 0;
}

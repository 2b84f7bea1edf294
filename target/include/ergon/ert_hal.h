/* The target runtime's hardware abstraction: the few things a board must
 * provide, each returning a status (0 ok, negative ERT_E*).
 *
 * Freestanding C11: this header and every runtime file use only
 * <stddef.h>, <stdint.h> and <stdbool.h>. A port fills one const struct
 * ert_hal; optional entries are NULL when the board lacks the feature, and
 * the runtime says so on the wire instead of printing zeros.
 */
#ifndef ERT_HAL_H
#define ERT_HAL_H

#include <stddef.h>
#include <stdint.h>

/* Status codes. Grow only at the end; the power terminal record carries the
 * code, so the host can name the failure. */
enum ert_status {
	ERT_OK = 0,
	ERT_E_TRANSPORT = -1,	       /* the transport refused or failed a write */
	ERT_E_TIMEOUT = -2,	       /* a bounded wait ran out (GO, drain) */
	ERT_E_I2C = -3,		       /* an I2C transfer failed */
	ERT_E_CONFIG = -4,	       /* a configuration the runtime cannot honour */
	ERT_E_GPIO = -5,	       /* a GPIO call failed or read back wrong */
	ERT_E_UNSUPPORTED = -6,	       /* the board lacks a required HAL entry */
	ERT_E_INA228_ID = -7,	       /* manufacturer or device id mismatch */
	ERT_E_SHUNT_CAL_WRITE = -8,    /* writing SHUNT_CAL failed on the bus */
	ERT_E_SHUNT_CAL_READBACK = -9, /* SHUNT_CAL read back different */
	ERT_E_CLOCK = -10,	       /* the window clock failed or did not advance */
	ERT_E_WORKLOAD = -11,	       /* the user's inference returned an error */
	ERT_E_LAYERS = -12,	       /* layer hooks misused (nesting, too many) */
	ERT_E_GATE_STUCK = -13,	       /* the gate pin read back high after lowering */
};

/* Short stable name of a status ("timeout"), never NULL. */
const char *ert_status_name(int status);

struct ert_hal {
	void *ctx; /* passed back to every entry */
	/* Write len bytes to the transport; 0 only when all were accepted.
	 * NULL in the dedicated power build (no transport at all). */
	int (*write)(void *ctx, const char *data, size_t len);
	/* Bytes still queued in the transport (optional, for the drain wait). */
	int (*tx_pending)(void *ctx, size_t *pending_bytes);
	/* The window clock in µs, independent of the CPU cycle counter (an
	 * STIMER-like timer). Wraps at 2^32 µs (71 min); windows are shorter. */
	int (*clock_us)(void *ctx, uint32_t *now_us);
	/* CPU cycle counter (optional): ERT_E_UNSUPPORTED when the core has
	 * none or it does not count (QEMU's DWT reads 0). */
	int (*cycles)(void *ctx, uint32_t *now_cycles);
	/* Busy-wait us microseconds without using the cycle counter. */
	int (*delay_us)(void *ctx, uint32_t us);
	int (*gpio_set)(void *ctx, uint8_t pin, int high);
	int (*gpio_get)(void *ctx, uint8_t pin, int *high);
	/* I2C register access: 7-bit address, 8-bit register, big-endian data
	 * as on the wire (len bytes). */
	int (*i2c_read)(void *ctx, uint8_t addr7, uint8_t reg, uint8_t *data, size_t len);
	int (*i2c_write)(void *ctx, uint8_t addr7, uint8_t reg, const uint8_t *data, size_t len);
	/* PMU (optional): program up to ERT_PMU_PASS_COUNTERS event ids, read
	 * the counts since programming and whether any counter overflowed. */
	int (*pmu_configure)(void *ctx, const uint16_t *events, unsigned n_events);
	int (*pmu_read)(void *ctx, uint32_t *counts, unsigned n_events, int *overflow);
	uint32_t core_clock_hz;
	uint8_t max_gpio_pin; /* pins 1..max_gpio_pin exist; 0 means absent */
};

/* Counters per PMU pass: Armv8.1-M has 8 16-bit counters, chained in pairs
 * into 4 32-bit counters. */
#define ERT_PMU_PASS_COUNTERS 4

#endif

/* The AN505 HAL: CMSDK UART0 transport, SysTick window clock, DWT CYCCNT
 * (used only when seen to count), FPGAIO LEDs as GPIO; no PMU (the
 * Cortex-M33 is Armv8.0-M: the Armv8.1-M PMU does not exist) and no
 * INA228, so those HAL entries are NULL and the runtime says so on the
 * wire. Register addresses: Arm AN505 application note ("Memory map", the
 * Secure aliases at 0x5xxxxxxx, since the firmware runs Secure), the
 * Cortex-M33 TRM (SysTick, DWT); checked against QEMU's mps2-an505
 * (hw/arm/mps2-tz.c) by running it (docs/internals/ports.md). */
#include "ert_port.h"

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* CMSDK APB UART0 (AN505: 0x40200000, Secure alias 0x50200000). */
#define UART0_BASE 0x50200000u
#define UART_DATA REG32(UART0_BASE + 0x00u)
#define UART_STATE REG32(UART0_BASE + 0x04u) /* bit0: TX buffer full */
#define UART_CTRL REG32(UART0_BASE + 0x08u)  /* bit0: TX enable */
#define UART_BAUDDIV REG32(UART0_BASE + 0x10u)
/* FPGAIO LED register (AN505: 0x40302000, Secure alias 0x50302000): the
 * MPS2 has two user LEDs, bits 0..1, readable back. */
#define FPGAIO_LED REG32(0x50302000u)
#define AN505_LEDS 2u
/* SysTick. */
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
/* DWT cycle counter. */
#define DEMCR REG32(0xE000EDFCu)
#define DWT_CTRL REG32(0xE0001000u)
#define DWT_CYCCNT REG32(0xE0001004u)

/* AN505 SYSCLK is 20 MHz (QEMU's mps2-an505 model uses the same). */
#define AN505_CORE_HZ 20000000u
#define TICKS_PER_MS (AN505_CORE_HZ / 1000u)
#define TICKS_PER_US (AN505_CORE_HZ / 1000000u)
/* A UART that stays full this many polls is dead: fail, never hang. */
#define UART_SPIN_MAX 1000000u

static volatile uint32_t systick_ms;

void SysTick_Handler(void);
void SysTick_Handler(void)
{
	systick_ms++;
}

static int clock_us(void *ctx, uint32_t *now_us)
{
	(void)ctx;
	uint32_t ms1, ms2, cvr;
	/* Re-read when the millisecond tick landed between the two reads. */
	do {
		ms1 = systick_ms;
		cvr = SYST_CVR;
		ms2 = systick_ms;
	} while (ms1 != ms2);
	*now_us = ms1 * 1000u + (TICKS_PER_MS - 1u - cvr) / TICKS_PER_US;
	return 0;
}

static int delay_us(void *ctx, uint32_t us)
{
	uint32_t t0 = 0, t = 0;
	clock_us(ctx, &t0);
	do {
		clock_us(ctx, &t);
	} while (t - t0 < us);
	return 0;
}

static int cycles(void *ctx, uint32_t *now)
{
	(void)ctx;
	*now = DWT_CYCCNT;
	return 0;
}

#if !defined(ERT_POWER_BUILD)
/* As on the an547 (port/an547/port.c): under -icount time is the
 * instruction count, so the stream stays in RAM and goes to UART0 only
 * when this buffer is full and at exit, after every timed region; the
 * TX-full polling would otherwise put host I/O into the emulated time. */
#define AN505_TX_BUF 49152u
static char tx_buf[AN505_TX_BUF];
static size_t tx_len;
static int tx_failed;
static int tx_flushed; /* the UART has carried bytes before the exit */

static int uart_put(const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint32_t spins = 0;
		while (UART_STATE & 1u) {
			if (++spins > UART_SPIN_MAX)
				return -1;
		}
		UART_DATA = (uint8_t)data[i];
	}
	return 0;
}

static void stage_flush(void)
{
	if (tx_len > 0 && !tx_failed && uart_put(tx_buf, tx_len) != 0)
		tx_failed = 1;
	tx_len = 0;
	tx_flushed = 1;
}

void an505_flush(void)
{
	stage_flush();
}

static int stage_write(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	if (tx_failed)
		return -1;
	if (tx_len + len > AN505_TX_BUF) {
		stage_flush();
		if (tx_failed)
			return -1;
	}
	if (len > AN505_TX_BUF)
		return uart_put(data, len);
	for (size_t i = 0; i < len; i++)
		tx_buf[tx_len + i] = data[i];
	tx_len += len;
	return 0;
}

/* Nothing is on the wire while the stream sits in RAM. */
static int stage_pending(void *ctx, size_t *pending)
{
	(void)ctx;
	*pending = tx_flushed && (UART_STATE & 1u) ? 1u : 0u;
	return 0;
}
#else
void an505_flush(void)
{
}
#endif

static int gpio_set(void *ctx, uint8_t pin, int high)
{
	(void)ctx;
	if (pin == 0 || pin > AN505_LEDS)
		return -1;
	uint32_t bit = 1u << (pin - 1u);
	FPGAIO_LED = high ? (FPGAIO_LED | bit) : (FPGAIO_LED & ~bit);
	return 0;
}

static int gpio_get(void *ctx, uint8_t pin, int *high)
{
	(void)ctx;
	if (pin == 0 || pin > AN505_LEDS)
		return -1;
	*high = (int)((FPGAIO_LED >> (pin - 1u)) & 1u);
	return 0;
}

void ert_port_hal_init(struct ert_hal *hal)
{
#if !defined(ERT_POWER_BUILD)
	UART_BAUDDIV = 16u; /* the minimum the CMSDK UART accepts */
	UART_CTRL = 1u;
	hal->write = stage_write;
	hal->tx_pending = stage_pending;
#else
	/* The power build has no transport at all. */
	hal->write = 0;
	hal->tx_pending = 0;
#endif
	SYST_RVR = TICKS_PER_MS - 1u;
	SYST_CVR = 0;
	SYST_CSR = 0x7u; /* processor clock, interrupt, enable */
	__asm volatile("cpsie i" ::: "memory");

	hal->ctx = 0;
	hal->clock_us = clock_us;
	hal->delay_us = delay_us;
	hal->gpio_set = gpio_set;
	hal->gpio_get = gpio_get;
	hal->i2c_read = 0; /* no INA228 on the emulated board */
	hal->i2c_write = 0;
	hal->pmu_configure = 0; /* Armv8.0-M: no PMU */
	hal->pmu_read = 0;
	hal->core_clock_hz = AN505_CORE_HZ;
	hal->max_gpio_pin = AN505_LEDS;

	/* The DWT counts only if seen to advance (QEMU: it reads 0). */
	DEMCR = DEMCR | (1u << 24); /* TRCENA */
	DWT_CYCCNT = 0;
	DWT_CTRL = DWT_CTRL | 1u;
	uint32_t c0 = DWT_CYCCNT;
	delay_us(0, 20);
	hal->cycles = DWT_CYCCNT != c0 ? cycles : 0;
}

void an505_exit(int code)
{
	an505_flush();
	/* SYS_EXIT_EXTENDED (0x20) with ADP_Stopped_ApplicationExit (0x20026):
	 * QEMU with -semihosting-config enable=on exits with `code`. */
	static volatile uint32_t block[2];
	block[0] = 0x20026u;
	block[1] = (uint32_t)code;
	register uint32_t r0 __asm("r0") = 0x20u;
	register volatile uint32_t *r1 __asm("r1") = block;
	__asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
	for (;;) {
	}
}

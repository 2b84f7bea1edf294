/* The AN547 HAL: CMSDK UART0 transport, SysTick window clock, DWT CYCCNT and
 * Armv8.1-M PMU (used only when they are seen to count), FPGAIO LEDs as
 * GPIO. Register addresses: Arm AN547 application note and the Cortex-M55
 * TRM; the QEMU facts are in docs/internals/target.md. */
#include "an547.h"

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* CMSDK UART0 (AN547: 0x49303000). */
#define UART0_BASE 0x49303000u
#define UART_DATA REG32(UART0_BASE + 0x00u)
#define UART_STATE REG32(UART0_BASE + 0x04u) /* bit0: TX buffer full */
#define UART_CTRL REG32(UART0_BASE + 0x08u)  /* bit0: TX enable */
#define UART_BAUDDIV REG32(UART0_BASE + 0x10u)
/* FPGAIO LED register: bits 0..7, readable back. */
#define FPGAIO_LED REG32(0x49302000u)
/* SysTick. */
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
/* DWT cycle counter. */
#define DEMCR REG32(0xE000EDFCu)
#define DWT_CTRL REG32(0xE0001000u)
#define DWT_CYCCNT REG32(0xE0001004u)
/* Armv8.1-M PMU (Cortex-M55 TRM, PMU register summary). */
#define PMU_EVCNTR(n) REG32(0xE0003000u + 4u * (n))
#define PMU_CCNTR REG32(0xE000307Cu)
#define PMU_EVTYPER(n) REG32(0xE0003400u + 4u * (n))
#define PMU_CNTENSET REG32(0xE0003C00u)
#define PMU_CNTENCLR REG32(0xE0003C20u)
#define PMU_OVSCLR REG32(0xE0003C80u)
#define PMU_OVSSET REG32(0xE0003CC0u)
#define PMU_CTRL REG32(0xE0003E04u)
#define PMU_EVENT_CHAIN 0x001Eu

/* AN547 SYSCLK is 32 MHz (QEMU's mps3-an547 model uses the same). */
#define AN547_CORE_HZ 32000000u
#define TICKS_PER_MS (AN547_CORE_HZ / 1000u)
#define TICKS_PER_US (AN547_CORE_HZ / 1000000u)
/* A UART that stays full this many polls is dead: fail, never hang. */
#define UART_SPIN_MAX 1000000u

static volatile uint32_t systick_ms;
static int have_cyccnt;
static int have_pmu;

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

uint64_t an547_systick_ticks(void)
{
	uint32_t ms1, ms2, cvr;
	do {
		ms1 = systick_ms;
		cvr = SYST_CVR;
		ms2 = systick_ms;
	} while (ms1 != ms2);
	return (uint64_t)ms1 * TICKS_PER_MS + (TICKS_PER_MS - 1u - cvr);
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

#if !defined(ERT_POWER_BUILD) && defined(ERT_AN547_RTT)
/* -DERT_AN547_RTT=1: the stream goes into an RTT up buffer in DTCM instead
 * of UART0, drained by the host over the debug port (QEMU's gdbstub, a
 * probe's GDB server). Mode: ERT_AN547_RTT_MODE (ERT_RTT_BLOCK default,
 * ERT_RTT_DROP to drop and count). */
#include "ergon/ert_rtt.h"
#ifndef ERT_AN547_RTT_UP
#define ERT_AN547_RTT_UP 49152u
#endif
#ifndef ERT_AN547_RTT_MODE
#define ERT_AN547_RTT_MODE ERT_RTT_BLOCK
#endif
/* At exit, wait at most this long (virtual ms) for the host to drain. */
#define AN547_RTT_EXIT_WAIT_MS 60000u
struct ert_rtt _SEGGER_RTT;
static char rtt_up[ERT_AN547_RTT_UP];
static char rtt_down[64];

/* Into the ring one line at a time, so that in drop mode a drop loses
 * whole lines and its report lands at a line start. */
__attribute__((noipa)) static int link_put(const char *data, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && data[j] != '\n')
			j++;
		if (j < len)
			j++;
		if (ert_rtt_write(&_SEGGER_RTT, data + i, j - i) != 0)
			return -1;
		i = j;
	}
	return 0;
}

/* Nothing goes on a wire: the host reads the RAM ring over the debug port
 * (halting the core on QEMU), not the CPU, so the clean window's drain wait
 * has nothing to wait for. */
/* noipa: the caller's code must not depend on what this returns (see
 * stage_pending). */
__attribute__((noipa)) static size_t link_busy(void)
{
	return 0;
}

static void link_drain(void)
{
	for (uint32_t ms = 0; ms < AN547_RTT_EXIT_WAIT_MS && ert_rtt_pending(&_SEGGER_RTT) != 0;
	     ms++)
		(void)delay_us(0, 1000u);
}
#elif !defined(ERT_POWER_BUILD)
__attribute__((noipa)) static int link_put(const char *data, size_t len)
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

__attribute__((noipa)) static size_t link_busy(void)
{
	return (UART_STATE & 1u) ? 1u : 0u;
}

static void link_drain(void)
{
}
#endif

#if !defined(ERT_POWER_BUILD)
/* Under -icount, time is the instruction count. Both the UART and the RTT
 * build therefore keep the stream in RAM and hand it to the link (UART0, or
 * the RTT ring) only when this buffer is full and at exit (an547_flush),
 * after every timed region, through the same code: the instructions
 * executed up to the end sentinel are the same in both builds, so their
 * clocks, and every per-layer figure, are identical (the TX-full polling
 * of a UART, or a blocking RTT write waiting for the host, would otherwise
 * put host I/O into the emulated time). The link's functions are noipa:
 * the staging code must compile to the same instructions in both builds,
 * whatever the link's code looks like. A stream larger than the buffer
 * flushes mid-run: then runs are no longer exactly repeatable. */
#define AN547_TX_BUF 49152u
static char tx_buf[AN547_TX_BUF];
static size_t tx_len;
static int tx_failed;
static int tx_flushed; /* the link has carried bytes before the exit */

__attribute__((noipa)) static void stage_flush(void)
{
	if (tx_len > 0 && !tx_failed && link_put(tx_buf, tx_len) != 0)
		tx_failed = 1;
	tx_len = 0;
	tx_flushed = 1;
}

void an547_flush(void)
{
	stage_flush();
	link_drain();
}

static int stage_write(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	if (tx_failed)
		return -1;
	if (tx_len + len > AN547_TX_BUF) {
		stage_flush();
		if (tx_failed)
			return -1;
	}
	if (len > AN547_TX_BUF)
		return link_put(data, len);
	for (size_t i = 0; i < len; i++)
		tx_buf[tx_len + i] = data[i];
	tx_len += len;
	return 0;
}

/* Nothing is on the wire while the stream sits in RAM: the clean window's
 * drain wait finds the link idle until a mid-run flush. link_busy is
 * noipa so that this compiles to the same instructions in both builds. */
static int stage_pending(void *ctx, size_t *pending)
{
	(void)ctx;
	*pending = tx_flushed ? link_busy() : 0u;
	return 0;
}
#else
void an547_flush(void)
{
}
#endif

static int gpio_set(void *ctx, uint8_t pin, int high)
{
	(void)ctx;
	if (pin == 0 || pin > 8)
		return -1;
	uint32_t bit = 1u << (pin - 1u);
	FPGAIO_LED = high ? (FPGAIO_LED | bit) : (FPGAIO_LED & ~bit);
	return 0;
}

static int gpio_get(void *ctx, uint8_t pin, int *high)
{
	(void)ctx;
	if (pin == 0 || pin > 8)
		return -1;
	*high = (FPGAIO_LED >> (pin - 1u)) & 1u;
	return 0;
}

/* One pass: event n in counter 2n (low half), CHAIN in 2n+1 (high half). */
static int pmu_configure(void *ctx, const uint16_t *events, unsigned n)
{
	(void)ctx;
	if (n > ERT_PMU_PASS_COUNTERS)
		return -1;
	PMU_CNTENCLR = 0xFFu;
	for (unsigned i = 0; i < n; i++) {
		PMU_EVTYPER(2u * i) = events[i];
		PMU_EVTYPER(2u * i + 1u) = PMU_EVENT_CHAIN;
	}
	PMU_OVSCLR = 0xFFu;
	PMU_CTRL = PMU_CTRL | 0x3u; /* E: enable, P: reset event counters */
	PMU_CNTENSET = (1u << (2u * n)) - 1u;
	return 0;
}

static int pmu_read(void *ctx, uint32_t *counts, unsigned n, int *overflow)
{
	(void)ctx;
	PMU_CNTENCLR = 0xFFu;
	uint32_t ovs = PMU_OVSSET;
	*overflow = 0;
	for (unsigned i = 0; i < n; i++) {
		counts[i] =
		    ((PMU_EVCNTR(2u * i + 1u) & 0xFFFFu) << 16) | (PMU_EVCNTR(2u * i) & 0xFFFFu);
		if (ovs & (1u << (2u * i + 1u)))
			*overflow = 1;
	}
	return 0;
}

void an547_hal_init(struct ert_hal *hal)
{
#if !defined(ERT_POWER_BUILD) && defined(ERT_AN547_RTT)
	ert_rtt_init(&_SEGGER_RTT, rtt_up, sizeof rtt_up, rtt_down, sizeof rtt_down,
		     ERT_AN547_RTT_MODE, 0);
	hal->write = stage_write;
	hal->tx_pending = stage_pending;
#elif !defined(ERT_POWER_BUILD)
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
	hal->core_clock_hz = AN547_CORE_HZ;
	hal->max_gpio_pin = 8;

	/* The DWT and PMU count only if seen to advance (QEMU: both read 0). */
	DEMCR = DEMCR | (1u << 24); /* TRCENA */
	DWT_CYCCNT = 0;
	DWT_CTRL = DWT_CTRL | 1u;
	uint32_t c0 = DWT_CYCCNT;
	delay_us(0, 20);
	have_cyccnt = DWT_CYCCNT != c0;
	hal->cycles = have_cyccnt ? cycles : 0;

	PMU_CTRL = PMU_CTRL | 0x5u; /* E and C: enable, reset cycle counter */
	PMU_CNTENSET = 1u << 31;
	uint32_t p0 = PMU_CCNTR;
	delay_us(0, 20);
	have_pmu = PMU_CCNTR != p0;
	hal->pmu_configure = have_pmu ? pmu_configure : 0;
	hal->pmu_read = have_pmu ? pmu_read : 0;
}

int an547_have_cyccnt(void)
{
	return have_cyccnt;
}

int an547_have_pmu(void)
{
	return have_pmu;
}

void an547_exit(int code)
{
	an547_flush();
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

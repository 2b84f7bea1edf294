/* AN547 port: the HAL for QEMU's mps3-an547 (Cortex-M55). */
#ifndef ERT_AN547_H
#define ERT_AN547_H

#include "ergon/ert_hal.h"

#include <stdint.h>

/* Fill the HAL: UART0 transport (profile build only), SysTick window
 * clock, DWT/PMU detection, FPGAIO LEDs as GPIO pins 1..8. */
void an547_hal_init(struct ert_hal *hal);
/* Semihosting SYS_EXIT_EXTENDED: QEMU exits with `code`. */
void an547_exit(int code) __attribute__((noreturn));
/* Write the buffered stream to UART0 (called by an547_exit). */
void an547_flush(void);
/* True when the DWT cycle counter / PMU actually count (QEMU: neither). */
int an547_have_cyccnt(void);
int an547_have_pmu(void);
/* 32 MHz SysTick ticks since an547_hal_init: the 24-bit counter extended by
 * its 1 ms interrupt, read consistently (under QEMU -icount the tick rate
 * follows the emulated instruction count). */
uint64_t an547_systick_ticks(void);

/* The power builds' layer-marker line (ert_power_config.marker; docs/METHOD.md,
 * "Energy per layer"): FPGAIO LED1 (pin 2), beside the gate on LED0, when the
 * runtime has markers (ERT_LAYER_MARKERS, ert_layer.h), so that a real MPS3
 * toggles it at every layer's start inside the clean window for a meter's
 * second input. Under QEMU the register is modelled but no meter watches
 * it: nothing there observes the edges. -DERT_AN547_MARKER_PIN=0: no line. */
#ifndef ERT_AN547_MARKER_PIN
#define ERT_AN547_MARKER_PIN (ERT_LAYER_MARKERS ? 2u : 0u)
#endif

/* The example int8 network (netdemo.c). */
int netdemo_infer(void *user);
/* Predicted class of the last inference and a checksum of its output. */
int netdemo_last_class(void);
uint32_t netdemo_last_checksum(void);

#endif

/* What the board-independent firmware mains (port/common/) need of this
 * port (docs/internals/ports.md): fill the HAL, name the clock, the power
 * build's gate and marker pins. */
#ifndef ERT_PORT_H
#define ERT_PORT_H

#include "an505.h"

/* Fill the HAL: UART0 transport (profile build only), SysTick window
 * clock, DWT CYCCNT when seen to count, FPGAIO LEDs as GPIO pins 1..2; no
 * PMU (Armv8.0-M has none) and no INA228 (NULL entries). */
void ert_port_hal_init(struct ert_hal *hal);

/* The profile flow's clock note (HPX metadata, then summary.json). */
#define ERT_PORT_CLOCK_NOTE                                                                  \
	"an505 SysTick at 20 MHz nominal (QEMU mps2-an505's SYSCLK); under QEMU -icount time " \
	"is instruction-derived, not Cortex-M33 cycles"
/* The power build's gate: FPGAIO LED0. */
#define ERT_PORT_GATE_PIN 1u
/* The power build's layer-marker line (ert_power_config.marker; docs/METHOD.md,
 * "Energy per layer"): FPGAIO LED1 (pin 2), the MPS2's second user LED
 * (AN505 application note, FPGAIO LED register bits 0..1), the descriptor's
 * hal.gpio.marker. 0: no line. */
#ifndef ERT_PORT_MARKER_PIN
#define ERT_PORT_MARKER_PIN (ERT_LAYER_MARKERS ? 2u : 0u)
#endif

#endif

/* What the board-independent firmware mains (port/common/) need of this
 * port (docs/internals/ports.md): fill the HAL, name the clock, the power
 * build's gate and marker pins. */
#ifndef ERT_PORT_H
#define ERT_PORT_H

#include "an547.h"

/* Fill the HAL: UART0 transport (profile build only; the RTT build with
 * -DERT_AN547_RTT=1), SysTick window clock, DWT/PMU when seen to count,
 * FPGAIO LEDs as GPIO pins 1..8. */
#define ert_port_hal_init an547_hal_init

/* The profile flow's clock note (HPX metadata, then summary.json). */
#define ERT_PORT_CLOCK_NOTE                                                                     \
	"an547 SysTick at 32 MHz nominal; under QEMU -icount time is instruction-derived, not " \
	"M55 cycles"
/* The power build's gate: FPGAIO LED0. */
#define ERT_PORT_GATE_PIN 1u
/* The power build's layer-marker line: FPGAIO LED1 (an547.h), the
 * descriptor's hal.gpio.marker. */
#ifndef ERT_PORT_MARKER_PIN
#define ERT_PORT_MARKER_PIN ERT_AN547_MARKER_PIN
#endif
/* The arena placements the descriptor's memory_modes offer: the linker
 * script's output sections (an547.ld) for ERT_MEM_SHARED_SRAM (the ISRAM)
 * and ERT_MEM_EXTREME (the DTCM, named so the build record finds it). */
#define ERT_PORT_SHARED_SRAM_SECTION ".ert_shared_sram"
#define ERT_PORT_TCM_ARENA_SECTION ".bss.ert_tcm_arena"

#endif

/* The board registry: one row per board (issue 7). Pins are the board's
 * GPIO numbers for the power-measurement signals; 0 = not wired.
 *   sync  - the gate the target drives around each measured window
 *   state - the target's READY/state output (lock-step)
 *   go    - the instrument's output the target waits on (lock-step)
 * Pin numbers come from issue 7's table (heliaPROFILER's wiring).
 */
#include "ergon/config.h"

#include <string.h>

static const struct ergon_board boards[] = {
    {"apollo3p_evb", "Apollo3 Blue Plus", 0, 1, 26, 24, 25, ERGON_LIFECYCLE_JLINK, NULL, NULL,
     NULL},
    {"apollo4p_evb", "Apollo4 Plus", 0, 1, 22, 23, 24, ERGON_LIFECYCLE_JLINK, NULL, NULL, NULL},
    {"apollo4l_evb", "Apollo4 Lite", 0, 1, 61, 23, 24, ERGON_LIFECYCLE_JLINK, NULL, NULL, NULL},
    {"apollo4p_blue_kbr_evb", "Apollo4 Blue Plus (KBR)", 0, 1, 22, 23, 24, ERGON_LIFECYCLE_JLINK,
     NULL, NULL, NULL},
    {"apollo510_evb", "Apollo510", 1, 1, 29, 36, 14, ERGON_LIFECYCLE_JLINK, NULL, NULL, NULL},
    {"apollo510b_evb", "Apollo510B", 1, 1, 29, 36, 14, ERGON_LIFECYCLE_JLINK, NULL, NULL, NULL},
    /* Only the gate is wired: no lock-step on this board. */
    {"apollo5b_evb", "Apollo5B", 1, 1, 10, 0, 0, ERGON_LIFECYCLE_JLINK, NULL, NULL, NULL},
    /* Apollo330M Plus: a Cortex-M55 part of the Apollo5 family (same
     * reset path); no registered wiring, the validated J8 header pins are
     * given as the hint. */
    {"apollo330mP_evb", "Apollo330M Plus", 1, 0, 0, 0, 0, ERGON_LIFECYCLE_JLINK, NULL,
     "the validated J8 header pins are sync 5, state 6, go 7: set power.sync_gpio_pin: 5, "
     "power.state_gpio_pin: 6, power.go_gpio_pin: 7",
     NULL},
    /* The virtual bench: its fixed wiring (sim/src/board.c: gate 3, state 4,
     * go 5) and the simulated instrument. */
    {"sim", "virtual bench (ergon-target on hostsim)", 0, 1, 3, 4, 5, ERGON_LIFECYCLE_SIM, "sim",
     NULL, NULL},
    /* Emulated Cortex-M55: PMU stage only, no rail to measure. UART0 by
     * default; target.transport: rtt reads the RTT build through QEMU's
     * gdbstub. */
    {"qemu-an547", "Cortex-M55 (QEMU mps3-an547)", 0, 1, 0, 0, 0, ERGON_LIFECYCLE_QEMU, NULL, NULL,
     "uart"},
    /* Emulated Cortex-M33 (Armv8.0-M: no PMU, no Helium): the second port
     * (target/port/an505/), UART0 only. */
    {"qemu-an505", "Cortex-M33 (QEMU mps2-an505)", 0, 1, 0, 0, 0, ERGON_LIFECYCLE_QEMU, NULL, NULL,
     "uart"},
};

const struct ergon_board *ergon_boards(size_t *count)
{
	*count = sizeof(boards) / sizeof(boards[0]);
	return boards;
}

const struct ergon_board *ergon_board_find(const char *name)
{
	for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
		if (strcmp(boards[i].name, name) == 0)
			return &boards[i];
	return NULL;
}

/* AN505 port: the HAL for QEMU's mps2-an505 (Cortex-M33, Armv8-M mainline
 * with the Security Extension; the firmware runs Secure, as the core
 * resets). What the common model main needs of a port is in ert_port.h. */
#ifndef ERT_AN505_H
#define ERT_AN505_H

#include "ergon/ert_hal.h"

#include <stdint.h>

/* Semihosting SYS_EXIT_EXTENDED: QEMU exits with `code`. */
void an505_exit(int code) __attribute__((noreturn));
/* Write the buffered stream to UART0 (called by an505_exit). */
void an505_flush(void);

#endif

/* OpenOCD's TCL command interface (tcl_port): each command is sent
 * terminated by 0x1a and its result comes back terminated by 0x1a. The
 * result alone does not say whether the command failed, so every command is
 * wrapped in `catch` and the reply is "OK:<result>" or "ERR:<message>"
 * (checked against OpenOCD 0.12 itself, tests/functional/test_openocd_tcl.c).
 * Private to the openocd lifecycle (and its tests). */
#ifndef ERGON_OPENOCD_TCL_H
#define ERGON_OPENOCD_TCL_H

#include "ergon/error.h"

#include <stddef.h>

#define ERGON_OCD_TCL_REPLY_MAX 8192 /* longer results are refused (ETOOBIG) */

struct ergon_ocd_tcl {
	int fd;
	unsigned port;
};

/* Connect to 127.0.0.1:port, retrying until timeout_s (OpenOCD listens
 * once init has run). t->fd is -1 on failure. */
int ergon_ocd_tcl_connect(struct ergon_ocd_tcl *t, unsigned port, double timeout_s,
			  struct ergon_err *err);
/* Run one command. reply (cap bytes, may be NULL) gets its result text.
 * 0 when the command succeeded; ERGON_EDEVICE when OpenOCD reported an
 * error (the message quotes the command and OpenOCD's text); ERGON_EUSAGE
 * for a command with a 0x1a byte or unbalanced braces; ERGON_EIO or
 * ERGON_ETIMEDOUT on the link. */
int ergon_ocd_tcl_cmd(struct ergon_ocd_tcl *t, const char *cmd, char *reply, size_t cap,
		      double timeout_s, struct ergon_err *err);
/* Close (fd -1 is a no-op). */
void ergon_ocd_tcl_close(struct ergon_ocd_tcl *t);

#endif

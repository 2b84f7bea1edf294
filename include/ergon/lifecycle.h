/* Target lifecycle drivers: how `ergon profile` flashes firmware onto a
 * target, resets it and where the target's byte stream can be read.
 *
 *   sim      the virtual bench (sim/), in-process; "flashing" selects the
 *            scenario that the next reset runs
 *   qemu     qemu-system-arm -M mps3-an547 on the firmware ELF, UART0 on a
 *            unix-socket chardev, or (stream RTT_GDB) halted behind its
 *            gdbstub (-gdb -S) with RTT read through it
 *   jlink    SEGGER JLinkExe with a command file; RTT on its telnet port
 *   openocd  openocd -c commands; RTT through `rtt server start`, or
 *            (stream RTT_GDB) through OpenOCD's own GDB port
 *   pyocd    `pyocd flash`, `pyocd reset`, then `pyocd gdbserver` on a free
 *            port with RTT read through it (target.probe pyocd[:UID])
 *   bmp      a Black Magic Probe's GDB port on a serial device: scan,
 *            attach, flash with vFlash* from the ELF, reset with vRun, RTT
 *            read through the same port (target.probe bmp:DEVICE)
 *
 * One call sequence per stage: open, flash, reset (the target runs),
 * endpoint (a transport spec for ergon_hpx_capture), finish (stop the
 * target, reap helpers), close. Drivers never compute figures.
 */
#ifndef ERGON_LIFECYCLE_H
#define ERGON_LIFECYCLE_H

#include "ergon/error.h"

#include <signal.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_lifecycle_opts {
	const char *board;	  /* registry name, for messages */
	const char *device;	  /* the debugger's device name (SoC), may be NULL */
	const char *probe_serial; /* J-Link serial / adapter serial, may be "" */
	const char *work_dir;	  /* a folder the driver may write (command files, sockets) */
	double start_timeout_s;	  /* how long to wait for the endpoint to appear */
	unsigned rtt_port;	  /* RTT TCP port (jlink 19021, openocd 9090 when 0) */
	/* sim: the resolved configuration the virtual firmware is "built"
	 * with (NULL: the scenario's own settings). */
	const struct ergon_sim_options *sim_options;
	/* How the target's stream is read (enum ergon_lifecycle_stream). */
	int stream;
	/* ERGON_LC_STREAM_RTT_GDB: "HOST:PORT" of the GDB server (from
	 * target.probe gdb://HOST:PORT); NULL or "": the driver's own (QEMU: a
	 * free loopback port; OpenOCD: 127.0.0.1:3333). */
	const char *gdb_server;
	/* The reset strategy (enum ergon_lifecycle_reset, from power.
	 * reset_strategy); 0 is auto. The openocd driver maps each one to a
	 * documented command sequence. */
	int reset_strategy;
	/* Set by the caller's signal handler (Ctrl-C); may be NULL. A vendor
	 * tool run to completion (a flash, a reset) is stopped when it is set,
	 * and the step fails with ERGON_EINTR instead of waiting for the tool. */
	const volatile sig_atomic_t *cancel;
	/* target.probe as configured ("", gdb://HOST:PORT, pyocd[:UID],
	 * bmp:DEVICE); the pyocd and bmp lifecycles take their probe from it.
	 * May be NULL. */
	const char *probe;
	/* ERGON_LC_STREAM_SERIAL: "DEVICE[,BAUD]" (target.usb_port) the
	 * target's UART or USB CDC port is read from. */
	const char *serial_port;
	/* The SoC's software power-on reset: a 32-bit write of swpoi_value to
	 * swpoi_addr through the probe (ERGON_SWPOI_* below); swpoi_addr 0:
	 * the SoC has none known, and a swpoi strategy is refused. */
	unsigned long swpoi_addr, swpoi_value;
	/* QEMU: the machine (-M) of the board's port (its descriptor's
	 * run.machine, docs/internals/ports.md); "": mps3-an547. */
	char qemu_machine[32];
};

/* Ambiq Apollo3/4/5 RSTGEN: SWPOI (software POI reset) is the register at
 * offset 0x04 of RSTGEN, base 0x40000000; writing the key 0x1B triggers a
 * POI, "a reset to all blocks except for registers in clock gen, RTC and
 * the stimer". Sources: AmbiqSuite am_reg_rstgen.h (AM_REG_RSTGEN_SWPOI_O
 * 0x04, AM_REG_RSTGEN_SWPOI_SWPOIKEY_KEYVALUE 0x1B), the Apollo4 Plus SVD
 * register block (hedgetechllc/ambiq-apollo4p-pac src/rstgen.rs, SWPOI at
 * 0x04), Ambiq's device-tree address list (RSTGEN_BASE_NAME 40000000) and
 * the Apollo5 HAL (am_hal_reset_control: RSTGEN->SWPOI =
 * RSTGEN_SWPOI_SWPOIKEY_KEYVALUE). Public J-Link scripts for Apollo3 end a
 * flash with `w4 0x40000004 0x1B`. Not yet run on hardware by ergon. */
#define ERGON_SWPOI_AMBIQ_ADDR 0x40000004ul
#define ERGON_SWPOI_AMBIQ_KEY 0x1Bul

/* How a lifecycle resets the target (power.reset_strategy's values). */
enum ergon_lifecycle_reset {
	ERGON_LC_RESET_AUTO = 0,
	ERGON_LC_RESET_POWER_CYCLE,
	ERGON_LC_RESET_NONE,
	ERGON_LC_RESET_DEBUG,
	ERGON_LC_RESET_SWPOI,
	ERGON_LC_RESET_DEBUG_SWPOI,
};

/* The stream a lifecycle hands to the capture. */
enum ergon_lifecycle_stream {
	ERGON_LC_STREAM_DEFAULT = 0, /* the driver's own: QEMU UART0, the probe's RTT server */
	ERGON_LC_STREAM_RTT_GDB = 1, /* RTT over the GDB remote protocol (rtt:gdb=) */
	/* The target's UART / USB CDC on a host serial port (serial:DEV): the
	 * probe only flashes and resets; reset runs after the port is open. */
	ERGON_LC_STREAM_SERIAL = 2,
};

struct ergon_lifecycle;

struct ergon_lifecycle_driver {
	const char *name;
	int hardware; /* 1: drives a real probe (not yet run on hardware here) */
	int (*open)(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		    struct ergon_err *err);
	/* Program an image (a file; for sim a scenario name). */
	int (*flash)(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err);
	/* Reset and start the target. */
	int (*reset)(struct ergon_lifecycle *lc, struct ergon_err *err);
	/* The transport spec the target's stream can be read from. */
	int (*endpoint)(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err);
	/* Stop the target and reap helper processes; returns 0 even when the
	 * target had already stopped. */
	int (*finish)(struct ergon_lifecycle *lc, struct ergon_err *err);
	void (*close)(struct ergon_lifecycle *lc);
};

/* The driver table (src/drivers/lifecycle/registry.c) and a lookup (NULL if
 * unknown). */
ERGON_API const struct ergon_lifecycle_driver *const *ergon_lifecycle_drivers(size_t *count);
ERGON_API const struct ergon_lifecycle_driver *ergon_lifecycle_find(const char *name);

/* The virtual bench's last run, for the power stage (the simulated meter's
 * packets and the GPIO edges); NULL before a reset. Borrowed. */
struct ergon_sim_result;
ERGON_API const struct ergon_sim_result *
ergon_lifecycle_sim_result(const struct ergon_lifecycle *lc);

/* QEMU runs with -icount shift=ERGON_QEMU_ICOUNT_SHIFT: every emulated
 * instruction advances virtual time by 2^shift ns, so a window of T us of
 * the firmware's clock is T * 1000 / 2^shift emulated instructions. */
#define ERGON_QEMU_ICOUNT_SHIFT 4
#define ERGON_QEMU_ICOUNT_ARG "shift=4,sleep=off,align=off"
/* The head of every qemu-system-arm command line: the machine (an emulated
 * port's run.machine, docs/internals/ports.md), no display or monitor,
 * semihosting (the firmware's exit code), -icount. */
#define ERGON_QEMU_ARGV(machine)                                                          \
	"qemu-system-arm", "-M", (machine), "-nographic", "-monitor", "none",            \
	    "-semihosting-config", "enable=on,target=native", "-icount", ERGON_QEMU_ICOUNT_ARG
/* The same for the an547 (qemu-an547, the kernel firmware). */
#define ERGON_QEMU_AN547_ARGV ERGON_QEMU_ARGV("mps3-an547")

/* Shared by the process-driving drivers (lifecycle_proc.c). Run argv to
 * completion with stdout/stderr to log_path; ERGON_EDEVICE on a non-zero
 * exit, ERGON_ENOENT when the program is not on PATH (message names it and
 * the package to install). */
ERGON_API int ergon_lifecycle_run_tool(const char *const *argv, const char *log_path,
				       double timeout_s, struct ergon_err *err);
/* The same, and when *cancel becomes non-zero (cancel may be NULL) the
 * tool's process group is stopped and ERGON_EINTR returned. */
ERGON_API int ergon_lifecycle_run_tool_cancel(const char *const *argv, const char *log_path,
					      double timeout_s, const volatile sig_atomic_t *cancel,
					      struct ergon_err *err);
/* Run argv to completion in the folder cwd (NULL: this process's), its
 * output appended to log_path, within timeout_s; errors as
 * ergon_lifecycle_run_tool. Several threads may run tools at once: the
 * child is started with posix_spawn, not a fork of this process, and the
 * wait polls from 1 ms up (a quick tool is not held to a 10 ms poll). */
ERGON_API int ergon_lifecycle_run_tool_in(const char *const *argv, const char *cwd,
					  const char *log_path, double timeout_s,
					  struct ergon_err *err);
/* Start argv in the background (own process group); *pid receives it. */
ERGON_API int ergon_lifecycle_spawn(const char *const *argv, const char *log_path, int *pid,
				    struct ergon_err *err);
/* Wait until a socket listens on port (read from /proc/net/tcp, without
 * connecting), the process pid dies, or timeout_s passes. */
ERGON_API int ergon_lifecycle_wait_port(unsigned port, int pid, const char *what,
					const char *log_path, double timeout_s,
					struct ergon_err *err);
/* Wait until the process pid listens on a loopback TCP port of its own
 * (found through its socket inodes in /proc/PID/fd and /proc/net/tcp; the
 * port was chosen by the kernel, "tcp:127.0.0.1:0"); *port receives it.
 * A port equal to skip_port (0: none) is not it. ERGON_ETIMEDOUT after
 * timeout_s, ERGON_EDEVICE when pid died first. */
ERGON_API int ergon_lifecycle_listen_port(int pid, unsigned skip_port, const char *what,
					  const char *log_path, double timeout_s, unsigned *port,
					  struct ergon_err *err);
/* Split "HOST:PORT" (port 1..65535, host shorter than cap) into host and
 * *port; -1 when it is not that. */
ERGON_API int ergon_lifecycle_parse_hostport(const char *hp, char *host, size_t cap,
					     unsigned *port);
/* Stop a spawned process (SIGTERM, then SIGKILL after grace_s) and reap it. */
ERGON_API void ergon_lifecycle_stop(int pid, double grace_s);

#ifdef __cplusplus
}
#endif
#endif

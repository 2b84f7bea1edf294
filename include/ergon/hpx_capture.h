/* Capture an HPX stream from a transport: every byte is written to the
 * capture log before the parser sees it, so a failed parse loses nothing.
 * The capture ends at the end sentinel (PMU `--- HPX_END ---` or the power
 * terminal's END), at the end of the source, or at a timeout: the overall
 * bound, or the heartbeat bound (no complete line within heartbeat_s). A
 * timeout keeps everything and marks the capture incomplete. */
#ifndef ERGON_HPX_CAPTURE_H
#define ERGON_HPX_CAPTURE_H

#include "ergon/error.h"
#include "ergon/hpx.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_hpx_capture_opts {
	const char *transport; /* spec, see ergon/transport.h */
	const char *log_path;  /* raw bytes go here (created; kept on failure) */
	unsigned write_flags;  /* ERGON_WRITE_FORCE to replace an existing log */
	double timeout_s;      /* overall bound; <= 0: none */
	double heartbeat_s;    /* max gap between complete lines; <= 0: none */
	/* The bound inside the clean window (between the clean_window_begin
	 * and clean_window_end heartbeats), where the target prints nothing
	 * on purpose: max(heartbeat_s, this). <= 0: heartbeat_s applies. */
	double window_heartbeat_s;
	volatile sig_atomic_t *cancel; /* may be NULL; set (by a signal handler) to stop
					* early, keeping what arrived (res->interrupted) */
	/* Called with every complete line as it arrives (without the '\n'; a
	 * line longer than 95 bytes is cut there), e.g. for a progress display;
	 * NULL: none. The line is valid during the call only. */
	void (*on_line)(void *ctx, const char *line);
	void *on_line_ctx;
	/* Called once the transport is open and the log created, before the
	 * first read (e.g. to reset a target whose UART keeps nothing sent
	 * before the port was opened); nonzero stops the capture with that
	 * error (err set by the hook). NULL: none. */
	int (*on_open)(void *ctx, struct ergon_err *err);
	void *on_open_ctx;
};

struct ergon_hpx_capture_result {
	bool complete;	   /* an end sentinel arrived */
	bool source_ended; /* EOF (file, stdin, closed socket) */
	bool timed_out;	   /* overall bound hit */
	bool heartbeat_timed_out;
	bool lossy; /* the transport lost data (SWO): diagnostic */
	double elapsed_s;
	unsigned long long bytes;
	json_t *issues;	  /* capture.* issues (owned by the result) */
	json_t *details;  /* {transport, log, bytes, elapsed_s, end, link} (owned) */
	bool interrupted; /* stopped by opts.cancel */
	/* The parser stopped at a limit (columns, presets, iterations, text):
	 * the bytes after it were still logged up to the sentinel or timeout,
	 * and res->issues holds pmu.parser_limit (error: the artifact is
	 * invalid). parse_error is the parser's message. */
	bool parse_failed;
	char parse_error[1024]; /* sized as struct ergon_err.msg */
};

/* Run a capture feeding p (created by the caller). Returns 0 when the
 * capture ran (complete or not: see the result), negative ERGON_E* when it
 * could not start or the log could not be written. Free the result's JSON
 * with ergon_hpx_capture_result_cleanup. */
ERGON_API int ergon_hpx_capture(const struct ergon_hpx_capture_opts *o, struct ergon_hpx_parser *p,
				struct ergon_hpx_capture_result *res, struct ergon_err *err);
ERGON_API void ergon_hpx_capture_result_cleanup(struct ergon_hpx_capture_result *res);

/* A target's stream through its lifecycle driver (ergon/lifecycle.h), for
 * the pipelines that run a board (`ergon profile`'s stages). */
struct ergon_lifecycle_driver;
struct ergon_lifecycle_opts;
struct ergon_lifecycle;
struct ergon_hpx_target_opts {
	const struct ergon_lifecycle_driver *drv;
	const char *dir;      /* the capture log is DIR/capture.log */
	unsigned write_flags; /* as ergon_hpx_capture_opts */
	double timeout_s;     /* as ergon_hpx_capture_opts */
	double heartbeat_s;
	double window_heartbeat_s;
	volatile sig_atomic_t *cancel; /* may be NULL; set: stop, ERGON_EINTR */
	const char *board;	       /* the detail of the "start" step */
	/* Each step as it begins: "firmware" (detail: the image), "start"
	 * (the board), "capture" (the endpoint's transport spec). NULL: none. */
	void (*on_step)(void *ctx, const char *step, const char *detail);
	/* Every complete line, as ergon_hpx_capture_opts.on_line; NULL: none. */
	void (*on_line)(void *ctx, const char *line);
	void *ctx;
};

/* Open a lifecycle with lo, flash image, reset the target (once the port
 * is open when lo->stream is ERGON_LC_STREAM_SERIAL, which keeps nothing
 * sent before) and capture its endpoint's stream into p as
 * ergon_hpx_capture does. The lifecycle is finished (the target stopped,
 * helpers reaped) and left in *lc_out for the caller to close, also on
 * failure once it opened. ERGON_EINTR when o->cancel was set. */
ERGON_API int ergon_hpx_capture_boot(const struct ergon_hpx_target_opts *o,
				     const struct ergon_lifecycle_opts *lo, const char *image,
				     struct ergon_hpx_parser *p,
				     struct ergon_hpx_capture_result *cap,
				     struct ergon_lifecycle **lc_out, struct ergon_err *err);
/* The capture alone, on a lifecycle already reset (the live power path,
 * which resets the target from its instrument's capture). */
ERGON_API int ergon_hpx_capture_endpoint(const struct ergon_hpx_target_opts *o,
					 struct ergon_lifecycle *lc, struct ergon_hpx_parser *p,
					 struct ergon_hpx_capture_result *cap,
					 struct ergon_err *err);

/* What `ergon capture` reserves in its --out folder before the first byte
 * is read (include/ergon/reserve.h): room for the summary and the CSVs
 * written after the stream. They hold per-layer aggregates, not samples:
 * for the shared fixtures they are 6-14 kB in all (measured), so 4 MiB
 * leaves a wide margin. The reservation is freed just before they are
 * written; one that outgrows it is still written where the disk has room,
 * and when it cannot be, the capture log (streamed to disk as it arrives,
 * keeping whatever fits) still holds the whole measurement for `ergon
 * parse`. */
#define ERGON_CAPTURE_RESERVE_BYTES ((size_t)4 << 20)

struct ergon_hpx_report_opts;
struct ergon_hpx_run_result;
/* `ergon capture`: reserve the output (a full disk, an unwritable folder
 * or a second capture on the same --out is refused before streaming), then capture as
 * ergon_hpx_capture does into a new parser, then write the outputs as ergon_hpx_report_write does
 * (o->extra_issues and o->capture are replaced by the capture's own). *res (may be NULL)
 * receives the result, typed, as ergon_hpx_parse_run's (ergon/hpx_report.h; clean it up, also
 * after a failure), with how the stream ended; *summary (may be NULL) the sealed artifact as
 * written (caller owns). */
ERGON_API int ergon_hpx_capture_run(const struct ergon_hpx_capture_opts *co,
				    const struct ergon_hpx_report_opts *o,
				    struct ergon_hpx_run_result *res, json_t **summary,
				    struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif

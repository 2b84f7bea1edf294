/* run/'s private header: the run pipeline (run.c) and its last resort, the
 * rescue file (run_rescue.c). The figures (report_figures.c) are public:
 * ergon/report.h. */
#ifndef ERGON_RUN_INTERNAL_H
#define ERGON_RUN_INTERNAL_H

/* What the rescue file (run_rescue.c) holds: the session's raw series and
 * enough context to say what they are. All borrowed. */
struct ergon_session_result;
struct ergon_instrument;
struct ergon_workload;
struct ergon_run_rescue {
	const char *reason; /* why the report is not there */
	const char *out_path;
	const char *device;
	const struct ergon_instrument *inst;
	const struct ergon_workload *wl;
	const struct ergon_session_result *res;
};
/* An ergon_out_emit_fn (ergon/reserve.h) for ctx = struct ergon_run_rescue:
 * CSV through a static buffer, no allocation. */
int ergon_run_rescue_emit(void *ctx, int fd);

#endif

/* The PMU stage of `ergon profile`: boot the profile build (the virtual
 * bench: the profile scenario) and capture its stream to the end sentinel
 * (raw log OUT/pmu/capture.log, hpx/), parse what arrived (also after an
 * interrupt), the profile body, and the clean-window checks whose figures
 * the power stage checks against. */
#include "ergon/analyze.h"
#include "ergon/hpx_report.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capture bounds when the configuration leaves them open: a profile boot
 * of the example firmware takes seconds; 120 s is generous. */
#define PMU_CAPTURE_TIMEOUT_S 120.0

/* A metadata value of the typed PMU result (NULL: absent, or no result). */
static const struct ergon_pmu_value *meta_get(const struct ergon_pmu_result *res, const char *key)
{
	for (size_t i = 0; res != NULL && i < res->nmeta; i++)
		if (strcmp(res->meta[i].key, key) == 0)
			return &res->meta[i].value;
	return NULL;
}

static int meta_number(const struct ergon_pmu_result *res, const char *key, double *out)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	if (v == NULL || (v->kind != ERGON_PMU_INT && v->kind != ERGON_PMU_REAL))
		return 0;
	*out = v->kind == ERGON_PMU_INT ? (double)v->i : v->d;
	return 1;
}

/* The integer value, 0 when absent or not an integer. */
static int64_t meta_int(const struct ergon_pmu_result *res, const char *key)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	return v != NULL && v->kind == ERGON_PMU_INT ? v->i : 0;
}

/* A JSON integer from a metadata key, null when absent. */
static json_t *meta_json_int(const struct ergon_pmu_result *res, const char *key)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	return v != NULL && v->kind == ERGON_PMU_INT ? json_integer((json_int_t)v->i) : json_null();
}

/* The same clean-window checks `ergon analyze` runs on a facts file
 * (src/pipelines/analyze/power_report.c): the firmware's stalled/partial counts
 * against its warm reference (CLEAN_REF_CYCLES), with the inoperative
 * check when that reference is zero, and the rate probe. The device's
 * figures go to out->device_clean for the power section (heliaPROFILER's
 * device_clean_* names). */
static void clean_window_checks(struct prof_run *r, const struct ergon_pmu_result *res,
				struct prof_pmu *out)
{
	double hz, us, cyc;
	struct ergon_issue_list l = {0};
	if (meta_number(res, "system_clock_hz", &hz) &&
	    meta_number(res, "clean_dwt_rate_us", &us) &&
	    meta_number(res, "clean_dwt_rate_cyc", &cyc))
		ergon_clean_window_rate_check(hz, us, (uint64_t)cyc, &l);
	int64_t stalled = meta_int(res, "clean_stalled_iters");
	int64_t partial = meta_int(res, "clean_partial_iters");
	int64_t count = meta_int(res, "clean_infer_count");
	int have_counts = meta_get(res, "clean_stalled_iters") != NULL ||
			  meta_get(res, "clean_partial_iters") != NULL;
	const struct ergon_pmu_value *ref = meta_get(res, "clean_ref_cycles");
	int have_ref = ref != NULL && ref->kind == ERGON_PMU_INT && ref->i >= 0;
	if (have_counts && have_ref && stalled >= 0 && partial >= 0)
		ergon_clean_window_check_counts((uint64_t)stalled, (uint64_t)partial, 0,
						count > 0 ? (uint64_t)count : 0, (uint64_t)ref->i,
						&l);
	ergon_issue_list_to_json(&l, r->issues);
	ergon_issue_list_cleanup(&l);
	if ((stalled > 0 || partial > 0) && !have_ref &&
	    !ergon_issue_has(r->issues, "profile.clean_window_stalled"))
		/* A firmware without CLEAN_REF_CYCLES: the counts alone. */
		ergon_issue_add(r->issues, "profile.clean_window_stalled",
				json_pack("{s:I,s:I,s:I,s:b}", "stalled_iters", (json_int_t)stalled,
					  "partial_iters", (json_int_t)partial, "total_iters",
					  (json_int_t)count, "ref_cycles_unknown", 1),
				"the firmware counted %lld stalled and %lld partial iterations of "
				"%lld in the clean window (it reports no CLEAN_REF_CYCLES, so the "
				"understatement cannot be bounded): its cycle counts are not "
				"trustworthy",
				(long long)stalled, (long long)partial, (long long)count);
	if (res != NULL && (have_ref || meta_get(res, "clean_dwt_rate_cyc") != NULL)) {
		json_decref(out->device_clean);
		out->device_clean =
		    json_pack("{s:o,s:o,s:o}", "device_clean_ref_cycles",
			      meta_json_int(res, "clean_ref_cycles"), "device_clean_dwt_rate_cyc",
			      meta_json_int(res, "clean_dwt_rate_cyc"), "device_clean_dwt_rate_us",
			      meta_json_int(res, "clean_dwt_rate_us"));
	}
}

/* The clean window's drain wait polls every 100 us (target/src/window.c):
 * a wait may pass its bound by one step. */
#define ATTACH_POLL_US 100u

/* profiling.clean_window_attach_wait_ms (the method's
 * HPX_CLEAN_WINDOW_ATTACH_WAIT_MS): the longest the clean window may wait
 * for the transport before it opens. The virtual bench's firmware takes it
 * per run; a board's firmware is built with its own bound, which the host
 * holds to the key: a longer wait (CLEAN_ATTACH_WAIT_US) means the
 * firmware was built with a longer one. stages.pmu.attach_wait records
 * the check. */
static void attach_wait_check(struct prof_run *r, const struct ergon_pmu_result *res,
			      json_t *stage)
{
	const struct ergon_config *cfg = r->o->cfg;
	const struct ergon_pmu_value *v = meta_get(res, "clean_attach_wait_us");
	uint64_t bound_ms = cfg->profiling.clean_window_attach_wait_ms;
	int64_t waited = v != NULL && v->kind == ERGON_PMU_INT ? v->i : -1;
	int within = waited < 0 || (uint64_t)waited <= bound_ms * 1000u + ATTACH_POLL_US;
	json_object_set_new(stage, "attach_wait",
			    json_pack("{s:I,s:o,s:b}", "bound_ms", (json_int_t)bound_ms, "waited_us",
				      waited >= 0 ? json_integer(waited) : json_null(),
				      "within_bound", within));
	if (!within)
		ergon_issue_add(r->issues, "pmu.attach_wait_exceeded",
				json_pack("{s:I,s:I}", "waited_us", (json_int_t)waited,
					  "bound_ms", (json_int_t)bound_ms),
				"the firmware waited %lld us for its transport before the clean "
				"window, more than profiling.clean_window_attach_wait_ms %llu ms "
				"(+%u us, one poll step): it was built with a longer "
				"HPX_CLEAN_WINDOW_ATTACH_WAIT_MS; rebuild it with the key's value, "
				"or raise the key to the firmware's",
				(long long)waited, (unsigned long long)bound_ms, ATTACH_POLL_US);
}

void prof_pmu(struct prof_run *r, const struct prof_plan *plan, json_t *stage, struct prof_pmu *out)
{
	const struct ergon_config *cfg = r->o->cfg;
	char dir[1100];
	struct ergon_err e = {0};
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cap = {0};
	struct ergon_lifecycle *lc = NULL;
	struct ergon_pmu_result *res = NULL;
	json_t *result = NULL;
	*out = (struct prof_pmu){0};
	int rc = prof_stage_dir(r, "pmu", dir, sizeof dir, &e);
	const char *image = plan->pmu_image;
	json_object_set_new(stage, "image", json_string(image));
	json_object_set_new(stage, "log", json_sprintf("%s/capture.log", dir));
	double timeout_s = isnan(cfg->target.heartbeat.overall_timeout_s)
			       ? PMU_CAPTURE_TIMEOUT_S
			       : cfg->target.heartbeat.overall_timeout_s;
	if (!rc)
		rc = ergon_hpx_parser_new(NULL, &p, &e);
	if (!rc) {
		struct ergon_hpx_target_opts to =
		    prof_capture_opts(r, dir, timeout_s, 0.0, prof_planned_window_hb_s(cfg, 0.0));
		struct ergon_lifecycle_opts lo = r->lo;
		lo.work_dir = dir;
		rc = ergon_hpx_capture_boot(&to, &lo, image, p, &cap, &lc, &e);
	}
	if (p != NULL && (rc == 0 || rc == ERGON_EINTR)) {
		prof_progress(r, "analysis", "the PMU stream");
		/* Parse what arrived, also after an interrupt: it is kept. */
		struct ergon_err pe = {0};
		int frc = ergon_hpx_parser_finish(p, &pe);
		if (frc >= 0 && ergon_hpx_parser_result(p, r->aggregation, 0, &res, &pe) == 0 &&
		    ergon_pmu_result_to_json(res, &result, &pe) == 0) {
			json_t *body = NULL;
			if (ergon_hpx_profile_body(result, r->aggregation, &body, &pe) == 0) {
				json_decref(out->profile);
				out->profile = body;
			}
		}
		struct ergon_hpx_stats st;
		ergon_hpx_parser_stats(p, &st);
		json_object_set_new(stage, "bytes", json_integer((json_int_t)st.bytes));
		if (!st.started && rc == 0)
			ergon_issue_add(
			    r->issues, "profile.no_start_sentinel",
			    json_pack("{s:s,s:I}", "log",
				      json_string_value(json_object_get(stage, "log")), "bytes",
				      (json_int_t)st.bytes),
			    "the target's stream never showed `--- HPX_START ---` "
			    "(%llu bytes in %s): check the transport (%s), the firmware "
			    "build (profile, not power) and the baud rate",
			    (unsigned long long)st.bytes,
			    json_string_value(json_object_get(stage, "log")), cfg->board->name);
	}
	if (cap.issues)
		json_array_extend(r->issues, cap.issues);
	if (cap.details)
		json_object_set(stage, "capture", cap.details);
	if (out->profile)
		json_array_extend(r->issues, json_object_get(out->profile, "issues"));
	/* The clean-window reference the power checks compare against, from
	 * the typed result. */
	clean_window_checks(r, res, out);
	if (res != NULL)
		attach_wait_check(r, res, stage);
	double avg;
	if (meta_number(res, "clean_infer_avg_us", &avg))
		out->clean_infer_avg_us = avg;
	if (meta_int(res, "clean_infer_count") > 0)
		out->clean_infer_count = (uint64_t)meta_int(res, "clean_infer_count");
	/* An inference that reports zero time (faster than the window clock's
	 * 1 us, or a clock that did not run) leaves no reference to check the
	 * power window against. */
	out->clean_zero_time = out->clean_infer_count > 0 &&
			       meta_number(res, "clean_infer_avg_us", &avg) && avg == 0.0;
	out->rc = rc;
	out->status = prof_stage_end(r, rc, &e, out->profile ? PROF_OK : PROF_EMPTY, &out->err);
	if (lc)
		r->drv->close(lc);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cap);
	json_decref(result);
	ergon_pmu_result_free(res);
}

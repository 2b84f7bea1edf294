/* The host's view of a virtual-bench run: the scenario's bytes and packets
 * go through the same engines a real capture goes through (capture
 * pipeline, HPX parser, firmware facts from the captured log, gated
 * engine, power section), and the issues they raise are collected. */
#include "ergon/sim_host.h"

#include "ergon/analyze.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The simulated windows are 20 ms; the engine's default floor (1 s) is for
 * real benches. Glitches are 100 us packets, well below this. */
#define SIM_MIN_WINDOW_S 0.005

static int append_all(json_t *dst, const json_t *src)
{
	size_t i;
	json_t *v;
	if (!json_is_array(src))
		return 0;
	json_array_foreach(src, i, v)
	{
		if (json_array_append(dst, v) != 0)
			return ERGON_ENOMEM;
	}
	return 0;
}

/* Run the stream through the host's capture pipeline (file transport, raw
 * log first) feeding p, collect the capture.* issues, and load the firmware
 * facts from the captured log as `ergon analyze --facts LOG` does. The
 * bytes pass through a private temporary folder removed afterwards. */
static int capture(const struct ergon_sim_result *r, struct ergon_hpx_parser *p, json_t *issues,
		   struct ergon_power_facts *facts, struct ergon_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char dir[512], in[600], log[600], spec[620];
	snprintf(dir, sizeof dir, "%s/ergon-sim-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return ergon_err_set(err, ERGON_EIO,
				     "virtual bench: cannot create a folder in %s; set TMPDIR to a "
				     "writable folder",
				     tmp ? tmp : "/tmp");
	snprintf(in, sizeof in, "%s/stream.hpx", dir);
	snprintf(log, sizeof log, "%s/capture.log", dir);
	snprintf(spec, sizeof spec, "file:%s", in);
	struct ergon_hpx_capture_result res = {0};
	int rc = ergon_file_write_atomic(in, r->stream, r->stream_len, 0, err);
	if (rc == 0) {
		struct ergon_hpx_capture_opts o = {
		    .transport = spec, .log_path = log, .timeout_s = 30.0, .heartbeat_s = 0.0};
		rc = ergon_hpx_capture(&o, p, &res, err);
	}
	if (rc == 0)
		rc = append_all(issues, res.issues);
	/* An empty capture holds no facts at all (the loader refuses an
	 * empty file as "not a facts file"). */
	memset(facts, 0, sizeof *facts);
	if (rc == 0 && res.bytes > 0)
		rc = ergon_power_facts_load(log, facts, err);
	ergon_hpx_capture_result_cleanup(&res);
	unlink(in);
	unlink(log);
	rmdir(dir);
	return rc;
}

static int profile_issues(const struct ergon_sim_result *r, json_t *issues, json_t **out,
			  struct ergon_err *err)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_power_facts facts;
	json_t *j = NULL;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (rc == 0)
		rc = capture(r, p, issues, &facts, err);
	if (rc == 0) {
		/* ERGON_HPX_DONE (1) or NEED_MORE (0): both are answers. */
		rc = ergon_hpx_parser_finish(p, err);
		rc = rc < 0 ? rc : 0;
	}
	if (rc == 0)
		rc = ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, 0, &j, err);
	if (rc == 0)
		rc = append_all(issues, json_object_get(json_object_get(j, "ergon"), "issues"));
	if (rc == 0) {
		/* The profile boot's clean-window checks, on the facts, as the
		 * power section runs them (src/pipelines/analyze/power_report.c). */
		struct ergon_issue_list l = {0};
		if (facts.have_clean_window)
			ergon_clean_window_check_counts(
			    facts.clean_stalled_iters, facts.clean_partial_iters, 0,
			    facts.have_clean_count ? facts.clean_infer_count : 0,
			    facts.clean_ref_cycles, &l);
		if (facts.have_rate_probe)
			ergon_clean_window_rate_check(facts.system_clock_hz, facts.rate_probe_us,
						      facts.rate_probe_cycles, &l);
		rc = l.oom ? ERGON_ENOMEM : ergon_issue_list_to_json(&l, issues);
		ergon_issue_list_cleanup(&l);
	}
	if (rc == 0 && out != NULL) {
		*out = j;
		j = NULL;
	}
	json_decref(j);
	ergon_hpx_parser_free(p);
	return rc;
}

static int power_issues(const struct ergon_sim_result *r, double reference_avg_us, json_t *issues,
			json_t **out, struct ergon_err *err)
{
	struct ergon_power_facts facts;
	struct ergon_gated *g = NULL;
	const struct ergon_gated_result *res = NULL;
	struct ergon_hpx_parser *p = NULL;
	json_t *section = NULL;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (rc == 0)
		rc = capture(r, p, issues, &facts, err);
	ergon_hpx_parser_free(p);
	if (rc != 0)
		return rc;
	/* What the host knows besides the log: the clean count is the
	 * record's completed count, the reference comes from the profile
	 * boot, and which mode the bench ran in. */
	if (!facts.have_clean_count && facts.terminal.status != ERGON_TERMINAL_NONE) {
		facts.have_clean_count = 1;
		facts.clean_infer_count = facts.terminal.completed_count;
	} else if (!facts.have_clean_count && r->window_iterations > 0) {
		/* No record: the host still knows the fixed window it configured
		 * (the firmware runs exactly that many), a count from outside the
		 * power boot's own report, checked by the ratio with its
		 * cross-boot allowance. */
		facts.have_clean_count = 1;
		facts.clean_infer_count = r->window_iterations;
		snprintf(facts.clean_count_source, sizeof facts.clean_count_source, "%s",
			 "host_configuration");
	}
	/* Every power flow runs the dedicated power build: a record is due. */
	facts.terminal_expected = 1;
	facts.clean_infer_avg_us = reference_avg_us > 0 ? reference_avg_us : 0.0;
	facts.probe_kind = ERGON_PROBE_INFER;
	facts.internal = r->flow == ERGON_SIM_FLOW_POWER_INA228;
	/* The host times the power build from its start to its record. */
	facts.host_envelope_s = facts.internal ? r->host_envelope_s : 0.0;
	if (!facts.internal) {
		/* External mode: the simulated Joulescope's packets are the
		 * recording. */
		struct ergon_gated_config cfg = {.min_window_s = SIM_MIN_WINDOW_S,
						 .stats_rate_hz = 1.0 / r->js_period_s};
		rc = ergon_gated_new(&cfg, &g, err);
		if (rc == 0)
			rc = ergon_gated_push_packets(g, r->stats, r->n_js, err);
		if (rc == 0)
			rc = ergon_gated_finish(g, &res, err);
	}
	if (rc == 0)
		rc = ergon_power_section(res, SIM_MIN_WINDOW_S, &facts, NULL, &section, err);
	if (rc == 0)
		rc = append_all(issues, json_object_get(section, "issues"));
	if (rc == 0 && out != NULL) {
		*out = section;
		section = NULL;
	}
	json_decref(section);
	ergon_gated_free(g);
	return rc;
}

int ergon_sim_host_issues(const struct ergon_sim_result *res, double reference_avg_us,
			  json_t **issues, json_t **detail, struct ergon_err *err)
{
	json_t *list = json_array();
	if (list == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	if (detail != NULL)
		*detail = NULL;
	int rc = res->flow == ERGON_SIM_FLOW_PROFILE
		     ? profile_issues(res, list, detail, err)
		     : power_issues(res, reference_avg_us, list, detail, err);
	if (rc != 0) {
		json_decref(list);
		return rc;
	}
	*issues = list;
	return 0;
}

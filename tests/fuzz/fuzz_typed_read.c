/* Fuzz the typed readers of a loaded document (docs/API.md): a run report
 * (ergon_run_result_read), a profile summary (ergon_profile_result_read),
 * a power section (ergon_power_summary_read) and a kernels section
 * (ergon_kernels_summary_read) and an HPX summary (ergon_hpx_run_result_read), on whatever
 * JSON a file holds. Properties: a reader is a pure
 * function of the document (a second read gives the same bytes); what it gives is in range (counts
 * from any number, NaN, negative or 1e300, stay counts; the statuses and
 * the verdict are members of their enums; the report id is a terminated
 * string). */
#include "ergon/analyze.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/kernels_run.h"
#include "ergon/profile.h"
#include "ergon/report.h"
#include "fuzz_props.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL)
		return 0;
	struct ergon_run_result r1, r2;
	ergon_run_result_read(j, &r1);
	ergon_run_result_read(j, &r2);
	FUZZ_REQUIRE(memcmp(&r1, &r2, sizeof r1) == 0);
	FUZZ_REQUIRE(memchr(r1.report_id, '\0', sizeof r1.report_id) != NULL);
	FUZZ_REQUIRE(r1.verdict.kind >= ERGON_VERDICT_VALID &&
		     r1.verdict.kind <= ERGON_VERDICT_INVALID);
	FUZZ_REQUIRE(r1.integrity >= ERGON_INTEGRITY_VALID &&
		     r1.integrity <= ERGON_INTEGRITY_INVALID);
	struct ergon_profile_result p1, p2;
	ergon_profile_result_read(j, &p1);
	ergon_profile_result_read(j, &p2);
	FUZZ_REQUIRE(memcmp(&p1, &p2, sizeof p1) == 0);
	FUZZ_REQUIRE(p1.pmu_status >= 0 && p1.pmu_status <= ERGON_PROFILE_STAGE_DISABLED);
	FUZZ_REQUIRE(p1.power_status >= 0 && p1.power_status <= ERGON_PROFILE_STAGE_DISABLED);
	FUZZ_REQUIRE(memchr(p1.report_id, '\0', sizeof p1.report_id) != NULL);
	/* The section itself, and the document read as if it were one. */
	const json_t *sections[] = {json_object_get(j, "power"), j};
	for (size_t i = 0; i < 2; i++) {
		struct ergon_power_summary s1, s2;
		ergon_power_summary_read(sections[i], &s1);
		ergon_power_summary_read(sections[i], &s2);
		FUZZ_REQUIRE(memcmp(&s1, &s2, sizeof s1) == 0);
		FUZZ_REQUIRE(s1.present == 0 || s1.present == 1);
		if (!s1.present)
			FUZZ_REQUIRE(s1.inference_count == 0 && isnan(s1.energy_j));
	}
	/* A kernels section: the document itself, or its "kernels". */
	const json_t *ksecs[] = {j, json_object_get(j, "kernels")};
	for (size_t i = 0; i < 2; i++) {
		struct ergon_kernels_summary k;
		struct ergon_err e = {0};
		int rc = ergon_kernels_summary_read(ksecs[i], &k, &e);
		FUZZ_REQUIRE(rc == 0 || rc == ERGON_EPARSE || rc == ERGON_ENOMEM);
		FUZZ_REQUIRE(rc == 0 || e.msg[0] != '\0');
		FUZZ_REQUIRE(k.n_cases <= ERGON_KERNELS_MAX_CASES);
		FUZZ_REQUIRE(k.n_geomean <= ERGON_KERNELS_MAX_GEOMEANS);
		for (size_t c = 0; c < k.n_cases; c++) {
			FUZZ_REQUIRE(k.cases[c].n_impls <= ERGON_KERNELS_MAX_IMPLS);
			FUZZ_REQUIRE(memchr(k.cases[c].name, '\0', sizeof k.cases[c].name) != NULL);
			for (size_t m = 0; m < k.cases[c].n_impls; m++)
				FUZZ_REQUIRE(memchr(k.cases[c].impls[m].why, '\0',
						    sizeof k.cases[c].impls[m].why) != NULL);
		}
		FUZZ_REQUIRE(memchr(k.overhead_note, '\0', sizeof k.overhead_note) != NULL);
		/* The table renders whatever was read (as far as it was). */
		char *tab = NULL;
		struct ergon_err te = {0};
		if (ergon_kernels_summary_table(&k, &tab, &te) == 0)
			FUZZ_REQUIRE(tab != NULL);
		free(tab);
		ergon_kernels_summary_cleanup(&k);
	}
	/* An HPX summary: what it allocates is freed, what it gives is in
	 * range, and a second read gives the same figures. */
	struct ergon_hpx_run_result h1, h2;
	struct ergon_err he = {0};
	int hrc = ergon_hpx_run_result_read(j, &h1, &he);
	FUZZ_REQUIRE(hrc == 0 || hrc == ERGON_EPARSE || hrc == ERGON_ENOMEM);
	FUZZ_REQUIRE(hrc == 0 || he.msg[0] != '\0');
	FUZZ_REQUIRE(h1.n_top <= ERGON_HPX_TOP_LAYERS);
	FUZZ_REQUIRE(h1.capture_end >= ERGON_HPX_END_NONE &&
		     h1.capture_end <= ERGON_HPX_END_INTERRUPTED);
	FUZZ_REQUIRE(h1.verdict.kind >= ERGON_VERDICT_VALID &&
		     h1.verdict.kind <= ERGON_VERDICT_INVALID);
	FUZZ_REQUIRE(memchr(h1.report_id, '\0', sizeof h1.report_id) != NULL);
	FUZZ_REQUIRE(memchr(h1.log_sha256, '\0', sizeof h1.log_sha256) != NULL);
	for (size_t i = 0; i < h1.layers.n; i++) {
		const struct ergon_pmu_layer *L = &h1.layers.layers[i];
		FUZZ_REQUIRE(L->id.kind != ERGON_PMU_TEXT || L->id.text[L->id.len] == '\0');
		for (size_t k = 0; k < L->ncounters; k++)
			FUZZ_REQUIRE(L->counters[k].name[L->counters[k].name_len] == '\0');
	}
	struct ergon_err he2 = {0};
	FUZZ_REQUIRE(ergon_hpx_run_result_read(j, &h2, &he2) == hrc);
	FUZZ_REQUIRE(h2.layers.n == h1.layers.n && h2.issues.n == h1.issues.n &&
		     h2.n_top == h1.n_top && h2.log_bytes == h1.log_bytes);
	FUZZ_REQUIRE(memcmp(&h1.verdict, &h2.verdict, sizeof h1.verdict) == 0);
	ergon_hpx_run_result_cleanup(&h1);
	ergon_hpx_run_result_cleanup(&h2);
	json_decref(j);
	return 0;
}

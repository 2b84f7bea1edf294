/* `ergon kernels run --pmu-counters`: the events asked for, planned into
 * passes (ergon_pmu_plan: four chained 32-bit counters per pass, cycles
 * from the cycle counter), and what each case and implementation got: a
 * count from the target's PMU (ergon/ert_kpmu.h), "overflow", or
 * "unsupported" with the reason on a board without a PMU (QEMU, the
 * host) — never a 0 in place of a count (docs/METHOD.md, "Kernels"). */
#include "ergon/ert_kblob.h"
#include "kernels_qemu.h"

#include <string.h>

size_t kpmu_names(const struct ergon_pmu_plan *plan, const char **names, size_t cap)
{
	size_t n = 0;
	if (plan->cycles && n < cap) {
		const struct ergon_pmu_event *e = ergon_pmu_event_find("CPU_CYCLES");
		names[n++] = e ? e->name : "ARM_PMU_CPU_CYCLES";
	}
	for (size_t i = 0; i < plan->npasses; i++)
		for (size_t k = 0; k < plan->passes[i].nevents && n < cap; k++)
			names[n++] = plan->passes[i].events[k]->name;
	return n;
}

static const struct kcase *case_named(const struct kcase *cases, size_t n, const char *name)
{
	for (size_t i = 0; name != NULL && i < n; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

int kpmu_attach(json_t *art, json_t *sec, const struct kcase *cases, size_t n,
		const struct ergon_pmu_plan *plan, const char *requested, int counted,
		const char *why, struct ergon_err *err)
{
	const char *names[ERGON_KERNELS_MAX_PMU_EVENTS];
	size_t ne = kpmu_names(plan, names, ERGON_KERNELS_MAX_PMU_EVENTS);
	if (ne == 0)
		return 0;
	json_t *evs = json_array(), *passes = json_array();
	for (size_t k = 0; k < ne; k++)
		json_array_append_new(evs, json_string(names[k]));
	for (size_t i = 0; i < plan->npasses; i++) {
		json_t *pe = json_array();
		for (size_t k = 0; k < plan->passes[i].nevents; k++)
			json_array_append_new(pe, json_string(plan->passes[i].events[k]->name));
		json_array_append_new(
		    passes, json_pack("{s:s, s:o}", "name", plan->passes[i].name, "events", pe));
	}
	json_object_set_new(
	    art, "pmu",
	    json_pack("{s:s, s:O, s:o, s:b, s:s, s:s, s:s}", "requested",
		      requested ? requested : "(the board's default)", "events", evs, "passes",
		      passes, "cycles_from_ccntr", plan->cycles ? 1 : 0, "status",
		      counted ? "counted" : "unsupported", "why", why, "per_case",
		      counted ? "one extra run of the kernel per pass, after its timed "
				"iterations: kernels.cases[].impls[].pmu (and workloads[].pmu)"
			      : "every requested event of every case and implementation is "
				"\"unsupported\": no count is reported, never 0"));
	json_object_set(sec, "pmu_events", evs);
	json_decref(evs);
	json_object_set_new(sec, "pmu_status", json_string(counted ? "counted" : "unsupported"));
	json_object_set_new(sec, "pmu_why", json_string(why));
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		const char *cn = json_string_value(json_object_get(c, "case"));
		const struct kcase *kc = case_named(cases, n, cn);
		json_t *m;
		size_t k;
		json_array_foreach(json_object_get(c, "impls"), k, m)
		{
			const char *impl = json_string_value(json_object_get(m, "impl"));
			const json_t *got =
			    kc && impl ? json_object_get(json_object_get(kc->record, "pmu"), impl)
				       : NULL;
			const int timed = json_is_true(json_object_get(m, "timed"));
			json_t *o = json_object();
			for (size_t e = 0; e < ne; e++) {
				const json_t *v = json_object_get(got, names[e]);
				if (!counted)
					json_object_set_new(o, names[e],
							    json_string("unsupported"));
				else if (v != NULL)
					json_object_set(o, names[e], (json_t *)v);
				else if (!timed)
					json_object_set_new(o, names[e],
							    json_string("not counted (not timed)"));
				else {
					json_decref(o);
					return ergon_err_set(
					    err, ERGON_EDEVICE,
					    "kernels: the PMU counted, but case %s (%s) has no "
					    "ERGON_KPMU line for %s; the firmware and this ergon "
					    "may be from different builds",
					    cn, impl, names[e]);
				}
			}
			json_object_set_new(m, "pmu", o);
		}
	}
	return 0;
}

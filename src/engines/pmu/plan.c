/* Counter pass planning for a Cortex-M55 PMU (4 chained 32-bit counters per
 * pass; cycles from the cycle counter). */
#include "ergon/pmu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const groups[] = {"cpu", "memory", "mve"};

/* The curated sets of the issue: the counters an engineer looks at first. */
static const char *const set_cpu[] = {"CPU_CYCLES", "INST_RETIRED", "STALL_FRONTEND",
				      "STALL_BACKEND"};
static const char *const set_memory[] = {"MEM_ACCESS", "L1D_CACHE_REFILL", "BUS_ACCESS",
					 "BUS_CYCLES"};
static const char *const set_mve[] = {"MVE_INST_RETIRED", "MVE_INT_MAC_RETIRED", "MVE_LDST_RETIRED",
				      "MVE_STALL"};

/* Case-insensitive edit distance on short names (both <= 64 chars). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 1000;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t tmp = row[j];
			char ca = a[i - 1], cb = b[j - 1];
			if (ca >= 'a' && ca <= 'z')
				ca = (char)(ca - 32);
			if (cb >= 'a' && cb <= 'z')
				cb = (char)(cb - 32);
			size_t best = prev + (ca != cb);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static int unknown(const char *name, struct ergon_err *err)
{
	size_t n;
	const struct ergon_pmu_event *ev = ergon_pmu_events(&n);
	const char *bare = strncasecmp(name, "ARM_PMU_", 8) == 0 ? name + 8 : name;
	const struct ergon_pmu_event *best[3] = {NULL, NULL, NULL};
	size_t bd[3] = {(size_t)-1, (size_t)-1, (size_t)-1};
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(bare, ev[i].name + 8);
		for (int k = 0; k < 3; k++) {
			if (d < bd[k]) {
				for (int m = 2; m > k; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[k] = d;
				best[k] = &ev[i];
				break;
			}
		}
	}
	return ergon_err_set(err, ERGON_EUSAGE,
			     "unknown PMU counter '%s'; nearest: %s, %s, %s (see `ergon counters "
			     "list`; sets: cpu, memory, mve, <group>:all)",
			     name, best[0] ? best[0]->name : "-", best[1] ? best[1]->name : "-",
			     best[2] ? best[2]->name : "-");
}

static int add(const struct ergon_pmu_event **sel, size_t *nsel, size_t cap,
	       const struct ergon_pmu_event *e)
{
	for (size_t i = 0; i < *nsel; i++)
		if (sel[i] == e)
			return 0;
	if (*nsel >= cap)
		return ERGON_ETOOBIG;
	sel[(*nsel)++] = e;
	return 0;
}

static int add_set(const struct ergon_pmu_event **sel, size_t *nsel, size_t cap,
		   const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = add(sel, nsel, cap, ergon_pmu_event_find(names[i]));
		if (rc)
			return rc;
	}
	return 0;
}

int ergon_pmu_plan(const char *const *items, size_t nitems, struct ergon_pmu_plan *out,
		   struct ergon_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t ncat;
	const struct ergon_pmu_event *cat = ergon_pmu_events(&ncat);
	const struct ergon_pmu_event **sel = calloc(ncat, sizeof(*sel));
	if (!sel)
		return ergon_err_set(err, ERGON_ENOMEM, "counters: out of memory");
	size_t nsel = 0;
	int rc = 0;
	for (size_t i = 0; i < nitems && !rc; i++) {
		const char *it = items[i];
		if (strcasecmp(it, "cpu") == 0) {
			rc = add_set(sel, &nsel, ncat, set_cpu, 4);
		} else if (strcasecmp(it, "memory") == 0) {
			rc = add_set(sel, &nsel, ncat, set_memory, 4);
		} else if (strcasecmp(it, "mve") == 0) {
			rc = add_set(sel, &nsel, ncat, set_mve, 4);
		} else if (strchr(it, ':')) {
			const char *colon = strchr(it, ':');
			size_t gl = (size_t)(colon - it);
			bool found = false;
			for (size_t g = 0; g < 3; g++) {
				if (strlen(groups[g]) == gl &&
				    strncasecmp(groups[g], it, gl) == 0 &&
				    strcasecmp(colon + 1, "all") == 0) {
					found = true;
					for (size_t k = 0; k < ncat && !rc; k++)
						if (strcmp(cat[k].group, groups[g]) == 0 &&
						    cat[k].id != ERGON_PMU_EVENT_CHAIN)
							rc = add(sel, &nsel, ncat, &cat[k]);
				}
			}
			if (!found)
				rc = ergon_err_set(err, ERGON_EUSAGE,
						   "unknown counter set '%s'; use cpu:all, "
						   "memory:all or mve:all",
						   it);
		} else {
			const struct ergon_pmu_event *e = ergon_pmu_event_find(it);
			if (!e)
				rc = unknown(it, err);
			else if (e->id == ERGON_PMU_EVENT_CHAIN)
				rc = ergon_err_set(err, ERGON_EUSAGE,
						   "ARM_PMU_CHAIN (0x001E) links counter pairs and "
						   "cannot be requested");
			else
				rc = add(sel, &nsel, ncat, e);
		}
	}
	if (rc) {
		free(sel);
		return rc;
	}
	/* Passes: per group in catalog group order, 4 events each; cycles come
	 * from CCNTR and take no slot. */
	size_t maxpasses = nsel + 3;
	out->passes = calloc(maxpasses, sizeof(*out->passes));
	if (!out->passes) {
		free(sel);
		return ergon_err_set(err, ERGON_ENOMEM, "counters: out of memory");
	}
	for (size_t g = 0; g < 3; g++) {
		size_t n_in_group = 0;
		struct ergon_pmu_pass *cur = NULL;
		for (size_t i = 0; i < nsel; i++) {
			if (strcmp(sel[i]->group, groups[g]) != 0)
				continue;
			if (sel[i]->id == ERGON_PMU_EVENT_CPU_CYCLES) {
				out->cycles = true;
				continue;
			}
			if (!cur || cur->nevents == ERGON_PMU_M55_COUNTERS_PER_PASS) {
				cur = &out->passes[out->npasses++];
				snprintf(cur->name, sizeof(cur->name), "%s_%zu", groups[g],
					 n_in_group++);
			}
			cur->events[cur->nevents++] = sel[i];
		}
	}
	/* Cycles alone still need one pass to read the cycle counter. */
	if (out->npasses == 0 && out->cycles) {
		snprintf(out->passes[0].name, sizeof(out->passes[0].name), "cpu_0");
		out->npasses = 1;
	}
	free(sel);
	return 0;
}

void ergon_pmu_plan_cleanup(struct ergon_pmu_plan *plan)
{
	if (!plan)
		return;
	free(plan->passes);
	memset(plan, 0, sizeof(*plan));
}

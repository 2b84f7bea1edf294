/* The cycle counters' register fake (ts_pmu_fake.h). */
#include "ts_pmu_fake.h"

#include <string.h>

void ts_pmu_fake_reset(struct ts_pmu_fake *f, uint32_t dwt_ctrl, uint32_t pmu_type, int counts)
{
	memset(f, 0, sizeof *f);
	f->dwt_ctrl = dwt_ctrl;
	f->dwt_cyccnt = 0xDEADu;
	f->pmu[ERT_PMU_TYPE] = pmu_type;
	f->counts = counts;
	f->regs.demcr = &f->demcr;
	f->regs.dwt_ctrl = &f->dwt_ctrl;
	f->regs.dwt_cyccnt = &f->dwt_cyccnt;
	f->regs.pmu = f->pmu;
}

void ts_pmu_fake_spin(void *ctx)
{
	struct ts_pmu_fake *f = ctx;
	if (!f->counts)
		return;
	if ((f->demcr & (1u << 24)) && (f->dwt_ctrl & 1u))
		f->dwt_cyccnt += 100u;
	if ((f->pmu[ERT_PMU_CTRL] & 1u) && (f->pmu[ERT_PMU_CNTENSET] & (1u << 31)))
		f->pmu[ERT_PMU_CCNTR] += 100u;
}

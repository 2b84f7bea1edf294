/* The PMU passes of the kernel measurement firmware (ergon/ert_kpmu.h). */
#include "ergon/ert_kblob.h"
#include "ergon/ert_kpmu.h"

static void head(const struct ert_kpmu_io *io, uint32_t idx, int mve, uint32_t event)
{
	ert_buf_str(io->line, "ERGON_KPMU ");
	ert_buf_u64(io->line, idx);
	ert_buf_str(io->line, mve ? " mve " : " ref ");
	ert_buf_u64(io->line, event);
	ert_buf_char(io->line, ' ');
}

uint32_t ert_kpmu_measure(struct ert_counters *c, const uint32_t *w, uint32_t idx, int mve,
			  const struct ert_kpmu_io *io)
{
	if (!c->have_pmu)
		return 0;
	uint32_t passes = w[KB_N_PASSES];
	if (passes > ERT_KBLOB_MAX_PASSES)
		passes = ERT_KBLOB_MAX_PASSES;
	for (uint32_t pass = 0; pass < passes; pass++) {
		uint32_t n = w[KB_PASS_N + pass];
		if (n > ERT_KBLOB_PASS_EVENTS)
			n = ERT_KBLOB_PASS_EVENTS;
		uint16_t ev[ERT_KBLOB_PASS_EVENTS];
		for (uint32_t k = 0; k < n; k++)
			ev[k] = (uint16_t)w[KB_EVENTS + pass * ERT_KBLOB_PASS_EVENTS + k];
		io->prepare(io->ctx);
		/* A pass of cycles alone (n == 0) programs no event counter. */
		int rc = n > 0 ? ert_counters_pass(c, ev, n) : ERT_CNT_OK;
		const uint32_t cyc0 = ert_counters_ccntr(c);
		io->run(io->ctx);
		const uint32_t cyc1 = ert_counters_ccntr(c);
		uint32_t got[ERT_KBLOB_PASS_EVENTS];
		int ovf = 0;
		if (rc == ERT_CNT_OK && n > 0)
			rc = ert_counters_read(c, got, &ovf);
		if (pass == 0 && w[KB_PMU_CYCLES] == 1u) {
			head(io, idx, mve, ERT_KPMU_EVENT_CPU_CYCLES);
			/* 32-bit span: exact for runs shorter than 2^32 cycles. */
			ert_buf_u64(io->line, ert_counters_span(cyc0, cyc1));
			io->flush(io->flush_ctx);
		}
		for (uint32_t k = 0; k < n; k++) {
			head(io, idx, mve, ev[k]);
			if (rc != ERT_CNT_OK)
				ert_buf_str(io->line, "unsupported");
			else if (ovf)
				ert_buf_str(io->line, "overflow");
			else
				ert_buf_u64(io->line, got[k]);
			io->flush(io->flush_ctx);
		}
	}
	return passes;
}

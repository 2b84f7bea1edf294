/* The PMU passes of the kernel measurement firmware (`ergon kernels run
 * --pmu-counters`): for one case and implementation, one extra run of the
 * kernel per pass the host planned (ergon/ert_kblob.h: KB_N_PASSES,
 * KB_PASS_N, KB_EVENTS; ergon_pmu_plan on the host: event i of a pass in
 * counter 2i, CHAIN in 2i + 1), and one line per event:
 *
 *   ERGON_KPMU <case> <ref|mve> <event id> <count>|overflow|unsupported
 *
 * With KB_PMU_CYCLES the cycle counter (PMU_CCNTR) is read across the run
 * of the first pass and printed as event 0x0011 (ARM_PMU_CPU_CYCLES),
 * which the planner keeps out of the passes. Nothing is printed where no
 * PMU counts (ert_counters.have_pmu == 0, as on QEMU): the host reports
 * every requested event unsupported there, never 0.
 *
 * The firmware (target/port/an547/kernels/kernels_main.c) and a host test
 * driving it against a PMU register fake (unit/test_kernels_pmu) share it. */
#ifndef ERT_KPMU_H
#define ERT_KPMU_H

#include "ergon/ert_counters.h"
#include "ergon/ert_fmt.h"

#include <stdint.h>

#define ERT_KPMU_EVENT_CPU_CYCLES 0x0011u

struct ert_kpmu_io {
	/* Before each pass is programmed (outside the counted region): the
	 * output buffer is re-initialized here. */
	void (*prepare)(void *ctx);
	/* One run of the kernel, the only thing counted. */
	void (*run)(void *ctx);
	void *ctx;
	/* The line being written; flush(flush_ctx) ends it with a newline,
	 * writes it and resets it. */
	struct ert_buf *line;
	void (*flush)(void *flush_ctx);
	void *flush_ctx;
};

/* Count case idx (implementation mve: 0 ref, 1 mve) under every pass of
 * the blob's header words w; returns the number of passes run (0 without
 * a PMU). */
uint32_t ert_kpmu_measure(struct ert_counters *c, const uint32_t *w, uint32_t idx, int mve,
			  const struct ert_kpmu_io *io);

#endif

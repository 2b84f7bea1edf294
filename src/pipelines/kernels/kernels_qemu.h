/* Private to `ergon kernels run`: the qemu-an547 board (kernels_qemu.c). */
#ifndef ERGON_KERNELS_QEMU_H
#define ERGON_KERNELS_QEMU_H

#include "engines/kernels/kernels_internal.h"
#include "ergon/dynbuf.h"
#include "ergon/kernels.h"
#include "ergon/kernels_run.h"

#define KQ_IMPL_REF 1u
#define KQ_IMPL_MVE 2u

/* Run the prepared cases (kcase_prepare done: inputs and the oracle's
 * expected outputs filled) on QEMU's mps3-an547 under -icount: write the
 * case blob, build the kernel firmware in work_dir, run it, and add every
 * check and sample to d and samples (samples.csv rows, count and overhead
 * in the reported unit). A case or implementation that fails its check
 * gets first_mismatch in its record and is never timed. *info: the
 * firmware build, the counter, the unit, the PMU status (caller decrefs).
 * *unit: "emulated_instructions" or "cycles" (static). */
int ergon_kernels_qemu(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		       unsigned impls, struct ergon_kernels_data *d, struct ergon_dynbuf *samples,
		       json_t **info, const char **unit, struct ergon_err *err);

/* What the firmware said about itself. */
struct kq_firmware {
	int dwt;	   /* counts are DWT CYCCNT cycles (else SysTick ticks) */
	int pmu;	   /* the PMU counted */
	uint64_t overhead; /* count-read overhead, raw */
};

/* Read the kernel firmware's UART lines (text, len; log names it in
 * errors, with the line number): ERGON_KBEGIN, ERGON_KOVERHEAD,
 * ERGON_KCHECK, ERGON_KS, ERGON_KPMU, ERGON_KEND; other text is ignored.
 * Adds checks and samples to d and samples, mismatches and PMU counts to
 * the cases' records. ERGON_EPARSE on a malformed line (a case index out
 * of range, a second check, a sample before its check or not above the
 * overhead), ERGON_EDEVICE when the firmware did not start or finish or a
 * case misses a check. */
int ergon_kernels_qemu_parse(const char *log, const char *text, size_t len, struct kcase *cases,
			     size_t n, unsigned impls, struct ergon_kernels_data *d,
			     struct ergon_dynbuf *samples, struct kq_firmware *fw,
			     struct ergon_err *err);

#endif

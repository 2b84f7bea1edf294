/* Private to `ergon kernels run`: the qemu-an547 board (kernels_qemu.c). */
#ifndef ERGON_KERNELS_QEMU_H
#define ERGON_KERNELS_QEMU_H

#include "engines/kernels/kernels_internal.h"
#include "ergon/dynbuf.h"
#include "ergon/kernels.h"
#include "ergon/kernels_run.h"
#include "ergon/pmu.h"

#define KQ_IMPL_REF 1u
#define KQ_IMPL_MVE 2u

/* Run the prepared cases (kcase_prepare done: inputs and the oracle's
 * expected outputs filled) on QEMU's mps3-an547 under -icount: write the
 * case blob, build the kernel firmware in work_dir, run it, and add every
 * check and sample to d and samples (samples.csv rows, count and overhead
 * in the reported unit). A case or implementation that fails its check
 * gets first_mismatch in its record and is never timed. *info: the
 * firmware build, the counter, the unit, the PMU status (caller decrefs).
 * *unit: "emulated_instructions" or "cycles" (static). plan: the PMU
 * passes the firmware runs where a PMU counts (kpmu_request); info's
 * "pmu" says {counted, why}. */
int ergon_kernels_qemu(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		       unsigned impls, const struct ergon_pmu_plan *plan,
		       struct ergon_kernels_data *d, struct ergon_dynbuf *samples, json_t **info,
		       const char **unit, struct ergon_err *err);

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

/* The case blob's PMU header words of plan (KB_N_PASSES, KB_PMU_CYCLES,
 * KB_PASS_N, KB_EVENTS; ergon/ert_kblob.h) into hdr, KB_HEADER_WORDS words,
 * every other word 0. At most ERT_KBLOB_MAX_PASSES passes (kpmu_request
 * refuses more). */
void kq_pmu_header(const struct ergon_pmu_plan *plan, uint32_t *hdr);

/* ---- --pmu-counters (kpmu_request: kernels_run.c, its options stage;
 * the rest: kernels_pmu.c) ---- */

/* Plan the events of a --pmu-counters list (comma-separated catalog names
 * or sets, ergon_pmu_plan; "none": nothing). NULL: the method's five
 * events on qemu-an547 (qemu != 0), nothing on the host. An unknown name
 * is ERGON_EUSAGE with the nearest catalog names; more passes than the
 * kernel firmware runs (ERT_KBLOB_MAX_PASSES) is ERGON_EUSAGE. Clean up
 * with ergon_pmu_plan_cleanup. */
int kpmu_request(const char *list, int qemu, struct ergon_pmu_plan *plan, struct ergon_err *err);

/* The plan's event names in report order (ARM_PMU_CPU_CYCLES first when
 * planned, then each pass's events); how many (at most cap). */
size_t kpmu_names(const struct ergon_pmu_plan *plan, const char **names, size_t cap);

/* Nothing when the plan is empty; else the artifact's "pmu" (requested,
 * events, passes, status, why), the section's pmu_events, pmu_status and
 * pmu_why, and each implementation's "pmu" {event: count | "overflow (not
 * an exact count)" | "unsupported" | "not counted (not timed)"}: counts
 * from the cases' records (ergon_kernels_qemu_parse) when counted, else
 * every event "unsupported". ERGON_EDEVICE when the PMU counted but a timed
 * implementation lacks an event's line. */
int kpmu_attach(json_t *art, json_t *sec, const struct kcase *cases, size_t n,
		const struct ergon_pmu_plan *plan, const char *requested, int counted,
		const char *why, struct ergon_err *err);

#endif

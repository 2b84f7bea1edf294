/* The Armv8.1-M PMU event catalog (data), and lookup by name.
 *
 * Ids and names: CMSIS-Core pmu_armv8.h "List of PMU events for Arm V8.1-M"
 * (architecturally executed events), and the Cortex-M55 TRM's
 * implementation-defined TCM events 0x4007/0x4008. Descriptions are ours. */
#include "ergon/pmu.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define E(id, name, group, desc)                 \
	{                                        \
		id, "ARM_PMU_" name, group, desc \
	}

static const struct ergon_pmu_event catalog[] = {
    E(0x0000, "SW_INCR", "cpu", "software increment of PMU_SWINC"),
    E(0x0001, "L1I_CACHE_REFILL", "memory", "L1 instruction cache refill"),
    E(0x0003, "L1D_CACHE_REFILL", "memory", "L1 data cache refill"),
    E(0x0004, "L1D_CACHE", "memory", "L1 data cache access"),
    E(0x0006, "LD_RETIRED", "memory", "memory-reading instruction executed"),
    E(0x0007, "ST_RETIRED", "memory", "memory-writing instruction executed"),
    E(0x0008, "INST_RETIRED", "cpu", "instruction architecturally executed"),
    E(0x0009, "EXC_TAKEN", "cpu", "exception entry"),
    E(0x000A, "EXC_RETURN", "cpu", "exception return executed"),
    E(0x000C, "PC_WRITE_RETIRED", "cpu", "software write to the PC executed"),
    E(0x000D, "BR_IMMED_RETIRED", "cpu", "immediate branch executed"),
    E(0x000E, "BR_RETURN_RETIRED", "cpu", "function return executed"),
    E(0x000F, "UNALIGNED_LDST_RETIRED", "memory", "unaligned load or store executed"),
    E(0x0010, "BR_MIS_PRED", "cpu", "branch mispredicted or not predicted"),
    E(0x0011, "CPU_CYCLES", "cpu", "processor cycles (read from the cycle counter)"),
    E(0x0012, "BR_PRED", "cpu", "predictable branch speculatively executed"),
    E(0x0013, "MEM_ACCESS", "memory", "data memory access"),
    E(0x0014, "L1I_CACHE", "memory", "L1 instruction cache access"),
    E(0x0015, "L1D_CACHE_WB", "memory", "L1 data cache write-back"),
    E(0x0019, "BUS_ACCESS", "memory", "bus access"),
    E(0x001A, "MEMORY_ERROR", "memory", "local memory error"),
    E(0x001D, "BUS_CYCLES", "memory", "bus cycles"),
    E(0x001E, "CHAIN", "cpu", "overflow of the preceding even counter (chaining; not requestable)"),
    E(0x0021, "BR_RETIRED", "cpu", "branch instruction executed"),
    E(0x0022, "BR_MIS_PRED_RETIRED", "cpu", "mispredicted branch executed"),
    E(0x0023, "STALL_FRONTEND", "cpu", "no operation issued: frontend"),
    E(0x0024, "STALL_BACKEND", "cpu", "no operation issued: backend"),
    E(0x0036, "LL_CACHE_RD", "memory", "last-level data cache read"),
    E(0x0037, "LL_CACHE_MISS_RD", "memory", "last-level data cache read miss"),
    E(0x0039, "L1D_CACHE_MISS_RD", "memory", "L1 data cache read miss"),
    E(0x003C, "STALL", "cpu", "stall cycle: no instruction sent for execution"),
    E(0x0040, "L1D_CACHE_RD", "memory", "L1 data cache read"),
    E(0x0100, "LE_RETIRED", "cpu", "loop-end instruction executed"),
    E(0x0108, "LE_CANCEL", "cpu", "loop-end instruction not taken"),
    E(0x0114, "SE_CALL_S", "cpu", "call into Secure state"),
    E(0x0115, "SE_CALL_NS", "cpu", "call into Non-secure state"),
    E(0x0118, "DWT_CMPMATCH0", "cpu", "DWT comparator 0 match"),
    E(0x0119, "DWT_CMPMATCH1", "cpu", "DWT comparator 1 match"),
    E(0x011A, "DWT_CMPMATCH2", "cpu", "DWT comparator 2 match"),
    E(0x011B, "DWT_CMPMATCH3", "cpu", "DWT comparator 3 match"),
    E(0x0200, "MVE_INST_RETIRED", "mve", "MVE instruction executed"),
    E(0x0204, "MVE_FP_RETIRED", "mve", "MVE floating-point instruction executed"),
    E(0x0208, "MVE_FP_HP_RETIRED", "mve", "MVE half-precision FP instruction executed"),
    E(0x020C, "MVE_FP_SP_RETIRED", "mve", "MVE single-precision FP instruction executed"),
    E(0x0214, "MVE_FP_MAC_RETIRED", "mve", "MVE FP multiply(-accumulate) executed"),
    E(0x0224, "MVE_INT_RETIRED", "mve", "MVE integer instruction executed"),
    E(0x0228, "MVE_INT_MAC_RETIRED", "mve", "MVE integer multiply(-accumulate) executed"),
    E(0x0238, "MVE_LDST_RETIRED", "mve", "MVE load or store executed"),
    E(0x023C, "MVE_LD_RETIRED", "mve", "MVE load executed"),
    E(0x0240, "MVE_ST_RETIRED", "mve", "MVE store executed"),
    E(0x0244, "MVE_LDST_CONTIG_RETIRED", "mve", "MVE contiguous load or store executed"),
    E(0x0248, "MVE_LD_CONTIG_RETIRED", "mve", "MVE contiguous load executed"),
    E(0x024C, "MVE_ST_CONTIG_RETIRED", "mve", "MVE contiguous store executed"),
    E(0x0250, "MVE_LDST_NONCONTIG_RETIRED", "mve", "MVE non-contiguous load or store executed"),
    E(0x0254, "MVE_LD_NONCONTIG_RETIRED", "mve", "MVE non-contiguous load executed"),
    E(0x0258, "MVE_ST_NONCONTIG_RETIRED", "mve", "MVE non-contiguous store executed"),
    E(0x025C, "MVE_LDST_MULTI_RETIRED", "mve", "MVE multi-register load or store executed"),
    E(0x0260, "MVE_LD_MULTI_RETIRED", "mve", "MVE multi-register load executed"),
    E(0x0264, "MVE_ST_MULTI_RETIRED", "mve", "MVE multi-register store executed"),
    E(0x028C, "MVE_LDST_UNALIGNED_RETIRED", "mve", "MVE unaligned load or store executed"),
    E(0x0290, "MVE_LD_UNALIGNED_RETIRED", "mve", "MVE unaligned load executed"),
    E(0x0294, "MVE_ST_UNALIGNED_RETIRED", "mve", "MVE unaligned store executed"),
    E(0x0298, "MVE_LDST_UNALIGNED_NONCONTIG_RETIRED", "mve",
      "MVE unaligned non-contiguous load or store executed"),
    E(0x02A0, "MVE_VREDUCE_RETIRED", "mve", "MVE vector reduction executed"),
    E(0x02A4, "MVE_VREDUCE_FP_RETIRED", "mve", "MVE FP vector reduction executed"),
    E(0x02A8, "MVE_VREDUCE_INT_RETIRED", "mve", "MVE integer vector reduction executed"),
    E(0x02B8, "MVE_PRED", "mve", "cycles with one or more predicated beats"),
    E(0x02CC, "MVE_STALL", "mve", "stall cycles caused by an MVE instruction"),
    E(0x02CD, "MVE_STALL_RESOURCE", "mve", "MVE stall: resource conflict"),
    E(0x02CE, "MVE_STALL_RESOURCE_MEM", "mve", "MVE stall: memory resource conflict"),
    E(0x02CF, "MVE_STALL_RESOURCE_FP", "mve", "MVE stall: floating-point resource conflict"),
    E(0x02D0, "MVE_STALL_RESOURCE_INT", "mve", "MVE stall: integer resource conflict"),
    E(0x02D3, "MVE_STALL_BREAK", "mve", "MVE stall: chain break"),
    E(0x02D4, "MVE_STALL_DEPENDENCY", "mve", "MVE stall: register dependency"),
    E(0x4007, "ITCM_ACCESS", "memory", "instruction TCM access (Cortex-M55)"),
    E(0x4008, "DTCM_ACCESS", "memory", "data TCM access (Cortex-M55)"),
};

const struct ergon_pmu_event *ergon_pmu_events(size_t *n)
{
	*n = sizeof(catalog) / sizeof(catalog[0]);
	return catalog;
}

const struct ergon_pmu_event *ergon_pmu_event_find(const char *name)
{
	const char *bare = name;
	if (strncasecmp(bare, "ARM_PMU_", 8) == 0)
		bare += 8;
	for (size_t i = 0; i < sizeof(catalog) / sizeof(catalog[0]); i++)
		if (strcasecmp(catalog[i].name + 8, bare) == 0)
			return &catalog[i];
	return NULL;
}

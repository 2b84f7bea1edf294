/* The case blob of the kernel measurement firmware: written by the host
 * (src/pipelines/kernels/kernels_qemu.c), loaded by QEMU's generic loader at
 * ERT_KBLOB_ADDR (the AN547's DDR), read by target/port/an547/kernels/kernels_main.c. Little-endian
 * 32-bit words; offsets are bytes from the start of the blob, 0 = absent. */
#ifndef ERT_KERNELS_BLOB_H
#define ERT_KERNELS_BLOB_H

#define ERT_KBLOB_ADDR 0x60000000u
#define ERT_KBLOB_MAGIC 0x4B475245u /* "ERGK" */
#define ERT_KBLOB_VERSION 2u	    /* 2: KB_PMU_CYCLES */
#define ERT_KBLOB_MAX_BYTES (256u * 1024u * 1024u)
#define ERT_KBLOB_MAX_CASES 1024u
#define ERT_KBLOB_MAX_PASSES 8u
#define ERT_KBLOB_PASS_EVENTS 4u

/* Header words. */
enum {
	KB_MAGIC,
	KB_VERSION,
	KB_N_CASES,
	KB_ITERATIONS,
	KB_WARMUP,
	KB_IMPLS, /* bit 0: ref, bit 1: mve */
	KB_N_PASSES,
	KB_BYTES,
	KB_SCRATCH, /* offset of the firmware's output buffer */
	KB_SCRATCH_BYTES,
	KB_INJECT,     /* test builds: 1 = corrupt one byte of case 0's ref output */
	KB_PMU_CYCLES, /* 1: ARM_PMU_CPU_CYCLES asked, read from CCNTR across pass 0 */
	KB_PASS_N,     /* ERT_KBLOB_MAX_PASSES words: events in each pass */
	KB_EVENTS = KB_PASS_N + ERT_KBLOB_MAX_PASSES, /* passes x 4 event ids */
	KB_CASES = KB_EVENTS + ERT_KBLOB_MAX_PASSES * ERT_KBLOB_PASS_EVENTS,
	KB_HEADER_WORDS = KB_CASES
};

/* One case: KC_WORDS words from KB_CASES + index * KC_WORDS. */
enum {
	KC_KIND, /* 1 conv, 2 dwconv, 4 fc */
	KC_P,	 /* 21 conv parameters or 9 fc parameters, in struct order */
	KC_IN = KC_P + 24,
	KC_FILTER,
	KC_BIAS,
	KC_MULT,
	KC_SHIFT,
	KC_FSUM,
	KC_EXPECT,
	KC_OUT_LEN,
	KC_IN_LEN,
	KC_WORDS = 40
};

#endif

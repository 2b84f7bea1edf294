/* AN505 reset path: the FPU enabled (CPACR CP10/CP11) before any C runs
 * (the firmware is built -mfloat-abi=hard), VTOR, .data copied, .bss
 * zeroed, main, exit through semihosting with main's return code. */
	.syntax unified
	.thumb

	.section .vectors, "a"
	.align 7
	.global __vectors
__vectors:
	.word __stack_top
	.word Reset_Handler
	.word Fault_Handler      /* NMI */
	.word Fault_Handler      /* HardFault */
	.word Fault_Handler      /* MemManage */
	.word Fault_Handler      /* BusFault */
	.word Fault_Handler      /* UsageFault */
	.word Fault_Handler      /* SecureFault */
	.word 0, 0, 0
	.word Fault_Handler      /* SVC */
	.word Fault_Handler      /* DebugMon */
	.word 0
	.word Fault_Handler      /* PendSV */
	.word SysTick_Handler

	.text
	.thumb_func
	.global Reset_Handler
Reset_Handler:
	/* CPACR (0xE000ED88): CP10 and CP11 full access, bits 23:20. */
	ldr r0, =0xE000ED88
	ldr r1, [r0]
	orr r1, r1, #(0xF << 20)
	str r1, [r0]
	dsb
	isb
	/* VTOR (the Secure one: we run Secure) = our table. */
	ldr r0, =0xE000ED08
	ldr r1, =__vectors
	str r1, [r0]
	/* Copy .data from its load image in CODE to RAM. */
	ldr r0, =__data_load
	ldr r1, =__data_start
	ldr r2, =__data_end
1:	cmp r1, r2
	bhs 2f
	ldr r3, [r0], #4
	str r3, [r1], #4
	b 1b
2:	/* Zero .bss. */
	ldr r1, =__bss_start
	ldr r2, =__bss_end
	movs r3, #0
3:	cmp r1, r2
	bhs 4f
	str r3, [r1], #4
	b 3b
4:	bl main
	/* main returned its exit code in r0. */
	bl an505_exit
5:	b 5b

	.thumb_func
	.weak Fault_Handler
Fault_Handler:
	movs r0, #99
	bl an505_exit
6:	b 6b

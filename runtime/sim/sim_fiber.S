/*
 * sim_fiber.S — the simulator's fiber context switch.
 *
 *   void shortsim_ctx_switch(void **save_sp, void *to_sp);
 *
 * Saves the callee-saved registers of the running context on its stack,
 * stores the stack pointer in *save_sp, loads to_sp and restores the
 * registers saved there. A fresh fiber's stack is laid out by
 * sim_fiber_make() (sim_core.c) so that the first switch "returns" into
 * shortsim_ctx_entry, which calls fn(arg) (fn and arg in callee-saved
 * registers). No signal mask or FP control state is switched: all fibers
 * of a worker share them. Other architectures use ucontext (sim_core.c).
 */
#if defined(__x86_64__)

    .text
    .p2align 4
    .globl shortsim_ctx_switch
    .hidden shortsim_ctx_switch
    .type shortsim_ctx_switch, @function
shortsim_ctx_switch:            /* rdi = void **save_sp, rsi = void *to_sp */
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size shortsim_ctx_switch, .-shortsim_ctx_switch

    .p2align 4
    .globl shortsim_ctx_entry
    .hidden shortsim_ctx_entry
    .type shortsim_ctx_entry, @function
shortsim_ctx_entry:             /* r12 = fn, r13 = arg; rsp is 16-byte aligned here */
    .cfi_startproc
    .cfi_undefined rip
    xorl %ebp, %ebp
    movq %r13, %rdi
    callq *%r12
    ud2                         /* fn never returns */
    .cfi_endproc
    .size shortsim_ctx_entry, .-shortsim_ctx_entry

    .section .note.GNU-stack,"",@progbits

#elif defined(__aarch64__)

    .text
    .p2align 4
    .globl shortsim_ctx_switch
    .hidden shortsim_ctx_switch
    .type shortsim_ctx_switch, %function
shortsim_ctx_switch:            /* x0 = void **save_sp, x1 = void *to_sp */
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x2, sp
    str x2, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size shortsim_ctx_switch, .-shortsim_ctx_switch

    .p2align 4
    .globl shortsim_ctx_entry
    .hidden shortsim_ctx_entry
    .type shortsim_ctx_entry, %function
shortsim_ctx_entry:             /* x19 = fn, x20 = arg */
    mov x29, #0
    mov x0, x20
    blr x19
    brk #0
    .size shortsim_ctx_entry, .-shortsim_ctx_entry

    .section .note.GNU-stack,"",%progbits

#endif

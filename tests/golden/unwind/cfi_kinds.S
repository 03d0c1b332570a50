/* cfi_kinds.S — one function per kind of CFI rule the unwinder reduces, linked at test time into
 * a -nostdlib shared object whose `-d unwind` rendering is compared with cfi_kinds.expected.
 * Hand-written so that the rows do not depend on a compiler version. */
	.text

	.globl	f_rsp
	.type	f_rsp, @function
f_rsp:	/* rsp-based CFA, a callee-saved register that is not rbp, advance_loc2 */
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub	$32, %rsp
	.cfi_def_cfa_offset 48
	.skip	300, 0x90
	add	$32, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f_rsp, .-f_rsp

	.globl	f_rbp
	.type	f_rbp, @function
f_rbp:	/* frame pointer: rbp-based CFA, rbp saved, remember/restore_state around an early ret */
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	test	%edi, %edi
	je	1f
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 8
	ret
1:	.cfi_restore_state
	nop
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	f_rbp, .-f_rbp

	/* No CFI at all for f_nocfi: a gap the walker crosses with frame pointers. */
	.globl	f_nocfi
	.type	f_nocfi, @function
f_nocfi:
	push	%rbp
	mov	%rsp, %rbp
	pop	%rbp
	ret
	.size	f_nocfi, .-f_nocfi

	.globl	f_end
	.type	f_end, @function
f_end:	/* the outermost frame, like _start: the return address is undefined */
	.cfi_startproc
	.cfi_undefined %rip
	xor	%ebp, %ebp
	hlt
	.cfi_endproc
	.size	f_end, .-f_end

	.p2align 4
	.globl	f_plt
	.type	f_plt, @function
f_plt:	/* the PLT's CFA expression: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	.skip	16, 0x90
	.cfi_endproc
	.size	f_plt, .-f_plt

	.globl	f_sig
	.type	f_sig, @function
	/* A signal trampoline: its CIE has the 'S' augmentation; like glibc's __restore_rt, the
	 * FDE starts one byte before the symbol, so that return address - 1 falls inside it. */
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_def_cfa %rsp, 160
	nop
f_sig:
	mov	$15, %eax
	syscall
	.cfi_endproc
	.size	f_sig, .-f_sig

	.globl	f_realign
	.type	f_realign, @function
f_realign: /* gcc's stack realignment: CFA in r10, then [rbp-8]; rbp by expression */
	.cfi_startproc
	lea	8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	and	$-16, %rsp
	push	-8(%r10)
	push	%rbp
	mov	%rsp, %rbp
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00
	.skip	70000, 0x90
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_same_value %rbp
	ret
	.cfi_endproc
	.size	f_realign, .-f_realign

	.globl	f_rbx_cfa
	.type	f_rbx_cfa, @function
f_rbx_cfa: /* ld.so's lazy-binding trampoline: CFA in rbx while the stack is realigned */
	.cfi_startproc
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	mov	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	and	$-64, %rsp
	call	*%rax
	mov	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	pop	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	f_rbx_cfa, .-f_rbx_cfa

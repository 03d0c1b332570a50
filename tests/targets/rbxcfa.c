/* rbxcfa — a frame whose CFA is given by rbx, as in ld.so's lazy-binding trampolines
 * (_dl_runtime_resolve_xsave*, _dl_tlsdesc_dynamic*): main → caller → rbx_tramp (assembly: saves
 * rbx, keeps its entry rsp in rbx, so CFA = rbx + 16, and realigns the stack to 64 bytes) →
 * rbx_mid (assembly: saves rbx in its own frame, then clobbers it) → rbx_leaf (C). Unwinding
 * rbx_tramp needs the rbx that rbx_mid saved; the frame-pointer fallback cannot help (no frame
 * pointer is kept). Usage: rbxcfa calls N (rbx_leaf returns at once, N times) | rbxcfa spin
 * SECONDS (rbx_leaf burns CPU until then). */
#include "common.h"

#include <string.h>

void rbx_tramp(double deadline);
void rbx_mid(double deadline);
asm(".text\n"
    ".globl rbx_tramp\n"
    ".type rbx_tramp, @function\n"
    "rbx_tramp:\n"
    "	.cfi_startproc\n"
    "	push %rbx\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	.cfi_rel_offset %rbx, 0\n"
    "	mov %rsp, %rbx\n"
    "	.cfi_def_cfa_register %rbx\n"
    "	and $-64, %rsp\n"
    "	sub $64, %rsp\n"
    "	call rbx_mid\n" /* rbx_tramp+12: a uprobe here sees the rule with rbx straight from regs */
    "	mov %rbx, %rsp\n"
    "	.cfi_def_cfa_register %rsp\n"
    "	pop %rbx\n"
    "	.cfi_adjust_cfa_offset -8\n"
    "	.cfi_restore %rbx\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size rbx_tramp, .-rbx_tramp\n"
    ".globl rbx_mid\n"
    ".type rbx_mid, @function\n"
    "rbx_mid:\n"
    "	.cfi_startproc\n"
    "	push %rbx\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	.cfi_offset %rbx, -16\n"
    "	mov $0x5a5a5a5a, %ebx\n"
    "	call rbx_leaf\n"
    "	pop %rbx\n"
    "	.cfi_adjust_cfa_offset -8\n"
    "	.cfi_restore %rbx\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size rbx_mid, .-rbx_mid\n");

volatile unsigned long rbx_sink;

NOINLINE void rbx_leaf(double deadline)
{
	do
		for (int i = 0; i < 100000; i++)
			rbx_sink += i;
	while (deadline > 0 && t_now() < deadline);
	NO_TAIL();
}

NOINLINE void caller(double deadline)
{
	rbx_tramp(deadline);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "spin")) {
		caller(t_deadline(t_arg_double(argc, argv, 2, 1.0)));
		return 0;
	}
	for (long n = t_arg_long(argc, argv, 2, 1); n > 0; n--)
		caller(0);
	return 0;
}

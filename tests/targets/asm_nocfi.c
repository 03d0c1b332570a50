/* asm_nocfi — a frame with no CFI in the middle of the stack: main → caller → nocfi_call (written
 * in assembly, no .cfi directives, so .eh_frame has no row for it) → cb_burn (C, with CFI).
 * nocfi_call keeps a frame-pointer frame (push %rbp; mov %rsp,%rbp), which is what an unwinder's
 * frame-pointer fallback for code without CFI relies on. Usage: asm_nocfi [SECONDS]. */
#include "common.h"

#include <stdio.h>

/* void nocfi_call(void (*fn)(double), double deadline): the deadline stays in %xmm0. */
void nocfi_call(void (*fn)(double), double deadline);
asm(".text\n"
    ".globl nocfi_call\n"
    ".type nocfi_call, @function\n"
    "nocfi_call:\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	call *%rdi\n"
    "	nop\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size nocfi_call, .-nocfi_call\n");

volatile unsigned long nocfi_sink;

NOINLINE void cb_burn(double deadline)
{
	while (t_now() < deadline)
		for (int i = 0; i < 100000; i++)
			nocfi_sink += i;
	NO_TAIL();
}

NOINLINE void caller(double deadline)
{
	nocfi_call(cb_burn, deadline);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	caller(t_deadline(t_arg_double(argc, argv, 1, 1.0)));
	if (getenv("CHAIN_VERBOSE"))
		printf("asm_nocfi: done\n");
	return 0;
}

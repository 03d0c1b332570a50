/* disasm.c — the one question dwarftrace asks of x86-64 machine code: does an offset into a
 * function start an instruction? A uprobe at `func+OFF` replaces the byte at OFF with a breakpoint;
 * inside an instruction that changes what the instruction means, in every process that runs the
 * function (a probe at malloc+1 crashes the machine's processes). x86 instructions have lengths
 * of 1 to 15 bytes, so the answer is found by decoding from the function's start, with LLVM's
 * disassembler (here because only codegen/ includes LLVM). */
#include "codegen/codegen.h"

#include <errno.h>
#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>

int dt_cg_insn_boundary(const uint8_t *code, size_t len, uint64_t off)
{
	static bool init;
	LLVMDisasmContextRef dc;
	uint64_t pc = 0;
	char text[160];
	int rc = 0;

	if (off >= len)
		return off == len ? 1 : 0;
	if (!init) {
		LLVMInitializeX86TargetInfo();
		LLVMInitializeX86TargetMC();
		LLVMInitializeX86Disassembler();
		init = true;
	}
	dc = LLVMCreateDisasm("x86_64-pc-linux-gnu", NULL, 0, NULL, NULL);
	if (!dc)
		return -ENOTSUP;
	while (pc < off) {
		size_t n = LLVMDisasmInstruction(dc, (uint8_t *)code + pc, len - pc, pc, text,
						 sizeof(text));

		if (!n) {
			rc = -EILSEQ;
			break;
		}
		pc += n;
	}
	LLVMDisasmDispose(dc);
	return rc < 0 ? rc : pc == off;
}

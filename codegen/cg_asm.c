/* cg_asm.c — `-d asm`: a readable listing of the final BPF instructions in llvm-objdump's
 * notation (`r1 = *(u64 *)(r10 - 8)`, `if r0 == 0 goto +3`, `call 1`). It covers every class
 * the BPF backend emits for v3 (ALU, ALU64, JMP, JMP32, LD imm64, LDX, ST, STX, atomics); an
 * encoding it does not know is printed raw rather than guessed. */
#include "codegen/cg_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void app(char **out, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void app(char **out, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*out = xrealloc(*out, *len + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(*out + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
}

static const char *size_name(int sz)
{
	switch (sz) {
	case BPF_B: return "u8";
	case BPF_H: return "u16";
	case BPF_W: return "u32";
	default: return "u64";
	}
}

static void mem(char *buf, size_t n, const struct bpf_insn *in, int reg)
{
	if (in->off < 0)
		snprintf(buf, n, "*(%s *)(r%d - %d)", size_name(BPF_SIZE(in->code)), reg, -in->off);
	else
		snprintf(buf, n, "*(%s *)(r%d + %d)", size_name(BPF_SIZE(in->code)), reg, in->off);
}

static const char *alu_op(int op)
{
	switch (op) {
	case BPF_ADD: return "+=";
	case BPF_SUB: return "-=";
	case BPF_MUL: return "*=";
	case BPF_DIV: return "/=";
	case BPF_OR: return "|=";
	case BPF_AND: return "&=";
	case BPF_LSH: return "<<=";
	case BPF_RSH: return ">>=";
	case BPF_MOD: return "%=";
	case BPF_XOR: return "^=";
	case BPF_MOV: return "=";
	case BPF_ARSH: return "s>>=";
	default: return NULL;
	}
}

static const char *jmp_op(int op)
{
	switch (op) {
	case BPF_JEQ: return "==";
	case BPF_JGT: return ">";
	case BPF_JGE: return ">=";
	case BPF_JSET: return "&";
	case BPF_JNE: return "!=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JLT: return "<";
	case BPF_JLE: return "<=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	default: return NULL;
	}
}

/* One instruction (two for ld_imm64: returns the number consumed). */
static int insn(const struct bpf_insn *in, size_t left, char *buf, size_t n)
{
	int cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	char m[64];
	char rp = cls == BPF_ALU || cls == BPF_JMP32 ? 'w' : 'r';

	switch (cls) {
	case BPF_ALU: case BPF_ALU64: {
		const char *o = alu_op(op);

		if (op == BPF_NEG) {
			snprintf(buf, n, "%c%d = -%c%d", rp, in->dst_reg, rp, in->dst_reg);
		} else if (op == BPF_END) {
			snprintf(buf, n, "r%d = %s%d r%d", in->dst_reg,
				 BPF_SRC(in->code) == BPF_TO_BE ? "be" : "le", in->imm, in->dst_reg);
		} else if (!o) {
			break;
		} else if (BPF_SRC(in->code) == BPF_X) {
			snprintf(buf, n, "%c%d %s %c%d", rp, in->dst_reg, o, rp, in->src_reg);
		} else {
			snprintf(buf, n, "%c%d %s %d", rp, in->dst_reg, o, in->imm);
		}
		return 1;
	}
	case BPF_JMP: case BPF_JMP32: {
		const char *o = jmp_op(op);

		if (cls == BPF_JMP && op == BPF_JA) {
			snprintf(buf, n, "goto %+d", in->off);
		} else if (cls == BPF_JMP && op == BPF_CALL) {
			snprintf(buf, n, "call %d", in->imm);
		} else if (cls == BPF_JMP && op == BPF_EXIT) {
			snprintf(buf, n, "exit");
		} else if (!o) {
			break;
		} else if (BPF_SRC(in->code) == BPF_X) {
			snprintf(buf, n, "if %c%d %s %c%d goto %+d", rp, in->dst_reg, o, rp, in->src_reg,
				 in->off);
		} else {
			snprintf(buf, n, "if %c%d %s %d goto %+d", rp, in->dst_reg, o, in->imm, in->off);
		}
		return 1;
	}
	case BPF_LD:
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW) && left >= 2) {
			uint64_t v = (uint32_t)in->imm | ((uint64_t)(uint32_t)in[1].imm << 32);

			if (in->src_reg == BPF_PSEUDO_MAP_FD)
				snprintf(buf, n, "r%d = map[fd %d] ll", in->dst_reg, in->imm);
			else
				snprintf(buf, n, "r%d = 0x%llx ll", in->dst_reg, (unsigned long long)v);
			return 2;
		}
		break;
	case BPF_LDX:
		if (BPF_MODE(in->code) != BPF_MEM)
			break;
		mem(m, sizeof(m), in, in->src_reg);
		snprintf(buf, n, "r%d = %s", in->dst_reg, m);
		return 1;
	case BPF_ST:
		if (BPF_MODE(in->code) != BPF_MEM)
			break;
		mem(m, sizeof(m), in, in->dst_reg);
		snprintf(buf, n, "%s = %d", m, in->imm);
		return 1;
	case BPF_STX:
		mem(m, sizeof(m), in, in->dst_reg);
		if (BPF_MODE(in->code) == BPF_MEM) {
			snprintf(buf, n, "%s = r%d", m, in->src_reg);
			return 1;
		}
		if (BPF_MODE(in->code) == BPF_ATOMIC && in->imm == BPF_ADD) {
			snprintf(buf, n, "lock %s += r%d", m, in->src_reg);
			return 1;
		}
		break;
	}
	snprintf(buf, n, "<code 0x%02x dst r%d src r%d off %d imm %d>", in->code, in->dst_reg,
		 in->src_reg, in->off, in->imm);
	return 1;
}

void cg_disasm(const struct bpf_insn *insns, size_t n, const char *title, char **out, size_t *len)
{
	char buf[128];

	app(out, len, "%s:\n", title);
	for (size_t i = 0; i < n;) {
		int k = insn(&insns[i], n - i, buf, sizeof(buf));

		app(out, len, "%5zu:\t%s\n", i, buf);
		i += (size_t)k;
	}
}

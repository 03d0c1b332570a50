/* usdt.c — the argument text of a SystemTap SDT note, parsed for codegen: one `SIZE@OPERAND` per
 * argument, separated by spaces, the operand in x86-64 GNU as syntax as the compiler chose it for
 * the marker's "nor" asm constraint (see <sys/sdt.h>). SIZE is the byte count, negative when the
 * argument's C type is signed. Operands: `$IMM`, `%REG` (any width: %rax, %eax, %ax, %al, %ah,
 * %r8d, …), `DISP(%BASE)`, `DISP(%BASE,%INDEX,SCALE)` and `SYM[+OFF](%rip)`. Segment-relative
 * (TLS) operands are refused: the BPF side cannot read %fs's base from pt_regs. */
#include "lang/lang_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The x86-64 register names of every width and the pt_regs name of the register they are part
 * of; `shift` 8 for the high bytes (%ah), `width` the operand size they name. */
static const struct {
	const char *name, *reg;
	uint8_t width, shift;
} x86_regs[] = {
	{ "rax", "ax", 8, 0 }, { "eax", "ax", 4, 0 }, { "ax", "ax", 2, 0 }, { "al", "ax", 1, 0 },
	{ "ah", "ax", 1, 8 },
	{ "rbx", "bx", 8, 0 }, { "ebx", "bx", 4, 0 }, { "bx", "bx", 2, 0 }, { "bl", "bx", 1, 0 },
	{ "bh", "bx", 1, 8 },
	{ "rcx", "cx", 8, 0 }, { "ecx", "cx", 4, 0 }, { "cx", "cx", 2, 0 }, { "cl", "cx", 1, 0 },
	{ "ch", "cx", 1, 8 },
	{ "rdx", "dx", 8, 0 }, { "edx", "dx", 4, 0 }, { "dx", "dx", 2, 0 }, { "dl", "dx", 1, 0 },
	{ "dh", "dx", 1, 8 },
	{ "rsi", "si", 8, 0 }, { "esi", "si", 4, 0 }, { "si", "si", 2, 0 }, { "sil", "si", 1, 0 },
	{ "rdi", "di", 8, 0 }, { "edi", "di", 4, 0 }, { "di", "di", 2, 0 }, { "dil", "di", 1, 0 },
	{ "rbp", "bp", 8, 0 }, { "ebp", "bp", 4, 0 }, { "bp", "bp", 2, 0 }, { "bpl", "bp", 1, 0 },
	{ "rsp", "sp", 8, 0 }, { "esp", "sp", 4, 0 }, { "sp", "sp", 2, 0 }, { "spl", "sp", 1, 0 },
	{ "rip", "ip", 8, 0 },
};

/* %NAME at *s: the pt_regs offset (and the high-byte shift), advancing *s; -1 when unknown. */
static int parse_reg(const char **s, uint8_t *shift)
{
	const char *p = *s;
	char name[8];
	size_t n = 0;

	if (*p != '%')
		return -1;
	p++;
	while (isalnum((unsigned char)p[n]) && n < sizeof(name) - 1) {
		name[n] = p[n];
		n++;
	}
	name[n] = 0;
	*shift = 0;
	/* r8 … r15 with their d/w/b suffixes. */
	if (name[0] == 'r' && isdigit((unsigned char)name[1])) {
		char base[4];
		size_t k = 1;

		while (isdigit((unsigned char)name[k]))
			k++;
		if (k > 3 || (name[k] && (!strchr("dwb", name[k]) || name[k + 1])))
			return -1;
		memcpy(base, name, k);
		base[k] = 0;
		int off = dt_reg_offset(base);
		if (off >= 0)
			*s = p + n;
		return off;
	}
	for (size_t i = 0; i < DT_ARRAY_SIZE(x86_regs); i++) {
		if (!strcmp(name, x86_regs[i].name)) {
			*shift = x86_regs[i].shift;
			*s = p + n;
			return dt_reg_offset(x86_regs[i].reg);
		}
	}
	return -1;
}

/* A signed integer (decimal, 0x hex or 0 octal) at *s; false when there is none. */
static bool parse_num(const char **s, int64_t *v)
{
	const char *p = *s;
	bool neg = false;
	char *end;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	uint64_t u = strtoull(p, &end, 0);
	if (errno)
		return false;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	*s = end;
	return true;
}

static bool parse_operand(dt_arena *a, const char *p, const char *end, dt_usdt_arg *arg)
{
	uint8_t shift;
	int64_t v = 0;

	arg->reg = arg->index = -1;
	arg->scale = 1;
	if (*p == '$') {
		p++;
		if (!parse_num(&p, &v) || p != end)
			return false;
		arg->kind = DT_USDT_CONST;
		arg->value = v;
		return true;
	}
	if (*p == '%') {
		int r = parse_reg(&p, &shift);

		if (r < 0 || p != end)
			return false; /* also %fs:… (segment-relative) */
		arg->kind = DT_USDT_REG;
		arg->reg = (int16_t)r;
		arg->reg_shift = shift;
		return true;
	}
	/* Memory: [DISP | SYM[+-OFF]](%BASE[,%INDEX[,SCALE]]) */
	arg->kind = DT_USDT_MEM;
	if (isalpha((unsigned char)*p) || *p == '_' || *p == '.') {
		const char *q = p;

		while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '$'))
			q++;
		arg->sym = dt_arena_strndup(a, p, (size_t)(q - p));
		p = q;
		if (*p == '+' || *p == '-') {
			if (!parse_num(&p, &v))
				return false;
		}
	} else if (*p != '(') {
		if (!parse_num(&p, &v))
			return false;
	}
	arg->value = v;
	if (*p != '(')
		return false; /* an absolute address: not emitted for SDT operands */
	p++;
	if (*p != ',') {
		int r = parse_reg(&p, &shift);

		if (r < 0 || shift)
			return false;
		arg->reg = (int16_t)r;
	}
	if (*p == ',') {
		p++;
		int r = parse_reg(&p, &shift);

		if (r < 0 || shift)
			return false;
		arg->index = (int16_t)r;
		if (*p == ',') {
			p++;
			if (!parse_num(&p, &v) || (v != 1 && v != 2 && v != 4 && v != 8))
				return false;
			arg->scale = (uint8_t)v;
		}
	}
	if (*p != ')' || p + 1 != end)
		return false;
	/* A symbol is only meaningful relative to %rip (the resolver rebases it); %rip as a
	 * base without one, or as an index, cannot be read at the probe. */
	bool rip = arg->reg == dt_reg_offset("ip");
	if ((arg->sym != NULL) != rip || arg->index == dt_reg_offset("ip"))
		return false;
	return true;
}

int dt_usdt_args_parse(dt_arena *a, const char *spec, dt_usdt_arg **args, uint32_t *n,
		       const char **bad)
{
	dt_usdt_arg tmp[DT_USDT_MAX_ARGS];
	uint32_t k = 0;
	const char *p = spec ? spec : "";

	*bad = NULL;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *start = p, *end = p;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		if (k == DT_USDT_MAX_ARGS) {
			*bad = start;
			return -EINVAL;
		}
		dt_usdt_arg *arg = &tmp[k];
		memset(arg, 0, sizeof(*arg));
		/* SIZE@ (absent in old notes: a 64-bit value) */
		const char *at = memchr(p, '@', (size_t)(end - p));
		int64_t size = 8;
		if (at) {
			if (!parse_num(&p, &size) || p != at) {
				*bad = start;
				return -EINVAL;
			}
			p = at + 1;
		}
		arg->is_signed = size < 0;
		size = size < 0 ? -size : size;
		if ((size != 1 && size != 2 && size != 4 && size != 8) || p == end ||
		    !parse_operand(a, p, end, arg)) {
			*bad = start;
			return -EINVAL;
		}
		arg->size = (uint8_t)size;
		k++;
		p = end;
	}
	*args = dt_arena_alloc(a, sizeof(dt_usdt_arg) * (k ? k : 1));
	if (k)
		memcpy(*args, tmp, sizeof(dt_usdt_arg) * k);
	*n = k;
	return 0;
}

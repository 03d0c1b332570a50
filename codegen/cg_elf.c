/* cg_elf.c — pulls a program's instructions out of the BPF object LLVM emitted in memory. The
 * object is our own output, but it is still parsed defensively (every offset bounds-checked).
 * Generated code is meant to be self-contained (maps by fd, no globals, no .rodata), so the
 * relocations accepted are the address of a function of the same section — a callback the
 * program passes to bpf_loop or bpf_for_each_map_elem — which becomes the kernel's
 * BPF_PSEUDO_FUNC load (as libbpf would make it), and the call of a kernel function (a kfunc),
 * which becomes a BPF_PSEUDO_KFUNC_CALL of its BTF id; any other means codegen produced
 * something the kernel could not load as-is. */
#include "codegen/cg_internal.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const Elf64_Shdr *shdr_at(const unsigned char *obj, size_t len, const Elf64_Ehdr *eh,
				 unsigned i)
{
	size_t off = eh->e_shoff + (size_t)i * eh->e_shentsize;

	if (i >= eh->e_shnum || off + sizeof(Elf64_Shdr) > len)
		return NULL;
	return (const Elf64_Shdr *)(obj + off);
}

/* Resolves the REL entries of the program section `sec` (its copy `insns`, n instructions):
 *   - an ld_imm64 of a function symbol of the same section becomes a BPF_PSEUDO_FUNC load of the
 *     instruction it starts at (imm: its distance from the next instruction);
 *   - a call of an undefined symbol (R_BPF_64_32) is a kfunc's: it becomes the kernel's
 *     BPF_PSEUDO_KFUNC_CALL of the function's vmlinux BTF id (off 0: vmlinux), from env; the
 *     load of such a symbol's address (imported C testing a __weak __ksym) becomes 1.
 * -ENOTSUP for anything else; a kfunc this kernel lacks: -ENOENT with *missing its name. */
static int resolve_relocs(const unsigned char *obj, size_t len, const Elf64_Ehdr *eh,
			  const Elf64_Shdr *rel, unsigned sec, struct bpf_insn *insns, size_t n,
			  const dt_cg_env *env, const char **missing)
{
	const Elf64_Shdr *symtab = shdr_at(obj, len, eh, rel->sh_link);
	const Elf64_Shdr *strtab = symtab ? shdr_at(obj, len, eh, symtab->sh_link) : NULL;

	if (!symtab || rel->sh_entsize != sizeof(Elf64_Rel) || rel->sh_offset + rel->sh_size > len ||
	    symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_offset + symtab->sh_size > len)
		return -EINVAL;
	for (size_t i = 0; i < rel->sh_size / sizeof(Elf64_Rel); i++) {
		const Elf64_Rel *r = (const Elf64_Rel *)(obj + rel->sh_offset) + i;
		size_t si = ELF64_R_SYM(r->r_info), at = r->r_offset / sizeof(struct bpf_insn);
		const Elf64_Sym *sym;
		uint64_t target;

		if (si >= symtab->sh_size / sizeof(Elf64_Sym) || r->r_offset % sizeof(struct bpf_insn) ||
		    at >= n)
			return -ENOTSUP;
		sym = (const Elf64_Sym *)(obj + symtab->sh_offset) + si;
		bool is_call = ELF64_R_TYPE(r->r_info) == 10 /* R_BPF_64_32 */ &&
			       insns[at].code == (BPF_JMP | BPF_CALL);
		/* Imported C's `if (!kfunc)` (a __weak __ksym's address): whether it exists. */
		bool is_addr = ELF64_R_TYPE(r->r_info) == 1 /* R_BPF_64_64 */ && at + 1 < n &&
			       insns[at].code == (BPF_LD | BPF_IMM | BPF_DW);

		if (sym->st_shndx == SHN_UNDEF && (is_call || is_addr)) {
			const char *name;
			int id;

			if (!strtab || strtab->sh_offset + strtab->sh_size > len ||
			    sym->st_name >= strtab->sh_size)
				return -EINVAL;
			name = (const char *)obj + strtab->sh_offset + sym->st_name;
			if (strnlen(name, strtab->sh_size - sym->st_name) == strtab->sh_size - sym->st_name)
				return -EINVAL;
			id = env && env->kfunc_id ? env->kfunc_id(env->ctx, name) : -ENOTSUP;
			if (id <= 0) {
				*missing = name;
				return id < 0 ? id : -ENOENT;
			}
			if (is_addr) {
				insns[at].imm = 1;
				insns[at + 1].imm = 0;
				continue;
			}
			insns[at].src_reg = BPF_PSEUDO_KFUNC_CALL;
			insns[at].off = 0;
			insns[at].imm = id;
			continue;
		}
		if (at + 1 >= n || ELF64_R_TYPE(r->r_info) != 1 /* R_BPF_64_64 */ ||
		    sym->st_shndx != sec ||
		    (ELF64_ST_TYPE(sym->st_info) != STT_FUNC && ELF64_ST_TYPE(sym->st_info) != STT_SECTION) ||
		    insns[at].code != (BPF_LD | BPF_IMM | BPF_DW))
			return -ENOTSUP;
		/* REL: the addend is the instruction's own immediate (a byte offset). */
		target = sym->st_value + (uint32_t)insns[at].imm;
		if (target % sizeof(struct bpf_insn) || target / sizeof(struct bpf_insn) >= n)
			return -ENOTSUP;
		insns[at].src_reg = BPF_PSEUDO_FUNC;
		insns[at].imm = (int32_t)(target / sizeof(struct bpf_insn)) - (int32_t)at - 1;
		insns[at + 1].imm = 0;
	}
	return 0;
}

int cg_elf_section(const void *objv, size_t len, const char *name, const dt_cg_env *env,
		   struct bpf_insn **insns, size_t *ninsns, const char **missing)
{
	const unsigned char *obj = objv;
	const Elf64_Ehdr *eh = objv;
	const Elf64_Shdr *strs, *sh;
	int found = -1;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return -EINVAL;
	strs = shdr_at(obj, len, eh, eh->e_shstrndx);
	if (!strs || strs->sh_offset + strs->sh_size > len)
		return -EINVAL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const char *n;

		sh = shdr_at(obj, len, eh, i);
		if (!sh || sh->sh_name >= strs->sh_size)
			return -EINVAL;
		n = (const char *)obj + strs->sh_offset + sh->sh_name;
		if (strnlen(n, strs->sh_size - sh->sh_name) == strs->sh_size - sh->sh_name)
			return -EINVAL;
		if (!strcmp(n, name))
			found = (int)i;
	}
	if (found < 0)
		return -ENOENT;
	sh = shdr_at(obj, len, eh, (unsigned)found);
	if (sh->sh_type != SHT_PROGBITS || sh->sh_offset + sh->sh_size > len ||
	    sh->sh_size % sizeof(struct bpf_insn))
		return -EINVAL;
	size_t n = sh->sh_size / sizeof(struct bpf_insn);
	struct bpf_insn *copy = xmalloc(n ? sh->sh_size : 1);

	memcpy(copy, obj + sh->sh_offset, sh->sh_size);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *r = shdr_at(obj, len, eh, i);
		int err = 0;

		if (r->sh_info != (unsigned)found || !r->sh_size)
			continue;
		if (r->sh_type == SHT_RELA)
			err = -ENOTSUP;
		else if (r->sh_type == SHT_REL)
			err = resolve_relocs(obj, len, eh, r, (unsigned)found, copy, n, env,
					     missing);
		if (err) {
			free(copy);
			return err;
		}
	}
	*insns = copy;
	*ninsns = n;
	return 0;
}

/* Whether instruction i is a call of a function of the program (BPF_PSEUDO_CALL) or the load
 * of one's address (BPF_PSEUDO_FUNC): the instruction that function starts at, else -1. */
static long func_target(const struct bpf_insn *insns, size_t n, size_t i, bool *is_addr)
{
	const struct bpf_insn *in = &insns[i];
	long t;

	*is_addr = in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC;
	if (!*is_addr && !(in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL))
		return -1;
	t = (long)i + in->imm + 1;
	return t >= 0 && (size_t)t < n ? t : -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void cg_func_starts(const struct bpf_insn *insns, size_t n, uint32_t **offs, uint32_t *nfuncs)
{
	uint32_t *v = NULL, k = 0;
	bool callback = false, is_addr;

	*offs = NULL;
	*nfuncs = 0;
	for (size_t i = 0; i < n; i++) {
		if (func_target(insns, n, i, &is_addr) >= 0)
			callback = callback || is_addr;
	}
	if (!callback)
		return;
	v = xmalloc(sizeof(*v) * (n + 1));
	v[k++] = 0;
	for (size_t i = 0; i < n; i++) {
		long t = func_target(insns, n, i, &is_addr);

		if (t >= 0)
			v[k++] = (uint32_t)t;
	}
	qsort(v, k, sizeof(*v), cmp_u32);
	uint32_t u = 0;

	for (uint32_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*offs = v;
	*nfuncs = u;
}

/* cg_elf.c — pulls a program's instructions out of the BPF object LLVM emitted in memory. The
 * object is our own output, but it is still parsed defensively (every offset bounds-checked),
 * and any relocation against a program section is refused: generated code is meant to be
 * self-contained (maps by fd, no globals, no .rodata, no calls but helpers), so a relocation
 * means codegen produced something the kernel could not load as-is. */
#include "codegen/cg_internal.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

static const Elf64_Shdr *shdr_at(const unsigned char *obj, size_t len, const Elf64_Ehdr *eh,
				 unsigned i)
{
	size_t off = eh->e_shoff + (size_t)i * eh->e_shentsize;

	if (i >= eh->e_shnum || off + sizeof(Elf64_Shdr) > len)
		return NULL;
	return (const Elf64_Shdr *)(obj + off);
}

int cg_elf_section(const void *objv, size_t len, const char *name, const void **data,
		   size_t *size)
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
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		sh = shdr_at(obj, len, eh, i);
		if ((sh->sh_type == SHT_REL || sh->sh_type == SHT_RELA) && sh->sh_info == (unsigned)found &&
		    sh->sh_size)
			return -ENOTSUP;
	}
	sh = shdr_at(obj, len, eh, (unsigned)found);
	if (sh->sh_type != SHT_PROGBITS || sh->sh_offset + sh->sh_size > len ||
	    sh->sh_size % sizeof(struct bpf_insn))
		return -EINVAL;
	*data = obj + sh->sh_offset;
	*size = sh->sh_size;
	return 0;
}

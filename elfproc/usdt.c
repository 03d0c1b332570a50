/* usdt.c — the SystemTap SDT notes of an ELF object (`.note.stapsdt`, owner "stapsdt", type 3),
 * read with libelf's gelf_getnote. A note's descriptor is three addresses — the probe's pc, the
 * link-time address of `.stapsdt.base`, the semaphore (0: none) — then the provider, the name
 * and the argument text, each NUL-terminated. When the object was prelinked (or otherwise moved)
 * after the note was written, `.stapsdt.base`'s section address differs from the recorded one,
 * and pc and semaphore move by the same amount (SystemTap's rule); an object without the section
 * is taken as it is. File offsets come through the PT_LOAD segment holding each address: the pc
 * is the uprobe's offset, the semaphore's is the uprobe's ref_ctr_offset. Also the libraries an
 * object needs (DT_NEEDED, its run paths), which a program about to start will map. */
#include "elfproc/elfproc_internal.h"

#include <errno.h>
#include <string.h>

#define NT_STAPSDT_ 3

/* vaddr -> file offset through any PT_LOAD segment with file data there (the semaphore is in
 * a writable one, which dt_elf_vaddr_to_offset does not look at). */
static int any_seg_offset(const dt_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const dt_elf_seg *s = &e->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = vaddr - s->vaddr + s->off;
			return 0;
		}
	}
	return -ERANGE;
}

int dt_elf_usdt_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_usdt *u), void *ctx)
{
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	bool have_base = false;
	int rc = 0;

	/* .stapsdt.base's address as linked now (it may be SHT_NOBITS-free: look at headers). */
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e->elf, e->shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".stapsdt.base")) {
			base_addr = sh.sh_addr;
			have_base = true;
		}
	}
	scn = NULL;
	while (!rc && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(name = elf_strptr(e->elf, e->shstrndx, sh.sh_name)) ||
		    strcmp(name, ".note.stapsdt") || !(data = elf_getdata(scn, NULL)))
			continue;
		while (!rc && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			const char *desc = (const char *)data->d_buf + doff, *end = desc + nh.n_descsz;
			const char *owner = (const char *)data->d_buf + noff;
			uint64_t addr[3];
			dt_elf_usdt u = { 0 };

			if (nh.n_type != NT_STAPSDT_ || nh.n_namesz != sizeof("stapsdt") ||
			    memcmp(owner, "stapsdt", sizeof("stapsdt")) || nh.n_descsz < 3 * 8 + 3)
				continue;
			memcpy(addr, desc, sizeof(addr));
			u.provider = desc + sizeof(addr);
			u.name = memchr(u.provider, 0, (size_t)(end - u.provider));
			u.args = u.name ? memchr(u.name + 1, 0, (size_t)(end - u.name - 1)) : NULL;
			if (!u.args)
				continue; /* strings not terminated within the note: corrupt */
			u.name++;
			u.args++;
			if (u.args >= end || !memchr(u.args, 0, (size_t)(end - u.args)))
				continue;
			u.pc = addr[0];
			u.sema = addr[2];
			if (have_base && base_addr != addr[1]) {
				u.pc += base_addr - addr[1];
				if (u.sema)
					u.sema += base_addr - addr[1];
			}
			if (dt_elf_vaddr_to_offset(e, u.pc, &u.offset) < 0)
				continue; /* not in the object's code */
			if (u.sema && any_seg_offset(e, u.sema, &u.sema_offset) < 0)
				u.sema_offset = 0;
			rc = fn(ctx, &u);
		}
	}
	return rc;
}

int dt_elf_needed_each(dt_elf *e, int (*fn)(void *ctx, const char *name, bool runpath),
		       void *ctx)
{
	Elf_Scn *scn = NULL;
	int rc = 0;

	while (!rc && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; !rc && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn d;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH)
				continue;
			s = elf_strptr(e->elf, sh.sh_link, d.d_un.d_val);
			if (s)
				rc = fn(ctx, s, d.d_tag != DT_NEEDED);
		}
	}
	return rc;
}

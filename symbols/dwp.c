/* dwp.c — split DWARF packaged in a .dwp file (dwp / llvm-dwp: every .dwo of a program in one
 * file beside it, named after it), for the libdw of Debian 12 (0.188), which reads .dwo files
 * but not .dwp packages (elfutils 0.191 does). Written here because the library cannot: the
 * package's unit index (.debug_cu_index, DWARF 5's version 5 or GNU's version 2) is read, and
 * for the skeleton unit that asks, its unit's contributions (.debug_info.dwo, .debug_abbrev.dwo,
 * .debug_str_offsets.dwo, .debug_line.dwo, …) and the shared .debug_str.dwo are copied into a
 * small ELF image in memory that is exactly the .dwo the compiler would have written, which
 * libdw then reads as it reads any .dwo. One image per unit, made when first asked for. The
 * package and the images are elfproc's objects (its sections, compressed ones too). */
#include "symbols/symbols_internal.h"
#include "common/common.h"
#include "elfproc/elfproc.h"

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* DW_SECT_* of the two index versions, as the .dwo section each column is a part of. */
static const char *sect_name(uint32_t version, uint32_t id)
{
	static const char *const v5[] = { NULL, ".debug_info.dwo", NULL, ".debug_abbrev.dwo",
		".debug_line.dwo", ".debug_loclists.dwo", ".debug_str_offsets.dwo",
		".debug_macro.dwo", ".debug_rnglists.dwo" };
	static const char *const v2[] = { NULL, ".debug_info.dwo", ".debug_types.dwo",
		".debug_abbrev.dwo", ".debug_line.dwo", ".debug_loc.dwo",
		".debug_str_offsets.dwo", ".debug_macinfo.dwo", ".debug_macro.dwo" };

	if (version == 5 && id < DT_ARRAY_SIZE(v5))
		return v5[id];
	if (version == 2 && id < DT_ARRAY_SIZE(v2))
		return v2[id];
	return NULL;
}

struct dwp_unit {
	uint64_t id;
	dt_elf *image; /* the unit's .dwo image */
	Dwarf *dw;
};

struct dt_dwp {
	dt_elf *e;
	DT_VEC(struct dwp_unit) units;
};

struct dt_dwp *dt_dwp_open(const char *path)
{
	dt_elf *e = dt_elf_open(NULL, path);

	if (!e || !dt_elf_has_section(e, ".debug_cu_index")) {
		dt_elf_put(e);
		return NULL;
	}
	struct dt_dwp *p = xcalloc(1, sizeof(*p));
	p->e = e;
	return p;
}

static uint32_t rd32(const uint8_t *b) { uint32_t v; memcpy(&v, b, 4); return v; }
static uint64_t rd64(const uint8_t *b) { uint64_t v; memcpy(&v, b, 8); return v; }

/* The .dwo image of unit `id`: an ELF64 relocatable file with the unit's contributions as its
 * sections. NULL when the index has no such unit or is malformed. */
static void *unit_image(struct dt_dwp *p, uint64_t id, size_t *len)
{
	dt_elf_section ix = { 0 };
	dt_elf_section_get(p->e, ".debug_cu_index", &ix);
	const uint8_t *b = ix.data;
	size_t n = ix.size;

	if (n < 16)
		return NULL;
	uint32_t version = rd32(b) & 0xffff, ncols = rd32(b + 4), nunits = rd32(b + 8);
	uint32_t nslots = rd32(b + 12);
	/* Header, signatures, row indexes, column ids, then offsets and sizes (rows × cols). */
	uint64_t need = 16 + (uint64_t)nslots * 12 + (uint64_t)ncols * 4 +
			2ull * nunits * ncols * 4;
	if ((version != 5 && version != 2) || !ncols || ncols > 16 || need > n)
		return NULL;
	const uint8_t *sig = b + 16, *row = sig + (size_t)nslots * 8;
	const uint8_t *cols = row + (size_t)nslots * 4, *offs = cols + (size_t)ncols * 4;
	const uint8_t *sizes = offs + (size_t)nunits * ncols * 4;
	uint32_t r = 0;
	for (uint32_t i = 0; i < nslots && !r; i++)
		if (rd64(sig + (size_t)i * 8) == id)
			r = rd32(row + (size_t)i * 4);
	if (!r || r > nunits)
		return NULL;

	/* The sections: each column's contribution, then all of .debug_str.dwo, then names. */
	struct part { const char *name; const void *data; size_t size; } s[18];
	uint32_t ns = 0;
	for (uint32_t c = 0; c < ncols; c++) {
		const char *name = sect_name(version, rd32(cols + (size_t)c * 4));
		uint32_t off = rd32(offs + ((size_t)(r - 1) * ncols + c) * 4);
		uint32_t size = rd32(sizes + ((size_t)(r - 1) * ncols + c) * 4);
		dt_elf_section d;

		if (!name || dt_elf_section_get(p->e, name, &d) < 0 || (uint64_t)off + size > d.size)
			return NULL;
		s[ns++] = (struct part){ name, (const uint8_t *)d.data + off, size };
	}
	dt_elf_section str;
	if (dt_elf_section_get(p->e, ".debug_str.dwo", &str) == 0)
		s[ns++] = (struct part){ ".debug_str.dwo", str.data, str.size };
	char names[512];
	size_t nl = 1;
	names[0] = 0;
	uint32_t name_off[18];
	for (uint32_t i = 0; i < ns; i++) {
		name_off[i] = (uint32_t)nl;
		nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s", s[i].name) + 1;
	}
	name_off[ns] = (uint32_t)nl;
	nl += (size_t)snprintf(names + nl, sizeof(names) - nl, ".shstrtab") + 1;

	size_t size = sizeof(Elf64_Ehdr);
	for (uint32_t i = 0; i < ns; i++)
		size += s[i].size;
	size += nl;
	size = DT_ALIGN(size, 8);
	size_t shoff = size;
	uint32_t shnum = ns + 2; /* null, the sections, .shstrtab */
	size += (size_t)shnum * sizeof(Elf64_Shdr);
	uint8_t *img = xcalloc(1, size);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (uint16_t)shnum;
	eh->e_shstrndx = (uint16_t)(shnum - 1);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);
	size_t at = sizeof(Elf64_Ehdr);
	for (uint32_t i = 0; i < ns; i++) {
		memcpy(img + at, s[i].data, s[i].size);
		sh[i + 1] = (Elf64_Shdr){ .sh_name = name_off[i], .sh_type = SHT_PROGBITS,
					  .sh_offset = at, .sh_size = s[i].size, .sh_addralign = 1 };
		at += s[i].size;
	}
	memcpy(img + at, names, nl);
	sh[shnum - 1] = (Elf64_Shdr){ .sh_name = name_off[ns], .sh_type = SHT_STRTAB,
				      .sh_offset = at, .sh_size = nl, .sh_addralign = 1 };
	*len = size;
	return img;
}

int dt_dwp_unit(struct dt_dwp *p, uint64_t id, Dwarf_Die *die)
{
	struct dwp_unit *u = NULL;

	for (size_t i = 0; i < p->units.n && !u; i++)
		if (p->units.v[i].id == id)
			u = &p->units.v[i];
	if (!u) {
		struct dwp_unit nu = { .id = id };
		size_t len = 0;
		void *img = unit_image(p, id, &len);

		nu.image = img ? dt_elf_open_mem(img, len, dt_elf_path(p->e)) : NULL;
		free(img); /* the object has its own copy */
		nu.dw = nu.image ? dwarf_begin_elf(dt_elf_handle(nu.image), DWARF_C_READ, NULL)
				 : NULL;
		DT_VEC_PUSH(&p->units, nu);
		u = &p->units.v[p->units.n - 1];
	}
	if (!u->dw)
		return -ENOENT;
	Dwarf_CU *cu = NULL;
	uint8_t type;
	/* The unit's first (its only compile) unit; type units in it are left to their users. */
	while (dwarf_get_units(u->dw, cu, &cu, NULL, &type, die, NULL) == 0)
		if (type == DW_UT_split_compile || type == DW_UT_compile)
			return 0;
	return -ENOENT;
}

void dt_dwp_close(struct dt_dwp *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->units.n; i++) {
		if (p->units.v[i].dw)
			dwarf_end(p->units.v[i].dw);
		dt_elf_put(p->units.v[i].image);
	}
	free(p->units.v);
	dt_elf_put(p->e);
	free(p);
}

/* dwarf.c — user-space types from the DWARF of the binaries a program's uprobes name (libdw):
 * a function's parameters as `args` (bpftrace's `args.NAME` / `args->NAME`) and the structs,
 * unions, enums and typedefs the binary defines, for casts without a script definition. A
 * binary's DWARF is opened on the first lookup that needs it (its own .debug_info, else its
 * separate debug file through elfproc's one search). DIEs convert the way BTF types do: typedefs
 * and qualifiers resolve away, enums are integers, a pointer to a named struct points to an
 * incomplete struct of that name, filled on use. Layouts are DWARF's own (data_member_location,
 * data_bit_offset / bit_offset, byte_size), as the compiler wrote them. */
#include "ctypes/ctypes_internal.h"
#include "symbols/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A DIE converted: split units (.dwo) each have their own Dwarf, and offsets count from each
 * one's start, so the key is both. */
typedef struct die_type {
	Dwarf *dw;
	Dwarf_Off off;
	const dt_type *t;
} die_type;

struct ct_dwarf {
	char *path;
	bool opened;
	dt_sym_dwarf sd; /* the binary's DWARF or its separate debug file's (symbols' opener) */
	DT_VEC(die_type) cache; /* this arena's converted DIEs */
};

void ct_dwarf_add_binary(dt_ctypes *ct, const char *path)
{
	for (size_t i = 0; i < ct->dwarfs.n; i++)
		if (!strcmp(ct->dwarfs.v[i]->path, path))
			return;
	ct_dwarf *d = xcalloc(1, sizeof(*d));
	d->path = xstrdup(path);
	DT_VEC_PUSH(&ct->dwarfs, d);
}

void ct_dwarf_reset(dt_ctypes *ct)
{
	for (size_t i = 0; i < ct->dwarfs.n; i++)
		ct->dwarfs.v[i]->cache.n = 0;
}

void ct_dwarf_free(dt_ctypes *ct)
{
	for (size_t i = 0; i < ct->dwarfs.n; i++) {
		ct_dwarf *d = ct->dwarfs.v[i];
		dt_sym_dwarf_close(&d->sd);
		free(d->cache.v);
		free(d->path);
		free(d);
	}
	free(ct->dwarfs.v);
}

/* The binary's DWARF, opened once. */
static Dwarf *dw_of(ct_dwarf *d)
{
	if (!d->opened) {
		d->opened = true;
		dt_sym_dwarf_open(&d->sd, d->path);
	}
	return d->sd.dw;
}

/* The cached conversion of die under key off (its offset, or a shell's), or NULL. */
static const dt_type *cached(ct_dwarf *d, Dwarf_Die *die, Dwarf_Off off)
{
	Dwarf *dw = dwarf_cu_getdwarf(die->cu);

	for (size_t i = 0; i < d->cache.n; i++)
		if (d->cache.v[i].off == off && d->cache.v[i].dw == dw)
			return d->cache.v[i].t;
	return NULL;
}

static void cache(ct_dwarf *d, Dwarf_Die *die, Dwarf_Off off, const dt_type *t)
{
	die_type dt = { dwarf_cu_getdwarf(die->cu), off, t };

	DT_VEC_PUSH(&d->cache, dt);
}

/* ------------------------------------------------------------ DIE → dt_type */

static const dt_type *conv(dt_ctypes *ct, ct_dwarf *d, Dwarf_Die *die);

static const char *tag_kw(int tag)
{
	return tag == DW_TAG_union_type ? "union" : tag == DW_TAG_enumeration_type ? "enum"
										    : "struct";
}

static const char *record_name(dt_ctypes *ct, Dwarf_Die *die)
{
	const char *n = dwarf_diename(die);
	return dt_arena_printf(ct->arena, "%s %s", tag_kw(dwarf_tag(die)), n ? n : "(anonymous)");
}

static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

static uint32_t udata(Dwarf_Die *die, int name, uint32_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (!dwarf_attr_integrate(die, name, &a) || dwarf_formudata(&a, &w))
		return dflt;
	return (uint32_t)w;
}

/* The incomplete struct a pointer names: one per name and arena, shared with BTF's lookups
 * through the name (the checker fills it through dt_ctypes_lookup). */
static const dt_type *shell(dt_ctypes *ct, ct_dwarf *d, Dwarf_Die *die)
{
	const char *name = record_name(ct, die);
	const dt_type *have = cached(d, die, (Dwarf_Off)-1 - dwarf_dieoffset(die));
	if (have)
		return have;
	dt_type *s = dt_type_cstruct(ct->arena, name, dwarf_tag(die) == DW_TAG_union_type);
	cache(d, die, (Dwarf_Off)-1 - dwarf_dieoffset(die), s);
	return s;
}

static const dt_type *conv_record(dt_ctypes *ct, ct_dwarf *d, Dwarf_Die *die)
{
	dt_type *st = dt_type_cstruct(ct->arena, record_name(ct, die),
				      dwarf_tag(die) == DW_TAG_union_type);
	cache(d, die, dwarf_dieoffset(die), st);
	DT_VEC(dt_member) ms = { 0 };
	uint32_t align = 1;
	Dwarf_Die child;
	if (dwarf_child(die, &child) == 0) {
		do {
			if (dwarf_tag(&child) != DW_TAG_member)
				continue;
			Dwarf_Die mt;
			dt_member m = { 0 };
			const char *n = dwarf_diename(&child);
			m.name = dt_arena_strndup(ct->arena, n ? n : "", n ? strlen(n) : 0);
			m.type = type_of(&child, &mt) ? conv(ct, d, &mt) : dt_type_void();
			uint32_t bit_size = udata(&child, DW_AT_bit_size, 0);
			uint32_t bits;
			Dwarf_Attribute a;
			if (dwarf_attr_integrate(&child, DW_AT_data_bit_offset, &a)) {
				bits = udata(&child, DW_AT_data_bit_offset, 0);
			} else {
				bits = udata(&child, DW_AT_data_member_location, 0) * 8;
				if (bit_size && dwarf_attr_integrate(&child, DW_AT_bit_offset, &a)) {
					/* DWARF 2/3: counted from the storage unit's high bit. */
					uint32_t unit = udata(&child, DW_AT_byte_size, m.type->size) * 8;
					bits += unit - udata(&child, DW_AT_bit_offset, 0) - bit_size;
				}
			}
			m.offset = bits / 8;
			if (bit_size) {
				m.bit_off = (uint8_t)(bits % 8);
				m.bit_size = (uint8_t)bit_size;
			}
			if (m.type->align > align)
				align = m.type->align;
			DT_VEC_PUSH(&ms, m);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	st->cstruct.members = dt_arena_alloc(ct->arena, sizeof(dt_member) * (ms.n ? ms.n : 1));
	if (ms.n)
		memcpy(st->cstruct.members, ms.v, sizeof(dt_member) * ms.n);
	st->cstruct.n = (uint32_t)ms.n;
	free(ms.v);
	st->size = udata(die, DW_AT_byte_size, 0);
	st->align = align;
	st->cstruct.complete = true;
	return st;
}

static const dt_type *conv_uncached(dt_ctypes *ct, ct_dwarf *d, Dwarf_Die *die)
{
	Dwarf_Die t;
	switch (dwarf_tag(die)) {
	case DW_TAG_base_type: {
		uint32_t size = udata(die, DW_AT_byte_size, 8), enc = udata(die, DW_AT_encoding, 0);
		if (size > 8)
			return dt_type_array(ct->arena, dt_type_int(false, 1), size);
		if (enc == DW_ATE_float && (size == 4 || size == 8))
			return dt_type_float(size);
		return dt_type_int(enc == DW_ATE_signed || enc == DW_ATE_signed_char, size);
	}
	case DW_TAG_enumeration_type: {
		Dwarf_Die ut;
		bool sign = type_of(die, &ut) && udata(&ut, DW_AT_encoding, 0) == DW_ATE_signed;
		return dt_type_int(sign, udata(die, DW_AT_byte_size, 4));
	}
	case DW_TAG_pointer_type: case DW_TAG_reference_type: case DW_TAG_rvalue_reference_type: {
		if (!type_of(die, &t))
			return dt_type_ptr(ct->arena, NULL, DT_AS_NONE);
		Dwarf_Die r = t;
		/* Through typedefs and qualifiers to what is pointed at. */
		for (int g = 0; g < 32; g++) {
			int tag = dwarf_tag(&r);
			if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
			    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type)
				break;
			if (!type_of(&r, &r))
				return dt_type_ptr(ct->arena, NULL, DT_AS_NONE);
		}
		int tag = dwarf_tag(&r);
		if (tag == DW_TAG_subroutine_type)
			return dt_type_ptr(ct->arena, NULL, DT_AS_NONE);
		if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
		     tag == DW_TAG_class_type) && dwarf_diename(&r))
			return dt_type_ptr(ct->arena, shell(ct, d, &r), DT_AS_NONE);
		return dt_type_ptr(ct->arena, conv(ct, d, &r), DT_AS_NONE);
	}
	case DW_TAG_array_type: {
		const dt_type *el = type_of(die, &t) ? conv(ct, d, &t) : dt_type_int(false, 1);
		/* Each subrange is one dimension, outermost first: build from the innermost. */
		DT_VEC(uint32_t) dims = { 0 };
		Dwarf_Die sub;
		if (dwarf_child(die, &sub) == 0) {
			do {
				if (dwarf_tag(&sub) != DW_TAG_subrange_type)
					continue;
				Dwarf_Attribute a;
				uint32_t n = dwarf_attr_integrate(&sub, DW_AT_count, &a)
						     ? udata(&sub, DW_AT_count, 0)
					     : dwarf_attr_integrate(&sub, DW_AT_upper_bound, &a)
						     ? udata(&sub, DW_AT_upper_bound, 0) + 1
						     : 0;
				DT_VEC_PUSH(&dims, n);
			} while (dwarf_siblingof(&sub, &sub) == 0);
		}
		for (size_t i = dims.n; i-- > 0;)
			el = dt_type_array(ct->arena, el, dims.v[i]);
		free(dims.v);
		return el->kind == DT_T_ARRAY ? el : dt_type_array(ct->arena, el, 0);
	}
	case DW_TAG_structure_type: case DW_TAG_union_type: case DW_TAG_class_type: {
		if (dwarf_hasattr(die, DW_AT_declaration))
			return shell(ct, d, die);
		return conv_record(ct, d, die);
	}
	case DW_TAG_typedef: case DW_TAG_const_type: case DW_TAG_volatile_type:
	case DW_TAG_restrict_type: case DW_TAG_atomic_type:
		return type_of(die, &t) ? conv(ct, d, &t) : dt_type_void();
	default:
		return dt_type_void();
	}
}

static const dt_type *conv(dt_ctypes *ct, ct_dwarf *d, Dwarf_Die *die)
{
	const dt_type *t = cached(d, die, dwarf_dieoffset(die));
	if (t)
		return t;
	t = conv_uncached(ct, d, die);
	if (dwarf_tag(die) != DW_TAG_structure_type && dwarf_tag(die) != DW_TAG_union_type)
		cache(d, die, dwarf_dieoffset(die), t);
	return t;
}

/* ------------------------------------------------------------ finding DIEs */

/* Calls fn on each top-level DIE of every CU (split units' included) until it returns true. */
static bool each_top_die(dt_sym_dwarf *dw, bool (*fn)(void *ctx, Dwarf_Die *die), void *ctx,
			 bool *unsplit)
{
	Dwarf_CU *unit = NULL;
	Dwarf_Die cu, child;
	while (dt_sym_dwarf_next_unit(dw, &unit, &cu, unsplit)) {
		if (dwarf_child(&cu, &child) == 0) {
			do {
				if (fn(ctx, &child))
					return true;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
	}
	return false;
}

struct find_ctx {
	const char *name;
	int tags[2];
	Dwarf_Die found;
};

static bool match_type(void *ctxv, Dwarf_Die *die)
{
	struct find_ctx *f = ctxv;
	int tag = dwarf_tag(die);
	if (tag != f->tags[0] && tag != f->tags[1])
		return false;
	const char *n = dwarf_diename(die);
	if (!n || strcmp(n, f->name) || dwarf_hasattr(die, DW_AT_declaration))
		return false;
	f->found = *die;
	return true;
}

int ct_dwarf_lookup(dt_ctypes *ct, const char *name, const dt_type **out)
{
	struct find_ctx f = { .name = name, .tags = { DW_TAG_typedef, DW_TAG_typedef } };
	if (!strncmp(name, "struct ", 7)) {
		f.name = name + 7;
		f.tags[0] = DW_TAG_structure_type;
		f.tags[1] = DW_TAG_class_type;
	} else if (!strncmp(name, "union ", 6)) {
		f.name = name + 6;
		f.tags[0] = f.tags[1] = DW_TAG_union_type;
	} else if (!strncmp(name, "enum ", 5)) {
		f.name = name + 5;
		f.tags[0] = f.tags[1] = DW_TAG_enumeration_type;
	}
	for (size_t i = 0; i < ct->dwarfs.n; i++) {
		ct_dwarf *d = ct->dwarfs.v[i];
		if (dw_of(d) && each_top_die(&d->sd, match_type, &f, NULL)) {
			*out = conv(ct, d, &f.found);
			return 0;
		}
	}
	return -ENOENT;
}

static bool match_func(void *ctxv, Dwarf_Die *die)
{
	struct find_ctx *f = ctxv;
	if (dwarf_tag(die) != DW_TAG_subprogram || dwarf_hasattr(die, DW_AT_declaration))
		return false;
	const char *n = dwarf_diename(die);
	if (!n || strcmp(n, f->name))
		return false;
	f->found = *die;
	return true;
}

int dt_ctypes_uprobe_args(void *ctv, dt_arena *a, const char *path, const char *func,
			  const dt_type **out)
{
	dt_ctypes *ct = ctv;
	ct_set_arena(ct, a);
	ct_dwarf_add_binary(ct, path);
	ct_dwarf *d = NULL;
	for (size_t i = 0; i < ct->dwarfs.n && !d; i++)
		if (!strcmp(ct->dwarfs.v[i]->path, path))
			d = ct->dwarfs.v[i];
	if (!dw_of(d))
		return -ENODATA;
	struct find_ctx f = { .name = func };
	bool unsplit = false;
	if (!each_top_die(&d->sd, match_func, &f, &unsplit))
		return unsplit ? -ENOLINK : -ENOENT;
	/* Parameter i is member i at offset 8 * i: codegen reads it from the register the
	 * x86-64 calling convention passes it in. */
	DT_VEC(dt_member) ms = { 0 };
	Dwarf_Die child, t;
	if (dwarf_child(&f.found, &child) == 0) {
		do {
			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			const char *n = dwarf_diename(&child);
			dt_member m = { .offset = (uint32_t)(8 * ms.n) };
			m.name = dt_arena_strndup(a, n ? n : "", n ? strlen(n) : 0);
			m.type = type_of(&child, &t) ? conv(ct, d, &t) : dt_type_int(false, 8);
			DT_VEC_PUSH(&ms, m);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	dt_type *st = dt_type_cstruct(a, dt_arena_printf(a, "args of %s", func), false);
	st->cstruct.members = dt_arena_alloc(a, sizeof(dt_member) * (ms.n ? ms.n : 1));
	if (ms.n)
		memcpy(st->cstruct.members, ms.v, sizeof(dt_member) * ms.n);
	st->cstruct.n = (uint32_t)ms.n;
	st->size = (uint32_t)(8 * ms.n);
	st->align = 8;
	st->cstruct.complete = true;
	st->cstruct.print_current = true;
	free(ms.v);
	*out = st;
	return 0;
}

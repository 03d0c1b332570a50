/* params.c — the parameters of a function as its DWARF declares them, for `-lv uprobe:BIN:FUNC`:
 * one "TYPE NAME" string per formal parameter, in bpftrace's spelling ("int argc", "char** argv",
 * "struct Foo* foo1", "const char* s"). The DWARF is the binary's own or its separate debug file
 * (elfproc's one search), split units' (.dwo) included. Only names are produced here: no type layout. */
#include "symbols/symbols_internal.h"
#include "common/common.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A type name being written (cut at 255 bytes: a name that long is cut, not an error). */
struct name {
	char s[256];
	size_t n;
};

static void put(struct name *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct name *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->n >= sizeof(b->s) - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = DT_MIN(b->n + (size_t)k, sizeof(b->s) - 1);
}

/* The type a DIE refers to through DW_AT_type; false for void (no attribute). */
static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;

	return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, out);
}

/* bpftrace's rendering of a type name, appended to b. */
static void type_name(Dwarf_Die *t, struct name *b, int depth)
{
	Dwarf_Die inner;
	const char *name = dwarf_diename(t);
	bool has_inner;

	if (depth > 16) {
		put(b, "<unknown type>");
		return;
	}
	has_inner = type_of(t, &inner);
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
		put(b, "%s", name ? name : "<unknown type>");
		break;
	case DW_TAG_pointer_type:
		if (has_inner)
			type_name(&inner, b, depth + 1);
		else
			put(b, "void");
		put(b, "*");
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		put(b, "%s %s", dwarf_tag(t) == DW_TAG_structure_type ? "struct" :
					  dwarf_tag(t) == DW_TAG_union_type ? "union" : "enum",
			     name ? name : "<anonymous>");
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = dwarf_tag(t) == DW_TAG_const_type ? "const" : "volatile";

		if (!has_inner) {
			put(b, "%s void", q);
		} else if (dwarf_tag(&inner) == DW_TAG_pointer_type) {
			type_name(&inner, b, depth + 1);
			put(b, " %s", q);
		} else {
			put(b, "%s ", q);
			type_name(&inner, b, depth + 1);
		}
		break;
	}
	case DW_TAG_array_type:
		if (has_inner)
			type_name(&inner, b, depth + 1);
		put(b, "[]");
		break;
	default:
		put(b, "<unknown type>");
	}
}

/* The defining DIE of subprogram `func` among the children of a CU; 0 if found. */
static int find_subprogram(Dwarf_Die *cu, const char *func, Dwarf_Die *out)
{
	Dwarf_Die d;

	if (dwarf_child(cu, &d) != 0)
		return -ENOENT;
	do {
		const char *name;

		if (dwarf_tag(&d) != DW_TAG_subprogram || dwarf_hasattr(&d, DW_AT_declaration))
			continue;
		name = dwarf_diename(&d);
		if (name && !strcmp(name, func)) {
			*out = d;
			return 0;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return -ENOENT;
}

static int params_of(dt_sym_dwarf *dw, const char *func, char ***out, uint32_t *n)
{
	DT_VEC(char *) v = { 0 };
	Dwarf_CU *unit = NULL;
	Dwarf_Die cu;
	bool unsplit = false;

	while (dt_sym_dwarf_next_unit(dw, &unit, &cu, &unsplit)) {
		Dwarf_Die fn, p;

		if (find_subprogram(&cu, func, &fn) == 0) {
			if (dwarf_child(&fn, &p) == 0) {
				do {
					struct name b = { .n = 0 };
					Dwarf_Die t;
					const char *name = dwarf_diename(&p);

					if (dwarf_tag(&p) != DW_TAG_formal_parameter)
						continue;
					if (type_of(&p, &t))
						type_name(&t, &b, 0);
					else
						put(&b, "<unknown type>");
					put(&b, " %s", name ? name : "");
					DT_VEC_PUSH(&v, xstrdup(b.s));
				} while (dwarf_siblingof(&p, &p) == 0);
			}
			*out = v.v;
			*n = (uint32_t)v.n;
			return 0;
		}
	}
	return unsplit ? -ENOLINK : -ENOENT;
}

int dt_sym_func_params(const char *path, const char *func, char ***params, uint32_t *n)
{
	dt_sym_dwarf d;
	int rc = dt_sym_dwarf_open(&d, path);

	*params = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	rc = params_of(&d, func, params, n);
	dt_sym_dwarf_close(&d);
	return rc;
}

/* python_dwarf.c — CPython's structure offsets from the interpreter's own DWARF (libdw): for a
 * build the table of known releases does not describe (a debug build, a distribution's patched
 * layout, a release newer than the table) whose debug file is on this machine (elfproc's
 * search: build-id tree, debuglink, --debuginfo). The walker's offsets (struct dt_py_offsets)
 * are members of a few structures, named as CPython's headers name them for each layout; one
 * pass over the top-level DIEs of the units finds the structures' definitions. */
#include "unwind/unwind_internal.h"
#include "bpf-lib/dt_python.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { T_RUNTIME, T_INTERP, T_TSTATE, T_CFRAME, T_FRAME, T_CODE, T_VAR, T_BYTES, T_ASCII,
       T_COMPACT, T__COUNT };

/* The typedef names of the structures (3.10's frame is PyFrameObject). */
static const char *const type_names[T__COUNT] = {
	[T_RUNTIME] = "_PyRuntimeState", [T_INTERP] = "PyInterpreterState",
	[T_TSTATE] = "PyThreadState", [T_CFRAME] = "_PyCFrame",
	[T_FRAME] = "_PyInterpreterFrame", [T_CODE] = "PyCodeObject", [T_VAR] = "PyVarObject",
	[T_BYTES] = "PyBytesObject", [T_ASCII] = "PyASCIIObject",
	[T_COMPACT] = "PyCompactUnicodeObject",
};

/* One offset: a member path ("a.b") of a structure; size_of: the structure's size instead. */
struct field {
	size_t at;          /* offsetof(struct dt_py_offsets, …) */
	int type;
	const char *path;
	bool size_of;
};

#define F(member, t, p) { offsetof(struct dt_py_offsets, member), t, p, false }
#define COMMON_FIELDS                                                                      \
	F(runtime_interp_head, T_RUNTIME, "interpreters.head"),                            \
	F(interp_next, T_INTERP, "next"), F(tstate_next, T_TSTATE, "next"),                \
	F(tstate_thread_id, T_TSTATE, "thread_id"),                                        \
	F(code_firstlineno, T_CODE, "co_firstlineno"), F(code_filename, T_CODE, "co_filename"), \
	F(code_name, T_CODE, "co_name"), F(code_linetable, T_CODE, "co_linetable"),        \
	F(bytes_size, T_VAR, "ob_size"), F(bytes_data, T_BYTES, "ob_sval"),                \
	F(str_length, T_ASCII, "length"), F(str_state, T_ASCII, "state"),                  \
	{ offsetof(struct dt_py_offsets, str_ascii_data), T_ASCII, NULL, true },           \
	{ offsetof(struct dt_py_offsets, str_compact_data), T_COMPACT, NULL, true }

/* Besides these, frame_entry: f_lasti (3.10, unused), is_entry (3.11) or owner (3.12+). */
static const struct field fields_310[] = {
	COMMON_FIELDS,
	F(interp_threads_head, T_INTERP, "tstate_head"), F(tstate_cframe, T_TSTATE, "frame"),
	F(frame_code, T_FRAME, "f_code"), F(frame_previous, T_FRAME, "f_back"),
	F(frame_instr, T_FRAME, "f_lasti"),
};
static const struct field fields_311_312[] = {
	COMMON_FIELDS,
	F(interp_threads_head, T_INTERP, "threads.head"), F(tstate_cframe, T_TSTATE, "cframe"),
	F(cframe_current_frame, T_CFRAME, "current_frame"), F(frame_code, T_FRAME, "f_code"),
	F(frame_previous, T_FRAME, "previous"), F(frame_instr, T_FRAME, "prev_instr"),
	F(code_adaptive, T_CODE, "co_code_adaptive"),
};
static const struct field fields_313[] = {
	COMMON_FIELDS,
	F(interp_threads_head, T_INTERP, "threads.head"),
	F(tstate_cframe, T_TSTATE, "current_frame"), F(frame_code, T_FRAME, "f_executable"),
	F(frame_previous, T_FRAME, "previous"), F(frame_instr, T_FRAME, "instr_ptr"),
	F(code_adaptive, T_CODE, "co_code_adaptive"),
};
#undef F

/* The structure a type DIE names, through typedefs and qualifiers; false if it is only
 * declared here. */
static bool struct_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die d = *die;

	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&d);

		if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
			*out = d;
			return !dwarf_hasattr(&d, DW_AT_declaration);
		}
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type)
			return false;
		if (!dwarf_attr(&d, DW_AT_type, &a) || !dwarf_formref_die(&a, &d))
			return false;
	}
	return false;
}

/* The offset of member `name` (length n) of structure s, looking into unnamed members too;
 * *type its type's DIE. */
static bool member(Dwarf_Die *s, const char *name, size_t n, Dwarf_Word *off, Dwarf_Die *type)
{
	Dwarf_Die m, inner;
	Dwarf_Attribute a;

	if (dwarf_child(s, &m) != 0)
		return false;
	do {
		const char *mn = dwarf_diename(&m);
		Dwarf_Word here = 0, sub;

		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (dwarf_hasattr(&m, DW_AT_data_member_location) &&
		    (!dwarf_attr(&m, DW_AT_data_member_location, &a) ||
		     dwarf_formudata(&a, &here) != 0))
			continue; /* a location expression: not in these structures */
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, type))
			continue;
		if (mn && strlen(mn) == n && !strncmp(mn, name, n)) {
			*off = here;
			return true;
		}
		if (!mn && struct_of(type, &inner) && member(&inner, name, n, &sub, type)) {
			*off = here + sub;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/* The offset of the member path "a.b.c" of structure s. */
static bool member_path(Dwarf_Die *s, const char *path, Dwarf_Word *off)
{
	Dwarf_Die cur = *s, type;
	Dwarf_Word total = 0, o;

	for (;;) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);

		if (!member(&cur, path, n, &o, &type))
			return false;
		total += o;
		if (!dot)
			break;
		if (!struct_of(&type, &cur))
			return false;
		path = dot + 1;
	}
	*off = total;
	return true;
}

int dt_py_dwarf_offsets(Elf *elf, int minor, struct dt_py_offsets *out, char *missing,
			size_t mn)
{
	const struct field *fs;
	struct field entry = { offsetof(struct dt_py_offsets, frame_entry), T_FRAME, NULL, false };
	size_t nfs, nfound = 0;
	Dwarf_Die types[T__COUNT];
	bool found[T__COUNT] = {0}, need[T__COUNT] = {0};
	struct dt_py_offsets o = {0};
	Dwarf_Off cuoff = 0, next;
	size_t hsize, nneed = 0;
	Dwarf *dw;
	int ret = 0;

	missing[0] = '\0';
	switch (minor) {
	case 10: fs = fields_310; nfs = DT_ARRAY_SIZE(fields_310); o.layout = DT_PY_LAYOUT_310;
		break;
	case 11: case 12:
		fs = fields_311_312;
		nfs = DT_ARRAY_SIZE(fields_311_312);
		o.layout = minor == 11 ? DT_PY_LAYOUT_311 : DT_PY_LAYOUT_312;
		break;
	default:
		if (minor < 13)
			return -EOPNOTSUPP;
		fs = fields_313;
		nfs = DT_ARRAY_SIZE(fields_313);
		o.layout = DT_PY_LAYOUT_313;
		break;
	}
	entry.path = minor == 10 ? "f_lasti" : minor == 11 ? "is_entry" : "owner";
	if (minor >= 12)
		o.owner_cstack = 3; /* FRAME_OWNED_BY_CSTACK */
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -ENODATA;
	for (size_t i = 0; i < nfs; i++)
		if (!need[fs[i].type]) {
			need[fs[i].type] = true;
			nneed++;
		}
	/* 3.10's frames are PyFrameObject. */
	const char *frame_name = minor == 10 ? "PyFrameObject" : type_names[T_FRAME];

	while (nfound < nneed && dwarf_nextcu(dw, cuoff, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d, s;

		if (dwarf_offdie(dw, cuoff + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				const char *n;

				if (dwarf_tag(&d) != DW_TAG_typedef || !(n = dwarf_diename(&d)))
					continue;
				for (int t = 0; t < T__COUNT; t++) {
					const char *want = t == T_FRAME ? frame_name : type_names[t];

					if (need[t] && !found[t] && !strcmp(n, want) &&
					    struct_of(&d, &s)) {
						types[t] = s;
						found[t] = true;
						nfound++;
					}
				}
			} while (nfound < nneed && dwarf_siblingof(&d, &d) == 0);
		}
		cuoff = next;
	}
	for (size_t i = 0; i <= nfs && ret == 0; i++) {
		const struct field *f = i < nfs ? &fs[i] : &entry;
		Dwarf_Word off = 0;
		Dwarf_Attribute a;

		const char *tn = f->type == T_FRAME ? frame_name : type_names[f->type];

		if (!found[f->type]) {
			snprintf(missing, mn, "%s", tn);
			ret = -ENOENT;
		} else if (f->size_of ? !dwarf_attr(&types[f->type], DW_AT_byte_size, &a) ||
						dwarf_formudata(&a, &off) != 0 :
					!member_path(&types[f->type], f->path, &off)) {
			snprintf(missing, mn, "%s%s%s", tn, f->path ? "." : "", f->path ? f->path : "");
			ret = -ENOENT;
		} else if (off > UINT16_MAX - 16) {
			snprintf(missing, mn, "%s.%s", tn, f->path);
			ret = -EOVERFLOW;
		} else {
			memcpy((char *)&o + f->at, &(uint16_t){(uint16_t)off}, sizeof(uint16_t));
		}
	}
	dwarf_end(dw);
	if (ret == 0)
		*out = o;
	return ret;
}

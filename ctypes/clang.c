/* clang.c — a script's C definitions through libclang's C API: the definitions (and --include
 * files) become one in-memory translation unit (CXUnsavedFile) that clang preprocesses and
 * parses for real; the layouts — offsets, sizes, alignment, bitfields, anonymous members,
 * arrays, flexible arrays — are clang's (clang_Cursor_getOffsetOfField, clang_Type_getSizeOf),
 * never computed here. Each definition is preceded by a `#line` and padded to its column, so
 * clang's locations are the script's own and its first error is reported there. A struct the
 * definitions use without defining (`struct foo { struct task_struct t; }`) is supplied from
 * BTF as C (libbpf's btf_dump) and the unit parsed again.
 *
 * libclang is loaded with dlopen on the first program that has C definitions: linking it would
 * cost every start-up its relocations, and most one-liners define nothing. Types are converted
 * on lookup, by name, so a header's thousands of declarations cost only what a script uses. */
#include "ctypes/ctypes_internal.h"

#include <clang-c/Index.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* The libclang functions used, looked up once. */
#define CL_FUNCS(X)                                                                              \
	X(clang_createIndex) X(clang_disposeIndex) X(clang_parseTranslationUnit2)                  \
	X(clang_disposeTranslationUnit) X(clang_getNumDiagnostics) X(clang_getDiagnostic)           \
	X(clang_disposeDiagnostic) X(clang_getDiagnosticSeverity) X(clang_getDiagnosticLocation)   \
	X(clang_getDiagnosticSpelling) X(clang_getPresumedLocation) X(clang_getCString)            \
	X(clang_disposeString) X(clang_getTranslationUnitCursor) X(clang_visitChildren)            \
	X(clang_getCursorKind) X(clang_getCursorSpelling) X(clang_getCursorType)                   \
	X(clang_getCanonicalType) X(clang_Type_getSizeOf) X(clang_Type_getAlignOf)                 \
	X(clang_Type_visitFields) X(clang_Cursor_getOffsetOfField) X(clang_Cursor_isBitField)      \
	X(clang_getFieldDeclBitWidth) X(clang_getPointeeType) X(clang_getArrayElementType)         \
	X(clang_getArraySize) X(clang_getTypeDeclaration) X(clang_isCursorDefinition)              \
	X(clang_getCursorDefinition) X(clang_Cursor_isAnonymous) X(clang_equalCursors)             \
	X(clang_Cursor_isNull) X(clang_getEnumDeclIntegerType) X(clang_getTypedefDeclUnderlyingType) \
	X(clang_getEnumConstantDeclValue) X(clang_getCursorLinkage) X(clang_Cursor_getNumArguments)  \
	X(clang_Cursor_getArgument) X(clang_getCursorResultType) X(clang_getCursorLocation)         \
	X(clang_Location_isFromMainFile) X(clang_Cursor_isVariadic)

typedef struct cl_api {
#define X(f) __typeof__(&f) f;
	CL_FUNCS(X)
#undef X
} cl_api;

typedef struct named {
	char *name;     /* "struct foo", "union u", "enum e", "my_t" */
	CXCursor c;
} named;

typedef struct converted {
	CXCursor c;     /* a record's definition */
	const dt_type *t;
} converted;

struct ct_clang {
	void *lib;
	cl_api f;
	int load_err;
	CXIndex idx;
	CXTranslationUnit tu;
	DT_VEC(named) names;
	DT_VEC(converted) records;
	DT_VEC(named) shells_by_name; /* .c unused: incomplete structs pointers name */
	DT_VEC(dt_type *) shells;
	char *text;          /* the unit's text, for evaluating constants in it */
	size_t len;
	const dt_source *src; /* the program's, for its imported C files (stdlib texts) */
	DT_VEC(CXTranslationUnit) bpf_tus; /* one per imported .bpf.c */
	DT_VEC(dt_extern_fn *) fns;        /* their functions, converted on first lookup */
	DT_VEC(CXCursor) fn_cursors;       /* fns' definitions, by index */
	struct kdirs {
		char *src, *build; /* the kernel's pristine and generated headers */
	} kd;
	bool kd_done;
};

/* The kernel's name of this architecture, as in its arch/ directory. */
#if defined(__x86_64__) || defined(__i386__)
#define KARCH "x86"
#elif defined(__aarch64__)
#define KARCH "arm64"
#elif defined(__s390x__)
#define KARCH "s390"
#elif defined(__powerpc__)
#define KARCH "powerpc"
#else
#error "the kernel's arch/ name of this architecture is unknown"
#endif

static const char *const lib_names[] = {
	"libclang-14.so.1", "libclang-14.so.13", "libclang.so.1", "libclang-14.so",
	DT_LIBCLANG_PATH, NULL,
};

static int load(dt_ctypes *ct)
{
	if (!ct->cl)
		ct->cl = xcalloc(1, sizeof(*ct->cl));
	ct_clang *cl = ct->cl;
	if (cl->lib || cl->load_err)
		return cl->load_err;
	for (const char *const *n = lib_names; *n && !cl->lib; n++)
		cl->lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
	if (!cl->lib) {
		cl->load_err = -ENOENT;
		return cl->load_err;
	}
#define X(fn)                                                                                   \
	if (!(cl->f.fn = (__typeof__(&fn))dlsym(cl->lib, #fn)))                                  \
		cl->load_err = -ENOSYS;
	CL_FUNCS(X)
#undef X
	if (!cl->load_err)
		cl->idx = cl->f.clang_createIndex(0, 0);
	return cl->load_err;
}

void ct_clang_reset(dt_ctypes *ct)
{
	ct_clang *cl = ct->cl;
	if (!cl)
		return;
	if (cl->tu)
		cl->f.clang_disposeTranslationUnit(cl->tu);
	cl->tu = NULL;
	free(cl->text);
	cl->text = NULL;
	cl->len = 0;
	for (size_t i = 0; i < cl->bpf_tus.n; i++)
		cl->f.clang_disposeTranslationUnit(cl->bpf_tus.v[i]);
	cl->bpf_tus.n = cl->fns.n = cl->fn_cursors.n = 0;
	cl->src = NULL;
	for (size_t i = 0; i < cl->names.n; i++)
		free(cl->names.v[i].name);
	for (size_t i = 0; i < cl->shells_by_name.n; i++)
		free(cl->shells_by_name.v[i].name);
	cl->names.n = cl->records.n = cl->shells_by_name.n = cl->shells.n = 0;
}

void ct_clang_free(dt_ctypes *ct)
{
	ct_clang *cl = ct->cl;
	if (!cl)
		return;
	ct_clang_reset(ct);
	if (cl->idx)
		cl->f.clang_disposeIndex(cl->idx);
	free(cl->names.v);
	free(cl->records.v);
	free(cl->shells_by_name.v);
	free(cl->shells.v);
	free(cl->bpf_tus.v);
	free(cl->fns.v);
	free(cl->fn_cursors.v);
	free(cl->kd.src);
	free(cl->kd.build);
	if (cl->lib)
		dlclose(cl->lib);
	free(cl);
	ct->cl = NULL;
}

/* ------------------------------------------------------------ CXType → dt_type */

static char *str_of(ct_clang *cl, CXString s)
{
	const char *c = cl->f.clang_getCString(s);
	char *r = xstrdup(c ? c : "");
	cl->f.clang_disposeString(s);
	return r;
}

/* "struct foo" / "union u" for a record declaration, "struct (anonymous)" without a name. */
static const char *record_name(dt_ctypes *ct, CXCursor c)
{
	ct_clang *cl = ct->cl;
	bool is_union = cl->f.clang_getCursorKind(c) == CXCursor_UnionDecl;
	char *n = str_of(cl, cl->f.clang_getCursorSpelling(c));
	const char *r = !*n || cl->f.clang_Cursor_isAnonymous(c) || strchr(n, ' ')
				? dt_arena_printf(ct->arena, "%s (anonymous)", is_union ? "union" : "struct")
				: dt_arena_printf(ct->arena, "%s %s", is_union ? "union" : "struct", n);
	free(n);
	return r;
}

static const dt_type *conv(dt_ctypes *ct, CXType t);

struct enum_walk {
	dt_ctypes *ct;
	DT_VEC(const char *) names;
	DT_VEC(int64_t) values;
};

static enum CXChildVisitResult enumerator(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	struct enum_walk *w = data;
	ct_clang *cl = w->ct->cl;
	if (cl->f.clang_getCursorKind(c) != CXCursor_EnumConstantDecl)
		return CXChildVisit_Continue;
	char *n = str_of(cl, cl->f.clang_getCursorSpelling(c));
	DT_VEC_PUSH(&w->names, dt_arena_strndup(w->ct->arena, n, strlen(n)));
	DT_VEC_PUSH(&w->values, (int64_t)cl->f.clang_getEnumConstantDeclValue(c));
	free(n);
	return CXChildVisit_Continue;
}

/* The enumerators of enum declaration `decl`, made in ct->arena. An anonymous enum is named
 * after its first enumerator ("enum <anonymous ONE>"), which no other enum can declare. */
static const dt_enum *enum_of(dt_ctypes *ct, CXCursor decl)
{
	ct_clang *cl = ct->cl;
	struct enum_walk w = { .ct = ct };
	cl->f.clang_visitChildren(decl, enumerator, &w);
	dt_enum *e = dt_arena_alloc(ct->arena, sizeof(*e));
	const char **names = dt_arena_alloc(ct->arena, sizeof(char *) * (w.names.n + 1));
	int64_t *values = dt_arena_alloc(ct->arena, sizeof(int64_t) * (w.names.n + 1));
	for (size_t i = 0; i < w.names.n; i++) {
		names[i] = w.names.v[i];
		values[i] = w.values.v[i];
	}
	e->n = (uint32_t)w.names.n;
	e->names = names;
	e->values = values;
	char *n = str_of(cl, cl->f.clang_getCursorSpelling(decl));
	e->name = *n && !strchr(n, ' ') && !cl->f.clang_Cursor_isAnonymous(decl)
			  ? dt_arena_printf(ct->arena, "enum %s", n)
			  : dt_arena_printf(ct->arena, "enum <anonymous %s>", e->n ? names[0] : "");
	free(n);
	free(w.names.v);
	free(w.values.v);
	return e;
}

struct fields_ctx {
	dt_ctypes *ct;
	DT_VEC(dt_member) m;
};

static enum CXVisitorResult field(CXCursor c, CXClientData data)
{
	struct fields_ctx *fc = data;
	ct_clang *cl = fc->ct->cl;
	dt_member m = { 0 };
	long long bits = cl->f.clang_Cursor_getOffsetOfField(c);
	char *name = str_of(cl, cl->f.clang_getCursorSpelling(c));
	m.name = dt_arena_strndup(fc->ct->arena, name, strlen(name));
	free(name);
	m.type = conv(fc->ct, cl->f.clang_getCursorType(c));
	if (bits < 0)
		bits = 0;
	m.offset = (uint32_t)(bits / 8);
	if (cl->f.clang_Cursor_isBitField(c)) {
		m.bit_off = (uint8_t)(bits % 8);
		m.bit_size = (uint8_t)cl->f.clang_getFieldDeclBitWidth(c);
	}
	DT_VEC_PUSH(&fc->m, m);
	return CXVisit_Continue;
}

static const dt_type *shell(dt_ctypes *ct, const char *name, bool is_union)
{
	ct_clang *cl = ct->cl;
	for (size_t i = 0; i < cl->shells_by_name.n; i++)
		if (!strcmp(cl->shells_by_name.v[i].name, name))
			return cl->shells.v[i];
	named n = { .name = xstrdup(name) };
	dt_type *s = dt_type_cstruct(ct->arena, dt_arena_strndup(ct->arena, name, strlen(name)),
				     is_union);
	DT_VEC_PUSH(&cl->shells_by_name, n);
	DT_VEC_PUSH(&cl->shells, s);
	return s;
}

static const dt_type *conv_record(dt_ctypes *ct, CXType t)
{
	ct_clang *cl = ct->cl;
	CXCursor decl = cl->f.clang_getTypeDeclaration(t);
	CXCursor def = cl->f.clang_getCursorDefinition(decl);
	const char *name = record_name(ct, decl);
	bool is_union = cl->f.clang_getCursorKind(decl) == CXCursor_UnionDecl;
	if (cl->f.clang_Cursor_isNull(def))
		return shell(ct, name, is_union); /* declared, never defined here: BTF may know it */
	for (size_t i = 0; i < cl->records.n; i++)
		if (cl->f.clang_equalCursors(cl->records.v[i].c, def))
			return cl->records.v[i].t;
	dt_type *st = dt_type_cstruct(ct->arena, name, is_union);
	converted cv = { .c = def, .t = st };
	DT_VEC_PUSH(&cl->records, cv);
	struct fields_ctx fc = { .ct = ct };
	CXType dt = cl->f.clang_getCursorType(def);
	cl->f.clang_Type_visitFields(dt, field, &fc);
	st->cstruct.members = dt_arena_alloc(ct->arena, sizeof(dt_member) * (fc.m.n ? fc.m.n : 1));
	if (fc.m.n)
		memcpy(st->cstruct.members, fc.m.v, sizeof(dt_member) * fc.m.n);
	st->cstruct.n = (uint32_t)fc.m.n;
	free(fc.m.v);
	long long size = cl->f.clang_Type_getSizeOf(dt), align = cl->f.clang_Type_getAlignOf(dt);
	st->size = size > 0 ? (uint32_t)size : 0;
	st->align = align > 0 ? (uint32_t)align : 1;
	st->cstruct.complete = true;
	return st;
}

static const dt_type *conv(dt_ctypes *ct, CXType t)
{
	ct_clang *cl = ct->cl;
	t = cl->f.clang_getCanonicalType(t);
	long long size = cl->f.clang_Type_getSizeOf(t);
	switch (t.kind) {
	case CXType_Void:
		return dt_type_void();
	case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_UShort:
	case CXType_UInt: case CXType_ULong: case CXType_ULongLong:
		return dt_type_int(false, (uint32_t)size);
	case CXType_Char_S: case CXType_SChar: case CXType_Short: case CXType_Int:
	case CXType_Long: case CXType_LongLong: case CXType_WChar: case CXType_Char16:
	case CXType_Char32:
		return dt_type_int(true, (uint32_t)size);
	case CXType_Enum: {
		CXType it = cl->f.clang_getEnumDeclIntegerType(cl->f.clang_getTypeDeclaration(t));
		it = cl->f.clang_getCanonicalType(it);
		bool sign = it.kind == CXType_Int || it.kind == CXType_Long ||
			    it.kind == CXType_LongLong || it.kind == CXType_Short ||
			    it.kind == CXType_SChar || it.kind == CXType_Char_S;
		return dt_type_int_enum(ct->arena, sign, (uint32_t)size,
					enum_of(ct, cl->f.clang_getTypeDeclaration(t)));
	}
	case CXType_Pointer: {
		CXType to = cl->f.clang_getCanonicalType(cl->f.clang_getPointeeType(t));
		if (to.kind == CXType_FunctionProto || to.kind == CXType_FunctionNoProto)
			return dt_type_ptr(ct->arena, NULL, DT_AS_NONE);
		if (to.kind == CXType_Record) {
			/* A named struct behind a pointer is looked into only on use (and may be
			 * the struct itself). */
			CXCursor decl = cl->f.clang_getTypeDeclaration(to);
			const char *name = record_name(ct, decl);
			if (!strstr(name, "(anonymous)"))
				return dt_type_ptr(ct->arena,
						   shell(ct, name, cl->f.clang_getCursorKind(decl) ==
									   CXCursor_UnionDecl),
						   DT_AS_NONE);
		}
		return dt_type_ptr(ct->arena, conv(ct, to), DT_AS_NONE);
	}
	case CXType_ConstantArray: {
		const dt_type *el = conv(ct, cl->f.clang_getArrayElementType(t));
		return dt_type_array(ct->arena, el, (uint32_t)cl->f.clang_getArraySize(t));
	}
	case CXType_IncompleteArray: /* a flexible array member: no elements of its own */
		return dt_type_array(ct->arena, conv(ct, cl->f.clang_getArrayElementType(t)), 0);
	case CXType_Record:
		return conv_record(ct, t);
	case CXType_Float: case CXType_Double:
		if (size == 4 || size == 8)
			return dt_type_float((uint32_t)size);
		/* fall through */
	default:
		/* Wider floating point and the rest: their bytes, as an unsigned integer when
		 * they fit. */
		if (size > 0 && size <= 8)
			return dt_type_int(false, (uint32_t)size);
		return dt_type_array(ct->arena, dt_type_int(false, 1), size > 0 ? (uint32_t)size : 0);
	}
}

/* ------------------------------------------------------------ the translation unit */

static enum CXChildVisitResult index_decl(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	dt_ctypes *ct = data;
	ct_clang *cl = ct->cl;
	enum CXCursorKind k = cl->f.clang_getCursorKind(c);
	const char *kw = k == CXCursor_StructDecl ? "struct " : k == CXCursor_UnionDecl ? "union "
			 : k == CXCursor_EnumDecl ? "enum " : k == CXCursor_TypedefDecl ? "" : NULL;
	if (!kw || (*kw && k != CXCursor_EnumDecl && !cl->f.clang_isCursorDefinition(c)))
		return CXChildVisit_Continue;
	char *n = str_of(cl, cl->f.clang_getCursorSpelling(c));
	if (*n && !strchr(n, ' ')) {
		named e = { .name = xasprintf("%s%s", kw, n), .c = c };
		DT_VEC_PUSH(&cl->names, e);
	}
	free(n);
	return CXChildVisit_Continue;
}

/* index_decl for the declarations of an imported .bpf.c itself. */
static enum CXChildVisitResult index_main_decl(CXCursor c, CXCursor parent, CXClientData data)
{
	dt_ctypes *ct = data;
	ct_clang *cl = ct->cl;
	if (!cl->f.clang_Location_isFromMainFile(cl->f.clang_getCursorLocation(c)))
		return CXChildVisit_Continue;
	return index_decl(c, parent, data);
}

int ct_clang_lookup(dt_ctypes *ct, const char *name, const dt_type **out)
{
	ct_clang *cl = ct->cl;
	if (!cl || !cl->names.n)
		return -ENOENT;
	/* The last declaration of a name is the one in force. */
	for (size_t i = cl->names.n; i-- > 0;) {
		if (strcmp(cl->names.v[i].name, name))
			continue;
		CXCursor c = cl->names.v[i].c;
		CXType t = cl->f.clang_getCursorKind(c) == CXCursor_TypedefDecl
				   ? cl->f.clang_getTypedefDeclUnderlyingType(c)
				   : cl->f.clang_getCursorType(c);
		*out = conv(ct, t);
		return 0;
	}
	return -ENOENT;
}

/* Integer names bpftrace scripts use in definitions without an #include: the stdint ones, with
 * glibc's underlying types so that <stdint.h> included later redefines them compatibly. */
static const char prelude[] =
	"typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
	"typedef long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
	"typedef unsigned int uint32_t; typedef unsigned long uint64_t;\n"
	"typedef unsigned long size_t;\n";
/* The names that glibc's <stdint.h> and the kernel's <linux/types.h> define alike, for the unit
 * parsed with the kernel's headers: their 64-bit ones differ (long, long long), so a script that
 * uses (u)int64_t without either header gets it from BTF (kernel_types). */
static const char prelude_kernel[] =
	"typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
	"typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
	"typedef unsigned int uint32_t; typedef unsigned long size_t;\n";

#define CL_FILE "/dwarftrace/definitions.c"
/* Where the standard library's files (dt_source_cimport.text) appear to clang: "stdlib/x.h"
 * is /dwarftrace/stdlib/x.h, an unsaved file. */
#define CL_STDLIB "/dwarftrace/"

/* The unsaved files clang reads: `main` (named name, len bytes; none when NULL) and the
 * standard library's files the program imports. */
static struct CXUnsavedFile *unsaved_files(const dt_source *src, const char *name,
					   const char *main, size_t len, unsigned *n, char ***names)
{
	struct CXUnsavedFile *uf = xcalloc(1 + (src ? src->ncimports : 0), sizeof(*uf));
	*names = xcalloc(1 + (src ? src->ncimports : 0), sizeof(char *));
	*n = 0;
	if (main) /* NULL: no main file of its own (an imported .bpf.c on disk) */
		uf[(*n)++] = (struct CXUnsavedFile){ .Filename = name, .Contents = main,
						     .Length = (unsigned long)len };
	for (uint32_t i = 0; src && i < src->ncimports; i++) {
		const dt_source_cimport *c = &src->cimports[i];
		if (c->path)
			continue;
		(*names)[*n] = xasprintf(CL_STDLIB "%s", c->name);
		uf[*n] = (struct CXUnsavedFile){ .Filename = (*names)[*n], .Contents = c->text,
						 .Length = (unsigned long)c->len };
		(*n)++;
	}
	return uf;
}

static void unsaved_free(struct CXUnsavedFile *uf, unsigned n, char **names)
{
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(uf);
}

/* 1-based line of byte `off` of the source. */
static unsigned line_of(const dt_source *src, uint32_t off)
{
	unsigned line = 1;
	for (uint32_t i = 0; i < off && i < src->len; i++)
		line += src->text[i] == '\n';
	return line;
}

static uint32_t col_of(const dt_source *src, uint32_t off)
{
	uint32_t c = 0;
	while (c < off && src->text[off - c - 1] != '\n')
		c++;
	return c;
}

static uint32_t offset_of(const dt_source *src, unsigned line, unsigned col)
{
	uint32_t i = 0;
	for (unsigned l = 1; l < line && i < src->len; i++)
		l += src->text[i] == '\n';
	while (col > 1 && i < src->len && src->text[i] != '\n') {
		i++;
		col--;
	}
	return i;
}

/* The kernel's headers, as bpftrace finds them: $BPFTRACE_KERNEL_SOURCE (and
 * $BPFTRACE_KERNEL_BUILD, else the same), else /lib/modules/$(uname -r)/source and build (either
 * one standing for both when the other is missing). Resolved once; NULL when there are none. */
static const struct kdirs *kernel_dirs(dt_ctypes *ct)
{
	ct_clang *cl = ct->cl;
	if (cl->kd_done)
		return cl->kd.src ? &cl->kd : NULL;
	cl->kd_done = true;
	const char *src = getenv("BPFTRACE_KERNEL_SOURCE");
	if (src && *src) {
		const char *build = getenv("BPFTRACE_KERNEL_BUILD");
		cl->kd.src = xstrdup(src);
		cl->kd.build = xstrdup(build && *build ? build : src);
		return &cl->kd;
	}
	struct utsname u;
	if (uname(&u))
		return NULL;
	char s[600], b[600];
	struct stat st;
	snprintf(s, sizeof(s), "/lib/modules/%s/source", u.release);
	snprintf(b, sizeof(b), "/lib/modules/%s/build", u.release);
	bool hs = stat(s, &st) == 0 && S_ISDIR(st.st_mode);
	bool hb = stat(b, &st) == 0 && S_ISDIR(st.st_mode);
	if (!hs && !hb)
		return NULL;
	cl->kd.src = xstrdup(hs ? s : b);
	cl->kd.build = xstrdup(hb ? b : s);
	return &cl->kd;
}

/* The unit's text: prelude, kernel types from BTF, --include files, then each definition at
 * its own line and column. */
static char *unit_text(dt_ctypes *ct, const dt_program *p, const char *kernel, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	fputs(kernel_dirs(ct) ? prelude_kernel : prelude, f);
	if (kernel)
		fputs(kernel, f);
	for (size_t i = 0; i < ct->includes.n; i++)
		fprintf(f, "#include \"%s\"\n", ct->includes.v[i]);
	const dt_source *src = p->src;
	/* Imported headers: their declarations and macros are the script's. */
	for (uint32_t i = 0; i < src->ncimports; i++) {
		const dt_source_cimport *c = &src->cimports[i];
		if (c->kind == DT_CIMPORT_HEADER)
			fprintf(f, "#include \"%s%s\"\n", c->path ? "" : CL_STDLIB,
				c->path ? c->path : c->name);
	}
	for (uint32_t i = 0; i < p->ncdecls; i++) {
		dt_span s = p->cdecls[i];
		fprintf(f, "#line %u \"%s\"\n%*s%.*s", line_of(src, s.off), dt_source_name_at(src, s.off),
			(int)col_of(src, s.off), "", (int)s.len, src->text + s.off);
		/* bpftrace lets `struct A { … }` (and `… } __attribute__((packed))`) end without
		 * its ';'. */
		fputs(src->text[s.off] != '#' && src->text[s.off + s.len - 1] != ';' ? ";\n" : "\n", f);
	}
	fclose(f);
	return buf;
}

static int parse_to(dt_ctypes *ct, const char *text, size_t len, CXTranslationUnit *tu)
{
	ct_clang *cl = ct->cl;
	DT_VEC(const char *) args = { 0 };
	DT_VEC_PUSH(&args, "-x");
	DT_VEC_PUSH(&args, "c");
	DT_VEC_PUSH(&args, "-std=gnu11");
	DT_VEC_PUSH(&args, "-Wno-everything");
	for (size_t i = 0; i < ct->incdirs.n; i++) {
		DT_VEC_PUSH(&args, "-I");
		DT_VEC_PUSH(&args, ct->incdirs.v[i]);
	}
	/* The kernel's headers, with the flags bpftrace gives them (the kernel's Makefile's
	 * LINUXINCLUDE and USERINCLUDE): -I is searched before -isystem, so <linux/sched.h> is the
	 * kernel's own, with what uapi's lacks (TASK_RUNNING). */
	const struct kdirs *kd = kernel_dirs(ct);
	DT_VEC(char *) owned = { 0 };
	if (kd) {
		static const struct {
			bool build;
			const char *sub;
		} kinc[] = {
			{ false, "arch/" KARCH "/include" },
			{ true, "arch/" KARCH "/include/generated" },
			{ false, "include" },
			{ true, "include" },
			{ false, "arch/" KARCH "/include/uapi" },
			{ true, "arch/" KARCH "/include/generated/uapi" },
			{ false, "include/uapi" },
			{ true, "include/generated/uapi" },
		};
		for (size_t i = 0; i < sizeof(kinc) / sizeof(kinc[0]); i++) {
			DT_VEC_PUSH(&args, "-I");
			DT_VEC_PUSH(&owned, xasprintf("%s/%s", kinc[i].build ? kd->build : kd->src,
						      kinc[i].sub));
			DT_VEC_PUSH(&args, owned.v[owned.n - 1]);
		}
		DT_VEC_PUSH(&args, "-include");
		DT_VEC_PUSH(&owned, xasprintf("%s/include/linux/kconfig.h", kd->src));
		DT_VEC_PUSH(&args, owned.v[owned.n - 1]);
		static const char *const kdefs[] = {
			"-D__KERNEL__", "-D__BPF_TRACING__", "-D__HAVE_BUILTIN_BSWAP16__",
			"-D__HAVE_BUILTIN_BSWAP32__", "-D__HAVE_BUILTIN_BSWAP64__",
			"-DKBUILD_MODNAME=\"bpftrace\"",
		};
		for (size_t i = 0; i < sizeof(kdefs) / sizeof(kdefs[0]); i++)
			DT_VEC_PUSH(&args, kdefs[i]);
	}
	DT_VEC_PUSH(&args, "-isystem");
	DT_VEC_PUSH(&args, DT_CLANG_RESOURCE_INCLUDE);
	DT_VEC_PUSH(&args, "-isystem");
	DT_VEC_PUSH(&args, "/usr/local/include");
	DT_VEC_PUSH(&args, "-isystem");
	DT_VEC_PUSH(&args, "/usr/include/x86_64-linux-gnu");
	DT_VEC_PUSH(&args, "-isystem");
	DT_VEC_PUSH(&args, "/usr/include");
	DT_VEC_PUSH(&args, "-nostdinc");
	/* bpftrace's macro for scripts that read kernel types from BTF rather than from kernel
	 * headers (its tools: `#ifndef BPFTRACE_HAVE_BTF #include <net/sock.h> …`). */
	char btf[4096];
	snprintf(btf, sizeof(btf), "%s/vmlinux", ct->dir);
	if (access(btf, R_OK) == 0)
		DT_VEC_PUSH(&args, "-DBPFTRACE_HAVE_BTF");
	unsigned nuf;
	char **ufnames;
	struct CXUnsavedFile *uf = unsaved_files(cl->src, CL_FILE, text, len, &nuf, &ufnames);
	*tu = NULL;
	enum CXErrorCode ec = cl->f.clang_parseTranslationUnit2(
		cl->idx, CL_FILE, args.v, (int)args.n, uf, nuf, CXTranslationUnit_SkipFunctionBodies,
		tu);
	unsaved_free(uf, nuf, ufnames);
	free(args.v);
	for (size_t i = 0; i < owned.n; i++)
		free(owned.v[i]);
	free(owned.v);
	return ec == CXError_Success && *tu ? 0 : -EIO;
}

static int parse_unit(dt_ctypes *ct, const char *text, size_t len)
{
	ct_clang *cl = ct->cl;
	if (cl->tu)
		cl->f.clang_disposeTranslationUnit(cl->tu);
	cl->tu = NULL;
	return parse_to(ct, text, len, &cl->tu);
}

#define CL_CONSTANT "__dwarftrace_constant__"

struct found_const {
	ct_clang *cl;
	bool found;
	long long value;
	const char *name; /* the enumerator looked for */
	CXCursor decl;    /* its enum's declaration */
};

/* Enumerator fc->name: its value, and its enum's declaration in fc->decl. */
static enum CXChildVisitResult find_const(CXCursor c, CXCursor parent, CXClientData data)
{
	struct found_const *fc = data;
	ct_clang *cl = fc->cl;
	enum CXCursorKind k = cl->f.clang_getCursorKind(c);
	if (k == CXCursor_EnumDecl)
		return CXChildVisit_Recurse;
	if (k != CXCursor_EnumConstantDecl)
		return CXChildVisit_Continue;
	char *n = str_of(cl, cl->f.clang_getCursorSpelling(c));
	if (!strcmp(n, fc->name)) {
		fc->found = true;
		fc->decl = parent;
		fc->value = cl->f.clang_getEnumConstantDeclValue(c);
	}
	free(n);
	return fc->found ? CXChildVisit_Break : CXChildVisit_Continue;
}

int ct_clang_constant(dt_ctypes *ct, const char *name, int64_t *out, const dt_enum **enm)
{
	ct_clang *cl = ct->cl;
	if (!cl || !cl->tu || !cl->text)
		return -ENOENT;
	/* Clang evaluates it: the unit again with the name as an enumerator's value, which
	 * serves enumerators and #defines alike and refuses what is not an integer constant. */
	char *text = xasprintf("%.*s\n#line 1 \"<constant>\"\nenum { " CL_CONSTANT " = (%s) };\n",
			       (int)cl->len, cl->text, name);
	CXTranslationUnit tu;
	int err = parse_to(ct, text, strlen(text), &tu);
	free(text);
	if (err)
		return -ENOENT;
	struct found_const fc = { .cl = cl, .name = CL_CONSTANT };
	unsigned nd = cl->f.clang_getNumDiagnostics(tu);
	bool bad = false;
	for (unsigned i = 0; i < nd && !bad; i++) {
		CXDiagnostic dg = cl->f.clang_getDiagnostic(tu, i);
		bad = cl->f.clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error;
		cl->f.clang_disposeDiagnostic(dg);
	}
	if (!bad)
		cl->f.clang_visitChildren(cl->f.clang_getTranslationUnitCursor(tu), find_const, &fc);
	cl->f.clang_disposeTranslationUnit(tu);
	if (!fc.found)
		return -ENOENT;
	*out = fc.value;
	if (enm) {
		/* An enumerator (not a #define) is of its enum. */
		struct found_const fe = { .cl = cl, .name = name };
		cl->f.clang_visitChildren(cl->f.clang_getTranslationUnitCursor(cl->tu),
					  find_const, &fe);
		*enm = fe.found ? enum_of(ct, fe.decl) : NULL;
	}
	return 0;
}

static int parse_bpf_c(dt_ctypes *ct, dt_diags *d, const dt_source_cimport *c);

/* Kernel structs and unions the unit uses without a definition, as C from BTF; NULL if none. */
static char *kernel_types(dt_ctypes *ct)
{
	ct_clang *cl = ct->cl;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	unsigned nd = cl->f.clang_getNumDiagnostics(cl->tu);
	DT_VEC(char *) seen = { 0 };
	for (unsigned i = 0; i < nd; i++) {
		CXDiagnostic dg = cl->f.clang_getDiagnostic(cl->tu, i);
		char *msg = str_of(cl, cl->f.clang_getDiagnosticSpelling(dg));
		cl->f.clang_disposeDiagnostic(dg);
		/* "field has incomplete type 'struct task_struct'", "unknown type name 'u32'" */
		const char *q = strstr(msg, "incomplete type '");
		if (q)
			q += strlen("incomplete type '");
		else if ((q = strstr(msg, "unknown type name '")))
			q += strlen("unknown type name '");
		const char *e = q ? strchr(q, '\'') : NULL;
		if (!e) {
			free(msg);
			continue;
		}
		char *name = xstrndup(q, (size_t)(e - q));
		bool dup = false;
		for (size_t j = 0; j < seen.n; j++)
			dup = dup || !strcmp(seen.v[j], name);
		if (!dup) {
			if (!f)
				f = open_memstream(&buf, &len);
			if (ct_btf_dump_c(ct, name, f) == 0)
				DT_VEC_PUSH(&seen, name);
			else
				free(name);
		} else {
			free(name);
		}
		free(msg);
	}
	for (size_t j = 0; j < seen.n; j++)
		free(seen.v[j]);
	bool any = seen.n > 0;
	free(seen.v);
	if (f)
		fclose(f);
	if (!any) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The imported C file clang calls `fname`, or NULL. */
static const dt_source_cimport *cimport_of(const dt_source *src, const char *fname)
{
	for (uint32_t i = 0; i < src->ncimports; i++) {
		const dt_source_cimport *c = &src->cimports[i];
		if (c->path ? !strcmp(fname, c->path)
			    : !strncmp(fname, CL_STDLIB, strlen(CL_STDLIB)) &&
				      !strcmp(fname + strlen(CL_STDLIB), c->name))
			return c;
	}
	return NULL;
}

/* Clang's first error, at its place in the script (at the import of an imported file, else
 * at the first definition when it is in a header), and how many more there were. */
static int report(dt_ctypes *ct, dt_diags *d, const dt_program *p)
{
	ct_clang *cl = ct->cl;
	unsigned nd = cl->f.clang_getNumDiagnostics(cl->tu), nerr = 0;
	const char *srcname = p->src->name ? p->src->name : DT_SOURCE_STDIN;
	for (unsigned i = 0; i < nd; i++) {
		CXDiagnostic dg = cl->f.clang_getDiagnostic(cl->tu, i);
		if (cl->f.clang_getDiagnosticSeverity(dg) < CXDiagnostic_Error) {
			cl->f.clang_disposeDiagnostic(dg);
			continue;
		}
		if (nerr++) {
			cl->f.clang_disposeDiagnostic(dg);
			continue;
		}
		CXString file;
		unsigned line, col;
		cl->f.clang_getPresumedLocation(cl->f.clang_getDiagnosticLocation(dg), &file, &line,
						&col);
		char *fname = str_of(cl, file);
		char *msg = str_of(cl, cl->f.clang_getDiagnosticSpelling(dg));
		const dt_source_cimport *imp = cimport_of(p->src, fname);
		if (!strcmp(fname, srcname)) {
			dt_diag(d, DT_DIAG_ERROR, (dt_span){ offset_of(p->src, line, col), 1 }, "%s",
				msg);
		} else if (imp) {
			dt_diag(d, DT_DIAG_ERROR, imp->at, "%s:%u:%u: %s", imp->name, line, col, msg);
		} else {
			dt_span at = p->ncdecls ? p->cdecls[0] : (dt_span){ 0, 1 };
			dt_diag(d, DT_DIAG_ERROR, at, "%s:%u:%u: %s", !strcmp(fname, CL_FILE) ?
				"<definitions>" : fname, line, col, msg);
		}
		free(fname);
		free(msg);
		cl->f.clang_disposeDiagnostic(dg);
	}
	if (nerr > 1)
		dt_diag_hint(d, "clang reported %u more error%s after this one", nerr - 1,
			     nerr == 2 ? "" : "s");
	return nerr ? -EINVAL : 0;
}

/* Parses the unit of the script's C definitions (and --include files, imported headers),
 * with the kernel's types it uses without defining; clang's first error into d. 0 or -EINVAL. */
static int compile_definitions(dt_ctypes *ct, dt_diags *d, const dt_program *p, dt_span at)
{
	size_t len;
	char *text = unit_text(ct, p, NULL, &len);
	int err = parse_unit(ct, text, len);
	char *kernel = err ? NULL : kernel_types(ct);
	if (kernel) {
		/* The kernel's definitions of what the script used without defining, then again. */
		free(text);
		text = unit_text(ct, p, kernel, &len);
		err = parse_unit(ct, text, len);
		free(kernel);
	}
	ct->cl->text = text; /* kept for ct_clang_constant */
	ct->cl->len = len;
	if (err) {
		dt_diag(d, DT_DIAG_ERROR, at, "clang could not parse the C definitions");
		return -EINVAL;
	}
	return report(ct, d, p) ? -EINVAL : 0;
}

int ct_clang_compile(dt_ctypes *ct, dt_diags *d, const dt_program *p)
{
	if (!p->ncdecls && !ct->includes.n && !p->src->ncimports)
		return 0;
	dt_span at = p->ncdecls ? p->cdecls[0] : p->src->ncimports ? p->src->cimports[0].at
								 : (dt_span){ 0, 1 };
	int err = load(ct);
	if (err) {
		dt_diag(d, DT_DIAG_ERROR, at, "C definitions need libclang, which %s",
			err == -ENOENT ? "could not be loaded" : "lacks functions dwarftrace uses");
		dt_diag_hint(d, "install libclang1-14 (Debian: apt-get install libclang1-14)");
		return -EINVAL;
	}
	ct->cl->src = p->src;
	/* The unit of the script's definitions, unless only .bpf.c files are imported (each is a
	 * unit of its own). */
	bool defs = p->ncdecls || ct->includes.n;
	for (uint32_t i = 0; i < p->src->ncimports; i++)
		defs = defs || p->src->cimports[i].kind == DT_CIMPORT_HEADER;
	if (defs && compile_definitions(ct, d, p, at))
		return -EINVAL;
	for (uint32_t i = 0; i < p->src->ncimports; i++)
		if (p->src->cimports[i].kind == DT_CIMPORT_BPF_C &&
		    parse_bpf_c(ct, d, &p->src->cimports[i]))
			return -EINVAL;
	/* Indexed last: the script's own definitions come before the .bpf.c files' types. */
	if (defs)
		ct->cl->f.clang_visitChildren(ct->cl->f.clang_getTranslationUnitCursor(ct->cl->tu),
					      index_decl, ct);
	return 0;
}

/* ------------------------------------------------------------ imported .bpf.c files */

#define BPF_ARGS_MAX 64

/* The flags an imported .bpf.c is read with, by libclang (its functions and errors) and by clang
 * (its code) alike: C for the BPF target, the libbpf headers (<bpf/bpf_helpers.h>) and the
 * system's, the file's own directory and -I. `owned` gets what must be freed. */
static unsigned bpf_c_args(dt_ctypes *ct, const dt_source_cimport *c, const char **args,
			   char **owned, unsigned *nowned)
{
	unsigned n = 0;
	args[n++] = "-x";
	args[n++] = "c";
	args[n++] = "-std=gnu11";
	args[n++] = "-target";
	args[n++] = "bpf";
	args[n++] = "-D__TARGET_ARCH_" KARCH;
	args[n++] = "-fno-color-diagnostics";
	const char *file = c->path ? c->path : c->name;
	const char *slash = strrchr(file, '/');
	args[n++] = "-I";
	args[n++] = owned[(*nowned)++] = xasprintf("%s%.*s", c->path ? "" : CL_STDLIB,
						    (int)(slash ? slash - file : 1),
						    slash ? file : ".");
	for (size_t i = 0; i < ct->incdirs.n && n + 8 < BPF_ARGS_MAX; i++) {
		args[n++] = "-I";
		args[n++] = ct->incdirs.v[i];
	}
	args[n++] = "-isystem";
	args[n++] = DT_CLANG_RESOURCE_INCLUDE;
	args[n++] = "-idirafter";
	args[n++] = "/usr/include/x86_64-linux-gnu";
	return n;
}

/* Clang's first error in an imported .bpf.c (or a header it includes), at the import, and how
 * many more there were; without errors its first warning, as a warning (bpftrace shows them
 * too). Whether there was an error. */
static bool bpf_c_errors(ct_clang *cl, dt_diags *d, const dt_source_cimport *c,
			 CXTranslationUnit tu)
{
	unsigned nd = cl->f.clang_getNumDiagnostics(tu), n[2] = { 0, 0 };
	int first[2] = { -1, -1 }; /* [0] errors, [1] warnings */

	for (unsigned i = 0; i < nd; i++) {
		CXDiagnostic dg = cl->f.clang_getDiagnostic(tu, i);
		enum CXDiagnosticSeverity sev = cl->f.clang_getDiagnosticSeverity(dg);
		int k = sev >= CXDiagnostic_Error ? 0 : sev == CXDiagnostic_Warning ? 1 : -1;

		if (k >= 0 && !n[k]++)
			first[k] = (int)i;
		cl->f.clang_disposeDiagnostic(dg);
	}
	int k = n[0] ? 0 : 1;
	if (!n[k])
		return false;
	CXDiagnostic dg = cl->f.clang_getDiagnostic(tu, (unsigned)first[k]);
	CXString file;
	unsigned line, col;
	cl->f.clang_getPresumedLocation(cl->f.clang_getDiagnosticLocation(dg), &file, &line, &col);
	char *fname = str_of(cl, file);
	char *msg = str_of(cl, cl->f.clang_getDiagnosticSpelling(dg));
	const char *shown = !strncmp(fname, CL_STDLIB, strlen(CL_STDLIB)) ? fname + strlen(CL_STDLIB)
			    : c->path && !strcmp(fname, c->path)          ? c->name
									  : fname;
	dt_diag(d, k ? DT_DIAG_WARNING : DT_DIAG_ERROR, c->at, "%s:%u:%u: %s", shown, line, col,
		msg);
	if (n[k] > 1)
		dt_diag_hint(d, "clang reported %u more %s%s in the imported C after this one",
			     n[k] - 1, k ? "warning" : "error", n[k] == 2 ? "" : "s");
	free(fname);
	free(msg);
	cl->f.clang_disposeDiagnostic(dg);
	return k == 0;
}

struct fn_walk {
	dt_ctypes *ct;
	dt_diags *d;
	const dt_source_cimport *c;
	bool failed;
};

/* A function the .bpf.c defines with external linkage: callable from the script. */
static enum CXChildVisitResult bpf_c_function(CXCursor cur, CXCursor parent, CXClientData data)
{
	(void)parent;
	struct fn_walk *w = data;
	dt_ctypes *ct = w->ct;
	ct_clang *cl = ct->cl;
	if (cl->f.clang_getCursorKind(cur) != CXCursor_FunctionDecl ||
	    !cl->f.clang_isCursorDefinition(cur) ||
	    cl->f.clang_getCursorLinkage(cur) != CXLinkage_External ||
	    !cl->f.clang_Location_isFromMainFile(cl->f.clang_getCursorLocation(cur)))
		return CXChildVisit_Continue;
	char *name = str_of(cl, cl->f.clang_getCursorSpelling(cur));
	for (size_t i = 0; i < cl->fns.n; i++)
		if (!strcmp(cl->fns.v[i]->name, name)) {
			dt_diag(w->d, DT_DIAG_ERROR, w->c->at,
				"%s: function '%s' is defined in %s too", w->c->name, name,
				cl->fns.v[i]->file);
			w->failed = true;
		}
	dt_extern_fn *fn = dt_arena_alloc(ct->arena, sizeof(*fn));
	fn->name = dt_arena_strndup(ct->arena, name, strlen(name));
	fn->file = w->c->name;
	fn->variadic = cl->f.clang_Cursor_isVariadic(cur);
	fn->ret = conv(ct, cl->f.clang_getCursorResultType(cur));
	int na = cl->f.clang_Cursor_getNumArguments(cur);
	fn->nparams = na > 0 ? (uint32_t)na : 0;
	fn->params = dt_arena_alloc(ct->arena, sizeof(*fn->params) * (fn->nparams + 1));
	fn->pnames = dt_arena_alloc(ct->arena, sizeof(*fn->pnames) * (fn->nparams + 1));
	for (uint32_t i = 0; i < fn->nparams; i++) {
		CXCursor a = cl->f.clang_Cursor_getArgument(cur, i);
		char *pn = str_of(cl, cl->f.clang_getCursorSpelling(a));
		fn->pnames[i] = dt_arena_strndup(ct->arena, pn, strlen(pn));
		fn->params[i] = conv(ct, cl->f.clang_getCursorType(a));
		free(pn);
	}
	free(name);
	DT_VEC_PUSH(&cl->fns, fn);
	return CXChildVisit_Continue;
}

/* Parses imported .bpf.c `c` with libclang: its first error goes into d at the import, and its
 * functions become callable (ct_clang_extern). 0, or -EINVAL. */
static int parse_bpf_c(dt_ctypes *ct, dt_diags *d, const dt_source_cimport *c)
{
	ct_clang *cl = ct->cl;
	const char *args[BPF_ARGS_MAX];
	char *owned[4];
	unsigned nowned = 0, nuf;
	unsigned n = bpf_c_args(ct, c, args, owned, &nowned);
	char **ufnames;
	struct CXUnsavedFile *uf = unsaved_files(cl->src, NULL, NULL, 0, &nuf, &ufnames);
	char *file = c->path ? xstrdup(c->path) : xasprintf(CL_STDLIB "%s", c->name);
	CXTranslationUnit tu = NULL;
	enum CXErrorCode ec = cl->f.clang_parseTranslationUnit2(cl->idx, file, args, (int)n, uf, nuf,
								 CXTranslationUnit_None, &tu);
	unsaved_free(uf, nuf, ufnames);
	for (unsigned i = 0; i < nowned; i++)
		free(owned[i]);
	free(file);
	if (ec != CXError_Success || !tu) {
		dt_diag(d, DT_DIAG_ERROR, c->at, "clang could not read '%s'", c->name);
		return -EINVAL;
	}
	DT_VEC_PUSH(&cl->bpf_tus, tu);
	if (bpf_c_errors(cl, d, c, tu))
		return -EINVAL;
	struct fn_walk w = { .ct = ct, .d = d, .c = c };
	cl->f.clang_visitChildren(cl->f.clang_getTranslationUnitCursor(tu), bpf_c_function, &w);
	/* Its own types (not its headers'), for the script too; the script's definitions, indexed
	 * after, come first. */
	cl->f.clang_visitChildren(cl->f.clang_getTranslationUnitCursor(tu), index_main_decl, ct);
	return w.failed ? -EINVAL : 0;
}

int ct_clang_extern(dt_ctypes *ct, const char *name, const dt_extern_fn **out)
{
	ct_clang *cl = ct->cl;
	for (size_t i = 0; cl && i < cl->fns.n; i++)
		if (!strcmp(cl->fns.v[i]->name, name)) {
			*out = cl->fns.v[i];
			return 0;
		}
	return -ENOENT;
}

/* Runs clang (args, NULL-terminated): 0 when it succeeds; else -EINVAL with its first lines of
 * output in *out (malloc'd), or another -errno when it could not be run. */
static int run_clang(char *const *args, char **out)
{
	int pfd[2];
	*out = NULL;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		execv(args[0], args);
		_exit(127);
	}
	close(pfd[1]);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char chunk[4096];
	ssize_t r;
	while ((r = read(pfd[0], chunk, sizeof(chunk))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && len < 16384)
			fwrite(chunk, 1, (size_t)r, f);
	close(pfd[0]);
	fclose(f);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		free(buf);
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		free(buf);
		return -ENOENT;
	}
	*out = buf;
	return -EINVAL;
}

int dt_ctypes_bpf_bitcode(dt_ctypes *ct, const dt_source_cimport *c, dt_diags *d, void **bc,
			  size_t *len)
{
	const char *args[BPF_ARGS_MAX + 12];
	char *owned[4];
	unsigned nowned = 0, n = 0;
	char out[] = "/tmp/dwarftrace-bc-XXXXXX";
	int infd = -1, outfd = mkstemp(out);
	char *src = NULL, *msg = NULL;
	int err;

	*bc = NULL;
	*len = 0;
	if (outfd < 0) {
		err = -errno;
		dt_diag(d, DT_DIAG_ERROR, c->at, "cannot compile '%s': a temporary file: %s", c->name,
			strerror(-err));
		return err;
	}
	if (!c->path) {
		/* A standard library file: its text through a memfd clang reads by name. */
		infd = memfd_create("dwarftrace-stdlib", 0);
		if (infd < 0 || write(infd, c->text, c->len) != (ssize_t)c->len) {
			err = -errno;
			goto out;
		}
		src = xasprintf("/proc/self/fd/%d", infd);
	}
	args[n++] = DT_BPF_CLANG;
	n += bpf_c_args(ct, c, args + n, owned, &nowned);
	args[n++] = "-O2";
	args[n++] = "-emit-llvm";
	args[n++] = "-c";
	args[n++] = "-o";
	args[n++] = out;
	args[n++] = src ? src : c->path;
	args[n] = NULL;
	err = run_clang((char *const *)args, &msg);
	if (err == -EINVAL) {
		/* libclang read it without errors, so this is the code generator's refusal. */
		char *nl = msg ? strchr(msg, '\n') : NULL;
		if (nl)
			*nl = '\0';
		dt_diag(d, DT_DIAG_ERROR, c->at, "clang could not compile '%s' to BPF: %s", c->name,
			msg && *msg ? msg : "(no message)");
		goto out;
	}
	if (err) {
		dt_diag(d, DT_DIAG_ERROR, c->at, "cannot run clang (%s) to compile '%s': %s",
			DT_BPF_CLANG, c->name, strerror(-err));
		dt_diag_hint(d, "install clang-14 (Debian: apt-get install clang-14)");
		goto out;
	}
	err = dt_read_file(out, (char **)bc, len);
	if (err)
		dt_diag(d, DT_DIAG_ERROR, c->at, "cannot read clang's output for '%s': %s", c->name,
			strerror(-err));
out:
	if (err && err != -EINVAL && !dt_diags_error_count(d))
		dt_diag(d, DT_DIAG_ERROR, c->at, "cannot compile '%s': %s", c->name, strerror(-err));
	for (unsigned i = 0; i < nowned; i++)
		free(owned[i]);
	free(msg);
	free(src);
	if (infd >= 0)
		close(infd);
	close(outfd);
	unlink(out);
	return err ? (err == -EINVAL ? -EINVAL : err) : 0;
}

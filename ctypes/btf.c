/* btf.c — kernel types from BTF (libbpf's BTF API) as lang's C types. vmlinux's BTF is parsed
 * on the first lookup and kept for the run; modules' split BTF is parsed only when vmlinux lacks
 * a name. Conversion is by type id, cached per arena (a compilation's types live in its arena):
 * typedefs and qualifiers resolve away, enums become integers of their size, a struct becomes
 * its members (embedded structs converted with it, so its layout is whole), and a pointer to a
 * named struct points to an incomplete struct of that name, one per name and arena, that the
 * checker fills through dt_ctypes_lookup when the script looks into it. */
#include "ctypes/ctypes_internal.h"

#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ct_btf_reset(dt_ctypes *ct)
{
	for (size_t i = 0; i < ct->srcs.n; i++) {
		btf_src *s = &ct->srcs.v[i];
		uint32_t n = s->end - s->first;
		memset(s->full, 0, sizeof(*s->full) * n);
		memset(s->shell, 0, sizeof(*s->shell) * n);
	}
}

void ct_btf_free(dt_ctypes *ct)
{
	for (size_t i = 0; i < ct->srcs.n; i++) {
		btf__free(ct->srcs.v[i].btf);
		free(ct->srcs.v[i].module);
		free(ct->srcs.v[i].full);
		free(ct->srcs.v[i].shell);
	}
	free(ct->srcs.v);
}

static void add_src(dt_ctypes *ct, struct btf *btf, uint32_t first)
{
	btf_src s = { .btf = btf, .first = first, .end = btf__type_cnt(btf) };
	uint32_t n = s.end > first ? s.end - first : 1;
	s.full = xcalloc(n, sizeof(*s.full));
	s.shell = xcalloc(n, sizeof(*s.shell));
	DT_VEC_PUSH(&ct->srcs, s);
}

static int load_vmlinux(dt_ctypes *ct)
{
	if (ct->loaded)
		return ct->load_err;
	ct->loaded = true;
	char path[4096];
	snprintf(path, sizeof(path), "%s/vmlinux", ct->dir);
	struct btf *btf = btf__parse(path, NULL);
	if (!btf) {
		/* Not -ENOENT: that would read as "no such type". */
		ct->load_err = errno == ENOENT ? -ENODATA : -errno;
		return ct->load_err;
	}
	add_src(ct, btf, 1);
	return 0;
}

static void load_modules(dt_ctypes *ct)
{
	if (ct->modules_loaded || ct->srcs.n == 0)
		return;
	ct->modules_loaded = true;
	DIR *d = opendir(ct->dir);
	if (!d)
		return;
	struct dirent *de;
	struct btf *base = ct->srcs.v[0].btf;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", ct->dir, de->d_name);
		bool have = false;
		for (size_t i = 1; i < ct->srcs.n && !have; i++)
			have = !strcmp(ct->srcs.v[i].module, de->d_name);
		if (have)
			continue;
		struct btf *m = btf__parse_split(path, base);
		if (m) {
			add_src(ct, m, btf__type_cnt(base));
			ct->srcs.v[ct->srcs.n - 1].module = xstrdup(de->d_name);
		}
	}
	closedir(d);
}

/* The source owning `id` as seen from source `s` (ids below a split BTF's own are vmlinux's). */
static btf_src *owner(dt_ctypes *ct, btf_src *s, uint32_t id)
{
	return id < s->first ? &ct->srcs.v[0] : s;
}

static const dt_type *conv(dt_ctypes *ct, btf_src *s, uint32_t id);

/* Skips typedefs, qualifiers and tags. */
static uint32_t skip_mods(struct btf *btf, uint32_t id)
{
	for (int guard = 0; guard < 64; guard++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t)
			return 0;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF: case BTF_KIND_CONST: case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG: case BTF_KIND_DECL_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
	return 0;
}

static const char *struct_name(dt_arena *a, struct btf *btf, const struct btf_type *t)
{
	const char *n = btf__name_by_offset(btf, t->name_off);
	const char *kw = btf_is_union(t) ? "union" : "struct";
	if (!n || !*n)
		return dt_arena_printf(a, "%s (anonymous)", kw);
	return dt_arena_printf(a, "%s %s", kw, n);
}

/* The incomplete struct a pointer to a named struct points to: one per (struct, arena). */
static const dt_type *shell_of(dt_ctypes *ct, btf_src *s, uint32_t id, const struct btf_type *t)
{
	btf_src *o = owner(ct, s, id);
	dt_type **slot = &o->shell[id - o->first];
	if (!*slot)
		*slot = dt_type_cstruct(ct->arena, struct_name(ct->arena, o->btf, t), btf_is_union(t));
	return *slot;
}

static const dt_type *conv_struct(dt_ctypes *ct, btf_src *s, const struct btf_type *t)
{
	dt_type *st = dt_type_cstruct(ct->arena, struct_name(ct->arena, s->btf, t), btf_is_union(t));
	uint16_t n = btf_vlen(t);
	const struct btf_member *m = btf_members(t);
	st->cstruct.members = dt_arena_alloc(ct->arena, sizeof(dt_member) * (n ? n : 1));
	uint32_t align = 1;
	for (uint16_t i = 0; i < n; i++) {
		dt_member *dm = &st->cstruct.members[i];
		const char *name = btf__name_by_offset(s->btf, m[i].name_off);
		uint32_t bits = btf_member_bit_offset(t, i);
		dm->name = dt_arena_strndup(ct->arena, name ? name : "", name ? strlen(name) : 0);
		dm->type = conv(ct, s, m[i].type);
		dm->offset = bits / 8;
		dm->bit_size = (uint8_t)btf_member_bitfield_size(t, i);
		if (dm->bit_size)
			dm->bit_off = bits % 8;
		if (dm->type->align > align)
			align = dm->type->align;
	}
	st->cstruct.n = n;
	st->size = t->size;
	st->align = align;
	st->cstruct.complete = true;
	return st;
}

/* The enumerators of BTF enum t, made in ct->arena. An anonymous enum is named after its
 * first enumerator ("enum <anonymous ONE>"). */
static const dt_enum *enum_of(dt_ctypes *ct, const struct btf *btf, const struct btf_type *t)
{
	uint16_t n = btf_vlen(t);
	dt_enum *e = dt_arena_alloc(ct->arena, sizeof(*e));
	const char **names = dt_arena_alloc(ct->arena, sizeof(char *) * (n + 1u));
	int64_t *values = dt_arena_alloc(ct->arena, sizeof(int64_t) * (n + 1u));
	for (uint16_t k = 0; k < n; k++) {
		uint32_t off;
		if (btf_is_enum64(t)) {
			off = btf_enum64(t)[k].name_off;
			values[k] = (int64_t)btf_enum64_value(&btf_enum64(t)[k]);
		} else {
			off = btf_enum(t)[k].name_off;
			values[k] = btf_kflag(t) ? (int64_t)btf_enum(t)[k].val
						 : (int64_t)(uint32_t)btf_enum(t)[k].val;
		}
		const char *nm = btf__name_by_offset(btf, off);
		names[k] = dt_arena_strndup(ct->arena, nm, strlen(nm)); /* outlives the BTF */
	}
	e->n = n;
	e->names = names;
	e->values = values;
	e->name = t->name_off ? dt_arena_printf(ct->arena, "enum %s",
						 btf__name_by_offset(btf, t->name_off))
			      : dt_arena_printf(ct->arena, "enum <anonymous %s>", n ? names[0] : "");
	return e;
}

static const dt_type *conv_uncached(dt_ctypes *ct, btf_src *s, uint32_t id)
{
	struct btf *btf = s->btf;
	const struct btf_type *t = btf__type_by_id(btf, id);
	if (!id || !t)
		return dt_type_void();
	switch (btf_kind(t)) {
	case BTF_KIND_INT: {
		uint8_t enc = btf_int_encoding(t);
		if (t->size > 8)
			return dt_type_array(ct->arena, dt_type_int(false, 1), t->size);
		return dt_type_int(enc & BTF_INT_SIGNED || (enc & BTF_INT_CHAR), t->size);
	}
	case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		return dt_type_int_enum(ct->arena, btf_kflag(t), t->size, enum_of(ct, btf, t));
	case BTF_KIND_FLOAT:
		if (t->size == 4 || t->size == 8)
			return dt_type_float(t->size);
		return dt_type_int(false, t->size <= 8 ? t->size : 8);
	case BTF_KIND_PTR: {
		uint32_t to = skip_mods(btf, t->type);
		const struct btf_type *tt = to ? btf__type_by_id(btf, to) : NULL;
		if (!tt || btf_is_func_proto(tt))
			return dt_type_ptr(ct->arena, NULL, DT_AS_NONE);
		if ((btf_is_struct(tt) || btf_is_union(tt) || btf_is_fwd(tt)) && tt->name_off)
			return dt_type_ptr(ct->arena, shell_of(ct, s, to, tt), DT_AS_NONE);
		return dt_type_ptr(ct->arena, conv(ct, s, to), DT_AS_NONE);
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *arr = btf_array(t);
		return dt_type_array(ct->arena, conv(ct, s, arr->type), arr->nelems);
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return conv_struct(ct, s, t);
	case BTF_KIND_FWD:
		return shell_of(ct, s, id, t);
	case BTF_KIND_TYPEDEF: case BTF_KIND_CONST: case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG: case BTF_KIND_DECL_TAG:
		return conv(ct, s, t->type);
	default: /* functions, variables, data sections: not value types */
		return dt_type_void();
	}
}

static const dt_type *conv(dt_ctypes *ct, btf_src *s, uint32_t id)
{
	btf_src *o = owner(ct, s, id);
	if (id < o->first || id >= o->end)
		return dt_type_void();
	const dt_type **slot = &o->full[id - o->first];
	if (!*slot)
		*slot = conv_uncached(ct, o, id);
	return *slot;
}

/* Finds `name` ("struct X", "union X", "enum X" or a typedef) in one source's own types. */
static int find(btf_src *s, const char *name, uint32_t *id)
{
	static const struct { const char *kw; int kinds[2]; } tagged[] = {
		{ "struct ", { BTF_KIND_STRUCT, BTF_KIND_STRUCT } },
		{ "union ", { BTF_KIND_UNION, BTF_KIND_UNION } },
		{ "enum ", { BTF_KIND_ENUM, BTF_KIND_ENUM64 } },
	};
	for (size_t i = 0; i < DT_ARRAY_SIZE(tagged); i++) {
		size_t n = strlen(tagged[i].kw);
		if (strncmp(name, tagged[i].kw, n))
			continue;
		for (int k = 0; k < 2; k++) {
			int r = btf__find_by_name_kind(s->btf, name + n, tagged[i].kinds[k]);
			if (r > 0) {
				*id = (uint32_t)r;
				return 0;
			}
		}
		return -ENOENT;
	}
	int r = btf__find_by_name_kind(s->btf, name, BTF_KIND_TYPEDEF);
	if (r <= 0)
		return -ENOENT;
	*id = (uint32_t)r;
	return 0;
}

/* Finds `name` in vmlinux, then in the modules (read on the first name vmlinux lacks). */
static int find_any(dt_ctypes *ct, const char *name, btf_src **src, uint32_t *id)
{
	int err = load_vmlinux(ct);
	if (err)
		return err;
	for (size_t i = 0;; i++) {
		if (i == ct->srcs.n && !ct->modules_loaded)
			load_modules(ct);
		if (i >= ct->srcs.n)
			return -ENOENT;
		if (find(&ct->srcs.v[i], name, id) == 0) {
			*src = &ct->srcs.v[i];
			return 0;
		}
	}
}

int ct_btf_lookup(dt_ctypes *ct, const char *name, const dt_type **out)
{
	btf_src *s;
	uint32_t id;
	int err = find_any(ct, name, &s, &id);
	if (err)
		return err;
	*out = conv(ct, s, id);
	return 0;
}

int ct_btf_constant(dt_ctypes *ct, const char *name, int64_t *out, const dt_enum **enm)
{
	int err = load_vmlinux(ct);
	if (err)
		return err == -ENODATA ? -ENOENT : err;
	/* libbpf indexes types, not enumerators: a walk over the enums, once per name asked. */
	for (size_t i = 0; i < ct->srcs.n; i++) {
		struct btf *btf = ct->srcs.v[i].btf;
		for (uint32_t id = ct->srcs.v[i].first; id < ct->srcs.v[i].end; id++) {
			const struct btf_type *t = btf__type_by_id(btf, id);
			uint16_t n = btf_vlen(t);
			if (btf_is_enum(t)) {
				const struct btf_enum *m = btf_enum(t);
				for (uint16_t k = 0; k < n; k++)
					if (!strcmp(btf__name_by_offset(btf, m[k].name_off), name)) {
						*out = btf_kflag(t) ? (int64_t)m[k].val
								    : (int64_t)(uint32_t)m[k].val;
						if (enm)
							*enm = enum_of(ct, btf, t);
						return 0;
					}
			} else if (btf_is_enum64(t)) {
				const struct btf_enum64 *m = btf_enum64(t);
				for (uint16_t k = 0; k < n; k++)
					if (!strcmp(btf__name_by_offset(btf, m[k].name_off), name)) {
						*out = (int64_t)btf_enum64_value(&m[k]);
						if (enm)
							*enm = enum_of(ct, btf, t);
						return 0;
					}
			}
		}
	}
	return -ENOENT;
}

static void dump_printf(void *ctx, const char *fmt, va_list args)
{
	vfprintf(ctx, fmt, args);
}

int ct_btf_dump_c(dt_ctypes *ct, const char *name, FILE *f)
{
	btf_src *s;
	uint32_t id;
	int err = find_any(ct, name, &s, &id);
	if (err)
		return err;
	struct btf_dump *d = btf_dump__new(s->btf, dump_printf, f, NULL);
	if (!d)
		return -errno;
	err = btf_dump__dump_type(d, id);
	btf_dump__free(d);
	return err;
}

/* The BTF source `module` names: vmlinux for NULL or "vmlinux", else the module's split BTF. */
static btf_src *module_src(dt_ctypes *ct, const char *module)
{
	if (load_vmlinux(ct))
		return NULL;
	if (!module || !strcmp(module, "vmlinux"))
		return &ct->srcs.v[0];
	for (size_t i = 1; i < ct->srcs.n; i++)
		if (!strcmp(ct->srcs.v[i].module, module))
			return &ct->srcs.v[i];
	if (strchr(module, '/') || module[0] == '.')
		return NULL;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", ct->dir, module);
	struct btf *m = btf__parse_split(path, ct->srcs.v[0].btf);
	if (!m)
		return NULL;
	add_src(ct, m, btf__type_cnt(ct->srcs.v[0].btf));
	ct->srcs.v[ct->srcs.n - 1].module = xstrdup(module);
	return &ct->srcs.v[ct->srcs.n - 1];
}

/* A function prototype's parameters (from `first` on) as an args struct, member i at 8 * i. */
static const dt_type *proto_args(dt_ctypes *ct, btf_src *s, const struct btf_type *proto,
				 uint16_t first, const char *what)
{
	uint16_t n = btf_vlen(proto);
	const struct btf_param *pa = btf_params(proto);
	dt_type *st = dt_type_cstruct(ct->arena, dt_arena_printf(ct->arena, "args of %s", what),
				      false);
	uint32_t k = 0;
	st->cstruct.members = dt_arena_alloc(ct->arena, sizeof(dt_member) * (n ? n : 1));
	for (uint16_t i = first; i < n; i++) {
		if (!pa[i].type)
			break; /* variadic */
		dt_member *m = &st->cstruct.members[k];
		const char *name = btf__name_by_offset(s->btf, pa[i].name_off);
		m->name = name && *name ? dt_arena_strndup(ct->arena, name, strlen(name))
					: dt_arena_printf(ct->arena, "arg%u", k);
		m->type = conv(ct, s, pa[i].type);
		m->offset = 8 * k++;
	}
	st->cstruct.n = k;
	st->size = 8 * k;
	st->align = 8;
	st->cstruct.complete = true;
	return st;
}

uint32_t dt_btf_rawtp_proto(const struct btf *btf, const char *name)
{
	static const char *const fmt[] = { "__bpf_trace_%s", "__probestub_%s" };
	const struct btf_type *t = NULL;
	char n[256];

	for (size_t i = 0; i < DT_ARRAY_SIZE(fmt) && !t; i++) {
		snprintf(n, sizeof(n), fmt[i], name);
		int id = btf__find_by_name_kind(btf, n, BTF_KIND_FUNC);
		t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	}
	if (!t) {
		snprintf(n, sizeof(n), "btf_trace_%s", name);
		int id = btf__find_by_name_kind(btf, n, BTF_KIND_TYPEDEF);
		t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
		t = t ? btf__type_by_id(btf, t->type) : NULL; /* a pointer to the prototype */
		t = t && btf_is_ptr(t) ? t : NULL;
	}
	uint32_t proto = t ? t->type : 0;
	t = proto ? btf__type_by_id(btf, proto) : NULL;
	return t && btf_is_func_proto(t) ? proto : 0;
}

int ct_btf_kernel_args(dt_ctypes *ct, dt_provider p, const char *module, const char *name,
		       const dt_type **args, const dt_type **ret)
{
	int err = load_vmlinux(ct);
	if (err)
		return err;
	btf_src *s = module_src(ct, module);
	if (!s)
		return -ENOENT;
	*ret = NULL;
	if (p == DT_P_ITER) {
		/* The context of iter:NAME is struct bpf_iter__NAME (a pointer to it). */
		char sn[256];
		snprintf(sn, sizeof(sn), "bpf_iter__%s", name);
		int id = btf__find_by_name_kind(s->btf, sn, BTF_KIND_STRUCT);
		if (id <= 0)
			return -ENOENT;
		*args = dt_type_ptr(ct->arena, shell_of(ct, s, (uint32_t)id,
							btf__type_by_id(s->btf, (uint32_t)id)),
				    DT_AS_KERNEL);
		return 0;
	}
	const struct btf_type *proto = NULL;
	uint16_t first = 0;
	if (p == DT_P_RAWTRACEPOINT) {
		uint32_t id = dt_btf_rawtp_proto(s->btf, name);
		proto = id ? btf__type_by_id(s->btf, id) : NULL;
		first = 1;
	} else {
		int id = btf__find_by_name_kind(s->btf, name, BTF_KIND_FUNC);
		const struct btf_type *t = id > 0 ? btf__type_by_id(s->btf, (uint32_t)id) : NULL;
		t = t ? btf__type_by_id(s->btf, t->type) : NULL;
		proto = t && btf_is_func_proto(t) ? t : NULL;
	}
	if (!proto)
		return -ENOENT;
	*args = proto_args(ct, s, proto, first, name);
	*ret = conv(ct, s, proto->type);
	return 0;
}

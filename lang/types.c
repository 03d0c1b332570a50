/* types.c — the type system's values and the byte layouts every other module reads: singletons
 * for the simple types, arena-made composites, equality/unification (which ints and strings fit
 * together), the spelling used in messages and dumps, and how a script map becomes a BPF map
 * (dt_map_layout_of). Layout rules: ints and everything holding a u64 align to 8, strings to 1;
 * tuple elements sit at offsets aligned to their alignment; a tuple is laid out as a C struct of
 * them (its size rounds up to its largest alignment). */
#include "lang/lang_internal.h"
#include "bpf-lib/dt_abi.h"

#include <linux/bpf.h>
#include <string.h>

static const dt_type t_void = { .kind = DT_T_VOID };
static const dt_type t_ints[2][4] = {
	{ { .kind = DT_T_INT, .size = 1, .align = 1 }, { .kind = DT_T_INT, .size = 2, .align = 2 },
	  { .kind = DT_T_INT, .size = 4, .align = 4 }, { .kind = DT_T_INT, .size = 8, .align = 8 } },
	{ { .kind = DT_T_INT, .size = 1, .align = 1, .is_signed = true },
	  { .kind = DT_T_INT, .size = 2, .align = 2, .is_signed = true },
	  { .kind = DT_T_INT, .size = 4, .align = 4, .is_signed = true },
	  { .kind = DT_T_INT, .size = 8, .align = 8, .is_signed = true } },
};

const dt_type *dt_type_void(void)
{
	return &t_void;
}

const dt_type *dt_type_bool(void)
{
	static const dt_type t_bool = { .kind = DT_T_BOOL, .size = 8, .align = 8 };
	return &t_bool;
}

const dt_type *dt_type_int(bool is_signed, uint32_t size)
{
	int i = size <= 1 ? 0 : size <= 2 ? 1 : size <= 4 ? 2 : 3;
	return &t_ints[is_signed][i];
}

const dt_type *dt_type_bool_elem(void)
{
	static const dt_type t_bool1 = { .kind = DT_T_BOOL, .size = 1, .align = 1 };
	return &t_bool1;
}

const dt_type *dt_type_float(uint32_t size)
{
	static const dt_type t_floats[2] = {
		{ .kind = DT_T_INT, .size = 4, .align = 4, .is_float = true },
		{ .kind = DT_T_INT, .size = 8, .align = 8, .is_float = true },
	};
	return &t_floats[size > 4];
}

const dt_type *dt_type_int_enum(dt_arena *a, bool is_signed, uint32_t size, const dt_enum *e)
{
	const dt_type *base = dt_type_int(is_signed, size);
	if (!e)
		return base;
	dt_type *t = dt_arena_alloc(a, sizeof(*t));
	*t = *base;
	t->enm = e;
	return t;
}

const char *dt_enum_name_of(const dt_enum *e, int64_t v)
{
	for (uint32_t i = 0; e && i < e->n; i++)
		if (e->values[i] == v)
			return e->names[i];
	return NULL;
}

/* Two integers keep an enum when both are of it (the same enum by name). */
static const dt_enum *common_enum(const dt_type *a, const dt_type *b)
{
	if (a->enm && b->enm && (a->enm == b->enm || !strcmp(a->enm->name, b->enm->name)))
		return a->enm;
	return NULL;
}

/* String types are interned in a process-wide list so the singletons never need an arena; the
 * distinct sizes a process sees are few (64, 16, and str(p, N) lengths). */
static struct str_type {
	dt_type t;
	struct str_type *next;
} *str_types;

const dt_type *dt_type_str(uint32_t size)
{
	for (struct str_type *s = str_types; s; s = s->next)
		if (s->t.size == size)
			return &s->t;
	struct str_type *s = xcalloc(1, sizeof(*s));
	s->t.kind = DT_T_STR;
	s->t.size = size;
	s->t.align = 1;
	s->next = str_types;
	str_types = s;
	return &s->t;
}

dt_limits dt_limits_of(uint32_t strlen)
{
	/* Two strings as str() reads them (one byte more, 8-aligned) and room for what goes
	 * with them; below ~450 bytes the fixed limits are already larger. */
	uint32_t one = DT_ALIGN((strlen ? strlen : DT_STRLEN) + 1, 8);
	uint32_t two = 2 * one + 64;
	/* A probe's $variables may hold four such strings (current bpftrace's tools keep a path
	 * and a name or two at its default of 1024), as far as 16 KiB: their frame is per-CPU
	 * memory, which the kernel gives at most 32 KiB a value. */
	uint32_t four = DT_MIN(4 * one + 64, 16384u);

	return (dt_limits){ .value = DT_MAX(two, (uint32_t)DT_MAX_VALUE_SIZE),
			    .key = DT_MAX(two, (uint32_t)DT_MAX_KEY_SIZE),
			    .vars = DT_MAX(DT_MAX(two, four), (uint32_t)DT_MAX_VARS_SIZE),
			    .event = DT_MAX(two, (uint32_t)DT_MAX_EVENT_SIZE) };
}

dt_type *dt_type_new(dt_arena *a, dt_type_kind k)
{
	dt_type *t = dt_arena_alloc(a, sizeof(*t));
	t->kind = k;
	t->align = 8;
	switch (k) {
	case DT_T_COUNT: case DT_T_SUM: case DT_T_HIST: case DT_T_LHIST: case DT_T_KSYM:
	case DT_T_USERNAME: case DT_T_TIMESTAMP: case DT_T_CGROUP_PATH: case DT_T_STRERROR: case DT_T_BOOL:
		t->size = 8;
		break;
	case DT_T_MACADDR:
		t->size = 6;
		t->align = 1;
		break;
	case DT_T_AVG: case DT_T_MIN: case DT_T_MAX: case DT_T_STACK: case DT_T_USYM:
		t->size = 16;
		break;
	case DT_T_STATS: case DT_T_TSERIES:
		t->size = k == DT_T_STATS ? 32 : 24;
		break;
	case DT_T_INET:
		t->size = 24;
		break;
	case DT_T_INT:
		t->size = 8;
		break;
	default:
		t->size = 0;
		t->align = 1;
	}
	t->is_signed = k == DT_T_SUM || k == DT_T_AVG || k == DT_T_MIN || k == DT_T_MAX ||
		       k == DT_T_STATS || k == DT_T_TSERIES;
	return t;
}

dt_type *dt_type_tuple(dt_arena *a, const dt_type *const *elems, uint32_t n)
{
	dt_type *t = dt_type_new(a, DT_T_TUPLE);
	t->tuple.n = n;
	t->tuple.elems = dt_arena_alloc(a, sizeof(dt_type *) * (n ? n : 1));
	t->tuple.offsets = dt_arena_alloc(a, sizeof(uint32_t) * (n ? n : 1));
	uint32_t off = 0, align = 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t al = elems[i]->align ? elems[i]->align : 1;
		off = DT_ALIGN(off, al);
		t->tuple.elems[i] = (dt_type *)elems[i];
		t->tuple.offsets[i] = off;
		off += elems[i]->size;
		align = DT_MAX(align, al);
	}
	/* A C struct of the elements: ((int8)1, (int16)2, (int32)3) is 8 bytes (bpftrace's sizeof). */
	t->size = DT_ALIGN(off, align);
	t->align = align;
	return t;
}

dt_type *dt_type_record(dt_arena *a, const dt_type *const *elems, const char *const *names,
			uint32_t n)
{
	dt_type *t = dt_type_tuple(a, elems, n);

	t->tuple.names = dt_arena_alloc(a, sizeof(char *) * (n ? n : 1));
	for (uint32_t i = 0; i < n; i++)
		t->tuple.names[i] = names[i];
	return t;
}

int dt_record_index(const dt_type *t, const char *name)
{
	for (uint32_t i = 0; t->kind == DT_T_TUPLE && t->tuple.names && i < t->tuple.n; i++)
		if (!strcmp(t->tuple.names[i], name))
			return (int)i;
	return -1;
}

const dt_type *dt_type_buf(dt_arena *a, uint32_t n)
{
	dt_type *t = dt_type_new(a, DT_T_BUF);
	t->size = n + 1;
	t->align = 1;
	return t;
}

const dt_type *dt_type_stack(dt_arena *a, dt_stack_kind k, dt_stack_mode m, uint32_t depth)
{
	dt_type *t = dt_type_new(a, DT_T_STACK);
	t->stack.kind = k;
	t->stack.mode = m;
	t->stack.depth = depth ? depth : DT_STACK_DEFAULT_DEPTH;
	return t;
}

bool dt_type_equal(const dt_type *a, const dt_type *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || a->size != b->size)
		return false;
	switch (a->kind) {
	case DT_T_INT:
		return a->is_signed == b->is_signed;
	case DT_T_STACK:
		return a->stack.kind == b->stack.kind && a->stack.mode == b->stack.mode &&
		       a->stack.depth == b->stack.depth;
	case DT_T_TUPLE:
		if (a->tuple.n != b->tuple.n || !a->tuple.names != !b->tuple.names)
			return false;
		for (uint32_t i = 0; i < a->tuple.n; i++)
			if (!dt_type_equal(a->tuple.elems[i], b->tuple.elems[i]) ||
			    (a->tuple.names && strcmp(a->tuple.names[i], b->tuple.names[i])))
				return false;
		return true;
	case DT_T_HIST:
		return a->hist.bits == b->hist.bits;
	case DT_T_LHIST:
		return a->lhist.min == b->lhist.min && a->lhist.max == b->lhist.max &&
		       a->lhist.step == b->lhist.step;
	case DT_T_TSERIES:
		return a->tseries.interval == b->tseries.interval && a->tseries.n == b->tseries.n &&
		       a->tseries.agg == b->tseries.agg;
	case DT_T_RECORD:
		return a->record.subsys == b->record.subsys && a->record.event == b->record.event;
	case DT_T_STRERROR:
		return a->numtext.table == b->numtext.table;
	case DT_T_TIMESTAMP:
		return !a->ts.fmt == !b->ts.fmt && (!a->ts.fmt || !strcmp(a->ts.fmt, b->ts.fmt));
	case DT_T_PTR:
		/* Pointers to structs compare by the struct's name: the members need not be
		 * known, and a struct reached through itself would not end. */
		if (!a->ptr.to || !b->ptr.to)
			return !a->ptr.to && !b->ptr.to;
		if (a->ptr.to->kind == DT_T_CSTRUCT && b->ptr.to->kind == DT_T_CSTRUCT)
			return !strcmp(a->ptr.to->cstruct.name, b->ptr.to->cstruct.name);
		return dt_type_equal(a->ptr.to, b->ptr.to);
	case DT_T_CSTRUCT:
		return !strcmp(a->cstruct.name, b->cstruct.name);
	case DT_T_ARRAY:
		return a->array.n == b->array.n && dt_type_equal(a->array.elem, b->array.elem);
	default:
		return true;
	}
}

const dt_type *dt_type_unify(dt_arena *ar, const dt_type *a, const dt_type *b)
{
	if (!a || !b)
		return NULL;
	if (a->kind == DT_T_INT && b->kind == DT_T_INT)
		return dt_type_int_enum(ar, a->is_signed, DT_MAX(a->size, b->size), common_enum(a, b));
	if (a->kind == DT_T_BOOL && b->kind == DT_T_BOOL) /* an array's one-byte bool, or 8 */
		return a->size >= b->size ? a : b;
	/* A pointer keeps its type whatever space it was read from. */
	if (a->kind == DT_T_PTR && dt_type_equal(a, b))
		return a;
	if ((a->kind == DT_T_STR && b->kind == DT_T_STR) ||
	    (a->kind == DT_T_BUF && b->kind == DT_T_BUF))
		return a->size >= b->size ? a : b;
	if (a->kind == DT_T_TUPLE && b->kind == DT_T_TUPLE) {
		if (a->tuple.n != b->tuple.n || !a->tuple.names != !b->tuple.names)
			return NULL;
		bool same = true;
		const dt_type **el = dt_arena_alloc(ar, sizeof(*el) * (a->tuple.n ? a->tuple.n : 1));
		for (uint32_t i = 0; i < a->tuple.n; i++) {
			/* A record's elements pair by name: the first order written stays. */
			int j = a->tuple.names ? dt_record_index(b, a->tuple.names[i]) : (int)i;
			if (j < 0)
				return NULL;
			el[i] = dt_type_unify(ar, a->tuple.elems[i], b->tuple.elems[j]);
			if (!el[i])
				return NULL;
			same = same && el[i] == a->tuple.elems[i];
		}
		if (same)
			return a;
		return a->tuple.names ? dt_type_record(ar, el, (const char *const *)a->tuple.names,
						       a->tuple.n)
				      : dt_type_tuple(ar, el, a->tuple.n);
	}
	return dt_type_equal(a, b) ? a : NULL;
}

static char *arena_str(dt_arena *a, const char *s)
{
	return s ? dt_arena_strndup(a, s, strlen(s)) : NULL;
}

dt_type *dt_type_clone(dt_arena *a, const dt_type *t)
{
	if (!t)
		return NULL;
	dt_type *c = dt_arena_alloc(a, sizeof(*c));
	*c = *t;
	if (t->kind == DT_T_PTR && t->ptr.to && t->ptr.to->kind == DT_T_CSTRUCT) {
		/* The struct pointed to goes as a name: its members come back from the type
		 * source if they are needed, and a struct pointing to itself stays finite. */
		dt_type *s = dt_type_cstruct(a, arena_str(a, t->ptr.to->cstruct.name),
					     t->ptr.to->cstruct.is_union);
		c->ptr.to = s;
	} else if (t->kind == DT_T_PTR) {
		c->ptr.to = dt_type_clone(a, t->ptr.to);
	} else if (t->kind == DT_T_ARRAY) {
		c->array.elem = dt_type_clone(a, t->array.elem);
	} else if (t->kind == DT_T_CSTRUCT) {
		c->cstruct.name = arena_str(a, t->cstruct.name);
		c->cstruct.members = dt_arena_alloc(a, sizeof(dt_member) * (t->cstruct.n + 1));
		for (uint32_t i = 0; i < t->cstruct.n; i++) {
			c->cstruct.members[i] = t->cstruct.members[i];
			c->cstruct.members[i].name = arena_str(a, t->cstruct.members[i].name);
			c->cstruct.members[i].type = dt_type_clone(a, t->cstruct.members[i].type);
		}
	} else if (t->kind == DT_T_TUPLE) {
		uint32_t n = t->tuple.n ? t->tuple.n : 1;
		c->tuple.elems = dt_arena_alloc(a, sizeof(dt_type *) * n);
		c->tuple.offsets = dt_arena_alloc(a, sizeof(uint32_t) * n);
		if (t->tuple.names)
			c->tuple.names = dt_arena_alloc(a, sizeof(char *) * n);
		for (uint32_t i = 0; i < t->tuple.n; i++) {
			c->tuple.elems[i] = dt_type_clone(a, t->tuple.elems[i]);
			c->tuple.offsets[i] = t->tuple.offsets[i];
			if (t->tuple.names)
				c->tuple.names[i] = arena_str(a, t->tuple.names[i]);
		}
	} else if (t->kind == DT_T_INT && t->enm) {
		dt_enum *e = dt_arena_alloc(a, sizeof(*e));
		const char **names = dt_arena_alloc(a, sizeof(char *) * (t->enm->n + 1));
		int64_t *values = dt_arena_alloc(a, sizeof(int64_t) * (t->enm->n + 1));
		e->name = arena_str(a, t->enm->name);
		e->n = t->enm->n;
		for (uint32_t i = 0; i < e->n; i++) {
			names[i] = arena_str(a, t->enm->names[i]);
			values[i] = t->enm->values[i];
		}
		e->names = names;
		e->values = values;
		c->enm = e;
	} else if (t->kind == DT_T_TIMESTAMP && t->ts.fmt) {
		c->ts.fmt = dt_arena_strndup(a, t->ts.fmt, strlen(t->ts.fmt));
	} else if (t->kind == DT_T_RECORD) {
		c->record.subsys = t->record.subsys ? dt_arena_strndup(a, t->record.subsys,
								   strlen(t->record.subsys)) : NULL;
		c->record.event = t->record.event ? dt_arena_strndup(a, t->record.event,
								 strlen(t->record.event)) : NULL;
		c->record.fields = dt_arena_alloc(a, sizeof(dt_tp_field) * (t->record.nfields + 1));
		for (uint32_t i = 0; i < t->record.nfields; i++) {
			c->record.fields[i] = t->record.fields[i];
			const char *n = t->record.fields[i].name, *ct = t->record.fields[i].ctype;
			c->record.fields[i].name = dt_arena_strndup(a, n, strlen(n));
			c->record.fields[i].ctype = ct ? dt_arena_strndup(a, ct, strlen(ct)) : NULL;
		}
	}
	return c;
}

bool dt_type_is_aggregation(const dt_type *t)
{
	return t && t->kind >= DT_T_COUNT && t->kind <= DT_T_TSERIES;
}

const dt_type *dt_type_ptr(dt_arena *a, const dt_type *to, dt_addrspace as)
{
	dt_type *t = dt_type_new(a, DT_T_PTR);
	t->size = t->align = 8;
	t->ptr.to = to && to->kind == DT_T_VOID ? NULL : to;
	t->ptr.as = as;
	return t;
}

dt_type *dt_type_cstruct(dt_arena *a, const char *name, bool is_union)
{
	dt_type *t = dt_type_new(a, DT_T_CSTRUCT);
	t->cstruct.name = name;
	t->cstruct.is_union = is_union;
	return t;
}

const dt_type *dt_type_array(dt_arena *a, const dt_type *elem, uint32_t n)
{
	dt_type *t = dt_type_new(a, DT_T_ARRAY);
	t->array.elem = elem;
	t->array.n = n;
	t->size = elem->size * n;
	t->align = elem->align ? elem->align : 1;
	return t;
}

const dt_member *dt_type_member(const dt_type *t, const char *name, uint32_t *off)
{
	if (!t || t->kind != DT_T_CSTRUCT)
		return NULL;
	for (uint32_t i = 0; i < t->cstruct.n; i++) {
		const dt_member *m = &t->cstruct.members[i];
		if (m->name[0] && !strcmp(m->name, name)) {
			*off = m->offset;
			return m;
		}
	}
	/* C looks into anonymous members after the named ones (a name cannot be both). */
	for (uint32_t i = 0; i < t->cstruct.n; i++) {
		const dt_member *m = &t->cstruct.members[i], *in;
		uint32_t o;
		if (!m->name[0] && (in = dt_type_member(m->type, name, &o))) {
			*off = m->offset + o;
			return in;
		}
	}
	return NULL;
}

static const char *stack_kind_name(dt_stack_kind k)
{
	switch (k) {
	case DT_STACK_KERNEL: return "kstack";
	case DT_STACK_USER_FP: return "ustack";
	case DT_STACK_USER_DWARF: return "ustack_dwarf";
	}
	return "?";
}

const char *dt_type_name(dt_arena *a, const dt_type *t)
{
	if (!t)
		return "none";
	switch (t->kind) {
	case DT_T_NONE: return "none";
	case DT_T_VOID: return "void";
	case DT_T_INT: return dt_arena_printf(a, "%sint%u", t->is_signed ? "" : "u", t->size * 8);
	case DT_T_STR: return dt_arena_printf(a, "string[%u]", t->size);
	case DT_T_STACK:
		return dt_arena_printf(a, "%s(%s%s%u)", stack_kind_name(t->stack.kind),
				       t->stack.mode == DT_STACKMODE_DEFAULT ? ""
				       : dt_stack_mode_name(t->stack.mode),
				       t->stack.mode == DT_STACKMODE_DEFAULT ? "" : ", ",
				       t->stack.depth);
	case DT_T_TUPLE: {
		char *s = "(";
		for (uint32_t i = 0; i < t->tuple.n; i++)
			s = dt_arena_printf(a, "%s%s%s%s%s", s, i ? ", " : "",
					    t->tuple.names ? t->tuple.names[i] : "",
					    t->tuple.names ? "=" : "",
					    dt_type_name(a, t->tuple.elems[i]));
		return dt_arena_printf(a, "%s)", s);
	}
	case DT_T_KSYM: return "ksym";
	case DT_T_USYM: return "usym";
	case DT_T_USERNAME: return "username";
	case DT_T_BUF: return dt_arena_printf(a, "buffer[%u]", t->size - 1);
	case DT_T_INET: return "inet";
	case DT_T_CGROUP_PATH: return "cgroup_path";
	case DT_T_MACADDR: return "macaddr";
	case DT_T_STRERROR:
		return t->numtext.table == DT_NUMTEXT_SIGNAL	 ? "signal_name"
		       : t->numtext.table == DT_NUMTEXT_SYSCALL ? "syscall_name"
								 : "strerror";
	case DT_T_BOOL: return "bool";
	case DT_T_TIMESTAMP: return "timestamp";
	case DT_T_PTR:
		if (!t->ptr.to)
			return "void *";
		return dt_arena_printf(a, "%s%s*", dt_type_name(a, t->ptr.to),
				       t->ptr.to->kind == DT_T_PTR ? "" : " ");
	case DT_T_CSTRUCT: return t->cstruct.name;
	case DT_T_ARRAY:
		return dt_arena_printf(a, "%s[%u]", dt_type_name(a, t->array.elem), t->array.n);
	case DT_T_RECORD:
		return dt_arena_printf(a, "args(%s:%s)", t->record.subsys ? t->record.subsys : "?",
				       t->record.event ? t->record.event : "?");
	case DT_T_COUNT: return "count";
	case DT_T_SUM: return "sum";
	case DT_T_AVG: return "avg";
	case DT_T_MIN: return "min";
	case DT_T_MAX: return "max";
	case DT_T_STATS: return "stats";
	case DT_T_HIST:
		return t->hist.bits ? dt_arena_printf(a, "hist(%u)", t->hist.bits) : "hist";
	case DT_T_TSERIES:
		return dt_arena_printf(a, "tseries(%llu, %llu)", (unsigned long long)t->tseries.interval,
				       (unsigned long long)t->tseries.n);
	case DT_T_LHIST:
		return dt_arena_printf(a, "lhist(%lld, %lld, %lld)", (long long)t->lhist.min,
				       (long long)t->lhist.max, (long long)t->lhist.step);
	}
	return "?";
}

void dt_map_layout_of(const dt_map_sym *m, dt_map_layout *out)
{
	memset(out, 0, sizeof(*out));
	const dt_type *v = m->value;
	/* Keys round up to 8 so a hist bucket suffix lands aligned and the BPF side can copy
	 * keys in u64 words. */
	out->user_key_size = m->key ? DT_ALIGN(m->key->size ? m->key->size : 1, 8) : 8;
	out->key_size = out->user_key_size;
	out->max_entries = DT_MAP_MAX_ENTRIES;
	out->bpf_map_type = BPF_MAP_TYPE_HASH;
	switch (v ? v->kind : DT_T_NONE) {
	case DT_T_HIST: case DT_T_LHIST:
		out->bucketed = true;
		out->key_size += 8;
		out->value_size = 8;
		out->percpu = true;
		break;
	case DT_T_TSERIES:
		/* One shared (not per-CPU) value per (key, slot): "last" has no per-CPU merge. */
		out->bucketed = true;
		out->key_size += 8;
		out->value_size = sizeof(struct dt_agg_tseries);
		if (v->tseries.n > out->max_entries) /* the whole ring of one key fits */
			out->max_entries = (uint32_t)v->tseries.n;
		break;
	case DT_T_COUNT: case DT_T_SUM:
		out->value_size = sizeof(struct dt_agg_count);
		out->percpu = true;
		out->zero_not_delete = v->kind == DT_T_COUNT && !m->key && !m->current;
		break;
	case DT_T_AVG:
		out->value_size = sizeof(struct dt_agg_avg);
		out->percpu = true;
		break;
	case DT_T_MIN: case DT_T_MAX:
		out->value_size = sizeof(struct dt_agg_minmax);
		out->percpu = true;
		break;
	case DT_T_STATS:
		out->value_size = sizeof(struct dt_agg_stats);
		out->percpu = true;
		break;
	default:
		out->value_size = v && v->size ? DT_ALIGN(v->size, 8) : 8;
	}
	if (out->percpu)
		out->bpf_map_type = BPF_MAP_TYPE_PERCPU_HASH;
	/* A declaration chooses among the hash types of the same per-CPU kind (dt_check). */
	if (m->decl_bpf_type)
		out->bpf_map_type = m->decl_bpf_type;
	if (m->decl_max_entries)
		out->max_entries = m->decl_max_entries;
}

uint32_t dt_hist_bucket(int64_t v, uint32_t bits)
{
	uint64_t mask = ((uint64_t)1 << bits) - 1;

	if (v < 0)
		return 0;
	if ((uint64_t)v <= mask)
		return (uint32_t)v + 1;
	uint32_t l = (uint32_t)(63 - __builtin_clzll((uint64_t)v)) - bits;
	return ((l + 1) << bits) + (uint32_t)(((uint64_t)v >> l) & mask) + 1;
}

uint32_t dt_hist_nbuckets(uint32_t bits)
{
	return dt_hist_bucket(INT64_MAX, bits) + 1;
}

uint64_t dt_hist_bucket_start(uint32_t index, uint32_t bits)
{
	uint32_t n = 1u << bits;

	if (index <= n)
		return index - 1;
	/* Index i > n starts where index i - 1's range ends: 2^p * (n + j), with p and j the high
	 * and low parts of i - 1 (bpftrace's hist_index_label). */
	uint32_t i = index - 1, p = (i >> bits) - 1, j = i & (n - 1);
	return p >= 64 ? UINT64_MAX : ((uint64_t)1 << p) * (n + j);
}

uint32_t dt_lhist_nbuckets(int64_t min, int64_t max, int64_t step)
{
	if (step <= 0 || max <= min)
		return 0;
	/* Below-min bucket, ceil((max - min) / step) in-range buckets, the >= max bucket. */
	uint64_t span = (uint64_t)max - (uint64_t)min;
	return (uint32_t)((span + (uint64_t)step - 1) / (uint64_t)step) + 2;
}

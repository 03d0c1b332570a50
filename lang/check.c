/* check.c — the semantic pass: expands wildcard attach points, validates attach points and which
 * builtins each probe type allows, resolves $vars (per probe) and @maps (per program), infers and
 * checks every expression's type, checks printf formats against their arguments, and fills the
 * tables codegen and runtime read (map and var ids, event descriptors, ustack_dwarf flags).
 *
 * It runs the walk twice. The first walk is silent and only collects: it gives each map the key
 * and value types of its first typed use in source order, so a map read in one probe and
 * assigned in a later one still has a type. The second walk reports: each use must agree with
 * those types (strings and ints widen; anything else is an error at the later use with a note at
 * the first). */
#include "lang/lang_internal.h"
#include "bpf-lib/dt_abi.h"

#include <ctype.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <sys/stat.h>

static const dt_type t_none = { .kind = DT_T_NONE };

/* The public dt_map_sym plus what only the checker needs: where each part was fixed. */
typedef struct map_info {
	dt_map_sym sym;
	dt_span key_decl, value_decl;
	/* Each part's type as written, before integers are widened to the 8 bytes a map stores
	 * (`@g[1, "hi"]`: (int8, string[3]) in the current language), for bpftrace's messages. */
	const dt_type *key_raw, *value_raw;
	bool shape_known, keyed;
	dt_span shape_decl;
	bool assigned; /* some statement stores into it (else reading it is an error) */
} map_info;

/* The public dt_var_sym plus the checker's view of it: the block it belongs to, and the type a
 * `let $x: TYPE` gave it (every value assigned to it is converted to that type). */
typedef struct var_info {
	dt_var_sym sym;
	uint32_t scope;
	const dt_type *declared;
	dt_ctype_ref declared_ref;
	/* The integer type of the values assigned, before they are widened to the 8 bytes a
	 * $variable stores (`$a = (int8)1`: int8), for typeof and sizeof; NULL: none. */
	const dt_type *int_type;
	bool by_let;
} var_info;

/* An option getopt() reads: its name, description (or NULL) and first call. */
typedef struct getopt_decl {
	const char *name, *desc;
	dt_span at;
} getopt_decl;

typedef struct checker {
	dt_program *p;
	dt_arena *a;
	dt_diags *d;    /* NULL during the collecting walk */
	const dt_check_opts *o;
	DT_VEC(map_info *) maps;
	dt_strmap map_names; /* name -> map_info: scripts with thousands of maps */
	DT_VEC(dt_event_desc) events;
	/* The probe being checked. */
	dt_probe *probe;
	DT_VEC(dt_var_sym *) vars;
	dt_strmap var_names; /* name -> var_info of this probe (its latest variable of the name) */
	DT_VEC(uint32_t) scopes; /* the blocks open around the statement being checked */
	uint32_t scope_next;
	const dt_type *record;   /* its tracepoint args, loaded on first use */
	bool record_failed;
	bool args_base;      /* the args being checked is the base of a field access */
	bool in_pred;
	/* The probe calls what only BPF_PROG_TYPE_TRACING programs have (socket_cookie, comm(PID)):
	 * a rawtracepoint of it is then loaded as a BTF tracepoint (tp_btf). Where, for the one
	 * thing a tp_btf program cannot do here (ustack_dwarf's tail calls). */
	bool tracing_only;
	dt_span tracing_only_at;
	uint32_t loop_depth; /* while and for loops around the statement being checked */
	const char *tracefs;
	bool tracefs_looked;
	/* The options getopt() names, once each, in the order of their first use. */
	DT_VEC(getopt_decl) getopts;
	bool current; /* dt_program_current: its maps' dt_map_sym.current */
	dt_limits lim; /* the DT_MAX_* sizes for this max_strlen */
	bool warned_tseries; /* the unstable-feature warning of tseries() is said */
} checker;

#define ERR(c, span, ...) dt_diag((c)->d, DT_DIAG_ERROR, (span), __VA_ARGS__)
#define NOTE(c, span, ...) dt_diag((c)->d, DT_DIAG_NOTE, (span), __VA_ARGS__)
#define HINT(c, ...) dt_diag_hint((c)->d, __VA_ARGS__)

static bool has_include(const dt_program *p);
static const char *posparam_text(checker *c, uint32_t n);
static bool is_macro_name(const char *n);

static const char *tname(checker *c, const dt_type *t)
{
	return dt_type_name(c->a, t);
}

static bool is_none(const dt_type *t)
{
	return !t || t->kind == DT_T_NONE;
}

static bool is_int(const dt_type *t)
{
	return t && t->kind == DT_T_INT;
}

static bool is_ptr(const dt_type *t)
{
	return t && t->kind == DT_T_PTR;
}

/* Integers, pointers and bools: what arithmetic, comparisons and conditions take. */
static bool is_intlike(const dt_type *t)
{
	return is_int(t) || is_ptr(t) || (t && t->kind == DT_T_BOOL);
}

/* Folds an expression node into an integer constant in place (both walks see the folded node).
 * The node's union held another kind's fields: is_bool is set here, not left to what they were. */
static void fold_int(dt_expr *e, uint64_t v)
{
	e->kind = DT_E_INT;
	e->i.value = v;
	e->i.is_bool = false;
	e->i.is_unsigned = false;
	e->i.enm = NULL;
}

/* The value of an integer expression made of literals and operators (`1 + 1`, `-(2 * 3)`),
 * with 64-bit signed arithmetic; false when it is not one (or divides by zero). */
static bool const_int(const dt_expr *e, int64_t *v)
{
	int64_t l, r;
	switch (e->kind) {
	case DT_E_INT:
		*v = (int64_t)e->i.value;
		return true;
	case DT_E_UNOP:
		if (e->un.op > DT_UOP_BNOT || !const_int(e->un.e, &l))
			return false;
		*v = e->un.op == DT_UOP_NEG ? (int64_t)(0 - (uint64_t)l) : e->un.op == DT_UOP_LNOT ?
		     !l : ~l;
		return true;
	case DT_E_BINOP:
		if (!const_int(e->bin.l, &l) || !const_int(e->bin.r, &r))
			return false;
		switch (e->bin.op) {
		case DT_OP_ADD: *v = (int64_t)((uint64_t)l + (uint64_t)r); return true;
		case DT_OP_SUB: *v = (int64_t)((uint64_t)l - (uint64_t)r); return true;
		case DT_OP_MUL: *v = (int64_t)((uint64_t)l * (uint64_t)r); return true;
		case DT_OP_DIV: case DT_OP_MOD:
			if (!r || (l == INT64_MIN && r == -1))
				return false;
			*v = e->bin.op == DT_OP_DIV ? l / r : l % r;
			return true;
		case DT_OP_BAND: *v = l & r; return true;
		case DT_OP_BOR: *v = l | r; return true;
		case DT_OP_BXOR: *v = l ^ r; return true;
		case DT_OP_SHL: *v = r < 0 || r > 63 ? 0 : (int64_t)((uint64_t)l << r); return true;
		case DT_OP_SHR: *v = r < 0 || r > 63 ? 0 : (int64_t)((uint64_t)l >> r); return true;
		case DT_OP_LAND: *v = l && r; return true;
		case DT_OP_LOR: *v = l || r; return true;
		case DT_OP_EQ: *v = l == r; return true;
		case DT_OP_NE: *v = l != r; return true;
		case DT_OP_LT: *v = l < r; return true;
		case DT_OP_LE: *v = l <= r; return true;
		case DT_OP_GT: *v = l > r; return true;
		case DT_OP_GE: *v = l >= r; return true;
		default: return false;
		}
	default:
		return false;
	}
}

static const char *tracefs(checker *c)
{
	if (!c->tracefs_looked) {
		c->tracefs_looked = true;
		c->tracefs = dt_tracefs_root(c->o ? c->o->tracefs : NULL);
	}
	return c->tracefs;
}

/* ---------------------------------------------------------------- maps and vars */

static map_info *map_lookup(checker *c, const dt_expr *e)
{
	map_info *m = dt_strmap_get(&c->map_names, e->map.name);
	if (m)
		return m;
	m = dt_arena_alloc(c->a, sizeof(*m));
	m->sym.name = e->map.name;
	m->sym.decl = e->span;
	m->sym.id = (uint32_t)c->maps.n;
	m->sym.current = c->current;
	const dt_type *k = NULL, *v = NULL;
	if (c->o && c->o->existing_map && c->o->existing_map(c->o->ctx, e->map.name, &k, &v)) {
		/* A map of a live session: its types are fixed already. */
		m->sym.key = k ? dt_type_clone(c->a, k) : NULL;
		m->sym.value = v ? dt_type_clone(c->a, v) : NULL;
		m->key_decl = m->value_decl = m->shape_decl = e->span;
		m->shape_known = true;
		m->keyed = k != NULL;
		m->assigned = true;
	}
	DT_VEC_PUSH(&c->maps, m);
	dt_strmap_put(&c->map_names, m->sym.name, m);
	return m;
}

static bool value_type_ok(const dt_type *t)
{
	return t && t->kind != DT_T_NONE && t->kind != DT_T_VOID && t->kind != DT_T_RECORD &&
	       !dt_type_is_aggregation(t) && !(t->kind == DT_T_ARRAY && !t->size);
}

/* Storage types: every int a variable or map holds is 8 bytes. */
/* bpftrace's current language types an integer literal as the smallest signed integer that
 * holds it (`1` and `-1` are int8, `200` int16; past int64 it is uint64): what a tuple lays out
 * and what a $variable given it remembers (sizeof, typeof). Arithmetic and stores are 64-bit
 * as before, so only those layouts and sizes differ from 0.17, where a literal is an int64.
 * t is e's type; anything but a plain literal (a bool, an enumerator, one written unsigned)
 * keeps it. */
static const dt_type *literal_type(const checker *c, const dt_expr *e, const dt_type *t)
{
	if (!c->current || e->kind != DT_E_INT || e->i.is_bool || e->i.is_unsigned || e->i.enm ||
	    !t || t->kind != DT_T_INT)
		return t;
	int64_t v = (int64_t)e->i.value;
	uint32_t size = v >= INT8_MIN && v <= INT8_MAX ? 1 : v >= INT16_MIN && v <= INT16_MAX ? 2 :
			v >= INT32_MIN && v <= INT32_MAX ? 4 : 8;
	return dt_type_int(true, size);
}

static const dt_type *storage_type(checker *c, const dt_type *t)
{
	if (t && t->kind == DT_T_INT)
		return dt_type_int_enum(c->a, t->is_signed, 8, t->enm);
	return t;
}

/* The type a read of a map holding value type t gives: t itself for a plain value; a per-CPU
 * count, sum, min, max or avg is read combined over the CPUs as an integer (count unsigned, the
 * others signed as their argument, bpftrace's types); NULL for hist, lhist, stats and tseries,
 * which cannot be read as one value. */
static const dt_type *agg_read_type(const dt_type *t)
{
	switch (t->kind) {
	case DT_T_COUNT:
		return dt_type_int(false, 8);
	case DT_T_SUM: case DT_T_MIN: case DT_T_MAX: case DT_T_AVG:
		return dt_type_int(t->is_signed, 8);
	case DT_T_HIST: case DT_T_LHIST: case DT_T_STATS: case DT_T_TSERIES:
		return NULL;
	default:
		return t;
	}
}

/* A type as bpftrace's messages write it: a tuple's parts joined by ',' alone. */
static const char *bt_tname(checker *c, const dt_type *t)
{
	const char *n = tname(c, t);
	size_t len = strlen(n);
	char *o = dt_arena_alloc(c->a, len + 1), *w = o;
	for (const char *r = n; *r; r++) {
		*w++ = *r;
		if (*r == ',' && r[1] == ' ')
			r++;
	}
	*w = 0;
	return o;
}

/* Fixes or checks one part (key or value) of a map against a use's type t. raw is the part's
 * type as written, for bpftrace's messages (NULL: t itself; a key's integers are widened in t). */
static void map_part(checker *c, map_info *m, const dt_type **slot, dt_span *decl, const dt_type *t,
		     const dt_type *raw, dt_span at, const char *what)
{
	if (is_none(t))
		return;
	bool is_key = !strcmp(what, "key");
	const dt_type **raw_slot = is_key ? &m->key_raw : &m->value_raw;
	if (!raw)
		raw = t;
	t = storage_type(c, t);
	if (!*slot) {
		*slot = t;
		*decl = at;
		*raw_slot = raw;
		return;
	}
	const dt_type *u = dt_type_unify(c->a, *slot, t);
	if (u && !(dt_type_is_aggregation(t) && !dt_type_equal(*slot, t))) {
		*slot = u;
		const dt_type *ru = raw && *raw_slot ? dt_type_unify(c->a, *raw_slot, raw) : NULL;
		if (ru)
			*raw_slot = ru;
		return;
	}
	if (c->current) {
		/* bpftrace's current words, with its types as written. */
		const char *now = bt_tname(c, raw ? raw : t), *was = bt_tname(c, *raw_slot ? *raw_slot : *slot);
		if (is_key)
			ERR(c, at, "Argument mismatch for %s: trying to access with arguments: '%s' when "
			    "map expects arguments: '%s'", m->sym.name, now, was);
		else
			ERR(c, at, "Type mismatch for %s: trying to assign value of type '%s' when map "
			    "already has a type '%s'", m->sym.name, now, was);
	} else {
		ERR(c, at, "the %s type of %s is %s here, but %s before", what, m->sym.name, tname(c, t),
		    tname(c, *slot));
	}
	NOTE(c, *decl, "%s's %s type was fixed here", m->sym.name, what);
}

static void map_shape(checker *c, map_info *m, const dt_expr *e)
{
	bool keyed = e->map.nkeys > 0;
	if (!m->shape_known) {
		m->shape_known = true;
		m->keyed = keyed;
		m->shape_decl = e->span;
		return;
	}
	if (m->keyed != keyed) {
		ERR(c, e->span, "%s is used %s here but %s elsewhere", m->sym.name,
		    keyed ? "with a key" : "without a key", keyed ? "without one" : "with a key");
		NOTE(c, m->shape_decl, "first use of %s", m->sym.name);
	}
}

static const dt_type *check_expr(checker *c, dt_expr *e);

static bool key_elem_ok(checker *c, const dt_expr *k, const dt_type *t)
{
	if (is_none(t))
		return false;
	if (t->kind == DT_T_INT || t->kind == DT_T_STR || t->kind == DT_T_STACK ||
	    t->kind == DT_T_KSYM || t->kind == DT_T_USYM || t->kind == DT_T_TUPLE ||
	    t->kind == DT_T_USERNAME || t->kind == DT_T_BUF || t->kind == DT_T_TIMESTAMP ||
	    t->kind == DT_T_INET || t->kind == DT_T_CGROUP_PATH || t->kind == DT_T_MACADDR ||
	    t->kind == DT_T_STRERROR || t->kind == DT_T_BOOL ||
	    t->kind == DT_T_PTR || t->kind == DT_T_CSTRUCT || t->kind == DT_T_ARRAY)
		return true;
	ERR(c, k->span, "%s cannot be a map key", tname(c, t));
	return false;
}

/* Types the keys of a map expression and fixes/checks the map's key type. */
static map_info *check_map_use(checker *c, dt_expr *e)
{
	map_info *m = map_lookup(c, e);
	e->map.sym = &m->sym;
	map_shape(c, m, e);
	if (!e->map.nkeys)
		return m;
	const dt_type **el = dt_arena_alloc(c->a, sizeof(*el) * e->map.nkeys);
	const dt_type **rl = dt_arena_alloc(c->a, sizeof(*rl) * e->map.nkeys);
	bool ok = true;
	for (uint32_t i = 0; i < e->map.nkeys; i++) {
		el[i] = check_expr(c, e->map.keys[i]);
		rl[i] = literal_type(c, e->map.keys[i], el[i]);
		el[i] = storage_type(c, el[i]);
		ok = key_elem_ok(c, e->map.keys[i], el[i]) && ok;
	}
	if (!ok)
		return m;
	const dt_type *kt = e->map.nkeys == 1 ? el[0] : dt_type_tuple(c->a, el, e->map.nkeys);
	const dt_type *raw = e->map.nkeys == 1 ? rl[0] : dt_type_tuple(c->a, rl, e->map.nkeys);
	dt_span ks = { e->map.keys[0]->span.off,
		       e->map.keys[e->map.nkeys - 1]->span.off +
			       e->map.keys[e->map.nkeys - 1]->span.len - e->map.keys[0]->span.off };
	if (kt->size > c->lim.key) {
		ERR(c, ks, "this key of %s is %u bytes (%u part%s); a map key can be at most %u "
		    "bytes", m->sym.name, kt->size, e->map.nkeys, e->map.nkeys == 1 ? "" : "s",
		    c->lim.key);
		return m;
	}
	if (m->keyed)
		map_part(c, m, &m->sym.key, &m->key_decl, kt, raw, ks, "key");
	return m;
}

static var_info *var_find(checker *c, const char *name)
{
	return dt_strmap_get(&c->var_names, name);
}

/* Block scoping as bpftrace now defines it: a $variable belongs to the block ({ }, the probe
 * body, a loop) it is first assigned or declared (`let`) in, and is visible in the blocks
 * inside it. 0.17 scoped variables to the whole probe; its scripts keep working because a
 * variable whose block has closed is still found by name (a later assignment of the name joins
 * it, a read sees it): what bpftrace now rejects as undeclared, 0.17's rule still answers,
 * and what bpftrace now accepts means the same under both. `let` always makes a new variable. */
static void scope_open(checker *c)
{
	DT_VEC_PUSH(&c->scopes, ++c->scope_next);
}

static void scope_close(checker *c)
{
	c->scopes.n--;
}

static bool scope_is_open(const checker *c, uint32_t scope)
{
	for (size_t i = 0; i < c->scopes.n; i++)
		if (c->scopes.v[i] == scope)
			return true;
	return false;
}

static var_info *var_new(checker *c, dt_expr *target, const dt_type *t)
{
	var_info *v = dt_arena_alloc(c->a, sizeof(*v));
	v->sym.name = target->var.name;
	v->sym.decl = target->span;
	v->sym.type = is_none(t) ? &t_none : t;
	v->sym.id = (uint32_t)c->vars.n;
	v->scope = c->scopes.n ? c->scopes.v[c->scopes.n - 1] : 0;
	DT_VEC_PUSH(&c->vars, &v->sym);
	dt_strmap_put(&c->var_names, v->sym.name, v);
	return v;
}

/* In the reporting walk, v takes at once the widest type the collecting walk gave the variable
 * this node named (its symbol then): `$a = ("hi", 1); print($a); $a = ("longer", 2);` reads $a
 * laid out as (string[7], int64) everywhere, which is how its slot holds it, and a read in a
 * loop sees what a later assignment of the loop stored. */
static void var_widen(checker *c, var_info *v, const dt_expr *e)
{
	const dt_var_sym *was = e->var.sym;
	if (!c->d || !was || was == &v->sym || v->declared || is_none(was->type) ||
	    is_none(v->sym.type))
		return;
	const dt_type *u = dt_type_unify(c->a, v->sym.type, was->type);
	if (u)
		v->sym.type = u;
	/* The integer type too (typeof, sizeof, printf's argument size): `$i = 0; while (…) {
	 * printf("%d", $i); $i++; }` prints what the 64-bit increment stored. */
	const dt_type *wi = ((const var_info *)was)->int_type;
	if (wi && v->int_type && (u = dt_type_unify(c->a, v->int_type, wi)))
		v->int_type = u;
	else if (wi && !v->int_type)
		v->int_type = wi;
}

static dt_var_sym *var_read(checker *c, dt_expr *e)
{
	var_info *v = var_find(c, e->var.name);
	if (!v) {
		ERR(c, e->span, "%s is used before it is assigned in this probe", e->var.name);
		HINT(c, "declare it first (let %s;) or assign it; scratch variables live in one "
			"probe block: use an @map to share values", e->var.name);
		return NULL;
	}
	var_widen(c, v, e);
	e->var.sym = &v->sym;
	return &v->sym;
}

static void var_assign(checker *c, dt_expr *target, const dt_type *t, dt_span at)
{
	const dt_type *given = t;
	t = storage_type(c, t);
	var_info *v = var_find(c, target->var.name);
	/* A variable of a closed block that cannot hold this value is another variable (the
	 * names are the same, the blocks are not). */
	if (v && !scope_is_open(c, v->scope) && !is_none(t) && !is_none(v->sym.type) &&
	    !dt_type_unify(c->a, v->sym.type, t))
		v = NULL;
	if (!v) {
		v = var_new(c, target, t);
	} else {
		if (!scope_is_open(c, v->scope))
			v->scope = c->scopes.n ? c->scopes.v[c->scopes.n - 1] : 0;
		const dt_type *u = is_none(t) ? v->sym.type
				   : is_none(v->sym.type) ? t
							  : dt_type_unify(c->a, v->sym.type, t);
		if (!u) {
			ERR(c, at, "%s holds %s, cannot assign %s", v->sym.name,
			    tname(c, v->sym.type), tname(c, t));
			NOTE(c, v->sym.decl, "%s was %s here", v->sym.name,
			     v->by_let ? "declared" : "first assigned");
		} else if (!v->declared) {
			v->sym.type = u;
		}
	}
	var_widen(c, v, target);
	if (given && given->kind == DT_T_INT)
		v->int_type = v->int_type ? dt_type_unify(c->a, v->int_type, given) : given;
	target->var.sym = &v->sym;
	target->type = v->sym.type;
}

/* ---------------------------------------------------------------- builtins */

static bool all_attach(checker *c, bool (*pred)(dt_provider))
{
	for (uint32_t i = 0; i < c->probe->nattach; i++)
		if (!pred(c->probe->attach[i]->provider))
			return false;
	return c->probe->nattach > 0;
}

static bool is_ret(dt_provider p)
{
	return p == DT_P_URETPROBE || p == DT_P_KRETPROBE || p == DT_P_XPROBE || p == DT_P_FEXIT;
}
static bool is_xprobe(dt_provider p) { return p == DT_P_XPROBE; }
static bool is_entry(dt_provider p) { return p == DT_P_UPROBE || p == DT_P_KPROBE; }
/* Probes with arg0…: registers at a function's entry, or a raw tracepoint's u64 arguments. */
static bool has_argn(dt_provider p) { return is_entry(p) || p == DT_P_RAWTRACEPOINT; }
static bool is_tp(dt_provider p) { return p == DT_P_TRACEPOINT; }
static bool is_usdt(dt_provider p) { return p == DT_P_USDT; }
static bool is_btf_args(dt_provider p)
{
	return p == DT_P_RAWTRACEPOINT || p == DT_P_FENTRY || p == DT_P_FEXIT;
}
static bool is_iter(dt_provider p) { return p == DT_P_ITER; }
static bool is_watchpoint(dt_provider p)
{
	return p == DT_P_WATCHPOINT || p == DT_P_ASYNCWATCHPOINT;
}

/* The size of strings read from memory (BPFTRACE_STRLEN), DT_STRLEN by default. */
static uint32_t str_size(const checker *c)
{
	return c->o && c->o->strlen ? c->o->strlen : DT_STRLEN;
}
/* Programs whose context holds the interrupted registers. */
static bool is_begin_end(dt_provider p)
{
	return p == DT_P_BEGIN || p == DT_P_END;
}

static bool has_regs(dt_provider p)
{
	return p == DT_P_UPROBE || p == DT_P_URETPROBE || p == DT_P_KPROBE ||
	       p == DT_P_KRETPROBE || p == DT_P_INTERVAL || p == DT_P_PROFILE ||
	       p == DT_P_SOFTWARE || p == DT_P_HARDWARE || p == DT_P_USDT || is_watchpoint(p);
}
/* Probes whose func is the kernel function's address, as a ksym (bpftrace: `ksym_t func`), so
 * it mixes with ksym() in a map (xfsdist.bt's @name). */
static bool func_is_ksym(dt_provider p)
{
	return p == DT_P_KPROBE || p == DT_P_KRETPROBE || p == DT_P_FENTRY || p == DT_P_FEXIT;
}

static bool has_func(dt_provider p)
{
	return p == DT_P_UPROBE || p == DT_P_URETPROBE || p == DT_P_KPROBE ||
	       p == DT_P_KRETPROBE || p == DT_P_TRACEPOINT || p == DT_P_XPROBE ||
	       p == DT_P_RAWTRACEPOINT || p == DT_P_FENTRY || p == DT_P_FEXIT;
}

/* Loads the tracepoint record of the probe (the first attach point's format). */
static const dt_type *probe_record(checker *c, dt_span at)
{
	if (c->record || c->record_failed)
		return c->record;
	c->record_failed = true;
	const char *root = tracefs(c);
	const dt_attach *a0 = c->probe->attach[0];
	if (!root) {
		ERR(c, at, "cannot read the format of tracepoint %s:%s: tracefs not found",
		    a0->target, a0->func);
		HINT(c, "mount it: mount -t tracefs nodev /sys/kernel/tracing");
		return NULL;
	}
	dt_type *rec;
	int err = dt_tracefs_record(c->a, root, a0->target, a0->func, &rec);
	if (err) {
		/* Unknown tracepoints were reported at the attach point already. */
		if (err != -ENOENT)
			ERR(c, at, "cannot read the format of tracepoint %s:%s: %s", a0->target,
			    a0->func, dt_strerror(-err));
		return NULL;
	}
	c->record = rec;
	c->record_failed = false;
	return rec;
}

/* argN of a usdt probe: the argument the notes of its locations describe, which every location
 * must have. Values are read as the note says (size, sign) and widened to 64 bits. */
static const dt_type *usdt_arg(checker *c, dt_expr *e)
{
	uint32_t n = e->builtin.arg;

	for (uint32_t i = 0; i < c->probe->nattach; i++) {
		const dt_attach *a = c->probe->attach[i];

		if (a->usdt && a->usdt->arg_error) {
			ERR(c, e->span, "the arguments of %s cannot be read: '%s' is not an operand "
			    "dwarftrace understands (x86-64: $constant, %%register, "
			    "disp(%%base,%%index,scale), symbol(%%rip))", a->text, a->usdt->arg_error);
			return &t_none;
		}
		if (!a->usdt || n < a->usdt->nargs)
			continue;
		if (a->usdt->nargs == 0)
			ERR(c, e->span, "arg%u is not available: %s has no arguments", n, a->text);
		else
			ERR(c, e->span, "arg%u is not available: %s has %u argument%s (arg0%s%s)", n,
			    a->text, a->usdt->nargs, a->usdt->nargs == 1 ? "" : "s",
			    a->usdt->nargs > 1 ? " … arg" : "",
			    a->usdt->nargs > 1 ? dt_arena_printf(c->a, "%u", a->usdt->nargs - 1) : "");
		return &t_none;
	}
	return dt_type_int(true, 8);
}

static bool is_uprobe_entry(dt_provider p)
{
	return p == DT_P_UPROBE;
}

/* A uprobe's args: the probed function's parameters from the binary's debug info. Every attach
 * point of the probe must be the same function of the same binary. */
static const dt_type *uprobe_args(checker *c, dt_expr *e)
{
	const dt_attach *a0 = c->probe->attach[0];
	for (uint32_t i = 1; i < c->probe->nattach; i++) {
		const dt_attach *ai = c->probe->attach[i];
		if (strcmp(ai->target, a0->target) || strcmp(ai->func, a0->func)) {
			ERR(c, e->span, "args needs a probe on one function: %s and %s differ",
			    a0->text, ai->text);
			return &t_none;
		}
	}
	if (c->record || c->record_failed)
		return c->record ? c->record : &t_none;
	c->record_failed = true;
	const dt_type *t = NULL;
	int err = c->o && c->o->uprobe_args && strchr(a0->target, '/')
			  ? c->o->uprobe_args(c->o->ctype_ctx, c->a, a0->target, a0->func, &t)
			  : -ENODATA;
	if (err == -ENOENT) {
		ERR(c, e->span, "function %s is not in the debug info of %s", a0->func, a0->target);
		return &t_none;
	}
	if (err == -ENOLINK) {
		ERR(c, e->span, "function %s is not in the debug info of %s: its DWARF is split "
		    "(gcc -gsplit-dwarf) and the .dwo files were not found next to it or where it "
		    "was compiled, nor a .dwp package of them beside it", a0->func,
		    a0->target);
		return &t_none;
	}
	if (err) {
		ERR(c, e->span, "args needs the debug info (DWARF) of %s, which has none",
		    a0->target);
		HINT(c, "argN reads the registers: arg0 … arg%d", DT_ARG_REGS - 1);
		return &t_none;
	}
	c->record = t;
	c->record_failed = false;
	return t;
}

/* `args` of a uprobe, fentry, fexit or rawtracepoint as a value (not the base of `args.f`): a
 * struct of the parameters, each read from its register, as bpftrace prints and stores it. A
 * parameter that is not in a register (a struct passed by value, one after the sixth) cannot be
 * part of it. */
static const dt_type *args_value_ok(checker *c, dt_expr *e, const dt_type *t, bool base)
{
	if (base || is_none(t) || t->kind != DT_T_CSTRUCT)
		return t;
	for (uint32_t i = 0; i < t->cstruct.n; i++) {
		const dt_member *m = &t->cstruct.members[i];
		uint32_t regs = c->probe->attach[0]->provider == DT_P_UPROBE ? DT_ARG_REGS : 12;
		if (m->offset / 8 >= regs || !is_intlike(m->type) || m->type->size > 8) {
			ERR(c, e->span, "args cannot be a value here: parameter '%s' (%s) is not "
			    "passed in a register", m->name, tname(c, m->type));
			HINT(c, "the parameters in registers can be read one by one (args.NAME)");
			return &t_none;
		}
	}
	return t;
}

/* The attach points of a probe whose args come from BTF must share one prototype. */
static bool one_prototype(checker *c, dt_expr *e)
{
	const dt_attach *a0 = c->probe->attach[0];
	for (uint32_t i = 1; i < c->probe->nattach; i++) {
		const dt_attach *ai = c->probe->attach[i];
		if (ai->kargs != a0->kargs &&
		    (!ai->kargs || !a0->kargs || !dt_type_equal(ai->kargs, a0->kargs) ||
		     !dt_type_equal(ai->kret, a0->kret))) {
			ERR(c, e->span, "%s needs attach points of one prototype: %s and %s differ",
			    e->builtin.id == DT_B_RETVAL ? "retval" : "args", a0->text, ai->text);
			return false;
		}
	}
	return a0->kargs != NULL; /* NULL: check_attach said why */
}

static const dt_type *btf_args(checker *c, dt_expr *e)
{
	return one_prototype(c, e) ? c->probe->attach[0]->kargs : &t_none;
}

static const dt_type *btf_retval(checker *c, dt_expr *e)
{
	if (!one_prototype(c, e))
		return &t_none;
	const dt_type *t = c->probe->attach[0]->kret;
	if (!t || t->kind == DT_T_VOID) {
		ERR(c, e->span, "%s returns nothing (void)", c->probe->attach[0]->func);
		return &t_none;
	}
	return t;
}

static bool is_test_bench(dt_provider p) { return p == DT_P_TEST || p == DT_P_BENCH; }

/* test and bench probes run as BPF_PROG_TYPE_XDP programs (the type whose test run repeats and
 * is timed by the kernel), which have no current task: what reads one is refused there. */
static bool needs_task(dt_builtin b)
{
	switch (b) {
	case DT_B_PID: case DT_B_TID: case DT_B_UID: case DT_B_GID: case DT_B_COMM:
	case DT_B_CGROUP: case DT_B_KSTACK: case DT_B_USTACK: case DT_B_USTACK_DWARF:
	case DT_B_USERNAME: case DT_B_CURTASK: case DT_B_USERMODE: case DT_B_ARG: case DT_B_SARG:
	case DT_B_RETVAL: case DT_B_FUNC: case DT_B_ARGS:
		return true;
	default:
		return false;
	}
}

/* Makes e an expression node of kind k at span sp, its fields zero (the rewrites of the
 * standard library's builtins turn a node into what it stands for). */
static dt_expr *set_node(dt_expr *e, dt_expr_kind k, dt_span sp)
{
	memset(e, 0, sizeof(*e));
	e->kind = k;
	e->span = sp;
	return e;
}

/* A new expression node of kind k at span sp, its fields zero. */
static dt_expr *new_node(checker *c, dt_expr_kind k, dt_span sp)
{
	return set_node(dt_arena_alloc(c->a, sizeof(dt_expr)), k, sp);
}

/* A field node `base->field` at span sp. */
static dt_expr *arrow_field(checker *c, dt_expr *base, const char *field, dt_span sp)
{
	dt_expr *f = new_node(c, DT_E_FIELD, sp);
	f->field.base = base;
	f->field.field = field;
	f->field.arrow = true;
	return f;
}

/* ppid, pcomm, leader_comm and leader_tid, with or without a task: bpftrace's standard library
 * defines them as TASK.real_parent.pid (ppid, as uint32), TASK.real_parent.comm,
 * TASK.group_leader.comm and TASK.group_leader.pid, TASK the argument or curtask. The node
 * becomes that expression. */
static const dt_type *check_task_builtin(checker *c, dt_expr *e)
{
	dt_builtin id = e->builtin.id;
	const char *name = dt_builtin_name(id);
	if (!c->o || !c->o->ctype) {
		ERR(c, e->span, "%s needs the kernel's BTF (struct task_struct)", name);
		return &t_none;
	}
	dt_expr *task = e->builtin.task;
	if (!task) {
		task = new_node(c, DT_E_BUILTIN, e->span);
		task->builtin.id = DT_B_CURTASK;
	}
	dt_span sp = e->span;
	bool parent = id == DT_B_PPID || id == DT_B_PCOMM;
	bool pid = id == DT_B_PPID || id == DT_B_LEADER_TID;
	dt_expr *r = arrow_field(c, arrow_field(c, task, parent ? "real_parent" : "group_leader",
						sp), pid ? "pid" : "comm", sp);
	if (id != DT_B_PPID) {
		*e = *r;
		return check_expr(c, e);
	}
	set_node(e, DT_E_CAST, sp);
	e->cast.to = (dt_ctype_ref){ .name = "uint32", .span = sp };
	e->cast.e = r;
	return check_expr(c, e);
}

/* Probes loaded as BPF_PROG_TYPE_TRACING programs (fentry, fexit, iter; a rawtracepoint is a
 * raw tracepoint program): the kernel gives only them its generic kfuncs (bpf_task_from_pid, …)
 * and the helpers that take BTF-typed pointers (bpf_d_path, bpf_get_socket_cookie's). */
static bool is_tracing_prog(dt_provider p)
{
	return p == DT_P_FENTRY || p == DT_P_FEXIT || p == DT_P_ITER;
}

/* Probes that can be loaded as BPF_PROG_TYPE_TRACING programs: those that are (above), and
 * rawtracepoints, which then are BTF tracepoints (tp_btf: the same event and arguments, a
 * tracing program's helpers and kfuncs), as current bpftrace loads every rawtracepoint. Notes
 * the use at `at` (walk() makes the probe's rawtracepoints tp_btf). */
static bool tracing_ok(checker *c, bool (*pred)(dt_provider), dt_span at)
{
	for (uint32_t i = 0; i < c->probe->nattach; i++) {
		dt_provider p = c->probe->attach[i]->provider;

		if (!pred(p) && p != DT_P_RAWTRACEPOINT)
			return false;
	}
	if (!c->probe->nattach)
		return false;
	if (!c->tracing_only) {
		c->tracing_only = true;
		c->tracing_only_at = at;
	}
	return true;
}

/* Whether x is an argument or the return value of a tracing program as the kernel typed it
 * (args.x, argN, retval, maybe cast): the only pointers the verifier takes for helpers that
 * want a kernel object (a socket, a packet). */
static bool kernel_typed_arg(const dt_expr *x)
{
	while (x->kind == DT_E_CAST)
		x = x->cast.e;
	return (x->kind == DT_E_FIELD && x->field.base && x->field.base->kind == DT_E_BUILTIN &&
		x->field.base->builtin.id == DT_B_ARGS) ||
	       (x->kind == DT_E_BUILTIN &&
		(x->builtin.id == DT_B_ARG || x->builtin.id == DT_B_RETVAL));
}

static bool is_fentry_fexit(dt_provider p)
{
	return p == DT_P_FENTRY || p == DT_P_FEXIT;
}

/* A call of `helper` on kernel object `arg` (a `what`, as `field` names it): only tracing
 * programs have such helpers (a rawtracepoint then is one, tracing_ok), and the verifier takes
 * only an object it typed itself, one the function or event was handed or returned, as the
 * program read it. Says what is wrong when it is not so. */
static bool kernel_object_ok(checker *c, dt_expr *e, const dt_expr *arg, const char *helper,
			     const char *what, const char *field)
{
	if (!tracing_ok(c, is_fentry_fexit, e->span)) {
		ERR(c, e->span, "%s() can only be used in fentry/fexit (kfunc/kretfunc) and "
		    "rawtracepoint probes", e->call.name);
		HINT(c, "the kernel gives %s its %s only in tracing programs (a rawtracepoint is "
		     "then loaded as one, tp_btf)", helper, what);
		return false;
	}
	if (!kernel_typed_arg(arg)) {
		ERR(c, arg->span, "%s needs a %s the traced function takes or returns (%s, argN, "
		    "retval), as the kernel typed it", e->call.name, what, field);
		HINT(c, "a pointer computed or read from memory is a plain number to the "
		     "verifier; trace the function that is handed the %s", what);
		return false;
	}
	return true;
}

/* Whether t is the C struct `name` ("struct path") or a pointer to one. */
static bool struct_or_ptr_named(const dt_type *t, const char *name)
{
	const dt_type *st = t && t->kind == DT_T_PTR ? t->ptr.to : t;

	return st && st->kind == DT_T_CSTRUCT && !strcmp(st->cstruct.name, name);
}


/* comm(pid): the name of the process `pid` (in the initial pid namespace), as bpftrace's stdlib
 * has it: the task from the bpf_task_from_pid kfunc, its comm read, the task released; "N/A"
 * when there is no such process. e->builtin.arg gets comm's offset in struct task_struct. */
static const dt_type *check_comm_of_pid(checker *c, dt_expr *e)
{
	const dt_type *pt = check_expr(c, e->builtin.task);
	if (is_none(pt))
		return &t_none;
	if (!is_int(pt)) {
		ERR(c, e->builtin.task->span, "Only integer supported for comm()'s pid");
		return &t_none;
	}
	if (!tracing_ok(c, is_tracing_prog, e->span)) {
		/* bpftrace's words. */
		const dt_attach *a = c->probe->attach[0];
		ERR(c, e->span, "Syntax comm(PID) is not supported in this probe type yet. Type: %s",
		    a->provider == DT_P_BEGIN || a->provider == DT_P_END
			    ? "special"
			    : dt_provider_name(a->provider));
		HINT(c, "comm(PID) calls the kernel's bpf_task_from_pid, which it gives to fentry, "
		     "fexit, iter and rawtracepoint probes; elsewhere comm is the current thread's "
		     "name");
		return &t_none;
	}
	const dt_type *args = NULL, *ret = NULL;
	if (!c->o || !c->o->ctype || !c->o->kernel_args ||
	    c->o->kernel_args(c->o->ctype_ctx, c->a, DT_P_FENTRY, NULL, "bpf_task_from_pid", &args,
			      &ret) < 0 ||
	    c->o->kernel_args(c->o->ctype_ctx, c->a, DT_P_FENTRY, NULL, "bpf_task_release", &args,
			      &ret) < 0) {
		ERR(c, e->span, "comm(PID) needs the kernel functions bpf_task_from_pid and "
		    "bpf_task_release (Linux 6.2 and later), which this kernel's BTF does not have");
		return &t_none;
	}
	dt_expr *off = new_node(c, DT_E_OFFSETOF, e->span);
	off->size.ty = (dt_ctype_ref){ .name = "struct task_struct", .span = e->span };
	off->size.field = "comm";
	if (is_none(check_expr(c, off)) || off->kind != DT_E_INT)
		return &t_none;
	e->builtin.arg = (uint32_t)off->i.value;
	return dt_type_str(16);
}

/* probetype: bpftrace's name of the probe's type, a string constant; BEGIN and END are
 * "special". A probe whose attach points are of different types has no one name. */
static const dt_type *check_probetype(checker *c, dt_expr *e)
{
	const char *name = NULL;
	for (uint32_t i = 0; i < c->probe->nattach; i++) {
		dt_provider p = c->probe->attach[i]->provider;
		const char *n = p == DT_P_BEGIN || p == DT_P_END ? "special"
				: p == DT_P_BENCH			   ? "benchmark"
									   : dt_provider_name(p);
		if (name && strcmp(name, n)) {
			ERR(c, e->span, "probetype has no one value here: this probe is both %s "
			    "and %s", name, n);
			HINT(c, "give each probe type its own probe");
			return &t_none;
		}
		name = n;
	}
	dt_span sp = e->span;
	set_node(e, DT_E_STR, sp);
	e->str.s = name ? name : "";
	e->str.len = (uint32_t)strlen(e->str.s);
	return check_expr(c, e);
}

/* config: a record of the session's config settings, each a constant (`config.max_strlen`). */
static const dt_type *check_config(checker *c, dt_expr *e)
{
	uint32_t n = c->o ? c->o->nconfig : 0;
	if (!n) {
		ERR(c, e->span, "config has no settings to give here");
		return &t_none;
	}
	dt_span sp = e->span;
	dt_expr **elems = dt_arena_alloc(c->a, sizeof(*elems) * n);
	const char **names = dt_arena_alloc(c->a, sizeof(*names) * (n + 1));
	names[n] = NULL;
	for (uint32_t i = 0; i < n; i++) {
		const dt_config_value *v = &c->o->config[i];
		dt_expr *x = new_node(c, DT_E_STR, sp);
		if (v->s) {
			x->str.s = v->s;
			x->str.len = (uint32_t)strlen(v->s);
		} else {
			fold_int(x, v->v);
			x->i.is_bool = v->is_bool;
		}
		elems[i] = x;
		names[i] = v->name;
	}
	set_node(e, DT_E_TUPLE, sp);
	e->tuple.elems = elems;
	e->tuple.names = names;
	e->tuple.n = n;
	return check_expr(c, e);
}

static const dt_type *check_builtin(checker *c, dt_expr *e)
{
	const char *name = dt_builtin_name(e->builtin.id);
	if (needs_task(e->builtin.id) && all_attach(c, is_test_bench)) {
		ERR(c, e->span, "%s is not available in %s probes", name,
		    dt_provider_name(c->probe->attach[0]->provider));
		HINT(c, "test and bench probes run by themselves, outside any task or event");
		return &t_none;
	}
	switch (e->builtin.id) {
	case DT_B_PID: case DT_B_TID: case DT_B_UID: case DT_B_GID: case DT_B_CPU:
	case DT_B_NSECS: case DT_B_ELAPSED: case DT_B_CGROUP: case DT_B_RAND:
		return dt_type_int(false, 8);
	case DT_B_NUMAID: case DT_B_JIFFIES: case DT_B_NCPUS:
		return dt_type_int(false, 8);
	case DT_B_CPID:
		if (!c->o || !c->o->has_child) {
			ERR(c, e->span, "cpid cannot be used without a child command");
			HINT(c, "cpid is the pid of the command given with -c");
			return &t_none;
		}
		return dt_type_int(false, 8);
	case DT_B_USERMODE:
		/* BEGIN and END run on dwarftrace's own request, from user mode (bpftrace's run as
		 * uprobes of its own binary): 1, a constant. */
		if (all_attach(c, is_begin_end)) {
			fold_int(e, 1);
			return dt_type_int(false, 8);
		}
		if (!all_attach(c, has_regs)) {
			ERR(c, e->span, "usermode is not available in %s probes",
			    dt_provider_name(c->probe->attach[0]->provider));
			HINT(c, "it reads the interrupted registers: uprobe, kprobe, profile, "
				"interval, software and hardware probes have them");
			return &t_none;
		}
		return dt_type_int(false, 8);
	case DT_B_USERNAME:
		return dt_type_new(c->a, DT_T_USERNAME);
	case DT_B_CTX:
		/* iter: the iterator's context, typed from BTF (struct bpf_iter__NAME *). */
		if (all_attach(c, is_iter) && c->probe->attach[0]->kargs)
			return c->probe->attach[0]->kargs;
		/* What the kernel hands the program (pt_regs, a tracepoint record,
		 * bpf_perf_event_data), in kernel memory: cast it to a struct pointer to read it. */
		return dt_type_ptr(c->a, NULL, DT_AS_KERNEL);
	case DT_B_SARG:
		if (!all_attach(c, is_entry)) {
			ERR(c, e->span, "sarg%u is only available in uprobe and kprobe probes",
			    e->builtin.arg);
			return &t_none;
		}
		return dt_type_int(false, 8);
	case DT_B_PPID: case DT_B_PCOMM: case DT_B_LEADER_COMM: case DT_B_LEADER_TID:
		return check_task_builtin(c, e);
	case DT_B_COMM:
		if (e->builtin.task)
			return check_comm_of_pid(c, e);
		return dt_type_str(16);
	case DT_B_PROBETYPE:
		return check_probetype(c, e);
	case DT_B_HAS_CPID:
		fold_int(e, c->o && c->o->has_child);
		e->i.is_bool = true;
		return check_expr(c, e);
	case DT_B_CONFIG:
		return check_config(c, e);
	case DT_B_CURTASK:
		/* The struct's members are fetched only if the script looks into it. */
		if (!c->o || !c->o->ctype)
			return dt_type_int(false, 8);
		return dt_type_ptr(c->a, dt_type_cstruct(c->a, "struct task_struct", false),
				   DT_AS_KERNEL);
	case DT_B_ARG:
		if (all_attach(c, is_usdt))
			return usdt_arg(c, e);
		if (e->builtin.arg >= DT_ARG_REGS) {
			ERR(c, e->span, "arg%u is not available: arguments are read from the %d "
			    "registers x86-64 passes them in, arg0 … arg%d", e->builtin.arg,
			    DT_ARG_REGS, DT_ARG_REGS - 1);
			return &t_none;
		}
		if (!all_attach(c, has_argn)) {
			ERR(c, e->span, "arg%u is only available in uprobe, kprobe, usdt and "
			    "rawtracepoint probes", e->builtin.arg);
			if (all_attach(c, is_btf_args))
				HINT(c, "fentry/fexit have named arguments: args.NAME");
			if (all_attach(c, is_tp))
				HINT(c, "tracepoints have named arguments: args.NAME");
			else if (all_attach(c, is_ret))
				HINT(c, "return probes see the return value as 'retval'");
			return &t_none;
		}
		return dt_type_int(false, 8);
	case DT_B_RETVAL:
		if (!all_attach(c, is_ret)) {
			ERR(c, e->span, "retval is only available in uretprobe, kretprobe, fexit and "
			    "xprobe probes");
			return &t_none;
		}
		if (c->probe->attach[0]->provider == DT_P_FEXIT)
			return btf_retval(c, e);
		return dt_type_int(true, 8);
	case DT_B_FUNC:
		if (!all_attach(c, has_func)) {
			ERR(c, e->span, "func is not available in %s probes",
			    dt_provider_name(c->probe->attach[0]->provider));
			HINT(c, "func names the probed function: it exists in uprobe, uretprobe, "
				"kprobe, kretprobe and tracepoint probes");
			return &t_none;
		}
		if (all_attach(c, func_is_ksym))
			return dt_type_new(c->a, DT_T_KSYM);
		return dt_type_str(DT_STRLEN);
	case DT_B_PROBE: {
		/* Long enough for the probe's longest name (a usdt probe names its object's path
		 * and provider), DT_STRLEN at least. */
		uint32_t len = DT_STRLEN;
		for (uint32_t i = 0; i < c->probe->nattach; i++) {
			const char *t = dt_attach_probe_name(c->probe->attach[i]);
			if (strlen(t) + 1 > len)
				len = (uint32_t)DT_MIN(strlen(t) + 1, (size_t)256);
		}
		return dt_type_str(len);
	}
	case DT_B_WALL: case DT_B_ONCPU: case DT_B_OFFCPU: case DT_B_RUNQ: case DT_B_BLOCKED:
	case DT_B_IOWAIT: case DT_B_NSWITCH:
		if (!all_attach(c, is_xprobe)) {
			ERR(c, e->span, "%s is only available in xprobe probes", name);
			HINT(c, "xprobe:BINARY:FUNCTION { … } runs at the function's return with wall, "
				"oncpu, offcpu, runq, blocked, iowait and nswitch for that call");
			return &t_none;
		}
		return dt_type_int(false, 8);
	case DT_B_KSTACK: case DT_B_USTACK: case DT_B_USTACK_DWARF: {
		dt_stack_kind k = e->builtin.id == DT_B_KSTACK	 ? DT_STACK_KERNEL
				  : e->builtin.id == DT_B_USTACK ? DT_STACK_USER_FP
								 : DT_STACK_USER_DWARF;
		if (k == DT_STACK_USER_DWARF) {
			c->probe->uses_ustack_dwarf = true;
			if (c->in_pred)
				c->probe->pred_uses_ustack_dwarf = true;
			if (e->builtin.native ? c->probe->ustack_dwarf_mixed
					      : c->probe->ustack_dwarf_native) {
				ERR(c, e->span, "ustack_dwarf and ustack_dwarf(native) in one probe");
				HINT(c, "one stack walk serves a probe: use one of them, or two probes "
					"on the same event");
				return &t_none;
			}
			if (e->builtin.native)
				c->probe->ustack_dwarf_native = true;
			else
				c->probe->ustack_dwarf_mixed = true;
		}
		if (e->builtin.depth_param) {
			/* ustack($1): the parameter's value, as bpftrace folds it. */
			const char *s = posparam_text(c, e->builtin.depth_param);
			char *end;
			errno = 0;
			long long v = strtoll(s, &end, 0);
			if (!*s || *end || errno || v < 1 || v > DT_STACK_MAX_DEPTH) {
				ERR(c, e->span, "%s: $%u is '%s', not a stack depth", name,
				    e->builtin.depth_param, s);
				HINT(c, "a stack depth is an integer between 1 and %d",
				     DT_STACK_MAX_DEPTH);
				return &t_none;
			}
			e->builtin.depth = (uint32_t)v;
		}
		dt_stack_mode mode = e->builtin.mode_set || !c->o ? e->builtin.mode
								  : c->o->stack_mode;
		if (mode == DT_STACKMODE_BUILD_ID && k == DT_STACK_KERNEL) {
			/* stack_mode = build_id names user objects; bpftrace's kstack falls back. */
			dt_diag(c->d, DT_DIAG_WARNING, e->span, "'build_id' stack mode can only be "
				"used for ustack. Falling back to 'raw' mode.");
			mode = DT_STACKMODE_RAW;
		}
		return dt_type_stack(c->a, k, mode, e->builtin.depth);
	}
	case DT_B_ARGS: {
		bool base = c->args_base;
		c->args_base = false;
		if (all_attach(c, is_uprobe_entry))
			return args_value_ok(c, e, uprobe_args(c, e), base);
		if (all_attach(c, is_btf_args))
			return args_value_ok(c, e, btf_args(c, e), base);
		if (!all_attach(c, is_tp)) {
			ERR(c, e->span, "args is only available in tracepoint, rawtracepoint, fentry, "
			    "fexit and uprobe probes");
			if (all_attach(c, is_entry))
				HINT(c, "in kprobes use arg0 … arg%d", DT_ARG_REGS - 1);
			return &t_none;
		}
		const dt_type *r = probe_record(c, e->span);
		return r ? r : &t_none;
	}
	default:
		ERR(c, e->span, "internal error: unhandled builtin %s", name);
		return &t_none;
	}
}

/* ---------------------------------------------------------------- C types */

/* The integer types a script can name without any type source: bpftrace's names, <stdint.h>'s
 * and C's own (x86-64 LP64 sizes). */
static const struct int_name {
	const char *name;
	uint8_t size;
	bool is_signed;
} int_names[] = {
	{ "int8", 1, true }, { "int16", 2, true }, { "int32", 4, true }, { "int64", 8, true },
	{ "uint8", 1, false }, { "uint16", 2, false }, { "uint32", 4, false }, { "uint64", 8, false },
	{ "int8_t", 1, true }, { "int16_t", 2, true }, { "int32_t", 4, true },
	{ "int64_t", 8, true }, { "uint8_t", 1, false }, { "uint16_t", 2, false },
	{ "uint32_t", 4, false }, { "uint64_t", 8, false }, { "bool", 1, false },
	{ "char", 1, true }, { "signed char", 1, true }, { "unsigned char", 1, false },
	{ "short", 2, true }, { "short int", 2, true }, { "signed short", 2, true },
	{ "unsigned short", 2, false }, { "unsigned short int", 2, false },
	{ "int", 4, true }, { "signed", 4, true }, { "signed int", 4, true },
	{ "unsigned", 4, false }, { "unsigned int", 4, false },
	{ "long", 8, true }, { "long int", 8, true }, { "signed long", 8, true },
	{ "unsigned long", 8, false }, { "unsigned long int", 8, false },
	{ "long long", 8, true }, { "long long int", 8, true }, { "signed long long", 8, true },
	{ "unsigned long long", 8, false }, { "unsigned long long int", 8, false },
};

/* Fills an incomplete struct (named through a pointer) from the type source. False, with an
 * error at `at`, when it cannot. */
static bool complete(checker *c, const dt_type *t, dt_span at)
{
	if (!t || t->kind != DT_T_CSTRUCT || t->cstruct.complete)
		return true;
	const dt_type *full = NULL;
	int err = c->o && c->o->ctype ? c->o->ctype(c->o->ctype_ctx, c->a, t->cstruct.name, &full)
				      : -ENOENT;
	if (err || !full || full->kind != DT_T_CSTRUCT || !full->cstruct.complete) {
		ERR(c, at, "%s is not a known type%s%s", t->cstruct.name, err && err != -ENOENT ?
		    ": " : "", err == -ENODATA ? "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
		    : err && err != -ENOENT ? strerror(-err) : "");
		if (c->o && c->o->ctype && err == -ENOENT)
			HINT(c, "kernel types come from BTF (/sys/kernel/btf); define others in "
				"the script");
		return false;
	}
	/* Every use of the name shares the shell, so filling it once serves them all. */
	dt_type *shell = (dt_type *)t;
	shell->size = full->size;
	shell->align = full->align;
	shell->cstruct.members = full->cstruct.members;
	shell->cstruct.n = full->cstruct.n;
	shell->cstruct.is_union = full->cstruct.is_union;
	shell->cstruct.complete = true;
	return true;
}

static bool is_int_name(const char *name)
{
	for (size_t i = 0; i < DT_ARRAY_SIZE(int_names); i++)
		if (!strcmp(int_names[i].name, name))
			return true;
	return !strcmp(name, "void");
}

static const dt_type *resolve_base(checker *c, const dt_ctype_ref *r);

/* The type a cast, sizeof, offsetof, typeof or let names, its modifiers applied left to right
 * (`int32*[4]`: an array of 4 pointers); NULL (reported) when it does not exist. A `[]` of
 * unknown size is an array of 0 here: only a cast gives it its size (check_cast). */
static const dt_type *resolve_ctype(checker *c, const dt_ctype_ref *r)
{
	const dt_type *t;
	uint32_t i = 0;

	/* string[N], buffer[N], inet[N]: the size of the type, not an array of it. */
	if (!r->typeof_e && !r->typeof_ty &&
	    (!strcmp(r->name, "string") || !strcmp(r->name, "buffer") ||
	     !strcmp(r->name, "inet"))) {
		bool sized = r->nmods && r->mods[0].is_array && !r->mods[0].n_omitted;
		uint32_t n = sized ? r->mods[0].n : 0;

		if (!strcmp(r->name, "string"))
			t = dt_type_str(sized ? n : str_size(c));
		else if (!strcmp(r->name, "buffer"))
			t = dt_type_buf(c->a, sized ? n : DT_STRLEN);
		else
			t = dt_type_new(c->a, DT_T_INET);
		i = sized;
	} else {
		t = resolve_base(c, r);
	}
	for (; t && i < r->nmods; i++) {
		const dt_type_mod *m = &r->mods[i];

		if (!m->is_array) {
			t = dt_type_ptr(c->a, t, DT_AS_NONE);
			continue;
		}
		if (t->kind == DT_T_VOID || dt_type_is_aggregation(t) || !t->size) {
			ERR(c, r->span, "an array of %s is not a type", tname(c, t));
			return NULL;
		}
		if ((uint64_t)t->size * (m->n_omitted ? 1 : m->n) > DT_MAX_VALUE_SIZE * 64) {
			ERR(c, r->span, "the array type %s[%u] is too large", tname(c, t), m->n);
			return NULL;
		}
		if (t->kind == DT_T_BOOL)
			t = dt_type_bool_elem();
		t = dt_type_array(c->a, t, m->n_omitted ? 0 : m->n);
	}
	return t;
}

/* The type of e (of type t) as written: a $variable declared with a type, or given integers of
 * one size only (`$y = (int32)x`), has that type, though it is stored in 8 bytes. */
static const dt_type *own_type(const dt_expr *e, const dt_type *t)
{
	if (!is_none(t) && e->kind == DT_E_VAR && e->var.sym) {
		const var_info *v = (const var_info *)e->var.sym;

		if (v->declared)
			return v->declared;
		if (t->kind == DT_T_INT && v->int_type && v->int_type->kind == DT_T_INT)
			return v->int_type;
	}
	return t;
}

/* The type of e in a type context (typeof, sizeof): a $variable declared with a type
 * (`let $x: uint16`) has that type there, though it is stored in 8 bytes. */
static const dt_type *context_type(checker *c, dt_expr *e)
{
	const dt_type *t = check_expr(c, e);

	while (e->kind == DT_E_BLOCK && e->block.value)
		e = e->block.value; /* `{ …; $a }`: $a's */
	return own_type(e, t);
}

/* The base type of r, before its modifiers. */
static const dt_type *resolve_base(checker *c, const dt_ctype_ref *r)
{
	const dt_type *t = NULL;
	if (r->typeof_ty)
		return resolve_ctype(c, r->typeof_ty);
	if (r->typeof_e) {
		/* Typed, never run: codegen does not see the expression. */
		t = context_type(c, r->typeof_e);
		return is_none(t) ? NULL : t;
	}
	/* bpftrace's bool, before C's (a uint8 in the table, for C definitions). */
	t = strcmp(r->name, "bool") ? NULL : dt_type_bool();
	for (size_t i = 0; i < DT_ARRAY_SIZE(int_names) && !t; i++)
		if (!strcmp(int_names[i].name, r->name))
			t = dt_type_int(int_names[i].is_signed, int_names[i].size);
	if (!t && !strcmp(r->name, "void"))
		t = dt_type_void();
	if (!t) {
		int err = c->o && c->o->ctype ? c->o->ctype(c->o->ctype_ctx, c->a, r->name, &t)
					      : -ENOENT;
		if (err) {
			if (err == -ENOENT)
				ERR(c, r->span, "unknown type '%s'", r->name);
			else
				ERR(c, r->span, "cannot look up type '%s': %s", r->name,
				    err == -ENODATA ? "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
						    : strerror(-err));
			if (err == -ENOENT && !strncmp(r->name, "struct ", 7))
				HINT(c, "%s", c->o && c->o->ctype
						? "kernel types come from BTF (/sys/kernel/btf)"
						: "only integer types are known here");
			else if (err == -ENOENT)
				HINT(c, "integer types: int8 … int64, uint8 … uint64");
			return NULL;
		}
	}
	return t;
}

dt_addrspace dt_expr_addrspace(const dt_expr *e)
{
	const dt_type *bt;
	switch (e->kind) {
	case DT_E_FIELD:
		bt = e->field.base->type;
		if (bt && bt->kind == DT_T_PTR)
			return bt->ptr.as;
		return e->field.base->kind == DT_E_BUILTIN ? DT_AS_NONE
							   : dt_expr_addrspace(e->field.base);
	case DT_E_DEREF:
		bt = e->un.e->type;
		return bt && bt->kind == DT_T_PTR ? bt->ptr.as : DT_AS_NONE;
	case DT_E_INDEX:
		bt = e->index.base->type;
		if (bt && bt->kind == DT_T_PTR)
			return bt->ptr.as;
		return dt_expr_addrspace(e->index.base);
	default:
		return DT_AS_NONE;
	}
}

/* The type of a value read from C memory in space `as`: char arrays read as strings (bpftrace's
 * rule) one byte longer than the array, so that all N chars of one that is full (`char s[5]`
 * holding "hello") print and the string still ends in a NUL; pointers remember the space they
 * were found in, enums are their integers already. */
static const dt_type *read_type(checker *c, const dt_type *t, dt_addrspace as)
{
	if (t->kind == DT_T_ARRAY && t->array.elem->kind == DT_T_INT && t->array.elem->size == 1 &&
	    t->array.n)
		return dt_type_str(t->array.n + 1);
	if (t->kind == DT_T_PTR && t->ptr.as != as && as != DT_AS_NONE)
		return dt_type_ptr(c->a, t->ptr.to, as);
	return t;
}

/* The C array a designator (member, *p, p[i]) names when it was read as a string (a char
 * array), else NULL: indexing it, sizeof and buf() see the array itself. */
static const dt_type *c_array_of(const dt_expr *e)
{
	const dt_type *t = NULL, *bt;
	if (!e->type || e->type->kind != DT_T_STR)
		return NULL;
	switch (e->kind) {
	case DT_E_FIELD:
		t = e->field.m ? e->field.m->type : NULL;
		break;
	case DT_E_DEREF:
		bt = e->un.e->type;
		t = bt && bt->kind == DT_T_PTR ? bt->ptr.to : NULL;
		break;
	case DT_E_INDEX:
		bt = e->index.base->type;
		t = bt && bt->kind == DT_T_PTR ? bt->ptr.to : bt && bt->kind == DT_T_ARRAY ?
		    bt->array.elem : NULL;
		break;
	default:
		break;
	}
	return t && t->kind == DT_T_ARRAY ? t : NULL;
}

typedef DT_VEC(const char *) name_vec;

/* Every member name of a struct, anonymous members' included: the "did you mean" candidates. */
static void member_names(const dt_type *t, name_vec *out)
{
	for (uint32_t i = 0; t && t->kind == DT_T_CSTRUCT && i < t->cstruct.n; i++) {
		const dt_member *m = &t->cstruct.members[i];
		if (m->name[0])
			DT_VEC_PUSH(out, m->name);
		else
			member_names(m->type, out);
	}
}

/* Looks `name` up in struct st; reports a located error with a suggestion when it is not there. */
static const dt_member *find_member(checker *c, const dt_type *st, const char *name, dt_span at,
				    uint32_t *off)
{
	const dt_member *m = dt_type_member(st, name, off);
	if (m)
		return m;
	ERR(c, at, "%s has no member '%s'", st->cstruct.name, name);
	if (dt_diag_hint_wanted(c->d)) {
		name_vec names = { 0 };
		member_names(st, &names);
		DT_VEC_PUSH(&names, NULL);
		const char *sugg = dt_closest(name, strlen(name), names.v);
		if (sugg)
			HINT(c, "did you mean '%s'?", sugg);
		free(names.v);
	}
	return NULL;
}

static const dt_type *check_cfield(checker *c, dt_expr *e, const dt_type *bt)
{
	const dt_type *st = NULL;
	/* bpftrace now reads `.` on a pointer to a struct as `->` (it dereferences). */
	if (!e->field.arrow && is_ptr(bt) && bt->ptr.to && bt->ptr.to->kind == DT_T_CSTRUCT)
		e->field.arrow = true;
	if (e->field.arrow && is_ptr(bt) && bt->ptr.to && bt->ptr.to->kind == DT_T_CSTRUCT)
		st = bt->ptr.to;
	else if (!e->field.arrow && bt->kind == DT_T_CSTRUCT)
		st = bt;
	if (!st) {
		ERR(c, e->span, "cannot access member '%s' with '%s' on %s", e->field.field,
		    e->field.arrow ? "->" : ".", tname(c, bt));
		if (e->field.arrow && bt->kind == DT_T_CSTRUCT)
			HINT(c, "it is a struct, not a pointer: use '.'");
		else if (!e->field.arrow && is_ptr(bt) && bt->ptr.to &&
			 bt->ptr.to->kind == DT_T_CSTRUCT)
			HINT(c, "it is a pointer: use '->'");
		else if (is_int(bt))
			HINT(c, "cast it to a struct pointer first: ((struct NAME *)x)->%s",
			     e->field.field);
		return &t_none;
	}
	if (!complete(c, st, e->field.base->span))
		return &t_none;
	uint32_t off;
	const dt_member *m = find_member(c, st, e->field.field, e->span, &off);
	if (!m)
		return &t_none;
	e->field.m = m;
	e->field.off = off;
	if (m->bit_size && !is_int(m->type)) {
		ERR(c, e->span, "bitfield '%s' of type %s is not supported", m->name,
		    tname(c, m->type));
		return &t_none;
	}
	return read_type(c, m->type, dt_expr_addrspace(e));
}

static const dt_type *check_deref(checker *c, dt_expr *e)
{
	const dt_type *t = check_expr(c, e->un.e);
	if (is_none(t))
		return &t_none;
	if (is_int(t)) {
		/* bpftrace: `*` of an integer reads the uint64 at that address (loads.bt's
		 * `*kaddr("avenrun")`), as `*(uint64 *)x` does. */
		dt_expr *x = dt_arena_alloc(c->a, sizeof(*x));
		x->kind = DT_E_CAST;
		x->span = e->un.e->span;
		x->cast.to = (dt_ctype_ref){ .name = "uint64", .nptr = 1, .span = e->un.e->span };
		x->cast.e = e->un.e;
		x->type = t = dt_type_ptr(c->a, dt_type_int(false, 8), DT_AS_NONE);
		e->un.e = x;
	}
	if (!is_ptr(t)) {
		ERR(c, e->span, "cannot dereference %s", tname(c, t));
		return &t_none;
	}
	if (!t->ptr.to) {
		ERR(c, e->span, "cannot dereference a void pointer");
		HINT(c, "cast it to a pointer to what it points at: *(uint64 *)x");
		return &t_none;
	}
	if (!complete(c, t->ptr.to, e->span))
		return &t_none;
	return read_type(c, t->ptr.to, t->ptr.as);
}

/* &$x: a pointer to where the variable lives (the BPF stack, or the frame map of a probe in
 * parts), read through as kernel memory, as bpftrace's current language defines it. */
static const dt_type *check_addrof(checker *c, dt_expr *e)
{
	dt_expr *v = e->un.e;
	if (v->kind != DT_E_VAR) {
		check_expr(c, v);
		ERR(c, e->span, "'&' takes the address of a $variable only");
		if (v->kind == DT_E_MAP)
			HINT(c, "copy the map's value into a $variable and take its address");
		return &t_none;
	}
	const dt_type *t = check_expr(c, v);
	if (is_none(t))
		return &t_none;
	/* The variable's slot is laid out as its own type (a string or tuple it holds may be
	 * narrower here than the widest it is given). */
	if (v->var.sym && v->var.sym->type && !is_none(v->var.sym->type))
		t = v->var.sym->type;
	return dt_type_ptr(c->a, t, DT_AS_KERNEL);
}

static const dt_type *check_index(checker *c, dt_expr *e)
{
	const dt_type *bt = check_expr(c, e->index.base), *it = check_expr(c, e->index.index);
	if (is_none(bt) || is_none(it))
		return &t_none;
	if (!is_int(it)) {
		ERR(c, e->index.index->span, "an index must be an integer, not %s", tname(c, it));
		return &t_none;
	}
	if (bt->kind == DT_T_TUPLE && !bt->tuple.names) {
		/* bpftrace's current language: $t[1 - 1] is $t.0; the index is known before the
		 * program runs. Rewritten in place, so both walks see the element access. */
		dt_expr *base = e->index.base, *ix = e->index.index;
		int64_t k;
		if (const_int(ix, &k))
			fold_int(ix, (uint64_t)k);
		if (ix->kind != DT_E_INT) {
			ERR(c, ix->span, "a tuple's index must be an integer constant");
			HINT(c, "its elements have types of their own: $t[0], $t[1 + 1], or $t.0");
			return &t_none;
		}
		if ((int64_t)ix->i.value < 0 || ix->i.value >= bt->tuple.n) {
			ERR(c, ix->span, "invalid tuple index %lld: the tuple has %u elements",
			    (long long)ix->i.value, bt->tuple.n);
			return &t_none;
		}
		e->kind = DT_E_TUPLE_GET;
		e->tget.base = base;
		e->tget.index = (uint32_t)ix->i.value;
		return bt->tuple.elems[e->tget.index];
	}
	const dt_type *el, *arr = c_array_of(e->index.base);
	if (arr) /* a char array: indexed as the array it is */
		bt = e->index.base->type = arr;
	if (is_ptr(bt) && bt->ptr.to) {
		el = bt->ptr.to;
	} else if (bt->kind == DT_T_ARRAY) {
		el = bt->array.elem;
		/* A flexible array member (`int y[0]`, `int y[]`) has no bound to check. */
		if (e->index.index->kind == DT_E_INT && bt->array.n &&
		    e->index.index->i.value >= bt->array.n) {
			/* bpftrace's words, which scripts and tests look for. */
			ERR(c, e->index.index->span, "the index %llu is out of bounds for array of "
			    "size %u", (unsigned long long)e->index.index->i.value, bt->array.n);
			return &t_none;
		}
	} else if (bt->kind == DT_T_STR) {
		/* bpftrace's current language: a string's bytes, as int8 (0 past its end). */
		if (e->index.index->kind == DT_E_INT && e->index.index->i.value >= bt->size) {
			ERR(c, e->index.index->span, "the index %llu is out of bounds for %s",
			    (unsigned long long)e->index.index->i.value, tname(c, bt));
			return &t_none;
		}
		return dt_type_int(true, 1);
	} else {
		ERR(c, e->span, "cannot index %s", tname(c, bt));
		return &t_none;
	}
	if (!complete(c, el, e->span))
		return &t_none;
	if (!el->size) {
		ERR(c, e->span, "cannot index %s: its elements have no size", tname(c, bt));
		return &t_none;
	}
	return read_type(c, el, dt_expr_addrspace(e));
}

/* bpftrace's array casts, between integers and arrays of integers of the same size: the bytes
 * as they are in memory (little-endian here), `(int8[8])12345`, `(uint64)$a`; `(uint8[])x`
 * takes the number of elements from x's size. */
static const dt_type *check_array_cast(checker *c, dt_expr *e, const dt_type *from,
				       const dt_type *to)
{
	const dt_type *arr = to->kind == DT_T_ARRAY ? to : from;
	const dt_type *other = arr == to ? from : to;
	const dt_type *el = arr->array.elem;

	/* An array of integers (or bools) to another: the same bytes seen another way. */
	if (other->kind == DT_T_ARRAY && (is_int(other->array.elem) ||
					  other->array.elem->kind == DT_T_BOOL))
		other = dt_type_int(false, 8);
	if (!is_int(el) && el->kind != DT_T_BOOL) {
		ERR(c, e->span, "cannot cast %s to %s: array casts are between integers and arrays "
		    "of integers", tname(c, from), tname(c, to));
		return &t_none;
	}
	if (!is_int(other)) {
		ERR(c, e->span, "cannot cast %s to %s: an array of integers is cast from or to an "
		    "integer", tname(c, from), tname(c, to));
		return &t_none;
	}
	if (arr == to && !to->array.n) {
		if (from->size % el->size) {
			ERR(c, e->span, "cannot cast %s (%u byte%s) to an array of %s: the size is "
			    "not a multiple of %u", tname(c, from), from->size,
			    from->size == 1 ? "" : "s", tname(c, el), el->size);
			return &t_none;
		}
		return dt_type_array(c->a, el, from->size / el->size);
	}
	if (from->size != to->size) {
		ERR(c, e->span, "cannot cast %s (%u bytes) to %s (%u bytes): an array cast keeps "
		    "the size", tname(c, from), from->size, tname(c, to), to->size);
		if (arr == to)
			HINT(c, "`[]` takes the number of elements from the value: (%s[])",
			     tname(c, el));
		return &t_none;
	}
	return to;
}

static const dt_type *check_cast(checker *c, dt_expr *e)
{
	const dt_type *to = resolve_ctype(c, &e->cast.to);
	const dt_type *from = check_expr(c, e->cast.e);
	if (!to || is_none(from))
		return &t_none;
	/* A char array member read as a string is its array here, and the bytes of a string
	 * or of pton()'s buffer are an array of uint8 (bpftrace's types for them). */
	if (to->kind == DT_T_ARRAY || to->kind == DT_T_INT) {
		if (c_array_of(e->cast.e))
			from = c_array_of(e->cast.e);
		else if (to->kind == DT_T_ARRAY && from->kind == DT_T_STR)
			from = dt_type_array(c->a, dt_type_int(false, 1), from->size);
		else if (from->kind == DT_T_BUF && e->cast.e->kind == DT_E_CALL &&
			 e->cast.e->call.id == DT_F_PTON)
			from = dt_type_array(c->a, dt_type_int(false, 1), from->size - 1);
	}
	if (to->kind == DT_T_ARRAY || (from->kind == DT_T_ARRAY && to->kind == DT_T_INT))
		return check_array_cast(c, e, from, to);
	if ((to->kind == DT_T_STR && from->kind == DT_T_STR) ||
	    (to->kind == DT_T_BUF && from->kind == DT_T_BUF))
		return to; /* resized: cut or zero-padded */
	if (to->kind == DT_T_STR || to->kind == DT_T_BUF) {
		ERR(c, e->span, "cannot cast %s to %s", tname(c, from), tname(c, to));
		HINT(c, "%s", to->kind == DT_T_STR ? "str(ADDRESS[, N]) reads a string from memory"
						   : "buf(ADDRESS, N) reads bytes from memory");
		return &t_none;
	}
	if (to->kind == DT_T_VOID || to->kind == DT_T_CSTRUCT || to->kind == DT_T_ARRAY) {
		ERR(c, e->cast.to.span, "cannot cast to %s", tname(c, to));
		if (to->kind == DT_T_CSTRUCT)
			HINT(c, "cast to a pointer: (%s *)", tname(c, to));
		return &t_none;
	}
	if (!is_intlike(from)) {
		ERR(c, e->cast.e->span, "cannot cast %s to %s", tname(c, from), tname(c, to));
		return &t_none;
	}
	/* In the current language a signed integer narrower than a pointer (a literal is its
	 * smallest type: `-1` is an int8) becomes one zero-extended, as LLVM's inttoptr in current
	 * bpftrace: `(uint8 *)-1` is 0xff. The unsigned cast put between makes both walks agree. */
	const dt_type *own = is_int(from) ? literal_type(c, e->cast.e, own_type(e->cast.e, from))
					  : from;
	if (c->current && is_ptr(to) && is_int(own) && own->is_signed && own->size < 8) {
		static const char *const uint_names[] = { [1] = "uint8", [2] = "uint16",
							  [4] = "uint32" };
		dt_expr *narrow = new_node(c, DT_E_CAST, e->cast.e->span);
		narrow->cast.to = (dt_ctype_ref){ .name = uint_names[own->size],
						  .span = e->cast.e->span };
		narrow->cast.e = e->cast.e;
		e->cast.e = narrow;
		if (is_none(check_expr(c, narrow)))
			return &t_none;
	}
	/* A pointer cast keeps the space of the pointer it came from (kptr/uptr aside). */
	if (is_ptr(to) && is_ptr(from) && from->ptr.as != DT_AS_NONE)
		return dt_type_ptr(c->a, to->ptr.to, from->ptr.as);
	return to;
}

static const dt_type *check_sizeof(checker *c, dt_expr *e)
{
	const dt_type *t;
	int64_t k;
	if (e->kind == DT_E_SIZEOF && e->size.ty.name && !e->size.ty.nmods &&
	    !e->size.ty.typeof_e && !e->size.ty.typeof_ty && !strchr(e->size.ty.name, ' ') && !is_int_name(e->size.ty.name) && c->o &&
	    c->o->constant && c->o->ctype &&
	    c->o->ctype(c->o->ctype_ctx, c->a, e->size.ty.name, &t) == -ENOENT &&
	    c->o->constant(c->o->ctype_ctx, c->a, e->size.ty.name, &k, NULL) == 0) {
		/* sizeof(NAME) of an enum value or a #define: the size of its integer. */
		fold_int(e, 8);
		return dt_type_int(false, 8);
	}
	if (e->size.ty.name) {
		t = resolve_ctype(c, &e->size.ty);
		if (!t)
			return &t_none;
	} else {
		t = context_type(c, e->size.e);
		if (is_none(t))
			return &t_none;
		if (c_array_of(e->size.e))
			t = c_array_of(e->size.e);
	}
	if (!complete(c, t, e->span))
		return &t_none;
	uint64_t v;
	if (e->kind == DT_E_OFFSETOF) {
		/* offsetof(TYPE or EXPR, a.b.c): the members' offsets added up. */
		dt_span at = e->size.ty.name ? e->size.ty.span : e->size.e->span;
		const char *path = e->size.field;
		v = 0;
		while (path) {
			const char *dot = strchr(path, '.');
			const char *name = dot ? dt_arena_strndup(c->a, path, (size_t)(dot - path))
					       : path;
			uint32_t off;
			if (t->kind != DT_T_CSTRUCT) {
				ERR(c, at, "offsetof needs a struct or union, not %s", tname(c, t));
				return &t_none;
			}
			if (!complete(c, t, e->span))
				return &t_none;
			const dt_member *m = find_member(c, t, name, e->span, &off);
			if (!m)
				return &t_none;
			v += off;
			t = m->type;
			path = dot ? dot + 1 : NULL;
		}
	} else {
		if (t->kind == DT_T_VOID || t->kind == DT_T_RECORD || dt_type_is_aggregation(t) ||
		    (t->kind == DT_T_ARRAY && !t->array.n)) {
			ERR(c, e->span, "sizeof cannot measure %s", tname(c, t));
			return &t_none;
		}
		v = t->kind == DT_T_BOOL ? 1 : t->size; /* a bool is a byte, though held in 8 */
	}
	/* A constant from here on (both walks see the folded node). */
	fold_int(e, v);
	return dt_type_int(false, 8);
}

/* A tracepoint field declared as a pointer ("struct __kernel_timespec * rqtp") keeps its C
 * type when the type source knows the pointee, so `args->rqtp->tv_sec` reads through it (user
 * memory for syscall arguments, kernel memory otherwise). NULL: it stays an integer. */
static const dt_type *tp_pointer_type(checker *c, const dt_tp_field *f)
{
	if (!f->ctype || f->is_array || f->size != 8 || !c->o || !c->o->ctype)
		return NULL;
	/* Every '*' is a level of pointer, wherever it stands ("const char *const * argv");
	 * qualifiers and sparse annotations name no type, so the words left name the base. */
	static const char *const skip[] = { "const", "volatile", "__user", "restrict", NULL };
	char base[128];
	size_t n = 0;
	uint32_t nptr = 0;
	for (const char *p = f->ctype; *p;) {
		if (*p == '*' || isspace((unsigned char)*p)) {
			nptr += *p++ == '*';
			continue;
		}
		size_t w = 0;
		while (p[w] && p[w] != '*' && !isspace((unsigned char)p[w]))
			w++;
		bool qual = false;
		for (const char *const *k = skip; *k && !qual; k++)
			qual = strlen(*k) == w && !strncmp(p, *k, w);
		if (!qual) {
			if (n + w + 1 >= sizeof(base))
				return NULL;
			if (n)
				base[n++] = ' ';
			memcpy(base + n, p, w);
			n += w;
		}
		p += w;
	}
	if (!nptr || !n)
		return NULL;
	dt_ctype_ref r = { .name = dt_arena_strndup(c->a, base, n), .nptr = nptr };
	const dt_type *t = NULL;
	for (size_t i = 0; i < DT_ARRAY_SIZE(int_names) && !t; i++)
		if (!strcmp(int_names[i].name, r.name))
			t = dt_type_int(int_names[i].is_signed, int_names[i].size);
	if (!t && strcmp(r.name, "void") && c->o->ctype(c->o->ctype_ctx, c->a, r.name, &t))
		return NULL;
	dt_addrspace as = !strcmp(c->probe->attach[0]->target, "syscalls") ? DT_AS_USER
									    : DT_AS_KERNEL;
	for (uint32_t i = 0; i < nptr; i++)
		t = dt_type_ptr(c->a, t, as);
	return t;
}

/* Whether two C type names of tracepoint fields are one type to a reader: `const` and
 * `volatile` aside ("const struct __kernel_timespec *" in sys_enter_clock_nanosleep,
 * "struct __kernel_timespec *" in sys_enter_nanosleep: naptime.bt reads both). */
static bool same_ctype(const char *x, const char *y)
{
	for (;;) {
		const char *s[2] = { x, y };
		for (int k = 0; k < 2; k++) {
			for (;;) {
				while (*s[k] == ' ')
					s[k]++;
				size_t n = strspn(s[k], "abcdefghijklmnopqrstuvwxyz");
				if ((n == 5 && !strncmp(s[k], "const", 5)) ||
				    (n == 8 && !strncmp(s[k], "volatile", 8)))
					s[k] += n;
				else
					break;
			}
		}
		x = s[0];
		y = s[1];
		if (!*x || !*y)
			return !*x && !*y;
		/* One word or character at a time, spaces between words seen as one. */
		if (*x != *y)
			return false;
		bool word = isalnum((unsigned char)*x) || *x == '_';
		do {
			x++;
			y++;
		} while (word && *x && *x == *y && (isalnum((unsigned char)*x) || *x == '_'));
		if (word && (isalnum((unsigned char)*x) || *x == '_' || isalnum((unsigned char)*y) ||
			     *y == '_'))
			return false;
	}
}

static const dt_type *check_field(checker *c, dt_expr *e)
{
	dt_expr *b = e->field.base;
	if (b->kind != DT_E_BUILTIN || b->builtin.id != DT_B_ARGS) {
		const dt_type *bt = check_expr(c, b);
		if (is_none(bt))
			return &t_none;
		if (bt->kind == DT_T_TUPLE && bt->tuple.names) {
			/* A record's field: from here on the element it is. */
			int j = dt_record_index(bt, e->field.field);
			if (j < 0) {
				ERR(c, e->span, "the record %s has no field '%s'", tname(c, bt),
				    e->field.field);
				return &t_none;
			}
			e->kind = DT_E_TUPLE_GET;
			e->tget.base = b;
			e->tget.index = (uint32_t)j;
			return bt->tuple.elems[j];
		}
		return check_cfield(c, e, bt);
	}
	c->args_base = true;
	const dt_type *r = check_expr(c, b);
	c->args_base = false;
	if (is_none(r))
		return &t_none;
	if (r->kind == DT_T_CSTRUCT) {
		/* A uprobe's parameters: `args.n` and bpftrace 0.17's `args->n` alike. */
		uint32_t off;
		const dt_member *m = dt_type_member(r, e->field.field, &off);
		if (!m) {
			ERR(c, e->span, "function %s has no parameter '%s'", c->probe->attach[0]->func,
			    e->field.field);
			if (dt_diag_hint_wanted(c->d)) {
				name_vec names = { 0 };
				member_names(r, &names);
				DT_VEC_PUSH(&names, NULL);
				const char *s = dt_closest(e->field.field, strlen(e->field.field),
							   names.v);
				if (s)
					HINT(c, "did you mean '%s'?", s);
				free(names.v);
			}
			return &t_none;
		}
		if (off / 8 >= DT_ARG_REGS || !is_intlike(m->type)) {
			ERR(c, e->span, "parameter '%s' (%s) is not passed in a register", m->name,
			    tname(c, m->type));
			return &t_none;
		}
		e->field.m = m;
		e->field.off = off;
		return m->type;
	}
	const dt_tp_field *f = NULL;
	for (uint32_t i = 0; i < r->record.nfields; i++)
		if (!strcmp(r->record.fields[i].name, e->field.field))
			f = &r->record.fields[i];
	if (!f) {
		ERR(c, e->span, "tracepoint %s:%s has no field '%s'", r->record.subsys,
		    r->record.event, e->field.field);
		if (!dt_diag_hint_wanted(c->d))
			return &t_none;
		const char **names = dt_arena_alloc(c->a, sizeof(char *) * (r->record.nfields + 1));
		for (uint32_t i = 0; i < r->record.nfields; i++)
			names[i] = r->record.fields[i].name;
		const char *s = dt_closest(e->field.field, strlen(e->field.field), names);
		if (s)
			HINT(c, "did you mean '%s'?", s);
		return &t_none;
	}
	/* Every tracepoint of the probe must have the field, with one type; where its offset
	 * differs, each attach point gets its own program (dt_attach.own_prog). */
	const char *root = tracefs(c);
	bool moved = false;
	for (uint32_t i = 0; root && i < c->probe->nattach; i++) {
		dt_attach *a = c->probe->attach[i];
		const dt_tp_field *fi = NULL;
		if (!a->tp_record) {
			dt_type *ri;
			if (i == 0)
				a->tp_record = r;
			else if (!dt_tracefs_record(c->a, root, a->target, a->func, &ri))
				a->tp_record = ri;
			else
				continue; /* an unknown tracepoint is reported at its attach point */
		}
		for (uint32_t j = 0; j < a->tp_record->record.nfields; j++)
			if (!strcmp(a->tp_record->record.fields[j].name, f->name))
				fi = &a->tp_record->record.fields[j];
		if (!fi) {
			ERR(c, e->span, "tracepoint %s:%s has no field '%s' (%s:%s has it)",
			    a->target, a->func, f->name, r->record.subsys, r->record.event);
			HINT(c, "every tracepoint of a probe must have the fields it reads; split "
				"the probe");
			return &t_none;
		}
		if (fi->size != f->size || fi->is_signed != f->is_signed ||
		    fi->is_string != f->is_string || fi->is_data_loc != f->is_data_loc ||
		    fi->is_array != f->is_array || !same_ctype(fi->ctype, f->ctype)) {
			ERR(c, e->span, "field '%s' has type '%s' in %s:%s and '%s' in %s:%s",
			    f->name, f->ctype, r->record.subsys, r->record.event, fi->ctype,
			    a->target, a->func);
			return &t_none;
		}
		moved |= fi->offset != f->offset;
	}
	for (uint32_t i = 0; moved && i < c->probe->nattach; i++)
		c->probe->attach[i]->own_prog = true;
	e->field.tp = f;
	if (f->is_string)
		return dt_type_str(f->is_array && !f->is_data_loc ? f->size : str_size(c));
	const dt_type *pt = tp_pointer_type(c, f);
	if (pt)
		return pt;
	if (f->is_array || !(f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)) {
		ERR(c, e->span, "field '%s' has type '%s', which is not supported", f->name, f->ctype);
		HINT(c, "integers and strings are; arrays other than char arrays are not yet");
		return &t_none;
	}
	/* A field of enum type ("enum skb_drop_reason reason") prints by name. */
	const dt_type *et;
	if (f->ctype && !strncmp(f->ctype, "enum ", 5) && !strchr(f->ctype, '*') && c->o &&
	    c->o->ctype && !c->o->ctype(c->o->ctype_ctx, c->a, f->ctype, &et) &&
	    et->kind == DT_T_INT)
		return dt_type_int_enum(c->a, f->is_signed, f->size, et->enm);
	return dt_type_int(f->is_signed, f->size);
}

/* ---------------------------------------------------------------- positional parameters */

/* The text of $n, "" when it was not given. */
static const char *posparam_text(checker *c, uint32_t n)
{
	if (!c->o || !c->o->params || n > c->o->nparams || !c->o->params[n - 1])
		return "";
	return c->o->params[n - 1];
}

/* Makes the positional parameter `e` the string literal of its text, whatever it looks like:
 * str($1), buf($1, …) and friends take the parameter as written ("1" stays "1"). */
static const dt_type *posparam_as_str(checker *c, dt_expr *e)
{
	const char *s = posparam_text(c, e->posparam.n);
	e->kind = DT_E_STR;
	e->str.len = (uint32_t)strlen(s);
	e->str.s = dt_arena_strndup(c->a, s, e->str.len);
	e->type = dt_type_str(e->str.len + 1);
	return e->type;
}

/* An argument that takes a string: a positional parameter there is its text ($1 given as 1 is
 * "1"), and `$1 + N` is its text from the Nth byte on, as bpftrace has it. */
static void posparam_str_arg(checker *c, dt_expr *arg)
{
	if (arg->kind == DT_E_POSPARAM && arg->posparam.n) {
		posparam_as_str(c, arg);
		return;
	}
	/* str($1) where a literal is wanted (kaddr(str($1))): the parameter's text. */
	if (arg->kind == DT_E_CALL && arg->call.id == DT_F_STR && arg->call.nargs == 1 &&
	    arg->call.args[0]->kind == DT_E_POSPARAM && arg->call.args[0]->posparam.n) {
		dt_expr *p = arg->call.args[0];
		posparam_as_str(c, p);
		*arg = *p;
		return;
	}
	if (arg->kind == DT_E_BINOP && arg->bin.op == DT_OP_ADD &&
	    arg->bin.l->kind == DT_E_POSPARAM && arg->bin.l->posparam.n &&
	    arg->bin.r->kind == DT_E_INT) {
		const char *s = posparam_text(c, arg->bin.l->posparam.n);
		size_t len = strlen(s), skip = arg->bin.r->i.value < len ? arg->bin.r->i.value : len;
		arg->kind = DT_E_STR;
		arg->str.len = (uint32_t)(len - skip);
		arg->str.s = dt_arena_strndup(c->a, s + skip, arg->str.len);
	}
}

/* ---------------------------------------------------------------- calls */

static uint32_t add_event(checker *c, dt_func f, const dt_expr *call, const char *fmt,
			  const dt_type *args)
{
	if (!c->d)
		return 0; /* the collecting walk registers nothing */
	dt_event_desc ev = { .func = f, .call = call, .fmt = fmt, .args = args };
	DT_VEC_PUSH(&c->events, ev);
	return (uint32_t)c->events.n - 1;
}

static bool nargs_ok(checker *c, dt_expr *e, uint32_t min, uint32_t max, const char *form)
{
	if (e->call.nargs >= min && e->call.nargs <= max)
		return true;
	ERR(c, e->span, "%s takes %s%u argument%s, %u given", e->call.name,
	    min == max ? "" : e->call.nargs < min ? "at least " : "at most ",
	    e->call.nargs < min ? min : max, (e->call.nargs < min ? min : max) == 1 ? "" : "s",
	    e->call.nargs);
	HINT(c, "usage: %s", form);
	return false;
}

/* Checks one printf conversion against an argument type; `conv` is the conversion letter. */
static bool printf_arg_ok(char conv, const dt_type *t)
{
	switch (conv) {
	case 's':
		return t->kind == DT_T_STR || t->kind == DT_T_INT || t->kind == DT_T_STACK ||
		       t->kind == DT_T_KSYM || t->kind == DT_T_USYM || t->kind == DT_T_USERNAME ||
		       t->kind == DT_T_TIMESTAMP || t->kind == DT_T_INET ||
		       t->kind == DT_T_CGROUP_PATH || t->kind == DT_T_MACADDR ||
		       t->kind == DT_T_STRERROR || t->kind == DT_T_BOOL;
	case 'p':
		return t->kind == DT_T_INT || t->kind == DT_T_KSYM || t->kind == DT_T_USYM ||
		       t->kind == DT_T_PTR;
	case 'r':
		return t->kind == DT_T_BUF;
	default:
		return t->kind == DT_T_INT || t->kind == DT_T_PTR || t->kind == DT_T_BOOL;
	}
}

/* The source span of decoded characters [from, to) of a string literal, so a printf error can
 * underline the conversion itself. Walks the literal's escapes the way the lexer decoded them. */
static dt_span literal_span(checker *c, const dt_expr *lit, uint32_t from, uint32_t to)
{
	const dt_source *src = dt_diags_source(c->d);
	if (!src || lit->span.off + lit->span.len > src->len)
		return lit->span;
	const char *t = src->text;
	uint32_t i = lit->span.off + 1, end = lit->span.off + lit->span.len, k = 0, start = i;
	while (i < end && k < to) {
		if (k == from)
			start = i;
		if (t[i] == '\\' && i + 1 < end) {
			i += 2;
			if (t[i - 1] == 'x')
				for (int n = 0; n < 2 && i < end && isxdigit((unsigned char)t[i]); n++)
					i++;
			else if (t[i - 1] >= '0' && t[i - 1] <= '7')
				for (int n = 0; n < 2 && i < end && t[i] >= '0' && t[i] <= '7'; n++)
					i++;
		} else {
			i++;
		}
		k++;
	}
	if (k < to || start >= i)
		return lit->span;
	return (dt_span){ start, i - start };
}

/* A printf-style format's dialect: what may stand between a '%' and its conversion letter, and
 * which letters it takes. printf (also cat and system) formats in userspace; debugf's go to the
 * kernel's bpf_trace_printk, whose parser (bpf_bprintf_prepare) takes less. */
typedef struct fmt_dialect {
	const char *name;   /* in messages: "invalid NAME conversion" */
	const char *flags;  /* flag characters */
	bool precision;     /* ".N" after the width */
	const char *mods;   /* length modifier letters, each up to twice (l, ll, h, hh) */
	const char *mods1;  /* length modifier letters written once only (j, z, t: C's intmax_t,
	                     * size_t and ptrdiff_t, 64 bits here) */
	const char *plain;  /* conversions without a modifier */
	const char *modded; /* conversions with one */
	bool r_suffix;      /* bpftrace's letters after a conversion: %rx, %rh (how %r prints a
	                     * buffer), %gr (GFP flags) */
	const char *hint;   /* what the dialect takes, after an invalid conversion */
} fmt_dialect;

static const fmt_dialect printf_fmt = {
	"printf", "-+ 0#", true, "lh", "jzt", "diuxXoscpr", "duxXoi", true,
	"supported: %d %i %u %x %X %o %s %p %c %r (%rx %rh), %gr (GFP flags), with l/ll/h/hh/j/z/t "
	"on integer conversions, flags -+ 0#, width and precision; %% for a '%'",
};

static const fmt_dialect debugf_fmt = {
	"debugf", "0+- ", false, "l", "", "diuxXscp", "diuxX", false,
	"bpf_trace_printk takes %d %i %u %x %X (with l or ll), %s, %c and %p, with flags 0+- and "
	"a width",
};

/* The next conversion of call e's format literal fe from *pos on, in dialect d: its letter, with
 * [*start, *pos) its text ('%' to the letter). Returns 0 at the end of the format; after an
 * invalid conversion, or one with no argument left (argi: the argument it takes), reports it and
 * returns -1. */
static int next_conversion(checker *c, dt_expr *e, dt_expr *fe, const fmt_dialect *d,
			   uint32_t argi, uint32_t *pos, uint32_t *start, char *conv)
{
	const char *s = fe->str.s;
	uint32_t n = fe->str.len, i = *pos;

	for (; i < n; i++) {
		if (s[i] != '%')
			continue;
		*start = i++;
		if (i < n && s[i] == '%')
			continue;
		while (i < n && strchr(d->flags, s[i]))
			i++;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		if (d->precision && i < n && s[i] == '.') {
			i++;
			while (i < n && isdigit((unsigned char)s[i]))
				i++;
		}
		int mods = 0;
		char mod = i < n && s[i] && strchr(d->mods, s[i]) ? s[i] : 0;
		while (mod && i < n && s[i] == mod && mods < 2) {
			i++;
			mods++;
		}
		if (!mod && i < n && s[i] && strchr(d->mods1, s[i])) {
			i++;
			mods++;
		}
		char cv = i < n ? s[i] : 0;
		if (d->r_suffix && cv == 'r' && !mods && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'h'))
			i++;
		/* %gr: GFP flags, an integer's; a length modifier changes nothing (bpftrace's). */
		bool gr = d->r_suffix && cv == 'g' && i + 1 < n && s[i + 1] == 'r';
		if (gr)
			i++;
		if (!cv || (!gr && !strchr(mods ? d->modded : d->plain, cv))) {
			ERR(c, literal_span(c, fe, *start, i + (cv ? 1 : 0)),
			    "invalid %s conversion '%.*s'", d->name, (int)(i - *start + (cv ? 1 : 0)),
			    s + *start);
			HINT(c, "%s", d->hint);
			return -1;
		}
		if (argi >= e->call.nargs) {
			ERR(c, literal_span(c, fe, *start, i + 1),
			    "%s format has more conversions than arguments (%u given)",
			    e->call.name, e->call.nargs - 1);
			return -1;
		}
		*conv = cv;
		*pos = i + 1;
		return 1;
	}
	*pos = i;
	return 0;
}

/* After a format's conversions took argi - 1 arguments: an error at the first one left over. */
static bool args_left_over(checker *c, dt_expr *e, uint32_t argi)
{
	if (argi >= e->call.nargs)
		return false;
	ERR(c, e->call.args[argi]->span, "%s has %u argument%s but its format has %u conversion%s",
	    e->call.name, e->call.nargs - 1, e->call.nargs == 2 ? "" : "s", argi - 1,
	    argi == 2 ? "" : "s");
	return true;
}

/* printf, cat and system: a format string literal and the arguments of its conversions. */
static const dt_type *check_printf(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 1, 64, dt_arena_printf(c->a, "%s(\"format\", args…)", e->call.name)))
		return dt_type_void();
	dt_expr *fe = e->call.args[0];
	if (fe->kind != DT_E_STR) {
		check_expr(c, fe);
		ERR(c, fe->span, "%s's format must be a string literal", e->call.name);
		return dt_type_void();
	}
	fe->type = dt_type_str(fe->str.len + 1);
	const dt_type **at = dt_arena_alloc(c->a, sizeof(*at) * e->call.nargs);
	bool ok = true;
	for (uint32_t i = 1; i < e->call.nargs; i++) {
		at[i - 1] = check_expr(c, e->call.args[i]);
		if (is_none(at[i - 1]))
			ok = false;
	}
	uint32_t argi = 1, pos = 0, start;
	char conv;
	int r;
	while ((r = next_conversion(c, e, fe, &printf_fmt, argi, &pos, &start, &conv)) > 0) {
		const dt_type *t = at[argi - 1];
		if (!is_none(t) && !printf_arg_ok(conv, t)) {
			ERR(c, e->call.args[argi]->span, "printf conversion '%%%.*s' needs %s, not %s",
			    conv == 'g' ? 2 : 1, conv == 'g' ? "gr" : &conv, conv == 's' ? "a printable value" : conv == 'r' ? "a buffer (buf())" :
			    "an integer", tname(c, t));
			NOTE(c, literal_span(c, fe, start, pos), "the conversion is here");
			ok = false;
		}
		argi++;
	}
	if (r < 0 || args_left_over(c, e, argi) || !ok)
		return dt_type_void();
	/* An integer keeps its own size, so %x of an int32 prints 32 bits (as bpftrace does);
	 * the conversion's length modifier, if any, still decides (output/format.c). */
	for (uint32_t i = 0; i + 1 < e->call.nargs; i++)
		at[i] = at[i]->kind == DT_T_INT ? own_type(e->call.args[i + 1], at[i])
						: storage_type(c, at[i]);
	e->call.args_type = dt_type_tuple(c->a, at, e->call.nargs - 1);
	if (e->call.args_type->size > c->lim.event) {
		ERR(c, e->span, "the arguments of this %s are %u bytes; one %s can send at "
		    "most %u bytes", e->call.name, e->call.args_type->size, e->call.name,
		    c->lim.event);
		HINT(c, "split it into several %s calls", e->call.name);
		return dt_type_void();
	}
	e->call.event_id = add_event(c, e->call.id, e, fe->str.s, e->call.args_type);
	return dt_type_void();
}

/* debugf("format", args…): bpf_trace_printk, whose kernel side (bpf_bprintf_prepare) takes at
 * most three arguments and the conversions of debugf_fmt. The line goes to the kernel's trace
 * buffer (tracefs `trace`, `trace_pipe`). */
static const dt_type *check_debugf(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 1, 4, "debugf(\"format\", up to 3 args)"))
		return dt_type_void();
	dt_expr *fe = e->call.args[0];
	if (fe->kind != DT_E_STR) {
		check_expr(c, fe);
		ERR(c, fe->span, "debugf's format must be a string literal");
		return dt_type_void();
	}
	fe->type = dt_type_str(fe->str.len + 1);
	uint32_t argi = 1, pos = 0, start;
	char conv;
	int r;
	while ((r = next_conversion(c, e, fe, &debugf_fmt, argi, &pos, &start, &conv)) > 0) {
		dt_expr *a = e->call.args[argi++];
		const dt_type *t = check_expr(c, a);
		if (!is_none(t) && (conv == 's' ? t->kind != DT_T_STR : !is_intlike(t))) {
			ERR(c, a->span, "debugf conversion '%%%c' needs %s, not %s", conv,
			    conv == 's' ? "a string" : "an integer", tname(c, t));
			NOTE(c, literal_span(c, fe, start, pos), "the conversion is here");
		}
	}
	if (r < 0)
		return dt_type_void();
	for (uint32_t i = argi; i < e->call.nargs; i++)
		check_expr(c, e->call.args[i]);
	args_left_over(c, e, argi);
	return dt_type_void();
}

/* The first argument of a call that takes a string known at compile time (pton, kaddr, reg,
 * cgroupid): a literal, or a positional parameter's text; NULL after an error otherwise. */
static dt_expr *literal_arg(checker *c, dt_expr *e, const char *what)
{
	dt_expr *a0 = e->call.args[0];
	posparam_str_arg(c, a0);
	check_expr(c, a0);
	if (a0->kind == DT_E_STR)
		return a0;
	ERR(c, a0->span, "%s needs %s as a string literal", e->call.name, what);
	return NULL;
}

/* is_integer(e), is_str(e), …: the answer about e's type, a bool literal (e never runs). */
static const dt_type *check_type_question(checker *c, dt_expr *e)
{
	char usage[64];
	snprintf(usage, sizeof(usage), "%s(expression)", e->call.name);
	if (!nargs_ok(c, e, 1, 1, usage))
		return &t_none;
	dt_expr *a0 = e->call.args[0];
	bool literal = a0->kind == DT_E_INT || a0->kind == DT_E_STR; /* 1, true, "hello" */
	const dt_type *t = check_expr(c, a0);
	if (is_none(t))
		return &t_none;
	bool v = false;
	switch (e->call.id) {
	case DT_F_IS_INTEGER: v = t->kind == DT_T_INT; break;
	case DT_F_IS_UNSIGNED_INTEGER: v = t->kind == DT_T_INT && !t->is_signed; break;
	case DT_F_IS_STR: v = t->kind == DT_T_STR; break;
	case DT_F_IS_PTR: v = t->kind == DT_T_PTR; break;
	case DT_F_IS_ARRAY: v = t->kind == DT_T_ARRAY; break;
	default: v = literal; break;
	}
	fold_int(e, v);
	e->i.is_bool = true;
	return dt_type_bool();
}

/* static_assert(cond, "msg"): cond must fold to a constant; false is an error with msg. */
static const dt_type *check_static_assert(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 2, 2, "static_assert(condition, \"message\")"))
		return dt_type_void();
	dt_expr *a0 = e->call.args[0], *a1 = e->call.args[1];
	const dt_type *t = check_expr(c, a0);
	check_expr(c, a1);
	if (is_none(t))
		return dt_type_void();
	if (a1->kind != DT_E_STR) {
		ERR(c, a1->span, "static_assert needs its message as a string literal");
		return dt_type_void();
	}
	if (a0->kind != DT_E_INT) {
		ERR(c, a0->span, "static_assert needs a condition known before the program runs");
		return dt_type_void();
	}
	if (!a0->i.value)
		ERR(c, e->span, "%s", a1->str.s);
	return dt_type_void();
}

/* ---------------------------------------------------------------- named parameters */

/* The value given for option `name` ("--name" or "--name=value") after `--`: *v the text after
 * '=', NULL for a bare "--name". False when the option is not given. */
static bool named_param(checker *c, const char *name, const char **v)
{
	size_t n = strlen(name);
	for (uint32_t i = 0; c->o && i < c->o->nnamed; i++) {
		const char *s = c->o->named[i] + 2;
		if (strncmp(s, name, n) || (s[n] && s[n] != '='))
			continue;
		*v = s[n] ? s + n + 1 : NULL;
		return true;
	}
	return false;
}

/* getopt("name"[, default[, "description"]]): the option's value from the command line, else
 * the default, as a literal of the default's type (int, string, bool; bool without a default). */
static const dt_type *check_getopt(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 1, 3, "getopt(\"name\"[, default[, \"description\"]])"))
		return &t_none;
	dt_expr *a0 = literal_arg(c, e, "the option's name");
	if (!a0)
		return &t_none;
	dt_expr *def = e->call.nargs > 1 ? e->call.args[1] : NULL;
	const dt_type *dt = def ? check_expr(c, def) : dt_type_bool();
	if (is_none(dt))
		return &t_none;
	if (def && def->kind == DT_E_UNOP && def->un.op == DT_UOP_NEG &&
	    def->un.e->kind == DT_E_INT && !def->un.e->i.is_bool) {
		fold_int(def, -def->un.e->i.value); /* -1: the literal it reads as */
		dt = dt_type_int(true, 8);
	}
	if (def && def->kind != DT_E_INT && def->kind != DT_E_STR) {
		ERR(c, def->span, "getopt's default must be an integer, string or bool literal");
		return &t_none;
	}
	const char *desc = NULL;
	if (e->call.nargs > 2) {
		dt_expr *a2 = e->call.args[2];
		check_expr(c, a2);
		if (a2->kind != DT_E_STR) {
			ERR(c, a2->span, "getopt's description must be a string literal");
			return &t_none;
		}
		desc = a2->str.s;
	}
	bool found = false;
	for (size_t i = 0; i < c->getopts.n && !found; i++)
		found = !strcmp(c->getopts.v[i].name, a0->str.s);
	if (!found)
		DT_VEC_PUSH(&c->getopts, ((getopt_decl){ a0->str.s, desc, e->span }));
	const char *v = NULL;
	bool given = named_param(c, a0->str.s, &v);
	if (dt->kind == DT_T_BOOL) {
		bool b = def ? def->i.value != 0 : false;
		if (given && !v)
			b = true;
		else if (given && (!strcmp(v, "1") || !strcasecmp(v, "true")))
			b = true;
		else if (given && (!strcmp(v, "0") || !strcasecmp(v, "false")))
			b = false;
		else if (given) {
			dt_diag_unplaced(c->d, DT_DIAG_ERROR, "program command line option --%s expects a boolean "
					"(e.g. 'true') (value: %s)", a0->str.s, v);
			return &t_none;
		}
		fold_int(e, b);
		e->i.is_bool = true;
		return dt_type_bool();
	}
	if (given && !v) {
		/* bpftrace's words: a bare --NAME is `true`, which only a boolean takes. */
		dt_diag_unplaced(c->d, DT_DIAG_ERROR, "program command line option --%s expects %s (value: true)",
				a0->str.s, def->kind == DT_E_STR ? "a string" : "an integer");
		return &t_none;
	}
	if (def->kind == DT_E_STR) {
		if (!given)
			v = def->str.s;
		e->kind = DT_E_STR;
		e->str.len = (uint32_t)strlen(v);
		e->str.s = dt_arena_strndup(c->a, v, e->str.len);
		return dt_type_str(e->str.len + 1);
	}
	uint64_t n = def->i.value;
	bool is_unsigned = false;
	if (given) {
		char *end;
		errno = 0;
		if (*v == '-') {
			n = (uint64_t)strtoll(v, &end, 0);
		} else {
			n = strtoull(v, &end, 0);
			is_unsigned = n > INT64_MAX; /* 0xffffffffffffffff prints as itself */
		}
		if (!*v || *end || errno) {
			bool digits = end != v && *v && strcmp(v, "-");
			dt_diag_unplaced(c->d, DT_DIAG_ERROR, "program command line option --%s %s (value: %s)",
					a0->str.s, errno == ERANGE ? "value is out of range" : digits ?
					"invalid trailing bytes" : "invalid integer", v);
			return &t_none;
		}
	}
	fold_int(e, n);
	e->i.is_unsigned = is_unsigned;
	return dt_type_int(!is_unsigned, 8);
}

/* After the walks: each named parameter must be one that some getopt() reads. As bpftrace says
 * it (a command-line error, not a place in the script): `ERROR: unexpected program command line
 * options: --bb` and `HINT: expected program options: --aa`; `--help` is no error but lists the
 * options, one a line with their descriptions, and the run ends there (status 1). */
static void check_named_params(checker *c)
{
	char got[512] = "", want[2048] = "";
	size_t gl = 0, wl = 0;
	bool help = false;
	for (uint32_t i = 0; c->o && i < c->o->nnamed; i++) {
		const char *s = c->o->named[i] + 2;
		size_t n = strcspn(s, "=");
		bool known = false;
		for (size_t j = 0; j < c->getopts.n && !known; j++)
			known = strlen(c->getopts.v[j].name) == n &&
				!strncmp(c->getopts.v[j].name, s, n);
		if (!known && !strcmp(s, "help"))
			help = true;
		else if (!known && gl < sizeof(got))
			gl += (size_t)snprintf(got + gl, sizeof(got) - gl, "%s--%.*s", gl ? ", " : "",
					       (int)n, s);
	}
	if (!gl && !help)
		return;
	for (size_t j = 0; j < c->getopts.n && wl < sizeof(want); j++) {
		const getopt_decl *g = &c->getopts.v[j];
		wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s--%s%s%s",
				       !j ? "" : help ? "\n" : ", ", g->name,
				       help && g->desc ? ": " : "", help && g->desc ? g->desc : "");
	}
	dt_diag_unplaced(c->d, DT_DIAG_ERROR, "%s%s", gl ? "unexpected program command line options: " : "", got);
	if (!wl)
		HINT(c, "no custom program options defined.");
	else
		HINT(c, "expected program options:%s%s", help ? "\n" : " ", want);
}

/* uaddr("sym"): a symbol of the probes' binary, as a pointer to an integer of its size (user
 * memory). In a binary loaded at a bias (PIE, a library) the address is found at run time from
 * the IP of a uprobe on one known instruction. */
static const dt_type *check_uaddr(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 1, 1, "uaddr(\"symbol\")"))
		return &t_none;
	dt_expr *a0 = literal_arg(c, e, "a symbol");
	if (!a0)
		return &t_none;
	const dt_attach *a = c->probe->attach[0];
	for (uint32_t i = 0; i < c->probe->nattach; i++) {
		const dt_attach *ai = c->probe->attach[i];
		if (ai->provider != DT_P_UPROBE && ai->provider != DT_P_URETPROBE) {
			ERR(c, e->span, "uaddr can not be used with \"%s\" probes",
			    dt_provider_name(ai->provider));
			return &t_none;
		}
		if (strcmp(ai->target, a->target)) {
			ERR(c, e->span, "uaddr needs every attach point of the probe in one binary: "
			    "%s and %s differ", a->target, ai->target);
			return &t_none;
		}
	}
	if (!c->o || !c->o->usym_addr)
		return &t_none; /* nothing to resolve against (front-end dumps) */
	uint64_t addr, size, at = 0;
	bool biased;
	int err = c->o->usym_addr(c->o->ctx, a->target, a0->str.s, &addr, &size, &biased);
	if (err) {
		ERR(c, a0->span, "Could not resolve symbol: %s:%s%s%s", a->target, a0->str.s,
		    err == -ENOENT ? "" : ": ", err == -ENOENT ? "" : strerror(-err));
		return &t_none;
	}
	if (biased) {
		uint64_t fsize;
		bool fb;
		if (c->probe->nattach > 1 || a->provider != DT_P_UPROBE ||
		    c->o->usym_addr(c->o->ctx, a->target, a->func, &at, &fsize, &fb)) {
			ERR(c, e->span, "uaddr in %s, which is loaded at an address chosen at run "
			    "time, needs a probe with one uprobe on a named function", a->target);
			HINT(c, "the address is found from where that uprobe fires");
			return &t_none;
		}
		at += a->offset;
	}
	e->call.uaddr.addr = addr;
	e->call.uaddr.at = at;
	e->call.uaddr.biased = biased;
	uint32_t isz = size == 1 || size == 2 || size == 4 ? (uint32_t)size : 8;
	return dt_type_ptr(c->a, dt_type_int(true, isz), DT_AS_USER);
}

/* system() and signal() act outside tracing: only with --unsafe, as in bpftrace. The functions
 * bpftrace now defines in its standard library say so in that library's words. */
static bool unsafe_ok(checker *c, dt_expr *e)
{
	static const char *const stdlib_words[] = { "write_user", "override", "signal",
						    "signal_thread" };

	if (c->o && c->o->unsafe)
		return true;
	for (size_t i = 0; i < DT_ARRAY_SIZE(stdlib_words); i++)
		if (!strcmp(e->call.name, stdlib_words[i])) {
			ERR(c, e->span, "%s() is unsafe. To use you need the --unsafe flag",
			    e->call.name);
			return false;
		}
	ERR(c, e->span, "%s() is an unsafe function being used in safe mode", e->call.name);
	HINT(c, "run with --unsafe to allow it");
	return false;
}

/* A signal's number from its name, with or without "SIG" ("KILL", "SIGUSR1"); 0 if unknown. */
static int dt_signal_number(const char *name)
{
	static const struct { const char *n; int v; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL },
		{ "TRAP", SIGTRAP }, { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
		{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CHLD", SIGCHLD },
		{ "CONT", SIGCONT }, { "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
		{ "TTOU", SIGTTOU }, { "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
		{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "IO", SIGIO },
		{ "PWR", SIGPWR }, { "SYS", SIGSYS },
	};
	if (!strncmp(name, "SIG", 3))
		name += 3;
	for (size_t i = 0; i < DT_ARRAY_SIZE(sigs); i++)
		if (!strcmp(name, sigs[i].n))
			return sigs[i].v;
	return 0;
}

/* A whole-map argument: print(@m), clear(@m), zero(@m). */
static map_info *whole_map_arg(checker *c, dt_expr *e, dt_expr *arg)
{
	if (arg->kind != DT_E_MAP || arg->map.nkeys) {
		check_expr(c, arg);
		ERR(c, arg->span, "%s needs a whole map, like %s(@name)", e->call.name, e->call.name);
		return NULL;
	}
	map_info *m = map_lookup(c, arg);
	arg->map.sym = &m->sym;
	arg->type = dt_type_void();
	return m;
}

/* A call node of function f at span sp with the given arguments. */
static dt_expr *new_call(checker *c, dt_func f, dt_span sp, dt_expr **args, uint32_t nargs)
{
	dt_expr *e = new_node(c, DT_E_CALL, sp);
	e->call.id = f;
	e->call.name = dt_func_name(f);
	e->call.args = args;
	e->call.nargs = nargs;
	return e;
}

static dt_stmt *expr_stmt(checker *c, dt_expr *e)
{
	dt_stmt *s = dt_arena_alloc(c->a, sizeof(*s));
	s->kind = DT_S_EXPR;
	s->span = e->span;
	s->expr = e;
	return s;
}

/* assert(cond, "msg"), bpftrace's macro: `if (!cond) { errorf("assert failed: %s", msg);
 * exit(1); }`, the error located at the assert. */
static const dt_type *check_assert(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 2, 2, "assert(condition, \"message\")"))
		return dt_type_void();
	dt_expr *cond = e->call.args[0], *msg = e->call.args[1];
	dt_span sp = e->span;
	dt_expr *fmt = new_node(c, DT_E_STR, sp);
	fmt->str.s = "assert failed: %s";
	fmt->str.len = (uint32_t)strlen(fmt->str.s);
	dt_expr **eargs = dt_arena_alloc(c->a, sizeof(*eargs) * 2);
	eargs[0] = fmt;
	eargs[1] = msg;
	dt_expr **code = dt_arena_alloc(c->a, sizeof(*code));
	code[0] = new_node(c, DT_E_INT, sp);
	code[0]->i.value = 1;
	dt_stmt **then = dt_arena_alloc(c->a, sizeof(*then) * 2);
	then[0] = expr_stmt(c, new_call(c, DT_F_ERRORF, sp, eargs, 2));
	then[1] = expr_stmt(c, new_call(c, DT_F_EXIT, sp, code, 1));
	dt_expr *not = new_node(c, DT_E_UNOP, cond->span);
	not->un.op = DT_UOP_LNOT;
	not->un.e = cond;
	dt_stmt *iff = dt_arena_alloc(c->a, sizeof(*iff));
	iff->kind = DT_S_IF;
	iff->span = sp;
	iff->if_.cond = not;
	iff->if_.then = (dt_stmt_list){ then, 2 };
	dt_stmt **body = dt_arena_alloc(c->a, sizeof(*body));
	body[0] = iff;
	set_node(e, DT_E_BLOCK, sp);
	e->block.stmts = (dt_stmt_list){ body, 1 };
	return check_expr(c, e);
}

/* A member path as written in container_of's third argument (`n`, `a.b`, also a name that is
 * a builtin elsewhere, `pid`): its source text, or NULL when that is no such path. */
static const char *member_path(checker *c, const dt_expr *m)
{
	const dt_source *src = c->p->src;
	if (m->kind != DT_E_IDENT && m->kind != DT_E_BUILTIN && m->kind != DT_E_FIELD)
		return NULL;
	if (!src || !m->span.len || m->span.off + m->span.len > src->len)
		return NULL;
	const char *t = src->text + m->span.off;
	for (uint32_t i = 0; i < m->span.len; i++) {
		bool first = !i || t[i - 1] == '.';
		if (!(isalpha((unsigned char)t[i]) || t[i] == '_' ||
		      (!first && (isdigit((unsigned char)t[i]) || t[i] == '.'))))
			return NULL;
	}
	if (t[m->span.len - 1] == '.')
		return NULL;
	return dt_arena_strndup(c->a, t, m->span.len);
}

/* container_of(ptr, typeof(TYPE), member), bpftrace's macro: a pointer to the TYPE whose
 * member `member` ptr points to, `(TYPE *)((uint64)ptr - offsetof(TYPE, member))`. */
static const dt_type *check_container_of(checker *c, dt_expr *e)
{
	if (!nargs_ok(c, e, 3, 3, "container_of(pointer, typeof(TYPE), member)"))
		return &t_none;
	dt_expr *ptr = e->call.args[0], *ty = e->call.args[1], *m = e->call.args[2];
	if (ty->kind != DT_E_TYPEOF) {
		ERR(c, ty->span, "container_of's second argument is a type, written typeof(TYPE)");
		return &t_none;
	}
	const char *path = member_path(c, m);
	if (!path) {
		ERR(c, m->span, "container_of's third argument is a member of the type, like n or "
		    "a.b");
		return &t_none;
	}
	const dt_type *pt = check_expr(c, ptr);
	if (is_none(pt))
		return &t_none;
	if (!is_ptr(pt) && !is_int(pt)) {
		ERR(c, ptr->span, "container_of needs a pointer to the member, not %s",
		    tname(c, pt));
		return &t_none;
	}
	dt_span sp = e->span;
	dt_expr *off = new_node(c, DT_E_OFFSETOF, sp);
	off->size.ty = *ty->tyof.ref;
	off->size.field = path;
	if (is_none(check_expr(c, off)))
		return &t_none; /* no such type or member: said once */
	dt_expr *addr = new_node(c, DT_E_CAST, ptr->span);
	addr->cast.to = (dt_ctype_ref){ .name = "uint64", .span = ptr->span };
	addr->cast.e = ptr;
	dt_expr *sub = new_node(c, DT_E_BINOP, sp);
	sub->bin.op = DT_OP_SUB;
	sub->bin.l = addr;
	sub->bin.r = off;
	dt_ctype_ref to = *ty->tyof.ref;
	if (to.nmods == DT_MAX_TYPE_MODS) {
		ERR(c, ty->span, "container_of's type has too many modifiers");
		return &t_none;
	}
	to.mods[to.nmods++] = (dt_type_mod){ 0 };
	to.nptr++;
	set_node(e, DT_E_CAST, sp);
	e->cast.to = to;
	e->cast.e = sub;
	return check_expr(c, e);
}

/* fail("fmt", literals…): the error bpftrace's stdlib raises where the checker meets it (a
 * static assert for code the script should not reach); %d %i %u %x %s %% of literals. */
static const dt_type *check_fail(checker *c, dt_expr *e)
{
	if (!e->call.nargs) {
		ERR(c, e->span, "fail needs a message: fail(\"format\", literals…)");
		return dt_type_void();
	}
	dt_expr *f = e->call.args[0];
	for (uint32_t i = 0; i < e->call.nargs; i++) {
		dt_expr *a = e->call.args[i];
		const dt_type *t = check_expr(c, a);
		if (is_none(t))
			return dt_type_void();
		if (a->kind != DT_E_STR && a->kind != DT_E_INT) {
			ERR(c, a->span, "fail's %s: it is printed when the program is compiled",
			    i ? "arguments must be literals" : "format must be a literal");
			return dt_type_void();
		}
	}
	if (f->kind != DT_E_STR) {
		ERR(c, f->span, "fail's format must be a string literal");
		return dt_type_void();
	}
	char msg[512];
	size_t n = 0;
	uint32_t next = 1;
#define FAIL_PUT(...) (n += (size_t)snprintf(msg + n, n < sizeof(msg) ? sizeof(msg) - n : 0, \
					     __VA_ARGS__), n = DT_MIN(n, sizeof(msg) - 1))
	msg[0] = 0;
	for (const char *p = f->str.s; *p; p++) {
		if (*p != '%') {
			FAIL_PUT("%c", *p);
			continue;
		}
		char conv = *++p;
		if (conv == '%') {
			FAIL_PUT("%%");
			continue;
		}
		dt_expr *a = next < e->call.nargs ? e->call.args[next++] : NULL;
		bool known = conv && strchr("diuxs", conv), str = conv == 's';
		if (!known || !a || (a->kind == DT_E_STR) != str) {
			ERR(c, f->span, "fail's format %%%c %s", conv ? conv : ' ',
			    !known ? "is not one of %d %i %u %x %s %%"
			    : !a   ? "has no argument"
			    : str  ? "needs a string"
				   : "needs an integer");
			return dt_type_void();
		}
		if (str)
			FAIL_PUT("%s", a->str.s);
		else
			FAIL_PUT(conv == 'x' ? "%" PRIx64 : conv == 'u' || a->i.is_unsigned
				 ? "%" PRIu64 : "%" PRId64, a->i.value);
		if (!conv)
			break;
	}
#undef FAIL_PUT
	ERR(c, e->span, "%s", msg);
	return dt_type_void();
}

/* A tracepoint's `char *` field reads as the string it points at; where an address is wanted
 * (uptr, kptr, write_user's destination) it is the pointer itself: the field retyped, and its
 * type. Any other expression keeps type t. */
static const dt_type *tp_string_as_pointer(dt_expr *e, const dt_type *t)
{
	if (e->kind == DT_E_FIELD && e->field.tp && e->field.tp->is_string &&
	    !e->field.tp->is_array && !e->field.tp->is_data_loc)
		return e->type = dt_type_int(false, 8);
	return t;
}

/* write_user(dst, src, len): len bytes of src (a value of the program: a string, a buffer or
 * an integer) to user address dst, true when the kernel wrote them. A constant len must fit in
 * src; another is clamped to src's size when the program runs. */
static const dt_type *check_write_user(checker *c, dt_expr *e)
{
	if (!unsafe_ok(c, e) || !nargs_ok(c, e, 3, 3, "write_user(user address, value, length)"))
		return &t_none;
	dt_expr *dst = e->call.args[0], *src = e->call.args[1], *len = e->call.args[2];
	const dt_type *dt = check_expr(c, dst), *st = check_expr(c, src), *lt = check_expr(c, len);
	if (is_none(dt) || is_none(st) || is_none(lt))
		return &t_none;
	dt = tp_string_as_pointer(dst, dt);
	if (!is_ptr(dt) && !is_int(dt)) {
		ERR(c, dst->span, "write_user writes to a user address (a pointer or an integer), "
		    "not %s", tname(c, dt));
		return &t_none;
	}
	if (st->kind != DT_T_STR && st->kind != DT_T_BUF && !is_int(st)) {
		ERR(c, src->span, "write_user writes a string, a buffer or an integer, not %s",
		    tname(c, st));
		return &t_none;
	}
	if (!is_int(lt)) {
		ERR(c, len->span, "write_user's length must be an integer, not %s", tname(c, lt));
		return &t_none;
	}
	uint32_t size = is_int(st) ? 8 : st->kind == DT_T_BUF ? st->size - 1 : st->size;
	if (len->kind == DT_E_INT && (len->i.value < 1 || len->i.value > size)) {
		ERR(c, len->span, "write_user's length must be from 1 to %u, the size of %s", size,
		    tname(c, st));
		return &t_none;
	}
	return dt_type_new(c->a, DT_T_BOOL);
}

/* The str(pointer) string_like_arg made of a pointer argument: it spans just its argument (a
 * str() written in the script spans its name and parentheses too). */
static bool read_of_pointer(const dt_expr *a)
{
	return a->kind == DT_E_CALL && a->call.id == DT_F_STR && a->call.nargs == 1 &&
	       a->span.off == a->call.args[0]->span.off && a->span.len == a->call.args[0]->span.len;
}

/* Argument i of a string function: a string (a char array reads as one), or a pointer to
 * char-like bytes, which becomes str(pointer). NULL (reported) when it is neither. */
static const dt_type *string_like_arg(checker *c, dt_expr *e, uint32_t i)
{
	dt_expr *a = e->call.args[i];
	posparam_str_arg(c, a);
	const dt_type *t = check_expr(c, a);
	if (is_none(t))
		return NULL;
	if (t->kind == DT_T_STR)
		return t;
	if (is_ptr(t) && t->ptr.to && t->ptr.to->kind == DT_T_INT && t->ptr.to->size == 1) {
		dt_expr **args = dt_arena_alloc(c->a, sizeof(*args));
		args[0] = a;
		dt_expr *x = new_call(c, DT_F_STR, a->span, args, 1);
		e->call.args[i] = x;
		return x->type = check_expr(c, x);
	}
	ERR(c, a->span, "%s needs a string, a char array or a char pointer, not %s", e->call.name,
	    tname(c, t));
	return NULL;
}

/* A call of a function of an imported .bpf.c: arguments as C would convert them (integers to
 * the parameter's width, pointers to pointers), its value an integer or a pointer. */
static const dt_type *check_extern(checker *c, dt_expr *e)
{
	const dt_extern_fn *fn = NULL;
	bool bad = false;

	for (uint32_t i = 0; i < e->call.nargs; i++)
		bad |= is_none(check_expr(c, e->call.args[i]));
	if (!c->o->extern_fn || c->o->extern_fn(c->o->ctype_ctx, c->a, e->call.name, &fn)) {
		dt_span at = { e->span.off, (uint32_t)strlen(e->call.name) };
		ERR(c, at, "unknown function '%s'", e->call.name);
		HINT(c, "neither a builtin nor a function of the imported C files");
		return &t_none;
	}
	e->call.ext = fn;
	if (fn->variadic || e->call.nargs != fn->nparams) {
		ERR(c, e->span, "%s (%s) takes %s%u argument%s, %u given", fn->name, fn->file,
		    fn->variadic ? "at least " : "", fn->nparams, fn->nparams == 1 ? "" : "s",
		    e->call.nargs);
		if (fn->variadic)
			HINT(c, "variadic C functions cannot be called from a script");
		return &t_none;
	}
	for (uint32_t i = 0; i < fn->nparams && !bad; i++) {
		const dt_type *want = fn->params[i], *got = e->call.args[i]->type;
		bool ok = want->kind == DT_T_INT
				  ? got->kind == DT_T_INT || got->kind == DT_T_BOOL
			  : want->kind == DT_T_PTR ? got->kind == DT_T_PTR : false;
		if (want->kind != DT_T_INT && want->kind != DT_T_PTR) {
			ERR(c, e->call.args[i]->span, "parameter %s of %s (%s) is %s: only integer "
			    "and pointer parameters can be passed from a script", fn->pnames[i],
			    fn->name, fn->file, tname(c, want));
			bad = true;
		} else if (!ok) {
			ERR(c, e->call.args[i]->span, "expected %s for parameter %s of %s, got %s",
			    tname(c, want), *fn->pnames[i] ? fn->pnames[i] : "?", fn->name,
			    tname(c, got));
			bad = true;
		}
	}
	if (bad)
		return &t_none;
	if (fn->ret->kind != DT_T_INT && fn->ret->kind != DT_T_PTR && fn->ret->kind != DT_T_VOID) {
		ERR(c, e->span, "%s (%s) returns %s: only integers and pointers come back to a script",
		    fn->name, fn->file, tname(c, fn->ret));
		return &t_none;
	}
	return fn->ret;
}

static const dt_type *check_call(checker *c, dt_expr *e)
{
	switch (e->call.id) {
	case DT_F_EXTERN:
		return check_extern(c, e);
	case DT_F_ASSERT:
		return check_assert(c, e);
	case DT_F_CONTAINER_OF:
		return check_container_of(c, e);
	case DT_F_FAIL:
		return check_fail(c, e);
	case DT_F_WRITE_USER:
		return check_write_user(c, e);
	case DT_F_PRINTF: case DT_F_CAT: case DT_F_ERRORF: case DT_F_WARNF:
		return check_printf(c, e);
	case DT_F_SYSTEM:
		if (!unsafe_ok(c, e))
			return dt_type_void();
		return check_printf(c, e);
	case DT_F_SIGNAL: {
		if (!unsafe_ok(c, e) || !nargs_ok(c, e, 1, 1, "signal(\"NAME\") or signal(number)"))
			return dt_type_void();
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return dt_type_void();
		for (uint32_t i = 0; i < c->probe->nattach; i++) {
			dt_provider p = c->probe->attach[i]->provider;
			/* These run in dwarftrace itself: the signal would be sent to it. */
			if (p == DT_P_BEGIN || p == DT_P_END || p == DT_P_SELF || p == DT_P_TEST ||
			    p == DT_P_BENCH) {
				ERR(c, e->span, "signal can not be used with \"%s\" probes",
				    dt_provider_name(p));
				return dt_type_void();
			}
		}
		if (a0->kind == DT_E_STR) {
			int sig = dt_signal_number(a0->str.s);
			if (sig <= 0) {
				ERR(c, a0->span, "%s is not a valid signal", a0->str.s);
				HINT(c, "a name like \"KILL\" or \"SIGUSR1\", or a number 1..64");
				return dt_type_void();
			}
			fold_int(a0, (uint64_t)sig);
			a0->type = dt_type_int(true, 8);
		} else if (!is_int(t)) {
			ERR(c, a0->span, "signal needs a signal name or number, not %s", tname(c, t));
		} else if (a0->kind == DT_E_INT && (a0->i.value < 1 || a0->i.value > 64)) {
			ERR(c, a0->span, "%lld is not a valid signal", (long long)a0->i.value);
		}
		return dt_type_void();
	}
	case DT_F_PRINT: {
		if (!nargs_ok(c, e, 1, 3, "print(@map[, top[, div]]) or print(value)"))
			return dt_type_void();
		dt_expr *a0 = e->call.args[0];
		if (a0->kind == DT_E_MAP && !a0->map.nkeys) {
			whole_map_arg(c, e, a0);
			for (uint32_t i = 1; i < e->call.nargs; i++) {
				const dt_type *t = check_expr(c, e->call.args[i]);
				if (!is_none(t) && !is_int(t))
					ERR(c, e->call.args[i]->span,
					    "print's %s must be an integer", i == 1 ? "top" : "div");
			}
			return dt_type_void();
		}
		const dt_type *t = check_expr(c, a0);
		if (e->call.nargs > 1) {
			ERR(c, e->span, "print(value) takes one argument");
			return dt_type_void();
		}
		if (is_none(t))
			return dt_type_void();
		if (!value_type_ok(t)) {
			ERR(c, a0->span, "cannot print %s", tname(c, t));
			return dt_type_void();
		}
		const dt_type *one = storage_type(c, t);
		e->call.args_type = dt_type_tuple(c->a, &one, 1);
		e->call.event_id = add_event(c, DT_F_PRINT, e, NULL, e->call.args_type);
		return dt_type_void();
	}
	case DT_F_CLEAR: case DT_F_ZERO:
		if (nargs_ok(c, e, 1, 1, e->call.id == DT_F_CLEAR ? "clear(@map)" : "zero(@map)"))
			whole_map_arg(c, e, e->call.args[0]);
		return dt_type_void();
	case DT_F_DELETE: {
		if (!nargs_ok(c, e, 1, 2, "delete(@map[key]) or delete(@map, key)"))
			return dt_type_void();
		dt_expr *a0 = e->call.args[0];
		if (e->call.nargs == 2) {
			/* bpftrace's current delete(@map, key) is 0.17's delete(@map[key]); a
			 * tuple key names each part of a multi-part key. Rewritten once, so both
			 * walks see the 0.17 form. */
			dt_expr *k = e->call.args[1];
			if (a0->kind != DT_E_MAP || a0->map.nkeys) {
				check_expr(c, a0);
				ERR(c, a0->span, "delete(MAP, KEY) needs a map without a key first, "
				    "like delete(@name, key)");
				return dt_type_void();
			}
			a0->map.keys = k->kind == DT_E_TUPLE ? k->tuple.elems : &e->call.args[1];
			a0->map.nkeys = k->kind == DT_E_TUPLE ? k->tuple.n : 1;
			a0->span.len = k->span.off + k->span.len - a0->span.off;
			e->call.nargs = 1;
		}
		if (a0->kind != DT_E_MAP) {
			check_expr(c, a0);
			ERR(c, a0->span, "delete needs a map element, like delete(@name[key])");
			return dt_type_void();
		}
		check_map_use(c, a0);
		a0->type = dt_type_void();
		/* bpftrace's current delete() says whether the key was there. */
		return dt_type_bool();
	}
	case DT_F_EXIT:
		if (nargs_ok(c, e, 0, 1, "exit() or exit(code)") && e->call.nargs == 1) {
			const dt_type *t = check_expr(c, e->call.args[0]);
			if (!is_none(t) && !is_int(t))
				ERR(c, e->call.args[0]->span, "exit's code must be an integer");
		}
		return dt_type_void();
	case DT_F_TIME: {
		if (!nargs_ok(c, e, 0, 1, "time() or time(\"strftime format\")"))
			return dt_type_void();
		const char *fmt = "%H:%M:%S\n";
		if (e->call.nargs == 1) {
			dt_expr *a0 = e->call.args[0];
			if (a0->kind != DT_E_STR) {
				check_expr(c, a0);
				ERR(c, a0->span, "time's format must be a string literal");
				return dt_type_void();
			}
			a0->type = dt_type_str(a0->str.len + 1);
			fmt = a0->str.s;
		}
		e->call.args_type = dt_type_tuple(c->a, NULL, 0);
		e->call.event_id = add_event(c, DT_F_TIME, e, fmt, e->call.args_type);
		return dt_type_void();
	}
	case DT_F_STR: {
		if (!nargs_ok(c, e, 1, 2, "str(pointer[, length])"))
			return dt_type_void();
		posparam_str_arg(c, e->call.args[0]);
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (!is_none(t) && !is_intlike(t) && t->kind != DT_T_STR) {
			ERR(c, e->call.args[0]->span, "str needs a pointer or a string, not %s",
			    tname(c, t));
			return &t_none;
		}
		uint32_t size = str_size(c);
		if (e->call.nargs == 2) {
			dt_expr *l = e->call.args[1];
			const dt_type *lt = check_expr(c, l);
			if (!is_none(lt) && !is_int(lt)) {
				ERR(c, l->span, "str's length must be an integer");
				return &t_none;
			}
			if (l->kind == DT_E_INT) {
				if ((int64_t)l->i.value < 1) {
					ERR(c, l->span, "str's length must be at least 1");
					return &t_none;
				}
				if (l->i.value < size)
					size = (uint32_t)l->i.value;
			}
		}
		return dt_type_str(size);
	}
	case DT_F_KSYM: case DT_F_USYM: {
		if (!nargs_ok(c, e, 1, 1, e->call.id == DT_F_KSYM ? "ksym(address)" : "usym(address)"))
			return &t_none;
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (is_none(t))
			return &t_none;
		if (!is_int(t)) {
			ERR(c, e->call.args[0]->span, "%s needs an address (an integer), not %s",
			    e->call.name, tname(c, t));
			return &t_none;
		}
		return dt_type_new(c->a, e->call.id == DT_F_KSYM ? DT_T_KSYM : DT_T_USYM);
	}
	case DT_F_STRLEN: case DT_F_STRCAP: {
		bool cap = e->call.id == DT_F_STRCAP;
		if (!nargs_ok(c, e, 1, 1, cap ? "strcap(string)" : "strlen(string)"))
			return &t_none;
		const dt_type *t = string_like_arg(c, e, 0);
		if (!t)
			return &t_none;
		if (!cap)
			return dt_type_int(false, 8);
		/* A string's capacity is its type's size, a constant; a pointer's is the length
		 * of the string it points at, as bpftrace has it (codegen: strlen). */
		if (!read_of_pointer(e->call.args[0]))
			fold_int(e, t->size);
		return dt_type_int(true, 8);
	}
	case DT_F_STRSTR: case DT_F_STR_CONCAT: {
		bool cat = e->call.id == DT_F_STR_CONCAT;
		if (!nargs_ok(c, e, 2, 2, cat ? "str_concat(string, string)"
					      : "strstr(haystack, needle)"))
			return &t_none;
		const dt_type *a = string_like_arg(c, e, 0), *b = string_like_arg(c, e, 1);
		if (!a || !b)
			return &t_none;
		if (!cat)
			return dt_type_int(true, 8);
		if (a->size + b->size - 1 > c->lim.value) {
			ERR(c, e->span, "str_concat of %s and %s is longer than %u bytes", tname(c, a),
			    tname(c, b), c->lim.value);
			HINT(c, "shorten them first: str(s, length)");
			return &t_none;
		}
		return dt_type_str(a->size + b->size - 1);
	}
	case DT_F_MEMCMP: {
		if (!nargs_ok(c, e, 3, 3, "memcmp(left, right, count)"))
			return &t_none;
		bool ok = true;
		for (uint32_t i = 0; i < 3; i++) {
			const dt_type *t = check_expr(c, e->call.args[i]);
			if (is_none(t)) {
				ok = false;
			} else if (i == 2 ? !is_int(t)
				   : dt_type_is_aggregation(t) || t->kind == DT_T_VOID ||
					     t->kind == DT_T_RECORD) {
				ERR(c, e->call.args[i]->span, i == 2 ? "memcmp's count must be an "
				    "integer, not %s" : "memcmp compares values, not %s", tname(c, t));
				ok = false;
			}
		}
		return ok ? dt_type_int(true, 8) : &t_none;
	}
	case DT_F_STRNCMP: case DT_F_STRCONTAINS: {
		bool ncmp = e->call.id == DT_F_STRNCMP;
		if (!nargs_ok(c, e, ncmp ? 3 : 2, ncmp ? 3 : 2,
			      ncmp ? "strncmp(string, string, length)" : "strcontains(haystack, needle)"))
			return &t_none;
		bool ok = true;
		for (uint32_t i = 0; i < 2; i++) {
			posparam_str_arg(c, e->call.args[i]);
			const dt_type *t = check_expr(c, e->call.args[i]);
			if (!is_none(t) && t->kind != DT_T_STR) {
				ERR(c, e->call.args[i]->span, "%s needs strings, not %s", e->call.name,
				    tname(c, t));
				ok = false;
			} else if (is_none(t)) {
				ok = false;
			}
		}
		if (ncmp) {
			dt_expr *n = e->call.args[2];
			const dt_type *t = check_expr(c, n);
			if (!is_none(t) && (n->kind != DT_E_INT || (int64_t)n->i.value < 0)) {
				ERR(c, n->span, "strncmp's length must be a non-negative integer constant");
				ok = false;
			}
		}
		if (!ok)
			return &t_none;
		/* bpftrace's current strcontains is a bool (prints true/false); strncmp an int. */
		return ncmp ? dt_type_int(false, 8) : dt_type_bool();
	}
	case DT_F_BUF: {
		if (!nargs_ok(c, e, 1, 2, "buf(pointer or array[, length])"))
			return &t_none;
		dt_expr *src = e->call.args[0];
		posparam_str_arg(c, src);
		const dt_type *t = check_expr(c, src);
		if (is_none(t))
			return &t_none;
		if (c_array_of(src)) /* a char array: its bytes, all of them */
			t = src->type = c_array_of(src);
		if (!is_intlike(t) && t->kind != DT_T_STR && t->kind != DT_T_ARRAY) {
			ERR(c, src->span, "buf needs a pointer, an array or a string, not %s",
			    tname(c, t));
			return &t_none;
		}
		if (e->call.nargs < 2) {
			/* An array's length is its size, as in bpftrace. */
			if (t->kind == DT_T_ARRAY)
				return dt_type_buf(c->a, DT_MIN(t->size, (uint32_t)DT_STRLEN));
			ERR(c, e->span, "buf() needs a length for %s", tname(c, t));
			HINT(c, "usage: buf(pointer, length); only an array has a length of its own");
			return &t_none;
		}
		dt_expr *l = e->call.args[1];
		const dt_type *lt = check_expr(c, l);
		if (is_none(lt))
			return &t_none;
		if (!is_int(lt)) {
			ERR(c, l->span, "buf's length must be an integer, not %s", tname(c, lt));
			return &t_none;
		}
		if (l->kind != DT_E_INT)
			return dt_type_buf(c->a, DT_STRLEN); /* read at most that much */
		if ((int64_t)l->i.value < 0) {
			ERR(c, l->span, "buf cannot use a negative length (%lld)",
			    (long long)l->i.value);
			return &t_none;
		}
		if (l->i.value > DT_STRLEN) {
			dt_diag(c->d, DT_DIAG_WARNING, e->span, "buf() length is too long and will "
				"be shortened to %d bytes", DT_STRLEN);
			return dt_type_buf(c->a, DT_STRLEN);
		}
		return dt_type_buf(c->a, (uint32_t)l->i.value);
	}
	case DT_F_STRFTIME: {
		if (!nargs_ok(c, e, 2, 2, "strftime(\"format\", nsecs)"))
			return &t_none;
		dt_expr *f = e->call.args[0];
		const dt_type *nt = check_expr(c, e->call.args[1]);
		if (f->kind != DT_E_STR) {
			check_expr(c, f);
			ERR(c, f->span, "strftime's format must be a string literal");
			return &t_none;
		}
		f->type = dt_type_str(f->str.len + 1);
		if (is_none(nt))
			return &t_none;
		if (!is_int(nt)) {
			ERR(c, e->call.args[1]->span, "strftime needs nanoseconds since boot (an "
			    "integer), not %s", tname(c, nt));
			return &t_none;
		}
		dt_type *t = dt_type_new(c->a, DT_T_TIMESTAMP);
		t->ts.fmt = f->str.s;
		return t;
	}
	case DT_F_NTOP: {
		if (!nargs_ok(c, e, 1, 2, "ntop([AF_INET or AF_INET6, ] address)"))
			return &t_none;
		dt_expr *addr = e->call.args[e->call.nargs - 1];
		if (e->call.nargs == 2) {
			dt_expr *af = e->call.args[0];
			const dt_type *t = check_expr(c, af);
			if (!is_none(t) && (af->kind != DT_E_INT ||
					    (af->i.value != AF_INET && af->i.value != AF_INET6))) {
				ERR(c, af->span, "ntop's address family must be %d (AF_INET) or %d "
				    "(AF_INET6)", AF_INET, AF_INET6);
				return &t_none;
			}
		}
		const dt_type *t = check_expr(c, addr);
		if (is_none(t))
			return &t_none;
		/* A char[4] or char[16] struct member (tcpconnect.bt's u6_addr8) is read as a
		 * string of its bytes and a NUL; ntop takes those bytes, zeros included. */
		const dt_type *arr = c_array_of(addr);
		bool bytes = arr && (arr->array.n == 4 || arr->array.n == 16);
		if (!is_int(t) && t->kind != DT_T_BUF && !bytes) {
			ERR(c, addr->span, "ntop needs an IPv4 address (an integer) or an address's "
			    "bytes (pton(), buf(), a char[4] or char[16] member), not %s",
			    tname(c, t));
			return &t_none;
		}
		return dt_type_new(c->a, DT_T_INET);
	}
	case DT_F_PTON: {
		if (!nargs_ok(c, e, 1, 1, "pton(\"address\")"))
			return &t_none;
		dt_expr *a0 = literal_arg(c, e, "an address");
		unsigned char bytes[16];
		if (!a0)
			return &t_none;
		bool v6 = strchr(a0->str.s, ':') != NULL;
		if (inet_pton(v6 ? AF_INET6 : AF_INET, a0->str.s, bytes) != 1) {
			ERR(c, a0->span, "pton: '%s' is not an IPv4 or IPv6 address", a0->str.s);
			return &t_none;
		}
		/* The bytes, as a constant buffer (codegen converts the literal again). */
		return dt_type_buf(c->a, v6 ? 16 : 4);
	}
	case DT_F_GETOPT:
		return check_getopt(c, e);
	case DT_F_IS_INTEGER: case DT_F_IS_UNSIGNED_INTEGER: case DT_F_IS_STR: case DT_F_IS_PTR:
	case DT_F_IS_ARRAY: case DT_F_IS_LITERAL:
		return check_type_question(c, e);
	case DT_F_STATIC_ASSERT:
		return check_static_assert(c, e);
	case DT_F_IS_ERR: {
		/* An ERR_PTR: the last 4095 values of the address space (the kernel's -MAX_ERRNO). */
		if (!nargs_ok(c, e, 1, 1, "is_err(pointer)"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		if (!is_ptr(t) && !is_int(t)) {
			ERR(c, a0->span, "is_err needs a pointer, not %s", tname(c, t));
			return &t_none;
		}
		dt_expr *r = dt_arena_alloc(c->a, sizeof(*r));
		*r = *a0;
		fold_int(r, (uint64_t)-4095);
		r->i.is_unsigned = true;
		e->kind = DT_E_BINOP;
		e->bin.op = DT_OP_GE;
		e->bin.l = a0;
		e->bin.r = r;
		return check_expr(c, e);
	}
	case DT_F_KADDR: {
		if (!nargs_ok(c, e, 1, 1, "kaddr(\"symbol\")"))
			return &t_none;
		dt_expr *a0 = literal_arg(c, e, "a symbol");
		if (!a0)
			return &t_none;
		uint64_t addr;
		if (dt_kallsyms_lookup(a0->str.s, &addr) < 0) {
			ERR(c, e->span, "Failed to resolve kernel symbol: %s", a0->str.s);
			return &t_none;
		}
		fold_int(e, addr); /* the address, a constant */
		return dt_type_int(false, 8);
	}
	case DT_F_PERCPU_KADDR: {
		if (!nargs_ok(c, e, 1, 2, "percpu_kaddr(\"variable\"[, cpu])"))
			return &t_none;
		dt_expr *a0 = literal_arg(c, e, "a per-cpu variable's name");
		if (!a0)
			return &t_none;
		if (e->call.nargs == 2 && !is_intlike(check_expr(c, e->call.args[1]))) {
			ERR(c, e->call.args[1]->span, "percpu_kaddr's cpu must be an integer");
			return &t_none;
		}
		int err = dt_kallsyms_percpu(a0->str.s, &e->call.percpu.off, &e->call.percpu.table);
		if (err == -EINVAL) {
			ERR(c, a0->span, "%s is not a per-cpu variable", a0->str.s);
			HINT(c, "kaddr(\"%s\") is its address", a0->str.s);
			return &t_none;
		}
		if (err) {
			ERR(c, e->span, "Failed to resolve kernel symbol: %s%s", a0->str.s,
			    err == -EPERM ? ": /proc/kallsyms hides addresses (kptr_restrict)" :
			    err == -ENOENT ? " (per-cpu variables are in /proc/kallsyms only when "
			    "the kernel has CONFIG_KALLSYMS_ALL)" : "");
			return &t_none;
		}
		/* NULL (0) for a CPU the machine cannot have, as bpf_per_cpu_ptr gives. */
		return dt_type_ptr(c->a, NULL, DT_AS_KERNEL);
	}
	case DT_F_HAS_KEY: {
		if (!nargs_ok(c, e, 2, 2, "has_key(@map, key)"))
			return &t_none;
		dt_expr *m = e->call.args[0], *k = e->call.args[1];
		if (m->kind != DT_E_MAP) {
			check_expr(c, m);
			ERR(c, m->span, "has_key needs a map, like has_key(@name, key)");
			return &t_none;
		}
		map_info *sm = m->map.nkeys ? NULL : map_lookup(c, m);
		if (sm && sm->shape_known && !sm->keyed) {
			m->map.sym = &sm->sym;
			m->type = dt_type_void();
			ERR(c, m->span, "call to has_key() expects a map with explicit keys "
			    "(non-scalar map)");
			return &t_none;
		}
		if (!m->map.nkeys) {
			/* A tuple names the parts of a multi-part key: has_key(@m, (1, "a")). */
			bool parts = k->kind == DT_E_TUPLE;
			m->map.keys = parts ? k->tuple.elems : &e->call.args[1];
			m->map.nkeys = parts ? k->tuple.n : 1;
		}
		map_info *mi = check_map_use(c, m);
		m->type = dt_type_void();
		if (c->d && !mi->assigned) {
			ERR(c, m->span, "%s is read but never assigned", mi->sym.name);
			return &t_none;
		}
		if (mi->sym.value && (mi->sym.value->kind == DT_T_HIST ||
				      mi->sym.value->kind == DT_T_LHIST ||
				      mi->sym.value->kind == DT_T_TSERIES)) {
			ERR(c, m->span, "has_key cannot look into %s: it holds a %s", mi->sym.name,
			    tname(c, mi->sym.value));
			return &t_none;
		}
		return dt_type_bool(); /* bpftrace's stdlib: boolean (0.17 had no has_key) */
	}
	case DT_F_REG: {
		if (!nargs_ok(c, e, 1, 1, "reg(\"name\")"))
			return &t_none;
		dt_expr *a0 = literal_arg(c, e, "a register name");
		if (!a0)
			return &t_none;
		if (dt_reg_offset(a0->str.s) < 0) {
			ERR(c, a0->span, "'%s' is not a register of x86-64", a0->str.s);
			HINT(c, "one of ip (or pc) sp bp ax bx cx dx si di r8 … r15, flags, cs, ss, "
			     "orig_ax (or orig_rax)");
			return &t_none;
		}
		if (!all_attach(c, has_regs)) {
			ERR(c, e->span, "reg can not be used with \"%s\" probes",
			    dt_provider_name(c->probe->attach[0]->provider));
			return &t_none;
		}
		return dt_type_int(false, 8);
	}
	case DT_F_CGROUPID: {
		if (!nargs_ok(c, e, 1, 1, "cgroupid(\"/sys/fs/cgroup/…\")"))
			return &t_none;
		dt_expr *a0 = literal_arg(c, e, "a cgroup's path");
		if (!a0)
			return &t_none;
		/* A cgroup v2 id is the inode number of its directory. */
		struct stat st;
		if (stat(a0->str.s, &st) < 0) {
			ERR(c, a0->span, "cgroupid: cannot read '%s': %s", a0->str.s, strerror(errno));
			return &t_none;
		}
		fold_int(e, st.st_ino); /* the id, a constant */
		return dt_type_int(false, 8);
	}
	case DT_F_OVERRIDE: {
		if (!unsafe_ok(c, e) || !nargs_ok(c, e, 1, 1, "override(return value)"))
			return dt_type_void();
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (!is_none(t) && !is_int(t))
			ERR(c, e->call.args[0]->span, "override needs an integer, not %s", tname(c, t));
		for (uint32_t i = 0; i < c->probe->nattach; i++)
			if (c->probe->attach[i]->provider != DT_P_KPROBE) {
				ERR(c, e->span, "override can only be used with kprobes");
				break;
			}
		return dt_type_void();
	}
	case DT_F_UNWATCH: {
		if (!nargs_ok(c, e, 1, 1, "unwatch(address)"))
			return dt_type_void();
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (!is_none(t) && !is_int(t))
			ERR(c, e->call.args[0]->span, "unwatch needs an address (an integer), not %s",
			    tname(c, t));
		return dt_type_void();
	}
	case DT_F_CGROUP_PATH: {
		if (!nargs_ok(c, e, 1, 1, "cgroup_path(cgroup id)"))
			return &t_none;
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (is_none(t))
			return &t_none;
		if (!is_int(t)) {
			ERR(c, e->call.args[0]->span, "cgroup_path needs a cgroup id (an integer), "
			    "not %s", tname(c, t));
			return &t_none;
		}
		return dt_type_new(c->a, DT_T_CGROUP_PATH);
	}
	case DT_F_JOIN: {
		if (!nargs_ok(c, e, 1, 2, "join(char *argv[][, \"delimiter\"])"))
			return dt_type_void();
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		const char *delim = " ";
		if (e->call.nargs == 2) {
			dt_expr *d = e->call.args[1];
			if (d->kind != DT_E_STR) {
				check_expr(c, d);
				ERR(c, d->span, "join's delimiter must be a string literal");
				return dt_type_void();
			}
			d->type = dt_type_str(d->str.len + 1);
			delim = d->str.s;
		}
		if (is_none(t))
			return dt_type_void();
		if (!is_intlike(t)) {
			ERR(c, a0->span, "join needs an array of string pointers (char **), not %s",
			    tname(c, t));
			return dt_type_void();
		}
		/* One event holds every argument: each string gets its share of it. */
		uint32_t slot = DT_MIN(str_size(c), (uint32_t)((c->lim.event -
				sizeof(struct dt_ev_join_hdr)) / DT_JOIN_MAX_ARGS));
		e->call.args_type = dt_type_str(slot);
		e->call.event_id = add_event(c, DT_F_JOIN, e, delim, e->call.args_type);
		return dt_type_void();
	}
	case DT_F_MACADDR: {
		if (!nargs_ok(c, e, 1, 1, "macaddr(array or pointer)"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		uint32_t have = t->kind == DT_T_ARRAY || t->kind == DT_T_STR ? t->size : 6;
		if (!is_ptr(t) && t->kind != DT_T_ARRAY && t->kind != DT_T_STR) {
			ERR(c, a0->span, "macaddr() only supports array or pointer arguments, not %s",
			    tname(c, t));
			return &t_none;
		}
		if (have < 6) {
			ERR(c, a0->span, "macaddr() needs at least 6 bytes, %s has %u", tname(c, t),
			    have);
			return &t_none;
		}
		return dt_type_new(c->a, DT_T_MACADDR);
	}
	case DT_F_STRERROR: case DT_F_SIGNAL_NAME: case DT_F_SYSCALL_NAME: {
		/* The number; userspace prints its name, as bpftrace's tables in BPF give it. */
		static const char *const what[] = { "an error number", "a signal number",
						    "a system call number" };
		dt_numtext table = e->call.id == DT_F_SIGNAL_NAME    ? DT_NUMTEXT_SIGNAL
				   : e->call.id == DT_F_SYSCALL_NAME ? DT_NUMTEXT_SYSCALL
								     : DT_NUMTEXT_ERRNO;
		const char *usage = dt_arena_printf(c->a, "%s(%s)", e->call.name,
						    table == DT_NUMTEXT_ERRNO ? "errno" : "number");
		if (!nargs_ok(c, e, 1, 1, usage))
			return &t_none;
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (is_none(t))
			return &t_none;
		if (!is_int(t)) {
			ERR(c, e->call.args[0]->span, "%s needs %s (an integer), not %s",
			    e->call.name, what[table], tname(c, t));
			return &t_none;
		}
		dt_type *r = dt_type_new(c->a, DT_T_STRERROR);
		r->numtext.table = table;
		return r;
	}
	case DT_F_UPTR: case DT_F_KPTR: {
		bool user = e->call.id == DT_F_UPTR;
		if (!nargs_ok(c, e, 1, 1, user ? "uptr(pointer)" : "kptr(pointer)"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		t = tp_string_as_pointer(a0, t);
		if (!is_intlike(t)) {
			ERR(c, e->call.args[0]->span, "%s needs a pointer or an address, not %s",
			    e->call.name, tname(c, t));
			return &t_none;
		}
		/* The same pointer, read from the other space; an address becomes a void *. */
		return dt_type_ptr(c->a, is_ptr(t) ? t->ptr.to : NULL,
				   user ? DT_AS_USER : DT_AS_KERNEL);
	}
	case DT_F_DEBUGF:
		return check_debugf(c, e);
	case DT_F_UADDR:
		return check_uaddr(c, e);
	case DT_F_PATH: {
		/* bpf_d_path: a struct path the program reached through BTF-typed pointers (a
		 * member such as args->filp->f_path, whose address is taken, or a pointer). */
		if (!nargs_ok(c, e, 1, 2, "path(struct path *[, size])"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		bool in_mem = a0->kind == DT_E_FIELD || a0->kind == DT_E_DEREF ||
			      a0->kind == DT_E_INDEX;
		if (!struct_or_ptr_named(t, "struct path") || (t->kind == DT_T_CSTRUCT && !in_mem)) {
			ERR(c, a0->span, "path needs a struct path or a pointer to one, not %s",
			    tname(c, t));
			return &t_none;
		}
		if (!all_attach(c, is_tracing_prog)) {
			/* A rawtracepoint's raw tracepoint program has no bpf_d_path. */
			ERR(c, e->span, "path() can only be used in fentry/fexit (kfunc/kretfunc) "
			    "and iter probes");
			HINT(c, "bpf_d_path is allowed only there, for the kernel functions of "
				"btf_allowlist_d_path (vfs_*, filp_close, security_file_open, …)");
			return &t_none;
		}
		uint32_t size = str_size(c);
		if (e->call.nargs == 2) {
			dt_expr *a1 = e->call.args[1];
			check_expr(c, a1);
			if (a1->kind != DT_E_INT || !a1->i.value || a1->i.value > c->lim.value) {
				ERR(c, a1->span, "path's size must be an integer literal of 1 to %u",
				    c->lim.value);
				return &t_none;
			}
			size = (uint32_t)a1->i.value;
		}
		return dt_type_str(size);
	}
	case DT_F_SKBOUTPUT: {
		/* bpf_skb_output: the packet's first `len` bytes go to userspace beside a header,
		 * which writes them from `offset` on to the pcap file (raw IP, as bpftrace). */
		if (!nargs_ok(c, e, 4, 4, "skboutput(\"file.pcap\", struct sk_buff *, length, offset)"))
			return &t_none;
		dt_expr *path = e->call.args[0], *skb = e->call.args[1];
		dt_expr *len = e->call.args[2], *off = e->call.args[3];
		const dt_type *t = check_expr(c, skb);
		const dt_type *lt = check_expr(c, len);
		check_expr(c, off);
		if (path->kind != DT_E_STR || !path->str.len) {
			ERR(c, path->span, "skboutput's first argument must be the pcap file's name, "
			    "a string literal");
			return &t_none;
		}
		if (is_none(t) || is_none(lt))
			return &t_none;
		if (t->kind != DT_T_PTR || !struct_or_ptr_named(t, "struct sk_buff")) {
			ERR(c, skb->span, "skboutput needs a struct sk_buff *, not %s", tname(c, t));
			return &t_none;
		}
		if (!is_int(lt)) {
			ERR(c, len->span, "skboutput's length must be an integer, not %s",
			    tname(c, lt));
			return &t_none;
		}
		if (off->kind != DT_E_INT || off->i.value > 65535) {
			ERR(c, off->span, "skboutput's offset must be an integer literal of 0 to "
			    "65535");
			return &t_none;
		}
		if (!kernel_object_ok(c, e, skb, "bpf_skb_output", "packet", "args.skb"))
			return &t_none;
		char *file = dt_arena_strndup(c->a, path->str.s, path->str.len);
		e->call.event_id = add_event(c, DT_F_SKBOUTPUT, e, file, NULL);
		return dt_type_int(false, 4);
	}
	case DT_F_SOCKET_COOKIE: {
		/* bpf_get_socket_cookie as tracing programs have it: a socket the program holds
		 * as a BTF-typed pointer (a function's argument), its cookie made if it has none. */
		if (!nargs_ok(c, e, 1, 1, "socket_cookie(struct sock *)"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		if (t->kind != DT_T_PTR || !struct_or_ptr_named(t, "struct sock")) {
			ERR(c, a0->span, "socket_cookie needs a struct sock *, not %s", tname(c, t));
			return &t_none;
		}
		if (!kernel_object_ok(c, e, a0, "bpf_get_socket_cookie", "socket", "args.sk"))
			return &t_none;
		return dt_type_int(false, 8);
	}
	case DT_F_LEN: {
		if (!nargs_ok(c, e, 1, 1, "len(@map), len(kstack) or len(ustack)"))
			return &t_none;
		dt_expr *a0 = e->call.args[0];
		map_info *sm = a0->kind == DT_E_MAP && !a0->map.nkeys ? map_lookup(c, a0) : NULL;
		/* A scalar map holding a stack (`@s = ustack; len(@s)`) is that stack. */
		if (sm && !(sm->shape_known && !sm->keyed && sm->sym.value &&
			    sm->sym.value->kind == DT_T_STACK)) {
			/* len(@map): its number of elements (bpf_for_each_map_elem counts them). */
			map_info *m = sm;
			a0->map.sym = &m->sym;
			a0->type = dt_type_void();
			if (!m->assigned) {
				ERR(c, a0->span, "%s is never assigned", m->sym.name);
				return &t_none;
			}
			if (m->shape_known && !m->keyed) {
				ERR(c, a0->span, "call to len() expects a map with explicit keys "
				    "(non-scalar map)");
				return &t_none;
			}
			return dt_type_int(true, 8);
		}
		const dt_type *t = check_expr(c, a0);
		if (is_none(t))
			return &t_none;
		if (t->kind != DT_T_STACK) {
			ERR(c, a0->span, "len() needs a map or a stack, not %s", tname(c, t));
			return &t_none;
		}
		if (t->stack.kind == DT_STACK_USER_DWARF) {
			ERR(c, a0->span, "len() counts the frames of kstack and ustack, not of %s",
			    tname(c, t));
			HINT(c, "ustack_dwarf's frames are stored by the walker, which len() cannot "
				"read");
			return &t_none;
		}
		/* The frames are counted where the stack is taken: at the call when the argument is
		 * the builtin, else by every kstack/ustack of the program into its reference. */
		if (t->stack.depth * 8 > DT_MAX_VALUE_SIZE) {
			ERR(c, a0->span, "len() counts at most %d frames", DT_MAX_VALUE_SIZE / 8);
			return &t_none;
		}
		if (a0->kind != DT_E_BUILTIN)
			c->p->stack_counts = true;
		return dt_type_int(true, 8);
	}
	case DT_F_BSWAP: {
		if (!nargs_ok(c, e, 1, 1, "bswap(integer)"))
			return &t_none;
		const dt_type *t = check_expr(c, e->call.args[0]);
		if (is_none(t))
			return &t_none;
		if (!is_int(t)) {
			ERR(c, e->call.args[0]->span, "bswap needs an integer, not %s", tname(c, t));
			return &t_none;
		}
		/* The bytes of the argument's own size are reversed: bswap((int16)x) swaps two. */
		return dt_type_int(false, t->size);
	}
	default:
		/* Aggregations reach here only when misused; check_agg handles the good place. */
		ERR(c, e->span, "%s() can only be the whole right side of a map assignment",
		    e->call.name);
		HINT(c, "for example: @name[key] = %s(%s);", e->call.name,
		     e->call.id == DT_F_COUNT ? "" : e->call.id == DT_F_LHIST ? "v, 0, 100, 10" : "v");
		for (uint32_t i = 0; i < e->call.nargs; i++)
			check_expr(c, e->call.args[i]);
		return &t_none;
	}
}

static bool is_agg_call(const dt_expr *e)
{
	return e->kind == DT_E_CALL && e->call.id >= DT_F_COUNT && e->call.id <= DT_F_TSERIES;
}

/* A tseries call that tseries_dummy_ts extended on an earlier check (loops are checked twice). */
static bool tseries_dummy_added(const checker *c, const dt_expr *e)
{
	const char *name = c->o ? c->o->dummy_ts_map : NULL;
	return name && e->call.nargs == 5 && e->call.args[4]->kind == DT_E_MAP &&
	       !strcmp(e->call.args[4]->map.name, name);
}

/* bpftrace's test hook, kept so its tests of exact intervals run here: with
 * BPFTRACE_DUMMY_TS_MAP=@name, tseries takes its time (ns) from the scalar map @name instead of
 * the boot-time clock, and prints interval starts as that time (no wall-clock offset). The map
 * read becomes the call's args[4] (args[3] the aggregation's name, "" for last, already chosen),
 * so every later pass sees the map used there. */
static bool tseries_dummy_ts(checker *c, dt_expr *e, dt_type *t)
{
	const char *name = c->o ? c->o->dummy_ts_map : NULL;

	if (!name || name[0] != '@')
		return true;
	if (e->call.nargs != 5) {
		dt_expr **args = dt_arena_alloc(c->a, sizeof(dt_expr *) * 5);
		dt_expr *m = dt_arena_alloc(c->a, sizeof(*m));
		memcpy(args, e->call.args, sizeof(dt_expr *) * e->call.nargs);
		if (e->call.nargs == 3) {
			args[3] = dt_arena_alloc(c->a, sizeof(dt_expr));
			args[3]->kind = DT_E_STR;
			args[3]->span = e->span;
			args[3]->str.s = "";
		}
		m->kind = DT_E_MAP;
		m->span = e->span;
		m->map.name = dt_arena_strndup(c->a, name, strlen(name));
		args[4] = m;
		e->call.args = args;
		e->call.nargs = 5;
	}
	const dt_type *ts = check_expr(c, e->call.args[4]);
	if (is_none(ts))
		return false;
	if (!is_int(ts)) {
		ERR(c, e->span, "BPFTRACE_DUMMY_TS_MAP's %s holds %s, not an integer", name,
		    tname(c, ts));
		return false;
	}
	t->tseries.dummy_ts = true;
	return true;
}

/* tseries(v, interval_ns, num_intervals[, agg]): constants within bpftrace's bounds into t. */
static bool check_tseries(checker *c, dt_expr *e, dt_type *t)
{
	/* bpftrace's gate of an unstable feature, in its words: a warning once (without a place:
	 * it is about the script, not this call) unless the config enables it, or an error at each
	 * call when it says error. */
	dt_unstable gate = c->o ? c->o->unstable_tseries : DT_UNSTABLE_WARN;
	if (gate == DT_UNSTABLE_ERROR) {
		ERR(c, e->span, "tseries feature is not enabled by default. To enable this unstable "
		    "feature, set the config flag to enable. unstable_tseries=enable");
		return false;
	}
	if (gate == DT_UNSTABLE_WARN && c->d && !c->warned_tseries) { /* the reporting walk */
		c->warned_tseries = true;
		dt_diag_unplaced(c->d, DT_DIAG_WARNING, "Script is using an unstable feature: "
				 "tseries. To prevent this warning you must explicitly enable it in "
				 "the config e.g. unstable_tseries=enable");
	}
	static const char *const aggs[] = {
		[DT_TS_LAST] = NULL, [DT_TS_AVG] = "avg", [DT_TS_MIN] = "min", [DT_TS_MAX] = "max",
		[DT_TS_SUM] = "sum",
	};
	dt_expr *iv = e->call.args[1], *n = e->call.args[2];

	if (iv->kind != DT_E_INT) {
		ERR(c, iv->span, "tseries: invalid interval_ns value (must be non-negative literal)");
		return false;
	}
	if (n->kind != DT_E_INT) {
		ERR(c, n->span, "tseries: invalid num_intervals value (must be non-negative literal)");
		return false;
	}
	if ((int64_t)iv->i.value <= 0) {
		ERR(c, iv->span, "tseries() interval_ns must be >= 1 (%lld provided)",
		    (long long)iv->i.value);
		return false;
	}
	if ((int64_t)n->i.value <= 0 || (int64_t)n->i.value > 1000000) {
		ERR(c, n->span, "tseries() num_intervals must be %s (%lld provided)",
		    (int64_t)n->i.value <= 0 ? ">= 1" : "< 1000000", (long long)n->i.value);
		return false;
	}
	t->tseries.interval = iv->i.value;
	t->tseries.n = n->i.value;
	t->tseries.agg = DT_TS_LAST;
	t->tseries.is_unsigned = e->call.args[0]->type && !e->call.args[0]->type->is_signed;
	dt_expr *a = e->call.nargs >= 4 ? e->call.args[3] : NULL;
	/* tseries_dummy_ts' "" placeholder (spanning the whole call) on a second check. */
	if (!a || (tseries_dummy_added(c, e) && a->kind == DT_E_STR && !a->str.s[0] &&
		   !memcmp(&a->span, &e->span, sizeof(a->span))))
		return tseries_dummy_ts(c, e, t);
	if (a->kind != DT_E_STR) {
		ERR(c, a->span, "tseries() expects the aggregation function as a string literal");
		HINT(c, "one of \"avg\", \"max\", \"min\", \"sum\"");
		return false;
	}
	for (int i = DT_TS_AVG; i <= DT_TS_SUM; i++)
		if (!strcmp(a->str.s, aggs[i])) {
			t->tseries.agg = i;
			return tseries_dummy_ts(c, e, t);
		}
	ERR(c, a->span, "tseries() expects one of the following aggregation functions: "
	    "avg, max, min, sum (\"%s\" provided)", a->str.s);
	return false;
}

/* `@m[k] = count()` and friends: the aggregation's value type. */
static const dt_type *check_agg(checker *c, dt_expr *e)
{
	static const dt_type_kind kinds[] = {
		[DT_F_COUNT] = DT_T_COUNT, [DT_F_SUM] = DT_T_SUM, [DT_F_AVG] = DT_T_AVG,
		[DT_F_MIN] = DT_T_MIN, [DT_F_MAX] = DT_T_MAX, [DT_F_STATS] = DT_T_STATS,
		[DT_F_HIST] = DT_T_HIST, [DT_F_LHIST] = DT_T_LHIST, [DT_F_TSERIES] = DT_T_TSERIES,
	};
	dt_func f = e->call.id;
	bool ok = f == DT_F_COUNT   ? nargs_ok(c, e, 0, 0, "count()")
		  : f == DT_F_LHIST ? nargs_ok(c, e, 4, 4, "lhist(value, min, max, step)")
		  : f == DT_F_HIST  ? nargs_ok(c, e, 1, 2, "hist(value[, bits])")
		  : f == DT_F_TSERIES ? nargs_ok(c, e, 3, tseries_dummy_added(c, e) ? 5 : 4,
						"tseries(value, interval_ns, num_intervals[, agg])")
				    : nargs_ok(c, e, 1, 1, dt_arena_printf(c->a, "%s(value)",
									   e->call.name));
	if (!ok)
		return &t_none;
	for (uint32_t i = 0; i < e->call.nargs && i < 4; i++) {
		const dt_type *t = check_expr(c, e->call.args[i]);
		if (f == DT_F_TSERIES && i == 3)
			continue; /* the aggregation's name: check_tseries */
		if (!is_none(t) && !is_int(t)) {
			ERR(c, e->call.args[i]->span, "%s needs an integer, not %s", e->call.name,
			    tname(c, t));
			ok = false;
		}
	}
	if (!ok)
		return &t_none;
	dt_type *t = dt_type_new(c->a, kinds[f]);
	if (f == DT_F_HIST && e->call.nargs == 2) {
		const dt_expr *a = e->call.args[1];
		if (a->kind != DT_E_INT) {
			ERR(c, a->span, "hist's bits must be an integer constant (0..5)");
			return &t_none;
		}
		if (a->i.value > 5) {
			ERR(c, a->span, "hist: bits %lld must be 0..5", (long long)a->i.value);
			return &t_none;
		}
		t->hist.bits = (uint32_t)a->i.value;
	}
	if (f == DT_F_LHIST) {
		int64_t v[3];
		for (int i = 0; i < 3; i++) {
			dt_expr *a = e->call.args[i + 1];
			if (a->kind != DT_E_INT) {
				ERR(c, a->span, "lhist's %s must be an integer constant",
				    i == 0 ? "min" : i == 1 ? "max" : "step");
				return &t_none;
			}
			v[i] = (int64_t)a->i.value;
		}
		if (v[2] <= 0) {
			ERR(c, e->call.args[3]->span, "lhist's step must be greater than 0");
			return &t_none;
		}
		if (v[1] <= v[0]) {
			ERR(c, e->call.args[2]->span, "lhist's max must be greater than its min");
			return &t_none;
		}
		if ((uint64_t)v[1] - (uint64_t)v[0] > (uint64_t)v[2] * 1000) {
			ERR(c, e->span, "lhist would have more than 1000 buckets");
			HINT(c, "use a larger step");
			return &t_none;
		}
		t->lhist.min = v[0];
		t->lhist.max = v[1];
		t->lhist.step = v[2];
	}
	if (f == DT_F_TSERIES && !check_tseries(c, e, t))
		return &t_none;
	return t;
}

/* ---------------------------------------------------------------- expressions */

static const char *binop_text(dt_binop op)
{
	static const char *const s[] = {
		[DT_OP_NONE] = "=", [DT_OP_ADD] = "+", [DT_OP_SUB] = "-", [DT_OP_MUL] = "*",
		[DT_OP_DIV] = "/", [DT_OP_MOD] = "%", [DT_OP_BAND] = "&", [DT_OP_BOR] = "|",
		[DT_OP_BXOR] = "^", [DT_OP_SHL] = "<<", [DT_OP_SHR] = ">>", [DT_OP_LAND] = "&&",
		[DT_OP_LOR] = "||", [DT_OP_EQ] = "==", [DT_OP_NE] = "!=", [DT_OP_LT] = "<",
		[DT_OP_LE] = "<=", [DT_OP_GT] = ">", [DT_OP_GE] = ">=",
	};
	return s[op];
}

static bool sign_flexible(const dt_expr *e)
{
	return e->kind == DT_E_INT && !e->i.is_bool && !e->i.is_unsigned &&
	       (int64_t)e->i.value >= 0;
}

/* What a comparison, && or || (or !) gives: a bool in the current language (bpftrace's now:
 * `print(1 > 2)` prints false, sizeof 1), 0.17's int64 0 or 1 otherwise. */
static const dt_type *truth_type(const checker *c)
{
	return c->current ? dt_type_bool() : dt_type_int(true, 8);
}

static const dt_type *check_binop(checker *c, dt_expr *e)
{
	const dt_type *l = check_expr(c, e->bin.l), *r = check_expr(c, e->bin.r);
	dt_binop op = e->bin.op;
	/* `@x = @x + 1`: in the collecting walk a map whose only assignment reads itself has no
	 * type yet; an integer on the other side of an operator other than == and != decides it
	 * (a missing key reads as 0, as in bpftrace). The reporting walk then checks it as usual. */
	if (!c->d && op != DT_OP_EQ && op != DT_OP_NE && is_none(l) != is_none(r) &&
	    (e->bin.l->kind == DT_E_MAP || e->bin.r->kind == DT_E_MAP) &&
	    is_int(is_none(l) ? r : l))
		return dt_type_int(true, 8);
	if (is_none(l) || is_none(r))
		return &t_none;
	if ((l->kind == DT_T_CSTRUCT || l->kind == DT_T_ARRAY) && (op == DT_OP_EQ || op == DT_OP_NE) &&
	    dt_type_equal(l, r))
		return truth_type(c); /* byte for byte, as bpftrace compares arrays */
	if (l->kind == DT_T_STACK && r->kind == DT_T_STACK) {
		/* Two stacks of one kind and depth come from one stack map (or the walker's), where
		 * the same frames have the same id: they compare by reference, whatever their print
		 * modes. */
		if (op != DT_OP_EQ && op != DT_OP_NE) {
			ERR(c, e->span, "stacks only support == and !=, not '%s'", binop_text(op));
			return &t_none;
		}
		if (l->stack.kind != r->stack.kind || l->stack.depth != r->stack.depth) {
			ERR(c, e->span, "cannot compare %s with %s", tname(c, l), tname(c, r));
			HINT(c, "stacks compare when they are of one kind and one depth");
			return &t_none;
		}
		return truth_type(c);
	}
	if (l->kind == DT_T_STR || r->kind == DT_T_STR || l->kind == DT_T_BUF ||
	    r->kind == DT_T_BUF) {
		if ((op == DT_OP_EQ || op == DT_OP_NE) && l->kind == r->kind)
			return truth_type(c);
		if (op == DT_OP_EQ || op == DT_OP_NE)
			ERR(c, e->span, "cannot compare %s with %s", tname(c, l), tname(c, r));
		else if (l->kind == r->kind)
			ERR(c, e->span, "%s only support == and !=, not '%s'",
			    l->kind == DT_T_STR ? "strings" : "buffers", binop_text(op));
		else
			ERR(c, e->span, "operator '%s' cannot be applied to %s and %s",
			    binop_text(op), tname(c, l), tname(c, r));
		return &t_none;
	}
	if (!is_intlike(l) || !is_intlike(r)) {
		const dt_type *bad = is_intlike(l) ? r : l;
		ERR(c, is_intlike(l) ? e->bin.r->span : e->bin.l->span,
		    "operator '%s' needs integers, not %s", binop_text(op), tname(c, bad));
		return &t_none;
	}
	if (is_ptr(l) || is_ptr(r)) {
		/* C's pointer arithmetic: ptr ± int steps by the pointee's size (void * by 1). */
		if (op >= DT_OP_LAND)
			return truth_type(c);
		if (is_ptr(l) != is_ptr(r) && (op == DT_OP_ADD || (op == DT_OP_SUB && is_ptr(l)))) {
			const dt_type *pt = is_ptr(l) ? l : r;
			if (!complete(c, pt->ptr.to, e->span))
				return &t_none;
			return pt;
		}
		return dt_type_int(false, 8);
	}
	if ((op == DT_OP_DIV || op == DT_OP_MOD) && e->bin.r->kind == DT_E_INT &&
	    e->bin.r->i.value == 0) {
		ERR(c, e->bin.r->span, "division by zero");
		return &t_none;
	}
	if (op >= DT_OP_LAND)
		return truth_type(c);
	/* A non-negative literal takes the other side's sign (bpftrace's sign-flexible literals),
	 * so `$u % 10` of a uint64 stays unsigned; `-` keeps the plain rule. Codegen's arithmetic
	 * does not change: it is signed only when both sides are. */
	bool ls = l->is_signed, rs = r->is_signed;
	bool lf = sign_flexible(e->bin.l), rf = sign_flexible(e->bin.r);
	if (op != DT_OP_SUB && lf != rf) {
		if (lf)
			ls = rs;
		else
			rs = ls;
	}
	return dt_type_int(ls || rs, 8);
}

static const dt_type *check_incdec(checker *c, dt_expr *target, dt_span at)
{
	if (target->kind == DT_E_VAR) {
		dt_var_sym *v = var_read(c, target);
		if (!v)
			return &t_none;
		target->type = v->type;
		if (!is_none(v->type) && !is_intlike(v->type)) {
			ERR(c, at, "++/-- needs an integer, %s holds %s", v->name, tname(c, v->type));
			return &t_none;
		}
		if (is_ptr(v->type) && !complete(c, v->type->ptr.to, at))
			return &t_none;
		/* bpftrace's current language: `$x++` and `$x op= y` assign 64-bit arithmetic, so a
		 * $variable given a small literal ($x = 1, int8) becomes 64-bit from here on. */
		var_info *vi = (var_info *)v;
		if (c->current && vi->int_type && vi->int_type->kind == DT_T_INT)
			vi->int_type = dt_type_int(vi->int_type->is_signed, 8);
		return v->type;
	}
	map_info *m = check_map_use(c, target);
	m->assigned = true;
	/* A pointer stays one: `@p++` steps it by its pointee's size. */
	if (is_ptr(m->sym.value) && !complete(c, m->sym.value->ptr.to, at))
		return &t_none;
	map_part(c, m, &m->sym.value, &m->value_decl,
		 is_ptr(m->sym.value) ? m->sym.value : dt_type_int(true, 8), NULL, at, "value");
	target->type = m->sym.value ? m->sym.value : &t_none;
	return target->type;
}

static void check_stmts(checker *c, dt_stmt_list *l);
static bool comptime_cond(checker *c, dt_expr *cond, int64_t *v);

static const dt_type *check_expr_inner(checker *c, dt_expr *e)
{
	switch (e->kind) {
	case DT_E_INT:
		return e->i.is_bool ? dt_type_bool()
				    : dt_type_int_enum(c->a, !e->i.is_unsigned, 8, e->i.enm);
	case DT_E_STR:
		return dt_type_str(e->str.len + 1);
	case DT_E_POSPARAM: {
		uint32_t n = e->posparam.n;
		if (!n)
			return &t_none;
		/* Substitute the value: a number becomes an integer, anything else a string; one
		 * that was not given reads as 0 (bpftrace's rule). */
		const char *s = posparam_text(c, n);
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 0);
		if (!*s || (!*end && !errno)) {
			fold_int(e, *s ? (uint64_t)v : 0);
			return dt_type_int(true, 8);
		}
		/* Past int64 but within uint64 (0xffffffffffffffff): an unsigned integer. */
		errno = 0;
		unsigned long long u = strtoull(s, &end, 0);
		if (!*end && !errno && !strchr(s, '-')) {
			fold_int(e, (uint64_t)u);
			return dt_type_int(false, 8);
		}
		return posparam_as_str(c, e);
	}
	case DT_E_IDENT: {
		int64_t v;
		const dt_enum *en = NULL;
		if (c->o && c->o->constant &&
		    c->o->constant(c->o->ctype_ctx, c->a, e->ident.name, &v, &en) == 0) {
			fold_int(e, (uint64_t)v); /* the constant, for both walks */
			e->i.enm = en; /* an enumerator is of its enum: it prints by name */
			return dt_type_int_enum(c->a, true, 8, en);
		}
		ERR(c, e->span, "unknown identifier '%s'", e->ident.name);
		if (has_include(c->p) && is_macro_name(e->ident.name))
			HINT(c, "no #include of the script defines %s; macros of the kernel's own headers "
			     "(TASK_RUNNING of <linux/sched.h>) need them in /lib/modules/$(uname -r)/build "
			     "or $BPFTRACE_KERNEL_SOURCE", e->ident.name);
		else
			dt_unknown_name_hint(c->d, e->ident.name, strlen(e->ident.name), false);
		return &t_none;
	}
	case DT_E_PARAMCOUNT:
		fold_int(e, c->o ? c->o->nparams : 0);
		return dt_type_int(true, 8);
	case DT_E_TUPLE_GET: {
		const dt_type *t = check_expr(c, e->tget.base);
		if (is_none(t))
			return &t_none;
		if (t->kind != DT_T_TUPLE) {
			ERR(c, e->span, "'.%u' needs a tuple, not %s", e->tget.index, tname(c, t));
			return &t_none;
		}
		if (e->tget.index >= t->tuple.n) {
			ERR(c, e->span, "invalid tuple index %u: the tuple has %u elements",
			    e->tget.index, t->tuple.n);
			return &t_none;
		}
		return t->tuple.elems[e->tget.index];
	}
	case DT_E_BUILTIN:
		return check_builtin(c, e);
	case DT_E_VAR: {
		dt_var_sym *v = var_read(c, e);
		return v ? v->type : &t_none;
	}
	case DT_E_MAP: {
		map_info *m = check_map_use(c, e);
		if (!m->sym.value) {
			if (c->d && !m->assigned)
				ERR(c, e->span, "%s is read but never assigned", m->sym.name);
			return &t_none;
		}
		const dt_type *t = agg_read_type(m->sym.value);
		if (!t) {
			ERR(c, e->span, "cannot read %s in an expression: it holds a %s, which is "
			    "not one value", m->sym.name, tname(c, m->sym.value));
			HINT(c, "count, sum, min, max and avg maps can be read (combined over the CPUs); "
				"print(%s) shows this one", m->sym.name);
			return &t_none;
		}
		return t;
	}
	case DT_E_CALL:
		return check_call(c, e);
	case DT_E_BINOP:
		return check_binop(c, e);
	case DT_E_UNOP: {
		if (e->un.op >= DT_UOP_PREINC)
			return check_incdec(c, e->un.e, e->span);
		const dt_type *t = check_expr(c, e->un.e);
		if (is_none(t))
			return &t_none;
		if (!is_intlike(t)) {
			ERR(c, e->span, "operator '%s' needs an integer, not %s",
			    e->un.op == DT_UOP_NEG ? "-" : e->un.op == DT_UOP_LNOT ? "!" : "~",
			    tname(c, t));
			return &t_none;
		}
		return e->un.op == DT_UOP_LNOT ? truth_type(c) : dt_type_int(t->is_signed, 8);
	}
	case DT_E_TERNARY: {
		if (e->tern.comptime) {
			int64_t pick;
			if (!comptime_cond(c, e->tern.cond, &pick))
				return &t_none;
			*e = pick ? *e->tern.t : *e->tern.f; /* in place: both walks see the pick */
			return check_expr_inner(c, e);
		}
		const dt_type *ct = check_expr(c, e->tern.cond);
		const dt_type *t = e->tern.t ? check_expr(c, e->tern.t) : ct;
		const dt_type *f = check_expr(c, e->tern.f);
		if (!is_none(ct) && !is_intlike(ct)) {
			ERR(c, e->tern.cond->span, "a condition must be an integer, not %s",
			    tname(c, ct));
			if (!e->tern.t) /* it is the value too: said once */
				return &t_none;
		}
		if (is_none(t) || is_none(f))
			return &t_none;
		/* `cond ? printf(…) : exit()`: a statement written as an expression. */
		if (t->kind == DT_T_VOID && f->kind == DT_T_VOID)
			return dt_type_void();
		const dt_type *u = dt_type_unify(c->a, storage_type(c, t), storage_type(c, f));
		if (!u || !value_type_ok(u)) {
			ERR(c, e->span, "the branches of '?:' have different types: %s and %s",
			    tname(c, t), tname(c, f));
			return &t_none;
		}
		return u;
	}
	case DT_E_FIELD:
		return check_field(c, e);
	case DT_E_CAST:
		return check_cast(c, e);
	case DT_E_DEREF:
		return check_deref(c, e);
	case DT_E_ADDROF:
		return check_addrof(c, e);
	case DT_E_INDEX:
		return check_index(c, e);
	case DT_E_SIZEOF: case DT_E_OFFSETOF:
		return check_sizeof(c, e);
	case DT_E_BLOCK: {
		const dt_type *t = dt_type_void();
		scope_open(c);
		check_stmts(c, &e->block.stmts);
		if (e->block.value)
			t = check_expr(c, e->block.value);
		scope_close(c);
		return t;
	}
	case DT_E_MACRO:
		ERR(c, e->span, "macro %s() was not expanded", e->macro.name);
		return &t_none;
	case DT_E_TYPEOF:
		ERR(c, e->span, "typeof(…) is a type, not a value");
		HINT(c, "it goes where a type goes: a cast, sizeof, offsetof, `let $x: TYPE`, or a "
			"macro's argument");
		return &t_none;
	case DT_E_TUPLE: {
		const dt_type **el = dt_arena_alloc(c->a, sizeof(*el) * (e->tuple.n + 1));
		bool ok = true;
		/* Elements keep their sizes ((int8)1 is one byte), as bpftrace lays tuples out. */
		for (uint32_t i = 0; i < e->tuple.n; i++) {
			el[i] = literal_type(c, e->tuple.elems[i], check_expr(c, e->tuple.elems[i]));
			if (is_none(el[i]))
				ok = false;
			else if (!value_type_ok(el[i])) {
				ERR(c, e->tuple.elems[i]->span, "%s cannot be part of a %s",
				    tname(c, el[i]), e->tuple.names ? "record" : "tuple");
				ok = false;
			}
		}
		if (!ok)
			return &t_none;
		if (e->tuple.names)
			return dt_type_record(c->a, el, (const char *const *)e->tuple.names,
					      e->tuple.n);
		return dt_type_tuple(c->a, el, e->tuple.n);
	}
	}
	return &t_none;
}

static const dt_type *check_expr(checker *c, dt_expr *e)
{
	const dt_type *t = check_expr_inner(c, e);
	/* Every value is built in BPF memory of bounded size (dt_limits.value): the one rule
	 * that bounds strings, tuples, $variables and map values alike. */
	if (t && t->size > c->lim.value) {
		ERR(c, e->span, "this %s is %u bytes; a value (string, tuple, map value, "
		    "$variable) can be at most %u bytes", t->kind == DT_T_STR ? "string" :
		    t->kind == DT_T_TUPLE ? "tuple" : "value", t->size, c->lim.value);
		t = &t_none;
	}
	e->type = t ? t : &t_none;
	return e->type;
}

/* ---------------------------------------------------------------- statements */

static void check_stmts(checker *c, dt_stmt_list *l);

/* A block's statements, in a scope of their own. */
static void check_block(checker *c, dt_stmt_list *l)
{
	scope_open(c);
	check_stmts(c, l);
	scope_close(c);
}

/* `if comptime (cond) { … } else { … }` (bpftrace's compile-time conditional): cond must fold
 * to a constant here (literals, sizeof, offsetof, the type questions is_str(x)…, constants of
 * the script's C definitions); the statement becomes the block of the branch it picks, in
 * place, so the other is never checked nor compiled (it may call fail()). */
static bool comptime_cond(checker *c, dt_expr *cond, int64_t *v)
{
	const dt_type *t = check_expr(c, cond);
	if (is_none(t))
		return false;
	if (!is_intlike(t) || !const_int(cond, v)) {
		ERR(c, cond->span, "the condition of 'if comptime' must be known at compile time "
		    "(literals, sizeof, type questions such as is_str(x))");
		return false;
	}
	return true;
}

static void check_comptime_if(checker *c, dt_stmt *s)
{
	int64_t v;
	if (!comptime_cond(c, s->if_.cond, &v))
		return;
	dt_stmt_list pick = v ? s->if_.then : s->if_.els;
	s->kind = DT_S_BLOCK;
	s->block = pick;
	check_block(c, &s->block);
}

/* The type `let $x: TYPE` names: an integer, a pointer, `string` (of the strings' size), a
 * C struct or an array (of known size) of anything a $variable holds, as an assignment from C
 * memory would give it (`let $w: struct W[10]; $w = $c->w;`); NULL (reported) for anything a
 * $variable cannot hold. */
static const dt_type *let_type(checker *c, const dt_ctype_ref *r)
{
	const dt_type *t = resolve_ctype(c, r);
	if (!t)
		return NULL;
	const dt_type *el = t;
	while (el->kind == DT_T_ARRAY && el->array.n)
		el = el->array.elem;
	if (el != t && el->kind == DT_T_CSTRUCT && !complete(c, el, r->span))
		return NULL;
	if (t->kind == DT_T_STR ||
	    (t->kind == DT_T_ARRAY && t->array.n && (is_intlike(el) || el->kind == DT_T_CSTRUCT)))
		return t;
	if (t->kind == DT_T_CSTRUCT && complete(c, t, r->span))
		return t;
	if (!is_intlike(t)) {
		ERR(c, r->span, "a $variable cannot be declared %s", tname(c, t));
		HINT(c, "declare an integer, a pointer, a string or an array of integers "
			"(int8[4]); a struct is held through a pointer (struct NAME *)");
		return NULL;
	}
	return t;
}

/* Whether the integer literal e fits in integer type t (bpftrace refuses an implicit
 * conversion that changes a literal: `let $a: uint16 = -1` needs a cast). */
static bool literal_fits(const dt_expr *e, const dt_type *t)
{
	int64_t v = (int64_t)e->i.value;
	unsigned bits = t->size * 8;
	if (bits >= 64)
		return true;
	if (t->is_signed)
		return v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1));
	return v >= 0 && (uint64_t)v < (UINT64_C(1) << bits);
}

/* The value of an assignment to a $variable declared with a type: checked against it, and
 * wrapped once in a cast to it (both walks then see the cast), so an int8 holds what an
 * int8 holds. Returns the value's type as the variable stores it (NONE when reported). */
static const dt_type *assign_declared(checker *c, dt_stmt *s, var_info *v)
{
	dt_expr *value = s->assign.value;
	const dt_type *dt = v->declared;
	if (s->assign.converted)
		return storage_type(c, check_expr(c, value));
	const dt_type *vt = check_expr(c, value);
	if (is_none(vt))
		return &t_none;
	if (dt->kind == DT_T_STR) {
		if (vt->kind != DT_T_STR) {
			ERR(c, value->span, "%s is declared %s, cannot assign %s", v->sym.name,
			    tname(c, dt), tname(c, vt));
			return &t_none;
		}
		if (vt->size > dt->size) {
			ERR(c, value->span, "%s is declared %s, too small for %s", v->sym.name,
			    tname(c, dt), tname(c, vt));
			return &t_none;
		}
		return dt;
	}
	if (dt->kind == DT_T_ARRAY || dt->kind == DT_T_CSTRUCT) {
		if (!dt_type_equal(vt, dt)) {
			ERR(c, value->span, "%s is declared %s, cannot assign %s", v->sym.name,
			    tname(c, dt), tname(c, vt));
			if (is_int(vt) && dt->kind == DT_T_ARRAY)
				HINT(c, "an integer becomes an array by a cast: (%s)", tname(c, dt));
			return &t_none;
		}
		return dt;
	}
	if (!is_intlike(vt) || (is_ptr(dt) && is_int(vt) && value->kind != DT_E_INT)) {
		ERR(c, value->span, "%s is declared %s, cannot assign %s", v->sym.name,
		    tname(c, dt), tname(c, vt));
		if (is_ptr(dt) && is_int(vt))
			HINT(c, "cast it: (%s)", tname(c, dt));
		return &t_none;
	}
	if (is_int(dt) && value->kind == DT_E_INT && !literal_fits(value, dt)) {
		ERR(c, value->span, "%lld does not fit in %s, the declared type of %s",
		    (long long)value->i.value, tname(c, dt), v->sym.name);
		HINT(c, "cast it to convert it: (%s)%lld", tname(c, dt), (long long)value->i.value);
		return &t_none;
	}
	dt_expr *x = dt_arena_alloc(c->a, sizeof(*x));
	x->kind = DT_E_CAST;
	x->span = value->span;
	x->cast.to = v->declared_ref;
	x->cast.e = value;
	x->type = dt;
	s->assign.value = x;
	s->assign.converted = true;
	return storage_type(c, dt);
}

static void check_plain_assign(checker *c, dt_stmt *s);

/* `let $x [: TYPE] [= value]`: a new variable in the current block. */
static void check_let(checker *c, dt_stmt *s)
{
	dt_expr *target = s->assign.target;
	if (!target || target->kind != DT_E_VAR)
		return; /* reported by the parser */
	var_info *old = var_find(c, target->var.name);
	if (old && scope_is_open(c, old->scope)) {
		ERR(c, target->span, "%s is already declared; a variable cannot be declared again "
		    "in its block or a block inside it", target->var.name);
		NOTE(c, old->sym.decl, "%s was %s here", old->sym.name,
		     old->by_let ? "declared" : "first assigned");
	}
	const dt_type *dt = NULL;
	if (s->assign.decl_type.name && !(dt = let_type(c, &s->assign.decl_type)))
		dt = &t_none;
	/* Without a type or a value, the type is the one later assignments give it: known
	 * from the collecting walk (the same node's symbol) in the reporting one. */
	const dt_type *t = dt ? storage_type(c, dt)
			   : target->var.sym && !s->assign.value ? target->var.sym->type : &t_none;
	var_info *v = var_new(c, target, t);
	v->by_let = true;
	if (dt && !is_none(dt)) {
		v->declared = dt;
		v->declared_ref = s->assign.decl_type;
	}
	target->var.sym = &v->sym;
	target->type = v->sym.type;
	if (!s->assign.value)
		return;
	if (v->declared) {
		var_assign(c, target, assign_declared(c, s, v), s->assign.value->span);
		return;
	}
	check_plain_assign(c, s);
}

static void check_assign(checker *c, dt_stmt *s)
{
	if (s->assign.decl) {
		check_let(c, s);
		return;
	}
	check_plain_assign(c, s);
}

static void check_plain_assign(checker *c, dt_stmt *s)
{
	dt_expr *target = s->assign.target, *value = s->assign.value;
	if (!target || !value)
		return;
	if (target->kind != DT_E_VAR && target->kind != DT_E_MAP)
		return; /* reported by the parser */
	if (is_agg_call(value)) {
		const dt_type *t = check_agg(c, value);
		value->type = t;
		if (target->kind != DT_E_MAP) {
			ERR(c, value->span, "%s() can only be assigned to a map, not to %s",
			    value->call.name, target->var.name);
			return;
		}
		if (s->assign.op != DT_OP_NONE) {
			ERR(c, s->span, "an aggregation is assigned with '=', not '%s='",
			    binop_text(s->assign.op));
			return;
		}
		map_info *m = check_map_use(c, target);
		m->assigned = true;
		map_part(c, m, &m->sym.value, &m->value_decl, t, NULL, value->span, "value");
		target->type = m->sym.value ? m->sym.value : &t_none;
		return;
	}
	var_info *dv = target->kind == DT_E_VAR ? var_find(c, target->var.name) : NULL;
	if (dv && dv->declared && s->assign.op == DT_OP_NONE) {
		var_assign(c, target, assign_declared(c, s, dv), value->span);
		return;
	}
	const dt_type *vt = check_expr(c, value);
	if (!is_none(vt) && !value_type_ok(vt)) {
		ERR(c, value->span, "cannot assign a value of type %s", tname(c, vt));
		if (vt->kind == DT_T_VOID)
			HINT(c, "this call returns nothing");
		else if (vt->kind == DT_T_RECORD)
			HINT(c, "assign a field: args.NAME");
		else if (vt->kind == DT_T_ARRAY)
			HINT(c, "a flexible array member has no size to copy: read its elements "
				"(p->y[0]) where it lies");
		vt = &t_none;
	}
	if (s->assign.op != DT_OP_NONE) {
		if (!is_none(vt) && !is_int(vt)) {
			ERR(c, value->span, "'%s=' needs an integer, not %s", binop_text(s->assign.op),
			    tname(c, vt));
			vt = &t_none;
		}
		if ((s->assign.op == DT_OP_DIV || s->assign.op == DT_OP_MOD) &&
		    value->kind == DT_E_INT && value->i.value == 0)
			ERR(c, value->span, "division by zero");
		const dt_type *cur = check_incdec(c, target, s->span);
		(void)cur;
		return;
	}
	if (target->kind == DT_E_VAR) {
		var_assign(c, target, literal_type(c, value, vt), value->span);
		return;
	}
	map_info *m = check_map_use(c, target);
	m->assigned = true;
	map_part(c, m, &m->sym.value, &m->value_decl, vt, NULL, value->span, "value");
	target->type = m->sym.value ? m->sym.value : &t_none;
}

/* What `for ($kv : @map)` gives $kv: (key, value), the key a tuple when the map has several.
 * A per-CPU aggregation (count, sum, min, max, avg) is read combined over the CPUs, as an
 * integer; hist, lhist and stats cannot be (bpftrace's rule). NONE when reported or not known
 * yet (the collecting walk, before the map's first assignment). */
static const dt_type *for_map_type(checker *c, dt_expr *e)
{
	map_info *m = map_lookup(c, e);
	e->map.sym = &m->sym;
	e->type = dt_type_void();
	if (!m->sym.value) {
		if (c->d && !m->assigned)
			ERR(c, e->span, "%s is iterated but never assigned", m->sym.name);
		return &t_none;
	}
	if (m->shape_known && !m->keyed) {
		ERR(c, e->span, "%s has no explicit keys (scalar map), and cannot be used for "
		    "iteration", m->sym.name);
		return &t_none;
	}
	const dt_type *v = agg_read_type(m->sym.value);
	if (!v) {
		ERR(c, e->span, "Loop expression does not support type: %s", tname(c, m->sym.value));
		HINT(c, "a for loop reads count, sum, min, max and avg maps, combined over the CPUs; "
			"print(%s) shows this one", m->sym.name);
		return &t_none;
	}
	if (!m->sym.key)
		return &t_none;
	const dt_type *el[2] = { m->sym.key, v };
	return dt_type_tuple(c->a, el, 2);
}

/* `for ($v : @map)` and `for ($v : START..END)`: $v is a new variable of the loop's block
 * (bpftrace refuses a name that is already a variable there); break and continue act on the
 * loop. The body's variables are the probe's own (codegen passes their addresses to the
 * callback), so what the body assigns is seen after the loop. */
static void check_for(checker *c, dt_stmt *s)
{
	dt_expr *var = s->for_.var;
	const dt_type *t = &t_none;
	if (!var || var->kind != DT_E_VAR)
		return; /* reported by the parser */
	if (s->for_.map) {
		t = for_map_type(c, s->for_.map);
	} else {
		dt_expr *ends[2] = { s->for_.start, s->for_.end };
		bool ok = true;
		for (int i = 0; i < 2; i++) {
			const dt_type *et = check_expr(c, ends[i]);
			if (!is_none(et) && !is_int(et)) {
				ERR(c, ends[i]->span, "the %s of a range must be an integer, not %s",
				    i ? "end" : "start", tname(c, et));
			}
			ok = ok && is_int(et);
		}
		t = ok ? dt_type_int(true, 8) : &t_none;
	}
	var_info *old = var_find(c, var->var.name);
	if (old && scope_is_open(c, old->scope)) {
		ERR(c, var->span, "Loop declaration shadows existing variable: %s", var->var.name);
		NOTE(c, old->sym.decl, "%s was %s here", old->sym.name,
		     old->by_let ? "declared" : "first assigned");
	}
	scope_open(c);
	var_info *v = var_new(c, var, t);
	v->by_let = true;
	var->var.sym = &v->sym;
	var->type = v->sym.type;
	c->loop_depth++;
	check_stmts(c, &s->for_.body);
	c->loop_depth--;
	scope_close(c);
}

/* `@m = { S; agg(x) }` (bpftrace allows an aggregation as a block expression's value) becomes the
 * block statement `{ S; @m = agg(x); }`: the same statements in the same scope, then the
 * aggregation, which codegen applies as any other. */
static void hoist_agg_block(checker *c, dt_stmt *s)
{
	dt_expr *v = s->assign.value;
	if (s->kind != DT_S_ASSIGN || s->assign.decl || s->assign.op != DT_OP_NONE ||
	    !s->assign.target || s->assign.target->kind != DT_E_MAP || !v ||
	    v->kind != DT_E_BLOCK || !v->block.value || !is_agg_call(v->block.value))
		return;
	dt_stmt *a = dt_arena_alloc(c->a, sizeof(*a));
	*a = *s;
	a->assign.value = v->block.value;
	dt_stmt_list l = v->block.stmts;
	dt_stmt **ss = dt_arena_alloc(c->a, sizeof(dt_stmt *) * (l.n + 1));
	if (l.n)
		memcpy(ss, l.v, sizeof(dt_stmt *) * l.n);
	ss[l.n] = a;
	s->kind = DT_S_BLOCK;
	s->block = (dt_stmt_list){ ss, l.n + 1 };
}

static void check_stmt(checker *c, dt_stmt *s)
{
	hoist_agg_block(c, s);
	switch (s->kind) {
	case DT_S_EXPR: {
		dt_expr *e = s->expr;
		if (!e)
			return;
		if (is_agg_call(e)) {
			check_expr(c, e);
			return;
		}
		const dt_type *t = check_expr(c, e);
		bool effect = e->kind == DT_E_CALL ||
			      (e->kind == DT_E_UNOP && e->un.op >= DT_UOP_PREINC);
		if (!effect && !s->discard && !is_none(t) && t->kind != DT_T_VOID)
			dt_diag(c->d, DT_DIAG_WARNING, e->span, "expression result unused");
		return;
	}
	case DT_S_ASSIGN:
		check_assign(c, s);
		return;
	case DT_S_IF: {
		if (s->if_.comptime) {
			check_comptime_if(c, s);
			return;
		}
		const dt_type *t = check_expr(c, s->if_.cond);
		if (!is_none(t) && !is_intlike(t) && t->kind != DT_T_STR)
			ERR(c, s->if_.cond->span, "a condition must be an integer, not %s",
			    tname(c, t));
		check_block(c, &s->if_.then);
		check_block(c, &s->if_.els);
		return;
	}
	case DT_S_UNROLL: {
		dt_expr *n = s->unroll.count_expr;
		const dt_type *t = n ? check_expr(c, n) : &t_none;
		if (!is_none(t)) {
			if (n->kind != DT_E_INT) {
				ERR(c, n->span, "unroll needs an integer constant, not %s", tname(c, t));
			} else if ((int64_t)n->i.value > 100) {
				ERR(c, s->span, "unroll maximum value is 100");
			} else if ((int64_t)n->i.value < 1) {
				ERR(c, s->span, "unroll minimum value is 1");
			} else {
				s->unroll.count = (uint32_t)n->i.value;
			}
		}
		check_block(c, &s->unroll.body);
		return;
	}
	case DT_S_WHILE: {
		const dt_type *t = check_expr(c, s->while_.cond);
		if (!is_none(t) && !is_int(t) && t->kind != DT_T_BOOL)
			ERR(c, s->while_.cond->span, "a condition must be an integer, not %s",
			    tname(c, t));
		c->loop_depth++;
		check_block(c, &s->while_.body);
		c->loop_depth--;
		return;
	}
	case DT_S_BREAK: case DT_S_CONTINUE:
		if (!c->loop_depth)
			ERR(c, s->span, "%s used outside of a loop",
			    s->kind == DT_S_BREAK ? "break" : "continue");
		return;
	case DT_S_BLOCK:
		check_block(c, &s->block);
		return;
	case DT_S_FOR:
		check_for(c, s);
		return;
	case DT_S_RETURN:
		if (s->expr) {
			const dt_type *t = check_expr(c, s->expr);
			if (!is_none(t) && !is_int(t))
				ERR(c, s->expr->span, "return needs an integer, not %s", tname(c, t));
		}
		return;
	}
}

/* Whether control never leaves s at its end: return, exit(), break and continue in a loop, or a
 * block or an if/else whose every way ends so. */
static bool ends_flow(const dt_stmt *s, bool in_loop)
{
	const dt_stmt_list *l = NULL;

	if (!s)
		return false;
	switch (s->kind) {
	case DT_S_RETURN:
		return true;
	case DT_S_BREAK: case DT_S_CONTINUE:
		return in_loop; /* else an error already */
	case DT_S_EXPR:
		return s->expr && s->expr->kind == DT_E_CALL && s->expr->call.id == DT_F_EXIT;
	case DT_S_BLOCK:
		l = &s->block;
		return l->n && ends_flow(l->v[l->n - 1], in_loop);
	case DT_S_IF:
		return s->if_.then.n && s->if_.els.n &&
		       ends_flow(s->if_.then.v[s->if_.then.n - 1], in_loop) &&
		       ends_flow(s->if_.els.v[s->if_.els.n - 1], in_loop);
	default:
		return false;
	}
}

static void check_stmts(checker *c, dt_stmt_list *l)
{
	bool dead = false;

	for (uint32_t i = 0; i < l->n; i++) {
		if (!l->v[i])
			continue;
		/* bpftrace's warning, on the first statement that cannot run. */
		if (dead) {
			dt_diag(c->d, DT_DIAG_WARNING, l->v[i]->span, "Unreachable statement.");
			dead = false;
		}
		check_stmt(c, l->v[i]);
		if (ends_flow(l->v[i], c->loop_depth) && i + 1 < l->n)
			dead = true;
	}
}

/* ---------------------------------------------------------------- attach points */

static bool has_wildcard(const char *s)
{
	return s && (strchr(s, '*') || strchr(s, '?'));
}

/* A usdt attach point becomes one attach point per location it names (a marker repeated or
 * inlined has several; wildcards name several markers), each with its location. */
typedef DT_VEC(dt_attach *) attach_vec;

static void expand_usdt(checker *c, dt_attach *a, attach_vec *out)
{
	dt_usdt_loc *locs = NULL;
	uint32_t n = 0;
	char *why = NULL;

	if (!c->o || !c->o->usdt) {
		ERR(c, a->span, "usdt probes are not available here: '%s'", a->text);
		return;
	}
	int err = c->o->usdt(c->o->ctx, c->a, a, &locs, &n, &why);
	if (err) {
		ERR(c, a->span, "%s", why ? why : dt_strerror(-err));
		free(why);
		return;
	}
	if (!n) {
		ERR(c, a->span, "%s matches no USDT probe", a->text);
		if (a->target && *a->target && !has_wildcard(a->target))
			HINT(c, "dwarftrace -l 'usdt:%s:*' lists the probes of %s", a->target,
			     a->target);
		else
			HINT(c, "dwarftrace -l 'usdt:BINARY:*' lists a binary's probes (with -p PID, "
			     "those of every object the process maps)");
		return;
	}
	for (uint32_t j = 0; j < n; j++) {
		dt_attach *x = dt_arena_alloc(c->a, sizeof(*x));
		*x = *a;
		x->usdt = &locs[j];
		x->target = locs[j].path;
		x->usdt_provider = locs[j].provider;
		x->func = locs[j].name;
		x->text = dt_arena_printf(c->a, "usdt:%s:%s:%s", locs[j].shown, locs[j].provider,
					  locs[j].name);
		DT_VEC_PUSH(out, x);
	}
}

/* uprobe:BIN@FILE:LINE[:COL] becomes uprobe:BIN:FUNC+OFF (where the line table puts it), so
 * `func` names the function; the attach point keeps its text (`probe` names it as written). */
static void resolve_src_location(checker *c, dt_attach *a)
{
	char *func = NULL, *why = NULL;
	uint64_t off = 0;

	int err = c->o && c->o->uprobe_line ? c->o->uprobe_line(c->o->ctx, a, &func, &off, &why)
					    : -ENOTSUP;
	if (err == -ENOTSUP)
		ERR(c, a->span, "%s: source locations are not resolved here (no line tables are "
		    "read)", a->text);
	else if (err < 0)
		ERR(c, a->span, "%s: %s", a->text, why ? why : dt_strerror(-err));
	if (err < 0) {
		free(why);
		return;
	}
	a->func = dt_arena_strndup(c->a, func, strlen(func));
	a->offset = off;
	a->has_offset = off != 0;
	free(func);
}

/* Replaces wildcard attach points by their expansions (each a dt_attach of its own), and usdt
 * attach points by their locations. */
static void expand_probe(checker *c, dt_probe *pr)
{
	bool any = false;
	for (uint32_t i = 0; i < pr->nattach; i++) {
		dt_attach *a = pr->attach[i];
		dt_provider p = a->provider;
		if (a->src_file && !a->func)
			resolve_src_location(c, a);
		if (p == DT_P_USDT && !a->usdt) {
			any = true;
			continue;
		}
		/* watchpoint:FUNC+argN names a function of the -c/-p program. */
		if (is_watchpoint(p) && a->func && !a->target && c->o && c->o->watch_binary)
			a->target = c->o->watch_binary;
		if (is_watchpoint(p) && a->target && has_wildcard(a->func))
			any = true;
		/* A pattern for the binary expands over the objects the -p process maps (the
		 * expand callback says -EOPNOTSUPP without one); xprobe's does not expand. */
		if ((p == DT_P_UPROBE || p == DT_P_URETPROBE) && has_wildcard(a->target)) {
			any = true;
			continue;
		}
		if (p == DT_P_XPROBE && has_wildcard(a->target)) {
			ERR(c, a->span, "wildcards in the binary are not supported: '%s'", a->text);
			HINT(c, "name one binary or library; wildcards go in the function, as in "
			     "uprobe:libc:str*");
			return;
		}
		if ((p == DT_P_UPROBE || p == DT_P_URETPROBE || p == DT_P_KPROBE ||
		     p == DT_P_KRETPROBE || p == DT_P_TRACEPOINT || p == DT_P_XPROBE ||
		     is_btf_args(p)) &&
		    (has_wildcard(a->func) || (is_btf_args(p) && has_wildcard(a->target)) ||
		     ((p == DT_P_TRACEPOINT || p == DT_P_KPROBE || p == DT_P_KRETPROBE) &&
		      has_wildcard(a->target))))
			any = true;
	}
	if (!any)
		return;
	attach_vec out = { 0 }, empty = { 0 };
	for (uint32_t i = 0; i < pr->nattach; i++) {
		dt_attach *a = pr->attach[i];
		if (a->provider == DT_P_USDT) {
			if (a->usdt)
				DT_VEC_PUSH(&out, a);
			else
				expand_usdt(c, a, &out);
			continue;
		}
		bool kp = a->provider == DT_P_KPROBE || a->provider == DT_P_KRETPROBE;
		bool up_objs = (a->provider == DT_P_UPROBE || a->provider == DT_P_URETPROBE) &&
			       has_wildcard(a->target);
		bool wild = has_wildcard(a->func) || up_objs ||
			    ((a->provider == DT_P_TRACEPOINT || is_btf_args(a->provider) || kp) &&
			     has_wildcard(a->target));
		if (!wild || a->provider == DT_P_BEGIN || a->provider == DT_P_END) {
			DT_VEC_PUSH(&out, a);
			continue;
		}
		char **names = NULL;
		uint32_t n = 0;
		int err = c->o && c->o->expand ? c->o->expand(c->o->ctx, a, &names, &n) : -ENOTSUP;
		if (err || !n) {
			if (err == -ENOTSUP && up_objs) {
				ERR(c, a->span, "a wildcard in the binary needs -p: '%s'", a->text);
				HINT(c, "with -p PID it matches the objects that process maps; else "
				     "name one binary or library, as in uprobe:libc:str*");
			} else if (err == -ENOTSUP)
				ERR(c, a->span, "wildcards are not supported here: '%s'", a->text);
			else if (err)
				ERR(c, a->span, "cannot expand '%s': %s", a->text, dt_strerror(-err));
			else
				DT_VEC_PUSH(&empty, a); /* said below: an error only if all are */
		}
		for (uint32_t j = 0; j < n; j++) {
			dt_attach *x = dt_arena_alloc(c->a, sizeof(*x));
			*x = *a;
			x->from_wildcard = true;
			const char *name = names[j];
			if (((a->provider == DT_P_TRACEPOINT || kp) && strchr(name, ':')) || up_objs) {
				/* A tracepoint expansion may name "subsys:event", a kprobe's
				 * "module:function", a uprobe's over a process "path:function". */
				const char *colon = up_objs ? strrchr(name, ':') : strchr(name, ':');
				x->target = dt_arena_strndup(c->a, name, (size_t)(colon - name));
				x->func = dt_arena_strndup(c->a, colon + 1, strlen(colon + 1));
			} else {
				x->func = dt_arena_strndup(c->a, name, strlen(name));
				/* A module pattern matched vmlinux, the one BTF expanded. */
				if (is_btf_args(a->provider) && has_wildcard(a->target))
					x->target = "vmlinux";
			}
			if (a->provider == DT_P_TRACEPOINT)
				x->text = dt_arena_printf(c->a, "tracepoint:%s:%s", x->target, x->func);
			else if (a->target) /* a watchpoint's is bpftrace's name: check_watchpoint */
				x->text = dt_arena_printf(c->a, "%s:%s:%s", dt_provider_name(a->provider),
							  x->target, x->func);
			else
				x->text = dt_arena_printf(c->a, "%s:%s", dt_provider_name(a->provider),
							  x->func);
			if (x->has_offset)
				x->text = dt_arena_printf(c->a, "%s+%llu", x->text,
							  (unsigned long long)x->offset);
			if (x->provider == DT_P_XPROBE && x->rate)
				x->text = dt_arena_printf(c->a, "%s:%llu", x->text,
							  (unsigned long long)x->rate);
			DT_VEC_PUSH(&out, x);
			free(names[j]);
		}
		free(names);
	}
	/* As in bpftrace, a pattern that matches nothing is skipped when the probe has other
	 * attach points (dcsnoop.bt's `kprobe:lookup_fast, kprobe:lookup_fast.constprop.*` on a
	 * kernel without the clone); the probe matching nothing at all is the error. */
	for (size_t i = 0; i < empty.n; i++) {
		dt_attach *a = empty.v[i];
		char words[512];

		dt_attach_no_match(a, words, sizeof(words)); /* bpftrace's words */
		if (out.n)
			dt_diag(c->d, DT_DIAG_WARNING, a->span, "%s. Skipping.", words);
		else
			ERR(c, a->span, "%s.", words);
	}
	free(empty.v);
	pr->nattach = (uint32_t)out.n;
	pr->attach = dt_arena_alloc(c->a, sizeof(dt_attach *) * (out.n ? out.n : 1));
	if (out.n)
		memcpy(pr->attach, out.v, sizeof(dt_attach *) * out.n);
	free(out.v);
}

/* bpftrace's limits of a hardware watchpoint, with its words. */
static void check_watchpoint(checker *c, dt_attach *a)
{
	const char *m = a->wp_mode ? a->wp_mode : "";
	bool r = false, w = false, x = false, dup = false, bad = !*m;

	if (a->func) {
		if (!a->target)
			ERR(c, a->span, "-p PID or -c CMD required for watchpoint");
		if (a->wp_arg >= DT_ARG_REGS)
			ERR(c, a->span, "x86_64 doesn't support arg%u", a->wp_arg);
	} else if (a->provider == DT_P_ASYNCWATCHPOINT) {
		ERR(c, a->span, "asyncwatchpoint requires a function name");
		HINT(c, "asyncwatchpoint:FUNCTION+argN:LENGTH:MODE watches what argN points at");
	} else if (!a->addr) {
		ERR(c, a->span, "watchpoint must be attached to a non-zero address");
	}
	if (a->wp_len != 1 && a->wp_len != 2 && a->wp_len != 4 && a->wp_len != 8)
		ERR(c, a->span, "watchpoint length must be one of (1,2,4,8)");
	for (const char *q = m; *q; q++) {
		bool *seen = *q == 'r' ? &r : *q == 'w' ? &w : *q == 'x' ? &x : NULL;
		if (!seen) {
			bad = true;
			continue;
		}
		dup |= *seen;
		*seen = true;
	}
	if (bad)
		ERR(c, a->span, "watchpoint mode must be combination of (r,w,x)");
	else if (dup)
		ERR(c, a->span, "watchpoint modes may not be duplicated");
	else if ((r && !w) || (x && (r || w))) {
		/* x86 debug registers watch writes, reads-or-writes, or execution (Intel SDM
		 * vol. 3, 17.2.4): not reads alone, nor execution with data. */
		ERR(c, a->span, "invalid watchpoint mode: %s%s%s", r ? "r" : "", w ? "w" : "",
		    x ? "x" : "");
		HINT(c, "x86-64 watches w, rw or x");
	}
	if (a->func && a->target && !has_wildcard(a->func)) {
		/* bpftrace's name for the probe builtin: the argument number only when not 0. */
		char num[16] = "";
		if (a->wp_arg)
			snprintf(num, sizeof(num), ":%u", a->wp_arg);
		a->text = dt_arena_printf(c->a, "%s:%s:%s%s:%llu:%s", dt_provider_name(a->provider),
					  a->target, a->func, num, (unsigned long long)a->wp_len, m);
	}
}

/* rawtracepoint, fentry, fexit, iter: the prototype from BTF, which also says whether the event,
 * function or iterator exists. */
static void check_kernel_attach(checker *c, dt_attach *a)
{
	static const char *const iters[] = { "task", "task_file", "task_vma", NULL };
	const char *what = a->provider == DT_P_RAWTRACEPOINT ? "raw tracepoint"
			   : a->provider == DT_P_ITER ? "iterator" : "kernel function";
	if (!a->func || has_wildcard(a->func) || (a->target && has_wildcard(a->target)))
		return;
	if (a->provider == DT_P_ITER) {
		bool known = false;
		for (int i = 0; iters[i]; i++)
			known |= !strcmp(iters[i], a->func);
		if (!known) {
			ERR(c, a->span, "unsupported iter type: %s", a->func);
			HINT(c, "iter:task, iter:task_file and iter:task_vma are supported");
			return;
		}
		if (c->p->nprobes > 1 || c->probe->nattach > 1) {
			ERR(c, a->span, "an iter probe can't be mixed with any other probe");
			HINT(c, "the iterator runs once and the run ends: it is a program of its own");
			return;
		}
	}
	int err = c->o && c->o->kernel_args
			  ? c->o->kernel_args(c->o->ctype_ctx, c->a, a->provider, a->target, a->func,
					      &a->kargs, &a->kret)
			  : -ENODATA;
	const char *rt_hint = a->provider == DT_P_RAWTRACEPOINT
				      ? "; raw tracepoints are the tracepoints' events: see `dwarftrace "
					"-l 'rawtracepoint:*'`" : "";
	char words[512];

	/* bpftrace's words, then where dwarftrace looked. A raw tracepoint without a module is
	 * looked for in every module, as bpftrace does, which finds no attach point at all. */
	dt_attach_no_match(a, words, sizeof(words));
	if (err == -ENOENT && a->target && strcmp(a->target, "vmlinux")) {
		ERR(c, a->span, "%s.", words);
		HINT(c, "no %s '%s' in module '%s' (its BTF, /sys/kernel/btf/%s)%s", what, a->func,
		     a->target, a->target, rt_hint);
	} else if (err == -ENOENT) {
		if (a->provider == DT_P_RAWTRACEPOINT)
			ERR(c, a->span, "Probe has no valid attach points.");
		else
			ERR(c, a->span, "%s.", words);
		HINT(c, "no %s '%s' in the kernel's BTF%s", what, a->func, rt_hint);
	} else if (err) {
		ERR(c, a->span, "%s needs the kernel's BTF (/sys/kernel/btf/vmlinux)%s%s",
		    dt_provider_name(a->provider), err == -ENODATA ? "" : ": ",
		    err == -ENODATA ? "" : strerror(-err));
	}
}

/* test:NAME and bench:NAME are reported by name: each name once among its kind, and the probe
 * alone in its body (it runs by itself, not on an event). */
static void check_test_name(checker *c, dt_attach *a)
{
	const char *kind = a->provider == DT_P_TEST ? "test" : "bench";

	if (c->probe->nattach > 1) {
		ERR(c, a->span, "a %s probe cannot share its body with other attach points", kind);
		return;
	}
	for (uint32_t i = 0; i < c->p->nprobes && c->p->probes[i] != c->probe; i++) {
		const dt_probe *o = c->p->probes[i];

		if (o->nattach == 1 && o->attach[0]->provider == a->provider &&
		    !strcmp(o->attach[0]->target, a->target)) {
			ERR(c, a->span, "\"%s\" was used as the name for more than one %s probe",
			    a->target, kind);
			NOTE(c, o->attach[0]->span, "this is the other instance");
			return;
		}
	}
}

/* kprobe:ADDR / kretprobe:ADDR (bpftrace's): an absolute kernel address in `addr`. Nothing
 * checks that it is code, so, as in bpftrace, only with --unsafe; the kernel refuses an
 * address that is no probe point. */
static void check_kprobe_address(checker *c, dt_attach *a)
{
	const char *f = a->func;
	char *end;

	if (!f || f[0] < '0' || f[0] > '9')
		return;
	errno = 0;
	a->addr = strtoull(f, &end, 0);
	if (*end || errno) {
		a->addr = 0;
		return; /* not a number: a name the kernel may have */
	}
	if (!a->addr)
		ERR(c, a->span, "%s: address 0 is no kernel code", a->text);
	else if (a->has_offset || a->target)
		ERR(c, a->span, "%s: an address takes no module and no offset", a->text);
	else if (!c->o || !c->o->unsafe) {
		ERR(c, a->span, "%s: Probing by address requires --unsafe", a->text);
		HINT(c, "an address may point anywhere in the kernel; %s:FUNC[+OFFSET] is checked",
		     dt_provider_name(a->provider));
	}
}

static void check_attach(checker *c, dt_attach *a)
{
	switch (a->provider) {
	case DT_P_KPROBE: case DT_P_KRETPROBE:
		check_kprobe_address(c, a);
		return;
	case DT_P_UPROBE: case DT_P_URETPROBE:
		a->unsafe = c->o && c->o->unsafe;
		return;
	case DT_P_RAWTRACEPOINT: case DT_P_FENTRY: case DT_P_FEXIT: case DT_P_ITER:
		check_kernel_attach(c, a);
		return;
	case DT_P_WATCHPOINT: case DT_P_ASYNCWATCHPOINT:
		check_watchpoint(c, a);
		return;
	case DT_P_SELF:
		if (strcmp(a->target, "signal")) {
			ERR(c, a->span, "%s is not a supported trigger", a->target);
			HINT(c, "self:signal:SIGUSR1 runs when dwarftrace gets SIGUSR1");
		} else if (strcmp(a->func, "SIGUSR1")) {
			ERR(c, a->span, "%s is not a supported signal", a->func);
			HINT(c, "self:signal:SIGUSR1 is the one signal probe");
		}
		return;
	case DT_P_TEST: case DT_P_BENCH:
		check_test_name(c, a);
		return;
	case DT_P_INTERVAL: case DT_P_PROFILE: {
		if (a->unit == DT_UNIT_NONE)
			return; /* malformed: the parser said so */
		if (!a->rate) {
			ERR(c, a->span, "%s rate must be greater than 0", dt_provider_name(a->provider));
			return;
		}
		uint64_t mul = a->unit == DT_UNIT_S ? 1000000000ull
			       : a->unit == DT_UNIT_MS ? 1000000ull
			       : a->unit == DT_UNIT_US ? 1000ull : 0;
		if (mul && a->rate > UINT64_MAX / mul) {
			ERR(c, a->span, "%s period is too long", dt_provider_name(a->provider));
			return;
		}
		a->period_ns = a->rate * mul;
		if (a->unit == DT_UNIT_HZ && a->rate > 1000000000)
			ERR(c, a->span, "%s frequency is above 1 GHz", dt_provider_name(a->provider));
		return;
	}
	case DT_P_SOFTWARE: case DT_P_HARDWARE: {
		if (!a->target)
			return;
		bool sw = a->provider == DT_P_SOFTWARE;
		const dt_perf_event *ev = dt_perf_event_find(a->provider, a->target);
		if (!ev) {
			ERR(c, a->span, "unknown %s event '%s'", dt_provider_name(a->provider),
			    a->target);
			const char *s = dt_closest(a->target, strlen(a->target),
						   sw ? dt_software_event_names()
						      : dt_hardware_event_names());
			if (s)
				HINT(c, "did you mean '%s'?", s);
			else
				HINT(c, "see the %s events in `perf list %s`",
				     dt_provider_name(a->provider), sw ? "sw" : "hw");
			return;
		}
		a->target = ev->name;
		return;
	}
	case DT_P_TRACEPOINT: {
		const char *root;
		if (!a->target || !a->func || has_wildcard(a->func) || has_wildcard(a->target) ||
		    !(root = tracefs(c)))
			return;
		dt_type *rec;
		int err = dt_tracefs_record(c->a, root, a->target, a->func, &rec);
		/* With other attach points, the session skips a missing one with a warning, as
		 * bpftrace does (an error only when none is left): the checker says nothing. */
		if (err == -ENOENT && c->probe->nattach > 1)
			return;
		if (err == -ENOENT) {
			char words[512];

			dt_attach_no_match(a, words, sizeof(words));
			ERR(c, a->span, "%s.", words);
			const char *s = dt_tracefs_closest(c->a, root, a->target, a->func);
			if (s)
				HINT(c, "did you mean '%s:%s'?", a->target, s);
			else if ((s = dt_tracefs_closest(c->a, root, a->target, NULL)))
				HINT(c, "did you mean subsystem '%s'?", s);
		}
		return;
	}
	default:
		return;
	}
}

/* ---------------------------------------------------------------- driver */

/* A probe's $variables live together (on the stack, in scratch memory, or in the frame of a
 * probe split into several programs): their total is bounded, reported at the one that
 * crosses the bound. */
static void check_vars_size(checker *c)
{
	uint32_t total = 0;
	for (size_t i = 0; i < c->vars.n; i++) {
		const dt_type *t = c->vars.v[i]->type;
		total += DT_ALIGN(t && t->size ? t->size : 8, 8);
		if (total > c->lim.vars) {
			ERR(c, c->vars.v[i]->decl, "the $variables of this probe take more than %u "
			    "bytes with %s", c->lim.vars, c->vars.v[i]->name);
			HINT(c, "keep large values in an @map, or split the probe");
			return;
		}
	}
}

/* Each map is a file descriptor and preallocated kernel memory: past DT_MAX_MAPS the session
 * would run out of one or the other, so the map that goes past it is an error. */
static void check_map_count(checker *c)
{
	if (c->maps.n <= DT_MAX_MAPS)
		return;
	ERR(c, c->maps.v[DT_MAX_MAPS]->sym.decl, "this script uses %zu maps; a script can use at "
	    "most %d", c->maps.n, DT_MAX_MAPS);
}

static void walk(checker *c)
{
	for (uint32_t i = 0; i < c->p->nprobes; i++) {
		dt_probe *pr = c->p->probes[i];
		c->probe = pr;
		c->vars.n = 0;
		dt_strmap_fini(&c->var_names);
		c->record = NULL;
		c->record_failed = false;
		pr->uses_ustack_dwarf = pr->pred_uses_ustack_dwarf = false;
		pr->ustack_dwarf_native = pr->ustack_dwarf_mixed = false;
		c->tracing_only = false;
		if (!pr->nattach)
			continue;
		if (pr->pred) {
			c->in_pred = true;
			const dt_type *t = check_expr(c, pr->pred);
			c->in_pred = false;
			/* A string is true when it is not empty: where bpftrace tests a saved
			 * `char *` of a tracepoint (`/@filename[tid]/`), dwarftrace saved the
			 * string (opensnoop.bt, statsnoop.bt). */
			if (!is_none(t) && !is_intlike(t) && t->kind != DT_T_STR)
				ERR(c, pr->pred->span, "a predicate must be an integer or a string, not %s",
				    tname(c, t));
		}
		c->scopes.n = 0;
		check_block(c, &pr->body);
		pr->rawtp_btf = false;
		for (uint32_t j = 0; c->tracing_only && j < pr->nattach; j++)
			pr->rawtp_btf |= pr->attach[j]->provider == DT_P_RAWTRACEPOINT;
		if (pr->rawtp_btf && pr->uses_ustack_dwarf) {
			ERR(c, c->tracing_only_at, "this call makes the rawtracepoint probe a BTF "
			    "tracepoint program (tp_btf), where ustack_dwarf cannot run");
			HINT(c, "use two probes on the same event: one for ustack_dwarf, one for "
				"this call");
		}
		/* A variable only declared (`let $x;`) and never assigned holds 0. */
		for (size_t j = 0; j < c->vars.n; j++)
			if (is_none(c->vars.v[j]->type) && ((var_info *)c->vars.v[j])->by_let)
				c->vars.v[j]->type = dt_type_int(true, 8);
		if (c->d) {
			check_vars_size(c);
			pr->nvars = (uint32_t)c->vars.n;
			pr->vars = dt_arena_alloc(c->a, sizeof(dt_var_sym *) * (c->vars.n + 1));
			if (c->vars.n)
				memcpy(pr->vars, c->vars.v, sizeof(dt_var_sym *) * c->vars.n);
		}
	}
}

/* test probes exist only under --test and bench probes only under --bench; otherwise they are
 * ignored, as bpftrace ignores them (a probe of both kinds or mixed with others stays, and its
 * check says why it cannot be). */
static void drop_other_modes(dt_program *p, dt_run_mode mode)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];
		dt_provider pv = pr->nattach == 1 ? pr->attach[0]->provider : DT_P__COUNT;

		if ((pv == DT_P_TEST && mode != DT_MODE_TEST) ||
		    (pv == DT_P_BENCH && mode != DT_MODE_BENCH))
			continue;
		p->probes[n++] = p->probes[i];
	}
	p->nprobes = n;
}

/* --probe-filter: the attach points whose full name the regex does not match are dropped after
 * the program is checked whole (so a map a dropped probe writes keeps its type), and the probes
 * left with none; BEGIN and END stay. The attach points are then numbered afresh. */
static void filter_probes(checker *c, const char *filter)
{
	dt_program *p = c->p;
	regex_t re;
	char names[256] = "";
	size_t nl = 0;
	uint32_t kept = 0, n = 0, index = 0;
	const dt_attach *first = NULL;

	if (regcomp(&re, filter, REG_EXTENDED | REG_NOSUB)) {
		dt_span at = { 0 };

		if (p->nprobes && p->probes[0]->nattach)
			at = p->probes[0]->attach[0]->span;
		ERR(c, at, "Invalid --probe-filter regex '%s'", filter);
		return;
	}
	for (uint32_t i = 0; i < p->nprobes; i++) {
		dt_probe *pr = p->probes[i];
		uint32_t m = 0;

		for (uint32_t j = 0; j < pr->nattach; j++) {
			dt_attach *a = pr->attach[j];
			const char *colon = a->text ? strchr(a->text, ':') : NULL;
			/* A named probe is its NAME here too, as in bpftrace (its Probe's name). */
			const char *name = a->name ? a->name
						   : dt_arena_printf(c->a, "%s%s",
								     dt_provider_name(a->provider),
								     colon ? colon : "");
			bool always = a->provider == DT_P_BEGIN || a->provider == DT_P_END;

			if (always || !regexec(&re, name, 0, NULL, 0)) {
				kept += !always;
				pr->attach[m++] = a;
				continue;
			}
			first = first ? first : a;
			if (nl < sizeof(names))
				nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%s",
						       nl ? ", " : "", name);
		}
		pr->nattach = m;
		if (m)
			p->probes[n++] = pr;
	}
	regfree(&re);
	p->nprobes = n;
	for (uint32_t i = 0; i < p->nprobes; i++) {
		p->probes[i]->index = i;
		for (uint32_t j = 0; j < p->probes[i]->nattach; j++)
			p->probes[i]->attach[j]->index = index++;
	}
	if (first && !kept) {
		ERR(c, first->span, "No probes to attach: --probe-filter '%s' matches none of the "
		    "program's attach points", filter);
		HINT(c, "they are: %s%s", names, nl >= sizeof(names) ? "..." : "");
	}
}

/* Map declarations (`let @m = TYPE(N);`): bpftrace's map types, each map declared once; a
 * declared map nobody uses is a warning; the type must be of the per-CPU kind the map's values
 * need (aggregations are per CPU). Sets the maps' decl_* fields. */
static void check_map_decls(checker *c)
{
	static const struct { const char *name; uint32_t type; bool percpu; } kinds[] = {
		{ "hash", BPF_MAP_TYPE_HASH, false },
		{ "lruhash", BPF_MAP_TYPE_LRU_HASH, false },
		{ "percpuhash", BPF_MAP_TYPE_PERCPU_HASH, true },
		{ "percpulruhash", BPF_MAP_TYPE_LRU_PERCPU_HASH, true },
	};
	const dt_program *p = c->p;
	for (uint32_t i = 0; i < p->nmap_decls; i++) {
		const dt_map_decl *md = &p->map_decls[i];
		size_t k = 0;
		while (k < DT_ARRAY_SIZE(kinds) && strcmp(kinds[k].name, md->type))
			k++;
		if (k == DT_ARRAY_SIZE(kinds)) {
			ERR(c, md->type_span, "Invalid bpf map type: %s", md->type);
			HINT(c, "Valid map types: hash, lruhash, percpuhash, percpulruhash");
			continue;
		}
		bool dup = false;
		for (uint32_t j = 0; j < i && !dup; j++) {
			if (!strcmp(p->map_decls[j].name, md->name)) {
				ERR(c, md->span, "%s is already declared", md->name);
				NOTE(c, p->map_decls[j].span, "%s was declared here", md->name);
				dup = true;
			}
		}
		if (dup)
			continue;
		if (md->max_entries > UINT32_MAX) {
			ERR(c, md->span, "%s: at most %u entries can be declared", md->name,
			    UINT32_MAX);
			continue;
		}
		map_info *m = dt_strmap_get(&c->map_names, md->name);
		if (!m) {
			dt_diag(c->d, DT_DIAG_WARNING, md->span, "Unused map: %s", md->name);
			continue;
		}
		if (!m->sym.value)
			continue; /* reported as never assigned */
		dt_map_layout lay;
		dt_map_layout_of(&m->sym, &lay);
		if (lay.percpu != kinds[k].percpu) {
			ERR(c, md->type_span, "Incompatible map types. Type from declaration: %s. Type "
			    "from value/key type: %s", md->type, lay.percpu ? "percpuhash" : "hash");
			NOTE(c, m->value_decl, "%s holds %s", m->sym.name, tname(c, m->sym.value));
			HINT(c, "aggregations (count(), sum(), hist(), …) are kept per CPU: declare "
				"their maps percpuhash or percpulruhash, other values hash or lruhash");
			continue;
		}
		m->sym.decl_bpf_type = kinds[k].type;
		m->sym.decl_max_entries = (uint32_t)md->max_entries;
	}
}

/* Whether the script's C definitions #include a header. */
static bool has_include(const dt_program *p)
{
	for (uint32_t i = 0; i < p->ncdecls; i++) {
		dt_span s = p->cdecls[i];
		const char *t = p->src->text + s.off;
		/* The span, not the text after it: the source need not end in a NUL (fuzz_lang). */
		if (s.len > 8 && t[0] == '#' && memmem(t, s.len, "include", 7))
			return true;
	}
	return false;
}

/* A name written as C macros are: capitals, digits and '_', with a capital. */
static bool is_macro_name(const char *n)
{
	bool upper = false;
	for (; *n; n++) {
		if (!(isupper((unsigned char)*n) || isdigit((unsigned char)*n) || *n == '_'))
			return false;
		upper = upper || isupper((unsigned char)*n);
	}
	return upper;
}

/* Process-wide: dwarftrace --language (dt_lang_set_mode). */
static dt_lang_mode lang_mode = DT_LANG_AUTO;

void dt_lang_set_mode(dt_lang_mode m)
{
	lang_mode = m;
}

int dt_lang_mode_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return DT_LANG_AUTO;
	if (!strcmp(s, "current") || !strcmp(s, "latest") || !strcmp(s, "head"))
		return DT_LANG_CURRENT;
	if (!strcmp(s, "0.17") || !strcmp(s, "0.17.0"))
		return DT_LANG_V017;
	return -1;
}

bool dt_program_current(const dt_program *p)
{
	if (lang_mode != DT_LANG_AUTO)
		return lang_mode == DT_LANG_CURRENT;
	if (p->nconfig || p->nmap_decls)
		return true;
	for (uint32_t i = 0; i < p->nprobes; i++)
		for (uint32_t j = 0; j < p->probes[i]->nattach; j++) {
			const dt_attach *at = p->probes[i]->attach[j];

			if ((at->provider == DT_P_BEGIN || at->provider == DT_P_END) && at->text &&
			    islower((unsigned char)at->text[0]))
				return true;
		}
	return false;
}

int dt_check(dt_program *p, dt_arena *a, dt_diags *d, const dt_check_opts *opts)
{
	checker c = { .p = p, .a = a, .o = opts, .current = dt_program_current(p) };
	int before = dt_diags_error_count(d);

	p->strlen = str_size(&c);
	c.lim = dt_limits_of(p->strlen);
	uint32_t index = 0;
	c.d = d;
	if (p->ncdecls && (!opts || !opts->cdefs)) {
		ERR(&c, p->cdecls[0], "C definitions are not available here");
		return -EINVAL;
	}
	/* Types the script defines come before everything that may name them. */
	if (opts && opts->cdefs && opts->cdefs(opts->ctype_ctx, a, d, p))
		return -EINVAL;
	drop_other_modes(p, opts ? opts->mode : DT_MODE_RUN);
	for (uint32_t i = 0; i < p->nprobes; i++) {
		dt_probe *pr = p->probes[i];
		pr->index = i;
		expand_probe(&c, pr);
		c.probe = pr;
		for (uint32_t j = 0; j < pr->nattach; j++) {
			pr->attach[j]->index = index++;
			check_attach(&c, pr->attach[j]);
		}
	}
	/* The silent collecting walk, then the reporting one. */
	c.d = NULL;
	walk(&c);
	/* Map shapes and types persist into the reporting walk: its first use of each map is the
	 * same as the collecting walk's, so notes point at the right place. */
	c.d = d;
	walk(&c);
	check_named_params(&c);
	if (opts && opts->probe_filter && dt_diags_error_count(d) == before)
		filter_probes(&c, opts->probe_filter);
	check_map_decls(&c);
	check_map_count(&c);
	p->nmaps = (uint32_t)c.maps.n;
	p->maps = dt_arena_alloc(a, sizeof(dt_map_sym *) * (c.maps.n + 1));
	for (size_t i = 0; i < c.maps.n; i++) {
		p->maps[i] = &c.maps.v[i]->sym;
		if (!c.maps.v[i]->sym.value && dt_diags_error_count(d) == before)
			ERR(&c, c.maps.v[i]->sym.decl, "%s is never assigned a value",
			    c.maps.v[i]->sym.name);
	}
	p->nevents = (uint32_t)c.events.n;
	p->events = dt_arena_alloc(a, sizeof(dt_event_desc) * (c.events.n + 1));
	if (c.events.n)
		memcpy(p->events, c.events.v, sizeof(dt_event_desc) * c.events.n);
	p->uses_ustack_dwarf = false;
	for (uint32_t i = 0; i < p->nprobes; i++)
		p->uses_ustack_dwarf |= p->probes[i]->uses_ustack_dwarf;
	free(c.maps.v);
	free(c.getopts.v);
	dt_strmap_fini(&c.map_names);
	free(c.events.v);
	free(c.vars.v);
	free(c.scopes.v);
	dt_strmap_fini(&c.var_names);
	return dt_diags_error_count(d) > before ? -EINVAL : 0;
}

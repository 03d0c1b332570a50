/* macro.c — expansion of script macros (`macro NAME(params) { body }`), run by dt_parse on the
 * parsed program, as bpftrace's language reference defines them:
 *   - A parameter `$x` takes a $variable and `@m` a map (by name, without keys): the body reads
 *     and changes the caller's. A parameter `x` takes any expression, copied in wherever the body
 *     says `x` (so it is evaluated as often as it appears there).
 *   - Hygiene: a $variable the body assigns or declares is the body's own, renamed per expansion
 *     (`$$NAME_N_y`) so it never meets the caller's `$y`; any other $variable or map the body
 *     names is an error — outside state comes in through parameters only.
 *   - A call's arguments are expanded first, then the body; a macro calling itself (directly or
 *     through others) is an error naming the chain.
 *   - A macro of the same name as a builtin or function replaces it when it takes as many
 *     arguments as the call gives (the parser decided which calls are macro calls).
 * The expansion is a block expression: the body's statements in a scope of their own and its
 * last expression, when it has one, as the value. */
#include "lang/lang_internal.h"

#include <stdlib.h>
#include <string.h>

/* Expansions of one program, all told: bounds what nesting (each macro calling the next one
 * twice) can multiply. */
#define MAX_EXPANSIONS 20000
#define MAX_NEST 64

typedef struct expander {
	dt_arena *a;
	dt_diags *d;
	dt_macro_def *const *defs;
	uint32_t ndefs;
	bool *bad;                  /* per definition: refused (reported), never expanded */
	const dt_macro_def *stack[MAX_NEST];
	uint32_t depth;
	uint32_t count;
	bool too_many;
} expander;

/* One expansion: the definition, the call's arguments, the body's own variables. */
typedef struct subst {
	const dt_macro_def *m;
	dt_expr **args;
	DT_VEC(const char *) locals;
	uint32_t id;
	dt_span call;
	bool reported;              /* the "expanded from" note was given */
} subst;

static void expand_expr(expander *x, dt_expr **slot);
static void expand_stmts(expander *x, dt_stmt_list *l);

/* ---------------------------------------------------------------- matching */

static const char *param_kind(const dt_expr *p)
{
	return p->kind == DT_E_VAR ? "variable" : p->kind == DT_E_MAP ? "map" : "expression";
}

static const char *param_name(const dt_expr *p)
{
	return p->kind == DT_E_VAR ? p->var.name : p->kind == DT_E_MAP ? p->map.name
								  : p->ident.name;
}

/* Whether argument `arg` fits parameter `p`. */
static bool arg_fits(const dt_expr *p, const dt_expr *arg)
{
	if (p->kind == DT_E_VAR)
		return arg->kind == DT_E_VAR;
	if (p->kind == DT_E_MAP)
		return arg->kind == DT_E_MAP && !arg->map.nkeys;
	return true;
}

/* How far a definition is from a call: each missing or extra argument counts far more than
 * an argument of the wrong kind (bpftrace's measure). 0: it matches. */
static size_t distance(const dt_macro_def *m, dt_expr *const *args, uint32_t n)
{
	size_t d = 1024 * (size_t)(m->nparams > n ? m->nparams - n : n - m->nparams);
	for (uint32_t i = 0; i < m->nparams && i < n; i++)
		d += !arg_fits(m->params[i], args[i]);
	return d;
}

static const dt_macro_def *closest(expander *x, const char *name, dt_expr *const *args,
				   uint32_t n, bool *exact, uint32_t upto)
{
	const dt_macro_def *best = NULL;
	size_t bd = SIZE_MAX;
	*exact = false;
	for (uint32_t i = 0; i < upto; i++) {
		const dt_macro_def *m = x->defs[i];
		if (x->bad[i] || strcmp(m->name, name))
			continue;
		size_t d = distance(m, args, n);
		if (d < bd) {
			bd = d;
			best = m;
		}
	}
	*exact = best && bd == 0;
	return best;
}

/* Definitions that cannot be used: a parameter named twice, or one that any call matching an
 * earlier definition would also match (bpftrace's "redefinition"). */
static void validate(expander *x)
{
	for (uint32_t i = 0; i < x->ndefs; i++) {
		const dt_macro_def *m = x->defs[i];
		for (uint32_t j = 0; j < m->nparams && !x->bad[i]; j++)
			for (uint32_t k = 0; k < j; k++) {
				const dt_expr *a = m->params[j], *b = m->params[k];
				if (a->kind != b->kind || strcmp(param_name(a), param_name(b)))
					continue;
				dt_diag(x->d, DT_DIAG_ERROR, a->span,
					"%s for macro argument has already been used: %s",
					a->kind == DT_E_VAR ? "Variable" : a->kind == DT_E_MAP ? "Map"
											: "Ident",
					param_name(a));
				x->bad[i] = true;
				break;
			}
		if (x->bad[i])
			continue;
		bool exact;
		const dt_macro_def *old = closest(x, m->name, m->params, m->nparams, &exact, i);
		if (exact) {
			dt_diag(x->d, DT_DIAG_ERROR, m->span, "Redefinition of macro: %s", m->name);
			dt_diag(x->d, DT_DIAG_NOTE, old->span, "This is the original definition.");
			x->bad[i] = true;
		}
	}
}

/* ---------------------------------------------------------------- the body's own variables */

static bool is_param(const subst *s, dt_expr_kind k, const char *name)
{
	for (uint32_t i = 0; i < s->m->nparams; i++)
		if (s->m->params[i]->kind == k && !strcmp(param_name(s->m->params[i]), name))
			return true;
	return false;
}

static bool is_local(const subst *s, const char *name)
{
	for (size_t i = 0; i < s->locals.n; i++)
		if (!strcmp(s->locals.v[i], name))
			return true;
	return false;
}

static void locals_of_stmts(subst *s, const dt_stmt_list *l);

static void locals_of_expr(subst *s, const dt_expr *e)
{
	if (e && e->kind == DT_E_BLOCK) {
		locals_of_stmts(s, &e->block.stmts);
		locals_of_expr(s, e->block.value);
	}
}

/* Variable t (an assignment's target, a for loop's variable) is the body's own, unless it is
 * a parameter. */
static void add_local(subst *s, const dt_expr *t)
{
	if (t && t->kind == DT_E_VAR && !is_param(s, DT_E_VAR, t->var.name) &&
	    !is_local(s, t->var.name))
		DT_VEC_PUSH(&s->locals, t->var.name);
}

/* The $variables the body assigns or declares (those it only reads are the caller's, which
 * it may not touch). Block expressions inside it count: they are the body's too. */
static void locals_of_stmts(subst *s, const dt_stmt_list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		const dt_stmt *st = l->v[i];
		switch (st->kind) {
		case DT_S_ASSIGN:
			add_local(s, st->assign.target);
			locals_of_expr(s, st->assign.value);
			break;
		case DT_S_EXPR: case DT_S_RETURN: locals_of_expr(s, st->expr); break;
		case DT_S_IF:
			locals_of_stmts(s, &st->if_.then);
			locals_of_stmts(s, &st->if_.els);
			break;
		case DT_S_UNROLL: locals_of_stmts(s, &st->unroll.body); break;
		case DT_S_WHILE: locals_of_stmts(s, &st->while_.body); break;
		case DT_S_BLOCK: locals_of_stmts(s, &st->block); break;
		case DT_S_FOR:
			add_local(s, st->for_.var);
			locals_of_expr(s, st->for_.start);
			locals_of_expr(s, st->for_.end);
			locals_of_stmts(s, &st->for_.body);
			break;
		default: break;
		}
	}
}

/* ---------------------------------------------------------------- cloning with substitution */

static dt_expr *clone_expr(expander *x, subst *s, const dt_expr *e);
static dt_stmt_list clone_stmts(expander *x, subst *s, const dt_stmt_list *l);

static dt_expr **clone_exprs(expander *x, subst *s, dt_expr *const *v, uint32_t n)
{
	dt_expr **out = dt_arena_alloc(x->a, sizeof(dt_expr *) * (n ? n : 1));
	for (uint32_t i = 0; i < n; i++)
		out[i] = clone_expr(x, s, v[i]);
	return out;
}

/* After an error inside an expansion: where the macro was called. */
static void expanded_from(expander *x, subst *s)
{
	if (s->reported)
		return;
	s->reported = true;
	dt_diag(x->d, DT_DIAG_NOTE, s->call, "expanded from %s() here", s->m->name);
}

static const dt_expr *arg_for(const subst *s, dt_expr_kind k, const char *name)
{
	for (uint32_t i = 0; i < s->m->nparams; i++)
		if (s->m->params[i]->kind == k && !strcmp(param_name(s->m->params[i]), name))
			return s->args[i];
	return NULL;
}

/* A copy of a written type. In a macro's body (s), a base that names an expression parameter
 * becomes the argument's type: the type itself for a typeof(…) argument, else typeof(the
 * argument); its own modifiers stay (`(a*)-1` with a = typeof(uint8) is (uint8*)-1). */
static dt_ctype_ref clone_ref(expander *x, subst *s, const dt_ctype_ref *r)
{
	dt_ctype_ref n = *r;

	if (r->typeof_ty) {
		n.typeof_ty = dt_arena_alloc(x->a, sizeof(*n.typeof_ty));
		*n.typeof_ty = clone_ref(x, s, r->typeof_ty);
	} else if (r->typeof_e) {
		n.typeof_e = clone_expr(x, s, r->typeof_e);
	} else if (s && r->name && is_param(s, DT_E_IDENT, r->name)) {
		const dt_expr *arg = arg_for(s, DT_E_IDENT, r->name);

		n.name = "typeof";
		if (arg->kind == DT_E_TYPEOF) {
			n.typeof_ty = dt_arena_alloc(x->a, sizeof(*n.typeof_ty));
			*n.typeof_ty = clone_ref(x, NULL, arg->tyof.ref);
		} else {
			n.typeof_e = clone_expr(x, NULL, arg);
		}
	}
	return n;
}

static void expand_ref(expander *x, dt_ctype_ref *r)
{
	for (; r; r = r->typeof_ty)
		if (r->typeof_e)
			expand_expr(x, &r->typeof_e);
}

/* A copy of e; with s (the body of a macro being expanded) parameters are replaced by the
 * call's arguments and the body's own variables renamed. Without s a plain copy: an argument
 * is the caller's text and keeps its names. */
static dt_expr *clone_expr(expander *x, subst *s, const dt_expr *e)
{
	if (!e)
		return NULL;
	dt_expr *n = dt_arena_alloc(x->a, sizeof(*n));
	*n = *e;
	switch (e->kind) {
	case DT_E_VAR:
		if (!s)
			break;
		if (is_param(s, DT_E_VAR, e->var.name)) {
			n->var.name = arg_for(s, DT_E_VAR, e->var.name)->var.name;
		} else if (is_local(s, e->var.name)) {
			n->var.name = dt_arena_printf(x->a, "$$%s_%u_%s", s->m->name, s->id,
						      e->var.name + 1);
		} else {
			dt_diag(x->d, DT_DIAG_ERROR, e->span,
				"Unhygienic access to variable: %s. Variables must be passed into the "
				"macro as arguments.", e->var.name);
			expanded_from(x, s);
		}
		break;
	case DT_E_MAP:
		n->map.keys = clone_exprs(x, s, e->map.keys, e->map.nkeys);
		if (!s)
			break;
		if (is_param(s, DT_E_MAP, e->map.name)) {
			n->map.name = arg_for(s, DT_E_MAP, e->map.name)->map.name;
		} else {
			dt_diag(x->d, DT_DIAG_ERROR, e->span,
				"Unhygienic access to map: %s. Maps must be passed into the macro as "
				"arguments.", e->map.name);
			expanded_from(x, s);
		}
		break;
	case DT_E_IDENT:
		if (s && is_param(s, DT_E_IDENT, e->ident.name))
			return clone_expr(x, NULL, arg_for(s, DT_E_IDENT, e->ident.name));
		break;
	case DT_E_MACRO:
		n->macro.args = clone_exprs(x, s, e->macro.args, e->macro.nargs);
		break;
	case DT_E_CALL:
		n->call.args = clone_exprs(x, s, e->call.args, e->call.nargs);
		if (s)
			n->call.expanded_from = s->call;
		break;
	case DT_E_BINOP:
		n->bin.l = clone_expr(x, s, e->bin.l);
		n->bin.r = clone_expr(x, s, e->bin.r);
		break;
	case DT_E_UNOP: case DT_E_DEREF: case DT_E_ADDROF:
		n->un.e = clone_expr(x, s, e->un.e);
		break;
	case DT_E_TERNARY:
		n->tern.cond = clone_expr(x, s, e->tern.cond);
		n->tern.t = clone_expr(x, s, e->tern.t);
		n->tern.f = clone_expr(x, s, e->tern.f);
		break;
	case DT_E_FIELD:
		n->field.base = clone_expr(x, s, e->field.base);
		break;
	case DT_E_CAST:
		n->cast.to = clone_ref(x, s, &e->cast.to);
		n->cast.e = clone_expr(x, s, e->cast.e);
		break;
	case DT_E_TYPEOF:
		n->tyof.ref = dt_arena_alloc(x->a, sizeof(*n->tyof.ref));
		*n->tyof.ref = clone_ref(x, s, e->tyof.ref);
		break;
	case DT_E_INDEX:
		n->index.base = clone_expr(x, s, e->index.base);
		n->index.index = clone_expr(x, s, e->index.index);
		break;
	case DT_E_SIZEOF: case DT_E_OFFSETOF:
		n->size.ty = clone_ref(x, s, &e->size.ty);
		n->size.e = clone_expr(x, s, e->size.e);
		break;
	case DT_E_TUPLE:
		n->tuple.elems = clone_exprs(x, s, e->tuple.elems, e->tuple.n);
		break;
	case DT_E_TUPLE_GET:
		n->tget.base = clone_expr(x, s, e->tget.base);
		break;
	case DT_E_BLOCK:
		n->block.stmts = clone_stmts(x, s, &e->block.stmts);
		n->block.value = clone_expr(x, s, e->block.value);
		break;
	case DT_E_INT: case DT_E_STR: case DT_E_BUILTIN: case DT_E_POSPARAM: case DT_E_PARAMCOUNT:
		break;
	}
	return n;
}

static dt_stmt *clone_stmt(expander *x, subst *s, const dt_stmt *st)
{
	dt_stmt *n = dt_arena_alloc(x->a, sizeof(*n));
	*n = *st;
	switch (st->kind) {
	case DT_S_EXPR: case DT_S_RETURN:
		n->expr = clone_expr(x, s, st->expr);
		break;
	case DT_S_ASSIGN: {
		const dt_expr *t = st->assign.target;
		if (s && st->assign.decl && t && t->kind == DT_E_VAR &&
		    is_param(s, DT_E_VAR, t->var.name)) {
			dt_diag(x->d, DT_DIAG_ERROR, st->span,
				"Variable declaration shadows macro arg %s", t->var.name);
			expanded_from(x, s);
		}
		n->assign.target = clone_expr(x, s, t);
		n->assign.value = clone_expr(x, s, st->assign.value);
		n->assign.decl_type = clone_ref(x, s, &st->assign.decl_type);
		break;
	}
	case DT_S_IF:
		n->if_.cond = clone_expr(x, s, st->if_.cond);
		n->if_.then = clone_stmts(x, s, &st->if_.then);
		n->if_.els = clone_stmts(x, s, &st->if_.els);
		break;
	case DT_S_UNROLL:
		n->unroll.count_expr = clone_expr(x, s, st->unroll.count_expr);
		n->unroll.body = clone_stmts(x, s, &st->unroll.body);
		break;
	case DT_S_WHILE:
		n->while_.cond = clone_expr(x, s, st->while_.cond);
		n->while_.body = clone_stmts(x, s, &st->while_.body);
		break;
	case DT_S_BLOCK:
		n->block = clone_stmts(x, s, &st->block);
		break;
	case DT_S_FOR:
		n->for_.var = clone_expr(x, s, st->for_.var);
		n->for_.map = clone_expr(x, s, st->for_.map);
		n->for_.start = clone_expr(x, s, st->for_.start);
		n->for_.end = clone_expr(x, s, st->for_.end);
		n->for_.body = clone_stmts(x, s, &st->for_.body);
		break;
	case DT_S_BREAK: case DT_S_CONTINUE:
		break;
	}
	return n;
}

static dt_stmt_list clone_stmts(expander *x, subst *s, const dt_stmt_list *l)
{
	dt_stmt_list out = { .n = l->n };
	out.v = dt_arena_alloc(x->a, sizeof(dt_stmt *) * (l->n ? l->n : 1));
	for (uint32_t i = 0; i < l->n; i++)
		out.v[i] = clone_stmt(x, s, l->v[i]);
	return out;
}

/* ---------------------------------------------------------------- expansion */

/* Says why no definition of the called name fits the call. */
static void report_mismatch(expander *x, const dt_expr *call, const dt_macro_def *m)
{
	uint32_t n = call->macro.nargs;
	if (call->macro.bare) {
		dt_diag(x->d, DT_DIAG_ERROR, call->span,
			"Call to %s() has the wrong number of arguments. Expected: %u but got 0.",
			m->name, m->nparams);
		return;
	}
	dt_diag(x->d, DT_DIAG_ERROR, call->span,
		"Call to %s() has arguments that do not match any definition.", m->name);
	if (m->nparams != n) {
		dt_diag(x->d, DT_DIAG_NOTE, m->span,
			"The closest definition of %s() has a different number of arguments. "
			"Expected: %u but got %u", m->name, m->nparams, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const dt_expr *p = m->params[i], *a = call->macro.args[i];
		if (arg_fits(p, a))
			continue;
		dt_diag(x->d, DT_DIAG_ERROR, a->span,
			"Mismatched arg. %s() expects a %s for arg %s but got %s.", m->name,
			param_kind(p), param_name(p),
			a->kind == DT_E_VAR ? "a variable" : a->kind == DT_E_MAP && !a->map.nkeys
								? "a map" : "an expression");
		dt_diag(x->d, DT_DIAG_NOTE, p->span, "This is the argument in the closest definition.");
	}
}

/* Replaces the DT_E_MACRO at *slot by its expansion. */
static void expand_call(expander *x, dt_expr **slot)
{
	dt_expr *call = *slot;
	for (uint32_t i = 0; i < call->macro.nargs; i++)
		expand_expr(x, &call->macro.args[i]);
	bool exact;
	const dt_macro_def *m = closest(x, call->macro.name, call->macro.args, call->macro.nargs,
					&exact, x->ndefs);
	if (!m) {
		/* Every definition of the name was refused (and reported). */
		dt_diag(x->d, DT_DIAG_ERROR, call->span, "no usable definition of macro %s()",
			call->macro.name);
		return;
	}
	if (!exact || (call->macro.bare && m->nparams)) {
		report_mismatch(x, call, m);
		return;
	}
	for (uint32_t i = 0; i < x->depth; i++) {
		if (x->stack[i] != m)
			continue;
		char chain[512] = "";
		for (uint32_t j = i; j < x->depth; j++)
			snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain), "%s > ",
				 x->stack[j]->name);
		dt_diag(x->d, DT_DIAG_ERROR, call->span,
			"Recursive macro call detected. Call chain: %s%s", chain, m->name);
		return;
	}
	if (x->depth == MAX_NEST || ++x->count > MAX_EXPANSIONS) {
		if (!x->too_many)
			dt_diag(x->d, DT_DIAG_ERROR, call->span,
				"macro expansion too large: more than %d macros nested or %d "
				"expansions in all", MAX_NEST, MAX_EXPANSIONS);
		x->too_many = true;
		return;
	}
	subst s = { .m = m, .args = call->macro.args, .id = x->count, .call = call->span };
	locals_of_stmts(&s, &m->body->block.stmts);
	locals_of_expr(&s, m->body->block.value);
	dt_expr *body = clone_expr(x, &s, m->body);
	free(s.locals.v);
	body->span = call->span;
	x->stack[x->depth++] = m;
	expand_stmts(x, &body->block.stmts);
	if (body->block.value)
		expand_expr(x, &body->block.value);
	x->depth--;
	/* A body that is one expression expands to that expression: `printf(fmt())` with
	 * `macro fmt() { "%d\n" }` still has a literal format. */
	*slot = body->block.stmts.n || !body->block.value ? body : body->block.value;
}

static void expand_exprs(expander *x, dt_expr **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		expand_expr(x, &v[i]);
}

static void expand_expr(expander *x, dt_expr **slot)
{
	dt_expr *e = *slot;
	if (!e || x->too_many)
		return;
	switch (e->kind) {
	case DT_E_MACRO: expand_call(x, slot); break;
	case DT_E_MAP: expand_exprs(x, e->map.keys, e->map.nkeys); break;
	case DT_E_CALL: expand_exprs(x, e->call.args, e->call.nargs); break;
	case DT_E_BINOP: expand_expr(x, &e->bin.l); expand_expr(x, &e->bin.r); break;
	case DT_E_UNOP: case DT_E_DEREF: case DT_E_ADDROF: expand_expr(x, &e->un.e); break;
	case DT_E_TERNARY:
		expand_expr(x, &e->tern.cond);
		expand_expr(x, &e->tern.t);
		expand_expr(x, &e->tern.f);
		break;
	case DT_E_FIELD: expand_expr(x, &e->field.base); break;
	case DT_E_CAST: expand_ref(x, &e->cast.to); expand_expr(x, &e->cast.e); break;
	case DT_E_TYPEOF: expand_ref(x, e->tyof.ref); break;
	case DT_E_INDEX: expand_expr(x, &e->index.base); expand_expr(x, &e->index.index); break;
	case DT_E_SIZEOF: case DT_E_OFFSETOF:
		expand_ref(x, &e->size.ty);
		expand_expr(x, &e->size.e);
		break;
	case DT_E_TUPLE: expand_exprs(x, e->tuple.elems, e->tuple.n); break;
	case DT_E_TUPLE_GET: expand_expr(x, &e->tget.base); break;
	case DT_E_BLOCK:
		expand_stmts(x, &e->block.stmts);
		expand_expr(x, &e->block.value);
		break;
	default: break;
	}
}

static void expand_stmts(expander *x, dt_stmt_list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		dt_stmt *st = l->v[i];
		switch (st->kind) {
		case DT_S_EXPR: case DT_S_RETURN: expand_expr(x, &st->expr); break;
		case DT_S_ASSIGN:
			expand_ref(x, &st->assign.decl_type);
			expand_expr(x, &st->assign.target);
			expand_expr(x, &st->assign.value);
			break;
		case DT_S_IF:
			expand_expr(x, &st->if_.cond);
			expand_stmts(x, &st->if_.then);
			expand_stmts(x, &st->if_.els);
			break;
		case DT_S_UNROLL: expand_stmts(x, &st->unroll.body); break;
		case DT_S_WHILE:
			expand_expr(x, &st->while_.cond);
			expand_stmts(x, &st->while_.body);
			break;
		case DT_S_BLOCK: expand_stmts(x, &st->block); break;
		case DT_S_FOR:
			expand_expr(x, &st->for_.start);
			expand_expr(x, &st->for_.end);
			expand_stmts(x, &st->for_.body);
			break;
		default: break;
		}
	}
}

void dt_macro_expand(dt_arena *a, dt_diags *d, dt_program *p, dt_macro_def *const *defs,
		     uint32_t ndefs)
{
	expander x = { .a = a, .d = d, .defs = defs, .ndefs = ndefs };
	x.bad = calloc(ndefs ? ndefs : 1, sizeof(bool));
	if (!x.bad)
		return;
	validate(&x);
	for (uint32_t i = 0; i < p->nprobes; i++) {
		expand_expr(&x, &p->probes[i]->pred);
		expand_stmts(&x, &p->probes[i]->body);
	}
	free(x.bad);
}

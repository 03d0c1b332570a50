/* cg_resources.c — what the code of a program will reference, decided from the checked program
 * before any code is generated (bpftrace's resource analysis): the event ring buffer, the exec
 * follower's maps, the xprobe result, the DWARF walker of each program type, the stack-trace
 * map of each (kind, depth), and for probes too large for one program (cg_split.c) the prog
 * array that chains their parts and the frame map that holds their $variables. The session
 * creates, loads and attaches all of it first, so that code generation only looks fds up. Each
 * rule names the emitter whose output needs the object; a rule that misses one shows as an
 * internal error at code generation, never as a silent gap. Also the one walk over a probe's
 * expressions that both this and the emitters use. */
#include "codegen/cg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the walk */

typedef struct visit {
	void (*fn)(void *ctx, const dt_expr *e);
	void (*sfn)(void *ctx, const dt_stmt *s); /* also each statement, when set */
	void *ctx;
} visit;

static void visit_expr(const visit *v, const dt_expr *e);
static void visit_stmts(const visit *v, const dt_stmt_list *l);

static void visit_exprs(const visit *v, dt_expr *const *es, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		visit_expr(v, es[i]);
}

static void visit_expr(const visit *v, const dt_expr *e)
{
	if (!e)
		return;
	v->fn(v->ctx, e);
	switch (e->kind) {
	case DT_E_MAP: visit_exprs(v, e->map.keys, e->map.nkeys); break;
	case DT_E_CALL: visit_exprs(v, e->call.args, e->call.nargs); break;
	case DT_E_BINOP: visit_expr(v, e->bin.l); visit_expr(v, e->bin.r); break;
	case DT_E_UNOP: visit_expr(v, e->un.e); break;
	case DT_E_TERNARY:
		visit_expr(v, e->tern.cond);
		visit_expr(v, e->tern.t);
		visit_expr(v, e->tern.f);
		break;
	case DT_E_FIELD: visit_expr(v, e->field.base); break;
	case DT_E_CAST: visit_expr(v, e->cast.e); break;
	case DT_E_DEREF: case DT_E_ADDROF: visit_expr(v, e->un.e); break;
	case DT_E_INDEX: visit_expr(v, e->index.base); visit_expr(v, e->index.index); break;
	case DT_E_SIZEOF: case DT_E_OFFSETOF: case DT_E_IDENT: break; /* folded by the checker */
	case DT_E_TUPLE: visit_exprs(v, e->tuple.elems, e->tuple.n); break;
	case DT_E_TUPLE_GET: visit_expr(v, e->tget.base); break;
	case DT_E_BLOCK: visit_stmts(v, &e->block.stmts); visit_expr(v, e->block.value); break;
	default: break;
	}
}

static void visit_stmts(const visit *v, const dt_stmt_list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		const dt_stmt *s = l->v[i];

		if (v->sfn)
			v->sfn(v->ctx, s);
		switch (s->kind) {
		case DT_S_EXPR: visit_expr(v, s->expr); break;
		case DT_S_ASSIGN:
			visit_expr(v, s->assign.target);
			visit_expr(v, s->assign.value);
			break;
		case DT_S_IF:
			visit_expr(v, s->if_.cond);
			visit_stmts(v, &s->if_.then);
			visit_stmts(v, &s->if_.els);
			break;
		case DT_S_UNROLL: visit_stmts(v, &s->unroll.body); break;
		case DT_S_WHILE:
			visit_expr(v, s->while_.cond);
			visit_stmts(v, &s->while_.body);
			break;
		case DT_S_BLOCK: visit_stmts(v, &s->block); break;
		case DT_S_RETURN:
			if (s->expr)
				visit_expr(v, s->expr);
			break;
		case DT_S_FOR:
			visit_expr(v, s->for_.var);
			visit_expr(v, s->for_.map);
			visit_expr(v, s->for_.start);
			visit_expr(v, s->for_.end);
			visit_stmts(v, &s->for_.body);
			break;
		case DT_S_BREAK: case DT_S_CONTINUE: break;
		}
	}
}

static void visit_probe(const visit *v, const dt_probe *p)
{
	visit_expr(v, p->pred);
	visit_stmts(v, &p->body);
}

void cg_visit_probe(const dt_probe *p, void (*fn)(void *ctx, const dt_expr *e), void *ctx)
{
	visit v = { fn, NULL, ctx };

	visit_probe(&v, p);
}

static void no_expr(void *ctx, const dt_expr *e)
{
	(void)ctx;
	(void)e;
}

static void note_for(void *ctx, const dt_stmt *s)
{
	if (s->kind == DT_S_FOR)
		*(bool *)ctx = true;
}

bool cg_probe_has_for(const dt_probe *p)
{
	bool found = false;
	visit v = { no_expr, note_for, &found };

	visit_probe(&v, p);
	return found;
}

void cg_visit_stmts(const dt_stmt_list *l, void (*fn)(void *ctx, const dt_expr *e), void *ctx)
{
	visit v = { fn, NULL, ctx };

	visit_stmts(&v, l);
}

void cg_visit_expr(const dt_expr *e, void (*fn)(void *ctx, const dt_expr *e), void *ctx)
{
	visit v = { fn, NULL, ctx };

	visit_expr(&v, e);
}

/* ------------------------------------------------------------ the rules */

static void add_stack(dt_cg_resources *r, dt_stack_kind kind, uint32_t depth)
{
	for (uint32_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].kind == kind && r->stacks[i].depth == depth)
			return;
	r->stacks = xrealloc(r->stacks, (r->nstacks + 1) * sizeof(*r->stacks));
	r->stacks[r->nstacks++] = (dt_cg_stack_need){ .kind = kind, .depth = depth };
}

static void expr_needs(void *ctx, const dt_expr *e)
{
	dt_cg_resources *r = ctx;

	/* cg_arith: a division by a divisor that may be 0 warns through the events ring. */
	if ((e->kind == DT_E_BINOP && cg_div_may_warn(e->bin.op, e->bin.r)) ||
	    cg_index_may_warn(e))
		r->events = true;
	if (e->kind == DT_E_BUILTIN) {
		dt_stack_kind kind;
		uint32_t depth;

		switch (e->builtin.id) {
		case DT_B_KSTACK: case DT_B_USTACK: case DT_B_USTACK_DWARF:
			/* cg_stack_ref: a stack-trace map, or the walker's result; user stacks
			 * carry the generation and note the pid (note_tgid). */
			cg_stack_shape(e, &kind, &depth);
			if (kind != DT_STACK_USER_DWARF)
				add_stack(r, kind, depth);
			r->user_addrs |= kind != DT_STACK_KERNEL;
			break;
		case DT_B_FUNC:
			/* A uprobe's func is a usym (usym_of). */
			r->user_addrs |= e->type && e->type->kind == DT_T_USYM;
			break;
		default:
			r->xprobe_result |= cg_xprobe_is_builtin(e->builtin.id);
			break;
		}
		return;
	}
	if (e->kind != DT_E_CALL)
		return;
	switch (e->call.id) {
	case DT_F_USYM:
		r->user_addrs = true; /* usym_of */
		break;
	case DT_F_PRINTF: case DT_F_TIME: case DT_F_PRINT: case DT_F_CLEAR: case DT_F_ZERO:
	case DT_F_EXIT: case DT_F_CAT: case DT_F_SYSTEM: case DT_F_JOIN: case DT_F_UNWATCH:
	case DT_F_ERRORF: case DT_F_WARNF:
		r->events = true; /* cg_call_action */
		break;
	case DT_F_SKBOUTPUT:
		r->skb_output = true;
		break;
	case DT_F_DELETE:
		/* emit_delete: only a histogram key is deleted by userspace, through an event, and
		 * a keyless count is zeroed there. */
		if (e->call.nargs && e->call.args[0]->kind == DT_E_MAP && e->call.args[0]->map.sym) {
			dt_map_layout lay;

			dt_map_layout_of(e->call.args[0]->map.sym, &lay);
			r->events |= lay.bucketed || lay.zero_not_delete;
		}
		break;
	default:
		break;
	}
}

static void stmt_needs(void *ctx, const dt_stmt *s)
{
	dt_cg_resources *r = ctx;

	/* `$x /= y`, `@m %= y`: cg_arith, as for the operator. */
	if (s->kind == DT_S_ASSIGN && cg_div_may_warn(s->assign.op, s->assign.value))
		r->events = true;
}

int dt_cg_resources_of(const dt_program *p, dt_cg_resources *r, dt_diags *d)
{
	int rc = 0;

	memset(r, 0, sizeof(*r));
	for (uint32_t i = 0; i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];
		cg_split sp;

		visit_probe(&(visit){ expr_needs, stmt_needs, r }, pr);
		/* plan_programs: an entry and a continuation per attach point, both of the attach
		 * point's program type, joined by the walker of that type. */
		if (pr->uses_ustack_dwarf)
			for (uint32_t j = 0; j < pr->nattach; j++)
				r->walker_prog_types |= 1ull << cg_prog_type_at(pr, pr->attach[j]);
		/* plan_programs: a set of attach points reads func and probe by slot, and a set of
		 * syscall tracepoints may learn its slot from the syscall map. */
		for (uint32_t j = 0; j < pr->nattach; j++)
			/* watchpoint:FUNC+argN: its setup uprobe (runtime/watchpoint.c) asks for the
			 * breakpoint through the events ring. */
			r->events |= (pr->attach[j]->provider == DT_P_WATCHPOINT ||
				      pr->attach[j]->provider == DT_P_ASYNCWATCHPOINT) &&
				     pr->attach[j]->func;
		for (uint32_t j = 0; j + 1 < pr->nattach; j++) {
			const dt_attach *a = pr->attach[j];

			if (!dt_cg_same_set(a, pr->attach[j + 1]))
				continue;
			r->probe_names = true;
			r->syscall_slots |= a->provider == DT_P_TRACEPOINT && a->target &&
					    !strcmp(a->target, "syscalls");
		}
		/* plan_programs: a probe in parts chains them through the prog array of its
		 * program type, and keeps its $variables in the frame. */
		if (cg_split_probe(p, pr, d, &sp) < 0) {
			rc = -EINVAL;
			continue;
		}
		if (sp.nparts) {
			r->frame = true;
			for (uint32_t j = 0; j < pr->nattach; j++)
				r->chain_prog_types |= 1ull << cg_prog_type_at(pr, pr->attach[j]);
		}
		cg_split_fini(&sp);
	}
	/* A user address tells userspace about its process (DT_EV_PID_SEEN). */
	r->events |= r->user_addrs;
	return rc;
}

void dt_cg_resources_fini(dt_cg_resources *r)
{
	free(r->stacks);
	memset(r, 0, sizeof(*r));
}

bool dt_cg_resources_name(const dt_cg_resources *r, dt_aux_map which, dt_stack_kind kind,
			  uint32_t depth, enum bpf_prog_type prog_type)
{
	switch (which) {
	case DT_AUX_STATS: case DT_AUX_SCRATCH:
		return true;
	case DT_AUX_EVENTS:
		return r->events;
	case DT_AUX_PIDS_SEEN: case DT_AUX_EXEC_GEN:
		return r->user_addrs;
	case DT_AUX_XPROBE_RESULT:
		return r->xprobe_result;
	case DT_AUX_PROBE_NAMES:
		return r->probe_names;
	case DT_AUX_SYSCALL_SLOTS:
		return r->syscall_slots;
	case DT_AUX_CHAIN_PROGS:
		return prog_type < 64 && (r->chain_prog_types & (1ull << prog_type));
	case DT_AUX_FRAME:
		return r->frame;
	case DT_AUX_SKB_OUTPUT:
		return r->skb_output;
	case DT_AUX_WALKER_PROGS: case DT_AUX_CONT_PROGS: case DT_AUX_WALKER_STATE:
		return prog_type < 64 && (r->walker_prog_types & (1ull << prog_type));
	case DT_AUX_STACKS:
		for (uint32_t i = 0; i < r->nstacks; i++)
			if (r->stacks[i].kind == kind && r->stacks[i].depth == depth)
				return true;
		return false;
	}
	return false;
}

/* ------------------------------------------------------------ sizes of the shared maps */

uint32_t dt_cg_frame_size(uint32_t strlen)
{
	/* The flags' room that the default frame leaves past DT_MAX_VARS_SIZE. */
	uint32_t want = dt_limits_of(strlen).vars + (DT_CG_FRAME_SIZE - DT_MAX_VARS_SIZE);

	return DT_MAX(want, (uint32_t)DT_CG_FRAME_SIZE);
}

dt_cg_scratch dt_cg_scratch_shape(uint32_t strlen)
{
	dt_limits l = dt_limits_of(strlen);
	/* The largest one buffer: a value, key, event or the probe's variables, with room for
	 * an event's header. */
	uint32_t big = DT_ALIGN(DT_MAX(DT_MAX(l.value, l.key), DT_MAX(l.event, l.vars)) + 1024, 8);

	/* A statement's key, value and event, the probe's variables, and temporaries as large
	 * as a value: the fixed limits fill one DT_SCRATCH_SIZE value exactly. */
	if (l.key + l.value + l.event + l.vars + l.value <= DT_SCRATCH_SIZE)
		return (dt_cg_scratch){ DT_SCRATCH_SIZE, 1 };
	/* Those five, each at most `big` and one value each at worst, and one for what packing
	 * loses. */
	return (dt_cg_scratch){ big, 6 };
}

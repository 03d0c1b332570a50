/* cg_split.c — how a probe too large for one BPF program runs as several. The kernel bounds what
 * one program may be: 64 maps, 1M verified instructions, jumps within 32K instructions, and its
 * load time grows with the square of the program's size (every helper call the verifier
 * inlines — map lookups, mostly — moves the whole instruction array and its per-instruction
 * state). LLVM's optimisations, too, cost more than linearly in the size of one function. So
 * compile and load time stay linear only if no program grows with the script: a probe whose
 * body is estimated past one part's budget (instructions or maps) is cut into parts, each its
 * own program, the first one attached and each tail-calling the next.
 *
 * The body is first flattened into units: top-level statements, and the statements inside
 * large if/else, unroll and { } blocks, each under at most one guard. A large `if` becomes a
 * flag unit that stores CG_FLAG_THEN or CG_FLAG_ELSE (CG_FLAG_OFF when its own guard did not
 * hold) into the flag of its nesting depth, and its statements become units guarded by that
 * flag; unroll repeats its statements. Units are then packed greedily into parts. What lives
 * across parts — $variables, the continuation's stack ref, the flags — is in the probe's frame,
 * a per-CPU map value (DT_AUX_FRAME) instead of the stack, which a tail call does not keep.
 *
 * A chain is bounded by the kernel's tail-call limit (the DWARF walker's own tail calls count
 * against it), so a larger probe gets larger parts, up to a ceiling past which it is reported
 * as too large — as is a single statement that references more maps than one program may. */
#include "codegen/cg_internal.h"
#include "bpf-lib/dt_walker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Estimated instructions per part, and the ceiling a part may grow to when a probe would
 * otherwise need more parts than a chain may have. The estimate errs high (1 to 1.6 times
 * what LLVM emits; since aggregations are subprogram calls, about 3 times for statements that
 * are mostly aggregations: gen_script.py's parts of weight 8000 come out at ~2,700
 * instructions), so the ceiling keeps a part's jumps within BPF's 16-bit offsets (codegen.c
 * checks the result: CG_MAX_JUMP). The budget is not raised to match: measured on a 1 MB
 * script over 32 probes (Linux 6.18), budgets of 8000, 16000 and 24000 gave 255, 128 and 96
 * programs for 15.6, 17.3 and 17.8 s of CPU, because LLVM's time is per instruction whatever
 * the parts, and the verifier's grows faster than a part's size. */
#define CG_PART_WEIGHT 8000
#define CG_PART_WEIGHT_MAX 32000
/* A compound statement is flattened when it is larger than this. */
#define CG_UNIT_WEIGHT (CG_PART_WEIGHT / 8)
/* Maps one program may reference (the kernel's MAX_USED_MAPS), and those codegen itself may
 * add to a part (events, stats, scratch, frame, chain, walker state, the exec follower's two,
 * the xprobe result, a spare): the rest is for script maps and stack-trace maps. */
#define CG_PROG_MAPS 64
#define CG_AUX_MAPS 10
#define CG_PART_MAPS (CG_PROG_MAPS - CG_AUX_MAPS)
/* Tail calls one chain may make: the kernel allows 33 (32 before Linux 5.17). */
#define CG_TAIL_CALLS 32

/* ------------------------------------------------------------ estimates */

static uint32_t bytes_weight(uint32_t size)
{
	/* A buffer is zeroed and written (or copied) a word at a time; a large one by two
	 * helper calls (cg_memcpy). */
	if (size > CG_BULK_BYTES)
		return 16;
	return DT_ALIGN(size, 8) / 8 * 2;
}

/* Estimated instructions of one expression node, without its operands (the walk adds those):
 * calibrated on generated scripts to run 1 to 1.6 times what LLVM emits. */
static uint32_t node_weight(const dt_expr *e)
{
	bool buffer = e->type && e->type->kind != DT_T_VOID && !cg_is_scalar(e->type);
	uint32_t w = 2;

	switch (e->kind) {
	case DT_E_STR: case DT_E_TUPLE:
		/* has_key(@m, (a, b))'s key tuple is typed as the map's key, not on its own. */
		w += e->type ? bytes_weight(e->type->size) : 0;
		break;
	case DT_E_MAP: {
		dt_map_layout lay;

		/* The key, the helper calls and null checks, the value, a loss count. */
		dt_map_layout_of(e->map.sym, &lay);
		w += 20 + bytes_weight(lay.key_size) +
		     (cg_is_scalar(e->map.sym->value) ? 2 : bytes_weight(lay.value_size));
		break;
	}
	case DT_E_CALL:
		w += 8 + (buffer ? 8 + bytes_weight(e->type->size) : 0);
		if (e->call.args_type)
			w += 8 + bytes_weight(e->call.args_type->size);
		if (e->call.id == DT_F_HIST || e->call.id == DT_F_LHIST || e->call.id == DT_F_STATS ||
		    e->call.id == DT_F_TSERIES)
			w += 30;
		break;
	case DT_E_BUILTIN: case DT_E_FIELD:
		w += 8 + (buffer ? bytes_weight(e->type->size) : 0);
		break;
	case DT_E_BINOP:
		/* cg_arith: the division, and when the divisor may be 0 its warning event. */
		w += e->bin.op == DT_OP_DIV || e->bin.op == DT_OP_MOD ? 20 : 0;
		w += cg_div_may_warn(e->bin.op, e->bin.r) ? 16 : 0;
		break;
	case DT_E_TERNARY:
		w += 4;
		break;
	default:
		break;
	}
	return w;
}

typedef struct stack_shape {
	dt_stack_kind kind;
	uint32_t depth;
} stack_shape;

/* What a statement (or an expression) costs: its weight and the maps it references. */
typedef struct cost {
	uint64_t weight;
	DT_VEC(uint32_t) maps;        /* script map ids, each once */
	DT_VEC(stack_shape) stacks;   /* stack-trace maps, each once */
	uint8_t *seen;                /* per script map id, while collecting */
} cost;

static void add_expr_cost(void *ctx, const dt_expr *e)
{
	cost *k = ctx;

	k->weight += node_weight(e);
	if (e->kind == DT_E_MAP && e->map.sym && !k->seen[e->map.sym->id]) {
		k->seen[e->map.sym->id] = 1;
		DT_VEC_PUSH(&k->maps, e->map.sym->id);
	}
	if (e->kind == DT_E_BUILTIN && (e->builtin.id == DT_B_KSTACK ||
					e->builtin.id == DT_B_USTACK)) {
		stack_shape sh;

		cg_stack_shape(e, &sh.kind, &sh.depth);
		for (size_t i = 0; i < k->stacks.n; i++)
			if (k->stacks.v[i].kind == sh.kind && k->stacks.v[i].depth == sh.depth)
				return;
		DT_VEC_PUSH(&k->stacks, sh);
	}
}

static void stmt_cost(cost *k, const dt_stmt *s);

static void stmts_cost(cost *k, const dt_stmt_list *l, uint32_t times)
{
	for (uint32_t t = 0; t < times; t++)
		for (uint32_t i = 0; i < l->n; i++)
			stmt_cost(k, l->v[i]);
}

static void stmt_cost(cost *k, const dt_stmt *s)
{
	k->weight += 2;
	switch (s->kind) {
	case DT_S_EXPR:
		cg_visit_expr(s->expr, add_expr_cost, k);
		break;
	case DT_S_ASSIGN:
		cg_visit_expr(s->assign.target, add_expr_cost, k);
		cg_visit_expr(s->assign.value, add_expr_cost, k);
		break;
	case DT_S_IF:
		cg_visit_expr(s->if_.cond, add_expr_cost, k);
		stmts_cost(k, &s->if_.then, 1);
		stmts_cost(k, &s->if_.els, 1);
		break;
	case DT_S_UNROLL:
		stmts_cost(k, &s->unroll.body, s->unroll.count);
		break;
	case DT_S_WHILE:
		/* A loop stays whole in one part (its iterations are run-time). */
		cg_visit_expr(s->while_.cond, add_expr_cost, k);
		stmts_cost(k, &s->while_.body, 1);
		break;
	case DT_S_FOR:
		/* Its body is a callback of the statement's program: whole in one part. */
		cg_visit_expr(s->for_.map, add_expr_cost, k);
		cg_visit_expr(s->for_.start, add_expr_cost, k);
		cg_visit_expr(s->for_.end, add_expr_cost, k);
		stmts_cost(k, &s->for_.body, 1);
		break;
	case DT_S_BLOCK:
		stmts_cost(k, &s->block, 1);
		break;
	case DT_S_RETURN:
		if (s->expr)
			cg_visit_expr(s->expr, add_expr_cost, k);
		break;
	case DT_S_BREAK: case DT_S_CONTINUE:
		break;
	}
}

static void cost_reset(cost *k)
{
	for (size_t i = 0; i < k->maps.n; i++)
		k->seen[k->maps.v[i]] = 0;
	k->maps.n = 0;
	k->stacks.n = 0;
	k->weight = 0;
}

static uint32_t cost_nmaps(const cost *k)
{
	return (uint32_t)(k->maps.n + k->stacks.n);
}

/* ------------------------------------------------------------ flattening */

typedef struct unit_cost {
	uint32_t weight;
	uint32_t first_map, nmaps;    /* a slice of planner.map_ids */
	uint32_t first_stack, nstacks;
} unit_cost;

typedef struct planner {
	const dt_program *prog;
	const dt_probe *probe;
	dt_diags *d;
	cost k;
	DT_VEC(cg_unit) units;
	DT_VEC(unit_cost) costs;
	DT_VEC(uint32_t) map_ids;
	DT_VEC(stack_shape) stacks;
	uint32_t nflags;
} planner;

static void push_unit(planner *pl, cg_unit u)
{
	unit_cost uc = { 0 };

	cost_reset(&pl->k);
	if (u.stmt)
		stmt_cost(&pl->k, u.stmt);
	else
		cg_visit_expr(u.cond, add_expr_cost, &pl->k);
	/* The guard's load and branch, a flag's store. */
	pl->k.weight += u.guard >= 0 || !u.stmt ? 8 : 0;
	uc.weight = (uint32_t)DT_MIN(pl->k.weight, (uint64_t)UINT32_MAX);
	u.weight = uc.weight;
	uc.first_map = (uint32_t)pl->map_ids.n;
	uc.nmaps = (uint32_t)pl->k.maps.n;
	for (size_t i = 0; i < pl->k.maps.n; i++)
		DT_VEC_PUSH(&pl->map_ids, pl->k.maps.v[i]);
	uc.first_stack = (uint32_t)pl->stacks.n;
	uc.nstacks = (uint32_t)pl->k.stacks.n;
	for (size_t i = 0; i < pl->k.stacks.n; i++)
		DT_VEC_PUSH(&pl->stacks, pl->k.stacks.v[i]);
	DT_VEC_PUSH(&pl->units, u);
	DT_VEC_PUSH(&pl->costs, uc);
}

static bool is_compound(const dt_stmt *s)
{
	return s->kind == DT_S_IF || s->kind == DT_S_UNROLL || s->kind == DT_S_BLOCK;
}

static void flatten(planner *pl, const dt_stmt_list *l, int guard, uint8_t want, uint32_t depth)
{
	for (uint32_t i = 0; i < l->n; i++) {
		const dt_stmt *s = l->v[i];

		if (is_compound(s)) {
			cost_reset(&pl->k);
			stmt_cost(&pl->k, s);
		}
		if (!is_compound(s) ||
		    (pl->k.weight <= CG_UNIT_WEIGHT && cost_nmaps(&pl->k) <= CG_PART_MAPS / 2)) {
			push_unit(pl, (cg_unit){ .stmt = s, .guard = guard, .want = want });
			continue;
		}
		switch (s->kind) {
		case DT_S_BLOCK:
			flatten(pl, &s->block, guard, want, depth);
			break;
		case DT_S_UNROLL:
			for (uint32_t n = 0; n < s->unroll.count; n++)
				flatten(pl, &s->unroll.body, guard, want, depth);
			break;
		default: /* DT_S_IF */
			push_unit(pl, (cg_unit){ .cond = s->if_.cond, .flag = depth, .guard = guard,
						 .want = want });
			pl->nflags = DT_MAX(pl->nflags, depth + 1);
			flatten(pl, &s->if_.then, (int)depth, CG_FLAG_THEN, depth + 1);
			flatten(pl, &s->if_.els, (int)depth, CG_FLAG_ELSE, depth + 1);
			break;
		}
	}
}

/* ------------------------------------------------------------ packing */

/* Parts a chain of this probe may have: the tail calls left after those the walker makes
 * (entry -> walker runs -> continuation) and the xprobe's hand-off, plus the first part. */
static uint32_t max_parts(const dt_probe *p)
{
	uint32_t used = 0;

	if (p->uses_ustack_dwarf)
		used += DT_WALKER_MAX_RUNS + 1;
	for (uint32_t i = 0; i < p->nattach; i++)
		if (p->attach[i]->provider == DT_P_XPROBE) {
			used += 1; /* bpf-lib/xprobe.bpf.c tail-calls the probe */
			break;
		}
	return CG_TAIL_CALLS - used + 1;
}

/* Part maps so far, each once: `stamp[id] == part + 1` marks a script map counted in it. */
typedef struct packing {
	uint32_t *stamp;
	DT_VEC(stack_shape) stacks;
	uint32_t part, nmaps;
	uint64_t weight;
} packing;

static uint32_t new_maps(const planner *pl, const packing *pk, const unit_cost *uc)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < uc->nmaps; i++)
		n += pk->stamp[pl->map_ids.v[uc->first_map + i]] != pk->part + 1;
	for (uint32_t i = 0; i < uc->nstacks; i++) {
		const stack_shape *sh = &pl->stacks.v[uc->first_stack + i];
		bool have = false;

		for (size_t j = 0; j < pk->stacks.n && !have; j++)
			have = pk->stacks.v[j].kind == sh->kind && pk->stacks.v[j].depth == sh->depth;
		n += !have;
	}
	return n;
}

static void take(const planner *pl, packing *pk, const unit_cost *uc)
{
	pk->nmaps += new_maps(pl, pk, uc);
	for (uint32_t i = 0; i < uc->nmaps; i++)
		pk->stamp[pl->map_ids.v[uc->first_map + i]] = pk->part + 1;
	for (uint32_t i = 0; i < uc->nstacks; i++)
		DT_VEC_PUSH(&pk->stacks, pl->stacks.v[uc->first_stack + i]);
	pk->weight += uc->weight;
}

/* Packs the units into parts of at most `budget` weight; the first part also holds what
 * `first` costs (the predicate, zeroing the frame). The part ends go to out->part_end. */
static void pack(const planner *pl, const unit_cost *first, uint64_t budget, cg_split *out)
{
	packing pk = { .stamp = xcalloc(pl->prog->nmaps + 1, sizeof(uint32_t)) };
	DT_VEC(uint32_t) ends = { 0 };

	take(pl, &pk, first);
	for (size_t i = 0; i < pl->units.n; i++) {
		const unit_cost *uc = &pl->costs.v[i];

		if (i > 0 && (pk.weight + uc->weight > budget ||
			      pk.nmaps + new_maps(pl, &pk, uc) > CG_PART_MAPS)) {
			DT_VEC_PUSH(&ends, (uint32_t)i);
			pk.part++;
			pk.nmaps = 0;
			pk.weight = 0;
			pk.stacks.n = 0;
		}
		take(pl, &pk, uc);
	}
	DT_VEC_PUSH(&ends, (uint32_t)pl->units.n);
	out->part_end = ends.v;
	out->nparts = (uint32_t)ends.n;
	free(pk.stamp);
	free(pk.stacks.v);
}

/* ------------------------------------------------------------ the plan */

static void planner_fini(planner *pl)
{
	free(pl->k.maps.v);
	free(pl->k.stacks.v);
	free(pl->k.seen);
	free(pl->units.v);
	free(pl->costs.v);
	free(pl->map_ids.v);
	free(pl->stacks.v);
}

static dt_span unit_span(const cg_unit *u)
{
	return u->stmt ? u->stmt->span : u->cond->span;
}

/* The frame: the $variables, then the continuation's stack ref, then the flags. */
static int lay_out_frame(planner *pl, cg_split *out)
{
	const dt_probe *p = pl->probe;
	uint32_t off = 0;

	out->var_off = xcalloc(p->nvars + 1, sizeof(*out->var_off));
	for (uint32_t i = 0; i < p->nvars; i++) {
		const dt_type *t = p->vars[i]->type;

		out->var_off[i] = off;
		off += cg_is_scalar(t) ? 8 : DT_ALIGN(t->size ? t->size : 8, 8);
	}
	out->vars_size = off;
	out->dwarf_off = off;
	off += p->uses_ustack_dwarf ? (uint32_t)sizeof(struct dt_stack_ref) : 0;
	out->flags_off = off;
	off += pl->nflags * 8;
	out->frame_size = off;
	if (off > dt_cg_frame_size(pl->prog->strlen)) {
		dt_diag(pl->d, DT_DIAG_ERROR, p->span, "this probe nests %u large if statements; a "
			"probe split into several programs can nest at most %u", pl->nflags,
			(dt_cg_frame_size(pl->prog->strlen) - out->flags_off) / 8);
		return -EINVAL;
	}
	return 0;
}

int cg_split_probe(const dt_program *prog, const dt_probe *p, dt_diags *d, cg_split *out)
{
	planner pl = { .prog = prog, .probe = p, .d = d };
	unit_cost first = { 0 };
	uint64_t total, budget;
	uint32_t limit = max_parts(p);
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pl.k.seen = xcalloc(prog->nmaps + 1, 1);
	/* The first part's own work: the predicate (wherever it runs, counted here for its
	 * maps) and zeroing the $variables. */
	cost_reset(&pl.k);
	cg_visit_expr(p->pred, add_expr_cost, &pl.k);
	first.weight = (uint32_t)pl.k.weight + 32;
	for (uint32_t i = 0; i < p->nvars; i++)
		first.weight += bytes_weight(p->vars[i]->type->size ? p->vars[i]->type->size : 8);
	first.nmaps = (uint32_t)pl.k.maps.n;
	for (size_t i = 0; i < pl.k.maps.n; i++)
		DT_VEC_PUSH(&pl.map_ids, pl.k.maps.v[i]);
	first.first_stack = 0;
	first.nstacks = (uint32_t)pl.k.stacks.n;
	for (size_t i = 0; i < pl.k.stacks.n; i++)
		DT_VEC_PUSH(&pl.stacks, pl.k.stacks.v[i]);
	if (first.nmaps + first.nstacks > CG_PART_MAPS) {
		dt_diag(d, DT_DIAG_ERROR, p->pred->span, "this predicate references %u maps; one "
			"BPF program can reference at most %d (%d of them dwarftrace's own)",
			first.nmaps + first.nstacks, CG_PROG_MAPS, CG_AUX_MAPS);
		rc = -EINVAL;
		goto out;
	}

	/* Whole: one program, as every probe that fits is compiled. */
	cost_reset(&pl.k);
	stmts_cost(&pl.k, &p->body, 1);
	total = pl.k.weight + first.weight;
	{
		/* The predicate's maps with the body's: `seen` still marks the body's. */
		uint32_t n = cost_nmaps(&pl.k) + first.nstacks;

		for (uint32_t i = 0; i < first.nmaps; i++)
			n += !pl.k.seen[pl.map_ids.v[i]];
		if (total <= CG_PART_WEIGHT && n <= CG_PART_MAPS)
			goto out;
	}

	flatten(&pl, &p->body, -1, 0, 0);
	for (size_t i = 0; i < pl.units.n; i++) {
		const unit_cost *uc = &pl.costs.v[i];

		if (uc->nmaps + uc->nstacks > CG_PART_MAPS) {
			dt_diag(d, DT_DIAG_ERROR, unit_span(&pl.units.v[i]), "this statement "
				"references %u maps; one BPF program can reference at most %d (%d "
				"of them dwarftrace's own)", uc->nmaps + uc->nstacks, CG_PROG_MAPS,
				CG_AUX_MAPS);
			dt_diag_hint(d, "split the statement into several");
			rc = -EINVAL;
			goto out;
		}
	}
	/* Larger parts when the chain would be too long. Greedy packing leaves less than one
	 * unit unused at the end of a part, so parts of total / limit plus the largest unit
	 * need at most `limit` of them (unless maps end parts early). */
	uint32_t largest = 0;

	for (size_t i = 0; i < pl.costs.n; i++)
		largest = DT_MAX(largest, pl.costs.v[i].weight);
	budget = DT_MAX((uint64_t)CG_PART_WEIGHT, total / limit + largest);
	if (budget <= CG_PART_WEIGHT_MAX)
		pack(&pl, &first, budget, out);
	if (budget > CG_PART_WEIGHT_MAX || out->nparts > limit) {
		if (budget <= CG_PART_WEIGHT_MAX)
			dt_diag(d, DT_DIAG_ERROR, p->span, "this probe references too many maps to "
				"load: it needs more than %u programs of at most %d maps each, joined "
				"by tail calls", limit, CG_PART_MAPS);
		else
			dt_diag(d, DT_DIAG_ERROR, p->span, "this probe is too large to load: it "
				"would take about %llu BPF instructions, and a probe can have at most "
				"about %llu (%u programs joined by tail calls)",
				(unsigned long long)total * 2 / 3,
				(unsigned long long)CG_PART_WEIGHT_MAX * limit * 2 / 3, limit);
		dt_diag_hint(d, "split it into several probes on the same attach point");
		rc = -EINVAL;
		goto out;
	}
	rc = lay_out_frame(&pl, out);
	if (rc)
		goto out;
	out->units = pl.units.v;
	out->nunits = (uint32_t)pl.units.n;
	pl.units.v = NULL;
out:
	if (rc)
		cg_split_fini(out);
	planner_fini(&pl);
	return rc;
}

void cg_split_fini(cg_split *s)
{
	free(s->units);
	free(s->part_end);
	free(s->var_off);
	memset(s, 0, sizeof(*s));
}

uint32_t cg_frame_key(enum bpf_prog_type t)
{
	switch (t) {
	case BPF_PROG_TYPE_PERF_EVENT: return 0;
	case BPF_PROG_TYPE_KPROBE: return 1;
	case BPF_PROG_TYPE_TRACEPOINT: return 2;
	default: return 3; /* BPF_PROG_TYPE_RAW_TRACEPOINT: BEGIN, END */
	}
}

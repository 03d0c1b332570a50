/* cg_stmt.c — statements, map writes, aggregations, events, and the shape of each program: the
 * pid filter, the predicate, the body, and for probes that use ustack_dwarf the split into an
 * entry program (filter, predicate when it can run before the walk, hand-off to the walker by
 * tail call) and a continuation (the body, with the walker's result as the stack). Map values
 * are updated in place when the lookup finds them; otherwise the same update is applied to a
 * zeroed value that is then inserted, so the first write of min/max/avg/stats/hist needs no
 * separate initialisation path. */
#include "codegen/cg_internal.h"
#include "bpf-lib/dt_walker.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ aggregations */

/* hist(v, bits): dt_hist_bucket's rule. 0 for negatives, 1 + v up to the mask (2^bits - 1),
 * else with l = floor(log2 v) - bits: ((l + 1) << bits) + ((v >> l) & mask) + 1 (bits 0:
 * 2 + floor(log2 v)). */
static LLVMValueRef hist_bucket(cg *c, LLVMValueRef v, uint32_t bits)
{
	LLVMValueRef x = v, r = cg_i64(c, 0), mask = cg_i64(c, (1ull << bits) - 1);

	for (int s = 32; s >= 1; s /= 2) {
		LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntUGE, x, cg_i64(c, 1ull << s), "");
		LLVMValueRef t = LLVMBuildSelect(c->b, big, cg_i64(c, s), cg_i64(c, 0), "");

		x = LLVMBuildLShr(c->b, x, t, "");
		r = LLVMBuildAdd(c->b, r, t, "");
	}
	/* r = floor(log2 v); l = r - bits, used only where v > mask, so l >= 0 there. */
	LLVMValueRef l = LLVMBuildSub(c->b, r, cg_i64(c, bits), "");
	LLVMValueRef low = LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, v, l, ""), mask, "");
	r = LLVMBuildAdd(c->b, LLVMBuildShl(c->b, LLVMBuildAdd(c->b, l, cg_i64(c, 1), ""),
					    cg_i64(c, bits), ""), low, "");
	r = LLVMBuildAdd(c->b, r, cg_i64(c, 1), "");
	r = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntULE, v, mask, ""),
			    LLVMBuildAdd(c->b, v, cg_i64(c, 1), ""), r, "");
	return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, v, cg_i64(c, 0), ""),
			       cg_i64(c, 0), r, "");
}

/* lhist(): 0 below min, 1 + (v - min) / step inside, the last bucket at or above max. */
static LLVMValueRef lhist_bucket(cg *c, LLVMValueRef v, const dt_type *t)
{
	int64_t min = t->lhist.min, max = t->lhist.max, step = t->lhist.step > 0 ? t->lhist.step : 1;
	uint32_t n = dt_lhist_nbuckets(min, max, step);
	LLVMValueRef in = LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, v, cg_i64(c, (uint64_t)min), ""),
					cg_i64(c, (uint64_t)step), "");
	LLVMValueRef r = LLVMBuildAdd(c->b, in, cg_i64(c, 1), "");
	LLVMValueRef last = cg_i64(c, n ? n - 1 : 0);

	r = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, r, last, ""), last, r, "");
	r = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, v, cg_i64(c, (uint64_t)max), ""),
			    last, r, "");
	return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, v, cg_i64(c, (uint64_t)min), ""),
			       cg_i64(c, 0), r, "");
}

static void add_at(cg *c, LLVMValueRef p, uint32_t off, LLVMValueRef v)
{
	cg_store_int(c, p, off, 8, LLVMBuildAdd(c->b, cg_load_int(c, p, off, 8, false), v, ""));
}

/* Keeps v at p+off when `set` is zero or v beats the stored value. */
static void minmax_at(cg *c, LLVMValueRef p, uint32_t off, LLVMValueRef set, LLVMValueRef v,
		      bool is_min)
{
	LLVMValueRef old = cg_load_int(c, p, off, 8, true);
	LLVMValueRef better = LLVMBuildICmp(c->b, is_min ? LLVMIntSLT : LLVMIntSGT, v, old, "");
	LLVMValueRef unset = LLVMBuildICmp(c->b, LLVMIntEQ, set, cg_i64(c, 0), "");
	LLVMValueRef take = LLVMBuildOr(c->b, better, unset, "");

	cg_store_int(c, p, off, 8, LLVMBuildSelect(c->b, take, v, old, ""));
}

/* The value layouts are the dt_agg_* structs of dt_abi.h; a hist/lhist bucket is one count. */
static void agg_apply(cg *c, dt_type_kind k, LLVMValueRef p, LLVMValueRef v)
{
	switch (k) {
	case DT_T_COUNT: case DT_T_HIST: case DT_T_LHIST:
		add_at(c, p, offsetof(struct dt_agg_count, count), cg_i64(c, 1));
		break;
	case DT_T_SUM:
		add_at(c, p, offsetof(struct dt_agg_count, count), v);
		break;
	case DT_T_MIN: case DT_T_MAX: {
		const uint32_t set = offsetof(struct dt_agg_minmax, set);

		minmax_at(c, p, offsetof(struct dt_agg_minmax, value),
			  cg_load_int(c, p, set, 8, false), v, k == DT_T_MIN);
		cg_store_int(c, p, set, 8, cg_i64(c, 1));
		break;
	}
	case DT_T_AVG:
		add_at(c, p, offsetof(struct dt_agg_avg, total), v);
		add_at(c, p, offsetof(struct dt_agg_avg, count), cg_i64(c, 1));
		break;
	case DT_T_STATS: {
		const uint32_t count = offsetof(struct dt_agg_stats, count);
		LLVMValueRef n = cg_load_int(c, p, count, 8, false);

		minmax_at(c, p, offsetof(struct dt_agg_stats, min), n, v, true);
		minmax_at(c, p, offsetof(struct dt_agg_stats, max), n, v, false);
		cg_store_int(c, p, count, 8, LLVMBuildAdd(c->b, n, cg_i64(c, 1), ""));
		add_at(c, p, offsetof(struct dt_agg_stats, total), v);
		break;
	}
	default:
		break;
	}
}

static bool is_agg_func(dt_func f)
{
	return f >= DT_F_COUNT && f <= DT_F_TSERIES;
}

static void finish_function(cg *c);

/* Subprograms. A statement that calls one is a few instructions instead of the tens the
 * operation takes inline, and LLVM's BPF backend spends its time per instruction, so this is
 * most of a large script's compile time. Each is a BPF-to-BPF function in the calling program's
 * own section (internal, never inlined), made once per program and key; the verifier checks it
 * at each call site with the caller's registers, so map pointers and keys on the caller's stack
 * keep their types, and its few stack bytes count against the 512 of the call chain. */

/* The subprogram of this program with this key, or NULL (then sub_open makes it). */
static LLVMValueRef sub_find(cg *c, uint32_t kind, uint32_t value_size)
{
	for (uint32_t i = 0; i < c->nsubs; i++)
		if (c->subs[i].kind == kind && c->subs[i].value_size == value_size)
			return c->subs[i].fn;
	return NULL;
}

/* Starts function `name` of type `fty` in the program's section and points c at it, with the
 * same vocabulary (buffers, the prologue's counter lookup) as a program; `saved` keeps the
 * caller's state for cg_fn_close. */
LLVMValueRef cg_fn_open(cg *c, const char *name, LLVMTypeRef fty, cg_saved *saved)
{
	LLVMValueRef fn = LLVMAddFunction(c->mod, name, fty);

	LLVMSetLinkage(fn, LLVMInternalLinkage);
	LLVMSetSection(fn, LLVMGetSection(c->fn));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(c->ctx, "no-builtins", 11, "", 0));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(c->ctx,
							LLVMGetEnumAttributeKindForName("noinline", 8), 0));
	saved->c = *c;
	saved->from = LLVMGetInsertBlock(c->b);
	c->fn = fn;
	c->ctxp = NULL;
	c->stack_used = c->scratch_used = c->scratch_base = 0;
	c->npro = 0;
	c->key32 = NULL;
	c->slots = (typeof(c->slots)){ 0 };
	c->pool_from = 0;
	c->for_ret = NULL;
	c->loop_break = c->loop_cont = NULL;
	c->allocas = cg_block(c, "entry");
	c->prologue = cg_block(c, "prologue");
	c->body = cg_block(c, "body");
	LLVMPositionBuilderAtEnd(c->b, c->body);
	return fn;
}

/* Finishes the function and gives c back to the caller where it was; the subprograms made
 * meanwhile stay known to the program. */
void cg_fn_close(cg *c, cg_saved *saved)
{
	finish_function(c);
	free(c->slots.v);
	saved->c.err = c->err;
	saved->c.nsubs = c->nsubs;
	if (c->calls_c)
		saved->c.calls_c = c->calls_c;
	saved->c.linked = c->linked; /* imported C linked meanwhile (cg_link.c) */
	memcpy(saved->c.subs, c->subs, sizeof(c->subs));
	*c = saved->c;
	LLVMPositionBuilderAtEnd(c->b, saved->from);
}

/* Starts subprogram `fty` (cg_fn_open), made once per program and key; NULL when the program has
 * too many. */
static LLVMValueRef sub_open(cg *c, uint32_t kind, uint32_t value_size, LLVMTypeRef fty,
			     cg_saved *saved)
{
	char name[96];
	LLVMValueRef fn;

	if (c->nsubs == DT_ARRAY_SIZE(c->subs)) {
		cg_fail(c, c->at, "more than %zu subprograms", DT_ARRAY_SIZE(c->subs));
		return NULL;
	}
	snprintf(name, sizeof(name), "%s.sub%u_%u", LLVMGetValueName(c->fn), kind, value_size);
	fn = cg_fn_open(c, name, fty, saved);
	saved->c.subs[saved->c.nsubs++] = (struct cg_sub){ kind, value_size, fn };
	c->subs[c->nsubs++] = (struct cg_sub){ kind, value_size, fn };
	return fn;
}

/* Calls subprogram fn (NULL after an internal error: nothing). */
static LLVMValueRef sub_call(cg *c, LLVMValueRef fn, LLVMValueRef *args, unsigned n)
{
	if (!fn)
		return cg_i64(c, 0);
	return LLVMBuildCall2(c->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}

/* Keys of the subprograms that are not aggregations (those use their dt_type_kind). */
enum { SUB_HIST_BUCKET = 1000 };

/* `i64 (i64 v)`: hist_bucket(v), some 40 instructions inline. */
static LLVMValueRef hist_bucket_sub(cg *c, uint32_t bits)
{
	LLVMValueRef fn = sub_find(c, SUB_HIST_BUCKET, bits);
	cg_saved saved;

	if (fn)
		return fn;
	fn = sub_open(c, SUB_HIST_BUCKET, bits, LLVMFunctionType(c->i64, &c->i64, 1, false),
		      &saved);
	if (!fn)
		return NULL;
	LLVMBuildRet(c->b, hist_bucket(c, LLVMGetParam(fn, 0), bits));
	cg_fn_close(c, &saved);
	return fn;
}

/* `i64 (i8 *map, i8 *key, i64 v)`: applies aggregation k to the value at key in map, inserting
 * a zeroed value of value_size bytes so updated when the key is absent; returns 0, or the
 * insert's error (a full map). */
static LLVMValueRef agg_sub(cg *c, dt_type_kind k, uint32_t value_size)
{
	LLVMTypeRef at[3] = { c->i8p, c->i8p, c->i64 };
	LLVMValueRef fn = sub_find(c, (uint32_t)k, value_size), found, buf;
	LLVMBasicBlockRef hit, miss;
	cg_saved saved;

	if (fn)
		return fn;
	fn = sub_open(c, (uint32_t)k, value_size, LLVMFunctionType(c->i64, at, 3, false), &saved);
	if (!fn)
		return NULL;
	hit = cg_block(c, "agg.hit");
	miss = cg_block(c, "agg.miss");
	found = cg_map_lookup(c, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1));
	cg_br_nonnull(c, found, hit, miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	agg_apply(c, k, found, LLVMGetParam(fn, 2));
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, miss);
	buf = cg_buf(c, value_size);
	agg_apply(c, k, buf, LLVMGetParam(fn, 2));
	LLVMBuildRet(c->b, cg_map_update(c, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), buf));
	cg_fn_close(c, &saved);
	return fn;
}

/* Applies tseries agg to the interval value at p (dt_agg_tseries) for value v. */
static void tseries_apply(cg *c, dt_tseries_agg agg, LLVMValueRef p, LLVMValueRef v)
{
	const uint32_t val = offsetof(struct dt_agg_tseries, value);
	const uint32_t cnt = offsetof(struct dt_agg_tseries, count);
	LLVMValueRef n = cg_load_int(c, p, cnt, 8, false);

	switch (agg) {
	case DT_TS_LAST:
		cg_store_int(c, p, val, 8, v);
		break;
	case DT_TS_AVG: case DT_TS_SUM:
		add_at(c, p, val, v);
		break;
	case DT_TS_MIN: case DT_TS_MAX:
		minmax_at(c, p, val, n, v, agg == DT_TS_MIN);
		break;
	}
	cg_store_int(c, p, cnt, 8, LLVMBuildAdd(c->b, n, cg_i64(c, 1), ""));
}

/* tseries(): the key's slot is epoch % n with epoch = boot ns / interval; a found slot of another
 * epoch is stale (a lap of the ring ago) and restarts before the value goes in. The slot is in
 * the key, never an index into the value, so the verifier sees only fixed offsets. */
static void tseries_aggregate(cg *c, const dt_map_sym *m, const dt_map_layout *lay,
			      LLVMValueRef key, LLVMValueRef v, LLVMValueRef now)
{
	const dt_type *t = m->value;
	const uint32_t ep = offsetof(struct dt_agg_tseries, epoch);
	LLVMValueRef epoch = LLVMBuildUDiv(c->b, now, cg_i64(c, t->tseries.interval), "");
	LLVMValueRef map, found, buf;
	LLVMBasicBlockRef hit, stale, apply, miss, done;

	cg_store_int(c, key, lay->user_key_size, 8,
		     LLVMBuildURem(c->b, epoch, cg_i64(c, t->tseries.n), ""));
	map = cg_map_ref(c, cg_script_map_fd(c, m));
	found = cg_map_lookup(c, map, key);
	hit = cg_block(c, "ts.hit");
	stale = cg_block(c, "ts.stale");
	apply = cg_block(c, "ts.apply");
	miss = cg_block(c, "ts.miss");
	done = cg_block(c, "ts.done");
	cg_br_nonnull(c, found, hit, miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cg_load_int(c, found, ep, 8, false),
					    epoch, ""), apply, stale);
	LLVMPositionBuilderAtEnd(c->b, stale);
	cg_store_int(c, found, ep, 8, epoch);
	cg_store_int(c, found, offsetof(struct dt_agg_tseries, value), 8, cg_i64(c, 0));
	cg_store_int(c, found, offsetof(struct dt_agg_tseries, count), 8, cg_i64(c, 0));
	LLVMBuildBr(c->b, apply);
	LLVMPositionBuilderAtEnd(c->b, apply);
	tseries_apply(c, (dt_tseries_agg)t->tseries.agg, found, v);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, miss);
	buf = cg_buf(c, lay->value_size);
	cg_store_int(c, buf, ep, 8, epoch);
	tseries_apply(c, (dt_tseries_agg)t->tseries.agg, buf, v);
	cg_helper_check(c, cg_map_update(c, map, key, buf), BPF_FUNC_map_update_elem, false, 1);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
}

static void aggregate(cg *c, const dt_expr *target, const dt_expr *call)
{
	const dt_map_sym *m = target->map.sym;
	dt_type_kind k = m->value->kind;
	dt_map_layout lay;
	LLVMValueRef v = NULL, key, map, now = NULL;

	dt_map_layout_of(m, &lay);
	if (call->call.nargs && call->call.id != DT_F_COUNT) {
		v = cg_expr(c, call->call.args[0]);
		if (!v || !cg_is_scalar(call->call.args[0]->type)) {
			cg_fail(c, call->span, "%s() of a non-integer", call->call.name);
			return;
		}
	}
	/* tseries' time: the wall clock (boot time plus its offset at session start, so interval
	 * boundaries fall on wall-clock multiples of the interval, as bpftrace's sw_tai time), or
	 * BPFTRACE_DUMMY_TS_MAP's map (args[4]). */
	if (k == DT_T_TSERIES)
		now = m->value->tseries.dummy_ts && call->call.nargs == 5 ?
			      cg_expr(c, call->call.args[4]) :
			      LLVMBuildAdd(c->b, cg_helper(c, BPF_FUNC_ktime_get_boot_ns, c->i64,
							   NULL, 0),
					   cg_i64(c, c->env->wall_offset_ns), "");
	key = cg_map_key(c, m, target->map.keys, target->map.nkeys, &lay);
	if (k == DT_T_TSERIES) {
		tseries_aggregate(c, m, &lay, key, v, now);
		return;
	}
	if (lay.bucketed) {
		LLVMValueRef bk = k == DT_T_HIST ? sub_call(c, hist_bucket_sub(c, m->value->hist.bits),
							    &v, 1) :
						   lhist_bucket(c, v, m->value);

		cg_store_int(c, key, lay.user_key_size, 8, bk);
	}
	map = cg_map_ref(c, cg_script_map_fd(c, m));
	LLVMValueRef args[3] = { map, key, v ? v : cg_i64(c, 0) };

	cg_helper_check(c, sub_call(c, agg_sub(c, k, lay.value_size), args, 3),
			BPF_FUNC_map_update_elem, false, 1);
}

/* ------------------------------------------------------------ assignments */

/* Reads the integer at key (0 when absent), applies op with rhs, writes it back; returns
 * {old, new} through out. */
static void map_rmw(cg *c, const dt_expr *target, dt_binop op, LLVMValueRef rhs, bool is_signed,
		    LLVMValueRef *old_out, LLVMValueRef *new_out)
{
	const dt_map_sym *m = target->map.sym;
	dt_map_layout lay;
	LLVMValueRef key, map, found, old, nv, val, vals[2];
	LLVMBasicBlockRef hit, join, froms[2];

	dt_map_layout_of(m, &lay);
	if (!cg_is_scalar(m->value) || lay.percpu) {
		cg_fail(c, target->span, "arithmetic update of map %s with a non-integer value",
			m->name);
		return;
	}
	if (m->value->kind == DT_T_PTR && (op == DT_OP_ADD || op == DT_OP_SUB))
		rhs = LLVMBuildMul(c->b, rhs, cg_i64(c, cg_ptr_step(m->value)), "");
	key = cg_map_key(c, m, target->map.keys, target->map.nkeys, &lay);
	map = cg_map_ref(c, cg_script_map_fd(c, m));
	found = cg_map_lookup(c, map, key);
	froms[0] = LLVMGetInsertBlock(c->b);
	hit = cg_block(c, "rmw.hit");
	join = cg_block(c, "rmw.join");
	cg_br_nonnull(c, found, hit, join);
	LLVMPositionBuilderAtEnd(c->b, hit);
	vals[1] = cg_load(c, found, m->value);
	froms[1] = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, join);
	LLVMPositionBuilderAtEnd(c->b, join);
	old = LLVMBuildPhi(c->b, c->i64, "");
	vals[0] = cg_i64(c, 0);
	LLVMAddIncoming(old, vals, froms, 2);

	switch (op) {
	case DT_OP_ADD: nv = LLVMBuildAdd(c->b, old, rhs, ""); break;
	case DT_OP_SUB: nv = LLVMBuildSub(c->b, old, rhs, ""); break;
	case DT_OP_MUL: nv = LLVMBuildMul(c->b, old, rhs, ""); break;
	case DT_OP_BAND: nv = LLVMBuildAnd(c->b, old, rhs, ""); break;
	case DT_OP_BOR: nv = LLVMBuildOr(c->b, old, rhs, ""); break;
	case DT_OP_BXOR: nv = LLVMBuildXor(c->b, old, rhs, ""); break;
	case DT_OP_SHL:
		nv = LLVMBuildShl(c->b, old, LLVMBuildAnd(c->b, rhs, cg_i64(c, 63), ""), "");
		break;
	case DT_OP_SHR:
		rhs = LLVMBuildAnd(c->b, rhs, cg_i64(c, 63), "");
		nv = is_signed ? LLVMBuildAShr(c->b, old, rhs, "") : LLVMBuildLShr(c->b, old, rhs, "");
		break;
	default:
		/* Division and remainder go through the expression emitter's rules. */
		nv = cg_arith(c, op, old, rhs, is_signed);
		break;
	}
	val = cg_buf(c, lay.value_size);
	cg_store(c, val, 0, m->value, nv, m->value);
	cg_helper_check(c, cg_map_update(c, map, key, val), BPF_FUNC_map_update_elem, false, 1);
	*old_out = old;
	*new_out = nv;
}

static LLVMValueRef norm_int(cg *c, LLVMValueRef v, const dt_type *t)
{
	if (t->kind != DT_T_INT || t->size >= 8)
		return v;
	LLVMTypeRef it = LLVMIntTypeInContext(c->ctx, t->size * 8);

	v = LLVMBuildTrunc(c->b, v, it, "");
	return t->is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

LLVMValueRef cg_incdec(cg *c, const dt_expr *target, bool inc, bool post)
{
	LLVMValueRef one = cg_i64(c, 1), old = NULL, nv = NULL;

	if (target->kind == DT_E_VAR && target->var.sym->type->kind == DT_T_PTR)
		one = cg_i64(c, cg_ptr_step(target->var.sym->type));
	if (target->kind == DT_E_VAR) {
		LLVMValueRef slot = c->vars[target->var.sym->id];

		old = LLVMBuildLoad2(c->b, c->i64, slot, "");
		nv = norm_int(c, inc ? LLVMBuildAdd(c->b, old, one, "") :
				       LLVMBuildSub(c->b, old, one, ""), target->var.sym->type);
		LLVMBuildStore(c->b, nv, slot);
	} else if (target->kind == DT_E_MAP) {
		map_rmw(c, target, inc ? DT_OP_ADD : DT_OP_SUB, one, false, &old, &nv);
	} else {
		cg_fail(c, target->span, "++/-- on something that is not a variable or map");
	}
	if (!old)
		return cg_i64(c, 0);
	return post ? old : nv;
}

static void assign(cg *c, const dt_stmt *s)
{
	const dt_expr *t = s->assign.target, *val = s->assign.value;
	dt_binop op = s->assign.op;

	if (!val) { /* `let $x;`: zero, at the declaration (in a loop, at each pass) */
		const dt_var_sym *vs = t->var.sym;

		if (cg_is_scalar(vs->type))
			LLVMBuildStore(c->b, cg_i64(c, 0), c->vars[vs->id]);
		else
			cg_memset0(c, c->vars[vs->id], vs->type->size);
		return;
	}
	if (t->kind == DT_E_MAP && val->kind == DT_E_CALL && is_agg_func(val->call.id)) {
		aggregate(c, t, val);
		return;
	}
	if (t->kind == DT_E_VAR) {
		const dt_var_sym *vs = t->var.sym;
		LLVMValueRef slot = c->vars[vs->id];
		LLVMValueRef v = cg_expr(c, val);

		if (!v)
			return;
		if (cg_is_scalar(vs->type)) {
			if (op != DT_OP_NONE) {
				LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, slot, "");

				v = cg_arith(c, op, old, v, vs->type->is_signed && val->type->is_signed);
			}
			LLVMBuildStore(c->b, norm_int(c, v, vs->type), slot);
		} else {
			cg_store(c, slot, 0, vs->type, v, val->type);
		}
		return;
	}
	if (t->kind != DT_E_MAP) {
		cg_fail(c, s->span, "assignment to something that is not a variable or map");
		return;
	}
	if (op != DT_OP_NONE) {
		LLVMValueRef rhs = cg_expr(c, val), o, n;

		if (rhs)
			map_rmw(c, t, op, rhs, t->map.sym->value->is_signed && val->type->is_signed,
				&o, &n);
		return;
	}
	const dt_map_sym *m = t->map.sym;
	dt_map_layout lay;
	LLVMValueRef v = cg_expr(c, val), key, vb;

	if (!v)
		return;
	dt_map_layout_of(m, &lay);
	key = cg_map_key(c, m, t->map.keys, t->map.nkeys, &lay);
	vb = cg_buf(c, lay.value_size);
	cg_store(c, vb, 0, m->value, v, val->type);
	cg_helper_check(c, cg_map_update(c, cg_map_ref(c, cg_script_map_fd(c, m)), key, vb),
			BPF_FUNC_map_update_elem, false, 1);
}

/* ------------------------------------------------------------ action calls */

static void emit_printf(cg *c, const dt_expr *e)
{
	const dt_type *at = e->call.args_type;
	uint32_t payload = at ? at->size : 0;
	uint32_t kind = e->call.id == DT_F_TIME ? DT_EV_TIME : e->call.id == DT_F_CAT ? DT_EV_CAT
			: e->call.id == DT_F_SYSTEM ? DT_EV_SYSTEM : DT_EV_PRINTF;
	LLVMValueRef ev;

	/* Evaluate the arguments before the event buffer exists so that their own temporaries
	 * (map lookups, strings) are not interleaved with it. */
	LLVMValueRef vals[64] = { 0 };
	uint32_t n = 0;

	if (kind != DT_EV_TIME && at && at->kind == DT_T_TUPLE) {
		n = DT_MIN(at->tuple.n, e->call.nargs ? e->call.nargs - 1 : 0);
		if (n > DT_ARRAY_SIZE(vals)) {
			cg_limit(c, e->span, "split it into several printf calls",
				 "printf takes at most %zu arguments", DT_ARRAY_SIZE(vals));
			return;
		}
		for (uint32_t i = 0; i < n; i++)
			vals[i] = cg_expr(c, e->call.args[i + 1]);
	}
	if (kind == DT_EV_TIME)
		payload = 0;
	ev = cg_event_new(c, kind, e->call.event_id, payload);
	for (uint32_t i = 0; i < n; i++)
		cg_store(c, ev, CG_EV_PAYLOAD + at->tuple.offsets[i], at->tuple.elems[i], vals[i],
			 e->call.args[i + 1]->type);
	cg_event_output(c, ev, payload);
}

/* join(argv[, delim]): the strings argv points at, up to the first NULL pointer or
 * DT_JOIN_MAX_ARGS, each in its slot of the event; userspace joins them with the delimiter. */
static void emit_join(cg *c, const dt_expr *e)
{
	const dt_expr *a0 = e->call.args[0];
	uint32_t slot = e->call.args_type->size;
	uint32_t payload = sizeof(struct dt_ev_join_hdr) + DT_JOIN_MAX_ARGS * slot;
	LLVMValueRef argv = cg_expr(c, a0), ev, p;
	LLVMBasicBlockRef done = cg_block(c, "join.done");

	if (!argv)
		return;
	ev = cg_event_new(c, DT_EV_JOIN, e->call.event_id, payload);
	p = cg_buf(c, 8);
	cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_join_hdr, size), 4,
		     cg_i64(c, slot));
	for (uint32_t i = 0; i < DT_JOIN_MAX_ARGS; i++) {
		LLVMBasicBlockRef more = cg_block(c, "join.arg");
		LLVMValueRef str;

		cg_read_ptr(c, p, 8, NULL, LLVMBuildAdd(c->b, argv, cg_i64(c, 8 * i), ""),
			    a0->type, false);
		str = cg_load_int(c, p, 0, 8, false);
		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, str, cg_i64(c, 0), ""), done,
				more);
		LLVMPositionBuilderAtEnd(c->b, more);
		cg_read_ptr(c, cg_gep(c, ev, CG_EV_PAYLOAD + sizeof(struct dt_ev_join_hdr) +
				       i * slot), slot, NULL, str, a0->type, true);
		cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_join_hdr, n), 4,
			     cg_i64(c, i + 1));
	}
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	cg_event_output(c, ev, payload);
}

/* debugf(fmt, args…): bpf_trace_printk with the format and up to three arguments, a string as
 * the address of its bytes. */
static void emit_debugf(cg *c, const dt_expr *e)
{
	const dt_expr *f = e->call.args[0];
	LLVMValueRef args[5];
	unsigned n = 2;

	for (uint32_t i = 1; i < e->call.nargs && n < 5; i++) {
		LLVMValueRef v = cg_expr(c, e->call.args[i]);

		if (!v)
			return;
		args[n++] = cg_is_scalar(e->call.args[i]->type) ? v
				: LLVMBuildPtrToInt(c->b, v, c->i64, "");
	}
	args[0] = cg_const_str(c, f->str.s, f->str.len, f->str.len + 1);
	args[1] = cg_i64(c, f->str.len + 1);
	cg_helper(c, BPF_FUNC_trace_printk, c->i64, args, n);
}

static void emit_print(cg *c, const dt_expr *e)
{
	const dt_expr *a = e->call.nargs ? e->call.args[0] : NULL;
	LLVMValueRef ev;

	if (!a) {
		cg_fail(c, e->span, "print() without an argument");
		return;
	}
	if (a->kind == DT_E_MAP && a->map.nkeys == 0 && a->map.sym) {
		LLVMValueRef top = e->call.nargs > 1 ? cg_expr(c, e->call.args[1]) : cg_i64(c, 0);
		LLVMValueRef div = e->call.nargs > 2 ? cg_expr(c, e->call.args[2]) : cg_i64(c, 0);

		ev = cg_event_new(c, DT_EV_PRINT_MAP, a->map.sym->id, sizeof(struct dt_ev_print_map));
		cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_print_map, top), 8, top);
		cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_print_map, div), 8, div);
		cg_event_output(c, ev, sizeof(struct dt_ev_print_map));
		return;
	}
	LLVMValueRef v = cg_expr(c, a);
	/* The event holds the value as stored (an int32 member read goes out as 8 bytes), the
	 * type userspace prints it with. */
	const dt_type *t = e->call.args_type->tuple.elems[0];

	if (!v)
		return;
	ev = cg_event_new(c, DT_EV_PRINT_VALUE, e->call.event_id, t->size);
	cg_store(c, ev, CG_EV_PAYLOAD, t, v, a->type);
	cg_event_output(c, ev, t->size);
}

static void emit_map_event(cg *c, const dt_expr *e, uint32_t kind)
{
	const dt_expr *a = e->call.nargs ? e->call.args[0] : NULL;

	if (!a || a->kind != DT_E_MAP || !a->map.sym) {
		cg_fail(c, e->span, "%s() needs a map", e->call.name);
		return;
	}
	cg_event_output(c, cg_event_new(c, kind, a->map.sym->id, 0), 0);
}

/* delete(@m[k]) / delete(@m, k); its value (bpftrace's current bool delete()) is whether the key
 * was there. A per-CPU count's key and a histogram's buckets are deleted by userspace, after the
 * probe: their delete is true. */
static LLVMValueRef emit_delete(cg *c, const dt_expr *e)
{
	const dt_expr *a = e->call.nargs ? e->call.args[0] : NULL;
	dt_expr *const *keys;
	uint32_t nkeys;
	dt_map_layout lay;
	LLVMValueRef key, rc;

	if (!a || a->kind != DT_E_MAP || !a->map.sym) {
		cg_fail(c, e->span, "delete() needs a map element");
		return cg_i64(c, 0);
	}
	/* delete(@m[k]) and delete(@m, k) */
	keys = e->call.nargs > 1 ? &e->call.args[1] : a->map.keys;
	nkeys = e->call.nargs > 1 ? 1 : a->map.nkeys;
	dt_map_layout_of(a->map.sym, &lay);
	if (lay.zero_not_delete) {
		/* Every CPU's count goes to zero: userspace does it, as for zero(). */
		cg_event_output(c, cg_event_new(c, DT_EV_ZERO_MAP, a->map.sym->id, 0), 0);
		return cg_i64(c, 1);
	}
	key = cg_map_key(c, a->map.sym, keys, nkeys, &lay);
	if (!lay.bucketed) {
		rc = cg_map_delete(c, cg_map_ref(c, cg_script_map_fd(c, a->map.sym)), key);
		cg_helper_check(c, rc, BPF_FUNC_map_delete_elem, false, 1);
		return LLVMBuildZExt(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, rc, cg_i64(c, 0), ""),
				     c->i64, "");
	}
	/* Every bucket of a histogram key is its own BPF key: userspace deletes them all. */
	LLVMValueRef ev = cg_event_new(c, DT_EV_DELETE_KEY, a->map.sym->id, lay.user_key_size);

	cg_memcpy(c, ev, CG_EV_PAYLOAD, key, 0, lay.user_key_size);
	cg_event_output(c, ev, lay.user_key_size);
	return cg_i64(c, 1);
}

LLVMValueRef cg_call_action(cg *c, const dt_expr *e)
{
	switch (e->call.id) {
	case DT_F_OVERRIDE: {
		LLVMValueRef args[2] = { c->ctxp, cg_expr(c, e->call.args[0]) };

		cg_helper(c, BPF_FUNC_override_return, c->i64, args, 2);
		break;
	}
	case DT_F_SIGNAL: {
		LLVMValueRef sig = cg_expr(c, e->call.args[0]);

		cg_helper(c, BPF_FUNC_send_signal, c->i64, &sig, 1);
		break;
	}
	case DT_F_PRINTF: case DT_F_TIME: case DT_F_CAT: case DT_F_SYSTEM: case DT_F_ERRORF:
	case DT_F_WARNF:
		emit_printf(c, e);
		break;
	case DT_F_PRINT:
		emit_print(c, e);
		break;
	case DT_F_JOIN:
		emit_join(c, e);
		break;
	case DT_F_DEBUGF:
		emit_debugf(c, e);
		break;
	case DT_F_CLEAR:
		emit_map_event(c, e, DT_EV_CLEAR_MAP);
		break;
	case DT_F_ZERO:
		emit_map_event(c, e, DT_EV_ZERO_MAP);
		break;
	case DT_F_DELETE:
		return emit_delete(c, e);
	case DT_F_UNWATCH: {
		LLVMValueRef addr = cg_expr(c, e->call.args[0]);
		LLVMValueRef ev = cg_event_new(c, DT_EV_UNWATCH, 0, sizeof(struct dt_ev_unwatch));

		cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_unwatch, addr), 8, addr);
		cg_event_output(c, ev, sizeof(struct dt_ev_unwatch));
		break;
	}
	case DT_F_EXIT: {
		LLVMValueRef code = e->call.nargs ? cg_expr(c, e->call.args[0]) : cg_i64(c, 0);
		LLVMValueRef ev = cg_event_new(c, DT_EV_EXIT, 0, sizeof(struct dt_ev_exit));

		cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_exit, code), 8, code);
		cg_event_output(c, ev, sizeof(struct dt_ev_exit));
		cg_return(c);
		break;
	}
	case DT_F_STATIC_ASSERT:
		break; /* dt_check proved it: no code */
	default:
		cg_fail(c, e->span, "%s() cannot be used here", e->call.name);
		break;
	}
	return cg_i64(c, 0);
}

/* ------------------------------------------------------------ for loops */

/* A for loop's body is a callback: bpf_for_each_map_elem calls it for each element of a map,
 * bpf_loop for each number of a range, so the verifier checks the body once whatever the count
 * (bpftrace's way). It reaches the probe through its context, an array of u64 on the caller's
 * stack (the helpers take no other memory): FOR_RET, set to 1 when the body returned from the
 * probe, and FOR_RETVAL, the value it returned; the program's context and the continuation's
 * walker result, for the builtins that read them; a range's start and its number of passes;
 * then the address of each $variable the body uses, in id order, so what the body writes is
 * seen after the loop. continue returns 0 from the callback (the next element), break 1
 * (stop); return sets FOR_RET and returns 1, and the caller returns in turn. */
enum { FOR_RET, FOR_RETVAL, FOR_CTX, FOR_DWARF, FOR_START, FOR_COUNT, FOR_VARS };

static void for_mark_var(void *ctx, const dt_expr *e)
{
	bool *used = ctx;

	if (e->kind == DT_E_VAR && e->var.sym)
		used[e->var.sym->id] = true;
}

static LLVMValueRef for_slot(cg *c, LLVMValueRef fctx, uint32_t slot)
{
	return cg_load_int(c, fctx, 8 * slot, 8, false);
}

/* The value of a per-CPU aggregation at `key` of map m, combined over the CPUs as
 * the printer combines it: count and sum add up, min and max over the CPUs that saw a value,
 * avg is the total over the count. */
LLVMValueRef cg_percpu_value(cg *c, const dt_map_sym *m, LLVMValueRef key)
{
	dt_type_kind k = m->value->kind;
	LLVMValueRef map = cg_map_ref(c, cg_script_map_fd(c, m));
	LLVMValueRef cpu = cg_alloca_i64(c), acc = cg_alloca_i64(c), n = cg_alloca_i64(c);
	LLVMBasicBlockRef head = cg_block(c, "cpu.head"), body = cg_block(c, "cpu.body");
	LLVMBasicBlockRef hit = cg_block(c, "cpu.hit"), next = cg_block(c, "cpu.next");
	LLVMBasicBlockRef done = cg_block(c, "cpu.done");
	LLVMValueRef args[3], v, ncpu = cg_i64(c, c->env->ncpus ? c->env->ncpus : 1);

	LLVMBuildStore(c->b, cg_i64(c, 0), cpu);
	LLVMBuildStore(c->b, cg_i64(c, 0), acc);
	LLVMBuildStore(c->b, cg_i64(c, 0), n);
	LLVMBuildBr(c->b, head);
	LLVMPositionBuilderAtEnd(c->b, head);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, LLVMBuildLoad2(c->b, c->i64, cpu, ""),
					    ncpu, ""), body, done);
	LLVMPositionBuilderAtEnd(c->b, body);
	args[0] = map;
	args[1] = key;
	args[2] = LLVMBuildLoad2(c->b, c->i64, cpu, "");
	v = cg_helper(c, BPF_FUNC_map_lookup_percpu_elem, c->i8p, args, 3);
	cg_br_nonnull(c, v, hit, next);
	LLVMPositionBuilderAtEnd(c->b, hit);
	LLVMValueRef a = LLVMBuildLoad2(c->b, c->i64, acc, ""), cnt = LLVMBuildLoad2(c->b, c->i64, n, "");
	switch (k) {
	case DT_T_MIN: case DT_T_MAX: {
		LLVMValueRef x = cg_load_int(c, v, offsetof(struct dt_agg_minmax, value), 8, true);
		LLVMValueRef set = cg_load_int(c, v, offsetof(struct dt_agg_minmax, set), 8, false);
		LLVMValueRef better = LLVMBuildICmp(c->b, k == DT_T_MIN ? LLVMIntSLT : LLVMIntSGT, x,
						    a, "");
		LLVMValueRef first = LLVMBuildICmp(c->b, LLVMIntEQ, cnt, cg_i64(c, 0), "");
		LLVMValueRef take = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntNE, set,
								     cg_i64(c, 0), ""),
						 LLVMBuildOr(c->b, first, better, ""), "");

		LLVMBuildStore(c->b, LLVMBuildSelect(c->b, take, x, a, ""), acc);
		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, cnt, LLVMBuildZExt(c->b, take, c->i64, ""), ""),
			       n);
		break;
	}
	case DT_T_AVG:
		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, a, cg_load_int(c, v, offsetof(struct dt_agg_avg,
									      total), 8, true), ""), acc);
		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, cnt, cg_load_int(c, v, offsetof(struct dt_agg_avg,
										  count), 8, false), ""), n);
		break;
	default: /* count, sum */
		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, a, cg_load_int(c, v, offsetof(struct dt_agg_count,
									      count), 8, false), ""), acc);
		break;
	}
	LLVMBuildBr(c->b, next);
	LLVMPositionBuilderAtEnd(c->b, next);
	LLVMBuildStore(c->b, LLVMBuildAdd(c->b, LLVMBuildLoad2(c->b, c->i64, cpu, ""), cg_i64(c, 1), ""),
		       cpu);
	LLVMBuildBr(c->b, head);
	LLVMPositionBuilderAtEnd(c->b, done);
	if (k == DT_T_AVG) {
		/* No CPU saw a value: the total is 0, and so is the average. */
		LLVMValueRef cnt = LLVMBuildLoad2(c->b, c->i64, n, "");
		LLVMValueRef none = LLVMBuildICmp(c->b, LLVMIntEQ, cnt, cg_i64(c, 0), "");

		return cg_divmod(c, LLVMBuildLoad2(c->b, c->i64, acc, ""),
				 LLVMBuildSelect(c->b, none, cg_i64(c, 1), cnt, ""), true, false);
	}
	return LLVMBuildLoad2(c->b, c->i64, acc, "");
}

/* Makes the callback of loop s: `i64 (map, key, value, ctx)` for a map, `i64 (index, ctx)` for
 * a range. `used` marks the variables whose addresses the context holds. */
static LLVMValueRef for_callback(cg *c, const dt_stmt *s, const bool *used)
{
	static __thread unsigned serial; /* names are per module: one per thread (codegen.c) */
	bool is_map = s->for_.map != NULL;
	LLVMTypeRef mt[4] = { c->i8p, c->i8p, c->i8p, c->i8p }, rt[2] = { c->i64, c->i8p };
	LLVMTypeRef fty = is_map ? LLVMFunctionType(c->i64, mt, 4, false)
				 : LLVMFunctionType(c->i64, rt, 2, false);
	const dt_probe *p = c->probe;
	const dt_var_sym *var = s->for_.var->var.sym;
	LLVMValueRef fn, fctx, *outer = c->vars;
	uint32_t slot = FOR_VARS, scratch = c->scratch_used, budget = c->stack_budget;
	cg_saved saved;
	char name[96];

	snprintf(name, sizeof(name), "%s.for%u", LLVMGetValueName(c->fn), serial++);
	fn = cg_fn_open(c, name, fty, &saved);
	/* The caller's buffers stay live under the call: the callback's come after them. Its
	 * stack adds to the caller's (512 bytes for the chain), so it keeps little. */
	c->scratch_used = c->scratch_base = scratch;
	c->stack_budget = DT_MIN(budget, 64u);
	fctx = LLVMGetParam(fn, is_map ? 3 : 1);
	c->vars = xcalloc(p->nvars ? p->nvars : 1, sizeof(*c->vars));
	for (uint32_t i = 0; i < p->nvars; i++)
		if (used[i])
			c->vars[i] = LLVMBuildIntToPtr(c->b, for_slot(c, fctx, slot++),
						       LLVMTypeOf(outer[i]), "");
	if (saved.c.ctxp)
		c->ctxp = LLVMBuildIntToPtr(c->b, for_slot(c, fctx, FOR_CTX), c->i8p, "");
	if (saved.c.dwarf_ref)
		c->dwarf_ref = LLVMBuildIntToPtr(c->b, for_slot(c, fctx, FOR_DWARF), c->i8p, "");
	c->for_ret = fctx;
	cg_pin_temps(c);

	if (is_map) {
		const dt_map_sym *m = s->for_.map->map.sym;
		const dt_type *tt = var->type;
		dt_map_layout lay;

		dt_map_layout_of(m, &lay);
		cg_memcpy(c, c->vars[var->id], tt->tuple.offsets[0], LLVMGetParam(fn, 1), 0,
			  tt->tuple.elems[0]->size);
		if (lay.percpu)
			cg_store_int(c, c->vars[var->id], tt->tuple.offsets[1], 8,
				     cg_percpu_value(c, m, LLVMGetParam(fn, 1)));
		else
			cg_memcpy(c, c->vars[var->id], tt->tuple.offsets[1], LLVMGetParam(fn, 2), 0,
				  tt->tuple.elems[1]->size);
	} else {
		LLVMValueRef ix = LLVMBuildAnd(c->b, LLVMGetParam(fn, 0), cg_i64(c, 0xffffffffu), "");
		LLVMBasicBlockRef pass = cg_block(c, "for.pass"), stop = cg_block(c, "for.stop");

		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, ix,
						    for_slot(c, fctx, FOR_COUNT), ""), pass, stop);
		LLVMPositionBuilderAtEnd(c->b, stop);
		LLVMBuildRet(c->b, cg_i64(c, 1));
		LLVMPositionBuilderAtEnd(c->b, pass);

		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, for_slot(c, fctx, FOR_START), ix, ""),
			       c->vars[var->id]);
	}
	cg_stmts(c, &s->for_.body);
	free(c->vars);
	cg_fn_close(c, &saved);
	return fn;
}

LLVMValueRef cg_map_len(cg *c, const dt_map_sym *m)
{
	static __thread unsigned serial; /* names are per module: one per thread (codegen.c) */
	LLVMTypeRef mt[4] = { c->i8p, c->i8p, c->i8p, c->i8p };
	cg_saved saved;
	char name[96];

	/* bpf_for_each_map_elem returns how many elements it visited; the callback only
	 * continues (returns 0, what finish_function gives an open block). */
	snprintf(name, sizeof(name), "%s.len%u", LLVMGetValueName(c->fn), serial++);
	LLVMValueRef fn = cg_fn_open(c, name, LLVMFunctionType(c->i64, mt, 4, false), &saved);
	cg_fn_close(c, &saved);
	LLVMValueRef args[4] = { cg_map_ref(c, cg_script_map_fd(c, m)),
				 LLVMBuildBitCast(c->b, fn, c->i8p, ""), LLVMConstNull(c->i8p),
				 cg_i64(c, 0) };

	return cg_helper(c, BPF_FUNC_for_each_map_elem, c->i64, args, 4);
}

static void for_loop(cg *c, const dt_stmt *s)
{
	const dt_probe *p = c->probe;
	bool *used = xcalloc(p->nvars + 1, sizeof(*used));
	uint32_t nslots = FOR_VARS, slot = FOR_VARS;
	LLVMValueRef fctx, fn, start = NULL, count = NULL, r;
	LLVMBasicBlockRef ret, go;

	used[s->for_.var->var.sym->id] = true;
	cg_visit_stmts(&s->for_.body, for_mark_var, used);
	for (uint32_t i = 0; i < p->nvars; i++)
		nslots += used[i];
	if (!s->for_.map) {
		/* The ends are read once, before the first pass (bpftrace's rule). */
		start = cg_expr(c, s->for_.start);
		LLVMValueRef end = cg_expr(c, s->for_.end);

		if (!start || !end) {
			free(used);
			return;
		}
		count = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSGT, end, start, ""),
					LLVMBuildSub(c->b, end, start, ""), cg_i64(c, 0), "");
	}
	fctx = cg_alloca_stack(c, 8 * nslots);
	cg_store_int(c, fctx, 8 * FOR_RET, 8, cg_i64(c, 0));
	cg_store_int(c, fctx, 8 * FOR_RETVAL, 8, cg_i64(c, 0));
	cg_store_int(c, fctx, 8 * FOR_CTX, 8,
		     c->ctxp ? LLVMBuildPtrToInt(c->b, c->ctxp, c->i64, "") : cg_i64(c, 0));
	cg_store_int(c, fctx, 8 * FOR_DWARF, 8,
		     c->dwarf_ref ? LLVMBuildPtrToInt(c->b, c->dwarf_ref, c->i64, "") : cg_i64(c, 0));
	cg_store_int(c, fctx, 8 * FOR_START, 8, start ? start : cg_i64(c, 0));
	cg_store_int(c, fctx, 8 * FOR_COUNT, 8, count ? count : cg_i64(c, 0));
	for (uint32_t i = 0; i < p->nvars; i++)
		if (used[i])
			cg_store_int(c, fctx, 8 * slot++, 8,
				     LLVMBuildPtrToInt(c->b, c->vars[i], c->i64, ""));
	fn = for_callback(c, s, used);
	free(used);
	if (c->err)
		return;
	LLVMValueRef cb = LLVMBuildBitCast(c->b, fn, c->i8p, "");
	if (s->for_.map) {
		LLVMValueRef args[4] = { cg_map_ref(c, cg_script_map_fd(c, s->for_.map->map.sym)), cb,
					 fctx, cg_i64(c, 0) };

		r = cg_helper(c, BPF_FUNC_for_each_map_elem, c->i64, args, 4);
		(void)r;
	} else {
		/* bpf_loop runs at most 1 << 23 passes; a longer range stops there. An empty
		 * range still calls it, once, for a callback that stops at once (FOR_COUNT): the
		 * verifier, when it knows the count is 0, skips the callback and then drops its
		 * code from under the callback's address. */
		LLVMValueRef nr = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, count,
								      cg_i64(c, 1 << 23), ""),
						  cg_i64(c, 1 << 23), count, "");
		LLVMValueRef args[4] = { LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, nr,
									    cg_i64(c, 0), ""),
							 cg_i64(c, 1), nr, ""),
					 cb, fctx, cg_i64(c, 0) };

		r = cg_helper(c, BPF_FUNC_loop, c->i64, args, 4);
		(void)r;
	}
	ret = cg_block(c, "for.ret");
	go = cg_block(c, "for.done");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, for_slot(c, fctx, FOR_RET),
					    cg_i64(c, 0), ""), ret, go);
	LLVMPositionBuilderAtEnd(c->b, ret);
	cg_return_value(c, for_slot(c, fctx, FOR_RETVAL));
	LLVMBuildBr(c->b, go);
	LLVMPositionBuilderAtEnd(c->b, go);
}

/* ------------------------------------------------------------ statements */

static void stmt(cg *c, const dt_stmt *s)
{
	if (c->err)
		return;
	c->at = s->span;
	cg_release_temps(c);
	switch (s->kind) {
	case DT_S_EXPR:
		cg_expr(c, s->expr);
		break;
	case DT_S_ASSIGN:
		assign(c, s);
		break;
	case DT_S_IF: {
		LLVMBasicBlockRef bt = cg_block(c, "if.then"), bf = cg_block(c, "if.else");
		LLVMBasicBlockRef done = cg_block(c, "if.done");

		LLVMBuildCondBr(c->b, cg_cond(c, s->if_.cond), bt, bf);
		LLVMPositionBuilderAtEnd(c->b, bt);
		cg_stmts(c, &s->if_.then);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, bf);
		cg_stmts(c, &s->if_.els);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, done);
		break;
	}
	case DT_S_UNROLL:
		for (uint32_t i = 0; i < s->unroll.count && !c->err; i++)
			cg_stmts(c, &s->unroll.body);
		break;
	case DT_S_WHILE: {
		LLVMBasicBlockRef head = cg_block(c, "while.cond"), body = cg_block(c, "while.body");
		LLVMBasicBlockRef done = cg_block(c, "while.done");
		LLVMBasicBlockRef saved_break = c->loop_break, saved_cont = c->loop_cont;

		LLVMBuildBr(c->b, head);
		LLVMPositionBuilderAtEnd(c->b, head);
		LLVMBuildCondBr(c->b, cg_cond(c, s->while_.cond), body, done);
		LLVMPositionBuilderAtEnd(c->b, body);
		c->loop_break = done;
		c->loop_cont = head;
		cg_stmts(c, &s->while_.body);
		c->loop_break = saved_break;
		c->loop_cont = saved_cont;
		LLVMBuildBr(c->b, head);
		LLVMPositionBuilderAtEnd(c->b, done);
		break;
	}
	case DT_S_BREAK: case DT_S_CONTINUE:
		if (!c->loop_break && c->for_ret) {
			/* A for loop's callback: 1 stops the helper, 0 goes on. */
			LLVMBuildRet(c->b, cg_i64(c, s->kind == DT_S_BREAK));
			LLVMPositionBuilderAtEnd(c->b, cg_block(c, "after.jump"));
			break;
		}
		if (!c->loop_break) {
			cg_fail(c, s->span, "break or continue outside a loop");
			break;
		}
		LLVMBuildBr(c->b, s->kind == DT_S_BREAK ? c->loop_break : c->loop_cont);
		/* What follows in the block is unreachable; it still needs a block to go in. */
		LLVMPositionBuilderAtEnd(c->b, cg_block(c, "after.jump"));
		break;
	case DT_S_RETURN:
		if (s->expr)
			cg_return_value(c, cg_expr(c, s->expr));
		else
			cg_return(c);
		break;
	case DT_S_BLOCK:
		cg_stmts(c, &s->block);
		break;
	case DT_S_FOR:
		for_loop(c, s);
		break;
	}
}

void cg_stmts(cg *c, const dt_stmt_list *l)
{
	for (uint32_t i = 0; i < l->n && !c->err; i++)
		stmt(c, l->v[i]);
}

/* ------------------------------------------------------------ program shape */

/* The deepest ustack_dwarf(N) a probe evaluates: the walker is asked for that many frames. */
static void dwarf_depth_of(void *ctx, const dt_expr *e)
{
	uint32_t *d = ctx, depth;
	dt_stack_kind kind;

	if (e->kind != DT_E_BUILTIN || e->builtin.id != DT_B_USTACK_DWARF)
		return;
	cg_stack_shape(e, &kind, &depth);
	*d = DT_MAX(*d, depth);
}

/* `if (!cond) return 0;` */
static void guard(cg *c, LLVMValueRef cond)
{
	LLVMBasicBlockRef go = cg_block(c, "go"), stop = cg_block(c, "stop");

	LLVMBuildCondBr(c->b, cond, go, stop);
	LLVMPositionBuilderAtEnd(c->b, stop);
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, go);
}

static LLVMValueRef walker_state(cg *c)
{
	int fd = cg_aux_fd(c, DT_AUX_WALKER_STATE, 0, 0);
	LLVMValueRef st = cg_map_lookup(c, cg_map_ref(c, fd), cg_key32(c, 0));
	LLVMBasicBlockRef ok = cg_block(c, "ws.ok"), none = cg_block(c, "ws.none");

	cg_br_nonnull(c, st, ok, none);
	LLVMPositionBuilderAtEnd(c->b, none);
	cg_stat_inc(c, DT_STAT_STACK_FAIL);
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, ok);
	return st;
}

static void finish_function(cg *c)
{
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(c->ctx);

	/* Every block left open (the fall-through end, blocks after `return`) returns 0. */
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(c->fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
		if (bb == c->allocas || bb == c->prologue || LLVMGetBasicBlockTerminator(bb))
			continue;
		LLVMPositionBuilderAtEnd(eb, bb);
		LLVMBuildRet(eb, cg_i64(c, 0));
	}
	LLVMPositionBuilderAtEnd(c->b, c->prologue);
	cg_emit_prologue(c);
	/* Last: the prologue may still have added allocas (the key slot). */
	LLVMPositionBuilderAtEnd(eb, c->allocas);
	LLVMBuildBr(eb, c->prologue);
	LLVMDisposeBuilder(eb);
}

bool cg_is_syscall_set(const cg *c)
{
	return c->nset > 1 && c->attach->provider == DT_P_TRACEPOINT && c->attach->target &&
	       !strcmp(c->attach->target, "syscalls");
}

LLVMValueRef cg_set_slot(cg *c, LLVMBasicBlockRef absent)
{
	LLVMValueRef cookie = cg_helper(c, BPF_FUNC_get_attach_cookie, c->i64, &c->ctxp, 1);
	LLVMValueRef key, val, slot, nr;
	LLVMBasicBlockRef direct, table, found, done, from;
	int fd;

	if (!cg_is_syscall_set(c))
		return LLVMBuildAnd(c->b, cookie, cg_i64(c, 0xffffffffu), "");
	/* Both raw_syscalls records hold the syscall number as a long right after the common
	 * fields, where every syscalls: event has its int __syscall_nr. */
	direct = cg_block(c, "slot.direct");
	table = cg_block(c, "slot.table");
	found = cg_block(c, "slot.found");
	done = cg_block(c, "slot.done");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntUGE, cookie, cg_i64(c, DT_COOKIE_SYSCALLS),
					    ""), table, direct);
	LLVMPositionBuilderAtEnd(c->b, table);
	{
		/* raw_syscalls also fires for 32-bit tasks, with their own numbers; syscalls:
		 * events do not. x86-64's thread_info (at the start of task_struct) has the
		 * TS_COMPAT bit (2) in its u32 status after two longs. */
		LLVMValueRef st = cg_buf(c, 8), args[3], native = NULL;
		LLVMBasicBlockRef go = cg_block(c, "slot.native");

		args[0] = st;
		args[1] = cg_i64(c, 4);
		args[2] = LLVMBuildAdd(c->b, cg_helper(c, BPF_FUNC_get_current_task, c->i64, NULL,
						       0), cg_i64(c, 16), "");
		cg_helper(c, BPF_FUNC_probe_read_kernel, c->i64, args, 3);
		native = LLVMBuildICmp(c->b, LLVMIntEQ,
				       LLVMBuildAnd(c->b, cg_load_int(c, st, 0, 4, false),
						    cg_i64(c, 2), ""), cg_i64(c, 0), "");
		LLVMBuildCondBr(c->b, native, go, absent);
		LLVMPositionBuilderAtEnd(c->b, go);
	}
	fd = cg_aux_fd(c, DT_AUX_SYSCALL_SLOTS, 0, 0);
	key = cg_buf_raw(c, sizeof(struct dt_syscall_key));
	cg_store_int(c, key, offsetof(struct dt_syscall_key, cookie), 4, cookie);
	nr = cg_ctx_load(c, 8, 4, false);
	cg_store_int(c, key, offsetof(struct dt_syscall_key, nr), 4, nr);
	val = cg_map_lookup(c, cg_map_ref(c, fd), key);
	cg_br_nonnull(c, val, found, absent);
	LLVMPositionBuilderAtEnd(c->b, found);
	slot = cg_load_int(c, val, 0, 4, false);
	from = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, direct);
	LLVMValueRef dslot = LLVMBuildAnd(c->b, cookie, cg_i64(c, 0xffffffffu), "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	LLVMValueRef phi = LLVMBuildPhi(c->b, c->i64, "slot");
	LLVMValueRef vals[2] = { slot, dslot };
	LLVMBasicBlockRef blocks[2] = { from, direct };

	LLVMAddIncoming(phi, vals, blocks, 2);
	return phi;
}

/* ------------------------------------------------------------ probes in parts */

/* The probe's frame (DT_AUX_FRAME) for this program type: a split probe's $variables and the
 * continuation's stack ref are there, so that every part sees what the one before it left. */
static void frame_vars(cg *c, const cg_split *sp)
{
	int fd = cg_aux_fd(c, DT_AUX_FRAME, 0, 0);
	LLVMValueRef f = cg_map_lookup(c, cg_map_ref(c, fd), cg_key32(c, cg_frame_key(c->ptype)));
	LLVMBasicBlockRef ok = cg_block(c, "frame.ok"), none = cg_block(c, "frame.none");
	const dt_probe *p = c->probe;

	cg_br_nonnull(c, f, ok, none);
	LLVMPositionBuilderAtEnd(c->b, none);
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, ok);
	for (uint32_t i = 0; i < p->nvars; i++) {
		LLVMValueRef v = cg_gep(c, f, sp->var_off[i]);

		c->vars[i] = cg_is_scalar(p->vars[i]->type)
				     ? LLVMBuildBitCast(c->b, v, LLVMPointerType(c->i64, 0), "")
				     : v;
	}
	if (p->uses_ustack_dwarf)
		c->dwarf_ref = cg_gep(c, f, sp->dwarf_off);
	c->frame = f;
}

static LLVMValueRef flag_ptr(cg *c, const cg_split *sp, uint32_t flag)
{
	return cg_gep(c, c->frame, sp->flags_off + 8 * flag);
}

/* Opens the code of the units under `guard` (-1: none): a branch around them unless the flag
 * holds `want`. Returns the block after them, or NULL. */
static LLVMBasicBlockRef open_guard(cg *c, const cg_split *sp, int guard, uint8_t want)
{
	LLVMBasicBlockRef in, after;
	LLVMValueRef f;

	if (guard < 0)
		return NULL;
	in = cg_block(c, "guard.in");
	after = cg_block(c, "guard.after");
	f = cg_load_int(c, flag_ptr(c, sp, (uint32_t)guard), 0, 8, false);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, f, cg_i64(c, want), ""), in, after);
	LLVMPositionBuilderAtEnd(c->b, in);
	return after;
}

static void close_guard(cg *c, LLVMBasicBlockRef after)
{
	if (!after)
		return;
	LLVMBuildBr(c->b, after);
	LLVMPositionBuilderAtEnd(c->b, after);
}

/* Part `part` of a split probe: its units, consecutive ones under the same guard sharing one
 * branch, then the tail call to the next part. */
static void emit_part(cg *c, const cg_split *sp, uint32_t part, int next_slot)
{
	uint32_t from = part ? sp->part_end[part - 1] : 0, to = sp->part_end[part];
	LLVMBasicBlockRef after = NULL;
	int cur = -1;
	uint8_t cur_want = 0;
	uint64_t group = 0; /* weight of the units under the open guard */

	if (part == 0)
		cg_memset0(c, c->frame, sp->vars_size);
	for (uint32_t i = from; i < to && !c->err; i++) {
		const cg_unit *u = &sp->units[i];

		if (!u->stmt) {
			/* A flag step: OFF unless its own guard holds, then THEN or ELSE. */
			close_guard(c, after);
			cg_store_int(c, flag_ptr(c, sp, u->flag), 0, 8, cg_i64(c, CG_FLAG_OFF));
			after = open_guard(c, sp, u->guard, u->want);
			cur = u->guard;
			cur_want = u->want;
			group = u->weight;
			c->at = u->cond->span;
			cg_release_temps(c);
			cg_store_int(c, flag_ptr(c, sp, u->flag), 0, 8,
				     LLVMBuildSelect(c->b, cg_cond(c, u->cond), cg_i64(c, CG_FLAG_THEN),
						     cg_i64(c, CG_FLAG_ELSE), ""));
			continue;
		}
		/* A guard is tested again past CG_GUARD_SPAN: the branch around its units must
		 * stay within a BPF jump whatever the part's size. */
		if (u->guard != cur || (cur >= 0 && u->want != cur_want) ||
		    (cur >= 0 && group + u->weight > CG_GUARD_SPAN)) {
			close_guard(c, after);
			after = open_guard(c, sp, u->guard, u->want);
			cur = u->guard;
			cur_want = u->want;
			group = 0;
		}
		group += u->weight;
		stmt(c, u->stmt);
	}
	close_guard(c, after);
	if (next_slot >= 0) {
		int fd = cg_aux_fd(c, DT_AUX_CHAIN_PROGS, 0, 0);
		LLVMValueRef args[3] = { c->ctxp, cg_map_ref(c, fd), cg_i64(c, (uint64_t)next_slot) };

		/* Never returns while the session keeps the chain filled (it fills every slot
		 * before anything attaches, and cg_split bounds the chain under the kernel's
		 * tail-call limit). */
		cg_helper(c, BPF_FUNC_tail_call, c->i64, args, 3);
	}
}

/* ------------------------------------------------------------ programs */

/* The probe body, whole or this program's part of it. */
static void emit_body(cg *c, const cg_split *sp, uint32_t part, int next_slot)
{
	if (sp->nparts)
		emit_part(c, sp, part, next_slot);
	else
		cg_stmts(c, &c->probe->body);
}

void cg_emit_program(cg *c, const dt_cg_prog *pg, const char *section, const cg_split *split,
		     uint32_t part, int next_slot)
{
	const dt_probe *p = pg->probe;
	const dt_attach *a = pg->attach;
	bool is_cont = pg->is_continuation, later_part = split->nparts && part > 0;
	bool is_entry_of_dwarf = !is_cont && !later_part && pg->cont_slot >= 0;
	int cont_slot = pg->cont_slot;
	LLVMTypeRef fty = LLVMFunctionType(c->i64, &c->i8p, 1, false);
	char fname[64];

	snprintf(fname, sizeof(fname), "%s", section);
	for (char *q = fname; *q; q++)
		if (*q == '/')
			*q = '_';
	c->fn = LLVMAddFunction(c->mod, fname, fty);
	LLVMSetSection(c->fn, section);
	/* BPF has no C library: with "no-builtins" (clang's -fno-builtin) no pass turns our stores
	 * into memset/memcpy calls. MemCpyOpt did, merging the zeroing of a key or value into one
	 * memset that the backend expands only up to 128 stores ("A call to built-in function
	 * 'memset' is not supported" for a 1 KiB key), and its merging updates MemorySSA at a cost
	 * that grows with the function, so compile time grew quadratically with a probe's size. */
	LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(c->ctx, "no-builtins", 11, "", 0));
	c->probe = p;
	c->attach = a;
	c->set = pg->set;
	c->nset = pg->nset;
	c->at = p->span;
	c->ptype = pg->prog_type;
	c->is_cont = is_cont;
	c->stack_budget = cg_probe_has_for(p) ? DT_MIN(c->budget0, (uint32_t)CG_FOR_CALLER_BUDGET)
					    : c->budget0;
	c->stack_used = 0;
	c->scratch_used = 0;
	c->npro = 0;
	c->nsubs = 0;
	c->dwarf_ref = NULL;
	c->frame = NULL;
	c->key32 = NULL;
	c->slots.n = 0;
	c->pool_from = 0;
	c->scratch_base = 0;
	c->ctxp = LLVMGetParam(c->fn, 0);
	c->allocas = cg_block(c, "entry");
	c->prologue = cg_block(c, "prologue");
	c->body = cg_block(c, "body");
	LLVMPositionBuilderAtEnd(c->b, c->body);

	/* Variables: zeroed at the start so every path reads initialised bytes. A probe in
	 * parts has them in its frame instead (frame_vars), zeroed by its first part. */
	free(c->vars);
	c->vars = xcalloc(p->nvars ? p->nvars : 1, sizeof(*c->vars));
	for (uint32_t i = 0; i < p->nvars && !split->nparts; i++) {
		const dt_type *t = p->vars[i]->type;

		if (cg_is_scalar(t)) {
			c->vars[i] = cg_alloca_i64(c);
			LLVMBuildStore(c->b, cg_i64(c, 0), c->vars[i]);
		} else {
			c->vars[i] = cg_buf(c, t->size ? t->size : 8);
		}
	}

	bool begin_end = a->provider == DT_P_BEGIN || a->provider == DT_P_END ||
			 a->provider == DT_P_SELF || a->provider == DT_P_TEST ||
			 a->provider == DT_P_BENCH;
	/* -p/-c restrict probes that run in a process's context. BEGIN/END run in ours, and an
	 * interval timer fires in whatever task the CPU happens to run: filtering it on the traced
	 * process would make `interval:s:1 { exit(); }` wait for that process to be on the CPU at
	 * the tick, i.e. forever for an idle one (bpftrace fires them regardless). */
	bool process_free = begin_end || a->provider == DT_P_INTERVAL || a->provider == DT_P_ITER;

	cg_pin_temps(c);

	if (later_part) {
		frame_vars(c, split);
		emit_part(c, split, part, next_slot);
	} else if (is_cont) {
		LLVMValueRef st = walker_state(c);

		if (split->nparts)
			frame_vars(c, split);
		else
			c->dwarf_ref = cg_buf(c, sizeof(struct dt_stack_ref));
		cg_memcpy(c, c->dwarf_ref, 0, st, offsetof(struct dt_walker_state, result),
			  sizeof(struct dt_stack_ref));
		cg_pin_temps(c);
		c->at = p->pred ? p->pred->span : p->span;
		if (p->pred && p->pred_uses_ustack_dwarf)
			guard(c, cg_cond(c, p->pred));
		emit_body(c, split, 0, next_slot);
	} else {
		if (cg_is_syscall_set(c)) {
			/* raw_syscalls fires for every syscall: the others return at once. */
			LLVMBasicBlockRef stop = cg_block(c, "not.in.set");
			LLVMBasicBlockRef here;

			cg_set_slot(c, stop);
			here = LLVMGetInsertBlock(c->b);
			LLVMPositionBuilderAtEnd(c->b, stop);
			LLVMBuildRet(c->b, cg_i64(c, 0));
			LLVMPositionBuilderAtEnd(c->b, here);
		}
		/* An iterator's last call (the end of the sequence) has no object: the task at
		 * offset 8 of every bpf_iter__task* context is NULL then. */
		if (a->provider == DT_P_ITER)
			guard(c, LLVMBuildICmp(c->b, LLVMIntNE, cg_ctx_load(c, 8, 8, false),
					       cg_i64(c, 0), ""));
		if (c->env->filter_pid && !process_free)
			guard(c, LLVMBuildICmp(c->b, LLVMIntEQ,
					       LLVMBuildLShr(c->b, cg_helper(c,
							BPF_FUNC_get_current_pid_tgid, c->i64,
							NULL, 0), cg_i64(c, 32), ""),
					       cg_i64(c, c->env->filter_pid), ""));
		if (c->env->filter_cgroup && !process_free)
			guard(c, LLVMBuildICmp(c->b, LLVMIntEQ,
					       cg_helper(c, BPF_FUNC_get_current_cgroup_id, c->i64,
							 NULL, 0),
					       cg_i64(c, c->env->filter_cgroup), ""));
		c->at = p->pred ? p->pred->span : p->span;
		if (p->pred && !(is_entry_of_dwarf && p->pred_uses_ustack_dwarf))
			guard(c, cg_cond(c, p->pred));
		if (is_entry_of_dwarf) {
			uint32_t depth = 0;
			LLVMValueRef st = walker_state(c);
			int wfd = cg_aux_fd(c, DT_AUX_WALKER_PROGS, 0, 0);
			LLVMValueRef args[3];

			cg_visit_probe(p, dwarf_depth_of, &depth);
			cg_store_int(c, st, offsetof(struct dt_walker_state, cont_slot), 4,
				     cg_i64(c, (uint64_t)cont_slot));
			/* ustack_dwarf(native): the checker let no plain ustack_dwarf share
			 * the probe, whose one walk serves both. */
			cg_store_int(c, st, offsetof(struct dt_walker_state, max_depth), 4,
				     cg_i64(c, DT_MIN(depth, (uint32_t)DT_WALKER_MAX_FRAMES) |
					       (p->ustack_dwarf_native ? DT_WALKER_NATIVE_ONLY
								       : 0)));
			args[0] = c->ctxp;
			args[1] = cg_map_ref(c, wfd);
			args[2] = cg_i64(c, DT_WALKER_SLOT_START);
			cg_helper(c, BPF_FUNC_tail_call, c->i64, args, 3);
			/* Still here: no walker in the slot. The sample is lost, and counted. */
			cg_stat_inc(c, DT_STAT_STACK_FAIL);
		} else {
			if (split->nparts)
				frame_vars(c, split);
			emit_body(c, split, 0, next_slot);
		}
	}
	finish_function(c);
}

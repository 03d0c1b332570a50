/* cg_expr.c — expressions to IR. Integers are 64-bit in registers whatever their storage size;
 * signedness chooses division, shifts and comparisons (BPF v3 has no signed division, so it is
 * built from unsigned division and sign fix-ups, with the kernel's x/0 == 0 rule made explicit
 * so LLVM never sees undefined behaviour). Strings, tuples, stack refs and usym values are
 * buffers in their dt_type layout; storing one where a different size is expected (a comm into
 * a 64-byte key) truncates or pads, so lang's type unification and the bytes always agree.
 * Builtins read the context the way each program type lays it out. */
#include "codegen/cg_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* struct pt_regs on x86-64 (kprobe/uprobe ctx, and the start of bpf_perf_event_data). */
enum { PT_R9 = 64, PT_R8 = 72, PT_AX = 80, PT_CX = 88, PT_DX = 96, PT_SI = 104, PT_DI = 112,
       PT_IP = 128, PT_CS = 136, PT_SP = 152 };

bool cg_is_scalar(const dt_type *t)
{
	switch (t->kind) {
	case DT_T_INT: case DT_T_KSYM: case DT_T_TIMESTAMP: case DT_T_USERNAME: case DT_T_PTR:
	case DT_T_CGROUP_PATH: case DT_T_STRERROR: case DT_T_BOOL: case DT_T_COUNT: case DT_T_SUM: case DT_T_MIN: case DT_T_MAX: case DT_T_AVG:
		return true;
	default:
		return false;
	}
}

static void store_mem(cg *c, LLVMValueRef db, uint32_t doff, const dt_type *dst,
		      LLVMValueRef sb, uint32_t soff, const dt_type *src)
{
	if (dst->kind == DT_T_TUPLE && src->kind == DT_T_TUPLE && !dt_type_equal(dst, src)) {
		if (dst->tuple.n != src->tuple.n) {
			cg_fail(c, (dt_span){ 0, 0 }, "tuple arity mismatch in store");
			return;
		}
		for (uint32_t off = 0; off < dst->size; off++)
			cg_store_int(c, db, doff + off, 1, cg_i64(c, 0));
		for (uint32_t i = 0; i < dst->tuple.n; i++) {
			/* A record's elements go by name: one written in another order lands
			 * in the slot's order, evaluated as written. */
			int k = dst->tuple.names ? dt_record_index(src, dst->tuple.names[i]) : (int)i;

			if (k < 0) {
				cg_fail(c, (dt_span){ 0, 0 }, "record fields differ in store");
				return;
			}
			const dt_type *se = src->tuple.elems[k], *de = dst->tuple.elems[i];
			uint32_t so = soff + src->tuple.offsets[k], d = doff + dst->tuple.offsets[i];

			if (cg_is_scalar(se))
				cg_store(c, db, d, de, cg_load_int(c, sb, so, se->kind == DT_T_INT ?
								   se->size : 8, se->is_signed), se);
			else if (!cg_is_scalar(de))
				store_mem(c, db, d, de, sb, so, se);
			else
				cg_fail(c, (dt_span){ 0, 0 }, "tuple element kinds differ");
		}
		return;
	}
	uint32_t n = DT_MIN(dst->size, src->size);

	cg_memcpy(c, db, doff, sb, soff, n);
	/* NUL-pad the rest: keys compare bytewise, so trailing garbage would split keys. */
	for (uint32_t off = n; off < dst->size;) {
		uint32_t w = 8;

		while (w > 1 && ((doff + off) % w || off + w > dst->size))
			w /= 2;
		cg_store_int(c, db, doff + off, w, cg_i64(c, 0));
		off += w;
	}
	if (dst->kind == DT_T_STR && src->size > dst->size && dst->size)
		cg_store_int(c, db, doff + dst->size - 1, 1, cg_i64(c, 0));
}

void cg_store(cg *c, LLVMValueRef base, uint32_t off, const dt_type *dst, LLVMValueRef v,
	      const dt_type *src)
{
	if (!v)
		return;
	if (cg_is_scalar(dst)) {
		if (!cg_is_scalar(src)) {
			cg_fail(c, (dt_span){ 0, 0 }, "storing a %d into an integer", src->kind);
			return;
		}
		cg_store_int(c, base, off, dst->kind == DT_T_INT || dst->kind == DT_T_BOOL ? dst->size
											  : 8, v);
		return;
	}
	if (cg_is_scalar(src)) {
		cg_fail(c, (dt_span){ 0, 0 }, "storing an integer into a %d", dst->kind);
		return;
	}
	store_mem(c, base, off, dst, v, 0, src);
}

void cg_store_expr(cg *c, LLVMValueRef base, uint32_t off, const dt_type *dst, const dt_expr *e)
{
	if (e->kind == DT_E_TUPLE && dst->kind == DT_T_TUPLE && dst->tuple.n == e->tuple.n) {
		for (uint32_t i = 0; i < e->tuple.n; i++)
			cg_store_expr(c, base, off + dst->tuple.offsets[i], dst->tuple.elems[i],
				      e->tuple.elems[i]);
		return;
	}
	cg_store(c, base, off, dst, cg_expr(c, e), e->type);
}

LLVMValueRef cg_load(cg *c, LLVMValueRef p, const dt_type *t)
{
	switch (t->kind) {
	case DT_T_INT:
		return cg_load_int(c, p, 0, t->size, t->is_signed);
	case DT_T_BOOL: /* 8 bytes, or one in an array */
		return cg_load_int(c, p, 0, t->size, false);
	case DT_T_KSYM: case DT_T_TIMESTAMP: case DT_T_USERNAME: case DT_T_CGROUP_PATH: case DT_T_PTR:
	case DT_T_STRERROR:
		return cg_load_int(c, p, 0, 8, t->kind == DT_T_TIMESTAMP);
	case DT_T_COUNT: case DT_T_SUM:
		return cg_load_int(c, p, offsetof(struct dt_agg_count, count), 8, true);
	case DT_T_MIN: case DT_T_MAX:
		return cg_load_int(c, p, offsetof(struct dt_agg_minmax, value), 8, true);
	case DT_T_AVG: {
		/* This CPU's average; count is never 0 once the value exists. */
		LLVMValueRef tot = cg_load_int(c, p, offsetof(struct dt_agg_avg, total), 8, true);
		LLVMValueRef cnt = cg_load_int(c, p, offsetof(struct dt_agg_avg, count), 8, false);
		LLVMValueRef z = LLVMBuildICmp(c->b, LLVMIntEQ, cnt, cg_i64(c, 0), "");

		return cg_divmod(c, tot, LLVMBuildSelect(c->b, z, cg_i64(c, 1), cnt, ""), true, false);
	}
	case DT_T_STATS: case DT_T_HIST: case DT_T_LHIST: case DT_T_TSERIES:
		cg_fail(c, (dt_span){ 0, 0 }, "reading a %s value in BPF", t->kind == DT_T_STATS ?
			"stats" : t->kind == DT_T_TSERIES ? "tseries" : "histogram");
		return cg_i64(c, 0);
	default: {
		LLVMValueRef b = cg_buf_raw(c, t->size);

		cg_memcpy(c, b, 0, p, 0, t->size);
		return b;
	}
	}
}

/* ------------------------------------------------------------ context and helpers */

static LLVMValueRef bool64(cg *c, LLVMValueRef i1);

static LLVMValueRef ctx_load(cg *c, uint32_t off, uint32_t size, bool is_signed)
{
	return cg_ctx_load(c, off, size, is_signed);
}

/* Registers are 64-bit; a narrower declared int keeps its low bytes and its sign. */
static LLVMValueRef narrow(cg *c, LLVMValueRef v, const dt_type *t)
{
	if (t->kind != DT_T_INT || t->size >= 8)
		return v;
	v = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->ctx, t->size * 8), "");
	return t->is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

static bool is_regs_ctx(cg *c)
{
	return c->ptype == BPF_PROG_TYPE_KPROBE || c->ptype == BPF_PROG_TYPE_PERF_EVENT;
}

static LLVMValueRef helper0(cg *c, int id)
{
	return cg_helper(c, id, c->i64, NULL, 0);
}

static LLVMValueRef tgid(cg *c)
{
	return LLVMBuildLShr(c->b, helper0(c, BPF_FUNC_get_current_pid_tgid), cg_i64(c, 32), "");
}

/* The current task's tid (off 0) or tgid (off 4) as dwarftrace's pid namespace numbers it
 * (struct bpf_pidns_info { u32 pid, tgid; }); 0 for a task outside that namespace. */
static LLVMValueRef ns_pid_tgid(cg *c, uint32_t off)
{
	LLVMValueRef info = cg_buf_raw(c, 8), args[4];

	cg_store_int(c, info, 0, 8, cg_i64(c, 0));
	args[0] = cg_i64(c, c->env->pidns_dev);
	args[1] = cg_i64(c, c->env->pidns_ino);
	args[2] = info;
	args[3] = cg_i64(c, 8);
	cg_helper(c, BPF_FUNC_get_ns_current_pid_tgid, c->i64, args, 4);
	return cg_load_int(c, info, off, 4, false);
}

/* The address-space generation of process `pid` (DT_AUX_EXEC_GEN, bumped at each exec; 0 when it
 * has not exec'd while the session ran), as an i64. */
static LLVMValueRef exec_gen(cg *c, LLVMValueRef pid)
{
	int fd = cg_aux_fd(c, DT_AUX_EXEC_GEN, 0, 0);
	LLVMValueRef key = cg_buf(c, 8), out = cg_buf(c, 8);
	LLVMBasicBlockRef hit = cg_block(c, "gen.hit"), done = cg_block(c, "gen.done");

	cg_store_int(c, key, 0, 8, pid);
	LLVMValueRef v = cg_map_lookup(c, cg_map_ref(c, fd), key);
	cg_br_nonnull(c, v, hit, done);
	LLVMPositionBuilderAtEnd(c->b, hit);
	cg_store_int(c, out, 0, 8, cg_load_int(c, v, 0, 4, false));
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return cg_load_int(c, out, 0, 8, false);
}

/* Tells userspace when a process records a user address (a user stack or a usym), so the
 * symbolizer snapshots its mappings while it still lives: a process that exits before the maps are
 * printed still resolves. Its first record comes early (often while ld.so is still mapping
 * libraries), so the note repeats at most every DT_PID_NOTE_NS while the process keeps recording:
 * one lookup per record in the common case. The NOEXIST insert makes exactly one CPU win the race
 * for a new process. The exec program forgets the process here, so a new image is noted at once.
 * Returns what the record's flags carry: the generation, shifted (dt_abi.h). */
static LLVMValueRef note_tgid(cg *c, LLVMValueRef pid)
{
	LLVMValueRef gen = exec_gen(c, pid);
	int fd = cg_aux_fd(c, DT_AUX_PIDS_SEEN, 0, 0);
	LLVMValueRef key = cg_buf(c, 16), map = cg_map_ref(c, fd);
	LLVMValueRef now = helper0(c, BPF_FUNC_ktime_get_ns);
	LLVMBasicBlockRef known = cg_block(c, "seen.known"), stale = cg_block(c, "seen.stale");
	LLVMBasicBlockRef fresh = cg_block(c, "seen.new"), send = cg_block(c, "seen.send");
	LLVMBasicBlockRef done = cg_block(c, "seen.done");

	cg_store_int(c, key, 0, 8, pid);
	cg_store_int(c, key, 8, 8, now);
	LLVMValueRef v = cg_map_lookup(c, map, key);
	cg_br_nonnull(c, v, known, fresh);

	LLVMPositionBuilderAtEnd(c->b, known);
	LLVMValueRef age = LLVMBuildSub(c->b, now, cg_load_int(c, v, 0, 8, false), "");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, age, cg_i64(c, DT_PID_NOTE_NS), ""),
			done, stale);
	LLVMPositionBuilderAtEnd(c->b, stale);
	/* Two CPUs may both find it stale and both send: userspace's re-read is cheap then. */
	cg_store_int(c, v, 0, 8, now);
	LLVMBuildBr(c->b, send);

	LLVMPositionBuilderAtEnd(c->b, fresh);
	LLVMValueRef args[4] = { map, key, cg_gep(c, key, 8), cg_i64(c, BPF_NOEXIST) };
	LLVMValueRef r = cg_helper(c, BPF_FUNC_map_update_elem, c->i64, args, 4);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r, cg_i64(c, 0), ""), send, done);

	LLVMPositionBuilderAtEnd(c->b, send);
	LLVMValueRef ev = cg_event_new(c, DT_EV_PID_SEEN, 0, sizeof(struct dt_ev_pid_seen));
	cg_store_int(c, ev, offsetof(struct dt_event_hdr, id), 4, pid);
	cg_store_int(c, ev, CG_EV_PAYLOAD + offsetof(struct dt_ev_pid_seen, gen), 4, gen);
	cg_event_output(c, ev, sizeof(struct dt_ev_pid_seen));
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return LLVMBuildShl(c->b, LLVMBuildAnd(c->b, gen, cg_i64(c, DT_GEN_MASK), ""),
			    cg_i64(c, DT_GEN_SHIFT), "");
}

static LLVMValueRef usym_of(cg *c, LLVMValueRef addr)
{
	LLVMValueRef b = cg_buf(c, sizeof(struct dt_usym));
	LLVMValueRef pid = tgid(c);

	cg_store_int(c, b, offsetof(struct dt_usym, addr), 8, addr);
	cg_store_int(c, b, offsetof(struct dt_usym, pid), 4, pid);
	cg_store_int(c, b, offsetof(struct dt_usym, pad), 4, note_tgid(c, pid));
	return b;
}

/* `func` or `probe` (the field at `off` of struct dt_probe_name) in a program that serves a set
 * of attach points: the names of the one that fired, from the unit's names map by slot. */
static LLVMValueRef set_name(cg *c, uint32_t off, uint32_t size)
{
	LLVMValueRef buf = cg_buf(c, size), val;
	LLVMBasicBlockRef have = cg_block(c, "name.have"), done = cg_block(c, "name.done");
	int fd = cg_aux_fd(c, DT_AUX_PROBE_NAMES, 0, 0);
	LLVMValueRef key = cg_buf_raw(c, 8);

	cg_store_int(c, key, 0, 4, cg_set_slot(c, done));
	val = cg_map_lookup(c, cg_map_ref(c, fd), key);
	cg_br_nonnull(c, val, have, done);
	LLVMPositionBuilderAtEnd(c->b, have);
	/* The names are NUL-terminated within DT_PROBE_NAME_LEN bytes; the rest stays zero. */
	cg_memcpy(c, buf, 0, val, off, DT_MIN(size, (uint32_t)DT_PROBE_NAME_LEN));
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return buf;
}

/* A pointer whose address space the type does not say: the probe's own space first, the other
 * after a fault. */
static cg_space likely_space(cg *c)
{
	dt_provider p = c->attach->provider;

	return p == DT_P_UPROBE || p == DT_P_URETPROBE || p == DT_P_USDT ? CG_READ_USER_FIRST
									   : CG_READ_KERNEL_FIRST;
}

/* Reads through a pointer of type t: from the space the type names (uptr(), kptr(), a syscall
 * argument, a member of a kernel struct), or, when it names none, the likely one first. */
void cg_read_ptr(cg *c, LLVMValueRef dst, uint32_t size, LLVMValueRef len, LLVMValueRef ptr,
		 const dt_type *t, bool str)
{
	bool known = t && t->kind == DT_T_PTR && t->ptr.as != DT_AS_NONE;

	cg_read(c, dst, size, len, ptr, !known ? likely_space(c) : t->ptr.as == DT_AS_USER ?
		CG_READ_USER : CG_READ_KERNEL, str);
}

void cg_stack_shape(const dt_expr *e, dt_stack_kind *kind, uint32_t *depth)
{
	const dt_type *t = e->type;

	*kind = t && t->kind == DT_T_STACK ? t->stack.kind :
		e->builtin.id == DT_B_KSTACK ? DT_STACK_KERNEL : DT_STACK_USER_FP;
	*depth = t && t->kind == DT_T_STACK && t->stack.depth ? t->stack.depth :
		 e->builtin.depth ? e->builtin.depth : DT_STACK_DEFAULT_DEPTH;
}

/* The frames a kstack (user false) or ustack of `depth` frames has here: bpf_get_stack copies
 * the frames it walks, their bytes / 8 (0 when none). */
static LLVMValueRef stack_frame_count(cg *c, bool user, uint32_t depth)
{
	uint32_t size = depth * 8;
	LLVMValueRef buf = cg_buf_raw(c, size);
	LLVMValueRef args[4] = { c->ctxp, buf, cg_i64(c, size),
				 cg_i64(c, user ? BPF_F_USER_STACK : 0) };
	LLVMValueRef r = cg_helper(c, BPF_FUNC_get_stack, c->i64, args, 4);
	LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), "");

	return LLVMBuildSelect(c->b, neg, cg_i64(c, 0), LLVMBuildLShr(c->b, r, cg_i64(c, 3), ""),
			       "");
}

LLVMValueRef cg_stack_ref(cg *c, const dt_expr *e)
{
	dt_stack_kind kind;
	uint32_t depth;
	const uint32_t id_off = offsetof(struct dt_stack_ref, id);
	const uint32_t pid_off = offsetof(struct dt_stack_ref, pid);
	const uint32_t flags_off = offsetof(struct dt_stack_ref, flags);
	LLVMValueRef ref = cg_buf(c, sizeof(struct dt_stack_ref));

	cg_stack_shape(e, &kind, &depth);
	if (kind == DT_STACK_USER_DWARF) {
		if (!c->dwarf_ref) {
			cg_fail(c, e->span, "ustack_dwarf outside a continuation program");
			return ref;
		}
		cg_memcpy(c, ref, 0, c->dwarf_ref, 0, sizeof(struct dt_stack_ref));
		/* The walker's status stays in the low byte of flags; the generation goes above. */
		cg_store_int(c, ref, flags_off, 4,
			     LLVMBuildOr(c->b, cg_load_int(c, ref, flags_off, 4, false),
					 note_tgid(c, tgid(c)), ""));
		return ref;
	}
	bool user = kind == DT_STACK_USER_FP;
	int fd = cg_aux_fd(c, DT_AUX_STACKS, kind, depth);
	uint64_t flags = BPF_F_FAST_STACK_CMP | (user ? BPF_F_USER_STACK : 0);
	LLVMValueRef args[3] = { c->ctxp, cg_map_ref(c, fd), cg_i64(c, flags) };
	LLVMValueRef id = cg_helper(c, BPF_FUNC_get_stackid, c->i64, args, 3);
	LLVMBasicBlockRef bad = cg_block(c, "stk.bad"), count = cg_block(c, "stk.count");
	LLVMBasicBlockRef done = cg_block(c, "stk.done");

	id = LLVMBuildSExt(c->b, LLVMBuildTrunc(c->b, id, c->i32, ""), c->i64, "");
	if (c->prog->stack_counts && depth * 8 <= DT_MAX_VALUE_SIZE) {
		/* len($s) of a stack value: the frames, counted now (the stack map cannot be read
		 * from BPF), ride in the upper half of a valid id; userspace reads the lower. */
		LLVMValueRef n = stack_frame_count(c, user, depth);

		id = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, id, cg_i64(c, 0), ""), id,
				     LLVMBuildOr(c->b, id, LLVMBuildShl(c->b, n, cg_i64(c, 32), ""),
						 ""), "");
	}
	cg_store_int(c, ref, id_off, 8, id);
	/* A kernel stack is the same whichever process ran into it: keyed by stack id alone (pid
	 * 0), as bpftrace keys kstack, so one kernel path is one map entry, not one per process. */
	if (user) {
		LLVMValueRef pid = tgid(c);

		/* Inside a pid namespace of its own, dwarftrace reads /proc as that namespace
		 * numbers processes: the stack is symbolized under the process's pid there (0, and
		 * hex frames, for one outside it, as in bpftrace). */
		cg_store_int(c, ref, pid_off, 4, c->env->pidns_ino ? ns_pid_tgid(c, 4) : pid);
		cg_store_int(c, ref, flags_off, 4, note_tgid(c, pid));
	} else {
		cg_store_int(c, ref, pid_off, 4, cg_i64(c, 0));
	}
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, id, cg_i64(c, 0), ""), bad, done);
	LLVMPositionBuilderAtEnd(c->b, bad);
	/* -EFAULT is "no stack", not a loss: a user stack of a kernel thread, or a kernel stack
	 * of a sample taken in user mode (profile/software events). */
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, id, cg_i64(c, (uint64_t)-EFAULT), ""),
			done, count);
	LLVMPositionBuilderAtEnd(c->b, count);
	cg_stat_inc(c, DT_STAT_STACK_FAIL);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return ref;
}

/* Integer argument n of a kprobe or uprobe, from the register x86-64 passes it in, narrowed to
 * t (an int narrower than 8 bytes keeps its low bytes and its sign). */
LLVMValueRef cg_arg_reg(cg *c, uint32_t n, const dt_type *t, dt_span at)
{
	static const uint32_t argoff[] = { PT_DI, PT_SI, PT_DX, PT_CX, PT_R8, PT_R9 };
	_Static_assert(DT_ARRAY_SIZE(argoff) == DT_ARG_REGS, "argN: the checker's register count");

	/* Raw tracepoints and fentry/fexit: the context is the arguments, 64 bits each. */
	if ((c->ptype == BPF_PROG_TYPE_RAW_TRACEPOINT || c->ptype == BPF_PROG_TYPE_TRACING) &&
	    n < 12)
		return narrow(c, ctx_load(c, 8 * n, 8, false), t);
	if (c->ptype != BPF_PROG_TYPE_KPROBE || n >= DT_ARRAY_SIZE(argoff)) {
		cg_fail(c, at, "argument %u in this probe type", n);
		return cg_i64(c, 0);
	}
	return narrow(c, ctx_load(c, argoff[n], 8, false), t);
}

/* Argument n of a usdt location, as its note describes it (lang.h, dt_usdt_arg): a constant,
 * a register (or the part of one the size names), or memory at base + index * scale + disp read
 * from the process; sign- or zero-extended to 64 bits by the note's size. A read that faults is
 * counted and gives 0. */
static LLVMValueRef usdt_arg(cg *c, uint32_t n, dt_span at)
{
	const dt_usdt_loc *l = c->attach->usdt;
	const dt_usdt_arg *a;
	LLVMValueRef v;
	LLVMTypeRef ty;

	if (!l || n >= l->nargs || c->ptype != BPF_PROG_TYPE_KPROBE) {
		cg_fail(c, at, "usdt argument %u without its location", n);
		return cg_i64(c, 0);
	}
	a = &l->args[n];
	switch (a->kind) {
	case DT_USDT_CONST:
		v = cg_i64(c, (uint64_t)a->value);
		break;
	case DT_USDT_REG:
		v = ctx_load(c, (uint32_t)a->reg, 8, false);
		if (a->reg_shift)
			v = LLVMBuildLShr(c->b, v, cg_i64(c, a->reg_shift), "");
		break;
	case DT_USDT_MEM: {
		LLVMValueRef addr = cg_i64(c, (uint64_t)a->value), b = cg_buf(c, 8);

		if (a->reg >= 0)
			addr = LLVMBuildAdd(c->b, addr, ctx_load(c, (uint32_t)a->reg, 8, false), "");
		if (a->index >= 0)
			addr = LLVMBuildAdd(c->b, addr,
					    LLVMBuildMul(c->b, ctx_load(c, (uint32_t)a->index, 8,
									false),
							 cg_i64(c, a->scale), ""), "");
		cg_store_int(c, b, 0, 8, cg_i64(c, 0));
		cg_read(c, b, a->size, NULL, addr, CG_READ_USER, false);
		v = cg_load_int(c, b, 0, 8, false);
		break;
	}
	default:
		cg_fail(c, at, "usdt argument %u of an unknown kind", n);
		return cg_i64(c, 0);
	}
	if (a->size >= 8)
		return v;
	ty = LLVMIntTypeInContext(c->ctx, a->size * 8);
	v = LLVMBuildTrunc(c->b, v, ty, "");
	return a->is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

/* `args` of a uprobe, fentry, fexit or rawtracepoint as a value: the struct of its parameters
 * (member i at offset 8 * i), each stored from its register at its own size. */
static LLVMValueRef args_struct(cg *c, const dt_expr *e)
{
	const dt_type *t = e->type;
	LLVMValueRef b = cg_buf(c, t->size);

	for (uint32_t i = 0; i < t->cstruct.n; i++) {
		const dt_member *m = &t->cstruct.members[i];
		cg_store_int(c, b, m->offset, m->type->size,
			     cg_arg_reg(c, m->offset / 8, m->type, e->span));
	}
	return b;
}

/* A kernel function the program calls (a kfunc): declared by name in the module, so LLVM emits
 * a call with a relocation against the name, which cg_elf_section turns into the kernel's
 * BPF_PSEUDO_KFUNC_CALL of its BTF id (dt_cg_env.kfunc_id). */
static LLVMValueRef kfunc(cg *c, const char *name, LLVMTypeRef fty)
{
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);

	if (!f) {
		f = LLVMAddFunction(c->mod, name, fty);
		LLVMSetLinkage(f, LLVMExternalLinkage);
	}
	return f;
}

/* comm(pid) (dt_check's check_comm_of_pid): bpf_task_from_pid, comm read at its offset
 * (builtin.arg), bpf_task_release; "N/A" for no such process, as bpftrace's stdlib. */
static LLVMValueRef comm_of_pid(cg *c, const dt_expr *e)
{
	LLVMValueRef b = cg_buf(c, 16);
	LLVMValueRef pid = LLVMBuildTrunc(c->b, cg_expr(c, e->builtin.task), c->i32, "");
	LLVMTypeRef from_ty = LLVMFunctionType(c->i8p, &c->i32, 1, false);
	LLVMTypeRef rel_ty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), &c->i8p, 1, false);
	LLVMValueRef task = LLVMBuildCall2(c->b, from_ty, kfunc(c, "bpf_task_from_pid", from_ty),
					   &pid, 1, "task");
	LLVMBasicBlockRef found = cg_block(c, "comm.task"), none = cg_block(c, "comm.none");
	LLVMBasicBlockRef done = cg_block(c, "comm.done");

	LLVMBuildCondBr(c->b, LLVMBuildIsNotNull(c->b, task, ""), found, none);
	LLVMPositionBuilderAtEnd(c->b, found);
	cg_read(c, b, 16, NULL,
		LLVMBuildAdd(c->b, LLVMBuildPtrToInt(c->b, task, c->i64, ""),
			     cg_i64(c, e->builtin.arg), ""), CG_READ_KERNEL, false);
	LLVMBuildCall2(c->b, rel_ty, kfunc(c, "bpf_task_release", rel_ty), &task, 1, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, none);
	cg_memcpy(c, b, 0, cg_const_str(c, "N/A", 3, 16), 0, 16);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return b;
}

static LLVMValueRef builtin(cg *c, const dt_expr *e)
{
	LLVMValueRef v, b;

	switch (e->builtin.id) {
	case DT_B_PID:
		if (e->builtin.variant == DT_PIDNS_CURR && c->env->pidns_ino)
			return ns_pid_tgid(c, 4);
		return tgid(c);
	case DT_B_TID:
		if (e->builtin.variant == DT_PIDNS_CURR && c->env->pidns_ino)
			return ns_pid_tgid(c, 0);
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_current_pid_tgid),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_UID:
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_current_uid_gid),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_GID:
		return LLVMBuildLShr(c->b, helper0(c, BPF_FUNC_get_current_uid_gid), cg_i64(c, 32), "");
	case DT_B_COMM: {
		if (e->builtin.task)
			return comm_of_pid(c, e);
		uint32_t size = e->type->size ? e->type->size : 16;
		LLVMValueRef args[2];

		b = cg_buf(c, size);
		args[0] = b;
		args[1] = cg_i64(c, DT_MIN(size, 16u));
		cg_helper(c, BPF_FUNC_get_current_comm, c->i64, args, 2);
		return b;
	}
	case DT_B_NSECS:
		/* nsecs(sw_tai) is bpftrace's estimate of TAI for kernels without the TAI
		 * helper; every kernel dwarftrace runs on (6.1+) has it, so it reads TAI. */
		switch (e->builtin.variant) {
		case DT_CLOCK_BOOT:
			return helper0(c, BPF_FUNC_ktime_get_boot_ns);
		case DT_CLOCK_TAI: case DT_CLOCK_SW_TAI:
			return helper0(c, BPF_FUNC_ktime_get_tai_ns);
		default:
			return helper0(c, BPF_FUNC_ktime_get_ns);
		}
	case DT_B_ELAPSED:
		return LLVMBuildSub(c->b, helper0(c, BPF_FUNC_ktime_get_boot_ns),
				    cg_i64(c, c->env->start_ns), "");
	case DT_B_CPU:
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_smp_processor_id),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_CGROUP:
		return helper0(c, BPF_FUNC_get_current_cgroup_id);
	case DT_B_RAND:
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_prandom_u32),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_CURTASK:
		return helper0(c, BPF_FUNC_get_current_task);
	case DT_B_NUMAID:
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_numa_node_id),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_JIFFIES:
		return helper0(c, BPF_FUNC_jiffies64);
	case DT_B_NCPUS:
		return cg_i64(c, c->env->ncpus);
	case DT_B_CPID:
		return cg_i64(c, c->env->cpid);
	case DT_B_CTX:
		return LLVMBuildPtrToInt(c->b, c->ctxp, c->i64, "");
	case DT_B_USERNAME: /* the uid; userspace prints the name */
		return LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_current_uid_gid),
				    cg_i64(c, 0xffffffffu), "");
	case DT_B_USERMODE:
		if (!is_regs_ctx(c)) {
			cg_fail(c, e->span, "usermode in this probe type");
			return cg_i64(c, 0);
		}
		/* The privilege level of the interrupted code is the low two bits of %cs. */
		return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ,
					       LLVMBuildAnd(c->b, ctx_load(c, PT_CS, 8, false),
							    cg_i64(c, 3), ""),
					       cg_i64(c, 3), ""));
	case DT_B_SARG: {
		/* At a function's entry the return address is at sp; stack arguments follow. */
		if (c->ptype != BPF_PROG_TYPE_KPROBE) {
			cg_fail(c, e->span, "sarg%u in this probe type", e->builtin.arg);
			return cg_i64(c, 0);
		}
		LLVMValueRef addr = LLVMBuildAdd(c->b, ctx_load(c, PT_SP, 8, false),
						 cg_i64(c, 8 * (e->builtin.arg + 1)), "");
		b = cg_buf(c, 8);
		cg_read(c, b, 8, NULL, addr, likely_space(c), false);
		return cg_load_int(c, b, 0, 8, false);
	}
	case DT_B_ARG:
		if (c->attach->provider == DT_P_USDT)
			return usdt_arg(c, e->builtin.arg, e->span);
		return cg_arg_reg(c, e->builtin.arg, e->type, e->span);
	case DT_B_RETVAL:
		if (c->attach->provider == DT_P_FEXIT && c->attach->kargs)
			/* fexit: the return value follows the arguments. */
			return narrow(c, ctx_load(c, 8 * c->attach->kargs->cstruct.n, 8, false),
				      e->type);
		if (c->ptype != BPF_PROG_TYPE_KPROBE) {
			cg_fail(c, e->span, "retval in this probe type");
			return cg_i64(c, 0);
		}
		return narrow(c, ctx_load(c, PT_AX, 8, false), e->type);
	case DT_B_FUNC:
		if (e->type->kind == DT_T_STR && c->nset > 1)
			return set_name(c, offsetof(struct dt_probe_name, func), e->type->size);
		if (e->type->kind == DT_T_STR) {
			const char *f = c->attach->func ? c->attach->func : c->attach->text;

			return cg_const_str(c, f, strlen(f), e->type->size);
		}
		/* kprobe, kretprobe, fentry, fexit: the helper gives the function's own address
		 * (a kretprobe's and an fexit's regs point past it). */
		if ((is_regs_ctx(c) && c->ptype == BPF_PROG_TYPE_KPROBE) ||
		    (c->ptype == BPF_PROG_TYPE_TRACING && c->attach->provider != DT_P_RAWTRACEPOINT))
			v = cg_helper(c, BPF_FUNC_get_func_ip, c->i64, &c->ctxp, 1);
		else if (is_regs_ctx(c))
			v = ctx_load(c, PT_IP, 8, false);
		else
			v = cg_i64(c, 0);
		return e->type->kind == DT_T_USYM ? usym_of(c, v) : v;
	case DT_B_PROBE: {
		const char *t = dt_attach_probe_name(c->attach);

		if (c->nset > 1)
			return set_name(c, offsetof(struct dt_probe_name, probe), e->type->size);

		return cg_const_str(c, t, strlen(t), e->type->size);
	}
	case DT_B_KSTACK: case DT_B_USTACK: case DT_B_USTACK_DWARF:
		return cg_stack_ref(c, e);
	case DT_B_ARGS:
		if (e->type->kind == DT_T_CSTRUCT)
			return args_struct(c, e);
		break;
	case DT_B_WALL: case DT_B_ONCPU: case DT_B_OFFCPU: case DT_B_RUNQ: case DT_B_BLOCKED:
	case DT_B_IOWAIT: case DT_B_NSWITCH:
		return cg_xprobe_value(c, e);
	default:
		break;
	}
	cg_fail(c, e->span, "builtin %s used as a value", dt_builtin_name(e->builtin.id));
	return cg_i64(c, 0);
}

/* args.f / args->f of a tracepoint: the raw record is the context. The field is where this
 * program's tracepoint has it (dt_attach.own_prog: the probe's tracepoints differ). */
static LLVMValueRef tp_field(cg *c, const dt_expr *e)
{
	const dt_tp_field *f = e->field.tp;
	const dt_type *t = e->type;
	const dt_type *rec = c->attach->tp_record;

	for (uint32_t i = 0; f && rec && i < rec->record.nfields; i++)
		if (!strcmp(rec->record.fields[i].name, f->name))
			f = &rec->record.fields[i];

	if (!f || c->ptype != BPF_PROG_TYPE_TRACEPOINT) {
		cg_fail(c, e->span, "field access '%s' outside a tracepoint", e->field.field);
		return cg_i64(c, 0);
	}
	if (t->kind == DT_T_STR) {
		/* A string read through a pointer or a __data_loc reads one byte more when it is
		 * of max_strlen, as str() does. */
		bool at_ptr = f->is_data_loc || !f->is_array;
		uint32_t cap = at_ptr && t->size == c->prog->strlen ? t->size + 1 : t->size;
		LLVMValueRef b = cg_buf(c, cap);
		LLVMValueRef base = LLVMBuildPtrToInt(c->b, c->ctxp, c->i64, "");
		bool user = c->attach->target && !strcmp(c->attach->target, "syscalls");

		if (f->is_data_loc) {
			/* __data_loc: u32 (len << 16 | offset from the start of the record). */
			LLVMValueRef loc = ctx_load(c, f->offset, 4, false);
			LLVMValueRef off = LLVMBuildAnd(c->b, loc, cg_i64(c, 0xffff), "");

			cg_read(c, b, cap, NULL, LLVMBuildAdd(c->b, base, off, ""),
				CG_READ_KERNEL_FIRST, true);
		} else if (f->is_array) {
			uint32_t n = DT_MIN(f->size, t->size);

			cg_read(c, b, n, NULL, LLVMBuildAdd(c->b, base, cg_i64(c, f->offset), ""),
				CG_READ_KERNEL, false);
			if (n == t->size)
				cg_store_int(c, b, n - 1, 1, cg_i64(c, 0));
		} else {
			cg_read(c, b, cap, NULL, ctx_load(c, f->offset, 8, false),
				user ? CG_READ_USER_FIRST : CG_READ_KERNEL_FIRST, true);
		}
		return b;
	}
	uint32_t size = f->size;

	if (size == 1 || size == 2 || size == 4 || size == 8) {
		if (f->offset % size == 0)
			return ctx_load(c, f->offset, size, f->is_signed);
		LLVMValueRef tmp = cg_buf(c, 8);

		cg_read(c, tmp, size, NULL,
			LLVMBuildAdd(c->b, LLVMBuildPtrToInt(c->b, c->ctxp, c->i64, ""),
				     cg_i64(c, f->offset), ""), CG_READ_KERNEL, false);
		return cg_load_int(c, tmp, 0, size, f->is_signed);
	}
	cg_fail(c, e->span, "tracepoint field '%s' of %u bytes as an integer", f->name, size);
	return cg_i64(c, 0);
}

/* ------------------------------------------------------------ maps */

LLVMValueRef cg_map_key(cg *c, const dt_map_sym *m, dt_expr *const *keys, uint32_t nkeys,
			const dt_map_layout *lay)
{
	LLVMValueRef k = cg_buf(c, lay->key_size);

	if (nkeys == 1) {
		cg_store_expr(c, k, 0, m->key, keys[0]);
	} else if (nkeys > 1) {
		if (!m->key || m->key->kind != DT_T_TUPLE || m->key->tuple.n != nkeys) {
			cg_fail(c, m->decl, "map %s: key shape does not match its uses", m->name);
			return k;
		}
		for (uint32_t i = 0; i < nkeys; i++)
			cg_store_expr(c, k, m->key->tuple.offsets[i], m->key->tuple.elems[i],
				      keys[i]);
	}
	return k;
}

static LLVMValueRef map_read(cg *c, const dt_expr *e)
{
	const dt_map_sym *m = e->map.sym;
	const dt_type *vt = m->value;
	dt_map_layout lay;
	LLVMValueRef key, v, res;
	LLVMBasicBlockRef hit, miss, done;

	dt_map_layout_of(m, &lay);
	if (lay.bucketed || vt->kind == DT_T_STATS) { /* the checker refuses these */
		cg_fail(c, e->span, "reading histogram map %s in BPF", m->name);
		return cg_i64(c, 0);
	}
	key = cg_map_key(c, m, e->map.keys, e->map.nkeys, &lay);
	if (lay.percpu) /* count, sum, min, max, avg: combined over the CPUs */
		return cg_percpu_value(c, m, key);
	v = cg_map_lookup(c, cg_map_ref(c, cg_script_map_fd(c, m)), key);
	cg_helper_check(c, v, BPF_FUNC_map_lookup_elem, true, 2);
	hit = cg_block(c, "rd.hit");
	miss = cg_block(c, "rd.miss");
	done = cg_block(c, "rd.done");
	if (cg_is_scalar(vt)) {
		LLVMValueRef hv, vals[2];
		LLVMBasicBlockRef froms[2];

		cg_br_nonnull(c, v, hit, miss);
		LLVMPositionBuilderAtEnd(c->b, hit);
		hv = cg_load(c, v, vt);
		froms[0] = LLVMGetInsertBlock(c->b);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, miss);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, done);
		res = LLVMBuildPhi(c->b, c->i64, "");
		vals[0] = hv;
		vals[1] = cg_i64(c, 0);
		froms[1] = miss;
		LLVMAddIncoming(res, vals, froms, 2);
		return res;
	}
	res = cg_buf(c, vt->size);
	cg_br_nonnull(c, v, hit, miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	cg_memcpy(c, res, 0, v, 0, vt->size);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, miss);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return res;
}

/* ------------------------------------------------------------ operators */

static LLVMValueRef bool64(cg *c, LLVMValueRef i1)
{
	return LLVMBuildZExt(c->b, i1, c->i64, "");
}

/* Joins two blocks that end a test (both still open) into the i64 1 (from `yes`) or 0. */
static LLVMValueRef yes_no(cg *c, LLVMBasicBlockRef yes, LLVMBasicBlockRef no)
{
	LLVMBasicBlockRef done = cg_block(c, "test.done");
	LLVMValueRef res, vals[2];
	LLVMBasicBlockRef froms[2] = { yes, no };

	LLVMPositionBuilderAtEnd(c->b, yes);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, no);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	res = LLVMBuildPhi(c->b, c->i64, "");
	vals[0] = cg_i64(c, 1);
	vals[1] = cg_i64(c, 0);
	LLVMAddIncoming(res, vals, froms, 2);
	return res;
}


/* ------------------------------------------------------------ string loops (large strings)
 *
 * Unrolled, a comparison or search of strings of thousands of bytes (a large max_strlen) is
 * more code than a program may have; past CG_UNROLL_BYTES they run as bpf_loop callbacks,
 * which the verifier checks once, not once per byte. A callback reads its strings through
 * pointers in its context (the caller's stack) and tests every index it reads at. */

/* Slots of a string loop's context: the two strings, the result, and an index. */
enum { SL_A, SL_B, SL_RES, SL_AT, SL__N };

/* Byte idx (an i64) of the `size`-byte string at p, 0 at and past its end. */
static LLVMValueRef byte_at(cg *c, LLVMValueRef p, uint32_t size, LLVMValueRef idx)
{
	LLVMBasicBlockRef in = cg_block(c, "sb.in"), out = cg_block(c, "sb.out"),
			  done = cg_block(c, "sb.done");
	LLVMValueRef v, vals[2];
	LLVMBasicBlockRef froms[2];

	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, idx, cg_i64(c, size), ""), in, out);
	LLVMPositionBuilderAtEnd(c->b, in);
	v = LLVMBuildLoad2(c->b, c->i8, LLVMBuildGEP2(c->b, c->i8, p, &idx, 1, ""), "");
	vals[0] = LLVMBuildZExt(c->b, v, c->i64, "");
	froms[0] = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, out);
	vals[1] = cg_i64(c, 0);
	froms[1] = out;
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	v = LLVMBuildPhi(c->b, c->i64, "");
	LLVMAddIncoming(v, vals, froms, 2);
	return v;
}

/* A string loop's context on the stack: a and b, the result's first value, the index. */
static LLVMValueRef sl_ctx(cg *c, LLVMValueRef a, LLVMValueRef b, int64_t res, LLVMValueRef at)
{
	LLVMValueRef ctx = cg_alloca_stack(c, 8 * SL__N);

	cg_store_int(c, ctx, 8 * SL_A, 8, LLVMBuildPtrToInt(c->b, a, c->i64, ""));
	cg_store_int(c, ctx, 8 * SL_B, 8, LLVMBuildPtrToInt(c->b, b, c->i64, ""));
	cg_store_int(c, ctx, 8 * SL_RES, 8, cg_i64(c, (uint64_t)res));
	cg_store_int(c, ctx, 8 * SL_AT, 8, at ? at : cg_i64(c, 0));
	return ctx;
}

static LLVMValueRef sl_ptr(cg *c, LLVMValueRef ctx, uint32_t slot)
{
	return LLVMBuildIntToPtr(c->b, cg_load_int(c, ctx, 8 * slot, 8, false), c->i8p, "");
}

/* Opens the callback `i64 (i64 index, i8 *ctx)` of a string loop. */
static LLVMValueRef sl_open(cg *c, const char *what, cg_saved *saved, LLVMValueRef *idx,
			    LLVMValueRef *ctx)
{
	static unsigned serial;
	LLVMTypeRef pt[2] = { c->i64, c->i8p };
	char name[96];

	snprintf(name, sizeof(name), "%s.%s%u", LLVMGetValueName(c->fn), what, serial++);
	LLVMValueRef fn = cg_fn_open(c, name, LLVMFunctionType(c->i64, pt, 2, false), saved);
	*idx = LLVMGetParam(fn, 0);
	*ctx = LLVMGetParam(fn, 1);
	return fn;
}

/* Returns 1 from a callback (stop the loop) when `cond`, after storing `res` when not NULL. */
static void sl_stop_if(cg *c, LLVMValueRef cond, LLVMValueRef ctx, LLVMValueRef res)
{
	LLVMBasicBlockRef stop = cg_block(c, "sl.stop"), go = cg_block(c, "sl.go");

	LLVMBuildCondBr(c->b, cond, stop, go);
	LLVMPositionBuilderAtEnd(c->b, stop);
	if (res)
		cg_store_int(c, ctx, 8 * SL_RES, 8, res);
	LLVMBuildRet(c->b, cg_i64(c, 1));
	LLVMPositionBuilderAtEnd(c->b, go);
}

/* bpf_loop(n, fn, ctx): then the result slot. */
static LLVMValueRef sl_run(cg *c, uint32_t n, LLVMValueRef fn, LLVMValueRef ctx)
{
	LLVMValueRef args[4] = { cg_i64(c, n), LLVMBuildBitCast(c->b, fn, c->i8p, ""), ctx,
				 cg_i64(c, 0) };

	cg_helper(c, BPF_FUNC_loop, c->i64, args, 4);
	return cg_load_int(c, ctx, 8 * SL_RES, 8, false);
}

/* str_eq as a loop over n bytes: a byte that differs stops it with 0, a NUL in both (when
 * stop_at_nul) with the 1 the result starts at. */
static LLVMValueRef str_eq_loop(cg *c, LLVMValueRef a, uint32_t sa, LLVMValueRef b, uint32_t sb,
				uint32_t n, bool stop_at_nul)
{
	LLVMValueRef ctx = sl_ctx(c, a, b, 1, NULL), idx, fctx;
	cg_saved saved;
	LLVMValueRef fn = sl_open(c, "streq", &saved, &idx, &fctx);
	LLVMValueRef ca = byte_at(c, sl_ptr(c, fctx, SL_A), sa, idx);
	LLVMValueRef cb = byte_at(c, sl_ptr(c, fctx, SL_B), sb, idx);

	sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntNE, ca, cb, ""), fctx, cg_i64(c, 0));
	if (stop_at_nul)
		sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntEQ, ca, cg_i64(c, 0), ""), fctx, NULL);
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, cg_block(c, "dead"));
	cg_fn_close(c, &saved);
	return sl_run(c, n, fn, ctx);
}

/* Whether the needle n occurs in h at index `at`: a loop over the needle's bytes. */
static LLVMValueRef needle_at(cg *c, LLVMValueRef h, uint32_t sh, LLVMValueRef n, uint32_t sn,
			      LLVMValueRef at)
{
	LLVMValueRef ctx = sl_ctx(c, h, n, 1, at), idx, fctx;
	cg_saved saved;
	LLVMValueRef fn = sl_open(c, "needle", &saved, &idx, &fctx);
	LLVMValueRef cn = byte_at(c, sl_ptr(c, fctx, SL_B), sn, idx);

	/* The needle ended: every byte before matched. */
	sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntEQ, cn, cg_i64(c, 0), ""), fctx, NULL);
	LLVMValueRef k = LLVMBuildAdd(c->b, cg_load_int(c, fctx, 8 * SL_AT, 8, false), idx, "");
	LLVMValueRef ch = byte_at(c, sl_ptr(c, fctx, SL_A), sh, k);
	sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntNE, cn, ch, ""), fctx, cg_i64(c, 0));
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, cg_block(c, "dead"));
	cg_fn_close(c, &saved);
	return sl_run(c, sn, fn, ctx);
}

/* str_find as a loop over the starts in h, each a needle_at loop. */
static LLVMValueRef str_find_loop(cg *c, LLVMValueRef h, uint32_t sh, LLVMValueRef n, uint32_t sn)
{
	LLVMValueRef ctx = sl_ctx(c, h, n, -1, NULL), idx, fctx;
	cg_saved saved;
	LLVMValueRef fn = sl_open(c, "strfind", &saved, &idx, &fctx);
	LLVMValueRef hp = sl_ptr(c, fctx, SL_A);
	LLVMValueRef hit = needle_at(c, hp, sh, sl_ptr(c, fctx, SL_B), sn, idx);

	sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntNE, hit, cg_i64(c, 0), ""), fctx, idx);
	/* No later start can match once the haystack has ended. */
	sl_stop_if(c, LLVMBuildICmp(c->b, LLVMIntEQ, byte_at(c, sl_ptr(c, fctx, SL_A), sh, idx),
				    cg_i64(c, 0), ""), fctx, NULL);
	LLVMBuildRet(c->b, cg_i64(c, 0));
	LLVMPositionBuilderAtEnd(c->b, cg_block(c, "dead"));
	cg_fn_close(c, &saved);
	return sl_run(c, sh, fn, ctx);
}

/* strlen of a large string: the string-read helper copies it up to its NUL (at most `size`
 * bytes of it) and counts. */
static LLVMValueRef str_len_read(cg *c, LLVMValueRef s, uint32_t size)
{
	LLVMValueRef args[3] = { cg_buf_raw(c, size + 1), cg_i64(c, size + 1),
				 LLVMBuildPtrToInt(c->b, s, c->i64, "") };
	LLVMValueRef r = LLVMBuildSub(c->b, cg_helper(c, BPF_FUNC_probe_read_kernel_str, c->i64,
						     args, 3), cg_i64(c, 1), "");

	return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), ""),
			       cg_i64(c, 0), r, "");
}

/* Bytewise equality up to the first NUL, over the longer of the two buffers (the shorter reads
 * as NUL beyond its end) and at most `limit` bytes (strncmp). Fully unrolled: there is no loop
 * for the verifier to bound. */
static LLVMValueRef str_eq(cg *c, LLVMValueRef a, uint32_t sa, LLVMValueRef b, uint32_t sb,
			   uint64_t limit, bool stop_at_nul)
{
	uint32_t n = (uint32_t)DT_MIN((uint64_t)DT_MAX(sa, sb), limit);

	if (n > CG_UNROLL_BYTES)
		return str_eq_loop(c, a, sa, b, sb, n, stop_at_nul);
	LLVMBasicBlockRef yes = cg_block(c, "streq.yes"), no = cg_block(c, "streq.no");

	for (uint32_t i = 0; i < n; i++) {
		LLVMValueRef ca = i < sa ? cg_load_int(c, a, i, 1, false) : cg_i64(c, 0);
		LLVMValueRef cb = i < sb ? cg_load_int(c, b, i, 1, false) : cg_i64(c, 0);
		LLVMBasicBlockRef same = cg_block(c, "streq.same"), next = cg_block(c, "streq.next");

		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, ca, cb, ""), same, no);
		LLVMPositionBuilderAtEnd(c->b, same);
		if (stop_at_nul)
			LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, ca, cg_i64(c, 0), ""),
					yes, next);
		else
			LLVMBuildBr(c->b, next);
		LLVMPositionBuilderAtEnd(c->b, next);
	}
	LLVMBuildBr(c->b, yes);
	return yes_no(c, yes, no);
}

/* strstr(h, n): the index in h where the string n first occurs, -1 when it does not (an empty
 * n occurs at 0). Unrolled over every start in h and every byte of n, as str_eq is. */
static LLVMValueRef str_find(cg *c, LLVMValueRef h, uint32_t sh, LLVMValueRef n, uint32_t sn)
{
	if (sh > CG_UNROLL_BYTES || sn > CG_UNROLL_BYTES)
		return str_find_loop(c, h, sh, n, sn);
	LLVMBasicBlockRef no = cg_block(c, "strf.no"), done = cg_block(c, "strf.done");
	DT_VEC(LLVMBasicBlockRef) hits = { 0 };

	for (uint32_t i = 0; i < sh; i++) {
		LLVMBasicBlockRef next_start = cg_block(c, "strf.next"), hit = cg_block(c, "strf.hit");

		DT_VEC_PUSH(&hits, hit);
		for (uint32_t j = 0; j < sn; j++) {
			LLVMValueRef cn = cg_load_int(c, n, j, 1, false);
			LLVMValueRef ch = i + j < sh ? cg_load_int(c, h, i + j, 1, false) : cg_i64(c, 0);
			LLVMBasicBlockRef more = cg_block(c, "strf.more"), same = cg_block(c, "strf.same");

			/* The needle ended: every byte before matched. */
			LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cn, cg_i64(c, 0), ""), hit,
					more);
			LLVMPositionBuilderAtEnd(c->b, more);
			LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cn, ch, ""), same,
					next_start);
			LLVMPositionBuilderAtEnd(c->b, same);
		}
		/* The needle filled its buffer and matched whole. */
		LLVMBuildBr(c->b, hit);
		LLVMPositionBuilderAtEnd(c->b, hit);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, next_start);
		/* No later start can match once the haystack has ended. */
		LLVMBasicBlockRef go_on = cg_block(c, "strf.go");
		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cg_load_int(c, h, i, 1, false),
						    cg_i64(c, 0), ""), no, go_on);
		LLVMPositionBuilderAtEnd(c->b, go_on);
	}
	LLVMBuildBr(c->b, no);
	LLVMPositionBuilderAtEnd(c->b, no);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	LLVMValueRef res = LLVMBuildPhi(c->b, c->i64, "");
	for (uint32_t i = 0; i < sh; i++) {
		LLVMValueRef v = cg_i64(c, i);

		LLVMAddIncoming(res, &v, &hits.v[i], 1);
	}
	LLVMValueRef miss = cg_i64(c, (uint64_t)-1);
	LLVMAddIncoming(res, &miss, &no, 1);
	free(hits.v);
	return res;
}

/* strlen(s): the bytes of the string s before its first NUL (its size when it has none).
 * Unrolled as a chain that leaves at the first NUL: one byte live at a time (a branch-free sum
 * let LLVM load every byte up front and spill them past the BPF stack). */
static LLVMValueRef str_len(cg *c, LLVMValueRef s, uint32_t size)
{
	if (size > CG_UNROLL_BYTES)
		return str_len_read(c, s, size);
	LLVMBasicBlockRef done = cg_block(c, "strlen.done");
	DT_VEC(LLVMBasicBlockRef) from = { 0 };

	for (uint32_t i = 0; i < size; i++) {
		LLVMBasicBlockRef next = cg_block(c, "strlen.next");

		DT_VEC_PUSH(&from, LLVMGetInsertBlock(c->b));
		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cg_load_int(c, s, i, 1, false),
						    cg_i64(c, 0), ""), done, next);
		LLVMPositionBuilderAtEnd(c->b, next);
	}
	DT_VEC_PUSH(&from, LLVMGetInsertBlock(c->b));
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	LLVMValueRef len = LLVMBuildPhi(c->b, c->i64, "");
	for (uint32_t i = 0; i <= size; i++) {
		LLVMValueRef v = cg_i64(c, i);

		LLVMAddIncoming(len, &v, &from.v[i], 1);
	}
	free(from.v);
	return len;
}

/* v, which LLVM can no longer reason about (a volatile round trip through the stack): an
 * offset added to an aligned stack pointer stays an add, not the `or` the verifier refuses on a
 * pointer. The verifier keeps v's bounds across the spill and fill. */
static LLVMValueRef opaque(cg *c, LLVMValueRef v)
{
	LLVMValueRef slot = cg_alloca_i64(c);

	LLVMSetVolatile(LLVMBuildStore(c->b, v, slot), true);
	LLVMValueRef r = LLVMBuildLoad2(c->b, c->i64, slot, "");
	LLVMSetVolatile(r, true);
	return r;
}

/* str_concat(a, b): a, then b from a's NUL on, in a string of both sizes less one NUL. The
 * string-read helper copies each: a's copy returns its length (the verifier bounds it by a's
 * size), which is where b's copy starts, so it stays inside the result. */
static LLVMValueRef str_concat(cg *c, const dt_expr *e)
{
	const dt_expr *x = e->call.args[0], *y = e->call.args[1];
	LLVMValueRef a = cg_expr(c, x), b, res, at, args[3];

	if (!a)
		return NULL;
	res = cg_buf(c, e->type->size);
	args[0] = res;
	args[1] = cg_i64(c, x->type->size);
	args[2] = a;
	at = cg_helper(c, BPF_FUNC_probe_read_kernel_str, c->i64, args, 3);
	/* The bytes before a's NUL; 0 if the copy failed (it cannot: a is BPF memory). */
	at = LLVMBuildSub(c->b, at, cg_i64(c, 1), "");
	at = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, at, cg_i64(c, 0), ""),
			     cg_i64(c, 0), at, "");
	at = opaque(c, at);
	b = cg_expr(c, y);
	if (!b)
		return NULL;
	args[0] = LLVMBuildInBoundsGEP2(c->b, c->i8, res, &at, 1, "");
	args[1] = cg_i64(c, y->type->size);
	args[2] = b;
	cg_helper(c, BPF_FUNC_probe_read_kernel_str, c->i64, args, 3);
	return res;
}

/* memcmp(l, r, count): 0 when the first count bytes of the two values agree, else the
 * difference of the first two bytes that differ (as signed chars, as bpftrace's C has it).
 * At most the smaller value's bytes are compared. Branch-free, from the last byte back. */
static LLVMValueRef mem_cmp(cg *c, const dt_expr *e)
{
	const dt_expr *args[2] = { e->call.args[0], e->call.args[1] };
	LLVMValueRef p[2];
	uint32_t size[2];

	for (int k = 0; k < 2; k++) {
		LLVMValueRef v = cg_expr(c, args[k]);

		if (!v)
			return NULL;
		size[k] = args[k]->type->size;
		if (cg_is_scalar(args[k]->type)) {
			/* An integer is compared as the bytes it is stored in. */
			if (args[k]->type->kind != DT_T_INT)
				size[k] = 8;
			p[k] = cg_buf_raw(c, 8);
			cg_store_int(c, p[k], 0, size[k], v);
		} else {
			p[k] = v;
		}
	}
	const dt_expr *ne = e->call.args[2];
	uint32_t n = DT_MIN(size[0], size[1]);
	if (ne->kind == DT_E_INT && ne->i.value < n)
		n = (uint32_t)ne->i.value;
	LLVMValueRef count = ne->kind == DT_E_INT ? NULL : cg_expr(c, ne);
	LLVMValueRef res = cg_i64(c, 0);

	for (uint32_t i = n; i-- > 0;) {
		LLVMValueRef l = cg_load_int(c, p[0], i, 1, true), r = cg_load_int(c, p[1], i, 1, true);
		LLVMValueRef differ = LLVMBuildICmp(c->b, LLVMIntNE, l, r, "");

		if (count)
			differ = LLVMBuildAnd(c->b, differ, LLVMBuildICmp(c->b, LLVMIntULT,
									cg_i64(c, i), count, ""), "");
		res = LLVMBuildSelect(c->b, differ, LLVMBuildSub(c->b, l, r, ""), res, "");
	}
	return res;
}

/* Two values of one struct or array type, equal byte for byte: 1 or 0. The buffers are 8-byte
 * aligned, so whole words are compared and or-ed together, with no branch per byte. */
static LLVMValueRef mem_eq(cg *c, LLVMValueRef a, LLVMValueRef b, uint32_t size)
{
	LLVMValueRef acc = cg_i64(c, 0);

	for (uint32_t i = 0; i < size;) {
		uint32_t w = size - i >= 8 ? 8 : size - i >= 4 ? 4 : size - i >= 2 ? 2 : 1;

		acc = LLVMBuildOr(c->b, acc, LLVMBuildXor(c->b, cg_load_int(c, a, i, w, false),
							  cg_load_int(c, b, i, w, false), ""), "");
		i += w;
	}
	return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, acc, cg_i64(c, 0), ""));
}

static LLVMValueRef absval(cg *c, LLVMValueRef v, LLVMValueRef neg)
{
	return LLVMBuildSelect(c->b, neg, LLVMBuildNeg(c->b, v, ""), v, "");
}

/* Division and remainder with C's signed semantics (truncation toward zero, the remainder
 * takes the dividend's sign); the divisor is not 0. */
LLVMValueRef cg_divmod(cg *c, LLVMValueRef l, LLVMValueRef r, bool is_signed, bool mod)
{
	LLVMValueRef res;

	if (!is_signed)
		return mod ? LLVMBuildURem(c->b, l, r, "") : LLVMBuildUDiv(c->b, l, r, "");
	LLVMValueRef ln = LLVMBuildICmp(c->b, LLVMIntSLT, l, cg_i64(c, 0), "");
	LLVMValueRef rn = LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), "");
	LLVMValueRef a = absval(c, l, ln), b = absval(c, r, rn);

	if (mod) {
		res = LLVMBuildURem(c->b, a, b, "");
		return LLVMBuildSelect(c->b, ln, LLVMBuildNeg(c->b, res, ""), res, "");
	}
	res = LLVMBuildUDiv(c->b, a, b, "");
	return LLVMBuildSelect(c->b, LLVMBuildXor(c->b, ln, rn, ""), LLVMBuildNeg(c->b, res, ""),
			       res, "");
}

bool cg_div_may_warn(dt_binop op, const dt_expr *divisor)
{
	return (op == DT_OP_DIV || op == DT_OP_MOD) && divisor &&
	       !(divisor->kind == DT_E_INT && divisor->i.value);
}

/* x / r, x % r where r may be 0 at run time: bpftrace's rule, 1 and a warning at the
 * expression. The division happens only on the branch where r is not 0, so LLVM cannot
 * assume it away (a 0 divisor is undefined behaviour to it). */
static LLVMValueRef divmod_checked(cg *c, LLVMValueRef l, LLVMValueRef r, bool is_signed,
				   bool mod)
{
	if (LLVMIsAConstantInt(r) && LLVMConstIntGetZExtValue(r))
		return cg_divmod(c, l, r, is_signed, mod);
	LLVMBasicBlockRef zero = cg_block(c, "div.zero"), ok = cg_block(c, "div.ok"),
			  done = cg_block(c, "div.done");

	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r, cg_i64(c, 0), ""), zero, ok);
	LLVMPositionBuilderAtEnd(c->b, zero);
	cg_runtime_error(c, DT_RTE_DIVIDE_BY_ZERO);
	LLVMBasicBlockRef zero_end = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, ok);
	LLVMValueRef res = cg_divmod(c, l, r, is_signed, mod);
	LLVMBasicBlockRef ok_end = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	LLVMValueRef phi = LLVMBuildPhi(c->b, c->i64, "");
	LLVMValueRef vals[2] = { cg_i64(c, 1), res };
	LLVMBasicBlockRef from[2] = { zero_end, ok_end };

	LLVMAddIncoming(phi, vals, from, 2);
	return phi;
}

LLVMValueRef cg_arith(cg *c, dt_binop op, LLVMValueRef l, LLVMValueRef r, bool is_signed)
{
	switch (op) {
	case DT_OP_ADD: return LLVMBuildAdd(c->b, l, r, "");
	case DT_OP_SUB: return LLVMBuildSub(c->b, l, r, "");
	case DT_OP_MUL: return LLVMBuildMul(c->b, l, r, "");
	case DT_OP_DIV: return divmod_checked(c, l, r, is_signed, false);
	case DT_OP_MOD: return divmod_checked(c, l, r, is_signed, true);
	case DT_OP_BAND: return LLVMBuildAnd(c->b, l, r, "");
	case DT_OP_BOR: return LLVMBuildOr(c->b, l, r, "");
	case DT_OP_BXOR: return LLVMBuildXor(c->b, l, r, "");
	/* Shift counts are masked as the BPF instruction does, so none is undefined in LLVM. */
	case DT_OP_SHL:
		return LLVMBuildShl(c->b, l, LLVMBuildAnd(c->b, r, cg_i64(c, 63), ""), "");
	case DT_OP_SHR:
		r = LLVMBuildAnd(c->b, r, cg_i64(c, 63), "");
		return is_signed ? LLVMBuildAShr(c->b, l, r, "") : LLVMBuildLShr(c->b, l, r, "");
	default:
		return NULL;
	}
}

LLVMValueRef cg_cond(cg *c, const dt_expr *e)
{
	LLVMValueRef v = cg_expr(c, e);

	if (v && e->type && e->type->kind == DT_T_STR) /* true when not empty */
		return LLVMBuildICmp(c->b, LLVMIntNE, cg_load_int(c, v, 0, 1, false), cg_i64(c, 0),
				     "");
	if (!v || !cg_is_scalar(e->type)) {
		cg_fail(c, e->span, "condition is not an integer");
		return LLVMConstInt(c->i1, 0, false);
	}
	return LLVMBuildICmp(c->b, LLVMIntNE, v, cg_i64(c, 0), "");
}

static LLVMValueRef logical(cg *c, const dt_expr *e)
{
	bool is_and = e->bin.op == DT_OP_LAND;
	LLVMBasicBlockRef rhs = cg_block(c, "sc.rhs"), done = cg_block(c, "sc.done");
	LLVMBasicBlockRef from_l, from_r;
	LLVMValueRef l, r, res, vals[2];
	LLVMBasicBlockRef froms[2];

	l = cg_cond(c, e->bin.l);
	from_l = LLVMGetInsertBlock(c->b);
	if (is_and)
		LLVMBuildCondBr(c->b, l, rhs, done);
	else
		LLVMBuildCondBr(c->b, l, done, rhs);
	LLVMPositionBuilderAtEnd(c->b, rhs);
	r = bool64(c, cg_cond(c, e->bin.r));
	from_r = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	res = LLVMBuildPhi(c->b, c->i64, "");
	vals[0] = cg_i64(c, is_and ? 0 : 1);
	vals[1] = r;
	froms[0] = from_l;
	froms[1] = from_r;
	LLVMAddIncoming(res, vals, froms, 2);
	return res;
}

static LLVMValueRef binop(cg *c, const dt_expr *e)
{
	const dt_type *lt = e->bin.l->type, *rt = e->bin.r->type;
	dt_binop op = e->bin.op;
	LLVMValueRef l, r;

	if (op == DT_OP_LAND || op == DT_OP_LOR)
		return logical(c, e);
	l = cg_expr(c, e->bin.l);
	r = cg_expr(c, e->bin.r);
	if (!l || !r)
		return cg_i64(c, 0);
	if (!cg_is_scalar(lt) || !cg_is_scalar(rt)) {
		if (lt->kind == rt->kind && (lt->kind == DT_T_STR || lt->kind == DT_T_BUF) &&
		    (op == DT_OP_EQ || op == DT_OP_NE)) {
			/* A buffer's bytes are compared whole, NULs included. */
			LLVMValueRef eq = str_eq(c, l, lt->size, r, rt->size, UINT64_MAX,
						 lt->kind == DT_T_STR);

			return op == DT_OP_EQ ? eq : LLVMBuildXor(c->b, eq, cg_i64(c, 1), "");
		}
		if ((lt->kind == DT_T_CSTRUCT || lt->kind == DT_T_ARRAY || lt->kind == DT_T_STACK) &&
		    (op == DT_OP_EQ || op == DT_OP_NE)) {
			LLVMValueRef eq = mem_eq(c, l, r, lt->size);

			return op == DT_OP_EQ ? eq : LLVMBuildXor(c->b, eq, cg_i64(c, 1), "");
		}
		cg_fail(c, e->span, "operator on non-integer operands");
		return cg_i64(c, 0);
	}
	/* C would make the comparison unsigned if either side is; bpftrace and scripts expect
	 * `$x < 0` to work on signed values, so only two signed operands compare signed. */
	bool both_signed = lt->is_signed && rt->is_signed;

	if (e->type->kind == DT_T_PTR && (op == DT_OP_ADD || op == DT_OP_SUB)) {
		uint32_t step = cg_ptr_step(e->type);

		if (lt->kind != DT_T_PTR)
			l = LLVMBuildMul(c->b, l, cg_i64(c, step), "");
		else
			r = LLVMBuildMul(c->b, r, cg_i64(c, step), "");
	}

	switch (op) {
	case DT_OP_EQ: return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, l, r, ""));
	case DT_OP_NE: return bool64(c, LLVMBuildICmp(c->b, LLVMIntNE, l, r, ""));
	case DT_OP_LT:
		return bool64(c, LLVMBuildICmp(c->b, both_signed ? LLVMIntSLT : LLVMIntULT, l, r, ""));
	case DT_OP_LE:
		return bool64(c, LLVMBuildICmp(c->b, both_signed ? LLVMIntSLE : LLVMIntULE, l, r, ""));
	case DT_OP_GT:
		return bool64(c, LLVMBuildICmp(c->b, both_signed ? LLVMIntSGT : LLVMIntUGT, l, r, ""));
	case DT_OP_GE:
		return bool64(c, LLVMBuildICmp(c->b, both_signed ? LLVMIntSGE : LLVMIntUGE, l, r, ""));
	case DT_OP_SHR:
		return cg_arith(c, op, l, r, lt->is_signed);
	default: {
		LLVMValueRef v = cg_arith(c, op, l, r, both_signed);

		if (!v) {
			cg_fail(c, e->span, "unknown binary operator %d", op);
			return cg_i64(c, 0);
		}
		return v;
	}
	}
}

static LLVMValueRef unop(cg *c, const dt_expr *e)
{
	LLVMValueRef v;

	switch (e->un.op) {
	case DT_UOP_PREINC: return cg_incdec(c, e->un.e, true, false);
	case DT_UOP_PREDEC: return cg_incdec(c, e->un.e, false, false);
	case DT_UOP_POSTINC: return cg_incdec(c, e->un.e, true, true);
	case DT_UOP_POSTDEC: return cg_incdec(c, e->un.e, false, true);
	default: break;
	}
	v = cg_expr(c, e->un.e);
	if (!v || !cg_is_scalar(e->un.e->type)) {
		cg_fail(c, e->span, "unary operator on a non-integer");
		return cg_i64(c, 0);
	}
	switch (e->un.op) {
	case DT_UOP_NEG: return LLVMBuildNeg(c->b, v, "");
	case DT_UOP_LNOT: return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, v, cg_i64(c, 0), ""));
	default: return LLVMBuildNot(c->b, v, "");
	}
}

/* `a ?: b`: a (an integer, evaluated once) when it is not zero, else b. */
static LLVMValueRef ternary_short(cg *c, const dt_expr *e)
{
	LLVMBasicBlockRef bf = cg_block(c, "tern.f"), done = cg_block(c, "tern.done");
	LLVMValueRef vals[2], a = cg_expr(c, e->tern.cond);
	LLVMBasicBlockRef froms[2];
	LLVMValueRef res;

	if (!a)
		return cg_i64(c, 0);
	vals[0] = a;
	froms[0] = LLVMGetInsertBlock(c->b);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, a, cg_i64(c, 0), ""), done, bf);
	LLVMPositionBuilderAtEnd(c->b, bf);
	vals[1] = cg_expr(c, e->tern.f);
	froms[1] = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	if (!vals[1])
		return cg_i64(c, 0);
	res = LLVMBuildPhi(c->b, c->i64, "");
	LLVMAddIncoming(res, vals, froms, 2);
	return res;
}

static LLVMValueRef ternary(cg *c, const dt_expr *e)
{
	if (!e->tern.t)
		return ternary_short(c, e);

	LLVMBasicBlockRef bt = cg_block(c, "tern.t"), bf = cg_block(c, "tern.f");
	LLVMBasicBlockRef done = cg_block(c, "tern.done");
	LLVMValueRef cond = cg_cond(c, e->tern.cond);
	/* The result buffer must exist before the branch so that both arms reach it. */
	LLVMValueRef res = cg_is_scalar(e->type) || e->type->kind == DT_T_VOID ? NULL :
			   cg_buf_raw(c, e->type->size);

	LLVMBuildCondBr(c->b, cond, bt, bf);
	if (e->type->kind == DT_T_VOID) {
		LLVMPositionBuilderAtEnd(c->b, bt);
		cg_expr(c, e->tern.t);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, bf);
		cg_expr(c, e->tern.f);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, done);
		return cg_i64(c, 0);
	}
	if (cg_is_scalar(e->type)) {
		LLVMValueRef vals[2];
		LLVMBasicBlockRef froms[2];
		LLVMValueRef res;

		LLVMPositionBuilderAtEnd(c->b, bt);
		vals[0] = cg_expr(c, e->tern.t);
		froms[0] = LLVMGetInsertBlock(c->b);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, bf);
		vals[1] = cg_expr(c, e->tern.f);
		froms[1] = LLVMGetInsertBlock(c->b);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, done);
		if (!vals[0] || !vals[1])
			return cg_i64(c, 0);
		res = LLVMBuildPhi(c->b, c->i64, "");
		LLVMAddIncoming(res, vals, froms, 2);
		return res;
	}
	LLVMPositionBuilderAtEnd(c->b, bt);
	cg_store(c, res, 0, e->type, cg_expr(c, e->tern.t), e->tern.t->type);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, bf);
	cg_store(c, res, 0, e->type, cg_expr(c, e->tern.f), e->tern.f->type);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return res;
}

static LLVMValueRef tuple(cg *c, const dt_expr *e)
{
	const dt_type *t = e->type;
	LLVMValueRef b = cg_buf(c, t->size);

	for (uint32_t i = 0; i < e->tuple.n && i < t->tuple.n; i++)
		cg_store_expr(c, b, t->tuple.offsets[i], t->tuple.elems[i], e->tuple.elems[i]);
	return b;
}

/* buf(src[, len]): the length byte, then the bytes of a string or array value or of memory at a
 * pointer. A constant length (or an array's own) is the type's; another is capped by it at run
 * time. */
static LLVMValueRef buf(cg *c, const dt_expr *e)
{
	const dt_expr *src = e->call.args[0], *l = e->call.nargs > 1 ? e->call.args[1] : NULL;
	uint32_t cap = e->type->size - 1;
	LLVMValueRef res = cg_buf(c, e->type->size), v = cg_expr(c, src), len;
	bool konst = !l || l->kind == DT_E_INT;

	if (!v)
		return NULL;
	if (konst) {
		len = cg_i64(c, cap);
	} else {
		len = cg_expr(c, l);
		len = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, len, cg_i64(c, cap), ""),
				      cg_i64(c, cap), len, "");
	}
	cg_store_int(c, res, 0, 1, len);
	if (src->type->kind == DT_T_STR || src->type->kind == DT_T_ARRAY)
		cg_memcpy(c, res, 1, v, 0, DT_MIN(cap, src->type->size));
	else if (cap)
		cg_read_ptr(c, cg_gep(c, res, 1), cap, konst ? NULL : len, v, src->type, false);
	return res;
}

/* ntop([af, ] addr): struct { u64 af; u8 addr[16]; } for userspace's inet_ntop. An integer is
 * an IPv4 address as it lies in memory; a buffer (pton(), buf()) gives its bytes. */
static LLVMValueRef ntop(cg *c, const dt_expr *e)
{
	const dt_expr *addr = e->call.args[e->call.nargs - 1];
	/* A buf is a length byte and the bytes; a char array read as a string (dt_check allows
	 * char[4] and char[16]) is the bytes and a NUL. Both are one byte longer than the
	 * address. */
	bool bytes = addr->type->kind == DT_T_BUF || addr->type->kind == DT_T_STR;
	uint64_t af = e->call.nargs == 2 ? e->call.args[0]->i.value :
		      bytes && addr->type->size == 17 ? AF_INET6 : AF_INET;
	LLVMValueRef res = cg_buf(c, e->type->size), v = cg_expr(c, addr);

	if (!v)
		return NULL;
	cg_store_int(c, res, 0, 8, cg_i64(c, af));
	if (bytes)
		cg_memcpy(c, res, 8, v, addr->type->kind == DT_T_BUF,
			  DT_MIN(16u, addr->type->size - 1));
	else
		cg_store_int(c, res, 8, af == AF_INET6 ? 8 : 4, v);
	return res;
}

/* Calls that produce values; the rest (printf, print, …) live in cg_stmt.c. */
static LLVMValueRef call(cg *c, const dt_expr *e)
{
	const dt_expr *a0 = e->call.nargs ? e->call.args[0] : NULL;
	LLVMValueRef v;

	switch (e->call.id) {
	case DT_F_EXTERN:
		return cg_extern_call(c, e);
	case DT_F_STR: {
		uint32_t size = e->type->size;
		LLVMValueRef b, len = NULL;

		if (!a0)
			break;
		v = cg_expr(c, a0);
		if (!v)
			return NULL;
		if (a0->type->kind == DT_T_STR) {
			b = cg_buf(c, size);
			/* A longer string cut at max_strlen keeps all of its bytes, no NUL: it
			 * prints as cut, as a string read from memory does. */
			if (size == c->prog->strlen && a0->type->size > size)
				cg_memcpy(c, b, 0, v, 0, size);
			else
				cg_store(c, b, 0, e->type, v, a0->type);
			return b;
		}
		/* A string of max_strlen reads one byte more: a string that long or longer then
		 * fills the type's bytes with no NUL, which is how it prints as cut (with the
		 * str_trunc_trailer); the value is the type's first `size` bytes. */
		uint32_t cap = size == c->prog->strlen ? size + 1 : size;

		b = cg_buf(c, cap);
		if (e->call.nargs > 1) {
			/* str(p, n): n bytes including the NUL, bounded by the buffer for the verifier. */
			LLVMValueRef n = cg_expr(c, e->call.args[1]);
			LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntUGT, n, cg_i64(c, cap), "");

			len = LLVMBuildSelect(c->b, big, cg_i64(c, cap), n, "");
		}
		cg_read_ptr(c, b, cap, len, v, a0->type, true);
		return b;
	}
	case DT_F_STRNCMP: {
		LLVMValueRef a = cg_expr(c, a0), b = cg_expr(c, e->call.args[1]);

		if (!a || !b)
			return NULL;
		/* bpftrace's strncmp: 0 when the first n bytes agree, else 1. */
		return LLVMBuildXor(c->b, str_eq(c, a, a0->type->size, b, e->call.args[1]->type->size,
						 e->call.args[2]->i.value, true), cg_i64(c, 1), "");
	}
	case DT_F_STRCONTAINS: case DT_F_STRSTR: {
		LLVMValueRef h = cg_expr(c, a0), n = cg_expr(c, e->call.args[1]);

		if (!h || !n)
			return NULL;
		v = str_find(c, h, a0->type->size, n, e->call.args[1]->type->size);
		if (e->call.id == DT_F_STRSTR)
			return v;
		return bool64(c, LLVMBuildICmp(c->b, LLVMIntSGE, v, cg_i64(c, 0), ""));
	}
	case DT_F_STRLEN: case DT_F_STRCAP: /* strcap of a pointer: its string's length */
		v = cg_expr(c, a0);
		return v ? str_len(c, v, a0->type->size) : NULL;
	case DT_F_STR_CONCAT:
		return str_concat(c, e);
	case DT_F_MEMCMP:
		return mem_cmp(c, e);
	case DT_F_BUF:
		return buf(c, e);
	case DT_F_NTOP:
		return ntop(c, e);
	case DT_F_HAS_KEY: {
		const dt_expr *m = a0;
		dt_map_layout lay;

		dt_map_layout_of(m->map.sym, &lay);
		LLVMValueRef key = cg_map_key(c, m->map.sym, m->map.keys, m->map.nkeys, &lay);
		v = cg_map_lookup(c, cg_map_ref(c, cg_script_map_fd(c, m->map.sym)), key);
		return bool64(c, LLVMBuildIsNotNull(c->b, v, ""));
	}
	case DT_F_REG:
		if (!is_regs_ctx(c)) {
			cg_fail(c, e->span, "reg() in this probe type");
			return cg_i64(c, 0);
		}
		return ctx_load(c, (uint32_t)dt_reg_offset(a0->str.s), 8, false);
	case DT_F_PTON: {
		unsigned char bytes[16] = { 0 };
		uint32_t n = e->type->size - 1;
		LLVMValueRef b = cg_buf(c, e->type->size);

		inet_pton(n == 16 ? AF_INET6 : AF_INET, a0->str.s, bytes);
		cg_store_int(c, b, 0, 1, cg_i64(c, n));
		for (uint32_t i = 0; i < n; i++)
			cg_store_int(c, b, 1 + i, 1, cg_i64(c, bytes[i]));
		return b;
	}
	case DT_F_LEN: {
		if (a0->kind == DT_E_MAP && (!a0->type || a0->type->kind != DT_T_STACK))
			return cg_map_len(c, a0->map.sym);
		const dt_type *st = a0->type;
		if (a0->kind == DT_E_BUILTIN)
			return stack_frame_count(c, st->stack.kind == DT_STACK_USER_FP,
						 st->stack.depth);
		/* A stack value: its reference carries the count (cg_stack_ref, stack_counts). */
		LLVMValueRef ref = cg_expr(c, a0);
		LLVMValueRef id = cg_load_int(c, ref, offsetof(struct dt_stack_ref, id), 8, false);

		return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, id, cg_i64(c, 0), ""),
				       cg_i64(c, 0), LLVMBuildLShr(c->b, id, cg_i64(c, 32), ""), "");
	}
	case DT_F_PERCPU_KADDR: {
		/* __per_cpu_offset[cpu] + the variable's offset; 0 past the possible CPUs. */
		LLVMValueRef cpu = e->call.nargs == 2 ? cg_expr(c, e->call.args[1])
				   : LLVMBuildAnd(c->b, helper0(c, BPF_FUNC_get_smp_processor_id),
						  cg_i64(c, 0xffffffffu), "");
		LLVMValueRef ok = LLVMBuildICmp(c->b, LLVMIntULT, cpu, cg_i64(c, c->env->ncpus), "");
		LLVMValueRef ix = LLVMBuildSelect(c->b, ok, cpu, cg_i64(c, 0), "");
		LLVMValueRef tmp = cg_buf(c, 8);

		cg_read(c, tmp, 8, NULL, LLVMBuildAdd(c->b, cg_i64(c, e->call.percpu.table),
						      LLVMBuildMul(c->b, ix, cg_i64(c, 8), ""), ""),
			CG_READ_KERNEL, false);
		v = LLVMBuildAdd(c->b, cg_load_int(c, tmp, 0, 8, false),
				 cg_i64(c, e->call.percpu.off), "");
		return LLVMBuildSelect(c->b, ok, v, cg_i64(c, 0), "");
	}
	case DT_F_PATH: {
		/* bpf_d_path(path, buf, size): the path, or a negative error and the buffer's
		 * zeros. */
		uint32_t size = e->type->size;
		LLVMValueRef b = cg_buf(c, size);
		LLVMValueRef args[3] = { a0->type->kind == DT_T_CSTRUCT ? cg_cmem_addr(c, a0)
									 : cg_expr(c, a0),
					 b, cg_i64(c, size) };

		cg_helper(c, BPF_FUNC_d_path, c->i64, args, 3);
		return b;
	}
	case DT_F_SKBOUTPUT: {
		/* bpf_skb_output(skb, perf array, len << 32 | BPF_F_CURRENT_CPU, &hdr, 16): the
		 * packet's first len bytes after the header, on this CPU's buffer (the helper
		 * refuses a len past the packet's, -EFAULT). The offset is userspace's to apply. */
		LLVMValueRef skb = cg_expr(c, e->call.args[1]);
		LLVMValueRef len = cg_expr(c, e->call.args[2]);
		LLVMValueRef hdr = cg_buf_raw(c, sizeof(struct dt_skb_hdr));
		int fd = cg_aux_fd(c, DT_AUX_SKB_OUTPUT, 0, 0);

		cg_store_int(c, hdr, offsetof(struct dt_skb_hdr, event_id), 4,
			     cg_i64(c, e->call.event_id));
		cg_store_int(c, hdr, offsetof(struct dt_skb_hdr, unit), 4, cg_i64(c, c->env->unit));
		cg_store_int(c, hdr, offsetof(struct dt_skb_hdr, ns), 8,
			     helper0(c, BPF_FUNC_ktime_get_boot_ns));
		cg_store_int(c, hdr, offsetof(struct dt_skb_hdr, len), 4, len);
		cg_store_int(c, hdr, offsetof(struct dt_skb_hdr, pad), 4, cg_i64(c, 0));
		LLVMValueRef flags = LLVMBuildOr(
			c->b, LLVMBuildShl(c->b, LLVMBuildAnd(c->b, len, cg_i64(c, 0xffffffff), ""),
					   cg_i64(c, 32), ""),
			cg_i64(c, BPF_F_CURRENT_CPU), "");
		LLVMValueRef args[5] = { skb, cg_map_ref(c, fd), flags, hdr,
					 cg_i64(c, sizeof(struct dt_skb_hdr)) };

		return cg_helper(c, BPF_FUNC_skb_output, c->i64, args, 5);
	}
	case DT_F_SOCKET_COOKIE: {
		/* The pointer as the verifier typed it (a BTF socket), untouched. */
		LLVMValueRef args[1] = { cg_expr(c, a0) };

		return cg_helper(c, BPF_FUNC_get_socket_cookie, c->i64, args, 1);
	}
	case DT_F_UADDR: {
		v = cg_i64(c, e->call.uaddr.addr);
		if (!e->call.uaddr.biased)
			return v;
		if (!is_regs_ctx(c)) {
			cg_fail(c, e->span, "uaddr() of a biased object in this probe type");
			return v;
		}
		/* The load bias: where the probed instruction is now, less its ELF address. */
		return LLVMBuildAdd(c->b, v, LLVMBuildSub(c->b, ctx_load(c, PT_IP, 8, false),
							cg_i64(c, e->call.uaddr.at), ""), "");
	}
	case DT_F_CGROUP_PATH: /* the id; userspace finds its paths */
	case DT_F_STRERROR: case DT_F_SIGNAL_NAME: case DT_F_SYSCALL_NAME:
		/* the number; userspace finds its text */
	case DT_F_UPTR: case DT_F_KPTR: /* the same address; its type says where it points */
		return cg_expr(c, a0);
	case DT_F_WRITE_USER: {
		/* bpf_probe_write_user(dst, src, len): src in the program's memory, len at most
		 * its size; true when it returns 0. */
		const dt_expr *src = e->call.args[1];
		const dt_type *st = src->type;
		uint32_t size = st->kind == DT_T_STR ? st->size
				: st->kind == DT_T_BUF ? st->size - 1 : 8;
		LLVMValueRef dst = cg_expr(c, a0), sv = cg_expr(c, src);
		LLVMValueRef len = cg_expr(c, e->call.args[2]);

		if (!dst || !sv || !len)
			return NULL;
		if (cg_helper_allowed(c, BPF_FUNC_probe_write_user) == 0) {
			cg_limit(c, e->span, "the kernel withholds it under lockdown or without "
				 "CAP_SYS_ADMIN in its initial user namespace",
				 "write_user: this kernel does not let this probe's program call "
				 "bpf_probe_write_user");
			return cg_i64(c, 0);
		}
		if (st->kind == DT_T_STR || st->kind == DT_T_BUF) {
			/* A buffer's bytes follow its length byte. */
			if (st->kind == DT_T_BUF)
				sv = LLVMBuildGEP2(c->b, c->i8, sv, (LLVMValueRef[]){ cg_i64(c, 1) }, 1,
						   "");
		} else {
			LLVMValueRef b = cg_buf_raw(c, 8);

			cg_store_int(c, b, 0, 8, sv);
			sv = b;
		}
		LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntUGT, len, cg_i64(c, size), "");
		len = LLVMBuildSelect(c->b, big, cg_i64(c, size), len, "");
		LLVMValueRef args[3] = { dst, sv, len };
		LLVMValueRef r = cg_helper(c, BPF_FUNC_probe_write_user, c->i64, args, 3);

		return LLVMBuildZExt(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r, cg_i64(c, 0), ""),
				     c->i64, "");
	}
	case DT_F_MACADDR: {
		LLVMValueRef b = cg_buf(c, 6);

		v = cg_expr(c, a0);
		if (!v)
			return NULL;
		if (a0->type->kind == DT_T_STR || a0->type->kind == DT_T_ARRAY)
			cg_memcpy(c, b, 0, v, 0, 6);
		else
			cg_read_ptr(c, b, 6, NULL, v, a0->type, false);
		return b;
	}
	case DT_F_STRFTIME: /* the time; userspace formats it */
		return cg_expr(c, e->call.args[1]);
	case DT_F_BSWAP: {
		uint32_t n = e->type->size;

		v = cg_expr(c, a0);
		if (!v)
			return NULL;
		LLVMValueRef r = cg_i64(c, 0);
		for (uint32_t i = 0; i < n; i++) {
			LLVMValueRef byte = LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, v, cg_i64(c, 8 * i), ""),
							 cg_i64(c, 0xff), "");
			r = LLVMBuildOr(c->b, r, LLVMBuildShl(c->b, byte, cg_i64(c, 8 * (n - 1 - i)), ""),
					"");
		}
		return r;
	}
	case DT_F_KSYM:
		if (!a0)
			break;
		return cg_expr(c, a0);
	case DT_F_USYM:
		if (!a0)
			break;
		v = cg_expr(c, a0);
		return v ? usym_of(c, v) : NULL;
	default:
		return cg_call_action(c, e);
	}
	cg_fail(c, e->span, "%s() without its argument", e->call.name);
	return cg_i64(c, 0);
}

/* &$x: the address of the variable's slot as a plain number. The verifier would track the
 * pointer itself as a stack (or map value) pointer and refuse what scripts do with numbers
 * (multiply, mask, truncate it), so the address goes through memory once with
 * bpf_probe_read_kernel, after which the verifier sees an unknown scalar. */
static LLVMValueRef addr_of_var(cg *c, const dt_expr *e)
{
	LLVMValueRef slot = c->vars[e->un.e->var.sym->id];
	LLVMValueRef tmp = cg_buf_raw(c, 8), out = cg_buf_raw(c, 8);

	cg_store_int(c, tmp, 0, 8, LLVMBuildPtrToInt(c->b, slot, c->i64, ""));
	cg_read(c, out, 8, NULL, LLVMBuildPtrToInt(c->b, tmp, c->i64, ""), CG_READ_KERNEL, false);
	return cg_load_int(c, out, 0, 8, false);
}

static LLVMValueRef expr_of(cg *c, const dt_expr *e);

LLVMValueRef cg_expr(cg *c, const dt_expr *e)
{
	dt_span outer = c->expr_at;
	LLVMValueRef v;

	c->expr_at = e->span; /* what a -k report names */
	v = expr_of(c, e);
	c->expr_at = outer;
	return v;
}

static LLVMValueRef expr_of(cg *c, const dt_expr *e)
{
	if (c->err)
		return cg_is_scalar(e->type) ? cg_i64(c, 0) : cg_buf(c, e->type->size ? e->type->size : 8);
	switch (e->kind) {
	case DT_E_INT:
		return cg_i64(c, e->i.value);
	case DT_E_STR:
		return cg_const_str(c, e->str.s, e->str.len, e->type->size);
	case DT_E_BUILTIN:
		return builtin(c, e);
	case DT_E_VAR: {
		LLVMValueRef slot = c->vars[e->var.sym->id];

		if (cg_is_scalar(e->var.sym->type))
			return LLVMBuildLoad2(c->b, c->i64, slot, "");
		slot = LLVMBuildBitCast(c->b, slot, c->i8p, "");
		/* A tuple read before a later assignment widened the variable (`$a = ("hi", 1)`
		 * then `$a = ("longer", 2)`): this read was typed with the narrower layout, so the
		 * value is converted to it, element by element. */
		if (e->type->kind == DT_T_TUPLE && !dt_type_equal(e->type, e->var.sym->type)) {
			LLVMValueRef b = cg_buf(c, e->type->size);

			cg_store(c, b, 0, e->type, slot, e->var.sym->type);
			return b;
		}
		return slot;
	}
	case DT_E_MAP:
		return map_read(c, e);
	case DT_E_CALL:
		return call(c, e);
	case DT_E_BINOP:
		return binop(c, e);
	case DT_E_UNOP:
		return unop(c, e);
	case DT_E_TERNARY:
		return ternary(c, e);
	case DT_E_FIELD:
		if (e->field.m && cg_is_uprobe_arg(e))
			return cg_arg_reg(c, e->field.off / 8, e->type, e->span);
		return e->field.m ? cg_cmem_value(c, e) : tp_field(c, e);
	case DT_E_DEREF: case DT_E_INDEX:
		return cg_cmem_value(c, e);
	case DT_E_ADDROF:
		return addr_of_var(c, e);
	case DT_E_CAST:
		return cg_cast(c, e);
	case DT_E_TUPLE:
		return tuple(c, e);
	case DT_E_TUPLE_GET: {
		const dt_type *tt = e->tget.base->type;
		LLVMValueRef b = cg_expr(c, e->tget.base);

		if (!b || tt->kind != DT_T_TUPLE || e->tget.index >= tt->tuple.n)
			break;
		LLVMValueRef p = cg_gep(c, b, tt->tuple.offsets[e->tget.index]);
		return cg_is_scalar(e->type) ? cg_load(c, p, e->type) : p;
	}
	case DT_E_BLOCK:
		cg_stmts(c, &e->block.stmts);
		return e->block.value ? cg_expr(c, e->block.value) : cg_i64(c, 0);
	case DT_E_POSPARAM: case DT_E_PARAMCOUNT: case DT_E_SIZEOF: case DT_E_OFFSETOF: case DT_E_IDENT:
	case DT_E_MACRO: case DT_E_TYPEOF:
		break;
	}
	cg_fail(c, e->span, "expression kind %d reached code generation", e->kind);
	return cg_i64(c, 0);
}

/* cg_ir.c — the IR vocabulary the emitters are written in: BPF helper calls (an inttoptr of the
 * helper id, which the BPF backend turns into `call id`), map references by fd (llvm.bpf.pseudo,
 * an ld_imm64 BPF_PSEUDO_MAP_FD the kernel resolves at load time, so nothing needs relocating),
 * buffers that live on the 512-byte stack while they fit and in the per-CPU scratch map beyond,
 * sized integer loads and stores, loss counters and ring-buffer events. Everything the verifier
 * cares about is settled here once: buffers are 8-aligned and zeroed before helpers read them,
 * every map lookup result is null-checked before use. */
#include "codegen/cg_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <string.h>

static void report(cg *c, dt_span at, const char *prefix, const char *hint, const char *fmt,
		   va_list ap)
{
	char msg[512];

	if (c->err)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	c->err = -EINVAL;
	if (c->diags) {
		dt_diag(c->diags, DT_DIAG_ERROR, at, "%s%s", prefix, msg);
		dt_diag_hint(c->diags, "%s", hint);
	}
}

void cg_fail(cg *c, dt_span at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, at, "internal code generation error: ",
	       "this is a dwarftrace bug; please report it with the script", fmt, ap);
	va_end(ap);
}

void cg_limit(cg *c, dt_span at, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, at, "", hint, fmt, ap);
	va_end(ap);
}

LLVMValueRef cg_i64(cg *c, uint64_t v)
{
	return LLVMConstInt(c->i64, v, false);
}

LLVMValueRef cg_i32(cg *c, uint32_t v)
{
	return LLVMConstInt(c->i32, v, false);
}

LLVMBasicBlockRef cg_block(cg *c, const char *name)
{
	return LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
}

LLVMValueRef cg_helper(cg *c, int id, LLVMTypeRef ret, LLVMValueRef *args, unsigned n)
{
	LLVMTypeRef at[8];
	LLVMTypeRef fty;
	LLVMValueRef fp;

	for (unsigned i = 0; i < n && i < 8; i++)
		at[i] = LLVMTypeOf(args[i]);
	fty = LLVMFunctionType(ret, at, n, false);
	fp = LLVMConstIntToPtr(cg_i64(c, (uint64_t)id), LLVMPointerType(fty, 0));
	return LLVMBuildCall2(c->b, fty, fp, args, n, "");
}

LLVMValueRef cg_map_ref(cg *c, int fd)
{
	LLVMValueRef args[2] = { cg_i64(c, 1), cg_i64(c, (uint64_t)fd) };
	LLVMValueRef v = LLVMBuildCall2(c->b, c->pseudo_ty, c->pseudo_fn, args, 2, "");

	return LLVMBuildIntToPtr(c->b, v, c->i8p, "map");
}

/* The session's callbacks (dt_cg_env) are called from every thread a large compile runs in
 * (codegen.c's jobs), one at a time: they look up and note the session's state. */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

int cg_aux_fd(cg *c, dt_aux_map which, dt_stack_kind kind, uint32_t depth)
{
	int fd = -ENOENT;

	if (c->env->aux_fd) {
		pthread_mutex_lock(&env_lock);
		fd = c->env->aux_fd(c->env->ctx, which, kind, depth, c->ptype);
		pthread_mutex_unlock(&env_lock);
	}
	if (fd < 0 && !c->err) {
		/* Everything was prepared from dt_cg_resources_of before codegen: a map missing now
		 * is a rule missing there. */
		static const char *const names[] = { "events", "stats", "scratch", "stacks",
						     "walker programs", "continuations",
						     "walker state", "xprobe results",
						     "seen processes", "exec generations",
						     "chained parts", "probe frames" };

		dt_diag(c->diags, DT_DIAG_ERROR, c->probe ? c->probe->span : (dt_span){ 0, 0 },
			"internal error: code generation needs the %s map, which was not prepared "
			"before it (%s; this is a dwarftrace bug, please report it)",
			(unsigned)which < DT_ARRAY_SIZE(names) ? names[which] : "auxiliary",
			dt_strerror(-fd));
		c->err = fd;
	}
	return fd < 0 ? 0 : fd;
}

int cg_script_map_fd(cg *c, const dt_map_sym *m)
{
	int fd = -ENOENT;

	if (c->env->map_fd) {
		pthread_mutex_lock(&env_lock);
		fd = c->env->map_fd(c->env->ctx, m);
		pthread_mutex_unlock(&env_lock);
	}
	if (fd < 0 && !c->err) {
		dt_diag(c->diags, DT_DIAG_ERROR, m->decl, "cannot compile: map %s is not available: %s",
			m->name, dt_strerror(-fd));
		c->err = fd;
	}
	return fd < 0 ? 0 : fd;
}

int cg_helper_allowed(cg *c, int helper)
{
	int rc = -1;

	if (c->env->helper_allowed) {
		pthread_mutex_lock(&env_lock);
		rc = c->env->helper_allowed(c->env->ctx, c->ptype, helper);
		pthread_mutex_unlock(&env_lock);
	}
	return rc;
}

/* Allocas go to the entry block so that SROA/mem2reg see them and each gets one frame slot. */
static LLVMValueRef entry_alloca(cg *c, LLVMTypeRef t, const char *name)
{
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(c->ctx);
	LLVMValueRef v;

	LLVMPositionBuilderAtEnd(eb, c->allocas);
	v = LLVMBuildAlloca(eb, t, name);
	LLVMSetAlignment(v, 8);
	LLVMDisposeBuilder(eb);
	return v;
}

LLVMValueRef cg_alloca_i64(cg *c)
{
	c->stack_used += 8;
	return entry_alloca(c, c->i64, "v");
}

LLVMValueRef cg_alloca_stack(cg *c, uint32_t size)
{
	uint32_t sz = DT_ALIGN(size ? size : 1, 8);

	c->stack_used += sz;
	return LLVMBuildBitCast(c->b, entry_alloca(c, LLVMArrayType(c->i8, sz), "stk"), c->i8p, "");
}

LLVMValueRef cg_buf_raw(cg *c, uint32_t size)
{
	uint32_t sz = DT_ALIGN(size ? size : 1, 8);

	for (size_t i = c->pool_from; i < c->slots.n; i++) {
		struct cg_slot *sl = &c->slots.v[i];

		if (!sl->busy && sl->size == sz) {
			sl->busy = true;
			return LLVMBuildBitCast(c->b, sl->a, c->i8p, "");
		}
	}
	/* A buffer that string loops may walk (past CG_UNROLL_BYTES) goes to scratch: their
	 * bpf_loop callbacks' frames add to the caller's stack (512 bytes for all, as Linux 6.1
	 * counts it). */
	if (c->stack_used + sz <= c->stack_budget && sz <= CG_UNROLL_BYTES) {
		LLVMValueRef a = entry_alloca(c, LLVMArrayType(c->i8, sz), "buf");
		struct cg_slot sl = { .a = a, .size = sz, .busy = true };

		DT_VEC_PUSH(&c->slots, sl);
		c->stack_used += sz;
		return LLVMBuildBitCast(c->b, a, c->i8p, "");
	}
	/* Offsets run on across the scratch map's values; a buffer never spans two. */
	dt_cg_scratch sh = dt_cg_scratch_shape(c->prog->strlen);
	uint32_t at = c->scratch_used;

	if (at % sh.entry_size + sz > sh.entry_size)
		at = DT_ALIGN(at, sh.entry_size);
	if (at + sz > sh.entry_size * sh.entries) {
		/* lang bounds each value, key and event, not how many one statement builds: a
		 * statement that builds too many is the script's to split, not a bug. */
		cg_limit(c, c->at, "split it into several statements", "this statement builds more "
			 "than %u bytes of values (strings, keys, tuples) at once",
			 sh.entry_size * sh.entries);
		return LLVMBuildBitCast(c->b, entry_alloca(c, c->i64, "x"), c->i8p, "");
	}
	/* The scratch base is looked up once in the prologue: every use sees the null-checked
	 * map value pointer. */
	LLVMValueRef base = cg_prologue_ptr(c, DT_AUX_SCRATCH, at / sh.entry_size);
	LLVMValueRef p = cg_gep(c, base, at % sh.entry_size);
	c->scratch_used = at + sz;
	return p;
}

void cg_release_temps(cg *c)
{
	for (size_t i = c->pool_from; i < c->slots.n; i++)
		c->slots.v[i].busy = false;
	c->scratch_used = c->scratch_base;
}

void cg_pin_temps(cg *c)
{
	c->pool_from = c->slots.n;
	c->scratch_base = c->scratch_used;
}

LLVMValueRef cg_buf(cg *c, uint32_t size)
{
	LLVMValueRef p = cg_buf_raw(c, size);

	cg_memset0(c, p, DT_ALIGN(size ? size : 1, 8));
	return p;
}

LLVMValueRef cg_gep(cg *c, LLVMValueRef p, uint32_t off)
{
	LLVMValueRef idx;

	if (!off)
		return p;
	idx = cg_i64(c, off);
	return LLVMBuildInBoundsGEP2(c->b, c->i8, p, &idx, 1, "");
}

/* Explicit stores rather than llvm.memset: the BPF backend only expands memset/memcpy inline up
 * to a limit that depends on alignment and turns the rest into a call it cannot emit. */
/* A bulk copy by the kernel's read helper: dst gets `size` bytes at src, or zeros where src is
 * NULL (the helper zeroes its destination when the read fails, and the kernel refuses a read
 * at 0 without touching it). */
static void bulk_read(cg *c, LLVMValueRef dst, LLVMValueRef src, uint32_t size)
{
	LLVMValueRef args[3] = { dst, cg_i64(c, size),
				 src ? LLVMBuildPtrToInt(c->b, src, c->i64, "") : cg_i64(c, 0) };

	cg_helper(c, BPF_FUNC_probe_read_kernel, c->i64, args, 3);
}

void cg_memset0(cg *c, LLVMValueRef p, uint32_t size)
{
	uint32_t off = 0;

	if (size > CG_BULK_BYTES) {
		bulk_read(c, p, NULL, size);
		return;
	}
	for (; off + 8 <= size; off += 8)
		cg_store_int(c, p, off, 8, cg_i64(c, 0));
	for (; off < size; off++)
		cg_store_int(c, p, off, 1, cg_i64(c, 0));
}

void cg_memcpy(cg *c, LLVMValueRef dst, uint32_t doff, LLVMValueRef src, uint32_t soff,
	       uint32_t size)
{
	uint32_t off = 0;

	if (size > CG_BULK_BYTES) {
		bulk_read(c, cg_gep(c, dst, doff), cg_gep(c, src, soff), size);
		return;
	}
	/* The widest word both sides are aligned for: the verifier refuses misaligned stack
	 * access, and the offsets (from 8-aligned bases) are all we know about alignment. */
	while (off < size) {
		uint32_t w = 8;

		while (w > 1 && ((doff + off) % w || (soff + off) % w || off + w > size))
			w /= 2;
		cg_store_int(c, dst, doff + off, w, cg_load_int(c, src, soff + off, w, false));
		off += w;
	}
}

static LLVMTypeRef int_type(cg *c, uint32_t size)
{
	switch (size) {
	case 1: return c->i8;
	case 2: return c->i16;
	case 4: return c->i32;
	default: return c->i64;
	}
}

static unsigned natural_align(uint32_t off, uint32_t size)
{
	unsigned a = size >= 8 ? 8 : size;

	while (a > 1 && off % a)
		a /= 2;
	return a ? a : 1;
}

LLVMValueRef cg_load_int(cg *c, LLVMValueRef p, uint32_t off, uint32_t size, bool is_signed)
{
	LLVMTypeRef t = int_type(c, size);
	LLVMValueRef q = LLVMBuildBitCast(c->b, cg_gep(c, p, off), LLVMPointerType(t, 0), "");
	LLVMValueRef v = LLVMBuildLoad2(c->b, t, q, "");

	LLVMSetAlignment(v, natural_align(off, size));
	if (t == c->i64)
		return v;
	return is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

/* A load from the program's context. The verifier takes a context access only as one
 * instruction at the context pointer itself plus a constant ("dereference of modified ctx ptr"
 * otherwise), and LLVM hoists and shares `ctx + off` between the loads of a large body (a
 * rawtracepoint's args.x read in 400 printfs was refused). Written as inline assembly, the
 * address cannot be taken apart; LLVM 14 has no preserve_static_offset to say the same. Equal
 * loads may still be merged, which keeps their value, not the address, in a register. */
LLVMValueRef cg_ctx_load(cg *c, uint32_t off, uint32_t size, bool is_signed)
{
	static const char *const width[9] = { [1] = "u8", [2] = "u16", [4] = "u32", [8] = "u64" };
	char text[64];

	if (size > 8 || !width[size])
		return cg_load_int(c, c->ctxp, off, size, is_signed);
	snprintf(text, sizeof(text), "$0 = *(%s *)($1 + %u)", width[size], off);
	LLVMTypeRef at[1] = { c->i8p };
	LLVMTypeRef fty = LLVMFunctionType(c->i64, at, 1, false);
	char cons[] = "=r,r";
	LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), false,
					   false, LLVMInlineAsmDialectATT, false);
	LLVMValueRef args[1] = { LLVMBuildPointerCast(c->b, c->ctxp, c->i8p, "") };
	LLVMValueRef v = LLVMBuildCall2(c->b, fty, fn, args, 1, "");

	if (size == 8 || !is_signed)
		return v;
	/* The load zero-extends; a signed field is sign-extended from its width. */
	LLVMTypeRef t = int_type(c, size);
	return LLVMBuildSExt(c->b, LLVMBuildTrunc(c->b, v, t, ""), c->i64, "");
}

void cg_store_int(cg *c, LLVMValueRef p, uint32_t off, uint32_t size, LLVMValueRef v)
{
	LLVMTypeRef t = int_type(c, size);
	LLVMValueRef q = LLVMBuildBitCast(c->b, cg_gep(c, p, off), LLVMPointerType(t, 0), "");
	LLVMValueRef s;

	if (LLVMTypeOf(v) != t)
		v = LLVMBuildTrunc(c->b, v, t, "");
	s = LLVMBuildStore(c->b, v, q);
	LLVMSetAlignment(s, natural_align(off, size));
}

void cg_br_nonnull(cg *c, LLVMValueRef p, LLVMBasicBlockRef t, LLVMBasicBlockRef f)
{
	LLVMValueRef nn = LLVMBuildIsNotNull(c->b, p, "");

	LLVMBuildCondBr(c->b, nn, t, f);
}

void cg_return(cg *c)
{
	cg_return_value(c, cg_i64(c, 0));
}

void cg_return_value(cg *c, LLVMValueRef v)
{
	if (c->for_ret) {
		/* In a for loop's body: tell the caller (the flag, then the value), which returns
		 * in turn, and stop the loop. */
		cg_store_int(c, c->for_ret, 0, 8, cg_i64(c, 1));
		cg_store_int(c, c->for_ret, 8, 8, v);
		LLVMBuildRet(c->b, cg_i64(c, 1));
		LLVMPositionBuilderAtEnd(c->b, cg_block(c, "dead"));
		return;
	}
	LLVMBuildRet(c->b, v);
	LLVMPositionBuilderAtEnd(c->b, cg_block(c, "dead"));
}

LLVMValueRef cg_map_lookup(cg *c, LLVMValueRef map, LLVMValueRef key)
{
	LLVMValueRef args[2] = { map, key };

	return cg_helper(c, BPF_FUNC_map_lookup_elem, c->i8p, args, 2);
}

LLVMValueRef cg_key32(cg *c, uint32_t v)
{
	LLVMValueRef p;

	/* One stack slot per function serves every array-map key: it is written right before
	 * each use, and it must not live in scratch (the scratch lookup itself needs a key). */
	if (!c->key32) {
		c->key32 = entry_alloca(c, c->i64, "key32");
		c->stack_used += 8;
	}
	p = LLVMBuildBitCast(c->b, c->key32, c->i8p, "");
	cg_store_int(c, p, 0, 4, cg_i64(c, v));
	return p;
}

LLVMValueRef cg_prologue_ptr(cg *c, dt_aux_map which, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < c->npro; i++)
		if (c->pro[i].which == which && c->pro[i].key == key)
			break;
	if (i == c->npro) {
		if (c->npro == DT_ARRAY_SIZE(c->pro)) {
			cg_fail(c, c->probe->span, "more than %zu prologue lookups",
				DT_ARRAY_SIZE(c->pro));
			return LLVMConstNull(c->i8p);
		}
		c->pro[c->npro++] = (struct cg_pro){ which, key, entry_alloca(c, c->i8p, "pro") };
	}
	/* A volatile load, each use its own: otherwise the slot becomes one register value, and
	 * LLVM merges the same address computed in two statements (the same scratch offset,
	 * reused) into one long-lived pointer. Twenty of those, spilled across the helper calls
	 * between (BPF keeps only four registers across a call), overflowed the 512-byte stack;
	 * a reload is one instruction where it is used. */
	LLVMValueRef v = LLVMBuildLoad2(c->b, c->i8p, c->pro[i].slot, "");

	LLVMSetVolatile(v, true);
	return v;
}

void cg_emit_prologue(cg *c)
{
	for (uint32_t i = 0; i < c->npro; i++) {
		int fd = cg_aux_fd(c, c->pro[i].which, 0, 0);
		LLVMValueRef p = cg_map_lookup(c, cg_map_ref(c, fd), cg_key32(c, c->pro[i].key));
		LLVMBasicBlockRef ok = cg_block(c, "pro.ok"), none = cg_block(c, "pro.none");

		LLVMBuildStore(c->b, p, c->pro[i].slot);
		cg_br_nonnull(c, p, ok, none);
		LLVMPositionBuilderAtEnd(c->b, none);
		LLVMBuildRet(c->b, cg_i64(c, 0));
		LLVMPositionBuilderAtEnd(c->b, ok);
	}
	LLVMBuildBr(c->b, c->body);
}

/* A counter's value is looked up once per function (cg_prologue_ptr), not at every place that
 * may count: a lookup is a helper call the verifier inlines by patching the program, which
 * costs time in proportion to the program's size, and a map update is in most statements. */
void cg_stat_inc(cg *c, enum dt_stat stat)
{
	LLVMValueRef v = cg_prologue_ptr(c, DT_AUX_STATS, stat);

	cg_store_int(c, v, 0, 8, LLVMBuildAdd(c->b, cg_load_int(c, v, 0, 8, false),
					       cg_i64(c, 1), ""));
}

void cg_count_if_negative(cg *c, LLVMValueRef r, enum dt_stat stat)
{
	LLVMBasicBlockRef bad = cg_block(c, "st.count"), ok = cg_block(c, "st.ok");

	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), ""), bad, ok);
	LLVMPositionBuilderAtEnd(c->b, bad);
	cg_stat_inc(c, stat);
	LLVMBuildBr(c->b, ok);
	LLVMPositionBuilderAtEnd(c->b, ok);
}

void cg_helper_check(cg *c, LLVMValueRef r, int id, bool is_ptr, uint32_t level)
{
	if (c->env->helper_check < level)
		return;
	dt_span at = c->expr_at.len ? c->expr_at : c->at;
	LLVMBasicBlockRef bad = cg_block(c, "hc.bad"), ok = cg_block(c, "hc.ok");
	LLVMValueRef failed = is_ptr ? LLVMBuildIsNull(c->b, r, "")
				     : LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), "");

	LLVMBuildCondBr(c->b, failed, bad, ok);
	LLVMPositionBuilderAtEnd(c->b, bad);
	LLVMValueRef ev = cg_event_new(c, DT_EV_HELPER_ERROR, (uint32_t)id,
				       sizeof(struct dt_ev_helper_error));
	uint32_t p = CG_EV_PAYLOAD;

	cg_store_int(c, ev, p + offsetof(struct dt_ev_helper_error, retcode), 8,
		     is_ptr ? cg_i64(c, 0) : r);
	cg_store_int(c, ev, p + offsetof(struct dt_ev_helper_error, off), 4, cg_i64(c, at.off));
	cg_store_int(c, ev, p + offsetof(struct dt_ev_helper_error, len), 4, cg_i64(c, at.len));
	cg_event_output(c, ev, sizeof(struct dt_ev_helper_error));
	LLVMBuildBr(c->b, ok);
	LLVMPositionBuilderAtEnd(c->b, ok);
}

void cg_runtime_error(cg *c, uint32_t id)
{
	dt_span at = c->expr_at.len ? c->expr_at : c->at;
	LLVMValueRef ev = cg_event_new(c, DT_EV_RUNTIME_ERROR, id,
				       sizeof(struct dt_ev_runtime_error));
	uint32_t p = CG_EV_PAYLOAD;

	cg_store_int(c, ev, p + offsetof(struct dt_ev_runtime_error, off), 4, cg_i64(c, at.off));
	cg_store_int(c, ev, p + offsetof(struct dt_ev_runtime_error, len), 4, cg_i64(c, at.len));
	cg_event_output(c, ev, sizeof(struct dt_ev_runtime_error));
}

LLVMValueRef cg_map_update(cg *c, LLVMValueRef map, LLVMValueRef key, LLVMValueRef val)
{
	LLVMValueRef args[4] = { map, key, val, cg_i64(c, BPF_ANY) };
	LLVMValueRef r = cg_helper(c, BPF_FUNC_map_update_elem, c->i64, args, 4);

	cg_count_if_negative(c, r, DT_STAT_MAP_FULL);
	return r;
}

LLVMValueRef cg_map_delete(cg *c, LLVMValueRef map, LLVMValueRef key)
{
	LLVMValueRef args[2] = { map, key };

	return cg_helper(c, BPF_FUNC_map_delete_elem, c->i64, args, 2);
}

LLVMValueRef cg_const_str(cg *c, const char *s, uint32_t len, uint32_t size)
{
	LLVMValueRef p = cg_buf_raw(c, size);
	uint32_t sz = DT_ALIGN(size ? size : 1, 8);

	/* Whole words at a time: the string bytes packed little-endian, zeros after the end. */
	for (uint32_t off = 0; off < sz; off += 8) {
		uint64_t w = 0;

		for (uint32_t i = 0; i < 8; i++) {
			uint32_t k = off + i;

			if (k < len && k + 1 < size)
				w |= (uint64_t)(unsigned char)s[k] << (8 * i);
		}
		cg_store_int(c, p, off, 8, cg_i64(c, w));
	}
	return p;
}

LLVMValueRef cg_event_new(cg *c, uint32_t kind, uint32_t id, uint32_t payload)
{
	LLVMValueRef p = cg_buf(c, CG_EV_PAYLOAD + payload);

	cg_store_int(c, p, offsetof(struct dt_event_hdr, kind), 4, cg_i64(c, kind));
	cg_store_int(c, p, offsetof(struct dt_event_hdr, id), 4, cg_i64(c, id));
	return p;
}

void cg_event_output(cg *c, LLVMValueRef buf, uint32_t payload)
{
	int fd = cg_aux_fd(c, DT_AUX_EVENTS, 0, 0);
	LLVMValueRef args[4] = { cg_map_ref(c, fd), buf, cg_i64(c, CG_EV_PAYLOAD + payload),
				 cg_i64(c, 0) };

	cg_count_if_negative(c, cg_helper(c, BPF_FUNC_ringbuf_output, c->i64, args, 4),
			     DT_STAT_EVENT_LOST);
}

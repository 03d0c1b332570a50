/* cg_cmem.c — C values in memory: casts, `*p`, `p->f`, `s.f`, `p[i]`, `a[i]` and the one reader
 * of memory the program does not own (bpf_probe_read_kernel / _user by the address space the
 * checker gave the pointer; DT_AS_NONE is the probe's own space). A struct or array is not read
 * until it is used as a value: a chain like `curtask->real_parent->comm` reads one pointer and
 * then the 16 bytes of comm, never the structs around them. So a designator (field, deref,
 * index) becomes a location first — an address, or an offset into a buffer when the struct is
 * already a value (a $var or map holding it) — and is read at the end with its type. */
#include "codegen/cg_internal.h"

#include <string.h>

typedef struct cloc {
	LLVMValueRef p; /* i64 address, or the i8* buffer when `buf` */
	uint32_t off;   /* buffer only: where the value starts in it */
	bool buf;
	bool user;      /* address only: read with bpf_probe_read_user */
} cloc;

static bool space_is_user(cg *c, dt_addrspace as)
{
	if (as != DT_AS_NONE)
		return as == DT_AS_USER;
	return c->attach->provider == DT_P_UPROBE || c->attach->provider == DT_P_URETPROBE ||
	       c->attach->provider == DT_P_USDT;
}

void cg_read(cg *c, LLVMValueRef dst, uint32_t size, LLVMValueRef len, LLVMValueRef addr,
	     cg_space sp, bool str)
{
	bool user = sp == CG_READ_USER || sp == CG_READ_USER_FIRST;
	int uh = str ? BPF_FUNC_probe_read_user_str : BPF_FUNC_probe_read_user;
	int kh = str ? BPF_FUNC_probe_read_kernel_str : BPF_FUNC_probe_read_kernel;
	LLVMValueRef args[3] = { dst, len ? len : cg_i64(c, size), addr };
	LLVMValueRef r = cg_helper(c, user ? uh : kh, c->i64, args, 3);

	if (sp == CG_READ_USER_FIRST || sp == CG_READ_KERNEL_FIRST) {
		/* The other space after a fault. A string left empty when both fault (the store is
		 * overwritten by a read that succeeds). */
		LLVMBasicBlockRef retry = cg_block(c, "rd.retry"), done = cg_block(c, "rd.done");

		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, r, cg_i64(c, 0), ""), retry,
				done);
		LLVMPositionBuilderAtEnd(c->b, retry);
		if (str)
			cg_store_int(c, dst, 0, 1, cg_i64(c, 0));
		r = cg_helper(c, user ? kh : uh, c->i64, args, 3);
		cg_count_if_negative(c, r, DT_STAT_READ_FAIL);
		/* Neither space: bpftrace's name for a read from either is probe_read(_str). */
		cg_helper_check(c, r, str ? BPF_FUNC_probe_read_str : BPF_FUNC_probe_read, false, 2);
		LLVMBuildBr(c->b, done);
		LLVMPositionBuilderAtEnd(c->b, done);
		return;
	}
	/* The helper zeroes dst when the read faults: the value reads as 0, and it is counted. */
	cg_count_if_negative(c, r, DT_STAT_READ_FAIL);
	cg_helper_check(c, r, user ? uh : kh, false, 2);
}

bool cg_is_uprobe_arg(const dt_expr *e)
{
	const dt_expr *b = e->field.base;
	return b->kind == DT_E_BUILTIN && b->builtin.id == DT_B_ARGS && b->type &&
	       b->type->kind == DT_T_CSTRUCT;
}

/* Field, deref and index expressions name memory; everything else is a value. */
static bool designates(const dt_expr *e)
{
	return (e->kind == DT_E_FIELD && e->field.m && !cg_is_uprobe_arg(e)) ||
	       e->kind == DT_E_DEREF || e->kind == DT_E_INDEX;
}

static cloc loc_of(cg *c, const dt_expr *e);

/* Where the struct or array e lives: its memory when it designates some, else the buffer its
 * value was computed into. */
static cloc aggregate_loc(cg *c, const dt_expr *e)
{
	if (designates(e))
		return loc_of(c, e);
	return (cloc){ .p = cg_expr(c, e), .buf = true };
}

static cloc loc_add(cg *c, cloc l, uint32_t off)
{
	if (l.buf)
		l.off += off;
	else if (off)
		l.p = LLVMBuildAdd(c->b, l.p, cg_i64(c, off), "");
	return l;
}

static cloc ptr_loc(cg *c, const dt_expr *ptr)
{
	return (cloc){ .p = cg_expr(c, ptr), .user = space_is_user(c, ptr->type->ptr.as) };
}

static cloc loc_of(cg *c, const dt_expr *e)
{
	switch (e->kind) {
	case DT_E_FIELD:
		if (e->field.base->type->kind == DT_T_PTR)
			return loc_add(c, ptr_loc(c, e->field.base), e->field.off);
		return loc_add(c, aggregate_loc(c, e->field.base), e->field.off);
	case DT_E_DEREF:
		return ptr_loc(c, e->un.e);
	case DT_E_INDEX: {
		const dt_type *bt = e->index.base->type;
		uint32_t elsize = bt->kind == DT_T_PTR ? bt->ptr.to->size
				  : bt->kind == DT_T_STR ? 1 : bt->array.elem->size;
		const dt_expr *ix = e->index.index;
		cloc l = bt->kind == DT_T_PTR ? ptr_loc(c, e->index.base)
					      : aggregate_loc(c, e->index.base);

		if (l.buf) {
			/* The checker allows only constant indices into a copied array. */
			if (ix->kind != DT_E_INT) {
				cg_fail(c, e->span, "variable index into an array value");
				return l;
			}
			return loc_add(c, l, (uint32_t)ix->i.value * elsize);
		}
		LLVMValueRef i = cg_expr(c, ix);

		if (cg_index_may_warn(e)) {
			/* Past the end: a warning, and the read all the same, as bpftrace does. */
			LLVMBasicBlockRef oob = cg_block(c, "idx.oob"), ok = cg_block(c, "idx.ok");

			LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntUGE, i,
							    cg_i64(c, bt->array.n), ""), oob, ok);
			LLVMPositionBuilderAtEnd(c->b, oob);
			cg_runtime_error(c, DT_RTE_ARRAY_ACCESS_OOB);
			LLVMBuildBr(c->b, ok);
			LLVMPositionBuilderAtEnd(c->b, ok);
		}
		l.p = LLVMBuildAdd(c->b, l.p, LLVMBuildMul(c->b, i, cg_i64(c, elsize), ""), "");
		return l;
	}
	default:
		cg_fail(c, e->span, "expression kind %d is not in memory", e->kind);
		return (cloc){ .p = cg_i64(c, 0) };
	}
}

bool cg_index_may_warn(const dt_expr *e)
{
	return e->kind == DT_E_INDEX && e->index.base->type &&
	       e->index.base->type->kind == DT_T_ARRAY && e->index.base->type->array.n &&
	       e->index.index->kind != DT_E_INT;
}

LLVMValueRef cg_cmem_addr(cg *c, const dt_expr *e)
{
	cloc l = loc_of(c, e);

	if (l.buf) {
		cg_fail(c, e->span, "the address of a copied value");
		return cg_i64(c, 0);
	}
	return l.p;
}

/* The bytes [l, l+size) in a buffer of `bufsize` bytes (zero-padded). */
static LLVMValueRef fetch(cg *c, cloc l, uint32_t size, uint32_t bufsize)
{
	/* A whole struct is written by the read (zeros on a fault): no need to clear it first,
	 * which for a large struct would be a memset BPF cannot call. */
	LLVMValueRef b = size == bufsize ? cg_buf_raw(c, bufsize) : cg_buf(c, bufsize);

	if (l.buf)
		cg_memcpy(c, b, 0, l.p, l.off, size);
	else
		cg_read(c, b, size, NULL, l.p, l.user ? CG_READ_USER : CG_READ_KERNEL, false);
	return b;
}

static uint32_t pow2_at_least(uint32_t n)
{
	return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : 8;
}

/* A bitfield: the bytes holding it as one little-endian word, shifted and masked (and
 * sign-extended for a signed field). */
static LLVMValueRef bitfield(cg *c, cloc l, const dt_member *m)
{
	uint32_t bytes = pow2_at_least((m->bit_off + m->bit_size + 7) / 8);
	LLVMValueRef b = fetch(c, l, bytes, 8);
	LLVMValueRef v = cg_load_int(c, b, 0, bytes, false);

	v = LLVMBuildShl(c->b, v, cg_i64(c, 64 - m->bit_off - m->bit_size), "");
	if (m->type->is_signed)
		return LLVMBuildAShr(c->b, v, cg_i64(c, 64 - m->bit_size), "");
	return LLVMBuildLShr(c->b, v, cg_i64(c, 64 - m->bit_size), "");
}

/* A byte of a string value at a run-time index, 0 past the string's buffer (bpftrace's current
 * `$s[i]`). The index is clamped before the load, so the verifier sees it inside the buffer. */
static LLVMValueRef str_byte_at(cg *c, const dt_expr *e)
{
	uint32_t n = e->index.base->type->size;
	cloc l = aggregate_loc(c, e->index.base);
	LLVMValueRef i = cg_expr(c, e->index.index);
	LLVMValueRef in = LLVMBuildICmp(c->b, LLVMIntULT, i, cg_i64(c, n), "");
	LLVMValueRef at = LLVMBuildAdd(c->b, LLVMBuildSelect(c->b, in, i, cg_i64(c, 0), ""),
				       cg_i64(c, l.off), "");
	LLVMValueRef v = LLVMBuildLoad2(c->b, c->i8, LLVMBuildInBoundsGEP2(c->b, c->i8, l.p, &at,
									1, ""), "");

	return LLVMBuildSelect(c->b, in, LLVMBuildSExt(c->b, v, c->i64, ""), cg_i64(c, 0), "");
}

LLVMValueRef cg_cmem_value(cg *c, const dt_expr *e)
{
	const dt_type *t = e->type;

	if (e->kind == DT_E_INDEX && e->index.base->type->kind == DT_T_STR &&
	    e->index.index->kind != DT_E_INT)
		return str_byte_at(c, e);
	cloc l = loc_of(c, e);

	if (e->kind == DT_E_FIELD && e->field.m->bit_size)
		return bitfield(c, l, e->field.m);
	switch (t->kind) {
	case DT_T_INT: case DT_T_PTR: {
		if (l.buf)
			return cg_load_int(c, l.p, l.off, t->size, t->is_signed);
		LLVMValueRef b = fetch(c, l, t->size, 8);

		return cg_load_int(c, b, 0, t->size, t->is_signed);
	}
	case DT_T_STR: {
		/* A char array read as a string: its bytes, and the NUL the type has room for. */
		LLVMValueRef b = fetch(c, l, t->size - 1, t->size);

		cg_store_int(c, b, t->size - 1, 1, cg_i64(c, 0));
		return b;
	}
	default:
		/* A struct, an array, or (through &$x) any value a $variable holds: its bytes. */
		if (!t->size) {
			cg_fail(c, e->span, "reading a value of kind %d from memory", t->kind);
			return cg_i64(c, 0);
		}
		if (cg_is_scalar(t)) {
			if (l.buf)
				return cg_load_int(c, l.p, l.off, t->size, false);
			return cg_load_int(c, fetch(c, l, t->size, 8), 0, t->size, false);
		}
		return fetch(c, l, t->size, t->size);
	}
}

LLVMValueRef cg_cast(cg *c, const dt_expr *e)
{
	LLVMValueRef v = cg_expr(c, e->cast.e);
	const dt_type *t = e->type, *from = e->cast.e->type;

	if (!v)
		return v;
	if (t->kind == DT_T_BOOL)
		return LLVMBuildZExt(c->b, LLVMBuildICmp(c->b, LLVMIntNE, v, cg_i64(c, 0), ""), c->i64,
				     "");
	if (t->kind == DT_T_ARRAY && from->kind == DT_T_INT) {
		/* The integer's bytes as they are in memory (little-endian). */
		LLVMValueRef b = cg_buf(c, t->size);

		cg_store_int(c, b, 0, from->size, v);
		return b;
	}
	if (t->kind == DT_T_INT && from->kind == DT_T_ARRAY)
		return cg_load_int(c, v, 0, t->size, t->is_signed);
	/* The checker took these bytes as an array (check_cast): a char array read as a
	 * string, a string's own bytes, pton()'s address after its length byte. */
	if (t->kind == DT_T_INT && from->kind == DT_T_STR)
		return cg_load_int(c, v, 0, t->size, t->is_signed);
	if (t->kind == DT_T_INT && from->kind == DT_T_BUF)
		return cg_load_int(c, v, 1, t->size, t->is_signed);
	if (t->kind == DT_T_ARRAY && (from->kind == DT_T_STR || from->kind == DT_T_ARRAY))
		return v;
	if ((t->kind == DT_T_STR || t->kind == DT_T_BUF) && t->size != from->size) {
		/* Resized: cut (a string keeps its NUL) or zero-padded. */
		LLVMValueRef b = cg_buf(c, t->size);

		cg_memcpy(c, b, 0, v, 0, DT_MIN(t->size, from->size));
		if (t->kind == DT_T_STR) {
			cg_store_int(c, b, t->size - 1, 1, cg_i64(c, 0));
		} else if (t->size < from->size) {
			/* A buffer's first byte is its length: at most what is left. */
			LLVMValueRef n = cg_load_int(c, b, 0, 1, false);
			LLVMValueRef max = cg_i64(c, t->size - 1);

			n = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, n, max, ""), max,
					    n, "");
			cg_store_int(c, b, 0, 1, n);
		}
		return b;
	}
	if (t->kind != DT_T_INT || t->size >= 8)
		return v;
	/* (uint8)x keeps the low byte; the signedness of the cast extends it back to 64 bits. */
	v = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->ctx, t->size * 8), "");
	return t->is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

uint32_t cg_ptr_step(const dt_type *t)
{
	return t && t->kind == DT_T_PTR && t->ptr.to && t->ptr.to->size ? t->ptr.to->size : 1;
}

/* cfi.c — DWARF call-frame information (.eh_frame and .debug_frame) to compact unwind rows. A
 * hand-written parser rather than libdw's dwarf_cfi_*: we need every row of every FDE (libdw answers
 * one pc at a time), at millions of rows per second, and a clear error instead of a crash for any
 * malformed input (the fuzzer feeds it garbage). Each FDE's CFA program is run once; every row is
 * reduced to the three things the BPF walker recovers on x86-64 (CFA, rbp, return address), the
 * rule is interned in a set shared by all objects, and rows that do not change the rule vanish. */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- rule set */

static uint32_t rule_hash(const struct dt_unwind_rule *r)
{
	uint64_t a, b;

	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	a = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (uint32_t)(a >> 32);
}

void dt_ruleset_init(dt_ruleset *rs)
{
	struct dt_unwind_rule undef = {0};

	memset(rs, 0, sizeof(*rs));
	rs->hcap = 256;
	rs->hash = xcalloc(rs->hcap, sizeof(*rs->hash));
	dt_ruleset_intern(rs, &undef);
}

void dt_ruleset_fini(dt_ruleset *rs)
{
	free(rs->rules);
	free(rs->hash);
	memset(rs, 0, sizeof(*rs));
}

static void ruleset_rehash(dt_ruleset *rs)
{
	uint32_t i, h;

	free(rs->hash);
	rs->hcap *= 2;
	rs->hash = xcalloc(rs->hcap, sizeof(*rs->hash));
	for (i = 0; i < rs->n; i++) {
		for (h = rule_hash(&rs->rules[i]) & (rs->hcap - 1); rs->hash[h];
		     h = (h + 1) & (rs->hcap - 1))
			;
		rs->hash[h] = i + 1;
	}
}

int dt_ruleset_intern(dt_ruleset *rs, const struct dt_unwind_rule *r)
{
	uint32_t h;

	for (h = rule_hash(r) & (rs->hcap - 1); rs->hash[h]; h = (h + 1) & (rs->hcap - 1)) {
		if (!memcmp(&rs->rules[rs->hash[h] - 1], r, sizeof(*r)))
			return (int)rs->hash[h] - 1;
	}
	if (rs->n >= DT_MAX_RULES)
		return -ENOSPC;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->rules = xrealloc(rs->rules, rs->cap * sizeof(*rs->rules));
	}
	rs->rules[rs->n] = *r;
	rs->hash[h] = ++rs->n;
	if (rs->n * 2 > rs->hcap)
		ruleset_rehash(rs);
	return (int)rs->n - 1;
}

void dt_rows_fini(dt_rows *t)
{
	free(t->pc);
	free(t->rule);
	memset(t, 0, sizeof(*t));
}

static void rows_push(dt_rows *t, uint32_t pc, uint16_t rule)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->pc = xrealloc(t->pc, t->cap * sizeof(*t->pc));
		t->rule = xrealloc(t->rule, t->cap * sizeof(*t->rule));
	}
	t->pc[t->n] = pc;
	t->rule[t->n] = rule;
	t->n++;
}

/* a := a where a has a rule, else b: .eh_frame wins, .debug_frame fills its gaps (binaries
 * whose own code has only .debug_frame while crt1.o and the PLT brought .eh_frame). */
void dt_rows_merge(dt_rows *a, const dt_rows *b)
{
	dt_rows out = {0};
	uint32_t i = 0, j = 0;
	uint16_t ra = 0, rb = 0;

	if (b->n == 0)
		return;
	while (i < a->n || j < b->n) {
		uint32_t pc;
		uint16_t r;

		if (j >= b->n || (i < a->n && a->pc[i] <= b->pc[j]))
			pc = a->pc[i];
		else
			pc = b->pc[j];
		while (i < a->n && a->pc[i] == pc)
			ra = a->rule[i++];
		while (j < b->n && b->pc[j] == pc)
			rb = b->rule[j++];
		r = ra ? ra : rb;
		if (out.n && out.rule[out.n - 1] == r)
			continue;
		if (!out.n && r == 0)
			continue;
		rows_push(&out, pc, r);
	}
	dt_rows_fini(a);
	*a = out;
}

/* ---------------------------------------------------------------- reading */

typedef struct rd {
	const uint8_t *p, *end;
	bool bad;
} rd;

static uint64_t rd_u(rd *r, int n)
{
	uint64_t v = 0;
	int i;

	if (r->end - r->p < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t rd_sleb(rd *r)
{
	uint64_t v = 0;
	int shift = 0;
	uint8_t b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return (int64_t)v;
		}
	}
	r->bad = true;
	return 0;
}

/* A register number; out-of-range numbers become 0xffff, which matches no register we track. */
static uint16_t rd_reg(rd *r)
{
	uint64_t v = rd_uleb(r);

	return v > 0xffff ? 0xffff : (uint16_t)v;
}

enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02, PE_udata4 = 0x03, PE_udata8 = 0x04,
	PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b, PE_sdata8 = 0x0c,
	PE_pcrel = 0x10, PE_textrel = 0x20, PE_datarel = 0x30, PE_funcrel = 0x40, PE_aligned = 0x50,
	PE_indirect = 0x80, PE_omit = 0xff,
};

/* A pointer in encoding `enc`; `base` is the section's address of the section's start so that
 * pcrel can be resolved (r->p - sec + base). Indirect pointers cannot be followed offline: they
 * only appear for personality routines, whose value we skip. */
static uint64_t rd_ptr(rd *r, uint8_t enc, const uint8_t *sec, uint64_t base, bool *ok)
{
	uint64_t pos = base + (uint64_t)(r->p - sec);
	uint64_t v;

	if (enc == PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case PE_absptr: v = rd_u(r, 8); break;
	case PE_uleb128: v = rd_uleb(r); break;
	case PE_udata2: v = rd_u(r, 2); break;
	case PE_udata4: v = rd_u(r, 4); break;
	case PE_udata8: v = rd_u(r, 8); break;
	case PE_sleb128: v = (uint64_t)rd_sleb(r); break;
	case PE_sdata2: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
	case PE_sdata4: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
	case PE_sdata8: v = rd_u(r, 8); break;
	default: *ok = false; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_pcrel: v += pos; break;
	default:
		/* textrel/datarel/funcrel never appear in x86-64 .eh_frame FDE addresses. */
		*ok = false;
		return 0;
	}
	return v;
}

/* ---------------------------------------------------------------- CFA interpreter */

/* The registers we track; every other DWARF register's rule is irrelevant on x86-64 because
 * the CFA is defined from rsp or rbp (or expressions over them), or, in a few hand-written
 * trampolines (ld.so's _dl_runtime_resolve*, _dl_tlsdesc_dynamic*), from rbx: rbx is tracked
 * for them. */
enum { R_RBX = 3, R_RBP = 6, R_RSP = 7, R_RA = 16 };

enum rk { RK_UNSPEC, RK_SAME, RK_UNDEF, RK_OFFSET, RK_RBPREL, RK_OTHER };
enum ck { CK_REG, CK_PLT, CK_DEREF_RBP, CK_SIGNAL, CK_OTHER };

typedef struct cfstate {
	uint8_t cfa_kind;  /* enum ck */
	uint8_t plt_thr;
	uint16_t cfa_reg;
	int64_t cfa_off;
	uint8_t rbp_k, ra_k, rbx_k;
	int64_t rbp_off, ra_off, rbx_off;
} cfstate;

typedef struct cie {
	uint64_t off;      /* section offset, the cache key */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	bool has_z, signal;
	const uint8_t *insns, *insns_end;
	cfstate init;      /* state after the initial instructions */
	bool valid;
} cie;

#define STATE_STACK 16

typedef struct interp {
	const cie *c;
	cfstate st;
	cfstate stack[STATE_STACK];
	int depth;
} interp;

static void set_reg(cfstate *s, uint64_t reg, uint8_t k, int64_t off, uint64_t ra_reg)
{
	if (reg == ra_reg) {
		s->ra_k = k;
		s->ra_off = off;
	} else if (reg == R_RBP) {
		s->rbp_k = k;
		s->rbp_off = off;
	} else if (reg == R_RBX) {
		s->rbx_k = k;
		s->rbx_off = off;
	}
}

static void restore_reg(cfstate *s, const cfstate *init, uint64_t reg, uint64_t ra_reg)
{
	if (reg == ra_reg) {
		s->ra_k = init->ra_k;
		s->ra_off = init->ra_off;
	} else if (reg == R_RBP) {
		s->rbp_k = init->rbp_k;
		s->rbp_off = init->rbp_off;
	} else if (reg == R_RBX) {
		s->rbx_k = init->rbx_k;
		s->rbx_off = init->rbx_off;
	}
}

/* Recognizes the two CFA expressions x86-64 code actually uses. */
static void cfa_expr(cfstate *s, const uint8_t *e, uint64_t len)
{
	/* PLT: DW_OP_breg7 N; DW_OP_breg16 0; lit15; and; litK; ge; lit3; shl; plus. */
	if (len >= 11 && e[0] == 0x77 && e[1] < 0x40 && e[2] == 0x80 && e[3] == 0x00 &&
	    e[4] == 0x3f && e[5] == 0x1a && e[6] >= 0x30 && e[6] <= 0x4f && e[7] == 0x2a &&
	    e[8] == 0x33 && e[9] == 0x24 && e[10] == 0x22 && len == 11) {
		s->cfa_kind = CK_PLT;
		s->cfa_off = e[1];
		s->plt_thr = (uint8_t)(e[6] - 0x30);
		return;
	}
	/* Stack realignment: DW_OP_breg6 N; DW_OP_deref. */
	if (len >= 3 && e[0] == 0x76 && e[len - 1] == 0x06) {
		rd r = {e + 1, e + len - 1, false};
		int64_t off = rd_sleb(&r);

		if (!r.bad && r.p == e + len - 1) {
			s->cfa_kind = CK_DEREF_RBP;
			s->cfa_off = off;
			return;
		}
	}
	s->cfa_kind = CK_OTHER;
}

typedef struct emit_ctx {
	dt_ruleset *rs;
	dt_rows *out;
	uint32_t fde_start_row;
	int err;
} emit_ctx;

/* Where a frame keeps its caller's rbx, as a rule's arg (dt_walker.h: DT_RBX_*). */
static uint8_t rbx_rule(const cfstate *s)
{
	switch (s->rbx_k) {
	case RK_UNSPEC:
	case RK_SAME: return DT_RBX_SAME;
	case RK_OFFSET:
		if (s->rbx_off < 0 && s->rbx_off >= -8 * (int64_t)(DT_RBX_LOST - 1) &&
		    !(s->rbx_off % 8))
			return (uint8_t)(-s->rbx_off / 8);
		return DT_RBX_LOST;
	default: return DT_RBX_LOST;
	}
}

static int state_rule(const cfstate *s, bool signal, struct dt_unwind_rule *r)
{
	memset(r, 0, sizeof(*r));
	if (signal) {
		r->cfa_kind = DT_CFA_SIGNAL;
		return 0;
	}
	if (s->ra_k == RK_UNDEF) {
		r->cfa_kind = DT_CFA_END;
		return 0;
	}
	switch (s->cfa_kind) {
	case CK_REG:
		if (s->cfa_reg == R_RSP)
			r->cfa_kind = DT_CFA_RSP;
		else if (s->cfa_reg == R_RBP)
			r->cfa_kind = DT_CFA_RBP;
		else if (s->cfa_reg == R_RBX)
			r->cfa_kind = DT_CFA_RBX;
		else
			return 0; /* CFA in another register (prologue of a realigning fn) */
		break;
	case CK_PLT:
		r->cfa_kind = DT_CFA_PLT;
		r->arg = s->plt_thr;
		break;
	case CK_DEREF_RBP:
		r->cfa_kind = DT_CFA_DEREF_RBP;
		break;
	default:
		return 0;
	}
	if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
		goto undef;
	r->cfa_off = (int32_t)s->cfa_off;
	if (s->ra_k != RK_OFFSET || s->ra_off < INT32_MIN || s->ra_off > INT32_MAX)
		goto undef;
	r->ra_kind = DT_REG_OFFSET;
	r->ra_off = (int32_t)s->ra_off;
	switch (s->rbp_k) {
	case RK_UNSPEC:
	case RK_SAME: r->rbp_kind = DT_REG_SAME; break;
	case RK_OFFSET:
		if (s->rbp_off < INT32_MIN || s->rbp_off > INT32_MAX)
			goto undef;
		r->rbp_kind = DT_REG_OFFSET;
		r->rbp_off = (int32_t)s->rbp_off;
		break;
	case RK_RBPREL:
		if (s->rbp_off < INT32_MIN || s->rbp_off > INT32_MAX)
			goto undef;
		r->rbp_kind = DT_REG_RBP_REL;
		r->rbp_off = (int32_t)s->rbp_off;
		break;
	default: r->rbp_kind = DT_REG_UNDEF; break;
	}
	if (r->cfa_kind != DT_CFA_PLT)
		r->arg = rbx_rule(s);
	return 0;
undef:
	memset(r, 0, sizeof(*r));
	return 0;
}

/* Adds the row (loc, state), replacing a row at the same loc from this FDE. */
static void emit(emit_ctx *ec, uint64_t loc, const cfstate *s, bool signal)
{
	struct dt_unwind_rule r;
	int idx;

	state_rule(s, signal, &r);
	idx = dt_ruleset_intern(ec->rs, &r);
	if (idx < 0) {
		ec->err = idx;
		return;
	}
	if (ec->out->n > ec->fde_start_row && ec->out->pc[ec->out->n - 1] == (uint32_t)loc) {
		ec->out->rule[ec->out->n - 1] = (uint16_t)idx;
		return;
	}
	rows_push(ec->out, (uint32_t)loc, (uint16_t)idx);
}

/* A factored offset: an operand times the CIE's data alignment factor (negated for
 * GNU_negative_offset_extended). One that does not fit in 64 bits is no stack offset: the
 * instruction is invalid, as a truncated one is. */
static int64_t factored(rd *r, int64_t v, int64_t align, bool negate)
{
	int64_t out;

	if (__builtin_mul_overflow(v, align, &out) ||
	    (negate && __builtin_sub_overflow((int64_t)0, out, &out))) {
		r->bad = true;
		return 0;
	}
	return out;
}

/* Runs CFA instructions [p, end). With ec == NULL it is the CIE's initial program. Rows are
 * emitted for [loc, end_pc). */
static int run_cfa(interp *in, const uint8_t *p, const uint8_t *end, uint64_t loc, uint64_t end_pc,
		   emit_ctx *ec, char *err, size_t errlen)
{
	rd r = {p, end, false};
	const cie *c = in->c;
	cfstate *s = &in->st;

	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++;
		uint8_t hi = op & 0xc0, lo = op & 0x3f;
		uint64_t reg, delta = 0, len;
		int64_t off;
		bool advance = false;

		if (hi == 0x40) {
			delta = lo * c->code_align;
			advance = true;
		} else if (hi == 0x80) {
			off = factored(&r, (int64_t)rd_uleb(&r), c->data_align, false);
			set_reg(s, lo, RK_OFFSET, off, c->ra_reg);
		} else if (hi == 0xc0) {
			restore_reg(s, &c->init, lo, c->ra_reg);
		} else {
			switch (op) {
			case 0x00: break; /* nop */
			case 0x01: /* set_loc: rare; only forward moves make sense */
				if (c->addr_size == 4)
					reg = rd_u(&r, 4);
				else
					reg = rd_u(&r, 8);
				if (reg < loc)
					goto bad_insn;
				delta = reg - loc;
				advance = true;
				break;
			case 0x02: delta = rd_u(&r, 1) * c->code_align; advance = true; break;
			case 0x03: delta = rd_u(&r, 2) * c->code_align; advance = true; break;
			case 0x04: delta = rd_u(&r, 4) * c->code_align; advance = true; break;
			case 0x05: /* offset_extended */
				reg = rd_uleb(&r);
				off = factored(&r, (int64_t)rd_uleb(&r), c->data_align, false);
				set_reg(s, reg, RK_OFFSET, off, c->ra_reg);
				break;
			case 0x06: /* restore_extended */
				restore_reg(s, &c->init, rd_uleb(&r), c->ra_reg);
				break;
			case 0x07: /* undefined */
				set_reg(s, rd_uleb(&r), RK_UNDEF, 0, c->ra_reg);
				break;
			case 0x08: /* same_value */
				set_reg(s, rd_uleb(&r), RK_SAME, 0, c->ra_reg);
				break;
			case 0x09: /* register */
				reg = rd_uleb(&r);
				rd_uleb(&r);
				set_reg(s, reg, RK_OTHER, 0, c->ra_reg);
				break;
			case 0x0a: /* remember_state */
				if (in->depth >= STATE_STACK) {
					snprintf(err, errlen, "remember_state nested deeper than %d",
						 STATE_STACK);
					return -EINVAL;
				}
				in->stack[in->depth++] = *s;
				break;
			case 0x0b: { /* restore_state: keeps the CFA? No: DWARF restores all rules */
				if (in->depth == 0) {
					snprintf(err, errlen, "restore_state without remember_state");
					return -EINVAL;
				}
				*s = in->stack[--in->depth];
				break;
			}
			case 0x0c: /* def_cfa */
				s->cfa_kind = CK_REG;
				s->cfa_reg = rd_reg(&r);
				s->cfa_off = (int64_t)rd_uleb(&r);
				break;
			case 0x0d: /* def_cfa_register */
				s->cfa_kind = CK_REG;
				s->cfa_reg = rd_reg(&r);
				break;
			case 0x0e: /* def_cfa_offset */
				s->cfa_off = (int64_t)rd_uleb(&r);
				break;
			case 0x0f: /* def_cfa_expression */
				len = rd_uleb(&r);
				if (r.bad || len > (uint64_t)(r.end - r.p))
					goto bad_insn;
				cfa_expr(s, r.p, len);
				r.p += len;
				break;
			case 0x10: /* expression */
			case 0x16: /* val_expression */
				reg = rd_uleb(&r);
				len = rd_uleb(&r);
				if (r.bad || len > (uint64_t)(r.end - r.p))
					goto bad_insn;
				/* The one register expression compilers emit outside signal frames:
				 * rbp saved at [rbp + N] in a realigned frame (DW_OP_breg6 N). */
				if (op == 0x10 && len >= 2 && r.p[0] == 0x76) {
					rd er = {r.p + 1, r.p + len, false};

					off = rd_sleb(&er);
					if (!er.bad && er.p == r.p + len) {
						set_reg(s, reg, RK_RBPREL, off, c->ra_reg);
						r.p += len;
						break;
					}
				}
				r.p += len;
				set_reg(s, reg, RK_OTHER, 0, c->ra_reg);
				break;
			case 0x11: /* offset_extended_sf */
				reg = rd_uleb(&r);
				off = factored(&r, rd_sleb(&r), c->data_align, false);
				set_reg(s, reg, RK_OFFSET, off, c->ra_reg);
				break;
			case 0x12: /* def_cfa_sf */
				s->cfa_kind = CK_REG;
				s->cfa_reg = rd_reg(&r);
				s->cfa_off = factored(&r, rd_sleb(&r), c->data_align, false);
				break;
			case 0x13: /* def_cfa_offset_sf */
				s->cfa_off = factored(&r, rd_sleb(&r), c->data_align, false);
				break;
			case 0x14: /* val_offset */
				reg = rd_uleb(&r);
				rd_uleb(&r);
				set_reg(s, reg, RK_OTHER, 0, c->ra_reg);
				break;
			case 0x15: /* val_offset_sf */
				reg = rd_uleb(&r);
				rd_sleb(&r);
				set_reg(s, reg, RK_OTHER, 0, c->ra_reg);
				break;
			case 0x2e: /* GNU_args_size: only matters for landing pads */
				rd_uleb(&r);
				break;
			case 0x2f: /* GNU_negative_offset_extended */
				reg = rd_uleb(&r);
				off = factored(&r, (int64_t)rd_uleb(&r), c->data_align, true);
				set_reg(s, reg, RK_OFFSET, off, c->ra_reg);
				break;
			default:
				snprintf(err, errlen, "unknown CFA instruction 0x%02x", op);
				return -EINVAL;
			}
		}
		if (advance && ec) {
			if (loc < end_pc)
				emit(ec, loc, s, c->signal);
			loc += delta;
			if (ec->err)
				return ec->err;
		}
	}
	if (r.bad)
		goto bad_insn;
	if (ec && loc < end_pc)
		emit(ec, loc, s, c->signal);
	return ec ? ec->err : 0;
bad_insn:
	snprintf(err, errlen, "truncated or invalid CFA instruction");
	return -EINVAL;
}

/* ---------------------------------------------------------------- CIE / FDE */

typedef struct cie_cache {
	cie *v;
	size_t n, cap;
} cie_cache;

static int parse_cie(const uint8_t *sec, size_t size, uint64_t sec_addr, uint64_t off, bool is_eh,
		     cie *c, char *err, size_t errlen)
{
	rd r = {sec + off, sec + size, false};
	uint64_t len = rd_u(&r, 4), id;
	const uint8_t *aug, *body_end, *aug_end = NULL;
	uint8_t version;
	bool ok = true, dwarf64 = false;
	interp in;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->fde_enc = PE_absptr;
	c->addr_size = 8;
	if (len == 0xffffffffu) {
		len = rd_u(&r, 8);
		dwarf64 = true;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		goto trunc;
	body_end = r.p + len;
	r.end = body_end;
	id = rd_u(&r, dwarf64 ? 8 : 4);
	if ((is_eh && id != 0) || (!is_eh && id != (dwarf64 ? ~0ull : 0xffffffffu))) {
		snprintf(err, errlen, "CIE pointer at 0x%llx does not point at a CIE",
			 (unsigned long long)off);
		return -EINVAL;
	}
	version = (uint8_t)rd_u(&r, 1);
	if (version != 1 && version != 3 && version != 4) {
		snprintf(err, errlen, "CIE at 0x%llx: unsupported version %u", (unsigned long long)off,
			 version);
		return -EINVAL;
	}
	aug = r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		goto trunc;
	r.p++;
	if (version == 4) {
		c->addr_size = (uint8_t)rd_u(&r, 1);
		rd_u(&r, 1); /* segment selector size */
		if (c->addr_size != 4 && c->addr_size != 8) {
			snprintf(err, errlen, "CIE at 0x%llx: address size %u",
				 (unsigned long long)off, c->addr_size);
			return -EINVAL;
		}
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&r);
		const char *a;

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			goto trunc;
		c->has_z = true;
		aug_end = r.p + alen;
		for (a = (const char *)aug + 1; *a; a++) {
			rd ar = {r.p, aug_end, false};

			switch (*a) {
			case 'R': c->fde_enc = (uint8_t)rd_u(&ar, 1); break;
			case 'L': rd_u(&ar, 1); break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_u(&ar, 1);
				bool pok = true;

				/* The personality pointer's value is not needed, only its size. */
				rd_ptr(&ar, enc & 0x7f, sec, sec_addr, &pok);
				if (!pok)
					goto bad_aug;
				break;
			}
			case 'S': c->signal = true; break;
			case 'B': break;
			default:
				goto skip_aug; /* unknown: the 'z' length lets us skip the rest */
			}
			if (ar.bad)
				goto trunc;
			r.p = ar.p;
		}
skip_aug:
		r.p = aug_end;
	} else if (aug[0] == 'e' && aug[1] == 'h') {
		rd_u(&r, 8); /* ancient g++ "eh" pointer */
	} else if (aug[0]) {
		snprintf(err, errlen, "CIE at 0x%llx: unknown augmentation \"%.16s\"",
			 (unsigned long long)off, (const char *)aug);
		return -EINVAL;
	}
	if (r.bad || c->code_align == 0)
		goto trunc;
	(void)ok;
	c->insns = r.p;
	c->insns_end = body_end;
	/* Default rules (x86-64 SysV): everything unspecified; the CIE's program sets CFA/RA. */
	memset(&in, 0, sizeof(in));
	in.c = c;
	in.st.cfa_kind = CK_OTHER;
	if (run_cfa(&in, c->insns, c->insns_end, 0, 0, NULL, err, errlen) < 0)
		return -EINVAL;
	c->init = in.st;
	c->valid = true;
	return 0;
bad_aug:
	snprintf(err, errlen, "CIE at 0x%llx: bad personality encoding", (unsigned long long)off);
	return -EINVAL;
trunc:
	snprintf(err, errlen, "CIE at 0x%llx: truncated", (unsigned long long)off);
	return -EINVAL;
}

static const cie *get_cie(cie_cache *cc, const uint8_t *sec, size_t size, uint64_t sec_addr,
			  uint64_t off, bool is_eh, char *err, size_t errlen)
{
	size_t i;
	cie c;

	/* Objects have a handful of CIEs; the last one used is almost always the one wanted. */
	for (i = cc->n; i-- > 0;)
		if (cc->v[i].off == off)
			return &cc->v[i];
	if (parse_cie(sec, size, sec_addr, off, is_eh, &c, err, errlen) < 0)
		return NULL;
	DT_VEC_PUSH(cc, c);
	return &cc->v[cc->n - 1];
}

/* Counts a skipped FDE; the first error's message is the one kept. */
static void note_bad(char *err, size_t errlen, const char *msg, uint32_t *nbad)
{
	if ((*nbad)++ == 0)
		snprintf(err, errlen, "%s", msg);
}

typedef struct fde_span {
	uint64_t pc;
	uint32_t first, n; /* rows in the unsorted buffer */
} fde_span;

static int cmp_span(const void *a, const void *b)
{
	const fde_span *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int dt_cfi_parse(const uint8_t *sec, size_t size, uint64_t sec_addr, bool is_eh, dt_ruleset *rs,
		 dt_rows *out, char *err, size_t errlen)
{
	cie_cache cc = {0};
	DT_VEC(fde_span) spans = {0};
	dt_rows tmp = {0};
	emit_ctx ec = {rs, &tmp, 0, 0};
	char err1[256];
	uint32_t nbad = 0;
	uint64_t off = 0, prev_pc = 0;
	bool sorted = true;
	int ret = 0;
	size_t i, j;

	if (errlen)
		err[0] = 0;
	while (off + 4 <= size) {
		rd r = {sec + off, sec + size, false};
		uint64_t fde_off = off, len = rd_u(&r, 4), id, id_pos, pc, range, cie_off;
		const uint8_t *body_end;
		const cie *c;
		bool dwarf64 = false, ok = true;
		interp in;

		if (len == 0) {
			if (is_eh)
				break; /* .eh_frame terminator */
			off += 4;
			continue;
		}
		if (len == 0xffffffffu) {
			len = rd_u(&r, 8);
			dwarf64 = true;
		}
		if (r.bad || len > (uint64_t)(r.end - r.p) || len < 4) {
			/* Nothing after this can be found: stop, keeping what was parsed. */
			snprintf(err1, sizeof(err1), "entry at 0x%llx: length 0x%llx past the section end",
				 (unsigned long long)off, (unsigned long long)len);
			note_bad(err, errlen, err1, &nbad);
			break;
		}
		body_end = r.p + len;
		off = (uint64_t)(body_end - sec);
		id_pos = (uint64_t)(r.p - sec);
		id = rd_u(&r, dwarf64 ? 8 : 4);
		r.end = body_end;
		if ((is_eh && id == 0) || (!is_eh && id == (dwarf64 ? ~0ull : 0xffffffffu)))
			continue; /* a CIE: parsed when an FDE uses it */
		/* From here on an error only loses this FDE: its range unwinds by frame pointer. */
		if (is_eh) {
			if (id > id_pos) {
				snprintf(err1, sizeof(err1), "FDE at 0x%llx: CIE pointer out of the section",
					 (unsigned long long)fde_off);
				goto bad_fde;
			}
			cie_off = id_pos - id;
		} else {
			cie_off = id;
		}
		if (cie_off >= size) {
			snprintf(err1, sizeof(err1), "FDE at 0x%llx: CIE pointer out of the section",
				 (unsigned long long)fde_off);
			goto bad_fde;
		}
		c = get_cie(&cc, sec, size, sec_addr, cie_off, is_eh, err1, sizeof(err1));
		if (!c)
			goto bad_fde;
		if (is_eh) {
			pc = rd_ptr(&r, c->fde_enc, sec, sec_addr, &ok);
			range = rd_ptr(&r, c->fde_enc & 0x0f, sec, sec_addr, &ok);
		} else {
			pc = rd_u(&r, c->addr_size);
			range = rd_u(&r, c->addr_size);
		}
		if (!ok) {
			snprintf(err1, sizeof(err1), "FDE at 0x%llx: unsupported pointer encoding 0x%02x",
				 (unsigned long long)fde_off, c->fde_enc);
			goto bad_fde;
		}
		if (c->has_z) {
			uint64_t alen = rd_uleb(&r);

			if (r.bad || alen > (uint64_t)(r.end - r.p))
				r.bad = true;
			else
				r.p += alen;
		}
		if (r.bad) {
			snprintf(err1, sizeof(err1), "FDE at 0x%llx: truncated",
				 (unsigned long long)fde_off);
			goto bad_fde;
		}
		/* Empty FDEs (range 0) and FDEs of discarded sections (pc 0 in .debug_frame of
		 * relocatable code) have no rows; past 4 GiB the 32-bit row pcs cannot hold them. */
		if (range == 0 || pc + range < pc || pc + range > 0xffffffffull || pc == 0)
			continue;
		memset(&in, 0, sizeof(in));
		in.c = c;
		in.st = c->init;
		ec.fde_start_row = tmp.n;
		ret = run_cfa(&in, r.p, body_end, pc, pc + range, &ec, err1, sizeof(err1));
		if (ret == -ENOSPC) {
			snprintf(err, errlen, "more than %d distinct unwind rules", DT_MAX_RULES);
			goto out;
		}
		if (ret < 0) {
			size_t l = strlen(err1);

			snprintf(err1 + l, sizeof(err1) - l, " (FDE at 0x%llx)",
				 (unsigned long long)fde_off);
			tmp.n = ec.fde_start_row; /* drop this FDE's rows */
			ret = 0;
			goto bad_fde;
		}
		rows_push(&tmp, (uint32_t)(pc + range), 0);
		{
			fde_span sp = {pc, ec.fde_start_row, tmp.n - ec.fde_start_row};

			if (pc < prev_pc)
				sorted = false;
			prev_pc = pc;
			DT_VEC_PUSH(&spans, sp);
		}
		continue;
bad_fde:
		note_bad(err, errlen, err1, &nbad);
	}
	if (nbad && spans.n == 0) {
		/* Nothing usable: the first error is the answer. */
		ret = -EINVAL;
		goto out;
	}
	if (nbad) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, " (%u FDE%s skipped)", nbad, nbad == 1 ? "" : "s");
	}
	out->nbad += nbad;
	/* FDEs are nearly always in address order already; sort the spans (not the rows) if not. */
	if (!sorted)
		qsort(spans.v, spans.n, sizeof(*spans.v), cmp_span);
	for (i = 0; i < spans.n; i++) {
		const fde_span *sp = &spans.v[i];

		for (j = sp->first; j < sp->first + sp->n; j++) {
			uint32_t pc = tmp.pc[j];
			uint16_t rule = tmp.rule[j];

			if (out->n && out->pc[out->n - 1] >= pc) {
				/* The end row of the previous FDE at our start, or overlapping FDEs
				 * (broken input): the later row wins at equal pc, overlap drops. */
				if (out->pc[out->n - 1] > pc)
					continue;
				out->n--;
			}
			if (out->n && out->rule[out->n - 1] == rule)
				continue;
			rows_push(out, pc, rule);
		}
	}
out:
	if (ret < 0 && err[0] == 0)
		snprintf(err, errlen, "invalid CFI");
	free(cc.v);
	free(spans.v);
	dt_rows_fini(&tmp);
	return ret;
}

/* ---------------------------------------------------------------- rendering */

static void fmt_off(char *buf, size_t len, const char *base, int32_t off)
{
	if (off >= 0)
		snprintf(buf, len, "%s+%d", base, off);
	else
		snprintf(buf, len, "%s-%d", base, -off);
}

void dt_rule_format(const struct dt_unwind_rule *r, char *buf, size_t len)
{
	char cfa[48], rip[32], rbp[32];

	switch (r->cfa_kind) {
	case DT_CFA_UNDEF: snprintf(buf, len, "cfa=none  (no usable CFI: frame pointers)"); return;
	case DT_CFA_END: snprintf(buf, len, "cfa=end  rip=undef"); return;
	case DT_CFA_SIGNAL: snprintf(buf, len, "cfa=sigframe  rip=[rsp+168]  rbp=[rsp+120]"); return;
	case DT_CFA_RSP: fmt_off(cfa, sizeof(cfa), "rsp", r->cfa_off); break;
	case DT_CFA_RBP: fmt_off(cfa, sizeof(cfa), "rbp", r->cfa_off); break;
	case DT_CFA_RBX: fmt_off(cfa, sizeof(cfa), "rbx", r->cfa_off); break;
	case DT_CFA_DEREF_RBP:
		fmt_off(rip, sizeof(rip), "rbp", r->cfa_off);
		snprintf(cfa, sizeof(cfa), "[%s]", rip);
		break;
	case DT_CFA_PLT:
		snprintf(cfa, sizeof(cfa), "plt(rsp+%d,%u)", r->cfa_off, r->arg);
		break;
	default: snprintf(cfa, sizeof(cfa), "?%u", r->cfa_kind); break;
	}
	fmt_off(rip, sizeof(rip), "[cfa", r->ra_off);
	strncat(rip, "]", sizeof(rip) - strlen(rip) - 1);
	switch (r->rbp_kind) {
	case DT_REG_SAME: snprintf(rbp, sizeof(rbp), "same"); break;
	case DT_REG_OFFSET:
		fmt_off(rbp, sizeof(rbp), "[cfa", r->rbp_off);
		strncat(rbp, "]", sizeof(rbp) - strlen(rbp) - 1);
		break;
	case DT_REG_RBP_REL:
		fmt_off(rbp, sizeof(rbp), "[rbp", r->rbp_off);
		strncat(rbp, "]", sizeof(rbp) - strlen(rbp) - 1);
		break;
	default: snprintf(rbp, sizeof(rbp), "undef"); break;
	}
	snprintf(buf, len, "cfa=%s  rip=%s  rbp=%s", cfa, rip, rbp);
	/* rbx only where a frame moved it: it matters to the few frames whose cfa is rbx's. */
	if (r->cfa_kind != DT_CFA_PLT && r->arg == DT_RBX_LOST)
		snprintf(buf + strlen(buf), len - strlen(buf), "  rbx=?");
	else if (r->cfa_kind != DT_CFA_PLT && r->arg != DT_RBX_SAME)
		snprintf(buf + strlen(buf), len - strlen(buf), "  rbx=[cfa-%d]", 8 * r->arg);
}

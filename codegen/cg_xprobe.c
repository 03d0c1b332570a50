/* cg_xprobe.c — the generated side of xprobes (protocol: bpf-lib/dt_xprobe.h). The block of an
 * xprobe compiles to an ordinary kprobe-type program; it is not attached itself but tail-called
 * by the precompiled return program, which has already matched the call and left its numbers in
 * key 0 of the per-CPU `xresult` map. The builtins wall, oncpu, offcpu, runq, blocked, iowait and
 * nswitch read that record; the pt_regs context is the uretprobe's, so retval, func and
 * ustack_dwarf work as in a uretprobe. */
#include "codegen/cg_internal.h"
#include "bpf-lib/dt_xprobe.h"

#include <stddef.h>

static int result_offset(dt_builtin b)
{
	switch (b) {
	case DT_B_WALL: return offsetof(struct dt_xresult, wall);
	case DT_B_ONCPU: return offsetof(struct dt_xresult, oncpu);
	case DT_B_OFFCPU: return offsetof(struct dt_xresult, offcpu);
	case DT_B_RUNQ: return offsetof(struct dt_xresult, runq);
	case DT_B_BLOCKED: return offsetof(struct dt_xresult, blocked);
	case DT_B_IOWAIT: return offsetof(struct dt_xresult, iowait);
	case DT_B_NSWITCH: return offsetof(struct dt_xresult, nswitch);
	default: return -1;
	}
}

bool cg_xprobe_is_builtin(dt_builtin b)
{
	return result_offset(b) >= 0;
}

LLVMValueRef cg_xprobe_value(cg *c, const dt_expr *e)
{
	int off = result_offset(e->builtin.id);
	LLVMValueRef res, slot;
	LLVMBasicBlockRef have, done;

	if (off < 0 || !c->attach || c->attach->provider != DT_P_XPROBE) {
		cg_fail(c, e->span, "%s outside an xprobe", dt_builtin_name(e->builtin.id));
		return cg_i64(c, 0);
	}
	/* One lookup per use: cheap (a per-CPU array), and valid in a continuation too, which runs
	 * after the DWARF walker on the same CPU with nothing in between that writes xresult. */
	res = cg_map_lookup(c, cg_map_ref(c, cg_aux_fd(c, DT_AUX_XPROBE_RESULT, 0, 0)),
			    cg_key32(c, 0));
	slot = cg_alloca_i64(c);
	LLVMBuildStore(c->b, cg_i64(c, 0), slot);
	have = cg_block(c, "xres.have");
	done = cg_block(c, "xres.done");
	cg_br_nonnull(c, res, have, done);
	LLVMPositionBuilderAtEnd(c->b, have);
	LLVMBuildStore(c->b, cg_load_int(c, res, (uint32_t)off, 8, false), slot);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return LLVMBuildLoad2(c->b, c->i64, slot, "");
}

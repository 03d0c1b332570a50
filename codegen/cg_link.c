/* cg_link.c — imported C (`import "x.bpf.c";`): clang's bitcode of each file (dt_cg_env.bitcode)
 * is parsed into the compilation's context and linked into the module before any program is
 * emitted, so a call (DT_F_EXTERN) uses the definition's own LLVM type. The linked functions
 * are made internal and always-inline: the inliner puts each one, and what it calls, into the
 * program that calls it — every program is one ELF section and the kernel loads each alone —
 * and globaldce drops the rest. What cannot be inlined (a recursive function, one passed as a
 * callback) or global data the C uses (string constants, variables, maps: they would need
 * relocations the loader does not make) is reported at its import. */
#include "codegen/cg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

static void forget_linked(cg *c)
{
	for (size_t i = 0; i < c->linked.n; i++)
		free(c->linked.v[i].name);
	free(c->linked.v);
	c->linked.v = NULL;
	c->linked.n = c->linked.cap = 0;
}

int cg_link_imports(cg *c)
{
	for (uint32_t i = 0; i < c->env->nbitcode; i++) {
		const dt_cg_bitcode *bc = &c->env->bitcode[i];
		LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(bc->data, bc->len,
										    bc->name);
		LLVMModuleRef m = NULL;

		if (LLVMParseBitcodeInContext2(c->ctx, buf, &m)) {
			LLVMDisposeMemoryBuffer(buf);
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"cannot read clang's bitcode of '%s'", bc->name);
			return -EINVAL;
		}
		LLVMDisposeMemoryBuffer(buf);
		/* Its own target triple ("bpf") for ours ("bpfel"): the same machine. */
		LLVMSetTarget(m, LLVMGetTarget(c->mod));
		for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
			size_t len;
			const char *n = LLVMGetValueName2(f, &len);

			if (LLVMIsDeclaration(f))
				continue;
			struct cg_linked l = { .name = xstrndup(n, len), .from = bc };
			DT_VEC_PUSH(&c->linked, l);
		}
		for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
			size_t len;
			const char *n = LLVMGetValueName2(g, &len);
			struct cg_linked l = { .name = xstrndup(n, len), .from = bc };
			DT_VEC_PUSH(&c->linked, l);
		}
		if (LLVMLinkModules2(c->mod, m)) { /* consumes m */
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"cannot link '%s' with the program: does another import define the "
				"same function?", bc->name);
			return -EINVAL;
		}
	}
	unsigned inl = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
	unsigned noinl = LLVMGetEnumAttributeKindForName("noinline", 8);
	unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);

	for (size_t i = 0; i < c->linked.n; i++) {
		LLVMValueRef f = LLVMGetNamedFunction(c->mod, c->linked.v[i].name);

		if (!f)
			continue;
		LLVMSetLinkage(f, LLVMInternalLinkage);
		LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinl);
		LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone);
		LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
					LLVMCreateEnumAttribute(c->ctx, inl, 0));
	}
	return 0;
}

const char *cg_link_passes(const cg *c)
{
	return c->linked.n ? "always-inline,globaldce," : NULL;
}

int cg_link_check(cg *c)
{
	int ret = 0;

	/* What the passes left of the linked C and something still uses: a function the inliner
	 * could not place, or data. */
	for (size_t i = 0; i < c->linked.n && !ret; i++) {
		const char *n = c->linked.v[i].name;
		const dt_cg_bitcode *bc = c->linked.v[i].from;
		LLVMValueRef f = LLVMGetNamedFunction(c->mod, n);
		LLVMValueRef g = f ? NULL : LLVMGetNamedGlobal(c->mod, n);

		if (f && !LLVMIsDeclaration(f) && LLVMGetFirstUse(f)) {
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"%s: function '%s' could not be inlined into the probe that calls it",
				bc->name, n);
			dt_diag_hint(c->diags, "imported C functions are inlined: recursion and "
				     "functions passed as callbacks are not supported");
			ret = -EINVAL;
		} else if (g && LLVMGetFirstUse(g)) {
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"%s: the code uses global data ('%s'), which dwarftrace cannot load",
				bc->name, n);
			dt_diag_hint(c->diags, "string constants, global and static variables and "
				     "maps are not supported in imported C; keep to locals and "
				     "arguments");
			ret = -EINVAL;
		}
	}
	forget_linked(c);
	return ret;
}

LLVMValueRef cg_extern_call(cg *c, const dt_expr *e)
{
	const dt_extern_fn *x = e->call.ext;
	LLVMValueRef fn = x ? LLVMGetNamedFunction(c->mod, x->name) : NULL;

	if (!fn) {
		cg_fail(c, e->span, "%s: the imported C function was not linked", e->call.name);
		return cg_i64(c, 0);
	}
	c->calls_c = x->file;
	LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
	unsigned n = LLVMCountParamTypes(fty);
	LLVMTypeRef *pt = xcalloc(n + 1, sizeof(*pt));
	LLVMValueRef *args = xcalloc(n + 1, sizeof(*args));

	LLVMGetParamTypes(fty, pt);
	for (unsigned i = 0; i < n && i < e->call.nargs; i++) {
		LLVMValueRef v = cg_expr(c, e->call.args[i]);

		if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind)
			v = LLVMBuildPtrToInt(c->b, v, c->i64, "");
		if (LLVMGetTypeKind(pt[i]) == LLVMPointerTypeKind)
			v = LLVMBuildIntToPtr(c->b, v, pt[i], "");
		else
			v = LLVMBuildIntCast2(c->b, v, pt[i], e->call.args[i]->type->is_signed, "");
		args[i] = v;
	}
	LLVMValueRef r = LLVMBuildCall2(c->b, fty, fn, args, n, "");
	LLVMTypeRef rt = LLVMGetReturnType(fty);

	free(pt);
	free(args);
	switch (LLVMGetTypeKind(rt)) {
	case LLVMPointerTypeKind:
		return LLVMBuildPtrToInt(c->b, r, c->i64, "");
	case LLVMIntegerTypeKind:
		return LLVMBuildIntCast2(c->b, r, c->i64, x->ret->is_signed, "");
	default:
		return cg_i64(c, 0);
	}
}

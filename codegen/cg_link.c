/* cg_link.c — imported C (`import "x.bpf.c";`). Every program is one ELF section that the
 * kernel loads alone, so each program that calls imported C gets a copy of it of its own: at
 * the program's first call (DT_F_EXTERN), clang's bitcode of the files (dt_cg_env.bitcode) is
 * parsed into the compilation's context, every function it defines is renamed NAME.SECTION,
 * made internal, put in the program's section and marked always-inline, and the copy is linked
 * into the module; the call then uses the definition's own LLVM type. The inliner puts the
 * functions into the code that calls them, globaldce drops what nothing uses, and what stays —
 * a callback passed to bpf_loop, a function clang would not inline — is a BPF-to-BPF function
 * of the same section (cg_elf.c resolves a callback's address). Global data the C uses (string
 * and array constants, variables, maps) would need relocations the loader does not make: it
 * is reported at its import (cg_link_check). */
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

static bool in_names(char *const *names, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return true;
	return false;
}

static bool in_linked(const cg *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->linked.n; i++)
		if (strlen(c->linked.v[i].name) == len && !memcmp(c->linked.v[i].name, name, len))
			return true;
	return false;
}

/* Links a copy of every imported file for the program of section `sec`. 0 or -EINVAL. */
static int link_copy(cg *c, const char *sec)
{
	uint32_t n = c->env->nbitcode;
	LLVMModuleRef *mods = xcalloc(n + 1, sizeof(*mods));
	DT_VEC(char *) defined = { 0 };
	unsigned inl = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
	unsigned noinl = LLVMGetEnumAttributeKindForName("noinline", 8);
	unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
	size_t first = c->linked.n;
	int ret = 0;

	for (uint32_t i = 0; i < n && !ret; i++) {
		const dt_cg_bitcode *bc = &c->env->bitcode[i];
		LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(bc->data, bc->len,
										    bc->name);

		if (LLVMParseBitcodeInContext2(c->ctx, buf, &mods[i])) {
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at, "cannot read clang's bitcode of '%s'",
				bc->name);
			mods[i] = NULL;
			ret = -EINVAL;
		}
		LLVMDisposeMemoryBuffer(buf);
		for (LLVMValueRef f = mods[i] ? LLVMGetFirstFunction(mods[i]) : NULL; f;
		     f = LLVMGetNextFunction(f)) {
			size_t len;
			const char *nm = LLVMGetValueName2(f, &len);

			if (!LLVMIsDeclaration(f))
				DT_VEC_PUSH(&defined, xstrndup(nm, len));
		}
	}
	for (uint32_t i = 0; i < n && !ret; i++) {
		const dt_cg_bitcode *bc = &c->env->bitcode[i];

		/* Its own target triple ("bpf") for ours ("bpfel"): the same machine. */
		LLVMSetTarget(mods[i], LLVMGetTarget(c->mod));
		/* The files' functions (definitions, and declarations of another file's) and data
		 * get this program's names; the C library's and LLVM's declarations keep theirs. */
		for (LLVMValueRef f = LLVMGetFirstFunction(mods[i]); f; f = LLVMGetNextFunction(f)) {
			size_t len;
			const char *nm = LLVMGetValueName2(f, &len);

			if (!in_names(defined.v, defined.n, nm, len)) {
				/* Defined nowhere: cg_link_check reports it if it is still called. */
				if (!LLVMGetIntrinsicID(f) && !in_linked(c, nm, len)) {
					struct cg_linked l = { .name = xstrndup(nm, len), .from = bc };
					DT_VEC_PUSH(&c->linked, l);
				}
				continue;
			}
			char *own = xasprintf("%.*s.%s", (int)len, nm, sec);
			LLVMSetValueName2(f, own, strlen(own));
			if (!LLVMIsDeclaration(f)) {
				/* External still: the linker takes only what is external, or used by
				 * what it takes. Internal once linked. */
				LLVMSetLinkage(f, LLVMExternalLinkage);
				LLVMSetSection(f, sec);
				LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinl);
				LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone);
				LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
							LLVMCreateEnumAttribute(c->ctx, inl, 0));
				struct cg_linked l = { .name = own, .from = bc };
				DT_VEC_PUSH(&c->linked, l);
			} else {
				free(own);
			}
		}
		for (LLVMValueRef g = LLVMGetFirstGlobal(mods[i]); g; g = LLVMGetNextGlobal(g)) {
			size_t len;
			const char *nm = LLVMGetValueName2(g, &len);
			char *own = xasprintf("%.*s.%s", (int)len, nm, sec);

			LLVMSetValueName2(g, own, strlen(own));
			struct cg_linked l = { .name = own, .from = bc };
			DT_VEC_PUSH(&c->linked, l);
		}
		LLVMModuleRef m = mods[i];

		mods[i] = NULL;
		if (LLVMLinkModules2(c->mod, m)) { /* consumes m */
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"cannot link '%s' with the program: does another import define the "
				"same function?", bc->name);
			ret = -EINVAL;
		}
	}
	for (size_t i = first; i < c->linked.n; i++) {
		LLVMValueRef f = LLVMGetNamedFunction(c->mod, c->linked.v[i].name);
		LLVMValueRef g = f ? NULL : LLVMGetNamedGlobal(c->mod, c->linked.v[i].name);

		if ((f || g) && !LLVMIsDeclaration(f ? f : g))
			LLVMSetLinkage(f ? f : g, LLVMInternalLinkage);
	}
	for (uint32_t i = 0; i < n; i++)
		if (mods[i])
			LLVMDisposeModule(mods[i]);
	free(mods);
	for (size_t i = 0; i < defined.n; i++)
		free(defined.v[i]);
	free(defined.v);
	return ret;
}

const char *cg_link_passes(const cg *c)
{
	return c->linked.n ? "always-inline,globaldce," : NULL;
}

int cg_link_check(cg *c)
{
	int ret = 0;

	/* What of the linked C something still uses after the passes and the loader cannot give
	 * it: a function defined nowhere, data. */
	for (size_t i = 0; i < c->linked.n && !ret; i++) {
		const char *n = c->linked.v[i].name;
		const dt_cg_bitcode *bc = c->linked.v[i].from;
		LLVMValueRef f = LLVMGetNamedFunction(c->mod, n);
		LLVMValueRef g = f ? NULL : LLVMGetNamedGlobal(c->mod, n);

		if (f && LLVMIsDeclaration(f) && LLVMGetFirstUse(f) &&
		    !(c->env->kfunc_id && c->env->kfunc_id(c->env->ctx, n) > 0)) {
			/* A kernel function this kernel has (a kfunc) is called as such (cg_elf.c);
			 * whether the program type may call it is the verifier's to say. */
			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"%s: the code calls '%s', which no imported file defines and the "
				"kernel's BTF does not have", bc->name, n);
			dt_diag_hint(c->diags, "define it in an imported .bpf.c, or call a kernel "
				     "function (a kfunc, declared __ksym) this kernel has");
			ret = -EINVAL;
		} else if (g && LLVMGetFirstUse(g)) {
			/* The name as the C has it: without this program's ".SECTION". */
			const char *sec = strstr(n, ".dt/");
			int len = (int)(sec ? (size_t)(sec - n) : strlen(n));

			dt_diag(c->diags, DT_DIAG_ERROR, bc->at,
				"%s: the code uses global data ('%.*s'), which dwarftrace cannot load",
				bc->name, len, n);
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
	const char *sec = LLVMGetSection(c->fn);
	char *own = x && sec ? xasprintf("%s.%s", x->name, sec) : NULL;
	LLVMValueRef fn = own ? LLVMGetNamedFunction(c->mod, own) : NULL;

	if (own && !fn && !link_copy(c, sec))
		fn = LLVMGetNamedFunction(c->mod, own);
	free(own);
	if (!fn) {
		if (!dt_diags_error_count(c->diags))
			cg_fail(c, e->span, "%s: the imported C function was not linked",
				e->call.name);
		c->err = c->err ? c->err : -EINVAL;
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

/* ctypes.c — the type source object: its lifetime, the per-compilation reset, and the lookup
 * order: the script's own C definitions first (a script may redefine any struct), then the
 * DWARF of the binaries its uprobes name, then kernel BTF. */
#include "ctypes/ctypes_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

dt_ctypes *dt_ctypes_new(const char *btf_dir)
{
	dt_ctypes *ct = xcalloc(1, sizeof(*ct));
	ct->dir = xstrdup(btf_dir ? btf_dir : "/sys/kernel/btf");
	return ct;
}

void dt_ctypes_free(dt_ctypes *ct)
{
	if (!ct)
		return;
	ct_clang_free(ct);
	ct_dwarf_free(ct);
	ct_btf_free(ct);
	for (size_t i = 0; i < ct->incdirs.n; i++)
		free(ct->incdirs.v[i]);
	for (size_t i = 0; i < ct->includes.n; i++)
		free(ct->includes.v[i]);
	free(ct->incdirs.v);
	free(ct->includes.v);
	free(ct->dir);
	free(ct);
}

void dt_ctypes_add_include_dir(dt_ctypes *ct, const char *dir)
{
	DT_VEC_PUSH(&ct->incdirs, xstrdup(dir));
}

void dt_ctypes_add_include(dt_ctypes *ct, const char *file)
{
	DT_VEC_PUSH(&ct->includes, xstrdup(file));
}

void ct_set_arena(dt_ctypes *ct, dt_arena *a)
{
	if (ct->arena == a)
		return;
	/* A new compilation: the types of the previous one went with its arena. */
	ct_btf_reset(ct);
	ct_clang_reset(ct);
	ct_dwarf_reset(ct);
	ct->arena = a;
}

int dt_ctypes_lookup(void *ctv, dt_arena *a, const char *name, const dt_type **out)
{
	dt_ctypes *ct = ctv;
	ct_set_arena(ct, a);
	int err = ct_clang_lookup(ct, name, out);
	if (err == -ENOENT)
		err = ct_dwarf_lookup(ct, name, out);
	if (err == -ENOENT)
		err = ct_btf_lookup(ct, name, out);
	return err;
}

int dt_ctypes_constant(void *ctv, dt_arena *a, const char *name, int64_t *out,
		       const dt_enum **enm)
{
	dt_ctypes *ct = ctv;
	ct_set_arena(ct, a);
	if (enm)
		*enm = NULL;
	int err = ct_clang_constant(ct, name, out, enm);
	return err == -ENOENT ? ct_btf_constant(ct, name, out, enm) : err;
}

int dt_ctypes_cdefs(void *ctv, dt_arena *a, dt_diags *d, const dt_program *p)
{
	dt_ctypes *ct = ctv;
	/* Every compilation starts here (dt_check calls this first), so the caches start empty
	 * even when the new arena has the address of a freed one. */
	ct->arena = NULL;
	ct_set_arena(ct, a);
	/* The binaries the uprobes name lend their DWARF types to casts. */
	for (uint32_t i = 0; i < p->nprobes; i++)
		for (uint32_t j = 0; j < p->probes[i]->nattach; j++) {
			const dt_attach *at = p->probes[i]->attach[j];
			if ((at->provider == DT_P_UPROBE || at->provider == DT_P_URETPROBE) &&
			    at->target && strchr(at->target, '/'))
				ct_dwarf_add_binary(ct, at->target);
		}
	return ct_clang_compile(ct, d, p);
}

int dt_ctypes_kernel_args(void *ctv, dt_arena *a, dt_provider p, const char *module,
			  const char *name, const dt_type **args, const dt_type **ret)
{
	dt_ctypes *ct = ctv;
	ct_set_arena(ct, a);
	return ct_btf_kernel_args(ct, p, module, name, args, ret);
}

int dt_ctypes_extern(void *ctv, dt_arena *a, const char *name, const dt_extern_fn **out)
{
	(void)a; /* made in the compilation's arena when dt_ctypes_cdefs read the file */
	return ct_clang_extern(ctv, name, out);
}

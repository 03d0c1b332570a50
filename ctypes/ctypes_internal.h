/* ctypes_internal.h — what the type source's files share: the dt_ctypes object (BTF sources and
 * caches in btf.c, the script's translation unit in clang.c) and the calls between them. */
#ifndef DT_CTYPES_INTERNAL_H
#define DT_CTYPES_INTERNAL_H

#include "ctypes/ctypes.h"
#include "common/common.h"

#include <stdio.h>

struct btf;
typedef struct ct_clang ct_clang;
typedef struct ct_dwarf ct_dwarf;
typedef struct dt_elf_cache dt_elf_cache;

/* One BTF object: vmlinux (index 0) or a module's, split on top of vmlinux. */
typedef struct btf_src {
	struct btf *btf;
	char *module;            /* a module's name; NULL for vmlinux */
	uint32_t first, end;     /* its own type ids: [first, end) */
	const dt_type **full;    /* by id - first: the converted type */
	dt_type **shell;         /* by id - first: the incomplete struct a pointer names */
} btf_src;

struct dt_ctypes {
	char *dir;
	bool loaded, modules_loaded;
	int load_err;
	DT_VEC(btf_src) srcs;
	dt_arena *arena;         /* the compilation the caches and the script's types belong to */
	ct_clang *cl;            /* libclang and the script's translation unit, when it has one */
	DT_VEC(char *) incdirs;  /* -I */
	DT_VEC(char *) includes; /* --include */
	DT_VEC(ct_dwarf *) dwarfs; /* binaries of the program's uprobes, DWARF opened on use */
};

/* ctypes.c: a new compilation (arena) drops the caches of the previous one. */
void ct_set_arena(dt_ctypes *ct, dt_arena *a);

/* btf.c */
/* Kernel type `name` from BTF, built in ct->arena. 0, -ENOENT, -ENODATA or -errno. */
int ct_btf_lookup(dt_ctypes *ct, const char *name, const dt_type **out);
/* Writes C definitions of kernel type `name` and of every type it needs to f (libbpf's
 * btf_dump), for script definitions that embed kernel structs. 0, -ENOENT or -errno. */
int ct_btf_dump_c(dt_ctypes *ct, const char *name, FILE *f);
/* The value of enumerator `name` in the kernel's BTF, and its enum. 0 or -ENOENT. */
int ct_btf_constant(dt_ctypes *ct, const char *name, int64_t *out, const dt_enum **enm);
/* The BTF prototype of a rawtracepoint/fentry/fexit/iter attach point (dt_check_opts.kernel_args). */
int ct_btf_kernel_args(dt_ctypes *ct, dt_provider p, const char *module, const char *name,
		       const dt_type **args, const dt_type **ret);
void ct_btf_reset(dt_ctypes *ct);
void ct_btf_free(dt_ctypes *ct);

/* dwarf.c */
/* Makes the types of the binary at `path` visible to lookups (its DWARF is read on a miss). */
void ct_dwarf_add_binary(dt_ctypes *ct, const char *path);
/* A struct, union, enum or typedef the binaries' DWARF defines. -ENOENT when none does. */
int ct_dwarf_lookup(dt_ctypes *ct, const char *name, const dt_type **out);
void ct_dwarf_reset(dt_ctypes *ct);
void ct_dwarf_free(dt_ctypes *ct);

/* clang.c */
/* Compiles the program's C definitions and --include files (nothing to do without them). 0, or
 * -EINVAL with clang's first error in d. */
int ct_clang_compile(dt_ctypes *ct, dt_diags *d, const dt_program *p);
/* A type the script's C definitions (or their headers) declare. -ENOENT when they do not. */
int ct_clang_lookup(dt_ctypes *ct, const char *name, const dt_type **out);
/* An integer constant (enumerator or #define) of the script's C definitions, evaluated by
 * clang. 0, or -ENOENT. */
int ct_clang_constant(dt_ctypes *ct, const char *name, int64_t *out, const dt_enum **enm);
/* A function of the program's imported .bpf.c files. 0, or -ENOENT. */
int ct_clang_extern(dt_ctypes *ct, const char *name, const dt_extern_fn **out);
/* Drops the previous compilation's translation unit. */
void ct_clang_reset(dt_ctypes *ct);
void ct_clang_free(dt_ctypes *ct);

#endif

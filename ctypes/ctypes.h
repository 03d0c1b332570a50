/* ctypes.h — the C type source: names a script uses without defining them ("struct
 * task_struct", "union bpf_attr", "pid_t") become lang's C types (pointers, structs and unions
 * with members at offsets and bitfields, arrays, enums as integers). Kernel types come from BTF
 * through libbpf: /sys/kernel/btf/vmlinux, read once per run and only when a script first asks
 * for a type, then the kernel modules' BTF for names vmlinux does not have. Struct members that
 * are pointers to structs stay unexpanded (named, incomplete) until the script looks into them,
 * so `curtask->pid` converts task_struct and the structs embedded in it, not the kernel. */
#ifndef DT_CTYPES_H
#define DT_CTYPES_H

#include "lang/lang.h"

typedef struct dt_ctypes dt_ctypes;

/* A type source over the running kernel's BTF. `btf_dir` overrides /sys/kernel/btf (tests);
 * NULL for the default. Nothing is read until the first lookup. Never NULL. */
dt_ctypes *dt_ctypes_new(const char *btf_dir);
void dt_ctypes_free(dt_ctypes *ct);

/* Looks a type up by its C spelling ("struct sock", "union bpf_attr", "enum pid_type",
 * "pid_t") and builds it in arena `a` (types of one arena are shared between lookups, so a
 * struct named twice is one dt_type). 0; -ENOENT when no BTF has it; -ENODATA when the kernel
 * has no BTF file; another -errno when it cannot be read. Fits dt_check_opts.ctype with ct as
 * its ctx. */
int dt_ctypes_lookup(void *ct, dt_arena *a, const char *name, const dt_type **out);

#endif

/* ctypes.h — the C type source: names a script uses ("struct task_struct", "union bpf_attr",
 * "pid_t"), from its own C definitions or the kernel's BTF, become lang's C types (pointers, structs and unions
 * with members at offsets and bitfields, arrays, enums as integers). A uprobe's binary gives its
 * functions' parameters and its own types from DWARF (libdw). Kernel types come from BTF
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

/* Compiles a program's C definitions (dt_program.cdecls) with libclang — loaded with dlopen on
 * the first program that has some, so start-up never pays for it — on an in-memory file: the
 * real preprocessor (#include, #define, #if) and parser, layouts as clang computes them.
 * Kernel structs the definitions use without defining are supplied from BTF. Lookups of this
 * compilation (arena a) then see these types before the kernel's. Clang's first error goes
 * into d at its place in the script. A program without definitions (and no --include) costs
 * nothing. 0 or -EINVAL. Fits dt_check_opts.cdefs. */
int dt_ctypes_cdefs(void *ct, dt_arena *a, dt_diags *d, const dt_program *p);

/* The parameters of function `func` in the binary at `path`, from its DWARF, as a struct whose
 * member i (at offset 8 * i) is parameter i with its name and type: what `args` is in a uprobe.
 * 0; -ENOENT when the function is not in the DWARF; -ENODATA when the binary has none; -ENOLINK
 * when it is not found and the DWARF is split into files that could not be read. */
int dt_ctypes_uprobe_args(void *ct, dt_arena *a, const char *path, const char *func,
			  const dt_type **out);

/* The value of a bare name a script uses as a number: an enumerator or integer #define of its
 * C definitions and their headers (clang evaluates it), else an enumerator of kernel BTF;
 * *enm gets an enumerator's enum (NULL for a #define). 0 or -ENOENT. Fits
 * dt_check_opts.constant with ct as its ctx. */
int dt_ctypes_constant(void *ct, dt_arena *a, const char *name, int64_t *out,
		       const dt_enum **enm);
/* The BTF prototype of a kernel attach point, as dt_check_opts.kernel_args wants it (ct as its
 * ctx): a raw tracepoint's arguments (btf_trace_NAME), a function's parameters and return type
 * (fentry/fexit), an iterator's context (iter). A module's BTF is read when `module` names one. */
int dt_ctypes_kernel_args(void *ct, dt_arena *a, dt_provider p, const char *module,
			  const char *name, const dt_type **args, const dt_type **ret);

/* The FUNC_PROTO id of raw tracepoint `name` in `btf`, its parameters named when the kernel
 * says their names: the probe function __bpf_trace_NAME (an event of its own class), else
 * __probestub_NAME (every event, Linux 6.4+: an event defined from a class, DEFINE_EVENT, has
 * no probe function of its own), else the typedef btf_trace_NAME (unnamed). The first parameter
 * is the tracepoint's data pointer, not an argument. 0 when there is none. */
struct btf;
uint32_t dt_btf_rawtp_proto(const struct btf *btf, const char *name);

/* A function an imported .bpf.c defines (dt_ctypes_cdefs read it with libclang): its return
 * and parameter types. 0 or -ENOENT. Fits dt_check_opts.extern_fn with ct as its ctx. */
int dt_ctypes_extern(void *ct, dt_arena *a, const char *name, const dt_extern_fn **out);

/* Compiles imported .bpf.c `c` with clang to LLVM bitcode for the BPF target (*bc, *len:
 * malloc'd), with the flags libclang read it with: codegen links it into the programs that call
 * its functions. 0, or a negative errno with a diagnostic at the import. */
int dt_ctypes_bpf_bitcode(dt_ctypes *ct, const dt_source_cimport *c, dt_diags *d, void **bc,
			  size_t *len);

/* `-I DIR` and `--include FILE` for the C definitions, as bpftrace has them. */
void dt_ctypes_add_include_dir(dt_ctypes *ct, const char *dir);
void dt_ctypes_add_include(dt_ctypes *ct, const char *file);

#endif

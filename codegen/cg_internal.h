/* cg_internal.h — what the codegen files share: the per-compilation state (one LLVM context,
 * module and builder per dt_codegen call), the per-function state of the program being emitted,
 * and the small IR-building vocabulary (helper calls, map references, buffers, integer loads and
 * stores, loss counters, events) the expression and statement emitters are written in. Values in
 * the generated IR are either an i64 (integers, ksym addresses) or an i8* to a buffer that holds
 * the value in its dt_type layout (strings, tuples, stack refs, usym). */
#ifndef DT_CG_INTERNAL_H
#define DT_CG_INTERNAL_H

#include "codegen/codegen.h"
#include "bpf-lib/dt_abi.h"
#include "common/common.h"

#include <llvm-c/Core.h>

/* Stack bytes a program may use for its buffers before the rest goes to the per-CPU scratch
 * map: the BPF stack is 512 bytes and LLVM needs some room for spills. */
#define CG_STACK_BUDGET 320
/* A program that runs a for loop's body as a callback: the verifier counts the caller's stack and
 * the callback's together against 512 bytes (combined stack size), which the backend, checking
 * each function alone, does not; the caller keeps less for buffers. */
#define CG_FOR_CALLER_BUDGET 192

/* Copies and clears of more bytes than this call the kernel's read helper: unrolled, a string
 * of max_strlen 10000 is thousands of instructions that LLVM takes seconds over. Below it
 * (every value of the default limits) they stay loads and stores. */
#define CG_BULK_BYTES 1024
/* String loops (strlen, ==, strncmp, strstr) over more bytes than this are real loops, which
 * the verifier bounds by walking them; below it they are unrolled. */
#define CG_UNROLL_BYTES 256

/* BPF jumps have 16-bit offsets, which LLVM's BPF backend truncates without a word: a program
 * of at most CG_MAX_JUMP instructions cannot have one out of range. cg_split.c keeps every
 * part under it, and codegen.c checks that it did. */
#define CG_MAX_JUMP 32767
/* Estimated instructions under one test of a split probe's guard (cg_stmt.c's emit_part). */
#define CG_GUARD_SPAN 4000

typedef struct cg_split cg_split; /* cg_split.c: a probe in parts */

typedef struct cg {
	const dt_program *prog;
	const dt_cg_env *env;
	dt_diags *diags;
	int err; /* first internal error: code generation stops emitting once set */
	dt_span at; /* the statement (or predicate) being emitted, for diagnostics about it */
	dt_span expr_at; /* the innermost expression being emitted (len 0 between statements) */
	uint32_t stack_budget; /* bytes of stack for buffers before scratch is used */
	uint32_t budget0;      /* the compile's budget, before a program's own (cg_emit_program) */

	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMTypeRef i1, i8, i16, i32, i64, i8p;
	LLVMValueRef pseudo_fn;
	LLVMTypeRef pseudo_ty;

	/* The function being emitted. */
	LLVMValueRef fn;
	LLVMBasicBlockRef allocas;  /* entry block: allocas only, branches to `prologue` at the end */
	LLVMBasicBlockRef prologue; /* scratch lookup, filled in when the function is finished */
	LLVMBasicBlockRef body;
	LLVMValueRef ctxp;          /* the program's context argument (i8*) */
	const dt_probe *probe;
	const dt_attach *attach;    /* the first of the set the program serves */
	const dt_attach *const *set;
	uint32_t nset;
	enum bpf_prog_type ptype;
	bool is_cont;
	LLVMValueRef *vars;         /* one alloca per dt_var_sym (i64 for ints, else a buffer) */
	uint32_t stack_used, scratch_used;
	/* Array-map values the function looks up once, in its prologue (cg_prologue_ptr): each
	 * pointer lives in an i8** alloca that mem2reg turns into a register. */
	struct cg_pro { dt_aux_map which; uint32_t key; LLVMValueRef slot; } pro[DT_STAT__COUNT + 8]; /* counters, scratch values */
	uint32_t npro;
	LLVMValueRef dwarf_ref;     /* continuation: i8* to the walker's result stack ref */
	LLVMValueRef frame;         /* a probe in parts: i8* to its frame (cg_split.c) */
	LLVMBasicBlockRef loop_break, loop_cont; /* the innermost while loop's exits (else NULL) */
	/* In a for loop's callback (cg_stmt.c): the caller's "returned" flag, an i8* to its
	 * context's first slot (NULL elsewhere). With no while loop around, break returns 1 from
	 * the callback, continue 0; return sets the flag and returns 1. */
	LLVMValueRef for_ret;
	LLVMValueRef key32;         /* i64 alloca used as the u32 key of array-map lookups */
	/* Stack buffers, reused from one statement to the next (a statement's temporaries are
	 * dead when it ends; values that outlive it are in variables or maps). Slots below
	 * `pool_from` (variables, the walker result) are never reused. */
	DT_VEC(struct cg_slot { LLVMValueRef a; uint32_t size; bool busy; }) slots;
	size_t pool_from;
	uint32_t scratch_base;
	/* Subprograms of the program being emitted (cg_stmt.c's agg_sub): one BPF-to-BPF function
	 * per aggregation kind and value size, in the program's section after it. */
	struct cg_sub { uint32_t kind, value_size; LLVMValueRef fn; } subs[16];
	uint32_t nsubs;
	/* The functions and data of the imported .bpf.c files linked into mod (cg_link.c), by
	 * their names there, and the import each came from. */
	DT_VEC(struct cg_linked { char *name; const dt_cg_bitcode *from; }) linked;
	const char *calls_c; /* the function being emitted calls a function of this .bpf.c */
} cg;

/* cg_link.c: imported C. The passes to run before CG_PASSES when C was linked: its functions
 * inlined, the rest dropped. NULL when nothing was linked. */
const char *cg_link_passes(const cg *c);
/* After those passes: an error at the import for global data of the C, or a function it
 * declares but no file defines, still used. 0 or -EINVAL. */
int cg_link_check(cg *c);
/* A call of an imported C function (DT_F_EXTERN), to the calling program's own copy of the C
 * (linked at its first call): arguments converted to its parameters. */
LLVMValueRef cg_extern_call(cg *c, const dt_expr *e);

/* Reports an internal error once (a diagnostic at `at`) and makes cg->err non-zero. */
void cg_fail(cg *c, dt_span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for a limit of generated code that the script itself exceeds (a huge string, too
 * many printf arguments): a plain error with `hint`, not a bug report. */
void cg_limit(cg *c, dt_span at, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The caller's state while a subprogram is built, and where its builder was. */
typedef struct cg_saved {
	cg c;
	LLVMBasicBlockRef from;
} cg_saved;
/* cg_stmt.c: starts function `name` of type `fty` in the program's section and points c at
 * it, with the same vocabulary (buffers, the prologue's lookups) as a program; cg_fn_close
 * finishes it and gives c back to the caller where it was. */
LLVMValueRef cg_fn_open(cg *c, const char *name, LLVMTypeRef fty, cg_saved *saved);
void cg_fn_close(cg *c, cg_saved *saved);

/* ------------------------------------------------------------ cg_ir.c: IR vocabulary */

LLVMValueRef cg_i64(cg *c, uint64_t v);
LLVMValueRef cg_i32(cg *c, uint32_t v);
/* A new basic block at the end of the current function. */
LLVMBasicBlockRef cg_block(cg *c, const char *name);
/* Calls BPF helper `id`; the argument types are those of `args`. */
LLVMValueRef cg_helper(cg *c, int id, LLVMTypeRef ret, LLVMValueRef *args, unsigned n);
/* An i8* that the BPF backend emits as ld_imm64 BPF_PSEUDO_MAP_FD. */
LLVMValueRef cg_map_ref(cg *c, int fd);
int cg_aux_fd(cg *c, dt_aux_map which, dt_stack_kind kind, uint32_t depth);
int cg_script_map_fd(cg *c, const dt_map_sym *m);
/* dt_cg_env.helper_allowed for this program's type: > 0 yes, 0 no, < 0 unknown (no callback). */
int cg_helper_allowed(cg *c, int helper);
/* A zero-initialised buffer of `size` bytes (8-aligned), on the stack or in per-CPU scratch. */
LLVMValueRef cg_buf(cg *c, uint32_t size);
/* A buffer with no initialisation (the caller writes every byte before use). */
LLVMValueRef cg_buf_raw(cg *c, uint32_t size);
LLVMValueRef cg_alloca_i64(cg *c);
/* `size` bytes (8-aligned, uninitialised) always on the stack, for helpers that take only a
 * stack pointer (a callback's context). */
LLVMValueRef cg_alloca_stack(cg *c, uint32_t size);
/* A stack u32 key holding v, for array-map lookups (stats, scratch, walker state). */
LLVMValueRef cg_key32(cg *c, uint32_t v);
LLVMValueRef cg_gep(cg *c, LLVMValueRef p, uint32_t off);
void cg_memset0(cg *c, LLVMValueRef p, uint32_t size);
/* Copies size bytes from src+soff to dst+doff; dst and src are 8-aligned bases. */
void cg_memcpy(cg *c, LLVMValueRef dst, uint32_t doff, LLVMValueRef src, uint32_t soff,
	       uint32_t size);
/* Loads an integer of `size` bytes at p+off, extended to i64 by signedness. */
LLVMValueRef cg_load_int(cg *c, LLVMValueRef p, uint32_t off, uint32_t size, bool is_signed);
/* A load from the context (c->ctxp + off) the verifier accepts wherever LLVM moves it. */
LLVMValueRef cg_ctx_load(cg *c, uint32_t off, uint32_t size, bool is_signed);
void cg_store_int(cg *c, LLVMValueRef p, uint32_t off, uint32_t size, LLVMValueRef v);
/* Adds one to loss counter `stat` in DT_AUX_STATS. */
void cg_stat_inc(cg *c, enum dt_stat stat);
/* Counts `stat` when the helper result r (i64) is negative; the builder goes on after it. */
void cg_count_if_negative(cg *c, LLVMValueRef r, enum dt_stat stat);
/* This CPU's value at `key` of array map `which` (DT_AUX_SCRATCH, DT_AUX_STATS), looked up
 * once per function in its prologue, which returns 0 should the lookup fail. */
LLVMValueRef cg_prologue_ptr(cg *c, dt_aux_map which, uint32_t key);
/* Emits the prologue's lookups and its branch to the body (finish_function). */
void cg_emit_prologue(cg *c);
/* Emits `return 0` (in a for loop's callback: the return from the probe, see for_ret) and
 * leaves the builder in a fresh unreachable block. */
void cg_return(cg *c);
/* Returns v (an i64) from the program: `return EXPR;`. */
void cg_return_value(cg *c, LLVMValueRef v);
/* Builds the string constant `s` (NUL-padded to size) in a new buffer with integer stores. */
LLVMValueRef cg_const_str(cg *c, const char *s, uint32_t len, uint32_t size);
/* Where an event's payload starts in a cg_event_new buffer: after its struct dt_event_hdr. */
#define CG_EV_PAYLOAD ((uint32_t)sizeof(struct dt_event_hdr))
/* A zeroed event buffer of CG_EV_PAYLOAD + payload bytes with its header written. */
LLVMValueRef cg_event_new(cg *c, uint32_t kind, uint32_t id, uint32_t payload);
/* -k/-kk: when helper `id` returned an error in r (a NULL pointer when `is_ptr`), send a
 * DT_EV_HELPER_ERROR naming the expression (or statement) being emitted, if env->helper_check
 * is at least `level`. */
void cg_helper_check(cg *c, LLVMValueRef r, int id, bool is_ptr, uint32_t level);
/* Sends a DT_EV_RUNTIME_ERROR `id` (enum dt_runtime_error) naming the expression (or
 * statement) being emitted. */
void cg_runtime_error(cg *c, uint32_t id);
/* Reads size bytes (a string: up to len or size, NUL-ended) through pointer ptr of type t, from
 * the address space t names, else the one the probe type makes likely, then the other. */
void cg_read_ptr(cg *c, LLVMValueRef dst, uint32_t size, LLVMValueRef len, LLVMValueRef ptr,
		 const dt_type *t, bool str);
/* Copies the event at `buf` (its header and `payload` bytes after it) to the ring buffer;
 * counts a loss. */
void cg_event_output(cg *c, LLVMValueRef buf, uint32_t payload);
/* Map helpers; key/value are i8* buffers. Lookup returns i8* (NULL when absent). */
LLVMValueRef cg_map_lookup(cg *c, LLVMValueRef map, LLVMValueRef key);
/* Update with BPF_ANY; a failure counts DT_STAT_MAP_FULL. */
LLVMValueRef cg_map_update(cg *c, LLVMValueRef map, LLVMValueRef key, LLVMValueRef val);
LLVMValueRef cg_map_delete(cg *c, LLVMValueRef map, LLVMValueRef key);
/* Branches to `t` when p is non-NULL, else to `f`. */
void cg_br_nonnull(cg *c, LLVMValueRef p, LLVMBasicBlockRef t, LLVMBasicBlockRef f);

/* Marks every statement temporary free again (called at the start of each statement). */
void cg_release_temps(cg *c);
/* Everything allocated so far is permanent for the function (variables). */
void cg_pin_temps(cg *c);

/* ------------------------------------------------------------ cg_expr.c: expressions */

/* True when values of `t` are i64 in the IR; otherwise they are i8* buffers of t->size bytes. */
bool cg_is_scalar(const dt_type *t);
/* Evaluates e: i64 for scalar types, else an i8* buffer. NULL after an internal error. */
LLVMValueRef cg_expr(cg *c, const dt_expr *e);
/* Evaluates e to an i1 truth value. */
LLVMValueRef cg_cond(cg *c, const dt_expr *e);
/* Stores value `v` of type `src` at base+off (base 8-aligned) laid out as `dst` (sizes may
 * differ: strings are truncated or NUL-padded, tuples converted element by element). */
void cg_store(cg *c, LLVMValueRef base, uint32_t off, const dt_type *dst, LLVMValueRef v,
	      const dt_type *src);
/* Evaluates e straight into base+off laid out as dst, which must be zeroed memory that e does not
 * read (a fresh tuple or key buffer): the elements of a tuple literal are written where they go,
 * each nested tuple in place rather than in a buffer of its own that is then copied. So a tuple
 * nested n deep costs its own bytes, not n copies, and only the outermost buffer's pointer stays
 * live while the elements (helper calls, with BPF's four callee-saved registers) are evaluated:
 * a pointer per level, spilled, once overflowed the 512-byte stack. */
void cg_store_expr(cg *c, LLVMValueRef base, uint32_t off, const dt_type *dst, const dt_expr *e);
/* Loads a value of type t from memory into the IR representation (copying buffers). */
LLVMValueRef cg_load(cg *c, LLVMValueRef p, const dt_type *t);
/* Builds the key buffer of map m for `keys` (layout.key_size bytes, bucket suffix zero). */
LLVMValueRef cg_map_key(cg *c, const dt_map_sym *m, dt_expr *const *keys, uint32_t nkeys,
			const dt_map_layout *lay);
/* Integer binary operator (arithmetic, bitwise, shifts). Division and remainder by 0 give 1
 * and send a DT_EV_RUNTIME_ERROR at the expression being emitted (bpftrace's rule), unless r
 * is a constant that is not 0 (cg_div_may_warn). */
LLVMValueRef cg_arith(cg *c, dt_binop op, LLVMValueRef l, LLVMValueRef r, bool is_signed);
/* Division (or remainder) with C's signed semantics when is_signed; r must not be 0. */
LLVMValueRef cg_divmod(cg *c, LLVMValueRef l, LLVMValueRef r, bool is_signed, bool mod);
/* x++, --x, … on a variable or a map element; the value of the expression. */
LLVMValueRef cg_incdec(cg *c, const dt_expr *target, bool inc, bool post);
/* printf, print, clear, zero, delete, exit, time (cg_stmt.c). */
LLVMValueRef cg_call_action(cg *c, const dt_expr *e);
/* The stack reference of a kstack/ustack/ustack_dwarf expression, as a struct dt_stack_ref
 * buffer. */
LLVMValueRef cg_stack_ref(cg *c, const dt_expr *e);
/* The kind and depth (never 0) of the stack a kstack/ustack/ustack_dwarf expression takes. */
void cg_stack_shape(const dt_expr *e, dt_stack_kind *kind, uint32_t *depth);

/* ------------------------------------------------------------ cg_cmem.c: C values in memory */

/* Where cg_read looks: one address space, or one and then the other after a fault. */
typedef enum cg_space {
	CG_READ_USER,
	CG_READ_KERNEL,
	CG_READ_USER_FIRST,
	CG_READ_KERNEL_FIRST,
} cg_space;
/* The one reader of memory the program does not own: size bytes (or `len`, a value the verifier
 * sees bounded by size, when not NULL) at the address addr (i64) into dst, with
 * bpf_probe_read_user/_kernel (their _str forms when `str`: stops at the NUL). A fault leaves
 * zeros (an empty string) and counts DT_STAT_READ_FAIL. */
void cg_read(cg *c, LLVMValueRef dst, uint32_t size, LLVMValueRef len, LLVMValueRef addr,
	     cg_space sp, bool str);
/* The value of a struct member, `*p` or an index expression (its bytes read from where it
 * lives): an i64 for ints and pointers, a buffer for strings, structs and arrays. */
LLVMValueRef cg_cmem_value(cg *c, const dt_expr *e);
/* len(@m): the number of elements of script map m (cg_stmt.c). */
LLVMValueRef cg_map_len(cg *c, const dt_map_sym *m);
/* The value at key of a per-CPU aggregation map m (count, sum, min, max, avg), combined over the
 * CPUs as the printer combines it (bpf_map_lookup_percpu_elem, 5.19+); 0 when absent. */
LLVMValueRef cg_percpu_value(cg *c, const dt_map_sym *m, LLVMValueRef key);
/* The kernel address of the C struct member, `*p` or index expression e (no read). */
LLVMValueRef cg_cmem_addr(cg *c, const dt_expr *e);
LLVMValueRef cg_cast(cg *c, const dt_expr *e);
/* `args.NAME` of a uprobe: a parameter, in a register rather than in memory. */
bool cg_is_uprobe_arg(const dt_expr *e);
/* Integer argument n of a kprobe/uprobe from its register, narrowed to t (cg_expr.c). */
LLVMValueRef cg_arg_reg(cg *c, uint32_t n, const dt_type *t, dt_span at);
/* What `p + 1` adds to a pointer of type t: its pointee's size (1 for void *). */
uint32_t cg_ptr_step(const dt_type *t);

/* ------------------------------------------------------------ cg_stmt.c: statements, programs */

void cg_stmts(cg *c, const dt_stmt_list *l);
/* Emits one program function into the module, in ELF section `section`: pg's entry,
 * continuation or later part; of a probe in parts (split->nparts), part `part`, which
 * tail-calls chain slot `next_slot` at its end (-1: the last part). */
void cg_emit_program(cg *c, const dt_cg_prog *pg, const char *section, const cg_split *split,
		     uint32_t part, int next_slot);
/* A set of syscall tracepoints: raw_syscalls may serve it (dt_abi.h, DT_COOKIE_SYSCALLS). */
bool cg_is_syscall_set(const cg *c);
/* The slot (u32 in an i64) of the attach point of the set that fired, from the bpf cookie; in a
 * syscall set served by raw_syscalls, from the unit's syscall map, NULL there when the syscall
 * is not in the set (`absent` then receives control). */
LLVMValueRef cg_set_slot(cg *c, LLVMBasicBlockRef absent);

/* ------------------------------------------------------------ cg_resources.c, codegen.c */

/* Whether `x op divisor` is a division or remainder whose divisor may be 0 at run time (not an
 * integer literal), which cg_arith checks: the result is then 1 and a DT_EV_RUNTIME_ERROR
 * warns (bpftrace's rule), so the program needs the events ring. */
bool cg_div_may_warn(dt_binop op, const dt_expr *divisor);
/* Whether e indexes a C array of known size by an index that is not a literal, which the read
 * checks: past the last element a DT_EV_RUNTIME_ERROR warns (bpftrace's rule), so the program
 * needs the events ring. */
bool cg_index_may_warn(const dt_expr *e);

/* Calls fn on every expression of a probe's predicate and body, each before its operands,
 * including those of unrolled and untaken branches: what a probe may evaluate. */
void cg_visit_probe(const dt_probe *p, void (*fn)(void *ctx, const dt_expr *e), void *ctx);
/* Whether probe p runs a for loop anywhere (a block expression of a macro included). */
bool cg_probe_has_for(const dt_probe *p);
/* The same for a list of statements. */
void cg_visit_stmts(const dt_stmt_list *l, void (*fn)(void *ctx, const dt_expr *e), void *ctx);
/* The same for one expression (NULL: nothing). */
void cg_visit_expr(const dt_expr *e, void (*fn)(void *ctx, const dt_expr *e), void *ctx);

/* ------------------------------------------------------------ cg_split.c: probes in parts */

/* The values of a flag (one per nesting depth of the large ifs of a split probe). */
enum { CG_FLAG_OFF = 0, CG_FLAG_THEN = 1, CG_FLAG_ELSE = 2 };

/* One step of a split probe's body: a statement, or (stmt NULL) a flag step that sets flag
 * `flag` from `cond`. It runs when `guard` < 0, or when flag `guard` holds `want`; a flag step
 * whose guard does not hold sets CG_FLAG_OFF. */
typedef struct cg_unit {
	const dt_stmt *stmt;
	const dt_expr *cond;
	uint32_t flag;
	int guard;
	uint8_t want;
	uint32_t weight;        /* estimated instructions */
} cg_unit;

/* How a probe runs: whole (nparts 0), or in parts, part k running units
 * [k ? part_end[k - 1] : 0, part_end[k]), with what lives across parts in the frame. */
struct cg_split {
	cg_unit *units;
	uint32_t nunits;
	uint32_t *part_end;
	uint32_t nparts;
	uint32_t *var_off;        /* frame offset of each $variable (dt_probe.vars order) */
	uint32_t vars_size;       /* the $variables take [0, vars_size) */
	uint32_t dwarf_off;       /* the continuation's copy of the walker's stack ref */
	uint32_t flags_off;       /* flag d at flags_off + 8 * d */
	uint32_t frame_size;
};

/* Plans probe p of prog (checked): whole when it fits one program, else its parts. 0, or
 * -EINVAL with a diagnostic for what no split can fit (a statement referencing more maps than
 * a program may, a probe past the longest chain). Free with cg_split_fini. */
int cg_split_probe(const dt_program *prog, const dt_probe *p, dt_diags *d, cg_split *out);
void cg_split_fini(cg_split *s);
/* The DT_AUX_FRAME key of a program type (one frame per type: see codegen.h). */
uint32_t cg_frame_key(enum bpf_prog_type t);
/* The BPF program type a probe of this provider compiles to (BPF_PROG_TYPE_UNSPEC: none). */
enum bpf_prog_type cg_prog_type_of(dt_provider p);
/* The program type of one attach point of a probe: cg_prog_type_of's, but a rawtracepoint of a
 * probe the checker made tp_btf (dt_probe.rawtp_btf) is BPF_PROG_TYPE_TRACING. */
enum bpf_prog_type cg_prog_type_at(const dt_probe *pr, const dt_attach *a);

/* ------------------------------------------------------------ cg_xprobe.c */

/* wall, oncpu, offcpu, runq, blocked, iowait, nswitch: the xprobe's numbers for this call. */
bool cg_xprobe_is_builtin(dt_builtin b);
LLVMValueRef cg_xprobe_value(cg *c, const dt_expr *e);

/* ------------------------------------------------------------ cg_elf.c, cg_asm.c */

/* A copy (xmalloc'd, the caller frees) of the instructions of section `name` of the in-memory
 * ELF object, the addresses of its own functions (callbacks) and its calls of kernel functions
 * (kfuncs, by env->kfunc_id) resolved; -ENOTSUP for any other relocation, -ENOENT (*missing: its
 * name) for a kfunc the kernel does not have. */
int cg_elf_section(const void *obj, size_t len, const char *name, const dt_cg_env *env,
		   struct bpf_insn **insns, size_t *ninsns, const char **missing);
/* The first instruction of each function of a program (0 and each call's or callback's
 * target, ascending) when it passes a callback to a helper (xmalloc'd); NULL and 0 when not. */
void cg_func_starts(const struct bpf_insn *insns, size_t n, uint32_t **offs, uint32_t *nfuncs);
/* Appends a listing of `n` instructions to *out (xrealloc'd, NUL-terminated). */
void cg_disasm(const struct bpf_insn *insns, size_t n, const char *title, char **out,
	       size_t *len);

#endif

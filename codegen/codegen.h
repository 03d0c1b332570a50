/* codegen.h — turns a checked dt_program into BPF instructions through the LLVM-C API (target
 * `bpf`, CPU v3), in memory. It is the only module that includes llvm-c/. Maps are referenced by
 * file descriptor (ld_imm64 BPF_PSEUDO_MAP_FD via llvm.bpf.pseudo), so the session creates maps
 * first, hands their fds in through dt_cg_env, and gets back ready-to-load instruction arrays:
 * no ELF relocation step, and a REPL can compile new probes against maps that already live.
 * (BTF-defined maps through bpf_object__open_mem were the other road; they would need BTF emitted
 * for every generated map type and a libbpf object per compilation, and would make sharing live
 * maps across compilations a reuse_fd dance — fds are simpler and are what the session has.)
 *
 * The contract in two steps, so that no kernel object comes into being while code is generated:
 *   1. dt_cg_resources_of says, from the checked program alone, every auxiliary map and
 *      precompiled program (bpf-lib/) the generated code will reference.
 *   2. The caller creates, loads and attaches all of that, then calls dt_codegen, whose
 *      dt_cg_env.aux_fd only looks the fds up. Codegen never creates anything; a request for
 *      something step 1 did not name is a dwarftrace bug, reported as an internal error. */
#ifndef DT_CODEGEN_H
#define DT_CODEGEN_H

#include "lang/lang.h"

#include <linux/bpf.h>

/* Maps that do not belong to a script map but that generated code uses. */
typedef enum dt_aux_map {
	DT_AUX_EVENTS,      /* ring buffer of struct dt_event_hdr records */
	DT_AUX_STATS,       /* per-CPU array of enum dt_stat counters */
	DT_AUX_SCRATCH,     /* per-CPU array (dt_cg_scratch_shape): room for big keys/events */
	DT_AUX_STACKS,      /* stack-trace map for (stack kind, depth): dt_cg_resources.stacks */
	DT_AUX_WALKER_PROGS,/* prog array of the DWARF walker for this program type (ustack_dwarf) */
	DT_AUX_CONT_PROGS,  /* prog array of continuations the walker tail-calls */
	DT_AUX_WALKER_STATE,/* per-CPU walker state (bpf-lib/dt_walker.h) */
	DT_AUX_XPROBE_RESULT,/* per-CPU struct dt_xresult of the call an xprobe block runs for */
	/* The exec follower's maps (bpf-lib/dt_exec.h), which exec resets: */
	DT_AUX_PIDS_SEEN,   /* LRU hash: tgid (u32) -> when it last sent DT_EV_PID_SEEN (u64 ns) */
	DT_AUX_EXEC_GEN,    /* LRU hash: tgid (u32) -> address-space generation (u32), see dt_abi.h */
	DT_AUX_PROBE_NAMES, /* the unit's array of struct dt_probe_name by attach slot (dt_abi.h) */
	DT_AUX_SYSCALL_SLOTS,/* the unit's hash struct dt_syscall_key -> attach slot (u32) */
	/* A probe too large for one program runs as parts joined by tail calls (dt_cg_prog): */
	DT_AUX_CHAIN_PROGS, /* prog array of the parts, one per program type (dt_cg_env.chain_slot) */
	DT_AUX_SKB_OUTPUT,  /* perf event array of skboutput's packets (struct dt_skb_hdr first) */
	DT_AUX_FRAME,       /* per-CPU array of DT_CG_FRAME_KEYS values of dt_cg_frame_size bytes: what
			     * lives across the parts ($variables), one value per program type — a
			     * perf event interrupting a kprobe's chain on the same CPU has its own,
			     * and the kernel runs no second kprobe, tracepoint or perf_event program
			     * on a CPU while one runs there */
} dt_aux_map;

#define DT_CG_FRAME_SIZE 4096 /* at the default max_strlen; dt_cg_frame_size */
#define DT_CG_FRAME_KEYS 4
/* A frame's bytes for programs checked with max_strlen `strlen` (dt_program.strlen): a probe's
 * $variables (dt_limits.vars) and its split's flags, DT_CG_FRAME_SIZE at least. */
uint32_t dt_cg_frame_size(uint32_t strlen);

/* A statement's buffers that do not fit on the stack: the largest key, value and event lang
 * allows (DT_MAX_KEY_SIZE + DT_MAX_VALUE_SIZE + DT_MAX_EVENT_SIZE) with room for temporaries,
 * and a probe's $variables (DT_MAX_VARS_SIZE) besides. */
#define DT_SCRATCH_SIZE 8192
/* The scratch map for max_strlen `strlen`: `entries` values of `entry_size` bytes (a per-CPU
 * value is at most 32 KiB, so large strings take several, and no buffer spans two). Strings
 * within the fixed limits take one DT_SCRATCH_SIZE value. */
typedef struct dt_cg_scratch {
	uint32_t entry_size, entries;
} dt_cg_scratch;
dt_cg_scratch dt_cg_scratch_shape(uint32_t strlen);

/* One stack-trace map (DT_AUX_STACKS): BPF_MAP_TYPE_STACK_TRACE of `depth` u64 frames. */
typedef struct dt_cg_stack_need {
	dt_stack_kind kind;       /* DT_STACK_KERNEL or DT_STACK_USER_FP */
	uint32_t depth;           /* never 0 (DT_STACK_DEFAULT_DEPTH when the script says none) */
} dt_cg_stack_need;

/* Everything the code of a program will reference besides its script maps (step 1 above). Not
 * listed because every program may need them: DT_AUX_STATS (a failed map update, a lost event)
 * and DT_AUX_SCRATCH (a buffer that outgrows the stack, known only once LLVM has laid out the
 * stack). */
typedef struct dt_cg_resources {
	bool events;              /* DT_AUX_EVENTS: something is sent to userspace */
	bool user_addrs;          /* DT_AUX_EXEC_GEN and DT_AUX_PIDS_SEEN: user addresses recorded */
	bool xprobe_result;       /* DT_AUX_XPROBE_RESULT: xprobe builtins (wall, oncpu, …) */
	/* DT_AUX_WALKER_PROGS, DT_AUX_CONT_PROGS and DT_AUX_WALKER_STATE: bit 1 << prog_type for
	 * each BPF program type whose probes use ustack_dwarf (one walker per type). */
	uint64_t walker_prog_types;
	/* DT_AUX_CHAIN_PROGS: bit 1 << prog_type for each program type of a probe in parts. */
	uint64_t chain_prog_types;
	bool frame;               /* DT_AUX_FRAME: some probe is in parts */
	dt_cg_stack_need *stacks; /* each (kind, depth) once */
	uint32_t nstacks;
	bool probe_names;         /* DT_AUX_PROBE_NAMES: a program serves a set of attach points */
	bool syscall_slots;       /* DT_AUX_SYSCALL_SLOTS: one of them, a set of syscall tracepoints */
	bool skb_output;          /* DT_AUX_SKB_OUTPUT: skboutput() */
} dt_cg_resources;

/* Fills *r for `p` (checked, without errors); free with dt_cg_resources_fini. Also decides
 * which probes run in parts: 0, or -EINVAL with a diagnostic in `d` for a probe that cannot
 * be built within the kernel's limits (too many maps in one statement, too large). */
int dt_cg_resources_of(const dt_program *p, dt_cg_resources *r, dt_diags *d);
void dt_cg_resources_fini(dt_cg_resources *r);
/* Whether r names what a dt_cg_env.aux_fd call with these arguments asks for (DT_AUX_STATS and
 * DT_AUX_SCRATCH always): the answer of a lookup written against r, for tests and fuzzers that
 * hold codegen to step 1. */
bool dt_cg_resources_name(const dt_cg_resources *r, dt_aux_map which, dt_stack_kind kind,
			  uint32_t depth, enum bpf_prog_type prog_type);

/* An imported .bpf.c compiled to LLVM bitcode for the BPF target (runtime: dt_ctypes_bpf_bitcode). */
typedef struct dt_cg_bitcode {
	const char *name;         /* as imported, for messages */
	dt_span at;               /* the import */
	const void *data;
	size_t len;
} dt_cg_bitcode;

/* What codegen needs from the session. */
typedef struct dt_cg_env {
	size_t sz;
	void *ctx;
	/* fd of the BPF map holding script map `m` (created with dt_map_layout_of). */
	int (*map_fd)(void *ctx, const dt_map_sym *m);
	/* fd of an auxiliary map prepared from dt_cg_resources_of; for DT_AUX_STACKS, `kind`/`depth`
	 * select the stack-trace map; for the walker maps, `prog_type` selects the walker loaded for
	 * that program type. A lookup, never a creation: a negative errno for anything not prepared
	 * (codegen then reports an internal error). */
	int (*aux_fd)(void *ctx, dt_aux_map which, dt_stack_kind kind, uint32_t depth,
		      enum bpf_prog_type prog_type);
	/* Reserve a slot in DT_AUX_CONT_PROGS for a continuation; the session fills it after load. */
	int (*cont_slot)(void *ctx);
	/* Boot-relative nanoseconds at session start, for `elapsed`. */
	uint64_t start_ns;
	/* CLOCK_REALTIME - CLOCK_BOOTTIME at session start: tseries' time is boot time plus this,
	 * so its intervals are wall-clock intervals (bpftrace's sw_tai). */
	uint64_t wall_offset_ns;
	/* `cpid`: the -c command's pid (0 without one); `ncpus`: the possible CPUs. */
	uint32_t cpid, ncpus;
	/* dwarftrace's pid namespace (the device and inode of /proc/self/ns/pid) when it is not the
	 * initial one: `pid`/`tid` (= pid(curr_ns)) are then read as that namespace numbers them.
	 * 0: the initial namespace, where curr_ns and init are the same. */
	uint64_t pidns_dev, pidns_ino;
	/* pid filter from -p (0 = none): every probe but BEGIN, END and interval gets
	 * `pid == filter_pid` prepended. */
	uint32_t filter_pid;
	/* cgroup filter from -c (0 = none): every probe but BEGIN, END and interval gets
	 * `bpf_get_current_cgroup_id() == filter_cgroup` prepended, so the command and everything
	 * it starts are traced, and nothing else. */
	uint64_t filter_cgroup;
	/* Keep textual IR / assembly for -d ir / -d asm. */
	bool want_ir, want_asm;
	/* Reserve a slot in DT_AUX_CHAIN_PROGS for a part; the session fills it after load. */
	int (*chain_slot)(void *ctx);
	/* -k (1): a failed map update or delete sends a DT_EV_HELPER_ERROR; -kk (2): also a map
	 * read that finds nothing and a failed read of memory (bpftrace's levels). */
	uint32_t helper_check;
	/* Whether the kernel lets a program of type prog_type call BPF helper `helper` (for helpers
	 * a kernel may withhold, such as bpf_probe_write_user): > 0 yes, 0 no, < 0 unknown. NULL:
	 * assumed yes. */
	int (*helper_allowed)(void *ctx, enum bpf_prog_type prog_type, int helper);
	/* The program's imported .bpf.c files: linked into the module, and every function a
	 * script calls (DT_F_EXTERN) inlined into the program that calls it, with what it calls
	 * in turn. A function that cannot be inlined (recursion, a callback) or global data
	 * (string constants, variables, maps) is an error at the import. */
	const dt_cg_bitcode *bitcode;
	uint32_t nbitcode;
	/* The vmlinux BTF id of kernel function `name` that a program calls as a kfunc (comm(pid)'s
	 * bpf_task_from_pid), or -errno (-ENOENT: this kernel has no such function). NULL: none. */
	int (*kfunc_id)(void *ctx, const char *name);
	/* The unit the program is compiled for: skboutput's header names it (dt_skb_hdr). */
	uint32_t unit;
} dt_cg_env;

/* One loadable program: one per (probe, set of attach points), plus a continuation when the probe
 * uses ustack_dwarf, plus the later parts of a probe too large for one program (the first part —
 * the entry, or the continuation — tail-calls the second, and so on). A set is a run of a
 * probe's attach points that attach the same way — uprobes or uretprobes of one binary,
 * tracepoints of one subsystem — so that one program serves a whole wildcard: `func` and
 * `probe` then come from the bpf cookie (see dt_abi.h's dt_probe_name); every other attach
 * point is a set of one. */
typedef struct dt_cg_prog {
	const dt_probe *probe;
	const dt_attach *attach;  /* the first of the set */
	const dt_attach *const *set; /* the set's attach points (the probe's attach array) */
	uint32_t nset;
	enum bpf_prog_type prog_type;
	enum bpf_attach_type expected_attach_type;
	char name[16];            /* BPF object name, e.g. "p0_profile" */
	struct bpf_insn *insns;
	size_t ninsns;
	/* The first instruction of each of its functions (0, then each subprogram's), when it
	 * passes one of them to a helper as a callback (a for loop): the kernel then wants BTF
	 * func_info naming every function (runtime's loader makes it). NULL, 0 otherwise. */
	uint32_t *func_offs;
	uint32_t nfuncs;
	bool is_continuation;     /* tail-called by the walker, never attached */
	int cont_slot;            /* the entry program: slot in DT_AUX_CONT_PROGS of its continuation; -1 */
	int chain_slot;           /* a later part: its slot in DT_AUX_CHAIN_PROGS, never attached; -1 */
	const char *imported_c;   /* it runs code of this imported .bpf.c (the verifier judges it
	                           * as written); NULL */
} dt_cg_prog;

typedef struct dt_cg_result {
	dt_cg_prog *progs;
	uint32_t nprogs;
	char *ir;                 /* -d ir: textual LLVM IR, or NULL */
	char *asm_text;           /* -d asm: BPF assembly, or NULL */
} dt_cg_result;

/* Whether attach point b joins the set that attach point a starts (the next of a probe's attach
 * points): uprobes, uretprobes and tracepoints of one target. */
bool dt_cg_same_set(const dt_attach *a, const dt_attach *b);

/* Generates every program of `p` (checked, without errors), whose resources are prepared.
 * Internal failures (LLVM refusing IR, an aux map that was not prepared: our bugs) are reported
 * as a diagnostic at the probe's span and return a negative errno. */
int dt_codegen(const dt_program *p, const dt_cg_env *env, dt_cg_result **out, dt_diags *d);
void dt_cg_result_free(dt_cg_result *r);

/* One-time LLVM initialisation is done lazily by dt_codegen; this frees LLVM's global state. */
void dt_codegen_shutdown(void);

/* Whether byte `off` of x86-64 machine code `code` (len bytes, decoded from byte 0, a function's
 * start) begins an instruction: 1 yes, 0 it is inside one, -EILSEQ when the bytes before it do
 * not decode, -ENOTSUP without a disassembler. A uprobe placed inside an instruction corrupts it
 * in every process that runs it, so +OFFSET is checked with this first. */
int dt_cg_insn_boundary(const uint8_t *code, size_t len, uint64_t off);

#endif

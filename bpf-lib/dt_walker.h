/* dt_walker.h — the contract of the precompiled DWARF stack walker (bpf-lib/walker.bpf.c): the
 * per-CPU state a generated entry program hands it, the status it leaves behind, the frames map it
 * fills, and the table maps userspace (unwind/) fills for it. Included by the BPF C, by unwind/ and
 * mirrored by codegen/; every layout is static-asserted so the three cannot drift.
 *
 * PROTOCOL (one direction: entry -> walker -> continuation)
 *
 *   1. The generated ENTRY program (same BPF program type as the walker it calls) looks up
 *      key 0 of the walker state map (BPF_MAP_TYPE_PERCPU_ARRAY, value struct dt_walker_state),
 *      writes `cont_slot` (its continuation's index in the continuation prog array) and
 *      `max_depth` (1..DT_WALKER_MAX_FRAMES; 0 means DT_WALKER_DEFAULT_DEPTH; larger is clamped;
 *      DT_WALKER_NATIVE_ONLY or'ed in: no CPython frames, see dt_python.h),
 *      then does bpf_tail_call(ctx, walker_progs, DT_WALKER_SLOT_START). It writes nothing else.
 *      If the tail call returns (walker not loaded) the entry program must treat ustack_dwarf as
 *      unavailable (e.g. return 0 and count a loss).
 *   2. The WALKER (slot DT_WALKER_SLOT_START) takes the user registers itself: from the ctx when
 *      the event fired in user mode (perf_event, kprobe/uprobe ctx = pt_regs), otherwise from
 *      bpf_task_pt_regs(bpf_get_current_task_btf()) (tracepoints, raw tracepoints, events in
 *      kernel mode). It unwinds up to DT_WALKER_FRAMES_PER_CALL frames per program run and
 *      tail-calls DT_WALKER_SLOT_STEP (the same body) to go deeper: at most
 *      DT_WALKER_MAX_FRAMES / DT_WALKER_FRAMES_PER_CALL = 8 walker runs, so entry + walker runs +
 *      continuation stay far under the kernel's 33 tail-call limit.
 *   3. At the end the walker stores the frames under a key derived from a hash of the frames, so
 *      identical stacks share one entry (a hash collision with different frames probes the next
 *      keys; no silent overwrite): stacks of at most DT_FRAMES_SHORT frames go to the frames
 *      map (BPF_MAP_TYPE_LRU_HASH, key __u64, value struct dt_frames, ~1 KB), deeper ones to
 *      frames_deep (value struct dt_frames_deep, 8 KB, allocated on use) with
 *      DT_FRAMES_KEY_DEEP set in the key — so ustack_dwarf(1024) is possible without every
 *      stack costing 8 KB. It fills `result` (id = the key, 0 when nothing could be stored;
 *      pid = tgid; flags = enum dt_unwind_status in the low byte and nothing above it: those
 *      bits are the address-space generation of dt_abi.h, the continuation's to add; the
 *      DT_UNWIND_F_* bits are only in the stored frames' dt_frames.flags), and tail-calls
 *      cont_progs[cont_slot].
 *      In a CPython process (bpf-lib/dt_python.h) the last walker run tail-calls
 *      DT_WALKER_SLOT_PY first, which puts the Python frames in place of the interpreter's
 *      evaluation frames and then stores and tail-calls the continuation the same way. That
 *      slot is filled only once needed (unwind/unwinder.c, load_progs); while it is empty the
 *      tail call falls through, the walker sends DT_REQ_PY and stores the native frames.
 *   4. The CONTINUATION reads state.result (key 0 of the same per-CPU state map) and runs the rest
 *      of the probe body. Userspace reads frames with dt_unwinder_frames() (unwind/unwind.h).
 *
 * Tail calls only join programs of one type, so the walker object holds one (start, step) program
 * pair, one walker prog array, one continuation prog array and one state map per program type in
 * enum dt_walker_ptype; the frames map, the tables and the stats are shared by all of them.
 * A state map per type also keeps walks from trampling each other: the kernel does not run a
 * second kprobe/tracepoint/perf_event program on a CPU while one is running there
 * (bpf_prog_active), and a perf_event interrupting a tracepoint walk uses another state. Raw
 * tracepoint programs only guard against their own recursion, so on a preemptible kernel two
 * raw_tracepoint walks on one CPU could in principle interleave (rare; not guarded).
 *
 * TABLES (userspace -> BPF, filled by unwind/)
 *
 *   procs    HASH  tgid -> struct dt_proc_maps: the executable mappings of a process, sorted by
 *                  start, each pointing at an object id and a bias (pc - bias = ELF vaddr).
 *   objects  ARRAY obj id -> struct dt_unwind_obj: where the object's rows are.
 *   rows     ARRAY page -> struct dt_row_page: every object's rows, DT_ROWS_PER_PAGE per page,
 *                  sorted by pc within an object; an object's rows start at a page boundary.
 *                  6 bytes per row: a 4-byte pc (ELF vaddr, low 32 bits) + a 2-byte rule index.
 *   rules    ARRAY rule index -> struct dt_unwind_rule: deduplicated across all objects.
 *   rowidx   ARRAY page -> struct dt_index_page: per object, for each 2^index_shift bytes of its
 *                  pc range, the global index of the row covering the bucket's first byte, so
 *                  the binary search only spans one bucket's rows (a few, not a million).
 *   requests RINGBUF of struct dt_unwind_req: the walker asks userspace for tables.
 *   wstats   PERCPU_ARRAY of enum dt_walker_stat counters.
 *
 * Map names in the object (unwind/ finds them by name): wprogs_SFX, cprogs_SFX, wstate_SFX for
 * SFX in perf, kprobe, tp, rawtp; frames, frames_deep, procs, objects, rows, rules, rowidx,
 * requests, throttle, wstats, config, mmap_pending.
 * Programs: dt_walk_start_SFX, dt_walk_step_SFX, and the followers: raw tracepoint
 * dt_follow_exit (DT_REQ_EXIT for a process that exits: userspace deletes its procs entry, so
 * samples in its last moments still unwind); tracepoints
 * dt_follow_mmap_enter/exit (a known process mapping a file PROT_EXEC: DT_REQ_MMAP once the
 * mapping exists, so a library has tables before its first sample, not one request later; a
 * process of config's cgroup is held until it is served, dt_exec.h's HOLDING).
 * Exec is not followed here but by the session's one exec follower (dt_exec.h), whose object
 * owns procs, requests, wstats and config (walker_maps.bpf.h; the walker's object reuses them):
 * it empties the procs entry of a process that execs (or with DT_EXEC_FOLLOW_ALL, or in config's
 * cgroup, gives an exec'ing process it does not know an empty one) and sends DT_REQ_EXEC.
 */
#ifndef DT_WALKER_H
#define DT_WALKER_H

#include "dt_abi.h"

/* ---------------------------------------------------------------- limits */

#define DT_WALKER_MAX_FRAMES 1024     /* frames buffer; max_depth is clamped to this */
#define DT_WALKER_DEFAULT_DEPTH 127   /* max_depth == 0 */
#define DT_WALKER_FRAMES_PER_CALL 128 /* frames unwound per walker program run (one bpf_loop) */
#define DT_FRAMES_SHORT 128           /* stacks up to this deep live in the frames map */
#define DT_FRAMES_KEY_DEEP (1ull << 63) /* key bit: the stack is in frames_deep */
#define DT_FRAMES_DEEP_ENTRIES 1024   /* frames_deep entries (8 KB each, allocated on use) */
#define DT_WALKER_MAX_RUNS (DT_WALKER_MAX_FRAMES / DT_WALKER_FRAMES_PER_CALL)
#define DT_MAX_MAPPINGS 256           /* executable mappings per process */
#define DT_MAX_PROCS 1024             /* processes with mapping tables (procs entries) */
#define DT_ROWS_PER_PAGE 512          /* rows per struct dt_row_page (a power of two) */
#define DT_ROWS_PAGE_SHIFT 9
#define DT_MAX_RULES 65536            /* rule indexes are __u16 */
#define DT_MAX_OBJECTS 4096
#define DT_UNWIND_REQ_RINGBUF_SIZE (1u << 18)
#define DT_UNWIND_REQ_INTERVAL_NS 50000000ull /* per-pid throttle: a request in flight (userspace
					       * clears it when served) is re-sent after 50 ms */
#define DT_FRAMES_HASH_PROBES 4       /* keys tried when a frames hash collides */
#define DT_WALKER_CONT_SLOTS 256      /* entries of every continuation prog array */

/* Slots of every walker prog array. */
#define DT_WALKER_SLOT_START 0
#define DT_WALKER_SLOT_STEP 1
#define DT_WALKER_SLOT_PY 2     /* the CPython step (bpf-lib/dt_python.h) */
#define DT_WALKER_NSLOTS 3

/* Or'ed into max_depth by an entry program: no interpreter frames (ustack_dwarf(native)), the
 * native frames as unwound. */
#define DT_WALKER_NATIVE_ONLY (1u << 31)

/* The program types a walker is loaded for; map and program names carry the suffix. */
enum dt_walker_ptype {
	DT_WPT_PERF_EVENT = 0,  /* suffix _perf:  perf_event (profile:, interval:, software:) */
	DT_WPT_KPROBE = 1,      /* suffix _kprobe: kprobe, kretprobe, uprobe, uretprobe */
	DT_WPT_TRACEPOINT = 2,  /* suffix _tp:    tracepoint */
	DT_WPT_RAW_TP = 3,      /* suffix _rawtp: raw_tracepoint */
	DT_WPT__COUNT = 4,
};

/* ---------------------------------------------------------------- status */

/* The low byte of dt_stack_ref.flags for ustack_dwarf (and dt_frames.status). One row per status,
 * X(ID, value, the walker counter a walk ending so lands in, text), so that the enum, the
 * walker's counting and dt_unwind_status_str are written once. */
#define DT_UNWIND_STATUSES(X)                                                                \
	/* the walker did not run (never seen in a result) */                                \
	X(NONE, 0, ERR_OTHER, "not unwound")                                                 \
	/* reached the ABI's end of stack (RA undefined or zero) */                          \
	X(COMPLETE, 1, COMPLETE, "complete")                                                 \
	/* max_depth frames recorded before the end */                                       \
	X(TRUNCATED_DEPTH, 2, TRUNC_DEPTH, "truncated (depth)")                              \
	/* a self tail call failed; frames so far recorded */                                \
	X(TRUNCATED_TAILCALLS, 3, TRUNC_TAILCALL, "truncated (tail calls)")                  \
	/* pid unknown or a PC in no known mapping: request sent, the frames so far (at least \
	 * the first) recorded */                                                            \
	X(NO_TABLES, 4, NO_TABLES, "no tables yet")                                          \
	/* bpf_probe_read_user of the stack failed (page not present) */                     \
	X(ERR_READ, 5, ERR_READ, "error: stack read failed")                                 \
	/* CFA or RA invalid (zero, not increasing, unknown rule) */                         \
	X(ERR_CFA, 6, ERR_CFA, "error: invalid CFA")                                         \
	/* no user context (kernel thread) */                                                \
	X(ERR_NO_USER, 7, ERR_NO_USER, "error: no user context")                             \
	/* frames map full: result.id = 0, nothing stored */                                 \
	X(ERR_STORE, 8, STORE_FAIL, "error: frames map full")                                \
	/* a PC without CFI and no usable frame pointer */                                   \
	X(ERR_NO_CFI, 9, ERR_NO_CFI, "error: no CFI and no frame pointer")                  \
	/* the thread is exiting and has let its memory go (after exit_mm): the user pc is  \
	 * known, the stack above it is not (perf's user callchain is empty there too) */     \
	X(EXITED, 10, EXITED, "exiting, its memory released")                                \
	/* in execve between the switch to the new image and its first registers: the user  \
	 * registers are the old image's, whose memory is gone; no frame is recorded */       \
	X(IN_EXEC, 11, IN_EXEC, "in exec, between two images")

enum dt_unwind_status {
#define DT_UNWIND_ENUM(id, value, wstat, text) DT_UNWIND_##id = value,
	DT_UNWIND_STATUSES(DT_UNWIND_ENUM)
#undef DT_UNWIND_ENUM
	/* Flag bits above the low byte, in dt_frames.flags only (never in dt_stack_ref.flags). */
	DT_UNWIND_F_FP_FALLBACK = 0x100, /* at least one frame unwound with frame pointers */
	DT_UNWIND_F_SIGNAL = 0x200,      /* the stack crosses a signal frame */
	DT_UNWIND_F_PYTHON = 0x400,      /* CPython frames replace evaluation-loop frames */
	/* a CPython process whose Python frames are missing or cut short (no thread state found,
	 * a read failed, the depth or the chain ran out before the evaluation frames did) */
	DT_UNWIND_F_PY_PARTIAL = 0x800,
};
#define DT_UNWIND_STATUS_MASK 0xffu

/* Counters in the walker's wstats map (per CPU, __u64 each); unwind/ sums them for -v, where each
 * prints as "walker NAME N". Every walk ends in exactly one of the per-status counters (those
 * DT_UNWIND_STATUSES names), so those add up to WALKS. One row per counter: X(ID, slot, -v name). */
#define DT_WALKER_STATS(X)                                                                   \
	X(WALKS, 0, "walks")                      /* walks started */                        \
	X(FRAMES, 1, "frames")                    /* frames recorded */                      \
	X(REQ_SENT, 2, "requests_sent")           /* requests sent */                        \
	/* request ring buffer full (same meaning as DT_STAT_DWARF_REQ_LOST) */              \
	X(REQ_LOST, 3, "requests_lost")                                                      \
	/* request suppressed by the per-pid throttle */                                     \
	X(REQ_THROTTLED, 4, "requests_throttled")                                            \
	X(NO_TABLES, 5, "walks_no_tables")        /* walks ending DT_UNWIND_NO_TABLES */     \
	X(FP_FALLBACK, 6, "frames_fp_fallback")   /* frames unwound by frame pointer */      \
	X(ERR_READ, 7, "errors_read")             /* walks ending DT_UNWIND_ERR_READ */      \
	X(ERR_CFA, 8, "errors_cfa")               /* walks ending DT_UNWIND_ERR_CFA */       \
	/* frames map full: stack dropped (DT_UNWIND_ERR_STORE) */                           \
	X(STORE_FAIL, 9, "stacks_dropped_map_full")                                          \
	/* a frames hash collision (resolved by probing) */                                  \
	X(HASH_COLLIDE, 10, "hash_collisions")                                               \
	X(TRUNC_DEPTH, 11, "truncated_depth")                                                \
	X(TRUNC_TAILCALL, 12, "truncated_tailcalls")                                         \
	X(COMPLETE, 13, "complete")                                                          \
	X(ERR_NO_CFI, 14, "errors_no_cfi")        /* walks ending DT_UNWIND_ERR_NO_CFI */    \
	/* walks ending DT_UNWIND_ERR_NO_USER (kernel threads) */                            \
	X(ERR_NO_USER, 15, "errors_no_user")                                                 \
	/* a status no counter above names (a walker bug) */                                 \
	X(ERR_OTHER, 16, "errors_other")                                                     \
	/* walks with at least one frame-pointer frame */                                    \
	X(WALKS_FP, 17, "walks_fp_fallback")                                                 \
	X(WALKS_SIGNAL, 18, "walks_signal")       /* walks crossing a signal frame */        \
	/* stacks deeper than DT_FRAMES_SHORT (frames_deep map) */                           \
	X(STORED_DEEP, 19, "stored_deep")                                                   \
	/* walks of CPython processes that went through the Python step (dt_python.h) */     \
	X(PY_WALKS, 20, "python_walks")                                                      \
	X(PY_FRAMES, 21, "python_frames")         /* Python frames recorded */               \
	/* Python walks whose thread has no PyThreadState (yet) */                           \
	X(PY_NO_TSTATE, 22, "python_no_thread_state")                                        \
	/* Python walks left incomplete (DT_UNWIND_F_PY_PARTIAL) */                          \
	X(PY_PARTIAL, 23, "python_partial")                                                  \
	X(PY_CODES, 24, "python_code_objects")    /* code objects copied into pycode */      \
	/* Python walks whose thread state came from a scan, not the cache */                \
	X(PY_SCANS, 25, "python_tstate_scans")                                               \
	/* walks ending DT_UNWIND_EXITED (a thread past exit_mm) */                          \
	X(EXITED, 26, "walks_exiting")                                                       \
	/* walks ending DT_UNWIND_IN_EXEC (a sample inside execve's image switch) */         \
	X(IN_EXEC, 27, "walks_in_exec")

enum dt_walker_stat {
#define DT_WSTAT_ENUM(id, slot, name) DT_WSTAT_##id = slot,
	DT_WALKER_STATS(DT_WSTAT_ENUM)
#undef DT_WSTAT_ENUM
	DT_WSTAT__COUNT = 32,
};

/* ---------------------------------------------------------------- per-CPU state */

/* Value of the frames map (key: __u64 result.id without DT_FRAMES_KEY_DEEP). pc[0] is the
 * sampled pc; later entries are return addresses as read from the stack (symbolize pc[i] - 1 for
 * i > 0 so the address falls inside the call instruction's line). Only nframes entries are
 * meaningful. */
struct dt_frames {
	__u32 nframes;
	__u32 flags;        /* as dt_stack_ref.flags */
	__u64 pc[DT_FRAMES_SHORT];
};
DT_ABI_ASSERT(sizeof(struct dt_frames) == 8 + 8 * DT_FRAMES_SHORT, "dt_frames");

/* Value of the frames_deep map (key with DT_FRAMES_KEY_DEEP): the same layout, longer. */
struct dt_frames_deep {
	__u32 nframes;
	__u32 flags;
	__u64 pc[DT_WALKER_MAX_FRAMES];
};
DT_ABI_ASSERT(sizeof(struct dt_frames_deep) == 8 + 8 * DT_WALKER_MAX_FRAMES, "dt_frames_deep");
DT_ABI_ASSERT(__builtin_offsetof(struct dt_frames_deep, pc) == __builtin_offsetof(struct dt_frames,
									      pc), "frames prefix");

struct dt_walker_state {
	/* Written by the entry program. */
	__u32 cont_slot;
	__u32 max_depth;
	/* Written by the walker before it tail-calls the continuation. */
	struct dt_stack_ref result;
	/* Walker-private from here on. */
	__u32 runs;         /* walker program runs in this walk */
	__u8 pc_exact;      /* the current pc is not a return address (frame 0, after a signal) */
	__u8 native_only;   /* DT_WALKER_NATIVE_ONLY was set: no Python step */
	__u8 rbx_ok;        /* rbx is this frame's (not lost in a frame that saved it elsewhere) */
	__u8 pad;
	__u64 rip, rsp, rbp, rbx;
	struct dt_frames_deep fr; /* the stack so far; its prefix is stored into a frames map */
};
DT_ABI_ASSERT(__builtin_offsetof(struct dt_walker_state, cont_slot) == 0, "walker cont_slot");
DT_ABI_ASSERT(__builtin_offsetof(struct dt_walker_state, max_depth) == 4, "walker max_depth");
DT_ABI_ASSERT(__builtin_offsetof(struct dt_walker_state, result) == 8, "walker result");
DT_ABI_ASSERT(__builtin_offsetof(struct dt_walker_state, fr) == 64, "walker frames");
DT_ABI_ASSERT(sizeof(struct dt_walker_state) == 64 + sizeof(struct dt_frames_deep), "walker state");

/* ---------------------------------------------------------------- tables */

/* How the CFA is computed. */
enum dt_cfa_kind {
	DT_CFA_UNDEF = 0,   /* no CFI at this pc (gap between FDEs): frame-pointer fallback */
	DT_CFA_RSP = 1,     /* cfa = rsp + cfa_off */
	DT_CFA_RBP = 2,     /* cfa = rbp + cfa_off */
	DT_CFA_PLT = 3,     /* the PLT expression: cfa = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
	DT_CFA_SIGNAL = 4,  /* __restore_rt: rsp points at the ucontext of an rt_sigframe */
	DT_CFA_END = 5,     /* outermost frame: return address undefined, the stack ends here */
	DT_CFA_DEREF_RBP = 6, /* cfa = [rbp + cfa_off] (gcc's stack realignment in main & co.) */
	DT_CFA_RBX = 7,     /* cfa = rbx + cfa_off (ld.so's lazy-binding and TLS trampolines) */
};

/* rbx is tracked only so that a frame whose CFA is rbx-based (DT_CFA_RBX) can be unwound: in
 * every rule but DT_CFA_PLT's, `arg` says where this frame saved its caller's rbx. */
#define DT_RBX_SAME 0        /* not saved: the caller's rbx is this frame's */
#define DT_RBX_LOST 255      /* saved where the walker does not look: unknown from here on */
/* 1..254: saved at [cfa - 8 * arg] */

/* How a register (rbp, or the return address) is recovered. */
enum dt_reg_kind {
	DT_REG_SAME = 0,    /* unchanged (callee-saved, not saved by this frame) */
	DT_REG_OFFSET = 1,  /* saved at [cfa + off] */
	DT_REG_UNDEF = 2,   /* undefined (for the RA: end of stack) */
	DT_REG_RBP_REL = 3, /* (rbp only) saved at [rbp + off], rbp being this frame's rbp */
};

/* One deduplicated rule; rows point at it by index. Index 0 is always {DT_CFA_UNDEF}. */
struct dt_unwind_rule {
	__u8 cfa_kind;      /* enum dt_cfa_kind */
	__u8 rbp_kind;      /* enum dt_reg_kind */
	__u8 ra_kind;       /* enum dt_reg_kind */
	__u8 arg;           /* DT_CFA_PLT: the threshold (11 for .plt, 10 for some .plt.sec);
			     * any other: the caller's rbx (DT_RBX_SAME, DT_RBX_LOST, or 8 * arg
			     * bytes below the cfa) */
	__s32 cfa_off;
	__s32 rbp_off;
	__s32 ra_off;
};
DT_ABI_ASSERT(sizeof(struct dt_unwind_rule) == 16, "dt_unwind_rule");

struct dt_row_page {
	__u32 pc[DT_ROWS_PER_PAGE];   /* ELF vaddr (low 32 bits) where the rule starts */
	__u16 rule[DT_ROWS_PER_PAGE]; /* index into the rules map */
};
DT_ABI_ASSERT(sizeof(struct dt_row_page) == 6 * DT_ROWS_PER_PAGE, "dt_row_page");

/* An object's rows: global row indexes [row_start, row_start + nrows), row_start a multiple of
 * DT_ROWS_PER_PAGE. nrows == 0 means "known, no CFI": every pc unwinds by frame pointer. */
struct dt_unwind_obj {
	__u32 row_start;
	__u32 nrows;
	__u32 gen;          /* bumped when the id is reused, for userspace's bookkeeping */
	__u32 index_shift;  /* bucket size 2^index_shift bytes of pc */
	__u32 index_start;  /* global rowidx entry of bucket 0 (a multiple of DT_INDEX_PER_PAGE) */
	__u32 nbuckets;     /* 0: no index, search all rows */
	__u32 base_pc;      /* pc of bucket 0 (= the object's first row) */
	__u32 pad;
};
DT_ABI_ASSERT(sizeof(struct dt_unwind_obj) == 32, "dt_unwind_obj");

#define DT_INDEX_PER_PAGE 1024
#define DT_INDEX_PAGE_SHIFT 10
struct dt_index_page {
	__u32 row[DT_INDEX_PER_PAGE];
};
DT_ABI_ASSERT(sizeof(struct dt_index_page) == 4096, "dt_index_page");

#define DT_OBJ_NONE 0xffffffffu /* mapping without tables (anonymous executable memory, JIT) */

struct dt_mapping {
	__u64 start, end;   /* [start, end) in the process */
	__u64 bias;         /* pc - bias = the object's ELF vaddr */
	__u32 obj_id;       /* objects index, or DT_OBJ_NONE */
	__u32 pad;
};
DT_ABI_ASSERT(sizeof(struct dt_mapping) == 32, "dt_mapping");

struct dt_proc_maps {
	__u32 n;            /* mappings used, sorted by start, non-overlapping */
	__u32 pad;
	struct dt_mapping m[DT_MAX_MAPPINGS];
};
DT_ABI_ASSERT(sizeof(struct dt_proc_maps) == 8 + 32 * DT_MAX_MAPPINGS, "dt_proc_maps");

/* ---------------------------------------------------------------- requests */

enum dt_unwind_req_kind {
	DT_REQ_PID = 1,     /* pid has no procs entry: build its tables */
	DT_REQ_PC = 2,      /* pc in no known mapping (dlopen, new mapping): re-read the maps */
	DT_REQ_EXIT = 3,    /* process exited (sched_process_exit of the group leader) */
	DT_REQ_EXEC = 4,    /* process exec'd (sent by the exec follower, dt_exec.h): maps all new */
	DT_REQ_MMAP = 5,    /* a known process mapped a file executable (ld.so, dlopen): re-read */
	DT_REQ_PY = 6,      /* a walk in a CPython process found the Python step not loaded */
};

/* Or'ed into a request's kind by the followers: the process is stopped until userspace has
 * served the request, and then continued (dt_exec.h, HOLDING). */
#define DT_REQ_HELD 0x10000u

struct dt_unwind_req {
	__u32 kind;         /* enum dt_unwind_req_kind, maybe with DT_REQ_HELD */
	__u32 pid;          /* tgid */
	__u64 pc;
};
DT_ABI_ASSERT(sizeof(struct dt_unwind_req) == 16, "dt_unwind_req");

#endif

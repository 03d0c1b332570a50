// SPDX-License-Identifier: GPL-2.0
/* walker.bpf.c — the precompiled DWARF stack walker behind ustack_dwarf (protocol: dt_walker.h).
 * One walker body, instantiated as a (start, step) program pair per program type because tail
 * calls only join programs of one type. Per frame: find the pc's mapping in the process's mapping
 * table, binary-search the object's compact rows, apply the rule (CFA from rsp/rbp, the PLT
 * expression, a signal frame's ucontext), read the return address and saved rbp from the user
 * stack, and fall back to frame pointers where there is no CFI. The frame loop runs in bpf_loop so
 * the verifier checks one iteration, not DT_WALKER_FRAMES_PER_CALL copies of it. Unknown
 * processes and mappings are requested from userspace (rate-limited) instead of guessed. */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "dt_python.h"
#include "dt_walker.h"
#include "walker_maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ---------------------------------------------------------------- maps */

#define WALKER_MAPS(sfx)                                                                    \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY);                                      \
		__uint(max_entries, DT_WALKER_NSLOTS);                                      \
		__type(key, __u32);                                                         \
		__type(value, __u32);                                                       \
	} wprogs_##sfx SEC(".maps");                                                        \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY);                                      \
		__uint(max_entries, DT_WALKER_CONT_SLOTS);                                  \
		__type(key, __u32);                                                         \
		__type(value, __u32);                                                       \
	} cprogs_##sfx SEC(".maps");                                                        \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                    \
		__uint(max_entries, 1);                                                     \
		__type(key, __u32);                                                         \
		__type(value, struct dt_walker_state);                                      \
	} wstate_##sfx SEC(".maps");

WALKER_MAPS(perf)
WALKER_MAPS(kprobe)
WALKER_MAPS(tp)
WALKER_MAPS(rawtp)

/* LRU: a long system-wide run sees more distinct stacks than any fixed map holds; the least
 * recently sampled ones make room (a stack still in a script map but evicted before printing is
 * counted by userspace and reported, see dt_unwinder_warn_losses). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* set by unwind/ */
	__type(key, __u64);
	__type(value, struct dt_frames);
} frames SEC(".maps");

/* Stacks deeper than DT_FRAMES_SHORT: rare, 8 KB each, so allocated on insert rather than
 * preallocated like the frames map. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DT_FRAMES_DEEP_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct dt_frames_deep);
} frames_deep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DT_MAX_OBJECTS);
	__type(key, __u32);
	__type(value, struct dt_unwind_obj);
} objects SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024); /* set by unwind/ from the memory budget */
	__type(key, __u32);
	__type(value, struct dt_row_page);
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DT_MAX_RULES);
	__type(key, __u32);
	__type(value, struct dt_unwind_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256); /* set by unwind/ from the memory budget */
	__type(key, __u32);
	__type(value, struct dt_index_page);
} rowidx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} throttle SEC(".maps");

/* Threads between entering and leaving an executable mmap of a known process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} mmap_pending SEC(".maps");

/* CPython processes (dt_python.h): tgid -> where its runtime is and how its structures lie.
 * Written by userspace only, so allocated per entry (no kernel memory while no CPython runs). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DT_PY_MAX_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct dt_py_proc);
} pyprocs SEC(".maps");

/* Where a pycode value is assembled (too big for the stack). Defined
 * before pycode: clang gives a map-in-map's inner value type only a forward declaration in BTF
 * unless an earlier map definition named it in full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_py_code);
} pyscratch SEC(".maps");

/* The Python step's two LRU maps are preallocated by the kernel (about 6.8 MB together), so they
 * live inside one-slot outer maps and are created by unwind/python.c when the first CPython
 * process is seen (dt_python.h, "Lazy maps"); until then the step finds no inner map. An inner
 * hash map may have other max_entries than its template (kernel 5.10+), so the templates libbpf
 * makes to create the outer maps have one entry. */

/* tid -> its PyThreadState, checked on use (dt_python.h, step 3). */
struct pythreads_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* the template's; python.c makes DT_PY_MAX_THREADS */
	__type(key, __u32);
	__type(value, __u64);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct pythreads_map);
} pythreads SEC(".maps");

/* (pid, code object, part) -> its names and line table, copied at first sight. */
struct pycode_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* the template's; python.c makes DT_PY_MAX_CODES */
	__type(key, struct dt_py_code_key);
	__type(value, struct dt_py_code);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct pycode_map);
} pycode SEC(".maps");

/* The native frames, read from while the state's frames are rewritten. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_frames_deep);
} pynative SEC(".maps");

/* Only what the Python step reads; libbpf relocates it against the kernel's BTF. */
struct thread_struct {
	unsigned long fsbase;
} __attribute__((preserve_access_index));
struct task_struct {
	struct thread_struct thread;
} __attribute__((preserve_access_index));

/* ---------------------------------------------------------------- helpers */

/* One request per pid per DT_UNWIND_REQ_INTERVAL_NS: a busy unknown process sampled at 999 Hz
 * must not flood the ring buffer while userspace is still reading its ELF files. */
static __always_inline void send_req(__u32 kind, __u32 pid, __u64 pc)
{
	__u64 now = bpf_ktime_get_ns(), *last;

	last = bpf_map_lookup_elem(&throttle, &pid);
	if (last && now - *last < DT_UNWIND_REQ_INTERVAL_NS) {
		stat_inc(DT_WSTAT_REQ_THROTTLED);
		return;
	}
	bpf_map_update_elem(&throttle, &pid, &now, BPF_ANY);
	req_out(kind, pid, pc);
}

static __always_inline void set_status(struct dt_walker_state *st, __u32 status)
{
	st->fr.flags = (st->fr.flags & ~DT_UNWIND_STATUS_MASK) | status;
}

/* struct pt_regs offsets (x86-64 uapi layout = kernel layout). */
#define PTR_RBP 32
#define PTR_RBX 40
#define PTR_ORIG_RAX 120
#define PTR_RIP 128
#define PTR_CS 136
#define PTR_RSP 152

/* The user registers at the event: from the ctx when it holds user-mode registers, else the
 * registers saved at kernel entry (task_pt_regs), which for a user task are its user state. */
static __always_inline int take_regs(struct pt_regs *ctxregs, struct dt_walker_state *st)
{
	__u64 cs = 0;
	char *tr;

	if (ctxregs && (ctxregs->cs & 3) == 3) {
		st->rip = ctxregs->rip;
		st->rsp = ctxregs->rsp;
		st->rbp = ctxregs->rbp;
		st->rbx = ctxregs->rbx;
		st->rbx_ok = 1;
		return 0;
	}
	tr = (char *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!tr)
		return -1;
	bpf_probe_read_kernel(&cs, sizeof(cs), tr + PTR_CS);
	if ((cs & 3) != 3)
		return -1; /* kernel thread: no user stack */
	bpf_probe_read_kernel(&st->rip, sizeof(st->rip), tr + PTR_RIP);
	bpf_probe_read_kernel(&st->rsp, sizeof(st->rsp), tr + PTR_RSP);
	bpf_probe_read_kernel(&st->rbp, sizeof(st->rbp), tr + PTR_RBP);
	st->rbx_ok = !bpf_probe_read_kernel(&st->rbx, sizeof(st->rbx), tr + PTR_RBX);
	/* Inside a system call the saved rip is the instruction after `syscall` (0f 05): a resume
	 * address, like a return address, so its row is the one of pc - 1. It matters when `syscall`
	 * ends a function's FDE — libc's __restore_rt (rt_sigreturn) is exactly that, and a sample
	 * during sigreturn would otherwise look up the gap after it. orig_rax >= 0 also holds for
	 * exceptions (the error code), hence the look at the instruction bytes. */
	__s64 orig = -1;
	__u16 insn = 0;

	bpf_probe_read_kernel(&orig, sizeof(orig), tr + PTR_ORIG_RAX);
	if (orig >= 0) {
		if (!bpf_probe_read_user(&insn, sizeof(insn), (void *)(st->rip - 2)) &&
		    insn == 0x050f)
			st->pc_exact = 0;
		else if (orig == 59 || orig == 322)
			return 1; /* execve/execveat whose `syscall` is not there: walk() looks */
	}
	return 0;
}

/* ---------------------------------------------------------------- the uretprobe trampoline
 *
 * A uretprobe replaces its function's return address on the user stack with the kernel's
 * trampoline (the first slot of the "[uprobes]" page, mm->uprobes_state.xol_area->vaddr) and
 * keeps the real one in the task's uprobe state: utask->return_instances, innermost first, each
 * with `stack` (the stack pointer at the function's entry, i.e. where the return address lies)
 * and `orig_ret_vaddr`. A frame whose pc is the trampoline takes the original from the instance
 * whose slot is just below the frame's rsp (a return pops its address: rsp = slot + 8, whether
 * the address was reached by CFI or frame pointers, or the sample landed on the trampoline
 * itself). The kernel's types through CO-RE (libbpf relocates the offsets against the running
 * kernel's BTF at load), so the layouts of 6.1 and of 6.12+ (an hprobe before `func`) both work;
 * a kernel without uprobes keeps the old stop. */
struct xol_area___dt {
	unsigned long vaddr;
} __attribute__((preserve_access_index));

struct uprobes_state___dt {
	struct xol_area___dt *xol_area;
} __attribute__((preserve_access_index));

struct mm_struct___dt {
	struct uprobes_state___dt uprobes_state;
	unsigned long start_stack;
} __attribute__((preserve_access_index));

struct return_instance___dt {
	unsigned long stack;
	unsigned long orig_ret_vaddr;
	struct return_instance___dt *next;
} __attribute__((preserve_access_index));

struct uprobe_task___dt {
	struct return_instance___dt *return_instances;
} __attribute__((preserve_access_index));

struct task_struct___dt {
	struct mm_struct___dt *mm;
	struct uprobe_task___dt *utask;
} __attribute__((preserve_access_index));

struct ri_ctx {
	struct return_instance___dt *ri;
	__u64 slot, ret;
};

/* One return instance per call: the list is innermost first, so the slots rise along it. */
static long ri_cb(__u32 i, struct ri_ctx *rc)
{
	struct return_instance___dt *ri = rc->ri; /* a plain load: only the kernel's are CO-RE */
	__u64 stack;

	if (!ri)
		return 1;
	stack = BPF_CORE_READ(ri, stack);
	if (stack == rc->slot) {
		rc->ret = BPF_CORE_READ(ri, orig_ret_vaddr);
		return 1;
	}
	if (stack > rc->slot)
		return 1; /* an instance further out: none for this slot */
	rc->ri = BPF_CORE_READ(ri, next);
	return 0;
}

/* The return address the trampoline at `pc` stands for in a frame whose stack pointer is rsp, or
 * 0 when pc is not the trampoline or no instance matches. */
static __always_inline __u64 uretprobe_orig(__u64 pc, __u64 rsp)
{
	struct task_struct___dt *t = (void *)bpf_get_current_task();
	struct ri_ctx rc = {.slot = rsp - 8};

	if (!bpf_core_field_exists(t->utask) || !bpf_core_type_exists(struct xol_area___dt))
		return 0;
	if (BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr) != pc)
		return 0;
	rc.ri = BPF_CORE_READ(t, utask, return_instances);
	bpf_loop(64, ri_cb, &rc, 0); /* the kernel nests at most 64 (MAX_URETPROBE_DEPTH) */
	return rc.ret;
}

/* ---------------------------------------------------------------- one frame */

struct step_ctx {
	void *wstate;
	__u32 pid;
	__u32 done;
	__u32 exiting; /* the thread has no mm any more (do_exit past exit_mm) */
};

struct msearch_ctx {
	struct dt_proc_maps *pm;
	__u64 pc;
	__u32 lo, hi;
};

/* One step of the mappings binary search. In a callback, like the rows search, so that the
 * verifier sees one step with unknown bounds instead of 2^9 paths each carrying a different
 * pointer offset into the rest of the frame step. */
static long msearch_cb(__u32 i, struct msearch_ctx *mc)
{
	__u32 mid;

	if (mc->lo >= mc->hi)
		return 1;
	mid = (mc->lo + mc->hi) / 2;
	if (mc->pm->m[mid & (DT_MAX_MAPPINGS - 1)].start <= mc->pc)
		mc->lo = mid + 1;
	else
		mc->hi = mid;
	return 0;
}

/* The mapping of `pc`, by binary search over the sorted mappings. */
static __always_inline const struct dt_mapping *find_mapping(struct dt_proc_maps *pm, __u64 pc)
{
	struct msearch_ctx mc = {.pm = pm, .pc = pc, .hi = pm->n};
	__u32 idx;

	if (mc.hi > DT_MAX_MAPPINGS)
		mc.hi = DT_MAX_MAPPINGS;
	bpf_loop(9, msearch_cb, &mc, 0); /* log2(DT_MAX_MAPPINGS) + 1 steps */
	if (mc.lo == 0)
		return 0;
	idx = (mc.lo - 1) & (DT_MAX_MAPPINGS - 1);
	if (pc >= pm->m[idx].end)
		return 0;
	return &pm->m[idx];
}

struct bsearch_ctx {
	__u32 lo, hi, rel, err;
};

/* One step of the rows binary search, in a bpf_loop callback: inlined, 23 steps with a map
 * lookup each multiply the verifier's states past its limit. */
static long bsearch_cb(__u32 i, struct bsearch_ctx *bc)
{
	__u32 mid, page;
	struct dt_row_page *p;

	if (bc->lo >= bc->hi)
		return 1;
	mid = bc->lo + (bc->hi - bc->lo) / 2;
	page = mid >> DT_ROWS_PAGE_SHIFT;
	p = bpf_map_lookup_elem(&rows, &page);
	if (!p) {
		bc->err = 1;
		return 1;
	}
	if (p->pc[mid & (DT_ROWS_PER_PAGE - 1)] <= bc->rel)
		bc->lo = mid + 1;
	else
		bc->hi = mid;
	return 0;
}

static __always_inline int index_row(__u32 entry, __u32 *row)
{
	__u32 page = entry >> DT_INDEX_PAGE_SHIFT;
	struct dt_index_page *p = bpf_map_lookup_elem(&rowidx, &page);

	if (!p)
		return -1;
	*row = p->row[entry & (DT_INDEX_PER_PAGE - 1)];
	return 0;
}

/* The rule for object-relative `rel`, or 0 when the object has no row at or before it. */
static __always_inline const struct dt_unwind_rule *find_rule(const struct dt_unwind_obj *obj, __u32 rel)
{
	struct bsearch_ctx bc = {.lo = obj->row_start, .hi = obj->row_start + obj->nrows, .rel = rel};
	struct dt_row_page *p;
	__u32 page, ruleidx, lo, b, end = bc.hi;

	if (obj->nbuckets && rel >= obj->base_pc) {
		/* Narrow to the rows between the one covering this bucket's start and the one
		 * covering the next bucket's start. */
		b = (rel - obj->base_pc) >> (obj->index_shift & 31);
		if (b < obj->nbuckets) {
			if (index_row(obj->index_start + b, &bc.lo) < 0)
				return 0;
			if (b + 1 < obj->nbuckets) {
				if (index_row(obj->index_start + b + 1, &bc.hi) < 0)
					return 0;
				bc.hi++;
			}
		} else if (index_row(obj->index_start + obj->nbuckets - 1, &bc.lo) < 0) {
			return 0;
		}
		if (bc.lo < obj->row_start || bc.hi > end || bc.lo >= bc.hi)
			return 0;
	}
	lo = bc.lo;
	bpf_loop(23, bsearch_cb, &bc, 0); /* up to 4M rows per object (unwind/ enforces it) */
	if (bc.err || bc.lo == lo)
		return 0; /* no row at or before rel (only possible without the index) */
	lo = bc.lo - 1;
	page = lo >> DT_ROWS_PAGE_SHIFT;
	p = bpf_map_lookup_elem(&rows, &page);
	if (!p)
		return 0;
	ruleidx = p->rule[lo & (DT_ROWS_PER_PAGE - 1)];
	return bpf_map_lookup_elem(&rules, &ruleidx);
}

static __always_inline int read_user(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

/* Frame-pointer step: [rbp] = caller's rbp, [rbp+8] = return address. */
static __always_inline int fp_step(struct dt_walker_state *st)
{
	__u64 rbp = st->rbp, ra = 0, nrbp = 0;

	if (rbp < st->rsp || (rbp & 7)) {
		set_status(st, DT_UNWIND_ERR_NO_CFI);
		return 1;
	}
	if (read_user(&nrbp, rbp) || read_user(&ra, rbp + 8)) {
		set_status(st, DT_UNWIND_ERR_READ);
		return 1;
	}
	st->fr.flags |= DT_UNWIND_F_FP_FALLBACK;
	stat_inc(DT_WSTAT_FP_FALLBACK); /* frames; walks are counted at the end */
	st->rsp = rbp + 16;
	st->rbp = nrbp;
	st->rip = ra;
	st->pc_exact = 0;
	st->rbx_ok = 0; /* without CFI, where the frame saved rbx is unknown */
	if (ra == 0) {
		set_status(st, DT_UNWIND_COMPLETE);
		return 1;
	}
	return 0;
}

/* Unwinds one frame; returns 1 when the walk is over (status set). */
static long step_cb(__u32 idx, struct step_ctx *sc)
{
	const struct dt_unwind_rule *r;
	const struct dt_unwind_obj *obj;
	const struct dt_mapping *m;
	struct dt_walker_state *st;
	struct dt_proc_maps *pm;
	__u64 cfa, ra = 0, rbp, pc;
	__u32 zero = 0, n, rel;

	st = bpf_map_lookup_elem(sc->wstate, &zero);
	if (!st)
		goto stop;
	n = st->fr.nframes;
	if (n >= st->max_depth || n >= DT_WALKER_MAX_FRAMES) {
		set_status(st, DT_UNWIND_TRUNCATED_DEPTH);
		goto stop;
	}
	pc = st->rip;
	st->fr.pc[n & (DT_WALKER_MAX_FRAMES - 1)] = pc;
	st->fr.nframes = n + 1;
	stat_inc(DT_WSTAT_FRAMES);
	if (sc->exiting) {
		/* Past exit_mm: nothing of the user stack can be read, and asking for tables of
		 * a process that is going away would only cost userspace a /proc read. */
		set_status(st, DT_UNWIND_EXITED);
		goto stop;
	}

	pm = bpf_map_lookup_elem(&procs, &sc->pid);
	if (!pm) {
		send_req(DT_REQ_PID, sc->pid, pc);
		goto no_tables;
	}
	m = find_mapping(pm, pc);
	if (!m || m->obj_id == DT_OBJ_NONE) {
		/* The uretprobe trampoline ("[uprobes]", no object): the frame is the caller's
		 * return address the kernel keeps. */
		__u64 orig = uretprobe_orig(pc, st->rsp);

		if (orig) {
			pc = orig;
			st->rip = pc;
			st->pc_exact = 0;
			st->fr.pc[n & (DT_WALKER_MAX_FRAMES - 1)] = pc;
			m = find_mapping(pm, pc);
		}
	}
	if (!m) {
		send_req(DT_REQ_PC, sc->pid, pc);
		goto no_tables;
	}
	if (m->obj_id == DT_OBJ_NONE)
		goto fallback;
	obj = bpf_map_lookup_elem(&objects, &m->obj_id);
	if (!obj || obj->nrows == 0)
		goto fallback;
	/* A return address points after the call; the caller's row is the one of the call. */
	rel = (__u32)(pc - m->bias) - (st->pc_exact ? 0 : 1);
	r = find_rule(obj, rel);
	if (!r)
		goto fallback;

	switch (r->cfa_kind) {
	case DT_CFA_RSP:
		cfa = st->rsp + (__s64)r->cfa_off;
		break;
	case DT_CFA_RBP:
		cfa = st->rbp + (__s64)r->cfa_off;
		break;
	case DT_CFA_PLT:
		cfa = st->rsp + (__s64)r->cfa_off + ((pc & 15) >= r->arg ? 8 : 0);
		break;
	case DT_CFA_DEREF_RBP:
		if (read_user(&cfa, st->rbp + (__s64)r->cfa_off))
			goto read_err;
		break;
	case DT_CFA_RBX:
		if (!st->rbx_ok)
			goto cfa_err;
		cfa = st->rbx + (__s64)r->cfa_off;
		break;
	case DT_CFA_SIGNAL: {
		/* rsp points at the rt_sigframe's ucontext: uc_mcontext starts at +40, and in it
		 * rbp is at +80, rsp at +120, rip at +128. */
		__u64 base = st->rsp, nrsp = 0, nrip = 0;

		rbp = 0;
		if (read_user(&rbp, base + 120) || read_user(&nrsp, base + 160) ||
		    read_user(&nrip, base + 168))
			goto read_err;
		st->rbx_ok = !read_user(&st->rbx, base + 128); /* rbx follows rbp in mcontext */
		st->rbp = rbp;
		st->rsp = nrsp;
		st->rip = nrip;
		st->pc_exact = 1;
		st->fr.flags |= DT_UNWIND_F_SIGNAL;
		if (nrip == 0) {
			set_status(st, DT_UNWIND_COMPLETE);
			goto stop;
		}
		return 0;
	}
	case DT_CFA_END:
		set_status(st, DT_UNWIND_COMPLETE);
		goto stop;
	case DT_CFA_UNDEF:
		goto fallback;
	default:
		goto cfa_err;
	}
	if (cfa <= st->rsp && r->cfa_kind != DT_CFA_DEREF_RBP)
		goto cfa_err; /* the stack grows down: a caller's CFA is above our rsp */
	if (r->ra_kind != DT_REG_OFFSET)
		goto cfa_err;
	if (read_user(&ra, cfa + (__s64)r->ra_off))
		goto read_err;
	rbp = st->rbp;
	if (r->rbp_kind == DT_REG_OFFSET) {
		if (read_user(&rbp, cfa + (__s64)r->rbp_off))
			goto read_err;
	} else if (r->rbp_kind == DT_REG_RBP_REL) {
		if (read_user(&rbp, st->rbp + (__s64)r->rbp_off))
			goto read_err;
	} else if (r->rbp_kind == DT_REG_UNDEF) {
		rbp = 0;
	}
	if (r->cfa_kind != DT_CFA_PLT && r->arg != DT_RBX_SAME) {
		/* A saved rbx that cannot be read is only lost: the walk goes on without it. */
		if (r->arg == DT_RBX_LOST || read_user(&st->rbx, cfa - 8 * (__u64)r->arg))
			st->rbx_ok = 0;
	}
	st->rsp = cfa;
	st->rbp = rbp;
	st->rip = ra;
	st->pc_exact = 0;
	if (ra == 0) {
		set_status(st, DT_UNWIND_COMPLETE);
		goto stop;
	}
	return 0;

fallback:
	if (fp_step(st))
		goto stop;
	return 0;
no_tables:
	set_status(st, DT_UNWIND_NO_TABLES);
	goto stop;
read_err:
	set_status(st, DT_UNWIND_ERR_READ);
	goto stop;
cfa_err:
	set_status(st, DT_UNWIND_ERR_CFA);
stop:
	sc->done = 1;
	return 1;
}

/* ---------------------------------------------------------------- storing the stack */

struct hash_ctx {
	void *wstate;
	__u64 h;
};

static long hash_cb(__u32 i, struct hash_ctx *hc)
{
	struct dt_walker_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(hc->wstate, &zero);
	if (!st || i >= st->fr.nframes)
		return 1;
	hc->h = (hc->h ^ st->fr.pc[i & (DT_WALKER_MAX_FRAMES - 1)]) * 0x100000001b3ull;
	hc->h ^= hc->h >> 29;
	return 0;
}

struct cmp_ctx {
	void *wstate;
	void *other;        /* struct dt_frames or struct dt_frames_deep */
	__u32 differ;
};

/* One compare callback per value size: the verifier must see a constant bound on the index into
 * the map value it is handed. */
#define CMP_CB(name, type, nmax)                                                            \
	static long name(__u32 i, struct cmp_ctx *cc)                                       \
	{                                                                                   \
		struct dt_walker_state *st;                                                 \
		type *other = cc->other;                                                    \
		__u32 zero = 0, a = i, b = i;                                               \
                                                                                            \
		st = bpf_map_lookup_elem(cc->wstate, &zero);                                \
		if (!st) {                                                                  \
			cc->differ = 1;                                                     \
			return 1;                                                           \
		}                                                                           \
		if (i >= st->fr.nframes || i >= (nmax))                                     \
			return 1;                                                           \
		/* Opaque copies: else clang folds the two masks into one the verifier      \
		 * cannot bound. */                                                         \
		asm volatile("" : "+r"(a), "+r"(b));                                        \
		a &= DT_WALKER_MAX_FRAMES - 1;                                              \
		b &= (nmax) - 1;                                                            \
		if (st->fr.pc[a] != other->pc[b]) {                                         \
			cc->differ = 1;                                                     \
			return 1;                                                           \
		}                                                                           \
		return 0;                                                                   \
	}
CMP_CB(cmp_short_cb, struct dt_frames, DT_FRAMES_SHORT)
CMP_CB(cmp_deep_cb, struct dt_frames_deep, DT_WALKER_MAX_FRAMES)

/* Stores the frames under a hash of their content; an identical stack already there is shared.
 * Short stacks go to the frames map, deep ones to frames_deep (key bit DT_FRAMES_KEY_DEEP).
 * One function per map, not one function choosing its map: with a map pointer that is one of
 * two maps, the 6.1 verifier loses the link between the choice and the compare callback and
 * rejects a short value indexed as a deep one. Each function is a separate subprogram, so the
 * compiler cannot merge the two back into one path with a selected map. */
#define STORE_FRAMES(name, map, cmp_cb, ncmp, deep)                                         \
	static __noinline __u64 name(void *wstate, struct dt_walker_state *st)              \
	{                                                                                   \
		struct hash_ctx hc = {.wstate = wstate,                                     \
				      .h = 0xcbf29ce484222325ull ^ st->fr.flags};            \
		__u32 n = st->fr.nframes;                                                   \
		void *old;                                                                  \
		__u64 key;                                                                  \
		int i;                                                                      \
                                                                                            \
		bpf_loop(DT_WALKER_MAX_FRAMES, hash_cb, &hc, 0);                            \
		key = (hc.h ^ ((__u64)n << 52)) & ~DT_FRAMES_KEY_DEEP;                      \
		if (deep)                                                                   \
			key |= DT_FRAMES_KEY_DEEP;                                          \
		for (i = 0; i < DT_FRAMES_HASH_PROBES; i++, key++) {                        \
			if (key == 0)                                                       \
				key = 1; /* 0 means "nothing stored" */                     \
			/* Look up first: most samples repeat a stack already stored, and  \
			 * an LRU map's update takes (and may evict for) a fresh node      \
			 * before it finds the key exists. */                               \
			old = bpf_map_lookup_elem(&map, &key);                              \
			if (!old) {                                                         \
				/* The state's frames have the value's layout; only its    \
				 * prefix is copied. */                                     \
				if (bpf_map_update_elem(&map, &key, &st->fr, BPF_NOEXIST) == 0) \
					return key;                                         \
				old = bpf_map_lookup_elem(&map, &key);                      \
				if (!old)                                                   \
					break; /* not a racing insert: the map is full */   \
			}                                                                   \
			if (((struct dt_frames *)old)->nframes == n &&                      \
			    ((struct dt_frames *)old)->flags == st->fr.flags) {             \
				struct cmp_ctx cc = {.wstate = wstate, .other = old};       \
                                                                                            \
				bpf_loop(ncmp, cmp_cb, &cc, 0);                             \
				if (!cc.differ)                                             \
					return key;                                         \
			}                                                                   \
			stat_inc(DT_WSTAT_HASH_COLLIDE);                                    \
		}                                                                           \
		return 0;                                                                   \
	}
STORE_FRAMES(store_short, frames, cmp_short_cb, DT_FRAMES_SHORT, 0)
STORE_FRAMES(store_deep, frames_deep, cmp_deep_cb, DT_WALKER_MAX_FRAMES, 1)

static __always_inline __u64 store_frames(void *wstate, struct dt_walker_state *st)
{
	return st->fr.nframes > DT_FRAMES_SHORT ? store_deep(wstate, st) : store_short(wstate, st);
}

/* ---------------------------------------------------------------- the walker body */

/* Every walk lands in exactly one status counter (so they add up to DT_WSTAT_WALKS), plus the
 * flag counters; -v prints them and a loss warning is printed from them without -v. */
static __always_inline void count_walk(struct dt_walker_state *st, __u32 status, __u64 id)
{
	__u32 which;

	switch (status) {
#define STATUS_COUNTER(id, value, wstat, text)                                               \
	case DT_UNWIND_##id: which = DT_WSTAT_##wstat; break;
	DT_UNWIND_STATUSES(STATUS_COUNTER)
#undef STATUS_COUNTER
	default: which = DT_WSTAT_ERR_OTHER; break;
	}
	stat_inc(which);
	if (st->fr.flags & DT_UNWIND_F_FP_FALLBACK)
		stat_inc(DT_WSTAT_WALKS_FP);
	if (st->fr.flags & DT_UNWIND_F_SIGNAL)
		stat_inc(DT_WSTAT_WALKS_SIGNAL);
	if (id & DT_FRAMES_KEY_DEEP)
		stat_inc(DT_WSTAT_STORED_DEEP);
}

/* Stores the frames, fills the result and tail-calls the continuation: the end of every walk,
 * from the last walker run or from the Python step. */
static __always_inline int finish_walk(void *ctx, void *cprogs, void *wstate,
				       struct dt_walker_state *st, __u32 pid)
{
	__u32 status = st->fr.flags & DT_UNWIND_STATUS_MASK;
	__u64 id;

	id = st->fr.nframes ? store_frames(wstate, st) : 0;
	if (st->fr.nframes && !id)
		status = DT_UNWIND_ERR_STORE;
	count_walk(st, status, id);
	st->result.id = id;
	st->result.pid = pid;
	/* Only the status: the bits above the low byte of a stack ref carry the address-space
	 * generation (dt_abi.h), which the continuation adds. The DT_UNWIND_F_* bits stay in the
	 * stored frames' flags. */
	st->result.flags = status;
	bpf_tail_call(ctx, cprogs, st->cont_slot);
	return 0;
}

static __always_inline int walk(void *ctx, struct pt_regs *ctxregs, void *wprogs, void *cprogs,
				void *wstate, int start)
{
	struct step_ctx sc = {.wstate = wstate};
	struct dt_walker_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(wstate, &zero);
	if (!st)
		return 0;
	sc.pid = bpf_get_current_pid_tgid() >> 32;
	if (start) {
		stat_inc(DT_WSTAT_WALKS);
		st->fr.nframes = 0;
		st->fr.flags = 0;
		st->runs = 0;
		st->pc_exact = 1;
		st->native_only = !!(st->max_depth & DT_WALKER_NATIVE_ONLY);
		st->max_depth &= ~DT_WALKER_NATIVE_ONLY;
		if (st->max_depth == 0)
			st->max_depth = DT_WALKER_DEFAULT_DEPTH;
		if (st->max_depth > DT_WALKER_MAX_FRAMES)
			st->max_depth = DT_WALKER_MAX_FRAMES;
		int regs = sc.pid ? take_regs(ctxregs, st) : -1;

		if (regs < 0) {
			set_status(st, DT_UNWIND_ERR_NO_USER);
			goto finish;
		}
		struct task_struct___dt *t = (void *)bpf_get_current_task();

		sc.exiting = !BPF_CORE_READ(t, mm);
		/* Inside execve once the new image is mapped, the registers stay the old image's
		 * until the new ones are set (rsp = the new mm's start_stack): that pc and stack
		 * are in memory that no longer exists. */
		if (regs == 1 && !sc.exiting && st->rsp != BPF_CORE_READ(t, mm, start_stack)) {
			set_status(st, DT_UNWIND_IN_EXEC);
			goto finish;
		}
	}
	st->runs++;
	bpf_loop(DT_WALKER_FRAMES_PER_CALL, step_cb, &sc, 0);
	if (!sc.done) {
		if (st->runs < DT_WALKER_MAX_RUNS + 1)
			bpf_tail_call(ctx, wprogs, DT_WALKER_SLOT_STEP);
		/* Only reached when the tail call failed. */
		set_status(st, DT_UNWIND_TRUNCATED_TAILCALLS);
	}
	/* A CPython process: its Python frames go in before the stack is stored. */
	if (!st->native_only && st->fr.nframes && bpf_map_lookup_elem(&pyprocs, &sc.pid)) {
		bpf_tail_call(ctx, wprogs, DT_WALKER_SLOT_PY);
		/* Only reached while the Python step is not loaded (a system-wide session loads
		 * it when a walk first needs it): this stack is stored with its native frames. */
		send_req(DT_REQ_PY, sc.pid, 0);
	}
finish:
	return finish_walk(ctx, cprogs, wstate, st, sc.pid);
}

/* ---------------------------------------------------------------- CPython frames (dt_python.h) */

struct tscan_ctx {
	const struct dt_py_offsets *o;
	__u64 runtime, interp, t, want, found;
	__u32 started;
};

/* One step of the search for the thread's PyThreadState: the next interpreter, or the next
 * thread state of the current one. */
static long tscan_cb(__u32 i, struct tscan_ctx *tc)
{
	__u64 v = 0, addr;

	if (!tc->t) {
		if (!tc->started) {
			tc->started = 1;
			addr = tc->runtime + tc->o->runtime_interp_head;
		} else {
			if (!tc->interp)
				return 1;
			addr = tc->interp + tc->o->interp_next;
		}
		if (read_user(&tc->interp, addr) || !tc->interp ||
		    read_user(&tc->t, tc->interp + tc->o->interp_threads_head))
			return 1;
		return 0;
	}
	if (read_user(&v, tc->t + tc->o->tstate_thread_id))
		return 1;
	if (v == tc->want) {
		tc->found = tc->t;
		return 1;
	}
	if (read_user(&tc->t, tc->t + tc->o->tstate_next))
		return 1;
	return 0;
}

/* The current thread's PyThreadState, or 0: the cached one if its thread_id still is this
 * thread's (pthread_self() = the fs base on x86-64), else found by a scan and cached. */
static __always_inline __u64 py_tstate(const struct dt_py_proc *pp, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct tscan_ctx tc = {.o = &pp->off, .runtime = pp->runtime};
	__u64 *cached = NULL, v = 0;
	__u32 zero = 0;
	void *threads = bpf_map_lookup_elem(&pythreads, &zero);

	tc.want = task->thread.fsbase;
	if (threads)
		cached = bpf_map_lookup_elem(threads, &tid);
	if (cached && *cached && !read_user(&v, *cached + pp->off.tstate_thread_id) && v == tc.want)
		return *cached;
	stat_inc(DT_WSTAT_PY_SCANS);
	bpf_loop(DT_PY_THREAD_SCAN, tscan_cb, &tc, 0);
	if (tc.found && threads)
		bpf_map_update_elem(threads, &tid, &tc.found, BPF_ANY);
	return tc.found;
}

/* A PEP 393 string's text into buf (at most cap bytes); its length in bytes, 0 when it is not a
 * compact string. */
static __always_inline __u32 py_str(char *buf, __u32 cap, __u8 *kind, __u64 obj,
				    const struct dt_py_offsets *o)
{
	__u64 len = 0;
	__u32 state = 0, k, n;

	if (!obj || read_user(&len, obj + o->str_length) ||
	    bpf_probe_read_user(&state, sizeof(state), (const void *)(obj + o->str_state)))
		return 0;
	k = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (k != 1 && k != 2 && k != 4))
		return 0;
	if (len > cap)
		len = cap;
	n = (__u32)len * k;
	if (n > cap)
		n = cap;
	if (bpf_probe_read_user(buf, n, (const void *)(obj + ((state & (1u << 6)) ?
							       o->str_ascii_data :
							       o->str_compact_data))))
		return 0;
	*kind = (__u8)k;
	return n;
}

struct ltpart_ctx {
	struct dt_py_code_key key;
	struct dt_py_code *v;
	void *codes;
	__u64 data, size;   /* the line table's bytes in the process, and their count */
};

/* Copies part k + 1 of a line table longer than one record's (dt_python.h, step 5). */
static long ltpart_cb(__u32 k, struct ltpart_ctx *lc)
{
	__u64 at = (__u64)(k + 1) * DT_PY_LT_MAX, n;

	if (at >= lc->size)
		return 1;
	n = lc->size - at;
	if (n > DT_PY_LT_MAX)
		n = DT_PY_LT_MAX;
	if (bpf_probe_read_user(lc->v->lt, n, (const void *)(lc->data + at)))
		return 1;
	lc->v->lt_len = (__u32)n;
	lc->key.part = k + 1;
	bpf_map_update_elem(lc->codes, &lc->key, lc->v, BPF_ANY);
	return 0;
}

/* Copies what names code object `code` of `pid` into pycode, once: part 0 holds the names and
 * the line table's first DT_PY_LT_MAX bytes, parts 1… the rest of a longer table. Part 0 goes in
 * last, so a code object is seen only once its parts are there. */
static __always_inline void py_note_code(__u32 pid, __u64 code, const struct dt_py_offsets *o)
{
	struct ltpart_ctx lc = {.key = {.pid = pid, .code = code}};
	struct dt_py_code *v;
	__u64 p = 0, size = 0, data;
	__u32 zero = 0, n, lt_len = 0, lt_total = 0;

	lc.codes = bpf_map_lookup_elem(&pycode, &zero);
	if (!lc.codes || bpf_map_lookup_elem(lc.codes, &lc.key))
		return;
	v = bpf_map_lookup_elem(&pyscratch, &zero);
	if (!v)
		return;
	lc.v = v;
	v->firstlineno = 0;
	bpf_probe_read_user(&v->firstlineno, sizeof(v->firstlineno),
			    (const void *)(code + o->code_firstlineno));
	p = 0;
	read_user(&p, code + o->code_name);
	v->name_len = (__u16)py_str(v->name, DT_PY_NAME_MAX, &v->name_kind, p, o);
	p = 0;
	read_user(&p, code + o->code_filename);
	v->file_len = (__u16)py_str(v->file, DT_PY_FILE_MAX, &v->file_kind, p, o);
	v->layout = (__u8)o->layout;
	p = 0;
	if (!read_user(&p, code + o->code_linetable) && p &&
	    !read_user(&size, p + o->bytes_size) && size < (1u << 30)) {
		data = p + o->bytes_data;
		if (size > DT_PY_LT_MAX) {
			lc.data = data;
			lc.size = size > DT_PY_LT_MAX * DT_PY_LT_PARTS ?
					  DT_PY_LT_MAX * DT_PY_LT_PARTS : size;
			bpf_loop(DT_PY_LT_PARTS - 1, ltpart_cb, &lc, 0);
		}
		n = size > DT_PY_LT_MAX ? DT_PY_LT_MAX : (__u32)size;
		if (!bpf_probe_read_user(v->lt, n, (const void *)data)) {
			lt_len = n;
			lt_total = (__u32)size;
		}
	}
	v->lt_len = lt_len;
	v->lt_total = lt_total;
	lc.key.part = 0;
	if (bpf_map_update_elem(lc.codes, &lc.key, v, BPF_NOEXIST) == 0)
		stat_inc(DT_WSTAT_PY_CODES);
}

struct pymerge_ctx {
	void *wstate;
	const struct dt_py_proc *pp;
	__u64 frame;        /* the next interpreter frame; 0 when the chain is over */
	__u32 i, n, o, max; /* native frame index, native count, out index, max_depth */
	__u32 inpy, pid, npy, partial, truncated;
};

/* One step of the merge: a Python frame of the evaluation frame being replaced, or the next
 * native frame (which starts such a replacement when it is an evaluation frame). */
static long pymerge_cb(__u32 k, struct pymerge_ctx *mc)
{
	const struct dt_py_offsets *o = &mc->pp->off;
	struct dt_frames_deep *nat;
	struct dt_walker_state *st;
	__u64 pc, code = 0, prev = 0, instr = 0, lasti;
	__u32 zero = 0;
	__u8 entry = 0;
	int shim, end;

	st = bpf_map_lookup_elem(mc->wstate, &zero);
	nat = bpf_map_lookup_elem(&pynative, &zero);
	if (!st || !nat)
		return 1;
	if (mc->inpy) {
		__u64 f = mc->frame;

		if (read_user(&code, f + o->frame_code) || read_user(&prev, f + o->frame_previous) ||
		    read_user(&instr, f + o->frame_instr) ||
		    bpf_probe_read_user(&entry, 1, (const void *)(f + o->frame_entry))) {
			/* The chain cannot be followed: the evaluation frame stays native. */
			mc->partial = 1;
			mc->frame = 0;
			mc->inpy = 0;
			return 0;
		}
		shim = (o->layout == DT_PY_LAYOUT_312 || o->layout == DT_PY_LAYOUT_313) &&
		       entry == o->owner_cstack;
		end = o->layout == DT_PY_LAYOUT_311 ? entry != 0 :
		      o->layout == DT_PY_LAYOUT_310 ? 1 : shim;
		mc->frame = prev;
		if (!shim) {
			if (mc->o >= mc->max) {
				mc->truncated = 1;
				return 1;
			}
			if (o->layout == DT_PY_LAYOUT_310) /* the int f_lasti, -1 before the start */
				lasti = (__s32)instr > 0 ? (__u32)instr : 0;
			else
				lasti = instr >= code + o->code_adaptive ?
						(instr - code - o->code_adaptive) / 2 : 0;
			if (lasti > DT_PY_LASTI_MAX)
				lasti = DT_PY_LASTI_MAX;
			st->fr.pc[mc->o & (DT_WALKER_MAX_FRAMES - 1)] =
				DT_PY_FRAME_BIT | (lasti << DT_PY_LASTI_SHIFT) | (code & DT_PY_ADDR_MASK);
			mc->o++;
			mc->npy++;
			py_note_code(mc->pid, code, o);
		}
		if (end || !prev) {
			mc->inpy = 0;
			mc->i++; /* the evaluation frame is replaced */
		}
		return 0;
	}
	if (mc->i >= mc->n)
		return 1;
	pc = nat->pc[mc->i & (DT_WALKER_MAX_FRAMES - 1)];
	/* The evaluation loop, or its cold part (GCC's .cold: the same C frame). */
	if ((pc >= mc->pp->eval_start && pc < mc->pp->eval_end) ||
	    (pc >= mc->pp->cold_start && pc < mc->pp->cold_end)) {
		if (mc->frame) {
			mc->inpy = 1;
			return 0;
		}
		mc->partial = 1; /* an evaluation frame with no interpreter frame left */
	}
	if (mc->o >= mc->max) {
		mc->truncated = 1;
		return 1;
	}
	st->fr.pc[mc->o & (DT_WALKER_MAX_FRAMES - 1)] = pc;
	mc->o++;
	mc->i++;
	return 0;
}

/* The Python step (DT_WALKER_SLOT_PY): replaces the evaluation-loop frames by the Python frames
 * they run, then ends the walk. */
static __always_inline int py_step(void *ctx, void *cprogs, void *wstate)
{
	struct pymerge_ctx mc = {.wstate = wstate};
	__u64 pid_tgid = bpf_get_current_pid_tgid(), tstate, cf = 0, frame = 0;
	struct dt_frames_deep *nat;
	struct dt_walker_state *st;
	struct dt_py_proc *pp;
	__u32 zero = 0, pid = pid_tgid >> 32, n;

	st = bpf_map_lookup_elem(wstate, &zero);
	nat = bpf_map_lookup_elem(&pynative, &zero);
	if (!st || !nat)
		return 0;
	pp = bpf_map_lookup_elem(&pyprocs, &pid);
	if (!pp)
		goto finish;
	stat_inc(DT_WSTAT_PY_WALKS);
	tstate = py_tstate(pp, (__u32)pid_tgid);
	if (!tstate) {
		stat_inc(DT_WSTAT_PY_NO_TSTATE);
		st->fr.flags |= DT_UNWIND_F_PY_PARTIAL;
		goto finish;
	}
	if (pp->off.layout == DT_PY_LAYOUT_313 || pp->off.layout == DT_PY_LAYOUT_310) {
		read_user(&frame, tstate + pp->off.tstate_cframe);
	} else if (!read_user(&cf, tstate + pp->off.tstate_cframe) && cf) {
		read_user(&frame, cf + pp->off.cframe_current_frame);
	}
	n = st->fr.nframes;
	if (n > DT_WALKER_MAX_FRAMES)
		n = DT_WALKER_MAX_FRAMES;
	if (bpf_probe_read_kernel(nat->pc, n * sizeof(__u64), st->fr.pc))
		goto finish;
	mc.pp = pp;
	mc.frame = frame;
	mc.n = n;
	mc.max = st->max_depth;
	mc.pid = pid;
	bpf_loop(2 * DT_WALKER_MAX_FRAMES + 2, pymerge_cb, &mc, 0);
	if (mc.i < mc.n && !mc.truncated)
		mc.partial = 1; /* the loop's bound: never with max_depth <= DT_WALKER_MAX_FRAMES */
	st->fr.nframes = mc.o;
	if (mc.npy)
		st->fr.flags |= DT_UNWIND_F_PYTHON;
	/* Interpreter frames left over: the native walk ended before their evaluation frames. */
	if (mc.frame && !mc.truncated)
		mc.partial = 1;
	if (mc.truncated || mc.i < mc.n) {
		set_status(st, DT_UNWIND_TRUNCATED_DEPTH);
		mc.partial = 1;
	}
	if (mc.partial) {
		st->fr.flags |= DT_UNWIND_F_PY_PARTIAL;
		stat_inc(DT_WSTAT_PY_PARTIAL);
	}
	{
		__u32 which = DT_WSTAT_PY_FRAMES;
		__u64 *c = bpf_map_lookup_elem(&wstats, &which);

		if (c)
			*c += mc.npy;
	}
finish:
	return finish_walk(ctx, cprogs, wstate, st, pid);
}

#define WALKER_PROGS(sfx, sec, ctxtype, regs_expr)                                          \
	SEC(sec) int dt_walk_start_##sfx(ctxtype *ctx)                                      \
	{                                                                                   \
		return walk(ctx, regs_expr, &wprogs_##sfx, &cprogs_##sfx, &wstate_##sfx, 1);\
	}                                                                                   \
	SEC(sec) int dt_walk_step_##sfx(ctxtype *ctx)                                       \
	{                                                                                   \
		return walk(ctx, regs_expr, &wprogs_##sfx, &cprogs_##sfx, &wstate_##sfx, 0);\
	}                                                                                   \
	SEC(sec) int dt_walk_py_##sfx(ctxtype *ctx)                                         \
	{                                                                                   \
		return py_step(ctx, &cprogs_##sfx, &wstate_##sfx);                          \
	}

WALKER_PROGS(perf, "perf_event", struct bpf_perf_event_data, (struct pt_regs *)&ctx->regs)
WALKER_PROGS(kprobe, "kprobe", struct pt_regs, ctx)
WALKER_PROGS(tp, "tracepoint", void, (struct pt_regs *)0)
WALKER_PROGS(rawtp, "raw_tracepoint", void, (struct pt_regs *)0)

/* ---------------------------------------------------------------- exit and mmap
 *
 * Exec is followed by the exec follower (exec.bpf.c, dt_exec.h), which writes procs, requests
 * and wstats too: one program on sched_process_exec serves the walker and the session. */

SEC("raw_tracepoint/sched_process_exit")
int dt_follow_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	/* Only the group leader's exit ends the process. Its tables stay until userspace serves
	 * the request: the process still runs after this tracepoint (since 6.16 it fires before
	 * exit_mm), and a sample taken there, in _exit, must still unwind. Userspace deletes the
	 * procs and pyprocs entries; requests are served in order, so an exec of a reused pid
	 * that follows is not undone. */
	if ((__u32)pid_tgid != tgid || !bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	req_out(DT_REQ_EXIT, tgid, 0);
	return 0;
}

/* struct trace_event_raw_sys_enter for syscalls:sys_enter_mmap (format file offsets). */
struct mmap_enter_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 addr, len, prot, flags, fd, off;
};

struct mmap_exit_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

#define DT_PROT_EXEC 4

SEC("tracepoint/syscalls/sys_enter_mmap")
int dt_follow_mmap_enter(struct mmap_enter_args *a)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u8 one = 1;

	if (!(a->prot & DT_PROT_EXEC) || (__s32)a->fd < 0 || !bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	bpf_map_update_elem(&mmap_pending, &tid, &one, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int dt_follow_mmap_exit(struct mmap_exit_args *a)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	if (!bpf_map_lookup_elem(&mmap_pending, &tid))
		return 0;
	bpf_map_delete_elem(&mmap_pending, &tid);
	if (a->ret < 0 && a->ret > -4096)
		return 0;
	req_follow(DT_REQ_MMAP, pid_tgid >> 32, (__u64)a->ret);
	return 0;
}

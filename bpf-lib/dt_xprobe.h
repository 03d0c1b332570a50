/* dt_xprobe.h — the contract of xprobes (bpf-lib/xprobe.bpf.c): where a user function's time goes.
 * An xprobe joins a function's entry and return (uprobes) with the scheduler's events so that each
 * call's wall time splits into on-CPU, runnable-but-waiting (runq), interruptible sleep (blocked)
 * and uninterruptible sleep (iowait). Included by the BPF C, by runtime/xprobe.c and mirrored by
 * codegen/cg_xprobe.c; every layout is static-asserted.
 *
 * PER-THREAD CLOCKS
 *
 *   `xthreads` (HASH, tid -> struct dt_xthread) holds, for every thread that has entered a watched
 *   function, five cumulative counters (on-CPU ns, runq ns, blocked ns, iowait ns, switches) and a
 *   stack of open calls. The counters only advance while the thread has at least one open call:
 *   every nanosecond from the outermost entry on is charged to exactly one bucket, so for each call
 *   oncpu + runq + blocked + iowait == wall. A call's entry snapshots the counters; its return
 *   subtracts the snapshot. Nesting and recursion need nothing more: each frame has its own
 *   snapshot.
 *
 *   The scheduler hooks (tp_btf/sched_switch, tp_btf/sched_wakeup) do one hash lookup by tid and
 *   return at once for threads with no open call. Switching out charges on-CPU time and records
 *   why the thread left: preempted or still TASK_RUNNING -> runq; TASK_UNINTERRUPTIBLE -> iowait;
 *   anything else (TASK_INTERRUPTIBLE, stopped, traced) -> blocked. A wakeup marks where a blocked
 *   or iowait sleep ended (woke_ns); the wait for a CPU after it is runq (contention, not sleep).
 *   Switching in charges the off-CPU time so split and starts the on-CPU time where the scheduler
 *   started it; switching out charges the task's CPU time over the interval (next section). tp_btf/sched_process_exit deletes the thread's entry, so threads
 *   that exit inside a call leak nothing.
 *
 *   The kernel does not report every switch: on this host (6.18) a thread is now and then put
 *   back on its CPU with no sched_switch event, after a preemption or a sleep (whose wakeup may
 *   be missing too; tracefs shows the same gap). A hook or program that finds the thread running
 *   while the clock says it is off CPU (or the reverse) splits the interval since last_ns with
 *   the scheduler's own on-CPU total (task->se.sum_exec_runtime: exact at a switch; in a uprobe
 *   it lags since its last update, and the run since is added through the reading below), so
 *   the buckets still add up to the wall time and on-CPU stays close to the truth.
 *
 * ON-CPU IS THE SCHEDULER'S
 *
 *   oncpu is the thread's CPU time as the kernel counts it (CLOCK_THREAD_CPUTIME_ID, getrusage,
 *   /proc) over the call, up to the probes' own work inside it. The kernel counts a task's CPU
 *   time (se.sum_exec_runtime) in its run queue's clock_task: the raw clock (rq->clock,
 *   sched_clock) less the time the hypervisor ran something else on the virtual CPU (steal) and,
 *   with IRQ_TIME_ACCOUNTING, interrupts. ktime runs with the raw clock (up to NTP's slew); it
 *   does not stop for steal. Two things follow, and the arithmetic is in dt_xclock.h:
 *   - A running interval's on-CPU part is the task's CPU time over it, not its ktime length: at a
 *     switch-out, se.sum_exec_runtime (just updated) minus its value where the interval started;
 *     in a uprobe program, the same plus the run since the task's last update (se.exec_start). The
 *     rest of the interval -- stolen time, and the tail of a switch whose time the kernel gives the
 *     next task -- is runq: the thread was runnable, not running. Timed by ktime, a loaded host's
 *     steal went to oncpu: 0.24-0.4 ms a blocking call above the thread clock (single steals of
 *     20 ms are seen here).
 *   - Where the CPU time of a switched-in thread starts is se.exec_start, the clock_task of the
 *     run queue's last update before the switch -- and that update is not always just before the
 *     switch: a wakeup that preempts the running task (the idle task most often) has the switch
 *     skip its clock update (rq_clock_skip_update()), so the woken thread's CPU time starts at its
 *     wakeup's enqueue and the wait until the switch (the rest of the interrupt, leaving idle:
 *     5-20 us here) is its CPU time. Timed by the sched_switch event, that went to runq and oncpu
 *     came out short. So the start is placed in ktime through the raw clock: exec_start's raw time
 *     is rq->clock - (rq->clock_task - exec_start) (exact when exec_start is the last update's, as
 *     at every switch), and each thread keeps a reading of that raw clock against ktime (clk_off
 *     = rq->clock - ktime, clk_rq, clk_ns) taken at its switches and wakeups. A reading can only
 *     be late (by the work between the clock's update and the hook: ~1 us for the pick), so the
 *     largest is kept, unless a new one beats what NTP's slew (at most 500 ppm of its age) may have
 *     made of it, or comes from another run queue. Placing the start through clock_task instead
 *     moved it earlier by all the steal between the reading and the switch (the old way: a long
 *     sleep on a loaded host put most of it on-CPU). The start may precede the wakeup event itself
 *     (by the enqueue's work, ~10 us for I/O wakeups here); that part of the sleep stays in its
 *     bucket. Where the kernel has no sched_entity.cfs_rq (no CONFIG_FAIR_GROUP_SCHED), there is
 *     no reading: on-CPU starts at the sched_switch event and a running interval read in a uprobe
 *     is all on-CPU.
 *
 * CALL STACK AND MATCHING
 *
 *   Each open call is a struct dt_xframe with the user stack pointer at entry (it points at the
 *   return address; after `ret` the uretprobe sees sp + 8). A return for xprobe slot S at stack
 *   pointer R first drops every frame deeper than R - 8 (calls abandoned by longjmp or exceptions),
 *   then pops the frame at exactly R - 8 with slot S (the top one, or the one under it when a
 *   tail call made two watched functions share an entry sp). An entry drops deeper frames too.
 *   Depth is bounded by DT_XPROBE_MAX_DEPTH; a call beyond it is not tracked and is counted.
 *
 * PROGRAMS AND THE TAIL CALL
 *
 *   dt_xp_entry  (uprobe at the function's entry; bpf cookie = slot | period << 32) pushes a frame;
 *                a period N > 1 keeps one call in N at random (sampling).
 *   dt_xp_return (uretprobe; cookie = slot) pops, writes struct dt_xresult to key 0 of `xresult`
 *                (PERCPU_ARRAY) and tail-calls xprogs[slot]: the generated program of the xprobe's
 *                block, a kprobe-type program that reads wall, oncpu, … from xresult (and may itself
 *                go on through the DWARF walker: entry -> block -> walker runs -> continuation stays
 *                far under the 33 tail-call limit). Nothing else runs on this CPU in between: the
 *                uprobe programs run with migration disabled and the result is read before any
 *                other xprobe return can run here.
 *   dt_xp_switch, dt_xp_wakeup, dt_xp_exit: the scheduler hooks.
 *
 * WHOSE CALLS
 *
 *   The entry and return programs are shared by every xprobe of the session, and a uprobe's BPF
 *   program runs in every process that hits the breakpoint (with -c the uprobes are attached for
 *   every process; with -p the kernel still runs the program elsewhere once another tracer
 *   watches the same function). So they test, before anything else, the session's filter:
 *   `xfilter` (struct dt_xfilter), the object's only read-only global, which userspace writes
 *   into .rodata before loading. -c sets the command's cgroup (v2) id, so the command and every
 *   process it starts are measured and nothing else, as with the generated programs' own
 *   cgroup test (codegen's filter_cgroup); -p, or -c without cgroup v2, sets the process's tgid.
 *   A load-time constant rather than a map or the cookie: the filter is known before the object
 *   loads (the -c command is forked before the first program is compiled), it is the same for
 *   every attach point, the cookie is taken (slot, period), and the verifier drops a test whose
 *   constant is 0 — system-wide xprobes pay nothing for it. The scheduler hooks need no filter:
 *   they only act on threads with an open call, which only filtered entries create.
 *
 * Maps found by name: xthreads, xresult, xprogs, xstats (PERCPU_ARRAY of enum dt_xstat).
 */
#ifndef DT_XPROBE_H
#define DT_XPROBE_H

#include "dt_abi.h"

#define DT_XPROBE_MAX_DEPTH 32      /* open watched calls per thread */
#define DT_XPROBE_SLOTS 256         /* xprobe attach points per session (xprogs entries) */
#define DT_XPROBE_THREADS 65536     /* threads tracked at once (xthreads max_entries) */

/* Buckets of the per-thread clock; also the order of the counters in dt_xthread.cum and of the
 * snapshot in dt_xframe.snap. */
enum dt_xbucket {
	DT_XB_ONCPU = 0,
	DT_XB_RUNQ = 1,
	DT_XB_BLOCKED = 2,
	DT_XB_IOWAIT = 3,
	DT_XB_NSWITCH = 4, /* a count, not nanoseconds */
	DT_XB__COUNT = 5,
};

struct dt_xframe {
	__u64 sp;                  /* user stack pointer at entry */
	__u64 t0;                  /* bpf_ktime_get_ns() at entry */
	__u64 snap[DT_XB__COUNT];  /* dt_xthread.cum at entry */
	__u32 slot;                /* the xprobe (xprogs index) */
	__u32 pad;
};
DT_ABI_ASSERT(sizeof(struct dt_xframe) == 64, "dt_xframe");

struct dt_xthread {
	__u64 last_ns;             /* start of the interval not yet charged */
	__u32 running;             /* 1: on CPU since last_ns; 0: off CPU in bucket `off` */
	__u32 off;                 /* enum dt_xbucket while off CPU: RUNQ, BLOCKED or IOWAIT */
	__u32 depth;               /* open calls in frames[] */
	__u32 pad;
	__u64 woke_ns;             /* when a BLOCKED or IOWAIT thread was woken; 0: not (yet) */
	__u64 sum_exec;            /* the task's se.sum_exec_runtime as of last_ns */
	__s64 clk_off;             /* the raw clock (rq->clock) of clk_rq minus ktime (ON-CPU ...) */
	__u64 clk_rq;              /* that run queue's address; 0: no reading */
	__u64 clk_ns;              /* ktime of that reading */
	__u64 cum[DT_XB__COUNT];
	struct dt_xframe frames[DT_XPROBE_MAX_DEPTH];
};
DT_ABI_ASSERT(sizeof(struct dt_xthread) == 104 + 64 * DT_XPROBE_MAX_DEPTH, "dt_xthread");

/* The filter of the entry and return programs (see WHOSE CALLS): a call is measured when its
 * process matches every non-zero field. */
struct dt_xfilter {
	__u64 cgroup;              /* -c: bpf_get_current_cgroup_id() of the command's cgroup */
	__u32 tgid;                /* -p, or -c without cgroup v2: the process */
	__u32 pad;
};
DT_ABI_ASSERT(sizeof(struct dt_xfilter) == 16, "dt_xfilter");

/* What the block of an xprobe sees for this call (key 0 of the per-CPU `xresult`). */
struct dt_xresult {
	__u64 wall, oncpu, offcpu, runq, blocked, iowait, nswitch;
	__u64 slot;
};
DT_ABI_ASSERT(sizeof(struct dt_xresult) == 64, "dt_xresult");

/* Counters of what xprobes could not measure (xstats, one u64 per CPU each). runtime prints each
 * non-zero one at exit as "N sentence": always when it means a call the user asked for was lost,
 * otherwise with -v. One row per counter, X(ID, slot, always, sentence), in the order they print,
 * so that the enum and the messages are written once. */
#define DT_XSTATS(X)                                                                         \
	/* a call beyond DT_XPROBE_MAX_DEPTH was not measured */                             \
	X(DEPTH, 0, 1, "xprobe calls not measured: more than " DT_ABI_STR(DT_XPROBE_MAX_DEPTH)   \
	  " watched calls were open in one thread")                                          \
	/* xthreads full: a thread's calls were not measured */                              \
	X(THREADS, 1, 1, "xprobe calls not measured: too many threads inside watched functions " \
	  "at once")                                                                         \
	/* the block's program was missing from xprogs */                                    \
	X(TAILCALL, 4, 1, "xprobe calls measured but their block did not run (internal error: " \
	  "please report it)")                                                               \
	/* no stable clock reading (preempted four times): call not measured */              \
	X(CLOCK, 7, 1, "xprobe calls not measured: the thread kept being preempted while its " \
	  "clock was read")                                                                  \
	/* frames dropped because their call never returned (longjmp) */                     \
	X(STALE, 2, 0, "xprobe calls that never returned (longjmp, exceptions) dropped")     \
	/* a return with no matching entry (attached mid-call, sampled out) */               \
	X(UNMATCHED, 3, 0, "xprobe returns without a measured entry (sampled out, or entered " \
	  "before attaching)")                                                               \
	/* calls measured (returns that ran the block) */                                    \
	X(CALLS, 5, 0, "xprobe calls measured")                                              \
	/* scheduler hook runs that found a thread inside a watched call */                  \
	X(SWITCH, 6, 0, "scheduler hook runs for threads inside watched calls")

enum dt_xstat {
#define DT_XSTAT_ENUM(id, slot, always, what) DT_XS_##id = slot,
	DT_XSTATS(DT_XSTAT_ENUM)
#undef DT_XSTAT_ENUM
	DT_XS__COUNT = 8,
};

#endif

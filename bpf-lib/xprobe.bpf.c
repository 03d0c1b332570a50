// SPDX-License-Identifier: GPL-2.0
/* xprobe.bpf.c — the precompiled half of xprobes (protocol and layouts: dt_xprobe.h). Two uprobe
 * programs shared by every watched function (the bpf cookie says which xprobe and its sampling
 * period) keep a per-thread stack of open calls, and three scheduler hooks keep the per-thread
 * clocks that split a call's wall time into on-CPU, runq, blocked and iowait. The return program
 * hands the call's numbers to the generated block through a per-CPU result and a tail call. The
 * hooks are written to cost one hash lookup for a thread that is inside no watched call. */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dt_xprobe.h"
#define DT_XC_INLINE static __always_inline
#include "dt_xclock.h"

char LICENSE[] SEC("license") = "GPL";

/* Only the fields we read; libbpf relocates their offsets against the running kernel's BTF.
 * sched_entity.cfs_rq exists with CONFIG_FAIR_GROUP_SCHED only (see task_rq()). */
struct rq {
	__u64 clock;
	__u64 clock_task;
} __attribute__((preserve_access_index));
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));
struct sched_entity {
	__u64 exec_start;
	__u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));
struct task_struct {
	int pid;
	struct sched_entity se;
} __attribute__((preserve_access_index));

/* Set by userspace before load (-c CMD: its cgroup; -p PID: the process): whose calls are
 * measured (dt_xprobe.h, WHOSE CALLS). */
const volatile struct dt_xfilter xfilter = { 0 };

/* Task states as the scheduler passes them to sched_switch (include/linux/sched.h). */
#define X_TASK_UNINTERRUPTIBLE 0x0002
#define X_TASK_NOLOAD 0x0400

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DT_XPROBE_THREADS);
	/* Allocated on first entry, not up front: 65536 threads of 2 KiB each would pin 128 MiB. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct dt_xthread);
} xthreads SEC(".maps");

/* A zeroed dt_xthread to insert from: the value is too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_xthread);
} xzero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_xresult);
} xresult SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_XPROBE_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} xprogs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DT_XS__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} xstats SEC(".maps");

static __always_inline void stat_inc(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&xstats, &which);

	if (v)
		*v += n;
}

/* Frame k of a thread (the callers check k < depth <= DT_XPROBE_MAX_DEPTH). The mask after an
 * opaque copy gives the verifier a bound it can see: clang would otherwise fold the callers'
 * checks into a shape the verifier cannot follow ("unbounded memory access"). */
_Static_assert((DT_XPROBE_MAX_DEPTH & (DT_XPROBE_MAX_DEPTH - 1)) == 0, "power of two");
static __always_inline struct dt_xframe *frame(struct dt_xthread *t, __u32 k)
{
	asm volatile("" : "+r"(k));
	return &t->frames[k & (DT_XPROBE_MAX_DEPTH - 1)];
}

#define barrier() asm volatile("" ::: "memory")
#define READ_ONCE_U64(x) (*(volatile __u64 *)&(x))

/* The run queue `p` is on (its CPU's), or NULL where the kernel does not say (no
 * CONFIG_FAIR_GROUP_SCHED: then xprobes fall back to the switch events' own times). */
static __always_inline struct rq *task_rq(struct task_struct *p)
{
	struct cfs_rq *c;

	if (!bpf_core_field_exists(p->se.cfs_rq))
		return 0;
	c = p->se.cfs_rq;
	return c ? c->rq : 0;
}

/* What the clock arithmetic (dt_xclock.h) needs of task `p` and its run queue, at `now`. */
static __always_inline void sched_of(struct dt_xsched *s, struct task_struct *p, __u64 now)
{
	struct rq *rq = task_rq(p);

	s->now = now;
	s->rq = (__u64)rq;
	s->clock = rq ? rq->clock : 0;
	s->clock_task = rq ? rq->clock_task : 0;
	s->exec_start = p->se.exec_start;
	s->sum_exec = p->se.sum_exec_runtime;
}

/* sched_of() for the current task read by a uprobe program, which a tick can interrupt: the
 * tick's update_curr() moves exec_start, sum_exec_runtime and the run queue's clocks together,
 * and a read torn across it (the old exec_start with the new sum, or a ktime taken before the
 * update with fields after it) puts the task's CPU time past `now` by up to the tick's delta, so
 * a call's on-CPU part came out above its wall time and its runq part below zero (seen: 130 ns
 * in one call of 3,400). The fields are read first and ktime after them, then exec_start and the
 * clock again: returns 0 when an update came in between (the caller reads again). */
static __always_inline int sched_now(struct dt_xsched *s, struct task_struct *p)
{
	struct rq *rq = task_rq(p);

	sched_of(s, p, 0);
	barrier();
	s->now = bpf_ktime_get_ns();
	barrier();
	return p->se.exec_start == s->exec_start && (rq ? rq->clock : 0) == s->clock;
}

/* Reads the thread's clock as of now: the counters with the running interval added to on-CPU.
 * The uprobe programs can be preempted (they run with migration, not preemption, disabled), and
 * the scheduler hooks then update the clock under them; so the programs do not write the clock of
 * a thread that has an open call (but to close an interval whose switch-in the kernel did not
 * report), and read it like a seqcount whose sequence is last_ns: a reading is kept only if
 * last_ns did not change across it. A reader switched out in the window sees it move: the
 * switch-out sets it to its own time, later than anything the reader read, and the switch-in
 * never sets it below that (the wakeup, which leaves it, runs while the thread sleeps, outside
 * any reader). Then no switch happened in the
 * window, the thread ran all through it, and sum(v) == now - (clock start) for every reading,
 * which is what makes a call's buckets add up to its wall time exactly. */
static __always_inline int read_clock(struct dt_xthread *t, __u64 *now, __u64 *v)
{
	struct task_struct *me = bpf_get_current_task_btf();

	for (int i = 0; i < 4; i++) {
		__u64 l1 = READ_ONCE_U64(t->last_ns);
		struct dt_xsched s;
		__u32 running;

		barrier();
		for (int k = 0; k < DT_XB__COUNT; k++)
			v[k] = t->cum[k];
		running = t->running;
		if (!sched_now(&s, me))
			continue;
		if (running)
			dt_xc_read(t, &s, v);
		barrier();
		if (READ_ONCE_U64(t->last_ns) != l1)
			continue;
		if (!running) {
			/* We are running, so the kernel switched us in without telling: close the
			 * interval now (the one write to a live clock, see dt_xprobe.h). */
			dt_xc_missed_in(t, &s);
			barrier();
			continue;
		}
		*now = s.now;
		return 0;
	}
	return -1;
}

/* Drops the open calls that lie deeper on the stack than `sp` (their frames are gone: the thread
 * longjmp'd or unwound past them) and, with `same_slot_too`, a call of `slot` at exactly `sp`
 * (the same function cannot be open twice at one stack position). Returns the new depth. */
static __always_inline __u32 drop_stale(struct dt_xthread *t, __u32 d, __u64 sp, __u32 slot,
					bool same_slot_too)
{
	__u32 dropped = 0;

	for (int i = 0; i < DT_XPROBE_MAX_DEPTH; i++) {
		__u32 k = d - 1;

		if (d == 0 || k >= DT_XPROBE_MAX_DEPTH)
			break;
		struct dt_xframe *f = frame(t, k);

		if (f->sp > sp || (f->sp == sp && !(same_slot_too && f->slot == slot)))
			break;
		d--;
		dropped++;
	}
	if (dropped)
		stat_inc(DT_XS_STALE, dropped);
	return d;
}

/* Whether the current process is one the session traces (a zero field is no test, and with
 * a zero constant the verifier drops the branch). */
static __always_inline bool watched(void)
{
	if (xfilter.tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) != xfilter.tgid)
		return false;
	if (xfilter.cgroup && bpf_get_current_cgroup_id() != xfilter.cgroup)
		return false;
	return true;
}

SEC("uprobe")
int dt_xp_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), now, sp = PT_REGS_SP(ctx);
	__u32 slot = (__u32)cookie, period = (__u32)(cookie >> 32), zero = 0, d;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dt_xthread *t;
	struct dt_xframe *f;
	__u64 v[DT_XB__COUNT];

	if (!watched())
		return 0;
	if (period > 1 && bpf_get_prandom_u32() % period)
		return 0;
	t = bpf_map_lookup_elem(&xthreads, &tid);
	if (!t) {
		struct dt_xthread *z = bpf_map_lookup_elem(&xzero, &zero);

		if (z)
			bpf_map_update_elem(&xthreads, &tid, z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&xthreads, &tid);
		if (!t) {
			stat_inc(DT_XS_THREADS, 1);
			return 0;
		}
	}
	d = t->depth;
	if (d > DT_XPROBE_MAX_DEPTH)
		d = DT_XPROBE_MAX_DEPTH;
	if (d == 0) {
		/* The clock is stopped and the hooks ignore this thread: start it, charging
		 * nothing. Only this thread writes it until depth becomes 1 below. */
		struct dt_xsched s;

		if (!sched_now(&s, bpf_get_current_task_btf()) &&
		    !sched_now(&s, bpf_get_current_task_btf())) {
			stat_inc(DT_XS_CLOCK, 1);
			return 0;
		}
		dt_xc_start(t, &s);
		barrier();
	}
	d = drop_stale(t, d, sp, slot, true);
	if (d >= DT_XPROBE_MAX_DEPTH) {
		t->depth = d;
		stat_inc(DT_XS_DEPTH, 1);
		return 0;
	}
	f = frame(t, d);
	if (read_clock(t, &now, v) < 0) {
		t->depth = d;
		stat_inc(DT_XS_CLOCK, 1);
		return 0;
	}
	f->sp = sp;
	f->t0 = now;
	for (int i = 0; i < DT_XB__COUNT; i++)
		f->snap[i] = v[i];
	f->slot = slot;
	/* The frame is complete before the hooks (or a preempting reader) can see it. */
	barrier();
	t->depth = d + 1;
	return 0;
}

SEC("uretprobe")
int dt_xp_return(struct pt_regs *ctx)
{
	__u32 slot = (__u32)bpf_get_attach_cookie(ctx), zero = 0, d, k;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	/* After `ret` the stack pointer is 8 above where it was at the entry breakpoint. */
	__u64 sp = PT_REGS_SP(ctx) - 8, now;
	struct dt_xthread *t = bpf_map_lookup_elem(&xthreads, &tid);
	struct dt_xresult *r;
	struct dt_xframe *f;
	__u64 wall, v[DT_XB__COUNT];

	if (!watched())
		return 0;
	if (!t || !t->depth) {
		stat_inc(DT_XS_UNMATCHED, 1);
		return 0;
	}
	if (read_clock(t, &now, v) < 0) {
		stat_inc(DT_XS_CLOCK, 1);
		return 0;
	}
	d = t->depth;
	if (d > DT_XPROBE_MAX_DEPTH)
		d = DT_XPROBE_MAX_DEPTH;
	d = drop_stale(t, d, sp, slot, false);
	/* The call is the top frame, or the one under it when a watched function tail-jumped into
	 * another watched one (both were entered at the same sp). */
	k = d - 1;
	if (d == 0 || k >= DT_XPROBE_MAX_DEPTH || frame(t, k)->sp != sp) {
		t->depth = d;
		stat_inc(DT_XS_UNMATCHED, 1);
		return 0;
	}
	if (frame(t, k)->slot != slot) {
		k = d - 2;
		if (d < 2 || k >= DT_XPROBE_MAX_DEPTH || frame(t, k)->sp != sp ||
		    frame(t, k)->slot != slot) {
			t->depth = d;
			stat_inc(DT_XS_UNMATCHED, 1);
			return 0;
		}
	}
	f = frame(t, k);
	wall = now - f->t0;
	for (int i = 0; i < DT_XB__COUNT; i++)
		v[i] -= f->snap[i];
	dt_xc_settle(v);
	if (k + 1 < d && k + 1 < DT_XPROBE_MAX_DEPTH) {
		/* Keep the sibling that still has to return. */
		*f = *frame(t, k + 1);
		t->depth = d - 1;
	} else {
		t->depth = k;
	}
	r = bpf_map_lookup_elem(&xresult, &zero);
	if (!r)
		return 0;
	r->wall = wall;
	r->oncpu = v[DT_XB_ONCPU];
	r->offcpu = wall > v[DT_XB_ONCPU] ? wall - v[DT_XB_ONCPU] : 0;
	r->runq = v[DT_XB_RUNQ];
	r->blocked = v[DT_XB_BLOCKED];
	r->iowait = v[DT_XB_IOWAIT];
	r->nswitch = v[DT_XB_NSWITCH];
	r->slot = slot;
	stat_inc(DT_XS_CALLS, 1);
	bpf_tail_call(ctx, &xprogs, slot);
	stat_inc(DT_XS_TAILCALL, 1);
	return 0;
}

/* The bucket a thread's time goes to after it switched out in `state`. */
static __always_inline __u32 off_bucket(bool preempt, unsigned int state)
{
	if (preempt || state == 0)
		return DT_XB_RUNQ;
	if ((state & X_TASK_UNINTERRUPTIBLE) && !(state & X_TASK_NOLOAD))
		return DT_XB_IOWAIT;
	return DT_XB_BLOCKED;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(dt_xp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tid = (__u32)prev->pid;
	struct dt_xthread *t;
	struct dt_xsched s;
	__u64 now = 0;

	t = tid ? bpf_map_lookup_elem(&xthreads, &tid) : 0;
	if (t && t->depth) {
		now = bpf_ktime_get_ns();
		/* prev's CPU time is exact here: the switch just updated it. */
		sched_of(&s, prev, now);
		dt_xc_switch_out(t, &s, off_bucket(preempt, prev_state));
		stat_inc(DT_XS_SWITCH, 1);
	}
	tid = (__u32)next->pid;
	t = tid ? bpf_map_lookup_elem(&xthreads, &tid) : 0;
	if (t && t->depth) {
		if (!now)
			now = bpf_ktime_get_ns();
		sched_of(&s, next, now);
		dt_xc_switch_in(t, &s);
		stat_inc(DT_XS_SWITCH, 1);
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(dt_xp_wakeup, struct task_struct *p)
{
	__u32 tid = (__u32)p->pid;
	struct dt_xthread *t = bpf_map_lookup_elem(&xthreads, &tid);
	struct dt_xsched s;

	if (!t || !t->depth)
		return 0;
	/* The enqueue has just updated the clock of p's run queue (every wakeup path does, under
	 * its lock, before this event): a fresh reading. The thread is asleep, so none of its own
	 * readers can be inside read_clock() to see these writes. */
	sched_of(&s, p, bpf_ktime_get_ns());
	dt_xc_wakeup(t, &s);
	return 0;
}

/* Runs in the exiting thread: whatever calls it had open will never return. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(dt_xp_exit)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&xthreads, &tid);
	return 0;
}

/* dt_xclock.h — the arithmetic of the xprobe per-thread clock (dt_xprobe.h: PER-THREAD CLOCKS,
 * ON-CPU IS THE SCHEDULER'S), apart from how its inputs are read. The programs of xprobe.bpf.c
 * read the task's and its run queue's fields into a struct dt_xsched and call these functions;
 * tests/unit/test_xclock.c calls them with made-up scheduler histories (steal time, skipped clock
 * updates, missed switches) and checks oncpu against the scheduler's own count of the thread's CPU
 * time. Plain C that is also BPF C: no helpers, no loops, constant indices only. */
#ifndef DT_XCLOCK_H
#define DT_XCLOCK_H

#include "dt_xprobe.h"

#ifndef DT_XC_INLINE
#define DT_XC_INLINE static inline __attribute__((always_inline))
#endif

/* What a hook read of the scheduler about one task, at one moment. */
struct dt_xsched {
	__u64 now;        /* bpf_ktime_get_ns() of the hook */
	__u64 rq;         /* address of the task's run queue; 0: the kernel does not say */
	__u64 clock;      /* rq->clock as of the run queue's last update (sched_clock) */
	__u64 clock_task; /* rq->clock_task as of the same update: clock less steal and irq time */
	__u64 exec_start; /* the task's se.exec_start: clock_task at the last update of its time */
	__u64 sum_exec;   /* the task's se.sum_exec_runtime: its CPU time as of exec_start */
};

/* How fast ktime and sched_clock may drift apart: NTP slews ktime by at most 500 ppm; a held
 * reading is trusted less by (age >> DT_XCLK_DRIFT_SHIFT), 1/2048 = 488 ppm of its age. */
#define DT_XCLK_DRIFT_SHIFT 11

/* A reading of the run queue's raw clock: rq->clock was `clock` at about ktime `now`. rq->clock
 * (sched_clock) runs at ktime's rate, steal time or not; clock_task stops while the hypervisor
 * runs something else (steal) and, with IRQ_TIME_ACCOUNTING, during interrupts. So the offset
 * clock - ktime is a constant up to NTP's slew, and a reading can only underestimate it, by the
 * work between the clock's last update and the hook. The thread keeps the largest, unless a new
 * one beats what drift may have made of it, or comes from another run queue. */
DT_XC_INLINE void dt_xc_reading(struct dt_xthread *t, const struct dt_xsched *s)
{
	__s64 off = (__s64)(s->clock - s->now);
	__u64 age = s->now > t->clk_ns ? s->now - t->clk_ns : 0;

	if (!s->rq)
		return;
	if (s->rq != t->clk_rq || off > t->clk_off - (__s64)(age >> DT_XCLK_DRIFT_SHIFT)) {
		t->clk_off = off;
		t->clk_rq = s->rq;
		t->clk_ns = s->now;
	}
}

/* Where, in ktime, the scheduler's clock_task was `v` (a task's exec_start): clock_task is the
 * raw clock less what it stopped for, and it stopped for nothing between the update that set
 * exec_start and the last one when they are one update (the case at every switch), so the raw
 * clock there is rq->clock - (clock_task - v); the thread's reading places it in ktime. Returns
 * 0 when the thread holds no reading of this run queue. */
DT_XC_INLINE int dt_xc_place(const struct dt_xthread *t, const struct dt_xsched *s, __u64 v,
			     __u64 *ktime)
{
	if (!s->rq || s->rq != t->clk_rq)
		return 0;
	*ktime = (__u64)((__s64)(s->clock - (s->clock_task - v)) - t->clk_off);
	return 1;
}

/* The task's CPU time at s->now, as CLOCK_THREAD_CPUTIME_ID would read it: se.sum_exec_runtime
 * plus the run since exec_start. Without a reading, the lagging se.sum_exec_runtime and 0. */
DT_XC_INLINE int dt_xc_cpu_now(const struct dt_xthread *t, const struct dt_xsched *s, __u64 *cpu)
{
	__u64 from;

	*cpu = s->sum_exec;
	if (!dt_xc_place(t, s, s->exec_start, &from))
		return 0;
	if (s->now > from)
		*cpu += s->now - from;
	return 1;
}

/* cum[b] += v for an off-CPU bucket, with constant indices: a variable one is another bound the
 * verifier would have to be shown. */
DT_XC_INLINE void dt_xc_charge_off(struct dt_xthread *t, __u32 b, __u64 v)
{
	if (b == DT_XB_RUNQ)
		t->cum[DT_XB_RUNQ] += v;
	else if (b == DT_XB_BLOCKED)
		t->cum[DT_XB_BLOCKED] += v;
	else if (b == DT_XB_IOWAIT)
		t->cum[DT_XB_IOWAIT] += v;
}

/* Charges the off-CPU time [last_ns, end) of a thread: to its sleep's bucket `off` until its
 * wakeup (woke_ns; 0: none yet), to runq from there. A wakeup at or after `end` is one whose
 * enqueue the scheduler already counted as the start of the thread's CPU time (see
 * dt_xc_switch_in()): the time to `end` was sleep. */
DT_XC_INLINE void dt_xc_charge_wait(struct dt_xthread *t, __u64 end)
{
	__u64 from = t->last_ns, w = t->woke_ns;

	if (end <= from)
		return;
	if (!w || w >= end) {
		dt_xc_charge_off(t, t->off, end - from);
	} else if (w <= from) {
		dt_xc_charge_off(t, DT_XB_RUNQ, end - from);
	} else {
		dt_xc_charge_off(t, t->off, w - from);
		dt_xc_charge_off(t, DT_XB_RUNQ, end - w);
	}
}

/* The part of [last_ns, end) the thread was on CPU, given its CPU time `cpu` at `end` (sum_exec
 * is its CPU time at last_ns). */
DT_XC_INLINE __u64 dt_xc_on_part(const struct dt_xthread *t, __u64 end, __u64 cpu)
{
	__u64 total = end > t->last_ns ? end - t->last_ns : 0;
	__u64 on = cpu > t->sum_exec ? cpu - t->sum_exec : 0;

	return on < total ? on : total;
}

/* Charges [last_ns, end) of a thread that ran from last_ns, whose CPU time at `end` is `cpu`:
 * that much is on-CPU; the rest is time the scheduler did not count as its run -- stolen by the
 * hypervisor, or the tail of a switch the scheduler charged to the next task -- and goes to runq
 * (runnable, not running). */
DT_XC_INLINE void dt_xc_charge_run(struct dt_xthread *t, __u64 end, __u64 cpu)
{
	__u64 total = end > t->last_ns ? end - t->last_ns : 0;
	__u64 on = dt_xc_on_part(t, end, cpu);

	t->cum[DT_XB_ONCPU] += on;
	t->cum[DT_XB_RUNQ] += total - on;
}

/* Charges [last_ns, end) of a thread that was off CPU at last_ns and is running at `end` though
 * the kernel reported no switch-in: `cpu` - sum_exec of it was on CPU (put last; where it lay is
 * unknown), the rest is its wait (dt_xc_charge_wait()). */
DT_XC_INLINE void dt_xc_charge_split(struct dt_xthread *t, __u64 end, __u64 cpu)
{
	__u64 on = dt_xc_on_part(t, end, cpu);

	t->cum[DT_XB_ONCPU] += on;
	dt_xc_charge_wait(t, end - on);
}

/* The outermost entry: starts the clock at s->now (the task is current), charging nothing. */
DT_XC_INLINE void dt_xc_start(struct dt_xthread *t, const struct dt_xsched *s)
{
	dt_xc_cpu_now(t, s, &t->sum_exec);
	t->woke_ns = 0;
	t->last_ns = s->now;
	t->running = 1;
}

/* The task switches out at s->now (s read from prev: its CPU time is exact, the switch just
 * updated it) into off-CPU bucket `off`. */
DT_XC_INLINE void dt_xc_switch_out(struct dt_xthread *t, const struct dt_xsched *s, __u32 off)
{
	dt_xc_reading(t, s);
	if (t->running)
		dt_xc_charge_run(t, s->now, s->sum_exec);
	else
		dt_xc_charge_split(t, s->now, s->sum_exec); /* its switch-in was not reported */
	t->last_ns = s->now;
	t->woke_ns = 0;
	t->sum_exec = s->sum_exec;
	t->running = 0;
	t->off = off;
	t->cum[DT_XB_NSWITCH]++;
}

/* The task switches in at s->now (s read from next). Its CPU time starts where the scheduler
 * started it, se.exec_start, placed in ktime by the thread's reading (dt_xprobe.h, ON-CPU IS THE
 * SCHEDULER'S), clamped to [last_ns, now]; `now` without a reading of its run queue. */
DT_XC_INLINE void dt_xc_switch_in(struct dt_xthread *t, const struct dt_xsched *s)
{
	__u64 start = s->now;

	dt_xc_reading(t, s);
	if (dt_xc_place(t, s, s->exec_start, &start)) {
		if (start < t->last_ns)
			start = t->last_ns;
		if (start > s->now)
			start = s->now;
	}
	if (t->running)
		dt_xc_charge_run(t, start, s->sum_exec); /* its switch-out was not reported */
	else
		dt_xc_charge_wait(t, start);
	t->last_ns = start;
	t->woke_ns = 0;
	t->sum_exec = s->sum_exec;
	t->running = 1;
}

/* The task, asleep in a call, is woken at s->now (s read from it: its run queue's enqueue just
 * updated the clock, a fresh reading). Marks where the sleep ended; the switch-in charges it. */
DT_XC_INLINE void dt_xc_wakeup(struct dt_xthread *t, const struct dt_xsched *s)
{
	if (t->running || t->woke_ns || (t->off != DT_XB_BLOCKED && t->off != DT_XB_IOWAIT))
		return;
	t->woke_ns = s->now;
	dt_xc_reading(t, s);
}

/* The counters as of s->now, read by the (current) task itself: cum with its running interval
 * split into on-CPU (its CPU time since last_ns) and runq (the rest: steal). Without a reading,
 * all of the interval is on-CPU. The caller has checked that the thread is running. */
DT_XC_INLINE void dt_xc_read(const struct dt_xthread *t, const struct dt_xsched *s, __u64 *v)
{
	__u64 total = s->now > t->last_ns ? s->now - t->last_ns : 0, cpu, on = total;

	if (dt_xc_cpu_now(t, s, &cpu))
		on = dt_xc_on_part(t, s->now, cpu);
	v[DT_XB_ONCPU] += on;
	v[DT_XB_RUNQ] += total - on;
}

/* A call's counters (its return's reading less its entry's, in v): the off-CPU buckets only grow,
 * but the running interval's split into on-CPU and runq is an estimate at each reading (the CPU
 * time since exec_start placed through the thread's clock reading), and two readings of one
 * interval can disagree by the estimate's error, so one of the two differences can come out
 * below zero (wrapped) while all of them still add up to the call's wall time. That part moves to
 * the other one: both stay at zero or above and the sum stays the wall time. */
DT_XC_INLINE void dt_xc_settle(__u64 *v)
{
	if ((__s64)v[DT_XB_RUNQ] < 0) {
		v[DT_XB_ONCPU] += v[DT_XB_RUNQ];
		v[DT_XB_RUNQ] = 0;
	} else if ((__s64)v[DT_XB_ONCPU] < 0) {
		v[DT_XB_RUNQ] += v[DT_XB_ONCPU];
		v[DT_XB_ONCPU] = 0;
	}
}

/* The task, current, finds its clock off CPU: the kernel switched it in without telling. Closes
 * the interval at s->now. */
DT_XC_INLINE void dt_xc_missed_in(struct dt_xthread *t, const struct dt_xsched *s)
{
	__u64 cpu;

	dt_xc_cpu_now(t, s, &cpu);
	dt_xc_charge_split(t, s->now, cpu);
	t->sum_exec = cpu;
	t->woke_ns = 0;
	t->last_ns = s->now;
	t->running = 1;
}

#endif

/* test_xclock.c — the xprobe per-thread clock (bpf-lib/dt_xclock.h) against a model of the
 * scheduler: one run queue whose raw clock runs with ktime and whose clock_task stops while the
 * hypervisor steals the CPU, and one task whose CPU time the model keeps as the kernel does
 * (se.exec_start, se.sum_exec_runtime, advanced at each clock update while it is current). Each
 * case drives the hooks as the kernel would and checks a call's oncpu against the task's own CPU
 * time over the call (CLOCK_THREAD_CPUTIME_ID), and that its buckets add up to its wall time. */
#include "bpf-lib/dt_xclock.h"
#include "tests/unit/t.h"
#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define OFF (7 * MS) /* rq->clock - ktime */
#define LATE (1 * US) /* how long after the clock update each hook runs */

struct sim {
	__u64 k;                       /* ktime now */
	__u64 stolen;                  /* steal so far: clock_task = clock - stolen at an update */
	__u64 clock, clock_task;       /* as of the last update */
	__u64 exec_start, sum_exec;    /* the task's */
	int current;                   /* the task is on the CPU */
	struct dt_xthread t;
};

/* The scheduler's update_rq_clock() (and update_curr() for the current task) at ktime k. */
static void update(struct sim *m)
{
	__u64 ct = m->k + OFF - m->stolen;

	if (m->current) {
		m->sum_exec += ct - m->exec_start;
		m->exec_start = ct;
	}
	m->clock = m->k + OFF;
	m->clock_task = ct;
}

/* What a hook at ktime k reads. */
static struct dt_xsched rd(const struct sim *m)
{
	struct dt_xsched s = { m->k, 1, m->clock, m->clock_task, m->exec_start, m->sum_exec };

	return s;
}

/* The task's CPU time now, as clock_gettime(CLOCK_THREAD_CPUTIME_ID) gives it. */
static __u64 thread_clock(const struct sim *m)
{
	return m->sum_exec + (m->current ? m->k + OFF - m->stolen - m->exec_start : 0);
}

static void run(struct sim *m, __u64 ns) { m->k += ns; }
static void steal(struct sim *m, __u64 ns) { m->k += ns; m->stolen += ns; }

/* __schedule switching the task out (update, then the event LATE after it). */
static void switch_out(struct sim *m, __u32 bucket)
{
	struct dt_xsched s;

	update(m);
	m->current = 0;
	run(m, LATE);
	s = rd(m);
	dt_xc_switch_out(&m->t, &s, bucket);
}

/* __schedule switching the task in; with skip, the clock update is skipped (a wakeup that
 * preempted set rq_clock_skip_update()), so its CPU time starts at the clock's last update. */
static void switch_in(struct sim *m, int skip)
{
	struct dt_xsched s;

	if (!skip)
		update(m);
	m->exec_start = m->clock_task;
	m->current = 1;
	run(m, LATE);
	s = rd(m);
	dt_xc_switch_in(&m->t, &s);
}

static void wakeup(struct sim *m)
{
	struct dt_xsched s;

	update(m);
	run(m, LATE);
	s = rd(m);
	dt_xc_wakeup(&m->t, &s);
}

/* What an entry or return program reads: the counters as of now. */
static void snap(struct sim *m, __u64 *v)
{
	struct dt_xsched s = rd(m);

	for (int i = 0; i < DT_XB__COUNT; i++)
		v[i] = m->t.cum[i];
	dt_xc_read(&m->t, &s, v);
}

/* A thread that has been switched in once (so it holds a reading), then runs 300 us and enters
 * the watched call (the hooks only follow threads with an open call; the clock starts here). */
static void begin(struct sim *m, __u64 *v0, __u64 *cpu0, __u64 *k0)
{
	struct dt_xsched s;

	memset(m, 0, sizeof(*m));
	m->k = 100 * MS;
	update(m);
	m->t.running = 1;
	m->t.last_ns = m->k;
	switch_in(m, 0);
	run(m, 300 * US);
	s = rd(m);
	dt_xc_start(&m->t, &s);
	snap(m, v0);
	*cpu0 = thread_clock(m);
	*k0 = m->k;
}

/* The call's oncpu is the task's CPU time over it, within `slack` ns, and its buckets add up. */
static void end(struct sim *m, const __u64 *v0, __u64 cpu0, __u64 k0, __u64 slack)
{
	__u64 v[DT_XB__COUNT], on, cpu = thread_clock(m) - cpu0, sum = 0;

	snap(m, v);
	on = v[DT_XB_ONCPU] - v0[DT_XB_ONCPU];
	for (int i = 0; i < DT_XB_NSWITCH; i++)
		sum += v[i] - v0[i];
	if (!(on + slack >= cpu && on <= cpu + slack))
		fprintf(stderr, "  oncpu %llu ns, the task's CPU time %llu ns\n",
			(unsigned long long)on, (unsigned long long)cpu);
	CHECK(on + slack >= cpu && on <= cpu + slack);
	CHECK_EQ_INT((long long)sum, (long long)(m->k - k0));
}

/* Steal while the call runs and while it waits for the CPU after a preemption: the hypervisor
 * ran something else, clock_task stopped, the thread clock did not advance. Before the clock
 * was placed with the raw clock and on-CPU taken from the scheduler's count, oncpu took in the
 * steal of both (here 8 ms over a call of 3 ms of CPU). */
static void steal_is_not_oncpu(void)
{
	struct sim m;
	__u64 v0[DT_XB__COUNT], cpu0, k0;

	begin(&m, v0, &cpu0, &k0);
	run(&m, 1 * MS);
	update(&m); /* a tick */
	steal(&m, 3 * MS);
	run(&m, 1 * MS);
	switch_out(&m, DT_XB_RUNQ); /* preempted by a busy task on the same CPU */
	run(&m, 5 * MS);
	steal(&m, 5 * MS);
	run(&m, 2 * MS);
	switch_in(&m, 0);
	run(&m, 1 * MS);
	end(&m, v0, cpu0, k0, 2 * LATE);
	CHECK(m.t.cum[DT_XB_RUNQ] >= 15 * MS);
}

/* A sleep whose wakeup preempts the busy task: the switch skips its clock update, so the kernel
 * counts the woken thread's CPU time from the enqueue, 40 us before the switch. */
static void skipped_update_counts_from_the_wakeup(void)
{
	struct sim m;
	__u64 v0[DT_XB__COUNT], cpu0, k0;

	begin(&m, v0, &cpu0, &k0);
	run(&m, 200 * US);
	switch_out(&m, DT_XB_BLOCKED);
	run(&m, 1 * MS);
	wakeup(&m);
	run(&m, 40 * US);
	switch_in(&m, 1);
	run(&m, 200 * US);
	end(&m, v0, cpu0, k0, 2 * LATE);
	CHECK(m.t.cum[DT_XB_BLOCKED] >= 1 * MS);
}

/* The same with steal during the sleep and during the wait after the wakeup: the placement of
 * the start must not move by the steal in between. */
static void steal_while_off_cpu_does_not_move_the_start(void)
{
	struct sim m;
	__u64 v0[DT_XB__COUNT], cpu0, k0;

	begin(&m, v0, &cpu0, &k0);
	run(&m, 200 * US);
	switch_out(&m, DT_XB_BLOCKED);
	steal(&m, 20 * MS);
	wakeup(&m);
	run(&m, 3 * MS); /* waits behind the busy task */
	steal(&m, 4 * MS);
	switch_in(&m, 0);
	run(&m, 200 * US);
	end(&m, v0, cpu0, k0, 2 * LATE);
}

/* Two readings of one running interval that disagree: the entry's split 130 ns of it into runq,
 * the return's (torn across a tick, or placed by a later reading) none. The call's runq
 * difference is then -130 ns, wrapped: settled, it is 0, on-CPU gives up the 130 ns, and the
 * buckets still add up to the wall time. The same the other way for on-CPU. */
static void settle_keeps_buckets_non_negative(void)
{
	__u64 v0[DT_XB__COUNT] = { [DT_XB_ONCPU] = 1000, [DT_XB_RUNQ] = 130, [DT_XB_BLOCKED] = 50 };
	__u64 v1[DT_XB__COUNT] = { [DT_XB_ONCPU] = 4500, [DT_XB_RUNQ] = 0, [DT_XB_BLOCKED] = 50 };
	__u64 v[DT_XB__COUNT], sum = 0;

	for (int i = 0; i < DT_XB__COUNT; i++)
		v[i] = v1[i] - v0[i];
	dt_xc_settle(v);
	CHECK_EQ_INT((long long)v[DT_XB_RUNQ], 0);
	CHECK_EQ_INT((long long)v[DT_XB_ONCPU], 3370);
	for (int i = 0; i < DT_XB_NSWITCH; i++)
		sum += v[i];
	CHECK_EQ_INT((long long)sum, 3370);

	v0[DT_XB_ONCPU] = 2000;
	v0[DT_XB_RUNQ] = 0;
	v1[DT_XB_ONCPU] = 1900;
	v1[DT_XB_RUNQ] = 600;
	for (int i = 0; i < DT_XB__COUNT; i++)
		v[i] = v1[i] - v0[i];
	dt_xc_settle(v);
	CHECK_EQ_INT((long long)v[DT_XB_ONCPU], 0);
	CHECK_EQ_INT((long long)v[DT_XB_RUNQ], 500);

	v[DT_XB_ONCPU] = 700;
	v[DT_XB_RUNQ] = 20;
	dt_xc_settle(v);
	CHECK_EQ_INT((long long)v[DT_XB_ONCPU], 700);
	CHECK_EQ_INT((long long)v[DT_XB_RUNQ], 20);
}

int main(void)
{
	T_RUN(steal_is_not_oncpu);
	T_RUN(skipped_update_counts_from_the_wakeup);
	T_RUN(steal_while_off_cpu_does_not_move_the_start);
	T_RUN(settle_keeps_buckets_non_negative);
	return t_done();
}

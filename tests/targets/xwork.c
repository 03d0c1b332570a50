/* xwork — functions that spend their time in known ways, for xprobes (issue 5). Each measures
 * itself from its first to its last line with CLOCK_MONOTONIC (wall) and CLOCK_THREAD_CPUTIME_ID
 * (on-CPU) and the program prints, per function, the number of calls and the totals, so a test can
 * compare them with what the tracer saw:
 *   burn      burns MS of CPU time                      -> on CPU
 *   nap       sleeps MS (nanosleep)                     -> blocked
 *   contend   burns MS of CPU time on a CPU shared with two busy threads pinned to it -> runq
 *   lockwait  waits about MS for a mutex another thread holds -> blocked
 *   syncwrite writes 4 MiB to DIR and fsyncs it         -> iowait (uninterruptible sleep)
 *   outer     calls burn and nap (nesting)
 *   rec       recursion 4 deep, burning MS/4 per level
 *   jumper    calls doomed, which never returns (longjmp back into jumper)
 *   exiter    runs in a thread that exits inside it (pthread_exit)
 * Usage: xwork [ROUNDS [DIR [MS]]] (defaults 5, ".", 20). Output lines:
 *   xwork FUNC calls=N wall_ns=W cpu_ns=C
 * Two more modes serve bench/xprobe_overhead.sh:
 *   xwork calls N     calls tiny() N times: "xwork calls n=N ns_per_call=X"
 *   xwork pingpong N  two threads pinned to one CPU bounce a byte N times through pipes, each
 *                     inside pp_worker() all along: "xwork pingpong n=N switches=S ns_per_switch=X"
 * And one serves the on-CPU check of xprobe.test (a call's on-CPU time can never be less than what
 * the thread's own clock counted inside it):
 *   xwork thread N DIR  calls each of these N times, every call reading CLOCK_THREAD_CPUTIME_ID as
 *                     its first and last act: tc_empty (nothing else), tc_spin (burns 300 us of CPU), tc_nap (burns 100 us,
 *                     nanosleep 1 ms, burns 100 us), tc_sync (pwrite 64 KiB to a temp file in DIR,
 *                     fdatasync); "xwork thread FUNC calls=N cpu_ns=C" per function
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Benchmark sizes: at least 1, at most 100 million (a wrong argument must not hang a run). */
#define DT_CLAMP_N(v) ((v) < 1 ? 1 : (v) > 100000000 ? 100000000 : (v))

enum { F_BURN, F_NAP, F_CONTEND, F_LOCKWAIT, F_SYNCWRITE, F_OUTER, F_REC, F_JUMPER, F_N };
static const char *const fnames[F_N] = { "burn", "nap", "contend", "lockwait", "syncwrite",
					 "outer", "rec", "jumper" };
static struct { long calls; int64_t wall, cpu; } tot[F_N];

static int64_t clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct meter { int64_t w0, c0; };

static inline struct meter m_start(void)
{
	return (struct meter){ clk(CLOCK_MONOTONIC), clk(CLOCK_THREAD_CPUTIME_ID) };
}

static inline void m_stop(int f, struct meter m)
{
	int64_t c = clk(CLOCK_THREAD_CPUTIME_ID), w = clk(CLOCK_MONOTONIC);

	tot[f].calls++;
	tot[f].wall += w - m.w0;
	tot[f].cpu += c - m.c0;
}

volatile unsigned long xw_sink;

/* Spins until this thread has used `ns` more nanoseconds of CPU. */
static inline void spin_cpu(int64_t ns)
{
	int64_t end = clk(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (clk(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 2000; i++)
			xw_sink += (unsigned long)i;
}

static long ms_arg = 20;

NOINLINE void burn(long ms)
{
	struct meter m = m_start();

	spin_cpu(ms * 1000000);
	m_stop(F_BURN, m);
}

NOINLINE void nap(long ms)
{
	struct meter m = m_start();
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
	m_stop(F_NAP, m);
}

NOINLINE void contend(long ms)
{
	struct meter m = m_start();

	spin_cpu(ms * 1000000);
	m_stop(F_CONTEND, m);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void lockwait(void)
{
	struct meter m = m_start();

	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	m_stop(F_LOCKWAIT, m);
}

NOINLINE int syncwrite(const char *dir)
{
	struct meter m = m_start();
	static char buf[1 << 16];
	char path[4096];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/xwork.%d.dat", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 64 && rc == 0; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			rc = -1;
	if (fsync(fd) < 0)
		rc = -1;
	close(fd);
	unlink(path);
	m_stop(F_SYNCWRITE, m);
	return rc;
}

NOINLINE void outer(long ms)
{
	struct meter m = m_start();

	burn(ms / 2);
	nap(ms / 2);
	m_stop(F_OUTER, m);
}

NOINLINE void rec(int depth, long ms)
{
	struct meter m = m_start();

	spin_cpu(ms * 1000000 / 4);
	if (depth > 1)
		rec(depth - 1, ms);
	m_stop(F_REC, m);
}

static jmp_buf jb;

NOINLINE void doomed(long ms)
{
	spin_cpu(ms * 1000000 / 2);
	longjmp(jb, 1);
}

NOINLINE void jumper(long ms)
{
	struct meter m = m_start();

	if (setjmp(jb) == 0)
		doomed(ms);
	spin_cpu(ms * 1000000 / 2);
	m_stop(F_JUMPER, m);
}

NOINLINE void exiter(void)
{
	spin_cpu(1000000);
	pthread_exit(NULL);
}

static void *exiter_main(void *arg)
{
	(void)arg;
	exiter();
	return NULL;
}

/* ------------------------------------------------------------ the thread-clock mode */

enum { TC_EMPTY, TC_SPIN, TC_NAP, TC_SYNC, TC_N };
static const char *const tcnames[TC_N] = { "tc_empty", "tc_spin", "tc_nap", "tc_sync" };
static struct { long calls; int64_t cpu; } tctot[TC_N];

/* The first and last acts of a tc_ function: nothing it does lies outside [c0, clock now). */
static inline void tc_done(int f, int64_t c0)
{
	tctot[f].cpu += clk(CLOCK_THREAD_CPUTIME_ID) - c0;
	tctot[f].calls++;
}

/* Nothing but the two reads: its oncpu is the probes' own work inside the xprobe's interval. */
NOINLINE void tc_empty(void)
{
	int64_t c0 = clk(CLOCK_THREAD_CPUTIME_ID);

	tc_done(TC_EMPTY, c0);
}

NOINLINE void tc_spin(void)
{
	int64_t c0 = clk(CLOCK_THREAD_CPUTIME_ID);

	spin_cpu(300000);
	tc_done(TC_SPIN, c0);
}

NOINLINE void tc_nap(void)
{
	int64_t c0 = clk(CLOCK_THREAD_CPUTIME_ID);
	struct timespec ts = { 0, 1000000 };

	spin_cpu(100000);
	nanosleep(&ts, NULL);
	spin_cpu(100000);
	tc_done(TC_NAP, c0);
}

NOINLINE int tc_sync(int fd)
{
	int64_t c0 = clk(CLOCK_THREAD_CPUTIME_ID);
	static char buf[1 << 16];
	int rc = 0;

	memset(buf, 'x', sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fdatasync(fd) < 0)
		rc = -1;
	tc_done(TC_SYNC, c0);
	return rc;
}

static int thread_clock_mode(long n, const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/xwork.tc.%d.dat", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	unlink(path);
	for (long i = 0; i < n; i++) {
		tc_empty();
		tc_spin();
		tc_nap();
		if (tc_sync(fd) < 0) {
			perror("tc_sync");
			close(fd);
			return 1;
		}
	}
	close(fd);
	for (int f = 0; f < TC_N; f++)
		printf("xwork thread %s calls=%ld cpu_ns=%lld\n", tcnames[f], tctot[f].calls,
		       (long long)tctot[f].cpu);
	return 0;
}

/* ------------------------------------------------------------ helpers outside the measured calls */

static volatile int hogs_stop;

static void pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

static void *hog(void *arg)
{
	pin(pthread_self(), (int)(intptr_t)arg);
	while (!hogs_stop)
		xw_sink++;
	return NULL;
}

static void *holder(void *arg)
{
	long ms = (long)(intptr_t)arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* ------------------------------------------------------------ benchmark modes */

NOINLINE long tiny(long x)
{
	asm volatile("" : "+r"(x));
	return x + 1;
}

static int bench_calls(long n)
{
	int64_t t0 = clk(CLOCK_MONOTONIC);
	long x = 0;

	for (long i = 0; i < n; i++)
		x = tiny(x);
	printf("xwork calls n=%ld ns_per_call=%.1f\n", n, (double)(clk(CLOCK_MONOTONIC) - t0) / n);
	return x == n ? 0 : 1;
}

struct pp { int in, out; long n; int cpu; long switches; };

NOINLINE void pp_worker(struct pp *p, int first)
{
	char c = 0;

	for (long i = 0; i < p->n; i++) {
		if (first && write(p->out, &c, 1) != 1)
			break;
		if (read(p->in, &c, 1) != 1)
			break;
		if (!first && write(p->out, &c, 1) != 1)
			break;
	}
	NO_TAIL();
}

static void *pp_main(void *arg)
{
	struct pp *p = arg;
	struct rusage ru;

	pin(pthread_self(), p->cpu);
	pp_worker(p, 0);
	getrusage(RUSAGE_THREAD, &ru);
	p->switches = ru.ru_nvcsw + ru.ru_nivcsw;
	return NULL;
}

static int bench_pingpong(long n, int cpu)
{
	int a[2], b[2];
	struct pp me, other;
	struct rusage ru;
	pthread_t th;
	int64_t t0;

	if (pipe(a) < 0 || pipe(b) < 0)
		return 1;
	me = (struct pp){ .in = b[0], .out = a[1], .n = n, .cpu = cpu };
	other = (struct pp){ .in = a[0], .out = b[1], .n = n, .cpu = cpu };
	pin(pthread_self(), cpu);
	pthread_create(&th, NULL, pp_main, &other);
	t0 = clk(CLOCK_MONOTONIC);
	pp_worker(&me, 1);
	pthread_join(th, NULL);
	getrusage(RUSAGE_THREAD, &ru);
	me.switches = ru.ru_nvcsw + ru.ru_nivcsw + other.switches;
	printf("xwork pingpong n=%ld switches=%ld ns_per_switch=%.1f\n", n, me.switches,
	       (double)(clk(CLOCK_MONOTONIC) - t0) / (double)(me.switches ? me.switches : 1));
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = t_arg_long(argc, argv, 1, 5);
	const char *dir = argc > 2 ? argv[2] : ".";
	cpu_set_t all;
	pthread_t th[2];
	int cpu = 0;

	if (argc > 2 && !strcmp(argv[1], "calls"))
		return bench_calls(DT_CLAMP_N(atol(argv[2])));
	if (argc > 2 && !strcmp(argv[1], "pingpong")) {
		sched_getaffinity(0, sizeof(all), &all);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all))
				cpu = c;
		return bench_pingpong(DT_CLAMP_N(atol(argv[2])), cpu);
	}
	if (argc > 3 && !strcmp(argv[1], "thread"))
		return thread_clock_mode(DT_CLAMP_N(atol(argv[2])), argv[3]);
	ms_arg = t_arg_long(argc, argv, 3, 20);
	if (rounds < 1 || rounds > 1000 || ms_arg < 2 || ms_arg > 2000) {
		fprintf(stderr, "usage: xwork [ROUNDS(1..1000) [DIR [MS(2..2000)]]]\n");
		return 2;
	}
	sched_getaffinity(0, sizeof(all), &all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all))
			cpu = c;
	for (long r = 0; r < rounds; r++) {
		burn(ms_arg);
		nap(ms_arg);
		/* The mutex is taken here, outside the measured call, and released by the holder
		 * after MS: lockwait waits for about that long. */
		pthread_mutex_lock(&mu);
		pthread_create(&th[0], NULL, holder, (void *)(intptr_t)ms_arg);
		lockwait();
		pthread_join(th[0], NULL);
		if (syncwrite(dir) < 0)
			return 1;
		outer(ms_arg);
		rec(4, ms_arg);
		jumper(ms_arg);
		pthread_create(&th[0], NULL, exiter_main, NULL);
		pthread_join(th[0], NULL);
	}
	/* Contention last: two busy threads pinned to the CPU this thread is pinned to. */
	pin(pthread_self(), cpu);
	hogs_stop = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, hog, (void *)(intptr_t)cpu);
	for (long r = 0; r < rounds; r++)
		contend(ms_arg);
	hogs_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	sched_setaffinity(0, sizeof(all), &all);
	for (int f = 0; f < F_N; f++)
		printf("xwork %s calls=%ld wall_ns=%lld cpu_ns=%lld\n", fnames[f], tot[f].calls,
		       (long long)tot[f].wall, (long long)tot[f].cpu);
	return 0;
}

/* pltvdso — frames the unwinder must handle that no compiler-built function has: argv[1] "vdso"
 * spins in vdso_loop calling clock_gettime (the vDSO's own code and CFI, mapped from no file);
 * "plt" spins in plt_loop calling a tiny libc function through its PLT stub, so that some samples
 * land inside the stub itself (CFA given by the PLT's DWARF expression). argv[2] is seconds.
 * "pltcalls N" calls labs through its PLT stub exactly N times from plt_calls, for tests that put a
 * uprobe on the stub's instructions and on labs' entry (a frame at a given PC, deterministically).
 * "work" does a fixed amount of work instead (argv[2] rounds of a qsort with a callback under a
 * short call chain) for bench/unwind.sh's overhead ratios, where a deadline would hide the cost.
 * With PV_TIME set, "work" prints its own wall time ("pv_time SECONDS") on stderr.
 * Usage: pltvdso vdso|plt [SECONDS] | pltvdso pltcalls N | pltvdso work ROUNDS. */
#include "common.h"

#include <stdio.h>
#include <string.h>

volatile unsigned long pv_sink;

/* A wrong argument must not make a benchmark run for hours. */
#define DT_CLAMP_ROUNDS(n) ((n) < 1 ? 1 : (n) > 10000000 ? 10000000 : (n))

NOINLINE void vdso_loop(double deadline)
{
	struct timespec ts;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pv_sink += (unsigned long)ts.tv_nsec;
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < deadline);
	NO_TAIL();
}

/* labs through the PLT: -fno-builtin keeps gcc from inlining it. The stub is a third of the
 * instructions of each round, so a few percent of the samples stop right in it. */
NOINLINE void plt_loop(double deadline)
{
	while (t_now() < deadline)
		for (long i = 0; i < 200000; i++)
			pv_sink += (unsigned long)labs(i - 100000);
	NO_TAIL();
}

/* Exactly n calls through labs@plt: the first one takes the lazy-binding path through the stub's
 * push/jmp (where the PLT's CFA expression adds 8), the others only its first jmp. */
NOINLINE void plt_calls(long n)
{
	for (long i = 0; i < n; i++)
		pv_sink += (unsigned long)labs(i - n / 2);
	NO_TAIL();
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

NOINLINE void work_leaf(int *v, int n, unsigned seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 8);
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_int);
	pv_sink += (unsigned long)v[n / 2];
	NO_TAIL();
}

NOINLINE void work_mid(int *v, int n, unsigned seed)
{
	work_leaf(v, n, seed);
	NO_TAIL();
}

NOINLINE void work_loop(long rounds)
{
	static int v[4096];

	for (long r = 0; r < rounds; r++)
		work_mid(v, 4096, (unsigned)r);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "work")) {
		double t0 = t_now();

		work_loop(DT_CLAMP_ROUNDS(atol(argv[2])));
		/* Its own wall time, so a tracer's start-up and teardown are not counted. */
		if (getenv("PV_TIME"))
			fprintf(stderr, "pv_time %.6f\n", t_now() - t0);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "pltcalls")) {
		plt_calls(DT_CLAMP_ROUNDS(atol(argv[2])));
		return 0;
	}
	double deadline = t_deadline(t_arg_double(argc, argv, 2, 1.0));

	if (argc > 1 && !strcmp(argv[1], "plt"))
		plt_loop(deadline);
	else
		vdso_loop(deadline);
	NO_TAIL();
	return 0;
}

/* qsort_cb — a libc callback in the stack: main → sort_loop → qsort (libc) → cmp_slow, where the
 * comparator burns a little CPU on every call, for argv[1] seconds. A stack through libc's qsort
 * only unwinds completely when libc's frames are unwound from its CFI (libc has no frame pointers).
 * Usage: qsort_cb [SECONDS]. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

volatile unsigned long qsort_sink;

NOINLINE int cmp_slow(const void *pa, const void *pb)
{
	int x = *(const int *)pa, y = *(const int *)pb;

	for (int i = 0; i < 2000; i++)
		qsort_sink += i;
	return (x > y) - (x < y);
}

NOINLINE void sort_loop(double deadline)
{
	enum { N = 256 };
	int v[N];

	while (t_now() < deadline) {
		for (int i = 0; i < N; i++)
			v[i] = (i * 7919) % N;
		qsort(v, N, sizeof(v[0]), cmp_slow);
	}
	NO_TAIL();
}

int main(int argc, char **argv)
{
	sort_loop(t_deadline(t_arg_double(argc, argv, 1, 1.0)));
	if (getenv("CHAIN_VERBOSE"))
		printf("qsort_cb: done\n");
	return 0;
}

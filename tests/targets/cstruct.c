/* cstruct — a uprobe target that hands functions pointers to data with a known layout, for the
 * C-type tests: take_ts(ts) receives a struct timespec (x86-64: two 8-byte longs, the layout of
 * the kernel's struct __kernel_timespec, so a script can cast to that BTF type), take_arr(a)
 * an int32 array, take_pp(pp) a pointer to pointers. Values: ts = {1234, 5678}; arr =
 * {10, -20, 30, 40}; *pp[1] == 77. Called argv[1] times (default 1). */
#include "common.h"

#include <time.h>

volatile long cstruct_sink;

NOINLINE void take_ts(struct timespec *ts)
{
	asm volatile("" ::: "memory");
	cstruct_sink += ts->tv_sec;
}

NOINLINE void take_arr(int *a)
{
	asm volatile("" ::: "memory");
	cstruct_sink += a[0];
}

NOINLINE void take_pp(int **pp)
{
	asm volatile("" ::: "memory");
	cstruct_sink += *pp[1];
}

int main(int argc, char **argv)
{
	long n = t_arg_long(argc, argv, 1, 1);
	struct timespec ts = { 1234, 5678 };
	int arr[4] = { 10, -20, 30, 40 };
	int x = 66, y = 77;
	int *pp[2] = { &x, &y };

	for (long i = 0; i < n; i++) {
		take_ts(&ts);
		take_arr(arr);
		take_pp(pp);
	}
	return 0;
}

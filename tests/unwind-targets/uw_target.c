/* uw_target.c — a process for the unwinder's tests to sample: built at test time with
 * -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -no-pie, so that only DWARF CFI (not frame
 * pointers) gives its stacks, and every function below keeps its own frame. It spins in uw_leaf()
 * forever, reached one of three ways (argv[1]):
 *   qsort   main -> uw_f1 -> uw_f2 -> uw_f3 -> qsort (libc) -> uw_cmp -> uw_leaf
 *   recurse main -> uw_recurse x 500 -> uw_leaf
 *   signal  main -> uw_wait (spinning) <signal> uw_handler -> uw_leaf
 * It prints "ready" once it is spinning. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long spins;
static volatile int in_handler;

__attribute__((noinline)) int uw_leaf(int x)
{
	static int said;

	if (!said++) {
		printf("ready\n");
		fflush(stdout);
	}
	for (;;)
		spins += (unsigned long)x;
	return x;
}

__attribute__((noinline)) int uw_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (x == 3 && y != 3)
		return uw_leaf(x) + 1;
	return (x > y) - (x < y);
}

__attribute__((noinline)) int uw_f3(int n)
{
	int v[8] = {5, 1, 7, 3, 2, 8, 6, 4};

	qsort(v, 8, sizeof(int), uw_cmp);
	return v[n & 7] + 1;
}

__attribute__((noinline)) int uw_f2(int n) { return uw_f3(n + 1) * 3; }
__attribute__((noinline)) int uw_f1(int n) { return uw_f2(n + 1) * 5; }

__attribute__((noinline)) int uw_recurse(int depth)
{
	if (depth == 0)
		return uw_leaf(1) + 1;
	return uw_recurse(depth - 1) + 1;
}

__attribute__((noinline)) void uw_handler(int sig)
{
	in_handler = 1;
	uw_leaf(sig);
}

__attribute__((noinline)) int uw_wait(void)
{
	printf("waiting\n");
	fflush(stdout);
	while (!in_handler)
		spins++;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "qsort";

	if (!strcmp(mode, "recurse"))
		return uw_recurse(500);
	if (!strcmp(mode, "signal")) {
		signal(SIGALRM, uw_handler);
		alarm(1);
		return uw_wait() + 1;
	}
	return uw_f1(argc);
}

/* exec_image.c — a target for symbols.test's exec tests, built there twice (-DP=exA, -DP=exB):
 * the two binaries differ only in their function names, so the functions sit at the same
 * addresses (non-PIE) or the same offsets (PIE). Burns 0.4 s in P_outer -> P_burn, then execs argv[1]
 * (with the rest of argv): a stack recorded before the exec must keep the first binary's names. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(P, x)
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) void FN(burn)(double secs)
{
	volatile unsigned long x = 0;
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}
/* Takes its callee as an argument: a uprobe here reads the address of P_burn from arg0. */
__attribute__((noinline)) void FN(outer)(double secs, void (*fn)(double))
{
	fn(secs);
	__asm__ volatile("");
}
int main(int argc, char **argv)
{
	FN(outer)(0.4, FN(burn));
	if (argc > 1)
		execv(argv[1], argv + 1);
	return 0;
}

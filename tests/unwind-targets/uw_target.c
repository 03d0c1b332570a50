/* uw_target.c — a process for the unwinder's tests to sample: built at test time with
 * -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -no-pie, so that only DWARF CFI (not frame
 * pointers) gives its stacks, and every function below keeps its own frame. It spins in uw_leaf()
 * forever, reached one of three ways (argv[1]):
 *   qsort   main -> uw_f1 -> uw_f2 -> uw_f3 -> qsort (libc) -> uw_cmp -> uw_leaf
 *   recurse main -> uw_recurse x 500 -> uw_leaf
 *   signal  main -> uw_wait (spinning) <signal> uw_handler -> uw_leaf
 *   nocfi   main -> uw_nocfi (assembly without CFI, with a frame pointer) -> uw_leaf
 *   dlopen LIB  prints "loading", waits for a line on stdin, dlopen()s LIB (uw_lib.c), then
 *           main -> uw_lib_call (in LIB) -> uw_leaf
 * and two modes that loop instead, for probes that fire on calls:
 *   sortloop main -> uw_f1 -> uw_f2 -> uw_f3 -> qsort (libc) -> uw_cmp, again and again
 *   syscall  main -> uw_sys -> getppid (libc) -> the kernel, again and again
 * It prints "ready" once it is spinning or looping. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long spins;
static volatile int in_handler;
static int no_leaf;

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

	if (x == 3 && y != 3 && !no_leaf)
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

/* No .cfi directives: no FDE covers it, so the walker must cross it with its frame pointer. */
__asm__(".text\n"
	".globl uw_nocfi\n"
	".type uw_nocfi, @function\n"
	"uw_nocfi:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov $7, %edi\n"
	"	call uw_leaf\n"
	"	pop %rbp\n"
	"	ret\n"
	".size uw_nocfi, .-uw_nocfi\n");
int uw_nocfi(void);

__attribute__((noinline)) int uw_sys(void)
{
	int s = 0;

	for (;;)
		s += getppid();
	return s;
}

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "qsort";
	unsigned long n = 0;

	if (!strcmp(mode, "sortloop")) {
		no_leaf = 1;
		ready();
		for (;;)
			n += (unsigned long)uw_f1(argc);
	}
	if (!strcmp(mode, "dlopen") && argc > 2) {
		char line[16];
		int (*call)(int (*)(int), int);
		void *h;

		printf("loading\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		h = dlopen(argv[2], RTLD_NOW);
		call = h ? (int (*)(int (*)(int), int))dlsym(h, "uw_lib_call") : NULL;
		if (!call)
			return 2;
		return call(uw_leaf, argc) + 1;
	}
	if (!strcmp(mode, "nocfi"))
		return uw_nocfi() + 1;
	if (!strcmp(mode, "syscall")) {
		ready();
		return uw_sys();
	}

	if (!strcmp(mode, "recurse"))
		return uw_recurse(500);
	if (!strcmp(mode, "signal")) {
		signal(SIGALRM, uw_handler);
		alarm(1);
		return uw_wait() + 1;
	}
	return uw_f1(argc);
}

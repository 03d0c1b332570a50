/* watch.c — memory accesses at known places for the watchpoint tests (tests/runtime/
 * watchpoint.test). Every mode writes a fixed number of times and exits:
 *   watch fixed N      N writes of 8 bytes at 0x20000000 (a page mapped there)
 *   watch same N       bump(0, p) N times on one int, main writes it once after each: 2N writes
 *   watch many N       bump(0, p_i) on N different ints, one write each
 *   watch unwatch      bump(0, p) (one write), then fence(0, q), then 4 writes of *p by main
 *                      (a sync watchpoint on fence holds the process until its turn)
 *   watch spin         bump(0, p) once, then writes *p until killed (at most 60 s)
 *   watch loop         bump(0, p) every millisecond until killed (at most 60 s) */
#include "common.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

NOINLINE void bump(int unused, int *p)
{
	(void)unused;
	(*(volatile int *)p)++;
}

NOINLINE void fence(int unused, int *q)
{
	(void)unused;
	asm volatile("" : : "r"(q) : "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "same";
	long n = t_arg_long(argc, argv, 2, 3);
	static int cells[64];

	if (!strcmp(mode, "fixed")) {
		volatile unsigned long *a = mmap((void *)0x20000000, 4096, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
						 -1, 0);
		if (a == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (long i = 0; i < n; i++)
			*a = (unsigned long)i;
	} else if (!strcmp(mode, "same")) {
		for (long i = 0; i < n; i++) {
			bump(0, &cells[0]);
			NO_TAIL();
			(*(volatile int *)&cells[0])++;
		}
	} else if (!strcmp(mode, "many")) {
		for (long i = 0; i < n && i < 64; i++)
			bump(0, &cells[i]);
	} else if (!strcmp(mode, "unwatch")) {
		bump(0, &cells[0]);
		fence(0, &cells[32]);
		for (int i = 0; i < 4; i++)
			(*(volatile int *)&cells[0])++;
	} else if (!strcmp(mode, "spin")) {
		double end = t_now() + 60;

		bump(0, &cells[0]);
		while (t_now() < end)
			(*(volatile int *)&cells[0])++;
	} else if (!strcmp(mode, "loop")) {
		double end = t_now() + 60;

		while (t_now() < end) {
			bump(0, &cells[0]);
			usleep(1000);
		}
	}
	return 0;
}

/* watch.c — memory accesses at known places for the watchpoint tests (tests/runtime/
 * watchpoint.test). Every mode writes a fixed number of times and exits:
 *   watch fixed N      N writes of 8 bytes at 0x20000000 (a page mapped there)
 *   watch same N       bump(0, p) N times on one int, main writes it once after each: 2N writes
 *   watch many N       bump(0, p_i) on N different ints, one write each
 *   watch unwatch      bump(0, p) (one write), then fence(0, q), then 4 writes of *p by main
 *                      (a sync watchpoint on fence holds the process until its turn)
 *   watch spin         bump(0, p) once, then writes *p until killed (at most 60 s)
 *   watch loop         bump(0, p) every millisecond until killed (at most 60 s)
 *   watch thread N     a thread started after the tracer attached makes watch fixed's N writes
 *   watch threadloop   a thread, started at once, writes 8 bytes at 0x20000000 every 10 ms until
 *                      killed (at most 60 s): a watchpoint by -p must cover the process's threads
 *   watch exec         calls a function (nop; ret) placed at 0x20000000, once */
#include "common.h"

#include <pthread.h>
#include <stdint.h>
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

/* A page at 0x20000000, which the tests watch by its absolute address. */
static void *fixed_page(int prot)
{
	void *a = mmap((void *)0x20000000, 4096, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (a == MAP_FAILED)
		perror("mmap");
	return a == MAP_FAILED ? NULL : a;
}

static void *writer(void *arg)
{
	long n = (long)arg; /* < 0: every 10 ms until the deadline */
	volatile unsigned long *a = fixed_page(PROT_READ | PROT_WRITE);
	double end = t_deadline(60);

	for (long i = 0; a && (n < 0 ? t_now() < end : i < n); i++) {
		*a = (unsigned long)i;
		if (n < 0)
			usleep(10000);
	}
	return NULL;
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
	} else if (!strcmp(mode, "thread") || !strcmp(mode, "threadloop")) {
		pthread_t t;

		if (pthread_create(&t, NULL, writer, (void *)(mode[6] ? -1L : n)) == 0)
			pthread_join(t, NULL);
	} else if (!strcmp(mode, "exec")) {
		static const uint8_t nop_ret[] = { 0x90, 0xc3 };
		uint8_t *code = fixed_page(PROT_READ | PROT_WRITE | PROT_EXEC);

		if (!code)
			return 1;
		memcpy(code, nop_ret, sizeof(nop_ret));
		((void (*)(void))code)();
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

/* chain — the reference call chain for stack tests: main → a → b → c → d, every function noinline
 * and kept out of tail position, with d burning CPU for the number of seconds given as argv[1] so
 * that profile samples land in d. After the burn, main calls tick(i) for i = 1..argv[2] (a uprobe
 * target with known arguments and return values: tick(i) returns i * i). argv[3] is a delay in
 * milliseconds before the ticks, so a tracer attached to an already running process sees them.
 * Prints nothing unless CHAIN_VERBOSE is set. Usage: chain [SECONDS [TICKS [DELAY_MS]]]. */
#include "common.h"

#include <stdio.h>
#include <unistd.h>

volatile unsigned long chain_sink;

NOINLINE int tick(int i)
{
	asm volatile("");
	chain_sink += i;
	return i * i;
}

NOINLINE void d(double deadline)
{
	while (t_now() < deadline)
		for (int i = 0; i < 100000; i++)
			chain_sink += i;
	NO_TAIL();
}

NOINLINE void c(double deadline)
{
	d(deadline);
	NO_TAIL();
}

NOINLINE void b(double deadline)
{
	c(deadline);
	NO_TAIL();
}

NOINLINE void a(double deadline)
{
	b(deadline);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	double secs = t_arg_double(argc, argv, 1, 1.0);
	long ticks = t_arg_long(argc, argv, 2, 0);
	long delay_ms = t_arg_long(argc, argv, 3, 0);
	long sum = 0;

	a(t_deadline(secs));
	if (delay_ms > 0 && delay_ms < 60000)
		usleep(delay_ms * 1000);
	for (long i = 1; i <= ticks && i <= 100000; i++)
		sum += tick((int)i);
	if (getenv("CHAIN_VERBOSE"))
		printf("chain: %ld ticks, sum %ld\n", ticks, sum);
	return 0;
}

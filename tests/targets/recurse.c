/* recurse — a deep stack: main → rec(500) → rec(499) → … → rec(1) → rec_leaf, which burns CPU for
 * argv[1] seconds. argv[2] overrides the depth (default 500, capped at 5000). Tests assert that a
 * deep DWARF walk either reaches main or reports truncation, never a wrong frame.
 * Usage: recurse [SECONDS [DEPTH]]. */
#include "common.h"

#include <stdio.h>

volatile unsigned long rec_sink;

NOINLINE void rec_leaf(double deadline)
{
	while (t_now() < deadline)
		for (int i = 0; i < 100000; i++)
			rec_sink += i;
	NO_TAIL();
}

NOINLINE int rec(int n, double deadline)
{
	/* A local array whose address escapes keeps the frame real at -O2. */
	volatile char pad[16];

	pad[0] = (char)n;
	if (n <= 1)
		rec_leaf(deadline);
	else
		rec(n - 1, deadline);
	NO_TAIL();
	return pad[0];
}

int main(int argc, char **argv)
{
	long depth = t_arg_long(argc, argv, 2, 500);

	if (depth < 1 || depth > 5000)
		depth = 500;
	rec((int)depth, t_deadline(t_arg_double(argc, argv, 1, 1.0)));
	if (getenv("CHAIN_VERBOSE"))
		printf("recurse: depth %ld\n", depth);
	return 0;
}

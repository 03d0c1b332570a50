/* uline_target.c — head_uline.test's target: uprobes at its source lines. The line numbers
 * are part of the test; keep them when editing. Built -g -O0 there. */
#include <stdlib.h>
#include <unistd.h>

int hits;

__attribute__((noinline)) int step(int n)
{
	if (n % 2)
		hits += 1;
	else
		hits += 2;
	return hits;
}

/* This comment (line 17) and the blank line after it have no code. */

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < loops; i++) {
		step(i);
		usleep(1000);
	}
	return 0;
}

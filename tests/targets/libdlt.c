/* libdlt.so — a shared object loaded with dlopen by dlopen_main: dlt_entry → dlt_mid → dlt_burn
 * burns CPU until the deadline. Its mapping appears only after the process started, which is the
 * case where an unwinder must learn a new mapping while running. dlt_tick(i) returns i + 100 (a
 * uprobe target inside a library). */
#include "common.h"

volatile unsigned long dlt_sink;

NOINLINE int dlt_tick(int i)
{
	asm volatile("");
	return i + 100;
}

NOINLINE void dlt_burn(double deadline)
{
	while (t_now() < deadline)
		for (int i = 0; i < 100000; i++)
			dlt_sink += i;
	NO_TAIL();
}

NOINLINE void dlt_mid(double deadline)
{
	dlt_burn(deadline);
	NO_TAIL();
}

NOINLINE void dlt_entry(double deadline, int ticks)
{
	dlt_mid(deadline);
	for (int i = 1; i <= ticks; i++)
		dlt_sink += dlt_tick(i);
	NO_TAIL();
}

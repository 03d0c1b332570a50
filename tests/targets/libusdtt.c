/* libusdtt.so — a USDT marker in a shared library: usdt_target calls usdtt_lib_fire(i) each
 * round, which fires dttlib:fire with i and 10 * i. */
#include <sys/sdt.h>

void usdtt_lib_fire(long i)
{
	DTRACE_PROBE2(dttlib, fire, i, 10 * i);
}

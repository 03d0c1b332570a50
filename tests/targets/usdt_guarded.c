/* usdt_guarded.c — usdt_target's marker with a semaphore: <sys/sdt.h> gives every marker of a
 * file compiled with _SDT_HAS_SEMAPHORES a semaphore (PROVIDER_NAME_semaphore, in .probes),
 * which a tracer counts up while it traces the marker; the marker is passed only then, with the
 * semaphore's value as its argument. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short dtt_guarded_semaphore __attribute__((unused, section(".probes")));

__attribute__((noinline)) void dtt_guarded_fire(void)
{
	if (__builtin_expect(dtt_guarded_semaphore, 0))
		DTRACE_PROBE1(dtt, guarded, dtt_guarded_semaphore);
	asm volatile("" ::: "memory");
}

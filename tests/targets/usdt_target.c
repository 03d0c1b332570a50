/* usdt_target — SystemTap SDT markers (<sys/sdt.h>) of every operand kind an x86-64 compiler
 * writes in a note, with values the tests assert exactly. Args: [SECS [PERIOD_MS]]: rounds
 * i = 1, 2, … every PERIOD_MS (default 50) until SECS (default 0: one round) have passed. Round
 * i fires, from main → dtt_round → dtt_leaf:
 *   dtt:consts   -5, 65534, -9000000000                      ($constants)
 *   dtt:regs     -3i, 4294967280 + i, -300 - i, 200 + i, -7   (%rax, %ecx, %dx, %bl, %r9b)
 *   dtt:mem      -1000000000000 - i, -70000 - i, 60000 + i, -100 - i   (disp(%rsp))
 *   dtt:index    4000 + i                                     ((%base,%index,8))
 *   dtt:global   1000 + i                                     (dtt_counter(%rip))
 *   dtt:twice    11, then 22: one marker inlined at two places
 *   dtt:many     i, 2i, … 12i: twelve arguments
 *   dtt:guarded  its own semaphore's value, only while a tracer has it counted up
 *                (usdt_guarded.c, from dtt_leaf → dtt_guarded_fire)
 *   dttlib:fire  i, 10i from libusdtt.so
 * `readelf -n` shows the operands; the runtime tests check they are of these kinds. */
#include <sys/sdt.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

void usdtt_lib_fire(long i);
void dtt_guarded_fire(void); /* usdt_guarded.c: the marker with a semaphore */
volatile int64_t dtt_counter;
volatile int dtt_slot = 3;

static inline __attribute__((always_inline)) void dtt_twice(int v)
{
	volatile int on_stack = v;

	DTRACE_PROBE1(dtt, twice, on_stack);
}

NOINLINE void dtt_leaf(long i)
{
	/* Registers: each value is made to live in the register named. */
	{
		register int64_t ra asm("rax") = -3 * i;
		register uint32_t rc asm("rcx") = 4294967280u + (uint32_t)i;
		register int16_t rd asm("rdx") = (int16_t)(-300 - i);
		register uint8_t rb asm("rbx") = (uint8_t)(200 + i);
		register int8_t r9 asm("r9") = (int8_t)(-7 + 0 * i);

		DTRACE_PROBE5(dtt, regs, ra, rc, rd, rb, r9);
	}
	/* Constants. */
	DTRACE_PROBE3(dtt, consts, -5, (uint16_t)65534, (int64_t)-9000000000LL);
	/* Memory at a displacement from the stack pointer. */
	{
		volatile struct { int64_t a; int32_t b; uint16_t c; int8_t d; } s;

		s.a = -1000000000000LL - i;
		s.b = (int32_t)(-70000 - i);
		s.c = (uint16_t)(60000 + i);
		s.d = (int8_t)(-100 - i);
		DTRACE_PROBE4(dtt, mem, s.a, s.b, s.c, s.d);
	}
	/* Memory at base + index * scale. */
	{
		volatile int64_t arr[8];
		int k = dtt_slot;

		for (int j = 0; j < 8; j++)
			arr[j] = j == k ? 4000 + i : -1;
		DTRACE_PROBE1(dtt, index, arr[k]);
	}
	/* A global, %rip-relative. */
	dtt_counter = 1000 + i;
	DTRACE_PROBE1(dtt, global, dtt_counter);
	dtt_twice(11);
	dtt_twice(22);
	DTRACE_PROBE12(dtt, many, i, 2 * i, 3 * i, 4 * i, 5 * i, 6 * i, 7 * i, 8 * i, 9 * i,
		       10 * i, 11 * i, 12 * i);
	dtt_guarded_fire();
	usdtt_lib_fire(i);
	NO_TAIL();
}

NOINLINE void dtt_round(long i)
{
	dtt_leaf(i);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	double secs = t_arg_double(argc, argv, 1, 0);
	long period_ms = t_arg_long(argc, argv, 2, 50);
	double end = t_deadline(secs);

	for (long i = 1;; i++) {
		dtt_round(i);
		if (t_now() >= end)
			break;
		usleep((useconds_t)period_ms * 1000);
	}
	return 0;
}

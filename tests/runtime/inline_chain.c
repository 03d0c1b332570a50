/* inline_chain.c — a marker inside two nested inlined functions (deep, inlined into middle,
 * inlined into outer, a real function called from main), for head_stacks.test's inline frames:
 * the chain must read deep, middle, outer, whatever the optimization level. Built by the test. */
#include <sys/sdt.h>
#include <unistd.h>

static volatile int sink;

static inline __attribute__((always_inline)) void deep(int v)
{
	sink = v;
	DTRACE_PROBE1(inl, deep, v);
}

static inline __attribute__((always_inline)) void middle(int v)
{
	deep(v + 1);
}

__attribute__((noinline)) void outer(int v)
{
	middle(v * 2);
	asm volatile("");
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		outer(i);
	usleep(300000); /* alive while its stacks are printed */
	return 0;
}

/* pltvdso — frames the unwinder must handle that no compiler-built function has: argv[1] "vdso"
 * spins in vdso_loop calling clock_gettime (the vDSO's own code and CFI, mapped from no file);
 * "plt" spins in plt_loop calling a tiny libc function through its PLT stub, so that some samples
 * land inside the stub itself (CFA given by the PLT's DWARF expression). argv[2] is seconds.
 * Usage: pltvdso vdso|plt [SECONDS]. */
#include "common.h"

#include <string.h>

volatile unsigned long pv_sink;

NOINLINE void vdso_loop(double deadline)
{
	struct timespec ts;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pv_sink += (unsigned long)ts.tv_nsec;
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < deadline);
	NO_TAIL();
}

/* labs through the PLT: -fno-builtin keeps gcc from inlining it. The stub is a third of the
 * instructions of each round, so a few percent of the samples stop right in it. */
NOINLINE void plt_loop(double deadline)
{
	while (t_now() < deadline)
		for (long i = 0; i < 200000; i++)
			pv_sink += (unsigned long)labs(i - 100000);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	double deadline = t_deadline(t_arg_double(argc, argv, 2, 1.0));

	if (argc > 1 && !strcmp(argv[1], "plt"))
		plt_loop(deadline);
	else
		vdso_loop(deadline);
	NO_TAIL();
	return 0;
}

/* unwind_build_speed.c — bench/unwind.sh's table-build probe: builds the compact unwind rows of
 * each ELF file given (the same dt_cfi_build_file the unwinder runs when a process maps the
 * object) RUNS times and prints "PATH ROWS RULES BEST_SECONDS ROWS_PER_SECOND KERNEL_BYTES" per
 * file, the best of the runs (the first one also pays for reading the file from disk). Compiled
 * by the bench script against the build's libdt_unwind.a and libdt_elfproc.a. */
#include "unwind/unwind_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int runs = 5, status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: unwind_build_speed ELF...\n");
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		double best = 1e9;
		uint32_t nrows = 0, nrules = 0;
		char err[512];

		for (int r = 0; r < runs; r++) {
			dt_ruleset rs;
			dt_rows rows = {0};
			double t0 = now(), t;
			int ret;

			dt_ruleset_init(&rs);
			ret = dt_cfi_build_file(argv[a], &rs, &rows, err, sizeof(err));
			t = now() - t0;
			nrows = rows.n;
			nrules = rs.n;
			dt_rows_fini(&rows);
			dt_ruleset_fini(&rs);
			if (ret < 0) {
				fprintf(stderr, "%s\n", err);
				status = 1;
				break;
			}
			if (t < best)
				best = t;
		}
		/* Kernel bytes: 6 per row in row pages, 16 per distinct rule. */
		printf("%s %u %u %.4f %.0f %zu\n", argv[a], nrows, nrules, best, nrows / best,
		       (size_t)nrows * 6 + (size_t)nrules * 16);
	}
	return status;
}

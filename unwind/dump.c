/* dump.c — `-d unwind FILE`: a designed, stable text rendering of the rows unwind/ would load for
 * an object, one address range per line. It is the golden-test surface of the CFI parser and the
 * way a user checks why a frame unwound the way it did. */
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <inttypes.h>

int dt_unwind_dump(const char *path, FILE *f)
{
	char err[512], rule[96];
	dt_ruleset rs;
	dt_rows rows = {0};
	uint32_t i;
	int ret;

	dt_ruleset_init(&rs);
	ret = dt_cfi_build_file(path, &rs, &rows, err, sizeof(err));
	if (ret < 0) {
		/* Said as the CLI says its own errors: `-d unwind FILE` is only the CLI's. */
		fprintf(stderr, "dwarftrace: -d unwind: %s\n", err);
		goto out;
	}
	for (i = 0; i < rows.n; i++) {
		/* The last row only ends the last range. Rule 0 rows are gaps (no CFI, or a rule
		 * the walker cannot follow): shown, since the walker uses frame pointers there. */
		if (i + 1 == rows.n)
			continue;
		dt_rule_format(&rs.rules[rows.rule[i]], rule, sizeof(rule));
		fprintf(f, "0x%" PRIx32 "-0x%" PRIx32 "  %s\n", rows.pc[i], rows.pc[i + 1], rule);
	}
	if (rows.nbad)
		fprintf(f, "# warning: %s\n", err);
	fprintf(f, "# %s: %u rows, %u rules, %zu bytes in kernel tables\n", path, rows.n,
		rs.n, (size_t)rows.n * 6 + (size_t)rs.n * sizeof(struct dt_unwind_rule));
out:
	dt_rows_fini(&rows);
	dt_ruleset_fini(&rs);
	return ret;
}

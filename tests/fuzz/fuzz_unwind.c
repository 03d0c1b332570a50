/* fuzz_unwind.c — libFuzzer harness for the unwinder's parsers of untrusted input: .eh_frame and
 * .debug_frame bytes (cfi.c) and whole ELF images (elfproc/ + elfobj.c + cfi.c). The first input
 * byte picks the parser. Malformed input must give an error, never a crash, a hang or a leak.
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DDT_LIBFUZZER -D_GNU_SOURCE -I. \
 *         tests/fuzz/fuzz_unwind.c unwind/cfi.c unwind/elfobj.c elfproc/*.c common/xmalloc.c -lelf
 * Built without DT_LIBFUZZER it replays the files given as arguments, so a crashing input can be
 * re-run under gdb. */
#include "unwind/unwind_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	dt_ruleset rs;
	dt_rows rows = {0};
	dt_elf *e;
	uint32_t i;

	if (size < 1)
		return 0;
	dt_ruleset_init(&rs);
	switch (data[0] % 3) {
	case 0: dt_cfi_parse(data + 1, size - 1, 0x1000, true, &rs, &rows, err, sizeof(err)); break;
	case 1: dt_cfi_parse(data + 1, size - 1, 0, false, &rs, &rows, err, sizeof(err)); break;
	case 2:
		e = dt_elf_open_mem(data + 1, size - 1, "fuzz");
		if (e)
			dt_cfi_build(NULL, e, &rs, &rows, err, sizeof(err));
		dt_elf_put(e);
		break;
	}
	/* The invariants the walker relies on: sorted pcs, valid rule indexes. */
	for (i = 0; i < rows.n; i++) {
		if (rows.rule[i] >= rs.n || (i && rows.pc[i] <= rows.pc[i - 1]))
			abort();
	}
	dt_rows_fini(&rows);
	dt_ruleset_fini(&rs);
	return 0;
}

#ifndef DT_LIBFUZZER
int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		char *buf;
		size_t len;

		if (dt_read_file(argv[i], &buf, &len) < 0)
			return 1;
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		free(buf);
	}
	return 0;
}
#endif

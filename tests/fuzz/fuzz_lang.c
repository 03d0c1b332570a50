/* fuzz_lang.c — libFuzzer harness over the whole language front end on arbitrary bytes: lex,
 * parse, check and the dumps; no LLVM, so it runs thousands of inputs a second. The token dump
 * renders the stream this parse recorded (what dt_dump_tokens does after a parse of its own: one
 * parse an input instead of two).
 * The checker sees the fixed world of fuzz_env.h (the golden tests' fake tracefs, a live map,
 * two positional parameters), never the machine's. Generated, mostly valid scripts and code
 * generation are fuzz_codegen's. Build with -DDT_FUZZ=ON (clang); run:
 * fuzz_lang tests/fuzz/corpus_lang. */
#include "lang/lang.h"
#include "lang/lang_internal.h"
#include "tests/fuzz/fuzz_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libFuzzer hands over an exactly sized heap copy, so a read past `len` is caught. */
	dt_source src = { .name = "fuzz", .text = (const char *)data, .len = size };
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	/* Kept from input to input: growing it again each time was a twentieth of the time. */
	static dt_token_vec rec;
	rec.n = 0;
	dt_program *p = dt_parse_recording(a, &src, d, &rec);
	dt_dump_token_vec(&src, &rec, null);
	if (!dt_diags_error_count(d)) {
		dt_check_opts o;
		fuzz_check_opts(&o);
		if (dt_check(p, a, d, &o) == 0) {
			dt_dump_types(p, null);
			for (uint32_t i = 0; i < p->nmaps; i++) {
				dt_map_layout l;
				dt_map_layout_of(p->maps[i], &l);
			}
		}
	}
	/* After the check when there was one (the same dump, with types and ids where the check
	 * got that far); a tree recovered from syntax errors is dumped as parsed. */
	dt_dump_ast(p, null);
	dt_diags_print(d, null, true);
	dt_diags_free(d);
	dt_arena_free(a);
	return 0;
}

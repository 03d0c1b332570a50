/* fuzz_lang.c — libFuzzer harness over the whole language front end: lex (token dump), parse,
 * check and the dumps, on arbitrary bytes. The tracefs root does not exist, so the checker never
 * touches the machine; positional parameters and a wildcard expander are supplied so those paths
 * run too. Build with -DDT_FUZZ=ON (clang); run: fuzz_lang tests/fuzz/corpus_lang. */
#include "lang/lang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n)
{
	(void)ctx;
	(void)a;
	*names = malloc(2 * sizeof(char *));
	(*names)[0] = strdup("one");
	(*names)[1] = strdup("sub:two");
	*n = 2;
	return 0;
}

static bool existing(void *ctx, const char *name, const dt_type **key, const dt_type **value)
{
	(void)ctx;
	if (strcmp(name, "@live"))
		return false;
	*key = dt_type_int(true, 8);
	*value = dt_type_str(16);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The source text need not be NUL-terminated, but a copy catches reads past `len`. */
	char *text = malloc(size ? size : 1);
	memcpy(text, data, size);
	dt_source src = { .name = "fuzz", .text = text, .len = size };
	FILE *null = fopen("/dev/null", "w");
	dt_dump_tokens(&src, null);
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	dt_program *p = dt_parse(a, &src, d);
	dt_dump_ast(p, null);
	if (!dt_diags_error_count(d)) {
		const char *params[] = { "42", "str" };
		dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent-tracefs",
				    .expand = expand, .existing_map = existing, .params = params,
				    .nparams = 2 };
		if (dt_check(p, a, d, &o) == 0) {
			dt_dump_types(p, null);
			for (uint32_t i = 0; i < p->nmaps; i++) {
				dt_map_layout l;
				dt_map_layout_of(p->maps[i], &l);
			}
		}
		dt_dump_ast(p, null);
	}
	dt_diags_print(d, null, true);
	fclose(null);
	dt_diags_free(d);
	dt_arena_free(a);
	free(text);
	return 0;
}

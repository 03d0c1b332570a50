/* dt-langdump.c — runs the language front end alone and prints one of its designed renderings:
 * the token stream, the parsed AST, the checked AST, the types/tables, or only the diagnostics.
 * The golden tests (tests/golden/run.sh) are built on it; it is also handy when writing the
 * grammar. Wildcards in tracepoints are expanded against the tracefs given with --tracefs, and
 * kprobe wildcards against its available_filter_functions, so golden runs do not depend on the
 * machine. Exit status: 0, 1 when the program has errors, 2 on bad usage. */
#include "lang/lang.h"
#include "common/common.h"
#include "tests/tools/fake_expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_tracefs;

static void usage(void)
{
	fprintf(stderr, "usage: dt-langdump --tokens|--ast|--checked|--types|--diag [--tracefs DIR] "
			"[--test|--bench] [--unsafe] [--strlen N] [--name NAME] (-e PROGRAM | FILE) [PARAM…]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *prog = NULL, *file = NULL, *name = NULL;
	dt_run_mode run_mode = DT_MODE_RUN;
	bool unsafe = false;
	uint32_t strlen_opt = 0; /* --strlen N: max_strlen, as BPFTRACE_MAX_STRLEN sets it */
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--tokens") || !strcmp(argv[i], "--ast") ||
		    !strcmp(argv[i], "--checked") || !strcmp(argv[i], "--types") ||
		    !strcmp(argv[i], "--diag"))
			mode = argv[i] + 2;
		else if (!strcmp(argv[i], "--tracefs") && i + 1 < argc)
			g_tracefs = argv[++i];
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "-e") && i + 1 < argc)
			prog = argv[++i];
		else if (!strcmp(argv[i], "--test"))
			run_mode = DT_MODE_TEST;
		else if (!strcmp(argv[i], "--bench"))
			run_mode = DT_MODE_BENCH;
		else if (!strcmp(argv[i], "--unsafe"))
			unsafe = true;
		else if (!strcmp(argv[i], "--strlen") && i + 1 < argc)
			strlen_opt = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (argv[i][0] == '-' && argv[i][1])
			usage();
		else {
			if (!prog)
				file = argv[i++];
			break;
		}
	}
	if (!mode || (!prog && !file))
		usage();
	char *text = NULL;
	size_t len;
	if (file) {
		int err = dt_read_file(file, &text, &len);
		if (err) {
			fprintf(stderr, "dt-langdump: %s: %s\n", file, strerror(-err));
			return 2;
		}
	} else {
		text = xstrdup(prog);
		len = strlen(text);
	}
	dt_source src = { .name = name ? name : file ? file : "-e", .text = text, .len = len };
	if (!strcmp(mode, "tokens")) {
		dt_dump_tokens(&src, stdout);
		free(text);
		return 0;
	}
	/* After the script: `--name[=value]` named parameters, then the positional ones. */
	const char **named = (const char **)argv + i;
	uint32_t nnamed = dt_params_split(named, (uint32_t)(argc - i));
	i += (int)nnamed;
	src.params = (const char **)argv + i;
	src.nparams = (uint32_t)(argc - i);
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	dt_source_imports(&src, a, d);
	dt_program *p = dt_parse(a, &src, d);
	if (!strcmp(mode, "ast")) {
		dt_dump_ast(p, stdout);
	} else if (!dt_diags_error_count(d)) {
		dt_check_opts o = { .sz = sizeof(o), .tracefs = g_tracefs, .expand = dt_fake_expand,
				    .ctx = (void *)g_tracefs,
				    .params = (const char **)argv + i, .nparams = (uint32_t)(argc - i),
				    .named = named, .nnamed = nnamed, .mode = run_mode,
				    .unsafe = unsafe, .strlen = strlen_opt };
		int err = dt_check(p, a, d, &o);
		if (!strcmp(mode, "checked"))
			dt_dump_ast(p, stdout);
		else if (!strcmp(mode, "types") && !err)
			dt_dump_types(p, stdout);
	}
	dt_diags_print(d, stdout, false);
	int rc = dt_diags_error_count(d) ? 1 : 0;
	dt_diags_free(d);
	dt_arena_free(a);
	free(text);
	return rc;
}

/* fuzz_codegen.c — libFuzzer harness from generated scripts to BPF instructions: the input is
 * decoded into a script by the structure-aware generator (gen.c), which goes through the whole
 * front end with its dumps, and, when the checker accepts it, through code generation (LLVM, the
 * BPF back end, the section split and the `-d asm` disassembler) against made-up map fds, as
 * test_codegen_asm does. A checked program that codegen refuses is a bug (of the checker or of
 * codegen), and so are a request for an auxiliary map that dt_cg_resources_of did not name (the
 * resource step's contract, codegen.h) and output that breaks what the loader relies on: a
 * program per set of attach points (two with ustack_dwarf), jumps that land inside the program,
 * map references only to the fds handed out. Any of them aborts with the script printed.
 *   DT_FUZZ_PRINT=1 fuzz_codegen CRASH_FILE   prints the script an input decodes to
 * At exit it prints how many scripts passed the checker and compiled. */
#include "codegen/codegen.h"
#include "common/common.h"
#include "lang/lang_internal.h"
#include "tests/fuzz/fuzz_env.h"
#include "tests/fuzz/gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_FD_BASE 1000 /* script map m is fd 1000 + m->id */
#define AUX_FD_BASE 100  /* auxiliary map `which` is fd 100 + which */

static unsigned long n_scripts, n_checked, n_compiled;

typedef struct env_ctx {
	const dt_program *p;
	dt_cg_resources res;  /* step 1: what the code may ask aux_fd for */
	bool handed[64];      /* the auxiliary maps whose fds aux_fd gave out */
	int slots;
} env_ctx;

static int map_fd(void *ctx, const dt_map_sym *m)
{
	env_ctx *e = ctx;

	if (m->id >= e->p->nmaps || e->p->maps[m->id] != m)
		abort(); /* codegen asked for a map the program does not have */
	return MAP_FD_BASE + (int)m->id;
}

/* A lookup, as the session's: -ENOENT (an internal error in codegen) for what step 1 did not
 * name. */
static int aux_fd(void *ctx, dt_aux_map which, dt_stack_kind kind, uint32_t depth,
		  enum bpf_prog_type pt)
{
	env_ctx *e = ctx;

	if ((unsigned)which >= DT_ARRAY_SIZE(e->handed) ||
	    !dt_cg_resources_name(&e->res, which, kind, depth, pt))
		return -ENOENT;
	e->handed[which] = true;
	return AUX_FD_BASE + (int)which;
}

static int cont_slot(void *ctx)
{
	return ((env_ctx *)ctx)->slots++;
}

static void report(void)
{
	fprintf(stderr, "fuzz_codegen: %lu scripts, %lu passed the checker (%.1f%%), %lu compiled\n",
		n_scripts, n_checked, n_scripts ? 100.0 * (double)n_checked / (double)n_scripts : 0.0,
		n_compiled);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(report);
	return 0;
}

static void fail(const dt_source *src, dt_diags *d, const char *what)
{
	fprintf(stderr, "fuzz_codegen: %s\n--- script\n%.*s--- diagnostics\n", what, (int)src->len,
		src->text);
	dt_diags_print(d, stderr, false);
	abort();
}

/* What the loader relies on, instruction by instruction. */
static void check_prog(const dt_source *src, dt_diags *d, const env_ctx *e, const dt_cg_prog *pg)
{
	const struct bpf_insn *in = pg->insns;

	if (!pg->ninsns)
		fail(src, d, "a program without instructions");
	if (!pg->nset || pg->set[0] != pg->attach)
		fail(src, d, "a program without its set of attach points");
	for (size_t i = 0; i < pg->ninsns; i++) {
		uint8_t cls = BPF_CLASS(in[i].code), op = BPF_OP(in[i].code);

		if (in[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (i + 1 >= pg->ninsns)
				fail(src, d, "ld_imm64 cut in half at the end of a program");
			if (in[i].src_reg == BPF_PSEUDO_MAP_FD) {
				int fd = in[i].imm;
				bool ok = (fd >= MAP_FD_BASE && fd < MAP_FD_BASE + (int)e->p->nmaps) ||
					  (fd >= AUX_FD_BASE &&
					   fd < AUX_FD_BASE + (int)DT_ARRAY_SIZE(e->handed) &&
					   e->handed[fd - AUX_FD_BASE]);
				if (!ok)
					fail(src, d, "a map reference to an fd codegen was not given");
			}
			i++;
			continue;
		}
		if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT) {
			long t = (long)i + 1 + in[i].off;
			if (t < 0 || t >= (long)pg->ninsns)
				fail(src, d, "a jump out of its program");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	size_t len;
	char *text = gen_script(data, size, &len);
	dt_source src = { .name = "gen", .text = text, .len = len };
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	dt_check_opts o;
	dt_program *p;

	if (!null)
		null = fopen("/dev/null", "w");
	if (getenv("DT_FUZZ_PRINT"))
		fprintf(stderr, "%s", text);
	n_scripts++;
	/* One parse, its token stream dumped (as fuzz_lang does), not a second lex of the text. */
	static dt_token_vec rec;
	rec.n = 0;
	p = dt_parse_recording(a, &src, d, &rec);
	dt_dump_token_vec(&src, &rec, null);
	fuzz_check_opts(&o);
	if (!dt_diags_error_count(d) && dt_check(p, a, d, &o) == 0) {
		env_ctx e = { .p = p };
		dt_cg_env env = { .sz = sizeof(env), .ctx = &e, .map_fd = map_fd, .aux_fd = aux_fd,
				  .cont_slot = cont_slot, .want_asm = true };
		dt_cg_result *r = NULL;
		uint32_t want = 0;

		n_checked++;
		dt_dump_ast(p, null);
		dt_dump_types(p, null);
		/* The generator's probes are far below what is split into parts (no chain_slot
		 * here), so the resource step has nothing to refuse. */
		if (dt_cg_resources_of(p, &e.res, d))
			fail(&src, d, "a generated program past codegen's limits");
		if (dt_codegen(p, &env, &r, d))
			fail(&src, d, "a checked program that codegen refused");
		for (uint32_t i = 0; i < p->nprobes; i++) {
			const dt_probe *pr = p->probes[i];
			uint32_t sets = pr->nattach ? 1 : 0;
			for (uint32_t j = 0; j + 1 < pr->nattach; j++)
				sets += !dt_cg_same_set(pr->attach[j], pr->attach[j + 1]);
			want += sets * (pr->uses_ustack_dwarf ? 2 : 1);
		}
		if (r->nprogs != want)
			fail(&src, d, "not one program per set of attach points (two with ustack_dwarf)");
		for (uint32_t i = 0; i < r->nprogs; i++)
			check_prog(&src, d, &e, &r->progs[i]);
		fputs(r->asm_text, null);
		dt_cg_result_free(r);
		dt_cg_resources_fini(&e.res);
		n_compiled++;
	}
	if (getenv("DT_FUZZ_PRINT"))
		dt_diags_print(d, stderr, false);
	dt_diags_print(d, null, false);
	dt_diags_free(d);
	dt_arena_free(a);
	free(text);
	return 0;
}

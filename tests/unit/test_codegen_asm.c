/* test_codegen_asm.c — codegen without the kernel (no root needed): scripts compile against
 * made-up map fds, and the `-d asm` / `-d ir` renderings show what was decided: map references
 * by fd (ld_imm64 map[fd N]), helper calls by id, the pid filter, the ustack_dwarf entry /
 * continuation split with its tail call; the resources decided before codegen
 * (dt_cg_resources_of); and missing fds become diagnostics, not crashes. */
#include "t.h"

#include "codegen/codegen.h"
#include "lang/lang.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake {
	bool fail_aux;
	int slots;
} fake;

static int map_fd(void *ctx, const dt_map_sym *m)
{
	return 100 + (int)m->id;
}

static int aux_fd(void *ctx, dt_aux_map which, dt_stack_kind kind, uint32_t depth,
		  enum bpf_prog_type pt)
{
	fake *f = ctx;

	return f->fail_aux ? -ENOENT : 50 + (int)which;
}

static int cont_slot(void *ctx)
{
	fake *f = ctx;

	return f->slots++;
}

/* Compiles `text`; returns the result (NULL on failure, *diag_count set). */
static dt_cg_result *compile(const char *text, fake *f, uint32_t filter_pid, int *nerr)
{
	dt_arena *a = dt_arena_new();
	dt_source src = { .name = "-e", .text = text, .len = strlen(text) };
	dt_diags *d = dt_diags_new(&src);
	dt_program *p = dt_parse(a, &src, d);
	dt_check_opts co = { .sz = sizeof(co) };
	dt_cg_env env = { .sz = sizeof(env), .ctx = f, .map_fd = map_fd, .aux_fd = aux_fd,
			  .cont_slot = cont_slot, .filter_pid = filter_pid, .want_ir = true,
			  .want_asm = true };
	dt_cg_result *r = NULL;

	if (dt_diags_error_count(d) == 0 && dt_check(p, a, d, &co) == 0)
		dt_codegen(p, &env, &r, d);
	*nerr = dt_diags_error_count(d);
	if (*nerr && getenv("DT_TEST_VERBOSE"))
		dt_diags_print(d, stderr, false);
	dt_diags_free(d);
	dt_arena_free(a);
	return r;
}

static void map_update_by_fd(void)
{
	fake f = { 0 };
	int nerr;
	dt_cg_result *r = compile("BEGIN { @x = 1 + 2; }", &f, 0, &nerr);

	CHECK(r != NULL);
	CHECK_EQ_INT(nerr, 0);
	if (!r)
		return;
	CHECK_EQ_INT(r->nprogs, 1);
	CHECK_EQ_INT(r->progs[0].prog_type, BPF_PROG_TYPE_RAW_TRACEPOINT);
	CHECK_EQ_STR(r->progs[0].name, "p0_begin");
	CHECK(strstr(r->asm_text, "map[fd 100] ll") != NULL);
	CHECK(strstr(r->asm_text, "call 2\n") != NULL); /* bpf_map_update_elem */
	CHECK(strstr(r->asm_text, "exit\n") != NULL);
	/* 1 + 2 folded: the value stored is the constant 3. */
	CHECK(strstr(r->asm_text, "= 3\n") != NULL);
	CHECK(strstr(r->ir, "section \"dt/p0_a0\"") != NULL);
	dt_cg_result_free(r);
}

static void prog_types(void)
{
	fake f = { 0 };
	int nerr;
	dt_cg_result *r = compile("profile:hz:99 { @a = count(); } "
				  "uprobe:/bin/bash:readline { @b = count(); } "
				  "tracepoint:sched:sched_switch { @c = count(); } END { @d = 1; }",
				  &f, 0, &nerr);

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ_INT(r->nprogs, 4);
	CHECK_EQ_INT(r->progs[0].prog_type, BPF_PROG_TYPE_PERF_EVENT);
	CHECK_EQ_INT(r->progs[1].prog_type, BPF_PROG_TYPE_KPROBE);
	CHECK_EQ_INT(r->progs[2].prog_type, BPF_PROG_TYPE_TRACEPOINT);
	CHECK_EQ_INT(r->progs[3].prog_type, BPF_PROG_TYPE_RAW_TRACEPOINT);
	for (uint32_t i = 0; i < r->nprogs; i++) {
		CHECK(r->progs[i].ninsns > 0);
		CHECK(!r->progs[i].is_continuation);
		CHECK_EQ_INT(r->progs[i].cont_slot, -1);
	}
	dt_cg_result_free(r);
}

static void pid_filter(void)
{
	fake f = { 0 };
	int nerr;
	dt_cg_result *r = compile("profile:hz:99 { @a = count(); } BEGIN { @b = 1; }", &f, 77,
				  &nerr);

	CHECK(r != NULL);
	if (!r)
		return;
	/* The profile program asks for the pid first; BEGIN (run in our own process) does not. */
	const char *begin = strstr(r->asm_text, "p1_begin");

	CHECK(begin != NULL);
	CHECK(strstr(r->asm_text, "call 14") != NULL && strstr(r->asm_text, "call 14") < begin);
	CHECK(begin && strstr(begin, "call 14") == NULL);
	CHECK(strstr(r->asm_text, "0x4d00000000") != NULL || strstr(r->asm_text, " 77 ") != NULL);
	dt_cg_result_free(r);
	/* An interval timer fires in whatever task is on the CPU: no pid filter, or `-p PID -e
	 * 'interval:s:1 { exit(); }'` would only end if PID were running at the tick. */
	r = compile("interval:s:1 { @c = 1; }", &f, 77, &nerr);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(strstr(r->asm_text, "call 14") == NULL);
	dt_cg_result_free(r);
}

static void dwarf_entry_and_continuation(void)
{
	fake f = { .slots = 5 };
	int nerr;
	dt_cg_result *r = compile("profile:hz:99 /pid == 1/ { @[ustack_dwarf(40)] = count(); }", &f,
				  0, &nerr);

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ_INT(r->nprogs, 2);
	if (r->nprogs == 2) {
		CHECK(!r->progs[0].is_continuation);
		CHECK_EQ_INT(r->progs[0].cont_slot, 5);
		CHECK(r->progs[1].is_continuation);
		CHECK_EQ_INT(r->progs[1].cont_slot, 5);
		CHECK_EQ_INT(r->progs[1].prog_type, r->progs[0].prog_type);
	}
	/* Entry: walker state (fd 50 + DT_AUX_WALKER_STATE), depth 40, tail call into the walker
	 * prog array (fd 50 + DT_AUX_WALKER_PROGS). */
	CHECK(strstr(r->asm_text, "map[fd 56] ll") != NULL);
	CHECK(strstr(r->asm_text, "map[fd 54] ll") != NULL);
	CHECK(strstr(r->asm_text, "= 40\n") != NULL);
	CHECK(strstr(r->asm_text, "call 12\n") != NULL);
	dt_cg_result_free(r);
}

/* Parses and checks `text`, then says what its code will need (dt_cg_resources_of). */
static int needs(const char *text, dt_cg_resources *r)
{
	dt_arena *a = dt_arena_new();
	dt_source src = { .name = "-e", .text = text, .len = strlen(text) };
	dt_diags *d = dt_diags_new(&src);
	dt_program *p = dt_parse(a, &src, d);
	dt_check_opts co = { .sz = sizeof(co) };
	int rc = -EINVAL;

	memset(r, 0, sizeof(*r));
	if (dt_diags_error_count(d) == 0 && dt_check(p, a, d, &co) == 0) {
		dt_cg_resources_of(p, r);
		rc = 0;
	}
	if (rc && getenv("DT_TEST_VERBOSE"))
		dt_diags_print(d, stderr, false);
	dt_diags_free(d);
	dt_arena_free(a);
	return rc;
}

static bool has_stack(const dt_cg_resources *r, dt_stack_kind kind, uint32_t depth)
{
	for (uint32_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].kind == kind && r->stacks[i].depth == depth)
			return true;
	return false;
}

/* The resources decided before codegen: only what the code will reference. */
static void resources_of_programs(void)
{
	dt_cg_resources r;

	CHECK_EQ_INT(needs("BEGIN { @x = 1; $y = 2; }", &r), 0);
	CHECK(!r.events && !r.user_addrs && !r.xprobe_result);
	CHECK_EQ_INT(r.walker_prog_types, 0);
	CHECK_EQ_INT(r.nstacks, 0);
	dt_cg_resources_fini(&r);

	CHECK_EQ_INT(needs("BEGIN { printf(\"x\\n\"); }", &r), 0);
	CHECK(r.events && !r.user_addrs);
	dt_cg_resources_fini(&r);

	/* Stack maps once per (kind, depth); a user stack notes its process (an event). */
	CHECK_EQ_INT(needs("profile:hz:99 { @a[kstack] = count(); @b[ustack(5)] = count(); "
			   "@c[kstack] = count(); @d[kstack(perf, 3)] = count(); }", &r), 0);
	CHECK_EQ_INT(r.nstacks, 3);
	CHECK(has_stack(&r, DT_STACK_KERNEL, DT_STACK_DEFAULT_DEPTH));
	CHECK(has_stack(&r, DT_STACK_KERNEL, 3));
	CHECK(has_stack(&r, DT_STACK_USER_FP, 5));
	CHECK(r.user_addrs && r.events);
	CHECK_EQ_INT(r.walker_prog_types, 0);
	dt_cg_resources_fini(&r);

	/* A kernel stack alone records no user address. */
	CHECK_EQ_INT(needs("interval:s:1 { @[kstack] = count(); }", &r), 0);
	CHECK(!r.user_addrs && !r.events);
	dt_cg_resources_fini(&r);

	/* One walker per program type whose probes use ustack_dwarf, in the predicate too. */
	CHECK_EQ_INT(needs("profile:hz:99 { @[ustack_dwarf] = count(); } "
			   "tracepoint:sched:sched_switch /@s[ustack_dwarf(8)] == 0/ { @s[ustack_dwarf(8)] "
			   "= 1; } interval:s:1 { @i = count(); }", &r), 0);
	CHECK_EQ_INT(r.walker_prog_types, (1ull << BPF_PROG_TYPE_PERF_EVENT) |
					  (1ull << BPF_PROG_TYPE_TRACEPOINT));
	CHECK(r.user_addrs && r.events);
	CHECK_EQ_INT(r.nstacks, 0);
	dt_cg_resources_fini(&r);

	CHECK_EQ_INT(needs("uprobe:/bin/sh:main { @[usym(arg0)] = count(); }", &r), 0);
	CHECK(r.user_addrs && r.events);
	dt_cg_resources_fini(&r);

	/* delete() sends an event only for a histogram key (userspace deletes its buckets). */
	CHECK_EQ_INT(needs("BEGIN { @c[1] = count(); delete(@c[1]); }", &r), 0);
	CHECK(!r.events);
	dt_cg_resources_fini(&r);
	CHECK_EQ_INT(needs("BEGIN { @h[1] = hist(2); delete(@h[1]); }", &r), 0);
	CHECK(r.events);
	dt_cg_resources_fini(&r);

	CHECK_EQ_INT(needs("xprobe:/bin/sh:main { @ = hist(wall); }", &r), 0);
	CHECK(r.xprobe_result && !r.events && !r.user_addrs);
	dt_cg_resources_fini(&r);
	CHECK_EQ_INT(needs("xprobe:/bin/sh:main { @ = count(); }", &r), 0);
	CHECK(!r.xprobe_result);
	dt_cg_resources_fini(&r);
}

static void missing_fd_is_a_diagnostic(void)
{
	fake f = { .fail_aux = true };
	int nerr;
	dt_cg_result *r = compile("profile:hz:99 { printf(\"%d\\n\", pid); }", &f, 0, &nerr);

	CHECK(r == NULL);
	CHECK(nerr >= 1);
	dt_cg_result_free(r);
}

/* Where x86-64 instructions start: a uprobe's +OFFSET must be one of those places. */
static void insn_boundaries(void)
{
	/* movslq %edi,%rdx; mov %rdx,%rax; endbr64; ret */
	static const uint8_t code[] = { 0x48, 0x63, 0xd7, 0x48, 0x89, 0xd0,
					0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	static const int want[] = { 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1 };

	for (uint64_t off = 0; off < sizeof(want) / sizeof(want[0]); off++)
		CHECK_EQ_INT(dt_cg_insn_boundary(code, sizeof(code), off), want[off]);
	/* Bytes that do not decode before the offset: no answer, not a yes. */
	CHECK(dt_cg_insn_boundary((const uint8_t[]){ 0x06, 0x06, 0x90 }, 3, 2) < 0);
}

int main(void)
{
	T_RUN(map_update_by_fd);
	T_RUN(prog_types);
	T_RUN(pid_filter);
	T_RUN(dwarf_entry_and_continuation);
	T_RUN(resources_of_programs);
	T_RUN(missing_fd_is_a_diagnostic);
	T_RUN(insn_boundaries);
	dt_codegen_shutdown();
	return t_done();
}

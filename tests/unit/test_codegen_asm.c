/* test_codegen_asm.c — codegen without the kernel (no root needed): scripts compile against
 * made-up map fds, and the `-d asm` / `-d ir` renderings show what was decided: map references
 * by fd (ld_imm64 map[fd N]), helper calls by id, the pid filter, the ustack_dwarf entry /
 * continuation split with its tail call; the resources decided before codegen
 * (dt_cg_resources_of); and missing fds become diagnostics, not crashes. */
#include "t.h"

#include "codegen/codegen.h"
#include "lang/lang.h"
#include "common/common.h"

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

/* The diagnostics of the last compile() or needs() call (a diagnostic about a probe shows all
 * its lines: thousands here). */
static char *last_diags;

static void keep_diags(dt_diags *d)
{
	size_t len;
	FILE *f;

	free(last_diags);
	last_diags = NULL;
	f = open_memstream(&last_diags, &len);
	if (f) {
		dt_diags_print(d, f, false);
		fclose(f);
	}
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
			  .want_asm = true, .chain_slot = cont_slot };
	dt_cg_result *r = NULL;

	if (dt_diags_error_count(d) == 0 && dt_check(p, a, d, &co) == 0)
		dt_codegen(p, &env, &r, d);
	*nerr = dt_diags_error_count(d);
	if (*nerr && getenv("DT_TEST_VERBOSE"))
		dt_diags_print(d, stderr, false);
	keep_diags(d);
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
	if (dt_diags_error_count(d) == 0 && dt_check(p, a, d, &co) == 0)
		rc = dt_cg_resources_of(p, r, d);
	if (rc && getenv("DT_TEST_VERBOSE"))
		dt_diags_print(d, stderr, false);
	keep_diags(d);
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

/* Builds "BEGIN {\n" + n copies of `stmt` (with %d the index) + extra + "}". */
static char *script_of(int n, const char *stmt, const char *extra)
{
	size_t cap = (size_t)n * (strlen(stmt) + 16) + strlen(extra) + 32, len = 0;
	char *t = xmalloc(cap);

	len += (size_t)snprintf(t, cap, "BEGIN {\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, stmt, i);
	snprintf(t + len, cap - len, "%s}\n", extra);
	return t;
}

/* What no split can fit is a diagnostic before anything is created: one statement that
 * references more maps than a program may, a probe longer than the longest chain. Large
 * probes that fit are split, and say they need the chain and the frame. */
static void split_limits(void)
{
	dt_cg_resources r;
	char *t, sum[2048] = "@all = @m0";

	t = script_of(1000, "@m%d = 1;\n", "");
	CHECK_EQ_INT(needs(t, &r), 0);
	CHECK(r.frame && r.chain_prog_types == 1ull << BPF_PROG_TYPE_RAW_TRACEPOINT);
	dt_cg_resources_fini(&r);
	free(t);

	/* 54 maps per program, 33 programs. */
	t = script_of(2000, "@m%d = 1;\n", "");
	CHECK_EQ_INT(needs(t, &r), -EINVAL);
	CHECK(strstr(last_diags, "-e:1-2002: ERROR: this probe references too many maps to load: "
			"it needs more than 33 programs of at most 54 maps each, joined by tail "
			"calls\n") != NULL);
	dt_cg_resources_fini(&r);
	free(t);

	for (int i = 1; i < 60; i++)
		snprintf(sum + strlen(sum), sizeof(sum) - strlen(sum), " + @m%d", i);
	strcat(sum, ";\n");
	t = script_of(60, "@m%d = 1;\n", sum);
	CHECK_EQ_INT(needs(t, &r), -EINVAL);
	CHECK(strstr(last_diags, "-e:62:1-415: ERROR: this statement references 61 maps; one BPF "
			"program can reference at most 64 (10 of them dwarftrace's own)\n"
			"@all = @m0 + @m1") != NULL);
	CHECK(strstr(last_diags, "HINT: split the statement into several") != NULL);
	dt_cg_resources_fini(&r);
	free(t);

	t = script_of(40000, "@a[%d] = pid + 1;\n", "");
	CHECK_EQ_INT(needs(t, &r), -EINVAL);
	CHECK(strstr(last_diags, "-e:1-40002: ERROR: this probe is too large to load: it would take "
			"about ") != NULL);
	CHECK(strstr(last_diags, "HINT: split it into several probes on the same attach "
			"point") != NULL);
	dt_cg_resources_fini(&r);
	free(t);
}


/* A probe past one program's maps comes out as parts: the first attached, each later one in
 * its chain slot, every part but the last ending in a tail call. */
static void split_programs_chain(void)
{
	fake f = { 0 };
	int nerr;
	char *t = script_of(200, "@m%d = %d;\n", "");
	dt_cg_result *r = compile(t, &f, 0, &nerr);

	CHECK(r != NULL);
	CHECK_EQ_INT(nerr, 0);
	if (r) {
		CHECK(r->nprogs >= 4);
		CHECK_EQ_INT(r->progs[0].chain_slot, -1);
		for (uint32_t i = 1; i < r->nprogs; i++)
			CHECK_EQ_INT(r->progs[i].chain_slot, (int)i - 1);
		CHECK_EQ_STR(r->progs[1].name, "p0_part1");
		CHECK(strstr(r->asm_text, "call 12\n") != NULL); /* bpf_tail_call */
	}
	dt_cg_result_free(r);
	free(t);
}

/* lang bounds each value; a statement that builds more than scratch memory holds is the
 * script's error, at the statement, not an internal one. */
static void statement_past_scratch(void)
{
	fake f = { 0 };
	int nerr;
	char t[12000] = "BEGIN { $s = \"a\"; if (";
	dt_cg_result *r;

	for (int i = 0; i < 9; i++) {
		char lit[1001];

		memset(lit, 'x', 1000);
		lit[1000] = 0;
		snprintf(t + strlen(t), sizeof(t) - strlen(t), "%s$s == \"%s%d\"", i ? " || " : "",
			 lit, i);
	}
	strcat(t, ") { @x = 1; } }");
	r = compile(t, &f, 0, &nerr);
	CHECK(r == NULL);
	CHECK_EQ_INT(nerr, 1);
	CHECK(strstr(last_diags, "-e:1:19-9149: ERROR: this statement builds more than 8192 bytes of "
			"values (strings, keys, tuples) at once\n") != NULL);
	CHECK(strstr(last_diags, "internal") == NULL);
	dt_cg_result_free(r);
}


/* A tuple literal nested in a tuple or a key is built in place: a tuple nested 30 deep costs its
 * own 480 bytes, where building each level in a buffer of its own and copying it into the next
 * took more than the 8192 bytes of scratch memory (and, 15 deep, code the verifier refused). */
static void nested_tuples_in_place(void)
{
	fake f = { 0 };
	int nerr;
	char t[2048] = "BEGIN { @[", tail[64] = "";
	dt_cg_result *r;

	for (int i = 0; i < 30; i++) {
		strcat(t, "(comm, ");
		strcat(tail, ")");
	}
	snprintf(t + strlen(t), sizeof(t) - strlen(t), "comm%s] = count(); $t = ((1, (2, comm)), "
		 "pid); printf(\"%%s\\n\", $t.0.1.1); }", tail);
	r = compile(t, &f, 0, &nerr);
	CHECK(r != NULL);
	CHECK_EQ_INT(nerr, 0);
	dt_cg_result_free(r);
}

/* Scratch-memory pointers are not kept live across a program: 20 usym values built twice
 * (unroll), all in scratch, once left a pointer per value spilled to the 512-byte stack (LLVM
 * merged the second iteration's address computations into the first's). Found by fuzz_codegen. */
static void scratch_pointers_not_spilled(void)
{
	fake f = { 0 };
	int nerr;
	char t[2048] = "BEGIN { unroll(2) { $c = (0, 7, ", tail[64] = "usym(1)";
	dt_cg_result *r;

	for (int i = 2; i <= 20; i++)
		strcat(t, "(");
	strcat(t, tail);
	for (int i = 2; i <= 20; i++)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), ", usym(%d))", i);
	strcat(t, "); } }");
	r = compile(t, &f, 0, &nerr);
	CHECK(r != NULL);
	CHECK_EQ_INT(nerr, 0);
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
	T_RUN(split_limits);
	T_RUN(split_programs_chain);
	T_RUN(statement_past_scratch);
	T_RUN(nested_tuples_in_place);
	T_RUN(scratch_pointers_not_spilled);
	T_RUN(missing_fd_is_a_diagnostic);
	T_RUN(insn_boundaries);
	dt_codegen_shutdown();
	free(last_diags);
	return t_done();
}

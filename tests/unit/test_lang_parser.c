/* test_lang_parser.c — the parser's corners, above all the rule for when `>` closes a `<` block
 * (documented at the top of lang/parser.c), plus attach point fields, precedence, statement
 * forms and error recovery (several errors from one run, no crash on truncated input). */
#include "lang/lang.h"
#include "common/common.h"
#include "tests/unit/t.h"

#include <stdlib.h>

typedef struct parsed {
	dt_source src;
	dt_arena *a;
	dt_diags *d;
	dt_program *p;
} parsed;

/* The diagnostics keep a pointer to the source, so it lives in the arena, not in a copy. */
static parsed parse(const char *text)
{
	parsed r = { 0 };
	r.a = dt_arena_new();
	dt_source *src = dt_arena_alloc(r.a, sizeof(*src));
	*src = (dt_source){ .name = "t", .text = text, .len = strlen(text) };
	r.src = *src;
	r.d = dt_diags_new(src);
	r.p = dt_parse(r.a, src, r.d);
	return r;
}

static void done(parsed *r)
{
	dt_diags_free(r->d);
	dt_arena_free(r->a);
}

/* The value expression of statement `i` of probe `pi`, which must be an assignment. */
static const dt_expr *value_of(parsed *r, uint32_t pi, uint32_t i)
{
	if (pi >= r->p->nprobes || i >= r->p->probes[pi]->body.n)
		return NULL;
	const dt_stmt *s = r->p->probes[pi]->body.v[i];
	return s->kind == DT_S_ASSIGN ? s->assign.value : NULL;
}

static void required_forms(void)
{
	const char *ok[] = {
		"profile:hz:19 < @[ustack] = count(); >",
		"BEGIN < printf(\"hi\\n\"); exit(); >",
		"kprobe:f < if (arg0 > arg1) { @x = 1; } >",
		"BEGIN < @x = $a > 3 ? 1 : 2; >",
		"BEGIN < @ = 1 >",
		"BEGIN < { { @x = 1; } } >",
		"BEGIN < > END { } i:s:1 < @x = 1; >",
	};
	for (size_t i = 0; i < DT_ARRAY_SIZE(ok); i++) {
		parsed r = parse(ok[i]);
		if (dt_diags_error_count(r.d))
			dt_diags_print(r.d, stderr, false);
		CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
		CHECK(r.p->nprobes >= 1 && r.p->probes[0]->angle_block);
		done(&r);
	}
}

static void gt_compares_before_operand(void)
{
	parsed r = parse("BEGIN < @x = $a > 3 ? 1 : 2; >");
	const dt_expr *v = value_of(&r, 0, 0);
	CHECK(v && v->kind == DT_E_TERNARY);
	CHECK(v && v->tern.cond->kind == DT_E_BINOP && v->tern.cond->bin.op == DT_OP_GT);
	done(&r);
	r = parse("BEGIN < @x = 1 > -1 >");
	v = value_of(&r, 0, 0);
	CHECK(v && v->kind == DT_E_BINOP && v->bin.op == DT_OP_GT);
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	done(&r);
	r = parse("BEGIN < @x = 1 > pid >");
	v = value_of(&r, 0, 0);
	CHECK(v && v->kind == DT_E_BINOP && v->bin.r->kind == DT_E_BUILTIN);
	done(&r);
}

static void gt_closes_before_non_operand(void)
{
	parsed r = parse("BEGIN < @ = 1 > END < @y = 2 >");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	CHECK_EQ_INT(r.p->nprobes, 2);
	const dt_expr *v = value_of(&r, 0, 0);
	CHECK(v && v->kind == DT_E_INT && v->i.value == 1);
	CHECK_EQ_INT(r.p->probes[1]->attach[0]->provider, DT_P_END);
	done(&r);
	r = parse("BEGIN < @ = 1 > kprobe:f { }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	CHECK_EQ_INT(r.p->nprobes, 2);
	done(&r);
}

static void gt_nested_always_compares(void)
{
	parsed r = parse("BEGIN < @x = (1 > 2); @y[3 > 4] = 1; { @z = 5 > 6 } >");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	const dt_expr *v = value_of(&r, 0, 0);
	CHECK(v && v->kind == DT_E_BINOP && v->bin.op == DT_OP_GT);
	const dt_stmt *blk = r.p->probes[0]->body.n == 3 ? r.p->probes[0]->body.v[2] : NULL;
	CHECK(blk && blk->kind == DT_S_BLOCK && blk->block.n == 1);
	/* A `>` inside braces cannot close the `<` block even before a non-operand. */
	done(&r);
	r = parse("BEGIN < { @z = 5 > } >");
	CHECK(dt_diags_error_count(r.d) > 0);
	done(&r);
}

static void gt_ambiguous_error_names_the_gt(void)
{
	parsed r = parse("BEGIN < @x = 1 > 2\nEND { }");
	CHECK(dt_diags_error_count(r.d) >= 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	dt_diags_print(r.d, f, false);
	fclose(f);
	CHECK(strstr(buf, "t:1:19-20: ERROR: expected ';' or '>' after statement, found 'END'"));
	CHECK(strstr(buf, "the '>' at 1:16 was read as a comparison"));
	free(buf);
	done(&r);
}

static void attach_fields(void)
{
	parsed r = parse("uprobe:/usr/lib/libc.so.6:malloc+0x10, ur:libc:free, kprobe:vfs_read+4, "
			 "t:sched:sched_switch, s:cs:10, h:cycles, p:ms:10, i:hz:5 /pid == 1/ { }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	CHECK_EQ_INT(r.p->probes[0]->nattach, 8);
	dt_attach **a = r.p->probes[0]->attach;
	CHECK_EQ_INT(a[0]->provider, DT_P_UPROBE);
	CHECK_EQ_STR(a[0]->target, "/usr/lib/libc.so.6");
	CHECK_EQ_STR(a[0]->func, "malloc");
	CHECK(a[0]->has_offset && a[0]->offset == 16);
	CHECK_EQ_INT(a[1]->provider, DT_P_URETPROBE);
	CHECK_EQ_STR(a[1]->target, "libc");
	CHECK_EQ_INT(a[2]->offset, 4);
	CHECK_EQ_STR(a[3]->target, "sched");
	CHECK_EQ_STR(a[3]->func, "sched_switch");
	CHECK_EQ_STR(a[4]->target, "cs");
	CHECK_EQ_INT(a[4]->rate, 10);
	CHECK_EQ_INT(a[5]->provider, DT_P_HARDWARE);
	CHECK_EQ_INT(a[6]->unit, DT_UNIT_MS);
	CHECK_EQ_INT(a[7]->unit, DT_UNIT_HZ);
	CHECK(r.p->probes[0]->pred != NULL);
	done(&r);
}

/* Fills the stack below the caller with non-zero bytes, so that a read of a variable the parser
 * never set sees garbage rather than the zeros of a fresh stack. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile unsigned char junk[65536];

	memset((void *)junk, 0x5a, sizeof(junk));
}

/* usdt:NAME alone (bpftrace's `usdt:*`) has two fields; its check read the third field's length,
 * which the splitter never set: the same text was "malformed" or "matches no USDT probe" from one
 * run to the next. */
static void usdt_two_fields_on_a_dirty_stack(void)
{
	dirty_stack();
	parsed r = parse("usdt:/x { }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	if (r.p && r.p->nprobes) {
		dt_attach *a = r.p->probes[0]->attach[0];
		CHECK_EQ_STR(a->target, "");
		CHECK_EQ_STR(a->func, "/x");
		CHECK(a->usdt_provider == NULL);
	}
	done(&r);
}

static void precedence(void)
{
	parsed r = parse("BEGIN { @x = 1 + 2 * 3 == 7 && 1 | 2; @y = -1 - -2; }");
	const dt_expr *v = value_of(&r, 0, 0);
	CHECK(v && v->bin.op == DT_OP_LAND);
	CHECK(v && v->bin.l->bin.op == DT_OP_EQ);
	CHECK(v && v->bin.l->bin.l->bin.op == DT_OP_ADD);
	CHECK(v && v->bin.l->bin.l->bin.r->bin.op == DT_OP_MUL);
	CHECK(v && v->bin.r->bin.op == DT_OP_BOR);
	v = value_of(&r, 0, 1);
	CHECK(v && v->bin.op == DT_OP_SUB && v->bin.l->kind == DT_E_INT &&
	      (int64_t)v->bin.l->i.value == -1 && (int64_t)v->bin.r->i.value == -2);
	done(&r);
}

static void predicate_division(void)
{
	parsed r = parse("BEGIN /(pid / 2) > 1/ { }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	CHECK(r.p->probes[0]->pred && r.p->probes[0]->pred->bin.op == DT_OP_GT);
	done(&r);
}

static void statements(void)
{
	parsed r = parse("BEGIN { $x = 1; $x += 2; $x <<= 1; $x++; --@m[1]; if ($x) { } else if (1) "
			 "{ } else { } unroll(5) { @a = 1; } return; { } printf(\"x\") }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	dt_stmt **s = r.p->probes[0]->body.v;
	CHECK_EQ_INT(r.p->probes[0]->body.n, 10);
	CHECK_EQ_INT(s[1]->assign.op, DT_OP_ADD);
	CHECK_EQ_INT(s[2]->assign.op, DT_OP_SHL);
	CHECK(s[3]->kind == DT_S_EXPR && s[3]->expr->un.op == DT_UOP_POSTINC);
	CHECK(s[4]->kind == DT_S_EXPR && s[4]->expr->un.op == DT_UOP_PREDEC);
	CHECK(s[5]->kind == DT_S_IF && s[5]->if_.els.n == 1 && s[5]->if_.els.v[0]->kind == DT_S_IF);
	CHECK(s[6]->kind == DT_S_UNROLL && s[6]->unroll.count_expr &&
	      s[6]->unroll.count_expr->kind == DT_E_INT && s[6]->unroll.count_expr->i.value == 5);
	CHECK_EQ_INT(s[7]->kind, DT_S_RETURN);
	CHECK_EQ_INT(s[8]->kind, DT_S_BLOCK);
	CHECK_EQ_INT(s[9]->kind, DT_S_EXPR);
	done(&r);
}

static void stack_builtins(void)
{
	parsed r = parse("BEGIN { @a = kstack(perf, 10); @b = ustack(raw); @c = ustack_dwarf(5); "
			 "@d = ustack_dwarf; }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	const dt_expr *v = value_of(&r, 0, 0);
	CHECK(v && v->builtin.id == DT_B_KSTACK && v->builtin.mode == DT_STACKMODE_PERF &&
	      v->builtin.depth == 10);
	v = value_of(&r, 0, 1);
	CHECK(v && v->builtin.mode == DT_STACKMODE_RAW && v->builtin.depth == 0);
	v = value_of(&r, 0, 2);
	CHECK(v && v->builtin.id == DT_B_USTACK_DWARF && v->builtin.depth == 5);
	done(&r);
}

static void recovery_reports_several(void)
{
	parsed r = parse("BEGIN { @x = ; @y = 1 }\nBEGIN { @z = (1 + ; }\nBEGIN { @ok = 1; }");
	CHECK_EQ_INT(dt_diags_error_count(r.d), 2);
	CHECK_EQ_INT(r.p->nprobes, 3);
	done(&r);
}

/* Every prefix of a valid program must parse without crashing, and with an error unless
 * the prefix is itself a program. */
static void truncations_do_not_crash(void)
{
	const char *full = "uprobe:/bin/bash:readline /pid == 1 && comm == \"bash\"/ < "
			   "@[ustack_dwarf(perf, 8), (1, \"x\")] = lhist(arg0, 0, 10, 1); if (1 > 0) "
			   "{ printf(\"%d\\n\", -$1); } >";
	size_t n = strlen(full);
	char *buf = malloc(n + 1);
	int errors = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(buf, full, i);
		buf[i] = 0;
		parsed r = parse(buf);
		errors += dt_diags_error_count(r.d) > 0;
		done(&r);
	}
	free(buf);
	CHECK(errors >= (int)n - 2);
	parsed r = parse(full);
	CHECK_EQ_INT(dt_diags_error_count(r.d), 0);
	done(&r);
}

static void deep_nesting_is_an_error(void)
{
	char buf[4096] = "BEGIN { @x = ";
	size_t n = strlen(buf);
	for (int i = 0; i < 1000; i++)
		buf[n++] = '(';
	strcpy(buf + n, "1 }");
	parsed r = parse(buf);
	CHECK(dt_diags_error_count(r.d) > 0);
	done(&r);
}

int main(void)
{
	T_RUN(required_forms);
	T_RUN(gt_compares_before_operand);
	T_RUN(gt_closes_before_non_operand);
	T_RUN(gt_nested_always_compares);
	T_RUN(gt_ambiguous_error_names_the_gt);
	T_RUN(attach_fields);
	T_RUN(usdt_two_fields_on_a_dirty_stack);
	T_RUN(precedence);
	T_RUN(predicate_division);
	T_RUN(statements);
	T_RUN(stack_builtins);
	T_RUN(recovery_reports_several);
	T_RUN(truncations_do_not_crash);
	T_RUN(deep_nesting_is_an_error);
	return t_done();
}

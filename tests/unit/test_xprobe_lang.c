/* test_xprobe_lang.c — the language side of xprobes: the attach point (path, C++ names with "::",
 * the `:N` sampling period and its errors, the `x` alias), the builtins that exist only in xprobes
 * and their type, retval and func allowed at the xprobe's return, argN refused, and the layouts
 * codegen reads (struct dt_xresult offsets). The BPF side is exercised by tests/runtime/xprobe.test
 * against tests/targets/xwork. */
#include "lang/lang.h"
#include "bpf-lib/dt_xprobe.h"
#include "tests/unit/t.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct run {
	dt_arena *a;
	dt_diags *d;
	dt_program *p;
	int rc;
	char *diag;
} run;

static run compile(const char *text)
{
	run r = { 0 };
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent" };
	dt_source *src;
	size_t len;
	FILE *f;

	r.a = dt_arena_new();
	src = dt_arena_alloc(r.a, sizeof(*src));
	*src = (dt_source){ .name = "t", .text = text, .len = strlen(text) };
	r.d = dt_diags_new(src);
	r.p = dt_parse(r.a, src, r.d);
	r.rc = dt_diags_error_count(r.d) ? -1 : dt_check(r.p, r.a, r.d, &o);
	f = open_memstream(&r.diag, &len);
	dt_diags_print(r.d, f, false);
	fclose(f);
	return r;
}

static void done(run *r)
{
	free(r->diag);
	dt_diags_free(r->d);
	dt_arena_free(r->a);
}

static const dt_attach *attach0(run *r)
{
	return r->p && r->p->nprobes && r->p->probes[0]->nattach ? r->p->probes[0]->attach[0]
								   : NULL;
}

static void attach_point_forms(void)
{
	static const struct {
		const char *text, *target, *func;
		uint64_t rate;
	} ok[] = {
		{ "xprobe:/bin/app:handle { }", "/bin/app", "handle", 0 },
		{ "xprobe:/bin/app:handle:10 { }", "/bin/app", "handle", 10 },
		{ "x:libc:malloc { }", "libc", "malloc", 0 },
		{ "xprobe:/bin/app:ns::Cls::run { }", "/bin/app", "ns::Cls::run", 0 },
		{ "xprobe:/bin/app:ns::Cls::run:3 { }", "/bin/app", "ns::Cls::run", 3 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		run r = compile(ok[i].text);
		const dt_attach *a = attach0(&r);

		CHECK_EQ_INT(r.rc, 0);
		CHECK(a && a->provider == DT_P_XPROBE);
		if (a) {
			CHECK_EQ_STR(a->target, ok[i].target);
			CHECK_EQ_STR(a->func, ok[i].func);
			CHECK_EQ_INT(a->rate, ok[i].rate);
		}
		if (r.rc)
			fprintf(stderr, "%s", r.diag);
		done(&r);
	}
}

static void attach_point_errors(void)
{
	static const char *const bad[] = {
		"xprobe:/bin/app { }",          /* no function */
		"xprobe:/bin/app:f:0 { }",      /* a period of 0 */
		"xprobe::f { }",                /* no binary */
		"xprobe:/bin/app:f:99999999999999999999999 { }", /* period overflows */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run r = compile(bad[i]);

		CHECK(r.rc != 0);
		CHECK(strstr(r.diag, "malformed xprobe attach point") != NULL);
		CHECK(strstr(r.diag, "xprobe:PATH_OR_LIB:SYMBOL[:SAMPLE_ONE_IN_N]") != NULL);
		done(&r);
	}
}

static void builtins_in_xprobes(void)
{
	run r = compile("xprobe:/bin/app:f { @w = sum(wall); @h = hist(oncpu); "
			"@x[offcpu, runq, blocked, iowait, nswitch] = count(); @r = hist(retval); "
			"@f[func] = count(); }");

	CHECK_EQ_INT(r.rc, 0);
	if (r.rc)
		fprintf(stderr, "%s", r.diag);
	for (uint32_t i = 0; r.rc == 0 && i < r.p->nmaps; i++) {
		const dt_map_sym *m = r.p->maps[i];

		if (!strcmp(m->name, "@x")) {
			CHECK(m->key && m->key->kind == DT_T_TUPLE && m->key->tuple.n == 5);
			for (uint32_t k = 0; m->key && k < m->key->tuple.n; k++) {
				CHECK(m->key->tuple.elems[k]->kind == DT_T_INT);
				CHECK(!m->key->tuple.elems[k]->is_signed);
			}
		}
	}
	done(&r);
}

static void builtins_refused_elsewhere(void)
{
	static const char *const bad[] = {
		"uprobe:/bin/app:f { @ = wall; }",
		"uretprobe:/bin/app:f { @ = oncpu; }",
		"profile:hz:99 { @ = nswitch; }",
		"xprobe:/bin/app:f, uprobe:/bin/app:g { @ = runq; }",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run r = compile(bad[i]);

		CHECK(r.rc != 0);
		CHECK(strstr(r.diag, "is only available in xprobe probes") != NULL);
		done(&r);
	}
	run a = compile("xprobe:/bin/app:f { @ = arg0; }");

	CHECK(a.rc != 0);
	CHECK(strstr(a.diag, "arg0 is only available") != NULL);
	done(&a);
}

static void result_layout(void)
{
	CHECK_EQ_INT(offsetof(struct dt_xthread, frames) % 8, 0);
	CHECK_EQ_INT(DT_XB__COUNT, 5);
}

int main(void)
{
	T_RUN(attach_point_forms);
	T_RUN(attach_point_errors);
	T_RUN(builtins_in_xprobes);
	T_RUN(builtins_refused_elsewhere);
	T_RUN(result_layout);
	return t_done();
}

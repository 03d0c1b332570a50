/* test_lang_check.c — the checker and the layouts: inferred map key/value types and their
 * conflicts, read-before-assign across probes, scratch variable scope, builtin restrictions per
 * probe type, printf events, ustack_dwarf flags, attach periods, existing maps (REPL) and
 * wildcard expansion, tuple offsets, map layouts, the hist/lhist bucket functions, and the map
 * count limit (the size limits are tests/golden/lang/limits.dt). */
#include "lang/lang.h"
#include "common/common.h"
#include "bpf-lib/dt_abi.h"
#include "tests/unit/t.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>

typedef struct checked {
	dt_arena *a;
	dt_diags *d;
	dt_program *p;
	int rc;
	char *diag_text;
} checked;

static checked check_opts(const char *text, const dt_check_opts *o)
{
	checked r = { 0 };
	r.a = dt_arena_new();
	dt_source *src = dt_arena_alloc(r.a, sizeof(*src));
	*src = (dt_source){ .name = "t", .text = text, .len = strlen(text) };
	r.d = dt_diags_new(src);
	r.p = dt_parse(r.a, src, r.d);
	r.rc = dt_diags_error_count(r.d) ? -1 : dt_check(r.p, r.a, r.d, o);
	size_t len;
	FILE *f = open_memstream(&r.diag_text, &len);
	dt_diags_print(r.d, f, false);
	fclose(f);
	return r;
}

static checked check(const char *text)
{
	/* No tracefs: the tests must not depend on the machine. */
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent" };
	return check_opts(text, &o);
}

static void done(checked *r)
{
	free(r->diag_text);
	dt_diags_free(r->d);
	dt_arena_free(r->a);
}

static const dt_map_sym *map_named(checked *r, const char *name)
{
	for (uint32_t i = 0; i < r->p->nmaps; i++)
		if (!strcmp(r->p->maps[i]->name, name))
			return r->p->maps[i];
	return NULL;
}

static const char *tn(checked *r, const dt_type *t)
{
	return t ? dt_type_name(r->a, t) : "(null)";
}

static void map_types(void)
{
	checked r = check("profile:hz:99 { @s[kstack, ustack_dwarf(8), comm] = count(); "
			  "@h[pid] = hist(nsecs); @l = lhist(cpu, 0, 100, 10); @v[1, \"a\"] = comm; "
			  "@v[2, comm] = \"x\"; }");
	CHECK_EQ_INT(r.rc, 0);
	const dt_map_sym *m = map_named(&r, "@s");
	CHECK(m != NULL);
	if (m) {
		CHECK_EQ_STR(tn(&r, m->key), "(kstack(127), ustack_dwarf(8), string[16])");
		CHECK_EQ_STR(tn(&r, m->value), "count");
		CHECK_EQ_INT(m->key->tuple.offsets[1], 16);
		CHECK_EQ_INT(m->key->tuple.offsets[2], 32);
		CHECK_EQ_INT(m->key->size, 48);
		dt_map_layout l;
		dt_map_layout_of(m, &l);
		CHECK_EQ_INT(l.bpf_map_type, BPF_MAP_TYPE_PERCPU_HASH);
		CHECK_EQ_INT(l.key_size, 48);
		CHECK_EQ_INT(l.value_size, sizeof(struct dt_agg_count));
		CHECK(!l.bucketed);
	}
	m = map_named(&r, "@h");
	if (m) {
		dt_map_layout l;
		dt_map_layout_of(m, &l);
		CHECK(l.bucketed && l.user_key_size == 8 && l.key_size == 16 && l.value_size == 8);
	}
	m = map_named(&r, "@l");
	CHECK(m && m->key == NULL && m->value->kind == DT_T_LHIST && m->value->lhist.step == 10);
	/* Strings widen to the larger of their uses, in keys and values. */
	m = map_named(&r, "@v");
	CHECK(m && !strcmp(tn(&r, m->key), "(int64, string[16])"));
	CHECK(m && !strcmp(tn(&r, m->value), "string[16]"));
	CHECK(r.p->uses_ustack_dwarf && r.p->probes[0]->uses_ustack_dwarf);
	CHECK(!r.p->probes[0]->pred_uses_ustack_dwarf);
	done(&r);
}

static void scalar_layout(void)
{
	checked r = check("BEGIN { @x = 1; @s = \"abc\"; }");
	const dt_map_sym *m = map_named(&r, "@x");
	dt_map_layout l;
	CHECK(m != NULL);
	if (m) {
		dt_map_layout_of(m, &l);
		CHECK_EQ_INT(l.bpf_map_type, BPF_MAP_TYPE_HASH);
		CHECK(l.key_size == 8 && l.user_key_size == 8 && l.value_size == 8 && !l.percpu);
		CHECK_EQ_INT(l.max_entries, DT_MAP_MAX_ENTRIES);
	}
	m = map_named(&r, "@s");
	if (m) {
		dt_map_layout_of(m, &l);
		CHECK_EQ_INT(l.value_size, 8); /* string[4] rounds up to 8 */
	}
	done(&r);
}

static void map_conflicts(void)
{
	checked r = check("BEGIN { @x = comm; @x = 1; }");
	CHECK_EQ_INT(r.rc, -EINVAL);
	CHECK(strstr(r.diag_text, "t:1:25-26: ERROR: the value type of @x is int64 here, but "
				  "string[16] before"));
	CHECK(strstr(r.diag_text, "t:1:14-18: NOTE: @x's value type was fixed here"));
	done(&r);
	r = check("BEGIN { @x[1] = 1; } END { @x = 2; }");
	CHECK(strstr(r.diag_text, "@x is used without a key here but with a key elsewhere"));
	done(&r);
	r = check("BEGIN { @c = count(); @c = sum(1); }");
	CHECK(strstr(r.diag_text, "the value type of @c is sum here, but count before"));
	done(&r);
}

static void read_before_assign_across_probes(void)
{
	checked r = check("interval:s:1 { printf(\"%d\\n\", @later[1]); } BEGIN { @later[2] = 5; }");
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.p->nevents == 1 && !strcmp(tn(&r, r.p->events[0].args), "(int64)"));
	done(&r);
	r = check("BEGIN { @a = @never; }");
	CHECK(strstr(r.diag_text, "@never is read but never assigned"));
	done(&r);
}

static void var_scope(void)
{
	checked r = check("BEGIN { $x = 1; $y = (comm, $x); } END { @z = $x; }");
	CHECK_EQ_INT(r.rc, -EINVAL);
	CHECK(strstr(r.diag_text, "t:1:47-49: ERROR: $x is used before it is assigned in this probe"));
	CHECK_EQ_INT(r.p->probes[0]->nvars, 2);
	CHECK_EQ_STR(tn(&r, r.p->probes[0]->vars[1]->type), "(string[16], int64)");
	CHECK_EQ_INT(r.p->probes[0]->vars[1]->id, 1);
	done(&r);
}

static void builtin_restrictions(void)
{
	static const struct {
		const char *prog, *msg;
	} cases[] = {
		{ "BEGIN { @ = retval; }", "retval is only available in uretprobe, kretprobe" },
		{ "kprobe:f { @ = retval; }", "retval is only available" },
		{ "uretprobe:/bin/sh:f { @ = arg0; }", "arg0 is only available in uprobe, kprobe, usdt and rawtracepoint" },
		{ "kprobe:f { @ = args.x; }", "args is only available in tracepoint, rawtracepoint, fentry, fexit and uprobe probes" },
		{ "profile:hz:99 { @ = func; }", "func is not available in profile probes" },
		{ "interval:s:1 { @ = func; }", "func is not available in interval probes" },
		{ "END { @ = func; }", "func is not available in END probes" },
		{ "tracepoint:a:b { @ = args.x; }", "tracefs not found" },
		/* Found by fuzz_codegen: the checker let arg6 … arg9 through to codegen, which
		 * failed with an internal error. */
		{ "kprobe:f { @ = arg6; }", "arg6 is not available" },
		{ "uprobe:/bin/sh:f { @ = arg9; }", "arg0 … arg5" },
	};
	for (size_t i = 0; i < DT_ARRAY_SIZE(cases); i++) {
		checked r = check(cases[i].prog);
		CHECK_EQ_INT(r.rc, -EINVAL);
		if (!strstr(r.diag_text, cases[i].msg))
			fprintf(stderr, "case %zu: %s\n", i, r.diag_text);
		CHECK(strstr(r.diag_text, cases[i].msg) != NULL);
		done(&r);
	}
	checked r = check("uretprobe:/bin/sh:f, kretprobe:g { @[func] = hist(retval); }");
	CHECK_EQ_INT(r.rc, 0);
	done(&r);
	r = check("kprobe:f { @ = arg5; }");
	CHECK_EQ_INT(r.rc, 0);
	done(&r);
}

static void printf_events(void)
{
	checked r = check("BEGIN { printf(\"%s %5d %llx %%\\n\", comm, pid, nsecs); time(); "
			  "print(1); printf(\"plain\\n\"); }");
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_INT(r.p->nevents, 4);
	const dt_event_desc *e = r.p->events;
	CHECK_EQ_INT(e[0].func, DT_F_PRINTF);
	CHECK_EQ_STR(e[0].fmt, "%s %5d %llx %%\n");
	CHECK_EQ_STR(tn(&r, e[0].args), "(string[16], uint64, uint64)");
	CHECK_EQ_INT(e[0].args->tuple.offsets[1], 16);
	CHECK_EQ_INT(e[0].args->size, 32);
	CHECK_EQ_INT(e[1].func, DT_F_TIME);
	CHECK_EQ_STR(e[1].fmt, "%H:%M:%S\n");
	CHECK_EQ_INT(e[2].func, DT_F_PRINT);
	CHECK_EQ_INT(e[3].args->size, 0);
	/* Each call knows its event. */
	CHECK_EQ_INT(r.p->probes[0]->body.v[2]->expr->call.event_id, 2);
	done(&r);
	r = check("BEGIN { printf(\"%d %s\\n\", comm, 1, 2); }");
	CHECK_EQ_INT(r.rc, -EINVAL);
	CHECK(strstr(r.diag_text, "printf conversion '%d' needs an integer, not string[16]"));
	done(&r);
}

static void ustack_dwarf_in_predicate(void)
{
	checked r = check("profile:hz:9 /ustack_dwarf == ustack_dwarf/ { @ = 1; } BEGIN { @ = 2; }");
	/* Stacks compare? They are not ints: an error, but the flags are still computed. */
	CHECK(r.p->probes[0]->uses_ustack_dwarf);
	CHECK(r.p->probes[0]->pred_uses_ustack_dwarf);
	CHECK(!r.p->probes[1]->uses_ustack_dwarf);
	done(&r);
}

static void periods_and_indexes(void)
{
	checked r = check("interval:ms:250, profile:hz:99 { } profile:us:100, software:faults:7 { }");
	CHECK_EQ_INT(r.rc, 0);
	dt_attach **a = r.p->probes[0]->attach;
	CHECK(a[0]->period_ns == 250000000ull);
	CHECK(a[1]->period_ns == 0);
	CHECK_EQ_INT(a[1]->index, 1);
	a = r.p->probes[1]->attach;
	CHECK(a[0]->period_ns == 100000ull);
	CHECK_EQ_INT(a[1]->index, 3);
	CHECK_EQ_STR(a[1]->target, "page-faults"); /* aliases become the perf name */
	CHECK_EQ_INT(r.p->probes[1]->index, 1);
	done(&r);
}

/* Every spelling of the event table passes the checker, with or without a period, and becomes
 * perf's name; each name and alias bpftrace accepts (src/probe_matcher.h) is one of them, with its
 * perf config and period. */
static void perf_events(void)
{
	static const struct {
		dt_provider p;
		const char *spelling, *name;
		uint64_t config, period;
	} want[] = {
		{ DT_P_SOFTWARE, "alignment-faults", "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS, 1 },
		{ DT_P_SOFTWARE, "bpf-output", "bpf-output", PERF_COUNT_SW_BPF_OUTPUT, 1 },
		{ DT_P_SOFTWARE, "context-switches", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1000 },
		{ DT_P_SOFTWARE, "cs", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1000 },
		{ DT_P_SOFTWARE, "cpu-clock", "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1000000 },
		{ DT_P_SOFTWARE, "cpu", "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1000000 },
		{ DT_P_SOFTWARE, "cpu-migrations", "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, 1 },
		{ DT_P_SOFTWARE, "migrations", "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, 1 },
		{ DT_P_SOFTWARE, "dummy", "dummy", PERF_COUNT_SW_DUMMY, 1 },
		{ DT_P_SOFTWARE, "emulation-faults", "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS, 1 },
		{ DT_P_SOFTWARE, "major-faults", "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 },
		{ DT_P_SOFTWARE, "minor-faults", "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, 100 },
		{ DT_P_SOFTWARE, "page-faults", "page-faults", PERF_COUNT_SW_PAGE_FAULTS, 100 },
		{ DT_P_SOFTWARE, "faults", "page-faults", PERF_COUNT_SW_PAGE_FAULTS, 100 },
		{ DT_P_SOFTWARE, "task-clock", "task-clock", PERF_COUNT_SW_TASK_CLOCK, 1000000 },
		{ DT_P_HARDWARE, "backend-stalls", "backend-stalls", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000 },
		{ DT_P_HARDWARE, "branch-instructions", "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000 },
		{ DT_P_HARDWARE, "branches", "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000 },
		{ DT_P_HARDWARE, "branch-misses", "branch-misses", PERF_COUNT_HW_BRANCH_MISSES, 100000 },
		{ DT_P_HARDWARE, "bus-cycles", "bus-cycles", PERF_COUNT_HW_BUS_CYCLES, 100000 },
		{ DT_P_HARDWARE, "cache-misses", "cache-misses", PERF_COUNT_HW_CACHE_MISSES, 1000000 },
		{ DT_P_HARDWARE, "cache-references", "cache-references", PERF_COUNT_HW_CACHE_REFERENCES, 1000000 },
		{ DT_P_HARDWARE, "cpu-cycles", "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, 1000000 },
		{ DT_P_HARDWARE, "cycles", "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, 1000000 },
		{ DT_P_HARDWARE, "frontend-stalls", "frontend-stalls", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000 },
		{ DT_P_HARDWARE, "instructions", "instructions", PERF_COUNT_HW_INSTRUCTIONS, 1000000 },
		{ DT_P_HARDWARE, "ref-cycles", "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, 1000000 },
	};
	size_t n = 0;

	for (size_t i = 0; i < DT_ARRAY_SIZE(want); i++) {
		const dt_perf_event *e = dt_perf_event_find(want[i].p, want[i].spelling);

		CHECK(e != NULL);
		if (!e)
			continue;
		CHECK_EQ_STR(e->name, want[i].name);
		CHECK_EQ_INT(e->type, want[i].p == DT_P_SOFTWARE ? PERF_TYPE_SOFTWARE
								 : PERF_TYPE_HARDWARE);
		CHECK_EQ_INT(e->config, want[i].config);
		CHECK_EQ_INT(e->default_period, want[i].period);
	}
	for (dt_provider p = DT_P_SOFTWARE; p <= DT_P_HARDWARE; p++) {
		const char *const *names = p == DT_P_SOFTWARE ? dt_software_event_names()
							      : dt_hardware_event_names();

		for (size_t i = 0; names[i]; i++, n++) {
			const char *prov = dt_provider_name(p);
			char *text = xasprintf("%s:%s { } %s:%s:1000 { }", prov, names[i], prov,
					       names[i]);
			checked r = check(text);

			CHECK_EQ_INT(r.rc, 0);
			CHECK_EQ_STR(r.diag_text, "");
			if (r.rc == 0) {
				const dt_attach *a = r.p->probes[0]->attach[0];
				const dt_attach *b = r.p->probes[1]->attach[0];

				CHECK_EQ_STR(a->target, dt_perf_event_find(p, names[i])->name);
				CHECK_EQ_STR(b->target, a->target);
				CHECK_EQ_INT(a->rate, 0);
				CHECK_EQ_INT(b->rate, 1000);
			}
			done(&r);
			free(text);
		}
	}
	/* The table holds exactly bpftrace's spellings, and perf's `migrations`. */
	CHECK_EQ_INT(n, DT_ARRAY_SIZE(want));
	/* An event of the other provider is not one of this provider's. */
	CHECK(dt_perf_event_find(DT_P_HARDWARE, "cs") == NULL);
	CHECK(dt_perf_event_find(DT_P_SOFTWARE, "cycles") == NULL);
	CHECK(dt_perf_event_find(DT_P_SOFTWARE, NULL) == NULL);
	checked r = check("software:cycles { }");
	CHECK(r.rc != 0);
	CHECK(strstr(r.diag_text, "unknown software event 'cycles'"));
	done(&r);
}

static bool existing(void *ctx, const char *name, const dt_type **key, const dt_type **value)
{
	if (strcmp(name, "@old"))
		return false;
	*key = dt_type_str(16);
	*value = dt_type_int(true, 8);
	return true;
}

static void existing_maps(void)
{
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent", .existing_map = existing };
	checked r = check_opts("BEGIN { printf(\"%d\\n\", @old[\"x\"]); }", &o);
	CHECK_EQ_INT(r.rc, 0);
	done(&r);
	r = check_opts("BEGIN { @old[1] = 1; }", &o);
	CHECK(strstr(r.diag_text, "the key type of @old is int64 here, but string[16] before"));
	done(&r);
}

static int expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n)
{
	*names = malloc(2 * sizeof(char *));
	(*names)[0] = strdup("vfs_read");
	(*names)[1] = strdup("vfs_readv");
	*n = 2;
	return 0;
}

static void wildcard_expansion(void)
{
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent", .expand = expand };
	checked r = check_opts("BEGIN { } kprobe:vfs_read* { @[func] = count(); }", &o);
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_INT(r.p->probes[1]->nattach, 2);
	CHECK_EQ_STR(r.p->probes[1]->attach[1]->func, "vfs_readv");
	CHECK_EQ_STR(r.p->probes[1]->attach[1]->text, "kprobe:vfs_readv");
	CHECK_EQ_INT(r.p->probes[1]->attach[1]->index, 2);
	done(&r);
	r = check("kprobe:vfs_* { }");
	CHECK(strstr(r.diag_text, "wildcards are not supported here"));
	done(&r);
}

static void positional_params(void)
{
	const char *params[] = { "10", "hello" };
	dt_check_opts o = { .sz = sizeof(o), .tracefs = "/nonexistent", .params = params,
			    .nparams = 2 };
	checked r = check_opts("BEGIN { @a = $1 * 2; @b[$2] = 1; }", &o);
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_STR(tn(&r, map_named(&r, "@b")->key), "string[6]");
	const dt_expr *v = r.p->probes[0]->body.v[0]->assign.value;
	CHECK(v->bin.l->kind == DT_E_INT && v->bin.l->i.value == 10);
	done(&r);
}

static void hist_buckets(void)
{
	CHECK_EQ_INT(dt_hist_bucket(-5, 0), 0);
	CHECK_EQ_INT(dt_hist_bucket(0, 0), 1);
	CHECK_EQ_INT(dt_hist_bucket(1, 0), 2);
	CHECK_EQ_INT(dt_hist_bucket(2, 0), 3);
	CHECK_EQ_INT(dt_hist_bucket(3, 0), 3);
	CHECK_EQ_INT(dt_hist_bucket(4, 0), 4);
	CHECK_EQ_INT(dt_hist_bucket(INT64_MAX, 0), 64);
	CHECK(dt_hist_bucket(INT64_MAX, 0) < DT_HIST_BUCKETS);
	CHECK_EQ_INT(dt_hist_nbuckets(0), 65);
	/* hist(v, bits): bpftrace's own example, 225 = 0b11100001 with bits 2 is bucket 28. */
	CHECK_EQ_INT(dt_hist_bucket(225, 2), 28);
	CHECK_EQ_INT(dt_hist_bucket(-1, 3), 0);
	CHECK_EQ_INT(dt_hist_bucket(0, 3), 1);
	CHECK_EQ_INT(dt_hist_bucket(15, 3), 16);  /* one value per bucket below 2^(bits+1) */
	CHECK_EQ_INT(dt_hist_bucket(16, 3), 17);
	CHECK_EQ_INT(dt_hist_bucket(17, 3), 17);  /* [16, 18) */
	CHECK_EQ_INT(dt_hist_bucket(18, 3), 18);
	CHECK_EQ_INT(dt_hist_nbuckets(5), 59 * 32 + 1); /* (64 - bits) << bits, + 1 */
	CHECK(dt_hist_bucket(INT64_MAX, 5) < dt_hist_nbuckets(5));
	/* Each bucket starts where the one before ends, for every bits. */
	for (uint32_t bits = 0; bits <= 5; bits++)
		for (int64_t v = 0; v < 5000; v++) {
			uint32_t i = dt_hist_bucket(v, bits);
			CHECK(dt_hist_bucket_start(i, bits) <= (uint64_t)v);
			CHECK((uint64_t)v < dt_hist_bucket_start(i + 1, bits));
		}
	CHECK_EQ_INT(dt_hist_bucket_start(28, 2), 224);
	CHECK_EQ_INT(dt_hist_bucket_start(dt_hist_nbuckets(2), 2) == (uint64_t)1 << 63, 1);
	CHECK_EQ_INT(dt_lhist_nbuckets(0, 100, 10), 12);
	CHECK_EQ_INT(dt_lhist_nbuckets(0, 95, 10), 12);
	CHECK_EQ_INT(dt_lhist_nbuckets(-10, 10, 5), 6);
	CHECK_EQ_INT(dt_lhist_nbuckets(10, 0, 5), 0);
}

static void type_names(void)
{
	dt_arena *a = dt_arena_new();
	CHECK_EQ_STR(dt_type_name(a, dt_type_int(true, 8)), "int64");
	CHECK_EQ_STR(dt_type_name(a, dt_type_int(false, 4)), "uint32");
	CHECK_EQ_STR(dt_type_name(a, dt_type_str(64)), "string[64]");
	CHECK(dt_type_str(64) == dt_type_str(64));
	CHECK(dt_type_equal(dt_type_str(16), dt_type_str(16)));
	CHECK(!dt_type_equal(dt_type_str(16), dt_type_str(64)));
	CHECK(!dt_type_equal(dt_type_int(true, 8), dt_type_int(false, 8)));
	dt_arena_free(a);
}

/* bpftrace reads a missing key as 0, so a map may be built from itself. */
static void self_referencing_map(void)
{
	checked r = check("BEGIN { @x = @x + 1; @y[1] = 3 * @y[1] + 2; @z = @z; }");
	CHECK_EQ_INT(r.rc, -EINVAL); /* @z = @z has nothing to decide its type */
	CHECK(strstr(r.diag_text, "@z is read but never assigned") != NULL ||
	      strstr(r.diag_text, "@z is never assigned") != NULL);
	CHECK_EQ_INT(dt_diags_error_count(r.d), 1); /* nothing about @x or @y */
	done(&r);
	r = check("BEGIN { @x = @x + 1; @y[1] = 3 * @y[1] + 2; }");
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_STR(tn(&r, map_named(&r, "@x")->value), "int64");
	done(&r);
}

/* A swapped pair of letters is one typo. */
static void typo_hints(void)
{
	checked r = check("BEGIN { prinft(\"x\"); }");
	CHECK(strstr(r.diag_text, "did you mean 'printf'?") != NULL);
	done(&r);
}

/* DT_MAX_MAPS maps load (tests/runtime/scale.test runs 2,500); one more is an error at the map
 * that goes past the limit, with its line. */
static void map_count_limit(void)
{
	for (int extra = 0; extra <= 1; extra++) {
		int n = DT_MAX_MAPS + extra;
		size_t cap = (size_t)n * 24 + 64, len = 0;
		char *text = xmalloc(cap);

		len += (size_t)snprintf(text + len, cap - len, "BEGIN {\n");
		for (int i = 0; i < n; i++)
			len += (size_t)snprintf(text + len, cap - len, "@m%d = %d;\n", i, i);
		snprintf(text + len, cap - len, "}\n");
		checked r = check(text);
		if (!extra) {
			CHECK_EQ_INT(r.rc, 0);
			CHECK_EQ_INT(r.p->nmaps, DT_MAX_MAPS);
		} else {
			char want[128];

			snprintf(want, sizeof(want), "t:%d:1-7: ERROR: this script uses %d maps; a script "
				 "can use at most %d\n@m%d = %d;\n~~~~~~\n", DT_MAX_MAPS + 2,
				 DT_MAX_MAPS + 1, DT_MAX_MAPS, DT_MAX_MAPS, DT_MAX_MAPS);
			CHECK(r.rc != 0);
			CHECK(strstr(r.diag_text, want) != NULL);
		}
		done(&r);
		free(text);
	}
}

int main(void)
{
	T_RUN(map_types);
	T_RUN(scalar_layout);
	T_RUN(map_conflicts);
	T_RUN(read_before_assign_across_probes);
	T_RUN(var_scope);
	T_RUN(builtin_restrictions);
	T_RUN(printf_events);
	T_RUN(ustack_dwarf_in_predicate);
	T_RUN(periods_and_indexes);
	T_RUN(existing_maps);
	T_RUN(wildcard_expansion);
	T_RUN(positional_params);
	T_RUN(hist_buckets);
	T_RUN(type_names);
	T_RUN(self_referencing_map);
	T_RUN(typo_hints);
	T_RUN(perf_events);
	T_RUN(map_count_limit);
	return t_done();
}

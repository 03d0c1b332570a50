/* gen.c — a structure-aware script generator for the fuzzers. It reads the fuzz input as a
 * stream of choices in the language's grammar (each byte picks among the alternatives at one
 * point; an exhausted input always picks the first, simplest one, so every input ends) and
 * writes a script that the checker accepts, most of the time. To get there it tracks what the
 * checker tracks: each map's key and value types from their first use, each probe's scratch
 * variables, which builtins the probe's attach points allow, the fields of the fake tracefs's
 * tracepoints (fuzz_env.h); and it only writes uses that agree with them. One input in six
 * also takes a wrong turn now and then on purpose (a type mismatch, a builtin the probe does
 * not have, a bad argument), so the checker's errors are reached from deep, otherwise valid
 * programs. A byte mutation of the input becomes a change of operator, type, statement or
 * probe rather than a syntax error, which is what lets the fuzzers reach the checker's far
 * corners and code generation.
 *
 * Every compound expression is written in parentheses: the text then means what the generator
 * meant whatever the context (a `/` in a predicate, a `>` in a `<` block), and the grammar's
 * corners are left to the byte-level fuzzer. */
#include "tests/fuzz/gen.h"
#include "tests/fuzz/choices.h"
#include "tests/fuzz/fuzz_env.h"
#include "lang/lang_internal.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the fake tracefs */

enum kind { K_INT, K_STR, K_STACK, K_KSYM, K_USYM, K_TUPLE, K_NONE };

typedef struct tp_field {
	const char *name;
	enum kind k; /* K_INT, K_STR, or K_NONE when the checker does not support it */
	uint32_t offset, size;
} tp_field;

typedef struct tp_event {
	char *name; /* "subsys:event" */
	tp_field *f;
	uint32_t nf;
} tp_event;

static tp_event *tps;
static uint32_t ntps;

static int cmp_event(const void *a, const void *b)
{
	return strcmp(((const tp_event *)a)->name, ((const tp_event *)b)->name);
}

/* Reads every format of the fake tracefs once, through the checker's own reader, so the
 * generator's idea of a field is the checker's. */
static void load_tracepoints(void)
{
	static dt_arena *a;
	char path[4096];
	DIR *sd, *ed;
	struct dirent *s, *e;

	if (a)
		return;
	a = dt_arena_new();
	snprintf(path, sizeof(path), "%s/events", fuzz_tracefs());
	sd = opendir(path);
	while (sd && (s = readdir(sd))) {
		char sub[4608];

		if (s->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, s->d_name);
		ed = opendir(sub);
		while (ed && (e = readdir(ed))) {
			dt_type *rec;

			if (e->d_name[0] == '.' ||
			    dt_tracefs_record(a, fuzz_tracefs(), s->d_name, e->d_name, &rec))
				continue;
			tps = xrealloc(tps, (ntps + 1) * sizeof(*tps));
			tp_event *ev = &tps[ntps++];
			ev->name = dt_arena_printf(a, "%s:%s", s->d_name, e->d_name);
			ev->nf = rec->record.nfields;
			ev->f = dt_arena_alloc(a, sizeof(tp_field) * (ev->nf + 1));
			for (uint32_t i = 0; i < ev->nf; i++) {
				const dt_tp_field *f = &rec->record.fields[i];
				bool int_ok = !f->is_array && (f->size == 1 || f->size == 2 ||
							       f->size == 4 || f->size == 8);

				ev->f[i] = (tp_field){ .name = f->name, .offset = f->offset,
						       .size = f->size };
				ev->f[i].k = f->is_string ? K_STR : int_ok ? K_INT : K_NONE;
			}
		}
		if (ed)
			closedir(ed);
	}
	if (sd)
		closedir(sd);
	if (ntps)
		qsort(tps, ntps, sizeof(*tps), cmp_event);
}

/* ---------------------------------------------------------------- choices and output */

typedef struct gty {
	uint8_t k;            /* enum kind */
	uint8_t stack, mode;  /* K_STACK: 0 kstack, 1 ustack, 2 ustack_dwarf; 0 default, 1 perf, 2 raw */
	uint16_t depth;       /* K_STACK: 0 is the default depth */
	uint8_t n, el[3];     /* K_TUPLE: element kinds, each K_INT, K_STR, K_KSYM or K_USYM */
} gty;

enum agg { A_NONE, A_COUNT, A_SUM, A_AVG, A_MIN, A_MAX, A_STATS, A_HIST, A_LHIST, A__N };
static const char *const agg_names[A__N] = {
	[A_COUNT] = "count", [A_SUM] = "sum", [A_AVG] = "avg", [A_MIN] = "min", [A_MAX] = "max",
	[A_STATS] = "stats", [A_HIST] = "hist", [A_LHIST] = "lhist",
};

#define NMAPS 6
static const char *const map_names[NMAPS] = { "@", "@a", "@b", "@c", "@d", FUZZ_LIVE_MAP };

typedef struct gmap {
	bool shaped;  /* the key shape is fixed */
	uint8_t nkeys;
	gty key[3];
	bool valued;  /* the value is fixed: a type, or an aggregation */
	uint8_t agg;
	gty value;
	int64_t lhist[3];
} gmap;

#define NVARS 5
static const char *const var_names[NVARS] = { "$a", "$b", "$c", "$d", "$e" };

/* What every attach point of the probe allows, as the checker's all_attach() sees it. */
enum { CAP_ARG = 1, CAP_RET = 2, CAP_XPROBE = 4, CAP_FUNC = 8, CAP_ARGS = 16 };

typedef struct gen {
	choices in;
	char *out;
	size_t len, cap;
	bool chaos;      /* this input may take wrong turns */
	int budget;      /* expression nodes and statements left: bounds the script */
	gmap maps[NMAPS];
	bool var_set[NVARS];
	gty vars[NVARS];
	unsigned caps;
	const tp_event *tp; /* the first attached tracepoint (its fields are `args`) */
	const tp_event *tps_attached[8];
	unsigned ntp_attached;
	int unroll_depth;
	bool cstruct;       /* the script defines FUZZ_CSTRUCT_DEF */
} gen;

/* The next choice (choices.h). */
static unsigned choose(gen *g, unsigned n)
{
	return pick(&g->in, n);
}

/* A wrong turn, in chaos inputs only, about one decision in twelve. */
static bool wrong(gen *g)
{
	return g->chaos && choose(g, 12) == 11;
}

static void put(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (g->len + (size_t)n + 1 > g->cap) {
		g->cap = (g->len + (size_t)n + 1) * 2;
		g->out = xrealloc(g->out, g->cap);
	}
	va_start(ap, fmt);
	vsnprintf(g->out + g->len, g->cap - g->len, fmt, ap);
	va_end(ap);
	g->len += (size_t)n;
}

/* ---------------------------------------------------------------- types */

static gty ty(enum kind k)
{
	return (gty){ .k = (uint8_t)k };
}

static bool same_type(const gty *a, const gty *b)
{
	if (a->k != b->k)
		return false;
	if (a->k == K_STACK)
		return a->stack == b->stack && a->mode == b->mode &&
		       (a->depth ? a->depth : DT_STACK_DEFAULT_DEPTH) ==
			       (b->depth ? b->depth : DT_STACK_DEFAULT_DEPTH);
	if (a->k == K_TUPLE)
		return a->n == b->n && !memcmp(a->el, b->el, a->n);
	return true; /* ints and strings widen, ksym and usym are one type each */
}

static gty rand_stack(gen *g)
{
	static const uint16_t depths[] = { 0, 1, 5, 20, 127, 1024 };
	gty t = ty(K_STACK);

	t.stack = (uint8_t)choose(g, 3);
	t.mode = (uint8_t)choose(g, 3);
	t.depth = depths[choose(g, DT_ARRAY_SIZE(depths))];
	return t;
}

static enum kind rand_scalar(gen *g)
{
	static const uint8_t k[] = { K_INT, K_STR, K_INT, K_KSYM, K_STR, K_USYM };
	return k[choose(g, DT_ARRAY_SIZE(k))];
}

/* A value type: what a variable, a map value, a map key or print() can hold. */
static gty rand_type(gen *g, bool tuples)
{
	switch (choose(g, tuples ? 8 : 7)) {
	case 0: case 1: case 2: return ty(K_INT);
	case 3: case 4: return ty(K_STR);
	case 5: return rand_stack(g);
	case 6: return ty(choose(g, 2) ? K_USYM : K_KSYM);
	default: {
		gty t = ty(K_TUPLE);
		t.n = (uint8_t)(2 + choose(g, 2));
		for (unsigned i = 0; i < t.n; i++)
			t.el[i] = (uint8_t)rand_scalar(g);
		return t;
	}
	}
}

/* ---------------------------------------------------------------- expressions */

static void expr(gen *g, gty t, int depth);

static void int_literal(gen *g, bool nonzero)
{
	static const char *const lits[] = {
		"1", "0", "2", "42", "-1", "255", "4096", "0x10", "0xffffffff", "0x7fffffffffffffff",
		"-9223372036854775808", "18446744073709551615", "1e3", "1_000", "017", "1e18", "7",
	};
	unsigned i = choose(g, DT_ARRAY_SIZE(lits) + 1);

	if (i == DT_ARRAY_SIZE(lits)) {
		put(g, "%u", choose(g, 1000) + (nonzero ? 1 : 0));
		return;
	}
	if (nonzero && !strcmp(lits[i], "0"))
		i = 0;
	put(g, "%s", lits[i]);
}

static void str_literal(gen *g)
{
	static const char *const lits[] = {
		"\"a\"", "\"\"", "\"hello world\"", "\"tab\\there\"", "\"nl\\n\"", "\"\\x41\\102\"",
		"\"q\\\"uote\\\\\"", "\"%d %s\"",
		"\"a string longer than the sixty-four bytes of a default string slot, by far\"",
	};
	put(g, "%s", lits[choose(g, DT_ARRAY_SIZE(lits))]);
}

static void stack_builtin(gen *g, const gty *t)
{
	static const char *const names[] = { "kstack", "ustack", "ustack_dwarf" };
	static const char *const modes[] = { "bpftrace", "perf", "raw" };
	const char *n = names[t->stack % 3];

	if (!t->mode && !t->depth) {
		put(g, choose(g, 2) ? "%s()" : "%s", n);
		return;
	}
	if (!t->mode && choose(g, 2)) {
		put(g, "%s(%u)", n, t->depth);
		return;
	}
	if (!t->depth) {
		put(g, "%s(%s)", n, modes[t->mode % 3]);
		return;
	}
	put(g, "%s(%s, %u)", n, modes[t->mode % 3], t->depth);
}

static int find_var(gen *g, const gty *t)
{
	unsigned start = choose(g, NVARS);

	for (unsigned k = 0; k < NVARS; k++) {
		unsigned i = (start + k) % NVARS;
		if (g->var_set[i] && same_type(&g->vars[i], t))
			return (int)i;
	}
	return -1;
}

static void map_keys(gen *g, const gmap *m, int depth)
{
	if (!m->nkeys)
		return;
	put(g, "[");
	for (unsigned i = 0; i < m->nkeys; i++) {
		if (i)
			put(g, ", ");
		expr(g, m->key[i], depth);
	}
	put(g, "]");
}

/* A map whose (plain, not aggregated) value is of type `t`, or -1. A key may read a map whose
 * key reads a map…: at depth 0 and below only maps without keys, which bounds that (string keys
 * of string-keyed lookups are slow to compile). */
static int find_map(gen *g, const gty *t, int depth)
{
	unsigned start = choose(g, NMAPS);

	for (unsigned k = 0; k < NMAPS; k++) {
		unsigned i = (start + k) % NMAPS;
		const gmap *m = &g->maps[i];
		if (m->valued && !m->agg && same_type(&m->value, t) && (depth > 0 || !m->nkeys))
			return (int)i;
	}
	return -1;
}

static void map_read(gen *g, int mi, int depth)
{
	put(g, "%s", map_names[mi]);
	map_keys(g, &g->maps[mi], depth);
}

/* A tracepoint field of kind `k` that every attached tracepoint has at the same place. */
static const tp_field *find_field(gen *g, enum kind k)
{
	if (!(g->caps & CAP_ARGS) || !g->tp || !g->tp->nf)
		return NULL;
	unsigned start = choose(g, g->tp->nf);
	for (unsigned n = 0; n < g->tp->nf; n++) {
		const tp_field *f = &g->tp->f[(start + n) % g->tp->nf];
		bool shared = f->k == k;
		for (unsigned j = 0; shared && j < g->ntp_attached; j++) {
			const tp_event *ev = g->tps_attached[j];
			bool found = false;
			for (uint32_t x = 0; x < ev->nf; x++)
				if (!strcmp(ev->f[x].name, f->name))
					found = ev->f[x].offset == f->offset && ev->f[x].size == f->size;
			shared = found;
		}
		if (shared)
			return f;
	}
	return NULL;
}

static void field(gen *g, const tp_field *f)
{
	put(g, choose(g, 2) ? "args->%s" : "args.%s", f->name);
}

static void int_builtin(gen *g)
{
	static const char *const always[] = {
		"pid", "tid", "uid", "gid", "nsecs", "elapsed", "cpu", "cgroup", "rand", "curtask",
	};
	static const char *const xprobe[] = {
		"wall", "oncpu", "offcpu", "runq", "blocked", "iowait", "nswitch",
	};
	unsigned c = choose(g, 4);

	if (wrong(g)) {
		/* One the probe may not have. */
		static const char *const any[] = { "arg0", "arg9", "retval", "wall", "args.x", "func + 1" };
		put(g, "%s", any[choose(g, DT_ARRAY_SIZE(any))]);
		return;
	}
	if (c == 1 && (g->caps & CAP_ARG)) {
		put(g, "arg%u", choose(g, DT_ARG_REGS));
		return;
	}
	if (c == 2 && (g->caps & CAP_RET)) {
		put(g, "retval");
		return;
	}
	if (c == 3 && (g->caps & CAP_XPROBE)) {
		put(g, "%s", xprobe[choose(g, DT_ARRAY_SIZE(xprobe))]);
		return;
	}
	put(g, "%s", always[choose(g, DT_ARRAY_SIZE(always))]);
}

static const char *const int_ops[] = {
	"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<", "<=",
	">", ">=",
};

/* C types: integer casts, sizeof/offsetof, and members read through a cast to the script's
 * struct (an int member, the bitfield, an array element, the anonymous struct's member). */
static void c_int_expr(gen *g, unsigned c, int depth)
{
	static const char *const casts[] = { "uint8", "int8", "uint16", "int16", "uint32",
					     "int32", "uint64", "int64" };
	static const char *const members[] = { "->a", "->b", "->c[0]", "->c[1]", "->d" };
	if (c == 14) {
		put(g, "((%s)", casts[choose(g, DT_ARRAY_SIZE(casts))]);
		expr(g, ty(K_INT), depth - 1);
		put(g, ")");
	} else if (c == 15 || !g->cstruct) {
		if (choose(g, 2)) {
			put(g, "sizeof(");
			expr(g, ty(K_INT), depth - 1);
			put(g, ")");
		} else {
			put(g, "sizeof(%s)", g->cstruct && choose(g, 2) ? FUZZ_CSTRUCT
						 : casts[choose(g, DT_ARRAY_SIZE(casts))]);
		}
	} else if (choose(g, 4) == 3) {
		put(g, "offsetof(" FUZZ_CSTRUCT ", %s)", wrong(g) ? "nosuch" : "c");
	} else {
		put(g, "((" FUZZ_CSTRUCT " *)");
		expr(g, ty(K_INT), depth - 1);
		put(g, ")%s", members[choose(g, DT_ARRAY_SIZE(members))]);
	}
}

static void int_expr(gen *g, int depth)
{
	unsigned c = depth > 0 && g->budget > 0 ? choose(g, 17) : choose(g, 7);
	const tp_field *f;
	int i;

	g->budget--;
	switch (c) {
	case 1:
		int_builtin(g);
		return;
	case 2:
		if ((i = find_var(g, &(gty){ .k = K_INT })) >= 0) {
			put(g, "%s", var_names[i]);
			return;
		}
		break;
	case 3:
		if ((i = find_map(g, &(gty){ .k = K_INT }, depth)) >= 0) {
			map_read(g, i, depth - 1);
			return;
		}
		break;
	case 4:
		if ((f = find_field(g, K_INT))) {
			field(g, f);
			return;
		}
		break;
	case 5:
		put(g, FUZZ_PARAM_INT);
		return;
	case 6:
		int_literal(g, false);
		return;
	case 7: case 8: case 9: {
		unsigned op = choose(g, DT_ARRAY_SIZE(int_ops));
		bool divides = !strcmp(int_ops[op], "/") || !strcmp(int_ops[op], "%");
		put(g, "(");
		expr(g, ty(K_INT), depth - 1);
		put(g, " %s ", int_ops[op]);
		if (divides && !wrong(g))
			int_literal(g, true); /* never a literal 0: "division by zero" */
		else
			expr(g, ty(K_INT), depth - 1);
		put(g, ")");
		return;
	}
	case 10: {
		static const char *const un[] = { "-", "!", "~" };
		put(g, "%s(", un[choose(g, 3)]);
		expr(g, ty(K_INT), depth - 1);
		put(g, ")");
		return;
	}
	case 11:
		/* Strings compare with == and != only. */
		put(g, "(");
		expr(g, ty(K_STR), depth - 1);
		put(g, choose(g, 2) ? " == " : " != ");
		expr(g, ty(K_STR), depth - 1);
		put(g, ")");
		return;
	case 12:
		if ((i = find_var(g, &(gty){ .k = K_INT })) >= 0) {
			static const char *const fmt[] = { "(%s++)", "(%s--)", "(++%s)", "(--%s)" };
			put(g, fmt[choose(g, 4)], var_names[i]);
			return;
		}
		break;
	case 14: case 15: case 16:
		c_int_expr(g, c, depth);
		return;
	case 13:
		put(g, "(");
		expr(g, ty(K_INT), depth - 1);
		put(g, " ? ");
		expr(g, ty(K_INT), depth - 1);
		put(g, " : ");
		expr(g, ty(K_INT), depth - 1);
		put(g, ")");
		return;
	}
	int_literal(g, false);
}

static void str_expr(gen *g, int depth)
{
	unsigned c = depth > 0 && g->budget > 0 ? choose(g, 10) : choose(g, 7);
	const tp_field *f;
	int i;

	g->budget--;
	switch (c) {
	case 1:
		put(g, "comm");
		return;
	case 2:
		if ((g->caps & CAP_FUNC) || wrong(g)) {
			put(g, "func");
			return;
		}
		put(g, "probe");
		return;
	case 3:
		if ((i = find_var(g, &(gty){ .k = K_STR })) >= 0) {
			put(g, "%s", var_names[i]);
			return;
		}
		break;
	case 4:
		if ((i = find_map(g, &(gty){ .k = K_STR }, depth)) >= 0) {
			map_read(g, i, depth - 1);
			return;
		}
		break;
	case 5:
		if ((f = find_field(g, K_STR))) {
			field(g, f);
			return;
		}
		break;
	case 6:
		put(g, FUZZ_PARAM_STR);
		return;
	case 7: case 8: {
		static const char *const lens[] = { "1", "8", "16", "63", "64", "200" };
		put(g, "str(");
		expr(g, ty(choose(g, 2) ? K_STR : K_INT), depth - 1);
		if (choose(g, 2)) {
			put(g, ", ");
			if (wrong(g))
				put(g, "0");
			else if (choose(g, 4))
				put(g, "%s", lens[choose(g, DT_ARRAY_SIZE(lens))]);
			else
				int_builtin(g); /* a length known at run time only */
		}
		put(g, ")");
		return;
	}
	case 9:
		put(g, "(");
		expr(g, ty(K_INT), depth - 1);
		put(g, " ? ");
		expr(g, ty(K_STR), depth - 1);
		put(g, " : ");
		expr(g, ty(K_STR), depth - 1);
		put(g, ")");
		return;
	}
	str_literal(g);
}

/* Stacks, ksym/usym and tuples: the builtin or call that makes one, a variable or map that
 * holds one, or a conditional between two. */
static void other_expr(gen *g, const gty *t, int depth)
{
	unsigned c = choose(g, depth > 0 && g->budget > 0 ? 4 : 3);
	int i;

	g->budget--;
	if (c == 1 && (i = find_var(g, t)) >= 0) {
		put(g, "%s", var_names[i]);
		return;
	}
	if (c == 2 && (i = find_map(g, t, depth)) >= 0) {
		map_read(g, i, depth - 1);
		return;
	}
	if (c == 3) {
		put(g, "(");
		expr(g, ty(K_INT), depth - 1);
		put(g, " ? ");
		expr(g, *t, depth - 1);
		put(g, " : ");
		expr(g, *t, depth - 1);
		put(g, ")");
		return;
	}
	switch (t->k) {
	case K_STACK:
		stack_builtin(g, t);
		return;
	case K_KSYM: case K_USYM:
		put(g, t->k == K_KSYM ? "ksym(" : "usym(");
		expr(g, ty(K_INT), depth - 1);
		put(g, ")");
		return;
	default:
		put(g, "(");
		for (unsigned e = 0; e < t->n; e++) {
			if (e)
				put(g, ", ");
			expr(g, ty(t->el[e]), depth - 1);
		}
		put(g, ")");
		return;
	}
}

/* An expression of type `t`; a wrong turn writes one of another type. */
static void expr(gen *g, gty t, int depth)
{
	if (wrong(g))
		t = rand_type(g, true);
	if (t.k == K_INT)
		int_expr(g, depth);
	else if (t.k == K_STR)
		str_expr(g, depth);
	else
		other_expr(g, &t, depth);
}

/* ---------------------------------------------------------------- statements */

static void stmts(gen *g, int depth);

static void block(gen *g, int depth)
{
	put(g, "{ ");
	stmts(g, depth);
	put(g, "} ");
}

/* Picks a map for a plain store of a value and the value's type (a new one on first use).
 * -1 when every map holds an aggregation. */
static int map_for_value(gen *g, gty *value)
{
	unsigned start = choose(g, NMAPS);

	for (unsigned k = 0; k < NMAPS; k++) {
		unsigned i = (start + k) % NMAPS;
		gmap *m = &g->maps[i];
		if (m->valued && m->agg && !wrong(g))
			continue;
		*value = m->valued ? m->value : rand_type(g, true);
		return (int)i;
	}
	return -1;
}

/* After the statement that stores it: a map's value is readable from the next one on. */
static void set_value(gmap *m, gty t)
{
	if (!m->valued) {
		m->valued = true;
		m->value = t;
	}
}

/* Fixes a map's key shape on first use: none, or one to three keys. */
static void shape(gen *g, gmap *m)
{
	if (m->shaped)
		return;
	m->shaped = true;
	m->nkeys = (uint8_t)choose(g, 4);
	for (unsigned i = 0; i < m->nkeys; i++) {
		/* Ints and strings most of the time; stacks (the profiler's key) and tuples too. */
		unsigned c = choose(g, 6);
		m->key[i] = c == 4 ? rand_stack(g) : c == 5 ? rand_type(g, true) : ty(rand_scalar(g));
	}
}

static void map_target(gen *g, int mi, int depth)
{
	shape(g, &g->maps[mi]);
	put(g, "%s", map_names[mi]);
	map_keys(g, &g->maps[mi], depth);
}

static void assign_var(gen *g, int depth)
{
	unsigned i = choose(g, NVARS);
	gty t = g->var_set[i] ? g->vars[i] : rand_type(g, true);

	put(g, "%s = ", var_names[i]);
	expr(g, t, depth);
	put(g, "; ");
	/* Set only now: the value cannot read the variable it creates. */
	g->var_set[i] = true;
	g->vars[i] = t;
}

static void assign_map(gen *g, int depth)
{
	gty v;
	int mi = map_for_value(g, &v);

	if (mi < 0) {
		assign_var(g, depth);
		return;
	}
	map_target(g, mi, depth - 1);
	put(g, " = ");
	expr(g, v, depth);
	put(g, "; ");
	set_value(&g->maps[mi], v);
}

static void assign_agg(gen *g, int depth)
{
	unsigned start = choose(g, NMAPS - 1);
	int mi = -1;

	/* @live holds strings: never an aggregation. */
	for (unsigned k = 0; k < NMAPS - 1 && mi < 0; k++) {
		unsigned i = (start + k) % (NMAPS - 1);
		if (!g->maps[i].valued || g->maps[i].agg || wrong(g))
			mi = (int)i;
	}
	if (mi < 0) {
		assign_var(g, depth);
		return;
	}
	gmap *m = &g->maps[mi];
	static const int64_t lhs[][3] = {
		{ 0, 100, 10 }, { -10, 10, 1 }, { 0, 1000000, 1000 }, { 1, 2, 1 },
	};
	unsigned agg = m->valued ? m->agg : A_COUNT + choose(g, A__N - A_COUNT);
	const int64_t *lh = m->valued ? m->lhist : lhs[choose(g, DT_ARRAY_SIZE(lhs))];

	map_target(g, mi, depth - 1);
	if (agg == A_COUNT) {
		put(g, " = count(); ");
	} else {
		put(g, " = %s(", agg_names[agg ? agg : A_SUM]);
		expr(g, ty(K_INT), depth);
		if (agg == A_LHIST && wrong(g))
			put(g, ", 10, 0, 0");
		else if (agg == A_LHIST)
			put(g, ", %lld, %lld, %lld", (long long)lh[0], (long long)lh[1],
			    (long long)lh[2]);
		put(g, "); ");
	}
	if (!m->valued) {
		m->valued = true;
		m->agg = (uint8_t)agg;
		memcpy(m->lhist, lh, sizeof(m->lhist));
	}
}

/* `x op= e`, `x++`, `--x` on an integer variable or map. */
static void update(gen *g, int depth)
{
	static const char *const ops[] = { "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=",
					   ">>=" };
	int vi = find_var(g, &(gty){ .k = K_INT });
	int mi = -1;

	if (vi < 0 || choose(g, 2)) {
		unsigned start = choose(g, NMAPS - 1);
		for (unsigned k = 0; k < NMAPS - 1 && mi < 0; k++) {
			unsigned i = (start + k) % (NMAPS - 1);
			gmap *m = &g->maps[i];
			if (!m->valued || (!m->agg && m->value.k == K_INT) || wrong(g))
				mi = (int)i;
		}
	}
	if (vi < 0 && mi < 0) {
		assign_var(g, depth);
		return;
	}
	unsigned c = choose(g, 4);
	if (c == 0) {
		if (mi >= 0)
			map_target(g, mi, depth - 1);
		else
			put(g, "%s", var_names[vi]);
		unsigned op = choose(g, DT_ARRAY_SIZE(ops));
		put(g, " %s ", ops[op]);
		if (op == 3 || op == 4)
			int_literal(g, !wrong(g));
		else
			expr(g, ty(K_INT), depth);
		put(g, "; ");
	} else {
		put(g, "%s", c == 1 ? "++" : c == 2 ? "--" : "");
		if (mi >= 0)
			map_target(g, mi, depth - 1);
		else
			put(g, "%s", var_names[vi]);
		put(g, "%s; ", c == 3 ? (choose(g, 2) ? "++" : "--") : "");
	}
	if (mi >= 0)
		set_value(&g->maps[mi], ty(K_INT));
}

/* printf with a format whose conversions match the arguments it is given. */
static void printf_stmt(gen *g, int depth)
{
	static const char *const text[] = { "", "x=", " ", "\\n", "\\t", "%%", "\\x41", "[", "\\\"" };
	static const char *const flags[] = { "", "-", "0", "+", " ", "#", "-8", "08", "5", ".3", "-16" };
	static const char *const int_conv[] = { "d", "i", "u", "x", "X", "o", "c", "p", "s",
						"ld", "lld", "lu", "lx", "llX", "li", "lo" };
	unsigned nargs = choose(g, 5);
	gty args[4];
	char fmt[512] = "";
	size_t fl = 0;

	for (unsigned i = 0; i < nargs; i++) {
		const char *conv;
		args[i] = rand_type(g, false);
		if (args[i].k == K_INT)
			conv = int_conv[choose(g, DT_ARRAY_SIZE(int_conv))];
		else if ((args[i].k == K_KSYM || args[i].k == K_USYM) && choose(g, 2))
			conv = "p";
		else
			conv = "s";
		if (wrong(g))
			conv = choose(g, 2) ? "d" : "q";
		fl += (size_t)snprintf(fmt + fl, sizeof(fmt) - fl, "%s%%%s%s",
				       text[choose(g, DT_ARRAY_SIZE(text))],
				       strchr(conv, 'l') || *conv == 'c' || *conv == 'p'
					       ? ""
					       : flags[choose(g, DT_ARRAY_SIZE(flags))],
				       conv);
	}
	snprintf(fmt + fl, sizeof(fmt) - fl, "%s", text[choose(g, DT_ARRAY_SIZE(text))]);
	put(g, "printf(\"%s\"", fmt);
	for (unsigned i = 0; i < nargs; i++) {
		put(g, ", ");
		expr(g, args[i], depth);
	}
	if (wrong(g))
		put(g, ", 1");
	put(g, "); ");
}

/* A map that has a value (so print/clear/zero see a map that exists), or -1. */
static int valued_map(gen *g)
{
	unsigned start = choose(g, NMAPS);

	for (unsigned k = 0; k < NMAPS; k++) {
		unsigned i = (start + k) % NMAPS;
		if (g->maps[i].valued)
			return (int)i;
	}
	return -1;
}

static void map_call(gen *g, int depth)
{
	int mi = valued_map(g);

	if (mi < 0) {
		assign_map(g, depth);
		return;
	}
	switch (choose(g, 5)) {
	case 0:
		put(g, "print(%s); ", map_names[mi]);
		return;
	case 1:
		put(g, "print(%s, ", map_names[mi]);
		expr(g, ty(K_INT), depth);
		if (choose(g, 2)) {
			put(g, ", ");
			expr(g, ty(K_INT), depth);
		}
		put(g, "); ");
		return;
	case 2:
		put(g, "clear(%s); ", map_names[mi]);
		return;
	case 3:
		put(g, "zero(%s); ", map_names[mi]);
		return;
	default:
		put(g, "delete(");
		map_target(g, mi, depth - 1);
		put(g, "); ");
		return;
	}
}

static void misc_stmt(gen *g, int depth)
{
	switch (choose(g, 7)) {
	case 0:
		put(g, "print(");
		expr(g, rand_type(g, true), depth);
		put(g, "); ");
		return;
	case 1:
		put(g, "exit(); ");
		return;
	case 2:
		put(g, "exit(");
		expr(g, ty(K_INT), depth);
		put(g, "); ");
		return;
	case 3:
		put(g, choose(g, 2) ? "time(); " : "time(\"%%H:%%M:%%S \\n\"); ");
		return;
	case 4:
		put(g, "return; ");
		return;
	case 5:
		/* A call for nothing but its effect (none): the checker lets it be. */
		put(g, choose(g, 2) ? "str(" : "ksym(");
		expr(g, ty(K_INT), depth);
		put(g, "); ");
		return;
	default: {
		/* Misuses the checker must turn away, in chaos inputs. */
		static const char *const bad[] = {
			"@a = count() + 1; ", "$a = print(1); ", "print(@a[1], 2, 3, 4); ",
			"delete(1); ", "exit(\"s\"); ", "time(1); ", "$zz++; ", "@a[1] = args; ",
			"printf(comm); ", "@n = hist(comm); ", "@n = lhist(1, 0, 10); ", "clear(1); ",
		};
		if (g->chaos)
			put(g, "%s", bad[choose(g, DT_ARRAY_SIZE(bad))]);
		else
			put(g, "exit(); ");
		return;
	}
	}
}

static void if_stmt(gen *g, int depth)
{
	put(g, "if (");
	expr(g, ty(K_INT), depth);
	put(g, ") ");
	block(g, depth - 1);
	switch (choose(g, 3)) {
	case 1:
		put(g, "else ");
		block(g, depth - 1);
		break;
	case 2:
		put(g, "else ");
		if_stmt(g, depth - 1);
		break;
	}
}

static void stmt(gen *g, int depth)
{
	g->budget -= 2;
	switch (depth > 0 ? choose(g, 14) : choose(g, 9)) {
	case 0: assign_var(g, depth); return;
	case 1: case 2: assign_map(g, depth); return;
	case 3: assign_agg(g, depth); return;
	case 4: update(g, depth); return;
	case 5: case 6: printf_stmt(g, depth); return;
	case 7: map_call(g, depth); return;
	case 8: misc_stmt(g, depth); return;
	case 9: case 10: if_stmt(g, depth); return;
	case 11:
		/* Unrolled bodies multiply (and LLVM's time with them): one level, a few times. */
		if (g->unroll_depth < 1) {
			g->unroll_depth++;
			put(g, "unroll (%u) ", wrong(g) ? 0 : 1 + choose(g, 2));
			block(g, depth - 1);
			g->unroll_depth--;
			return;
		}
		assign_map(g, depth);
		return;
	default:
		block(g, depth - 1);
		return;
	}
}

static void stmts(gen *g, int depth)
{
	unsigned n = choose(g, 5);

	for (unsigned i = 0; i < n && g->budget > 0; i++)
		stmt(g, depth);
}

/* ---------------------------------------------------------------- probes */

typedef struct attach_kind {
	const char *fmt;  /* the provider as written, long or short spelling */
	unsigned caps;
} attach_kind;

static void attach_point(gen *g, unsigned cls, bool first)
{
	static const char *const units[] = { "s", "ms", "us", "hz" };
	static const char *const rates[] = { "1", "99", "1000", "5" };
	static const char *const ksyms[] = { "vfs_read", "do_sys_open", "vfs_read+4", "vfs_write",
					     "vfs_rea?", "do_sys_open+0x1f", "vfs_readv", "vfs_*" };
	static const char *const paths[] = { "/bin/bash", "libc", "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	static const char *const usyms[] = { "readline", "malloc", "foo::bar", "malloc+0x10" };
	const char *const *ev;
	unsigned n;

	switch (cls) {
	case 0:
		put(g, "BEGIN");
		return;
	case 1:
		put(g, "END");
		return;
	case 2: case 3: {
		unsigned u = choose(g, 4);
		/* A rate of 0 is the checker's to refuse; hz above 1 GHz too. */
		put(g, "%s:%s:%s", cls == 2 ? (choose(g, 2) ? "i" : "interval")
					   : (choose(g, 2) ? "p" : "profile"),
		    units[u], wrong(g) ? "0" : rates[choose(g, 4)]);
		return;
	}
	case 4: case 5:
		ev = cls == 4 ? dt_software_event_names() : dt_hardware_event_names();
		for (n = 0; ev[n]; n++)
			;
		put(g, "%s:%s", cls == 4 ? "software" : "hardware",
		    wrong(g) ? "no-such-event" : ev[choose(g, n)]);
		if (choose(g, 2))
			put(g, ":%u", 1 + choose(g, 100000));
		return;
	case 6: case 7: {
		const char *s = ksyms[choose(g, DT_ARRAY_SIZE(ksyms))];
		if (cls == 7 && strchr(s, '+'))
			s = "vfs_read";
		put(g, "%s:%s", cls == 6 ? (choose(g, 2) ? "k" : "kprobe") : "kretprobe", s);
		return;
	}
	case 8: case 9: {
		const char *s = usyms[choose(g, DT_ARRAY_SIZE(usyms))];
		if (cls == 9 && strchr(s, '+'))
			s = "malloc";
		put(g, "%s:%s:%s", cls == 8 ? "uprobe" : (choose(g, 2) ? "ur" : "uretprobe"),
		    paths[choose(g, DT_ARRAY_SIZE(paths))], s);
		return;
	}
	case 10: {
		/* A tracepoint of the fake tracefs, or a wildcard over it. */
		static const char *const wild[] = { "sched:*", "syscalls:sys_enter_*", "*:*open*" };
		const tp_event *tp = ntps ? &tps[choose(g, ntps)] : NULL;
		bool w = choose(g, 6) == 0;
		const char *spec = w || !tp ? wild[choose(g, DT_ARRAY_SIZE(wild))] : tp->name;

		put(g, "%s:%s", choose(g, 2) ? "t" : "tracepoint", spec);
		/* What the checker will see: every event the spec names, in sorted order. */
		for (uint32_t i = 0; i < ntps; i++) {
			if (fnmatch(spec, tps[i].name, 0))
				continue;
			if (first && !g->tp)
				g->tp = &tps[i];
			if (g->ntp_attached < DT_ARRAY_SIZE(g->tps_attached))
				g->tps_attached[g->ntp_attached++] = &tps[i];
		}
		return;
	}
	default:
		put(g, "%s:%s:%s", choose(g, 2) ? "x" : "xprobe", paths[choose(g, DT_ARRAY_SIZE(paths))],
		    usyms[choose(g, 3)]);
		if (choose(g, 2))
			put(g, ":%u", 1 + choose(g, 1000));
		return;
	}
}

static unsigned caps_of(unsigned cls)
{
	static const unsigned caps[] = {
		[6] = CAP_ARG | CAP_FUNC, [7] = CAP_RET | CAP_FUNC, [8] = CAP_ARG | CAP_FUNC,
		[9] = CAP_RET | CAP_FUNC, [10] = CAP_FUNC | CAP_ARGS,
		[11] = CAP_RET | CAP_FUNC | CAP_XPROBE,
	};
	return cls < DT_ARRAY_SIZE(caps) ? caps[cls] : 0;
}

static void probe(gen *g)
{
	/* Each attach point is a program of its own (each match of a wildcard too). */
	unsigned cls = choose(g, 12), n = 1 + (choose(g, 6) == 5);

	memset(g->var_set, 0, sizeof(g->var_set));
	g->tp = NULL;
	g->ntp_attached = 0;
	g->caps = ~0u;
	for (unsigned i = 0; i < n; i++) {
		/* More attach points of the same kind; a wrong turn mixes kinds (and so loses
		 * the builtins only one of them has). */
		unsigned c = i && wrong(g) ? choose(g, 12) : cls;
		if (i)
			put(g, ", ");
		attach_point(g, c, i == 0);
		g->caps &= caps_of(c);
	}
	if (g->caps & CAP_ARGS && !g->tp)
		g->caps &= ~(unsigned)CAP_ARGS;
	put(g, " ");
	if (choose(g, 3) == 2) {
		put(g, "/");
		expr(g, ty(K_INT), 2);
		put(g, "/ ");
	}
	if (choose(g, 4) == 3) {
		/* A `<` block: statements end with `;`, and compound expressions sit in
		 * parentheses, so no `>` inside can close it. */
		put(g, "< ");
		stmts(g, 2);
		put(g, "> ");
	} else {
		block(g, 2);
	}
	put(g, "\n");
}

char *gen_script(const uint8_t *data, size_t size, size_t *len)
{
	/* Small programs mostly: LLVM's time grows with a program (from a few ms for the
	 * smallest, on a slow machine), and what goes wrong in a big program mostly goes wrong in
	 * a small one already. One in four is bigger, for what only shows when much is live at
	 * once (stack and scratch space, many maps and events). */
	static const int budgets[16] = { 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 24, 24, 24,
					 48 };
	gen g = { .in = { .p = data, .n = size } };
	unsigned nprobes;

	load_tracepoints();
	g.budget = budgets[choose(&g, 16)];
	g.chaos = choose(&g, 6) == 5;
	g.cstruct = choose(&g, 4) == 3;
	if (g.cstruct)
		put(&g, FUZZ_CSTRUCT_DEF "\n");
	/* The live map is there before the script: its types are fixed. */
	gmap *live = &g.maps[NMAPS - 1];
	live->shaped = live->valued = true;
	live->nkeys = 1;
	live->key[0] = ty(K_INT);
	live->value = ty(K_STR);
	/* One probe, now and then two (maps and continuation slots shared between them). */
	nprobes = 1 + (choose(&g, 4) == 3);
	for (unsigned i = 0; i < nprobes && g.budget > 0; i++)
		probe(&g);
	if (!g.out)
		put(&g, "BEGIN { }\n");
	*len = g.len;
	return g.out;
}

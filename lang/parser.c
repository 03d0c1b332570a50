/* parser.c — the hand-written recursive-descent parser: text to AST, with every node spanning its
 * source. It pulls tokens from the pure lexer on demand, which is what lets it (a) lex attach
 * points in their own mode at a probe's start and (b) look two tokens ahead for the `>` rule.
 * Syntax errors are reported once (a panic flag silences the cascade until the next statement)
 * and parsing resumes at the next `;`, `}` or probe, so one run reports several errors.
 *
 * Probe bodies are `{ … }` (bpftrace) or `< … >`. WHEN `>` CLOSES A `<`-BLOCK:
 *   1. Only a `>` directly in the `<`-block can close it. Inside ( ), [ ], call arguments, or a
 *      nested { } block, `>` is always a comparison (`k:f < if (a > b) { @x = a > b; } >`).
 *   2. A `>` where a statement may begin closes the block (`< @x = 1; >`).
 *   3. A `>` after a complete operand is a comparison when the token after it can start an
 *      operand — a literal, `$var`, `$1`, `@map`, `(`, unary `- ! ~ ++ --`, a builtin name, or
 *      a name followed by `(` — and closes the block otherwise: end of input, `;`, `}`, `>`,
 *      `:`, `?`, a keyword, or anything else such as the start of the next probe (`END`,
 *      `kprobe:f`). So `< @ = 1 >` closes, `< @x = $a > 3 ? 1 : 2; >` compares, and
 *      `< @x = 1 > END { }` closes before END.
 *   4. When the block then fails to close, the error's hint names the last `>` that rule 3 read
 *      as a comparison and says how to close the block there (end the statement with `;`).
 * A `;` before the closing `>` is therefore always safe, and `( )` around a comparison always
 * keeps it one. A predicate is `/expr/`: a `/` outside parentheses ends it, so write
 * `/(a / 2) > 1/`. In an attach point a `/` belongs to it only in a uprobe's path field
 * (`uprobe:/bin/bash:readline /pid == 1/`), see dt_lex_attach. */
#include "lang/lang_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

/* A macro's name (in the text) and number of parameters. */
struct macro_sig {
	const char *name;
	uint32_t len, n;
};

typedef struct parser {
	dt_arena *a;
	const dt_source *src;
	dt_diags *d;
	dt_token cur;
	uint32_t cur_from; /* offset cur was lexed from (end of the previous token) */
	uint32_t prev_end;
	dt_token_vec *rec;
	bool panic;        /* an error was reported; stay quiet until the next statement */
	bool angle_top;    /* directly inside a `<` body: rule 1 above */
	bool in_pred;      /* directly inside a predicate: a top-level `/` ends it */
	bool have_gt;      /* a `>` in the current `<` body was read as a comparison */
	dt_span last_gt;
	int depth;
	bool too_deep;
	/* Bare names (DT_E_IDENT): the checker looks them up as constants, but it does not run
	 * after a syntax error, so then they are reported as unknown here. */
	DT_VEC(dt_expr *) idents;
	bool config_seen;  /* a config block was read (only one is allowed) */
	/* Macros: the names and parameter counts of every `macro NAME(…)` of the text, found
	 * before parsing (a macro may be used above its definition), the definitions parsed, and
	 * the parameters of the one whose body is being parsed (a bare name among them is the
	 * parameter, not a macro or a constant). */
	DT_VEC(struct macro_sig) sigs;
	DT_VEC(dt_macro_def *) macros;
	const dt_macro_def *in_macro;
} parser;

static void lex_at(parser *p, uint32_t from, bool attach)
{
	p->cur_from = from;
	for (;;) {
		if (attach)
			dt_lex_attach(p->src, from, &p->cur);
		else
			dt_lex(p->src, from, &p->cur);
		if (p->cur.err) {
			dt_diag(p->d, DT_DIAG_ERROR, (dt_span){ p->cur.off, p->cur.len ? p->cur.len : 1 },
				"%s", p->cur.err);
			if (p->cur.kind == DT_TOK_STR)
				dt_diag_hint(p->d, "strings are written \"…\" on one line; use \\n for a "
						   "newline");
		}
		/* An invalid character is reported once and then skipped, so it does not also
		 * show up as "expected an expression". */
		if (p->cur.kind != DT_TOK_ERROR)
			return;
		from = p->cur.off + p->cur.len;
	}
}

static void advance(parser *p)
{
	if (p->rec)
		DT_VEC_PUSH(p->rec, p->cur);
	p->prev_end = p->cur.off + p->cur.len;
	lex_at(p, p->prev_end, false);
}

static dt_span tok_span(const dt_token *t)
{
	return (dt_span){ t->off, t->len ? t->len : 1 };
}

static dt_span span_from(parser *p, uint32_t start)
{
	return (dt_span){ start, p->prev_end > start ? p->prev_end - start : 1 };
}

static bool is_kw(parser *p, const dt_token *t, const char *kw)
{
	size_t n = strlen(kw);
	return t->kind == DT_TOK_IDENT && t->len == n && memcmp(p->src->text + t->off, kw, n) == 0;
}

static const char *tok_text(parser *p, const dt_token *t)
{
	return dt_arena_strndup(p->a, p->src->text + t->off, t->len);
}

/* Reports a syntax error at the current token unless one is already being recovered from. */
static void syntax_error(parser *p, const char *what)
{
	if (p->panic)
		return;
	p->panic = true;
	if (p->cur.kind == DT_TOK_EOF)
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "%s, found end of input", what);
	else
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "%s, found '%.*s'", what,
			(int)DT_MIN(p->cur.len, 40u), p->src->text + p->cur.off);
}

/* A syntax error about a token missing after the previous one (a ';'): reported where it
 * belongs, right after that token, rather than at the next token, which may be lines away. */
static void missing_after(parser *p, const char *what)
{
	if (p->panic)
		return;
	/* At the end of input the text stopped early: said there, so the REPL reads on. */
	if (p->cur.kind == DT_TOK_EOF) {
		syntax_error(p, what);
		return;
	}
	p->panic = true;
	dt_diag(p->d, DT_DIAG_ERROR, (dt_span){ p->prev_end, 1 }, "%s, found '%.*s'", what,
		(int)DT_MIN(p->cur.len, 40u), p->src->text + p->cur.off);
}

static bool expect(parser *p, dt_tok_kind k, const char *what)
{
	if (p->cur.kind == k) {
		advance(p);
		return true;
	}
	syntax_error(p, what);
	return false;
}

static dt_expr *new_expr(parser *p, dt_expr_kind k, uint32_t start)
{
	dt_expr *e = dt_arena_alloc(p->a, sizeof(*e));
	e->kind = k;
	e->span = span_from(p, start);
	return e;
}

typedef DT_VEC(dt_expr *) expr_vec;
typedef DT_VEC(dt_stmt *) stmt_vec;

static dt_expr **expr_vec_finish(parser *p, expr_vec *v, uint32_t *n)
{
	dt_expr **out = dt_arena_alloc(p->a, sizeof(dt_expr *) * (v->n ? v->n : 1));
	if (v->n)
		memcpy(out, v->v, sizeof(dt_expr *) * v->n);
	*n = (uint32_t)v->n;
	free(v->v);
	return out;
}

static dt_stmt_list stmt_vec_finish(parser *p, stmt_vec *v)
{
	dt_stmt_list l = { .n = (uint32_t)v->n };
	l.v = dt_arena_alloc(p->a, sizeof(dt_stmt *) * (v->n ? v->n : 1));
	if (v->n)
		memcpy(l.v, v->v, sizeof(dt_stmt *) * v->n);
	free(v->v);
	return l;
}

static dt_expr *parse_expr(parser *p);
static dt_expr *parse_block_expr(parser *p);
static dt_stmt *parse_if(parser *p, uint32_t start);
static dt_expr *if_value(parser *p, const dt_stmt *s);
static bool starts_record(parser *p);
static dt_expr *parse_record(parser *p, uint32_t start);

/* Parsing inside ( ) [ ] and argument lists: neither `>` (rule 1) nor `/` ends anything there. */
struct nest_save {
	bool angle_top, in_pred;
};

static struct nest_save nest_enter(parser *p)
{
	struct nest_save s = { p->angle_top, p->in_pred };
	p->angle_top = false;
	p->in_pred = false;
	return s;
}

static void nest_leave(parser *p, struct nest_save s)
{
	p->angle_top = s.angle_top;
	p->in_pred = s.in_pred;
}

/* An error node: keeps the tree well formed after a reported error. */
static dt_expr *error_expr(parser *p, uint32_t start)
{
	dt_expr *e = new_expr(p, DT_E_INT, start);
	return e;
}

/* Comma-separated expressions up to `close`; the opening token is already consumed. */
static dt_expr **parse_list(parser *p, dt_tok_kind close, const char *what, uint32_t *n)
{
	expr_vec v = { 0 };
	struct nest_save s = nest_enter(p);
	if (p->cur.kind != close) {
		for (;;) {
			DT_VEC_PUSH(&v, parse_expr(p));
			if (p->cur.kind != DT_TOK_COMMA)
				break;
			advance(p);
		}
	}
	nest_leave(p, s);
	expect(p, close, what);
	return expr_vec_finish(p, &v, n);
}

/* ---------------------------------------------------------------- C type names */

static bool starts_operand(parser *p, const dt_token *t);
static dt_expr *parse_unary(parser *p);

/* Words that can only begin a C type name in a cast, sizeof or offsetof. */
static bool is_type_word(const char *s, size_t n)
{
	static const char *const words[] = {
		"struct", "union", "enum", "void", "bool", "char", "short", "int", "long", "signed",
		"unsigned", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
		"uint64_t", "const", "volatile", NULL,
	};
	for (const char *const *w = words; *w; w++)
		if (strlen(*w) == n && !memcmp(*w, s, n))
			return true;
	return false;
}

/* Whether `( IDENT …` at the current token starts a cast: a type word, or a name that is not a
 * builtin or function followed by '*'s and ')' and then an operand (`(pid_t)arg0`). */
static bool starts_cast(parser *p)
{
	const dt_token *t = &p->cur;
	const char *s = p->src->text + t->off;
	if (t->kind != DT_TOK_IDENT)
		return false;
	if (is_type_word(s, t->len))
		return true;
	dt_builtin b;
	uint32_t argn;
	dt_func f;
	if (dt_builtin_lookup(s, t->len, &b, &argn) || dt_func_lookup(s, t->len, &f))
		return false;
	dt_token n;
	dt_lex(p->src, t->off + t->len, &n);
	if (t->len == 6 && !memcmp(s, "typeof", 6))
		return n.kind == DT_TOK_LPAREN; /* (typeof(…)…) is only ever a type */
	/* The postfix modifiers: '*', '[N]', '[]'. */
	for (;;) {
		if (n.kind == DT_TOK_STAR) {
			dt_lex(p->src, n.off + n.len, &n);
		} else if (n.kind == DT_TOK_LBRACK) {
			dt_lex(p->src, n.off + n.len, &n);
			if (n.kind == DT_TOK_INT)
				dt_lex(p->src, n.off + n.len, &n);
			if (n.kind != DT_TOK_RBRACK)
				return false;
			dt_lex(p->src, n.off + n.len, &n);
		} else {
			break;
		}
	}
	if (n.kind != DT_TOK_RPAREN)
		return false;
	dt_lex(p->src, n.off + n.len, &n);
	/* bpftrace's rule: `(NAME)` then something that starts an expression is a cast, a
	 * dereference included: `(myident)*$a` casts *$a (builtins were ruled out above, so
	 * `(pid)*tid` multiplies). */
	return starts_operand(p, &n) || n.kind == DT_TOK_STAR;
}

/* In a type context (sizeof, offsetof, typeof): whether what follows is a type. Type words,
 * typeof(…) and bare names are (bpftrace never expands a bare name there: `sizeof(ident[1])`
 * is an array type); a builtin, a call, a variable, a block or anything in parentheses is an
 * expression. */
static bool type_context_is_type(parser *p)
{
	const dt_token *t = &p->cur;
	const char *s = p->src->text + t->off;
	dt_builtin b;
	uint32_t argn;
	dt_token n;

	if (t->kind != DT_TOK_IDENT)
		return false;
	dt_lex(p->src, t->off + t->len, &n);
	if (t->len == 6 && !memcmp(s, "typeof", 6))
		return n.kind == DT_TOK_LPAREN;
	/* `uint64_t()` calls (a macro): the call syntax forces an expression. */
	if (n.kind == DT_TOK_LPAREN)
		return false;
	if (is_type_word(s, t->len))
		return true;
	return !dt_builtin_lookup(s, t->len, &b, &argn);
}

static bool parse_ctype(parser *p, dt_ctype_ref *out);

/* typeof(TYPE) or typeof(EXPR), after the word: the expression is only typed, never run. */
static bool parse_typeof_rest(parser *p, dt_ctype_ref *out)
{
	if (!expect(p, DT_TOK_LPAREN, "expected '(' after typeof"))
		return false;
	struct nest_save s = nest_enter(p);
	if (type_context_is_type(p)) {
		out->typeof_ty = dt_arena_alloc(p->a, sizeof(*out->typeof_ty));
		if (!parse_ctype(p, out->typeof_ty)) {
			nest_leave(p, s);
			return false;
		}
	} else {
		out->typeof_e = parse_expr(p);
	}
	nest_leave(p, s);
	out->name = "typeof";
	return expect(p, DT_TOK_RPAREN, "expected ')' after typeof's operand");
}

/* A C type name: `struct NAME`, `unsigned int`, `uint8`, `pid_t`, then '*'s. Qualifiers
 * (const, volatile) are read and dropped. */
static bool parse_ctype(parser *p, dt_ctype_ref *out)
{
	uint32_t start = p->cur.off;
	char *name = NULL;
	*out = (dt_ctype_ref){ 0 };
	while (is_kw(p, &p->cur, "const") || is_kw(p, &p->cur, "volatile"))
		advance(p);
	if (p->cur.kind != DT_TOK_IDENT) {
		syntax_error(p, "expected a type name");
		return false;
	}
	if (is_kw(p, &p->cur, "typeof")) {
		advance(p);
		if (!parse_typeof_rest(p, out))
			return false;
		name = "typeof";
	} else if (is_kw(p, &p->cur, "struct") || is_kw(p, &p->cur, "union") || is_kw(p, &p->cur, "enum")) {
		dt_token kw = p->cur;
		advance(p);
		if (p->cur.kind != DT_TOK_IDENT) {
			syntax_error(p, "expected a struct, union or enum name");
			return false;
		}
		name = dt_arena_printf(p->a, "%.*s %.*s", (int)kw.len, p->src->text + kw.off,
				       (int)p->cur.len, p->src->text + p->cur.off);
		advance(p);
	} else {
		/* C's multi-word integer names ("unsigned long long") become one name. */
		name = (char *)tok_text(p, &p->cur);
		bool multi = is_type_word(p->src->text + p->cur.off, p->cur.len);
		advance(p);
		while (multi && p->cur.kind == DT_TOK_IDENT &&
		       (is_kw(p, &p->cur, "int") || is_kw(p, &p->cur, "long") ||
			is_kw(p, &p->cur, "short") || is_kw(p, &p->cur, "char"))) {
			name = dt_arena_printf(p->a, "%s %s", name, tok_text(p, &p->cur));
			advance(p);
		}
	}
	while (is_kw(p, &p->cur, "const") || is_kw(p, &p->cur, "volatile"))
		advance(p);
	out->name = name;
	/* The modifiers, left to right: `int32*[4]` is an array of 4 pointers to int32. */
	while (p->cur.kind == DT_TOK_STAR || p->cur.kind == DT_TOK_LBRACK) {
		if (out->nmods == DT_MAX_TYPE_MODS) {
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
				"a type has at most %d '*' and '[N]' modifiers", DT_MAX_TYPE_MODS);
			p->panic = true;
			return false;
		}
		dt_type_mod *m = &out->mods[out->nmods++];
		if (p->cur.kind == DT_TOK_STAR) {
			out->nptr++;
			advance(p);
			continue;
		}
		advance(p);
		m->is_array = true;
		if (p->cur.kind == DT_TOK_INT) {
			if (!p->cur.ival || p->cur.ival > DT_MAX_VALUE_SIZE * 64) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"an array type needs 1 to %d elements", DT_MAX_VALUE_SIZE * 64);
				p->panic = true;
				return false;
			}
			m->n = (uint32_t)p->cur.ival;
			advance(p);
		} else {
			m->n_omitted = true;
		}
		if (!expect(p, DT_TOK_RBRACK, "expected ']' after an array type's size"))
			return false;
	}
	out->span = span_from(p, start);
	return true;
}

/* sizeof(type) / sizeof(expr) / offsetof(type, member); the name is consumed, '(' is current. */
static dt_expr *parse_sizeof(parser *p, bool offsetof_, uint32_t start)
{
	dt_expr *e = new_expr(p, offsetof_ ? DT_E_OFFSETOF : DT_E_SIZEOF, start);
	const char *what = offsetof_ ? "offsetof" : "sizeof";
	if (!expect(p, DT_TOK_LPAREN, offsetof_ ? "expected '(' after offsetof"
						: "expected '(' after sizeof"))
		return error_expr(p, start);
	struct nest_save s = nest_enter(p);
	/* A type or an expression (bpftrace's type context; sizeof(NAME) of an enum value or a
	 * #define is told apart by the checker). */
	if (type_context_is_type(p)) {
		if (!parse_ctype(p, &e->size.ty))
			goto out;
	} else {
		e->size.e = parse_expr(p);
	}
	if (offsetof_) {
		if (!expect(p, DT_TOK_COMMA, "expected ',' after the type in offsetof"))
			goto out;
		/* A member, or a path of them: offsetof(struct a, b.c). */
		char *path = NULL;
		for (;;) {
			if (p->cur.kind != DT_TOK_IDENT) {
				syntax_error(p, "expected a member name");
				goto out;
			}
			path = path ? dt_arena_printf(p->a, "%s.%s", path, tok_text(p, &p->cur))
				    : (char *)tok_text(p, &p->cur);
			advance(p);
			if (p->cur.kind != DT_TOK_DOT)
				break;
			advance(p);
		}
		e->size.field = path;
	}
	nest_leave(p, s);
	expect(p, DT_TOK_RPAREN, offsetof_ ? "expected ')' after offsetof's member"
					   : "expected ')' after sizeof's operand");
	e->span = span_from(p, start);
	(void)what;
	return e;
out:
	nest_leave(p, s);
	return error_expr(p, start);
}

/* kstack, kstack(N), kstack(perf), kstack(perf, N), ustack(build_id), ustack($1),
 * ustack_dwarf(N) … `name` is the spelling written (dw_ustack is ustack_dwarf). */
static dt_expr *parse_stack_builtin(parser *p, dt_expr *e, const char *name, uint32_t start)
{
	advance(p); /* ( */
	int nargs = 0;
	bool bad = false, dwarf = e->builtin.id == DT_B_USTACK_DWARF;
	while (p->cur.kind != DT_TOK_RPAREN && p->cur.kind != DT_TOK_EOF && nargs < 4) {
		bool have_depth = e->builtin.depth || e->builtin.depth_param;
		if (nargs)
			if (!expect(p, DT_TOK_COMMA, "expected ',' or ')' in stack arguments"))
				return e;
		if (p->cur.kind == DT_TOK_IDENT && dwarf && !have_depth && !e->builtin.native &&
		    is_kw(p, &p->cur, "native")) {
			/* ustack_dwarf(native[, MODE][, N]): the interpreter's own frames, not
			 * the Python frames it runs. */
			e->builtin.native = true;
		} else if (p->cur.kind == DT_TOK_IDENT && nargs == (int)e->builtin.native &&
			   !have_depth) {
			dt_stack_mode m;
			const char *w = p->src->text + p->cur.off;

			if (!dt_stack_mode_lookup(w, p->cur.len, &m)) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"'%.*s' is not a stack mode", (int)p->cur.len, w);
				dt_diag_hint(p->d, "%s's stack modes: bpftrace, perf, raw%s%s", name,
					     e->builtin.id == DT_B_KSTACK ? "" : ", build_id",
					     dwarf && !e->builtin.native ? " (and native first)" : "");
			} else if (m == DT_STACKMODE_BUILD_ID && e->builtin.id == DT_B_KSTACK) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"'build_id' stack mode can only be used for ustack");
				dt_diag_hint(p->d, "a kernel stack has no build IDs: kstack(raw) gives "
						   "its addresses");
			} else {
				e->builtin.mode = m, e->builtin.mode_set = true;
			}
		} else if (p->cur.kind == DT_TOK_INT && !have_depth) {
			if (p->cur.ival < 1 || p->cur.ival > DT_STACK_MAX_DEPTH) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"stack depth must be between 1 and %d", DT_STACK_MAX_DEPTH);
				e->builtin.depth = DT_STACK_DEFAULT_DEPTH;
			} else {
				e->builtin.depth = (uint32_t)p->cur.ival;
			}
		} else if (p->cur.kind == DT_TOK_POSPARAM && p->cur.ival > 0 &&
			   p->cur.ival != DT_POSPARAM_COUNT && !have_depth) {
			/* ustack($1): the depth is the parameter's value, known to dt_check. */
			e->builtin.depth_param = (uint32_t)p->cur.ival;
		} else {
			bad = true;
		}
		if (bad) {
			if (!p->panic)
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"bad %s argument", name);
			if (dwarf)
				dt_diag_hint(p->d, "expected %s(N), %s(MODE) or %s(MODE, N), each maybe "
						   "after `native,`, with MODE bpftrace, perf, raw or "
						   "build_id and N in 1..%d (or $1…)", name, name, name,
					     DT_STACK_MAX_DEPTH);
			else
				dt_diag_hint(p->d, "expected %s(N), %s(MODE) or %s(MODE, N) with MODE "
						   "bpftrace, perf, raw%s and N in 1..%d (or $1…)", name,
					     name, name, e->builtin.id == DT_B_KSTACK ? "" : " or build_id",
					     DT_STACK_MAX_DEPTH);
			p->panic = true;
			return e;
		}
		advance(p);
		nargs++;
	}
	expect(p, DT_TOK_RPAREN, "expected ')' after stack arguments");
	e->span = span_from(p, start);
	return e;
}

/* A builtin written as a call, as bpftrace's standard library now allows: `pid()` is `pid`, and
 * the builtins with a mode take it as their argument: nsecs(monotonic|boot|tai|sw_tai),
 * pid(curr_ns|init), tid(curr_ns|init). The '(' is current. */
static void parse_builtin_call(parser *p, dt_expr *e, const dt_token *t, uint32_t start)
{
	static const char *const clocks[] = { "monotonic", "boot", "tai", "sw_tai", NULL };
	static const char *const pidns[] = { "curr_ns", "init", NULL };
	const char *const *modes = e->builtin.id == DT_B_NSECS ? clocks
				   : e->builtin.id == DT_B_PID || e->builtin.id == DT_B_TID ? pidns
											  : NULL;
	const char *name = dt_builtin_name(e->builtin.id);
	advance(p);
	dt_builtin id = e->builtin.id;
	if ((id == DT_B_PPID || id == DT_B_PCOMM || id == DT_B_LEADER_COMM ||
	     id == DT_B_LEADER_TID || id == DT_B_COMM) && p->cur.kind != DT_TOK_RPAREN) {
		/* ppid(task) …: of that task (a struct task_struct *); comm(pid): of that
		 * process. */
		e->builtin.task = parse_expr(p);
		if (p->cur.kind == DT_TOK_COMMA) {
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "%s() takes one argument",
				name);
			if (id == DT_B_COMM)
				dt_diag_hint(p->d, "comm or comm(pid)");
			else
				dt_diag_hint(p->d, "%s or %s(task)", name, name);
			p->panic = true;
			return;
		}
		expect(p, DT_TOK_RPAREN, id == DT_B_COMM ? "expected ')' after comm's pid"
							  : "expected ')' after the task");
		e->span = span_from(p, start);
		return;
	}
	if (p->cur.kind == DT_TOK_RPAREN) {
		advance(p);
		e->span = span_from(p, start);
		return;
	}
	if (modes && p->cur.kind == DT_TOK_IDENT) {
		dt_token m = p->cur;
		for (uint32_t i = 0; modes[i]; i++) {
			if (strlen(modes[i]) == m.len && !memcmp(modes[i], p->src->text + m.off, m.len)) {
				e->builtin.variant = i;
				advance(p);
				expect(p, DT_TOK_RPAREN, "expected ')' after the mode");
				e->span = span_from(p, start);
				return;
			}
		}
	}
	uint32_t n;
	dt_token at = p->cur, next;
	dt_lex(p->src, at.off + at.len, &next);
	if (modes && at.kind == DT_TOK_IDENT && next.kind == DT_TOK_RPAREN) {
		advance(p); /* an unknown mode: not an expression to report as well */
		advance(p);
	} else {
		(void)parse_list(p, DT_TOK_RPAREN, "expected ')'", &n);
	}
	if (modes) {
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&at), "bad argument to %s()", name);
		char list[64] = "";
		for (uint32_t i = 0; modes[i]; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", modes[i]);
		dt_diag_hint(p->d, "%s takes no argument or one of: %s", name, list);
	} else {
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&at), "%.*s() takes no arguments",
			(int)t->len, p->src->text + t->off);
		dt_diag_hint(p->d, "write '%.*s' or '%.*s()'", (int)t->len, p->src->text + t->off,
			     (int)t->len, p->src->text + t->off);
	}
}

static bool is_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !memcmp(s, w, n);
}

/* Whether `s` is an identifier parameter of the macro being parsed. */
static bool macro_param(parser *p, const char *s, size_t n)
{
	if (!p->in_macro)
		return false;
	for (uint32_t i = 0; i < p->in_macro->nparams; i++) {
		const dt_expr *pe = p->in_macro->params[i];
		if (pe->kind == DT_E_IDENT && is_word(s, n, pe->ident.name))
			return true;
	}
	return false;
}

/* The number of arguments of the call whose '(' is current, counted on the tokens. */
static uint32_t count_call_args(parser *p)
{
	dt_token t;
	uint32_t off = p->cur.off + p->cur.len, n = 0;
	int depth = 1;
	bool any = false;
	for (;;) {
		dt_lex(p->src, off, &t);
		off = t.off + (t.len ? t.len : 1);
		if (t.kind == DT_TOK_EOF)
			break;
		if (t.kind == DT_TOK_LPAREN || t.kind == DT_TOK_LBRACK || t.kind == DT_TOK_LBRACE)
			depth++;
		else if (t.kind == DT_TOK_RPAREN || t.kind == DT_TOK_RBRACK ||
			 t.kind == DT_TOK_RBRACE) {
			if (--depth == 0)
				break;
		} else if (t.kind == DT_TOK_COMMA && depth == 1) {
			n++;
		}
		any = true;
	}
	return any ? n + 1 : 0;
}

/* Whether the name just read calls a macro: a macro of that name exists, and either the name
 * is no builtin or function, or a macro of that name takes as many arguments as are written
 * (a macro overrides a builtin of the same name only with the same number of arguments). */
static bool starts_macro_call(parser *p, const char *s, size_t len, bool call)
{
	bool named = false;
	uint32_t n = UINT32_MAX;
	for (size_t i = 0; i < p->sigs.n; i++) {
		if (p->sigs.v[i].len != len || memcmp(p->sigs.v[i].name, s, len))
			continue;
		named = true;
		if (n == UINT32_MAX)
			n = call ? count_call_args(p) : 0;
		if (p->sigs.v[i].n == n)
			return true;
	}
	if (!named)
		return false;
	dt_builtin b;
	uint32_t argn;
	dt_func f;
	return !dt_builtin_lookup(s, len, &b, &argn) && !dt_func_lookup(s, len, &f);
}

static dt_expr *parse_macro_call(parser *p, const char *s, size_t len, bool call, uint32_t start)
{
	dt_expr *e = new_expr(p, DT_E_MACRO, start);
	e->macro.name = dt_arena_strndup(p->a, s, len);
	e->macro.bare = !call;
	if (call) {
		advance(p);
		e->macro.args = parse_list(p, DT_TOK_RPAREN, "expected ',' or ')' in arguments",
					   &e->macro.nargs);
		e->span = span_from(p, start);
	}
	return e;
}


/* Whether the program imports a .bpf.c, whose functions a call may name. */
static bool imports_bpf_c(const dt_source *src)
{
	for (uint32_t i = 0; i < src->ncimports; i++)
		if (src->cimports[i].kind == DT_CIMPORT_BPF_C)
			return true;
	return false;
}

static dt_expr *parse_ident(parser *p)
{
	dt_token t = p->cur;
	const char *s = p->src->text + t.off;
	uint32_t start = t.off;
	advance(p);
	bool call = p->cur.kind == DT_TOK_LPAREN;
	dt_builtin b;
	uint32_t argn;
	dt_func f;
	if ((t.len == 6 && !memcmp(s, "sizeof", 6)) || (t.len == 8 && !memcmp(s, "offsetof", 8)))
		return parse_sizeof(p, t.len == 8, start);
	if (call && t.len == 6 && !memcmp(s, "typeof", 6)) {
		/* A type passed to a macro: `my_macro($a, typeof(struct task))`. */
		dt_expr *e = new_expr(p, DT_E_TYPEOF, start);
		e->tyof.ref = dt_arena_alloc(p->a, sizeof(*e->tyof.ref));
		if (!parse_typeof_rest(p, e->tyof.ref))
			return error_expr(p, start);
		e->tyof.ref->span = span_from(p, start);
		e->span = span_from(p, start);
		return e;
	}
	if (!call && macro_param(p, s, t.len)) {
		dt_expr *e = new_expr(p, DT_E_IDENT, start);
		e->ident.name = dt_arena_strndup(p->a, s, t.len);
		return e;
	}
	if (!call && (is_word(s, t.len, "true") || is_word(s, t.len, "false"))) {
		dt_expr *e = new_expr(p, DT_E_INT, start);
		e->i.value = t.len == 4;
		e->i.is_bool = true;
		return e;
	}
	if (starts_macro_call(p, s, t.len, call))
		return parse_macro_call(p, s, t.len, call, start);
	if (dt_builtin_lookup(s, t.len, &b, &argn)) {
		dt_expr *e = new_expr(p, DT_E_BUILTIN, start);
		e->builtin.id = b;
		e->builtin.arg = argn;
		if (call && (b == DT_B_KSTACK || b == DT_B_USTACK || b == DT_B_USTACK_DWARF))
			return parse_stack_builtin(p, e, dt_arena_strndup(p->a, s, t.len), start);
		if (call)
			parse_builtin_call(p, e, &t, start);
		return e;
	}
	if (dt_func_lookup(s, t.len, &f)) {
		if (!call) {
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t), "'%.*s' is a function", (int)t.len,
				s);
			dt_diag_hint(p->d, "call it: %.*s(…)", (int)t.len, s);
			return error_expr(p, start);
		}
		advance(p);
		dt_expr *e = new_expr(p, DT_E_CALL, start);
		e->call.id = f;
		e->call.name = dt_func_name(f);
		e->call.args = parse_list(p, DT_TOK_RPAREN, "expected ',' or ')' in arguments",
					  &e->call.nargs);
		e->span = span_from(p, start);
		return e;
	}
	if (!call) {
		/* Maybe a constant of the C definitions or the kernel: the checker decides. */
		dt_expr *e = new_expr(p, DT_E_IDENT, start);
		e->ident.name = dt_arena_strndup(p->a, s, t.len);
		DT_VEC_PUSH(&p->idents, e);
		return e;
	}
	if (imports_bpf_c(p->src)) {
		/* Maybe a function of the imported C: the checker asks the type source. */
		advance(p);
		dt_expr *e = new_expr(p, DT_E_CALL, start);
		e->call.id = DT_F_EXTERN;
		e->call.name = dt_arena_strndup(p->a, s, t.len);
		e->call.args = parse_list(p, DT_TOK_RPAREN, "expected ',' or ')' in arguments",
					  &e->call.nargs);
		e->span = span_from(p, start);
		return e;
	}
	dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t), "unknown function '%.*s'", (int)t.len, s);
	dt_unknown_name_hint(p->d, s, t.len, true);
	uint32_t n;
	advance(p);
	(void)parse_list(p, DT_TOK_RPAREN, "expected ',' or ')' in arguments", &n);
	return error_expr(p, start);
}

static dt_expr *parse_primary(parser *p)
{
	uint32_t start = p->cur.off;
	dt_token t = p->cur;
	switch (t.kind) {
	case DT_TOK_INT: {
		advance(p);
		dt_expr *e = new_expr(p, DT_E_INT, start);
		e->i.value = t.ival;
		e->i.is_unsigned = t.ival > INT64_MAX; /* uint64, as bpftrace types it */
		return e;
	}
	case DT_TOK_STR: {
		advance(p);
		dt_expr *e = new_expr(p, DT_E_STR, start);
		uint32_t bad;
		e->str.s = dt_lex_string(p->a, p->src, &t, &e->str.len, &bad);
		if (bad != UINT32_MAX) {
			dt_diag(p->d, DT_DIAG_ERROR, (dt_span){ bad, 2 }, "invalid escape sequence");
			dt_diag_hint(p->d, "known escapes: \\n \\t \\r \\\" \\\\ \\xNN \\NNN (octal)");
		}
		return e;
	}
	case DT_TOK_POSPARAM: {
		advance(p);
		if (t.ival == DT_POSPARAM_COUNT)
			return new_expr(p, DT_E_PARAMCOUNT, start);
		dt_expr *e = new_expr(p, DT_E_POSPARAM, start);
		e->posparam.n = (uint32_t)t.ival;
		if (t.ival == 0)
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t),
				"positional parameters start at $1");
		return e;
	}
	case DT_TOK_VAR: {
		advance(p);
		dt_expr *e = new_expr(p, DT_E_VAR, start);
		e->var.name = tok_text(p, &t);
		return e;
	}
	case DT_TOK_MAP: {
		advance(p);
		dt_expr *e = new_expr(p, DT_E_MAP, start);
		e->map.name = tok_text(p, &t);
		if (p->cur.kind == DT_TOK_LBRACK) {
			advance(p);
			e->map.keys = parse_list(p, DT_TOK_RBRACK, "expected ',' or ']' after map key",
						 &e->map.nkeys);
			if (!e->map.nkeys && !p->panic)
				dt_diag(p->d, DT_DIAG_ERROR, span_from(p, start),
					"empty map key: write %s for a map without keys", e->map.name);
			e->span = span_from(p, start);
		}
		return e;
	}
	case DT_TOK_LPAREN: {
		advance(p);
		if (starts_cast(p)) {
			dt_expr *e = new_expr(p, DT_E_CAST, start);
			if (!parse_ctype(p, &e->cast.to))
				return error_expr(p, start);
			if (!expect(p, DT_TOK_RPAREN, "expected ')' after the type of a cast"))
				return error_expr(p, start);
			e->cast.e = parse_unary(p);
			e->span = span_from(p, start);
			return e;
		}
		if (starts_record(p))
			return parse_record(p, start);
		struct nest_save s = nest_enter(p);
		dt_expr *first = parse_expr(p);
		if (p->cur.kind == DT_TOK_COMMA) {
			expr_vec v = { 0 };
			DT_VEC_PUSH(&v, first);
			while (p->cur.kind == DT_TOK_COMMA) {
				advance(p);
				DT_VEC_PUSH(&v, parse_expr(p));
			}
			nest_leave(p, s);
			expect(p, DT_TOK_RPAREN, "expected ',' or ')' in tuple");
			dt_expr *e = new_expr(p, DT_E_TUPLE, start);
			e->tuple.elems = expr_vec_finish(p, &v, &e->tuple.n);
			return e;
		}
		nest_leave(p, s);
		expect(p, DT_TOK_RPAREN, "expected ')'");
		return first;
	}
	case DT_TOK_IDENT:
		if (is_kw(p, &p->cur, "if")) {
			uint32_t start = p->cur.off;
			struct nest_save ns = nest_enter(p);
			dt_stmt *s = parse_if(p, start);
			nest_leave(p, ns);
			dt_expr *e = p->panic ? NULL : if_value(p, s);
			if (!e && !p->panic) {
				dt_diag(p->d, DT_DIAG_ERROR, s->span, "an 'if' used as a value needs an "
					"'else', and a value (an expression with no ';' after it) "
					"ending each branch");
				e = error_expr(p, start);
			}
			return e ? e : error_expr(p, start);
		}
		return parse_ident(p);
	case DT_TOK_LBRACE: {
		struct nest_save s = nest_enter(p);
		dt_expr *e = parse_block_expr(p);
		nest_leave(p, s);
		return e;
	}
	default:
		syntax_error(p, "expected an expression");
		return error_expr(p, start);
	}
}

/* After '(': `NAME =` (not `==`) starts a record, `(color="green", size=2)`. */
static bool starts_record(parser *p)
{
	dt_token next;

	if (p->cur.kind != DT_TOK_IDENT)
		return false;
	dt_lex(p->src, p->cur.off + p->cur.len, &next);
	return next.kind == DT_TOK_ASSIGN;
}

/* A record after its '(': NAME = EXPR, … ')'; each name once. */
static dt_expr *parse_record(parser *p, uint32_t start)
{
	struct nest_save s = nest_enter(p);
	expr_vec v = { 0 };
	DT_VEC(const char *) names = { 0 };
	dt_expr *e = new_expr(p, DT_E_TUPLE, start);

	for (;;) {
		if (p->cur.kind != DT_TOK_IDENT) {
			syntax_error(p, "expected a field name in a record (NAME = value)");
			break;
		}
		const char *name = tok_text(p, &p->cur);
		dt_token nt = p->cur;
		advance(p);
		for (size_t i = 0; i < names.n; i++)
			if (!strcmp(names.v[i], name))
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&nt),
					"the record has two fields named '%s'", name);
		if (!expect(p, DT_TOK_ASSIGN, "expected '=' after a record's field name"))
			break;
		DT_VEC_PUSH(&names, name);
		DT_VEC_PUSH(&v, parse_expr(p));
		if (p->cur.kind != DT_TOK_COMMA)
			break;
		advance(p);
	}
	nest_leave(p, s);
	expect(p, DT_TOK_RPAREN, "expected ',' or ')' in a record");
	e->tuple.elems = expr_vec_finish(p, &v, &e->tuple.n);
	e->tuple.names = dt_arena_alloc(p->a, sizeof(char *) * (names.n + 1));
	for (size_t i = 0; i < names.n && i < e->tuple.n; i++)
		e->tuple.names[i] = names.v[i];
	free(names.v);
	e->span = span_from(p, start);
	return e;
}

static bool is_lvalue(const dt_expr *e)
{
	return e->kind == DT_E_VAR || e->kind == DT_E_MAP;
}

static dt_expr *parse_postfix(parser *p)
{
	uint32_t start = p->cur.off;
	dt_expr *e = parse_primary(p);
	int chain = 0;
	for (;;) {
		/* A map took its first `[…]` as its key: another one indexes the value. */
		if ((p->cur.kind == DT_TOK_DOT || p->cur.kind == DT_TOK_ARROW ||
		     p->cur.kind == DT_TOK_LBRACK) && ++chain > MAX_DEPTH) {
			/* A chain is a left-deep tree: bound it like nesting. */
			if (!p->too_deep)
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"expression nested too deeply");
			p->too_deep = p->panic = true;
			return e;
		}
		if (p->cur.kind == DT_TOK_LBRACK) {
			advance(p);
			struct nest_save s = nest_enter(p);
			dt_expr *ix = new_expr(p, DT_E_INDEX, start);
			ix->index.base = e;
			ix->index.index = parse_expr(p);
			nest_leave(p, s);
			expect(p, DT_TOK_RBRACK, "expected ']' after an index");
			ix->span = span_from(p, start);
			e = ix;
			continue;
		}
		if (p->cur.kind == DT_TOK_DOT || p->cur.kind == DT_TOK_ARROW) {
			bool arrow = p->cur.kind == DT_TOK_ARROW;
			advance(p);
			if (!arrow && p->cur.kind == DT_TOK_INT) {
				/* $t.0: a tuple element. */
				dt_expr *g = new_expr(p, DT_E_TUPLE_GET, start);
				g->tget.base = e;
				g->tget.index = p->cur.ival > UINT32_MAX ? UINT32_MAX :
									(uint32_t)p->cur.ival;
				advance(p);
				g->span = span_from(p, start);
				e = g;
				continue;
			}
			if (p->cur.kind != DT_TOK_IDENT) {
				syntax_error(p, "expected a field name");
				return e;
			}
			dt_expr *f = new_expr(p, DT_E_FIELD, start);
			f->field.base = e;
			f->field.arrow = arrow;
			f->field.field = tok_text(p, &p->cur);
			advance(p);
			f->span = span_from(p, start);
			e = f;
		} else if (p->cur.kind == DT_TOK_INC || p->cur.kind == DT_TOK_DEC) {
			dt_token t = p->cur;
			advance(p);
			if (!is_lvalue(e)) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t),
					"'%s' needs a $variable or @map operand",
					t.kind == DT_TOK_INC ? "++" : "--");
				continue;
			}
			dt_expr *u = new_expr(p, DT_E_UNOP, start);
			u->un.op = t.kind == DT_TOK_INC ? DT_UOP_POSTINC : DT_UOP_POSTDEC;
			u->un.e = e;
			e = u;
		} else {
			return e;
		}
	}
}

static dt_expr *parse_unary(parser *p)
{
	uint32_t start = p->cur.off;
	dt_token t = p->cur;
	dt_unop op;
	switch (t.kind) {
	case DT_TOK_MINUS: op = DT_UOP_NEG; break;
	case DT_TOK_BANG: op = DT_UOP_LNOT; break;
	case DT_TOK_TILDE: op = DT_UOP_BNOT; break;
	case DT_TOK_INC: op = DT_UOP_PREINC; break;
	case DT_TOK_DEC: op = DT_UOP_PREDEC; break;
	case DT_TOK_STAR: op = DT_UOP_NEG; break; /* a dereference, built below */
	case DT_TOK_AMP: op = DT_UOP_NEG; break; /* an address-of, built below */
	default: return parse_postfix(p);
	}
	if (++p->depth > MAX_DEPTH) {
		if (!p->too_deep)
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t), "expression nested too deeply");
		p->too_deep = p->panic = true;
		p->depth--;
		return error_expr(p, start);
	}
	advance(p);
	dt_expr *operand = parse_unary(p);
	p->depth--;
	if (t.kind == DT_TOK_STAR || t.kind == DT_TOK_AMP) {
		dt_expr *e = new_expr(p, t.kind == DT_TOK_STAR ? DT_E_DEREF : DT_E_ADDROF, start);
		e->un.e = operand;
		return e;
	}
	if ((op == DT_UOP_PREINC || op == DT_UOP_PREDEC) && !is_lvalue(operand)) {
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t), "'%s' needs a $variable or @map operand",
			op == DT_UOP_PREINC ? "++" : "--");
		return operand;
	}
	/* Fold `-literal` so -9223372036854775808 and lhist(x, -10, …) are plain constants. */
	if (op == DT_UOP_NEG && operand->kind == DT_E_INT) {
		operand->i.value = (uint64_t)0 - operand->i.value;
		operand->i.is_unsigned = false;
		operand->span = span_from(p, start);
		return operand;
	}
	dt_expr *e = new_expr(p, DT_E_UNOP, start);
	e->un.op = op;
	e->un.e = operand;
	return e;
}

static int binop_prec(dt_tok_kind k, dt_binop *op)
{
	switch (k) {
	case DT_TOK_LOR: *op = DT_OP_LOR; return 1;
	case DT_TOK_LAND: *op = DT_OP_LAND; return 2;
	case DT_TOK_PIPE: *op = DT_OP_BOR; return 3;
	case DT_TOK_CARET: *op = DT_OP_BXOR; return 4;
	case DT_TOK_AMP: *op = DT_OP_BAND; return 5;
	case DT_TOK_EQ: *op = DT_OP_EQ; return 6;
	case DT_TOK_NE: *op = DT_OP_NE; return 6;
	case DT_TOK_LT: *op = DT_OP_LT; return 7;
	case DT_TOK_LE: *op = DT_OP_LE; return 7;
	case DT_TOK_GT: *op = DT_OP_GT; return 7;
	case DT_TOK_GE: *op = DT_OP_GE; return 7;
	case DT_TOK_SHL: *op = DT_OP_SHL; return 8;
	case DT_TOK_SHR: *op = DT_OP_SHR; return 8;
	case DT_TOK_PLUS: *op = DT_OP_ADD; return 9;
	case DT_TOK_MINUS: *op = DT_OP_SUB; return 9;
	case DT_TOK_STAR: *op = DT_OP_MUL; return 10;
	case DT_TOK_SLASH: *op = DT_OP_DIV; return 10;
	case DT_TOK_PERCENT: *op = DT_OP_MOD; return 10;
	default: return 0;
	}
}

/* Rule 3 of the opening comment: can the token at `t` begin an operand? */
static bool starts_operand(parser *p, const dt_token *t)
{
	switch (t->kind) {
	case DT_TOK_INT: case DT_TOK_STR: case DT_TOK_VAR: case DT_TOK_POSPARAM: case DT_TOK_MAP:
	case DT_TOK_LPAREN: case DT_TOK_MINUS: case DT_TOK_BANG: case DT_TOK_TILDE:
	case DT_TOK_INC: case DT_TOK_DEC:
		return true;
	case DT_TOK_IDENT: {
		dt_builtin b;
		uint32_t argn;
		if (dt_builtin_lookup(p->src->text + t->off, t->len, &b, &argn))
			return true;
		dt_token next;
		dt_lex(p->src, t->off + t->len, &next);
		return next.kind == DT_TOK_LPAREN;
	}
	default:
		return false;
	}
}

static dt_expr *parse_binary(parser *p, int min_prec)
{
	uint32_t start = p->cur.off;
	if (++p->depth > MAX_DEPTH) {
		if (!p->too_deep)
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "expression nested too deeply");
		p->too_deep = p->panic = true;
		p->depth--;
		return error_expr(p, start);
	}
	dt_expr *l = parse_unary(p);
	/* A left-assoc chain `a + b + c …` builds a tree as deep as it is long, and the later
	 * passes recurse over it: count each link against the same depth budget. */
	int links = 0;
	for (;;) {
		dt_binop op;
		int prec = binop_prec(p->cur.kind, &op);
		if (!prec || prec < min_prec)
			break;
		if (p->depth + links >= MAX_DEPTH) {
			if (!p->too_deep)
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"expression nested too deeply");
			p->too_deep = p->panic = true;
			break;
		}
		if (op == DT_OP_DIV && p->in_pred)
			break; /* the predicate's closing '/' */
		if (op == DT_OP_GT && p->angle_top) {
			dt_token next;
			dt_lex(p->src, p->cur.off + p->cur.len, &next);
			if (!starts_operand(p, &next))
				break; /* closes the `<` block */
			p->have_gt = true;
			p->last_gt = tok_span(&p->cur);
		}
		advance(p);
		links++;
		p->depth += links;
		dt_expr *r = parse_binary(p, prec + 1);
		p->depth -= links;
		dt_expr *e = new_expr(p, DT_E_BINOP, start);
		e->bin.op = op;
		e->bin.l = l;
		e->bin.r = r;
		l = e;
	}
	p->depth--;
	return l;
}

static dt_expr *parse_expr(parser *p)
{
	uint32_t start = p->cur.off;
	dt_expr *c = parse_binary(p, 1);
	if (p->cur.kind != DT_TOK_QUESTION)
		return c;
	if (++p->depth > MAX_DEPTH) {
		if (!p->too_deep)
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "expression nested too deeply");
		p->too_deep = p->panic = true;
		p->depth--;
		return c;
	}
	advance(p);
	dt_expr *e = new_expr(p, DT_E_TERNARY, start);
	e->tern.cond = c;
	/* `a ?: b` (bpftrace's short form): a when it is not zero, else b; a is evaluated once. */
	if (p->cur.kind == DT_TOK_COLON)
		advance(p);
	else {
		e->tern.t = parse_expr(p);
		expect(p, DT_TOK_COLON, "expected ':' in conditional expression");
	}
	e->tern.f = parse_expr(p);
	p->depth--;
	e->span = span_from(p, start);
	return e;
}

/* ---------------------------------------------------------------- statements */

static dt_stmt *parse_stmt(parser *p);

static dt_stmt *new_stmt(parser *p, dt_stmt_kind k, uint32_t start)
{
	dt_stmt *s = dt_arena_alloc(p->a, sizeof(*s));
	s->kind = k;
	s->span = span_from(p, start);
	return s;
}

/* Skips to just past the next `;` or to a `}` / `>` / end that may close something, so the
 * next statement starts clean. Brace-balanced so a broken `if (…) {…}` is skipped whole. */
static void sync_stmt(parser *p)
{
	int depth = 0;
	while (p->cur.kind != DT_TOK_EOF) {
		if (p->cur.kind == DT_TOK_LBRACE)
			depth++;
		else if (p->cur.kind == DT_TOK_RBRACE) {
			if (depth == 0)
				break;
			depth--;
		} else if (depth == 0 && p->cur.kind == DT_TOK_SEMI) {
			advance(p);
			break;
		} else if (depth == 0 && p->cur.kind == DT_TOK_GT && p->angle_top) {
			break;
		}
		advance(p);
	}
	/* At the end of input the error already said what is missing: stay quiet. */
	p->panic = p->cur.kind == DT_TOK_EOF;
}

/* `{ stmts }` — the `{` is current. *tail (when asked) is set when the last statement is an
 * expression with no ';' before the '}': a block expression's value. */
static dt_stmt_list parse_brace_block_tail(parser *p, bool *tail)
{
	stmt_vec v = { 0 };
	if (tail)
		*tail = false;
	bool saved_top = p->angle_top;
	p->angle_top = false;
	if (!expect(p, DT_TOK_LBRACE, "expected '{'")) {
		p->angle_top = saved_top;
		return stmt_vec_finish(p, &v);
	}
	if (++p->depth > MAX_DEPTH) {
		if (!p->too_deep)
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur), "blocks nested too deeply");
		p->too_deep = p->panic = true;
	}
	while (p->cur.kind != DT_TOK_RBRACE && p->cur.kind != DT_TOK_EOF && !p->too_deep) {
		uint32_t before = p->cur.off;
		dt_stmt *s = parse_stmt(p);
		if (s)
			DT_VEC_PUSH(&v, s);
		bool compound = s && (s->kind == DT_S_IF || s->kind == DT_S_UNROLL ||
				      s->kind == DT_S_WHILE || s->kind == DT_S_BLOCK ||
				      s->kind == DT_S_FOR);
		if (p->panic || p->cur.off == before) {
			sync_stmt(p);
			continue;
		}
		if (tail)
			*tail = s && s->kind == DT_S_EXPR && p->cur.kind == DT_TOK_RBRACE;
		if (p->cur.kind == DT_TOK_SEMI)
			advance(p);
		else if (p->cur.kind != DT_TOK_RBRACE && !compound) {
			missing_after(p, "expected ';' or '}' after statement");
			if (p->cur.kind == DT_TOK_GT && saved_top)
				dt_diag_hint(p->d, "a '>' inside '{ }' is a comparison; close the "
						   "'{' before the '<' block's '>'");
		}
		if (p->panic || p->cur.off == before)
			sync_stmt(p);
	}
	p->depth--;
	p->angle_top = saved_top;
	if (p->cur.kind == DT_TOK_EOF)
		syntax_error(p, "expected '}'");
	else
		advance(p);
	return stmt_vec_finish(p, &v);
}

static dt_stmt_list parse_brace_block(parser *p)
{
	return parse_brace_block_tail(p, NULL);
}

/* A block expression `{ stmts; value }` (the `{` is current): a last expression with no ';'
 * is its value; without one the block has none. */
static dt_expr *parse_block_expr(parser *p)
{
	uint32_t start = p->cur.off;
	bool tail;
	dt_stmt_list l = parse_brace_block_tail(p, &tail);
	dt_expr *e = new_expr(p, DT_E_BLOCK, start);
	if (tail && l.n) {
		e->block.value = l.v[l.n - 1]->expr;
		l.n--;
	} else if (l.n && l.v[l.n - 1]->kind == DT_S_IF &&
		   (e->block.value = if_value(p, l.v[l.n - 1]))) {
		l.n--; /* `{ …; if (c) { a } else { b } }`: its value is the if's */
	}
	e->block.stmts = l;
	return e;
}

/* The condition after `if` or `while` (the keyword is current): `(cond)` as C and 0.17 write
 * it, or a bare `cond` before the block as bpftrace now also accepts (`if $x > 1 { … }`); the
 * parentheses are then simply part of the expression. */
static dt_expr *parse_cond(parser *p, const char *kw)
{
	advance(p);
	if (p->cur.kind == DT_TOK_LBRACE) {
		syntax_error(p, kw[0] == 'i' ? "expected a condition after 'if'"
					     : "expected a condition after 'while'");
		return error_expr(p, p->cur.off);
	}
	struct nest_save ns = nest_enter(p);
	dt_expr *e = parse_expr(p);
	nest_leave(p, ns);
	return e;
}

static dt_stmt *parse_if(parser *p, uint32_t start)
{
	dt_stmt *s = new_stmt(p, DT_S_IF, start);
	/* bpftrace's `if comptime (cond)`: `comptime` then the condition. */
	dt_token next;
	dt_lex(p->src, p->cur.off + p->cur.len, &next);
	if (is_kw(p, &next, "comptime")) {
		advance(p);
		s->if_.comptime = true;
	}
	s->if_.cond = parse_cond(p, "if");
	if (p->panic)
		return s;
	s->if_.then = parse_brace_block_tail(p, &s->if_.then_value);
	if (is_kw(p, &p->cur, "else")) {
		advance(p);
		if (is_kw(p, &p->cur, "if")) {
			stmt_vec v = { 0 };
			uint32_t st = p->cur.off;
			if (++p->depth > MAX_DEPTH) {
				if (!p->too_deep)
					dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
						"'else if' chain too long");
				p->too_deep = p->panic = true;
			} else {
				DT_VEC_PUSH(&v, parse_if(p, st));
			}
			p->depth--;
			s->if_.els = stmt_vec_finish(p, &v);
		} else {
			s->if_.els = parse_brace_block_tail(p, &s->if_.els_value);
		}
	}
	s->span = span_from(p, start);
	return s;
}

/* A branch of an `if` used as a value: its statements, then its last expression as the value. */
static dt_expr *branch_value(parser *p, dt_stmt_list l, bool has_value)
{
	dt_expr *e;
	if (has_value && l.n) {
		uint32_t at = l.v[0]->span.off; /* from its first statement */
		e = new_expr(p, DT_E_BLOCK, at);
		e->block.value = l.v[l.n - 1]->expr;
		l.n--;
		e->block.stmts = l;
		e->span = (dt_span){ at, e->block.value->span.off + e->block.value->span.len - at };
		return e;
	}
	if (l.n == 1 && l.v[0]->kind == DT_S_IF) /* `else if …` */
		return if_value(p, l.v[0]);
	return NULL;
}

/* `if (c) { …; a } else { …; b }` as a value (bpftrace's current language): the ternary of the
 * two branches as block expressions; NULL when it has no else or a branch has no value. */
static dt_expr *if_value(parser *p, const dt_stmt *s)
{
	if (!s->if_.els.n)
		return NULL;
	dt_expr *t = branch_value(p, s->if_.then, s->if_.then_value);
	dt_expr *f = t ? branch_value(p, s->if_.els, s->if_.els_value) : NULL;
	if (!f)
		return NULL;
	dt_expr *e = new_expr(p, DT_E_TERNARY, s->span.off);
	e->tern.cond = s->if_.cond;
	e->tern.t = t;
	e->tern.f = f;
	e->tern.comptime = s->if_.comptime;
	e->span = s->span;
	return e;
}

/* `let $x;`, `let $x = value;`, `let $x: TYPE;`, `let $x: TYPE = value;` ('let' is current). */
static dt_stmt *parse_let(parser *p, uint32_t start)
{
	dt_stmt *s = new_stmt(p, DT_S_ASSIGN, start);
	s->assign.decl = true;
	advance(p);
	if (p->cur.kind != DT_TOK_VAR) {
		syntax_error(p, p->cur.kind == DT_TOK_MAP
					? "expected a $variable after 'let' (maps are declared at "
					  "the top level: let @name = hash(N);)"
					: "expected a $variable after 'let'");
		return s;
	}
	s->assign.target = parse_primary(p);
	if (p->cur.kind == DT_TOK_COLON) {
		advance(p);
		if (!parse_ctype(p, &s->assign.decl_type))
			return s;
	}
	if (p->cur.kind == DT_TOK_ASSIGN) {
		advance(p);
		s->assign.value = parse_expr(p);
	}
	s->span = span_from(p, start);
	return s;
}

/* `for ($v : @map) { … }` or `for ($v : START..END) { … }` ('for' is current), the parentheses
 * optional as in bpftrace's current grammar (`for $j : 0..n { … }`, tools/opensnoop.bt). START
 * and END are unary expressions, as bpftrace reads them: `(1+1)..(2*4)`, `$a..$b`, `0..@n`. */
static dt_stmt *parse_for(parser *p, uint32_t start)
{
	dt_stmt *s = new_stmt(p, DT_S_FOR, start);
	advance(p);
	bool paren = p->cur.kind != DT_TOK_VAR;
	if (paren && !expect(p, DT_TOK_LPAREN, "expected '(' or a $variable after 'for'"))
		return s;
	if (p->cur.kind != DT_TOK_VAR) {
		syntax_error(p, "expected a $variable in the for loop");
		return s;
	}
	s->for_.var = parse_primary(p);
	if (!expect(p, DT_TOK_COLON, "expected ':' after the for loop's variable"))
		return s;
	dt_expr *e = parse_unary(p);
	if (p->panic)
		return s;
	if (p->cur.kind == DT_TOK_DOTDOT) {
		advance(p);
		s->for_.start = e;
		s->for_.end = parse_unary(p);
		if (p->panic)
			return s;
	} else if (e->kind == DT_E_MAP && !e->map.nkeys) {
		s->for_.map = e;
	} else if (p->cur.kind == (paren ? DT_TOK_RPAREN : DT_TOK_LBRACE)) {
		dt_diag(p->d, DT_DIAG_ERROR, e->span,
			"a for loop iterates over a map (@name) or a range (START..END)");
		p->panic = true;
		return s;
	}
	bool closed = paren ? expect(p, DT_TOK_RPAREN, s->for_.start ? "expected ')' after the range"
								  : "expected ')' or '..' in the for loop")
			    : p->cur.kind == DT_TOK_LBRACE;
	if (!paren && !closed)
		syntax_error(p, s->for_.start ? "expected '{' after the range"
					      : "expected '..' or '{' in the for loop");
	if (!closed) {
		if (s->for_.start || e->kind != DT_E_MAP)
			dt_diag_hint(p->d, "the ends of a range are unary expressions: parenthesise "
					   "others, as in (1+1)..(2*4)");
		return s;
	}
	s->for_.body = parse_brace_block(p);
	s->span = span_from(p, start);
	return s;
}

static bool kw_then(parser *p, const char *kw, dt_tok_kind k);

static dt_stmt *parse_stmt(parser *p)
{
	uint32_t start = p->cur.off;
	p->panic = false;
	if (is_kw(p, &p->cur, "if"))
		return parse_if(p, start);
	if (kw_then(p, "import", DT_TOK_STR)) {
		/* `import "x.bpf.c";` in a block (bpftrace's statement import): dt_source_imports
		 * brought the C in; nothing runs here. */
		advance(p);
		advance(p);
		expect(p, DT_TOK_SEMI, "expected ';' after the import path");
		return new_stmt(p, DT_S_BLOCK, start);
	}
	if (is_kw(p, &p->cur, "unroll")) {
		advance(p);
		dt_stmt *s = new_stmt(p, DT_S_UNROLL, start);
		expect(p, DT_TOK_LPAREN, "expected '(' after 'unroll'");
		/* The count is checked by dt_check: a positional parameter is known only there. */
		if (p->cur.kind == DT_TOK_INT || p->cur.kind == DT_TOK_POSPARAM)
			s->unroll.count_expr = parse_primary(p);
		else
			syntax_error(p, "expected an integer or a positional parameter in unroll");
		expect(p, DT_TOK_RPAREN, "expected ')' after the unroll count");
		if (p->panic)
			return s;
		s->unroll.body = parse_brace_block(p);
		s->span = span_from(p, start);
		return s;
	}
	if (is_kw(p, &p->cur, "while")) {
		dt_stmt *s = new_stmt(p, DT_S_WHILE, start);
		s->while_.cond = parse_cond(p, "while");
		if (p->panic)
			return s;
		s->while_.body = parse_brace_block(p);
		s->span = span_from(p, start);
		return s;
	}
	if (is_kw(p, &p->cur, "for"))
		return parse_for(p, start);
	if (is_kw(p, &p->cur, "return")) {
		advance(p);
		dt_stmt *s = new_stmt(p, DT_S_RETURN, start);
		/* `return EXPR;`: the program's return value (a test probe's verdict). */
		if (p->cur.kind != DT_TOK_SEMI && p->cur.kind != DT_TOK_RBRACE &&
		    p->cur.kind != DT_TOK_EOF && !(p->cur.kind == DT_TOK_GT && p->angle_top)) {
			s->expr = parse_expr(p);
			s->span = span_from(p, start);
		}
		return s;
	}
	if (is_kw(p, &p->cur, "let"))
		return parse_let(p, start);
	if (is_kw(p, &p->cur, "break") || is_kw(p, &p->cur, "continue")) {
		dt_stmt_kind k = is_kw(p, &p->cur, "break") ? DT_S_BREAK : DT_S_CONTINUE;
		advance(p);
		return new_stmt(p, k, start);
	}
	if (is_kw(p, &p->cur, "else")) {
		syntax_error(p, "'else' without a matching 'if'");
		return NULL;
	}
	if (p->cur.kind == DT_TOK_LBRACE) {
		dt_stmt *s = new_stmt(p, DT_S_BLOCK, start);
		s->block = parse_brace_block(p);
		s->span = span_from(p, start);
		return s;
	}
	dt_expr *e = parse_expr(p);
	dt_binop op = DT_OP_NONE;
	switch (p->cur.kind) {
	case DT_TOK_ASSIGN: op = DT_OP_NONE; break;
	case DT_TOK_ADD_ASSIGN: op = DT_OP_ADD; break;
	case DT_TOK_SUB_ASSIGN: op = DT_OP_SUB; break;
	case DT_TOK_MUL_ASSIGN: op = DT_OP_MUL; break;
	case DT_TOK_DIV_ASSIGN: op = DT_OP_DIV; break;
	case DT_TOK_MOD_ASSIGN: op = DT_OP_MOD; break;
	case DT_TOK_AND_ASSIGN: op = DT_OP_BAND; break;
	case DT_TOK_OR_ASSIGN: op = DT_OP_BOR; break;
	case DT_TOK_XOR_ASSIGN: op = DT_OP_BXOR; break;
	case DT_TOK_SHL_ASSIGN: op = DT_OP_SHL; break;
	case DT_TOK_SHR_ASSIGN: op = DT_OP_SHR; break;
	default: {
		dt_stmt *s = new_stmt(p, DT_S_EXPR, start);
		s->expr = e;
		return s;
	}
	}
	dt_token optok = p->cur;
	advance(p);
	if (e->kind == DT_E_IDENT && !strcmp(e->ident.name, "_") && op == DT_OP_NONE) {
		/* `_ = expr;`: the discard, an expression statement that means to drop its value. */
		dt_stmt *s = new_stmt(p, DT_S_EXPR, start);
		s->discard = true;
		s->expr = parse_expr(p);
		s->span = span_from(p, start);
		return s;
	}
	if (!is_lvalue(e) && !p->panic) {
		dt_diag(p->d, DT_DIAG_ERROR, e->span, "cannot assign to this expression");
		dt_diag_hint(p->d, "assign to a $variable or an @map");
	}
	(void)optok;
	dt_stmt *s = new_stmt(p, DT_S_ASSIGN, start);
	s->assign.target = e;
	s->assign.op = op;
	s->assign.value = parse_expr(p);
	s->span = span_from(p, start);
	return s;
}

/* `< stmts >` — the `<` is current. */
static dt_stmt_list parse_angle_block(parser *p)
{
	stmt_vec v = { 0 };
	dt_token open = p->cur;
	advance(p);
	p->angle_top = true;
	p->have_gt = false;
	for (;;) {
		if (p->cur.kind == DT_TOK_GT) {
			advance(p);
			break;
		}
		if (p->cur.kind == DT_TOK_EOF) {
			if (!p->panic) {
				unsigned l, c;
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&open),
					"unterminated '<' block: expected '>'");
				if (p->have_gt) {
					dt_source_linecol(p->src, p->last_gt.off, &l, &c);
					dt_diag_hint(p->d, "the '>' at %u:%u was read as a comparison "
							   "because an operand follows it; to close the "
							   "block there, end the statement with ';' first", l, c);
				}
			}
			break;
		}
		uint32_t before = p->cur.off;
		dt_stmt *s = parse_stmt(p);
		if (s)
			DT_VEC_PUSH(&v, s);
		bool compound = s && (s->kind == DT_S_IF || s->kind == DT_S_UNROLL ||
				      s->kind == DT_S_WHILE || s->kind == DT_S_BLOCK ||
				      s->kind == DT_S_FOR);
		if (p->panic || p->cur.off == before) {
			sync_stmt(p);
		} else if (p->cur.kind == DT_TOK_SEMI) {
			advance(p);
		} else if (p->cur.kind != DT_TOK_GT && p->cur.kind != DT_TOK_RBRACE && !compound) {
			missing_after(p, "expected ';' or '>' after statement");
			if (p->have_gt) {
				unsigned l, c;
				dt_source_linecol(p->src, p->last_gt.off, &l, &c);
				dt_diag_hint(p->d, "the '>' at %u:%u was read as a comparison because "
						   "an operand follows it; to close the block there, end "
						   "the statement with ';' first", l, c);
			}
		}
		if (p->panic || p->cur.off == before)
			sync_stmt(p);
		if (p->cur.kind == DT_TOK_RBRACE) {
			/* A stray '}' cannot belong to this block: say so and step over it. */
			if (!p->panic) {
				dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
					"unexpected '}' in a block opened with '<'");
				dt_diag_hint(p->d, "close a '<' block with '>'");
			}
			advance(p);
		}
	}
	p->angle_top = false;
	return stmt_vec_finish(p, &v);
}

/* ---------------------------------------------------------------- attach points */

/* v times ten to the power of the decimal digits s[0..n), if it fits in 64 bits. */
static bool scale_pow10(const char *s, size_t n, uint64_t v, uint64_t *out)
{
	unsigned exp = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		exp = exp < 100 ? exp * 10 + (unsigned)(s[i] - '0') : exp;
	}
	for (unsigned k = 0; v && k < exp; k++) {
		if (v > UINT64_MAX / 10)
			return false;
		v *= 10;
	}
	*out = v;
	return n > 0;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (!n)
		return false;
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	for (; i < n; i++) {
		int c = (unsigned char)s[i], d;
		if (c == '_')
			continue;
		if (isdigit(c))
			d = c - '0';
		else if (base == 16 && isxdigit(c))
			d = tolower(c) - 'a' + 10;
		else if (base == 10 && (c == 'e' || c == 'E') && i > 0 && i + 1 < n)
			/* bpftrace's scientific integers, as in expressions: software:cpu:1e6. */
			return scale_pow10(s + i + 1, n - i - 1, v, out);
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return false;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return true;
}

/* `sym` or `sym+off`; false if the offset is malformed. */
static const char *unquote_field(parser *p, const char *s, size_t n);

static bool split_offset(parser *p, dt_attach *at, const char *s, size_t n)
{
	if (n && s[0] == '"') {
		/* `"sym"` or `"sym"+off` (bpftrace's quoted symbol: C++ names may hold ':' or
		 * '+'): the offset follows the closing quote. */
		size_t close = 1;
		while (close < n && s[close] != '"')
			close += s[close] == '\\' ? 2 : 1;
		if (close >= n)
			return false;
		at->func = unquote_field(p, s, close + 1);
		if (close + 1 == n)
			return true;
		at->has_offset = true;
		return s[close + 1] == '+' && at->func[0] &&
		       parse_u64(s + close + 2, n - close - 2, &at->offset);
	}
	const char *plus = memchr(s, '+', n);
	if (!plus) {
		at->func = dt_arena_strndup(p->a, s, n);
		return true;
	}
	at->func = dt_arena_strndup(p->a, s, (size_t)(plus - s));
	at->has_offset = true;
	return parse_u64(plus + 1, n - (size_t)(plus - s) - 1, &at->offset) && plus > s;
}

/* uprobe:BIN@FILE:LINE[:COL], whose field BIN@FILE (b, n) holds '@' at `atsign`: BIN, FILE,
 * LINE and COL into `at`, LINE and COL from the nf fields after it. Only uprobe takes it
 * (bpftrace's rule: a return has no line). */
static bool parse_src_location(parser *p, dt_attach *at, const char *b, size_t n,
			       const char *atsign, const char *const *f, const size_t *fl, size_t nf)
{
	uint64_t line = 0, col = 0;

	if (at->provider != DT_P_UPROBE) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span, "%s: a source location (@FILE:LINE) needs "
			"uprobe: a function returns from no line", at->text);
		dt_diag_hint(p->d, "put the uprobe on the line of the return statement");
		return true; /* said: not "malformed" as well */
	}
	if (nf < 1 || nf > 2)
		return false;
	at->target = dt_arena_strndup(p->a, b, (size_t)(atsign - b));
	at->src_file = dt_arena_strndup(p->a, atsign + 1, n - (size_t)(atsign - b) - 1);
	if (strpbrk(at->target, "*?")) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span, "%s: a source location needs one binary, "
			"not a pattern", at->text);
		return true; /* said: not "malformed" as well */
	}
	if (!*at->target || !*at->src_file || !parse_u64(f[0], fl[0], &line) || !line ||
	    line > UINT32_MAX || (nf == 2 && (!parse_u64(f[1], fl[1], &col) || !col ||
					      col > UINT32_MAX)))
		return false;
	at->src_line = (uint32_t)line;
	at->src_col = (uint32_t)col;
	return true;
}

/* A field of an attach point, without its quotes when it is quoted ("\"probe1\"" is the name
 * `"probe1"`, backslash escapes taken literally); NULL when the quotes do not close it. */
static const char *unquote_field(parser *p, const char *s, size_t n)
{
	if (!n || s[0] != '"')
		return dt_arena_strndup(p->a, s, n);
	if (n < 2 || s[n - 1] != '"')
		return NULL;
	char *out = dt_arena_alloc(p->a, n);
	size_t o = 0;
	for (size_t i = 1; i + 1 < n; i++) {
		if (s[i] == '\\' && i + 2 < n)
			i++;
		out[o++] = s[i];
	}
	out[o] = 0;
	return out;
}

static const char *attach_form(dt_provider pr)
{
	switch (pr) {
	case DT_P_BEGIN: return "BEGIN or begin";
	case DT_P_END: return "END or end";
	case DT_P_INTERVAL: return "interval:s|ms|us|hz:N or interval:PERIOD";
	case DT_P_PROFILE: return "profile:hz:N, profile:s|ms|us:N or profile:PERIOD";
	case DT_P_UPROBE: return "uprobe:PATH_OR_LIB:SYMBOL[+OFFSET] or "
				 "uprobe:PATH_OR_LIB@FILE:LINE[:COLUMN]";
	case DT_P_URETPROBE: return "uretprobe:PATH_OR_LIB:SYMBOL";
	case DT_P_KPROBE: return "kprobe:[MODULE:]SYMBOL[+OFFSET]";
	case DT_P_KRETPROBE: return "kretprobe:[MODULE:]SYMBOL";
	case DT_P_TRACEPOINT: return "tracepoint:SUBSYSTEM:EVENT";
	case DT_P_SOFTWARE: return "software:EVENT[:PERIOD]";
	case DT_P_HARDWARE: return "hardware:EVENT[:PERIOD]";
	case DT_P_XPROBE: return "xprobe:PATH_OR_LIB:SYMBOL[:SAMPLE_ONE_IN_N]";
	case DT_P_USDT: return "usdt:PATH_OR_LIB:[PROVIDER:]NAME";
	case DT_P_WATCHPOINT: return "watchpoint:ADDRESS:LENGTH:MODE or "
				     "watchpoint:FUNCTION+argN:LENGTH:MODE";
	case DT_P_ASYNCWATCHPOINT: return "asyncwatchpoint:FUNCTION+argN:LENGTH:MODE";
	case DT_P_RAWTRACEPOINT: return "rawtracepoint[:MODULE]:EVENT";
	case DT_P_FENTRY: return "fentry[:MODULE]:FUNCTION";
	case DT_P_FEXIT: return "fexit[:MODULE]:FUNCTION";
	case DT_P_ITER: return "iter:task|task_file|task_vma";
	case DT_P_SELF: return "self:signal:SIGUSR1";
	case DT_P_TEST: return "test:NAME";
	case DT_P_BENCH: return "bench:NAME";
	default: return "?";
	}
}

/* bpftrace's `interval:1s`, `profile:100ms`, `interval:1000000` (no unit: nanoseconds): a count
 * with a duration suffix, kept as a period in microseconds as bpftrace keeps it (so 1us is the
 * least, and nanoseconds below a microsecond are dropped). */
static dt_attach *parse_period(parser *p, dt_attach *at, const char *s, size_t n)
{
	size_t digits = 0;
	uint64_t mul = 1, v;
	while (digits < n && (isdigit((unsigned char)s[digits]) || s[digits] == '_'))
		digits++;
	bool ok = digits && parse_u64(s, digits, &v) &&
		  (digits == n || dt_duration_suffix(s + digits, n - digits, &mul));
	if (!ok) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span, "malformed %s attach point '%s'",
			dt_provider_name(at->provider), at->text);
		dt_diag_hint(p->d, "expected %s, or a period such as %s:1s, %s:100ms or %s:N "
				   "(nanoseconds)", attach_form(at->provider),
			     dt_provider_name(at->provider), dt_provider_name(at->provider),
			     dt_provider_name(at->provider));
		return at;
	}
	if (v > UINT64_MAX / mul) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span, "%s period is too long",
			dt_provider_name(at->provider));
		return at;
	}
	v *= mul;
	if (v < 1000) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span,
			"%s period must be at least 1us (1000 ns), found %llu ns",
			dt_provider_name(at->provider), (unsigned long long)v);
		if (digits == n)
			dt_diag_hint(p->d, "a number without a unit is nanoseconds; %s:hz:%.*s fires "
					   "%.*s times a second", dt_provider_name(at->provider),
				     (int)n, s, (int)n, s);
		return at;
	}
	at->unit = DT_UNIT_US;
	at->rate = v / 1000;
	return at;
}

/* The attach point's text with each `$N` replaced by the Nth positional parameter, as bpftrace
 * does (`interval:ms:$1`, `BEG$1`); NULL, said, when a `$N` has no parameter. */
static char *attach_params(parser *p, const dt_token *t)
{
	const char *s = p->src->text + t->off;
	DT_VEC(char) out = { 0 };
	char *text;

	for (uint32_t i = 0; i < t->len; i++) {
		uint32_t j = i + 1;
		unsigned long long k = 0;

		if (s[i] != '$') {
			DT_VEC_PUSH(&out, s[i]);
			continue;
		}
		while (j < t->len && isdigit((unsigned char)s[j]) && k <= UINT32_MAX)
			k = k * 10 + (unsigned)(s[j++] - '0');
		if (k < 1 || k > p->src->nparams) {
			dt_diag(p->d, DT_DIAG_ERROR, (dt_span){ t->off + i, j - i },
				"no positional parameter %.*s for this attach point (%u given)",
				(int)(j - i), s + i, p->src->nparams);
			dt_diag_hint(p->d, "give it after the program: dwarftrace -e '...' VALUE");
			free(out.v);
			return NULL;
		}
		for (const char *v = p->src->params[k - 1]; *v; v++)
			DT_VEC_PUSH(&out, *v);
		i = j - 1;
	}
	text = dt_arena_strndup(p->a, out.v ? out.v : "", out.n);
	free(out.v);
	return text;
}

static dt_attach *parse_attach(parser *p, const dt_token *t)
{
	dt_attach *at = dt_arena_alloc(p->a, sizeof(*at));
	const char *s = p->src->text + t->off;
	size_t n = t->len;
	at->span = tok_span(t);
	if (memchr(s, '$', n)) {
		char *text = attach_params(p, t);

		if (!text)
			return at;
		s = text;
		n = strlen(text);
	}
	/* `NAME=PROVIDER:…` (bpftrace's named probe): NAME is what `probe` says; the rest is
	 * the attach point as ever (dt_lex_attach took the prefix in). */
	const char *eq = memchr(s, '=', n), *colon = memchr(s, ':', n);
	if (eq && eq > s && (!colon || eq < colon)) {
		at->name = dt_arena_strndup(p->a, s, (size_t)(eq - s));
		n -= (size_t)(eq + 1 - s);
		s = eq + 1;
	}
	at->text = dt_arena_strndup(p->a, s, n);
	/* Fields split on ':'; f[0] is the provider. */
	const char *f[8] = { 0 };
	size_t fl[8] = { 0 };
	size_t nf = 0;
	bool quoted = false;
	for (size_t i = 0, b = 0; i <= n; i++) {
		if (i < n && s[i] == '"')
			quoted = !quoted;
		else if (i < n && quoted && s[i] == '\\')
			i++; /* an escaped character inside quotes */
		else if (i == n || (s[i] == ':' && !quoted)) {
			if (nf < 8) {
				f[nf] = s + b;
				fl[nf] = i - b;
			}
			nf++;
			b = i + 1;
		}
	}
	if (!dt_provider_lookup(f[0], fl[0], &at->provider)) {
		dt_diag(p->d, DT_DIAG_ERROR,
			(dt_span){ t->off, fl[0] && fl[0] <= t->len ? (uint32_t)fl[0] : 1 },
			"unknown probe type '%.*s'", (int)fl[0], f[0]);
		const char *sugg = dt_diag_hint_wanted(p->d)
					   ? dt_closest(f[0], fl[0], dt_provider_names())
					   : NULL;
		if (sugg)
			dt_diag_hint(p->d, "did you mean '%s'?", sugg);
		else
			dt_diag_hint(p->d, "probe types: BEGIN END interval profile uprobe uretprobe "
					   "kprobe kretprobe tracepoint software hardware xprobe usdt "
					   "watchpoint asyncwatchpoint rawtracepoint fentry fexit iter "
					   "self test bench");
		return at;
	}
	bool ok = true;
	switch (at->provider) {
	case DT_P_BEGIN: case DT_P_END:
		ok = nf == 1;
		break;
	case DT_P_INTERVAL: case DT_P_PROFILE:
		if (nf == 2)
			return parse_period(p, at, f[1], fl[1]);
		ok = nf == 3 && parse_u64(f[2], fl[2], &at->rate);
		if (ok) {
			if (fl[1] == 1 && f[1][0] == 's')
				at->unit = DT_UNIT_S;
			else if (fl[1] == 2 && !memcmp(f[1], "ms", 2))
				at->unit = DT_UNIT_MS;
			else if (fl[1] == 2 && !memcmp(f[1], "us", 2))
				at->unit = DT_UNIT_US;
			else if (fl[1] == 2 && !memcmp(f[1], "hz", 2))
				at->unit = DT_UNIT_HZ;
			else
				ok = false;
		}
		break;
	case DT_P_UPROBE: case DT_P_URETPROBE: {
		if (nf < 3 || !fl[1]) {
			ok = false;
			break;
		}
		at->target = unquote_field(p, f[1], fl[1]);
		if (!at->target) {
			ok = false;
			break;
		}
		const char *atsign = f[1][0] != '"' ? memchr(f[1], '@', fl[1]) : NULL;
		if (atsign) {
			ok = parse_src_location(p, at, f[1], fl[1], atsign, f + 2, fl + 2, nf - 2);
			break;
		}
		/* The symbol is everything after the path: C++ names may hold "::". */
		const char *sym = f[2];
		size_t sl = (size_t)(s + n - sym);
		ok = sl > 0 && split_offset(p, at, sym, sl) &&
		     !(at->has_offset && at->provider == DT_P_URETPROBE);
		break;
	}
	case DT_P_XPROBE: {
		if (nf < 3 || !fl[1]) {
			ok = false;
			break;
		}
		at->target = dt_arena_strndup(p->a, f[1], fl[1]);
		/* The symbol is everything after the path, as in uprobes (C++ "::"), except a last
		 * field of digits: no symbol ends in ":123", so that is the sampling period. */
		const char *sym = f[2];
		size_t sl = (size_t)(s + n - sym);
		const char *last = NULL;
		for (const char *q = sym; q < s + n; q++)
			if (*q == ':')
				last = q;
		if (nf > 3 && last && last + 1 < s + n && last[-1] != ':') {
			size_t dl = (size_t)(s + n - last - 1);
			bool digits = true;
			for (size_t i = 0; i < dl; i++)
				digits = digits && last[1 + i] >= '0' && last[1 + i] <= '9';
			if (digits) {
				ok = parse_u64(last + 1, dl, &at->rate) && at->rate > 0;
				sl = (size_t)(last - sym);
			}
		}
		at->func = ok && sl ? dt_arena_strndup(p->a, sym, sl) : NULL;
		ok = ok && sl > 0;
		break;
	}
	case DT_P_USDT:
		/* usdt:BIN:NAME, usdt:BIN:PROVIDER:NAME; BIN may be empty with -p (every object of
		 * the process), and an empty PROVIDER means any. Fields may be quoted. */
		ok = nf >= 2 && nf <= 4 && fl[nf - 1];
		if (ok) {
			/* usdt:NAME alone (bpftrace's `usdt:*`): every object, as an empty BIN. */
			at->target = nf == 2 ? "" : unquote_field(p, f[1], fl[1]);
			at->usdt_provider = nf == 4 && fl[2] ? unquote_field(p, f[2], fl[2]) : NULL;
			at->func = unquote_field(p, f[nf - 1], fl[nf - 1]);
			ok = at->target && at->func && (nf != 4 || !fl[2] || at->usdt_provider) &&
			     *at->func;
		}
		break;
	case DT_P_WATCHPOINT: case DT_P_ASYNCWATCHPOINT: {
		/* ADDR:LEN:MODE or FUNC+argN:LEN:MODE; the checker judges the values. */
		const char *plus = nf == 4 ? memchr(f[1], '+', fl[1]) : NULL;
		ok = nf == 4 && fl[1] && parse_u64(f[2], fl[2], &at->wp_len);
		if (ok && plus) {
			size_t an = fl[1] - (size_t)(plus - f[1]) - 1;
			uint64_t argn = 0;
			ok = plus > f[1] && an > 3 && !memcmp(plus + 1, "arg", 3) &&
			     parse_u64(plus + 4, an - 3, &argn) && argn < 1000;
			at->wp_arg = (uint32_t)argn;
			at->func = dt_arena_strndup(p->a, f[1], (size_t)(plus - f[1]));
		} else if (ok) {
			ok = parse_u64(f[1], fl[1], &at->addr);
		}
		if (ok)
			at->wp_mode = dt_arena_strndup(p->a, f[3], fl[3]);
		break;
	}
	case DT_P_RAWTRACEPOINT: case DT_P_FENTRY: case DT_P_FEXIT:
		/* [MODULE:]NAME */
		ok = (nf == 2 || nf == 3) && fl[nf - 1] && fl[1];
		if (ok) {
			if (nf == 3)
				at->target = dt_arena_strndup(p->a, f[1], fl[1]);
			at->func = dt_arena_strndup(p->a, f[nf - 1], fl[nf - 1]);
		}
		break;
	case DT_P_ITER:
		ok = nf == 2 && fl[1];
		if (ok)
			at->func = dt_arena_strndup(p->a, f[1], fl[1]);
		break;
	case DT_P_SELF:
		/* self:TRIGGER:WHICH; the checker says which triggers exist. */
		ok = nf == 3 && fl[1] && fl[2];
		if (ok) {
			at->target = dt_arena_strndup(p->a, f[1], fl[1]);
			at->func = dt_arena_strndup(p->a, f[2], fl[2]);
		}
		break;
	case DT_P_TEST: case DT_P_BENCH:
		ok = nf == 2 && fl[1];
		if (ok)
			at->target = dt_arena_strndup(p->a, f[1], fl[1]);
		break;
	case DT_P_KPROBE: case DT_P_KRETPROBE:
		/* [MODULE:]FUNC[+OFF]: MODULE as bpftrace has it since 0.18 ("vmlinux": the
		 * kernel itself). */
		ok = (nf == 2 || nf == 3) && fl[nf - 1] && fl[1] &&
		     split_offset(p, at, f[nf - 1], fl[nf - 1]) &&
		     !(at->has_offset && at->provider == DT_P_KRETPROBE);
		if (ok && nf == 3)
			at->target = dt_arena_strndup(p->a, f[1], fl[1]);
		break;
	case DT_P_TRACEPOINT:
		ok = nf == 3 && fl[1] && fl[2];
		if (ok) {
			at->target = dt_arena_strndup(p->a, f[1], fl[1]);
			at->func = dt_arena_strndup(p->a, f[2], fl[2]);
		}
		break;
	case DT_P_SOFTWARE: case DT_P_HARDWARE:
		ok = (nf == 2 || nf == 3) && fl[1];
		if (ok) {
			at->target = dt_arena_strndup(p->a, f[1], fl[1]);
			if (nf == 3)
				ok = parse_u64(f[2], fl[2], &at->rate);
		}
		break;
	default:
		ok = false;
	}
	if (!ok) {
		dt_diag(p->d, DT_DIAG_ERROR, at->span, "malformed %s attach point '%s'",
			dt_provider_name(at->provider), at->text);
		dt_diag_hint(p->d, "expected %s", attach_form(at->provider));
	}
	return at;
}

/* ---------------------------------------------------------------- probes */

static void skip_probe(parser *p)
{
	/* Give up on this probe: skip a balanced { } body if one follows, else to the next line
	 * that could start a probe. */
	int depth = 0;
	while (p->cur.kind != DT_TOK_EOF) {
		if (p->cur.kind == DT_TOK_LBRACE)
			depth++;
		if (p->cur.kind == DT_TOK_RBRACE && --depth <= 0) {
			advance(p);
			break;
		}
		if (depth == 0 && p->cur.kind == DT_TOK_GT) {
			advance(p);
			break;
		}
		advance(p);
	}
	p->panic = false;
}

static dt_probe *parse_probe(parser *p)
{
	dt_probe *pr = dt_arena_alloc(p->a, sizeof(*pr));
	uint32_t start;
	DT_VEC(dt_attach *) atts = { 0 };
	lex_at(p, p->cur_from, true);
	start = p->cur.off;
	p->panic = false;
	for (;;) {
		if (p->cur.kind != DT_TOK_ATTACH) {
			syntax_error(p, "expected an attach point (BEGIN, profile:hz:99, "
					"uprobe:/bin/bash:readline, …)");
			break;
		}
		if (p->cur.err) {
			/* The lexer said what is wrong with it (an unterminated quote), and the
			 * token takes the rest of the line: the probe is dropped, the next line
			 * parsed as usual. */
			advance(p);
			free(atts.v);
			pr->span = span_from(p, start);
			return pr;
		}
		DT_VEC_PUSH(&atts, parse_attach(p, &p->cur));
		advance(p);
		if (p->cur.kind != DT_TOK_COMMA)
			break;
		advance(p);
		lex_at(p, p->cur_from, true);
	}
	pr->nattach = (uint32_t)atts.n;
	pr->attach = dt_arena_alloc(p->a, sizeof(dt_attach *) * (atts.n ? atts.n : 1));
	if (atts.n)
		memcpy(pr->attach, atts.v, sizeof(dt_attach *) * atts.n);
	free(atts.v);
	if (p->panic) {
		skip_probe(p);
		pr->span = span_from(p, start);
		return pr;
	}
	if (p->cur.kind == DT_TOK_SLASH) {
		advance(p);
		p->in_pred = true;
		pr->pred = parse_expr(p);
		p->in_pred = false;
		expect(p, DT_TOK_SLASH, "expected '/' to end the predicate");
		if (p->panic && p->cur.kind != DT_TOK_LBRACE && p->cur.kind != DT_TOK_LT) {
			dt_diag_hint(p->d, "a '/' outside parentheses ends the predicate: write "
					   "/(a / b) > c/ for a division");
			skip_probe(p);
			pr->span = span_from(p, start);
			return pr;
		}
		p->panic = false;
	}
	if (p->cur.kind == DT_TOK_LBRACE) {
		pr->body = parse_brace_block(p);
	} else if (p->cur.kind == DT_TOK_LT) {
		pr->angle_block = true;
		pr->body = parse_angle_block(p);
	} else {
		syntax_error(p, "expected '{' or '<' to open the probe body");
		if (pr->nattach && p->cur.kind != DT_TOK_EOF)
			dt_diag_hint(p->d, "several attach points are separated by ','");
		skip_probe(p);
	}
	pr->span = span_from(p, start);
	return pr;
}

/* Whether the current token starts a top-level C definition. */
static bool starts_cdecl(parser *p)
{
	return p->cur.kind == DT_TOK_CPP || is_kw(p, &p->cur, "struct") ||
	       is_kw(p, &p->cur, "union") || is_kw(p, &p->cur, "enum") ||
	       is_kw(p, &p->cur, "typedef");
}

/* The first offset from i in s[0, n) past blanks and C comments. */
static uint32_t skip_c_space(const char *s, uint32_t n, uint32_t i)
{
	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			i++;
		if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
			const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);
			i = e ? (uint32_t)(e - s) + 2 : n;
		} else if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else {
			return i;
		}
	}
}

/* Past the balanced parentheses that open at i (i itself when s[i] is not '('). */
static uint32_t skip_c_parens(const char *s, uint32_t n, uint32_t i)
{
	uint32_t depth = 0, j = i;
	if (j >= n || s[j] != '(')
		return i;
	for (; j < n; j++) {
		if (s[j] == '(')
			depth++;
		else if (s[j] == ')' && --depth == 0)
			return j + 1;
	}
	return i;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A top-level C definition, kept as its source text: a preprocessor line, or a declaration up
 * to the `}` that closes its first `{` (and a `;` right after it: bpftrace scripts often leave
 * it out) or to a `;` outside braces. Comments, strings and character literals are skipped so
 * a brace inside them does not count. Clang reads the text itself; nothing is parsed here. */
static dt_span parse_cdecl(parser *p)
{
	const char *s = p->src->text;
	uint32_t n = (uint32_t)p->src->len, start = p->cur.off, i = start;
	if (p->cur.kind == DT_TOK_CPP) {
		i = start + p->cur.len;
	} else {
		int depth = 0;
		bool closed = false, ended = false;
		while (i < n && !closed && !ended) {
			char c = s[i];
			if (c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) {
				bool line = s[i + 1] == '/';
				i += 2;
				while (i < n && (line ? s[i] != '\n' : !(s[i] == '*' && i + 1 < n &&
									  s[i + 1] == '/')))
					i++;
				i = line ? i : DT_MIN(i + 2, n);
				continue;
			}
			if (c == '"' || c == '\'') {
				for (i++; i < n && s[i] != c && s[i] != '\n'; i++)
					if (s[i] == '\\')
						i++;
				i++;
				continue;
			}
			i++;
			if (c == '{')
				depth++;
			else if (c == '}' && depth > 0 && --depth == 0)
				closed = true;
			else if (c == ';' && depth == 0)
				ended = true;
		}
		if (!closed && !ended) {
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&p->cur),
				"this C definition does not end: no closing '}' or ';'");
			lex_at(p, n, false);
			return (dt_span){ start, n - start };
		}
		/* After the `}`: GCC attributes of the type (`__attribute__((packed))`, several,
		 * comments between), then the `;` if there is one. */
		uint32_t j = closed ? skip_c_space(s, n, i) : i;
		while (closed && n - j >= 13 && !memcmp(s + j, "__attribute__", 13) &&
		       !is_ident_char(j + 13 < n ? s[j + 13] : ' ')) {
			uint32_t k = skip_c_space(s, n, j + 13), end = skip_c_parens(s, n, k);
			if (end == k && k < n && s[k] == '(') {
				dt_diag(p->d, DT_DIAG_ERROR, (dt_span){ j, 13 },
					"this __attribute__ does not end: no closing ')'");
				lex_at(p, n, false);
				return (dt_span){ start, n - start };
			}
			if (end == k)
				break;
			i = end;
			j = skip_c_space(s, n, i);
		}
		if (closed && j < n && s[j] == ';')
			i = j + 1;
	}
	dt_span sp = { start, i - start };
	p->prev_end = i;
	lex_at(p, i, false);
	return sp;
}

/* `config = { KEY = VALUE [;] … }` at the top level ('config' is current, '=' follows). */
static void parse_config(parser *p, dt_program *prog, bool seen_probe)
{
	DT_VEC(dt_config_item) items = { 0 };
	dt_token kw = p->cur;
	if (dt_source_file_at(p->src, kw.off)) {
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&kw),
			"an imported script cannot have a config block: only the main script's is "
			"read");
	} else if (seen_probe || p->config_seen) {
		dt_diag(p->d, DT_DIAG_ERROR, tok_span(&kw), seen_probe
			? "the config block must come before the probes"
			: "only one config block is allowed");
	}
	advance(p);
	expect(p, DT_TOK_ASSIGN, "expected '=' after 'config'");
	if (!expect(p, DT_TOK_LBRACE, "expected '{' to open the config block")) {
		skip_probe(p);
		return;
	}
	while (p->cur.kind != DT_TOK_RBRACE && p->cur.kind != DT_TOK_EOF) {
		dt_config_item it = { 0 };
		if (p->cur.kind == DT_TOK_SEMI) {
			advance(p);
			continue;
		}
		if (p->cur.kind != DT_TOK_IDENT) {
			syntax_error(p, "expected a setting name (stack_mode = perf; …)");
			break;
		}
		it.key = tok_text(p, &p->cur);
		it.span = tok_span(&p->cur);
		advance(p);
		if (!expect(p, DT_TOK_ASSIGN, "expected '=' after the setting's name"))
			break;
		it.value_span = tok_span(&p->cur);
		if (p->cur.kind == DT_TOK_INT) {
			it.is_int = true;
			it.ival = p->cur.ival;
			it.value = tok_text(p, &p->cur);
		} else if (p->cur.kind == DT_TOK_STR) {
			uint32_t len, bad;
			it.value = dt_lex_string(p->a, p->src, &p->cur, &len, &bad);
		} else if (p->cur.kind == DT_TOK_IDENT) {
			it.value = tok_text(p, &p->cur);
		} else {
			syntax_error(p, "expected a value: a name, a number or a string");
			break;
		}
		advance(p);
		it.span.len = p->prev_end - it.span.off;
		DT_VEC_PUSH(&items, it);
	}
	if (p->panic) {
		while (p->cur.kind != DT_TOK_RBRACE && p->cur.kind != DT_TOK_EOF)
			advance(p);
		p->panic = false;
	}
	expect(p, DT_TOK_RBRACE, "expected '}' to close the config block");
	if (!p->config_seen) {
		p->config_seen = true;
		prog->nconfig = (uint32_t)items.n;
		prog->config = dt_arena_alloc(p->a, sizeof(dt_config_item) * (items.n ? items.n : 1));
		if (items.n)
			memcpy(prog->config, items.v, sizeof(dt_config_item) * items.n);
	}
	free(items.v);
}

/* Whether keyword kw is the current token and a token of kind k follows it. */
static bool kw_then(parser *p, const char *kw, dt_tok_kind k)
{
	if (!is_kw(p, &p->cur, kw))
		return false;
	dt_token n;
	dt_lex(p->src, p->cur.off + p->cur.len, &n);
	return n.kind == k;
}

/* `import "PATH";` ('import' is current, a string follows). dt_source_imports has read the
 * file; here only its place is checked. */
static void parse_import(parser *p, bool late)
{
	dt_span at = tok_span(&p->cur);
	if (late) {
		dt_diag(p->d, DT_DIAG_ERROR, at,
			"an import must come before the probes, macros and map declarations");
		dt_diag_hint(p->d, "only C definitions may stand above an import");
	}
	advance(p);
	advance(p);
	expect(p, DT_TOK_SEMI, "expected ';' after the import path");
}

/* Whether `config =` starts here (a probe type named config does not exist). */
static bool starts_config(parser *p)
{
	return kw_then(p, "config", DT_TOK_ASSIGN);
}

/* ---------------------------------------------------------------- macros */

/* Whether `macro NAME` starts here (no probe type is called macro). */
static bool starts_macro(parser *p)
{
	if (!is_kw(p, &p->cur, "macro"))
		return false;
	dt_token n;
	dt_lex(p->src, p->cur.off + p->cur.len, &n);
	return n.kind == DT_TOK_IDENT;
}

/* Finds every top-level `macro NAME(…)` of the text and its number of parameters, before the
 * parse, so a call above the definition (or in another macro) is known as one. */
static void scan_macros(parser *p)
{
	dt_token t, n;
	uint32_t off = 0;
	int depth = 0;
	for (;;) {
		dt_lex(p->src, off, &t);
		if (t.kind == DT_TOK_EOF)
			return;
		off = t.off + (t.len ? t.len : 1);
		if (t.kind == DT_TOK_LBRACE)
			depth++;
		else if (t.kind == DT_TOK_RBRACE && depth > 0)
			depth--;
		if (depth || t.kind != DT_TOK_IDENT || !is_kw(p, &t, "macro"))
			continue;
		dt_lex(p->src, off, &n);
		if (n.kind != DT_TOK_IDENT)
			continue;
		struct macro_sig sig = { p->src->text + n.off, n.len, 0 };
		off = n.off + n.len;
		dt_lex(p->src, off, &t);
		if (t.kind != DT_TOK_LPAREN)
			continue;
		off = t.off + 1;
		bool any = false;
		for (;;) {
			dt_lex(p->src, off, &t);
			if (t.kind == DT_TOK_EOF || t.kind == DT_TOK_RPAREN || t.kind == DT_TOK_LBRACE)
				break;
			off = t.off + (t.len ? t.len : 1);
			if (t.kind == DT_TOK_COMMA)
				sig.n++;
			any = true;
		}
		sig.n += any;
		DT_VEC_PUSH(&p->sigs, sig);
	}
}

/* `macro NAME(params) { body }` at the top level ('macro' is current). */
static void parse_macro(parser *p)
{
	dt_macro_def *m = dt_arena_alloc(p->a, sizeof(*m));
	expr_vec params = { 0 };
	uint32_t start = p->cur.off;
	p->panic = false;
	advance(p);
	m->name = tok_text(p, &p->cur);
	advance(p);
	m->span = span_from(p, start);
	if (!expect(p, DT_TOK_LPAREN, "expected '(' after the macro's name")) {
		skip_probe(p);
		return;
	}
	while (p->cur.kind != DT_TOK_RPAREN) {
		uint32_t at = p->cur.off;
		dt_token t = p->cur;
		dt_builtin b;
		uint32_t argn;
		if (t.kind == DT_TOK_VAR || t.kind == DT_TOK_MAP) {
			DT_VEC_PUSH(&params, parse_primary(p));
			if (t.kind == DT_TOK_MAP && params.v[params.n - 1]->map.nkeys)
				dt_diag(p->d, DT_DIAG_ERROR, params.v[params.n - 1]->span,
					"a map parameter is a map's name alone");
		} else if (t.kind == DT_TOK_IDENT &&
			   dt_builtin_lookup(p->src->text + t.off, t.len, &b, &argn)) {
			dt_diag(p->d, DT_DIAG_ERROR, tok_span(&t),
				"builtin '%.*s' can't be used as a macro argument", (int)t.len,
				p->src->text + t.off);
			advance(p);
		} else if (t.kind == DT_TOK_IDENT) {
			advance(p);
			dt_expr *e = new_expr(p, DT_E_IDENT, at);
			e->ident.name = tok_text(p, &t);
			DT_VEC_PUSH(&params, e);
		} else {
			syntax_error(p, "expected macro argument ($var, @map, or identifier)");
			break;
		}
		if (p->cur.kind != DT_TOK_COMMA)
			break;
		advance(p);
	}
	m->params = expr_vec_finish(p, &params, &m->nparams);
	if (!expect(p, DT_TOK_RPAREN, "expected ',' or ')' after the macro's parameters") ||
	    p->cur.kind != DT_TOK_LBRACE) {
		syntax_error(p, "expected '{' to open the macro's body");
		skip_probe(p);
		return;
	}
	p->in_macro = m;
	m->body = parse_block_expr(p);
	p->in_macro = NULL;
	DT_VEC_PUSH(&p->macros, m);
}

/* `let @name = …` at the top level: a map declaration. */
static bool starts_map_decl(parser *p)
{
	return kw_then(p, "let", DT_TOK_MAP);
}

typedef DT_VEC(dt_map_decl) map_decl_vec;

/* `let @name = TYPE(N);` ('let' is current). What follows an error up to the next ';' is
 * skipped. */
static void parse_map_decl(parser *p, map_decl_vec *out)
{
	uint32_t start = p->cur.off;
	dt_map_decl md = { 0 };
	p->panic = false;
	advance(p);
	md.name = tok_text(p, &p->cur);
	advance(p);
	if (!expect(p, DT_TOK_ASSIGN, "expected '=' after the map's name in its declaration"))
		goto skip;
	if (p->cur.kind != DT_TOK_IDENT) {
		syntax_error(p, "expected a map type (hash, lruhash, percpuhash, percpulruhash)");
		goto skip;
	}
	md.type = tok_text(p, &p->cur);
	md.type_span = tok_span(&p->cur);
	advance(p);
	if (!expect(p, DT_TOK_LPAREN, "expected '(' and the map's max entries after its type"))
		goto skip;
	if (p->cur.kind != DT_TOK_INT || p->cur.err || !p->cur.ival) {
		syntax_error(p, "expected positive integer for map declaration max entries");
		goto skip;
	}
	md.max_entries = p->cur.ival;
	advance(p);
	if (!expect(p, DT_TOK_RPAREN, "expected ')' after the map's max entries"))
		goto skip;
	md.span = span_from(p, start);
	if (p->cur.kind == DT_TOK_SEMI)
		advance(p);
	DT_VEC_PUSH(out, md);
	return;
skip:
	while (p->cur.kind != DT_TOK_SEMI && p->cur.kind != DT_TOK_EOF &&
	       p->cur.kind != DT_TOK_LBRACE)
		advance(p);
	if (p->cur.kind == DT_TOK_SEMI)
		advance(p);
}

dt_program *dt_parse_recording(dt_arena *a, const dt_source *src, dt_diags *d, dt_token_vec *rec)
{
	parser p = { .a = a, .src = src, .d = d, .rec = rec };
	dt_program *prog = dt_arena_alloc(a, sizeof(*prog));
	prog->src = src;
	DT_VEC(dt_probe *) probes = { 0 };
	DT_VEC(dt_span) cdecls = { 0 };
	map_decl_vec decls = { 0 };
	const dt_source_file *cur_file = NULL;
	bool items_in_file = false;
	scan_macros(&p);
	lex_at(&p, 0, false);
	if (p.cur.kind == DT_TOK_EOF)
		dt_diag(d, DT_DIAG_ERROR, (dt_span){ 0, 1 }, "empty program: no probes");
	while (p.cur.kind != DT_TOK_EOF) {
		uint32_t before = p.cur.off;
		if (starts_cdecl(&p)) {
			if (rec)
				DT_VEC_PUSH(rec, p.cur);
			DT_VEC_PUSH(&cdecls, parse_cdecl(&p));
			if (p.cur.kind == DT_TOK_EOF && !probes.n)
				dt_diag(d, DT_DIAG_ERROR, (dt_span){ p.cur.off, 1 },
					"no probes after the C definitions");
			continue;
		}
		/* What each file (the root script, an imported one) has had so far: an import
		 * must come before its probes, macros and map declarations. */
		const dt_source_file *file = dt_source_file_at(src, p.cur.off);
		if (file != cur_file) {
			cur_file = file;
			items_in_file = false;
		}
		if (kw_then(&p, "import", DT_TOK_STR)) {
			parse_import(&p, items_in_file);
			continue;
		}
		if (starts_config(&p)) {
			parse_config(&p, prog, probes.n > 0 || p.macros.n > 0 || decls.n > 0);
			continue;
		}
		if (!starts_cdecl(&p))
			items_in_file = true;
		if (starts_map_decl(&p)) {
			parse_map_decl(&p, &decls);
			continue;
		}
		if (starts_macro(&p)) {
			parse_macro(&p);
			if (p.cur.off == before && p.cur.kind != DT_TOK_EOF)
				advance(&p);
			continue;
		}
		DT_VEC_PUSH(&probes, parse_probe(&p));
		if (p.cur.off == before && p.cur.kind != DT_TOK_EOF)
			advance(&p); /* guarantee progress whatever the input */
		if (p.too_deep)
			break;
	}
	if (!probes.n && prog->nconfig && !dt_diags_error_count(d))
		dt_diag(d, DT_DIAG_ERROR, (dt_span){ p.cur.off, 1 }, "no probes after the config block");
	if (rec)
		DT_VEC_PUSH(rec, p.cur);
	for (size_t i = 0; dt_diags_error_count(d) && i < p.idents.n; i++) {
		dt_expr *e = p.idents.v[i];
		dt_diag(d, DT_DIAG_ERROR, e->span, "unknown identifier '%s'", e->ident.name);
		dt_unknown_name_hint(d, e->ident.name, strlen(e->ident.name), false);
	}
	free(p.idents.v);
	prog->nmap_decls = (uint32_t)decls.n;
	prog->map_decls = dt_arena_alloc(a, sizeof(dt_map_decl) * (decls.n ? decls.n : 1));
	if (decls.n)
		memcpy(prog->map_decls, decls.v, sizeof(dt_map_decl) * decls.n);
	free(decls.v);
	prog->ncdecls = (uint32_t)cdecls.n;
	prog->cdecls = dt_arena_alloc(a, sizeof(dt_span) * (cdecls.n ? cdecls.n : 1));
	if (cdecls.n)
		memcpy(prog->cdecls, cdecls.v, sizeof(dt_span) * cdecls.n);
	free(cdecls.v);
	prog->nprobes = (uint32_t)probes.n;
	prog->probes = dt_arena_alloc(a, sizeof(dt_probe *) * (probes.n ? probes.n : 1));
	if (probes.n)
		memcpy(prog->probes, probes.v, sizeof(dt_probe *) * probes.n);
	free(probes.v);
	if (!dt_diags_error_count(d))
		dt_macro_expand(a, d, prog, p.macros.v, (uint32_t)p.macros.n);
	free(p.macros.v);
	free(p.sigs.v);
	return prog;
}

dt_program *dt_parse(dt_arena *a, const dt_source *src, dt_diags *d)
{
	return dt_parse_recording(a, src, d, NULL);
}

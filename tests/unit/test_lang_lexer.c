/* test_lang_lexer.c — the tokenizer: kinds and spans of every operator, integer forms and their
 * errors, string escapes, comments and the `#!` line, and attach-point mode (where `/` belongs
 * to a uprobe path but ends anything else); and what messages are placed and phrased with:
 * line:col of offsets (with a hidden prefix, and looked up out of order) and "did you mean". */
#include "lang/lang_internal.h"
#include "tests/unit/t.h"

static dt_source src_of(const char *s)
{
	return (dt_source){ .name = "t", .text = s, .len = strlen(s) };
}

/* Lexes the whole text in ordinary mode, returning kinds in `out` (EOF included). */
static int lex_all(const char *s, dt_token *out, int max)
{
	dt_source src = src_of(s);
	uint32_t off = 0;
	int n = 0;
	while (n < max) {
		dt_lex(&src, off, &out[n]);
		off = out[n].off + out[n].len;
		if (out[n++].kind == DT_TOK_EOF)
			break;
	}
	return n;
}

static void operators(void)
{
	dt_token t[64];
	int n = lex_all("<<= >>= -> <= >= == != << >> && || ++ -- += -= *= /= %= &= |= ^= "
			"{ } ( ) [ ] , ; ? : . = + - * / % & | ^ ~ ! < >", t, 64);
	static const dt_tok_kind want[] = {
		DT_TOK_SHL_ASSIGN, DT_TOK_SHR_ASSIGN, DT_TOK_ARROW, DT_TOK_LE, DT_TOK_GE, DT_TOK_EQ,
		DT_TOK_NE, DT_TOK_SHL, DT_TOK_SHR, DT_TOK_LAND, DT_TOK_LOR, DT_TOK_INC, DT_TOK_DEC,
		DT_TOK_ADD_ASSIGN, DT_TOK_SUB_ASSIGN, DT_TOK_MUL_ASSIGN, DT_TOK_DIV_ASSIGN,
		DT_TOK_MOD_ASSIGN, DT_TOK_AND_ASSIGN, DT_TOK_OR_ASSIGN, DT_TOK_XOR_ASSIGN,
		DT_TOK_LBRACE, DT_TOK_RBRACE, DT_TOK_LPAREN, DT_TOK_RPAREN, DT_TOK_LBRACK,
		DT_TOK_RBRACK, DT_TOK_COMMA, DT_TOK_SEMI, DT_TOK_QUESTION, DT_TOK_COLON, DT_TOK_DOT,
		DT_TOK_ASSIGN, DT_TOK_PLUS, DT_TOK_MINUS, DT_TOK_STAR, DT_TOK_SLASH, DT_TOK_PERCENT,
		DT_TOK_AMP, DT_TOK_PIPE, DT_TOK_CARET, DT_TOK_TILDE, DT_TOK_BANG, DT_TOK_LT,
		DT_TOK_GT, DT_TOK_EOF,
	};
	CHECK_EQ_INT(n, (int)DT_ARRAY_SIZE(want));
	for (int i = 0; i < n && i < (int)DT_ARRAY_SIZE(want); i++)
		CHECK_EQ_STR(dt_tok_name(t[i].kind), dt_tok_name(want[i]));
}

/* Glued together and cut by the end of input: the longest operator that fits, never a read
 * past the end. */
static void operators_glued(void)
{
	dt_token t[16];
	int n = lex_all("a<<=b>>c->d--!=e", t, 16);
	static const dt_tok_kind want[] = {
		DT_TOK_IDENT, DT_TOK_SHL_ASSIGN, DT_TOK_IDENT, DT_TOK_SHR, DT_TOK_IDENT, DT_TOK_ARROW,
		DT_TOK_IDENT, DT_TOK_DEC, DT_TOK_NE, DT_TOK_IDENT, DT_TOK_EOF,
	};
	CHECK_EQ_INT(n, (int)DT_ARRAY_SIZE(want));
	for (int i = 0; i < n && i < (int)DT_ARRAY_SIZE(want); i++)
		CHECK_EQ_STR(dt_tok_name(t[i].kind), dt_tok_name(want[i]));
	/* The text ends after the first or second byte of a longer operator. */
	static const struct { const char *s; dt_tok_kind k; uint32_t len; } ends[] = {
		{ "<", DT_TOK_LT, 1 }, { "<<", DT_TOK_SHL, 2 }, { ">>", DT_TOK_SHR, 2 },
		{ "-", DT_TOK_MINUS, 1 }, { "&", DT_TOK_AMP, 1 }, { "=", DT_TOK_ASSIGN, 1 },
	};
	for (size_t i = 0; i < DT_ARRAY_SIZE(ends); i++) {
		/* Cut from a longer buffer so a read past `len` would see '='. */
		char buf[8];
		snprintf(buf, sizeof(buf), "%s===", ends[i].s);
		dt_source src = { .name = "t", .text = buf, .len = strlen(ends[i].s) };
		dt_lex(&src, 0, &t[0]);
		CHECK_EQ_STR(dt_tok_name(t[0].kind), dt_tok_name(ends[i].k));
		CHECK_EQ_INT(t[0].len, ends[i].len);
	}
}

static void integers(void)
{
	dt_token t[16];
	int n = lex_all("42 0x2a 052 1_000 18446744073709551615 0", t, 16);
	CHECK_EQ_INT(n, 7);
	CHECK_EQ_INT(t[0].ival, 42);
	CHECK_EQ_INT(t[1].ival, 42);
	CHECK_EQ_INT(t[2].ival, 42);
	CHECK_EQ_INT(t[3].ival, 1000);
	CHECK(t[4].ival == UINT64_MAX);
	CHECK_EQ_INT(t[5].ival, 0);
	for (int i = 0; i < 6; i++)
		CHECK(t[i].err == NULL);
	n = lex_all("1e6 25e2 1e20 1e6x", t, 16);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(t[0].ival, 1000000);
	CHECK_EQ_INT(t[1].ival, 2500);
	CHECK(t[0].err == NULL && t[1].err == NULL);
	CHECK_EQ_STR(t[2].err, "integer literal does not fit in 64 bits");
	CHECK_EQ_STR(t[3].err, "invalid integer literal");
	n = lex_all("18446744073709551616 09 0x 12ab", t, 16);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_STR(t[0].err, "integer literal does not fit in 64 bits");
	CHECK_EQ_STR(t[1].err, "invalid octal integer literal");
	CHECK_EQ_STR(t[2].err, "invalid integer literal");
	CHECK_EQ_STR(t[3].err, "invalid integer literal");
	CHECK_EQ_INT(t[3].len, 4); /* the whole glued literal is one token */
}

static void strings(void)
{
	const char *s = "\"a\\n\\t\\\"\\\\\\x41\\101\\0z\"";
	dt_source src = src_of(s);
	dt_token t;
	dt_lex(&src, 0, &t);
	CHECK_EQ_INT(t.kind, DT_TOK_STR);
	CHECK_EQ_INT(t.len, strlen(s));
	dt_arena *a = dt_arena_new();
	uint32_t len, bad;
	char *v = dt_lex_string(a, &src, &t, &len, &bad);
	CHECK_EQ_INT(bad, UINT32_MAX);
	CHECK_EQ_INT(len, 9);
	CHECK(memcmp(v, "a\n\t\"\\AA\0z", 9) == 0);
	dt_source bad_src = src_of("\"x\\qy\"");
	dt_lex(&bad_src, 0, &t);
	dt_lex_string(a, &bad_src, &t, &len, &bad);
	CHECK_EQ_INT(bad, 2);
	dt_source unterminated = src_of("\"abc\nx");
	dt_lex(&unterminated, 0, &t);
	CHECK_EQ_STR(t.err, "unterminated string literal");
	CHECK_EQ_INT(t.len, 4);
	dt_arena_free(a);
}

static void comments_and_shebang(void)
{
	dt_token t[8];
	int n = lex_all("#!/usr/bin/dwarftrace -q\n// line\n/* block\n */ pid /* x */ $v @m @ $12 "
			"/* unterminated", t, 8);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_INT(t[0].kind, DT_TOK_IDENT);
	CHECK_EQ_INT(t[1].kind, DT_TOK_VAR);
	CHECK_EQ_INT(t[2].kind, DT_TOK_MAP);
	CHECK_EQ_INT(t[3].kind, DT_TOK_MAP);
	CHECK_EQ_INT(t[3].len, 1);
	CHECK_EQ_INT(t[4].kind, DT_TOK_POSPARAM);
	CHECK_EQ_INT(t[4].ival, 12);
	CHECK_EQ_INT(t[5].kind, DT_TOK_EOF);
	/* `#` anywhere else is an invalid character. */
	n = lex_all("a # b", t, 8);
	CHECK_EQ_INT(t[1].kind, DT_TOK_ERROR);
	CHECK_EQ_STR(t[1].err, "invalid character");
}

static void attach_mode(void)
{
	dt_source s1 = src_of("  uprobe:/usr/lib/libc.so.6:malloc+0x10 /pid/ {");
	dt_token t;
	dt_lex_attach(&s1, 0, &t);
	CHECK_EQ_INT(t.kind, DT_TOK_ATTACH);
	CHECK_EQ_INT(t.off, 2);
	CHECK_EQ_INT(t.len, strlen("uprobe:/usr/lib/libc.so.6:malloc+0x10"));
	dt_source s2 = src_of("kprobe:vfs_read/pid == 1/{");
	dt_lex_attach(&s2, 0, &t);
	CHECK_EQ_INT(t.len, strlen("kprobe:vfs_read"));
	dt_source s3 = src_of("profile:hz:99<");
	dt_lex_attach(&s3, 0, &t);
	CHECK_EQ_INT(t.len, strlen("profile:hz:99"));
	dt_source s4 = src_of("BEGIN,END{");
	dt_lex_attach(&s4, 0, &t);
	CHECK_EQ_INT(t.len, 5);
	/* Not an attach point: the ordinary token. */
	dt_source s5 = src_of("{ x");
	dt_lex_attach(&s5, 0, &t);
	CHECK_EQ_INT(t.kind, DT_TOK_LBRACE);
}

static void positions(void)
{
	const char *text = "ab\ncd\n\nef";
	dt_source src = src_of(text);
	unsigned l, c;
	dt_source_linecol(&src, 4, &l, &c);
	CHECK(l == 2 && c == 2);
	dt_source_linecol(&src, 100, &l, &c); /* past the end: the end */
	CHECK(l == 4 && c == 3);
	/* The cache gives the same answers in any order, forwards and back. */
	static const uint32_t offs[] = { 0, 9, 3, 7, 1, 8, 2, 6 };
	dt_linecol_cache pos = { .src = &src, .after_hidden = true };
	for (size_t i = 0; i < DT_ARRAY_SIZE(offs); i++) {
		unsigned l2, c2;
		dt_source_linecol(&src, offs[i], &l, &c);
		dt_linecol_cached(&pos, offs[i], &l2, &c2);
		CHECK_EQ_INT(l2, l);
		CHECK_EQ_INT(c2, c);
	}
	/* A hidden wrapper (the REPL's `BEGIN { `) is not counted on the first line. */
	dt_source h = { .name = "t", .text = "BEGIN { @x = 1;\n@y }", .len = 20, .hidden = 8 };
	dt_source_linecol(&h, 9, &l, &c);
	CHECK(l == 1 && c == 2);
	dt_source_linecol(&h, 3, &l, &c); /* inside the wrapper: counted from the start */
	CHECK(l == 1 && c == 4);
	dt_source_linecol(&h, 17, &l, &c);
	CHECK(l == 2 && c == 2);
	dt_linecol_cache hp = { .src = &h, .after_hidden = true };
	dt_linecol_cached(&hp, 17, &l, &c);
	dt_linecol_cached(&hp, 9, &l, &c);
	CHECK(l == 1 && c == 2);
}

static void closest_names(void)
{
	static const char *const cands[] = { "printf", "print", "ustack_dwarf", "pid", NULL };
	CHECK_EQ_STR(dt_closest("prinft", 6, cands), "printf"); /* one transposition */
	CHECK_EQ_STR(dt_closest("ustak_dwarf", 11, cands), "ustack_dwarf");
	CHECK_EQ_STR(dt_closest("pdi", 3, cands), "pid");
	CHECK(dt_closest("printf", 6, cands) == NULL);   /* an exact match is no suggestion */
	CHECK(dt_closest("zzzzzz", 6, cands) == NULL);   /* too far from everything */
	CHECK(dt_closest("p", 1, cands) == NULL);        /* too short to be close to anything */
	CHECK(dt_closest("ustack_dwarf_and_more", 21, cands) == NULL);
}

int main(void)
{
	T_RUN(operators);
	T_RUN(operators_glued);
	T_RUN(integers);
	T_RUN(strings);
	T_RUN(comments_and_shebang);
	T_RUN(attach_mode);
	T_RUN(positions);
	T_RUN(closest_names);
	return t_done();
}

/* lexer.c — the hand-written tokenizer. A token is a slice of the source (offset + length), never
 * a copy; string escapes are decoded only when the parser asks. Lexing is a pure function of an
 * offset, so the parser looks ahead by lexing again and switches to attach-point mode (where
 * `uprobe:/usr/lib/libc.so.6:malloc` is one token) simply by calling the other entry point at a
 * probe's start. Bad input never stops the lexer: it returns a token that carries what was wrong
 * and the parser reports it with the span. */
#include "lang/lang_internal.h"

#include <ctype.h>
#include <string.h>

static const char *const tok_desc[] = {
#define X(k, s) s,
	DT_TOKENS(X)
#undef X
};

static const char *const tok_name[] = {
#define X(k, s) #k,
	DT_TOKENS(X)
#undef X
};

const char *dt_tok_desc(dt_tok_kind k)
{
	return k < DT_TOK__COUNT ? tok_desc[k] : "?";
}

const char *dt_tok_name(dt_tok_kind k)
{
	return k < DT_TOK__COUNT ? tok_name[k] : "?";
}

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* Skips blanks, comments and a `#!` first line. An unterminated block comment runs to the end. */
static uint32_t skip_space(const dt_source *src, uint32_t i)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len;
	if (i == 0 && n >= 2 && s[0] == '#' && s[1] == '!') {
		while (i < n && s[i] != '\n')
			i++;
	}
	for (;;) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = i + 1 < n ? i + 2 : n;
			continue;
		}
		return i;
	}
}

bool dt_duration_suffix(const char *s, size_t n, uint64_t *mul)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000ull },
		{ "m", 60000000000ull }, { "h", 3600000000000ull }, { "d", 86400000000000ull },
	};
	for (size_t i = 0; i < DT_ARRAY_SIZE(units); i++)
		if (strlen(units[i].name) == n && !memcmp(units[i].name, s, n)) {
			*mul = units[i].ns;
			return true;
		}
	return false;
}

/* C's integer suffixes (u, l, ul, ll, ull, in any case and order of u): accepted so C
 * definitions read the same, and ignored, as bpftrace does. */
static bool int_suffix(const char *s, size_t n)
{
	static const char *const suffixes[] = { "u", "l", "ul", "lu", "ll", "ull", "llu" };
	char low[4];
	if (!n || n > 3)
		return false;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	for (size_t i = 0; i < DT_ARRAY_SIZE(suffixes); i++)
		if (strlen(suffixes[i]) == n && !memcmp(suffixes[i], low, n))
			return true;
	return false;
}

/* Integers: decimal, 0x hex, leading-0 octal, with `_` separators between digits, and bpftrace's
 * `1e6` (decimal mantissa times a power of ten); a duration suffix (`100ms`, `1s`, `2h`) gives
 * nanoseconds, and C's `U`/`L`/`UL`/`LL`/`ULL` are read and ignored (bpftrace's rules). */
static void lex_int(const dt_source *src, uint32_t i, dt_token *t)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len, start = i;
	unsigned base = 10;
	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (s[i] == '0') {
		base = 8;
	}
	uint64_t v = 0;
	bool overflow = false, digits = false, bad = false;
	for (; i < n; i++) {
		int c = (unsigned char)s[i], d;
		if (c == '_')
			continue;
		if (isdigit(c))
			d = c - '0';
		else if (isxdigit(c) && base == 16)
			d = tolower(c) - 'a' + 10;
		else if ((c == 'e' || c == 'E') && base == 10 && digits && i + 1 < n &&
			 isdigit((unsigned char)s[i + 1])) {
			/* bpftrace's scientific integers: 1e6 is 1000000 (`elapsed / 1e6`). */
			unsigned exp = 0;
			for (i++; i < n && isdigit((unsigned char)s[i]); i++)
				exp = exp < 100 ? exp * 10 + (unsigned)(s[i] - '0') : exp;
			for (unsigned k = 0; k < exp && !overflow; k++) {
				if (v > UINT64_MAX / 10)
					overflow = true;
				v *= 10;
			}
			if (i < n && is_ident((unsigned char)s[i]))
				bad = true;
			while (i < n && is_ident((unsigned char)s[i]))
				i++;
			break;
		} else if (is_ident(c)) {
			uint32_t j = i;
			uint64_t mul = 1;
			while (j < n && is_ident((unsigned char)s[j]))
				j++;
			if (digits && !bad && (int_suffix(s + i, j - i) ||
					       (base != 16 && dt_duration_suffix(s + i, j - i, &mul)))) {
				if (v > UINT64_MAX / mul)
					overflow = true;
				v *= mul;
				i = j;
				break;
			}
			bad = true; /* 12abc, 09, 1K: a literal glued to letters */
			continue;
		} else
			break;
		if ((unsigned)d >= base) {
			bad = true;
			continue;
		}
		digits = true;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			overflow = true;
		v = v * base + (uint64_t)d;
	}
	t->kind = DT_TOK_INT;
	t->off = start;
	t->len = i - start;
	t->ival = v;
	if (bad || (base == 16 && !digits))
		t->err = base == 8 ? "invalid octal integer literal" : "invalid integer literal";
	else if (overflow)
		t->err = "integer literal does not fit in 64 bits";
}

static void lex_string(const dt_source *src, uint32_t i, dt_token *t)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len, start = i;
	i++;
	while (i < n && s[i] != '"' && s[i] != '\n') {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n')
			i++;
		i++;
	}
	t->kind = DT_TOK_STR;
	t->off = start;
	if (i < n && s[i] == '"') {
		t->len = i + 1 - start;
	} else {
		t->len = i - start;
		t->err = "unterminated string literal";
	}
}

static uint32_t op(dt_tok_kind *kind, dt_tok_kind k, uint32_t len)
{
	*kind = k;
	return len;
}

/* Operators and punctuation, longest match first (`<<=` over `<<` over `<`): a switch on the
 * first byte, then the next one or two. Every operator token comes through here, so it looks at
 * no more bytes than it needs to. Returns the length, 0 when `s[i]` starts none. */
static uint32_t lex_op(const dt_source *src, uint32_t i, dt_tok_kind *k)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len;
	char c1 = i + 1 < n ? s[i + 1] : 0, c2 = i + 2 < n ? s[i + 2] : 0;
	bool eq = c1 == '=';
	switch (s[i]) {
	case '{': return op(k, DT_TOK_LBRACE, 1);
	case '}': return op(k, DT_TOK_RBRACE, 1);
	case '(': return op(k, DT_TOK_LPAREN, 1);
	case ')': return op(k, DT_TOK_RPAREN, 1);
	case '[': return op(k, DT_TOK_LBRACK, 1);
	case ']': return op(k, DT_TOK_RBRACK, 1);
	case ',': return op(k, DT_TOK_COMMA, 1);
	case ';': return op(k, DT_TOK_SEMI, 1);
	case '?': return op(k, DT_TOK_QUESTION, 1);
	case ':': return op(k, DT_TOK_COLON, 1);
	case '.': return c1 == '.' ? op(k, DT_TOK_DOTDOT, 2) : op(k, DT_TOK_DOT, 1);
	case '~': return op(k, DT_TOK_TILDE, 1);
	case '=': return eq ? op(k, DT_TOK_EQ, 2) : op(k, DT_TOK_ASSIGN, 1);
	case '!': return eq ? op(k, DT_TOK_NE, 2) : op(k, DT_TOK_BANG, 1);
	case '*': return eq ? op(k, DT_TOK_MUL_ASSIGN, 2) : op(k, DT_TOK_STAR, 1);
	case '/': return eq ? op(k, DT_TOK_DIV_ASSIGN, 2) : op(k, DT_TOK_SLASH, 1);
	case '%': return eq ? op(k, DT_TOK_MOD_ASSIGN, 2) : op(k, DT_TOK_PERCENT, 1);
	case '^': return eq ? op(k, DT_TOK_XOR_ASSIGN, 2) : op(k, DT_TOK_CARET, 1);
	case '+':
		if (c1 == '+')
			return op(k, DT_TOK_INC, 2);
		return eq ? op(k, DT_TOK_ADD_ASSIGN, 2) : op(k, DT_TOK_PLUS, 1);
	case '-':
		if (c1 == '>')
			return op(k, DT_TOK_ARROW, 2);
		if (c1 == '-')
			return op(k, DT_TOK_DEC, 2);
		return eq ? op(k, DT_TOK_SUB_ASSIGN, 2) : op(k, DT_TOK_MINUS, 1);
	case '&':
		if (c1 == '&')
			return op(k, DT_TOK_LAND, 2);
		return eq ? op(k, DT_TOK_AND_ASSIGN, 2) : op(k, DT_TOK_AMP, 1);
	case '|':
		if (c1 == '|')
			return op(k, DT_TOK_LOR, 2);
		return eq ? op(k, DT_TOK_OR_ASSIGN, 2) : op(k, DT_TOK_PIPE, 1);
	case '<':
		if (c1 == '<')
			return c2 == '=' ? op(k, DT_TOK_SHL_ASSIGN, 3) : op(k, DT_TOK_SHL, 2);
		return eq ? op(k, DT_TOK_LE, 2) : op(k, DT_TOK_LT, 1);
	case '>':
		if (c1 == '>')
			return c2 == '=' ? op(k, DT_TOK_SHR_ASSIGN, 3) : op(k, DT_TOK_SHR, 2);
		return eq ? op(k, DT_TOK_GE, 2) : op(k, DT_TOK_GT, 1);
	default:
		return 0;
	}
}

void dt_lex(const dt_source *src, uint32_t off, dt_token *t)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len;
	uint32_t i = skip_space(src, off);
	memset(t, 0, sizeof(*t));
	t->off = i;
	if (i >= n) {
		t->kind = DT_TOK_EOF;
		t->off = n;
		return;
	}
	int c = (unsigned char)s[i];
	if (isdigit(c)) {
		lex_int(src, i, t);
		return;
	}
	if (c == '"') {
		lex_string(src, i, t);
		return;
	}
	if (is_ident_start(c)) {
		uint32_t j = i;
		while (j < n && is_ident((unsigned char)s[j]))
			j++;
		t->kind = DT_TOK_IDENT;
		t->len = j - i;
		return;
	}
	if (c == '$' || c == '@') {
		uint32_t j = i + 1;
		if (c == '$' && j < n && isdigit((unsigned char)s[j])) {
			uint64_t v = 0;
			while (j < n && isdigit((unsigned char)s[j])) {
				if (v < 1000000)
					v = v * 10 + (uint64_t)(s[j] - '0');
				j++;
			}
			t->kind = DT_TOK_POSPARAM;
			t->len = j - i;
			t->ival = v;
			return;
		}
		if (c == '$' && j < n && s[j] == '#') {
			t->kind = DT_TOK_POSPARAM;
			t->len = 2;
			t->ival = DT_POSPARAM_COUNT;
			return;
		}
		while (j < n && is_ident((unsigned char)s[j]))
			j++;
		t->kind = c == '$' ? DT_TOK_VAR : DT_TOK_MAP;
		t->len = j - i;
		if (c == '$' && j == i + 1) {
			t->kind = DT_TOK_ERROR;
			t->err = "expected a variable name after '$'";
		}
		return;
	}
	uint32_t bol = i;
	while (bol > 0 && (s[bol - 1] == ' ' || s[bol - 1] == '\t'))
		bol--;
	if (c == '#' && (bol == 0 || s[bol - 1] == '\n')) {
		/* A C preprocessor line (#include, #define, #if …; `#` first on its line): to the
		 * end of the line, with backslash continuations; the parser hands it to clang. */
		uint32_t j = i;
		while (j < n && s[j] != '\n')
			j += s[j] == '\\' && j + 1 < n ? 2 : 1;
		t->kind = DT_TOK_CPP;
		t->len = j - i;
		return;
	}
	uint32_t oplen = lex_op(src, i, &t->kind);
	if (oplen) {
		t->len = oplen;
		return;
	}
	t->kind = DT_TOK_ERROR;
	/* One whole UTF-8 sequence, so the underline does not split a character. */
	uint32_t j = i + 1;
	while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80)
		j++;
	t->len = j - i;
	t->err = "invalid character";
}

/* Characters an attach point may contain. `/` is special: see dt_lex_attach. */
static bool is_attach_char(int c)
{
	return is_ident(c) || c == ':' || c == '.' || c == '+' || c == '-' || c == '*' ||
	       c == '?' || c == '@' || c == '[' || c == ']' || c == '~';
}

void dt_lex_attach(const dt_source *src, uint32_t off, dt_token *t)
{
	const char *s = src->text;
	uint32_t n = (uint32_t)src->len;
	uint32_t i = skip_space(src, off);
	/* `$1` may be the whole attach point, as in bpftrace (`-e '$1 { … }' i:ms:1`). */
	bool param = i + 1 < n && s[i] == '$' && isdigit((unsigned char)s[i + 1]);
	if (i >= n || (!is_ident_start((unsigned char)s[i]) && !param)) {
		dt_lex(src, off, t);
		return;
	}
	/* A `/` belongs to the attach point only in the path field of a uprobe/uretprobe
	 * (`uprobe:/bin/bash:readline`); anywhere else it starts the predicate, so
	 * `kprobe:f /pid == 1/` and `BEGIN/1/` mean what they say. */
	uint32_t j = i, field = 0, prov_end = 0, prov = i;
	bool path_provider = false;
	while (j < n) {
		int c = (unsigned char)s[j];
		if (c == '=' && field == 0 && prov == i && j > i && j + 1 < n &&
		    is_ident_start((unsigned char)s[j + 1])) {
			/* `NAME=PROVIDER:…`, bpftrace's named probe: the provider follows. */
			prov = j + 1;
		} else if (c == ':') {
			if (field == 0) {
				prov_end = j;
				dt_provider p;
				path_provider = dt_provider_lookup(s + prov, prov_end - prov, &p) &&
						(p == DT_P_UPROBE || p == DT_P_URETPROBE ||
						 p == DT_P_XPROBE || p == DT_P_USDT);
			}
			field++;
		} else if (c == '"' && field > 0) {
			/* A quoted field ("usdt:BIN:prov:\"name\""), as bpftrace accepts: to the
			 * closing quote, over backslash escapes; the parser unquotes it. */
			for (j++; j < n && s[j] != '"' && s[j] != '\n'; j++)
				if (s[j] == '\\' && j + 1 < n)
					j++;
			if (j >= n || s[j] != '"') {
				/* Unterminated: one error for the rest of the line (the parser
				 * drops the probe and goes on at the next line). */
				memset(t, 0, sizeof(*t));
				t->kind = DT_TOK_ATTACH;
				t->off = i;
				t->len = j - i;
				t->err = "unterminated quote in the attach point";
				return;
			}
		} else if (c == '/') {
			if (!(path_provider && field == 1))
				break;
		} else if (c == '$' && j + 1 < n && isdigit((unsigned char)s[j + 1])) {
			/* A positional parameter, replaced by the parser (dt_source.params). */
			while (j + 1 < n && isdigit((unsigned char)s[j + 1]))
				j++;
		} else if (!is_attach_char(c)) {
			break;
		}
		j++;
	}
	memset(t, 0, sizeof(*t));
	t->kind = DT_TOK_ATTACH;
	t->off = i;
	t->len = j - i;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

char *dt_lex_string(dt_arena *a, const dt_source *src, const dt_token *t, uint32_t *len,
		    uint32_t *bad)
{
	const char *s = src->text + t->off + 1;
	uint32_t n = t->len >= 2 && src->text[t->off + t->len - 1] == '"' && !t->err ? t->len - 2
										      : t->len - 1;
	char *out = dt_arena_alloc(a, n + 1);
	uint32_t o = 0;
	*bad = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 >= n) {
			out[o++] = s[i];
			continue;
		}
		char c = s[++i];
		switch (c) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'a': out[o++] = '\a'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'v': out[o++] = '\v'; break;
		case 'e': out[o++] = 27; break;
		case '"': case '\\': case '\'': out[o++] = c; break;
		case 'x': {
			int v = 0, k = 0;
			while (k < 2 && i + 1 < n && isxdigit((unsigned char)s[i + 1])) {
				v = v * 16 + hexval((unsigned char)s[++i]);
				k++;
			}
			if (!k && *bad == UINT32_MAX)
				*bad = t->off + 1 + i - 1;
			out[o++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;
				while (k < 3 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') {
					v = v * 8 + (s[++i] - '0');
					k++;
				}
				if (v > 255 && *bad == UINT32_MAX)
					*bad = t->off + 1 + i - (uint32_t)k;
				out[o++] = (char)v;
			} else {
				if (*bad == UINT32_MAX)
					*bad = t->off + 1 + i - 1;
				out[o++] = c;
			}
		}
	}
	out[o] = 0;
	*len = o;
	return out;
}

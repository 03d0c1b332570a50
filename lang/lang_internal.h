/* lang_internal.h — what the files of lang/ share and nobody else sees: the token kinds and the
 * lexer (tokens are slices of the source, SQLite style), the tables of providers, builtins and
 * functions, "did you mean" by edit distance, and the tracepoint format reader. */
#ifndef DT_LANG_INTERNAL_H
#define DT_LANG_INTERNAL_H

#include "lang/lang.h"
#include "common/common.h"

#include <stdarg.h>

/* dt_arena_printf with a va_list. */
char *dt_arena_vprintf(dt_arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* ---------------------------------------------------------------- tokens */

#define DT_TOKENS(X)                                                                         \
	X(EOF, "end of input") X(ERROR, "invalid character") X(INT, "integer")                \
	X(STR, "string") X(IDENT, "identifier") X(VAR, "variable") X(POSPARAM, "parameter")  \
	X(MAP, "map") X(ATTACH, "attach point")                                              \
	X(LBRACE, "'{'") X(RBRACE, "'}'") X(LPAREN, "'('") X(RPAREN, "')'")                    \
	X(LBRACK, "'['") X(RBRACK, "']'") X(COMMA, "','") X(SEMI, "';'") X(QUESTION, "'?'")    \
	X(COLON, "':'") X(DOT, "'.'") X(DOTDOT, "'..'") X(ARROW, "'->'")                           \
	X(ASSIGN, "'='")                                                                     \
	X(PLUS, "'+'") X(MINUS, "'-'") X(STAR, "'*'") X(SLASH, "'/'") X(PERCENT, "'%'")        \
	X(AMP, "'&'") X(PIPE, "'|'") X(CARET, "'^'") X(TILDE, "'~'") X(BANG, "'!'")            \
	X(LT, "'<'") X(GT, "'>'") X(LE, "'<='") X(GE, "'>='") X(EQ, "'=='") X(NE, "'!='")      \
	X(SHL, "'<<'") X(SHR, "'>>'") X(LAND, "'&&'") X(LOR, "'||'") X(INC, "'++'")            \
	X(DEC, "'--'") X(ADD_ASSIGN, "'+='") X(SUB_ASSIGN, "'-='") X(MUL_ASSIGN, "'*='")       \
	X(DIV_ASSIGN, "'/='") X(MOD_ASSIGN, "'%='") X(AND_ASSIGN, "'&='")                     \
	X(OR_ASSIGN, "'|='") X(XOR_ASSIGN, "'^='") X(SHL_ASSIGN, "'<<='")                     \
	X(SHR_ASSIGN, "'>>='") X(CPP, "preprocessor line")

typedef enum dt_tok_kind {
#define X(k, s) DT_TOK_##k,
	DT_TOKENS(X)
#undef X
	DT_TOK__COUNT
} dt_tok_kind;

/* The ival of the DT_TOK_POSPARAM `$#` (the number of positional parameters). */
#define DT_POSPARAM_COUNT UINT64_MAX

/* A file of the standard library compiled into dwarftrace (stdlib/, by embed_stdlib.cmake):
 * `import "stdlib/test";` reads these when no file on disk matches. NULL-name terminated. */
typedef struct dt_stdlib_file {
	const char *name; /* "stdlib/test/test.bpf.c" */
	const char *text;
	size_t len;
} dt_stdlib_file;
extern const dt_stdlib_file dt_stdlib_files[];

typedef struct dt_token {
	dt_tok_kind kind;
	uint32_t off, len;
	uint64_t ival;      /* DT_TOK_INT, DT_TOK_POSPARAM */
	const char *err;    /* DT_TOK_ERROR, or an INT/STR with a lexical problem: what was wrong */
} dt_token;

/* The spelling of a kind for messages ("'{'", "identifier") and its name for dumps ("LBRACE"). */
const char *dt_tok_desc(dt_tok_kind k);
const char *dt_tok_name(dt_tok_kind k);

/* Lexes the token starting at or after byte `off` (skipping blanks, comments and a leading `#!`
 * line). Pure: the same offset always gives the same token, which is what lets the parser look
 * ahead and switch to attach-point mode by re-lexing. */
void dt_lex(const dt_source *src, uint32_t off, dt_token *t);
/* Attach-point mode: one raw attach point (`uprobe:/usr/lib/libc.so.6:malloc+4`) as a single
 * DT_TOK_ATTACH, or whatever ordinary token stands there if none starts at `off`. */
void dt_lex_attach(const dt_source *src, uint32_t off, dt_token *t);
/* A duration suffix (ns us ms s m h d): *mul gets nanoseconds per unit; false for anything else. */
bool dt_duration_suffix(const char *s, size_t n, uint64_t *mul);
/* Decodes a string literal token's escapes into the arena; *bad gets the offset of a bad escape
 * (or UINT32_MAX). */
char *dt_lex_string(dt_arena *a, const dt_source *src, const dt_token *t, uint32_t *len,
		    uint32_t *bad);

/* ---------------------------------------------------------------- names */


const char *const *dt_provider_names(void);

/* Builtins and functions by name; false when unknown. */
bool dt_builtin_lookup(const char *s, size_t n, dt_builtin *out, uint32_t *argn);
bool dt_func_lookup(const char *s, size_t n, dt_func *out);

/* ---------------------------------------------------------------- types (types.c) */

dt_type *dt_type_new(dt_arena *a, dt_type_kind k);
/* A tuple over `n` element types with offsets and size computed by the layout rules. */
dt_type *dt_type_tuple(dt_arena *a, const dt_type *const *elems, uint32_t n);
/* A record: a tuple whose elements have names (kept, not copied). */
dt_type *dt_type_record(dt_arena *a, const dt_type *const *elems, const char *const *names,
			uint32_t n);
/* buf()'s type: a length byte and n bytes of data. */
const dt_type *dt_type_buf(dt_arena *a, uint32_t n);
const dt_type *dt_type_stack(dt_arena *a, dt_stack_kind k, dt_stack_mode m, uint32_t depth);
/* The type both `a` and `b` fit in (ints with ints, strings widen to the larger, tuples element
 * by element), or NULL when they are incompatible. */
const dt_type *dt_type_unify(dt_arena *ar, const dt_type *a, const dt_type *b);

/* ---------------------------------------------------------------- diagnostics */

/* Line and column of offsets looked up mostly in increasing order (the dumps, printed
 * diagnostics): each lookup scans on from the previous one, so n lookups over a text cost
 * O(text + n) rather than O(text * n), and a step back only rescans back to the line start.
 * Start zeroed with `src` set; `after_hidden` counts columns the way dt_source_linecol does
 * (dt_source.hidden bytes are not the user's). */
typedef struct dt_linecol_cache {
	const dt_source *src;
	bool after_hidden;
	uint32_t off;
	unsigned line, col; /* of `off`; line 0: nothing looked up yet */
} dt_linecol_cache;
void dt_linecol_cached(dt_linecol_cache *c, uint32_t off, unsigned *line, unsigned *col);

/* Whether a dt_diag_hint now would be kept: false for a NULL dt_diags (the token dump's parse,
 * the checker's collecting walk) and after a diagnostic dropped over the limit. Lets a caller
 * skip working out a "did you mean" nobody will see. */
bool dt_diag_hint_wanted(const dt_diags *d);

/* ---------------------------------------------------------------- tracefs (tracefs.c) */

/* Finds the tracefs root (opts override, then the two usual places, then one mount attempt when
 * root). NULL when none has an events/ directory. */
const char *dt_tracefs_root(const char *override);
/* Reads events/SUBSYS/EVENT/format into a DT_T_RECORD. 0, -ENOENT (no such tracepoint), or
 * another -errno. */
int dt_tracefs_record(dt_arena *a, const char *root, const char *subsys, const char *event,
		      dt_type **out);
/* The address of kernel symbol `name` from /proc/kallsyms: 0, -ENOENT, or another -errno. */
int dt_kallsyms_lookup(const char *name, uint64_t *addr);
/* Per-cpu variable `name`: its offset in the per-cpu area (*off) and the address of
 * __per_cpu_offset[] (*table), from /proc/kallsyms. 0; -ENOENT (no such symbol, or the kernel
 * lists only functions: CONFIG_KALLSYMS_ALL unset), -EPERM (addresses hidden), -EINVAL (not a
 * per-cpu variable). */
int dt_kallsyms_percpu(const char *name, uint64_t *off, uint64_t *table);
/* The closest event name in events/SUBSYS (or closest subsystem when `event` is NULL). */
const char *dt_tracefs_closest(dt_arena *a, const char *root, const char *subsys,
			       const char *event);

/* ---------------------------------------------------------------- parser hooks */

/* Parses like dt_parse and also records every token consumed, for dt_dump_tokens. The tokens do
 * not depend on `d` (diagnostics never steer the parser). */
typedef DT_VEC(dt_token) dt_token_vec;
dt_program *dt_parse_recording(dt_arena *a, const dt_source *src, dt_diags *d, dt_token_vec *rec);
/* dt_dump_tokens' rendering of a recorded token stream: a caller that parses anyway (the fuzzer)
 * dumps what its own parse recorded instead of parsing a second time. */
void dt_dump_token_vec(const dt_source *src, const dt_token_vec *rec, FILE *out);

/* ---------------------------------------------------------------- macros (macro.c) */

/* A `macro NAME(params) { body }` definition. params are DT_E_VAR ($x: the caller passes a
 * $variable, which the body may change), DT_E_MAP (@m: a map, likewise) and DT_E_IDENT (x: any
 * expression, put in wherever the body says x); body is a DT_E_BLOCK. */
typedef struct dt_macro_def {
	const char *name;
	dt_span span;          /* `macro NAME` */
	dt_expr **params;
	uint32_t nparams;
	dt_expr *body;
} dt_macro_def;

/* Replaces every DT_E_MACRO of the program's probes by the expansion of the definition it
 * names, as bpftrace's documentation defines it: arguments matched by kind, $variables the body
 * assigns renamed per expansion (hygiene), maps and outside variables only through parameters,
 * macros calling macros, recursion refused. Reports what is wrong into d. */
void dt_macro_expand(dt_arena *a, dt_diags *d, dt_program *p, dt_macro_def *const *defs,
		     uint32_t ndefs);

/* The hint after "unknown function/identifier 'NAME'": the closest name in the namespace the
 * syntax points at (functions for a call, builtins otherwise), then the other one, else how
 * variables and maps are spelled. */
void dt_unknown_name_hint(dt_diags *d, const char *s, size_t n, bool call);

#endif

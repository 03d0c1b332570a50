/* dump.c — the designed renderings behind `-d tokens`, `-d ast` and `-d types`. They are test
 * surfaces (golden files compare them), so they are stable, one fact per line, and say what the
 * compiler decided — attach point fields, operator, resolved type, ids, layouts — rather than
 * mirror struct fields. Every AST line starts with the node's line:col so a reader can find it. */
#include "lang/lang_internal.h"

#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

static void put_quoted(FILE *out, const char *s, size_t n, char quote)
{
	fputc(quote, out);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		switch (ch) {
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		case '"': case '\'':
			if (ch == (unsigned char)quote)
				fputc('\\', out);
			fputc(ch, out);
			break;
		case '\\': fputs("\\\\", out); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				fprintf(out, "\\x%02x", ch);
			else
				fputc(ch, out);
		}
	}
	fputc(quote, out);
}

static void put_escaped(FILE *out, const char *s, size_t n)
{
	put_quoted(out, s, n, '"');
}

void dt_dump_token_vec(const dt_source *src, const dt_token_vec *rec, FILE *out)
{
	dt_linecol_cache pos = { .src = src, .after_hidden = true };
	for (size_t i = 0; i < rec->n; i++) {
		unsigned l, c;
		dt_linecol_cached(&pos, rec->v[i].off, &l, &c);
		fprintf(out, "%u:%u %s", l, c, dt_tok_name(rec->v[i].kind));
		if (rec->v[i].kind != DT_TOK_EOF) {
			fputc(' ', out);
			put_quoted(out, src->text + rec->v[i].off, rec->v[i].len, '\'');
		}
		fputc('\n', out);
	}
}

void dt_dump_tokens(const dt_source *src, FILE *out)
{
	dt_arena *a = dt_arena_new();
	dt_token_vec rec = { 0 };
	/* The parser decides where attach points and `>` are, so the dump replays its token
	 * stream rather than guessing; syntax errors are left to the other dumps. */
	dt_parse_recording(a, src, NULL, &rec);
	dt_dump_token_vec(src, &rec, out);
	free(rec.v);
	dt_arena_free(a);
}

/* ---------------------------------------------------------------- AST */

typedef struct dumper {
	FILE *out;
	dt_arena *a;
	/* Offsets mostly grow along the dump (a big script would otherwise dump in quadratic
	 * time). */
	dt_linecol_cache pos;
} dumper;

static const char *const binop_names[] = {
	[DT_OP_NONE] = "=", [DT_OP_ADD] = "+", [DT_OP_SUB] = "-", [DT_OP_MUL] = "*",
	[DT_OP_DIV] = "/", [DT_OP_MOD] = "%", [DT_OP_BAND] = "&", [DT_OP_BOR] = "|",
	[DT_OP_BXOR] = "^", [DT_OP_SHL] = "<<", [DT_OP_SHR] = ">>", [DT_OP_LAND] = "&&",
	[DT_OP_LOR] = "||", [DT_OP_EQ] = "==", [DT_OP_NE] = "!=", [DT_OP_LT] = "<",
	[DT_OP_LE] = "<=", [DT_OP_GT] = ">", [DT_OP_GE] = ">=",
};

static const char *const unop_names[] = {
	[DT_UOP_NEG] = "-", [DT_UOP_LNOT] = "!", [DT_UOP_BNOT] = "~", [DT_UOP_PREINC] = "++x",
	[DT_UOP_PREDEC] = "--x", [DT_UOP_POSTINC] = "x++", [DT_UOP_POSTDEC] = "x--",
};

/* Starts a line: `L:C` in a fixed column, then the indent. */
static void line(dumper *d, dt_span at, int depth)
{
	unsigned l, c;
	dt_linecol_cached(&d->pos, at.off, &l, &c);
	char pos[32];
	snprintf(pos, sizeof(pos), "%u:%u", l, c);
	fprintf(d->out, "%-7s %*s", pos, depth * 2, "");
}

static void end_expr(dumper *d, const dt_expr *e)
{
	if (e->type)
		fprintf(d->out, " : %s", dt_type_name(d->a, e->type));
	fputc('\n', d->out);
}

static void dump_expr(dumper *d, const dt_expr *e, int depth);

/* A written type: its base (typeof(…) of a type, or of an expression shown as a child), then
 * its modifiers, after a space when `space`: `int32 *[4]`. */
static void dump_ctype(FILE *o, const dt_ctype_ref *r, bool space)
{
	if (r->typeof_ty) {
		fputs("typeof(", o);
		dump_ctype(o, r->typeof_ty, space);
		fputc(')', o);
	} else if (r->typeof_e) {
		fputs("typeof(expr)", o);
	} else {
		fputs(r->name, o);
	}
	if (r->nmods && space)
		fputc(' ', o);
	for (uint32_t i = 0; i < r->nmods; i++) {
		if (!r->mods[i].is_array)
			fputc('*', o);
		else if (r->mods[i].n_omitted)
			fputs("[]", o);
		else
			fprintf(o, "[%u]", r->mods[i].n);
	}
}

/* The expression of a typeof(expr) in a written type, if any, as a child. */
static void dump_typeof(dumper *d, const dt_ctype_ref *r, int depth)
{
	for (; r; r = r->typeof_ty)
		if (r->typeof_e)
			dump_expr(d, r->typeof_e, depth);
}
static void dump_stmts(dumper *d, const dt_stmt_list *l, int depth);

static void dump_exprs(dumper *d, dt_expr *const *v, uint32_t n, int depth)
{
	for (uint32_t i = 0; i < n; i++)
		dump_expr(d, v[i], depth);
}

static void dump_expr(dumper *d, const dt_expr *e, int depth)
{
	if (!e)
		return;
	line(d, e->span, depth);
	FILE *o = d->out;
	switch (e->kind) {
	case DT_E_INT:
		fprintf(o, "int %lld", (long long)e->i.value);
		end_expr(d, e);
		return;
	case DT_E_STR:
		fputs("string ", o);
		put_escaped(o, e->str.s, e->str.len);
		end_expr(d, e);
		return;
	case DT_E_POSPARAM:
		fprintf(o, "param $%u", e->posparam.n);
		end_expr(d, e);
		return;
	case DT_E_BUILTIN:
		if (e->builtin.id == DT_B_ARG || e->builtin.id == DT_B_SARG)
			fprintf(o, "builtin %s%u", dt_builtin_name(e->builtin.id), e->builtin.arg);
		else
			fprintf(o, "builtin %s", dt_builtin_name(e->builtin.id));
		if (e->builtin.id == DT_B_NSECS && e->builtin.variant)
			fprintf(o, " clock=%s", e->builtin.variant == DT_CLOCK_BOOT  ? "boot"
						: e->builtin.variant == DT_CLOCK_TAI ? "tai"
										     : "sw_tai");
		if ((e->builtin.id == DT_B_PID || e->builtin.id == DT_B_TID) && e->builtin.variant)
			fprintf(o, " ns=init");
		if (e->builtin.id == DT_B_KSTACK || e->builtin.id == DT_B_USTACK ||
		    e->builtin.id == DT_B_USTACK_DWARF) {
			fprintf(o, " mode=%s depth=", dt_stack_mode_name(e->builtin.mode));
			if (e->builtin.depth_param && !e->builtin.depth)
				fprintf(o, "$%u", e->builtin.depth_param);
			else
				fprintf(o, "%u", e->builtin.depth ? e->builtin.depth
								  : DT_STACK_DEFAULT_DEPTH);
		}
		if (e->builtin.native)
			fprintf(o, " native");
		end_expr(d, e);
		return;
	case DT_E_VAR:
		fprintf(o, "var %s", e->var.name);
		if (e->var.sym)
			fprintf(o, " #%u", e->var.sym->id);
		end_expr(d, e);
		return;
	case DT_E_MAP:
		fprintf(o, "map %s", e->map.name);
		if (e->map.sym)
			fprintf(o, " #%u", e->map.sym->id);
		end_expr(d, e);
		dump_exprs(d, e->map.keys, e->map.nkeys, depth + 1);
		return;
	case DT_E_CALL:
		fprintf(o, "call %s", e->call.name);
		if (e->call.args_type && (e->call.id == DT_F_PRINTF || e->call.id == DT_F_TIME ||
					  e->call.id == DT_F_PRINT))
			fprintf(o, " event=%u", e->call.event_id);
		end_expr(d, e);
		dump_exprs(d, e->call.args, e->call.nargs, depth + 1);
		return;
	case DT_E_BINOP:
		fprintf(o, "binop %s", binop_names[e->bin.op]);
		end_expr(d, e);
		dump_expr(d, e->bin.l, depth + 1);
		dump_expr(d, e->bin.r, depth + 1);
		return;
	case DT_E_UNOP:
		fprintf(o, "unop %s", unop_names[e->un.op]);
		end_expr(d, e);
		dump_expr(d, e->un.e, depth + 1);
		return;
	case DT_E_TERNARY:
		fputs(e->tern.t ? "ternary" : "ternary ?:", o);
		end_expr(d, e);
		dump_expr(d, e->tern.cond, depth + 1);
		dump_expr(d, e->tern.t, depth + 1);
		dump_expr(d, e->tern.f, depth + 1);
		return;
	case DT_E_FIELD:
		fprintf(o, "field %s%s", e->field.arrow ? "->" : ".", e->field.field);
		if (e->field.tp)
			fprintf(o, " offset=%u size=%u", e->field.tp->offset, e->field.tp->size);
		if (e->field.m)
			fprintf(o, " offset=%u", e->field.off);
		if (e->field.m && e->field.m->bit_size)
			fprintf(o, " bits=%u:%u", e->field.m->bit_off, e->field.m->bit_size);
		end_expr(d, e);
		dump_expr(d, e->field.base, depth + 1);
		return;
	case DT_E_CAST:
		fputs("cast ", o);
		dump_ctype(o, &e->cast.to, true);
		end_expr(d, e);
		dump_typeof(d, &e->cast.to, depth + 1);
		dump_expr(d, e->cast.e, depth + 1);
		return;
	case DT_E_DEREF: case DT_E_ADDROF:
		fputs(e->kind == DT_E_DEREF ? "deref" : "addrof", o);
		end_expr(d, e);
		dump_expr(d, e->un.e, depth + 1);
		return;
	case DT_E_INDEX:
		fputs("index", o);
		end_expr(d, e);
		dump_expr(d, e->index.base, depth + 1);
		dump_expr(d, e->index.index, depth + 1);
		return;
	case DT_E_SIZEOF: case DT_E_OFFSETOF:
		fputs(e->kind == DT_E_SIZEOF ? "sizeof" : "offsetof", o);
		if (e->size.ty.name) {
			fputc(' ', o);
			dump_ctype(o, &e->size.ty, true);
		}
		if (e->size.field)
			fprintf(o, " .%s", e->size.field);
		end_expr(d, e);
		dump_typeof(d, &e->size.ty, depth + 1);
		if (e->size.e)
			dump_expr(d, e->size.e, depth + 1);
		return;
	case DT_E_TUPLE:
		fprintf(o, "%s %u", e->tuple.names ? "record" : "tuple", e->tuple.n);
		for (uint32_t i = 0; e->tuple.names && i < e->tuple.n; i++)
			fprintf(o, " %s", e->tuple.names[i]);
		end_expr(d, e);
		dump_exprs(d, e->tuple.elems, e->tuple.n, depth + 1);
		return;
	case DT_E_TUPLE_GET:
		fprintf(o, "element %u", e->tget.index);
		end_expr(d, e);
		dump_expr(d, e->tget.base, depth + 1);
		return;
	case DT_E_PARAMCOUNT:
		fputs("param $#", o);
		end_expr(d, e);
		return;
	case DT_E_IDENT:
		fprintf(o, "ident %s", e->ident.name);
		end_expr(d, e);
		return;
	case DT_E_BLOCK:
		fprintf(o, "block%s", e->block.value ? " value" : "");
		end_expr(d, e);
		dump_stmts(d, &e->block.stmts, depth + 1);
		dump_expr(d, e->block.value, depth + 1);
		return;
	case DT_E_TYPEOF:
		dump_ctype(o, e->tyof.ref, true);
		end_expr(d, e);
		dump_typeof(d, e->tyof.ref, depth + 1);
		return;
	case DT_E_MACRO:
		fprintf(o, "macro %s%s", e->macro.name, e->macro.bare ? " bare" : "");
		end_expr(d, e);
		dump_exprs(d, e->macro.args, e->macro.nargs, depth + 1);
		return;
	}
}

static void dump_stmts(dumper *d, const dt_stmt_list *l, int depth);

static void dump_stmt(dumper *d, const dt_stmt *s, int depth)
{
	if (!s)
		return;
	line(d, s->span, depth);
	FILE *o = d->out;
	switch (s->kind) {
	case DT_S_EXPR:
		fputs(s->discard ? "expr discard\n" : "expr\n", o);
		dump_expr(d, s->expr, depth + 1);
		return;
	case DT_S_ASSIGN:
		if (s->assign.decl && s->assign.decl_type.name) {
			fputs("let : ", o);
			dump_ctype(o, &s->assign.decl_type, false);
			fputc('\n', o);
		}
		else if (s->assign.decl)
			fputs("let\n", o);
		else
			fprintf(o, "assign %s%s\n", s->assign.op ? binop_names[s->assign.op] : "",
				s->assign.op ? "=" : "=");
		dump_expr(d, s->assign.target, depth + 1);
		dump_expr(d, s->assign.value, depth + 1);
		return;
	case DT_S_IF:
		fputs("if\n", o);
		dump_expr(d, s->if_.cond, depth + 1);
		line(d, s->span, depth + 1);
		fputs("then\n", o);
		dump_stmts(d, &s->if_.then, depth + 2);
		if (s->if_.els.n) {
			line(d, s->span, depth + 1);
			fputs("else\n", o);
			dump_stmts(d, &s->if_.els, depth + 2);
		}
		return;
	case DT_S_UNROLL: {
		const dt_expr *n = s->unroll.count_expr;
		if (s->unroll.count || !n)
			fprintf(o, "unroll %u\n", s->unroll.count);
		else if (n->kind == DT_E_INT)
			fprintf(o, "unroll %lld\n", (long long)n->i.value);
		else
			fprintf(o, "unroll $%u\n", n->kind == DT_E_POSPARAM ? n->posparam.n : 0);
		dump_stmts(d, &s->unroll.body, depth + 1);
		return;
	}
	case DT_S_WHILE:
		fputs("while\n", o);
		dump_expr(d, s->while_.cond, depth + 1);
		dump_stmts(d, &s->while_.body, depth + 1);
		return;
	case DT_S_BREAK:
		fputs("break\n", o);
		return;
	case DT_S_CONTINUE:
		fputs("continue\n", o);
		return;
	case DT_S_RETURN:
		fputs("return\n", o);
		if (s->expr)
			dump_expr(d, s->expr, depth + 1);
		return;
	case DT_S_BLOCK:
		fputs("block\n", o);
		dump_stmts(d, &s->block, depth + 1);
		return;
	case DT_S_FOR:
		fputs(s->for_.map ? "for map\n" : "for range\n", o);
		dump_expr(d, s->for_.var, depth + 1);
		dump_expr(d, s->for_.map, depth + 1);
		dump_expr(d, s->for_.start, depth + 1);
		dump_expr(d, s->for_.end, depth + 1);
		dump_stmts(d, &s->for_.body, depth + 1);
		return;
	}
}

static void dump_stmts(dumper *d, const dt_stmt_list *l, int depth)
{
	for (uint32_t i = 0; i < l->n; i++)
		dump_stmt(d, l->v[i], depth);
}

static const char *unit_name(dt_time_unit u)
{
	switch (u) {
	case DT_UNIT_S: return "s";
	case DT_UNIT_MS: return "ms";
	case DT_UNIT_US: return "us";
	case DT_UNIT_HZ: return "hz";
	default: return "none";
	}
}

static void dump_attach(dumper *d, const dt_attach *a, int depth)
{
	FILE *o = d->out;
	line(d, a->span, depth);
	fprintf(o, "attach %s provider=%s", a->text, dt_provider_name(a->provider));
	if (a->name)
		fprintf(o, " name=%s", a->name);
	if (a->target)
		fprintf(o, " target=%s", a->target);
	if (a->usdt_provider)
		fprintf(o, " provider_name=%s", a->usdt_provider);
	if (a->func)
		fprintf(o, " func=%s", a->func);
	if (a->src_file)
		fprintf(o, " source=%s:%u%s%.0u", a->src_file, a->src_line, a->src_col ? ":" : "",
			a->src_col);
	if (a->usdt)
		fprintf(o, " offset=%#llx%s args='%s'", (unsigned long long)a->usdt->offset,
			a->usdt->sema_offset ? " semaphore" : "", a->usdt->argspec);
	if (a->has_offset)
		fprintf(o, " offset=%llu", (unsigned long long)a->offset);
	if (a->unit != DT_UNIT_NONE)
		fprintf(o, " unit=%s", unit_name(a->unit));
	if (a->rate)
		fprintf(o, " %s=%llu", a->unit != DT_UNIT_NONE ? "rate" : "period",
			(unsigned long long)a->rate);
	if (a->period_ns)
		fprintf(o, " period_ns=%llu", (unsigned long long)a->period_ns);
	fputc('\n', o);
}

void dt_dump_ast(const dt_program *p, FILE *out)
{
	dumper d = { .out = out, .a = dt_arena_new(), .pos = { .src = p->src } };
	fprintf(out, "program %u probe%s\n", p->nprobes, p->nprobes == 1 ? "" : "s");
	for (uint32_t i = 0; i < p->nconfig; i++) {
		line(&d, p->config[i].span, 0);
		fprintf(out, "config %s = %s%s\n", p->config[i].key, p->config[i].value,
			p->config[i].is_int ? " (int)" : "");
	}
	for (uint32_t i = 0; i < p->src->ncimports; i++) {
		const dt_source_cimport *c = &p->src->cimports[i];
		line(&d, c->at, 0);
		fprintf(out, "import %s %s%s\n", c->kind == DT_CIMPORT_HEADER ? "header" : "bpf.c",
			c->name, c->path ? "" : " (standard library)");
	}
	for (uint32_t i = 0; i < p->nmap_decls; i++) {
		line(&d, p->map_decls[i].span, 0);
		fprintf(out, "map decl %s = %s(%llu)\n", p->map_decls[i].name, p->map_decls[i].type,
			(unsigned long long)p->map_decls[i].max_entries);
	}
	for (uint32_t i = 0; i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];
		line(&d, pr->span, 0);
		fprintf(out, "probe #%u %s%s\n", i, pr->angle_block ? "<>" : "{}",
			pr->uses_ustack_dwarf ? " uses_ustack_dwarf" : "");
		for (uint32_t j = 0; j < pr->nattach; j++)
			dump_attach(&d, pr->attach[j], 1);
		if (pr->pred) {
			line(&d, pr->pred->span, 1);
			fputs("predicate\n", out);
			dump_expr(&d, pr->pred, 2);
		}
		line(&d, pr->span, 1);
		fputs("body\n", out);
		dump_stmts(&d, &pr->body, 2);
	}
	dt_arena_free(d.a);
}

void dt_dump_types(const dt_program *p, FILE *out)
{
	dt_arena *a = dt_arena_new();
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const dt_map_sym *m = p->maps[i];
		dt_map_layout l;
		dt_map_layout_of(m, &l);
		fprintf(out, "map #%u %s key=%s value=%s\n", m->id, m->name,
			m->key ? dt_type_name(a, m->key) : "none", dt_type_name(a, m->value));
		fprintf(out, "  layout %s key_size=%u user_key_size=%u value_size=%u "
			     "max_entries=%u%s\n",
			l.bpf_map_type == BPF_MAP_TYPE_LRU_HASH ? "lru_hash"
			: l.bpf_map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH ? "lru_percpu_hash"
			: l.percpu ? "percpu_hash" : "hash", l.key_size, l.user_key_size, l.value_size,
			l.max_entries, l.bucketed ? " bucketed" : "");
		if (m->key && m->key->kind == DT_T_TUPLE) {
			for (uint32_t k = 0; k < m->key->tuple.n; k++)
				fprintf(out, "  key[%u] offset=%u %s\n", k, m->key->tuple.offsets[k],
					dt_type_name(a, m->key->tuple.elems[k]));
		}
	}
	for (uint32_t i = 0; i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];
		fprintf(out, "probe #%u", pr->index);
		for (uint32_t j = 0; j < pr->nattach; j++)
			fprintf(out, "%s%s", j ? ", " : " ", pr->attach[j]->text);
		if (pr->uses_ustack_dwarf)
			fprintf(out, " uses_ustack_dwarf%s",
				pr->pred_uses_ustack_dwarf ? " (in predicate)" : "");
		fputc('\n', out);
		for (uint32_t j = 0; j < pr->nattach; j++) {
			const dt_attach *at = pr->attach[j];
			if (at->period_ns)
				fprintf(out, "  attach #%u period_ns=%llu\n", at->index,
					(unsigned long long)at->period_ns);
			else
				fprintf(out, "  attach #%u\n", at->index);
		}
		for (uint32_t j = 0; j < pr->nvars; j++)
			fprintf(out, "  var #%u %s %s\n", pr->vars[j]->id, pr->vars[j]->name,
				dt_type_name(a, pr->vars[j]->type));
	}
	for (uint32_t i = 0; i < p->nevents; i++) {
		const dt_event_desc *ev = &p->events[i];
		fprintf(out, "event #%u %s", i, dt_func_name(ev->func));
		if (ev->fmt) {
			fputc(' ', out);
			put_escaped(out, ev->fmt, strlen(ev->fmt));
		}
		fprintf(out, " args=%s size=%u\n", dt_type_name(a, ev->args), ev->args ? ev->args->size : 0);
		if (ev->args && ev->args->kind == DT_T_TUPLE)
			for (uint32_t k = 0; k < ev->args->tuple.n; k++)
				fprintf(out, "  arg[%u] offset=%u %s\n", k, ev->args->tuple.offsets[k],
					dt_type_name(a, ev->args->tuple.elems[k]));
	}
	fprintf(out, "program%s%s\n", p->uses_ustack_dwarf ? " uses_ustack_dwarf" : "",
		p->stack_counts ? " stack_counts" : "");
	dt_arena_free(a);
}

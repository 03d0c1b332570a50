/* diag.c — source positions and user diagnostics. Diagnostics are collected, not printed, so the
 * passes can keep going and report several problems in one run; dt_diags_print renders them the
 * in bpftrace's shape (see render): `file:line:col-end: ERROR: message` (bpftrace's upper-case
 * words: ERROR, WARNING, NOTE), the source line, a `~~~` underline under the span, and an
 * optional `HINT:` line. A NULL dt_diags is accepted everywhere
 * and swallows everything: the checker's first, collecting pass uses that. */
#include "lang/lang_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Past this many errors more output only buries the first (usually the real) one. */
#define DT_DIAG_MAX_ERRORS 30

struct dt_diag_item {
	dt_diag_level lvl;
	dt_span at;
	char *msg;
	char *hint;
	bool unplaced; /* dt_diag_unplaced: no place in the source */
};

struct dt_diags {
	const dt_source *src;
	dt_arena *text; /* messages and hints: one free for all, no allocation per message */
	DT_VEC(struct dt_diag_item) items;
	int errors;
	bool dropped; /* the last dt_diag was dropped (over the limit): drop its hint too */
};

void dt_linecol_cached(dt_linecol_cache *c, uint32_t off, unsigned *line, unsigned *col)
{
	const char *text = c->src->text;
	if (off > c->src->len)
		off = (uint32_t)c->src->len;
	if (!c->line) {
		c->off = 0;
		c->line = c->col = 1;
	}
	/* Newlines are found with memchr/memrchr: every dump and diagnostic position comes
	 * through here, and a loop comparing each byte was a large part of their time. */
	const char *nl;
	if (off < c->off) {
		/* Step back (a "body" or "then" line repeats an earlier position): count the
		 * newlines crossed, then the column from the start of that line. */
		for (const char *p = text + off; (nl = memchr(p, '\n', (size_t)(text + c->off - p)));
		     p = nl + 1)
			c->line--;
		nl = memrchr(text, '\n', off);
		c->col = off - (nl ? (uint32_t)(nl - text) + 1 : 0) + 1;
		c->off = off;
	}
	const char *p = text + c->off;
	for (; (nl = memchr(p, '\n', (size_t)(text + off - p))); p = nl + 1) {
		c->line++;
		c->col = 1;
	}
	c->col += (unsigned)(text + off - p);
	c->off = off;
	*line = c->line;
	*col = c->col;
	/* The hidden prefix holds no newline: only columns on the first line move. */
	if (c->after_hidden && c->src->hidden && off >= c->src->hidden && c->line == 1)
		*col -= c->src->hidden;
	/* An imported file's lines count from its own start. */
	const dt_source_file *f = c->src->nfiles ? dt_source_file_at(c->src, off) : NULL;
	if (f)
		*line -= f->line0;
}

void dt_source_linecol(const dt_source *src, uint32_t off, unsigned *line, unsigned *col)
{
	dt_linecol_cache c = { .src = src, .after_hidden = true };
	dt_linecol_cached(&c, off, line, col);
}

dt_diags *dt_diags_new(const dt_source *src)
{
	dt_diags *d = xcalloc(1, sizeof(*d));
	d->src = src;
	d->text = dt_arena_new();
	return d;
}

void dt_diags_free(dt_diags *d)
{
	if (!d)
		return;
	dt_arena_free(d->text);
	free(d->items.v);
	free(d);
}

const dt_source *dt_diags_source(const dt_diags *d)
{
	return d ? d->src : NULL;
}

static void diag_push(dt_diags *d, dt_diag_level lvl, dt_span at, bool unplaced, const char *fmt,
		      va_list ap)
{
	if (!d)
		return;
	if (d->errors >= DT_DIAG_MAX_ERRORS) {
		d->dropped = true;
		if (lvl == DT_DIAG_ERROR)
			d->errors++;
		return;
	}
	d->dropped = false;
	struct dt_diag_item it = { .lvl = lvl, .at = at, .unplaced = unplaced,
				   .msg = dt_arena_vprintf(d->text, fmt, ap) };
	DT_VEC_PUSH(&d->items, it);
	if (lvl == DT_DIAG_ERROR)
		d->errors++;
}

void dt_diag(dt_diags *d, dt_diag_level lvl, dt_span at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_push(d, lvl, at, false, fmt, ap);
	va_end(ap);
}

void dt_diag_unplaced(dt_diags *d, dt_diag_level lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_push(d, lvl, (dt_span){ 0, 0 }, true, fmt, ap);
	va_end(ap);
}

static void diag_pushf(dt_diags *d, dt_diag_level lvl, dt_span at, bool unplaced,
		       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_push(d, lvl, at, unplaced, fmt, ap);
	va_end(ap);
}

void dt_diags_move(dt_diags *to, dt_diags *from)
{
	if (!from)
		return;
	for (size_t i = 0; i < from->items.n; i++) {
		const struct dt_diag_item *it = &from->items.v[i];

		diag_pushf(to, it->lvl, it->at, it->unplaced, "%s", it->msg);
		if (it->hint)
			dt_diag_hint(to, "%s", it->hint);
	}
	dt_diags_free(from);
}

bool dt_diag_hint_wanted(const dt_diags *d)
{
	return d && !d->dropped && d->items.n;
}

void dt_diag_hint(dt_diags *d, const char *fmt, ...)
{
	if (!dt_diag_hint_wanted(d))
		return;
	struct dt_diag_item *it = &d->items.v[d->items.n - 1];
	va_list ap;
	va_start(ap, fmt);
	it->hint = dt_arena_vprintf(d->text, fmt, ap);
	va_end(ap);
}

int dt_diags_error_count(const dt_diags *d)
{
	return d ? d->errors : 0;
}

bool dt_diags_error_at_end(const dt_diags *d)
{
	size_t end;

	if (!d)
		return false;
	/* The end is the last non-blank byte: "unexpected end of input" points past it. */
	end = d->src->len;
	while (end && (d->src->text[end - 1] == ' ' || d->src->text[end - 1] == '\t' ||
		       d->src->text[end - 1] == '\n'))
		end--;
	for (size_t i = 0; i < d->items.n; i++)
		if (d->items.v[i].lvl == DT_DIAG_ERROR && !d->items.v[i].unplaced &&
		    d->items.v[i].at.off >= end)
			return true;
	return false;
}

static const char *level_name(dt_diag_level l)
{
	switch (l) {
	case DT_DIAG_ERROR: return "ERROR";
	case DT_DIAG_WARNING: return "WARNING";
	case DT_DIAG_NOTE: return "NOTE";
	}
	return "?";
}

static const char *level_color(dt_diag_level l)
{
	switch (l) {
	case DT_DIAG_ERROR: return "\033[1;31m";
	case DT_DIAG_WARNING: return "\033[1;35m";
	case DT_DIAG_NOTE: return "\033[1;36m";
	}
	return "";
}

/* Writes `c` `n` times. */
static void put_n(FILE *out, char c, size_t n)
{
	char buf[256];

	memset(buf, c, DT_MIN(n, sizeof(buf)));
	while (n) {
		size_t m = DT_MIN(n, sizeof(buf));
		fwrite(buf, 1, m, out);
		n -= m;
	}
}

/* A span over more lines than this shows its first DIAG_SPAN_HEAD and last DIAG_SPAN_TAIL. */
#define DIAG_SPAN_LINES 8
#define DIAG_SPAN_HEAD 4
#define DIAG_SPAN_TAIL 2

/* The start of the line holding `off` (never inside the hidden prelude when `off` is past it). */
static uint32_t line_start(const dt_source *src, uint32_t off)
{
	const char *nl = memrchr(src->text, '\n', off);
	uint32_t bol = nl ? (uint32_t)(nl - src->text) + 1 : 0;

	if (bol < src->hidden && off >= src->hidden)
		bol = src->hidden;
	return bol;
}

static uint32_t line_end(const dt_source *src, uint32_t off)
{
	const char *nl = memchr(src->text + off, '\n', src->len - off);

	return nl ? (uint32_t)(nl - src->text) : (uint32_t)src->len;
}

/* One diagnostic in bpftrace's shape (its SourceLocation): a span on one line is
 * `FILE:L:C-E: LEVEL: message` (E just past the span; an empty span is one column wide), the
 * line, and an underline of spaces up to the span and '~' under each of its characters (cut at
 * the end of the line, at least one), a tab being 4 columns in both; a span over several lines
 * is `FILE:L1-L2: LEVEL: message` and each of its lines, without an underline. `pos` caches line
 * lookups over a run of diagnostics. */
static void render(FILE *out, dt_linecol_cache *pos, dt_span at, dt_diag_level lvl,
		   const char *msg, bool color)
{
	const dt_source *src = pos->src;
	uint32_t off = at.off > src->len ? (uint32_t)src->len : at.off;
	uint32_t len = at.len > src->len - off ? (uint32_t)(src->len - off) : at.len;
	uint32_t last = off + (len ? len - 1 : 0);
	unsigned line, col, eline, ecol;
	char where[64];

	dt_linecol_cached(pos, off, &line, &col);
	dt_linecol_cached(pos, last, &eline, &ecol);
	if (eline != line)
		snprintf(where, sizeof(where), "%u-%u", line, eline);
	else
		snprintf(where, sizeof(where), "%u:%u-%u", line, col, col + (len ? len : 1));
	if (color)
		fprintf(out, "\033[1m%s:%s: %s%s:\033[0m\033[1m %s\033[0m\n",
			dt_source_name_at(src, off), where, level_color(lvl), level_name(lvl), msg);
	else
		fprintf(out, "%s:%s: %s: %s\n", dt_source_name_at(src, off), where,
			level_name(lvl), msg);
	uint32_t bol = line_start(src, off);
	if (eline != line) {
		uint32_t eol = line_end(src, last);
		/* bpftrace prints every line; a span over a long probe would bury the message
		 * under it, so past DIAG_SPAN_LINES lines the middle is left out, counted. */
		if (eline - line + 1 <= DIAG_SPAN_LINES) {
			fprintf(out, "%.*s\n", (int)(eol - bol), src->text + bol);
			return;
		}
		uint32_t head_end = bol, tail = line_start(src, last);
		for (unsigned k = 0; k < DIAG_SPAN_HEAD; k++)
			head_end = line_end(src, head_end) + 1;
		for (unsigned k = 1; k < DIAG_SPAN_TAIL; k++)
			tail = line_start(src, tail - 1);
		fprintf(out, "%.*s", (int)(head_end - bol), src->text + bol);
		fprintf(out, "... (%u more lines)\n",
			eline - line + 1 - DIAG_SPAN_HEAD - DIAG_SPAN_TAIL);
		fprintf(out, "%.*s\n", (int)(eol - tail), src->text + tail);
		return;
	}
	uint32_t eol = line_end(src, off);
	/* The line with its tabs expanded, then the underline. */
	for (uint32_t i = bol, j; i < eol; i = j + 1) {
		const char *tab = memchr(src->text + i, '\t', eol - i);
		j = tab ? (uint32_t)(tab - src->text) : eol;
		fwrite(src->text + i, 1, j - i, out);
		if (tab)
			put_n(out, ' ', 4);
	}
	fputc('\n', out);
	/* Counted, then written in one piece: a character at a time was a good part of the time
	 * of printing a diagnostic. */
	size_t lead = 0, marks = 0;
	for (uint32_t i = bol; i < off; i++)
		lead += src->text[i] == '\t' ? 4 : 1;
	put_n(out, ' ', lead);
	if (color)
		fputs("\033[1;32m", out);
	uint32_t end = off + (len ? len : 1);
	for (uint32_t i = off; i < end && i < eol; i++)
		marks += src->text[i] == '\t' ? 4 : 1;
	put_n(out, '~', marks ? marks : 1);
	if (color)
		fputs("\033[0m", out);
	fputc('\n', out);
}

void dt_diag_render(FILE *out, const dt_source *src, dt_span at, dt_diag_level lvl,
		    const char *msg, bool color)
{
	dt_linecol_cache pos = { .src = src, .after_hidden = true };

	render(out, &pos, at, lvl, msg, color);
}

void dt_diags_drop_warnings(dt_diags *d)
{
	size_t j = 0;

	if (!d)
		return;
	for (size_t i = 0; i < d->items.n; i++) {
		struct dt_diag_item *it = &d->items.v[i];

		/* The messages of the others stay in d->text, freed with it: they were freed
		 * one by one here, arena memory, and --no-warnings with a warning aborted. */
		if (it->lvl == DT_DIAG_ERROR)
			d->items.v[j++] = *it;
	}
	d->items.n = j;
}

void dt_diags_print(const dt_diags *d, FILE *out, bool color)
{
	if (!d)
		return;
	dt_linecol_cache pos = { .src = d->src, .after_hidden = true };
	for (size_t i = 0; i < d->items.n; i++) {
		const struct dt_diag_item *it = &d->items.v[i];
		if (it->unplaced) {
			/* bpftrace's shape for its own errors; an empty message leaves the hint
			 * alone (getopt()'s `--help` lists the options and is no error there). */
			if (*it->msg)
				fprintf(out, "%s: %s\n", it->lvl == DT_DIAG_ERROR ? "ERROR" :
					it->lvl == DT_DIAG_WARNING ? "WARNING" : "NOTE", it->msg);
			if (it->hint)
				fprintf(out, "HINT: %s\n", it->hint);
			continue;
		}
		render(out, &pos, it->at, it->lvl, it->msg, color);
		if (it->hint)
			fprintf(out, "HINT: %s\n", it->hint);
	}
	if (d->errors > DT_DIAG_MAX_ERRORS)
		fprintf(out, "%s: %d more errors not shown\n", d->src->name,
			d->errors - DT_DIAG_MAX_ERRORS);
}

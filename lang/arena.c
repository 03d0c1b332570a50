/* arena.c — the per-compilation arena: a list of big blocks carved front to back. Everything the
 * front end builds (AST, types, decoded strings) lives here so one dt_arena_free releases a whole
 * compilation, and no pass has to track who owns what. */
#include "lang/lang_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT_ARENA_BLOCK (64 * 1024)

struct dt_arena_block {
	struct dt_arena_block *next;
	size_t used, cap;
	/* Payload follows, 16-byte aligned because the header is 3 words + padding. */
	_Alignas(16) unsigned char data[];
};

struct dt_arena {
	struct dt_arena_block *head;
};

dt_arena *dt_arena_new(void)
{
	return xcalloc(1, sizeof(dt_arena));
}

void dt_arena_free(dt_arena *a)
{
	if (!a)
		return;
	struct dt_arena_block *b = a->head;
	while (b) {
		struct dt_arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(a);
}

void *dt_arena_alloc(dt_arena *a, size_t n)
{
	n = DT_ALIGN(n ? n : 1, 16);
	struct dt_arena_block *b = a->head;
	if (!b || b->cap - b->used < n) {
		/* Oversized requests get a block of their own so the common block size stays small. */
		size_t cap = n > DT_ARENA_BLOCK ? n : DT_ARENA_BLOCK;
		struct dt_arena_block *nb = xmalloc(sizeof(*nb) + cap);
		nb->used = 0;
		nb->cap = cap;
		if (b && n > DT_ARENA_BLOCK) {
			/* Keep the current block first: it likely still has room for small things. */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			a->head = nb;
		}
		b = nb;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *dt_arena_strndup(dt_arena *a, const char *s, size_t n)
{
	char *p = dt_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *dt_arena_vprintf(dt_arena *a, const char *fmt, va_list ap)
{
	/* One formatting pass for the common short string; a second only for a long one. */
	char buf[256];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		n = 0;
	char *p;
	if ((size_t)n < sizeof(buf)) {
		p = dt_arena_strndup(a, buf, (size_t)n);
	} else {
		p = dt_arena_alloc(a, (size_t)n + 1);
		vsnprintf(p, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	return p;
}

char *dt_arena_printf(dt_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = dt_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

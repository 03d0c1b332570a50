/* strmap.c — dt_strmap, the string-keyed pointer table of common.h: linear probing over a
 * power-of-two array kept at most half full, FNV-1a hashes. Front end and session look names up
 * here instead of scanning arrays, so a script with N maps costs O(N), not O(N^2). */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static struct dt_strmap_slot *find(const dt_strmap *m, const char *key)
{
	size_t mask = m->cap - 1;

	for (size_t i = hash(key) & mask;; i = (i + 1) & mask)
		if (!m->slots[i].key || !strcmp(m->slots[i].key, key))
			return &m->slots[i];
}

void *dt_strmap_get(const dt_strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	return find(m, key)->val;
}

void dt_strmap_put(dt_strmap *m, const char *key, void *val)
{
	struct dt_strmap_slot *sl;

	if (2 * (m->n + 1) > m->cap) {
		dt_strmap grown = { .cap = m->cap ? 2 * m->cap : 16 };

		grown.slots = xcalloc(grown.cap, sizeof(*grown.slots));
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key)
				*find(&grown, m->slots[i].key) = m->slots[i];
		grown.n = m->n;
		free(m->slots);
		*m = grown;
	}
	sl = find(m, key);
	if (!sl->key) {
		sl->key = key;
		m->n++;
	}
	sl->val = val;
}

void dt_strmap_fini(dt_strmap *m)
{
	free(m->slots);
	*m = (dt_strmap){ 0 };
}

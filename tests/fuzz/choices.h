/* choices.h — the fuzz input read as a stream of choices, for the harnesses that decode their
 * input into a structured one (gen.c's scripts, fuzz_unwind.c's CFI sections and ELF images):
 * each byte picks one of the alternatives at one decision, and an input that is used up always
 * picks the first, so the first alternative must be the one that ends things (a leaf, no more
 * statements, no more entries). Byte mutations of the input then become changes of structure. */
#ifndef DT_FUZZ_CHOICES_H
#define DT_FUZZ_CHOICES_H

#include <stddef.h>
#include <stdint.h>

typedef struct choices {
	const uint8_t *p;
	size_t n, i;
} choices;

/* One of n alternatives (two bytes when n > 256); 0 once the input is used up. */
static inline unsigned pick(choices *c, unsigned n)
{
	if (n <= 1 || c->i >= c->n)
		return 0;
	unsigned v = c->p[c->i++];
	if (n > 256 && c->i < c->n)
		v = v << 8 | c->p[c->i++];
	return v % n;
}

#endif

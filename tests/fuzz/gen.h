/* gen.h — the fuzzers' structure-aware script generator: fuzz bytes in, a script of the language
 * out, written for the world of fuzz_env.h so that most of them pass the checker. See gen.c. */
#ifndef DT_FUZZ_GEN_H
#define DT_FUZZ_GEN_H

#include <stddef.h>
#include <stdint.h>

/* The script the bytes decode to: a malloc'd, NUL-terminated text (caller frees), never NULL.
 * The same bytes always give the same script. */
char *gen_script(const uint8_t *data, size_t size, size_t *len);

#endif

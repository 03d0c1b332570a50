/* fuzz_env.h — the world the script harnesses check against, the same on every machine and in
 * every run: the golden tests' fake tracefs (tests/golden/lang/tracefs: tracepoint formats, and
 * the kernel functions kprobe wildcards match), one map of a live session as the REPL has them,
 * and two positional parameters. The generator (gen.c) writes scripts for this world. */
#ifndef DT_FUZZ_ENV_H
#define DT_FUZZ_ENV_H

#include "lang/lang.h"

#define FUZZ_LIVE_MAP "@live" /* a live map: int64 keys, string[16] values */
#define FUZZ_PARAM_INT "$1"   /* "42": an integer */
#define FUZZ_PARAM_STR "$2"   /* "str": a string */
/* The world's one C type, as a script defines it; the fake type source lays it out as clang
 * would (int a @0; unsigned char b:3 @4; long c[2] @8; an anonymous struct { short d; } @24;
 * 32 bytes) without running clang, so every run sees the same types. */
#define FUZZ_CSTRUCT_DEF \
	"struct dtfuzz { int a; unsigned char b : 3; long c[2]; struct { short d; }; };"
#define FUZZ_CSTRUCT "struct dtfuzz"

/* The fake tracefs root (an absolute path into the source tree). */
const char *fuzz_tracefs(void);
/* Check options for that world. */
void fuzz_check_opts(dt_check_opts *o);

#endif

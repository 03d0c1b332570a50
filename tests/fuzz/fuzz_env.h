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

/* The fake tracefs root (an absolute path into the source tree). */
const char *fuzz_tracefs(void);
/* Check options for that world. */
void fuzz_check_opts(dt_check_opts *o);

#endif

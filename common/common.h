/* common.h — the few things every module shares: the xmalloc family (abort on out-of-memory, so
 * callers never thread ENOMEM through), a growable-array macro, and small utilities. Nothing here
 * knows about BPF, LLVM or the language. */
#ifndef DT_COMMON_H
#define DT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* DT_VERSION, the version as a string literal, comes from the build: project(VERSION) in the top
 * CMakeLists.txt, defined for every target that links dt_common. */

#define DT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DT_ALIGN(x, a) (((x) + (a) - 1) / (a) * (a))

/* Allocation that never returns NULL: on failure it prints one line and aborts. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* asprintf that aborts on failure. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable array: declare `DT_VEC(int) v = {0};`, then DT_VEC_PUSH(&v, 3); free with free(v.v). */
#define DT_VEC(T) struct { T *v; size_t n, cap; }
#define DT_VEC_PUSH(vec, x)                                                                  \
	do {                                                                                 \
		if ((vec)->n == (vec)->cap) {                                                \
			(vec)->cap = (vec)->cap ? (vec)->cap * 2 : 8;                        \
			(vec)->v = xrealloc((vec)->v, (vec)->cap * sizeof(*(vec)->v));       \
		}                                                                            \
		(vec)->v[(vec)->n++] = (x);                                                  \
	} while (0)

/* A string-keyed table of pointers (open addressing): name lookups that stay O(1) however many
 * maps or variables a script has. Keys are not copied: they must outlive the table. Zero-initialise
 * (`dt_strmap m = {0};`), free with dt_strmap_fini. */
typedef struct dt_strmap {
	struct dt_strmap_slot { const char *key; void *val; } *slots;
	size_t n, cap;
} dt_strmap;
/* The value stored under key, or NULL. */
void *dt_strmap_get(const dt_strmap *m, const char *key);
/* Stores val under key, replacing what was there. */
void dt_strmap_put(dt_strmap *m, const char *key, void *val);
void dt_strmap_fini(dt_strmap *m);

/* Read a whole file into a NUL-terminated heap buffer; 0 or -errno. */
int dt_read_file(const char *path, char **out, size_t *len);

/* strerror(err) (err > 0) in words, also for the kernel-internal codes (512..530) that BPF and
 * perf syscalls leak to userspace and glibc does not name ("Unknown error 524"). Use it for
 * every errno a message shows. */
const char *dt_strerror(int err);

/* Monotonic clock in nanoseconds. */
uint64_t dt_now_ns(void);

/* How many threads a large job may use: DT_CG_THREADS=N when set (1: none but the caller's),
 * else the CPUs this process may run on (sched_getaffinity); at least 1. Codegen's jobs and the
 * parallel loading of programs share it. */
unsigned dt_worker_threads(void);

/* The x86-64 system calls of the build's kernel headers (common/syscalls.c): the number of the
 * one named `name` ("openat"), -1 when the headers do not know it; the name of number nr, NULL
 * when none has it. */
int64_t dt_syscall_nr(const char *name);
const char *dt_syscall_name(int64_t nr);

#endif

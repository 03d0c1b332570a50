/* unwind_internal.h — what the files of unwind/ share: the deduplicated rule set, the compact row
 * table of one object, the CFI parser's entry points (cfi.c), the CFI of an ELF object
 * (elfobj.c) and the exec follower's maps shared with the walker (exec.c). Not for other modules;
 * they use unwind/unwind.h. */
#ifndef DT_UNWIND_INTERNAL_H
#define DT_UNWIND_INTERNAL_H

#include "bpf-lib/dt_walker.h"
#include "unwind/unwind.h"
#include "common/common.h"
#include "elfproc/elfproc.h"

#include <stdio.h>

/* Deduplicated rules shared by every object of an unwinder (index 0 = DT_CFA_UNDEF). */
typedef struct dt_ruleset {
	struct dt_unwind_rule *rules;
	uint32_t n, cap;
	uint32_t *hash;   /* open addressing: rule index + 1, 0 = empty */
	uint32_t hcap;    /* power of two */
} dt_ruleset;

void dt_ruleset_init(dt_ruleset *rs);
void dt_ruleset_fini(dt_ruleset *rs);
/* Index of `r` in the set, adding it; -ENOSPC past DT_MAX_RULES. */
int dt_ruleset_intern(dt_ruleset *rs, const struct dt_unwind_rule *r);

/* The rows of one object: pc[i] (ELF vaddr, 32 bits) starts rule[i], sorted, no two consecutive
 * rows with the same rule. A rule 0 row ends the previous FDE's range. */
typedef struct dt_rows {
	uint32_t *pc;
	uint16_t *rule;
	uint32_t n, cap;
	uint32_t nbad;    /* FDEs skipped as malformed (their ranges unwind by frame pointer) */
} dt_rows;

void dt_rows_fini(dt_rows *t);
/* Where `a` has no rule (rule 0 or before its first row), take b's: a becomes the union. */
void dt_rows_merge(dt_rows *a, const dt_rows *b);

/* Parse a CFI section (.eh_frame when is_eh, else .debug_frame) loaded at `sec_addr` into rows,
 * interning rules into `rs`. A malformed FDE is skipped (out->nbad counts it, err keeps the first
 * message and 0 is returned); -EINVAL (message in err, nothing appended) when nothing was usable,
 * -ENOSPC when the rule set is full. */
int dt_cfi_parse(const uint8_t *sec, size_t size, uint64_t sec_addr, bool is_eh, dt_ruleset *rs,
		 dt_rows *out, char *err, size_t errlen);

/* Build the rows of an ELF object: its .eh_frame, with the gaps filled from its .debug_frame, or
 * when it has none, from the .debug_frame of its separate debug file (dt_elf_debug_file, with the
 * --debuginfo dirs of `c`, which may be NULL). 0 with out->n == 0 when the object has no CFI;
 * -errno with a message in err (which also holds the warning when out->nbad FDEs were skipped). */
int dt_cfi_build(dt_elf_cache *c, dt_elf *e, dt_ruleset *rs, dt_rows *out, char *err,
		 size_t errlen);
/* The same for the ELF file at `path`, opened outside any cache (-d unwind, tests, the bench). */
int dt_cfi_build_file(const char *path, dt_ruleset *rs, dt_rows *out, char *err, size_t errlen);

/* Writes a rule as "cfa=rsp+8  rip=[cfa-8]  rbp=same". */
void dt_rule_format(const struct dt_unwind_rule *r, char *buf, size_t len);

/* ---------------------------------------------------------------- BPF objects (unwinder.c) */

struct bpf_object;
/* Formats a message for an opts->log callback; nothing when `log` is NULL. */
void dt_unwind_log(void (*log)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The fd of map `name` in a loaded object, or -ENOENT. */
int dt_obj_map_fd(struct bpf_object *obj, const char *name);

/* ---------------------------------------------------------------- exec.c, for unwinder.c */

/* The follower's instance of a map it shares with the walker (procs, requests, wstats, config:
 * see bpf-lib/walker_maps.bpf.h), for the walker's object to reuse; -ENOENT for other names. */
int dt_exec_follower_walker_map_fd(const dt_exec_follower *f, const char *name);
/* Sets DT_EXEC_FOLLOW_ALL: every exec'ing process gets a table, not only known ones. */
int dt_exec_follower_follow_all(dt_exec_follower *f);
/* Sets config's cgroup (0: none): its processes get a table at exec and are held while they are
 * read (bpf-lib/dt_exec.h, HOLDING); only for an unwinder that serves the requests. */
int dt_exec_follower_follow_cgroup(dt_exec_follower *f, uint64_t cgroup_id);
/* Consumes every request left in the ring buffer, continuing the held processes: for whoever
 * lets go of the requests last, once no follower can hold another process. */
void dt_exec_follower_release_held(dt_exec_follower *f);

/* ---------------------------------------------------------------- python.c, for unwinder.c */

/* CPython processes (bpf-lib/dt_python.h): discovery, the walker's pyprocs entries, and the names
 * of Python frames from its pycode records. */
typedef struct dt_py dt_py;
/* notice: the one line said when an interpreter's version has no known offsets; log: -v's
 * details (where the offsets came from). Either may be NULL. */
/* procs_fd: pyprocs; codes_fd, threads_fd: the outer maps of pycode and pythreads, whose
 * inner maps are made when the first CPython process is seen (dt_python.h, "Lazy maps");
 * load_step(step_ctx) then loads the walker's Python step (0 or -errno), once. */
dt_py *dt_py_new(dt_elf_cache *elfc, int procs_fd, int codes_fd, int threads_fd,
		 int (*load_step)(void *ctx), void *step_ctx,
		 void (*notice)(void *ctx, const char *msg), void *notice_ctx,
		 void (*log)(void *ctx, const char *msg), void *log_ctx);
/* Structure offsets of CPython 3.minor from the DWARF of elf (the interpreter object, or its
 * debug file): 0; -ENODATA without DWARF, -ENOENT (`missing` names the structure or member) or
 * -EOVERFLOW when one is not there or too far, -EOPNOTSUPP for a version before 3.10. */
/* Where a debug file missing locally is asked for by build-id (dt_unwinder_opts.debug_file). */
void dt_py_set_debug_file(dt_py *p, int (*fn)(void *ctx, const uint8_t *id, size_t idn,
					     char **path), void *ctx);
struct dt_py_offsets;
int dt_py_dwarf_offsets(Elf *elf, int minor, struct dt_py_offsets *out, char *missing,
			size_t mn);
/* The table of known releases' offsets for 3.minor (release builds), or NULL. */
const struct dt_py_offsets *dt_py_table_offsets(int minor);
void dt_py_free(dt_py *p);
/* Writes pid's pyprocs entry when its mappings hold a CPython runtime of a known version, else
 * deletes it. */
void dt_py_scan(dt_py *p, uint32_t pid, const dt_proc_mappings *maps);
void dt_py_forget(dt_py *p, uint32_t pid);
/* The line of instruction `lasti` (code units) from a CPython 3.11+ line table (co_linetable,
 * Objects/locations.md), starting at firstlineno; -1 when it has none or the table ends first. */
int dt_py_line_311(const uint8_t *lt, uint32_t len, int32_t firstlineno, uint32_t lasti);
/* The same for CPython 3.10's table ((byte delta, line delta) pairs, -128: no line). */
int dt_py_line_310(const uint8_t *lt, uint32_t len, int32_t firstlineno, uint32_t lasti);
/* See dt_unwinder_py_frame. */
int dt_py_frame_name(dt_py *p, uint32_t pid, uint64_t word, char *name, size_t nn, char *file,
		     size_t fnn, uint32_t *line);

#endif

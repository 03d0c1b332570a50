/* unwind_internal.h — what the files of unwind/ share: the deduplicated rule set, the compact row
 * table of one object, the CFI parser's entry points (cfi.c), the ELF helpers (elfobj.c) and the
 * exec follower's maps shared with the walker (exec.c). Not for other modules; they use
 * unwind/unwind.h. */
#ifndef DT_UNWIND_INTERNAL_H
#define DT_UNWIND_INTERNAL_H

#include "bpf-lib/dt_walker.h"
#include "unwind/unwind.h"
#include "common/common.h"

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

/* Build the rows of the ELF file at `path`: its .eh_frame, with the gaps filled from its
 * .debug_frame, or when it has none, from a separate debug file's .debug_frame found by build-id
 * or debuglink. 0 with out->n == 0 when the object
 * has no CFI; -errno with a message in err. */
int dt_cfi_build_file(const char *path, dt_ruleset *rs, dt_rows *out, char *err, size_t errlen);
/* The same, from an ELF image in memory (used by the fuzzer: no debug-file lookup). */
int dt_cfi_build_mem(const void *buf, size_t size, dt_ruleset *rs, dt_rows *out, char *err,
		     size_t errlen);

/* Writes a rule as "cfa=rsp+8  rip=[cfa-8]  rbp=same". */
void dt_rule_format(const struct dt_unwind_rule *r, char *buf, size_t len);

/* Identity of an ELF file: its GNU build-id (hex) or "dev:ino:mtime". 0 or -errno. */
int dt_elf_identity(const char *path, char *id, size_t idlen);

/* The PT_LOAD segments of an ELF file (to turn a mapping's file offset into a load bias). The
 * _mem variant only reads (the vdso image). Count, or -errno. */
typedef struct dt_elf_seg {
	uint64_t vaddr, off, filesz;
	bool exec;
} dt_elf_seg;
int dt_elf_segments(const char *path, dt_elf_seg *segs, int max);
int dt_elf_segments_mem(const void *buf, size_t size, dt_elf_seg *segs, int max);

/* ---------------------------------------------------------------- BPF objects (unwinder.c) */

struct bpf_object;
/* Formats a message for an opts->log callback; nothing when `log` is NULL. */
void dt_unwind_log(void (*log)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The fd of map `name` in a loaded object, or -ENOENT. */
int dt_obj_map_fd(struct bpf_object *obj, const char *name);

/* ---------------------------------------------------------------- exec.c, for unwinder.c */

/* The follower's instance of a map it shares with the walker (procs, requests, wstats: see
 * bpf-lib/walker_maps.bpf.h), for the walker's object to reuse; -ENOENT for other names. */
int dt_exec_follower_walker_map_fd(const dt_exec_follower *f, const char *name);
/* Sets DT_EXEC_FOLLOW_ALL: every exec'ing process gets a table, not only known ones. */
int dt_exec_follower_follow_all(dt_exec_follower *f);

#endif

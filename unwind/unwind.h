/* unwind.h — the userspace side of ustack_dwarf: loads the precompiled DWARF walker (bpf-lib/),
 * builds compact unwind tables from the CFI of every object a traced process maps (shared per
 * object identity: libc is built once), keeps per-process mapping tables in the walker's maps,
 * serves the walker's requests (unknown pid, PC in an unknown mapping, exec, exit), reads stacks
 * back for printing, and renders tables for `-d unwind FILE`. It also owns the exec follower
 * (bpf-lib/dt_exec.h), the one program a session attaches to exec: it counts address-space
 * generations with or without the walker, and does the walker's exec bookkeeping once an unwinder
 * shares its maps. The protocol with generated programs is documented in bpf-lib/dt_walker.h.
 * Functions return 0 or -errno unless they say otherwise. */
#ifndef DT_UNWIND_H
#define DT_UNWIND_H

#include "bpf-lib/dt_walker.h"
#include "elfproc/elfproc.h"

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dt_unwinder dt_unwinder;

/* ---------------------------------------------------------------- the exec follower */

typedef struct dt_exec_follower dt_exec_follower;

typedef struct dt_exec_follower_opts {
	size_t sz;                /* sizeof(struct dt_exec_follower_opts) */
	/* libbpf/verifier failures are described here when set (else nowhere). */
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
} dt_exec_follower_opts;

/* Loads the exec follower and attaches it to the sched_process_exec raw tracepoint: from now on
 * every exec bumps the process's generation and forgets it in the pids-seen map. NULL with errno
 * set (and a message through opts->log). */
dt_exec_follower *dt_exec_follower_new(const dt_exec_follower_opts *opts);
/* Detaches and closes it. NULL is fine. */
void dt_exec_follower_free(dt_exec_follower *f);
/* The generation map (DT_AUX_EXEC_GEN: tgid -> generation, see DT_GEN_SHIFT in bpf-lib/dt_abi.h)
 * and the pids-seen map (DT_AUX_PIDS_SEEN) for generated code. */
int dt_exec_follower_gen_fd(const dt_exec_follower *f);
int dt_exec_follower_seen_fd(const dt_exec_follower *f);
/* The generation of pid's image now (0: it has not exec'd since the follower was attached, or
 * f is NULL). */
uint32_t dt_exec_follower_gen(const dt_exec_follower *f, uint32_t pid);

/* ---------------------------------------------------------------- the unwinder */

typedef struct dt_unwinder_opts {
	size_t sz;                /* sizeof(struct dt_unwinder_opts) */
	/* Kernel memory for row pages (the bulk of the tables); 0 = 64 MiB. */
	uint64_t table_budget;
	/* Entries of the frames map (distinct stacks kept); 0 = 16384. */
	uint32_t max_stacks;
	/* Bit (1 << enum dt_walker_ptype) per program type whose walker loads now; the others load
	 * with dt_unwinder_load_walker (each costs the verifier ~50-100 ms). */
	uint32_t ptypes;
	/* Follow processes: the unwinder shares its process table, request ring buffer and
	 * counters with this exec follower (which must outlive it), which then does its exec
	 * bookkeeping, and attaches its own exit and executable-mmap followers. NULL: neither (an
	 * exec or exit is noticed only when a request for the pid fails). */
	dt_exec_follower *exec;
	/* ELF objects shared with the symbolizer, and the --debuginfo dirs searched for a stripped
	 * object's .debug_frame (both the session's); NULL: the unwinder keeps its own cache. */
	dt_elf_cache *elf_cache;
	/* libbpf/verifier messages and build warnings go here when set (else nowhere). */
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	/* Called for a process held by dt_unwinder_follow_cgroup once its tables are built, while
	 * it is still stopped: the one moment a process living a millisecond can surely be read. */
	void (*held)(void *ctx, uint32_t pid);
	void *held_ctx;
	/* What the user must be told even without -v (a CPython version whose frames cannot be
	 * read); NULL: nowhere. One line each, said once. */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	/* The debug file of a build-id from elsewhere (the symbolizer's debuginfod client): 0 with
	 * *path malloc'd, else -errno. Asked for a CPython interpreter without DWARF of its own or a
	 * local debug file, for its structure offsets. NULL: not asked. */
	int (*debug_file)(void *ctx, const uint8_t *id, size_t idn, char **path);
	void *debug_file_ctx;
} dt_unwinder_opts;

/* Opens and loads the walker. NULL with errno set (and a message through opts->log). */
dt_unwinder *dt_unwinder_new(const dt_unwinder_opts *opts);
void dt_unwinder_free(dt_unwinder *u);

/* The walker's program type slot for a BPF program type, or -EOPNOTSUPP. */
int dt_walker_ptype_of(enum bpf_prog_type t);

/* Loads the walker for BPF program type t unless it is loaded already: 0, -EOPNOTSUPP for a
 * program type the walker does not support, or the load error. */
int dt_unwinder_load_walker(dt_unwinder *u, enum bpf_prog_type t);
/* Fds for the session / codegen (DT_AUX_WALKER_PROGS, DT_AUX_CONT_PROGS, DT_AUX_WALKER_STATE) for
 * the given program type, whose walker is loaded; -EOPNOTSUPP for a program type the walker does
 * not support, -ENOENT when its walker is not loaded. Lookups only. The session puts each
 * continuation's prog fd at its slot in the continuation array (bpf_map_update_elem). */
int dt_unwinder_walker_progs_fd(dt_unwinder *u, enum bpf_prog_type t);
int dt_unwinder_cont_progs_fd(dt_unwinder *u, enum bpf_prog_type t);
int dt_unwinder_state_fd(dt_unwinder *u, enum bpf_prog_type t);
/* Size of each continuation prog array (cont_slot must be below it). */
uint32_t dt_unwinder_cont_slots(const dt_unwinder *u);
int dt_unwinder_frames_fd(const dt_unwinder *u);

/* Builds tables for a running process now (for -p/-c and processes running at start), including
 * every object it maps. -ESRCH when it is gone. */
int dt_unwinder_add_pid(dt_unwinder *u, uint32_t pid);
/* Marks a process that has not exec'd yet (a -c child) as known with no mappings: the walker's
 * exec and mmap followers then report its exec and each library ld.so maps as they happen. */
int dt_unwinder_watch_pid(dt_unwinder *u, uint32_t pid);
/* Follows the processes of a cgroup v2 (its id) from their exec on, as if each were watched, and
 * holds each (SIGSTOP, then SIGCONT) at its exec and after each executable mmap until its
 * tables are built (bpf-lib/dt_exec.h, HOLDING): the processes a -c command starts — a shell's
 * children, what a wrapper runs — have complete stacks from their first sample, like the
 * command itself. The holds are served by dt_unwinder_process (so call it promptly) and let go
 * by dt_unwinder_free. Needs opts.exec (else -EOPNOTSUPP). 0 or -errno. */
int dt_unwinder_follow_cgroup(dt_unwinder *u, uint64_t cgroup_id);
/* Builds tables for every process running now (system-wide tracing: samples of processes that
 * were already running are complete from the first one). Returns the number of processes added
 * (kernel threads and processes gone meanwhile are skipped) or -errno. */
int dt_unwinder_add_all(dt_unwinder *u);
/* Forgets a process (exit); its objects are evicted later if no one else maps them. */
void dt_unwinder_remove_pid(dt_unwinder *u, uint32_t pid);

/* An fd that becomes readable when the walker has requests; then call dt_unwinder_process(). */
int dt_unwinder_poll_fd(const dt_unwinder *u);
/* Serves pending requests without blocking, at most a batch (64) per call so that the caller's
 * other work is not starved under churn (the poll fd stays readable while some are left);
 * returns the number served or -errno. */
int dt_unwinder_process(dt_unwinder *u);

/* Reads the frames of a ustack_dwarf value: up to `max` pcs into `pcs`; returns the count (0 for
 * ref->id == 0) or -ENOENT when the id is not in the frames map (evicted: counted, and reported
 * by dt_unwinder_warn_losses). */
int dt_unwinder_frames(dt_unwinder *u, const struct dt_stack_ref *ref, uint64_t *pcs,
		       uint32_t max);

/* The name of a Python frame of a stack (a word with DT_PY_FRAME_BIT, bpf-lib/dt_python.h) of
 * process pid: the function's name, its file and the line (0 when unknown), from the record the
 * walker copied while the process lived. 0, or -ENOENT when there is no record (evicted). */
int dt_unwinder_py_frame(dt_unwinder *u, uint32_t pid, uint64_t word, char *name, size_t nn,
			 char *file, size_t fnn, uint32_t *line);

/* "complete", "truncated (depth)", … for the low byte of dt_stack_ref.flags. */
const char *dt_unwind_status_str(uint32_t flags);

typedef struct dt_unwinder_stats {
	uint64_t objects, rows, rules, table_bytes, procs;
	uint64_t requests_served, build_errors, evictions;
	uint64_t row_pages_used, row_pages_total; /* struct dt_row_page units of the budget */
	uint64_t wstat[DT_WSTAT__COUNT];  /* the walker's counters summed over CPUs */
} dt_unwinder_stats;
void dt_unwinder_get_stats(const dt_unwinder *u, dt_unwinder_stats *st);
/* Writes the stats as "name value" lines (for -v). */
void dt_unwinder_print_stats(const dt_unwinder *u, FILE *f);
/* Without -v: one line on `f` when anything was dropped (requests lost, stacks not stored or
 * evicted before printing, walks cut by the tail-call limit, objects left without tables);
 * returns 1 then, else 0. */
int dt_unwinder_warn_losses(const dt_unwinder *u, FILE *f);

/* `-d unwind FILE`: the rows of an ELF file's CFI, one range per line, e.g.
 * "0x1130-0x1135  cfa=rsp+8  rip=[cfa-8]  rbp=same", then a summary line. 0, or -errno after one
 * line "PATH: why" on stderr (this is the CLI's dump, so it reports like the CLI). */
int dt_unwind_dump(const char *path, FILE *f);

#endif

/* session_internal.h — what the runtime's own files share and nobody else sees: the attach layer
 * (attach.c: one function per provider, target and symbol resolution, wildcard expansion), the
 * layout of a session and its units (session.c), the work on its maps while tracing
 * (session_maps.c), the event loop (loop.c), the -c child and the -p process (child.c). The
 * public face is runtime.h (the CLI and the REPL are written against it); output and symbols
 * are output/output.h and symbols/symbols.h. */
#ifndef DT_SESSION_INTERNAL_H
#define DT_SESSION_INTERNAL_H

#include "runtime/runtime.h"
#include "output/output.h"
#include "symbols/symbols.h"
#include "codegen/codegen.h"
#include "ctypes/ctypes.h"
#include "common/common.h"
#include "unwind/unwind.h"
#include "elfproc/elfproc.h"

#include <sys/types.h>

typedef DT_VEC(int) dt_fdvec;

/* ---------------------------------------------------------------- attach.c */

/* Attaches an already loaded program to every event attach point `a` names (one perf event per
 * CPU for profile/software/hardware, one for the rest). `pid` restricts uprobes to one process
 * (-p/-c), -1 for all. The perf event fds (closing them detaches) are appended to `fds`. On failure
 * nothing stays attached, *err is a malloc'd sentence that starts with the attach point's text and
 * says what to do, and the result is -errno. BEGIN/END are not attached: see dt_rt_run_once. */
int dt_rt_attach(const dt_attach *a, int prog_fd, int pid, dt_fdvec *fds, char **err);

/* Sets *err to a malloc'd sentence made as printf does and returns rc (a failure's two parts). */
int dt_rt_fail(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Checks, without attaching, what can be known before loading: uprobe targets and symbols,
 * tracepoints, kprobe and hardware counter support, event names. 0, or -errno with *err set
 * exactly as dt_rt_attach would. */
int dt_rt_validate(const dt_attach *a, int pid, char **err);

/* dt_rt_validate's code for a uprobe refused in bpftrace's own sentences, which scripts and its
 * tests match whole: one for the traced process's sake, which --unsafe allows (a symbol of size
 * 0), or an address no executable segment holds. *err is then those sentences (lines of their
 * own; a `HINT: ` line adds dwarftrace's detail), without the attach point, for the caller to
 * print as bpftrace does and name the attach point after them. No other failure of a uprobe's
 * resolution gives it. */
#define DT_RT_REFUSED (-EPERM)

/* Runs a BEGIN/END program once, now. 0 or -errno with *err set. */
int dt_rt_run_once(int prog_fd, enum bpf_prog_type type, char **err);

/* Resolves a uprobe target as written ("/bin/true", "./a.out", "libc", "libc.so.6") to a path:
 * paths are used as they are; library names are looked up in the mappings of `pid` (if > 0), then
 * /etc/ld.so.cache, then the standard library directories. 0 with *path malloc'd, or -ENOENT. */
int dt_rt_resolve_binary(const char *target, int pid, char **path);

/* Resolves `sym` (a symbol name, or a virtual address written as a number) in ELF file `path` to
 * a file offset for the uprobe PMU, plus `off`. Without `unsafe` (--unsafe) the start of a symbol
 * of size 0 is refused (DT_RT_REFUSED), as bpftrace refuses it; with it, an address in a
 * file that is not ELF is its file offset. 0, or -errno with *err a malloc'd sentence. */
int dt_rt_resolve_symbol(const char *path, const char *sym, uint64_t off, bool unsafe,
			 uint64_t *file_off, char **err);

/* Opens (disabled, unbound) the perf event of a uprobe (`ret`: a uretprobe) at the target and
 * symbol of `a`, restricted to `pid` if > 0. The fd, or -errno with *err set as dt_rt_attach. */
int dt_rt_uprobe_open(const dt_attach *a, int pid, bool ret, char **err);

/* The entry point (ELF e_entry, a virtual address) of an executable. 0 or -errno. */
int dt_rt_elf_entry(const char *path, uint64_t *entry);

/* Resolves many symbols of one ELF file at once (one pass over its symbol tables): file_off[i]
 * for syms[i] and, when size is not NULL, size[i] its symbol's size (left alone for an address),
 * or why[i] a malloc'd sentence (why[i] NULL when resolved). 0, or dt_elf_open's -errno when
 * the file cannot be read as ELF (dt_elf_strerror says why). */
int dt_rt_resolve_symbols(const char *path, const char *const *syms, uint32_t n,
			  uint64_t *file_off, uint64_t *size, char **why);

/* Opens (disabled, unbound) a uprobe perf event at `off` of `path` (`ret`: a uretprobe), for
 * `pid` if > 0. The fd or -errno (-EOPNOTSUPP: no uprobes in this kernel). */
int dt_rt_uprobe_open_at(const char *path, uint64_t off, int pid, bool ret);
/* The same with a reference counter (a USDT semaphore) at file offset `ref_ctr_off` (0: none),
 * which the kernel increments in each process the uprobe is installed in while it exists. */
int dt_rt_uprobe_open_ref(const char *path, uint64_t off, uint64_t ref_ctr_off, int pid, bool ret);

/* The tracefs id of tracepoint `a`; 0, or -errno with *err set as dt_rt_attach would. */
int dt_rt_tracepoint_id(const dt_attach *a, uint64_t *id, char **err);
/* Opens (disabled, unbound) the perf event of tracepoint `id`. The fd or -errno. */
int dt_rt_tracepoint_open(uint64_t id);

/* USDT: one object a usdt target names, while its notes are read. */
typedef struct dt_rt_usdt_obj {
	const char *path;  /* as opened (a -p process's files through /proc/PID/root) */
	const char *shown; /* as written, or as the process names it */
	dt_elf *elf;
} dt_rt_usdt_obj;
typedef int (*dt_rt_usdt_fn)(void *ctx, const dt_rt_usdt_obj *o, const dt_elf_usdt *u);
/* Calls fn on every USDT note of every object `target` names (a path or library name, a glob,
 * or empty / "*": every executable file of process `pid` if > 0, else the -c program
 * `child_path` if not NULL, else of every process), until fn returns non-zero; returns that. A
 * target named alone that cannot be found or read is -errno with *why a malloc'd sentence. */
int dt_rt_usdt_each(const char *target, int pid, const char *child_path, dt_rt_usdt_fn fn,
		    void *ctx, char **why);
/* The dt_check_opts.usdt callback: `ctx` points at a struct dt_rt_expand_ctx. */
int dt_rt_usdt_locations(void *ctx, dt_arena *a, const dt_attach *at, dt_usdt_loc **locs,
			 uint32_t *n, char **why);

/* ---------------------------------------------------------------- attach_bulk.c */

/* The attach type of uprobe-multi links and of the programs they run (kernel 6.6). Debian 12's
 * uapi headers (6.1) do not have it: the value is the kernel's include/uapi/linux/bpf.h's. */
#ifndef BPF_TRACE_UPROBE_MULTI
#define BPF_TRACE_UPROBE_MULTI 48
#endif

/* A set of attach points one program serves (dt_cg_prog.set), as it attaches in bulk. */
typedef struct dt_rt_set {
	const dt_attach *const *set;
	uint32_t n;
	const bool *skip;    /* by position: members dropped when the set was checked, or NULL */
	int prog_fd;
	int pid;             /* uprobes: only in this process if > 0 */
	int syscall_fd;      /* the unit's DT_AUX_SYSCALL_SLOTS map (syscall sets), or -1 */
	bool multi;          /* the program was loaded for uprobe-multi (dt_rt_set_multi) */
	/* Asked between attach steps: true stops attaching (what is attached stays). NULL: never. */
	bool (*cancelled)(void *ctx);
	/* A member that cannot attach and is skipped; `why` is words, `rc` the -errno: -ENOENT when
	 * it matches nothing (no such function or tracepoint). */
	void (*skipped)(void *ctx, const dt_attach *a, int rc, const char *why);
	void *ctx;
} dt_rt_set;

/* The kernel's uprobe-multi links, probed once: bit 0, it has them; bit 1, their pid filter is per
 * process (6.9+). --info says bit 0. */
int dt_rt_uprobe_multi_support(void);

/* Whether the program of uprobe set `set` is loaded with expected_attach_type
 * BPF_TRACE_UPROBE_MULTI (the kernel has uprobe-multi links, the pid filter works, and the
 * program tail-calls nothing). */
bool dt_rt_set_multi(const dt_attach *const *set, uint32_t n, int pid, bool tail_calls);

/* Checks a set before loading, as dt_rt_validate checks one attach point: members that cannot
 * attach (a missing function or tracepoint) are marked in skip[] and said through st->skipped;
 * an error (-errno, *err as dt_rt_validate's) only when none is left or the binary fails. */
int dt_rt_validate_set(const dt_rt_set *st, bool *skip, char **err);

/* Attaches the set's members not marked skipped; members that fail are skipped (st->skipped).
 * Every fd (closing them detaches) is appended to fds, and how many members attached goes to
 * *nattached. 0; -ECANCELED when st->cancelled stopped it (what attached stays in fds); else
 * -errno with *err a malloc'd sentence and nothing attached (also when no member attached). */
int dt_rt_attach_set(const dt_rt_set *st, dt_fdvec *fds, uint32_t *nattached, char **err);

/* Detaches: closes fds[from..] (from several threads when there are many) and drops them. */
void dt_rt_detach(dt_fdvec *fds, size_t from);

/* What a negative errno from creating a probe means, in words. */
const char *dt_rt_attach_why(int rc);

/* The dt_check_opts.expand callback: `ctx` points at a struct dt_rt_expand_ctx. */
struct dt_rt_expand_ctx {
	int pid;
	const char *child_path; /* the -c program, when it runs without a shell */
};
int dt_rt_expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n);
/* dt_check_opts.usym_addr over the same ctx: a symbol of any type in the uprobe target. */
int dt_rt_usym_addr(void *ctx, const char *target, const char *name, uint64_t *addr,
		    uint64_t *size, bool *biased);
/* dt_check_opts.uprobe_line over the same ctx: uprobe:BIN@FILE:LINE[:COL]'s address. */
int dt_rt_uprobe_line(void *ctx, const dt_attach *a, char **func, uint64_t *off, char **why);

/* tracefs root, mounted at /sys/kernel/tracing on first use if nothing is mounted; NULL if none. */
const char *dt_rt_tracefs(void);

/* Online CPUs (sorted); returns the count, or -errno. *cpus is malloc'd. */
int dt_rt_online_cpus(int **cpus);

/* ---------------------------------------------------------------- session.c */

/* A script map as the session keeps it: the types live in the session arena so the map outlives
 * the compilation that created it. */
typedef struct dt_smap {
	dt_map_sym sym;      /* name, key, value (session arena); id = index in the session */
	dt_map_layout layout;
	int fd;
} dt_smap;

/* A stack-trace map for one (kind, depth). */
typedef struct dt_stackmap {
	dt_stack_kind kind;
	uint32_t depth;
	int fd;
} dt_stackmap;

struct dt_unit {
	uint32_t id;
	dt_session *s;
	char *name;           /* source name, e.g. "stdin" (-e) */
	char *text;           /* a copy of the source text */
	dt_source src;
	dt_arena *arena;      /* AST and types of this compilation */
	dt_program *prog;
	uint32_t *map_index;  /* program map id -> session map index */
	int events_fd;        /* this unit's events ring buffer, or -1 */
	int names_fd;         /* DT_AUX_PROBE_NAMES, or -1 */
	int syscall_fd;       /* DT_AUX_SYSCALL_SLOTS, or -1 */
	uint32_t nattach;     /* attach points of the program (slots 0..nattach-1) */
	bool *skip;           /* by slot: attach points skipped when the sets were checked */
	dt_fdvec prog_fds;    /* every loaded program (entries and continuations) */
	dt_fdvec attached;    /* perf event fds */
	dt_fdvec begin_fds, end_fds;
	dt_fdvec signal_fds;  /* self:signal:SIGUSR1 programs, run by the loop on SIGUSR1 */
	dt_fdvec test_fds;    /* test:/bench: programs (under --test/--bench), in script order */
	DT_VEC(const char *) test_names; /* their names (the unit's arena) */
	DT_VEC(enum bpf_prog_type) begin_types, end_types;
	/* The chain slots its later parts fill (emptied when the unit goes). */
	DT_VEC(struct dt_chain_slot { enum bpf_prog_type type; int slot; }) chain_slots;
	uint32_t nprobes_attached; /* attach points attached (bpftrace's "N probes") */
	dt_diags *validating;  /* while attach points are validated: where missing_probes=error
				* reports a member of a set that would be skipped */
	struct dt_watches *wp;     /* watchpoints (watchpoint.c), or NULL */
	int iter_link;             /* an iter probe's link, run once attached; -1 */
};

struct dt_session {
	dt_session_opts o;
	FILE *err;
	dt_arena *arena;      /* map types that live across compilations */
	dt_ctypes *ctypes;    /* kernel C types (BTF), read on a script's first use of one */
	dt_symbolizer *sym;
	dt_elf_cache *elfc;    /* ELF objects the unwinder and the symbolizer share; --debuginfo */
	dt_out *out;
	dt_out_opts out_opts; /* what made `out`: a test's output is captured with another */
	int ncpus;
	DT_VEC(dt_smap *) maps;
	dt_strmap map_names;  /* name -> dt_smap (NULL once dropped): O(1) dt_session_find_map */
	DT_VEC(dt_stackmap) stackmaps;
	DT_VEC(dt_unit *) units;
	uint32_t next_unit_id;
	int next_cont_slot;
	int stats_fd, scratch_fd;
	/* Probes in parts (codegen's DT_AUX_CHAIN_PROGS and DT_AUX_FRAME): one prog array per
	 * program type, slots handed out in order; the frames, made on first use. */
	DT_VEC(struct dt_chain { enum bpf_prog_type type; int fd; }) chains;
	int next_chain_slot;
	int frame_fd;
	bool stats_used;      /* generated code counts losses in stats_fd: report them */
	/* The exec follower (unwind/): generations (DT_AUX_EXEC_GEN) and pids-seen
	 * (DT_AUX_PIDS_SEEN), loaded when a program first records user addresses. */
	dt_exec_follower *ef;
	dt_unwinder *uw;      /* created when a program first uses ustack_dwarf */
	struct dt_xprobes *xp; /* xprobe programs and maps: loaded by the resource step or the first
			       * xprobe attach (xprobe.c) */
	struct dt_skb *skb;   /* skboutput's perf buffers and pcap files (skboutput.c), or NULL */
	int stats_enable_fd;  /* BPF_ENABLE_STATS fd while hit counting is on */
	uint64_t start_ns;    /* CLOCK_BOOTTIME at session start */
	uint64_t wall_offset_ns; /* CLOCK_REALTIME - CLOCK_BOOTTIME then (tseries' wall clock) */
	/* The event loop (loop.c): its epoll set and ring buffers, made on first use. */
	struct dt_loop *loop;
	const char *stop_reason; /* why the session stopped (dt_session_stopped); NULL: running */
	int exit_code;
	FILE *profile_f[2];   /* --pprof, --flamegraph files, open from dt_session_new to the end */
	bool out_failed;      /* a write to the output failed, and that was said */
	/* exit() ran: the records queued behind it are dropped, as bpftrace drops them, until
	 * dt_session_finish runs END (whose output prints). */
	bool muted;
	/* END runs after an exit(): of the records that quote a call site (printf, time, print of a
	 * value, cat, system), only END's print; the probes, still attached, may queue more. */
	bool end_only;
	/* -c child / -p pid */
	pid_t child;
	int child_pidfd;      /* readable when the child exits */
	int child_go_fd, child_err_fd;
	char *child_cmd;      /* the -c command as given, for messages */
	char *child_path;     /* the -c program's file when run without a shell, else NULL */
	char *watch_exe;      /* -p: the process's executable, for watchpoint:FUNC+argN */
	char *child_cgroup;   /* the cgroup (v2) made for the -c command and its descendants */
	uint64_t child_cgroup_id; /* its id, what bpf_get_current_cgroup_id() returns inside */
	bool child_exited, forwarded_signal;
	int child_status;     /* its wait status once child_exited */
	bool child_on_its_own; /* it ended (or could not run) before the session stopped */
	int child_run_errno;  /* why it could not run (exec's errno), or 0 */
	int pidfd;            /* -p: readable when that process exits */
	bool hurry;           /* a stop signal came during dt_session_finish: end without waiting */
	/* The session was stopped by a signal (Ctrl-C, SIGTERM, ...): system() commands queued
	 * behind it are not run (bpftrace ignores every record after one), only counted. */
	bool stop_signalled;
	uint64_t system_skipped;
	int detach_helper_fd; /* the pipe the detach helper waits on (session.c), or -1 */
	bool finished;
	bool bpf_ok, perm_reported, uw_reported;
	/* -v timings */
	uint64_t t_parse, t_check, t_codegen, t_load, t_attach, t_detach;
};

/* Loads one generated program (license GPL). A verifier rejection prints the internal-error
 * sentence naming the probe and the log's tail; -d verifier prints every log. 0 or -errno. */
int dt_rt_load_prog(dt_session *s, const dt_cg_prog *p, int *fd_out);
/* Looks up a session map by name, or NULL. */
dt_smap *dt_session_find_map(dt_session *s, const char *name);
/* Stack frames behind a dt_stack_ref, for output (dt_stack_frames_fn). */
int dt_session_stack_frames(void *ctx, const dt_type *t, const struct dt_stack_ref *ref,
			    uint64_t *frames, uint32_t max);

/* ---------------------------------------------------------------- xprobe.c */

/* Opens and loads the xprobe object, once per session (a failure is remembered and returned
 * again). 0 or -errno with a message printed. */
int dt_xprobe_load(dt_session *s);
/* fd of the per-CPU xresult map the block of an xprobe reads, once dt_xprobe_load succeeded;
 * -ENOENT before. */
int dt_xprobe_result_fd(dt_session *s);
/* Attaches xprobe attach point `a` whose block is the loaded program `prog_fd`: the block goes
 * into a slot of the xprobe prog array, and the shared entry and return programs are attached
 * to the function with that slot (and the sampling period) as their bpf cookie. fds to close
 * are appended to `fds`. 0 or -errno with *err a malloc'd sentence, as dt_rt_attach. */
int dt_xprobe_attach(dt_session *s, const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err);
/* Prints what xprobes could not measure (and, with -v, their counters). */
void dt_xprobe_report(dt_session *s);
void dt_xprobe_free(dt_session *s);

/* The session's unit with dt_unit.id `id`, or NULL (loop.c). */
dt_unit *dt_session_unit_by_id(dt_session *s, uint32_t id);

/* ---------------------------------------------------------------- skboutput.c */

/* The perf event array and buffers (once per session) and the pcap files of u's skboutput calls
 * (created, truncated). 0 or -errno with a message printed. */
int dt_skb_prepare(dt_session *s, dt_unit *u);
int dt_skb_map_fd(dt_session *s);   /* DT_AUX_SKB_OUTPUT, or -ENOENT */
int dt_skb_poll_fd(dt_session *s);  /* the perf buffers' epoll fd, or -1 */
/* Writes the packets that arrived to their files: how many, or -errno. */
int dt_skb_consume(dt_session *s);
void dt_skb_report(dt_session *s);  /* packets lost (and with -v, written) */
void dt_skb_free(dt_session *s);    /* the last packets written, the files closed */

/* ---------------------------------------------------------------- session_maps.c */

/* Empties every map (delete all keys) / sets every value to zero / deletes every hist bucket of
 * one user key. 0 or -errno. */
int dt_map_clear(dt_session *s, dt_smap *m);
int dt_map_zero(dt_session *s, dt_smap *m);
int dt_map_delete_prefix(dt_session *s, dt_smap *m, const void *key, size_t len);
/* Whether any map holds user stacks or user symbols (whose pids must be noted while alive), and
 * the noting itself: every pid found in such keys and values, plus the -c/-p process, is handed
 * to the symbolizer so its addresses still resolve after it exits. */
bool dt_session_has_user_addrs(dt_session *s);
void dt_session_note_pids(dt_session *s);
/* Whether a write to the output failed; the first time, says so in one line and makes the exit
 * status non-zero. The loop stops the session on it: what follows would be lost too. */
bool dt_session_output_failed(dt_session *s);

/* ---------------------------------------------------------------- loop.c */

/* Adds what a new unit brings to the loop: its events ring buffer (if it has one) and the
 * unwinder its compilation may have made. 0 or -errno. */
int dt_loop_add_unit(dt_session *s, dt_unit *u);
/* Puts every source the session has now (rings, unwinder, -p/-c pidfds, caught signals) in the
 * epoll set behind dt_session_poll_fd; cheap when nothing is new. 0 or -errno. */
int dt_loop_sync(dt_session *s);
/* Delivers the records waiting in every unit's ring (also for dt_session_detach and
 * dt_session_finish); how many. */
int dt_loop_drain(dt_session *s);
/* Runs every unit's self:signal:SIGUSR1 programs; false when there are none. */
bool dt_session_signal_probes(dt_session *s);
/* Takes the SIGINT/SIGTERM that came in, if the session catches them (a stop, as dispatch
 * would): for work that runs long outside the loop, such as attaching. */
void dt_loop_poll_signals(dt_session *s);
/* The exit sequence's drain (dt_session_finish): what the rings hold now, but not what probes
 * still attached keep writing, which would make it endless. How many records. */
int dt_loop_drain_final(dt_session *s);
/* Bytes of each unit's events ring: DT_EVENTS_RINGBUF_SIZE unless opts.events_size says. */
uint32_t dt_session_events_size(const dt_session *s);
/* Frees the loop (dt_session_free). */
void dt_loop_free(dt_session *s);

/* fentry/fexit/iter programs are loaded against a BTF id: the function's (the iterator's
 * bpf_iter_NAME), in vmlinux or in a module's BTF (*obj_fd then, which the caller closes). */
int dt_rt_attach_btf_id(const dt_attach *a, enum bpf_attach_type type, uint32_t *id, int *obj_fd);
/* vmlinux's BTF, read on the first call and kept (NULL without BTF). */
struct btf *dt_rt_vmlinux_btf(void);
/* The raw tracepoints (btf_trace_NAME), kernel functions (fentry/fexit) or iterators of
 * vmlinux's BTF whose names match the glob pat: a malloc'd array of malloc'd names. */
int dt_rt_btf_names(dt_provider p, const char *pat, char ***names, uint32_t *n);
/* Runs the iterator of an attached iter link to its end. 0, or -errno with *err. */
int dt_rt_iter_run(int link_fd, char **err);

/* ---------------------------------------------------------------- watchpoint.c */

/* Attaches watchpoint attach point `a` run by prog_fd: an absolute address at once, the
 * function form as its setup uprobe. 0, or -errno with *err as dt_rt_attach's. */
int dt_wp_attach(dt_session *s, dt_unit *u, const dt_attach *a, int prog_fd, char **err);
/* A DT_EV_WATCH record of slot `slot`: set the breakpoint, let the process go on. */
void dt_wp_on_watch(dt_session *s, dt_unit *u, uint32_t slot, const struct dt_ev_watch *w);
/* A DT_EV_UNWATCH record: every breakpoint of the unit on addr goes. */
void dt_wp_unwatch(dt_unit *u, uint64_t addr);
void dt_wp_free(dt_unit *u);

/* ---------------------------------------------------------------- child.c */

/* -p: watches the process through a pidfd (s->pidfd). 0 or -errno (message printed). */
int dt_pid_watch(dt_session *s, int pid);
/* Forks the -c child stopped before exec, in a cgroup of its own (s->child_cgroup_id; without
 * cgroup v2, s->o.filter_pid and s->o.uprobe_pid become its pid, with a warning), with a pidfd
 * for its exit. 0 or -errno (message printed). */
int dt_child_spawn(dt_session *s, const char *cmd);
/* The file execvp would run for a shell-free command (malloc'd), or NULL. */
char *dt_child_find_program(const char *cmd);
/* Lets the child exec; reports exec failure. `stop_at_entry`: hold it at its ELF entry point
 * while its mappings are read (the program takes user stacks). 0 or -errno (message printed). */
int dt_child_release(dt_session *s, bool stop_at_entry);
/* Passes a signal sent to dwarftrace alone on to a running child, once. */
void dt_child_forward_signal(dt_session *s, int sig);
/* Whether the child has exited (reaping it if it just did). */
bool dt_child_ended(dt_session *s);
/* Notes that the child ended on its own, before anything stopped the session, and says so in
 * one line if it failed (a non-zero status, or a signal): dt_session_child_status's case. */
void dt_child_report(dt_session *s);
/* Ends a child still running at teardown — SIGTERM, then SIGKILL after a grace (at once when
 * s->hurry) — reaps it and removes its cgroup. */
void dt_child_reap(dt_session *s);
/* Removes, once per process, the dwarftrace.PID cgroups of runs that were killed before they
 * could (and ends what still runs in them): see child.c for what makes that safe. */
void dt_child_sweep_cgroups(dt_session *s);

#endif

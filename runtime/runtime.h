/* runtime.h — the session API: everything between a checked program and the kernel. A session
 * owns the output and the symbolizer, the script maps (by name; they live across compilations so a
 * REPL can add probes that share them), the auxiliary maps (stats, scratch, stack-trace maps,
 * per-unit event ring buffers), and the loaded programs grouped in units — one unit per
 * dt_session_add, i.e. per program text. The CLI is one session with one unit; the REPL is one
 * session with many. Every function returns 0 or a negative errno unless it says otherwise, and
 * prints user-facing messages (diagnostics, attach errors) on the session's error stream. */
#ifndef DT_RUNTIME_H
#define DT_RUNTIME_H

#include "lang/lang.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dt_session dt_session;
typedef struct dt_unit dt_unit;

/* -d flags: stage dumps, printed on the error stream (ir, asm, verifier) or the output. */
enum {
	DT_DUMP_TOKENS = 1u << 0,
	DT_DUMP_AST = 1u << 1,
	DT_DUMP_TYPES = 1u << 2,
	DT_DUMP_IR = 1u << 3,
	DT_DUMP_ASM = 1u << 4,
	DT_DUMP_VERIFIER = 1u << 5,
	DT_DUMP_UNWIND = 1u << 6,
	/* The stages before anything is loaded: with only these, -d is a dry run that needs no
	 * privileges (dt_session_add stops after them). */
	DT_DUMP_FRONT_END = DT_DUMP_TOKENS | DT_DUMP_AST | DT_DUMP_TYPES,
};

/* FOLDED: stack-keyed maps print as folded stacks ("outer;...;leaf count"), others as text. */
typedef enum dt_session_format { DT_FORMAT_TEXT, DT_FORMAT_JSON, DT_FORMAT_FOLDED } dt_session_format;

typedef struct dt_session_opts {
	size_t sz;              /* sizeof(struct dt_session_opts) */
	FILE *out;              /* program output (printf, maps); NULL = stdout */
	const char *out_name;   /* what `out` is in a write error ("stdout", the -o file); NULL:
				 * "the output" */
	FILE *err;              /* diagnostics, errors, -v; NULL = stderr */
	dt_session_format format;
	uint32_t filter_pid;    /* -p: probes only fire for this process (0 = none), but for
				 * BEGIN, END and interval, which fire regardless */
	int uprobe_pid;         /* -p: uprobes fire in this process only (<= 0: every one) */
	int verbose;            /* -v: attach list, stats totals, map memory, stage timings */
	uint32_t dump;          /* DT_DUMP_* */
	bool dry_run;           /* compile and load, attach nothing */
	bool announce;          /* print bpftrace's "Attaching N probes..." once they are live */
	bool no_warnings;       /* --no-warnings: no warning (nor note) is printed */
	/* The CLI: an attach failure ends the run, so the unit stays in the session with what it
	 * attached (dt_session_add still fails) for dt_session_finish to run its END probes and
	 * print the maps before detaching. Else (the REPL) the unit is undone at once. */
	bool end_on_attach_error;
	bool count_hits;        /* enable BPF run statistics so dt_unit_hits works */
	const char **params;    /* positional parameters $1..$n */
	uint32_t nparams;
	bool has_child;         /* a -c command runs (or would, with dry_run): `cpid` is valid */
	const char *child_cmd;  /* that command, when it is not started (dry_run) */
	bool unsafe;            /* --unsafe: system() and signal() are allowed */
	/* --test / --bench: BEGIN runs, then the test:/bench: probes (dt_session_run_tests), and
	 * nothing else attaches; the default attaches every probe and ignores those. */
	dt_run_mode mode;
	uint32_t helper_check;  /* -k (1), -kk (2): report helpers that fail at run time */
	dt_stack_mode stack_mode; /* BPFTRACE_STACK_MODE: stacks printed without a mode */
	/* Symbols and profile files (symbols/, output/profile.c). */
	bool no_demangle;       /* --no-demangle */
	bool no_inline;         /* --no-inline: no frames for inlined callees */
	bool srcline;           /* --srcline: file:line after frames */
	/* show_debug_info = 1 (bpftrace's setting, config or environment): user frames print as
	 * bpftrace prints them then, `func+off@/path/file.c:12`, `[inlined] func@/path/file.c:9`
	 * (perf mode: `func (inlined)`), not --srcline's `func+off (file.c:12)`. */
	bool debug_info_at;
	const char **debug_dirs;/* --debuginfo DIR (repeatable) */
	uint32_t ndebug_dirs;
	const uint32_t *dwarf_pids; /* --dwarf-pid PID (repeatable): unwind tables built at start */
	uint32_t ndwarf_pids;
	/* C definitions (ctypes/): -I DIR and --include FILE, both repeatable. */
	const char **include_dirs;
	uint32_t ninclude_dirs;
	const char **include_files;
	uint32_t ninclude_files;
	const char *pprof_path; /* --pprof FILE: every stack-keyed map as a gzipped profile.proto */
	const char *flamegraph_path; /* --flamegraph FILE: an interactive SVG flame graph */
	const char *flamegraph_map;  /* --flamegraph-map @NAME: the one map drawn (NULL: each) */
	uint64_t unwind_budget; /* --unwind-budget: bytes for unwind tables (0 = unwind/'s default) */
	uint32_t unwind_stacks; /* --unwind-stacks: ustack_dwarf frames map entries (0 = default) */
	bool json_frames;       /* --json-frames: -f json stacks as frame objects (output.h) */
	bool no_merge_stacks;   /* --no-merge-stacks: one entry per stack, as bpftrace prints */
	/* Called with output_ctx before dt_session_dispatch writes program output, so that an
	 * interactive caller can clear the line being typed (and redraw it once dispatch returns).
	 * NULL: nothing to do. */
	void (*before_output)(void *ctx);
	void *output_ctx;
	/* bpftrace's BPFTRACE_* settings (0: dwarftrace's default). */
	uint32_t strlen;        /* BPFTRACE_MAX_STRLEN: characters str() keeps (≤ DT_MAX_STRLEN) */
	/* str_trunc_trailer: printed after a string cut at max_strlen (NULL: "..", "": none);
	 * held by the caller for the session's life. */
	const char *str_trunc_trailer;
	uint32_t map_keys_max;  /* BPFTRACE_MAP_KEYS_MAX: entries of every script map */
	uint32_t events_size;   /* BPFTRACE_PERF_RB_PAGES: bytes of each unit's events ring */
	uint32_t perf_rb_pages; /* the same setting as given (0: unset): skboutput's perf buffers */
	uint32_t max_probes;    /* BPFTRACE_MAX_PROBES: more attach points is an error */
	uint32_t log_size;      /* BPFTRACE_LOG_SIZE: first size of the verifier log buffer */
	/* bpftrace's config settings (a script's `config = { … }`, or their BPFTRACE_* names). */
	bool no_print_maps;        /* print_maps_on_exit=false: maps do not print at the end */
	enum dt_missing_probes {
		DT_MISSING_DEFAULT, /* skip with a warning when the probe has others, else error */
		DT_MISSING_ERROR,   /* missing_probes=error: any attach point missing is an error */
		DT_MISSING_WARN,    /* =warn: skipped with a warning, a probe left with none too */
		DT_MISSING_IGNORE,  /* =ignore: the same, silently */
	} missing_probes;
	const char **named;        /* named parameters after `--` ("--aa=20"): getopt() reads them */
	uint32_t nnamed;
	const char *probe_filter;  /* --probe-filter: a POSIX extended regex (dt_check_opts) */
	const char *dummy_ts_map;  /* BPFTRACE_DUMMY_TS_MAP (dt_check_opts) */
	dt_unstable unstable_tseries; /* config unstable_tseries (dt_check_opts) */
} dt_session_opts;

/* Applies the `config = { … }` block of the program in `src` to *so (runtime/config.c): a
 * setting whose command-line flag or BPFTRACE_* variable was given keeps that value. 0, or
 * -EINVAL with the errors printed on `err` (an unknown setting, a bad value). Syntax errors
 * are left to the compilation. */
int dt_config_apply(const dt_source *src, dt_session_opts *so, FILE *err, bool color);

/* The settings config() gives a script, as *so has them (defaults filled in): fills out[] and
 * returns how many (at most DT_CONFIG_VALUES). */
#define DT_CONFIG_VALUES 9
uint32_t dt_config_values(const dt_session_opts *so, dt_config_value *out);

/* The bytes of the events ring for bpftrace's perf_rb_pages (pages per CPU): as many bytes for
 * all CPUs, rounded up to a power of two as the kernel wants. */
uint32_t dt_events_ring_size(uint32_t pages_per_cpu);

/* Creates a session. Cheap: no map, no tracefs scan, no unwinder until a program needs them.
 * The --pprof and --flamegraph files are opened for writing here, so a path that cannot be
 * written fails before anything is traced. NULL with errno set on bad options or such a path
 * (said in one line on the error stream). */
dt_session *dt_session_new(const dt_session_opts *o);

/* Compiles `src` (parse, check against the session's live maps, create missing maps, codegen),
 * loads every program and — unless dry_run — attaches them and runs the unit's BEGIN probes.
 * The text is copied. Returns 0 and the unit in *out (may be NULL), -EINVAL on script errors
 * (diagnostics printed, nothing loaded), -EPERM without privileges (one sentence printed), or
 * another -errno for load/attach failures (message printed, the unit is undone — but for an
 * attach failure with opts.end_on_attach_error, where it stays, in *out, BEGIN not run). */
int dt_session_add(dt_session *s, const dt_source *src, dt_unit **out);

/* Whether every probe of the unit is a BEGIN or END probe and the program is in bpftrace's
 * current language (dt_program_current: one is spelled `begin`/`end`, …): with nothing else attached, the CLI then ends the run once
 * BEGIN's output is delivered (bpftrace does since 0.24), as if BEGIN had called exit(). A
 * program spelled only with 0.17's BEGIN/END runs until Ctrl-C, as it did in 0.17. */
bool dt_unit_begin_end_only(const dt_unit *u);
/* Whether the unit's program is in bpftrace's current language (dt_program_current). */
bool dt_unit_current(const dt_unit *u);

/* --test: runs each test:NAME probe of the unit once, in script order, and prints bpftrace's
 * report (a test passes when it returns 0 and calls no exit() with a status; the output of a
 * failing one is shown, of a passing one suppressed). --bench: runs each bench:NAME probe
 * repeatedly (the kernel's timed test run, the count raised until a run takes 1 ms) and prints
 * its average time in ns and the repetitions, as bpftrace's table (or `benchmark_result`
 * objects in JSON). 0 when every test passed, 1 otherwise, -errno when one could not run. */
int dt_session_run_tests(dt_session *s, dt_unit *u);

/* Detaches and unloads one unit; its maps live on (the REPL's `detach`). The unit is freed. */
int dt_session_detach(dt_session *s, dt_unit *u);

/* Creates the -c child stopped before exec, in a cgroup (v2) of its own, so that the programs
 * compiled from then on fire in it and every process it starts, and nowhere else (without
 * cgroup v2: in the child alone, opts.filter_pid and opts.uprobe_pid). Call it before the first
 * dt_session_add, and dt_session_start_child after every dt_session_add to let it exec. The
 * session stops when it exits. */
int dt_session_spawn_child(dt_session *s, const char *cmd, int *pid);
int dt_session_start_child(dt_session *s);

/* How the -c command ended when it ended on its own (it was why the session stopped) or could
 * not run, as a shell gives $?: its exit status, 128 + the signal that killed it, 127 if its
 * program was not found, 126 if it could not run otherwise. -1 without -c, while it runs, or
 * when the session ended it. A failure was already said in one line on the error stream. */
int dt_session_child_status(const dt_session *s);

/* Watches -p PID: the session stops when that process exits. */
int dt_session_watch_pid(dt_session *s, int pid);

/* The event loop, owned by the caller as libbpf's ring_buffer__epoll_fd()/ring_buffer__poll().
 * The session's work comes from its units' event ring buffers, the unwinder's requests, the -c
 * command's and the -p process's exit, a timer (the pids behind user addresses are noted while
 * those processes live) and, once dt_session_catch_signals was called, signals.
 *
 * Signals: the session takes none unless asked. dt_session_catch_signals gives it the CLI's
 * meaning of SIGINT, SIGTERM, SIGHUP and SIGQUIT — they stop the session, and one sent to
 * dwarftrace alone is passed on once to the -c command (a Ctrl-C from the terminal reaches it by
 * itself; SIGQUIT is passed on as SIGTERM) — and of SIGUSR1, which prints every map while tracing
 * goes on. They are blocked in the calling thread and read through the session's fd, and stay
 * blocked for good: a second Ctrl-C cannot cut END or the maps short, only the wait for the
 * detach that follows them (see dt_session_finish). A caller that gives
 * them another meaning (the REPL: Ctrl-C cancels the entry being typed) reads them itself while
 * it does. The -c command's exit is seen through a pidfd, so SIGCHLD is left alone. */

/* An epoll fd that becomes readable when the session has work; then call dt_session_dispatch.
 * Sources join it as the session gains them (dt_session_add, dt_session_watch_pid, …). The fd
 * belongs to the session. -errno if it cannot be made. */
int dt_session_poll_fd(dt_session *s);

/* Does the work that is ready, waiting at most timeout_ms for some (-1: until there is, 0: not
 * at all): delivers events to the output, serves the unwinder, notes the stop. Returns how much
 * was done (> 0), 0 if nothing was ready (or a signal interrupted the wait), or -errno. The
 * periodic work starts with the first call. Works after a stop too (events still arrive). */
int dt_session_dispatch(dt_session *s, int timeout_ms);

/* Why the session stopped — "exit()", "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "the -c command
 * exited", "the -p process exited" — or NULL while it runs. The first reason stays (see dt_session_exit_code for
 * exit()'s code). */
const char *dt_session_stopped(const dt_session *s);

/* Gives the stop signals and SIGUSR1 to the session (see above). Idempotent. */
int dt_session_catch_signals(dt_session *s);

/* The CLI's loop: catches the signals, reads a -p process's unwind tables once more (it may have
 * mapped more while compiling), then dispatches until the session stops; with -v, says why on
 * the error stream. 0 or -errno. */
int dt_session_run(dt_session *s);

/* Ends the session's tracing: runs END probes, drains the event buffers (what they hold now;
 * probes are still attached), prints every non-empty map (bpftrace's order: by name), reports
 * every non-zero loss counter on the error stream, and only then detaches every probe — the slow
 * part with thousands of perf events. A stop signal caught while it detaches (a second Ctrl-C)
 * stops the waiting: the probes left are handed to a helper process that releases them in the
 * background, a -c command is killed at once, and dt_session_free returns quickly. Idempotent. */
int dt_session_finish(dt_session *s);

/* Prints every map now (bpftrace's order: sorted by name). */
void dt_session_print_maps(dt_session *s);

/* Detaches everything, closes every fd, ends a -c command still running (SIGTERM, then SIGKILL
 * after a grace) and removes its cgroup. NULL is fine. */
void dt_session_free(dt_session *s);

/* The code given to exit() in a probe, 0 if none. */
int dt_session_exit_code(const dt_session *s);

/* Units: id (1, 2, …), source text, and how many times its programs ran (-ENOTSUP unless
 * count_hits was set). */
uint32_t dt_unit_id(const dt_unit *u);
const char *dt_unit_text(const dt_unit *u);
int dt_unit_hits(const dt_unit *u, uint64_t *hits);
/* Attach points the unit attached (bpftrace's "Attaching N probes"). */
uint32_t dt_unit_nprobes(const dt_unit *u);
/* Units in creation order: index 0..n-1, NULL past the end. */
dt_unit *dt_session_unit(dt_session *s, uint32_t i);

/* Script maps in creation order: the name of map i (0..n-1), its key type (NULL: no key) in
 * *key and value type in *value (either pointer may be NULL); NULL past the end. The name and
 * types live as long as the session. */
const char *dt_session_map(dt_session *s, uint32_t i, const dt_type **key,
			   const dt_type **value);
/* How many entries map i holds now. 0 or -errno (-ENOENT past the end). */
int dt_session_map_entries(dt_session *s, uint32_t i, uint64_t *n);

/* The names a wildcard attach point expands to in this session, as dt_session_add would expand
 * them (uprobe symbols of a binary, tracepoints, kernel functions; library names resolved in
 * the -p/-c process if there is one): *names is a malloc'd array of *n malloc'd strings. 0 or
 * -errno. */
int dt_session_expand(dt_session *s, const dt_attach *a, char ***names, uint32_t *n);

/* The interactive REPL on stdin (readline on a terminal, plain lines otherwise), with a session
 * made from `so`; `watch_pid`: end when -p's process (so->filter_pid) exits. Returns the process
 * exit status. */
int dt_repl_main(const dt_session_opts *so, bool watch_pid);

/* `-l [SEARCH]` (list.c): prints the probes this machine offers that match SEARCH (NULL: all),
 * bpftrace's lines (`tracepoint:sched:sched_switch`); pid > 0 lists the functions of every
 * object that process maps; verbose adds tracepoint fields and function parameters; a search
 * that would list kprobes on a kernel without them is warned about unless no_warnings. Says
 * what went wrong on `err`.
 * 0, or -EINVAL for a bad search. */
int dt_list_probes(const char *search, int pid, bool verbose, bool no_warnings, FILE *out,
		   FILE *err);
/* `-l -e PROGRAM` and `-l FILE`: what each attach point of the program names (its wildcards
 * expanded), as the search for it would list; BEGIN and END name nothing. 0 or -errno, said. */
int dt_list_program(const dt_source *src, int pid, bool verbose, bool no_warnings, FILE *out,
		    FILE *err);

/* `--info` (info.c): the kernel and what BPF support it has (program and map types, helpers,
 * features dwarftrace uses), as "name: yes|no" lines. 0 or -errno. */
int dt_info_print(FILE *out);

/* The CLI: parses argv and runs. Returns the process exit status (0, 1 script/runtime errors,
 * 2 usage, or a failed -c command's status: see dt_session_child_status). */
int dt_cli_main(int argc, char **argv);

/* The option table -h prints, as the Markdown table of README.md's "Command line" section
 * (tests/readme_options.sh compares them). */
void dt_cli_options_markdown(FILE *f);
/* The BPFTRACE_* environment variables -h lists, as README.md's Markdown table. */
void dt_cli_env_markdown(FILE *f);

#endif

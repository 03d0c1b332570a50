/* symbols.h — addresses become names: the symbolizer, an opaque cache of kernel symbols, process
 * snapshots and ELF objects that the session feeds with the pids it sees and the output side asks
 * for frame names (ELF symbols, separate debug files, MiniDebugInfo, debuginfod, demangling,
 * inline frames, source lines). It knows nothing of BPF sessions: which image of a process runs
 * now is asked through a callback the session sets. */
#ifndef DT_SYMBOLS_H
#define DT_SYMBOLS_H

#include "elfproc/elfproc.h"

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dt_symbolizer dt_symbolizer;

dt_symbolizer *dt_sym_new(void);
void dt_sym_free(dt_symbolizer *s);

/* How names are made (the CLI's switches). */
typedef struct dt_sym_opts {
	bool no_demangle;       /* --no-demangle: raw C++/Rust symbol names */
	bool no_inline;         /* --no-inline: no frames for inlined callees */
	bool srcline;           /* --srcline: " (file.c:12)" after each frame that has a line */
	bool no_debuginfod;     /* never ask DEBUGINFOD_URLS servers */
	/* ELF objects shared with the unwinder, and the --debuginfo dirs searched before
	 * /usr/lib/debug (both the session's, which outlive the symbolizer); NULL: a cache of the
	 * symbolizer's own, without debug dirs. */
	dt_elf_cache *elf_cache;
} dt_sym_opts;
/* Sets the options (copied); call before the first lookup. */
void dt_sym_set_opts(dt_symbolizer *s, const dt_sym_opts *o);
/* Waits at most timeout_ns for background debuginfod downloads; true if none is pending. */
bool dt_sym_wait_downloads(dt_symbolizer *s, uint64_t timeout_ns);
/* The debug file of build-id `id` from the DEBUGINFOD_URLS servers (the background client's
 * fetch, waited for at most timeout_ns): 0 with *path malloc'd; -ENOENT without servers (or
 * --no-debuginfod) or when they do not have it; -ETIMEDOUT; another -errno. */
int dt_sym_debuginfod_file(dt_symbolizer *s, const uint8_t *id, size_t idn, uint64_t timeout_ns,
			   char **path);
/* A C++ or Rust (legacy, v0) name demangled, malloc'd; NULL if `raw` is not a mangled name. */
char *dt_sym_demangle(const char *raw);

/* One frame of a user address. An address gives one frame per inlined callee (innermost first,
 * inlined = true) and then the function itself. Strings live until dt_sym_free. */
#define DT_SYM_MAX_INLINE 16
typedef struct dt_sym_frame {
	const char *name;       /* demangled unless no_demangle; NULL when nothing names it */
	uint64_t off;           /* from the function's symbol (the function frame only) */
	const char *module;     /* basename of the mapped file; NULL outside any mapping */
	uint64_t module_off;    /* file offset of the address in module */
	const char *file;       /* source file (with srcline), or NULL */
	uint32_t line;
	const char *src_file;   /* the same whatever srcline says (pprof's lines), or NULL */
	uint32_t src_line;
	bool inlined;
	bool python;            /* a CPython frame: "function (file.py:line)", no offset */
} dt_sym_frame;
/* The frames at a user address (is_return: it is a return address, so the call before it is what
 * ran: lines and inline context come from addr - 1). Returns how many (1..max) with a name, or
 * -ENOENT with out[0] still holding module/module_off when the address is mapped. */
/* `gen` is the address-space generation the address was recorded in (DT_GEN_OF of the record's
 * flags, dt_abi.h): it is resolved against the snapshot of that image of pid only, so stacks
 * recorded before an exec keep the old program's names, and an image never snapshotted gives
 * hex rather than a later image's names. */
int dt_sym_user_frames(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
		       bool is_return, dt_sym_frame *out, int max);
/* An executable the session traces (a uprobe's binary): when it is linked at a fixed address
 * (ET_EXEC, not PIE), an address of a process whose maps were never read (it exited before
 * its first event was handled) that lies in its executable segments resolves in it. 0 (also
 * for a PIE object, which is left out), or -errno when it cannot be read. */
int dt_sym_add_fixed_image(dt_symbolizer *s, const char *path);
/* Whether addr is the entry point (e_entry) of the object that maps it in that image of pid:
 * where a process starts, so a stack of that one frame is whole. */
bool dt_sym_user_at_entry(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr);
/* "name+off", "name [inlined]", "[module]+0xoff" (no symbol covers it), "[uprobes]" (a page of
 * the kernel's own, as perf names it) or "0xaddr", then " (file:line)" if known. */
void dt_sym_frame_text(const dt_sym_frame *f, uint64_t addr, bool with_off, char *buf, size_t n);
/* Snapshot /proc/PID/maps (and open the objects lazily later), so the process's addresses still
 * resolve after it exits or execs. Cheap if already known: re-read at most every 50 ms, replaced
 * only if changed; a process that is gone keeps its last snapshot. 0 or -errno. */
int dt_sym_note_pid(dt_symbolizer *s, uint32_t pid);
/* The same, re-reading now whatever the window says (DT_EV_PID_SEEN: the process may have exec'd
 * since it was last read, e.g. a -c child noted before its exec). */
int dt_sym_refresh_pid(dt_symbolizer *s, uint32_t pid);
/* DT_EV_PID_SEEN for image `gen` of pid: snapshot it now if that image still runs (-ESTALE if the
 * process has exec'd again since). */
int dt_sym_seen_pid(dt_symbolizer *s, uint32_t pid, uint32_t gen);
/* Which image (address-space generation) of pid runs now, as records carry it: the session
 * knows, from following exec. */
typedef uint32_t (*dt_sym_gen_fn)(void *ctx, uint32_t pid);
/* Sets how the symbolizer learns which image of a process runs now. Without it (the default)
 * every process is generation 0. */
void dt_sym_set_gen_fn(dt_symbolizer *s, dt_sym_gen_fn fn, void *ctx);
/* How a Python frame of a ustack_dwarf stack (a word with DT_PY_FRAME_BIT, bpf-lib/dt_python.h)
 * is named: its function, file and line (0: unknown). 0, or -ENOENT. The session hands in the
 * unwinder's dt_unwinder_py_frame. */
typedef int (*dt_sym_py_fn)(void *ctx, uint32_t pid, uint64_t word, char *name, size_t nn,
			    char *file, size_t fnn, uint32_t *line);
void dt_sym_set_py_fn(dt_symbolizer *s, dt_sym_py_fn fn, void *ctx);
/* Releasing the snapshots of processes that are gone. Their addresses can be named only while
 * something still holds them, so the caller takes a census of what it holds: between
 * dt_sym_census_begin and dt_sym_census_end it calls dt_sym_hold for the image of every user
 * address it still holds (in maps). dt_sym_census_end(complete) then releases the snapshot of
 * every image that had stopped running (exited, or exec'd) before this census began and that
 * nothing held; `complete` false: the caller could not see everything it holds, and nothing is
 * released. Returns how many snapshots were released. A snapshot created during a census counts
 * as held. */
void dt_sym_census_begin(dt_symbolizer *s);
void dt_sym_hold(dt_symbolizer *s, uint32_t pid, uint32_t gen);
int dt_sym_census_end(dt_symbolizer *s, bool complete);

/* What the symbolizer holds (for -v and tests). */
typedef struct dt_sym_stats {
	uint64_t procs;          /* process images snapshotted now */
	uint64_t procs_released; /* snapshots released by censuses */
	uint64_t objects;        /* ELF objects known (shared by every process that maps them) */
	uint64_t objects_idle;   /* of which no snapshot maps (a fixed budget, the oldest released) */
	uint64_t objects_released;
	uint64_t dwarf_open;     /* objects whose DWARF is open now (a fixed budget) */
	uint64_t dwarf_opens, dwarf_closes; /* DWARF sessions opened, and closed for the budget */
	uint64_t strings;        /* interned names, modules and paths */
} dt_sym_stats;
void dt_sym_get_stats(const dt_symbolizer *s, dt_sym_stats *st);
/* Writes the stats as "symbols name value" lines (for -v). */
void dt_sym_print_stats(const dt_symbolizer *s, FILE *f);

/* "func+26" (bpftrace's decimal offset; no offset when `with_off` is false); falls back to
 * "[module]+0xoff" (file offset) for a mapped file without a covering symbol, then "0xaddr". Writes at most n bytes including NUL. Returns 0 if a symbol was found, -ENOENT if not
 * (the buffer still holds the fallback text). */
int dt_sym_kernel(dt_symbolizer *s, uint64_t addr, bool with_off, char *buf, size_t n);
int dt_sym_user(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr, bool with_off,
		char *buf, size_t n);
/* Module (path basename for users, "kernel" or "[module]" for the kernel) of an address. */
const char *dt_sym_user_module(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr);
/* Full path of the file mapped at a user address (as /proc/PID/maps names it, "[vdso]" for the
 * vDSO), or NULL; valid until dt_sym_free. bpftrace's perf-mode stacks print it. */
const char *dt_sym_user_path(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr);
/* The build ID of the file mapped at a user address (*id, valid until the next call) and the
 * address's offset in that file: what bpftrace's build_id stack mode prints. Returns the ID's
 * length, 0 when the address is in no mapped file or the file has no build ID. */
size_t dt_sym_user_build_id(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
			    const uint8_t **id, uint64_t *file_off);
/* "kernel", or the "[module]" of a kernel address (from /proc/modules' ranges, else kallsyms). */
const char *dt_sym_kernel_module(dt_symbolizer *s, uint64_t addr);
/* Read kernel symbols and module ranges from these files instead of /proc/kallsyms and
 * /proc/modules (NULL: /proc's); call before the first kernel lookup. For tests, and for naming
 * a profile with another kernel's files. A kernel address inside a module's image that no symbol
 * of that module covers prints "[module]+0xoff" (from the module's base). */
void dt_sym_set_kernel_files(dt_symbolizer *s, const char *kallsyms, const char *modules);

/* The DWARF of an ELF file: its own, or its separate debug file's (elfproc's one search, with
 * the process's --debuginfo directories). */
typedef struct dt_sym_dwarf {
	dt_elf *e, *dbg;
	Dwarf *dw;
	int fd; /* dw's file, when opened by fd */
	struct dt_dwp *dwp; /* the split units' package beside the file (NAME.dwp), or NULL */
} dt_sym_dwarf;
/* 0 with d filled; -ENODATA when neither file has DWARF; -errno when `path` cannot be read. */
int dt_sym_dwarf_open(dt_sym_dwarf *d, const char *path);
void dt_sym_dwarf_close(dt_sym_dwarf *d);
/* The next compilation unit of dw after *cu (NULL: the first), into *cu and its unit DIE into
 * *die: for a split-DWARF skeleton (gcc -gsplit-dwarf) the DIE of its .dwo unit, which has the
 * functions and types, when libdw finds the .dwo (next to the binary or in the unit's comp_dir);
 * else the skeleton's own, and *unsplit (when not NULL) becomes true. false after the last.
 * Debian 12's libdw (0.188) reads .dwo files but not .dwp packages: a unit of the package
 * beside the file (dwp.c) is read through a .dwo image of its own. */
bool dt_sym_dwarf_next_unit(dt_sym_dwarf *d, Dwarf_CU **cu, Dwarf_Die *die, bool *unsplit);
/* What -ENOLINK from the lookups below means, for messages. */
#define DT_SYM_UNSPLIT_WHY                                                                     \
	"its DWARF is split (gcc -gsplit-dwarf) and the .dwo files were not found next to it or " \
	"where it was compiled, nor a .dwp package of them beside it"

/* The parameters of function `func` of the ELF file at `path`, from its DWARF (or its separate
 * debug file's), as bpftrace's `-lv` prints them: "TYPE NAME" strings in a malloc'd array of *n.
 * 0; -ENOENT when the DWARF has no such function; -ENODATA when there is no DWARF; -ENOLINK when
 * it is not found and split units could not be read (DT_SYM_UNSPLIT_WHY). */
int dt_sym_func_params(const char *path, const char *func, char ***params, uint32_t *n);

/* The address (as the ELF file at `path` has it) of the first statement at FILE:LINE (LINE:COL
 * when col is not 0) in its DWARF line table, or its separate debug file's. FILE matches a line
 * table's path by whole trailing components ("u.c", "src/u.c", "/abs/src/u.c"). 0; or -errno
 * with *why (malloc'd) saying what is missing: -ENODATA no DWARF, -ENOENT no such file or no
 * code at the line, -EINVAL FILE matches two different files. */
int dt_sym_line_addr(const char *path, const char *file, uint32_t line, uint32_t col,
		     uint64_t *addr, char **why);

#endif

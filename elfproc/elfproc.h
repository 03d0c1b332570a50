/* elfproc.h — ELF files and process mappings, owned in one place. An ELF object (dt_elf) is a file
 * or memory image read through libelf, with what every user asks of it found once: its identity
 * (GNU build-id, else dev:ino:mtime), .gnu_debuglink, PT_LOAD segments, sections by name, and one
 * symbol-table reader that serves both directions (the symbolizer's address -> name table and
 * attach's name -> address). A cache (dt_elf_cache), created by the session and handed to the
 * unwinder and the symbolizer, opens each file once (dev:ino:mtime, found by a stat) and shares
 * it by reference count; the build-id is the identity its users share derived data by (the
 * unwinder's tables), not a cache key, since a separate debug file carries its object's build-id.
 * The cache also holds the --debuginfo directories that the one separate-debug-file search
 * (build-id tree, debuglink, .debug/) looks in first. The process side is the one /proc/PID/maps
 * parser. Functions return 0 or -errno; pointer returns give NULL with errno set. */
#ifndef DT_ELFPROC_H
#define DT_ELFPROC_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- ELF objects */

typedef struct dt_elf dt_elf;
typedef struct dt_elf_cache dt_elf_cache;

/* An empty cache. Freeing it leaves objects still referenced valid (their last put frees them). */
dt_elf_cache *dt_elf_cache_new(void);
void dt_elf_cache_free(dt_elf_cache *c);
/* Directories searched before /usr/lib/debug for separate debug files (--debuginfo), copied:
 * the process's (every cache made later starts with them, and an object opened without a cache
 * is searched with them), or one cache's. A relative directory is taken relative to each
 * object's own directory, as libdwfl's debuginfo_path is. */
void dt_elf_set_debug_dirs(const char *const *dirs, size_t n);
void dt_elf_cache_set_debug_dirs(dt_elf_cache *c, const char *const *dirs, size_t n);
/* Objects open in the cache now. */
size_t dt_elf_cache_count(const dt_elf_cache *c);

/* A reference on the object of the ELF file at `path`: the cached one when a file of the same
 * dev:ino:mtime or the same build-id is open, else the file opened now (and cached when c is not
 * NULL). The image is mapped privately and the fd closed, so the object outlives the path
 * (/proc/PID/map_files/… of a process that exits). NULL with errno: ENOEXEC when not a 64-bit
 * ELF file, EBADMSG when truncated or corrupt (headers pointing past the end), or the open/stat
 * error. */
dt_elf *dt_elf_open(dt_elf_cache *c, const char *path);
/* dt_elf_open's errno in words ("not a 64-bit ELF file", "truncated or corrupt ELF file …"). */
const char *dt_elf_strerror(int err);
/* An object over a copy of an ELF image in memory (never cached; `name` is its path for
 * messages). NULL with errno ENOEXEC. */
dt_elf *dt_elf_open_mem(const void *buf, size_t size, const char *name);
/* Our own vDSO image (the same in every process of this kernel), copied once per cache. */
dt_elf *dt_elf_open_vdso(dt_elf_cache *c);
dt_elf *dt_elf_ref(dt_elf *e);
/* Drops a reference; the last one unmaps the image. NULL is ignored. */
void dt_elf_put(dt_elf *e);

/* The libelf handle (for libdw and the few readers that walk sections themselves). */
Elf *dt_elf_handle(const dt_elf *e);
const char *dt_elf_path(const dt_elf *e);
/* Whether the object was opened from a file (dt_elf_open), not from memory. */
bool dt_elf_has_file(const dt_elf *e);
/* Build-id hex, else "dev:ino:mtime" ("vdso" for the vDSO, "mem" for other images). */
const char *dt_elf_ident(const dt_elf *e);
/* The GNU build-id bytes (*id points into e) and their count, 0 when there is none. */
size_t dt_elf_build_id(const dt_elf *e, const uint8_t **id);
/* The .gnu_debuglink file name, or NULL. */
const char *dt_elf_debuglink(const dt_elf *e);
/* dev, inode and mtime of the file (all 0 for memory images). */
void dt_elf_file_id(const dt_elf *e, dev_t *dev, ino_t *ino, struct timespec *mtime);

typedef struct dt_elf_seg {
	uint64_t vaddr, off, filesz, memsz;
	bool exec;
} dt_elf_seg;
/* The PT_LOAD segments, in program-header order; *n their count. */
const dt_elf_seg *dt_elf_segments(const dt_elf *e, size_t *n);
/* ELF virtual address -> file offset through the executable segment holding it; -ERANGE. */
int dt_elf_vaddr_to_offset(const dt_elf *e, uint64_t vaddr, uint64_t *off);

typedef struct dt_elf_section {
	const void *data; /* decompressed when the section is SHF_COMPRESSED */
	size_t size;
	uint64_t addr;    /* sh_addr */
} dt_elf_section;
/* The contents of the first section named `name` with file data (not SHT_NOBITS): 0, -ENOENT,
 * or -EINVAL when it does not read (a broken compressed section). */
int dt_elf_section_get(dt_elf *e, const char *name, dt_elf_section *out);
bool dt_elf_has_section(const dt_elf *e, const char *name);

/* ---------------------------------------------------------------- symbols */

typedef struct dt_elf_sym {
	const char *name;     /* in the object's string table: valid while e is referenced */
	uint64_t value, size;
	uint8_t type, bind;   /* GELF_ST_TYPE / GELF_ST_BIND of st_info */
	bool dynamic;         /* from .dynsym */
} dt_elf_sym;
/* Calls fn on every defined, named symbol of .symtab and then of .dynsym, until fn returns
 * non-zero; returns that value, or 0. The one reader of symbol tables. */
int dt_elf_sym_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_sym *sym), void *ctx);
/* Calls fn on each PLT stub of a dynamically linked object (x86-64 .plt/.plt.sec laid out by
 * .rela.plt): name = the function it jumps to (without "@plt"), value = the stub's address,
 * size = the stub's. Stubs have no symbol of their own, so the symbolizer names them NAME@plt
 * from this, as objdump and perf do. Returns fn's first non-zero value, or 0. */
int dt_elf_plt_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_sym *sym), void *ctx);
/* Whether the object has a full .symtab (else only .dynsym, or nothing). */
bool dt_elf_has_symtab(const dt_elf *e);
/* The first function (FUNC, IFUNC or NOTYPE) named `name`, .symtab first; versioned names
 * ("memcpy@@GLIBC_2.14") match their base name. 0 or -ENOENT. */
int dt_elf_sym_find(dt_elf *e, const char *name, dt_elf_sym *out);

/* ---------------------------------------------------------------- USDT notes */

typedef struct dt_elf_usdt {
	const char *provider, *name, *args; /* in e's image: valid while e is referenced */
	uint64_t pc;          /* the probe's address, moved by .stapsdt.base's (prelink) */
	uint64_t offset;      /* its file offset: where a uprobe goes */
	uint64_t sema;        /* the semaphore's address, 0 when the probe has none */
	uint64_t sema_offset; /* its file offset (a uprobe's ref_ctr_offset), 0 when none */
} dt_elf_usdt;
/* Calls fn on each SystemTap SDT note (.note.stapsdt) of e, in file order, until fn returns
 * non-zero; returns that value, or 0. Notes that do not parse, or whose pc is in no executable
 * segment, are left out. */
int dt_elf_usdt_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_usdt *u), void *ctx);
/* Calls fn on each DT_NEEDED library name of e's dynamic section (runpath false) and on each
 * DT_RUNPATH / DT_RPATH string (runpath true: ':'-separated directories, $ORIGIN unexpanded),
 * in order, until fn returns non-zero; returns that, or 0. */
int dt_elf_needed_each(dt_elf *e, int (*fn)(void *ctx, const char *name, bool runpath),
		       void *ctx);

/* ---------------------------------------------------------------- separate debug files */

/* The separate debug file of e on this machine, the way distributions install them: for each of
 * the cache's debug dirs and then /usr/lib/debug, DIR/.build-id/xx/rest.debug, DIR/<object's
 * dir>/<debuglink> and DIR/<debuglink>; then <object's dir>/<debuglink> and
 * <object's dir>/.debug/<debuglink>. Opened through the cache, searched once per object: a new
 * reference, or NULL (errno ENOENT). */
dt_elf *dt_elf_debug_file(dt_elf_cache *c, dt_elf *e);

/* ---------------------------------------------------------------- process mappings */

typedef struct dt_proc_mapping {
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char perms[5];        /* "r-xp" */
	bool deleted;         /* the path ended in " (deleted)" (removed from `path`) */
	const char *path;     /* "" for anonymous memory; "[vdso]", "[stack]", … as the kernel says */
} dt_proc_mapping;

typedef struct dt_proc_mappings {
	dt_proc_mapping *v;
	size_t n;
	char *text;           /* the paths point into it */
} dt_proc_mappings;

/* Reads /proc/PID/maps (pid 0: /proc/self/maps) into *out; -ESRCH when the process is gone. */
int dt_proc_mappings_read(int pid, dt_proc_mappings *out);
/* Parses maps text into *out, taking over `text` (malloc'd, NUL-ended): for a reader that looks
 * at the text first (the symbolizer skips a text it has already parsed). */
void dt_proc_mappings_parse(char *text, dt_proc_mappings *out);
void dt_proc_mappings_free(dt_proc_mappings *m);
/* The mapping holding addr, or NULL. */
const dt_proc_mapping *dt_proc_mappings_find(const dt_proc_mappings *m, uint64_t addr);

#endif

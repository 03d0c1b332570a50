/* elfproc_internal.h — what the files of elfproc/ share: the object and cache structures (elf.c
 * owns them, debugfile.c searches for an object's debug file). Not for other modules; they use
 * elfproc/elfproc.h. */
#ifndef DT_ELFPROC_INTERNAL_H
#define DT_ELFPROC_INTERNAL_H

#include "elfproc/elfproc.h"

#include <gelf.h>
#include <time.h>

#define DT_ELF_BUCKETS 256

struct dt_elf {
	dt_elf_cache *cache;   /* NULL: not cached (memory images, or the cache was freed) */
	struct dt_elf *next;   /* the cache bucket's chain */
	uint32_t refs;
	char *path;
	bool has_file;         /* dev/ino/mtime are the file's */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	void *image;           /* mmap'd (size bytes), or malloc'd when !has_file */
	size_t size;
	Elf *elf;
	size_t shstrndx;
	Elf_Scn *symtab, *dynsym;
	uint8_t build_id[64];
	size_t build_id_len;
	const char *debuglink; /* points into the image */
	dt_elf_seg *segs;
	size_t nsegs;
	char ident[160];
	struct dt_elf *dbg;    /* the separate debug file, a reference */
	bool dbg_searched;
};

struct dt_elf_cache {
	struct dt_elf *buckets[DT_ELF_BUCKETS];
	size_t count;
	struct dt_elf *vdso;
	char **dirs;
	size_t ndirs;
};

/* The directories a search with cache c (NULL: the process's) goes through. */
const char *const *dt_elf_debug_dirs(const dt_elf_cache *c, size_t *n);
/* Finds the debug file's path for e (debugfile.c): malloc'd, or NULL. */
char *dt_elf_debug_path(const dt_elf_cache *c, const dt_elf *e);

#endif

/* debugfile.c — the one search for an object's separate debug file, as distributions install them:
 * the build-id tree (DIR/.build-id/xx/rest.debug), the .gnu_debuglink name under a debug root
 * (DIR/<object's dir>/<link>, DIR/<link>), for every --debuginfo DIR first (they are what the user
 * asked for; a relative DIR is under the object's own folder, as libdwfl's debuginfo_path has it)
 * and then /usr/lib/debug; last the debuglink next to the object and in its .debug/ folder. An
 * object without a .gnu_debuglink is looked for by its own name with ".debug" (objcopy
 * --only-keep-debug's usual output), as libdwfl does. The unwinder takes the debug file's .debug_frame when the object has no CFI of its own,
 * the symbolizer its .symtab and DWARF. An object opened through /proc/PID/root/… keeps that
 * prefix for the files next to it (they are in the process's mount namespace) but not under a
 * debug root; one opened through /proc/PID/map_files/… is followed to the file it names. */
#include "elfproc/elfproc_internal.h"
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `cand` (malloc'd) when it is usable: readable, and not the object itself (a debuglink may name
 * the object's own file); else NULL, and cand is freed. */
static char *usable(const dt_elf *e, char *cand)
{
	struct stat st;

	if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, R_OK) == 0 &&
	    (!e->has_file || st.st_dev != e->dev || st.st_ino != e->ino))
		return cand;
	free(cand);
	return NULL;
}

/* Where the object's file is: `near`, the folder to look in next to it, and `logical`, the folder
 * as the process names it (for the debug roots' mirror of the tree). Empty for memory images. */
static void object_dirs(const dt_elf *e, char *near, char *logical, size_t n)
{
	char real[PATH_MAX];
	const char *path = e->path, *slash, *rest;
	ssize_t rl;

	near[0] = logical[0] = 0;
	if (!e->has_file)
		return;
	if (!strncmp(path, "/proc/", 6) && strstr(path, "/map_files/")) {
		rl = readlink(path, real, sizeof(real) - 1);
		if (rl > 0 && real[0] == '/') {
			real[rl] = 0;
			path = real;
		}
	}
	slash = strrchr(path, '/');
	snprintf(near, n, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (!strncmp(near, "/proc/", 6) && (rest = strchr(near + 6, '/')) &&
	    !strncmp(rest, "/root", 5) && (rest[5] == '/' || !rest[5]))
		rest += 5;
	else
		rest = near;
	snprintf(logical, n, "%s", rest);
}

/* The debug file of e under one debug root: its build-id tree, the object's folder mirrored under
 * it, or the root itself. */
static char *debug_root(const dt_elf *e, const char *root, const char *hex, const char *logical,
			const char *link)
{
	char *found = NULL;

	if (e->build_id_len)
		found = usable(e, xasprintf("%s/.build-id/%02x/%s.debug", root, e->build_id[0], hex));
	if (!found && link && logical[0] == '/')
		found = usable(e, xasprintf("%s%s/%s", root, logical, link));
	if (!found && link)
		found = usable(e, xasprintf("%s/%s", root, link));
	return found;
}

char *dt_elf_debug_path(const dt_elf_cache *c, const dt_elf *e)
{
	char near[PATH_MAX], logical[PATH_MAX], hex[2 * sizeof(e->build_id) + 1];
	const char *link = e->debuglink, *base;
	size_t ndirs;
	const char *const *dirs = dt_elf_debug_dirs(c, &ndirs);
	char *found = NULL, *own = NULL;

	if (link && strchr(link, '/'))
		link = NULL; /* a file name, never a path */
	object_dirs(e, near, logical, sizeof(near));
	/* No .gnu_debuglink: the object's own name with ".debug", as libdwfl looks for it. */
	if (!link && e->has_file && near[0]) {
		base = strrchr(e->path, '/');
		link = own = xasprintf("%s.debug", base ? base + 1 : e->path);
	}
	for (size_t i = 1; i < e->build_id_len; i++)
		snprintf(hex + 2 * (i - 1), 3, "%02x", e->build_id[i]);
	/* Each --debuginfo DIR, then /usr/lib/debug; a relative DIR both under the object's folder
	 * (libdwfl's rule, first) and under the current directory. */
	for (size_t d = 0; d <= ndirs && !found; d++) {
		const char *dir = d < ndirs ? dirs[d] : "/usr/lib/debug";
		char *rel = dir[0] != '/' && near[0] ? xasprintf("%s/%s", near, dir) : NULL;

		found = debug_root(e, rel ? rel : dir, hex, logical, link);
		if (!found && rel)
			found = debug_root(e, dir, hex, logical, link);
		free(rel);
	}
	if (!found && link && near[0])
		found = usable(e, xasprintf("%s/%s", near, link));
	if (!found && link && near[0])
		found = usable(e, xasprintf("%s/.debug/%s", near, link));
	free(own);
	return found;
}

dt_elf *dt_elf_debug_file(dt_elf_cache *c, dt_elf *e)
{
	if (!e->dbg_searched) {
		char *path = dt_elf_debug_path(c, e);

		e->dbg_searched = true;
		e->dbg = path ? dt_elf_open(c, path) : NULL;
		free(path);
		/* A file found by name is another build's when the build-ids differ: its DWARF
		 * would name the wrong code. */
		if (e->dbg && e->build_id_len && e->dbg->build_id_len &&
		    (e->build_id_len != e->dbg->build_id_len ||
		     memcmp(e->build_id, e->dbg->build_id, e->build_id_len))) {
			dt_elf_put(e->dbg);
			e->dbg = NULL;
		}
	}
	if (!e->dbg) {
		errno = ENOENT;
		return NULL;
	}
	return dt_elf_ref(e->dbg);
}

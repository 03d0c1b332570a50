/* debugfile.c — the one search for an object's separate debug file, as distributions install them:
 * the build-id tree (DIR/.build-id/xx/rest.debug), the .gnu_debuglink name under a debug root
 * (DIR/<object's dir>/<link>, DIR/<link>), for every --debuginfo DIR first (they are what the user
 * asked for) and then /usr/lib/debug; last the debuglink next to the object and in its .debug/
 * folder. The unwinder takes the debug file's .debug_frame when the object has no CFI of its own,
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

char *dt_elf_debug_path(const dt_elf_cache *c, const dt_elf *e)
{
	char near[PATH_MAX], logical[PATH_MAX], hex[2 * sizeof(e->build_id) + 1];
	const char *link = e->debuglink;
	size_t ndirs = c ? c->ndirs : 0;
	char *found;

	if (link && strchr(link, '/'))
		link = NULL; /* a file name, never a path */
	object_dirs(e, near, logical, sizeof(near));
	for (size_t i = 1; i < e->build_id_len; i++)
		snprintf(hex + 2 * (i - 1), 3, "%02x", e->build_id[i]);
	for (size_t d = 0; d <= ndirs; d++) {
		const char *root = d < ndirs ? c->dirs[d] : "/usr/lib/debug";

		if (e->build_id_len &&
		    (found = usable(e, xasprintf("%s/.build-id/%02x/%s.debug", root,
						 e->build_id[0], hex))))
			return found;
		if (link && logical[0] &&
		    (found = usable(e, xasprintf("%s%s/%s", root, logical, link))))
			return found;
		if (link && (found = usable(e, xasprintf("%s/%s", root, link))))
			return found;
	}
	if (!link || !near[0])
		return NULL;
	if ((found = usable(e, xasprintf("%s/%s", near, link))))
		return found;
	return usable(e, xasprintf("%s/.debug/%s", near, link));
}

dt_elf *dt_elf_debug_file(dt_elf_cache *c, dt_elf *e)
{
	if (!e->dbg_searched) {
		char *path = dt_elf_debug_path(c, e);

		e->dbg_searched = true;
		e->dbg = path ? dt_elf_open(c, path) : NULL;
		free(path);
	}
	if (!e->dbg) {
		errno = ENOENT;
		return NULL;
	}
	return dt_elf_ref(e->dbg);
}

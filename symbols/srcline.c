/* srcline.c — source lines to addresses, for `uprobe:BIN@FILE:LINE[:COL]` (bpftrace's source
 * location): the first statement of LINE in FILE, read from the binary's DWARF line table
 * (libdw's dwarf_getsrclines), the binary's own or its separate debug file's (elfproc's one
 * search). The other direction, addresses to lines for stacks, is symbols.c's. */
#include "symbols/symbols_internal.h"
#include "common/common.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dt_sym_dwarf_open(dt_sym_dwarf *d, const char *path)
{
	dt_elf *src;

	*d = (dt_sym_dwarf){ .fd = -1 };
	d->e = dt_elf_open(NULL, path);
	if (!d->e)
		return -errno;
	if (!dt_elf_has_section(d->e, ".debug_info"))
		d->dbg = dt_elf_debug_file(NULL, d->e);
	src = d->dbg ? d->dbg : d->e;
	/* Opened by fd when it is a file, so that libdw knows its folder: split units (.dwo) are
	 * looked for there first, then in the comp_dir the compiler recorded. */
	if (dt_elf_has_section(src, ".debug_info")) {
		d->fd = dt_elf_has_file(src) ? open(dt_elf_path(src), O_RDONLY | O_CLOEXEC) : -1;
		d->dw = d->fd >= 0 ? dwarf_begin(d->fd, DWARF_C_READ)
				   : dwarf_begin_elf(dt_elf_handle(src), DWARF_C_READ, NULL);
	}
	if (!d->dw) {
		dt_sym_dwarf_close(d);
		return -ENODATA;
	}
	/* Split units packaged beside the file the DWARF is in, or beside the binary. */
	char *dwp = xasprintf("%s.dwp", dt_elf_has_file(src) ? dt_elf_path(src) : path);
	d->dwp = dt_dwp_open(dwp);
	free(dwp);
	if (!d->dwp && src != d->e) {
		dwp = xasprintf("%s.dwp", path);
		d->dwp = dt_dwp_open(dwp);
		free(dwp);
	}
	return 0;
}

bool dt_sym_dwarf_next_unit(dt_sym_dwarf *d, Dwarf_CU **cu, Dwarf_Die *die, bool *unsplit)
{
	Dwarf_Die sub;
	uint64_t id = 0;
	uint8_t type;

	if (dwarf_get_units(d->dw, *cu, cu, NULL, &type, die, &sub) != 0)
		return false;
	if (type != DW_UT_skeleton)
		return true;
	/* libdw looks for the .dwo on this call (next to the binary, then in comp_dir); then the
	 * package, by the skeleton's dwo_id. */
	if (dwarf_cu_info(*cu, NULL, NULL, NULL, &sub, &id, NULL, NULL) == 0 &&
	    dwarf_tag(&sub) == DW_TAG_compile_unit)
		*die = sub;
	else if (d->dwp && dt_dwp_unit(d->dwp, id, &sub) == 0)
		*die = sub;
	else if (unsplit)
		*unsplit = true;
	return true;
}

void dt_sym_dwarf_close(dt_sym_dwarf *d)
{
	dt_dwp_close(d->dwp);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->fd >= 0)
		close(d->fd);
	dt_elf_put(d->dbg);
	dt_elf_put(d->e);
	*d = (dt_sym_dwarf){ 0 };
}

bool dt_sym_path_ends_with(const char *path, const char *tail)
{
	size_t pn = strlen(path), tn;

	while (tail[0] == '.' && tail[1] == '/') /* "./x.c" is x.c */
		tail += 2;
	tn = strlen(tail);
	if (!tn || tn > pn || strcmp(path + pn - tn, tail))
		return false;
	/* Whole components only: "u.c" is not the tail of "menu.c"; an absolute path is all. */
	return tn == pn || (tail[0] != '/' && path[pn - tn - 1] == '/');
}

/* What the walk over the line tables found. */
struct found {
	const char *file;  /* the first matching file's path (libdw's: lives with the Dwarf) */
	char *other;       /* another, different path that matches too: ambiguous (malloc'd) */
	uint64_t addr;     /* lowest address of a statement at the line (and column) */
	bool any;
	uint32_t before, after; /* the nearest lines with code on either side, 0 if none */
};

static void note_line(struct found *f, Dwarf_Line *l, const char *src, uint32_t line, uint32_t col)
{
	int lineno = 0, linecol = 0;
	bool stmt = false, end = false;
	Dwarf_Addr addr;

	if (!f->file)
		f->file = src;
	else if (strcmp(f->file, src) && !f->other)
		f->other = xstrdup(src);
	if (dwarf_lineno(l, &lineno) != 0 || dwarf_linebeginstatement(l, &stmt) != 0 || !stmt ||
	    dwarf_lineendsequence(l, &end) != 0 || end || lineno <= 0 ||
	    dwarf_lineaddr(l, &addr) != 0)
		return;
	if ((uint32_t)lineno < line && (uint32_t)lineno > f->before)
		f->before = (uint32_t)lineno;
	if ((uint32_t)lineno > line && (!f->after || (uint32_t)lineno < f->after))
		f->after = (uint32_t)lineno;
	if ((uint32_t)lineno != line || strcmp(f->file, src))
		return;
	if (col && (dwarf_linecol(l, &linecol) != 0 || (uint32_t)linecol != col))
		return;
	if (!f->any || addr < f->addr)
		f->addr = addr;
	f->any = true;
}

static void walk_lines(Dwarf *dw, const char *file, uint32_t line, uint32_t col, struct found *f)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;

				if (src && dt_sym_path_ends_with(src, file))
					note_line(f, l, src, line, col);
			}
		}
		off = next;
	}
}

int dt_sym_line_addr(const char *path, const char *file, uint32_t line, uint32_t col,
		     uint64_t *addr, char **why)
{
	dt_sym_dwarf d;
	struct found f = { 0 };
	char where[64] = "";
	int rc = dt_sym_dwarf_open(&d, path);

	*why = NULL;
	if (rc == -ENODATA)
		*why = xasprintf("%s has no DWARF debug information, so no line table: build it with "
				 "-g, or give its debug file's directory with --debuginfo", path);
	if (rc < 0)
		return rc;
	walk_lines(d.dw, file, line, col, &f);
	if (col)
		snprintf(where, sizeof(where), ":%u", col);
	if (!f.file) {
		*why = xasprintf("no source file '%s' has code in %s's line table", file, path);
		rc = -ENOENT;
	} else if (f.other) {
		*why = xasprintf("'%s' is ambiguous in %s: it matches %s and %s (give more of the "
				 "path)", file, path, f.file, f.other);
		rc = -EINVAL;
	} else if (!f.any && col) {
		*why = xasprintf("no statement starts at %s:%u%s in %s (leave out the column for the "
				 "line's first)", f.file, line, where, path);
		rc = -ENOENT;
	} else if (!f.any) {
		char near[64] = "";

		if (f.before && f.after)
			snprintf(near, sizeof(near), "; the nearest lines with code are %u and %u",
				 f.before, f.after);
		else if (f.before || f.after)
			snprintf(near, sizeof(near), "; the nearest line with code is %u",
				 f.before ? f.before : f.after);
		*why = xasprintf("no code at %s:%u in %s%s", f.file, line, path, near);
		rc = -ENOENT;
	} else {
		*addr = f.addr;
	}
	free(f.other);
	dt_sym_dwarf_close(&d);
	return rc;
}

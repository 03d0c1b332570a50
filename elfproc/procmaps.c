/* procmaps.c — the one /proc/PID/maps parser. Each line is "start-end perms offset maj:min inode
 * [path]"; the text is kept and cut in place into NUL-ended paths, so a large process's maps
 * (thousands of lines) cost one allocation for the text and one for the array. The kernel lists
 * mappings sorted by address, which dt_proc_mappings_find relies on. */
#include "elfproc/elfproc.h"
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hex digits at *p, advancing it; false when there are none. */
static bool hex(char **p, uint64_t *v)
{
	char *end;

	*v = strtoull(*p, &end, 16);
	if (end == *p)
		return false;
	*p = end;
	return true;
}

/* Parses one NUL-ended line; false when it is not a mapping line. */
static bool parse_line(char *line, dt_proc_mapping *m)
{
	static const char del[] = " (deleted)";
	char *p = line, *end;
	uint64_t maj, min;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!hex(&p, &m->start) || *p++ != '-' || !hex(&p, &m->end) || *p++ != ' ')
		return false;
	for (int i = 0; i < 4; i++) {
		if (!*p || *p == ' ')
			return false;
		m->perms[i] = *p++;
	}
	while (*p && *p != ' ') /* perms are four letters today; skip any more */
		p++;
	if (*p++ != ' ' || !hex(&p, &m->offset) || *p++ != ' ' || !hex(&p, &maj) ||
	    *p++ != ':' || !hex(&p, &min) || *p++ != ' ')
		return false;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	m->inode = strtoull(p, &end, 10);
	if (end == p)
		return false;
	p = end;
	while (*p == ' ')
		p++;
	len = strlen(p);
	if (len > sizeof(del) - 1 && !strcmp(p + len - (sizeof(del) - 1), del)) {
		p[len - (sizeof(del) - 1)] = '\0';
		m->deleted = true;
	}
	m->path = p;
	return true;
}

void dt_proc_mappings_parse(char *text, dt_proc_mappings *out)
{
	DT_VEC(dt_proc_mapping) v = {0};
	char *line;

	out->text = text;
	for (line = out->text; line && *line;) {
		char *nl = strchr(line, '\n');
		dt_proc_mapping m;

		if (nl)
			*nl = '\0';
		if (parse_line(line, &m))
			DT_VEC_PUSH(&v, m);
		line = nl ? nl + 1 : NULL;
	}
	out->v = v.v;
	out->n = v.n;
}

int dt_proc_mappings_read(int pid, dt_proc_mappings *out)
{
	char path[64], *text;
	int ret;

	memset(out, 0, sizeof(*out));
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	ret = dt_read_file(path, &text, NULL);
	if (ret < 0)
		return ret == -ENOENT ? -ESRCH : ret;
	dt_proc_mappings_parse(text, out);
	return 0;
}

void dt_proc_mappings_free(dt_proc_mappings *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

const dt_proc_mapping *dt_proc_mappings_find(const dt_proc_mappings *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < m->v[lo - 1].end ? &m->v[lo - 1] : NULL;
}

/* tracefs.c — tracepoint formats for the checker: find tracefs, read
 * `events/SUBSYS/EVENT/format` into a DT_T_RECORD of dt_tp_field, and suggest the closest event
 * or subsystem name when one is mistyped. Only the checker calls this, and only for probes that
 * name a tracepoint, so a script without tracepoints never touches the filesystem. */
#include "lang/lang_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_events(const char *root)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *dt_tracefs_root(const char *override)
{
	static bool tried_mount;
	if (override)
		return has_events(override) ? override : NULL;
	if (has_events("/sys/kernel/tracing"))
		return "/sys/kernel/tracing";
	if (has_events("/sys/kernel/debug/tracing"))
		return "/sys/kernel/debug/tracing";
	/* tracefs is often simply not mounted in containers and minimal systems; as root, mount
	 * it once where the kernel documents it rather than failing. */
	if (!tried_mount && geteuid() == 0) {
		tried_mount = true;
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
		    has_events("/sys/kernel/tracing"))
			return "/sys/kernel/tracing";
	}
	return NULL;
}

/* Parses `field:const char * filename;	offset:24;	size:8;	signed:0;`. */
static bool parse_field(dt_arena *a, char *line, dt_tp_field *f)
{
	char *decl = strstr(line, "field:");
	if (!decl)
		return false;
	decl += 6;
	char *semi = strchr(decl, ';');
	if (!semi)
		return false;
	*semi = 0;
	char *rest = semi + 1;
	char *o = strstr(rest, "offset:"), *s = strstr(rest, "size:"), *sg = strstr(rest, "signed:");
	if (!o || !s)
		return false;
	f->offset = (uint32_t)strtoul(o + 7, NULL, 10);
	f->size = (uint32_t)strtoul(s + 5, NULL, 10);
	f->is_signed = sg && strtol(sg + 7, NULL, 10) != 0;
	/* The name is the last identifier of the declaration, before any [N]. */
	char *end = decl + strlen(decl);
	while (end > decl && isspace((unsigned char)end[-1]))
		end--;
	char *name_end = end;
	if (name_end > decl && name_end[-1] == ']') {
		f->is_array = true;
		while (name_end > decl && name_end[-1] != '[')
			name_end--;
		if (name_end > decl)
			name_end--;
	}
	char *name = name_end;
	while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (name == name_end)
		return false;
	f->name = dt_arena_strndup(a, name, (size_t)(name_end - name));
	char *ct_end = name;
	while (ct_end > decl && isspace((unsigned char)ct_end[-1]))
		ct_end--;
	while (decl < ct_end && isspace((unsigned char)*decl))
		decl++;
	f->ctype = dt_arena_printf(a, "%.*s%s", (int)(ct_end - decl), decl,
				   f->is_array ? name_end : "");
	f->is_data_loc = strncmp(f->ctype, "__data_loc", 10) == 0;
	bool is_char = strstr(f->ctype, "char") != NULL;
	size_t stars = 0;
	for (const char *c = f->ctype; *c; c++)
		stars += *c == '*';
	f->is_string = is_char && (f->is_data_loc || (f->is_array && !stars) || stars == 1);
	return true;
}

int dt_tracefs_record(dt_arena *a, const char *root, const char *subsys, const char *event,
		      dt_type **out)
{
	char path[4096];
	if (strchr(subsys, '/') || strchr(event, '/') || !strcmp(subsys, "..") ||
	    !strcmp(event, ".."))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, subsys, event);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	DT_VEC(dt_tp_field) fields = { 0 };
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		dt_tp_field fld = { 0 };
		if (parse_field(a, line, &fld))
			DT_VEC_PUSH(&fields, fld);
	}
	free(line);
	fclose(f);
	dt_type *t = dt_type_new(a, DT_T_RECORD);
	t->record.subsys = dt_arena_strndup(a, subsys, strlen(subsys));
	t->record.event = dt_arena_strndup(a, event, strlen(event));
	t->record.nfields = (uint32_t)fields.n;
	t->record.fields = dt_arena_alloc(a, sizeof(dt_tp_field) * (fields.n + 1));
	if (fields.n)
		memcpy(t->record.fields, fields.v, sizeof(dt_tp_field) * fields.n);
	free(fields.v);
	*out = t;
	return 0;
}

const char *dt_tracefs_closest(dt_arena *a, const char *root, const char *subsys,
			       const char *event)
{
	char path[4096];
	snprintf(path, sizeof(path), event ? "%s/events/%s" : "%s/events", root, subsys);
	DIR *dir = opendir(path);
	if (!dir)
		return NULL;
	DT_VEC(const char *) names = { 0 };
	struct dirent *de;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			DT_VEC_PUSH(&names, dt_arena_strndup(a, de->d_name, strlen(de->d_name)));
	closedir(dir);
	DT_VEC_PUSH(&names, NULL);
	const char *want = event ? event : subsys;
	const char *best = dt_closest(want, strlen(want), names.v);
	free(names.v);
	return best;
}

int dt_kallsyms_percpu(const char *name, uint64_t *off, uint64_t *table)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a;
	uint64_t end = 0;
	bool found = false;

	if (!f)
		return -errno;
	*table = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		if (!strcmp(sym, name) && !found) {
			found = true;
			*off = a;
		} else if (!strcmp(sym, "__per_cpu_offset")) {
			*table = a;
		} else if (!strcmp(sym, "__per_cpu_end")) {
			end = a;
		}
	}
	fclose(f);
	if (!found || (!*table && !end))
		return -ENOENT; /* also: no data symbols listed at all */
	if (!*table)
		return -EPERM;
	/* x86-64 lists per-cpu variables at their offsets, below __per_cpu_end. */
	return end && *off < end ? 0 : -EINVAL;
}

int dt_kallsyms_lookup(const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a;
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "ADDR TYPE NAME [MODULE]"; addresses read as 0 without the privilege to see them. */
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			*addr = a;
			rc = a ? 0 : -EPERM;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* list.c — `dwarftrace -l [SEARCH]` and `-lv`: the probes this machine offers, one per line as
 * bpftrace prints them (`tracepoint:sched:sched_switch`, `software:page-faults:`,
 * `uprobe:./app:main`, `kprobe:vfs_read`), filtered by a search with bpftrace's wildcards. A search
 * is `TYPE:REST` (TYPE may be an alias or hold wildcards; a wildcard TYPE leaves out the return
 * probes, as bpftrace does) or a bare pattern matched against whole lines (`*sched_switch*`).
 * Candidates come from where attaching takes them: tracefs `available_events` and
 * `available_filter_functions` (kprobes only where the kernel has them), the perf event table
 * (lang/names.c), and the function symbols of a binary — named in the search, found by a glob,
 * or, with -p, every file the process maps executable. `-lv` adds tracepoint fields (from their
 * format files) and the parameters of user functions (from DWARF, symbols/). Only probe types dwarftrace can attach are listed. */
#include "runtime/session_internal.h"
#include "elfproc/elfproc.h"
#include "symbols/symbols.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <stdarg.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef DT_VEC(char *) strvec;

struct lister {
	const char *rest;  /* the search after "TYPE:", or the whole search when it has no ':' */
	bool whole;        /* no ':' in the search: match "type:rest" lines whole */
	int pid;           /* -p, or 0 */
	bool verbose;
	FILE *out, *err;
	strvec lines;      /* "type:rest" of one provider, sorted and printed together */
	char *warned;      /* the last binary said to have no DWARF */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps `type:rest` when it matches the search. */
static void offer(struct lister *l, const char *type, const char *rest)
{
	char *line = xasprintf("%s:%s", type, rest);

	if (fnmatch(l->rest, l->whole ? line : rest, 0) == 0)
		DT_VEC_PUSH(&l->lines, line);
	else
		free(line);
}

/* The fields of a tracepoint as its format file declares them, bpftrace's `-lv` lines: the
 * common fields (before the first empty line) are left out. */
static void print_tp_fields(struct lister *l, const char *event)
{
	const char *root = dt_rt_tracefs();
	char path[PATH_MAX], line[1024], *colon;
	bool past_common = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/format", root ? root : "", event);
	if ((colon = strchr(path + strlen(root ? root : "") + 8, ':')))
		*colon = '/';
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *decl = strstr(line, "field:"), *semi;

		if (line[0] == '\n') {
			past_common = true;
			continue;
		}
		if (!past_common || line[0] != '\t' || decl != line + 1)
			continue;
		decl += 6;
		if ((semi = strchr(decl, ';')))
			*semi = 0;
		fprintf(l->out, "    %s\n", decl);
	}
	fclose(f);
}

/* The parameters of a user function ("uprobe:BIN:FUNC") from its DWARF, one warning per binary
 * without any, as bpftrace's -lv; kernel functions have none to show here. */
static void print_params(struct lister *l, const char *line)
{
	const char *bin = strchr(line, ':') + 1, *fn = strrchr(bin, ':');
	char *path, *file, **params = NULL;
	uint32_t n = 0;
	int rc;

	if (!strncmp(line, "kprobe:", 7) || !strncmp(line, "kretprobe:", 10) || fn == bin - 1)
		return;
	path = xstrndup(bin, (size_t)(fn - bin));
	/* -p's objects are read as that process sees them (list_user). */
	file = l->pid > 0 && path[0] == '/' ? xasprintf("/proc/%d/root%s", l->pid, path) :
					      xstrdup(path);
	rc = dt_sym_func_params(file, fn + 1, &params, &n);
	free(file);
	if ((rc == -ENODATA || rc == -ENOLINK) && (!l->warned || strcmp(l->warned, path))) {
		if (rc == -ENODATA)
			fprintf(l->err, "dwarftrace: no DWARF in %s: cannot show the parameters of "
				"its functions\n", path);
		else
			fprintf(l->err, "dwarftrace: cannot show the parameters of %s's functions: "
				"%s\n", path, DT_SYM_UNSPLIT_WHY);
		free(l->warned);
		l->warned = xstrdup(path);
	}
	for (uint32_t k = 0; k < n; k++) {
		fprintf(l->out, "    %s\n", params[k]);
		free(params[k]);
	}
	free(params);
	free(path);
}

static void emit_decl(void *ctx, const char *fmt, va_list args)
{
	vfprintf(ctx, fmt, args);
}

/* `-lv` of a raw tracepoint, kernel function or iterator: its arguments from BTF, one
 * declaration a line as bpftrace prints them (fexit adds the return value as `retval`). */
static void print_btf_params(struct lister *l, dt_provider p, const char *name)
{
	struct btf *btf = dt_rt_vmlinux_btf();
	const struct btf_type *t = NULL;
	struct btf_dump *d;
	char fn[256];
	int id;

	if (!btf || !(d = btf_dump__new(btf, emit_decl, l->out, NULL)))
		return;
	if (p == DT_P_ITER) {
		snprintf(fn, sizeof(fn), "bpf_iter__%s", name);
		id = btf__find_by_name_kind(btf, fn, BTF_KIND_STRUCT);
		t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
		/* Its members after the iterator's meta pointer. */
		for (uint16_t i = 1; t && i < btf_vlen(t); i++) {
			const struct btf_member *m = &btf_members(t)[i];
			const struct btf_type *mt = btf__type_by_id(btf, m->type);

			/* A pointer the kernel declares with __bpf_md_ptr is an anonymous union
			 * around it: the pointer is what the program sees. */
			if (mt && btf_is_union(mt) && !m->name_off && btf_vlen(mt))
				m = btf_members(mt);
			LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o,
				    .field_name = btf__name_by_offset(btf, m->name_off));
			fprintf(l->out, "    ");
			btf_dump__emit_type_decl(d, m->type, &o);
			fprintf(l->out, "\n");
		}
		btf_dump__free(d);
		return;
	}
	if (p == DT_P_RAWTRACEPOINT) {
		uint32_t proto = dt_btf_rawtp_proto(btf, name);
		t = proto ? btf__type_by_id(btf, proto) : NULL;
	} else {
		snprintf(fn, sizeof(fn), "%s", name);
		id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
		t = id > 0 ? btf__type_by_id(btf, btf__type_by_id(btf, (uint32_t)id)->type) : NULL;
	}
	for (uint16_t i = p == DT_P_RAWTRACEPOINT; t && i < btf_vlen(t); i++) {
		const struct btf_param *pa = &btf_params(t)[i];
		LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o,
			    .field_name = btf__name_by_offset(btf, pa->name_off));

		if (!pa->type)
			break;
		fprintf(l->out, "    ");
		btf_dump__emit_type_decl(d, pa->type, &o);
		fprintf(l->out, "\n");
	}
	if (t && p == DT_P_FEXIT && t->type) {
		LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = "retval");

		fprintf(l->out, "    ");
		btf_dump__emit_type_decl(d, t->type, &o);
		fprintf(l->out, "\n");
	}
	btf_dump__free(d);
}

/* The raw tracepoints, kernel functions or iterators of vmlinux's BTF. */
static void list_btf(struct lister *l, dt_provider p)
{
	char **names = NULL;
	uint32_t n = 0;

	if (dt_rt_btf_names(p, "*", &names, &n) < 0) {
		fprintf(l->err, "dwarftrace: cannot list %s probes: the kernel has no BTF "
			"(/sys/kernel/btf/vmlinux)\n", dt_provider_name(p));
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		offer(l, dt_provider_name(p), names[i]);
		free(names[i]);
	}
	free(names);
}

/* Prints and forgets the lines gathered for one provider, sorted, without repeats. */
static void flush(struct lister *l, dt_provider p)
{
	qsort(l->lines.v, l->lines.n, sizeof(*l->lines.v), cmp_str);
	for (size_t i = 0; i < l->lines.n; i++) {
		const char *line = l->lines.v[i];

		if (i && !strcmp(line, l->lines.v[i - 1]))
			continue;
		fprintf(l->out, "%s\n", line);
		if (l->verbose && p == DT_P_TRACEPOINT)
			print_tp_fields(l, strchr(line, ':') + 1);
		else if (l->verbose && (p == DT_P_RAWTRACEPOINT || p == DT_P_FENTRY ||
					       p == DT_P_FEXIT || p == DT_P_ITER))
			print_btf_params(l, p, strrchr(line, ':') + 1);
		else if (l->verbose && p != DT_P_SOFTWARE && p != DT_P_HARDWARE && p != DT_P_USDT &&
			 p != DT_P_INTERVAL && p != DT_P_PROFILE)
			print_params(l, line);
	}
	for (size_t i = 0; i < l->lines.n; i++)
		free(l->lines.v[i]);
	l->lines.n = 0;
}

/* One line per line of a tracefs list file (kernel functions lose their " [module]"). */
static void list_tracefs(struct lister *l, const char *type, const char *file)
{
	const char *root = dt_rt_tracefs();
	char path[PATH_MAX], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root ? root : "/sys/kernel/tracing", file);
	f = fopen(path, "re");
	if (!f) {
		fprintf(l->err, "dwarftrace: cannot list %s probes: %s: %s\n", type, path,
			strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		/* ".part.N" pieces of a function cannot be traced (bpftrace leaves them out too). */
		if (line[0] && !strstr(line, ".part."))
			offer(l, type, line);
	}
	fclose(f);
}

static void list_perf_events(struct lister *l, dt_provider p)
{
	const char *const *names = p == DT_P_SOFTWARE ? dt_software_event_names() :
							 dt_hardware_event_names();

	/* Every spelling, aliases too (`software:cpu:` beside `software:cpu-clock:`), as current
	 * bpftrace lists them. */
	for (size_t i = 0; names[i]; i++) {
		char *rest = xasprintf("%s:", names[i]);

		offer(l, dt_provider_name(p), rest);
		free(rest);
	}
}

/* interval: and profile: with their units, as bpftrace lists them (`interval:ms:`). */
static void list_timers(struct lister *l, dt_provider p)
{
	static const char *const units[] = { "hz:", "us:", "ms:", "s:" };

	for (size_t i = 0; i < DT_ARRAY_SIZE(units); i++)
		offer(l, dt_provider_name(p), units[i]);
}

/* `-l 'struct NAME'` (also union, enum; NAME may hold wildcards): the kernel's types of that
 * kind whose name matches, from vmlinux's BTF; `-lv` prints each one's members too, under
 * bpftrace's `vmlinux: struct NAME {` line. */
static int list_types(struct lister *l, const char *search)
{
	static const struct { const char *word; int kind; } kinds[] = {
		{ "struct", BTF_KIND_STRUCT }, { "union", BTF_KIND_UNION }, { "enum", BTF_KIND_ENUM },
	};
	struct btf *btf = dt_rt_vmlinux_btf();
	size_t w = strcspn(search, " "), k = 0;
	const char *pat = search + w + 1;
	strvec names = { 0 };
	struct btf_dump *d;

	while (strncmp(kinds[k].word, search, w) || kinds[k].word[w])
		k++;
	if (!btf) {
		fprintf(l->err, "dwarftrace: -l '%s': the kernel has no BTF (/sys/kernel/btf/vmlinux)"
			"\n", search);
		return -ENOENT;
	}
	for (uint32_t id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);
		int kind = btf_kind(t) == BTF_KIND_ENUM64 ? BTF_KIND_ENUM : (int)btf_kind(t);

		/* One definition a name: a struct declared but not defined has no members. */
		if (kind != kinds[k].kind || !name || !*name || fnmatch(pat, name, 0) ||
		    (kind != BTF_KIND_ENUM && btf_is_fwd(t)))
			continue;
		DT_VEC_PUSH(&names, xasprintf("%s %s\t%u", kinds[k].word, name, id));
	}
	qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	d = l->verbose ? btf_dump__new(btf, emit_decl, l->out, NULL) : NULL;
	for (size_t i = 0; i < names.n; i++) {
		char *tab = strchr(names.v[i], '\t');
		uint32_t id = (uint32_t)strtoul(tab + 1, NULL, 10);
		const struct btf_type *t = btf__type_by_id(btf, id);

		*tab = 0;
		if (i && !strcmp(names.v[i], names.v[i - 1]))
			continue;
		if (!d) {
			fprintf(l->out, "%s\n", names.v[i]);
			continue;
		}
		fprintf(l->out, "vmlinux: %s {\n", names.v[i]);
		for (uint16_t m = 0; m < btf_vlen(t); m++) {
			if (btf_is_enum(t) || btf_is_enum64(t)) {
				const char *en = btf__name_by_offset(btf, btf_is_enum(t) ?
					btf_enum(t)[m].name_off : btf_enum64(t)[m].name_off);
				long long v = btf_is_enum(t) ? (long long)btf_enum(t)[m].val :
					      (long long)btf_enum64_value(&btf_enum64(t)[m]);

				fprintf(l->out, "\t%s = %lld,\n", en, v);
				continue;
			}
			const struct btf_member *mb = &btf_members(t)[m];
			LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o,
				    .field_name = btf__name_by_offset(btf, mb->name_off));

			fprintf(l->out, "\t");
			btf_dump__emit_type_decl(d, mb->type, &o);
			if (btf_member_bitfield_size(t, m))
				fprintf(l->out, ":%u", btf_member_bitfield_size(t, m));
			fprintf(l->out, ";\n");
		}
		fprintf(l->out, "};\n");
	}
	btf_dump__free(d);
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	free(names.v);
	return 0;
}

struct sym_ctx {
	struct lister *l;
	const char *type, *shown, *func_pat; /* func_pat NULL: match "shown:func" whole */
};

static int offer_sym(void *ctx, const dt_elf_sym *sym)
{
	struct sym_ctx *c = ctx;
	char *rest;

	if ((sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) || strchr(sym->name, '@') ||
	    !sym->value)
		return 0;
	if (c->func_pat && fnmatch(c->func_pat, sym->name, 0))
		return 0;
	rest = xasprintf("%s:%s", c->shown, sym->name);
	if (c->func_pat)
		DT_VEC_PUSH(&c->l->lines, xasprintf("%s:%s", c->type, rest));
	else
		offer(c->l, c->type, rest);
	free(rest);
	return 0;
}

/* The functions of the ELF file `path`, printed as `type:shown:func`. */
static void list_binary(struct lister *l, const char *type, const char *path, const char *shown,
			const char *func_pat)
{
	struct sym_ctx c = { .l = l, .type = type, .shown = shown, .func_pat = func_pat };
	dt_elf *e = dt_elf_open(NULL, path);

	if (!e) {
		if (func_pat)
			fprintf(l->err, "dwarftrace: cannot list the functions of %s: %s\n", path,
				errno == ENOEXEC ? "not an ELF file" : strerror(errno));
		return;
	}
	dt_elf_sym_each(e, offer_sym, &c);
	dt_elf_put(e);
}

/* uprobe-like types: the binary named in "BIN:FUNC" (a path, a library or program name, or a
 * glob), or with no binary in the search, every file -p's process maps executable. */
static void list_user(struct lister *l, const char *type)
{
	const char *colon = l->whole ? NULL : strchr(l->rest, ':');

	/* `uprobe:*:FUNC` with -p: every object of the process, as bpftrace lists it. */
	if (colon && l->pid > 0 && colon - l->rest == 1 && l->rest[0] == '*')
		colon = NULL;
	if (colon) {
		char *bin = xstrndup(l->rest, (size_t)(colon - l->rest));

		if (strpbrk(bin, "*?[")) {
			glob_t g;

			if (glob(bin, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					if (access(g.gl_pathv[i], X_OK) == 0 ||
					    strstr(g.gl_pathv[i], ".so"))
						list_binary(l, type, g.gl_pathv[i],
							    g.gl_pathv[i], colon + 1);
				globfree(&g);
			}
		} else {
			char *path = NULL;
			int rc = dt_rt_resolve_binary(bin, l->pid, &path);

			if (rc < 0)
				fprintf(l->err, "dwarftrace: cannot find '%s' (give a path, or a "
					"library name that `ldconfig -p` lists)\n", bin);
			else
				list_binary(l, type, path, strchr(bin, '/') ? bin : path,
					    colon + 1);
			free(path);
		}
		free(bin);
		return;
	}
	if (l->pid > 0) {
		dt_proc_mappings m;
		strvec seen = { 0 };

		if (dt_proc_mappings_read(l->pid, &m) < 0) {
			fprintf(l->err, "dwarftrace: cannot read the mappings of process %d\n",
				l->pid);
			return;
		}
		for (size_t i = 0; i < m.n; i++) {
			const dt_proc_mapping *mp = &m.v[i];
			char path[PATH_MAX];
			bool dup = false;

			if (mp->perms[2] != 'x' || mp->path[0] != '/' || mp->deleted)
				continue;
			for (size_t k = 0; k < seen.n && !dup; k++)
				dup = !strcmp(seen.v[k], mp->path);
			if (dup)
				continue;
			DT_VEC_PUSH(&seen, xstrdup(mp->path));
			/* The file as the process sees it (it may live in another mount namespace). */
			snprintf(path, sizeof(path), "/proc/%d/root%s", l->pid, mp->path);
			list_binary(l, type, path, mp->path, NULL);
		}
		for (size_t k = 0; k < seen.n; k++)
			free(seen.v[k]);
		free(seen.v);
		dt_proc_mappings_free(&m);
	}
}

static int offer_usdt(void *ctx, const dt_rt_usdt_obj *o, const dt_elf_usdt *u)
{
	char *rest = xasprintf("%s:%s:%s", o->shown, u->provider, u->name);

	offer(ctx, "usdt", rest);
	free(rest);
	return 0;
}

/* USDT probes, `usdt:BIN:PROVIDER:NAME`, of the objects the search names as attaching finds
 * them (dt_rt_usdt_each): a binary, a glob, or — no binary, or "*" — every object of -p's
 * process; every process's only when the search asks for usdt by name. */
static void list_usdt(struct lister *l, bool explicit)
{
	const char *colon = l->whole ? NULL : strchr(l->rest, ':');
	char *bin = colon ? xstrndup(l->rest, (size_t)(colon - l->rest)) : xstrdup("");
	char *why = NULL;

	/* Every process's objects: only when the search asks for usdt by name. */
	if ((!*bin || !strcmp(bin, "*")) && l->pid <= 0 && !explicit)
		goto out;
	if (dt_rt_usdt_each(bin, l->pid, NULL, offer_usdt, l, &why) < 0 && explicit)
		fprintf(l->err, "dwarftrace: -l: %s\n", why);
out:
	free(why);
	free(bin);
}

/* Whether provider p is listed for a search whose type part is `type` (NULL: a bare pattern).
 * A wildcard type (or none) takes the entry probes only, as bpftrace's listing does. */
static bool wanted(dt_provider p, const char *type, bool explicit)
{
	if (explicit)
		return true;
	if (p == DT_P_KRETPROBE || p == DT_P_URETPROBE || p == DT_P_XPROBE || p == DT_P_FEXIT)
		return false;
	return !type || fnmatch(type, dt_provider_name(p), 0) == 0;
}

static int list_one(const char *search, int pid, bool verbose, bool no_warnings, FILE *out,
		    FILE *err)
{
	static const dt_provider order[] = {
		DT_P_HARDWARE, DT_P_INTERVAL, DT_P_KPROBE, DT_P_KRETPROBE, DT_P_SOFTWARE, DT_P_TRACEPOINT,
		DT_P_UPROBE, DT_P_URETPROBE, DT_P_USDT, DT_P_XPROBE, DT_P_RAWTRACEPOINT, DT_P_FENTRY, DT_P_FEXIT,
		DT_P_ITER, DT_P_PROFILE,
	};
	struct lister l = { .pid = pid, .verbose = verbose, .out = out, .err = err };
	const char *colon;
	char *type = NULL;
	dt_provider explicit_p = DT_P__COUNT;
	bool have_kprobes = access("/sys/bus/event_source/devices/kprobe", F_OK) == 0;

	if (!search || !*search || !strcmp(search, "*"))
		search = "*:*";
	for (const char *c = search; *c; c++) {
		if (!isalnum((unsigned char)*c) && !strchr("_-*?[]:./+@,!", *c)) {
			/* bpftrace's words, which scripts around it look for, after who says them. */
			fprintf(err, "dwarftrace: ERROR: invalid character '%c' in the search '%s'\n", *c, search);
			return -EINVAL;
		}
	}
	colon = strchr(search, ':');
	l.whole = !colon;
	l.rest = colon ? colon + 1 : search;
	if (colon) {
		type = xstrndup(search, (size_t)(colon - search));
		if (!strpbrk(type, "*?[")) {
			if (!dt_provider_lookup(type, strlen(type), &explicit_p)) {
				fprintf(err, "dwarftrace: -l: unknown probe type '%s'\n", type);
				free(type);
				return -EINVAL;
			}
		}
	}
	for (size_t i = 0; i < DT_ARRAY_SIZE(order); i++) {
		dt_provider p = order[i];
		const char *name = dt_provider_name(p);

		if (explicit_p != DT_P__COUNT ? p != explicit_p : !wanted(p, type, false))
			continue;
		switch (p) {
		case DT_P_TRACEPOINT:
			list_tracefs(&l, name, "available_events");
			break;
		case DT_P_KPROBE:
		case DT_P_KRETPROBE:
			if (have_kprobes)
				list_tracefs(&l, name, "available_filter_functions");
			else if (explicit_p == p)
				fprintf(err, "dwarftrace: -l: this kernel has no kprobes "
					"(it was built without CONFIG_KPROBES)\n");
			else if (!no_warnings)
				/* As bpftrace warns when it cannot read the kernel's functions: a
				 * search that would list kprobes says why there are none. */
				fprintf(err, "dwarftrace: warning: -l: no kprobes listed: this kernel "
					"has none (it was built without CONFIG_KPROBES)\n");
			break;
		case DT_P_SOFTWARE:
		case DT_P_HARDWARE:
			list_perf_events(&l, p);
			break;
		case DT_P_INTERVAL:
		case DT_P_PROFILE:
			list_timers(&l, p);
			break;
		case DT_P_UPROBE:
		case DT_P_URETPROBE:
		case DT_P_XPROBE:
			list_user(&l, name);
			break;
		case DT_P_USDT:
			list_usdt(&l, explicit_p == p);
			break;
		case DT_P_RAWTRACEPOINT:
		case DT_P_FENTRY:
		case DT_P_FEXIT:
		case DT_P_ITER:
			list_btf(&l, p);
			break;
		default:
			break;
		}
		flush(&l, p);
	}
	free(l.lines.v);
	free(l.warned);
	free(type);
	return 0;
}

/* A search is one or more, split at commas, each with its spaces collapsed ("struct file, fd*"
 * is "struct file" and "fd*"). */
int dt_list_probes(const char *search, int pid, bool verbose, bool no_warnings, FILE *out,
		   FILE *err)
{
	char *copy = xstrdup(search ? search : ""), *save = NULL;
	int rc = 0;

	/* bpftrace's warning, in its words: -l FILE lists the probes of a program file, and this
	 * is none. */
	if (search && strchr(search, '.') && !strpbrk(search, ":*") && !no_warnings)
		fprintf(err, "WARNING: It appears that '%s' is a filename but the file "
			"does not exist. Treating '%s' as a search pattern.\n", search, search);
	if (!*copy)
		rc = list_one(NULL, pid, verbose, no_warnings, out, err);
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *o = w;
		int r;

		for (const char *c = w; *c; c++)
			if (!isspace((unsigned char)*c))
				*o++ = *c;
			else if (o > w && o[-1] != ' ')
				*o++ = ' ';
		if (o > w && o[-1] == ' ')
			o--;
		*o = 0;
		if (!strncmp(w, "struct ", 7) || !strncmp(w, "union ", 6) || !strncmp(w, "enum ", 5)) {
			struct lister l = { .verbose = verbose, .out = out, .err = err };

			r = list_types(&l, w);
		} else {
			r = list_one(w, pid, verbose, no_warnings, out, err);
		}
		rc = rc ? rc : r;
	}
	free(copy);
	return rc;
}

/* The search that lists what one attach point of a program names: bpftrace's `-l -e PROGRAM`
 * and `-l FILE`. NULL for BEGIN, END and the probes that name nothing to list. */
static char *attach_search(const dt_attach *a)
{
	static const char *const units[] = { [DT_UNIT_S] = "s", [DT_UNIT_MS] = "ms",
					     [DT_UNIT_US] = "us", [DT_UNIT_HZ] = "hz" };
	const char *colon = a->text ? strchr(a->text, ':') : NULL;
	const dt_perf_event *ev;

	switch (a->provider) {
	case DT_P_INTERVAL:
	case DT_P_PROFILE:
		return a->unit == DT_UNIT_NONE ? NULL : xasprintf("%s:%s:",
			dt_provider_name(a->provider), units[a->unit]);
	case DT_P_SOFTWARE:
	case DT_P_HARDWARE:
		ev = a->target ? dt_perf_event_find(a->provider, a->target) : NULL;
		return xasprintf("%s:%s:", dt_provider_name(a->provider),
				 ev ? ev->name : a->target ? a->target : "*");
	case DT_P_BEGIN:
	case DT_P_END:
	case DT_P_SELF:
	case DT_P_TEST:
	case DT_P_BENCH:
		return NULL;
	default:
		return colon ? xasprintf("%s%s", dt_provider_name(a->provider), colon) : NULL;
	}
}

int dt_list_program(const dt_source *src, int pid, bool verbose, bool no_warnings, FILE *out,
		    FILE *err)
{
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(src);
	dt_program *p = dt_parse(a, src, d);
	int rc = 0;

	if (dt_diags_error_count(d)) {
		dt_diags_print(d, err, isatty(fileno(err)));
		rc = -EINVAL;
	}
	for (uint32_t i = 0; !rc && i < p->nprobes; i++) {
		for (uint32_t j = 0; j < p->probes[i]->nattach; j++) {
			char *search = attach_search(p->probes[i]->attach[j]);

			if (search) {
				int r = list_one(search, pid, verbose, no_warnings, out, err);

				rc = rc ? rc : r;
			}
			free(search);
		}
	}
	dt_diags_free(d);
	dt_arena_free(a);
	return rc;
}

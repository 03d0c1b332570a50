/* attach.c — connects loaded BPF programs to events, one function per provider, and resolves what
 * attach points name: uprobe targets (paths, library names through the pid's mappings, the
 * ld.so cache and the standard directories), symbols to file offsets (elfproc: .symtab, then
 * .dynsym, vaddr -> offset through PT_LOAD), tracepoint ids (tracefs, mounted on demand), and
 * wildcards. Every attachment is a perf event with the program bound by PERF_EVENT_IOC_SET_BPF, so
 * closing the fd detaches it. Failures are one sentence that names the attach point and says what
 * to do; the session turns it into a file:line:col diagnostic. Nothing here scans tracefs, kallsyms
 * or ELF files unless an attach point needs it: startup cost matters. */
#include "runtime/session_internal.h"
#include "elfproc/elfproc.h"
#include "symbols/symbols.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TRACEFS_MAGIC_ 0x74726163

int dt_rt_fail(char **err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		abort();
	va_end(ap);
	return rc;
}

/* ---------------------------------------------------------------- small system helpers */

int dt_rt_online_cpus(int **cpus)
{
	char *text = NULL, *p;
	DT_VEC(int) v = {0};
	int rc = dt_read_file("/sys/devices/system/cpu/online", &text, NULL);

	if (rc < 0)
		return rc;
	for (p = text; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b; c++)
			DT_VEC_PUSH(&v, (int)c);
		p = *end == ',' ? end + 1 : end;
	}
	free(text);
	if (!v.n) {
		free(v.v);
		return -ENOENT;
	}
	*cpus = v.v;
	return (int)v.n;
}

static bool is_tracefs(const char *dir)
{
	struct statfs st;
	char probe[PATH_MAX];

	if (statfs(dir, &st) < 0)
		return false;
	if ((unsigned long)st.f_type == TRACEFS_MAGIC_)
		return true;
	/* debugfs's tracing dir is tracefs automounted; accept anything that has events/. */
	snprintf(probe, sizeof(probe), "%s/events", dir);
	return access(probe, F_OK) == 0;
}

const char *dt_rt_tracefs(void)
{
	static const char *root;
	static bool tried;

	if (tried)
		return root;
	tried = true;
	if (is_tracefs("/sys/kernel/tracing"))
		root = "/sys/kernel/tracing";
	else if (is_tracefs("/sys/kernel/debug/tracing"))
		root = "/sys/kernel/debug/tracing";
	else if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
		 is_tracefs("/sys/kernel/tracing"))
		root = "/sys/kernel/tracing";
	return root;
}

static int perf_open(struct perf_event_attr *attr, int pid, int cpu)
{
	int fd = (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Binds the program and enables the event; the fd is closed on failure. */
static int perf_bind(int pfd, int prog_fd)
{
	int rc = 0;

	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0 ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		rc = -errno;
		close(pfd);
	}
	return rc;
}

static void close_from(dt_fdvec *fds, size_t n0)
{
	while (fds->n > n0)
		close(fds->v[--fds->n]);
}

/* Opens one perf event per CPU in `cpus` (or the single cpu when ncpus is 0 and cpu0 given). */
static int perf_attach_cpus(struct perf_event_attr *attr, int pid, const int *cpus, int ncpus,
			    int prog_fd, dt_fdvec *fds)
{
	size_t n0 = fds->n;

	for (int i = 0; i < ncpus; i++) {
		int pfd = perf_open(attr, pid, cpus[i]), rc;

		if (pfd < 0) {
			close_from(fds, n0);
			return pfd;
		}
		rc = perf_bind(pfd, prog_fd);
		if (rc < 0) {
			close_from(fds, n0);
			return rc;
		}
		DT_VEC_PUSH(fds, pfd);
	}
	return 0;
}

static int read_pmu_type(const char *pmu, int *type)
{
	char path[128], *text = NULL;
	int rc;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	rc = dt_read_file(path, &text, NULL);
	if (rc < 0)
		return rc;
	*type = atoi(text);
	free(text);
	return 0;
}

/* The config bit a PMU's format file assigns to `retprobe` ("config:0"). */
static int read_retprobe_bit(const char *pmu, int *bit)
{
	char path[160], *text = NULL;
	int rc;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/retprobe", pmu);
	rc = dt_read_file(path, &text, NULL);
	if (rc < 0)
		return rc;
	if (sscanf(text, "config:%d", bit) != 1)
		rc = -EINVAL;
	free(text);
	return rc;
}

/* ---------------------------------------------------------------- interval, profile, sw, hw */

static int attach_timer(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	int *cpus = NULL, ncpus, rc, cpu0 = 0;

	if (!a->rate && !a->period_ns)
		return dt_rt_fail(err, -EINVAL, "%s: the rate must be a positive number", a->text);
	if (a->unit == DT_UNIT_HZ || (!a->period_ns && a->unit == DT_UNIT_NONE)) {
		if (a->provider == DT_P_PROFILE) {
			/* A frequency lets the kernel spread samples; bpftrace does the same. */
			attr.freq = 1;
			attr.sample_freq = a->rate;
		} else {
			attr.sample_period = 1000000000ull / a->rate;
		}
	} else {
		attr.sample_period = a->period_ns;
	}
	if (!attr.freq && !attr.sample_period)
		return dt_rt_fail(err, -EINVAL, "%s: the rate is too high (more than 1e9 per second)",
			    a->text);
	if (a->provider == DT_P_INTERVAL) {
		cpus = &cpu0;
		ncpus = 1;
	} else {
		ncpus = dt_rt_online_cpus(&cpus);
		if (ncpus < 0)
			return dt_rt_fail(err, ncpus, "%s: cannot read the list of online CPUs: %s",
				    a->text, dt_strerror(-ncpus));
	}
	rc = perf_attach_cpus(&attr, -1, cpus, ncpus, prog_fd, fds);
	if (cpus != &cpu0)
		free(cpus);
	if (rc == -EINVAL && attr.freq) {
		char *max = NULL;

		dt_read_file("/proc/sys/kernel/perf_event_max_sample_rate", &max, NULL);
		rc = dt_rt_fail(err, rc, "%s: %" PRIu64 " Hz is above the kernel's limit of %ld samples "
			  "per second (sysctl kernel.perf_event_max_sample_rate); use a lower rate",
			  a->text, (uint64_t)attr.sample_freq, max ? atol(max) : 0L);
		free(max);
		return rc;
	}
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot open a cpu-clock perf event: %s", a->text,
			    dt_strerror(-rc));
	return 0;
}

static int no_pmu(const dt_attach *a, int rc, char **err)
{
	return dt_rt_fail(err, rc, "%s: this machine has no hardware performance counters (virtual "
		    "machines often don't); use profile:hz:N or software:cpu-clock instead",
		    a->text);
}

static int attach_perf_counter(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	bool hw = a->provider == DT_P_HARDWARE;
	const dt_perf_event *ev = dt_perf_event_find(a->provider, a->target);
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	int *cpus = NULL, ncpus, rc;

	if (!ev)
		return dt_rt_fail(err, -EINVAL, "%s: unknown %s event '%s'; see -h for the list", a->text,
			    hw ? "hardware" : "software", a->target ? a->target : "");
	attr.type = ev->type;
	attr.config = ev->config;
	attr.sample_period = a->rate ? a->rate : ev->default_period;
	ncpus = dt_rt_online_cpus(&cpus);
	if (ncpus < 0)
		return dt_rt_fail(err, ncpus, "%s: cannot read the list of online CPUs: %s", a->text,
			    dt_strerror(-ncpus));
	rc = perf_attach_cpus(&attr, -1, cpus, ncpus, prog_fd, fds);
	free(cpus);
	if (rc >= 0)
		return 0;
	if (hw && (rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV || rc == -EINVAL))
		return no_pmu(a, rc, err);
	return dt_rt_fail(err, rc, "%s: cannot open the perf event: %s", a->text, dt_strerror(-rc));
}

/* ---------------------------------------------------------------- uprobes: targets and symbols */

static bool has_slash(const char *s)
{
	return strchr(s, '/') != NULL;
}

/* Does library file name `base` ("libc.so.6") match what the user wrote ("libc", "libc.so.6")? */
static bool lib_matches(const char *base, const char *want)
{
	size_t n = strlen(want);

	if (!strcmp(base, want))
		return true;
	if (strncmp(base, want, n))
		return false;
	/* "libc" matches "libc.so.6" and "libc-2.36.so" but not "libcap.so.2". */
	return !strncmp(base + n, ".so", 3) || base[n] == '-';
}

static int search_pid_maps(int pid, const char *want, char **path)
{
	dt_proc_mappings maps;
	int rc = dt_proc_mappings_read(pid, &maps);

	if (rc < 0)
		return rc == -ESRCH ? -ENOENT : rc;
	rc = -ENOENT;
	for (size_t i = 0; i < maps.n && rc; i++) {
		const char *p = maps.v[i].path;

		if (p[0] != '/' || !lib_matches(strrchr(p, '/') + 1, want))
			continue;
		/* Through the process's root, so containers resolve to the right file. */
		*path = xasprintf("/proc/%d/root%s", pid, p);
		rc = 0;
	}
	dt_proc_mappings_free(&maps);
	return rc;
}

/* /etc/ld.so.cache, glibc's "new" format ("glibc-ld.so.cache1.1"): a header, nlibs entries of
 * {i32 flags, u32 key, u32 value, u32 osversion, u64 hwcap}, and strings addressed from the start
 * of the header. Only x86-64 libc6 entries count (flags 0x0303). */
static int search_ld_cache(const char *want, char **path)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	char *data = NULL;
	size_t len = 0, hdr = strlen(magic) + 4 + 4 + 1 + 3 + 4 + 12, ent = 24;
	uint32_t nlibs;
	int rc = dt_read_file("/etc/ld.so.cache", &data, &len);

	if (rc < 0)
		return rc;
	rc = -ENOENT;
	if (len < hdr || memcmp(data, magic, strlen(magic)))
		goto out;
	memcpy(&nlibs, data + strlen(magic), 4);
	if (nlibs > (len - hdr) / ent)
		goto out;
	for (uint32_t i = 0; i < nlibs; i++) {
		const char *e = data + hdr + (size_t)i * ent;
		int32_t flags;
		uint32_t key, value;

		memcpy(&flags, e, 4);
		memcpy(&key, e + 4, 4);
		memcpy(&value, e + 8, 4);
		if (key >= len || value >= len || (flags & 0xffff) != 0x0303)
			continue;
		if (!memchr(data + key, 0, len - key) || !memchr(data + value, 0, len - value))
			continue;
		if (lib_matches(data + key, want) && access(data + value, R_OK) == 0) {
			*path = xstrdup(data + value);
			rc = 0;
			break;
		}
	}
out:
	free(data);
	return rc;
}

static int search_lib_dirs(const char *want, char **path)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
					    "/usr/local/lib" };
	char buf[PATH_MAX];

	for (size_t i = 0; i < DT_ARRAY_SIZE(dirs); i++) {
		/* Exact name first, then NAME.so, then NAME.so.* by scanning the directory. */
		snprintf(buf, sizeof(buf), "%s/%s", dirs[i], want);
		if (access(buf, R_OK) == 0 && strstr(want, ".so")) {
			*path = xstrdup(buf);
			return 0;
		}
		snprintf(buf, sizeof(buf), "%s/%s.so", dirs[i], want);
		if (access(buf, R_OK) == 0) {
			*path = xstrdup(buf);
			return 0;
		}
	}
	for (size_t i = 0; i < DT_ARRAY_SIZE(dirs); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		char *best = NULL;

		while (d && (de = readdir(d))) {
			/* The shortest match is the soname: "libfoo.so.1", not "libfoo.so.1.2". */
			if (lib_matches(de->d_name, want) && strstr(de->d_name, ".so") &&
			    (!best || strlen(de->d_name) < strlen(best))) {
				free(best);
				best = xstrdup(de->d_name);
			}
		}
		if (d)
			closedir(d);
		if (best) {
			*path = xasprintf("%s/%s", dirs[i], best);
			free(best);
			return 0;
		}
	}
	return -ENOENT;
}

static int placeholder_cb(void *ctx, const dt_elf_sym *sym)
{
	size_t *real = ctx;

	if ((sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC) && sym->value &&
	    !strstr(sym->name, "_version_placeholder"))
		(*real)++;
	return *real ? 1 : 0;
}

/* Since glibc 2.34, libpthread, libdl, librt, libutil and libanl are empty stubs kept for old
 * links (their only functions are __libX_version_placeholder): the code is in libc. */
static bool is_glibc_stub(const char *path)
{
	dt_elf *e = dt_elf_open(NULL, path);
	size_t real = 0;

	if (!e)
		return false;
	dt_elf_sym_each(e, placeholder_cb, &real);
	dt_elf_put(e);
	return real == 0;
}

static int resolve_name(const char *target, int pid, char **path);

int dt_rt_resolve_binary(const char *target, int pid, char **path)
{
	int rc;

	if (!target || !*target)
		return -ENOENT;
	if (has_slash(target)) {
		if (access(target, R_OK) < 0) {
			/* -p's process may live in another mount namespace: its path, as it sees it. */
			int err = errno;
			char *inner = target[0] == '/' && pid > 0 ?
					      xasprintf("/proc/%d/root%s", pid, target) : NULL;

			if (!inner || access(inner, R_OK) < 0) {
				free(inner);
				return -err;
			}
			*path = inner;
			return 0;
		}
		*path = xstrdup(target);
		return 0;
	}
	rc = resolve_name(target, pid, path);
	/* A name that finds a glibc stub means the functions now in libc, as a script written
	 * for older glibc (`uprobe:libpthread:pthread_create`) intends. */
	if (rc == 0 && is_glibc_stub(*path)) {
		char *libc = NULL;

		if (resolve_name("libc", pid, &libc) == 0) {
			free(*path);
			*path = libc;
		}
	}
	return rc;
}

/* A library or program name (no '/') to a path: -p's process first, then ld.so's cache and
 * library directories (with and without "lib"), then PATH. */
static int resolve_name(const char *target, int pid, char **path)
{
	char *name = NULL;

	/* "lib" prefix is optional in bpftrace-style scripts ("c" is not a thing, but "pthread"
	 * and "libpthread" both appear); try the name as written first. */
	if (pid > 0 && search_pid_maps(pid, target, path) == 0)
		return 0;
	if (search_ld_cache(target, path) == 0 || search_lib_dirs(target, path) == 0)
		return 0;
	if (strncmp(target, "lib", 3)) {
		int rc;

		name = xasprintf("lib%s", target);
		rc = resolve_name(name, pid, path);
		free(name);
		if (rc == 0)
			return 0;
	}
	/* A program on PATH ("bash"), as bpftrace accepts. */
	{
		const char *p = getenv("PATH");
		char buf[PATH_MAX];

		while (p && *p) {
			const char *c = strchr(p, ':');
			size_t n = c ? (size_t)(c - p) : strlen(p);

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, target);
			if (n && access(buf, X_OK) == 0) {
				*path = xstrdup(buf);
				return 0;
			}
			p = c ? c + 1 : NULL;
		}
	}
	return -ENOENT;
}

/* func+OFF must start an instruction: a breakpoint inside one changes what it does in every
 * process that runs the function (dt_cg_insn_boundary). Decoded from the function's bytes in the
 * file; 0 or -EINVAL with the reason in *err. */
static int check_insn_start(dt_elf *e, const char *sym, const dt_elf_sym *f, uint64_t off,
			    char **err)
{
	size_t size = 0;
	const uint8_t *img = (const uint8_t *)elf_rawfile(dt_elf_handle(e), &size);
	uint64_t foff, len = f->size ? f->size : off + 16;
	int rc;

	if (!img || dt_elf_vaddr_to_offset(e, f->value, &foff) < 0 || foff >= size)
		return dt_rt_fail(err, -EINVAL, "cannot read the code of %s to check that offset "
				  "%#" PRIx64 " starts an instruction", sym, off);
	rc = dt_cg_insn_boundary(img + foff, (size_t)DT_MIN(len, size - foff), off);
	if (rc == 1)
		return 0;
	if (rc == 0)
		return dt_rt_fail(err, -EINVAL, "offset %#" PRIx64 " of %s is inside an instruction: "
				  "a uprobe there would corrupt it in every process that runs %s "
				  "(see `objdump -d` for where instructions start)", off, sym, sym);
	return dt_rt_fail(err, -EINVAL, "cannot decode %s's instructions up to offset %#" PRIx64
			  ", so a uprobe there may corrupt it: %s", sym, off, dt_strerror(-rc));
}

/* The function whose code holds vaddr, for uprobe:BIN:ADDRESS. */
struct containing {
	uint64_t vaddr;
	dt_elf_sym found;
	bool any;
};

static int containing_cb(void *ctx, const dt_elf_sym *sym)
{
	struct containing *c = ctx;

	if ((sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC) && sym->size &&
	    c->vaddr >= sym->value && c->vaddr - sym->value < sym->size) {
		c->found = *sym;
		c->any = true;
		return 1;
	}
	return 0;
}

int dt_rt_uprobe_line(void *ctx, const dt_attach *a, char **func, uint64_t *off, char **why)
{
	const struct dt_rt_expand_ctx *x = ctx;
	struct containing c = { .vaddr = 0 };
	char *path = NULL;
	dt_elf_sym f;
	dt_elf *e;
	int rc = dt_rt_resolve_binary(a->target, x ? x->pid : -1, &path);

	*why = NULL;
	if (rc < 0)
		return dt_rt_fail(why, rc, "cannot find '%s': %s", a->target, dt_strerror(-rc));
	rc = dt_sym_line_addr(path, a->src_file, a->src_line, a->src_col, &c.vaddr, why);
	e = rc < 0 ? NULL : dt_elf_open(NULL, path);
	free(path);
	if (rc < 0)
		return rc;
	if (e)
		dt_elf_sym_each(e, containing_cb, &c);
	/* FUNC+OFF only when the name finds that function again (a versioned or duplicated
	 * name would not). */
	if (c.any && dt_elf_sym_find(e, c.found.name, &f) == 0 && f.value == c.found.value) {
		*func = xstrdup(c.found.name);
		*off = c.vaddr - c.found.value;
	} else {
		*func = xasprintf("%#" PRIx64, c.vaddr);
		*off = 0;
	}
	dt_elf_put(e);
	return 0;
}

struct fn_names {
	DT_VEC(const char *) v;
};

static int fn_name_cb(void *ctx, const dt_elf_sym *sym)
{
	struct fn_names *n = ctx;

	if (sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC)
		DT_VEC_PUSH(&n->v, sym->name);
	return 0;
}

/* "no function 'FUNC' in BIN", with the function of BIN closest to the name when one is near
 * enough to be a typo (lang's "did you mean", as for builtins and tracepoints), else (with
 * `how`) how to list them. The names live while e is referenced. */
static char *no_function(dt_elf *e, const char *sym, const char *path, bool how)
{
	struct fn_names n = { 0 };
	const char *best;
	char *msg;

	dt_elf_sym_each(e, fn_name_cb, &n);
	DT_VEC_PUSH(&n.v, NULL);
	best = dt_closest(sym, strlen(sym), n.v.v);
	if (best)
		msg = xasprintf("no function '%s' in %s; did you mean '%s'?", sym, path, best);
	else if (how)
		msg = xasprintf("no function '%s' in %s (check the name with `nm -D %s` or `nm %s`)",
				sym, path, path, path);
	else
		msg = xasprintf("no function '%s' in %s", sym, path);
	free(n.v.v);
	return msg;
}

struct sym_by_name {
	const char *name;
	dt_elf_sym found;
	bool any;
};

static int sym_by_name_cb(void *ctx, const dt_elf_sym *sym)
{
	struct sym_by_name *s = ctx;

	if (strcmp(sym->name, s->name))
		return 0;
	s->found = *sym;
	s->any = true;
	return 1;
}

int dt_rt_usym_addr(void *ctx, const char *target, const char *name, uint64_t *addr,
		    uint64_t *size, bool *biased)
{
	const struct dt_rt_expand_ctx *x = ctx;
	struct sym_by_name s = { .name = name };
	char *path = NULL;
	size_t nseg;
	int rc = dt_rt_resolve_binary(target, x ? x->pid : -1, &path);

	if (rc < 0)
		return rc;
	dt_elf *e = dt_elf_open(NULL, path);
	free(path);
	if (!e)
		return -errno;
	dt_elf_sym_each(e, sym_by_name_cb, &s);
	const dt_elf_seg *seg = dt_elf_segments(e, &nseg);
	/* Linked at 0 (a PIE, a shared library): the kernel picks where it goes. */
	*biased = nseg && seg[0].vaddr == 0;
	dt_elf_put(e);
	if (!s.any)
		return -ENOENT;
	*addr = s.found.value;
	*size = s.found.size;
	return 0;
}

int dt_rt_resolve_symbol(const char *path, const char *sym, uint64_t off, bool unsafe,
			 uint64_t *file_off, char **err)
{
	dt_elf *e = dt_elf_open(NULL, path);
	/* -EPERM is DT_RT_REFUSED's alone. */
	int open_err = errno == EPERM ? EACCES : errno;
	dt_elf_sym f;
	uint64_t vaddr;
	int rc = 0;
	char *end;
	bool is_addr;

	errno = 0;
	vaddr = strtoull(sym, &end, 0);
	is_addr = isdigit((unsigned char)sym[0]) && !*end && !errno;
	if (!e && open_err == ENOEXEC && is_addr && unsafe) {
		/* Not ELF (a flat binary): the address is where in the file, as bpftrace has it. */
		*file_off = vaddr + off;
		return 0;
	}
	if (!e && open_err == ENOEXEC && is_addr)
		return dt_rt_fail(err, -ENOEXEC, "%s: %s: an address in a file that is not ELF is "
				  "its file offset, unchecked: that needs --unsafe", path,
				  dt_elf_strerror(ENOEXEC));
	if (!e)
		return dt_rt_fail(err, -open_err, "%s: %s", path, dt_elf_strerror(open_err));
	if (is_addr) {
		/* uprobe:bin:0x401000 — an address, not a symbol: inside a known function, it must
		 * start one of its instructions (outside any, there is nothing to check it by). */
		struct containing c = { .vaddr = vaddr + off };

		dt_elf_sym_each(e, containing_cb, &c);
		if (c.any && c.vaddr != c.found.value &&
		    (rc = check_insn_start(e, c.found.name, &c.found, c.vaddr - c.found.value,
					   err)) < 0)
			goto out;
	} else {
		if (dt_elf_sym_find(e, sym, &f) < 0) {
			char *msg = no_function(e, sym, path, true);

			rc = dt_rt_fail(err, -ENOENT, "%s", msg);
			free(msg);
			goto out;
		}
		if (!f.size && !off && !unsafe) {
			/* Where its instructions end is unknown, so nothing says one starts there
			 * (a label, data): bpftrace's refusal, in its words. */
			rc = dt_rt_fail(err, DT_RT_REFUSED, "Could not determine boundary for "
					"%s (symbol has size 0).\nUse --unsafe to force attachment. "
					"WARNING: This option could lead to data corruption in the "
					"target process.", sym);
			goto out;
		}
		if (off && off >= f.size) {
			/* bpftrace's words (scripts around it look for them). */
			rc = dt_rt_fail(err, -ERANGE, "Offset outside the function bounds ('%s' "
				  "size is %" PRIu64 ")", sym, f.size);
			goto out;
		}
		if (off && (rc = check_insn_start(e, sym, &f, off, err)) < 0)
			goto out;
		vaddr = f.value;
	}
	rc = dt_elf_vaddr_to_offset(e, vaddr + off, file_off);
	if (rc < 0)
		/* bpftrace's sentence, on its own line (DT_RT_REFUSED), then why. */
		rc = dt_rt_fail(err, DT_RT_REFUSED, "Could not resolve address: %s:%#" PRIx64
				"\nHINT: no executable segment of %s holds it", path, vaddr + off, path);
out:
	dt_elf_put(e);
	return rc;
}

struct find_syms {
	const char **want; /* sorted */
	uint32_t n;
	dt_elf_sym *sym;   /* by position in want */
	bool *found;
};

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* dt_elf_sym_find for many names at once: a binary search per symbol instead of a scan per
 * name. */
static int find_syms_cb(void *ctx, const dt_elf_sym *sym)
{
	struct find_syms *f = ctx;
	char base[256];
	const char *name = sym->name, *at = strchr(name, '@'), *key = base, **hit;

	if (sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC && sym->type != STT_NOTYPE)
		return 0;
	if (!at || (size_t)(at - name) >= sizeof(base))
		key = name;
	else
		snprintf(base, sizeof(base), "%.*s", (int)(at - name), name);
	hit = bsearch(&key, f->want, f->n, sizeof(*f->want), cmp_cstr);
	if (hit && !f->found[hit - f->want]) {
		f->found[hit - f->want] = true;
		f->sym[hit - f->want] = *sym;
	}
	return 0;
}

int dt_rt_resolve_symbols(const char *path, const char *const *syms, uint32_t n,
			  uint64_t *file_off, uint64_t *size, char **why)
{
	struct find_syms f = { .n = 0 };
	dt_elf *e = dt_elf_open(NULL, path);

	if (!e)
		return -errno;
	f.want = xcalloc(n + 1, sizeof(*f.want));
	f.sym = xcalloc(n + 1, sizeof(*f.sym));
	f.found = xcalloc(n + 1, sizeof(*f.found));
	for (uint32_t i = 0; i < n; i++)
		f.want[i] = syms[i];
	qsort(f.want, n, sizeof(*f.want), cmp_cstr);
	f.n = n;
	dt_elf_sym_each(e, find_syms_cb, &f);
	for (uint32_t i = 0; i < n; i++) {
		const char **hit = bsearch(&syms[i], f.want, n, sizeof(*f.want), cmp_cstr);
		size_t k = (size_t)(hit - f.want);
		char *end;

		why[i] = NULL;
		errno = 0;
		if (isdigit((unsigned char)syms[i][0]) && (strtoull(syms[i], &end, 0), !*end) &&
		    !errno) {
			/* An address, not a symbol: the one-at-a-time path says what it is. */
			if (dt_rt_resolve_symbol(path, syms[i], 0, false, &file_off[i], &why[i]) < 0 &&
			    !why[i])
				why[i] = xstrdup("cannot be resolved");
			continue;
		}
		if (!f.found[k]) {
			why[i] = no_function(e, syms[i], path, false);
			continue;
		}
		if (dt_elf_vaddr_to_offset(e, f.sym[k].value, &file_off[i]) < 0)
			why[i] = xasprintf("the address of %s is in no executable segment of %s",
					   syms[i], path);
		if (size)
			size[i] = f.sym[k].size;
	}
	dt_elf_put(e);
	free(f.want);
	free(f.sym);
	free(f.found);
	return 0;
}

/* Target path and file offset of a uprobe attach point; *path is malloc'd on success. */
static int uprobe_resolve(const dt_attach *a, int pid, char **path, uint64_t *off, char **err)
{
	char *why = NULL;
	int rc = dt_rt_resolve_binary(a->target, pid, path);

	if (rc == DT_RT_REFUSED)
		rc = -EACCES; /* that code is the refusal's alone */
	if (rc < 0 && a->target && has_slash(a->target))
		return dt_rt_fail(err, rc, "%s: cannot read %s: %s", a->text, a->target, dt_strerror(-rc));
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot find '%s' (give a path, or a library name that "
			    "`ldconfig -p` lists)", a->text, a->target ? a->target : "");
	rc = dt_rt_resolve_symbol(*path, a->func ? a->func : "", a->offset, a->unsafe, off,
				  &why);
	if (rc == DT_RT_REFUSED) {
		*err = why;
		free(*path);
		*path = NULL;
	} else if (rc < 0) {
		rc = dt_rt_fail(err, rc, "%s: %s", a->text, why);
		free(why);
		free(*path);
		*path = NULL;
	}
	return rc;
}

int dt_rt_uprobe_open_at(const char *path, uint64_t off, int pid, bool ret)
{
	return dt_rt_uprobe_open_ref(path, off, 0, pid, ret);
}

/* The uprobe PMU takes the reference counter's file offset in config's upper 32 bits
 * (PERF_UPROBE_REF_CTR_OFFSET_SHIFT in the kernel's kernel/trace/trace_event_perf.c). */
#define UPROBE_REF_CTR_SHIFT 32

int dt_rt_uprobe_open_ref(const char *path, uint64_t off, uint64_t ref_ctr_off, int pid, bool ret)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	int type, bit = 0;

	if (read_pmu_type("uprobe", &type) < 0 || (ret && read_retprobe_bit("uprobe", &bit) < 0))
		return -EOPNOTSUPP;
	if (ref_ctr_off >> (64 - UPROBE_REF_CTR_SHIFT))
		return -E2BIG;
	attr.type = (uint32_t)type;
	attr.config = (ret ? 1ull << bit : 0) | ref_ctr_off << UPROBE_REF_CTR_SHIFT;
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = off;
	/* Trace events run their BPF program on every CPU, so one event (cpu 0) covers all. */
	return perf_open(&attr, pid > 0 ? pid : -1, pid > 0 ? -1 : 0);
}

int dt_rt_uprobe_open(const dt_attach *a, int pid, bool ret, char **err)
{
	char *path = NULL;
	uint64_t off = 0;
	int rc, pfd;

	*err = NULL;
	rc = uprobe_resolve(a, pid, &path, &off, err);
	if (rc < 0)
		return rc;
	pfd = dt_rt_uprobe_open_at(path, off, pid, ret);
	if (pfd == -EOPNOTSUPP)
		rc = dt_rt_fail(err, pfd, "%s: this kernel has no uprobe support (CONFIG_UPROBE_EVENTS is "
			  "not set)", a->text);
	else if (pfd == -ESRCH)
		rc = dt_rt_fail(err, pfd, "%s: process %d does not exist", a->text, pid);
	else if (pfd < 0)
		rc = dt_rt_fail(err, pfd, "%s: cannot create the uprobe at %s offset %#" PRIx64 ": %s",
			  a->text, path, off, dt_rt_attach_why(pfd));
	else
		rc = pfd;
	free(path);
	return rc;
}

int dt_rt_elf_entry(const char *path, uint64_t *entry)
{
	dt_elf *e = dt_elf_open(NULL, path);
	GElf_Ehdr eh;
	int rc = 0;

	if (!e)
		return -ENOEXEC;
	if (!gelf_getehdr(dt_elf_handle(e), &eh) || !eh.e_entry)
		rc = -ENOEXEC;
	else
		*entry = eh.e_entry;
	dt_elf_put(e);
	return rc;
}

static int attach_uprobe(const dt_attach *a, int prog_fd, int pid, dt_fdvec *fds, char **err)
{
	int rc, pfd = dt_rt_uprobe_open(a, pid, a->provider == DT_P_URETPROBE, err);

	if (pfd < 0)
		return pfd;
	rc = perf_bind(pfd, prog_fd);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot attach the program: %s", a->text, dt_strerror(-rc));
	DT_VEC_PUSH(fds, pfd);
	return 0;
}

/* ---------------------------------------------------------------- usdt */

/* USDT probes attach through the same uprobe perf events as uprobes, at each location's file
 * offset, with the semaphore's file offset as the uprobe's ref_ctr_offset: the kernel counts it
 * up in every process the uprobe is installed in (all of them, or -p's) for as long as the probe
 * is attached, and down after. libbpf's bpf_program__attach_usdt does the same underneath, but
 * it fetches arguments at run time in BPF C (usdt.bpf.h: a spec map indexed by cookie, read by
 * an interpreter linked into the program); codegen here reads each location's arguments with
 * code made from its note (cg_usdt_arg), so only the attach part would be libbpf's, and that is
 * this one call. */

/* The objects a usdt target names, each with the path to open and the name to show: a path or
 * library name (resolved as uprobes resolve it), a glob of paths, or — empty or "*" — every
 * executable file that -p's process maps (through its root: it may live in another mount
 * namespace), the -c command's program, or, with neither, that every process maps. */
typedef struct usdt_obj {
	char *path, *shown;
	dev_t dev;
	ino_t ino;
} usdt_obj;
typedef DT_VEC(usdt_obj) usdt_objvec;

/* Each file once, however many names or processes lead to it: a uprobe is on the file, and two
 * on one location would fire twice. */
static void objs_add(usdt_objvec *v, char *path, char *shown)
{
	struct stat st;
	bool have = stat(path, &st) == 0;

	for (size_t i = 0; i < v->n; i++) {
		if (have ? v->v[i].dev == st.st_dev && v->v[i].ino == st.st_ino
			 : !strcmp(v->v[i].path, path)) {
			free(path);
			free(shown);
			return;
		}
	}
	DT_VEC_PUSH(v, ((usdt_obj){ path, shown, have ? st.st_dev : 0, have ? st.st_ino : 0 }));
}

/* `all`: one of every process's, named by its path here when that is the same file. */
static void objs_of_pid(usdt_objvec *v, int pid, bool all)
{
	dt_proc_mappings m;

	if (dt_proc_mappings_read(pid, &m) < 0)
		return;
	for (size_t i = 0; i < m.n; i++) {
		const dt_proc_mapping *mp = &m.v[i];
		struct stat st;

		if (mp->perms[2] != 'x' || mp->path[0] != '/' || mp->deleted)
			continue;
		if (all && stat(mp->path, &st) == 0 && st.st_ino == mp->inode)
			objs_add(v, xstrdup(mp->path), xstrdup(mp->path));
		else
			objs_add(v, xasprintf("/proc/%d/root%s", pid, mp->path), xstrdup(mp->path));
	}
	dt_proc_mappings_free(&m);
}

struct needed {
	DT_VEC(char *) libs, dirs;
};

static int needed_cb(void *ctx, const char *name, bool runpath)
{
	struct needed *n = ctx;

	if (!runpath) {
		DT_VEC_PUSH(&n->libs, xstrdup(name));
		return 0;
	}
	for (const char *p = name; *p;) {
		size_t len = strcspn(p, ":");

		if (len)
			DT_VEC_PUSH(&n->dirs, xstrndup(p, len));
		p += len + (p[len] == ':');
	}
	return 0;
}

/* The -c program, which has not started yet, and the libraries it needs (DT_NEEDED through its
 * run paths, $ORIGIN its directory, then as uprobe targets resolve library names): what its
 * process will map, as far as the file says. */
static void objs_of_program(usdt_objvec *v, const char *path)
{
	struct needed n = { 0 };
	dt_elf *e = dt_elf_open(NULL, path);
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	objs_add(v, xstrdup(path), xstrdup(path));
	if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	if (e)
		dt_elf_needed_each(e, needed_cb, &n);
	for (size_t i = 0; i < n.libs.n; i++) {
		char *found = NULL;

		for (size_t k = 0; k < n.dirs.n && !found; k++) {
			const char *d = n.dirs.v[k];
			char *full = !strncmp(d, "$ORIGIN", 7) ?
					     xasprintf("%s%s/%s", dir, d + 7, n.libs.v[i]) :
					     xasprintf("%s/%s", d, n.libs.v[i]);

			if (access(full, R_OK) == 0)
				found = full;
			else
				free(full);
		}
		if (found || dt_rt_resolve_binary(n.libs.v[i], -1, &found) == 0)
			objs_add(v, found, xstrdup(found));
		free(n.libs.v[i]);
	}
	for (size_t k = 0; k < n.dirs.n; k++)
		free(n.dirs.v[k]);
	free(n.libs.v);
	free(n.dirs.v);
	free(dir);
	dt_elf_put(e);
}

static int usdt_objects(const char *target, int pid, const char *child_path, usdt_objvec *v,
			char **why)
{
	if (!target || !*target || !strcmp(target, "*")) {
		if (pid > 0) {
			if (kill(pid, 0) < 0 && errno == ESRCH)
				return dt_rt_fail(why, -ESRCH, "process %d does not exist", pid);
			objs_of_pid(v, pid, false);
		} else if (child_path) {
			objs_of_program(v, child_path);
		} else {
			DIR *d = opendir("/proc");
			struct dirent *de;

			while (d && (de = readdir(d)))
				if (isdigit((unsigned char)de->d_name[0]) && atoi(de->d_name) != getpid())
					objs_of_pid(v, atoi(de->d_name), true);
			if (d)
				closedir(d);
		}
		return 0;
	}
	if (strpbrk(target, "*?[")) {
		glob_t g;

		if (glob(target, 0, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++) {
				struct stat st;

				if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
					objs_add(v, xstrdup(g.gl_pathv[i]), xstrdup(g.gl_pathv[i]));
			}
			globfree(&g);
		}
		return 0;
	}
	char *path = NULL;
	int rc = dt_rt_resolve_binary(target, pid, &path);

	if (rc < 0 && has_slash(target))
		return dt_rt_fail(why, rc, "cannot read %s: %s", target, dt_strerror(-rc));
	if (rc < 0)
		return dt_rt_fail(why, rc, "cannot find '%s' (give a path, or a library name that "
				  "`ldconfig -p` lists)", target);
	objs_add(v, path, xstrdup(has_slash(target) ? target : path));
	return 0;
}

struct usdt_adapter {
	dt_rt_usdt_fn fn;
	void *ctx;
	const dt_rt_usdt_obj *o;
};

static int usdt_note_cb(void *ctx, const dt_elf_usdt *u)
{
	struct usdt_adapter *ad = ctx;

	return ad->fn(ad->ctx, ad->o, u);
}

int dt_rt_usdt_each(const char *target, int pid, const char *child_path, dt_rt_usdt_fn fn,
		    void *ctx, char **why)
{
	usdt_objvec v = { 0 };
	bool literal = target && *target && strcmp(target, "*") && !strpbrk(target, "*?[");
	int rc = usdt_objects(target, pid, child_path, &v, why);

	for (size_t i = 0; i < v.n && rc >= 0; i++) {
		dt_elf *e = dt_elf_open(NULL, v.v[i].path);
		dt_rt_usdt_obj o = { .path = v.v[i].path, .shown = v.v[i].shown, .elf = e };

		if (!e) {
			/* Only a binary named alone is an error: a glob or a process's mappings
			 * may take in files that are not ELF objects. */
			if (literal)
				rc = dt_rt_fail(why, -errno, "cannot read %s: %s", v.v[i].shown,
						dt_elf_strerror(errno));
			continue;
		}
		struct usdt_adapter ad = { fn, ctx, &o };

		rc = dt_elf_usdt_each(e, usdt_note_cb, &ad);
		dt_elf_put(e);
	}
	for (size_t i = 0; i < v.n; i++) {
		free(v.v[i].path);
		free(v.v[i].shown);
	}
	free(v.v);
	return rc;
}

struct usdt_match {
	const dt_attach *at;
	dt_arena *a;
	DT_VEC(dt_usdt_loc) locs;
};

struct sym_value {
	const char *name;
	uint64_t value;
	bool found;
};

static int sym_value_cb(void *ctx, const dt_elf_sym *sym)
{
	struct sym_value *sv = ctx;

	if (strcmp(sym->name, sv->name))
		return 0;
	sv->value = sym->value;
	sv->found = true;
	return 1;
}

/* A %rip-relative argument names a symbol: its address at run time is the location's (the
 * uprobe's ip) plus the distance between them in the object. */
static bool usdt_rebase(dt_elf *e, const dt_usdt_loc *l, dt_usdt_arg *arg)
{
	struct sym_value sv = { .name = arg->sym };

	dt_elf_sym_each(e, sym_value_cb, &sv);
	if (!sv.found)
		return false;
	arg->value += (int64_t)(sv.value - l->pc);
	return true;
}

static int usdt_match_cb(void *ctx, const dt_rt_usdt_obj *o, const dt_elf_usdt *u)
{
	struct usdt_match *m = ctx;
	const char *prov = m->at->usdt_provider;
	const char *bad = NULL;
	dt_usdt_loc l = { 0 };

	if ((prov && fnmatch(prov, u->provider, 0)) || fnmatch(m->at->func, u->name, 0))
		return 0;
	for (size_t i = 0; i < m->locs.n; i++)
		if (m->locs.v[i].offset == u->offset && !strcmp(m->locs.v[i].path, o->path))
			return 0; /* the same file twice (a glob and a link) */
	l.path = dt_arena_strndup(m->a, o->path, strlen(o->path));
	l.shown = dt_arena_strndup(m->a, o->shown, strlen(o->shown));
	l.provider = dt_arena_strndup(m->a, u->provider, strlen(u->provider));
	l.name = dt_arena_strndup(m->a, u->name, strlen(u->name));
	l.argspec = dt_arena_strndup(m->a, u->args, strlen(u->args));
	l.pc = u->pc;
	l.offset = u->offset;
	l.sema_offset = u->sema_offset;
	if (dt_usdt_args_parse(m->a, l.argspec, &l.args, &l.nargs, &bad) < 0) {
		/* Counted still, so that argN out of range says so; reading one is refused. */
		l.arg_error = dt_arena_strndup(m->a, bad, strcspn(bad, " \t"));
		l.nargs = 0;
		for (const char *p = l.argspec; *p;) {
			p += strspn(p, " \t");
			if (*p)
				l.nargs++;
			p += strcspn(p, " \t");
		}
	}
	for (uint32_t i = 0; i < l.nargs && !l.arg_error; i++)
		if (l.args[i].sym && !usdt_rebase(o->elf, &l, &l.args[i]))
			l.arg_error = l.args[i].sym;
	DT_VEC_PUSH(&m->locs, l);
	return 0;
}

/* Locations in bpftrace's order (its listing's: object, then "provider:name"), then by address,
 * so that a wildcard attaches in the order bpftrace would (attach.c's callers attach last first:
 * which location fires first while attaching is the same as with bpftrace). */
static int cmp_loc(const void *pa, const void *pb)
{
	const dt_usdt_loc *a = pa, *b = pb;
	int c = strcmp(a->shown, b->shown);
	char *x, *y;

	if (c)
		return c;
	x = xasprintf("%s:%s", a->provider, a->name);
	y = xasprintf("%s:%s", b->provider, b->name);
	c = strcmp(x, y);
	free(x);
	free(y);
	return c ? c : a->offset < b->offset ? -1 : a->offset > b->offset;
}

int dt_rt_usdt_locations(void *ctx, dt_arena *a, const dt_attach *at, dt_usdt_loc **locs,
			 uint32_t *n, char **why)
{
	const struct dt_rt_expand_ctx *c = ctx;
	struct usdt_match m = { .at = at, .a = a };
	int rc;

	*why = NULL;
	rc = dt_rt_usdt_each(at->target, c ? c->pid : -1, c ? c->child_path : NULL, usdt_match_cb,
			     &m, why);
	if (rc < 0) {
		if (*why) {
			char *w = xasprintf("%s: %s", at->text, *why);

			free(*why);
			*why = w;
		}
		free(m.locs.v);
		return rc;
	}
	qsort(m.locs.v, m.locs.n, sizeof(*m.locs.v), cmp_loc);
	*n = (uint32_t)m.locs.n;
	*locs = dt_arena_alloc(a, sizeof(dt_usdt_loc) * (m.locs.n ? m.locs.n : 1));
	if (m.locs.n)
		memcpy(*locs, m.locs.v, sizeof(dt_usdt_loc) * m.locs.n);
	free(m.locs.v);
	return 0;
}

static int attach_usdt(const dt_attach *a, int prog_fd, int pid, dt_fdvec *fds, char **err)
{
	const dt_usdt_loc *l = a->usdt;
	int pfd, rc;

	if (!l)
		return dt_rt_fail(err, -EINVAL, "%s: no location (internal error)", a->text);
	pfd = dt_rt_uprobe_open_ref(l->path, l->offset, l->sema_offset, pid, false);
	if (pfd == -EOPNOTSUPP)
		return dt_rt_fail(err, pfd, "%s: this kernel has no uprobe support "
				  "(CONFIG_UPROBE_EVENTS is not set)", a->text);
	if (pfd == -ESRCH)
		return dt_rt_fail(err, pfd, "%s: process %d does not exist", a->text, pid);
	if (pfd < 0)
		return dt_rt_fail(err, pfd, "%s: cannot create the uprobe at %s offset %#" PRIx64
				  "%s: %s", a->text, l->path, l->offset,
				  l->sema_offset ? " with its semaphore" : "",
				  dt_rt_attach_why(pfd));
	rc = perf_bind(pfd, prog_fd);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot attach the program: %s", a->text,
				  dt_strerror(-rc));
	DT_VEC_PUSH(fds, pfd);
	return 0;
}

/* ---------------------------------------------------------------- kprobes, tracepoints */

static int no_kprobes(const dt_attach *a, char **err)
{
	return dt_rt_fail(err, -EOPNOTSUPP, "%s: this kernel has no kprobe support (CONFIG_KPROBES is "
		    "not set); use a tracepoint (e.g. tracepoint:syscalls:sys_enter_openat) "
		    "instead", a->text);
}

/* The module a kprobe names, NULL for the kernel itself (none, "vmlinux", or a pattern, which
 * expansion resolved already). */
static const char *kprobe_module(const dt_attach *a)
{
	return a->target && strcmp(a->target, "vmlinux") && !strpbrk(a->target, "*?[") ? a->target
										      : NULL;
}

static int attach_kprobe(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	bool ret = a->provider == DT_P_KRETPROBE;
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	const char *mod = kprobe_module(a);
	char name[512];
	int type, bit = 0, pfd, rc;

	if (read_pmu_type("kprobe", &type) < 0 || (ret && read_retprobe_bit("kprobe", &bit) < 0))
		return no_kprobes(a, err);
	/* The kernel looks "MODULE:FUNC" up in that module's symbols. */
	snprintf(name, sizeof(name), "%s%s%s", mod ? mod : "", mod ? ":" : "", a->func ? a->func : "");
	attr.type = (uint32_t)type;
	attr.config = ret ? 1ull << bit : 0;
	/* kprobe:ADDR: no name, and config2 is the address (kprobe_addr, which shares the field
	 * with probe_offset). */
	attr.config1 = a->addr ? 0 : (uint64_t)(uintptr_t)name;
	attr.config2 = a->addr ? a->addr : a->offset;
	pfd = perf_open(&attr, -1, 0);
	if (pfd < 0 && a->addr)
		return dt_rt_fail(err, pfd, "%s: Unable to attach probe: the kernel refuses a "
				  "%s at %#" PRIx64 ": %s", a->text, dt_provider_name(a->provider),
				  a->addr, dt_strerror(-pfd));
	if (pfd < 0) {
		if (pfd == -EILSEQ) /* x86 decodes the function: func+OFF is inside an instruction */
			return dt_rt_fail(err, pfd, "%s: Possible attachment attempt in the middle of "
					  "an instruction, try a different offset.", a->text);
		if (pfd == -ENOENT || pfd == -EINVAL)
			return dt_rt_fail(err, pfd, "%s: no kernel function '%s' can be probed (see "
				    "/proc/kallsyms)", a->text, a->func ? a->func : "");
		return dt_rt_fail(err, pfd, "%s: cannot create the kprobe: %s", a->text, dt_strerror(-pfd));
	}
	rc = perf_bind(pfd, prog_fd);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot attach the program: %s", a->text, dt_strerror(-rc));
	DT_VEC_PUSH(fds, pfd);
	return 0;
}

int dt_rt_tracepoint_id(const dt_attach *a, uint64_t *id, char **err)
{
	const char *root = dt_rt_tracefs();
	char path[PATH_MAX], *text = NULL;
	int rc;

	if (!root)
		return dt_rt_fail(err, -ENOENT, "%s: tracefs is not mounted and cannot be mounted at "
			    "/sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing)",
			    a->text);
	if (!a->target || !a->func || strchr(a->target, '/') || strchr(a->func, '/'))
		return dt_rt_fail(err, -EINVAL, "%s: write tracepoints as tracepoint:SUBSYSTEM:EVENT",
			    a->text);
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, a->target, a->func);
	rc = dt_read_file(path, &text, NULL);
	if (rc == -ENOENT)
		return dt_rt_fail(err, rc, "%s: no such tracepoint (see %s/available_events)", a->text,
			    root);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot read %s: %s", a->text, path, dt_strerror(-rc));
	*id = strtoull(text, NULL, 10);
	free(text);
	return 0;
}

int dt_rt_tracepoint_open(uint64_t id)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1,
					.type = PERF_TYPE_TRACEPOINT, .config = id };

	return perf_open(&attr, -1, 0);
}

static int attach_tracepoint(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	uint64_t id = 0;
	int rc = dt_rt_tracepoint_id(a, &id, err), pfd;

	if (rc < 0)
		return rc;
	pfd = dt_rt_tracepoint_open(id);
	if (pfd < 0)
		return dt_rt_fail(err, pfd, "%s: cannot open the tracepoint: %s", a->text,
			    dt_strerror(-pfd));
	rc = perf_bind(pfd, prog_fd);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot attach the program: %s", a->text, dt_strerror(-rc));
	DT_VEC_PUSH(fds, pfd);
	return 0;
}

static int cmp_str(const void *a, const void *b);

/* Whether `name` (of module `mod`, "vmlinux" for the kernel; NULL: any) is in tracefs's
 * available_filter_functions, the functions a kprobe may take (read once, sorted: each as
 * "name" and "module:name"). Unreadable: true, and attaching will say. */
static bool kernel_function_known(const char *mod, const char *name)
{
	static DT_VEC(char *) fns;
	static bool read_once, readable;

	if (!read_once) {
		const char *root = dt_rt_tracefs();
		char path[PATH_MAX], line[512];
		FILE *f;

		read_once = true;
		snprintf(path, sizeof(path), "%s/available_filter_functions", root ? root : "");
		f = root ? fopen(path, "re") : NULL;
		if (f) {
			readable = true;
			while (fgets(line, sizeof(line), f)) {
				char *tag = strchr(line, '['), both[600];

				line[strcspn(line, " \t\n")] = 0; /* "name [module]" */
				if (tag)
					tag[strcspn(tag, "]\n")] = 0;
				snprintf(both, sizeof(both), "%s:%s", tag ? tag + 1 : "vmlinux",
					 line);
				DT_VEC_PUSH(&fns, xstrdup(line));
				DT_VEC_PUSH(&fns, xstrdup(both));
			}
			fclose(f);
			qsort(fns.v, fns.n, sizeof(*fns.v), cmp_str);
		}
	}
	char key[600];
	const char *k = key;

	snprintf(key, sizeof(key), "%s%s%s", mod ? mod : "", mod ? ":" : "", name);
	return !readable || bsearch(&k, fns.v, fns.n, sizeof(*fns.v), cmp_str);
}

/* Whether kernel module `mod` is loaded (/proc/modules); unreadable: true. */
static bool module_loaded(const char *mod)
{
	FILE *f = fopen("/proc/modules", "re");
	char line[512];
	bool found = false;
	size_t n = strlen(mod);

	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, mod, n) && line[n] == ' ';
	fclose(f);
	return found;
}

/* One pass over /proc/kallsyms: each symbol's address, type, name and module ("" for the
 * kernel's own) to `cb`, until it returns true. -errno when the file cannot be read, -EPERM
 * when every address is 0 (hidden: kptr_restrict), else 0. */
static int kallsyms_each(bool (*cb)(void *ctx, uint64_t a, char type, const char *sym,
				   const char *mod), void *ctx)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[600], sym[512], mod[128];
	uint64_t a;
	char type;
	bool any = false;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		mod[0] = 0;
		if (sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &a, &type, sym, mod) < 3)
			continue;
		any |= a != 0;
		if (cb(ctx, a, type, sym, mod))
			break;
	}
	fclose(f);
	return any ? 0 : -EPERM;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T';
}

struct ksym_find {
	const char *mod, *name; /* extent: the function sought */
	uint64_t addr;          /* at: the address sought */
	uint64_t at, next;      /* the function's start; the first symbol above it */
	char *found_name;
	size_t nn;
	bool found;
};

static bool find_by_name(void *ctx, uint64_t a, char type, const char *sym, const char *mod)
{
	struct ksym_find *k = ctx;

	if (is_text(type) && !strcmp(sym, k->name) && !strcmp(mod, k->mod)) {
		k->found = true;
		k->at = a;
	}
	return k->found;
}

static bool next_above(void *ctx, uint64_t a, char type, const char *sym, const char *mod)
{
	struct ksym_find *k = ctx;

	(void)type, (void)sym, (void)mod;
	if (a > k->at && a < k->next)
		k->next = a;
	return false;
}

/* Where kernel function `name` (of module `mod`, NULL: the kernel's) starts and how long it is,
 * from /proc/kallsyms: the next symbol's address bounds it. -ENOENT when it is not there,
 * -EPERM when the addresses are hidden (kptr_restrict). */
static int kernel_function_extent(const char *mod, const char *name, uint64_t *addr,
				  uint64_t *size)
{
	struct ksym_find k = { .mod = mod ? mod : "", .name = name, .next = UINT64_MAX };
	int rc = kallsyms_each(find_by_name, &k);

	if (rc < 0 && rc != -EPERM)
		return rc;
	if (!k.found)
		return -ENOENT;
	if (!k.at)
		return -EPERM;
	rc = kallsyms_each(next_above, &k);
	if (rc < 0)
		return rc;
	*addr = k.at;
	*size = k.next == UINT64_MAX ? 0 : k.next - k.at;
	return 0;
}

static bool find_by_addr(void *ctx, uint64_t a, char type, const char *sym, const char *mod)
{
	struct ksym_find *k = ctx;

	if (a <= k->addr && a >= k->at && is_text(type) && !*mod) {
		k->at = a;
		snprintf(k->found_name, k->nn, "%s", sym);
		k->found = true;
	} else if (a > k->addr && a < k->next) {
		k->next = a;
	}
	return false;
}

/* The kernel function (t/T symbol of the kernel itself, not a module) whose extent holds
 * `addr`, from /proc/kallsyms: its name, start and size. -ENOENT when none does, -EPERM when
 * the addresses are hidden (kptr_restrict). */
static int kernel_function_at(uint64_t addr, char *name, size_t nn, uint64_t *start,
			      uint64_t *size)
{
	struct ksym_find k = { .addr = addr, .next = UINT64_MAX, .found_name = name, .nn = nn };
	int rc = kallsyms_each(find_by_addr, &k);

	if (rc < 0)
		return rc;
	if (!k.found)
		return -ENOENT;
	*start = k.at;
	*size = k.next == UINT64_MAX ? 0 : k.next - k.at;
	return 0;
}

/* Up to `len` bytes of kernel text at `addr`, from /proc/kcore (an ELF core of the kernel's
 * memory). The bytes read, or -errno (no kcore: CONFIG_PROC_KCORE unset, or not root). */
static ssize_t read_kernel_text(uint64_t addr, uint8_t *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	ssize_t rc = -ENOENT;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_memsz)
			continue;
		len = (size_t)DT_MIN((uint64_t)len, ph.p_memsz - (addr - ph.p_vaddr));
		rc = pread(fd, buf, len, (off_t)(ph.p_offset + (addr - ph.p_vaddr)));
		if (rc < 0)
			rc = -errno;
		break;
	}
	close(fd);
	return rc;
}

/* Whether kprobe `a` at `func`+off, func's code at addr for size bytes (0: unknown), is at an
 * instruction's start, decoded from the live kernel text (dt_cg_insn_boundary). Where the text
 * cannot be read, the kernel's own check stands (x86 refuses with EILSEQ, see attach_kprobe). */
static int check_kprobe_insn(const dt_attach *a, const char *func, uint64_t addr, uint64_t size,
			     uint64_t off, char **err)
{
	uint8_t code[4096];
	ssize_t n = read_kernel_text(addr, code, (size_t)DT_MIN(size ? size : off + 16,
								   (uint64_t)sizeof(code)));

	if (n <= 0 || (uint64_t)n <= off || dt_cg_insn_boundary(code, (size_t)n, off) != 0)
		return 0;
	return dt_rt_fail(err, -EILSEQ, "%s: Could not add %s into middle of instruction: "
			  "%s+%" PRIu64 " (a kprobe there would corrupt it; offsets that start an "
			  "instruction are in `objdump -d` of the function)", a->text,
			  dt_provider_name(a->provider), func, off);
}

/* kprobe:F+OFF, bpftrace's checks: OFF inside F (else its words), and on an instruction's
 * start. */
static int check_kprobe_offset(const dt_attach *a, char **err)
{
	uint64_t addr = 0, size = 0;
	int rc = kernel_function_extent(kprobe_module(a), a->func, &addr, &size);

	if (rc == -ENOENT)
		return dt_rt_fail(err, rc, "%s: no kernel function '%s'%s%s (see /proc/kallsyms)",
				  a->text, a->func, kprobe_module(a) ? " in module " : "",
				  kprobe_module(a) ? kprobe_module(a) : "");
	if (rc < 0)
		return 0;
	if (size && a->offset >= size)
		return dt_rt_fail(err, -ERANGE, "%s: Offset outside the function bounds ('%s' size "
				  "is %" PRIu64 ")", a->text, a->func, size);
	return check_kprobe_insn(a, a->func, addr, size, a->offset, err);
}

/* kprobe:ADDR: when /proc/kallsyms shows addresses, the function that holds ADDR names it in
 * messages and bounds the instruction check (as kprobe:FUNC+OFF's); an address in no kernel
 * function is said now. Without addresses to see, the kernel's own refusal stands. */
static int check_kprobe_at_address(const dt_attach *a, char **err)
{
	char name[512];
	uint64_t start = 0, size = 0;
	int rc = kernel_function_at(a->addr, name, sizeof(name), &start, &size);

	if (rc == -ENOENT)
		return dt_rt_fail(err, rc, "%s: Unable to attach probe: %#" PRIx64 " is in no kernel "
				  "function (see /proc/kallsyms)", a->text, a->addr);
	if (rc < 0 || a->addr == start)
		return 0;
	return check_kprobe_insn(a, name, start, size, a->addr - start, err);
}

int dt_rt_validate(const dt_attach *a, int pid, char **err)
{
	char *path = NULL;
	uint64_t v;
	int rc = 0;

	*err = NULL;
	switch (a->provider) {
	case DT_P_UPROBE:
	case DT_P_URETPROBE:
	case DT_P_XPROBE:
		rc = uprobe_resolve(a, pid, &path, &v, err);
		free(path);
		return rc;
	case DT_P_KPROBE:
	case DT_P_KRETPROBE:
		if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0)
			return no_kprobes(a, err);
		if (kprobe_module(a) && !module_loaded(a->target))
			return dt_rt_fail(err, -ENOENT, "specified module %s in probe %s is not loaded.",
					  a->target, a->text);
		if (a->addr)
			return check_kprobe_at_address(a, err);
		if (a->func && !a->has_offset &&
		    !kernel_function_known(a->target && !strpbrk(a->target, "*?[") ? a->target
										   : NULL,
					   a->func))
			return dt_rt_fail(err, -ENOENT, "%s: no kernel function '%s'%s%s can be probed "
				    "(see %s/available_filter_functions)", a->text, a->func,
				    a->target ? " in " : "", a->target ? a->target : "",
				    dt_rt_tracefs());
		if (a->func && a->has_offset && a->offset)
			return check_kprobe_offset(a, err);
		return 0;
	case DT_P_TRACEPOINT:
		return dt_rt_tracepoint_id(a, &v, err);
	case DT_P_USDT:
		if (a->usdt && access(a->usdt->path, R_OK) < 0)
			return dt_rt_fail(err, -errno, "%s: cannot read %s: %s", a->text,
					  a->usdt->path, dt_strerror(errno));
		return 0;
	case DT_P_WATCHPOINT:
	case DT_P_ASYNCWATCHPOINT:
		if (!a->func)
			return 0;
		rc = uprobe_resolve(a, pid, &path, &v, err);
		free(path);
		return rc;
	case DT_P_HARDWARE:
		if (!dt_perf_event_find(a->provider, a->target))
			return dt_rt_fail(err, -EINVAL, "%s: unknown hardware event '%s'; see -h",
				    a->text, a->target ? a->target : "");
		/* Machines with a PMU have the "cpu" event source; VMs usually have none. */
		if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
			return no_pmu(a, -ENOENT, err);
		return 0;
	case DT_P_SOFTWARE:
		if (!dt_perf_event_find(a->provider, a->target))
			return dt_rt_fail(err, -EINVAL, "%s: unknown software event '%s'; see -h",
				    a->text, a->target ? a->target : "");
		return 0;
	default:
		return 0;
	}
}

static int attach_btf_prog(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err);

int dt_rt_attach(const dt_attach *a, int prog_fd, int pid, dt_fdvec *fds, char **err)
{
	*err = NULL;
	switch (a->provider) {
	case DT_P_INTERVAL:
	case DT_P_PROFILE:
		return attach_timer(a, prog_fd, fds, err);
	case DT_P_SOFTWARE:
	case DT_P_HARDWARE:
		return attach_perf_counter(a, prog_fd, fds, err);
	case DT_P_UPROBE:
	case DT_P_URETPROBE:
		return attach_uprobe(a, prog_fd, pid, fds, err);
	case DT_P_KPROBE:
	case DT_P_KRETPROBE:
		return attach_kprobe(a, prog_fd, fds, err);
	case DT_P_TRACEPOINT:
		return attach_tracepoint(a, prog_fd, fds, err);
	case DT_P_USDT:
		return attach_usdt(a, prog_fd, pid, fds, err);
	case DT_P_RAWTRACEPOINT:
	case DT_P_FENTRY:
	case DT_P_FEXIT:
	case DT_P_ITER:
		return attach_btf_prog(a, prog_fd, fds, err);
	case DT_P_BEGIN:
	case DT_P_END:
		return 0;
	default:
		return dt_rt_fail(err, -EOPNOTSUPP, "%s: this probe type cannot be attached yet",
			    a->text ? a->text : "?");
	}
}

/* ---------------------------------------------------------------- BEGIN / END */

/* The uprobe target for BEGIN/END programs of uprobe type: a function of our own that we call. */
__attribute__((noinline, used)) void dt_rt_trigger(void)
{
	__asm__ volatile("" ::: "memory");
}

/* File offset of our own code address, from /proc/self/maps. */
static int self_offset(uintptr_t addr, char *path, size_t n, uint64_t *off)
{
	dt_proc_mappings maps;
	const dt_proc_mapping *m;
	int rc = dt_proc_mappings_read(0, &maps);

	if (rc < 0)
		return rc;
	m = dt_proc_mappings_find(&maps, addr);
	rc = m && m->path[0] == '/' ? 0 : -ENOENT;
	if (rc == 0) {
		snprintf(path, n, "%s", m->path);
		*off = addr - m->start + m->offset;
	}
	dt_proc_mappings_free(&maps);
	return rc;
}

int dt_rt_run_once(int prog_fd, enum bpf_prog_type type, char **err)
{
	*err = NULL;
	if (type == BPF_PROG_TYPE_KPROBE) {
		/* kprobe-type programs cannot be test-run: fire them with a uprobe on ourselves,
		 * bound to this process only. */
		struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
		char path[PATH_MAX];
		uint64_t off = 0;
		int ptype, pfd, rc;

		rc = self_offset((uintptr_t)dt_rt_trigger, path, sizeof(path), &off);
		if (rc == 0)
			rc = read_pmu_type("uprobe", &ptype);
		if (rc < 0)
			return dt_rt_fail(err, rc, "cannot run BEGIN/END: no uprobe support (%s)",
				    dt_strerror(-rc));
		attr.type = (uint32_t)ptype;
		attr.config1 = (uint64_t)(uintptr_t)path;
		attr.config2 = off;
		pfd = perf_open(&attr, getpid(), -1);
		if (pfd < 0)
			return dt_rt_fail(err, pfd, "cannot run BEGIN/END: %s", dt_strerror(-pfd));
		rc = perf_bind(pfd, prog_fd);
		if (rc < 0)
			return dt_rt_fail(err, rc, "cannot run BEGIN/END: %s", dt_strerror(-rc));
		dt_rt_trigger();
		close(pfd);
		return 0;
	}
	{
		/* Raw tracepoint, syscall, socket-filter style programs: one test run. A zeroed
		 * context of eight u64 arguments is what a raw tracepoint program may read. */
		uint64_t ctx[8] = {0};
		unsigned char pkt[64] = {0};
		LIBBPF_OPTS(bpf_test_run_opts, opts);
		int rc;

		if (type == BPF_PROG_TYPE_RAW_TRACEPOINT || type == BPF_PROG_TYPE_SYSCALL) {
			opts.ctx_in = ctx;
			opts.ctx_size_in = sizeof(ctx);
		} else {
			opts.data_in = pkt;
			opts.data_size_in = sizeof(pkt);
		}
		rc = bpf_prog_test_run_opts(prog_fd, &opts);
		if (rc < 0)
			return dt_rt_fail(err, -errno, "cannot run BEGIN/END: %s", dt_strerror(errno));
	}
	return 0;
}

/* ---------------------------------------------------------------- wildcards */

typedef DT_VEC(char *) strvec;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts and removes duplicates. */
static void strvec_uniq(strvec *v)
{
	size_t j = 0;

	qsort(v->v, v->n, sizeof(*v->v), cmp_str);
	for (size_t i = 0; i < v->n; i++) {
		if (j && !strcmp(v->v[j - 1], v->v[i]))
			free(v->v[i]);
		else
			v->v[j++] = v->v[i];
	}
	v->n = j;
}

struct match_syms {
	const char *pat;
	strvec *out;
};

static int match_sym_cb(void *ctx, const dt_elf_sym *sym)
{
	struct match_syms *m = ctx;

	if ((sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC) && !strchr(sym->name, '@') &&
	    fnmatch(m->pat, sym->name, 0) == 0)
		DT_VEC_PUSH(m->out, xstrdup(sym->name));
	return 0;
}

/* The functions of the ELF file at path matching pat; -errno when it is not a readable ELF. */
static int match_object_syms(const char *path, const char *pat, strvec *out)
{
	struct match_syms m = { .pat = pat, .out = out };
	dt_elf *e = dt_elf_open(NULL, path);

	if (!e)
		return errno ? -errno : -ENOEXEC;
	dt_elf_sym_each(e, match_sym_cb, &m);
	dt_elf_put(e);
	return 0;
}

static int expand_uprobe(const dt_attach *a, int pid, strvec *out)
{
	char *path = NULL;
	int rc = dt_rt_resolve_binary(a->target, pid, &path);

	if (rc < 0)
		return rc;
	if (match_object_syms(path, a->func ? a->func : "", out) < 0)
		/* Not a readable ELF file: keep the pattern, so that checking the probe says what
		 * is wrong with the file in its one sentence (dt_rt_resolve_symbol). */
		DT_VEC_PUSH(out, xstrdup(a->func ? a->func : ""));
	free(path);
	return 0;
}

/* uprobe:*:FUNC with -p: the functions matching FUNC in every object of the process whose path
 * matches the binary pattern, each named "PATH:FUNC" (PATH as the process maps it; attaching
 * finds it through /proc/PID/root). */
static int expand_uprobe_objects(const dt_attach *a, int pid, strvec *out)
{
	dt_proc_mappings maps;
	strvec funcs = { 0 };
	int rc;

	if (pid <= 0)
		return -EOPNOTSUPP;
	rc = dt_proc_mappings_read(pid, &maps);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < maps.n; i++) {
		const dt_proc_mapping *mp = &maps.v[i];
		char *path;

		if (mp->perms[2] != 'x' || mp->path[0] != '/' || mp->deleted ||
		    fnmatch(a->target, mp->path, 0) != 0)
			continue;
		path = xasprintf("/proc/%d/root%s", pid, mp->path);
		funcs.n = 0;
		match_object_syms(path, a->func ? a->func : "", &funcs);
		free(path);
		for (size_t j = 0; j < funcs.n; j++) {
			DT_VEC_PUSH(out, xasprintf("%s:%s", mp->path, funcs.v[j]));
			free(funcs.v[j]);
		}
	}
	free(funcs.v);
	dt_proc_mappings_free(&maps);
	return 0;
}

/* Matches lines of a tracefs list file. Tracepoints ("subsys:event") match both halves; the
 * name returned is the event alone when the subsystem was literal, else "subsys:event". */
static int expand_tracefs_list(const char *file, const dt_attach *a, bool tracepoint, strvec *out)
{
	const char *root = dt_rt_tracefs();
	char path[PATH_MAX], line[512];
	bool sub_wild = tracepoint && a->target && strpbrk(a->target, "*?[");
	FILE *f;

	if (!root)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", root, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *colon, *tag = strchr(line, '['), both[600];

		line[strcspn(line, " \t\n")] = 0; /* available_filter_functions: "name [module]" */
		if (tag) /* the module, else the kernel itself ("vmlinux", as bpftrace names it) */
			tag[strcspn(tag, "]\n")] = 0;
		if (!tracepoint && a->target) {
			const char *mod = tag ? tag + 1 : "vmlinux";

			if (fnmatch(a->target, mod, 0) || fnmatch(a->func ? a->func : "", line, 0))
				continue;
			/* kprobe:MODULE_PATTERN:F: "module:function", each its own module. */
			snprintf(both, sizeof(both), "%s:%s", mod, line);
			DT_VEC_PUSH(out, xstrdup(strpbrk(a->target, "*?[") ? both : line));
			continue;
		}
		if (tracepoint) {
			colon = strchr(line, ':');
			if (!colon)
				continue;
			*colon = 0;
			if (fnmatch(a->target ? a->target : "", line, 0) ||
			    fnmatch(a->func ? a->func : "", colon + 1, 0))
				continue;
			if (sub_wild) {
				*colon = ':';
			} else {
				name = colon + 1;
			}
		} else if (fnmatch(a->func ? a->func : "", line, 0)) {
			continue;
		}
		DT_VEC_PUSH(out, xstrdup(name));
	}
	fclose(f);
	return 0;
}

int dt_rt_expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n)
{
	const struct dt_rt_expand_ctx *c = ctx;
	strvec v = {0};
	int rc;

	switch (a->provider) {
	case DT_P_UPROBE:
	case DT_P_URETPROBE:
		if (a->target && strpbrk(a->target, "*?[")) {
			rc = expand_uprobe_objects(a, c ? c->pid : -1, &v);
			break;
		}
		/* fall through */
	case DT_P_XPROBE:
	case DT_P_WATCHPOINT: /* FUNC+argN: functions of the -c/-p program */
	case DT_P_ASYNCWATCHPOINT:
		rc = expand_uprobe(a, c ? c->pid : -1, &v);
		break;
	case DT_P_TRACEPOINT:
		rc = expand_tracefs_list("available_events", a, true, &v);
		break;
	case DT_P_RAWTRACEPOINT:
	case DT_P_FENTRY:
	case DT_P_FEXIT:
		if (a->target && strcmp(a->target, "vmlinux") &&
		    (!strpbrk(a->target, "*?[") || fnmatch(a->target, "vmlinux", 0))) {
			rc = -EOPNOTSUPP; /* wildcards in a module's functions */
			break;
		}
		{
			char **nm = NULL;
			uint32_t k = 0;

			rc = dt_rt_btf_names(a->provider, a->func ? a->func : "", &nm, &k);
			for (uint32_t i = 0; i < k; i++)
				DT_VEC_PUSH(&v, nm[i]);
			free(nm);
		}
		break;
	case DT_P_KPROBE:
	case DT_P_KRETPROBE:
		if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0) {
			/* No kprobes at all: keep the pattern so attaching says so in its one
			 * sentence, instead of a puzzling failure to list functions. */
			DT_VEC_PUSH(&v, xstrdup(a->func ? a->func : ""));
			rc = 0;
			break;
		}
		rc = expand_tracefs_list("available_filter_functions", a, false, &v);
		break;
	default:
		rc = -EOPNOTSUPP;
	}
	if (rc < 0) {
		for (size_t i = 0; i < v.n; i++)
			free(v.v[i]);
		free(v.v);
		return rc;
	}
	strvec_uniq(&v);
	*names = v.v;
	*n = (uint32_t)v.n;
	return 0;
}

/* ---------------------------------------------------------------- BTF-attached programs */

/* The BTF id an fentry/fexit/iter program is loaded against, and the module BTF's fd when the
 * function is a module's (else -1; the caller closes it). 0 or -errno. */
int dt_rt_attach_btf_id(const dt_attach *a, enum bpf_attach_type type, uint32_t *id, int *obj_fd)
{
	const char *mod = a->target;
	int rc;

	*obj_fd = -1;
	if (!mod || !strcmp(mod, "vmlinux")) {
		rc = libbpf_find_vmlinux_btf_id(a->func, type);
		if (rc < 0)
			return rc;
		*id = (uint32_t)rc;
		return 0;
	}
	/* A module: its BTF object among the kernel's, by name. */
	struct btf *base = btf__load_vmlinux_btf();
	uint32_t bid = 0;

	if (!base)
		return -errno;
	rc = -ENOENT;
	while (bpf_btf_get_next_id(bid, &bid) == 0) {
		char name[64] = "";
		struct bpf_btf_info info = { .name = (uint64_t)(uintptr_t)name,
					     .name_len = sizeof(name) };
		uint32_t len = sizeof(info);
		int fd = bpf_btf_get_fd_by_id(bid);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.kernel_btf &&
		    !strcmp(name, mod)) {
			struct btf *m = btf__load_from_kernel_by_id_split(bid, base);
			/* A BTF tracepoint is its event's btf_trace_NAME typedef, as libbpf finds
			 * it in vmlinux. */
			char tn[160];
			snprintf(tn, sizeof(tn), "btf_trace_%s", a->func);
			int t = !m ? -ENOENT
				: type == BPF_TRACE_RAW_TP ? btf__find_by_name_kind(m, tn, BTF_KIND_TYPEDEF)
							   : btf__find_by_name_kind(m, a->func, BTF_KIND_FUNC);

			btf__free(m);
			if (t > 0) {
				*id = (uint32_t)t;
				*obj_fd = fd;
				rc = 0;
				break;
			}
		}
		close(fd);
	}
	btf__free(base);
	return rc;
}

static int attach_btf_prog(const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	int fd;

	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	if (a->provider == DT_P_RAWTRACEPOINT) {
		/* A BTF tracepoint (tp_btf) names its event by the BTF id it was loaded against. */
		bool btf_tp = bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 &&
			      info.type == BPF_PROG_TYPE_TRACING;

		fd = bpf_raw_tracepoint_open(btf_tp ? NULL : a->func, prog_fd);
		if (fd < 0)
			return dt_rt_fail(err, -errno, "%s: cannot attach to raw tracepoint '%s': %s",
				    a->text, a->func, dt_strerror(errno));
	} else {
		enum bpf_attach_type t = a->provider == DT_P_FENTRY ? BPF_TRACE_FENTRY
					 : a->provider == DT_P_FEXIT ? BPF_TRACE_FEXIT
								     : BPF_TRACE_ITER;

		fd = bpf_link_create(prog_fd, 0, t, NULL);
		if (fd < 0)
			return dt_rt_fail(err, -errno, "%s: cannot attach: %s", a->text,
				    dt_strerror(errno));
	}
	DT_VEC_PUSH(fds, fd);
	return 0;
}

int dt_rt_iter_run(int link_fd, char **err)
{
	char buf[4096];
	ssize_t n;
	int fd = bpf_iter_create(link_fd);

	*err = NULL;
	if (fd < 0)
		return dt_rt_fail(err, -errno, "cannot start the iterator: %s", dt_strerror(errno));
	/* The program prints through the events ring; what the iterator's own file gets (nothing
	 * dwarftrace writes there) is read to run it to the end. */
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	n = n < 0 ? -errno : 0;
	close(fd);
	if (n < 0)
		return dt_rt_fail(err, (int)n, "the iterator failed: %s", dt_strerror((int)-n));
	return 0;
}

/* ---------------------------------------------------------------- BTF names */

struct btf *dt_rt_vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
	}
	return btf;
}

int dt_rt_btf_names(dt_provider p, const char *pat, char ***names, uint32_t *n)
{
	static const char *const iters[] = { "task", "task_file", "task_vma" };
	struct btf *btf = dt_rt_vmlinux_btf();
	DT_VEC(char *) v = { 0 };

	if (!btf)
		return -ENODATA;
	if (p == DT_P_ITER) {
		for (size_t i = 0; i < DT_ARRAY_SIZE(iters); i++) {
			char sn[64];

			snprintf(sn, sizeof(sn), "bpf_iter__%s", iters[i]);
			if (btf__find_by_name_kind(btf, sn, BTF_KIND_STRUCT) > 0 &&
			    fnmatch(pat, iters[i], 0) == 0)
				DT_VEC_PUSH(&v, xstrdup(iters[i]));
		}
	}
	for (uint32_t id = 1; p != DT_P_ITER && id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (!name || !*name)
			continue;
		if (p == DT_P_RAWTRACEPOINT) {
			/* The raw tracepoints are the events with a btf_trace_NAME typedef. */
			if (!btf_is_typedef(t) || strncmp(name, "btf_trace_", 10))
				continue;
			name += 10;
		} else if (!btf_is_func(t)) {
			continue;
		}
		if (fnmatch(pat, name, 0) == 0)
			DT_VEC_PUSH(&v, xstrdup(name));
	}
	*names = v.v;
	*n = (uint32_t)v.n;
	return 0;
}

/* test_elfproc.c — elfproc/ on real files: /proc/PID/maps lines of every shape, this test's own
 * executable read both ways (a symbol's address -> the file offset the maps give for it, and the
 * address back to the symbol), the cache's identity (one object per file, a copy is another file
 * with the same build-id, a rewritten file is new), sections (a compressed .debug_info comes back
 * inflated), the vDSO, and the separate-debug-file search over a --debuginfo build-id tree, a
 * .gnu_debuglink in .debug/, and a debuglink naming the object itself. */
#include "elfproc/elfproc.h"
#include "common/common.h"
#include "t.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/dt_elfproc_XXXXXX";

__attribute__((noinline, used)) int t_elfproc_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 5 + 1;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	path[n > 0 ? n : 0] = 0;
	return path;
}

static void maps_lines_of_every_shape(void)
{
	char *text = xstrdup(
		"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1311 /usr/bin/cat\n"
		"55d0c0a02000-55d0c0a07000 r-xp 00002000 fd:01 1311 /usr/bin/cat\n"
		"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
		"7f1000000000-7f1000001000 r-xp 00001000 08:01 42 /tmp/a b.so (deleted)\n"
		"this line is not a mapping\n"
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]");
	dt_proc_mappings m;
	const dt_proc_mapping *v;

	dt_proc_mappings_parse(text, &m);
	CHECK_EQ_INT(m.n, 6);
	if (m.n != 6)
		goto out;
	v = m.v;
	CHECK_EQ_INT(v[1].start, 0x55d0c0a02000ull);
	CHECK_EQ_INT(v[1].end, 0x55d0c0a07000ull);
	CHECK_EQ_INT(v[1].offset, 0x2000);
	CHECK_EQ_INT(v[1].dev_major, 0xfd);
	CHECK_EQ_INT(v[1].dev_minor, 1);
	CHECK_EQ_INT(v[1].inode, 1311);
	CHECK_EQ_STR(v[1].perms, "r-xp");
	CHECK_EQ_STR(v[1].path, "/usr/bin/cat");
	CHECK_EQ_STR(v[2].path, "");
	CHECK_EQ_STR(v[3].path, "/tmp/a b.so");
	CHECK(v[3].deleted && !v[1].deleted);
	CHECK_EQ_STR(v[4].path, "[vdso]");
	CHECK_EQ_INT(v[5].end, 0xffffffffff601000ull);
	CHECK(dt_proc_mappings_find(&m, 0x55d0c0a03000ull) == &v[1]);
	CHECK(dt_proc_mappings_find(&m, 0x55d0c0a07000ull) == NULL);
	CHECK(dt_proc_mappings_find(&m, 0x1000) == NULL);
	CHECK(dt_proc_mappings_find(&m, 0x7ffd00001fffull) == &v[4]);
out:
	dt_proc_mappings_free(&m);
}

static void maps_of_this_process(void)
{
	dt_proc_mappings m;
	const dt_proc_mapping *f;

	CHECK_EQ_INT(dt_proc_mappings_read(0, &m), 0);
	f = dt_proc_mappings_find(&m, (uintptr_t)t_elfproc_fn);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_STR(f->path, self_exe());
		CHECK(f->perms[2] == 'x');
	}
	dt_proc_mappings_free(&m);
	CHECK_EQ_INT(dt_proc_mappings_read(getpid(), &m), 0);
	CHECK(dt_proc_mappings_find(&m, (uintptr_t)t_elfproc_fn) != NULL);
	dt_proc_mappings_free(&m);
	CHECK_EQ_INT(dt_proc_mappings_read(INT32_MAX - 1, &m), -ESRCH);
}

struct covering {
	uint64_t vaddr;
	const char *name;
};

static int covering_cb(void *ctx, const dt_elf_sym *s)
{
	struct covering *c = ctx;

	if (s->type == STT_FUNC && c->vaddr >= s->value && c->vaddr < s->value + s->size)
		c->name = s->name;
	return 0;
}

/* Name -> address -> the file offset the kernel maps it from, and the address back to the name. */
static void symbols_both_directions(void)
{
	dt_elf *e = dt_elf_open(NULL, self_exe());
	dt_proc_mappings m;
	const dt_proc_mapping *f;
	dt_elf_sym s;
	uint64_t off = 0;

	CHECK(e != NULL);
	if (!e)
		return;
	CHECK(dt_elf_has_symtab(e));
	CHECK_EQ_INT(dt_elf_sym_find(e, "t_elfproc_fn", &s), 0);
	CHECK(s.type == STT_FUNC && s.bind == STB_GLOBAL && !s.dynamic && s.size > 0);
	CHECK_EQ_INT(dt_elf_vaddr_to_offset(e, s.value, &off), 0);
	CHECK_EQ_INT(dt_proc_mappings_read(0, &m), 0);
	f = dt_proc_mappings_find(&m, (uintptr_t)t_elfproc_fn);
	CHECK(f && off == (uintptr_t)t_elfproc_fn - f->start + f->offset);
	dt_proc_mappings_free(&m);

	struct covering c = { s.value + 1, NULL };
	dt_elf_sym_each(e, covering_cb, &c);
	CHECK_EQ_STR(c.name, "t_elfproc_fn");
	CHECK_EQ_INT(dt_elf_sym_find(e, "no_such_function_here", &s), -ENOENT);
	CHECK_EQ_INT(dt_elf_vaddr_to_offset(e, 0, &off), -ERANGE);
	dt_elf_put(e);
}

static void libc_dynsym(void)
{
	dt_proc_mappings m;
	dt_elf *e = NULL;
	dt_elf_sym s;

	CHECK_EQ_INT(dt_proc_mappings_read(0, &m), 0);
	/* Debian's libc has .dynsym only: the reader's second table answers. */
	for (size_t i = 0; i < m.n && !e; i++)
		if (strstr(m.v[i].path, "/libc.so"))
			e = dt_elf_open(NULL, m.v[i].path);
	dt_proc_mappings_free(&m);
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_EQ_INT(dt_elf_sym_find(e, "memcpy", &s), 0);
	CHECK(s.value != 0);
	CHECK(dt_elf_has_section(e, ".eh_frame"));
	dt_elf_put(e);
}

static void cache_identity(void)
{
	dt_elf_cache *c = dt_elf_cache_new();
	char copy[PATH_MAX];
	dt_elf *a, *b, *d;
	const uint8_t *id;
	char hex[160] = "";
	size_t n;

	snprintf(copy, sizeof(copy), "%s/copy", dir);
	CHECK_EQ_INT(sh("cp %s %s", self_exe(), copy), 0);
	a = dt_elf_open(c, self_exe());
	b = dt_elf_open(c, self_exe());
	CHECK(a && a == b);
	CHECK_EQ_INT(dt_elf_cache_count(c), 1);
	d = dt_elf_open(c, copy);
	CHECK(d && d != a);
	CHECK_EQ_INT(dt_elf_cache_count(c), 2);
	if (!a || !d)
		goto out;
	/* The same build-id: the identity users share derived data by. */
	n = dt_elf_build_id(a, &id);
	CHECK(n >= 16);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	CHECK_EQ_STR(dt_elf_ident(a), hex);
	CHECK_EQ_STR(dt_elf_ident(d), hex);
	/* Rewritten in place (same inode, new mtime): another object. */
	dt_elf_put(d);
	CHECK_EQ_INT(dt_elf_cache_count(c), 1);
	d = dt_elf_open(c, copy);
	CHECK_EQ_INT(sh("touch -d '2001-01-01' %s", copy), 0);
	{
		dt_elf *d2 = dt_elf_open(c, copy);

		CHECK(d2 && d2 != d);
		dt_elf_put(d2);
	}
	dt_elf_put(d);
out:
	dt_elf_put(a);
	dt_elf_put(b);
	CHECK_EQ_INT(dt_elf_cache_count(c), 0);
	/* An object outlives a freed cache. */
	a = dt_elf_open(c, self_exe());
	dt_elf_cache_free(c);
	CHECK(a && dt_elf_has_symtab(a));
	dt_elf_put(a);
	CHECK(dt_elf_open(NULL, "/nonexistent/x") == NULL && errno == ENOENT);
	CHECK(dt_elf_open(NULL, "tests/unit/t.h") == NULL && errno == ENOEXEC);
	/* Cut short: its section headers are past the end, which libelf alone would take for an
	 * object without sections. */
	CHECK_EQ_INT(sh("head -c 3000 %s > %s", self_exe(), copy), 0);
	CHECK(dt_elf_open(NULL, copy) == NULL && errno == EBADMSG);
	CHECK(strstr(dt_elf_strerror(EBADMSG), "truncated"));
	unlink(copy);
}

static void sections_compressed(void)
{
	dt_elf *plain, *gz;
	dt_elf_section a, b;

	CHECK_EQ_INT(sh("cd %s && printf 'int f(int x){return x+1;}\\n' > s.c && "
			"cc -g -c -gz=none -o plain.o s.c && cc -g -c -gz=zlib -o gz.o s.c", dir), 0);
	plain = dt_elf_open(NULL, xasprintf("%s/plain.o", dir));
	gz = dt_elf_open(NULL, xasprintf("%s/gz.o", dir));
	CHECK(plain && gz);
	if (!plain || !gz)
		goto out;
	CHECK_EQ_INT(dt_elf_section_get(plain, ".debug_info", &a), 0);
	CHECK_EQ_INT(dt_elf_section_get(gz, ".debug_info", &b), 0);
	CHECK(a.size > 0 && a.size == b.size && !memcmp(a.data, b.data, a.size));
	CHECK_EQ_INT(dt_elf_section_get(gz, ".no_such_section", &b), -ENOENT);
	CHECK(!dt_elf_has_section(gz, ".no_such_section"));
	/* A relocatable object has no segments and no build-id: identity by file. */
	CHECK(strchr(dt_elf_ident(gz), ':') != NULL);
out:
	dt_elf_put(plain);
	dt_elf_put(gz);
}

static void vdso_image(void)
{
	dt_elf_cache *c = dt_elf_cache_new();
	dt_elf *v = dt_elf_open_vdso(c), *w = dt_elf_open_vdso(c);
	dt_elf_sym s;
	size_t n;

	CHECK(v && v == w);
	if (v) {
		CHECK_EQ_STR(dt_elf_ident(v), "vdso");
		CHECK_EQ_INT(dt_elf_sym_find(v, "__vdso_clock_gettime", &s), 0);
		CHECK(dt_elf_has_section(v, ".eh_frame"));
		CHECK(dt_elf_segments(v, &n) && n >= 1);
	}
	dt_elf_put(v);
	dt_elf_put(w);
	CHECK_EQ_INT(dt_elf_cache_count(c), 0);
	dt_elf_cache_free(c);
}

/* The debug file found for `obj` with `dbgdir` as --debuginfo DIR, or NULL. */
static char *debug_path_of(const char *obj, const char *dbgdir)
{
	dt_elf_cache *c = dt_elf_cache_new();
	dt_elf *e, *d;
	char *r = NULL;

	if (dbgdir)
		dt_elf_cache_set_debug_dirs(c, &dbgdir, 1);
	e = dt_elf_open(c, obj);
	d = e ? dt_elf_debug_file(c, e) : NULL;
	if (d) {
		r = xstrdup(dt_elf_path(d));
		CHECK(dt_elf_has_section(d, ".debug_info"));
	}
	dt_elf_put(d);
	dt_elf_put(e);
	dt_elf_cache_free(c);
	return r;
}

static void debug_file_search(void)
{
	char *p, obj[PATH_MAX], want[PATH_MAX], dbgdir[PATH_MAX];
	const uint8_t *id;
	dt_elf *e;
	size_t n;
	int k;

	CHECK_EQ_INT(sh("cd %s && printf 'int main(void){return 0;}\\n' > m.c && "
			"cc -g -Wl,--build-id -o m m.c && objcopy --only-keep-debug m m.debug && "
			"strip --strip-debug m && objcopy --add-gnu-debuglink=m.debug m", dir), 0);
	snprintf(obj, sizeof(obj), "%s/m", dir);
	snprintf(dbgdir, sizeof(dbgdir), "%s/dbg", dir);
	e = dt_elf_open(NULL, obj);
	CHECK(e && dt_elf_build_id(e, &id) >= 2);
	if (!e)
		return;
	CHECK_EQ_STR(dt_elf_debuglink(e), "m.debug");
	CHECK(!dt_elf_has_section(e, ".debug_info"));
	/* The build-id tree under --debuginfo DIR comes first. */
	n = dt_elf_build_id(e, &id);
	k = snprintf(want, sizeof(want), "%s/.build-id/%02x/", dbgdir, id[0]);
	for (size_t i = 1; i < n; i++)
		k += snprintf(want + k, sizeof(want) - (size_t)k, "%02x", id[i]);
	snprintf(want + k, sizeof(want) - (size_t)k, ".debug");
	CHECK_EQ_INT(sh("mkdir -p $(dirname %s) && cp %s/m.debug %s", want, dir, want), 0);
	p = debug_path_of(obj, dbgdir);
	CHECK_EQ_STR(p, want);
	free(p);
	/* Without the tree: the debuglink next to the object. */
	p = debug_path_of(obj, NULL);
	snprintf(want, sizeof(want), "%s/m.debug", dir);
	CHECK_EQ_STR(p, want);
	free(p);
	/* In its .debug/ folder. */
	CHECK_EQ_INT(sh("mkdir -p %s/.debug && mv %s/m.debug %s/.debug/", dir, dir, dir), 0);
	p = debug_path_of(obj, NULL);
	snprintf(want, sizeof(want), "%s/.debug/m.debug", dir);
	CHECK_EQ_STR(p, want);
	free(p);
	/* A debuglink naming the object itself is no debug file. */
	CHECK_EQ_INT(sh("cd %s && rm -rf .debug && cp m s.debug && objcopy --remove-section "
			".gnu_debuglink s.debug s2 && objcopy --add-gnu-debuglink=s.debug s2 s.debug",
			dir), 0);
	snprintf(obj, sizeof(obj), "%s/s.debug", dir);
	CHECK(debug_path_of(obj, NULL) == NULL);
	dt_elf_put(e);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	T_RUN(maps_lines_of_every_shape);
	T_RUN(maps_of_this_process);
	T_RUN(symbols_both_directions);
	T_RUN(libc_dynsym);
	T_RUN(cache_identity);
	T_RUN(sections_compressed);
	T_RUN(vdso_image);
	T_RUN(debug_file_search);
	sh("rm -rf %s", dir);
	return t_done();
}
